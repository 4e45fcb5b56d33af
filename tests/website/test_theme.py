"""The theme and chrome of the built site, in every language: the words the theme shows, the 404
page, titles and descriptions, the switcher, the sitemap links Material follows, the lab README
page, the code font, and what a reader of each language meets (the detectors of
tests/foreign_text.py, shared with the CLI's and the lab's tests)."""

from __future__ import annotations

import json
import re
import unicodedata
from html import unescape
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from fontTools.ttLib import TTFont
from foreign_text import english_runs, foreign_numbers
from markdown.extensions.toc import TocExtension

from iteragpu.cli.table import display_width
from iteragpu.docs_tools.code_font import ASCII, FONT_DIR, MANIFEST_NAME, code_characters
from iteragpu.i18n.languages import CODES, SOURCE

from .conftest import LANGS, ROOT, site_pages
from .htmlindex import parse, reader_text, resolve

pytestmark = pytest.mark.site

MATERIAL = Path(str(resources.files("material"))) / "templates"
OVERRIDES = ROOT / "docs" / "overrides"
FONT = ROOT / FONT_DIR / "iteragpu-code.woff2"
# What pages write as it is in every language, masked before the detectors read a text: proper
# names, and the version of a product (`PyTorch 2.14`, `driver 610.62`), which is no figure.
_AS_IT_IS = re.compile(
    r"Hugging Face Transformers|Run All"
    r"|\b(?:Python|PyTorch|torch|CUDA|ROCm|driver|Transformers|nvidia-smi|versi|version)"
    r"\s+v?\d+(?:\.\d+)+"
)


def _foreign(text: str, lang: str) -> list[str]:
    """English sentences and numbers in another language's format in `text`."""
    text = _AS_IT_IS.sub(" ", text)
    return [f"English: {run!r}" for run in english_runs(text)] + [
        f"number: {number!r}" for number in foreign_numbers(text, lang)
    ]


def _config(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docs" / lang / "mkdocs.yml").read_text("utf-8"))
    return data


def _chrome(lang: str) -> dict[str, Any]:
    chrome: dict[str, Any] = _config(lang)["extra"]["chrome"]
    return chrome


def _material_words(lang: str) -> dict[str, str]:
    """Material's translations for `lang` (its partials/languages/<lang>.html)."""
    text = (MATERIAL / "partials" / "languages" / f"{lang}.html").read_text("utf-8")
    return dict(re.findall(r'^\s*"([\w.]+)": "([^"]*)",?$', text, re.M))


def _english_chrome(lang: str) -> set[str]:
    """The theme's English words a page of `lang` must not show: Material's English strings
    that are not also its word in `lang`, the footer's credit, Markdown's permalink title."""
    english = _material_words("en")
    own = _material_words(lang)
    words = {text for key, text in english.items() if text != own.get(key) and len(text) > 3}
    return words | {"Made with", TocExtension().getConfig("permalink_title")}


def _path(site: Path, lang: str, page: str) -> Path:
    """The file of a page named as `site_pages` names it."""
    return site / lang / (page if page.endswith(".html") else f"{page}index.html")


def _html(site: Path, lang: str, page: str) -> str:
    return _path(site, lang, page).read_text("utf-8")


def _title(html: str) -> str:
    match = re.search(r"<title>(.*?)</title>", html, re.S)
    assert match
    return unescape(match[1]).strip()


def _description(html: str) -> str | None:
    match = re.search(r'<meta name="description" content="([^"]*)">', html)
    return unescape(match[1]) if match else None


# ---------------------------------------------------------------------------------------------
# The chrome's words
# ---------------------------------------------------------------------------------------------


def test_every_language_has_the_chrome_words_of_the_source() -> None:
    source = _chrome(SOURCE)
    for lang in CODES:
        chrome = _chrome(lang)
        assert set(chrome) == set(source), lang
        assert set(chrome["material"]) == set(source["material"]), lang
        assert set(chrome["nav"]) == set(source["nav"]), lang
        assert all(isinstance(v, str) and v.strip() for v in chrome["material"].values()), lang
        assert _config(lang).get("site_description"), lang


def test_no_two_languages_share_a_chrome_word() -> None:
    """A word copied from another language (or left in English everywhere) is untranslated."""
    for key, value in _chrome(SOURCE).items():
        words = value if isinstance(value, dict) else {key: value}
        for subkey in words:
            texts = {}
            for lang in CODES:
                chrome = _chrome(lang)
                text = chrome[key][subkey] if isinstance(value, dict) else chrome[key]
                texts[lang] = text
            assert len(set(texts.values())) == len(CODES), (key, subkey, texts)


def _nav_keys() -> list[str]:
    """The section keys of the shared navigation (mkdocs.yml), in order."""
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    section = nav[nav.index("\nnav:\n") : nav.index("\nnot_in_nav:")]
    return re.findall(r"^  - ([a-z_]+):$", section, re.MULTILINE)


def test_the_shared_navigation_is_grouped_into_sections() -> None:
    assert _nav_keys() == ["guides", "tools", "gpus", "lab"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_navigations_sections_are_titled_in_the_language(site: Path, lang: str) -> None:
    words = _chrome(lang)["nav"]
    html = _html(site, lang, "measurement/")
    # Material writes each section's title as the label of its nested navigation.
    labels = re.findall(r'<label class="md-nav__title" for="__nav_\d+">(.*?)</label>', html, re.S)
    titles = [unescape(re.sub(r"<[^>]+>", " ", label)).strip() for label in labels]
    for key in _nav_keys():
        assert words[key] in titles, (key, titles)
        assert key not in titles


def _cards_toggle(html: str, word: str) -> str:
    """The checkbox of the nested section that holds the GPU sheets, found by its label."""
    label = re.search(
        rf'<label class="md-nav__link" for="(__nav_[0-9_]+)"[^>]*>'
        rf"\s*<span[^>]*>\s*{re.escape(word)}",
        html,
    )
    assert label, word
    toggle = re.search(rf'<input [^>]*id="{label.group(1)}"[^>]*>', html)
    assert toggle
    return toggle.group(0)


@pytest.mark.parametrize("lang", LANGS)
def test_the_gpu_sheets_are_one_collapsed_entry_except_on_a_sheet(site: Path, lang: str) -> None:
    word = _chrome(lang)["nav"]["gpu_cards"]
    # Elsewhere the thirteen sheets stay folded under one entry, beside the GPU index page...
    assert "checked" not in _cards_toggle(_html(site, lang, "measurement/"), word)
    # ...and on a sheet the section is open, so that the reader sees where they are.
    assert "checked" in _cards_toggle(_html(site, lang, "gpus/t4/"), word)


@pytest.mark.parametrize("lang", LANGS)
def test_the_theme_shows_the_languages_chrome_words(site: Path, lang: str) -> None:
    chrome = _chrome(lang)
    html = _html(site, lang, "measurement/")
    labels = reader_text(site / lang / "measurement" / "index.html").labels
    for key in ("dark_palette", "light_palette", "permalink"):
        assert chrome[key] in labels, key
    for key in ("header", "footer"):
        assert f'aria-label="{chrome["material"][key]}"' in html, key
    translations = _search_ui_words(html)
    assert translations["clipboard.copy"] == chrome["material"]["clipboard.copy"]
    assert "Made with" not in html and "mkdocs-material/" not in html.split("</head>")[1]


def _search_ui_words(html: str) -> dict[str, str]:
    """The words Material's scripts show (search results, copy button), from its __config."""
    match = re.search(r'<script id="__config" type="application/json">(.*?)</script>', html, re.S)
    assert match
    words: dict[str, str] = json.loads(match[1])["translations"]
    return words


@pytest.mark.parametrize("lang", LANGS)
def test_a_reader_meets_no_english_and_no_foreign_number(site: Path, lang: str) -> None:
    """Every page of the language, the 404 page included: visible text outside code, the
    tooltips, accessible names and descriptions, and the words of the search UI."""
    english = _english_chrome(lang)
    problems = []
    pages = site_pages(site, lang)
    assert "404.html" in pages and "lab/readme/" in pages
    for page in pages:
        seen = reader_text(_path(site, lang, page))
        texts = [seen.prose, *seen.labels, *_search_ui_words(_html(site, lang, page)).values()]
        for text in texts:
            problems += [f"{page}: {problem}" for problem in _foreign(text, lang)]
            blocks = {" ".join(block.split()) for block in text.split("\n\n")}
            problems += [f"{page}: theme English: {w!r}" for w in english & blocks]
    assert problems == []


_OUTPUT = re.compile(r'<span class="go">(.*?)</span>', re.S)
# A line of JSON output (`"kv_cache_gb": "4.294967296"`): machine-readable, the same everywhere.
_JSON_LINE = re.compile(r'^\s*"\w+": ')
# An option and its value in a command the output gives to paste (`vllm serve ...
# --gpu-memory-utilization 1.0`): the runtime's syntax, the same in every language.
_OPTION_VALUE = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:[ =](?!-)\S+)?")


@pytest.mark.parametrize("lang", LANGS)
def test_the_output_of_code_on_a_page_is_in_its_language(site: Path, lang: str) -> None:
    """What the commands and doctests of a page print (the Indonesian guides showed
    `'13.04'` under prose that says 13,04)."""
    problems = []
    for page in site_pages(site, lang):
        for output in _OUTPUT.findall(_html(site, lang, page)):
            for line in unescape(re.sub(r"<[^>]+>", "", output)).splitlines():
                if _JSON_LINE.match(line):
                    continue
                # Quotes off: the detectors leave quoted text alone, and a repr ('13.04') is
                # what a doctest prints.
                shown = _OPTION_VALUE.sub(" ", line.replace("'", " ").replace('"', " "))
                problems += [f"{page}: {problem} in {line!r}" for problem in _foreign(shown, lang)]
    assert problems == []


# ---------------------------------------------------------------------------------------------
# Titles, descriptions, the 404 page
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_404_page_is_the_languages_and_has_its_own_title(site: Path, lang: str) -> None:
    chrome = _chrome(lang)
    html = _html(site, lang, "404.html")
    assert parse(site / lang / "404.html").lang == lang
    assert _title(html).startswith(chrome["not_found_title"])
    assert _title(html) != _title(_html(site, lang, ""))
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S)
    assert heading and heading[1].strip() == chrome["not_found_title"]
    assert chrome["not_found_text"] in html
    home = re.search(r'<a href="([^"]+)">' + re.escape(chrome["not_found_home"]), html)
    assert home and home[1].endswith(f"/{lang}/")  # absolute: the page is served at any depth


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_has_its_own_title_and_description(site: Path, lang: str) -> None:
    titles: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    for page in site_pages(site, lang):
        html = _html(site, lang, page)
        description = _description(html)
        assert description, f"{page}: no meta description"
        assert description not in descriptions, (page, descriptions.get(description))
        assert _title(html) not in titles, (page, titles.get(_title(html)))
        descriptions[description] = titles[_title(html)] = page


# ---------------------------------------------------------------------------------------------
# The switcher and the links Material follows
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_switchers_links_say_their_language(site: Path, lang: str) -> None:
    for page in site_pages(site, lang):
        links = re.findall(
            r'<a href="[^"]+" hreflang="([^"]+)" lang="([^"]+)"', _html(site, lang, page)
        )
        assert [a for a, _ in links] == list(CODES), page
        assert all(a == b for a, b in links), page


@pytest.mark.parametrize("lang", LANGS)
def test_material_finds_a_sitemap_beside_every_alternate_link(site: Path, lang: str) -> None:
    """Material fetches `sitemap.xml` beside every <link rel="alternate">: each must be a
    language's home, where a sitemap is (a page's twin made it fetch two 404s a page)."""
    for page in site_pages(site, lang):
        if page.endswith(".html"):
            continue  # the 404 page's links are absolute, checked by its own test
        path = _path(site, lang, page)
        hrefs = re.findall(
            r'<link rel="alternate" href="([^"]+)" hreflang="[^"]+">', path.read_text("utf-8")
        )
        assert len(hrefs) == len(CODES), page
        for href in hrefs:
            target = resolve(site, path, href)
            assert target is not None and target[0].parent.parent == site.resolve(), (page, href)
            assert (target[0].parent / "sitemap.xml").is_file(), (page, href)


# ---------------------------------------------------------------------------------------------
# The lab README's page
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_lab_readme_has_a_page_that_links_its_markdown(site: Path, lang: str) -> None:
    readme = (ROOT / "src" / "iteragpu" / "lab" / f"README.{lang}.md").read_text("utf-8")
    page = site / lang / "lab" / "readme" / "index.html"
    html = page.read_text("utf-8")
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S)
    assert heading and unescape(re.sub(r"<[^>]+>", "", heading[1])).rstrip("¶").strip() == (
        readme.splitlines()[0].lstrip("# ").strip()
    )
    links = [resolve(site, page, link) for link in parse(page).links]
    assert (site / lang / "downloads" / f"README.{lang}.md").resolve() in {t[0] for t in links if t}


@pytest.mark.parametrize("lang", LANGS)
def test_the_lab_page_links_the_readme_page(site: Path, lang: str) -> None:
    page = site / lang / "lab" / "index.html"
    links = [resolve(site, page, link) for link in parse(page).links]
    assert (site / lang / "lab" / "readme" / "index.html").resolve() in {t[0] for t in links if t}


# ---------------------------------------------------------------------------------------------
# Overrides of Material's templates
# ---------------------------------------------------------------------------------------------


def _without_comments(text: str) -> str:
    return re.sub(r"\{#-?.*?-?#\}\n?", "", text, flags=re.S)


def test_the_search_override_is_materials_with_a_name() -> None:
    """An upgrade of Material that changes its search partial shows here."""
    ours = _without_comments((OVERRIDES / "partials" / "search.html").read_text("utf-8"))
    theirs = _without_comments((MATERIAL / "partials" / "search.html").read_text("utf-8"))
    named = ' role="dialog" aria-label="{{ lang.t(\'search\') }}">'
    assert named in ours
    assert ours.replace(named, ' role="dialog">') == theirs


def test_the_language_override_is_materials_with_the_sites_words_first() -> None:
    ours = _without_comments((OVERRIDES / "partials" / "language.html").read_text("utf-8"))
    theirs = _without_comments((MATERIAL / "partials" / "language.html").read_text("utf-8"))
    first = "(config.extra.chrome.material or {})[key] or "
    assert first in ours
    assert ours.replace(first, "") == theirs


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_has_a_named_search_dialog_and_a_main(site: Path, lang: str) -> None:
    for page in site_pages(site, lang):
        html = _html(site, lang, page)
        assert re.search(r'class="md-search"[^>]*role="dialog" aria-label="[^"]+"', html), page
        assert "<main" in html, page
    assert "<main>" in (site / "index.html").read_text("utf-8")


# ---------------------------------------------------------------------------------------------
# The code font
# ---------------------------------------------------------------------------------------------


def _font_characters() -> set[str]:
    return {chr(code) for code in TTFont(FONT).getBestCmap()}


def test_the_code_font_holds_exactly_the_characters_of_the_sites_code(site: Path) -> None:
    """Stale when a page's code gains a character, or loses the last use of one: run
    `python -m iteragpu.docs_tools.code_font` (its docstring says how)."""
    manifest = json.loads((ROOT / FONT_DIR / MANIFEST_NAME).read_text("utf-8"))
    used = code_characters(sorted(site.rglob("*.html")))
    font = _font_characters()
    lacking = sorted(used - font - set(manifest["missing"]))
    unused = sorted(font - used - ASCII)
    assert lacking == [] and unused == [], (
        f"the code font is stale (lacks {''.join(lacking)!r}, holds unused {''.join(unused)!r}): "
        "regenerate it, see `python -m iteragpu.docs_tools.code_font --help`"
    )
    assert any(unicodedata.east_asian_width(char) == "W" for char in font)


def test_every_character_of_the_code_font_is_as_wide_as_the_cli_counts_it() -> None:
    font = TTFont(FONT)
    advances = font["hmtx"].metrics
    cmap = font.getBestCmap()
    cell = advances[cmap[ord("0")]][0]
    wrong = [
        char
        for code, glyph in cmap.items()
        if advances[glyph][0] != display_width(char := chr(code)) * cell
    ]
    assert wrong == []


def test_the_code_font_is_renamed_and_licensed() -> None:
    names = TTFont(FONT)["name"]
    licence = (ROOT / FONT_DIR / "LICENSE.txt").read_text("utf-8")
    assert names.getDebugName(1) == "IteraGPU Code"
    assert "D2Coding" not in (names.getDebugName(4) or "")  # OFL: a modified font is renamed
    assert names.getDebugName(0) in licence
    assert "SIL OPEN FONT LICENSE" in licence and "Version 1.1" in licence


@pytest.mark.parametrize("lang", LANGS)
def test_every_language_serves_the_code_font_and_its_licence(site: Path, lang: str) -> None:
    fonts = site / lang / "assets" / "fonts"
    assert (fonts / FONT.name).read_bytes() == FONT.read_bytes()
    assert (fonts / "LICENSE.txt").is_file()
    css = (site / lang / "assets" / "stylesheets" / "iteragpu.css").read_text("utf-8")
    assert f'url("../fonts/{FONT.name}")' in css and '--md-code-font: "IteraGPU Code"' in css
    assert 'href="../assets/stylesheets/iteragpu.css"' in _html(site, lang, "measurement/")
