"""`iteragpu model PATH`: a local model sized for a context, in the reader's language.

The expected figures are computed here from the published configs' sizes with the formula
(2 x KV heads x head dim x tokens x bytes x sequences per layer), not read from the code under
test; tests/models proves the reader itself against Transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from foreign_text import english_runs, foreign_numbers
from models.published_configs import GEMMA_2_9B, LLAMA_3_8B
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.catalogue import translate
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import TEXTS, message
from iteragpu.models.model import CAVEATS

ROOT = Path(__file__).resolve().parents[1]
GiB = 2**30

# The --json keys the CLI page documents (docs/<code>/docs/cli.md, `model` section).
STABLE_KEYS = {
    "parameters",
    "weights_source",
    "weights_bytes",
    "weights_gb",
    "weights_gib",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "kv_cache_gb",
    "kv_cache_gib",
    "kv_cache_decoding_bytes",
    "layers",
    "reserve_bytes",
    "total_bytes",
    "total_gb",
    "total_gib",
    "caveats",
    "shortlist",
}
LAYER_KEYS = {"kind", "count", "window", "layout", "tokens_held", "kv_cache_bytes"}


def invoke(*args: str, lang: str = "ko") -> Any:
    return CliRunner().invoke(app, ["model", *args, "--lang", lang], prog_name="iteragpu")


def as_json(*args: str, lang: str = "ko") -> dict[str, Any]:
    result = invoke(*args, "--json", lang=lang)
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def model_folder(tmp_path: Path, config: dict[str, Any], name: str = "model") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return folder


def per_head_kv_bytes(
    config: dict[str, Any], layers: int, tokens: int, bytes_per_value: int, sequences: int = 1
) -> int:
    head_dim: int = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    kv_heads: int = config["num_key_value_heads"]
    return layers * 2 * kv_heads * head_dim * tokens * bytes_per_value * sequences


def assert_reader_text(text: str, lang: str) -> None:
    assert english_runs(text) == [], text
    assert foreign_numbers(text, lang) == [], text


# ---------------------------------------------------------------------------------------------
# A Llama-like config folder: full attention, GQA
# ---------------------------------------------------------------------------------------------


def test_a_llama_config_folder_is_sized_exactly(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    payload = as_json(str(folder), "--tokens", "8192", "--sequences", "4", "--reserve-gib", "2")
    kv = per_head_kv_bytes(LLAMA_3_8B, 32, 8192, 2, 4)
    assert kv == 4 * GiB  # 2 x 8 KV heads x 128 x 8192 x 2 B x 32 layers x 4 sequences
    assert payload["weights_source"] == "config"
    assert payload["weights_bytes"] == payload["parameters"] * 2  # bfloat16 from the config
    assert payload["kv_cache_bytes"] == kv
    assert payload["kv_bytes_per_token"] == kv // (8192 * 4)
    assert payload["kv_cache_gib"] == "4"
    assert payload["total_bytes"] == payload["weights_bytes"] + kv + 2 * GiB
    (group,) = payload["layers"]
    assert (group["kind"], group["count"], group["window"]) == ("full_attention", 32, None)
    assert payload["shortlist"] is None


@pytest.mark.parametrize("lang", CODES)
def test_the_table_speaks_the_readers_language(tmp_path: Path, lang: str) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    result = invoke(str(folder), "--tokens", "8192", "--sequences", "4", lang=lang)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert_reader_text(text, lang)
    for key in ("model_total", "model_layers_header", "caveat_activations_not_counted"):
        assert message(key, lang) in text
    total = as_json(str(folder), "--tokens", "8192", "--sequences", "4")["total_bytes"]
    assert f"{total:,}".replace(",", "." if lang == "id" else ",") in text


def test_fractional_bytes_per_value_round_up_and_say_what_is_not_counted(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    payload = as_json(str(folder), "--tokens", "3", "--kv-bytes-per-value", "0.5")
    exact = per_head_kv_bytes(LLAMA_3_8B, 32, 3, 1) / 2
    assert payload["kv_cache_bytes"] == exact  # 0.5 B x 393,216 values: whole here
    assert "kv_quantization_overheads_not_counted" in payload["caveats"]
    odd = as_json(str(folder), "--tokens", "1", "--kv-bytes-per-value", "0.0001")
    assert odd["kv_cache_bytes"] == 7  # 65,536 values x 0.0001 B = 6.5536 B, rounded up
    assert odd["kv_cache_bytes_exact"] == "6.5536"


def test_the_dtype_options_choose_the_bytes(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    base = as_json(str(folder), "--tokens", "16")
    fp8 = as_json(str(folder), "--tokens", "16", "--kv-dtype", "float8_e4m3fn", "--bits", "4")
    assert fp8["kv_cache_bytes"] * 2 == base["kv_cache_bytes"]
    assert fp8["weights_bytes"] * 4 == base["weights_bytes"]


# ---------------------------------------------------------------------------------------------
# Gemma-2: alternating sliding and global layers
# ---------------------------------------------------------------------------------------------


def test_gemma_2_mixed_windows(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, GEMMA_2_9B)
    payload = as_json(str(folder), "--tokens", "8192", "--kv-dtype", "bfloat16")
    groups = {g["kind"]: g for g in payload["layers"]}
    assert groups["sliding_attention"]["count"] == groups["full_attention"]["count"] == 21
    assert groups["sliding_attention"]["window"] == 4096
    # Dynamic cache: every layer holds the whole prompt at its peak; the windows while decoding.
    full = per_head_kv_bytes(GEMMA_2_9B, 42, 8192, 2)
    assert payload["kv_cache_bytes"] == full
    decoding = per_head_kv_bytes(GEMMA_2_9B, 21, 8192, 2) + per_head_kv_bytes(
        GEMMA_2_9B, 21, 4096, 2
    )
    assert payload["kv_cache_decoding_bytes"] == decoding
    assert "cache_dynamic_prompt_peak" in payload["caveats"]
    static = as_json(str(folder), "--tokens", "8192", "--kv-dtype", "bfloat16", "--cache", "static")
    assert static["kv_cache_bytes"] == decoding  # the window is allocated, W tokens
    assert "cache_static_allocation" in static["caveats"]
    longer = as_json(
        str(folder), "--tokens", "100", "--cache", "static", "--static-max-tokens", "8192"
    )
    assert longer["cache"]["static_max_tokens"] == 8192
    assert longer["kv_cache_bytes"] == static["kv_cache_bytes"] * 2  # float32 from the config


@pytest.mark.parametrize("lang", CODES)
def test_the_gemma_table_names_each_layer_kind(tmp_path: Path, lang: str) -> None:
    folder = model_folder(tmp_path, GEMMA_2_9B)
    result = invoke(str(folder), "--tokens", "8192", "--cache", "static", lang=lang)
    assert result.exit_code == 0, result.output
    assert_reader_text(result.stdout, lang)
    assert translate("sliding window", lang) in result.stdout
    assert translate("full attention", lang) in result.stdout
    assert message("caveat_cache_static_allocation", lang, length="8,192").split(",")[0] in (
        result.stdout
    )


# ---------------------------------------------------------------------------------------------
# A safetensors folder: weights from the headers
# ---------------------------------------------------------------------------------------------

SMALL_LLAMA = {
    **LLAMA_3_8B,
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "intermediate_size": 512,
    "vocab_size": 1000,
}


def safetensors_folder(tmp_path: Path) -> Path:
    np = pytest.importorskip("numpy")
    from safetensors.numpy import save_file

    folder = model_folder(tmp_path, SMALL_LLAMA, "st")
    save_file(
        {
            "model.embed_tokens.weight": np.zeros((1000, 256), dtype=np.float16),
            "model.layers.0.mlp.down_proj.qweight": np.zeros((64, 256), dtype=np.int32),
            "model.layers.0.mlp.down_proj.scales": np.zeros((4, 256), dtype=np.float16),
            "model.norm.weight": np.zeros((256,), dtype=np.float32),
        },
        str(folder / "model.safetensors"),
    )
    return folder


def test_a_safetensors_folder_gives_the_weights_bytes(tmp_path: Path) -> None:
    folder = safetensors_folder(tmp_path)
    payload = as_json(str(folder), "--tokens", "128")
    assert payload["weights_source"] == "safetensors"
    assert payload["weights_bytes"] == 1000 * 256 * 2 + 64 * 256 * 4 + 4 * 256 * 2 + 256 * 4
    assert payload["parameters"] is None  # packed int32 elements are not parameters
    formats = {(f["format"], f["dtype"]): f for f in payload["weights_formats"]}
    assert formats[("integer", "I32")]["elements"] is None
    assert "parameters_unknown_integer_tensors" in payload["caveats"]
    assert payload["kv_cache_bytes"] == per_head_kv_bytes(SMALL_LLAMA, 2, 128, 2)


@pytest.mark.parametrize("lang", CODES)
def test_the_safetensors_table_names_its_formats(tmp_path: Path, lang: str) -> None:
    folder = safetensors_folder(tmp_path)
    result = invoke(str(folder), "--tokens", "128", lang=lang)
    assert result.exit_code == 0, result.output
    assert_reader_text(result.stdout, lang)
    assert message("model_weights_files", lang, source="safetensors") in result.stdout
    assert message("format_integer", lang) in result.stdout
    assert message("unknown", lang) in result.stdout.splitlines()[1]  # parameters


# ---------------------------------------------------------------------------------------------
# Malformed inputs: one line, exit 2
# ---------------------------------------------------------------------------------------------


def model_refusals(tmp_path: Path) -> list[list[str]]:
    """`model` invocations that must be refused (shared with tests/test_cli_language.py)."""
    base = tmp_path / "refusals"
    base.mkdir(exist_ok=True)
    llama = base / "llama"
    if not llama.exists():
        llama = model_folder(base, LLAMA_3_8B, "llama")
    no_heads = {k: v for k, v in LLAMA_3_8B.items() if k != "num_attention_heads"}
    headless = base / "headless"
    if not headless.exists():
        headless = model_folder(base, no_heads, "headless")
    truncated = base / "truncated"
    if not truncated.exists():
        truncated = model_folder(base, LLAMA_3_8B, "truncated")
        (truncated / "model.safetensors").write_bytes(b"\x10\x00\x00")
    too_long = base / "too-long"
    if not too_long.exists():
        too_long = model_folder(base, LLAMA_3_8B, "too-long")
        (too_long / "model.safetensors").write_bytes((10**6).to_bytes(8, "little") + b"{}")
    with_files = base / "with-files"
    if not with_files.exists():
        with_files = model_folder(base, LLAMA_3_8B, "with-files")
        header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})
        data = len(header).to_bytes(8, "little") + header.encode() + bytes(4)
        (with_files / "model.safetensors").write_bytes(data)
    mamba = base / "mamba"
    if not mamba.exists():
        mamba = model_folder(base, {"model_type": "zamba2", "num_hidden_layers": 2}, "mamba")
    # A model_type that is not a string once raised TypeError (an unhashable set lookup), and
    # a huge layer count was laid out layer by layer.
    listed_type = base / "listed-type"
    if not listed_type.exists():
        listed_type = model_folder(base, {**LLAMA_3_8B, "model_type": ["llama"]}, "listed-type")
    many_layers = base / "many-layers"
    if not many_layers.exists():
        many_layers = model_folder(base, {**LLAMA_3_8B, "num_hidden_layers": 10**12}, "many-layers")
    bad_json = base / "bad.json"
    bad_json.write_text("{", "utf-8")
    gguf = base / "wrong.gguf"
    gguf.write_bytes(b"GGML" + bytes(32))
    tokens = ["--tokens", "8192"]
    return [
        ["model", str(base / "absent"), *tokens],
        ["model", str(base), *tokens],  # a folder without config.json
        ["model", str(bad_json), *tokens],
        ["model", str(headless), *tokens],
        ["model", str(truncated), *tokens],
        ["model", str(too_long), *tokens],
        ["model", str(mamba), *tokens],
        ["model", str(listed_type), *tokens],
        ["model", str(many_layers), *tokens],
        ["model", str(gguf), *tokens],
        ["model", str(with_files), *tokens, "--bits", "4"],  # bits with weight files
        ["model", str(llama), "--tokens", "0"],
        ["model", str(llama), "--tokens", "2e9"],
        ["model", str(llama), *tokens, "--kv-bytes-per-value", "9"],
        ["model", str(llama), *tokens, "--kv-dtype", "float3"],
        ["model", str(llama), *tokens, "--kv-dtype", "int8", "--kv-bytes-per-value", "1"],
        ["model", str(llama), *tokens, "--bits", "4", "--dtype", "int8"],
        ["model", str(llama), *tokens, "--cache", "paged"],
        ["model", str(llama), *tokens, "--static-max-tokens", "9000"],
        ["model", str(llama), *tokens, "--cache", "static", "--static-max-tokens", "10"],
        ["model", str(llama), *tokens, "--shortlist"],
        ["model", str(llama), *tokens, "--days", "3"],
        ["model", str(llama), *tokens, "--reserve-gib", "-1"],
        ["model", str(llama)],
    ]


@pytest.mark.parametrize("lang", CODES)
def test_malformed_inputs_are_one_line_and_exit_2(tmp_path: Path, lang: str) -> None:
    prefix = f"iteragpu: {translate('error', lang)}: "
    for args in model_refusals(tmp_path):
        result = CliRunner().invoke(app, [*args, "--lang", lang], prog_name="iteragpu")
        assert result.exit_code == 2, (args, result.output)
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(prefix), (args, line)
        assert "Traceback" not in result.output
        assert english_runs(line) == [], (args, line)


@pytest.mark.parametrize(("lang", "where"), [("ko", "(2행 8열)"), ("id", "(baris 2, kolom 8)")])
def test_a_broken_config_names_the_place_not_the_parsers_english(
    tmp_path: Path, lang: str, where: str
) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{\n  "a": }', "utf-8")
    result = invoke(str(folder), "--tokens", "8", lang=lang)
    assert result.exit_code == 2
    assert result.stderr.rstrip().endswith(where), result.stderr
    assert "Expecting" not in result.stderr


def test_a_truncated_header_says_so(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    (folder / "model.safetensors").write_bytes((10**6).to_bytes(8, "little") + b"{}")
    result = invoke(str(folder), "--tokens", "8", lang="id")
    assert result.exit_code == 2
    assert "panjang header 1000000 melebihi berkas" in result.stderr
    assert str(folder / "model.safetensors") in result.stderr


# ---------------------------------------------------------------------------------------------
# --json keys, caveats, --shortlist
# ---------------------------------------------------------------------------------------------


def test_json_keys_are_stable_and_the_same_in_every_language(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, GEMMA_2_9B)
    args = (str(folder), "--tokens", "8192", "--shortlist", "--days", "3")
    payloads = [as_json(*args, lang=lang) for lang in CODES]
    assert all(p == payloads[0] for p in payloads)
    assert set(payloads[0]) >= STABLE_KEYS
    for group in payloads[0]["layers"]:
        assert set(group) >= LAYER_KEYS


def test_every_caveat_code_has_a_text_in_every_language() -> None:
    assert {f"caveat_{code}" for code in CAVEATS} <= set(TEXTS)
    assert {k.removeprefix("caveat_") for k in TEXTS if k.startswith("caveat_")} == set(CAVEATS)


def test_the_shortlist_ranks_nothing_that_still_needs_checks(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    payload = as_json(str(folder), "--tokens", "8192", "--shortlist", "--days", "3")
    shortlist = payload["shortlist"]
    assert shortlist["need_bytes"] == payload["total_bytes"]
    candidates = shortlist["candidates"]
    assert candidates
    for candidate in candidates:
        if candidate["status"] != "fit":
            assert candidate["rank"] is None, candidate["card_id"]
    # Without evidence no card is fit on memory, so none is ranked.
    assert all(c["rank"] is None for c in candidates)


@pytest.mark.parametrize("lang", CODES)
def test_the_shortlist_follows_the_table(tmp_path: Path, lang: str) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B)
    result = invoke(str(folder), "--tokens", "8192", "--shortlist", "--days", "3", lang=lang)
    assert result.exit_code == 0, result.output
    # Notes are folded to the column at their spaces: read them back as one line each.
    unfolded = result.stdout.replace("\n  ", " ")
    assert message("rank_rule", lang) in unfolded
    assert message("model_total", lang) in result.stdout
    assert_reader_text(result.stdout, lang)


@pytest.mark.parametrize(("lang", "words"), [("ko", "최상위 모듈별"), ("id", "per modul teratas")])
def test_a_multimodal_model_lists_its_top_modules(tmp_path: Path, lang: str, words: str) -> None:
    config = {
        "model_type": "llava",
        "text_config": {**LLAMA_3_8B, "model_type": "llama"},
        "dtype": "bfloat16",
    }
    folder = model_folder(tmp_path, config, "llava")
    result = CliRunner().invoke(
        app, ["model", str(folder), "--tokens", "8", "--lang", lang], prog_name="iteragpu"
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert words in text
    data = json.loads(
        CliRunner().invoke(app, ["model", str(folder), "--tokens", "8", "--json"]).stdout
    )
    for module in data["modules"]:
        assert module["name"] in text
