"""`iteragpu train`'s options, read into one `TrainRequest` and answered: the command's whole work
apart from parsing its arguments (the typer command of `iteragpu.cli.app` hands over the raw
option values; numbers are read in the reader's grammar)."""

from __future__ import annotations

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


def train_output(
    path: str, request: TrainRequest, lang: str, as_json: bool, compare: str | None = None
) -> str:
    """The run sized, as the command prints it: its JSON object or its tables (with a peer's
    estimate beside it when `compare` names one)."""
    from iteragpu.training.plan import payload, plan_training

    plan = plan_training(path, request)
    comparison = None
    if compare is not None:
        from iteragpu.training.compare import compare as compared

        comparison = compared(plan, compare)
    if as_json:
        from iteragpu.cli.json_text import json_text
        from iteragpu.training.compare import compare_json

        data = payload(plan)
        data["compare"] = None if comparison is None else compare_json(comparison)
        return json_text(data)
    from iteragpu.cli.views import train_compare_text, train_text

    text = train_text(plan, lang)
    if comparison is not None:
        text += "\n\n" + train_compare_text(comparison, lang)
    return text
