"""Dense weights: parameters x bits / 8, plus an explicit reserve in GiB.

`dense_weight_bytes` is the original of the formula: the lab script keeps a copy (it runs
alone, from the archive), pinned to this one by property tests (tests/test_formula_copies.py).

"Weights only" is the dense volume; "rough range" adds the reserve the user chose. Neither
counts activations, gradients, optimizer states or a KV cache.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from iteragpu.core.units import from_unit, gb, gib

BITS_PER_BYTE = 8

# Below this many bits per value a format is a quantized one: its loaders add scales and
# may keep some modules at other precisions, which the uniform division does not count.
QUANTIZED_BELOW_BITS = 16

# Input bounds of the CLI and the sizer: beyond them a figure describes no model. 10^15
# parameters is a thousand times today's largest; a stored value takes at most 64 bits.
MAX_PARAMETERS = 10**15
MAX_BITS = 64
MAX_RESERVE_GIB = 10**6


def dense_weight_bytes(parameters: int, bits: int | Fraction) -> Fraction:
    """Bytes taken by `parameters` dense values of `bits` bits each (uniform storage).

    >>> dense_weight_bytes(7_000_000_000, 16)
    Fraction(14000000000, 1)
    """
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise ValueError(f"parameters must be a positive whole number, got {parameters!r}")
    bits = Fraction(bits)
    if bits <= 0:
        raise ValueError(f"bits must be positive, got {bits}")
    return parameters * bits / BITS_PER_BYTE


class WeightsEstimate(NamedTuple):
    """A dense weights estimate with its reserve; all byte figures are exact.

    A NamedTuple rather than a dataclass: `iteragpu weights` creates this class at every start,
    and a dataclass costs about a millisecond there (`nox -s bench`).
    """

    parameters: int
    bits: Fraction
    reserve_gib: Fraction

    @property
    def weights_bytes(self) -> Fraction:
        return dense_weight_bytes(self.parameters, self.bits)

    @property
    def weights_gb(self) -> Fraction:
        return gb(self.weights_bytes)

    @property
    def weights_gib(self) -> Fraction:
        return gib(self.weights_bytes)

    @property
    def reserve_bytes(self) -> Fraction:
        return from_unit(self.reserve_gib, "GiB")

    @property
    def total_bytes(self) -> Fraction:
        return self.weights_bytes + self.reserve_bytes

    @property
    def total_gib(self) -> Fraction:
        return gib(self.total_bytes)

    @property
    def quantization_not_counted(self) -> bool:
        """True when quantization scales and modules kept at other precisions are not counted."""
        return self.bits < QUANTIZED_BELOW_BITS


def estimate_weights(
    parameters: int, bits: int | Fraction, reserve_gib: int | Fraction = 0
) -> WeightsEstimate:
    """Weights only and rough range for a dense model.

    >>> e = estimate_weights(7_000_000_000, 16, reserve_gib=4)
    >>> int(e.weights_bytes), round(float(e.total_gib), 2)
    (14000000000, 17.04)
    """
    reserve = Fraction(reserve_gib)
    if reserve < 0:
        raise ValueError(f"reserve cannot be negative, got {reserve}")
    dense_weight_bytes(parameters, bits)  # validates parameters and bits, one-line ValueError
    return WeightsEstimate(parameters=parameters, bits=Fraction(bits), reserve_gib=reserve)
