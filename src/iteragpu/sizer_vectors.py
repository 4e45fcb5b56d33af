"""Test vectors for the browser sizer: the Python core's answers that the JavaScript must match.

    python -m iteragpu.sizer_vectors > vectors.json

Each case is a sizer URL query and, per language, the exact texts the page must show.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from typing import Any

from iteragpu.formatting import LANGS, format_number
from iteragpu.kv_cache import KVCacheSpec
from iteragpu.parsing import InputError, parse_count, parse_non_negative, parse_positive
from iteragpu.shortlist import shortlist
from iteragpu.weights import estimate_weights

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
    "days": "3",
}
TASKS = ("inference", "training", "adaptation")

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
]


def _bytes_text(value: Fraction, lang: str) -> str:
    return format_number(value, 0 if value.denominator == 1 else 3, lang)


def expected(query: dict[str, str]) -> dict[str, Any]:
    """What the sizer shows for `query` (merged over the defaults), or which input is invalid."""
    q = {**DEFAULT_QUERY, **query}
    try:
        if q["task"] not in TASKS:
            raise InputError(f"task must be one of {', '.join(TASKS)}")
        estimate = estimate_weights(
            parse_count(q["params"], "params"),
            parse_positive(q["bits"], "bits"),
            parse_non_negative(q["reserve_gib"], "reserve_gib"),
        )
        kv = KVCacheSpec(
            layers=parse_count(q["layers"], "layers"),
            kv_heads=parse_count(q["kv_heads"], "kv_heads"),
            head_dim=parse_count(q["head_dim"], "head_dim"),
            tokens=parse_count(q["tokens"], "tokens"),
            bytes_per_value=parse_positive(q["bytes_per_value"], "bytes_per_value"),
            sequences=parse_count(q["sequences"], "sequences"),
            window=parse_count(q["window"], "window") if q["window"] else None,
        )
        days = parse_count(q["days"], "days")
    except (InputError, ValueError) as error:
        return {"valid": False, "error": str(error)}
    candidates = shortlist(estimate.total_gib, days)
    return {
        "valid": True,
        "weights_bytes": _exact(estimate.weights_bytes),
        "total_bytes": _exact(estimate.total_bytes),
        "kv_cache_bytes": _exact(kv.kv_cache_bytes),
        "quantization_not_counted": estimate.quantization_not_counted,
        "text": {
            lang: {
                "weights-gib": format_number(estimate.weights_gib, 2, lang),
                "range-gib": format_number(estimate.total_gib, 2, lang),
                "kv-bytes": _bytes_text(kv.kv_cache_bytes, lang),
                "kv-gib": format_number(kv.kv_cache_gib, 2, lang),
            }
            for lang in LANGS
        },
        "candidates": [
            {
                "card_id": c.card.id,
                "status": str(c.status),
                "requirements": {r.name: str(r.status) for r in c.requirements},
                "nominal_margin_text": {
                    lang: format_number(c.nominal_margin_gib, 2, lang)
                    for lang in LANGS
                    if c.nominal_margin_gib is not None
                },
            }
            for c in candidates
        ],
    }


def _exact(value: Fraction) -> str:
    """Exact value as `numerator/denominator` (or an integer) for BigInt comparison."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def vectors() -> dict[str, Any]:
    return {
        "defaults": DEFAULT_QUERY,
        "cases": [{"query": query, "expected": expected(query)} for query in CASES],
    }


def main() -> int:
    json.dump(vectors(), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
