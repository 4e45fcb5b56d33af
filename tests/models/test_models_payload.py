"""`size_model` on folders and bare configs, and its `--json` object: stable keys, integer bytes,
exact decimal GiB, null for what is unknown, the total as the sum of its parts."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from published_configs import GEMMA_2_9B, LLAMA_3_8B
from safetensors.numpy import save_file

from iteragpu.core.numbers import InputError
from iteragpu.core.units import BYTES_PER_GIB
from iteragpu.models.errors import ConfigError, ModelInputError
from iteragpu.models.model import CAVEATS, payload, size_model

STABLE_KEYS = {
    "parameters",
    "weights_bytes",
    "weights_source",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "layers",
    "total_bytes",
    "weights_gib",
    "kv_cache_gib",
    "total_gib",
}


def model_folder(tmp_path: Path, config: dict[str, Any], weights: bool = False) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(config), "utf-8")
    if weights:
        save_file({"w": np.zeros((3, 5), np.float16)}, tmp_path / "model.safetensors")
    return tmp_path


def test_config_only_folder_llama_3_8b(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    data = payload(size_model(folder, tokens=8192, sequences=4, reserve_gib=2))
    assert set(data) >= STABLE_KEYS
    assert data["weights_source"] == "config" and data["weights_bits"] == "16"
    assert data["parameters"] == 8_030_261_248
    assert data["weights_bytes"] == 2 * 8_030_261_248
    assert data["kv_bytes_per_token"] == 131_072
    assert data["kv_cache_bytes"] == 4 * BYTES_PER_GIB and data["kv_cache_gib"] == "4"
    total = 2 * 8_030_261_248 + 4 * BYTES_PER_GIB + 2 * BYTES_PER_GIB
    assert data["total_bytes"] == total
    assert Fraction(data["total_gib"]) == Fraction(total, BYTES_PER_GIB)
    assert data["weights_files"] is None and data["weights_formats"] is None
    assert data["mla_alternative"] is None
    assert data["layers"] == [
        {
            "kind": "full_attention",
            "count": 32,
            "window": None,
            "layout": "per_head",
            "heads": 8,
            "key_dim": 128,
            "value_dim": 128,
            "values_per_token": 2048,
            "kv_bytes_per_token": 131_072,
            "kv_bytes_per_token_exact": "131072",
            "tokens_held": 8192,
            "tokens_held_decoding": 8192,
            "tokens_in_tensors_after_prompt": 8192,
            "kv_cache_bytes": 4 * BYTES_PER_GIB,
            "kv_cache_bytes_exact": str(4 * BYTES_PER_GIB),
            "kv_cache_gib": "4",
        }
    ]
    assert "weights_uniform_dtype" in data["caveats"]
    assert set(data["caveats"]) <= set(CAVEATS)
    json.dumps(data)  # plain JSON: no Fraction, no float
    assert not any(isinstance(v, float) for v in data.values())


def test_gemma_2_dynamic_peak_and_static_allocation(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, GEMMA_2_9B)
    per_layer_token = 2 * 8 * 256 * 2
    dynamic = payload(size_model(folder, tokens=8192, kv_dtype="bfloat16"))
    assert dynamic["cache"] == {"kind": "dynamic", "static_max_tokens": None, "sliding_layers": 21}
    assert dynamic["kv_cache_bytes"] == 42 * per_layer_token * 8192
    assert dynamic["kv_cache_decoding_bytes"] == 21 * per_layer_token * (8192 + 4096)
    static = payload(
        size_model(folder, tokens=8192, kv_dtype="bfloat16", cache="static", static_max_tokens=9000)
    )
    assert static["kv_cache_bytes"] == 21 * per_layer_token * (9000 + 4096)
    assert "cache_static_allocation" in static["caveats"]
    assert dynamic["weights_bits"] == "32"  # the config's float32


def test_weights_from_files_refuse_bits(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B, weights=True)
    data = payload(size_model(folder, tokens=16))
    assert data["weights_source"] == "safetensors"
    assert (data["parameters"], data["weights_bytes"], data["weights_bits"]) == (15, 30, None)
    assert data["weights_formats"] == [
        {
            "format": "float",
            "dtype": "F16",
            "tensors": 1,
            "elements": 15,
            "stored_elements": 15,
            "bytes": 30,
        }
    ]
    with pytest.raises(ModelInputError, match="read from its safetensors files"):
        size_model(folder, tokens=16, bits=4)
    # The bare config.json beside them: weights from the config.
    assert size_model(folder / "config.json", tokens=16, bits=4).weights.source == "config"


def test_fractional_bytes_round_up_and_stay_exact(tmp_path: Path) -> None:
    folder = model_folder(
        tmp_path, {**LLAMA_3_8B, "num_hidden_layers": 1, "num_key_value_heads": 1}
    )
    data = payload(size_model(folder, tokens=3, kv_bytes_per_value=Fraction(1, 3)))
    # 2 x 1 head x 128 x 3 tokens x 1/3 byte = 256 exactly; per token 256/3.
    assert data["kv_cache_bytes"] == 256
    assert (data["kv_bytes_per_token"], data["kv_bytes_per_token_exact"]) == (
        86,
        "85.33333333333333333333",
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": 0}, "tokens must be a whole number between 1 and 1e9"),
        ({"tokens": 10**9 + 1}, "between 1 and 1e9"),
        ({"tokens": 8, "sequences": 10**6 + 1}, "sequences must be"),
        ({"tokens": 8, "reserve_gib": -1}, "reserve must be between 0"),
        ({"tokens": 8, "bits": 0}, "bits must be above 0"),
        ({"tokens": 8, "bits": 8, "dtype": "fp8"}, "not both"),
        ({"tokens": 8, "dtype": "float7"}, "unknown --dtype 'float7'"),
        ({"tokens": 8, "kv_dtype": "fp16", "kv_bytes_per_value": 2}, "not both"),
        ({"tokens": 8, "kv_bytes_per_value": 9}, "at most 8"),
        ({"tokens": 8, "cache": "static", "static_max_tokens": 7}, "cannot hold 8 tokens"),
        ({"tokens": 8, "static_max_tokens": 9}, "applies to a static cache"),
        ({"tokens": 8, "mla_layout": "mla_other"}, "unknown MLA layout"),
    ],
)
def test_bad_options_end_in_one_line(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    with pytest.raises(InputError, match=message) as caught:
        size_model(folder, **kwargs)
    assert "\n" not in str(caught.value)


def test_missing_paths_and_dtypes(tmp_path: Path) -> None:
    with pytest.raises(ModelInputError, match="no such file or folder"):
        size_model(tmp_path / "nowhere", tokens=1)
    with pytest.raises(ConfigError, match=r"no config\.json in this folder"):
        size_model(tmp_path, tokens=1)
    with pytest.raises(ModelInputError, match=r"not one of its \.safetensors files"):
        size_model(tmp_path / "model.safetensors", tokens=1)
    no_dtype = {k: v for k, v in LLAMA_3_8B.items() if k != "torch_dtype"}
    folder = model_folder(tmp_path, no_dtype)
    with pytest.raises(ModelInputError, match="give --kv-dtype or --kv-bytes-per-value"):
        size_model(folder, tokens=1, bits=16)
    with pytest.raises(ModelInputError, match="give --bits or --dtype"):
        size_model(folder, tokens=1, kv_dtype="fp16")
    assert size_model(folder, tokens=1, dtype="bf16", kv_dtype="fp8").weights.bits == 16


def test_quantized_config_says_what_uniform_bits_miss(tmp_path: Path) -> None:
    quantized = {**LLAMA_3_8B, "quantization_config": {"quant_method": "gptq", "bits": 4}}
    data = payload(size_model(model_folder(tmp_path, quantized), tokens=1, bits=4))
    assert data["quantization_method"] == "gptq"
    assert "quantized_checkpoint_from_config" in data["caveats"]
    assert data["weights_bytes"] == 8_030_261_248 // 2


def test_a_tower_without_a_recipe_says_the_encoder_is_not_counted(tmp_path: Path) -> None:
    unknown = {"model_type": "llava", "text_config": LLAMA_3_8B}
    unknown["vision_config"] = {"model_type": "no_such_vision_model"}
    data = payload(size_model(model_folder(tmp_path / "unknown", unknown), tokens=1))
    assert (data["model_type"], data["outer_model_type"]) == ("llama", "llava")
    assert "multimodal_encoder_not_counted" in data["caveats"]
    assert data["modules"] is None
    text_only = payload(size_model(model_folder(tmp_path / "text", LLAMA_3_8B), tokens=1))
    assert data["parameters"] == text_only["parameters"]


def test_a_known_wrapper_counts_its_tower_and_projector_by_module(tmp_path: Path) -> None:
    # LLaVA's class default tower (CLIP ViT-L/14-336) when the config states no vision_config.
    config = {"model_type": "llava", "text_config": LLAMA_3_8B}
    data = payload(size_model(model_folder(tmp_path / "llava", config), tokens=1))
    text_only = payload(size_model(model_folder(tmp_path / "text", LLAMA_3_8B), tokens=1))
    assert "multimodal_encoder_not_counted" not in data["caveats"]
    modules = {m["name"]: m["parameters"] for m in data["modules"]}
    assert sum(modules.values()) == data["parameters"] > text_only["parameters"]
    beside = data["parameters"] - text_only["parameters"]
    assert beside == sum(
        v for name, v in modules.items() if "language_model" not in name and "lm_head" not in name
    )


def test_deepseek_v3_names_both_mla_layouts(tmp_path: Path) -> None:
    config = {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "vocab_size": 129280,
        "num_nextn_predict_layers": 1,
        "torch_dtype": "bfloat16",
    }
    data = payload(size_model(model_folder(tmp_path, config), tokens=1000))
    assert data["layers"][0]["layout"] == "mla_latent"
    assert data["kv_bytes_per_token"] == 61 * (512 + 64) * 2
    alternative = data["mla_alternative"]
    assert alternative["layers"][0]["layout"] == "mla_per_head"
    assert alternative["kv_bytes_per_token"] == 61 * 128 * (192 + 128) * 2
    assert {"mla_latent", "mtp_layers_not_counted"} <= set(data["caveats"])
    # DeepSeek-V3's defaults (Transformers 5.24): 3 dense layers, then 256 routed experts.
    assert data["parameters"] == 671_026_404_352


def test_reading_a_model_loads_neither_gguf_nor_numpy() -> None:
    """The optional `gguf` package (and numpy under it) load only for a .gguf file, so that a
    folder or a config is sized with the standard library alone."""
    code = "import sys, iteragpu.models.model; print(sorted({'gguf', 'numpy'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_weights_caveat_says_what_holds_for_the_dtype_and_the_bits(tmp_path: Path) -> None:
    """At a dtype, DeepSeek-V3's routers count at 4 bytes (Transformers keeps them in float32):
    the caveat says so and names them; at --bits every parameter takes the bits; a family that
    keeps nothing in float32 gets neither."""
    config = {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "vocab_size": 129280,
        "torch_dtype": "bfloat16",
    }
    folder = model_folder(tmp_path / "v3", config)
    sizing = size_model(folder, tokens=1000)
    data = payload(sizing)
    # What Transformers 5.24 builds at bfloat16 (the figure; proved in `nox -s models`).
    assert data["weights_bytes"] == 1_342_265_669_632
    routers = (data["weights_bytes"] - 2 * data["parameters"]) // 2
    assert sizing.weights.float32_parameters == routers > 0
    weights_codes = {c for c in data["caveats"] if c.startswith("weights_")}
    assert weights_codes == {"weights_float32_modules"}
    at_bits = payload(size_model(folder, tokens=1000, bits=16))
    assert at_bits["weights_bytes"] == 2 * at_bits["parameters"]
    assert {c for c in at_bits["caveats"] if c.startswith("weights_")} == {"weights_uniform_bits"}
    llama = payload(size_model(model_folder(tmp_path / "llama", LLAMA_3_8B), tokens=1000))
    assert {c for c in llama["caveats"] if c.startswith("weights_")} == {"weights_uniform_dtype"}
    from iteragpu.cli.views import model_text

    for lang, number in (("ko", f"{routers:,}"), ("id", f"{routers:,}".replace(",", "."))):
        text = model_text(sizing, None, None, lang)
        assert number in text.replace("\n  ", " ")
