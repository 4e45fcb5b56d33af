"""One list of languages (`iteragpu.i18n.languages`) drives the package: every place that holds
something per language holds it for each language of the list, and for no other."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.cli.language import argument_language, reader_language, reads_decimal_comma
from iteragpu.docs_tools import lab_archive
from iteragpu.docs_tools.figure_check import page_lang
from iteragpu.examples import registry
from iteragpu.i18n.catalogue import catalogue_path
from iteragpu.i18n.environment import environment_language
from iteragpu.i18n.languages import CODES, LANGUAGES, SOURCE, language
from iteragpu.i18n.messages import MESSAGES, TEXTS
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

runner = CliRunner()


def test_the_list_is_well_formed() -> None:
    assert len(set(CODES)) == len(CODES) >= 2
    assert CODES[0] == SOURCE
    assert [language(code) for code in CODES] == list(LANGUAGES)
    with pytest.raises(KeyError, match="known: " + ", ".join(CODES)):
        language("xx")


def test_every_language_has_its_catalogue() -> None:
    # Complete and compiled: tests/test_catalogues.py.
    for lang in CODES:
        assert catalogue_path(lang).is_file(), lang
        assert catalogue_path(lang, ".po").is_file(), lang


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_every_result_label_is_read_from_every_catalogue(key: str) -> None:
    assert sorted(MESSAGES[key]) == sorted(CODES), key
    assert all(MESSAGES[key][lang] for lang in CODES), key


@pytest.mark.parametrize(
    ("environ", "lang"),
    [
        ({}, SOURCE),
        ({"LANG": "id_ID.UTF-8"}, "id"),
        ({"LANG": "ko_KR.UTF-8"}, "ko"),
        ({"LANG": "id_ID@euro"}, "id"),
        ({"LANG": "C.UTF-8"}, SOURCE),
        ({"LANG": "POSIX"}, SOURCE),
        ({"LANG": "fr_FR.UTF-8"}, SOURCE),
        ({"LC_MESSAGES": "id_ID.UTF-8", "LANG": "ko_KR.UTF-8"}, "id"),
        ({"LC_ALL": "ko_KR.UTF-8", "LC_MESSAGES": "id_ID.UTF-8"}, "ko"),
        ({"LC_ALL": "", "LANG": "id_ID.UTF-8"}, "id"),  # empty is unset
        ({"LANGUAGE": "fr:id:ko", "LANG": "ko_KR.UTF-8"}, "id"),
        ({"LANGUAGE": "fr", "LANG": "id_ID.UTF-8"}, SOURCE),  # the first set variable decides
    ],
)
def test_the_locale_environment_chooses_a_language(environ: dict[str, str], lang: str) -> None:
    assert environment_language(environ) == lang


def test_lang_on_the_command_line_comes_first() -> None:
    env = {"LANG": "id_ID.UTF-8"}
    assert reader_language(["weights", "--lang", "ko"], env) == "ko"
    assert reader_language(["--lang=ko", "weights"], env) == "ko"
    assert reader_language(["weights", "--lang", "xx"], env) == "id"  # click refuses it, in id
    assert reader_language(["weights", "--lang"], env) == "id"
    assert argument_language(["convert", "--", "--lang", "id"]) is None


def test_the_decimal_comma_follows_the_languages_own_decimal_sign() -> None:
    for lang in CODES:
        assert reads_decimal_comma(lang) == (NUMBER_SYMBOLS[lang]["decimal"] == ",")
    assert reads_decimal_comma("id") and not reads_decimal_comma("ko")


def test_every_example_title_is_in_every_language() -> None:
    missing = {e.id: sorted(set(CODES) ^ set(e.title)) for e in registry().values()}
    assert {example: codes for example, codes in missing.items() if codes} == {}


def test_the_number_symbols_cover_every_language() -> None:
    assert sorted(NUMBER_SYMBOLS) == sorted(CODES)


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_speaks_every_language(lang: str) -> None:
    result = runner.invoke(app, ["convert", "1 GiB", "B", "--lang", lang])
    assert result.exit_code == 0, result.output
    assert MESSAGES["quantity"][lang] in result.stdout


def test_the_cli_offers_the_list_and_refuses_other_languages() -> None:
    help_text = runner.invoke(app, ["weights", "--help"]).stdout
    assert all(code in help_text for code in CODES)
    assert "{codes}" not in help_text
    refused = runner.invoke(app, ["examples", "list", "--lang", "xx"])
    assert refused.exit_code == 2
    default = runner.invoke(app, ["examples", "list"])
    assert MESSAGES["examples_title"][SOURCE] in default.stdout


def test_the_lab_archive_ships_a_notebook_and_readme_per_language() -> None:
    assert tuple(lab_archive.LANGUAGES) == CODES
    names = lab_archive.download_names()
    for lang in CODES:
        assert lab_archive.notebook_name(lang) in names
        assert f"README.{lang}.md" in names
        assert f"README.{lang}.md" in lab_archive.LAB_FILES
        assert (lab_archive.LAB_DIR / f"README.{lang}.md").is_file(), lang
        assert (lab_archive.LAB_DIR / f"sizing_sheet.{lang}.md").is_file(), lang


@pytest.mark.parametrize("lang", CODES)
def test_a_page_language_comes_from_the_list_in_either_layout(lang: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    assert page_lang(docs / lang / "gpus" / "card.md", docs) == lang
    assert page_lang(docs / lang / "docs" / "gpus" / "card.md", docs) == lang
    assert page_lang(docs / lang / "docs" / "sizing.md") == lang
    with pytest.raises(ValueError):
        page_lang(docs / "root" / "index.md", docs)
