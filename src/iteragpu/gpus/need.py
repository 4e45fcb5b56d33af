"""What one GPU needs for a task: the bytes of each part computed, and the parts still to measure.

A `Need` is what the short list (`iteragpu.gpus.shortlist`) compares with every card. Its parts
are what the sizing computed for the fullest GPU: the weights, the KV cache per layer kind, the
layers' states, a training run's model states (gradients, optimizer states, master copies), the
reserve the reader chose. Its `missing` parts are those no formula of the package states yet:
the activations and the temporary buffers of a forward pass or of a training step, to measure
with the lab. A need with a missing part is incomplete and its bytes are a lower bound: a card
it already exceeds cannot hold the task (an exclusion on paper stands), and the margin on paper
of a card that holds it is at most the figure shown.

The reader's own need (`iteragpu shortlist --need-gib`) is taken as complete: one part,
`stated`, nothing missing.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from iteragpu.core.records import Record
from iteragpu.core.units import from_unit

# Codes of the parts still to measure (the JSON's `need_missing`).
ACTIVATIONS: Final = "activations"
PREFILL_TEMPORARIES: Final = "prefill_temporaries"  # the prompt's forward pass (inference)
STEP_TEMPORARIES: Final = "step_temporaries"  # a training step's own temporary buffers
MISSING_PARTS: Final = (ACTIVATIONS, PREFILL_TEMPORARIES, STEP_TEMPORARIES)
# What no formula of the package computes yet, per task (measured by the lab): the sizer page
# and the CLI's short lists say the same.
INFERENCE_MISSING: Final = (ACTIVATIONS, PREFILL_TEMPORARIES)
TRAINING_MISSING: Final = (ACTIVATIONS, STEP_TEMPORARIES)
# The part of a need the reader states whole.
STATED: Final = "stated"


class NeedPart(Record):
    """One computed part of a need: its code (`weights`, `kv_cache`, `layer_states`,
    `gradients`, `optimizer_states`, `master_weights`, `master_gradients`, `reserve`, or
    `stated`), its exact bytes, and for the cache and states the layer kind they belong to."""

    part: str
    byte_count: Fraction
    layer_kind: str | None = None


class Need(Record):
    """The need of the fullest GPU: its computed parts and the codes of the parts to measure."""

    parts: tuple[NeedPart, ...]
    missing: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for code in self.missing:
            if code not in MISSING_PARTS:
                raise ValueError(f"unknown missing part {code!r}")

    @property
    def byte_count(self) -> Fraction:
        """The computed parts' sum: the whole need when complete, else a lower bound."""
        return sum((p.byte_count for p in self.parts), Fraction(0))

    @property
    def gib(self) -> Fraction:
        return self.byte_count / 2**30

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def stated(self) -> bool:
        """True for the reader's own figure (one `stated` part), which lists no parts."""
        return all(p.part == STATED for p in self.parts)


def stated_need(need_gib: Fraction) -> Need:
    """The reader's own need in GiB, taken as complete.

    >>> stated_need(Fraction(19)).complete, stated_need(Fraction(19)).gib
    (True, Fraction(19, 1))
    """
    return Need((NeedPart(STATED, from_unit(need_gib, "GiB")),))
