"""The results page's example files: still what the lab writes on its simulated backend (so
never a hand-edited or real measurement), valid for the CLI, and labelled as an example in their
own device name with the page's words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from results_support import example_result, train_example_results, without_machine

from iteragpu.docs_tools.results_page import (
    EXAMPLE_DEVICE,
    TRAIN_RANKS,
    example_path,
    train_example_path,
)
from iteragpu.gpus.evidence import read_lab_result
from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("lang", CODES)
def test_the_example_is_what_the_simulated_lab_writes(tmp_path: Path, lang: str) -> None:
    stored = json.loads(example_path(lang).read_text("utf-8"))
    assert without_machine(stored) == without_machine(example_result(tmp_path, lang)), (
        "rewrite the examples: python tests/results_support.py --write"
    )


@pytest.mark.parametrize("lang", CODES)
def test_the_example_is_a_valid_result_in_its_language(lang: str) -> None:
    result = read_lab_result(example_path(lang))
    assert result.evidence.device_name == EXAMPLE_DEVICE[lang]
    assert json.loads(example_path(lang).read_text("utf-8"))["language"] == lang
    # Nothing of a real machine: no capacity, driver or PyTorch was read.
    assert result.evidence.reported_capacity_bytes is None


@pytest.mark.parametrize("lang", CODES)
def test_the_example_is_labelled_with_the_pages_words(lang: str) -> None:
    page = (ROOT / "docs" / lang / "docs" / "results.md").read_text("utf-8")
    label = re.search(r'<span data-text="example_label">([^<]+)</span>', page)
    assert label is not None
    assert label.group(1) in EXAMPLE_DEVICE[lang]
    button = re.search(r'<button[^>]*id="results-example"[^>]*>([^<]+)</button>', page)
    assert button is not None and label.group(1) in button.group(1)


@pytest.mark.parametrize("lang", CODES)
def test_the_training_example_is_what_the_simulated_recorder_writes(
    tmp_path: Path, lang: str
) -> None:
    written = train_example_results(tmp_path, lang)
    for rank, result in zip(TRAIN_RANKS, written, strict=True):
        stored = json.loads(train_example_path(lang, rank).read_text("utf-8"))
        assert without_machine(stored) == without_machine(result), (
            "rewrite the examples: python tests/results_support.py --write"
        )
        read = read_lab_result(train_example_path(lang, rank))
        assert (read.rank, read.world_size, read.task) == (rank, 2, "recorder")
        assert read.evidence.device_name == EXAMPLE_DEVICE[lang]
        assert stored["counters_source"] == "injected"  # never a measurement


@pytest.mark.parametrize("lang", CODES)
def test_the_training_example_is_labelled_with_the_pages_words(lang: str) -> None:
    page = (ROOT / "docs" / lang / "docs" / "results.md").read_text("utf-8")
    label = re.search(r'<span data-text="example_label">([^<]+)</span>', page)
    assert label is not None
    rank = re.search(r'<span data-text="example_rank_label">([^<]+)</span>', page)
    assert rank is not None and label.group(1) in rank.group(1)
    button = re.search(r'<button[^>]*id="results-example-train"[^>]*>([^<]+)</button>', page)
    assert button is not None and label.group(1) in button.group(1)
