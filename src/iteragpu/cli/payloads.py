"""The CLI's JSON objects (`--json`): byte counts as integers under `*_bytes` keys, derived units
as exact decimal text under unit-suffixed keys (`*_gib`, `*_gb`), unknown values as null.

Apart from the text views (`views`), so that `--json` loads neither the tables nor the message
catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from iteragpu.core.numbers import exact_decimal_text
from iteragpu.core.quantity import byte_fields
from iteragpu.core.units import ceil_bytes, gb, gib
from iteragpu.i18n.numbers import format_number

if TYPE_CHECKING:
    from iteragpu.core.kv_cache import KVCacheSpec
    from iteragpu.core.quantity import Conversion
    from iteragpu.core.weights import WeightsEstimate
    from iteragpu.examples import Figure, WorkedExample
    from iteragpu.gpus.catalog import Card
    from iteragpu.gpus.comparison import Comparison
    from iteragpu.gpus.evidence import LabResult, PhaseRecord
    from iteragpu.gpus.need import Need
    from iteragpu.gpus.shortlist import Candidate
    from iteragpu.models.model import ModelSizing
    from iteragpu.parallel.records import SplitPlan
    from iteragpu.training.records import TrainRequest


def weights_json(e: WeightsEstimate) -> dict[str, Any]:
    return {
        "parameters": e.parameters,
        "bits": exact_decimal_text(e.bits),
        **byte_fields("weights", e.weights_bytes, "GB", "GiB"),
        "reserve_gib": exact_decimal_text(e.reserve_gib),
        **byte_fields("reserve", e.reserve_bytes),
        **byte_fields("total", e.total_bytes, "GB", "GiB"),
        "quantization_not_counted": e.quantization_not_counted,
    }


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
        **byte_fields("kv_cache", spec.kv_cache_bytes, "GB", "GiB"),
    }


def convert_json(c: Conversion) -> dict[str, Any]:
    return {
        "bytes": ceil_bytes(c.byte_count),
        "bytes_exact": exact_decimal_text(c.byte_count),
        "value": exact_decimal_text(c.value),
        "unit": c.unit,
    }


def examples_list_json() -> dict[str, Any]:
    from iteragpu.examples import registry

    return {
        "examples": [{"id": e.id, "title": e.title, "where": e.where} for e in registry().values()]
    }


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
        # Declared (else nominal, decimal GB) capacity minus the need, rounded down to a byte;
        # at most that figure when the need is incomplete (a lower bound).
        "paper_margin_bytes": c.paper_margin_bytes,
        "paper_margin_gib": _gib_text(c.paper_margin_bytes),
        "paper_margin_basis": c.paper_basis,
        "paper_margin_at_most": c.paper_margin_bytes is not None and not c.need_complete,
        "holds_need_on_paper": c.holds_need_on_paper,
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


def need_parts_json(need: Need) -> list[dict[str, Any]]:
    """Each computed part of a need: its code, the layer kind for the cache and the states
    (else null), its bytes (rounded up to a byte, with the exact decimal when fractional)."""
    return [
        {"part": p.part, "layer_kind": p.layer_kind, **byte_fields("part", p.byte_count)}
        for p in need.parts
    ]


def shortlist_json(
    candidates: Sequence[Candidate], need: Need, days: int, cards: int
) -> dict[str, Any]:
    """`rank` is an integer only for candidates whose every requirement is fit, else null.

    The candidates come ranked, then those that need checks in review order (`review_order`:
    the keys, for review and not a rank: the cards whose capacity on paper holds the need
    first), then the excluded ones. `need_bytes` is the sum of `need_parts`; with
    `need_complete` false it is a lower bound, `need_missing` names the parts still to measure
    and each candidate's `paper_margin_at_most` is true."""
    return {
        **byte_fields("need", need.byte_count, "GiB"),
        "need_complete": need.complete,
        "need_missing": list(need.missing),
        "need_parts": need_parts_json(need),
        "days": days,
        "cards": cards,
        "review_order": {
            "keys": [
                "holds_need_on_paper_first",
                "cost_for_period",
                "paper_margin_bytes_largest_first",
                "catalog",
            ],
            "is_rank": False,
        },
        "candidates": [_candidate_json(c) for c in candidates],
    }


def model_json(
    sizing: ModelSizing,
    candidates: Sequence[Candidate] | None,
    days: int | None,
    need: Need | None = None,
) -> dict[str, Any]:
    """`iteragpu model`'s object (its keys: `iteragpu.models.model`), and `shortlist`: the
    short list for `need` (the parts of `total_bytes`) with --shortlist, else null."""
    from iteragpu.models.model import payload

    ranked = None
    if candidates is not None and days is not None and need is not None:
        ranked = shortlist_json(candidates, need, days, 1)
    return {**payload(sizing), "shortlist": ranked}


def _phase_json(p: PhaseRecord) -> dict[str, Any]:
    from iteragpu.gpus.evidence import COUNTER_KEYS

    fields: dict[str, Any] = {
        "phase": p.phase,
        "repeat": p.repeat,
        "step": p.step,
        "status": p.status,
    }
    for key in COUNTER_KEYS:
        fields[key] = p.counters[key]
        fields[key.removesuffix("_bytes") + "_gib"] = _gib_text(p.counters[key])
    fields["error"] = (
        None
        if p.error_type is None
        else {"type": p.error_type, "message": p.error_message, "out_of_memory": p.out_of_memory}
    )
    fields["predicted_end_allocated_bytes"] = p.predicted_end_allocated_bytes
    fields["end_allocated_difference_bytes"] = p.end_allocated_difference_bytes
    fields["parts"] = p.parts
    fields["predicted_model_state_bytes"] = p.predicted_model_state_bytes
    fields["model_state_difference_bytes"] = p.model_state_difference_bytes
    return fields


def _train_json(result: LabResult, request: TrainRequest | None) -> dict[str, Any] | None:
    """The estimate of each model-state item beside its counted bytes (`--precision`,
    `--optimizer`), or None when not asked."""
    from iteragpu.cli.train_report import MEASURED_PHASE, measured_phase, train_items

    if request is None:
        return None
    items = train_items(result, request)
    phase = measured_phase(result)
    return {
        "precision": request.precision,
        "optimizer": request.optimizer,
        "fused": request.fused,
        "measured_at": None if phase is None else {"phase": MEASURED_PHASE, "step": phase.step},
        "items": None
        if items is None
        else [
            {
                "item": i.item,
                "estimated_bytes": i.estimated_bytes,
                "measured_bytes": i.measured_bytes,
                "difference_bytes": i.difference_bytes,
            }
            for i in items
        ],
    }


def reports_json(
    results: Sequence[LabResult],
    comparisons: Sequence[Comparison | None],
    request: TrainRequest | None = None,
) -> dict[str, Any]:
    """One result's object, or for several `results` (each with its own) and `highest_peak`:
    the rank and phase with the highest allocated peak (null when none was read)."""
    from iteragpu.cli.train_report import highest_peak

    objects = [report_json(r, c, request) for r, c in zip(results, comparisons, strict=True)]
    if len(objects) == 1:
        return objects[0]
    best = highest_peak(results)
    return {
        "results": objects,
        "highest_peak": None
        if best is None
        else {
            "path": str(results[best.index].evidence.path),
            "rank": results[best.index].rank,
            "phase": best.phase,
            "peak_allocated_bytes": best.peak_bytes,
        },
    }


def report_json(
    result: LabResult, c: Comparison | None, request: TrainRequest | None = None
) -> dict[str, Any]:
    e = result.evidence
    return {
        "path": str(e.path),
        "device_name": e.device_name,
        "schema_version": result.schema_version,
        "task": result.task,
        "rank": result.rank,
        "world_size": result.world_size,
        "outcome": e.outcome,
        "counters_unavailable_reason": result.counters_unavailable_reason,
        "phases": [_phase_json(p) for p in result.phases],
        "train_estimate": _train_json(result, request),
        "estimate": None
        if c is None
        else {
            "parameters": c.parameters,
            "bits": exact_decimal_text(c.bits),
            "from_result": c.from_result,
            **byte_fields("estimated_weights", c.estimated_weights_exact_bytes, "GiB"),
            "model_load_allocated_bytes": c.model_load_allocated_bytes,
            "model_load_allocated_gib": _gib_text(c.model_load_allocated_bytes),
            "difference_bytes": c.difference_bytes,
            "difference_share": None
            if c.difference_share is None
            else exact_decimal_text(c.difference_share),
            "block_rounding_bytes": c.block_rounding_bytes,
            "unexplained_bytes": c.unexplained_bytes,
            "model_load_cached_bytes": c.model_load_cached_bytes,
            "cold_forward_unexplained_bytes": c.cold_forward_unexplained_bytes,
        },
    }


def split_json(
    plan: SplitPlan,
    path: str,
    candidates: Sequence[Candidate] | None,
    days: int | None,
    need: Need | None = None,
) -> dict[str, Any]:
    """`iteragpu model`'s object for a split over GPUs (keys: `iteragpu.parallel.payload`),
    and `shortlist`: packages of as many cards compared by the fullest rank's `need`, else
    null."""
    from iteragpu.parallel.payload import plan_json

    ranked = None
    if candidates is not None and days is not None and need is not None:
        ranked = shortlist_json(candidates, need, days, len(plan.ranks))
    return {**plan_json(plan, path), "shortlist": ranked}


def train_json(
    data: dict[str, Any],
    candidates: Sequence[Candidate] | None,
    need: Need | None,
    days: int | None,
) -> dict[str, Any]:
    """`iteragpu train`'s object (`iteragpu.training.plan.payload`, with `compare`) and
    `shortlist`: packages of `--gpus` cards compared by the fullest GPU's need (its model
    states and the reserve; the activations and the step's temporaries to measure, so
    `need_complete` false) with --shortlist, else null."""
    ranked = None
    if candidates is not None and need is not None and days is not None:
        ranked = shortlist_json(candidates, need, days, data["request"]["gpus"])
    return {**data, "shortlist": ranked}
