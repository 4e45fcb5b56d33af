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

from . import crawl
from .conftest import LANGS, loaded
from .crawl import AXE, AXE_DIR, PALETTES, VIEWPORTS

pytestmark = pytest.mark.browser

BLOCKING = ("serious", "critical")
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


@pytest.mark.parametrize(
    ("lang", "viewport"),
    [
        pytest.param(lang, viewport, marks=crawl.group(lang, viewport), id=f"{lang}-{viewport}")
        for lang in LANGS
        for viewport in VIEWPORTS
    ],
)
def test_axe_finds_no_serious_violation(
    browser: Any, base_url: str, site: Path, lang: str, viewport: str
) -> None:
    """Every page in both palettes (tests/website/crawl.py): all of axe's rules in the palette
    the page opens in, then the colour rules after the header's toggle switched it. The
    toggle's choice is kept from page to page, so the pages alternate: each palette gets the
    whole rule set on half of the pages (the header that differs between them is on every
    page) and the colour rules on all of them. The root page, which has no toggle, gets every
    rule in both palettes."""
    pages = crawl.crawl(browser, base_url, site, lang, viewport).pages
    blocking: dict[str, list[dict[str, Any]]] = {}
    checked: set[tuple[str, str]] = set()
    schemes = set(PALETTES.values())
    for readings in pages:
        (opened, _), (other, _) = readings.axe
        assert opened in schemes, readings.name
        assert other == (schemes - {opened}).pop(), readings.name
        for shown, violations in readings.axe:
            checked.add((readings.name, shown))
            serious = [v for v in violations if v["impact"] in BLOCKING]
            if serious:
                blocking[f"/{lang}/{readings.name} ({shown})"] = serious
    if lang == LANGS[0]:
        context = browser.new_context(color_scheme="light", **VIEWPORTS[viewport])
        page = context.new_page()
        root = _REDIRECT.sub("", (site / "index.html").read_text("utf-8"))
        page.route(f"{base_url}/", lambda route: route.fulfill(body=root, content_type="text/html"))
        for palette in PALETTES:
            page.emulate_media(color_scheme=palette)
            loaded(page, f"{base_url}/")
            checked.add(("/", palette))
            serious = [v for v in crawl.violations(page) if v["impact"] in BLOCKING]
            if serious:
                blocking[f"/ ({palette})"] = serious
        context.close()
    assert len(checked) == 2 * len(pages) + (2 if lang == LANGS[0] else 0)
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


@pytest.mark.parametrize("lang", crawl.params(LANGS, "phone"))
def test_every_region_that_scrolls_is_reachable_by_keyboard(
    browser: Any, base_url: str, site: Path, lang: str
) -> None:
    """On a phone, where Material leaves code blocks out: every code block and table wrapper
    that scrolls sideways, on every page, takes the focus."""
    readings = crawl.crawl(browser, base_url, site, lang, "phone")
    assert not readings.hover
    unreachable = [
        (page.name, region)
        for page in readings.pages
        for region in page.scrollers
        if region[1] != "0"
    ]
    assert unreachable == []
    scrolling = {page.name for page in readings.pages if page.scrollers}
    assert {"measurement/", "cli/"} <= scrolling, scrolling
