"""Every page says what it holds, in its own words: a `description` in its front matter (the
theme's meta description), in the page's language, different from every other page's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from iteragpu.i18n.languages import CODES

DOCS = Path(__file__).resolve().parents[1] / "docs"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
PAGES = sorted(p for lang in CODES for p in (DOCS / lang / "docs").rglob("*.md"))


def description(page: Path) -> str:
    text = page.read_text("utf-8")
    assert text.startswith("---\n"), page
    meta = yaml.safe_load(text[4 : text.index("\n---\n", 4)]) or {}
    value = meta.get("description")
    assert isinstance(value, str) and value.strip(), f"{page}: no description"
    return value


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_each_page_describes_itself_in_its_language(page: Path) -> None:
    text = description(page)
    lang = page.relative_to(DOCS).parts[0]
    # Korean prose is written in Hangul; the Indonesian pages have none.
    assert bool(HANGUL.search(text)) == (lang == "ko"), text
    assert len(text) >= 40, text


def test_no_two_pages_share_a_description() -> None:
    seen: dict[str, Path] = {}
    for page in PAGES:
        text = description(page)
        assert text not in seen, (page, seen.get(text))
        seen[text] = page
