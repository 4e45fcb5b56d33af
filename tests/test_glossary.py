"""The glossary (docs/glossary.yml): complete in every language of the list, followed by every
page, and shown as one generated page per language."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from iteragpu.docs_tools.glossary import (
    GLOSSARY,
    PAGE_NAME,
    avoided,
    load,
    page_markdown,
    reader_text,
    stale_pages,
)
from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
GLOSSARY_DATA = load()
TERMS = GLOSSARY_DATA.terms


def _pages(lang: str) -> list[Path]:
    return sorted((DOCS / lang / "docs").rglob("*.md"))


def _description(page_text: str) -> str:
    """The page's meta description: readers meet it in search results."""
    if not page_text.startswith("---\n"):
        return ""
    meta = yaml.safe_load(page_text[4 : page_text.index("\n---\n", 4)]) or {}
    return str(meta.get("description", ""))


def _snippets(lang: str) -> list[Path]:
    """The snippets written for one language (`weights_7b.ko.pycon`): their comments and
    printed words are what that language's reader sees."""
    return sorted(p for p in SNIPPETS.glob(f"*.{lang}.*") if p.suffix in {".pycon", ".sh"})


def test_every_term_has_every_language_of_the_list() -> None:
    raw = yaml.safe_load(GLOSSARY.read_text("utf-8"))
    for entry in raw["terms"]:
        for lang in CODES:
            assert isinstance(entry[lang], str) and entry[lang].strip(), (entry["key"], lang)
            for field in ("definition", "avoid", "synonyms"):
                assert lang in entry[field], (entry["key"], field, lang)
            assert entry["definition"][lang].strip(), (entry["key"], lang)
    for texts in raw["page"].values():
        assert set(texts) >= set(CODES)


@pytest.mark.parametrize("field", ["word", "definition", "avoid", "synonyms"])
def test_a_term_without_a_language_is_refused(tmp_path: Path, field: str) -> None:
    raw = yaml.safe_load(GLOSSARY.read_text("utf-8"))
    lang = CODES[-1]
    entry = raw["terms"][0]
    if field == "word":
        del entry[lang]
    else:
        del entry[field][lang]
    broken = tmp_path / "glossary.yml"
    broken.write_text(yaml.safe_dump(raw, allow_unicode=True), "utf-8")
    with pytest.raises(ValueError, match=f"{entry['key']!r} has no {lang!r}"):
        load(broken)


def test_keys_and_words_are_unique_in_each_language() -> None:
    assert not [k for k, n in Counter(t.key for t in TERMS).items() if n > 1]
    for lang in CODES:
        words = Counter(t.words[lang].casefold() for t in TERMS)
        assert not [w for w, n in words.items() if n > 1], lang


def test_an_avoided_variant_is_no_term_of_its_language() -> None:
    for lang in CODES:
        words = {t.words[lang].casefold() for t in TERMS}
        for term in TERMS:
            for variant in term.avoid[lang]:
                assert variant.casefold() not in words, (term.key, lang, variant)
                # A variant found inside its own term would flag every use of the term.
                assert not avoided(term.words[lang], lang, TERMS), (term.key, lang)


def test_definitions_state_no_figure() -> None:
    # The generated page has no figure ledger: a digit there would escape the figure checker.
    for term in TERMS:
        for lang in CODES:
            assert not any(c.isdigit() for c in term.definition[lang]), (term.key, lang)


@pytest.mark.parametrize("lang", CODES)
def test_no_page_uses_an_avoided_variant(lang: str) -> None:
    found = {}
    for path in [*_pages(lang), *_snippets(lang)]:
        text = path.read_text("utf-8")
        prose = reader_text(text) + "\n" + _description(text) if path.suffix == ".md" else text
        hits = avoided(prose, lang, TERMS)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found


def test_the_variant_check_finds_what_a_reader_would_meet() -> None:
    page = "---\ndescription: x\n---\n# T\n\nreserved 최고치는 `최고치` 코드와 다릅니다.\n"
    assert avoided(reader_text(page), "ko", TERMS) == [("최고치", "peak")]
    # The term that begins with an avoided variant is the term; a longer word is another word.
    assert avoided("유효 여유분을 비교합니다", "ko", TERMS) == []
    assert avoided("유효 여유를 비교합니다", "ko", TERMS) == [("유효 여유", "effective_margin")]
    assert avoided("memvalidasi secara bertahap", "id", TERMS) == []
    assert avoided("cadangannya 4 GiB, tahap generasi", "id", TERMS) == [
        ("cadangan", "reserve"),
        ("tahap", "phase"),
    ]
    # Code, HTML attributes and link targets are not prose.
    html = '<div id="sizer-form"></div> [x](sizer.md) `sizer`\n```\nsizer\n```\n'
    assert avoided(reader_text(html), "id", TERMS) == []


@pytest.mark.parametrize("lang", CODES)
def test_every_term_is_the_word_its_pages_use(lang: str) -> None:
    """A term no page states would be a glossary of words nobody reads."""
    prose = "\n".join(
        reader_text(p.read_text("utf-8")) for p in _pages(lang) if p.name != PAGE_NAME
    ).casefold()
    unused = [t.key for t in TERMS if t.words[lang].casefold() not in prose]
    assert not unused


def test_the_glossary_pages_are_written_from_the_yaml() -> None:
    assert stale_pages(GLOSSARY_DATA, DOCS) == []
    for lang in CODES:
        page = (DOCS / lang / "docs" / PAGE_NAME).read_text("utf-8")
        for term in TERMS:
            assert f"## {term.words[lang]} {{ #{term.key.replace('_', '-')} }}" in page
            assert term.definition[lang] in page


def test_a_changed_definition_makes_the_pages_stale(tmp_path: Path) -> None:
    from dataclasses import replace

    for lang in CODES:
        target = tmp_path / lang / "docs" / PAGE_NAME
        target.parent.mkdir(parents=True)
        target.write_text(page_markdown(GLOSSARY_DATA, lang), "utf-8")
    assert stale_pages(GLOSSARY_DATA, tmp_path) == []
    first = TERMS[0]
    changed_definition = {**first.definition, CODES[-1]: first.definition[CODES[-1]] + " X"}
    changed = replace(
        GLOSSARY_DATA, terms=(replace(first, definition=changed_definition), *TERMS[1:])
    )
    assert stale_pages(changed, tmp_path) == [tmp_path / CODES[-1] / "docs" / PAGE_NAME]


def test_each_glossary_page_has_its_own_description() -> None:
    descriptions = [GLOSSARY_DATA.page["description"][lang] for lang in CODES]
    assert len(set(descriptions)) == len(CODES)


def test_the_glossary_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert f"  - {PAGE_NAME}\n" in config
