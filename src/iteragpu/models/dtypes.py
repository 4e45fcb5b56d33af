"""Names of storage dtypes (`--dtype`, `--kv-dtype`, a config's `dtype`) and their bits.

The names are PyTorch's (as configs write them), with the short aliases people type. A quantized
KV cache or checkpoint may add scales that a bare bit width does not count: callers say so.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from iteragpu.models.errors import ModelInputError

DTYPE_BITS: Final[dict[str, int]] = {
    "float64": 64,
    "float32": 32,
    "float16": 16,
    "bfloat16": 16,
    "float8_e4m3fn": 8,
    "float8_e5m2": 8,
    "int8": 8,
    "int4": 4,
}
ALIASES: Final[dict[str, str]] = {
    "fp64": "float64",
    "fp32": "float32",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "fp8": "float8_e4m3fn",
    "fp8_e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
}


def dtype_bits(name: str, what: str = "dtype") -> int:
    """Bits per value of a dtype name (`bfloat16`, `bf16`, `torch.float16`...).

    >>> dtype_bits("torch.bfloat16"), dtype_bits("fp8"), dtype_bits("int4")
    (16, 8, 4)
    """
    key = name.strip().lower().removeprefix("torch.")
    key = ALIASES.get(key, key)
    if key not in DTYPE_BITS:
        raise ModelInputError(
            "unknown {what} {name!r} (known: {known})",
            "unknown_dtype",
            what=what,
            name=name[:40],
            known=", ".join([*DTYPE_BITS, *ALIASES]),
        )
    return DTYPE_BITS[key]


def dtype_bytes(name: str, what: str = "dtype") -> Fraction:
    """Bytes per value of a dtype name, exact (`int4` is half a byte)."""
    return Fraction(dtype_bits(name, what), 8)
