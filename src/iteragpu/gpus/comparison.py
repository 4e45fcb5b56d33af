"""The dense-weights estimate beside what a lab run allocated at `model_load`.

Only what the result records is attributed: the per-tensor rounding to the caching allocator's
512-byte blocks (the lab records both the plain and the rounded parameter bytes of its network).
Buffers, allocations the lab did not predict and anything else stay `unexplained_bytes`; the
CUDA context is not in these counters at all, so it explains none of the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from iteragpu.core.units import ceil_bytes
from iteragpu.core.weights import dense_weight_bytes
from iteragpu.gpus.evidence import LabResult, PhaseRecord


@dataclass(frozen=True)
class Comparison:
    parameters: int
    bits: Fraction
    from_result: bool  # the inputs are the ones the lab recorded for its network
    estimated_weights_exact_bytes: Fraction  # parameters x bits / 8, not always whole
    estimated_weights_bytes: int  # rounded up to whole bytes; the difference is taken from it
    model_load_allocated_bytes: int | None  # end of model_load; None when not read or no phase
    difference_bytes: int | None  # measured minus estimated
    difference_share: Fraction | None  # of the estimate
    block_rounding_bytes: int | None  # attributed to 512 B blocks; None when not attributable
    unexplained_bytes: int | None
    model_load_cached_bytes: int | None  # reserved minus allocated at the end of model_load
    cold_forward_unexplained_bytes: int | None  # what the lab attributes to library workspaces


def model_load_phase(result: LabResult) -> PhaseRecord | None:
    return next((p for p in result.phases if p.phase == "model_load"), None)


def compare(result: LabResult, parameters: int | None, bits: Fraction | None) -> Comparison | None:
    """The estimate for `parameters` x `bits` (else the network the lab recorded) beside the
    allocated bytes after `model_load`; None for a result that records no network (a
    Recorder's) when no estimate is given."""
    if result.parameter_count is None or result.element_size_bytes is None:
        if parameters is None or bits is None:
            return None
        count, width, from_result = parameters, bits, False
    else:
        recorded_bits = Fraction(result.element_size_bytes * 8)
        count = result.parameter_count if parameters is None else parameters
        width = recorded_bits if bits is None else bits
        from_result = count == result.parameter_count and width == recorded_bits
    exact = dense_weight_bytes(count, width)
    estimate = ceil_bytes(exact)
    phase = model_load_phase(result)
    measured = None if phase is None else phase.counters["end_allocated_bytes"]
    reserved = None if phase is None else phase.counters["end_reserved_bytes"]
    difference = None if measured is None else measured - estimate
    share = None if difference is None or estimate == 0 else Fraction(difference, estimate)
    # The lab's rounding is of its own tensors: it explains nothing of another model's estimate.
    rounding = None
    rounded = result.predicted_parameter_bytes_rounded_512
    if from_result and estimate == result.predicted_parameter_bytes and rounded is not None:
        rounding = rounded - estimate
    unexplained = None if difference is None else difference - (rounding or 0)
    cached = None if measured is None or reserved is None else reserved - measured
    return Comparison(
        parameters=count,
        bits=width,
        from_result=from_result,
        estimated_weights_exact_bytes=exact,
        estimated_weights_bytes=estimate,
        model_load_allocated_bytes=measured,
        difference_bytes=difference,
        difference_share=share,
        block_rounding_bytes=rounding,
        unexplained_bytes=unexplained,
        model_load_cached_bytes=cached,
        cold_forward_unexplained_bytes=result.cold_forward_unexplained_bytes,
    )
