"""safetensors headers: exact bytes per dtype, sharded indexes, and every malformed file refused
on one line. Files are written by the `safetensors` library and by hand."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file

from iteragpu.models.errors import HeaderError, MissingShardError, UnknownDtypeError
from iteragpu.models.safetensors import read_header, read_inventory, weight_files
from iteragpu.models.tensors import FLOAT, INTEGER, QUANTIZATION_METADATA


def write_by_hand(path: Path, tensors: dict[str, tuple[str, list[int], int]], pad: int = 0) -> None:
    """A safetensors file whose header declares `tensors` (name: dtype, shape, bytes) back to
    back, followed by zero bytes (plus `pad` bytes, negative to cut the data short)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape, size) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(max(offset + pad, 0)))


def groups(folder: Path) -> dict[tuple[str, str], tuple[int, int, int]]:
    found = weight_files(folder)
    assert found is not None
    inventory = read_inventory(found)
    return {(g.format, g.dtype): (g.tensors, g.elements, g.bytes) for g in inventory.groups}


def test_library_written_file_exact_bytes_and_dtypes(tmp_path: Path) -> None:
    save_file(
        {
            "embed.weight": np.zeros((10, 6), np.float32),
            "norm.weight": np.zeros(6, np.float16),
            "layer.weight": np.zeros((6, 6), np.float16),
            "position_ids": np.zeros((1, 7), np.int64),
        },
        tmp_path / "model.safetensors",
    )
    assert groups(tmp_path) == {
        (FLOAT, "F32"): (1, 60, 240),
        (FLOAT, "F16"): (2, 42, 84),
        (INTEGER, "I64"): (1, 7, 56),
    }
    found = weight_files(tmp_path)
    assert found is not None
    inventory = read_inventory(found)
    file = (tmp_path / "model.safetensors").read_bytes()
    data_bytes = len(file) - 8 - int.from_bytes(file[:8], "little")
    assert inventory.total_bytes == 240 + 84 + 56 == data_bytes
    # An integer tensor does not say how many values it holds: parameters unknown, never 7.
    assert inventory.parameters is None


def test_float_formats_by_hand_bf16_fp8_fp4(tmp_path: Path) -> None:
    write_by_hand(
        tmp_path / "model.safetensors",
        {
            "lm_head.weight": ("BF16", [8, 4], 64),
            "mlp.weight": ("F8_E4M3", [4, 4], 16),
            "mlp.weight_scale_inv": ("F32", [1, 1], 4),
            "attn.weight": ("F4", [2, 3], 3),  # two values per byte: 6 values in 3 bytes
            "attn.weight_scale": ("F8_E8M0", [2, 1], 2),
        },
    )
    assert groups(tmp_path) == {
        (FLOAT, "BF16"): (1, 32, 64),
        (FLOAT, "F8_E4M3"): (1, 16, 16),
        (FLOAT, "F4"): (1, 6, 3),
        (QUANTIZATION_METADATA, "F32"): (1, 1, 4),
        (QUANTIZATION_METADATA, "F8_E8M0"): (1, 2, 2),
    }
    found = weight_files(tmp_path)
    assert found is not None
    assert read_inventory(found).parameters == 32 + 16 + 6  # scales are not parameters


def test_packed_int4_is_reported_as_such(tmp_path: Path) -> None:
    """A GPTQ layer: eight 4-bit values per I32 element, scales and zeros beside, the head left
    in 16 bits."""
    save_file(
        {
            "layers.0.mlp.qweight": np.zeros((2, 16), np.int32),
            "layers.0.mlp.qzeros": np.zeros((1, 2), np.int32),
            "layers.0.mlp.scales": np.zeros((1, 16), np.float16),
            "layers.0.mlp.g_idx": np.zeros(16, np.int32),
            "lm_head.weight": np.zeros((16, 16), np.float16),
        },
        tmp_path / "model.safetensors",
    )
    assert groups(tmp_path) == {
        (INTEGER, "I32"): (1, 32, 128),
        (QUANTIZATION_METADATA, "I32"): (2, 18, 72),
        (QUANTIZATION_METADATA, "F16"): (1, 16, 32),
        (FLOAT, "F16"): (1, 256, 512),
    }
    found = weight_files(tmp_path)
    assert found is not None
    assert read_inventory(found).parameters is None


def write_sharded(folder: Path, weight_map: dict[str, str] | None = None) -> None:
    save_file(
        {"a": np.zeros(4, np.float32), "b": np.zeros(2, np.float16)}, folder / "s-1.safetensors"
    )
    save_file({"c": np.zeros(3, np.float32)}, folder / "s-2.safetensors")
    weight_map = weight_map or {
        "a": "s-1.safetensors",
        "b": "s-1.safetensors",
        "c": "s-2.safetensors",
    }
    index = {"metadata": {"total_size": 32}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), "utf-8")


def test_sharded_index(tmp_path: Path) -> None:
    write_sharded(tmp_path)
    # A stray consolidated file beside the index is not counted twice.
    save_file({"a": np.zeros(4, np.float32)}, tmp_path / "consolidated.safetensors")
    assert groups(tmp_path) == {(FLOAT, "F32"): (2, 7, 28), (FLOAT, "F16"): (1, 2, 4)}


@pytest.mark.parametrize(
    ("weight_map", "error", "message"),
    [
        ({"a": "s-1.safetensors", "c": "s-3.safetensors"}, MissingShardError, "names shard 's-3"),
        ({"a": "s-2.safetensors", "c": "s-2.safetensors"}, HeaderError, "does not hold it"),
        ({"a": "../s-1.safetensors"}, HeaderError, "leaves the model's folder"),
    ],
)
def test_bad_index(tmp_path: Path, weight_map: dict[str, str], error: type, message: str) -> None:
    write_sharded(tmp_path, weight_map)
    with pytest.raises(error, match=message) as caught:
        found = weight_files(tmp_path)
        assert found is not None
        read_inventory(found)
    assert "\n" not in str(caught.value)


def test_index_not_json_and_ambiguous_files(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors.index.json").write_text("{", "utf-8")
    with pytest.raises(HeaderError, match="not a readable JSON index"):
        weight_files(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    write_by_hand(other / "a.safetensors", {"x": ("F32", [1], 4)})
    write_by_hand(other / "b.safetensors", {"y": ("F32", [1], 4)})
    with pytest.raises(HeaderError, match=r"2 \.safetensors files and no"):
        weight_files(other)
    (other / "b.safetensors").unlink()
    assert groups(other) == {(FLOAT, "F32"): (1, 1, 4)}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert weight_files(empty) is None


def test_a_name_in_two_shards_is_refused(tmp_path: Path) -> None:
    write_sharded(tmp_path, {"a": "s-1.safetensors", "c": "s-2.safetensors"})
    save_file({"a": np.zeros(4, np.float32)}, tmp_path / "s-2.safetensors")
    with pytest.raises(HeaderError, match="also in"):
        found = weight_files(tmp_path)
        assert found is not None
        read_inventory(found)


def malformed(path: Path, case: str) -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    if case == "empty":
        path.write_bytes(b"")
    elif case == "short_length":
        path.write_bytes(b"\x10\x00\x00")
    elif case == "length_past_end":
        path.write_bytes(struct.pack("<Q", 10_000) + header + bytes(8))
    elif case == "not_json":
        path.write_bytes(struct.pack("<Q", 5) + b"{oops" + bytes(8))
    elif case == "unknown_dtype":
        write_by_hand(path, {"w": ("F12", [2], 3)})
    elif case == "truncated_data":
        write_by_hand(path, {"w": ("F32", [2], 8)}, pad=-3)
    elif case == "size_mismatch":
        write_by_hand(path, {"w": ("BF16", [2], 8)})
    elif case == "bad_shape":
        raw = json.dumps({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}).encode()
        path.write_bytes(struct.pack("<Q", len(raw)) + raw)


@pytest.mark.parametrize(
    ("case", "error", "message"),
    [
        ("empty", HeaderError, "only 0 bytes, no header length"),
        ("short_length", HeaderError, "only 3 bytes"),
        ("length_past_end", HeaderError, "header length 10000 is larger than the file"),
        ("not_json", HeaderError, "header is not valid JSON"),
        ("unknown_dtype", UnknownDtypeError, 'unknown dtype "F12"'),
        ("truncated_data", HeaderError, "ends at byte 8, past the file's 5 bytes"),
        ("size_mismatch", HeaderError, "BF16 x \\[2\\] is 32 bits; its offsets hold 8 bytes"),
        ("bad_shape", HeaderError, "no valid shape"),
    ],
)
def test_malformed_files_end_in_one_line(
    tmp_path: Path, case: str, error: type, message: str
) -> None:
    path = tmp_path / "model.safetensors"
    malformed(path, case)
    with pytest.raises(error, match=message) as caught:
        read_header(path)
    assert "\n" not in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_terabyte_of_sparse_data_is_never_read(tmp_path: Path) -> None:
    """Only the header is read: a file declaring 2^40 bytes (sparse on disk) is sized at once."""
    path = tmp_path / "model.safetensors"
    size = 2**40
    header = json.dumps(
        {"w": {"dtype": "BF16", "shape": [2**39], "data_offsets": [0, size]}}
    ).encode()
    with path.open("wb") as stream:
        stream.write(struct.pack("<Q", len(header)) + header)
        stream.truncate(8 + len(header) + size)
    [(name, tensor)] = read_header(path).items()
    assert (name, tensor.byte_count, tensor.elements) == ("w", size, 2**39)
