"""The `iteragpu` command line: exact memory arithmetic and the guides' worked examples.

Exit codes: 0 success; 2 invalid input or usage (one line on stderr, nothing written).

Every run speaks one language, the reader's: `--lang`, else the locale environment
(`iteragpu.cli.language`). It is found from the raw arguments before anything is built, so that
help texts, click's own messages, errors, tables and notes are all in it, and the numbers the
reader types are read in its grammar (a decimal comma in Indonesian). The texts come from the
package's gettext catalogue (`iteragpu.i18n.catalogue`).

Only the command asked for is defined and built: each command function is written inside a
builder (`_command`), which `IteraGPU.get_command` calls on demand. Defining a command evaluates
its `Annotated` options (about 0.3 ms each command) and typer converts its signature when it
builds it (about a millisecond); the other commands of a run need neither. `--help` of the app
lists every command from its registered help text alone (`IteraGPU.format_commands`).

The console script enters through `iteragpu.cli.fast`, which answers the common `iteragpu
model` invocations without importing this module, click or typer (`import typer` alone took
longer than the whole run of the peer `nox -s bench` times `model` against), and hands every
other invocation to `main` here. Both ways share `model`'s request (`iteragpu.cli.model_request`)
and the way a run ends (`iteragpu.cli.output`: the output written once, or one error line), so
that they answer alike; tests/test_cli_fast.py holds them to it.

No `from __future__ import annotations` here: typer resolves every command's annotations when it
builds the command, and evaluating them as strings costs several milliseconds per run.
"""

import contextlib
import gc
import inspect
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup

from iteragpu import __version__
from iteragpu.cli.click_text import ReaderCatalogue, localize, speaking
from iteragpu.cli.language import reader_language, reads_decimal_comma
from iteragpu.cli.options import (
    DEFAULT_LANG,
    EPILOG,
    EXIT_OK,
    JsonOption,
    LangOption,
    ShortlistDaysOption,
)
from iteragpu.cli.output import Collected, emit_json, fail, refuse, write_output
from iteragpu.i18n.catalogue import N_, translate

MAX_DECIMALS = 30
# click 8.4 and later name a mistyped command's closest names (an empty tuple catches nothing).
_NO_SUCH_COMMAND: Any = getattr(click.exceptions, "NoSuchCommand", ())

# The commands, by name: each command's help text (what the app's --help lists) and what makes
# the Typer that holds it alone, so that it is defined and built only when asked for.
COMMANDS: dict[str, tuple[str, Callable[[], typer.Typer]]] = {}


class IteraGPU(TyperGroup):
    """The app's group: finds the reader's language, builds the command asked for in it, and
    reports usage errors as one line on stderr instead of a usage block or a traceback.

    A command's output is collected and written once at the end, so that a failed write (a full
    disk, a closed pipe) is one error line too, whichever command printed it.
    """

    lang: str = DEFAULT_LANG
    catalogue: ReaderCatalogue = ReaderCatalogue(DEFAULT_LANG, help_asked=False)
    listing: bool = False  # while the app's --help lists the commands

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = sys.argv[1:] if args is None else list(args)
        self.lang = reader_language(argv, os.environ)
        self.commands.clear()  # commands built by an earlier run may speak another language
        self.catalogue = catalogue = ReaderCatalogue(self.lang, _asks_for_help(argv))
        output = Collected(getattr(sys.stdout, "encoding", None))
        with speaking(catalogue):
            if catalogue.help_asked:
                localize(self, catalogue)
            _use_reader_language(self, self.lang)
            try:
                with contextlib.redirect_stdout(output):
                    result = super().main(argv, prog_name, standalone_mode=False, **extra)
            except click.exceptions.NoArgsIsHelpError as error:
                # Its message is the whole help text; one line names the commands instead.
                ctx = error.ctx
                group = ctx.command if ctx is not None else self
                names = (
                    ", ".join(group.list_commands(ctx)) if isinstance(group, click.Group) else ""
                )
                where = ctx.command_path if ctx is not None else "iteragpu"
                message = N_("missing command ({names}); see {where} --help")
                fail(translate(message, self.lang, names=names, where=where), self.lang)
            except click.ClickException as error:
                if isinstance(error, click.UsageError) and error.ctx is not None:
                    localize(error.ctx.command, catalogue)  # its metavars may name an argument
                fail(error.format_message(), self.lang, error.exit_code)
            except click.exceptions.Abort:
                fail(translate(N_("aborted"), self.lang), self.lang, 1)
        write_output(output.getvalue(), self.lang)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else EXIT_OK)
        return result

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except _NO_SUCH_COMMAND as error:
            # click suggests names from the commands built so far: here, none of them.
            raise _NO_SUCH_COMMAND(
                error.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click lists each command by its short help, which comes from its help text alone.
        self.listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self.listing = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        built = self.commands.get(cmd_name)
        if built is None and cmd_name in COMMANDS:
            help_text, typer_of = COMMANDS[cmd_name]
            if self.listing:
                # What the listing reads of a built command (its help, as typer cleans it up),
                # without defining or building any: kept apart from the built commands.
                listed = click.Command(cmd_name, help=inspect.cleandoc(help_text))
                localize(listed, self.catalogue)
                return listed
            built = typer.main.get_command(typer_of())
            if self.catalogue.help_asked:
                localize(built, self.catalogue)
            _use_reader_language(built, self.lang)
            self.commands[cmd_name] = built
        return built


def _asks_for_help(args: list[str]) -> bool:
    """Whether `--help` is among the options (before a `--`): only then are help texts shown,
    and translated."""
    options = args[: args.index("--")] if "--" in args else args
    return "--help" in options


def _use_reader_language(command: click.Command, lang: str) -> None:
    """Make `lang` the default of `--lang` in `command` and its subcommands already built."""
    for param in command.params:
        if param.name == "lang":
            param.default = lang
    if isinstance(command, click.Group):
        # typer 0.20 and later add their own English "Did you mean" to click's (translated) one.
        command.suggest_commands = False  # type: ignore[attr-defined]
        for subcommand in command.commands.values():
            _use_reader_language(subcommand, lang)


app = typer.Typer(
    cls=IteraGPU,
    help=N_(
        "Exact GPU memory arithmetic for deep-learning work: weights, KV cache, units, and the "
        "worked examples of the IteraGPU guides. Output and the numbers you type follow the "
        "reader's language: --lang {codes}."
    ),
    epilog=EPILOG,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"iteragpu {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help=N_("Show the version and exit.")
        ),
    ] = False,
    lang: LangOption = DEFAULT_LANG,
) -> None:
    # `--lang` before the command is read with the arguments (`iteragpu.cli.language`).
    pass


CommandBuilder = Callable[[], Callable[..., None]]


def _command(name: str, help: str, **settings: Any) -> Callable[[CommandBuilder], CommandBuilder]:
    """Register under `name` the builder of a command: a function that defines the command
    function and returns it, called only when the command is asked for."""

    def register(builder: CommandBuilder) -> CommandBuilder:
        def typer_of() -> typer.Typer:
            alone = typer.Typer(add_completion=False, rich_markup_mode=None)
            alone.command(name, help=help, epilog=EPILOG, **settings)(builder())
            return alone

        COMMANDS[name] = (help, typer_of)
        return builder

    return register


def _group(
    name: str, help: str
) -> Callable[[Callable[[], typer.Typer]], Callable[[], typer.Typer]]:
    """Register under `name` the builder of a group of commands: a function that makes its
    Typer, `help` as its help text."""

    def register(typer_of: Callable[[], typer.Typer]) -> Callable[[], typer.Typer]:
        COMMANDS[name] = (help, typer_of)
        return typer_of

    return register


NUMBER = N_("NUMBER")


@_command(
    "weights",
    N_(
        "Dense weights (parameters x bits / 8) and the first estimate: weights plus a reserve "
        "in GiB.\n\n"
        "Bounds: --params at most 1e15, --bits at most 64, --reserve-gib at most 1e6."
    ),
)
def _weights_command() -> Callable[..., None]:
    def weights(
        params: Annotated[
            str,
            typer.Option(
                "--params", metavar=NUMBER, help=N_("Parameter count: 7e9, 7000000000 or 7B.")
            ),
        ],
        bits: Annotated[
            str,
            typer.Option(
                "--bits", metavar=NUMBER, help=N_("Bits per stored value, e.g. 16, 8, 4 or 4.5.")
            ),
        ],
        reserve_gib: Annotated[
            str,
            typer.Option(
                "--reserve-gib", metavar=NUMBER, help=N_("Reserve added to the weights, in GiB.")
            ),
        ] = "0",
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.core.numbers import (
            InputError,
            parse_count,
            parse_non_negative,
            parse_positive,
        )
        from iteragpu.core.weights import (
            MAX_BITS,
            MAX_PARAMETERS,
            MAX_RESERVE_GIB,
            estimate_weights,
        )

        comma = reads_decimal_comma(lang)
        try:
            parameters = parse_count(
                params, "--params", maximum=MAX_PARAMETERS, decimal_comma=comma
            )
            bits_value = parse_positive(bits, "--bits", maximum=MAX_BITS, decimal_comma=comma)
            reserve = parse_non_negative(
                reserve_gib, "--reserve-gib", maximum=MAX_RESERVE_GIB, decimal_comma=comma
            )
        except InputError as error:
            refuse(error, lang)

        estimate = estimate_weights(parameters, bits_value, reserve)
        if as_json:
            from iteragpu.cli.payloads import weights_json

            emit_json(weights_json(estimate))
        else:
            from iteragpu.cli.views import weights_text

            print(weights_text(estimate, lang))

    return weights


@_command(
    "kv-cache",
    N_(
        "KV cache: 2 (K and V) x layers x KV heads x head dim x tokens kept x bytes x "
        "sequences.\n\n"
        "Bounds: --layers and --kv-heads at most 1e4, --head-dim 1e5, --tokens, --window and "
        "--static-max-tokens 1e9, --sequences 1e6, --bytes-per-value 8."
    ),
)
def _kv_cache_command() -> Callable[..., None]:
    def kv_cache(
        layers: Annotated[
            str, typer.Option("--layers", metavar=NUMBER, help=N_("Attention layers."))
        ],
        kv_heads: Annotated[
            str,
            typer.Option(
                "--kv-heads",
                metavar=NUMBER,
                help=N_("KV heads of the model (not its query heads)."),
            ),
        ],
        head_dim: Annotated[
            str,
            typer.Option(
                "--head-dim", metavar=NUMBER, help=N_("Head dimension as the model declares it.")
            ),
        ],
        tokens: Annotated[
            str, typer.Option("--tokens", metavar=NUMBER, help=N_("Tokens per sequence."))
        ],
        bytes_per_value: Annotated[
            str,
            typer.Option(
                "--bytes-per-value",
                metavar=NUMBER,
                help=N_("Bytes per stored value; may be fractional."),
            ),
        ],
        sequences: Annotated[
            str,
            typer.Option(
                "--sequences", metavar=NUMBER, help=N_("Sequences held at once (concurrency).")
            ),
        ] = "1",
        window: Annotated[
            str | None,
            typer.Option(
                "--window", metavar=NUMBER, help=N_("Sliding window: keeps min(tokens, window).")
            ),
        ] = None,
        static_max_tokens: Annotated[
            str | None,
            typer.Option(
                "--static-max-tokens",
                metavar=NUMBER,
                help=N_("Static cache: allocates this maximum up front."),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.cli.model_request import static_tokens
        from iteragpu.core import kv_cache as kv
        from iteragpu.core.numbers import InputError, parse_count, parse_positive, parse_tokens

        comma = reads_decimal_comma(lang)

        def count(text: str, what: str, maximum: int) -> int:
            return parse_count(text, what, maximum=maximum, decimal_comma=comma)

        def token_count_of(text: str, what: str) -> int:
            # No suffix: 32k tokens may be 32,000 or 32,768 (iteragpu.core.numbers).
            return parse_tokens(text, what, maximum=kv.MAX_TOKENS, decimal_comma=comma)

        try:
            token_count = token_count_of(tokens, "--tokens")
            static = None
            if static_max_tokens is not None:
                static = token_count_of(static_max_tokens, "--static-max-tokens")
            spec = kv.KVCacheSpec(
                layers=count(layers, "--layers", kv.MAX_LAYERS),
                kv_heads=count(kv_heads, "--kv-heads", kv.MAX_KV_HEADS),
                head_dim=count(head_dim, "--head-dim", kv.MAX_HEAD_DIM),
                tokens=token_count,
                bytes_per_value=parse_positive(
                    bytes_per_value,
                    "--bytes-per-value",
                    maximum=kv.MAX_BYTES_PER_VALUE,
                    decimal_comma=comma,
                ),
                sequences=count(sequences, "--sequences", kv.MAX_SEQUENCES),
                window=None if window is None else token_count_of(window, "--window"),
                static_max_tokens=static_tokens(static, token_count, lang),
            )
        except InputError as error:
            refuse(error, lang)
        if as_json:
            from iteragpu.cli.payloads import kv_json

            emit_json(kv_json(spec))
        else:
            from iteragpu.cli.views import kv_text

            print(kv_text(spec, lang))

    return kv_cache


@_command(
    "model",
    N_(
        "Size a local model for a context: weights (from its safetensors or GGUF files, else "
        "from config.json at --bits or --dtype), the KV cache per layer kind, the reserve and "
        "the total; never the network.\n\n"
        "PATH is a model folder, a config.json or a .gguf file. Bounds: --tokens and "
        "--static-max-tokens at most 1e9, --sequences 1e6, --kv-bytes-per-value 8, --bits 64, "
        "--reserve-gib 1e6."
    ),
)
def _model_command() -> Callable[..., None]:
    def model(
        path: Annotated[str, typer.Argument(metavar=N_("PATH"))],
        tokens: Annotated[
            str,
            typer.Option("--tokens", metavar=NUMBER, help=N_("Tokens of context per sequence.")),
        ],
        sequences: Annotated[
            str,
            typer.Option(
                "--sequences", metavar=NUMBER, help=N_("Sequences held at once (concurrency).")
            ),
        ] = "1",
        kv_bytes_per_value: Annotated[
            str | None,
            typer.Option(
                "--kv-bytes-per-value",
                metavar=NUMBER,
                help=N_("Bytes per cached value; may be fractional. Default: the config's dtype."),
            ),
        ] = None,
        kv_dtype: Annotated[
            str | None,
            typer.Option(
                "--kv-dtype",
                metavar=N_("DTYPE"),
                help=N_("The cache's dtype (bfloat16, float8_e4m3fn...), instead of its bytes."),
            ),
        ] = None,
        bits: Annotated[
            str | None,
            typer.Option(
                "--bits",
                metavar=NUMBER,
                help=N_("Bits per weight, when the weights come from config.json."),
            ),
        ] = None,
        dtype: Annotated[
            str | None,
            typer.Option(
                "--dtype",
                metavar=N_("DTYPE"),
                help=N_("The weights' dtype, when they come from config.json."),
            ),
        ] = None,
        reserve_gib: Annotated[
            str,
            typer.Option(
                "--reserve-gib", metavar=NUMBER, help=N_("Reserve added to the total, in GiB.")
            ),
        ] = "0",
        cache: Annotated[
            str,
            typer.Option(
                "--cache",
                click_type=click.Choice(("dynamic", "static")),
                help=N_(
                    "dynamic (Transformers' default: the peak right after the prompt) or static "
                    "(allocated up front)."
                ),
            ),
        ] = "dynamic",
        static_max_tokens: Annotated[
            str | None,
            typer.Option(
                "--static-max-tokens",
                metavar=NUMBER,
                help=N_("Static cache: its length in tokens. Default: --tokens."),
            ),
        ] = None,
        mla_layout: Annotated[
            str,
            typer.Option(
                "--mla-layout",
                click_type=click.Choice(("mla_latent", "mla_per_head")),
                help=N_(
                    "MLA models: cache the compressed latent (Transformers, vLLM) or keys and "
                    "values per head."
                ),
            ),
        ] = "mla_latent",
        with_shortlist: Annotated[
            bool,
            typer.Option(
                "--shortlist", help=N_("Also compare the catalogue's cards for the total (--days).")
            ),
        ] = False,
        days: ShortlistDaysOption = None,
        runtime: Annotated[
            str | None,
            typer.Option(
                "--runtime",
                click_type=click.Choice(("transformers", "vllm", "llama.cpp")),
                help=N_(
                    "Split over several GPUs as this runtime does (Transformers 5.24.0, vLLM "
                    "0.34.0, llama.cpp): a plan per GPU. Default with --tp/--pp/--ep: "
                    "transformers."
                ),
            ),
        ] = None,
        tp: Annotated[
            str | None,
            typer.Option("--tp", metavar=NUMBER, help=N_("Tensor-parallel GPUs.")),
        ] = None,
        pp: Annotated[
            str | None,
            typer.Option(
                "--pp",
                metavar=NUMBER,
                help=N_("Pipeline stages (llama.cpp: the GPUs its layers are split over)."),
            ),
        ] = None,
        ep: Annotated[
            bool,
            typer.Option(
                "--ep", help=N_("Expert parallelism over the tensor-parallel GPUs (MoE models).")
            ),
        ] = False,
        pp_partition: Annotated[
            str | None,
            typer.Option(
                "--pp-partition",
                metavar=N_("LIST"),
                help=N_("vLLM: layers per stage, as VLLM_PP_LAYER_PARTITION (e.g. 11,11,10)."),
            ),
        ] = None,
        gpu_layers: Annotated[
            str | None,
            typer.Option(
                "--gpu-layers",
                metavar=NUMBER,
                help=N_(
                    "llama.cpp: -ngl, layers on the GPUs, the output layer counting as one. "
                    "Default: all."
                ),
            ),
        ] = None,
        tensor_split: Annotated[
            str | None,
            typer.Option(
                "--tensor-split",
                metavar=N_("LIST"),
                help=N_(
                    "llama.cpp: -ts, each GPU's share, separated by / or a comma (e.g. 3/1). "
                    "Default: equal (free memory)."
                ),
            ),
        ] = None,
        parallel: Annotated[
            str | None,
            typer.Option(
                "--parallel",
                metavar=NUMBER,
                help=N_("llama.cpp: -np, slots sharing the context --tokens."),
            ),
        ] = None,
        sheet: Annotated[
            str | None,
            typer.Option(
                "--sheet",
                click_type=click.Choice(("markdown", "json")),
                help=N_(
                    "Print the filled load sheet instead of the table: Markdown in the reader's "
                    "language, or JSON (raw bytes). Not with --json or --shortlist."
                ),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.cli.model_request import model_output, model_request
        from iteragpu.core.numbers import InputError

        try:
            text = model_output(
                model_request(
                    path=path,
                    tokens=tokens,
                    sequences=sequences,
                    kv_bytes_per_value=kv_bytes_per_value,
                    kv_dtype=kv_dtype,
                    bits=bits,
                    dtype=dtype,
                    reserve_gib=reserve_gib,
                    cache=cache,
                    static_max_tokens=static_max_tokens,
                    mla_layout=mla_layout,
                    with_shortlist=with_shortlist,
                    days=days,
                    runtime=runtime,
                    tp=tp,
                    pp=pp,
                    ep=ep,
                    pp_partition=pp_partition,
                    gpu_layers=gpu_layers,
                    tensor_split=tensor_split,
                    parallel=parallel,
                    sheet=sheet,
                    lang=lang,
                    as_json=as_json,
                )
            )
        except InputError as error:
            refuse(error, lang)
        print(text)

    return model


@_command(
    "fit",
    N_(
        "What fits, solved backwards: the longest context per sequence (--tokens left out), "
        "the most sequences at a context (--tokens given, --sequences left out), the smallest "
        "tensor-parallel size (--tp left out), the cache type (--kv-dtype auto), for a model on "
        "a catalogue card (--gpu) or a card of --capacity-bytes, as vLLM 0.34.0, llama.cpp "
        "(commit 00342301d01a) or Transformers size their cache; answered as the runtime's "
        "flags. Without the runtime's own figure the answer is an upper bound (at most), with "
        "what is certain and what is to measure; --available-kv-gib (vLLM's \"Available KV "
        "cache memory\") makes it vLLM's own count.\n\nPATH as for `model` (llama.cpp: a "
        ".gguf file)."
    ),
)
def _fit_command() -> Callable[..., None]:
    def fit(
        path: Annotated[str, typer.Argument(metavar=N_("PATH"))],
        gpu: Annotated[
            str | None,
            typer.Option(
                "--gpu", metavar=N_("CARD"), help=N_("A card of the catalogue (its id: h100-80gb).")
            ),
        ] = None,
        capacity_bytes: Annotated[
            str | None,
            typer.Option(
                "--capacity-bytes",
                metavar=NUMBER,
                help=N_("Each GPU's total memory in bytes, for a card not in the catalogue."),
            ),
        ] = None,
        gpus: Annotated[
            str | None,
            typer.Option(
                "--gpus", metavar=NUMBER, help=N_("GPUs available. Default: --tp x --pp, or 1.")
            ),
        ] = None,
        runtime: Annotated[
            str,
            typer.Option(
                "--runtime",
                click_type=click.Choice(("vllm", "llama.cpp", "transformers")),
                help=N_("The runtime whose cache rules and flags answer."),
            ),
        ] = "vllm",
        tokens: Annotated[
            str | None,
            typer.Option(
                "--tokens",
                metavar=NUMBER,
                help=N_("Context per sequence. Left out: the longest that fits is solved."),
            ),
        ] = None,
        sequences: Annotated[
            str | None,
            typer.Option(
                "--sequences",
                metavar=NUMBER,
                help=N_(
                    "Sequences at once (llama.cpp: -np). Left out with --tokens: the most that "
                    "fit is solved; without --tokens: 1."
                ),
            ),
        ] = None,
        tp: Annotated[
            str | None,
            typer.Option(
                "--tp",
                metavar=NUMBER,
                help=N_("Tensor-parallel GPUs. Left out: the smallest that fits on --gpus."),
            ),
        ] = None,
        pp: Annotated[
            str | None,
            typer.Option("--pp", metavar=NUMBER, help=N_("Pipeline stages.")),
        ] = None,
        ep: Annotated[
            bool,
            typer.Option(
                "--ep", help=N_("Expert parallelism over the tensor-parallel GPUs (MoE models).")
            ),
        ] = False,
        kv_dtype: Annotated[
            str | None,
            typer.Option(
                "--kv-dtype",
                metavar=N_("DTYPE"),
                help=N_(
                    "The cache type (vLLM: `fp8`; llama.cpp: `q8_0`, `q4_0`...), or auto: the "
                    "runtime's types tried, most precise first."
                ),
            ),
        ] = None,
        dtype: Annotated[
            str | None,
            typer.Option(
                "--dtype",
                metavar=N_("DTYPE"),
                help=N_("The weights' dtype. Default: the config's."),
            ),
        ] = None,
        bits: Annotated[
            str | None,
            typer.Option("--bits", metavar=NUMBER, help=N_("Bits per weight, instead of --dtype.")),
        ] = None,
        reserve_gib: Annotated[
            str | None,
            typer.Option(
                "--reserve-gib",
                metavar=NUMBER,
                help=N_(
                    "Kept free on each GPU, in GiB. Default: 1 for llama.cpp (its compute "
                    "buffers), 0 otherwise."
                ),
            ),
        ] = None,
        utilization: Annotated[
            str | None,
            typer.Option(
                "--utilization",
                metavar=NUMBER,
                help=N_(
                    "vLLM's --gpu-memory-utilization, a share of each card's total. Default: "
                    "1.0 with the extensible KV cache, 0.92 profiled."
                ),
            ),
        ] = None,
        kv_sizing: Annotated[
            str,
            typer.Option(
                "--kv-sizing",
                click_type=click.Choice(("extensible", "profiled")),
                help=N_(
                    "vLLM: its extensible KV cache (its default on CUDA, counted again after "
                    "warmup) or the profiled one (--no-enable-extensible-kv-cache)."
                ),
            ),
        ] = "extensible",
        block_size: Annotated[
            str | None,
            typer.Option(
                "--block-size", metavar=NUMBER, help=N_("vLLM's --block-size. Default: 64.")
            ),
        ] = None,
        available_kv_gib: Annotated[
            str | None,
            typer.Option(
                "--available-kv-gib",
                metavar=N_("GIB"),
                help=N_(
                    'vLLM\'s "Available KV cache memory" as it printed it (70.51), one or one per '
                    "GPU separated by commas: its own block count."
                ),
            ),
        ] = None,
        gpu_layers: Annotated[
            str | None,
            typer.Option(
                "--gpu-layers",
                metavar=NUMBER,
                help=N_("llama.cpp's -ngl. Left out: the most layers that fit."),
            ),
        ] = None,
        tensor_split: Annotated[
            str | None,
            typer.Option(
                "--tensor-split",
                metavar=N_("LIST"),
                help=N_("llama.cpp's -ts, each GPU's share (3/1). Default: equal."),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.cli.fit_request import fit_output, fit_request
        from iteragpu.core.numbers import InputError

        try:
            request, card = fit_request(
                path,
                gpu=gpu,
                capacity_bytes=capacity_bytes,
                gpus=gpus,
                runtime=runtime,
                tokens=tokens,
                sequences=sequences,
                tp=tp,
                pp=pp,
                ep=ep,
                kv_dtype=kv_dtype,
                dtype=dtype,
                bits=bits,
                reserve_gib=reserve_gib,
                utilization=utilization,
                kv_sizing=kv_sizing,
                block_size=block_size,
                available_kv_gib=available_kv_gib,
                gpu_layers=gpu_layers,
                tensor_split=tensor_split,
                lang=lang,
            )
            text = fit_output(request, card, lang, as_json)
        except InputError as error:
            refuse(error, lang)
        print(text)

    return fit


@_command(
    "train",
    N_(
        "Model states of a training or fine-tuning run, exact per tensor and per GPU: weights "
        "(base, adapters, 4-bit packing and its scales), gradients, optimizer states (on the "
        "GPU and in host memory), master copies. Activations are measured by the lab, not "
        "computed.\n\nPATH as for `model`: a model folder, a config.json or a model's name."
    ),
)
def _train_command() -> Callable[..., None]:
    from iteragpu.training.records import METHODS, OPTIMIZERS, PRECISIONS, SHARDS

    def train(
        path: Annotated[str, typer.Argument(metavar=N_("PATH"))],
        method: Annotated[
            str,
            typer.Option(
                "--method",
                click_type=click.Choice(METHODS),
                help=N_(
                    "full, LoRA, DoRA, QLoRA, or QDoRA (DoRA on QLoRA's base): PEFT's adapters, "
                    "bitsandbytes' 4-bit base."
                ),
            ),
        ] = "full",
        precision: Annotated[
            str,
            typer.Option(
                "--precision",
                click_type=click.Choice(PRECISIONS),
                help=N_(
                    "Pure 16-bit weights and states, autocast over fp32 weights, or 16-bit "
                    "weights with fp32 master weights and gradients (bf16-master)."
                ),
            ),
        ] = "bf16",
        optimizer: Annotated[
            str,
            typer.Option(
                "--optimizer",
                click_type=click.Choice(OPTIMIZERS),
                help=N_("torch.optim's AdamW, SGD, Adafactor; bitsandbytes' 8-bit AdamW."),
            ),
        ] = "adamw",
        fused: Annotated[
            bool,
            typer.Option("--fused", help=N_("AdamW's fused mode: its step counters on the GPU.")),
        ] = False,
        lora_r: Annotated[
            str,
            typer.Option(
                "--lora-r", metavar=NUMBER, help=N_("LoRA's r: the adapters' inner dimension.")
            ),
        ] = "8",
        lora_targets: Annotated[
            str | None,
            typer.Option(
                "--lora-targets",
                metavar=N_("NAMES"),
                help=N_(
                    "Modules LoRA wraps, comma-separated (q_proj,v_proj), or all-linear. "
                    "Default: PEFT's for the family."
                ),
            ),
        ] = None,
        lora_parameters: Annotated[
            str | None,
            typer.Option(
                "--lora-parameters",
                metavar=N_("NAMES"),
                help=N_(
                    "Parameters LoRA wraps that no linear layer holds, comma-separated "
                    "(mlp.experts.gate_up_proj): PEFT's target_parameters."
                ),
            ),
        ] = None,
        lora_bias: Annotated[
            str,
            typer.Option(
                "--lora-bias",
                click_type=click.Choice(("none", "all", "lora_only")),
                help=N_("Which biases train (PEFT's bias)."),
            ),
        ] = "none",
        modules_to_save: Annotated[
            str | None,
            typer.Option(
                "--modules-to-save",
                metavar=N_("NAMES"),
                help=N_(
                    "Modules trained in full beside the adapters (a copy; the original stays)."
                ),
            ),
        ] = None,
        adapter_dtype: Annotated[
            str | None,
            typer.Option(
                "--adapter-dtype",
                metavar=N_("DTYPE"),
                help=N_("The adapters' dtype. Default: float32, as PEFT casts them."),
            ),
        ] = None,
        quant_type: Annotated[
            str,
            typer.Option(
                "--quant-type",
                click_type=click.Choice(("nf4", "fp4")),
                help=N_("QLoRA: bitsandbytes' 4-bit type."),
            ),
        ] = "nf4",
        double_quant: Annotated[
            bool,
            typer.Option(
                "--double-quant", help=N_("QLoRA: 8-bit block scales with their own scales.")
            ),
        ] = False,
        shard: Annotated[
            str,
            typer.Option(
                "--shard",
                click_type=click.Choice(SHARDS),
                help=N_("FSDP2 or DeepSpeed ZeRO stage 1, 2 or 3 over --gpus."),
            ),
        ] = "none",
        gpus: Annotated[
            str, typer.Option("--gpus", metavar=NUMBER, help=N_("GPUs the run is sharded over."))
        ] = "1",
        micro_batch: Annotated[
            str | None,
            typer.Option(
                "--micro-batch", metavar=NUMBER, help=N_("Recorded: it sizes the activations.")
            ),
        ] = None,
        sequence_length: Annotated[
            str | None,
            typer.Option(
                "--sequence-length",
                metavar=NUMBER,
                help=N_("Recorded: it sizes the activations."),
            ),
        ] = None,
        grad_accum: Annotated[
            str,
            typer.Option(
                "--grad-accum",
                metavar=NUMBER,
                help=N_("Micro-steps per optimizer step: gradients accumulate in place."),
            ),
        ] = "1",
        compare: Annotated[
            str | None,
            typer.Option(
                "--compare",
                click_type=click.Choice(("deepspeed", "accelerate")),
                help=N_(
                    "Also print what DeepSpeed's or Accelerate's estimator states for this run, "
                    "and why it differs, item by item."
                ),
            ),
        ] = None,
        with_shortlist: Annotated[
            bool,
            typer.Option(
                "--shortlist",
                help=N_(
                    "Also compare the catalogue's cards for the fullest GPU's model states and "
                    "the reserve (--days; packages of --gpus cards). The activations are still "
                    "to measure: the need is a lower bound."
                ),
            ),
        ] = False,
        days: ShortlistDaysOption = None,
        reserve_gib: Annotated[
            str | None,
            typer.Option(
                "--reserve-gib",
                metavar=NUMBER,
                help=N_("Reserve added to the short list's need, in GiB (default 0)."),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.cli.train_request import train_command, train_output
        from iteragpu.core.numbers import InputError

        try:
            command = train_command(
                path,
                with_shortlist=with_shortlist,
                days=days,
                reserve_gib=reserve_gib,
                compare=compare,
                lang=lang,
                as_json=as_json,
                method=method,
                precision=precision,
                optimizer=optimizer,
                fused=fused,
                lora_r=lora_r,
                lora_targets=lora_targets,
                lora_parameters=lora_parameters,
                lora_bias=lora_bias,
                modules_to_save=modules_to_save,
                adapter_dtype=adapter_dtype,
                quant_type=quant_type,
                double_quant=double_quant,
                shard=shard,
                gpus=gpus,
                micro_batch=micro_batch,
                sequence_length=sequence_length,
                grad_accum=grad_accum,
            )
            text = train_output(command)
        except InputError as error:
            refuse(error, lang)
        print(text)

    return train


@_command(
    "convert",
    N_(
        "Convert a byte quantity exactly; GB (10^9 B) and GiB (2^30 B) are never mixed.\n\n"
        "QUANTITY is a number and a byte unit ('24e9 B', '80 GB', '143771 MiB'), UNIT the "
        "target unit (B, kB, MB, GB, KiB, MiB, GiB, Gb for gigabits...). The quantity must be "
        "a whole number of bytes, or of bits when the unit is a bit unit."
    ),
    # '-80 GB' is a (negative) quantity for the core to refuse, not options -8, -0...: click
    # lets unknown options through, and the command refuses those that are no number.
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
def _convert_command() -> Callable[..., None]:
    def convert(
        quantity: Annotated[
            str,
            typer.Argument(metavar=N_("QUANTITY")),
        ],
        unit: Annotated[
            str,
            typer.Argument(metavar=N_("UNIT")),
        ],
        decimals: Annotated[
            str,
            typer.Option(
                "--decimals", metavar=NUMBER, help=N_("Decimals shown in the table, 0 to 30.")
            ),
        ] = "2",
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.core.numbers import InputError, parse_non_negative, shown
        from iteragpu.core.quantity import convert as convert_quantity

        ctx = click.get_current_context()
        options = [name for param in ctx.command.params for name in param.opts]
        for argument in (quantity, unit, *ctx.args):
            # Let through by click: one word of '-' then a letter or '-' is an unknown option
            # (a known one here came after '--').
            second, name = argument[1:2], argument.partition("=")[0]
            worded = argument[:1] == "-" and (second == "-" or second.isalpha())
            if worded and " " not in name and name not in options:
                raise click.NoSuchOption(name, possibilities=options, ctx=ctx)
        if ctx.args:
            from iteragpu.i18n.catalogue import translations

            extra = translations(lang).ngettext(
                "Got unexpected extra argument ({args})",
                "Got unexpected extra arguments ({args})",
                len(ctx.args),
            )
            ctx.fail(extra.format(args=" ".join(ctx.args)))
        comma = reads_decimal_comma(lang)
        try:
            places = parse_non_negative(
                decimals, "--decimals", maximum=MAX_DECIMALS, decimal_comma=comma
            )
            if places.denominator != 1:
                raise InputError(
                    "{what} must be a whole number, got {text}",
                    "not_whole",
                    what="--decimals",
                    text=shown(decimals),
                )
            what = translate(N_("quantity"), lang)
            conversion = convert_quantity(quantity, unit, what, decimal_comma=comma)
        except InputError as error:
            refuse(error, lang)
        if as_json:
            from iteragpu.cli.payloads import convert_json

            emit_json(convert_json(conversion))
        else:
            from iteragpu.cli.views import convert_text

            print(convert_text(quantity.strip(), conversion, int(places), lang))

    return convert


CARD_REQUIREMENT = N_("CARD:REQUIREMENT")


def _card_requirement_pairs(
    values: list[str] | None, option: str, lang: str
) -> list[tuple[str, str]]:
    pairs = []
    for value in values or []:
        card_id, sep, requirement = value.partition(":")
        if not sep or not card_id or not requirement:
            message = N_("{option} takes CARD:REQUIREMENT (e.g. rtx-4090:context), got {value}")
            fail(translate(message, lang, option=option, value=repr(value)), lang)
        pairs.append((card_id, requirement))
    return pairs


@_command(
    "shortlist",
    N_(
        "Compare the catalogue's cards for a need: a status per requirement; only a candidate "
        "fit on every requirement gets a rank. The nominal GB is a catalogue convention, not a "
        "capacity."
    ),
)
def _shortlist_command() -> Callable[..., None]:
    def shortlist(
        need_gib: Annotated[
            str,
            typer.Option(
                "--need-gib",
                metavar=NUMBER,
                help=N_(
                    "Memory the load needs on each GPU, in GiB; split over several cards, the "
                    "fullest GPU's need."
                ),
            ),
        ],
        days: Annotated[
            str, typer.Option("--days", metavar=NUMBER, help=N_("Campaign length in days."))
        ],
        cards: Annotated[
            str, typer.Option("--cards", metavar=NUMBER, help=N_("Cards per package."))
        ] = "1",
        margin_gib: Annotated[
            str,
            typer.Option(
                "--margin-gib",
                metavar=NUMBER,
                help=N_(
                    "Room an evidence run must leave between its reserved peak and the capacity "
                    "its device reported, in GiB."
                ),
            ),
        ] = "0",
        require: Annotated[
            list[str] | None,
            typer.Option(
                "--require",
                metavar=N_("REQUIREMENT"),
                help=N_("Another requirement (context, software...); repeatable."),
            ),
        ] = None,
        confirmed: Annotated[
            list[str] | None,
            typer.Option(
                "--confirmed",
                metavar=CARD_REQUIREMENT,
                help=N_("CARD:REQUIREMENT your evidence confirms; repeatable."),
            ),
        ] = None,
        failed: Annotated[
            list[str] | None,
            typer.Option(
                "--failed",
                metavar=CARD_REQUIREMENT,
                help=N_("CARD:REQUIREMENT that failed; repeatable."),
            ),
        ] = None,
        evidence: Annotated[
            list[str] | None,
            typer.Option(
                "--evidence",
                metavar=N_("FILE"),
                help=N_(
                    "A lab `measure` result JSON (checked against the lab's schema) from a card of "
                    "the catalogue; repeatable."
                ),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from pathlib import Path

        from iteragpu.core.numbers import (
            InputError,
            parse_count,
            parse_non_negative,
            parse_positive,
        )
        from iteragpu.gpus.evidence import read_evidence
        from iteragpu.gpus.shortlist import shortlist as rank_cards

        comma = reads_decimal_comma(lang)
        try:
            need = parse_positive(need_gib, "--need-gib", decimal_comma=comma)
            day_count = parse_count(days, "--days", decimal_comma=comma)
            card_count = parse_count(cards, "--cards", decimal_comma=comma)
            margin = parse_non_negative(margin_gib, "--margin-gib", decimal_comma=comma)
            runs = [read_evidence(Path(p)) for p in evidence or []]
            candidates = rank_cards(
                need,
                day_count,
                cards=card_count,
                margin_gib=margin,
                requirements=require or [],
                confirmed=_card_requirement_pairs(confirmed, "--confirmed", lang),
                failed=_card_requirement_pairs(failed, "--failed", lang),
                evidence=runs,
            )
        except InputError as error:
            refuse(error, lang)
        from iteragpu.gpus.need import stated_need

        stated = stated_need(need)  # the reader's own figure, taken as complete
        if as_json:
            from iteragpu.cli.payloads import shortlist_json

            emit_json(shortlist_json(candidates, stated, day_count, card_count))
        else:
            from iteragpu.cli.views import shortlist_text

            print(shortlist_text(candidates, stated, day_count, card_count, lang))

    return shortlist


@_command(
    "report",
    N_(
        "Lab results (`measure`, or the Recorder of your own loop), phase by phase, in the "
        "reader's language, with the lab's predictions, the parts of each phase (parameters, "
        "gradients, optimizer state, the rest of allocated), the first training step beside the "
        "warm ones, the dense-weights estimate beside the allocated bytes after model_load, "
        "and, given the precision and optimizer of `iteragpu train`, its estimate of each "
        "model-state item beside the bytes counted. Several results (one per process of a run) "
        "are shown side by side, naming the process with the highest peak.\n\nWith --vllm-log "
        "or --llama-log and --model: a runtime's start-up log beside the plan of the same "
        "model and settings, item by item, with the differences."
    ),
)
def _report_command() -> Callable[..., None]:
    from iteragpu.training.records import OPTIMIZERS, PRECISIONS

    def report(
        result_files: Annotated[
            list[str] | None,
            typer.Argument(
                metavar=N_("RESULT..."),
                help=N_(
                    "Lab result JSON files (checked against the lab's schema): one, or one per "
                    "process of a run."
                ),
                show_default=False,
            ),
        ] = None,
        params: Annotated[
            str | None,
            typer.Option(
                "--params",
                metavar=NUMBER,
                help=N_(
                    "Parameter count of the estimate; by default the network the lab recorded."
                ),
            ),
        ] = None,
        bits: Annotated[
            str | None,
            typer.Option(
                "--bits",
                metavar=NUMBER,
                help=N_("Bits per stored value of the estimate; goes with --params."),
            ),
        ] = None,
        precision: Annotated[
            str | None,
            typer.Option(
                "--precision",
                click_type=click.Choice(PRECISIONS),
                help=N_(
                    "As for `iteragpu train`: with --optimizer, its estimate of each model-state "
                    "item of the recorded parameters beside the bytes counted."
                ),
            ),
        ] = None,
        optimizer: Annotated[
            str | None,
            typer.Option(
                "--optimizer",
                click_type=click.Choice(OPTIMIZERS),
                help=N_("As for `iteragpu train`; goes with --precision."),
            ),
        ] = None,
        fused: Annotated[
            bool,
            typer.Option("--fused", help=N_("AdamW's fused mode: its step counters on the GPU.")),
        ] = False,
        vllm_log: Annotated[
            str | None,
            typer.Option(
                "--vllm-log",
                metavar=N_("FILE"),
                help=N_("A vLLM 0.34.0 start-up log, beside the plan of --model."),
            ),
        ] = None,
        llama_log: Annotated[
            str | None,
            typer.Option(
                "--llama-log",
                metavar=N_("FILE"),
                help=N_("A llama.cpp start-up log, beside the plan of --model (its .gguf file)."),
            ),
        ] = None,
        model_path: Annotated[
            str | None,
            typer.Option(
                "--model",
                metavar=N_("PATH"),
                help=N_("The model the log's run served, as for `iteragpu model`."),
            ),
        ] = None,
        gpu: Annotated[
            str | None,
            typer.Option(
                "--gpu",
                metavar=N_("CARD"),
                help=N_("vLLM: the card of the run, to set its budget beside the log's."),
            ),
        ] = None,
        capacity_bytes: Annotated[
            str | None,
            typer.Option(
                "--capacity-bytes",
                metavar=NUMBER,
                help=N_("vLLM: the card's total memory in bytes, instead of --gpu."),
            ),
        ] = None,
        tp: Annotated[
            str | None,
            typer.Option(
                "--tp", metavar=NUMBER, help=N_("vLLM: the run's TP size. Default: the log's.")
            ),
        ] = None,
        pp: Annotated[
            str | None,
            typer.Option(
                "--pp", metavar=NUMBER, help=N_("vLLM: the run's PP size. Default: the log's.")
            ),
        ] = None,
        ep: Annotated[
            bool,
            typer.Option("--ep", help=N_("vLLM: the run had --enable-expert-parallel.")),
        ] = False,
        kv_dtype: Annotated[
            str | None,
            typer.Option(
                "--kv-dtype",
                metavar=N_("DTYPE"),
                help=N_("vLLM: the run's --kv-cache-dtype. Default: the log's."),
            ),
        ] = None,
        dtype: Annotated[
            str | None,
            typer.Option(
                "--dtype",
                metavar=N_("DTYPE"),
                help=N_("vLLM: the run's --dtype. Default: the log's."),
            ),
        ] = None,
        utilization: Annotated[
            str | None,
            typer.Option(
                "--utilization",
                metavar=NUMBER,
                help=N_("vLLM: the run's --gpu-memory-utilization. Default: vLLM's."),
            ),
        ] = None,
        tensor_split: Annotated[
            str | None,
            typer.Option(
                "--tensor-split",
                metavar=N_("LIST"),
                help=N_("llama.cpp: the run's -ts. Default: equal."),
            ),
        ] = None,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from pathlib import Path

        if vllm_log is not None or llama_log is not None or model_path is not None:
            from iteragpu.cli.fit_request import log_report
            from iteragpu.core.numbers import InputError

            if result_files:
                fail(
                    translate(
                        N_(
                            "a runtime's log is reported apart from lab results: give one or "
                            "the other"
                        ),
                        lang,
                    ),
                    lang,
                )
            if model_path is None:
                fail(translate(N_("--vllm-log and --llama-log need --model"), lang), lang)
            try:
                text = log_report(
                    model_path,
                    vllm_log=vllm_log,
                    llama_log=llama_log,
                    gpu=gpu,
                    capacity_bytes=capacity_bytes,
                    tp=tp,
                    pp=pp,
                    ep=ep,
                    kv_dtype=kv_dtype,
                    dtype=dtype,
                    utilization=utilization,
                    tensor_split=tensor_split,
                    lang=lang,
                    as_json=as_json,
                )
            except InputError as error:
                refuse(error, lang)
            print(text)
            return
        if not result_files:
            fail(
                translate(
                    N_("give lab result files, or a runtime's log (--vllm-log, --llama-log)"),
                    lang,
                ),
                lang,
            )
        for option, given in (
            ("--gpu", gpu is not None),
            ("--capacity-bytes", capacity_bytes is not None),
            ("--tp", tp is not None),
            ("--pp", pp is not None),
            ("--ep", ep),
            ("--kv-dtype", kv_dtype is not None),
            ("--dtype", dtype is not None),
            ("--utilization", utilization is not None),
            ("--tensor-split", tensor_split is not None),
        ):
            if given:
                fail(
                    translate(
                        N_("{option} goes with a runtime's log (--vllm-log, --llama-log)"),
                        lang,
                        option=option,
                    ),
                    lang,
                )

        from iteragpu.core.numbers import InputError, parse_count, parse_positive
        from iteragpu.core.weights import MAX_BITS, MAX_PARAMETERS
        from iteragpu.gpus.comparison import compare
        from iteragpu.gpus.evidence import read_lab_result
        from iteragpu.training.records import TrainRequest

        if (params is None) != (bits is None):
            fail(translate(N_("--params and --bits go together: give both or neither"), lang), lang)
        if (precision is None) != (optimizer is None) or (fused and optimizer is None):
            fail(
                translate(
                    N_("--precision and --optimizer go together (--fused with them): give both"),
                    lang,
                ),
                lang,
            )
        comma = reads_decimal_comma(lang)
        request = None
        try:
            parameters = bits_value = None
            if params is not None and bits is not None:
                parameters = parse_count(
                    params, "--params", maximum=MAX_PARAMETERS, decimal_comma=comma
                )
                bits_value = parse_positive(bits, "--bits", maximum=MAX_BITS, decimal_comma=comma)
            if precision is not None and optimizer is not None:
                from iteragpu.training.states import check_request

                request = TrainRequest(precision=precision, optimizer=optimizer, fused=fused)  # type: ignore[arg-type]
                check_request(request)
            results = [read_lab_result(Path(name)) for name in result_files]
        except InputError as error:
            refuse(error, lang)
        comparisons = [compare(result, parameters, bits_value) for result in results]
        if as_json:
            from iteragpu.cli.payloads import reports_json

            emit_json(reports_json(results, comparisons, request))
        else:
            from iteragpu.cli.views import reports_text

            print(reports_text(results, comparisons, lang, request))

    return report


EXAMPLES_HELP = N_("List and reproduce the guides' worked examples.")


@_group("examples", EXAMPLES_HELP)
def _examples_group() -> typer.Typer:
    examples_app = typer.Typer(
        help=EXAMPLES_HELP,
        epilog=EPILOG,
        rich_markup_mode=None,
        no_args_is_help=True,
        add_completion=False,
    )

    @examples_app.callback()
    def examples_callback(lang: LangOption = DEFAULT_LANG) -> None:
        # `--lang` before the subcommand is read with the arguments (`iteragpu.cli.language`).
        pass

    @examples_app.command("list", help=N_("List the worked examples of the guides."), epilog=EPILOG)
    def examples_list(lang: LangOption = DEFAULT_LANG, as_json: JsonOption = False) -> None:
        if as_json:
            from iteragpu.cli.payloads import examples_list_json

            emit_json(examples_list_json())
        else:
            from iteragpu.cli.views import examples_list_text

            print(examples_list_text(lang))

    @examples_app.command(
        "run",
        help=N_(
            "Reproduce the worked example ID, or every one with --all: inputs, exact values and "
            "the figures the guides state."
        ),
        epilog=EPILOG,
    )
    def examples_run(
        example_id: Annotated[str | None, typer.Argument(metavar=N_("ID"))] = None,
        run_all: Annotated[bool, typer.Option("--all", help=N_("Run every example."))] = False,
        lang: LangOption = DEFAULT_LANG,
        as_json: JsonOption = False,
    ) -> None:
        from iteragpu.examples import registry

        if run_all == (example_id is not None):
            fail(translate(N_("give one example ID or --all"), lang), lang)
        examples = registry()
        if example_id is not None and example_id not in examples:
            # The registry grows with every guide (and one example per catalogue card): the
            # refusal points to `examples list`, which names them all, and stays one short line.
            message = N_("unknown example {example}; {where} lists them all")
            where = "iteragpu examples list"
            fail(translate(message, lang, example=repr(example_id), where=where), lang)
        chosen = list(examples.values()) if run_all else [examples[example_id or ""]]
        if as_json:
            from iteragpu.cli.payloads import example_json

            emit_json({"examples": [example_json(e, lang) for e in chosen]})
        else:
            from iteragpu.cli.views import example_text

            print("\n\n".join(example_text(e, lang) for e in chosen))

    return examples_app


def main() -> None:
    """The typer app as the console script runs it: `iteragpu.cli.fast.main` (the console
    script) hands over what its fast path declines, and `python -m iteragpu` comes here."""
    try:
        app(prog_name="iteragpu")
    finally:
        # At exit the interpreter runs full garbage collections over every object still alive,
        # typer's and click's modules first among them: about 20 ms of a 130 ms run on a
        # 2-core machine (benchmarks/cli_startup.py), for nothing, since the process ends.
        # Frozen, the survivors are left out of those collections; the output is already
        # written, and exit handlers and stream flushes still run. Only the console script
        # does this: `app()` called in a process that goes on (the tests) is left alone.
        gc.freeze()
