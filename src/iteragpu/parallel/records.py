"""The records a split exchanges: the request, each rank's tensors and bytes, and the plan.

Every byte figure is exact (a `Fraction`: a q4_0 cache or `--bits 4.5` weights hold fractions of
a byte per value, never per row or per tensor). A rank's bytes are kept in two kinds, so that a
caller can solve backwards (the longest context that fits, issue 25): what does not grow with
the tokens (`fixed_bytes`: weights, layer states, the reserve) and what does
(`kv_bytes_per_token` times `kv_tokens`, the token slots the runtime allocates for the asked
tokens and sequences, by its own rule: `allocated_tokens` of the runtime's module).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Final

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record

if TYPE_CHECKING:
    from iteragpu.models.config import ModelConfig
    from iteragpu.models.kv import LayerLayout
    from iteragpu.models.recipe import TensorSpec

RUNTIMES: Final = ("transformers", "vllm", "llama.cpp")

# How a rank holds a tensor (the `how` of `TensorShare`):
COLUMN: Final = "column"  # split on its output rows (and its bias): Shard(0)
ROW: Final = "row"  # split on its input columns: Shard(-1)
VOCAB: Final = "vocab"  # an embedding or head split on the vocabulary (vLLM pads it first)
EXPERTS: Final = "experts"  # whole experts, split over the expert-parallel ranks
EXPERT_SLICES: Final = "expert_slices"  # every expert, each sliced over the TP ranks
REPLICATED: Final = "replicated"  # whole on every rank of its stage
KV_REPLICATED: Final = "kv_replicated"  # vLLM: KV heads copied when TP exceeds them
WHOLE: Final = "whole"  # llama.cpp: a tensor on the one device that holds its layer
DUPLICATED: Final = "duplicated"  # llama.cpp: a copy of a tensor another device holds too
# The kinds that another rank of the same stage holds too.
REPEATED: Final = frozenset({REPLICATED, KV_REPLICATED, DUPLICATED})


class SplitError(InputError):
    """A split the runtime itself refuses (its rule quoted), or one this package does not
    model (said so): one line, exit 2."""


class SplitRequest(Record):
    """One split: the model, the context, the runtime and its parallel settings.

    `tokens` is the context per sequence, except for llama.cpp, where it is `-c` (n_ctx), the
    context its `parallel` slots (`-np`) share. `tp` and `pp` are the tensor- and
    pipeline-parallel sizes; `ep` turns on expert parallelism over the TP ranks (vLLM's
    `--enable-expert-parallel`, Transformers' `ep_size` = `tp_size`). llama.cpp splits by
    layers: `pp` is its GPU count (or the length of `tensor_split`, `-ts`), `gpu_layers` its
    `-ngl`. `pp_partition` is vLLM's `VLLM_PP_LAYER_PARTITION`.
    """

    path: str
    tokens: int
    sequences: int = 1
    runtime: str = "transformers"
    tp: int = 1
    pp: int = 1
    ep: bool = False
    pp_partition: tuple[int, ...] | None = None
    gpu_layers: int | None = None
    tensor_split: tuple[Fraction, ...] | None = None
    parallel: int = 1
    dtype: str | None = None
    bits: Fraction | None = None
    kv_dtype: str | None = None
    reserve_gib: Fraction = Fraction(0)


class TensorShare(Record):
    """What one rank holds of one tensor name, summed over the rank's layers."""

    name: str  # within its module: `self_attn.q_proj.weight`, `embed_tokens.weight`
    section: str  # "embeddings", "layer" or "final"; llama.cpp: "input", "layer", "output"
    how: str  # COLUMN, ROW, VOCAB, EXPERTS, EXPERT_SLICES, REPLICATED...
    layers: int  # how many layers' copies are summed (1 outside the layers)
    elements: int
    byte_count: Fraction


class RankPlan(Record):
    """One GPU (or, for llama.cpp, the host) of a split."""

    rank: int
    device: str  # "gpu" (a rank) or "host" (llama.cpp: what stays in host memory)
    tp_rank: int
    pp_stage: int
    layers: tuple[int, int]  # [first, end) of the decoder layers it runs; (0, 0): none
    tensors: tuple[TensorShare, ...]
    weights_bytes: Fraction
    weights_replicated_bytes: Fraction  # of weights_bytes, what other ranks hold too
    kv_bytes_per_token: Fraction  # one token of one sequence, this rank's layers
    kv_tokens: int  # token slots the runtime allocates (all sequences), per layer
    kv_cache_bytes: Fraction
    state_bytes: Fraction
    reserve_bytes: Fraction
    output_layer: bool = False  # llama.cpp: holds the output layer

    @property
    def fixed_bytes(self) -> Fraction:
        """What does not grow with the tokens: weights, states, the reserve."""
        return self.weights_bytes + self.state_bytes + self.reserve_bytes

    @property
    def total_bytes(self) -> Fraction:
        return self.fixed_bytes + self.kv_cache_bytes


class SplitPlan(Record):
    """Every rank of a split, and where the rest stays (llama.cpp's host)."""

    runtime: str
    model_type: str
    tp: int
    pp: int
    ep: bool
    tokens: int
    sequences: int
    weights_dtype: str  # the dtype (or "N bits") the weights are held at; "gguf" for a file
    kv_dtype: str
    kv_bytes_per_value: Fraction
    ranks: tuple[RankPlan, ...]
    host: RankPlan | None = None
    notes: tuple[str, ...] = ()  # codes of what the figures assume or leave out

    @property
    def first_to_fill(self) -> RankPlan:
        """The GPU that needs the most (the lowest rank on a tie): a card must hold it."""
        return max(self.ranks, key=lambda rank: (rank.total_bytes, -rank.rank))


class SplitModel(Record):
    """The model a split places: its config, every parameter tensor of its recipe, the bytes
    of one of their elements at the weights' dtype (or bits), and what each layer caches.

    `gguf` holds a GGUF file's own tensors (name, elements, bytes) for llama.cpp, which reads
    no recipe.
    """

    config: ModelConfig
    tensors: tuple[TensorSpec, ...]  # in the recipe's order, tied weights once
    element_bytes: Fraction  # one element at the weights' dtype or bits
    weights_dtype: str
    layouts: tuple[LayerLayout, ...]  # one per decoder layer
    gguf: tuple[tuple[str, int, int], ...] | None = None
