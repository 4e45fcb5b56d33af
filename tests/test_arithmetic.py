"""The arithmetic core: weights, KV cache and peaks, with properties."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iteragpu.core.kv_cache import KVCacheSpec, kv_cache_bytes
from iteragpu.core.peaks import two_peaks
from iteragpu.core.weights import estimate_weights

positive = st.integers(min_value=1, max_value=10**6)


def test_four_bit_weights_say_quantization_is_not_counted() -> None:
    assert estimate_weights(7_000_000_000, 4).quantization_not_counted
    assert not estimate_weights(7_000_000_000, 16).quantization_not_counted


def test_fractional_weight_bytes_stay_exact() -> None:
    assert estimate_weights(7, 4).weights_bytes == Fraction(7, 2)


@pytest.mark.parametrize(
    ("parameters", "bits", "reserve"),
    [(0, 16, 0), (-1, 16, 0), (7, 0, 0), (7, -4, 0), (7, 16, -1), (True, 16, 0), (7.5, 16, 0)],
)
def test_weights_reject_bad_input(parameters, bits, reserve) -> None:
    with pytest.raises(ValueError):
        estimate_weights(parameters, bits, reserve)


@given(positive, st.integers(min_value=1, max_value=64), st.integers(min_value=0, max_value=100))
def test_weights_grow_with_parameters_bits_and_reserve(parameters, bits, reserve) -> None:
    base = estimate_weights(parameters, bits, reserve)
    assert estimate_weights(parameters + 1, bits, reserve).total_bytes > base.total_bytes
    assert estimate_weights(parameters, bits + 1, reserve).total_bytes > base.total_bytes
    assert estimate_weights(parameters, bits, reserve + 1).total_bytes > base.total_bytes


def test_sliding_window_keeps_the_smaller_of_tokens_and_window() -> None:
    full = kv_cache_bytes(32, 8, 128, 8192, 2)
    assert kv_cache_bytes(32, 8, 128, 8192, 2, window=4096) == full / 2
    assert kv_cache_bytes(32, 8, 128, 8192, 2, window=16384) == full


def test_static_cache_allocates_its_maximum() -> None:
    spec = KVCacheSpec(32, 8, 128, tokens=1000, bytes_per_value=Fraction(2), static_max_tokens=8192)
    assert spec.tokens_kept == 8192
    assert spec.kv_cache_bytes == kv_cache_bytes(32, 8, 128, 8192, 2)
    with pytest.raises(ValueError):
        KVCacheSpec(32, 8, 128, tokens=9000, bytes_per_value=Fraction(2), static_max_tokens=8192)


def test_quantized_cache_may_hold_fractional_bytes_per_value() -> None:
    assert kv_cache_bytes(1, 1, 1, 3, Fraction(1, 2)) == Fraction(3)  # 2 x 3 x 0.5
    assert kv_cache_bytes(1, 1, 1, 1, Fraction(1, 2)) == 1


def test_kv_heads_not_query_heads() -> None:
    # A grouped-query model with 32 query heads and 8 KV heads: sizing from query heads is 4x off.
    assert kv_cache_bytes(32, 32, 128, 8192, 2) == 4 * kv_cache_bytes(32, 8, 128, 8192, 2)


@given(positive, positive, positive, positive, positive, positive)
def test_kv_bytes_are_linear_in_tokens_and_sequences(layers, heads, dim, tokens, seqs, k) -> None:
    base = kv_cache_bytes(layers, heads, dim, tokens, 2, seqs)
    assert kv_cache_bytes(layers, heads, dim, tokens * k, 2, seqs) == k * base
    assert kv_cache_bytes(layers, heads, dim, tokens, 2, seqs * k) == k * base
    assert kv_cache_bytes(layers + 1, heads, dim, tokens, 2, seqs) > base
    assert kv_cache_bytes(layers, heads + 1, dim, tokens, 2, seqs) > base
    assert kv_cache_bytes(layers, heads, dim + 1, tokens, 2, seqs) > base


@pytest.mark.parametrize(
    "field", ["layers", "kv_heads", "head_dim", "tokens", "sequences", "window"]
)
@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_kv_rejects_non_positive_or_non_whole_dimensions(field, bad) -> None:
    values = {"layers": 32, "kv_heads": 8, "head_dim": 128, "tokens": 8192, "sequences": 1}
    values[field] = bad
    with pytest.raises(ValueError):
        KVCacheSpec(bytes_per_value=Fraction(2), **values)


def test_peaks_from_readings() -> None:
    report = two_peaks([(8, 10), (6, 12)])
    assert (report.allocated_peak_bytes, report.reserved_peak_bytes) == (8, 12)
    assert report.differences_at_instants_bytes == (2, 6)
    assert not report.difference_of_peaks_observed
    assert two_peaks([(8, 12), (6, 7)]).difference_of_peaks_observed


@pytest.mark.parametrize("readings", [[], [(-1, 2)], [(3, 2)]])
def test_peaks_reject_impossible_readings(readings) -> None:
    with pytest.raises(ValueError):
        two_peaks(readings)
