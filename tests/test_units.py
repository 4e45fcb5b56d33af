"""The units module against pint, which knows nothing of our tables, and the number grammar
that every input of the CLI goes through (`iteragpu.core.numbers`)."""

from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iteragpu.core import numbers, units
from iteragpu.core.numbers import MAX_DIGITS, MAX_EXPONENT, InputError, parse_count, parse_number
from iteragpu.core.quantity import convert, parse_bytes
from iteragpu.docs_tools.pint_units import pint_registry
from iteragpu.docs_tools.sizer_vectors import PARSE_TEXTS
from iteragpu.lab import mesure_memoire

PREFIX_NAMES = dict(
    zip("kMGTPEZY", ("kilo", "mega", "giga", "tera", "peta", "exa", "zetta", "yotta"), strict=True)
)
BINARY_NAMES = dict(
    zip("KMGTPEZY", ("kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi"), strict=True)
)


def pint_name(symbol: str) -> str:
    """pint's long name for one of our symbols, spelled out here independently of units.py."""
    if symbol in ("B", "bit"):
        return {"B": "byte", "bit": "bit"}[symbol]
    if symbol.endswith("iB"):
        return BINARY_NAMES[symbol[0]] + "byte"
    return PREFIX_NAMES[symbol[0]] + ("byte" if symbol.endswith("B") else "bit")


@pytest.fixture(scope="module")
def exact_ureg() -> Any:
    """The package's pint registry: Fraction magnitudes, so that pint is an exact check."""
    return pint_registry()


def test_the_pint_check_is_exact_where_floats_are_not(exact_ureg: Any) -> None:
    # A float registry says 1 YB is 999999999999999983222784 B: no check at all at that size.
    assert exact_ureg.Quantity(1, "yottabyte").to("byte").magnitude == 10**24
    assert exact_ureg.Quantity(1, "yobibyte").to("byte").magnitude == 2**80
    assert isinstance(exact_ureg.Quantity(1, "bit").to("byte").magnitude, Fraction)


def test_the_table_covers_every_prefix_up_to_yotta() -> None:
    symbols = set(units.BYTES_PER_UNIT)
    assert {f"{p}B" for p in PREFIX_NAMES} <= symbols
    assert {f"{p}iB" for p in BINARY_NAMES} <= symbols
    assert {f"{p}b" for p in PREFIX_NAMES} <= symbols


@pytest.mark.parametrize("symbol", sorted(units.BYTES_PER_UNIT))
def test_every_unit_matches_pint(symbol: str, exact_ureg: Any) -> None:
    expected = exact_ureg.Quantity(1, pint_name(symbol)).to("byte").magnitude
    assert units.bytes_per(symbol) == expected


@pytest.mark.parametrize("name", sorted(units.UNIT_NAMES))
def test_every_long_name_matches_pint_singular_and_plural(name: str, exact_ureg: Any) -> None:
    expected = exact_ureg.Quantity(1, name).to("byte").magnitude
    for spelling in (name, name + "s", name.capitalize(), name.upper()):
        symbol = units.unit_symbol(spelling)
        assert symbol is not None, spelling
        assert units.bytes_per(symbol) == expected


def test_bit_units_are_the_bit_and_its_decimal_multiples() -> None:
    assert {"bit", *(f"{p}b" for p in PREFIX_NAMES)} == units.BIT_UNITS
    for symbol in set(units.BYTES_PER_UNIT) - units.BIT_UNITS:
        assert units.bytes_per(symbol).denominator == 1, symbol


@pytest.mark.parametrize("name", ["millibyte", "decibytes", "Centibit", "nanobyte", "microbit"])
def test_fractions_of_a_byte_are_recognised_to_be_refused(name: str) -> None:
    assert units.unit_symbol(name) is None
    assert units.is_fraction_unit_name(name)


def test_gb_and_gib_definitions() -> None:
    assert units.bytes_per("GB") == 10**9
    assert units.bytes_per("GiB") == 2**30 == 1_073_741_824
    assert units.bytes_per("GB") != units.bytes_per("GiB")


def test_lab_script_shares_the_constants() -> None:
    assert units.bytes_per("GB") == units.BYTES_PER_GB == mesure_memoire.BYTES_PER_GB
    assert units.bytes_per("GiB") == units.BYTES_PER_GIB == mesure_memoire.BYTES_PER_GIB


def test_pint_reads_gb_lowercase_b_as_gilbert_but_we_do_not(ureg: Any) -> None:
    # The pitfall this module exists to avoid: pint's `Gb` is a gilbert (magnetomotive force).
    assert str(ureg.Quantity(1, "Gb").units) == "gilbert"
    assert units.bytes_per("Gb") == Fraction(10**9, 8)


def test_unknown_unit() -> None:
    with pytest.raises(units.UnknownUnitError):
        units.bytes_per("gb")


@given(
    st.integers(min_value=0, max_value=2**80),
    st.sampled_from(sorted(units.BYTES_PER_UNIT)),
)
def test_conversion_round_trips_exactly(byte_count: int, unit: str) -> None:
    assert units.from_unit(units.to_unit(byte_count, unit), unit) == byte_count


@given(
    byte_count=st.integers(min_value=0, max_value=2**90),
    symbol=st.sampled_from(sorted(units.BYTES_PER_UNIT)),
)
def test_conversion_agrees_with_pint_exactly(byte_count: int, symbol: str) -> None:
    theirs = pint_registry().Quantity(byte_count, "byte").to(pint_name(symbol)).magnitude
    assert units.to_unit(byte_count, symbol) == theirs


@given(
    st.integers(min_value=0, max_value=10**30),
    st.integers(min_value=0, max_value=90),
    st.integers(min_value=0, max_value=30),
)
def test_exact_decimal_text_is_exact_and_plain(numerator: int, twos: int, fives: int) -> None:
    value = Fraction(numerator, 2**twos * 5**fives)
    text = numbers.exact_decimal_text(value)
    assert Fraction(Decimal(text)) == value
    assert "E" not in text.upper()
    assert numbers.decimal_places(value) == (
        0 if value.denominator == 1 else len(text.partition(".")[2])
    )


def test_a_decimal_that_never_ends_is_rounded_not_looped() -> None:
    assert numbers.decimal_places(Fraction(1, 3)) is None
    assert numbers.exact_decimal_text(Fraction(2, 3)) == "0." + "6" * 19 + "7"


def test_ceil_bytes() -> None:
    assert [units.ceil_bytes(Fraction(n, 8)) for n in (0, 1, 7, 8, 9)] == [0, 1, 1, 1, 2]


@given(
    st.fractions(min_value=-(10**6), max_value=10**6, max_denominator=10**6),
    st.integers(min_value=0, max_value=6),
)
def test_round_half_up_is_within_half_a_unit(value: Fraction, decimals: int) -> None:
    rounded = Fraction(numbers.round_half_up(value, decimals))
    assert abs(rounded - value) <= Fraction(1, 2 * 10**decimals)


def test_round_half_up_keeps_every_digit_of_huge_values() -> None:
    assert str(numbers.round_half_up(Fraction(10**40 + 1), 0)) == str(10**40 + 1)


def test_round_half_up_rounds_halves_away_from_zero() -> None:
    assert str(numbers.round_half_up(Fraction(1305, 100), 1)) == "13.1"
    assert str(numbers.round_half_up(Fraction(-1305, 100), 1)) == "-13.1"


# ---------------------------------------------------------------------------------------------
# The shared number grammar
# ---------------------------------------------------------------------------------------------

NON_ASCII_DIGITS = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdecimal() and c > 0x7F]
GRAMMAR_ALPHABET = "0123456789_.eE+- \u0663"


def test_every_other_unicode_digit_is_refused_by_name() -> None:
    assert len(NON_ASCII_DIGITS) > 600  # every script's digits, not a sample
    for digit in NON_ASCII_DIGITS:
        for parse in (parse_number, lambda t: parse_count(t, "n"), parse_bytes):
            with pytest.raises(InputError) as raised:
                parse(f"1{digit}")
            assert raised.value.reason == "non_ascii_digit", digit
            assert f"U+{ord(digit):04X}" in str(raised.value)


@given(st.text(alphabet=GRAMMAR_ALPHABET, max_size=14))
def test_the_grammar_agrees_with_decimal_and_stays_bounded(text: str) -> None:
    try:
        value = parse_number(text)
    except InputError as error:
        assert error.reason in (
            "not_number",
            "non_ascii_digit",
            "too_many_digits",
            "exponent_out_of_range",
        )
        return
    # Anything accepted is what Python's Decimal reads, ASCII only, and within 10^+-100.
    assert text.isascii() and "nan" not in text.lower()
    assert Fraction(Decimal(text.strip())) == value
    assert value == 0 or Fraction(1, 10**100) <= abs(value) <= 10**100


@given(st.decimals(allow_nan=False, allow_infinity=False, places=None))
def test_every_plain_decimal_within_the_bounds_is_read_exactly(number: Decimal) -> None:
    text = str(number)
    digits, exponent = len(number.as_tuple().digits), number.as_tuple().exponent
    try:
        value = parse_number(text)
    except InputError as error:
        # Refused only for the documented reasons, and only past the documented bounds.
        assert error.reason in ("too_many_digits", "exponent_out_of_range"), text
        written = text.upper().partition("E")
        assert len(written[0].strip("+-").replace(".", "")) > MAX_DIGITS or (
            written[2] and abs(int(written[2])) > MAX_EXPONENT
        ), text
        return
    assert value == Fraction(number), (text, digits, exponent)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1e51", "exponent_out_of_range"),
        ("1e-51", "exponent_out_of_range"),
        ("1e" + "9" * 5000, "exponent_out_of_range"),
        ("1" * (MAX_DIGITS + 1), "too_many_digits"),
        ("9" * 5000, "too_many_digits"),
        ("inf", "not_number"),
        ("NaN", "not_number"),
        ("1__0", "not_number"),
        ("_1", "not_number"),
        ("1_", "not_number"),
        ("1e_5", "not_number"),
        ("", "not_number"),
    ],
)
def test_numbers_past_the_grammar_are_refused(text: str, reason: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_number(text)
    assert raised.value.reason == reason
    assert len(str(raised.value)) < 200


def test_the_edges_of_the_grammar_are_accepted() -> None:
    assert parse_number("1" * MAX_DIGITS) == int("1" * MAX_DIGITS)
    assert parse_number(f"1e{MAX_EXPONENT}") == 10**MAX_EXPONENT
    assert parse_number(f"1e-{MAX_EXPONENT}") == Fraction(1, 10**MAX_EXPONENT)
    assert parse_number("+1_000.000_1") == Fraction(10000001, 10000)


@pytest.mark.parametrize(
    ("quantity", "unit"),
    [("1 millibyte", "B"), ("10 decibyte", "B"), ("1 bit", "B"), ("24e9 B", "millibyte")],
)
def test_quantities_that_are_no_whole_number_of_bytes_are_refused(quantity: str, unit: str) -> None:
    with pytest.raises(InputError):
        convert(quantity, unit)


@pytest.mark.parametrize("text", PARSE_TEXTS, ids=[repr(t[:24]) for t in PARSE_TEXTS])
def test_the_lab_script_reads_each_edge_of_the_grammar_alike(text: str) -> None:
    """One grammar: the standalone lab script accepts exactly what the CLI accepts."""
    assert _lab_reading(text) == _cli_reading(text)


@given(st.text(alphabet=GRAMMAR_ALPHABET, max_size=14))
def test_the_lab_script_reads_every_number_alike(text: str) -> None:
    assert _lab_reading(text) == _cli_reading(text)


def _lab_reading(text: str) -> Fraction | None:
    try:
        return mesure_memoire.parse_number(text)
    except ValueError:
        return None


def _cli_reading(text: str) -> Fraction | None:
    try:
        return parse_number(text)
    except InputError:
        return None


# ---------------------------------------------------------------------------------------------
# The grammar follows the reader: the decimal comma where the language writes one
# ---------------------------------------------------------------------------------------------


def _reading(text: str, *, decimal_comma: bool) -> Fraction | str:
    try:
        return parse_number(text, decimal_comma=decimal_comma)
    except InputError as error:
        return error.reason


@given(st.text(alphabet=GRAMMAR_ALPHABET, max_size=14))
def test_the_comma_reads_as_the_dot_does_or_is_refused_as_ambiguous(text: str) -> None:
    """Where a decimal comma is read, `4,5` is `4.5`; a dot keeps its meaning there too,
    except where it may group thousands, which is refused rather than guessed."""
    dot = _reading(text, decimal_comma=False)
    for written in (text, text.replace(".", ",")):
        comma = _reading(written, decimal_comma=True)
        assert comma == dot or comma == "ambiguous_separator", (written, comma, dot)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("24,5", Fraction(49, 2)),
        ("4,5", Fraction(9, 2)),
        ("0,125", Fraction(1, 8)),
        ("1234,567", Fraction(1234567, 1000)),
        ("1,2340", Fraction(617, 500)),
        ("1_000,5", Fraction(2001, 2)),
        (",5", Fraction(1, 2)),
        ("7,", Fraction(7)),
        ("1,5e9", Fraction(15 * 10**8)),
        ("-2,25", Fraction(-9, 4)),
        ("13.04", Fraction(1304, 100)),  # the dot everywhere
        ("1.2345", Fraction(12345, 10000)),
        ("1000.5", Fraction(2001, 2)),
    ],
)
def test_a_decimal_comma_is_read_where_the_reader_writes_one(text: str, value: Fraction) -> None:
    assert parse_number(text, decimal_comma=True) == value
    if "," in text:
        with pytest.raises(InputError) as raised:
            parse_number(text)
        assert raised.value.reason == "not_number"
        assert "'.' as the decimal mark" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "whole", "decimal"),
    [
        ("1,234", "1234", "1,2340"),
        ("1.234", "1234", "1,2340"),
        ("999,999", "999999", "999,9990"),
        ("1,000", "1000", "1"),
        ("1.500", "1500", "1,5"),
        ("+12,500e3", "+12500e3", "+12,5e3"),
    ],
)
def test_a_mark_that_may_group_thousands_is_refused_not_guessed(
    text: str, whole: str, decimal: str
) -> None:
    with pytest.raises(InputError) as raised:
        parse_number(text, "--bits", decimal_comma=True)
    assert raised.value.reason == "ambiguous_separator"
    assert raised.value.values["whole"] == whole and raised.value.values["decimal"] == decimal
    # Both suggestions are read without ambiguity, each as the reading it names.
    assert parse_number(whole, decimal_comma=True) == parse_number(
        text.replace(",", "").replace(".", "")
    )
    assert parse_number(decimal, decimal_comma=True) == parse_number(text.replace(",", "."))


@pytest.mark.parametrize("text", ["1.234,5", "1,234.5", "1.000.000", "1,000,000", "4,5,6"])
def test_separators_used_as_digit_groups_are_refused(text: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_number(text, decimal_comma=True)
    assert raised.value.reason == "not_number"
    assert "one decimal mark" in str(raised.value)


def test_counts_and_quantities_read_the_readers_decimal_comma() -> None:
    assert parse_count("1,5B", "--params", decimal_comma=True) == 1_500_000_000
    assert parse_bytes("24,5 GB", decimal_comma=True) == 24_500_000_000
    assert convert("0,5 KiB", "B", decimal_comma=True).value == 512
    for refused in (lambda: parse_count("1,5B", "n"), lambda: parse_bytes("24,5 GB")):
        with pytest.raises(InputError):
            refused()
    with pytest.raises(InputError) as raised:
        parse_count("1.500M", "--params", decimal_comma=True)
    assert raised.value.reason == "ambiguous_separator"


def test_every_input_error_is_a_catalogue_template_with_its_values() -> None:
    with pytest.raises(InputError) as raised:
        parse_number("x", "--bits")
    error = raised.value
    assert error.template.format(**error.values) == str(error)
    assert error.values == {"what": "--bits", "text": "'x'"}
