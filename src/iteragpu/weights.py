"""Dense weights: parameters x bits / 8, plus an explicit reserve in GiB.

"Weights only" is the dense volume; "rough range" adds the reserve the user chose. Neither
counts activations, gradients, optimizer states or a KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from iteragpu.lab.mesure_memoire import dense_weight_bytes
from iteragpu.units import from_unit, gb, gib

# Below this many bits per value a format is a quantized one: its loaders add scales and
# may keep some modules at other precisions, which the uniform division does not count.
QUANTIZED_BELOW_BITS = 16

# Input bounds of the CLI and the sizer: beyond them a figure describes no model. 10^15
# parameters is a thousand times today's largest; a stored value takes at most 64 bits.
MAX_PARAMETERS = 10**15
MAX_BITS = 64
MAX_RESERVE_GIB = 10**6


@dataclass(frozen=True)
class WeightsEstimate:
    """A dense weights estimate with its reserve; all byte figures are exact."""

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
