"""config.json read into layers, heads and kinds; parameters counted; KV sized per layer."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from published_configs import GEMMA_2_9B, LLAMA_3_8B, MISTRAL_7B_V01

from iteragpu.core.kv_cache import kv_cache_bytes
from iteragpu.models.config import FULL, SLIDING, _json_loads, load_config, parse_config
from iteragpu.models.errors import ConfigError, ModelInputError, UnsupportedModelError
from iteragpu.models.kv import Cache, estimate_kv, layer_layouts
from iteragpu.models.parameters import count_parameters


@pytest.mark.parametrize(
    ("config", "parameters"),
    [
        # The counts the Hub shows for these checkpoints (its safetensors metadata).
        (LLAMA_3_8B, 8_030_261_248),
        (MISTRAL_7B_V01, 7_241_732_096),
        (GEMMA_2_9B, 9_241_705_984),
    ],
)
def test_parameters_of_published_configs(config: dict[str, Any], parameters: int) -> None:
    assert count_parameters(parse_config(config)) == parameters


def test_tied_embeddings_count_once() -> None:
    untied = count_parameters(parse_config(LLAMA_3_8B))
    tied = count_parameters(parse_config({**LLAMA_3_8B, "tie_word_embeddings": True}))
    assert untied - tied == 128256 * 4096


def test_llama_3_8b_kv_is_the_core_formula() -> None:
    config = parse_config(LLAMA_3_8B)
    assert (config.kv_heads, config.head_dim, config.dtype) == (8, 128, "bfloat16")
    kv = estimate_kv(layer_layouts(config), 8192, Fraction(2), sequences=4)
    assert kv.kv_cache_bytes == kv_cache_bytes(32, 8, 128, 8192, 2, sequences=4) == 4 * 2**30
    assert kv.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2


def test_an_explicit_head_dim_wins_over_hidden_over_heads() -> None:
    config = parse_config({**LLAMA_3_8B, "head_dim": 64})
    assert config.head_dim == 64
    assert parse_config(LLAMA_3_8B).head_dim == 4096 // 32


def test_mqa_and_missing_kv_heads() -> None:
    assert parse_config({**LLAMA_3_8B, "num_key_value_heads": 1}).kv_heads == 1
    no_kv = {k: v for k, v in LLAMA_3_8B.items() if k != "num_key_value_heads"}
    assert parse_config(no_kv).kv_heads == 32  # Llama's default: as many as the query heads


def test_gemma_2_alternates_sliding_and_global_layers() -> None:
    config = parse_config(GEMMA_2_9B)
    assert config.layer_kinds[:4] == (SLIDING, FULL, SLIDING, FULL)
    assert config.layer_kinds.count(SLIDING) == 21 and config.sliding_window == 4096


def test_gemma_3_has_five_sliding_layers_per_global_one() -> None:
    text = {
        **GEMMA_2_9B,
        "model_type": "gemma3_text",
        "num_hidden_layers": 34,
        "sliding_window": 1024,
    }
    kinds = parse_config(text).layer_kinds
    assert [i for i, kind in enumerate(kinds) if kind == FULL] == [5, 11, 17, 23, 29]
    pattern = parse_config({**text, "sliding_window_pattern": 2}).layer_kinds
    assert pattern[:2] == (SLIDING, FULL)


def test_declared_layer_types_win() -> None:
    kinds = [FULL, SLIDING, SLIDING, FULL]
    config = parse_config({**GEMMA_2_9B, "num_hidden_layers": 4, "layer_types": kinds})
    assert list(config.layer_kinds) == kinds


def test_mistral_slides_on_every_layer_and_not_without_a_window() -> None:
    assert set(parse_config(MISTRAL_7B_V01).layer_kinds) == {SLIDING}
    v03 = parse_config({**MISTRAL_7B_V01, "sliding_window": None})
    assert set(v03.layer_kinds) == {FULL} and v03.sliding_window is None


def test_qwen2_window_needs_use_sliding_window() -> None:
    base = {**LLAMA_3_8B, "model_type": "qwen2", "num_hidden_layers": 6, "sliding_window": 64}
    assert set(parse_config(base).layer_kinds) == {FULL}
    mixed = parse_config({**base, "use_sliding_window": True, "max_window_layers": 4})
    assert mixed.layer_kinds == (FULL,) * 4 + (SLIDING,) * 2
    assert mixed.sliding_window == 64


def test_nested_text_config(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "gemma3",
                "text_config": {**GEMMA_2_9B, "model_type": "gemma3_text"},
                "vision_config": {"model_type": "siglip_vision_model"},
                "torch_dtype": "bfloat16",
            }
        ),
        "utf-8",
    )
    config = load_config(path)
    assert (config.model_type, config.outer_model_type, config.is_multimodal) == (
        "gemma3_text",
        "gemma3",
        True,
    )
    assert config.dtype == "float32"  # the decoder's own dtype comes first
    unnamed = parse_config(
        {"model_type": "llava", "text_config": dict(LLAMA_3_8B, model_type=None)}
    )
    assert unnamed.model_type == "llama"


def test_mla_layouts_both_named() -> None:
    config = parse_config(
        {
            "model_type": "deepseek_v3",
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "hidden_size": 7168,
            "kv_lora_rank": 512,
            "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 128,
            "v_head_dim": 128,
        }
    )
    latent = estimate_kv(layer_layouts(config, "mla_latent"), 1, Fraction(2))
    per_head = estimate_kv(layer_layouts(config, "mla_per_head"), 1, Fraction(2))
    assert latent.kv_bytes_per_token == 61 * (512 + 64) * 2
    assert per_head.kv_bytes_per_token == 61 * 128 * (128 + 64 + 128) * 2


@pytest.mark.parametrize("tokens", [1, 4095, 4096, 4097, 100_000])
def test_dynamic_and_static_semantics_per_layer(tokens: int) -> None:
    layouts = layer_layouts(parse_config(GEMMA_2_9B))
    per_token = 2 * 8 * 256 * 2  # one layer, bfloat16
    dynamic = estimate_kv(layouts, tokens, Fraction(2))
    sliding, full = dynamic.groups
    assert (sliding.layout.kind, sliding.count, full.count) == (SLIDING, 21, 21)
    # The prompt peak: every layer holds the whole prompt.
    assert dynamic.kv_cache_bytes == 42 * per_token * tokens
    assert sliding.held.in_tensors_after_prompt == min(tokens, 4095)
    assert dynamic.kv_cache_decoding_bytes == 21 * per_token * (tokens + min(tokens, 4096))
    static = estimate_kv(layouts, tokens, Fraction(2), cache=Cache("static", 100_000))
    assert static.kv_cache_bytes == 21 * per_token * (100_000 + 4096)
    assert static.kv_cache_bytes == static.kv_cache_decoding_bytes


def test_cache_rules_refuse_what_does_not_apply() -> None:
    layouts = layer_layouts(parse_config(LLAMA_3_8B))
    with pytest.raises(ModelInputError, match="cannot hold 10 tokens"):
        estimate_kv(layouts, 10, Fraction(2), cache=Cache("static", 9))
    with pytest.raises(ModelInputError, match="static cache"):
        Cache("dynamic", 9)
    with pytest.raises(ModelInputError, match="unknown cache"):
        Cache("paged")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"num_attention_heads": None}, ConfigError, "no num_attention_heads"),
        ({"num_hidden_layers": 0}, ConfigError, "num_hidden_layers must be a positive"),
        ({"hidden_size": "4096"}, ConfigError, "hidden_size must be"),
        ({"num_key_value_heads": 7}, ConfigError, "not a multiple"),
        ({"layer_types": ["full_attention"]}, ConfigError, "names 1 layers"),
        ({"model_type": None}, ConfigError, "no model_type"),
        ({"model_type": "t5"}, UnsupportedModelError, "not a known family"),
        ({"model_type": "zamba2"}, UnsupportedModelError, "Mamba or linear-attention"),
        ({"mamba_d_state": 16}, UnsupportedModelError, "mamba_d_state"),
        (
            {"layer_types": ["linear_attention"] * 32},
            UnsupportedModelError,
            "'linear_attention' keeps a state",
        ),
        ({"tie_word_embeddings": "yes"}, ConfigError, "true or false"),
    ],
)
def test_bad_configs_end_in_one_line(change: dict[str, Any], error: type, message: str) -> None:
    config = {**LLAMA_3_8B, **change}
    if change.get("num_attention_heads", 0) is None:
        del config["num_attention_heads"]
    with pytest.raises(error, match=message) as caught:
        parse_config(config)
    assert "\n" not in str(caught.value)


def test_unreadable_config_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "config.json")
    (tmp_path / "bad.json").write_text("{not json", "utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[]", "utf-8")
    with pytest.raises(ConfigError, match="not a JSON object"):
        load_config(tmp_path / "list.json")


JSON_TEXTS = [
    json.dumps(LLAMA_3_8B),
    json.dumps(LLAMA_3_8B, indent=2, ensure_ascii=False),
    " \n\t{}\r\n",
    '[1, 2.5, -3e-7, 1E400, true, false, null, "\\u00e9\\n\\ud83d\\ude00", "é"]',
    '{"a": NaN, "b": Infinity, "c": -Infinity}',
    '{"a": 1, "a": 2}',
    "12345678901234567890123",
    '"text"',
    # Not JSON, or not JSON that json.loads reads: its errors, word for word.
    "",
    "   ",
    "{not json",
    '{"a": 1,,}',
    '{\n  "a": 1\n  "b": 2\n}',
    '{"a": 1} x',
    '{"a": 1}{}',
    "\ufeff{}",
    '{"a": "\x01"}',
    '{"a": 01}',
    "'a'",
    "[1,]",
    "[" * 100_000 + "]" * 100_000,  # nested too deeply
    "1" * 5000,  # more digits than int() converts
]


@pytest.mark.parametrize("text", JSON_TEXTS, ids=range(len(JSON_TEXTS)))
def test_the_config_reader_parses_as_json_loads(text: str) -> None:
    """The config reader's JSON goes through json's own C scanner without importing `json`;
    values and errors are those of `json.loads`."""

    def outcome(loads: Any) -> tuple[Any, ...]:
        try:
            return ("value", repr(loads(text)))  # repr: NaN is not equal to itself
        except RecursionError:
            return ("RecursionError",)
        except ValueError as error:
            return (type(error).__name__, str(error))

    assert outcome(_json_loads) == outcome(json.loads)


def test_a_config_that_is_not_json_is_located_as_json_locates_it(tmp_path: Path) -> None:
    text = '{\n  "model_type": "llama",\n  "num_hidden_layers": 32,,\n}'
    (tmp_path / "config.json").write_text(text, "utf-8")
    with pytest.raises(json.JSONDecodeError) as where:
        json.loads(text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "config.json")
    assert caught.value.values["line"] == str(where.value.lineno) == "3"
    assert caught.value.values["column"] == str(where.value.colno)


def test_a_missing_vocabulary_takes_the_config_classs_default() -> None:
    # LlamaConfig's vocab_size is 32000 when a config leaves it out, as Transformers builds it
    # (tests/models/test_families_transformers.py builds the same on the meta device).
    missing = parse_config({k: v for k, v in LLAMA_3_8B.items() if k != "vocab_size"})
    stated = parse_config({**LLAMA_3_8B, "vocab_size": 32000})
    assert count_parameters(missing) == count_parameters(stated)
    assert count_parameters(missing) < count_parameters(parse_config(LLAMA_3_8B))
    with pytest.raises(ConfigError, match="vocab_size"):
        count_parameters(parse_config({**LLAMA_3_8B, "vocab_size": None}))
