"""A training or fine-tuning run's model states, whole and per GPU: `iteragpu train`'s answer.

The tensors the run holds come from `adapters` (full, LoRA, DoRA, modules_to_save, QLoRA),
what each trainable one adds from `states` (gradient, optimizer states and where they live,
master copies), each rank's share from `sharding`. Activations are not computed: they depend
on the kernels, the checkpointing and the allocator, and are measured by the lab.

The `--json` keys (stable): `parameters` (of the model), `trainable_parameters`,
`trainable_tensors`, `weights_bytes` with `weights` (per role: base, adapter, saved_copy,
quantized, quant_state), `gradients_bytes`, `optimizer_state_bytes` (on the GPU) with
`optimizer_states` (per state: name, device, bytes), `optimizer_host_bytes`,
`master_weights_bytes`, `master_gradients_bytes`, `model_states_bytes` (their sum on one GPU);
per GPU, for the rank that fills first, when the run is sharded; `ranks` (every rank's bytes,
`first_to_fill`), `activations_bytes` null with `activations_reason`, and `status` per item:
`estimated` (stated from the libraries' rules, proved against their tensors on CPU),
`measured` or `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from iteragpu.core.quantity import byte_fields
from iteragpu.core.records import Record
from iteragpu.models.config import ModelConfig
from iteragpu.training.records import StateItem, TrainRequest, TrainTensor
from iteragpu.training.sharding import RankBytes, ShardPlan, element_bytes

ESTIMATED: Final = "estimated"  # stated from the libraries' rules, not measured on a GPU
UNKNOWN: Final = "unknown"
ACTIVATIONS_REASON: Final = "measured by the lab"
ROLES: Final = ("base", "saved_copy", "adapter", "quantized", "quant_state")


class TrainingPlan(Record):
    """Everything `iteragpu train` states about one run."""

    path: Path
    config: ModelConfig
    request: TrainRequest
    tensors: tuple[TrainTensor, ...]
    states: Mapping[str, tuple[StateItem, ...]]  # per trainable tensor, by its full name
    shared: tuple[StateItem, ...]  # held once per run (8-bit AdamW's maps, GradScaler)
    shard: ShardPlan
    # The model's parameters (a 4-bit weight's unpacked values; tied weights once)
    parameters: int

    @property
    def trainable(self) -> tuple[TrainTensor, ...]:
        return tuple(t for t in self.tensors if t.trainable)

    @property
    def first_to_fill(self) -> RankBytes:
        return self.shard.largest

    @property
    def shared_gpu_bytes(self) -> int:
        """What every rank holds once for the whole run (8-bit AdamW's quantization maps,
        GradScaler's scale), beside its share."""
        return sum(item.bytes for item in self.shared if item.device == "gpu")

    def rank_gpu_bytes(self, rank: RankBytes) -> int:
        return rank.gpu_bytes + self.shared_gpu_bytes


def _fields(name: str, byte_count: int, *units: str) -> dict[str, Any]:
    return byte_fields(name, Fraction(byte_count), *units)


def tensor_bytes(tensor: TrainTensor) -> int:
    """A held tensor's storage (a packed 4-bit weight: its uint8 bytes)."""
    return tensor.elements * element_bytes(tensor.dtype)


def plan_training(path: Path | str, request: TrainRequest) -> TrainingPlan:
    """The run `request` describes on the model at `path` (a folder, a config.json, a name);
    an `InputError` with a one-line message for what cannot be stated."""
    from iteragpu.models.model import read_model
    from iteragpu.training.adapters import held_tensors, refuse_quantized
    from iteragpu.training.naming import model_tensors
    from iteragpu.training.sharding import shard_plan
    from iteragpu.training.states import check_request, shared_items, state_items

    path = Path(path)
    check_request(request)
    config, _ = read_model(path)
    refuse_quantized(config, request)
    model = model_tensors(config)
    tensors = held_tensors(model, request)
    states = {t.name: state_items(t, request) for t in tensors if t.trainable}
    shared = shared_items(tensors, request)
    return TrainingPlan(
        path,
        config,
        request,
        tensors,
        states,
        shared,
        shard_plan(tensors, states, request.shard, request.gpus),
        sum(p.elements for p in model.params),
    )


def _roles_json(plan: TrainingPlan) -> list[dict[str, Any]]:
    result = []
    for role in ROLES:
        held = [t for t in plan.tensors if t.role == role]
        if held:
            result.append(
                {
                    "role": role,
                    "tensors": len(held),
                    "elements": sum(t.elements for t in held),
                    "trainable": any(t.trainable for t in held),
                    **_fields("weights", sum(tensor_bytes(t) for t in held)),
                }
            )
    return result


def _optimizer_json(plan: TrainingPlan) -> list[dict[str, Any]]:
    found: dict[tuple[str, str], list[int]] = {}
    items = [i for items in plan.states.values() for i in items if i.kind == "optimizer"]
    for item in [*items, *plan.shared]:
        entry = found.setdefault((item.name, item.device), [0, 0])
        entry[0] += 1
        entry[1] += item.bytes
    return [
        {"name": name, "device": device, "tensors": n, "bytes": total}
        for (name, device), (n, total) in found.items()
    ]


def _rank_json(plan: TrainingPlan, rank: RankBytes) -> dict[str, Any]:
    return {
        "rank": rank.rank,
        "parameters_bytes": rank.parameters,
        "quant_states_bytes": rank.quant_states,
        "gradients_bytes": rank.gradients,
        "optimizer_state_bytes": rank.optimizer + plan.shared_gpu_bytes,
        "master_weights_bytes": rank.master_weights,
        "master_gradients_bytes": rank.master_gradients,
        "optimizer_host_bytes": rank.host,
        "padding_bytes": rank.padding,
        **_fields("model_states", plan.rank_gpu_bytes(rank), "GB", "GiB"),
    }


def payload(plan: TrainingPlan) -> dict[str, Any]:
    """The `--json` object of `iteragpu train` (keys listed in this module's docstring)."""
    request, rank = plan.request, plan.first_to_fill
    trainable = plan.trainable
    return {
        "path": str(plan.path),
        "model_type": plan.config.model_type,
        "request": {
            "method": request.method,
            "precision": request.precision,
            "optimizer": request.optimizer,
            "fused": request.fused,
            "lora_r": request.lora_r if request.method != "full" else None,
            "lora_targets": None if request.lora_targets is None else list(request.lora_targets),
            "lora_parameters": list(request.lora_parameters),
            "lora_bias": request.lora_bias,
            "modules_to_save": list(request.modules_to_save),
            "adapter_dtype": request.adapter_dtype,
            "quant_type": request.quant_type if request.method in ("qlora", "qdora") else None,
            "double_quant": request.double_quant if request.method in ("qlora", "qdora") else None,
            "shard": request.shard,
            "gpus": request.gpus,
            # Recorded: they size the activations, which the lab measures.
            "micro_batch": request.micro_batch,
            "sequence_length": request.sequence_length,
            "grad_accum": request.grad_accum,
        },
        "parameters": plan.parameters,
        "trainable_parameters": sum(t.elements for t in trainable),
        "trainable_tensors": len(trainable),
        "per_gpu_rank": rank.rank,
        **_fields("weights", rank.parameters + rank.quant_states, "GB", "GiB"),
        "weights": _roles_json(plan),
        **_fields("gradients", rank.gradients, "GB", "GiB"),
        **_fields("optimizer_state", rank.optimizer + plan.shared_gpu_bytes, "GB", "GiB"),
        "optimizer_states": _optimizer_json(plan),
        **_fields("optimizer_host", rank.host),
        **_fields("master_weights", rank.master_weights, "GB", "GiB"),
        **_fields("master_gradients", rank.master_gradients, "GB", "GiB"),
        **_fields("model_states", plan.rank_gpu_bytes(rank), "GB", "GiB"),
        "ranks": [_rank_json(plan, r) for r in plan.shard.ranks],
        "first_to_fill": rank.rank,
        "activations_bytes": None,
        "activations_reason": ACTIVATIONS_REASON,
        "status": {
            "weights": ESTIMATED,
            "gradients": ESTIMATED,
            "optimizer_state": ESTIMATED,
            "master_weights": ESTIMATED,
            "master_gradients": ESTIMATED,
            "activations": UNKNOWN,
        },
    }
