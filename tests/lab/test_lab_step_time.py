"""The step-time example the cost and batch guides show (snippets/lab_step_time.<code>.py): run
as a reader runs it, on a copy of the results page's training example (synthetic counters, its
durations set here by hand), it prints each step's time, the sum of that step's phases only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iteragpu.docs_tools.results_page import example_path, train_example_path
from iteragpu.i18n.languages import CODES

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"
# What each language's example prints for a step (its label) and for the first step (its note).
STEP_WORD = {"ko": "스텝", "id": "langkah"}


def run(lang: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SNIPPETS / f"lab_step_time.{lang}.py"), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )


def timed_copy(lang: str, folder: Path, **durations: int) -> Path:
    """The training example with every phase of step N lasting durations[f"step{N}"] ns and the
    phases outside the steps (model_load, inputs) lasting far longer, so that counting them
    would show."""
    result = json.loads(train_example_path(lang, 0).read_text("utf-8"))
    for phase in result["phases"]:
        step = phase["step"]
        phase["duration_ns"] = 7 * 10**9 if step is None else durations[f"step{step}"]
    path = folder / "timed.json"
    path.write_text(json.dumps(result), "utf-8")
    return path


@pytest.mark.parametrize("lang", CODES)
def test_each_step_is_the_sum_of_its_phases(lang: str, tmp_path: Path) -> None:
    # Five phases per step (forward, loss, backward, optimizer_step, zero_grad):
    # 5 x 0.4 s = 2 s for the first step, 5 x 0.1 s = 0.5 s for the second.
    path = timed_copy(lang, tmp_path, step1=400_000_000, step2=100_000_000)
    done = run(lang, path)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    word = STEP_WORD[lang]
    assert first.startswith(f"{path}: {word} 1: 2.000 s (")
    assert second == f"{path}: {word} 2: 0.500 s"


@pytest.mark.parametrize("lang", CODES)
def test_a_forward_result_has_no_step_to_time(lang: str) -> None:
    done = run(lang, example_path(lang))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


@pytest.mark.parametrize("lang", CODES)
def test_a_step_with_a_failed_phase_is_refused_in_one_line(lang: str, tmp_path: Path) -> None:
    path = timed_copy(lang, tmp_path, step1=1, step2=1)
    result = json.loads(path.read_text("utf-8"))
    failed = next(p for p in result["phases"] if p["phase"] == "backward" and p["step"] == 2)
    failed["status"] = "failed"
    path.write_text(json.dumps(result), "utf-8")
    done = run(lang, path)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "backward" in done.stderr
