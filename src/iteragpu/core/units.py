"""Byte units: the one place that knows how many bytes a GB, a GiB or a gigabit holds.

It owns the two constants every figure rests on, `BYTES_PER_GB` (10^9) and `BYTES_PER_GIB`
(2^30): the lab script keeps a copy of them (it runs alone), pinned to these by the tests.

Decimal units (kB, MB, GB, ... YB) are powers of 10, binary units (KiB, MiB, GiB, ... YiB)
powers of 2. Bit units (kb, Mb, Gb, ... Yb) are decimal multiples of a bit, an eighth of a byte:
`Gb` is a gigabit here, never pint's gilbert. Every factor is an exact `Fraction`; pint is only
the independent cross-check (the tests, the figure checker), never read on the way.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

BYTES_PER_GB: Final = 10**9
"""A decimal gigabyte, as every page, the CLI and the sizer count it."""
BYTES_PER_GIB: Final = 2**30
"""A binary gibibyte, as PyTorch and nvidia-smi report memory."""

_DECIMAL_PREFIXES: Final = ("kilo", "mega", "giga", "tera", "peta", "exa", "zetta", "yotta")
_BINARY_PREFIXES: Final = ("kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi")
_DECIMAL_LETTERS: Final = ("k", "M", "G", "T", "P", "E", "Z", "Y")
_BINARY_LETTERS: Final = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")

BYTES_PER_UNIT: Final[dict[str, Fraction]] = {
    "B": Fraction(1),
    **{f"{p}B": Fraction(10 ** (3 * i)) for i, p in enumerate(_DECIMAL_LETTERS, 1)},
    **{f"{p}B": Fraction(2 ** (10 * i)) for i, p in enumerate(_BINARY_LETTERS, 1)},
    "bit": Fraction(1, 8),
    **{f"{p}b": Fraction(10 ** (3 * i), 8) for i, p in enumerate(_DECIMAL_LETTERS, 1)},
}
"""Bytes in one of each unit symbol (case-sensitive), exact."""

BIT_UNITS: Final[frozenset[str]] = frozenset(
    u for u in BYTES_PER_UNIT if u == "bit" or u[-1] == "b"
)
"""Symbols that count bits: a quantity in one of them needs a whole number of bits only."""

UNIT_NAMES: Final[dict[str, str]] = {
    "byte": "B",
    "bit": "bit",
    **{f"{p}byte": f"{s}B" for p, s in zip(_DECIMAL_PREFIXES, _DECIMAL_LETTERS, strict=True)},
    **{f"{p}byte": f"{s}B" for p, s in zip(_BINARY_PREFIXES, _BINARY_LETTERS, strict=True)},
    **{f"{p}bit": f"{s}b" for p, s in zip(_DECIMAL_PREFIXES, _DECIMAL_LETTERS, strict=True)},
}
"""Long names (any case, singular or plural) and the symbol each stands for."""

# SI prefixes below one: a millibyte is no amount of memory, so these are refused by name.
FRACTION_PREFIXES: Final = ("deci", "centi", "milli", "micro", "nano", "pico", "femto", "atto")


class UnknownUnitError(ValueError):
    """The unit is not a byte or bit unit that this module knows."""


def bytes_per(unit: str) -> Fraction:
    """Exact number of bytes in one `unit` (a symbol of `BYTES_PER_UNIT`, case-sensitive)."""
    try:
        return BYTES_PER_UNIT[unit]
    except KeyError:
        raise UnknownUnitError(f"unknown byte unit {unit!r}") from None


def unit_symbol(name: str) -> str | None:
    """The symbol for a symbol or a long name (`GiB`, `gibibyte`, `Gibibytes`), else None.

    >>> unit_symbol("gibibytes"), unit_symbol("Gb"), unit_symbol("gb")
    ('GiB', 'Gb', None)
    """
    if name in BYTES_PER_UNIT:
        return name
    lowered = name.lower()
    return UNIT_NAMES.get(lowered) or UNIT_NAMES.get(lowered.removesuffix("s"))


def is_fraction_unit_name(name: str) -> bool:
    """True for `millibyte`, `decibits` and the like: a fraction of a byte or a bit."""
    lowered = name.lower().removesuffix("s")
    return any(lowered in (f"{p}byte", f"{p}bit") for p in FRACTION_PREFIXES)


def to_unit(byte_count: int | Fraction, unit: str) -> Fraction:
    """Express an exact byte count in `unit`.

    >>> to_unit(14_000_000_000, "GB")
    Fraction(14, 1)
    >>> from iteragpu.core.numbers import exact_decimal_text
    >>> exact_decimal_text(to_unit(14_000_000_000, "GiB"))
    '13.03851604461669921875'
    """
    return Fraction(byte_count) / bytes_per(unit)


def from_unit(value: int | Fraction, unit: str) -> Fraction:
    """Exact number of bytes in `value` `unit`s.

    >>> from_unit(4, "GiB")
    Fraction(4294967296, 1)
    """
    return Fraction(value) * bytes_per(unit)


def gib(byte_count: int | Fraction) -> Fraction:
    """Bytes to GiB (2^30 bytes each)."""
    return to_unit(byte_count, "GiB")


def gb(byte_count: int | Fraction) -> Fraction:
    """Bytes to decimal GB (10^9 bytes each)."""
    return to_unit(byte_count, "GB")


def ceil_bytes(byte_count: Fraction) -> int:
    """Whole bytes that hold `byte_count`: the exact count when whole, else rounded up.

    >>> ceil_bytes(Fraction(7, 2)), ceil_bytes(Fraction(14))
    (4, 14)
    """
    return -(-byte_count.numerator // byte_count.denominator)
