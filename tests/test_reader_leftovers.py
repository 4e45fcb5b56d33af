"""Leftovers of the code and of the other language in what a Korean or Indonesian reader reads
(issue 20): a raw `null`, `None`, `True` or `False`; a snake_case identifier or an English word
of the code (`weights_gib (hasil)`, `unknown`) in a sentence or a label; a Python codec message
inside a Korean error; a Korean particle chosen before the word it follows is known
(`'qwen3_moe'은`); a word the native review replaced (가설, hipotesis). The site's pages have
their own detectors (tests/website/test_reader_leftovers.py); the detectors themselves are in
tests/foreign_text.py, and each is shown here to find what it is for.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from foreign_text import (
    code_words,
    english_runs,
    hangul,
    indonesian_runs,
    particles_after_fields,
    raw_literals,
)
from reader_identifiers import reader_identifiers
from test_cli import BAD_INPUTS
from test_cli_language import FIXTURE_RESULT, READINGS, in_locale, invoke
from test_cli_model import model_refusals

from iteragpu.cli.views import figure_label
from iteragpu.docs_tools import catalogues
from iteragpu.examples import registry
from iteragpu.i18n.languages import CODES
from iteragpu.lab import mesure_memoire as mm

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LAB = ROOT / "src" / "iteragpu" / "lab"


def _translations(lang: str) -> Iterator[tuple[str, str]]:
    """(message id, what the reader of `lang` reads) for every message of the catalogue."""
    for message in catalogues.read_po(lang):
        if message.id and message.string:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            yield from ((ids[0], text) for text in strings if text)


def _leftovers(text: str, lang: str) -> list[str]:
    return [*raw_literals(text), *code_words(text, lang, reader_identifiers())]


# ---------------------------------------------------------------------------------------------
# The detectors find what they are for
# ---------------------------------------------------------------------------------------------


def test_the_detectors_find_the_leftovers_of_issue_20() -> None:
    assert code_words("weights_gib (hasil)   14.000.000.000", "id") == ["weights_gib"]
    assert code_words("KV 캐시에 저장하는 값: per_head.", "ko", reader_identifiers()) == [
        "per_head"
    ]
    assert code_words("선언 용량: unknown", "ko") == ["unknown"]
    assert code_words("Notebook", "ko") == ["Notebook"]
    assert raw_literals("torch.version.hip:   null") == ["null"]
    assert raw_literals("kapasitas tidak diketahui (None)") == ["None"]
    assert raw_literals("requested: True") == ["True"]
    assert particles_after_fields("model_type {model_type!r}은 아는 계열이 아닙니다") == ["}은"]
    assert particles_after_fields("{where}의 값은 JSON 형식 {types}여야 합니다") == ["}여야"]
    assert particles_after_fields("장치 번호 {index}({device})이(가) 없습니다") == ["})이"]
    assert particles_after_fields("카드 '{card}'를 찾지 못했습니다") == ["}'를"]
    assert hangul("Muat data contoh: 드라이버 버전을 읽지 못했습니다") == [
        "드라이버",
        "버전을",
        "읽지",
        "못했습니다",
    ]
    assert indonesian_runs("측정 결과 tidak dapat dibaca") == ["tidak dapat dibaca"]


def test_the_detectors_leave_alone_what_is_the_readers() -> None:
    # Quoted input, code, placeholders, options, paths, file names, calls, environment variables,
    # a metavar, and the names of the reader's own files.
    text = (
        "'--foo' 옵션은 없습니다. `null`, {weights_gib}, --mla-layout, /tmp/a_b.json, "
        "mesure_memoire.py, empty_cache(), CUDA_VISIBLE_DEVICES, --evidence RESULT, "
        "num_key_value_heads, model_load, load-specification.md#fit"
    )
    assert code_words(text, "ko", reader_identifiers()) == []
    assert raw_literals(text) == []
    # A word that never changes may follow a field: 의, 에, 처럼, 입니다, a counter.
    assert particles_after_fields("{where}의 값, {n}개, {n}바이트, {x}처럼, {limit}입니다") == []
    assert indonesian_runs("KV 캐시 (cache KV), 가중치만") == []
    # `nominal` and `notebook` are Indonesian words as well.
    assert code_words("Notebook lab, kapasitas nominal", "id") == []


# ---------------------------------------------------------------------------------------------
# The catalogue, the lab's messages, the pages' templates
# ---------------------------------------------------------------------------------------------


def _page_templates(lang: str) -> Iterator[tuple[str, str]]:
    """The pages' message spans that scripts fill (`<span data-config-text="summary">`)."""
    for path in sorted((DOCS / lang / "docs").rglob("*.md")):
        for match in re.finditer(r"<span data-[\w-]+=\"[^\"]+\">(.*?)</span>", path.read_text()):
            yield str(path.relative_to(ROOT)), match.group(1)


def test_no_korean_text_puts_a_particle_after_a_field() -> None:
    found = [(msgid, text) for msgid, text in _translations("ko") if particles_after_fields(text)]
    found += [
        (key, text) for key, text in mm.MESSAGES["ko"].items() if particles_after_fields(text)
    ]
    found += [
        (where, text) for where, text in _page_templates("ko") if particles_after_fields(text)
    ]
    assert found == []


@pytest.mark.parametrize("lang", CODES)
def test_the_catalogue_says_no_raw_literal_and_no_code_word(lang: str) -> None:
    found = [(msgid, text) for msgid, text in _translations(lang) if _leftovers(text, lang)]
    assert found == []


# Lab messages that name a literal on purpose: the value PyTorch answered, and the meaning of
# the result file's `null` (the units it records beside its counters).
LAB_LITERALS_ON_PURPOSE = {"sees_no_gpu", "units_memory"}


@pytest.mark.parametrize("lang", CODES)
def test_the_lab_messages_say_no_raw_literal_and_no_code_word(lang: str) -> None:
    found = [
        (key, text)
        for key, text in mm.MESSAGES[lang].items()
        if key not in LAB_LITERALS_ON_PURPOSE and _leftovers(text, lang)
    ]
    assert found == []


# Words the native review of issue 20 replaced: the guides' "가설 / hipotesis" for what is an
# assumption to verify (ko 가정, 계획한 구성; id asumsi, rencana).
REVIEWED_AWAY = {"ko": ("가설",), "id": ("hipotesis",)}


@pytest.mark.parametrize("lang", CODES)
def test_no_text_says_a_word_the_native_review_replaced(lang: str) -> None:
    texts = [(str(p.relative_to(ROOT)), p.read_text("utf-8")) for p in DOCS.glob(f"{lang}/**/*.md")]
    texts += [(msgid, text) for msgid, text in _translations(lang)]
    texts += [(key, text) for key, text in mm.MESSAGES[lang].items()]
    texts += [(p.name, p.read_text("utf-8")) for p in LAB.glob(f"*.{lang}.md")]
    texts += [("glossary.yml", (DOCS / "glossary.yml").read_text("utf-8"))]
    found = [(where, word) for where, text in texts for word in REVIEWED_AWAY[lang] if word in text]
    assert found == []


# ---------------------------------------------------------------------------------------------
# What the CLI prints
# ---------------------------------------------------------------------------------------------

TEXT_COMMANDS = [
    *READINGS,
    ["report", str(FIXTURE_RESULT)],
    ["fit", "llama-3.1-8b", "--gpu", "h100-80gb", "--tokens", "8192", "--kv-dtype", "auto"],
    ["shortlist", "--need-gib", "40", "--days", "2"],
    ["examples", "run", "--all"],
]


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_says_no_raw_literal_and_no_code_word(lang: str, tmp_path: Path) -> None:
    """Tables, notes and refusals of a representative set of commands (the lab's own record, the
    device's name and error message in `report`, is the lab's, and holds no leftover either)."""
    found = []
    # A worked example's id (`fit-load-spec-rtx-4090`) is the identifier `examples run` takes.
    ids = sorted(registry(), key=len, reverse=True)
    for args in TEXT_COMMANDS:
        result = invoke(args, **in_locale(lang))
        assert result.exit_code == 0, (args, result.output)
        text = result.stdout
        if args[0] == "examples":
            for example_id in ids:
                text = text.replace(example_id, " ")
        found += [(args[:2], word) for word in _leftovers(text, lang)]
    from iteragpu.cli.app import COMMANDS

    # The listing of the command names a run without a command prints: identifiers the reader
    # types (`fit` among them), not words of a sentence.
    listing = ", ".join(COMMANDS)
    for _, args, _ in BAD_INPUTS:
        result = invoke(args, **in_locale(lang))
        found += [
            (args[:2], word) for word in _leftovers(result.stderr.replace(listing, " "), lang)
        ]
    for args in model_refusals(tmp_path):
        result = invoke(args, **in_locale(lang))
        found += [(args[:2], word) for word in _leftovers(result.stderr, lang)]
    assert found == []


@pytest.mark.parametrize("lang", CODES)
def test_every_figure_of_the_worked_examples_is_named_in_the_language(lang: str) -> None:
    """`iteragpu examples run` names each figure in the reader's words; the key (`weights_gib`)
    is the identifier of `--json` and of the pages' ledgers only."""
    for example in registry().values():
        for figure in example.figures:
            label = figure_label(figure, lang)
            assert label and not ("_" in figure.key and figure.key in label), figure.key
            assert _leftovers(label, lang) == [], (example.id, figure.key, label)
    text = invoke(["examples", "run", "--all", "--lang", lang]).stdout
    keys = {f.key for e in registry().values() for f in e.figures if "_" in f.key}
    assert not keys & set(re.findall(r"[a-z0-9_]+", text))


def _undecodable(folder: Path) -> Path:
    path = folder / "config.json"
    path.write_bytes(b"\xff\xfe{}")
    return path


@pytest.mark.parametrize("lang", CODES)
def test_an_undecodable_file_is_refused_in_the_readers_words(lang: str, tmp_path: Path) -> None:
    """Python's codec message (`'utf-8' codec can't decode byte 0xff in position 0`) is English:
    the reader is told where the text stops being UTF-8, in their language."""
    path = _undecodable(tmp_path)
    for args in (["model", str(path), "--tokens", "8"], ["model", str(tmp_path), "--tokens", "8"]):
        result = invoke([*args, "--lang", lang])
        assert result.exit_code == 2
        (line,) = result.stderr.splitlines()
        assert "codec" not in line and "0xff" not in line and "position" not in line, line
        assert english_runs(line) == [], line
        assert "UTF-8" in line and line.rstrip(")").endswith("0"), line
    result = invoke(["report", str(path), "--lang", lang])
    assert result.exit_code == 2 and "codec" not in result.stderr


# ---------------------------------------------------------------------------------------------
# What the lab prints
# ---------------------------------------------------------------------------------------------


def _lab(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        contextlib.suppress(SystemExit),
    ):
        mm.main(argv)
    return out.getvalue() + err.getvalue()


@pytest.mark.parametrize("lang", CODES)
def test_the_lab_says_no_raw_literal_and_no_code_word(lang: str) -> None:
    """`estimate`, `predict` and the `environment` report, whose values that were not read, not
    set or not built are said in words (the JSON keeps null)."""
    texts = [
        _lab(["estimate", "--parameters", "7e9", "--bits", "16", "--lang", lang]),
        _lab(["predict", "--batch", "1", "--context", "16", "--width", "64", "--lang", lang]),
        # Nothing could be read: every value of the report is None.
        mm.format_environment_text(
            mm.collect_environment("cuda:0", None, "ModuleNotFoundError: test", lang), lang
        ),
    ]
    found = [word for text in texts for word in _leftovers(text, lang)]
    assert found == []
    assert mm.say(lang, "value_not_read") in texts[-1]
    assert mm.say(lang, "variable_not_set") in texts[-1]
