"""The CLI's text views: results as localised terminal tables, with notes that say what each
figure does not count. The JSON objects of `--json` are in `payloads`."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from iteragpu.cli.table import render_table
from iteragpu.core.numbers import decimal_places, exact_decimal_text
from iteragpu.core.units import gb, gib
from iteragpu.i18n.messages import MESSAGES, message
from iteragpu.i18n.numbers import format_number

if TYPE_CHECKING:
    from iteragpu.core.kv_cache import KVCacheSpec
    from iteragpu.core.quantity import Conversion
    from iteragpu.core.weights import WeightsEstimate
    from iteragpu.examples import Figure, WorkedExample
    from iteragpu.gpus.catalog import Card
    from iteragpu.gpus.shortlist import Candidate, Requirement


DISPLAY_DECIMALS = 2


def _exact_cell(value: Fraction, lang: str) -> str:
    """A value in full, with every decimal it takes (4.5 bits, 0.125 B); these always end."""
    places = decimal_places(value)
    return format_number(value, DISPLAY_DECIMALS if places is None else places, lang)


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


def convert_text(quantity: str, c: Conversion, decimals: int, lang: str) -> str:
    row = [quantity, _exact_cell(c.byte_count, lang), format_number(c.value, decimals, lang)]
    headers = [
        message("quantity", lang),
        message("bytes_header", lang),
        message("value_in", lang, unit=c.unit),
    ]
    return render_table(headers, [row])


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
