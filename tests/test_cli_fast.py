"""The console script's fast path (`iteragpu.cli.fast`): `iteragpu model` answered without click
or typer, exactly as the typer app answers it, and everything else left to the app.

- its option table is the `model` command's, read from the command typer builds;
- for a broad list of arguments, `iteragpu.cli.fast.main` (the console script) and
  `iteragpu.cli.app.main` (the typer app alone) print the same stdout and stderr and end with the
  same exit code, whether the fast path answers or declines;
- what the fast path does not fully understand it declines, reading and writing nothing;
- answering, it imports neither click nor typer (in a fresh interpreter).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import io
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from models.published_configs import GEMMA_2_9B, LLAMA_3_8B
from test_cli_model import model_folder, model_refusals

from iteragpu.cli import app as app_module
from iteragpu.cli import fast, options, output
from iteragpu.cli.app import COMMANDS, app
from iteragpu.cli.model_request import model_request
from iteragpu.i18n.catalogue import translate
from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
# The option table is the command's
# ---------------------------------------------------------------------------------------------


def built_group() -> click.Group:
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    return group


def built_model_command() -> click.Command:
    """The `model` command as the app builds it on demand (`IteraGPU.get_command`)."""
    group = built_group()
    command = group.get_command(click.Context(group, info_name="iteragpu"), fast.COMMAND)
    assert command is not None
    return command


def option_table(params: list[click.Parameter]) -> dict[str, tuple[str, bool, Any]]:
    """option -> (parameter, takes a value, choices) of click's options, as the fast path's
    table writes them; refuses what its parser does not read (a secondary name, repetition,
    several values, an environment variable, a counter)."""
    table: dict[str, tuple[str, bool, Any]] = {}
    for param in params:
        if not isinstance(param, click.Option):
            continue
        assert param.secondary_opts == [], param.name
        assert not param.multiple and param.nargs == 1 and not param.count, param.name
        assert param.envvar is None, param.name
        assert not param.is_eager or param.name == "version", param.name  # --version: declined
        choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else None
        assert param.name is not None
        for name in param.opts:
            table[name] = (param.name, not param.is_flag, choices)
    return table


def test_the_table_is_the_model_commands_options() -> None:
    command = built_model_command()
    assert option_table(command.params) == fast.MODEL_OPTIONS
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    assert [(a.name, a.nargs, a.required) for a in arguments] == [(fast.MODEL_ARGUMENT, 1, True)]
    assert {p.name for p in command.params if p.required} == fast.REQUIRED
    # What the parser assumes of click: options after PATH too, no abbreviation or
    # normalisation of names, `--help` the only help option (declined, as unknown).
    assert command.allow_interspersed_args and not command.ignore_unknown_options
    assert command.context_settings == {}
    assert [
        p.opts for p in command.get_params(click.Context(command)) if p not in command.params
    ] == [["--help"]]


def test_the_table_is_the_groups_options_before_the_command() -> None:
    group = built_group()
    table = option_table(group.params)
    assert {name: table[name] for name in fast.GROUP_OPTIONS} == fast.GROUP_OPTIONS
    # The group's other options are declined: a new one must be thought about here.
    assert set(table) - set(fast.GROUP_OPTIONS) == {"--version"}
    assert not group.allow_interspersed_args and group.context_settings == {}
    assert fast.COMMAND in COMMANDS
    assert fast.MODEL_OPTIONS["--lang"][2] == fast.GROUP_OPTIONS["--lang"][2] == CODES


def test_the_requests_defaults_are_the_commands() -> None:
    """The fast path passes only the options given: the request's defaults are the command's."""
    signature = inspect.signature(model_request).parameters
    params = built_model_command().params
    assert set(signature) == {p.name for p in params}
    for param in params:
        assert param.name is not None
        default = signature[param.name].default
        if param.required:
            assert default is inspect.Parameter.empty, param.name
        elif param.name != "lang":  # the app makes the reader's language its default
            assert default == param.default, param.name


def test_the_exit_codes_are_the_apps() -> None:
    assert (output.EXIT_OK, output.EXIT_INVALID_INPUT) == (
        options.EXIT_OK,
        options.EXIT_INVALID_INPUT,
    )


def test_the_console_script_is_the_fast_path() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert project["project"]["scripts"] == {"iteragpu": "iteragpu.cli.fast:main"}


# ---------------------------------------------------------------------------------------------
# The same answer both ways
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, str]:
    return {
        "{llama}": str(model_folder(tmp_path, LLAMA_3_8B, "llama")),
        "{gemma}": str(model_folder(tmp_path, GEMMA_2_9B, "gemma")),
        "{config}": str(model_folder(tmp_path, LLAMA_3_8B, "as-file") / "config.json"),
        "{absent}": str(tmp_path / "absent"),
    }


BASE = ["model", "{llama}", "--tokens", "8192"]
# What the fast path answers.
ANSWERED: list[list[str]] = [
    [*BASE, "--dtype", "bfloat16", "--json"],
    [*BASE, "--dtype", "bfloat16"],
    [*BASE, "--lang", "id"],
    [*BASE, "--lang", "id", "--json"],
    [*BASE, "--lang", "ko"],
    ["--lang", "id", "model", "{llama}", "--tokens", "8192"],
    ["--lang=id", "model", "{llama}", "--tokens=8192", "--json"],
    ["model", "--tokens", "8192", "{llama}"],
    ["model", "--tokens=8192", "--sequences=4", "--reserve-gib=2", "{llama}", "--json"],
    ["model", "{config}", "--tokens", "1024", "--bits", "4"],
    [*BASE, "--reserve-gib", "4,5", "--lang", "id"],
    [*BASE, "--reserve-gib", "4,5", "--lang", "ko"],
    [*BASE, "--reserve-gib", "4.5", "--lang", "id"],
    [*BASE, "--kv-bytes-per-value", "0.5", "--json"],
    [*BASE, "--kv-dtype", "float8_e4m3fn", "--bits", "4"],
    [*BASE, "--kv-dtype", "float3"],
    [*BASE, "--dtype", "nonsense"],
    [*BASE, "--bits", "4", "--dtype", "int8"],
    [*BASE, "--cache", "static", "--static-max-tokens", "16384", "--json"],
    [*BASE, "--cache", "static", "--static-max-tokens", "100"],
    [*BASE, "--cache=dynamic", "--mla-layout=mla_per_head"],
    ["model", "{gemma}", "--tokens", "8192", "--cache", "static", "--lang", "id"],
    ["model", "{gemma}", "--tokens", "8192", "--kv-dtype", "bfloat16", "--json"],
    # Bad numbers, in both grammars.
    ["model", "{llama}", "--tokens", "abc"],
    ["model", "{llama}", "--tokens", "abc", "--lang", "id"],
    ["model", "{llama}", "--tokens", "0"],
    ["model", "{llama}", "--tokens", "2e9", "--json"],
    ["model", "{llama}", "--tokens", "1e99999999"],
    ["model", "{llama}", "--tokens", "32k"],
    ["model", "{llama}", "--tokens", "8,5", "--lang", "id"],
    ["model", "{llama}", "--tokens="],
    [*BASE, "--sequences=-1"],
    [*BASE, "--reserve-gib=-1", "--lang", "id"],
    [*BASE, "--kv-bytes-per-value", "9"],
    # Files that are not there.
    ["model", "{absent}", "--tokens", "8192"],
    ["model", "{absent}", "--tokens", "8192", "--lang", "id", "--json"],
    ["model", "", "--tokens", "8192"],
    # --days and --shortlist go together.
    [*BASE, "--days", "2"],
    [*BASE, "--days", "2", "--lang", "id"],
    [*BASE, "--shortlist"],
    [*BASE, "--shortlist", "--days", "2"],
    [*BASE, "--shortlist", "--days", "2", "--json"],
    [*BASE, "--shortlist", "--days=2", "--lang", "id"],
    [*BASE, "--shortlist", "--days", "abc"],
    # A split over GPUs (iteragpu.parallel), its refusals, its short list.
    [*BASE, "--tp", "2", "--runtime", "vllm", "--json"],
    [*BASE, "--tp", "2", "--lang", "id"],
    [*BASE, "--tp=8", "--runtime=vllm", "--shortlist", "--days", "3"],
    [*BASE, "--pp", "2", "--runtime", "vllm", "--pp-partition", "20,12", "--json"],
    [*BASE, "--tp", "3", "--runtime", "vllm"],
    [*BASE, "--tp", "16", "--lang", "id"],
    [*BASE, "--ep", "--tp", "2"],
    [*BASE, "--gpu-layers", "5"],
    [*BASE, "--tp", "2", "--cache", "static"],
    [*BASE, "--runtime", "llama.cpp", "--tensor-split", "3,1"],
    # The load sheet (iteragpu.i18n.sheet), its split, and what it refuses.
    [*BASE, "--sheet", "markdown"],
    [*BASE, "--sheet=json", "--lang", "id"],
    [*BASE, "--tp", "2", "--runtime", "vllm", "--sheet", "markdown", "--lang", "id"],
    [*BASE, "--sheet", "json", "--json"],
    [*BASE, "--sheet", "markdown", "--shortlist", "--days", "2"],
]
# What it leaves to the typer app.
DECLINED: list[list[str]] = [
    [],
    ["--help"],
    ["-h"],
    ["--version"],
    ["--lang", "id"],
    ["--lang", "id", "--help"],
    ["model"],
    ["model", "--help"],
    ["model", "--help", "--lang", "id"],
    [*BASE, "--help"],
    [*BASE, "-h"],
    ["model", "{llama}"],  # no --tokens
    ["model", "--tokens", "8192"],  # no PATH
    ["model", "{llama}", "--tokens"],  # no value
    [*BASE, "--dtype"],
    ["model", "{llama}", "--tokens", "--json"],  # click takes `--json` as the value
    [*BASE, "--reserve-gib", "-1"],
    ["model", "{llama}", "--tokens", "-5"],
    [*BASE, "--tokens", "16"],  # repeated
    [*BASE, "--json", "--json"],
    [*BASE, "--shortlist", "--shortlist", "--days", "2"],
    ["--lang", "id", *BASE, "--lang", "ko"],
    [*BASE, "--lang", "id", "--lang", "ko"],
    [*BASE, "--", "--json"],
    ["model", "--", "{llama}", "--tokens", "8192"],
    [*BASE, "other"],  # a second positional
    ["model", "-", "--tokens", "8192"],
    [*BASE, "--cache", "Static"],  # choices as click checks them
    [*BASE, "--cache", "paged"],
    [*BASE, "--mla-layout", "latent"],
    [*BASE, "--runtime", "sglang"],
    [*BASE, "--sheet", "xml"],
    [*BASE, "--sheet"],
    [*BASE, "--ep=1"],
    [*BASE, "--lang", "fr"],
    ["--lang", "fr", *BASE],
    ["--lang=", *BASE],
    [*BASE, "--json=1"],
    [*BASE, "--shortlist=yes", "--days", "2"],
    [*BASE, "--no-json"],
    [*BASE, "--unknown", "x"],
    [*BASE, "--token", "9"],  # click does not complete abbreviations
    [*BASE, "-t", "9"],
    ["--json", *BASE],  # a command's option before the command
    ["--version", *BASE],
    ["modle", "{llama}", "--tokens", "8192"],
    ["Model", "{llama}", "--tokens", "8192"],
    ["weights", "--params", "7e9", "--bits", "16"],
    ["weights", "--params", "7e9", "--bits", "16", "--json"],
    ["examples", "list"],
    ["kv-cache", "--help"],
]


def shown(args: list[str]) -> str:
    return " ".join(args) or "(no arguments)"


def filled(args: list[str], folders: dict[str, str]) -> list[str]:
    return [folders.get(arg, arg) for arg in args]


def outcome(call: Callable[[], object]) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of `call`, an entry point that ends with SystemExit."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            call()
        except SystemExit as exit:
            code = exit.code
    return out.getvalue(), err.getvalue(), 0 if code is None else code


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], tuple[Any, Any]]:
    """Run `args` through the console script (`fast.main`) and through the typer app alone
    (`app.main`, as the console script was), each in this process; the collector is not
    frozen here, as the tests go on."""
    monkeypatch.setattr(gc, "freeze", lambda: None)

    def both(args: list[str]) -> tuple[Any, Any]:
        monkeypatch.setattr(sys, "argv", ["iteragpu", *args])
        answered = outcome(fast.main)
        typer_path = outcome(app_module.main)
        return answered, typer_path

    return both


@pytest.mark.parametrize("args", ANSWERED, ids=shown)
def test_the_fast_path_answers_as_the_app(
    args: list[str], folders: dict[str, str], entry_points: Any
) -> None:
    args = filled(args, folders)
    assert fast.model_arguments(args) is not None, args
    answered, typer_path = entry_points(args)
    assert answered == typer_path, args
    stdout, stderr, code = answered
    assert code in (0, 2)
    assert (stdout == "") == (code == 2) and (stderr == "") == (code == 0)


@pytest.mark.parametrize("args", DECLINED, ids=shown)
def test_the_fast_path_declines_and_the_app_answers(
    args: list[str], folders: dict[str, str], entry_points: Any
) -> None:
    args = filled(args, folders)
    assert fast.model_arguments(args) is None, args
    # Declining, it reads and writes nothing: the app alone answers.
    assert outcome(lambda: fast.answer(args)) == ("", "", 0)
    assert fast.answer(args) is False
    answered, typer_path = entry_points(args)
    assert answered == typer_path, args


@pytest.mark.parametrize("lang", CODES)
def test_every_refusal_of_the_model_tests_is_said_alike(
    tmp_path: Path, lang: str, entry_points: Any
) -> None:
    refusals = model_refusals(tmp_path)
    answered = 0
    for args in refusals:
        args = [*args, "--lang", lang]
        answered += fast.model_arguments(args) is not None
        fast_result, typer_result = entry_points(args)
        assert fast_result == typer_result, args
        assert fast_result[2] == 2, args
    # Declined: `--reserve-gib -1`, `--cache paged` and the missing --tokens (click's words).
    assert answered == len(refusals) - 3


@pytest.mark.parametrize(("locale", "lang"), [("id_ID.UTF-8", "id"), ("ko_KR.UTF-8", "ko")])
def test_the_locale_chooses_the_language_both_ways(
    locale: str, lang: str, folders: dict[str, str], entry_points: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LANG", locale)
    for args in ([*BASE, "--reserve-gib", "1,5"], [*BASE, "--days", "2"], BASE):
        args = filled(args, folders)
        answered, typer_path = entry_points(args)
        assert answered == typer_path, args
    _, stderr, _ = entry_points(filled([*BASE, "--days", "2"], folders))[0]
    assert stderr.startswith(f"iteragpu: {translate('error', lang)}: ")


def test_shell_completion_is_left_to_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fast.COMPLETION_VARIABLE, "bash_source")
    assert fast.model_arguments(["model", "llama", "--tokens", "8"]) is None


# ---------------------------------------------------------------------------------------------
# In a fresh interpreter, as the console script runs
# ---------------------------------------------------------------------------------------------


def run_entry(module: str, args: list[str], **streams: Any) -> subprocess.CompletedProcess[str]:
    """`module.main()` in a fresh interpreter with `args`; which of click and typer it
    imported is told after everything else, on the last line of stderr."""
    code = (
        "import sys\n"
        f"sys.argv = ['iteragpu', *{args!r}]\n"
        f"from {module} import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('imported:', sorted({'click', 'typer'} & set(sys.modules)), file=sys.stderr)\n"
    )
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **streams}
    return subprocess.run([sys.executable, "-c", code], text=True, check=False, **streams)


def split_imports(stderr: str) -> tuple[str, str]:
    text, _, imported = stderr.rpartition("imported: ")
    return text, imported.strip()


@pytest.mark.parametrize(
    "args",
    [
        [*BASE, "--dtype", "bfloat16", "--json"],
        [*BASE, "--dtype", "bfloat16"],
        ["--lang", "id", *BASE, "--shortlist", "--days", "2"],
        [*BASE, "--days", "2"],  # refused: the error line comes without click too
        ["model", "{absent}", "--tokens", "8192", "--json"],
    ],
    ids=shown,
)
def test_the_console_script_answers_without_click_or_typer(
    args: list[str], folders: dict[str, str]
) -> None:
    args = filled(args, folders)
    answered = run_entry("iteragpu.cli.fast", args)
    text, imported = split_imports(answered.stderr)
    assert imported == "[]", answered.stderr
    typer_path = run_entry("iteragpu.cli.app", args)
    typer_text, typer_imported = split_imports(typer_path.stderr)
    assert typer_imported == "['click', 'typer']"
    assert (answered.stdout, text, answered.returncode) == (
        typer_path.stdout,
        typer_text,
        typer_path.returncode,
    )


def test_the_console_script_leaves_the_rest_to_the_app(folders: dict[str, str]) -> None:
    """The check above can fail: declining, the console script imports typer and says what
    the app says."""
    for args in (["model", "--help"], [*filled(BASE, folders), "--tokens", "1"]):
        declined = run_entry("iteragpu.cli.fast", args)
        text, imported = split_imports(declined.stderr)
        assert imported == "['click', 'typer']"
        typer_path = run_entry("iteragpu.cli.app", args)
        assert (declined.stdout, declined.returncode) == (typer_path.stdout, typer_path.returncode)
        assert text == split_imports(typer_path.stderr)[0]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failed_write_is_one_line_both_ways(folders: dict[str, str]) -> None:
    args = [*filled(BASE, folders), "--json"]
    results = []
    for module in ("iteragpu.cli.fast", "iteragpu.cli.app"):
        with open("/dev/full", "w") as full:
            done = run_entry(module, args, stdout=full, stderr=subprocess.PIPE)
        results.append((split_imports(done.stderr)[0], done.returncode))
    assert results[0] == results[1]
    text, code = results[0]
    assert code == 2 and len(text.splitlines()) == 1, text
