"""The built bilingual site: same pages in both trees, languages, links, anchors and downloads."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest

from iteragpu.lab_archive import ARCHIVE_NAME, build_archive

from .conftest import LANGS
from .htmlindex import parse, resolve

pytestmark = pytest.mark.site

GUIDES = ("measurement", "sizing")


def html_pages(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.html") if p.name != "404.html"}


def test_both_languages_hold_the_same_pages(site: Path) -> None:
    ko, id_ = html_pages(site / "ko"), html_pages(site / "id")
    assert ko == id_
    for page in (
        "index.html",
        "measurement/index.html",
        "sizing/index.html",
        "lab/index.html",
        "notebook/index.html",
        "cli/index.html",
    ):
        assert page in ko


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_declares_its_language(site: Path, lang: str) -> None:
    for page in (site / lang).rglob("*.html"):
        assert parse(page).lang == lang, page


def test_root_page_sends_readers_to_both_languages(site: Path) -> None:
    root = parse(site / "index.html")
    assert {"ko/", "id/"} <= set(root.links)


def test_every_internal_link_anchor_and_download_resolves(site: Path) -> None:
    parsed = {}
    broken = []
    checked = 0
    for page in sorted(site.rglob("*.html")):
        for link in parse(page).links:
            resolved = resolve(site, page, link)
            if resolved is None:
                continue
            target, fragment = resolved
            checked += 1
            if not target.exists() or site.resolve() not in target.parents:
                broken.append(f"{page.relative_to(site)} -> {link}")
                continue
            if fragment and target.suffix == ".html":
                ids = parsed.setdefault(target, parse(target).ids)
                if fragment not in ids:
                    broken.append(f"{page.relative_to(site)} -> {link} (no #{fragment})")
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
@pytest.mark.parametrize("guide", GUIDES)
def test_language_switcher_lands_on_the_twin_page(site: Path, lang: str, guide: str) -> None:
    page = site / lang / guide / "index.html"
    other = "id" if lang == "ko" else "ko"
    html = page.read_text("utf-8")
    links = re.findall(r'<a href="([^"]+)" hreflang="(ko|id)"', html)
    targets = {hreflang: resolve(site, page, href) for href, hreflang in links}
    assert targets[other] is not None
    assert targets[other][0] == (site / other / guide / "index.html").resolve()


@pytest.mark.parametrize("lang", LANGS)
def test_one_search_index_per_language(site: Path, lang: str) -> None:
    index = json.loads((site / lang / "search" / "search_index.json").read_text("utf-8"))
    text = " ".join(doc["text"] for doc in index["docs"])
    if lang == "ko":
        assert index["config"]["lang"] == ["ko"]
        assert "할당자" in text and "pemanasan" not in text
    else:
        assert index["config"]["lang"] == ["en"]  # lunr's default tokenizer
        assert "stemmer" not in index["config"]["pipeline"]  # no English stemmer on Indonesian
        assert "pemanasan" in text and "할당자" not in text


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


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_page_renders_without_outputs_and_offers_a_download(site: Path, lang: str) -> None:
    page = site / lang / "notebook" / "index.html"
    html = page.read_text("utf-8")
    assert 'class="jp-OutputArea' not in html, "the notebook ships without outputs"
    button = re.search(r'download\s+href="([^"]+\.ipynb)"', html)
    assert button, "download button missing"
    resolved = resolve(site, page, button.group(1))
    assert resolved is not None and resolved[0].name == f"iteragpu_lab.{lang}.ipynb"
    downloads = site / lang / "downloads"
    assert (downloads / f"iteragpu_lab.{lang}.ipynb").exists()
    assert (downloads / "mesure_memoire.py").read_bytes() == (
        Path(__file__).resolve().parents[2] / "src" / "iteragpu" / "lab" / "mesure_memoire.py"
    ).read_bytes()
