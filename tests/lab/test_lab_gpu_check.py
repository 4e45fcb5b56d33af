"""tests/gpu/lab_gpu_check.py (`nox -s gpu`) without a GPU: the simulated caching allocator
stands in for the device, so the check itself is tested; nothing here is a GPU measurement."""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from lab_support import (
    CUBLAS_WORKSPACE_PRE_HOPPER_BYTES,
    SimulatedBackend,
    SimulatedTrainWorkload,
    make_clock,
)

from iteragpu.lab import mesure_memoire as mm

CHECK = Path(__file__).resolve().parents[1] / "gpu" / "lab_gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lab_gpu_check", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def simulated_runner(gpu_check: ModuleType, extra_bytes: int = 0) -> Any:
    """Runs mesure_memoire.main in-process on one simulated GPU (cuda:0)."""
    runs: list[tuple[list[str], dict[str, str | None]]] = []

    def factory(args: argparse.Namespace) -> SimulatedBackend:
        index = mm.parse_device(args.device)
        if index >= 1:
            problem = mm.say(args.lang, "no_such_gpu", device=f"cuda:{index}", count=1)
            raise mm.UsageError("nothing_written", problem=problem)
        backend = SimulatedBackend(args)
        backend.environment["torch"]["device_count"] = 1
        if extra_bytes:  # a model_load that allocates more than predict says
            load = backend.workload.load_model

            def load_more() -> None:
                load()
                backend.allocator.malloc(extra_bytes)

            backend.workload.load_model = load_more  # type: ignore[method-assign]
        return backend

    def run(arguments: Sequence[str], extra: dict[str, str | None]) -> Any:
        runs.append((list(arguments), dict(extra)))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = mm.main(list(arguments), backend_factory=factory, clock=make_clock())
        return gpu_check.Run(code, out.getvalue(), err.getvalue())

    run.runs = runs  # type: ignore[attr-defined]
    return run


def test_check_passes_on_an_allocator_with_pytorchs_rules(
    gpu_check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "results"
    runner = simulated_runner(gpu_check)
    assert gpu_check.main([str(folder)], runner=runner) == 0
    out = capsys.readouterr().out
    assert "every asserted check holds" in out
    assert "133,632" in out and "137,728" in out  # model_load and inputs, predicted = measured
    assert f"{CUBLAS_WORKSPACE_PRE_HOPPER_BYTES:,}" in out  # the cold_forward difference
    assert sorted(p.name for p in folder.iterdir()) == [
        "readme-example.json",
        "summary.json",
        "train-autocast-bf16-adamw.json",
        "train-bf16-sgd.json",
        "train-fp32-adamw.json",
        "validation+cudamallocasync.json",
        "validation+expandable-segments.json",
        "validation.json",
    ]
    summary = json.loads((folder / "summary.json").read_text())
    names = {c["name"]: c for c in summary["checks"]}
    for name in (
        "validation: model_load allocated equals predict",
        "validation: inputs allocated equals predict",
        "validation: inputs reserved is one 2 MiB segment",
        "readme-example: model_load allocated equals predict",
        "readme-example: inputs allocated equals predict",
        "existing --output: exit 3, file untouched",
        "missing device index (cuda:1): exit 2, nothing written",
        "train-fp32-adamw: model states equal predict --task train after every phase",
        "train-fp32-adamw: allocated after backward, optimizer_step and zero_grad of step 1 is "
        "the predicted model states plus one remainder",
        "train-fp32-adamw: optimizer state in host memory after step 1",
    ):
        assert names[name]["passed"] and names[name]["asserted"], name
    assert not names["train-bf16-sgd: measure exits 0"]["asserted"]
    assert names["train-bf16-sgd: model states equal predict --task train after every phase"][
        "passed"
    ]
    assert not names["validation+cudamallocasync: measure exits 0"]["asserted"]
    # the asserted runs remove the caller's allocator settings; the variants set theirs
    runs = runner.runs
    measures = [(args, extra) for args, extra in runs if args[0] == "measure"]
    assert measures[0][1]["PYTORCH_ALLOC_CONF"] is None
    variants = [extra["PYTORCH_ALLOC_CONF"] for _, extra in measures[-2:]]
    assert variants == ["expandable_segments:True", "backend:cudaMallocAsync"]
    validation = next(args for args, _ in measures if str(folder / "validation.json") in args)
    assert validation[validation.index("--batch") :] == [
        *["--batch", "1", "--context", "16", "--width", "64", "--dtype", "float32"],
        *["--warmup", "1", "--repeats", "2", "--output", str(folder / "validation.json")],
    ]
    readme = next(args for args, _ in measures if str(folder / "readme-example.json") in args)
    start = readme.index("--batch")
    assert readme[start : start + 6] == ["--batch", "2", "--context", "128", "--width", "1024"]


def test_check_fails_when_the_measurement_disagrees(
    gpu_check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = simulated_runner(gpu_check, extra_bytes=1)  # one more 512-byte block
    assert gpu_check.main([str(tmp_path / "r")], runner=runner) == 1
    out = capsys.readouterr().out
    assert "[FAIL] validation: model_load allocated equals predict" in out
    assert "result: FAILED" in out


def test_check_fails_when_predict_changes(
    gpu_check: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed block size in the script is caught against PyTorch's rules."""
    monkeypatch.setattr(mm, "ALLOCATOR_BLOCK_BYTES", 256)
    monkeypatch.setattr(mm.round_up_to_block, "__defaults__", (256,))
    assert gpu_check.main([str(tmp_path / "r")], runner=simulated_runner(gpu_check)) == 1


def test_check_fails_when_an_activation_outlives_backward(
    gpu_check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workload that keeps a tensor after backward: the remainders differ, the check fails."""
    runner = simulated_runner(gpu_check)
    original = SimulatedTrainWorkload.optimizer_step

    def keeps(self: SimulatedTrainWorkload) -> None:
        original(self)
        if self.step == 1 and not getattr(self, "kept", None):
            self.kept = self.allocator.malloc(4096)

    SimulatedTrainWorkload.optimizer_step = keeps  # type: ignore[method-assign]
    try:
        assert gpu_check.main([str(tmp_path / "r")], runner=runner) == 1
    finally:
        SimulatedTrainWorkload.optimizer_step = original  # type: ignore[method-assign]
    out = capsys.readouterr().out
    assert "[FAIL] train-fp32-adamw: allocated after backward" in out


def test_check_refuses_a_folder_with_files(gpu_check: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}")
    assert gpu_check.main([str(tmp_path)], runner=simulated_runner(gpu_check)) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]


def test_check_reports_no_gpu_without_a_traceback(
    gpu_check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With this machine's Python (no GPU): every measure fails, and the check says so."""
    runner = gpu_check.subprocess_runner(sys.executable)
    assert gpu_check.main([str(tmp_path / "r")], runner=runner) == 1
    out = capsys.readouterr().out
    assert "[FAIL] validation: measure exits 0: exit 2" in out
    assert "Traceback" not in out
