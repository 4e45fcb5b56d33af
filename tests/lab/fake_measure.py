"""TEST-ONLY: `measure` on the fake backend in a process of its own, for the signal tests.

    python fake_measure.py READY_FILE MEASURE_ARGUMENTS...

The first forward pass creates READY_FILE; every forward pass then takes 0.2 s, so that a test
can send a signal while a phase runs. `--task train` runs the simulated training step
(SimulatedBackend), whose forward phases are slowed the same way.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Its folder is on sys.path, run as a script or collected by pytest (`pythonpath`).
from lab_support import FakeBackend, FakeWorkload, SimulatedBackend

from iteragpu.lab import mesure_memoire as mm

FORWARD_SECONDS = 0.2


class SlowWorkload(FakeWorkload):
    ready: Path

    def forward(self) -> None:
        self.ready.touch()
        time.sleep(FORWARD_SECONDS)
        super().forward()


def main(argv: list[str]) -> int:
    ready, measure_args = Path(argv[0]), argv[1:]

    def factory(args: argparse.Namespace) -> FakeBackend | SimulatedBackend:
        if args.task == "train":
            simulated = SimulatedBackend(args)
            forward = simulated.workload.forward

            def slow_forward() -> None:
                ready.touch()
                time.sleep(FORWARD_SECONDS)
                forward()

            simulated.workload.forward = slow_forward
            return simulated
        backend = FakeBackend(args)
        backend.workload = SlowWorkload(backend.source)
        backend.workload.ready = ready
        return backend

    return mm.main(measure_args, backend_factory=factory)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
