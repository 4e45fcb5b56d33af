"""Every parameter tensor a family's recipe states (iteragpu.models.shapes) against the real
thing: Transformers (pinned) building the family's config on the meta device, each tensor's name
and shape, tied weights once, float32-kept modules in float32.

The names are compared within their module: a decoder layer's `self_attn.q_proj.weight` with
Transformers' `model.layers.<i>.self_attn.q_proj.weight`; an embedding or final module's with
the parameter whose full name ends with it. Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.shapes import parameter_tensors, stated_types

pytestmark = pytest.mark.transformers

LAYER = re.compile(r"(?:^|\.)(?:layers|blocks|h)\.(\d+)\.(.+)$")  # DBRX: blocks; GPT-2, Falcon: h


# Layouts the class defaults leave off: per-head q/k norms, Falcon-40B's decoder, two AltUp
# inputs, biases, a tied head.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("stablelm", {"qk_layernorm": True, "use_qkv_bias": True}),
    ("falcon", {"new_decoder_architecture": True, "num_kv_heads": 8, "bias": True}),
    ("gemma3n_text", {"altup_num_inputs": 2, "num_kv_shared_layers": 0}),
    ("qwen3_moe", {"mlp_only_layers": [0], "tie_word_embeddings": True}),
    ("jamba", {"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 4}),
]


@pytest.mark.parametrize(
    ("model_type", "changes"),
    # Grouped per family with its counts' tests: one meta build of the class's defaults.
    [pytest.param(t, {}, id=t, marks=pytest.mark.xdist_group(t)) for t in stated_types()]
    + [pytest.param(t, c, id=f"{t}-variant") for t, c in VARIANTS],
)
def test_each_tensor_is_what_transformers_builds(model_type: str, changes: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    from test_families_transformers import _built

    # A decoder without a causal-LM class is built in its wrapper.
    config, model = _built(model_type, **changes)
    built: dict[tuple[int | None, str], tuple[tuple[int, ...], bool]] = {}
    seen: set[int] = set()
    for name, parameter in model.named_parameters():
        if id(parameter) in seen:
            continue
        seen.add(id(parameter))
        match = LAYER.search(name)
        key = (int(match.group(1)), match.group(2)) if match else (None, name)
        built[key] = (tuple(parameter.shape), parameter.dtype == torch.float32)
    stated = parameter_tensors(parse_config(config.to_dict()))
    assert stated is not None
    ours: dict[tuple[int | None, str], tuple[tuple[int, ...], bool]] = {}
    for tensor in stated:
        if tensor.layer is not None:
            key = (tensor.layer, tensor.name)
        else:
            (key,) = [
                k
                for k in built
                if k[0] is None and (k[1] == tensor.name or k[1].endswith("." + tensor.name))
            ]
        assert key not in ours, key
        ours[key] = (tensor.shape, tensor.float32)
    assert ours == built
