"""The site search in each language (issue 12).

- In Chromium: every query of the language's query set (tests/website/search_queries/) is typed
  into the real search box; a right page must be among the first three results for at least
  90 % of them.
- In node, Material's own search worker over the built index (tests/website/search_worker.mjs):
  Indonesian stems are Python Sastrawi's, Korean inflected forms meet their stem as Kiwi analyses
  them, synonyms find their term, figures and command options are found as written, and what a
  result shows is the page's own text.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from iteragpu.docs_tools import search_check
from iteragpu.docs_tools.site_search import (
    LANGUAGE_FILE,
    glossary_synonyms,
    index_words,
    korean_morphemes,
    language_file,
    missing_words,
    search_pieces,
    table_path,
)
from iteragpu.i18n.languages import language

from .conftest import LANGS, ROOT

pytestmark = pytest.mark.site
WORKER = ROOT / "tests" / "website" / "search_worker.mjs"
_MARK = re.compile(r"</?mark>")


def _index(site: Path, lang: str) -> dict[str, Any]:
    return json.loads((site / lang / "search" / "search_index.json").read_text("utf-8"))


@cache
def _worker(site: Path, lang: str, queries: tuple[str, ...], forms: tuple[str, ...]) -> Any:
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed: the search worker's tests run it")
        pytest.skip("node is not installed")
    request = {"site": str(site / lang), "queries": list(queries), "forms": list(forms)}
    done = subprocess.run(
        ["node", str(WORKER)], input=json.dumps(request), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def _search(site: Path, lang: str, *queries: str) -> dict[str, list[list[dict[str, str]]]]:
    """Each query's results as Material groups them: per page, its matching sections."""
    return _worker(site, lang, tuple(queries), ())["results"]  # type: ignore[no-any-return]


def _top_pages_text(site: Path, lang: str, groups: list[list[dict[str, str]]]) -> str:
    """The whole text (not the excerpt Material shows) of the sections of the first pages."""
    originals = {doc["location"]: doc for doc in _index(site, lang)["docs"]}
    sections = [originals[doc["location"]] for group in groups[: search_check.TOP] for doc in group]
    return " ".join(_plain(doc["title"] + " " + doc["text"]) for doc in sections)


def _forms(site: Path, lang: str, *words: str) -> dict[str, list[str]]:
    return _worker(site, lang, (), tuple(words))["forms"]  # type: ignore[no-any-return]


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", _MARK.sub("", text))).lower()


@pytest.mark.parametrize("lang", LANGS)
def test_the_language_file_is_the_projects(site: Path, lang: str) -> None:
    path = site / lang / LANGUAGE_FILE.format(search_lang=language(lang).search_lang)
    assert "lunr.iteragpuSearch" in path.read_text("utf-8")
    assert _index(site, lang)["config"]["lang"] == [language(lang).search_lang]


@pytest.mark.parametrize("lang", LANGS)
def test_the_committed_analysis_table_holds_every_word_of_the_pages(site: Path, lang: str) -> None:
    # Stale when a page brings a word the table lacks: the build still analyses it (loading
    # Kiwi or Sastrawi each time), so the table must be written anew.
    missing = missing_words(lang, search_pieces(lang, _index(site, lang)))
    assert not missing, (
        f"{len(missing)} word(s) of {lang} not in {table_path(lang)}, e.g. {missing[:10]}: run "
        "python -m iteragpu.docs_tools.site_search --update-tables --site-dir site"
    )


@pytest.mark.parametrize("lang", LANGS)
def test_the_table_driven_search_file_is_the_from_scratch_one_byte_for_byte(
    site: Path, lang: str
) -> None:
    built = site / lang / LANGUAGE_FILE.format(search_lang=language(lang).search_lang)
    from_scratch = language_file(lang, _index(site, lang), from_scratch=True)
    assert built.read_text("utf-8") == from_scratch


def test_indonesian_stems_are_python_sastrawis(site: Path) -> None:
    from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

    stemmer = StemmerFactory().create_stemmer()
    plain_words = sorted({w for w in index_words(_index(site, "id")) if re.fullmatch("[a-z]+", w)})
    assert len(plain_words) > 1000
    worker = _worker(site, "id", (), tuple(plain_words))
    wrong = {}
    for word in plain_words:
        expected = {word, stemmer.stem(word)} - {""}
        if set(worker["forms"][word]) != expected:
            wrong[word] = (worker["forms"][word], sorted(expected))
    assert not wrong, dict(list(wrong.items())[:20])
    # sastrawijs, for the words the site never uses, agrees with Sastrawi on most words (the
    # module's documentation states how often).
    differ = [w for w in plain_words if worker["browserStems"][w] != stemmer.stem(w)]
    print(f"sastrawijs differs from Sastrawi on {len(differ)} of {len(plain_words)} words")
    assert len(differ) <= len(plain_words) * 3 // 100, differ


# A particle or ending after a vowel and after a final consonant (batchim).
_PARTICLES = {
    False: ("를", "는", "가", "로", "와", "에서", "도"),
    True: ("을", "은", "이", "으로", "과", "에서", "도"),
}


def _has_batchim(syllable: str) -> bool:
    return (ord(syllable) - 0xAC00) % 28 != 0


def _korean_terms() -> list[str]:
    pairs = glossary_synonyms("ko")
    terms = {term for _, term in pairs} | {synonym for synonym, _ in pairs}
    return sorted(t for t in terms if re.fullmatch("[\uac00-\ud7a3]{2,}", t))


def test_korean_inflected_forms_meet_their_stem_as_kiwi_reads_them(site: Path) -> None:
    inflected = [
        term + particle
        for term in _korean_terms()
        for particle in _PARTICLES[_has_batchim(term[-1])]
    ]
    kiwi_forms, _, _ = korean_morphemes(inflected)
    forms = _forms(site, "ko", *inflected)
    # Kiwi reads some forms otherwise (a noun + 이 as a copula, a rare word as a verb): only
    # the forms whose analysis keeps the term are the worker's to meet.
    checked = [
        word
        for word in inflected
        if any(len(m) > 1 and word.startswith(m) for m in kiwi_forms.get(word, []))
    ]
    assert len(checked) > len(inflected) // 2
    missed = {
        w: (forms[w], kiwi_forms[w]) for w in checked if not set(kiwi_forms[w]) <= set(forms[w])
    }
    assert len(missed) <= len(checked) // 20, missed


@pytest.mark.parametrize("lang", LANGS)
def test_results_show_the_pages_own_text(site: Path, lang: str) -> None:
    """Material shows the blocks of a section that match, each word marked once: every piece of
    text between tags is the page's own text, and marks are neither nested nor broken."""
    originals = {doc["location"]: doc for doc in _index(site, lang)["docs"]}
    queries = [query.query for query in search_check.query_set(lang)]
    for query, groups in _search(site, lang, *queries).items():
        for doc in (doc for group in groups for doc in group):
            original = originals[doc["location"]]
            for field in ("title", "text"):
                shown = doc[field]
                assert "<mark><mark>" not in shown and shown.count("<mark>") == shown.count(
                    "</mark>"
                ), (query, shown)
                for piece in re.split(r"<[^>]+>", shown):
                    assert piece in original[field], (query, piece)


@pytest.mark.parametrize("lang", LANGS)
def test_every_synonym_finds_its_term(site: Path, lang: str) -> None:
    pairs = glossary_synonyms(lang)
    results = _search(site, lang, *(synonym for synonym, _ in pairs))
    lost = []
    for synonym, term in pairs:
        text = _top_pages_text(site, lang, results[synonym])
        if term not in text and synonym not in text:
            lost.append((synonym, term))
    assert not lost, lost


@pytest.mark.parametrize("lang", LANGS)
def test_a_typed_figure_is_found_as_written(site: Path, lang: str) -> None:
    texts = " ".join(_plain(doc["text"]) for doc in _index(site, lang)["docs"])
    decimal = re.escape("," if language(lang).code == "id" else ".")
    figures = sorted(set(re.findall(rf"\b(\d+{decimal}\d+) gib\b", texts)))[:8]
    assert figures
    results = _search(site, lang, *(f"{figure} GiB" for figure in figures))
    for figure in figures:
        groups = results[f"{figure} GiB"]
        assert groups, figure
        # Every page found has it: the figure is what the reader looks for.
        for group in groups:
            assert figure in _top_pages_text(site, lang, [group]), (figure, group[0]["location"])


@pytest.mark.parametrize("lang", LANGS)
def test_a_command_option_is_found_where_it_is_written(site: Path, lang: str) -> None:
    docs = _index(site, lang)["docs"]
    options = sorted(set(re.findall(r"(--[a-z]+(?:-[a-z]+)+)", " ".join(d["text"] for d in docs))))
    assert len(options) >= 5
    results = _search(site, lang, *options)
    for option in options:
        pages = {doc["location"].split("#")[0] for doc in docs if option in doc["text"]}
        found = [group[0]["location"].split("#")[0] for group in results[option]]
        assert found and found[0] in pages, (option, found[:3], sorted(pages))


def _pages(groups: list[list[dict[str, str]]]) -> list[str]:
    """The pages of a query's results, in order (Material groups a page's sections)."""
    return [group[0]["location"].split("#")[0] for group in groups]


@pytest.mark.parametrize("lang", LANGS)
def test_a_count_is_found_however_it_is_written(site: Path, lang: str) -> None:
    """`7B`, 70억 and 7 miliar are one count: typed with the CLI's suffix it finds the pages
    that write it with the language's number word, and the other way round; a count written
    inside a model's name (`Llama-3.1-70B`) is found alone."""
    forms = _forms(site, lang, "70억", "700억", "1.5b", "70m", "llama-3.1-70b", "1,5")
    if lang == "ko":
        assert "7b" in forms["70억"] and "70b" in forms["700억"]
    assert "1.5b" in forms["1.5b"] and "70m" in forms["70m"] and "70b" in forms["llama-3.1-70b"]
    assert not [form for form in forms["1,5"] if form.endswith(("k", "m", "b", "t"))]
    docs = _index(site, lang)["docs"]
    spelled = {"ko": "70억", "id": "7 miliar"}[lang]
    written = {doc["location"].split("#")[0] for doc in docs if spelled in _plain(doc["text"])}
    assert written
    results = _search(site, lang, "7B", spelled)
    assert set(_pages(results["7B"])[: search_check.TOP]) & written, _pages(results["7B"])
    suffixed = {
        doc["location"]
        for doc in docs
        if re.search(r"\b7b\b", _plain(doc["text"])) and spelled not in _plain(doc["text"])
    }
    found = {doc["location"] for group in results[spelled] for doc in group}
    assert found & suffixed, sorted(suffixed)
    text = " ".join(_plain(doc["text"]) for doc in docs)
    # A model's name as the pages write it: letters first, then hyphenated parts, the count last
    # (`qwen2.5-7b`, `llama-3.1-70b`, `gemma-2-9b`).
    named = sorted(
        {count.upper() for count in re.findall(r"\b[a-z][\w.]*(?:-[\w.]+)*?-(\d+b)\b", text)}
    )
    assert named
    results = _search(site, lang, *named)
    for count in named:
        inside = re.compile(rf"[a-z][\w.]*(?:-[\w.]+)*?-{re.escape(count.lower())}\b")
        pages = {d["location"].split("#")[0] for d in docs if inside.search(_plain(d["text"]))}
        assert pages & set(_pages(results[count])[: search_check.TOP]), (count, sorted(pages))


@pytest.mark.parametrize("lang", LANGS)
def test_a_number_formats_short_name_finds_its_long_one(site: Path, lang: str) -> None:
    forms = _forms(site, lang, "bf16", "bfloat16", "fp16", "float16")
    assert "bfloat16" in forms["bf16"] and "bf16" in forms["bfloat16"]
    assert "float16" in forms["fp16"] and "fp16" in forms["float16"]
    results = _search(site, lang, "bf16", "BF16")
    for query in ("bf16", "BF16"):
        assert results[query], query
        assert "bfloat16" in _top_pages_text(site, lang, results[query][:1]), query


# What readers type when something went wrong, and the guide pages that help: the glossary
# defines the words (메모리 부족 is a term, and its entry is found for it), but its entry must
# not come before the guide's section that says what to do.
SYMPTOMS: dict[str, dict[str, tuple[str, ...]]] = {
    "ko": {
        "메모리 부족": ("oom/",),
        "메모리 부족 오류": ("oom/",),
        "GPU 메모리 부족": ("oom/",),
        "OOM": ("oom/",),
        "OOM 오류": ("oom/",),
        "CUDA out of memory": ("oom/",),
        "학습 중 메모리 부족": ("oom/", "measurement/"),
        "추론 중 메모리 부족": ("oom/", "measurement/"),
        "배치를 줄여도 OOM": ("oom/",),
        "피크가 추정치보다 큼": ("measurement/", "oom/"),
        "추정치보다 메모리를 더 씀": ("measurement/", "oom/"),
        "reserved가 allocated보다 큼": ("oom/", "measurement/"),
        "예약된 메모리가 줄지 않음": ("oom/", "measurement/"),
        "empty_cache 후에도 메모리": ("oom/",),
        "여유분이 부족함": ("oom/", "sizing/", "measurement/"),
    },
    "id": {
        "kehabisan memori": ("oom/",),
        "error kehabisan memori": ("oom/",),
        "memori GPU tidak cukup": ("oom/",),
        "memori habis": ("oom/",),
        "OOM": ("oom/",),
        "CUDA out of memory": ("oom/",),
        "kehabisan memori saat pelatihan": ("oom/", "measurement/"),
        "kehabisan memori saat inferensi": ("oom/", "measurement/"),
        "batch dikurangi tetap OOM": ("oom/",),
        "puncak lebih besar dari estimasi": ("measurement/", "oom/"),
        "puncak melebihi estimasi": ("measurement/", "oom/"),
        "reserved lebih besar dari allocated": ("oom/", "measurement/"),
        "memori reserved tidak turun": ("oom/", "measurement/"),
        "empty_cache tidak membebaskan memori": ("oom/",),
    },
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_guide_that_helps_ranks_above_the_glossary_on_symptoms(site: Path, lang: str) -> None:
    results = _search(site, lang, *SYMPTOMS[lang])
    outranked = []
    for query, guides in SYMPTOMS[lang].items():
        pages = _pages(results[query])
        guide = next((at for at, page in enumerate(pages) if page in guides), len(pages))
        glossary = pages.index("glossary/") if "glossary/" in pages else len(pages)
        if guide >= search_check.TOP or glossary < guide:
            outranked.append((query, pages[: search_check.TOP]))
    assert not outranked, outranked


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_readers_queries_find_a_right_page_in_the_top_three(page, base_url: str, lang: str) -> None:
    search_check.open_search(page, base_url, lang)
    outcomes = [search_check.run_query(page, lang, query) for query in search_check.query_set(lang)]
    missed = [
        f"{o.query.query!r} ({o.query.kind}): expected one of {list(o.query.pages)}, "
        f"got {list(o.found[: search_check.TOP])}"
        for o in outcomes
        if not o.hit
    ]
    share = search_check.share(outcomes)
    print(f"{lang}: {float(share):.1%} of {len(outcomes)} queries; missed:", *missed, sep="\n  ")
    assert share >= search_check.REQUIRED_SHARE, "\n".join(missed)


@pytest.mark.parametrize("lang", LANGS)
def test_a_glossary_term_finds_its_entry_in_the_top_three(site: Path, lang: str) -> None:
    """Headings rank above body text: the glossary's heading for a term (or a guide's heading)
    comes before the pages that only mention it."""
    import yaml

    from iteragpu.docs_tools.site_search import GLOSSARY

    terms = yaml.safe_load(GLOSSARY.read_text("utf-8"))["terms"]
    words = {term[lang]: f"glossary/#{term['key'].replace('_', '-')}" for term in terms}
    results = _search(site, lang, *words)
    buried = []
    for word, entry in words.items():
        top = [doc["location"] for group in results[word][: search_check.TOP] for doc in group]
        if entry not in top:
            buried.append((word, [group[0]["location"] for group in results[word][:3]]))
    assert len(buried) <= len(words) // 10, buried
