"""`iteragpu report` on training results (lab schema 1.3.0): the lab's step and the Recorder's
ranks, written by the lab itself on its test-only simulated allocator (their counters are
synthetic, not a measurement): parts per phase, the prediction, the first step beside the warm
ones, several ranks side by side, and the estimate of `iteragpu train` item by item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from results_support import rank_results, train_result
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import message
from iteragpu.i18n.numbers import format_number
from iteragpu.training.groups import Group, group_states
from iteragpu.training.records import TrainRequest


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), prog_name="iteragpu")


def report_json(*args: str) -> dict[str, Any]:
    done = invoke("report", *args, "--json")
    assert done.exit_code == 0, done.output
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


@pytest.mark.parametrize("lang", CODES)
def test_a_training_step_shows_its_parts_prediction_and_steps(tmp_path: Path, lang: str) -> None:
    path = train_result(tmp_path, lang)
    recorded = json.loads(path.read_text("utf-8"))
    done = invoke("report", str(path), "--lang", lang)
    assert done.exit_code == 0, done.output
    text = done.stdout
    for key in ("report_model_state_title", "report_parts_title", "report_steps_title"):
        assert message(key, lang) in text
    for record in recorded["phases"]:
        parts = record["parts"]
        for key in ("gradients_allocated_bytes", "activations_and_temporaries_bytes"):
            assert format_number(parts[key], 0, lang) in text
        predicted = record["parts_prediction"]["model_state_allocated_bytes"]
        assert format_number(predicted, 0, lang) in text
    assert "backward (1)" in text and "backward (3)" in text
    assert message("report_task_line", lang, task="train", rank="0", world="1") in text


def test_the_json_carries_each_phase_with_its_step_and_parts(tmp_path: Path) -> None:
    path = train_result(tmp_path)
    recorded = json.loads(path.read_text("utf-8"))
    payload = report_json(str(path))
    assert (payload["task"], payload["rank"], payload["world_size"]) == ("train", 0, 1)
    for shown, record in zip(payload["phases"], recorded["phases"], strict=True):
        assert shown["step"] == record["step"] and shown["parts"] == record["parts"]
        assert shown["model_state_difference_bytes"] == 0
        assert (
            shown["predicted_model_state_bytes"]
            == (record["parts_prediction"]["model_state_allocated_bytes"])
        )
    assert payload["train_estimate"] is None


@pytest.mark.parametrize(
    ("optimizer", "precision", "fused"),
    [("adamw", "fp32", False), ("adamw", "fp32", True), ("sgd", "fp32", False)],
)
def test_the_train_estimate_beside_the_counted_bytes(
    tmp_path: Path, optimizer: str, precision: str, fused: bool
) -> None:
    """The run is AdamW (not fused): its estimate agrees to the byte; another optimizer's, or the
    fused mode's (its `step` on the GPU), differs by exactly what that choice changes."""
    path = train_result(tmp_path)
    recorded = json.loads(path.read_text("utf-8"))
    extra = ["--optimizer", optimizer, "--precision", precision, *(["--fused"] if fused else [])]
    items = {i["item"]: i for i in report_json(str(path), *extra)["train_estimate"]["items"]}
    groups = [
        Group(tuple(g["shape"]), g["dtype"], g["trainable"], g["count"])
        for g in recorded["parameter_groups"]
    ]
    stated = group_states(
        groups, TrainRequest(precision=precision, optimizer=optimizer, fused=fused)
    )
    (step,) = [p for p in recorded["phases"] if (p["phase"], p["step"]) == ("optimizer_step", 1)]
    parts = step["parts"]
    assert (
        items["gradients"]["estimated_bytes"] == stated.gradient_bytes == parts["gradients_bytes"]
    )
    assert items["gradients"]["difference_bytes"] == 0
    assert items["optimizer_gpu"]["measured_bytes"] == parts["optimizer_state_bytes"]
    assert items["optimizer_host"]["measured_bytes"] == parts["optimizer_state_host_bytes"] == 24
    differences = (
        items["optimizer_gpu"]["difference_bytes"],
        items["optimizer_host"]["difference_bytes"],
    )
    if optimizer == "sgd":
        assert differences == (parts["optimizer_state_bytes"], 24)  # SGD keeps no state
    elif fused:
        assert differences == (-24, 24)  # six 4-byte `step`s the fused mode keeps on the GPU
    else:
        assert differences == (0, 0)


@pytest.mark.parametrize("lang", CODES)
def test_ranks_side_by_side_name_the_highest_peak(tmp_path: Path, lang: str) -> None:
    paths = rank_results(tmp_path, lang)
    recorded = [json.loads(p.read_text("utf-8")) for p in paths]
    done = invoke("report", *map(str, paths), "--lang", lang)
    assert done.exit_code == 0, done.output
    peaks = [(max(ph["peak_allocated_bytes"] for ph in r["phases"]), r["rank"]) for r in recorded]
    peak, rank = max(peaks)
    assert rank == 1
    (phase,) = [
        f"{ph['phase']} ({ph['step']})" if ph["step"] else ph["phase"]
        for ph in recorded[1]["phases"]
        if ph["peak_allocated_bytes"] == peak
    ][:1]
    said = message(
        "report_highest_peak",
        lang,
        rank=format_number(rank, 0, lang),
        path=str(paths[1]),
        peak=format_number(peak, 0, lang),
        phase=phase,
    )
    assert said in done.stdout
    assert message("report_side_by_side_title", lang) in done.stdout
    assert message("report_no_network", lang) in done.stdout  # a Recorder's: no lab network
    payload = report_json(*map(str, paths))
    assert [r["rank"] for r in payload["results"]] == [0, 1]
    assert payload["highest_peak"] == {
        "path": str(paths[1]),
        "rank": 1,
        "phase": phase,
        "peak_allocated_bytes": peak,
    }


def test_a_recorder_result_takes_a_given_weights_estimate(tmp_path: Path) -> None:
    path = rank_results(tmp_path)[0]
    payload = report_json(str(path), "--params", "1000", "--bits", "16")
    assert payload["estimate"]["estimated_weights_bytes"] == 2000
    assert payload["estimate"]["from_result"] is False
    assert report_json(str(path))["estimate"] is None


def _edited(tmp_path: Path, name: str, edit: Any) -> Path:
    source = json.loads(train_result(tmp_path).read_text("utf-8"))
    edit(source)
    path = tmp_path / name
    path.write_text(json.dumps(source), encoding="utf-8")
    return path


def _set_rank(result: dict[str, Any]) -> None:
    result["rank"] = 3


def _cpu(result: dict[str, Any]) -> None:
    result["device"] = "cpu"


def _inflated_rest(result: dict[str, Any]) -> None:
    result["phases"][3]["parts"]["activations_and_temporaries_bytes"] += 512


def _shrunk_rounding(result: dict[str, Any]) -> None:
    parts = result["phases"][0]["parts"]
    parts["parameters_allocated_bytes"] = parts["parameters_bytes"] - 1


@pytest.mark.parametrize("edit", [_set_rank, _cpu, _inflated_rest, _shrunk_rounding])
def test_a_result_whose_readings_cannot_be_true_is_one_line_exit_2(
    tmp_path: Path, edit: Any
) -> None:
    path = _edited(tmp_path, "edited.json", edit)
    done = invoke("report", str(path))
    assert done.exit_code == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and str(path) in done.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ["--precision", "fp32"],
        ["--optimizer", "adamw"],
        ["--fused"],
        ["--precision", "fp32", "--optimizer", "adafactor", "--fused"],
        ["--precision", "fp32", "--optimizer", "lion"],
    ],
)
def test_bad_train_options_are_one_line_exit_2(tmp_path: Path, extra: list[str]) -> None:
    path = train_result(tmp_path)
    done = invoke("report", str(path), *extra)
    assert done.exit_code == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
