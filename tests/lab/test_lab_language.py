"""The lab speaks its reader's language: `--lang` or the locale, every language of the project's
list, the glossary's words, the CLI's sentences where it says the same, the reader's number
format, and no English sentence in anything a reader meets (help, errors, output, JSON prose)."""

from __future__ import annotations

import argparse
import json
import re
import string
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from foreign_text import english_sentences, foreign_numbers
from hypothesis import given, settings
from hypothesis import strategies as st
from lab_support import (
    LAB_DIR,
    SCRIPT,
    fake_factory,
    make_clock,
    notebook_namespace,
    run_script,
    validation_argv,
)

from iteragpu.i18n.catalogue import translate
from iteragpu.i18n.environment import VARIABLES, environment_language
from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.i18n.messages import TEXTS
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS
from iteragpu.i18n.numbers import format_number
from iteragpu.lab import mesure_memoire as mm

glossary = pytest.importorskip("iteragpu.docs_tools.glossary")

# Proper names and Unicode's character names: English words that are names, not sentences.
ALLOWED_NAMES = ("ARABIC-INDIC DIGIT", "DEVANAGARI DIGIT", "FULLWIDTH DIGIT")


# --- One table per language of the list ------------------------------------------------------


@pytest.mark.parametrize(
    "table", ["MESSAGES", "ARGPARSE_MESSAGES", "NUMBER_SYMBOLS"], ids=lambda name: name
)
def test_the_script_speaks_every_language_of_the_list(table: str) -> None:
    """The script cannot import the package's list: its tables are pinned to it here."""
    codes = set(getattr(mm, table))
    missing, unknown = set(CODES) - codes, codes - set(CODES)
    assert not missing, f"mesure_memoire.{table} has no entry for {sorted(missing)}"
    assert not unknown, f"mesure_memoire.{table} has {sorted(unknown)}, not in the list"
    assert mm.SOURCE_LANGUAGE == SOURCE


@pytest.mark.parametrize("table", ["MESSAGES", "ARGPARSE_MESSAGES"])
@pytest.mark.parametrize("lang", CODES)
def test_every_language_says_every_message_with_the_same_fields(table: str, lang: str) -> None:
    source, messages = getattr(mm, table)[SOURCE], getattr(mm, table)[lang]
    assert not set(source) - set(messages), f"{lang} lacks {sorted(set(source) - set(messages))}"
    assert not set(messages) - set(source), (
        f"{lang} has extra {sorted(set(messages) - set(source))}"
    )
    for key, text in messages.items():
        assert fields(text) == fields(source[key]), (lang, key)
        assert text.strip(), (lang, key)


def fields(text: str) -> set[str]:
    """The {placeholders} of a message, or the %(placeholders)s of argparse's."""
    if "%" in text and "{" not in text:
        return set(re.findall(r"%(?:\((\w+)\))?[sr]", text))
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.mark.parametrize("lang", CODES)
def test_the_number_symbols_are_babels(lang: str) -> None:
    for symbol in ("group", "decimal", "minus"):
        assert mm.NUMBER_SYMBOLS[lang][symbol] == NUMBER_SYMBOLS[lang][symbol], (lang, symbol)


@settings(max_examples=300, deadline=None)
@given(
    st.fractions(min_value=0, max_value=10**15, max_denominator=10**9),
    st.integers(min_value=0, max_value=6),
    st.sampled_from(CODES),
)
def test_numbers_are_written_as_the_package_writes_them(
    value: Fraction, places: int, lang: str
) -> None:
    """The script's figures are Babel's (the package's format_number), trailing zeros dropped."""
    babel = format_number(value, places, lang)
    decimal = NUMBER_SYMBOLS[lang]["decimal"]
    if places:
        babel = babel.rstrip("0").rstrip(decimal)
    assert mm.local_number(value, lang, places) == babel
    whole = int(value)
    assert mm.local_number(whole, lang) == format_number(whole, 0, lang)


def all_message_texts() -> Iterator[tuple[str, str, str]]:
    """(language, where, text) for every text of the lab: script, notebook, READMEs, sheets."""
    for lang in CODES:
        for key, text in mm.MESSAGES[lang].items():
            yield lang, f"script {key}", text
        for key, text in mm.ARGPARSE_MESSAGES[lang].items():
            yield lang, f"argparse {key!r}", text
        for key, text in notebook_namespace("messages", lang=lang)["MESSAGES"].items():
            yield lang, f"notebook {key}", text
        for cell in notebook_cells(lang):
            yield lang, f"notebook cell {cell['id']}", "".join(cell["source"])
        for name in (f"README.{lang}.md", f"sizing_sheet.{lang}.md"):
            yield lang, name, (LAB_DIR / name).read_text("utf-8")


def notebook_cells(lang: str) -> list[dict[str, Any]]:
    from iteragpu.docs_tools import lab_archive

    cells: list[dict[str, Any]] = json.loads(lab_archive.notebook_bytes(lang))["cells"]
    return cells


def test_every_wide_character_takes_two_cells() -> None:
    """The script aligns columns by terminal cells without unicodedata (start-up): its table of
    wide characters agrees with Unicode's East Asian Width for every character it prints."""
    characters = {c for _, _, text in all_message_texts() for c in text}
    for character in sorted(characters):
        wide = unicodedata.east_asian_width(character) in "WF"
        assert mm._is_wide(character) == wide, (character, hex(ord(character)))


def test_no_lab_text_uses_a_word_the_glossary_avoids() -> None:
    terms = glossary.load().terms
    found = [
        (lang, where, variant, key)
        for lang, where, text in all_message_texts()
        for variant, key in glossary.avoided(text, lang, terms)
    ]
    assert found == []


# Messages that name a concept of the glossary: they use its term, in every language.
GLOSSARY_TERMS = {
    "phase_ok": ["peak"],
    "label_reserve_gib": ["reserve"],
    "reserve_help": ["reserve"],
    "label_total_gib": ["rough_range"],
    "estimate_title": ["estimate", "weights_only", "dense"],
    "label_weights": ["weights"],
    "warmup_help": ["warm_up", "pass"],
    "label_allocator_backend": ["allocator"],
    "counters_not_read": ["counter"],
    "activations": ["activations"],
    "gradients": ["gradients"],
    "kv_cache": ["kv_cache"],
    "optimizer_states": ["optimizer_state"],
    "not_predicted_temporaries": ["forward", "peak"],
    "measure_help": ["phase", "dense"],
    "note_reserve": ["reserve"],
    "note_quantized": ["quantization"],
    "device_not_gpu": ["device", "measurement"],
    "counter_end_reserved_bytes": ["out_of_memory", "allocator"],
    "context_help": ["context_length"],
}


@pytest.mark.parametrize("lang", CODES)
def test_messages_use_the_glossarys_terms(lang: str) -> None:
    words = {term.key: term.words[lang] for term in glossary.load().terms}
    for key, concepts in GLOSSARY_TERMS.items():
        for concept in concepts:
            term = words[concept]
            assert term.casefold() in mm.MESSAGES[lang][key].casefold(), (lang, key, term)


# Where the script says what the CLI says, it says it in the same words (the CLI's catalogue).
SAME_SENTENCES = {
    "note_reserve": TEXTS["reserve_not_proof"],
    "note_quantized": TEXTS["quantization_not_counted"],
    "error_word": "error",
}
SAME_WORDS_AS_ARGPARSE = {"usage: ": "Usage:", "options": "Options"}


@pytest.mark.parametrize("lang", CODES)
def test_the_script_says_what_the_cli_says_in_the_same_words(lang: str) -> None:
    for key, message in SAME_SENTENCES.items():
        assert mm.MESSAGES[lang][key] == translate(message, lang), (lang, key)
    for msgid, cli in SAME_WORDS_AS_ARGPARSE.items():
        ours = mm.ARGPARSE_MESSAGES[lang][msgid].strip().rstrip(":")
        assert ours.casefold() == translate(cli, lang).rstrip(":").casefold(), (lang, msgid)
    assert mm.say(lang, "command_metavar").casefold() == translate("Commands", lang).casefold()


# argparse's messages that reach no user of this script: programming errors and options the
# script does not declare (files, mutually exclusive groups are reported by argparse itself).
ARGPARSE_INTERNAL = {
    ".__call__() not defined",
    "cannot merge actions - two groups are named %r",
    "'required' is an invalid argument for positionals",
    "invalid option string %(option)r: must start with a character %(prefix_chars)r",
    "dest= is required for options like %r",
    "invalid conflict_resolution value: %r",
    "conflicting option string: %s",
    "conflicting option strings: %s",
    "mutually exclusive arguments must be optional",
    "cannot have multiple subparser arguments",
    "conflicting subparser: %s",
    "conflicting subparser alias: %s",
    "unknown parser %(parser_name)r (choices: %(choices)s)",
    'argument "-" with mode %r',
    "can't open '%(filename)s': %(error)s",
    "%r is not callable",
    "%(prog)s: error: %(message)s\n",  # _Parser.error writes the line itself
    "show program's version number and exit",  # --version has its own help
    "subcommands",  # only with a title, which the script does not give
}


def argparse_messages() -> set[str]:
    """Every message the running Python's argparse looks up through `_` or `ngettext`."""
    source = Path(argparse.__file__).read_text("utf-8")
    found = set(re.findall(r"\b_\(\s*'((?:[^'\\]|\\.)*)'", source))
    found |= set(re.findall(r'\b_\(\s*"((?:[^"\\]|\\.)*)"', source))
    for singular, plural in re.findall(r"ngettext\(\s*'([^']*)',\s*'([^']*)'", source):
        found |= {singular, plural}
    # implicit concatenation of two literals: argparse writes a long message on two lines
    for first, second in re.findall(r"\b_\(\s*'([^']*)'\s*\n\s*'([^']*)'", source):
        found.add(first + second)
    return {m.encode().decode("unicode_escape") for m in found}


@pytest.mark.parametrize("lang", CODES)
def test_every_message_of_argparse_is_said_in_every_language(lang: str) -> None:
    reachable = {m for m in argparse_messages() if m not in ARGPARSE_INTERNAL}
    reachable = {m for m in reachable if not any(m.startswith(i[:20]) for i in ARGPARSE_INTERNAL)}
    missing = reachable - set(mm.ARGPARSE_MESSAGES[lang])
    assert not missing, f"argparse says {sorted(missing)} in English: add them to {lang}"


def test_argparse_speaks_english_again_after_a_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The translation is swapped in for a run only: other users of argparse are untouched."""
    before = (argparse._, argparse.ngettext)  # type: ignore[attr-defined]
    assert mm.main(["--lang", "id", "estimate"]) == 2
    assert (argparse._, argparse.ngettext) == before  # type: ignore[attr-defined]
    assert "argumen berikut wajib diisi" in capsys.readouterr().err


# --- Which language: --lang, else the locale, as the CLI reads it ------------------------------

LOCALES = st.sampled_from(
    [
        *["", "C", "C.UTF-8", "POSIX", "en_US.UTF-8", "id_ID.UTF-8", "id", "ko_KR.UTF-8"],
        *["ko-KR", "fr:id", "en:ko_KR", "fr_FR:de", "id_ID@euro", "KO", "in_ID.UTF-8"],
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(VARIABLES), LOCALES))
def test_the_locale_is_read_as_the_cli_reads_it(environ: dict[str, str]) -> None:
    assert tuple(mm.LOCALE_VARIABLES) == tuple(VARIABLES)
    assert mm.locale_language(environ) == environment_language(environ)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--lang", "id", "estimate"], "id"),
        (["estimate", "--lang=id"], "id"),
        (["estimate", "--la", "id"], "id"),
        (["--lang", "xx", "estimate"], "ko"),  # argparse refuses it, in the locale's language
        (["estimate", "--", "--lang", "id"], "ko"),
        (["estimate", "--lang"], "ko"),
    ],
)
def test_lang_is_read_before_parsing(argv: list[str], expected: str) -> None:
    assert mm.requested_language(argv, {}) == expected
    assert mm.requested_language(argv, {"LANG": "id_ID.UTF-8"}) in (expected, "id")


@pytest.mark.parametrize(
    ("locale", "argv", "lang"),
    [
        ({"LANG": "id_ID.UTF-8"}, [], "id"),
        ({"LC_ALL": "C.UTF-8", "LANG": "id_ID.UTF-8"}, [], "ko"),
        ({"LANGUAGE": "fr:id", "LANG": "ko_KR.UTF-8"}, [], "id"),
        ({"LANG": "en_US.UTF-8"}, [], "ko"),
        ({"LANG": "id_ID.UTF-8"}, ["--lang", "ko"], "ko"),
        ({}, ["--lang", "id"], "id"),
    ],
)
def test_the_language_of_a_run(
    tmp_path: Path, locale: dict[str, str], argv: list[str], lang: str
) -> None:
    done = run_script(
        "estimate", "--parameters", "7e9", "--bits", "16", *argv, cwd=tmp_path, locale=locale
    )
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == mm.say(lang, "estimate_title", version=mm.LAB_VERSION)


# --- Only the chosen command's parser is built; --help stays complete -------------------------

OPTIONS = {
    "estimate": ["--lang", "--parameters", "--bits", "--reserve-gib", "--json"],
    "predict": [
        *["--lang", "--batch", "--context", "--width", "--dtype", "--task", "--optimizer"],
        *["--precision", "--json"],
    ],
    "environment": ["--lang", "--device", "--json"],
    "measure": [
        *["--lang", "--device", "--batch", "--context", "--width", "--dtype", "--task"],
        *["--optimizer", "--precision", "--warmup", "--repeats", "--steps", "--output"],
    ],
}


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_a_commands_help_lists_all_its_options(lang: str, command: str) -> None:
    with mm._ArgparseLanguage(lang):
        parser = mm.build_parser(lang, mm.chosen_command([command, "--help"]))
        subparsers = parser._subparsers._group_actions[0]  # type: ignore[union-attr]
        declared = [
            option
            for action in subparsers.choices[command]._actions
            for option in action.option_strings
            if option.startswith("--") and option != "--help"
        ]
    assert declared == OPTIONS[command]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["estimate", "--bits", "4"], "estimate"),
        (["--lang", "id", "measure"], "measure"),
        (["--la", "predict", "environment"], "environment"),  # predict is --la's value
        (["--lang=id", "environment"], "environment"),
        (["--help"], None),
        (["benchmark"], None),
        (["--", "estimate"], None),
    ],
)
def test_the_chosen_command(argv: list[str], command: str | None) -> None:
    assert mm.chosen_command(argv) == command


@pytest.mark.parametrize("lang", CODES)
def test_every_command_is_listed_and_offered(lang: str, tmp_path: Path) -> None:
    listed = run_script("--help", "--lang", lang, cwd=tmp_path).stdout
    refused = run_script("benchmark", "--lang", lang, cwd=tmp_path).stderr
    for command in OPTIONS:
        assert f"\n    {command} " in listed
        assert repr(command) in refused


# --- No English, and the reader's number format, in everything a run shows -------------------

HELP = [[], ["estimate"], ["predict"], ["environment"], ["measure"]]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("command", HELP, ids=lambda c: c[0] if c else "top")
def test_help_is_in_the_readers_language(tmp_path: Path, command: list[str], lang: str) -> None:
    done = run_script(*command, "--help", "--lang", lang, cwd=tmp_path)
    assert done.returncode == 0
    assert english_sentences(done.stdout) == []
    assert mm.ARGPARSE_MESSAGES[lang]["usage: "] in done.stdout
    assert "usage:" not in done.stdout.replace(mm.ARGPARSE_MESSAGES[lang]["usage: "], "")


RUNS = [
    ["estimate", "--parameters", "7e9", "--bits", "4", "--reserve-gib", "4"],
    ["estimate", "--parameters", "3", "--bits", "4", "--reserve-gib", "1.5"],  # rounded up
    ["predict", "--batch", "2", "--context", "128", "--width", "1024"],
    ["environment", "--device", "cuda:0"],
    ["environment", "--device", "cpu"],
]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("argv", RUNS, ids=lambda a: "-".join(a[:2]))
def test_output_is_in_the_readers_language(tmp_path: Path, argv: list[str], lang: str) -> None:
    done = run_script(*argv, "--lang", lang, cwd=tmp_path)
    shown = done.stdout + done.stderr
    # PyTorch's and Python's own words (a missing module's name) are quoted as they are
    assert english_sentences(shown, allow=ALLOWED_NAMES) == []
    if argv[0] != "environment":  # its versions and PCI addresses are not quantities
        assert foreign_numbers(shown, lang) == []
    as_json = run_script(*argv, "--lang", lang, "--json", cwd=tmp_path)
    for text in prose(json.loads(as_json.stdout)):
        assert english_sentences(text) == [], text
    assert json.loads(as_json.stdout)["language"] == lang


# JSON values that are data, not prose: names, paths, versions, PyTorch's and Python's texts.
DATA_KEYS = {
    "tool",
    "command",
    "command_line",
    "executable",
    "description",
    "import_error",
    "import_warnings",
    "settings",
    "settings_in_effect",
    "read_errors",
    "error",
    "name",
    "tensors",
}


def prose(value: Any, key: str = "") -> Iterator[str]:
    """Every string of a JSON document a reader reads as text (codes and data aside)."""
    if key in DATA_KEYS:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from prose(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from prose(v, key)
    elif isinstance(value, str) and " " in value:
        yield value


@pytest.mark.parametrize("lang", CODES)
def test_measure_speaks_the_readers_language_and_records_it(
    tmp_path: Path, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Progress, the final lines and the result file's prose (fake counters, no GPU)."""
    out = tmp_path / "r.json"
    argv = [*validation_argv(out), "--lang", lang]
    code = mm.main(argv, backend_factory=fake_factory(fail_on_forward=2), clock=make_clock())
    assert code == mm.EXIT_PHASE_FAILED
    captured = capsys.readouterr()
    # the out-of-memory message is PyTorch's own, quoted as PyTorch wrote it
    oom = "CUDA out of memory. Tried to allocate 2.00 GiB"  # the fake's PyTorch message
    shown = (captured.out + captured.err).replace(oom, "")
    assert english_sentences(shown) == []
    assert foreign_numbers(shown, lang) == []
    result = json.loads(out.read_text("utf-8"))
    assert result["language"] == lang and result["schema_version"] == mm.SCHEMA_VERSION
    for text in prose(result):
        assert english_sentences(text) == [], text
    assert result["units"]["memory"] == mm.say(lang, "units_memory")


def test_the_result_language_is_required_from_schema_1_2_0(tmp_path: Path) -> None:
    import jsonschema
    from lab_support import load_schema

    out = tmp_path / "r.json"
    assert mm.main(validation_argv(out), backend_factory=fake_factory(), clock=make_clock()) == 0
    result = json.loads(out.read_text("utf-8"))
    jsonschema.validate(result, load_schema())
    del result["language"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(result, load_schema())
    # results written before the language was recorded, before schema 1.3.0's keys
    for key in ("task", "rank", "world_size", "counters_source", "training", "parameter_groups"):
        del result[key]
    result["schema_version"] = "1.1.0"
    jsonschema.validate(result, load_schema())


# --- Start-up: what `estimate` must not import ------------------------------------------------

# Each costs milliseconds at every start (`benchmarks/cli_startup.py`): typing and its TypedDicts,
# fractions with decimal and numbers, shutil (argparse's terminal width), textwrap (argparse's
# wrapping), json, unicodedata; argparse itself with re, enum and gettext (a plain `estimate` is
# read by estimate_arguments). The estimate needs none of them.
HEAVY_MODULES = {"typing", "fractions", "decimal", "numbers", "shutil", "textwrap", "json"}
HEAVY_MODULES |= {"argparse", "re", "enum", "gettext"}


@pytest.mark.parametrize("lang", CODES)
def test_estimate_imports_nothing_it_does_not_need(tmp_path: Path, lang: str) -> None:
    done = subprocess.run(
        [
            *[sys.executable, "-I", "-S", "-X", "importtime", str(SCRIPT), "estimate"],
            *["--parameters", "7e9", "--bits", "16", "--reserve-gib", "4", "--lang", lang],
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)
    assert "unicodedata" not in imported
