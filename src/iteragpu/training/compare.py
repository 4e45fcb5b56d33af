"""What a peer's estimator says for the same run, and why it differs from the tool, item by item
(`iteragpu train --compare deepspeed|accelerate`).

Each peer's arithmetic is its own code's, mirrored here and proved by calling the code itself in
tests/training/test_compare_torch.py:

- DeepSpeed 0.19.8 (deepspeed/runtime/zero/stage_1_and_2.py
  `estimate_zero2_model_states_mem_needs`, stage3.py `estimate_zero3_model_states_mem_needs`;
  they import and run on a CPU, `DS_BUILD_OPS=0`): given the model's parameters P, N GPUs on one
  node and no offload, ZeRO-2 holds `2 * P + int(18 * P / N)` bytes per GPU (16-bit parameters
  whole, then "2_grads_16bit + 4_grads_32bit + 4_params_32bit + 8_optimizer_states_32bit" split),
  ZeRO-3 `4 * L + int(18 * P / N)` (L: the most parameters one module holds itself,
  `model_to_params`). It has no estimator for ZeRO-1, FSDP or a single GPU: ZeRO-2's is shown.
- Accelerate 1.15.0 (accelerate/commands/estimate.py, `accelerate estimate-memory`): it builds
  AutoModel (the base model, without the output head) in float32 on the meta device, takes its
  bytes B (`calculate_maximum_sizes`: parameters and buffers), and `estimate_training_usage`
  gives, for float32, model B, gradients B, optimizer 2B, step 4B; for mixed precision
  (float16, bfloat16), model B, gradients 1.5B, optimizer 2B, step 2B; the table prints the
  largest of these ("Training using Adam"), not their sum. The buffers (rotary tables) are not
  sized here: B is the parameters' bytes.

Both size every parameter as trained with AdamW in their precision: neither knows LoRA, QLoRA,
another optimizer, or the states this tool lists in host memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record

if TYPE_CHECKING:
    from iteragpu.training.plan import TrainingPlan

PEERS: Final = ("deepspeed", "accelerate")
DEEPSPEED_VERSION: Final = "0.19.8"
ACCELERATE_VERSION: Final = "1.15.0"


class CompareInputError(InputError):
    """A peer the tool does not compare with."""


class PeerItem(Record):
    """One item of the peer's estimate beside the tool's bytes for the same item."""

    key: str  # the item: parameters_16bit, split_states, largest_layer, model, gradients...
    peer_bytes: int
    ours_bytes: int
    reason: str  # why they differ: the peer's rule for this item (a message key's suffix)


class Comparison(Record):
    """A peer's estimate of the run's model states on one GPU, itemized."""

    peer: str
    version: str
    call: str  # the peer's function and arguments, as the tool calls them
    peer_bytes: int  # what the peer states for one GPU
    ours_bytes: int  # the tool's model states on the first GPU to fill
    items: tuple[PeerItem, ...]
    notes: tuple[str, ...]  # reasons that hold for the whole estimate
    head_parameters: int = 0  # the output head's parameters Accelerate's base model leaves out


def compare(plan: TrainingPlan, peer: str) -> Comparison:
    """The peer's estimate of `plan`'s run, itemized beside the tool's."""
    if peer == "deepspeed":
        return _deepspeed(plan)
    if peer == "accelerate":
        return _accelerate(plan)
    raise CompareInputError(
        "--compare must be one of {known}: {peer} is not",
        "compare_peer",
        known=", ".join(PEERS),
        peer=repr(str(peer)[:40]),
    )


def _module_parameters(plan: TrainingPlan) -> dict[str, int]:
    """The model's parameters per module (its own, as `module.parameters(recurse=False)`)."""
    from iteragpu.training.naming import model_tensors

    found: dict[str, int] = {}
    model = model_tensors(plan.config)
    for param in model.params:
        found[param.module] = found.get(param.module, 0) + param.elements
    for head, (shape, _) in model.tied_heads.items():
        elements = 1
        for size in shape:
            elements *= size
        found[head] = found.get(head, 0) + elements
    return found


def deepspeed_zero2_gpu(total_params: int, gpus: int) -> int:
    """estimate_zero2_model_states_mem_needs(total_params, gpus, 1, cpu_offload=False)'s GPU
    bytes, in its own arithmetic (a float division, truncated).

    >>> deepspeed_zero2_gpu(7_000_000_000, 8)
    29750000000
    """
    return int(2 * total_params + int(18 * total_params / gpus))


def deepspeed_zero3_gpu(total_params: int, largest_layer_params: int, gpus: int) -> int:
    """estimate_zero3_model_states_mem_needs(total_params, largest_layer_params, gpus, 1,
    cpu_offload=False)'s GPU bytes.

    >>> deepspeed_zero3_gpu(7_000_000_000, 500_000_000, 8)
    17750000000
    """
    return int(4 * largest_layer_params + int(18 * total_params / gpus))


def _ours_split(plan: TrainingPlan) -> int:
    rank = plan.first_to_fill
    return (
        rank.gradients
        + rank.master_weights
        + rank.master_gradients
        + rank.optimizer
        + plan.shared_gpu_bytes
    )


def _deepspeed(plan: TrainingPlan) -> Comparison:
    total, gpus = plan.parameters, plan.request.gpus
    rank = plan.first_to_fill
    held = rank.parameters + rank.quant_states
    split = int(18 * total / gpus)
    notes = ["ds_all_trained", "ds_mixed_adam"]
    items: tuple[PeerItem, ...]
    if plan.request.shard == "zero3":
        largest = max(_module_parameters(plan).values())
        call = (
            f"estimate_zero3_model_states_mem_needs(total_params={total}, "
            f"largest_layer_params={largest}, num_gpus_per_node={gpus}, num_nodes=1, "
            "cpu_offload=False)"
        )
        items = (
            PeerItem("largest_layer", 4 * largest, 0, "ds_largest_layer"),
            PeerItem("parameters_16bit", 0, held, "ds_zero3_parameters"),
            PeerItem("split_states", split, _ours_split(plan), "ds_split_states"),
        )
        peer = deepspeed_zero3_gpu(total, largest, gpus)
    else:
        call = (
            f"estimate_zero2_model_states_mem_needs(total_params={total}, "
            f"num_gpus_per_node={gpus}, num_nodes=1, cpu_offload=False)"
        )
        items = (
            PeerItem("parameters_16bit", 2 * total, held, "ds_parameters_16bit"),
            PeerItem("split_states", split, _ours_split(plan), "ds_split_states"),
        )
        peer = deepspeed_zero2_gpu(total, gpus)
        if plan.request.shard != "zero2":
            notes.append("ds_zero2_only")
    if rank.host:
        notes.append("host_states")
    return Comparison(
        "deepspeed",
        DEEPSPEED_VERSION,
        call,
        peer,
        plan.rank_gpu_bytes(rank),
        items,
        tuple(notes),
    )


def accelerate_usage(model_bytes: int, mixed_precision: str) -> dict[str, int]:
    """estimate_training_usage(bytes, mixed_precision)'s components, in its own arithmetic.

    >>> accelerate_usage(1000, "float32"), accelerate_usage(1000, "bfloat16")["gradients"]
    ({'model': 1000, 'optimizer': 2000, 'gradients': 1000, 'step': 4000}, 1500)
    """
    fp32, fp16 = model_bytes, model_bytes // 2
    if mixed_precision == "float32":
        return {"model": fp32, "optimizer": fp32 * 2, "gradients": fp32, "step": fp32 * 4}
    return {"model": fp32, "optimizer": fp32 * 2, "gradients": fp32 + fp16, "step": fp32 * 2}


def _accelerate(plan: TrainingPlan) -> Comparison:
    from iteragpu.training.naming import model_tensors

    model = model_tensors(plan.config)
    head = sum(p.elements for p in model.params if p.module == model.head)
    base = plan.parameters - head
    precision = plan.request.precision
    mixed = (
        "float32"
        if precision == "fp32"
        else "float16"
        if precision.endswith("fp16")
        else "bfloat16"
    )
    usage = accelerate_usage(4 * base, mixed)
    rank = plan.first_to_fill
    peer = max(usage.values())
    suffix = "fp32" if mixed == "float32" else "mixed"
    items = (
        PeerItem("model", usage["model"], rank.parameters + rank.quant_states, "acc_model"),
        PeerItem(
            "gradients",
            usage["gradients"],
            rank.gradients + rank.master_gradients,
            f"acc_gradients_{suffix}",
        ),
        PeerItem(
            "optimizer",
            usage["optimizer"],
            rank.optimizer + rank.master_weights + plan.shared_gpu_bytes,
            "acc_optimizer",
        ),
        PeerItem("step", usage["step"], plan.rank_gpu_bytes(rank), f"acc_step_{suffix}"),
    )
    notes = ["acc_largest", "acc_all_trained"]
    if head:
        notes.append("acc_no_head")
    notes.append("acc_buffers")
    if plan.request.shard != "none":
        notes.append("acc_one_device")
    if rank.host:
        notes.append("host_states")
    call = f"estimate_training_usage(bytes={4 * base}, mixed_precision={mixed!r})"
    return Comparison(
        "accelerate",
        ACCELERATE_VERSION,
        call,
        peer,
        plan.rank_gpu_bytes(rank),
        items,
        tuple(notes),
        head,
    )


def compare_json(comparison: Comparison) -> dict[str, Any]:
    """The `compare` object of `iteragpu train --json --compare PEER` (stable keys)."""
    return {
        "peer": comparison.peer,
        "version": comparison.version,
        "call": comparison.call,
        "peer_bytes": comparison.peer_bytes,
        "ours_bytes": comparison.ours_bytes,
        "difference_bytes": comparison.peer_bytes - comparison.ours_bytes,
        "items": [
            {
                "item": item.key,
                "peer_bytes": item.peer_bytes,
                "ours_bytes": item.ours_bytes,
                "difference_bytes": item.peer_bytes - item.ours_bytes,
                "reason": item.reason,
            }
            for item in comparison.items
        ],
        "notes": list(comparison.notes),
        "head_parameters_left_out": comparison.head_parameters,
    }
