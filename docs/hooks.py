"""MkDocs hooks shared by both language builds.

- builds the lab downloads (archive, script, notebooks, READMEs, licence) and publishes them
  under `downloads/`, so every site build ships the archive it describes;
- puts this language's notebook at `notebook.ipynb` for mkdocs-jupyter to render;
- fills the `[[archive_sha256]]` and `[[archive_size_bytes]]` placeholders of the lab page;
- points the language switcher at the current page's twin in the other language;
- refuses a build whose search language does not match its page language;
- publishes the browser sizer (`src/iteragpu/web/sizer.js`) as `assets/sizer.js` and gives every
  page with `sizer: true` in its front matter the sizer's data: the catalog the CLI reads, the
  defaults and tasks of `iteragpu.sizer_vectors`, and Babel's number symbols per language
  (`docs/overrides/main.html` embeds it as JSON next to the script).

`python docs/hooks.py --sizer-data` prints that data (the node tests of the sizer read it).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from collections.abc import Iterator
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from iteragpu.formatting import LANGS, format_number
from iteragpu.lab_archive import ARCHIVE_NAME, build_downloads

ROOT = Path(__file__).resolve().parents[1]
DOWNLOADS_BUILD_DIR = ROOT / "dist"
DOWNLOADS_URL_DIR = "downloads"
NOTEBOOK_PAGE = "notebook.ipynb"
# lunr has a Korean pack but no Indonesian one (see mkdocs.yml); noxfile.py reads this too.
SEARCH_LANGS = {"ko": "ko", "id": "en"}
SIZER_SCRIPT = ROOT / "src" / "iteragpu" / "web" / "sizer.js"
SIZER_SCRIPT_URL = "assets/sizer.js"
# A GPU sheet's page, by card id (the worked-examples registry uses the same place).
GPU_SHEET = "gpus/{card_id}.md"

_build: dict[str, Any] = {}


class DownloadFile(File):
    """A file published byte for byte: `README.ko.md` is offered as a download, not a page."""

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False

    def is_media_file(self) -> bool:
        return True


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
    search_lang = config.plugins["material/search"].config["lang"]
    if search_lang != [SEARCH_LANGS[lang]]:
        raise PluginError(
            f"search language {search_lang} for a {lang!r} build: "
            f"set ITERAGPU_SEARCH_LANG={SEARCH_LANGS[lang]} (see noxfile.py)"
        )
    return config


def _place_notebook(built: Path, target: Path) -> None:
    # The notebook is generated from src/iteragpu/lab/iteragpu_lab.py (git-ignored in docs/);
    # it is only rewritten when it changed, so a file watcher is not woken for nothing.
    if not target.exists() or target.read_bytes() != built.read_bytes():
        shutil.copyfile(built, target)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name, path in sorted(_build["downloads"].items()):
        files.append(
            DownloadFile.generated(config, f"{DOWNLOADS_URL_DIR}/{name}", abs_src_path=str(path))
        )
    files.append(DownloadFile.generated(config, SIZER_SCRIPT_URL, abs_src_path=str(SIZER_SCRIPT)))
    _build["files"] = files
    return files


def number_symbols(lang: str) -> dict[str, str]:
    """The symbols `iteragpu.formatting.format_number` prints for `lang`, as Babel gives them."""
    from babel.numbers import get_decimal_symbol, get_group_symbol, get_minus_sign_symbol

    symbols = {
        "decimal": get_decimal_symbol(lang),
        "group": get_group_symbol(lang),
        "minus": get_minus_sign_symbol(lang),
    }
    # The sizer groups digits by three and puts the minus sign first, as format_number's
    # "#,##0.00" pattern does: refuse a Babel whose output would disagree.
    sample = format_number(Fraction(-123_456_789, 100), 2, lang)
    minus, group, decimal = symbols["minus"], symbols["group"], symbols["decimal"]
    expected = f"{minus}1{group}234{group}567{decimal}89"
    if sample != expected:
        raise PluginError(f"sizer: Babel formats {sample!r} for {lang!r}, expected {expected!r}")
    return symbols


def sizer_data() -> dict[str, Any]:
    """What the sizer page embeds: defaults, tasks, catalog and number symbols per language."""
    from iteragpu.sizer_vectors import DEFAULT_QUERY, TASKS

    # The catalog the CLI reads (iteragpu.catalog.load_catalog), byte for byte the same file.
    catalog = resources.files("iteragpu").joinpath("data/gpu_catalog.json").read_text("utf-8")
    return {
        "defaults": DEFAULT_QUERY,
        "tasks": list(TASKS),
        "symbols": {lang: number_symbols(lang) for lang in LANGS},
        "catalog": json.loads(catalog),
    }


def _script_json(data: Any) -> str:
    """JSON that is safe inside <script type="application/json">: no `<`, `>` or `&`."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sizer_page_data(page: Page) -> str:
    data = sizer_data()
    files: Files = _build["files"]
    sheets = {}
    for card in data["catalog"]["cards"]:
        sheet = files.get_file_from_path(GPU_SHEET.format(card_id=card["id"]))
        if sheet is not None:
            sheets[card["id"]] = sheet.url_relative_to(page.file)
    return _script_json({**data, "lang": _build["lang"], "sheets": sheets})


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    lang = _build["lang"]
    return markdown.replace("[[archive_sha256]]", _build["archive_sha256"]).replace(
        "[[archive_size_bytes]]", format_number(_build["archive_size_bytes"], 0, lang)
    )


_NOTEBOOK_HEADING = re.compile(
    r'<h(?P<level>[1-6]) id="[^"]*">(?P<text>.*?)<a class="anchor-link" href="#[^"]*">'
)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Give the notebook's headings the ids its table of contents links to.

    mkdocs-jupyter slugifies headings to ASCII, so a Korean heading gets an empty id while the
    table of contents links to `#_1`, `#_2`...: the headings take the TOC's anchors, in order.
    """
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    anchors = [item.id for item in _flatten(page.toc)]
    headings = list(_NOTEBOOK_HEADING.finditer(output))
    if len(headings) != len(anchors):
        raise PluginError(
            f"{page.file.src_uri}: {len(headings)} headings but {len(anchors)} TOC entries"
        )
    replacements = iter(anchors)
    return _NOTEBOOK_HEADING.sub(
        lambda m: (
            f'<h{m["level"]} id="{(anchor := next(replacements))}">{m["text"]}'
            f'<a class="anchor-link" href="#{anchor}">'
        ),
        output,
    )


def _flatten(items: Any) -> Iterator[Any]:
    for item in items:
        yield item
        yield from _flatten(item.children)


def on_page_context(
    context: dict[str, Any], page: Page, config: MkDocsConfig, nav: Any
) -> dict[str, Any]:
    # Links are relative to the site root of this language (`..` reaches the other one),
    # so the switcher lands on the same page wherever the site is hosted.
    for alternate in config.extra["alternate"]:
        alternate["link"] = f"../{alternate['lang']}/{page.url}"
    if page.meta.get("sizer"):
        context["sizer_data"] = _sizer_page_data(page)
    return context


if __name__ == "__main__":
    if sys.argv[1:] != ["--sizer-data"]:
        sys.exit("usage: python docs/hooks.py --sizer-data")
    json.dump(sizer_data(), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
