"""Every multimodal wrapper described as data (iteragpu.models.towers: `families/wrappers/`,
`families/towers/`) against the real thing: Transformers (pinned) building the wrapper's config
on the meta device, its vision tower and projector included.

For each wrapper: the config class's defaults (`AutoConfig.for_model(t).to_dict()`, saved
whole), a minimal config (the wrapper's model_type, a text_config and a vision_config with only
their model_type, layers, heads and width: every other key takes its class's default), and a few
published shapes and variants (LLaVA-1.5-7B, LLaVA on a Mistral decoder with a Pixtral tower,
several vision feature layers, heads tied one way or the other). Each must give what
Transformers builds:
- `parameters`: `sum(p.numel() for p in model.parameters())`, tied weights once;
- per top module (vision tower, projector, language model, head): the parameters each holds
  that no module before it holds (a tied head holds none);
- the active parameters (the text decoder's routed experts not chosen left out: the tower and
  projector are all used) and the bytes at bfloat16.

The torch-free tests (tests/models/test_wrappers.py) hold the default configs' figures; the last
test here proves them. Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters
from iteragpu.models.towers import wrapper_counts, wrapper_types

pytestmark = pytest.mark.transformers

ROUTED = re.compile(r"\.experts\.(?!.*shared)")
WRAPPERS = ("gemma3", "llama4", "llava", "mistral3", "qwen2_5_vl", "qwen2_vl", "qwen3_vl")


def _text(model_type: str, heads: int = 8) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "num_hidden_layers": 2,
        "num_attention_heads": heads,
        "hidden_size": 64 * heads,
    }


def _vision(
    model_type: str,
    layers: str = "num_hidden_layers",
    heads: str = "num_attention_heads",
    width: str = "hidden_size",
) -> dict[str, Any]:
    return {"model_type": model_type, layers: 2, heads: 4, width: 256}


# Per wrapper: a text_config and a vision_config with only their model_type, layers, heads and
# width (the class's own names for them).
MINIMAL: dict[str, dict[str, Any]] = {
    "llava": {"text_config": _text("llama"), "vision_config": _vision("clip_vision_model")},
    "mistral3": {"text_config": _text("mistral"), "vision_config": _vision("pixtral")},
    "gemma3": {
        "text_config": _text("gemma3_text"),
        "vision_config": _vision("siglip_vision_model"),
    },
    "qwen2_vl": {
        "text_config": _text("qwen2_vl_text"),
        "vision_config": _vision("qwen2_vl_vision", "depth", "num_heads", "embed_dim"),
    },
    "qwen2_5_vl": {
        "text_config": _text("qwen2_5_vl_text"),
        "vision_config": _vision("qwen2_5_vl_vision", "depth", "num_heads"),
    },
    "qwen3_vl": {
        "text_config": _text("qwen3_vl_text", heads=32),
        "vision_config": _vision("qwen3_vl_vision", "depth", "num_heads"),
    },
    "llama4": {
        "text_config": _text("llama4_text"),
        "vision_config": _vision("llama4_vision_model"),
    },
}

# Published shapes and variants: each a whole config.json (the keys that matter).
LLAVA_15_7B: dict[str, Any] = {
    "model_type": "llava",
    "image_token_index": 32000,
    "projector_hidden_act": "gelu",
    "vision_feature_layer": -2,
    "vision_feature_select_strategy": "default",
    "text_config": {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 32,
        "vocab_size": 32064,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05,
    },
    "vision_config": {
        "model_type": "clip_vision_model",
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "image_size": 336,
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "patch_size": 14,
        "projection_dim": 768,
    },
}
LLAVA_MISTRAL_PIXTRAL: dict[str, Any] = {  # Pixtral-12B as a LLaVA (mistral-community)
    "model_type": "llava",
    "image_token_index": 10,
    "projector_hidden_act": "gelu",
    "vision_feature_layer": -1,
    "text_config": {
        "model_type": "mistral",
        "hidden_size": 5120,
        "head_dim": 128,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "vocab_size": 131072,
        "max_position_embeddings": 1024000,
        "rope_theta": 1000000000.0,
        "sliding_window": None,
    },
    "vision_config": {
        "model_type": "pixtral",
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "image_size": 1024,
        "patch_size": 16,
        "head_dim": 64,
    },
}
VARIANTS: dict[str, dict[str, Any]] = {
    "llava-1.5-7b": LLAVA_15_7B,
    "llava-mistral-pixtral": LLAVA_MISTRAL_PIXTRAL,
    "llava-feature-layers-unbiased-tied-text": {
        **MINIMAL["llava"],
        "model_type": "llava",
        "vision_feature_layer": [-2, -5, -8],
        "multimodal_projector_bias": False,
        "text_config": {**MINIMAL["llava"]["text_config"], "tie_word_embeddings": True},
    },
    "llava-siglip": {
        "model_type": "llava",
        "text_config": _text("llama"),
        "vision_config": {**_vision("siglip_vision_model"), "vision_use_head": False},
    },
    "gemma3-published-tower": {
        "model_type": "gemma3",
        "mm_tokens_per_image": 256,
        "text_config": _text("gemma3_text"),
        "vision_config": {
            "model_type": "siglip_vision_model",
            "hidden_size": 1152,
            "image_size": 896,
            "intermediate_size": 4304,
            "num_attention_heads": 16,
            "num_hidden_layers": 27,
            "patch_size": 14,
            "vision_use_head": False,
        },
    },
    "mistral3-untied-two-layers": {
        **MINIMAL["mistral3"],
        "model_type": "mistral3",
        "tie_word_embeddings": False,
        "vision_feature_layer": [-1, -2],
        "spatial_merge_size": 3,
    },
    "qwen2_vl-tied-in-text": {
        **MINIMAL["qwen2_vl"],
        "model_type": "qwen2_vl",
        "text_config": {**MINIMAL["qwen2_vl"]["text_config"], "tie_word_embeddings": True},
        "vision_config": {**MINIMAL["qwen2_vl"]["vision_config"], "hidden_size": 512},
    },
    "qwen2_5_vl-sliding": {
        **MINIMAL["qwen2_5_vl"],
        "model_type": "qwen2_5_vl",
        "text_config": {
            **MINIMAL["qwen2_5_vl"]["text_config"],
            "use_sliding_window": True,
            "max_window_layers": 1,
        },
        "vision_config": {**MINIMAL["qwen2_5_vl"]["vision_config"], "out_hidden_size": 512},
    },
    "qwen3_vl-tied-two-deepstack": {
        **MINIMAL["qwen3_vl"],
        "model_type": "qwen3_vl",
        "tie_word_embeddings": True,
        "vision_config": {
            **MINIMAL["qwen3_vl"]["vision_config"],
            "deepstack_visual_indexes": [0, 1],
            "out_hidden_size": 2048,
        },
    },
    # Llama 4's head is its Llama4ForCausalLM's: tied by the text config, not the wrapper's key.
    "llama4-tied-outside": {
        **MINIMAL["llama4"],
        "model_type": "llama4",
        "tie_word_embeddings": True,
    },
    "llama4-tied-in-text": {
        **MINIMAL["llama4"],
        "model_type": "llama4",
        "text_config": {**MINIMAL["llama4"]["text_config"], "tie_word_embeddings": True},
    },
}


def _build(config: Any) -> Any:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with torch.device("meta"):
        return transformers.AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)


def _config(raw: dict[str, Any]) -> Any:
    transformers = pytest.importorskip("transformers")
    rest = {key: value for key, value in raw.items() if key != "model_type"}
    return transformers.AutoConfig.for_model(raw["model_type"], **rest)


def _modules(model: Any, names: list[str]) -> list[tuple[str, int]]:
    """Each top module's parameters that no module before it holds (a tied head: none)."""
    seen: set[int] = set()
    result = []
    for name in names:
        fresh = [p for p in model.get_submodule(name).parameters() if id(p) not in seen]
        seen.update(id(p) for p in fresh)
        result.append((name, sum(p.numel() for p in fresh)))
    return result


def _active(model: Any, built: int) -> int:
    """The parameters used per token: the text decoder's routed experts not chosen left out
    (Llama 4's); the tower and projector are all used."""
    text = model.config.text_config
    routed = sum(p.numel() for n, p in model.named_parameters() if ROUTED.search(n))
    if not routed:
        return built
    experts, per_token = text.num_local_experts, text.num_experts_per_tok
    return built - routed + routed // experts * per_token


def _check(raw: dict[str, Any], model: Any) -> tuple[int, tuple[tuple[str, int], ...]]:
    """Our counts of `raw` equal what Transformers built; returns them."""
    parameters = {id(p): p for p in model.parameters()}.values()
    built = sum(p.numel() for p in parameters)
    at_bf16 = sum(p.numel() * p.element_size() for p in parameters)
    read = parse_config(raw)
    counted = wrapper_counts(read)
    assert counted is not None
    names = [name for name, _ in counted.modules]
    assert {name for name, _ in model.named_children()} <= {n.split(".")[0] for n in names}
    assert list(counted.modules) == _modules(model, names)
    assert sum(count for _, count in counted.modules) == built
    assert count_parameters(read) == built
    assert active_parameters(read) == _active(model, built)
    kept = float32_parameters(read)
    assert (built - kept) * 2 + kept * 4 == at_bf16
    return built, counted.modules


@pytest.mark.parametrize("wrapper_type", WRAPPERS)
def test_each_wrapper_with_its_class_defaults_counts_what_transformers_builds(
    wrapper_type: str,
) -> None:
    config = _config({"model_type": wrapper_type})
    _check(config.to_dict(), _build(config))


@pytest.mark.parametrize("wrapper_type", WRAPPERS)
def test_each_wrapper_from_a_minimal_config_counts_what_transformers_builds(
    wrapper_type: str,
) -> None:
    raw = {"model_type": wrapper_type, **MINIMAL[wrapper_type]}
    _check(raw, _build(_config(raw)))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_published_shapes_and_variants_count_what_transformers_builds(name: str) -> None:
    raw = VARIANTS[name]
    _check(raw, _build(_config(raw)))


def test_every_wrapper_recipe_is_proved() -> None:
    assert wrapper_types() == WRAPPERS


@pytest.mark.parametrize("wrapper_type", WRAPPERS)
def test_the_figures_the_torch_free_tests_hold_are_what_transformers_builds(
    wrapper_type: str,
) -> None:
    # The default suite runs without torch, so it keeps these figures, and the configs it reads
    # them from (the text config's sizes, no vision_config); they stay Transformers'.
    import test_wrappers

    total, modules = test_wrappers.DEFAULTS[wrapper_type]
    names = [name for name, _ in modules]
    for config in (
        _config({"model_type": wrapper_type}),
        _config(test_wrappers.DEFAULT_CONFIGS[wrapper_type]),
    ):
        model = _build(config)
        assert sum(p.numel() for p in {id(p): p for p in model.parameters()}.values()) == total
        assert _modules(model, names) == list(modules)
    assert _check(test_wrappers.DEFAULT_CONFIGS[wrapper_type], model) == (total, modules)
