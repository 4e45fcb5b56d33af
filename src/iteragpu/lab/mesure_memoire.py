"""IteraGPU Lab v1: estimate, inspect the environment and measure GPU memory by phase.

`estimate` and `environment` need only the standard library; `measure` needs PyTorch and a GPU.
"""

from __future__ import annotations

from fractions import Fraction

BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30


def dense_weight_bytes(parameters: int, bits: int | Fraction) -> Fraction:
    """Bytes taken by `parameters` dense values of `bits` bits each (uniform storage).

    This is the single source of the weights formula: the `iteragpu` package imports it.

    >>> dense_weight_bytes(7_000_000_000, 16)
    Fraction(14000000000, 1)
    """
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise ValueError(f"parameters must be a positive whole number, got {parameters!r}")
    bits = Fraction(bits)
    if bits <= 0:
        raise ValueError(f"bits must be positive, got {bits}")
    return parameters * bits / 8
