"""The states a model's layers keep in the cache whatever the tokens: Mamba's convolution and SSM
states, linear attention's recurrent state, short convolutions' buffers.

Transformers 5.24 keeps them in one `LinearAttentionLayer` per such layer (cache_utils.py): a
convolution state of `conv_kernel` positions per channel and a recurrent state, allocated at the
first forward, the same for a dynamic and a static cache, for the prompt and while decoding.
Each family's recipe (`states` in `families/<type>.json`) says, per layer kind, each tensor's
elements per sequence and its dtype: the model's (`--dtype`, else the config's), or float32 where
the family keeps it so in a bfloat16 model. `--kv-dtype` sets the attention cache only.

A GGUF file is run by llama.cpp, whose states are its own (iteragpu.models.gguf): one `r` and
one `s` tensor per recurrent layer and sequence, both float32; the config then carries them
(`ModelConfig.runtime`) in place of the recipe's.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Final

from iteragpu.core.records import Record
from iteragpu.models.config import ModelConfig
from iteragpu.models.recipe import StateTensor

FLOAT32_BYTES: Final = 4


class StateGroup(Record):
    """Layers of one kind with the same state tensors."""

    kind: str
    count: int
    tensors: tuple[StateTensor, ...]
    model_bytes_per_value: Fraction | None  # None: the model's dtype is not known
    sequences: int

    def tensor_bytes(self, tensor: StateTensor) -> Fraction:
        """One layer's bytes of `tensor`, all sequences."""
        per_value = Fraction(FLOAT32_BYTES) if tensor.float32 else self.model_bytes_per_value
        assert per_value is not None  # state_estimate refuses an unknown model dtype
        return tensor.elements * per_value * self.sequences

    @property
    def bytes_per_layer(self) -> Fraction:
        return sum((self.tensor_bytes(t) for t in self.tensors), Fraction(0))

    @property
    def state_bytes(self) -> Fraction:
        return self.count * self.bytes_per_layer


class StateEstimate(Record):
    """Every layer's state for `sequences` sequences."""

    groups: tuple[StateGroup, ...]
    per_layer: tuple[Fraction, ...]  # bytes per decoder layer, in order
    sequences: int

    @property
    def state_bytes(self) -> Fraction:
        return sum((g.state_bytes for g in self.groups), Fraction(0))


def layer_states(config: ModelConfig) -> tuple[tuple[StateTensor, ...], ...]:
    """Per decoder layer, the state tensors its kind keeps (none for a family without states);
    a runtime's own (llama.cpp's, for a GGUF file) where the config carries them."""
    if config.runtime is not None:
        by_kind = dict(config.runtime.states)
        return tuple(by_kind.get(kind, ()) for kind in config.layer_kinds)
    from iteragpu.models.recipe import recipe, states

    described = recipe(config.model_type)
    if described is None or config.values is None or not described.data.get("states"):
        return tuple(() for _ in config.layer_kinds)
    scope = described.scope(config.values, "config.json")
    return states(described, scope, config.layer_kinds)


def needs_model_dtype(per_layer: Sequence[tuple[StateTensor, ...]]) -> bool:
    return any(not t.float32 for tensors in per_layer for t in tensors)


def estimate_state(
    config: ModelConfig, model_bytes_per_value: Fraction | None, sequences: int
) -> StateEstimate:
    """Group the layers' states by kind and tensors (in order of first appearance)."""
    per_layer_tensors = layer_states(config)
    counts: dict[tuple[str, tuple[StateTensor, ...]], int] = {}
    for kind, tensors in zip(config.layer_kinds, per_layer_tensors, strict=True):
        if tensors:
            counts[(kind, tensors)] = counts.get((kind, tensors), 0) + 1
    groups = tuple(
        StateGroup(kind, count, tensors, model_bytes_per_value, sequences)
        for (kind, tensors), count in counts.items()
    )
    bytes_of = {(g.kind, g.tensors): g.bytes_per_layer for g in groups}
    per_layer = tuple(
        bytes_of[(kind, tensors)] if tensors else Fraction(0)
        for kind, tensors in zip(config.layer_kinds, per_layer_tensors, strict=True)
    )
    return StateEstimate(groups, per_layer, sequences)
