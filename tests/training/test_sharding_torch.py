"""FSDP2's per-rank bytes against a real run: torch.distributed (gloo, CPU, loopback only) on 2
and 3 processes, `fully_shard` on each layer and the root, one forward, backward and AdamW step,
then every parameter's local shard (and its padded storage), every `.grad` local shard (and the
reduce-scatter buffer it views), and every optimizer state, compared with
`iteragpu.training.sharding`, byte for byte.

The models: a plain module with the tiny Llama's tensors (vocab 256, hidden 64, 2 layers, 4
heads, 2 KV heads, intermediate 128, untied: 106,816 parameters in 21 tensors, with
Transformers' names; no row count divides by 3; not built with Transformers, whose import
would double each process's start) in float32 and in bfloat16, and two-layer stacks whose first
tensors have fewer rows than GPUs (empty shards), one of them leaving the last rank no row at
all: FSDP2 runs it, the module refuses it (a GPU with nothing to train).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.training

WORKER_TIMEOUT_S = 300  # a hang guard: the run takes seconds on an idle machine


def _worker(rank: int, world: int, store: str, out: str) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)

    class Norm(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(64))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class Layer(nn.Module):
        """A Llama decoder layer's tensors (LlamaDecoderLayer's names and shapes)."""

        def __init__(self) -> None:
            super().__init__()
            self.input_layernorm, self.post_attention_layernorm = Norm(), Norm()
            self.self_attn = nn.Module()
            for name, rows in (("q_proj", 64), ("k_proj", 32), ("v_proj", 32), ("o_proj", 64)):
                setattr(self.self_attn, name, nn.Linear(64, rows, bias=False))
            self.mlp = nn.Module()
            self.mlp.gate_proj = nn.Linear(64, 128, bias=False)
            self.mlp.up_proj = nn.Linear(64, 128, bias=False)
            self.mlp.down_proj = nn.Linear(128, 64, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            attn, mlp = self.self_attn, self.mlp
            h = self.input_layernorm(x)
            q = attn.q_proj(h)
            k, v = attn.k_proj(h).repeat(1, 1, 2), attn.v_proj(h).repeat(1, 1, 2)
            x = x + attn.o_proj(torch.softmax(q @ k.transpose(1, 2) / 8, -1) @ v)
            h = self.post_attention_layernorm(x)
            return x + mlp.down_proj(nn.functional.silu(mlp.gate_proj(h)) * mlp.up_proj(h))

    class Llama(nn.Module):
        """The tiny Llama's 21 tensors, untied, with Transformers' full names."""

        def __init__(self) -> None:
            super().__init__()
            self.model = nn.Module()
            self.model.embed_tokens = nn.Embedding(256, 64)
            self.model.layers = nn.ModuleList([Layer(), Layer()])
            self.model.norm = Norm()
            self.lm_head = nn.Linear(64, 256, bias=False)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            x = self.model.embed_tokens(ids)
            for layer in self.model.layers:
                x = layer(x)
            logits = self.lm_head(self.model.norm(x)).float()
            return nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())

    def llama(dtype: torch.dtype) -> tuple[nn.Module, list[nn.Module], torch.Tensor]:
        torch.manual_seed(0)
        model = Llama().to(dtype)
        return model, list(model.model.layers), torch.randint(0, 256, (1, 8))

    def stack(rows: int, out_rows: int) -> tuple[nn.Module, list[nn.Module], torch.Tensor]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, rows), nn.Linear(rows, out_rows))
        return model, list(model), torch.randn(3, 5)

    def local(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to_local() if isinstance(tensor, DTensor) else tensor

    def nbytes(tensor: torch.Tensor) -> int:
        return tensor.numel() * tensor.element_size()

    setups: dict[str, Any] = {
        "llama-float32": lambda: llama(torch.float32),
        "llama-bfloat16": lambda: llama(torch.bfloat16),
        "stack-2x7": lambda: stack(2, 7),
    }
    if world == 3:
        setups["stack-2x4"] = lambda: stack(2, 4)  # rank 2 holds no row of any tensor
    report: dict[str, Any] = {}
    for setup, build in setups.items():
        model, layers, batch = build()
        full = {
            name: (list(p.shape), str(p.dtype).removeprefix("torch."))
            for name, p in model.named_parameters()
        }
        for layer in layers:
            fully_shard(layer)
        fully_shard(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        loss = model(batch)
        loss = loss if setup.startswith("llama") else loss.float().sum()
        loss.backward()
        optimizer.step()
        tensors = {}
        for name, param in model.named_parameters():
            shard = local(param)
            grad = local(param.grad)
            states = {
                key: {
                    "sharded": isinstance(value, DTensor),
                    "bytes": nbytes(local(value)),
                    "storage": local(value).untyped_storage().nbytes(),
                }
                for key, value in optimizer.state[param].items()
            }
            tensors[name] = {
                "shape": full[name][0],
                "dtype": full[name][1],
                "local": nbytes(shard),
                "storage": shard.untyped_storage().nbytes(),
                "grad": nbytes(grad),
                "grad_buffer": grad.untyped_storage().data_ptr(),
                "grad_buffer_bytes": grad.untyped_storage().nbytes(),
                "states": states,
            }
        report[setup] = tensors
    Path(out).write_text(json.dumps(report), "utf-8")
    dist.destroy_process_group()


def _run(world: int, tmp_path: Path) -> list[dict[str, Any]]:
    store = tmp_path / f"store-{world}"
    environment = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                str(rank),
                str(world),
                str(store),
                str(tmp_path / f"{world}-{rank}.json"),
            ],
            env=environment,
        )
        for rank in range(world)
    ]
    try:
        codes = [process.wait(WORKER_TIMEOUT_S) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert codes == [0] * world
    return [
        json.loads((tmp_path / f"{world}-{rank}.json").read_text("utf-8")) for rank in range(world)
    ]


def _inputs(measured: dict[str, Any]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The unsharded run's tensors and AdamW items (torch/optim/adamw.py, 2.13: `exp_avg`,
    `exp_avg_sq` `zeros_like` the parameter; `step` a float32 scalar on the host)."""
    from iteragpu.training.records import StateItem, TrainTensor

    sizes = {"float32": 4, "bfloat16": 2}
    tensors, states = [], {}
    for name, facts in measured.items():
        shape = tuple(facts["shape"])
        tensor = TrainTensor(name, shape, facts["dtype"], "base", True)
        whole = tensor.elements * sizes[facts["dtype"]]
        tensors.append(tensor)
        states[name] = [
            StateItem("gradient", "grad", shape, facts["dtype"], whole, "gpu"),
            StateItem("optimizer", "exp_avg", shape, facts["dtype"], whole, "gpu"),
            StateItem("optimizer", "exp_avg_sq", shape, facts["dtype"], whole, "gpu"),
            StateItem("optimizer", "step", (), "float32", 4, "host"),
        ]
    return tensors, states


@pytest.mark.parametrize("world", [2, 3])
def test_fsdp2_local_shards_byte_for_byte(world: int, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from iteragpu.training.sharding import EmptyRankError, fsdp2_tensor_bytes, shard_plan

    ranks = _run(world, tmp_path)
    for setup in ranks[0]:
        tensors, states = _inputs(ranks[0][setup])
        if setup == "stack-2x4":
            # FSDP2 ran it (every rank reported), with rank 2 holding no row of any tensor...
            assert all(facts["local"] == 0 for facts in ranks[2][setup].values())
            # ...and the module refuses it
            with pytest.raises(EmptyRankError, match="GPU 2 would hold no row"):
                shard_plan(tensors, states, "fsdp2", world)
            continue
        if setup.startswith("llama"):
            assert (len(tensors), sum(t.elements for t in tensors)) == (21, 106_816)
        plan = shard_plan(tensors, states, "fsdp2", world)
        for rank, measured in enumerate(ranks):
            facts_of = measured[setup]
            buffers: dict[int, list[int]] = {}
            for tensor in tensors:
                facts = facts_of[tensor.name]
                bare = fsdp2_tensor_bytes(tensor, (), world)[rank]
                held = fsdp2_tensor_bytes(tensor, states[tensor.name], world)[rank]
                where = (setup, tensor.name, rank)
                assert (bare.parameters, bare.parameters - bare.padding) == (
                    facts["storage"],
                    facts["local"],
                ), where
                grad_padding = held.padding - bare.padding
                assert held.gradients - grad_padding == facts["grad"], where
                buffer = buffers.setdefault(facts["grad_buffer"], [facts["grad_buffer_bytes"], 0])
                buffer[1] += held.gradients
                adam = [facts["states"][key] for key in ("exp_avg", "exp_avg_sq")]
                assert all(state["sharded"] for state in adam), where
                assert held.optimizer == sum(s["bytes"] for s in adam), where
                assert held.optimizer == sum(s["storage"] for s in adam), where
                step = facts["states"]["step"]
                assert (step["sharded"], step["bytes"]) == (False, held.host), where
            # the gradients of a group are views into one padded reduce-scatter output
            assert all(storage == summed for storage, summed in buffers.values()), setup
            totals = plan.ranks[rank]
            assert totals.parameters == sum(f["storage"] for f in facts_of.values())
            assert totals.gradients == sum(storage for storage, _ in buffers.values())
            assert totals.optimizer == sum(
                f["states"][k]["storage"]
                for f in facts_of.values()
                for k in ("exp_avg", "exp_avg_sq")
            )
            assert totals.host == sum(f["states"]["step"]["bytes"] for f in facts_of.values())
        assert plan.largest.rank == 0


if __name__ == "__main__":
    _worker(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
