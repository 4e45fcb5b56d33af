"""Accessibility, measured in headless Chromium: axe-core on every page of every language and the
root page, in both palettes, on a phone and on a desktop, with no serious or critical violation;
and what axe cannot see: the sizer's focus ring and error descriptions, scrolling regions
reachable by keyboard.

axe-core is vendored (tests/website/vendor/axe-core/, from npm; its README says how to update
it): the tests run offline and always with the same rules.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import LANGS, loaded, site_pages

pytestmark = pytest.mark.browser

AXE_DIR = Path(__file__).parent / "vendor" / "axe-core"
AXE = (AXE_DIR / "axe.min.js").read_text("utf-8")
BLOCKING = ("serious", "critical")
PALETTES = {"light": "default", "dark": "slate"}
VIEWPORTS = {
    "phone": {"viewport": {"width": 390, "height": 800}, "is_mobile": True, "has_touch": True},
    "desktop": {"viewport": {"width": 1280, "height": 900}},
}
# What scrolls sideways: Material's code blocks and the wrappers it puts around tables.
SCROLLERS = ".md-typeset pre > code, .md-typeset__scrollwrap"
# The root page sends readers to their language at once: axe checks it with that script out.
_REDIRECT = re.compile(r"<script>.*?</script>", re.S)


def test_the_vendored_axe_core_is_the_release_its_readme_names() -> None:
    readme = (AXE_DIR / "README.md").read_text("utf-8")
    version = re.search(r"axe-core@(\d+\.\d+\.\d+)", readme)
    digest = re.search(r"sha256 ([0-9a-f]{64})", readme)
    assert version and digest
    assert AXE.startswith(f"/*! axe v{version[1]}")
    assert hashlib.sha256(AXE.encode("utf-8")).hexdigest() == digest[1]
    assert (AXE_DIR / "LICENSE").read_text("utf-8").startswith("Mozilla Public License")


# The rules whose verdict depends on the palette: the colours of text and of links in text.
# Every other rule reads the document's structure, names and layout, which the palette does
# not change (Material's palettes set CSS custom properties on the same document).
COLOUR_RULES = ("color-contrast", "link-in-text-block")


def _violations(page: Any, rules: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
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


def _other_palette(page: Any) -> str:
    """Switch the palette as a reader does, with the header's toggle; the palette now shown."""
    page.locator("form[data-md-component=palette] label:visible").click()
    scheme: str = page.locator("body").get_attribute("data-md-color-scheme")
    return scheme


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_axe_finds_no_serious_violation(
    browser: Any, base_url: str, site: Path, lang: str, viewport: str
) -> None:
    """Every page in both palettes: all of axe's rules in the palette the page opens in, then
    the colour rules after the header's toggle switched it. The toggle's choice is kept from
    page to page, so the pages alternate: each palette gets the whole rule set on half of the
    pages (the header that differs between them is on every page) and the colour rules on
    all of them. The root page, which has no toggle, gets every rule in both palettes."""
    context = browser.new_context(color_scheme="light", **VIEWPORTS[viewport])
    page = context.new_page()
    urls = [f"{base_url}/{lang}/{name}" for name in site_pages(site, lang)]
    blocking: dict[str, list[dict[str, Any]]] = {}
    checked: set[tuple[str, str]] = set()
    schemes = set(PALETTES.values())
    for url in urls:
        loaded(page, url)
        scheme = page.locator("body").get_attribute("data-md-color-scheme")
        assert scheme in schemes, url
        runs = [(scheme, _violations(page))]
        other = _other_palette(page)
        assert other == (schemes - {scheme}).pop(), url
        runs.append((other, _violations(page, COLOUR_RULES)))
        for shown, violations in runs:
            checked.add((url, shown))
            serious = [v for v in violations if v["impact"] in BLOCKING]
            if serious:
                blocking[f"{url.removeprefix(base_url)} ({shown})"] = serious
    if lang == LANGS[0]:
        root = _REDIRECT.sub("", (site / "index.html").read_text("utf-8"))
        page.route(f"{base_url}/", lambda route: route.fulfill(body=root, content_type="text/html"))
        for palette in PALETTES:
            page.emulate_media(color_scheme=palette)
            loaded(page, f"{base_url}/")
            checked.add((f"{base_url}/", palette))
            serious = [v for v in _violations(page) if v["impact"] in BLOCKING]
            if serious:
                blocking[f"/ ({palette})"] = serious
    context.close()
    assert len(checked) == 2 * len(urls) + (2 if lang == LANGS[0] else 0)
    assert blocking == {}, json.dumps(blocking, ensure_ascii=False, indent=1)[:6000]


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("lang", LANGS)
def test_every_status_colour_of_the_sizer_meets_aa(
    browser: Any, base_url: str, lang: str, palette: str
) -> None:
    """The default query shows no excluded card: ask for 70e9 parameters (130 GiB), which
    some cards' declared capacity is below and others' above, so both colours are on screen."""
    context = browser.new_context(color_scheme=palette)
    page = context.new_page()
    page.goto(f"{base_url}/{lang}/sizer/?params=70e9")
    statuses = page.locator("#sizer-candidates td[data-status]")
    statuses.first.wait_for()
    shown = set(statuses.evaluate_all("cells => cells.map(c => c.dataset.status)"))
    assert {"fit", "excluded"} <= shown, shown
    page.add_script_tag(content=AXE)
    contrast = page.evaluate(
        """async () => (await axe.run("#sizer-candidates", {runOnly: ["color-contrast"]}))
            .violations.flatMap(v => v.nodes.map(n => n.failureSummary))"""
    )
    assert contrast == []
    context.close()


# ---------------------------------------------------------------------------------------------
# What axe does not check
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("lang", LANGS)
def test_the_sizers_fields_show_a_focus_ring(
    browser: Any, base_url: str, lang: str, palette: str
) -> None:
    context = browser.new_context(color_scheme=palette)
    page = context.new_page()
    page.goto(f"{base_url}/{lang}/sizer/")
    page.locator("#sizer-params").focus()
    rings = []
    # Through the form as a keyboard user goes, field after field.
    while page.evaluate("document.activeElement.closest('#sizer-form') !== null"):
        rings.append(
            page.evaluate(
                """() => {
                    const s = getComputedStyle(document.activeElement);
                    return [document.activeElement.id, s.outlineStyle, parseFloat(s.outlineWidth)];
                }"""
            )
        )
        page.keyboard.press("Tab")
    assert len(rings) >= 9
    assert [ring for ring in rings if ring[1] == "none" or ring[2] < 1.5] == []
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_sizers_errors_describe_their_fields(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/")
    params, days = page.locator("#sizer-params"), page.locator("#sizer-days")
    params.fill("seven")
    days.fill("-1")
    for field in (params, days):
        assert field.get_attribute("aria-invalid") == "true"
        described = field.get_attribute("aria-describedby")
        assert described, field
        error = page.locator(f"#{described}")
        assert error.is_visible()
        label = page.locator(f'label[for="{field.get_attribute("id")}"]').inner_text()
        assert error.inner_text().startswith(label)
    params.fill("7e9")
    days.fill("3")
    assert params.get_attribute("aria-describedby") is None
    assert days.get_attribute("aria-describedby") is None


@pytest.mark.parametrize("lang", LANGS)
def test_every_region_that_scrolls_is_reachable_by_keyboard(
    browser: Any, base_url: str, site: Path, lang: str
) -> None:
    """On a phone, where Material leaves code blocks out: every code block and table wrapper
    that scrolls sideways takes the focus."""
    context = browser.new_context(**VIEWPORTS["phone"])
    page = context.new_page()
    page.goto(f"{base_url}/{lang}/")
    assert not page.evaluate("matchMedia('(hover)').matches")
    scrolling = 0
    for name in ("measurement/", "notebook/", "cli/", "sizing/"):
        loaded(page, f"{base_url}/{lang}/{name}")
        regions = page.evaluate(
            """(scrollers) => [...document.querySelectorAll(scrollers)]
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => [e.tagName, e.getAttribute("tabindex")])""",
            SCROLLERS,
        )
        scrolling += len(regions)
        assert [r for r in regions if r[1] != "0"] == [], name
    assert scrolling > 0
    context.close()
