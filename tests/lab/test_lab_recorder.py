"""The Recorder, the reader's own loop under the lab's protocol, without PyTorch: counters from
the test-only fakes (lab_support), tensors from the stand-ins below (what tensor_parts reads of
a tensor: its storage's address and size, its device). tests/lab/test_lab_recorder_torch.py
runs it on real PyTorch tensors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import (
    FakeCounterSource,
    FakeOutOfMemoryError,
    SimulatedCachingAllocator,
    load_schema,
)

from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.lab import mesure_memoire as mm

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
BEFORE = ["synchronize", "memory_allocated", "memory_reserved", "reset_peak_memory_stats"]
AFTER = [
    "synchronize",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
]


class Storage:
    addresses = iter(range(4096, 2**40, 4096))

    def __init__(self, nbytes: int) -> None:
        self._nbytes = nbytes
        self._address = next(self.addresses) if nbytes else 0

    def nbytes(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        return self._address


class Tensor:
    """TEST-ONLY: what tensor_parts reads of a tensor."""

    def __init__(self, nbytes: int, device: str = "cuda:0", storage: Storage | None = None) -> None:
        self.storage = storage or Storage(nbytes)
        self.device = device
        self.grad: Tensor | None = None
        self.shape = (nbytes // 4,)
        self.dtype = "torch.float32"
        self.requires_grad = True

    def untyped_storage(self) -> Storage:
        return self.storage


class Model:
    def __init__(self, *parameters: Tensor) -> None:
        self._parameters = list(parameters)

    def parameters(self) -> list[Tensor]:
        return self._parameters


class Optimizer:
    def __init__(self, model: Model) -> None:
        self.param_groups = [{"params": model.parameters(), "fused": None}]
        self.state: dict[Any, dict[str, Any]] = {}

    def step(self) -> None:
        for p in self.param_groups[0]["params"]:
            nbytes = p.storage.nbytes()
            self.state[id(p)] = {
                "step": Tensor(4, "cpu"),
                "exp_avg": Tensor(nbytes),
                "exp_avg_sq": Tensor(nbytes),
            }


def recorder(tmp_path: Path, **kw: Any) -> mm.Recorder:
    kw.setdefault("counters", FakeCounterSource())
    kw.setdefault("output_dir", str(tmp_path / "mesures"))
    return mm.Recorder("cuda:0", **kw)


def written(tmp_path: Path, rank: int = 0) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(
        (tmp_path / "mesures" / f"mesures-rank{rank}.json").read_text("utf-8")
    )
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    return result


def test_each_phase_runs_the_six_steps_in_order_and_the_result_is_written(tmp_path: Path) -> None:
    device = FakeCounterSource()
    with recorder(tmp_path, counters=device) as r:
        with r.phase("forward", step=1):
            device.log.append("run:forward")
            device.allocate(1_000)
        with r.phase("backward", step=1):
            device.log.append("run:backward")
    assert device.log == [*BEFORE, "run:forward", *AFTER, *BEFORE, "run:backward", *AFTER]
    result = written(tmp_path)
    assert result["task"] == "recorder" and result["outcome"]["status"] == "ok"
    assert [(p["phase"], p["step"]) for p in result["phases"]] == [("forward", 1), ("backward", 1)]
    assert result["phases"][0]["end_allocated_bytes"] == 1_000
    assert result["phases"][0]["parts"] is None and result["parameter_groups"] is None
    assert (result["rank"], result["world_size"]) == (0, 1)
    assert "dimensions" not in result and "network" not in result


def test_the_parts_come_from_the_model_and_the_optimizer(tmp_path: Path) -> None:
    device = FakeCounterSource()
    tied = Tensor(1_000)
    model = Model(tied, Tensor(300), tied)  # a tied weight is counted once
    optimizer = Optimizer(model)
    with recorder(tmp_path, counters=device, model=model) as r:
        r.watch(optimizer=optimizer)  # given once it exists
        device.allocate(1_024 + 512)
        with r.phase("backward", step=1):
            for p in model.parameters():
                p.grad = p.grad or Tensor(p.storage.nbytes())
            device.allocate(1_024 + 512 + 4_096)
        with r.phase("optimizer_step", step=1):
            optimizer.step()
            device.allocate(2 * (1_024 + 512))
    backward, step = (p["parts"] for p in written(tmp_path)["phases"])
    assert (backward["parameters_bytes"], backward["parameters_allocated_bytes"]) == (1_300, 1_536)
    assert (backward["gradients_bytes"], backward["gradients_allocated_bytes"]) == (1_300, 1_536)
    assert backward["optimizer_state_bytes"] == 0
    assert backward["activations_and_temporaries_bytes"] == 4_096
    assert (step["optimizer_state_bytes"], step["optimizer_state_allocated_bytes"]) == (
        2_600,
        3_072,
    )
    assert step["optimizer_state_host_bytes"] == 2 * 4  # `step` on the host, not in allocated
    assert step["model_state_allocated_bytes"] == 1_536 * 2 + 3_072
    groups = written(tmp_path)["parameter_groups"]
    assert groups == [
        {"shape": [250], "dtype": "float32", "trainable": True, "count": 1},
        {"shape": [75], "dtype": "float32", "trainable": True, "count": 1},
    ]


def test_without_an_optimizer_its_parts_are_not_counted(tmp_path: Path) -> None:
    with recorder(tmp_path, model=Model(Tensor(100))) as r, r.phase("forward"):
        pass
    parts = written(tmp_path)["phases"][0]["parts"]
    assert parts["optimizer_state_bytes"] is None
    assert parts["model_state_allocated_bytes"] is None
    assert parts["activations_and_temporaries_bytes"] is None  # never a guess


def test_an_out_of_memory_is_the_phase_failure_and_ends_with_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended, recorder(tmp_path) as r:
        for step in (1, 2):
            with r.phase("forward", step=step):
                if step == 2:
                    raise FakeOutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert ended.value.code == mm.EXIT_PHASE_FAILED
    result = written(tmp_path)
    assert result["outcome"]["failed_phase"] == "forward" and result["outcome"]["failed_step"] == 2
    failed = result["phases"][-1]
    assert failed["status"] == "failed" and failed["error"]["out_of_memory"] is True
    assert failed["error"]["step"] == "run" and failed["end_allocated_bytes"] is not None
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(("interrupt", "code"), [(KeyboardInterrupt, 130), (mm.Terminated, 143)])
def test_an_interrupt_in_a_phase_keeps_it_and_writes_the_partial_result(
    tmp_path: Path, interrupt: type[BaseException], code: int
) -> None:
    with pytest.raises(SystemExit) as ended, recorder(tmp_path) as r, r.phase("zero_grad", step=1):
        raise interrupt()
    assert ended.value.code == code
    result = written(tmp_path)
    last = result["phases"][-1]
    assert last["status"] == "interrupted" and last["end_allocated_bytes"] is not None
    assert result["outcome"]["exit_code"] == code


def test_an_error_of_the_program_between_phases_goes_on_after_the_result_is_written(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="the reader's own bug"), recorder(tmp_path) as r:
        with r.phase("forward", step=1):
            pass
        raise ValueError("the reader's own bug")
    outcome = written(tmp_path)["outcome"]
    assert outcome["status"] == "failed" and outcome["failed_phase"] is None
    assert outcome["error"]["type"] == "ValueError"


REFUSALS = ["twice", "nested", "bad name", "bad step", "end without begin"]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("refusal", REFUSALS)
def test_a_refused_call_says_one_line_exits_2_and_writes_nothing(
    tmp_path: Path, refusal: str, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended, recorder(tmp_path, lang=lang) as r:
        with r.phase("forward", step=1):
            pass
        if refusal == "twice":
            with r.phase("forward", step=1):
                pass
        elif refusal == "nested":
            with r.phase("loss", step=1), r.phase("backward", step=1):
                pass
        elif refusal == "bad name":
            r.begin("zero grad")
        elif refusal == "bad step":
            r.begin("loss", step=0)
        else:
            r.end()
    assert ended.value.code == mm.EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(mm.error_line(lang, mm.TOOL_NAME, "x")[:-1])
    assert not (tmp_path / "mesures").exists() or list((tmp_path / "mesures").iterdir()) == []


def test_an_output_folder_that_is_a_file_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mesures").write_text("a file")
    with pytest.raises(SystemExit) as ended:
        recorder(tmp_path)
    assert ended.value.code == mm.EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert mm.say(SOURCE, "output_dir_is_file", folder=repr(str(tmp_path / "mesures"))) in err
    assert (tmp_path / "mesures").read_text() == "a file"


def test_an_existing_result_is_refused_with_3_and_kept(tmp_path: Path) -> None:
    (tmp_path / "mesures").mkdir()
    (tmp_path / "mesures" / "mesures-rank0.json").write_text("earlier")
    with pytest.raises(SystemExit) as ended:
        recorder(tmp_path)
    assert ended.value.code == mm.EXIT_OUTPUT_EXISTS
    assert (tmp_path / "mesures" / "mesures-rank0.json").read_text() == "earlier"


@pytest.mark.parametrize(("rank", "world"), [(2, 2), (-1, 2), (0, 0), (True, 2)])
def test_a_rank_outside_the_world_is_refused(tmp_path: Path, rank: Any, world: Any) -> None:
    with pytest.raises(SystemExit) as ended:
        recorder(tmp_path, rank=rank, world_size=world)
    assert ended.value.code == mm.EXIT_UNAVAILABLE


def test_each_rank_writes_its_own_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets them
    with recorder(tmp_path) as r, r.phase("forward", step=1):
        pass
    with recorder(tmp_path, rank=0) as r, r.phase("forward", step=1):
        pass
    assert sorted(p.name for p in (tmp_path / "mesures").iterdir()) == [
        "mesures-rank0.json",
        "mesures-rank1.json",
    ]
    assert (written(tmp_path, 1)["rank"], written(tmp_path, 1)["world_size"]) == (1, 2)
    assert (written(tmp_path, 0)["rank"], written(tmp_path, 0)["world_size"]) == (0, 2)


def test_begin_and_end_close_the_phase_an_exception_left_open(tmp_path: Path) -> None:
    """What a TrainerCallback does: begin in one event, and the step fails before the next."""
    allocator = SimulatedCachingAllocator(capacity_bytes=8 * 2**20)
    with pytest.raises(SystemExit), recorder(tmp_path, counters=allocator) as r:
        r.begin("forward_backward", step=1)
        allocator.malloc(64 * 2**20)  # beyond the simulated card: out of memory
    phase = written(tmp_path)["phases"][0]
    assert phase["phase"] == "forward_backward" and phase["status"] == "failed"
    assert phase["error"]["out_of_memory_kind"] == "allocator"


def test_a_failed_peak_reset_is_recorded_and_the_phase_still_runs(tmp_path: Path) -> None:
    device = FakeCounterSource()
    device.failures["reset_peak_memory_stats"] = RuntimeError("no reset here")
    ran = []
    with pytest.raises(SystemExit), recorder(tmp_path, counters=device) as r, r.phase("forward"):
        ran.append(True)
    phase = written(tmp_path)["phases"][0]
    assert ran == [True] and phase["status"] == "failed"
    assert phase["error"]["step"] == "reset_peak" and phase["peak_allocated_bytes"] is None


def test_without_torch_or_a_gpu_the_recorder_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mm, "import_torch", lambda: (None, "ModuleNotFoundError"))
    with pytest.raises(SystemExit) as ended:
        mm.Recorder("cuda:0", output_dir=str(tmp_path / "mesures"))
    assert ended.value.code == mm.EXIT_UNAVAILABLE
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert not (tmp_path / "mesures").exists()
    with pytest.raises(SystemExit):
        mm.Recorder("cpu", output_dir=str(tmp_path / "mesures"))  # CPU is never a GPU reading
    assert not (tmp_path / "mesures").exists()


def test_the_script_is_importable_beside_the_readers_code(tmp_path: Path) -> None:
    """`from mesure_memoire import Recorder`, as the examples do, with the standard library only
    at import time (no PyTorch, no argparse until a parser is needed)."""
    shutil.copy(mm.__file__, tmp_path / "mesure_memoire.py")
    code = (
        "import sys; sys.path.insert(0, '.'); from mesure_memoire import Recorder; "
        "print(Recorder.__name__, sorted(m for m in sys.modules if m in ('torch', 'argparse')))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Recorder []"


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("example", ["pytorch", "trainer"])
def test_the_readme_shows_the_examples_the_tests_replay(lang: str, example: str) -> None:
    """Each README holds its language's examples exactly as snippets/ keeps them (the lab page
    includes those files; tests/lab/test_lab_recorder_torch.py runs them)."""
    readme = (Path(mm.__file__).parent / f"README.{lang}.md").read_text("utf-8")
    code = (SNIPPETS / f"lab_recorder_{example}.{lang}.py").read_text("utf-8")
    assert f"```python\n{code}```" in readme
    page = (ROOT / "docs" / lang / "docs" / "lab.md").read_text("utf-8")
    assert f'--8<-- "lab_recorder_{example}.{lang}.py"' in page
