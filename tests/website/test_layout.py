"""The site as rendered in headless Chromium: phone widths, the code font and the console tables,
the language switcher keeping the reader's place, and the requests a page makes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from iteragpu.i18n.languages import CODES

from . import crawl
from .conftest import LANGS, site_pages
from .crawl import PHONE_WIDTHS

pytestmark = pytest.mark.browser


def _phone(browser: Any, width: int) -> Any:
    """A phone: touch, no hover (Material treats those differently), the given width."""
    return browser.new_context(
        viewport={"width": width, "height": 800}, is_mobile=True, has_touch=True
    )


def _url(base_url: str, lang: str, page: str) -> str:
    return f"{base_url}/{lang}/{page}"


# ---------------------------------------------------------------------------------------------
# Phones
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", crawl.params(LANGS, "phone"))
def test_no_page_is_wider_than_a_phone(browser: Any, base_url: str, site: Path, lang: str) -> None:
    """At 360, 390 and 414 px no page scrolls sideways (the closed language menu made every
    page 6 px wider); the screenshots at 390 px go to test-output/screenshots. Each page is
    loaded once, at the narrowest width, then measured at each width as a phone turned or a
    window resized shows it (Material lays out from CSS and its resize observers):
    tests/website/crawl.py."""
    too_wide = []
    pages = crawl.crawl(browser, base_url, site, lang, "phone").pages
    for page in pages:
        assert [width for width, *_ in page.widths] == list(PHONE_WIDTHS), page.name
        for width, scroll, client, inner in page.widths:
            assert inner == width
            if scroll > client:
                too_wide.append(f"{page.name or 'home'} at {width} px: {scroll} > {client}")
    assert len(pages) == len(site_pages(site, lang))
    assert too_wide == []


@pytest.mark.parametrize("lang", LANGS)
def test_the_sizers_statuses_are_on_a_phones_screen(browser: Any, base_url: str, lang: str) -> None:
    context = _phone(browser, 360)
    page = context.new_page()
    page.goto(_url(base_url, lang, "sizer/"))
    cells = page.locator("#sizer-candidates td[data-status]")
    cells.first.wait_for()
    assert cells.count() >= 3
    for i in range(cells.count()):
        box = cells.nth(i).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360, cells.nth(i).inner_text()
        label = cells.nth(i).evaluate("td => getComputedStyle(td, '::before').content")
        assert label.strip('"'), "each cell shows its column's name"
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_identifiers_in_tables_are_not_cut(browser: Any, base_url: str, lang: str) -> None:
    """`cold_forward` and `warm_forward` in the lab page's phase table stay on one line."""
    context = _phone(browser, 360)
    page = context.new_page()
    page.goto(_url(base_url, lang, "lab/"))
    codes = page.locator(".md-typeset table code")
    names = codes.all_inner_texts()
    assert "cold_forward" in names and "warm_forward" in names
    lines = codes.evaluate_all(
        "codes => codes.map(c => [c.textContent, c.getClientRects().length])"
    )
    assert [name for name, count in lines if count != 1] == []
    context.close()


# ---------------------------------------------------------------------------------------------
# The code font and the console tables
# ---------------------------------------------------------------------------------------------


def _pages_with_console_tables(site: Path, lang: str) -> list[str]:
    rule = re.compile(r"\n-+(?:  +-+)+\n")
    pages = []
    for name in site_pages(site, lang):
        path = site / lang / (name if name.endswith(".html") else f"{name}index.html")
        text = re.sub(r"<[^>]+>", "", path.read_text("utf-8"))
        if rule.search(text):
            pages.append(name)
    return pages


@pytest.mark.parametrize("lang", crawl.params(LANGS, "desktop"))
def test_console_tables_line_up(browser: Any, base_url: str, site: Path, lang: str) -> None:
    """Measured in the browser: every cell of every CLI table on a page of the language starts
    or ends where its column does, Korean's wide Hangul included (two cells of the code font)."""
    pages = _pages_with_console_tables(site, lang)
    assert "cli/" in pages
    crawled = crawl.crawl(browser, base_url, site, lang, "desktop")
    readings = {page.name: page for page in crawled.pages}
    for name in pages:
        assert readings[name].code_font is not None, name
        family, checked, loaded = readings[name].code_font
        assert family.startswith('"IteraGPU Code"'), family
        assert checked
        assert loaded == ["loaded"], loaded
        measured = readings[name].console
        assert measured is not None
        assert measured["tables"] >= 1, name
        assert measured["problems"] == [], name


def _console_sessions(browser: Any, base_url: str, site: Path, lang: str) -> dict[str, list[str]]:
    """Every `$ iteragpu` session of the language's pages measured at a desktop's 1280 px,
    where the content column is 688 px: the GiB cells of their tables' headers that lie beyond
    the column's edge, and the sessions wider than their column (read by the two tests below
    from tests/website/crawl.py)."""
    assert crawl.VIEWPORTS["desktop"]["viewport"]["width"] == 1280
    measured: dict[str, list[str]] = {"sessions": [], "offscreen": [], "too_wide": []}
    for page in crawl.crawl(browser, base_url, site, lang, "desktop").pages:
        found = page.console
        assert found is not None, page.name
        name = page.name
        measured["sessions"] += [f"{name}: {s['command']}" for s in found["sessions"]]
        measured["offscreen"] += [f"{name}: {cell}" for cell in found["offscreen"]]
        measured["too_wide"] += [
            f"{name}: {s['command']!r} is {s['width']} px in {s['column']} px, "
            f"widest line {s['widest']!r}"
            for s in found["sessions"]
            if s["width"] > s["column"]
        ]
    return measured


@pytest.mark.parametrize("lang", crawl.params(LANGS, "desktop"))
def test_console_tables_show_their_gib_column(
    browser: Any, base_url: str, site: Path, lang: str
) -> None:
    """The GiB column of every CLI table shown on a page is on screen at a desktop width (the
    model table's was beyond the column's edge: iteragpu/cli/table.py folds a table wider than
    the column's 96 display columns)."""
    measured = _console_sessions(browser, base_url, site, lang)
    assert len(measured["sessions"]) >= 3
    assert measured["offscreen"] == [], "\n".join(measured["offscreen"])


@pytest.mark.xfail(
    strict=True,
    reason="the notes are folded to the column now, but the short list prints its sources' "
    "addresses (up to 139 columns, which no fold can break), the Indonesian short list's table is "
    "wider than the column, and the kv-cache session's command is one line of 114 columns "
    "(tests/test_snippets_console.py reads no continued command)",
)
@pytest.mark.parametrize("lang", crawl.params(LANGS, "desktop"))
def test_console_sessions_fit_their_column(
    browser: Any, base_url: str, site: Path, lang: str
) -> None:
    """At a desktop width every `$ iteragpu` session fits its column: no line runs past the
    column's edge (they were up to 1,425 px wide in a 688 px column)."""
    measured = _console_sessions(browser, base_url, site, lang)
    assert len(measured["sessions"]) >= 3
    assert measured["too_wide"] == [], "\n".join(measured["too_wide"])


# ---------------------------------------------------------------------------------------------
# The language switcher and the requests of a page
# ---------------------------------------------------------------------------------------------


def _switch_to(page: Any, lang: str) -> None:
    page.locator(".md-header__option .md-select").hover()
    page.locator(f'a.md-select__link[hreflang="{lang}"]').click()


@pytest.mark.parametrize("lang", LANGS)
def test_switching_language_keeps_the_page_and_the_anchor(
    page: Any, base_url: str, lang: str
) -> None:
    for other in CODES:
        page.goto(_url(base_url, lang, "measurement/#two-peaks"))
        _switch_to(page, other)
        page.wait_for_url(re.compile(rf"/{other}/measurement/#two-peaks$"))
        assert page.locator("html").get_attribute("lang") == other
        # An anchor reached after the page loaded (a table of contents link) too.
        page.goto(_url(base_url, lang, "measurement/"))
        page.evaluate("location.hash = '#bound-each-phase'")
        _switch_to(page, other)
        page.wait_for_url(re.compile(rf"/{other}/measurement/#bound-each-phase$"))


@pytest.mark.parametrize("lang", LANGS)
def test_switching_language_keeps_the_sizers_query(page: Any, base_url: str, lang: str) -> None:
    for other in CODES:
        page.goto(_url(base_url, lang, "sizer/#candidates"))
        field = page.locator("#sizer-params")
        field.fill("13e9")
        page.locator("#sizer-days").fill("5")
        query = page.evaluate("location.search")
        assert "params=13e9" in query and "days=5" in query
        _switch_to(page, other)
        page.wait_for_url(re.compile(rf"/{other}/sizer/\?.*#candidates$"))
        assert page.evaluate("location.search") == query
        assert page.locator("#sizer-params").input_value() == "13e9"


@pytest.mark.parametrize(
    ("lang", "viewport"),
    [
        pytest.param(lang, viewport, marks=crawl.group(lang, viewport), id=f"{lang}-{viewport}")
        for lang in LANGS
        for viewport in crawl.VIEWPORTS
    ],
)
def test_no_page_requests_a_missing_file(
    browser: Any, base_url: str, site: Path, lang: str, viewport: str
) -> None:
    """Each page used to log two 404s for `<page>/sitemap.xml` (Material fetching a sitemap
    beside each alternate link). Every response of every page of the crawl, its requests let
    finish (the 404 page itself answers 404 where a server serves it so: not counted)."""
    pages = crawl.crawl(browser, base_url, site, lang, viewport).pages
    missing = [
        f"{page.name}: {failed}"
        for page in pages
        if not page.name.endswith(".html")
        for failed in page.failed
    ]
    assert missing == []
    assert len(pages) == len(site_pages(site, lang))
    assert all(page.resources > 0 for page in pages)
