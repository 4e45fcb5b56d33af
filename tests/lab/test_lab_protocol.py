"""The per-phase protocol, checked through TEST-ONLY fakes of torch.cuda (see lab_support)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import (
    CUBLAS_WORKSPACE_PRE_HOPPER_BYTES,
    RESULT_1_0_0,
    VALIDATION_PHASES,
    FakeCounterSource,
    FakeOutOfMemoryError,
    FakeWorkload,
    SimulatedBackend,
    SimulatedCachingAllocator,
    fake_factory,
    load_schema,
    make_clock,
    validation_argv,
)

from iteragpu.i18n.languages import SOURCE
from iteragpu.lab import mesure_memoire as mm

BEFORE = ["synchronize", "memory_allocated", "memory_reserved", "reset_peak_memory_stats"]
AFTER = [
    "synchronize",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
]


def phase_log(*runs: str) -> list[str]:
    return [*BEFORE, *(f"run:{r}" for r in runs), *AFTER]


def validate(result: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(load_schema()).validate(result)


def validate_phase(record: Any) -> None:
    schema = load_schema()
    phase_schema = {"$defs": schema["$defs"], **schema["$defs"]["phase"]}
    jsonschema.Draft202012Validator(phase_schema).validate(record)


def test_schema_is_valid_draft_2020_12() -> None:
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_single_phase_order_and_readings() -> None:
    device = FakeCounterSource()
    device.allocate(4_000)  # something already on the device
    device.free(1_000)
    workload = FakeWorkload(device)
    record = mm.measure_phase("cold_forward", device, workload.forward, forward_passes=1)
    assert device.log == phase_log("forward")
    assert record["status"] == "ok" and record["error"] is None
    assert record["peak_reset"] is True
    assert record["start_allocated_bytes"] == 3_000
    # absolute peak: includes what existed before the phase
    assert record["peak_allocated_bytes"] == 3_000 + FakeWorkload.TEMP_BYTES
    assert record["end_allocated_bytes"] == 3_000 + FakeWorkload.OUTPUT_BYTES
    assert record["peak_reserved_bytes"] >= record["peak_allocated_bytes"]
    assert record["duration_ns"] is not None and record["read_errors"] == {}


def test_full_protocol_order_per_phase() -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device)
    phases, outcome = mm.run_protocol(device, workload, warmup=3, repeats=2, clock=make_clock())
    assert [(p["phase"], p["repeat"]) for p in phases] == [
        ("model_load", None),
        ("inputs", None),
        ("cold_forward", None),
        ("warmup", None),
        ("warm_forward", 1),
        ("warm_forward", 2),
    ]
    assert [p["forward_passes"] for p in phases] == [0, 0, 1, 3, 1, 1]
    assert device.log == [
        *phase_log("load_model"),
        *phase_log("make_inputs"),
        *phase_log("forward"),
        *phase_log("forward", "forward", "forward"),
        *phase_log("forward"),
        *phase_log("forward"),
    ]
    assert outcome == {
        "status": "ok",
        "exit_code": 0,
        "failed_phase": None,
        "failed_repeat": None,
        "failed_step": None,
        "error": None,
        "complete_readings": True,
    }
    assert all(p["duration_ns"] == 1_000_000 for p in phases)
    model_load = phases[0]
    assert model_load["start_allocated_bytes"] == 0
    assert model_load["end_allocated_bytes"] == FakeWorkload.MODEL_BYTES


def test_warmup_zero_still_records_the_phase() -> None:
    device = FakeCounterSource()
    phases, outcome = mm.run_protocol(device, FakeWorkload(device), warmup=0, repeats=1)
    warmup = [p for p in phases if p["phase"] == "warmup"]
    assert len(warmup) == 1 and warmup[0]["forward_passes"] == 0
    assert outcome["status"] == "ok"


def test_out_of_memory_keeps_the_phase_message_and_last_readings() -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device, fail_on_forward=3)  # cold=1, warmup=2, warm 1 = 3
    lines: list[str] = []
    phases, outcome = mm.run_protocol(
        device, workload, warmup=1, repeats=4, progress=lines.append, clock=make_clock()
    )
    assert [(p["phase"], p["repeat"]) for p in phases][-1] == ("warm_forward", 1)
    failed = phases[-1]
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "step": "run",
        "type": "OutOfMemoryError",
        "message": "CUDA out of memory. Tried to allocate 2.00 GiB",
        "out_of_memory": True,
        "out_of_memory_kind": "allocator",
    }
    # the last readings are kept: the partial peak before saturation, the end levels
    start = failed["start_allocated_bytes"]
    assert failed["peak_allocated_bytes"] == start + FakeWorkload.TEMP_BYTES // 2
    assert failed["end_allocated_bytes"] == start
    assert None not in [failed[k] for k in mm.COUNTER_KEYS]
    # protocol still closed the phase, and nothing ran afterwards
    assert device.log[-len(AFTER) :] == AFTER
    assert device.log.count("run:forward") == 3
    assert outcome["status"] == "failed" and outcome["exit_code"] == mm.EXIT_PHASE_FAILED == 4
    assert (outcome["failed_phase"], outcome["failed_repeat"]) == ("warm_forward", 1)
    assert outcome["error"]["type"] == "OutOfMemoryError"
    assert lines[-1] == "[5/8] warm_forward 1/4: " + mm.say(
        SOURCE,
        "phase_failed",
        error="OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    )


def test_unread_counter_is_null_not_zero() -> None:
    device = FakeCounterSource()
    device.failures["max_memory_reserved"] = RuntimeError("counter unavailable")
    phases, outcome = mm.run_protocol(device, FakeWorkload(device), warmup=1, repeats=1)
    for record in phases:
        assert record["peak_reserved_bytes"] is None
        assert record["peak_allocated_bytes"] is not None
        assert record["read_errors"] == {"peak_reserved_bytes": "RuntimeError: counter unavailable"}
        assert record["status"] == "ok"
    assert outcome["status"] == "ok" and outcome["complete_readings"] is False


def test_failed_reset_skips_the_run_and_leaves_peaks_null() -> None:
    device = FakeCounterSource()
    device.failures["reset_peak_memory_stats"] = RuntimeError("reset refused")
    workload = FakeWorkload(device)
    phases, outcome = mm.run_protocol(device, workload, warmup=1, repeats=1)
    assert len(phases) == 1
    record = phases[0]
    assert record["status"] == "failed" and record["error"]["step"] == "reset_peak"
    assert record["peak_reset"] is False
    assert record["peak_allocated_bytes"] is None and record["peak_reserved_bytes"] is None
    assert record["duration_ns"] is None
    assert record["start_allocated_bytes"] == 0  # read, so a real 0
    assert "run:load_model" not in device.log
    assert outcome["failed_phase"] == "model_load"


def test_failed_synchronize_is_a_failure_with_readings() -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device)
    record = mm.measure_phase("inputs", device, workload.make_inputs)
    assert record["status"] == "ok"
    device.failures["synchronize"] = RuntimeError("CUDA error: an illegal memory access")
    record = mm.measure_phase("inputs", device, workload.make_inputs)
    assert record["status"] == "failed"
    assert record["error"]["step"] == "synchronize_before"
    assert record["peak_allocated_bytes"] is None  # no reset: peaks are not this phase's
    assert record["end_allocated_bytes"] is not None


@pytest.mark.parametrize(
    ("interrupt", "code"), [(KeyboardInterrupt(), 130), (mm.Terminated(), 143)]
)
def test_interrupt_keeps_the_interrupted_phase_with_its_final_readings(
    interrupt: KeyboardInterrupt, code: int
) -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device, fail_on_forward=1, error=interrupt)
    phases, outcome = mm.run_protocol(device, workload, warmup=1, repeats=1, clock=make_clock())
    assert [p["phase"] for p in phases] == ["model_load", "inputs", "cold_forward"]
    interrupted = phases[-1]
    assert interrupted["status"] == "interrupted"
    assert interrupted["error"] is not None
    assert interrupted["error"]["step"] == "run"
    assert interrupted["error"]["type"] == type(interrupt).__name__
    assert interrupted["error"]["out_of_memory"] is False
    # start readings kept; the device was synchronized, then the final readings were taken
    start = FakeWorkload.MODEL_BYTES + FakeWorkload.INPUT_BYTES
    assert interrupted["start_allocated_bytes"] == start
    assert interrupted["peak_allocated_bytes"] == start + FakeWorkload.TEMP_BYTES // 2
    assert interrupted["end_allocated_bytes"] == start
    assert None not in [interrupted[k] for k in mm.COUNTER_KEYS]
    assert device.log[-len(AFTER) :] == AFTER
    assert outcome["status"] == "interrupted" and outcome["exit_code"] == code
    assert outcome["failed_phase"] == "cold_forward"
    assert outcome["error"] is not None and outcome["error"]["type"] == type(interrupt).__name__


def test_interrupt_while_reading_keeps_what_was_read() -> None:
    device = FakeCounterSource()
    device.failures["memory_reserved"] = mm.Terminated()
    phases, outcome = mm.run_protocol(device, FakeWorkload(device), warmup=0, repeats=1)
    [record] = phases
    assert record["status"] == "interrupted"
    assert record["error"] is not None and record["error"]["step"] == "read_start"
    assert record["start_allocated_bytes"] == 0  # read before the signal
    assert record["start_reserved_bytes"] is None
    assert record["end_allocated_bytes"] == 0  # a final reading, taken after the interrupt
    assert record["peak_reset"] is False and record["peak_allocated_bytes"] is None
    assert outcome["exit_code"] == mm.EXIT_TERMINATED
    validate_phase(record)


def test_interrupt_between_two_phases_keeps_the_phases_already_read() -> None:
    device = FakeCounterSource()

    def progress(line: str) -> None:
        if line.startswith("[1/"):
            raise mm.Terminated()

    phases, outcome = mm.run_protocol(
        device, FakeWorkload(device), warmup=1, repeats=1, progress=progress
    )
    assert [(p["phase"], p["status"]) for p in phases] == [("model_load", "ok")]
    assert outcome["status"] == "interrupted" and outcome["exit_code"] == 143
    assert outcome["failed_phase"] == "inputs"  # the phase that did not start


def test_second_interrupt_during_the_final_readings_keeps_the_phase() -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device, fail_on_forward=1, error=KeyboardInterrupt())
    device.failures["max_memory_reserved"] = KeyboardInterrupt()
    phases, outcome = mm.run_protocol(device, workload, warmup=0, repeats=1)
    assert phases[-1]["status"] == "interrupted"
    assert phases[-1]["peak_allocated_bytes"] is not None
    assert phases[-1]["peak_reserved_bytes"] is None
    assert outcome["status"] == "interrupted"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (FakeOutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB"), "allocator"),
        (
            RuntimeError(
                "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
            ),
            "cublas",
        ),
        (RuntimeError("HIPBLAS_STATUS_ALLOC_FAILED when calling hipblasCreate"), "cublas"),
        (RuntimeError("CUDA error: out of memory"), "cuda"),
        (MemoryError("host RAM"), None),
        (RuntimeError("CUDA error: an illegal memory access was encountered"), None),
    ],
)
def test_out_of_memory_is_classified(error: Exception, kind: str | None) -> None:
    device = FakeCounterSource()
    workload = FakeWorkload(device, fail_on_forward=1, error=error)
    phases, outcome = mm.run_protocol(device, workload, warmup=0, repeats=1)
    failed = phases[-1]
    assert failed["error"] is not None
    assert failed["error"]["out_of_memory_kind"] == kind
    assert failed["error"]["out_of_memory"] is (kind is not None)
    assert outcome["status"] == "failed"
    validate_phase(failed)


def test_out_of_memory_end_reserved_is_after_the_allocator_releases_its_cache() -> None:
    """PyTorch frees its unused cached segments before raising: end_reserved shows that."""
    mib = 2**20
    allocator = SimulatedCachingAllocator(capacity_bytes=60 * mib)
    allocator.free(allocator.malloc(10 * mib))  # a 10 MiB segment, left in the cache
    allocator.malloc(40 * mib)  # still alive

    def too_big() -> None:
        allocator.malloc(25 * mib)  # a 26 MiB segment would not fit even without the cache

    record = mm.measure_phase("cold_forward", allocator, too_big)
    assert record["error"] is not None and record["error"]["out_of_memory_kind"] == "allocator"
    assert record["start_reserved_bytes"] == 50 * mib
    assert record["end_reserved_bytes"] == 40 * mib  # the cached segment was released
    assert record["peak_reserved_bytes"] == 50 * mib


def test_measure_end_to_end_with_fake_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "validation.json"
    factory = fake_factory()
    code = mm.main(validation_argv(out), backend_factory=factory, clock=make_clock())
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    assert result["schema_version"] == mm.SCHEMA_VERSION
    assert result["tool"] == {
        "name": "mesure_memoire.py",
        "version": mm.__version__,
        "lab_version": "v1",
    }
    assert result["dimensions"] == {"batch": 1, "context": 16, "width": 64}
    assert result["policy"]["warmup_passes"] == 1 and result["policy"]["repeats"] == 2
    assert result["command_line"][1:] == validation_argv(out)
    assert [p["phase"] for p in result["phases"]] == VALIDATION_PHASES
    network = result["network"]
    width = 64
    assert network["parameter_count"] == 8 * width * width + 7 * width
    assert network["predicted_parameter_bytes"] == 4 * network["parameter_count"]
    rounded = sum(-(-t["numel"] * 4 // 512) * 512 for t in network["parameter_tensors"])
    assert network["predicted_parameter_bytes_rounded_512"] == rounded
    assert network["predicted_input_bytes"] == 1 * 16 * 64 * 4
    assert network["allocated_after_model_load_bytes"] == FakeWorkload.MODEL_BYTES
    # predict's figures beside each reading, with the difference
    prediction = mm.predict(1, 16, 64, "float32")
    model_load, inputs = result["phases"][0], result["phases"][1]
    assert model_load["prediction"] == {
        "start_allocated_bytes": 0,
        "end_allocated_bytes": prediction["phases"]["model_load"]["allocated_bytes"],
        "start_allocated_difference_bytes": 0,
        "end_allocated_difference_bytes": FakeWorkload.MODEL_BYTES
        - prediction["phases"]["model_load"]["allocated_bytes"],
    }
    assert (
        inputs["prediction"]["end_allocated_bytes"]
        == (prediction["phases"]["inputs"]["allocated_bytes"])
    )
    assert (
        result["prediction"]["model_load_allocated_bytes"]
        == (prediction["phases"]["model_load"]["allocated_bytes"])
    )
    assert result["environment"]["seed"] == mm.SEED == 0
    assert result["counters_unavailable_reason"] is None
    captured = capsys.readouterr()
    progress = captured.err.splitlines()
    for index, record in enumerate(result["phases"][4:], start=5):
        # the clock advances 1 ms a reading: each phase lasts 1 ms
        assert record["duration_ns"] == 10**6
        ok = mm.say(SOURCE, "phase_ok", ms="1", peak=f"{record['peak_allocated_bytes']:,} B")
        assert f"[{index}/6] warm_forward {record['repeat']}/2: {ok}" in progress
    assert "Traceback" not in captured.err
    wrote = mm.say(SOURCE, "wrote", path=out, status=mm.say(SOURCE, "status_ok"))
    assert captured.out == wrote + "\n"


def test_measure_out_of_memory_writes_the_result_and_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "oom.json"
    factory = fake_factory(fail_on_forward=1)
    code = mm.main(validation_argv(out), backend_factory=factory, clock=make_clock())
    assert code == mm.EXIT_PHASE_FAILED == 4
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    assert result["outcome"]["status"] == "failed"
    assert result["outcome"]["failed_phase"] == "cold_forward"
    last = result["phases"][-1]
    assert last["phase"] == "cold_forward" and last["error"]["out_of_memory"] is True
    assert last["peak_allocated_bytes"] is not None
    err = capsys.readouterr().err
    assert "Traceback" not in err
    failed = mm.say(
        SOURCE,
        "phase_outcome",
        phase="cold_forward",
        status=mm.say(SOURCE, "status_failed"),
        message="CUDA out of memory. Tried to allocate 2.00 GiB",
        path=out,
    )
    assert err.splitlines()[-1] == mm.error_line(SOURCE, "mesure_memoire.py", failed)


def test_result_with_nulls_validates_and_zero_is_not_substituted(tmp_path: Path) -> None:
    out = tmp_path / "nulls.json"
    factory = fake_factory()

    def unreadable(args: Any) -> Any:
        backend = factory(args)
        backend.source.failures["memory_reserved"] = RuntimeError("no reserved counter")
        return backend

    assert mm.main(validation_argv(out), backend_factory=unreadable, clock=make_clock()) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    for record in result["phases"]:
        assert record["start_reserved_bytes"] is None
        assert record["end_reserved_bytes"] is None
        assert "start_reserved_bytes" in record["read_errors"]
    assert result["outcome"]["complete_readings"] is False


def test_simulated_allocator_run_matches_the_prediction(tmp_path: Path) -> None:
    """measure, on the simulated caching allocator: model_load and inputs equal predict; the
    part of cold_forward that predict leaves out is the cuBLAS workspace, reported as such."""
    out = tmp_path / "simulated.json"
    code = mm.main(validation_argv(out), backend_factory=SimulatedBackend, clock=make_clock())
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    by_phase = {p["phase"]: p for p in result["phases"]}
    for phase in ("model_load", "inputs"):
        assert by_phase[phase]["prediction"]["end_allocated_difference_bytes"] == 0
    assert by_phase["model_load"]["end_allocated_bytes"] == 133_632
    assert (
        by_phase["inputs"]["end_allocated_bytes"] - by_phase["model_load"]["end_allocated_bytes"]
        == 4_096
    )
    assert by_phase["inputs"]["end_reserved_bytes"] == 2 * 2**20  # one small segment
    workspace = CUBLAS_WORKSPACE_PRE_HOPPER_BYTES
    assert result["prediction"]["cold_forward_unexplained_bytes"] == workspace
    assert by_phase["cold_forward"]["prediction"]["end_allocated_difference_bytes"] == workspace
    meaning = result["prediction"]["cold_forward_unexplained_meaning"]
    assert meaning == mm.say(result["language"], "unexplained_meaning")
    # warm phases carry the workspace but add nothing unexplained of their own
    for record in result["phases"][3:]:
        prediction = record["prediction"]
        assert prediction["end_allocated_difference_bytes"] == workspace
        assert prediction["start_allocated_difference_bytes"] == workspace


def test_caching_off_stores_null_counters_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    reason = mm.caching_disabled_reason()
    assert reason is not None and "PYTORCH_NO_CUDA_MEMORY_CACHING" in reason
    out = tmp_path / "uncached.json"

    def uncached(args: Any) -> Any:
        backend = SimulatedBackend(args)
        # What _TorchBackend does when the environment reports the caching allocator bypassed.
        backend.source = mm.UnreadableCounters(backend.allocator, reason)
        backend.environment["allocator"] = mm.collect_environment("cuda:0", None, "simulated")[
            "allocator"
        ]
        return backend

    assert mm.main(validation_argv(out), backend_factory=uncached, clock=make_clock()) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    assert result["counters_unavailable_reason"] == reason
    assert result["environment"]["allocator"]["caching_enabled"] is False
    assert result["environment"]["allocator"]["settings"]["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"
    for record in result["phases"]:
        assert [record[k] for k in mm.COUNTER_KEYS] == [None] * 6  # never a 0
        assert set(record["read_errors"]) == set(mm.COUNTER_KEYS) - (
            set() if record["peak_reset"] else {"peak_allocated_bytes", "peak_reserved_bytes"}
        )
        assert record["prediction"]["end_allocated_difference_bytes"] is None
    assert result["outcome"]["complete_readings"] is False
    assert result["prediction"]["cold_forward_unexplained_bytes"] is None
    assert mm.say(SOURCE, "counters_not_read", reason=reason) in capsys.readouterr().err


@pytest.mark.parametrize("value", ["1", "0", ""])
def test_caching_off_is_detected_whatever_the_value(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """PyTorch bypasses its cache when the variable is set at all (getenv != nullptr)."""
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", value)
    assert mm.caching_disabled_reason() is not None
    monkeypatch.delenv("PYTORCH_NO_CUDA_MEMORY_CACHING")
    assert mm.caching_disabled_reason() is None


def test_results_written_by_schema_1_0_0_still_validate() -> None:
    old = json.loads(RESULT_1_0_0.read_text(encoding="utf-8"))
    assert old["schema_version"] == "1.0.0" and "prediction" not in old
    validate(old)


@pytest.mark.parametrize(
    "path",
    [
        ("prediction",),
        ("counters_unavailable_reason",),
        ("environment", "driver"),
        ("environment", "visible_devices"),
        ("environment", "seed"),
        ("phases", 0, "prediction"),
    ],
)
def test_schema_1_1_0_requires_the_new_fields(tmp_path: Path, path: tuple[Any, ...]) -> None:
    out = tmp_path / "r.json"
    assert mm.main(validation_argv(out), backend_factory=fake_factory(), clock=make_clock()) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    validate(result)
    parent: Any = result
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(jsonschema.ValidationError):
        validate(result)


def test_schema_rejects_a_zero_filled_failure_without_error() -> None:
    """The schema ties status to error: a failed phase must carry its error."""
    device = FakeCounterSource()
    record = mm.measure_phase("inputs", device, FakeWorkload(device).make_inputs)
    record["status"] = "failed"
    schema = load_schema()
    phase_schema = {"$defs": schema["$defs"], **schema["$defs"]["phase"]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(phase_schema).validate(record)


def test_unavailable_backend_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "none.json"

    def unavailable(args: Any) -> Any:
        problem = mm.say(args.lang, "sees_no_gpu", version="2.13.0")
        raise mm.UsageError("nothing_written", problem=problem)

    assert mm.main(validation_argv(out), backend_factory=unavailable) == 2
    assert not out.exists()


def test_internal_error_leaves_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "crash.json"
    factory = fake_factory()

    def broken(args: Any) -> Any:
        backend = factory(args)
        backend.environment = {"not JSON": object()}  # fails after the run, before any file
        return backend

    assert mm.main(validation_argv(out), backend_factory=broken, clock=make_clock()) == 1
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(
        mm.error_line(SOURCE, "mesure_memoire.py", mm.say(SOURCE, "internal_error", error=""))
    )
    assert "Traceback" not in err
