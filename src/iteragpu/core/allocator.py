"""What PyTorch's caching allocator shows for the lab's network: the original of `predict`.

The allocator rounds every request up to a multiple of 512 bytes (kMinBlockSize in
c10/cuda/CUDACachingAllocator.cpp), so a tensor under 512 B takes 512 B. The lab's network is
LayerNorm(w) -> Linear(w, 4w) -> GELU -> Linear(4w, w), applied to a (batch, context, w) input.
The lab script keeps a copy of all this (it runs alone, from the archive): the property tests
pin its `predict` to `predict_allocations` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Final

ALLOCATOR_BLOCK_BYTES: Final = 512
ELEMENT_SIZE_BYTES: Final[dict[str, int]] = {"float32": 4, "float16": 2, "bfloat16": 2}
"""Bytes per value of each dtype the lab measures with."""


def network_parameter_shapes(width: int) -> list[tuple[str, tuple[int, ...]]]:
    """The parameter tensors of the lab's network, in the order it creates them.

    >>> [shape for _, shape in network_parameter_shapes(2)]
    [(2,), (2,), (8, 2), (8,), (2, 8), (2,)]
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


def round_up_to_block(nbytes: int) -> int:
    """One allocation as the allocator takes it, in whole 512-byte blocks.

    >>> round_up_to_block(1), round_up_to_block(512), round_up_to_block(513)
    (512, 512, 1024)
    """
    return -(-nbytes // ALLOCATOR_BLOCK_BYTES) * ALLOCATOR_BLOCK_BYTES


@dataclass(frozen=True)
class Tensor:
    name: str
    numel: int
    raw_bytes: int

    @property
    def allocated_bytes(self) -> int:
        return round_up_to_block(self.raw_bytes)


@dataclass(frozen=True)
class Step:
    """The tensors one step creates, and the allocated level after it."""

    tensors: tuple[Tensor, ...]
    before_bytes: int  # the allocated level before the step

    @property
    def raw_bytes(self) -> int:
        return sum(t.raw_bytes for t in self.tensors)

    @property
    def added_bytes(self) -> int:
        return sum(t.allocated_bytes for t in self.tensors)

    @property
    def rounding_bytes(self) -> int:
        return self.added_bytes - self.raw_bytes

    @property
    def allocated_bytes(self) -> int:
        return self.before_bytes + self.added_bytes


@dataclass(frozen=True)
class AllocationPrediction:
    element_size_bytes: int
    model_load: Step
    inputs: Step
    kept_output: Step  # the protocol keeps the last forward output alive between phases

    @property
    def parameter_count(self) -> int:
        return sum(t.numel for t in self.model_load.tensors)


def predict_allocations(batch: int, context: int, width: int, dtype: str) -> AllocationPrediction:
    """Allocated bytes after `model_load` and `inputs` in a fresh process, tensor by tensor.

    >>> p = predict_allocations(1, 16, 64, "float32")
    >>> p.model_load.allocated_bytes, p.inputs.added_bytes
    (133632, 4096)
    """
    size = ELEMENT_SIZE_BYTES[dtype]

    def tensor(name: str, shape: tuple[int, ...]) -> Tensor:
        return Tensor(name, prod(shape), prod(shape) * size)

    model_load = Step(tuple(tensor(n, s) for n, s in network_parameter_shapes(width)), 0)
    activation = (batch, context, width)
    inputs = Step((tensor("inputs", activation),), model_load.allocated_bytes)
    output = Step((tensor("output", activation),), inputs.allocated_bytes)
    return AllocationPrediction(size, model_load, inputs, output)
