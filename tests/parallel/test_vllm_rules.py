"""vLLM 0.34.0's split rules, each case as vLLM's own code answers it.

The expected values were computed by vLLM's functions themselves, run from the sdist
`vllm-0.34.0.tar.gz` (sha256 fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113):
`get_pp_indices` (vllm/distributed/utils.py, with `VLLM_PP_LAYER_PARTITION` set),
`determine_expert_map` (model_executor/layers/fused_moe/expert_map_manager.py),
`pad_vocab_size` (model_executor/layers/vocab_parallel_embedding.py), `divide`; the
session's cross-check also ran them over 4,000 random layer and stage counts, every expert count
up to 300 on 1 to 32 ranks and every vocabulary up to 300,000 against `iteragpu.parallel`, with
no difference (the report of issue 24). vLLM cannot be installed here, so the cases are pinned.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from iteragpu.parallel import vllm_rules as rules
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import KV_REPLICATED, REPLICATED, VOCAB, SplitError, SplitRequest

# (layers, stages) -> get_pp_indices(layers, rank, stages) for every rank
PP_CASES = {
    (32, 3): [(0, 11), (11, 22), (22, 32)],
    (32, 2): [(0, 16), (16, 32)],
    (34, 4): [(0, 8), (8, 17), (17, 26), (26, 34)],
    (80, 3): [(0, 27), (27, 54), (54, 80)],
    (61, 4): [(0, 15), (15, 30), (30, 46), (46, 61)],
    (7, 4): [(0, 2), (2, 4), (4, 6), (6, 7)],
    (3, 2): [(0, 2), (2, 3)],
    (5, 8): [(0, 0), (0, 0), (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 5)],
}


@pytest.mark.parametrize(("layers", "stages"), list(PP_CASES))
def test_pipeline_stages_are_get_pp_indices(layers: int, stages: int) -> None:
    assert rules.pp_ranges(layers, stages) == PP_CASES[(layers, stages)]


def test_vllm_pp_layer_partition_is_followed_and_checked_in_vllms_order() -> None:
    assert rules.pp_ranges(32, 2, (20, 12)) == [(0, 20), (20, 32)]
    # vLLM: "len(partitions)=3 does not match pp_size=2."
    with pytest.raises(SplitError) as length:
        rules.pp_ranges(32, 2, (10, 10, 10))
    assert length.value.reason == "vllm_partition_length"
    # "Negative layer count in partition_list_str='40,-8'." (its sum, 32, is right)
    with pytest.raises(SplitError) as negative:
        rules.pp_ranges(32, 2, (40, -8))
    assert negative.value.reason == "vllm_partition_negative"
    # the sum is checked before the signs: 40,-7 is a wrong sum for vLLM
    with pytest.raises(SplitError) as total:
        rules.pp_ranges(32, 2, (40, -7))
    assert total.value.reason == "vllm_partition_sum"


def test_experts_leftovers_go_to_the_first_ranks() -> None:
    # determine_expert_map(ep_size, ep_rank, 60)[0] for ranks 0..7
    assert rules.expert_counts(60, 8) == [8, 8, 8, 8, 7, 7, 7, 7]
    assert rules.expert_counts(256, 16) == [16] * 16
    assert rules.expert_counts(10, 4) == [3, 3, 2, 2]


def test_vocabulary_is_padded_to_64() -> None:
    assert [rules.pad_vocab(v) for v in (250, 32000, 32001, 128256, 151936, 151665)] == [
        256,
        32000,
        32064,
        128256,
        151936,
        151680,
    ]


def test_kv_heads_per_rank_replicate_above_the_kv_heads() -> None:
    # max(1, kv // tp): the cache stops shrinking at tp = kv_heads
    assert [rules.kv_heads_per_rank(8, tp) for tp in (1, 2, 4, 8, 16, 32)] == [8, 4, 2, 1, 1, 1]


def test_the_cache_is_whole_blocks_of_64_tokens() -> None:
    assert rules.BLOCK_SIZE == 64
    assert rules.allocated_tokens(8192, 1) == 8192
    assert rules.allocated_tokens(8193, 1) == 8256
    assert rules.allocated_tokens(100, 3) == 384


def _config(folder: Path, **changes: Any) -> str:
    import json

    values = {
        "model_type": "llama",
        "vocab_size": 250,
        "hidden_size": 64,
        "intermediate_size": 96,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "dtype": "bfloat16",
        **changes,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(values), "utf-8")
    return str(folder)


def _plan(path: str, **options: Any) -> Any:
    return plan_split(SplitRequest(path, 100, runtime="vllm", **options))


def test_kv_replication_in_the_plan(tmp_path: Path) -> None:
    path = _config(tmp_path / "m")
    two, four, eight = (_plan(path, tp=tp) for tp in (2, 4, 8))
    # 2 KV heads: at TP 2 one per rank; at TP 4 and 8 still one per rank, copied
    assert two.ranks[0].kv_bytes_per_token == four.ranks[0].kv_bytes_per_token
    assert four.ranks[0].kv_bytes_per_token == eight.ranks[0].kv_bytes_per_token
    assert two.ranks[0].kv_bytes_per_token == 4 * 2 * 8 * 2  # layers x (k+v) x head_dim x 2 B
    hows = {share.how for share in four.ranks[0].tensors if "k_proj" in share.name}
    assert hows == {KV_REPLICATED}
    # 128 padded tokens (two blocks of 64), one sequence
    assert four.ranks[0].kv_tokens == 128
    assert four.ranks[0].kv_cache_bytes == 128 * four.ranks[0].kv_bytes_per_token


def test_vocabulary_padding_and_replicated_norms_in_the_plan(tmp_path: Path) -> None:
    plan = _plan(_config(tmp_path / "m"), tp=2)
    embed = next(s for s in plan.ranks[0].tensors if s.name == "embed_tokens.weight")
    assert (embed.how, embed.elements) == (VOCAB, 128 * 64)  # 250 padded to 256, halved
    norms = [s for s in plan.ranks[0].tensors if "layernorm" in s.name or s.name == "norm.weight"]
    assert {s.how for s in norms} == {REPLICATED}
    assert sum(s.elements for s in norms) == (2 * 4 + 1) * 64
    assert plan.ranks[0].weights_replicated_bytes == (2 * 4 + 1) * 64 * 2


@pytest.mark.parametrize(
    ("changes", "tp", "reason", "quoted"),
    [
        ({}, 3, "vllm_heads_not_divisible", "Total number of attention heads (8)"),
        # the cases: 8 KV heads on 3 or 12 ranks (24 query heads divide by both)
        ({"num_attention_heads": 24, "num_key_value_heads": 8}, 3, "vllm_not_divisible", "= 8 "),
        ({"num_attention_heads": 24, "num_key_value_heads": 8}, 12, "vllm_not_divisible", "= 12 "),
        ({"intermediate_size": 98}, 4, "vllm_not_divisible", "mlp.gate_proj.output_size"),
        ({"vocab_size": 32000, "num_attention_heads": 12}, 12, "vllm_not_divisible", "32000"),
    ],
)
def test_refusals_quote_vllms_rule(
    tmp_path: Path, changes: dict[str, Any], tp: int, reason: str, quoted: str
) -> None:
    values = {"num_attention_heads": 8, **changes}
    hidden = 16 * values["num_attention_heads"]
    path = _config(tmp_path / "m", hidden_size=hidden, **changes)
    with pytest.raises(SplitError) as refused:
        _plan(path, tp=tp)
    assert refused.value.reason == reason
    assert quoted in str(refused.value)


def test_expert_parallel_placement_in_the_plan(tmp_path: Path) -> None:
    path = _config(
        tmp_path / "moe",
        model_type="qwen2_moe",
        num_experts=60,
        num_experts_per_tok=4,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=64,
        num_key_value_heads=8,
        num_hidden_layers=2,
    )
    plan = _plan(path, tp=8, ep=True)
    experts = [
        sum(s.elements for s in r.tensors if s.name.startswith("mlp.experts.")) for r in plan.ranks
    ]
    per_expert = 3 * 64 * 32 * 2  # gate, up and down of one expert, two layers
    assert [e // per_expert for e in experts] == [8, 8, 8, 8, 7, 7, 7, 7]
    assert plan.first_to_fill.rank == 0
    # without EP each rank holds a slice of every expert; more ranks than experts is refused
    sliced = _plan(path, tp=4)
    assert {s.how for s in sliced.ranks[0].tensors if s.name.startswith("mlp.experts.")} == {
        "expert_slices"
    }


def test_mla_latent_cache_is_the_same_on_every_rank(tmp_path: Path) -> None:
    path = _config(
        tmp_path / "mla",
        model_type="deepseek_v3",
        hidden_size=64,
        num_attention_heads=8,
        num_key_value_heads=8,
        num_hidden_layers=3,
        n_routed_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        first_k_dense_replace=1,
        q_lora_rank=32,
        kv_lora_rank=16,
        qk_rope_head_dim=8,
        qk_nope_head_dim=16,
        v_head_dim=16,
        topk_method="noaux_tc",
    )
    one, four = _plan(path, tp=1), _plan(path, tp=4)
    latent = 3 * (16 + 8) * 2  # layers x (kv_lora_rank + rope) x 2 B: no head split
    assert {r.kv_bytes_per_token for r in (*one.ranks, *four.ranks)} == {Fraction(latent)}
    # vLLM's float32 e_score_correction_bias on each layer with experts
    bias = [s for s in four.ranks[0].tensors if s.name.endswith("e_score_correction_bias")]
    assert [(b.layers, b.byte_count) for b in bias] == [(2, 2 * 8 * 4)]


def test_pipeline_stages_hold_the_embeddings_and_the_head(tmp_path: Path) -> None:
    tied = _plan(_config(tmp_path / "t", tie_word_embeddings=True), pp=2)
    untied = _plan(_config(tmp_path / "u"), pp=2)
    names = [{s.name for s in r.tensors if s.section != "layer"} for r in tied.ranks]
    # tied: the last stage builds its own embed_tokens, the head's weights
    assert names == [{"embed_tokens.weight"}, {"embed_tokens.weight", "norm.weight"}]
    names = [{s.name for s in r.tensors if s.section != "layer"} for r in untied.ranks]
    assert names == [{"embed_tokens.weight"}, {"lm_head.weight", "norm.weight"}]
    with_partition = _plan(_config(tmp_path / "p"), pp=2, pp_partition=(3, 1))
    assert [r.layers for r in with_partition.ranks] == [(0, 3), (3, 4)]
