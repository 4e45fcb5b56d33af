"""Test vectors for the sizer's `config.json` reader: `iteragpu model`'s answers per config.

Each vector is a config's text, the options `iteragpu model CONFIG` is given (tokens,
sequences, KV bytes per value, reserve, cache, MLA layout, bits) and what `size_model` answers:
parameters, weights, KV bytes per token, the KV cache per layer kind, the total; or the reason
code of its one-line refusal. `sizer_vectors` adds them to its output (`model_configs`), which
the node tests and the browser test read.

The configs: the published ones the pages show (snippets/models/), and the others the model
reader knows, each with the keys of its published config.json that matter here.
"""

from __future__ import annotations

import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from iteragpu.core.numbers import InputError
from iteragpu.models.model import size_model

ROOT: Final = Path(__file__).resolve().parents[3]
SNIPPET_CONFIGS: Final = ROOT / "snippets" / "models"

MISTRAL_7B_V01: Final[dict[str, Any]] = {
    "model_type": "mistral",
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "sliding_window": 4096,
    "torch_dtype": "bfloat16",
}
QWEN2_7B: Final[dict[str, Any]] = {
    "model_type": "qwen2",
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "max_window_layers": 28,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
GEMMA_3_4B: Final[dict[str, Any]] = {
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 34,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "vocab_size": 262208,
        "sliding_window": 1024,
    },
    "vision_config": {"model_type": "siglip_vision_model"},
    "torch_dtype": "bfloat16",
}
DEEPSEEK_V2_LITE: Final[dict[str, Any]] = {
    "model_type": "deepseek_v2",
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_size": 2048,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "vocab_size": 102400,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
    "torch_dtype": "bfloat16",
}
# The reader's other rules, on small configs: declared kinds, explicit head dims, MQA,
# Qwen2's window from a layer on, a quantized checkpoint, Gemma-3's pattern, MLA with a
# query rank and multi-token-prediction layers, tied embeddings, biases.
SMALL: Final[dict[str, Any]] = {
    "model_type": "llama",
    "num_hidden_layers": 6,
    "num_attention_heads": 8,
    "num_key_value_heads": 1,
    "hidden_size": 512,
    "head_dim": 96,
    "intermediate_size": 1376,
    "vocab_size": 32003,
    "tie_word_embeddings": True,
    "attention_bias": True,
    "mlp_bias": True,
    "dtype": "float32",
}

CONFIGS: Final[dict[str, dict[str, Any]]] = {
    "mistral-7b-v0.1": MISTRAL_7B_V01,
    "qwen2-7b": QWEN2_7B,
    "qwen2-7b-windowed": {**QWEN2_7B, "use_sliding_window": True, "max_window_layers": 21},
    "gemma-3-4b": GEMMA_3_4B,
    "gemma-3-pattern-3": {
        **GEMMA_3_4B["text_config"],
        "sliding_window_pattern": 3,
        "dtype": "float16",
    },
    "deepseek-v2-lite": DEEPSEEK_V2_LITE,
    "deepseek-v3-shaped": {
        **DEEPSEEK_V2_LITE,
        "model_type": "deepseek_v3",
        "num_hidden_layers": 5,
        "q_lora_rank": 1536,
        "first_k_dense_replace": 2,
        "moe_layer_freq": 2,
        "num_nextn_predict_layers": 1,
        "torch_dtype": "float8_e4m3fn",
    },
    "llama-declared-kinds": {
        **SMALL,
        "layer_types": ["sliding_attention", "full_attention"] * 3,
        "sliding_window": 128,
    },
    "llama-mqa-head-dim": SMALL,
    "llama-quantized-int4": {
        **SMALL,
        "num_key_value_heads": None,
        "head_dim": None,
        "tie_word_embeddings": False,
        "torch_dtype": "int4",
        "quantization_config": {"quant_method": "awq"},
    },
    "qwen3-shaped": {
        **SMALL,
        "model_type": "qwen3",
        "num_key_value_heads": 2,
        "use_sliding_window": True,
        "sliding_window": 64,
        "max_window_layers": 4,
        "dtype": "bf16",
    },
    "llava-unnamed-text": {
        "model_type": "llava",
        "text_config": {**SMALL, "model_type": None, "dtype": None},
        "torch_dtype": "float16",
    },
}

# Configs the reader refuses, each with the reason code of its one-line message.
BAD_CONFIGS: Final[dict[str, str]] = {
    "not-json": '{"model_type": "llama",',
    "array": "[1, 2]",
    "jamba": json.dumps({**SMALL, "model_type": "jamba"}),
    "mamba-key": json.dumps({**SMALL, "mamba_d_state": 16}),
    "nested-state": json.dumps({"model_type": "x", "text_config": SMALL, "ssm_cfg": {}}),
    "gpt2": json.dumps({**SMALL, "model_type": "gpt2"}),
    "no-model-type": json.dumps({k: v for k, v in SMALL.items() if k != "model_type"}),
    "no-heads": json.dumps({k: v for k, v in SMALL.items() if k != "num_attention_heads"}),
    "float-layers": json.dumps(SMALL).replace('"num_hidden_layers": 6', '"num_hidden_layers": 6.0'),
    "exponent-hidden": json.dumps(SMALL).replace('"hidden_size": 512', '"hidden_size": 5.12e2'),
    "bool-heads": json.dumps({**SMALL, "num_attention_heads": True}),
    "string-hidden": json.dumps({**SMALL, "hidden_size": "512"}),
    "huge-vocab": json.dumps({**SMALL, "vocab_size": 10**13}),
    "negative-kv": json.dumps({**SMALL, "num_key_value_heads": -1}),
    "not-multiple": json.dumps({**SMALL, "num_key_value_heads": 3}),
    "linear-kind": json.dumps({**SMALL, "layer_types": ["linear_attention"] * 6}),
    "kinds-count": json.dumps({**SMALL, "layer_types": ["full_attention"]}),
    "kinds-not-names": json.dumps({**SMALL, "layer_types": [1, 2, 3, 4, 5, 6]}),
    "sliding-no-window": json.dumps(
        {**SMALL, "layer_types": ["sliding_attention"] * 6, "sliding_window": None}
    ),
    "text-config-list": json.dumps({"model_type": "llava", "text_config": []}),
    "tie-yes": json.dumps({**SMALL, "tie_word_embeddings": "yes"}),
    "no-vocab": json.dumps({k: v for k, v in SMALL.items() if k != "vocab_size"}),
    "no-intermediate": json.dumps({k: v for k, v in SMALL.items() if k != "intermediate_size"}),
    "unknown-dtype": json.dumps({**SMALL, "dtype": "float4_e2m1"}),
    "nan-window": json.dumps({**MISTRAL_7B_V01, "sliding_window": float("nan")}),
    "mla-zero-rank": json.dumps({**DEEPSEEK_V2_LITE, "kv_lora_rank": 0}),
    "listed-model-type": json.dumps({**SMALL, "model_type": ["llama"]}),
    "too-many-layers": json.dumps({**SMALL, "num_hidden_layers": 10**12}),
}

# The options `iteragpu model` is run with: its defaults first, then each one varied.
OPTIONS: Final[list[dict[str, Any]]] = [
    {"tokens": "8192"},
    {"tokens": "32768", "sequences": "4", "cache": "dynamic"},
    {"tokens": "32768", "sequences": "4", "cache": "static"},
    {"tokens": "100", "cache": "static", "kv_bytes_per_value": "0.5", "reserve_gib": "2.5"},
    {"tokens": "131072", "kv_bytes_per_value": "1", "bits": "4.5", "mla_layout": "mla_per_head"},
]


def config_texts() -> dict[str, str]:
    """Every config the vectors size, by name: the pages' published ones, then `CONFIGS`."""
    texts = {}
    if SNIPPET_CONFIGS.is_dir():
        for path in sorted(SNIPPET_CONFIGS.glob("*/config.json")):
            texts[path.parent.name] = path.read_text("utf-8")
    for name, config in CONFIGS.items():
        texts[name] = json.dumps(config, indent=2)
    return texts


def _exact(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value}"


def sized(text: str, options: dict[str, Any]) -> dict[str, Any]:
    """What `iteragpu model CONFIG` answers for the config `text` with `options`."""
    settings: dict[str, Any] = {
        "tokens": int(options["tokens"]),
        "sequences": int(options.get("sequences", "1")),
        "reserve_gib": Fraction(options.get("reserve_gib", "0")),
        "cache": options.get("cache", "dynamic"),
        "mla_layout": options.get("mla_layout", "mla_latent"),
    }
    if "kv_bytes_per_value" in options:
        settings["kv_bytes_per_value"] = Fraction(options["kv_bytes_per_value"])
    if "bits" in options:
        settings["bits"] = Fraction(options["bits"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(text, "utf-8")
        try:
            sizing = size_model(path, **settings)
        except InputError as error:
            key = error.values.get("key")
            return {"valid": False, "reason": error.reason, "key": key, "error": str(error)}
    kv = sizing.kv
    return {
        "valid": True,
        "model_type": sizing.config.model_type,
        "parameters": sizing.weights.parameters,
        "weights_bits": _exact(sizing.weights.bits or Fraction(0)),
        "weights_bytes": _exact(sizing.weights.byte_count),
        "kv_bytes_per_value": _exact(kv.bytes_per_value),
        "kv_bytes_per_token": _exact(kv.kv_bytes_per_token),
        "kv_cache_bytes": _exact(kv.kv_cache_bytes),
        "layers": [
            {
                "kind": g.layout.kind,
                "count": g.count,
                "window": g.layout.window,
                "layout": g.layout.layout,
                "values_per_token": g.layout.values_per_token,
                "tokens_held": g.held.peak,
                "kv_cache_bytes": _exact(g.kv_cache_bytes),
            }
            for g in kv.groups
        ],
        "reserve_bytes": _exact(sizing.reserve_bytes),
        "total_bytes": _exact(sizing.total_bytes),
        "caveats": list(sizing.caveats),
    }


def config_vectors() -> list[dict[str, Any]]:
    """Every config with every option set, then every refused config with the defaults."""
    vectors = [
        {"name": name, "text": text, "options": options, "expected": sized(text, options)}
        for name, text in config_texts().items()
        for options in OPTIONS
    ]
    vectors += [
        {"name": name, "text": text, "options": OPTIONS[0], "expected": sized(text, OPTIONS[0])}
        for name, text in BAD_CONFIGS.items()
    ]
    return vectors
