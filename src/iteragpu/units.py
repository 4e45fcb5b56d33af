"""Byte units: the one place that knows how many bytes a GB, a GiB or a gigabit holds.

Decimal units (kB, MB, GB, TB) are powers of 10, binary units (KiB, MiB, GiB, TiB) powers of 2.
Bit units (kb, Mb, Gb, Tb) are decimal multiples of a bit, an eighth of a byte: `Gb` is a
gigabit here, never pint's gilbert.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Final

from iteragpu.lab.mesure_memoire import BYTES_PER_GB, BYTES_PER_GIB

BYTES_PER_UNIT: Final[dict[str, Fraction]] = {
    "B": Fraction(1),
    "kB": Fraction(10**3),
    "MB": Fraction(10**6),
    "GB": Fraction(BYTES_PER_GB),
    "TB": Fraction(10**12),
    "PB": Fraction(10**15),
    "KiB": Fraction(2**10),
    "MiB": Fraction(2**20),
    "GiB": Fraction(BYTES_PER_GIB),
    "TiB": Fraction(2**40),
    "PiB": Fraction(2**50),
    "bit": Fraction(1, 8),
    "kb": Fraction(10**3, 8),
    "Mb": Fraction(10**6, 8),
    "Gb": Fraction(10**9, 8),
    "Tb": Fraction(10**12, 8),
}
"""Bytes in one of each unit symbol, exact."""


class UnknownUnitError(ValueError):
    """The unit is not a byte or bit unit that this module knows."""


def bytes_per(unit: str) -> Fraction:
    """Exact number of bytes in one `unit` (a symbol of `BYTES_PER_UNIT`, case-sensitive)."""
    try:
        return BYTES_PER_UNIT[unit]
    except KeyError:
        raise UnknownUnitError(f"unknown byte unit {unit!r}") from None


def to_unit(byte_count: int | Fraction, unit: str) -> Fraction:
    """Express an exact byte count in `unit`.

    >>> to_unit(14_000_000_000, "GB")
    Fraction(14, 1)
    >>> round(float(to_unit(14_000_000_000, "GiB")), 2)
    13.04
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


def round_half_up(value: Fraction, decimals: int) -> Decimal:
    """Round an exact value to `decimals` places, halves away from zero, without floats.

    >>> round_half_up(Fraction(14_000_000_000, 2**30), 2)
    Decimal('13.04')
    >>> round_half_up(Fraction(-5, 2), 0)
    Decimal('-3')
    """
    scaled = abs(value) * 10**decimals
    whole = int(scaled + Fraction(1, 2))
    rounded = Decimal(f"{whole}E-{decimals}")  # exact: scaleb() would round to 28 digits
    return -rounded if value < 0 else rounded


def exact_decimal_text(value: Fraction, max_decimals: int = 20) -> str:
    """Plain decimal text of `value`: exact when it terminates, else rounded to `max_decimals`.

    >>> exact_decimal_text(Fraction(24_000_000_000, 2**30))
    '22.351741790771484375'
    """
    for decimals in range(max_decimals + 1):
        if (value * 10**decimals).denominator == 1:
            return str(round_half_up(value, decimals))
    return str(round_half_up(value, max_decimals))
