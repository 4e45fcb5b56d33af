"""The lab's check on a real GPU, run by `nox -s gpu`: measure against predict, and exit codes.

    python tests/gpu/lab_gpu_check.py FOLDER [--device cuda:0]

1. `measure` the guides' validation case (batch 1, context 16, width 64, float32, warm-up 1,
   repeats 2) and the README's example (batch 2, context 128, width 1024): the allocated bytes
   after model_load and inputs must equal `predict` exactly; in the validation case, reserved
   after those phases must be one 2 MiB segment.
2. An existing --output must end with exit 3 (the file untouched), a missing device index with
   exit 2 (nothing written).
3. The validation case again with expandable_segments and with cudaMallocAsync: reported, not
   asserted.
4. The training step (`measure --task train`, validation dimensions, three steps): with fp32 and
   AdamW, asserted; with bf16 and SGD, and autocast-bf16 and AdamW, reported. After every
   phase the model states counted from the tensors must equal `predict --task train`; after the
   first step's backward, optimizer_step and zero_grad, allocated must be those predicted model
   states plus one same remainder (the inputs, the target and what the first forward pass left,
   the cuBLAS workspace first: no activation outlives backward), to the byte.

Prints a predicted-vs-measured table and writes every result file to FOLDER (new or empty),
with `summary.json`. Exit 0 when every asserted check holds, 1 when one fails, 2 on bad use.
The asserted runs use PyTorch's default allocator: the allocator variables of the calling
environment are removed for them. Standard library only; it runs mesure_memoire.py as a user.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "src" / "iteragpu" / "lab" / "mesure_memoire.py"
SMALL_SEGMENT_BYTES = 2 * 2**20  # PyTorch's kSmallBuffer: small allocations share 2 MiB segments
RUN_TIMEOUT_S = 100
BUDGET_S = 180
# Removed from the asserted runs so that they see PyTorch's default caching allocator.
ALLOCATOR_VARIABLES = (
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
)


@dataclass(frozen=True)
class Case:
    name: str
    batch: int
    context: int
    width: int
    dtype: str
    warmup: int
    repeats: int

    def dimensions(self) -> list[str]:
        return [
            *["--batch", str(self.batch), "--context", str(self.context)],
            *["--width", str(self.width), "--dtype", self.dtype],
        ]

    def measure(self, device: str, output: Path) -> list[str]:
        return [
            *["measure", "--device", device, *self.dimensions()],
            *["--warmup", str(self.warmup), "--repeats", str(self.repeats)],
            *["--output", str(output)],
        ]


VALIDATION = Case("validation", 1, 16, 64, "float32", 1, 2)
README_EXAMPLE = Case("readme-example", 2, 128, 1024, "float32", 3, 5)


@dataclass(frozen=True)
class TrainCase:
    name: str
    precision: str
    optimizer: str
    asserted: bool
    steps: int = 3

    def dimensions(self) -> list[str]:
        return [
            *["--task", "train", "--batch", str(VALIDATION.batch)],
            *["--context", str(VALIDATION.context), "--width", str(VALIDATION.width)],
            *["--precision", self.precision, "--optimizer", self.optimizer],
        ]

    def measure(self, device: str, output: Path) -> list[str]:
        return [
            *["measure", "--device", device, *self.dimensions()],
            *["--steps", str(self.steps), "--output", str(output)],
        ]


TRAIN_CASES = (
    TrainCase("train-fp32-adamw", "fp32", "adamw", True),
    TrainCase("train-bf16-sgd", "bf16", "sgd", False),
    TrainCase("train-autocast-bf16-adamw", "autocast-bf16", "adamw", False),
)
REPORTED_VARIANTS = {
    "expandable-segments": {"PYTORCH_ALLOC_CONF": "expandable_segments:True"},
    "cudamallocasync": {"PYTORCH_ALLOC_CONF": "backend:cudaMallocAsync"},
}


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


# A runner executes mesure_memoire.py with these arguments and extra environment variables
# (None as a value removes the variable).
Runner = Callable[[Sequence[str], dict[str, str | None]], Run]


def subprocess_runner(python: str = sys.executable, script: Path = SCRIPT) -> Runner:
    def run(arguments: Sequence[str], extra: dict[str, str | None]) -> Run:
        env = dict(os.environ)
        for name, value in extra.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        try:
            done = subprocess.run(
                [python, str(script), *arguments],
                capture_output=True,
                text=True,
                env=env,
                timeout=RUN_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Run(124, "", f"timed out after {RUN_TIMEOUT_S} s")
        return Run(done.returncode, done.stdout, done.stderr)

    return run


@dataclass
class Check:
    name: str
    passed: bool
    detail: str
    asserted: bool = True


@dataclass
class Row:
    case: str
    phase: str
    predicted_allocated_bytes: int | None
    measured_allocated_bytes: int | None
    difference_bytes: int | None
    measured_reserved_bytes: int | None
    asserted: bool


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    environment: dict[str, Any] | None = None
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks if c.asserted)


DEFAULT_ALLOCATOR: dict[str, str | None] = dict.fromkeys(ALLOCATOR_VARIABLES)


def _last_line(run: Run) -> str:
    lines = run.stderr.strip().splitlines()
    return lines[-1] if lines else "(no message)"


def _predict(runner: Runner, case: Case) -> dict[str, Any] | None:
    run = runner(["predict", *case.dimensions(), "--json"], {})
    if run.returncode != 0:
        return None
    prediction: dict[str, Any] = json.loads(run.stdout)
    return prediction


def _measure(
    runner: Runner,
    report: Report,
    case: Case | TrainCase,
    label: str,
    output: Path,
    device: str,
    extra: dict[str, str | None],
    asserted: bool,
) -> dict[str, Any] | None:
    run = runner(case.measure(device, output), extra)
    ok = run.returncode == 0 and output.is_file()
    report.checks.append(
        Check(
            f"{label}: measure exits 0",
            ok,
            f"exit {run.returncode}" + ("" if ok else f": {_last_line(run)}"),
            asserted,
        )
    )
    if not output.is_file():
        return None
    result: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return result


def _compare(
    report: Report,
    label: str,
    prediction: dict[str, Any],
    result: dict[str, Any],
    asserted: bool,
    check_segment: bool,
) -> None:
    phases = {p["phase"]: p for p in result["phases"] if p["repeat"] in (None, 1)}
    kept = prediction["kept_output"]["allocated_bytes"]
    expected = {
        "model_load": prediction["phases"]["model_load"]["allocated_bytes"],
        "inputs": prediction["phases"]["inputs"]["allocated_bytes"],
        "cold_forward": kept,
        "warm_forward": kept,
    }
    for phase, predicted in expected.items():
        record = phases.get(phase)
        measured = None if record is None else record["end_allocated_bytes"]
        exact = phase in ("model_load", "inputs")
        report.rows.append(
            Row(
                label,
                phase,
                predicted,
                measured,
                None if measured is None else measured - predicted,
                None if record is None else record["end_reserved_bytes"],
                asserted and exact,
            )
        )
        if exact:
            report.checks.append(
                Check(
                    f"{label}: {phase} allocated equals predict",
                    measured == predicted,
                    f"predicted {predicted:,} B, measured "
                    + ("null" if measured is None else f"{measured:,} B"),
                    asserted,
                )
            )
        if exact and check_segment:
            reserved = None if record is None else record["end_reserved_bytes"]
            report.checks.append(
                Check(
                    f"{label}: {phase} reserved is one 2 MiB segment",
                    reserved == SMALL_SEGMENT_BYTES,
                    "reserved " + ("null" if reserved is None else f"{reserved:,} B"),
                    asserted,
                )
            )


def _check_training(
    report: Report, case: TrainCase, prediction: dict[str, Any], result: dict[str, Any]
) -> None:
    """Each phase's counted model states against the prediction, and the first step's
    allocated levels against the predicted states plus the remainder zero_grad leaves."""
    label = case.name
    mismatched = []
    for record in result["phases"]:
        name = record["phase"] + ("" if record["step"] is None else f" ({record['step']})")
        expected = record["parts_prediction"]["model_state_allocated_bytes"]
        parts = record["parts"]
        counted = None if parts is None else parts["model_state_allocated_bytes"]
        if record["step"] in (None, 1):
            report.rows.append(
                Row(
                    label,
                    f"{name} model states",
                    expected,
                    counted,
                    None if counted is None else counted - expected,
                    None,
                    case.asserted,
                )
            )
        if counted != expected:
            mismatched.append(f"{name}: counted {counted}, predicted {expected}")
    report.checks.append(
        Check(
            f"{label}: model states equal predict --task train after every phase",
            not mismatched and bool(result["phases"]),
            "; ".join(mismatched) or f"{len(result['phases'])} phases",
            case.asserted,
        )
    )
    first = {r["phase"]: r for r in result["phases"] if r["step"] == 1}
    states = prediction["phases"]["first_step"]
    if not all(n in first for n in ("backward", "optimizer_step", "zero_grad")):
        report.checks.append(
            Check(f"{label}: first step complete", False, "phases missing", case.asserted)
        )
        return
    kept = {
        n: None
        if first[n]["end_allocated_bytes"] is None
        else first[n]["end_allocated_bytes"] - states[n]["model_state_allocated_bytes"]
        for n in ("backward", "optimizer_step", "zero_grad")
    }
    for n, value in kept.items():
        report.rows.append(
            Row(label, f"{n} (1) allocated - model states", None, value, None, None, False)
        )
    inputs = prediction["inputs"]["added_bytes"]
    same = len(set(kept.values())) == 1 and None not in kept.values()
    report.checks.append(
        Check(
            f"{label}: allocated after backward, optimizer_step and zero_grad of step 1 is the "
            "predicted model states plus one remainder",
            same and (kept["zero_grad"] or 0) >= inputs,
            f"remainders {kept} B; inputs and target {inputs:,} B",
            case.asserted,
        )
    )
    host = states["optimizer_step"]["optimizer_state_host_bytes"]
    counted_host = (first["optimizer_step"]["parts"] or {}).get("optimizer_state_host_bytes")
    report.checks.append(
        Check(
            f"{label}: optimizer state in host memory after step 1",
            counted_host == host,
            f"predicted {host} B, counted {counted_host} B",
            case.asserted,
        )
    )


def run_checks(runner: Runner, folder: Path, device: str = "cuda:0") -> Report:
    started = time.monotonic()
    report = Report()
    for case in (VALIDATION, README_EXAMPLE):
        prediction = _predict(runner, case)
        if prediction is None:
            report.checks.append(Check(f"{case.name}: predict exits 0", False, "predict failed"))
            continue
        result = _measure(
            runner,
            report,
            case,
            case.name,
            folder / f"{case.name}.json",
            device,
            DEFAULT_ALLOCATOR,
            True,
        )
        if result is None:
            continue
        if case is VALIDATION:
            report.environment = result["environment"]
        _compare(report, case.name, prediction, result, True, case is VALIDATION)

    # Both exit-code checks mean something only where a GPU was measured just before.
    existing = folder / f"{VALIDATION.name}.json"
    if report.environment is None or not existing.is_file():
        for name in ("existing --output: exit 3", "missing device index: exit 2"):
            report.checks.append(Check(name, False, "not checked: no GPU was measured"))
    else:
        before = existing.read_bytes()
        run = runner(VALIDATION.measure(device, existing), DEFAULT_ALLOCATOR)
        report.checks.append(
            Check(
                "existing --output: exit 3, file untouched",
                run.returncode == 3 and existing.read_bytes() == before,
                f"exit {run.returncode}",
            )
        )
        count = (report.environment.get("torch") or {}).get("device_count")
        missing_device = f"cuda:{count if isinstance(count, int) else 9999}"
        absent = folder / "missing-device.json"
        run = runner(VALIDATION.measure(missing_device, absent), DEFAULT_ALLOCATOR)
        report.checks.append(
            Check(
                f"missing device index ({missing_device}): exit 2, nothing written",
                run.returncode == 2 and not absent.exists(),
                f"exit {run.returncode}: {_last_line(run)}",
            )
        )

    for train in TRAIN_CASES:
        run = runner(["predict", *train.dimensions(), "--json"], {})
        if run.returncode != 0:
            report.checks.append(Check(f"{train.name}: predict exits 0", False, _last_line(run)))
            continue
        trained = _measure(
            runner,
            report,
            train,
            train.name,
            folder / f"{train.name}.json",
            device,
            DEFAULT_ALLOCATOR,
            train.asserted,
        )
        if trained is not None:
            _check_training(report, train, json.loads(run.stdout), trained)

    prediction = _predict(runner, VALIDATION)
    for variant, extra in REPORTED_VARIANTS.items():
        label = f"{VALIDATION.name}+{variant}"
        result = _measure(
            runner,
            report,
            VALIDATION,
            label,
            folder / f"{label}.json",
            device,
            {**DEFAULT_ALLOCATOR, **extra},
            False,
        )
        if result is not None and prediction is not None:
            _compare(report, label, prediction, result, False, True)
    report.elapsed_s = time.monotonic() - started
    report.checks.append(
        Check(
            f"finished within {BUDGET_S} s",
            report.elapsed_s < BUDGET_S,
            f"{report.elapsed_s:.1f} s",
            asserted=False,
        )
    )
    return report


def _bytes(value: int | None) -> str:
    return "null" if value is None else f"{value:,}"


def format_report(report: Report) -> str:
    header = ("case", "phase (end)", "predicted B", "measured B", "difference B", "reserved B", "")
    rows = [header]
    for row in report.rows:
        rows.append(
            (
                row.case,
                row.phase,
                _bytes(row.predicted_allocated_bytes),
                _bytes(row.measured_allocated_bytes),
                _bytes(row.difference_bytes),
                _bytes(row.measured_reserved_bytes),
                "asserted" if row.asserted else "reported",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
    lines.append(
        "cold_forward and warm_forward: the difference is what predict leaves out "
        "(the cuBLAS/cuBLASLt workspace first), not the model."
    )
    for check in report.checks:
        mark = ("PASS" if check.passed else "FAIL") if check.asserted else "INFO"
        lines.append(f"[{mark}] {check.name}: {check.detail}")
    env = report.environment or {}
    devices = [d for d in env.get("devices", []) if d.get("requested")]
    if devices:
        torch = env.get("torch", {})
        driver = env.get("driver") or {}
        lines.append(
            f"device: {devices[0].get('name')}; torch {torch.get('version')} "
            f"(CUDA {torch.get('cuda')}, HIP {torch.get('hip')}); driver "
            f"{driver.get('version')} (supports CUDA {driver.get('cuda_version')})"
        )
    lines.append("result: " + ("every asserted check holds" if report.passed else "FAILED"))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, runner: Runner | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where the result files go (new or empty)")
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args(argv)
    folder: Path = args.folder
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        print(f"lab_gpu_check: {folder} exists and is not an empty folder", file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    report = run_checks(runner or subprocess_runner(), folder, args.device)
    summary = {
        "passed": report.passed,
        "elapsed_s": round(report.elapsed_s, 1),
        "checks": [asdict(c) for c in report.checks],
        "rows": [asdict(r) for r in report.rows],
    }
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(format_report(report))
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
