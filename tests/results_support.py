"""TEST-ONLY: lab results for the results page, written by the lab itself on its test-only fake
backends (tests/lab/lab_support.py). Their counters are synthetic, never a measurement.

    python tests/results_support.py --write     # rewrite the page's example files

The example files (src/iteragpu/web/results-example.<code>.json) are what the results page offers
for a first look, labelled "example data, not a measurement"; tests/test_results_example.py
checks that they are still what this module writes.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "lab")]

from lab_support import (  # noqa: E402
    SimulatedBackend,
    fake_factory,
    make_clock,
    unreadable_reserved,
)

from iteragpu.docs_tools.results_page import (  # noqa: E402
    EXAMPLE_DEVICE,
    TRAIN_RANKS,
    example_path,
    train_example_path,
)
from iteragpu.i18n.languages import CODES  # noqa: E402
from iteragpu.lab import mesure_memoire as mm  # noqa: E402

# The README's example run: large enough for a chart in which model_load's bars show.
EXAMPLE_ARGS = (
    *("--device", "cuda:0", "--batch", "2", "--context", "128", "--width", "1024"),
    *("--dtype", "float32", "--warmup", "3", "--repeats", "5"),
)
# The small validation case of the measurement guide, for the other synthetic results.
SMALL_ARGS = (
    *("--device", "cuda:0", "--batch", "1", "--context", "16", "--width", "64"),
    *("--dtype", "float32", "--warmup", "1", "--repeats", "2"),
)


def _device(name: str) -> dict[str, Any]:
    return {
        "index": 0,
        "name": name,
        "total_memory_bytes": None,  # a simulation has no capacity to report
        "compute_capability": None,
        "free_bytes": None,
        "mem_get_info_total_bytes": None,
        "requested": True,
        "uuid": None,
        "pci_bus_id": None,
        "arch_name": None,
    }


def _with_device(factory: Callable[[Any], Any], name: str) -> Callable[[Any], Any]:
    def build(args: Any) -> Any:
        backend = factory(args)
        backend.environment["devices"] = [_device(name)]
        return backend

    return build


def synthetic_result(folder: Path, kind: str, lang: str = "ko") -> Path:
    """A result the lab writes on a fake backend: `simulated` (ok), `oom` (cold_forward runs out
    of memory), `nulls` (reserved never read) or `example` (the page's example, before the
    machine's own details are blanked)."""
    name = f"synthetic {kind}"
    factories = {
        "simulated": _with_device(SimulatedBackend, name),
        "oom": _with_device(fake_factory(fail_on_forward=1), name),
        "nulls": _with_device(unreadable_reserved, name),
        "example": _with_device(SimulatedBackend, EXAMPLE_DEVICE[lang]),
    }
    out = folder / f"synthetic-{kind}.{lang}.json"
    args = EXAMPLE_ARGS if kind == "example" else SMALL_ARGS
    mm.main(
        ["measure", *args, "--output", str(out), "--lang", lang],
        backend_factory=factories[kind],
        clock=make_clock(),
    )
    assert out.is_file(), f"the lab wrote no {kind} result"
    return out


# The training example: the lab's step, small enough that its parts show beside the workspace.
TRAIN_ARGS = (
    *("--task", "train", "--device", "cuda:0", "--batch", "8", "--context", "128"),
    *("--width", "512", "--optimizer", "adamw", "--precision", "fp32", "--steps", "3"),
)


def train_result(
    folder: Path, lang: str = "ko", name: str = "synthetic train", steps: int = 3
) -> Path:
    """The lab's training step (`measure --task train`) on the simulated allocator."""
    out = folder / f"synthetic-train-{steps}.{lang}.json"
    args = [*TRAIN_ARGS[:-1], str(steps)]
    mm.main(
        ["measure", *args, "--output", str(out), "--lang", lang],
        backend_factory=_with_device(SimulatedBackend, name),
        clock=make_clock(),
    )
    assert out.is_file(), "the lab wrote no training result"
    return out


def rank_results(folder: Path, lang: str = "ko", name: str = "synthetic ranks") -> list[Path]:
    """Two processes of one run, each recorded by a Recorder on its own simulated allocator
    and written to its own file: rank 1 holds a larger batch, so its peak is the higher."""
    from lab_support import SimulatedCachingAllocator, SimulatedModel, SimulatedTrainWorkload

    paths = []
    for rank, batch in ((0, 4), (1, 8)):
        allocator = SimulatedCachingAllocator()
        workload = SimulatedTrainWorkload(allocator, batch, 128, 512, "fp32", "adamw")
        model = SimulatedModel(workload)  # the stand-in model is its own optimizer too
        recorder = mm.Recorder(
            "cuda:0",
            model,
            model,
            counters=allocator,
            output_dir=str(folder / "ranks"),
            rank=rank,
            world_size=2,
            lang=lang,
        )
        recorder._clock = make_clock()
        # What a simulation records whether or not this process has imported PyTorch.
        recorder.environment = mm.collect_environment(
            "cuda:0", None, "ModuleNotFoundError: simulated", lang
        )
        recorder.environment["devices"] = [_device(name)]
        recorder.environment["requested_device_usable"] = True
        with recorder:
            with recorder.phase("model_load"):
                workload.load_model()
            with recorder.phase("inputs"):
                workload.make_inputs()
            for step in (1, 2):
                for phase in ("forward", "loss", "backward", "optimizer_step", "zero_grad"):
                    with recorder.phase(phase, step=step):
                        getattr(workload, phase)()
        paths.append(folder / "ranks" / f"mesures-rank{rank}.json")
    return paths


def example_result(folder: Path, lang: str) -> dict[str, Any]:
    """The page's example for `lang`: the simulated run, with what depends on the machine that
    wrote it (its paths, environment variables, clock) set to what a bare machine records."""
    result: dict[str, Any] = json.loads(
        synthetic_result(folder, "example", lang).read_text("utf-8")
    )
    output = result["command_line"].index("--output") + 1
    result["command_line"][output] = example_path(lang).name
    return _blanked(result)


def _blanked(result: dict[str, Any]) -> dict[str, Any]:
    """What depends on the machine that wrote `result` set to what a bare machine records."""
    result["started_utc"] = "2000-01-01T00:00:00Z"
    env = result["environment"]
    env["python"]["executable"] = None
    env["platform"] = dict.fromkeys(env["platform"])
    for group in ("visible_devices", "blas_workspace"):
        env[group] = dict.fromkeys(env[group])
    env["allocator"]["settings"] = dict.fromkeys(env["allocator"]["settings"])
    env["nvml_devices"] = None
    env["driver"] = dict.fromkeys(env["driver"])
    env["driver_version"] = None
    return result


# What still depends on the machine once blanked: the interpreter's version, and which of the
# tools the lab looks for it found (the `missing` list).
MACHINE_KEYS = (("environment", "python", "version"), ("environment", "missing"))


def without_machine(result: dict[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(result)
    for *parents, key in MACHINE_KEYS:
        node = copied
        for parent in parents:
            node = node[parent]
        node.pop(key, None)
    return copied


def train_example_results(folder: Path, lang: str) -> list[dict[str, Any]]:
    """The page's training example for `lang`: the two processes of rank_results, each as its
    Recorder wrote it, with the example device's name and nothing of the machine."""
    results = []
    for path in rank_results(folder, lang, EXAMPLE_DEVICE[lang]):
        result = _blanked(json.loads(path.read_text("utf-8")))
        result["command_line"] = ["train.py"]  # the reader's script, not the test's
        results.append(result)
    return results


DRIVER = ROOT / "tests" / "js" / "results_driver.mjs"


def run_node(mode: str, cases: list[Any]) -> list[Any]:
    """What results.js answers for `cases` (tests/js/results_driver.mjs)."""
    import pytest

    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed: results.js is checked with it")
        pytest.skip("node is not installed (results.js is checked with it)")
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "cases.json"
        listing.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
        done = subprocess.run(
            [node, str(DRIVER), mode, str(listing)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    answers: list[Any] = json.loads(done.stdout)
    return answers


def write_examples(folder: Path) -> None:
    for lang in CODES:
        text = json.dumps(example_result(folder, lang), ensure_ascii=False, indent=1) + "\n"
        example_path(lang).write_text(text, encoding="utf-8")
        print(f"wrote {example_path(lang)}")
        for rank, result in zip(
            TRAIN_RANKS, train_example_results(folder / lang, lang), strict=True
        ):
            path = train_example_path(lang, rank)
            path.write_text(
                json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", required=True)
    parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        write_examples(Path(tmp))
