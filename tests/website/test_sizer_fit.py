"""The sizer's "solve for" section, built and in headless Chromium, against
`iteragpu.parallel.fit`: a published model chosen by name, a catalogue card chosen in the
page, the most sequences at the page's tokens (and the longest context for its sequences) and
vLLM's flags equal to Python's answer at the page's own inputs, in the reader's language."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from iteragpu.gpus.declared import declared_cards
from iteragpu.i18n.numbers import format_number
from iteragpu.parallel.fit import FitRequest, fit

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
