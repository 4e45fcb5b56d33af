"""What weight files hold, summed per storage format and dtype, from their headers alone.

A tensor is one of four formats:
- `float`: one floating-point value per element (F32, BF16, F8...): its elements are parameters;
- `quantized_blocks`: GGUF's block formats (Q4_K, Q8_0...): the logical elements are parameters,
  the bytes include each block's scales;
- `quantization_metadata`: scales, zero points and indices of a quantized checkpoint, found by
  their names: they are stored, so their bytes count, but they are not parameters;
- `integer`: integer tensors that are not metadata, such as packed int4 weights (eight values in
  one I32 element) or integer buffers. How many values an element packs is a property of the
  quantization scheme, not of the header, so their elements are never counted as parameters as
  such: `parameters` is unknown (None) when a checkpoint has any, unless the folder's
  `quantization_config` states a scheme whose layout explains every one of them
  (`iteragpu.models.quantized`): then `layout` holds each tensor's role and the parameters the
  packing recovers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from iteragpu.core.records import Record

if TYPE_CHECKING:
    from iteragpu.models.quantized import Layout

FLOAT: Final = "float"
QUANTIZED_BLOCKS: Final = "quantized_blocks"
QUANTIZATION_METADATA: Final = "quantization_metadata"
INTEGER: Final = "integer"

# Last name components of the scales, zero points and indices that GPTQ, AWQ, bitsandbytes,
# FP8 (DeepSeek-V3), compressed-tensors and KV-cache scales store beside the weights.
_METADATA_SUFFIXES: Final = frozenset(
    {
        "scales",
        "qzeros",
        "g_idx",
        "weight_scale",
        "weight_scale_inv",
        "weight_scale_2",
        "weight_global_scale",
        "input_scale",
        "input_global_scale",
        "output_scale",
        "weight_zero_point",
        "weight_g_idx",
        "weight_shape",
        "absmax",
        "quant_map",
        "nested_absmax",
        "nested_quant_map",
        "SCB",
        "weight_format",
        "k_scale",
        "v_scale",
    }
)


def is_quantization_metadata(name: str) -> bool:
    """True for a quantization scale, zero point or index, by its name.

    >>> is_quantization_metadata("model.layers.0.mlp.down_proj.weight_scale_inv")
    True
    >>> is_quantization_metadata("model.layers.0.mlp.down_proj.weight")
    False
    """
    last = name.rsplit(".", 1)[-1]
    return last in _METADATA_SUFFIXES or ".quant_state." in name or last.startswith("quant_state")


class TensorGroup(Record):
    """Tensors of one format and dtype: how many, their elements and their bytes."""

    format: str
    dtype: str
    tensors: int
    elements: int
    bytes: int


class WeightsInventory(Record):
    """The tensors of a model's weight files, grouped, with exact byte counts."""

    source: str  # "safetensors" or "gguf"
    files: tuple[str, ...]
    groups: tuple[TensorGroup, ...]
    # The tensors read with the checkpoint's quantization_config, where it has one.
    layout: Layout | None = None

    @property
    def total_bytes(self) -> int:
        """Bytes of tensor data (headers and metadata excluded)."""
        return sum(group.bytes for group in self.groups)

    @property
    def parameters(self) -> int | None:
        """Logical parameters, or None where integer tensors hide how many values they pack
        (and no quantization layout says)."""
        if self.layout is not None:
            return self.layout.parameters
        if any(group.format == INTEGER for group in self.groups):
            return None
        return sum(g.elements for g in self.groups if g.format in (FLOAT, QUANTIZED_BLOCKS))

    @property
    def parameters_unknown_reason(self) -> str | None:
        """Why `parameters` is None (a code of `iteragpu.models.quantized`); None when known."""
        if self.layout is not None:
            return self.layout.reason
        return None if self.parameters is not None else "integer_tensors"

    @property
    def tensors(self) -> int:
        return sum(group.tensors for group in self.groups)


def group_tensors(rows: Iterable[tuple[str, str, int, int]]) -> tuple[TensorGroup, ...]:
    """(format, dtype, elements, bytes) per tensor, summed per (format, dtype), largest first."""
    sums: dict[tuple[str, str], list[int]] = {}
    for fmt, dtype, elements, byte_count in rows:
        entry = sums.setdefault((fmt, dtype), [0, 0, 0])
        entry[0] += 1
        entry[1] += elements
        entry[2] += byte_count
    groups = [TensorGroup(f, d, n, e, b) for (f, d), (n, e, b) in sums.items()]
    return tuple(sorted(groups, key=lambda g: (-g.bytes, g.format, g.dtype)))
