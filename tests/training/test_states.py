"""The training-state rules of iteragpu.training.states, without torch: what each optimizer and
precision adds per tensor, where each state lives, the totals, and the refusals. The rules are
proven against real optimizer steps in test_states_torch.py (marker `training`)."""

from __future__ import annotations

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.training.records import OPTIMIZERS, PRECISIONS, TrainRequest, TrainTensor
from iteragpu.training.states import (
    FusedUnsupportedError,
    UnknownOptimizerError,
    UnknownPrecisionError,
    UntrainableTensorError,
    shared_items,
    state_items,
    state_totals,
    weight_dtype,
)


def _llama_tiny(dtype: str) -> list[TrainTensor]:
    """The issue's tiny Llama (vocab 256, hidden 64, 2 layers, 4 heads, 2 KV heads, MLP 128)."""
    shapes: list[tuple[str, tuple[int, ...]]] = [("model.embed_tokens.weight", (256, 64))]
    for layer in range(2):
        prefix = f"model.layers.{layer}."
        shapes += [
            (prefix + "self_attn.q_proj.weight", (64, 64)),
            (prefix + "self_attn.k_proj.weight", (32, 64)),
            (prefix + "self_attn.v_proj.weight", (32, 64)),
            (prefix + "self_attn.o_proj.weight", (64, 64)),
            (prefix + "mlp.gate_proj.weight", (128, 64)),
            (prefix + "mlp.up_proj.weight", (128, 64)),
            (prefix + "mlp.down_proj.weight", (64, 128)),
            (prefix + "input_layernorm.weight", (64,)),
            (prefix + "post_attention_layernorm.weight", (64,)),
        ]
    shapes += [("model.norm.weight", (64,)), ("lm_head.weight", (256, 64))]
    return [TrainTensor(name, shape, dtype, "base", True) for name, shape in shapes]


P = 106_816


def test_tiny_llama_is_the_issues() -> None:
    tensors = _llama_tiny("float32")
    assert (len(tensors), sum(t.elements for t in tensors)) == (21, P)


@pytest.mark.parametrize(
    ("precision", "gradients", "gpu", "masters"),
    [
        ("fp32", 4 * P, 8 * P, 0),  # the issue: 16P + 84 in all
        ("autocast-bf16", 4 * P, 8 * P, 0),  # no 16-bit copy kept
        ("bf16", 2 * P, 4 * P, 0),  # the issue: 8P + 84
        ("fp16", 2 * P, 4 * P, 0),
        ("bf16-master", 2 * P, 8 * P, 4 * P),  # the issue: 20P + 84
    ],
)
def test_adamw_totals(precision: str, gradients: int, gpu: int, masters: int) -> None:
    request = TrainRequest(precision=precision, optimizer="adamw")  # type: ignore[arg-type]
    totals = state_totals(_llama_tiny(weight_dtype(precision)), request)
    assert totals.gradient_bytes == gradients
    assert totals.optimizer_gpu_bytes == gpu
    assert totals.optimizer_host_bytes == 4 * 21  # one float32 `step` per tensor, on the host
    assert (totals.master_weight_bytes, totals.master_gradient_bytes) == (masters, masters)
    weights = {"float32": 4, "bfloat16": 2, "float16": 2}[weight_dtype(precision)] * P
    assert (
        weights + totals.gpu_bytes + totals.optimizer_host_bytes
        == {
            "fp32": 16 * P + 84,
            "autocast-bf16": 16 * P + 84,
            "bf16": 8 * P + 84,
            "fp16": 8 * P + 84,
            "bf16-master": 20 * P + 84,
        }[precision]
    )


def test_autocast_fp16_adds_the_grad_scaler() -> None:
    totals = state_totals(_llama_tiny("float32"), TrainRequest(precision="autocast-fp16"))
    assert totals.optimizer_gpu_bytes == 8 * P + 4 + 4  # GradScaler: float32 scale, int32 tracker
    assert [i.name for i in shared_items([], TrainRequest(precision="autocast-fp16"))] == [
        "scale",
        "growth_tracker",
    ]


def test_fused_puts_step_on_the_gpu() -> None:
    tensors = _llama_tiny("float32")
    totals = state_totals(tensors, TrainRequest(precision="fp32", fused=True))
    assert (totals.optimizer_gpu_bytes, totals.optimizer_host_bytes) == (8 * P + 84, 0)
    amsgrad = state_totals(tensors, TrainRequest(precision="fp32", optimizer="adamw-amsgrad"))
    assert (amsgrad.optimizer_gpu_bytes, amsgrad.optimizer_host_bytes) == (12 * P, 84)


def test_adafactor_factors_two_dims_and_more() -> None:
    request = TrainRequest(precision="bf16", optimizer="adafactor", fused=False)

    def shapes(shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], str, str]]:
        tensor = TrainTensor("w", shape, "bfloat16", "base", True)
        items = state_items(tensor, request)
        return {i.name: (i.shape, i.dtype, i.device) for i in items if i.kind == "optimizer"}

    assert shapes((128, 64)) == {
        "step": ((), "float32", "host"),
        "row_var": ((128, 1), "bfloat16", "gpu"),
        "col_var": ((1, 64), "bfloat16", "gpu"),
    }
    assert shapes((8, 128, 64)) == {
        "step": ((), "float32", "host"),
        "row_var": ((8, 128, 1), "bfloat16", "gpu"),
        "col_var": ((8, 1, 64), "bfloat16", "gpu"),
    }
    assert shapes((64,)) == {
        "step": ((), "float32", "host"),
        "variance": ((64,), "bfloat16", "gpu"),
    }
    assert shapes(()) == {"step": ((), "float32", "host"), "variance": ((), "bfloat16", "gpu")}


def test_8bit_threshold_and_blocks() -> None:
    request = TrainRequest(precision="bf16", optimizer="adamw-8bit")

    def states(shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], str, int]]:
        tensor = TrainTensor("w", shape, "bfloat16", "base", True)
        items = state_items(tensor, request)
        return {i.name: (i.shape, i.dtype, i.bytes) for i in items if i.kind == "optimizer"}

    # 4,095 values: float32 states, whatever the parameter's dtype
    assert states((4095,)) == {
        "state1": ((4095,), "float32", 4 * 4095),
        "state2": ((4095,), "float32", 4 * 4095),
    }
    # 4,096 values: 8 bits, one float32 absmax per block of 256
    assert states((64, 64)) == {
        "state1": ((64, 64), "uint8", 4096),
        "state2": ((64, 64), "uint8", 4096),
        "absmax1": ((16,), "float32", 64),
        "absmax2": ((16,), "float32", 64),
    }
    # a partial last block counts whole
    assert states((4097,))["absmax1"] == ((17,), "float32", 68)
    small = TrainTensor("n", (64,), "bfloat16", "base", True)
    assert shared_items([small], request) == ()  # no 8-bit tensor: no quantization maps
    big = TrainTensor("w", (64, 64), "bfloat16", "base", True)
    assert [(i.name, i.bytes, i.device) for i in shared_items([big, big], request)] == [
        ("qmap1", 1024, "gpu"),
        ("qmap2", 1024, "gpu"),
    ]


def test_8bit_tiny_llama_total() -> None:
    tensors = _llama_tiny("bfloat16")
    totals = state_totals(tensors, TrainRequest(precision="bf16", optimizer="adamw-8bit"))
    eight = [t.elements for t in tensors if t.elements >= 4096]
    small = [t.elements for t in tensors if t.elements < 4096]
    assert len(eight) == 12 and sum(small) == 4 * 2048 + 5 * 64  # k_proj, v_proj, the norms
    expected = sum(2 * n + 2 * 4 * -(-n // 256) for n in eight) + 8 * sum(small) + 2048
    assert (totals.optimizer_gpu_bytes, totals.optimizer_host_bytes) == (expected, 0)


def test_sgd() -> None:
    tensor = TrainTensor("w", (4, 4), "float16", "base", True)
    assert [i.name for i in state_items(tensor, TrainRequest(optimizer="sgd"))] == ["grad"]
    momentum = state_items(tensor, TrainRequest(optimizer="sgd-momentum", fused=True))
    assert [(i.name, i.dtype, i.bytes) for i in momentum] == [
        ("grad", "float16", 32),
        ("momentum_buffer", "float16", 32),
    ]


def test_master_copies_only_16_bit_tensors() -> None:
    request = TrainRequest(precision="bf16-master", optimizer="adamw")
    base = TrainTensor("w", (8, 4), "bfloat16", "base", True)
    adapter = TrainTensor("lora_A", (2, 4), "float32", "adapter", True)
    assert [(i.kind, i.dtype) for i in state_items(base, request)] == [
        ("gradient", "bfloat16"),
        ("master_weight", "float32"),
        ("master_gradient", "float32"),
        ("optimizer", "float32"),
        ("optimizer", "float32"),
        ("optimizer", "float32"),
    ]
    assert [(i.kind, i.name) for i in state_items(adapter, request)] == [
        ("gradient", "grad"),
        ("optimizer", "step"),
        ("optimizer", "exp_avg"),
        ("optimizer", "exp_avg_sq"),
    ]


def test_frozen_tensors_add_nothing() -> None:
    frozen = TrainTensor("w", (8, 4), "uint8", "quantized", False)
    for optimizer in OPTIMIZERS:
        for precision in PRECISIONS:
            request = TrainRequest(precision=precision, optimizer=optimizer)
            assert state_items(frozen, request) == ()


@pytest.mark.parametrize(
    ("request_", "error", "reason"),
    [
        (TrainRequest(precision="fp8"), UnknownPrecisionError, "unknown_precision"),  # type: ignore[arg-type]
        (TrainRequest(optimizer="lion"), UnknownOptimizerError, "unknown_optimizer"),  # type: ignore[arg-type]
        (
            TrainRequest(optimizer="adamw-8bit", fused=True),
            FusedUnsupportedError,
            "fused_unsupported",
        ),
        (
            TrainRequest(optimizer="adafactor", fused=True),
            FusedUnsupportedError,
            "fused_unsupported",
        ),
    ],
)
def test_bad_requests(request_: TrainRequest, error: type[InputError], reason: str) -> None:
    tensor = TrainTensor("w", (8, 4), "bfloat16", "base", True)
    with pytest.raises(error) as raised:
        state_items(tensor, request_)
    assert raised.value.reason == reason
    assert "\n" not in str(raised.value)
    with pytest.raises(error):
        state_totals([], request_)


def test_bad_weight_precision_and_untrainable_tensors() -> None:
    with pytest.raises(UnknownPrecisionError):
        weight_dtype("int4")
    for tensor in (
        TrainTensor("w", (8, 4), "uint8", "quantized", True),
        TrainTensor("w", (8, 4), "float32", "quant_state", True),
        TrainTensor("w", (8, 4), "int8", "base", True),
    ):
        with pytest.raises(UntrainableTensorError) as raised:
            state_items(tensor, TrainRequest())
        assert raised.value.reason == "untrainable_tensor"
        assert isinstance(raised.value, InputError)
