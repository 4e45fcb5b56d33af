"""vLLM 0.34.0's cache sizing, as its own code answers it: the blocks each rank's memory buys,
the weakest rank's count for every rank, the null block, the check of `max_model_len` (and its
refusal), `--max-model-len auto`, and the "GPU KV cache size" and "Maximum concurrency" figures.

`vllm_kv_cases.json` holds 48 cases (generated block sizes, PP stages, per-rank block bytes,
available memory, lengths, auto-fit or not) answered by vLLM's own functions, imported from the
sdist `vllm-0.34.0.tar.gz` (sha256 fcad848b...0113) on CPU in this session:
`get_global_kv_cache_groups` and `get_kv_cache_configs` (v1/core/kv_cache_planning.py, with
its default `DefaultKVCacheConfigBuilder` and real `FullAttentionSpec` pages),
`generate_scheduler_kv_cache_config` and `get_kv_cache_capacity` (v1/core/kv_cache_utils.py).
The same harness ran 600 further random cases (393 refused, 223 auto-fit) against
`iteragpu.parallel.vllm_rules` with no difference, `utils/mem_utils.format_gib` over 20,000
random byte counts, and `v1/worker/utils.request_memory` for 20 totals and utilizations
(the session's report). vLLM is not installed here: the answers are pinned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from iteragpu.parallel import vllm_rules as rules

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "vllm_kv_cases.json").read_text("utf-8")
)


def _answer(case: dict[str, Any]) -> dict[str, Any]:
    """What `vllm_rules` says of one case, in the shape vLLM's answer was recorded."""
    block = case["block_size"]
    blocks = rules.gpu_blocks(case["available"], case["block_bytes"])
    length = case["max_model_len"]
    if case["auto"]:
        # --max-model-len auto: the longest length whose blocks fit beside the null block,
        # at most the model's own
        if blocks - 1 < 1:
            return {"status": "refused"}
        length = min(length, block * (blocks - 1))
    elif blocks < 1 or not rules.max_model_len_fits(length, blocks, block):
        return {"status": "refused"}
    return {
        "status": "ok",
        "num_blocks": blocks,
        "max_model_len": length,
        "cache_tokens": rules.cache_size_tokens(blocks, length, block),
        "concurrency": f"{rules.max_concurrency(blocks, length, block):.2f}",
    }


def test_the_cases_cover_refusals_auto_fit_and_several_ranks() -> None:
    statuses = {case["vllm"]["status"] for case in CASES}
    assert statuses == {"ok", "refused"}
    assert any(case["auto"] and case["vllm"]["status"] == "ok" for case in CASES)
    assert any(len(case["block_bytes"]) > 1 and case["vllm"]["status"] == "ok" for case in CASES)
    assert {case["block_size"] for case in CASES} >= {16, 64, 128}


@pytest.mark.parametrize("index", range(len(CASES)))
def test_blocks_length_and_capacity_are_vllms(index: int) -> None:
    case = CASES[index]
    theirs = dict(case["vllm"])
    theirs.pop("message", None)
    assert _answer(case) == theirs


def test_the_refusal_is_the_null_block_short() -> None:
    # A length whose blocks fill every block but the null one still fits; one block more
    # is vLLM's "To serve at least one request with the model's max seq len" refusal.
    assert rules.max_model_len_fits(64 * 9, 10)
    assert not rules.max_model_len_fits(64 * 9 + 1, 10)
    messages = [c["vllm"].get("message", "") for c in CASES if c["vllm"]["status"] == "refused"]
    assert any(m.startswith("To serve at least one request") for m in messages)
    assert any(m.startswith("Cannot auto-fit max_model_len") for m in messages)


def test_the_weakest_rank_decides_every_ranks_blocks() -> None:
    assert rules.gpu_blocks([10 * 100 + 99, 7 * 50], [100, 50]) == 7


# format_gib(b) as vLLM's utils/mem_utils.py printed it for these byte counts.
GIB_TEXTS = [
    (0, "0.0"),
    (5_368_710, "0.01"),
    (5_368_709, "0.0"),
    (1_610_612_736, "1.5"),
    (59_345_086_464, "55.27"),
    (85_520_809_984, "79.65"),
]


@pytest.mark.parametrize(("byte_count", "text"), GIB_TEXTS)
def test_format_gib_prints_as_vllm(byte_count: int, text: str) -> None:
    assert rules.format_gib(byte_count) == text


@pytest.mark.parametrize("text", ["0.01", "1.5", "55.27", "79.65", "140.0"])
def test_a_printed_figure_is_a_range_of_about_ten_megabytes(text: str) -> None:
    first, last = rules.gib_range(text)
    assert rules.format_gib(first) == rules.format_gib(last) == text
    assert rules.format_gib(first - 1) != text and rules.format_gib(last + 1) != text
    assert 10_000_000 < last - first + 1 <= 10_737_419


def test_a_figure_vllm_never_prints_is_refused() -> None:
    with pytest.raises(ValueError, match="no byte count"):
        rules.gib_range("1.005")


# request_memory's math.ceil(total * utilization), as vLLM computed it for these.
REQUESTED = [
    (85_520_809_984, "0.92", 78_679_145_186),
    (85_520_809_984, "1.0", 85_520_809_984),
    (25_757_220_864, "0.9", 23_181_498_778),
    (150_754_820_096, "0.85", 128_141_597_082),
]


@pytest.mark.parametrize(("total", "share", "requested"), REQUESTED)
def test_the_budget_is_a_share_of_the_total(total: int, share: str, requested: int) -> None:
    assert rules.requested_memory(total, share) == requested
