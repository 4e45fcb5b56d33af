"""Code on a page is in the page's language: a snippet that formats numbers or prints words is
written once per language (`weights_7b.ko.pycon`, `weights_7b.id.pycon`), and a page includes
only its own language's snippets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
_INCLUDE = re.compile(r'--8<--\s+"([^"]+)"')
_LANG_PART = re.compile(r"\.(" + "|".join(map(re.escape, CODES)) + r")\.")
# A language code as a string literal: format_number(..., "ko"), --lang ko.
_LANG_LITERAL = re.compile(
    r"""(?:["']|--lang\s+)(""" + "|".join(map(re.escape, CODES)) + r""")\b"""
)


def snippet_language(name: str) -> str | None:
    match = _LANG_PART.search(name)
    return match[1] if match else None


def wrong_language_includes(page_text: str, lang: str) -> list[str]:
    """The snippets a page of `lang` includes that are written for another language, or that
    are shared by every language although they name one (a `format_number(..., "ko")` call)."""
    wrong = []
    for name in _INCLUDE.findall(page_text):
        written_for = snippet_language(name)
        named = set(_LANG_LITERAL.findall((SNIPPETS / name).read_text("utf-8")))
        if written_for not in (None, lang) or named - {lang}:
            wrong.append(name)
    return wrong


def _pages(lang: str) -> list[Path]:
    return sorted((DOCS / lang / "docs").rglob("*.md"))


@pytest.mark.parametrize("lang", CODES)
def test_every_page_shows_code_of_its_own_language(lang: str) -> None:
    found = {
        str(page.relative_to(ROOT)): wrong
        for page in _pages(lang)
        if (wrong := wrong_language_includes(page.read_text("utf-8"), lang))
    }
    assert not found


def test_a_snippet_of_another_language_is_found() -> None:
    other = CODES[-1]
    page = (DOCS / CODES[0] / "docs" / "measurement.md").read_text("utf-8")
    assert wrong_language_includes(page, CODES[0]) == []
    swapped = page.replace(f"weights_7b.{CODES[0]}.pycon", f"weights_7b.{other}.pycon")
    assert wrong_language_includes(swapped, CODES[0]) == [f"weights_7b.{other}.pycon"]


@pytest.mark.parametrize("lang", CODES)
def test_a_shared_snippet_names_no_language(lang: str) -> None:
    for path in SNIPPETS.iterdir():
        # snippets/models/ holds example model folders for `iteragpu model`, not snippets.
        if path.is_file() and snippet_language(path.name) is None:
            assert not _LANG_LITERAL.findall(path.read_text("utf-8")), path.name


def test_each_language_has_its_own_copy_of_every_per_language_snippet() -> None:
    stems = {
        _LANG_PART.sub(".LANG.", p.name) for p in SNIPPETS.iterdir() if snippet_language(p.name)
    }
    for stem in stems:
        for lang in CODES:
            assert (SNIPPETS / stem.replace(".LANG.", f".{lang}.")).is_file(), (stem, lang)


def test_every_snippet_is_shown_by_a_page() -> None:
    included = {
        name
        for lang in CODES
        for page in _pages(lang)
        for name in _INCLUDE.findall(page.read_text("utf-8"))
    }
    assert {p.name for p in SNIPPETS.iterdir() if p.is_file()} <= included
