"""`iteragpu model` on a `config.json` against the nearest offline peer doing the same job.

Writes a Llama-3-8B-shaped `config.json` (the published sizes, no download) in a temporary
folder, then runs, alternately over many rounds after a warm-up:

- `iteragpu model DIR --tokens 8192 --dtype bfloat16 --json` (goal: at most 1.0x the peer);
- `vramcalc estimate DIR/config.json --seq 8192 --dtype bf16 --json`: vramcalc
  (`pip install vramcalc==0.1.2`, no dependencies) reads the same config offline and prints
  its estimate as JSON;
- for information: `iteragpu model ...` as a table, and `python -c "import typer"`, the floor
  the other `iteragpu` commands stand on (benchmarks/cli_startup.py holds them to it): it costs
  more than the peer's whole run, so the console script answers these `model` invocations on a
  fast path that imports neither typer nor click (`iteragpu.cli.fast`).

The medians give the ratios, all from one run, with the project's bytecode compiled first (as
an installed package has it), and the load average is printed before and after: both sides
compete with whatever else runs on the machine. Without vramcalc installed the goal is
reported as missed. A benchmark, not a timed test: the goal goes through benchmarks/goals.py,
and the exit status says whether it held.

    python benchmarks/model_bench.py [--rounds 15]   (from the repository root)
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from goals import check, exit_status

import iteragpu

GOAL = 1.0
GOAL_NAME = "iteragpu model --json vs vramcalc estimate --json"
OURS_LABEL = "iteragpu model DIR --tokens 8192 --dtype bfloat16 --json"
TOKENS = "8192"
# meta-llama/Meta-Llama-3-8B's config.json, as the Hub publishes it.
LLAMA_3_8B = {
    "architectures": ["LlamaForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 128000,
    "eos_token_id": 128001,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.40.0.dev0",
    "use_cache": True,
    "vocab_size": 128256,
}


def _script(name: str) -> str | None:
    """The console script of this interpreter's environment, even when it is not on PATH."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def _peer() -> list[str] | None:
    """How to run vramcalc: its console script, else its CLI module, else None."""
    script = _script("vramcalc")
    if script is not None:
        return [script]
    if importlib.util.find_spec("vramcalc") is not None:
        return [sys.executable, "-c", "import sys; from vramcalc.cli import main; sys.exit(main())"]
    return None


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _load() -> str:
    """The 1, 5 and 15-minute load averages, where the system reports them."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    cli, peer = _script("iteragpu"), _peer()
    if cli is None:
        sys.exit("iteragpu is not installed in this environment")
    # Installed packages ship compiled bytecode; an editable install under
    # PYTHONDONTWRITEBYTECODE=1 would recompile iteragpu at every run, which no user pays.
    compileall.compile_dir(Path(iteragpu.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "llama-3-8b"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(LLAMA_3_8B, indent=2), "utf-8")
        ours = [cli, "model", str(folder), "--tokens", TOKENS, "--dtype", "bfloat16"]
        commands = {
            "python -c 'import typer'": [sys.executable, "-c", "import typer"],
            OURS_LABEL: [*ours, "--json"],
            "iteragpu model DIR --tokens 8192 --dtype bfloat16 (table)": ours,
        }
        peer_label = "vramcalc estimate DIR/config.json --seq 8192 --dtype bf16 --json"
        if peer is not None:
            commands[peer_label] = [
                *(*peer, "estimate", str(folder / "config.json")),
                *("--seq", TOKENS, "--dtype", "bf16", "--json"),
            ]
        print(f"load average before: {_load()}")
        for command in commands.values():
            _seconds(command)  # warm the file cache; fails here if a command is broken
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.rounds):
            for label, command in commands.items():
                times[label].append(_seconds(command))
    medians = {label: statistics.median(values) for label, values in times.items()}
    print(f"medians over {args.rounds} alternating rounds")
    for label, median in medians.items():
        line = f"{label:<66} median {median * 1000:6.1f} ms"
        if label != peer_label and peer_label in medians:
            line += f"  ratio {median / medians[peer_label]:.2f} to vramcalc"
        print(line)
    print(f"load average after: {_load()} (on {os.cpu_count()} CPUs)")
    print(f"{GOAL_NAME}:")
    if peer is None:
        print("  vramcalc is not installed (pip install vramcalc==0.1.2): the goal is missed")
        return exit_status([check(GOAL_NAME, float("inf"), GOAL)])
    ratio = medians[OURS_LABEL] / medians[peer_label]
    return exit_status([check(GOAL_NAME, ratio, GOAL)])


if __name__ == "__main__":
    sys.exit(main())
