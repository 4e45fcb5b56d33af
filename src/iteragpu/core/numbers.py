"""Numbers: the one grammar every input is read with, its bounds, and exact rounding and text.

The grammar is shared by the CLI, the lab (a pinned copy: it runs alone) and the browser sizer
(through the vectors of `iteragpu.docs_tools.sizer_vectors`); the rounding (`round_half_up`) and
the exact decimal text of the JSON outputs (`exact_decimal_text`) are the core's, which the lab
copies too.

A number is ASCII digits `0-9` with `_` allowed only between two digits, an optional decimal
mark, an optional exponent (`e`/`E`, optional sign) and an optional leading `+` or `-` (a caller
refuses a negative size). Any other Unicode digit is refused by name, as are `inf` and `nan`.
At most `MAX_DIGITS` digits before the exponent and an exponent within +-`MAX_EXPONENT`: every
value then lies between 10^-100 and 10^100, so nothing a user types can hang or overflow the
exact arithmetic. Callers bound magnitudes further where a size stops making sense (`maximum`).

The decimal mark follows the reader (`decimal_comma`, true where the reader's language writes
13,04, such as Indonesian): `.` always, and `,` too where the language writes a decimal comma.
There, a mark followed by exactly three digits after one to three leading digits (`1,234`,
`1.500`, `12.345e3`) is refused as ambiguous: it may as well be a thousands separator, and a
figure is never guessed. `0,125`, `1234,567`, `1,25` and `1,2340` are not ambiguous. Digit
groups are written with `_` in every language, never with `,` or `.`.

Counts take a decimal suffix (`parse_count`): `7B`, `1.5B`, `70M`, `0.5K`, as parameter counts
are written (K 10^3, M 10^6, B and G 10^9, T 10^12). Counts of tokens do not (`parse_tokens`):
context lengths are powers of two, and a "32k" context is 32,768 tokens (k = 2^10) where k is
1,000 everywhere else, so K, M, G or T after a token count is refused as ambiguous with both
readings spelled out, as `1,234` is where a decimal comma is read; B is no token unit and is
refused as any other letter. Plain counts of things that are not
sized in powers of two, `--sequences`, `--days`, `--cards`, layers and heads, keep the decimal
suffixes: nobody means 1,024 days by "1k days", and they read as they always have.

Every error is a one-line `InputError` whose `reason` is the code the browser sizer reports
(`web/sizer/numbers.js` implements the same grammar; `sizer_vectors` pins the two together)
and whose `template` is a message of the package's catalogue, so that the CLI can say it in the
reader's language; `str()` of the error is the English message.

The grammar is scanned by hand, without regular expressions: compiling them cost the CLI several
milliseconds at every start (`benchmarks/cli_startup.py`).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Final

MAX_DIGITS: Final = 50
MAX_EXPONENT: Final = 50

_COUNT_SUFFIXES: Final = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_COUNT_SUFFIX_LETTERS: Final = "KkMmBbGgTt"
_COUNT_CHARACTERS: Final = frozenset("0123456789_.eE+-")
# A suffix after a token count: its decimal and its binary reading, both in use.
TOKEN_SUFFIXES: Final = {
    "K": (10**3, 2**10),
    "M": (10**6, 2**20),
    "G": (10**9, 2**30),
    "T": (10**12, 2**40),
}
_SHOWN_CHARACTERS = 40
# Digits on either side of a decimal mark that make it ambiguous where a decimal comma is read:
# one to three leading digits, then exactly three, as a thousands group would be written.
_GROUP_DIGITS = 3


class InputError(ValueError):
    """Bad user input, reported on one line with exit code 2.

    `template` is a message of the package's catalogue (`{name}` fields filled from `values`),
    `reason` a stable code that the sizer and the JSON-reading tools share. `str()` is the English
    message; the CLI translates `template` and fills in the same values.
    """

    # The two values an ambiguous suffix may mean (decimal, binary); None for other refusals.
    readings: tuple[Fraction, Fraction] | None = None
    # The values that are figures the program computed (not the reader's input echoed back): the
    # CLI writes them in the reader's number format (`131.072` in Indonesian).
    numbers: tuple[str, ...] = ()

    def __init__(self, template: str, reason: str = "invalid", **values: str) -> None:
        super().__init__(template.format(**values) if values else template)
        self.template = template
        self.reason = reason
        self.values = values


def shown(text: str) -> str:
    """`text` quoted for an error message, cut short (`'...'...`) so that the message stays one
    short line; no word of any language, as it goes into every language's messages."""
    if len(text) <= _SHOWN_CHARACTERS:
        return repr(text)
    return f"{text[:_SHOWN_CHARACTERS]!r}..."


def refuse_non_ascii_digits(text: str, what: str) -> None:
    """Refuse any decimal digit other than 0-9, naming it: one grammar for every input."""
    for character in text:
        if character.isdecimal() and not "0" <= character <= "9":
            import unicodedata  # only on this error path: it costs start-up otherwise

            name = unicodedata.name(character, "")
            codepoint = f"U+{ord(character):04X} {name}".rstrip()
            raise InputError(
                "{what} must use the digits 0-9: {character} ({codepoint}) is not one",
                "non_ascii_digit",
                what=what,
                character=repr(character),
                codepoint=codepoint,
            )


class _Written:
    """A number as written: each part's text, `_` included; None where the part is absent.
    (A plain class: creating a NamedTuple class costs the CLI's start-up a fraction of a ms.)"""

    __slots__ = ("exponent", "fraction", "mark", "sign", "whole")

    def __init__(
        self,
        sign: str,
        whole: str | None,
        mark: str | None,
        fraction: str | None,
        exponent: str | None,  # with its sign
    ) -> None:
        self.sign, self.whole, self.mark = sign, whole, mark
        self.fraction, self.exponent = fraction, exponent


def _digits_end(text: str, start: int) -> int:
    """Where the digits starting at `start` end (`start` itself when there are none): ASCII
    digits, each `_` between two of them."""
    end = len(text)
    if start >= end or not "0" <= text[start] <= "9":
        return start
    i = start + 1
    while i < end:
        if "0" <= text[i] <= "9":
            i += 1
        elif text[i] == "_" and i + 1 < end and "0" <= text[i + 1] <= "9":
            i += 2
        else:
            break
    return i


def _scan(text: str, marks: str) -> _Written | None:
    """The parts of `text` if it is a number of the grammar with a decimal mark among `marks`,
    else None: [+-] (digits [mark [digits]] | mark digits) [(e|E) [+-] digits]."""
    end = len(text)
    i = 1 if text[:1] in ("+", "-") else 0
    sign = text[:i]
    whole_end = _digits_end(text, i)
    whole = text[i:whole_end] or None
    i = whole_end
    mark = fraction = exponent = None
    if i < end and text[i] in marks:
        mark = text[i]
        fraction_end = _digits_end(text, i + 1)
        fraction = text[i + 1 : fraction_end] or None
        i = fraction_end
    if whole is None and fraction is None:
        return None
    if i < end and text[i] in "eE":
        start = i + 1 + (text[i + 1 : i + 2] in ("+", "-"))
        exponent_end = _digits_end(text, start)
        if exponent_end == start:
            return None
        exponent = text[i + 1 : exponent_end]
        i = exponent_end
    return _Written(sign, whole, mark, fraction, exponent) if i == end else None


def _not_a_number(text: str, what: str, decimal_comma: bool) -> InputError:
    """The refusal of a text that is no number of the grammar, saying what to write instead."""
    quoted = shown(text)
    if not decimal_comma and "," in text:
        return InputError(
            "{what} must be a finite number with '.' as the decimal mark; write digit groups "
            "with '_' or not at all (4.5, 1_234 or 1234), got {text}",
            "not_number",
            what=what,
            text=quoted,
        )
    if decimal_comma and text.count(",") + text.count(".") > 1:
        return InputError(
            "{what} must be a finite number with one decimal mark, ',' or '.'; write digit "
            "groups with '_' or not at all (1234,5 or 1_234,5), got {text}",
            "not_number",
            what=what,
            text=quoted,
        )
    if decimal_comma:
        return InputError(
            "{what} must be a finite number (digits 0-9, ',' or '.' for the decimals, an "
            "exponent such as e9), got {text}",
            "not_number",
            what=what,
            text=quoted,
        )
    return InputError(
        "{what} must be a finite number (digits 0-9, '.', an exponent such as e9), got {text}",
        "not_number",
        what=what,
        text=quoted,
    )


def _refuse_ambiguous(written: _Written, text: str, what: str) -> None:
    """Refuse `1,234` or `1.500` where a decimal comma is read: a mark after one to three
    leading digits (not a lone 0) and before exactly three may as well group thousands."""
    whole, fraction = written.whole, written.fraction
    if (
        written.mark is None
        or whole is None
        or fraction is None
        or not 1 <= len(whole) <= _GROUP_DIGITS
        or not whole.isdigit()
        or whole.startswith("0")
        or len(fraction) != _GROUP_DIGITS
        or not fraction.isdigit()
    ):
        return
    exponent = "" if written.exponent is None else text.strip()[-len(written.exponent) - 1 :]
    decimals = fraction.rstrip("0")
    if len(decimals) == _GROUP_DIGITS:
        decimals += "0"  # 1,2340 is 1.234 and no group of three
    # Said with the reader's decimal comma: ambiguity arises only where it is read.
    decimal = written.sign + whole + ("," + decimals if decimals else "") + exponent
    raise InputError(
        "{what} {text} is ambiguous: a ',' or '.' before three digits may mark the decimals "
        "or group the thousands; write {whole} for the whole number or {decimal} for the "
        "decimal",
        "ambiguous_separator",
        what=what,
        text=shown(text),
        whole=written.sign + whole + fraction + exponent,
        decimal=decimal,
    )


def parse_number(text: str, what: str = "number", *, decimal_comma: bool = False) -> Fraction:
    """Exact value of a number of the grammar: `7e9`, `13.04`, `7_000_000_000`, `-1.5E-3`;
    with `decimal_comma`, `13,04` too (and `1,234` is refused as ambiguous).

    >>> parse_number("7e9"), parse_number(".5"), parse_number("24,5", decimal_comma=True)
    (Fraction(7000000000, 1), Fraction(1, 2), Fraction(49, 2))
    >>> try:
    ...     parse_number("1e400", "--params")
    ... except InputError as error:
    ...     print(error.reason)
    exponent_out_of_range
    """
    refuse_non_ascii_digits(text, what)
    written = _scan(text.strip(), ".," if decimal_comma else ".")
    if written is None:
        raise _not_a_number(text, what, decimal_comma)
    whole = (written.whole or "").replace("_", "")
    fraction = (written.fraction or "").replace("_", "")
    digits = whole + fraction
    if len(digits) > MAX_DIGITS:
        raise InputError(
            "{what} has too many digits (at most {max_digits}), got {text}",
            "too_many_digits",
            what=what,
            max_digits=str(MAX_DIGITS),
            text=shown(text),
        )
    exponent_text = (written.exponent or "0").replace("_", "")
    # Compare the exponent's digits before int(): a 5,000-digit exponent must not reach int().
    exponent_digits = exponent_text.lstrip("+-").lstrip("0")
    if len(exponent_digits) > len(str(MAX_EXPONENT)) or int(exponent_digits or 0) > MAX_EXPONENT:
        raise InputError(
            "{what} has an exponent out of range (at most {max_exponent} either way), got {text}",
            "exponent_out_of_range",
            what=what,
            max_exponent=str(MAX_EXPONENT),
            text=shown(text),
        )
    if decimal_comma:
        _refuse_ambiguous(written, text, what)
    scale = int(exponent_text) - len(fraction)
    value = Fraction(int(digits)) * Fraction(10) ** scale
    return -value if written.sign == "-" else value


def _count_parts(text: str, decimal_comma: bool) -> tuple[str, int] | None:
    """(number, multiplier) of a count such as ` 7 B `, or None when it is not written as one."""
    stripped = text.strip()
    suffix = stripped[-1:]
    multiplier = 1
    if suffix and suffix in _COUNT_SUFFIX_LETTERS:
        multiplier = _COUNT_SUFFIXES[suffix.upper()]
        stripped = stripped[:-1].rstrip()
    allowed = _COUNT_CHARACTERS | {","} if decimal_comma else _COUNT_CHARACTERS
    if not stripped or not allowed.issuperset(stripped):
        return None
    return stripped, multiplier


def _not_a_count(text: str, what: str, decimal_comma: bool) -> InputError:
    if not decimal_comma and "," in text:
        return InputError(
            "{what} must be a positive whole number such as 7e9, 7B or 1.5B, with '.' as the "
            "decimal mark and digit groups written with '_' or not at all, got {text}",
            "not_count",
            what=what,
            text=shown(text),
        )
    return InputError(
        "{what} must be a positive whole number such as 7e9 or 7B, got {text}",
        "not_count",
        what=what,
        text=shown(text),
    )


def parse_count(
    text: str, what: str, *, maximum: int | None = None, decimal_comma: bool = False
) -> int:
    """A positive whole count: `7000000000`, `7e9`, `7B`, `1.5B`, `70M`, at most `maximum`;
    with `decimal_comma`, `1,5B` too.

    >>> parse_count("7B", "parameters"), parse_count("1.5e9", "parameters")
    (7000000000, 1500000000)
    """
    refuse_non_ascii_digits(text, what)
    parts = _count_parts(text, decimal_comma)
    if parts is None:
        raise _not_a_count(text, what, decimal_comma)
    number, multiplier = parts
    value = parse_number(number, what, decimal_comma=decimal_comma) * multiplier
    if value.denominator != 1:
        raise InputError(
            "{what} must be a whole number, got {text}", "not_whole", what=what, text=shown(text)
        )
    if value <= 0:
        raise InputError(
            "{what} must be positive, got {text}", "not_positive", what=what, text=shown(text)
        )
    _check_maximum(value, maximum, text, what)
    return int(value)


def parse_tokens(
    text: str,
    what: str,
    *,
    maximum: int | None = None,
    decimal_comma: bool = False,
    group: str | None = None,
) -> int:
    """A positive whole count of tokens, written without a suffix: `32768`, `3.2768e4`,
    `32_768`, at most `maximum`. `32k` (and M, G, T) is refused as ambiguous, saying both
    readings as the reader writes figures: `group` between thousands (by default `.` where a
    decimal comma is read, else `,`, as Indonesian and Korean group them), the decimal mark
    that `decimal_comma` says.

    >>> parse_tokens("32768", "--tokens"), parse_tokens("3.2768e4", "--tokens")
    (32768, 32768)
    >>> try:
    ...     parse_tokens("32k", "--tokens")
    ... except InputError as error:
    ...     print(error.reason, error.values["decimal_reading"], error.values["binary_reading"])
    ambiguous_suffix 32,000 32,768
    """
    refuse_non_ascii_digits(text, what)
    stripped = text.strip()
    suffix = stripped[-1:]
    factors = TOKEN_SUFFIXES[suffix.upper()] if suffix and suffix in "KkMmGgTt" else None
    number = stripped[:-1].rstrip() if factors is not None else stripped
    allowed = _COUNT_CHARACTERS | {","} if decimal_comma else _COUNT_CHARACTERS
    if not number or not allowed.issuperset(number):
        raise InputError(
            "{what} must be a positive whole number of tokens written in digits, such as "
            "32768, 32_768 or 1e6, without a suffix, got {text}",
            "not_token_count",
            what=what,
            text=shown(text),
        )
    value = parse_number(number, what, decimal_comma=decimal_comma)
    if value <= 0:
        raise InputError(
            "{what} must be positive, got {text}", "not_positive", what=what, text=shown(text)
        )
    if factors is not None:
        raise _ambiguous_suffix(text, what, suffix, value, factors, decimal_comma, group)
    if value.denominator != 1:
        raise InputError(
            "{what} must be a whole number, got {text}", "not_whole", what=what, text=shown(text)
        )
    _check_maximum(value, maximum, text, what)
    return int(value)


def _ambiguous_suffix(
    text: str,
    what: str,
    suffix: str,
    value: Fraction,
    factors: tuple[int, int],
    decimal_comma: bool,
    group: str | None,
) -> InputError:
    """The refusal of `32k` tokens, with both readings (`readings`) written for the reader."""
    mark = "," if decimal_comma else "."
    separator = group if group is not None else ("." if decimal_comma else ",")
    decimal, binary = value * factors[0], value * factors[1]
    error = InputError(
        "{what} {text} is ambiguous: {decimal_reading} tokens ({suffix} = {decimal_factor}) or "
        "{binary_reading} tokens ({suffix} = {binary_factor}); write the number of tokens in "
        "digits, without a suffix",
        "ambiguous_suffix",
        what=what,
        text=shown(text),
        suffix=suffix,
        decimal_reading=figure_text(decimal, separator, mark),
        binary_reading=figure_text(binary, separator, mark),
        decimal_factor=figure_text(Fraction(factors[0]), separator, mark),
        binary_factor=figure_text(Fraction(factors[1]), separator, mark),
    )
    error.readings = (decimal, binary)
    return error


def figure_text(value: Fraction, group: str, mark: str) -> str:
    """A positive value that ends in decimals, every digit written, thousands grouped with
    `group`: the figures a refusal quotes (the CLI's tables use `iteragpu.i18n.numbers`).

    >>> figure_text(Fraction(32768), ",", "."), figure_text(Fraction(6144, 5), ".", ",")
    ('32,768', '1.228,8')
    """
    whole, _, fraction = exact_decimal_text(value).partition(".")
    first = len(whole) % _GROUP_DIGITS or _GROUP_DIGITS
    groups = [whole[:first]]
    groups += [whole[i : i + _GROUP_DIGITS] for i in range(first, len(whole), _GROUP_DIGITS)]
    return group.join(groups) + (mark + fraction if fraction else "")


def parse_positive(
    text: str, what: str, *, maximum: int | None = None, decimal_comma: bool = False
) -> Fraction:
    """A positive exact number (bits, bytes per value): `16`, `4.5`, `0.5`, at most `maximum`."""
    value = parse_number(text, what, decimal_comma=decimal_comma)
    if value <= 0:
        raise InputError(
            "{what} must be positive, got {text}", "not_positive", what=what, text=shown(text)
        )
    _check_maximum(value, maximum, text, what)
    return value


def parse_non_negative(
    text: str, what: str, *, maximum: int | None = None, decimal_comma: bool = False
) -> Fraction:
    """A reserve or other amount that may be zero but not negative, at most `maximum`."""
    value = parse_number(text, what, decimal_comma=decimal_comma)
    if value < 0:
        raise InputError(
            "{what} cannot be negative, got {text}", "negative", what=what, text=shown(text)
        )
    _check_maximum(value, maximum, text, what)
    return value


def _check_maximum(value: Fraction, maximum: int | None, text: str, what: str) -> None:
    if maximum is not None and value > maximum:
        raise InputError(
            "{what} must be at most {limit}, got {text}",
            "too_large",
            what=what,
            limit=limit_text(maximum),
            text=shown(text),
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
