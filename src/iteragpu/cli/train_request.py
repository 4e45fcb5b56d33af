"""`iteragpu train`'s options, read into one `TrainRequest` (and, for the command's own
options, one `TrainCommand`) and answered: the command's whole work apart from parsing its
arguments (the typer command of `iteragpu.cli.app` hands over the raw option values; numbers
are read in the reader's grammar).

With --shortlist, the catalogue's cards are compared with the fullest GPU's need as `model
--shortlist` compares them: its model states and --reserve-gib (`iteragpu.cli.needs`), the
activations and the step's temporaries still to measure, so the need is a lower bound.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from iteragpu.cli.language import reads_decimal_comma
from iteragpu.core.numbers import InputError
from iteragpu.training.records import ALL_LINEAR, TrainRequest

MAX_GPUS: Final = 100_000
MAX_RANK: Final = 65_536
MAX_STEPS: Final = 10**9


class TrainInputError(InputError):
    """An option of `iteragpu train` that cannot be read."""


def _names(text: str | None, what: str) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise TrainInputError("{what} names no module", "no_names", what=what)
    return names


def train_request(
    *,
    method: str,
    precision: str,
    optimizer: str,
    fused: bool,
    lora_r: str,
    lora_targets: str | None,
    lora_bias: str,
    lora_parameters: str | None = None,
    modules_to_save: str | None,
    adapter_dtype: str | None,
    quant_type: str,
    double_quant: bool,
    shard: str,
    gpus: str,
    micro_batch: str | None,
    sequence_length: str | None,
    grad_accum: str,
    lang: str,
) -> TrainRequest:
    """The request of the raw option values, numbers read in `lang`'s grammar; `InputError`
    for a value refused (the layers below refuse what they cannot state)."""
    from iteragpu.core.numbers import parse_count, parse_tokens

    comma = reads_decimal_comma(lang)

    def count(text: str | None, what: str, maximum: int) -> int | None:
        return (
            None if text is None else parse_count(text, what, maximum=maximum, decimal_comma=comma)
        )

    targets = _names(lora_targets, "--lora-targets")
    if targets == (ALL_LINEAR,):
        targets = (ALL_LINEAR,)
    rank = count(lora_r, "--lora-r", MAX_RANK)
    sequence = None
    if sequence_length is not None:
        sequence = parse_tokens(
            sequence_length, "--sequence-length", maximum=MAX_STEPS, decimal_comma=comma
        )
    settings: dict[str, Any] = {
        "method": method,
        "precision": precision,
        "optimizer": optimizer,
        "fused": fused,
        "lora_r": rank,
        "lora_targets": targets,
        "lora_parameters": _names(lora_parameters, "--lora-parameters") or (),
        "lora_bias": lora_bias,
        "modules_to_save": _names(modules_to_save, "--modules-to-save") or (),
        "adapter_dtype": adapter_dtype,
        "quant_type": quant_type,
        "double_quant": double_quant,
        "shard": shard,
        "gpus": count(gpus, "--gpus", MAX_GPUS),
        "micro_batch": count(micro_batch, "--micro-batch", MAX_STEPS),
        "sequence_length": sequence,
        "grad_accum": count(grad_accum, "--grad-accum", MAX_STEPS),
    }
    return TrainRequest(**settings)


class TrainCommand:
    """What `iteragpu train` was asked beside the run itself: the model's path, the run
    (`TrainRequest`), a peer to compare with, the campaign's days for the short list (None
    without --shortlist) and the reserve added to its need, the output's language and form."""

    __slots__ = ("as_json", "compare", "days", "lang", "path", "request", "reserve_gib")

    def __init__(
        self,
        path: str,
        request: TrainRequest,
        lang: str,
        as_json: bool = False,
        compare: str | None = None,
        days: int | None = None,
        reserve_gib: Fraction = Fraction(0),
    ) -> None:
        self.path = path
        self.request = request
        self.lang = lang
        self.as_json = as_json
        self.compare = compare
        self.days = days
        self.reserve_gib = reserve_gib


def train_command(
    path: str,
    *,
    with_shortlist: bool = False,
    days: str | None = None,
    reserve_gib: str | None = None,
    compare: str | None = None,
    lang: str,
    as_json: bool = False,
    **options: Any,
) -> TrainCommand:
    """The command of the raw option values: the run's own `options` read by
    `train_request` (after the checks below, so that a misplaced option is said first, as
    `model` says it); `InputError` for a value refused.

    --days without --shortlist, --shortlist without --days, or --reserve-gib without
    --shortlist (the reserve is added to the short list's need, nothing else) ends the run at
    once with its one line on stderr (exit 2), before any number is read."""
    from iteragpu.cli.output import fail
    from iteragpu.core.numbers import parse_count, parse_non_negative
    from iteragpu.core.weights import MAX_RESERVE_GIB
    from iteragpu.i18n.catalogue import N_, translate

    if days is not None and not with_shortlist:
        fail(translate(N_("--days applies to --shortlist"), lang), lang)
    if with_shortlist and days is None:
        fail(translate(N_("--shortlist needs --days"), lang), lang)
    if reserve_gib is not None and not with_shortlist:
        fail(translate(N_("--reserve-gib applies to --shortlist"), lang), lang)
    comma = reads_decimal_comma(lang)
    run = train_request(**options, lang=lang)
    reserve = Fraction(0)
    if reserve_gib is not None:
        reserve = parse_non_negative(
            reserve_gib, "--reserve-gib", maximum=MAX_RESERVE_GIB, decimal_comma=comma
        )
    day_count = None if days is None else parse_count(days, "--days", decimal_comma=comma)
    return TrainCommand(path, run, lang, as_json, compare, day_count, reserve)


def train_output(command: TrainCommand) -> str:
    """The run sized, as the command prints it: its JSON object or its tables (with a peer's
    estimate beside it when `compare` names one, and the short list with --shortlist)."""
    from iteragpu.training.plan import payload, plan_training

    plan = plan_training(command.path, command.request)
    comparison = None
    if command.compare is not None:
        from iteragpu.training.compare import compare as compared

        comparison = compared(plan, command.compare)
    candidates = need = None
    if command.days is not None:
        from iteragpu.cli.needs import train_need
        from iteragpu.core.units import from_unit
        from iteragpu.gpus.shortlist import shortlist as rank_cards

        need = train_need(plan, from_unit(command.reserve_gib, "GiB"))
        candidates = rank_cards(
            need.gib, command.days, cards=command.request.gpus, need_missing=need.missing
        )
    if command.as_json:
        from iteragpu.cli.json_text import json_text
        from iteragpu.cli.payloads import train_json
        from iteragpu.training.compare import compare_json

        data = payload(plan)
        data["compare"] = None if comparison is None else compare_json(comparison)
        return json_text(train_json(data, candidates, need, command.days))
    from iteragpu.cli.views import train_compare_text, train_text

    lang = command.lang
    text = train_text(plan, lang)
    if comparison is not None:
        text += "\n\n" + train_compare_text(comparison, lang)
    if candidates is not None and need is not None and command.days is not None:
        from iteragpu.cli.views import shortlist_text

        text += "\n\n" + shortlist_text(candidates, need, command.days, command.request.gpus, lang)
    return text
