"""What each trainable tensor adds to a run: its gradient, its optimizer's states (and where
each lives), and, under `bf16-master`, its fp32 master weight and master gradient.

Every rule is read from the library that allocates the tensor (PyTorch 2.13.0, bitsandbytes
0.50.2), and proven byte for byte against a real `optimizer.step()` in
tests/training/test_states_torch.py (marker `training`).

Gradients (torch/autograd: a leaf's `.grad` has the leaf's dtype and shape; accumulation over
micro-steps adds into it in place, so `grad_accum` adds nothing):
- `fp32`, `autocast-bf16`, `autocast-fp16`: fp32 weights, so fp32 gradients (autocast casts a
  weight for each op, inside the autocast region, and the gradient flows back to the fp32 leaf);
- `bf16`, `fp16`: 16-bit weights, 16-bit gradients, optimizer states in 16 bits;
- `bf16-master`: the model computes in bf16 and gets bf16 `.grad`; the optimizer steps fp32
  copies of the 16-bit trainable tensors (its own parameters: master weights) whose `.grad` is
  an fp32 copy of the bf16 one (master gradients); the updated masters are copied back. This
  is the convention of apex's FP16_Optimizer, Megatron-LM's Float16OptimizerWithFloat16Params
  (`fp32_from_float16_groups`; an fp32 parameter is stepped as it is, without a copy) and
  DeepSpeed's BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py: bf16 params and grads,
  `fp32_groups_flat_partition` masters, `fp32_groups_gradients_flat` fp32 gradients).
  A tensor the run already holds in fp32 (a PEFT adapter) gets no master copy.
The gradient's dtype is the tensor's own (TrainTensor.dtype): the caller states each tensor's
storage dtype under the precision (`weight_dtype`), adapters in their own dtype.

Optimizer states, per stepped tensor (its dtype `s`: the tensor's, or float32 for a master):
- `adamw` (torch/optim/adam.py `_init_group`, AdamW subclasses Adam): `exp_avg`, `exp_avg_sq`
  (`zeros_like(p)`: shape and dtype `s`), `step`: a 0-dim float32 tensor (`_get_scalar_dtype`;
  float64 only if torch's default dtype is float64), created with `device="cpu"` ("Deliberately
  host `step` on CPU if both capturable and fused are off"), on the parameter's device when
  fused or capturable; `adamw-amsgrad` adds `max_exp_avg_sq`;
- `sgd`: none; `sgd-momentum` (torch/optim/sgd.py): `momentum_buffer`, `grad.clone()` at the
  first step (the gradient's dtype);
- `adafactor` (torch/optim/_adafactor.py): `step` (0-dim float32, always on the host: it has no
  fused or capturable mode); a tensor with 2 dims or more: `row_var` (the gradient's shape with
  the last dim 1) and `col_var` (the second-to-last dim 1); (E, R, C) gives (E, R, 1) and
  (E, 1, C); fewer dims: `variance` (the gradient's shape); all in the gradient's dtype;
- `adamw-8bit` (bitsandbytes/optim/optimizer.py `Optimizer2State.init_state`): a tensor of
  4,096 values or more (`min_8bit_size`; fewer is `numel() < min_8bit_size`): `state1`,
  `state2` uint8 in the tensor's shape, `absmax1`, `absmax2` float32 of ceil(n/256) values
  (block size 256); a smaller tensor: `state1`, `state2` float32 in its shape. Its `step` is a
  Python int (no tensor). `qmap1`/`qmap2` are the optimizer's shared `name2qmap["dynamic"]` and
  `["udynamic"]` (256 float32 each), the same tensor object for every parameter: they are
  counted once per run (`shared_items`), not per tensor.
GradScaler (autocast-fp16 only: `torch.amp.GradScaler` refuses fp16 gradients, and bf16 needs
no scaling): `_scale` (0-dim float32) and `_growth_tracker` (0-dim int32) on the device, once per
run (torch/amp/grad_scaler.py `_lazy_init_scale_growth_tracker`); its per-step `found_inf`
tensors are dropped by `update()`. Counted here as optimizer state (`shared_items`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record
from iteragpu.training.records import (
    OPTIMIZERS,
    PRECISIONS,
    Device,
    StateItem,
    TrainRequest,
    TrainTensor,
)

# Bytes per value of the dtypes a state may have.
DTYPE_BYTES: Final[dict[str, int]] = {
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "uint8": 1,
    "int32": 4,
}
TRAINABLE_DTYPES: Final = ("float32", "bfloat16", "float16")
HALF_DTYPES: Final = ("bfloat16", "float16")
STEP_DTYPE: Final = "float32"  # torch.optim.optimizer._get_scalar_dtype (default dtype float32)
MIN_8BIT_SIZE: Final = 4096  # bitsandbytes Optimizer2State(min_8bit_size=4096)
BLOCK_8BIT: Final = 256  # bitsandbytes init_state: blocksize = 256
QMAP_VALUES: Final = 256  # bitsandbytes F.create_dynamic_map: 256 float32 values
FUSED_OPTIMIZERS: Final = ("adamw", "adamw-amsgrad", "sgd", "sgd-momentum")
_WEIGHT_DTYPES: Final[dict[str, str]] = {
    "fp32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "autocast-bf16": "float32",
    "autocast-fp16": "float32",
    "bf16-master": "bfloat16",
}


class StateInputError(InputError):
    """A request or tensor whose training states cannot be stated."""


class UnknownPrecisionError(StateInputError):
    """A precision that is not one of PRECISIONS."""


class UnknownOptimizerError(StateInputError):
    """An optimizer that is not one of OPTIMIZERS."""


class FusedUnsupportedError(StateInputError):
    """`--fused` with an optimizer that has no fused mode (Adafactor, bitsandbytes' 8-bit)."""


class UntrainableTensorError(StateInputError):
    """A tensor marked trainable whose dtype or role cannot carry a gradient."""


class StateTotals(Record):
    """A run's model-state bytes beside its parameters, per GPU before any sharding."""

    gradient_bytes: int
    optimizer_gpu_bytes: int  # optimizer states on the GPU (GradScaler's scale included)
    optimizer_host_bytes: int  # `step` tensors torch keeps on the host
    master_weight_bytes: int
    master_gradient_bytes: int

    @property
    def gpu_bytes(self) -> int:
        return (
            self.gradient_bytes
            + self.optimizer_gpu_bytes
            + self.master_weight_bytes
            + self.master_gradient_bytes
        )


def check_request(request: TrainRequest) -> None:
    """Refuse an unknown precision or optimizer, or `fused` where the optimizer has no such
    mode (torch's Adafactor takes no `fused`; bitsandbytes' AdamW8bit has its own kernels)."""
    if request.precision not in PRECISIONS:
        raise UnknownPrecisionError(
            "unknown precision {name} (known: {known})",
            "unknown_precision",
            name=repr(str(request.precision)[:40]),
            known=", ".join(PRECISIONS),
        )
    if request.optimizer not in OPTIMIZERS:
        raise UnknownOptimizerError(
            "unknown optimizer {name} (known: {known})",
            "unknown_optimizer",
            name=repr(str(request.optimizer)[:40]),
            known=", ".join(OPTIMIZERS),
        )
    if request.fused and request.optimizer not in FUSED_OPTIMIZERS:
        raise FusedUnsupportedError(
            "the optimizer {name} has no fused mode (fused: {known})",
            "fused_unsupported",
            name=request.optimizer,
            known=", ".join(FUSED_OPTIMIZERS),
        )


def weight_dtype(precision: str) -> str:
    """The dtype a fully trained tensor is stored in under `precision` (autocast keeps fp32
    weights; `bf16-master` keeps bf16 ones beside the fp32 masters)."""
    if precision not in _WEIGHT_DTYPES:
        raise UnknownPrecisionError(
            "unknown precision {name} (known: {known})",
            "unknown_precision",
            name=repr(str(precision)[:40]),
            known=", ".join(PRECISIONS),
        )
    return _WEIGHT_DTYPES[precision]


_Kind = Literal["gradient", "optimizer", "master_weight", "master_gradient"]


def _item(
    kind: _Kind, name: str, shape: tuple[int, ...], dtype: str, device: Device = "gpu"
) -> StateItem:
    count = 1
    for size in shape:
        count *= size
    return StateItem(kind, name, shape, dtype, count * DTYPE_BYTES[dtype], device)


def has_master(tensor: TrainTensor, request: TrainRequest) -> bool:
    """Whether `bf16-master` keeps an fp32 master copy of this trainable tensor."""
    return request.precision == "bf16-master" and tensor.trainable and tensor.dtype in HALF_DTYPES


def state_items(tensor: TrainTensor, request: TrainRequest) -> tuple[StateItem, ...]:
    """The gradient, master copies and optimizer states one tensor adds (none if frozen)."""
    check_request(request)
    if not tensor.trainable:
        return ()
    if tensor.dtype not in TRAINABLE_DTYPES or tensor.role in ("quantized", "quant_state"):
        raise UntrainableTensorError(
            "{name} ({dtype}, {role}) cannot be trained: only float32, bfloat16 and float16 "
            "parameters carry gradients",
            "untrainable_tensor",
            name=tensor.name,
            dtype=tensor.dtype,
            role=tensor.role,
        )
    shape = tensor.shape
    items = [_item("gradient", "grad", shape, tensor.dtype)]
    stepped = tensor.dtype  # the dtype of the tensor the optimizer steps, and of its gradient
    if has_master(tensor, request):
        stepped = "float32"
        items.append(_item("master_weight", "master", shape, "float32"))
        items.append(_item("master_gradient", "master_grad", shape, "float32"))
    items.extend(_optimizer_items(shape, stepped, request))
    return tuple(items)


def _optimizer_items(
    shape: tuple[int, ...], stepped: str, request: TrainRequest
) -> list[StateItem]:
    optimizer = request.optimizer
    step_device: Device = "gpu" if request.fused else "host"
    if optimizer in ("adamw", "adamw-amsgrad"):
        names = ["exp_avg", "exp_avg_sq"]
        if optimizer == "adamw-amsgrad":
            names.append("max_exp_avg_sq")
        return [
            _item("optimizer", "step", (), STEP_DTYPE, step_device),
            *(_item("optimizer", name, shape, stepped) for name in names),
        ]
    if optimizer == "sgd":
        return []
    if optimizer == "sgd-momentum":
        return [_item("optimizer", "momentum_buffer", shape, stepped)]
    if optimizer == "adafactor":
        step = _item("optimizer", "step", (), STEP_DTYPE, "host")
        if len(shape) >= 2:
            row = (*shape[:-1], 1)
            column = (*shape[:-2], 1, shape[-1])
            return [
                step,
                _item("optimizer", "row_var", row, stepped),
                _item("optimizer", "col_var", column, stepped),
            ]
        return [step, _item("optimizer", "variance", shape, stepped)]
    # adamw-8bit
    count = 1
    for size in shape:
        count *= size
    if count < MIN_8BIT_SIZE:
        return [
            _item("optimizer", "state1", shape, "float32"),
            _item("optimizer", "state2", shape, "float32"),
        ]
    blocks = -(-count // BLOCK_8BIT)
    return [
        _item("optimizer", "state1", shape, "uint8"),
        _item("optimizer", "state2", shape, "uint8"),
        _item("optimizer", "absmax1", (blocks,), "float32"),
        _item("optimizer", "absmax2", (blocks,), "float32"),
    ]


def uses_8bit(tensor: TrainTensor) -> bool:
    """Whether bitsandbytes' AdamW8bit keeps this trainable tensor's states in 8 bits."""
    return tensor.trainable and tensor.elements >= MIN_8BIT_SIZE


def shared_items(tensors: Iterable[TrainTensor], request: TrainRequest) -> tuple[StateItem, ...]:
    """The states a run holds once, whatever its tensors: bitsandbytes' two quantization maps
    (if any tensor is stepped in 8 bits) and GradScaler's scale and growth tracker."""
    check_request(request)
    items: list[StateItem] = []
    if request.optimizer == "adamw-8bit" and any(uses_8bit(t) for t in tensors):
        items.append(_item("optimizer", "qmap1", (QMAP_VALUES,), "float32"))
        items.append(_item("optimizer", "qmap2", (QMAP_VALUES,), "float32"))
    if request.precision == "autocast-fp16":
        items.append(_item("optimizer", "scale", (), "float32"))
        items.append(_item("optimizer", "growth_tracker", (), "int32"))
    return tuple(items)


def state_totals(tensors: Iterable[TrainTensor], request: TrainRequest) -> StateTotals:
    """The gradients, optimizer states (GPU and host), master weights and master gradients of
    every tensor of a run, with the run's shared states, unsharded."""
    listed = list(tensors)
    sums = {"gradient": 0, "gpu": 0, "host": 0, "master_weight": 0, "master_gradient": 0}
    items = [item for tensor in listed for item in state_items(tensor, request)]
    for item in (*items, *shared_items(listed, request)):
        if item.kind == "optimizer":
            sums[item.device] += item.bytes
        else:
            sums[item.kind] += item.bytes
    return StateTotals(
        sums["gradient"], sums["gpu"], sums["host"], sums["master_weight"], sums["master_gradient"]
    )
