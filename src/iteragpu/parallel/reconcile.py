"""A runtime's start-up log set beside what the split planner computes for the same model and
settings (`iteragpu report --vllm-log` / `--llama-log`), item by item, each figure in the
runtime's own unit and rounding, with the difference and what it means.

The planner's side is `plan.plan_split`, the rules `iteragpu model --runtime` states; vLLM's
blocks, cache size and concurrency are computed from the log's own "Available KV cache memory"
by `vllm_rules` (the figure is rounded to 0.01 GiB, so the blocks are a range). A difference is
never hidden: a weights figure vLLM measured while loading holds more than the tensors (the
allocator's rounding, buffers the model registers), llama.cpp's buffers hold their alignment.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from iteragpu.core.records import Record
from iteragpu.parallel.records import SplitRequest
from iteragpu.parallel.runtime_logs import LlamaLog, LogError, VllmLog

if TYPE_CHECKING:
    from iteragpu.models.kv import LayerLayout

# What an item's figures say of each other:
EQUAL: Final = "equal"  # the same text, in the runtime's rounding
WITHIN: Final = "within_range"  # the log's figure inside the range the rounding leaves
DIFFERS: Final = "differs"  # another figure: the difference is stated
BOUND_HOLDS: Final = "bound_holds"  # the log's figure at or under the bound computed
BOUND_EXCEEDED: Final = "bound_exceeded"  # above a bound: the settings were not these
MEASURED_ONLY: Final = "measured_only"  # the runtime measured it; nothing computes it here
NOT_LOGGED: Final = "not_logged"  # computed; the log does not print it


# Units that are counts of a runtime's things; the text says them in the reader's words.
UNIT_WORDS: Final = ("blocks", "tokens", "x", "cells")

# Where a setting came from: the reader's option, the log's line, the runtime's default; "" for
# a setting that is inferred (the KV sizing mode, from whether the log extended its cache).
SOURCES: Final = ("option", "log", "default", "")


class Setting(Record):
    name: str  # the runtime's own name: tensor_parallel_size, n_gpu_layers...
    value: str  # "all" for llama.cpp's every layer
    source: str  # one of SOURCES
    detail: str | None = None  # what the log named (llama.cpp's devices)

    def text(self) -> str:
        """`value (source[: detail])`, the JSON's form."""
        if not self.source:
            return self.value
        where = f"{self.source}: {self.detail}" if self.detail else self.source
        return f"{self.value} ({where})"


class LogItem(Record):
    item: str  # weights, available_budget, blocks, cache_tokens, concurrency, max_model_len...
    rank: int | None  # the GPU, or None for the whole run
    unit: str  # "GiB", "MiB", "blocks", "tokens", "x", "cells" (UNIT_WORDS: said in words)
    computed: str | None  # in the runtime's own rounding
    logged: str | None
    difference: str | None  # logged - computed, same unit
    status: str


class Reconciliation(Record):
    runtime: str
    path: str  # the model
    log_path: str
    version: str | None  # the version the log names
    settings: tuple[Setting, ...]  # what the planner was given, and where from
    items: tuple[LogItem, ...]
    notes: tuple[str, ...]


def _difference(logged: str, computed: str, places: int = 2) -> str:
    value = Fraction(logged) - Fraction(computed)
    return f"{float(value):+.{places}f}"


def _dtype(text: str | None) -> str | None:
    if text is None or text in ("auto", "None"):
        return None
    return text.removeprefix("torch.")


def reconcile_vllm(
    log: VllmLog,
    path: str,
    log_path: str,
    *,
    tp: int | None = None,
    pp: int | None = None,
    ep: bool = False,
    kv_dtype: str | None = None,
    dtype: str | None = None,
    capacity_bytes: int | None = None,
    utilization: str | None = None,
) -> Reconciliation:
    """vLLM's lines beside the plan: weights per GPU, the budget a card leaves (with
    `capacity_bytes`), the blocks its "Available KV cache memory" buys, the cache size and
    concurrency it printed, and the `max_model_len` check."""
    from iteragpu.parallel import vllm_rules as rules
    from iteragpu.parallel.plan import plan_split

    settings: list[Setting] = []

    def chosen(name: str, given: object, logged: str | None, default: str) -> str:
        if given is not None:
            settings.append(Setting(name, str(given), "option"))
            return str(given)
        if logged is not None:
            settings.append(Setting(name, logged, "log"))
            return logged
        settings.append(Setting(name, default, "default"))
        return default

    tp_text = chosen("tensor_parallel_size", tp, log.setting("tensor_parallel_size"), "1")
    pp_text = chosen("pipeline_parallel_size", pp, log.setting("pipeline_parallel_size"), "1")
    kv_text = chosen("kv_cache_dtype", kv_dtype, log.setting("kv_cache_dtype"), "auto")
    dtype_text = chosen("dtype", dtype, log.setting("dtype"), "auto")
    block = log.block_size or rules.BLOCK_SIZE
    settings.append(Setting("block_size", str(block), "log" if log.block_size else "default"))
    extensible = log.extended_blocks is not None
    settings.append(Setting("kv_sizing", "extensible" if extensible else "profiled", ""))
    try:
        tp_count, pp_count = int(tp_text), int(pp_text)
    except ValueError:
        raise LogError(
            "{path}: its `tensor_parallel_size` or `pipeline_parallel_size` is no whole number",
            "log_bad_setting",
            path=log_path,
        ) from None
    plan = plan_split(
        SplitRequest(
            path,
            1,
            1,
            "vllm",
            tp_count,
            pp_count,
            ep,
            dtype=_dtype(dtype_text),
            kv_dtype=_dtype(kv_text),
        )
    )
    sizes = [rules.block_bytes(r.kv_bytes_per_token, block) for r in plan.ranks]
    items: list[LogItem] = []
    notes: list[str] = []
    for rank, gib_text in log.loading_gib:
        if rank >= len(plan.ranks):
            raise _rank_error(log_path, rank, len(plan.ranks))
        computed = rules.format_gib(math.ceil(plan.ranks[rank].weights_bytes))
        items.append(
            LogItem(
                "weights",
                rank,
                "GiB",
                computed,
                gib_text,
                _difference(gib_text, computed),
                EQUAL if computed == gib_text else DIFFERS,
            )
        )
    ranges: dict[int, tuple[int, int]] = {}
    for rank, gib_text in log.available_gib:
        if rank >= len(plan.ranks):
            raise _rank_error(log_path, rank, len(plan.ranks))
        try:
            ranges[rank] = rules.gib_range(gib_text)
        except ValueError:
            raise LogError(
                "{path}: {value} GiB is no figure vLLM prints",
                "log_bad_gib",
                path=log_path,
                value=gib_text,
            ) from None
        if capacity_bytes is not None:
            share = utilization or (
                rules.UTILIZATION_EXTENSIBLE if extensible else rules.UTILIZATION_PROFILED
            )
            budget = rules.requested_memory(capacity_bytes, share) - plan.ranks[rank].fixed_bytes
            computed = rules.format_gib(math.floor(budget))
            items.append(
                LogItem(
                    "available_budget",
                    rank,
                    "GiB",
                    computed,
                    gib_text,
                    _difference(gib_text, computed),
                    BOUND_HOLDS if Fraction(gib_text) <= Fraction(computed) else BOUND_EXCEEDED,
                )
            )
    least = most = None
    if ranges:
        if len(ranges) < len(plan.ranks):
            # One worker's line stands for the others (vLLM prints it once per process).
            only = next(iter(ranges.values()))
            ranges = {r: ranges.get(r, only) for r in range(len(plan.ranks))}
            notes.append("vllm_one_available_line")
        least = min(ranges[r][0] // sizes[r] for r in ranges)
        most = min(ranges[r][1] // sizes[r] for r in ranges)
    length = log.concurrency_tokens
    if length is None:
        seq = log.setting("max_seq_len")
        length = int(seq) if seq is not None and seq.isdigit() else None
    implied = _implied_blocks(log, block)
    if least is not None and most is not None:
        computed = f"{least}" if least == most else f"{least}-{most}"
        if implied is None:
            status, logged = NOT_LOGGED, None
        elif extensible:
            status = BOUND_HOLDS if implied <= most else BOUND_EXCEEDED
            logged = str(implied)
        else:
            status = WITHIN if least <= implied <= most else DIFFERS
            logged = str(implied)
        difference = None
        if implied is not None and status in (DIFFERS, BOUND_EXCEEDED):
            nearest = least if implied < least else most
            difference = f"{implied - nearest:+d}"
        items.append(LogItem("blocks", None, "blocks", computed, logged, difference, status))
        if length is not None:
            low = rules.cache_size_tokens(least, length, block)
            high = rules.cache_size_tokens(most, length, block)
            token_text = f"{low:,}" if low == high else f"{low:,}-{high:,}"
            logged_tokens = None if log.cache_tokens is None else f"{log.cache_tokens:,}"
            items.append(
                LogItem(
                    "cache_tokens",
                    None,
                    "tokens",
                    token_text,
                    logged_tokens,
                    None,
                    _range_status(log.cache_tokens, low, high, extensible),
                )
            )
            c_low = f"{rules.max_concurrency(least, length, block):.2f}"
            c_high = f"{rules.max_concurrency(most, length, block):.2f}"
            items.append(
                LogItem(
                    "concurrency",
                    None,
                    "x",
                    c_low if c_low == c_high else f"{c_low}-{c_high}",
                    log.concurrency,
                    None,
                    _range_status(
                        None if log.concurrency is None else Fraction(log.concurrency),
                        Fraction(c_low),
                        Fraction(c_high),
                        extensible,
                    ),
                )
            )
            fits = rules.max_model_len_fits(length, least, block)
            most_len = block * (least - 1)
            items.append(
                LogItem(
                    "max_model_len",
                    None,
                    "tokens",
                    f"{most_len:,}",
                    f"{length:,}",
                    None,
                    BOUND_HOLDS if fits else BOUND_EXCEEDED,
                )
            )
    if log.extended_blocks is not None:
        notes.append("vllm_extensible_measured")
    if log.version is not None and log.version != rules.VERSION:
        notes.append("vllm_version_differs")
    return Reconciliation(
        "vllm",
        path,
        log_path,
        log.version,
        tuple(settings),
        tuple(items),
        tuple(notes),
    )


def _range_status(
    logged: int | Fraction | None, low: int | Fraction, high: int | Fraction, bound: bool
) -> str:
    if logged is None:
        return NOT_LOGGED
    if bound:
        return BOUND_HOLDS if logged <= high else BOUND_EXCEEDED
    return WITHIN if low <= logged <= high else DIFFERS


def _implied_blocks(log: VllmLog, block: int) -> int | None:
    """The block count behind "GPU KV cache size: N tokens, Maximum concurrency for L
    tokens per request: C.CCx" (or "Extended KV cache to N blocks"), None without them."""
    from iteragpu.parallel import vllm_rules as rules

    if log.extended_blocks is not None:
        return log.extended_blocks
    if log.cache_tokens is None or log.concurrency_tokens is None or log.concurrency is None:
        return None
    length = log.concurrency_tokens
    per_request = rules.cdiv(length, block)
    guess = log.cache_tokens * per_request // length
    for blocks in range(max(guess - 2, 0), guess + 3):
        if (
            rules.cache_size_tokens(blocks, length, block) == log.cache_tokens
            and f"{rules.max_concurrency(blocks, length, block):.2f}" == log.concurrency
        ):
            return blocks
    return None


def _rank_error(log_path: str, rank: int, ranks: int) -> LogError:
    return LogError(
        "{path}: the log names GPU {rank}, but the settings give {ranks} GPU(s): give --tp and "
        "--pp as the run had them",
        "log_rank_outside",
        path=log_path,
        rank=str(rank),
        ranks=str(ranks),
    )


def _mib(byte_count: int | Fraction) -> str:
    """`%8.2f` of bytes / 1024.0 / 1024.0, as llama.cpp prints a buffer (stripped)."""
    return f"{float(byte_count) / 1024.0 / 1024.0:.2f}"


def _mib_f32(byte_count: int) -> str:
    """`%7.2f` of `(float) bytes / (1024.0f * 1024.0f)`: the cache size line's single
    precision."""
    from iteragpu.parallel.llamacpp_rules import f32

    return f"{f32(f32(byte_count) / f32(1024.0 * 1024.0)):.2f}"


def reconcile_llama(
    log: LlamaLog,
    path: str,
    log_path: str,
    *,
    tensor_split: tuple[Fraction, ...] | None = None,
) -> Reconciliation:
    """llama.cpp's lines beside the plan of the same -c, -np, -ngl and cache types: each
    device's weights and cache buffers, the cache's cells and its K and V sizes."""
    from iteragpu.parallel import llamacpp_rules as rules
    from iteragpu.parallel.plan import plan_split

    assert log.kv_size is not None
    _total, cells, _layers, seqs, streams, k_type, k_mib, v_type, v_mib = log.kv_size
    for kv_type in (k_type, v_type):
        if kv_type not in rules.KV_TYPES:
            raise LogError(
                "{path}: cache type {kv_type} is not one modelled here ({known})",
                "log_kv_type",
                path=log_path,
                kv_type=kv_type,
                known=", ".join(rules.KV_TYPES),
            )
    gpu_names = [name for name, _ in log.kv_buffers if device_index(name) is not None]
    gpus = max(len(gpu_names), 1)
    settings = [
        Setting("cells_per_stream", str(cells), "log"),
        Setting("n_seq_max", str(seqs), "log"),
        Setting("type_k", k_type, "log"),
        Setting("type_v", v_type, "log"),
        Setting("gpus", str(gpus), "log", ", ".join(gpu_names) or None),
    ]
    offloaded = log.offloaded
    gpu_layers = None if offloaded is None else offloaded[0]
    settings.append(
        Setting("n_gpu_layers", str(gpu_layers), "log")
        if gpu_layers is not None
        else Setting("n_gpu_layers", "all", "default")
    )
    if tensor_split is not None:
        settings.append(Setting("tensor_split", ",".join(str(s) for s in tensor_split), "option"))
    context = cells * streams
    plan = plan_split(
        SplitRequest(
            path,
            context,
            1,
            "llama.cpp",
            1,
            gpus,
            False,
            None,
            gpu_layers,
            tensor_split,
            seqs,
            kv_dtype=k_type,
        )
    )
    items: list[LogItem] = []
    notes = ["llamacpp_buffers_aligned", "llamacpp_compute_not_computed"]
    planned_cells, _ = rules.context_cells(context, seqs)
    items.append(
        LogItem(
            "cells",
            None,
            "cells",
            str(planned_cells),
            str(cells),
            None,
            EQUAL if planned_cells == cells else DIFFERS,
        )
    )
    k_bytes = v_bytes = 0
    per_device: dict[int, int] = {}
    for rank in plan.ranks:
        first, end = rank.layers
        total = 0
        for layout in plan_layouts(path)[first:end]:
            k = rules.row_bytes(k_type, layout.heads * layout.key_dim) * cells * streams
            v = rules.row_bytes(v_type, layout.heads * layout.value_dim) * cells * streams
            k_bytes += int(k)
            v_bytes += int(v)
            total += int(k + v)
        per_device[rank.rank] = total
    for name, computed_key, computed_bytes in (
        ("kv_k", k_mib, k_bytes),
        ("kv_v", v_mib, v_bytes),
    ):
        computed = _mib_f32(computed_bytes)
        items.append(
            LogItem(
                name,
                None,
                "MiB",
                computed,
                computed_key,
                _difference(computed_key, computed),
                EQUAL if computed == computed_key else DIFFERS,
            )
        )
    for name, mib_text in log.kv_buffers:
        index = device_index(name)
        if index is None:
            continue
        computed = _mib(per_device.get(index, 0))
        items.append(
            LogItem(
                "kv_buffer",
                index,
                "MiB",
                computed,
                mib_text,
                _difference(mib_text, computed),
                EQUAL if computed == mib_text else DIFFERS,
            )
        )
    for name, mib_text in log.model_buffers:
        index = device_index(name)
        if index is None or index >= len(plan.ranks):
            items.append(
                LogItem("model_buffer_host", None, "MiB", None, mib_text, None, MEASURED_ONLY)
            )
            continue
        computed = _mib(plan.ranks[index].weights_bytes)
        items.append(
            LogItem(
                "model_buffer",
                index,
                "MiB",
                computed,
                mib_text,
                _difference(mib_text, computed),
                EQUAL if computed == mib_text else DIFFERS,
            )
        )
    for name, mib_text in log.compute_buffers:
        items.append(
            LogItem("compute_buffer:" + name, None, "MiB", None, mib_text, None, MEASURED_ONLY)
        )
    return Reconciliation(
        "llama.cpp", path, log_path, None, tuple(settings), tuple(items), tuple(notes)
    )


def plan_layouts(path: str) -> list[LayerLayout]:
    """The cache layout of each layer of the GGUF file at `path`."""
    from pathlib import Path

    from iteragpu.models.kv import layer_layouts
    from iteragpu.models.model import read_model

    config, _ = read_model(Path(path))
    return list(layer_layouts(config))


def device_index(name: str) -> int | None:
    """The GPU a llama.cpp buffer names (`CUDA1` -> 1); None for a host buffer (`CPU`,
    `CPU_Mapped`, `CUDA_Host`)."""
    import re

    if "CPU" in name.upper() or "HOST" in name.upper():
        return None
    found = re.search(r"(\d+)$", name)
    return int(found.group(1)) if found else 0
