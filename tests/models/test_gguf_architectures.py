"""GGUF metadata of each architecture llama.cpp describes, as its converter writes it: the KV
cache read from the file equals the KV cache of the same sizes read from a config.json, per
layer kind; a file whose metadata lacks what the KV needs is refused in one line.

The metadata keys are the ones convert_hf_to_gguf.py writes for the architecture (block_count,
embedding_length, head counts, key/value lengths from head_dim, the expert counts, and the
architecture's own keys: a window, DeepSeek's MLA sizes) and llama.cpp's load_hparams reads
(ggml-org/llama.cpp src/llama-model.cpp at 00342301d01add50835550e8a916f12097d94517)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFWriter

from iteragpu.models.config import FULL, SLIDING
from iteragpu.models.errors import ModelInputError
from iteragpu.models.model import ModelSizing, payload, size_model

TOKENS = 100
HIDDEN, HEADS, KV_HEADS, FFN = 64, 8, 2, 128


def write_gguf(path: Path, arch: str, metadata: dict[str, Any]) -> Path:
    """A file with `{arch}.<key>` metadata (counts as uint32, flags as bool, lists as arrays)
    and one tiny tensor (the weights come from the tensors, not from these sizes)."""
    writer = GGUFWriter(path, arch)
    for key, value in metadata.items():
        name = f"{arch}.{key}"
        if isinstance(value, bool):
            writer.add_bool(name, value)
        elif isinstance(value, int):
            writer.add_uint32(name, value)
        else:
            writer.add_array(name, value)
    writer.add_tensor("token_embd.weight", np.zeros((10, HIDDEN), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def base_metadata(layers: int = 4) -> dict[str, Any]:
    return {
        "block_count": layers,
        "embedding_length": HIDDEN,
        "feed_forward_length": FFN,
        "attention.head_count": HEADS,
        "attention.head_count_kv": KV_HEADS,
    }


def base_config(model_type: str, layers: int = 4) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "num_hidden_layers": layers,
        "hidden_size": HIDDEN,
        "intermediate_size": FFN,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "torch_dtype": "bfloat16",
    }


def head_dim(size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The converter writes a config's head_dim as key_length and value_length."""
    return {"attention.key_length": size, "attention.value_length": size}, {"head_dim": size}


def experts(count: int = 4, used: int = 2) -> dict[str, Any]:
    return {"expert_count": count, "expert_used_count": used}


KEY16, HD16 = head_dim(16)
# arch, layers, metadata beyond base_metadata, HF model_type, config keys beyond base_config
CASES: list[tuple[str, int, dict[str, Any], str, dict[str, Any]]] = [
    ("llama", 4, KEY16, "llama", HD16),
    ("llama", 4, {**KEY16, **experts()}, "mixtral", {**HD16, "num_local_experts": 4}),
    ("qwen2", 4, {}, "qwen2", {}),
    ("qwen2moe", 4, {**experts(), "expert_feed_forward_length": 32}, "qwen2_moe", {}),
    ("qwen3", 4, KEY16, "qwen3", HD16),
    (
        "qwen3moe",
        4,
        {**KEY16, **experts(), "expert_feed_forward_length": 32},
        "qwen3_moe",
        {**HD16, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32},
    ),
    (
        "gemma2",
        4,
        {**KEY16, "attention.sliding_window": 8},
        "gemma2",
        {**HD16, "sliding_window": 8},
    ),
    ("gemma2", 4, KEY16, "gemma2", {**HD16, "sliding_window": 4096}),  # llama.cpp's default
    (
        "gemma3",
        8,
        {**KEY16, "attention.sliding_window": 8},
        "gemma3_text",
        {**HD16, "sliding_window": 8},
    ),
    # llama.cpp turns Phi-3's window off: the config without one.
    ("phi3", 4, {"attention.sliding_window": 8}, "phi3", {}),
    ("phimoe", 4, {**experts()}, "phimoe", {"num_local_experts": 4}),
    (
        "gpt-oss",
        4,
        {**KEY16, **experts(), "attention.sliding_window": 8, "expert_feed_forward_length": FFN},
        "gpt_oss",
        {**HD16, "sliding_window": 8, "num_local_experts": 4},
    ),
    ("command-r", 4, {}, "cohere", {}),
    ("cohere2", 8, {"attention.sliding_window": 8}, "cohere2", {"sliding_window": 8}),
    ("olmo2", 4, {}, "olmo2", {}),
    # Olmo-3 converts as olmo2 with its window and the pattern of its layer_types.
    (
        "olmo2",
        8,
        {
            "attention.sliding_window": 8,
            "attention.sliding_window_pattern": [True, True, True, False] * 2,
        },
        "olmo3",
        {"sliding_window": 8},
    ),
    ("olmoe", 4, experts(), "olmoe", {"num_experts": 4, "num_experts_per_tok": 2}),
    ("granite", 4, {}, "granite", {}),
    ("granitemoe", 4, experts(), "granitemoe", {"num_local_experts": 4}),
    ("starcoder2", 4, {}, "starcoder2", {}),
    ("stablelm", 4, {}, "stablelm", {}),
    (
        "exaone4",
        4,
        {**KEY16, "attention.sliding_window": 8},
        "exaone4",
        {**HD16, "sliding_window": None},
    ),
    (
        "exaone4",
        64,
        {**KEY16, "attention.sliding_window": 8},
        "exaone4",
        {**HD16, "sliding_window": 8},
    ),
    ("smollm3", 4, {}, "smollm3", {}),
    ("glm4", 4, KEY16, "glm4", HD16),
    (
        "glm4moe",
        5,  # four layers and one next-token-prediction block, which holds no KV
        {**KEY16, **experts(), "nextn_predict_layers": 1, "leading_dense_block_count": 1},
        "glm4_moe",
        {
            **HD16,
            "num_hidden_layers": 4,
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "first_k_dense_replace": 1,
        },
    ),
    ("seed_oss", 4, KEY16, "seed_oss", HD16),
    ("ernie4_5", 4, KEY16, "ernie4_5", HD16),
]


def kv_by_kind(sizing: ModelSizing) -> tuple[list[tuple[Any, ...]], Any]:
    groups = sorted(
        (
            g.layout.kind,
            g.layout.window,
            g.layout.layout,
            g.layout.heads,
            g.layout.key_dim,
            g.layout.value_dim,
            g.count,
            g.kv_bytes_per_token,
        )
        for g in sizing.kv.groups
    )
    return groups, sizing.kv.kv_cache_bytes


def from_config(tmp_path: Path, config: dict[str, Any]) -> ModelSizing:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return size_model(folder, tokens=TOKENS, kv_dtype="fp16")


@pytest.mark.parametrize(
    ("arch", "layers", "metadata", "model_type", "config"),
    CASES,
    ids=[f"{c[0]}-{c[3]}-{c[1]}" for c in CASES],
)
def test_kv_from_the_metadata_is_the_configs(
    tmp_path: Path,
    arch: str,
    layers: int,
    metadata: dict[str, Any],
    model_type: str,
    config: dict[str, Any],
) -> None:
    path = write_gguf(tmp_path / "model.gguf", arch, {**base_metadata(layers), **metadata})
    from_file = size_model(path, tokens=TOKENS, kv_dtype="fp16")
    hf = from_config(tmp_path, {**base_config(model_type, layers), **config})
    assert from_file.config.model_type == model_type
    assert from_file.config.layer_kinds == hf.config.layer_kinds
    assert kv_by_kind(from_file) == kv_by_kind(hf)
    assert from_file.weights.source == "gguf"


def test_sliding_patterns_are_llama_cpps(tmp_path: Path) -> None:
    """set_swa_pattern(n): layer il slides when il % n < n - 1 (llama-hparams.cpp)."""
    s, f = SLIDING, FULL
    expected = {
        "gemma2": [s, f] * 4,
        "gpt-oss": [s, f] * 4,
        "cohere2": [s, s, s, f] * 2,
        "gemma3": [s] * 5 + [f, s, s],
    }
    for arch, kinds in expected.items():
        path = write_gguf(
            tmp_path / f"{arch}.gguf", arch, {**base_metadata(8), "attention.sliding_window": 8}
        )
        config = size_model(path, tokens=TOKENS, kv_dtype="fp16").config
        assert list(config.layer_kinds) == kinds, arch
        assert config.sliding_window == 8
    for arch in ("phi3", "starcoder2", "llama", "qwen2"):
        path = write_gguf(
            tmp_path / f"{arch}.gguf", arch, {**base_metadata(8), "attention.sliding_window": 8}
        )
        assert set(size_model(path, tokens=TOKENS, kv_dtype="fp16").config.layer_kinds) == {f}


MLA = {"kv_lora_rank": 16, "q_lora_rank": 24, "qk_rope_head_dim": 8, "qk_nope_head_dim": 12}


def deepseek_metadata(latent: bool = True, gating: int | None = 2) -> dict[str, Any]:
    """DeepseekV2Model's keys: MLA as one KV head of the latent (kv_lora_rank + rope keys,
    kv_lora_rank values) with the per-head sizes in *_mla; older files, per head only."""
    rank, rope, nope, v_head = 16, 8, 12, 10
    metadata = {
        **base_metadata(4),
        **experts(),
        "attention.kv_lora_rank": rank,
        "attention.q_lora_rank": 24,
        "rope.dimension_count": rope,
        "expert_shared_count": 1,
        "expert_feed_forward_length": 32,
        "leading_dense_block_count": 1,
    }
    if latent:
        metadata |= {
            "attention.head_count_kv": 1,
            "attention.key_length": rank + rope,
            "attention.value_length": rank,
            "attention.key_length_mla": nope + rope,
            "attention.value_length_mla": v_head,
        }
    else:
        metadata |= {
            "attention.head_count_kv": HEADS,
            "attention.key_length": nope + rope,
            "attention.value_length": v_head,
        }
    if gating is not None:
        metadata["expert_gating_func"] = gating
    return metadata


def deepseek_config(model_type: str) -> dict[str, Any]:
    return {
        **base_config(model_type),
        "num_key_value_heads": HEADS,
        **MLA,
        "v_head_dim": 10,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_shared_experts": 1,
        "moe_intermediate_size": 32,
        "first_k_dense_replace": 1,
    }


def test_deepseek2_mla_caches_the_latent_as_keys_and_again_as_values(tmp_path: Path) -> None:
    """llama.cpp at the pinned commit (src/llama-model.cpp, llm_build_deepseek2, `is_mla`
    branch): Kcur = the rotary key and the latent (one KV head of key_length = kv_lora_rank +
    qk_rope_head_dim), Vcur = the latent (value_length = kv_lora_rank), both stored through
    build_attn_inp_kv(): the KV cache allocates a V cache for MLA layers (the V-less cache,
    ggml-org/llama.cpp#19067, came later). Transformers caches the latent once."""
    rank, rope = 16, 8
    path = write_gguf(tmp_path / "ds.gguf", "deepseek2", deepseek_metadata(latent=True))
    from_file = size_model(path, tokens=TOKENS, kv_dtype="fp16")
    hf = from_config(tmp_path, deepseek_config("deepseek_v3"))
    assert from_file.config.model_type == "deepseek_v3"  # sigmoid router
    assert from_file.config.mla == hf.config.mla
    (group,) = from_file.kv.groups
    layout = group.layout
    assert (layout.layout, layout.heads, layout.key_dim, layout.value_dim) == (
        "mla_latent_kv",
        1,
        rank + rope,
        rank,
    )
    assert from_file.kv.kv_cache_bytes == 4 * (2 * rank + rope) * TOKENS * 2
    # Against Transformers' latent of the same sizes: the keys are its cache, the values more.
    (latent,) = hf.kv.groups
    assert latent.layout.values_per_token == rank + rope
    assert layout.values_per_token == latent.layout.values_per_token + rank
    assert from_file.mla_alternative is None  # the file fixes llama.cpp's layout
    data = payload(from_file)
    assert "mla_llama_cpp_latent" in data["caveats"] and "mla_latent" not in data["caveats"]
    # --mla-layout does not change what llama.cpp caches.
    other = size_model(path, tokens=TOKENS, kv_dtype="fp16", mla_layout="mla_per_head")
    assert other.kv.kv_cache_bytes == from_file.kv.kv_cache_bytes


def test_deepseek2_without_mla_sizes_caches_keys_and_values_per_head(tmp_path: Path) -> None:
    """An older conversion (no *_mla keys): llama.cpp runs plain attention over head_count_kv
    heads of key_length and value_length (the `else` branch), Transformers' per-head layout."""
    path = write_gguf(tmp_path / "ds.gguf", "deepseek2", deepseek_metadata(latent=False))
    from_file = size_model(path, tokens=TOKENS, kv_dtype="fp16")
    hf = from_config(tmp_path, deepseek_config("deepseek_v3"))
    per_head = hf.mla_alternative
    assert per_head is not None
    assert [g.layout for g in from_file.kv.groups] == [g.layout for g in per_head.groups]
    # qk_nope 12 + qk_rope 8 key values and v_head_dim 10 value values, per head.
    expected = 4 * HEADS * (20 + 10) * TOKENS * 2
    assert from_file.kv.kv_cache_bytes == per_head.kv_cache_bytes == expected
    assert from_file.mla_alternative is None
    assert "mla_llama_cpp_per_head" in payload(from_file)["caveats"]


def test_deepseek2_without_q_lora_and_softmax_router_is_v2(tmp_path: Path) -> None:
    metadata = deepseek_metadata(gating=None)
    del metadata["attention.q_lora_rank"]
    path = write_gguf(tmp_path / "lite.gguf", "deepseek2", metadata)
    from_file = size_model(path, tokens=TOKENS, kv_dtype="fp16")
    hf = from_config(tmp_path, {**deepseek_config("deepseek_v2"), "q_lora_rank": None})
    assert from_file.config.model_type == "deepseek_v2"
    assert from_file.config.mla is not None and from_file.config.mla.q_lora_rank is None
    assert from_file.config.mla == hf.config.mla


def refused(path: Path, match: str) -> str:
    with pytest.raises(ModelInputError, match=match) as caught:
        size_model(path, tokens=TOKENS, kv_dtype="fp16")
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_refusals_name_the_key_in_one_line(tmp_path: Path) -> None:
    gemma3 = write_gguf(tmp_path / "g3.gguf", "gemma3", base_metadata(8))
    refused(gemma3, r"no gemma3\.attention\.sliding_window")
    gpt_oss = write_gguf(tmp_path / "oss.gguf", "gpt-oss", base_metadata(4))
    refused(gpt_oss, r"no gpt-oss\.attention\.sliding_window")

    metadata = deepseek_metadata()
    del metadata["attention.kv_lora_rank"]
    deepseek = write_gguf(tmp_path / "ds.gguf", "deepseek2", metadata)
    refused(deepseek, r"no deepseek2\.attention\.kv_lora_rank")
    metadata = deepseek_metadata()
    del metadata["rope.dimension_count"]
    deepseek = write_gguf(tmp_path / "ds-rope.gguf", "deepseek2", metadata)
    refused(deepseek, r"no deepseek2\.rope\.dimension_count")
    metadata = deepseek_metadata() | {"attention.value_length": 12}
    deepseek = write_gguf(tmp_path / "ds-latent.gguf", "deepseek2", metadata)
    refused(deepseek, r"deepseek2\.attention\.key_length does not agree")

    per_layer = {**base_metadata(4), "attention.head_count_kv": [2, 2, 1, 2]}
    for arch in ("qwen3moe", "cohere2", "deepseek2"):
        path = write_gguf(tmp_path / f"{arch}-layers.gguf", arch, per_layer)
        refused(path, rf"{arch}\.attention\.head_count_kv differs between layers")

    # A pattern other than the one llama.cpp sets for the architecture is not what it runs.
    pattern = {"attention.sliding_window": 8, "attention.sliding_window_pattern": [True, False] * 4}
    gemma3 = write_gguf(tmp_path / "g3-pattern.gguf", "gemma3", {**base_metadata(8), **pattern})
    refused(gemma3, r"gemma3\.attention\.sliding_window_pattern does not agree")

    message = refused(
        write_gguf(tmp_path / "rwkv.gguf", "rwkv6", base_metadata(4)), "GGUF architecture"
    )
    assert "deepseek2" in message and "gpt-oss" in message and "mamba" in message


def test_same_per_layer_counts_read_as_one(tmp_path: Path) -> None:
    metadata = {
        **base_metadata(4),
        "attention.head_count": [8] * 4,
        "feed_forward_length": [128, 64, 64, 64],
    }
    path = write_gguf(tmp_path / "layers.gguf", "llama", metadata)
    config = size_model(path, tokens=TOKENS, kv_dtype="fp16").config
    assert (config.heads, config.kv_heads) == (8, 2)
