"""Allocated and reserved peaks: why the difference of two peaks measures no cache.

Each peak is the maximum of its own series; the two maxima need not come from the same
instant, so their difference may be observed at no instant at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """Counters read at one instant, after synchronizing, with no work between the two reads."""

    allocated_bytes: int
    reserved_bytes: int

    @property
    def difference_bytes(self) -> int:
        return self.reserved_bytes - self.allocated_bytes


@dataclass(frozen=True)
class PeaksReport:
    readings: tuple[Reading, ...]

    @property
    def allocated_peak_bytes(self) -> int:
        return max(r.allocated_bytes for r in self.readings)

    @property
    def reserved_peak_bytes(self) -> int:
        return max(r.reserved_bytes for r in self.readings)

    @property
    def difference_of_peaks_bytes(self) -> int:
        return self.reserved_peak_bytes - self.allocated_peak_bytes

    @property
    def differences_at_instants_bytes(self) -> tuple[int, ...]:
        return tuple(r.difference_bytes for r in self.readings)

    @property
    def difference_of_peaks_observed(self) -> bool:
        """Whether any instant shows the difference of the peaks."""
        return self.difference_of_peaks_bytes in self.differences_at_instants_bytes


def two_peaks(readings: Sequence[tuple[int, int]]) -> PeaksReport:
    """Peaks and per-instant differences from (allocated, reserved) byte readings.

    >>> from iteragpu.core.units import bytes_per
    >>> GiB = int(bytes_per("GiB"))
    >>> report = two_peaks([(8 * GiB, 10 * GiB), (6 * GiB, 12 * GiB)])
    >>> report.difference_of_peaks_bytes // GiB
    4
    >>> [d // GiB for d in report.differences_at_instants_bytes]
    [2, 6]
    >>> report.difference_of_peaks_observed
    False
    """
    if not readings:
        raise ValueError("at least one reading is needed")
    parsed = []
    for allocated, reserved in readings:
        if allocated < 0 or reserved < 0:
            raise ValueError("counters cannot be negative")
        if allocated > reserved:
            raise ValueError("allocated bytes cannot exceed reserved bytes at one instant")
        parsed.append(Reading(allocated, reserved))
    return PeaksReport(tuple(parsed))
