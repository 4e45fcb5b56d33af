"""`iteragpu fit`'s options read into one request (`iteragpu.parallel.fit.FitRequest`) and
answered; and `iteragpu report --vllm-log/--llama-log`'s, read into a reconciliation.

The card comes from the catalogue (`--gpu`, its declared capacity: the total a device
reports) or from `--capacity-bytes`; numbers are read in the reader's grammar. Imports neither
click nor typer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from iteragpu.cli.fit_output import CardName
from iteragpu.cli.language import reads_decimal_comma
from iteragpu.core.numbers import InputError

if TYPE_CHECKING:
    from iteragpu.parallel.fit import FitRequest

MAX_CAPACITY_BYTES = 10**15  # a petabyte: above any card
_VLLM_GIB = re.compile(r"^-?\d+(?:\.\d+)?$")  # how vLLM prints GiB: round(x, 2)'s repr


def card_capacity(
    gpu: str | None, capacity_bytes: str | None, comma: bool
) -> tuple[int, CardName | None]:
    """Each GPU's total: the catalogue card's declared bytes, or the bytes given."""
    from iteragpu.core.numbers import parse_count

    if gpu is not None and capacity_bytes is not None:
        raise InputError("give --gpu or --capacity-bytes, not both", "fit_gpu_and_capacity")
    if capacity_bytes is not None:
        value = parse_count(
            capacity_bytes, "--capacity-bytes", maximum=MAX_CAPACITY_BYTES, decimal_comma=comma
        )
        return value, None
    if gpu is None:
        raise InputError(
            "give the card: --gpu (a catalogue card) or --capacity-bytes (its total memory)",
            "fit_no_card",
        )
    from iteragpu.gpus.declared import declared_cards

    cards = declared_cards()
    found = next((c for c in cards if c[0] == gpu), None)
    if found is None:
        raise InputError(
            "unknown card {card} (the catalogue has {known}); for another card give "
            "--capacity-bytes, its total memory",
            "fit_unknown_card",
            card=repr(gpu)[:40],
            known=", ".join(c[0] for c in cards),
        )
    card_id, name, declared = found
    if declared is None:
        raise InputError(
            "{card}: the catalogue holds no declared capacity for it (no public output of its "
            "total was found); give --capacity-bytes",
            "fit_card_undeclared",
            card=card_id,
        )
    return declared, CardName(card_id, name)


def fit_request(
    path: str,
    *,
    gpu: str | None = None,
    capacity_bytes: str | None = None,
    gpus: str | None = None,
    runtime: str = "vllm",
    tokens: str | None = None,
    sequences: str | None = None,
    tp: str | None = None,
    pp: str | None = None,
    ep: bool = False,
    kv_dtype: str | None = None,
    dtype: str | None = None,
    bits: str | None = None,
    reserve_gib: str | None = None,
    utilization: str | None = None,
    kv_sizing: str = "extensible",
    block_size: str | None = None,
    available_kv_gib: str | None = None,
    gpu_layers: str | None = None,
    tensor_split: str | None = None,
    lang: str,
) -> tuple[FitRequest, CardName | None]:
    """The request of the raw option values, the numbers read in `lang`'s grammar;
    `InputError` for a value refused."""
    from iteragpu.core.kv_cache import MAX_SEQUENCES, MAX_TOKENS
    from iteragpu.core.numbers import (
        exact_decimal_text,
        parse_count,
        parse_non_negative,
        parse_positive,
        parse_tokens,
    )
    from iteragpu.core.weights import MAX_BITS, MAX_RESERVE_GIB
    from iteragpu.parallel.fit import FitRequest

    comma = reads_decimal_comma(lang)
    capacity, card = card_capacity(gpu, capacity_bytes, comma)

    def count(option: str, text: str | None, maximum: int | None = None) -> int | None:
        if text is None:
            return None
        return parse_count(text, option, maximum=maximum, decimal_comma=comma)

    shares = None
    if tensor_split is not None:
        pieces = [p for p in re.split(r"[,/]+", tensor_split) if p]
        shares = tuple(parse_non_negative(p, "--tensor-split") for p in pieces)
        if not shares:
            raise InputError(
                "--tensor-split takes shares of 0 or more, one per GPU", "bad_tensor_split"
            )
    layers = None
    if gpu_layers is not None:
        layers = 0 if gpu_layers.strip() == "0" else count("--gpu-layers", gpu_layers)
    share = None
    if utilization is not None:
        share = exact_decimal_text(
            parse_positive(utilization, "--utilization", maximum=1, decimal_comma=comma)
        )
        if "." not in share:
            share += ".0"
    figures = None
    if available_kv_gib is not None:
        # vLLM's own text ("Available KV cache memory: 70.51 GiB"), one figure or one per GPU.
        pieces = [p.strip() for p in available_kv_gib.split(",")]
        if not all(_VLLM_GIB.match(p) for p in pieces):
            raise InputError(
                "--available-kv-gib takes the figure vLLM printed, with a dot (70.51), or one "
                "per GPU separated by commas, got {value}",
                "fit_bad_available",
                value=repr(available_kv_gib)[:40],
            )
        figures = tuple(pieces)
    reserve = None
    if reserve_gib is not None:
        reserve = parse_non_negative(
            reserve_gib, "--reserve-gib", maximum=MAX_RESERVE_GIB, decimal_comma=comma
        )
    return (
        FitRequest(
            path,
            runtime,
            capacity,
            count("--gpus", gpus, 4096),
            None
            if tokens is None
            else parse_tokens(tokens, "--tokens", maximum=MAX_TOKENS, decimal_comma=comma),
            count("--sequences", sequences, MAX_SEQUENCES),
            count("--tp", tp, 4096),
            count("--pp", pp, 4096),
            ep,
            kv_dtype,
            dtype,
            None
            if bits is None
            else parse_positive(bits, "--bits", maximum=MAX_BITS, decimal_comma=comma),
            reserve,
            share,
            kv_sizing,
            64 if block_size is None else int(count("--block-size", block_size, 4096) or 64),
            figures,
            layers,
            shares,
        ),
        card,
    )


def fit_output(request: FitRequest, card: CardName | None, lang: str, as_json: bool) -> str:
    """The answer as the command prints it, without the final newline."""
    from iteragpu.parallel.fit import fit

    answer = fit(request)
    if as_json:
        from iteragpu.cli.fit_output import fit_json
        from iteragpu.cli.json_text import json_text

        return json_text(fit_json(answer, card))
    from iteragpu.cli.fit_output import fit_text

    return fit_text(answer, card, lang)


def log_report(
    path: str,
    *,
    vllm_log: str | None,
    llama_log: str | None,
    gpu: str | None = None,
    capacity_bytes: str | None = None,
    tp: str | None = None,
    pp: str | None = None,
    ep: bool = False,
    kv_dtype: str | None = None,
    dtype: str | None = None,
    utilization: str | None = None,
    tensor_split: str | None = None,
    lang: str,
    as_json: bool = False,
) -> str:
    """A runtime's start-up log beside the plan of the same model and settings, as the
    command prints it; `InputError` (`LogError` among them) for what is refused."""
    from pathlib import Path

    from iteragpu.core.numbers import exact_decimal_text, parse_count, parse_positive
    from iteragpu.parallel import reconcile, runtime_logs

    comma = reads_decimal_comma(lang)
    if (vllm_log is None) == (llama_log is None):
        raise InputError("give one log: --vllm-log or --llama-log", "report_one_log")
    if vllm_log is not None:
        if tensor_split is not None:
            raise InputError("--tensor-split is llama.cpp's (--llama-log)", "report_llama_option")
        capacity = None
        if gpu is not None or capacity_bytes is not None:
            capacity, _ = card_capacity(gpu, capacity_bytes, comma)
        share = None
        if utilization is not None:
            share = exact_decimal_text(
                parse_positive(utilization, "--utilization", maximum=1, decimal_comma=comma)
            )
        text = runtime_logs.read_text(Path(vllm_log), "vLLM")
        log = runtime_logs.parse_vllm(text, vllm_log)
        result = reconcile.reconcile_vllm(
            log,
            path,
            vllm_log,
            tp=None if tp is None else parse_count(tp, "--tp", maximum=4096, decimal_comma=comma),
            pp=None if pp is None else parse_count(pp, "--pp", maximum=4096, decimal_comma=comma),
            ep=ep,
            kv_dtype=kv_dtype,
            dtype=dtype,
            capacity_bytes=capacity,
            utilization=share,
        )
    else:
        assert llama_log is not None
        for option, given in (
            ("--tp", tp is not None),
            ("--pp", pp is not None),
            ("--ep", ep),
            ("--kv-dtype", kv_dtype is not None),
            ("--dtype", dtype is not None),
            ("--utilization", utilization is not None),
            ("--gpu", gpu is not None),
            ("--capacity-bytes", capacity_bytes is not None),
        ):
            if given:
                raise InputError(
                    "{option} does not apply to a llama.cpp log: its settings are read from "
                    "the log",
                    "report_vllm_option",
                    option=option,
                )
        shares = None
        if tensor_split is not None:
            from iteragpu.core.numbers import parse_non_negative

            pieces = [p for p in re.split(r"[,/]+", tensor_split) if p]
            shares = tuple(parse_non_negative(p, "--tensor-split") for p in pieces)
        text = runtime_logs.read_text(Path(llama_log), "llama.cpp")
        llama = runtime_logs.parse_llama(text, llama_log)
        result = reconcile.reconcile_llama(llama, path, llama_log, tensor_split=shares)
    from iteragpu.cli import fit_output

    if as_json:
        from iteragpu.cli.json_text import json_text

        return json_text(fit_output.reconciliation_json(result))
    return fit_output.reconciliation_text(result, lang)
