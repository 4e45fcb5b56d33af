"""The sharding rules without torch: FSDP2's row split and padding (torch 2.13.0's
`_chunk_with_empty` and `padded_sharded_param`), ZeRO-1/2/3's flat partitions (DeepSpeed at
commit edaa7221267243c7be7fb49c5d5f5c4fb97b4641: `stage_1_and_2.py`, `partition_parameters.py`,
`stage3.py`), on small examples worked out by hand, and the refusals (one line each).
tests/training/test_sharding_torch.py proves FSDP2's figures against a real run."""

from __future__ import annotations

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.training.records import StateItem, TrainTensor
from iteragpu.training.sharding import (
    EmptyRankError,
    GpuCountError,
    RankBytes,
    UnshardableError,
    fsdp2_padded_rows,
    fsdp2_rows,
    fsdp2_tensor_bytes,
    shard_plan,
    zero3_sub_groups,
    zero12_partition,
)


def adamw(tensor: TrainTensor, dtype: str, size: int) -> list[StateItem]:
    """AdamW over `tensor` with 16-bit gradients and fp32 master, moments and step (host)."""
    elements = tensor.elements
    return [
        StateItem("gradient", "grad", tensor.shape, dtype, elements * size, "gpu"),
        StateItem("master_weight", "master", tensor.shape, "float32", elements * 4, "gpu"),
        StateItem("optimizer", "exp_avg", tensor.shape, "float32", elements * 4, "gpu"),
        StateItem("optimizer", "exp_avg_sq", tensor.shape, "float32", elements * 4, "gpu"),
        StateItem("optimizer", "step", (), "float32", 4, "host"),
    ]


def kinds(rank: RankBytes) -> tuple[int, ...]:
    return (
        rank.parameters,
        rank.gradients,
        rank.optimizer,
        rank.master_weights,
        rank.host,
        rank.padding,
    )


# --- FSDP2 ------------------------------------------------------------------------------------


def test_fsdp2_rows_follow_torch_chunk() -> None:
    # torch.chunk gives ceil(rows/N) rows a chunk and may make fewer chunks than N:
    # `_chunk_with_empty` appends empty ones (5 rows on 4 ranks: 2, 2, 1, 0, not 2, 1, 1, 1)
    assert fsdp2_rows(5, 4) == (2, 2, 1, 0)
    assert fsdp2_rows(4, 3) == (2, 2, 0)
    assert fsdp2_rows(256, 3) == (86, 86, 84)
    assert fsdp2_rows(32, 3) == (11, 11, 10)
    assert fsdp2_rows(2, 3) == (1, 1, 0)
    assert fsdp2_rows(64, 2) == (32, 32)
    # every rank's storage is chunks[0]'s size
    assert [fsdp2_padded_rows(r, 3) for r in (256, 128, 64, 32, 2)] == [86, 43, 22, 11, 1]


def test_fsdp2_tensor_padded_storage_and_unpadded_states() -> None:
    # the tiny Llama's q_proj (64 x 64, fp32) on 3 ranks: 22, 22, 20 rows; 22 rows stored
    weight = TrainTensor(
        "model.layers.0.self_attn.q_proj.weight", (64, 64), "float32", "base", True
    )
    items = adamw(weight, "float32", 4)[:1] + adamw(weight, "float32", 4)[2:]
    ranks = fsdp2_tensor_bytes(weight, items, 3)
    stored = 22 * 64 * 4
    assert [kinds(r) for r in ranks] == [
        # parameters and gradients padded; moments of the real rows; step whole, on the host
        (stored, stored, 2 * 22 * 64 * 4, 0, 4, 0),
        (stored, stored, 2 * 22 * 64 * 4, 0, 4, 0),
        (stored, stored, 2 * 20 * 64 * 4, 0, 4, 2 * 2 * 64 * 4),
    ]


def test_fsdp2_plan_sums_tensors_and_names_the_first_rank_to_fill() -> None:
    embed = TrainTensor("model.embed_tokens.weight", (256, 64), "bfloat16", "base", True)
    norm = TrainTensor("model.norm.weight", (64,), "bfloat16", "base", True)
    states = {t.name: adamw(t, "bfloat16", 2) for t in (embed, norm)}
    plan = shard_plan([embed, norm], states, "fsdp2", 3)
    # embed: 86 rows stored (84 real on rank 2); norm: 22 stored (20 real on rank 2)
    assert [r.parameters for r in plan.ranks] == [(86 * 64 + 22) * 2] * 3
    assert [r.gradients for r in plan.ranks] == [(86 * 64 + 22) * 2] * 3
    assert [r.master_weights for r in plan.ranks] == [
        (86 * 64 + 22) * 4,
        (86 * 64 + 22) * 4,
        (84 * 64 + 20) * 4,
    ]
    assert [r.host for r in plan.ranks] == [8, 8, 8]
    assert plan.largest.rank == 0
    assert plan.largest.gpu_bytes > plan.ranks[2].gpu_bytes


def test_one_gpu_is_the_whole_run() -> None:
    # `--shard fsdp2 --gpus 1` is accepted: FSDP2 and ZeRO run on one GPU; FSDP2 then holds
    # every tensor whole, as `none` does (ZeRO still flattens and pads to a multiple of 2).
    weight = TrainTensor("w", (3, 5), "bfloat16", "base", True)
    states = {"w": adamw(weight, "bfloat16", 2)}
    whole = shard_plan([weight], states, "none", 1).ranks
    assert shard_plan([weight], states, "fsdp2", 1).ranks == whole
    assert kinds(whole[0]) == (30, 30, 120, 60, 4, 0)
    assert kinds(shard_plan([weight], states, "zero1", 1).ranks[0]) == (32, 30, 128, 64, 4, 14)


def test_fsdp2_keeps_quant_states_whole_and_shards_frozen_tensors() -> None:
    packed = TrainTensor("q.weight", (2048, 1), "uint8", "quantized", False)
    absmax = TrainTensor("q.weight.absmax", (64,), "float32", "quant_state", False)
    lora = TrainTensor("q.lora_A.default.weight", (8, 64), "float32", "adapter", True)
    plan = shard_plan([packed, absmax, lora], {lora.name: adamw(lora, "float32", 4)}, "fsdp2", 3)
    assert [r.quant_states for r in plan.ranks] == [256] * 3
    assert [r.parameters for r in plan.ranks] == [683 + 3 * 64 * 4] * 3
    assert [r.optimizer for r in plan.ranks] == [2 * 3 * 64 * 4, 2 * 3 * 64 * 4, 2 * 2 * 64 * 4]


# --- ZeRO -------------------------------------------------------------------------------------

# Two trainable bf16 tensors of 15 and 7 elements (22) and a frozen one of 10, on 4 ranks.
A = TrainTensor("a", (3, 5), "bfloat16", "base", True)
B = TrainTensor("b", (7,), "bfloat16", "base", True)
FROZEN = TrainTensor("f", (10,), "bfloat16", "base", False)
STATES = {t.name: adamw(t, "bfloat16", 2) for t in (A, B)}


def test_zero12_partition_is_the_aligned_flat_group_over_n() -> None:
    # aligned to nccl_start_alignment_factor (2) x world size, then cut in N equal parts
    assert zero12_partition(22, 4) == 6  # 22 -> 24
    assert zero12_partition(24, 4) == 6
    assert zero12_partition(25, 4) == 8  # 25 -> 32
    assert zero12_partition(106_816, 2) == 53_408
    assert zero12_partition(106_816, 3) == 35_606  # 106,816 -> 106,818


def test_zero1_and_zero2_per_rank_bytes() -> None:
    zero1 = shard_plan([A, B, FROZEN], STATES, "zero1", 4).ranks
    # params: the 24-element bf16 flat buffer whole (2 of padding) + the frozen tensor whole;
    # gradients whole (stage 1); master 6 x 4; two moments 2 x 6 x 4; one `step` (one flat
    # parameter); rank 3 has 4 real elements: 2 of padding in master and moments
    assert [kinds(r) for r in zero1] == [
        (48 + 20, 44, 48, 24, 4, 4),
        (48 + 20, 44, 48, 24, 4, 4),
        (48 + 20, 44, 48, 24, 4, 4),
        (48 + 20, 44, 48, 24, 4, 4 + 2 * 12),
    ]
    zero2 = shard_plan([A, B, FROZEN], STATES, "zero2", 4).ranks
    assert [r.gradients for r in zero2] == [12] * 4
    assert zero2[3].padding == 4 + 2 * 14
    assert shard_plan([A, B, FROZEN], STATES, "zero2", 4).largest.rank == 0


def test_zero3_pads_each_parameter_to_a_multiple_of_n() -> None:
    zero3 = shard_plan([A, B, FROZEN], STATES, "zero3", 4).ranks
    # a: 15 -> 16, 4 a rank (3 real on rank 3); b: 7 -> 8, 2 a rank (1 real on rank 3);
    # the frozen 10 -> 12, 3 a rank (1 real on rank 3); flat states of 4 + 2 = 6 elements
    assert [kinds(r) for r in zero3] == [
        ((4 + 2 + 3) * 2, 12, 48, 24, 4, 0),
        ((4 + 2 + 3) * 2, 12, 48, 24, 4, 0),
        ((4 + 2 + 3) * 2, 12, 48, 24, 4, 0),
        ((4 + 2 + 3) * 2, 12, 48, 24, 4, (1 + 1 + 2) * 2 + 2 * 2 + 2 * (4 + 8)),
    ]


def test_zero3_sub_groups_make_one_step_each() -> None:
    assert zero3_sub_groups([10, 10, 10], size=15) == 2  # 20 closes the first, the last closes
    assert zero3_sub_groups([10, 10, 10], size=10) == 3
    assert zero3_sub_groups([10, 10, 10]) == 1
    assert zero3_sub_groups([]) == 0


# --- bad input --------------------------------------------------------------------------------


def one_line(error: pytest.ExceptionInfo[InputError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert error.value.template.format(**error.value.values) == message
    return message


@pytest.mark.parametrize("gpus", [0, -1])
def test_fewer_than_one_gpu_is_refused(gpus: int) -> None:
    with pytest.raises(GpuCountError) as error:
        shard_plan([A], STATES, "fsdp2", gpus)
    assert error.value.reason == "gpus"
    assert f"not {gpus}" in one_line(error)


def test_several_gpus_without_sharding_are_refused() -> None:
    with pytest.raises(GpuCountError) as error:
        shard_plan([A], STATES, "none", 2)
    assert error.value.reason == "gpus_unsharded"
    one_line(error)


def test_fsdp2_more_gpus_than_rows_of_every_tensor_is_refused() -> None:
    # 3 and 7 rows on 8 GPUs: rank 7 holds no row of either
    with pytest.raises(EmptyRankError) as error:
        shard_plan([A, B], STATES, "fsdp2", 8)
    assert error.value.reason == "shard_empty_rank"
    assert one_line(error) == (
        "--gpus 8 is more than FSDP2 has rows to give: GPU 7 would hold no row of any tensor"
        " (the most rows a tensor has is 7)"
    )
    # 4 rows on 3 GPUs is 2, 2, 0 (torch.chunk): refused though rows are not fewer than GPUs
    four = TrainTensor("w", (4, 2), "float32", "base", False)
    with pytest.raises(EmptyRankError):
        shard_plan([four], {}, "fsdp2", 3)


def test_fsdp2_a_tensor_with_fewer_rows_than_gpus_is_fine() -> None:
    # FSDP2 gives rank 2 an empty shard of the 2-row tensor (proven in the torch test)
    small = TrainTensor("s", (2, 5), "float32", "base", True)
    plan = shard_plan([small, B], {}, "fsdp2", 3)
    assert [r.parameters for r in plan.ranks] == [5 * 4 + 3 * 2] * 3


def test_zero_more_gpus_than_elements_is_refused() -> None:
    with pytest.raises(EmptyRankError) as error:
        shard_plan([B], STATES, "zero2", 8)  # 7 elements -> 16: rank 7 holds only padding
    assert "GPU 7 would hold only padding" in one_line(error)
    with pytest.raises(EmptyRankError):
        shard_plan([B], STATES, "zero3", 8)
    # stage 3 partitions the frozen tensors too: rank 7 has a part of the big one
    big = TrainTensor("big", (64,), "bfloat16", "base", False)
    assert shard_plan([B, big], STATES, "zero3", 8).ranks[7].parameters == (1 + 8) * 2


def test_unshardable_tensors_and_states_are_refused() -> None:
    scalar = TrainTensor("scale", (), "float32", "base", True)
    with pytest.raises(UnshardableError) as error:
        shard_plan([scalar], {}, "fsdp2", 2)
    one_line(error)
    factored = StateItem("optimizer", "row_var", (3,), "float32", 12, "gpu")
    with pytest.raises(UnshardableError) as error:
        shard_plan([A], {"a": [factored]}, "zero1", 2)
    assert "row_var of a has shape 3" in one_line(error)
    mixed = TrainTensor("c", (4,), "float32", "adapter", True)
    with pytest.raises(UnshardableError) as error:
        shard_plan([A, mixed], {}, "zero2", 2)
    assert "bfloat16, float32" in one_line(error)
    # stage 3 partitions each tensor alone: several dtypes are fine
    assert shard_plan([A, mixed], {}, "zero3", 2).ranks[0].parameters == 8 * 2 + 2 * 4


def test_unsharded_run_holds_every_item_whole() -> None:
    scalar = TrainTensor("scale", (), "float32", "base", True)
    items = [StateItem("gradient", "grad", (), "float32", 4, "gpu")]
    plan = shard_plan([scalar, A], {"scale": items, **STATES}, "none", 1)
    assert kinds(plan.ranks[0]) == (4 + 30, 4 + 30, 2 * 60, 60, 4, 0)
