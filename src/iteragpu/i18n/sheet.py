"""The inference load specification sheet, filled: one record of a sizing's figures (`LoadSheet`),
printed as Markdown in the reader's language (`sheet_markdown`) or as a JSON object with stable
English keys and raw integer bytes (`sheet_json`).

The guides ask the reader to write down, before sizing, what runs and how much of it
(docs/<code>/docs/load-specification.md#sheet); `iteragpu model --sheet`, the sizer page and
`iteragpu fit` print that sheet filled with what their inputs say, and leave empty what they do
not (the revision of a local folder, the input and output lengths when only their sum is given,
the decoding settings, the quality bar, the runtime environment, the measured peak): an empty
cell in the Markdown, a null with its reason in the JSON, never a guess.

Why here, in `i18n`: the CLI (`iteragpu.cli.load_sheet` builds a sheet from `size_model`'s or
`plan_split`'s answer) and the build tools (the sizer's vectors, `docs_tools.sizer_sheet_vectors`)
both print it, and the sizer page prints the same text from the words `sheet_words` gives it
(docs/hooks.py puts them in the page's data): a module both may import, which imports only the
core and the catalogue (tests/test_import_graph.py).

The JSON keys (stable): `sheet` ("inference_load"), `source` (what computed it: SOURCES),
`model`, `hf_repo`, `model_type`, `revision`, `task` ("inference"), `weights_source` ("config",
"safetensors", "gguf", or "parameters": a count typed in the sizer), `weights_bits` (exact decimal
text, when one bit width applies), `weights_formats` (the files' dtypes, files only),
`weights_dtype` (the dtype the weights are counted at), `quantization_method`, `input_tokens`,
`output_tokens`, `tokens` (held per sequence; llama.cpp: its context `-c`, shared by its slots),
`sequences` (llama.cpp: its slots, `-np`), `cache` (CACHES), `static_max_tokens`,
`cache_block_tokens`, `kv_dtype`, `kv_bytes_per_value` (exact decimal text), `runtime` (null for
one GPU as `iteragpu model` sizes it), `runtime_version`, `tp`, `pp`, `ep`, `gpus`,
`first_to_fill` (the GPU that needs the most, the lowest on a tie), `ranks` (one object per GPU:
`rank`, `device`, then `weights`, `kv_cache`, `state`, `reserve`, `total` as `*_bytes` (whole
bytes, rounded up when the exact count is not whole, as `iteragpu model --json` states them),
`*_bytes_exact`, `total_gib`, and `measured_peak_bytes`, null, with
`measured_peak_unknown_reason`), `host` (llama.cpp's part in host
memory, same keys, else null), `decoding`, `quality_bar`, `environment`, `not_counted`. Every
key that may be null has a sibling `<key>_unknown_reason` (REASONS), null when the value is
known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any, Final, Protocol

from iteragpu.core.numbers import decimal_places, exact_decimal_text
from iteragpu.core.quantity import byte_fields
from iteragpu.core.records import Record
from iteragpu.core.units import ceil_bytes, to_unit
from iteragpu.i18n.catalogue import N_, translate
from iteragpu.i18n.numbers import format_number

SOURCES: Final = ("iteragpu_model", "sizer", "iteragpu_fit")
WEIGHT_SOURCES: Final = ("config", "safetensors", "gguf", "parameters")
CACHES: Final = ("dynamic", "static", "vllm_blocks", "llamacpp_cells")
RUNTIME_NAMES: Final = {"transformers": "Transformers", "vllm": "vLLM", "llama.cpp": "llama.cpp"}
# Why a value is null (the `<key>_unknown_reason` codes).
REASONS: Final = {
    "not_in_inputs": "the inputs do not say it",
    "hub_revision_unknown": "a published config whose Hub revision is not known",
    "only_context_given": "only the tokens held (input plus output) were given",
    "weights_at_bits": "the weights are counted at a bit width, not a dtype",
    "weights_from_files": "the weights are read from their files, each tensor at its own type",
    "reader_fills": "the reader's choice or environment, written by the reader",
    "not_measured": "computed, never measured: the reader measures it on the card",
}
# What no figure of the sheet holds.
NOT_COUNTED: Final = ("activations", "temporary_buffers", "cuda_context")

# The sheet's words, per key; their ids are the catalogue's (the CLI and the sizer page alike).
WORDS: Final = {
    "title": N_("Inference load specification"),
    "field": N_("Field"),
    "value": N_("Value"),
    "model": N_("Model"),
    "model_type": N_("Model family"),
    "revision": N_("Revision"),
    "task": N_("Task"),
    "task_inference": N_("inference"),
    "weights_format": N_("Weight storage format"),
    "weights_dtype": N_("Compute dtype"),
    "cache": N_("Cache strategy"),
    "split": N_("GPUs and split"),
    "decoding": N_("Decoding settings"),
    "quality_bar": N_("Quality criteria"),
    "environment": N_("Runtime environment"),
    "weights_config_dtype": N_("counted from config.json at {dtype}"),
    "weights_config_bits": N_("counted from config.json at {bits} bits per parameter"),
    "weights_parameters_bits": N_("counted from the parameter count at {bits} bits per parameter"),
    "weights_safetensors": N_("safetensors files: {formats}"),
    "weights_gguf": N_("GGUF file: {formats}"),
    "weights_quantized": N_("{weights}; quantization method {method}"),
    "cache_dynamic": N_("dynamic cache (the peak right after the prompt)"),
    "cache_static": N_("static cache of {tokens} tokens, allocated up front"),
    "cache_vllm_blocks": N_("vLLM blocks of {tokens} tokens per sequence"),
    "cache_llamacpp_cells": N_("llama.cpp cells: the context (-c) shared by the slots (-np)"),
    "cache_kv_dtype": N_("{cache}; KV cache {dtype}"),
    "split_none": N_("one GPU, not split"),
    "split_runtime": N_("{runtime} {version} rules: TP {tp}, PP {pp}, EP {ep}; {gpus} GPUs"),
    "ep_on": N_("on"),
    "ep_off": N_("off"),
    "input_tokens": N_("Input length (tokens)"),
    "output_tokens": N_("Output length (tokens)"),
    "tokens": N_("Tokens held per sequence (tokens)"),
    "sequences": N_("Concurrent sequences (count)"),
    "kv_bytes_per_value": N_("KV cache per value (B)"),
    "gpu": N_("GPU"),
    "gpu_row": N_("GPU {rank}"),
    "gpu_first": N_("GPU {rank}, fills first"),
    "host": N_("host memory"),
    "weights_bytes": N_("Weights (B)"),
    "kv_cache_bytes": N_("KV cache (B)"),
    "state_bytes": N_("Layer states (B)"),
    "reserve_bytes": N_("Reserve (B)"),
    "total_bytes": N_("Total (B)"),
    "total_gib": N_("Total (GiB)"),
    "measured_peak_bytes": N_("Measured peak (B)"),
    "source": N_("Source"),
    "source_iteragpu_model": N_("computed (`iteragpu model`)"),
    "source_sizer": N_("computed (sizer)"),
    "source_iteragpu_fit": N_("computed (`iteragpu fit`)"),
    "note_not_counted": N_(
        "The totals leave out activations, temporary buffers and the CUDA context."
    ),
    "note_fill": N_(
        "Fill the empty cells yourself: the measured peak is what the card shows when the load "
        "runs."
    ),
}
_FIELD: Final = re.compile(r"\{([a-z_]+)\}")


class RankFigures(Protocol):
    """What a GPU's row reads: `iteragpu.parallel.records.RankPlan` has it."""

    @property
    def rank(self) -> int: ...
    @property
    def weights_bytes(self) -> Fraction: ...
    @property
    def kv_cache_bytes(self) -> Fraction: ...
    @property
    def state_bytes(self) -> Fraction: ...
    @property
    def reserve_bytes(self) -> Fraction: ...


class GpuRow(Record):
    """One GPU's bytes (or, `rank` None, llama.cpp's part in host memory)."""

    rank: int | None
    weights_bytes: Fraction
    kv_cache_bytes: Fraction
    state_bytes: Fraction
    reserve_bytes: Fraction

    @property
    def total_bytes(self) -> Fraction:
        return self.weights_bytes + self.kv_cache_bytes + self.state_bytes + self.reserve_bytes


def gpu_row(rank: RankFigures, host: bool = False) -> GpuRow:
    """The row of a split's rank (`RankPlan`), or of its host part."""
    return GpuRow(
        None if host else rank.rank,
        Fraction(rank.weights_bytes),
        Fraction(rank.kv_cache_bytes),
        Fraction(rank.state_bytes),
        Fraction(rank.reserve_bytes),
    )


class LoadSheet(Record):
    """The figures of one sizing, as the sheet states them (see the module's docstring).

    None is a value the inputs did not give; `*_reason` says why, where more than one reason
    is possible (REASONS).
    """

    source: str
    model: str | None
    hf_repo: str | None
    model_type: str | None
    revision: str | None
    revision_reason: str
    weights_source: str
    weights_bits: Fraction | None
    weights_formats: tuple[str, ...]
    weights_dtype: str | None
    weights_dtype_reason: str
    quantization_method: str | None
    tokens: int
    sequences: int
    cache: str
    kv_bytes_per_value: Fraction
    rows: tuple[GpuRow, ...]
    kv_dtype: str | None = None
    static_max_tokens: int | None = None
    cache_block_tokens: int | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    tp: int = 1
    pp: int = 1
    ep: bool = False
    host: GpuRow | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    task: str = "inference"

    def __post_init__(self) -> None:
        if self.source not in SOURCES or self.weights_source not in WEIGHT_SOURCES:
            raise ValueError(f"unknown source {self.source!r} or {self.weights_source!r}")
        if self.cache not in CACHES or not self.rows:
            raise ValueError(f"unknown cache {self.cache!r}, or no GPU")

    @property
    def first_to_fill(self) -> GpuRow:
        """The GPU that needs the most (the lowest rank on a tie): a card must hold it."""
        return max(self.rows, key=lambda row: (row.total_bytes, -(row.rank or 0)))


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------


def _known(key: str, value: Any, reason: str) -> dict[str, Any]:
    return {key: value, f"{key}_unknown_reason": None if value is not None else reason}


def _row_json(row: GpuRow) -> dict[str, Any]:
    return {
        "rank": row.rank,
        "device": "host" if row.rank is None else "gpu",
        **byte_fields("weights", row.weights_bytes),
        **byte_fields("kv_cache", row.kv_cache_bytes),
        **byte_fields("state", row.state_bytes),
        **byte_fields("reserve", row.reserve_bytes),
        **byte_fields("total", row.total_bytes, "GiB"),
        "measured_peak_bytes": None,
        "measured_peak_unknown_reason": "not_measured",
    }


def sheet_json(sheet: LoadSheet) -> dict[str, Any]:
    """The sheet as a JSON object (keys in the module's docstring)."""
    return {
        "sheet": "inference_load",
        "source": sheet.source,
        **_known("model", sheet.model, "not_in_inputs"),
        "hf_repo": sheet.hf_repo,
        **_known("model_type", sheet.model_type, "not_in_inputs"),
        **_known("revision", sheet.revision, sheet.revision_reason),
        "task": sheet.task,
        "weights_source": sheet.weights_source,
        "weights_bits": None if sheet.weights_bits is None else _decimal(sheet.weights_bits),
        "weights_formats": list(sheet.weights_formats) if sheet.weights_formats else None,
        **_known("weights_dtype", sheet.weights_dtype, sheet.weights_dtype_reason),
        "quantization_method": sheet.quantization_method,
        **_known("input_tokens", sheet.input_tokens, "only_context_given"),
        **_known("output_tokens", sheet.output_tokens, "only_context_given"),
        "tokens": sheet.tokens,
        "sequences": sheet.sequences,
        "cache": sheet.cache,
        "static_max_tokens": sheet.static_max_tokens,
        "cache_block_tokens": sheet.cache_block_tokens,
        "kv_dtype": sheet.kv_dtype,
        "kv_bytes_per_value": _decimal(sheet.kv_bytes_per_value),
        "runtime": sheet.runtime,
        "runtime_version": sheet.runtime_version,
        "tp": sheet.tp,
        "pp": sheet.pp,
        "ep": sheet.ep,
        "gpus": len(sheet.rows),
        "first_to_fill": sheet.first_to_fill.rank,
        "ranks": [_row_json(row) for row in sheet.rows],
        "host": None if sheet.host is None else _row_json(sheet.host),
        **_known("decoding", None, "reader_fills"),
        **_known("quality_bar", None, "reader_fills"),
        **_known("environment", None, "reader_fills"),
        "not_counted": list(NOT_COUNTED),
    }


def _decimal(value: Fraction) -> str:
    return exact_decimal_text(value)


# ---------------------------------------------------------------------------------------------
# Markdown, in the reader's language
# ---------------------------------------------------------------------------------------------


def sheet_words(lang: str) -> dict[str, str]:
    """Every word of the sheet in `lang`, by key (the sizer page's data holds them)."""
    return {key: translate(message, lang) for key, message in WORDS.items()}


def fill(template: str, values: dict[str, str]) -> str:
    """`template` with each {name} of `values` replaced (web/sizer/format.js's `fillTemplate`)."""
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def cell(text: str) -> str:
    """`text` as a table cell: one line, its pipes escaped (GitHub's tables)."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str) -> str:
    """`text` as inline code, fenced past any backtick it holds."""
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def decimal_text(value: Fraction, lang: str) -> str:
    """An exact value (bytes per value, bits) in `lang`'s format, every decimal it needs."""
    places = decimal_places(value)
    return format_number(value, 20 if places is None else places, lang)


def _table(header: Iterable[str], align: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    return [line(header), line(align), *(line(row) for row in rows)]


def _weights_text(sheet: LoadSheet, w: dict[str, str], lang: str) -> str:
    bits = "" if sheet.weights_bits is None else decimal_text(sheet.weights_bits, lang)
    if sheet.weights_source == "parameters":
        text = fill(w["weights_parameters_bits"], {"bits": bits})
    elif sheet.weights_source == "config":
        if sheet.weights_dtype is not None:
            text = fill(w["weights_config_dtype"], {"dtype": code(sheet.weights_dtype)})
        else:
            text = fill(w["weights_config_bits"], {"bits": bits})
    else:
        formats = ", ".join(code(f) for f in sheet.weights_formats)
        text = fill(w[f"weights_{sheet.weights_source}"], {"formats": formats})
    if sheet.quantization_method is not None:
        text = fill(
            w["weights_quantized"], {"weights": text, "method": code(sheet.quantization_method)}
        )
    return text


def _cache_text(sheet: LoadSheet, w: dict[str, str], lang: str) -> str:
    tokens = sheet.static_max_tokens if sheet.cache == "static" else sheet.cache_block_tokens
    text = fill(
        w[f"cache_{sheet.cache}"],
        {"tokens": "" if tokens is None else format_number(tokens, 0, lang)},
    )
    if sheet.kv_dtype is not None:
        text = fill(w["cache_kv_dtype"], {"cache": text, "dtype": code(sheet.kv_dtype)})
    return text


def _split_text(sheet: LoadSheet, w: dict[str, str], lang: str) -> str:
    if sheet.runtime is None:
        return w["split_none"]
    return fill(
        w["split_runtime"],
        {
            "runtime": RUNTIME_NAMES.get(sheet.runtime, sheet.runtime),
            "version": code(sheet.runtime_version or ""),
            "tp": format_number(sheet.tp, 0, lang),
            "pp": format_number(sheet.pp, 0, lang),
            "ep": w["ep_on"] if sheet.ep else w["ep_off"],
            "gpus": format_number(len(sheet.rows), 0, lang),
        },
    )


def _row_cells(sheet: LoadSheet, row: GpuRow, w: dict[str, str], lang: str) -> list[str]:
    if row.rank is None:
        label = w["host"]
    else:
        first = len(sheet.rows) > 1 and row is sheet.first_to_fill
        label = fill(
            w["gpu_first" if first else "gpu_row"], {"rank": format_number(row.rank, 0, lang)}
        )
    figures = (
        row.weights_bytes,
        row.kv_cache_bytes,
        row.state_bytes,
        row.reserve_bytes,
        row.total_bytes,
    )
    return [
        cell(label),
        *(format_number(ceil_bytes(value), 0, lang) for value in figures),
        format_number(to_unit(row.total_bytes, "GiB"), 2, lang),
        "",
        cell(w[f"source_{sheet.source}"]),
    ]


def sheet_markdown(sheet: LoadSheet, lang: str) -> str:
    """The sheet as Markdown in `lang`: what runs (a field per row), the load (its lengths and
    concurrency) and one row per GPU (its bytes, the one that fills first named, an empty
    measured peak), every column that holds a quantity naming its unit; no final newline."""
    w = sheet_words(lang)
    fields = (
        ("model", _model_text(sheet)),
        ("model_type", "" if sheet.model_type is None else code(sheet.model_type)),
        ("revision", "" if sheet.revision is None else code(sheet.revision)),
        ("task", w[f"task_{sheet.task}"]),
        ("weights_format", _weights_text(sheet, w, lang)),
        ("weights_dtype", "" if sheet.weights_dtype is None else code(sheet.weights_dtype)),
        ("cache", _cache_text(sheet, w, lang)),
        ("split", _split_text(sheet, w, lang)),
        ("decoding", ""),
        ("quality_bar", ""),
        ("environment", ""),
    )

    def count(value: int | None) -> str:
        return "" if value is None else format_number(value, 0, lang)

    load = [
        count(sheet.input_tokens),
        count(sheet.output_tokens),
        count(sheet.tokens),
        count(sheet.sequences),
        decimal_text(sheet.kv_bytes_per_value, lang),
    ]
    rows = [*sheet.rows, *(() if sheet.host is None else (sheet.host,))]
    load_keys = ("input_tokens", "output_tokens", "tokens", "sequences", "kv_bytes_per_value")
    gpu_keys = (
        "gpu",
        "weights_bytes",
        "kv_cache_bytes",
        "state_bytes",
        "reserve_bytes",
        "total_bytes",
        "total_gib",
        "measured_peak_bytes",
        "source",
    )
    lines = [
        f"**{w['title']}**",
        "",
        *_table(
            (w["field"], w["value"]),
            ("---", "---"),
            ((cell(w[key]), cell(text)) for key, text in fields),
        ),
        "",
        *_table((w[key] for key in load_keys), ("---:",) * len(load_keys), [load]),
        "",
        *_table(
            (w[key] for key in gpu_keys),
            ("---", *("---:",) * 7, "---"),
            (_row_cells(sheet, row, w, lang) for row in rows),
        ),
        "",
        w["note_not_counted"],
        w["note_fill"],
    ]
    return "\n".join(lines)


def _model_text(sheet: LoadSheet) -> str:
    if sheet.model is None:
        return ""
    text = code(sheet.model)
    return f"{text} ({code(sheet.hf_repo)})" if sheet.hf_repo else text
