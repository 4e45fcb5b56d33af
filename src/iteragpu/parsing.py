"""Parse command-line sizes into exact values; every error is a one-line `InputError`."""

from __future__ import annotations

import re
from fractions import Fraction

from iteragpu.quantity import QuantityError, parse_number

_COUNT_SUFFIXES = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_COUNT = re.compile(r"^\s*(?P<number>[0-9_.eE+-]+)\s*(?P<suffix>[KkMmBbGgTt])?\s*$")


class InputError(ValueError):
    """Bad user input, reported on one line with exit code 2."""


def parse_count(text: str, what: str) -> int:
    """A positive whole count: `7000000000`, `7e9`, `7B`, `1.5B`, `70M`.

    >>> parse_count("7B", "parameters"), parse_count("1.5e9", "parameters")
    (7000000000, 1500000000)
    """
    match = _COUNT.match(text)
    if match is None:
        raise InputError(f"{what} must be a positive whole number such as 7e9 or 7B, got {text!r}")
    value = _number(match["number"], what)
    if match["suffix"]:
        value *= _COUNT_SUFFIXES[match["suffix"].upper()]
    if value.denominator != 1:
        raise InputError(f"{what} must be a whole number, got {text!r}")
    if value <= 0:
        raise InputError(f"{what} must be positive, got {text!r}")
    return int(value)


def parse_positive(text: str, what: str) -> Fraction:
    """A positive exact number (bits, bytes per value): `16`, `4.5`, `0.5`."""
    value = _number(text, what)
    if value <= 0:
        raise InputError(f"{what} must be positive, got {text!r}")
    return value


def parse_non_negative(text: str, what: str) -> Fraction:
    """A reserve or other amount that may be zero but not negative."""
    value = _number(text, what)
    if value < 0:
        raise InputError(f"{what} cannot be negative, got {text!r}")
    return value


def _number(text: str, what: str) -> Fraction:
    try:
        return parse_number(text)
    except QuantityError:
        raise InputError(f"{what} must be a finite number, got {text!r}") from None
