"""The build-time half of the site search (iteragpu.docs_tools.site_search): how text is cut,
what Kiwi and Sastrawi make of the words readers type, and the glossary's synonyms. The browser
half is tested on the built site (tests/website/test_search.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from iteragpu.docs_tools import site_search
from iteragpu.i18n.languages import CODES


def test_words_cut_tokens_into_pieces_as_the_worker_does() -> None:
    text = "torch.cuda.max_memory_reserved() 13,04 GiB (측정을), --need-gib 1.073.741.824"
    assert list(site_search.words(text)) == [
        "torch", "cuda", "max_memory_reserved", "13,04", "gib", "측정을", "need", "gib",
        "1.073.741.824",
    ]  # fmt: skip


def test_the_worker_cuts_with_the_same_pattern() -> None:
    script = (Path(site_search.__file__).parents[1] / "web" / "search_language.js").read_text()
    assert "const PIECE = /[\\p{L}\\p{M}\\p{N}_]+(?:[.,][0-9]+)*/gu" in script
    assert site_search.PIECE.pattern == r"\w+(?:[.,][0-9]+)*"


# The issue's own examples: a stem meets its inflected forms.
@pytest.mark.parametrize(
    ("eojeol", "stem"),
    [("측정을", "측정"), ("측정하기", "측정"), ("가중치는", "가중치"), ("캐시에서", "캐시")],
)
def test_kiwi_finds_the_stem_of_an_eojeol(eojeol: str, stem: str) -> None:
    morphemes, stems, _ = site_search.korean_morphemes([eojeol])
    assert stem in morphemes[eojeol] and stem in stems


def test_kiwi_collects_the_particles_and_endings_it_saw() -> None:
    _, _, suffixes = site_search.korean_morphemes(["측정을", "가중치는", "캐시에서"])
    assert {"을", "는", "에서"} <= set(suffixes)


@pytest.mark.parametrize(
    ("words", "stem"),
    [(("mengukur", "pengukuran", "ukur"), "ukur"), (("memperkirakan", "perkiraan"), "kira")],
)
def test_sastrawi_brings_affixed_forms_together(words: tuple[str, ...], stem: str) -> None:
    stems = site_search.indonesian_stems(words)
    assert {stems[word] or word for word in words} == {stem}


def test_a_word_that_is_its_own_stem_is_kept_as_such() -> None:
    assert site_search.indonesian_stems(["memori", "gpu", "13,04"]) == {"memori": "", "gpu": ""}


@pytest.mark.parametrize("code", CODES)
def test_every_synonym_of_the_glossary_is_searched(code: str) -> None:
    terms = yaml.safe_load(site_search.GLOSSARY.read_text("utf-8"))["terms"]
    pairs = site_search.glossary_synonyms(code)
    for term in terms:
        for synonym in term["synonyms"][code]:
            if synonym.lower() != term[code].lower():
                assert [synonym.lower(), term[code].lower()] in pairs


@pytest.mark.parametrize("code", CODES)
def test_every_language_has_an_analyzer(code: str) -> None:
    assert code in site_search.ANALYZERS


def test_a_language_without_an_analyzer_keeps_materials_search(tmp_path: Path) -> None:
    assert site_search.write_language_file("xx", tmp_path) is None
    assert not any(tmp_path.iterdir())


def test_the_language_file_carries_its_data(tmp_path: Path) -> None:
    index = {"docs": [{"location": "", "title": "측정", "text": "<p>가중치는 측정을</p>"}]}
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "search_index.json").write_text(json.dumps(index), "utf-8")
    path = site_search.write_language_file("ko", tmp_path)
    assert path == tmp_path / "assets/javascripts/lunr/min/lunr.ko.min.js"
    text = path.read_text("utf-8")
    data = json.loads(text.split("self.lunr.iteragpuSearch = ", 1)[1].split(";\n", 1)[0])
    assert "가중치" in data["morphemes"]["가중치는"] and data["code"] == "ko"
    assert "lunr.Index.prototype.search" in text


def test_counts_are_written_with_the_clis_suffixes_and_the_languages_number_words() -> None:
    # The worker writes 70억 and 7 miliar as `7b`, as `--params 7B` reads it.
    assert site_search.count_data("ko") == {
        "suffixes": {"k": 3, "m": 6, "b": 9, "t": 12},
        "words": {"억": 8, "만": 4},
        "decimal": ".",
    }
    assert site_search.count_data("id")["words"] == {"miliar": 9, "juta": 6}
    assert site_search.count_data("id")["decimal"] == ","
    index = {"docs": [{"location": "", "title": "x", "text": "<p>torch.bfloat16</p>"}]}
    data = site_search.search_data("id", index)
    assert data["counts"] == site_search.count_data("id")
    assert data["formats"] == {"bf": "bfloat", "fp": "float"}


def test_a_word_in_the_table_is_read_from_it_and_a_new_one_analysed_and_kept() -> None:
    # The table's entry is taken as written (a deliberately odd one shows it is not analysed
    # again); the word it lacks is analysed by Kiwi and added to it.
    table: dict[str, site_search.KoreanEntry] = {"측정을": (("측정", "표"), "을")}
    morphemes, stems, suffixes = site_search.korean_morphemes(["측정을", "가중치는"], table)
    assert "표" in stems
    assert morphemes["측정을"] == ["측정", "표"]
    assert table["가중치는"] == site_search.analyse_korean("가중치는")
    assert "가중치" in morphemes["가중치는"] and {"을", "는"} <= set(suffixes)
    stems_table = {"mengukur": "ukurx"}
    assert site_search.indonesian_stems(["mengukur", "pengukuran"], stems_table) == {
        "mengukur": "ukurx",
        "pengukuran": "ukur",
    }
    assert stems_table["pengukuran"] == "ukur"


@pytest.mark.parametrize("code", CODES)
def test_the_committed_table_is_what_the_analyzers_say(code: str) -> None:
    # A sample of the committed table analysed again from scratch: a hand edit or an analyzer
    # upgrade that changes an analysis fails here (the site tests compare whole files).
    words = json.loads(site_search.table_path(code).read_text("utf-8"))["words"]
    sample = sorted(words)[:: max(1, len(words) // 200)]
    assert len(sample) >= 100
    table_text = site_search.table_text(code, sample)
    assert json.loads(table_text)["words"] == {word: words[word] for word in sample}


def test_missing_words_names_what_the_table_lacks() -> None:
    assert site_search.missing_words("ko", ["측정을", "벤치마크용새낱말", "gpu"]) == [
        "벤치마크용새낱말"
    ]
    assert site_search.missing_words("id", ["pengukuran", "katabarupengujian", "13,04"]) == [
        "katabarupengujian"
    ]
