"""iteragpu.training.naming without torch: every family and wrapper named and classed from the
table, the towers' and projectors' tensors summing to the counts `iteragpu model` states, and
the rules PEFT applies beyond Llama (its MoE conversion, LoRA on parameters, Mamba's refusals)
refused on one line with their reason (tests/training/test_families_torch.py proves the names
against Transformers and PEFT on the meta device)."""

from __future__ import annotations

from typing import Any

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.models.config import parse_config
from iteragpu.models.parameters import count_parameters
from iteragpu.models.recipe import recipe_types
from iteragpu.models.towers import wrapper_types
from iteragpu.training.adapters import train_tensors
from iteragpu.training.naming import KINDS, family_naming, model_tensors, table
from iteragpu.training.records import TrainRequest

# Each wrapper's class defaults (the text config's layers, heads and width given; the class's
# own tower), as tests/models/test_wrappers.py reads them.
WRAPPER_TEXT = {
    "gemma3": ("gemma3_text", 26, 8, 2304),
    "llama4": ("llama4_text", 48, 40, 5120),
    "llava": ("llama", 32, 32, 4096),
    "mistral3": ("mistral", 40, 32, 5120),
    "qwen2_5_vl": ("qwen2_5_vl_text", 80, 64, 8192),
    "qwen2_vl": ("qwen2_vl_text", 80, 64, 8192),
    "qwen3_vl": ("qwen3_vl_text", 32, 32, 4096),
}
TINY: dict[str, Any] = {
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
MIXTRAL = {**TINY, "model_type": "mixtral", "num_local_experts": 4}


def _wrapper(model_type: str) -> dict[str, Any]:
    text, layers, heads, width = WRAPPER_TEXT[model_type]
    return {
        "model_type": model_type,
        "text_config": {
            "model_type": text,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "hidden_size": width,
        },
    }


def _refused(raw: dict[str, Any], request: TrainRequest) -> InputError:
    with pytest.raises(InputError) as caught:
        train_tensors(parse_config(raw), request)
    assert "\n" not in str(caught.value)
    return caught.value


def test_the_table_names_known_classes_and_every_family_resolves() -> None:
    for entry in [*table()["families"].values(), *table()["towers"].values()]:
        assert set(entry.get("modules", {}).values()) <= set(KINDS)
    for model_type in table()["families"]:
        assert model_type in recipe_types()
    for model_type in recipe_types():
        naming = family_naming(model_type)
        assert "{layer}" in naming.layer and naming.layer.startswith(naming.outer)


@pytest.mark.parametrize("model_type", sorted(WRAPPER_TEXT))
def test_a_wrapper_holds_its_tower_projector_and_decoder(model_type: str) -> None:
    assert set(WRAPPER_TEXT) == set(wrapper_types())
    config = parse_config(_wrapper(model_type))
    params = model_tensors(config).params
    assert len({p.name for p in params}) == len(params)
    assert sum(p.elements for p in params) == count_parameters(config)
    # The whole model trains in full: tower and projector too.
    tensors = train_tensors(config, TrainRequest(method="full"))
    assert sum(t.elements for t in tensors if t.trainable) == count_parameters(config)


def test_all_linear_on_a_wrapper_wraps_the_tower_and_qlora_quantizes_it() -> None:
    config = parse_config(_wrapper("llava"))
    held = {
        t.name: t
        for t in train_tensors(
            config, TrainRequest(method="lora", lora_r=4, lora_targets=("all-linear",))
        )
    }
    wrapped = {n.removesuffix(".lora_A.default.weight") for n in held if ".lora_A." in n}
    tower = [n for n in wrapped if n.startswith("model.vision_tower.")]
    assert len(tower) == 24 * 6  # q, k, v, out, fc1, fc2 in each of CLIP's 24 layers
    assert {
        "model.multi_modal_projector.linear_1",
        "model.multi_modal_projector.linear_2",
    } <= wrapped
    assert "lm_head" not in wrapped
    quantized = train_tensors(config, TrainRequest(method="qlora", lora_targets=("q_proj",)))
    packed = {t.name for t in quantized if t.role == "quantized"}
    assert "model.vision_tower.encoder.layers.0.mlp.fc1.weight" in packed
    assert "lm_head.weight" not in packed
    # The patch convolution and position embedding stay unquantized, cast to float32.
    patch = next(t for t in quantized if t.name.endswith("patch_embedding.weight"))
    assert (patch.role, patch.dtype) == ("base", "float32")


def test_a_moe_s_targets_are_converted_as_peft_converts_them() -> None:
    # all-linear: attention LoRA, the router and both fused experts wrapped as parameters, the
    # fused gate_up_proj (w1 and w3 in Transformers 4) at twice the rank.
    held = {
        t.name: t
        for t in train_tensors(
            parse_config(MIXTRAL),
            TrainRequest(method="lora", lora_r=2, lora_targets=("all-linear",)),
        )
    }
    inner = "model.layers.0.mlp.experts.base_layer."
    assert held[inner + "lora_A.default.weight"].shape == (2 * 2 * 4, 64)  # 2r x experts, in
    assert held[inner + "lora_B.default.weight"].shape == (2 * 128, 2 * 2 * 4)
    assert held["model.layers.0.mlp.experts.lora_A.default.weight"].shape == (2 * 4, 128)
    assert held["model.layers.0.mlp.gate.lora_A.default.weight"].shape == (2, 64)
    assert held["model.layers.0.mlp.gate.lora_B.default.weight"].shape == (4, 2)
    assert held[inner + "base_layer.gate_up_proj"].trainable is False
    # No target named: PEFT's defaults are not applied after the conversion.
    assert _refused(MIXTRAL, TrainRequest(method="lora")).reason == "lora_targets_converted_none"
    # One of a fused pair alone.
    qwen3_moe = {**TINY, "model_type": "qwen3_moe", "num_experts": 4, "moe_intermediate_size": 32}
    error = _refused(qwen3_moe, TrainRequest(method="lora", lora_targets=("gate_proj",)))
    assert (error.reason, error.values["missing"]) == ("lora_targets_fused", "up_proj")
    # DoRA on wrapped parameters.
    error = _refused(MIXTRAL, TrainRequest(method="dora", lora_targets=("all-linear",)))
    assert error.reason == "lora_parameters_dora"


def test_lora_on_named_parameters() -> None:
    llama4 = {
        **TINY,
        "model_type": "llama4_text",
        "num_local_experts": 4,
        "interleave_moe_layer_step": 1,
    }
    request = TrainRequest(
        method="lora", lora_r=2, lora_parameters=("feed_forward.experts.gate_up_proj",)
    )
    held = {t.name: t for t in train_tensors(parse_config(llama4), request)}
    # Llama 4 holds [experts, in, 2 x inter] and PEFT reads [experts, out, in]: it swaps them.
    adapter = held["model.layers.0.feed_forward.experts.lora_A.default.weight"]
    assert adapter.shape == (2 * 4, 2 * 128)
    for bad, reason in (
        (("nothing.here",), "lora_parameter_unknown"),
        (("input_layernorm.weight",), "lora_parameter_shape"),
        (("q_proj.weight",), "lora_parameter_wrapped"),
    ):
        error = _refused(
            llama4,
            TrainRequest(method="lora", lora_targets=("q_proj",), lora_parameters=bad),
        )
        assert error.reason == reason, bad


def test_what_peft_refuses_beyond_llama_is_refused() -> None:
    mamba = {**TINY, "model_type": "mamba", "state_size": 8}
    error = _refused(mamba, TrainRequest(method="lora", lora_targets=("all-linear",)))
    assert (error.reason, error.values["module"]) == (
        "lora_target_mamba",
        "'backbone.layers.0.mixer.out_proj'",
    )
    assert train_tensors(parse_config(mamba), TrainRequest(method="lora", lora_targets=("x_proj",)))
    for text in ("qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text"):
        error = _refused({**TINY, "model_type": text}, TrainRequest())
        assert error.reason == "no_causal_lm"
    # Falcon's linears are FalconLinear, a subclass: LoRA wraps them, bitsandbytes does not.
    falcon = {**TINY, "model_type": "falcon", "new_decoder_architecture": True}
    qlora = train_tensors(parse_config(falcon), TrainRequest(method="qlora"))
    assert not [t for t in qlora if t.role == "quantized"]
    assert [t for t in qlora if t.role == "adapter"]


def test_gpt2_s_conv1d_is_read_in_then_out() -> None:
    gpt2 = {"model_type": "gpt2", "vocab_size": 256, "n_embd": 64, "n_head": 4, "n_layer": 2}
    held = {t.name: t for t in train_tensors(parse_config(gpt2), TrainRequest(method="lora"))}
    # Conv1D c_attn holds [in 64, out 192]: lora_A [r, 64], lora_B [192, r].
    assert held["transformer.h.0.attn.c_attn.lora_A.default.weight"].shape == (8, 64)
    assert held["transformer.h.0.attn.c_attn.lora_B.default.weight"].shape == (192, 8)
    assert held["transformer.h.0.attn.c_attn.base_layer.weight"].shape == (64, 192)
