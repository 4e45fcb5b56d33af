"""llama.cpp's split of a GGUF model (commit 00342301d01add50835550e8a916f12097d94517): which
device each layer goes to under `-ngl` and `-ts`, the token embedding on the host, the tied
output copied to the output layer's device, the context cut by `-np` and padded to 256 cells,
and the cache's rows in q8_0 and q4_0.

The device lists and cell counts below were printed by the pinned lines themselves
(src/llama-model.cpp `load_tensors`: the split points in `float`, `i_gpu_start`,
`act_gpu_layers`, `std::upper_bound`; `create_memory`: `n_ctx_per_stream`, `GGML_PAD`), compiled
with g++ in this session; the same harness ran 1,500 random layer counts, `-ngl` values and
`-ts` lists (decimal shares such as 0.7,0.3 included) and 3,000 contexts against
`iteragpu.parallel.llamacpp_rules`, with no difference. The GGUF files are written by the gguf
package's GGUFWriter, with tensors quantized by its own `gguf.quants.quantize`.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import quantize

from iteragpu.parallel import llamacpp_rules as rules
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import DUPLICATED, SplitError, SplitRequest

# (n_layer, -ngl, -ts) -> the device of layers 0..n_layer (the last: the output layer); None: host
DEVICE_CASES = [
    (4, 5, (3, 1), [0, 0, 0, 0, 1]),
    (4, 4, (1, 1), [0, 0, 1, 1, None]),
    (4, 2, (1,), [None, None, 0, 0, None]),
    (4, 0, (1,), [None] * 5),
    (4, 9, (1, 1), [0, 0, 0, 1, 1]),
    (32, 33, (1, 1, 1), [0] * 11 + [1] * 11 + [2] * 11),
    (32, 20, ("0.7", "0.3"), [None] * 12 + [0] * 14 + [1] * 6 + [None]),
    (80, 81, (24, 80), [0] * 19 + [1] * 62),
]
# (-c, -np) -> (cells per stream, cells in all), flash attention's padding of 256
CONTEXT_CASES = [
    (1000, 3, 512, 1536),
    (8192, 1, 8192, 8192),
    (8192, 4, 2048, 8192),
    (4096, 3, 1536, 4608),
]

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 4, 64, 4, 2, 16, 128, 100


@pytest.mark.parametrize(("n_layer", "ngl", "shares", "devices"), DEVICE_CASES)
def test_layer_devices_are_llama_cpps(
    n_layer: int, ngl: int, shares: tuple[object, ...], devices: list[int | None]
) -> None:
    split = [Fraction(str(s)) for s in shares]
    assert rules.layer_devices(n_layer, ngl, split) == devices


@pytest.mark.parametrize(("n_ctx", "parallel", "per_stream", "cells"), CONTEXT_CASES)
def test_context_is_cut_by_parallel_and_padded_to_256(
    n_ctx: int, parallel: int, per_stream: int, cells: int
) -> None:
    assert rules.context_cells(n_ctx, parallel) == (per_stream, parallel)
    assert rules.allocated_tokens(n_ctx, parallel) == cells


def test_cache_rows_take_ggmls_block_sizes() -> None:
    for name, (block, size) in rules.KV_TYPES.items():
        assert GGML_QUANT_SIZES[GGMLQuantizationType[name.upper()]] == (block, size), name
    assert rules.row_bytes("q8_0", 256) == 8 * 34
    assert rules.row_bytes("q4_0", 256) == 8 * 18
    assert rules.row_bytes("f16", 256) == 512
    with pytest.raises(SplitError) as refused:
        rules.row_bytes("q8_0", 48)
    assert refused.value.reason == "llamacpp_row_not_whole"


def write_gguf(
    path: Path, *, tied: bool = False, rope_freqs: bool = True, context_length: int | None = None
) -> Path:
    """A llama-architecture GGUF: F16 embedding, Q8_0 attention, Q4_0 feed-forward, F32
    norms, a Q8_0 output unless tied, and llama3's rope_freqs; `context_length` states the
    training context (`llama.context_length`, llama.cpp's n_ctx_train)."""
    writer = GGUFWriter(path, "llama")
    writer.add_uint32("llama.block_count", LAYERS)
    if context_length is not None:
        writer.add_uint32("llama.context_length", context_length)
    writer.add_uint32("llama.embedding_length", HIDDEN)
    writer.add_uint32("llama.feed_forward_length", FFN)
    writer.add_uint32("llama.attention.head_count", HEADS)
    writer.add_uint32("llama.attention.head_count_kv", KV_HEADS)
    writer.add_uint32("llama.attention.key_length", HEAD_DIM)
    writer.add_uint32("llama.attention.value_length", HEAD_DIM)
    rng = np.random.default_rng(0)

    def add(name: str, rows: int, columns: int, kind: GGMLQuantizationType) -> None:
        data = rng.standard_normal((rows, columns)).astype(np.float32)
        if kind == GGMLQuantizationType.F32:
            writer.add_tensor(name, data)
        elif kind == GGMLQuantizationType.F16:
            writer.add_tensor(name, data.astype(np.float16))
        else:
            writer.add_tensor(name, quantize(data, kind), raw_dtype=kind)

    q8, q4, f32 = GGMLQuantizationType.Q8_0, GGMLQuantizationType.Q4_0, GGMLQuantizationType.F32
    add("token_embd.weight", VOCAB, HIDDEN, GGMLQuantizationType.F16)
    if rope_freqs:
        writer.add_tensor("rope_freqs.weight", np.ones(HEAD_DIM // 2, np.float32))
    for layer in range(LAYERS):
        add(f"blk.{layer}.attn_norm.weight", 1, HIDDEN, f32)
        add(f"blk.{layer}.attn_q.weight", HEADS * HEAD_DIM, HIDDEN, q8)
        add(f"blk.{layer}.attn_k.weight", KV_HEADS * HEAD_DIM, HIDDEN, q8)
        add(f"blk.{layer}.attn_v.weight", KV_HEADS * HEAD_DIM, HIDDEN, q8)
        add(f"blk.{layer}.attn_output.weight", HIDDEN, HEADS * HEAD_DIM, q8)
        add(f"blk.{layer}.ffn_norm.weight", 1, HIDDEN, f32)
        add(f"blk.{layer}.ffn_gate.weight", FFN, HIDDEN, q4)
        add(f"blk.{layer}.ffn_up.weight", FFN, HIDDEN, q4)
        add(f"blk.{layer}.ffn_down.weight", HIDDEN, FFN, q4)
    add("output_norm.weight", 1, HIDDEN, f32)
    if not tied:
        add("output.weight", VOCAB, HIDDEN, q8)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _bytes(*names: str) -> dict[str, int]:
    """Each tensor's bytes, by its type (the gguf package's sizes)."""
    f16, f32 = 2, 4
    q8 = Fraction(34, 32)
    q4 = Fraction(18, 32)
    sizes = {
        "token_embd": VOCAB * HIDDEN * f16,
        "rope_freqs": HEAD_DIM // 2 * f32,
        "norm": HIDDEN * f32,
        "attention": int((2 * HEADS + 2 * KV_HEADS) * HEAD_DIM * HIDDEN * q8),
        "ffn": int(3 * FFN * HIDDEN * q4),
        "output": int(VOCAB * HIDDEN * q8),
    }
    return {name: sizes[name] for name in names}


def _plan(path: Path, **options: object) -> object:
    return plan_split(SplitRequest(str(path), 1000, runtime="llama.cpp", **options))  # type: ignore[arg-type]


def test_ngl_counts_the_output_layer_as_one(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf")
    size = _bytes("token_embd", "rope_freqs", "norm", "attention", "ffn", "output")
    layer = 2 * size["norm"] + size["attention"] + size["ffn"]
    output = size["norm"] + size["output"]
    # -ngl 4 on 4 layers: every block offloaded, the output layer left on the host
    four = _plan(path, gpu_layers=4)
    assert [r.layers for r in four.ranks] == [(0, 4)]
    assert four.ranks[0].weights_bytes == 4 * layer + size["rope_freqs"]
    assert four.host.weights_bytes == size["token_embd"] + output
    # -ngl 5: the output layer too; the token embedding stays on the host whatever -ngl
    five = _plan(path, gpu_layers=5)
    assert five.ranks[0].output_layer
    assert five.ranks[0].weights_bytes == 4 * layer + size["rope_freqs"] + output
    assert five.host.weights_bytes == size["token_embd"]
    # -ngl 2: the last two blocks; rope_freqs once on the host and once on the GPU
    two = _plan(path, gpu_layers=2)
    assert (two.ranks[0].layers, two.host.layers) == ((2, 4), (0, 2))
    assert two.ranks[0].weights_bytes == 2 * layer + size["rope_freqs"]
    assert two.host.weights_bytes == size["token_embd"] + 2 * layer + size["rope_freqs"] + output
    # the file's bytes, and the copies llama.cpp makes: rope_freqs once per holding device
    assert path.stat().st_size > sum(size.values())


def test_tensor_split_and_the_tied_output(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "tied.gguf", tied=True, rope_freqs=False)
    plan = _plan(path, tensor_split=(Fraction(3), Fraction(1)), gpu_layers=5)
    assert [r.layers for r in plan.ranks] == [(0, 4), (0, 0)]
    # the output layer (il = 4) goes to GPU 1: output_norm and a copy of token_embd
    size = _bytes("token_embd", "norm")
    assert plan.ranks[1].output_layer
    copies = [s for s in plan.ranks[1].tensors if s.how == DUPLICATED]
    assert [(s.name, s.byte_count) for s in copies] == [("output.weight", size["token_embd"])]
    assert plan.ranks[1].weights_bytes == size["token_embd"] + size["norm"]
    assert plan.host.weights_bytes == size["token_embd"]
    assert plan.first_to_fill.rank == 0


@pytest.mark.parametrize(
    ("kv_type", "row"), [("f16", HEAD_DIM * KV_HEADS * 2), ("q8_0", 34), ("q4_0", 18)]
)
def test_the_cache_per_device_and_parallel_slots(tmp_path: Path, kv_type: str, row: int) -> None:
    path = write_gguf(tmp_path / "m.gguf")
    plan = plan_split(
        SplitRequest(
            str(path),
            1000,
            runtime="llama.cpp",
            pp=2,
            parallel=3,
            kv_dtype=kv_type,
        )
    )
    # 1000 tokens over 3 slots: 334 each, padded to 512: 1536 cells
    assert [r.kv_tokens for r in plan.ranks] == [1536, 1536]
    # -ngl 5 (all) over two equal GPUs: layers 0-2 on GPU 0 (0/5, 1/5, 2/5 below 0.5),
    # layer 3 and the output on GPU 1; one K and one V row of 32 values per cell and layer
    assert [r.layers for r in plan.ranks] == [(0, 3), (3, 4)]
    per_layer = 2 * row
    assert [r.kv_bytes_per_token for r in plan.ranks] == [3 * per_layer, per_layer]
    assert plan.ranks[0].kv_cache_bytes == 1536 * 3 * per_layer
    assert plan.host.kv_cache_bytes == 0


def test_refusals(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf")
    for options, reason in (
        ({"tp": 2}, "llamacpp_no_tp"),
        ({"sequences": 2}, "llamacpp_sequences"),
        ({"kv_dtype": "fp8"}, "llamacpp_kv_dtype"),
        ({"tensor_split": (Fraction(1), Fraction(1)), "pp": 3}, "llamacpp_split_count"),
    ):
        with pytest.raises(SplitError) as refused:
            _plan(path, **options)
        assert refused.value.reason == reason
    with pytest.raises(SplitError) as wrong:
        plan_split(SplitRequest(str(path), 1000, runtime="vllm", tp=2))
    assert wrong.value.reason == "split_wrong_format"
