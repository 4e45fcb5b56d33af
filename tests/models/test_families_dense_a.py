"""Phi, Phi-3, OLMo 2, OLMo 3, Granite, Cohere, Cohere 2 and StarCoder 2, read from their recipes
(iteragpu.models.recipe, `families/<type>.json`) without torch; and Mistral, Qwen2, Qwen3,
Gemma, Gemma 2 and Gemma 3, whose layer kinds are config.py's hand rules but whose parameters
and defaults are their recipes'.

The parameter counts are what Transformers 5.24 builds on the meta device for each config
class's defaults (tests/models/test_families_transformers.py proves them with Transformers);
here the reader must give them from the keys it never defaults, the rest from the recipe's
defaults. Malformed configs are refused in one line, by the reader and by `iteragpu model`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.models.config import FULL, SLIDING, parse_config
from iteragpu.models.errors import ModelInputError
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters

# model_type: (layers, heads, hidden, Transformers' parameters for the class defaults).
DEFAULTS: dict[str, tuple[int, int, int, int]] = {
    "phi": (24, 32, 2048, 1_418_270_720),
    "phi3": (32, 32, 3072, 3_821_079_552),
    "olmo2": (32, 32, 4096, 6_888_624_128),
    "olmo3": (32, 32, 4096, 6_888_624_128),
    "granite": (32, 32, 4096, 6_738_415_616),
    "cohere": (40, 64, 8192, 34_980_831_232),
    "cohere2": (40, 64, 8192, 34_980_831_232),
    "starcoder2": (30, 24, 3072, 3_030_371_328),
    # Described by hand in config.FAMILIES (layer kinds); counted by their recipes.
    "mistral": (32, 32, 4096, 7_241_732_096),
    "qwen2": (32, 32, 4096, 12_049_846_272),
    "qwen3": (32, 32, 4096, 12_049_461_248),
    "gemma": (28, 16, 3072, 8_537_680_896),
    "gemma2": (26, 8, 2304, 2_614_341_888),
    "gemma3_text": (26, 8, 2304, 2_628_658_432),
}


def _config(model_type: str, **extra: Any) -> dict[str, Any]:
    layers, heads, hidden, _ = DEFAULTS[model_type]
    sizes = {"num_hidden_layers": layers, "num_attention_heads": heads, "hidden_size": hidden}
    # The dtype, so that `iteragpu model` reaches the count with the config alone.
    return {"model_type": model_type, **sizes, "dtype": "bfloat16", **extra}


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_the_class_defaults_count_what_transformers_builds(model_type: str) -> None:
    read = parse_config(_config(model_type))
    assert count_parameters(read) == DEFAULTS[model_type][3]
    assert active_parameters(read) == DEFAULTS[model_type][3]  # no routed experts
    assert float32_parameters(read) == 0


def test_the_optional_modules_are_counted_where_the_config_asks_for_them() -> None:
    # Phi: LayerNorms (weight and bias) of hidden // heads on queries and keys; the head's bias
    # stays when its weight is tied.
    phi = count_parameters(parse_config(_config("phi")))
    assert count_parameters(parse_config(_config("phi", qk_layernorm=True))) == phi + 24 * 4 * 64
    tied = count_parameters(parse_config(_config("phi", tie_word_embeddings=True)))
    assert phi - tied == 51200 * 2048
    # Cohere: LayerNorms of (heads, head_dim) and (KV heads, head_dim), biases by attention_bias
    # (Transformers' count for these keys).
    cohere = parse_config(
        _config("cohere", use_qk_norm=True, num_key_value_heads=8, attention_bias=True)
    )
    assert count_parameters(cohere) == 30_284_316_672
    # StarCoder 2: use_bias on the six linears of a layer.
    starcoder = count_parameters(parse_config(_config("starcoder2")))
    unbiased = count_parameters(parse_config(_config("starcoder2", use_bias=False)))
    assert starcoder - unbiased == 30 * (3072 + 2 * 256 + 3072 + 12288 + 3072)
    # Mistral and Gemma build no MLP bias whatever mlp_bias says; Qwen2 no o_proj bias.
    for model_type in ("mistral", "gemma", "qwen2"):
        plain = count_parameters(parse_config(_config(model_type)))
        asked = parse_config(_config(model_type, mlp_bias=True, attention_bias=False))
        assert count_parameters(asked) == plain, model_type


def test_the_kv_layout_of_each_family() -> None:
    starcoder2 = parse_config(_config("starcoder2"))
    assert (starcoder2.kv_heads, starcoder2.head_dim) == (2, 128)
    olmo3 = parse_config(_config("olmo3", num_hidden_layers=8))
    assert olmo3.layer_kinds == (SLIDING, SLIDING, SLIDING, FULL) * 2
    assert olmo3.sliding_window == 4096
    cohere2 = parse_config(_config("cohere2"))
    assert cohere2.layer_kinds == (SLIDING, SLIDING, SLIDING, FULL) * 10
    assert (cohere2.kv_heads, cohere2.head_dim) == (64, 128)
    every_other = parse_config(_config("cohere2", num_hidden_layers=4, sliding_window_pattern=2))
    assert every_other.layer_kinds == (SLIDING, FULL) * 2
    # A sliding_window slides every layer of the families without layer_types.
    assert parse_config(_config("phi3")).layer_kinds == (FULL,) * 32
    assert parse_config(_config("phi3", sliding_window=2047)).layer_kinds == (SLIDING,) * 32
    assert parse_config(_config("starcoder2", sliding_window=4096)).layer_kinds == (SLIDING,) * 30
    assert parse_config(_config("granite")).layer_kinds == (FULL,) * 32


def test_the_hand_families_take_their_config_classs_kv_heads() -> None:
    # Without num_key_value_heads, Transformers builds MistralConfig's 8, Gemma2Config's 4 and
    # Qwen2Config's 32 KV heads, not one per query head.
    assert parse_config(_config("mistral")).kv_heads == 8
    assert parse_config(_config("gemma2")).kv_heads == 4
    assert parse_config(_config("qwen2", num_attention_heads=64)).kv_heads == 32
    assert parse_config(_config("gemma2")).layer_kinds == (SLIDING, FULL) * 13


def _too_long_pattern(model_type: str) -> dict[str, Any]:
    layers = DEFAULTS[model_type][0]
    return _config(model_type, layer_types=[FULL] * (layers + 1))


def _without_heads(model_type: str) -> dict[str, Any]:
    config = _config(model_type)
    del config["num_attention_heads"]
    return config


# name: (config, what its one-line refusal says).
MALFORMED: dict[str, tuple[dict[str, Any], str]] = {
    "phi_without_heads": (_without_heads("phi"), "no num_attention_heads"),
    "cohere2_without_heads": (_without_heads("cohere2"), "no num_attention_heads"),
    "olmo3_without_heads": (_without_heads("olmo3"), "no num_attention_heads"),
    "gemma3_text_without_heads": (_without_heads("gemma3_text"), "no num_attention_heads"),
    "olmo3_pattern_too_long": (_too_long_pattern("olmo3"), "layer_types names 33 layers"),
    "cohere2_pattern_too_long": (_too_long_pattern("cohere2"), "layer_types names 41 layers"),
    "gemma2_pattern_too_long": (_too_long_pattern("gemma2"), "layer_types names 27 layers"),
    "cohere2_pattern_of_zero": (_config("cohere2", sliding_window_pattern=0), "divides by zero"),
    "starcoder2_negative_mlp": (_config("starcoder2", intermediate_size=-1), "intermediate_size"),
    "phi_negative_vocab": (_config("phi", vocab_size=-1), "vocab_size must be"),
    "olmo2_negative_head_dim": (_config("olmo2", head_dim=-64), "head_dim must be"),
    "granite_negative_layers": (_config("granite", num_hidden_layers=-32), "num_hidden_layers"),
    "cohere_negative_hidden": (_config("cohere", hidden_size=-8192), "hidden_size must be"),
    "qwen3_negative_mlp": (_config("qwen3", intermediate_size=-4), "intermediate_size must be"),
    "starcoder2_bias_as_text": (_config("starcoder2", use_bias="yes"), "use_bias"),
    # MistralConfig's 8 KV heads, when the config states none, for 4 query heads.
    "mistral_kv_heads_above_heads": (_config("mistral", num_attention_heads=4), "not a multiple"),
    "phi3_sliding_layers_without_window": (
        _config("phi3", layer_types=[SLIDING] * 32),
        "sliding layers without a sliding_window",
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_config_is_one_error(name: str) -> None:
    config, message = MALFORMED[name]
    with pytest.raises(ModelInputError, match=message) as caught:
        count_parameters(parse_config(config))
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
    assert "dtype" not in line  # refused for the config's fault, not for a missing option
    assert "Traceback" not in result.output
