"""Read a lab `measure` result (IteraGPU Lab v1 JSON) as evidence about one device.

A file is used only once it is known to be what the lab writes: at most `MAX_EVIDENCE_BYTES`,
strict JSON (no NaN or infinities, no fractions or exponents, integers within 64 bits, no
duplicate keys, nesting at most `MAX_NESTING`), valid against the lab's own
`result.schema.json`, and consistent in the ways a schema cannot express (the measured device is
listed once, with a name; a reserved peak within the device's capacity; the outcome agreeing
with its phases; readings that can be true together, `_check_sense`). Anything else is an
`EvidenceError` with a one-line message, written as a catalogue template and values
(`iteragpu.core.numbers.InputError`) so that the CLI can say it in the reader's language:
nothing of the JSON parser's or the schema validator's English wording is passed on, only
positions, keys and the schema's rule names.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from iteragpu.core.numbers import InputError

# About 450 B per phase as the lab writes it: some 550 repeats. Checking a file against the
# schema takes about 0.3 ms per phase, so this bound keeps a command well under a second.
MAX_EVIDENCE_BYTES = 256 * 2**10
# The lab writes at most six levels of nesting.
MAX_NESTING = 16
MAX_INTEGER = 2**64 - 1  # byte counters and durations are 64-bit counters
_MAX_INTEGER_DIGITS = len(str(MAX_INTEGER))


class EvidenceError(InputError):
    """A file that is not a usable lab result; `path` names it once known."""

    path: Path | None = None

    def __init__(self, template: str, **values: str) -> None:
        super().__init__(template, "not_evidence", **values)

    def __str__(self) -> str:
        message = super().__str__()
        return message if self.path is None else f"{self.path}: {message}"


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


# The six counters of a phase, in the order the lab writes them.
COUNTER_KEYS = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)


# A phase's parts (schema 1.3.0): what the program's own tensors hold at its end, and what the
# lab computes from them and the counters; in the order the lab writes them.
PART_KEYS = (
    "parameters_bytes",
    "parameters_allocated_bytes",
    "gradients_bytes",
    "gradients_allocated_bytes",
    "optimizer_state_bytes",
    "optimizer_state_allocated_bytes",
    "optimizer_state_host_bytes",
    "model_state_allocated_bytes",
    "activations_and_temporaries_bytes",
    "peak_excess_bytes",
)


@dataclass(frozen=True)
class PhaseRecord:
    """One phase as the lab recorded it; a counter not read is None, never 0."""

    phase: str
    repeat: int | None
    status: str  # "ok", "failed" or "interrupted"
    counters: dict[str, int | None]  # by COUNTER_KEYS
    error_type: str | None
    error_message: str | None
    out_of_memory: bool
    # schema 1.1.0 and later: allocated bytes `predict` gives for the end of the phase
    predicted_end_allocated_bytes: int | None
    end_allocated_difference_bytes: int | None
    # schema 1.3.0: the training step it belongs to (1 the first), its parts (PART_KEYS; None
    # when not counted) and the model states `predict --task train` gives for its end
    step: int | None = None
    parts: dict[str, int | None] | None = None
    predicted_model_state_bytes: int | None = None
    model_state_difference_bytes: int | None = None

    @property
    def name(self) -> str:
        """The phase as the report names it: `warm_forward #2`, `backward (2)`."""
        if self.repeat is not None:
            return f"{self.phase} #{self.repeat}"
        return self.phase if self.step is None else f"{self.phase} ({self.step})"


@dataclass(frozen=True)
class ParameterGroup:
    """Parameters of one shape, dtype and trainability, and how many (schema 1.3.0)."""

    shape: tuple[int, ...]
    dtype: str
    trainable: bool
    count: int


@dataclass(frozen=True)
class LabResult:
    """A whole lab result: the evidence, its phases and what the lab predicted for them."""

    evidence: Evidence
    schema_version: str
    phases: tuple[PhaseRecord, ...]
    # the lab's network (None in a Recorder's result: the reader's model has no such record)
    parameter_count: int | None
    element_size_bytes: int | None
    predicted_parameter_bytes: int | None
    predicted_parameter_bytes_rounded_512: int | None
    counters_unavailable_reason: str | None
    # schema 1.1.0 and later: what cold_forward allocated beyond the prediction (cuBLAS first)
    cold_forward_unexplained_bytes: int | None
    # schema 1.3.0: what was measured (forward, train, recorder), by which process of how many,
    # the training's optimizer as recorded, and the parameters an estimate starts from
    task: str = "forward"
    rank: int = 0
    world_size: int = 1
    optimizer: str | None = None
    precision: str | None = None
    parameter_groups: tuple[ParameterGroup, ...] | None = None

    @property
    def peak_allocated_bytes(self) -> int | None:
        """The highest allocated peak of any phase, or None when none was read."""
        peaks = [p.counters["peak_allocated_bytes"] for p in self.phases]
        read = [peak for peak in peaks if peak is not None]
        return max(read) if read else None


def read_evidence(path: Path) -> Evidence:
    """The evidence in the lab result at `path`, or an `EvidenceError` saying why not."""
    return read_lab_result(path).evidence


def read_lab_result(path: Path) -> LabResult:
    """The lab result at `path` with its phases, or an `EvidenceError` saying why not."""
    try:
        result = _load(path)
        return _lab_result(_evidence(path, result), result)
    except EvidenceError as error:
        error.path = path
        raise


def _phase_record(record: dict[str, Any]) -> PhaseRecord:
    error = record["error"]
    prediction = record.get("prediction")
    parts = record.get("parts")
    expected = record.get("parts_prediction")
    return PhaseRecord(
        phase=record["phase"],
        repeat=record["repeat"],
        status=record["status"],
        counters={key: record[key] for key in COUNTER_KEYS},
        error_type=None if error is None else error["type"],
        error_message=None if error is None else error["message"],
        out_of_memory=error is not None and error["out_of_memory"],
        predicted_end_allocated_bytes=None
        if prediction is None
        else prediction["end_allocated_bytes"],
        end_allocated_difference_bytes=None
        if prediction is None
        else prediction["end_allocated_difference_bytes"],
        step=record.get("step"),
        parts=None if parts is None else {key: parts[key] for key in PART_KEYS},
        predicted_model_state_bytes=None
        if expected is None
        else expected["model_state_allocated_bytes"],
        model_state_difference_bytes=None
        if expected is None
        else expected["model_state_difference_bytes"],
    )


def _lab_result(evidence: Evidence, result: dict[str, Any]) -> LabResult:
    network = result.get("network") or {}
    prediction = result.get("prediction")
    training = result.get("training") or {}
    groups = result.get("parameter_groups")
    return LabResult(
        evidence=evidence,
        schema_version=result["schema_version"],
        phases=tuple(_phase_record(record) for record in result["phases"]),
        parameter_count=network.get("parameter_count"),
        element_size_bytes=network.get("element_size_bytes"),
        predicted_parameter_bytes=network.get("predicted_parameter_bytes"),
        predicted_parameter_bytes_rounded_512=network.get("predicted_parameter_bytes_rounded_512"),
        counters_unavailable_reason=result.get("counters_unavailable_reason"),
        cold_forward_unexplained_bytes=None
        if prediction is None
        else prediction["cold_forward_unexplained_bytes"],
        task=result.get("task", "forward"),
        rank=result.get("rank", 0),
        world_size=result.get("world_size", 1),
        optimizer=training.get("optimizer"),
        precision=training.get("precision"),
        parameter_groups=None
        if groups is None
        else tuple(
            ParameterGroup(tuple(g["shape"]), g["dtype"], g["trainable"], g["count"])
            for g in groups
        ),
    )


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_EVIDENCE_BYTES + 1)
    except FileNotFoundError:
        raise EvidenceError("no such file") from None
    except IsADirectoryError:
        raise EvidenceError("a folder, not a file") from None
    except PermissionError:
        raise EvidenceError("cannot be read: permission denied") from None
    except OSError as error:
        # The system's own wording is English: name the error code instead (EIO, ELOOP...).
        code = errno.errorcode.get(error.errno or 0, str(error.errno))
        raise EvidenceError("cannot be read (error {code})", code=code) from None
    if len(data) > MAX_EVIDENCE_BYTES:
        raise EvidenceError(
            "larger than {limit} bytes, not a lab result", limit=str(MAX_EVIDENCE_BYTES)
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvidenceError("not UTF-8 text, not a lab result") from None
    try:
        result = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_refuse_fraction,
            parse_int=_bounded_integer,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        raise EvidenceError("nested too deeply, not a lab result") from None
    except json.JSONDecodeError as error:
        raise EvidenceError(
            "not JSON (line {line}, column {column})",
            line=str(error.lineno),
            column=str(error.colno),
        ) from None
    depth = max(_depths(result), default=0)
    if depth > MAX_NESTING:
        raise EvidenceError("nested {depth} levels deep, not a lab result", depth=str(depth))
    _validate_schema(result)
    if not isinstance(result, dict):  # the schema says so; this tells mypy
        raise EvidenceError("not a JSON object")
    _check_sense(result)
    return result


def _check_sense(result: dict[str, Any]) -> None:
    """Refuse the first reading that cannot be true, naming where it is (a JSON Pointer), in
    the order web/results.js checks them (the viewer's verdicts are pinned to these):

    - a counter read although the run says its counters were unavailable (caching off: PyTorch
      then reports 0 whatever is allocated, which the lab never records as a reading);
    - a counter of a completed phase left unread with no read error saying why;
    - a phase's peak below its own start or end level (the lab resets the peaks after reading
      the start levels, and reads the peaks before the end levels);
    - reserved below allocated at the same reading (the caching allocator reserves every block
      it hands out);
    - (schema 1.3.0) a part whose bytes as allocated are below its raw bytes, or a computed part
      that is not what its inputs give (the model states' sum, allocated minus the model states,
      the peak minus the end level);
    - a rank outside its world size.
    """
    rank, world = result.get("rank"), result.get("world_size")
    if rank is not None and world is not None and rank >= world:
        raise EvidenceError(
            "{where}: process {rank} is outside a run of {world} processes",
            where="/rank",
            rank=str(rank),
            world=str(world),
        )
    available = result.get("counters_unavailable_reason") is None
    for index, phase in enumerate(result["phases"]):
        at = f"/phases/{index}/"
        errors = phase.get("read_errors") or {}
        for key in COUNTER_KEYS:
            value = phase[key]
            if not available and value is not None:
                raise EvidenceError(
                    "{where} holds a reading, but the run says its counters could not be read",
                    where=at + key,
                )
            completed = phase["status"] == "ok"
            if available and value is None and completed and key not in errors:
                raise EvidenceError(
                    "{where} was not read in a completed phase, and no read error says why",
                    where=at + key,
                )
        for kind in ("allocated", "reserved"):
            peak = phase[f"peak_{kind}_bytes"]
            for level_name in ("start", "end"):
                level = phase[f"{level_name}_{kind}_bytes"]
                if peak is None or level is None or peak >= level:
                    continue
                values = {"where": f"{at}peak_{kind}_bytes", "peak": str(peak)}
                # Two literal templates: the catalogue extracts each message as written.
                if level_name == "start":
                    raise EvidenceError(
                        "{where}: the peak, {peak} B, is below the phase's start level, {level} B",
                        level=str(level),
                        **values,
                    )
                raise EvidenceError(
                    "{where}: the peak, {peak} B, is below the phase's end level, {level} B",
                    level=str(level),
                    **values,
                )
        for reading in ("start", "peak", "end"):
            allocated = phase[f"{reading}_allocated_bytes"]
            reserved = phase[f"{reading}_reserved_bytes"]
            if allocated is not None and reserved is not None and reserved < allocated:
                raise EvidenceError(
                    "{where}: reserved, {reserved} B, is below allocated, {allocated} B, "
                    "at the same reading",
                    where=f"{at}{reading}_reserved_bytes",
                    reserved=str(reserved),
                    allocated=str(allocated),
                )
        if phase.get("parts") is not None:
            _check_parts(phase["parts"], phase, f"{at}parts/")


def _computed_parts(parts: dict[str, Any], phase: dict[str, Any]) -> dict[str, int | None]:
    """What the lab computes of a phase's parts from the counted ones and the counters."""
    sums = [
        parts[f"{part}_allocated_bytes"] for part in ("parameters", "gradients", "optimizer_state")
    ]
    model_state = None if None in sums else sum(sums)
    end, peak = phase["end_allocated_bytes"], phase["peak_allocated_bytes"]
    rest = None if end is None or model_state is None else end - model_state
    return {
        "model_state_allocated_bytes": model_state,
        "activations_and_temporaries_bytes": None if rest is None or rest < 0 else rest,
        "peak_excess_bytes": None if end is None or peak is None else peak - end,
    }


def _check_parts(parts: dict[str, Any], phase: dict[str, Any], at: str) -> None:
    for part in ("parameters", "gradients", "optimizer_state"):
        raw, allocated = parts[f"{part}_bytes"], parts[f"{part}_allocated_bytes"]
        if raw is not None and allocated is not None and allocated < raw:
            raise EvidenceError(
                "{where}: {allocated} B as allocated is below the raw {raw} B",
                where=f"{at}{part}_allocated_bytes",
                allocated=str(allocated),
                raw=str(raw),
            )
    for key, expected in _computed_parts(parts, phase).items():
        if parts[key] != expected:
            raise EvidenceError(
                "{where} is {value}, not what the lab computes from the phase, {expected}",
                where=at + key,
                value=str(parts[key]),
                expected=str(expected),
            )


def _refuse_constant(name: str) -> NoReturn:
    raise EvidenceError("{name} is not a number the lab writes", name=repr(name))


def _refuse_fraction(text: str) -> NoReturn:
    # The lab writes every quantity as an integer; 1e999 would otherwise become inf.
    raise EvidenceError(
        "{number} is not a whole number; the lab writes only integers",
        number=repr(_shortened(text)),
    )


def _bounded_integer(text: str) -> int:
    # Checked before int(): Python refuses (or takes long over) integers of thousands of digits.
    if len(text.lstrip("-")) > _MAX_INTEGER_DIGITS or abs(int(text)) > MAX_INTEGER:
        raise EvidenceError("{number} is beyond a 64-bit counter", number=repr(_shortened(text)))
    return int(text)


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise EvidenceError(
                "the key {key} appears twice in one object", key=repr(_shortened(key))
            )
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


def _validate_schema(result: Any) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(result))
    if error is None:
        return
    # A JSON Pointer: "/" is the whole document.
    where = "/" + "/".join(str(part) for part in error.absolute_path)
    rule, expected = error.validator, error.validator_value
    if rule == "required" and isinstance(error.instance, dict):
        missing = next((key for key in expected if key not in error.instance), "")
        raise EvidenceError(
            "not a lab measure result: the key {key} is missing at {where}",
            key=repr(missing),
            where=where,
        )
    if rule == "type":
        types = [expected] if isinstance(expected, str) else list(expected)
        raise EvidenceError(
            "not a lab measure result: the value at {where} must be of JSON type {types}",
            where=where,
            types=" | ".join(repr(t) for t in types),
        )
    raise EvidenceError(
        "not a lab measure result: the value at {where} breaks the schema rule {rule}",
        where=where,
        rule=_shortened(f"{rule}: {json.dumps(expected, ensure_ascii=False)}", 120),
    )


def _evidence(path: Path, result: dict[str, Any]) -> Evidence:
    """Checks the schema cannot make, then the figures the short list uses."""
    device_text = result["device"]
    if device_text == "cpu":
        raise EvidenceError(
            "the device is cpu: its counters were injected, not read from a GPU; not a measurement"
        )
    _, _, suffix = device_text.partition(":")
    if len(suffix) > _MAX_INTEGER_DIGITS:  # the schema allows any number of digits
        raise EvidenceError(
            "device {device}: index out of range", device=repr(_shortened(device_text))
        )
    index = int(suffix) if suffix else 0
    devices = [d for d in result["environment"]["devices"] if d["index"] == index]
    if not devices:
        raise EvidenceError(
            "device index {index} ({device}) is not in environment.devices",
            index=str(index),
            device=repr(device_text),
        )
    if len(devices) > 1:
        raise EvidenceError(
            "device index {index} appears {count} times in environment.devices",
            index=str(index),
            count=str(len(devices)),
        )
    (device,) = devices
    flagged = [d["index"] for d in result["environment"]["devices"] if d.get("requested") is True]
    if flagged and flagged != [index]:  # schema 1.1.0 marks the measured device
        raise EvidenceError(
            "environment.devices marks {flagged} as measured, but the run names device {index}",
            flagged=str(flagged),
            index=str(index),
        )
    if device["name"] is None:
        raise EvidenceError(
            "the name of device {index} was not read: the run cannot be tied to a card",
            index=str(index),
        )
    capacity = device["total_memory_bytes"]
    phases = result["phases"]
    peaks = [p["peak_reserved_bytes"] for p in phases if p["peak_reserved_bytes"] is not None]
    peak = max(peaks) if peaks else None
    if peak is not None and capacity is not None and peak > capacity:
        raise EvidenceError(
            "a reserved peak of {peak} B exceeds the device's {capacity} B",
            peak=str(peak),
            capacity=str(capacity),
        )
    outcome = result["outcome"]
    failed = [p for p in phases if p["status"] == "failed"]
    if outcome["status"] == "ok" and failed:
        raise EvidenceError("the outcome is ok but a phase failed")
    between_phases = outcome["failed_phase"] is None and result.get("task") == "recorder"
    if (
        outcome["status"] == "failed"
        and not between_phases
        and not any(p["phase"] == outcome["failed_phase"] for p in failed)
    ):
        raise EvidenceError(
            "the outcome names {phase} as failed, but no such phase failed",
            phase=repr(outcome["failed_phase"]),
        )
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
