"""MkDocs hooks shared by both language builds.

- builds the lab downloads (archive, script, notebooks, READMEs, licence) and publishes them
  under `downloads/`, so every site build ships the archive it describes;
- puts this language's notebook at `notebook.ipynb` for mkdocs-jupyter to render;
- fills the `[[archive_sha256]]` and `[[archive_size_bytes]]` placeholders of the lab page;
- points the language switcher at the current page's twin in the other language;
- builds the Indonesian search index without a stemmer (lunr has none for Indonesian).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from iteragpu.formatting import format_number
from iteragpu.lab_archive import ARCHIVE_NAME, build_downloads

ROOT = Path(__file__).resolve().parents[1]
DOWNLOADS_BUILD_DIR = ROOT / "dist"
DOWNLOADS_URL_DIR = "downloads"
NOTEBOOK_PAGE = "notebook.ipynb"

_build: dict[str, Any] = {}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    lang = config.theme["language"]
    downloads = build_downloads(DOWNLOADS_BUILD_DIR)
    archive = downloads[ARCHIVE_NAME]
    _build.update(
        lang=lang,
        downloads=downloads,
        archive_sha256=hashlib.sha256(archive.read_bytes()).hexdigest(),
        archive_size_bytes=archive.stat().st_size,
    )
    _place_notebook(downloads[f"iteragpu_lab.{lang}.ipynb"], Path(config.docs_dir) / NOTEBOOK_PAGE)
    if lang == "id":
        search = config.plugins["material/search"]
        search.config.lang = ["en"]  # tokenizer only; the stemmer is removed just below
        search.config.pipeline = ["trimmer"]
    return config


def _place_notebook(built: Path, target: Path) -> None:
    # The notebook is generated from src/iteragpu/lab/iteragpu_lab.py (git-ignored in docs/);
    # it is only rewritten when it changed, so a file watcher is not woken for nothing.
    if not target.exists() or target.read_bytes() != built.read_bytes():
        shutil.copyfile(built, target)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name, path in sorted(_build["downloads"].items()):
        files.append(
            File.generated(config, f"{DOWNLOADS_URL_DIR}/{name}", abs_src_path=str(path))
        )
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    lang = _build["lang"]
    return markdown.replace("[[archive_sha256]]", _build["archive_sha256"]).replace(
        "[[archive_size_bytes]]", format_number(_build["archive_size_bytes"], 0, lang)
    )


def on_page_context(
    context: dict[str, Any], page: Page, config: MkDocsConfig, nav: Any
) -> dict[str, Any]:
    # Links are relative to the site root of this language (`..` reaches the other one),
    # so the switcher lands on the same page wherever the site is hosted.
    for alternate in config.extra["alternate"]:
        alternate["link"] = f"../{alternate['lang']}/{page.url}"
    return context
