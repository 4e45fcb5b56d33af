"""Transformers 5.24.0's split: `from_pretrained(tp_plan="auto")` (tensor parallelism), and
`DistributedConfig(pp_size=...)` / `DistributedConfig(tp_size=N, ep_size=N)` (pipeline and
expert parallelism), read in transformers/distributed/ of that release:

- the plans are the model's own (`transformers_plans.json`, held equal to what Transformers
  builds by tests/parallel/test_transformers_plans.py): each parameter takes the style of its
  generic name (layer numbers as `*`), else of its module (parallel_utils.py
  `_get_parameter_plan`); EP rules take precedence over TP rules on the same modules
  (mixin.py `_resolve_parallel_plans`);
- `colwise` styles shard a weight on dim `ndim - 2` and its bias on dim 0, `rowwise` ones a
  weight on its last dim and keep the bias whole (tensor_parallel.py `ColwiseParallel`,
  `RowwiseParallel`); `embedding_rowwise` shards the vocabulary (`EmbeddingParallel`);
  `packed_colwise` cuts each half of a fused gate/up tensor apart (`_StridedShard`, split
  factor 2), `packed_rowwise` the last dim likewise; every other style keeps its parameters
  whole. A dimension need not divide: `distribute_tensor` cuts it as `torch.chunk` does (the
  last ranks shorter, possibly empty), so nothing is padded, the vocabulary included;
- KV heads are split only where the plan shards the key projection with `colwise`
  (tensor_parallel.py `get_kv_heads_per_rank`); when the heads do not divide by the TP size, a
  rank's slice of `k_proj` ends inside a head: the model loads, and its attention's `view`
  fails in the forward pass (tests/parallel/test_transformers_gloo.py runs it);
- pipeline stages: `PipelineStage.layer_range_for_rank` (pipeline_parallel.py) gives each of
  the first `layers % pp` stages one layer more; `apply_pipeline_parallelism` keeps
  `embed_tokens` on the first stage (and on the last when the embeddings are tied), `norm` and
  `lm_head` on the last;
- tensor and pipeline parallelism together fail at load (mixin.py `maybe_distribute_model`
  expands the TP plan over every layer, then the pipeline split replaces the other stages'
  layers, and `apply_tensor_parallelism` cannot find their parameters: KeyError), so they are
  refused;
- expert parallelism (`grouped_gemm`, expert_parallel.py `MoEParamShard`): the experts are cut
  on dim 0, and a count that does not divide is refused ("Cannot evenly shard ...").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any, Final

from iteragpu.models.json_reader import json_loads
from iteragpu.models.kv import MLA_LATENT, PER_HEAD
from iteragpu.models.recipe import TensorSpec
from iteragpu.parallel.records import (
    COLUMN,
    EXPERT_SLICES,
    EXPERTS,
    REPLICATED,
    ROW,
    VOCAB,
    SplitError,
    SplitModel,
    SplitPlan,
    SplitRequest,
)
from iteragpu.parallel.shares import Tally, chunk, rank_kv, refuse_states, tp_rank_plan

VERSION: Final = "5.24.0"
RUNTIME: Final = "transformers"
PLANS_PATH: Final = Path(__file__).with_name("transformers_plans.json")
FLOAT32_BYTES: Final = Fraction(4)

# The styles whose `shard_param` cuts a parameter, and how (tensor_parallel.py, the
# `ALL_PARALLEL_STYLES.register` calls).
_COLWISE: Final = frozenset({"colwise", "colwise_gather_output", "colwise_rep"})
_ROWWISE: Final = frozenset({"rowwise", "rowwise_split_input", "rowwise_rep"})
# Styles that hook a module's forward and leave its parameters whole.
_WHOLE: Final = frozenset(
    {
        "replicated_with_grad_allreduce",
        "moe_tp_experts",
        "moe_identity_expert",
        "ep_dispatch_experts",
        "mla_kv_a_proj",
        "all_reduce",
        "local_params",
        "replicate",
        "sequence_parallel",
    }
)
# get_kv_heads_per_rank: "Projections whose output holds the attention keys, fused or not".
_KEY_PROJECTIONS: Final = ("k_proj", "qkv_proj", "query_key_value")
_QUERY_PROJECTIONS: Final = ("q_proj", "qkv_proj", "query_key_value", "q_b_proj")


@cache
def plans() -> Mapping[str, Any]:
    """The recorded plans, per family."""
    data: dict[str, Any] = json_loads(PLANS_PATH.read_text("utf-8"))
    families: Mapping[str, Any] = data["families"]
    return families


def families() -> tuple[str, ...]:
    return tuple(sorted(plans()))


def full_name(spec: TensorSpec) -> str:
    """The parameter's name in the causal-LM module (`model.layers.3.mlp.up_proj.weight`)."""
    if spec.layer is not None:
        return f"model.layers.{spec.layer}.{spec.name}"
    return spec.name if spec.name.startswith("lm_head") else f"model.{spec.name}"


def generic(name: str) -> str:
    """parallel_utils.py `replace_layer_number_by_wildcard`."""
    return re.sub(r"\.\d+(\.|$)", lambda m: ".*" + m.group(1), name)


def style_of(name: str, plan: Mapping[str, str]) -> str | None:
    """parallel_utils.py `_get_parameter_plan(name, plan, is_weight=True)`."""
    key = generic(name)
    if key in plan:
        return plan[key]
    if "." in key and (module := key.rsplit(".", 1)[0]) in plan:
        return plan[module]
    return None


def resolved(model_type: str, tp: int, ep: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The TP and EP plans as `_resolve_parallel_plans` keeps them: each only when its size is
    above 1, and no TP rule on a module an EP rule names (or on its children)."""
    family = plans()[model_type]
    tp_plan = dict(family["tp_plan"]) if tp > 1 else {}
    ep_plan = dict(family["ep_plan"]) if ep and tp > 1 else {}
    if ep_plan:
        is_expert = re.compile(rf"(?:{'|'.join(map(re.escape, ep_plan))})(?:\..+)?").fullmatch
        tp_plan = {name: style for name, style in tp_plan.items() if not is_expert(name)}
    return tp_plan, ep_plan


def local_elements(style: str | None, shape: tuple[int, ...], tp: int, rank: int) -> int:
    """Elements of a parameter of `shape` that TP rank `rank` holds under `style`."""
    total = 1
    for size in shape:
        total *= size
    if style is None or style in _WHOLE or tp == 1:
        return total
    dims = len(shape)
    if style in _COLWISE:
        dim = dims - 2 if dims > 1 else 0
    elif style in _ROWWISE:
        if dims == 1:
            return total  # a row-parallel bias is added after the reduction: kept whole
        dim = dims - 1
    elif style == "embedding_rowwise":
        dim = 0
    elif style == "embedding_colwise":
        dim = 1
    elif style in ("packed_colwise", "packed_rowwise"):
        if dims == 1:
            return (
                total
                if style == "packed_rowwise"
                else total // shape[0] * chunk(shape[0], tp, rank)
            )
        dim = dims - 2 if style == "packed_colwise" else dims - 1
        # _StridedShard(split_factor=2): each half of the fused dimension is cut apart.
        half = shape[dim] // 2
        return total // shape[dim] * 2 * chunk(half, tp, rank)
    else:
        raise SplitError(
            "Transformers {version}: the parallel style {style!r} is not modelled here",
            "split_style_not_modelled",
            version=VERSION,
            style=style,
        )
    return total // shape[dim] * chunk(shape[dim], tp, rank)


def how_of(style: str | None, spec: TensorSpec, tp: int) -> str:
    if tp == 1 or style is None or style in _WHOLE:
        return REPLICATED
    if style == "embedding_rowwise" or (spec.name.startswith("lm_head") and style in _COLWISE):
        return VOCAB
    if style in _ROWWISE and len(spec.shape) == 1:
        return REPLICATED
    if spec.routed or len(spec.shape) == 3:
        return EXPERT_SLICES
    return ROW if style in _ROWWISE or style == "packed_rowwise" else COLUMN


def layer_ranges(layers: int, pp: int) -> list[tuple[int, int]]:
    """`PipelineStage.layer_range_for_rank` for every stage: the remainder to the first.

    >>> layer_ranges(32, 3)
    [(0, 11), (11, 22), (22, 32)]
    """
    per, remainder = divmod(layers, pp)
    ranges = []
    for stage in range(pp):
        start = stage * per + min(stage, remainder)
        ranges.append((start, start + per + (stage < remainder)))
    return ranges


def stage_holds(spec: TensorSpec, stage: int, pp: int, span: tuple[int, int], tied: bool) -> bool:
    """Whether a pipeline stage keeps a tensor (`apply_pipeline_parallelism`)."""
    if spec.layer is not None:
        return span[0] <= spec.layer < span[1]
    if pp == 1:
        return True
    last = stage == pp - 1
    if spec.name.startswith("embed_tokens"):
        return stage == 0 or (tied and last)
    if spec.name.startswith(("norm", "lm_head")):
        return last
    return True  # another module of the base model: on every stage


def kv_heads_per_rank(model: SplitModel, tp_plan: Mapping[str, str], tp: int) -> int | None:
    """`get_kv_heads_per_rank`: the KV heads a rank caches, None where they are not split.

    Refused as Transformers runs it: heads that do not divide leave a rank a slice of a head,
    which loads and then fails in the forward pass.
    """
    config = model.config
    keys = [n for n, s in tp_plan.items() if n.rsplit(".", 1)[-1] in _KEY_PROJECTIONS]
    if not any(tp_plan[n] == "colwise" for n in keys):
        return None
    queries = [n for n, s in tp_plan.items() if n.rsplit(".", 1)[-1] in _QUERY_PROJECTIONS]
    for what, count, split in (
        ("num_attention_heads", config.heads, any(tp_plan[n] in _COLWISE for n in queries)),
        ("num_key_value_heads", config.kv_heads, True),
    ):
        if split and count % tp:
            raise SplitError(
                "Transformers {version} loads this split but cannot run it: {what} "
                "({count}) are not divisible by --tp {tp}, so each GPU's slice of the projection "
                "ends inside a head and the attention's reshape fails in the forward pass",
                "transformers_heads_not_divisible",
                version=VERSION,
                what=what,
                count=str(count),
                tp=str(tp),
            )
    return config.kv_heads // tp


def element_bytes(spec: TensorSpec, model: SplitModel) -> Fraction:
    """A parameter's element: the weights' dtype, float32 for the modules Transformers keeps
    in float32 (`_keep_in_fp32_modules`: the recipe's `dtype: float32`) when loaded at a dtype."""
    if spec.float32 and not model.weights_dtype.endswith("bits"):
        return FLOAT32_BYTES
    return model.element_bytes


def plan(
    model: SplitModel, request: SplitRequest, kv_per_value: Fraction, reserve: Fraction
) -> SplitPlan:
    """Each rank of `request`'s split under Transformers."""
    config = model.config
    if config.model_type not in plans():
        raise SplitError(
            "Transformers {version}: no tensor-parallel plan of {family} is recorded here "
            "(recorded: {known})",
            "split_family_not_modelled",
            version=VERSION,
            family=config.model_type,
            known=", ".join(families()),
        )
    refuse_states(config, RUNTIME)
    tp, pp = request.tp, request.pp
    if tp > 1 and pp > 1:
        # maybe_distribute_model expands the TP plan into every layer's parameters, then
        # apply_pipeline_parallelism replaces the other stages' layers with identities, and
        # apply_tensor_parallelism looks the expanded names up: KeyError at load
        # (tests/parallel/test_transformers_gloo.py runs it).
        raise SplitError(
            "Transformers {version} cannot set up tensor and pipeline parallelism together: its "
            "TP plan names layers the pipeline split removed, and loading stops with a "
            "KeyError; give --tp or --pp",
            "transformers_tp_and_pp",
            version=VERSION,
        )
    if request.ep and tp == 1:
        raise SplitError(
            "expert parallelism runs over the tensor-parallel GPUs here (as many "
            "expert-parallel as tensor-parallel GPUs): give --tp above 1 with --ep",
            "ep_needs_tp",
        )
    if request.ep and not plans()[config.model_type]["ep_plan"]:
        raise SplitError(
            "Transformers {version}: {family} has no expert-parallel plan",
            "split_no_ep_plan",
            version=VERSION,
            family=config.model_type,
        )
    tp_plan, ep_plan = resolved(config.model_type, tp, request.ep)
    heads = kv_heads_per_rank(model, tp_plan, tp) if tp > 1 else None
    ranges = layer_ranges(config.layers, pp)
    tied = config.tie_word_embeddings
    # Each tensor's share per TP rank, decided once (a 671B model has some 1,500 tensors).
    placed = []
    for spec in model.tensors:
        name = full_name(spec)
        size = element_bytes(spec, model)
        if ep_plan and style_of(name, ep_plan) == "grouped_gemm":
            experts = spec.shape[0]
            if experts % tp:
                raise SplitError(
                    'Transformers {version} refuses this split: "{quoted}"',
                    "transformers_experts_not_divisible",
                    version=VERSION,
                    # its own words, as it writes them
                    quoted=f"Cannot evenly shard {experts} experts across {tp} "
                    "expert-parallel ranks.",
                )
            placed.append((spec, EXPERTS, [spec.elements // tp] * tp, size))
            continue
        style = style_of(name, tp_plan)
        shares = [local_elements(style, spec.shape, tp, r) for r in range(tp)]
        placed.append((spec, how_of(style, spec, tp), shares, size))
    ranks = []
    for stage, span in enumerate(ranges):
        layouts = [
            x for x in model.layouts[span[0] : span[1]] if x.layout in (PER_HEAD, MLA_LATENT)
        ]
        per_token, kv_bytes = rank_kv(
            layouts, heads, request.tokens, kv_per_value, request.sequences
        )
        held = [p for p in placed if stage_holds(p[0], stage, pp, span, tied)]
        for tp_rank in range(tp):
            tally = Tally()
            for spec, how, shares, size in held:
                tally.add(spec, how, shares[tp_rank], size)
            kv = (per_token, request.tokens * request.sequences, kv_bytes)
            ranks.append(tp_rank_plan(tally, stage, tp, tp_rank, span, kv, reserve))
    notes = ["cache_dynamic_prompt_peak", "activations_not_counted"]
    return SplitPlan(
        RUNTIME,
        config.model_type,
        tp,
        pp,
        request.ep,
        request.tokens,
        request.sequences,
        model.weights_dtype,
        request.kv_dtype or model.weights_dtype,
        kv_per_value,
        tuple(ranks),
        None,
        tuple(notes),
    )
