"""The results page's validator (src/iteragpu/web/results.js) against Python's: the same verdict
as the CLI's evidence reader before its own checks (`iteragpu.gpus.evidence._load`: size, UTF-8,
strict JSON, then the lab's schema with `jsonschema`) on valid results the lab writes on its fake
backends and on every mutation of them below. The results are synthetic, not measurements.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_support import RESULT_1_0_0
from results_support import ROOT, rank_results, run_node, synthetic_result, train_result

from iteragpu.docs_tools.results_page import example_path
from iteragpu.gpus.evidence import MAX_EVIDENCE_BYTES, EvidenceError, _load
from iteragpu.i18n.languages import CODES

Path_ = tuple[str | int, ...]


def python_accepts(path: Path) -> bool:
    try:
        _load(path)
    except EvidenceError:
        return False
    return True


def _nodes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _nodes(child, (*path, index))


def _replaced(document: Any, path: Path_, value: Any) -> Any:
    copied = copy.deepcopy(document)
    *parents, last = path
    node = copied
    for part in parents:
        node = node[part]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return copied


_DELETE = object()


def schema_mutations(
    document: dict[str, Any], skip: tuple[str, ...] = ()
) -> Iterator[tuple[str, Any]]:
    """Every node deleted or given another value: of another type, out of range, an unknown
    key, a string with a final newline (which Python's `$` accepts); not under the top-level
    keys `skip` names (swept on another document)."""
    for path, value in _nodes(document):
        if not path or path[0] in skip:
            continue
        name = "/".join(str(part) for part in path)
        if isinstance(path[-1], str):
            yield f"delete {name}", _replaced(document, path, _DELETE)
        for label, other in (
            ("null", None),
            ("string", "x"),
            ("negative", -1),
            ("zero", 0),
            ("true", True),
            ("object", {}),
            ("array", []),
        ):
            if other != value or type(other) is not type(value):
                yield f"{name} = {label}", _replaced(document, path, other)
        if isinstance(value, str):
            yield f"{name} + newline", _replaced(document, path, value + "\n")
        if isinstance(value, dict):
            yield f"{name} + key", _replaced(document, path, {**value, "extra_key": 1})
        if isinstance(value, list):
            yield f"{name} + null item", _replaced(document, path, [*value, None])


def conditional_mutations(document: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The schema's if/then rules and enums, one by one."""
    outcome = document["outcome"]
    for status in ("ok", "failed", "interrupted"):
        for code in (0, 4, 130, 143):
            changed = {**outcome, "status": status, "exit_code": code}
            yield f"outcome {status} {code}", {**document, "outcome": changed}
    for task in ("forward", "train", "recorder", "fit"):
        yield f"task {task}", {**document, "task": task}
    for device in ("cpu", "cuda", "gpu:0"):
        for source in ("torch.cuda", "injected"):
            yield f"{device} {source}", {**document, "device": device, "counters_source": source}
    error = {"type": "ValueError", "message": "x"}
    for status, code in (("failed", 4), ("interrupted", 130)):
        changed = {**outcome, "status": status, "exit_code": code, "failed_phase": None}
        yield f"{status} between phases", {**document, "outcome": {**changed, "error": error}}
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        yield f"schema {version}", {**document, "schema_version": version}
        without = {k: v for k, v in document.items() if k != "language"}
        yield f"schema {version} no language", {**without, "schema_version": version}
    phases = document["phases"]
    for index, phase in enumerate(phases):
        for name in ("model_load", "warm_forward"):
            for repeat in (None, 1):
                record = {**phase, "phase": name, "repeat": repeat}
                yield (
                    f"phase {index} {name} repeat {repeat}",
                    _replaced(document, ("phases", index), record),
                )
        for status in ("ok", "failed", "interrupted"):
            record = {**phase, "status": status}
            yield f"phase {index} {status}", _replaced(document, ("phases", index), record)


def _text(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, indent=1)


def strict_json_cases(text: str) -> Iterator[tuple[str, bytes]]:
    """Texts that strict JSON and the evidence reader's bounds decide, around a valid result."""
    counter = '"duration_ns": 1000000'
    assert counter in text
    yield "valid", text.encode()
    yield "fraction", text.replace(counter, '"duration_ns": 1000000.0', 1).encode()
    yield "exponent", text.replace(counter, '"duration_ns": 1e6', 1).encode()
    yield "capital exponent", text.replace(counter, '"duration_ns": 1E6', 1).encode()
    yield "NaN", text.replace(counter, '"duration_ns": NaN', 1).encode()
    yield "Infinity", text.replace(counter, '"duration_ns": Infinity', 1).encode()
    yield "-Infinity", text.replace(counter, '"duration_ns": -Infinity', 1).encode()
    yield "largest 64-bit", text.replace(counter, f'"duration_ns": {2**64 - 1}', 1).encode()
    yield "beyond 64-bit", text.replace(counter, f'"duration_ns": {2**64}', 1).encode()
    yield "21 digits", text.replace(counter, '"duration_ns": 000000000000000000001', 1).encode()
    yield "huge", text.replace(counter, '"duration_ns": ' + "9" * 5000, 1).encode()
    yield "minus zero", text.replace(counter, '"duration_ns": -0', 1).encode()
    yield "leading zero", text.replace(counter, '"duration_ns": 01', 1).encode()
    yield "plus sign", text.replace(counter, '"duration_ns": +1', 1).encode()
    yield "duplicate top key", text.replace("{", '{"device": "cuda:0",', 1).encode()
    yield "duplicate inner key", text.replace(counter, f"{counter}, {counter}", 1).encode()
    yield "BOM", b"\xef\xbb\xbf" + text.encode()
    yield "not UTF-8", text.encode().replace(b'"cuda:0"', b'"cuda:\xff"', 1)
    yield "encoded surrogate", text.encode().replace(b'"cuda:0"', b'"\xed\xa0\x80"', 1)
    yield "trailing comma", text.rstrip().removesuffix("}").rstrip().encode() + b",}"
    yield "trailing text", (text + "x").encode()
    yield "trailing spaces", (text + " \n\t\r").encode()
    yield "leading spaces", (" \n" + text).encode()
    yield "single quotes", text.replace('"cuda:0"', "'cuda:0'", 1).encode()
    yield "raw tab in string", text.replace('"cuda:0"', '"cuda:\t0"', 1).encode()
    yield "escaped newline", text.replace('"cuda:0"', '"cuda:0\\n"', 1).encode()
    yield "escaped digit", text.replace('"cuda:0"', '"cuda:\\u0030"', 1).encode()
    yield "lone surrogate escape", text.replace('"x86_64"', '"\\ud800"', 1).encode()
    yield "bad escape", text.replace('"cuda:0"', '"cuda:\\x30"', 1).encode()
    yield "comment", ("// lab\n" + text).encode()
    yield "empty", b""
    yield "array", b"[]"
    deep = '{"a": ' * 16 + "1" + "}" * 16
    yield (
        "16 levels in units",
        text.replace('"units": {', f'"units": {{"deep": {deep},', 1).encode(),
    )
    flat = '{"a": ' * 15 + '"s"' + "}" * 15
    yield "depth 16", text.replace('"units": {', f'"units": {{"deep": {flat},', 1).encode()
    padded = text.encode()
    yield "at the size limit", padded + b" " * (MAX_EVIDENCE_BYTES - len(padded))
    yield "over the size limit", padded + b" " * (MAX_EVIDENCE_BYTES + 1 - len(padded))
    yield "unterminated", text[: len(text) // 2].encode()


# Results the lab wrote before schema 1.3.0 (synthetic counters): they must keep validating.
OLDER_RESULTS = sorted((Path(RESULT_1_0_0).parent).glob("result-1.*.json"))


def _results(tmp_path: Path) -> list[Path]:
    paths = [
        synthetic_result(tmp_path, kind, lang)
        for kind in ("simulated", "oom", "nulls")
        for lang in CODES
    ]
    paths += [train_result(tmp_path, lang) for lang in CODES]
    paths += rank_results(tmp_path)
    return [*paths, RESULT_1_0_0, *(example_path(lang) for lang in CODES), *OLDER_RESULTS]


def _compare(tmp_path: Path, cases: list[tuple[str, bytes]]) -> list[tuple[str, bool, Any]]:
    paths = []
    for index, (_, data) in enumerate(cases):
        path = tmp_path / f"case-{index}.json"
        path.write_bytes(data)
        paths.append(path)
    answers = run_node("verdicts", [str(p) for p in paths])
    rows = []
    for (name, _), path, answer in zip(cases, paths, answers, strict=True):
        rows.append((name, python_accepts(path), answer))
    return rows


def test_every_result_the_lab_writes_is_accepted(tmp_path: Path) -> None:
    paths = _results(tmp_path)
    answers = run_node("verdicts", [str(p) for p in paths])
    for path, answer in zip(paths, answers, strict=True):
        assert python_accepts(path), path
        assert answer == {"ok": True, "problem": None}, (path.name, answer)


def _sweep_document(tmp_path: Path, kind: str) -> dict[str, Any]:
    """A result to mutate: the forward passes (ok, failed), the training step (one step), a
    Recorder's first phases."""
    if kind == "train":
        document: dict[str, Any] = json.loads(train_result(tmp_path, steps=1).read_text("utf-8"))
        document["phases"] = document["phases"][3:6]  # loss, backward, optimizer_step
    elif kind == "recorder":
        document = json.loads(rank_results(tmp_path)[1].read_text("utf-8"))
        document["phases"] = document["phases"][2:6]
    else:
        document = json.loads(synthetic_result(tmp_path, kind).read_text("utf-8"))
    return document


@pytest.mark.parametrize("kind", ["simulated", "oom", "train", "recorder"])
def test_schema_verdicts_agree_with_jsonschema(tmp_path: Path, kind: str) -> None:
    document = _sweep_document(tmp_path, kind)
    # What the forward results hold too is swept on them.
    swept = ("environment", "network", "counters", "units", "command_line")
    skip = swept if kind in ("train", "recorder") else ()
    mutations = [*schema_mutations(document, skip), *conditional_mutations(document)]
    cases = [(name, _text(mutated).encode()) for name, mutated in mutations]
    rows = _compare(tmp_path, cases)
    refused = sum(1 for _, accepted, _ in rows if not accepted)
    # The sweep must exercise both verdicts, or it proves nothing.
    assert refused > 500 and len(rows) - refused > 20, (refused, len(rows))
    disagreements = [
        (name, accepted, answer) for name, accepted, answer in rows if accepted != answer["ok"]
    ]
    assert disagreements == []


def test_strict_json_verdicts_agree_with_the_evidence_reader(tmp_path: Path) -> None:
    text = synthetic_result(tmp_path, "simulated").read_text("utf-8")
    rows = _compare(tmp_path, list(strict_json_cases(text)))
    disagreements = [
        (name, accepted, answer) for name, accepted, answer in rows if accepted != answer["ok"]
    ]
    assert disagreements == []
    verdicts = {name: accepted for name, accepted, _ in rows}
    assert verdicts["valid"] and verdicts["largest 64-bit"] and verdicts["at the size limit"]
    assert not verdicts["fraction"] and not verdicts["duplicate inner key"]


def test_the_first_problem_is_named(tmp_path: Path) -> None:
    text = synthetic_result(tmp_path, "simulated").read_text("utf-8")
    document = json.loads(text)
    del document["phases"][2]["peak_reserved_bytes"]
    wrong = copy.deepcopy(json.loads(text))
    wrong["phases"][0]["end_allocated_bytes"] = "133632"
    cases = [
        ("missing", _text(document).encode()),
        ("type", _text(wrong).encode()),
        ("fraction", text.replace('"duration_ns": 1000000', '"duration_ns": 1.5', 1).encode()),
        (
            "duplicate",
            text.replace('"dtype": "float32"', '"dtype": "float32", "dtype": "x"', 1).encode(),
        ),
        ("utf8", b"\xff" + text.encode()),
        ("syntax", b'{"schema_version": }'),
    ]
    answers = {name: answer["problem"] for name, _, answer in _compare(tmp_path, cases)}
    assert answers["missing"] == {
        "code": "missing_key",
        "key": "'peak_reserved_bytes'",
        "where": "/phases/2",
    }
    assert answers["type"] == {
        "code": "wrong_type",
        "where": "/phases/0/end_allocated_bytes",
        "types": "'integer' | 'null'",
    }
    assert answers["fraction"] == {"code": "fraction", "number": "'1.5'"}
    assert answers["duplicate"] == {"code": "duplicate_key", "key": "'dtype'"}
    assert answers["utf8"] == {"code": "not_utf8"}
    assert answers["syntax"] == {"code": "not_json", "line": 1, "column": 20}


def test_a_schema_keyword_the_viewer_does_not_check_is_refused(tmp_path: Path) -> None:
    """A schema the page would only half check stops it: the test sees the error node prints."""
    import subprocess

    from results_support import DRIVER

    schema = json.loads(
        Path(example_path("ko"))
        .parent.parent.joinpath("lab", "result.schema.json")
        .read_text("utf-8")
    )
    schema["properties"]["device"]["maxLength"] = 10
    script = (
        f"const r = require({json.dumps(str(DRIVER.parents[2] / 'src/iteragpu/web/results.js'))});"
        f"try {{ r.loadSchema({json.dumps(schema)}); console.log('loaded'); }}"
        "catch (e) { console.log(e.message); }"
    )
    run_node("verdicts", [])  # skips where node is missing
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "results.js does not check the schema keyword maxLength"


def test_readings_that_cannot_be_true_are_refused_where_they_are(tmp_path: Path) -> None:
    """Schema-valid results whose readings contradict each other: the viewer and the evidence
    reader refuse them alike, naming the first reading at fault."""
    document = json.loads(synthetic_result(tmp_path, "simulated").read_text("utf-8"))
    phase = next(i for i, p in enumerate(document["phases"]) if p["end_allocated_bytes"])
    end = document["phases"][phase]["end_allocated_bytes"]

    def changed(**values: Any) -> bytes:
        mutated = copy.deepcopy(document)
        mutated["phases"][phase].update(values)
        return _text(mutated).encode()

    unavailable = copy.deepcopy(document)
    unavailable["counters_unavailable_reason"] = "PYTORCH_NO_CUDA_MEMORY_CACHING=1"
    unread = copy.deepcopy(document)
    unread["phases"][phase]["end_reserved_bytes"] = None
    unread["phases"][phase]["read_errors"] = {}
    start = document["phases"][phase]["start_allocated_bytes"]
    cases = [
        ("peak below end", changed(peak_allocated_bytes=1)),
        ("peak below start", changed(start_reserved_bytes=10**12, end_reserved_bytes=10**12)),
        ("reserved below allocated", changed(end_reserved_bytes=end - 1)),
        ("read while unavailable", _text(unavailable).encode()),
        ("unread without error", _text(unread).encode()),
    ]
    rows = {name: (accepted, answer) for name, accepted, answer in _compare(tmp_path, cases)}
    where = f"/phases/{phase}/"
    assert rows["peak below end"][1]["problem"] == {
        "code": "peak_below_end" if start <= 1 else "peak_below_start",
        "where": where + "peak_allocated_bytes",
        "peak": "1",
        "level": str(end if start <= 1 else start),
    }
    assert rows["peak below start"][1]["problem"]["code"] == "peak_below_start"
    assert rows["peak below start"][1]["problem"]["where"] == where + "peak_reserved_bytes"
    assert rows["reserved below allocated"][1]["problem"] == {
        "code": "reserved_below_allocated",
        "where": where + "end_reserved_bytes",
        "reserved": str(end - 1),
        "allocated": str(end),
    }
    assert rows["read while unavailable"][1]["problem"]["code"] == "counter_while_unavailable"
    assert rows["unread without error"][1]["problem"] == {
        "code": "counter_not_read",
        "where": where + "end_reserved_bytes",
    }
    for name, (accepted, answer) in rows.items():
        assert not accepted and not answer["ok"], name
    # The reader's message names the same place (the CLI says it in the reader's language).
    path = tmp_path / "peak.json"
    path.write_bytes(changed(peak_allocated_bytes=1))
    with pytest.raises(EvidenceError, match=where + "peak_allocated_bytes"):
        _load(path)


def test_every_problem_the_viewer_names_has_its_words_on_each_results_page() -> None:
    script = (ROOT / "src" / "iteragpu" / "web" / "results.js").read_text("utf-8")
    codes = set(re.findall(r'problem\(\s*"([a-z0-9_]+)"', script))
    codes |= set(re.findall(r'\? "([a-z0-9_]+)" : "([a-z0-9_]+)"', script)[0])
    assert {"peak_below_end", "reserved_below_allocated", "too_large"} <= codes
    for lang in CODES:
        page = (ROOT / "docs" / lang / "docs" / "results.md").read_text("utf-8")
        words = dict(re.findall(r'<span data-problem="([a-z0-9_]+)">([^<]+)</span>', page))
        assert codes <= set(words), (lang, sorted(codes - set(words)))
