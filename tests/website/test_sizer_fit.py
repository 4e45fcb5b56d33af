"""The sizer's "solve for" section, built and in headless Chromium, against
`iteragpu.parallel.fit`: a published model chosen by name, a catalogue card chosen in the
page, the most sequences at the page's tokens (and the longest context for its sequences) and
vLLM's flags equal to Python's answer at the page's own inputs, in the reader's language."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.gpus.declared import declared_cards
from iteragpu.i18n.numbers import format_number
from iteragpu.parallel.fit import FitRequest, fit
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitRequest

from .conftest import LANGS

PRESET = "llama-3.1-8b"
CARD = "rtx-4090"


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("solve", ["sequences", "tokens"])
def test_the_answer_and_flags_are_pythons(page: Any, base_url: str, lang: str, solve: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    page.select_option("#sizer-preset", PRESET)
    page.select_option("#sizer-fit-card", CARD)
    page.select_option("#sizer-fit-solve", solve)
    assert page.locator("#sizer-fit").get_attribute("data-state") == "ok"
    inputs: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-sizer-key]'))
            .map(el => [el.dataset.sizerKey, el.value]))"""
    )
    capacity = next(c[2] for c in declared_cards() if c[0] == CARD)
    assert capacity is not None
    answer = fit(
        FitRequest(
            PRESET,
            "vllm",
            capacity,
            tokens=int(inputs["tokens"]) if solve == "sequences" else None,
            sequences=int(inputs["sequences"]) if solve == "tokens" else None,
            reserve_gib=Fraction(inputs["reserve_gib"]),
            utilization="1.0",
        )
    )
    status = page.locator("#sizer-fit [data-fit-status]").inner_text()
    assert format_number(answer.tokens, 0, lang) in status
    assert format_number(answer.sequences, 0, lang) in status
    flags = page.locator("#sizer-fit [data-fit-flags]").inner_text()
    expected = " ".join(f"{name} {value}".strip() for name, value in answer.flags)
    assert flags == f"vllm serve MODEL {expected}"


def _open_with_card(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    page.select_option("#sizer-preset", PRESET)
    page.select_option("#sizer-fit-card", CARD)


def _described_by(page: Any, selector: str) -> str:
    """The text of the elements `selector`'s aria-describedby names, joined."""
    text: str = page.evaluate(
        """(selector) => (document.querySelector(selector).getAttribute('aria-describedby')
            || '').split(' ').filter(Boolean)
            .map(id => document.getElementById(id).textContent).join(' ')""",
        selector,
    )
    return text


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_the_budget_is_spent_in_figures_and_the_reserve_is_pythons(
    page: Any, base_url: str, lang: str
) -> None:
    """capacity x utilization = budget, less the weights and the reserve, left in blocks: each
    figure Python's, at the reserve typed (as `iteragpu fit --reserve-gib`)."""
    _open_with_card(page, base_url, lang)
    page.select_option("#sizer-fit-solve", "tokens")
    sentences = []
    for reserve in ("0", "0.9"):
        page.fill("#sizer-reserve", reserve if lang == "ko" else reserve.replace(".", ","))
        assert page.locator("#sizer-fit").get_attribute("data-state") == "ok"
        inputs = page.evaluate(
            """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-sizer-key]'))
                .map(el => [el.dataset.sizerKey, el.value]))"""
        )
        capacity = next(c[2] for c in declared_cards() if c[0] == CARD)
        assert capacity is not None
        answer = fit(
            FitRequest(
                PRESET,
                "vllm",
                capacity,
                sequences=int(inputs["sequences"]),
                reserve_gib=Fraction(reserve),
            )
        )
        assert answer.utilization == "1.0"  # vLLM's default, which the page starts from
        status = page.locator("#sizer-fit [data-fit-status]").inner_text()
        spent = page.locator("#sizer-fit [data-fit-budget]").inner_text()
        assert format_number(answer.tokens, 0, lang) in status
        rank = answer.ranks[0]
        for figure in (Fraction(capacity), rank.room_bytes[0], Fraction(reserve) * 2**30):
            assert format_number(figure / 2**30, 2, lang) in spent, (figure, spent)
        assert format_number(Fraction(rank.fixed_bytes) / 2**30 - Fraction(reserve), 2, lang) in (
            spent
        )
        assert answer.blocks is not None
        assert format_number(answer.blocks[0], 0, lang) in spent
        assert format_number(Fraction(1), 1, lang) in spent  # the utilization, 1.0 / 1,0
        sentences.append(spent)
    assert sentences[0] != sentences[1]
    # the field says where its default comes from
    note = _described_by(page, "#sizer-fit-utilization")
    assert "0.92" in note.replace(",", ".") and "1.0" in note.replace(",", ".")


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_a_load_that_does_not_fit_says_what_the_fullest_gpu_lacks(
    page: Any, base_url: str, lang: str
) -> None:
    _open_with_card(page, base_url, lang)
    page.select_option("#sizer-fit-solve", "sequences")
    page.fill("#sizer-reserve", "20")
    box = page.locator("#sizer-fit")
    assert box.get_attribute("data-state") == "refused"
    inputs = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-sizer-key]'))
            .map(el => [el.dataset.sizerKey, el.value]))"""
    )
    capacity = next(c[2] for c in declared_cards() if c[0] == CARD)
    assert capacity is not None
    with pytest.raises(InputError) as refused:
        fit(
            FitRequest(
                PRESET,
                "vllm",
                capacity,
                tokens=int(inputs["tokens"]),
                reserve_gib=Fraction(20),
            )
        )
    assert refused.value.reason == "fit_does_not_fit"
    lack = refused.value.values["lack"]
    status = box.locator("[data-fit-status]").inner_text()
    assert format_number(Fraction(lack), 2, lang) in status, (lack, status)
    assert "{" not in status
    assert box.locator("[data-fit-flags]").inner_text() == ""
    # how the card's memory was spent: the budget, the weights, the reserve typed
    spent = box.locator("[data-fit-budget]").inner_text()
    plan = plan_split(SplitRequest(PRESET, int(inputs["tokens"]), 1, runtime="vllm"))
    weights = plan.ranks[0].weights_bytes
    for figure in (Fraction(capacity), weights, Fraction(20 * 2**30)):
        assert format_number(figure / 2**30, 2, lang) in spent, (figure, spent)
    assert "{" not in spent


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    ("field", "value", "selector"),
    [
        ("#sizer-tp", "3", "#sizer-tp"),  # vLLM refuses: 32 heads over TP 3
        ("#sizer-tp", "0", "#sizer-tp"),  # not a positive count
        ("#sizer-pp", "x", "#sizer-pp"),
        ("#sizer-fit-utilization", "1.5", "#sizer-fit-utilization"),
    ],
)
def test_a_refused_field_is_marked_and_its_message_filled(
    page: Any, base_url: str, lang: str, field: str, value: str, selector: str
) -> None:
    _open_with_card(page, base_url, lang)
    assert page.locator("#sizer-fit").get_attribute("data-state") == "ok"
    page.fill(field, value)
    fit_box = page.locator("#sizer-fit")
    assert fit_box.get_attribute("data-state") == "refused"
    choose = page.locator('#sizer-fit-messages [data-fit-text="choose_card"]').text_content()
    for box in ("#sizer-fit", "#sizer-split"):
        status = page.locator(f"{box} [role=status]").inner_text()
        assert "{" not in status and "}" not in status, status
        assert "reason_" not in status
        assert choose.strip() not in status  # a card is chosen
    assert page.locator(selector).get_attribute("aria-invalid") == "true"
    said = _described_by(page, selector)
    assert said.strip() and "{" not in said
    if value == "3":
        assert "32" in said and "3" in said
    # the card is not blamed
    assert page.locator("#sizer-fit-card").get_attribute("aria-invalid") is None
    # set right again, nothing stays marked
    page.fill(field, "1")
    assert fit_box.get_attribute("data-state") == "ok"
    assert page.locator(selector).get_attribute("aria-invalid") is None


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_no_card_chosen_marks_the_card(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/sizer/")
    page.wait_for_selector("#sizer-results[data-state]", state="attached")
    page.select_option("#sizer-preset", PRESET)
    card = page.locator("#sizer-fit-card")
    assert card.get_attribute("aria-invalid") == "true"
    assert _described_by(page, "#sizer-fit-card").strip() == (
        page.locator('#sizer-fit-messages [data-fit-text="choose_card"]').text_content().strip()
    )
    page.select_option("#sizer-fit-card", CARD)
    assert card.get_attribute("aria-invalid") is None
