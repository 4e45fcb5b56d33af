"""Every family described as data (iteragpu.models.recipe, `families/<type>.json`) against the
real thing: Transformers (pinned) building the family's config on the meta device.

For each family, two configs: the config class's own defaults (`AutoConfig.for_model`: a
published size for most classes: Llama-2-7B, Mixtral-8x7B...) saved whole, and the same with
only the keys the reader never defaults (the layer count, heads and hidden size), so that the
recipe's defaults are checked too. Each must give what Transformers builds:
- `parameters`: `sum(p.numel() for p in model.parameters())`, tied weights once;
- active parameters: the total minus the routed experts not chosen (`num_experts_per_tok` of
  the experts' parameters per token, as the config names them);
- bytes at bfloat16: `sum(numel * element_size)` of the model built at bfloat16, which keeps
  some modules in float32 (DeepSeek-V3's router);
- the layer kinds: the config's `layer_types` as Transformers fills them in.

Tiny random models of the same families run with their cache on CPU in
tests/models/test_models_transformers.py. Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters
from iteragpu.models.recipe import recipe_types

pytestmark = pytest.mark.transformers

# What the reader never defaults: a config without these is refused.
REQUIRED = ("model_type", "num_hidden_layers", "num_attention_heads", "hidden_size")
# The config keys that name the routed experts and how many a token uses, by family.
EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
PER_TOKEN = ("num_experts_per_tok", "moe_k", "top_k", "moe_top_k")
ROUTED = re.compile(r"\.experts\.(?!.*shared)")


# Config classes whose defaults Transformers 5.24 itself cannot build a model from, and the one
# key each needs (no size changes): DbrxAttentionConfig has no rope_theta default
# (modeling_dbrx.py reads it), MinistralConfig's head_dim default is None (modeling_ministral.py
# raises None to a power); 128 is what the reader derives, 4096 // 32.
BUILDABLE: dict[str, dict[str, Any]] = {
    "dbrx": {"attn_config": {"rope_theta": 10000.0}},
    "ministral": {"head_dim": 128},
}


# Text decoders Transformers builds only inside their multimodal wrapper (no ForCausalLM class):
# the wrapper's language model and its head, built from the text config.
WRAPPED: dict[str, str] = {
    "qwen2_vl_text": "qwen2_vl",
    "qwen2_5_vl_text": "qwen2_5_vl",
    "qwen3_vl_text": "qwen3_vl",
}


def _built(model_type: str, **changes: Any) -> tuple[Any, Any]:
    """The family's config and its model on the meta device, built once per process (the
    counts, the recorded figures and the tensors' shapes all read the same build)."""
    return _build(model_type, json.dumps(changes, sort_keys=True))


@cache
def _build(model_type: str, changes_text: str) -> tuple[Any, Any]:
    changes = json.loads(changes_text)
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    settings = {**BUILDABLE.get(model_type, {}), **changes}
    config = transformers.AutoConfig.for_model(model_type, **settings)
    with torch.device("meta"):
        if model_type in WRAPPED:
            outer = transformers.AutoConfig.for_model(
                WRAPPED[model_type], text_config=config.to_dict()
            )
            whole = transformers.AutoModelForImageTextToText.from_config(
                outer, dtype=torch.bfloat16
            )
            model = torch.nn.ModuleDict(
                {"model": whole.model.language_model, "lm_head": whole.lm_head}
            )
            return config, model
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    return config, model


def _first(config: Any, names: tuple[str, ...]) -> int | None:
    for name in names:
        # DBRX keeps its experts in a nested ffn_config.
        value = getattr(config, name, getattr(getattr(config, "ffn_config", None), name, None))
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _grouped(model_types: list[str] | tuple[str, ...]) -> list[Any]:
    """One xdist group per family: its tests share one meta build (`_build`'s cache)."""
    return [pytest.param(t, marks=pytest.mark.xdist_group(t)) for t in model_types]


@pytest.mark.parametrize("model_type", _grouped(recipe_types()))
def test_each_family_counts_what_transformers_builds(model_type: str) -> None:
    config, model = _built(model_type)
    full = config.to_dict()
    aliases = getattr(config, "attribute_map", {})  # GPT-2's hidden_size is n_embd
    # (A family without attention, Mamba, has no heads to give.)
    minimal = {
        aliases.get(key, key): full[aliases.get(key, key)]
        for key in REQUIRED
        if aliases.get(key, key) in full
    }
    parameters = {id(p): p for p in model.parameters()}.values()
    built = sum(p.numel() for p in parameters)
    at_bf16 = sum(p.numel() * p.element_size() for p in parameters)
    experts, per_token = _first(config, EXPERTS), _first(config, PER_TOKEN)
    routed = sum(p.numel() for n, p in model.named_parameters() if ROUTED.search(n))
    if not routed:
        active: int | None = built
    elif per_token is None:  # DeepSeek-V2's class leaves num_experts_per_tok unset
        active = None
    else:
        active = built - routed + routed // experts * per_token  # type: ignore[operator]
    for raw in (full, minimal):
        read = parse_config(raw)
        assert count_parameters(read) == built, (model_type, raw is minimal)
        assert active_parameters(read) == active, model_type
        kept = float32_parameters(read)
        assert (built - kept) * 2 + kept * 4 == at_bf16, model_type
        kinds = getattr(config, "layer_types", None)
        if kinds is not None:
            # As cache_utils.get_layer_types_and_kwargs: a layer that reads another's KV
            # (Gemma-3n's kv_sharing_modes 'reuse') is a DummyLayer in the cache.
            modes = getattr(config, "kv_sharing_modes", None) or [None] * len(kinds)
            kinds = ["dummy" if m == "reuse" else k for k, m in zip(kinds, modes, strict=True)]
            assert list(read.layer_kinds) == list(kinds), model_type


def _recorded() -> dict[str, int]:
    """The counts the torch-free tests hold for each family's class defaults."""
    import test_families_dense_a as dense_a
    import test_families_dense_b as dense_b
    import test_families_moe as moe
    import test_families_state as state

    counts = {t: v[3] for t, v in {**dense_a.DEFAULTS, **dense_b.DEFAULTS}.items()}
    counts.update({t: v[1] for t, v in {**moe.DEFAULTS, **state.DEFAULTS}.items()})
    return counts


@pytest.mark.parametrize("model_type", _grouped(sorted(_recorded())))
def test_the_counts_the_torch_free_tests_hold_are_what_transformers_builds(
    model_type: str,
) -> None:
    # The default suite runs without torch, so it keeps these figures; they stay Transformers'.
    _, model = _built(model_type)
    built = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    assert _recorded()[model_type] == built
