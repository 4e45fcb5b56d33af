"""The tensor walk and the Recorder on real PyTorch tensors (CPU build, `nox -s lab_torch`):
after each phase of a real training step, the parts tensor_parts counts equal a direct sum over
the tensors, and the pages' examples run to the end with the counters simulated on the CPU."""

from __future__ import annotations

import functools
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import NamespaceCounters, load_schema

from iteragpu.i18n.languages import CODES
from iteragpu.lab import mesure_memoire as mm

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
DEVICE_LINE = "DEVICE = f\"cuda:{os.environ.get('LOCAL_RANK', '0')}\""


@pytest.fixture(scope="module")
def torch():  # type: ignore[no-untyped-def]
    return pytest.importorskip("torch")


def direct_sums(torch: Any, model: Any, optimizer: Any) -> dict[str, int]:
    """Bytes of each part summed straight over the tensors, each distinct tensor once."""

    def total(tensors: Any) -> int:
        unique = {t.untyped_storage().data_ptr(): t for t in tensors}
        return sum(t.numel() * t.element_size() for t in unique.values())

    parameters = list(model.parameters())
    states = [
        v for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor)
    ]
    return {
        "parameters_bytes": total(parameters),
        "gradients_bytes": total(p.grad for p in parameters if p.grad is not None),
        "optimizer_state_bytes": total(states),
    }


@pytest.mark.parametrize("optimizer", mm.TRAIN_OPTIMIZERS)
@pytest.mark.parametrize("precision", mm.TRAIN_PRECISIONS)
def test_the_walk_equals_a_direct_sum_after_each_phase_of_a_real_step(
    torch: Any, precision: str, optimizer: str
) -> None:
    cpu = torch.device("cpu")
    workload = mm.TorchTrainWorkload(torch, cpu, 2, 8, 16, precision, optimizer)
    predicted = mm.predict_train(2, 8, 16, precision, optimizer)
    workload.load_model()
    workload.make_inputs()
    for step in (1, 2):
        for phase in mm.STEP_PHASES:
            getattr(workload, phase)()
            walked = mm.tensor_parts(workload.model, workload.optimizer, "cpu")
            sums = direct_sums(torch, workload.model, workload.optimizer)
            for key, value in sums.items():
                assert walked[key] == value, (phase, step, key)
            # ... and what predict --task train states for it (on the CPU, AdamW's `step` is on
            # the measured device: counted with the state, not apart)
            expected = mm.predicted_parts(predicted, phase, step)
            dtype = mm.PRECISION_DTYPES[precision]
            assert all(str(p.dtype) == f"torch.{dtype}" for p in workload.model.parameters())
            gradients = walked["gradients_bytes"]
            assert (gradients > 0) == (expected["gradients_allocated_bytes"] > 0), (phase, step)
            if expected["gradients_allocated_bytes"]:
                assert gradients == walked["parameters_bytes"]
            moments = 2 * walked["parameters_bytes"] if optimizer == "adamw" else 0
            steps = expected["optimizer_state_host_bytes"]
            if expected["optimizer_state_allocated_bytes"] or steps:
                assert walked["optimizer_state_bytes"] == moments + steps, (phase, step)
            else:
                assert walked["optimizer_state_bytes"] == 0, (phase, step)
            assert walked["optimizer_state_host_bytes"] == 0


def test_the_walk_counts_a_shared_storage_once_and_momentum_as_state(torch: Any) -> None:
    linear = torch.nn.Linear(8, 8)
    model = torch.nn.Sequential(linear, torch.nn.ReLU(), torch.nn.Linear(8, 8))
    model[2].weight = linear.weight  # tied
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    walked = mm.tensor_parts(model, optimizer, "cpu")
    assert walked == {
        **walked,
        **direct_sums(torch, model, optimizer),
        "parameters_allocated_bytes": 512 * 3,  # one 256-byte weight, two 32-byte biases
        "optimizer_state_allocated_bytes": 512 * 3,  # a momentum buffer for each
    }
    assert walked["parameters_bytes"] == (64 + 8 + 8) * 4


def test_the_recorder_refuses_a_machine_without_a_gpu(
    torch: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: this check is for CPU-only machines")
    with pytest.raises(SystemExit) as ended:
        mm.Recorder("cuda:0", output_dir=str(tmp_path / "mesures"))
    assert ended.value.code == mm.EXIT_UNAVAILABLE
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert not (tmp_path / "mesures").exists()


def replay(
    snippet: Path,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    namespace: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run a page's example as a reader would, on the CPU: DEVICE is `cpu` and the Recorder's
    counters are simulated (NamespaceCounters), everything else as written. `namespace`, when
    given, is where the example runs: its variables stay there for the test to read."""
    code = snippet.read_text("utf-8")
    assert code.count(DEVICE_LINE) == 1
    namespace = {} if namespace is None else namespace
    namespace["__name__"] = "__main__"
    module = types.ModuleType("mesure_memoire")
    module.Recorder = functools.partial(mm.Recorder, counters=NamespaceCounters(namespace))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mesure_memoire", module)
    monkeypatch.chdir(folder)
    exec(compile(code.replace(DEVICE_LINE, 'DEVICE = "cpu"'), str(snippet), "exec"), namespace)
    result: dict[str, Any] = json.loads(
        (folder / "mesures" / "mesures-rank0.json").read_text("utf-8")
    )
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    assert result["task"] == "recorder" and result["outcome"]["status"] == "ok"
    assert result["counters_source"] == "injected" and result["device"] == "cpu"
    for record in result["phases"]:
        parts = record["parts"]
        assert parts is not None and parts["activations_and_temporaries_bytes"] is not None
    return result


@pytest.mark.parametrize("lang", CODES)
def test_the_plain_pytorch_example_runs(
    torch: Any, tmp_path: Path, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = replay(SNIPPETS / f"lab_recorder_pytorch.{lang}.py", tmp_path, monkeypatch)
    phases = [(p["phase"], p["step"]) for p in result["phases"]]
    step = ["forward", "loss", "backward", "optimizer_step", "zero_grad"]
    assert phases == [(name, s) for s in (1, 2, 3) for name in step]
    by = {(p["phase"], p["step"]): p["parts"] for p in result["phases"]}
    parameters = (1024 * 4096 + 4096 + 4096 * 1024 + 1024) * 4
    assert by[("forward", 1)]["parameters_bytes"] == parameters
    assert by[("backward", 1)]["gradients_bytes"] == parameters
    assert by[("forward", 1)]["optimizer_state_bytes"] == 0
    assert by[("optimizer_step", 1)]["optimizer_state_bytes"] == 2 * parameters + 4 * 4
    assert by[("zero_grad", 3)]["gradients_bytes"] == 0
    assert result["training"]["optimizer"] == "AdamW" and result["training"]["fused"] is False
    assert result["parameter_groups"] == [
        {"shape": [4096, 1024], "dtype": "float32", "trainable": True, "count": 1},
        {"shape": [4096], "dtype": "float32", "trainable": True, "count": 1},
        {"shape": [1024, 4096], "dtype": "float32", "trainable": True, "count": 1},
        {"shape": [1024], "dtype": "float32", "trainable": True, "count": 1},
    ]


@pytest.mark.parametrize("lang", CODES)
def test_the_trainer_example_runs(
    torch: Any, tmp_path: Path, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.environ.get("CI") is None:
        pytest.importorskip("transformers")
        pytest.importorskip("accelerate")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = replay(SNIPPETS / f"lab_recorder_trainer.{lang}.py", tmp_path, monkeypatch)
    phases = [(p["phase"], p["step"]) for p in result["phases"]]
    step = ["forward_backward", "optimizer_step", "zero_grad"]
    assert phases == [(name, s) for s in (1, 2, 3) for name in step]
    by = {(p["phase"], p["step"]): p["parts"] for p in result["phases"]}
    parameters = by[("forward_backward", 1)]["parameters_bytes"]
    assert by[("forward_backward", 1)]["gradients_bytes"] == parameters
    assert by[("forward_backward", 1)]["optimizer_state_bytes"] == 0
    assert by[("optimizer_step", 1)]["optimizer_state_bytes"] > 2 * parameters
    assert by[("zero_grad", 1)]["gradients_bytes"] == 0
    assert result["training"]["optimizer"] is not None
    assert sum(g["count"] for g in result["parameter_groups"]) > 10


@pytest.mark.parametrize("lang", CODES)
def test_the_fine_tuning_example_runs(
    torch: Any, tmp_path: Path, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fine-tuning guide's phases: load, each step's four phases, evaluate, export. The parts
    are checked against the example's own tensors, read after it ran: the adapter's parameters
    (what the optimizer holds) get gradients and, from the first optimizer_step, AdamW's
    state; evaluation leaves no gradient; the merged model is written."""
    pytest.importorskip("peft")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    namespace: dict[str, Any] = {}
    result = replay(SNIPPETS / f"lab_recorder_finetune.{lang}.py", tmp_path, monkeypatch, namespace)
    step = ["forward", "backward", "optimizer_step", "zero_grad"]
    phases = [(p["phase"], p["step"]) for p in result["phases"]]
    assert phases == [
        ("load", None),
        *[(name, s) for s in (1, 2, 3) for name in step],
        ("evaluate", None),
        ("export", None),
    ]
    by = {(p["phase"], p["step"]): p["parts"] for p in result["phases"]}
    optimizer = namespace["optimizer"]
    adapter = [p for group in optimizer.param_groups for p in group["params"]]
    assert adapter
    adapter_bytes = sum(p.numel() * p.element_size() for p in adapter)
    state_bytes = sum(
        v.numel() * v.element_size()
        for state in optimizer.state.values()
        for v in state.values()
        if isinstance(v, torch.Tensor)
    )
    assert by[("load", None)]["gradients_bytes"] == 0
    assert by[("load", None)]["optimizer_state_bytes"] == 0
    assert by[("backward", 1)]["gradients_bytes"] == adapter_bytes
    # AdamW's two moments per adapter tensor, and its float32 step, on this CPU "device".
    assert by[("optimizer_step", 1)]["optimizer_state_bytes"] == state_bytes
    assert state_bytes == 2 * adapter_bytes + 4 * len(adapter)
    assert by[("evaluate", None)]["gradients_bytes"] == 0
    assert (tmp_path / "merged" / "model.safetensors").is_file()
    assert not any("lora_" in name for name in namespace["merged"].state_dict())
