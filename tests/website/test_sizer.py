"""The sizer page, built and in headless Chromium, against the Python core's answers.

Every expected figure comes from `iteragpu.docs_tools.sizer_vectors.expected(query)`, never a
literal.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from babel.numbers import get_decimal_symbol, get_group_symbol, get_minus_sign_symbol

from iteragpu.cli.language import reads_decimal_comma
from iteragpu.docs_tools.sizer_vectors import CASES, DEFAULT_QUERY, TASKS, expected, vectors
from iteragpu.i18n.messages import MESSAGES
from iteragpu.i18n.numbers import format_number

from .conftest import LANGS, ROOT, SCREENSHOTS

OUTPUT_IDS = (
    "weights-gib",
    "range-gib",
    "kv-bytes",
    "kv-gib",
    "kv-bytes-per-token",
    "state-bytes",
    "model-total-gib",
)
# The browser sizer: native ES modules, published byte for byte under assets/sizer/.
SIZER_MODULES = ROOT / "src" / "iteragpu" / "web" / "sizer"
CATALOG = ROOT / "src" / "iteragpu" / "gpus" / "gpu_catalog.json"
_DATA = re.compile(r'<script type="application/json" id="sizer-data">([^<]*)</script>')
# The Python message of each reason the page reports (iteragpu.core.numbers, sizer_vectors).
PYTHON_MESSAGES = {
    "not_count": "must be a positive whole number such as 7e9 or 7B",
    "not_number": "must be a finite number",
    "not_whole": "must be a whole number",
    "not_positive": "must be positive",
    "negative": "cannot be negative",
    "unknown_task": "must be one of",
    "non_ascii_digit": "must use the digits 0-9",
    "too_many_digits": "has too many digits",
    "exponent_out_of_range": "has an exponent out of range",
    "too_large": "must be at most",
    "ambiguous_separator": "'[^']*' is ambiguous",
    "window_needed": "needs a window",
    "windowed_above_layers": "cannot exceed layers",
    "unknown_cache": "must be dynamic or static",
}
VALID_CASES = [case for case in CASES if expected(case)["valid"]]
INVALID_CASES = [case for case in CASES if not expected(case)["valid"]]


def _python_error_matches(error: str, field: str, reason: str) -> bool:
    # The messages' beginnings, as patterns: some begin with the reader's input, quoted.
    pattern = PYTHON_MESSAGES.get(reason)
    return pattern is not None and re.match(f"{field} {pattern}", error) is not None


# ---------------------------------------------------------------------------------------------
# The built page (no browser)
# ---------------------------------------------------------------------------------------------


def _embedded_data(site: Path, lang: str) -> dict[str, Any]:
    html = (site / lang / "sizer" / "index.html").read_text("utf-8")
    match = _DATA.search(html)
    assert match, "the sizer page embeds no sizer data"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


@pytest.mark.site
@pytest.mark.parametrize("lang", LANGS)
def test_the_page_embeds_the_catalog_the_defaults_and_babel_symbols(site: Path, lang: str) -> None:
    data = _embedded_data(site, lang)
    assert data["lang"] == lang
    assert data["defaults"] == DEFAULT_QUERY
    assert data["tasks"] == list(TASKS)
    assert data["catalog"] == json.loads(CATALOG.read_text("utf-8"))
    for symbols_lang in LANGS:
        assert data["symbols"][symbols_lang] == {
            "decimal": get_decimal_symbol(symbols_lang),
            "group": get_group_symbol(symbols_lang),
            "minus": get_minus_sign_symbol(symbols_lang),
        }
    for card in data["catalog"]["cards"]:
        sheet = data["sheets"].get(card["id"])
        if sheet is not None:
            assert (site / lang / "sizer" / sheet / "index.html").resolve().exists()


@pytest.mark.site
@pytest.mark.parametrize("lang", LANGS)
def test_the_page_loads_the_published_script(site: Path, lang: str) -> None:
    modules = sorted(SIZER_MODULES.glob("*.js"))
    assert {"index.js", "main.js"} <= {module.name for module in modules}
    published = site / lang / "assets" / "sizer"
    assert sorted(p.name for p in published.glob("*.js")) == [m.name for m in modules]
    for module in modules:
        assert (published / module.name).read_bytes() == module.read_bytes(), module.name
    html = (site / lang / "sizer" / "index.html").read_text("utf-8")
    assert '<script type="module" src="../assets/sizer/main.js"></script>' in html
    for element_id in (*OUTPUT_IDS, "sizer-form", "sizer-candidates", "sizer-error"):
        assert f'id="{element_id}"' in html
    assert "sizer-data" not in (site / lang / "sizing" / "index.html").read_text("utf-8")


# The memory reasons the page can show without a lab result (iteragpu.gpus.shortlist).
REASONS_WITHOUT_EVIDENCE = (
    "declared_below_need",
    "nominal_not_proof",
    "above_nominal_within_declared",
    "above_nominal_declared_unknown",
    "nominal_unknown",
)


@pytest.mark.site
@pytest.mark.parametrize("lang", LANGS)
def test_the_page_explains_every_memory_reason_and_ranks_nobody(site: Path, lang: str) -> None:
    html = (site / lang / "sizer" / "index.html").read_text("utf-8")
    for reason in REASONS_WITHOUT_EVIDENCE:
        assert f"reason_{reason}" in MESSAGES  # a reason the Python short list gives
        assert re.search(rf'<span data-memory-reason="{reason}">[^<]+</span>', html), reason
    assert re.search(r'<span data-text="unknown">[^<]+</span>', html)
    header = re.search(r'<table id="sizer-candidates">.*?</thead>', html, re.S)
    assert header and "<th>" in header.group(0)
    assert "순위" not in header.group(0) and "Peringkat" not in header.group(0)


# ---------------------------------------------------------------------------------------------
# In Chromium
# ---------------------------------------------------------------------------------------------


def _open(page: Any, base_url: str, lang: str, query: dict[str, str] | None = None) -> None:
    search = f"?{urlencode(query)}" if query else ""
    page.goto(f"{base_url}/{lang}/sizer/{search}")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")


def _figures(page: Any) -> dict[str, str]:
    return {element_id: page.locator(f"#{element_id}").inner_text() for element_id in OUTPUT_IDS}


def _rows(page: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = page.evaluate(
        """() => Array.from(document.querySelectorAll('#sizer-candidates tbody tr')).map(tr => {
            const cell = (name) => tr.querySelector(`[data-column="${name}"]`);
            return {
                card_id: tr.dataset.cardId,
                status: tr.dataset.status,
                requirements: {
                    memory: cell('memory').dataset.status,
                    package: cell('package').dataset.status,
                },
                rank: tr.dataset.rank,
                declared: cell('declared-gib').textContent,
                paper: cell('paper-margin-gib').textContent,
                reason: cell('why').dataset.memoryReason,
                reason_text: cell('why').textContent,
                status_texts: ['memory', 'package', 'overall'].map(n => cell(n).textContent),
            };
        })"""
    )
    return rows


def _page_messages(page: Any, attribute: str) -> dict[str, str]:
    """The page's texts keyed by `attribute` (data-status, data-memory-reason, data-text)."""
    texts: dict[str, str] = page.evaluate(
        """(attribute) => Object.fromEntries(Array.from(
            document.querySelectorAll(`#sizer-messages [${attribute}]`),
            el => [el.getAttribute(attribute), el.textContent.trim()]))""",
        attribute,
    )
    return texts


def _status_labels(page: Any) -> dict[str, str]:
    labels: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(
            document.querySelectorAll('#sizer-messages [data-status]'),
            el => [el.dataset.status, el.textContent.trim()]))"""
    )
    return labels


def _url_query(page: Any) -> dict[str, str]:
    parsed = parse_qs(urlsplit(page.url).query, keep_blank_values=True)
    return {key: values[-1] for key, values in parsed.items()}


def _form_query(page: Any) -> dict[str, str]:
    query: dict[str, str] = page.evaluate("() => IteraGPUSizer.page.read()")
    return query


def _assert_shows(page: Any, lang: str, query: dict[str, str]) -> None:
    want = expected(query)
    assert want["valid"]
    assert _figures(page) == want["text"][lang]
    labels = _status_labels(page)
    rows = _rows(page)
    # A fine-tuning task's need is counted from a model's tensors: with no model read, no card
    # is judged (the vectors' candidates are the inference need's).
    fine_tuning = {**DEFAULT_QUERY, **query}["task"] != "inference"
    candidates = [] if fine_tuning else want["candidates"]
    assert [row["card_id"] for row in rows] == [c["card_id"] for c in candidates]
    for row, candidate in zip(rows, candidates, strict=True):
        assert row["status"] == candidate["status"]
        assert row["requirements"] == candidate["requirements"]
        # No rank: the page takes no lab result, so no candidate is fit on every requirement.
        assert candidate["rank"] is None and row["rank"] == ""
        unknown = _page_messages(page, "data-text")["unknown"]
        assert row["declared"] == candidate["declared_text"].get(lang, unknown)
        margin, basis = candidate["paper_margin_bytes"], candidate["paper_margin_basis"]
        if margin is None:
            assert row["paper"] == unknown
        else:
            short = _page_messages(page, "data-text")[f"basis_short_{basis}"]
            gib_text = format_number(Fraction(int(margin), 2**30), 2, lang)
            assert row["paper"] == f"{gib_text} ({short})"
        assert row["reason"] == candidate["reasons"]["memory"]
        assert row["reason_text"] == _page_messages(page, "data-memory-reason")[row["reason"]]
        assert row["status_texts"] == [
            labels[candidate["requirements"]["memory"]],
            labels[candidate["requirements"]["package"]],
            labels[candidate["status"]],
        ]
    note = page.locator("#sizer-quantization-note")
    assert note.is_visible() == want["quantization_not_counted"]
    assert page.locator("#sizer-error").is_hidden()
    assert page.locator("#sizer-results").get_attribute("data-state") == "ok"


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("query", VALID_CASES, ids=lambda q: urlencode(q) or "defaults")
def test_a_shared_link_shows_the_python_figures(
    page: Any,
    base_url: str,
    lang: str,
    query: dict[str, str],
) -> None:
    _open(page, base_url, lang, query)
    assert page.locator("html").get_attribute("lang") == lang
    _assert_shows(page, lang, query)
    assert _form_query(page) == {**DEFAULT_QUERY, **query}


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_page_script_reproduces_every_vector(page: Any, base_url: str, lang: str) -> None:
    _open(page, base_url, lang)
    data = vectors()
    # Hand-picked, then seeded and edge cases, expected as this page reads numbers: where its
    # reader writes a decimal comma, `15.999` is refused as ambiguous, as the CLI refuses it.
    comma = reads_decimal_comma(lang)
    cases = [
        {"query": case["query"], "expected": expected(case["query"], decimal_comma=comma)}
        for case in data["cases"] + data["generated"]
    ]
    described = page.evaluate(
        """(queries) => {
            const data = JSON.parse(document.getElementById('sizer-data').textContent);
            return queries.map(q => IteraGPUSizer.describe(IteraGPUSizer.compute(q, data),
                                                           data.symbols));
        }""",
        [case["query"] for case in cases],
    )
    assert len(described) == len(cases)
    for case, got in zip(cases, described, strict=True):
        want = case["expected"]
        if want["valid"]:
            assert got == want, case["query"]
        else:
            assert got["valid"] is False
            assert _python_error_matches(want["error"], got["field"], got["reason"]), (
                case["query"],
                got,
                want["error"],
            )


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_editing_recomputes_and_the_url_reopens_the_same_state(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, base_url, lang)
    _assert_shows(page, lang, {})

    page.fill("#sizer-params", "70e9")
    _assert_shows(page, lang, {"params": "70e9"})
    assert _url_query(page) == {**DEFAULT_QUERY, "params": "70e9"}

    page.select_option("#sizer-bits-format", "8")
    page.fill("#sizer-sequences", "4")
    page.fill("#sizer-days", "2")
    edited = {"params": "70e9", "bits": "8", "sequences": "4", "days": "2"}
    _assert_shows(page, lang, edited)
    assert _url_query(page) == {**DEFAULT_QUERY, **edited}

    page.select_option("#sizer-bits-format", "custom")
    assert page.locator("#sizer-bits").is_visible()
    page.fill("#sizer-bits", "4.5")
    page.fill("#sizer-window", "4096")
    edited.update(bits="4.5", window="4096")
    _assert_shows(page, lang, edited)
    assert _url_query(page) == {**DEFAULT_QUERY, **edited}

    shared = page.url
    reopened = page.context.new_page()
    reopened.goto(shared)
    reopened.wait_for_selector("#sizer-results[data-state]", state="attached")
    assert _figures(reopened) == _figures(page)
    assert _form_query(reopened) == _form_query(page) == {**DEFAULT_QUERY, **edited}
    assert reopened.locator("#sizer-bits-format").input_value() == "custom"
    _assert_shows(reopened, lang, edited)
    reopened.close()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_task_drives_the_checklist_the_fields_and_the_cards(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, base_url, lang)
    before = _figures(page)
    rows_before = _rows(page)
    for task in (*TASKS[1:], TASKS[0]):
        page.select_option("#sizer-task", task)
        for other in TASKS:
            checklist = page.locator(f'[data-task-checklist="{other}"]')
            assert checklist.is_visible() == (other == task), (task, other)
        assert page.locator(f'[data-task-checklist="{task}"] li').count() >= 5
        # The guide's arithmetic is the same for every task; no hidden multiplier.
        assert _figures(page) == before == expected({"task": task})["text"][lang]
        inference = task == "inference"
        # Fine-tuning asks for the run, not for an inference cache.
        assert page.locator("#sizer-kv-heads").is_visible() == inference
        assert page.locator("#sizer-train-form").is_visible() == (not inference)
        # Its need is counted from the model's tensors: without a model, no card is judged
        # (never against inference figures).
        assert _rows(page) == (rows_before if inference else [])
        assert _url_query(page)["task"] == task


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_an_invalid_input_shows_the_error_state(page: Any, base_url: str, lang: str) -> None:
    _open(page, base_url, lang)
    _assert_shows(page, lang, {})
    for value in ("-7e9", "0", "seven", "NaN", ""):
        page.fill("#sizer-params", value)
        want = expected({"params": value})
        assert want["valid"] is False
        _assert_error_state(page, {"params"})
        item = page.locator("#sizer-error-list li").first
        assert _python_error_matches(
            want["error"], "params", item.get_attribute("data-reason") or ""
        )
        label = page.locator('label[for="sizer-params"]').inner_text().strip()
        assert item.inner_text().startswith(label)
    page.fill("#sizer-params", "7e9")
    _assert_shows(page, lang, {})

    for query in INVALID_CASES:
        _open(page, base_url, lang, query)
        fields = {key for key in query if key != "task"} or {"task"}
        if "windowed_layers" in query:
            fields -= {"window"}  # the cross-field error names the count of windowed layers
        _assert_error_state(page, fields)
        reasons = page.evaluate(
            "() => Array.from(document.querySelectorAll('#sizer-error-list li'),"
            " li => [li.dataset.field, li.dataset.reason])"
        )
        field, reason = reasons[0]
        assert _python_error_matches(expected(query)["error"], field, reason), (query, reasons)
        if query.get("task"):
            assert page.locator("[data-task-checklist]:visible").count() == 0


def _assert_error_state(page: Any, fields: set[str]) -> None:
    assert page.locator("#sizer-error").is_visible()
    assert page.locator("#sizer-results").get_attribute("data-state") == "error"
    placeholder = page.locator("#sizer-results").get_attribute("data-empty")
    figures = _figures(page)
    assert set(figures.values()) == {placeholder}, figures
    assert not any(re.search(r"\d|NaN|undefined|Infinity", text) for text in figures.values())
    assert page.locator("#sizer-candidates tbody tr").count() == 0
    assert page.locator("#sizer-quantization-note").is_hidden()
    shown = {
        item.get_attribute("data-field") for item in page.locator("#sizer-error-list li").all()
    }
    assert shown == fields
    messages = page.locator("#sizer-error-list").inner_text()
    assert "NaN" not in messages and "undefined" not in messages
    for field in fields:
        element = page.locator(f'[data-sizer-key="{field}"]')
        if field == "bits" and not element.is_visible():
            element = page.locator("#sizer-bits-format")
        assert element.get_attribute("aria-invalid") == "true", field


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_screenshots_of_the_sizer(page: Any, base_url: str, lang: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _open(page, base_url, lang, {"params": "40e9", "reserve_gib": "8", "bits": "8"})
    page.wait_for_load_state("networkidle")
    target = SCREENSHOTS / f"{lang}-sizer.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000


# ---------------------------------------------------------------------------------------------
# config.json read in the page, against `iteragpu model CONFIG` (size_model)
# ---------------------------------------------------------------------------------------------

CONFIGS = ROOT / "snippets" / "models"


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_published_model_chosen_by_name_fills_the_fields_as_iteragpu_model_does(
    page: Any, base_url: str, lang: str
) -> None:
    from iteragpu.models.model import size_model
    from iteragpu.models.presets import presets

    _open(page, base_url, lang)
    options = page.locator("#sizer-preset option").all()
    # A first choice that chooses nothing, then every preset by its Hugging Face repository.
    assert [o.get_attribute("value") for o in options] == ["", *(p.name for p in presets())]
    assert [o.inner_text() for o in options[1:]] == [p.hf_repo for p in presets()]
    for preset in presets():
        page.select_option("#sizer-preset", preset.name)
        assert page.locator("#sizer-config-status").get_attribute("data-state") == "ok"
        assert page.locator("#sizer-config-text").input_value() == preset.config_path.read_text()
        query = _form_query(page)
        sizing = size_model(preset.name, tokens=int(query["tokens"]))
        assert query["params"] == str(sizing.weights.parameters), preset.name
        assert query["layers"] == str(sizing.config.layers)
        assert query["kv_heads"] == str(sizing.config.kv_heads)


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ["gemma-2-9b", "llama-3-8b"])
def test_a_pasted_config_fills_the_fields_with_iteragpu_models_figures(
    page: Any, base_url: str, lang: str, name: str
) -> None:
    from iteragpu.models.model import size_model

    config = CONFIGS / name / "config.json"
    requests: list[tuple[str, str, str | None]] = []
    _open(page, base_url, lang)
    page.wait_for_load_state("networkidle")
    page.on("request", lambda r: requests.append((r.method, r.url, r.post_data)))
    page.select_option("#sizer-cache", "dynamic")
    page.fill("#sizer-sequences", "4")
    page.fill("#sizer-config-text", config.read_text("utf-8"))
    assert page.locator("#sizer-config-status").get_attribute("data-state") == "ok"
    query = _form_query(page)
    sizing = size_model(
        config,
        tokens=int(query["tokens"]),
        sequences=4,
        reserve_gib=Fraction(query["reserve_gib"]),
        cache="dynamic",
    )
    sliding = sum(g.count for g in sizing.kv.groups if g.layout.kind == "sliding_attention")
    assert query["params"] == str(sizing.weights.parameters)
    assert Fraction(query["bits"]) == sizing.weights.bits
    assert Fraction(query["bytes_per_value"]) == sizing.kv.bytes_per_value
    assert query["layers"] == str(sizing.config.layers)
    assert (query["kv_heads"], query["head_dim"]) == tuple(
        str(v) for v in (sizing.config.kv_heads, sizing.config.head_dim)
    )
    assert query["windowed_layers"] == (str(sliding) if sliding else "")
    assert query["window"] == str(sizing.config.sliding_window or "")
    # The page's figures are size_model's, in the page's number format.
    want = expected(query)
    assert want["valid"]
    assert int(want["weights_bytes"]) == sizing.weights.byte_count
    assert Fraction(want["kv_cache_bytes"]) == sizing.kv.kv_cache_bytes
    assert Fraction(want["kv_bytes_per_token"]) == sizing.kv.kv_bytes_per_token
    assert Fraction(want["model_total_bytes"]) == sizing.total_bytes
    assert _figures(page) == want["text"][lang]
    assert page.locator("#model-total-gib").inner_text() == format_number(
        sizing.total_bytes / 2**30, 2, lang
    )
    kinds = page.evaluate(
        """() => Array.from(document.querySelectorAll('#sizer-kv-kinds tbody tr'),
            tr => [tr.dataset.kind, tr.querySelector('[data-column="count"]').textContent,
                   tr.querySelector('[data-column="kv-bytes"]').textContent])"""
    )
    assert sorted(kinds) == sorted(
        [g.layout.kind, format_number(g.count, 0, lang), format_number(g.kv_cache_bytes, 0, lang)]
        for g in sizing.kv.groups
    )
    # Read in the page: nothing is sent (the browser may fetch the page's own files again).
    for method, url, body in requests:
        assert (method, body) == ("GET", None) and url.startswith(base_url), url
        assert "model_type" not in url and "config" not in url, url


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_bad_config_says_why_in_one_line_and_keeps_the_form(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, base_url, lang)
    before = _form_query(page)
    figures_before = _figures(page)
    rows_before = page.locator("#sizer-candidates tbody tr").count()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    reasons = {
        "{not json": "config_not_json",
        json.dumps({"model_type": "zamba2", "num_hidden_layers": 4}): "recurrent_state",
        json.dumps({"model_type": "llama", "num_hidden_layers": 4.0}): "bad_key",
        "x" * (2**20 + 1): "config_too_large",
    }
    messages = _page_messages(page, "data-config-reason")
    for text, reason in reasons.items():
        page.fill("#sizer-config-text", text)
        status = page.locator("#sizer-config-status")
        assert status.get_attribute("data-state") == "error"
        assert status.get_attribute("data-reason") == reason
        shown = status.inner_text()
        assert "\n" not in shown and shown
        assert shown.split(":")[0] in messages[reason] or messages[reason].split("{")[0] in shown
        assert not re.search(r"undefined|NaN|\{key\}|\{limit\}", shown)
        # The previous input's figures stay under the refusal, marked stale (issue 35).
        results = page.locator("#sizer-results")
        assert results.get_attribute("data-state") == "stale"
        assert results.get_attribute("data-stale") == "true"
        assert page.locator("#sizer-stale-note").inner_text().strip()
        assert _figures(page) == figures_before
        assert page.locator("#sizer-candidates tbody tr").count() == rows_before > 0
        assert page.locator("#memory-chart svg [data-segment]").count() > 0
    assert _form_query(page) == before
    assert errors == []
    # Editing the form shows its figures again.
    page.fill("#sizer-tokens", _form_query(page)["tokens"])
    assert page.locator("#sizer-results").get_attribute("data-state") == "ok"
    assert page.locator("#sizer-results").get_attribute("data-stale") is None
    assert page.locator("#sizer-candidates tbody tr").count() > 0


# ---------------------------------------------------------------------------------------------
# The memory chart
# ---------------------------------------------------------------------------------------------


def _chart(page: Any) -> dict[str, Any]:
    chart: dict[str, Any] = page.evaluate(
        """() => ({
            segments: Array.from(document.querySelectorAll('#memory-chart svg [data-segment]'),
                el => [el.dataset.segment, el.dataset.bytes, el.getBoundingClientRect().width]),
            marks: Array.from(document.querySelectorAll('#memory-chart svg [data-mark]'),
                el => [el.dataset.cardId, el.dataset.mark]),
            text: document.getElementById('memory-chart-text').innerText,
        })"""
    )
    return chart


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_chart_stacks_the_need_and_marks_each_cards_capacities(
    page: Any, base_url: str, lang: str
) -> None:
    catalog = json.loads(CATALOG.read_text("utf-8"))["cards"]
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        _open(page, base_url, lang, {"reserve_gib": "6"})
        want = expected({"reserve_gib": "6"})
        chart = _chart(page)
        keys = [s[0] for s in chart["segments"]]
        assert keys == ["weights", "reserve", "kv"]
        reserve = int(want["total_bytes"]) - int(want["weights_bytes"])
        assert [s[1] for s in chart["segments"]] == [
            want["weights_bytes"],
            str(reserve),
            want["kv_cache_bytes"],
        ]
        assert all(s[2] > 0 for s in chart["segments"])
        marks = sorted(chart["marks"])
        # The cards that matter, those still to check: one mark per card for its nominal
        # figure, one more where its declared capacity is known. The excluded are not drawn.
        status = {c["card_id"]: c["status"] for c in want["candidates"]}
        drawn = [card for card in catalog if status[card["id"]] != "excluded"]
        assert len(drawn) < len(catalog)  # 19.04 GiB: a card sold as 16 GB is out
        wanted = sorted(
            [card["id"], kind]
            for card in drawn
            for kind in ("nominal", "declared")
            if kind == "nominal" or card["declared_memory_bytes"] is not None
        )
        assert marks == wanted
        # Within or beyond on paper, as the vectors' margin on paper says.
        paper = dict(
            page.evaluate(
                """() => Array.from(document.querySelectorAll('#memory-chart-text li'),
                el => [el.dataset.cardId, el.dataset.paper])"""
            )
        )
        for c in want["candidates"]:
            if c["status"] != "excluded":
                within = int(c["paper_margin_bytes"]) >= 0
                assert paper[c["card_id"]] == ("within" if within else "beyond")
        # The text alternative: the same figures, in the page's number format.
        text = chart["text"]
        for key in ("weights-gib", "range-gib", "kv-gib", "model-total-gib"):
            assert want["text"][lang][key] in text, key
        unknown = _page_messages(page, "data-chart-text")["declared_unknown"]
        lines = text.splitlines()
        gone = [card["name"] for card in catalog if status[card["id"]] == "excluded"]
        assert any(all(name in line for name in gone) for line in lines)
        for card in drawn:
            line = next(line for line in lines if line.startswith(card["name"] + ":"))
            if card["declared_memory_bytes"] is None:
                assert unknown in line
            else:
                declared = Fraction(card["declared_memory_bytes"], 2**30)
                assert format_number(declared, 2, lang) + " GiB" in line
        box = page.locator("#memory-chart svg").bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#memory-chart").scroll_into_view_if_needed()
        target = SCREENSHOTS / f"{lang}-sizer-chart-{width}.png"
        page.locator("#memory-chart").screenshot(path=str(target))
        assert target.stat().st_size > 5_000


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_an_input_redraws_the_chart_and_its_text(page: Any, base_url: str, lang: str) -> None:
    _open(page, base_url, lang)
    before = _chart(page)
    page.fill("#sizer-params", "70e9")
    after = _chart(page)
    want = expected({"params": "70e9"})
    assert after["segments"][0][1] == want["weights_bytes"] != before["segments"][0][1]
    assert after["text"] != before["text"]
    assert want["text"][lang]["weights-gib"] in after["text"]
    page.fill("#sizer-params", "seven")
    assert page.locator("#memory-chart").get_attribute("data-state") == "error"
    assert page.locator("#memory-chart svg [data-segment]").count() == 0


# ---------------------------------------------------------------------------------------------
# The training mode (#training): `iteragpu train`'s figures from the config the page has read
# ---------------------------------------------------------------------------------------------

TRAINING_FORMS = [
    {"method": "lora", "lora_r": "16"},
    {"method": "qlora", "lora_targets": "all-linear", "double_quant": "true"},
    {"method": "full", "precision": "bf16-master", "shard": "zero3", "gpus": "4"},
    {"method": "full", "precision": "fp16", "optimizer": "sgd", "shard": "fsdp2", "gpus": "3"},
]
TRAINING_ROWS = {
    "gradients": "gradients_bytes",
    "optimizer": "optimizer_state_bytes",
    "master-weights": "master_weights_bytes",
    "master-gradients": "master_gradients_bytes",
    "model-states": "model_states_bytes",
    "host": "optimizer_host_bytes",
}


def _training_form(page: Any, form: dict[str, str]) -> None:
    from iteragpu.docs_tools.sizer_training_vectors import DEFAULT_REQUEST

    for key, value in {**DEFAULT_REQUEST, **form}.items():
        selector = f'[data-sizer-train="{key}"]'
        if page.locator(selector).evaluate("el => el.tagName") == "SELECT":
            page.select_option(selector, value)
        else:
            page.fill(selector, value)


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_training_mode_states_iteragpu_trains_figures(
    page: Any, base_url: str, lang: str
) -> None:
    from iteragpu.docs_tools.sizer_training_vectors import answer
    from iteragpu.models.presets import presets

    _open(page, base_url, lang)
    messages: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(
            document.querySelectorAll('#sizer-train-messages [data-train-text]'),
            el => [el.getAttribute('data-train-text'), el.textContent.trim()]))"""
    )
    # No config yet: nothing is stated from the parameter count alone.
    assert page.locator("#sizer-train-status").get_attribute("data-state") == "empty"
    assert page.locator("#sizer-train-states tbody tr").count() == 0
    preset = next(p for p in presets() if p.name == "llama-3.1-8b")
    page.select_option("#sizer-task", "training")
    page.select_option("#sizer-preset", preset.name)
    for form in TRAINING_FORMS:
        _training_form(page, form)
        expected = answer(preset.config_path, form)
        assert expected["valid"], form
        assert page.locator("#sizer-train-status").get_attribute("data-state") == "ok"
        shown = page.evaluate(
            """() => Object.fromEntries(Array.from(
                document.querySelectorAll('#sizer-train-states tbody tr')).map(tr => [
                    tr.dataset.item,
                    [tr.querySelector('[data-column="bytes"]').dataset.bytes || null,
                     tr.querySelector('[data-column="status"]').textContent]]))"""
        )
        for item, key in TRAINING_ROWS.items():
            if expected[key]:
                assert shown[item][0] == str(expected[key]), (form, item)
        for role in expected["weights"]:
            assert shown[f"role-{role['role']}"][0] == str(role["weights_bytes"]), (form, role)
        # Activations are to be measured, never a figure.
        assert shown["activations"] == [None, messages["to_measure"]]
        ranks = page.locator("#sizer-train-ranks tbody tr")
        assert ranks.count() == (len(expected["ranks"]) if form.get("shard") else 0)
        status = page.locator("#sizer-train-status").inner_text()
        assert format_number(expected["trainable_parameters"], 0, lang) in status
    # A refusal, in the page's words, with its reason.
    _training_form(page, {"method": "lora", "lora_targets": "no_such_proj"})
    assert answer(preset.config_path, {"method": "lora", "lora_targets": "no_such_proj"}) == {
        "valid": False,
        "reason": "lora_target_unknown",
    }
    status = page.locator("#sizer-train-status")
    assert (status.get_attribute("data-state"), status.get_attribute("data-reason")) == (
        "error",
        "lora_target_unknown",
    )
    assert "no_such_proj" in status.inner_text()
    assert page.locator("#sizer-train-states tbody tr").count() == 0


# ---------------------------------------------------------------------------------------------
# The filled load sheet (#filled-sheet)
# ---------------------------------------------------------------------------------------------


def _copied_sheet(page: Any) -> tuple[str, str]:
    """Press the copy button: (what the clipboard holds, what the page shows)."""
    page.evaluate("() => navigator.clipboard.writeText('')")
    page.click("#sizer-sheet-copy")
    page.wait_for_function(
        "() => document.querySelector('#sizer-sheet [data-sheet-status]').textContent !== ''"
    )
    copied: str = page.evaluate("() => navigator.clipboard.readText()")
    shown: str = page.locator("#sizer-sheet [data-sheet-output] code").text_content() or ""
    return copied, shown


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_copied_sheet_is_pythons_for_the_same_inputs(
    page: Any, base_url: str, lang: str
) -> None:
    from iteragpu.docs_tools.sizer_sheet_vectors import LLAMA, LLAMA_QUERY, sizer_sheet
    from iteragpu.i18n.sheet import sheet_markdown

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    _open(page, base_url, lang)
    page.select_option("#sizer-preset", LLAMA["name"])
    for key in ("reserve_gib", "tokens", "sequences"):
        page.fill(f"[data-sizer-key={key}]", LLAMA_QUERY[key])
    page.select_option("#sizer-cache", "dynamic")
    copied, shown = _copied_sheet(page)
    query = _form_query(page)
    one = sizer_sheet(query, expected(query), LLAMA)
    assert one is not None
    assert copied == shown == sheet_markdown(one, lang)
    assert page.locator("#sizer-sheet").get_attribute("data-state") == "ok"
    # Split over two GPUs: the sheet shown before is cleared, then a row per GPU.
    page.fill("#sizer-tp", "2")
    assert page.locator("#sizer-sheet [data-sheet-output]").is_hidden()
    copied, shown = _copied_sheet(page)
    split = {"preset": LLAMA["name"], "tp": 2, "pp": 1, "ep": False}
    two = sizer_sheet(query, expected(query), LLAMA, split)
    assert two is not None and len(two.rows) == 2
    assert copied == shown == sheet_markdown(two, lang)
    # Another task: no sheet, and the reason in the page's words.
    page.select_option("#sizer-task", "training")
    page.click("#sizer-sheet-copy")
    assert page.locator("#sizer-sheet").get_attribute("data-state") == "refused"
    assert page.locator("#sizer-sheet [data-sheet-output]").is_hidden()
    status = page.locator("#sizer-sheet [data-sheet-status]").inner_text()
    assert status == _page_sheet_text(page, "refused_task")


def _page_sheet_text(page: Any, key: str) -> str:
    text: str = page.evaluate(
        '(key) => document.querySelector(`#sizer-sheet-messages [data-sheet-text="${key}"]`)'
        ".textContent.trim()",
        key,
    )
    return text
