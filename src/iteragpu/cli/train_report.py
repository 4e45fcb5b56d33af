"""What `iteragpu report` says of training results (schema 1.3.0) beyond their counters: the
estimate of `iteragpu train` beside the bytes the lab counted, item by item, the first step
beside the warm ones, and several results (one per rank) side by side."""

from __future__ import annotations

from collections.abc import Sequence

from iteragpu.core.records import Record
from iteragpu.gpus.evidence import LabResult, PhaseRecord
from iteragpu.training.groups import Group, group_states
from iteragpu.training.records import TrainRequest

# Where an item is counted: the first step's optimizer_step holds every state at once (the
# gradients are freed by zero_grad, after it).
MEASURED_PHASE = "optimizer_step"


class ItemComparison(Record):
    item: str  # gradients, optimizer_gpu, optimizer_host, master_weights, master_gradients
    estimated_bytes: int
    measured_bytes: int | None  # None: not measured, or not counted by the tensor walk

    @property
    def difference_bytes(self) -> int | None:
        return None if self.measured_bytes is None else self.measured_bytes - self.estimated_bytes


def measured_phase(result: LabResult) -> PhaseRecord | None:
    """The first step's optimizer_step with its parts, or None."""
    return next(
        (
            p
            for p in result.phases
            if p.phase == MEASURED_PHASE and p.step in (1, None) and p.parts is not None
        ),
        None,
    )


def train_items(result: LabResult, request: TrainRequest) -> tuple[ItemComparison, ...] | None:
    """The estimate of each model-state item for the recorded parameters under `request`,
    beside its bytes counted at the end of the first optimizer_step; None when the result
    records no parameters. Master copies are estimated, never counted (the walk sees the
    optimizer's parameters as parameters)."""
    if result.parameter_groups is None:
        return None
    groups = [Group(g.shape, g.dtype, g.trainable, g.count) for g in result.parameter_groups]
    stated = group_states(groups, request)
    phase = measured_phase(result)
    parts = None if phase is None else phase.parts

    def counted(key: str) -> int | None:
        return None if parts is None else parts[key]

    items = [
        ItemComparison("gradients", stated.gradient_bytes, counted("gradients_bytes")),
        ItemComparison(
            "optimizer_gpu", stated.optimizer_gpu_bytes, counted("optimizer_state_bytes")
        ),
        ItemComparison(
            "optimizer_host", stated.optimizer_host_bytes, counted("optimizer_state_host_bytes")
        ),
    ]
    if stated.master_weight_bytes or stated.master_gradient_bytes:
        items += [
            ItemComparison("master_weights", stated.master_weight_bytes, None),
            ItemComparison("master_gradients", stated.master_gradient_bytes, None),
        ]
    return tuple(items)


class StepRow(Record):
    """One phase of the training step: its allocated peak in the first step, and the highest
    of the warm steps (None when not read or not run)."""

    phase: str
    first_peak_bytes: int | None
    warm_peak_bytes: int | None


def step_rows(result: LabResult) -> tuple[StepRow, ...]:
    """The first step beside the warm ones, phase by phase, in the order the phases ran."""
    names: list[str] = []
    for p in result.phases:
        if p.step is not None and p.phase not in names:
            names.append(p.phase)

    def peak(phase: str, first: bool) -> int | None:
        peaks = [
            p.counters["peak_allocated_bytes"]
            for p in result.phases
            if p.phase == phase and p.step is not None and (p.step == 1) == first
        ]
        read = [value for value in peaks if value is not None]
        return max(read) if read else None

    return tuple(StepRow(name, peak(name, True), peak(name, False)) for name in names)


class HighestPeak(Record):
    index: int  # of the result, in the order given
    phase: str  # as PhaseRecord.name
    peak_bytes: int


def highest_peak(results: Sequence[LabResult]) -> HighestPeak | None:
    """The result (a rank) and phase with the highest allocated peak; the first on a tie."""
    best: HighestPeak | None = None
    for index, result in enumerate(results):
        for phase in result.phases:
            peak = phase.counters["peak_allocated_bytes"]
            if peak is not None and (best is None or peak > best.peak_bytes):
                best = HighestPeak(index, phase.name, peak)
    return best


def side_by_side(results: Sequence[LabResult]) -> list[tuple[str, list[int | None]]]:
    """Each phase (by name, in first-seen order) with its allocated peak in each result."""
    names: list[str] = []
    for result in results:
        names += [p.name for p in result.phases if p.name not in names]
    rows = []
    for name in names:
        peaks = []
        for result in results:
            found = [p for p in result.phases if p.name == name]
            peaks.append(found[-1].counters["peak_allocated_bytes"] if found else None)
        rows.append((name, peaks))
    return rows
