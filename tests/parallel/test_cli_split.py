"""`iteragpu model PATH --tp/--pp/--ep/--runtime`: the JSON object of a split (its `ranks` and
`first_to_fill`), the table in each language, the refusals (one line, exit 2) and the short
list of packages compared by the fullest GPU; CliRunner, fixed width."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from models.published_configs import LLAMA_3_8B
from test_cli_model import model_folder
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES

runner = CliRunner()


@pytest.fixture
def llama(tmp_path: Path) -> str:
    return str(model_folder(tmp_path, LLAMA_3_8B, "llama"))


def run(*args: str) -> Any:
    return runner.invoke(app, ["model", *args], env={"COLUMNS": "100"})


def test_json_ranks_and_first_to_fill(llama: str) -> None:
    result = run(llama, "--tokens", "8192", "--runtime", "vllm", "--tp", "2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["runtime"], data["runtime_version"], data["gpus"]) == ("vllm", "0.34.0", 2)
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    rank = data["ranks"][0]
    # norms replicated on both ranks: 65 norms of 4,096 bfloat16 values
    assert rank["weights_replicated_bytes"] == 65 * 4096 * 2
    assert rank["total_bytes"] == (
        rank["weights_bytes"] + rank["kv_cache_bytes"] + rank["state_bytes"] + rank["reserve_bytes"]
    )
    assert rank["kv_tokens"] == 8192 and rank["layers"] == [0, 32]
    assert {t["how"] for t in rank["tensors"]} >= {"column", "row", "vocab", "replicated"}
    assert data["first_to_fill"] == {
        "rank": 0,
        "total_bytes": rank["total_bytes"],
        "total_bytes_exact": rank["total_bytes_exact"],
        "total_gib": rank["total_gib"],
    }
    assert data["host"] is None and data["shortlist"] is None


def test_the_stages_differ_and_the_first_fills(llama: str) -> None:
    result = run(llama, "--tokens", "8192", "--runtime", "vllm", "--pp", "3", "--json")
    data = json.loads(result.stdout)
    assert [r["layers"] for r in data["ranks"]] == [[0, 11], [11, 22], [22, 32]]
    totals = [r["total_bytes"] for r in data["ranks"]]
    assert data["first_to_fill"]["rank"] == totals.index(max(totals))
    assert len(set(totals)) == 3


@pytest.mark.parametrize("lang", CODES)
def test_the_table_speaks_the_readers_language(llama: str, lang: str) -> None:
    result = run(llama, "--tokens", "8192", "--runtime", "vllm", "--tp", "2", "--lang", lang)
    assert result.exit_code == 0, result.output
    text = result.stdout
    # 7.48 GiB of weights per GPU, in the reader's decimal mark
    assert ("7.48" if lang == "ko" else "7,48") in text
    assert "Fills first" not in text and "Weights" not in text  # translated, not English


@pytest.mark.parametrize(
    ("args", "reason_text"),
    [
        (["--runtime", "vllm", "--tp", "3"], "32"),
        (["--tp", "16"], "16"),  # Transformers: 8 KV heads on 16 ranks load but cannot run
        (["--gpu-layers", "5"], "--gpu-layers"),
        (["--tp", "2", "--cache", "static"], "--cache"),
        (["--runtime", "vllm", "--pp", "2", "--pp-partition", "20,10"], "20,10"),
        (["--runtime", "vllm", "--pp", "2", "--pp-partition", "20;12"], "--pp-partition"),
    ],
)
def test_refusals_are_one_line_and_exit_2(llama: str, args: list[str], reason_text: str) -> None:
    result = run(llama, "--tokens", "8192", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and reason_text in lines[0], result.stderr


def test_the_short_list_compares_packages_by_the_fullest_gpu(llama: str) -> None:
    args = ("--tokens", "8192", "--runtime", "vllm", "--tp", "8", "--shortlist", "--days", "3")
    result = run(llama, *args, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    shortlist = data["shortlist"]
    assert shortlist["cards"] == 8
    assert shortlist["need_bytes"] == data["first_to_fill"]["total_bytes"]
    costs = {c["card_id"]: c["cost"] for c in shortlist["candidates"]}
    # the 8-card offers of the catalogue, priced; no 8-card package of the others
    assert (costs["h100-80gb"], costs["a100-40gb"], costs["rtx-4090"]) == (
        "2831.76",
        "1062.00",
        None,
    )
