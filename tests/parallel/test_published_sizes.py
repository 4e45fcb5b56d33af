"""The splits the guides state at published sizes (the presets of `iteragpu model`, with
Llama-3-8B's and Llama-3-70B's shapes), held to what is known without the split's own code: the
single-GPU figures of `iteragpu.models` (proved against Transformers by `nox -s models`), the
norms' sizes from the config, and vLLM's KV rule as the issue quotes it."""

from __future__ import annotations

from fractions import Fraction

import pytest

from iteragpu.models.model import size_model
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitError, SplitRequest

TOKENS = 8192


def _plan(name: str, runtime: str, **options: object) -> object:
    return plan_split(SplitRequest(name, TOKENS, runtime=runtime, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize("runtime", ["transformers", "vllm"])
def test_one_gpu_is_the_single_gpu_sizing(runtime: str) -> None:
    single = size_model("llama-3.1-8b", tokens=TOKENS)
    rank = _plan("llama-3.1-8b", runtime).ranks[0]  # type: ignore[attr-defined]
    assert rank.weights_bytes == single.weights.byte_count
    assert rank.kv_cache_bytes == single.kv.kv_cache_bytes


@pytest.mark.parametrize("runtime", ["transformers", "vllm"])
def test_llama_3_8b_at_tp_2_and_8(runtime: str) -> None:
    single = size_model("llama-3.1-8b", tokens=TOKENS)
    hidden, layers = 4096, 32
    norms = (2 * layers + 1) * hidden * 2  # two RMSNorms a layer and the final one, bfloat16
    assert norms == 532_480
    for tp in (2, 8):
        plan = _plan("llama-3.1-8b", runtime, tp=tp)
        for rank in plan.ranks:  # type: ignore[attr-defined]
            # everything but the norms is cut evenly (vocabulary 128,256 divides by 2 and 8)
            assert rank.weights_bytes == (single.weights.byte_count - norms) / tp + norms
            assert rank.weights_replicated_bytes == norms
            assert rank.kv_cache_bytes == single.kv.kv_cache_bytes / tp
    # the figure: 266,240 B per rank above an even split at TP 2
    assert norms - Fraction(norms, 2) == 266_240


def test_llama_3_70b_at_tp_16_replicates_kv_heads() -> None:
    single = size_model("llama-3.1-70b", tokens=TOKENS)
    kv_heads = 8
    eight = _plan("llama-3.1-70b", "vllm", tp=8).ranks  # type: ignore[attr-defined]
    sixteen = _plan("llama-3.1-70b", "vllm", tp=16).ranks  # type: ignore[attr-defined]
    # max(1, 8 // 16) = 1 KV head per rank: the same cache as at TP 8
    per_head = single.kv.kv_cache_bytes / kv_heads
    assert {r.kv_cache_bytes for r in eight} == {r.kv_cache_bytes for r in sixteen} == {per_head}
    # Transformers: 8 KV heads on 16 ranks load, then fail in the forward pass: refused
    with pytest.raises(SplitError) as refused:
        _plan("llama-3.1-70b", "transformers", tp=16)
    assert refused.value.reason == "transformers_heads_not_divisible"
