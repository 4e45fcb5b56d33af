"""Leftovers on the built pages (issue 20): the other language's script or prose, a raw literal
or a word of the code outside code, a navigation label left untranslated. The detectors are
tests/foreign_text.py's, shared with the CLI's and the lab's tests (tests/test_reader_leftovers.py,
which also shows that each detector finds what it is for)."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from foreign_text import code_words, hangul, indonesian_runs, raw_literals
from reader_identifiers import reader_identifiers

from iteragpu.gpus.catalog import load_catalog

from .conftest import LANGS, site_pages
from .htmlindex import reader_text

pytestmark = pytest.mark.site


def _page(site: Path, lang: str, page: str) -> Path:
    return site / lang / (page if page.endswith(".html") else f"{page}index.html")


class _OwnLanguage(HTMLParser):
    """Everything of a page in the page's language: its text, attribute values and scripts
    (the results page carries its example result as JSON), leaving out what an element marks
    as another language (`<a lang="ko">한국어</a>` in the language switcher)."""

    def __init__(self, lang: str) -> None:
        super().__init__(convert_charrefs=True)
        self.lang = lang
        self.stack: list[tuple[str, bool]] = []
        self.chunks: list[str] = []

    def _foreign(self) -> bool:
        return any(foreign for _, foreign in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        lang = values.get("lang")
        foreign = tag != "html" and lang is not None and lang != self.lang
        if tag not in {"meta", "link", "br", "img", "input", "hr", "source", "wbr"}:
            self.stack.append((tag, foreign))
        if not (foreign or self._foreign()):
            self.chunks.extend(v for k, v in attrs if v and k not in {"href", "src"})

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._foreign():
            self.chunks.append(data)


def own_language_text(path: Path, lang: str) -> str:
    parser = _OwnLanguage(lang)
    parser.feed(path.read_text("utf-8"))
    parser.close()
    return "\n".join(parser.chunks)


def test_the_page_reader_sees_what_another_language_marks_apart(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(
        '<html lang="id"><body><a lang="ko" href="x">한국어</a><p title="Judul">Teks</p>'
        '<script>var example = {"missing": ["드라이버"]};</script></body></html>',
        "utf-8",
    )
    text = own_language_text(page, "id")
    assert "한국어" not in text and "Judul" in text and "Teks" in text
    assert hangul(text) == ["드라이버"]


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_shows_the_other_languages_script_or_prose(site: Path, lang: str) -> None:
    """No Hangul anywhere on an Indonesian page, its scripts and embedded data included (the
    results page's example once carried an environment recorded in Korean); no Indonesian
    prose outside code on a Korean page."""
    found = []
    for page in site_pages(site, lang):
        path = _page(site, lang, page)
        if lang == "ko":
            seen = reader_text(path)
            found += [
                (page, run) for text in [seen.prose, *seen.labels] for run in indonesian_runs(text)
            ]
        else:
            found += [(page, run) for run in hangul(own_language_text(path, lang))]
    assert found == []


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_says_a_raw_literal_or_a_word_of_the_code(site: Path, lang: str) -> None:
    """Prose and labels outside code: no `null`, `None`, `True`, `False`; no snake_case word but
    the names of the reader's own files and options (reader_identifiers), no English word of
    the code (`unknown`, `declared`, Korean `Notebook`). The message templates the scripts fill
    are checked with their `{placeholders}` masked."""
    allowed = reader_identifiers()
    found = []
    for page in site_pages(site, lang):
        seen = reader_text(_page(site, lang, page))
        for text in [seen.prose, *seen.labels]:
            found += [(page, word) for word in raw_literals(text)]
            found += [(page, word) for word in code_words(text, lang, allowed)]
    assert found == []


# Names that are the same in every language: the cards, the product, the CLI's name.
_PROPER = re.compile(r"(?:IteraGPU Lab(?: v\d+)?|iteragpu CLI|CLI iteragpu)")


def _proper_names() -> set[str]:
    return {card.name for card in load_catalog()}


def _nav_labels(path: Path) -> list[str]:
    """The primary navigation's labels and section titles of a page, in order."""
    html = path.read_text("utf-8")
    start = html.index('<nav class="md-nav md-nav--primary"')
    nav = html[start : html.index('<div class="md-content"', start)]
    raw = re.findall(
        r'<span class="md-ellipsis">(.*?)</span>|<label class="md-nav__title"[^>]*>(.*?)</label>',
        nav,
        re.S,
    )
    labels = [" ".join(unescape(re.sub(r"<[^>]+>", " ", a or b)).split()) for a, b in raw]
    return [label for label in labels if label]


def _untranslated(labels: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(language, label) for each label that is not in its language: a Korean one without a
    Hangul letter, or one that reads the same in another language's navigation, unless it is a
    proper name."""
    names = _proper_names()

    def proper(label: str) -> bool:
        return label in names or bool(_PROPER.fullmatch(label))

    found = []
    for lang, own in labels.items():
        others = {label for other, theirs in labels.items() if other != lang for label in theirs}
        for label in own:
            if proper(label):
                continue
            if (lang == "ko" and not hangul(label)) or label in others:
                found.append((lang, label))
    return found


def test_the_navigation_check_finds_an_untranslated_label() -> None:
    labels = {"ko": ["가이드", "Notebook", "T4", "IteraGPU Lab v1"], "id": ["Panduan", "T4"]}
    assert _untranslated(labels) == [("ko", "Notebook")]
    labels = {"ko": ["가이드", "Families"], "id": ["Panduan", "Families"]}
    assert _untranslated(labels) == [("ko", "Families"), ("id", "Families")]


@pytest.mark.parametrize("page", ["", "measurement/", "gpus/t4/", "lab/", "notebook/"])
def test_every_navigation_label_is_in_the_pages_language(site: Path, page: str) -> None:
    labels = {lang: _nav_labels(_page(site, lang, page)) for lang in LANGS}
    assert all(labels.values())
    assert _untranslated(labels) == []


# ---------------------------------------------------------------------------------------------
# What the sizer writes after reading a config
# ---------------------------------------------------------------------------------------------

SIZER_CONFIG_READER = (
    Path(__file__).resolve().parents[2] / "src" / "iteragpu" / "web" / "sizer" / "config_reader.js"
)
LLAMA_CONFIG = Path(__file__).resolve().parents[2] / "snippets" / "models" / "llama-3-8b"


def _layouts() -> set[str]:
    """The KV layouts the sizer can name in its summary (the LAYOUT_/MLA_ constants of
    web/sizer/config_reader.js)."""
    text = SIZER_CONFIG_READER.read_text("utf-8")
    pattern = r'const (?:LAYOUT_PER_HEAD|MLA_LATENT|MLA_PER_HEAD) = "(\w+)";'
    return set(re.findall(pattern, text))


@pytest.mark.parametrize("lang", LANGS)
def test_every_kv_layout_the_sizer_names_has_the_pages_words(site: Path, lang: str) -> None:
    html = _page(site, lang, "sizer/").read_text("utf-8")
    words = dict(re.findall(r'<span data-config-layout="(\w+)">([^<]+)</span>', html))
    assert _layouts() == {"per_head", "mla_latent", "mla_per_head"}
    assert set(words) == _layouts()
    for layout, word in words.items():
        assert layout not in word and code_words(word, lang) == [], (layout, word)


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_sizers_summary_of_a_config_is_in_the_pages_words(
    page: Any, base_url: str, lang: str
) -> None:
    """ "KV 구성 per_head" once: the layout is said in the page's words, as is every word of the
    status line but the config's own model_type."""
    page.goto(f"{base_url}/{lang}/sizer/")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    page.fill("#sizer-config-text", (LLAMA_CONFIG / "config.json").read_text("utf-8"))
    status = page.locator("#sizer-config-status")
    assert status.get_attribute("data-state") == "ok"
    shown = status.inner_text()
    word = page.evaluate(
        "() => document.querySelector('[data-config-layout=\"per_head\"]').textContent.trim()"
    )
    assert word in shown
    assert code_words(shown, lang, reader_identifiers()) == [], shown
    assert raw_literals(shown) == [] and "{" not in shown, shown
    if lang != "ko":
        assert hangul(shown) == [], shown
