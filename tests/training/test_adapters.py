"""iteragpu.training.adapters without torch: the rules on a tiny Llama, and bad input refused on
one line with its reason code (tests/training/test_adapters_torch.py proves the rules against
PEFT, bitsandbytes and Transformers)."""

from __future__ import annotations

from typing import Any

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.models.config import parse_config
from iteragpu.training.adapters import train_tensors, weight_dtype
from iteragpu.training.records import TrainRequest

TINY: dict[str, Any] = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
P = 106_816  # the tiny Llama's parameters (the measured figure), 21 tensors


def _tensors(request: TrainRequest, raw: dict[str, Any] = TINY) -> dict[str, Any]:
    return {t.name: t for t in train_tensors(parse_config(raw), request)}


@pytest.mark.parametrize(
    ("precision", "dtype"),
    [
        ("fp32", "float32"),
        ("autocast-bf16", "float32"),
        ("autocast-fp16", "float32"),
        ("bf16", "bfloat16"),
        ("bf16-master", "bfloat16"),
        ("fp16", "float16"),
    ],
)
def test_full_trains_every_tensor_in_the_precision_s_dtype(precision: str, dtype: str) -> None:
    held = _tensors(TrainRequest(method="full", precision=precision))  # type: ignore[arg-type]
    assert len(held) == 21
    assert sum(t.elements for t in held.values()) == P
    assert {(t.dtype, t.role, t.trainable) for t in held.values()} == {(dtype, "base", True)}
    assert weight_dtype(precision) == dtype
    assert "model.layers.1.mlp.down_proj.weight" in held and "lm_head.weight" in held


def test_lora_defaults_to_peft_s_llama_targets_in_float32() -> None:
    held = _tensors(TrainRequest(method="lora", lora_r=8))
    adapters = {n: t for n, t in held.items() if t.role == "adapter"}
    assert sorted(adapters) == sorted(
        f"model.layers.{i}.self_attn.{m}.lora_{ab}.default.weight"
        for i in (0, 1)
        for m in ("q_proj", "v_proj")
        for ab in "AB"
    )
    assert held["model.layers.0.self_attn.v_proj.lora_A.default.weight"].shape == (8, 64)
    assert held["model.layers.0.self_attn.v_proj.lora_B.default.weight"].shape == (32, 8)
    assert {t.dtype for t in adapters.values()} == {"float32"}
    frozen = held["model.layers.0.self_attn.q_proj.base_layer.weight"]
    assert (frozen.dtype, frozen.trainable) == ("bfloat16", False)
    assert sum(t.elements for t in held.values() if t.trainable) == 2 * (
        8 * 64 + 64 * 8 + 8 * 64 + 32 * 8
    )


def test_all_linear_leaves_out_the_head_and_dora_adds_a_magnitude() -> None:
    held = _tensors(TrainRequest(method="dora", lora_r=4, lora_targets=("all-linear",)))
    wrapped = {n.rsplit(".lora_A", 1)[0] for n in held if ".lora_A." in n}
    assert len(wrapped) == 14 and "lm_head" not in wrapped
    assert held["model.layers.0.mlp.down_proj.lora_magnitude_vector.default.weight"].shape == (64,)


def test_qlora_packs_every_linear_but_the_head() -> None:
    held = _tensors(TrainRequest(method="qlora", lora_r=4, double_quant=True))
    weight = held["model.layers.0.mlp.gate_proj.weight"]
    assert (weight.shape, weight.dtype, weight.role) == ((4096, 1), "uint8", "quantized")
    assert held["model.layers.0.mlp.gate_proj.weight.absmax"].shape == (128,)
    assert held["model.layers.0.mlp.gate_proj.weight.absmax"].dtype == "uint8"
    assert held["model.layers.0.mlp.gate_proj.weight.nested_absmax"].shape == (1,)
    assert held["model.layers.0.mlp.gate_proj.weight.nested_quant_map"].shape == (256,)
    assert held["lm_head.weight"].dtype == "float32"  # upcast by prepare_model_for_kbit_training
    assert held["model.norm.weight"].dtype == "float32"
    single = _tensors(TrainRequest(method="qlora", lora_r=4))
    assert single["model.layers.0.mlp.gate_proj.weight.absmax"].dtype == "float32"


def test_modules_to_save_keeps_the_original_frozen_beside_a_trainable_copy() -> None:
    held = _tensors(TrainRequest(method="lora", modules_to_save=("lm_head",)))
    assert not held["lm_head.original_module.weight"].trainable
    copy = held["lm_head.modules_to_save.default.weight"]
    assert (copy.shape, copy.dtype, copy.role, copy.trainable) == (
        (256, 64),
        "bfloat16",
        "saved_copy",
        True,
    )
    tied = _tensors(
        TrainRequest(method="lora", modules_to_save=("lm_head",)),
        {**TINY, "tie_word_embeddings": True},
    )
    assert (
        "lm_head.modules_to_save.default.weight" in tied
        and "lm_head.original_module.weight" not in tied
    )


def test_embeddings_and_a_tied_head_take_lora() -> None:
    held = _tensors(TrainRequest(method="dora", lora_r=4, lora_targets=("embed_tokens",)))
    assert held["model.embed_tokens.lora_embedding_A.default"].shape == (4, 256)
    assert held["model.embed_tokens.lora_embedding_B.default"].shape == (64, 4)
    assert held["model.embed_tokens.lora_magnitude_vector.default.weight"].shape == (64,)
    tied = {**TINY, "tie_word_embeddings": True}
    head = _tensors(TrainRequest(method="lora", lora_r=4, lora_targets=("lm_head",)), tied)
    assert head["lm_head.lora_B.default.weight"].shape == (256, 4)
    assert "lm_head.base_layer.weight" not in head  # the embedding's weight, listed once


def test_the_bias_options() -> None:
    biased = {**TINY, "attention_bias": True}
    every = _tensors(TrainRequest(method="lora", lora_bias="all"), biased)
    assert every["model.layers.0.self_attn.k_proj.bias"].trainable
    only = _tensors(TrainRequest(method="lora", lora_bias="lora_only"), biased)
    assert only["model.layers.0.self_attn.q_proj.base_layer.bias"].trainable
    assert not only["model.layers.0.self_attn.k_proj.bias"].trainable


def _refused(request: TrainRequest, raw: dict[str, Any] = TINY) -> InputError:
    with pytest.raises(InputError) as caught:
        train_tensors(parse_config(raw), request)
    assert "\n" not in str(caught.value)
    return caught.value


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        (TrainRequest(method="lora", lora_r=0), "lora_rank"),
        (TrainRequest(method="dora", lora_r=-2), "lora_rank"),
        (TrainRequest(method="lora", lora_targets=("q_proj", "qkv_proj")), "lora_target_unknown"),
        (TrainRequest(method="lora", lora_targets=("all-linear", "q_proj")), "lora_target_unknown"),
        (TrainRequest(method="lora", lora_targets=("input_layernorm",)), "lora_target_not_linear"),
        (TrainRequest(method="lora", lora_targets=("mlp",)), "lora_target_not_linear"),
        (TrainRequest(method="lora", lora_targets=()), "lora_targets_empty"),
        (TrainRequest(method="lora", modules_to_save=("score",)), "modules_to_save_unknown"),
        (
            TrainRequest(method="lora", modules_to_save=("mlp", "up_proj")),
            "modules_to_save_overlap",
        ),
        (TrainRequest(method="qlora", modules_to_save=("o_proj",)), "modules_to_save_quantized"),
        (TrainRequest(method="lora", adapter_dtype="int8"), "adapter_dtype"),
    ],
)
def test_bad_requests_are_refused_on_one_line(request_: TrainRequest, reason: str) -> None:
    assert _refused(request_).reason == reason


def test_qlora_on_a_quantized_checkpoint_is_refused() -> None:
    quantized = {
        **TINY,
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    }
    error = _refused(TrainRequest(method="qlora"), quantized)
    assert error.reason == "qlora_quantized_checkpoint"
    assert "gptq" in str(error)
    assert _refused(TrainRequest(method="full"), quantized).reason == "quantized_checkpoint"


def test_a_family_without_default_targets_or_stated_tensors_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ministral = {**TINY, "model_type": "ministral", "head_dim": 16}
    assert _refused(TrainRequest(method="lora"), ministral).reason == "lora_targets_no_default"
    assert _tensors(TrainRequest(method="lora", lora_targets=("q_proj",)), ministral)
    # A family whose recipe states only counts: parameter_tensors answers None.
    import iteragpu.models.shapes as shapes

    monkeypatch.setattr(shapes, "parameter_tensors", lambda config: None)
    error = _refused(TrainRequest(method="full"))
    assert (error.reason, error.values) == ("no_tensors", {"family": "llama"})
