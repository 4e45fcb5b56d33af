"""How long `shortlist --evidence` takes to read the largest lab result it accepts.

The evidence reader validates a result against the lab's JSON Schema, which costs time per
phase; `MAX_EVIDENCE_BYTES` bounds that. Budget: well under a second. Prints the median over
several reads and its ratio to one second.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from goals import check, exit_status

from iteragpu.gpus.evidence import MAX_EVIDENCE_BYTES, read_evidence

# A result written by the lab's fake backend (a fixture, not a measurement).
FIXTURE = Path(__file__).parents[1] / "tests" / "lab" / "data" / "result-1.0.0-fake-counters.json"
BUDGET_S = 1.0
ROUNDS = 7


def largest_accepted_result(folder: Path) -> Path:
    """The fixture, its last phase repeated until the file is just under the size limit."""
    result = json.loads(FIXTURE.read_text("utf-8"))
    phase = result["phases"][-1]
    while len(json.dumps(result, indent=2)) < MAX_EVIDENCE_BYTES - 1000:
        result["phases"].append(dict(phase))
    path = folder / "largest.json"
    path.write_text(json.dumps(result, indent=2), "utf-8")  # indented, as the lab writes it
    return path


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = largest_accepted_result(Path(tmp))
        read_evidence(path)  # loads jsonschema and compiles the schema once, as a command does
        timings = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            read_evidence(path)
            timings.append(time.perf_counter() - started)
        size = path.stat().st_size
    median = statistics.median(timings)
    print(
        f"evidence: largest accepted result ({size:,} B) read in {median * 1000:.1f} ms "
        f"(median of {ROUNDS})"
    )
    held = check("largest accepted lab result", median / BUDGET_S, 1, "ratio to 1 s", "<")
    return exit_status([held])


if __name__ == "__main__":
    sys.exit(main())
