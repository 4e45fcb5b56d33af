"""One rank of a split run under torchrun (gloo, CPU): each model of the job list loaded with
Transformers' own parallelism, every local parameter's bytes, one forward pass with the cache
on, and what the cache holds, written to a JSON file per rank.

Usage (tests/parallel/test_transformers_gloo.py runs it):
    python -m torch.distributed.run --nproc-per-node N ranks_worker.py JOBS.json OUT_DIR
Each job: {"name", "path", "mode": "tp_plan_auto" | {DistributedConfig keywords}, "tokens"}.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any


def _nbytes(tensor: Any) -> int:
    return int(tensor.numel() * tensor.element_size())


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    from torch.distributed.tensor import DTensor
    from transformers import AutoModelForCausalLM
    from transformers.distributed import DistributedConfig

    mode = job["mode"]
    if mode == "tp_plan_auto":
        options: dict[str, Any] = {"tp_plan": "auto"}
    else:
        options = {"distributed_config": DistributedConfig(**mode)}
    model = AutoModelForCausalLM.from_pretrained(job["path"], dtype=torch.bfloat16, **options)
    parameters = {}
    for name, parameter in model.named_parameters():
        local = parameter.to_local() if isinstance(parameter, DTensor) else parameter
        parameters[name] = {
            "shape": list(parameter.shape),
            "local_shape": list(local.shape),
            "dtype": str(local.dtype).removeprefix("torch."),
            "bytes": _nbytes(local),
        }
    ids = torch.arange(1, job["tokens"] + 1).unsqueeze(0)
    report: dict[str, Any] = {"parameters": parameters, "forward": None, "cache": None}
    try:
        with torch.no_grad():
            output = model(ids, use_cache=True)
    except Exception as error:  # the failure is the finding: its kind and message
        report["forward"] = {"ok": False, "error": type(error).__name__, "message": str(error)}
        return report
    layers = []
    for layer in output.cache.layers:
        tensors = [getattr(layer, n, None) for n in ("keys", "values")]
        held = [t for t in tensors if isinstance(t, torch.Tensor) and t.numel()]
        layers.append(
            {"shapes": [list(t.shape) for t in held], "bytes": sum(_nbytes(t) for t in held)}
        )
    report["forward"] = {"ok": True}
    report["cache"] = layers
    return report


def main() -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    jobs = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    out = Path(sys.argv[2])
    results: dict[str, Any] = {}
    for job in jobs:
        try:
            results[job["name"]] = run_job(job)
        except Exception:
            results[job["name"]] = {"load_error": traceback.format_exc()[-2000:]}
        if dist.is_initialized():
            dist.barrier()
    rank = int(os.environ["RANK"])
    (out / f"rank-{rank}.json").write_text(json.dumps(results), "utf-8")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
