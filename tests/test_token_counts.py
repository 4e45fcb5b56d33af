"""Inputs read as readers mean them: `32k` tokens is refused with both of its readings, counts of
parameters keep their decimal suffixes, and a byte quantity needs a unit and a sign that is not
negative (issue 20, points 3 and 4). The CLI, the lab and the sizer say the same: the lab and the
sizer are pinned to these readings in test_formula_copies.py and the JavaScript tests."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from support import per_language
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.core.numbers import InputError, parse_count, parse_tokens
from iteragpu.core.quantity import convert, parse_bytes
from iteragpu.i18n.catalogue import translate
from iteragpu.i18n.languages import CODES

runner = CliRunner(env={"COLUMNS": "120"})

# What a reader of each language writes for 32,000 and 32,768 (the issue's own figures).
READINGS = per_language({"ko": ("32,000", "32,768"), "id": ("32.000", "32.768")})

# Meta-Llama-3-70B's published config.json (huggingface.co/meta-llama/Meta-Llama-3-70B): 80
# layers, 64 query heads and 8 KV heads over a hidden size of 8192 (head dim 128), bfloat16.
LLAMA_3_70B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
BF16_BYTES = 2


def invoke(*args: str):
    return runner.invoke(app, list(args), prog_name="iteragpu")


def refusal_line(*args: str) -> str:
    """The one line of a refused input, after checking exit code 2 and an empty stdout."""
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "Traceback" not in result.output
    return line


def refused(parse, text: str) -> InputError:
    with pytest.raises(InputError) as error:
        parse(text)
    return error.value


# --- The core's grammar -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "decimal", "binary"),
    [
        ("32k", 32 * 1000, 32 * 1024),
        ("32K", 32 * 1000, 32 * 1024),
        (" 32 k ", 32 * 1000, 32 * 1024),
        ("8k", 8 * 1000, 8 * 1024),
        ("1M", 1000**2, 1024**2),
        ("1m", 1000**2, 1024**2),
        ("1G", 1000**3, 1024**3),
        ("0.5k", 500, 512),
        ("0.3k", 300, Fraction(3 * 1024, 10)),  # neither reading is guessed, whole or not
        ("1e3k", 1000**2, 1000 * 1024),
    ],
)
def test_a_suffix_on_tokens_is_refused_with_both_readings(
    text: str, decimal: int, binary: int | Fraction
) -> None:
    error = refused(lambda t: parse_tokens(t, "--tokens", maximum=10**9), text)
    assert error.reason == "ambiguous_suffix"
    assert error.readings == (decimal, binary)
    for reading in (decimal, binary):
        if Fraction(reading).denominator == 1:
            assert f"{int(reading):,}" in str(error)  # str() groups as English does


def test_the_readings_follow_the_readers_grouping() -> None:
    ko = refused(lambda t: parse_tokens(t, "--tokens"), "32k")
    indonesian = refused(lambda t: parse_tokens(t, "--tokens", decimal_comma=True), "1,5k")
    assert (ko.values["decimal_reading"], ko.values["binary_reading"]) == ("32,000", "32,768")
    assert indonesian.readings == (1500, 1536)
    assert (indonesian.values["decimal_reading"], indonesian.values["binary_reading"]) == (
        "1.500",
        "1.536",
    )
    odd = refused(lambda t: parse_tokens(t, "--tokens", decimal_comma=True), "0,3k")
    assert odd.values["binary_reading"] == "307,2"


@pytest.mark.parametrize(
    ("text", "value"),
    [("32768", 32768), ("32_768", 32768), ("3.2768e4", 32768), ("131072", 2**17), ("1e9", 10**9)],
)
def test_tokens_in_digits_are_read(text: str, value: int) -> None:
    assert parse_tokens(text, "--tokens", maximum=10**9) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1B", "not_token_count"),  # B is no token unit: billions of parameters, or bytes
        ("7b", "not_token_count"),
        ("seven", "not_token_count"),
        ("k", "not_token_count"),
        ("32kk", "not_token_count"),
        ("-1k", "not_positive"),
        ("0k", "not_positive"),
        ("0.5", "not_whole"),
        ("2e9", "too_large"),
        ("\u0663k", "non_ascii_digit"),
    ],
)
def test_other_token_refusals_keep_their_reasons(text: str, reason: str) -> None:
    error = refused(lambda t: parse_tokens(t, "--tokens", maximum=10**9), text)
    assert error.reason == reason
    assert error.readings is None


@pytest.mark.parametrize(
    ("text", "value"),
    [("7B", 7 * 10**9), ("1.5B", 15 * 10**8), ("70M", 70 * 10**6), ("0.5K", 500), ("7e9", 7e9)],
)
def test_parameter_counts_keep_their_decimal_suffixes(text: str, value: float) -> None:
    assert parse_count(text, "--params", maximum=10**15) == value


def test_a_quantity_needs_a_unit_and_may_not_be_negative() -> None:
    bare = refused(parse_bytes, "80")
    assert bare.reason == "no_unit"
    for unit in ("B", "kB", "GB", "KiB", "MiB", "GiB", "bit", "Gb"):
        assert unit in bare.values["units"].split(", ")
    assert refused(parse_bytes, "-80 GB").reason == "negative"
    assert refused(parse_bytes, "-80").reason == "negative"
    assert refused(lambda t: convert(t, "GiB"), "80").reason == "no_unit"
    assert parse_bytes("80 B") == 80


# --- The CLI, in each language ----------------------------------------------------------------


def kv_args(tokens: str, **values: str) -> list[str]:
    """`kv-cache` for Llama-3-70B's layers, KV heads and head dimension, at bf16."""
    config = LLAMA_3_70B
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    options = {
        "layers": str(config["num_hidden_layers"]),
        "kv_heads": str(config["num_key_value_heads"]),
        "head_dim": str(head_dim),
        "tokens": tokens,
        "bytes_per_value": str(BF16_BYTES),
        **values,
    }
    return ["kv-cache", *(x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", v))]


def expected_70b_kv_bytes(tokens: int, sequences: int) -> int:
    """2 (K and V) x layers x KV heads x head dim x bytes x tokens x sequences, from the config."""
    config = LLAMA_3_70B
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    layers, kv_heads = config["num_hidden_layers"], config["num_key_value_heads"]
    return 2 * layers * kv_heads * head_dim * BF16_BYTES * tokens * sequences


@pytest.mark.parametrize(("lang", "readings"), READINGS)
@pytest.mark.parametrize("option", ["tokens", "window", "static_max_tokens"])
def test_kv_cache_refuses_32k_with_both_readings(
    lang: str, readings: tuple[str, str], option: str
) -> None:
    values = {} if option == "tokens" else {option: "32k"}
    tokens = "32k" if option == "tokens" else "8192"
    line = refusal_line(*kv_args(tokens, sequences="8", **values), "--lang", lang)
    assert line.startswith(f"iteragpu: {translate('error', lang)}: --{option.replace('_', '-')}")
    assert readings[0] in line and readings[1] in line
    assert "'32k'" in line


@pytest.mark.parametrize("lang", CODES)
def test_kv_cache_reads_32768_tokens_of_llama_3_70b(lang: str) -> None:
    result = invoke(*kv_args("32768", sequences="8"), "--json", "--lang", lang)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    want = expected_70b_kv_bytes(32768, 8)
    assert payload["kv_cache_bytes"] == want
    assert Fraction(payload["kv_cache_gib"]) == Fraction(want, 2**30) == 80  # 80.00 GiB


def test_parameters_keep_7b_in_the_cli() -> None:
    result = invoke("weights", "--params", "7B", "--bits", "16", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["weights_bytes"] == 7 * 10**9 * 16 // 8


def _write_llama_3_70b(tmp_path: Path) -> Path:
    folder = tmp_path / "llama-3-70b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_3_70B), "utf-8")
    return folder


def test_model_sizes_llama_3_70b_at_32768_tokens_times_8(tmp_path: Path) -> None:
    folder = _write_llama_3_70b(tmp_path)
    args = ["model", str(folder), "--tokens", "32768", "--sequences", "8", "--json"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["kv_cache_bytes"] == expected_70b_kv_bytes(32768, 8)
    assert Fraction(payload["kv_cache_gib"]) == 80


@pytest.mark.parametrize(("lang", "readings"), READINGS)
def test_model_refuses_32k_tokens(tmp_path: Path, lang: str, readings: tuple[str, str]) -> None:
    folder = _write_llama_3_70b(tmp_path)
    line = refusal_line("model", str(folder), "--tokens", "32k", "--sequences", "8", "--lang", lang)
    assert readings[0] in line and readings[1] in line


@pytest.mark.parametrize("lang", CODES)
def test_convert_refuses_a_negative_quantity_as_negative(lang: str) -> None:
    line = refusal_line("convert", "-80 GB", "GiB", "--lang", lang)
    what = translate("quantity", lang)
    message = translate("{what} cannot be negative, got {text}", lang, what=what, text="'-80 GB'")
    assert line == f"iteragpu: {translate('error', lang)}: {message}"


@pytest.mark.parametrize("lang", CODES)
def test_convert_refuses_a_bare_number_with_the_units(lang: str) -> None:
    line = refusal_line("convert", "80", "GiB", "--lang", lang)
    assert "'80'" in line
    for unit in ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "bit", "Gb"):
        assert f" {unit}," in line or line.endswith(f" {unit}"), unit


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["convert", "80 GB", "GiB", "--bogus"], "'--bogus'"),
        (["convert", "--bogus", "GiB"], "'--bogus'"),
        (["convert", "80 GB", "--decimls", "3", "GiB"], "'--decimals'"),  # click's suggestion
        (["convert", "80 GB", "GiB", "x"], ": x"),
        (["convert", "--", "80 GB", "GiB", "--lang", "ko"], ": --lang ko"),
    ],
)
def test_convert_still_names_an_unknown_option_or_an_extra_argument(
    args: list[str], needle: str
) -> None:
    assert needle in refusal_line(*args)


def test_a_negative_quantity_converts_nothing_whatever_follows() -> None:
    for args in (
        ["-80 GB", "GiB", "--json"],
        ["-0.5 GiB", "B"],
        ["-1e3 kB", "MB", "--decimals", "3"],
    ):
        assert "-" in refusal_line("convert", *args).split(": ", 2)[2]
    ok = invoke("convert", "80 GB", "GiB", "--decimals", "3", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["bytes"] == 80 * 10**9
