"""One way for every benchmark to state a goal and whether it held.

Each benchmark calls `check(name, measured, goal, unit)` for each goal: it prints the line
(`ratio 1.23  goal <= 1.5  ok`) and, when `ITERAGPU_BENCH_RESULTS` names a file (`nox -s bench`
sets it), appends the verdict there as one JSON line. `python benchmarks/goals.py --summary FILE`
prints one line per goal and the summary, and exits 1 when any goal was missed, so that the
bench session runs every benchmark, then fails once, at the end, naming what missed.

A benchmark, not a test: the goals are ratios measured side by side in one run (against a
floor or a peer), so a slow machine slows both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Literal

RESULTS_ENV = "ITERAGPU_BENCH_RESULTS"
Comparison = Literal["<=", "<"]


def check(
    name: str, measured: float, goal: float, what: str = "ratio", comparison: Comparison = "<="
) -> bool:
    """Print `what measured  goal <= goal  ok|over` and record the verdict; True when it held."""
    held = measured <= goal if comparison == "<=" else measured < goal
    verdict = "ok" if held else "over"
    print(f"  {what} {measured:.3f}  goal {comparison} {goal:g}  {verdict}")
    results = os.environ.get(RESULTS_ENV)
    if results:
        record = {
            "name": name,
            "what": what,
            "measured": measured,
            "goal": goal,
            "comparison": comparison,
            "ok": held,
        }
        with open(results, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    return held


def exit_status(held: list[bool]) -> int:
    """A benchmark's exit status: 1 when one of its goals was missed."""
    return 0 if all(held) else 1


def summary(path: Path) -> int:
    """Print every recorded goal and one summary line; 1 when any was missed or none recorded."""
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    records = [json.loads(line) for line in lines if line.strip()]
    print("goals")
    for record in records:
        verdict = "ok" if record["ok"] else "over"
        print(
            f"  {verdict:<4}  {record['name']}: {record['what']} {record['measured']:.3f}"
            f"  (goal {record['comparison']} {record['goal']:g})"
        )
    missed = [record["name"] for record in records if not record["ok"]]
    if not records:
        print("bench: no goal was recorded")
        return 1
    if missed:
        print(
            f"bench: {len(records) - len(missed)} of {len(records)} goals ok; missed: "
            + "; ".join(missed)
        )
        return 1
    print(f"bench: all {len(records)} goals ok")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", type=Path, required=True, help="the results file")
    args = parser.parse_args(argv)
    return summary(args.summary)


if __name__ == "__main__":
    sys.exit(main())
