"""The sizer's split over several GPUs, built and in headless Chromium, against
`iteragpu.parallel`'s vLLM plans: a published model chosen by name, TP and PP typed in the
page, each GPU's row equal to Python's plan at the page's own inputs (tokens, sequences,
reserve), the refusals vLLM makes said in the reader's language, the split kept in the URL."""

from __future__ import annotations

from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from iteragpu.core.units import gib
from iteragpu.i18n.numbers import format_number
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitRequest

from .conftest import LANGS

PRESET = "llama-3.1-8b"


def _open_with_preset(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    page.select_option("#sizer-preset", PRESET)
    assert page.locator("#sizer-config-status").get_attribute("data-state") == "ok"


def _split_rows(page: Any) -> list[list[str]]:
    rows: list[list[str]] = page.evaluate(
        """() => Array.from(document.querySelectorAll('#sizer-split tbody tr')).map(
            tr => Array.from(tr.cells).map(td => td.textContent))"""
    )
    return rows


def _page_inputs(page: Any) -> dict[str, str]:
    inputs: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-sizer-key]'))
            .map(el => [el.dataset.sizerKey, el.value]))"""
    )
    return inputs


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("tp", "pp"), [(2, 1), (1, 3), (8, 1)])
def test_each_gpu_row_is_pythons_plan(
    page: Any, base_url: str, lang: str, tp: int, pp: int
) -> None:
    _open_with_preset(page, base_url, lang)
    page.fill("#sizer-tp", str(tp))
    page.fill("#sizer-pp", str(pp))
    assert page.locator("#sizer-split").get_attribute("data-state") == "ok"
    inputs = _page_inputs(page)
    # The page's own inputs: its reserve, tokens and sequences (the sizer's defaults)
    plan = plan_split(
        SplitRequest(
            PRESET,
            int(inputs["tokens"]),
            int(inputs["sequences"]),
            runtime="vllm",
            tp=tp,
            pp=pp,
            reserve_gib=Fraction(inputs["reserve_gib"]),
        )
    )
    rows = _split_rows(page)
    assert len(rows) == tp * pp
    for row, rank in zip(rows, plan.ranks, strict=True):
        figures = [rank.weights_bytes, rank.weights_replicated_bytes, rank.kv_cache_bytes]
        expected = [format_number(gib(v), 2, lang) for v in [*figures, rank.total_bytes]]
        assert row[4:] == expected, (tp, pp, rank.rank)
    status = page.locator("#sizer-split [data-split-status]").inner_text()
    assert format_number(gib(plan.first_to_fill.total_bytes), 2, lang) in status
    # the split travels with the page's address
    search = parse_qs(urlsplit(page.url).query)
    assert search.get("tp", ["1"]) == [str(tp)] and search.get("pp", ["1"]) == [str(pp)]


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_vllms_refusals_are_said_and_no_row_stands(page: Any, base_url: str, lang: str) -> None:
    _open_with_preset(page, base_url, lang)
    page.fill("#sizer-tp", "3")  # 32 attention heads do not divide by 3
    box = page.locator("#sizer-split")
    assert box.get_attribute("data-state") == "refused"
    assert _split_rows(page) == []
    status = box.locator("[data-split-status]").inner_text()
    assert "32" in status and "3" in status
    assert "vllm_heads_not_divisible" not in status  # worded, not a code


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_without_a_config_the_page_asks_for_one(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/?tp=2")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    assert page.locator("#sizer-split").get_attribute("data-state") == "empty"
    assert page.locator("#sizer-tp").input_value() == "2"
    assert page.locator("#sizer-split [data-split-status]").inner_text().strip() != ""


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("width", [1280, 390])
def test_no_column_is_cut_off_and_the_chart_is_legible(
    browser: Any, base_url: str, lang: str, width: int
) -> None:
    """Each table of the page either fits its column or scrolls sideways in a region the
    keyboard reaches (tabindex 0) and, for the split's, a labelled one; the split chart names
    each card line it draws, and no chart text is under 11 CSS px."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        _open_with_preset(page, base_url, lang)
        page.fill("#sizer-tp", "2")
        page.fill("#sizer-pp", "2")
        assert page.locator("#sizer-split").get_attribute("data-state") == "ok"
        page.wait_for_timeout(200)  # the site's script gives an overflowing region its tabindex
        tables = page.evaluate(
            """() => ['#sizer-split table', '#sizer-candidates', '#sizer-kv-kinds'].map(sel => {
                const table = document.querySelector(sel);
                let el = table.parentElement, scroller = null;
                for (; el && el !== document.body; el = el.parentElement) {
                    const style = getComputedStyle(el);
                    if (style.display !== 'contents' &&
                        ['auto', 'scroll'].includes(style.overflowX)) { scroller = el; break; }
                    if (style.display !== 'contents' && style.overflowX === 'hidden') break;
                }
                const t = table.getBoundingClientRect();
                const page = document.documentElement.clientWidth;
                const s = scroller ? scroller.getBoundingClientRect() : null;
                return {
                    sel, right: t.right, page,
                    scrolls: scroller !== null && scroller.scrollWidth > scroller.clientWidth + 1,
                    reaches: scroller !== null && scroller.scrollWidth >= table.scrollWidth - 1,
                    tabindex: scroller ? scroller.getAttribute('tabindex') : null,
                    label: scroller ? (scroller.getAttribute('aria-label') || '') : '',
                    inside: s === null ? true : t.left >= s.left - 1,
                };
            })"""
        )
        for table in tables:
            where = (lang, width, table["sel"])
            if table["scrolls"]:
                assert table["reaches"] and table["tabindex"] == "0", where
            else:
                # all of it on the page, no column past the scroller's or the page's edge
                assert table["right"] <= table["page"] + 1, where
            if table["sel"] == "#sizer-split table":
                assert table["label"].strip(), where  # the split's region is named
        if width == 1280:
            split = next(t for t in tables if t["sel"] == "#sizer-split table")
            assert not split["scrolls"], "the split's eight columns fit a desktop column"
        chart = page.evaluate(
            """() => {
                const svg = document.querySelector('#sizer-split [data-split-plot] svg');
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                const texts = [...svg.querySelectorAll('text')];
                return {
                    smallest: Math.min(...texts.map(t =>
                        parseFloat(getComputedStyle(t).fontSize) * scale)),
                    lines: [...svg.querySelectorAll('line.sizer-chart-card')].length,
                    names: texts.filter(t => t.classList.contains('sizer-chart-card-name'))
                        .map(t => t.textContent),
                    right: Math.max(...texts.map(t => t.getBoundingClientRect().right)),
                    left: Math.min(...texts.map(t => t.getBoundingClientRect().left)),
                    box: [svg.getBoundingClientRect().left, svg.getBoundingClientRect().right],
                };
            }"""
        )
        assert chart["smallest"] >= 11, (lang, width, chart["smallest"])
        assert chart["lines"] > 0 and len(chart["names"]) == chart["lines"], chart
        # each name is a card's the text alternative speaks of
        said = page.locator("#sizer-split [data-split-chart-text]").inner_text()
        assert all(name.strip() and f"{name}:" in said for name in chart["names"]), chart
        # every name inside the chart's box
        assert chart["left"] >= chart["box"][0] - 1 and chart["right"] <= chart["box"][1] + 1
    finally:
        context.close()
