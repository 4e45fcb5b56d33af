"""The Transformers split against the real thing: tiny models of five families written with
`save_pretrained`, loaded by Transformers 5.24 under `torchrun` with the gloo backend (CPU,
loopback only) on 2 and 4 processes, with `tp_plan="auto"` and with `DistributedConfig`'s
pipeline (`pp_size`) and expert (`ep_size`) parallelism; every rank's local parameter bytes
must equal `iteragpu.parallel`'s `ranks[i].weights_bytes`, and the cache each rank holds after
one forward pass its `kv_cache_bytes`.

What the models hold: an uneven vocabulary (250, cut 125/125 and 63/63/63/61), tied embeddings
(Llama), attention biases (Llama's four, Qwen2's q/k/v), an uneven intermediate size (102:
26/26/26/24), experts with their router and per-head norms (Qwen3-MoE), a shared expert and its
gate (Qwen2-MoE), DeepSeek-V3's latent attention (not split by Transformers' plan) with a dense
first layer and a float32 router. The Llama with 2 KV heads on 4 ranks loads and fails in its
forward pass, as the plan refuses it; Qwen3-MoE's 6 experts on 4 expert-parallel ranks are
refused at load, and TP 2 with PP 2 fails at load (KeyError), as the plan refuses both. Run
by `nox -s ranks` (marker `ranks`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.ranks

WORKER = Path(__file__).with_name("ranks_worker.py")
RUN_TIMEOUT_S = 600  # a hang guard: each run takes about a minute on a loaded 2-core machine
TOKENS = 5
SMALL = {"vocab_size": 250, "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3}
MODELS: dict[str, dict[str, Any]] = {
    "llama": {
        "model_type": "llama",
        **SMALL,
        "intermediate_size": 96,
        "num_key_value_heads": 2,
        "tie_word_embeddings": True,
        "attention_bias": True,
    },
    "llama_kv4": {
        "model_type": "llama",
        **SMALL,
        "intermediate_size": 96,
        "num_key_value_heads": 4,
        "tie_word_embeddings": True,
    },
    "qwen2": {
        "model_type": "qwen2",
        **SMALL,
        "intermediate_size": 102,
        "num_key_value_heads": 4,
        "tie_word_embeddings": False,
    },
    "qwen3_moe": {
        "model_type": "qwen3_moe",
        **SMALL,
        "num_hidden_layers": 2,
        "intermediate_size": 96,
        "moe_intermediate_size": 64,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "num_key_value_heads": 4,
        "head_dim": 16,
    },
    "qwen3_moe_6": {
        "model_type": "qwen3_moe",
        **SMALL,
        "num_hidden_layers": 2,
        "intermediate_size": 96,
        "moe_intermediate_size": 64,
        "num_experts": 6,
        "num_experts_per_tok": 2,
        "num_key_value_heads": 4,
        "head_dim": 16,
    },
    "qwen2_moe": {
        "model_type": "qwen2_moe",
        **SMALL,
        "num_hidden_layers": 2,
        "intermediate_size": 96,
        "moe_intermediate_size": 64,
        "shared_expert_intermediate_size": 80,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "num_key_value_heads": 4,
    },
    "deepseek_v3": {
        "model_type": "deepseek_v3",
        **SMALL,
        "num_hidden_layers": 2,
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "num_key_value_heads": 4,
        "q_lora_rank": 32,
        "kv_lora_rank": 16,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "n_group": 1,
        "topk_group": 1,
    },
}
AUTO = "tp_plan_auto"
# (job, model, Transformers' mode, the plan's tp, pp, ep)
JOBS: dict[int, list[tuple[str, str, Any, int, int, bool]]] = {
    2: [
        ("llama-tp2", "llama", AUTO, 2, 1, False),
        ("qwen2-tp2", "qwen2", AUTO, 2, 1, False),
        ("qwen3_moe-tp2", "qwen3_moe", AUTO, 2, 1, False),
        ("qwen2_moe-tp2", "qwen2_moe", AUTO, 2, 1, False),
        ("deepseek_v3-tp2", "deepseek_v3", AUTO, 2, 1, False),
        ("qwen3_moe-ep2", "qwen3_moe", {"tp_size": 2, "ep_size": 2}, 2, 1, True),
        ("llama-pp2", "llama", {"pp_size": 2}, 1, 2, False),
        ("qwen2-pp2", "qwen2", {"pp_size": 2}, 1, 2, False),
    ],
    4: [
        ("llama-tp4", "llama", AUTO, 4, 1, False),
        ("llama_kv4-tp4", "llama_kv4", AUTO, 4, 1, False),
        ("qwen2-tp4", "qwen2", AUTO, 4, 1, False),
        ("qwen3_moe-tp4", "qwen3_moe", AUTO, 4, 1, False),
        ("qwen3_moe-ep4", "qwen3_moe", {"tp_size": 4, "ep_size": 4}, 4, 1, True),
        ("qwen3_moe_6-ep4", "qwen3_moe_6", {"tp_size": 4, "ep_size": 4}, 4, 1, True),
        ("qwen2_moe-ep4", "qwen2_moe", {"tp_size": 4, "ep_size": 4}, 4, 1, True),
        ("qwen2-tp2pp2", "qwen2", {"tp_size": 2, "pp_size": 2}, 2, 2, False),
    ],
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each tiny model, written by Transformers in bfloat16."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("models")
    paths = {}
    for name, settings in MODELS.items():
        torch.manual_seed(0)
        kwargs = dict(settings)
        config = transformers.AutoConfig.for_model(kwargs.pop("model_type"), **kwargs)
        config.dtype = "bfloat16"
        model = transformers.AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
        model.save_pretrained(folder / name)
        paths[name] = folder / name
    return paths


@pytest.fixture(scope="module")
def runs(saved: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[int, Any]:
    """Every job of each world size, run once: rank -> job -> report."""
    found = {}
    for world, jobs in JOBS.items():
        folder = tmp_path_factory.mktemp(f"world{world}")
        listed = [
            {"name": job, "path": str(saved[model]), "mode": mode, "tokens": TOKENS}
            for job, model, mode, *_ in jobs
        ]
        (folder / "jobs.json").write_text(json.dumps(listed), "utf-8")
        environment = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
        command = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={world}",
            str(WORKER),
            str(folder / "jobs.json"),
            str(folder),
        ]
        done = subprocess.run(
            command, env=environment, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        assert done.returncode == 0, done.stderr[-3000:]
        found[world] = [
            json.loads((folder / f"rank-{rank}.json").read_text("utf-8")) for rank in range(world)
        ]
    return found


CASES = [(world, *job) for world, jobs in JOBS.items() for job in jobs]


def _plan(path: Path, tp: int, pp: int, ep: bool) -> Any:
    from iteragpu.parallel.plan import plan_split
    from iteragpu.parallel.records import SplitRequest

    return plan_split(SplitRequest(str(path), TOKENS, tp=tp, pp=pp, ep=ep))


@pytest.mark.parametrize(
    ("world", "job", "model", "mode", "tp", "pp", "ep"), CASES, ids=[c[1] for c in CASES]
)
def test_each_rank_holds_what_the_plan_says(
    runs: dict[int, Any],
    saved: dict[str, Path],
    world: int,
    job: str,
    model: str,
    mode: Any,
    tp: int,
    pp: int,
    ep: bool,
) -> None:
    from iteragpu.parallel.records import SplitError

    reports = [rank[job] for rank in runs[world]]
    if job == "llama-tp4":
        # 2 KV heads on 4 ranks: it loads, then the attention's reshape fails...
        assert all("parameters" in r for r in reports), reports[0].get("load_error")
        assert {(r["forward"]["ok"], r["forward"]["error"]) for r in reports} == {
            (False, "RuntimeError")
        }
        assert "is invalid for input of size" in reports[0]["forward"]["message"]
        # ...and the plan says so, refusing to state ranks that cannot run
        with pytest.raises(SplitError) as refused:
            _plan(saved[model], tp, pp, ep)
        assert refused.value.reason == "transformers_heads_not_divisible"
        assert "loads this split but cannot run it" in str(refused.value)
        return
    if job == "qwen2-tp2pp2":
        # Transformers 5.24 fails to load TP and PP together; the plan refuses it likewise
        assert all("KeyError" in r["load_error"] for r in reports)
        assert all("apply_tensor_parallelism" in r["load_error"] for r in reports)
        with pytest.raises(SplitError) as refused:
            _plan(saved[model], tp, pp, ep)
        assert refused.value.reason == "transformers_tp_and_pp"
        return
    if job == "qwen3_moe_6-ep4":
        assert all("Cannot evenly shard 6 experts across 4" in r["load_error"] for r in reports)
        with pytest.raises(SplitError) as refused:
            _plan(saved[model], tp, pp, ep)
        assert refused.value.reason == "transformers_experts_not_divisible"
        return
    plan = _plan(saved[model], tp, pp, ep)
    assert len(plan.ranks) == world
    for rank, report in enumerate(reports):
        assert "parameters" in report, report.get("load_error")
        stated = plan.ranks[rank]
        measured = sum(p["bytes"] for p in report["parameters"].values())
        assert (rank, stated.weights_bytes) == (rank, Fraction(measured))
        # the replicated part: parameters every rank of the stage holds whole
        whole = sum(
            p["bytes"]
            for p in report["parameters"].values()
            if p["shape"] == p["local_shape"] and tp > 1
        )
        assert stated.weights_replicated_bytes == whole, (job, rank)
        assert report["forward"] == {"ok": True}
        cached = sum(layer["bytes"] for layer in report["cache"])
        assert (rank, stated.kv_cache_bytes) == (rank, Fraction(cached))


def test_the_runs_split_something(runs: dict[int, Any]) -> None:
    """The comparison is not vacuous: ranks differ where the vocabulary and the layers are
    cut unevenly, and a replicated part exists."""
    qwen2 = [r["qwen2-tp4"]["parameters"]["model.embed_tokens.weight"] for r in runs[4]]
    assert [p["local_shape"][0] for p in qwen2] == [63, 63, 63, 61]
    pp = [sum(p["bytes"] for p in r["llama-pp2"]["parameters"].values()) for r in runs[2]]
    assert pp[0] != pp[1]
