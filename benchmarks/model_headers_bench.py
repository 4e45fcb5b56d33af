"""Reading a ~100 GB sharded model's headers: `size_model` must take well under a second.

Writes a Llama-3-70B-shaped model (56 of its 80 layers, about 100 GB in bfloat16) as a
`config.json`, a `model.safetensors.index.json` and shards whose headers are real but whose
data are sparse (the files are truncated to their full size, no data byte is written), then
times `size_model` on the folder. It reads only the headers: were it to read tensor data, 100 GB
could not be read in a second on any disk, which is why this benchmark, unlike the others,
fails above its goal.

    python benchmarks/model_headers_bench.py [--rounds 7] [--layers 56]
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

from goals import check, exit_status

from iteragpu.core.units import BYTES_PER_GB
from iteragpu.models.model import size_model

GOAL_SECONDS = 1.0
HIDDEN, INTERMEDIATE, VOCAB, HEADS, KV_HEADS, HEAD_DIM = 8192, 28672, 128256, 64, 8, 128
BF16_BYTES = 2
SHARD_BYTES = 5 * BYTES_PER_GB  # the Hub's usual shard size


def tensors(layers: int) -> list[tuple[str, list[int]]]:
    """Llama's tensor names and shapes, in order."""
    found = [("model.embed_tokens.weight", [VOCAB, HIDDEN])]
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    for i in range(layers):
        prefix = f"model.layers.{i}"
        found += [
            (f"{prefix}.self_attn.q_proj.weight", [q, HIDDEN]),
            (f"{prefix}.self_attn.k_proj.weight", [kv, HIDDEN]),
            (f"{prefix}.self_attn.v_proj.weight", [kv, HIDDEN]),
            (f"{prefix}.self_attn.o_proj.weight", [HIDDEN, q]),
            (f"{prefix}.mlp.gate_proj.weight", [INTERMEDIATE, HIDDEN]),
            (f"{prefix}.mlp.up_proj.weight", [INTERMEDIATE, HIDDEN]),
            (f"{prefix}.mlp.down_proj.weight", [HIDDEN, INTERMEDIATE]),
            (f"{prefix}.input_layernorm.weight", [HIDDEN]),
            (f"{prefix}.post_attention_layernorm.weight", [HIDDEN]),
        ]
    return [*found, ("model.norm.weight", [HIDDEN]), ("lm_head.weight", [VOCAB, HIDDEN])]


def write_model(folder: Path, layers: int) -> int:
    """The model's files, data sparse; returns the bytes of tensor data they declare."""
    shards: list[list[tuple[str, list[int]]]] = [[]]
    size = 0
    for name, shape in tensors(layers):
        nbytes = BF16_BYTES * shape[0] * (shape[1] if len(shape) > 1 else 1)
        if size + nbytes > SHARD_BYTES and shards[-1]:
            shards.append([])
            size = 0
        shards[-1].append((name, shape))
        size += nbytes
    weight_map, total = {}, 0
    for number, shard in enumerate(shards, 1):
        file_name = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {}, 0
        for name, shape in shard:
            nbytes = BF16_BYTES * shape[0] * (shape[1] if len(shape) > 1 else 1)
            header[name] = {
                "dtype": "BF16",
                "shape": shape,
                "data_offsets": [offset, offset + nbytes],
            }
            weight_map[name] = file_name
            offset += nbytes
        raw = json.dumps(header).encode()
        with (folder / file_name).open("wb") as stream:
            stream.write(struct.pack("<Q", len(raw)) + raw)
            stream.truncate(8 + len(raw) + offset)  # sparse: no data byte written
        total += offset
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), "utf-8")
    config = {
        "model_type": "llama",
        "num_hidden_layers": layers,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "vocab_size": VOCAB,
        "torch_dtype": "bfloat16",
    }
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--layers", type=int, default=56)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iteragpu-headers-") as name:
        folder = Path(name)
        declared = write_model(folder, args.layers)
        shards = len(list(folder.glob("*.safetensors")))
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            sizing = size_model(folder, tokens=8192, sequences=4)
            times.append(time.perf_counter() - start)
        assert sizing.weights.byte_count == declared  # every declared byte counted
        on_disk = sum(p.stat().st_blocks * 512 for p in folder.iterdir())
    median = statistics.median(times)
    print(
        f"size_model on {declared / BYTES_PER_GB:.1f} GB of declared tensors in {shards} shards "
        f"({on_disk / 2**20:.1f} MiB on disk): median {median * 1000:.1f} ms over "
        f"{args.rounds} rounds (goal: under {GOAL_SECONDS:.0f} s)"
    )
    held = check("model headers, ~100 GB in shards", median, GOAL_SECONDS, "seconds", "<")
    if not held:
        print("over the goal: tensor data is being read, not only headers", file=sys.stderr)
    return exit_status([held])


if __name__ == "__main__":
    sys.exit(main())
