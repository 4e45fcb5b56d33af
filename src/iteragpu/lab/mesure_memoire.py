#!/usr/bin/env python3
"""IteraGPU Lab v1: estimate, inspect the environment and measure GPU memory by phase.

`estimate` and `environment` need only the standard library (this file runs under
`python -I -S`); `measure` needs PyTorch and a CUDA or HIP/ROCm GPU.

    python mesure_memoire.py estimate --parameters 7000000000 --bits 16 --reserve-gib 4
    python mesure_memoire.py environment --device cuda:0
    python mesure_memoire.py measure --device cuda:0 --batch 2 --context 128 --width 1024 \
        --dtype float32 --warmup 3 --repeats 5 --output mesures.json

Counters are stored as raw bytes; a value that was not read is `null`, never 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import IO, Any, NoReturn, Protocol

# Modules that only `environment` and `measure` need (platform, subprocess, shutil, warnings,
# importlib) are imported where they are used: the `iteragpu` package imports this file for
# `dense_weight_bytes`, and its commands should not pay for them.

BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30

# The single place where the lab's version lives; lab_archive.py reads it from here.
LAB_VERSION = "v1"
__version__ = "1.0.0"
SCHEMA_VERSION = "1.0.0"
TOOL_NAME = "mesure_memoire.py"

# The CUDA caching allocator rounds every allocation up to a multiple of 512 bytes.
ALLOCATOR_BLOCK_BYTES = 512

# Exit codes (also listed in --help and in the lab READMEs).
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_UNAVAILABLE = 2  # bad arguments, PyTorch missing, device not a GPU or not present
EXIT_OUTPUT_EXISTS = 3
EXIT_PHASE_FAILED = 4
EXIT_OUTPUT_ERROR = 5
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """\
exit codes:
  0    success (estimate printed; environment: the requested device can be measured;
       measure: every phase succeeded and the result file was written)
  1    unexpected internal error (one line on stderr, no traceback)
  2    bad arguments, or PyTorch missing, or the device is not a GPU (e.g. cpu),
       or no such GPU; for measure nothing is written
  3    measure: the --output file already exists (it is left untouched, nothing runs)
  4    measure: a phase failed (out-of-memory included); the result file is written
       with the failing phase, the error message and the last readings
  5    measure: the result file could not be created or written
  130  measure: interrupted (Ctrl-C); the partial result is written when possible
"""

DTYPE_SIZES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}

PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")

NOT_COUNTED = ["activations", "gradients", "kv_cache", "optimizer_states"]
NOT_COUNTED_QUANTIZED = [
    "quantization_scales_and_metadata",
    "modules_kept_at_another_precision",
]

ALLOCATOR_ENV_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_MODULE_LOADING")


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


def format_bytes(value: int) -> str:
    """Raw bytes with thousands separators.

    >>> format_bytes(14_000_000_000)
    '14,000,000,000 B'
    """
    return f"{value:,} B"


def estimate(parameters: int, bits: int | Fraction, reserve_gib: Fraction) -> dict[str, Any]:
    """Weights of a dense set of parameters plus an assumed reserve; GB and GiB never mixed."""
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
        "bits": format_decimal(bits, 6),
        "weights_bytes": ceil_fraction(exact),
        "weights_bytes_exact": str(exact),
        "weights_gb": format_decimal(exact / BYTES_PER_GB),
        "weights_gib": format_decimal(exact / BYTES_PER_GIB),
        "reserve_gib": format_decimal(reserve_gib, 6),
        "reserve_bytes": ceil_fraction(reserve_bytes_exact),
        "total_gib": format_decimal(total_exact / BYTES_PER_GIB),
        "total_bytes": ceil_fraction(total_exact),
        "bytes_per_gb": BYTES_PER_GB,
        "bytes_per_gib": BYTES_PER_GIB,
        "rounding": "decimal values rounded half up to 2 places from exact fractions",
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
    weights_line = format_bytes(result["weights_bytes"])
    if result["weights_bytes_exact"] != str(result["weights_bytes"]):
        weights_line += f" (rounded up from {result['weights_bytes_exact']} B)"
    lines = [
        f"IteraGPU Lab {LAB_VERSION} - dense weights estimate (weights only)",
        f"parameters:       {result['parameters']:,}",
        f"bits per value:   {result['bits']}",
        f"weights:          {weights_line}",
        f"weights (GB):     {result['weights_gb']} GB (1 GB = {BYTES_PER_GB:,} B)",
        f"weights (GiB):    {result['weights_gib']} GiB (1 GiB = {BYTES_PER_GIB:,} B)",
        f"reserve (GiB):    {result['reserve_gib']} GiB (assumed)",
        f"total (GiB):      {result['total_gib']} GiB (weights + reserve, "
        f"{format_bytes(result['total_bytes'])})",
        "not counted:      " + ", ".join(_NOT_COUNTED_TEXT[n] for n in result["not_counted"]),
    ]
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The small original dense network (shapes are known without PyTorch)
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


def predict_network(width: int, dtype: str, batch: int, context: int) -> dict[str, Any]:
    """Predicted bytes of the network parameters and of the synthetic input, from shapes."""
    element_size = DTYPE_SIZES[dtype]
    tensors: list[dict[str, Any]] = []
    for name, shape in network_parameter_shapes(width):
        numel = 1
        for dim in shape:
            numel *= dim
        tensors.append({"name": name, "shape": list(shape), "numel": numel})
    total_numel = sum(t["numel"] for t in tensors)
    per_tensor = [t["numel"] * element_size for t in tensors]
    input_bytes = batch * context * width * element_size
    return {
        "architecture": "LayerNorm(width) -> Linear(width, 4*width) -> GELU -> "
        "Linear(4*width, width), applied to a synthetic (batch, context, width) tensor",
        "parameter_tensors": tensors,
        "parameter_count": total_numel,
        "element_size_bytes": element_size,
        "predicted_parameter_bytes": sum(per_tensor),
        "predicted_parameter_bytes_rounded_512": sum(round_up_to_block(b) for b in per_tensor),
        "predicted_input_bytes": input_bytes,
        "predicted_input_bytes_rounded_512": round_up_to_block(input_bytes),
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
        self._torch.manual_seed(0)
        self.model = build_torch_network(self._torch, self._width, self._device, self._dtype)

    def make_inputs(self) -> None:
        generator = self._torch.Generator(device=self._device).manual_seed(0)
        self.inputs = self._torch.randn(
            self._shape, generator=generator, device=self._device, dtype=self._dtype
        )

    def forward(self) -> None:
        with self._torch.inference_mode():
            # The previous output stays alive until the new one replaces it.
            self.output = self.model(self.inputs)


COUNTER_KEYS = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)


def _describe_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:2000] + "..."


def _is_out_of_memory(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in {"OutOfMemoryError", "MemoryError"} or "out of memory" in str(exc).lower()


def measure_phase(
    phase: str,
    source: CounterSource,
    action: Callable[[], None],
    *,
    repeat: int | None = None,
    forward_passes: int = 0,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> dict[str, Any]:
    """Run one phase under the guide's protocol and return its record.

    1. synchronize the device; 2. read start allocated and reserved; 3. reset the peaks;
    4. run the phase; 5. synchronize, read both absolute peaks and both end levels, record
    success or the error; 6. keep raw bytes, `None` (JSON null) for anything not read.
    """
    record: dict[str, Any] = {
        "phase": phase,
        "repeat": repeat,
        "forward_passes": forward_passes,
        "status": "ok",
        "peak_reset": False,
        **dict.fromkeys(COUNTER_KEYS),
        "duration_ns": None,
        "error": None,
        "read_errors": {},
    }

    def fail(step: str, exc: BaseException) -> None:
        if record["error"] is None:  # keep the first error: the others follow from it
            record["status"] = "failed"
            record["error"] = {
                "step": step,
                "type": type(exc).__name__,
                "message": _describe_error(exc),
                "out_of_memory": _is_out_of_memory(exc),
            }

    def read(key: str, counter: Callable[[], int]) -> None:
        try:
            record[key] = int(counter())
        except Exception as exc:
            record["read_errors"][key] = f"{type(exc).__name__}: {_describe_error(exc)}"

    try:
        source.synchronize()
    except Exception as exc:
        fail("synchronize_before", exc)
    read("start_allocated_bytes", source.memory_allocated)
    read("start_reserved_bytes", source.memory_reserved)
    if record["error"] is None:
        try:
            source.reset_peak_memory_stats()
            record["peak_reset"] = True
        except Exception as exc:
            fail("reset_peak", exc)
    if record["error"] is None:
        started = clock()
        try:
            action()
        except Exception as exc:
            fail("run", exc)
        try:
            source.synchronize()
        except Exception as exc:
            fail("synchronize_after", exc)
        record["duration_ns"] = clock() - started
    if record["peak_reset"]:
        # Peaks are only meaningful for this phase when they were reset at its start.
        read("peak_allocated_bytes", source.max_memory_allocated)
        read("peak_reserved_bytes", source.max_memory_reserved)
    read("end_allocated_bytes", source.memory_allocated)
    read("end_reserved_bytes", source.memory_reserved)
    return record


def run_protocol(
    source: CounterSource,
    workload: Workload,
    *,
    warmup: int,
    repeats: int,
    progress: Callable[[str], None] = lambda line: None,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """All phases in order; stops at the first failed phase. Returns (phases, outcome)."""

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
    phases: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {
        "status": "ok",
        "exit_code": EXIT_OK,
        "failed_phase": None,
        "failed_repeat": None,
        "error": None,
        "complete_readings": True,
    }
    for index, (name, action, repeat, passes) in enumerate(plan, start=1):
        label = name if repeat is None else f"{name} {repeat}/{repeats}"
        try:
            record = measure_phase(
                name, source, action, repeat=repeat, forward_passes=passes, clock=clock
            )
        except KeyboardInterrupt:
            outcome.update(
                status="interrupted",
                exit_code=EXIT_INTERRUPTED,
                failed_phase=name,
                failed_repeat=repeat,
                error={"type": "KeyboardInterrupt", "message": "interrupted by the user"},
            )
            progress(f"[{index}/{len(plan)}] {label}: interrupted")
            break
        phases.append(record)
        if record["read_errors"]:
            outcome["complete_readings"] = False
        if record["status"] != "ok":
            err = record["error"]
            outcome.update(
                status="failed",
                exit_code=EXIT_PHASE_FAILED,
                failed_phase=name,
                failed_repeat=repeat,
                error={"type": err["type"], "message": err["message"]},
            )
            progress(f"[{index}/{len(plan)}] {label}: FAILED ({err['type']}: {err['message']})")
            break
        peak = record["peak_allocated_bytes"]
        progress(
            f"[{index}/{len(plan)}] {label}: ok, "
            f"{record['duration_ns'] / 1e6:.3f} ms, peak allocated "
            f"{'null' if peak is None else f'{peak:,}'} B"
        )
    return phases, outcome


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------

_DEVICE_RE = re.compile(r"cuda(?::([0-9]+))?")


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


def _driver_version() -> tuple[str | None, str | None]:
    import shutil
    import subprocess

    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, "nvidia-smi not found: driver version not read"
    try:
        done = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"nvidia-smi failed: {type(exc).__name__}"
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return (lines[0], None) if lines else (None, "nvidia-smi printed no driver version")


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


def collect_environment(
    device: str, torch: Any = None, torch_error: str | None = None
) -> dict[str, Any]:
    """Python, platform, PyTorch and its backend, devices, driver and allocator settings.

    Never raises: anything that cannot be read is `None` and listed under `missing`.
    """
    import platform

    missing: list[str] = []
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
        "devices": [],
        "driver_version": None,
        "allocator": {
            "backend": None,
            "settings": {name: os.environ.get(name) for name in ALLOCATOR_ENV_VARS},
        },
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
    if torch is None:
        missing.append(f"PyTorch is not installed ({torch_error})")
    else:
        t = env["torch"]
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
            env["devices"].append(_describe_device(torch, i, missing))
        if t["cuda_available"]:
            try:
                env["allocator"]["backend"] = str(torch.cuda.get_allocator_backend())
            except Exception as exc:
                missing.append(f"allocator backend not read: {type(exc).__name__}")
        if index is not None:
            env["requested_device_problem"] = device_problem(torch, index)
        env["requested_device_usable"] = env["requested_device_problem"] is None
    if env["torch"]["hip"] is None:
        env["driver_version"], why = _driver_version()
        if why:
            missing.append(why)
    else:
        missing.append("driver version not read on HIP/ROCm builds")
    if torch is not None and not env["devices"]:
        missing.append("no visible GPU")
    return env


def _describe_device(torch: Any, index: int, missing: list[str]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "index": index,
        "name": None,
        "total_memory_bytes": None,
        "compute_capability": None,
        "free_bytes": None,
        "mem_get_info_total_bytes": None,
    }
    try:
        props = torch.cuda.get_device_properties(index)
        info["name"] = str(props.name)
        info["total_memory_bytes"] = int(props.total_memory)
        info["compute_capability"] = f"{props.major}.{props.minor}"
    except Exception as exc:
        missing.append(f"cuda:{index} properties not read: {type(exc).__name__}")
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
    lines = [
        f"python:            {env['python']['version']} ({env['python']['implementation']})",
        f"platform:          {show(env['platform']['description'])}",
        f"torch:             {show(t['version']) if t['installed'] else 'not installed'}",
        f"torch.version.cuda {show(t['cuda'])}",
        f"torch.version.hip  {show(t['hip'])}",
        f"driver:            {show(env['driver_version'])}",
        f"allocator backend: {show(env['allocator']['backend'])}",
    ]
    lines += [f"{k}: {show(v)}" for k, v in env["allocator"]["settings"].items()]
    for d in env["devices"]:
        lines.append(
            f"cuda:{d['index']}: {show(d['name'])}, total {show(d['total_memory_bytes'])} B, "
            f"compute capability {show(d['compute_capability'])}, free {show(d['free_bytes'])} "
            f"of {show(d['mem_get_info_total_bytes'])} B"
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


_INT_RE = re.compile(r"[0-9][0-9_]*")
_DECIMAL_RE = re.compile(r"[0-9]+(\.[0-9]+)?")


def _whole(text: str, minimum: int) -> int:
    value = text.strip()
    if not _INT_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    number = int(value)
    if number < minimum:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    return number


def positive_int(text: str) -> int:
    return _whole(text, 1)


def non_negative_int(text: str) -> int:
    return _whole(text, 0)


def _decimal(text: str, *, allow_zero: bool) -> Fraction:
    value = text.strip()
    kind = "zero or a positive decimal" if allow_zero else "a positive decimal"
    if not _DECIMAL_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(f"expected {kind} number, got {text!r}")
    number = Fraction(value)
    if number == 0 and not allow_zero:
        raise argparse.ArgumentTypeError(f"expected {kind} number, got {text!r}")
    return number


def positive_decimal(text: str) -> Fraction:
    return _decimal(text, allow_zero=False)


def non_negative_decimal(text: str) -> Fraction:
    return _decimal(text, allow_zero=True)


def build_parser() -> argparse.ArgumentParser:
    common: dict[str, Any] = {
        "epilog": EXIT_CODES_HELP,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    parser = _Parser(
        prog=os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else TOOL_NAME,
        description=f"IteraGPU Lab {LAB_VERSION}: weights estimate, environment report and "
        "per-phase GPU memory measurement (raw bytes).",
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
    p.add_argument("--parameters", type=positive_int, required=True, help="parameter count")
    p.add_argument("--bits", type=positive_decimal, required=True, help="bits per value")
    p.add_argument(
        "--reserve-gib",
        type=non_negative_decimal,
        default=Fraction(0),
        help="assumed reserve in GiB (default 0)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_estimate)

    p = sub.add_parser(
        "environment",
        help="Python, platform, PyTorch backend, devices, driver and allocator settings",
        description="Report the environment; exit 0 only when the requested device can be "
        "measured.",
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
        "a tensor dimension, not an LLM context. Writes raw bytes to a NEW JSON file.",
        **common,
    )
    p.add_argument("--device", default="cuda:0", help="GPU to measure (default cuda:0)")
    p.add_argument("--batch", type=positive_int, required=True)
    p.add_argument("--context", type=positive_int, required=True)
    p.add_argument("--width", type=positive_int, required=True)
    p.add_argument("--dtype", choices=sorted(DTYPE_SIZES), default="float32")
    p.add_argument("--warmup", type=non_negative_int, default=3, help="warm-up passes")
    p.add_argument("--repeats", type=positive_int, default=5, help="warm_forward repeats")
    p.add_argument("--output", required=True, help="new JSON file (never overwritten)")
    p.set_defaults(handler=cmd_measure)
    return parser


def _print_json(data: Any, stream: IO[str]) -> None:
    stream.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def cmd_estimate(args: argparse.Namespace) -> int:
    result = estimate(args.parameters, args.bits, args.reserve_gib)
    if args.json:
        _print_json(result, sys.stdout)
    else:
        sys.stdout.write(format_estimate_text(result))
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


def open_exclusive(path: str) -> IO[str]:
    """Create `path` for writing; FileExistsError if anything is already there (O_EXCL)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    return os.fdopen(fd, "w", encoding="utf-8", newline="\n")


def check_output_path(path: str) -> None:
    """Refuse an existing --output before anything else runs (PyTorch is not even imported)."""
    if os.path.lexists(path):
        raise UsageError(
            f"refusing to overwrite {path!r}: it already exists; choose a new name for each series",
            EXIT_OUTPUT_EXISTS,
        )
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"cannot create {path!r}: directory {parent!r} does not exist")


def build_result(
    args: argparse.Namespace,
    argv: Sequence[str],
    environment: dict[str, Any],
    phases: list[dict[str, Any]],
    outcome: dict[str, Any],
    started_utc: str,
) -> dict[str, Any]:
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
            "end_reserved_bytes": "torch.cuda.memory_reserved after the phase",
        },
        "network": network,
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
    check_output_path(args.output)  # before anything else, PyTorch included
    try:
        parse_device(args.device)
    except ValueError as exc:
        raise UsageError(f"{exc}. Nothing was written.") from None
    backend = backend_factory(args)  # UsageError (exit 2) when PyTorch or the GPU is missing
    try:
        handle = open_exclusive(args.output)
    except FileExistsError:
        raise UsageError(
            f"refusing to overwrite {args.output!r}: it was created by someone else meanwhile",
            EXIT_OUTPUT_EXISTS,
        ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot create {args.output!r}: {_describe_error(exc)}", EXIT_OUTPUT_ERROR
        ) from None
    written = False
    try:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _progress(
            f"measuring {args.device}: batch {args.batch}, context {args.context}, width "
            f"{args.width}, {args.dtype}, warm-up {args.warmup}, repeats {args.repeats}"
        )
        phases, outcome = run_protocol(
            backend.source,
            backend.workload,
            warmup=args.warmup,
            repeats=args.repeats,
            progress=_progress,
            clock=clock,
        )
        result = build_result(args, argv, backend.environment, phases, outcome, started)
        try:
            with handle:
                handle.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            written = True
        except OSError as exc:
            raise UsageError(
                f"cannot write {args.output!r}: {_describe_error(exc)}", EXIT_OUTPUT_ERROR
            ) from None
    finally:
        if not written:
            handle.close()
            os.unlink(args.output)  # the empty file this run created exclusively
    code: int = outcome["exit_code"]
    sys.stdout.write(f"wrote {args.output} (outcome: {outcome['status']})\n")
    if code != EXIT_OK:
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
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_INTERNAL
    except Exception as exc:
        _error(f"internal error: {type(exc).__name__}: {_describe_error(exc)}")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
