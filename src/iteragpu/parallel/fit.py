"""What fits, solved backwards (`iteragpu fit`): the longest context per sequence, the most
sequences at a context, the smallest tensor-parallel size, the cache type, for a model on a
number of cards of one capacity, as a runtime sizes its cache; answered as the runtime's own
flags, with what is certain and what is still to measure.

Each GPU's plan comes from the split planner (`plan.plan_for`), once per candidate split and
cache type: what does not grow with the tokens (`RankPlan.fixed_bytes`) and the cache per token
(`RankPlan.kv_bytes_per_token`). Each runtime then turns a card's bytes into room for its cache
by its own rule, and its cache into tokens by its own granularity:

- vLLM 0.34.0 (`vllm_rules`): a share of the card's total (`--gpu-memory-utilization`) less
  each rank's fixed bytes is an upper bound of what its profiling leaves for the cache; blocks
  of `block_size` tokens; the weakest rank's block count for every rank; the null block held
  back. Given the "Available KV cache memory" vLLM printed, the blocks are its own count (a
  range: the figure is rounded to 0.01 GiB), exact when vLLM sizes the cache from that figure
  (`--no-enable-extensible-kv-cache`), an upper bound with the extensible KV cache (its
  default on CUDA), which measures the blocks again after CUDA graphs and warmup;
- llama.cpp at commit 00342301d01a (`llamacpp_rules`): whole tensors per device, the context cut
  into `-np` streams each padded to 256 cells, the cache types' row sizes; a reserve kept free
  on each GPU (1 GiB by default: the pinned commit does not fit by itself, later versions'
  `--fit` keep 1024 MiB per device);
- Transformers: the dynamic cache at its prompt peak, per rank.

Without a runtime's own figure every answer is an upper bound ("at most"): the activation peak,
CUDA graphs, the CUDA context and other processes take memory no file tells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Final

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record
from iteragpu.parallel.records import (
    RUNTIMES,
    RankPlan,
    SplitError,
    SplitModel,
    SplitPlan,
    SplitRequest,
)

MAX_FIT_TOKENS: Final = 10**9  # as `iteragpu model --tokens`
MAX_FIT_SEQUENCES: Final = 10**6
LLAMACPP_RESERVE_GIB: Final = Fraction(1)  # later llama.cpp's --fit-target default, 1024 MiB
# The cache types `--kv-dtype auto` tries, most precise first.
KV_CANDIDATES: Final = {
    "vllm": (None, "fp8"),  # None: "auto", the model's dtype
    "llama.cpp": ("f16", "q8_0", "q4_0"),
    "transformers": (None,),
}
# What no file tells, per runtime: each a code the CLI words in the reader's language.
TO_MEASURE: Final = {
    "vllm": (
        "activation_peak",
        "cuda_graphs",
        "non_torch_memory",
        "cuda_context",
        "other_processes",
        "cuda_total_memory",
    ),
    "llama.cpp": ("compute_buffers", "cuda_context", "other_processes"),
    "transformers": ("activation_peak", "cuda_context", "allocator_overhead", "other_processes"),
}
CERTAIN: Final = {
    "vllm": ("weights", "kv_per_token", "vllm_blocks", "vllm_null_block", "weakest_rank"),
    "llama.cpp": ("weights", "kv_per_token", "llamacpp_cells", "llamacpp_streams"),
    "transformers": ("weights", "kv_per_token"),
}


class FitError(InputError):
    """A request `fit` cannot answer: one line, exit 2."""


class FitRequest(Record):
    """What `iteragpu fit` was asked. None is what the reader left open: `tokens` (the context
    per sequence), `sequences` (solved when `tokens` is given, else 1), `tp` (the smallest that
    fits), `gpu_layers` (llama.cpp: the most that fit); `kv_dtype` "auto" tries the runtime's
    cache types, most precise first."""

    path: str
    runtime: str
    capacity_bytes: int  # each GPU's total memory
    gpus: int | None = None
    tokens: int | None = None
    sequences: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: bool = False
    kv_dtype: str | None = None
    dtype: str | None = None
    bits: Fraction | None = None
    reserve_gib: Fraction | None = None  # None: the runtime's default (llama.cpp 1 GiB, else 0)
    utilization: str | None = None  # vLLM's --gpu-memory-utilization; None: its default
    sizing: str = "extensible"  # vLLM: "extensible" (its CUDA default) or "profiled"
    block_size: int = 64  # vLLM's --block-size
    available_kv: tuple[str, ...] | None = None  # vLLM's printed GiB: one, or one per rank
    gpu_layers: int | None = None  # llama.cpp's -ngl
    tensor_split: tuple[Fraction, ...] | None = None  # llama.cpp's -ts


class RankRoom(Record):
    """One GPU under the answer: what it holds whatever the tokens, the cache per token, the
    room its runtime leaves for the cache, and the cache of the answer."""

    rank: int
    fixed_bytes: Fraction
    kv_bytes_per_token: Fraction
    room_bytes: tuple[Fraction, Fraction]  # for the cache: (least, most); equal without a range
    kv_bytes: Fraction  # the cache of the answer (vLLM: with the null block)


class FitAnswer(Record):
    """The answer: the values solved, the runtime's flags, the bounds and their nature."""

    path: str
    runtime: str
    model_type: str
    solved: tuple[str, ...]  # "tokens", "sequences", "tp", "kv_dtype", "gpu_layers"
    exact: bool  # from the runtime's own figure, as it computes it (vLLM, profiled sizing)
    tokens: int  # per sequence (vLLM: --max-model-len; llama.cpp: each slot's cells)
    sequences: int  # vLLM: --max-num-seqs; llama.cpp: -np
    limited_by: str  # "memory", "positions" (the model's), or "asked" (both given)
    positions: int | None  # the model's positions, None when its config states none
    tp: int
    pp: int
    gpus: int
    kv_dtype: str
    gpu_layers: int | None
    capacity_bytes: int
    flags: tuple[tuple[str, str], ...]  # the runtime's options, in order ("" for a switch)
    command: str | None  # ready to paste; None for Transformers (a library)
    ranks: tuple[RankRoom, ...]
    # vLLM: the blocks (least, most), the "GPU KV cache size" tokens and the "Maximum
    # concurrency" at the answer's length, as it prints them; None elsewhere.
    blocks: tuple[int, int] | None
    cache_tokens: tuple[int, int] | None
    concurrency: tuple[str, str] | None
    utilization: str | None
    sizing: str | None
    block_size: int | None
    alternatives: tuple[tuple[str, int, int], ...]  # (kv dtype, tokens, sequences) of the others
    certain: tuple[str, ...]
    to_measure: tuple[str, ...]
    notes: tuple[str, ...]


def fit(request: FitRequest) -> FitAnswer:
    """The answer to `request`; `FitError`/`SplitError` (both `InputError`s) for a request that
    has none: a card unknown, a context above the model's positions, a split the runtime
    refuses, a load that does not fit."""
    from iteragpu.parallel.plan import read_split_model

    runtime = request.runtime
    if runtime not in RUNTIMES:
        raise FitError(
            "unknown runtime {runtime!r} ({known})",
            "unknown_runtime",
            runtime=runtime,
            known=", ".join(RUNTIMES),
        )
    _check(request)
    base = _split_request(request, tp=1, pp=request.pp or 1, kv_dtype=None, gpu_layers=None)
    try:
        model = read_split_model(base)
    except SplitError as refusal:
        model = _quantized_model(request, refusal)
    positions = _positions(request, model)
    if request.tokens is not None and positions is not None and request.tokens > positions:
        raise FitError(
            "--tokens {tokens} is above the model's {positions} positions: {runtime} does not "
            "serve a context it was not built for",
            "fit_above_positions",
            tokens=str(request.tokens),
            positions=str(positions),
            runtime=runtime,
        )
    cap = positions or MAX_FIT_TOKENS
    target = (request.tokens or 1, request.sequences or 1)
    chosen: _Room | None = None
    first_refusal: InputError | None = None
    shortest: tuple[Fraction, _Room] | None = None
    for candidate in _candidates(request, model):
        try:
            room = _room_of(request, model, candidate)
        except SplitError as refusal:
            first_refusal = first_refusal or refusal
            continue
        short = room.shortfall(*target)
        if short <= 0:
            chosen = room
            break
        if shortest is None or short < shortest[0]:
            shortest = (short, room)
    if chosen is None:
        if shortest is None:
            assert first_refusal is not None
            raise first_refusal
        _does_not_fit(request, shortest[1], target, shortest[0])
    assert chosen is not None
    tokens, sequences, limited = _solve(request, chosen, cap)
    alternatives: tuple[tuple[str, int, int], ...] = ()
    if request.kv_dtype == "auto":
        others = []
        for kv_dtype in KV_CANDIDATES[runtime]:
            if kv_dtype == chosen.kv_dtype:
                continue
            try:
                other = _room_of(request, model, chosen.candidate.with_kv(kv_dtype))
            except SplitError:
                continue
            if other.shortfall(*target) <= 0:
                t, s, _ = _solve(request, other, cap)
                others.append((other.kv_name, t, s))
        alternatives = tuple(others)
    return _answer(request, model, chosen, tokens, sequences, limited, positions, alternatives)


class _Candidate(Record):
    tp: int
    pp: int
    kv_dtype: str | None
    gpu_layers: int | None

    def with_kv(self, kv_dtype: str | None) -> _Candidate:
        return _Candidate(self.tp, self.pp, kv_dtype, self.gpu_layers)


def _check(request: FitRequest) -> None:
    runtime = request.runtime
    if request.capacity_bytes <= 0:
        raise FitError("the card's capacity must be above 0 bytes", "fit_bad_capacity")
    if request.tokens is not None and not 1 <= request.tokens <= MAX_FIT_TOKENS:
        raise FitError("--tokens must be between 1 and 1e9", "fit_bad_tokens")
    if request.sequences is not None and not 1 <= request.sequences <= MAX_FIT_SEQUENCES:
        raise FitError("--sequences must be between 1 and 1e6", "fit_bad_sequences")
    vllm_only = (
        ("--utilization", request.utilization is not None),
        ("--kv-sizing", request.sizing != "extensible"),
        ("--block-size", request.block_size != 64),
        ("--available-kv-gib", request.available_kv is not None),
    )
    for option, given in vllm_only:
        if given and runtime != "vllm":
            raise FitError("{option} is vLLM's (--runtime vllm)", "fit_vllm_option", option=option)
    if runtime == "llama.cpp" and (request.tp not in (None, 1) or request.ep):
        raise FitError(
            "llama.cpp splits by layers over --gpus: give no --tp or --ep", "fit_llamacpp_tp"
        )
    if request.available_kv is not None and request.reserve_gib is not None:
        raise FitError(
            "--available-kv-gib is what vLLM left for the cache after everything else: "
            "--reserve-gib does not apply to it",
            "fit_reserve_with_available",
        )
    if request.utilization is not None:
        value = float(request.utilization)
        if not 0 < value <= 1:
            raise FitError(
                "--utilization is a share of the card's total memory, above 0 and at most 1, "
                "got {value}",
                "fit_bad_utilization",
                value=request.utilization,
            )
    from iteragpu.parallel.vllm_rules import SIZINGS

    if request.sizing not in SIZINGS:
        raise FitError(
            "--kv-sizing is extensible or profiled, got {value}",
            "fit_bad_sizing",
            value=request.sizing,
        )
    if not 1 <= request.block_size <= 4096:
        raise FitError("--block-size must be between 1 and 4096", "fit_bad_block_size")


def _split_request(
    request: FitRequest, *, tp: int, pp: int, kv_dtype: str | None, gpu_layers: int | None
) -> SplitRequest:
    """The planner's request of one candidate, for one token of one sequence: its ranks'
    fixed bytes and cache per token."""
    reserve = request.reserve_gib
    if reserve is None:
        reserve = LLAMACPP_RESERVE_GIB if request.runtime == "llama.cpp" else Fraction(0)
    return SplitRequest(
        request.path,
        1,
        1,
        request.runtime,
        tp,
        pp,
        request.ep,
        None,
        gpu_layers,
        request.tensor_split,
        1,
        request.dtype,
        request.bits,
        kv_dtype,
        reserve,
    )


def _gpus(request: FitRequest) -> int:
    if request.gpus is not None:
        return request.gpus
    if request.runtime == "llama.cpp":
        return request.pp or (len(request.tensor_split) if request.tensor_split else 1)
    return (request.tp or 1) * (request.pp or 1)


def _candidates(request: FitRequest, model: SplitModel) -> list[_Candidate]:
    """The splits and cache types to try, in the order of preference: the fewest
    tensor-parallel GPUs, the most layers on the GPUs, the most precise cache."""
    runtime = request.runtime
    gpus = _gpus(request)
    kv_types: Sequence[str | None] = (
        KV_CANDIDATES[runtime] if request.kv_dtype == "auto" else (request.kv_dtype,)
    )
    if runtime == "llama.cpp":
        layers = model.config.layers
        if request.tensor_split is not None and gpus not in (1, len(request.tensor_split)):
            raise FitError(
                "--tensor-split names {count} GPUs and --gpus {gpus}",
                "fit_split_count",
                count=str(len(request.tensor_split)),
                gpus=str(gpus),
            )
        offloads = (
            [request.gpu_layers]
            if request.gpu_layers is not None
            else list(range(layers + 1, -1, -1))
        )
        return [_Candidate(1, gpus, kv, n) for n in offloads for kv in kv_types]
    pp = request.pp or 1
    if gpus % pp or gpus < pp:
        raise FitError(
            "--gpus {gpus} is not a whole number of --pp {pp} stages",
            "fit_gpus_and_pp",
            gpus=str(gpus),
            pp=str(pp),
        )
    if request.tp is not None:
        if request.tp * pp > gpus:
            raise FitError(
                "--tp {tp} x --pp {pp} is more GPUs than --gpus {gpus}",
                "fit_more_than_gpus",
                tp=str(request.tp),
                pp=str(pp),
                gpus=str(gpus),
            )
        sizes = [request.tp]
    else:
        sizes = list(range(1, gpus // pp + 1))
    return [_Candidate(tp, pp, kv, None) for tp in sizes for kv in kv_types]


class _Room(Record):
    """One candidate planned: each rank's fixed bytes, cache per token, room for its cache
    (least, most), and how the runtime turns tokens and sequences into cache bytes."""

    candidate: _Candidate
    kv_name: str
    ranks: tuple[RankPlan, ...]
    room: tuple[tuple[Fraction, Fraction], ...]
    need: Callable[[int, int, RankPlan], Fraction]  # (tokens, sequences, rank) -> bytes
    block_bytes: tuple[int, ...] | None  # vLLM

    @property
    def kv_dtype(self) -> str | None:
        return self.candidate.kv_dtype

    def fits(self, tokens: int, sequences: int, most: bool = False) -> bool:
        side = 1 if most else 0
        return all(
            self.need(tokens, sequences, rank) <= room[side]
            for rank, room in zip(self.ranks, self.room, strict=True)
        )

    def shortfall(self, tokens: int, sequences: int) -> Fraction:
        """The most any GPU lacks for `tokens` x `sequences` (0 or less: it fits)."""
        return max(
            self.need(tokens, sequences, rank) - room[0]
            for rank, room in zip(self.ranks, self.room, strict=True)
        )


QUANTIZED: Final = "quantized"  # SplitModel.weights_dtype of a quantized checkpoint on one GPU


def _quantized_model(request: FitRequest, refusal: SplitError) -> SplitModel:
    """A quantized checkpoint (GPTQ, AWQ...) on one GPU under vLLM: its weights are the files'
    bytes (`iteragpu model`'s reading of the headers), as no split is planned for it; other
    cases keep the planner's refusal."""
    single = (request.tp or 1) == 1 and (request.pp or 1) == 1 and (request.gpus or 1) == 1
    if refusal.reason != "split_quantized" or request.runtime != "vllm" or not single:
        raise refusal
    from pathlib import Path

    from iteragpu.models.kv import layer_layouts
    from iteragpu.models.model import read_model

    config, _ = read_model(Path(request.path))
    return SplitModel(config, (), Fraction(0), QUANTIZED, tuple(layer_layouts(config)))


def _quantized_plan(request: FitRequest, model: SplitModel, kv_dtype: str | None) -> SplitPlan:
    """One GPU holding a quantized checkpoint whole: the files' weights, vLLM's cache per
    token for every layer (its KV heads, its cache type)."""
    from iteragpu.core.units import from_unit
    from iteragpu.models.dtypes import dtype_bytes
    from iteragpu.models.model import size_model
    from iteragpu.parallel import vllm_rules

    config = model.config
    if config.dtype is None:
        raise SplitError("the config states no dtype: give --kv-dtype or --dtype", "no_kv_dtype")
    per_value = vllm_rules.kv_bytes_per_value(kv_dtype, dtype_bytes(config.dtype, "dtype"))
    sized = size_model(request.path, tokens=1, kv_bytes_per_value=per_value)
    reserve = from_unit(request.reserve_gib or Fraction(0), "GiB")
    rank = RankPlan(
        0,
        "gpu",
        0,
        0,
        (0, config.layers),
        (),
        sized.weights.byte_count,
        Fraction(0),
        sized.kv.kv_bytes_per_token,
        1,
        sized.kv.kv_bytes_per_token,
        Fraction(0),
        reserve,
    )
    return SplitPlan(
        "vllm",
        config.model_type,
        1,
        1,
        False,
        1,
        1,
        QUANTIZED,
        kv_dtype or "auto",
        per_value,
        (rank,),
    )


def _room_of(request: FitRequest, model: SplitModel, candidate: _Candidate) -> _Room:
    from iteragpu.parallel.plan import plan_for

    split = _split_request(
        request,
        tp=candidate.tp,
        pp=candidate.pp,
        kv_dtype=candidate.kv_dtype,
        gpu_layers=candidate.gpu_layers,
    )
    if model.weights_dtype == QUANTIZED:
        plan = _quantized_plan(request, model, candidate.kv_dtype)
    else:
        plan = plan_for(model, split)
    capacity = Fraction(request.capacity_bytes)
    ranks = plan.ranks
    if request.runtime == "vllm":
        from iteragpu.parallel import vllm_rules as rules

        block = request.block_size
        sizes = tuple(rules.block_bytes(r.kv_bytes_per_token, block) for r in ranks)
        if request.available_kv is not None:
            figures = request.available_kv
            if len(figures) not in (1, len(ranks)):
                raise FitError(
                    "--available-kv-gib takes one figure, or one per GPU ({gpus}), got {count}",
                    "fit_available_count",
                    gpus=str(len(ranks)),
                    count=str(len(figures)),
                )
            spans = [rules.gib_range(f) for f in figures]
            if len(spans) == 1:
                spans = spans * len(ranks)
            room = tuple((Fraction(lo), Fraction(hi)) for lo, hi in spans)
        else:
            utilization = request.utilization or _default_utilization(request)
            budget = rules.requested_memory(request.capacity_bytes, utilization)
            room = tuple((budget - r.fixed_bytes, budget - r.fixed_bytes) for r in ranks)

        def need(tokens: int, sequences: int, rank: RankPlan) -> Fraction:
            blocks = sequences * rules.cdiv(tokens, block) + 1  # the null block
            return rank.kv_bytes_per_token * block * blocks

        name = candidate.kv_dtype or "auto"
        return _Room(candidate, name, ranks, room, need, sizes)
    room = tuple((capacity - r.fixed_bytes, capacity - r.fixed_bytes) for r in ranks)
    if request.runtime == "llama.cpp":
        from iteragpu.parallel import llamacpp_rules

        def cells(tokens: int, sequences: int, rank: RankPlan) -> Fraction:
            # -c tokens x sequences cut into `sequences` streams (-np), each padded.
            slots = llamacpp_rules.allocated_tokens(tokens * sequences, sequences)
            return rank.kv_bytes_per_token * slots

        return _Room(candidate, plan.kv_dtype, ranks, room, cells, None)
    # Transformers' cache is not linear in the tokens (a sliding layer keeps its window):
    # each count is planned again, once for every GPU.
    planned: dict[tuple[int, int], tuple[Fraction, ...]] = {}

    def dynamic(tokens: int, sequences: int, rank: RankPlan) -> Fraction:
        key = (tokens, sequences)
        if key not in planned:
            again = plan_for(model, _with_tokens(split, tokens, sequences))
            planned[key] = tuple(r.kv_cache_bytes for r in again.ranks)
        return planned[key][rank.rank]

    return _Room(candidate, plan.kv_dtype, ranks, room, dynamic, None)


def _with_tokens(split: SplitRequest, tokens: int, sequences: int) -> SplitRequest:
    values = {name: getattr(split, name) for name in split._fields}
    return SplitRequest(**{**values, "tokens": tokens, "sequences": sequences})


def _default_utilization(request: FitRequest) -> str:
    from iteragpu.parallel import vllm_rules as rules

    if request.sizing == "extensible":
        return rules.UTILIZATION_EXTENSIBLE
    return rules.UTILIZATION_PROFILED


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest value in [low, high] for which `fits` holds (it holds at `low`, and once
    it fails it fails for every larger value)."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _solve(request: FitRequest, room: _Room, cap: int) -> tuple[int, int, str]:
    """(tokens, sequences, what limits them) for the candidate: the least room of each GPU."""
    if request.tokens is None:
        sequences = request.sequences or 1
        tokens = _largest(1, cap, lambda t: room.fits(t, sequences))
        limited = "positions" if tokens == cap and cap != MAX_FIT_TOKENS else "memory"
        return tokens, sequences, limited
    if request.sequences is None:
        tokens = request.tokens
        sequences = _largest(1, MAX_FIT_SEQUENCES, lambda s: room.fits(tokens, s))
        return tokens, sequences, "memory"
    return request.tokens, request.sequences, "asked"


def _positions(request: FitRequest, model: SplitModel) -> int | None:
    """The model's positions: llama.cpp's `n_ctx_train` from the GGUF file; for a config, as
    vLLM 0.34.0 derives its longest `max_model_len` (config/model.py `_get_and_verify_max_len`:
    the smallest of the length keys, times the RoPE scaling factor of the types that do not
    already scale `max_position_embeddings`)."""
    if request.runtime == "llama.cpp":
        from pathlib import Path

        from iteragpu.models.gguf import training_context

        return training_context(Path(request.path))
    values = model.config.values or {}
    keys = (
        "max_position_embeddings",
        "n_positions",
        "max_seq_len",
        "seq_length",
        "model_max_length",
        "max_target_positions",
        "max_sequence_length",
        "max_seq_length",
        "seq_len",
    )
    found = [values[k] for k in keys if isinstance(values.get(k), int) and values[k] > 0]
    if not found:
        return None
    length = min(found)
    if isinstance(values.get("model_max_length"), int):
        length = values["model_max_length"]
    if request.runtime != "vllm":
        return int(length)
    rope = values.get("rope_parameters") or values.get("rope_scaling")
    if isinstance(rope, dict) and "gemma3" not in model.config.model_type:
        kind = rope.get("rope_type") or rope.get("type")
        unscaled = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
        factor = rope.get("factor")
        if kind not in unscaled and isinstance(factor, int | float) and factor:
            length = length * factor
    return int(length)


def _does_not_fit(
    request: FitRequest, room: _Room, target: tuple[int, int], short: Fraction
) -> None:
    from iteragpu.core.numbers import round_half_up
    from iteragpu.core.units import to_unit

    # Rounded up to the next 0.01 GiB: what the GPU lacks is at least this, never less.
    lack = format(round_half_up(Fraction(-(-to_unit(short, "GiB") * 100 // 1), 100), 2), "f")
    error = FitError(
        "{runtime} cannot hold {tokens} tokens x {sequences} sequences on {gpus} GPU(s) of "
        "{capacity} B: its fullest GPU lacks {lack} GiB in the closest split tried",
        "fit_does_not_fit",
        runtime=request.runtime,
        tokens=str(target[0]),
        sequences=str(target[1]),
        gpus=str(len(room.ranks)),
        capacity=str(request.capacity_bytes),
        lack=lack,
    )
    error.numbers = ("tokens", "sequences", "gpus", "capacity", "lack")
    raise error


def _answer(
    request: FitRequest,
    model: SplitModel,
    room: _Room,
    tokens: int,
    sequences: int,
    limited: str,
    positions: int | None,
    alternatives: tuple[tuple[str, int, int], ...],
) -> FitAnswer:
    runtime = request.runtime
    candidate = room.candidate
    solved = []
    if request.tokens is None:
        solved.append("tokens")
    elif request.sequences is None:
        solved.append("sequences")
    if runtime != "llama.cpp" and request.tp is None:
        solved.append("tp")
    if request.kv_dtype == "auto":
        solved.append("kv_dtype")
    if runtime == "llama.cpp" and request.gpu_layers is None:
        solved.append("gpu_layers")
    ranks = tuple(
        RankRoom(
            r.rank,
            r.fixed_bytes,
            r.kv_bytes_per_token,
            span,
            room.need(tokens, sequences, r),
        )
        for r, span in zip(room.ranks, room.room, strict=True)
    )
    blocks = cache_tokens = concurrency = None
    utilization = sizing = block_size = None
    exact = False
    notes: list[str] = []
    if runtime == "vllm":
        from iteragpu.parallel import vllm_rules as rules

        assert room.block_bytes is not None
        block_size = request.block_size
        sizing = request.sizing
        utilization = request.utilization or _default_utilization(request)
        least = rules.gpu_blocks([int(r[0]) for r in room.room], room.block_bytes)
        most = rules.gpu_blocks([int(r[1]) for r in room.room], room.block_bytes)
        blocks = (least, most)
        cache_tokens = (
            rules.cache_size_tokens(least, tokens, block_size),
            rules.cache_size_tokens(most, tokens, block_size),
        )
        concurrency = (
            f"{rules.max_concurrency(least, tokens, block_size):.2f}",
            f"{rules.max_concurrency(most, tokens, block_size):.2f}",
        )
        exact = request.available_kv is not None and sizing == "profiled"
        if request.available_kv is not None:
            notes.append("vllm_available_range")
            if sizing == "extensible":
                notes.append("vllm_extensible_measures_again")
        else:
            notes.append("vllm_budget_share_of_total")
    if positions is None:
        notes.append("positions_unknown")
    if model.weights_dtype == QUANTIZED:
        notes.append("quantized_weights_from_files")
    flags, command = _flags(request, model, candidate, room, tokens, sequences, utilization)
    to_measure = () if exact else TO_MEASURE[runtime]
    if model.weights_dtype == QUANTIZED and not exact:
        to_measure = (*to_measure, "quantized_repacking")
    if runtime == "llama.cpp":
        notes.append("llamacpp_reserve")
        notes.append("llamacpp_no_fit_at_pinned_commit")
    gpus = len(room.ranks)
    return FitAnswer(
        request.path,
        runtime,
        model.config.model_type,
        tuple(solved),
        exact,
        tokens,
        sequences,
        limited,
        positions,
        candidate.tp if runtime != "llama.cpp" else 1,
        candidate.pp if runtime != "llama.cpp" else gpus,
        gpus,
        room.kv_name,
        _offloaded(model, candidate) if runtime == "llama.cpp" else None,
        request.capacity_bytes,
        flags,
        command,
        ranks,
        blocks,
        cache_tokens,
        concurrency,
        utilization,
        sizing,
        block_size,
        alternatives,
        CERTAIN[runtime],
        to_measure,
        tuple(notes),
    )


def _offloaded(model: SplitModel, candidate: _Candidate) -> int:
    layers = model.config.layers
    return layers + 1 if candidate.gpu_layers is None else candidate.gpu_layers


def _flags(
    request: FitRequest,
    model: SplitModel,
    candidate: _Candidate,
    room: _Room,
    tokens: int,
    sequences: int,
    utilization: str | None,
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The runtime's own options for the answer, and the command they go on."""
    import shlex

    runtime = request.runtime
    flags: list[tuple[str, str]] = []
    if runtime == "vllm":
        assert utilization is not None
        flags += [
            ("--max-model-len", str(tokens)),
            ("--max-num-seqs", str(sequences)),
            ("--gpu-memory-utilization", utilization),
            ("--kv-cache-dtype", room.kv_name),
            ("--tensor-parallel-size", str(candidate.tp)),
        ]
        if candidate.pp > 1:
            flags.append(("--pipeline-parallel-size", str(candidate.pp)))
        if request.ep:
            flags.append(("--enable-expert-parallel", ""))
        if request.block_size != 64:
            flags.append(("--block-size", str(request.block_size)))
        if request.sizing == "profiled":
            flags.append(("--no-enable-extensible-kv-cache", ""))
        if request.dtype is not None:
            flags.append(("--dtype", request.dtype))
        program = ["vllm", "serve", request.path]
    elif runtime == "llama.cpp":
        gpus = len(room.ranks)
        flags += [
            ("-c", str(tokens * sequences)),
            ("-np", str(sequences)),
            ("-ngl", str(_offloaded(model, candidate))),
            ("-ctk", room.kv_name),
            ("-ctv", room.kv_name),
        ]
        if gpus > 1:
            shares = request.tensor_split or tuple(Fraction(1) for _ in range(gpus))
            flags.append(("-ts", ",".join(_share_text(s) for s in shares)))
        program = ["llama-server", "-m", request.path]
    else:
        return (), None
    words = [*program]
    for name, value in flags:
        words.append(name)
        if value:
            words.append(value)
    return tuple(flags), " ".join(shlex.quote(w) for w in words)


def _share_text(share: Fraction) -> str:
    from iteragpu.core.numbers import exact_decimal_text

    return exact_decimal_text(share)
