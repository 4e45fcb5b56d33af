"""GGUF files written with the `gguf` library's writer: exact bytes per ggml type, logical
parameters of quantized blocks, the attention layout from the metadata, and bad files refused."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

from iteragpu.models.config import FULL, SLIDING
from iteragpu.models.errors import GgufError, UnsupportedModelError
from iteragpu.models.model import payload, size_model
from iteragpu.models.tensors import FLOAT, INTEGER, QUANTIZED_BLOCKS

Q8_0_BLOCK_VALUES, Q8_0_BLOCK_BYTES = 32, 34  # 32 int8 values and one float16 scale


def write_gguf(
    path: Path, arch: str = "llama", layers: int = 4, sliding: int | None = None
) -> None:
    writer = GGUFWriter(path, arch)
    writer.add_block_count(layers)
    writer.add_embedding_length(64)
    writer.add_head_count(8)
    writer.add_head_count_kv(2)
    writer.add_key_length(16)
    writer.add_value_length(16)
    if sliding is not None:
        writer.add_sliding_window(sliding)
    writer.add_tensor("token_embd.weight", np.zeros((10, 64), np.float32))
    writer.add_tensor("output_norm.weight", np.zeros(64, np.float16))
    blocks = quantize(np.zeros((4, 64), np.float32), GGMLQuantizationType.Q8_0)
    writer.add_tensor("blk.0.ffn_up.weight", blocks, raw_dtype=GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_bytes_per_type_and_logical_parameters(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    write_gguf(path)
    sizing = size_model(path, tokens=100, kv_dtype="float16")
    inventory = sizing.weights.inventory
    assert inventory is not None and sizing.weights.source == "gguf"
    groups = {(g.format, g.dtype): (g.tensors, g.elements, g.bytes) for g in inventory.groups}
    quantized_bytes = 4 * 64 // Q8_0_BLOCK_VALUES * Q8_0_BLOCK_BYTES
    assert groups == {
        (FLOAT, "F32"): (1, 640, 2560),
        (FLOAT, "F16"): (1, 64, 128),
        (QUANTIZED_BLOCKS, "Q8_0"): (1, 256, quantized_bytes),
    }
    # Quantized blocks count their logical values, never their bytes.
    assert sizing.weights.parameters == 640 + 64 + 256
    assert sizing.weights.byte_count == 2560 + 128 + quantized_bytes


def test_attention_layout_from_the_metadata(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    write_gguf(path)
    sizing = size_model(path, tokens=100, sequences=3, kv_bytes_per_value=Fraction(1, 2))
    assert set(sizing.config.layer_kinds) == {FULL}
    assert (sizing.config.kv_heads, sizing.config.head_dim) == (2, 16)
    assert sizing.kv.kv_cache_bytes == 4 * 2 * 2 * 16 * 100 * Fraction(1, 2) * 3
    assert "kv_quantization_overheads_not_counted" in payload(sizing)["caveats"]


def test_gemma2_gguf_alternates_with_its_window(tmp_path: Path) -> None:
    path = tmp_path / "gemma2.gguf"
    write_gguf(path, "gemma2", layers=4, sliding=32)
    config = size_model(path, tokens=100, kv_dtype="bf16").config
    assert config.layer_kinds == (SLIDING, FULL, SLIDING, FULL)
    assert config.sliding_window == 32


def test_integer_tensors_hide_the_parameters(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    writer = GGUFWriter(path, "llama")
    for key, value in (("block_count", 1), ("embedding_length", 8), ("attention.head_count", 2)):
        writer.add_uint32(f"llama.{key}", value)
    writer.add_tensor("packed", np.zeros(4, np.int32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    sizing = size_model(path, tokens=1, kv_dtype="fp16")
    assert sizing.weights.parameters is None
    assert sizing.weights.inventory is not None
    assert [g.format for g in sizing.weights.inventory.groups] == [INTEGER]
    assert payload(sizing)["parameters"] is None


def test_wrong_magic_truncated_unknown_architecture(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.gguf"
    wrong.write_bytes(b"GGML" + bytes(60))
    with pytest.raises(GgufError, match="not a GGUF file") as caught:
        size_model(wrong, tokens=1, kv_dtype="fp16")
    assert "\n" not in str(caught.value)

    whole = tmp_path / "whole.gguf"
    write_gguf(whole)
    for keep in (10, 200, whole.stat().st_size - 100):
        cut = tmp_path / f"cut-{keep}.gguf"
        cut.write_bytes(whole.read_bytes()[:keep])
        with pytest.raises(GgufError, match="truncated") as caught:
            size_model(cut, tokens=1, kv_dtype="fp16")
        assert "\n" not in str(caught.value)

    other = tmp_path / "other.gguf"
    write_gguf(other, "rwkv6")
    with pytest.raises(UnsupportedModelError, match="GGUF architecture 'rwkv6'"):
        size_model(other, tokens=1, kv_dtype="fp16")


def test_without_the_gguf_package_the_extra_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "model.gguf"
    write_gguf(path)
    monkeypatch.setitem(sys.modules, "gguf", None)  # `import gguf` now raises ImportError
    with pytest.raises(GgufError, match=r"pip install 'iteragpu\[models\]'"):
        size_model(path, tokens=1, kv_dtype="fp16")
