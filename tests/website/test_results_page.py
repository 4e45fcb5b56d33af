"""The results page, built and in headless Chromium: lab results written by the lab on its
test-only fake backends (synthetic counters, labelled so in their device name, never a
measurement) are loaded through the file input, drawn, stated in the page's number format,
compared, and set beside the estimate exactly as `iteragpu report` says it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from results_support import synthetic_result
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.docs_tools.results_page import example_path
from iteragpu.i18n.messages import message
from iteragpu.i18n.numbers import format_number

from .conftest import LANGS, ROOT, SCREENSHOTS

PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")
CHART_COUNTERS = (
    "end_allocated_bytes",
    "end_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
)
_DATA = re.compile(r'<script type="application/json" id="results-data">([^<]*)</script>')


def _last_records(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for record in result["phases"]:
        records[record["phase"]] = record  # the last repeat wins, as on the page
    return records


def _page_word(lang: str, key: str) -> str:
    page = (ROOT / "docs" / lang / "docs" / "results.md").read_text("utf-8")
    found = re.search(rf'<span data-(?:text|problem)="{key}">([^<]+)</span>', page)
    assert found is not None, key
    return found.group(1)


def _open(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/results/")
    page.wait_for_selector("html[data-results-ready]", state="attached")


def _load(page: Any, *paths: Path) -> None:
    page.set_input_files("#result-file", [str(p) for p in paths])
    page.wait_for_function(
        "() => document.getElementById('results-error').hidden === false"
        " || document.documentElement.hasAttribute('data-results-runs')"
    )


@pytest.mark.site
@pytest.mark.parametrize("lang", LANGS)
def test_the_page_embeds_the_schema_the_words_and_the_example(site: Path, lang: str) -> None:
    html = (site / lang / "results" / "index.html").read_text("utf-8")
    found = _DATA.search(html)
    assert found is not None
    data = json.loads(found.group(1))
    schema = ROOT / "src" / "iteragpu" / "lab" / "result.schema.json"
    assert data["schema"] == json.loads(schema.read_text("utf-8"))
    assert data["messages"]["not_measured"] == message("not_measured", lang)
    assert data["example"] == example_path(lang).read_text("utf-8")
    assert data["symbols"]["decimal"] == format_number(1.5, 1, lang)[1]
    published = (site / lang / "assets" / "results.js").read_bytes()
    assert published == (ROOT / "src" / "iteragpu" / "web" / "results.js").read_bytes()
    # the sizer's arithmetic first, then the viewer (both modules: run in this order)
    assert html.index('type="module" src="../assets/sizer/main.js"') < html.index(
        'type="module" src="../assets/results.js"'
    )


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_result_is_drawn_one_mark_per_phase_and_counter(
    page: Any, base_url: str, lang: str, tmp_path: Path
) -> None:
    path = synthetic_result(tmp_path, "simulated", lang)
    result = json.loads(path.read_text("utf-8"))
    _open(page, base_url, lang)
    _load(page, path)
    assert page.locator("#results-error").is_hidden()
    marks = page.locator("#phase-chart .results-mark")
    assert marks.count() == len(PHASES) * len(CHART_COUNTERS)
    records = _last_records(result)
    for phase in PHASES:
        for key in CHART_COUNTERS:
            mark = page.locator(
                f'#phase-chart .results-mark[data-phase="{phase}"][data-counter="{key}"]'
            )
            assert mark.count() == 1
            assert mark.get_attribute("data-bytes") == str(records[phase][key])
    # The text alternative: the chart's figures, in bytes, in the page's format.
    table = page.locator("#phase-chart-table-0")
    assert (
        page.locator("#phase-chart svg").get_attribute("aria-describedby") == "phase-chart-table-0"
    )
    for phase in PHASES:
        for key in CHART_COUNTERS:
            cell = table.locator(f'tr[data-phase="{phase}"] td[data-counter="{key}"]')
            assert cell.inner_text() == format_number(records[phase][key], 0, lang)
    assert "synthetic simulated" in page.locator("#phase-chart").inner_text()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_an_invalid_file_is_refused_with_its_first_problem(
    page: Any, base_url: str, lang: str, tmp_path: Path
) -> None:
    text = synthetic_result(tmp_path, "simulated", lang).read_text("utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text(text.replace('"duration_ns": 1000000', '"duration_ns": 1.5', 1), "utf-8")
    missing = json.loads(text)
    del missing["phases"][1]["end_reserved_bytes"]
    incomplete = tmp_path / "incomplete.json"
    incomplete.write_text(json.dumps(missing), "utf-8")
    _open(page, base_url, lang)
    _load(page, broken, incomplete)
    items = page.locator("#results-error-list li")
    assert items.count() == 2
    fraction = _page_word(lang, "fraction").replace("{number}", "'1.5'")
    assert items.nth(0).inner_text() == f"broken.json: {fraction}"
    key = _page_word(lang, "missing_key").replace("{key}", "'end_reserved_bytes'")
    assert items.nth(1).inner_text() == "incomplete.json: " + key.replace("{where}", "/phases/1")
    assert page.locator("#phase-chart").is_hidden()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_failures_nulls_and_two_runs_side_by_side(
    page: Any, base_url: str, lang: str, tmp_path: Path
) -> None:
    oom = synthetic_result(tmp_path, "oom", lang)
    nulls = synthetic_result(tmp_path, "nulls", lang)
    _open(page, base_url, lang)
    _load(page, oom, nulls)
    chart = page.locator("#phase-chart")
    failed = chart.locator('section[data-run="0"] .results-phase[data-status="failed"]')
    assert failed.get_attribute("data-phase") == "cold_forward"
    assert message("report_out_of_memory", lang) in failed.text_content()
    # Phases the failed run never reached are said to be absent, not drawn as zeros.
    assert chart.locator('section[data-run="0"] .results-phase[data-state="not_recorded"]').count()
    # The counters the lab could not read: "not measured", never a bar or a 0.
    first, second = (json.loads(p.read_text("utf-8")) for p in (oom, nulls))
    unread = [
        (phase, key)
        for phase, record in _last_records(second).items()
        for key in CHART_COUNTERS
        if record[key] is None
    ]
    assert unread  # memory_reserved failed: end_reserved_bytes of every phase
    missing = chart.locator('section[data-run="1"] .results-mark[data-state="not_measured"]')
    assert missing.count() == len(unread)
    table = page.locator("#phase-chart-table-1")
    for phase, key in unread:
        cell = table.locator(f'tr[data-phase="{phase}"] td[data-counter="{key}"]')
        assert cell.inner_text() == message("not_measured", lang)
    # Side by side: each counter of each phase, the second run minus the first.
    rows = page.locator("#results-difference-table tbody tr")
    assert rows.count() == len(PHASES) * len(CHART_COUNTERS)
    a, b = _last_records(first)["model_load"], _last_records(second)["model_load"]
    row = page.locator(
        '#results-difference-table tr[data-phase="model_load"]'
        '[data-counter="end_allocated_bytes"] td[data-difference]'
    )
    difference = b["end_allocated_bytes"] - a["end_allocated_bytes"]
    sign = "+" if difference > 0 else "-" if difference < 0 else ""
    assert row.inner_text() == sign + format_number(abs(difference), 0, lang)
    reserved = page.locator(
        '#results-difference-table tr[data-phase="model_load"]'
        '[data-counter="end_reserved_bytes"] td[data-difference]'
    )
    assert reserved.inner_text() == message("not_measured", lang)


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_estimate_says_what_iteragpu_report_says(
    page: Any, base_url: str, lang: str, tmp_path: Path
) -> None:
    path = synthetic_result(tmp_path, "simulated", lang)
    _open(page, base_url, lang)
    _load(page, path)
    bits = "4,5" if lang == "id" else "4.5"
    page.fill("#results-params", "7e9")
    page.fill("#results-bits", bits)
    cli = CliRunner().invoke(
        app, ["report", str(path), "--params", "7e9", "--bits", bits, "--lang", lang]
    )
    assert cli.exit_code == 0, cli.output
    title, _, explanation = cli.stdout.rstrip("\n").split("\n\n")[-3:]
    section = page.locator("#results-estimate section")
    assert section.locator(".results-estimate-title").inner_text() == title
    shown = section.locator(".results-explanation li").all_inner_texts()
    assert shown == explanation.splitlines()
    page.fill("#results-bits", "")
    assert page.locator("#results-estimate [role=alert]").inner_text() == _page_word(
        lang, "together"
    )


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("width", [1280, 390])
def test_the_example_is_labelled_and_the_chart_fits(
    browser: Any, base_url: str, lang: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    _open(page, base_url, lang)
    page.click("#results-example")
    page.wait_for_selector("html[data-results-runs]", state="attached")
    label = _page_word(lang, "example_label")
    # Wherever the example is named: the chart, its table, the environment, the estimate.
    for where in (
        "#phase-chart-caption-0",
        "#phase-chart-table-0 caption",
        "#results-environment section p",
        "#results-estimate section p",
    ):
        assert label in page.locator(where).first.inner_text(), where
    chart = page.locator("#phase-chart svg")
    box = chart.bounding_box()
    assert box is not None and box["width"] > 0 and box["height"] > 0
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#phase-chart").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / f"{lang}-results-{width}.png"))
    context.close()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_training_example_stacks_parts_and_names_the_highest_peak(
    page: Any, base_url: str, lang: str
) -> None:
    from iteragpu.docs_tools.results_page import TRAIN_RANKS, train_example_path

    paths = [train_example_path(lang, rank) for rank in TRAIN_RANKS]
    results = [json.loads(p.read_text("utf-8")) for p in paths]
    _open(page, base_url, lang)
    page.click("#results-example-train")
    page.wait_for_selector("html[data-results-runs]", state="attached")
    assert page.locator("html").get_attribute("data-results-runs") == "2"
    for index, result in enumerate(results):
        section = page.locator(f'#phase-chart section[data-run="{index}"]')
        for record in result["phases"]:
            name = record["phase"] + (f" ({record['step']})" if record["step"] else "")
            group = section.locator(f'.results-phase[data-phase="{name}"]')
            assert group.count() == 1, name
            parts = record["parts"]
            for part, key in (
                ("parameters", "parameters_allocated_bytes"),
                ("gradients", "gradients_allocated_bytes"),
                ("optimizer_state", "optimizer_state_allocated_bytes"),
                ("activations", "activations_and_temporaries_bytes"),
            ):
                bar = group.locator(f'rect.results-part[data-part="{part}"]')
                assert bar.get_attribute("data-bytes") == str(parts[key]), (name, part)
            peak = group.locator("rect.results-peak")
            assert peak.get_attribute("data-bytes") == str(record["peak_allocated_bytes"])
        steps = section.locator("table[data-steps] tbody tr")
        assert steps.count() == 5  # forward, loss, backward, optimizer_step, zero_grad
    # The process with the highest peak, in the words of iteragpu report.
    cli = CliRunner().invoke(app, ["report", *map(str, paths), "--json"])
    best = json.loads(cli.stdout)["highest_peak"]
    said = page.locator("#results-differences .results-highest").inner_text()
    assert format_number(best["peak_allocated_bytes"], 0, lang) in said and best["phase"] in said
    assert _page_word(lang, "example_rank_label").replace("{rank}", str(best["rank"])) in said
    # The estimate of iteragpu train, item by item, beside the counted bytes.
    page.select_option("#results-precision", "fp32")
    page.select_option("#results-optimizer", "adamw")
    flags = ["--precision", "fp32", "--optimizer", "adamw", "--json"]
    cli = CliRunner().invoke(app, ["report", *map(str, paths), *flags])
    for index, shown in enumerate(json.loads(cli.stdout)["results"]):
        rows = page.locator(f'#results-train section[data-run="{index}"] tbody tr')
        items = shown["train_estimate"]["items"]
        assert rows.count() == len(items)
        for item in items:
            cells = page.locator(
                f'#results-train section[data-run="{index}"] tr[data-item="{item["item"]}"] td'
            ).all_inner_texts()
            assert cells == [
                format_number(item["estimated_bytes"], 0, lang),
                format_number(item["measured_bytes"], 0, lang),
                format_number(abs(item["difference_bytes"]), 0, lang),
            ]
    page.check("#results-fused")
    page.select_option("#results-optimizer", "adafactor")
    refused = page.locator("#results-train [role=alert]").inner_text()
    assert refused == _page_word(lang, "fused_refused").replace("{optimizer}", "adafactor")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    chart = page.locator('#phase-chart section[data-run="1"] svg')
    chart.screenshot(path=str(SCREENSHOTS / f"{lang}-results-train.png"))
