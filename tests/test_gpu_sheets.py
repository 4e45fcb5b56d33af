"""The GPU sheets are written from the catalogue: committed = generated, every figure checked,
no avoided word, and the short list over the whole catalogue stays honest."""

from __future__ import annotations

import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.docs_tools import figure_check, glossary, gpu_sheets
from iteragpu.gpus.catalog import load_catalog
from iteragpu.gpus.shortlist import Status, shortlist
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number

DOCS = Path(__file__).resolve().parents[1] / "docs"
runner = CliRunner(env={"COLUMNS": "200"})


def test_committed_sheets_are_what_the_catalogue_generates() -> None:
    assert gpu_sheets.main(["--check"]) == 0


def test_check_fails_on_an_edited_sheet_and_on_a_sheet_of_no_card(tmp_path: Path) -> None:
    for lang in CODES:
        shutil.copytree(DOCS / lang / "docs" / "gpus", tmp_path / lang / "docs" / "gpus")
    words, catalog = gpu_sheets.load_words(), load_catalog()
    assert gpu_sheets.stale_sheets(tmp_path, words, catalog) == []
    edited = tmp_path / "ko" / "docs" / "gpus" / "t4.md"
    edited.write_text(edited.read_text("utf-8").replace("16", "17"), "utf-8")
    orphan = tmp_path / "id" / "docs" / "gpus" / "v100.md"
    orphan.write_text("# V100\n", "utf-8")
    assert gpu_sheets.stale_sheets(tmp_path, words, catalog) == [edited, orphan]


def test_bad_arguments_are_refused_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_sheets.main(["--writ"]) == 2
    assert "usage" in capsys.readouterr().err


def test_a_word_missing_a_language_is_refused(tmp_path: Path) -> None:
    text = gpu_sheets.WORDS.read_text("utf-8")
    broken = tmp_path / "gpu_sheets.yml"
    broken.write_text(re.sub(r"(?m)^  id: .*\n", "", text, count=1), "utf-8")
    with pytest.raises(ValueError, match="has no 'id' text"):
        gpu_sheets.load_words(broken)


def test_every_sheet_passes_the_figure_check() -> None:
    reports, failures = figure_check.check_tree(DOCS)
    sheets = [r for r in reports if r.path.parent.name == "gpus"]
    # Every card's sheet and the index page, in every language.
    assert len(sheets) == (len(load_catalog()) + 1) * len(CODES)
    assert not failures
    for report in sheets:
        assert not report.failures, report.failures
        assert report.verified > 0


def test_the_words_state_no_number_outside_a_placeholder() -> None:
    # A digit typed in a sentence would be a figure that no ledger entry accounts for.
    words = gpu_sheets.load_words()
    texts = [*words.texts.values(), *words.remarks.values()]
    for entry in texts:
        for lang in CODES:
            for text in entry[lang] if isinstance(entry[lang], list) else [entry[lang]]:
                prose = glossary.reader_text(re.sub(r"\{[a-z_]+\}", " ", text))
                # As the figure checker reads numbers: not the 4 of "SXM4" (glued to a letter).
                assert not re.search(r"(?<![A-Za-z0-9_.,])\d", prose), (lang, text)


@pytest.mark.parametrize("lang", CODES)
def test_sheets_use_no_avoided_variant(lang: str) -> None:
    terms = glossary.load().terms
    for card in load_catalog():
        text = (DOCS / lang / "docs" / "gpus" / f"{card.id}.md").read_text("utf-8")
        assert glossary.avoided(glossary.reader_text(text), lang, terms) == [], card.id


UNKNOWN = {"ko": "알 수 없음으로 둡니다", "id": "sebagai tidak diketahui"}


@pytest.mark.parametrize("lang", CODES)
def test_a_sheet_says_unknown_where_the_catalogue_has_null(lang: str) -> None:
    words = gpu_sheets.load_words()
    for card in load_catalog():
        text = (DOCS / lang / "docs" / "gpus" / f"{card.id}.md").read_text("utf-8")
        packages = text[text.index("{ #packages }") : text.index("{ #use-it }")]
        if card.packages:
            assert "USD" in packages
        else:
            none = words.texts["packages_none"][lang].replace("{zero}", "0")
            assert none in packages and "USD" not in packages, card.id
        if card.declared is None:
            # Said in words: the catalogue's JSON null is no word of a sheet (issue 20).
            assert UNKNOWN[lang] in text and "null" not in text, card.id
        else:
            assert card.declared.url in text and f"`{card.declared.date}`" in text
        for reading in card.readings_not_bounds:
            assert reading.url in text
        if card.nominal_reference is not None:
            assert card.nominal_reference.url in text
            assert f"`{card.nominal_reference.seen}`" in text


def test_the_nav_lists_every_sheet_in_catalogue_order() -> None:
    nav = (DOCS.parent / "mkdocs.yml").read_text("utf-8")
    listed = re.findall(r"^ +- gpus/([a-z0-9-]+)\.md$", nav, re.MULTILINE)
    # The index first: with navigation.indexes it is the GPU sheets section's own page.
    assert listed == [gpu_sheets.INDEX, *(card.id for card in load_catalog())]


def test_short_list_over_the_whole_catalogue_ranks_no_unchecked_card() -> None:
    by_id = {c.card.id: c for c in shortlist(Fraction(30), 3)}
    assert set(by_id) == {card.id for card in load_catalog()}
    excluded = {i for i, c in by_id.items() if c.status is Status.EXCLUDED}
    # A declared capacity (plus its rounding) below the need excludes a card; without one, a
    # nominal figure below the need even read as GiB (16 and 24 GB against 30 GiB).
    declared = {card.id for card in load_catalog() if card.declared is not None}
    assert {i for i in excluded if i in declared} == {"rtx-3090", "rtx-4090"}
    assert excluded - declared == {"t4", "l4", "a10"}
    for card_id, candidate in by_id.items():
        assert candidate.rank is None, card_id  # no lab evidence: nothing is fit
        if not candidate.card.packages:
            assert candidate.cost is None, card_id  # price unknown, never 0
    for card_id in ("t4", "l4", "a10"):
        (memory,) = [r for r in by_id[card_id].requirements if r.name == "memory"]
        assert (memory.status, memory.reason) == (Status.EXCLUDED, "above_nominal_binary")
    # Between the decimal and the binary reading, the nominal figure decides nothing: 23 GiB is
    # above 24 GB read as 22.35 GiB, within 24 GiB.
    between = {c.card.id: c for c in shortlist(Fraction(23), 3)}
    for card_id in ("l4", "a10"):
        (memory,) = [r for r in between[card_id].requirements if r.name == "memory"]
        assert (memory.status, memory.reason) == (
            Status.CHECK_NEEDED,
            "above_nominal_declared_unknown",
        )


@pytest.mark.parametrize(("lang", "unknown"), [("ko", "알 수 없음"), ("id", "tidak diketahui")])
def test_cli_short_list_shows_price_unknown_never_zero(lang: str, unknown: str) -> None:
    result = runner.invoke(app, ["shortlist", "--need-gib", "19.04", "--days", "3", "--lang", lang])
    assert result.exit_code == 0, result.output
    cells = [re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines()]
    rows = {row[1]: row for row in cells if len(row) > 5 and row[0] in {"-", "1", "2"}}
    for card in load_catalog():
        row = rows[card.name]  # rank, card, nominal, declared, margin, margin on paper, cost
        assert row[0] == "-", row  # no rank for a candidate to review
        # a package of one card for the 3 days asked, or an hourly offer of one card priced for
        # them (an 8-card offer does not price one card)
        if any(p.cards == 1 and p.days in {3, None} for p in card.packages):
            assert row[6] not in {"", unknown}, row
        else:
            assert row[6] == unknown, row


@pytest.mark.parametrize("lang", CODES)
def test_the_index_page_links_every_sheet_with_its_capacities(lang: str) -> None:
    text = (DOCS / lang / "docs" / "gpus" / "index.md").read_text("utf-8")
    words = gpu_sheets.load_words().texts
    rows = [line for line in text.splitlines() if line.startswith("| [")]
    catalog = load_catalog()
    assert len(rows) == len(catalog)
    for row, card in zip(rows, catalog, strict=True):
        assert f"]({card.id}.md)" in row
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1] == str(card.nominal_memory_gb)
        if card.declared is None:
            assert cells[2] == words["index_unknown"][lang]
        else:
            assert cells[2] != words["index_unknown"][lang]
        # The lowest hourly price per GPU with its provider and date, or the date of the search
        # that found none (never a bare "unknown", never 0).
        lowest = card.lowest_offer()
        if lowest is None:
            assert card.price_search is not None
            searched = f"`{card.price_search.searched}`"
            none = words["index_no_price"][lang].replace("{date}", searched)
            assert cells[3] == none, card.id
        else:
            date = lowest.page_date or lowest.seen
            assert cells[3].endswith(f"({lowest.provider}, `{date}`)"), card.id
            price = format_number(lowest.gpu_hourly_price, _decimals(cells[3]), lang)
            assert cells[3].startswith(price + " "), card.id
    assert "USD" in text.splitlines()[text.splitlines().index(rows[0]) - 2]  # the unit's heading


def _decimals(cell: str) -> int:
    number = cell.split(" ")[0]
    return len(re.split(r"[.,]", number)[1]) if re.search(r"[.,]", number) else 0


@pytest.mark.parametrize("lang", CODES)
def test_each_sheet_lists_its_hourly_prices_with_sources_or_the_search_date(lang: str) -> None:
    words = gpu_sheets.load_words().texts
    for card in load_catalog():
        text = (DOCS / lang / "docs" / "gpus" / f"{card.id}.md").read_text("utf-8")
        section = text[text.index("{ #packages }") : text.index("{ #use-it }")]
        if not card.offers:
            assert card.price_search is not None and not card.price_search.found
            searched = f"`{card.price_search.searched}`"
            assert words["offers_none"][lang].replace("{date}", searched) in section, card.id
            continue
        for offer in card.offers:
            assert f"({offer.url})" in section and f"`{offer.states}`" in section
            assert f"`{offer.seen}`" in section
            if offer.page_date:
                assert f"`{offer.page_date}`" in section
            if offer.provider_url:
                assert f"({offer.provider_url})" in section
            gpu_rate = format_number(offer.gpu_hourly_price, 2, lang).split(
                "." if lang == "ko" else ","
            )[0]
            assert f"| {gpu_rate}" in section, card.id
