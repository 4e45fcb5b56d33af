"""GGUF files of the architectures whose layers keep a recurrent or convolution state (Mamba,
Mamba-2, Jamba, Falcon-H1, Granite-4.0-H, Qwen3-Next, LFM2) and of Llama 4 and Gemma-3n, as
convert_hf_to_gguf.py writes their metadata, each compared with two things:

- a config.json of the same sizes read by the Transformers side (its recipe's layer rules, its
  states proved against Transformers' real caches by tests/models/test_models_transformers.py):
  the same layer kinds, the same attention KV per kind, and states that hold the same recurrent
  values and, of the convolution, `conv_kernel - 1` of Transformers' `conv_kernel` positions;
- the rule llama.cpp allocates by (ggml-org/llama.cpp at 00342301d01a, src/llama-model.cpp:
  load_hparams for the per-layer recurrent flags and llama.cpp's constants, create_memory for
  the F32 r/s types and Gemma-3n's reuse; src/llama-hparams.cpp's n_embd_r() and n_embd_s(),
  read at 01b77b57), written out per case: r = (d_conv - 1) * (d_inner + 2 * n_group * d_state),
  or n_embd * (l_cache - 1) for LFM2; s = d_state * d_inner; both float32, per sequence.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from test_gguf_architectures import write_gguf

from iteragpu.models.config import CHUNKED, CONV, DUMMY, FULL, HYBRID, LINEAR, SLIDING
from iteragpu.models.errors import ModelInputError
from iteragpu.models.model import ModelSizing, payload, size_model

TOKENS, SEQUENCES = 100, 3
HIDDEN, HEADS, KV_HEADS, HEAD = 64, 8, 2, 16
F32 = 4


def sized(path: Path, tokens: int = TOKENS) -> ModelSizing:
    return size_model(path, tokens=tokens, sequences=SEQUENCES, kv_dtype="fp16")


def from_config(tmp_path: Path, config: dict[str, Any], tokens: int = TOKENS) -> ModelSizing:
    folder = tmp_path / "hf"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return sized(folder, tokens)


def kv_groups(sizing: ModelSizing) -> list[tuple[Any, ...]]:
    return sorted(
        (
            g.layout.kind,
            g.layout.window,
            g.layout.layout,
            g.layout.heads,
            g.layout.key_dim,
            g.layout.value_dim,
            g.count,
            g.kv_cache_bytes,
            g.kv_cache_decoding_bytes,
        )
        for g in sizing.kv.groups
    )


def states(sizing: ModelSizing) -> dict[str, tuple[int, list[tuple[str, int, bool]]]]:
    """Per layer kind: the layers, and each state tensor's elements per sequence and dtype."""
    return {
        g.kind: (g.count, [(t.name, t.elements, t.float32) for t in g.tensors])
        for g in sizing.state.groups
    }


def ssm(conv: int, inner: int, state: int, rank: int, groups: int | None = None) -> dict[str, Any]:
    keys = {
        "ssm.conv_kernel": conv,
        "ssm.inner_size": inner,
        "ssm.state_size": state,
        "ssm.time_step_rank": rank,
    }
    return keys if groups is None else {**keys, "ssm.group_count": groups}


def attention(kv_heads: Any = KV_HEADS, key_length: bool = True) -> dict[str, Any]:
    keys: dict[str, Any] = {"attention.head_count": HEADS, "attention.head_count_kv": kv_heads}
    if key_length:
        keys |= {"attention.key_length": HEAD, "attention.value_length": HEAD}
    return keys


def base(layers: int) -> dict[str, Any]:
    return {"block_count": layers, "embedding_length": HIDDEN}


def hf(model_type: str, layers: int, **keys: Any) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "num_hidden_layers": layers,
        "hidden_size": HIDDEN,
        "torch_dtype": "bfloat16",
        **keys,
    }


HF_ATTENTION = {"num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD}

# arch, GGUF metadata, the config.json of the same sizes, the recurrent layers' kind, and
# llama.cpp's r and s values per recurrent layer and sequence (the cited rule, written out),
# with the convolution kernel.
STATE_CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], str, int, int, int]] = {
    # Mamba-1: n_group is not read (0); d_inner = expand * hidden.
    "mamba": (
        "mamba",
        {**base(4), "attention.head_count": 0, **ssm(4, 128, 16, 4)},
        hf("mamba", 4, expand=2, state_size=16, conv_kernel=4, time_step_rank=4),
        LINEAR,
        (4 - 1) * 128,
        16 * 128,
        4,
    ),
    # Mamba-2: time_step_rank is the SSM heads (d_inner // head_dim), group_count n_groups.
    "mamba2": (
        "mamba2",
        {**base(4), "attention.head_count": 0, **ssm(4, 128, 16, 8, groups=2)},
        hf(
            "mamba2",
            4,
            expand=2,
            num_heads=8,
            head_dim=16,
            state_size=16,
            n_groups=2,
            conv_kernel=4,
        ),
        LINEAR,
        (4 - 1) * (128 + 2 * 2 * 16),
        16 * 128,
        4,
    ),
    # Jamba: a layer is recurrent iff its head_count_kv is 0; the config says the same layers
    # with its period and offset.
    "jamba": (
        "jamba",
        {
            **base(8),
            **attention([0, 0, 0, 0, KV_HEADS, 0, 0, 0], key_length=False),
            **ssm(4, 128, 16, 4),
            "feed_forward_length": 128,
            "expert_count": 4,
            "expert_used_count": 2,
        },
        hf(
            "jamba",
            8,
            num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS,
            attn_layer_period=8,
            attn_layer_offset=4,
            mamba_expand=2,
            mamba_d_state=16,
            mamba_d_conv=4,
            mamba_dt_rank=4,
            intermediate_size=128,
            num_experts=4,
        ),
        LINEAR,
        (4 - 1) * 128,
        16 * 128,
        4,
    ),
    # Falcon-H1: every layer attends and keeps a Mamba-2 state (both filters true).
    "falcon-h1": (
        "falcon-h1",
        {**base(4), **attention(), **ssm(4, 128, 16, 8, groups=1), "feed_forward_length": 128},
        hf(
            "falcon_h1",
            4,
            **HF_ATTENTION,
            mamba_d_ssm=128,
            mamba_n_heads=8,
            mamba_d_head=16,
            mamba_n_groups=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            intermediate_size=128,
        ),
        HYBRID,
        (4 - 1) * (128 + 2 * 1 * 16),
        16 * 128,
        4,
    ),
    # Granite-4.0-H: head_count_kv 0 on its Mamba-2 layers; the config in its published
    # legacy names.
    "granitehybrid": (
        "granitehybrid",
        {
            **base(4),
            **attention([0, KV_HEADS, 0, 0]),
            **ssm(4, 128, 16, 8, groups=1),
            "feed_forward_length": 128,
        },
        hf(
            "granitemoehybrid",
            4,
            **HF_ATTENTION,
            num_local_experts=0,
            layer_types=["mamba", "attention", "mamba", "mamba"],
            mamba_expand=2,
            mamba_n_heads=8,
            mamba_n_groups=1,
            mamba_d_state=16,
            mamba_d_conv=4,
        ),
        LINEAR,
        (4 - 1) * (128 + 2 * 1 * 16),
        16 * 128,
        4,
    ),
    # Qwen3-Next: three Gated DeltaNet layers of four (llama.cpp's constant); the converter
    # writes linear_key_head_dim as state_size, the key heads as group_count, the value heads
    # as time_step_rank and value heads x value head size as inner_size.
    "qwen3next": (
        "qwen3next",
        {
            **base(8),
            **attention(),
            **ssm(4, 4 * 16, 16, 4, groups=2),
            "feed_forward_length": 128,
            "expert_count": 4,
            "expert_used_count": 2,
            "expert_feed_forward_length": 32,
            "expert_shared_feed_forward_length": 32,
        },
        hf(
            "qwen3_next",
            8,
            **HF_ATTENTION,
            linear_conv_kernel_dim=4,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            intermediate_size=128,
        ),
        LINEAR,
        (4 - 1) * (4 * 16 + 2 * 2 * 16),
        16 * 4 * 16,
        4,
    ),
    # LFM2: short convolutions where head_count_kv is 0; its r is n_embd * (l_cache - 1), no s.
    "lfm2": (
        "lfm2",
        {
            **base(6),
            **attention([0, 0, KV_HEADS, 0, KV_HEADS, 0], key_length=False),
            "shortconv.l_cache": 3,
            "feed_forward_length": 128,
        },
        hf(
            "lfm2",
            6,
            num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS,
            full_attn_idxs=[2, 4],
            conv_L_cache=3,
            intermediate_size=128,
        ),
        CONV,
        HIDDEN * (3 - 1),
        0,
        3,
    ),
}


@pytest.mark.parametrize("case", list(STATE_CASES))
def test_layers_kv_and_states_are_the_configs_and_llama_cpps(tmp_path: Path, case: str) -> None:
    arch, metadata, config, kind, r_values, s_values, kernel = STATE_CASES[case]
    from_file = sized(write_gguf(tmp_path / f"{case}.gguf", arch, metadata))
    same = from_config(tmp_path, config)
    assert from_file.config.model_type == same.config.model_type
    assert from_file.config.layer_kinds == same.config.layer_kinds
    # The attention layers' KV, per kind, as the config's.
    assert kv_groups(from_file) == kv_groups(same)
    # llama.cpp's states: r and s per recurrent layer and sequence, float32.
    recurrent = sum(k == kind for k in same.config.layer_kinds)
    expected = [("cache_r_l", r_values, True)]
    if s_values:
        expected.append(("cache_s_l", s_values, True))
    assert states(from_file) == {kind: (recurrent, expected)}
    assert from_file.state.state_bytes == recurrent * (r_values + s_values) * F32 * SEQUENCES
    # Against Transformers' states of the same sizes: the recurrent state holds the same
    # values; llama.cpp keeps kernel - 1 of Transformers' kernel positions of the convolution.
    ((count, tensors),) = states(same).values()
    assert count == recurrent
    hf_by_name = {name: elements for name, elements, _ in tensors}
    assert hf_by_name["conv_states[0]"] * (kernel - 1) == r_values * kernel
    assert hf_by_name.get("recurrent_states[0]", 0) == s_values
    data = payload(from_file)
    assert "states_llama_cpp" in data["caveats"]
    assert (
        data["total_bytes"] == data["weights_bytes"] + data["kv_cache_bytes"] + data["state_bytes"]
    )
    assert all(t["dtype"] == "float32" for s in data["states"] for t in s["tensors"])


def test_states_are_constant_in_tokens_and_not_the_kv_dtype(tmp_path: Path) -> None:
    arch, metadata, *_ = STATE_CASES["jamba"]
    path = write_gguf(tmp_path / "jamba.gguf", arch, metadata)
    short = size_model(path, tokens=10, kv_dtype="fp16")
    long = size_model(path, tokens=10_000, kv_dtype="fp8")
    assert short.state.state_bytes == long.state.state_bytes > 0
    assert long.kv.kv_cache_bytes > short.kv.kv_cache_bytes


# --- Llama 4 and Gemma-3n: llama.cpp's constants --------------------------------------------


def llama4_metadata(**extra: Any) -> dict[str, Any]:
    return {
        **base(8),
        **attention(),
        "feed_forward_length": 128,
        "expert_feed_forward_length": 64,
        "expert_count": 4,
        "expert_used_count": 1,
        "interleave_moe_layer_step": 1,
        **extra,
    }


LLAMA4_HF = hf(
    "llama4_text",
    8,
    **HF_ATTENTION,
    intermediate_size=64,
    intermediate_size_mlp=128,
    num_local_experts=4,
    num_experts_per_tok=1,
)


@pytest.mark.parametrize("window", [None, 4096], ids=["no-window-key", "another-window"])
def test_llama4_chunks_three_layers_of_four_at_8192(tmp_path: Path, window: int | None) -> None:
    """load_hparams, LLM_ARCH_LLAMA4: n_swa = 8192 and set_swa_pattern(4) (chunked), whatever
    window the file states unless it is 0; Transformers' default config is the same layout."""
    extra = {} if window is None else {"attention.sliding_window": window}
    path = write_gguf(tmp_path / "llama4.gguf", "llama4", llama4_metadata(**extra))
    tokens = 10_000  # past the chunk: a chunked layer holds the chunk while decoding
    from_file, same = sized(path, tokens), from_config(tmp_path, LLAMA4_HF, tokens)
    assert list(from_file.config.layer_kinds) == [CHUNKED, CHUNKED, CHUNKED, FULL] * 2
    assert from_file.config.layer_kinds == same.config.layer_kinds
    assert from_file.config.chunk_window == same.config.chunk_window == 8192
    assert kv_groups(from_file) == kv_groups(same)
    chunked = next(g for g in from_file.kv.groups if g.layout.kind == CHUNKED)
    assert (chunked.held.peak, chunked.held.decoding) == (tokens, 8192)
    assert from_file.state.state_bytes == 0


def test_llama4_window_zero_attends_fully(tmp_path: Path) -> None:
    metadata = llama4_metadata(**{"attention.sliding_window": 0})
    path = write_gguf(tmp_path / "mobile.gguf", "llama4", metadata)
    from_file = sized(path)
    same = from_config(tmp_path, {**LLAMA4_HF, "attention_chunk_size": None})
    assert set(from_file.config.layer_kinds) == {FULL} == set(same.config.layer_kinds)
    assert kv_groups(from_file) == kv_groups(same)


@pytest.mark.parametrize(("layers", "shared"), [(30, 10), (35, 15), (16, 0)])
def test_gemma3n_keeps_a_kv_in_its_first_twenty_layers(
    tmp_path: Path, layers: int, shared: int
) -> None:
    """load_hparams, LLM_ARCH_GEMMA3N: n_layer_kv_from_start = 20 and set_swa_pattern(5); the
    later layers reuse layer 18's (sliding) or 19's (full) KV and hold none. Gemma-3n-E2B (30
    layers, 10 shared) and E4B (35, 15) are what Transformers' configs say."""
    metadata = {
        **base(layers),
        **attention(),
        "attention.sliding_window": 8,
        "feed_forward_length": 128,
    }
    path = write_gguf(tmp_path / "gemma3n.gguf", "gemma3n", metadata)
    same = from_config(
        tmp_path,
        hf(
            "gemma3n_text",
            layers,
            **HF_ATTENTION,
            sliding_window=8,
            num_kv_shared_layers=shared,
            intermediate_size=128,
        ),
    )
    from_file = sized(path)
    kinds = list(from_file.config.layer_kinds)
    assert kinds == list(same.config.layer_kinds)
    held = min(layers, 20)
    assert kinds[:held] == [SLIDING if il % 5 < 4 else FULL for il in range(held)]
    assert kinds[held:] == [DUMMY] * shared
    assert kv_groups(from_file) == kv_groups(same)


# --- refusals, one line each -------------------------------------------------------------------


def refused(path: Path, match: str) -> None:
    with pytest.raises(ModelInputError, match=match) as caught:
        sized(path)
    assert "\n" not in str(caught.value)


def test_missing_or_disagreeing_state_keys_are_refused(tmp_path: Path) -> None:
    _, mamba, *_ = STATE_CASES["mamba"]
    for key in ("ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank"):
        metadata = {k: v for k, v in mamba.items() if k != key}
        path = write_gguf(tmp_path / f"mamba-{key}.gguf", "mamba", metadata)
        refused(path, rf"no mamba\.{key.replace('.', chr(92) + '.')}")
    _, mamba2, *_ = STATE_CASES["mamba2"]
    metadata = {k: v for k, v in mamba2.items() if k != "ssm.group_count"}
    refused(write_gguf(tmp_path / "m2.gguf", "mamba2", metadata), r"no mamba2\.ssm\.group_count")
    metadata = {**mamba2, "ssm.time_step_rank": 7}
    refused(
        write_gguf(tmp_path / "m2-rank.gguf", "mamba2", metadata),
        r"mamba2\.ssm\.time_step_rank does not agree",
    )
    _, lfm2, *_ = STATE_CASES["lfm2"]
    metadata = {k: v for k, v in lfm2.items() if k != "shortconv.l_cache"}
    refused(write_gguf(tmp_path / "lfm2.gguf", "lfm2", metadata), r"no lfm2\.shortconv\.l_cache")
    # The pinned llama.cpp fixes Qwen3-Next's interval: a file stating another is not what it runs.
    _, qwen, *_ = STATE_CASES["qwen3next"]
    path = write_gguf(tmp_path / "q.gguf", "qwen3next", {**qwen, "full_attention_interval": 3})
    refused(path, r"qwen3next\.full_attention_interval does not agree")
    # Attention layers of different KV heads, and head counts not one per layer.
    _, jamba, *_ = STATE_CASES["jamba"]
    metadata = {**jamba, "attention.head_count_kv": [0, 2, 0, 0, 1, 0, 0, 0]}
    refused(write_gguf(tmp_path / "j.gguf", "jamba", metadata), "head_count_kv differs")
    metadata = {**jamba, "attention.head_count_kv": [0, 2, 0]}
    refused(write_gguf(tmp_path / "j3.gguf", "jamba", metadata), "head_count_kv does not agree")


def test_the_state_bytes_at_large_sizes(tmp_path: Path) -> None:
    """A Falcon-H1 of 44 layers, hidden 3072, d_ssm 3072, 24 SSM heads of 128, one group, state
    256, kernel 4: llama.cpp's per-sequence state, all float32, against Transformers' (its
    convolution in bfloat16 over four positions, its SSM state in float32)."""
    metadata = {
        "block_count": 44,
        "embedding_length": 3072,
        "attention.head_count": 12,
        "attention.head_count_kv": 2,
        "attention.key_length": 128,
        "attention.value_length": 128,
        **ssm(4, 3072, 256, 24, groups=1),
    }
    from_file = sized(write_gguf(tmp_path / "falcon.gguf", "falcon-h1", metadata))
    per_layer = (3 * (3072 + 2 * 256) + 256 * 3072) * F32
    assert from_file.state.state_bytes == 44 * per_layer * SEQUENCES
    same = from_config(
        tmp_path,
        {
            "model_type": "falcon_h1",
            "num_hidden_layers": 44,
            "hidden_size": 3072,
            "num_attention_heads": 12,
            "num_key_value_heads": 2,
            "head_dim": 128,
            "mamba_d_ssm": 3072,
            "mamba_n_heads": 24,
            "mamba_n_groups": 1,
            "mamba_d_state": 256,
            "mamba_d_conv": 4,
            "torch_dtype": "bfloat16",
        },
    )
    transformers = (4 * (3072 + 2 * 256) * 2 + 24 * 128 * 256 * F32) * 44 * SEQUENCES
    assert same.state.state_bytes == transformers
    assert from_file.state.state_bytes - same.state.state_bytes == Fraction(
        44 * SEQUENCES * (3 * 3584 * F32 - 4 * 3584 * 2)
    )
