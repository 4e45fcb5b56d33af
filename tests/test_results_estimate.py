"""The results page's estimate beside model_load (src/iteragpu/web/results.js) against
`iteragpu report`: the same figures (`--json`) and the same words (the text) for the same result
and inputs, in every language. The results are the lab's, written on its test-only fake backends:
synthetic counters, not measurements.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from results_support import run_node, synthetic_result
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.docs_tools.results_page import results_data
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

# (params, bits) as a reader types them; None: the network the lab recorded.
INPUTS: dict[str, list[tuple[str | None, str | None]]] = {
    "ko": [
        (None, None),
        ("7e9", "16"),
        ("33216", "32"),
        ("1.5B", "4.5"),
        ("70M", "3"),
        ("33217", "3"),
    ],
    "id": [
        (None, None),
        ("7e9", "16"),
        ("33216", "32"),
        ("1,5B", "4,5"),
        ("70M", "3"),
        ("33217", "3"),
    ],
}
REFUSED = [("٣", "16"), ("7e9", "0"), ("7.5", "16"), ("1e16", "16"), ("7e9", "65"), ("x", "8")]
KINDS = ("simulated", "oom", "nulls")


def _python(path: Path, lang: str, params: str | None, bits: str | None) -> Any:
    extra = [] if params is None else ["--params", params, "--bits", str(bits)]
    runner = CliRunner()
    text = runner.invoke(app, ["report", str(path), "--lang", lang, *extra])
    payload = runner.invoke(app, ["report", str(path), "--json", *extra, "--lang", lang])
    return text, payload


def _cases(tmp_path: Path) -> list[dict[str, Any]]:
    cases = []
    for kind in KINDS:
        for lang in CODES:
            path = synthetic_result(tmp_path, kind, lang)
            data = results_data(lang)
            for params, bits in [*INPUTS[lang], *REFUSED]:
                cases.append(
                    {
                        "path": str(path),
                        "params": params,
                        "bits": bits,
                        "lang": lang,
                        "messages": data["messages"],
                        "symbols": NUMBER_SYMBOLS[lang],
                    }
                )
    return cases


def test_the_page_says_what_iteragpu_report_says(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    answers = run_node("estimate", cases)
    compared = 0
    for case, answer in zip(cases, answers, strict=True):
        where = (Path(case["path"]).name, case["params"], case["bits"])
        text, payload = _python(Path(case["path"]), case["lang"], case["params"], case["bits"])
        if "refused" in answer:
            assert text.exit_code == 2 and payload.exit_code == 2, (where, text.output)
            continue
        assert text.exit_code == 0, (where, text.output)
        expected = json.loads(payload.stdout)["estimate"]
        got = answer["comparison"]
        for key, js_key in (
            ("parameters", "parameters"),
            ("from_result", "fromResult"),
            ("estimated_weights_bytes", "estimatedWeightsBytes"),
            ("model_load_allocated_bytes", "modelLoadAllocatedBytes"),
            ("difference_bytes", "differenceBytes"),
            ("block_rounding_bytes", "blockRoundingBytes"),
            ("unexplained_bytes", "unexplainedBytes"),
            ("model_load_cached_bytes", "modelLoadCachedBytes"),
            ("cold_forward_unexplained_bytes", "coldForwardUnexplainedBytes"),
        ):
            value = got[js_key]
            value = int(value) if isinstance(value, str) else value
            assert value == expected[key], (where, key, value, expected[key])
        assert Fraction(got["bits"]) == Fraction(expected["bits"]), where
        assert Fraction(got["estimatedWeightsExactBytes"]) == Fraction(
            expected["estimated_weights_bytes_exact"]
        ), where
        if expected["difference_share"] is None:
            assert got["differenceShare"] is None, where
        else:
            # The JSON writes an endless share to 20 places; the page keeps it exact.
            error = abs(Fraction(got["differenceShare"]) - Fraction(expected["difference_share"]))
            assert error <= Fraction(1, 2 * 10**20), where
        # The words: the title, the table's cells and the explanation, as the CLI prints them.
        title, table, explanation = text.stdout.rstrip("\n").split("\n\n")[-3:]
        assert answer["texts"]["title"] == title, where
        assert answer["texts"]["lines"] == explanation.splitlines(), where
        for row in answer["texts"]["rows"]:
            (line,) = [line for line in table.splitlines() if line.startswith(row[0])]
            assert line.split()[-len(" ".join(row[1:]).split()) :] == " ".join(row[1:]).split(), (
                where,
                row,
                line,
            )
        compared += 1
    assert compared == len(KINDS) * sum(len(inputs) for inputs in INPUTS.values())


@pytest.mark.parametrize("lang", CODES)
def test_a_counter_not_read_is_never_a_zero_difference(tmp_path: Path, lang: str) -> None:
    path = synthetic_result(tmp_path, "nulls", lang)
    data = results_data(lang)
    case = {
        "path": str(path),
        "params": None,
        "bits": None,
        "lang": lang,
        "messages": data["messages"],
        "symbols": NUMBER_SYMBOLS[lang],
    }
    (answer,) = run_node("estimate", [case])
    assert answer["comparison"]["modelLoadCachedBytes"] is None
    assert all(
        data["messages"]["explain_segments"].split("{")[0] not in line
        for line in answer["texts"]["lines"]
    )
