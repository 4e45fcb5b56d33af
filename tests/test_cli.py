"""The CLI through typer's CliRunner: each command, each language, each bad input."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import per_language
from typer.testing import CliRunner

from iteragpu import __version__
from iteragpu.cli.app import MAX_DECIMALS, app
from iteragpu.cli.json_text import json_text
from iteragpu.core import kv_cache, weights
from iteragpu.core.numbers import exact_decimal_text
from iteragpu.docs_tools.pint_units import pint_registry
from iteragpu.examples import registry
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number

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
    for command in ("weights", "kv-cache", "convert", "shortlist", "report", "examples"):
        assert command in result.stdout
    assert "종료 코드" in result.stdout  # the source language's, under the C locale


@pytest.mark.parametrize("params", ["7e9", "7000000000", "7B", "7b", "7_000_000_000"])
def test_weights_json_accepts_every_count_spelling(params: str) -> None:
    result = invoke("weights", "--params", params, "--bits", "16", "--reserve-gib", "4", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["weights_bytes"] == 14_000_000_000
    assert isinstance(payload["weights_bytes"], int)
    assert payload["weights_gb"] == "14"
    assert payload["weights_gib"] == exact_decimal_text(Fraction(14_000_000_000, 2**30))
    assert payload["reserve_gib"] == "4"
    assert payload["total_gib"] == exact_decimal_text(Fraction(14_000_000_000 + 4 * 2**30, 2**30))
    assert payload["total_bytes"] == 14_000_000_000 + 4 * 2**30


@pytest.mark.parametrize(
    ("lang", "expected"),
    per_language(
        {
            "ko": ["14,000,000,000", "13.04", "17.04", "가중치만", "초기 추정치", "바이트 (B)"],
            "id": ["14.000.000.000", "13,04", "17,04", "Bobot saja", "Perkiraan awal", "Byte (B)"],
        }
    ),
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


@pytest.mark.parametrize(("lang", "word"), per_language({"ko": "양자화", "id": "kuantisasi"}))
def test_four_bits_says_what_it_does_not_count(lang: str, word: str) -> None:
    result = invoke("weights", "--params", "7e9", "--bits", "4", "--lang", lang)
    assert result.exit_code == 0
    assert word in result.stdout
    payload = json.loads(invoke("weights", "--params", "7e9", "--bits", "4", "--json").stdout)
    assert payload["quantization_not_counted"] is True
    assert payload["weights_bytes"] == 3_500_000_000


def test_kv_cache_json_four_sequences() -> None:
    result = invoke(*kv_args(sequences="4"), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["kv_cache_bytes"] == 4 * 1_073_741_824
    assert payload["kv_cache_gib"] == "4"
    assert payload["kv_cache_gb"] == "4.294967296"


@pytest.mark.parametrize(
    ("lang", "number"), per_language({"ko": "1,073,741,824", "id": "1.073.741.824"})
)
def test_kv_cache_table_with_window(lang: str, number: str) -> None:
    result = invoke(*kv_args(tokens="16384", window="8192", lang=lang))
    assert result.exit_code == 0, result.output
    assert number in result.stdout


LARGEST_KV = {
    "layers": "1e4",
    "kv_heads": "1e4",
    "head_dim": "1e5",
    "tokens": "1e9",
    "bytes_per_value": "8",
    "sequences": "1e6",
}


@pytest.mark.parametrize(("lang", "group"), per_language({"ko": ",", "id": "."}))
def test_the_largest_sizes_stay_exact_in_tables(lang: str, group: str) -> None:
    result = invoke(*kv_args(**LARGEST_KV, lang=lang))
    assert result.exit_code == 0, result.output
    exact = f"{2 * 10**4 * 10**4 * 10**5 * 10**9 * 8 * 10**6:,}"  # grouped by Python, not Babel
    assert exact.replace(",", group) in result.stdout


def test_kv_cache_fractional_bytes_per_value_stays_exact() -> None:
    ones = {"layers": "1", "kv_heads": "1", "head_dim": "1", "tokens": "3"}
    result = invoke(*kv_args(**ones, bytes_per_value="0.125"), "--json")
    payload = json.loads(result.stdout)
    # 2 x 3 x 0.125 = 0.75 B: one whole byte holds it, the exact value says what it is.
    assert payload["kv_cache_bytes"] == 1
    assert payload["kv_cache_bytes_exact"] == "0.75"
    assert payload["bytes_per_value"] == "0.125"
    assert payload["kv_cache_gib"] == exact_decimal_text(Fraction(3, 4 * 2**30))
    table = invoke(*kv_args(**ones, bytes_per_value="0.125"))
    assert "0.75" in table.stdout and "0.125" in table.stdout


def test_weights_with_a_fractional_byte_count_round_up_and_state_the_exact_count() -> None:
    payload = json.loads(invoke("weights", "--params", "7", "--bits", "4", "--json").stdout)
    assert payload["weights_bytes"] == 4
    assert payload["weights_bytes_exact"] == "3.5"
    assert payload["weights_gb"] == "0.0000000035"
    assert payload["weights_gib"] == exact_decimal_text(Fraction(7, 2 * 2**30))
    assert "e" not in payload["weights_gib"].lower()
    payload = json.loads(
        invoke(
            "weights", "--params", "3", "--bits", "1.58", "--reserve-gib", "0.1", "--json"
        ).stdout
    )
    assert payload["bits"] == "1.58"
    assert payload["weights_bytes_exact"] == "0.5925"
    assert payload["reserve_bytes"] == 107_374_183  # 0.1 GiB = 107,374,182.4 B
    assert payload["reserve_bytes_exact"] == "107374182.4"
    assert payload["total_bytes_exact"] == "107374182.9925"


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
    expected = {"bytes": byte_count, "bytes_exact": str(byte_count), "value": value, "unit": unit}
    assert json.loads(result.stdout) == expected


@pytest.mark.parametrize(
    ("quantity", "unit", "value"),
    [
        ("1 YB", "B", str(10**24)),  # was 999999999999999983222784 through pint's floats
        ("1 yottabyte", "ZB", "1000"),
        ("3 YiB", "B", str(3 * 2**80)),
        ("1 B", "YiB", exact_decimal_text(Fraction(1, 2**80))),
        ("1 B", "GiB", "0.000000000931322574615478515625"),  # every digit, no 9.3E-10
        ("1 Yb", "B", str(10**24 // 8)),
        ("2 gibibytes", "MiB", "2048"),
        ("7 Bytes", "bits", "56"),
        ("1_000 kilobit", "kB", "125"),
    ],
)
def test_every_conversion_is_exact(quantity: str, unit: str, value: str) -> None:
    result = invoke("convert", quantity, unit, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["value"] == value


def test_bits_are_allowed_where_a_bit_unit_is_asked_for() -> None:
    payload = json.loads(invoke("convert", "1 bit", "kb", "--json").stdout)
    assert payload == {"bytes": 1, "bytes_exact": "0.125", "value": "0.001", "unit": "kb"}
    payload = json.loads(invoke("convert", "0.5 B", "bit", "--json").stdout)
    assert payload["value"] == "4"


def test_convert_json_matches_pint_exactly() -> None:
    ureg = pint_registry()
    for quantity, unit, pint_name in [
        ("24e9 B", "GiB", "gibibyte"),
        ("1 YB", "B", "byte"),
        ("143771 MiB", "GB", "gigabyte"),
        ("1 Gb", "MiB", "mebibyte"),
    ]:
        number, _, pint_from = quantity.partition(" ")
        names = {"B": "byte", "YB": "yottabyte", "MiB": "mebibyte", "Gb": "gigabit"}
        theirs = ureg.Quantity(Fraction(number), names[pint_from]).to(pint_name).magnitude
        ours = json.loads(invoke("convert", quantity, unit, "--json").stdout)["value"]
        assert Fraction(ours) == theirs, quantity


@pytest.mark.parametrize(("lang", "text"), per_language({"ko": "22.35", "id": "22,35"}))
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


@pytest.mark.parametrize("lang", CODES)
def test_examples_run_all_reproduces_every_stated_figure(lang: str) -> None:
    result = invoke("examples", "run", "--all", "--lang", lang, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [e["id"] for e in payload["examples"]] == list(registry())
    for example_json, example in zip(payload["examples"], registry().values(), strict=True):
        assert example_json["title"] == example.title[lang]
        for fig_json, fig in zip(example_json["figures"], example.figures, strict=True):
            assert fig_json["stated"] == format_number(fig.value, fig.decimals, lang)
            if fig.exact_bytes is None:
                assert fig_json["bytes"] is None and fig_json["bytes_exact"] is None
            else:
                assert Fraction(fig_json["bytes_exact"]) == fig.exact_bytes
                assert fig_json["bytes"] == math.ceil(fig.exact_bytes)


@pytest.mark.parametrize(("lang", "needle"), per_language({"ko": "13.04", "id": "13,04"}))
def test_examples_run_one_table(lang: str, needle: str) -> None:
    result = invoke("examples", "run", "weights-7b-16bit-reserve-4gib", "--lang", lang)
    assert result.exit_code == 0
    assert needle in result.stdout
    assert "14" in result.stdout


W = ["weights", "--params", "7e9", "--bits", "16"]

# Each refusal in the source language (the tests run under the C locale), with the words that
# say why; tests/test_cli_language.py runs every refusal in every language.
BAD_INPUTS = [
    ("zero params", ["weights", "--params", "0", "--bits", "16"], "--params: 양수여야"),
    ("negative params", ["weights", "--params", "-7e9", "--bits", "16"], "양수여야"),
    ("nan params", ["weights", "--params", "nan", "--bits", "16"], "양의 정수여야"),
    ("infinite params", ["weights", "--params", "inf", "--bits", "16"], "양의 정수여야"),
    ("text params", ["weights", "--params", "seven", "--bits", "16"], "양의 정수여야"),
    ("fractional params", ["weights", "--params", "7.5", "--bits", "16"], "정수여야 합니다"),
    ("zero bits", ["weights", "--params", "7e9", "--bits", "0"], "--bits: 양수여야"),
    ("negative bits", ["weights", "--params", "7e9", "--bits", "-4"], "양수여야"),
    ("negative reserve", [*W, "--reserve-gib", "-1"], "음수일 수 없습니다"),
    ("missing option", ["weights", "--bits", "16"], "필수 옵션이 빠졌습니다: '--params'"),
    ("unknown option", [*W, "--foo"], "'--foo' 옵션은 없습니다"),
    ("unknown lang", [*W, "--lang", "fr"], "'fr': 쓸 수 있는 값은 'ko', 'id'"),
    ("zero layers", kv_args(layers="0"), "양수여야"),
    ("nan bytes per value", kv_args(bytes_per_value="nan"), "유한한 숫자여야"),
    ("static smaller than tokens", kv_args(static_max_tokens="10"), "정적 캐시"),
    ("non-byte unit", ["convert", "5 meter", "GiB"], "알 수 없는 단위 'meter'"),
    ("unknown unit", ["convert", "5 foo", "GiB"], "'foo'"),
    ("non-byte target", ["convert", "5 GB", "percent"], "'percent'"),
    ("negative quantity", ["convert", "--", "-5 GB", "GiB"], "음수일 수 없습니다"),
    # Issue 20: read as meant or refused clearly (click took '-80 GB' for options -8, -0...).
    ("negative quantity as typed", ["convert", "-80 GB", "GiB"], "음수일 수 없습니다"),
    ("quantity without a unit", ["convert", "80", "GiB"], "단위가 없습니다"),
    ("tokens 32k", kv_args(tokens="32k"), "32,000(k = 1,000) 또는 32,768(k = 1,024)"),
    ("window 4k", kv_args(window="4k"), "4,000(k = 1,000) 또는 4,096(k = 1,024)"),
    ("tokens 1B", kv_args(tokens="1B"), "--tokens: 토큰 수는"),
    ("nan quantity", ["convert", "nan GB", "GiB"], "숫자와 바이트 단위"),
    ("unknown example", ["examples", "run", "nope"], "알 수 없는 예제 'nope'"),
    ("id and --all", ["examples", "run", "two-peaks", "--all"], "--all"),
    (
        "no command",
        [],
        "명령이 없습니다(weights, kv-cache, model, fit, train, convert, shortlist, report, "
        "examples)",
    ),
    ("no examples command", ["examples"], "명령이 없습니다(list, run)"),
    ("only options", ["--lang", "ko"], "명령이 없습니다."),
    ("unknown command", ["weight"], "'weight' 명령은 없습니다. 비슷한 이름: 'weights'"),
    ("option without value", ["weights", "--bits", "16", "--params"], "옵션에는 값이 필요합니다"),
    ("flag with a value", [*W, "--json=yes"], "'--json' 옵션은 값을 받지 않습니다"),
    ("extra argument", ["convert", "1 B", "GiB", "x"], "예상하지 못한 인수가 더 있습니다: x"),
    ("missing argument", ["convert", "1 B"], "필수 인수가 빠졌습니다: '단위'"),
    # Part 4: exact units or a clear refusal (each was a wrong figure or a traceback).
    ("target 1/0", ["convert", "24e9 B", "1/0"], "알 수 없는 단위 '1/0'"),
    ("target (", ["convert", "24e9 B", "("], "알 수 없는 단위 '('"),
    ("target millibyte", ["convert", "24e9 B", "millibyte"], "바이트나 비트보다 작은 단위"),
    ("a millibyte", ["convert", "1 millibyte", "B"], "바이트나 비트보다 작은 단위"),
    ("ten decibytes", ["convert", "10 decibyte", "B"], "바이트나 비트보다 작은 단위"),
    ("a bit in bytes", ["convert", "1 bit", "B"], "정수 바이트가 아닙니다"),
    ("half a byte in kB", ["convert", "0.5 B", "kB"], "정수 바이트가 아닙니다"),
    ("half a bit", ["convert", "1.5 bit", "bit"], "정수 비트가 아닙니다"),
    ("lower-case gb", ["convert", "1 gb", "B"], "알 수 없는 단위 'gb'"),
    # Part 5: bounded input, one grammar (each was a traceback, a hang or a silent accept).
    ("params 1e400", [*W[:2], "1e400", *W[3:], "--json"], "지수가 범위를 벗어났습니다"),
    ("5,000-digit params", ["weights", "--params", "7" * 5000, "--bits", "16"], "자릿수가 너무"),
    ("bits 1e-20000000", ["weights", "--params", "7e9", "--bits", "1e-20000000"], "지수가"),
    (
        "huge exponent digits",
        ["weights", "--params", "1e" + "9" * 5000, "--bits", "16"],
        "지수가",
    ),
    ("params 1e16", ["weights", "--params", "1e16", "--bits", "16"], "최댓값은 1e15"),
    ("params 2e12K", ["weights", "--params", "2e12K", "--bits", "16"], "최댓값은 1e15"),
    ("bits 65", ["weights", "--params", "7e9", "--bits", "65"], "최댓값은 64"),
    ("reserve 1e7 GiB", [*W, "--reserve-gib", "1e7"], "최댓값은 1e6"),
    ("layers 10001", kv_args(layers="10001"), "--layers: 최댓값은"),
    ("kv heads 1e5", kv_args(kv_heads="1e5"), "--kv-heads: 최댓값은"),
    ("head dim 1e6", kv_args(head_dim="1e6"), "--head-dim: 최댓값은"),
    ("tokens 2e9", kv_args(tokens="2e9"), "--tokens: 최댓값은"),
    ("window 2e9", kv_args(window="2e9"), "--window: 최댓값은"),
    ("static 2e9", kv_args(static_max_tokens="2e9"), "--static-max-tokens: 최댓값은"),
    ("sequences 1e7", kv_args(sequences="1e7"), "--sequences: 최댓값은"),
    ("bytes per value 9", kv_args(bytes_per_value="9"), "--bytes-per-value: 최댓값은"),
    ("tokens 1e400", kv_args(tokens="1e400"), "지수가"),
    ("quantity 1e400", ["convert", "1e400 B", "GiB"], "지수가"),
    ("quantity digits", ["convert", "9" * 5000 + " B", "GiB"], "자릿수가 너무"),
    ("fullwidth bits", ["weights", "--params", "7e9", "--bits", "\uff11\uff16"], "FULLWIDTH DIGIT"),
    ("Arabic-Indic params", ["weights", "--params", "\u0667e9", "--bits", "16"], "U+0667"),
    ("Devanagari tokens", kv_args(tokens="\u096e\u0967\u096f\u0968"), "DEVANAGARI"),
    ("fullwidth quantity", ["convert", "\uff15 GB", "GiB"], "0-9로만"),
    ("fullwidth decimals", ["convert", "24e9 B", "GiB", "--decimals", "\uff13"], "0-9로만"),
    ("decimals 31", ["convert", "24e9 B", "GiB", "--decimals", "31"], "최댓값은 30"),
    ("decimals 1.5", ["convert", "24e9 B", "GiB", "--decimals", "1.5"], "정수여야"),
    ("double underscore", ["weights", "--params", "7__000", "--bits", "16"], "유한한 숫자여야"),
    ("long junk", ["weights", "--params", "x" * 100_000, "--bits", "16"], "'" + "x" * 40 + "'..."),
    # The grammar follows the reader: Korean writes decimals with '.', digit groups with '_'.
    ("decimal comma in Korean", [*W[:4], "4,5"], "소수점은 '.'이고"),
    ("grouping comma in Korean", ["weights", "--params", "7,000,000,000", *W[3:]], "'_'로 묶거나"),
    ("comma quantity in Korean", ["convert", "24,5 GB", "GiB"], "소수점은 '.'이고"),
]


@pytest.mark.parametrize(("name", "args", "needle"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(name: str, args: list[str], needle: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("iteragpu: 오류: ")
    assert needle in lines[0]
    assert len(lines[0]) < 400  # an input is quoted cut short, never 5,000 digits back
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


LLAMA_FOLDER = str(Path(__file__).resolve().parents[1] / "snippets" / "models" / "llama-3-8b")
# What a run that needs none of them would pay for at start-up (benchmarks/cli_startup.py,
# benchmarks/model_bench.py): json's regular expressions, dataclasses' generated methods, the
# whole-catalogue .mo parse (it imports struct), Babel, pint, torch.
NEVER = ("torch", "pint", "babel", "json", "dataclasses", "struct")


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["weights", "--params", "7e9", "--bits", "16"], NEVER),
        (["weights", "--params", "7e9", "--bits", "16", "--json"], NEVER),
        (["convert", "2 gibibytes", "MiB"], NEVER),  # a long name: no pint
        (["convert", "1 YB", "B", "--json"], NEVER),
        ([*kv_args(), "--lang", "id"], NEVER),
        # The app's --help lists the commands from their help texts: none is built.
        (["--help"], (*NEVER, "fractions", "iteragpu.core.numbers")),
        (["weights", "--help", "--lang", "id"], (*NEVER, "fractions")),
        # A folder with a config.json and no weight files: no weight-file reader, no json.
        (
            ["model", LLAMA_FOLDER, "--tokens", "8192", "--json"],
            (*NEVER, "iteragpu.models.safetensors", "iteragpu.models.gguf", "gguf"),
        ),
        (
            ["model", LLAMA_FOLDER, "--tokens", "8192"],
            (*NEVER, "iteragpu.models.safetensors", "iteragpu.models.gguf", "gguf"),
        ),
    ],
)
def test_fast_paths_import_neither_torch_nor_pint(args: list[str], absent: tuple[str, ...]) -> None:
    code = (
        "import sys\n"
        "from iteragpu.cli.app import app\n"
        "try:\n"
        f"    app({args!r}, prog_name='iteragpu')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        f"print(sorted(m for m in {absent!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_console_script_freezes_what_survives_and_app_does_not() -> None:
    """`main` (the console script) leaves the surviving objects out of the interpreter's exit
    collections; `app()` called in a process that goes on changes nothing of its collector."""
    code = (
        "import gc, sys\n"
        "from iteragpu.cli.app import app, main\n"
        "try:\n"
        f"    app({W!r}, prog_name='iteragpu')\n"
        "except SystemExit:\n"
        "    pass\n"
        "after_app = gc.get_freeze_count()\n"
        f"sys.argv = ['iteragpu', *{W!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print(after_app, gc.get_freeze_count() > 0, gc.isenabled(), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.split() == ["0", "True", "True"]
    assert "14,000,000,000" in out.stdout


def test_the_help_lists_each_command_as_its_built_command_would() -> None:
    """The app's --help lists the commands without building them: the short help of each is
    what the command built by typer gives, in every language."""
    import click
    import typer.main

    from iteragpu.cli.app import COMMANDS, IteraGPU
    from iteragpu.cli.click_text import ReaderCatalogue, localize

    group = typer.main.get_command(app)
    assert isinstance(group, IteraGPU)
    ctx = click.Context(group, info_name="iteragpu")
    for lang in CODES:
        catalogue = ReaderCatalogue(lang, help_asked=True)
        group.catalogue, group.listing = catalogue, True
        try:
            listed = {name: group.get_command(ctx, name) for name in COMMANDS}
        finally:
            group.listing = False
        for name, (_, typer_of) in COMMANDS.items():
            built = typer.main.get_command(typer_of())
            localize(built, catalogue)
            shown, expected = listed[name], built
            assert shown is not None and not shown.hidden
            for limit in (20, 45, 74, 200):
                assert shown.get_short_help_str(limit) == expected.get_short_help_str(limit), name
        assert not group.commands  # nothing was built for the listing


def test_a_json_run_reads_no_catalogue() -> None:
    """Only what a reader reads needs the catalogue: a --json run that succeeds parses none."""
    code = (
        "from iteragpu.cli.app import app\n"
        "from iteragpu.i18n.catalogue import translations\n"
        "try:\n"
        f"    app({[*W, '--json', '--lang', 'id']!r}, prog_name='iteragpu')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print(translations.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0"


# ---------------------------------------------------------------------------------------------
# One JSON convention for every command
# ---------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=24,
)


@settings(max_examples=500, deadline=None)
@given(json_values)
def test_the_json_writer_writes_what_json_dumps_writes(value: Any) -> None:
    assert json_text(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_the_json_writer_refuses_a_float() -> None:
    with pytest.raises(TypeError):
        json_text({"weights_gib": 13.04})


JSON_COMMANDS = [
    ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "4"],
    ["weights", "--params", "13000000001", "--bits", "4.5", "--reserve-gib", "0.1"],
    kv_args(sequences="4"),
    kv_args(bytes_per_value="0.125", tokens="3", window="2"),
    ["convert", "24e9 B", "GiB"],
    ["convert", "1 bit", "Mb"],
    ["examples", "run", "--all"],
    ["examples", "list"],
]


def _no_float(text: str) -> float:
    raise AssertionError(f"a float in the JSON output: {text}")


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=[" ".join(a[:2]) for a in JSON_COMMANDS])
def test_json_states_every_quantity_one_way(args: list[str]) -> None:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout, parse_float=_no_float)
    assert result.stdout == json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    for obj in _objects(payload):
        for key, value in obj.items():
            if key.endswith("_bytes") or key == "bytes":
                assert value is None or type(value) is int, (key, value)
                exact = obj.get(f"{key}_exact")
                assert (value, exact) == (None, None) or value == math.ceil(Fraction(exact))
            elif key.endswith(("_bytes_exact", "_gib", "_gb")) or key in ("exact", "value"):
                assert value is None or isinstance(value, str), (key, value)
                if value is not None:
                    assert Fraction(value) == Fraction(Decimal(value))  # plain decimal text
                    assert "e" not in value.lower() and "/" not in value
        for unit, per_unit in (("gib", 2**30), ("gb", 10**9)):
            for key in [k for k in obj if k.endswith(f"_{unit}")]:
                stem = key.removesuffix(f"_{unit}")
                if f"{stem}_bytes_exact" in obj:
                    exact = Fraction(obj[f"{stem}_bytes_exact"]) / per_unit
                    assert obj[key] == exact_decimal_text(exact), key


# ---------------------------------------------------------------------------------------------
# Writes that fail, inputs that try to hang
# ---------------------------------------------------------------------------------------------

CLI = [sys.executable, "-m", "iteragpu"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "args",
    [
        ["weights", "--params", "7e9", "--bits", "16"],
        ["convert", "24e9 B", "GiB", "--json"],
        ["examples", "run", "--all"],
        ["--help"],
    ],
)
def test_a_full_disk_is_one_line_and_exit_2(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([*CLI, *args], stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "iteragpu: 오류: 출력을 쓰지 못했습니다: 장치에 남은 공간이 없습니다"
    ]


def test_a_closed_pipe_is_one_line_and_exit_2() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the write fails with EPIPE
    try:
        done = subprocess.run(
            [*CLI, "examples", "run", "--all"], stdout=write_end, stderr=subprocess.PIPE, text=True
        )
    finally:
        os.close(write_end)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines == ["iteragpu: 오류: 출력을 쓰지 못했습니다: 파이프의 읽는 쪽이 닫혔습니다"]


ADVERSARIAL = [
    ["weights", "--params", "1e400", "--bits", "16", "--json"],
    ["weights", "--params", "7" * 5000, "--bits", "16"],
    ["weights", "--params", "7e9", "--bits", "1e-20000000"],
    ["weights", "--params", "7e9", "--bits", "1e" + "9" * 100_000],
    ["weights", "--params", "1" + "_1" * 60_000, "--bits", "16"],
    ["weights", "--params", " " * 60_000 + "x", "--bits", "16"],
    ["weights", "--params", "7e9", "--bits", "0." + "0" * 100_000 + "1"],
    ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "9" * 100_000],
    kv_args(tokens="1e99999999"),
    kv_args(bytes_per_value="1e-99999999"),
    ["convert", "1e99999999 YiB", "B"],
    ["convert", "1" * 100_000 + " B", "GiB"],
    ["convert", "1 " + "B" * 100_000, "GiB"],
    ["convert", "1" + " " * 100_000 + "2 GiB", "B"],
    ["convert", "24e9 B", "x" * 100_000],
    ["convert", "24e9 B", "GiB", "--decimals", "9" * 100_000],
]


def test_adversarial_inputs_are_refused_at_once() -> None:
    # In a child process with a deadline, so that a regression fails instead of hanging the run.
    # The bound is generous on purpose: the parser refuses each input before any arithmetic, so
    # the whole batch takes milliseconds; before, `--bits 1e-20000000` alone ran for minutes.
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from iteragpu.cli.app import app\n"
        "runner = CliRunner()\n"
        "out = []\n"
        "for args in json.load(sys.stdin):\n"
        "    r = runner.invoke(app, args, prog_name='iteragpu')\n"
        "    out.append([r.exit_code, r.stdout, r.stderr])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(ADVERSARIAL),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for args, (exit_code, stdout, stderr) in zip(ADVERSARIAL, json.loads(done.stdout), strict=True):
        shown = [a[:30] for a in args]
        assert exit_code == 2, (shown, stderr)
        assert stdout == ""
        lines = stderr.splitlines()
        assert len(lines) == 1 and len(lines[0]) < 400, (shown, stderr[:500])


# ---------------------------------------------------------------------------------------------
# The documented bounds are the enforced ones
# ---------------------------------------------------------------------------------------------

_BOUND_ROW = re.compile(r"^\| ((?:`--[a-z-]+`(?:, )?)+) \| `([0-9e]+)` \|$", re.MULTILINE)
ENFORCED_BOUNDS = {
    "--params": weights.MAX_PARAMETERS,
    "--bits": weights.MAX_BITS,
    "--reserve-gib": weights.MAX_RESERVE_GIB,
    "--layers": kv_cache.MAX_LAYERS,
    "--kv-heads": kv_cache.MAX_KV_HEADS,
    "--head-dim": kv_cache.MAX_HEAD_DIM,
    "--tokens": kv_cache.MAX_TOKENS,
    "--window": kv_cache.MAX_TOKENS,
    "--static-max-tokens": kv_cache.MAX_TOKENS,
    "--sequences": kv_cache.MAX_SEQUENCES,
    "--bytes-per-value": kv_cache.MAX_BYTES_PER_VALUE,
    "--decimals": MAX_DECIMALS,
}


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_page_states_the_enforced_bounds(lang: str) -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / lang / "docs" / "cli.md").read_text(
        "utf-8"
    )
    documented = {
        option.strip("`"): int(Fraction(Decimal(limit)))
        for options, limit in _BOUND_ROW.findall(page)
        for option in options.split(", ")
    }
    assert documented == ENFORCED_BOUNDS


@pytest.mark.parametrize(("option", "limit"), sorted(ENFORCED_BOUNDS.items()))
def test_each_bound_is_inclusive(option: str, limit: int) -> None:
    base = {"--decimals": ["convert", "24e9 B", "GiB"]}.get(option, W if option in W else [])
    base = base or ([*W, "--reserve-gib", "0"] if option == "--reserve-gib" else kv_args())
    args = list(base)
    if option in args:
        del args[args.index(option) : args.index(option) + 2]
    assert invoke(*args, option, str(limit)).exit_code == 0
    fractional = option in ("--bits", "--reserve-gib", "--bytes-per-value")
    past = invoke(*args, option, f"{limit}.000001" if fractional else str(limit + 1))
    assert past.exit_code == 2 and f"{option}: 최댓값은 " in past.stderr, past.output
