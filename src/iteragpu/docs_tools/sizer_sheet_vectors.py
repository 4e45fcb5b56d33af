"""Test vectors for the sizer's filled load sheet (#filled-sheet): for a page state (the form's
query, the model chosen by name or the config read, the split's TP, PP and EP), the Markdown
`iteragpu.i18n.sheet.sheet_markdown` prints in each language, which sizer/sheet.js's `sheetMarkdown`
(over `sizerSheet`) must print character for character.

The figures are the Python core's: `sizer_vectors.expected(query)` for one GPU (the page's own
figures, handed in by `sizer_vectors`, which imports this module), `iteragpu.parallel.plan_split`
under vLLM's rules for a split of the config read, at the form's bits, tokens, sequences and
reserve. `sizer_sheet` is also what the browser test compares the page's copied sheet with
(tests/website/test_sizer.py).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from iteragpu.core import kv_cache, weights
from iteragpu.core.numbers import parse_count, parse_non_negative, parse_positive, parse_tokens
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.sheet import GpuRow, LoadSheet, gpu_row, sheet_markdown
from iteragpu.parallel import vllm_rules
from iteragpu.parallel.payload import VERSIONS

# The bounds of the fields the sheet reads (sizer_vectors.LIMITS, the CLI's).
LIMITS: Final = {
    "bits": weights.MAX_BITS,
    "bytes_per_value": kv_cache.MAX_BYTES_PER_VALUE,
    "tokens": kv_cache.MAX_TOKENS,
    "sequences": kv_cache.MAX_SEQUENCES,
    "reserve_gib": weights.MAX_RESERVE_GIB,
}
# The published Llama-3.1-8B as the page fills the form when it is chosen by name (its
# config's counts), at the guide's limit case: the same figures as
# `iteragpu model llama-3.1-8b --tokens 8192 --sequences 4`.
LLAMA: Final = {"name": "llama-3.1-8b", "hf_repo": "meta-llama/Llama-3.1-8B", "model_type": "llama"}
LLAMA_QUERY: Final = {
    "params": "8030261248",
    "layers": "32",
    "kv_heads": "8",
    "head_dim": "128",
    "bits": "16",
    "bytes_per_value": "2",
    "reserve_gib": "0",
    "cache": "dynamic",
    "tokens": "8192",
    "sequences": "4",
}
QWEN_QUERY: Final = {
    "params": "7615616512",
    "layers": "28",
    "kv_heads": "4",
    "head_dim": "128",
    "reserve_gib": "1.5",
    "tokens": "1000",
    "sequences": "3",
}
# (query, model, split): the model {name, hf_repo, model_type} (None: not known to the page),
# the split {preset whose config was read, tp, pp, ep} (None: one GPU).
CASES: Final[list[tuple[dict[str, str], dict[str, Any] | None, dict[str, Any] | None]]] = [
    ({}, None, None),
    (LLAMA_QUERY, LLAMA, None),
    ({**LLAMA_QUERY, "cache": "static", "reserve_gib": "2.5"}, LLAMA, None),
    (LLAMA_QUERY, LLAMA, {"preset": "llama-3.1-8b", "tp": 2, "pp": 1, "ep": False}),
    (LLAMA_QUERY, LLAMA, {"preset": "llama-3.1-8b", "tp": 1, "pp": 2, "ep": False}),
    (LLAMA_QUERY, LLAMA, {"preset": "llama-3.1-8b", "tp": 4, "pp": 2, "ep": False}),
    (
        {**LLAMA_QUERY, "reserve_gib": "0.75", "tokens": "1000", "sequences": "3"},
        None,
        {"preset": "llama-3.1-8b", "tp": 8, "pp": 1, "ep": False},
    ),
    (QWEN_QUERY, {"name": None, "hf_repo": None, "model_type": "qwen2"}, None),
    (
        QWEN_QUERY,
        {"name": None, "hf_repo": None, "model_type": "qwen2"},
        {"preset": "qwen2.5-7b", "tp": 2, "pp": 1, "ep": False},
    ),
    (
        {"bits": "4.5", "bytes_per_value": "0.5", "state_bytes": "1000001", "sequences": "3"},
        None,
        None,
    ),
    ({"params": "13000000001", "bits": "3", "reserve_gib": "0.25", "window": "4096"}, None, None),
    (
        {"tokens": "32768", "window": "4096", "windowed_layers": "16", "cache": "dynamic"},
        None,
        None,
    ),
    # No sheet: a task other than inference, an input refused.
    ({"task": "training"}, None, None),
    ({"params": "7x9"}, None, None),
]


def _value(query: dict[str, str], field: str) -> Any:
    parse = {"bits": parse_positive, "bytes_per_value": parse_positive}.get(field)
    if parse is not None:
        return parse(query[field], field, maximum=LIMITS[field])
    if field == "tokens":
        return parse_tokens(query[field], field, maximum=LIMITS[field])
    if field == "reserve_gib":
        return parse_non_negative(query[field], field, maximum=LIMITS[field])
    return parse_count(query[field], field, maximum=LIMITS[field])


def sizer_sheet(
    q: dict[str, str],
    figures: dict[str, Any],
    model: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> LoadSheet | None:
    """The sheet the page copies for the merged query `q` (`figures`: `sizer_vectors.expected(q)`),
    or None where it offers none (an invalid query, a task other than inference)."""
    if not figures["valid"] or q["task"] != "inference":
        return None
    model = model or {}
    weights = Fraction(figures["weights_bytes"])
    reserve = Fraction(figures["total_bytes"]) - weights
    tokens, sequences = _value(q, "tokens"), _value(q, "sequences")
    bits, per_value = _value(q, "bits"), _value(q, "bytes_per_value")
    fields: dict[str, Any] = {
        "source": "sizer",
        "model": model.get("name"),
        "hf_repo": model.get("hf_repo"),
        "model_type": model.get("model_type"),
        "revision": None,
        "revision_reason": "hub_revision_unknown" if model.get("name") else "not_in_inputs",
        "weights_source": "parameters",
        "weights_bits": bits,
        "weights_formats": (),
        "weights_dtype": None,
        "weights_dtype_reason": "not_in_inputs",
        "quantization_method": None,
        "tokens": tokens,
        "sequences": sequences,
        "cache": q["cache"],
        "static_max_tokens": tokens if q["cache"] == "static" else None,
        "kv_bytes_per_value": per_value,
        "rows": (
            GpuRow(
                0,
                weights,
                Fraction(figures["kv_cache_bytes"]),
                Fraction(figures["state_bytes"]),
                reserve,
            ),
        ),
    }
    if split is not None:
        from iteragpu.parallel.plan import plan_split
        from iteragpu.parallel.records import SplitRequest

        plan = plan_split(
            SplitRequest(
                split["preset"],
                tokens,
                sequences,
                runtime="vllm",
                tp=split["tp"],
                pp=split["pp"],
                ep=split["ep"],
                bits=bits,
                reserve_gib=_value(q, "reserve_gib"),
            )
        )
        # The page caches at the form's bytes per value; vLLM's rule at the model's dtype.
        if plan.kv_bytes_per_value != per_value:
            raise ValueError(f"{split}: vLLM caches {plan.kv_bytes_per_value} B per value")
        fields.update(
            weights_source="config",
            cache="vllm_blocks",
            static_max_tokens=None,
            cache_block_tokens=vllm_rules.BLOCK_SIZE,
            runtime="vllm",
            runtime_version=VERSIONS["vllm"],
            tp=plan.tp,
            pp=plan.pp,
            ep=plan.ep,
            rows=tuple(gpu_row(rank) for rank in plan.ranks),
        )
    return LoadSheet(**fields)


def sheet_vectors(
    defaults: dict[str, str], expected: Callable[[dict[str, str]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every case of CASES over the page's `defaults`, with its Markdown per language (null where
    the page offers none)."""
    found = []
    for query, model, split in CASES:
        merged = {**defaults, **query}
        sheet = sizer_sheet(merged, expected(merged), model, split)
        found.append(
            {
                "query": merged,
                "model": model,
                "split": split,
                "markdown": None
                if sheet is None
                else {lang: sheet_markdown(sheet, lang) for lang in CODES},
            }
        )
    return found
