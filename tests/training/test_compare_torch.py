"""`iteragpu train --compare`: each peer's figures against the peer's own code, called for real.

- Accelerate 1.15.0: the base model built as `accelerate estimate-memory` builds it (AutoModel
  from the config, float32, under `init_empty_weights`), sized by `calculate_maximum_sizes`,
  then `estimate_training_usage`: its total less its buffers must be the bytes the tool passes,
  and its components and printed figure (the largest) the tool's peer items.
- DeepSpeed 0.19.8 (installed with DS_BUILD_OPS=0; its estimators run on a CPU), in a separate
  process so that its import touches nothing else here: `estimate_zero2_model_states_mem_needs`
  and `estimate_zero3_model_states_mem_needs` with the tool's arguments must return the tool's
  peer figure, and `model_to_params` on tiny real models must count the parameters and the
  largest module the tool passes.
Run by `nox -s training` (marker `training`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from iteragpu.training.compare import compare
from iteragpu.training.plan import plan_training
from iteragpu.training.records import TrainRequest

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.utils.logging.set_verbosity_error()

TINY: dict[str, Any] = {
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
CONFIGS: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", **TINY},
    "qwen3-tied": {"model_type": "qwen3", **TINY, "tie_word_embeddings": True},
    "mixtral": {"model_type": "mixtral", **TINY, "num_local_experts": 4},
    "gpt2": {"model_type": "gpt2", "vocab_size": 256, "n_embd": 64, "n_head": 4, "n_layer": 2},
    "phi-head-bias": {"model_type": "phi", **TINY},
}
RUNS = [
    TrainRequest(precision="fp32"),
    TrainRequest(precision="bf16"),
    TrainRequest(method="lora", precision="autocast-fp16", lora_targets=("all-linear",)),
    TrainRequest(precision="bf16-master", shard="zero2", gpus=3),
    TrainRequest(precision="bf16-master", shard="zero3", gpus=4),
]


def _folder(tmp_path: Path, name: str, raw: dict[str, Any]) -> Path:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(raw), "utf-8")
    return folder


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_accelerate_s_estimate_is_its_code_s(tmp_path: Path, name: str) -> None:
    pytest.importorskip("accelerate")
    from accelerate import init_empty_weights
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes

    raw = CONFIGS[name]
    config = transformers.AutoConfig.for_model(**raw)
    with init_empty_weights(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # create_empty_model: AutoModel, float32
        model = transformers.AutoModel.from_config(config, torch_dtype=torch.float32)
    total, _largest = calculate_maximum_sizes(model)
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    for request in RUNS:
        comparison = compare(plan_training(_folder(tmp_path, name, raw), request), "accelerate")
        mixed = comparison.call.split("mixed_precision='")[1].rstrip("')")
        passed = int(comparison.call.split("bytes=")[1].split(",")[0])
        assert passed == total - buffers
        usage = estimate_training_usage(passed, mixed)
        assert {i.key: i.peer_bytes for i in comparison.items} == usage
        assert comparison.peer_bytes == max(usage.values())
        # With its buffers, what `accelerate estimate-memory` prints (float32 or float16 row).
        printed = max(estimate_training_usage(total, mixed).values())
        assert printed - comparison.peer_bytes in (0, 2 * buffers, 4 * buffers)


DEEPSPEED = """
import json, sys
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs, model_to_params
import torch, transformers
calls = json.loads(sys.argv[1])
answers = []
for call in calls:
    if call["stage"] == 2:
        answers.append(estimate_zero2_model_states_mem_needs(
            total_params=call["total"], num_gpus_per_node=call["gpus"], num_nodes=1,
            cpu_offload=False)[1])
    else:
        answers.append(estimate_zero3_model_states_mem_needs(
            total_params=call["total"], largest_layer_params=call["largest"],
            num_gpus_per_node=call["gpus"], num_nodes=1, cpu_offload=False)[1])
counted = {}
for name, raw in json.loads(sys.argv[2]).items():
    config = transformers.AutoConfig.for_model(**raw)
    model = transformers.AutoModelForCausalLM.from_config(config)
    counted[name] = model_to_params(model)
print(json.dumps({"answers": answers, "counted": counted}))
"""


def test_deepspeed_s_estimate_is_its_code_s(tmp_path: Path) -> None:
    try:
        import importlib.util

        found = importlib.util.find_spec("deepspeed") is not None
    except ValueError:
        found = False
    if not found:
        pytest.skip("deepspeed is not installed (nox -s training installs it)")
    calls, ours, largest = [], [], {}
    for name, raw in CONFIGS.items():
        for request in RUNS:
            plan = plan_training(_folder(tmp_path, name, raw), request)
            comparison = compare(plan, "deepspeed")
            stage = 3 if request.shard == "zero3" else 2
            call = {"stage": stage, "total": plan.parameters, "gpus": request.gpus}
            if stage == 3:
                call["largest"] = int(
                    comparison.call.split("largest_layer_params=")[1].split(",")[0]
                )
                largest[name] = (plan.parameters, call["largest"])
            calls.append(call)
            ours.append(comparison.peer_bytes)
    result = subprocess.run(
        [sys.executable, "-c", DEEPSPEED, json.dumps(calls), json.dumps(CONFIGS)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DS_BUILD_OPS": "0"},
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["answers"] == ours
    assert {k: tuple(v) for k, v in data["counted"].items()} == largest
