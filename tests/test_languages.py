"""One list of languages (`iteragpu.i18n.languages`) drives the package: every place that holds
something per language holds it for each language of the list, and for no other."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.docs_tools import lab_archive
from iteragpu.docs_tools.figure_check import page_lang
from iteragpu.examples import registry
from iteragpu.i18n.languages import CODES, LANGUAGES, SOURCE, language
from iteragpu.i18n.messages import MESSAGES
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

runner = CliRunner()


def test_the_list_is_well_formed() -> None:
    assert len(set(CODES)) == len(CODES) >= 2
    assert CODES[0] == SOURCE
    assert [language(code) for code in CODES] == list(LANGUAGES)
    with pytest.raises(KeyError, match="known: " + ", ".join(CODES)):
        language("xx")


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_message_is_in_every_language(key: str) -> None:
    assert sorted(MESSAGES[key]) == sorted(CODES), key


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
