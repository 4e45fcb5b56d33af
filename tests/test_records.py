"""`iteragpu.core.records.Record`: what a frozen dataclass gave the value types, field by field,
checked against `@dataclass(frozen=True)` itself."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from iteragpu.core.records import FrozenRecordError, Record


class Layout(Record):
    kind: str
    window: int | None
    heads: int = 8
    dims: tuple[int, ...] = (128, 128)

    @property
    def values(self) -> int:
        return self.heads * sum(self.dims)


@dataclasses.dataclass(frozen=True)
class LayoutDataclass:
    kind: str
    window: int | None
    heads: int = 8
    dims: tuple[int, ...] = (128, 128)


class Checked(Record):
    count: int

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"count must not be negative, got {self.count}")


CONSTRUCTIONS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("full", None), {}),
    (("sliding", 4096, 4), {}),
    (("full",), {"window": None, "dims": (64,)}),
    ((), {"dims": (1, 2), "kind": "x", "window": 3, "heads": 1}),
]


@pytest.mark.parametrize(("args", "kwargs"), CONSTRUCTIONS)
def test_a_record_is_built_as_a_frozen_dataclass_is(args: Any, kwargs: Any) -> None:
    record, reference = Layout(*args, **kwargs), LayoutDataclass(*args, **kwargs)
    assert repr(record) == repr(reference).replace("LayoutDataclass", "Layout")
    assert hash(record) == hash(reference)
    assert record == Layout(*args, **kwargs)
    assert record.values == reference.heads * sum(reference.dims)


def test_equality_and_hash_follow_the_fields_and_the_class() -> None:
    a, b = Layout("full", None), Layout(kind="full", window=None, heads=8)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Layout("full", None, 4)
    assert a != LayoutDataclass("full", None)  # another class, even with the same fields
    assert (a == ("full", None, 8, (128, 128))) is False  # not a tuple


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),  # fields missing
        (("a", 1, 2, (3,), 5), {}),  # too many
        (("a",), {"kind": "b", "window": 1}),  # a field given twice
        (("a", 1), {"x": 1}),  # no such field
    ],
)
def test_a_wrong_construction_is_a_type_error(args: Any, kwargs: Any) -> None:
    with pytest.raises(TypeError):
        LayoutDataclass(*args, **kwargs)
    with pytest.raises(TypeError):
        Layout(*args, **kwargs)


def test_a_record_is_frozen() -> None:
    record = Layout("full", None)
    with pytest.raises(FrozenRecordError):
        record.heads = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del record.kind  # type: ignore[misc]
    assert record.heads == 8


def test_post_init_checks_the_fields() -> None:
    assert Checked(3).count == 3
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_a_record_copies_and_pickles() -> None:
    record = Layout("sliding", 4096)
    assert copy.copy(record) == record
    assert copy.deepcopy(record) == record
    assert pickle.loads(pickle.dumps(record)) == record


def test_a_default_before_a_field_without_one_is_refused() -> None:
    with pytest.raises(TypeError, match="follows a default"):

        class Wrong(Record):
            first: int = 1
            second: int
