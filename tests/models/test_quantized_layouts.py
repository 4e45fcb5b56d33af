"""Quantized checkpoints read from their headers and `quantization_config`: every tensor's role,
exact bytes, and the unquantized parameter count recovered from the packing, equal to the
config's count of the same model. The headers are built by hand from each library's layout
(cited in `iteragpu.models.quantized`); the bitsandbytes 4-bit layout is the one the library
itself writes on CPU (tests/models/test_quantized_libraries.py checks a real file against it),
and GGUF's quantized types are written by the `gguf` package's own quantizers."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

from iteragpu.models import quantized as q
from iteragpu.models.model import payload, size_model
from iteragpu.models.safetensors import DTYPE_BITS, read_inventory, weight_files
from iteragpu.models.tensors import QUANTIZED_BLOCKS, WeightsInventory

# name: (dtype, shape), or (dtype, shape, data) for a tensor whose data a reader reads (a
# bitsandbytes quant state's JSON); other tensors' data are zeros.
Shapes = dict[str, tuple[str, list[int]] | tuple[str, list[int], bytes]]

# A tiny Llama: hidden 64, 4 heads of 16 (2 for keys and values), MLP 128, vocabulary 32.
HIDDEN, INTERMEDIATE, VOCAB, KV = 64, 128, 32, 32
LLAMA: dict[str, Any] = {
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": HIDDEN,
    "intermediate_size": INTERMEDIATE,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": VOCAB,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
}
# (module, in_features, out_features) of each layer's Linear modules.
LINEARS = (
    ("self_attn.q_proj", HIDDEN, HIDDEN),
    ("self_attn.k_proj", HIDDEN, KV),
    ("self_attn.v_proj", HIDDEN, KV),
    ("self_attn.o_proj", HIDDEN, HIDDEN),
    ("mlp.gate_proj", HIDDEN, INTERMEDIATE),
    ("mlp.up_proj", HIDDEN, INTERMEDIATE),
    ("mlp.down_proj", INTERMEDIATE, HIDDEN),
)
LINEAR_VALUES = 2 * sum(i * o for _, i, o in LINEARS)
KEPT_VALUES = 2 * VOCAB * HIDDEN + (2 * 2 + 1) * HIDDEN  # embeddings, head, norms
LLAMA_PARAMETERS = LINEAR_VALUES + KEPT_VALUES


def write_header(path: Path, tensors: Shapes) -> None:
    """A safetensors file declaring `tensors` (name: dtype, shape) back to back, their data
    zeros unless given."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, (dtype, shape, *given) in tensors.items():
        size = math.prod(shape) * DTYPE_BITS[dtype] // 8
        offset = len(data)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        chunk = given[0] if given else bytes(size)
        assert len(chunk) == size
        data += chunk
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def tensor_bytes(tensors: Shapes) -> int:
    return sum(math.prod(t[1]) * DTYPE_BITS[t[0]] // 8 for t in tensors.values())


def llama(quantize_linear: Any) -> Shapes:
    """The tiny Llama's tensors, each Linear as `quantize_linear(name, in, out)` lays it out,
    the embeddings, head and norms left in F16 (as the quantizers leave them)."""
    tensors: Shapes = {
        "model.embed_tokens.weight": ("F16", [VOCAB, HIDDEN]),
        "lm_head.weight": ("F16", [VOCAB, HIDDEN]),
        "model.norm.weight": ("F16", [HIDDEN]),
    }
    for layer in range(2):
        prefix = f"model.layers.{layer}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            tensors[prefix + norm + ".weight"] = ("F16", [HIDDEN])
        for module, inputs, outputs in LINEARS:
            tensors.update(quantize_linear(prefix + module, inputs, outputs))
    return tensors


def folder_with(tmp_path: Path, quantization: dict[str, Any] | None, tensors: Shapes) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = dict(LLAMA)
    if quantization is not None:
        config["quantization_config"] = quantization
    (tmp_path / "config.json").write_text(json.dumps(config), "utf-8")
    write_header(tmp_path / "model.safetensors", tensors)
    return tmp_path


def inventory(folder: Path) -> WeightsInventory:
    found = weight_files(folder)
    assert found is not None
    return read_inventory(found)


def roles(found: WeightsInventory) -> dict[tuple[str, str], tuple[int, int, int | None]]:
    assert found.layout is not None
    return {(g.role, g.dtype): (g.tensors, g.bytes, g.parameters) for g in found.layout.roles}


def config_count(tmp_path: Path) -> int:
    """The tiny Llama's parameters counted from its config alone (no weight files)."""
    folder = tmp_path / "config_only"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA), "utf-8")
    count = payload(size_model(folder, tokens=1))["parameters"]
    assert isinstance(count, int)
    return count


# --- GPTQ and AWQ ---------------------------------------------------------------------------


def gptq(bits: int, group: int = 32) -> Any:
    def linear(name: str, inputs: int, outputs: int) -> Shapes:
        groups = math.ceil(inputs / group)
        return {
            name + ".qweight": ("I32", [inputs * bits // 32, outputs]),
            name + ".qzeros": ("I32", [groups, outputs * bits // 32]),
            name + ".scales": ("F16", [groups, outputs]),
            name + ".g_idx": ("I32", [inputs]),
        }

    return linear


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
def test_gptq_packs_32_over_bits_values_per_int32(tmp_path: Path, bits: int) -> None:
    tensors = llama(gptq(bits))
    found = inventory(folder_with(tmp_path, {"quant_method": "gptq", "bits": bits}, tensors))
    assert found.parameters == LLAMA_PARAMETERS == config_count(tmp_path)
    assert found.parameters_unknown_reason is None
    qweight = 2 * sum(i * o * bits // 8 for _, i, o in LINEARS)
    qzeros = 2 * sum(math.ceil(i / 32) * o * bits // 8 for _, i, o in LINEARS)
    g_idx = 2 * sum(4 * i for _, i, _ in LINEARS)
    scales = 2 * sum(2 * math.ceil(i / 32) * o for _, i, o in LINEARS)
    assert roles(found) == {
        (q.QUANTIZED_WEIGHTS, "I32"): (14, qweight, LINEAR_VALUES),
        (q.ZEROS, "I32"): (14, qzeros, 0),
        (q.GROUP_INDEX, "I32"): (14, g_idx, 0),
        (q.SCALES, "F16"): (14, scales, 0),
        (q.UNQUANTIZED, "F16"): (7, 2 * KEPT_VALUES, KEPT_VALUES),
    }
    assert (
        found.total_bytes
        == tensor_bytes(tensors)
        == qweight + qzeros + g_idx + scales + (2 * KEPT_VALUES)
    )


def test_gptq_biases_are_parameters(tmp_path: Path) -> None:
    def with_bias(name: str, inputs: int, outputs: int) -> Shapes:
        return {**gptq(4)(name, inputs, outputs), name + ".bias": ("F16", [outputs])}

    found = inventory(folder_with(tmp_path, {"quant_method": "gptq", "bits": 4}, llama(with_bias)))
    biases = 2 * sum(o for _, _, o in LINEARS)
    assert found.parameters == LLAMA_PARAMETERS + biases


def test_gptq_layout_that_does_not_match_is_unknown(tmp_path: Path) -> None:
    """Marlin-repacked GPTQ ([in / 16, out * 16 * bits / 32]) is not the layout read here: its
    qweight's columns are not the scales' columns, so nothing is guessed."""

    def marlin(name: str, inputs: int, outputs: int) -> Shapes:
        return {
            name + ".qweight": ("I32", [inputs // 16, outputs * 16 * 4 // 32]),
            name + ".scales": ("F16", [inputs // 32, outputs]),
        }

    config = {"quant_method": "gptq", "bits": 4, "checkpoint_format": "marlin"}
    found = inventory(folder_with(tmp_path, config, llama(marlin)))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.TENSOR_NOT_IN_LAYOUT
    assert found.layout is not None and found.layout.tensor is not None
    assert found.layout.tensor.endswith(".qweight")
    assert found.total_bytes == tensor_bytes(llama(marlin))  # the bytes stay exact


def test_gptq_without_bits_cannot_be_read(tmp_path: Path) -> None:
    found = inventory(folder_with(tmp_path, {"quant_method": "gptq"}, llama(gptq(4))))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.CONFIG_UNREADABLE


def test_packed_tensors_without_a_quantization_config_stay_unknown(tmp_path: Path) -> None:
    found = inventory(folder_with(tmp_path, None, llama(gptq(4))))
    assert found.layout is None
    assert found.parameters is None and found.parameters_unknown_reason == q.INTEGER_TENSORS


def awq_gemm(name: str, inputs: int, outputs: int) -> Shapes:
    return {
        name + ".qweight": ("I32", [inputs, outputs // 8]),
        name + ".qzeros": ("I32", [inputs // 32, outputs // 8]),
        name + ".scales": ("F16", [inputs // 32, outputs]),
    }


def awq_gemv(name: str, inputs: int, outputs: int) -> Shapes:
    # AutoAWQ's calculate_zeros_width(in, 32): groups rounded up to a multiple of 8, times 4.
    width = math.ceil(math.ceil(inputs // 32 / 8) / 4) * 4
    return {
        name + ".qweight": ("I32", [outputs, inputs // 8]),
        name + ".qzeros": ("I32", [outputs, width]),
        name + ".scales": ("F16", [outputs, width * 8]),
    }


@pytest.mark.parametrize(("version", "layout"), [("gemm", awq_gemm), ("gemv", awq_gemv)])
def test_awq_packs_eight_values_per_int32(tmp_path: Path, version: str, layout: Any) -> None:
    config = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": version}
    found = inventory(folder_with(tmp_path, config, llama(layout)))
    assert found.parameters == LLAMA_PARAMETERS
    assert roles(found)[(q.QUANTIZED_WEIGHTS, "I32")] == (14, LINEAR_VALUES // 2, LINEAR_VALUES)


def test_awq_gemm_read_as_gemv_is_unknown(tmp_path: Path) -> None:
    config = {"quant_method": "awq", "bits": 4, "version": "gemv"}
    found = inventory(folder_with(tmp_path, config, llama(awq_gemm)))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.TENSOR_NOT_IN_LAYOUT


# --- bitsandbytes ----------------------------------------------------------------------------


def bnb_state(quant_type: str, shape: list[int], nested: bool = True) -> bytes:
    """The quant state's JSON as bitsandbytes 0.50.2 writes it (`QuantState.as_dict(packed=True)`
    of a float16 weight, its non-tensor items), seen in files it wrote on CPU."""
    state: dict[str, Any] = {
        "quant_type": quant_type,
        "blocksize": 64,
        "dtype": "float16",
        "shape": shape,
    }
    if nested:
        state |= {"nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.5}
    return json.dumps(state).encode()


def bnb_4bit(quant_type: str = "nf4", nested: bool = True, blocksize: int = 64) -> Any:
    """The state dict Transformers saves for a `Linear4bit` (bitsandbytes 0.49
    `QuantState.as_dict(packed=True)`); the quant-state tensor holds its JSON."""

    def linear(name: str, inputs: int, outputs: int) -> Shapes:
        values = inputs * outputs
        blocks = math.ceil(values / blocksize)
        weight = name + ".weight"
        tensors: Shapes = {weight: ("U8", [(values + 1) // 2, 1])}
        if nested:
            tensors[weight + ".absmax"] = ("U8", [blocks])
            tensors[weight + ".nested_absmax"] = ("F32", [math.ceil(blocks / 256)])
            tensors[weight + ".nested_quant_map"] = ("F32", [256])
        else:
            tensors[weight + ".absmax"] = ("F32", [blocks])
        tensors[weight + ".quant_map"] = ("F32", [16])
        state = bnb_state(quant_type, [outputs, inputs], nested)
        tensors[weight + f".quant_state.bitsandbytes__{quant_type}"] = ("U8", [len(state)], state)
        return tensors

    return linear


@pytest.mark.parametrize(("quant_type", "nested"), [("nf4", True), ("fp4", False)])
def test_bitsandbytes_4bit_two_values_per_byte(
    tmp_path: Path, quant_type: str, nested: bool
) -> None:
    config = {
        "quant_method": "bitsandbytes",
        "load_in_4bit": True,
        "bnb_4bit_quant_type": quant_type,
        "bnb_4bit_use_double_quant": nested,
    }
    tensors = llama(bnb_4bit(quant_type, nested))
    found = inventory(folder_with(tmp_path, config, tensors))
    assert found.parameters == LLAMA_PARAMETERS == config_count(tmp_path)
    got = roles(found)
    assert got[(q.QUANTIZED_WEIGHTS, "U8")] == (14, LINEAR_VALUES // 2, LINEAR_VALUES)
    assert got[(q.UNQUANTIZED, "F16")] == (7, 2 * KEPT_VALUES, KEPT_VALUES)
    # absmax (and nested_absmax) are the blocks' scales; the codebooks and the JSON state the
    # rest: stored, not parameters.
    absmax = "U8" if nested else "F32"
    blocks = 2 * sum(math.ceil(i * o / 64) for _, i, o in LINEARS)
    assert got[(q.SCALES, absmax)][:2] == (14, blocks * (1 if nested else 4))
    metadata = {k: v for k, v in got.items() if k[0] in (q.SCALES, q.QUANTIZATION_STATE)}
    assert sum(b for _, b, _ in metadata.values()) == tensor_bytes(tensors) - (
        LINEAR_VALUES // 2 + 2 * KEPT_VALUES
    )
    assert all(p == 0 for _, _, p in metadata.values())


def test_bitsandbytes_4bit_in_a_16_bit_quant_storage(tmp_path: Path) -> None:
    """`bnb_4bit_quant_storage=bfloat16` (for FSDP): the packed weight is BF16
    [n / 4, 1]: still two values per byte, not one parameter per BF16 element."""

    def bf16_storage(name: str, inputs: int, outputs: int) -> Shapes:
        tensors = bnb_4bit()(name, inputs, outputs)
        tensors[name + ".weight"] = ("BF16", [inputs * outputs // 4, 1])
        return tensors

    config = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    found = inventory(folder_with(tmp_path, config, llama(bf16_storage)))
    assert found.parameters == LLAMA_PARAMETERS


def test_bitsandbytes_4bit_odd_count_from_the_quant_state(tmp_path: Path) -> None:
    """A layer with both dimensions odd (7 x 5 = 35 values in 18 bytes): the header alone would
    say 36; the quant state's JSON says 35. A state whose JSON is missing, unreadable, or does
    not fit the packed tensor leaves the count unknown, never a guess."""
    tensors = bnb_4bit()("model.layers.0.mlp.down_proj", 5, 7)
    tensors["model.embed_tokens.weight"] = ("F16", [3, 5])
    config = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    found = inventory(folder_with(tmp_path / "odd", config, tensors))
    assert found.parameters == 7 * 5 + 3 * 5
    assert roles(found)[(q.QUANTIZED_WEIGHTS, "U8")] == (1, 18, 35)
    state = "model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4"
    length = len(tensors[state][2])  # type: ignore[misc]
    bad_states = {
        "zeros": bytes(length),
        "no_shape": json.dumps({"quant_type": "nf4"}).encode().ljust(length),
        "other_shape": bnb_state("nf4", [9, 5]),
    }
    for case, data in bad_states.items():
        tensors[state] = ("U8", [len(data)], data)
        found = inventory(folder_with(tmp_path / case, config, tensors))
        assert found.parameters is None, case
        assert found.parameters_unknown_reason == q.TENSOR_NOT_IN_LAYOUT
        assert found.layout is not None
        assert found.layout.tensor == "model.layers.0.mlp.down_proj.weight"


def test_bitsandbytes_4bit_reads_only_the_quant_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader reads the quant states' few bytes and nothing else of the data."""
    tensors = llama(bnb_4bit())
    config = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    folder = folder_with(tmp_path, config, tensors)
    reads: list[int] = []
    real_open = Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        stream = real_open(self, *args, **kwargs)
        if self.suffix != ".safetensors":
            return stream  # config.json
        real_read = stream.read

        def read(size: int = -1) -> Any:
            reads.append(size)
            return real_read(size)

        stream.read = read  # type: ignore[method-assign]
        return stream

    monkeypatch.setattr(Path, "open", counting_open)
    assert inventory(folder).parameters == LLAMA_PARAMETERS
    states = [t[2] for n, t in tensors.items() if ".quant_state." in n]  # type: ignore[misc]
    header_reads = 2  # the length, then the header
    assert len(reads) == header_reads + len(states)
    assert sorted(reads[header_reads:]) == sorted(len(s) for s in states)
    assert all(size <= q.MAX_STATE_BYTES for size in reads[header_reads:])


def test_bitsandbytes_8bit_one_value_per_int8(tmp_path: Path) -> None:
    def linear(name: str, inputs: int, outputs: int) -> Shapes:
        return {
            name + ".weight": ("I8", [outputs, inputs]),
            name + ".SCB": ("F32", [outputs]),
            name + ".weight_format": ("U8", []),
        }

    config = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    found = inventory(folder_with(tmp_path, config, llama(linear)))
    assert found.parameters == LLAMA_PARAMETERS
    got = roles(found)
    assert got[(q.QUANTIZED_WEIGHTS, "I8")] == (14, LINEAR_VALUES, LINEAR_VALUES)
    assert got[(q.SCALES, "F32")] == (14, 4 * 2 * sum(o for _, _, o in LINEARS), 0)
    assert got[(q.QUANTIZATION_STATE, "U8")] == (14, 14, 0)


def test_bitsandbytes_int8_without_its_scales_is_unknown(tmp_path: Path) -> None:
    def linear(name: str, inputs: int, outputs: int) -> Shapes:
        return {name + ".weight": ("I8", [outputs, inputs])}

    config = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    found = inventory(folder_with(tmp_path, config, llama(linear)))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.TENSOR_NOT_IN_LAYOUT


# --- FP8, MXFP4, compressed-tensors -----------------------------------------------------------


def test_fp8_blocks_one_value_per_element(tmp_path: Path) -> None:
    """DeepSeek-V3's layout: F8_E4M3 weights, one F32 `weight_scale_inv` per 128x128 block."""

    def linear(name: str, inputs: int, outputs: int) -> Shapes:
        scale = [math.ceil(outputs / 128), math.ceil(inputs / 128)]
        return {
            name + ".weight": ("F8_E4M3", [outputs, inputs]),
            name + ".weight_scale_inv": ("F32", scale),
        }

    config = {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
    found = inventory(folder_with(tmp_path, config, llama(linear)))
    assert found.parameters == LLAMA_PARAMETERS
    got = roles(found)
    assert got[(q.QUANTIZED_WEIGHTS, "F8_E4M3")] == (14, LINEAR_VALUES, LINEAR_VALUES)
    assert got[(q.SCALES, "F32")] == (14, 14 * 4, 0)


GPT_OSS_EXPERTS, GPT_OSS_HIDDEN, GPT_OSS_INTERMEDIATE = 4, 64, 64


def gpt_oss_experts(scales_shape_off: bool = False) -> Shapes:
    """One layer of gpt-oss's experts as Transformers' `Mxfp4GptOssExperts` stores them, the
    router and attention left in BF16."""
    e, h, i = GPT_OSS_EXPERTS, GPT_OSS_HIDDEN, GPT_OSS_INTERMEDIATE
    p = "model.layers.0.mlp."
    down_scales = [e, h, i // 32 + (1 if scales_shape_off else 0)]
    return {
        p + "experts.gate_up_proj_blocks": ("U8", [e, 2 * i, h // 32, 16]),
        p + "experts.gate_up_proj_scales": ("U8", [e, 2 * i, h // 32]),
        p + "experts.gate_up_proj_bias": ("BF16", [e, 2 * i]),
        p + "experts.down_proj_blocks": ("U8", [e, h, i // 32, 16]),
        p + "experts.down_proj_scales": ("U8", down_scales),
        p + "experts.down_proj_bias": ("BF16", [e, h]),
        p + "router.weight": ("BF16", [e, h]),
        p + "router.bias": ("BF16", [e]),
        "model.layers.0.self_attn.sinks": ("BF16", [4]),
    }


def test_mxfp4_32_values_per_16_byte_block(tmp_path: Path) -> None:
    e, h, i = GPT_OSS_EXPERTS, GPT_OSS_HIDDEN, GPT_OSS_INTERMEDIATE
    config = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}
    tensors = gpt_oss_experts()
    found = inventory(folder_with(tmp_path, config, tensors))
    experts = e * 2 * i * h + e * h * i
    kept = e * 2 * i + e * h + e * h + e + 4
    assert found.parameters == experts + kept
    assert roles(found) == {
        (q.QUANTIZED_WEIGHTS, "U8"): (2, experts // 2, experts),
        (q.SCALES, "U8"): (2, experts // 32, 0),
        (q.UNQUANTIZED, "BF16"): (5, 2 * kept, kept),
    }
    assert found.total_bytes == tensor_bytes(tensors)


def test_mxfp4_scales_that_do_not_match_their_blocks(tmp_path: Path) -> None:
    found = inventory(folder_with(tmp_path, {"quant_method": "mxfp4"}, gpt_oss_experts(True)))
    assert found.parameters is None
    assert found.layout is not None and found.layout.tensor == (
        "model.layers.0.mlp.experts.down_proj_blocks"
    )


def compressed(group: int | None, fmt: str = "pack-quantized", kind: str = "int") -> dict[str, Any]:
    weights: dict[str, Any] = {"num_bits": 4, "type": kind, "strategy": "group"}
    if group is not None:
        weights["group_size"] = group
    return {
        "quant_method": "compressed-tensors",
        "format": fmt,
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
    }


def pack_quantized(name: str, inputs: int, outputs: int) -> Shapes:
    """compressed-tensors' `PackedQuantizationCompressor.compression_param_info`: 4 bits."""
    return {
        name + ".weight_packed": ("I32", [outputs, math.ceil(inputs / 8)]),
        name + ".weight_scale": ("BF16", [outputs, inputs // 32]),
        name + ".weight_zero_point": ("I32", [math.ceil(outputs / 8), inputs // 32]),
        name + ".weight_shape": ("I32", [2]),
    }


@pytest.mark.parametrize("group", [32, None])
def test_compressed_tensors_pack_quantized(tmp_path: Path, group: int | None) -> None:
    found = inventory(folder_with(tmp_path, compressed(group), llama(pack_quantized)))
    assert found.parameters == LLAMA_PARAMETERS
    assert roles(found)[(q.QUANTIZED_WEIGHTS, "I32")] == (14, LINEAR_VALUES // 2, LINEAR_VALUES)
    assert roles(found)[(q.QUANTIZATION_STATE, "I32")] == (14, 14 * 8, 0)


def test_compressed_tensors_padded_rows_are_not_counted_as_values(tmp_path: Path) -> None:
    """Rows of 36 values pack into 5 elements (40 slots): the scales of groups of 12 say 36,
    not 40, so the packing does not tell: unknown."""

    def padded(name: str, inputs: int, outputs: int) -> Shapes:
        return {
            name + ".weight_packed": ("I32", [outputs, 5]),
            name + ".weight_scale": ("BF16", [outputs, 3]),
        }

    found = inventory(folder_with(tmp_path, compressed(12), llama(padded)))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.TENSOR_NOT_IN_LAYOUT


def test_compressed_tensors_nvfp4(tmp_path: Path) -> None:
    def nvfp4(name: str, inputs: int, outputs: int) -> Shapes:
        return {
            name + ".weight_packed": ("U8", [outputs, inputs // 2]),
            name + ".weight_scale": ("F8_E4M3", [outputs, inputs // 16]),
            name + ".weight_global_scale": ("F32", [1]),
            name + ".input_global_scale": ("F32", [1]),
        }

    config = compressed(16, "nvfp4-pack-quantized", "float")
    found = inventory(folder_with(tmp_path, config, llama(nvfp4)))
    assert found.parameters == LLAMA_PARAMETERS
    assert roles(found)[(q.QUANTIZED_WEIGHTS, "U8")] == (14, LINEAR_VALUES // 2, LINEAR_VALUES)
    assert roles(found)[(q.SCALES, "F8_E4M3")] == (14, LINEAR_VALUES // 16, 0)


def test_a_method_not_read_here_names_itself(tmp_path: Path) -> None:
    found = inventory(folder_with(tmp_path, {"quant_method": "hqq"}, llama(gptq(4))))
    assert found.parameters is None
    assert found.parameters_unknown_reason == q.METHOD_NOT_READ


# --- the --json object ------------------------------------------------------------------------


def test_payload_itemizes_the_roles(tmp_path: Path) -> None:
    config = {"quant_method": "gptq", "bits": 4}
    data = payload(size_model(folder_with(tmp_path, config, llama(gptq(4))), tokens=1))
    assert data["parameters"] == LLAMA_PARAMETERS and data["parameters_unknown_reason"] is None
    by_role = {(r["role"], r["dtype"]): r for r in data["weights_roles"]}
    assert by_role[(q.QUANTIZED_WEIGHTS, "I32")]["parameters"] == LINEAR_VALUES
    assert sum(r["bytes"] for r in data["weights_roles"]) == data["weights_bytes"]
    assert sum(r["parameters"] for r in data["weights_roles"]) == data["parameters"]
    assert {"role", "dtype", "tensors", "bytes", "parameters"} == set(by_role[(q.ZEROS, "I32")])
    # The formats stay as they were: a packed tensor's elements are containers, not values.
    packed = [f for f in data["weights_formats"] if f["format"] == "integer"]
    assert packed and all(f["elements"] is None for f in packed)


def test_payload_says_why_parameters_are_unknown(tmp_path: Path) -> None:
    data = payload(size_model(folder_with(tmp_path, None, llama(gptq(4))), tokens=1))
    assert data["parameters"] is None and data["weights_roles"] is None
    assert data["parameters_unknown_reason"] == q.INTEGER_TENSORS
    assert "parameters_unknown_integer_tensors" in data["caveats"]


# --- GGUF: the gguf package's own quantizers ----------------------------------------------------

QUANTIZABLE = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"]


@pytest.mark.parametrize("name", QUANTIZABLE)
def test_gguf_types_count_logical_values(tmp_path: Path, name: str) -> None:
    kind = GGMLQuantizationType[name]
    values, block_bytes = GGML_QUANT_SIZES[kind]
    path = tmp_path / "model.gguf"
    writer = GGUFWriter(path, "llama")
    writer.add_block_count(1)
    writer.add_embedding_length(256)
    writer.add_head_count(4)
    writer.add_head_count_kv(4)
    rows = np.random.default_rng(0).standard_normal((4, 256)).astype(np.float32)
    writer.add_tensor("blk.0.ffn_up.weight", quantize(rows, kind), raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    found = size_model(path, tokens=1, kv_dtype="float16").weights
    assert found.inventory is not None
    assert [(g.format, g.dtype, g.elements, g.bytes) for g in found.inventory.groups] == [
        (QUANTIZED_BLOCKS, name, 4 * 256, 4 * 256 // values * block_bytes)
    ]
    assert found.parameters == 4 * 256


# --- What `iteragpu model` prints ------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "role_word"), [("ko", "양자화된 가중치"), ("id", "bobot terkuantisasi")]
)
def test_the_table_itemizes_the_roles_in_the_readers_language(
    tmp_path: Path, lang: str, role_word: str
) -> None:
    from typer.testing import CliRunner

    from iteragpu.cli.app import app

    folder = folder_with(tmp_path, {"quant_method": "gptq", "bits": 4}, llama(gptq(4)))
    result = CliRunner().invoke(
        app, ["model", str(folder), "--tokens", "8", "--lang", lang], prog_name="iteragpu"
    )
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("· ")]
    # One row per role and dtype, in place of the per-format rows.
    assert len(rows) == len(roles(inventory(folder)))
    assert any(role_word in row and "I32" in row for row in rows)
    qweight = 2 * sum(i * o * 4 // 8 for _, i, o in LINEARS)
    grouping = "," if lang == "id" else "."  # thousands: ko 1,234 vs id 1.234
    written = f"{qweight:,}".replace(",", "." if grouping == "," else ",")
    assert any(role_word in row and written in row for row in rows)
