"""`iteragpu fit`: the table and the flags in each language, the `--json` object and its stable
keys, and every refusal on one line with exit 2; CliRunner, fixed width."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from models.published_configs import LLAMA_3_8B
from parallel.test_llamacpp_rules import write_gguf
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES

runner = CliRunner()
KEYS = {
    "path",
    "model_type",
    "runtime",
    "runtime_version",
    "card",
    "capacity_bytes",
    "gpus",
    "solved",
    "answer",
    "flags",
    "command",
    "bounds",
    "vllm",
    "certain",
    "to_measure",
    "alternatives",
    "notes",
}


@pytest.fixture
def llama(tmp_path: Path) -> str:
    folder = tmp_path / "llama"
    folder.mkdir()
    config = {**LLAMA_3_8B, "max_position_embeddings": 131072}
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return str(folder)


def run(*args: str) -> Any:
    return runner.invoke(app, ["fit", *args], env={"COLUMNS": "100"})


def test_json_keys_and_the_answer(llama: str) -> None:
    result = run(llama, "--gpu", "rtx-4090", "--tokens", "8192", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == KEYS
    assert data["card"] == {"id": "rtx-4090", "name": "RTX 4090"}
    assert data["capacity_bytes"] == 25_757_220_864
    assert data["solved"] == ["sequences", "tp"]
    assert data["bounds"]["kind"] == "at_most" and data["bounds"]["limited_by"] == "memory"
    assert data["flags"]["--max-model-len"] == "8192"
    assert data["flags"]["--max-num-seqs"] == str(data["answer"]["sequences"])
    assert data["command"].startswith("vllm serve ")
    assert "activation_peak" in data["to_measure"] and "weights" in data["certain"]
    rank = data["bounds"]["ranks"][0]
    assert rank["left_bytes"] == rank["room_bytes_min"] - rank["kv_cache_bytes"]
    assert data["vllm"]["blocks_min"] == data["vllm"]["blocks_max"]


@pytest.mark.parametrize("lang", CODES)
def test_the_text_speaks_the_readers_language(llama: str, lang: str) -> None:
    result = run(llama, "--gpu", "h100-80gb", "--lang", lang)
    assert result.exit_code == 0, result.output
    assert "vllm serve " in result.stdout and "--max-model-len 131072" in result.stdout
    assert "At most" not in result.stdout  # the reader's words, not the message ids
    figure = "131.072" if lang == "id" else "131,072"
    assert figure in result.stdout


def test_llamacpp_flags(tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", context_length=4096)
    result = run(str(gguf), "--capacity-bytes", "2e9", "--runtime", "llama.cpp", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["flags"] == {"-c": "4096", "-np": "1", "-ngl": "5", "-ctk": "f16", "-ctv": "f16"}
    assert data["command"].startswith("llama-server -m ")
    assert data["card"] is None and data["vllm"] is None


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--gpu", "b200"], "b200"),  # not in the catalogue
        (["--gpu", "h200"], "h200"),  # in it, with no declared capacity
        ([], "--capacity-bytes"),  # no card at all
        (["--gpu", "h100-80gb", "--tokens", "200000"], "131"),  # above the positions
        (["--gpu", "h100-80gb", "--tp", "3", "--gpus", "3"], "32"),  # heads not divisible
        (["--gpu", "rtx-3090", "--tokens", "131072", "--sequences", "64"], "rtx"),
        (["--gpu", "h100-80gb", "--available-kv-gib", "70,5x"], "70,5x"),
        (["--gpu", "h100-80gb", "--runtime", "llama.cpp"], ".gguf"),
    ],
)
def test_refusals_are_one_line_and_exit_2(llama: str, args: list[str], fragment: str) -> None:
    result = run(llama, *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    if fragment != "rtx":
        assert fragment in lines[0]


@pytest.mark.parametrize(
    ("lang", "tokens", "capacity"),
    [("ko", "131,072", "25,769,803,776"), ("id", "131.072", "25.769.803.776")],
)
def test_a_load_that_does_not_fit_is_said_in_the_readers_numbers(
    llama: str, lang: str, tokens: str, capacity: str
) -> None:
    """The figures fit computed (the load tried, the card, what the fullest GPU lacks) in the
    reader's number format, the lack rounded up to 0.01 GiB."""
    result = run(
        llama, "--gpu", "rtx-3090", "--tokens", "131072", "--sequences", "64", "--lang", lang
    )
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert tokens in line and capacity in line, line
    lack = re.search(r"(\d[\d.,]*) GiB", line)
    assert lack is not None, line
    whole, _, places = lack[1].rpartition("," if lang == "id" else ".")
    assert len(places) == 2 and whole, line


def test_the_cards_fit_reads_are_the_catalogues() -> None:
    from iteragpu.gpus.catalog import load_catalog
    from iteragpu.gpus.declared import declared_cards

    assert declared_cards() == tuple(
        (c.id, c.name, c.declared_memory_bytes) for c in load_catalog()
    )
