"""The `iteragpu` command line: exact memory arithmetic and the guides' worked examples.

Exit codes: 0 success; 2 invalid input or usage (one line on stderr, nothing written).

No `from __future__ import annotations` here: typer resolves every command's annotations at
start-up, and evaluating them as strings costs several milliseconds per run (`nox -s bench`).
"""

import json
import sys
from enum import StrEnum
from typing import Annotated, Any, NoReturn

import click
import typer
from typer.core import TyperGroup

from iteragpu import __version__

EXIT_OK = 0
EXIT_INVALID_INPUT = 2


class Lang(StrEnum):
    ko = "ko"
    id = "id"


class OneLineErrors(TyperGroup):
    """Report usage errors as one line on stderr instead of a usage block or a traceback."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            result = super().main(args, prog_name, standalone_mode=False, **extra)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except click.exceptions.Abort:
            _fail("aborted", 1)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else EXIT_OK)
        return result


def _fail(text: str, code: int = EXIT_INVALID_INPUT) -> NoReturn:
    first_line = " ".join(text.split())
    print(f"iteragpu: error: {first_line}", file=sys.stderr)
    sys.exit(code)


EPILOG = "Exit codes: 0 success; 2 invalid input or usage (one-line message on stderr)."

app = typer.Typer(
    cls=OneLineErrors,
    help="Exact GPU memory arithmetic for deep-learning work: weights, KV cache, units, and the "
    "worked examples of the IteraGPU guides. Results are localised with --lang ko|id.",
    epilog=EPILOG,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    add_completion=False,
)
examples_app = typer.Typer(
    cls=OneLineErrors,
    help="List and reproduce the guides' worked examples.",
    rich_markup_mode=None,
    no_args_is_help=True,
)
app.add_typer(examples_app, name="examples")

LangOption = Annotated[Lang, typer.Option("--lang", help="Language of the results: ko or id.")]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON object instead of a table.")
]


def _version(value: bool) -> None:
    if value:
        print(f"iteragpu {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Exact GPU memory arithmetic."""


def _emit_json(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2))


@app.command(epilog=EPILOG)
def weights(
    params: Annotated[
        str, typer.Option("--params", help="Parameter count: 7e9, 7000000000 or 7B.")
    ],
    bits: Annotated[str, typer.Option("--bits", help="Bits per stored value, e.g. 16, 8, 4.")],
    reserve_gib: Annotated[
        str, typer.Option("--reserve-gib", help="Reserve added to the weights, in GiB.")
    ] = "0",
    lang: LangOption = Lang.ko,
    as_json: JsonOption = False,
) -> None:
    """Dense weights (parameters x bits / 8) and the rough range with a reserve in GiB."""
    from iteragpu.parsing import InputError, parse_count, parse_non_negative, parse_positive

    try:
        parameters = parse_count(params, "--params")
        bits_value = parse_positive(bits, "--bits")
        reserve = parse_non_negative(reserve_gib, "--reserve-gib")
    except InputError as error:
        _fail(str(error))
    from iteragpu.reports import weights_json, weights_text
    from iteragpu.weights import estimate_weights

    estimate = estimate_weights(parameters, bits_value, reserve)
    if as_json:
        _emit_json(weights_json(estimate))
    else:
        print(weights_text(estimate, lang.value))


@app.command("kv-cache", epilog=EPILOG)
def kv_cache(
    layers: Annotated[str, typer.Option("--layers", help="Attention layers.")],
    kv_heads: Annotated[
        str, typer.Option("--kv-heads", help="KV heads of the model (not its query heads).")
    ],
    head_dim: Annotated[
        str, typer.Option("--head-dim", help="Head dimension as the model declares it.")
    ],
    tokens: Annotated[str, typer.Option("--tokens", help="Tokens per sequence.")],
    bytes_per_value: Annotated[
        str, typer.Option("--bytes-per-value", help="Bytes per stored value; may be fractional.")
    ],
    sequences: Annotated[str, typer.Option("--sequences", help="Sequences held at once.")] = "1",
    window: Annotated[
        str | None, typer.Option("--window", help="Sliding window: keeps min(tokens, window).")
    ] = None,
    static_max_tokens: Annotated[
        str | None,
        typer.Option("--static-max-tokens", help="Static cache: allocates this maximum up front."),
    ] = None,
    lang: LangOption = Lang.ko,
    as_json: JsonOption = False,
) -> None:
    """KV cache: 2 (K and V) x layers x KV heads x head dim x tokens kept x bytes x sequences."""
    from iteragpu.kv_cache import KVCacheSpec
    from iteragpu.parsing import InputError, parse_count, parse_positive
    from iteragpu.reports import kv_json, kv_text

    try:
        spec = KVCacheSpec(
            layers=parse_count(layers, "--layers"),
            kv_heads=parse_count(kv_heads, "--kv-heads"),
            head_dim=parse_count(head_dim, "--head-dim"),
            tokens=parse_count(tokens, "--tokens"),
            bytes_per_value=parse_positive(bytes_per_value, "--bytes-per-value"),
            sequences=parse_count(sequences, "--sequences"),
            window=None if window is None else parse_count(window, "--window"),
            static_max_tokens=None
            if static_max_tokens is None
            else parse_count(static_max_tokens, "--static-max-tokens"),
        )
    except (InputError, ValueError) as error:
        _fail(str(error))
    if as_json:
        _emit_json(kv_json(spec))
    else:
        print(kv_text(spec, lang.value))


@app.command(epilog=EPILOG)
def convert(
    quantity: Annotated[
        str, typer.Argument(help="A byte quantity: '24e9 B', '80 GB', '143771 MiB'.")
    ],
    unit: Annotated[
        str, typer.Argument(help="Target unit: B, kB, MB, GB, KiB, MiB, GiB, Gb (bits)...")
    ],
    decimals: Annotated[
        int, typer.Option("--decimals", min=0, max=30, help="Decimals shown in the table.")
    ] = 2,
    lang: LangOption = Lang.ko,
    as_json: JsonOption = False,
) -> None:
    """Convert a byte quantity exactly; GB (10^9 B) and GiB (2^30 B) are never mixed."""
    from iteragpu.quantity import QuantityError, parse_bytes, unit_bytes
    from iteragpu.reports import convert_json, convert_text

    try:
        byte_count = parse_bytes(quantity)
        per_unit = unit_bytes(unit)
    except QuantityError as error:
        _fail(str(error))
    if as_json:
        _emit_json(convert_json(byte_count, per_unit, unit.strip()))
    else:
        print(
            convert_text(quantity.strip(), byte_count, per_unit, unit.strip(), decimals, lang.value)
        )


def _card_requirement_pairs(values: list[str] | None, option: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values or []:
        card_id, sep, requirement = value.partition(":")
        if not sep or not card_id or not requirement:
            _fail(f"{option} takes CARD:REQUIREMENT (e.g. rtx-4090:context), got {value!r}")
        pairs.append((card_id, requirement))
    return pairs


@app.command(epilog=EPILOG)
def shortlist(
    need_gib: Annotated[str, typer.Option("--need-gib", help="Memory the load needs, in GiB.")],
    days: Annotated[str, typer.Option("--days", help="Campaign length in days.")],
    cards: Annotated[str, typer.Option("--cards", help="Cards per package.")] = "1",
    margin_gib: Annotated[
        str, typer.Option("--margin-gib", help="Margin an evidence run must leave, in GiB.")
    ] = "0",
    require: Annotated[
        list[str] | None,
        typer.Option("--require", help="Another requirement (context, software...); repeatable."),
    ] = None,
    confirmed: Annotated[
        list[str] | None,
        typer.Option("--confirmed", help="CARD:REQUIREMENT your evidence confirms; repeatable."),
    ] = None,
    failed: Annotated[
        list[str] | None,
        typer.Option("--failed", help="CARD:REQUIREMENT that failed; repeatable."),
    ] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option("--evidence", help="A lab `measure` result JSON on a card model; repeatable."),
    ] = None,
    lang: LangOption = Lang.ko,
    as_json: JsonOption = False,
) -> None:
    """Rank the catalog's cards for a need: status per requirement, cost, nominal margin."""
    from pathlib import Path

    from iteragpu.evidence import EvidenceError, read_evidence
    from iteragpu.parsing import InputError, parse_count, parse_non_negative, parse_positive
    from iteragpu.reports import shortlist_json, shortlist_text
    from iteragpu.shortlist import shortlist as rank_cards

    try:
        need = parse_positive(need_gib, "--need-gib")
        day_count = parse_count(days, "--days")
        card_count = parse_count(cards, "--cards")
        margin = parse_non_negative(margin_gib, "--margin-gib")
        runs = [read_evidence(Path(p)) for p in evidence or []]
        candidates = rank_cards(
            need,
            day_count,
            cards=card_count,
            margin_gib=margin,
            requirements=require or [],
            confirmed=_card_requirement_pairs(confirmed, "--confirmed"),
            failed=_card_requirement_pairs(failed, "--failed"),
            evidence=runs,
        )
    except (InputError, EvidenceError, ValueError) as error:
        _fail(str(error))
    if as_json:
        _emit_json(shortlist_json(candidates, need, day_count, card_count))
    else:
        print(shortlist_text(candidates, need, day_count, card_count, lang.value))


@examples_app.command("list")
def examples_list(lang: LangOption = Lang.ko, as_json: JsonOption = False) -> None:
    """List the worked examples of the guides."""
    from iteragpu.reports import examples_list_json, examples_list_text

    if as_json:
        _emit_json(examples_list_json())
    else:
        print(examples_list_text(lang.value))


@examples_app.command("run")
def examples_run(
    example_id: Annotated[str | None, typer.Argument(metavar="ID", help="An example id.")] = None,
    run_all: Annotated[bool, typer.Option("--all", help="Run every example.")] = False,
    lang: LangOption = Lang.ko,
    as_json: JsonOption = False,
) -> None:
    """Reproduce worked examples: inputs, exact values and the figures the guides state."""
    from iteragpu.examples import example, registry
    from iteragpu.reports import example_json, example_text

    if run_all == (example_id is not None):
        _fail("give one example ID or --all")
    try:
        chosen = list(registry().values()) if run_all else [example(example_id or "")]
    except KeyError as error:
        _fail(str(error.args[0]))
    if as_json:
        _emit_json({"examples": [example_json(e, lang.value) for e in chosen]})
    else:
        print("\n\n".join(example_text(e, lang.value) for e in chosen))


def main() -> None:
    """Console-script entry point."""
    app(prog_name="iteragpu")
