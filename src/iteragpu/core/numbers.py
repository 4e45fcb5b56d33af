"""Numbers: the one grammar every input is read with, its bounds, and exact rounding and text.

The grammar is shared by the CLI, the lab (a pinned copy: it runs alone) and the browser sizer
(through the vectors of `iteragpu.docs_tools.sizer_vectors`); the rounding (`round_half_up`) and
the exact decimal text of the JSON outputs (`exact_decimal_text`) are the core's, which the lab
copies too.

A number is ASCII digits `0-9` with `_` allowed only between two digits, an optional decimal
point, an optional exponent (`e`/`E`, optional sign) and an optional leading `+` or `-` (a caller
refuses a negative size). Any other Unicode digit is refused by name, as are `inf` and `nan`.
At most `MAX_DIGITS` digits before the exponent and an exponent within +-`MAX_EXPONENT`: every
value then lies between 10^-100 and 10^100, so nothing a user types can hang or overflow the
exact arithmetic. Callers bound magnitudes further where a size stops making sense (`maximum`).

Every error is a one-line `InputError` whose `reason` is the code the browser sizer reports
(`src/iteragpu/web/sizer.js` implements the same grammar; `sizer_vectors` pins the two together).
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Final

MAX_DIGITS: Final = 50
MAX_EXPONENT: Final = 50

_DIGITS = r"[0-9](?:_?[0-9])*"  # one branch per character: no backtracking blow-up
_NUMBER = re.compile(
    rf"(?P<sign>[+-])?(?:(?P<whole>{_DIGITS})(?:\.(?P<fraction>{_DIGITS})?)?"
    rf"|\.(?P<fraction_only>{_DIGITS}))(?:[eE](?P<exponent>[+-]?{_DIGITS}))?"
)
_COUNT_SUFFIXES: Final = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_COUNT = re.compile(r"^\s*(?P<number>[0-9_.eE+-]+)\s*(?P<suffix>[KkMmBbGgTt])?\s*$")
_SHOWN_CHARACTERS = 40


class InputError(ValueError):
    """Bad user input, reported on one line with exit code 2; `reason` is a stable code."""

    def __init__(self, message: str, reason: str = "invalid") -> None:
        super().__init__(message)
        self.reason = reason


def shown(text: str) -> str:
    """`text` quoted for an error message, cut short so that the message stays one short line."""
    if len(text) <= _SHOWN_CHARACTERS:
        return repr(text)
    return f"{text[:_SHOWN_CHARACTERS]!r}... ({len(text)} characters)"


def refuse_non_ascii_digits(text: str, what: str) -> None:
    """Refuse any decimal digit other than 0-9, naming it: one grammar for every input."""
    for character in text:
        if character.isdecimal() and not "0" <= character <= "9":
            import unicodedata  # only on this error path: it costs start-up otherwise

            name = unicodedata.name(character, "")
            raise InputError(
                f"{what} must use the digits 0-9: {character!r} "
                f"(U+{ord(character):04X}{' ' + name if name else ''}) is not one",
                "non_ascii_digit",
            )


def parse_number(text: str, what: str = "number") -> Fraction:
    """Exact value of a number of the grammar: `7e9`, `13.04`, `7_000_000_000`, `-1.5E-3`.

    >>> parse_number("7e9"), parse_number(".5")
    (Fraction(7000000000, 1), Fraction(1, 2))
    >>> try:
    ...     parse_number("1e400", "--params")
    ... except InputError as error:
    ...     print(error.reason)
    exponent_out_of_range
    """
    refuse_non_ascii_digits(text, what)
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        raise InputError(
            f"{what} must be a finite number (digits 0-9, '.', an exponent such as e9), "
            f"got {shown(text)}",
            "not_number",
        )
    fraction = (match["fraction"] or match["fraction_only"] or "").replace("_", "")
    digits = (match["whole"] or "").replace("_", "") + fraction
    if len(digits) > MAX_DIGITS:
        raise InputError(
            f"{what} has too many digits (at most {MAX_DIGITS}), got {shown(text)}",
            "too_many_digits",
        )
    exponent_text = (match["exponent"] or "0").replace("_", "")
    # Compare the exponent's digits before int(): a 5,000-digit exponent must not reach int().
    exponent_digits = exponent_text.lstrip("+-").lstrip("0")
    if len(exponent_digits) > len(str(MAX_EXPONENT)) or int(exponent_digits or 0) > MAX_EXPONENT:
        raise InputError(
            f"{what} has an exponent out of range (at most {MAX_EXPONENT} either way), "
            f"got {shown(text)}",
            "exponent_out_of_range",
        )
    scale = int(exponent_text) - len(fraction)
    value = Fraction(int(digits)) * Fraction(10) ** scale
    return -value if match["sign"] == "-" else value


def parse_count(text: str, what: str, *, maximum: int | None = None) -> int:
    """A positive whole count: `7000000000`, `7e9`, `7B`, `1.5B`, `70M`, at most `maximum`.

    >>> parse_count("7B", "parameters"), parse_count("1.5e9", "parameters")
    (7000000000, 1500000000)
    """
    refuse_non_ascii_digits(text, what)
    match = _COUNT.match(text)
    if match is None:
        raise InputError(
            f"{what} must be a positive whole number such as 7e9 or 7B, got {shown(text)}",
            "not_count",
        )
    value = parse_number(match["number"], what)
    if match["suffix"]:
        value *= _COUNT_SUFFIXES[match["suffix"].upper()]
    if value.denominator != 1:
        raise InputError(f"{what} must be a whole number, got {shown(text)}", "not_whole")
    if value <= 0:
        raise InputError(f"{what} must be positive, got {shown(text)}", "not_positive")
    _check_maximum(value, maximum, text, what)
    return int(value)


def parse_positive(text: str, what: str, *, maximum: int | None = None) -> Fraction:
    """A positive exact number (bits, bytes per value): `16`, `4.5`, `0.5`, at most `maximum`."""
    value = parse_number(text, what)
    if value <= 0:
        raise InputError(f"{what} must be positive, got {shown(text)}", "not_positive")
    _check_maximum(value, maximum, text, what)
    return value


def parse_non_negative(text: str, what: str, *, maximum: int | None = None) -> Fraction:
    """A reserve or other amount that may be zero but not negative, at most `maximum`."""
    value = parse_number(text, what)
    if value < 0:
        raise InputError(f"{what} cannot be negative, got {shown(text)}", "negative")
    _check_maximum(value, maximum, text, what)
    return value


def _check_maximum(value: Fraction, maximum: int | None, text: str, what: str) -> None:
    if maximum is not None and value > maximum:
        raise InputError(
            f"{what} must be at most {limit_text(maximum)}, got {shown(text)}", "too_large"
        )


def limit_text(limit: int) -> str:
    """A limit as the grammar writes it: `1e15` for a large power of ten, else its digits.

    >>> limit_text(10**15), limit_text(64)
    ('1e15', '64')
    """
    digits = str(limit)
    if limit >= 10**4 and digits.rstrip("0") == "1":
        return f"1e{len(digits) - 1}"
    return digits


# ---------------------------------------------------------------------------------------------
# Exact rounding and decimal text
# ---------------------------------------------------------------------------------------------


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
    return rounded.copy_negate() if value < 0 else rounded  # unary minus rounds to 28 digits


def decimal_places(value: Fraction) -> int | None:
    """Decimals that write `value` exactly, or None when its expansion never ends.

    A fraction ends in decimals when its reduced denominator is 2^a x 5^b; it then takes
    max(a, b) places. Bytes over 2^30 or 10^9, and decimal inputs over 8, always end.

    >>> [decimal_places(Fraction(1, 2**30)), decimal_places(Fraction(3))]
    [30, 0]
    >>> decimal_places(Fraction(1, 3)) is None
    True
    """
    denominator = value.denominator
    twos = (denominator & -denominator).bit_length() - 1
    denominator >>= twos
    fives = 0
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    return max(twos, fives) if denominator == 1 else None


def exact_decimal_text(value: Fraction, max_decimals: int = 20) -> str:
    """Plain decimal text of `value`: exact when it ends, else rounded to `max_decimals`.

    The JSON outputs state every derived unit this way (`"weights_gib": "13.03..."`).

    >>> exact_decimal_text(Fraction(24_000_000_000, 2**30))
    '22.351741790771484375'
    >>> exact_decimal_text(Fraction(1, 2**30))
    '0.000000000931322574615478515625'
    """
    places = decimal_places(value)
    # format "f": str() of a Decimal would write 9.3E-10 for a tiny value.
    return format(round_half_up(value, max_decimals if places is None else places), "f")
