"""The model states of parameters known only as groups (shape, dtype, trainable, count): what a
lab result records of the model it measured (`parameter_groups`, schema 1.3.0), so that the
estimate of `iteragpu train` can stand beside the bytes the lab counted, item by item.

The rules are `iteragpu.training.states`' own (state_items, shared_items): one tensor of each
group is stated and counted `count` times; the run's shared states once.
"""

from __future__ import annotations

from collections.abc import Iterable

from iteragpu.core.records import Record
from iteragpu.training.records import StateItem, TrainRequest, TrainTensor
from iteragpu.training.states import shared_items, state_items


class Group(Record):
    """Parameters of one shape and dtype, trainable or frozen, and how many."""

    shape: tuple[int, ...]
    dtype: str
    trainable: bool
    count: int


class GroupStates(Record):
    """The model states a run adds beside its parameters, per item, in raw bytes."""

    gradient_bytes: int
    optimizer_gpu_bytes: int  # on the device (GradScaler's scale included)
    optimizer_host_bytes: int  # torch's `step` tensors in host memory
    master_weight_bytes: int
    master_gradient_bytes: int


def group_states(groups: Iterable[Group], request: TrainRequest) -> GroupStates:
    """The gradients, optimizer states (device and host) and master copies of `groups` under
    `request`, as `iteragpu train` states each tensor; frozen groups add nothing.

    >>> request = TrainRequest(precision="fp32", optimizer="adamw")
    >>> group_states([Group(shape=(4, 8), dtype="float32", trainable=True, count=2)], request)
    GroupStates(gradient_bytes=256, optimizer_gpu_bytes=512, optimizer_host_bytes=8, \
master_weight_bytes=0, master_gradient_bytes=0)
    """
    sums = {"gradient": 0, "gpu": 0, "host": 0, "master_weight": 0, "master_gradient": 0}
    tensors: list[TrainTensor] = []

    def add(item: StateItem, times: int) -> None:
        key = item.device if item.kind == "optimizer" else item.kind
        sums[key] += item.bytes * times

    for number, group in enumerate(groups):
        # a frozen tensor adds no state; PyTorch trains floating-point tensors only
        tensor = TrainTensor(f"group{number}", group.shape, group.dtype, "base", group.trainable)
        tensors.append(tensor)
        for item in state_items(tensor, request):
            add(item, group.count)
    for item in shared_items(tensors, request):
        add(item, 1)
    return GroupStates(
        sums["gradient"], sums["gpu"], sums["host"], sums["master_weight"], sums["master_gradient"]
    )
