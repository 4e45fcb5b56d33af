"""`iteragpu.parallel.fit`: the answer solved backwards, put back into the split planner
(`plan_split`, what `iteragpu model --runtime` states): it fits, and one more block, cell or
sequence does not. vLLM's exact answers are set against its own block counts
(`vllm_kv_cases.json`, computed by vLLM 0.34.0's planning functions).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from models.published_configs import LLAMA_3_8B
from parallel.test_llamacpp_rules import write_gguf

from iteragpu.core.numbers import InputError
from iteragpu.parallel import llamacpp_rules, vllm_rules
from iteragpu.parallel.fit import FitRequest, fit
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitRequest

H100 = 85_520_809_984  # the catalogue's declared bytes of an H100 80 GB
GIB = 2**30


def folder(tmp_path: Path, name: str = "m", **changes: Any) -> str:
    values = {**LLAMA_3_8B, **changes}
    path = tmp_path / name
    path.mkdir()
    (path / "config.json").write_text(json.dumps(values), "utf-8")
    return str(path)


def _budget(capacity: int, utilization: str) -> int:
    return vllm_rules.requested_memory(capacity, utilization)


def _vllm_holds(path: str, tokens: int, sequences: int, tp: int, capacity: int, util: str) -> bool:
    """The planner's ranks for `tokens` x `sequences`: whole blocks of 64 tokens, plus the
    null block vLLM holds back, within the card's share, on every rank."""
    plan = plan_split(SplitRequest(path, tokens, sequences, "vllm", tp))
    budget = _budget(capacity, util)
    return all(
        r.total_bytes + r.kv_bytes_per_token * vllm_rules.BLOCK_SIZE <= budget for r in plan.ranks
    )


@pytest.mark.parametrize(("capacity", "util"), [(H100, "1.0"), (24 * 10**9, "1.0"), (H100, "0.5")])
def test_vllm_longest_context_fits_and_one_block_more_does_not(
    tmp_path: Path, capacity: int, util: str
) -> None:
    path = folder(tmp_path, max_position_embeddings=10**7)
    answer = fit(FitRequest(path, "vllm", capacity, utilization=util))
    assert answer.limited_by == "memory" and answer.tokens % 64 == 0
    assert _vllm_holds(path, answer.tokens, 1, 1, capacity, util)
    assert not _vllm_holds(path, answer.tokens + 1, 1, 1, capacity, util)
    assert not _vllm_holds(path, answer.tokens + 64, 1, 1, capacity, util)
    # the blocks the answer states are the budget's, less the null one, in whole requests
    blocks = answer.blocks
    assert blocks is not None and blocks[0] == blocks[1]
    assert answer.tokens == 64 * (blocks[0] - 1)


def test_vllm_most_sequences_fit_and_one_more_does_not(tmp_path: Path) -> None:
    path = folder(tmp_path)
    answer = fit(FitRequest(path, "vllm", 24 * 10**9, tokens=8192))
    s = answer.sequences
    assert s > 1 and answer.solved == ("sequences", "tp")
    assert _vllm_holds(path, 8192, s, 1, 24 * 10**9, "1.0")
    assert not _vllm_holds(path, 8192, s + 1, 1, 24 * 10**9, "1.0")
    assert dict(answer.flags)["--max-num-seqs"] == str(s)


def test_vllm_stops_at_the_models_positions(tmp_path: Path) -> None:
    llama3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    # 131,072 positions with llama3's RoPE, which vLLM takes as already scaled
    path = folder(tmp_path, max_position_embeddings=131072, rope_scaling=llama3)
    answer = fit(FitRequest(path, "vllm", H100))
    assert (answer.tokens, answer.limited_by, answer.positions) == (131072, "positions", 131072)
    # a linear RoPE factor scales the positions, as vLLM derives its longest length
    linear = folder(
        tmp_path, "lin", max_position_embeddings=4096, rope_scaling={"type": "linear", "factor": 2}
    )
    assert fit(FitRequest(linear, "vllm", H100)).positions == 8192


def test_vllm_smallest_tp_and_the_weakest_rank(tmp_path: Path) -> None:
    path = folder(tmp_path)
    unknown = fit(FitRequest(path, "vllm", H100))
    assert unknown.positions is None and "positions_unknown" in unknown.notes
    answer = fit(FitRequest(path, "vllm", 20 * 10**9, gpus=8, tokens=32768, sequences=8))
    # 8 x 32,768 tokens of 131,072 B: 32 GiB of cache; TP 2 leaves 16 GiB on each rank
    # beside 7.5 GiB of weights, above 20e9 B; TP 4 is the smallest that holds it
    assert answer.tp == 4 and "tp" in answer.solved
    assert dict(answer.flags)["--tensor-parallel-size"] == "4"
    assert _vllm_holds(path, 32768, 8, 4, 20 * 10**9, "1.0")
    assert not _vllm_holds(path, 32768, 8, 2, 20 * 10**9, "1.0")
    # TP 3 does not divide 32 heads: vLLM refuses it, and an impossible split is refused
    with pytest.raises(InputError) as refused:
        fit(FitRequest(path, "vllm", 20 * 10**9, gpus=3, tp=3))
    assert refused.value.reason == "vllm_heads_not_divisible"


def test_vllm_pipeline_stages_keep_the_weakest_count(tmp_path: Path) -> None:
    path = folder(tmp_path)
    answer = fit(FitRequest(path, "vllm", 12 * 10**9, pp=3, gpus=3))
    plan = plan_split(SplitRequest(path, 1, 1, "vllm", 1, 3))
    budget = _budget(12 * 10**9, "1.0")
    counts = [(budget - r.fixed_bytes) // (r.kv_bytes_per_token * 64) for r in plan.ranks]
    assert answer.blocks == (min(counts), min(counts)) and len(set(counts)) > 1
    assert dict(answer.flags)["--pipeline-parallel-size"] == "3"


def test_kv_dtype_auto_keeps_the_most_precise_that_fits(tmp_path: Path) -> None:
    path = folder(tmp_path)
    roomy = fit(FitRequest(path, "vllm", 24 * 10**9, tokens=8192, kv_dtype="auto"))
    assert roomy.kv_dtype == "auto" and roomy.alternatives[0][0] == "fp8"
    assert roomy.alternatives[0][2] >= 2 * roomy.sequences - 1  # one byte per value
    tight = fit(FitRequest(path, "vllm", 24 * 10**9, tokens=100_000, kv_dtype="auto"))
    assert tight.kv_dtype == "fp8" and dict(tight.flags)["--kv-cache-dtype"] == "fp8"


CASE_LAYOUTS = {  # case of vllm_kv_cases.json -> (layers, kv heads, head_dim): its block bytes
    14: (1, 4, 128),
    15: (8, 4, 128),
    29: (5, 2, 64),
    45: (4, 8, 64),
}


@pytest.mark.parametrize("index", sorted(CASE_LAYOUTS))
def test_vllm_exact_blocks_hold_vllms_own_count(tmp_path: Path, index: int) -> None:
    cases = json.loads((Path(__file__).parent / "vllm_kv_cases.json").read_text("utf-8"))
    case = cases[index]
    layers, kv_heads, head_dim = CASE_LAYOUTS[index]
    path = folder(
        tmp_path,
        num_hidden_layers=layers,
        num_key_value_heads=kv_heads,
        num_attention_heads=kv_heads,
        hidden_size=kv_heads * head_dim,
        head_dim=head_dim,
        max_position_embeddings=case["max_model_len"],
    )
    # the figure vLLM would print for the case's available bytes
    printed = vllm_rules.format_gib(case["available"][0])
    tokens = None if case["auto"] else case["max_model_len"]
    answer = fit(
        FitRequest(
            path,
            "vllm",
            H100,
            tokens=tokens,
            sequences=1,
            sizing="profiled",
            available_kv=(printed,),
        )
    )
    assert answer.exact and answer.blocks is not None
    theirs = case["vllm"]
    # The printed GiB is rounded to 0.01 (about 10.7 MB), more than a block of these layouts:
    # the answer is the range the rounding leaves, and vLLM's own figures lie inside it.
    assert answer.blocks[0] <= theirs["num_blocks"] <= answer.blocks[1]
    assert answer.cache_tokens is not None and answer.concurrency is not None
    assert answer.cache_tokens[0] <= theirs["cache_tokens"] <= answer.cache_tokens[1]
    low, high = (Fraction(text) for text in answer.concurrency)
    assert low <= Fraction(theirs["concurrency"]) <= high
    # The context answered is the one every count of the range holds: at most vLLM's.
    assert answer.tokens <= theirs["max_model_len"]
    if not case["auto"]:
        assert answer.tokens == theirs["max_model_len"]


def test_the_extensible_cache_is_never_called_exact(tmp_path: Path) -> None:
    path = folder(tmp_path)
    answer = fit(FitRequest(path, "vllm", H100, tokens=8192, available_kv=("55.27",)))
    assert not answer.exact and "vllm_extensible_measures_again" in answer.notes
    assert answer.to_measure  # still an upper bound


def _llama_holds(path: str, per_slot: int, slots: int, gpus: int, capacity: int) -> bool:
    plan = plan_split(
        SplitRequest(
            path, per_slot * slots, 1, "llama.cpp", 1, gpus, parallel=slots, reserve_gib=Fraction(1)
        )
    )
    return all(r.total_bytes <= capacity for r in plan.ranks)


def test_llamacpp_longest_context_in_256_cells(tmp_path: Path) -> None:
    path = str(write_gguf(tmp_path / "m.gguf", context_length=10**6))
    capacity = GIB + 40 * 2**20  # 1 GiB reserve + 40 MiB
    answer = fit(FitRequest(path, "llama.cpp", capacity, sequences=3))
    assert answer.tokens % 256 == 0 and answer.limited_by == "memory"
    assert _llama_holds(path, answer.tokens, 3, 1, capacity)
    assert not _llama_holds(path, answer.tokens + 256, 3, 1, capacity)
    flags = dict(answer.flags)
    assert flags["-c"] == str(answer.tokens * 3) and flags["-np"] == "3"
    assert flags["-ngl"] == "5" and flags["-ctk"] == flags["-ctv"] == "f16"
    # the cells llama.cpp allocates for those flags are exactly the answer's
    assert llamacpp_rules.allocated_tokens(answer.tokens * 3, 3) == answer.tokens * 3


def test_llamacpp_two_gpus_and_the_training_context(tmp_path: Path) -> None:
    path = str(write_gguf(tmp_path / "m.gguf", context_length=4096))
    answer = fit(FitRequest(path, "llama.cpp", 2 * GIB, gpus=2, kv_dtype="auto"))
    assert (answer.tokens, answer.limited_by, answer.kv_dtype) == (4096, "positions", "f16")
    assert dict(answer.flags)["-ts"] == "1,1"
    with pytest.raises(InputError) as above:
        fit(FitRequest(path, "llama.cpp", 2 * GIB, tokens=8192))
    assert above.value.reason == "fit_above_positions"


def test_llamacpp_offloads_fewer_layers_when_all_do_not_fit(tmp_path: Path) -> None:
    path = str(write_gguf(tmp_path / "m.gguf", context_length=4096))
    plan = plan_split(SplitRequest(path, 256, 1, "llama.cpp", gpu_layers=5))
    layer = plan.ranks[0].weights_bytes // 5  # about one layer's bytes
    capacity = int(GIB + plan.ranks[0].weights_bytes - 2 * layer)
    answer = fit(FitRequest(path, "llama.cpp", capacity, tokens=256))
    assert "gpu_layers" in answer.solved and answer.gpu_layers is not None
    assert answer.gpu_layers < 5
    assert dict(answer.flags)["-ngl"] == str(answer.gpu_layers)

    def holds(gpu_layers: int) -> bool:  # llama.cpp's plan with 1 GiB kept free, as fit keeps
        request = SplitRequest(
            path, 256, 1, "llama.cpp", gpu_layers=gpu_layers, reserve_gib=Fraction(1)
        )
        return all(r.total_bytes <= capacity for r in plan_split(request).ranks)

    # the most layers that fit: one more does not
    assert holds(answer.gpu_layers) and not holds(answer.gpu_layers + 1)


def test_transformers_sliding_layers_and_the_planner(tmp_path: Path) -> None:
    path = folder(
        tmp_path,
        model_type="qwen2",
        use_sliding_window=True,
        sliding_window=4096,
        max_window_layers=16,
        max_position_embeddings=10**6,
    )
    answer = fit(FitRequest(path, "transformers", 24 * 10**9))
    assert answer.command is None and answer.flags == ()

    def holds(tokens: int) -> bool:
        plan = plan_split(SplitRequest(path, tokens, 1, "transformers"))
        return all(r.total_bytes <= 24 * 10**9 for r in plan.ranks)

    assert holds(answer.tokens) and not holds(answer.tokens + 1)


def test_bad_requests_end_in_one_refusal(tmp_path: Path) -> None:
    path = folder(tmp_path, max_position_embeddings=131072)
    cases = [
        (FitRequest(path, "vllm", 8 * 10**9), "fit_does_not_fit"),
        (FitRequest(path, "vllm", H100, tokens=200_000), "fit_above_positions"),
        (FitRequest(path, "vllm", H100, tp=4, gpus=2), "fit_more_than_gpus"),
        (FitRequest(path, "vllm", H100, utilization="1.5"), "fit_bad_utilization"),
        (FitRequest(path, "transformers", H100, utilization="0.9"), "fit_vllm_option"),
        (FitRequest(path, "vllm", H100, available_kv=("1.0", "2.0")), "fit_available_count"),
    ]
    for request, reason in cases:
        with pytest.raises(InputError) as refused:
            fit(request)
        assert refused.value.reason == reason, request
