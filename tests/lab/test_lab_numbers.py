"""The lab script's numbers follow the shared grammar (ASCII digits, bounded) and its JSON
decimals are exact, like the package's."""

from __future__ import annotations

import json
import unicodedata
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lab_support import run_script

from iteragpu.core import numbers
from iteragpu.lab import mesure_memoire as mm


@pytest.mark.parametrize(
    "text",
    ["7000000000", "7e9", "7E9", "7B", "7b", "7G", "7_000_000_000", "+7e9", "0.007T", "7000000K"],
)
def test_parameters_accept_the_cli_forms(tmp_path: Path, text: str) -> None:
    done = run_script("estimate", "--parameters", text, "--bits", "16", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["parameters"] == 7_000_000_000


@pytest.mark.parametrize(
    ("text", "lang", "value"),
    [("70M", "ko", 70_000_000), ("1.5B", "ko", 1_500_000_000), ("1,5B", "id", 1_500_000_000)],
)
def test_parameters_suffixes_scale(text: str, lang: str, value: int) -> None:
    assert mm.parse_count(text, lang, maximum=mm.MAX_PARAMETERS) == value


def test_dimensions_use_the_same_grammar(tmp_path: Path) -> None:
    done = run_script(
        "predict", "--batch", "1e0", "--context", "1_6", "--width", "6.4e1", "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["dimensions"] == {"batch": 1, "context": 16, "width": 64}


@pytest.mark.parametrize(
    ("lang", "readings"),
    [("ko", ("32,000", "32,768")), ("id", ("32.000", "32.768"))],
)
@pytest.mark.parametrize("flag", ["--context", "--batch", "--width"])
def test_a_suffix_on_a_dimension_is_refused_with_both_readings(
    tmp_path: Path, lang: str, readings: tuple[str, str], flag: str
) -> None:
    """`--context 32k` as the CLI's `--tokens 32k`: never read as 32,000 without a word."""
    argv = {"--batch": "1", "--context": "16", "--width": "64", flag: "32k"}
    args = (x for item in argv.items() for x in item)
    done = run_script("predict", *args, "--lang", lang, cwd=tmp_path)
    assert done.returncode == 2, done
    (line,) = done.stderr.splitlines()
    assert readings[0] in line and readings[1] in line and "'32k'" in line
    assert done.stdout == ""


def test_parameters_keep_their_suffixes_and_dimensions_read_digits() -> None:
    assert mm.parse_count("7B", maximum=mm.MAX_PARAMETERS) == 7 * 10**9
    assert mm.parse_whole("32768", minimum=1, maximum=mm.MAX_DIMENSION) == 32 * 1024
    with pytest.raises(mm.NumberError) as refused:
        mm.parse_whole("1M", "id", minimum=1, maximum=mm.MAX_DIMENSION)
    assert refused.value.reason == "ambiguous_suffix"
    assert refused.value.readings == (10**6, 2**20)
    # B is no suffix of a dimension, and a zero or negative one is refused as before
    for text, reason in (("1B", "not_number"), ("0k", "not_number"), ("-1k", "not_number")):
        with pytest.raises(mm.NumberError) as other:
            mm.parse_whole(text, minimum=1, maximum=mm.MAX_DIMENSION)
        assert other.value.reason == reason, text


ASCII_NUMBERS = st.builds(
    lambda sign, whole, fraction, exponent: f"{sign}{whole}{fraction}{exponent}",
    st.sampled_from(["", "+", "-"]),
    st.from_regex(r"[0-9]{1,20}", fullmatch=True),
    st.sampled_from(["", "."]) | st.from_regex(r"\.[0-9]{1,20}", fullmatch=True),
    st.sampled_from([""]) | st.integers(-50, 50).map(lambda e: f"e{e}"),
)


@given(ASCII_NUMBERS)
def test_parse_number_agrees_with_decimal(text: str) -> None:
    assert mm.parse_number(text) == Fraction(Decimal(text))


@given(st.from_regex(r"[0-9]{1,5}(_[0-9]{1,5}){1,3}", fullmatch=True))
def test_underscores_between_digits_are_group_separators(text: str) -> None:
    assert mm.parse_number(text) == int(text.replace("_", ""))


@pytest.mark.parametrize("text", ["_1", "1_", "1__0", "1._5", "1e_5", "_", ".", "e5", "1e", "--1"])
def test_misplaced_underscores_and_fragments_are_refused(text: str) -> None:
    with pytest.raises(mm.NumberError) as refused:
        mm.parse_number(text)
    assert refused.value.reason == "not_number"


@given(st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9"))
def test_every_non_ascii_digit_is_refused_by_name(digit: str) -> None:
    with pytest.raises(mm.NumberError) as info:
        mm.parse_number(f"1{digit}")
    assert info.value.reason == "non_ascii_digit"
    assert unicodedata.name(digit) in str(info.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1" * 51, "too_many_digits"),
        ("0." + "0" * 60 + "1" * 51, "too_many_digits"),
        ("1e51", "exponent_out_of_range"),
        ("1e-51", "exponent_out_of_range"),
        ("1e" + "9" * 5000, "exponent_out_of_range"),
        ("inf", "not_number"),
        ("nan", "not_number"),
    ],
)
def test_bounds_are_checked_at_parse_time(text: str, reason: str) -> None:
    with pytest.raises(mm.NumberError) as refused:
        mm.parse_number(text)
    assert refused.value.reason == reason


def test_bounds_allow_their_limits() -> None:
    assert mm.parse_number("1" * 50) == int("1" * 50)
    assert mm.parse_number("0" * 49 + "1") == 1
    with pytest.raises(mm.NumberError) as refused:
        mm.parse_number("0" * 50 + "1")  # every digit counts, as in the CLI
    assert refused.value.reason == "too_many_digits"
    assert mm.parse_number("1e50") == 10**50 and mm.parse_number("1e-50") == Fraction(1, 10**50)


@given(
    st.integers(0, 10**30),
    st.sampled_from([1, 8, 10**9, 2**30, 2**10 * 5**7, 16 * 10**9]),
)
def test_exact_decimal_text_agrees_with_the_package(numerator: int, denominator: int) -> None:
    value = Fraction(numerator, denominator)
    text = mm.exact_decimal_text(value)
    assert Fraction(Decimal(text)) == value
    assert "e" not in text.lower()
    assert Fraction(Decimal(numbers.exact_decimal_text(value))) == value


def test_exact_decimal_text_refuses_a_repeating_decimal() -> None:
    with pytest.raises(ValueError):
        mm.exact_decimal_text(Fraction(1, 3))
