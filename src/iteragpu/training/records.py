"""The records the training modules exchange: a run's request, each tensor a run holds, and
what a trainable tensor adds (gradient, optimizer states, master copies), in bytes."""

from __future__ import annotations

import math
from typing import Final, Literal

from iteragpu.core.records import Record

Method = Literal["full", "lora", "dora", "qlora", "qdora"]
Precision = Literal["fp32", "bf16", "fp16", "autocast-bf16", "autocast-fp16", "bf16-master"]
Optimizer = Literal["adamw", "adamw-amsgrad", "adamw-8bit", "sgd", "sgd-momentum", "adafactor"]
Shard = Literal["none", "fsdp2", "zero1", "zero2", "zero3"]
Device = Literal["gpu", "host"]

METHODS: Final = ("full", "lora", "dora", "qlora", "qdora")
PRECISIONS: Final = ("fp32", "bf16", "fp16", "autocast-bf16", "autocast-fp16", "bf16-master")
OPTIMIZERS: Final = ("adamw", "adamw-amsgrad", "adamw-8bit", "sgd", "sgd-momentum", "adafactor")
SHARDS: Final = ("none", "fsdp2", "zero1", "zero2", "zero3")
ALL_LINEAR: Final = "all-linear"  # PEFT's meaning: every linear layer but the output head


class TrainRequest(Record):
    """One training or fine-tuning run, as `iteragpu train` reads its options."""

    method: Method = "full"
    precision: Precision = "bf16"
    optimizer: Optimizer = "adamw"
    fused: bool = False  # AdamW's fused (or capturable) mode: its `step` tensors on the GPU
    lora_r: int = 8
    lora_targets: tuple[str, ...] | None = None  # None: PEFT's default for the family
    # PEFT's target_parameters: parameters LoRA wraps that no nn.Linear holds (MoE experts)
    lora_parameters: tuple[str, ...] = ()
    lora_bias: Literal["none", "all", "lora_only"] = "none"
    modules_to_save: tuple[str, ...] = ()
    adapter_dtype: str | None = None  # None: as PEFT does (float32 adapters on a 16-bit base)
    quant_type: Literal["nf4", "fp4"] = "nf4"  # QLoRA
    double_quant: bool = False  # QLoRA: 8-bit absmax with their own fp32 scales per 256
    shard: Shard = "none"
    gpus: int = 1
    micro_batch: int | None = None  # recorded: it sizes activations, which are measured
    sequence_length: int | None = None
    grad_accum: int = 1


Role = Literal["base", "adapter", "saved_copy", "quantized", "quant_state"]


class TrainTensor(Record):
    """One tensor a run holds on the GPU as a parameter (or a parameter's quantization state)."""

    name: str  # the full name within the model: `model.layers.0.self_attn.q_proj.weight`
    shape: tuple[int, ...]
    dtype: str  # torch's name of its storage dtype: `bfloat16`, `float32`, `uint8`
    role: Role
    trainable: bool

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


class StateItem(Record):
    """One tensor an optimizer, a gradient or a master copy adds for a trainable tensor."""

    kind: Literal["gradient", "optimizer", "master_weight", "master_gradient"]
    name: str  # `grad`, `exp_avg`, `exp_avg_sq`, `max_exp_avg_sq`, `step`, `momentum_buffer`,
    # `row_var`, `col_var`, `variance`, `state1`, `state2`, `absmax1`, `absmax2`, `master`
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    device: Device
