"""What the runtimes share: the model's tensors at their element sizes, a rank's tensors summed
per name, torch.chunk's split of a dimension, and the KV cache of a rank's layers.

The runtime modules decide, per tensor, how many of its elements each rank holds; this module
adds them up per rank and name, so that a plan lists a 64-layer model's `q_proj` once per rank
(with its layer count) rather than 64 times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

from iteragpu.models.config import ModelConfig
from iteragpu.models.kv import Cache, LayerLayout, estimate_kv
from iteragpu.models.recipe import TensorSpec
from iteragpu.parallel.records import REPEATED, RankPlan, SplitError, TensorShare


def chunk(size: int, parts: int, index: int) -> int:
    """Elements of part `index` when `size` is cut with `torch.chunk` (DTensor's `Shard`,
    torch/distributed/tensor/placement_types.py `_local_shard_size_and_offset`, torch
    2.13.0): ceil(size/parts) each, the last parts taking what is left, possibly nothing.

    >>> [chunk(250, 4, i) for i in range(4)], [chunk(2, 3, i) for i in range(3)]
    ([63, 63, 63, 61], [1, 1, 0])
    """
    step = -(-size // parts)
    start = step * index
    return max(0, min(size, start + step) - start)


def section(spec: TensorSpec) -> str:
    """The recipe section a tensor comes from: a layer's, the embeddings' or the final ones'
    (a recipe lists the embeddings first; the head and the final norm come last)."""
    if spec.layer is not None:
        return "layer"
    return "final" if spec.name.startswith(("lm_head", "norm")) else "embeddings"


class Tally:
    """One rank's tensors, summed per (section, name, how): whole elements are added up per
    element size, and turned into bytes once (a 671B model on 16 ranks adds some 15,000)."""

    def __init__(self) -> None:
        # The element size is keyed as its (numerator, denominator): hashing a Fraction
        # computes a modular inverse, and the key is hashed at every add.
        self._rows: dict[tuple[str, str, str, int, int], list[int]] = {}

    def add(
        self,
        spec: TensorSpec,
        how: str,
        elements: int,
        element_bytes: Fraction,
        name: str = "",
        where: str = "",
    ) -> None:
        if elements == 0:
            return
        key = (
            where or section(spec),
            name or spec.name,
            how,
            element_bytes.numerator,
            element_bytes.denominator,
        )
        row = self._rows.get(key)
        if row is None:
            self._rows[key] = [1, elements]
        else:
            row[0] += 1
            row[1] += elements

    def shares(self) -> tuple[TensorShare, ...]:
        merged: dict[tuple[str, str, str], list[int | Fraction]] = {}
        for (where, name, how, numerator, denominator), (count, elements) in self._rows.items():
            row = merged.setdefault((where, name, how), [0, 0, Fraction(0)])
            row[0] += count
            row[1] += elements
            row[2] += Fraction(elements * numerator, denominator)
        return tuple(
            TensorShare(name, where, how, int(row[0]), int(row[1]), Fraction(row[2]))
            for (where, name, how), row in merged.items()
        )


def weights_of(shares: Iterable[TensorShare]) -> tuple[Fraction, Fraction]:
    """(all the weights, the part other ranks hold too) of a rank's tensors."""
    total = repeated = Fraction(0)
    for share in shares:
        total += share.byte_count
        if share.how in REPEATED:
            repeated += share.byte_count
    return total, repeated


def tp_rank_plan(
    tally: Tally,
    stage: int,
    tp: int,
    tp_rank: int,
    span: tuple[int, int],
    kv: tuple[Fraction, int, Fraction],
    reserve: Fraction,
) -> RankPlan:
    """One GPU of a tensor- and pipeline-parallel split (Transformers, vLLM): its tensors as
    tallied, numbered stage by stage; `kv` is (bytes per token, token slots, cache bytes). With
    one TP rank nothing is held twice within a stage."""
    shares = tally.shares()
    weights, repeated = weights_of(shares)
    per_token, slots, kv_bytes = kv
    return RankPlan(
        stage * tp + tp_rank,
        "gpu",
        tp_rank,
        stage,
        span,
        shares,
        weights,
        repeated if tp > 1 else Fraction(0),
        per_token,
        slots,
        kv_bytes,
        Fraction(0),
        reserve,
    )


def rank_kv(
    layouts: Sequence[LayerLayout],
    heads: int | None,
    tokens: int,
    per_value: Fraction,
    sequences: int,
) -> tuple[Fraction, Fraction]:
    """(bytes per token of one sequence, the cache's bytes) of a rank's layers, each holding
    `heads` KV heads (None: the layout's own) under Transformers' dynamic cache (its peak right
    after the prompt, iteragpu.models.kv)."""
    if not layouts:
        return Fraction(0), Fraction(0)
    if heads is not None:
        layouts = [
            LayerLayout(x.kind, x.window, x.layout, heads, x.key_dim, x.value_dim) for x in layouts
        ]
    estimate = estimate_kv(list(layouts), tokens, per_value, sequences, Cache("dynamic"))
    return estimate.kv_bytes_per_token, estimate.kv_cache_bytes


def refuse_states(config: ModelConfig, runtime: str) -> None:
    """Layers that keep a state (Mamba, linear attention) are not split here."""
    from iteragpu.models.state import layer_states

    if any(layer_states(config)):
        raise SplitError(
            "{family}: its layers keep recurrent states, whose split over GPUs is not "
            "modelled here ({runtime})",
            "split_states_not_modelled",
            family=config.model_type,
            runtime=runtime,
        )


def divide(numerator: int, denominator: int, what: str, where: str) -> int:
    """`numerator // denominator`, or vLLM's own refusal when it does not divide (`divide`,
    vllm/distributed/utils.py: `assert numerator % denominator == 0`); `what` names the size
    (a config key or a tensor), `where` the layer class that divides it."""
    if numerator % denominator:
        raise SplitError(
            "vLLM 0.34.0 refuses this split: {what} = {numerator} is not divisible by "
            "{denominator} ({where}: divide() asserts a zero remainder)",
            "vllm_not_divisible",
            what=what,
            numerator=str(numerator),
            denominator=str(denominator),
            where=where,
        )
    return numerator // denominator
