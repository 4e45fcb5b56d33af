"""Quantized safetensors checkpoints: what each tensor is, and the parameters the packing hides.

A quantized checkpoint's headers say each tensor's dtype and shape, not how many values an
element packs: that is the quantization scheme's, stated by the folder's `config.json`
`quantization_config`. Read with it, every tensor takes a role, and its bytes are itemized:

- `quantized_weights`: the weights in the scheme's storage; the unquantized values they hold
  are recovered from the packing, checked against the shapes of the scales beside them;
- `scales`, `zeros`, `group_index`, `quantization_state`: what the scheme stores beside the
  weights (stored, so their bytes count, but not parameters);
- `unquantized`: tensors left in 16 or 32 bits (embeddings, norms, heads, biases): one
  parameter per element.

The layouts read here, each checked against its library's source (commit or version cited):

- `gptq` (AutoGPTQ `auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py` at c80855e, `QuantLinear`;
  the other AutoGPTQ kernels and GPTQModel register the same buffers): `qweight` I32
  [in // 32 * bits, out] holds 32 / bits values per element (3 bits: 32 values in three
  elements), `qzeros` I32 [ceil(in / group_size), out // 32 * bits], `scales` F16
  [ceil(in / group_size), out], `g_idx` I32 [in]; `bits` 2, 3, 4 or 8; `bias` F16 [out].
- `awq` (AutoAWQ `awq/modules/linear/gemm.py` at d9dc8e5 `WQLinear_GEMM`, `gemv.py` at df0a795
  `WQLinear_GEMV`): GEMM (also the `exllama` and `ipex` versions, which load its buffers)
  `qweight` I32 [in, out // 8], `qzeros` I32 [in / group_size, out // 8], `scales` F16
  [in / group_size, out]; GEMV `qweight` I32 [out, in // 8], `qzeros` and `scales` [out, ...].
  Other versions (`gemv_fast`, `marlin`) are not read.
- `bitsandbytes` (bitsandbytes 0.50.2: `backends/default/ops.py` `quantize_4bit`,
  `functional.py` `QuantState.as_dict(packed=True)`, `nn/modules.py`
  `Linear4bit._save_to_state_dict`, which Transformers' `save_pretrained` writes; checked with
  files the library wrote on CPU, tests/models/test_quantized_libraries.py): a 4-bit `weight`
  is [(n + 1) // 2 bytes as the quant storage dtype (U8 by default, BF16 for FSDP), 1]: two
  values per byte, beside `weight.absmax` (U8 when double-quantized, else F32),
  `weight.quant_map`, `weight.nested_absmax`, `weight.nested_quant_map` and
  `weight.quant_state.bitsandbytes__nf4` (or `__fp4`), a U8 tensor whose data is the JSON of
  `QuantState.as_dict(packed=True)`'s non-tensor items: its `shape` is the weight's original
  shape. Those few bytes, and no other tensor data, are read (`read_data`): the header alone
  cannot tell n from n + 1 values when n is odd (both dimensions odd), the JSON can; the
  packed tensor must then hold (n + 1) // (2 x itemsize) elements.
  An 8-bit `weight` (`Int8Params`) is I8 [out, in], one value per element, beside `SCB` F32
  [out] and `weight_format` U8 [].
- `fp8` (DeepSeek-V3's `weight_block_size`): `weight` F8_E4M3 [out, in], one value per
  element, `weight_scale_inv` F32 per block.
- `mxfp4` (gpt-oss; Transformers `src/transformers/integrations/mxfp4.py` at 0189b1d,
  `Mxfp4GptOssExperts` and `convert_moe_packed_tensors`): `<name>_blocks` U8
  [..., groups, 16] holds 32 FP4 values per 16 bytes, `<name>_scales` U8 [..., groups] (the
  blocks' shape without its last dimension) one E8M0 scale per 32 values.
- `compressed-tensors` (`compressors/quantized_compressors/pack_quantized.py` at 0199c6e,
  `pack_to_int32`): `weight_packed` I32 [out, ceil(in / (32 / bits))] (pack-quantized; U8
  [out, in / 2] for NVFP4), `weight_scale`, `weight_zero_point`, `weight_g_idx`,
  `weight_shape`; int8 `weight` one value per element. The packing pads each row to whole
  elements: the count is exact when `in` is a multiple of 32 / bits (checked against the
  scales where the group size is stated; the exact shape is in `weight_shape`'s data).

Where a tensor is not one the scheme explains (an integer tensor of no known role, or a shape
that does not match the layout), the parameter count is unknown, with a reason code.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from iteragpu.core.records import Record


class TensorHeader(Protocol):
    """What a layout reads of a header's tensor (iteragpu.models.safetensors.TensorHeader,
    which imports this module: a protocol keeps the two apart)."""

    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def byte_count(self) -> int: ...
    @property
    def elements(self) -> int: ...


QUANTIZED_WEIGHTS: Final = "quantized_weights"
SCALES: Final = "scales"
ZEROS: Final = "zeros"
GROUP_INDEX: Final = "group_index"
QUANTIZATION_STATE: Final = "quantization_state"
UNQUANTIZED: Final = "unquantized"
UNKNOWN_INTEGER: Final = "unknown_integer"

# Reasons `parameters` is unknown (null).
INTEGER_TENSORS: Final = "integer_tensors"  # integer tensors and no quantization_config read
METHOD_NOT_READ: Final = "quantization_method_not_read"  # a quant_method not read here
CONFIG_UNREADABLE: Final = "quantization_config_unreadable"  # bits missing or out of range
TENSOR_NOT_IN_LAYOUT: Final = "tensor_not_in_layout"  # a tensor the layout does not explain

METHODS: Final = ("gptq", "awq", "bitsandbytes", "fp8", "mxfp4", "compressed-tensors")

_SCALE_SUFFIXES: Final = frozenset(
    {
        "scales",
        "weight_scale",
        "weight_scale_inv",
        "weight_scale_2",
        "weight_global_scale",
        "input_scale",
        "input_global_scale",
        "output_scale",
        "k_scale",
        "v_scale",
        "SCB",
        "absmax",
        "nested_absmax",
    }
)
_ZERO_SUFFIXES: Final = frozenset({"qzeros", "weight_zero_point"})
_INDEX_SUFFIXES: Final = frozenset({"g_idx", "weight_g_idx"})
_STATE_SUFFIXES: Final = frozenset(
    {"quant_map", "nested_quant_map", "weight_format", "weight_shape"}
)
_WIDE_FLOATS: Final = frozenset({"F64", "F32", "F16", "BF16"})
_INTEGERS: Final = frozenset({"I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL"})
_BNB_STATES: Final = (".quant_state.bitsandbytes__nf4", ".quant_state.bitsandbytes__fp4")
# The quant state's JSON is some 75 to 160 bytes (bitsandbytes 0.50.2): a larger tensor of that
# name is not one, and is not read.
MAX_STATE_BYTES: Final = 4096

ReadData = Callable[[str], bytes | None]
"""A tensor's data by name (up to MAX_STATE_BYTES), or None where it cannot be read."""


class RoleGroup(Record):
    """Tensors of one role and dtype: how many, their bytes, and the parameters they hold
    (None where unknown)."""

    role: str
    dtype: str
    tensors: int
    bytes: int
    parameters: int | None


class Layout(Record):
    """A checkpoint read with its quantization scheme: roles, parameters or why not."""

    method: str
    roles: tuple[RoleGroup, ...]
    parameters: int | None
    reason: str | None  # None when `parameters` is known
    tensor: str | None = None  # the first tensor that makes it unknown


def quantization_config(folder: Path) -> Mapping[str, Any] | None:
    """The `quantization_config` of the folder's config.json (top level, else `text_config`'s),
    or None: no config, unreadable, or no such object (the config reader reports a bad file)."""
    try:
        raw = json.loads((folder / "config.json").read_text("utf-8"))
    except (OSError, UnicodeError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict):
        return None
    found = raw.get("quantization_config")
    text = raw.get("text_config")
    if not isinstance(found, dict) and isinstance(text, dict):
        found = text.get("quantization_config")
    return found if isinstance(found, dict) else None


def read_layout(
    config: Mapping[str, Any],
    tensors: Mapping[str, TensorHeader],
    read_data: ReadData | None = None,
) -> Layout:
    """Every tensor's role under `config` (a `quantization_config`), and the parameters.
    `read_data` gives the few bytes of a bitsandbytes quant state's JSON (None: not read, and
    a 4-bit weight's count is then unknown)."""
    method = str(config.get("quant_method", "")).lower().replace("_", "-")
    bits: int | None = None
    reason: str | None = None
    if method not in METHODS:
        reason = METHOD_NOT_READ
    elif method in ("gptq", "awq"):
        bits = _bits(
            config.get("bits", config.get("w_bit")), (2, 3, 4, 8) if method == "gptq" else (4,)
        )
        reason = CONFIG_UNREADABLE if bits is None else None
    elif method == "compressed-tensors":
        bits = _compressed_bits(config)
    rows: list[tuple[str, str, int, int | None]] = []
    unknown: str | None = None
    for name, tensor in tensors.items():
        role, values = _classify(method, config, bits, name, tensor, tensors, read_data)
        if values is None and unknown is None:
            unknown = name
        rows.append((role, tensor.dtype, tensor.byte_count, values))
    if unknown is not None and reason is None:
        reason = TENSOR_NOT_IN_LAYOUT
    parameters = None if unknown is not None else sum(v or 0 for *_, v in rows)
    return Layout(
        method or "unknown",
        _group(rows),
        parameters,
        None if unknown is None else reason,
        unknown,
    )


def _bits(value: Any, allowed: tuple[int, ...]) -> int | None:
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value in allowed
        else None
    )


def _compressed_bits(config: Mapping[str, Any]) -> int | None:
    """The weights' bits of a compressed-tensors config: one value across its groups, else
    None (then only tensors of one value per element are read)."""
    found = {weights.get("num_bits") for weights in _compressed_weights(config)}
    return _bits(found.pop(), (2, 4, 8)) if len(found) == 1 else None


def _compressed_group_size(config: Mapping[str, Any]) -> int | None:
    """The weights' group size where every group states the same one, else None."""
    found = {weights.get("group_size") for weights in _compressed_weights(config)}
    size = found.pop() if len(found) == 1 else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def _compressed_weights(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    groups = config.get("config_groups")
    if not isinstance(groups, dict):
        return []
    found: list[Mapping[str, Any]] = []
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict):
            found.append(weights)
    return found


def _role_by_name(name: str) -> str | None:
    last = name.rsplit(".", 1)[-1]
    if last in _SCALE_SUFFIXES:
        return SCALES
    if last in _ZERO_SUFFIXES:
        return ZEROS
    if last in _INDEX_SUFFIXES:
        return GROUP_INDEX
    if last in _STATE_SUFFIXES or ".quant_state." in name or last.startswith("quant_state"):
        return QUANTIZATION_STATE
    return None


def _classify(
    method: str,
    config: Mapping[str, Any],
    bits: int | None,
    name: str,
    tensor: TensorHeader,
    tensors: Mapping[str, TensorHeader],
    read_data: ReadData | None = None,
) -> tuple[str, int | None]:
    """(role, parameters held: 0 for metadata, None where the layout does not explain it)."""
    shape = tensor.shape
    state = next((name + s for s in _BNB_STATES if name + s in tensors), None)
    if method == "bitsandbytes" and state is not None:
        return QUANTIZED_WEIGHTS, _bnb_4bit_values(tensor, tensors[state], state, read_data)
    if method == "mxfp4" and name.endswith("_blocks") and tensor.dtype == "U8":
        scales = tensors.get(name[: -len("_blocks")] + "_scales")
        ok = (
            len(shape) >= 2
            and shape[-1] == 16
            and scales is not None
            and scales.shape == shape[:-1]
        )
        return QUANTIZED_WEIGHTS, 2 * tensor.elements if ok else None
    if method == "mxfp4" and name.endswith("_scales") and tensor.dtype == "U8":
        blocks = tensors.get(name[: -len("_scales")] + "_blocks")
        return SCALES, 0 if blocks is not None else None
    role = _role_by_name(name)
    if role is not None:
        return role, 0
    if tensor.dtype in _WIDE_FLOATS:
        return UNQUANTIZED, tensor.elements
    if tensor.dtype not in _INTEGERS:  # F8, F6, F4: one value per element of the shape
        return QUANTIZED_WEIGHTS, tensor.elements
    values = _integer_values(method, config, bits, name, tensor, tensors)
    return (QUANTIZED_WEIGHTS if values is not None else UNKNOWN_INTEGER), values


def _bnb_4bit_values(
    weight: TensorHeader, state: TensorHeader, name: str, read_data: ReadData | None
) -> int | None:
    """The values of a 4-bit weight: the original shape its quant state's JSON states
    (bitsandbytes `QuantState.as_dict(packed=True)`, `"shape": [out, in]`), checked against
    the packed tensor, [(n + 1) // (2 * itemsize), 1] in any quant storage dtype (two values
    per byte, the last byte half used for an odd n: `quantize_4bit`); None where the JSON
    cannot be read or does not fit."""
    shape = weight.shape
    if len(shape) != 2 or shape[1] != 1 or weight.elements == 0 or read_data is None:
        return None
    if state.dtype != "U8" or not 0 < state.byte_count <= MAX_STATE_BYTES:
        return None
    raw = read_data(name)
    try:
        stated = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    original = stated.get("shape") if isinstance(stated, dict) else None
    if not isinstance(original, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in original
    ):
        return None
    values = math.prod(original)
    itemsize = weight.byte_count // weight.elements
    return values if shape[0] == (values + 1) // (2 * itemsize) else None


def _integer_values(
    method: str,
    config: Mapping[str, Any],
    bits: int | None,
    name: str,
    tensor: TensorHeader,
    tensors: Mapping[str, TensorHeader],
) -> int | None:
    """The values an integer weight holds under the scheme, or None: not a tensor it explains."""
    shape = tensor.shape
    prefix = name.rsplit(".", 1)[0] + "."
    last = name.rsplit(".", 1)[-1]
    if method in ("gptq", "awq") and last == "qweight" and tensor.dtype == "I32":
        scales = tensors.get(prefix + "scales")
        if bits is None or len(shape) != 2 or scales is None or len(scales.shape) != 2:
            return None
        if method == "gptq":
            # [in * bits / 32, out], scales [groups, out].
            if (shape[0] * 32) % bits or scales.shape[1] != shape[1]:
                return None
            return shape[0] * 32 // bits * shape[1]
        version = str(config.get("version", "gemm")).lower()
        if version in ("gemm", "exllama", "ipex"):
            # [in, out * bits / 32], scales [in / group_size, out].
            ok = scales.shape[1] * bits == shape[1] * 32
        elif version == "gemv":
            ok = scales.shape[0] == shape[0]  # [out, in * bits / 32], scales [out, ...]
        else:
            ok = False
        return shape[0] * shape[1] * 32 // bits if ok else None
    if method == "bitsandbytes" and last == "weight" and tensor.dtype == "I8":
        return tensor.elements if prefix + "SCB" in tensors else None
    if method == "compressed-tensors":
        scale = tensors.get(prefix + "weight_scale")
        rows_match = (
            scale is not None and bool(scale.shape) and bool(shape) and scale.shape[0] == shape[0]
        )
        per_element = {"I32": 32 // bits if bits else 0, "U8": 2 if bits == 4 else 0}
        packing = per_element.get(tensor.dtype, 0)
        if last == "weight_packed" and packing and scale is not None and rows_match:
            group = _compressed_group_size(config)
            # Rows padded to whole elements: with a group size, the scales say the row's length.
            if (
                group is not None
                and len(scale.shape) == 2 == len(shape)
                and (scale.shape[1] * group != shape[1] * packing)
            ):
                return None
            return tensor.elements * packing  # I32: 32 / bits values; U8 (NVFP4): two
        if last == "weight" and tensor.dtype == "I8" and rows_match:
            return tensor.elements
    return None


def _group(rows: Iterable[tuple[str, str, int, int | None]]) -> tuple[RoleGroup, ...]:
    sums: dict[tuple[str, str], list[Any]] = {}
    for role, dtype, byte_count, values in rows:
        entry = sums.setdefault((role, dtype), [0, 0, 0])
        entry[0] += 1
        entry[1] += byte_count
        entry[2] = None if values is None or entry[2] is None else entry[2] + values
    groups = [RoleGroup(r, d, n, b, p) for (r, d), (n, b, p) in sums.items()]
    return tuple(sorted(groups, key=lambda g: (-g.bytes, g.role, g.dtype)))
