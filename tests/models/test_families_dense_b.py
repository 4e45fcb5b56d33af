"""Falcon, GPT-NeoX, GPT-2, StableLM, GLM, GLM-4, EXAONE 4, SmolLM3, ERNIE 4.5 and Seed-OSS, read
from their recipes (iteragpu.models.recipe, `families/<type>.json`) without torch.

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
    "falcon": (32, 71, 4544, 6_921_720_704),
    "gpt_neox": (44, 64, 6144, 20_554_567_680),
    "gpt2": (12, 12, 768, 124_439_808),
    "stablelm": (32, 32, 2560, 2_795_443_200),
    "glm": (40, 32, 4096, 9_399_951_360),
    "glm4": (40, 32, 4096, 9_400_279_040),
    "exaone4": (32, 32, 4096, 9_429_069_824),
    "smollm3": (36, 16, 2048, 3_075_098_624),
    "ernie4_5": (18, 16, 1024, 360_748_032),
    "seed_oss": (64, 80, 4096, 28_921_040_896),
}
# GPT-2 names its sizes as GPT-2 did (Transformers' attribute_map).
GPT2_KEYS = {
    "num_hidden_layers": "n_layer",
    "num_attention_heads": "n_head",
    "hidden_size": "n_embd",
}


def _config(model_type: str, **extra: Any) -> dict[str, Any]:
    layers, heads, hidden, _ = DEFAULTS[model_type]
    sizes = {"num_hidden_layers": layers, "num_attention_heads": heads, "hidden_size": hidden}
    if model_type == "gpt2":
        sizes = {GPT2_KEYS[key]: value for key, value in sizes.items()}
    # The dtype, so that `iteragpu model` reaches the count with the config alone.
    return {"model_type": model_type, **sizes, "dtype": "bfloat16", **extra}


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_the_class_defaults_count_what_transformers_builds(model_type: str) -> None:
    read = parse_config(_config(model_type))
    assert count_parameters(read) == DEFAULTS[model_type][3]
    assert active_parameters(read) == DEFAULTS[model_type][3]  # no routed experts
    assert float32_parameters(read) == 0


def test_falcon_7b_caches_one_kv_head_and_40b_every_query_head() -> None:
    falcon_7b = parse_config(_config("falcon"))
    assert (falcon_7b.kv_heads, falcon_7b.head_dim) == (1, 64)
    # Falcon-40B's 8 KV groups are broadcast to its 128 query heads before they are cached.
    falcon_40b = parse_config(
        {
            "model_type": "falcon",
            "num_hidden_layers": 60,
            "num_attention_heads": 128,
            "hidden_size": 8192,
            "new_decoder_architecture": True,
            "num_kv_heads": 8,
        }
    )
    assert (falcon_40b.kv_heads, falcon_40b.head_dim) == (128, 64)
    assert count_parameters(falcon_40b) == 41_303_293_952
    rw = parse_config(_config("falcon", multi_query=False))
    assert rw.kv_heads == 71


def test_layer_kinds_follow_each_familys_rule() -> None:
    exaone = parse_config(_config("exaone4", num_hidden_layers=8))
    assert exaone.layer_kinds == (SLIDING, SLIDING, SLIDING, FULL) * 2
    assert exaone.sliding_window == 4096
    assert parse_config(_config("exaone4", sliding_window=None)).layer_kinds == (FULL,) * 32
    smol = parse_config(_config("smollm3", use_sliding_window=True, sliding_window=4096))
    assert smol.layer_kinds == (FULL, FULL, FULL, SLIDING) * 9  # the layers without RoPE
    assert parse_config(_config("smollm3")).layer_kinds == (FULL,) * 36
    assert parse_config(_config("glm4", sliding_window=4096)).layer_kinds == (FULL,) * 40


def _too_long_pattern(model_type: str) -> dict[str, Any]:
    layers = DEFAULTS[model_type][0]
    return _config(model_type, layer_types=[FULL] * (layers + 1))


MALFORMED: dict[str, dict[str, Any]] = {
    "falcon_without_heads": {"model_type": "falcon", "num_hidden_layers": 32, "hidden_size": 4544},
    "gpt2_without_n_head": {"model_type": "gpt2", "n_layer": 12, "n_embd": 768},
    "glm4_without_heads": {"model_type": "glm4", "num_hidden_layers": 40, "hidden_size": 4096},
    "exaone4_pattern_too_long": _too_long_pattern("exaone4"),
    "smollm3_pattern_too_long": _too_long_pattern("smollm3"),
    "smollm3_no_rope_layers_too_short": _config(
        "smollm3", use_sliding_window=True, sliding_window=4096, no_rope_layers=[1, 1]
    ),
    "exaone4_pattern_as_letters": _config("exaone4", sliding_window_pattern="LLLG"),
    "gpt2_negative_width": _config("gpt2", n_embd=-768),
    "falcon_negative_ffn": _config("falcon", ffn_hidden_size=-1),
    "gpt_neox_negative_mlp": _config("gpt_neox", intermediate_size=-4),
    "gpt2_negative_inner": _config("gpt2", n_inner=-4),
    "seed_oss_negative_head_dim": _config("seed_oss", head_dim=-128),
    "stablelm_negative_vocab": _config("stablelm", vocab_size=-1),
    "ernie4_5_negative_layers": _config("ernie4_5", num_hidden_layers=-18),
    "stablelm_kv_heads_above_heads": _config("stablelm", num_attention_heads=16),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_config_is_one_error(name: str) -> None:
    with pytest.raises(ModelInputError) as caught:
        count_parameters(parse_config(MALFORMED[name]))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_iteragpu_model_refuses_it_in_one_line(tmp_path: Path, name: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps(MALFORMED[name]), "utf-8")
    result = CliRunner().invoke(
        app, ["model", str(tmp_path), "--tokens", "8"], prog_name="iteragpu"
    )
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("iteragpu: ")
    assert "dtype" not in line  # refused for the config's fault, not for a missing option
    assert "Traceback" not in result.output
