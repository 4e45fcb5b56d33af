"""The CLI through typer's CliRunner: each command, each language, each bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from iteragpu import __version__
from iteragpu.cli import app
from iteragpu.examples import registry
from iteragpu.formatting import format_number

runner = CliRunner(env={"COLUMNS": "120"})


def kv_args(**values: str) -> list[str]:
    """`kv-cache` with the measurement guide's example; `values` replace or add options."""
    options = {"layers": "32", "kv_heads": "8", "head_dim": "128", "tokens": "8192"}
    options = {**options, "bytes_per_value": "2", **values}
    return ["kv-cache", *(x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", v))]


def invoke(*args: str):
    return runner.invoke(app, list(args), prog_name="iteragpu")


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"iteragpu {__version__}"


def test_help_lists_commands_and_exit_codes() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("weights", "kv-cache", "convert", "examples"):
        assert command in result.stdout
    assert "Exit codes" in result.stdout


@pytest.mark.parametrize("params", ["7e9", "7000000000", "7B", "7b", "7_000_000_000"])
def test_weights_json_accepts_every_count_spelling(params: str) -> None:
    result = invoke("weights", "--params", params, "--bits", "16", "--reserve-gib", "4", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["weights_bytes"] == 14_000_000_000
    assert isinstance(payload["weights_bytes"], int)
    assert round(payload["weights_gib"], 2) == 13.04
    assert payload["reserve_gib"] == 4
    assert round(payload["total_gib"], 2) == 17.04
    assert payload["total_bytes"] == 14_000_000_000 + 4 * 2**30


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("ko", ["14,000,000,000", "13.04", "17.04", "가중치만", "개략적 범위", "바이트 (B)"]),
        ("id", ["14.000.000.000", "13,04", "17,04", "Bobot saja", "Rentang kasar", "Byte (B)"]),
    ],
)
def test_weights_table_is_localised(lang: str, expected: list[str]) -> None:
    result = invoke(
        "weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "4", "--lang", lang
    )
    assert result.exit_code == 0, result.output
    for text in expected:
        assert text in result.stdout
    header = result.stdout.splitlines()[2]
    assert "GB" in header and "GiB" in header and "(B)" in header


def test_weights_default_language_is_korean() -> None:
    result = invoke("weights", "--params", "7e9", "--bits", "16")
    assert "가중치만" in result.stdout


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_four_bits_says_what_it_does_not_count(lang: str) -> None:
    result = invoke("weights", "--params", "7e9", "--bits", "4", "--lang", lang)
    assert result.exit_code == 0
    assert ("양자화" if lang == "ko" else "kuantisasi") in result.stdout
    payload = json.loads(invoke("weights", "--params", "7e9", "--bits", "4", "--json").stdout)
    assert payload["quantization_not_counted"] is True
    assert payload["weights_bytes"] == 3_500_000_000


def test_kv_cache_json_four_sequences() -> None:
    result = invoke(*kv_args(sequences="4"), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["kv_cache_bytes"] == 4 * 1_073_741_824
    assert payload["kv_cache_gib"] == 4


@pytest.mark.parametrize(("lang", "number"), [("ko", "1,073,741,824"), ("id", "1.073.741.824")])
def test_kv_cache_table_with_window(lang: str, number: str) -> None:
    result = invoke(*kv_args(tokens="16384", window="8192", lang=lang))
    assert result.exit_code == 0, result.output
    assert number in result.stdout


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_huge_sizes_stay_exact_in_tables(lang: str) -> None:
    ones = {"layers": "1", "kv_heads": "1", "head_dim": "1", "bytes_per_value": "1"}
    result = invoke(*kv_args(**ones, tokens="1e400", lang=lang))
    assert result.exit_code == 0, result.output
    exact = f"{2 * 10**400:,}"  # K and V: 2 x 10^400 bytes, grouped by Python, not Babel
    assert (exact if lang == "ko" else exact.replace(",", ".")) in result.stdout


def test_kv_cache_fractional_bytes_per_value_stays_exact() -> None:
    ones = {"layers": "1", "kv_heads": "1", "head_dim": "1", "tokens": "1"}
    result = invoke(*kv_args(**ones, bytes_per_value="0.5"), "--json")
    assert json.loads(result.stdout)["kv_cache_bytes"] == 1


@pytest.mark.parametrize(
    ("quantity", "unit", "byte_count", "value"),
    [
        ("24e9 B", "GiB", 24_000_000_000, "22.351741790771484375"),
        ("80 GB", "GiB", 80_000_000_000, "74.50580596923828125"),
        ("143771 MiB", "GB", 143771 * 2**20, "150.754820096"),
        ("1 Gb", "B", 125_000_000, "125000000"),
        ("2 gibibyte", "MiB", 2**31, "2048"),
    ],
)
def test_convert_json(quantity: str, unit: str, byte_count: int, value: str) -> None:
    result = invoke("convert", quantity, unit, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"bytes": byte_count, "value": value, "unit": unit}


@pytest.mark.parametrize(("lang", "text"), [("ko", "22.35"), ("id", "22,35")])
def test_convert_table(lang: str, text: str) -> None:
    result = invoke("convert", "24e9 B", "GiB", "--lang", lang)
    assert result.exit_code == 0
    assert text in result.stdout
    assert "(GiB)" in result.stdout


def test_examples_list_names_every_example() -> None:
    result = invoke("examples", "list")
    assert result.exit_code == 0
    for example_id in registry():
        assert example_id in result.stdout


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_examples_run_all_reproduces_every_stated_figure(lang: str) -> None:
    result = invoke("examples", "run", "--all", "--lang", lang, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [e["id"] for e in payload["examples"]] == list(registry())
    for example_json, example in zip(payload["examples"], registry().values(), strict=True):
        assert example_json["title"] == example.title[lang]
        for fig_json, fig in zip(example_json["figures"], example.figures, strict=True):
            assert fig_json["stated"] == format_number(fig.value, fig.decimals, lang)
            if fig.exact_bytes is not None:
                assert Fraction(fig_json["bytes"]) == fig.exact_bytes


@pytest.mark.parametrize(("lang", "needle"), [("ko", "13.04"), ("id", "13,04")])
def test_examples_run_one_table(lang: str, needle: str) -> None:
    result = invoke("examples", "run", "weights-7b-16bit-reserve-4gib", "--lang", lang)
    assert result.exit_code == 0
    assert needle in result.stdout
    assert "14" in result.stdout


BAD_INPUTS = [
    ("zero params", ["weights", "--params", "0", "--bits", "16"], "positive"),
    ("negative params", ["weights", "--params", "-7e9", "--bits", "16"], "positive"),
    ("nan params", ["weights", "--params", "nan", "--bits", "16"], "number"),
    ("infinite params", ["weights", "--params", "inf", "--bits", "16"], "number"),
    ("text params", ["weights", "--params", "seven", "--bits", "16"], "number"),
    ("fractional params", ["weights", "--params", "7.5", "--bits", "16"], "whole"),
    ("zero bits", ["weights", "--params", "7e9", "--bits", "0"], "positive"),
    ("negative bits", ["weights", "--params", "7e9", "--bits", "-4"], "positive"),
    (
        "negative reserve",
        ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "-1"],
        "negative",
    ),
    ("missing option", ["weights", "--bits", "16"], "--params"),
    ("unknown option", ["weights", "--params", "7e9", "--bits", "16", "--foo"], "--foo"),
    ("unknown lang", ["weights", "--params", "7e9", "--bits", "16", "--lang", "fr"], "fr"),
    ("zero layers", kv_args(layers="0"), "positive"),
    ("nan bytes per value", kv_args(bytes_per_value="nan"), "number"),
    ("static smaller than tokens", kv_args(static_max_tokens="10"), "static"),
    ("non-byte unit", ["convert", "5 meter", "GiB"], "meter"),
    ("unknown unit", ["convert", "5 foo", "GiB"], "foo"),
    ("non-byte target", ["convert", "5 GB", "percent"], "percent"),
    ("negative quantity", ["convert", "--", "-5 GB", "GiB"], "negative"),
    ("nan quantity", ["convert", "nan GB", "GiB"], "number"),
    ("unknown example", ["examples", "run", "nope"], "nope"),
    ("id and --all", ["examples", "run", "two-peaks", "--all"], "--all"),
]


@pytest.mark.parametrize(("name", "args", "needle"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(name: str, args: list[str], needle: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("iteragpu: error: ")
    assert needle in lines[0]
    assert "Traceback" not in result.output


def test_console_script_and_module_entry_points() -> None:
    module = subprocess.run(
        [sys.executable, "-m", "iteragpu", "weights", "--params", "7e9", "--bits", "16", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert module.returncode == 0
    assert json.loads(module.stdout)["weights_bytes"] == 14_000_000_000
    bad = subprocess.run(
        [sys.executable, "-m", "iteragpu", "convert", "5 meter", "GiB"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_fast_paths_import_neither_torch_nor_pint() -> None:
    code = (
        "import sys\n"
        "from iteragpu.cli import app\n"
        "try:\n"
        "    app(['weights', '--params', '7e9', '--bits', '16'], prog_name='iteragpu')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('torch', 'pint') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    code_help = code.replace(
        "['weights', '--params', '7e9', '--bits', '16']", "['--help']"
    ).replace("('torch', 'pint')", "('torch', 'pint', 'babel')")
    out = subprocess.run(
        [sys.executable, "-c", code_help], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
