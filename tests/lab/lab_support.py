"""Helpers for the lab tests. The fakes here are TEST-ONLY stand-ins for torch.cuda;
they are never shipped (the script only defines the CounterSource protocol they follow)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iteragpu.lab import mesure_memoire as mm

SCRIPT = Path(mm.__file__).resolve()
LAB_DIR = SCRIPT.parent
SCHEMA_PATH = LAB_DIR / "result.schema.json"
DATA = Path(__file__).resolve().parent / "data"
# A result written by mesure_memoire.py 1.0.0 with the fake backend below (its counters are
# not a measurement): the schema must keep reading it.
RESULT_1_0_0 = DATA / "result-1.0.0-fake-counters.json"


# The locale variables the script reads its default language from (mm.LOCALE_VARIABLES).
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def run_script(
    *args: str,
    cwd: Path,
    isolated: bool = True,
    timeout: float = 120,
    locale: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run mesure_memoire.py as a user would; `-I -S` keeps site-packages (and torch) away.

    The test machine's locale is replaced by `locale` (none by default: the source language),
    so that what a run prints does not depend on where the tests run.
    """
    flags = ["-I", "-S"] if isolated else ["-I"]
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARIABLES}
    return subprocess.run(
        [sys.executable, *flags, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**env, **(locale or {})},
    )


# The phase records of the validation case: one warm-up record, one record per warm repeat.
VALIDATION_PHASES = [
    "model_load",
    "inputs",
    "cold_forward",
    "warmup",
    "warm_forward",
    "warm_forward",
]


def validation_argv(output: Path, *extra: str) -> list[str]:
    """`measure` with the guide's validation case: batch 1, context 16, width 64, float32."""
    return [
        *["measure", "--device", "cuda:0", "--batch", "1", "--context", "16"],
        *["--width", "64", "--dtype", "float32", "--warmup", "1", "--repeats", "2"],
        "--output",
        str(output),
        *extra,
    ]


NOTEBOOK_SOURCE = LAB_DIR / "iteragpu_lab.py"


def _percent_cells(text: str) -> list[tuple[str, list[str], str]]:
    """(header, tags, body) of each cell of a jupytext percent source, the header included."""
    headers = re.findall(r"^# %%.*$", text, flags=re.M)
    bodies = re.split(r"^# %%.*$", text, flags=re.M)[1:]
    cells = []
    for header, body in zip(headers, bodies, strict=True):
        match = re.search(r"tags=(\[[^\]]*\])", header)
        cells.append((header, json.loads(match.group(1)) if match else [], body))
    return cells


def notebook_source(lang: str, text: str | None = None) -> str:
    """The percent source without the cells tagged for another language (no jupytext needed):
    what `lang`'s notebook runs, its comments aside."""
    text = NOTEBOOK_SOURCE.read_text("utf-8") if text is None else text
    prologue = re.split(r"^# %%.*$", text, flags=re.M)[0]
    kept = [
        header + body
        for header, tags, body in _percent_cells(text)
        if all(t == f"lang-{lang}" for t in tags if t.startswith("lang-"))
    ]
    return prologue + "".join(kept)


def notebook_code_cells(lang: str = mm.SOURCE_LANGUAGE) -> dict[str, str]:
    """Code cells of `lang`'s notebook by tag, from the percent source (no jupytext needed)."""
    cells = {}
    for header, tags, body in _percent_cells(notebook_source(lang)):
        names = [t for t in tags if not t.startswith("lang-")]
        if "[markdown]" not in header and names:
            cells[names[0]] = body
    return cells


def notebook_namespace(*tags: str, lang: str = mm.SOURCE_LANGUAGE) -> dict[str, Any]:
    """The namespace after running these code cells of `lang`'s notebook, in this order."""
    cells = notebook_code_cells(lang)
    namespace: dict[str, Any] = {}
    for tag in tags:
        exec(compile(cells[tag], f"<notebook {lang} {tag}>", "exec"), namespace)
    return namespace


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


class FakeOutOfMemoryError(RuntimeError):
    """Named like torch.OutOfMemoryError."""


FakeOutOfMemoryError.__name__ = "OutOfMemoryError"


class FakeCounterSource:
    """TEST-ONLY fake of torch.cuda for one device: logs every call, simulates allocations.

    `failures` maps a method name to an exception raised on each call of that method.
    """

    def __init__(self, log: list[str] | None = None) -> None:
        self.log: list[str] = [] if log is None else log
        self.allocated = 0
        self.reserved = 0
        self.peak_allocated = 0
        self.peak_reserved = 0
        self.failures: dict[str, BaseException] = {}

    def _call(self, name: str) -> None:
        self.log.append(name)
        if name in self.failures:
            raise self.failures[name]

    # the CounterSource protocol
    def synchronize(self) -> None:
        self._call("synchronize")

    def memory_allocated(self) -> int:
        self._call("memory_allocated")
        return self.allocated

    def memory_reserved(self) -> int:
        self._call("memory_reserved")
        return self.reserved

    def max_memory_allocated(self) -> int:
        self._call("max_memory_allocated")
        return self.peak_allocated

    def max_memory_reserved(self) -> int:
        self._call("max_memory_reserved")
        return self.peak_reserved

    def reset_peak_memory_stats(self) -> None:
        self._call("reset_peak_memory_stats")
        self.peak_allocated = self.allocated
        self.peak_reserved = self.reserved

    # simulation helpers
    def allocate(self, nbytes: int) -> None:
        self.allocated += nbytes
        block = 2 * 1024 * 1024
        self.reserved = max(self.reserved, -(-self.allocated // block) * block)
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def free(self, nbytes: int) -> None:
        self.allocated -= nbytes


class FakeWorkload:
    """TEST-ONLY workload: allocates on the fake device and logs `run:<step>`.

    `fail_on_forward` = n makes the n-th forward pass (1-based) raise `error` after
    allocating part of its temporary memory, like a real out-of-memory.
    """

    MODEL_BYTES = 10_000
    INPUT_BYTES = 1_000
    TEMP_BYTES = 50_000
    OUTPUT_BYTES = 1_000

    def __init__(
        self,
        device: FakeCounterSource,
        fail_on_forward: int | None = None,
        error: BaseException | None = None,
    ) -> None:
        self.device = device
        self.forwards = 0
        self.fail_on_forward = fail_on_forward
        self.error = error or FakeOutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.has_output = False

    def load_model(self) -> None:
        self.device.log.append("run:load_model")
        self.device.allocate(self.MODEL_BYTES)

    def make_inputs(self) -> None:
        self.device.log.append("run:make_inputs")
        self.device.allocate(self.INPUT_BYTES)

    def forward(self) -> None:
        self.device.log.append("run:forward")
        self.forwards += 1
        self.device.allocate(self.TEMP_BYTES // 2)
        if self.forwards == self.fail_on_forward:
            self.device.free(self.TEMP_BYTES // 2)
            raise self.error
        self.device.allocate(self.TEMP_BYTES // 2)
        self.device.free(self.TEMP_BYTES)
        if not self.has_output:
            self.device.allocate(self.OUTPUT_BYTES)
            self.has_output = True


class FakeBackend:
    """TEST-ONLY backend for mm.main(..., backend_factory=...)."""

    counters_source = "injected"

    def __init__(self, args: argparse.Namespace, **workload_kw: Any) -> None:
        self.source = FakeCounterSource()
        self.workload = FakeWorkload(self.source, **workload_kw)
        env = mm.collect_environment(args.device, None, "ModuleNotFoundError: fake", args.lang)
        env["requested_device_usable"] = True
        env["requested_device_problem"] = None
        self.environment = env


def fake_factory(**workload_kw: Any) -> Callable[[argparse.Namespace], FakeBackend]:
    created: list[FakeBackend] = []

    def factory(args: argparse.Namespace) -> FakeBackend:
        backend = FakeBackend(args, **workload_kw)
        created.append(backend)
        return backend

    factory.created = created  # type: ignore[attr-defined]
    return factory


def unreadable_reserved(args: argparse.Namespace) -> FakeBackend:
    """A fake backend whose reserved counter cannot be read (the result records null)."""
    backend = fake_factory()(args)
    backend.source.failures["memory_reserved"] = RuntimeError("no reserved counter")
    return backend


def make_clock(step_ns: int = 1_000_000) -> Callable[[], int]:
    """A deterministic clock: each call advances by step_ns."""
    ticks = iter(range(0, 10**15, step_ns))
    return lambda: next(ticks)


# ---------------------------------------------------------------------------------------------
# A TEST-ONLY simulation of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp),
# written from its constants and rules, independently of mesure_memoire.py's own arithmetic:
#   round_size: a request under kMinBlockSize (512 B) takes 512 B, others round up to 512 B;
#   pools: requests <= kSmallSize (1 MiB) use the small pool, others the large pool;
#   get_allocation_size: a new small segment is kSmallBuffer (2 MiB); a large request under
#     kMinLargeAlloc (10 MiB) gets a kLargeBuffer (20 MiB) segment; bigger ones round up to
#     kRoundLarge (2 MiB);
#   get_free_block: the smallest free block of the pool that fits (best fit), lowest address
#     among equals;
#   should_split: small pool: when >= 512 B remain; large pool: when more than 1 MiB remains;
#   free: a block merges with free neighbours of its segment; segments stay reserved (cached);
#   out of memory: free every cached segment that is wholly free, retry once, then raise.
# Defaults only: no max_split_size, no roundup_power2_divisions, no expandable segments.
# ---------------------------------------------------------------------------------------------

K_MIN_BLOCK_SIZE = 512
K_SMALL_SIZE = 1_048_576
K_SMALL_BUFFER = 2_097_152
K_LARGE_BUFFER = 20_971_520
K_MIN_LARGE_ALLOC = 10_485_760
K_ROUND_LARGE = 2_097_152

# PyTorch's default cuBLAS workspace before Hopper, CUBLAS_WORKSPACE_CONFIG=":4096:2:16:8":
# 2 x 4096 KiB + 8 x 16 KiB (aten/src/ATen/cuda/CublasHandlePool.cpp).
CUBLAS_WORKSPACE_PRE_HOPPER_BYTES = (4096 * 2 + 16 * 8) * 1024


def pytorch_round_size(nbytes: int) -> int:
    if nbytes < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    return K_MIN_BLOCK_SIZE * ((nbytes + K_MIN_BLOCK_SIZE - 1) // K_MIN_BLOCK_SIZE)


def pytorch_allocation_size(size: int) -> int:
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)


@dataclass
class _Block:
    segment: int
    offset: int
    size: int
    allocated: bool = False


@dataclass
class _Segment:
    small: bool
    size: int
    blocks: list[_Block] = field(default_factory=list)


class SimulatedCachingAllocator:
    """TEST-ONLY: one device's caching allocator and its counters (a CounterSource)."""

    def __init__(self, capacity_bytes: int = 80 * 2**30) -> None:
        self.capacity = capacity_bytes
        self.segments: dict[int, _Segment] = {}
        self._next_segment = 0
        self.allocated = 0
        self.reserved = 0
        self.peak_allocated = 0
        self.peak_reserved = 0
        self.log: list[str] = []

    # the CounterSource protocol
    def synchronize(self) -> None:
        self.log.append("synchronize")

    def memory_allocated(self) -> int:
        return self.allocated

    def memory_reserved(self) -> int:
        return self.reserved

    def max_memory_allocated(self) -> int:
        return self.peak_allocated

    def max_memory_reserved(self) -> int:
        return self.peak_reserved

    def reset_peak_memory_stats(self) -> None:
        self.peak_allocated, self.peak_reserved = self.allocated, self.reserved

    # the allocator
    def malloc(self, nbytes: int) -> _Block:
        size = pytorch_round_size(nbytes)
        small = size <= K_SMALL_SIZE
        block = self._best_fit(size, small)
        if block is None:
            block = self._new_segment(size, small)
        if block is None:
            self.empty_cache()  # the allocator releases its cache before giving up
            block = self._new_segment(size, small)
        if block is None:
            raise FakeOutOfMemoryError(f"CUDA out of memory. Tried to allocate {size} B")
        self._split(block, size, small)
        block.allocated = True
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def free(self, block: _Block) -> None:
        block.allocated = False
        self.allocated -= block.size
        blocks = self.segments[block.segment].blocks
        merged: list[_Block] = []
        for b in blocks:
            if merged and not merged[-1].allocated and not b.allocated:
                merged[-1].size += b.size
            else:
                merged.append(b)
        blocks[:] = merged

    def empty_cache(self) -> None:
        for key, segment in list(self.segments.items()):
            if not any(b.allocated for b in segment.blocks):
                self.reserved -= segment.size
                del self.segments[key]

    def _best_fit(self, size: int, small: bool) -> _Block | None:
        free = [
            b
            for s in self.segments.values()
            if s.small == small
            for b in s.blocks
            if not b.allocated and b.size >= size
        ]
        return min(free, key=lambda b: (b.size, b.segment, b.offset), default=None)

    def _new_segment(self, size: int, small: bool) -> _Block | None:
        segment_size = pytorch_allocation_size(size)
        if self.reserved + segment_size > self.capacity:
            return None
        key = self._next_segment
        self._next_segment += 1
        block = _Block(key, 0, segment_size)
        self.segments[key] = _Segment(small, segment_size, [block])
        self.reserved += segment_size
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        return block

    def _split(self, block: _Block, size: int, small: bool) -> None:
        remaining = block.size - size
        if (small and remaining >= K_MIN_BLOCK_SIZE) or (not small and remaining > K_SMALL_SIZE):
            blocks = self.segments[block.segment].blocks
            rest = _Block(block.segment, block.offset + size, remaining)
            blocks.insert(blocks.index(block) + 1, rest)
            block.size = size


class SimulatedWorkload:
    """TEST-ONLY: the lab network's tensors, in PyTorch's eager order, on the simulated allocator.

    load_model creates the six parameters; make_inputs the input; the first forward also takes
    the cuBLAS workspace (kept, like PyTorch's); each forward makes LayerNorm's output, mean and
    rstd (float32, one per row), then Linear, GELU and Linear outputs, freeing each input as
    nn.Sequential drops it, and finally replaces the previous output.
    """

    def __init__(
        self,
        allocator: SimulatedCachingAllocator,
        batch: int,
        context: int,
        width: int,
        dtype: str,
        workspace_bytes: int = CUBLAS_WORKSPACE_PRE_HOPPER_BYTES,
    ) -> None:
        self.allocator = allocator
        self.rows = batch * context
        self.width = width
        self.element = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
        self.workspace_bytes = workspace_bytes
        self.parameters: list[_Block] = []
        self.inputs: _Block | None = None
        self.output: _Block | None = None
        self.workspace: _Block | None = None

    def load_model(self) -> None:
        w, h = self.width, 4 * self.width
        for numel in (w, w, h * w, h, w * h, w):
            self.parameters.append(self.allocator.malloc(numel * self.element))

    def make_inputs(self) -> None:
        self.inputs = self.allocator.malloc(self.rows * self.width * self.element)

    def forward(self) -> None:
        a = self.allocator
        normed = a.malloc(self.rows * self.width * self.element)
        for statistic in (a.malloc(self.rows * 4), a.malloc(self.rows * 4)):
            a.free(statistic)
        if self.workspace is None and self.workspace_bytes:
            self.workspace = a.malloc(self.workspace_bytes)
        up = a.malloc(self.rows * 4 * self.width * self.element)
        a.free(normed)
        activated = a.malloc(self.rows * 4 * self.width * self.element)
        a.free(up)
        down = a.malloc(self.rows * self.width * self.element)
        a.free(activated)
        if self.output is not None:
            a.free(self.output)
        self.output = down


class SimulatedTrainWorkload(SimulatedWorkload):
    """TEST-ONLY: the lab's training step on the simulated allocator, in PyTorch's eager order
    (its tensors only; no arithmetic). forward keeps what autograd saves for backward
    (LayerNorm's output, mean and rstd; the up and GELU outputs) and the output; loss adds the
    mean squared error's difference and scalar; backward frees them, makes each parameter's
    gradient (in the parameter's dtype) through temporaries, and drops output and loss; AdamW's
    first step makes exp_avg and exp_avg_sq per parameter (its `step` counters live on the
    host: not in the device's counters); zero_grad(set_to_none=True) frees the gradients.

    `fail` = (phase, step) makes that phase raise FakeOutOfMemoryError after allocating half a
    large temporary, as a real out-of-memory leaves the allocator."""

    def __init__(
        self,
        allocator: SimulatedCachingAllocator,
        batch: int,
        context: int,
        width: int,
        precision: str,
        optimizer: str,
        fail: tuple[str, int] | None = None,
    ) -> None:
        dtype = {"fp32": "float32", "bf16": "bfloat16", "autocast-bf16": "float32"}[precision]
        super().__init__(allocator, batch, context, width, dtype)
        self.optimizer = optimizer
        self.autocast = precision == "autocast-bf16"
        self.fail = fail
        self.step = 0
        self.target: _Block | None = None
        self.saved: list[_Block] = []
        self.loss_block: _Block | None = None
        self.grads: list[_Block] = []
        self.states: list[_Block] = []
        self.raw = {"parameters": 0, "gradients": 0, "optimizer_state": 0}

    def numels(self) -> list[int]:
        w, h = self.width, 4 * self.width
        return [w, w, h * w, h, w * h, w]

    def load_model(self) -> None:
        super().load_model()
        self.raw["parameters"] = sum(self.numels()) * self.element

    def make_inputs(self) -> None:
        super().make_inputs()
        self.target = self.allocator.malloc(self.rows * self.width * self.element)

    def _maybe_fail(self, phase: str) -> None:
        if self.fail == (phase, self.step):
            block = self.allocator.malloc(self.rows * 64 * self.width)
            self.allocator.free(block)
            raise FakeOutOfMemoryError(f"CUDA out of memory in {phase} (simulated)")

    def forward(self) -> None:
        self.step += 1
        self._maybe_fail("forward")
        a = self.allocator
        size = 2 if self.autocast else self.element
        if self.autocast:  # autocast's bf16 copies of the weights, kept for backward
            self.saved += [a.malloc(n * 2) for n in self.numels()[2:]]
        if self.workspace is None and self.workspace_bytes:
            self.workspace = a.malloc(self.workspace_bytes)
        normed = a.malloc(self.rows * self.width * self.element)
        statistics = [a.malloc(self.rows * 4), a.malloc(self.rows * 4)]
        up = a.malloc(self.rows * 4 * self.width * size)
        activated = a.malloc(self.rows * 4 * self.width * size)
        self.output = a.malloc(self.rows * self.width * size)
        self.saved += [normed, *statistics, up, activated]

    def loss(self) -> None:
        self._maybe_fail("loss")
        a = self.allocator
        difference = a.malloc(self.rows * self.width * 4)
        self.saved.append(difference)
        self.loss_block = a.malloc(4)

    def backward(self) -> None:
        self._maybe_fail("backward")
        a = self.allocator
        first = not self.grads
        temporaries = [a.malloc(self.rows * 4 * self.width * self.element) for _ in range(2)]
        if first:
            self.grads = [a.malloc(n * self.element) for n in self.numels()]
        for block in temporaries + self.saved:
            a.free(block)
        self.saved = []
        for block in (self.output, self.loss_block):
            if block is not None:
                a.free(block)
        self.output = self.loss_block = None
        self.raw["gradients"] = sum(self.numels()) * self.element

    def optimizer_step(self) -> None:
        self._maybe_fail("optimizer_step")
        a = self.allocator
        if self.optimizer == "adamw" and not self.states:
            self.states = [a.malloc(n * self.element) for n in self.numels() for _ in range(2)]
            self.raw["optimizer_state"] = 2 * sum(self.numels()) * self.element
        temporary = a.malloc(max(self.numels()) * self.element)  # foreach's intermediate
        a.free(temporary)

    def zero_grad(self) -> None:
        self._maybe_fail("zero_grad")
        for block in self.grads:
            self.allocator.free(block)
        self.grads = []
        self.raw["gradients"] = 0

    def parts(self) -> dict[str, int | None]:
        stepped = self.optimizer == "adamw" and bool(self.states)
        return {
            "parameters_bytes": self.raw["parameters"],
            "parameters_allocated_bytes": sum(b.size for b in self.parameters),
            "gradients_bytes": self.raw["gradients"],
            "gradients_allocated_bytes": sum(b.size for b in self.grads),
            "optimizer_state_bytes": self.raw["optimizer_state"],
            "optimizer_state_allocated_bytes": sum(b.size for b in self.states),
            "optimizer_state_host_bytes": 6 * 4 if stepped else 0,
        }


class SimulatedBackend:
    """TEST-ONLY backend: the simulated allocator and workload behind mm.main."""

    counters_source = "injected"

    def __init__(
        self, args: argparse.Namespace, fail: tuple[str, int] | None = None, **kw: Any
    ) -> None:
        self.allocator = SimulatedCachingAllocator(**kw)
        self.source = self.allocator
        self.workload: Any = SimulatedWorkload(
            self.allocator, args.batch, args.context, args.width, args.dtype
        )
        if getattr(args, "task", "forward") == "train":
            self.workload = SimulatedTrainWorkload(
                self.allocator,
                args.batch,
                args.context,
                args.width,
                args.precision,
                args.optimizer,
                fail,
            )
        env = mm.collect_environment(args.device, None, "ModuleNotFoundError: simulated", args.lang)
        env["requested_device_usable"] = True
        env["requested_device_problem"] = None
        self.environment = env


class NamespaceCounters:
    """TEST-ONLY counters for a real PyTorch program on the CPU, where torch.cuda has none: the
    allocated level is every CPU tensor reachable from the program's namespace (its tensors,
    each module's parameters, buffers and their `.grad`, each optimizer's state, lists and
    dicts of them, a Trainer's model and optimizer), each storage counted once and rounded up to
    512 B as the caching allocator would take it. Tensors only autograd's graph holds (saved
    activations) are not seen, so the level is below a real allocator's; the peak is the
    highest level read since the last reset, at the protocol's readings only. A simulation for
    replaying the pages' examples, never a measurement."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.peak = self.reserved = 0
        self.log: list[str] = []

    def _tensors(self) -> list[Any]:
        import torch

        found: list[Any] = []
        stack: list[Any] = list(self.namespace.values())
        visited: set[int] = set()
        while stack:
            value = stack.pop()
            if id(value) in visited:
                continue
            visited.add(id(value))
            if isinstance(value, torch.Tensor):
                found.append(value)
                if value.is_leaf and value.grad is not None:
                    found.append(value.grad)
            elif isinstance(value, torch.nn.Module):
                stack += [*value.parameters(), *value.buffers()]
            elif isinstance(value, torch.optim.Optimizer) or hasattr(value, "param_groups"):
                stack += [p for group in value.param_groups for p in group["params"]]
                stack += [v for state in value.state.values() for v in state.values()]
            elif isinstance(value, list | tuple):
                stack += list(value)
            elif isinstance(value, dict):
                stack += list(value.values())
            elif hasattr(value, "model") and hasattr(value, "optimizer"):  # a Trainer
                stack += [value.model, value.optimizer]
        return found

    def _level(self) -> int:
        seen: set[int] = set()
        total = 0
        for tensor in self._tensors():
            storage = tensor.untyped_storage()
            if tensor.device.type != "cpu" or storage.nbytes() == 0:
                continue
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += pytorch_round_size(storage.nbytes())
        self.peak = max(self.peak, total)
        # Segments stay reserved (no empty_cache): reserved never falls.
        self.reserved = max(self.reserved, -(-total // K_SMALL_BUFFER) * K_SMALL_BUFFER)
        return total

    def synchronize(self) -> None:
        self.log.append("synchronize")

    def memory_allocated(self) -> int:
        return self._level()

    def memory_reserved(self) -> int:
        self._level()
        return self.reserved

    def max_memory_allocated(self) -> int:
        return max(self.peak, self._level())

    def max_memory_reserved(self) -> int:
        return self.memory_reserved()

    def reset_peak_memory_stats(self) -> None:
        self.peak = 0
        self._level()


class _StandInStorage:
    def __init__(self, address: int, nbytes: int) -> None:
        self.address, self.size = address, nbytes

    def data_ptr(self) -> int:
        return self.address

    def nbytes(self) -> int:
        return self.size


class StandInTensor:
    """TEST-ONLY: what the lab reads of a tensor (its storage's address and size, its device,
    shape, dtype and `.grad`), without PyTorch."""

    def __init__(
        self, address: int, numel: int, element: int, dtype: str, device: str = "cuda:0"
    ) -> None:
        self.storage = _StandInStorage(address, numel * element)
        self.device = device
        self.shape = (numel,)
        self.dtype = f"torch.{dtype}"
        self.requires_grad = True
        self.grad: StandInTensor | None = None

    def untyped_storage(self) -> _StandInStorage:
        return self.storage


class SimulatedModel:
    """TEST-ONLY: a SimulatedTrainWorkload's parameters and gradients as a model's, and its
    optimizer's state as an optimizer's (`param_groups`, `state`), for the Recorder's walk."""

    def __init__(self, workload: SimulatedTrainWorkload) -> None:
        self.workload = workload
        self.param_groups = [{"params": []}]

    def _tensors(self) -> list[StandInTensor]:
        w = self.workload
        dtype = {4: "float32", 2: "bfloat16"}[w.element]
        numels = w.numels()
        tensors = []
        for i, block in enumerate(w.parameters):
            tensor = StandInTensor(
                1 + block.segment * 2**40 + block.offset, numels[i], w.element, dtype
            )
            if w.grads:
                grad = w.grads[i]
                tensor.grad = StandInTensor(
                    1 + grad.segment * 2**40 + grad.offset, numels[i], w.element, dtype
                )
            tensors.append(tensor)
        return tensors

    def parameters(self) -> list[StandInTensor]:
        return self._tensors()

    @property
    def state(self) -> dict[int, dict[str, StandInTensor]]:
        w = self.workload
        dtype = {4: "float32", 2: "bfloat16"}[w.element]
        numels = w.numels()
        state: dict[int, dict[str, StandInTensor]] = {}
        for i in range(len(w.states) // 2):
            moments = w.states[2 * i : 2 * i + 2]
            state[i] = {
                "step": StandInTensor(2**50 + i, 1, 4, "float32", "cpu"),
                **{
                    name: StandInTensor(
                        1 + b.segment * 2**40 + b.offset, numels[i], w.element, dtype
                    )
                    for name, b in zip(("exp_avg", "exp_avg_sq"), moments, strict=True)
                },
            }
        return state
