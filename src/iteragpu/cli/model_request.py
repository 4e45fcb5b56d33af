"""`iteragpu model`'s options, read into one request and answered: the command's whole work
apart from parsing its arguments.

Both ways into the command use it: the typer command of `iteragpu.cli.app` and the fast path of
`iteragpu.cli.fast`, which answers the common invocations without importing click or typer.
Each hands over the raw option values as typer gives them (strings, None for an option not
given, booleans for the flags), so that the two can only answer alike: the same numbers read in
the reader's grammar, the same refusals, the same output.

Imports neither click nor typer (tests/test_import_graph.py pins it), and holds no dataclass:
creating one costs start-up that a whole run of the peer does not spend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iteragpu.cli.language import reads_decimal_comma
from iteragpu.cli.output import fail
from iteragpu.i18n.catalogue import N_, translate

if TYPE_CHECKING:
    from iteragpu.i18n.sheet import LoadSheet
    from iteragpu.models.model import ModelSizing
    from iteragpu.parallel.records import SplitRequest


class ModelRequest:
    """What `iteragpu model` was asked: the model's path, `size_model`'s settings, the campaign's
    days for the short list (None without --shortlist), the output's language and form (the
    load sheet's, `markdown` or `json`, with --sheet)."""

    __slots__ = ("as_json", "days", "lang", "path", "settings", "sheet", "split")

    def __init__(
        self,
        path: str,
        settings: dict[str, Any],
        days: int | None,
        lang: str,
        as_json: bool,
        split: SplitRequest | None = None,
        sheet: str | None = None,
    ) -> None:
        self.path = path
        self.settings = settings
        self.days = days
        self.lang = lang
        self.as_json = as_json
        self.split = split  # several GPUs (iteragpu.parallel): a plan per rank
        self.sheet = sheet  # the load sheet (iteragpu.i18n.sheet) instead of the table


def model_request(
    path: str,
    tokens: str,
    sequences: str = "1",
    kv_bytes_per_value: str | None = None,
    kv_dtype: str | None = None,
    bits: str | None = None,
    dtype: str | None = None,
    reserve_gib: str = "0",
    cache: str = "dynamic",
    static_max_tokens: str | None = None,
    mla_layout: str = "mla_latent",
    with_shortlist: bool = False,
    days: str | None = None,
    runtime: str | None = None,
    tp: str | None = None,
    pp: str | None = None,
    ep: bool = False,
    pp_partition: str | None = None,
    gpu_layers: str | None = None,
    tensor_split: str | None = None,
    parallel: str | None = None,
    sheet: str | None = None,
    *,
    lang: str,
    as_json: bool = False,
) -> ModelRequest:
    """The request of the raw option values (the defaults are the command's), the numbers read
    in `lang`'s grammar; `InputError` for a value refused.

    --days without --shortlist, or --shortlist without --days, ends the run at once with its one
    line on stderr (exit 2), before any number is read, as the command always has; so does
    --sheet with --json (the sheet has its own JSON: --sheet json) or with --shortlist (the
    sheet states the load, not the cards: the short list is its own run).
    """
    from iteragpu.core import kv_cache as kv
    from iteragpu.core.numbers import (
        parse_count,
        parse_non_negative,
        parse_positive,
        parse_tokens,
    )
    from iteragpu.core.weights import MAX_BITS, MAX_RESERVE_GIB

    comma = reads_decimal_comma(lang)
    if days is not None and not with_shortlist:
        fail(translate(N_("--days applies to --shortlist"), lang), lang)
    if with_shortlist and days is None:
        fail(translate(N_("--shortlist needs --days"), lang), lang)
    if sheet is not None and as_json:
        fail(translate(N_("give --sheet json or --json, not both"), lang), lang)
    if sheet is not None and with_shortlist:
        fail(
            translate(
                N_("--sheet prints the load sheet alone: run --shortlist without --sheet"), lang
            ),
            lang,
        )
    token_count = parse_tokens(tokens, "--tokens", maximum=kv.MAX_TOKENS, decimal_comma=comma)
    static = None
    if static_max_tokens is not None:
        static = parse_tokens(
            static_max_tokens, "--static-max-tokens", maximum=kv.MAX_TOKENS, decimal_comma=comma
        )
    settings: dict[str, Any] = {
        "tokens": token_count,
        "sequences": parse_count(
            sequences, "--sequences", maximum=kv.MAX_SEQUENCES, decimal_comma=comma
        ),
        "kv_dtype": kv_dtype,
        "dtype": dtype,
        "reserve_gib": parse_non_negative(
            reserve_gib, "--reserve-gib", maximum=MAX_RESERVE_GIB, decimal_comma=comma
        ),
        "cache": cache,
        "static_max_tokens": static_tokens(static, token_count, lang),
        "mla_layout": mla_layout,
    }
    if kv_bytes_per_value is not None:
        settings["kv_bytes_per_value"] = parse_positive(
            kv_bytes_per_value,
            "--kv-bytes-per-value",
            maximum=kv.MAX_BYTES_PER_VALUE,
            decimal_comma=comma,
        )
    if bits is not None:
        settings["bits"] = parse_positive(bits, "--bits", maximum=MAX_BITS, decimal_comma=comma)
    day_count = None if days is None else parse_count(days, "--days", decimal_comma=comma)
    raw_split = {
        "runtime": runtime,
        "tp": tp,
        "pp": pp,
        "pp_partition": pp_partition,
        "gpu_layers": gpu_layers,
        "tensor_split": tensor_split,
        "parallel": parallel,
    }
    split = None
    if ep or any(value is not None for value in raw_split.values()):
        split = split_request(path, settings, raw_split, ep, comma)
    return ModelRequest(path, settings, day_count, lang, as_json, split, sheet)


def split_request(
    path: str, settings: dict[str, Any], raw: dict[str, str | None], ep: bool, comma: bool
) -> SplitRequest:
    """The request of a split over several GPUs (`iteragpu.parallel`): the runtime's options
    read, the single-GPU cache options refused (the runtime's own cache rules decide)."""
    from iteragpu.core.numbers import InputError, parse_count, parse_non_negative
    from iteragpu.parallel.records import SplitRequest

    for option, key, default in (
        ("--cache", "cache", "dynamic"),
        ("--static-max-tokens", "static_max_tokens", None),
        ("--mla-layout", "mla_layout", "mla_latent"),
        ("--kv-bytes-per-value", "kv_bytes_per_value", None),
    ):
        if settings.get(key, default) != default:
            raise InputError(
                "{option} does not apply to a split over GPUs: the runtime's own cache rules "
                "decide (--runtime)",
                "split_single_gpu_option",
                option=option,
            )

    def count(option: str, value: str | None, default: int) -> int:
        return default if value is None else parse_count(value, option, decimal_comma=comma)

    partition = None
    if raw["pp_partition"] is not None:
        # VLLM_PP_LAYER_PARTITION's own syntax: whole counts separated by commas.
        parts = raw["pp_partition"].split(",")
        if not all(part.strip().isdigit() and part.strip().isascii() for part in parts):
            raise InputError(
                "--pp-partition takes whole layer counts separated by commas "
                "(VLLM_PP_LAYER_PARTITION), got {value}",
                "bad_pp_partition",
                value=repr(raw["pp_partition"])[:60],
            )
        partition = tuple(int(part) for part in parts)
    shares = None
    if raw["tensor_split"] is not None:
        # llama.cpp's -ts syntax: numbers with a dot, separated by commas or slashes.
        import re

        pieces = [p for p in re.split(r"[,/]+", raw["tensor_split"]) if p]
        shares = tuple(parse_non_negative(p, "--tensor-split") for p in pieces)
        if not shares:
            raise InputError(
                "--tensor-split takes shares of 0 or more, one per GPU", "bad_tensor_split"
            )
    gpu_layers = None
    if raw["gpu_layers"] is not None:
        text = raw["gpu_layers"]
        gpu_layers = 0 if text.strip() == "0" else parse_count(text, "--gpu-layers")
    return SplitRequest(
        path,
        settings["tokens"],
        settings["sequences"],
        raw["runtime"] or "transformers",
        count("--tp", raw["tp"], 1),
        count("--pp", raw["pp"], 1),
        ep,
        partition,
        gpu_layers,
        shares,
        count("--parallel", raw["parallel"], 1),
        settings.get("dtype"),
        settings.get("bits"),
        settings.get("kv_dtype"),
        settings["reserve_gib"],
    )


def model_output(request: ModelRequest) -> str:
    """The model sized (and the short list with --days), as the command prints it: its JSON
    object or its table, without the final newline; `InputError` for what the reader refuses."""
    # Imported here: only this command pays for reading models.
    if request.split is not None:
        return _split_output(request)
    from iteragpu.models.errors import UnsupportedModelError
    from iteragpu.models.model import size_model

    try:
        sizing: ModelSizing = size_model(request.path, **request.settings)
    except UnsupportedModelError as refusal:
        # A family the reader does not know: its weights from the files, if it has any.
        return _partial_output(request, refusal)
    if request.sheet is not None:
        from iteragpu.cli.load_sheet import sizing_sheet

        return _sheet_output(request, sizing_sheet(sizing, request.path, request.settings))
    candidates = need = None
    if request.days is not None:
        from iteragpu.cli.needs import model_need
        from iteragpu.gpus.shortlist import shortlist as rank_cards

        # Everything computed (its sum is the total); the activations and the prompt's
        # temporaries still to measure, so a lower bound.
        need = model_need(sizing)
        candidates = rank_cards(need.gib, request.days, need_missing=need.missing)
    if request.as_json:
        from iteragpu.cli.json_text import json_text
        from iteragpu.cli.payloads import model_json

        return json_text(model_json(sizing, candidates, request.days, need))
    from iteragpu.cli.views import model_text

    return model_text(sizing, candidates, request.days, request.lang, need)


def _split_output(request: ModelRequest) -> str:
    """A plan per GPU (and the short list of packages by their fullest rank, with --days)."""
    from iteragpu.parallel.plan import plan_split

    assert request.split is not None
    plan = plan_split(request.split)
    if request.sheet is not None:
        from iteragpu.cli.load_sheet import split_sheet

        return _sheet_output(request, split_sheet(plan, request.split))
    candidates = need = None
    gpus = len(plan.ranks)
    if request.days is not None:
        from iteragpu.cli.needs import rank_need
        from iteragpu.gpus.shortlist import shortlist as rank_cards

        need = rank_need(plan.first_to_fill)
        candidates = rank_cards(need.gib, request.days, cards=gpus, need_missing=need.missing)
    if request.as_json:
        from iteragpu.cli.json_text import json_text
        from iteragpu.cli.payloads import split_json

        return json_text(split_json(plan, request.path, candidates, request.days, need))
    from iteragpu.cli.views import split_text

    return split_text(plan, request.path, candidates, request.days, request.lang, need)


def _sheet_output(request: ModelRequest, sheet: LoadSheet) -> str:
    """The load sheet, as --sheet asks: Markdown in the reader's language, or its JSON."""
    if request.sheet == "json":
        from iteragpu.cli.json_text import json_text
        from iteragpu.i18n.sheet import sheet_json

        return json_text(sheet_json(sheet))
    from iteragpu.i18n.sheet import sheet_markdown

    return sheet_markdown(sheet, request.lang)


def _partial_output(request: ModelRequest, refusal: Exception) -> str:
    """The weights of a model whose cache the reader cannot size, the total marked incomplete;
    the refusal itself where there are no weight files either."""
    from iteragpu.core.numbers import InputError
    from iteragpu.models.errors import UnsupportedModelError
    from iteragpu.models.model import partial_payload, size_weights_only

    assert isinstance(refusal, UnsupportedModelError)
    sizing = size_weights_only(request.path, refusal, request.settings["reserve_gib"])
    if request.sheet is not None:
        raise InputError(
            "{path}: its cache is unknown, so the load sheet's totals would be incomplete "
            "(--sheet); run without --sheet for its weights",
            "sheet_incomplete_total",
            path=str(request.path),
        )
    if request.days is not None:
        raise InputError(
            "{path}: its cache is unknown, so its total is incomplete and cannot be compared "
            "with cards (--shortlist); give iteragpu shortlist a need that covers the cache",
            "shortlist_incomplete_total",
            path=str(request.path),
        )
    if request.as_json:
        from iteragpu.cli.json_text import json_text

        return json_text({**partial_payload(sizing), "shortlist": None})
    from iteragpu.cli.views import partial_model_text

    return partial_model_text(sizing, request.lang)


def static_tokens(static: int | None, tokens: int, lang: str) -> int | None:
    """A static cache's size, refused below the tokens it must hold (said in `lang`)."""
    from iteragpu.core.numbers import InputError
    from iteragpu.i18n.numbers import format_number

    if static is not None and static < tokens:
        raise InputError(
            "a static cache of {static} tokens cannot hold {tokens} tokens "
            "(--static-max-tokens is below --tokens)",
            "static_below_tokens",
            static=format_number(static, 0, lang),
            tokens=format_number(tokens, 0, lang),
        )
    return static
