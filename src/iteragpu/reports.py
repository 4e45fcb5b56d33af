"""Render results as localised terminal tables or as JSON objects with unit-suffixed keys."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from iteragpu.formatting import format_number
from iteragpu.messages import MESSAGES, message
from iteragpu.table import render_table
from iteragpu.units import (
    ceil_bytes,
    decimal_places,
    exact_decimal_text,
    from_unit,
    gb,
    gib,
    to_unit,
)

if TYPE_CHECKING:
    from iteragpu.catalog import Card
    from iteragpu.examples import Figure, WorkedExample
    from iteragpu.kv_cache import KVCacheSpec
    from iteragpu.quantity import Conversion
    from iteragpu.shortlist import Candidate, Requirement
    from iteragpu.weights import WeightsEstimate

DISPLAY_DECIMALS = 2


def _byte_fields(name: str, byte_count: Fraction, *units: str) -> dict[str, Any]:
    """`name_bytes` (whole bytes, rounded up when the exact count is not whole),
    `name_bytes_exact` (the exact count) and `name_<unit>` per unit, as exact decimal text."""
    fields: dict[str, Any] = {
        f"{name}_bytes": ceil_bytes(byte_count),
        f"{name}_bytes_exact": exact_decimal_text(byte_count),
    }
    for unit in units:
        fields[f"{name}_{unit.lower()}"] = exact_decimal_text(to_unit(byte_count, unit))
    return fields


def _exact_cell(value: Fraction, lang: str) -> str:
    """A value in full, with every decimal it takes (4.5 bits, 0.125 B); these always end."""
    places = decimal_places(value)
    return format_number(value, DISPLAY_DECIMALS if places is None else places, lang)


def weights_json(e: WeightsEstimate) -> dict[str, Any]:
    return {
        "parameters": e.parameters,
        "bits": exact_decimal_text(e.bits),
        **_byte_fields("weights", e.weights_bytes, "GB", "GiB"),
        "reserve_gib": exact_decimal_text(e.reserve_gib),
        **_byte_fields("reserve", e.reserve_bytes),
        **_byte_fields("total", e.total_bytes, "GB", "GiB"),
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
                _exact_cell(byte_count, lang),
                format_number(gb(byte_count), DISPLAY_DECIMALS, lang),
                format_number(gib(byte_count), DISPLAY_DECIMALS, lang),
            ]
        )
    title = message(
        "weights_title",
        lang,
        parameters=format_number(e.parameters, 0, lang),
        bits=_exact_cell(e.bits, lang),
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
        "bytes_per_value": exact_decimal_text(spec.bytes_per_value),
        "sequences": spec.sequences,
        **_byte_fields("kv_cache", spec.kv_cache_bytes, "GB", "GiB"),
    }


def kv_text(spec: KVCacheSpec, lang: str) -> str:
    title = message(
        "kv_title",
        lang,
        layers=format_number(spec.layers, 0, lang),
        kv_heads=format_number(spec.kv_heads, 0, lang),
        head_dim=format_number(spec.head_dim, 0, lang),
        tokens_kept=format_number(spec.tokens_kept, 0, lang),
        bytes_per_value=_exact_cell(spec.bytes_per_value, lang),
        sequences=format_number(spec.sequences, 0, lang),
    )
    row = [
        message("kv_cache", lang),
        _exact_cell(spec.kv_cache_bytes, lang),
        format_number(gb(spec.kv_cache_bytes), DISPLAY_DECIMALS, lang),
        format_number(spec.kv_cache_gib, DISPLAY_DECIMALS, lang),
    ]
    table = render_table(
        [message("figure", lang), message("bytes_header", lang), "GB", "GiB"], [row]
    )
    return "\n".join([title, "", table, "", message("kv_not_counted", lang)])


def convert_json(c: Conversion) -> dict[str, Any]:
    return {
        "bytes": ceil_bytes(c.byte_count),
        "bytes_exact": exact_decimal_text(c.byte_count),
        "value": exact_decimal_text(c.value),
        "unit": c.unit,
    }


def convert_text(quantity: str, c: Conversion, decimals: int, lang: str) -> str:
    row = [quantity, _exact_cell(c.byte_count, lang), format_number(c.value, decimals, lang)]
    headers = [
        message("quantity", lang),
        message("bytes_header", lang),
        message("value_in", lang, unit=c.unit),
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
        "" if exact_bytes is None else _exact_cell(exact_bytes, lang),
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
        "bytes": None if exact_bytes is None else ceil_bytes(exact_bytes),
        "bytes_exact": None if exact_bytes is None else exact_decimal_text(exact_bytes),
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


# The rank cell of a candidate that is not fit on every requirement, and its margin cell.
NOT_RANKED = "-"


def _money(value: Decimal | None, lang: str) -> str:
    return "" if value is None else format_number(Fraction(value), 2, lang)


def _declared_source_json(card: Card) -> dict[str, Any] | None:
    d = card.declared
    if d is None:
        return None
    return {
        "tool": d.tool,
        "tool_version": d.tool_version,
        "reported": d.reported,
        "reported_unit": d.reported_unit,
        "resolution_bytes": d.resolution_bytes,
        "date": d.date,
        "url": d.url,
        "note": d.note,
    }


def _gib_text(byte_count: int | None) -> str | None:
    return None if byte_count is None else exact_decimal_text(gib(byte_count))


def _candidate_json(c: Candidate) -> dict[str, Any]:
    nominal = c.card.nominal_memory_bytes
    declared = c.card.declared_memory_bytes
    return {
        "rank": c.rank,
        "card_id": c.card.id,
        "name": c.card.name,
        "status": str(c.status),
        # The catalogue's figure read as decimal GB: a convention, not the card's memory.
        "nominal_memory_gb": None if nominal is None else exact_decimal_text(gb(nominal)),
        "nominal_memory_bytes": None if nominal is None else int(nominal),
        "nominal_memory_source": c.card.nominal_memory_source,
        "declared_memory_bytes": declared,
        "declared_memory_gib": _gib_text(declared),
        "declared_memory_source": _declared_source_json(c.card),
        "effective_margin_bytes": c.effective_margin_bytes,
        "effective_margin_gib": _gib_text(c.effective_margin_bytes),
        "cost": None if c.cost is None else str(c.cost),
        "currency": c.currency,
        "package_days": None if c.package is None else c.package.days,
        "package_cards": None if c.package is None else c.package.cards,
        "price_date": None if c.package is None else c.package.price_date,
        "price_source": None if c.package is None else c.package.source,
        "requirements": [
            {"name": r.name, "status": str(r.status), "reason": r.reason, **r.detail}
            for r in c.requirements
        ],
    }


def shortlist_json(
    candidates: Sequence[Candidate], need_gib: Fraction, days: int, cards: int
) -> dict[str, Any]:
    """`rank` is an integer only for candidates whose every requirement is fit, else null."""
    return {
        **_byte_fields("need", from_unit(need_gib, "GiB"), "GiB"),
        "days": days,
        "cards": cards,
        "candidates": [_candidate_json(c) for c in candidates],
    }


def _reason_values(r: Requirement, need_gib: Fraction, lang: str) -> dict[str, str]:
    """The values a reason text names: each `*_bytes` detail also in GiB and GB."""
    values = {"need_gib": format_number(need_gib, 2, lang)}
    for key, value in r.detail.items():
        if key.endswith("_bytes") and isinstance(value, int):
            stem = key.removesuffix("_bytes")
            in_gb = gb(value)
            values[f"{stem}_gib"] = format_number(gib(value), 2, lang)
            values[f"{stem}_gb"] = format_number(in_gb, 0 if in_gb.denominator == 1 else 2, lang)
        else:
            values[key] = str(value)
    return values


def _declared_note(card: Card, lang: str) -> str:
    d = card.declared
    if d is None:
        return message("declared_unknown", lang, card=card.name)
    return message(
        "declared_source",
        lang,
        card=card.name,
        tool=d.tool,
        tool_version=d.tool_version or "",
        date=d.date,
        url=d.url,
    )


def shortlist_text(
    candidates: Sequence[Candidate], need_gib: Fraction, days: int, cards: int, lang: str
) -> str:
    names = [r.name for r in candidates[0].requirements] if candidates else []
    currencies = sorted({c.currency for c in candidates if c.currency}) or ["-"]
    unknown = message("unknown", lang)
    headers = [
        message("rank", lang),
        message("card", lang),
        message("nominal_gb", lang),
        message("declared_gib", lang),
        message("effective_margin_gib", lang),
        message("cost", lang, currency="/".join(currencies)),
        *(_requirement_label(name, lang) for name in names),
        message("overall", lang),
    ]
    rows = []
    notes = []
    for c in candidates:
        declared = c.card.declared_memory_bytes
        margin = c.effective_margin_bytes
        rows.append(
            [
                NOT_RANKED if c.rank is None else str(c.rank),
                c.card.name,
                unknown if c.card.nominal_memory_gb is None else str(c.card.nominal_memory_gb),
                unknown if declared is None else format_number(gib(declared), 2, lang),
                NOT_RANKED if margin is None else format_number(gib(margin), 2, lang),
                _money(c.cost, lang),
                *(message(f"status_{r.status}", lang) for r in c.requirements),
                message(f"status_{c.status}", lang),
            ]
        )
        for r in c.requirements:
            notes.append(
                f"{c.card.name} · {_requirement_label(r.name, lang)}: "
                + message(f"reason_{r.reason}", lang, **_reason_values(r, need_gib, lang))
            )
    title = message(
        "shortlist_title",
        lang,
        need_gib=format_number(need_gib, 2, lang),
        cards=format_number(cards, 0, lang),
        days=format_number(days, 0, lang),
    )
    table = render_table(headers, rows, left_columns=2)
    sources = [_declared_note(c.card, lang) for c in candidates]
    conventions = [message(key, lang) for key in ("rank_rule", "nominal_convention")]
    return "\n".join(
        [
            title,
            "",
            table,
            "",
            *notes,
            "",
            *sources,
            "",
            *conventions,
            message("price_not_speed", lang),
        ]
    )


def _requirement_label(name: str, lang: str) -> str:
    key = f"requirement_{name}"
    return message(key, lang) if key in MESSAGES else name
