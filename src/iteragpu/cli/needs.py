"""The need of the fullest GPU (`iteragpu.gpus.need`) for each command that compares cards:
`model --shortlist` (one GPU, or the fullest rank of a split) and `train --shortlist`.

Each part is the sizing's own figure, never a second computation of it: the sum of the parts
is `ModelSizing.total_bytes`, the fullest rank's `total_bytes`, or the training run's model
states on its fullest GPU (`TrainingPlan.rank_gpu_bytes`) plus the reserve.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from iteragpu.gpus.need import INFERENCE_MISSING, TRAINING_MISSING, Need, NeedPart

if TYPE_CHECKING:
    from iteragpu.models.model import ModelSizing
    from iteragpu.parallel.records import RankPlan
    from iteragpu.training.plan import TrainingPlan


def model_need(sizing: ModelSizing) -> Need:
    """One GPU's need for `iteragpu model`: weights, the KV cache per layer kind, the layers'
    states per kind, the reserve; the activations and the prompt's temporaries to measure."""
    parts = [NeedPart("weights", Fraction(sizing.weights.byte_count))]
    kv: dict[str, Fraction] = {}
    for group in sizing.kv.groups:
        kind = group.layout.kind
        kv[kind] = kv.get(kind, Fraction(0)) + group.kv_cache_bytes
    parts += [NeedPart("kv_cache", byte_count, kind) for kind, byte_count in kv.items()]
    states: dict[str, Fraction] = {}
    for state in sizing.state.groups:
        states[state.kind] = states.get(state.kind, Fraction(0)) + state.state_bytes
    parts += [NeedPart("layer_states", byte_count, kind) for kind, byte_count in states.items()]
    parts.append(NeedPart("reserve", sizing.reserve_bytes))
    return Need(tuple(parts), INFERENCE_MISSING)


def rank_need(rank: RankPlan) -> Need:
    """The fullest rank's need for a split over GPUs: its weights, KV cache, states, reserve."""
    return Need(
        (
            NeedPart("weights", rank.weights_bytes),
            NeedPart("kv_cache", rank.kv_cache_bytes),
            NeedPart("layer_states", rank.state_bytes),
            NeedPart("reserve", rank.reserve_bytes),
        ),
        INFERENCE_MISSING,
    )


def train_need(plan: TrainingPlan, reserve_bytes: Fraction) -> Need:
    """The fullest GPU's need for a training run: its model states (as `iteragpu train`'s
    table and JSON state them) and the reserve; the activations and the step's temporaries to
    measure."""
    rank = plan.first_to_fill
    parts = (
        NeedPart("weights", Fraction(rank.parameters + rank.quant_states)),
        NeedPart("gradients", Fraction(rank.gradients)),
        NeedPart("optimizer_states", Fraction(rank.optimizer + plan.shared_gpu_bytes)),
        NeedPart("master_weights", Fraction(rank.master_weights)),
        NeedPart("master_gradients", Fraction(rank.master_gradients)),
        NeedPart("reserve", reserve_bytes),
    )
    need = Need(parts, TRAINING_MISSING)
    # The parts are the model states' own items: their sum is the table's figure.
    assert need.byte_count == plan.rank_gpu_bytes(rank) + reserve_bytes
    return need
