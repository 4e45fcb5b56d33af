"""A throwaway third language, added as the README says, in a copy of the tree: one entry in the
list of languages, plus its pages, catalogue entries and lab files; then every place that should
follow the list does (site, switcher, root page, downloads, search, figure checker, CLI).

Malay (`ms`) stands in for the new language: Babel formats its numbers as Korean's, so copies of
the Korean pages, catalogue entries and lab README serve as its "translations" and keep every
figure true. Its search language is lunr's Korean pack, for those Korean copies; Material's own
default for `ms` is `en`, so the index shows whether the list was followed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from iteragpu.docs_tools.lab_archive import ARCHIVE_NAME, ARCHIVE_STEM, notebook_name
from iteragpu.i18n.languages import CODES, SOURCE, language

from .conftest import ROOT
from .htmlindex import parse, resolve

pytestmark = pytest.mark.site

NEW = "ms"
NEW_ENTRY = f'Language("{NEW}", "Bahasa Melayu", "{SOURCE}", {language(SOURCE).number_words!r})'
# What building and checking the site reads; nothing else of the tree is copied.
TREE = ("src", "docs", "snippets", "mkdocs.yml", "pyproject.toml", "LICENSE")
_IGNORED = shutil.ignore_patterns("__pycache__", "site", "*.pyc")


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in the copy, importing the copy's package rather than this tree's."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=300
    )


def _add_to_the_list(tree: Path) -> None:
    path = tree / "src" / "iteragpu" / "i18n" / "languages.py"
    text = path.read_text("utf-8")
    # The last entry of the LANGUAGES tuple, then its closing parenthesis.
    pattern = re.compile(r"(\nLANGUAGES\b[^=]*=\s*\((?:\n[ \t]+[^\n]*)+?)(\n\))")
    text, count = pattern.subn(lambda m: f"{m[1]}\n    {NEW_ENTRY},{m[2]}", text, count=1)
    assert count == 1, "the LANGUAGES tuple was not found in languages.py"
    path.write_text(text, "utf-8")


def _copy_catalogue_entries(tree: Path) -> None:
    """Every dict keyed by exactly the languages (messages, example titles...) gets a `ms` entry,
    a copy of the source language's: the catalogue a translator would write."""
    for path in (tree / "src" / "iteragpu").rglob("*.py"):
        if "lab" in path.relative_to(tree / "src" / "iteragpu").parts:
            continue  # the standalone lab script has no catalogue of the list's languages
        module = ast.parse(path.read_text("utf-8"))
        changed = False
        for node in ast.walk(module):
            if isinstance(node, ast.Dict):
                keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
                if sorted(map(str, keys)) == sorted(CODES):
                    node.keys.append(ast.Constant(NEW))
                    node.values.append(node.values[keys.index(SOURCE)])
                    changed = True
        if changed:
            path.write_text(ast.unparse(module) + "\n", "utf-8")
    # The CLI's gettext catalogue: the source language's, as a translator would start it.
    locale = tree / "src" / "iteragpu" / "i18n" / "locale"
    shutil.copytree(locale / SOURCE, locale / NEW)


def _add_lab_files(tree: Path) -> None:
    lab = tree / "src" / "iteragpu" / "lab"
    for name in ("README", "sizing_sheet"):
        shutil.copyfile(lab / f"{name}.{SOURCE}.md", lab / f"{name}.{NEW}.md")
    # The notebook source: each cell of the source language again, tagged for the new one.
    source = lab / "iteragpu_lab.py"
    cells = re.split(r"(?m)^(?=# %%)", source.read_text("utf-8"))
    tag = f'tags=["lang-{SOURCE}"]'
    copies = [c.replace(tag, f'tags=["lang-{NEW}"]', 1) for c in cells if tag in c.split("\n")[0]]
    assert copies, "no cell of the notebook source is tagged for the source language"
    source.write_text("".join(cells) + "".join(copies), "utf-8")
    # The results viewer's examples (forward passes, and each rank of the training example), as
    # `python tests/results_support.py --write` writes them: every file of the source language.
    web = tree / "src" / "iteragpu" / "web"
    examples = sorted(web.glob(f"results-example*.{SOURCE}.json"))
    assert len(examples) >= 2, examples
    for example in examples:
        name = example.name.removesuffix(f".{SOURCE}.json")
        shutil.copyfile(example, web / f"{name}.{NEW}.json")


def _add_pages(tree: Path) -> None:
    shutil.copytree(tree / "docs" / SOURCE, tree / "docs" / NEW)
    config = tree / "docs" / NEW / "mkdocs.yml"
    config.write_text(config.read_text("utf-8").replace(f"site/{SOURCE}", f"site/{NEW}"), "utf-8")
    # A translator points the page's downloads at the language's own files.
    for page in (tree / "docs" / NEW / "docs").rglob("*.md"):
        text = page.read_text("utf-8")
        page.write_text(re.sub(rf"(downloads/[\w-]+)\.{SOURCE}\.", rf"\1.{NEW}.", text), "utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("third-language")
    for name in TREE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tree / name, ignore=_IGNORED)
        else:
            shutil.copyfile(ROOT / name, tree / name)
    _add_to_the_list(tree)
    _copy_catalogue_entries(tree)
    _add_lab_files(tree)
    _add_pages(tree)
    symbols = _run(tree, "-m", "iteragpu.docs_tools.number_symbols", "--write")
    assert symbols.returncode == 0, symbols.stderr
    return tree


@pytest.fixture(scope="module")
def built(tree: Path) -> Path:
    build = _run(tree, "-m", "iteragpu.docs_tools.build_site", "--site-dir", "site", "--quiet")
    assert build.returncode == 0, build.stderr
    return tree / "site"


def test_the_new_language_is_new() -> None:
    # Guards the other tests: this tree's list must not hold it already.
    assert NEW not in CODES


def test_its_site_is_built_in_its_language(built: Path) -> None:
    pages = sorted((built / NEW).rglob("*.html"))
    assert built / NEW / "index.html" in pages
    for page in pages:
        assert parse(page).lang == NEW, page
    source_pages = {p.relative_to(built / SOURCE) for p in (built / SOURCE).rglob("*.html")}
    assert {p.relative_to(built / NEW) for p in pages} == source_pages


def test_every_page_of_every_language_links_its_twin(built: Path) -> None:
    for lang in (*CODES, NEW):
        for page in sorted((built / lang).rglob("index.html")):
            twin = built / NEW / page.relative_to(built / lang)
            links = re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', page.read_text("utf-8"))
            targets = [resolve(built, page, href) for href, hreflang in links if hreflang == NEW]
            assert [t[0] for t in targets if t] == [twin.resolve()], page


def test_the_root_page_lists_it(built: Path) -> None:
    assert f"{NEW}/" in parse(built / "index.html").links


def test_the_downloads_hold_its_notebook_and_readme(built: Path) -> None:
    names = {notebook_name(NEW), f"README.{NEW}.md"}
    for lang in (*CODES, NEW):
        assert names <= {p.name for p in (built / lang / "downloads").iterdir()}, lang
    with zipfile.ZipFile(built / NEW / "downloads" / ARCHIVE_NAME) as archive:
        assert {f"{ARCHIVE_STEM}/{name}" for name in names} <= set(archive.namelist())
    notebook = json.loads((built / NEW / "downloads" / notebook_name(NEW)).read_text("utf-8"))
    assert notebook["metadata"]["iteragpu_lab"]["language"] == NEW
    page = (built / NEW / "notebook" / "index.html").read_text("utf-8")
    assert f'href="../downloads/{notebook_name(NEW)}"' in page


def test_its_search_index_uses_its_search_language(built: Path) -> None:
    index = json.loads((built / NEW / "search" / "search_index.json").read_text("utf-8"))
    assert index["config"]["lang"] == [SOURCE]  # its entry's search_lang, not Material's `en`


def test_the_sizer_knows_its_number_symbols(built: Path) -> None:
    html = (built / NEW / "sizer" / "index.html").read_text("utf-8")
    data = json.loads(re.search(r'id="sizer-data">([^<]*)</script>', html)[1])  # type: ignore[index]
    assert data["lang"] == NEW and set(data["symbols"]) == {*CODES, NEW}


def test_the_figure_checker_checks_its_pages(tree: Path) -> None:
    checked = _run(tree, "-m", "iteragpu.docs_tools.figure_check", "docs")
    assert checked.returncode == 0, checked.stderr
    rows = [line.split() for line in checked.stdout.splitlines()]
    verified = {row[0]: int(row[1]) for row in rows if len(row) == 4 and row[1].isdigit()}
    new_pages = {path: count for path, count in verified.items() if f"/{NEW}/" in path}
    assert f"docs/{NEW}/docs/measurement.md" in new_pages
    assert sum(new_pages.values()) > 100


def test_the_cli_accepts_it(tree: Path) -> None:
    command = ("-m", "iteragpu", "weights", "--params", "7e9", "--bits", "16", "--lang")
    new, source = _run(tree, *command, NEW), _run(tree, *command, SOURCE)
    assert new.returncode == 0, new.stderr
    assert new.stdout == source.stdout  # the same number format and, copied, the same words


def test_a_folder_outside_the_list_is_refused(tree: Path, tmp_path: Path) -> None:
    unlisted = tree / "docs" / "zz"
    shutil.copytree(tree / "docs" / SOURCE, unlisted)
    try:
        build = _run(tree, "-m", "mkdocs", "build", "-f", "docs/zz/mkdocs.yml", "-d", str(tmp_path))
    finally:
        shutil.rmtree(unlisted)
    assert build.returncode != 0
    assert "docs/zz/mkdocs.yml is not a language's configuration" in build.stderr
    assert not any(tmp_path.iterdir())


def test_building_the_shared_base_is_refused(tree: Path, tmp_path: Path) -> None:
    base = _run(tree, "-m", "mkdocs", "build", "-f", "mkdocs.yml", "-d", str(tmp_path))
    assert base.returncode != 0
    assert not any(tmp_path.iterdir())
