"""A Korean or an Indonesian reader of the CLI meets only their language: every help page, every
table and every refusal, with the numbers they type read in their own grammar and the numbers
shown in their own format. JSON keys and reason codes stay English.

The detectors (`foreign_text`) look for an English phrase or a number in another language's
format; every help page is also held to the terminal's width in cells (a Hangul syllable takes
two).
"""

from __future__ import annotations

import gettext
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import click.testing
import pytest
import typer.main
from foreign_text import english_runs, foreign_numbers
from support import per_language
from test_cli import BAD_INPUTS, JSON_COMMANDS, W, kv_args
from test_cli_model import model_refusals
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.cli.language import reads_decimal_comma
from iteragpu.cli.table import display_width
from iteragpu.i18n.catalogue import catalogue_path, translate
from iteragpu.i18n.languages import CODES

COLUMNS = 80
LOCALES = dict(per_language({"ko": "ko_KR.UTF-8", "id": "id_ID.UTF-8"}))
ROOT = Path(__file__).resolve().parents[1]
FIXTURE_RESULT = ROOT / "tests" / "lab" / "data" / "result-1.0.0-fake-counters.json"


def invoke(args: list[str], **env: str | None) -> Any:
    runner = CliRunner(env={"COLUMNS": str(COLUMNS), **env})
    return runner.invoke(app, args, prog_name="iteragpu")


def in_locale(lang: str) -> dict[str, str]:
    """The environment of a reader whose locale is `lang` (no `--lang` given)."""
    return {"LANG": LOCALES[lang]}


def command_paths() -> Iterator[list[str]]:
    """Every command and subcommand of the app, as it lists them: the app itself first."""

    def walk(command: click.Command, path: list[str]) -> Iterator[list[str]]:
        yield path
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(app), [])


PATHS = list(command_paths())


def assert_reader_text(text: str, lang: str) -> None:
    assert english_runs(text) == [], text
    assert foreign_numbers(text, lang) == [], text


def test_every_command_is_walked() -> None:
    names = {" ".join(path) for path in PATHS}
    assert {"", "weights", "kv-cache", "convert", "shortlist", "report", "examples list"} <= names
    assert "examples run" in names


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "app" for p in PATHS])
def test_every_help_page_speaks_the_readers_language(path: list[str], lang: str) -> None:
    for result in (
        invoke([*path, "--help", "--lang", lang]),
        invoke([*path, "--help"], **in_locale(lang)),
    ):
        assert result.exit_code == 0, result.output
        text = result.stdout
        assert text.startswith(translate("Usage:", lang) + " iteragpu"), text[:80]
        assert translate("Show this message and exit.", lang) in text
        assert_reader_text(text, lang)
        wide = [line for line in text.splitlines() if display_width(line) > COLUMNS]
        assert wide == [], wide


def test_the_app_help_lists_every_command() -> None:
    text = invoke(["--help"]).stdout
    for path in PATHS:
        if len(path) == 1:
            assert f"  {path[0]} " in text


def _evidence_files(tmp_path: Path) -> dict[str, Path]:
    """Lab results the short list refuses, one per kind of refusal."""
    good = json.loads(FIXTURE_RESULT.read_text("utf-8"))
    files = {
        "broken JSON": "{",
        "not UTF-8": b"\xff\xfe{",
        "not a lab result": json.dumps({"hello": 1}),
        "wrong type": json.dumps({**good, "device": 3}),
        "NaN": '{"a": NaN}',
        "fraction": '{"a": 1.5}',
        "duplicate key": '{"a": 1, "a": 2}',
        "device not in the catalog": json.dumps(good),  # the fixture's fake card
    }
    paths = {}
    for name, content in files.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, "utf-8")
        paths[name] = path
    paths["no such file"] = tmp_path / "absent.json"
    paths["a folder"] = tmp_path
    return paths


# Refusals of each reader's grammar: a decimal comma in Korean; in Indonesian, a separator that
# may group thousands, or separators used as groups.
GRAMMAR_REFUSALS = per_language(
    {
        "ko": [
            ["weights", "--params", "7e9", "--bits", "4,5"],
            ["convert", "24,5 GB", "GiB"],
            ["shortlist", "--need-gib", "19,04", "--days", "3"],
        ],
        "id": [
            ["weights", "--params", "1,234", "--bits", "16"],
            ["weights", "--params", "1.500B", "--bits", "16"],
            ["weights", "--params", "7e9", "--bits", "4,5,6"],
            ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "1.234,5"],
            ["convert", "1.000 GB", "GiB"],
            ["convert", "1,000,000 B", "GiB"],
            ["shortlist", "--need-gib", "1,234,5", "--days", "3"],
        ],
    }
)


def _names_a_language(args: list[str]) -> bool:
    return "--lang" in args and args[args.index("--lang") + 1] in CODES


def refusals(tmp_path: Path, lang: str) -> list[list[str]]:
    evidence = [
        ["shortlist", "--need-gib", "19.04", "--days", "3", "--evidence", str(path)]
        for path in _evidence_files(tmp_path).values()
    ]
    shortlist = ["shortlist", "--need-gib", "19.04", "--days", "3"]
    return [
        # Korean's own grammar refusals are in GRAMMAR_REFUSALS.
        *(a for name, a, _ in BAD_INPUTS if "in Korean" not in name and not _names_a_language(a)),
        *dict(GRAMMAR_REFUSALS)[lang],
        *evidence,
        *model_refusals(tmp_path),
        [*shortlist, "--require", "memory"],
        [*shortlist, "--confirmed", "nope:context"],
        [*shortlist, "--failed", "rtx-4090"],
        ["examples", "run"],
        ["examples", "lst"],
        ["report", str(tmp_path / "absent.json")],
        ["report", str(_evidence_files(tmp_path)["broken JSON"])],
        ["report", str(FIXTURE_RESULT), "--params", "7e9"],
        ["report", str(_result_without_device(tmp_path))],
        ["--lang", "fr", "weights"],
        ["--version=yes"],
    ]


def _result_without_device(tmp_path: Path) -> Path:
    """The fixture with its device removed from the environment."""
    data = json.loads(FIXTURE_RESULT.read_text("utf-8"))
    data["environment"]["devices"] = []
    path = tmp_path / "no-device.json"
    path.write_text(json.dumps(data), "utf-8")
    return path


@pytest.mark.parametrize("lang", CODES)
def test_every_refusal_is_one_line_in_the_readers_language(lang: str, tmp_path: Path) -> None:
    prefix = f"iteragpu: {translate('error', lang)}: "
    for args in refusals(tmp_path, lang):
        result = invoke(args, **in_locale(lang))
        shown = [a[:30] for a in args]
        assert result.exit_code == 2, (shown, result.output)
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(prefix), (shown, line)
        assert english_runs(line) == [], (shown, line)
        assert foreign_numbers(line, lang) == [], (shown, line)


READINGS = [
    W,
    [*W[:4], "4", "--reserve-gib", "2.5"],
    kv_args(sequences="4"),
    kv_args(tokens="16384", window="8192"),
    kv_args(bytes_per_value="0.125", tokens="3"),
    ["convert", "24e9 B", "GiB"],
    ["convert", "143771 MiB", "GB", "--decimals", "4"],
    ["shortlist", "--need-gib", "19.04", "--days", "3"],
    ["shortlist", "--need-gib", "60", "--days", "2", "--require", "context"],
    ["examples", "list"],
    ["examples", "run", "--all"],
    ["model", str(ROOT / "snippets" / "models" / "gemma-2-9b"), "--tokens", "8192"],
    [
        *["model", str(ROOT / "snippets" / "models" / "llama-3-8b"), "--tokens", "8192"],
        *["--sequences", "4", "--kv-bytes-per-value", "0.5", "--shortlist", "--days", "3"],
    ],
]


@pytest.mark.parametrize("lang", CODES)
def test_every_table_speaks_the_readers_language(lang: str) -> None:
    for args in READINGS:
        result = invoke(args, **in_locale(lang))
        assert result.exit_code == 0, (args, result.output)
        assert_reader_text(result.stdout, lang)


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("args", [[], ["--params", "7e9", "--bits", "4,5"]])
def test_the_report_speaks_the_readers_language(lang: str, args: list[str]) -> None:
    """What the lab recorded (its path, device name and error message) is the lab's; every
    other word and number of the report is the reader's."""
    bits = [a.replace(",", ".") if lang == "ko" else a for a in args]
    result = invoke(["report", str(FIXTURE_RESULT), *bits], **in_locale(lang))
    assert result.exit_code == 0, result.output
    recorded = json.loads(FIXTURE_RESULT.read_text("utf-8"))
    text = result.stdout
    for value in (
        str(FIXTURE_RESULT),
        recorded["environment"]["devices"][0]["name"],
        recorded["outcome"]["error"]["message"],
    ):
        assert value in text
        text = text.replace(value, "")
    assert_reader_text(text, lang)


# ---------------------------------------------------------------------------------------------
# The grammar follows the reader
# ---------------------------------------------------------------------------------------------


def _json(args: list[str], lang: str) -> dict[str, Any]:
    result = invoke([*args, "--json", "--lang", lang])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


@pytest.mark.parametrize(
    ("indonesian", "korean"),
    [
        (["weights", "--params", "7e9", "--bits", "4,5"], [*W[:4], "4.5"]),
        (["weights", "--params", "1,5B", "--bits", "16"], ["weights", "--params", "1.5B", *W[3:]]),
        ([*W, "--reserve-gib", "0,25"], [*W, "--reserve-gib", "0.25"]),
        (["convert", "24,5 GB", "GiB"], ["convert", "24.5 GB", "GiB"]),
        (["convert", "0,125 KiB", "B"], ["convert", "0.125 KiB", "B"]),
        (kv_args(bytes_per_value="1,1250"), kv_args(bytes_per_value="1.1250")),
        (
            ["shortlist", "--need-gib", "19,04", "--days", "3"],
            ["shortlist", "--need-gib", "19.04", "--days", "3"],
        ),
    ],
)
def test_indonesian_reads_a_decimal_comma(indonesian: list[str], korean: list[str]) -> None:
    assert _json(indonesian, "id") == _json(korean, "ko")
    assert _json(korean, "id") == _json(korean, "ko")  # the dot everywhere


def test_the_locale_decides_the_grammar_without_lang() -> None:
    args = ["convert", "24,5 GB", "GiB", "--json"]
    assert invoke(args, LANG="id_ID.UTF-8").exit_code == 0
    assert invoke(args, LANG="ko_KR.UTF-8").exit_code == 2
    assert invoke(args, LANG="C.UTF-8").exit_code == 2


@pytest.mark.parametrize(
    ("value", "whole", "decimal"),
    [
        ("1,234", "1234", "1,2340"),
        ("1.234", "1234", "1,2340"),
        ("1.000", "1000", "1"),
        ("12,500", "12500", "12,5"),
        ("-1,125e3", "-1125e3", "-1,1250e3"),
    ],
)
def test_a_separator_before_three_digits_is_refused_in_indonesian(
    value: str, whole: str, decimal: str
) -> None:
    result = invoke(
        ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", value, "--lang", "id"]
    )
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "ambigu" in line and f"'{value}'" in line
    assert f"tulis {whole} untuk bilangan bulat atau {decimal} untuk desimal" in line
    # ... while Korean reads the dot as its decimal point, and the comma never.
    korean = invoke(["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", value])
    assert korean.exit_code == (2 if "," in value else 0)


@pytest.mark.parametrize("value", ["0,125", "1234,567", "1,25", "1,2340", "1_000,5", ",5", "7,"])
def test_decimals_that_cannot_group_thousands_are_read_in_indonesian(value: str) -> None:
    result = invoke([*W, "--reserve-gib", value, "--lang", "id", "--json"])
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------------------------------------
# What stays English: the JSON's keys and codes
# ---------------------------------------------------------------------------------------------


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _keys(value)
    elif isinstance(node, list):
        for value in node:
            yield from _keys(value)


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=[" ".join(a[:2]) for a in JSON_COMMANDS])
def test_json_keys_and_codes_are_the_same_in_every_language(args: list[str]) -> None:
    payloads = {lang: _json(args, lang) for lang in CODES}
    keys = {lang: sorted(_keys(payload)) for lang, payload in payloads.items()}
    assert all(k == keys[CODES[0]] for k in keys.values())
    assert all(key.isascii() and key == key.lower() for key in keys[CODES[0]])
    statuses = {json.dumps(p.get("candidates", []), sort_keys=True) for p in payloads.values()}
    assert len(statuses) == 1  # statuses, reasons, ranks: codes, not words


# ---------------------------------------------------------------------------------------------
# The reader's language: --lang, else the locale
# ---------------------------------------------------------------------------------------------

WEIGHT_LABEL = per_language({"ko": "가중치만", "id": "Bobot saja"})


@pytest.mark.parametrize(
    ("env", "args", "lang"),
    [
        ({}, [], "ko"),
        ({"LANG": "id_ID.UTF-8"}, [], "id"),
        ({"LANG": "id"}, [], "id"),
        ({"LANG": "en_US.UTF-8"}, [], "ko"),
        ({"LC_MESSAGES": "id_ID.UTF-8", "LANG": "ko_KR.UTF-8"}, [], "id"),
        ({"LC_ALL": "ko_KR.UTF-8", "LANG": "id_ID.UTF-8"}, [], "ko"),
        ({"LC_ALL": "C", "LANG": "id_ID.UTF-8"}, [], "ko"),  # LC_ALL decides, C is no language
        ({"LANGUAGE": "fr:id", "LC_ALL": "ko_KR.UTF-8"}, [], "id"),
        ({"LANGUAGE": "en", "LANG": "id_ID.UTF-8"}, [], "ko"),  # LANGUAGE decides, as gettext
        ({"LANG": "id_ID.UTF-8"}, ["--lang", "ko"], "ko"),
        ({"LANG": "ko_KR.UTF-8"}, ["--lang=id"], "id"),
        ({"LANG": "ko_KR.UTF-8"}, ["--lang", "ko", "--lang", "id"], "id"),  # the last one
    ],
)
def test_the_language_comes_from_lang_then_the_locale(
    env: dict[str, str], args: list[str], lang: str
) -> None:
    result = invoke([*W, *args], **env)
    assert result.exit_code == 0, result.output
    assert dict(WEIGHT_LABEL)[lang] in result.stdout


def test_lang_before_the_command_counts_too() -> None:
    result = invoke(["--lang", "id", *W])
    assert dict(WEIGHT_LABEL)["id"] in result.stdout
    examples = invoke(["examples", "--lang", "id", "list"])
    assert examples.exit_code == 0 and "Contoh" in examples.stdout


def test_an_unknown_lang_is_refused_in_the_locales_language() -> None:
    result = invoke([*W, "--lang", "fr"], LANG="id_ID.UTF-8")
    assert result.exit_code == 2
    assert result.stderr.startswith("iteragpu: kesalahan: Nilai tidak valid untuk '--lang'")


def test_one_process_can_speak_both_languages_in_turn() -> None:
    """The app lends click its catalogue for one run only: nothing leaks into the next."""
    group = typer.main.get_command(app)
    for lang in (*CODES, *reversed(CODES)):
        runner = click.testing.CliRunner(env={"COLUMNS": "80"})
        result = runner.invoke(group, ["weights", "--help", "--lang", lang], prog_name="iteragpu")
        assert result.stdout.startswith(translate("Usage:", lang))
    assert click.formatting._("Usage:") == "Usage:"


# ---------------------------------------------------------------------------------------------
# The detectors find what they are meant to
# ---------------------------------------------------------------------------------------------

ENGLISH_OUTPUTS = [
    "error: not a number: '24,5'",
    "Missing option '--params'.",
    "No such option: --foo",
    "Usage: iteragpu weights [OPTIONS]",
    "  --help  Show this message and exit.",
    "Invalid value for '--lang': 'fr' is not one of 'ko', 'id'.",
    "could not write the output: No space left on device",
    "quantity must be a number and a byte unit such as '24e9 B' or '80 GB', got 'x'",
    "--params must be positive, got '0'",
    "Got unexpected extra argument (x)",
    "Dense weights (parameters x bits / 8) and the rough range with a reserve in GiB.",
    "  [default: 0]",
    "  --params TEXT",
]


@pytest.mark.parametrize("text", ENGLISH_OUTPUTS)
def test_the_english_detector_finds_the_old_outputs(text: str) -> None:
    assert english_runs(text)


@pytest.mark.parametrize(
    ("lang", "text"),
    per_language({"ko": "13,04 GiB, 1.073.741.824 B", "id": "13.04 GiB, 1,073,741,824 B"}),
)
def test_the_number_detector_finds_the_other_format(lang: str, text: str) -> None:
    assert len(foreign_numbers(text, lang)) == 2


# Messages of one grammar only: a reader of the other never meets them (`1234,5` in Korean).
DOT_GRAMMAR_ONLY = ("'.' as the decimal mark",)
COMMA_GRAMMAR_ONLY = ("one decimal mark", "',' or '.' for the decimals", "'24,5 GB'", "ambiguous")


@pytest.mark.parametrize("lang", CODES)
def test_no_translation_holds_english_or_the_other_number_format(lang: str) -> None:
    # Every entry of the compiled catalogue, as the standard library reads the whole file.
    with catalogue_path(lang).open("rb") as compiled:
        catalogue: dict[Any, str] = gettext.GNUTranslations(compiled)._catalog
    other_grammar = COMMA_GRAMMAR_ONLY if reads_decimal_comma(lang) is False else DOT_GRAMMAR_ONLY
    english, numbers = [], []
    for key, text in catalogue.items():
        message_id = key if isinstance(key, str) else key[0]
        if not message_id:
            continue  # the header
        filled = re.sub(r"\{[^{}]*\}", "X", text)
        if english_runs(filled):
            english.append(text)
        if foreign_numbers(filled, lang) and not any(m in message_id for m in other_grammar):
            numbers.append(text)
    assert english == []
    assert numbers == []
