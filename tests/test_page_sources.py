"""Sources are links: each item of a "기술 출처 / Sumber teknis" line links to what it names, or
the line says plainly that the item is not on this site; documentation links are pinned to the
version the guides cite, never to a moving `stable` or `main`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from iteragpu.i18n.languages import CODES

DOCS = Path(__file__).resolve().parents[1] / "docs"
SOURCE_LABEL = {"ko": "기술 출처:", "id": "Sumber teknis:"}
NOT_ON_SITE = {"ko": "이 사이트에는 없", "id": "tidak tersedia di situs ini"}
_LINK = re.compile(r"\[[^\]]+\]\(([^)]+)\)")
_URL = re.compile(r"https?://[^\s)>\"']+")


def _literal(name: str) -> str:
    """A version as the measurement guide declares it (the figure checker checks it is stated)."""
    text = (DOCS / CODES[0] / "docs" / "measurement.md").read_text("utf-8")
    meta = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    return str(meta["figures"]["literals"][name])


PYTORCH = _literal("pytorch_docs_version")
TRANSFORMERS = "5.17"  # the version sizing.md cites (its literal transformers_docs_version)


def source_lines(lang: str) -> list[tuple[Path, str]]:
    lines = []
    for page in sorted((DOCS / lang / "docs").rglob("*.md")):
        for line in page.read_text("utf-8").splitlines():
            if line.startswith(SOURCE_LABEL[lang]):
                lines.append((page, line))
    return lines


def unlinked_items(line: str, lang: str) -> list[str]:
    """The items of a source line that neither link nor are declared absent from the site."""
    listed = line[len(SOURCE_LABEL[lang]) :].split(". ")[0]
    items = [item.strip() for item in listed.split(" · ")]
    if NOT_ON_SITE[lang] in line:
        return []
    return [item for item in items if not _LINK.fullmatch(item)]


@pytest.mark.parametrize("lang", CODES)
def test_every_source_is_a_link_or_said_absent(lang: str) -> None:
    lines = source_lines(lang)
    assert len(lines) >= 15
    found = {
        f"{page.name}: {line[:60]}": bad
        for page, line in lines
        if (bad := unlinked_items(line, lang))
    }
    assert not found


def test_an_unlinked_source_is_found() -> None:
    assert unlinked_items("기술 출처: [A](https://a.example) · B", "ko") == ["B"]
    assert (
        unlinked_items("기술 출처: [A](https://a.example) · B. B는 이 사이트에는 없습니다.", "ko")
        == []
    )


@pytest.mark.parametrize("lang", CODES)
def test_documentation_links_are_pinned_to_the_cited_versions(lang: str) -> None:
    for page in sorted((DOCS / lang / "docs").rglob("*.md")):
        for url in _URL.findall(page.read_text("utf-8")):
            if "docs.pytorch.org" in url or "pytorch.org/docs" in url:
                assert f"/docs/{PYTORCH}/" in url, (page.name, url)
            if "huggingface.co/docs/transformers" in url:
                assert f"/v{TRANSFORMERS}.0/" in url, (page.name, url)
