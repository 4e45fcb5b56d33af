#!/usr/bin/env python3
"""IteraGPU Lab v1: estimate, predict, inspect the environment and measure GPU memory by phase.

`estimate`, `predict` and `environment` need only the standard library (this file runs under
`python -I -S`); `measure` needs PyTorch and a CUDA or HIP/ROCm GPU.

    python mesure_memoire.py estimate --parameters 7000000000 --bits 16 --reserve-gib 4
    python mesure_memoire.py predict --batch 1 --context 16 --width 64 --dtype float32
    python mesure_memoire.py environment --device cuda:0
    python mesure_memoire.py measure --device cuda:0 --batch 2 --context 128 --width 1024 \
        --dtype float32 --warmup 3 --repeats 5 --output mesures.json

Counters are stored as raw bytes; a value that was not read is `null`, never 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from types import FrameType
from typing import IO, Any, Literal, NoReturn, NotRequired, Protocol, TypedDict

# Modules that only some commands need (json, signal, unicodedata, platform, subprocess,
# shutil, warnings, importlib, ctypes, threading, secrets) are imported where they are used:
# `estimate` and `predict` should start about as fast as the interpreter (`nox -s bench`).

BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30
BYTES_PER_MIB = 2**20

# The single place where the lab's version lives; lab_archive.py reads it from here.
LAB_VERSION = "v1"
__version__ = "1.1.0"
# 1.1.0 adds predictions, the seed, interrupted phases, SIGTERM and the whole environment;
# result.schema.json still reads 1.0.0 results.
SCHEMA_VERSION = "1.1.0"
TOOL_NAME = "mesure_memoire.py"

# The seed of the network's initialisation and of the synthetic input.
SEED = 0

# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): every request is rounded
# up to a multiple of 512 bytes (kMinBlockSize), so a tensor under 512 B takes 512 B.
ALLOCATOR_BLOCK_BYTES = 512

# Exit codes (also listed in --help and in the lab READMEs).
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_UNAVAILABLE = 2  # bad arguments, PyTorch missing, device not a GPU or not present
EXIT_OUTPUT_EXISTS = 3
EXIT_PHASE_FAILED = 4
EXIT_OUTPUT_ERROR = 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention
EXIT_TERMINATED = 143  # 128 + SIGTERM

EXIT_CODES_HELP = """\
exit codes:
  0    success (estimate and predict printed; environment: the requested device can be
       measured; measure: every phase succeeded and the result file was written)
  1    unexpected internal error (one line on stderr, no traceback)
  2    bad arguments, or PyTorch missing, or the device is not a GPU (e.g. cpu),
       or no such GPU; for measure nothing is written
  3    measure: the --output file already exists (it is left untouched)
  4    measure: a phase failed (out-of-memory included); the result file is written
       with the failing phase, the error message and the last readings
  5    measure: the result file could not be created or written
  130  interrupted (SIGINT, Ctrl-C); measure writes the partial result, with the
       interrupted phase and its last readings, when it can
  143  terminated (SIGTERM); handled like 130, with its own code

numbers: ASCII digits 0-9, '_' only between digits, an optional decimal point and
exponent (7e9); at most 50 digits and an exponent within -50..50.
--parameters also takes K, M, B (or G) and T: 7B = 7e9, 70M = 7e7.
"""

DTYPE_SIZES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}

PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")

NOT_COUNTED = ["activations", "gradients", "kv_cache", "optimizer_states"]
NOT_COUNTED_QUANTIZED = [
    "quantization_scales_and_metadata",
    "modules_kept_at_another_precision",
]

# Environment variables read by PyTorch's allocators (PYTORCH_ALLOC_CONF; the older
# PYTORCH_CUDA_ALLOC_CONF and PYTORCH_HIP_ALLOC_CONF), by CUDA's module loader, and the switch
# that bypasses the caching allocator altogether.
ALLOCATOR_ENV_VARS = (
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "CUDA_MODULE_LOADING",
)
NO_CACHING_VAR = "PYTORCH_NO_CUDA_MEMORY_CACHING"
# The size of the workspaces cuBLAS and cuBLASLt take through PyTorch's allocator.
BLAS_WORKSPACE_ENV_VARS = ("CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE")
# Which GPUs a process sees, and in which order (cuda:N is an index into this view).
VISIBLE_DEVICE_ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)

NOT_PREDICTED = [
    "The workspace that cuBLAS or cuBLASLt takes through PyTorch's allocator at the first "
    "matrix multiply, kept for the later phases: about 8 MiB before Hopper, 32 MiB on Hopper, "
    "more with cuBLASLt, 0 where cuBLAS keeps its own; it depends on the GPU and the versions "
    "(CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE).",
    "Temporary tensors inside a forward pass (they set the peaks, not the end levels).",
    "Reserved bytes: the allocator's segments (2 MiB for small blocks, larger ones for big "
    "blocks) depend on its settings and history.",
    "The CUDA context, kernels and other memory outside PyTorch's allocator.",
]


def dense_weight_bytes(parameters: int, bits: int | Fraction) -> Fraction:
    """Bytes taken by `parameters` dense values of `bits` bits each (uniform storage).

    A copy of `iteragpu.core.weights.dense_weight_bytes`, so that this script runs alone;
    tests/test_formula_copies.py pins it to that original.

    >>> dense_weight_bytes(7_000_000_000, 16)
    Fraction(14000000000, 1)
    """
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise ValueError(f"parameters must be a positive whole number, got {parameters!r}")
    bits = Fraction(bits)
    if bits <= 0:
        raise ValueError(f"bits must be positive, got {bits}")
    return parameters * bits / 8


# ---------------------------------------------------------------------------------------------
# Numbers: the grammar shared with the CLI and the sizer
# ---------------------------------------------------------------------------------------------

MAX_DIGITS = 50
MAX_EXPONENT = 50

_GROUPED_DIGITS = r"[0-9]+(?:_[0-9]+)*"
_NUMBER_RE = re.compile(
    rf"(?P<sign>[+-]?)(?P<whole>{_GROUPED_DIGITS})?"
    rf"(?:\.(?P<fraction>{_GROUPED_DIGITS})?)?"
    rf"(?:[eE](?P<exponent>[+-]?{_GROUPED_DIGITS}))?"
)
_COUNT_SUFFIXES = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}


class NumberError(ValueError):
    """A number the shared grammar refuses; the message is one line."""


def _non_ascii_digit(text: str) -> str | None:
    for char in text:
        if char.isdigit() and not ("0" <= char <= "9"):
            import unicodedata

            name = unicodedata.name(char, "unnamed character")
            return f"U+{ord(char):04X} {name}"
    return None


def parse_number(text: str) -> Fraction:
    """The exact value of a number written in the shared grammar; NumberError otherwise.

    >>> parse_number("7e9"), parse_number("1_000.5"), parse_number("+.25")
    (Fraction(7000000000, 1), Fraction(2001, 2), Fraction(1, 4))
    """
    value = text.strip()
    digit = _non_ascii_digit(value)
    if digit is not None:
        raise NumberError(f"{digit} is not an ASCII digit: write numbers with 0-9")
    match = _NUMBER_RE.fullmatch(value)
    if match is None or (match["whole"] is None and match["fraction"] is None):
        raise NumberError(f"not a number: {text!r} (expected e.g. 16, 4.5, 7e9 or 1_000)")
    whole = (match["whole"] or "").replace("_", "")
    fraction = (match["fraction"] or "").replace("_", "")
    # Every digit counts, leading zeros included, as in the CLI (iteragpu.core.numbers).
    if len(whole + fraction) > MAX_DIGITS:
        raise NumberError(f"too many digits in {text[:20]!r}...: at most {MAX_DIGITS} digits")
    exponent_text = (match["exponent"] or "0").replace("_", "")
    exponent_digits = exponent_text.lstrip("+-").lstrip("0") or "0"
    # Checked on its digits first, so that a 5,000-digit exponent never reaches int().
    if len(exponent_digits) > 2 or int(exponent_digits) > MAX_EXPONENT:
        raise NumberError(
            f"exponent out of range in {text[:20]!r}: it must lie within "
            f"-{MAX_EXPONENT}..{MAX_EXPONENT}"
        )
    exponent = -int(exponent_digits) if exponent_text.startswith("-") else int(exponent_digits)
    magnitude = Fraction(int(whole + fraction or "0")) * Fraction(10) ** (exponent - len(fraction))
    return -magnitude if match["sign"] == "-" else magnitude


def parse_whole(text: str, *, minimum: int, maximum: int, suffixes: bool = False) -> int:
    """A whole number in [minimum, maximum]; with `suffixes`, K, M, B (or G) and T scale it.

    >>> parse_whole("7B", minimum=1, maximum=10**15, suffixes=True)
    7000000000
    """
    number = text.strip()
    scale = 1
    if suffixes and number[-1:].upper() in _COUNT_SUFFIXES:
        scale = _COUNT_SUFFIXES[number[-1].upper()]
        number = number[:-1].rstrip()
    value = parse_number(number) * scale
    if value < 0:
        raise NumberError(f"cannot be negative, got {text!r}")
    if value.denominator != 1:
        raise NumberError(f"must be a whole number, got {text!r}")
    if value < minimum:
        raise NumberError(f"must be at least {minimum}, got {text!r}")
    if value > maximum:
        raise NumberError(f"must be at most {maximum:,}, got {text!r}")
    return int(value)


def parse_decimal(text: str, *, maximum: int, allow_zero: bool) -> Fraction:
    """A positive (or, with `allow_zero`, non-negative) exact number up to `maximum`."""
    value = parse_number(text)
    if value < 0:
        raise NumberError(f"cannot be negative, got {text!r}")
    if value == 0 and not allow_zero:
        raise NumberError(f"must be positive, got {text!r}")
    if value > maximum:
        raise NumberError(f"must be at most {maximum:,}, got {text!r}")
    return value


# ---------------------------------------------------------------------------------------------
# Exact arithmetic and formatting (estimate)
# ---------------------------------------------------------------------------------------------


def ceil_fraction(value: Fraction) -> int:
    """Smallest whole number >= value.

    >>> ceil_fraction(Fraction(3, 2))
    2
    """
    return -((-value.numerator) // value.denominator)


def format_decimal(value: Fraction, places: int = 2) -> str:
    """Round half up to `places` decimals, then drop trailing zeros.

    >>> format_decimal(Fraction(14_000_000_000, 2**30))
    '13.04'
    >>> format_decimal(Fraction(14))
    '14'
    """
    scale = 10**places
    scaled = value * scale
    sign = "-" if scaled < 0 else ""
    scaled = abs(scaled)
    rounded = (scaled.numerator * 2 + scaled.denominator) // (2 * scaled.denominator)
    whole, frac = divmod(rounded, scale)
    text = f"{whole}.{frac:0{places}d}".rstrip("0").rstrip(".") if places else str(whole)
    return sign + text if rounded else text


def exact_decimal_text(value: Fraction) -> str:
    """The exact decimal expansion of a value whose denominator is 2^a * 5^b.

    Bytes divided by 10^9 or 2^30 always terminate, so the JSON can carry them exactly.

    >>> exact_decimal_text(Fraction(14_000_000_000, 2**30))
    '13.03851604461669921875'
    """
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    if denominator != 1:
        raise ValueError(f"{value} has no finite decimal expansion")
    places = max(twos, fives)
    scaled = abs(value.numerator) * (10**places // value.denominator)
    whole, frac = divmod(scaled, 10**places)
    text = str(whole) + (f".{frac:0{places}d}".rstrip("0").rstrip(".") if places else "")
    return "-" + text if value < 0 else text


def format_bytes(value: int) -> str:
    """Raw bytes with thousands separators.

    >>> format_bytes(14_000_000_000)
    '14,000,000,000 B'
    """
    return f"{value:,} B"


def estimate(parameters: int, bits: int | Fraction, reserve_gib: Fraction) -> dict[str, Any]:
    """Weights of a dense set of parameters plus an assumed reserve; GB and GiB never mixed.

    In the JSON, `*_bytes` are integers (rounded up when the exact value is not whole) and the
    `*_gb` / `*_gib` strings are exact decimals; the text report rounds them to 2 places.
    """
    if reserve_gib < 0:
        raise ValueError(f"reserve must be zero or positive, got {reserve_gib}")
    exact = dense_weight_bytes(parameters, bits)
    bits = Fraction(bits)
    reserve_bytes_exact = reserve_gib * BYTES_PER_GIB
    total_exact = exact + reserve_bytes_exact
    not_counted = list(NOT_COUNTED)
    notes = [
        "Weights only, uniform dense storage: activations, gradients, KV cache and optimizer "
        "states are not counted.",
        "The reserve is an assumption you choose; the total is a preparation hypothesis, "
        "not a proof that a workload fits.",
    ]
    if bits < 16:
        not_counted += NOT_COUNTED_QUANTIZED
        notes.append(
            "Below 16 bits, a real quantized load can add scales and other metadata and keep "
            "some modules at another precision; neither is counted."
        )
    return {
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "lab_version": LAB_VERSION,
        "command": "estimate",
        "parameters": parameters,
        "bits": exact_decimal_text(bits),
        "weights_bytes": ceil_fraction(exact),
        "weights_bytes_exact": exact_decimal_text(exact),
        "weights_gb": exact_decimal_text(exact / BYTES_PER_GB),
        "weights_gib": exact_decimal_text(exact / BYTES_PER_GIB),
        "reserve_gib": exact_decimal_text(reserve_gib),
        "reserve_bytes": ceil_fraction(reserve_bytes_exact),
        "total_gib": exact_decimal_text(total_exact / BYTES_PER_GIB),
        "total_bytes": ceil_fraction(total_exact),
        "bytes_per_gb": BYTES_PER_GB,
        "bytes_per_gib": BYTES_PER_GIB,
        "rounding": "*_gb and *_gib are exact decimals; *_bytes are rounded up to whole bytes; "
        "the text report rounds decimals half up to 2 places",
        "not_counted": not_counted,
        "notes": notes,
    }


_NOT_COUNTED_TEXT = {
    "activations": "activations",
    "gradients": "gradients",
    "kv_cache": "KV cache",
    "optimizer_states": "optimizer states",
    "quantization_scales_and_metadata": "quantization scales and metadata",
    "modules_kept_at_another_precision": "modules kept at another precision",
}


def format_estimate_text(result: dict[str, Any]) -> str:
    """The `estimate` report as plain ASCII text (the notebook prints the same lines)."""
    exact = Fraction(result["weights_bytes_exact"])
    total = Fraction(result["total_gib"])
    weights_line = format_bytes(result["weights_bytes"])
    if exact != result["weights_bytes"]:
        weights_line += f" (rounded up from {exact} B)"
    lines = [
        f"IteraGPU Lab {LAB_VERSION} - dense weights estimate (weights only)",
        f"parameters:       {result['parameters']:,}",
        f"bits per value:   {format_decimal(Fraction(result['bits']), 6)}",
        f"weights:          {weights_line}",
        f"weights (GB):     {format_decimal(exact / BYTES_PER_GB)} GB (1 GB = {BYTES_PER_GB:,} B)",
        f"weights (GiB):    {format_decimal(exact / BYTES_PER_GIB)} GiB "
        f"(1 GiB = {BYTES_PER_GIB:,} B)",
        f"reserve (GiB):    {format_decimal(Fraction(result['reserve_gib']), 6)} GiB (assumed)",
        f"total (GiB):      {format_decimal(total)} GiB (weights + reserve, "
        f"{format_bytes(result['total_bytes'])})",
        "not counted:      " + ", ".join(_NOT_COUNTED_TEXT[n] for n in result["not_counted"]),
    ]
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The small original dense network, and what the allocator will show for it (no PyTorch)
# ---------------------------------------------------------------------------------------------


def network_parameter_shapes(width: int) -> list[tuple[str, tuple[int, ...]]]:
    """Parameter tensors of the lab network: LayerNorm -> Linear(w, 4w) -> GELU -> Linear(4w, w).

    >>> network_parameter_shapes(2)
    [('norm.weight', (2,)), ('norm.bias', (2,)), ('up.weight', (8, 2)), ('up.bias', (8,)), \
('down.weight', (2, 8)), ('down.bias', (2,))]
    """
    hidden = 4 * width
    return [
        ("norm.weight", (width,)),
        ("norm.bias", (width,)),
        ("up.weight", (hidden, width)),
        ("up.bias", (hidden,)),
        ("down.weight", (width, hidden)),
        ("down.bias", (width,)),
    ]


def round_up_to_block(nbytes: int, block: int = ALLOCATOR_BLOCK_BYTES) -> int:
    """Round one allocation up to the caching allocator's block size.

    >>> round_up_to_block(1), round_up_to_block(512), round_up_to_block(513)
    (512, 512, 1024)
    """
    return -(-nbytes // block) * block


class TensorPrediction(TypedDict):
    name: str
    shape: list[int]
    numel: int
    element_size_bytes: int
    raw_bytes: int
    allocated_bytes: int  # raw_bytes rounded up to the allocator's 512-byte blocks
    rounding_bytes: int


class AllocationStep(TypedDict):
    """The tensors one step adds, and the allocated level the allocator will then show."""

    tensors: list[TensorPrediction]
    raw_bytes: int
    rounding_bytes: int
    added_bytes: int
    allocated_bytes: int  # cumulative, since the process started


class Prediction(TypedDict):
    tool: str
    tool_version: str
    lab_version: str
    command: str
    dimensions: dict[str, int]
    dtype: str
    element_size_bytes: int
    allocator: dict[str, Any]
    phases: dict[str, AllocationStep]
    kept_output: AllocationStep
    weights_estimate: dict[str, Any]
    not_predicted: list[str]


def _tensor(name: str, shape: tuple[int, ...], element_size: int) -> TensorPrediction:
    numel = 1
    for dim in shape:
        numel *= dim
    raw = numel * element_size
    allocated = round_up_to_block(raw)
    return {
        "name": name,
        "shape": list(shape),
        "numel": numel,
        "element_size_bytes": element_size,
        "raw_bytes": raw,
        "allocated_bytes": allocated,
        "rounding_bytes": allocated - raw,
    }


def _step(tensors: list[TensorPrediction], before: int) -> AllocationStep:
    raw = sum(t["raw_bytes"] for t in tensors)
    added = sum(t["allocated_bytes"] for t in tensors)
    return {
        "tensors": tensors,
        "raw_bytes": raw,
        "rounding_bytes": added - raw,
        "added_bytes": added,
        "allocated_bytes": before + added,
    }


def predict(batch: int, context: int, width: int, dtype: str) -> Prediction:
    """Allocated bytes that PyTorch's default caching allocator shows after `model_load` and
    `inputs` in a fresh process: each tensor the protocol creates, rounded up to 512 B.

    >>> p = predict(1, 16, 64, "float32")
    >>> p["phases"]["model_load"]["allocated_bytes"], p["phases"]["inputs"]["added_bytes"]
    (133632, 4096)
    """
    element_size = DTYPE_SIZES[dtype]
    parameters = [_tensor(n, s, element_size) for n, s in network_parameter_shapes(width)]
    model_load = _step(parameters, 0)
    inputs = _step(
        [_tensor("inputs", (batch, context, width), element_size)], model_load["allocated_bytes"]
    )
    # The protocol keeps the last forward output alive between phases.
    output = _step(
        [_tensor("output", (batch, context, width), element_size)], inputs["allocated_bytes"]
    )
    parameter_count = sum(t["numel"] for t in parameters)
    weights = dense_weight_bytes(parameter_count, 8 * element_size)
    return {
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "lab_version": LAB_VERSION,
        "command": "predict",
        "dimensions": {"batch": batch, "context": context, "width": width},
        "dtype": dtype,
        "element_size_bytes": element_size,
        "allocator": {
            "backend": "native",
            "block_bytes": ALLOCATOR_BLOCK_BYTES,
            "rule": f"each tensor is rounded up to a multiple of {ALLOCATOR_BLOCK_BYTES} B; "
            f"a tensor under {ALLOCATOR_BLOCK_BYTES} B takes {ALLOCATOR_BLOCK_BYTES} B "
            "(PyTorch's caching allocator without roundup_power2_divisions)",
        },
        "phases": {"model_load": model_load, "inputs": inputs},
        "kept_output": output,
        "weights_estimate": {
            "parameters": parameter_count,
            "bits": 8 * element_size,
            "weights_bytes": ceil_fraction(weights),
        },
        "not_predicted": list(NOT_PREDICTED),
    }


def format_prediction_text(prediction: Prediction) -> str:
    """The `predict` report as plain ASCII text."""
    dims = prediction["dimensions"]
    lines = [
        f"IteraGPU Lab {LAB_VERSION} - allocated bytes predicted for PyTorch's caching allocator",
        f"input:            batch {dims['batch']}, context {dims['context']}, width "
        f"{dims['width']}, {prediction['dtype']} ({prediction['element_size_bytes']} B per value)",
        f"rule:             {prediction['allocator']['rule']}",
    ]
    for name, step in prediction["phases"].items():
        lines.append(
            f"{name + ':':<17} {format_bytes(step['allocated_bytes'])} allocated at the end "
            f"(+{format_bytes(step['added_bytes'])}: raw {format_bytes(step['raw_bytes'])} + "
            f"{format_bytes(step['rounding_bytes'])} rounding)"
        )
        for t in step["tensors"]:
            shape = "x".join(str(d) for d in t["shape"])
            lines.append(
                f"  {t['name']:<15} {shape:>14}  {format_bytes(t['raw_bytes']):>16} -> "
                f"{format_bytes(t['allocated_bytes'])}"
            )
    estimate_check = prediction["weights_estimate"]
    lines.append(
        f"estimate check:   {estimate_check['parameters']:,} parameters x "
        f"{estimate_check['bits']} bits = {format_bytes(estimate_check['weights_bytes'])} raw"
    )
    lines += [f"not predicted:    {item}" for item in prediction["not_predicted"]]
    return "\n".join(lines) + "\n"


def predict_network(width: int, dtype: str, batch: int, context: int) -> dict[str, Any]:
    """The result's `network` block (kept from schema 1.0.0): parameter and input bytes."""
    prediction = predict(batch, context, width, dtype)
    parameters = prediction["phases"]["model_load"]
    inputs = prediction["phases"]["inputs"]
    return {
        "architecture": "LayerNorm(width) -> Linear(width, 4*width) -> GELU -> "
        "Linear(4*width, width), applied to a synthetic (batch, context, width) tensor",
        "parameter_tensors": [
            {"name": t["name"], "shape": t["shape"], "numel": t["numel"]}
            for t in parameters["tensors"]
        ],
        "parameter_count": prediction["weights_estimate"]["parameters"],
        "element_size_bytes": prediction["element_size_bytes"],
        "predicted_parameter_bytes": parameters["raw_bytes"],
        "predicted_parameter_bytes_rounded_512": parameters["added_bytes"],
        "predicted_input_bytes": inputs["raw_bytes"],
        "predicted_input_bytes_rounded_512": inputs["added_bytes"],
        "allocated_after_model_load_bytes": None,
    }


# ---------------------------------------------------------------------------------------------
# The measurement protocol (testable without a GPU: counters and workload are injected)
# ---------------------------------------------------------------------------------------------


class CounterSource(Protocol):
    """Device synchronisation and memory counters for ONE device (raw bytes)."""

    def synchronize(self) -> None: ...
    def memory_allocated(self) -> int: ...
    def memory_reserved(self) -> int: ...
    def max_memory_allocated(self) -> int: ...
    def max_memory_reserved(self) -> int: ...
    def reset_peak_memory_stats(self) -> None: ...


class Workload(Protocol):
    """What each phase runs."""

    def load_model(self) -> None: ...
    def make_inputs(self) -> None: ...
    def forward(self) -> None: ...


class TorchCounterSource:
    """The real counter source: torch.cuda functions bound to one device."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._cuda = torch.cuda
        self._device = device

    def synchronize(self) -> None:
        self._cuda.synchronize(self._device)

    def memory_allocated(self) -> int:
        return int(self._cuda.memory_allocated(self._device))

    def memory_reserved(self) -> int:
        return int(self._cuda.memory_reserved(self._device))

    def max_memory_allocated(self) -> int:
        return int(self._cuda.max_memory_allocated(self._device))

    def max_memory_reserved(self) -> int:
        return int(self._cuda.max_memory_reserved(self._device))

    def reset_peak_memory_stats(self) -> None:
        self._cuda.reset_peak_memory_stats(self._device)


class CountersUnavailable(RuntimeError):
    """The allocator's counters mean nothing here (e.g. its cache is bypassed)."""


class UnreadableCounters:
    """Synchronises the device but refuses every counter, so each one is stored as null.

    With PYTORCH_NO_CUDA_MEMORY_CACHING set, PyTorch bypasses its caching allocator and the
    counters read 0 whatever is allocated: a 0 that must not be mistaken for a reading.
    """

    def __init__(self, source: CounterSource, reason: str) -> None:
        self._source = source
        self.reason = reason

    def synchronize(self) -> None:
        self._source.synchronize()

    def _refuse(self) -> int:
        raise CountersUnavailable(self.reason)

    def memory_allocated(self) -> int:
        return self._refuse()

    def memory_reserved(self) -> int:
        return self._refuse()

    def max_memory_allocated(self) -> int:
        return self._refuse()

    def max_memory_reserved(self) -> int:
        return self._refuse()

    def reset_peak_memory_stats(self) -> None:
        self._source.reset_peak_memory_stats()


def build_torch_network(torch: Any, width: int, device: Any, dtype: Any) -> Any:
    """The lab network; its parameters follow network_parameter_shapes(width)."""
    from collections import OrderedDict

    nn = torch.nn
    hidden = 4 * width
    kw = {"device": device, "dtype": dtype}
    return nn.Sequential(
        OrderedDict(
            [
                ("norm", nn.LayerNorm(width, **kw)),
                ("up", nn.Linear(width, hidden, **kw)),
                ("act", nn.GELU()),
                ("down", nn.Linear(hidden, width, **kw)),
            ]
        )
    ).eval()


class TorchWorkload:
    """The real workload: the small dense network on a synthetic input, seeded."""

    def __init__(
        self, torch: Any, device: Any, batch: int, context: int, width: int, dtype: str
    ) -> None:
        self._torch = torch
        self._device = device
        self._shape = (batch, context, width)
        self._width = width
        self._dtype = getattr(torch, dtype)
        self.model: Any = None
        self.inputs: Any = None
        self.output: Any = None

    def load_model(self) -> None:
        self._torch.manual_seed(SEED)
        self.model = build_torch_network(self._torch, self._width, self._device, self._dtype)

    def make_inputs(self) -> None:
        generator = self._torch.Generator(device=self._device).manual_seed(SEED)
        self.inputs = self._torch.randn(
            self._shape, generator=generator, device=self._device, dtype=self._dtype
        )

    def forward(self) -> None:
        with self._torch.inference_mode():
            # The previous output stays alive until the new one replaces it.
            self.output = self.model(self.inputs)


CounterKey = Literal[
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
]
COUNTER_KEYS: tuple[CounterKey, ...] = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)


class PhaseError(TypedDict):
    step: str
    type: str
    message: str
    out_of_memory: bool
    # allocator | cublas | cuda (schema 1.1.0); null when not an out-of-memory error
    out_of_memory_kind: NotRequired[str | None]


class PhasePrediction(TypedDict):
    start_allocated_bytes: int
    end_allocated_bytes: int
    start_allocated_difference_bytes: int | None  # measured - predicted; null if not read
    end_allocated_difference_bytes: int | None


class PhaseRecord(TypedDict):
    phase: str
    repeat: int | None
    forward_passes: int
    status: str  # ok | failed | interrupted
    peak_reset: bool
    start_allocated_bytes: int | None
    start_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    end_allocated_bytes: int | None
    end_reserved_bytes: int | None
    duration_ns: int | None
    error: PhaseError | None
    read_errors: dict[str, str]
    prediction: NotRequired[PhasePrediction]


class OutcomeError(TypedDict):
    type: str
    message: str


class Outcome(TypedDict):
    status: str  # ok | failed | interrupted
    exit_code: int
    failed_phase: str | None
    failed_repeat: int | None
    error: OutcomeError | None
    complete_readings: bool


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (SIGINT) but with its own exit code."""


# Exit code and message of each interrupt, by exception type name (as phase records store it).
INTERRUPTS = {
    "KeyboardInterrupt": (EXIT_INTERRUPTED, "interrupted by the user (SIGINT, Ctrl-C)"),
    "Terminated": (EXIT_TERMINATED, "terminated by SIGTERM"),
}


def _interrupt(name: str) -> tuple[int, str]:
    # Any other KeyboardInterrupt (a library's subclass) counts as SIGINT.
    return INTERRUPTS.get(name, INTERRUPTS["KeyboardInterrupt"])


def interrupt_exit_code(exc: BaseException) -> int:
    return _interrupt(type(exc).__name__)[0]


def _interrupt_message(exc: BaseException) -> str:
    return _interrupt(type(exc).__name__)[1]


def _describe_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:2000] + "..."


def out_of_memory_kind(exc: BaseException) -> str | None:
    """Which part of the GPU stack ran out of memory, or None when `exc` is something else.

    - `allocator`: PyTorch's caching allocator raised torch.OutOfMemoryError. Before raising,
      it has already released its unused cached blocks, so end_reserved is read after that.
    - `cublas`: cuBLAS (hipBLAS) could not allocate its workspace or handle.
    - `cuda`: another CUDA (HIP) call reported that memory ran out.
    A host MemoryError is not a GPU out-of-memory.
    """
    text = str(exc)
    if "CUBLAS_STATUS_ALLOC_FAILED" in text or "HIPBLAS_STATUS_ALLOC_FAILED" in text:
        return "cublas"
    if type(exc).__name__ == "OutOfMemoryError":
        return "allocator"
    if isinstance(exc, MemoryError):
        return None
    return "cuda" if "out of memory" in text.lower() else None


def _new_record(phase: str, repeat: int | None, forward_passes: int) -> PhaseRecord:
    return {
        "phase": phase,
        "repeat": repeat,
        "forward_passes": forward_passes,
        "status": "ok",
        "peak_reset": False,
        "start_allocated_bytes": None,
        "start_reserved_bytes": None,
        "peak_allocated_bytes": None,
        "peak_reserved_bytes": None,
        "end_allocated_bytes": None,
        "end_reserved_bytes": None,
        "duration_ns": None,
        "error": None,
        "read_errors": {},
    }


def _fail(record: PhaseRecord, step: str, exc: BaseException) -> None:
    if record["error"] is None:  # keep the first error: the others follow from it
        kind = out_of_memory_kind(exc)
        record["status"] = "failed"
        record["error"] = {
            "step": step,
            "type": type(exc).__name__,
            "message": _describe_error(exc),
            "out_of_memory": kind is not None,
            "out_of_memory_kind": kind,
        }


def _read(record: PhaseRecord, key: CounterKey, counter: Callable[[], int]) -> None:
    try:
        record[key] = int(counter())
    except Exception as exc:
        record["read_errors"][key] = f"{type(exc).__name__}: {_describe_error(exc)}"


def _read_end(record: PhaseRecord, source: CounterSource) -> None:
    if record["peak_reset"]:
        # Peaks are only meaningful for this phase when they were reset at its start.
        _read(record, "peak_allocated_bytes", source.max_memory_allocated)
        _read(record, "peak_reserved_bytes", source.max_memory_reserved)
    _read(record, "end_allocated_bytes", source.memory_allocated)
    _read(record, "end_reserved_bytes", source.memory_reserved)


def _close_interrupted(record: PhaseRecord, source: CounterSource) -> None:
    """After an interrupt: synchronize, then take the final readings that are still missing."""
    final: list[tuple[CounterKey, Callable[[], int]]] = []
    if record["peak_reset"]:
        final += [
            ("peak_allocated_bytes", source.max_memory_allocated),
            ("peak_reserved_bytes", source.max_memory_reserved),
        ]
    final += [
        ("end_allocated_bytes", source.memory_allocated),
        ("end_reserved_bytes", source.memory_reserved),
    ]
    try:
        with contextlib.suppress(Exception):
            source.synchronize()
        for key, counter in final:
            if record[key] is None:
                _read(record, key, counter)
    except KeyboardInterrupt:
        pass  # a second interrupt: keep what was read


def measure_phase(
    phase: str,
    source: CounterSource,
    action: Callable[[], None],
    *,
    repeat: int | None = None,
    forward_passes: int = 0,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> PhaseRecord:
    """Run one phase under the guide's protocol and return its record.

    1. synchronize the device; 2. read start allocated and reserved; 3. reset the peaks;
    4. run the phase; 5. synchronize, read both absolute peaks and both end levels, record
    success or the error; 6. keep raw bytes, `None` (JSON null) for anything not read.
    An interrupt (SIGINT or SIGTERM) keeps the phase, as `interrupted`, with its final readings.
    """
    record = _new_record(phase, repeat, forward_passes)
    step = "synchronize_before"
    try:
        try:
            source.synchronize()
        except Exception as exc:
            _fail(record, step, exc)
        step = "read_start"
        _read(record, "start_allocated_bytes", source.memory_allocated)
        _read(record, "start_reserved_bytes", source.memory_reserved)
        if record["error"] is None:
            step = "reset_peak"
            try:
                source.reset_peak_memory_stats()
                record["peak_reset"] = True
            except Exception as exc:
                _fail(record, step, exc)
        if record["error"] is None:
            started = clock()
            step = "run"
            try:
                action()
            except Exception as exc:
                _fail(record, step, exc)
            step = "synchronize_after"
            try:
                source.synchronize()
            except Exception as exc:
                _fail(record, step, exc)
            record["duration_ns"] = clock() - started
        step = "read_end"
        _read_end(record, source)
    except KeyboardInterrupt as exc:
        record["status"] = "interrupted"
        record["error"] = {
            "step": step,
            "type": type(exc).__name__,
            "message": _interrupt_message(exc),
            "out_of_memory": False,
            "out_of_memory_kind": None,
        }
        _close_interrupted(record, source)
    return record


def _outcome(
    status: str = "ok",
    exit_code: int = EXIT_OK,
    phase: str | None = None,
    repeat: int | None = None,
    error: OutcomeError | None = None,
    complete_readings: bool = True,
) -> Outcome:
    return {
        "status": status,
        "exit_code": exit_code,
        "failed_phase": phase,
        "failed_repeat": repeat,
        "error": error,
        "complete_readings": complete_readings,
    }


def _interrupted(exc_type: str, phase: str, repeat: int | None, complete_readings: bool) -> Outcome:
    code, message = _interrupt(exc_type)
    error: OutcomeError = {"type": exc_type, "message": message}
    return _outcome("interrupted", code, phase, repeat, error, complete_readings)


def run_protocol(
    source: CounterSource,
    workload: Workload,
    *,
    warmup: int,
    repeats: int,
    progress: Callable[[str], None] = lambda line: None,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> tuple[list[PhaseRecord], Outcome]:
    """All phases in order; stops at the first failed or interrupted phase."""

    def warm_up() -> None:
        for _ in range(warmup):
            workload.forward()

    plan: list[tuple[str, Callable[[], None], int | None, int]] = [
        ("model_load", workload.load_model, None, 0),
        ("inputs", workload.make_inputs, None, 0),
        ("cold_forward", workload.forward, None, 1),
        ("warmup", warm_up, None, warmup),
    ]
    plan += [("warm_forward", workload.forward, i, 1) for i in range(1, repeats + 1)]
    phases: list[PhaseRecord] = []
    outcome = _outcome()
    try:
        for index, (name, action, repeat, passes) in enumerate(plan, start=1):
            label = name if repeat is None else f"{name} {repeat}/{repeats}"
            record = measure_phase(
                name, source, action, repeat=repeat, forward_passes=passes, clock=clock
            )
            phases.append(record)
            if record["read_errors"]:
                outcome["complete_readings"] = False
            err = record["error"]
            if record["status"] == "interrupted" and err is not None:
                outcome = _interrupted(err["type"], name, repeat, outcome["complete_readings"])
                progress(f"[{index}/{len(plan)}] {label}: {err['message']}")
                break
            if record["status"] != "ok" and err is not None:
                outcome = _outcome(
                    "failed",
                    EXIT_PHASE_FAILED,
                    name,
                    repeat,
                    {"type": err["type"], "message": err["message"]},
                    outcome["complete_readings"],
                )
                progress(f"[{index}/{len(plan)}] {label}: FAILED ({err['type']}: {err['message']})")
                break
            peak = record["peak_allocated_bytes"]
            duration = record["duration_ns"]
            progress(
                f"[{index}/{len(plan)}] {label}: ok, "
                f"{'null' if duration is None else f'{duration / 1e6:.3f}'} ms, peak allocated "
                f"{'null' if peak is None else f'{peak:,}'} B"
            )
    except KeyboardInterrupt as exc:  # between two phases: the phases read so far are kept
        stopped = plan[min(len(phases), len(plan) - 1)]  # the phase that did not start
        outcome = _interrupted(
            type(exc).__name__, stopped[0], stopped[2], outcome["complete_readings"]
        )
    return phases, outcome


def phase_predictions(
    prediction: Prediction, phases: Sequence[PhaseRecord]
) -> dict[str, int | None]:
    """Attach to each phase the allocated levels predicted at its start and end (in place).

    Returns the summary stored under the result's `prediction`: in particular the bytes that
    cold_forward added beyond the prediction (library workspaces such as cuBLAS's, which the
    prediction leaves out, not the model).
    """
    model = prediction["phases"]["model_load"]["allocated_bytes"]
    inputs = prediction["phases"]["inputs"]["allocated_bytes"]
    kept = prediction["kept_output"]["allocated_bytes"]
    levels = {
        "model_load": (0, model),
        "inputs": (model, inputs),
        "cold_forward": (inputs, kept),
        "warmup": (kept, kept),
        "warm_forward": (kept, kept),
    }
    unexplained: int | None = None
    for record in phases:
        start, end = levels[record["phase"]]
        measured_start, measured_end = (
            record["start_allocated_bytes"],
            record["end_allocated_bytes"],
        )
        record["prediction"] = {
            "start_allocated_bytes": start,
            "end_allocated_bytes": end,
            "start_allocated_difference_bytes": None
            if measured_start is None
            else measured_start - start,
            "end_allocated_difference_bytes": None if measured_end is None else measured_end - end,
        }
        if (
            record["phase"] == "cold_forward"
            and measured_start is not None
            and measured_end is not None
        ):
            unexplained = (measured_end - end) - (measured_start - start)
    return {"cold_forward_unexplained_bytes": unexplained}


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------

# At most 4 digits: no machine has 10,000 GPUs, and a 5,000-digit index never reaches int().
_DEVICE_RE = re.compile(r"cuda(?::([0-9]{1,4}))?")


def parse_device(text: str) -> int:
    """Return the GPU index of 'cuda' or 'cuda:N'; raise ValueError otherwise."""
    match = _DEVICE_RE.fullmatch(text.strip())
    if match is None:
        if text.strip().split(":")[0] == "cpu":
            raise ValueError(
                f"device {text!r} is not a GPU: measure needs a CUDA or HIP/ROCm device such "
                "as cuda:0; a CPU result must not be read as a GPU measurement"
            )
        raise ValueError(
            f"unsupported device {text!r}: use cuda or cuda:N (HIP/ROCm builds of PyTorch "
            "also use the cuda names)"
        )
    return int(match.group(1) or 0)


def import_torch() -> tuple[Any, str | None]:
    """(torch module or None, why it is missing).

    Warnings raised while importing (e.g. NumPy missing) are kept in IMPORT_WARNINGS for the
    environment report instead of being printed between the script's own lines.
    """
    import importlib
    import warnings

    module: Any = None
    why: str | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module = importlib.import_module("torch")
        except Exception as exc:  # ImportError, or OSError from a broken installation
            why = f"{type(exc).__name__}: {_describe_error(exc)}"
    IMPORT_WARNINGS[:] = [
        f"{w.category.__name__}: {_describe_error(Warning(w.message))}" for w in caught
    ]
    return module, why


IMPORT_WARNINGS: list[str] = []


def _import_nvml() -> tuple[Any, str | None]:
    """NVML through nvidia-ml-py (`pynvml`), initialised; it never creates a CUDA context."""
    import importlib

    try:
        nvml: Any = importlib.import_module("pynvml")
    except Exception as exc:
        return None, f"nvidia-ml-py (pynvml) not importable: {type(exc).__name__}"
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return None, f"NVML not initialised: {type(exc).__name__}: {_describe_error(exc)}"
    return nvml, None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_devices(nvml: Any, missing: list[str]) -> list[dict[str, Any]]:
    """Every GPU as NVML sees it (its own order, not the cuda:N order), without a context."""
    devices: list[dict[str, Any]] = []
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        missing.append(f"NVML device count not read: {type(exc).__name__}")
        return devices
    for index in range(count):
        entry: dict[str, Any] = {
            "nvml_index": index,
            "name": None,
            "uuid": None,
            "pci_bus_id": None,
            "total_memory_bytes": None,
        }
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            entry["name"] = _text(nvml.nvmlDeviceGetName(handle))
            entry["uuid"] = _text(nvml.nvmlDeviceGetUUID(handle))
            entry["pci_bus_id"] = _text(nvml.nvmlDeviceGetPciInfo(handle).busId)
            entry["total_memory_bytes"] = int(nvml.nvmlDeviceGetMemoryInfo(handle).total)
        except Exception as exc:
            missing.append(f"NVML device {index} not fully read: {type(exc).__name__}")
        devices.append(entry)
    return devices


def _nvidia_smi_driver_version() -> str | None:
    import shutil
    import subprocess

    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[0] if lines else None


def _file_first_line(path: str, pattern: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096)
    except OSError:
        return None
    match = re.search(pattern, text)
    return match.group(1) if match else None


def _cuda_version_text(version: int) -> str:
    """12040 -> '12.4', as cuDriverGetVersion and NVML encode it."""
    return f"{version // 1000}.{version % 1000 // 10}"


def _libcuda_driver_cuda_version() -> str | None:
    """The CUDA version the driver supports, from libcuda's cuDriverGetVersion.

    That call needs neither cuInit nor a context, so it touches no GPU.
    """
    import ctypes

    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            libcuda = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        try:
            status = libcuda.cuDriverGetVersion(ctypes.byref(version))
        except AttributeError:
            return None
        return _cuda_version_text(version.value) if status == 0 and version.value > 0 else None
    return None


def collect_driver(nvml: Any, missing: list[str]) -> dict[str, str | None]:
    """The driver version and the CUDA version it supports, each with where it was read.

    Driver: nvidia-smi, then NVML, then /proc/driver/nvidia/version, then the amdgpu module
    (ROCm). CUDA version supported by the driver: NVML, then libcuda.
    """
    driver: dict[str, str | None] = {
        "version": None,
        "version_source": None,
        "cuda_version": None,
        "cuda_version_source": None,
    }
    candidates: list[tuple[str, Callable[[], str | None]]] = [
        ("nvidia-smi", _nvidia_smi_driver_version),
        ("nvml", lambda: _text(nvml.nvmlSystemGetDriverVersion()) if nvml else None),
        (
            "/proc/driver/nvidia/version",
            lambda: _file_first_line("/proc/driver/nvidia/version", r"Kernel Module\s+([0-9.]+)"),
        ),
        ("amdgpu", lambda: _file_first_line("/sys/module/amdgpu/version", r"(\S+)")),
    ]
    for source, read in candidates:
        with contextlib.suppress(Exception):
            value = read()
            if value:
                driver["version"], driver["version_source"] = value, source
                break
    if driver["version"] is None:
        missing.append(
            "driver version not read (nvidia-smi, NVML, /proc/driver/nvidia/version, amdgpu)"
        )

    def nvml_cuda() -> str | None:
        if nvml is None:
            return None
        return _cuda_version_text(int(nvml.nvmlSystemGetCudaDriverVersion()))

    for source, read in (("nvml", nvml_cuda), ("libcuda", _libcuda_driver_cuda_version)):
        with contextlib.suppress(Exception):
            value = read()
            if value:
                driver["cuda_version"], driver["cuda_version_source"] = value, source
                break
    if driver["cuda_version"] is None:
        missing.append("CUDA version supported by the driver not read (NVML, libcuda)")
    return driver


def device_problem(torch: Any, index: int) -> str | None:
    """Why cuda:index cannot be measured with this PyTorch, or None when it can."""
    version = getattr(torch, "__version__", "?")
    cuda = getattr(torch.version, "cuda", None)
    hip = getattr(torch.version, "hip", None)
    if cuda is None and hip is None:
        return f"PyTorch {version} is a CPU-only build (no CUDA or HIP/ROCm): no GPU to measure"
    try:
        if not torch.cuda.is_available():
            return f"PyTorch {version} sees no GPU (torch.cuda.is_available() is False)"
        count = int(torch.cuda.device_count())
    except Exception as exc:
        return f"cannot query GPUs: {type(exc).__name__}: {_describe_error(exc)}"
    if index >= count:
        return f"no such GPU: cuda:{index} ({count} visible)"
    return None


def caching_disabled_reason(environ: dict[str, str] | None = None) -> str | None:
    """Why the caching allocator's counters cannot be read, or None.

    PyTorch's CUDA allocator bypasses its cache when PYTORCH_NO_CUDA_MEMORY_CACHING is set at
    all, whatever its value (forceUncachedAllocator in c10/cuda/CUDACachingAllocator.cpp);
    every counter then reads 0 whatever is allocated.
    """
    env = os.environ if environ is None else environ
    if NO_CACHING_VAR in env:
        return (
            f"{NO_CACHING_VAR}={env[NO_CACHING_VAR]!r} is set: PyTorch bypasses its caching "
            "allocator, whose counters then read 0 whatever is allocated"
        )
    return None


def _allocator(torch: Any, cuda_available: bool | None, missing: list[str]) -> dict[str, Any]:
    reason = caching_disabled_reason()
    allocator: dict[str, Any] = {
        "backend": None,
        "settings": {name: os.environ.get(name) for name in ALLOCATOR_ENV_VARS},
        "settings_in_effect": None,
        "caching_enabled": False if reason else (None if torch is None else True),
        "caching_disabled_reason": reason,
    }
    if torch is None:
        return allocator
    if cuda_available:
        try:
            allocator["backend"] = str(torch.cuda.get_allocator_backend())
        except Exception as exc:
            missing.append(f"allocator backend not read: {type(exc).__name__}")
    # PyTorch's own reading of its allocator settings (a private function in 2.9 and later).
    read_settings = getattr(torch._C, "_accelerator_getAllocatorSettings", None)
    if read_settings is None:
        missing.append("allocator settings in effect not read: this PyTorch does not expose them")
    else:
        try:
            allocator["settings_in_effect"] = str(read_settings())
        except Exception as exc:
            missing.append(f"allocator settings in effect not read: {type(exc).__name__}")
    return allocator


def collect_environment(
    device: str, torch: Any = None, torch_error: str | None = None
) -> dict[str, Any]:
    """Python, platform, PyTorch and its backend, devices, driver and allocator settings.

    Only the requested device is queried for its free memory (mem_get_info creates a CUDA
    context, hundreds of MiB, on the device it asks); the other visible devices are listed from
    their properties (cudaGetDeviceProperties, which PyTorch calls without making the device
    current) and from NVML when nvidia-ml-py is importable. Never raises: anything that cannot
    be read is `None` and listed under `missing`.
    """
    import platform

    missing: list[str] = []
    nvml, nvml_why = _import_nvml()
    env: dict[str, Any] = {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable or None,
        },
        "platform": {
            "system": platform.system() or None,
            "release": platform.release() or None,
            "machine": platform.machine() or None,
            "description": platform.platform() or None,
        },
        "torch": {
            "installed": torch is not None,
            "version": None,
            "cuda": None,
            "hip": None,
            "backend": None,
            "cuda_available": None,
            "device_count": None,
            "import_error": torch_error,
            "import_warnings": list(IMPORT_WARNINGS),
        },
        "seed": SEED,
        "visible_devices": {name: os.environ.get(name) for name in VISIBLE_DEVICE_ENV_VARS},
        "devices": [],
        "nvml_devices": None,
        "driver_version": None,
        "driver": None,
        "allocator": None,
        "blas_workspace": {name: os.environ.get(name) for name in BLAS_WORKSPACE_ENV_VARS},
        "requested_device": device,
        "requested_device_usable": False,
        "requested_device_problem": None,
        "missing": missing,
    }
    index: int | None = None
    try:
        index = parse_device(device)
    except ValueError as exc:
        env["requested_device_problem"] = str(exc)
    t = env["torch"]
    if torch is None:
        missing.append(f"PyTorch is not installed ({torch_error})")
    else:
        t["version"] = str(getattr(torch, "__version__", None))
        t["cuda"] = getattr(torch.version, "cuda", None)
        t["hip"] = getattr(torch.version, "hip", None)
        t["backend"] = "hip" if t["hip"] else "cuda" if t["cuda"] else "cpu-only"
        try:
            t["cuda_available"] = bool(torch.cuda.is_available())
            t["device_count"] = int(torch.cuda.device_count()) if t["cuda_available"] else 0
        except Exception as exc:
            missing.append(f"GPU query failed: {type(exc).__name__}: {_describe_error(exc)}")
        for i in range(t["device_count"] or 0):
            env["devices"].append(_describe_device(torch, i, i == index, missing))
        if index is not None:
            env["requested_device_problem"] = device_problem(torch, index)
        env["requested_device_usable"] = env["requested_device_problem"] is None
    env["allocator"] = _allocator(torch, t["cuda_available"], missing)
    if nvml is None:
        missing.append(f"NVML device list not read: {nvml_why}")
    else:
        env["nvml_devices"] = _nvml_devices(nvml, missing)
    env["driver"] = collect_driver(nvml, missing)
    env["driver_version"] = env["driver"]["version"]
    if nvml is not None:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    if torch is not None and not env["devices"]:
        missing.append("no visible GPU")
    return env


def _pci_bus_id(props: Any) -> str | None:
    """The device's PCI address, formatted as PyTorch itself does (domain:bus:device.0)."""
    try:
        return f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    except (AttributeError, TypeError, ValueError):
        return None


def _describe_device(torch: Any, index: int, requested: bool, missing: list[str]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "index": index,
        "requested": requested,
        "name": None,
        "total_memory_bytes": None,
        "compute_capability": None,
        "uuid": None,
        "pci_bus_id": None,
        "arch_name": None,
        "free_bytes": None,
        "mem_get_info_total_bytes": None,
    }
    try:
        props = torch.cuda.get_device_properties(index)
        info["name"] = str(props.name)
        info["total_memory_bytes"] = int(props.total_memory)
        info["compute_capability"] = f"{props.major}.{props.minor}"
        uuid = getattr(props, "uuid", None)
        info["uuid"] = None if uuid is None else str(uuid)
        info["pci_bus_id"] = _pci_bus_id(props)
        if getattr(torch.version, "hip", None):
            info["arch_name"] = str(getattr(props, "gcnArchName", "")) or None
    except Exception as exc:
        missing.append(f"cuda:{index} properties not read: {type(exc).__name__}")
    if requested:
        # Only here: mem_get_info creates a context on the device it asks (measure needs one).
        try:
            free, total = torch.cuda.mem_get_info(index)
            info["free_bytes"], info["mem_get_info_total_bytes"] = int(free), int(total)
        except Exception as exc:
            missing.append(f"cuda:{index} mem_get_info not read: {type(exc).__name__}")
    return info


def format_environment_text(env: dict[str, Any]) -> str:
    def show(value: Any) -> str:
        return "null" if value is None else str(value)

    t = env["torch"]
    driver = env["driver"]
    allocator = env["allocator"]
    lines = [
        f"python:            {env['python']['version']} ({env['python']['implementation']})",
        f"platform:          {show(env['platform']['description'])}",
        f"torch:             {show(t['version']) if t['installed'] else 'not installed'}",
        f"torch.version.cuda {show(t['cuda'])} (the build's CUDA)",
        f"torch.version.hip  {show(t['hip'])}",
        f"driver:            {show(driver['version'])} (from {show(driver['version_source'])})",
        f"driver's CUDA:     {show(driver['cuda_version'])} "
        f"(from {show(driver['cuda_version_source'])})",
        f"allocator backend: {show(allocator['backend'])}",
        f"allocator in use:  {show(allocator['settings_in_effect'])}",
        "caching allocator: "
        + (
            "bypassed: " + allocator["caching_disabled_reason"]
            if allocator["caching_disabled_reason"]
            else show(allocator["caching_enabled"])
        ),
        f"seed:              {env['seed']}",
    ]
    lines += [f"{k}: {show(v)}" for k, v in allocator["settings"].items()]
    lines += [f"{k}: {show(v)}" for k, v in env["blas_workspace"].items()]
    lines += [f"{k}: {show(v)}" for k, v in env["visible_devices"].items()]
    for d in env["devices"]:
        line = (
            f"cuda:{d['index']}: {show(d['name'])}, total {show(d['total_memory_bytes'])} B, "
            f"compute capability {show(d['compute_capability'])}, uuid {show(d['uuid'])}, "
            f"PCI {show(d['pci_bus_id'])}"
        )
        if d["arch_name"]:
            line += f", arch {d['arch_name']}"
        if d["requested"]:
            line += f", free {show(d['free_bytes'])} of {show(d['mem_get_info_total_bytes'])} B"
        lines.append(line)
    for d in env["nvml_devices"] or []:
        lines.append(
            f"NVML {d['nvml_index']}: {show(d['name'])}, uuid {show(d['uuid'])}, "
            f"PCI {show(d['pci_bus_id'])}, total {show(d['total_memory_bytes'])} B"
        )
    lines.append(
        f"requested {env['requested_device']}: "
        + ("can be measured" if env["requested_device_usable"] else "cannot be measured")
    )
    lines += [f"torch import warning: {w}" for w in t["import_warnings"]]
    lines += [f"missing: {m}" for m in env["missing"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


class UsageError(Exception):
    """A one-line error for the user (exit code attached)."""

    def __init__(self, message: str, code: int = EXIT_UNAVAILABLE) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage block, no traceback.
        self.exit(EXIT_UNAVAILABLE, f"{self.prog}: error: {' '.join(message.split())}\n")


# Bounds checked when the arguments are parsed (documented in the READMEs):
MAX_PARAMETERS = 10**15  # a thousand times the largest models of the guides' era
MAX_BITS = 64  # the widest value PyTorch stores per parameter (float64)
MAX_RESERVE_GIB = 2**20  # 1 PiB
MAX_DIMENSION = 2**31 - 1  # batch, context and width: a tensor dimension PyTorch indexes
MAX_WARMUP = 10**6
MAX_REPEATS = 10**4  # one record per repeat


def _argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except NumberError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _whole_type(minimum: int, maximum: int, suffixes: bool = False) -> Callable[[str], Any]:
    return _argument_type(
        lambda text: parse_whole(text, minimum=minimum, maximum=maximum, suffixes=suffixes)
    )


def _add_dimensions(p: argparse.ArgumentParser) -> None:
    dimension = _whole_type(1, MAX_DIMENSION)
    p.add_argument("--batch", type=dimension, required=True)
    p.add_argument("--context", type=dimension, required=True)
    p.add_argument("--width", type=dimension, required=True)
    p.add_argument("--dtype", choices=sorted(DTYPE_SIZES), default="float32")


def build_parser() -> argparse.ArgumentParser:
    common: dict[str, Any] = {
        "epilog": EXIT_CODES_HELP,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    parser = _Parser(
        prog=os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else TOOL_NAME,
        description=f"IteraGPU Lab {LAB_VERSION}: weights estimate, allocation prediction, "
        "environment report and per-phase GPU memory measurement (raw bytes).",
        **common,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "estimate",
        help="dense weights in bytes, GB and GiB, plus a reserve (standard library only)",
        description="Weights of `parameters` dense values of `bits` bits (uniform storage), "
        "plus an assumed reserve in GiB. Activations, gradients, KV cache and optimizer "
        "states are not counted.",
        **common,
    )
    p.add_argument(
        "--parameters",
        type=_whole_type(1, MAX_PARAMETERS, suffixes=True),
        required=True,
        help=f"parameter count, e.g. 7000000000, 7e9 or 7B (at most {MAX_PARAMETERS:.0e})",
    )
    p.add_argument(
        "--bits",
        type=_argument_type(lambda t: parse_decimal(t, maximum=MAX_BITS, allow_zero=False)),
        required=True,
        help=f"bits per value, e.g. 16 or 4.5 (at most {MAX_BITS})",
    )
    p.add_argument(
        "--reserve-gib",
        type=_argument_type(lambda t: parse_decimal(t, maximum=MAX_RESERVE_GIB, allow_zero=True)),
        default=Fraction(0),
        help=f"assumed reserve in GiB (default 0, at most {MAX_RESERVE_GIB:,})",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_estimate)

    p = sub.add_parser(
        "predict",
        help="allocated bytes after model_load and inputs (standard library only)",
        description="The allocated bytes that PyTorch's default caching allocator will show "
        "at the end of model_load and of inputs for measure's network and input: each tensor "
        f"rounded up to {ALLOCATOR_BLOCK_BYTES} B. cuBLAS/cuBLASLt workspaces, temporaries "
        "and reserved segments are not predicted.",
        **common,
    )
    _add_dimensions(p)
    p.add_argument("--json", action="store_true", help="print JSON, with the derivation")
    p.set_defaults(handler=cmd_predict)

    p = sub.add_parser(
        "environment",
        help="Python, platform, PyTorch backend, devices, driver and allocator settings",
        description="Report the environment; exit 0 only when the requested device can be "
        "measured. Only the requested device is asked for its free memory.",
        **common,
    )
    p.add_argument("--device", default="cuda:0", help="device to check (default cuda:0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_environment)

    p = sub.add_parser(
        "measure",
        help="measure the lab's small dense network phase by phase (needs PyTorch and a GPU)",
        description="Phases model_load, inputs, cold_forward, warmup, warm_forward (each "
        "repeat recorded separately) on a synthetic (batch, context, width) input; context is "
        "a tensor dimension, not an LLM context. Writes raw bytes, with predict's figures "
        "beside them, to a NEW JSON file: written to a temporary file in the same folder, then "
        "published without overwriting.",
        **common,
    )
    p.add_argument("--device", default="cuda:0", help="GPU to measure (default cuda:0)")
    _add_dimensions(p)
    p.add_argument("--warmup", type=_whole_type(0, MAX_WARMUP), default=3, help="warm-up passes")
    p.add_argument(
        "--repeats", type=_whole_type(1, MAX_REPEATS), default=5, help="warm_forward repeats"
    )
    p.add_argument("--output", required=True, help="new JSON file (never overwritten)")
    p.set_defaults(handler=cmd_measure)
    return parser


def _print_json(data: Any, stream: IO[str]) -> None:
    import json

    stream.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def cmd_estimate(args: argparse.Namespace) -> int:
    result = estimate(args.parameters, args.bits, args.reserve_gib)
    if args.json:
        _print_json(result, sys.stdout)
    else:
        sys.stdout.write(format_estimate_text(result))
    return EXIT_OK


def cmd_predict(args: argparse.Namespace) -> int:
    prediction = predict(args.batch, args.context, args.width, args.dtype)
    if args.json:
        _print_json(prediction, sys.stdout)
    else:
        sys.stdout.write(format_prediction_text(prediction))
    return EXIT_OK


def cmd_environment(args: argparse.Namespace) -> int:
    torch, why = import_torch()
    env = collect_environment(args.device, torch, why)
    if args.json:
        _print_json(env, sys.stdout)
    else:
        sys.stdout.write(format_environment_text(env))
    if env["requested_device_usable"]:
        return EXIT_OK
    reason = env["requested_device_problem"] or (
        f"PyTorch is not installed ({why})" if torch is None else "device cannot be measured"
    )
    _error(f"{args.device} cannot be measured: {reason}")
    return EXIT_UNAVAILABLE


class Backend(Protocol):
    """What `measure` needs from the machine: built by a factory after the checks pass."""

    source: CounterSource
    workload: Workload
    environment: dict[str, Any]


class _TorchBackend:
    def __init__(self, torch: Any, torch_device: Any, args: argparse.Namespace) -> None:
        self.environment = collect_environment(args.device, torch, None)
        self.source: CounterSource = TorchCounterSource(torch, torch_device)
        reason = self.environment["allocator"]["caching_disabled_reason"]
        if reason is not None:
            self.source = UnreadableCounters(self.source, reason)
        self.workload: Workload = TorchWorkload(
            torch, torch_device, args.batch, args.context, args.width, args.dtype
        )


def torch_backend(args: argparse.Namespace) -> Backend:
    """Import PyTorch and check the device; raise UsageError (exit 2) when it is unusable."""
    try:
        index = parse_device(args.device)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    torch, why = import_torch()
    if torch is None:
        raise UsageError(
            f"PyTorch is not installed ({why}); measure needs PyTorch with a CUDA or "
            "HIP/ROCm GPU. Nothing was written."
        )
    problem = device_problem(torch, index)
    if problem is not None:
        raise UsageError(f"{problem}. Nothing was written.")
    return _TorchBackend(torch, torch.device("cuda", index), args)


def check_output_path(path: str, *, meanwhile: bool = False) -> None:
    """Refuse an existing --output (exit 3) and a folder that is missing or not writable."""
    if os.path.lexists(path):
        how = "was created by someone else meanwhile" if meanwhile else "already exists"
        raise UsageError(
            f"refusing to overwrite {path!r}: it {how}; choose a new name for each series",
            EXIT_OUTPUT_EXISTS,
        )
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"cannot create {path!r}: directory {parent!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"cannot create {path!r}: directory {parent!r} is not writable", EXIT_OUTPUT_ERROR
        )


FileIdentity = tuple[int, int]  # (st_dev, st_ino): which file a name points to


def remove_own_file(path: str, identity: FileIdentity) -> bool:
    """Remove `path` only if it is still the file this process created; True if removed.

    A file that replaced it meanwhile (another inode) is left alone.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return False
    if (found.st_dev, found.st_ino) != identity:
        return False
    os.unlink(path)
    return True


def _create_temporary(directory: str, target: str) -> tuple[int, str, FileIdentity]:
    """A new hidden file beside `target`, created exclusively (O_EXCL), never a link."""
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        name = os.path.join(directory, f".{target}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(name, flags, 0o644)
        except FileExistsError:
            continue
        found = os.fstat(fd)
        return fd, name, (found.st_dev, found.st_ino)
    raise FileExistsError(f"no free temporary name beside {target!r}")


def _fsync_directory(directory: str) -> None:
    """Make the new name durable; not every platform can open a folder, which is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_new_file(path: str, text: str) -> None:
    """Write `text` to a temporary file in the folder of `path`, flush and fsync it, publish it
    under `path` with os.link (which never overwrites), then remove the temporary name.

    Exit 3 if `path` appeared meanwhile, 5 if the file cannot be written or published. A run
    killed at any point leaves no half-written `path`. Only files this process created are
    ever removed; a complete result that cannot be published is kept under its temporary name.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary, identity = _create_temporary(directory, os.path.basename(path))
    except OSError as exc:
        raise UsageError(
            f"cannot create a file beside {path!r}: {_describe_error(exc)}", EXIT_OUTPUT_ERROR
        ) from None
    complete = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        complete = True
        os.link(temporary, path)
    except FileExistsError:
        raise UsageError(
            f"refusing to overwrite {path!r}: it was created by someone else meanwhile; this "
            f"run's complete result is kept as {temporary!r}",
            EXIT_OUTPUT_EXISTS,
        ) from None
    except OSError as exc:
        kept = f"; the complete result is kept as {temporary!r}" if complete else ""
        raise UsageError(
            f"cannot write {path!r}: {_describe_error(exc)}{kept}", EXIT_OUTPUT_ERROR
        ) from None
    finally:
        if not complete:
            remove_own_file(temporary, identity)
    # Published: `path` and the temporary name are two links to the same file.
    remove_own_file(temporary, identity)
    _fsync_directory(directory)


class InterruptSignals:
    """While measuring, SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated, so that
    both keep a partial result; while the result is written, both wait until it is published.

    Signal handlers can only be installed from the main thread; elsewhere this does nothing.
    """

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}
        self._deferring = False
        self.deferred: int | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        import signal  # already loaded by __enter__: no import runs in the handler

        if self._deferring:
            self.deferred = signum
            return
        if signum == signal.SIGTERM:
            raise Terminated()
        raise KeyboardInterrupt()

    def __enter__(self) -> InterruptSignals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        import signal

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    @contextlib.contextmanager
    def deferred_while(self) -> Iterator[None]:
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False


def build_result(
    args: argparse.Namespace,
    argv: Sequence[str],
    environment: dict[str, Any],
    phases: list[PhaseRecord],
    outcome: Outcome,
    started_utc: str,
    counters_unavailable: str | None = None,
) -> dict[str, Any]:
    prediction = predict(args.batch, args.context, args.width, args.dtype)
    summary = phase_predictions(prediction, phases)
    network = predict_network(args.width, args.dtype, args.batch, args.context)
    for record in phases:
        if record["phase"] == "model_load":
            network["allocated_after_model_load_bytes"] = record["end_allocated_bytes"]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__, "lab_version": LAB_VERSION},
        "command_line": list(argv),
        "started_utc": started_utc,
        "device": args.device,
        "dimensions": {"batch": args.batch, "context": args.context, "width": args.width},
        "dtype": args.dtype,
        "policy": {
            "warmup_passes": args.warmup,
            "repeats": args.repeats,
            "single_process": True,
            "empty_cache_between_phases": False,
            "phase_boundaries": "torch.cuda.synchronize(device) before the start readings and "
            "after the run; torch.cuda.reset_peak_memory_stats(device) after the start readings",
        },
        "units": {
            "memory": "bytes (raw torch.cuda counters; null = not read)",
            "duration": "nanoseconds (time.perf_counter_ns, run + final synchronize)",
        },
        "counters": {
            "start_allocated_bytes": "torch.cuda.memory_allocated before the phase",
            "start_reserved_bytes": "torch.cuda.memory_reserved before the phase",
            "peak_allocated_bytes": "torch.cuda.max_memory_allocated since the phase's reset "
            "(absolute: includes what existed before the phase)",
            "peak_reserved_bytes": "torch.cuda.max_memory_reserved since the phase's reset "
            "(absolute)",
            "end_allocated_bytes": "torch.cuda.memory_allocated after the phase",
            "end_reserved_bytes": "torch.cuda.memory_reserved after the phase (after an "
            "out-of-memory error: after the allocator released its unused cached blocks)",
        },
        "counters_unavailable_reason": counters_unavailable,
        "network": network,
        "prediction": {
            "model_load_allocated_bytes": prediction["phases"]["model_load"]["allocated_bytes"],
            "inputs_allocated_bytes": prediction["phases"]["inputs"]["allocated_bytes"],
            "kept_output_allocated_bytes": prediction["kept_output"]["allocated_bytes"],
            "rule": prediction["allocator"]["rule"],
            "cold_forward_unexplained_bytes": summary["cold_forward_unexplained_bytes"],
            "cold_forward_unexplained_meaning": "allocated bytes cold_forward added beyond the "
            "prediction: memory that libraries (the cuBLAS/cuBLASLt workspace first) took "
            "through PyTorch's allocator, not the model",
            "not_predicted": prediction["not_predicted"],
        },
        "environment": environment,
        "phases": phases,
        "outcome": outcome,
    }


BackendFactory = Callable[[argparse.Namespace], Backend]


def cmd_measure(
    args: argparse.Namespace,
    argv: Sequence[str] = (),
    backend_factory: BackendFactory = torch_backend,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> int:
    import json
    import signal

    check_output_path(args.output)  # before anything else, PyTorch included
    try:
        parse_device(args.device)
    except ValueError as exc:
        raise UsageError(f"{exc}. Nothing was written.") from None
    with InterruptSignals() as signals:
        backend = backend_factory(args)  # UsageError (exit 2) when PyTorch or the GPU is missing
        # PyTorch takes seconds to load: look again before spending GPU time.
        check_output_path(args.output, meanwhile=True)
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _progress(
            f"measuring {args.device}: batch {args.batch}, context {args.context}, width "
            f"{args.width}, {args.dtype}, warm-up {args.warmup}, repeats {args.repeats}"
        )
        source = backend.source
        unavailable = source.reason if isinstance(source, UnreadableCounters) else None
        if unavailable:
            _progress(f"counters not read: {unavailable}")
        phases, outcome = run_protocol(
            backend.source,
            backend.workload,
            warmup=args.warmup,
            repeats=args.repeats,
            progress=_progress,
            clock=clock,
        )
        with signals.deferred_while():
            result = build_result(
                args, argv, backend.environment, phases, outcome, started, unavailable
            )
            publish_new_file(args.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        if signals.deferred is not None:
            _progress(
                f"{signal.Signals(signals.deferred).name} arrived while the result was being "
                "written; the result is complete"
            )
    code = outcome["exit_code"]
    sys.stdout.write(f"wrote {args.output} (outcome: {outcome['status']})\n")
    if code != EXIT_OK and outcome["error"] is not None:
        _error(
            f"phase {outcome['failed_phase']} {outcome['status']}: "
            f"{outcome['error']['message']} (result written to {args.output})"
        )
    return code


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _error(message: str) -> None:
    print(f"{TOOL_NAME}: error: {' '.join(message.split())}", file=sys.stderr, flush=True)


def main(
    argv: Sequence[str] | None = None,
    *,
    backend_factory: BackendFactory = torch_backend,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> int:
    """Entry point; returns the exit code. Tests inject a fake backend factory."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
    except SystemExit as exc:  # --help, --version or a one-line usage error
        return exc.code if isinstance(exc.code, int) else EXIT_UNAVAILABLE
    try:
        if args.command == "measure":
            return cmd_measure(args, [TOOL_NAME, *args_list], backend_factory, clock)
        code: int = args.handler(args)
        return code
    except UsageError as exc:
        _error(str(exc))
        return exc.code
    except KeyboardInterrupt as exc:  # before any phase ran: nothing was measured or written
        _error(f"{_interrupt_message(exc)}; nothing was written")
        return interrupt_exit_code(exc)
    except BrokenPipeError:
        return EXIT_INTERNAL
    except Exception as exc:
        _error(f"internal error: {type(exc).__name__}: {_describe_error(exc)}")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
