"""The project's glossary (`docs/glossary.yml`): its terms, the variants a reader must not meet,
and the glossary page of each language, written from it.

    python -m iteragpu.docs_tools.glossary --write   # docs/<code>/docs/glossary.md, every language
    python -m iteragpu.docs_tools.glossary --check   # exit 1 if a page is not what --write writes

The YAML is the one source: the pages are generated so that they hold exactly its terms and
definitions, and tests (not the runtime, which never reads YAML) pin the CLI, the lab and the
notebook to the same words.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from iteragpu.docs_tools import require_extra
from iteragpu.i18n.languages import CODES

require_extra("yaml")

ROOT = Path(__file__).resolve().parents[3]
GLOSSARY = ROOT / "docs" / "glossary.yml"
PAGE_NAME = "glossary.md"

# What a reader does not read as prose: code, markup and addresses (the same spirit as the
# figure checker's cleaners). Fenced blocks are dropped line by line in `reader_text`.
_FENCE = re.compile(r"^\s*(```|~~~)")
_CLEANERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"`[^`]*`"), " "),  # inline code
    (re.compile(r"<[^>]+>"), " "),  # HTML tags and their attributes (ids such as sizer-form)
    (re.compile(r"\]\([^)]*\)"), "]"),  # link targets
    (re.compile(r"https?://\S+"), " "),
    (re.compile(r"\{[^}]*\}"), " "),  # attribute lists and heading anchors
    (re.compile(r'--8<--\s+"[^"]+"'), " "),  # snippet includes
)


@dataclass(frozen=True)
class Term:
    """One concept: its word, the variants to avoid and its definition, per language."""

    key: str
    words: Mapping[str, str]
    avoid: Mapping[str, tuple[str, ...]]
    definition: Mapping[str, str]
    synonyms: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Glossary:
    terms: tuple[Term, ...]
    page: Mapping[str, Mapping[str, str]]  # title, description, intro -> language -> text


def load(path: Path = GLOSSARY) -> Glossary:
    """The glossary; ValueError if a term misses a language of the list or a field."""
    import yaml

    data = yaml.safe_load(path.read_text("utf-8"))
    terms = []
    for entry in data["terms"]:
        key = entry.get("key", "?")
        for lang in CODES:
            if not isinstance(entry.get(lang), str) or not entry[lang].strip():
                raise ValueError(f"{path}: term {key!r} has no {lang!r} word")
            for field in ("definition", "avoid", "synonyms"):
                if lang not in (entry.get(field) or {}):
                    raise ValueError(f"{path}: term {key!r} has no {lang!r} {field}")
        terms.append(
            Term(
                key=key,
                words={lang: entry[lang] for lang in CODES},
                avoid={lang: tuple(entry["avoid"][lang] or ()) for lang in CODES},
                definition={lang: entry["definition"][lang] for lang in CODES},
                synonyms={lang: tuple(entry["synonyms"][lang] or ()) for lang in CODES},
            )
        )
    page = data["page"]
    for field, texts in page.items():
        for lang in CODES:
            if lang not in texts:
                raise ValueError(f"{path}: page {field!r} has no {lang!r} text")
    return Glossary(tuple(terms), page)


def reader_text(markdown: str) -> str:
    """The prose of a Markdown page, as a reader reads it: without its front matter, code
    blocks, inline code, HTML tags, link targets and addresses."""
    if markdown.startswith("---\n"):
        markdown = markdown[markdown.index("\n---\n", 4) + len("\n---\n") :]
    lines, in_fence = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for pattern, replacement in _CLEANERS:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines)


def _word(text: str) -> re.Pattern[str]:
    # A variant starts a word (so "tahap" is not found in "bertahap") but may carry an ending
    # (Korean particles: 최고치가; Indonesian suffixes: cadangannya).
    return re.compile(r"(?<!\w)" + re.escape(text), re.IGNORECASE)


def avoided(text: str, lang: str, terms: Iterable[Term]) -> list[tuple[str, str]]:
    """(variant, term key) for each avoided variant of `lang` that `text` uses.

    A variant found inside a term that contains it is the term, not the variant: 유효 여유 is
    avoided, but it begins 유효 여유분, a term. A variant that contains a term (작업 부하, which
    contains 부하) is still found.
    """
    terms = tuple(terms)
    found = []
    for term in terms:
        for variant in term.avoid[lang]:
            covering = [
                (m.start(), m.end())
                for other in terms
                if variant.casefold() in other.words[lang].casefold()
                for m in _word(other.words[lang]).finditer(text)
            ]
            for match in _word(variant).finditer(text):
                if not any(
                    start <= match.start() and match.end() <= end for start, end in covering
                ):
                    found.append((variant, term.key))
    return found


def page_markdown(glossary: Glossary, lang: str) -> str:
    """The glossary page of `lang`: one section per term, anchored by its key, in the YAML's
    order (the same anchors in the same order in every language, as the figure checker
    requires)."""
    page = glossary.page
    lines = [
        "---",
        "# Written by `python -m iteragpu.docs_tools.glossary --write` from docs/glossary.yml:",
        "# edit the YAML, not this page.",
        f"description: {_yaml_string(page['description'][lang])}",
        "---",
        f"# {page['title'][lang]}",
        "",
        page["intro"][lang],
    ]
    for term in glossary.terms:
        lines += ["", f"## {term.words[lang]} {{ #{_anchor(term.key)} }}", ""]
        lines.append(term.definition[lang])
    return "\n".join(lines) + "\n"


def _anchor(key: str) -> str:
    return key.replace("_", "-")


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def page_path(docs: Path, lang: str) -> Path:
    return docs / lang / "docs" / PAGE_NAME


def stale_pages(glossary: Glossary, docs: Path) -> list[Path]:
    """The glossary pages that are missing or differ from what `page_markdown` writes."""
    stale = []
    for lang in CODES:
        path = page_path(docs, lang)
        if not path.is_file() or path.read_text("utf-8") != page_markdown(glossary, lang):
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--check"]):
        print("usage: python -m iteragpu.docs_tools.glossary --write | --check", file=sys.stderr)
        return 2
    glossary = load()
    docs = GLOSSARY.parent
    if args == ["--write"]:
        for lang in CODES:
            page_path(docs, lang).write_text(page_markdown(glossary, lang), "utf-8")
        return 0
    stale = stale_pages(glossary, docs)
    for path in stale:
        print(f"{path}: not written from {GLOSSARY.name}; run --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
