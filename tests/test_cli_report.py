"""`iteragpu report`: a lab result read back phase by phase, with the estimate beside it.

The results are written by the lab itself (`mesure_memoire.py measure`) on its test-only fake
backends (tests/lab/lab_support.py): their counters are synthetic, not a measurement.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from lab_support import (
    RESULT_1_0_0,
    SimulatedBackend,
    fake_factory,
    make_clock,
    unreadable_reserved,
    validation_argv,
)
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.catalogue import translate
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import message
from iteragpu.i18n.numbers import format_number
from iteragpu.lab import mesure_memoire as mm

PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")
COUNTERS = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)
DEVICE = {
    "index": 0,
    "name": "SIMULATED GPU",
    "total_memory_bytes": 80 * 2**30,
    "compute_capability": None,
    "free_bytes": None,
    "mem_get_info_total_bytes": None,
    "requested": True,
    "uuid": None,
    "pci_bus_id": None,
    "arch_name": None,
}


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), prog_name="iteragpu")


def _with_device(factory: Callable[[Any], Any], device: bool = True) -> Callable[[Any], Any]:
    """The fake backend, reporting one device in its environment (or none)."""

    def build(args: Any) -> Any:
        backend = factory(args)
        backend.environment["devices"] = [DEVICE] if device else []
        return backend

    return build


def lab_result(tmp_path: Path, kind: str) -> Path:
    """A result the lab writes: `simulated` (ok), `oom`, `nulls` or `no_device`."""
    factories = {
        "simulated": _with_device(SimulatedBackend),
        "oom": _with_device(fake_factory(fail_on_forward=1)),
        "nulls": _with_device(unreadable_reserved),
        "no_device": _with_device(SimulatedBackend, device=False),
    }
    out = tmp_path / f"{kind}.json"
    mm.main(validation_argv(out), backend_factory=factories[kind], clock=make_clock())
    assert out.is_file()
    return out


def _report_json(path: Path, *extra: str) -> dict[str, Any]:
    result = invoke("report", str(path), "--json", *extra)
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def _recorded(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def _model_load_end(recorded: dict[str, Any]) -> int:
    (record,) = [p for p in recorded["phases"] if p["phase"] == "model_load"]
    value: int = record["end_allocated_bytes"]
    return value


@pytest.mark.parametrize("lang", CODES)
def test_a_successful_run_shows_every_phase_and_counter(tmp_path: Path, lang: str) -> None:
    path = lab_result(tmp_path, "simulated")
    recorded = _recorded(path)
    result = invoke("report", str(path), "--lang", lang)
    assert result.exit_code == 0, result.output
    text = result.stdout
    for phase in PHASES:
        assert phase in text
    for key in COUNTERS:
        assert message("counter_" + key, lang) in text
    for record in recorded["phases"]:
        for key in COUNTERS:
            assert format_number(record[key], 0, lang) in text
    assert message("not_measured", lang) not in text
    assert message("explain_context", lang) in text


def test_the_estimate_from_the_recorded_network_beside_model_load(tmp_path: Path) -> None:
    path = lab_result(tmp_path, "simulated")
    recorded = _recorded(path)
    network = recorded["network"]
    # The estimate, computed here from the tensors: numel x element size.
    estimate = sum(t["numel"] for t in network["parameter_tensors"]) * network["element_size_bytes"]
    measured = _model_load_end(recorded)
    payload = _report_json(path)["estimate"]
    assert payload["from_result"] is True
    assert payload["estimated_weights_bytes"] == estimate
    assert payload["model_load_allocated_bytes"] == measured
    assert payload["difference_bytes"] == measured - estimate
    # 768 / 132,864 never ends: written to 20 decimal places
    share = Fraction(measured - estimate, estimate)
    assert abs(Fraction(payload["difference_share"]) - share) <= Fraction(1, 2 * 10**20)
    assert Fraction(payload["estimated_weights_gib"]) == Fraction(estimate, 2**30)
    # The simulated allocator rounds every tensor to 512 B blocks, and nothing else.
    rounding = sum(-(-t["numel"] * 4 // 512) * 512 for t in network["parameter_tensors"])
    assert payload["block_rounding_bytes"] == rounding - estimate
    assert payload["unexplained_bytes"] == measured - rounding == 0
    workspace = recorded["prediction"]["cold_forward_unexplained_bytes"]
    assert payload["cold_forward_unexplained_bytes"] == workspace > 0


@pytest.mark.parametrize("lang", CODES)
def test_the_given_estimate_beside_model_load(tmp_path: Path, lang: str) -> None:
    path = lab_result(tmp_path, "simulated")
    measured = _model_load_end(_recorded(path))
    estimate = 7_000_000_000 * 16 // 8
    payload = _report_json(path, "--params", "7e9", "--bits", "16")["estimate"]
    assert payload["estimated_weights_bytes"] == estimate
    assert payload["difference_bytes"] == measured - estimate
    # another model's estimate: the lab's rounding of its own tensors explains none of it
    assert payload["block_rounding_bytes"] is None
    assert payload["unexplained_bytes"] == measured - estimate
    text = invoke("report", str(path), "--params", "7e9", "--bits", "16", "--lang", lang).stdout
    assert "-" + format_number(estimate - measured, 0, lang) in text
    assert message("explain_rounding_not_attributable", lang) in text
    share = format_number(Fraction(measured - estimate, estimate) * 100, 2, lang)
    assert message("report_share", lang, share=share) in text


@pytest.mark.parametrize("lang", CODES)
def test_a_failed_phase_is_marked_out_of_memory(tmp_path: Path, lang: str) -> None:
    path = lab_result(tmp_path, "oom")
    result = invoke("report", str(path), "--lang", lang)
    assert result.exit_code == 0, result.output
    failed = message("phase_status_failed", lang)
    oom = message("report_out_of_memory", lang)
    assert f"cold_forward: {failed}: {oom}: " in result.stdout
    (record,) = [p for p in _report_json(path)["phases"] if p["status"] == "failed"]
    assert record["phase"] == "cold_forward"
    assert record["error"]["out_of_memory"] is True


@pytest.mark.parametrize("lang", CODES)
def test_null_counters_are_not_measured_never_zero(tmp_path: Path, lang: str) -> None:
    path = lab_result(tmp_path, "nulls")
    result = invoke("report", str(path), "--lang", lang)
    assert result.exit_code == 0, result.output
    not_measured = message("not_measured", lang)
    for label in ("counter_start_reserved_bytes", "counter_end_reserved_bytes"):
        rows = [line for line in result.stdout.splitlines() if message(label, lang) in line]
        assert len(rows) == len(_recorded(path)["phases"])
        assert all(row.rstrip().endswith(not_measured) for row in rows), rows
    payload = _report_json(path)
    for record in payload["phases"]:
        assert record["start_reserved_bytes"] is None and record["start_reserved_gib"] is None
    assert payload["estimate"]["model_load_cached_bytes"] is None


@pytest.mark.parametrize("lang", CODES)
def test_a_device_missing_from_the_environment_is_one_line_exit_2(
    tmp_path: Path, lang: str
) -> None:
    path = lab_result(tmp_path, "no_device")
    for extra in ([], ["--json"]):
        result = invoke("report", str(path), "--lang", lang, *extra)
        assert result.exit_code == 2
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"iteragpu: {translate('error', lang)}: {path}: ")
        assert "environment.devices" in line


@pytest.mark.parametrize("lang", CODES)
def test_old_schema_1_0_0_has_no_predictions(lang: str) -> None:
    result = invoke("report", str(RESULT_1_0_0), "--lang", lang)
    assert result.exit_code == 0, result.output
    assert message("report_no_prediction", lang, schema="1.0.0") in result.stdout
    payload = _report_json(RESULT_1_0_0)
    assert payload["schema_version"] == "1.0.0"
    assert all(p["predicted_end_allocated_bytes"] is None for p in payload["phases"])
    assert payload["estimate"]["cold_forward_unexplained_bytes"] is None
    oom = message("report_out_of_memory", lang)
    assert f"warmup: {message('phase_status_failed', lang)}: {oom}: " in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["report", "absent.json"],
        ["report", str(RESULT_1_0_0), "--params", "7e9"],
        ["report", str(RESULT_1_0_0), "--params", "7e9", "--bits", "-4"],
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1


def _objects(value: Any) -> Any:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


@pytest.mark.parametrize("kind", ["simulated", "oom", "nulls"])
def test_json_keys_name_their_unit(tmp_path: Path, kind: str) -> None:
    path = lab_result(tmp_path, kind)
    result = invoke("report", str(path), "--json", "--params", "13000000001", "--bits", "4.5")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert result.stdout == json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    assert payload["estimate"]["estimated_weights_bytes_exact"] == "7312500000.5625"
    assert payload["estimate"]["estimated_weights_bytes"] == 7_312_500_001
    for obj in _objects(payload):
        for key, value in obj.items():
            if key.endswith("_bytes"):
                assert value is None or type(value) is int, (key, value)
            if key.endswith("_gib"):
                stem = key.removesuffix("_gib")
                exact = obj.get(f"{stem}_bytes_exact", obj.get(f"{stem}_bytes"))
                expected = None if exact is None else Fraction(exact) / 2**30
                assert value is None if expected is None else Fraction(value) == expected, key
