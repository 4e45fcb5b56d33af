"""Every page of a language loaded once per viewport, and measured there for every test that
looks at every page.

Five tests used to load each page themselves (axe's rules in both palettes, the phone widths,
the console tables, the scrolling regions, the failed requests): the same page loaded up to
five times per viewport was most of the browser suite's time. `crawl(...)` loads each page once
in a phone (narrowest width, touch, no hover) or on a desktop, runs every probe on it in a fixed
order, and keeps the readings for the worker's other tests; the tests assert on them as before.
The tests that read one crawl carry its `xdist_group`, so that `--dist loadgroup` (the `site`
session) sends them to one worker and the pages are loaded once per run.

Order on each page, in a phone: the scrolling regions and the widths (360, 390 with its
screenshot, 414, then back to 360), then axe; on a desktop: the console tables, then axe. axe
runs every rule in the palette the page opens in, then the colour rules after the header's
toggle switched it (Material keeps the choice from page to page, so the pages alternate); last,
the page's requests are let finish, and every response of 400 or more is kept.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import SCREENSHOTS, loaded, site_pages

AXE_DIR = Path(__file__).parent / "vendor" / "axe-core"
AXE = (AXE_DIR / "axe.min.js").read_text("utf-8")
CONSOLE_TABLES = (Path(__file__).parent / "console_tables.js").read_text("utf-8")
PALETTES = {"light": "default", "dark": "slate"}
PHONE_WIDTHS = (360, 390, 414)
SCREENSHOT_WIDTH = 390
VIEWPORTS = {
    # A phone at the narrowest width the layout tests measure: touch, no hover (Material treats
    # those differently).
    "phone": {
        "viewport": {"width": PHONE_WIDTHS[0], "height": 800},
        "is_mobile": True,
        "has_touch": True,
    },
    "desktop": {"viewport": {"width": 1280, "height": 900}},
}
# What scrolls sideways: Material's code blocks and the wrappers it puts around tables.
SCROLLERS = ".md-typeset pre > code, .md-typeset__scrollwrap"
# The rules whose verdict depends on the palette: the colours of text and of links in text.
# Every other rule reads the document's structure, names and layout, which the palette does
# not change (Material's palettes set CSS custom properties on the same document).
COLOUR_RULES = ("color-contrast", "link-in-text-block")


@dataclass
class PageReadings:
    """What the probes read on one page."""

    name: str
    axe: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    widths: list[tuple[int, int, int, int]] = field(default_factory=list)  # width, scroll, ...
    scrollers: list[tuple[str, str | None]] = field(default_factory=list)
    console: dict[str, Any] | None = None
    code_font: tuple[str, bool, list[str]] | None = None
    failed: list[str] = field(default_factory=list)  # responses of 400 or more
    resources: int = 0  # the page's resource requests (performance entries)


@dataclass
class Crawl:
    lang: str
    viewport: str
    pages: list[PageReadings]
    hover: bool


_CRAWLS: dict[tuple[str, str], Crawl] = {}


def group(lang: str, viewport: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that read the crawl of `lang` in `viewport`."""
    return pytest.mark.xdist_group(f"crawl-{lang}-{viewport}")


def params(lang_codes: tuple[str, ...], viewport: str) -> list[Any]:
    """`lang` parameters that carry their crawl's xdist group."""
    return [pytest.param(lang, marks=group(lang, viewport), id=lang) for lang in lang_codes]


def violations(page: Any, rules: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now (all rules, or `rules`)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(content=AXE)
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules is not None:
        options["runOnly"] = list(rules)
    found: list[dict[str, Any]] = page.evaluate(
        """async (options) => {
            const result = await axe.run(document, options);
            return result.violations.map(v => ({
                id: v.id, impact: v.impact,
                nodes: v.nodes.map(n => `${n.target.join(" ")}: ${n.failureSummary}`)
            }));
        }""",
        options,
    )
    return found


def other_palette(page: Any) -> str:
    """Switch the palette as a reader does, with the header's toggle; the palette now shown."""
    page.locator("form[data-md-component=palette] label:visible").click()
    scheme: str = page.locator("body").get_attribute("data-md-color-scheme")
    return scheme


def _widths(page: Any, readings: PageReadings, lang: str) -> None:
    for width in PHONE_WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        scroll, client, inner = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth,"
            " innerWidth]"
        )
        readings.widths.append((width, scroll, client, inner))
        if width == SCREENSHOT_WIDTH:
            slug = re.sub(r"\W+", "-", readings.name.removesuffix(".html")).strip("-") or "home"
            page.screenshot(path=str(SCREENSHOTS / f"{lang}-{slug}-{width}.png"))
    page.set_viewport_size(VIEWPORTS["phone"]["viewport"])


def _scrollers_settled(page: Any) -> None:
    """Wait until every region that scrolls sideways holds its tabindex. On a device that does
    not hover, Material removes a code block's tabindex when its resize observer fires (after a
    resize, or late after the load) and the site's script puts it back on the next animation
    frame: axe must not read the page in between (a phone crawl once read a code block at
    360 px without it). A region that never gets one is left for axe to report."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """(scrollers) => [...document.querySelectorAll(scrollers)]
                .every(e => e.scrollWidth <= e.clientWidth + 1 || e.hasAttribute("tabindex"))""",
            arg=SCROLLERS,
            timeout=2000,
        )


def _console(page: Any, readings: PageReadings) -> None:
    if page.locator(".md-typeset pre > code").count():
        family = page.locator(".md-typeset pre > code").first.evaluate(
            "c => getComputedStyle(c).fontFamily"
        )
        checked = page.evaluate("document.fonts.check('1em \"IteraGPU Code\"')")
        statuses = page.evaluate(
            "[...document.fonts].filter(f => f.family.includes('IteraGPU Code')).map(f => f.status)"
        )
        readings.code_font = (family, checked, statuses)
    readings.console = page.evaluate(CONSOLE_TABLES)


def crawl(browser: Any, base_url: str, site: Path, lang: str, viewport: str) -> Crawl:
    """The readings of every page of `lang` in `viewport`, crawled once per worker."""
    key = (lang, viewport)
    if key in _CRAWLS:
        return _CRAWLS[key]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(color_scheme="light", **VIEWPORTS[viewport])
    page = context.new_page()
    current: list[PageReadings] = []
    page.on(
        "response",
        lambda r: current[-1].failed.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    pages = []
    for name in site_pages(site, lang):
        readings = PageReadings(name)
        current.append(readings)
        loaded(page, f"{base_url}/{lang}/{name}")
        if viewport == "phone":
            _scrollers_settled(page)
            readings.scrollers = page.evaluate(
                """(scrollers) => [...document.querySelectorAll(scrollers)]
                    .filter(e => e.scrollWidth > e.clientWidth + 1)
                    .map(e => [e.tagName, e.getAttribute("tabindex")])""",
                SCROLLERS,
            )
            _widths(page, readings, lang)
        else:
            _console(page, readings)
        scheme = page.locator("body").get_attribute("data-md-color-scheme")
        _scrollers_settled(page)
        readings.axe.append((scheme, violations(page)))
        readings.axe.append((other_palette(page), violations(page, COLOUR_RULES)))
        # Material fetches some files after the load event (each alternate link's sitemap
        # used to be one): let the page's requests finish before the next page.
        page.wait_for_load_state("networkidle")
        readings.resources = page.evaluate("performance.getEntriesByType('resource').length")
        pages.append(readings)
    hover = bool(page.evaluate("matchMedia('(hover)').matches"))
    context.close()
    _CRAWLS[key] = Crawl(lang, viewport, pages, hover)
    return _CRAWLS[key]
