"""The `iteragpu` command line: exact memory arithmetic and the guides' worked examples.

Exit codes: 0 success; 2 invalid input or usage (one line on stderr, nothing written).

No `from __future__ import annotations` here: typer resolves every command's annotations at
start-up, and evaluating them as strings costs several milliseconds per run (`nox -s bench`).
"""

import contextlib
import io
import os
import sys
from typing import Annotated, Any, NoReturn

import click
import typer
from typer.core import TyperGroup

from iteragpu import __version__
from iteragpu.cli.options import (
    DEFAULT_LANG,
    EPILOG,
    EXIT_INVALID_INPUT,
    EXIT_OK,
    LANG_CHOICES,
    JsonOption,
    LangOption,
)

MAX_DECIMALS = 30


class OneLineErrors(TyperGroup):
    """Report usage errors as one line on stderr instead of a usage block or a traceback.

    A command's output is collected and written once at the end, so that a failed write (a full
    disk, a closed pipe) is one error line too, whichever command printed it.
    """

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        output = io.StringIO()
        try:
            with contextlib.redirect_stdout(output):
                result = super().main(args, prog_name, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            # Its message is the whole help text; one line names the commands instead.
            ctx = error.ctx
            group = ctx.command if ctx is not None else self
            names = ", ".join(group.list_commands(ctx)) if isinstance(group, click.Group) else ""
            where = ctx.command_path if ctx is not None else "iteragpu"
            _fail(f"missing command ({names}); see {where} --help", error.exit_code)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except click.exceptions.Abort:
            _fail("aborted", 1)
        _write_output(output.getvalue())
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else EXIT_OK)
        return result


def _write_output(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, UnicodeError) as error:
        # Send what is still buffered to /dev/null: otherwise the interpreter's own flush at
        # exit fails again and prints a traceback-like report after our one line.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _fail(f"could not write the output: {getattr(error, 'strerror', None) or error}")


def _fail(text: str, code: int = EXIT_INVALID_INPUT) -> NoReturn:
    first_line = " ".join(text.split())
    print(f"iteragpu: error: {first_line}", file=sys.stderr)
    sys.exit(code)


app = typer.Typer(
    cls=OneLineErrors,
    help="Exact GPU memory arithmetic for deep-learning work: weights, KV cache, units, and the "
    f"worked examples of the IteraGPU guides. Results are localised with --lang {LANG_CHOICES}.",
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
    import json  # only the JSON outputs pay for it

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
    lang: LangOption = DEFAULT_LANG,
    as_json: JsonOption = False,
) -> None:
    """Dense weights (parameters x bits / 8) and the rough range with a reserve in GiB.

    Bounds: --params at most 1e15, --bits at most 64, --reserve-gib at most 1e6.
    """
    from iteragpu.core.numbers import InputError, parse_count, parse_non_negative, parse_positive
    from iteragpu.core.weights import MAX_BITS, MAX_PARAMETERS, MAX_RESERVE_GIB, estimate_weights

    try:
        parameters = parse_count(params, "--params", maximum=MAX_PARAMETERS)
        bits_value = parse_positive(bits, "--bits", maximum=MAX_BITS)
        reserve = parse_non_negative(reserve_gib, "--reserve-gib", maximum=MAX_RESERVE_GIB)
    except InputError as error:
        _fail(str(error))

    estimate = estimate_weights(parameters, bits_value, reserve)
    if as_json:
        from iteragpu.cli.payloads import weights_json

        _emit_json(weights_json(estimate))
    else:
        from iteragpu.cli.views import weights_text

        print(weights_text(estimate, lang))


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
    lang: LangOption = DEFAULT_LANG,
    as_json: JsonOption = False,
) -> None:
    """KV cache: 2 (K and V) x layers x KV heads x head dim x tokens kept x bytes x sequences.

    Bounds: --layers and --kv-heads at most 1e4, --head-dim 1e5, --tokens, --window and
    --static-max-tokens 1e9, --sequences 1e6, --bytes-per-value 8.
    """
    from iteragpu.core import kv_cache as kv
    from iteragpu.core.numbers import InputError, parse_count, parse_positive

    def tokens_option(text: str | None, what: str) -> int | None:
        return None if text is None else parse_count(text, what, maximum=kv.MAX_TOKENS)

    try:
        spec = kv.KVCacheSpec(
            layers=parse_count(layers, "--layers", maximum=kv.MAX_LAYERS),
            kv_heads=parse_count(kv_heads, "--kv-heads", maximum=kv.MAX_KV_HEADS),
            head_dim=parse_count(head_dim, "--head-dim", maximum=kv.MAX_HEAD_DIM),
            tokens=parse_count(tokens, "--tokens", maximum=kv.MAX_TOKENS),
            bytes_per_value=parse_positive(
                bytes_per_value, "--bytes-per-value", maximum=kv.MAX_BYTES_PER_VALUE
            ),
            sequences=parse_count(sequences, "--sequences", maximum=kv.MAX_SEQUENCES),
            window=tokens_option(window, "--window"),
            static_max_tokens=tokens_option(static_max_tokens, "--static-max-tokens"),
        )
    except (InputError, ValueError) as error:
        _fail(str(error))
    if as_json:
        from iteragpu.cli.payloads import kv_json

        _emit_json(kv_json(spec))
    else:
        from iteragpu.cli.views import kv_text

        print(kv_text(spec, lang))


@app.command(epilog=EPILOG)
def convert(
    quantity: Annotated[
        str, typer.Argument(help="A byte quantity: '24e9 B', '80 GB', '143771 MiB'.")
    ],
    unit: Annotated[
        str, typer.Argument(help="Target unit: B, kB, MB, GB, KiB, MiB, GiB, Gb (bits)...")
    ],
    decimals: Annotated[
        str, typer.Option("--decimals", help="Decimals shown in the table, 0 to 30.")
    ] = "2",
    lang: LangOption = DEFAULT_LANG,
    as_json: JsonOption = False,
) -> None:
    """Convert a byte quantity exactly; GB (10^9 B) and GiB (2^30 B) are never mixed.

    The quantity must be a whole number of bytes, or of bits when the unit is a bit unit.
    """
    from iteragpu.core.numbers import InputError, parse_non_negative, shown
    from iteragpu.core.quantity import convert as convert_quantity

    try:
        places = parse_non_negative(decimals, "--decimals", maximum=MAX_DECIMALS)
        if places.denominator != 1:
            raise InputError(f"--decimals must be a whole number, got {shown(decimals)}")
        conversion = convert_quantity(quantity, unit)
    except InputError as error:
        _fail(str(error))
    if as_json:
        from iteragpu.cli.payloads import convert_json

        _emit_json(convert_json(conversion))
    else:
        from iteragpu.cli.views import convert_text

        print(convert_text(quantity.strip(), conversion, int(places), lang))


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
        str,
        typer.Option(
            "--margin-gib",
            help="Room an evidence run must leave between its reserved peak and the capacity "
            "its device reported, in GiB.",
        ),
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
        typer.Option(
            "--evidence",
            help="A lab `measure` result JSON (checked against the lab's schema) from a card "
            "of the catalog; repeatable.",
        ),
    ] = None,
    lang: LangOption = DEFAULT_LANG,
    as_json: JsonOption = False,
) -> None:
    """Compare the catalog's cards for a need: a status per requirement; only a candidate fit
    on every requirement gets a rank. The nominal GB is a catalogue convention, not a capacity."""
    from pathlib import Path

    from iteragpu.core.numbers import InputError, parse_count, parse_non_negative, parse_positive
    from iteragpu.gpus.evidence import EvidenceError, read_evidence
    from iteragpu.gpus.shortlist import shortlist as rank_cards

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
        from iteragpu.cli.payloads import shortlist_json

        _emit_json(shortlist_json(candidates, need, day_count, card_count))
    else:
        from iteragpu.cli.views import shortlist_text

        print(shortlist_text(candidates, need, day_count, card_count, lang))


@examples_app.command("list")
def examples_list(lang: LangOption = DEFAULT_LANG, as_json: JsonOption = False) -> None:
    """List the worked examples of the guides."""
    if as_json:
        from iteragpu.cli.payloads import examples_list_json

        _emit_json(examples_list_json())
    else:
        from iteragpu.cli.views import examples_list_text

        print(examples_list_text(lang))


@examples_app.command("run")
def examples_run(
    example_id: Annotated[str | None, typer.Argument(metavar="ID", help="An example id.")] = None,
    run_all: Annotated[bool, typer.Option("--all", help="Run every example.")] = False,
    lang: LangOption = DEFAULT_LANG,
    as_json: JsonOption = False,
) -> None:
    """Reproduce worked examples: inputs, exact values and the figures the guides state."""
    from iteragpu.examples import example, registry

    if run_all == (example_id is not None):
        _fail("give one example ID or --all")
    try:
        chosen = list(registry().values()) if run_all else [example(example_id or "")]
    except KeyError as error:
        _fail(str(error.args[0]))
    if as_json:
        from iteragpu.cli.payloads import example_json

        _emit_json({"examples": [example_json(e, lang) for e in chosen]})
    else:
        from iteragpu.cli.views import example_text

        print("\n\n".join(example_text(e, lang) for e in chosen))


def main() -> None:
    """Console-script entry point."""
    app(prog_name="iteragpu")
