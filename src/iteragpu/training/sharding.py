"""What each GPU of a sharded run holds, per item kind, in bytes: FSDP2 and ZeRO-1/2/3.

The input is what an unsharded run holds: its tensors (`TrainTensor`) and, per trainable tensor,
the `StateItem`s it adds (gradient, optimizer states, master copies). The rules are the
libraries' own, read at their source:

FSDP2 (`torch.distributed.fsdp.fully_shard`, torch 2.13.0, `_fully_shard/_fsdp_param.py`
`FSDPParam._init_sharded_param`, `_fsdp_common.py` `_chunk_with_empty`, and
`_fsdp_collectives.py` `foreach_reduce`):

- every parameter is split on dim 0 with `torch.chunk`: ceil(rows/N) rows a rank, the last
  ranks taking what is left, possibly nothing (`_chunk_with_empty` appends empty chunks);
- each rank stores its shard in a zero-padded tensor of `chunks[0]`'s size, so every rank, one
  with an empty shard included, holds ceil(rows/N) rows of storage for each parameter;
- gradients are views (`torch.as_strided`) into the reduce-scatter output of their group, a flat
  buffer of the padded shards: a rank holds ceil(rows/N) rows of storage per gradient, of which
  its own rows are the real ones (`.grad.to_local()` has the unpadded shape);
- optimizer states are created from the unpadded local shard (`zeros_like` of the DTensor):
  they hold the rank's real rows only; the `step` counters are not sharded, one per tensor, on
  the device the unsharded run has them (the host unless fused or capturable);
- a parameter of no dimension cannot be sharded on dim 0 (FSDP2 raises), and a tensor whose
  rows are fewer than N gives some ranks an empty shard: FSDP2 runs so (proven by
  tests/training/test_sharding_torch.py). This module refuses only a rank that would hold no
  row of any tensor, a GPU with nothing to train.

ZeRO (DeepSpeed, github.com/deepspeedai/DeepSpeed at commit
edaa7221267243c7be7fb49c5d5f5c4fb97b4641; DeepSpeed cannot run here, so these figures are read
from that source):

- stages 1 and 2 (`deepspeed/runtime/zero/stage_1_and_2.py`, `DeepSpeedZeroOptimizer.__init__`):
  the trainable parameters of a group are flattened into one buffer padded to a multiple of
  `nccl_start_alignment_factor * world_size` = 2N elements (`align_dense_tensors`,
  `deepspeed/runtime/utils.py`), held whole on every rank; `get_data_parallel_partitions` cuts
  it into N equal partitions of aligned/N elements. Each rank's optimizer sees one flat
  parameter of its partition (`param_group['params'] = [single_partition_of_fp32_groups[i]]`):
  elementwise states and master copies are aligned/N elements, and a scalar state (`step`) is
  one per group, not one per tensor. Stage 1 keeps gradients whole, stage 2 partitions them.
  Frozen parameters are not flattened: whole on every rank.
- stage 3 (`deepspeed/runtime/zero/partition_parameters.py` `_partition_param`,
  `_padding_size`; `deepspeed/runtime/zero/stage3.py`): every parameter, frozen ones too, is
  padded to a multiple of N and each rank keeps ceil(numel/N) elements (`ds_tensor`); the
  gradient partitions (`grad_partitions_flat_buffer`), the master partitions and the optimizer
  states are flat buffers of the sum of those partitions; the optimizer gets one flat parameter
  per sub-group (`_create_fp16_sub_groups`, `sub_group_size` 1e9 elements by default in
  `deepspeed/runtime/zero/config.py`), so a scalar state is one per sub-group.

Not counted: the communication buffers (FSDP2's all-gather output while a layer computes,
ZeRO's bucket buffers `reduce_bucket_size`/`allgather_bucket_size`), which are transient or set
by configuration. Quantization states (`quant_state` role) are not parameters, so neither
library shards them: counted whole on every rank (read, not proven: bitsandbytes under FSDP2 or
ZeRO is not run here). An optimizer state neither of its tensor's shape nor scalar (Adafactor's
factored rows and columns, 8-bit block scales) is refused: its sharded layout is not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record
from iteragpu.training.records import SHARDS, Shard, StateItem, TrainTensor

DEEPSPEED_COMMIT: Final = "edaa7221267243c7be7fb49c5d5f5c4fb97b4641"
# stage_1_and_2.py: `self.nccl_start_alignment_factor = 2  # 4-byte alignment/sizeof(fp16) = 2`
ZERO_ALIGNMENT_FACTOR: Final = 2
# deepspeed/runtime/zero/config.py: `sub_group_size: int = Field(pp_int(1e9), ge=0)`
ZERO3_SUB_GROUP_SIZE: Final = 1_000_000_000

# Bytes per element of the storage dtypes a run's tensors have (torch's names).
ELEMENT_BYTES: Final[dict[str, int]] = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}


class ShardingError(InputError):
    """A sharded run this module cannot size, or one with a GPU that holds nothing."""


class GpuCountError(ShardingError):
    """A GPU count below 1, or several GPUs with no sharding."""


class EmptyRankError(ShardingError):
    """More GPUs than rows (FSDP2) or elements (ZeRO) to shard: a rank would hold none."""


class UnshardableError(ShardingError):
    """A tensor or state whose sharded layout the rules do not give (a 0-D parameter, a
    factored state, trainable tensors of several dtypes under ZeRO)."""


class RankBytes(Record):
    """What one rank holds, per item kind, in bytes (GPU unless named host)."""

    rank: int
    parameters: int  # parameter storage, padding included where it is held
    quant_states: int  # quantization states (bitsandbytes absmax...): whole on every rank
    gradients: int  # gradient storage, padding included where it is held
    optimizer: int  # optimizer states on the GPU
    master_weights: int
    master_gradients: int
    host: int  # items on the host (the `step` counters unless fused): not GPU memory
    padding: int  # of the GPU bytes above, those that are padding (zeros no real row needs)

    @property
    def gpu_bytes(self) -> int:
        return (
            self.parameters
            + self.quant_states
            + self.gradients
            + self.optimizer
            + self.master_weights
            + self.master_gradients
        )


class ShardPlan(Record):
    """Each rank's bytes, and the rank first to fill (the largest; the lowest on a tie)."""

    shard: Shard
    gpus: int
    ranks: tuple[RankBytes, ...]

    @property
    def largest(self) -> RankBytes:
        return max(self.ranks, key=lambda rank: (rank.gpu_bytes, -rank.rank))


# --- FSDP2 arithmetic -------------------------------------------------------------------------


def fsdp2_padded_rows(rows: int, gpus: int) -> int:
    """Rows of storage every rank holds for a tensor of `rows` rows: `torch.chunk`'s chunk
    size, ceil(rows/N) (`padded_sharded_size = chunks[0].size()`).

    >>> fsdp2_padded_rows(256, 3), fsdp2_padded_rows(2, 3)
    (86, 1)
    """
    return -(-rows // gpus)


def fsdp2_rows(rows: int, gpus: int) -> tuple[int, ...]:
    """The real rows of each rank: `torch.chunk` then `_chunk_with_empty`.

    >>> fsdp2_rows(256, 3), fsdp2_rows(4, 3), fsdp2_rows(5, 4)
    ((86, 86, 84), (2, 2, 0), (2, 2, 1, 0))
    """
    chunk = fsdp2_padded_rows(rows, gpus)
    return tuple(max(0, min(chunk, rows - rank * chunk)) for rank in range(gpus))


# --- ZeRO arithmetic --------------------------------------------------------------------------


def zero12_partition(elements: int, gpus: int) -> int:
    """Elements of each rank's partition of a stage 1/2 flat group of `elements`: the group
    padded to a multiple of 2N, cut into N equal parts.

    >>> zero12_partition(106_816, 3), zero12_partition(7, 2)
    (35606, 4)
    """
    alignment = ZERO_ALIGNMENT_FACTOR * gpus
    return -(-elements // alignment) * alignment // gpus


def zero3_partition(elements: int, gpus: int) -> int:
    """Elements each rank keeps of one stage 3 parameter: padded to a multiple of N, split.

    >>> zero3_partition(16_384, 3), zero3_partition(64, 3)
    (5462, 22)
    """
    return -(-elements // gpus)


def zero3_sub_groups(partitions: Sequence[int], size: int = ZERO3_SUB_GROUP_SIZE) -> int:
    """How many sub-groups stage 3 makes of parameters with these partition sizes
    (`_create_fp16_sub_groups`: a group closes once it reaches `size` elements).

    >>> zero3_sub_groups([10, 10, 10], size=15), zero3_sub_groups([10, 10], size=100)
    (2, 1)
    """
    if not partitions or size >= sum(partitions):
        return 1 if partitions else 0
    groups, running = 0, 0
    for index, partition in enumerate(partitions):
        running += partition
        if running >= size or index == len(partitions) - 1:
            groups, running = groups + 1, 0
    return groups


# --- the plan ---------------------------------------------------------------------------------


def element_bytes(dtype: str) -> int:
    if dtype not in ELEMENT_BYTES:
        raise UnshardableError(
            "unknown storage dtype {dtype} for sharding", "shard_dtype", dtype=dtype
        )
    return ELEMENT_BYTES[dtype]


def _elements(shape: tuple[int, ...]) -> int:
    result = 1
    for size in shape:
        result *= size
    return result


def _item_element_bytes(item: StateItem) -> int:
    elements = _elements(item.shape)
    return item.bytes // elements if elements else element_bytes(item.dtype)


def _check_gpus(shard: Shard, gpus: int) -> None:
    if shard not in SHARDS:
        raise ShardingError(
            "unknown shard mode {shard} (known: {known})",
            "shard_mode",
            shard=str(shard),
            known=", ".join(SHARDS),
        )
    if gpus < 1:
        raise GpuCountError("--gpus must be 1 or more, not {gpus}", "gpus", gpus=str(gpus))
    if shard == "none" and gpus > 1:
        raise GpuCountError(
            "--gpus {gpus} without sharding: replicated data parallel adds gradient buckets"
            " this tool does not size; choose --shard fsdp2, zero1, zero2 or zero3",
            "gpus_unsharded",
            gpus=str(gpus),
        )


def _state_shape(tensor: TrainTensor, item: StateItem) -> str:
    """`whole` (a scalar), `rows` (the tensor's shape), or refused."""
    if item.shape == ():
        return "whole"
    if item.shape == tensor.shape:
        return "rows"
    raise UnshardableError(
        "{name} of {tensor} has shape {shape}, not its tensor's: its sharded layout is not"
        " known to this tool",
        "shard_state_shape",
        name=item.name,
        tensor=tensor.name,
        shape="x".join(map(str, item.shape)),
    )


class _Tally:
    def __init__(self, gpus: int) -> None:
        self.gpus = gpus
        self.kinds = [dict.fromkeys(_KINDS, 0) for _ in range(gpus)]

    def add(
        self, kind: str, amounts: Sequence[int] | int, padding: Sequence[int] | int = 0
    ) -> None:
        for rank in range(self.gpus):
            amount = amounts if isinstance(amounts, int) else amounts[rank]
            pad = padding if isinstance(padding, int) else padding[rank]
            self.kinds[rank][kind] += amount
            if kind != "host":
                self.kinds[rank]["padding"] += pad

    def plan(self, shard: Shard) -> ShardPlan:
        return ShardPlan(
            shard,
            self.gpus,
            tuple(RankBytes(rank, **kinds) for rank, kinds in enumerate(self.kinds)),
        )


_KINDS: Final = (
    "parameters",
    "quant_states",
    "gradients",
    "optimizer",
    "master_weights",
    "master_gradients",
    "host",
    "padding",
)
_ITEM_KIND: Final = {
    "gradient": "gradients",
    "optimizer": "optimizer",
    "master_weight": "master_weights",
    "master_gradient": "master_gradients",
}


def _kind(item: StateItem) -> str:
    return "host" if item.device == "host" else _ITEM_KIND[item.kind]


def shard_plan(
    tensors: Sequence[TrainTensor],
    states: Mapping[str, Sequence[StateItem]],
    shard: Shard,
    gpus: int,
) -> ShardPlan:
    """Each rank's bytes for `tensors` and the `states` of each trainable tensor (by its name)
    under `shard` over `gpus` GPUs. `shard="none"` takes one GPU and holds everything whole.

    >>> from iteragpu.training.records import TrainTensor as T, StateItem as S
    >>> weight = T("w", (5, 4), "float32", "base", True)
    >>> grad = S("gradient", "grad", (5, 4), "float32", 80, "gpu")
    >>> plan = shard_plan([weight], {"w": [grad]}, "fsdp2", 3)
    >>> [(r.parameters, r.gradients, r.padding) for r in plan.ranks], plan.largest.rank
    ([(32, 32, 0), (32, 32, 0), (32, 32, 32)], 0)
    """
    _check_gpus(shard, gpus)
    tally = _Tally(gpus)
    if shard == "none":
        _whole(tally, tensors, states)
    elif shard == "fsdp2":
        _fsdp2(tally, tensors, states, gpus)
    else:
        _zero(tally, tensors, states, int(shard[-1]), gpus)
    return tally.plan(shard)


def fsdp2_tensor_bytes(
    tensor: TrainTensor, items: Sequence[StateItem], gpus: int
) -> tuple[RankBytes, ...]:
    """What each rank holds for one tensor and its items under FSDP2 over `gpus` GPUs (no
    refusal of empty shards: FSDP2 runs with them).

    >>> from iteragpu.training.records import TrainTensor as T
    >>> [r.parameters - r.padding for r in fsdp2_tensor_bytes(T("w", (4, 3), "bfloat16",
    ...     "base", False), (), 3)]
    [12, 12, 0]
    """
    tally = _Tally(gpus)
    size = element_bytes(tensor.dtype)
    if tensor.role == "quant_state":
        tally.add("quant_states", tensor.elements * size)
        return tally.plan("fsdp2").ranks
    if not tensor.shape:
        raise UnshardableError(
            "{tensor} has no dimension: FSDP2 shards a tensor on its rows",
            "shard_scalar",
            tensor=tensor.name,
        )
    rows = tensor.shape[0]
    row_elements = tensor.elements // rows if rows else 0
    real = fsdp2_rows(rows, gpus)
    padded = fsdp2_padded_rows(rows, gpus)
    # the padded local tensor (`padded_sharded_param`), on every rank
    tally.add(
        "parameters",
        padded * row_elements * size,
        [(padded - mine) * row_elements * size for mine in real],
    )
    for item in items if tensor.trainable else ():
        item_size = _item_element_bytes(item)
        if _state_shape(tensor, item) == "whole":
            tally.add(_kind(item), item.bytes)
        elif item.kind == "gradient" and item.device == "gpu":
            # a view into the padded reduce-scatter output: padded rows held
            tally.add(
                "gradients",
                padded * row_elements * item_size,
                [(padded - mine) * row_elements * item_size for mine in real],
            )
        else:
            tally.add(_kind(item), [mine * row_elements * item_size for mine in real])
    return tally.plan("fsdp2").ranks


def _whole(
    tally: _Tally, tensors: Sequence[TrainTensor], states: Mapping[str, Sequence[StateItem]]
) -> None:
    for tensor in tensors:
        kind = "quant_states" if tensor.role == "quant_state" else "parameters"
        tally.add(kind, tensor.elements * element_bytes(tensor.dtype))
        for item in states.get(tensor.name, ()) if tensor.trainable else ():
            tally.add(_kind(item), item.bytes)


def _fsdp2(
    tally: _Tally,
    tensors: Sequence[TrainTensor],
    states: Mapping[str, Sequence[StateItem]],
    gpus: int,
) -> None:
    last_rank_rows = None
    for tensor in tensors:
        for rank in fsdp2_tensor_bytes(tensor, states.get(tensor.name, ()), gpus):
            for kind in _KINDS:
                tally.kinds[rank.rank][kind] += getattr(rank, kind)
        if tensor.role != "quant_state":
            last_rank_rows = (last_rank_rows or 0) + fsdp2_rows(tensor.shape[0], gpus)[-1]
    if last_rank_rows == 0:
        most = max(t.shape[0] for t in tensors if t.role != "quant_state")
        raise EmptyRankError(
            "--gpus {gpus} is more than FSDP2 has rows to give: GPU {rank} would hold no row"
            " of any tensor (the most rows a tensor has is {rows})",
            "shard_empty_rank",
            gpus=str(gpus),
            rank=str(gpus - 1),
            rows=str(most),
        )


def _zero(
    tally: _Tally,
    tensors: Sequence[TrainTensor],
    states: Mapping[str, Sequence[StateItem]],
    stage: int,
    gpus: int,
) -> None:
    sharded_kinds = {"optimizer", "master_weight", "master_gradient"}
    if stage >= 2:
        sharded_kinds.add("gradient")
    trainable = [t for t in tensors if t.trainable and t.role != "quant_state"]
    dtypes = sorted({t.dtype for t in trainable})
    if stage < 3 and len(dtypes) > 1:
        raise UnshardableError(
            "ZeRO-{stage} flattens the trainable tensors into one buffer: they must share one"
            " dtype, not {dtypes}",
            "shard_dtypes",
            stage=str(stage),
            dtypes=", ".join(dtypes),
        )
    # Elements of each rank's partition of the flattened states, and how many flat parameters
    # (so many `step` counters) the optimizer sees.
    if stage < 3:
        total = sum(t.elements for t in trainable)
        partition = zero12_partition(total, gpus)
        real = [max(0, min(partition, total - rank * partition)) for rank in range(gpus)]
        flat_parameters = 1 if trainable else 0
    else:
        partitions = [zero3_partition(t.elements, gpus) for t in trainable]
        partition = sum(partitions)
        real = [
            sum(
                max(0, min(p, t.elements - rank * p))
                for p, t in zip(partitions, trainable, strict=True)
            )
            for rank in range(gpus)
        ]
        flat_parameters = zero3_sub_groups(partitions)
    _refuse_empty_rank(tensors, trainable, stage, gpus, real)

    for tensor in tensors:
        size = element_bytes(tensor.dtype)
        if tensor.role == "quant_state":
            tally.add("quant_states", tensor.elements * size)
        elif stage == 3:
            mine = zero3_partition(tensor.elements, gpus)
            tally.add(
                "parameters",
                mine * size,
                [
                    (mine - max(0, min(mine, tensor.elements - rank * mine))) * size
                    for rank in range(gpus)
                ],
            )
        elif not tensor.trainable:
            tally.add("parameters", tensor.elements * size)
    if stage < 3 and trainable:
        # the flat buffer, whole on every rank, with its alignment padding
        size = element_bytes(dtypes[0])
        flat = partition * gpus
        total = sum(t.elements for t in trainable)
        tally.add("parameters", flat * size, (flat - total) * size)

    # One flat parameter per group: each (kind, name, dtype, device) of the sharded kinds is one
    # flat state of the partition's elements, or, for a scalar, one per flat parameter.
    families: dict[tuple[str, str, str, str], tuple[int, bool]] = {}
    for tensor in trainable:
        for item in states.get(tensor.name, ()):
            scalar = _state_shape(tensor, item) == "whole"
            if item.kind in sharded_kinds:
                key = (item.kind, item.name, item.dtype, item.device)
                families[key] = (_item_element_bytes(item), scalar)
            else:
                tally.add(_kind(item), item.bytes)
    for (kind, _name, _dtype, device), (item_size, scalar) in families.items():
        target = "host" if device == "host" else _ITEM_KIND[kind]
        if scalar:
            tally.add(target, flat_parameters * item_size)
        else:
            tally.add(
                target, partition * item_size, [(partition - mine) * item_size for mine in real]
            )


def _refuse_empty_rank(
    tensors: Sequence[TrainTensor],
    trainable: Sequence[TrainTensor],
    stage: int,
    gpus: int,
    real: Sequence[int],
) -> None:
    if not trainable or real[-1] > 0:
        return
    if stage == 3:
        # stage 3 also partitions the frozen parameters: a rank with some of them has work
        for tensor in tensors:
            if tensor.role != "quant_state" and not tensor.trainable:
                mine = zero3_partition(tensor.elements, gpus)
                if tensor.elements - (gpus - 1) * mine > 0:
                    return
    raise EmptyRankError(
        "--gpus {gpus} is more than ZeRO-{stage} has elements to give: GPU {rank} would hold"
        " only padding",
        "shard_empty_rank",
        gpus=str(gpus),
        stage=str(stage),
        rank=str(gpus - 1),
    )
