"""Read a lab `measure` result (IteraGPU Lab v1 JSON) as evidence about one device.

A file is used only once it is known to be what the lab writes: at most `MAX_EVIDENCE_BYTES`,
strict JSON (no NaN or infinities, no fractions or exponents, integers within 64 bits, no
duplicate keys, nesting at most `MAX_NESTING`), valid against the lab's own
`result.schema.json`, and consistent in the ways a schema cannot express (the measured device is
listed once, with a name; a reserved peak within the device's capacity; the outcome agreeing
with its phases). Anything else is an `EvidenceError` with a one-line message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

# About 450 B per phase as the lab writes it: some 550 repeats. Checking a file against the
# schema takes about 0.3 ms per phase, so this bound keeps a command well under a second.
MAX_EVIDENCE_BYTES = 256 * 2**10
# The lab writes at most six levels of nesting.
MAX_NESTING = 16
MAX_INTEGER = 2**64 - 1  # byte counters and durations are 64-bit counters
_MAX_INTEGER_DIGITS = len(str(MAX_INTEGER))


class EvidenceError(ValueError):
    """A file that is not a usable lab result."""


@dataclass(frozen=True)
class Evidence:
    path: Path
    device_name: str
    reported_capacity_bytes: int | None  # total memory the device reported (not the nominal GB)
    observed_reserved_peak_bytes: int | None  # highest reserved peak read in any phase
    outcome: str  # "ok", "failed" or "interrupted"
    out_of_memory: bool
    complete_readings: bool  # every counter of every phase was read
    failed_phase: str | None

    @property
    def succeeded(self) -> bool:
        return self.outcome == "ok"


def read_evidence(path: Path) -> Evidence:
    """The evidence in the lab result at `path`, or an `EvidenceError` saying why not."""
    result = _load(path)
    try:
        return _evidence(path, result)
    except EvidenceError as error:
        raise EvidenceError(f"{path}: {error}") from None


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_EVIDENCE_BYTES + 1)
    except FileNotFoundError:
        raise EvidenceError(f"{path}: no such file") from None
    except OSError as error:
        raise EvidenceError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_EVIDENCE_BYTES:
        raise EvidenceError(f"{path}: larger than {MAX_EVIDENCE_BYTES} bytes, not a lab result")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvidenceError(f"{path}: not UTF-8 text, not a lab result") from None
    try:
        result = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_refuse_fraction,
            parse_int=_bounded_integer,
            object_pairs_hook=_unique_keys,
        )
    except EvidenceError as error:
        raise EvidenceError(f"{path}: {error}") from None
    except RecursionError:
        raise EvidenceError(f"{path}: nested too deeply, not a lab result") from None
    except ValueError as error:  # json.JSONDecodeError included
        raise EvidenceError(f"{path}: not JSON ({error})") from None
    depth = max(_depths(result), default=0)
    if depth > MAX_NESTING:
        raise EvidenceError(f"{path}: nested {depth} levels deep, not a lab result")
    _validate_schema(path, result)
    if not isinstance(result, dict):  # the schema says so; this tells mypy
        raise EvidenceError(f"{path}: not a JSON object")
    return result


def _refuse_constant(name: str) -> NoReturn:
    raise EvidenceError(f"{name} is not a number the lab writes")


def _refuse_fraction(text: str) -> NoReturn:
    # The lab writes every quantity as an integer; 1e999 would otherwise become inf.
    raise EvidenceError(f"{_shortened(text)} is not a whole number; the lab writes only integers")


def _bounded_integer(text: str) -> int:
    # Checked before int(): Python refuses (or takes long over) integers of thousands of digits.
    if len(text.lstrip("-")) > _MAX_INTEGER_DIGITS or abs(int(text)) > MAX_INTEGER:
        raise EvidenceError(f"{_shortened(text)} is beyond a 64-bit counter")
    return int(text)


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise EvidenceError(f"the key {_shortened(key)!r} appears twice in one object")
        result[key] = value
    return result


def _depths(value: Any) -> Iterator[int]:
    """The depth of every container, iteratively (no recursion on hostile input)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            yield depth
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            yield depth
            stack.extend((child, depth + 1) for child in item)


@cache
def _validator() -> Any:
    import jsonschema

    # The lab's own schema, read as a file: the runtime package never imports the lab.
    text = resources.files("iteragpu").joinpath("lab/result.schema.json").read_text("utf-8")
    schema = json.loads(text)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _validate_schema(path: Path, result: Any) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(result))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        message = _shortened(" ".join(str(error.message).split()), 160)
        raise EvidenceError(f"{path}: not a lab measure result: at {where}: {message}")


def _fail(text: str) -> NoReturn:
    raise EvidenceError(text)


def _evidence(path: Path, result: dict[str, Any]) -> Evidence:
    """Checks the schema cannot make, then the figures the short list uses."""
    _, _, suffix = result["device"].partition(":")
    if len(suffix) > _MAX_INTEGER_DIGITS:  # the schema allows any number of digits
        _fail(f"device {_shortened(result['device'])}: index out of range")
    index = int(suffix) if suffix else 0
    devices = [d for d in result["environment"]["devices"] if d["index"] == index]
    if not devices:
        _fail(f"device index {index} ({result['device']}) is not in environment.devices")
    if len(devices) > 1:
        _fail(f"device index {index} appears {len(devices)} times in environment.devices")
    (device,) = devices
    flagged = [d["index"] for d in result["environment"]["devices"] if d.get("requested") is True]
    if flagged and flagged != [index]:  # schema 1.1.0 marks the measured device
        _fail(f"environment.devices marks {flagged} as measured, but the run names device {index}")
    if device["name"] is None:
        _fail(f"the name of device {index} was not read: the run cannot be tied to a card")
    capacity = device["total_memory_bytes"]
    phases = result["phases"]
    peaks = [p["peak_reserved_bytes"] for p in phases if p["peak_reserved_bytes"] is not None]
    peak = max(peaks) if peaks else None
    if peak is not None and capacity is not None and peak > capacity:
        _fail(f"a reserved peak of {peak} B exceeds the device's {capacity} B")
    outcome = result["outcome"]
    failed = [p for p in phases if p["status"] == "failed"]
    if outcome["status"] == "ok" and failed:
        _fail("the outcome is ok but a phase failed")
    if outcome["status"] == "failed" and not any(
        p["phase"] == outcome["failed_phase"] for p in failed
    ):
        _fail(f"the outcome names {outcome['failed_phase']} as failed, but no such phase failed")
    return Evidence(
        path=path,
        device_name=device["name"],
        reported_capacity_bytes=capacity,
        observed_reserved_peak_bytes=peak,
        outcome=outcome["status"],
        out_of_memory=any(p["error"] is not None and p["error"]["out_of_memory"] for p in failed),
        complete_readings=outcome["complete_readings"],
        failed_phase=outcome["failed_phase"],
    )
