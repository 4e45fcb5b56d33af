"""The sizer's link, its errors at the field, and its stale figures, in headless Chromium.

A link reopens everything (issue 35): the published model or the pasted config (compressed
into the address by web/sizer/link_state.js), the task, the training settings, the split and
the fit, read back in a fresh page to the same fields and the same figures. Each error is said
under its own field in words that match what was typed, and a config that does not read yet
leaves the last figures standing, marked stale.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from .conftest import LANGS, ROOT

CONFIGS = ROOT / "snippets" / "models"
# Every field a link carries: the config's, the main form's (split and fit included), training.
_FIELDS = """() => Object.fromEntries(
    Array.from(document.querySelectorAll(
        '#sizer-config :is(input:not([type=file]), select, textarea),'
        + ' #sizer-form :is(input, select), #sizer-train-form :is(input, select)'),
        el => [el.id, el.value]))"""
# What the reader sees computed from them.
_SHOWN = """() => Object.fromEntries([
    'sizer-config-status', 'sizer-results', 'sizer-kv-kinds', 'memory-chart-text',
    'sizer-candidates', 'sizer-split', 'sizer-fit', 'sizer-train-status',
    'sizer-train-states'].map(id => [id, document.getElementById(id)])
    .map(([id, el]) => [id, el ? el.innerText : null]))"""


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.IteraGPUSizer && IteraGPUSizer.page")
    # A link's config is decoded, then read: wait for it.
    page.evaluate("() => IteraGPUSizer.page.restored.then(() => true)")


def _url(page: Any) -> str:
    # The page's own address: Playwright's page.url follows replaceState a step late.
    url: str = page.evaluate("() => location.href")
    return url


def _params(page: Any) -> dict[str, str]:
    parsed = parse_qs(urlsplit(_url(page)).query, keep_blank_values=True)
    return {key: values[-1] for key, values in parsed.items()}


def _message(page: Any, selector: str) -> str:
    text: str = page.evaluate(
        "(selector) => document.querySelector(selector).textContent.trim()", selector
    )
    return text


def _set_sections(page: Any) -> None:
    """TP, the fit, then the task and training settings, each away from the page's default
    (the split, the fit and the cache are inference's fields: set before the task hides them;
    the link keeps them all)."""
    page.fill("#sizer-tp", "2")
    cards = page.evaluate(
        "() => Array.from(document.querySelectorAll('#sizer-fit-card option'), o => o.value)"
    )
    page.select_option("#sizer-fit-card", next(card for card in cards if card))
    page.select_option("#sizer-fit-solve", "sequences")
    page.fill("#sizer-fit-utilization", "0.9")
    page.fill("#sizer-sequences", "3")  # fields edited after the config was read,
    page.fill("#sizer-bytes-per-value", "1")  # one the config fills among them
    page.select_option("#sizer-task", "adaptation")
    page.select_option("#sizer-train-method", "lora")
    page.fill("#sizer-train-lora-r", "16")
    page.select_option("#sizer-train-optimizer", "sgd")


def _assert_reopens(page: Any) -> Any:
    fields, shown = page.evaluate(_FIELDS), page.evaluate(_SHOWN)
    assert page.locator("#sizer-results").get_attribute("data-state") == "ok"
    assert page.locator("#sizer-split").get_attribute("data-state") == "ok", shown["sizer-split"]
    assert page.locator("#sizer-train-status").get_attribute("data-state") == "ok"
    reopened = page.context.new_page()
    _open(reopened, _url(page))
    assert reopened.evaluate(_FIELDS) == fields
    assert reopened.evaluate(_SHOWN) == shown
    # Reopening writes the same address again.
    assert _params(reopened) == _params(page)
    return reopened


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_link_reopens_a_published_model_and_every_setting(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, f"{base_url}/{lang}/sizer/")
    page.select_option("#sizer-preset", "llama-3.1-8b")
    _set_sections(page)
    params = _params(page)
    assert params["model"] == "llama-3.1-8b" and "config" not in params
    assert (params["task"], params["tp"], params["sequences"]) == ("adaptation", "2", "3")
    assert params["bytes_per_value"] == "1"
    assert (params["train_method"], params["train_lora_r"], params["train_optimizer"]) == (
        "lora",
        "16",
        "sgd",
    )
    assert (params["fit_solve"], params["fit_utilization"]) == ("sequences", "0.9")
    assert params["fit_card"]
    reopened = _assert_reopens(page)
    assert reopened.locator("#sizer-preset").input_value() == "llama-3.1-8b"
    reopened.close()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_link_reopens_a_pasted_config_and_every_setting(
    page: Any, base_url: str, lang: str
) -> None:
    config = (CONFIGS / "llama-3-8b" / "config.json").read_text("utf-8")
    _open(page, f"{base_url}/{lang}/sizer/")
    page.select_option("#sizer-preset", "qwen3-8b")
    # Pasting over a chosen model: the list no longer names it, the link holds the config.
    page.fill("#sizer-config-text", config)
    assert page.locator("#sizer-preset").input_value() == ""
    _set_sections(page)
    page.wait_for_function("() => location.search.includes('config=')")
    params = _params(page)
    assert "model" not in params and params["tp"] == "2"
    assert page.locator("#sizer-link-note").inner_text() == ""
    reopened = _assert_reopens(page)
    assert reopened.locator("#sizer-config-text").input_value() == config
    assert reopened.locator("#sizer-config-status").get_attribute("data-state") == "ok"
    reopened.close()


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_config_too_long_for_a_link_is_left_out_and_said(
    page: Any, base_url: str, lang: str
) -> None:
    config = json.loads((CONFIGS / "llama-3-8b" / "config.json").read_text("utf-8"))
    noise = random.Random(35)
    config["_note"] = "".join(noise.choice(string.ascii_letters) for _ in range(20_000))
    _open(page, f"{base_url}/{lang}/sizer/")
    page.fill("#sizer-config-text", json.dumps(config))
    assert page.locator("#sizer-config-status").get_attribute("data-state") == "ok"
    note = page.locator("#sizer-link-note")
    page.wait_for_function("() => document.getElementById('sizer-link-note').textContent !== ''")
    assert note.is_visible()
    assert note.inner_text() == _message(page, '#sizer-messages [data-text="link_config_too_long"]')
    page.fill("#sizer-tp", "2")
    params = _params(page)
    assert "config" not in params and "model" not in params
    assert params["tp"] == "2" and params["layers"] == str(config["num_hidden_layers"])
    # A short config again: the note goes, the link holds it.
    page.fill("#sizer-config-text", (CONFIGS / "llama-3-8b" / "config.json").read_text("utf-8"))
    page.wait_for_function("() => location.search.includes('config=')")
    assert note.inner_text() == ""


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_an_old_link_and_a_broken_config_in_a_link_still_open(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, f"{base_url}/{lang}/sizer/?{urlencode({'params': '70e9', 'tp': '4'})}")
    assert page.locator("#sizer-params").input_value() == "70e9"
    assert page.locator("#sizer-tp").input_value() == "4"
    assert page.locator("#sizer-train-method").input_value() == "full"
    assert page.locator("#sizer-config-text").input_value() == ""
    assert page.locator("#sizer-results").get_attribute("data-state") == "ok"
    query = {"params": "70e9", "config": "bm90IGEgY29uZmln", "train_method": "lora"}
    _open(page, f"{base_url}/{lang}/sizer/?{urlencode(query)}")
    status = page.locator("#sizer-config-status")
    assert status.get_attribute("data-reason") == "link_config_unreadable"
    assert status.inner_text() == _message(
        page, '#sizer-messages [data-config-reason="link_config_unreadable"]'
    )
    assert page.locator("#sizer-params").input_value() == "70e9"
    assert page.locator("#sizer-train-method").input_value() == "lora"
    assert page.locator("#sizer-results").get_attribute("data-state") == "ok"


# ---------------------------------------------------------------------------------------------
# Errors at the field
# ---------------------------------------------------------------------------------------------


def _field_error(page: Any, field_id: str) -> Any:
    return (
        page.locator(f"#{field_id}")
        .locator("xpath=ancestor::*[contains(@class, 'sizer-field')][1]")
        .locator(".sizer-field-error")
    )


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_each_error_is_said_under_its_field_and_goes_when_fixed(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, f"{base_url}/{lang}/sizer/")
    page.fill("#sizer-params", "seven")
    page.fill("#sizer-days", "-1")
    for field_id, key in (("sizer-params", "params"), ("sizer-days", "days")):
        field = page.locator(f"#{field_id}")
        line = _field_error(page, field_id)
        assert line.count() == 1 and line.is_visible()
        assert field.get_attribute("aria-invalid") == "true"
        assert line.get_attribute("id") in (field.get_attribute("aria-describedby") or "").split()
        # The same words as the list below the figures, which stays.
        item = page.locator(f'#sizer-error-list li[data-field="{key}"]')
        assert item.inner_text() == line.inner_text()
        label = page.locator(f'label[for="{field_id}"]').inner_text().strip()
        assert line.inner_text().startswith(label)
        # Under the field, and well above the list.
        field_box, line_box = field.bounding_box(), line.bounding_box()
        assert 0 <= line_box["y"] - (field_box["y"] + field_box["height"]) < 40
    page.fill("#sizer-params", "7e9")
    assert _field_error(page, "sizer-params").count() == 0
    assert page.locator("#sizer-params").get_attribute("aria-invalid") is None
    assert page.locator("#sizer-params").get_attribute("aria-describedby") is None
    assert _field_error(page, "sizer-days").count() == 1
    page.fill("#sizer-days", "3")
    assert page.locator(".sizer-field-error").count() == 0
    # A field with its own help keeps it, beside its error and after.
    help_id = "sizer-state-bytes-help"
    page.fill("#sizer-state-bytes", "x")
    described = (page.locator("#sizer-state-bytes").get_attribute("aria-describedby") or "").split()
    assert help_id in described and len(described) == 2
    page.fill("#sizer-state-bytes", "0")
    assert page.locator("#sizer-state-bytes").get_attribute("aria-describedby") == help_id


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_grouping_comma_is_told_as_a_grouping_in_each_language(
    page: Any, base_url: str, lang: str
) -> None:
    _open(page, f"{base_url}/{lang}/sizer/")
    comma_is_decimal = lang == "id"
    page.fill("#sizer-tokens", "16,384")
    item = page.locator('#sizer-error-list li[data-field="tokens"]')
    line = _field_error(page, "sizer-tokens")
    if comma_is_decimal:
        # 16,384 may be sixteen and a fraction there: the grammar's own ambiguity.
        assert item.get_attribute("data-reason") == "ambiguous_separator"
        assert line.get_attribute("data-message") == "ambiguous_separator"
    else:
        # The grammar reads no number (its reason is the one about suffixes, as the CLI's);
        # the page says what was typed wrong: the comma groups digits.
        assert item.get_attribute("data-reason") == "not_token_count"
        assert line.get_attribute("data-message") == "grouped_comma"
        text = line.inner_text()
        assert "16384" in text and "16_384" in text
        suffixes = _message(page, '#sizer-messages [data-reason="not_token_count"]')
        assert suffixes not in text
    for typed, key in (("1.000.000", "grouped_dot"), ("1,000,000", "grouped_comma")):
        page.fill("#sizer-tokens", typed)
        assert line.get_attribute("data-message") == key
        assert "1000000" in line.inner_text() and "{" not in line.inner_text()
    page.fill("#sizer-tokens", "16384")
    assert line.count() == 0


# ---------------------------------------------------------------------------------------------
# A config that does not read yet: the last figures stay, marked stale
# ---------------------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_half_typed_config_keeps_the_last_figures_marked_stale(
    page: Any, base_url: str, lang: str
) -> None:
    config = (CONFIGS / "llama-3-8b" / "config.json").read_text("utf-8")
    _open(page, f"{base_url}/{lang}/sizer/")
    page.fill("#sizer-config-text", config)
    results, note = page.locator("#sizer-results"), page.locator("#sizer-stale-note")
    shown = page.evaluate(_SHOWN)
    rows = page.locator("#sizer-candidates tbody tr").count()
    assert results.get_attribute("data-stale") is None and note.inner_text() == ""
    assert rows > 0
    page.fill("#sizer-config-text", config[: len(config) // 2])
    assert page.locator("#sizer-config-status").get_attribute("data-state") == "error"
    assert results.get_attribute("data-stale") == "true"
    assert results.get_attribute("data-state") == "stale"
    assert note.is_visible() and note.get_attribute("aria-live") == "polite"
    assert note.inner_text() == _message(page, '#sizer-messages [data-text="stale"]')
    for key in ("sizer-results", "sizer-kv-kinds", "memory-chart-text", "sizer-candidates"):
        assert page.evaluate(_SHOWN)[key] == shown[key], key
    assert page.locator("#sizer-candidates").get_attribute("data-stale") == "true"
    # The config reads again: fresh figures.
    page.fill("#sizer-config-text", config)
    assert results.get_attribute("data-stale") is None and note.inner_text() == ""
    assert results.get_attribute("data-state") == "ok"
    assert page.evaluate(_SHOWN)["sizer-results"] == shown["sizer-results"]
    # Or a field is edited: fresh figures of the fields.
    page.fill("#sizer-config-text", config[:10])
    assert results.get_attribute("data-stale") == "true"
    page.fill("#sizer-sequences", "2")
    assert results.get_attribute("data-stale") is None and note.inner_text() == ""
    assert page.locator("#sizer-candidates").get_attribute("data-stale") is None
    assert page.evaluate(_SHOWN)["sizer-results"] != shown["sizer-results"]
