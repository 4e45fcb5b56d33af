"""The CLI's text views: results as localised terminal tables, with notes that say what each
figure does not count. The JSON objects of `--json` are in `payloads`."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from iteragpu.cli.table import fold_text, render_table
from iteragpu.core.numbers import decimal_places
from iteragpu.core.units import gb, gib
from iteragpu.i18n.messages import TEXTS, message
from iteragpu.i18n.numbers import format_number

if TYPE_CHECKING:
    from iteragpu.cli.train_report import ItemComparison
    from iteragpu.core.kv_cache import KVCacheSpec
    from iteragpu.core.quantity import Conversion
    from iteragpu.core.weights import WeightsEstimate
    from iteragpu.examples import Figure, WorkedExample
    from iteragpu.gpus.catalog import Card
    from iteragpu.gpus.comparison import Comparison
    from iteragpu.gpus.evidence import LabResult, PhaseRecord
    from iteragpu.gpus.need import Need
    from iteragpu.gpus.shortlist import Candidate, Requirement
    from iteragpu.models.model import ModelSizing, PartialSizing, Weights
    from iteragpu.parallel.records import RankPlan, SplitPlan
    from iteragpu.training.compare import Comparison as TrainComparison
    from iteragpu.training.plan import TrainingPlan
    from iteragpu.training.records import TrainRequest


DISPLAY_DECIMALS = 2


# A value whose decimals never end is shown to this many places (the JSON's `exact_decimal_text`
# rounds it the same way).
EXACT_DECIMALS = 20


def _exact_cell(value: Fraction, lang: str, *, endless_decimals: int = DISPLAY_DECIMALS) -> str:
    """A value in full, with every decimal it takes (4.5 bits, 0.125 B), in the reader's
    format; a value whose decimals never end, to `endless_decimals` places."""
    places = decimal_places(value)
    return format_number(value, endless_decimals if places is None else places, lang)


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


# Figures of one quantity in several units share a label (the unit column tells them apart).
_SHARED_FIGURE_LABELS = {
    **dict.fromkeys(("weights_bytes", "weights_gb", "weights_gib"), "figure_weights"),
    **dict.fromkeys(("kv_cache_bytes", "kv_cache_gib"), "figure_kv_cache"),
    **dict.fromkeys(("nominal_gb", "nominal_bytes", "nominal_gib"), "figure_nominal"),
    **dict.fromkeys(("peak_kv_cache_bytes", "peak_kv_cache_gib"), "figure_peak_kv_cache"),
    **dict.fromkeys(
        ("decoding_kv_cache_bytes", "decoding_kv_cache_gib"), "figure_decoding_kv_cache"
    ),
    **dict.fromkeys(("model_total_bytes", "model_total_gib"), "figure_model_total"),
    **dict.fromkeys(("uniform_weights_bytes", "uniform_weights_gib"), "figure_uniform_weights"),
    **dict.fromkeys(("unquantized_bytes", "unquantized_gib"), "figure_unquantized"),
    **dict.fromkeys(("model_states_bytes", "model_states_gib"), "figure_model_states"),
}
_INSTANT_FIGURE = re.compile(r"instant_([a-z])_(allocated|reserved|difference)_gib")
# A split's figures (iteragpu.examples: split-*): per TP size, and layers per pipeline stage.
_SPLIT_FIGURE = re.compile(r"tp([0-9]+)(?:_(weights|kv_cache|total|replicated|above_even)\w*)?")
_STAGE_FIGURE = re.compile(r"(vllm|transformers)_stage_([0-9]+)")
_NUMBERED_FIGURE = re.compile(r"(reading|package|offer)_([0-9]+)_(\w+)")
_CARD_FIGURE = re.compile(r"(\w+?)_(nominal_gb|price_usd)")
_CARD_COST = re.compile(r"(\w+?)_series_cost_usd")
# What fits on each catalogue card (iteragpu.examples: fit-load-spec-cards).
_CARD_FIT = re.compile(r"(\w+?)_(declared_gib|sequences_at_most)")


def figure_label(f: Figure, lang: str) -> str:
    """A figure's name in the reader's words (its key stays the identifier of `--json` and of
    the pages' ledgers). A key without a label is an error, not a fallback to the key."""
    key = f.key
    if key in _SHARED_FIGURE_LABELS:
        return message(_SHARED_FIGURE_LABELS[key], lang)
    if f"figure_{key}" in TEXTS:
        return message(f"figure_{key}", lang)
    if match := _SPLIT_FIGURE.fullmatch(key):
        tp, kind = match.groups()
        return message(f"figure_split_{kind or 'tp'}", lang, tp=tp)
    if match := _STAGE_FIGURE.fullmatch(key):
        runtime = {"vllm": "vLLM", "transformers": "Transformers"}[match[1]]
        return message("figure_split_stage_layers", lang, runtime=runtime, stage=match[2])
    if match := _INSTANT_FIGURE.fullmatch(key):
        return message(f"figure_instant_{match[2]}", lang, instant=match[1].upper())
    if match := _NUMBERED_FIGURE.fullmatch(key):
        kind, number, rest = match.groups()
        if kind in ("package", "offer"):
            return message(f"figure_{kind}_{rest}", lang, number=number)
        # A reading as the tool reported it (the input), then in bytes and GiB (results).
        label = "figure_reading_reported" if f.role == "input" else "figure_reading"
        return message(label, lang, number=number)
    if key.startswith("declared_"):
        label = "figure_declared_reported" if f.role == "input" else "figure_declared"
        return message(label, lang)
    if match := _CARD_COST.fullmatch(key):
        from iteragpu.gpus.catalog import card

        return message("figure_card_series_cost", lang, card=card(match[1].replace("_", "-")).name)
    if match := _CARD_FIT.fullmatch(key):
        from iteragpu.gpus.catalog import card

        name = card(match[1].replace("_", "-")).name
        fits = {"declared_gib": "figure_card_declared"}
        label = fits.get(match[2], "figure_card_sequences_at_most")
        return message(label, lang, card=name)
    if match := _CARD_FIGURE.fullmatch(key):
        from iteragpu.gpus.catalog import card

        name = card(match[1].replace("_", "-")).name
        label = "figure_card_nominal" if match[2] == "nominal_gb" else "figure_card_price"
        return message(label, lang, card=name)
    raise KeyError(f"figure {key!r} has no label in the catalogue")


def _figure_row(f: Figure, lang: str) -> list[str]:
    exact_bytes = f.exact_bytes
    return [
        f"{figure_label(f, lang)} ({message('role_' + f.role, lang)})",
        "" if exact_bytes is None else _exact_cell(exact_bytes, lang),
        _exact_cell(f.value, lang, endless_decimals=EXACT_DECIMALS),
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
    # No package, no price: shown as unknown, never as an empty or zero cost.
    return message("unknown", lang) if value is None else format_number(Fraction(value), 2, lang)


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


def _need_parts_text(need: Need, lang: str) -> str:
    """The computed parts of a need, in GiB, joined with +: those that hold bytes (the weights
    always)."""
    terms = []
    for p in need.parts:
        if p.byte_count == 0 and p.part != "weights":
            continue
        if p.layer_kind is None:
            label = message(f"need_part_{p.part}", lang)
        else:
            kind = message(f"layer_kind_{p.layer_kind}", lang)
            label = message(f"need_part_{p.part}_kind", lang, kind=kind)
        terms.append(f"{label} {format_number(gib(p.byte_count), DISPLAY_DECIMALS, lang)} GiB")
    return message("need_parts", lang, parts=" + ".join(terms))


def _need_missing_text(need: Need, lang: str) -> str:
    return ", ".join(message(f"need_missing_{code}", lang) for code in need.missing)


def _need_lines(need: Need, lang: str) -> list[str]:
    """What the need is made of (unless the reader stated it whole) and, when parts are still
    to measure, that it is a lower bound."""
    lines = [] if need.stated else [_need_parts_text(need, lang)]
    if not need.complete:
        lines.append(message("need_incomplete", lang, missing=_need_missing_text(need, lang)))
    return lines


def shortlist_text(
    candidates: Sequence[Candidate], need: Need, days: int, cards: int, lang: str
) -> str:
    need_gib = need.gib
    currencies = sorted({c.currency for c in candidates if c.currency}) or ["-"]
    unknown = message("unknown", lang)
    headers = [
        message("rank", lang),
        message("card", lang),
        message("nominal_gb", lang),
        message("declared_gib", lang),
        message("effective_margin_gib", lang),
        message("paper_margin_gib", lang),
        message("cost", lang, currency="/".join(currencies)),
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
                _paper_margin_cell(c, lang),
                _money(c.cost, lang),
                message(f"status_{c.status}", lang),
            ]
        )
        for r in c.requirements:
            # Each requirement's status is said here, with its reason: the table holds the
            # overall status only, so that it fits a narrow column.
            status = message(f"status_{r.status}", lang)
            note = f"{c.card.name} · {_requirement_label(r.name, lang)} ({status}): " + message(
                f"reason_{r.reason}", lang, **_reason_values(r, need_gib, lang)
            )
            if r.name == "memory" and not need.complete:
                missing = _need_missing_text(need, lang)
                note += " " + message("need_lower_bound_verdict", lang, missing=missing)
            notes.append(note)
    title = message(
        "shortlist_title",
        lang,
        need_gib=format_number(need_gib, 2, lang),
        cards=format_number(cards, 0, lang),
        days=format_number(days, 0, lang),
    )
    table = render_table(headers, rows, left_columns=2)
    head = [title, *(fold_text(n) for n in _need_lines(need, lang))]
    sources = [_declared_note(c.card, lang) for c in candidates]
    conventions = [
        message(key, lang) for key in ("rank_rule", "paper_margin_rule", "nominal_convention")
    ]
    return "\n".join(
        [
            *head,
            "",
            table,
            "",
            *(fold_text(n) for n in notes),
            "",
            *(fold_text(n) for n in sources),
            "",
            *(fold_text(n) for n in (*conventions, message("price_not_speed", lang))),
        ]
    )


def _paper_margin_cell(c: Candidate, lang: str) -> str:
    """The margin on paper in GiB and, in brackets, the capacity it is taken from."""
    if c.paper_margin_bytes is None or c.paper_basis is None:
        return message("unknown", lang)
    basis = message(f"basis_{c.paper_basis}", lang)
    # A need still incomplete is a lower bound: the margin is at most this figure.
    at_most = "" if c.need_complete else "≤ "
    return f"{at_most}{format_number(gib(c.paper_margin_bytes), 2, lang)} ({basis})"


def _requirement_label(name: str, lang: str, header: bool = False) -> str:
    """A requirement's name: a column header, or the word inside a note (`RTX 4090 · memory`).
    A requirement the reader named (`--require context`) keeps the reader's word."""
    key = f"requirement_header_{name}" if header else f"requirement_{name}"
    return message(key, lang) if key in TEXTS else name


# ---------------------------------------------------------------------------------------------
# iteragpu model
# ---------------------------------------------------------------------------------------------


def _byte_cells(byte_count: Fraction, lang: str) -> list[str]:
    return [
        _exact_cell(byte_count, lang),
        format_number(gb(byte_count), DISPLAY_DECIMALS, lang),
        format_number(gib(byte_count), DISPLAY_DECIMALS, lang),
    ]


def _weights_label(w: Weights, lang: str) -> str:
    if w.bits is None:
        return message("model_weights_files", lang, source=w.source)
    return message("model_weights_config", lang, bits=_exact_cell(w.bits, lang))


def _model_rows(s: ModelSizing, lang: str) -> list[list[str]]:
    blank = ""
    rows = [
        [
            _weights_label(s.weights, lang),
            blank,
            blank,
            blank,
            *_byte_cells(s.weights.byte_count, lang),
        ]
    ]
    inventory = s.weights.inventory
    quantized = None if inventory is None else inventory.layout
    for role in quantized.roles if quantized is not None else ():
        # A quantized checkpoint: its bytes by role (packed weights, scales, zeros...).
        label = message(
            "model_weights_role",
            lang,
            role=message(f"weights_role_{role.role}", lang),
            dtype=role.dtype,
            tensors=format_number(role.tensors, 0, lang),
        )
        rows.append([label, blank, blank, blank, *_byte_cells(Fraction(role.bytes), lang)])
    for t in inventory.groups if inventory is not None and quantized is None else ():
        label = message(
            "model_tensors",
            lang,
            format=message(f"format_{t.format}", lang),
            dtype=t.dtype,
            tensors=format_number(t.tensors, 0, lang),
        )
        rows.append([label, blank, blank, blank, *_byte_cells(Fraction(t.bytes), lang)])
    for g in s.kv.groups:
        layout = g.layout
        if layout.layout == "none" and layout.kind != "dummy":
            continue  # a layer that keeps a state and no KV: its state's row below
        kind = message(f"layer_kind_{layout.kind}", lang)
        label = message("model_kv_layers", lang, kind=kind)
        if layout.layout != "per_head":
            label = f"{label} ({layout.layout})"
        window = "-" if layout.window is None else format_number(layout.window, 0, lang)
        rows.append(
            [
                label,
                format_number(g.count, 0, lang),
                window,
                format_number(g.held.peak, 0, lang),
                *_byte_cells(g.kv_cache_bytes, lang),
            ]
        )
    for state in s.state.groups:
        kind = message(f"layer_kind_{state.kind}", lang)
        label = message("model_state_layers", lang, kind=kind)
        count = format_number(state.count, 0, lang)
        rows.append([label, count, "-", "-", *_byte_cells(state.state_bytes, lang)])
    rows.append(
        [message("reserve", lang), blank, blank, blank, *_byte_cells(s.reserve_bytes, lang)]
    )
    rows.append(
        [message("model_total", lang), blank, blank, blank, *_byte_cells(s.total_bytes, lang)]
    )
    return rows


def _caveat_values(s: ModelSizing, lang: str) -> dict[str, str]:
    """The figures a caveat may name, in the reader's format."""
    kv = s.kv
    alternative = s.mla_alternative
    return {
        "decoding_gib": format_number(gib(kv.kv_cache_decoding_bytes), DISPLAY_DECIMALS, lang),
        "length": format_number(kv.cache.static_max_tokens or kv.tokens, 0, lang),
        "alternative_gib": ""
        if alternative is None
        else format_number(gib(alternative.kv_cache_bytes), DISPLAY_DECIMALS, lang),
        "bits": "" if s.weights.bits is None else _exact_cell(s.weights.bits, lang),
        "method": s.config.quantization_method or "",
        "float32_parameters": format_number(s.weights.float32_parameters or 0, 0, lang),
    }


def model_text(
    s: ModelSizing,
    candidates: Sequence[Candidate] | None,
    days: int | None,
    lang: str,
    need: Need | None = None,
) -> str:
    config, kv = s.config, s.kv
    parameters = s.weights.parameters
    title = message(
        "model_title",
        lang,
        model_type=config.model_type,
        layers=format_number(config.layers, 0, lang),
        parameters=message("unknown", lang)
        if parameters is None
        else format_number(parameters, 0, lang),
        tokens=format_number(kv.tokens, 0, lang),
        sequences=format_number(kv.sequences, 0, lang),
        bytes_per_value=_exact_cell(kv.bytes_per_value, lang),
    )
    # The key figures first (GiB, GB, bytes), then the layers they come from: in a narrow
    # column the table is read from its left.
    headers = [
        message("figure", lang),
        "GiB",
        "GB",
        message("bytes_header", lang),
        message("model_layers_header", lang),
        message("model_window_header", lang),
        message("model_tokens_held_header", lang),
    ]
    rows = [[r[0], r[6], r[5], r[4], r[1], r[2], r[3]] for r in _model_rows(s, lang)]
    table = render_table(headers, rows)
    values = _caveat_values(s, lang)
    notes = [message(f"caveat_{code}", lang, **values) for code in s.caveats]
    head = [str(s.path)]
    if s.preset is not None:
        p = s.preset
        revision = p.hf_revision or message("preset_revision_unknown", lang)
        source = message("preset_source", lang, repo=p.hf_repo, revision=revision, url=p.read_at)
        head.append(fold_text(source))
        card = message("preset_card", lang, parameters=p.card_parameters, url=p.card_url)
        head.append(fold_text(card))
    from iteragpu.models.model import active_parameter_count

    active = active_parameter_count(s)
    if active is not None and parameters is not None and active != parameters:
        head_title = message(
            "model_active",
            lang,
            active=format_number(active, 0, lang),
            parameters=format_number(parameters, 0, lang),
        )
        notes.insert(0, head_title)
    from iteragpu.models.model import modules_json

    modules = modules_json(config)
    if modules:
        listed = ", ".join(
            f"{m['name']} {format_number(m['parameters'], 0, lang)}" for m in modules
        )
        notes.insert(0, message("model_modules", lang, modules=listed))
    text = "\n".join([*head, title, "", table, "", *(fold_text(n) for n in notes)])
    if candidates is None or days is None or need is None:
        return text
    return text + "\n\n" + shortlist_text(candidates, need, days, 1, lang)


def partial_model_text(s: PartialSizing, lang: str) -> str:
    """A model whose cache is unknown: its weights from the files, the total incomplete."""
    unknown = message("unknown", lang)
    title = message(
        "model_partial_title",
        lang,
        model_type=s.model_type or unknown,
        parameters=unknown
        if s.weights.parameters is None
        else format_number(s.weights.parameters, 0, lang),
    )
    rows = [
        [
            message("model_weights_files", lang, source=s.weights.source),
            *_byte_cells(s.weights.byte_count, lang),
        ],
        [message("reserve", lang), *_byte_cells(s.reserve_bytes, lang)],
        [message("model_partial_total", lang), *_byte_cells(s.total_bytes, lang)],
    ]
    table = render_table(
        [message("figure", lang), message("bytes_header", lang), "GB", "GiB"], rows
    )
    reason = (
        message(f"model_cache_unknown_{s.cache_reason}", lang)
        if (f"model_cache_unknown_{s.cache_reason}" in TEXTS)
        else message("model_cache_unknown_unknown_family", lang)
    )
    return "\n".join([str(s.path), title, "", table, "", reason])


# ---------------------------------------------------------------------------------------------
# iteragpu report
# ---------------------------------------------------------------------------------------------


def _counter_cells(value: int | None, lang: str) -> list[str]:
    # A counter the lab did not read is said to be so, never shown as 0.
    if value is None:
        return [message("not_measured", lang), ""]
    return [format_number(value, 0, lang), format_number(gib(value), DISPLAY_DECIMALS, lang)]


def _signed_bytes(value: int | None, lang: str) -> str:
    if value is None:
        return message("not_measured", lang)
    text = format_number(abs(value), 0, lang)
    return f"+{text}" if value > 0 else f"-{text}" if value < 0 else text


def _phase_name(p: PhaseRecord) -> str:
    return p.name


def report_text(
    result: LabResult,
    c: Comparison | None,
    lang: str,
    request: TrainRequest | None = None,
) -> str:
    from iteragpu.gpus.evidence import COUNTER_KEYS

    e = result.evidence
    title = message(
        "report_title",
        lang,
        path=str(e.path),
        device=e.device_name,
        schema=result.schema_version,
        outcome=message("phase_status_" + e.outcome, lang),
    )
    headers = [
        message("report_phase", lang),
        message("report_counter", lang),
        message("bytes_header", lang),
        "GiB",
    ]
    rows = [
        [_phase_name(p), message("counter_" + key, lang), *_counter_cells(p.counters[key], lang)]
        for p in result.phases
        for key in COUNTER_KEYS
    ]
    lines = [title]
    if result.task != "forward" or result.world_size > 1:
        lines.append(
            message(
                "report_task_line",
                lang,
                task=result.task,
                rank=format_number(result.rank, 0, lang),
                world=format_number(result.world_size, 0, lang),
            )
        )
    lines += ["", render_table(headers, rows, left_columns=2)]
    if result.counters_unavailable_reason is not None:
        reason = result.counters_unavailable_reason
        lines += ["", message("report_counters_unavailable", lang, reason=reason)]
    for p in result.phases:
        if p.status != "ok":
            lines.append(
                message(
                    "report_phase_error",
                    lang,
                    phase=_phase_name(p),
                    status=message("phase_status_" + p.status, lang),
                    error=message("report_out_of_memory", lang)
                    if p.out_of_memory
                    else p.error_type,
                    detail=p.error_message,
                )
            )
    lines.append("")
    predicted = [p for p in result.phases if p.predicted_end_allocated_bytes is not None]
    if result.task == "train":
        lines.append(_model_state_text(result, lang))
    elif result.task == "recorder":
        pass  # a reader's own loop: nothing of it was predicted
    elif predicted:
        prediction_rows = [
            [
                _phase_name(p),
                format_number(p.predicted_end_allocated_bytes or 0, 0, lang),
                _counter_cells(p.counters["end_allocated_bytes"], lang)[0],
                _signed_bytes(p.end_allocated_difference_bytes, lang),
            ]
            for p in predicted
        ]
        prediction_headers = [
            message("report_phase", lang),
            message("report_predicted_end", lang),
            message("report_measured_end", lang),
            message("report_difference", lang),
        ]
        lines.append(render_table(prediction_headers, prediction_rows))
    else:
        lines.append(message("report_no_prediction", lang, schema=result.schema_version))
    if any(p.parts is not None for p in result.phases):
        lines += ["", _parts_text(result, lang)]
    if any(p.step is not None for p in result.phases):
        lines += ["", _steps_text(result, lang)]
    lines += ["", _estimate_text(c, lang) if c is not None else message("report_no_network", lang)]
    if request is not None:
        lines += ["", _train_items_text(result, request, lang)]
    return "\n".join(lines)


def _model_state_text(result: LabResult, lang: str) -> str:
    rows = [
        [
            p.name,
            _counter_cells(p.predicted_model_state_bytes, lang)[0],
            _counter_cells(
                None if p.parts is None else p.parts["model_state_allocated_bytes"], lang
            )[0],
            _signed_bytes(p.model_state_difference_bytes, lang),
        ]
        for p in result.phases
    ]
    headers = [
        message("report_phase", lang),
        message("report_predicted_model_state", lang),
        message("report_counted_model_state", lang),
        message("report_difference", lang),
    ]
    return "\n".join([message("report_model_state_title", lang), "", render_table(headers, rows)])


# The parts of a phase the report shows, as allocated, then the counters they come from.
PART_COLUMNS = (
    ("parameters_allocated_bytes", "part_parameters"),
    ("gradients_allocated_bytes", "part_gradients"),
    ("optimizer_state_allocated_bytes", "part_optimizer_state"),
    ("activations_and_temporaries_bytes", "part_activations"),
    ("peak_excess_bytes", "part_peak_excess"),
)


def _parts_text(result: LabResult, lang: str) -> str:
    rows = []
    for p in result.phases:
        if p.parts is None:
            cells = [message("not_measured", lang)] * len(PART_COLUMNS)
        else:
            cells = [_counter_cells(p.parts[key], lang)[0] for key, _ in PART_COLUMNS]
        rows.append([p.name, *cells, _counter_cells(p.counters["end_allocated_bytes"], lang)[0]])
    headers = [
        message("report_phase", lang),
        *(message(label, lang) for _, label in PART_COLUMNS),
        message("counter_end_allocated_bytes", lang),
    ]
    return "\n".join([message("report_parts_title", lang), "", render_table(headers, rows)])


def _steps_text(result: LabResult, lang: str) -> str:
    from iteragpu.cli.train_report import step_rows

    rows = [
        [
            row.phase,
            _counter_cells(row.first_peak_bytes, lang)[0],
            _counter_cells(row.warm_peak_bytes, lang)[0],
        ]
        for row in step_rows(result)
    ]
    headers = [
        message("report_phase", lang),
        message("report_first_step", lang),
        message("report_warm_steps", lang),
    ]
    return "\n".join([message("report_steps_title", lang), "", render_table(headers, rows)])


def _train_items_text(result: LabResult, request: TrainRequest, lang: str) -> str:
    from iteragpu.cli.train_report import measured_phase, train_items

    title = message(
        "report_train_title",
        lang,
        precision=request.precision,
        optimizer=request.optimizer,
        fused=message("report_train_fused", lang) if request.fused else "",
    )
    items = train_items(result, request)
    if items is None:
        return "\n".join([title, "", message("report_train_no_groups", lang)])
    rows = [_item_row(item, lang) for item in items]
    headers = [
        message("figure", lang),
        message("report_estimated", lang),
        message("report_counted", lang),
        message("report_difference", lang),
    ]
    lines = [title, "", render_table(headers, rows)]
    if measured_phase(result) is None:
        lines += ["", message("report_train_no_phase", lang)]
    return "\n".join(lines)


def _item_row(item: ItemComparison, lang: str) -> list[str]:
    counted = item.measured_bytes
    masters = item.item.startswith("master_")
    return [
        message(f"train_item_{item.item}", lang),
        format_number(item.estimated_bytes, 0, lang),
        message("not_counted" if masters else "not_measured", lang)
        if counted is None
        else format_number(counted, 0, lang),
        _signed_bytes(item.difference_bytes, lang),
    ]


def reports_text(
    results: Sequence[LabResult],
    comparisons: Sequence[Comparison | None],
    lang: str,
    request: TrainRequest | None = None,
) -> str:
    """Each result's report, then, for several (one per rank), their allocated peaks side by
    side and the rank with the highest."""
    from iteragpu.cli.train_report import highest_peak, side_by_side

    parts = [report_text(r, c, lang, request) for r, c in zip(results, comparisons, strict=True)]
    if len(results) < 2:
        return parts[0]
    labels = [
        message(
            "report_run_label",
            lang,
            rank=format_number(r.rank, 0, lang),
            path=str(r.evidence.path),
        )
        for r in results
    ]
    rows = [
        [name, *(_counter_cells(peak, lang)[0] for peak in peaks)]
        for name, peaks in side_by_side(results)
    ]
    table = render_table([message("report_phase", lang), *labels], rows)
    best = highest_peak(results)
    if best is None:
        verdict = message("report_highest_peak_none", lang)
    else:
        verdict = message(
            "report_highest_peak",
            lang,
            rank=format_number(results[best.index].rank, 0, lang),
            path=str(results[best.index].evidence.path),
            peak=format_number(best.peak_bytes, 0, lang),
            phase=best.phase,
        )
    side = [message("report_side_by_side_title", lang), "", table, "", verdict]
    return "\n\n".join([*parts, "\n".join(side)])


def _estimate_text(c: Comparison, lang: str) -> str:
    title = message(
        "report_estimate_recorded" if c.from_result else "report_estimate_given",
        lang,
        parameters=format_number(c.parameters, 0, lang),
        bits=_exact_cell(c.bits, lang),
    )
    rows = [
        [
            message("report_estimated_weights", lang),
            *_counter_cells(c.estimated_weights_bytes, lang),
        ],
        [
            message("report_model_load_allocated", lang),
            *_counter_cells(c.model_load_allocated_bytes, lang),
        ],
        [message("report_difference_row", lang), _signed_bytes(c.difference_bytes, lang), ""],
    ]
    table = render_table([message("figure", lang), message("bytes_header", lang), "GiB"], rows)
    lines = [title, "", table, ""]
    if c.difference_share is None:
        lines.append(message("explain_not_measured", lang))
    else:
        share = format_number(c.difference_share * 100, DISPLAY_DECIMALS, lang)
        lines.append(message("report_share", lang, share=share))
        if c.block_rounding_bytes is None:
            lines.append(message("explain_rounding_not_attributable", lang))
        else:
            rounding = format_number(c.block_rounding_bytes, 0, lang)
            lines.append(message("explain_rounding", lang, rounding=rounding))
        unexplained = _signed_bytes(c.unexplained_bytes, lang)
        lines.append(message("explain_unexplained", lang, unexplained=unexplained))
    if c.model_load_cached_bytes is not None:
        cached = format_number(c.model_load_cached_bytes, 0, lang)
        lines.append(message("explain_segments", lang, cached=cached))
    if c.cold_forward_unexplained_bytes is not None:
        workspace = format_number(c.cold_forward_unexplained_bytes, 0, lang)
        lines.append(message("explain_cublas", lang, workspace=workspace))
    lines.append(message("explain_context", lang))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# iteragpu train
# ---------------------------------------------------------------------------------------------


def _train_rows(plan: TrainingPlan, lang: str) -> list[list[str]]:
    from iteragpu.training.plan import ROLES, tensor_bytes

    rank = plan.first_to_fill
    estimated = message("train_status_estimated", lang)

    def row(label: str, byte_count: int, status: str = estimated) -> list[str]:
        cells = _byte_cells(Fraction(byte_count), lang)
        return [label, cells[2], cells[1], cells[0], status]

    rows = []
    sharded = plan.request.shard != "none"
    for role in ROLES:
        held = [t for t in plan.tensors if t.role == role]
        if not held:
            continue
        trainable = any(t.trainable for t in held)
        label = message(
            f"train_role_{role}",
            lang,
            tensors=format_number(len(held), 0, lang),
            state=message("train_trainable" if trainable else "train_frozen", lang),
        )
        # Unsharded per role; the sharded share is the weights row below.
        rows.append(row(label, sum(tensor_bytes(t) for t in held)))
    if sharded:
        rows.append(row(message("train_weights_share", lang), rank.parameters + rank.quant_states))
    rows.append(row(message("train_gradients", lang), rank.gradients))
    rows.append(row(message("train_optimizer", lang), rank.optimizer + plan.shared_gpu_bytes))
    if rank.master_weights or rank.master_gradients:
        rows.append(row(message("train_master_weights", lang), rank.master_weights))
        rows.append(row(message("train_master_gradients", lang), rank.master_gradients))
    rows.append(row(message("train_model_states", lang), plan.rank_gpu_bytes(rank)))
    if rank.host:
        rows.append(row(message("train_host", lang), rank.host))
    to_measure = message("train_status_unknown", lang)
    rows.append([message("train_activations", lang), "-", "-", "-", to_measure])
    return rows


def train_text(plan: TrainingPlan, lang: str) -> str:
    """The run's model states as a table, then the ranks when it is sharded, then the notes."""
    request = plan.request
    trainable = plan.trainable
    title = message(
        "train_title",
        lang,
        model_type=plan.config.model_type,
        parameters=format_number(plan.parameters, 0, lang),
        trainable=format_number(sum(t.elements for t in trainable), 0, lang),
        tensors=format_number(len(trainable), 0, lang),
        method=request.method,
        precision=request.precision,
        optimizer=request.optimizer + (" (fused)" if request.fused else ""),
    )
    headers = [
        message("figure", lang),
        "GiB",
        "GB",
        message("bytes_header", lang),
        message("train_status_header", lang),
    ]
    parts = [str(plan.path), title, "", render_table(headers, _train_rows(plan, lang))]
    if request.shard != "none":
        rank = plan.first_to_fill
        parts += [
            "",
            fold_text(
                message(
                    "train_sharded",
                    lang,
                    shard=request.shard,
                    gpus=format_number(request.gpus, 0, lang),
                    rank=format_number(rank.rank, 0, lang),
                )
            ),
            "",
            render_table(
                [
                    message("train_rank_header", lang),
                    message("train_model_states_gib_header", lang),
                    message("train_padding_header", lang),
                ],
                [
                    [
                        format_number(r.rank, 0, lang),
                        format_number(gib(plan.rank_gpu_bytes(r)), DISPLAY_DECIMALS, lang),
                        format_number(r.padding, 0, lang),
                    ]
                    for r in plan.shard.ranks
                ],
            ),
        ]
    notes = [message("train_note_activations", lang), message("train_note_rules", lang)]
    if request.micro_batch is not None or request.sequence_length is not None:
        notes.append(message("train_note_recorded", lang))
    parts += ["", *(fold_text(n) for n in notes)]
    return "\n".join(parts)


def train_compare_text(comparison: TrainComparison, lang: str) -> str:
    """A peer's estimate of the run beside the tool's, item by item, then why they differ."""
    rows = [
        [
            message(f"compare_item_{item.key}", lang),
            format_number(item.peer_bytes, 0, lang),
            format_number(item.ours_bytes, 0, lang),
            format_number(item.peer_bytes - item.ours_bytes, 0, lang),
        ]
        for item in comparison.items
    ]
    rows.append(
        [
            message("compare_total", lang),
            format_number(comparison.peer_bytes, 0, lang),
            format_number(comparison.ours_bytes, 0, lang),
            format_number(comparison.peer_bytes - comparison.ours_bytes, 0, lang),
        ]
    )
    headers = [
        message("compare_item_header", lang),
        message("compare_peer_header", lang, peer=comparison.peer),
        message("compare_ours_header", lang),
        message("compare_difference_header", lang),
    ]
    parts = [
        fold_text(
            message(
                "compare_title",
                lang,
                peer=comparison.peer,
                version=comparison.version,
                call=comparison.call,
            )
        ),
        "",
        render_table(headers, rows),
        "",
    ]
    for item in comparison.items:
        label = message(f"compare_item_{item.key}", lang)
        parts.append(fold_text(f"{label}: {message(f'compare_reason_{item.reason}', lang)}"))
    head = format_number(comparison.head_parameters, 0, lang)
    for note in comparison.notes:
        parts.append(fold_text(message(f"compare_reason_{note}", lang, parameters=head)))
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# iteragpu model --tp/--pp/--ep/--runtime: a split over several GPUs
# ---------------------------------------------------------------------------------------------


def _split_layers_cell(rank: RankPlan, lang: str) -> str:
    first, end = rank.layers
    layers = message("split_no_layers", lang) if end <= first else f"{first}-{end - 1}"
    if rank.output_layer:
        return message("split_output_layer", lang, layers=layers)
    return layers


def split_text(
    plan: SplitPlan,
    path: str,
    candidates: Sequence[Candidate] | None,
    days: int | None,
    lang: str,
    need: Need | None = None,
) -> str:
    """One row per GPU (its layers, weights and their replicated part, KV cache, total), the
    GPU that fills first, llama.cpp's host part, the notes; then the short list of packages of
    as many cards, compared by that GPU's need."""
    from iteragpu.parallel.payload import VERSIONS

    version = VERSIONS[plan.runtime]
    values = {
        "model_type": plan.model_type,
        "gpus": format_number(len(plan.ranks), 0, lang),
        "runtime": plan.runtime,
        "version": version if plan.runtime != "llama.cpp" else version[:12],
        "tp": format_number(plan.tp, 0, lang),
        "pp": format_number(plan.pp, 0, lang),
        "ep": format_number(plan.tp if plan.ep else 1, 0, lang),
        "tokens": format_number(plan.tokens, 0, lang),
        "sequences": format_number(plan.sequences, 0, lang),
        "weights_dtype": plan.weights_dtype,
        "kv_dtype": plan.kv_dtype,
        "bytes_per_value": _exact_cell(plan.kv_bytes_per_value, lang),
    }
    key = "split_title_llamacpp" if plan.runtime == "llama.cpp" else "split_title"
    headers = [
        message("split_rank_header", lang),
        message("split_tp_rank_header", lang),
        message("split_stage_header", lang),
        message("split_layers_header", lang),
        message("split_weights_header", lang),
        message("split_replicated_header", lang),
        message("split_kv_header", lang),
        message("split_total_header", lang),
    ]

    def gib_cell(value: Fraction) -> str:
        return format_number(gib(value), DISPLAY_DECIMALS, lang)

    rows = [
        [
            format_number(r.rank, 0, lang),
            format_number(r.tp_rank, 0, lang),
            format_number(r.pp_stage, 0, lang),
            _split_layers_cell(r, lang),
            gib_cell(r.weights_bytes),
            gib_cell(r.weights_replicated_bytes),
            gib_cell(r.kv_cache_bytes),
            gib_cell(r.total_bytes),
        ]
        for r in plan.ranks
    ]
    first = plan.first_to_fill
    notes = [
        message(
            "split_first_to_fill",
            lang,
            rank=format_number(first.rank, 0, lang),
            total_gib=gib_cell(first.total_bytes),
            total_bytes=format_number(math.ceil(first.total_bytes), 0, lang),
        )
    ]
    if plan.host is not None:
        notes.append(
            message(
                "split_host_note",
                lang,
                weights_gib=gib_cell(plan.host.weights_bytes),
                kv_gib=gib_cell(plan.host.kv_cache_bytes),
            )
        )
    notes += [message(f"split_note_{code}", lang) for code in plan.notes]
    title = fold_text(message(key, lang, **values))
    table = render_table(headers, rows)
    text = "\n".join([path, title, "", table, "", *(fold_text(n) for n in notes)])
    if candidates is None or days is None or need is None:
        return text
    return text + "\n\n" + shortlist_text(candidates, need, days, len(plan.ranks), lang)
