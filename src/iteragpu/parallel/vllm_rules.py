"""vLLM 0.34.0's split, read in its source (the sdist `vllm-0.34.0.tar.gz` on PyPI, sha256
fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113):

- refusals, in vLLM's order: `ModelConfig.verify_with_parallel_config` (config/model.py:
  "Total number of attention heads (H) must be divisible by tensor parallel size (T)."), then
  each layer's `divide` (distributed/utils.py: `assert numerator % denominator == 0`, "N is not
  divisible by D"): `QKVParallelLinear` (model_executor/layers/linear.py) divides the KV heads
  by the TP size, or, from `tp >= kv_heads` on, the TP size by the KV heads (each rank then
  holds one KV head, `num_kv_head_replicas = tp / kv_heads` copies of each), the column- and
  row-parallel layers divide their sharded width, `VocabParallelEmbedding` the padded
  vocabulary; `FusedMoEConfig` asserts `intermediate_size % tp_size == 0`
  (layers/fused_moe/config.py); Qwen2-MoE and Qwen3-MoE refuse a TP size above their experts
  (models/qwen2_moe.py, qwen3_moe.py: "Tensor parallel size T is greater than the number of
  experts E.");
- the KV heads a rank caches: `ModelConfig.get_num_kv_heads`, `max(1, kv_heads // tp)`; 1
  latent head under MLA ("When using MLA during decode it becomes MQA"), the same on every rank;
- `VocabParallelEmbedding` and `ParallelLMHead` pad the vocabulary to a multiple of 64
  (`DEFAULT_VOCAB_PADDING_SIZE`, `pad_vocab_size`) before cutting it in equal parts;
- norms (`RMSNorm`), routers (`GateLinear`, a `ReplicatedLinear`), MLA's down-projections
  (`fused_qkv_a_proj`, `kv_a_proj_with_mqa`: `ReplicatedLinear`) and a row-parallel layer's
  bias are whole on every rank; a column-parallel layer's bias is cut with it;
- experts without EP: every expert on every rank, its intermediate width cut (`FusedMoE`
  `w13_weight` [E, 2 I/T, H], `w2_weight` [E, H, I/T]); with EP (`--enable-expert-parallel`,
  ep_size = tp_size when DP is 1, layers/fused_moe/config.py `FusedMoEParallelConfig.make`)
  whole experts, `determine_expert_map` (layers/fused_moe/expert_map_manager.py, "linear"
  placement, config/parallel.py's default) giving the first `E % ep` ranks one more;
- pipeline stages: `get_pp_indices` (distributed/utils.py) gives the remainder to the stages
  before the last, from the second-to-last backwards, or follows `VLLM_PP_LAYER_PARTITION`
  (its length must be the PP size, its sum the layers, no count negative); the first stage
  holds `embed_tokens`, the last `norm` and `lm_head`, and builds its own `embed_tokens` when
  the embeddings are tied (models/llama.py `LlamaModel`);
- the cache: blocks of `CacheConfig.DEFAULT_BLOCK_SIZE` = 64 tokens per sequence
  (config/cache.py); a block of a layer holds `num_kv_heads x 64 x (head_size + head_size_v)`
  values (v1/kv_cache_interface.py `AttentionSpec.page_size_bytes`; MLA: `head_size_v` 0);
  `--kv-cache-dtype` `auto` is the model's dtype, `fp8`, `fp8_e4m3` and `fp8_e5m2` one byte.
  vLLM gives the cache what `gpu_memory_utilization` (0.92 by default) leaves of the card:
  the figure here is what the asked tokens and sequences take of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Final

from iteragpu.models.config import FULL
from iteragpu.models.kv import MLA_LATENT, PER_HEAD
from iteragpu.models.recipe import TensorSpec
from iteragpu.parallel.records import (
    COLUMN,
    EXPERT_SLICES,
    EXPERTS,
    KV_REPLICATED,
    REPLICATED,
    ROW,
    VOCAB,
    SplitError,
    SplitModel,
    SplitPlan,
    SplitRequest,
)
from iteragpu.parallel.shares import Tally, divide, refuse_states, tp_rank_plan

VERSION: Final = "0.34.0"
RUNTIME: Final = "vllm"
WHERE: Final = f"vLLM {VERSION}"
VOCAB_PADDING: Final = 64  # vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
BLOCK_SIZE: Final = 64  # config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE
GPU_MEMORY_UTILIZATION: Final = Fraction(92, 100)  # CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION
# --kv-cache-dtype values with a plain element size (utils/torch_utils.py STR_DTYPE_TO_TORCH_DTYPE).
KV_DTYPE_BYTES: Final = {
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float32": 4,
    "float": 4,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}
FAMILIES: Final = (
    "llama",
    "qwen2",
    "qwen3",
    "mixtral",
    "qwen2_moe",
    "qwen3_moe",
    "deepseek_v2",
    "deepseek_v3",
)
# Each recipe tensor's layer in vLLM's model files (models/llama.py, qwen2.py, qwen3.py,
# mixtral.py, qwen2_moe.py, qwen3_moe.py, deepseek_v2.py), by the name's last module.
_QKV: Final = {"self_attn.q_proj": "q", "self_attn.k_proj": "kv", "self_attn.v_proj": "kv"}
_ROW_LAYERS: Final = frozenset(
    {
        "self_attn.o_proj",
        "mlp.down_proj",
        "mlp.shared_expert.down_proj",
        "mlp.shared_experts.down_proj",
    }
)
_COLUMN_LAYERS: Final = frozenset(
    {
        "mlp.gate_proj",
        "mlp.up_proj",
        "mlp.shared_expert.gate_proj",
        "mlp.shared_expert.up_proj",
        "mlp.shared_experts.gate_proj",
        "mlp.shared_experts.up_proj",
        "self_attn.q_b_proj",
        "self_attn.kv_b_proj",
    }
)
_REPLICATED_LAYERS: Final = frozenset(
    {
        "input_layernorm",
        "post_attention_layernorm",
        "self_attn.q_norm",
        "self_attn.k_norm",
        "mlp.gate",
        "mlp.shared_expert_gate",
        "self_attn.q_a_proj",
        "self_attn.q_a_layernorm",
        "self_attn.kv_a_proj_with_mqa",
        "self_attn.kv_a_layernorm",
        "norm",
    }
)


def pad_vocab(vocab: int) -> int:
    """`pad_vocab_size`: the vocabulary rounded up to a multiple of 64.

    >>> pad_vocab(128256), pad_vocab(32001)
    (128256, 32064)
    """
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


def kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """`get_num_kv_heads`: `max(1, kv_heads // tp)`.

    >>> kv_heads_per_rank(8, 2), kv_heads_per_rank(8, 16)
    (4, 1)
    """
    return max(1, kv_heads // tp)


def pp_ranges(
    layers: int, pp: int, partition: Sequence[int] | None = None
) -> list[tuple[int, int]]:
    """`get_pp_indices` for every stage; `partition` is `VLLM_PP_LAYER_PARTITION`.

    >>> pp_ranges(32, 3), pp_ranges(34, 4), pp_ranges(32, 2, (20, 12))
    ([(0, 11), (11, 22), (22, 32)], [(0, 8), (8, 17), (17, 26), (26, 34)], [(0, 20), (20, 32)])
    """
    if partition is not None:
        text = ",".join(str(p) for p in partition)
        if len(partition) != pp:
            raise SplitError(
                "vLLM {version} refuses this split: VLLM_PP_LAYER_PARTITION={text} holds "
                '{count} stages, not the --pp {pp} ("len(partitions)=... does not match '
                'pp_size=...")',
                "vllm_partition_length",
                version=VERSION,
                text=text,
                count=str(len(partition)),
                pp=str(pp),
            )
        if sum(partition) != layers:
            raise SplitError(
                "vLLM {version} refuses this split: VLLM_PP_LAYER_PARTITION={text} sums to "
                "{total} layers, not the model's {layers} (\"sum(partitions)=... does not "
                'match num_hidden_layers=...")',
                "vllm_partition_sum",
                version=VERSION,
                text=text,
                total=str(sum(partition)),
                layers=str(layers),
            )
        if any(p < 0 for p in partition):
            raise SplitError(
                "vLLM {version} refuses this split: VLLM_PP_LAYER_PARTITION={text} has a "
                "negative layer count",
                "vllm_partition_negative",
                version=VERSION,
                text=text,
            )
        parts = list(partition)
    else:
        per = layers // pp
        parts = [per] * pp
        for i in range(2, layers % pp + 2):
            parts[-i] += 1
    ranges, start = [], 0
    for count in parts:
        ranges.append((start, start + count))
        start += count
    return ranges


def expert_counts(experts: int, ep: int) -> list[int]:
    """`determine_expert_map`'s `local_num_experts` per EP rank: the first `experts % ep`
    ranks hold one more.

    >>> expert_counts(60, 8)
    [8, 8, 8, 8, 7, 7, 7, 7]
    """
    base, remainder = divmod(experts, ep)
    return [base + (rank < remainder) for rank in range(ep)]


def allocated_tokens(tokens: int, sequences: int, block_size: int = BLOCK_SIZE) -> int:
    """Token slots the cache holds for `sequences` sequences of `tokens` tokens: whole blocks.

    >>> allocated_tokens(8192, 1), allocated_tokens(100, 3)
    (8192, 384)
    """
    return sequences * -(-tokens // block_size) * block_size


def kv_bytes_per_value(dtype: str | None, model_dtype_bytes: Fraction) -> Fraction:
    """`--kv-cache-dtype`'s element size (`auto`, None: the model's)."""
    if dtype is None or dtype == "auto":
        return model_dtype_bytes
    if dtype not in KV_DTYPE_BYTES:
        raise SplitError(
            "vLLM {version}: --kv-dtype {dtype!r} is not modelled here (auto, {known})",
            "vllm_kv_dtype",
            version=VERSION,
            dtype=dtype,
            known=", ".join(KV_DTYPE_BYTES),
        )
    return Fraction(KV_DTYPE_BYTES[dtype])


def _check(model: SplitModel, tp: int, ep: bool) -> None:
    config = model.config
    if config.heads % tp:
        raise SplitError(
            'vLLM {version} refuses this split: "Total number of attention heads ({heads}) '
            'must be divisible by tensor parallel size ({tp})."',
            "vllm_heads_not_divisible",
            version=VERSION,
            heads=str(config.heads),
            tp=str(tp),
        )
    values = config.values or {}
    experts = values.get("num_experts") or values.get("num_local_experts")
    if config.model_type in ("qwen2_moe", "qwen3_moe") and experts and tp > experts:
        raise SplitError(
            'vLLM {version} refuses this split: "Tensor parallel size {tp} is greater than '
            'the number of experts {experts}."',
            "vllm_tp_above_experts",
            version=VERSION,
            tp=str(tp),
            experts=str(experts),
        )
    if config.mla is None:
        kv = config.kv_heads
        if tp >= kv:
            divide(tp, kv, "tensor_parallel_size / num_key_value_heads", "QKVParallelLinear")
        else:
            divide(kv, tp, "num_key_value_heads", "QKVParallelLinear")


def _shares(spec: TensorSpec, model: SplitModel, tp: int, ep: bool) -> list[tuple[str, list[int]]]:
    """(how, elements per TP rank) of one tensor: one entry, or two where a fused tensor's
    parts are held differently."""
    config = model.config
    module = spec.name.rsplit(".", 1)[0]
    bias = spec.name.endswith(".bias")
    head_dim = config.head_dim
    total = spec.elements
    if spec.layer is None:
        if spec.name.startswith(("embed_tokens", "lm_head")):
            rows = divide(
                pad_vocab(spec.shape[0]), tp, "pad_vocab_size(vocab_size)", "VocabParallelEmbedding"
            )
            return [(VOCAB if tp > 1 else REPLICATED, [total // spec.shape[0] * rows] * tp)]
        if module == "norm" or spec.name == "norm.weight":
            return [(REPLICATED, [total] * tp)]
        raise _not_modelled(spec)
    if module in _QKV:
        width = total // spec.shape[0]
        if _QKV[module] == "q":
            heads = divide(config.heads, tp, "num_attention_heads", "QKVParallelLinear")
            return [(COLUMN if tp > 1 else REPLICATED, [heads * head_dim * width] * tp)]
        heads = kv_heads_per_rank(config.kv_heads, tp)
        how = KV_REPLICATED if tp > config.kv_heads else COLUMN if tp > 1 else REPLICATED
        return [(how, [heads * head_dim * width] * tp)]
    if module in _ROW_LAYERS:
        if bias:
            return [(REPLICATED, [total] * tp)]
        cut = divide(spec.shape[-1], tp, f"{module}.input_size", "RowParallelLinear")
        return [(ROW if tp > 1 else REPLICATED, [total // spec.shape[-1] * cut] * tp)]
    if module in _COLUMN_LAYERS:
        cut = divide(spec.shape[0], tp, f"{module}.output_size", "ColumnParallelLinear")
        return [(COLUMN if tp > 1 else REPLICATED, [total // spec.shape[0] * cut] * tp)]
    if module in _REPLICATED_LAYERS or spec.name in ("mlp.gate.weight",):
        return [(REPLICATED, [total] * tp)]
    if spec.routed and spec.name.startswith("mlp.experts."):
        experts = spec.shape[0]
        if ep:
            return [(EXPERTS, [total // experts * n for n in expert_counts(experts, tp)])]
        # gate_up_proj [E, 2I, H] / down_proj [E, H, I]: the intermediate width is cut.
        inner = spec.shape[1] // 2 if spec.name.endswith("gate_up_proj") else spec.shape[2]
        if inner % tp:
            raise SplitError(
                "vLLM {version} refuses this split: the experts' intermediate size ({size}) is "
                "not divisible by --tp {tp} (FusedMoEConfig's assertion)",
                "vllm_moe_not_divisible",
                version=VERSION,
                size=str(inner),
                tp=str(tp),
            )
        return [(EXPERT_SLICES if tp > 1 else REPLICATED, [total // tp] * tp)]
    raise _not_modelled(spec)


def _not_modelled(spec: TensorSpec) -> SplitError:
    return SplitError(
        "vLLM {version}: where {name} goes under tensor parallelism is not modelled here",
        "vllm_tensor_not_modelled",
        version=VERSION,
        name=spec.name,
    )


def _extra(model: SplitModel) -> list[tuple[TensorSpec, Fraction]]:
    """Parameters vLLM builds that Transformers does not: DeepSeek's
    `gate.e_score_correction_bias`, a float32 parameter where `topk_method` is `noaux_tc`
    (models/deepseek_v2.py `DeepseekV2MoE`), on each layer with experts."""
    config = model.config
    values = config.values or {}
    if config.model_type not in ("deepseek_v2", "deepseek_v3"):
        return []
    if values.get("topk_method") != "noaux_tc":
        return []
    experts = int(values["n_routed_experts"])
    layers = {s.layer for s in model.tensors if s.routed and s.layer is not None}
    return [
        (
            TensorSpec("mlp.gate.e_score_correction_bias", layer, (experts,), True, False),
            Fraction(4),
        )
        for layer in sorted(layers)
    ]


def plan(
    model: SplitModel, request: SplitRequest, kv_per_value: Fraction, reserve: Fraction
) -> SplitPlan:
    """Each rank of `request`'s split under vLLM."""
    config = model.config
    if config.model_type not in FAMILIES:
        raise SplitError(
            "vLLM {version}: the split of {family} is not modelled here (modelled: {known})",
            "split_family_not_modelled",
            version=VERSION,
            family=config.model_type,
            known=", ".join(FAMILIES),
        )
    refuse_states(config, RUNTIME)
    if any(kind != FULL for kind in config.layer_kinds):
        raise SplitError(
            "vLLM {version}: a model with sliding-window layers is not split here (its "
            "hybrid cache allocator is not modelled)",
            "vllm_sliding_not_modelled",
            version=VERSION,
        )
    tp, pp = request.tp, request.pp
    if request.ep and tp == 1:
        raise SplitError(
            "expert parallelism runs over the tensor-parallel GPUs here (as many "
            "expert-parallel as tensor-parallel GPUs): give --tp above 1 with --ep",
            "ep_needs_tp",
        )
    _check(model, tp, request.ep)
    ranges = pp_ranges(config.layers, pp, request.pp_partition)
    tied = config.tie_word_embeddings
    per_rank_heads = 1 if config.mla is not None else kv_heads_per_rank(config.kv_heads, tp)
    slots = allocated_tokens(request.tokens, request.sequences)
    tensors = [(spec, model.element_bytes) for spec in model.tensors] + _extra(model)
    placed = [(spec, size, _shares(spec, model, tp, request.ep)) for spec, size in tensors]
    ranks = []
    for stage, span in enumerate(ranges):
        first, last = stage == 0, stage == pp - 1
        per_token = Fraction(0)
        for layout in model.layouts[span[0] : span[1]]:
            if layout.layout == PER_HEAD:
                per_token += per_rank_heads * (layout.key_dim + layout.value_dim) * kv_per_value
            elif layout.layout == MLA_LATENT:
                per_token += (layout.key_dim + layout.value_dim) * kv_per_value
        for tp_rank in range(tp):
            tally = Tally()
            for spec, size, parts in placed:
                if spec.layer is not None:
                    if not span[0] <= spec.layer < span[1]:
                        continue
                elif spec.name.startswith("embed_tokens"):
                    if not (first or (tied and last)):
                        continue
                elif not last:
                    continue  # norm, lm_head
                for how, elements in parts:
                    tally.add(spec, how, elements[tp_rank], size)
            kv = (per_token, slots, per_token * slots)
            ranks.append(tp_rank_plan(tally, stage, tp, tp_rank, span, kv, reserve))
    return SplitPlan(
        RUNTIME,
        config.model_type,
        tp,
        pp,
        request.ep,
        request.tokens,
        request.sequences,
        model.weights_dtype,
        request.kv_dtype or "auto",
        kv_per_value,
        tuple(ranks),
        None,
        ("vllm_blocks", "vllm_gpu_memory_utilization", "activations_not_counted"),
    )


# How vLLM 0.34.0 sizes the cache from memory (`iteragpu fit`, `iteragpu report --vllm-log`),
# read in the same sdist:
#
# - v1/worker/utils.py `request_memory`: the budget is `math.ceil(total_memory *
#   gpu_memory_utilization)`, a share of the card's total, not of its free memory; other
#   processes only gate the start ("Free memory on device ... on startup is less than desired
#   GPU memory utilization"), and that check is skipped with the extensible KV cache;
# - config/cache.py `resolved_gpu_memory_utilization`: unset, it is 1.0 with the extensible KV
#   cache (`enable_extensible_kv_cache`, on by default on CUDA and ROCm: config/vllm.py), 0.92
#   without (`DEFAULT_GPU_MEMORY_UTILIZATION`);
# - v1/worker/gpu_worker.py `determine_available_memory`: "Available KV cache memory: %s GiB"
#   is that budget less what profiling measured (the weights, the activation peak, memory
#   outside torch) and the CUDA graphs' estimate, printed with utils/mem_utils.py `format_gib`
#   (`f"{round(b / GiB_bytes, 2)}"`);
# - v1/core/kv_cache_planning.py `get_kv_cache_configs`: each rank's blocks are `available //
#   bytes_per_block` (a block: `block_size` tokens of every layer of the rank, the pages of
#   v1/kv_cache_interface.py `AttentionSpec.page_size_bytes`), and every rank keeps the
#   smallest count ("Change the num_blocks of each rank to the smallest among all ranks");
#   the check of `max_model_len` and `--max-model-len auto` plan against the blocks less the
#   null block `BlockPool` holds back (`check_memory = avail_mem - bytes_per_block`), with
#   the error "To serve at least one request with the model's max seq len (L), (X GiB KV
#   cache is needed, which is larger than the available KV cache memory (Y GiB)...";
# - v1/core/kv_cache_utils.py `update_kv_cache_capacity`: "GPU KV cache size: N tokens,
#   Maximum concurrency for L tokens per request: C.CCx", C = blocks / cdiv(L, block_size)
#   (the null block counted) and N = int(C * L);
# - with the extensible KV cache those blocks are only the reserved capacity: the count is
#   measured again after CUDA graph capture and warmup (kv_cache_planning.py
#   `finalize_extensible_kv_cache`), never above it, and the capacity line is printed then.
UTILIZATION_EXTENSIBLE: Final = "1.0"  # resolved_gpu_memory_utilization, extensible KV cache
UTILIZATION_PROFILED: Final = "0.92"  # CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION
SIZINGS: Final = ("extensible", "profiled")
GIB_BYTES: Final = 1 << 30  # vllm.utils.mem_utils.GiB_bytes


def requested_memory(total_bytes: int, utilization: str) -> int:
    """`request_memory`: the card's total times the utilization, rounded up, in the floats
    vLLM computes it with (`utilization` as the reader types it).

    >>> requested_memory(85_520_809_984, "0.92"), requested_memory(1000, "1.0")
    (78679145186, 1000)
    """
    import math

    return math.ceil(total_bytes * float(utilization))


def format_gib(byte_count: int) -> str:
    """utils/mem_utils.py `format_gib`, as vLLM prints GiB in its log.

    >>> format_gib(75_712_000_000), format_gib(2**30 * 3 // 2)
    ('70.51', '1.5')
    """
    return f"{round(byte_count / GIB_BYTES, 2)}"


def gib_range(text: str) -> tuple[int, int]:
    """Every whole byte count that `format_gib` prints as `text`: (first, last). vLLM's
    figure is rounded to 0.01 GiB, so it names a range of about 10.7 MB, not one count.

    >>> gib_range("1.5")
    (1605244027, 1615981445)
    """
    value = float(text)

    def printed(byte_count: int) -> float:
        return round(byte_count / GIB_BYTES, 2)

    def first_at_least(limit: float) -> int:
        low, high = 0, int((value + 1) * GIB_BYTES)
        while low < high:
            middle = (low + high) // 2
            if printed(middle) >= limit:
                high = middle
            else:
                low = middle + 1
        return low

    first = first_at_least(value)
    if printed(first) != value:
        raise ValueError(f"no byte count prints as {text} GiB")
    beyond = first_at_least(float(round(value + 0.01, 2)))
    return first, beyond - 1


def cdiv(a: int, b: int) -> int:
    """vllm.utils.math_utils.cdiv."""
    return -(a // -b)


def block_bytes(kv_bytes_per_token: Fraction, block_size: int = BLOCK_SIZE) -> int:
    """A rank's bytes per block: `block_size` tokens of every layer it holds."""
    size = kv_bytes_per_token * block_size
    if size.denominator != 1:
        raise SplitError(
            "vLLM {version}: a block of {block} tokens is not a whole number of bytes",
            "vllm_block_not_whole",
            version=VERSION,
            block=str(block_size),
        )
    return int(size)


def gpu_blocks(available: Sequence[int], block_bytes_per_rank: Sequence[int]) -> int:
    """`get_kv_cache_configs`: each rank's `available // bytes_per_block`, the smallest kept."""
    return min(a // b for a, b in zip(available, block_bytes_per_rank, strict=True))


def max_model_len_fits(max_model_len: int, blocks: int, block_size: int = BLOCK_SIZE) -> bool:
    """The check of `max_model_len`: one request's blocks within the blocks less the null one."""
    return cdiv(max_model_len, block_size) <= blocks - 1


def max_concurrency(blocks: int, max_model_len: int, block_size: int = BLOCK_SIZE) -> float:
    """`get_max_concurrency_for_kv_cache_config`: the blocks over one request's blocks."""
    return blocks / cdiv(max_model_len, block_size)


def cache_size_tokens(blocks: int, max_model_len: int, block_size: int = BLOCK_SIZE) -> int:
    """`get_kv_cache_capacity`: the "GPU KV cache size: N tokens" of the log."""
    return int(max_concurrency(blocks, max_model_len, block_size) * max_model_len)
