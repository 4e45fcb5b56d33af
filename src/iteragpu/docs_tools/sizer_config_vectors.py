"""Test vectors for the sizer's `config.json` reader: `iteragpu model`'s answers per config.

Each vector is a config's text, the options `iteragpu model CONFIG` is given (tokens,
sequences, KV bytes per value, reserve, cache, MLA layout, bits) and what `size_model` answers:
parameters, weights, KV bytes per token, the KV cache per layer kind, the total; or the reason
code of its one-line refusal. `sizer_vectors` adds them to its output (`model_configs`), which
the node tests and the browser test read.

The configs: the published ones the pages show (snippets/models/), the others the model
reader knows, each with the keys of its published config.json that matter here, and, for every
family described as data (iteragpu.models.recipe, `families/<type>.json`, read when the vectors
are made, so a family added later is covered), small configs written under the family's own
key names (its recipe's `aliases`), some of them refused; and for every multimodal wrapper
(iteragpu.models.towers, `families/wrappers/<type>.json`), small configs of its text decoder and
vision tower, some of them refused. Each valid vector states what the
reader read (`reading`: KV heads, head size, every layer's kind, active and float32 parameters).

`expression_vectors` are the recipe expressions' own vectors: an expression, the values it
reads and what `iteragpu.models.recipe.Scope` makes of it (Python's repr of the value, or the
refusal's reason and key), for web/sizer/expressions.js's evaluator.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any, Final
from unittest import mock

from iteragpu.core.numbers import InputError
from iteragpu.models import recipe as recipes
from iteragpu.models import towers
from iteragpu.models.config import MlaConfig
from iteragpu.models.errors import ConfigError
from iteragpu.models.model import size_model
from iteragpu.models.parameters import recipe_counts

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
    # Gemma-3-4B's SigLIP tower (its published vision_config): Transformers builds
    # 4,300,079,472 parameters in all.
    "vision_config": {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_hidden_layers": 27,
        "num_attention_heads": 16,
        "image_size": 896,
        "patch_size": 14,
        "vision_use_head": False,
    },
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
    # No vision_config: LLaVA's own default tower (CLIP ViT-L/14-336) and projector, counted.
    "llava-unnamed-text": {
        "model_type": "llava",
        "text_config": {**SMALL, "model_type": None, "dtype": None},
        "torch_dtype": "float16",
    },
    # LlamaConfig's vocab_size and intermediate_size when a config leaves them out (the recipe's
    # defaults, which count_parameters reads).
    "llama-default-sizes": {
        k: v for k, v in SMALL.items() if k not in ("vocab_size", "intermediate_size")
    },
}

# Configs the reader refuses, each with the reason code of its one-line message.
BAD_CONFIGS: Final[dict[str, str]] = {
    "not-json": '{"model_type": "llama",',
    "array": "[1, 2]",
    "zamba2": json.dumps({**SMALL, "model_type": "zamba2"}),
    "mamba-key": json.dumps({**SMALL, "mamba_d_state": 16}),
    "nested-state": json.dumps({"model_type": "x", "text_config": SMALL, "ssm_cfg": {}}),
    # An encoder: no decoder family (GPT-2, refused once, is now described as data).
    "bert": json.dumps({**SMALL, "model_type": "bert"}),
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
    "null-vocab": json.dumps({**SMALL, "vocab_size": None}),
    "null-intermediate": json.dumps({**SMALL, "intermediate_size": None}),
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


@contextmanager
def _one_folder() -> Iterator[None]:
    """Every config `sized` reads written in one temporary folder, and each answer kept for the
    while (a folder per config, even a file, costs more than sizing it)."""
    global _FOLDER
    if _FOLDER is not None:
        yield
        return
    with tempfile.TemporaryDirectory() as folder:
        _FOLDER = Path(folder)
        try:
            yield
        finally:
            _FOLDER = None
            _ANSWERS.clear()
            _WRITTEN.clear()


_FOLDER: Path | None = None
# The answers of `sized` within `_one_folder`, by text and options, and the text its file holds.
_ANSWERS: dict[tuple[str, str], dict[str, Any]] = {}
_WRITTEN: dict[Path, str] = {}
_PACKAGED_RECIPE: Final = recipes.recipe


def sized(text: str, options: dict[str, Any]) -> dict[str, Any]:
    """What `iteragpu model CONFIG` answers for the config `text` with `options`."""
    if _FOLDER is None:
        with _one_folder():
            return sized(text, options)
    # Only the packaged families' answers are kept (extra_families changes the reader).
    packaged = recipes.recipe is _PACKAGED_RECIPE
    memo = (text, json.dumps(options, sort_keys=True))
    if packaged and memo in _ANSWERS:
        return copy.deepcopy(_ANSWERS[memo])
    answer = _sized(text, options)
    if packaged:
        _ANSWERS[memo] = answer
    return copy.deepcopy(answer)


def _sized(text: str, options: dict[str, Any]) -> dict[str, Any]:
    assert _FOLDER is not None
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
    path = _FOLDER / "config.json"
    if _WRITTEN.get(path) != text:
        path.write_text(text, "utf-8")
        _WRITTEN[path] = text
    try:
        sizing = size_model(path, **settings)
    except InputError as error:
        key = error.values.get("key")
        return {"valid": False, "reason": error.reason, "key": key, "error": str(error)}
    kv = sizing.kv
    config = sizing.config
    counts = recipe_counts(config)
    return {
        "valid": True,
        "model_type": config.model_type,
        # What the reader read, beside what it sized.
        "reading": {
            "kv_heads": config.kv_heads,
            "head_dim": config.head_dim,
            "layer_kinds": list(config.layer_kinds),
            "sliding_window": config.sliding_window,
            "chunk_window": config.chunk_window,
            # The recipe's (None and 0 for a family counted by hand).
            "active_parameters": None if counts is None else counts.active,
            "float32_parameters": 0 if counts is None else counts.float32,
        },
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
        "state_bytes": _exact(sizing.state.state_bytes),
        "reserve_bytes": _exact(sizing.reserve_bytes),
        "total_bytes": _exact(sizing.total_bytes),
        "caveats": list(sizing.caveats),
    }


def config_vectors() -> list[dict[str, Any]]:
    """Every config with every option set, then every refused config with the defaults, then
    the families' configs (`family_vectors`) and the expressions' (`expression_vectors`).
    Made once per process (the families' take seconds), each call given its own copy."""
    vectors: list[dict[str, Any]] = json.loads(_config_vectors_text())
    return vectors


@cache
def _config_vectors_text() -> str:
    with _one_folder():
        vectors = [
            {"name": name, "text": text, "options": options, "expected": sized(text, options)}
            for name, text in config_texts().items()
            for options in OPTIONS
        ]
        vectors += [
            {"name": name, "text": text, "options": OPTIONS[0], "expected": sized(text, OPTIONS[0])}
            for name, text in BAD_CONFIGS.items()
        ]
        vectors += family_vectors()
    return json.dumps(vectors + expression_vectors())


# ---------------------------------------------------------------------------------------------
# The families described as data: small configs of every recipe, under the family's own names
# ---------------------------------------------------------------------------------------------

FAMILY_PREFIX: Final = "family-"
# The options a family's configs are sized with: the config's dtype, then bits and MLA per head.
FAMILY_OPTIONS: Final = (OPTIONS[0], OPTIONS[4])
FAMILY_LAYERS: Final = 6
# The keys the reader never defaults, and those a config's attention is stated with.
READ_KEYS: Final = ("num_hidden_layers", "num_attention_heads", "hidden_size")
ATTENTION_KEYS: Final = ("num_key_value_heads", "head_dim")
# The keys the reader itself reads (iteragpu.models.config), beside those a recipe reads.
READER_KEYS: Final = frozenset(
    {
        *READ_KEYS,
        *ATTENTION_KEYS,
        "vocab_size",
        "intermediate_size",
        "tie_word_embeddings",
        "attention_bias",
        "mlp_bias",
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "sliding_window_pattern",
        "layer_types",
        *MlaConfig.__annotations__,
    }
)

# A family of the vectors' own (no recipe file holds it): DBRX-like nested keys read through
# dotted aliases, a float32 router, routed experts of a per-layer width, layer terms on
# conditions, and a sliding pattern: what no packaged recipe may yet use. Its configs carry it
# (`families`), and Python sizes them with it as if it were a file of families/.
DOTTED_FAMILY: Final[dict[str, Any]] = {
    "about": "A family of the sizer's vectors only, DBRX-like: nested keys, routed experts.",
    "aliases": {
        "hidden_size": "d_model",
        "num_attention_heads": "n_heads",
        "num_hidden_layers": "n_layers",
        "num_key_value_heads": "attn_config.kv_n_heads",
        "num_local_experts": "ffn_config.moe_num_experts",
        "num_experts_per_tok": "ffn_config.moe_top_k",
        "intermediate_size": "ffn_config.ffn_hidden_size",
    },
    "defaults": {
        "vocab_size": 100,
        "num_key_value_heads": None,
        "num_local_experts": 4,
        "num_experts_per_tok": 1,
        "intermediate_size": 32,
        "tie_word_embeddings": False,
        "layer_widths": None,
        "window_every": 3,
        "sliding_window": None,
    },
    "derived": {
        "num_key_value_heads": "num_attention_heads",
        "head_dim": "hidden_size // num_attention_heads",
    },
    "let": {
        "kv_width": "num_key_value_heads * head_dim",
        "widths": "layer_widths or [intermediate_size]",
    },
    "embeddings": [{"name": "wte", "count": "vocab_size * hidden_size"}],
    "layer": [
        {"name": "attn.Wqkv", "count": "hidden_size * (hidden_size + 2 * kv_width)"},
        {"name": "attn.out_proj", "count": "hidden_size * hidden_size"},
        {"name": "router", "count": "num_local_experts * hidden_size", "dtype": "float32"},
        {
            "name": "experts",
            "count": "num_local_experts * 3 * hidden_size * widths[min(layer, len(widths) - 1)]",
            "routed": {"experts": "num_local_experts", "per_token": "num_experts_per_tok"},
        },
        {"name": "norms", "count": "2 * hidden_size"},
        {"name": "gate", "count": "hidden_size", "when": "layer % 2 == 1 and layer not in [5, 7]"},
    ],
    "final": [
        {"name": "norm_f", "count": "hidden_size"},
        {"name": "lm_head", "count": "vocab_size * hidden_size", "when": "not tie_word_embeddings"},
    ],
    "layer_kind": (
        "'sliding_attention' if sliding_window is not None and (layer + 1) % window_every "
        "else 'full_attention'"
    ),
}
DOTTED: Final[dict[str, Any]] = {
    "model_type": "zz_dotted",
    "d_model": 64,
    "n_heads": 8,
    "n_layers": 8,
    "attn_config": {"kv_n_heads": 2},
    "ffn_config": {"moe_num_experts": 4, "moe_top_k": 2, "ffn_hidden_size": 48},
    "layer_widths": [16, 24, 32],
    "sliding_window": 16,
    "torch_dtype": "bfloat16",
}
DOTTED_CONFIGS: Final[dict[str, dict[str, Any]]] = {
    "dotted": DOTTED,
    "dotted-defaults": {k: DOTTED[k] for k in ("model_type", "d_model", "n_heads", "n_layers")}
    | {"dtype": "float16"},
    "dotted-not-nested": {**DOTTED, "attn_config": 2, "ffn_config": {"moe_top_k": 1}},
    "dotted-top-k-above": {**DOTTED, "ffn_config": {"moe_top_k": 5}},
    "dotted-width-text": {**DOTTED, "layer_widths": [16, "24"]},
    "dotted-window-zero": {**DOTTED, "window_every": 0},
}


def _key(data: Mapping[str, Any], canonical: str) -> str:
    """The family's own name of a canonical key (its recipe's `aliases`)."""
    return str(data.get("aliases", {}).get(canonical, canonical))


def _put(config: dict[str, Any], name: str, value: Any) -> None:
    *parents, last = name.split(".")
    for part in parents:
        config = config.setdefault(part, {})
    config[last] = value


def _small_value(key: str) -> int:
    """A small value for a key a recipe needs and does not default."""
    if "vocab" in key:
        return 1000
    if "per_tok" in key or "top_k" in key:
        return 2
    if "expert" in key:
        return 4
    return 64


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _minimal(model_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Only the keys the reader never defaults (and a dtype), under the family's names; then a
    small value for each key the family's recipe needs and does not default."""
    kv = data.get("defaults", {}).get("num_key_value_heads")
    heads = (2 * kv if kv <= 16 else kv) if _whole(kv) and kv > 0 else 8
    config: dict[str, Any] = {"model_type": model_type, "torch_dtype": "bfloat16"}
    for canonical, value in zip(READ_KEYS, (FAMILY_LAYERS, heads, 16 * heads), strict=True):
        _put(config, _key(data, canonical), value)
    for _ in range(8):
        expected = sized(json.dumps(config), OPTIONS[0])
        key = expected.get("key")
        if expected["valid"] or expected["reason"] != "missing_key" or not key:
            break
        _put(config, _key(data, key), _small_value(key))
    # A key a `require` condition names and the small sizes break (Mamba-2's num_heads): the
    # first power of two that meets it.
    required = {rule["key"] for rule in data.get("require", [])}
    for _ in range(len(required)):
        key = sized(json.dumps(config), OPTIONS[0]).get("key")
        if not isinstance(key, str) or key not in required:
            break
        for value in (2**i for i in range(12)):
            trial = json.loads(json.dumps(config))
            _put(trial, _key(data, key), value)
            if sized(json.dumps(trial), OPTIONS[0]).get("key") != key:
                config = trial
                break
        else:
            break
    return config


def family_configs(model_type: str) -> dict[str, dict[str, Any]]:
    """Configs of a recipe's family, by name: the minimal one, the head tied or untied, the
    family's boolean options flipped, its sizes stated otherwise than by default, a sliding
    window, declared layer kinds; then some the reader refuses."""
    described = recipes.recipe(model_type)
    assert described is not None, model_type
    data = described.data
    defaults = data.get("defaults", {})
    minimal = _minimal(model_type, data)
    name = f"{FAMILY_PREFIX}{model_type}-"
    configs = {f"{name}minimal": minimal}

    tied = json.loads(json.dumps(minimal))
    _put(tied, _key(data, "tie_word_embeddings"), not defaults.get("tie_word_embeddings", False))
    configs[f"{name}tied-flipped"] = tied

    flipped = json.loads(json.dumps(minimal))
    for key, value in defaults.items():
        if isinstance(value, bool) and key != "tie_word_embeddings":
            _put(flipped, _key(data, key), not value)
    configs[f"{name}options-flipped"] = flipped

    sizes = json.loads(json.dumps(minimal))
    skipped = {*READ_KEYS, *ATTENTION_KEYS, "sliding_window"}
    for key, value in defaults.items():
        if _whole(value) and key not in skipped:
            _put(sizes, _key(data, key), value + 1)
    heads = _read(minimal, data, "num_attention_heads")
    if heads % 2 == 0:
        _put(sizes, _key(data, "num_key_value_heads"), heads // 2)
    _put(sizes, _key(data, "head_dim"), 24)
    configs[f"{name}sizes-stated"] = sizes

    window = json.loads(json.dumps(minimal))
    _put(window, _key(data, "sliding_window"), 64)
    configs[f"{name}window"] = window

    declared = json.loads(json.dumps(window))
    pattern = ["sliding_attention", "sliding_attention", "full_attention"]
    declared["layer_types"] = pattern * (FAMILY_LAYERS // len(pattern))
    configs[f"{name}declared-kinds"] = declared

    no_layers = json.loads(json.dumps(minimal))
    no_layers.pop(_key(data, "num_hidden_layers"), None)
    configs[f"{name}no-layers"] = no_layers
    # A default key of the recipe set to null, to text, to a negative number: the first of each
    # that the reader refuses (a key it never reads is no refusal), those only the recipe reads
    # first.
    keys = sorted((k for k in defaults if k not in READ_KEYS), key=lambda k: k in READER_KEYS)
    for label, bad in (("null", None), ("text", "x"), ("negative", -1)):
        for key in keys:
            config = json.loads(json.dumps(minimal))
            _put(config, _key(data, key), bad)
            if not sized(json.dumps(config), OPTIONS[0])["valid"]:
                configs[f"{name}{label}-{key}"] = config
                break
    return configs


def _read(config: Mapping[str, Any], data: Mapping[str, Any], canonical: str) -> Any:
    value: Any = config
    for part in _key(data, canonical).split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


@contextmanager
def extra_families(families: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """The reader with `families` as if each were a recipe file of families/."""
    packaged = recipes.recipe

    def recipe(model_type: str) -> recipes.Recipe | None:
        if model_type in families:
            return recipes.Recipe(model_type, families[model_type])
        return packaged(model_type)

    with mock.patch.object(recipes, "recipe", recipe):
        yield


def family_vectors() -> list[dict[str, Any]]:
    """Every recipe's configs (`family_configs`), then the vectors' own family's: valid ones at
    each of FAMILY_OPTIONS, refused ones at the first."""
    with _one_folder():
        return _family_vectors()


def _family_vectors() -> list[dict[str, Any]]:
    vectors = []
    named: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
        config_name: (config, None)
        for model_type in recipes.recipe_types()
        for config_name, config in family_configs(model_type).items()
    }
    for wrapper_type in towers.wrapper_types():
        for config_name, config in wrapper_configs(wrapper_type).items():
            named[config_name] = (config, None)
    families = {"zz_dotted": DOTTED_FAMILY}
    for config_name, config in DOTTED_CONFIGS.items():
        named[f"{FAMILY_PREFIX}{config_name}"] = (config, families)
    for config_name, (config, own) in named.items():
        text = json.dumps(config, indent=2)
        with extra_families(own or {}):
            first = sized(text, FAMILY_OPTIONS[0])
            results = [first] + [sized(text, o) for o in FAMILY_OPTIONS[1:] if first["valid"]]
        for options, expected in zip(FAMILY_OPTIONS, results, strict=False):
            vector = {"name": config_name, "text": text, "options": options, "expected": expected}
            if own is not None:
                vector["families"] = own
            vectors.append(vector)
    return vectors


# ---------------------------------------------------------------------------------------------
# The multimodal wrappers: small configs of every wrapper's recipe, its tower's too
# ---------------------------------------------------------------------------------------------

WRAPPER_PREFIX: Final = f"{FAMILY_PREFIX}wrapper-"


def _small_vision(tower_type: str) -> dict[str, Any]:
    """A small vision config of a tower: only the keys a stated one must give (its `required`
    layers, heads and width), under the tower's own names."""
    described = towers.tower(tower_type)
    assert described is not None, tower_type
    config: dict[str, Any] = {}
    for key in described.data.get("required", []):
        config[key] = 2 if "layers" in key or key == "depth" else 4 if "heads" in key else 64
    return config


def wrapper_configs(wrapper_type: str) -> dict[str, dict[str, Any]]:
    """Configs of a wrapper, by name: the minimal one (its text decoder's minimal config without
    a model_type, a small vision config), its text keys at the top (Qwen2-VL's published
    configs), without a vision config (the class's default tower), the head tied otherwise by
    the wrapper's and by the text config's own key, a tower without a recipe (not counted), the
    tower's sizes under their other names; then some the reader refuses: a tower's condition
    broken, a vision config that is not an object, an empty one, a negative vision size, a
    wrapper's size that is not positive."""
    described = towers.wrapper(wrapper_type)
    assert described is not None, wrapper_type
    data = described.data
    text_type = str(data["text"])
    text_recipe = recipes.recipe(text_type)
    assert text_recipe is not None, text_type
    text = {
        k: v
        for k, v in _minimal(text_type, text_recipe.data).items()
        if k not in ("model_type", "torch_dtype")
    }
    rules = data["vision"]
    key = str(rules["key"])
    vision = _small_vision(str(rules["model_type"]))
    minimal: dict[str, Any] = {"model_type": wrapper_type, "text_config": text, key: vision}
    minimal["torch_dtype"] = "bfloat16"
    name = f"{WRAPPER_PREFIX}{wrapper_type}-"
    configs = {f"{name}minimal": minimal}
    configs[f"{name}top-level"] = {**text, "model_type": wrapper_type, key: vision}
    configs[f"{name}top-level"]["dtype"] = "float16"
    configs[f"{name}default-vision"] = {k: v for k, v in minimal.items() if k != key}
    tie = bool(data.get("defaults", {}).get("tie_word_embeddings", False))
    configs[f"{name}tied-flipped"] = {**minimal, "tie_word_embeddings": not tie}
    own_tie = bool(text_recipe.data.get("defaults", {}).get("tie_word_embeddings", False))
    text_tied = {**text, "tie_word_embeddings": not own_tie}
    configs[f"{name}text-tied-flipped"] = {**minimal, "text_config": text_tied}
    if not rules.get("fixed"):
        configs[f"{name}unknown-tower"] = {**minimal, key: {**vision, "model_type": "zz_vision"}}
    tower = towers.tower(str(rules["model_type"]))
    assert tower is not None
    aliases = tower.data.get("aliases", {})
    if aliases:
        # The tower's sizes under their other names (`num_hidden_layers` for `depth`).
        configs[f"{name}vision-aliased"] = {
            **minimal,
            key: {aliases.get(k, k): v for k, v in vision.items()},
        }
    for rule in tower.data.get("require", [])[:1]:
        # A tower's own condition broken (CLIP's heads must divide its width).
        configs[f"{name}vision-{rule['key']}-3"] = {**minimal, key: {**vision, rule["key"]: 3}}
    configs[f"{name}vision-not-object"] = {**minimal, key: [vision]}
    configs[f"{name}vision-empty"] = {**minimal, key: {}}
    positive = tower.data.get("positive", [])
    size = next((k for k in positive if k not in vision), positive[0])
    configs[f"{name}negative-{size}"] = {**minimal, key: {**vision, size: -1}}
    for own in data.get("positive", []):
        configs[f"{name}zero-{own}"] = {**minimal, own: 0}
    return configs


# ---------------------------------------------------------------------------------------------
# The recipe expressions' own vectors
# ---------------------------------------------------------------------------------------------

# The values the expressions read, as a config's JSON text: integers beyond 2^53, floats that
# are not the double they read as (one beyond the largest: infinite).
EXPRESSION_VALUES: Final = (
    json.dumps(
        {
            "a": 7,
            "b": -2,
            "z": 0,
            "t": True,
            "f": False,
            "n": None,
            "s": "abc",
            "q": "it's",
            "l": [1, 2, 3],
            "e": [],
            "m": [[1, 2], [1, 3]],
            "d": {"k": 5, "j": [4]},
            "x": 2.5,
            "big": 123456789012345678901234567890,
            "g": 10**30 + 1,
        }
    )[:-1]
    + ', "w": 1e30, "h": 9007199254740993.0, "y": 1.7976931348623159e308, "v": 1E-5}'
)
EXPRESSIONS: Final = (
    # integers, floored division and modulo of negatives, booleans as 0 and 1
    "a + b * 3 - -a",
    "(a + b) * (a - b)",
    "a // 2",
    "-a // 2",
    "a // b",
    "-a // b",
    "a % 3",
    "-a % 3",
    "a % b",
    "-a % b",
    "b % a",
    "t + t",
    "t * a - f",
    "-t",
    "1_000 * a",
    "big * big + 1",
    "big // a % 1000",
    "a // z",
    "a % f",
    "a * n",
    "s + s",
    "l * 2",
    "d * 2",
    "x * 2",
    "a + (b - n) * 2",
    "a - (b - c)",
    # comparisons, chained, with is, in, not in
    "a > b",
    "b < z < a",
    "z < a < b",
    "a == 7 == a",
    "t == 1",
    "f == 0 != t",
    "n is None",
    "n is not None",
    "a is None",
    "t is True",
    "2 in l",
    "t in l",
    "4 not in l",
    "'b' in s",
    "'k' in d",
    "5 in d",
    "a in s",
    "a in n",
    "l in d",
    "[1, 2] < [1, 3]",
    "[1, 2] < [1]",
    "m[0] < m[1]",
    "s < 'abd'",
    "x > 2",
    "x == 2.5",
    "w < g",
    "w > g",
    "h == 9007199254740992",
    "h == 9007199254740993",
    "y > big * big",
    "min(x, a)",
    "max(x, 3)",
    "[w, h, y, v]",
    "a < s",
    "n < a",
    "[n] < [a]",
    "not a == b",
    # and, or, not: the value that decided
    "a and b",
    "z and b",
    "z or n",
    "n or e or s",
    "e or [a]",
    "not z",
    "not l and a",
    "a if t else b",
    "a if e else b if n else s",
    "(a if f else b) * 2",
    # calls, subscripts, lists
    "min(a, b)",
    "max(a, b, z)",
    "min(l)",
    "max(s)",
    "min(t, 1)",
    "max(1, t)",
    "len(l) + len(s) + len(d)",
    "len(q)",
    "l[0] + l[-1]",
    "l[t]",
    "l[3]",
    "l[-4]",
    "s[1]",
    "d['k']",
    "d['j'][0]",
    "d['x']",
    "d[0]",
    "n[0]",
    "a[0]",
    "l['a']",
    "e[min(a, len(e) - 1)]",
    "[a, b, [s]]",
    "(a, b)",
    "[]",
    "min(e)",
    "min(a, s)",
    "len(a)",
    "missing + 1",
    "a + missing",
    "d",
    "q",
    "x",
    "'x' 'y'",
    '"don\'t"',
    "b if a > b and not (l[0] == 2 or len(s) < 3) else -b",
    "min(a * 2, max(l) + big // big)",
    # the key of a failed expression: its node as ast.unparse writes it, cut at 60 characters
    "a + b * n",
    "(a + b) * n",
    "a - (b - n) - (a - n)",
    "n - (a - b)",
    "(a - b) - n",
    "n * (a // b) % 2",
    "n // (a * b)",
    "--a * n",
    "(a if t else b) * n",
    "(a + b) * 2 < s",
    "-(a + b) < n",
    "(not a) < s",
    "(a and b) < s",
    "b < a < s",
    "l[0] < (a or s) < s",
    "d['j'] < [s]",
    "'it\\'s' < a",
    "(l + l)[0]",
    "d['j'][1]",
    "[a, (b, s)][1][0]",
    "[a, (b, s)][5]",
    "(a,)[1]",
    "x[0]",
    "l[len(l)]",
    "a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a < s",
    "[a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a]",
    # what Python cannot evaluate (its own TypeError or ValueError): no vector
    "min(a, s)",
    "len(a)",
    "-n",
)


def expression_vectors() -> list[dict[str, Any]]:
    """Each expression of EXPRESSIONS over EXPRESSION_VALUES, evaluated and read as a count."""
    values = json.loads(EXPRESSION_VALUES)
    vectors = []
    for expression in EXPRESSIONS:
        for count in (False, True):
            scope = recipes.Scope(values, "config.json")
            try:
                value = scope.count(expression) if count else scope.evaluate(expression)
            except ConfigError as error:
                expected = {"valid": False, "reason": error.reason, "key": error.values.get("key")}
            except (TypeError, ValueError):
                continue  # Python's own error, no refusal: no recipe may hold it
            else:
                expected = {"valid": True, "repr": repr(value)}
            vectors.append(
                {
                    "name": "expression",
                    "expression": expression,
                    "values": EXPRESSION_VALUES,
                    "count": count,
                    "expected": expected,
                }
            )
    return vectors
