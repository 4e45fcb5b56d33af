"""The console script's entry point: `iteragpu model` answered without click or typer when the
arguments are plain enough, the typer app (`iteragpu.cli.app`) for everything else.

Why: `iteragpu model DIR --tokens 8192 --dtype bfloat16 --json` is timed against vramcalc's
`estimate` (benchmarks/model_bench.py, goal: at most 1.0x), and `import typer` alone (with click
under it) took longer than the peer's whole run: on a 2-core machine, 115 ms against 86 ms, and
our command 134 ms (1.56x). Only a run that imports neither can meet the goal; sizing the model
itself costs about 35 ms above the bare interpreter, and the command on this path took 56 ms
against the peer's 87 ms (0.64x) on the same machine.

So `main` reads the arguments first with a small parser of its own, which understands exactly
one shape: `[--lang CODE] model PATH [OPTIONS]`, the options of the `model` command as
`--opt value` or `--opt=value` before or after PATH, each at most once, the flags `--json` and
`--shortlist`, every choice checked as click checks it. Anything else (`--help`, `--version`,
another command, an unknown or repeated option, a missing value, a value that looks like an
option, `--`, a second positional, no command at all) is declined, before anything is read or
written, and the typer app parses the arguments from the start and says what click says.

What it understands it answers as the typer command does: both hand the raw values to
`iteragpu.cli.model_request`, and report through `iteragpu.cli.output` (one line on stderr, exit
2, in the reader's language; the output collected and written once). The option table below
is data; tests/test_cli_fast.py checks it against the `model` command typer builds, and checks
that both ways give the same stdout, stderr and exit code for a broad list of arguments.

Imports neither click nor typer, nor anything that does, unless it declines
(tests/test_import_graph.py pins the modules it imports).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from iteragpu.cli.language import reader_language
from iteragpu.cli.output import EXIT_OK, Collected, refuse, write_output
from iteragpu.i18n.languages import CODES

COMMAND: Final = "model"
# The option table: option -> (parameter, takes a value, its choices or None). They are
# click's: the group's options before the command, and the `model` command's own.
VALUE: Final = True
FLAG: Final = False
GROUP_OPTIONS: Final[dict[str, tuple[str, bool, tuple[str, ...] | None]]] = {
    "--lang": ("lang", VALUE, CODES),
}
MODEL_OPTIONS: Final[dict[str, tuple[str, bool, tuple[str, ...] | None]]] = {
    "--tokens": ("tokens", VALUE, None),
    "--sequences": ("sequences", VALUE, None),
    "--kv-bytes-per-value": ("kv_bytes_per_value", VALUE, None),
    "--kv-dtype": ("kv_dtype", VALUE, None),
    "--bits": ("bits", VALUE, None),
    "--dtype": ("dtype", VALUE, None),
    "--reserve-gib": ("reserve_gib", VALUE, None),
    "--cache": ("cache", VALUE, ("dynamic", "static")),
    "--static-max-tokens": ("static_max_tokens", VALUE, None),
    "--mla-layout": ("mla_layout", VALUE, ("mla_latent", "mla_per_head")),
    "--shortlist": ("with_shortlist", FLAG, None),
    "--days": ("days", VALUE, None),
    "--runtime": ("runtime", VALUE, ("transformers", "vllm", "llama.cpp")),
    "--tp": ("tp", VALUE, None),
    "--pp": ("pp", VALUE, None),
    "--ep": ("ep", FLAG, None),
    "--pp-partition": ("pp_partition", VALUE, None),
    "--gpu-layers": ("gpu_layers", VALUE, None),
    "--tensor-split": ("tensor_split", VALUE, None),
    "--parallel": ("parallel", VALUE, None),
    "--sheet": ("sheet", VALUE, ("markdown", "json")),
    "--lang": ("lang", VALUE, CODES),
    "--json": ("as_json", FLAG, None),
}
# The command's one positional argument, and what must be given.
MODEL_ARGUMENT: Final = "path"
REQUIRED: Final = frozenset(("path", "tokens"))
# click runs shell completion instead of the command when this variable is set.
COMPLETION_VARIABLE: Final = "_ITERAGPU_COMPLETE"


def model_arguments(
    args: Sequence[str], environ: Mapping[str, str] = os.environ
) -> dict[str, Any] | None:
    """The raw values (parameter -> string, or True for a flag) of a `model` invocation the
    fast path fully understands, else None: the typer app is to parse `args`.

    >>> model_arguments(["model", "llama", "--tokens=8192", "--json"])
    {'path': 'llama', 'tokens': '8192', 'as_json': True}
    >>> model_arguments(["--lang", "id", "model", "--help"]) is None
    True
    """
    if COMPLETION_VARIABLE in environ:
        return None
    values: dict[str, Any] = {}
    tokens = iter(args)
    for token in tokens:  # the group's options, up to the command
        if token == COMMAND:
            break
        if not _read_option(token, tokens, GROUP_OPTIONS, values):
            return None
    else:
        return None  # no command
    for token in tokens:
        if token.startswith("-") and token != "-":
            if not _read_option(token, tokens, MODEL_OPTIONS, values):
                return None
        elif MODEL_ARGUMENT in values or token == "-":
            return None  # a second positional, or `-` (stdin to some tools)
        else:
            values[MODEL_ARGUMENT] = token
    return values if values.keys() >= REQUIRED else None


def _read_option(
    token: str,
    rest: Iterator[str],
    options: Mapping[str, tuple[str, bool, tuple[str, ...] | None]],
    values: dict[str, Any],
) -> bool:
    """Read the option `token` (and its value, from `rest`) into `values`; False when it is
    not one the fast path understands as click would."""
    name, equals, value = token.partition("=")
    if name not in options:
        return False  # `--help`, `--version`, `--`, a short or unknown option
    parameter, takes_value, choices = options[name]
    if parameter in values:
        return False  # repeated (click keeps the last; the app says so, not us)
    if not takes_value:
        if equals:
            return False  # click: the option does not take a value
        values[parameter] = True
        return True
    if not equals:
        following = next(rest, None)
        # Missing, or what click would take as the value while the reader meant an option.
        if following is None or following.startswith("-"):
            return False
        value = following
    if choices is not None and value not in choices:
        return False
    values[parameter] = value
    return True


def run(arguments: dict[str, Any], lang: str) -> None:
    """Answer a `model` invocation read by `model_arguments`, as the typer command answers it:
    the output collected and written once; a refused input ends the run with one line on
    stderr (exit 2), in `lang`."""
    from iteragpu.cli.model_request import model_output, model_request
    from iteragpu.core.numbers import InputError

    raw = {name: value for name, value in arguments.items() if name != "lang"}
    output = Collected(getattr(sys.stdout, "encoding", None))
    with contextlib.redirect_stdout(output):
        try:
            text = model_output(model_request(**raw, lang=lang))
        except InputError as error:
            refuse(error, lang)
        print(text)
    write_output(output.getvalue(), lang)


def answer(args: Sequence[str], environ: Mapping[str, str] = os.environ) -> bool:
    """Answer `args` on the fast path and say True, or say False (nothing read or written)."""
    arguments = model_arguments(args, environ)
    if arguments is None:
        return False
    run(arguments, reader_language(args, environ))
    return True


def main() -> None:
    """Console-script entry point: the fast path when it understands the arguments, else the
    typer app (`iteragpu.cli.app.main`)."""
    args = sys.argv[1:]
    arguments = model_arguments(args, os.environ)
    if arguments is None:
        from iteragpu.cli.app import main as app_main

        app_main()
        return
    try:
        run(arguments, reader_language(args, os.environ))
    finally:
        # As `iteragpu.cli.app.main` does: the interpreter's exit collections skip what
        # survives, since the process ends (the output is already written).
        gc.freeze()
    sys.exit(EXIT_OK)
