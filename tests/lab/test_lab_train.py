"""`measure --task train` and `predict --task train`, through the test-only simulated allocator
(lab_support.SimulatedTrainWorkload): the phases of each step, the parts beside the
prediction, a failed or interrupted step, and the inputs refused before anything runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import (
    CUBLAS_WORKSPACE_PRE_HOPPER_BYTES,
    SimulatedBackend,
    load_schema,
    make_clock,
    run_script,
)

from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.lab import mesure_memoire as mm

FAKE_MEASURE = Path(__file__).with_name("fake_measure.py")
SIZES = ["--batch", "2", "--context", "16", "--width", "64"]
STEP = ["forward", "loss", "backward", "optimizer_step", "zero_grad"]


def train_argv(output: Path, *extra: str) -> list[str]:
    return [
        "measure",
        "--task",
        "train",
        "--device",
        "cuda:0",
        *SIZES,
        *extra,
        "--output",
        str(output),
    ]


def run_train(
    tmp_path: Path, *extra: str, fail: tuple[str, int] | None = None
) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "train.json"

    def factory(args: Any) -> SimulatedBackend:
        return SimulatedBackend(args, fail=fail)

    code = mm.main(train_argv(out, *extra), backend_factory=factory, clock=make_clock())
    result: dict[str, Any] = json.loads(out.read_text("utf-8"))
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    return code, result


@pytest.mark.parametrize("optimizer", mm.TRAIN_OPTIMIZERS)
@pytest.mark.parametrize("precision", mm.TRAIN_PRECISIONS)
def test_each_step_is_measured_phase_by_phase_with_its_parts(
    tmp_path: Path, optimizer: str, precision: str
) -> None:
    code, result = run_train(
        tmp_path, "--optimizer", optimizer, "--precision", precision, "--steps", "3"
    )
    assert code == 0 and result["task"] == "train" and result["outcome"]["status"] == "ok"
    phases = result["phases"]
    assert [(p["phase"], p["step"]) for p in phases] == [
        ("model_load", None),
        ("inputs", None),
        *((name, step) for step in (1, 2, 3) for name in STEP),
    ]
    assert [p["forward_passes"] for p in phases] == [0, 0, *([1, 0, 0, 0, 0] * 3)]
    assert result["dtype"] == mm.PRECISION_DTYPES[precision]
    assert (result["rank"], result["world_size"], result["counters_source"]) == (0, 1, "injected")
    assert result["training"]["optimizer"] == optimizer and result["training"]["steps"] == 3
    for record in phases:
        parts, predicted = record["parts"], record["parts_prediction"]
        # what the simulated program holds is what predict --task train says, to the byte
        for key in ("parameters", "gradients", "optimizer_state"):
            assert parts[f"{key}_allocated_bytes"] == predicted[f"{key}_allocated_bytes"], key
        assert parts["optimizer_state_host_bytes"] == predicted["optimizer_state_host_bytes"]
        assert predicted["model_state_difference_bytes"] == 0
        # the rest of allocated is computed from the counters, never invented
        rest = record["end_allocated_bytes"] - parts["model_state_allocated_bytes"]
        assert parts["activations_and_temporaries_bytes"] == rest >= 0
        assert (
            parts["peak_excess_bytes"]
            == record["peak_allocated_bytes"] - record["end_allocated_bytes"]
        )


def test_the_first_step_creates_the_optimizer_state_and_zero_grad_frees_the_gradients(
    tmp_path: Path,
) -> None:
    _, result = run_train(tmp_path, "--steps", "2")
    by = {(p["phase"], p["step"]): p["parts"] for p in result["phases"]}
    prediction = mm.predict_train(2, 16, 64, "fp32", "adamw")
    gradients = prediction["phases"]["first_step"]["backward"]["gradients_allocated_bytes"]
    states = prediction["phases"]["first_step"]["optimizer_step"]["optimizer_state_allocated_bytes"]
    assert gradients == states // 2 > 0  # AdamW: two moments of each parameter's size
    assert by[("forward", 1)]["optimizer_state_allocated_bytes"] == 0  # created in step 1
    assert by[("optimizer_step", 1)]["optimizer_state_allocated_bytes"] == states
    assert by[("forward", 2)]["optimizer_state_allocated_bytes"] == states  # kept
    assert by[("backward", 1)]["gradients_allocated_bytes"] == gradients
    assert by[("zero_grad", 1)]["gradients_allocated_bytes"] == 0
    assert by[("optimizer_step", 1)]["optimizer_state_host_bytes"] == 6 * mm.STEP_BYTES
    # after backward nothing of the graph is alive: the rest is the inputs and the workspace
    inputs = prediction["inputs"]["added_bytes"]
    for phase in ("backward", "optimizer_step", "zero_grad"):
        assert by[(phase, 1)]["activations_and_temporaries_bytes"] == (
            inputs + CUBLAS_WORKSPACE_PRE_HOPPER_BYTES
        ), phase


def test_predict_train_json_and_text(tmp_path: Path) -> None:
    done = run_script("predict", "--task", "train", *SIZES, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    prediction = json.loads(done.stdout)
    assert prediction == json.loads(json.dumps(mm.predict_train(2, 16, 64, "fp32", "adamw")))
    first = prediction["phases"]["first_step"]
    levels = [first[n]["model_state_allocated_bytes"] for n in STEP]
    assert levels == [133632, 133632, 267264, 534528, 400896]
    text = run_script("predict", "--task", "train", *SIZES, "--lang", "id", cwd=tmp_path)
    assert text.returncode == 0 and "534.528 B" in text.stdout
    assert mm.say("id", "step_phase_first", phase="optimizer_step") in text.stdout


@pytest.mark.parametrize(
    ("fail", "phase_count"),
    [(("backward", 1), 5), (("optimizer_step", 2), 11), (("forward", 1), 3)],
)
def test_a_failed_phase_of_a_step_is_recorded_with_its_step(
    tmp_path: Path, fail: tuple[str, int], phase_count: int
) -> None:
    code, result = run_train(tmp_path, "--steps", "3", fail=fail)
    assert code == mm.EXIT_PHASE_FAILED
    outcome, last = result["outcome"], result["phases"][-1]
    assert len(result["phases"]) == phase_count
    assert (
        (outcome["failed_phase"], outcome["failed_step"]) == fail == (last["phase"], last["step"])
    )
    assert last["status"] == "failed" and last["error"]["out_of_memory"] is True
    assert last["parts"] is not None  # what the program held when it ran out is kept
    assert last["peak_allocated_bytes"] > last["end_allocated_bytes"]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_step_keeps_the_interrupted_phase(
    tmp_path: Path, signum: int, code: int
) -> None:
    ready = tmp_path / "ready"
    folder = tmp_path / "run"
    folder.mkdir()
    argv = train_argv(Path("out.json"), "--steps", "50")
    process = subprocess.Popen(
        [sys.executable, str(FAKE_MEASURE), str(ready), *argv],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.1)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in folder.iterdir()) == ["out.json"]
    result = json.loads((folder / "out.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    last = result["phases"][-1]
    assert (last["phase"], last["status"]) == ("forward", "interrupted")
    assert result["outcome"]["failed_step"] == last["step"] >= 1
    assert last["end_allocated_bytes"] is not None


REFUSED = [
    # (arguments, message key): one line, exit 2, nothing written
    (["--task", "fit"], None),
    (["--task", "train", "--optimizer", "lion"], None),
    (["--task", "train", "--precision", "fp16"], None),
    (["--task", "train", "--dtype", "float16"], "train_dtype"),
    (["--task", "train", "--precision", "bf16", "--dtype", "float32"], "train_dtype"),
    (["--task", "train", "--warmup", "2"], "forward_option_with_train"),
    (["--optimizer", "sgd"], "needs_task_train"),
    (["--steps", "2"], "needs_task_train"),
]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize(("extra", "key"), REFUSED, ids=[" ".join(r[0]) for r in REFUSED])
def test_bad_training_arguments_are_refused_in_one_line(
    tmp_path: Path, extra: list[str], key: str | None, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    created: list[Any] = []

    def factory(args: Any) -> SimulatedBackend:
        created.append(args)
        return SimulatedBackend(args)

    argv = ["measure", "--device", "cuda:0", *SIZES, *extra, "--output", str(tmp_path / "o.json")]
    code = mm.main([*argv, "--lang", lang], backend_factory=factory, clock=make_clock())
    err = capsys.readouterr().err
    assert code == mm.EXIT_UNAVAILABLE and created == []
    assert list(tmp_path.iterdir()) == []
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    if key is not None:
        assert mm.error_line(lang, mm.TOOL_NAME, "")[:-1] in err
        assert mm.MESSAGES[lang][key].split("{")[0].strip() in err


def test_a_result_folder_that_is_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").write_text("not a folder")
    code = mm.main(train_argv(tmp_path / "results" / "t.json"), backend_factory=SimulatedBackend)
    err = capsys.readouterr().err
    assert code == mm.EXIT_UNAVAILABLE and len(err.splitlines()) == 1
    assert mm.say(SOURCE, "output_folder_is_file", path="X", folder="Y").split("X")[0] in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_the_forward_task_is_unchanged_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "f.json"
    argv = ["measure", "--device", "cuda:0", *SIZES, "--output", str(out)]
    assert mm.main(argv, backend_factory=SimulatedBackend, clock=make_clock()) == 0
    result = json.loads(out.read_text("utf-8"))
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    assert result["task"] == "forward" and result["training"] is None
    assert (result["policy"]["warmup_passes"], result["policy"]["repeats"]) == (3, 5)
    assert all(p["step"] is None and "parts" not in p for p in result["phases"])


def test_every_phase_goes_through_the_one_protocol(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """measure's forward passes, its training step and the Recorder all drive phase_protocol."""
    calls: list[str] = []
    original = mm.phase_protocol

    def counted(record: Any, *args: Any) -> Any:
        calls.append(record["phase"])
        return original(record, *args)

    monkeypatch.setattr(mm, "phase_protocol", counted)
    run_train(tmp_path, "--steps", "1")
    assert calls == ["model_load", "inputs", *STEP]
    calls.clear()
    argv = ["measure", "--device", "cuda:0", *SIZES, "--warmup", "1", "--repeats", "1"]
    assert (
        mm.main([*argv, "--output", str(tmp_path / "f.json")], backend_factory=SimulatedBackend)
        == 0
    )
    assert calls == ["model_load", "inputs", "cold_forward", "warmup", "warm_forward"]
    calls.clear()
    from lab_support import SimulatedCachingAllocator

    recorder = mm.Recorder(
        "cuda:0", counters=SimulatedCachingAllocator(), output_dir=str(tmp_path / "r")
    )
    with recorder.phase("mine"):
        pass
    assert calls == ["mine"]


def test_the_file_opens_with_a_map_of_its_sections() -> None:
    text = Path(mm.__file__).read_text("utf-8")
    doc = mm.__doc__ or ""
    mapped = doc.split("The sections of this file, in order:")[1].strip().splitlines()
    names = [line.split("  ")[0].strip() for line in mapped if line.strip()]
    lines = text.splitlines()
    headers = [
        lines[i + 1][2:]
        for i, line in enumerate(lines[:-1])
        if line.startswith("# ---") and lines[i + 1].startswith("# ") and "---" not in lines[i + 1]
    ]
    found = [next((n for n in names if h.startswith(n)), h) for h in headers]
    assert found == names  # every section mapped, once, in the file's order
    assert len(names) >= 10


@pytest.mark.parametrize(
    "extra",
    [["--dtype", "float16"], ["--optimizer", "lion"], ["--steps", "2"], ["--task", "fit"]],
)
def test_predict_train_refuses_in_one_line(tmp_path: Path, extra: list[str]) -> None:
    task = [] if "--task" in extra else ["--task", "train"]
    done = run_script("predict", *task, *SIZES, *extra, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
