"""Test vectors for the browser sizer: the Python core's answers that the JavaScript must match.

    python -m iteragpu.docs_tools.sizer_vectors > vectors.json

Each case is a sizer URL query and, per language, the exact texts the page must show.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from random import Random
from typing import Any

from iteragpu.core import kv_cache, weights
from iteragpu.core.numbers import (
    MAX_DIGITS,
    MAX_EXPONENT,
    TOKEN_SUFFIXES,
    InputError,
    decimal_places,
    parse_count,
    parse_non_negative,
    parse_positive,
    parse_tokens,
)
from iteragpu.core.units import gib
from iteragpu.core.weights import estimate_weights
from iteragpu.docs_tools.sizer_config_vectors import config_vectors
from iteragpu.docs_tools.sizer_fit_vectors import fit_vectors
from iteragpu.docs_tools.sizer_sheet_vectors import sheet_vectors
from iteragpu.docs_tools.sizer_split_vectors import split_vectors
from iteragpu.docs_tools.sizer_training_vectors import training_vectors
from iteragpu.gpus.catalog import load_catalog
from iteragpu.gpus.need import INFERENCE_MISSING
from iteragpu.gpus.shortlist import Candidate, shortlist
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number
from iteragpu.models.config import FULL, SLIDING
from iteragpu.models.kv import CACHE_KINDS, PER_HEAD, Cache, KVEstimate, LayerLayout, estimate_kv

# The sizer's defaults: the sizing guide's worked example and the measurement guide's KV cache.
DEFAULT_QUERY = {
    "params": "7e9",
    "bits": "16",
    "reserve_gib": "6",
    "task": "inference",
    "layers": "32",
    "kv_heads": "8",
    "head_dim": "128",
    "tokens": "8192",
    "bytes_per_value": "2",
    "sequences": "1",
    "window": "",
    # Per layer kind: how many of the layers use the window ("": all of them, when a window is
    # given), and the cache's rules (static: the guide's min(tokens, window); dynamic: the
    # prompt peak of Transformers' default cache, as `iteragpu model --cache dynamic`).
    "windowed_layers": "",
    "cache": "static",
    # Values each layer caches per token, for a layout that is not per head (MLA); "": 2 x KV
    # heads x head dimension.
    "kv_values": "",
    # Bytes per sequence of the layers' states (Mamba, linear attention), whatever the tokens;
    # "": none.
    "state_bytes": "",
    "days": "3",
}
TASKS = ("inference", "training", "adaptation")
# The largest value each field takes, as the CLI bounds it (sizer/compute.js holds the same LIMITS).
LIMITS: dict[str, int] = {
    "params": weights.MAX_PARAMETERS,
    "bits": weights.MAX_BITS,
    "reserve_gib": weights.MAX_RESERVE_GIB,
    "layers": kv_cache.MAX_LAYERS,
    "kv_heads": kv_cache.MAX_KV_HEADS,
    "head_dim": kv_cache.MAX_HEAD_DIM,
    "tokens": kv_cache.MAX_TOKENS,
    "bytes_per_value": kv_cache.MAX_BYTES_PER_VALUE,
    "sequences": kv_cache.MAX_SEQUENCES,
    "window": kv_cache.MAX_TOKENS,
    "windowed_layers": kv_cache.MAX_LAYERS,
    "kv_values": 2 * kv_cache.MAX_KV_HEADS * kv_cache.MAX_HEAD_DIM,
    "state_bytes": weights.MAX_PARAMETERS,
}
# The layout of a layer whose values per token are given as one number (`kv_values`).
VALUES_LAYOUT = "values"

CASES: list[dict[str, str]] = [
    {},
    {"bits": "8"},
    {"bits": "4"},
    {"bits": "4.5", "reserve_gib": "0"},
    {"params": "7B", "reserve_gib": "4"},
    {"params": "1.5B", "bits": "16", "reserve_gib": "2.5"},
    {"params": "70e9", "task": "training"},
    {"params": "13000000001", "bits": "3", "reserve_gib": "0.25", "task": "adaptation"},
    {"sequences": "4"},
    {"window": "4096", "tokens": "32768"},
    {"bytes_per_value": "0.5", "tokens": "3", "layers": "1", "kv_heads": "1", "head_dim": "1"},
    {"layers": "80", "kv_heads": "8", "head_dim": "128", "tokens": "131072", "sequences": "16"},
    {"days": "2"},
    {"params": "40e9", "reserve_gib": "8"},
    {"params": "-7e9"},
    {"params": "0"},
    {"bits": "nan"},
    {"reserve_gib": "-1"},
    {"tokens": "1e400"},
    {"params": "seven"},
    {"task": "dreaming"},
    # The shared grammar and each field's bound, at and just past the edge.
    {"params": "1e15", "reserve_gib": "1e6"},
    {"bits": "64", "layers": "1e4", "kv_heads": "1e4", "head_dim": "1e5"},
    {"tokens": "1e9", "window": "1e9", "sequences": "1e6", "bytes_per_value": "8"},
    {"params": "1000000000000001"},
    {"bits": "64.000001"},
    {"reserve_gib": "1000000.5"},
    {"layers": "10001"},
    {"kv_heads": "1e4K"},
    {"head_dim": "100001"},
    {"tokens": "1.000000001e9"},
    {"bytes_per_value": "8.5"},
    {"sequences": "1e7"},
    {"window": "2e9"},
    {"bits": "\uff11\uff16"},
    {"params": "\u0667e9"},
    {"params": "1" * (MAX_DIGITS + 1)},
    {"bits": "1e-20000000"},
    {"reserve_gib": f"1e{MAX_EXPONENT + 1}"},
    {"params": "7__000"},
    # Per layer kind: some layers windowed, under each cache's rules; values per token given.
    {"window": "4096", "tokens": "32768", "windowed_layers": "16"},
    {"window": "4096", "tokens": "32768", "windowed_layers": "16", "cache": "dynamic"},
    {"window": "4096", "tokens": "1000", "cache": "dynamic"},
    {"layers": "61", "kv_values": "576", "kv_heads": "x", "head_dim": "", "tokens": "4096"},
    {"windowed_layers": "4"},
    {"window": "4096", "windowed_layers": "33"},
    {"cache": "paged"},
    {"kv_values": "0"},
    {"kv_values": "2000000001"},
    # A model whose layers keep states (Mamba): no KV layer, the states per sequence.
    {"layers": "0", "state_bytes": "1048576", "sequences": "4"},
    {"layers": "0.0", "window": "4096"},
    {"layers": "0", "kv_values": "576", "state_bytes": "0.5"},
    {"state_bytes": "3000000", "window": "4096", "windowed_layers": "16", "cache": "dynamic"},
    {"state_bytes": "0"},
    {"state_bytes": "-1"},
    {"state_bytes": "1e16"},
    {"state_bytes": "many"},
    {"layers": "-0"},
]


def _bytes_text(value: Fraction, lang: str) -> str:
    return format_number(value, 0 if value.denominator == 1 else 3, lang)


def expected(query: dict[str, str], *, decimal_comma: bool = False) -> dict[str, Any]:
    """What the sizer shows for `query` (merged over the defaults), or which input is invalid;
    with `decimal_comma`, as a page whose reader writes 13,04 reads it."""
    q = {**DEFAULT_QUERY, **query}
    c = decimal_comma
    try:
        estimate, (kv, state), days = _read_query(q, c)
    except (InputError, ValueError) as error:
        return {"valid": False, "error": str(error)}
    # The whole need the page computed, as `iteragpu model --shortlist` judges it: weights, KV
    # cache, states and reserve; the prompt's activations and temporaries are still to measure,
    # so the need is a lower bound (the first estimate, weights + reserve, decides nothing).
    model_total = estimate.total_bytes + kv.kv_cache_bytes + state
    candidates = shortlist(gib(model_total), days, need_missing=INFERENCE_MISSING)
    return {
        "valid": True,
        "weights_bytes": _exact(estimate.weights_bytes),
        "total_bytes": _exact(estimate.total_bytes),
        "kv_cache_bytes": _exact(kv.kv_cache_bytes),
        "kv_bytes_per_token": _exact(kv.kv_bytes_per_token),
        "kv_groups": [
            {
                "kind": g.layout.kind,
                "count": g.count,
                "window": g.layout.window,
                "tokens_held": g.held.peak,
                "kv_cache_bytes": _exact(g.kv_cache_bytes),
            }
            for g in kv.groups
        ],
        "state_bytes": _exact(state),
        "model_total_bytes": _exact(model_total),
        "quantization_not_counted": estimate.quantization_not_counted,
        "text": {
            lang: {
                "weights-gib": format_number(estimate.weights_gib, 2, lang),
                "range-gib": format_number(estimate.total_gib, 2, lang),
                "kv-bytes": _bytes_text(kv.kv_cache_bytes, lang),
                "kv-gib": format_number(gib(kv.kv_cache_bytes), 2, lang),
                "kv-bytes-per-token": _bytes_text(kv.kv_bytes_per_token, lang),
                "state-bytes": _bytes_text(state, lang),
                "model-total-gib": format_number(gib(model_total), 2, lang),
            }
            for lang in CODES
        },
        "need_missing": list(INFERENCE_MISSING),
        "candidates": [_candidate(c) for c in candidates],
    }


def _read_query(q: dict[str, str], c: bool) -> tuple[Any, tuple[KVEstimate, Fraction], int]:
    """The weights, the KV cache and the days of a merged query, in the page's order of checks."""
    if q["task"] not in TASKS:
        raise InputError(f"task must be one of {', '.join(TASKS)}", "unknown_task")
    estimate = estimate_weights(
        _count(q, "params", c), _positive(q, "bits", c), _non_negative(q, "reserve_gib", c)
    )
    return estimate, _kv_estimate(q, c), _count(q, "days", c)


def refusal(query: dict[str, str], *, decimal_comma: bool = False) -> dict[str, Any] | None:
    """The first refused input of `query` as the page reports it: its field (the message's
    `what`) and reason, and for an ambiguous suffix the suffix and its two readings (decimal,
    binary); None when the query sizes."""
    try:
        _read_query({**DEFAULT_QUERY, **query}, decimal_comma)
    except InputError as error:
        found: dict[str, Any] = {"field": error.values.get("what"), "reason": error.reason}
        if error.readings is not None:
            suffix = error.values["suffix"]
            found["suffix"] = suffix
            found["readings"] = [_exact(reading) for reading in error.readings]
            found["text"] = {lang: _suffix_texts(suffix, error.readings, lang) for lang in CODES}
        return found
    return None


def _suffix_texts(suffix: str, readings: tuple[Fraction, Fraction], lang: str) -> dict[str, str]:
    """The fields of the page's ambiguous_suffix message in `lang`: every digit of each reading,
    grouped as Babel groups them (`iteragpu.i18n.numbers`, apart from the core's own writing)."""

    def figure(value: Fraction) -> str:
        return format_number(value, decimal_places(value) or 0, lang)

    decimal_factor, binary_factor = TOKEN_SUFFIXES[suffix.upper()]
    return {
        "suffix": suffix,
        "decimal_reading": figure(readings[0]),
        "binary_reading": figure(readings[1]),
        "decimal_factor": figure(Fraction(decimal_factor)),
        "binary_factor": figure(Fraction(binary_factor)),
    }


def _kv_estimate(q: dict[str, str], c: bool) -> tuple[KVEstimate, Fraction]:
    """The KV cache per layer kind, with `iteragpu model`'s code (iteragpu.models.kv), and the
    layers' states for every sequence (iteragpu.models.state: constant in tokens)."""
    layers = _layers(q, c)
    if q["kv_values"]:
        values = _count(q, "kv_values", c)
        key_dim, value_dim, heads, layout = values, 0, 1, VALUES_LAYOUT
    else:
        heads, head_dim = _count(q, "kv_heads", c), _count(q, "head_dim", c)
        key_dim, value_dim, layout = head_dim, head_dim, PER_HEAD
    tokens = _tokens(q, "tokens", c)
    per_value = _positive(q, "bytes_per_value", c)
    sequences = _count(q, "sequences", c)
    window = _tokens(q, "window", c) if q["window"] else None
    windowed = _windowed_layers(q, c, layers, window)
    state = _non_negative(q, "state_bytes", c) if q["state_bytes"] else Fraction(0)
    if q["cache"] not in CACHE_KINDS:
        raise InputError("cache must be dynamic or static", "unknown_cache")
    full = LayerLayout(FULL, None, layout, heads, key_dim, value_dim)
    sliding = LayerLayout(SLIDING, window, layout, heads, key_dim, value_dim)
    layouts = [full] * (layers - windowed) + [sliding] * windowed
    kv = estimate_kv(layouts, tokens, per_value, sequences, Cache(q["cache"]))  # type: ignore[arg-type]
    return kv, state * sequences


def _layers(q: dict[str, str], c: bool) -> int:
    """The layers that hold a KV: a positive count, or 0 for a model whose layers all keep a
    state instead (Mamba)."""
    if _non_negative_or_none(q["layers"], c) == 0:
        return 0
    return _count(q, "layers", c)


def _non_negative_or_none(text: str, decimal_comma: bool) -> Fraction | None:
    """`text` read as a non-negative number (the layers' bound), or None where it is not one."""
    try:
        return parse_non_negative(
            text, "layers", maximum=LIMITS["layers"], decimal_comma=decimal_comma
        )
    except InputError:
        return None


def _windowed_layers(q: dict[str, str], c: bool, layers: int, window: int | None) -> int:
    """How many layers use the window: "" is every layer when a window is given, else none."""
    if not q["windowed_layers"]:
        return 0 if window is None else layers
    windowed = _count(q, "windowed_layers", c)
    if window is None:
        raise InputError("windowed_layers needs a window", "window_needed")
    if windowed > layers:
        raise InputError("windowed_layers cannot exceed layers", "windowed_above_layers")
    return windowed


def _candidate(c: Candidate) -> dict[str, Any]:
    """A short-list row: rank (null unless every requirement is fit), statuses and reasons."""
    declared = c.card.declared_memory_bytes
    return {
        "card_id": c.card.id,
        "rank": c.rank,
        "status": str(c.status),
        "requirements": {r.name: str(r.status) for r in c.requirements},
        "reasons": {r.name: r.reason for r in c.requirements},
        "declared_text": {
            lang: format_number(gib(declared), 2, lang) for lang in CODES if declared is not None
        },
        # As digits: a margin beyond 2^53 (a need of many GiB) would be rounded by JavaScript.
        "paper_margin_bytes": None if c.paper_margin_bytes is None else str(c.paper_margin_bytes),
        "paper_margin_basis": c.paper_basis,
        "holds_need_on_paper": c.holds_need_on_paper,
    }


def _count(query: dict[str, str], field: str, decimal_comma: bool) -> int:
    return parse_count(query[field], field, maximum=LIMITS.get(field), decimal_comma=decimal_comma)


def _tokens(query: dict[str, str], field: str, decimal_comma: bool) -> int:
    """A count of tokens: no suffix (32k may be 32,000 or 32,768), as the CLI's --tokens."""
    return parse_tokens(query[field], field, maximum=LIMITS.get(field), decimal_comma=decimal_comma)


def _positive(query: dict[str, str], field: str, decimal_comma: bool) -> Fraction:
    return parse_positive(
        query[field], field, maximum=LIMITS.get(field), decimal_comma=decimal_comma
    )


def _non_negative(query: dict[str, str], field: str, decimal_comma: bool) -> Fraction:
    return parse_non_negative(
        query[field], field, maximum=LIMITS.get(field), decimal_comma=decimal_comma
    )


def _exact(value: Fraction) -> str:
    """Exact value as `numerator/denominator` (or an integer) for BigInt comparison."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


# Texts for the three parsers, edge by edge: the grammar's every rule and bound.
PARSE_TEXTS: tuple[str, ...] = (
    *("7e9", "7000000000", "7B", "1.5B", "70M", " 7 b ", "0.5K", "1e3k", "1_000", "7EB"),
    *("16", "4.5", "0.5", ".5", "1.", "1.e1", "+5", "-0", "-1", "0", "-1.5", "-7e9"),
    *("\u00a04.5\u3000", "1E5", "1e+5", "1e-5", "1_0.0_1e1_0", "0e999999999999", "1e4K"),
    *("", " ", ".", "e1", "1e", "4,5", "0x10", "1__0", "_1", "1_", "1_.5", "1._5", "1e_5"),
    *("nan", "NaN", "inf", "-Infinity", "seven", "1 000", "++1", "1e5.5", "\u00b2"),
    *("\uff11\uff16", "\u0661\u0662", "\u0663", "7\u0660", "\U0001d7d8", "1e\u0665"),
    *("1" * MAX_DIGITS, "1" * (MAX_DIGITS + 1), "0." + "0" * (MAX_DIGITS - 1) + "1"),
    *("0." + "0" * MAX_DIGITS + "1", "9" * 5000, "1e" + "9" * 5000, "0" * 51 + "1"),
    *(f"1e{MAX_EXPONENT}", f"1e{MAX_EXPONENT + 1}", f"1e-{MAX_EXPONENT}", "1e-20000000"),
    *(f"1e-{MAX_EXPONENT + 1}", f"1e0{MAX_EXPONENT}", "1e400", "1e99999", "1e0000000000050"),
)


# Queries typed on a page whose reader writes a decimal comma (Indonesian).
COMMA_CASES: list[dict[str, str]] = [
    {"bits": "4,5", "reserve_gib": "2,5"},
    {"params": "1,5B", "bytes_per_value": "0,5"},
    {"params": "13000000001", "bits": "4.5", "reserve_gib": "0,25"},
    {"reserve_gib": "1.500"},
    {"bits": "1,234"},
    {"params": "7.000.000.000"},
    {"tokens": "8,192"},
    {"reserve_gib": "1.234,5"},
]

# The same edges where a decimal comma is read (Indonesian): commas, and a mark that may group
# thousands (refused as ambiguous) against one that cannot.
COMMA_TEXTS: tuple[str, ...] = (
    *("4,5", "24,5", "0,125", "1234,567", "1,2340", "1_000,5", ",5", "7,", "1,5B", "1,5e9"),
    *("1,234", "1.234", "999,999", "1,000", "1.500B", "+12,500e3", "-1,125", "0,000", "01,234"),
    *("1.234,5", "1,234.5", "1.000.000", "1,000,000", "4,5,6", ",", "1,,5", "1,e1", "1,_5"),
)


# Counts of tokens: a suffix is ambiguous (32k: 32,000 or 32,768), parameters keep theirs (7B).
TOKEN_TEXTS: tuple[str, ...] = (
    *("32k", "32K", "1M", "1m", "2G", "1T", "0.5k", "0.3k", "1.5k", "1,5k", " 32 k ", "1e3k"),
    *("32768", "3.2768e4", "32_768", "1B", "7B", "32kk", "k", "-1k", "0k", "1e400k", "1e-50k"),
    *("32k\u00a0", "\u0663k", "32 000", "32,768", "32.768", "131072", "1e9", "1.000000001e9"),
)
# Queries whose tokens or window are written with a suffix, and the Llama-3-70B case of the
# issue that asked for the refusal: 80 layers, 8 KV heads of 128 at 32,768 tokens x 8.
TOKEN_CASES: list[dict[str, str]] = [
    {"tokens": "32k"},
    {"tokens": "32K", "layers": "80", "kv_heads": "8", "head_dim": "128", "sequences": "8"},
    {"tokens": "32768", "layers": "80", "kv_heads": "8", "head_dim": "128", "sequences": "8"},
    {"tokens": "1M"},
    {"tokens": "0.3k"},
    {"tokens": "1B"},
    {"tokens": "seven"},
    {"tokens": "-1k"},
    {"window": "4k", "tokens": "32768"},
    {"params": "70B", "sequences": "1k", "days": "2"},
    {"params": "1.5B", "tokens": "32k", "days": "0"},
]
# The same, where a decimal comma is read.
TOKEN_COMMA_CASES: list[dict[str, str]] = [
    {"tokens": "1,5k"},
    {"tokens": "32.768"},
    {"params": "1,5B", "tokens": "4096"},
]


def _parse_result(parse: Any, text: str, decimal_comma: bool) -> dict[str, Any]:
    try:
        value = parse(text, "x", decimal_comma=decimal_comma)
        return {"ok": True, "value": _exact(Fraction(value))}
    except InputError as error:
        if error.readings is not None:  # 32k tokens: both readings, for the page to say
            readings = [_exact(reading) for reading in error.readings]
            return {"ok": False, "reason": error.reason, "readings": readings}
        return {"ok": False, "reason": error.reason}


def parse_vectors(*, decimal_comma: bool = False) -> list[dict[str, Any]]:
    """Each text through parse_count, parse_tokens, parse_positive and parse_non_negative:
    value or reason (and an ambiguous suffix's readings); with `decimal_comma`, as a reader who
    writes 13,04 types it."""
    random = Random(20240601)  # seeded: the same vectors on every run
    alphabet = "0123456789" * 2 + "_.eE+-kMB \u0663" + (",," if decimal_comma else "")
    generated = ("".join(random.choices(alphabet, k=random.randint(1, 9))) for _ in range(400))
    texts = (*PARSE_TEXTS, *COMMA_TEXTS, *TOKEN_TEXTS, *generated)
    return [
        {
            "text": text,
            "count": _parse_result(parse_count, text, decimal_comma),
            "tokens": _parse_result(parse_tokens, text, decimal_comma),
            "positive": _parse_result(parse_positive, text, decimal_comma),
            "non_negative": _parse_result(parse_non_negative, text, decimal_comma),
        }
        for text in texts
    ]


def _decimal(random: Random, low: int, high: int, decimals: int) -> str:
    """A decimal text in [low, high) with `decimals` places."""
    whole = str(random.randrange(low, high))
    return whole if decimals == 0 else f"{whole}.{random.randrange(10**decimals):0{decimals}d}"


def _boundary_queries() -> list[dict[str, str]]:
    """Needs of exactly N bytes (N parameters at 8 bits, no reserve) around each card's edges:
    its nominal figure read as decimal GB and its declared capacity plus the tool's rounding."""
    queries = []
    for card in load_catalog():
        edges = []
        if card.nominal_memory_bytes is not None:
            edges.append(int(card.nominal_memory_bytes))
        if card.declared is not None:
            edges.append(card.declared.bound_bytes)
        elif card.nominal_binary_bytes is not None:  # "N GB" read as N GiB excludes above it
            edges.append(card.nominal_binary_bytes)
        for edge in edges:
            for need in (edge - 1, edge, edge + 1):
                queries.append({"params": str(need), "bits": "8", "reserve_gib": "0"})
    return queries


def generated_queries(count: int = 160) -> list[dict[str, str]]:
    """Seeded random queries over weights, KV cache and short list, plus every card's edges, so
    that a changed constant in the sizer's modules changes some answer."""
    random = Random(20240917)  # seeded: the same vectors on every run
    bits = ("16", "15.999", "8", "4", "4.5", "3", "2.5", "32", "1")
    queries = _boundary_queries()
    for _ in range(count):
        queries.append(
            {
                # Log-uniform from 10^8 to 10^11 parameters: needs from MiB to hundreds of GiB.
                "params": str(int(10 ** random.uniform(8, 11))),
                "bits": random.choice((*bits, _decimal(random, 1, 64, 3))),
                "reserve_gib": _decimal(random, 0, 17, random.choice((0, 1, 2, 3))),
                "layers": str(random.randrange(1, 129)),
                "kv_heads": str(random.randrange(1, 65)),
                "head_dim": str(random.choice((64, 80, 96, 128, 256))),
                "tokens": str(random.randrange(1, 262_145)),
                "bytes_per_value": random.choice(("2", "1", "0.5", "4", "1.125")),
                "sequences": str(random.randrange(1, 33)),
                "window": random.choice(("", str(random.randrange(1, 65_537)))),
                "days": str(random.choice((1, 2, 3, 3, 7))),
            }
        )
    return queries


# The review order of the cards to check, on a catalogue where it matters (the real one may hold
# no card whose package is cheaper while its capacity on paper is below the need): the cards
# whose capacity on paper holds the need first, then by cost, then by margin on paper. The
# cards in gpu_catalog.json's shape, with only the fields the sizer reads.
REVIEW_ORDER_CARDS: list[dict[str, Any]] = [
    # "20 GB" with the cheapest package: below a 19.04 GiB need as decimal GB, not excluded.
    {"id": "cheap", "nominal_gb": 20, "declared_bytes": None, "price": "1"},
    {"id": "roomy", "nominal_gb": 80, "declared_bytes": None, "price": None},
    {"id": "dear", "nominal_gb": 48, "declared_bytes": None, "price": "9"},
    {"id": "declared", "nominal_gb": 16, "declared_bytes": 24 * 2**30, "price": "5"},
    # No figure at all: no margin on paper, so it does not hold the need on paper.
    {"id": "unknown", "nominal_gb": None, "declared_bytes": None, "price": "0.5"},
]
REVIEW_ORDER_QUERIES: list[dict[str, str]] = [{}, {"params": "1e9"}, {"params": "40e9"}]


def review_order_catalog() -> dict[str, Any]:
    """`REVIEW_ORDER_CARDS` as gpu_catalog.json writes cards (the fields the sizer reads)."""
    cards = []
    for c in REVIEW_ORDER_CARDS:
        declared = c["declared_bytes"]
        cards.append(
            {
                "id": c["id"],
                "name": c["id"].upper(),
                "nominal_memory_gb": c["nominal_gb"],
                "declared_memory_bytes": declared,
                "declared_memory_source": None if declared is None else {"resolution_bytes": 2**20},
                "packages": []
                if c["price"] is None
                else [{"cards": 1, "days": 3, "price": c["price"], "currency": "USD"}],
            }
        )
    return {"cards": cards}


def review_order_vectors() -> list[dict[str, Any]]:
    """For each query, the short list's order on `review_order_catalog()`, as
    `iteragpu.gpus.shortlist` orders it for the sizer's whole need (weights, cache, reserve)."""
    from decimal import Decimal

    from iteragpu.gpus.catalog import Card, DeclaredMemory, RentalPackage

    cards = []
    for c in review_order_catalog()["cards"]:
        source = c["declared_memory_source"]
        declared = None
        if source is not None:
            declared = DeclaredMemory(
                c["declared_memory_bytes"],
                "t",
                None,
                0,
                "MiB",
                source["resolution_bytes"],
                "",
                "",
                "",
            )
        packages = tuple(
            RentalPackage(p["cards"], p["days"], Decimal(p["price"]), p["currency"], None, "t")
            for p in c["packages"]
        )
        cards.append(Card(c["id"], c["name"], c["nominal_memory_gb"], "t", packages, declared))
    found = []
    for query in REVIEW_ORDER_QUERIES:
        estimate, (kv, state), days = _read_query({**DEFAULT_QUERY, **query}, False)
        need = estimate.total_bytes + kv.kv_cache_bytes + state
        ranked = shortlist(gib(need), days, catalog=cards, need_missing=INFERENCE_MISSING)
        found.append(
            {
                "query": query,
                "candidates": [c.card.id for c in ranked],
                "holds_need_on_paper": [c.holds_need_on_paper for c in ranked],
                "status": [str(c.status) for c in ranked],
            }
        )
    return found


def vectors() -> dict[str, Any]:
    return {
        "defaults": DEFAULT_QUERY,
        "limits": {field: str(limit) for field, limit in LIMITS.items()},
        "cases": [{"query": query, "expected": expected(query)} for query in CASES],
        "generated": [{"query": q, "expected": expected(q)} for q in generated_queries()],
        "parse": parse_vectors(),
        "parse_decimal_comma": parse_vectors(decimal_comma=True),
        "cases_decimal_comma": [
            {"query": query, "expected": expected(query, decimal_comma=True)}
            for query in COMMA_CASES
        ],
        "token_cases": [
            {"query": q, "expected": expected(q), "refusal": refusal(q)} for q in TOKEN_CASES
        ],
        "token_cases_decimal_comma": [
            {
                "query": q,
                "expected": expected(q, decimal_comma=True),
                "refusal": refusal(q, decimal_comma=True),
            }
            for q in TOKEN_COMMA_CASES
        ],
        "model_configs": config_vectors(),
        # The training mode's: `iteragpu train`'s answers (sizer_training_vectors).
        "training": training_vectors(),
        # The split over several GPUs (iteragpu.parallel, vLLM's rules): sizer/split.js's vllmSplit.
        "model_splits": split_vectors(),
        "model_fits": fit_vectors(),
        # The filled load sheet (iteragpu.i18n.sheet): web/sizer/sheet.js's sheetMarkdown.
        "sheets": sheet_vectors(DEFAULT_QUERY, expected),
        # The review order on a catalogue where it differs from cost first: sizer/shortlist.js's
        # shortlist(loadCatalog(review_order_catalog), need, days).
        "review_order_catalog": review_order_catalog(),
        "review_order": review_order_vectors(),
    }


def main() -> int:
    json.dump(vectors(), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
