"""The results page on training results (lab schema 1.3.0), pinned to Python: the estimate of
`iteragpu train` per item (src/iteragpu/web/results.js `groupStates` against
iteragpu.training.groups over generated groups), and for results the lab writes on its test-only
simulated allocator (synthetic counters, not a measurement), the first step beside the warm
ones, the highest peak of several ranks and the items beside the counted bytes, as
`iteragpu report --json` says them; readings that cannot be true are refused alike."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from results_support import rank_results, run_node, train_result
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.gpus.evidence import EvidenceError, _load
from iteragpu.training.groups import Group, group_states
from iteragpu.training.records import OPTIMIZERS, PRECISIONS, TrainRequest
from iteragpu.training.states import FUSED_OPTIMIZERS

DTYPES = ("float32", "bfloat16", "float16", "uint8")
group_st = st.builds(
    dict,
    shape=st.lists(st.integers(min_value=1, max_value=5000), min_size=0, max_size=3),
    dtype=st.sampled_from(DTYPES),
    trainable=st.booleans(),
    count=st.integers(min_value=1, max_value=10**6),
).filter(lambda g: g["dtype"] != "uint8" or not g["trainable"])  # PyTorch trains floats only
request_st = st.builds(
    dict,
    precision=st.sampled_from(PRECISIONS),
    optimizer=st.sampled_from(OPTIMIZERS),
    fused=st.booleans(),
)


def python_states(case: dict[str, Any]) -> dict[str, str] | None:
    request = TrainRequest(**case["request"])
    if request.fused and request.optimizer not in FUSED_OPTIMIZERS:
        return None
    groups = [
        Group(tuple(g["shape"]), g["dtype"], g["trainable"], g["count"]) for g in case["groups"]
    ]
    s = group_states(groups, request)
    return {
        "gradient": str(s.gradient_bytes),
        "gpu": str(s.optimizer_gpu_bytes),
        "host": str(s.optimizer_host_bytes),
        "master_weight": str(s.master_weight_bytes),
        "master_gradient": str(s.master_gradient_bytes),
    }


def test_the_page_states_each_item_as_iteragpu_train_does() -> None:
    cases: list[dict[str, Any]] = []

    @settings(
        max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(group_st, min_size=0, max_size=6), request_st)
    def collect(groups: list[dict[str, Any]], request: dict[str, Any]) -> None:
        cases.append({"groups": groups, "request": request})

    collect()
    # every precision with every optimizer, fused or not, on groups of each kind
    edge = [{"shape": [4096, 1], "dtype": "bfloat16", "trainable": True, "count": 3}]
    edge += [{"shape": [4095], "dtype": "float16", "trainable": True, "count": 1}]
    edge += [{"shape": [7, 5, 3], "dtype": "float32", "trainable": True, "count": 2}]
    cases += [
        {"groups": edge, "request": {"precision": p, "optimizer": o, "fused": f}}
        for p in PRECISIONS
        for o in OPTIMIZERS
        for f in (False, True)
    ]
    answers = run_node("states", cases)
    mismatches = [
        (case, answer, python_states(case))
        for case, answer in zip(cases, answers, strict=True)
        if answer != python_states(case)
    ]
    assert mismatches == []
    assert sum(answer is None for answer in answers) >= 4  # fused Adafactor and 8-bit AdamW
    assert len({json.dumps(a) for a in answers}) > 100  # the cases differ, or they prove little


def _cli(*args: str) -> dict[str, Any]:
    done = CliRunner().invoke(app, ["report", *args, "--json"], prog_name="iteragpu")
    assert done.exit_code == 0, done.output
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


REQUESTS = [
    {"precision": "fp32", "optimizer": "adamw", "fused": False},
    {"precision": "fp32", "optimizer": "adamw", "fused": True},
    {"precision": "bf16-master", "optimizer": "sgd-momentum", "fused": False},
]


def test_the_page_says_what_iteragpu_report_says_of_a_training_run(tmp_path: Path) -> None:
    train = train_result(tmp_path)
    ranks = rank_results(tmp_path)
    cases = [{"paths": [str(train)], "request": r} for r in REQUESTS]
    cases += [{"paths": [str(p) for p in ranks], "request": r} for r in REQUESTS]
    answers = run_node("training", cases)
    for case, answer in zip(cases, answers, strict=True):
        request = case["request"]
        flags = ["--precision", request["precision"], "--optimizer", request["optimizer"]]
        payload = _cli(*case["paths"], *flags, *(["--fused"] if request["fused"] else []))
        objects = payload.get("results", [payload])
        for shown, page_items in zip(objects, answer["items"], strict=True):
            cli_items = [
                {
                    "item": i["item"],
                    "estimated": str(i["estimated_bytes"]),
                    "measured": None if i["measured_bytes"] is None else str(i["measured_bytes"]),
                    "difference": None
                    if i["difference_bytes"] is None
                    else str(i["difference_bytes"]),
                }
                for i in shown["train_estimate"]["items"]
            ]
            assert page_items["items"] == cli_items
        for shown, rows in zip(objects, answer["rows"], strict=True):
            names = [
                p["phase"] + (f" ({p['step']})" if p["step"] is not None else "")
                for p in shown["phases"]
            ]
            assert rows == names
        if len(objects) > 1:
            best = payload["highest_peak"]
            assert answer["highest"]["peak"] == str(best["peak_allocated_bytes"])
            assert answer["highest"]["phase"] == best["phase"]
            assert objects[int(answer["highest"]["index"])]["rank"] == best["rank"]
    # the first step beside the warm ones, computed here from the file
    recorded = json.loads(train.read_text("utf-8"))
    steps = answers[0]["steps"][0]
    for row in steps:
        first = [
            p["peak_allocated_bytes"]
            for p in recorded["phases"]
            if p["phase"] == row["phase"] and p["step"] == 1
        ]
        warm = [
            p["peak_allocated_bytes"]
            for p in recorded["phases"]
            if p["phase"] == row["phase"] and (p["step"] or 0) > 1
        ]
        assert (row["first"], row["warm"]) == (str(max(first)), str(max(warm)))


def _refusals(tmp_path: Path) -> list[tuple[str, dict[str, Any], str]]:
    document = json.loads(train_result(tmp_path).read_text("utf-8"))

    def edited(name: str, edit: Any, code: str) -> tuple[str, dict[str, Any], str]:
        changed = copy.deepcopy(document)
        edit(changed)
        return name, changed, code

    def rank(d: dict[str, Any]) -> None:
        d["rank"] = 1

    def raw(d: dict[str, Any]) -> None:
        d["phases"][4]["parts"]["gradients_allocated_bytes"] = 1

    def rest(d: dict[str, Any]) -> None:
        d["phases"][4]["parts"]["activations_and_temporaries_bytes"] += 1

    def excess(d: dict[str, Any]) -> None:
        d["phases"][2]["parts"]["peak_excess_bytes"] = (
            0 if d["phases"][2]["parts"]["peak_excess_bytes"] else 1
        )

    return [
        edited("rank outside", rank, "rank_outside_world"),
        edited("below raw", raw, "part_below_raw"),
        edited("rest", rest, "part_not_computed"),
        edited("excess", excess, "part_not_computed"),
    ]


def test_parts_that_cannot_be_true_are_refused_by_both(tmp_path: Path) -> None:
    cases = _refusals(tmp_path)
    paths = []
    for index, (_, document, _) in enumerate(cases):
        path = tmp_path / f"refused-{index}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    answers = run_node("verdicts", [str(p) for p in paths])
    for (name, _, code), path, answer in zip(cases, paths, answers, strict=True):
        assert answer["ok"] is False and answer["problem"]["code"] == code, (name, answer)
        try:
            _load(path)
        except EvidenceError as error:
            assert answer["problem"]["where"] in str(error), name
        else:
            raise AssertionError(f"{name}: the evidence reader accepted it")
