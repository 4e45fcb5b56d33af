"""Render results as localised terminal tables or as JSON objects with unit-suffixed keys."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from iteragpu.formatting import format_number
from iteragpu.kv_cache import KVCacheSpec
from iteragpu.messages import MESSAGES, message
from iteragpu.table import render_table
from iteragpu.units import exact_decimal_text, from_unit, gb, gib
from iteragpu.weights import WeightsEstimate

if TYPE_CHECKING:
    from iteragpu.examples import Figure, WorkedExample
    from iteragpu.shortlist import Candidate

DISPLAY_DECIMALS = 2


def _whole_or_exact(value: Fraction) -> int | str:
    return int(value) if value.denominator == 1 else exact_decimal_text(value)


def _bytes_cell(value: Fraction, lang: str) -> str:
    decimals = 0 if value.denominator == 1 else 3
    return format_number(value, decimals, lang)


def weights_json(e: WeightsEstimate) -> dict[str, Any]:
    return {
        "parameters": e.parameters,
        "bits": _whole_or_exact(e.bits),
        "weights_bytes": _whole_or_exact(e.weights_bytes),
        "weights_gb": float(e.weights_gb),
        "weights_gib": float(e.weights_gib),
        "reserve_bytes": _whole_or_exact(e.reserve_bytes),
        "reserve_gib": float(e.reserve_gib),
        "total_bytes": _whole_or_exact(e.total_bytes),
        "total_gib": float(e.total_gib),
        "quantization_not_counted": e.quantization_not_counted,
    }


def weights_text(e: WeightsEstimate, lang: str) -> str:
    rows = []
    for label, byte_count in (
        ("weights_only", e.weights_bytes),
        ("reserve", e.reserve_bytes),
        ("rough_range", e.total_bytes),
    ):
        rows.append(
            [
                message(label, lang),
                _bytes_cell(byte_count, lang),
                format_number(gb(byte_count), DISPLAY_DECIMALS, lang),
                format_number(gib(byte_count), DISPLAY_DECIMALS, lang),
            ]
        )
    title = message(
        "weights_title",
        lang,
        parameters=format_number(e.parameters, 0, lang),
        bits=format_number(e.bits, 0 if e.bits.denominator == 1 else 2, lang),
    )
    notes = [message("weights_not_counted", lang), message("reserve_not_proof", lang)]
    if e.quantization_not_counted:
        notes.insert(0, message("quantization_not_counted", lang))
    table = render_table(
        [message("figure", lang), message("bytes_header", lang), "GB", "GiB"], rows
    )
    return "\n".join([title, "", table, "", *notes])


def kv_json(spec: KVCacheSpec) -> dict[str, Any]:
    return {
        "layers": spec.layers,
        "kv_heads": spec.kv_heads,
        "head_dim": spec.head_dim,
        "tokens": spec.tokens,
        "tokens_kept": spec.tokens_kept,
        "window": spec.window,
        "static_max_tokens": spec.static_max_tokens,
        "bytes_per_value": _whole_or_exact(spec.bytes_per_value),
        "sequences": spec.sequences,
        "kv_cache_bytes": _whole_or_exact(spec.kv_cache_bytes),
        "kv_cache_gib": float(spec.kv_cache_gib),
    }


def kv_text(spec: KVCacheSpec, lang: str) -> str:
    bpv = spec.bytes_per_value
    title = message(
        "kv_title",
        lang,
        layers=format_number(spec.layers, 0, lang),
        kv_heads=format_number(spec.kv_heads, 0, lang),
        head_dim=format_number(spec.head_dim, 0, lang),
        tokens_kept=format_number(spec.tokens_kept, 0, lang),
        bytes_per_value=format_number(bpv, 0 if bpv.denominator == 1 else 3, lang),
        sequences=format_number(spec.sequences, 0, lang),
    )
    row = [
        message("kv_cache", lang),
        _bytes_cell(spec.kv_cache_bytes, lang),
        format_number(gb(spec.kv_cache_bytes), DISPLAY_DECIMALS, lang),
        format_number(spec.kv_cache_gib, DISPLAY_DECIMALS, lang),
    ]
    table = render_table(
        [message("figure", lang), message("bytes_header", lang), "GB", "GiB"], [row]
    )
    return "\n".join([title, "", table, "", message("kv_not_counted", lang)])


def convert_json(byte_count: Fraction, per_unit: Fraction, unit: str) -> dict[str, Any]:
    return {
        "bytes": _whole_or_exact(byte_count),
        "value": exact_decimal_text(byte_count / per_unit),
        "unit": unit,
    }


def convert_text(
    quantity: str, byte_count: Fraction, per_unit: Fraction, unit: str, decimals: int, lang: str
) -> str:
    row = [
        quantity,
        _bytes_cell(byte_count, lang),
        format_number(byte_count / per_unit, decimals, lang),
    ]
    headers = [
        message("quantity", lang),
        message("bytes_header", lang),
        message("value_in", lang, unit=unit),
    ]
    return render_table(headers, [row])


def examples_list_json() -> dict[str, Any]:
    from iteragpu.examples import registry

    return {
        "examples": [{"id": e.id, "title": e.title, "where": e.where} for e in registry().values()]
    }


def examples_list_text(lang: str) -> str:
    from iteragpu.examples import registry

    rows = [[e.id, e.title[lang], e.where] for e in registry().values()]
    headers = [
        message("examples_id", lang),
        message("examples_title", lang),
        message("examples_where", lang),
    ]
    return render_table(headers, rows, left_columns=3)


def _figure_row(f: Figure, lang: str) -> list[str]:
    exact_bytes = f.exact_bytes
    return [
        f"{f.key} ({message('role_' + f.role, lang)})",
        "" if exact_bytes is None else _bytes_cell(exact_bytes, lang),
        exact_decimal_text(f.value),
        format_number(f.value, f.decimals, lang),
        f.unit,
    ]


def figure_json(f: Figure, lang: str) -> dict[str, Any]:
    exact_bytes = f.exact_bytes
    return {
        "key": f.key,
        "role": f.role,
        "unit": f.unit,
        "exact": exact_decimal_text(f.value),
        "stated": format_number(f.value, f.decimals, lang),
        "bytes": None if exact_bytes is None else _whole_or_exact(exact_bytes),
    }


def example_json(e: WorkedExample, lang: str) -> dict[str, Any]:
    return {
        "id": e.id,
        "title": e.title[lang],
        "where": e.where,
        "figures": [figure_json(f, lang) for f in e.figures],
    }


def example_text(e: WorkedExample, lang: str) -> str:
    headers = [
        message("figure", lang),
        message("bytes_header", lang),
        message("exact_header", lang),
        message("stated_header", lang),
        message("unit_header", lang),
    ]
    table = render_table(headers, [_figure_row(f, lang) for f in e.figures])
    return f"{e.id}: {e.title[lang]}  [{e.where}]\n{table}"


def _money(value: Decimal | None, lang: str) -> str:
    return "" if value is None else format_number(Fraction(value), 2, lang)


def shortlist_json(
    candidates: Sequence[Candidate], need_gib: Fraction, days: int, cards: int
) -> dict[str, Any]:
    need_bytes = from_unit(need_gib, "GiB")
    return {
        "need_gib": exact_decimal_text(need_gib),
        "need_bytes": math.ceil(need_bytes),
        "days": days,
        "cards": cards,
        "candidates": [
            {
                "rank": rank,
                "card_id": c.card.id,
                "name": c.card.name,
                "nominal_memory_gb": c.card.nominal_memory_gb,
                "nominal_memory_bytes": None
                if c.card.nominal_memory_bytes is None
                else int(c.card.nominal_memory_bytes),
                "nominal_memory_gib": None if c.nominal_gib is None else float(c.nominal_gib),
                "nominal_margin_gib": None
                if c.nominal_margin_gib is None
                else float(c.nominal_margin_gib),
                "cost": None if c.cost is None else str(c.cost),
                "currency": c.currency,
                "package_days": None if c.package is None else c.package.days,
                "package_cards": None if c.package is None else c.package.cards,
                "price_date": None if c.package is None else c.package.price_date,
                "price_source": None if c.package is None else c.package.source,
                "nominal_memory_source": c.card.nominal_memory_source,
                "status": str(c.status),
                "requirements": [
                    {"name": r.name, "status": str(r.status), "reason": r.reason, **r.detail}
                    for r in c.requirements
                ],
            }
            for rank, c in enumerate(candidates, 1)
        ],
    }


def shortlist_text(
    candidates: Sequence[Candidate], need_gib: Fraction, days: int, cards: int, lang: str
) -> str:
    names = [r.name for r in candidates[0].requirements] if candidates else []
    currencies = sorted({c.currency for c in candidates if c.currency}) or ["-"]
    headers = [
        message("rank", lang),
        message("card", lang),
        message("nominal_gb", lang),
        message("nominal_gib", lang),
        message("margin_gib", lang),
        message("cost", lang, currency="/".join(currencies)),
        *(_requirement_label(name, lang) for name in names),
        message("overall", lang),
    ]
    rows = []
    notes = []
    for rank, c in enumerate(candidates, 1):
        rows.append(
            [
                str(rank),
                c.card.name,
                "" if c.card.nominal_memory_gb is None else str(c.card.nominal_memory_gb),
                "" if c.nominal_gib is None else format_number(c.nominal_gib, 2, lang),
                ""
                if c.nominal_margin_gib is None
                else format_number(c.nominal_margin_gib, 2, lang),
                _money(c.cost, lang),
                *(message(f"status_{r.status}", lang) for r in c.requirements),
                message(f"status_{c.status}", lang),
            ]
        )
        for r in c.requirements:
            notes.append(
                f"{c.card.name} · {_requirement_label(r.name, lang)}: "
                + message(f"reason_{r.reason}", lang, **r.detail)
            )
    title = message(
        "shortlist_title",
        lang,
        need_gib=format_number(need_gib, 2, lang),
        cards=format_number(cards, 0, lang),
        days=format_number(days, 0, lang),
    )
    table = render_table(headers, rows, left_columns=2)
    return "\n".join([title, "", table, "", *notes, "", message("price_not_speed", lang)])


def _requirement_label(name: str, lang: str) -> str:
    key = f"requirement_{name}"
    return message(key, lang) if key in MESSAGES else name
