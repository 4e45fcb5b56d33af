"""The units module against pint, which knows nothing of our tables."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iteragpu import units
from iteragpu.lab import mesure_memoire

PINT_NAMES = {
    "B": "byte",
    "kB": "kilobyte",
    "MB": "megabyte",
    "GB": "gigabyte",
    "TB": "terabyte",
    "PB": "petabyte",
    "KiB": "kibibyte",
    "MiB": "mebibyte",
    "GiB": "gibibyte",
    "TiB": "tebibyte",
    "PiB": "pebibyte",
    "bit": "bit",
    "kb": "kilobit",
    "Mb": "megabit",
    "Gb": "gigabit",
    "Tb": "terabit",
}


@pytest.mark.parametrize("symbol", sorted(units.BYTES_PER_UNIT))
def test_every_unit_matches_pint(symbol: str, ureg) -> None:
    expected = ureg.Quantity(1, PINT_NAMES[symbol]).to("byte").magnitude
    assert units.bytes_per(symbol) == Fraction(expected)


def test_gb_and_gib_definitions() -> None:
    assert units.bytes_per("GB") == 10**9
    assert units.bytes_per("GiB") == 2**30 == 1_073_741_824
    assert units.bytes_per("GB") != units.bytes_per("GiB")


def test_lab_script_shares_the_constants() -> None:
    assert units.bytes_per("GB") == mesure_memoire.BYTES_PER_GB
    assert units.bytes_per("GiB") == mesure_memoire.BYTES_PER_GIB


def test_pint_reads_gb_lowercase_b_as_gilbert_but_we_do_not(ureg) -> None:
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
    byte_count=st.integers(min_value=0, max_value=2**70),
    unit=st.sampled_from(["GB", "GiB", "MiB", "TB"]),
)
def test_conversion_agrees_with_pint(byte_count: int, unit: str, ureg) -> None:
    ours = units.to_unit(byte_count, unit)
    theirs = ureg.Quantity(byte_count, "byte").to(PINT_NAMES[unit]).magnitude
    assert float(ours) == pytest.approx(theirs, rel=1e-12)


@given(
    st.fractions(min_value=-(10**6), max_value=10**6, max_denominator=10**6),
    st.integers(min_value=0, max_value=6),
)
def test_round_half_up_is_within_half_a_unit(value: Fraction, decimals: int) -> None:
    rounded = Fraction(units.round_half_up(value, decimals))
    assert abs(rounded - value) <= Fraction(1, 2 * 10**decimals)


def test_round_half_up_keeps_every_digit_of_huge_values() -> None:
    assert str(units.round_half_up(Fraction(10**40 + 1), 0)) == str(10**40 + 1)


def test_round_half_up_rounds_halves_away_from_zero() -> None:
    assert str(units.round_half_up(Fraction(1305, 100), 1)) == "13.1"
    assert str(units.round_half_up(Fraction(-1305, 100), 1)) == "-13.1"
