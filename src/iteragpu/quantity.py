"""Parse byte quantities such as `24e9 B`, `80 GB`, `143771 MiB` or `2 gibibyte` into exact bytes.

Symbols known to `iteragpu.units` are read directly; any other unit name is looked up in pint,
imported only then, and must have the dimension of information.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import cache
from typing import Any

from iteragpu.units import BYTES_PER_UNIT

_QUANTITY = re.compile(r"^\s*(?P<number>[^\s]+?)\s*(?P<unit>[A-Za-z][A-Za-z_ ]*)?\s*$")


_PINT_INFORMATION_UNIT = re.compile(r"[a-z]*(bit|byte)")


class QuantityError(ValueError):
    """A quantity string that is not a positive, finite byte quantity."""


def parse_number(text: str) -> Fraction:
    """Exact value of a decimal number such as `7e9`, `13.04` or `7000000000`; finite only.

    >>> parse_number("7e9")
    Fraction(7000000000, 1)
    """
    try:
        number = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        raise QuantityError(f"not a number: {text!r}") from None
    if not number.is_finite():
        raise QuantityError(f"not a finite number: {text!r}")
    return Fraction(number)


def unit_bytes(unit: str) -> Fraction:
    """Exact bytes in one `unit`; `Gb` and friends are bits (never pint's gilbert)."""
    unit = unit.strip()
    if unit in BYTES_PER_UNIT:
        return BYTES_PER_UNIT[unit]
    return _pint_unit_bytes(unit)


def _pint_unit_bytes(unit: str) -> Fraction:
    import pint

    registry = pint_registry()
    try:
        parsed = registry.Unit(unit)
    except (pint.errors.UndefinedUnitError, AttributeError, ValueError, SyntaxError, TypeError):
        raise QuantityError(f"unknown unit: {unit!r}") from None
    # pint treats information as dimensionless, so check the unit's name, not its dimension:
    # `percent` or `radian` must not pass for a byte count.
    if _PINT_INFORMATION_UNIT.fullmatch(str(parsed)) is None:
        raise QuantityError(f"not a byte unit: {unit!r}")
    factor = registry.Quantity(1, parsed).to(registry.byte).magnitude
    return Fraction(factor).limit_denominator(8)


@cache
def pint_registry() -> Any:
    """pint's registry, built once and only when a unit name is not one of ours."""
    import pint

    return pint.UnitRegistry()


def parse_bytes(text: str) -> Fraction:
    """Exact byte count of a quantity string; the unit defaults to bytes.

    >>> parse_bytes("24e9 B")
    Fraction(24000000000, 1)
    >>> parse_bytes("2 GiB")
    Fraction(2147483648, 1)
    """
    match = _QUANTITY.match(text)
    if match is None:
        raise QuantityError(f"not a byte quantity: {text!r}")
    value = parse_number(match["number"])
    if value < 0:
        raise QuantityError(f"a size cannot be negative: {text!r}")
    return value * unit_bytes(match["unit"] or "B")
