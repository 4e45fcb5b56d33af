"""The built site: the same pages in every language, languages, links, anchors and downloads."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from html import unescape
from pathlib import Path

import pytest

from iteragpu.docs_tools.lab_archive import ARCHIVE_NAME, build_archive
from iteragpu.i18n.languages import SOURCE, language

from .conftest import LANGS
from .htmlindex import parse, resolve

pytestmark = pytest.mark.site

GUIDES = ("measurement", "sizing")


def html_pages(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.html") if p.name != "404.html"}


def test_every_language_holds_the_same_pages(site: Path) -> None:
    source = html_pages(site / SOURCE)
    for lang in LANGS:
        assert html_pages(site / lang) == source, lang
    for page in (
        "index.html",
        "measurement/index.html",
        "sizing/index.html",
        "lab/index.html",
        "notebook/index.html",
        "cli/index.html",
    ):
        assert page in source


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_declares_its_language(site: Path, lang: str) -> None:
    for page in (site / lang).rglob("*.html"):
        assert parse(page).lang == lang, page


def test_root_page_sends_readers_to_every_language(site: Path) -> None:
    root = parse(site / "index.html")
    assert root.lang == SOURCE
    assert {f"{lang}/" for lang in LANGS} <= set(root.links)
    html = (site / "index.html").read_text("utf-8")
    for lang in LANGS:
        assert f'hreflang="{lang}" lang="{lang}">{language(lang).name}</a>' in html


def test_every_internal_link_anchor_and_download_resolves(site: Path) -> None:
    # Every page parsed once, for its links and as the target of other pages' fragments.
    parsed = {page.resolve(): parse(page) for page in sorted(site.rglob("*.html"))}
    broken = []
    checked = 0
    for page, html in parsed.items():
        for link in html.links:
            resolved = resolve(site, page, link)
            if resolved is None:
                continue
            target, fragment = resolved
            checked += 1
            if not target.exists() or site.resolve() not in target.parents:
                broken.append(f"{page.relative_to(site.resolve())} -> {link}")
                continue
            if fragment and target.suffix == ".html":
                target_page = parsed.get(target) or parse(target)
                if fragment not in target_page.ids:
                    broken.append(f"{page.relative_to(site.resolve())} -> {link} (no #{fragment})")
    assert checked > 200
    assert broken == []


@pytest.mark.parametrize("lang", LANGS)
def test_guides_keep_their_heading_anchors(site: Path, lang: str) -> None:
    ids = parse(site / lang / "measurement" / "index.html").ids
    for anchor in ("allocated-vs-reserved", "two-peaks", "bound-each-phase", "notebook-and-script"):
        assert anchor in ids
    ids = parse(site / lang / "sizing" / "index.html").ids
    for anchor in ("units-before-comparing", "worked-example-7b", "shortlist"):
        assert anchor in ids


@pytest.mark.parametrize("lang", LANGS)
def test_language_switcher_lands_on_the_twin_page(site: Path, lang: str) -> None:
    for page in sorted((site / lang).rglob("index.html")):
        twin = page.relative_to(site / lang)
        links = re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', page.read_text("utf-8"))
        targets = {hreflang: resolve(site, page, href) for href, hreflang in links}
        assert set(targets) == set(LANGS), page
        for other, target in targets.items():
            assert target is not None and target[0] == (site / other / twin).resolve(), page


def _title(page: Path) -> str:
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", page.read_text("utf-8"), re.S)
    assert heading, page
    return _text(heading[1])


@pytest.mark.parametrize("lang", LANGS)
def test_one_search_index_per_language(site: Path, lang: str) -> None:
    index = json.loads((site / lang / "search" / "search_index.json").read_text("utf-8"))
    assert index["config"]["lang"] == [language(lang).search_lang]
    if language(lang).search_lang != lang:  # no lunr pack: its default tokenizer, no stemmer
        assert "stemmer" not in index["config"]["pipeline"]
    titles = {doc["title"] for doc in index["docs"]}
    for other in LANGS:
        title = _title(site / other / "measurement" / "index.html")
        assert (title in titles) == (other == lang), (other, title)


def _archive_bytes(site: Path, lang: str) -> bytes:
    return (site / lang / "downloads" / ARCHIVE_NAME).read_bytes()


@pytest.mark.parametrize("lang", LANGS)
def test_offered_archive_is_the_archive_built_and_its_hash_is_on_the_page(
    site: Path, lang: str, tmp_path: Path
) -> None:
    offered = _archive_bytes(site, lang)
    rebuilt = build_archive(tmp_path).read_bytes()
    assert offered == rebuilt
    digest = hashlib.sha256(offered).hexdigest()
    lab_html = (site / lang / "lab" / "index.html").read_text("utf-8")
    assert digest in lab_html
    assert "[[archive_sha256]]" not in lab_html and "[[archive_size_bytes]]" not in lab_html
    sha_file = (site / lang / "downloads" / f"{ARCHIVE_NAME}.sha256").read_text("utf-8")
    assert sha_file.split()[0] == digest
    with zipfile.ZipFile(site / lang / "downloads" / ARCHIVE_NAME) as archive:
        names = archive.namelist()
    assert all(name.startswith("iteragpu-lab-v1/") for name in names)


def _code_blocks(html: str) -> list[str]:
    """The text of every highlighted code block of a page, in order."""
    blocks = re.findall(r'<div class="[^"]*highlight"><pre>.*?<code>(.*?)</code>', html, re.S)
    return [unescape(re.sub(r"<[^>]+>", "", block)).strip("\n") for block in blocks]


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_page_shows_every_cell_and_offers_a_download(site: Path, lang: str) -> None:
    page = site / lang / "notebook" / "index.html"
    html = page.read_text("utf-8")
    button = re.search(r'download\s+href="([^"]+\.ipynb)"', html)
    assert button, "download button missing"
    resolved = resolve(site, page, button.group(1))
    assert resolved is not None and resolved[0].name == f"iteragpu_lab.{lang}.ipynb"
    cells = json.loads(resolved[0].read_text("utf-8"))["cells"]
    code = ["".join(cell["source"]).strip("\n") for cell in cells if cell["cell_type"] == "code"]
    # Every code cell, in order, and nothing else: the notebook ships without outputs.
    assert _code_blocks(html) == code
    headings = [
        line.lstrip("#").strip()
        for cell in cells
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("#")
    ]
    shown = [_text(h) for h in re.findall(r"<h[1-6] id=[^>]*>(.*?)</h[1-6]>", html, re.S)]
    assert headings and shown == headings
    assert "jp-" not in html, "no JupyterLab markup or stylesheet"
    downloads = site / lang / "downloads"
    assert (downloads / f"iteragpu_lab.{lang}.ipynb").exists()
    assert (downloads / "mesure_memoire.py").read_bytes() == (
        Path(__file__).resolve().parents[2] / "src" / "iteragpu" / "lab" / "mesure_memoire.py"
    ).read_bytes()


def _text(fragment: str) -> str:
    """A heading's text: tags and the permalink's pilcrow removed."""
    return unescape(re.sub(r"<[^>]+>", "", fragment)).rstrip("¶").strip()
