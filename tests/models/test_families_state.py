"""The families whose layers keep a state (Mamba, Mamba-2, Jamba, LFM2...) and the attention
families added with them (Llama 4's chunked attention, DBRX, Ministral), without torch.

What these tests hold is the reader's own logic, each part able to fail: the states are constant
in tokens and grow with sequences; `--kv-dtype` changes the attention cache only, `--dtype` the
states Transformers keeps in the model's dtype and not the float32 ones; the total adds them;
the layers that keep no KV hold no KV bytes; a chunked layer holds what a sliding layer of the
chunk's width holds; malformed configs are one line (exit 2). The parameter counts of each
config class's defaults are what Transformers 5.24 builds on the meta device, measured once and
proved against Transformers itself by tests/models/test_families_transformers.py; the bytes
each state holds are proved against a tiny model's real cache on CPU by
tests/models/test_models_transformers.py.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.models.config import CHUNKED, FULL, LINEAR, SLIDING, parse_config
from iteragpu.models.errors import ModelInputError
from iteragpu.models.model import payload, size_model
from iteragpu.models.parameters import active_parameters, count_parameters

# Each config class's defaults (layers, heads, hidden size; None: no attention heads) and what
# Transformers 5.24 builds from them: parameters and active parameters.
DEFAULTS: dict[str, tuple[tuple[int, int | None, int], int, int]] = {
    "mamba": ((32, None, 768), 159_308_544, 159_308_544),
    "mamba2": ((64, None, 4096), 7_285_403_648, 7_285_403_648),
    "jamba": ((32, 32, 4096), 51_570_323_328, 12_110_311_296),
    "lfm2": ((32, 32, 2560), 2_705_497_600, 2_705_497_600),
    "llama4_text": ((48, 40, 5120), 107_769_861_120, 17_172_894_720),
    "dbrx": ((24, 16, 2048), 2_459_207_680, 873_760_768),
    "ministral": ((32, 32, 4096), 7_241_732_096, 7_241_732_096),
    "falcon_h1": ((32, 32, 4096), 8_514_961_408, 8_514_961_408),
    "bamba": ((32, 32, 4096), 9_992_765_440, 9_992_765_440),
    "granitemoehybrid": ((32, 32, 4096), 38_601_064_448, 12_629_934_080),
    "qwen3_next": ((48, 16, 2048), 79_674_391_296, 3_874_929_408),
    "kimi_linear": ((27, 32, 2304), 49_133_074_464, 3_494_852_640),
}
STATE_FAMILIES = ("mamba", "mamba2", "jamba", "bamba", "granitemoehybrid", "qwen3_next")


def _config(model_type: str, **changes: Any) -> dict[str, Any]:
    (layers, heads, hidden), _, _ = DEFAULTS[model_type]
    config: dict[str, Any] = {
        "model_type": model_type,
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "dtype": "bfloat16",
    }
    if heads is not None:
        config["num_attention_heads"] = heads
    if model_type == "ministral":
        config["head_dim"] = 128  # MinistralConfig's None: Transformers cannot build without it
    return {**config, **changes}


def _sized(tmp_path: Path, config: dict[str, Any], **options: Any) -> Any:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), "utf-8")
    return size_model(path, **{"tokens": 4096, **options})


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_the_class_defaults_count_what_transformers_builds(model_type: str) -> None:
    _, parameters, active = DEFAULTS[model_type]
    read = parse_config(_config(model_type))
    assert count_parameters(read) == parameters
    assert active_parameters(read) == active


@pytest.mark.parametrize("model_type", STATE_FAMILIES)
def test_a_state_is_constant_in_tokens_and_grows_with_sequences(
    tmp_path: Path, model_type: str
) -> None:
    config = _config(model_type)
    short = _sized(tmp_path, config, tokens=16)
    long = _sized(tmp_path, config, tokens=100_000)
    assert short.state.state_bytes == long.state.state_bytes > 0
    four = _sized(tmp_path, config, tokens=16, sequences=4)
    assert four.state.state_bytes == 4 * short.state.state_bytes
    static = _sized(tmp_path, config, tokens=16, cache="static", static_max_tokens=64)
    assert static.state.state_bytes == short.state.state_bytes
    # The total adds the states to the weights, the KV and the reserve.
    sizing = _sized(tmp_path, config, tokens=4096, reserve_gib=1)
    expected = (
        sizing.weights.byte_count
        + sizing.kv.kv_cache_bytes
        + sizing.state.state_bytes
        + Fraction(2**30)
    )
    assert sizing.total_bytes == expected
    body = payload(sizing)
    assert body["state_bytes"] == sizing.state.state_bytes
    assert body["total_bytes"] == expected
    assert [g["kind"] for g in body["states"]] == [LINEAR]


def test_mamba_keeps_its_conv_state_in_the_model_dtype_and_its_ssm_state_in_float32(
    tmp_path: Path,
) -> None:
    config = _config("mamba")
    inner = 2 * 768  # expand x hidden_size
    conv, ssm = inner * 4, inner * 16  # conv_kernel, state_size
    layers = 32
    at_bf16 = _sized(tmp_path, config)
    assert at_bf16.state.state_bytes == layers * (conv * 2 + ssm * 4)
    at_fp32 = _sized(tmp_path, config, dtype="float32")
    assert at_fp32.state.state_bytes == layers * (conv * 4 + ssm * 4)
    # --kv-dtype sets the attention cache only: a state keeps the model's dtype.
    assert _sized(tmp_path, config, kv_dtype="fp8").state.state_bytes == at_bf16.state.state_bytes
    (group,) = payload(at_bf16)["states"]
    tensors = {t["name"]: (t["elements_per_sequence"], t["dtype"]) for t in group["tensors"]}
    assert tensors == {"conv_states[0]": (conv, "model"), "recurrent_states[0]": (ssm, "float32")}


def test_mamba_has_no_kv_and_its_kv_keys_are_zero(tmp_path: Path) -> None:
    sizing = _sized(tmp_path, _config("mamba"))
    assert sizing.config.layer_kinds == (LINEAR,) * 32
    assert sizing.kv.kv_cache_bytes == sizing.kv.kv_bytes_per_token == 0
    assert payload(sizing)["kv_cache_bytes"] == 0


def test_jamba_keeps_a_kv_in_its_attention_layers_and_a_state_in_the_others(
    tmp_path: Path,
) -> None:
    sizing = _sized(tmp_path, _config("jamba"), tokens=1000)
    kinds = sizing.config.layer_kinds
    assert [i for i, k in enumerate(kinds) if k == FULL] == [4, 12, 20, 28]
    # 4 attention layers x 2 x 8 KV heads x 128 x 1000 tokens x 2 bytes.
    assert sizing.kv.kv_cache_bytes == 4 * 2 * 8 * 128 * 1000 * 2
    inner = 2 * 4096
    assert sizing.state.state_bytes == 28 * (inner * 4 * 2 + inner * 16 * 4)
    per_layer = sizing.state.per_layer
    assert [b > 0 for b in per_layer] == [k == LINEAR for k in kinds]


def test_lfm2_reads_its_conv_layers_from_layer_types_or_full_attn_idxs(tmp_path: Path) -> None:
    attention = [2, 5, 8, 10, 12, 14]  # LFM2-1.2B's attention layers
    kinds = ["full_attention" if i in attention else "conv" for i in range(16)]
    common = {"num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32}
    declared = _sized(tmp_path, _config("lfm2", **common, layer_types=kinds))
    indexed = _sized(tmp_path, _config("lfm2", **common, full_attn_idxs=attention))
    for sizing in (declared, indexed):
        assert list(sizing.config.layer_kinds) == kinds
        assert sizing.state.state_bytes == 10 * 2048 * 3 * 2  # hidden x conv_L_cache, bf16
    assert count_parameters(declared.config) == count_parameters(indexed.config)


def test_llama4_chunked_layers_hold_what_a_sliding_layer_of_the_chunk_holds(
    tmp_path: Path,
) -> None:
    config = _config("llama4_text")
    sizing = _sized(tmp_path, config, tokens=100_000, cache="static")
    assert sizing.config.chunk_window == 8192
    assert sizing.config.layer_kinds == (CHUNKED, CHUNKED, CHUNKED, FULL) * 12
    held = {g.layout.kind: g.held.peak for g in sizing.kv.groups}
    assert held == {CHUNKED: 8192, FULL: 100_000}
    # The same layers described as sliding with the chunk as their window.
    sliding = _config(
        "llama4_text",
        layer_types=[SLIDING if k == CHUNKED else FULL for k in sizing.config.layer_kinds],
        sliding_window=8192,
    )
    assert _sized(tmp_path, sliding, tokens=100_000, cache="static").kv.kv_cache_bytes == (
        sizing.kv.kv_cache_bytes
    )
    assert sizing.state.state_bytes == 0


def test_falcon_h1_layers_keep_a_state_and_a_kv_each(tmp_path: Path) -> None:
    sizing = _sized(tmp_path, _config("falcon_h1"), tokens=1000)
    assert sizing.config.layer_kinds == ("hybrid",) * 32
    # 32 layers x 2 x 8 KV heads x 128 x 1000 tokens x 2 bytes.
    assert sizing.kv.kv_cache_bytes == 32 * 2 * 8 * 128 * 1000 * 2
    # conv_dim (1536) x 4 at bfloat16 and 128 heads x 8 x 256 at float32, per layer.
    assert sizing.state.state_bytes == 32 * (1536 * 4 * 2 + 128 * 8 * 256 * 4)


def test_granite_4_h_old_layer_names_are_read_as_transformers_renames_them(
    tmp_path: Path,
) -> None:
    names = ["mamba", "mamba", "attention", "mamba"] * 8
    renamed = ["linear_attention" if n == "mamba" else "full_attention" for n in names]
    old = _sized(tmp_path, _config("granitemoehybrid", layer_types=names))
    new = _sized(tmp_path, _config("granitemoehybrid", layer_types=renamed))
    assert list(old.config.layer_kinds) == renamed
    assert old.total_bytes == new.total_bytes
    assert old.kv.kv_cache_bytes > 0 and old.state.state_bytes > 0


def test_kimi_linear_caches_the_latent_in_its_full_layers_and_a_state_in_the_others(
    tmp_path: Path,
) -> None:
    sizing = _sized(tmp_path, _config("kimi_linear"), tokens=1000)
    kinds = sizing.config.layer_kinds
    assert [i for i, k in enumerate(kinds) if k == FULL] == [4, 8, 12, 16, 20, 24]
    # The latent (kv_lora_rank 512) and the shared rotary key (64), one "head", bfloat16.
    assert sizing.kv.kv_cache_bytes == 6 * (512 + 64) * 1000 * 2
    assert "mla_latent" in sizing.caveats
    # conv over q, k and v (3 x 32 heads x 128) x 4 taps at bfloat16; 32 x 128 x 128 float32.
    assert sizing.state.state_bytes == 21 * (3 * 32 * 128 * 4 * 2 + 32 * 128 * 128 * 4)


def test_the_text_table_shows_the_states(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(_config("jamba")), "utf-8")
    result = CliRunner().invoke(
        app, ["model", str(tmp_path), "--tokens", "8", "--lang", "id"], prog_name="iteragpu"
    )
    assert result.exit_code == 0, result.output
    state_rows = [line for line in result.stdout.splitlines() if line.startswith("State lapisan")]
    assert len(state_rows) == 1 and " 28 " in state_rows[0]


def _without(model_type: str, key: str) -> dict[str, Any]:
    config = _config(model_type)
    del config[key]
    return config


# name: (config, what its one-line refusal says).
MALFORMED: dict[str, tuple[dict[str, Any], str]] = {
    "jamba_without_heads": (_without("jamba", "num_attention_heads"), "no num_attention_heads"),
    "llama4_without_heads": (
        _without("llama4_text", "num_attention_heads"),
        "no num_attention_heads",
    ),
    "jamba_pattern_too_long": (
        _config("jamba", layer_types=[FULL] * 33),
        "layer_types names 33 layers",
    ),
    "lfm2_pattern_too_long": (_config("lfm2", layer_types=["conv"] * 40), "names 40 layers"),
    "jamba_experts_per_token_above_experts": (
        _config("jamba", num_experts_per_tok=17),
        "between 1 and the number of experts",
    ),
    "llama4_experts_per_token_above_experts": (
        _config("llama4_text", num_experts_per_tok=17),
        "between 1 and the number of experts",
    ),
    "mamba_negative_state": (_config("mamba", state_size=-16), "whole count"),
    "mamba_negative_hidden": (_config("mamba", hidden_size=-768), "hidden_size must be"),
    "mamba2_heads_that_do_not_fit": (_config("mamba2", hidden_size=2048), "num_heads"),
    "llama4_chunk_of_zero": (_config("llama4_text", attention_chunk_size=0), "chunk"),
    "lfm2_unknown_kind": (
        _config("lfm2", layer_types=["indexed_attention"] * 32),
        "layer kind 'indexed_attention'",
    ),
    # Transformers' old name for a Mamba layer: LFM2 has none.
    "lfm2_mamba_layer": (
        _config("lfm2", layer_types=["mamba"] * 32),
        "layer kind 'linear_attention'",
    ),
    "jamba_conv_as_text": (_config("jamba", mamba_d_conv="4"), "mamba_d_conv"),
    # JambaConfig refuses an offset at or past its period.
    "jamba_offset_past_period": (
        _config("jamba", attn_layer_period=2, attn_layer_offset=4),
        "attn_layer_offset",
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_config_is_one_error(tmp_path: Path, name: str) -> None:
    config, message = MALFORMED[name]
    with pytest.raises(ModelInputError, match=message) as caught:
        sizing = _sized(tmp_path, config)
        payload(sizing)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_iteragpu_model_refuses_it_in_one_line(tmp_path: Path, name: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps(MALFORMED[name][0]), "utf-8")
    result = CliRunner().invoke(
        app, ["model", str(tmp_path), "--tokens", "8"], prog_name="iteragpu"
    )
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("iteragpu: ")
    assert "Traceback" not in result.output
