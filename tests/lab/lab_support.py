"""Helpers for the lab tests. The fakes here are TEST-ONLY stand-ins for torch.cuda;
they are never shipped (the script only defines the CounterSource protocol they follow)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iteragpu.lab import mesure_memoire as mm

SCRIPT = Path(mm.__file__).resolve()
LAB_DIR = SCRIPT.parent
SCHEMA_PATH = LAB_DIR / "result.schema.json"


def run_script(
    *args: str, cwd: Path, isolated: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run mesure_memoire.py as a user would; `-I -S` keeps site-packages (and torch) away."""
    flags = ["-I", "-S"] if isolated else ["-I"]
    return subprocess.run(
        [sys.executable, *flags, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# The phase records of the validation case: one warm-up record, one record per warm repeat.
VALIDATION_PHASES = [
    "model_load",
    "inputs",
    "cold_forward",
    "warmup",
    "warm_forward",
    "warm_forward",
]


def validation_argv(output: Path, *extra: str) -> list[str]:
    """`measure` with the guide's validation case: batch 1, context 16, width 64, float32."""
    return [
        *["measure", "--device", "cuda:0", "--batch", "1", "--context", "16"],
        *["--width", "64", "--dtype", "float32", "--warmup", "1", "--repeats", "2"],
        "--output",
        str(output),
        *extra,
    ]


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


class FakeOutOfMemoryError(RuntimeError):
    """Named like torch.OutOfMemoryError."""


FakeOutOfMemoryError.__name__ = "OutOfMemoryError"


class FakeCounterSource:
    """TEST-ONLY fake of torch.cuda for one device: logs every call, simulates allocations.

    `failures` maps a method name to an exception raised on each call of that method.
    """

    def __init__(self, log: list[str] | None = None) -> None:
        self.log: list[str] = [] if log is None else log
        self.allocated = 0
        self.reserved = 0
        self.peak_allocated = 0
        self.peak_reserved = 0
        self.failures: dict[str, BaseException] = {}

    def _call(self, name: str) -> None:
        self.log.append(name)
        if name in self.failures:
            raise self.failures[name]

    # the CounterSource protocol
    def synchronize(self) -> None:
        self._call("synchronize")

    def memory_allocated(self) -> int:
        self._call("memory_allocated")
        return self.allocated

    def memory_reserved(self) -> int:
        self._call("memory_reserved")
        return self.reserved

    def max_memory_allocated(self) -> int:
        self._call("max_memory_allocated")
        return self.peak_allocated

    def max_memory_reserved(self) -> int:
        self._call("max_memory_reserved")
        return self.peak_reserved

    def reset_peak_memory_stats(self) -> None:
        self._call("reset_peak_memory_stats")
        self.peak_allocated = self.allocated
        self.peak_reserved = self.reserved

    # simulation helpers
    def allocate(self, nbytes: int) -> None:
        self.allocated += nbytes
        block = 2 * 1024 * 1024
        self.reserved = max(self.reserved, -(-self.allocated // block) * block)
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def free(self, nbytes: int) -> None:
        self.allocated -= nbytes


class FakeWorkload:
    """TEST-ONLY workload: allocates on the fake device and logs `run:<step>`.

    `fail_on_forward` = n makes the n-th forward pass (1-based) raise `error` after
    allocating part of its temporary memory, like a real out-of-memory.
    """

    MODEL_BYTES = 10_000
    INPUT_BYTES = 1_000
    TEMP_BYTES = 50_000
    OUTPUT_BYTES = 1_000

    def __init__(
        self,
        device: FakeCounterSource,
        fail_on_forward: int | None = None,
        error: BaseException | None = None,
    ) -> None:
        self.device = device
        self.forwards = 0
        self.fail_on_forward = fail_on_forward
        self.error = error or FakeOutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.has_output = False

    def load_model(self) -> None:
        self.device.log.append("run:load_model")
        self.device.allocate(self.MODEL_BYTES)

    def make_inputs(self) -> None:
        self.device.log.append("run:make_inputs")
        self.device.allocate(self.INPUT_BYTES)

    def forward(self) -> None:
        self.device.log.append("run:forward")
        self.forwards += 1
        self.device.allocate(self.TEMP_BYTES // 2)
        if self.forwards == self.fail_on_forward:
            self.device.free(self.TEMP_BYTES // 2)
            raise self.error
        self.device.allocate(self.TEMP_BYTES // 2)
        self.device.free(self.TEMP_BYTES)
        if not self.has_output:
            self.device.allocate(self.OUTPUT_BYTES)
            self.has_output = True


class FakeBackend:
    """TEST-ONLY backend for mm.main(..., backend_factory=...)."""

    def __init__(self, args: argparse.Namespace, **workload_kw: Any) -> None:
        self.source = FakeCounterSource()
        self.workload = FakeWorkload(self.source, **workload_kw)
        env = mm.collect_environment(args.device, None, "ModuleNotFoundError: fake")
        env["requested_device_usable"] = True
        env["requested_device_problem"] = None
        self.environment = env


def fake_factory(**workload_kw: Any) -> Callable[[argparse.Namespace], FakeBackend]:
    created: list[FakeBackend] = []

    def factory(args: argparse.Namespace) -> FakeBackend:
        backend = FakeBackend(args, **workload_kw)
        created.append(backend)
        return backend

    factory.created = created  # type: ignore[attr-defined]
    return factory


def make_clock(step_ns: int = 1_000_000) -> Callable[[], int]:
    """A deterministic clock: each call advances by step_ns."""
    ticks = iter(range(0, 10**15, step_ns))
    return lambda: next(ticks)
