"""Byte quantities such as `24e9 B`, `80 GB`, `143771 MiB` or `2 gibibytes`, read exactly.

The number follows the shared grammar of `iteragpu.core.numbers`; the unit is a symbol or a
long name of `iteragpu.core.units`, and is never implied: `80` alone is refused with the list of
units (is it 80 B or 80 GB?), as is a negative quantity, whatever its unit. Memory comes in
whole bits: a quantity that is not a whole number of bits is refused, and `convert` refuses a
result that is not a whole number of bytes unless a bit unit is asked for. pint is not used to
read anything: it is the independent cross-check of the figure checker and the tests
(`iteragpu.docs_tools.pint_units`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from iteragpu.core.numbers import InputError, exact_decimal_text, parse_number, shown
from iteragpu.core.records import Record
from iteragpu.core.units import (
    BIT_UNITS,
    BYTES_PER_UNIT,
    ceil_bytes,
    is_fraction_unit_name,
    to_unit,
    unit_symbol,
)

_UNIT_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_ ")
_KNOWN_UNITS = "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB, bit, kb, Mb, Gb, Tb"


class Conversion(Record):
    """An exact byte count and its value in a unit."""

    byte_count: Fraction
    unit: str  # the unit's symbol
    value: Fraction


def resolve_unit(name: str) -> str:
    """The symbol of a unit given by symbol or long name; one-line `InputError` otherwise.

    >>> resolve_unit(" gibibytes "), resolve_unit("Gb")
    ('GiB', 'Gb')
    """
    text = name.strip()
    symbol = unit_symbol(text)
    if symbol is not None:
        return symbol
    if is_fraction_unit_name(text):
        raise InputError(
            "unit {unit} is a fraction of a byte or a bit: memory comes in whole bits, "
            "so use a unit such as {units}",
            "fraction_unit",
            unit=shown(text),
            units=_KNOWN_UNITS,
        )
    raise InputError(
        "unknown unit {unit}: use a byte or bit unit such as {units}, or its name "
        "(gibibyte, megabit)",
        "unknown_unit",
        unit=shown(text),
        units=_KNOWN_UNITS,
    )


def parse_bytes(text: str, what: str = "quantity", *, decimal_comma: bool = False) -> Fraction:
    """Exact byte count of a quantity string, a whole number of bits, with its unit: `80` alone
    is refused (`no_unit`), not read as 80 B. With `decimal_comma`, the number may be written
    `24,5` (see `iteragpu.core.numbers`).

    >>> parse_bytes("24e9 B")
    Fraction(24000000000, 1)
    >>> parse_bytes("2 GiB"), parse_bytes("1 bit"), parse_bytes("0,5 KiB", decimal_comma=True)
    (Fraction(2147483648, 1), Fraction(1, 8), Fraction(512, 1))
    """
    number_text, unit_text = _split_quantity(text.strip())
    try:
        value = parse_number(number_text, what, decimal_comma=decimal_comma)
    except InputError as error:
        # A misplaced ',' or '.' keeps the grammar's own advice on separators.
        if error.reason != "not_number" or "," in number_text or number_text.count(".") > 1:
            raise
        if decimal_comma:
            raise InputError(
                "{what} must be a number and a byte unit such as '24,5 GB' or '80 GB', got {text}",
                "not_number",
                what=what,
                text=shown(text),
            ) from None
        raise InputError(
            "{what} must be a number and a byte unit such as '24e9 B' or '80 GB', got {text}",
            "not_number",
            what=what,
            text=shown(text),
        ) from None
    if value < 0:
        raise InputError(
            "{what} cannot be negative, got {text}", "negative", what=what, text=shown(text)
        )
    if not unit_text:
        raise InputError(
            "{what} {text} has no unit: write a number and a byte or bit unit, such as {units}",
            "no_unit",
            what=what,
            text=shown(text),
            units=_KNOWN_UNITS,
        )
    byte_count = value * BYTES_PER_UNIT[resolve_unit(unit_text)]
    if (byte_count * 8).denominator != 1:
        raise InputError(
            "{what} is not a whole number of bits, got {text}",
            "not_whole",
            what=what,
            text=shown(text),
        )
    return byte_count


def convert(
    quantity: str, unit: str, what: str = "quantity", *, decimal_comma: bool = False
) -> Conversion:
    """`quantity` expressed in `unit`, exactly; refused when not a whole number of bytes, or of
    bits when `unit` is a bit unit. `what` names the quantity in error messages.

    >>> c = convert("24e9 B", "GiB")
    >>> c.byte_count, c.value
    (Fraction(24000000000, 1), Fraction(5859375, 262144))
    """
    byte_count = parse_bytes(quantity, what, decimal_comma=decimal_comma)
    symbol = resolve_unit(unit)
    if symbol not in BIT_UNITS and byte_count.denominator != 1:
        raise InputError(
            "{what} {text} is not a whole number of bytes: convert it to a bit unit "
            "(bit, kb, Mb, Gb) instead",
            "not_whole",
            what=what,
            text=shown(quantity),
        )
    return Conversion(byte_count, symbol, byte_count / BYTES_PER_UNIT[symbol])


def _split_quantity(text: str) -> tuple[str, str]:
    """(number, unit): the unit is the longest tail of letters, `_` and spaces that starts
    with a letter. Scanned in one pass, so that no input can make the split slow."""
    start = len(text)
    while start > 0 and text[start - 1] in _UNIT_CHARACTERS:
        start -= 1
    while start < len(text) and not text[start].isalpha():
        start += 1
    return text[:start].rstrip(), text[start:]


def byte_fields(name: str, byte_count: Fraction, *units: str) -> dict[str, Any]:
    """A quantity as every `--json` object states it: `name_bytes` (whole bytes, rounded up when
    the exact count is not whole), `name_bytes_exact` (the exact count) and `name_<unit>` per
    unit, as exact decimal text.

    >>> byte_fields("weights", Fraction(14_000_000_000), "GiB")["weights_gib"]
    '13.03851604461669921875'
    """
    fields: dict[str, Any] = {
        f"{name}_bytes": ceil_bytes(byte_count),
        f"{name}_bytes_exact": exact_decimal_text(byte_count),
    }
    for unit in units:
        fields[f"{name}_{unit.lower()}"] = exact_decimal_text(to_unit(byte_count, unit))
    return fields
