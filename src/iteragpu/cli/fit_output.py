"""What `iteragpu fit` and `iteragpu report --vllm-log/--llama-log` print: the reader's text
(its words from the catalogue) or one JSON object.

`fit --json` keys (stable): `path`, `model_type`, `runtime`, `runtime_version`, `card` ({`id`,
`name`} or null when `--capacity-bytes` gave the capacity), `capacity_bytes`, `gpus`,
`solved` (what was left open: `tokens`, `sequences`, `tp`, `kv_dtype`, `gpu_layers`),
`answer` (`tokens` per sequence, `sequences`, `tp`, `pp`, `kv_dtype`, `gpu_layers`),
`flags` (the runtime's options in order, "" for a switch), `command` (ready to paste; null for
Transformers), `bounds` (`kind`: `at_most` or `exact`; `limited_by`: `memory`, `positions` or
`asked`; `positions`; `ranks`: each GPU's `fixed_bytes`, `kv_bytes_per_token`,
`room_bytes_min`/`room_bytes_max` for the cache, `kv_cache_bytes` of the answer,
`left_bytes`), `vllm` (`blocks_min`, `blocks_max`, `block_size`, `cache_tokens_min`,
`cache_tokens_max`, `max_concurrency_min`, `max_concurrency_max` as vLLM prints them,
`gpu_memory_utilization`, `kv_sizing`; null for the others), `certain`, `to_measure` (codes),
`alternatives` (other cache types: `kv_dtype`, `tokens`, `sequences`), `notes` (codes).

`report --vllm-log/--llama-log --json` keys: `runtime`, `path`, `log`, `log_version`,
`settings` ({name: value and where it came from}), `items` (`item`, `gpu`, `unit`,
`computed`, `logged`, `difference`, `status`), `notes`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from iteragpu.cli.table import fold_text, render_table
from iteragpu.core.units import gib
from iteragpu.i18n.messages import message
from iteragpu.i18n.numbers import format_number

if TYPE_CHECKING:
    from iteragpu.parallel.fit import FitAnswer
    from iteragpu.parallel.reconcile import Reconciliation, Setting

DECIMALS = 2


class CardName:
    """A catalogue card as `fit` names it: its id and name."""

    __slots__ = ("id", "name")

    def __init__(self, card_id: str, name: str) -> None:
        self.id = card_id
        self.name = name


def _version(runtime: str) -> str:
    from iteragpu.parallel.payload import VERSIONS

    version = VERSIONS[runtime]
    return version[:12] if runtime == "llama.cpp" else version


def fit_json(answer: FitAnswer, card: CardName | None) -> dict[str, Any]:
    ranks = [
        {
            "rank": r.rank,
            "fixed_bytes": math.ceil(r.fixed_bytes),
            "kv_bytes_per_token": _decimal(r.kv_bytes_per_token),
            "room_bytes_min": math.floor(r.room_bytes[0]),
            "room_bytes_max": math.floor(r.room_bytes[1]),
            "kv_cache_bytes": math.ceil(r.kv_bytes),
            "left_bytes": math.floor(r.room_bytes[0] - r.kv_bytes),
        }
        for r in answer.ranks
    ]
    vllm = None
    if answer.runtime == "vllm":
        assert answer.blocks and answer.cache_tokens and answer.concurrency
        vllm = {
            "blocks_min": answer.blocks[0],
            "blocks_max": answer.blocks[1],
            "block_size": answer.block_size,
            "cache_tokens_min": answer.cache_tokens[0],
            "cache_tokens_max": answer.cache_tokens[1],
            "max_concurrency_min": answer.concurrency[0],
            "max_concurrency_max": answer.concurrency[1],
            "gpu_memory_utilization": answer.utilization,
            "kv_sizing": answer.sizing,
        }
    from iteragpu.parallel.payload import VERSIONS

    return {
        "path": answer.path,
        "model_type": answer.model_type,
        "runtime": answer.runtime,
        "runtime_version": VERSIONS[answer.runtime],
        "card": None if card is None else {"id": card.id, "name": card.name},
        "capacity_bytes": answer.capacity_bytes,
        "gpus": answer.gpus,
        "solved": list(answer.solved),
        "answer": {
            "tokens": answer.tokens,
            "sequences": answer.sequences,
            "tp": answer.tp,
            "pp": answer.pp,
            "kv_dtype": answer.kv_dtype,
            "gpu_layers": answer.gpu_layers,
        },
        "flags": dict(answer.flags),
        "command": answer.command,
        "bounds": {
            "kind": "exact" if answer.exact else "at_most",
            "limited_by": answer.limited_by,
            "positions": answer.positions,
            "ranks": ranks,
        },
        "vllm": vllm,
        "certain": list(answer.certain),
        "to_measure": list(answer.to_measure),
        "alternatives": [
            {"kv_dtype": kv, "tokens": tokens, "sequences": sequences}
            for kv, tokens, sequences in answer.alternatives
        ],
        "notes": list(answer.notes),
    }


def _decimal(value: Fraction) -> str:
    from iteragpu.core.numbers import exact_decimal_text

    return exact_decimal_text(value)


def _span(low: object, high: object, lang: str) -> str:
    def text(value: object) -> str:
        if isinstance(value, int):
            return format_number(value, 0, lang)
        return format_number(Fraction(str(value)), DECIMALS, lang)

    return text(low) if low == high else f"{text(low)}–{text(high)}"


def fit_text(answer: FitAnswer, card: CardName | None, lang: str) -> str:
    def count(value: int) -> str:
        return format_number(value, 0, lang)

    card_name = card.name if card is not None else message("fit_card_given", lang)
    solved = ", ".join(message(f"fit_solved_{code}", lang) for code in answer.solved)
    title = message(
        "fit_title",
        lang,
        model_type=answer.model_type,
        gpus=count(answer.gpus),
        card=card_name,
        capacity=count(answer.capacity_bytes),
        runtime=answer.runtime,
        version=_version(answer.runtime),
        solved=solved or message("fit_solved_none", lang),
    )
    kind = "exact" if answer.exact else "at_most"
    values = {
        "tokens": count(answer.tokens),
        "sequences": count(answer.sequences),
        "kv_dtype": answer.kv_dtype,
        "tp": count(answer.tp),
        "pp": count(answer.pp),
        "gpu_layers": count(answer.gpu_layers or 0),
    }
    if answer.runtime == "llama.cpp":
        lines = [message(f"fit_answer_llamacpp_{kind}", lang, **values)]
    else:
        lines = [message(f"fit_answer_{kind}", lang, **values)]
    fullest = min(answer.ranks, key=lambda r: r.room_bytes[0] - r.kv_bytes)
    left = fullest.room_bytes[0] - fullest.kv_bytes
    lines.append(
        message(
            f"fit_limit_{answer.limited_by}",
            lang,
            positions=count(answer.positions or 0),
            rank=count(fullest.rank),
            left_gib=format_number(gib(left), DECIMALS, lang),
        )
    )
    if answer.runtime == "vllm":
        assert answer.blocks and answer.cache_tokens and answer.concurrency
        lines.append(
            message(
                f"fit_vllm_blocks_{kind}",
                lang,
                blocks=_span(*answer.blocks, lang),
                block_size=count(answer.block_size or 0),
                cache_tokens=_span(*answer.cache_tokens, lang),
                tokens=count(answer.tokens),
                concurrency=_span(*answer.concurrency, lang),
            )
        )
    parts = [answer.path, fold_text(title), "", *(fold_text(line) for line in lines), ""]
    if answer.command is not None:
        parts.append(message("fit_flags", lang, runtime=answer.runtime))
        parts.append("  " + answer.command)
    else:
        parts.append(fold_text(message("fit_no_flags", lang, gpus=count(answer.gpus))))
    headers = [
        message("fit_rank_header", lang),
        message("fit_fixed_header", lang),
        message("fit_per_token_header", lang),
        message("fit_room_header", lang),
        message("fit_kv_header", lang),
        message("fit_left_header", lang),
    ]

    def gib_cell(value: Fraction) -> str:
        return format_number(gib(value), DECIMALS, lang)

    rows = [
        [
            count(r.rank),
            gib_cell(r.fixed_bytes),
            format_number(r.kv_bytes_per_token, 0, lang)
            if r.kv_bytes_per_token.denominator == 1
            else format_number(r.kv_bytes_per_token, DECIMALS, lang),
            gib_cell(r.room_bytes[0])
            if gib_cell(r.room_bytes[0]) == gib_cell(r.room_bytes[1])
            else f"{gib_cell(r.room_bytes[0])}–{gib_cell(r.room_bytes[1])}",
            gib_cell(r.kv_bytes),
            gib_cell(r.room_bytes[0] - r.kv_bytes),
        ]
        for r in answer.ranks
    ]
    parts += ["", render_table(headers, rows), ""]
    block = format_number(answer.block_size or 0, 0, lang)
    certain = ", ".join(message(f"fit_item_{c}", lang, block_size=block) for c in answer.certain)
    parts.append(fold_text(message("fit_certain", lang, items=certain)))
    if answer.to_measure:
        measure = ", ".join(message(f"fit_item_{c}", lang) for c in answer.to_measure)
        parts.append(fold_text(message("fit_to_measure", lang, items=measure)))
    if answer.alternatives:
        others = ", ".join(
            message(
                "fit_alternative",
                lang,
                kv_dtype=kv,
                tokens=count(tokens),
                sequences=count(sequences),
            )
            for kv, tokens, sequences in answer.alternatives
        )
        parts.append(fold_text(message("fit_alternatives", lang, items=others)))
    parts += [fold_text(message(f"fit_note_{code}", lang)) for code in answer.notes]
    return "\n".join(parts)


def reconciliation_json(result: Reconciliation) -> dict[str, Any]:
    return {
        "runtime": result.runtime,
        "path": result.path,
        "log": result.log_path,
        "log_version": result.version,
        "settings": {setting.name: setting.text() for setting in result.settings},
        "items": [
            {
                "item": i.item,
                "gpu": i.rank,
                "unit": i.unit,
                "computed": i.computed,
                "logged": i.logged,
                "difference": i.difference,
                "status": i.status,
            }
            for i in result.items
        ],
        "notes": list(result.notes),
    }


def _localized(text: str | None, lang: str) -> str:
    """A figure of the log's or the rules' text ("70.51", "1,234", "0.50-0.52") in the
    reader's number format; "–" for none."""
    if text is None:
        return "–"
    import re

    def one(match: re.Match[str]) -> str:
        raw = match.group(0)
        sign = raw[0] if raw[0] in "+-" else ""
        digits = raw.lstrip("+-").replace(",", "")
        places = len(digits.split(".")[1]) if "." in digits else 0
        return sign + format_number(Fraction(digits), places, lang)

    return re.sub(r"[+-]?\d[\d,]*(?:\.\d+)?", one, text)


def _setting_text(setting: Setting, lang: str) -> str:
    """`tensor_parallel_size 2 (log)` in the reader's words: the name is the runtime's."""
    value = message("rec_value_all", lang) if setting.value == "all" else setting.value
    if not setting.source:
        return f"{setting.name} {value}"
    where = message(f"rec_source_{setting.source}", lang)
    if setting.detail:
        where = message("rec_source_detail", lang, source=where, detail=setting.detail)
    return message("rec_setting", lang, name=setting.name, value=value, source=where)


def reconciliation_text(result: Reconciliation, lang: str) -> str:
    from iteragpu.parallel.reconcile import UNIT_WORDS

    version = result.version or message("rec_version_unknown", lang)
    title = message(
        f"rec_title_{'llamacpp' if result.runtime == 'llama.cpp' else 'vllm'}",
        lang,
        log=result.log_path,
        version=version,
        path=result.path,
    )
    settings = ", ".join(_setting_text(setting, lang) for setting in result.settings)
    headers = [
        message("rec_item_header", lang),
        message("rec_gpu_header", lang),
        message("rec_unit_header", lang),
        message("rec_computed_header", lang),
        message("rec_logged_header", lang),
        message("rec_difference_header", lang),
        message("rec_status_header", lang),
    ]
    rows = []
    for i in result.items:
        name, _, extra = i.item.partition(":")
        rows.append(
            [
                message(f"rec_item_{name}", lang, name=extra),
                "–" if i.rank is None else format_number(i.rank, 0, lang),
                message(f"rec_unit_{i.unit}", lang) if i.unit in UNIT_WORDS else i.unit,
                _localized(i.computed, lang),
                _localized(i.logged, lang),
                _localized(i.difference, lang),
                message(f"rec_status_{i.status}", lang),
            ]
        )
    notes = [message(f"rec_note_{code}", lang) for code in result.notes]
    if any(i.item == "weights" and i.status == "differs" for i in result.items):
        notes.insert(0, message("rec_note_weights_loading", lang))
    return "\n".join(
        [
            fold_text(title),
            fold_text(message("rec_settings", lang, settings=settings)),
            "",
            render_table(headers, rows),
            "",
            *(fold_text(n) for n in notes),
        ]
    )
