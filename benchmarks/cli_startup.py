"""Start-up cost of the CLI, as a ratio to `python -c "import typer"` (goal: at most 1.2).

Runs each command alternately, takes medians, prints the ratio. A benchmark, not a test:
machines differ, so it reports and never fails on time.
"""

from __future__ import annotations

import compileall
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 21
GOAL_RATIO = 1.2


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    # Not check=True: the refused inputs end with exit code 2 on purpose.
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _compile_package() -> None:
    # Installed packages such as typer ship compiled bytecode; an editable install under
    # PYTHONDONTWRITEBYTECODE=1 would recompile iteragpu on every run, which no user pays.
    import iteragpu

    compileall.compile_dir(Path(iteragpu.__file__).parent, quiet=1)


def main() -> int:
    iteragpu = shutil.which("iteragpu") or sys.exit("iteragpu is not installed in this environment")
    _compile_package()
    baseline = [sys.executable, "-c", "import typer"]
    weights = [iteragpu, "weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "4"]
    cases = {
        "iteragpu weights --params 7e9 --bits 16 --reserve-gib 4": weights,
        "  ... --json (no Babel: JSON numbers are not localised)": [*weights, "--json"],
        "iteragpu convert '24e9 B' GiB": [iteragpu, "convert", "24e9 B", "GiB"],
        "iteragpu convert '2 gibibytes' MiB (a long name, no pint)": [
            iteragpu,
            "convert",
            "2 gibibytes",
            "MiB",
        ],
        # Refused by the parser before any arithmetic: as fast as a valid input.
        "iteragpu weights --params <5,000 digits> --bits 16": [
            iteragpu,
            "weights",
            "--params",
            "7" * 5000,
            "--bits",
            "16",
        ],
        "iteragpu weights --params 7e9 --bits 1e-20000000": [
            *weights[:4],
            "--bits",
            "1e-20000000",
        ],
        "iteragpu --help": [iteragpu, "--help"],
    }
    for command in [baseline, *cases.values()]:
        _seconds(command)  # warm the file cache
    base_times: list[float] = []
    case_times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        base_times.append(_seconds(baseline))
        for name, command in cases.items():
            case_times[name].append(_seconds(command))
    base = statistics.median(base_times)
    print(f"baseline  python -c 'import typer'  median {base * 1000:.1f} ms  ({RUNS} runs)")
    for name, times in case_times.items():
        median = statistics.median(times)
        ratio = median / base
        verdict = "ok" if ratio <= GOAL_RATIO else "over goal"
        print(f"{name:<58} median {median * 1000:.1f} ms  ratio {ratio:.2f}", end="  ")
        print(f"goal <= {GOAL_RATIO}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
