"""Frozen records: what `@dataclass(frozen=True)` gives the package's value types, for a
fraction of its cost at start-up.

A dataclass writes and compiles its methods when its class is created, about a millisecond
each, and `iteragpu model` used to create some twenty at every run (`benchmarks/model_bench.py`).
A `Record` subclass is created in microseconds: its fields are read from its annotations once,
and the methods are shared. Type checkers read a subclass as a frozen dataclass (PEP 681):
the constructor they check is the fields' signature.

What a subclass gets, as a frozen dataclass has it: positional or keyword construction in the
fields' order, defaults from class attributes, `__post_init__` (for validation) called after
the fields are set, `==` and `hash` over the fields (same class only), a dataclass-like
`repr`, and `FrozenRecordError` (an `AttributeError`) on assignment or deletion. Not given:
`dataclasses.fields`, `replace` or `asdict` (no caller uses them), slots, ordering.
"""

from __future__ import annotations

from typing import Any, ClassVar, dataclass_transform


class FrozenRecordError(AttributeError):
    """A field of a record was assigned or deleted (dataclasses' `FrozenInstanceError`)."""


@dataclass_transform(frozen_default=True)
class Record:
    """Base of a frozen record; its fields are its annotated class attributes, in order."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The class's own annotations (not inherited ones; not through inspect, which the
        # package's importers need not load). They are strings (`from __future__ import
        # annotations`): a ClassVar is told by its spelling, and nothing is evaluated.
        own = [
            name
            for name, annotation in vars(cls).get("__annotations__", {}).items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        ]
        fields = (*cls._fields, *(name for name in own if name not in cls._fields))
        defaults = dict(cls._defaults)
        for name in own:
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
        defaulted = False
        for name in fields:
            if name in defaults:
                defaulted = True
            elif defaulted:
                raise TypeError(f"non-default field {name!r} follows a default field")
        cls._fields, cls._defaults = fields, defaults

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(
                f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} given"
            )
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name in values or name not in fields:
                what = "got two values for" if name in values else "has no field"
                raise TypeError(f"{type(self).__name__}() {what} {name!r}")
            values[name] = value
        if kwargs or len(values) < len(fields):
            # The fields' own order, so that ==, hash and repr follow it.
            ordered = {}
            for name in fields:
                if name in values:
                    ordered[name] = values[name]
                elif name in self._defaults:
                    ordered[name] = self._defaults[name]
                else:
                    raise TypeError(f"{type(self).__name__}() is missing field {name!r}")
            values = ordered
        object.__setattr__(self, "__dict__", values)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({fields})"
