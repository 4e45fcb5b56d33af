"""`iteragpu model` splitting a 671B mixture of experts over 16 GPUs, against the CLI's start-up
budget: DeepSeek-V3's published config.json (written here, no download) planned per rank with
`--runtime vllm --tp 16 --ep --json` and with `--runtime transformers --tp 16 --ep --json`,
each against `python -c "import typer"` (the floor every command stands on) alternately over
many rounds after a warm-up. Goal: each at most 1.15x the floor, the start-up budget the other
commands are held to (benchmarks/cli_startup.py), though this one reads and places some 1,500
tensors on 16 ranks.

The medians give the ratios, from one run, with the package's bytecode compiled first; the load
average is printed before and after. A benchmark, not a timed test: the goals go through
benchmarks/goals.py.

    python benchmarks/split_bench.py [--rounds 15]   (from the repository root)
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import sys
import tempfile
from pathlib import Path

from goals import check, exit_status
from model_bench import _load, _script, _seconds

import iteragpu

GOAL = 1.15
# deepseek-ai/DeepSeek-V3's config.json, as the Hub publishes it (the keys a split reads).
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "topk_method": "noaux_tc",
    "n_group": 8,
    "topk_group": 4,
    "num_nextn_predict_layers": 1,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    cli = _script("iteragpu")
    if cli is None:
        sys.exit("iteragpu is not installed in this environment")
    compileall.compile_dir(Path(iteragpu.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "deepseek-v3"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(DEEPSEEK_V3, indent=2), "utf-8")
        split = [cli, "model", str(folder), "--tokens", "8192", "--tp", "16", "--ep", "--json"]
        floor = "python -c 'import typer'"
        commands = {
            floor: [sys.executable, "-c", "import typer"],
            "vllm": [*split, "--runtime", "vllm"],
            "transformers": [*split, "--runtime", "transformers"],
        }
        print(f"load average before: {_load()}")
        for command in commands.values():
            _seconds(command)
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.rounds):
            for label, command in commands.items():
                times[label].append(_seconds(command))
    medians = {label: statistics.median(values) for label, values in times.items()}
    print(f"medians over {args.rounds} alternating rounds; load average after: {_load()}")
    verdicts = []
    for runtime in ("vllm", "transformers"):
        ratio = medians[runtime] / medians[floor]
        name = f"iteragpu model 671B MoE --tp 16 --ep --runtime {runtime} vs import typer"
        print(f"{name}: median {medians[runtime] * 1000:.1f} ms")
        verdicts.append(check(name, ratio, GOAL))
    return exit_status(verdicts)


if __name__ == "__main__":
    sys.exit(main())
