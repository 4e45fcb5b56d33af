"""With PyTorch installed (CPU build here): measure refuses CPU-only machines and `cpu`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from foreign_text import english_sentences
from lab_support import (
    VALIDATION_PHASES,
    FakeCounterSource,
    make_clock,
    notebook_namespace,
    run_script,
)

from iteragpu.i18n.languages import CODES
from iteragpu.lab import mesure_memoire as mm

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def torch():  # type: ignore[no-untyped-def]
    return pytest.importorskip("torch")


@pytest.fixture
def cpu_only(torch):  # type: ignore[no-untyped-def]
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: these checks are for CPU-only machines")
    return torch


MEASURE = ["--batch", "1", "--context", "16", "--width", "64", "--dtype", "float32"]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("device", ["cuda:0", "cuda", "cpu", "cuda:7"])
def test_measure_exits_2_and_writes_nothing(
    cpu_only, tmp_path: Path, device: str, lang: str
) -> None:  # type: ignore[no-untyped-def]
    done = run_script(
        *["measure", "--device", device, *MEASURE, "--output", "m.json", "--lang", lang],
        cwd=tmp_path,
        isolated=False,
    )
    assert done.returncode == 2, done.stderr
    assert list(tmp_path.iterdir()) == []
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    if device == "cpu":
        problem = mm.say(lang, "device_not_gpu", device="'cpu'")
    else:
        key = "cpu_only_build" if cpu_only.version.cuda is None else "sees_no_gpu"
        problem = mm.say(lang, key, version=cpu_only.__version__)
    nothing = mm.say(lang, "nothing_written", problem=problem)
    assert lines == [mm.error_line(lang, "mesure_memoire.py", nothing)]
    assert english_sentences(lines[0]) == []


def test_environment_reports_torch_and_exits_2(cpu_only, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = run_script("environment", "--json", cwd=tmp_path, isolated=False)
    assert done.returncode == 2
    env = json.loads(done.stdout)
    assert env["torch"]["installed"] is True
    assert env["torch"]["version"] == cpu_only.__version__
    assert env["torch"]["cuda"] == cpu_only.version.cuda
    assert env["torch"]["hip"] == getattr(cpu_only.version, "hip", None)
    assert env["requested_device_usable"] is False
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("width", [1, 3, 64, 100])
@pytest.mark.parametrize("dtype", sorted(mm.DTYPE_SIZES))
def test_network_matches_predicted_parameter_bytes(torch, width: int, dtype: str) -> None:  # type: ignore[no-untyped-def]
    model = mm.build_torch_network(torch, width, torch.device("cpu"), getattr(torch, dtype))
    actual = [(name, tuple(p.shape)) for name, p in model.named_parameters()]
    assert actual == mm.network_parameter_shapes(width)
    predicted = mm.predict_network(width, dtype, batch=2, context=3)
    assert predicted["predicted_parameter_bytes"] == sum(
        p.numel() * p.element_size() for p in model.parameters()
    )
    assert predicted["element_size_bytes"] == getattr(torch, dtype).itemsize


def test_real_workload_runs_under_the_protocol_on_cpu(torch) -> None:  # type: ignore[no-untyped-def]
    """The real TorchWorkload (on CPU, with fake counters) goes through every phase."""
    workload = mm.TorchWorkload(torch, torch.device("cpu"), 2, 5, 8, "float32")
    phases, outcome = mm.run_protocol(
        FakeCounterSource(), workload, warmup=1, repeats=2, clock=make_clock()
    )
    assert outcome["status"] == "ok", outcome
    assert workload.output.shape == (2, 5, 8)
    assert len(phases) == 6


def test_notebook_protocol_runs_with_torch_on_cpu(torch, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The notebook's duplicated protocol, on CPU with stubbed torch.cuda counters."""
    namespace = notebook_namespace("setup", "messages", "functions", "protocol", "parameters")
    counters = {"memory_allocated": 1, "memory_reserved": 2}
    counters |= {"max_memory_allocated": 3, "max_memory_reserved": 4}
    for name, value in counters.items():
        monkeypatch.setattr(torch.cuda, name, lambda device, value=value: value)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device: None)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device: None)
    run = namespace["run_measurement"]
    phases = run("cpu", 1, 16, 64, "float32", 1, 2)  # type: ignore[operator]
    assert [p["phase"] for p in phases] == VALIDATION_PHASES
    assert all(p["status"] == "ok" for p in phases), phases
    predicted = namespace["predicted_allocations"](1, 16, 64, "float32")  # type: ignore[operator]
    prediction = mm.predict(1, 16, 64, "float32")
    assert predicted == (
        prediction["phases"]["model_load"]["allocated_bytes"],
        prediction["phases"]["inputs"]["allocated_bytes"],
    )


def test_notebook_interrupt_keeps_the_phase(torch, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    namespace = notebook_namespace("setup", "messages", "functions", "protocol")
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated"):
        monkeypatch.setattr(torch.cuda, name, lambda device: 7)
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda device: 9)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device: None)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device: None)

    def interrupted() -> None:
        raise KeyboardInterrupt

    record = namespace["measure_phase"]("cold_forward", "cpu", interrupted)  # type: ignore[operator]
    assert record["status"] == "interrupted"
    assert record["end_allocated_bytes"] == 7 and record["peak_reserved_bytes"] == 9


def test_environment_reads_the_allocator_settings_in_effect(cpu_only, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """PyTorch's own reading of PYTORCH_ALLOC_CONF (a private function, present in 2.13)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTORCH_ALLOC_CONF": "expandable_segments:True"}
    done = subprocess.run(
        [sys.executable, "-I", str(mm.__file__), "environment", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["allocator"]["settings"]["PYTORCH_ALLOC_CONF"] == "expandable_segments:True"
    assert "expandable_segments:True" in report["allocator"]["settings_in_effect"]
    assert report["allocator"]["caching_enabled"] is True


@pytest.mark.parametrize("dtype", sorted(mm.DTYPE_SIZES))
def test_real_workload_tensors_match_the_prediction(torch, dtype: str) -> None:  # type: ignore[no-untyped-def]
    """On CPU, the real workload makes exactly the tensors predict counts (before rounding)."""
    workload = mm.TorchWorkload(torch, torch.device("cpu"), 2, 3, 8, dtype)
    workload.load_model()
    workload.make_inputs()
    workload.forward()
    prediction = mm.predict(2, 3, 8, dtype)
    parameters = list(workload.model.parameters())
    assert [p.numel() * p.element_size() for p in parameters] == [
        t["raw_bytes"] for t in prediction["phases"]["model_load"]["tensors"]
    ]
    [inputs] = prediction["phases"]["inputs"]["tensors"]
    assert workload.inputs.numel() * workload.inputs.element_size() == inputs["raw_bytes"]
    [output] = prediction["kept_output"]["tensors"]
    assert list(workload.output.shape) == output["shape"]


def test_measure_task_train_exits_2_and_writes_nothing(cpu_only, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The training step needs a GPU as the forward passes do: one line, code 2, no file."""
    done = run_script(
        *["measure", "--task", "train", "--device", "cuda:0", *MEASURE[:6]],
        *["--optimizer", "sgd", "--precision", "bf16", "--output", "t.json"],
        cwd=tmp_path,
        isolated=False,
    )
    assert done.returncode == 2, done.stderr
    assert list(tmp_path.iterdir()) == []
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
