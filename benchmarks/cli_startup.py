"""Start-up cost of the CLI and of the lab's `estimate`, as ratios against a floor.

- `iteragpu weights ...` (text and `--json`), `iteragpu convert '2 gibibytes' MiB` and
  `iteragpu --help`, each against `python -c "import typer"` (goal: 1.15, so that a noisy run
  stays under 1.2); Indonesian (a second catalogue, the decimal comma) and a refused input are
  shown beside them;
- `python -m iteragpu.lab.mesure_memoire estimate ...` against `python -c pass` (goal: 2.5), and
  `python mesure_memoire.py estimate ...` run by path, as the guides show it (goal: 4: Python
  compiles a script it runs by path at every run, so the file's length counts).

`python -c "import typer, gc; gc.freeze()"` is shown for information: typer's import with the
exit the console script makes (`iteragpu.cli.app.main` freezes the surviving objects, so that
the interpreter's exit collections skip them). Set against it, the ratios of the commands are
what the package adds to typer, like for like.

Every command runs once per round, alternately, over many rounds; the medians give the ratios,
all from one run, with the project's bytecode compiled first (as an installed package has it).
It prints the machine's load average before and after: on a busy machine the ratios mean
little. A benchmark, not a timed test: each goal goes through benchmarks/goals.py, and the exit
status says whether they held.

    python benchmarks/cli_startup.py [--rounds 21]   (from the repository root)
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from goals import check, exit_status

import iteragpu
from iteragpu.lab import mesure_memoire

CLI_GOAL = 1.15
LAB_GOAL = 2.5
LAB_BY_PATH_GOAL = 4.0


class Case(NamedTuple):
    label: str
    command: list[str]
    baseline: str  # the label of the case it is divided by
    goal: float | None  # None: shown for information


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    # Not check=True: the refused inputs end with exit code 2 on purpose.
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def cases(cli: str) -> list[Case]:
    python = sys.executable
    weights = [cli, "weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "4"]
    estimate = ["estimate", "--parameters", "7e9", "--bits", "16", "--reserve-gib", "4"]
    typer, bare = "python -c 'import typer'", "python -c pass"
    frozen = "python -c 'import typer, gc; gc.freeze()'"
    return [
        Case(typer, [python, "-c", "import typer"], typer, None),
        Case(frozen, [python, "-c", "import typer, gc; gc.freeze()"], typer, None),
        Case(bare, [python, "-c", "pass"], bare, None),
        Case("iteragpu weights --params 7e9 --bits 16 --reserve-gib 4", weights, typer, CLI_GOAL),
        Case("  ... --json", [*weights, "--json"], typer, CLI_GOAL),
        Case(
            "  ... --lang id (--bits 16 --reserve-gib 4,5)",
            [*weights[:-1], "4,5", "--lang", "id"],
            typer,
            None,
        ),
        Case(
            "iteragpu convert '2 gibibytes' MiB",
            [cli, "convert", "2 gibibytes", "MiB"],
            typer,
            CLI_GOAL,
        ),
        # Refused by the parser before any arithmetic: as fast as a valid input.
        Case(
            "iteragpu weights --params <5,000 digits> --bits 16",
            [cli, "weights", "--params", "7" * 5000, "--bits", "16"],
            typer,
            None,
        ),
        Case("iteragpu --help", [cli, "--help"], typer, CLI_GOAL),
        Case(
            "python -m iteragpu.lab.mesure_memoire estimate ...",
            [python, "-m", "iteragpu.lab.mesure_memoire", *estimate],
            bare,
            LAB_GOAL,
        ),
        # As the archive runs it: Python compiles a script it runs by path at every run.
        Case(
            "python mesure_memoire.py estimate ... (by path)",
            [python, mesure_memoire.__file__, *estimate],
            bare,
            LAB_BY_PATH_GOAL,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    # The console script of this interpreter's environment, even when it is not on PATH.
    cli = shutil.which("iteragpu", path=str(Path(sys.executable).parent)) or shutil.which(
        "iteragpu"
    )
    if cli is None:
        sys.exit("iteragpu is not installed in this environment")
    # Installed packages ship compiled bytecode; an editable install under
    # PYTHONDONTWRITEBYTECODE=1 would recompile iteragpu at every run, which no user pays.
    compileall.compile_dir(Path(iteragpu.__file__).parent, quiet=1)
    measured = cases(cli)
    print(f"load average before: {_load()}")
    for case in measured:
        _seconds(case.command)  # warm the file cache
    times: dict[str, list[float]] = {case.label: [] for case in measured}
    for _ in range(args.rounds):
        for case in measured:
            times[case.label].append(_seconds(case.command))
    medians = {label: statistics.median(values) for label, values in times.items()}
    print(f"start-up medians over {args.rounds} alternating rounds")
    for case in measured:
        median = medians[case.label]
        line = f"{case.label:<56} median {median * 1000:6.1f} ms"
        if case.baseline != case.label:
            ratio = median / medians[case.baseline]
            line += f"  ratio {ratio:.2f} to {case.baseline}"
            if case.goal is not None:
                verdict = "ok" if ratio <= case.goal else "over goal"
                line += f"  goal <= {case.goal}  {verdict}"
        print(line)
    print(f"load average after: {_load()} (on {os.cpu_count()} CPUs)")
    # Like for like: what the package adds to typer when both exit the way the console script does.
    typer, frozen = measured[0].label, measured[1].label
    print(f"against {frozen} (information)")
    for case in measured:
        if case.baseline == typer and case.label not in (typer, frozen):
            print(f"  {case.label.strip():<54} ratio {medians[case.label] / medians[frozen]:.2f}")
    print("goals")
    held = []
    for case in measured:
        if case.goal is not None:
            name = _goal_name(case)
            print(f"{name}:")
            held.append(check(name, medians[case.label] / medians[case.baseline], case.goal))
    return exit_status(held)


def _goal_name(case: Case) -> str:
    """The goal's name in the bench summary: `cli start-up: <label>`, `lab start-up: <label>`."""
    if case.label.startswith("python"):
        return f"lab start-up: {case.label}"
    label = case.label.strip()
    if label.startswith("..."):  # a variant of the line above it
        label = "iteragpu weights ... --json"
    return f"cli start-up: {label}"


def _load() -> str:
    """The 1, 5 and 15-minute load averages, where the system reports them."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
