"""The number symbols cached for the runtime are Babel's, and `format_number` prints what
Babel's `format_decimal` prints, for every language of the list."""

from __future__ import annotations

from decimal import localcontext
from fractions import Fraction

import pytest
from babel.numbers import format_decimal
from hypothesis import example, given, settings
from hypothesis import strategies as st

from iteragpu.core.numbers import round_half_up
from iteragpu.docs_tools import number_symbols
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS
from iteragpu.i18n.numbers import format_number


def babel_text(value: Fraction, decimals: int, lang: str) -> str:
    """What `format_number` printed when it called Babel (before the symbols were cached)."""
    rounded = round_half_up(value, decimals)
    pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
    with localcontext() as context:  # room for every digit of a huge byte count
        context.prec = max(context.prec, len(rounded.as_tuple().digits) + decimals + 2)
        return str(format_decimal(rounded, format=pattern, locale=lang, decimal_quantization=True))


def test_the_committed_table_is_babels_for_every_language() -> None:
    assert list(NUMBER_SYMBOLS) == list(CODES)
    for lang in CODES:
        assert NUMBER_SYMBOLS[lang] == number_symbols.babel_symbols(lang), lang


def test_the_committed_module_is_what_the_generator_writes() -> None:
    assert number_symbols.TABLE_PATH.read_text("utf-8") == number_symbols.table_source()


@pytest.mark.parametrize("lang", CODES)
@settings(max_examples=300, deadline=None)
@given(
    value=st.one_of(
        st.fractions(max_denominator=10**9),
        st.integers(min_value=-(10**60), max_value=10**60).map(Fraction),
        st.integers(min_value=0, max_value=10**400).map(Fraction),  # the largest byte counts
        st.fractions(min_value=-1, max_value=1, max_denominator=10**6),  # -0.00 and friends
    ),
    decimals=st.integers(min_value=0, max_value=30),
)
@example(value=Fraction(-1, 1000), decimals=2)
@example(value=Fraction(1_073_741_824), decimals=0)
@example(value=Fraction(14_000_000_000, 2**30), decimals=2)
@example(value=Fraction(-123_456_789, 100), decimals=2)
def test_format_number_prints_what_babel_prints(lang: str, value: Fraction, decimals: int) -> None:
    assert format_number(value, decimals, lang) == babel_text(value, decimals, lang)


def test_the_generator_refuses_unknown_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert number_symbols.main(["--bogus"]) == 2
    assert "usage" in capsys.readouterr().err
