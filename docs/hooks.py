"""MkDocs hooks of every language's build (`docs/<code>/mkdocs.yml`, inheriting `mkdocs.yml`).

- takes the language from the folder of the configuration file (`docs/ko/mkdocs.yml` builds
  Korean) and what depends on it from the one list of languages (`iteragpu.i18n.languages`):
  the theme's language, the search language, the language switcher (every language, each link
  landing on the current page's twin) and the language's address, `<site_url><code>/`;
  refuses to build the shared base itself;
- puts the language's words for the site's chrome (`extra.chrome` of its mkdocs.yml: palette
  toggles, permalinks, the 404 page, Material's words it says otherwise) where the theme shows
  them, and refuses a language whose file lacks one of them;
- gives each language a rendered page of its lab README (`lab/readme/`), beside the download;
- publishes the lab downloads (archive, checksum, script, notebooks, READMEs, licence) under
  `downloads/`, built once per process by `iteragpu.docs_tools.build_site.lab_downloads`, so
  that every language of a site build ships the archive its lab page describes;
- fills the `[[archive_sha256]]` and `[[archive_size_bytes]]` placeholders of the lab page;
- appends the language's lab notebook, as Markdown, to the page that has `notebook: true` in
  its front matter (`iteragpu.docs_tools.notebook_page`);
- publishes the browser sizer's ES modules (`src/iteragpu/web/sizer/*.js`) under `assets/sizer/`
  (a page loads their entry, `main.js`, as a module) and gives every page with `sizer: true` in
  its front matter the sizer's data: the catalog the CLI reads, the defaults and tasks of
  `iteragpu.docs_tools.sizer_vectors`, and Babel's number symbols per language
  (`docs/overrides/main.html` embeds it as JSON next to the script);
- publishes the results viewer (`src/iteragpu/web/results.js`, an ES module that imports
  `sizer/index.js`) as `assets/results.js` and gives the page with `results: true` its data
  (`iteragpu.docs_tools.results_page`: the lab's result schema, the CLI's report messages, the
  example result) and Babel's number symbols;
- writes the language's search file (`lunr.<search_lang>.min.js`: Korean morphemes, Indonesian
  stems, the glossary's synonyms) from the search index Material wrote
  (`iteragpu.docs_tools.site_search`).

`python docs/hooks.py --sizer-data` prints that data (the node tests of the sizer read it).
"""

from __future__ import annotations

import hashlib
import json
import sys
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from iteragpu.docs_tools.build_site import lab_downloads
from iteragpu.docs_tools.lab_archive import ARCHIVE_NAME, notebook_name
from iteragpu.docs_tools.notebook_page import notebook_markdown
from iteragpu.docs_tools.site_search import SEPARATOR, write_language_file
from iteragpu.i18n.languages import CODES, LANGUAGES, Language, language
from iteragpu.i18n.numbers import format_number

DOWNLOADS_URL_DIR = "downloads"
# The rendered lab README of the language (its Markdown is offered under downloads/ too).
LAB_README_PAGE = "lab/readme.md"
# The words every language's `extra.chrome` holds (docs/<code>/mkdocs.yml); `material` (Material's
# own words this site says otherwise) is checked against the source language's by the tests.
CHROME_KEYS = frozenset(
    {
        "dark_palette",
        "light_palette",
        "permalink",
        "not_found_title",
        "not_found_text",
        "not_found_home",
        "readme_source",
        "material",
        "nav",
    }
)
# The browser sizer: native ES modules (src/iteragpu/web/sizer/*.js), published byte for byte
# under this folder; a page loads the entry (SIZER_SCRIPT_URL) with <script type="module">.
SIZER_SCRIPT_DIR = "assets/sizer"
SIZER_SCRIPT_URL = f"{SIZER_SCRIPT_DIR}/main.js"
# The results viewer, an ES module importing ./sizer/index.js; its page loads the sizer first
# (exact arithmetic, grammar, formatting).
RESULTS_SCRIPT_URL = "assets/results.js"
# A GPU sheet's page, by card id (the worked-examples registry uses the same place).
GPU_SHEET = "gpus/{card_id}.md"

# The build under way. MkDocs loads this file once per process and builds one language at a
# time, so each build starts by replacing it (on_config).
_build: dict[str, Any] = {}
# `mkdocs serve` serves one language at the address it computed from site_url before building,
# at start-up: every build of the process must keep that address (see on_config).
_serving = False


class DownloadFile(File):
    """A file published byte for byte: `README.ko.md` is offered as a download, not a page."""

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False

    def is_media_file(self) -> bool:
        return True


def on_startup(command: str, dirty: bool) -> None:
    global _serving
    _serving = command == "serve"


# Before every plugin: the search plugin reads its language in its own on_config.
@event_priority(100)
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    lang = _language_of(config)
    config.theme["language"] = lang.code
    search = config.plugins["material/search"].config
    search["lang"] = [lang.search_lang]
    search["separator"] = SEPARATOR.pattern
    if config.site_url and not _serving:
        config.site_url = f"{config.site_url}{lang.code}/"
    chrome = _chrome_of(config)
    dark, light = config.theme["palette"]
    dark["toggle"]["name"] = chrome["dark_palette"]
    light["toggle"]["name"] = chrome["light_palette"]
    config.mdx_configs["toc"]["permalink_title"] = chrome["permalink"]
    # Every language's home page: the <link rel="alternate"> of every page, and the 404 page's
    # switcher. Material fetches `sitemap.xml` beside each of these links to map pages across
    # languages, so they must be the languages' roots (a twin page's address made it fetch
    # `<twin>/sitemap.xml`, two 404s a page). The switcher of a page links its twin instead
    # (`switcher`, on_page_context).
    config.extra["alternate"] = [
        {"name": other.name, "lang": other.code, "link": f"../{other.code}/"} for other in LANGUAGES
    ]
    downloads = lab_downloads()
    archive = downloads[ARCHIVE_NAME]
    _build.clear()
    _build.update(
        lang=lang.code,
        downloads=downloads,
        archive_sha256=hashlib.sha256(archive).hexdigest(),
        archive_size_bytes=len(archive),
    )
    return config


def _language_of(config: MkDocsConfig) -> Language:
    folder = Path(config.config_file_path or "mkdocs.yml").resolve().parent
    try:
        return language(folder.name)
    except KeyError:
        raise PluginError(
            f"{config.config_file_path} is not a language's configuration: build "
            f"docs/<code>/mkdocs.yml for a code of iteragpu.i18n.languages ({', '.join(CODES)}), "
            "which inherits the shared base mkdocs.yml, or every language with "
            "`python -m iteragpu.docs_tools.build_site`"
        ) from None


def _chrome_of(config: MkDocsConfig) -> dict[str, Any]:
    chrome = config.extra.get("chrome")
    missing = sorted(CHROME_KEYS - set(chrome or {}))
    if missing:
        raise PluginError(
            f"{config.config_file_path}: extra.chrome lacks {', '.join(missing)}: every language "
            "says the site's chrome in its own words (see the source language's mkdocs.yml)"
        )
    assert isinstance(chrome, dict)
    return chrome


def on_nav(nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    """Each section of the shared nav is a key (`guides`): its title is the language's word
    (extra.chrome.nav); a key the language lacks stops the build, naming it."""
    words = config.extra["chrome"]["nav"]

    def localise(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Section):
                if item.title not in words:
                    raise PluginError(
                        f"{config.config_file_path}: extra.chrome.nav lacks {item.title!r}, a "
                        "section of the shared nav (mkdocs.yml)"
                    )
                item.title = words[item.title]
                localise(item.children)

    localise(nav.items)
    return nav


def on_files(files: Files, config: MkDocsConfig) -> Files:
    lang = _build["lang"]
    for name, content in sorted(_build["downloads"].items()):
        files.append(DownloadFile.generated(config, f"{DOWNLOADS_URL_DIR}/{name}", content=content))
    readme = f"README.{lang}.md"
    files.append(File.generated(config, LAB_README_PAGE, content=_lab_readme_page(readme, config)))
    sizer_modules = resources.files("iteragpu").joinpath("web/sizer")
    for module in sorted(sizer_modules.iterdir(), key=lambda m: m.name):
        if module.name.endswith(".js"):
            url = f"{SIZER_SCRIPT_DIR}/{module.name}"
            files.append(DownloadFile.generated(config, url, content=module.read_bytes()))
    results_script = resources.files("iteragpu").joinpath("web/results.js").read_bytes()
    files.append(DownloadFile.generated(config, RESULTS_SCRIPT_URL, content=results_script))
    _build["files"] = files
    return files


def _lab_readme_page(readme: str, config: MkDocsConfig) -> str:
    """The language's lab README as a page, ending with a link to its Markdown file."""
    text = _build["downloads"][readme].decode("utf-8")
    source = config.extra["chrome"]["readme_source"]
    download = f"../{DOWNLOADS_URL_DIR}/{readme}"
    return f"{text.rstrip()}\n\n---\n\n{source} [{readme}]({download})\n"


def _first_paragraph(markdown: str) -> str:
    """The first paragraph of prose of a Markdown text, as one line (a page's description)."""
    for block in markdown.split("\n\n"):
        block = block.strip()
        if block and not block.startswith(("#", "|", "```", "-", "!!!", "<")):
            return " ".join(block.split())
    return ""


def number_symbols(lang: str) -> dict[str, str]:
    """The symbols `iteragpu.i18n.numbers.format_number` prints for `lang`, as Babel gives them."""
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
    """What the sizer page embeds: defaults, tasks, catalog, number symbols per language, the
    families described as data and the multimodal wrappers' and towers' recipes."""
    from iteragpu.docs_tools.sizer_vectors import DEFAULT_QUERY, TASKS
    from iteragpu.gpus.catalog import catalog_text
    from iteragpu.i18n.sheet import sheet_words
    from iteragpu.models.presets import presets
    from iteragpu.models.recipe import recipe, recipe_types
    from iteragpu.models.towers import TOWERS_DIR, tower, wrapper, wrapper_types
    from iteragpu.parallel.payload import VERSIONS as SPLIT_VERSIONS
    from iteragpu.training.page import sizer_tables

    return {
        "defaults": DEFAULT_QUERY,
        "tasks": list(TASKS),
        "symbols": {code: number_symbols(code) for code in CODES},
        # The catalog the CLI reads, as it is in the file.
        "catalog": json.loads(catalog_text()),
        # The published configs `iteragpu model NAME` reads, as their files hold them.
        "presets": [
            {"name": p.name, "hf_repo": p.hf_repo, "text": p.config_path.read_text("utf-8")}
            for p in presets()
        ],
        # Every family recipe (iteragpu.models.recipe), its base chain merged in: the page reads
        # a pasted config.json of those families from the same data as the Python reader.
        "families": {
            model_type: described.data
            for model_type in recipe_types()
            if (described := recipe(model_type)) is not None
        },
        # The multimodal wrappers' recipes and their vision towers' (iteragpu.models.towers): the
        # page counts a wrapper's tower and projector as the Python reader does.
        "towers": {
            model_type: described.data
            for model_type in sorted(path.stem for path in TOWERS_DIR.glob("*.json"))
            if (described := tower(model_type)) is not None
        },
        "wrappers": {
            model_type: described.data
            for model_type in wrapper_types()
            if (described := wrapper(model_type)) is not None
        },
        # The training mode's tables (iteragpu.training.page): module names and classes per
        # family, PEFT's targets and conversion, the byte rules' constants.
        "training": sizer_tables(),
        # The filled load sheet's words per language (iteragpu.i18n.sheet, the catalogue's),
        # and the vLLM release whose rules the split follows.
        "sheet": {
            "words": {code: sheet_words(code) for code in CODES},
            "versions": {"vllm": SPLIT_VERSIONS["vllm"]},
        },
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
    lang = _build["lang"]
    # The page speaks its own language only: the sheet's words of the others stay out.
    sheet = {**data["sheet"], "words": {lang: data["sheet"]["words"][lang]}}
    return _script_json({**data, "sheet": sheet, "lang": lang, "sheets": sheets})


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    lang = _build["lang"]
    if page.file.src_uri == LAB_README_PAGE:
        page.meta.setdefault("description", _first_paragraph(markdown))
    if page.meta.get("notebook"):
        notebook = _build["downloads"][notebook_name(lang)]
        markdown = f"{markdown.rstrip()}\n\n{notebook_markdown(notebook)}"
    return markdown.replace("[[archive_sha256]]", _build["archive_sha256"]).replace(
        "[[archive_size_bytes]]", format_number(_build["archive_size_bytes"], 0, lang)
    )


def on_page_context(
    context: dict[str, Any], page: Page, config: MkDocsConfig, nav: Any
) -> dict[str, Any]:
    # Links are relative to the site root of this language (`..` reaches the others), so the
    # switcher lands on the same page wherever the site is hosted.
    context["switcher"] = [
        {**alternate, "link": f"../{alternate['lang']}/{page.url}"}
        for alternate in config.extra["alternate"]
    ]
    if page.meta.get("sizer"):
        context["sizer_data"] = _sizer_page_data(page)
    if page.meta.get("results"):
        from iteragpu.docs_tools.results_page import results_data

        lang = _build["lang"]
        context["results_data"] = _script_json(
            {**results_data(lang), "symbols": number_symbols(lang)}
        )
    return context


def on_template_context(
    context: dict[str, Any], template_name: str, config: MkDocsConfig
) -> dict[str, Any]:
    if template_name == "404.html":
        # Served at any depth and with no twin: the switcher leads to the languages' home
        # pages, by absolute address.
        context["switcher"] = [
            {**alternate, "link": urljoin(config.site_url or "/", alternate["link"]), "home": True}
            for alternate in config.extra["alternate"]
        ]
    return context


# After every plugin: Material's search plugin writes search/search_index.json in its own
# on_post_build, and the language's search file is computed from it.
@event_priority(-100)
def on_post_build(config: MkDocsConfig) -> None:
    write_language_file(_build["lang"], Path(config.site_dir))


if __name__ == "__main__":
    if sys.argv[1:] != ["--sizer-data"]:
        sys.exit("usage: python docs/hooks.py --sizer-data")
    json.dump(sizer_data(), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
