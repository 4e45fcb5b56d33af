"""A family the reader does not know: the weights from the files, the cache null with the
reason, the total marked incomplete; never a refusal of the whole model, never a guess."""

from __future__ import annotations

import json
import struct
from math import prod
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import MESSAGES

runner = CliRunner(env={"COLUMNS": "200"})
TENSORS = {"model.embed.weight": ("BF16", [96, 16]), "model.layers.0.mixer.A_log": ("F32", [16])}
BYTES = {"BF16": 2, "F32": 4}


def _folder(tmp_path: Path, model_type: str, weights: bool = True) -> Path:
    folder = tmp_path / model_type
    folder.mkdir()
    config = {"model_type": model_type, "num_hidden_layers": 1, "hidden_size": 16}
    (folder / "config.json").write_text(json.dumps({**config, "num_attention_heads": 2}))
    if weights:
        header, offset = {}, 0
        for name, (dtype, shape) in TENSORS.items():
            size = prod(shape) * BYTES[dtype]
            header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
            offset += size
        raw = json.dumps(header).encode()
        (folder / "model.safetensors").write_bytes(
            struct.pack("<Q", len(raw)) + raw + bytes(offset)
        )
    return folder


def _invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), prog_name="iteragpu")


@pytest.mark.parametrize(
    ("model_type", "reason"), [("brandnew", "unknown_family"), ("zamba2", "recurrent_state")]
)
def test_the_weights_come_from_the_files_and_the_cache_is_null_with_the_reason(
    tmp_path: Path, model_type: str, reason: str
) -> None:
    result = _invoke("model", str(_folder(tmp_path, model_type)), "--tokens", "8", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    stored = sum(prod(shape) * BYTES[dtype] for dtype, shape in TENSORS.values())
    assert payload["weights_bytes"] == stored == payload["total_bytes"]
    assert payload["parameters"] == sum(prod(shape) for _, shape in TENSORS.values())
    assert payload["kv_cache_bytes"] is None and payload["layers"] is None
    assert payload["cache_unknown_reason"] == reason
    assert payload["total_incomplete"] is True
    assert "cache_unknown" in payload["caveats"]


def test_the_partial_object_has_every_key_of_a_complete_one(tmp_path: Path) -> None:
    complete = tmp_path / "llama"
    complete.mkdir()
    (complete / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "num_hidden_layers": 1,
                "hidden_size": 16,
                "num_attention_heads": 2,
                "vocab_size": 96,
                "intermediate_size": 32,
                "dtype": "bfloat16",
            }
        )
    )
    full = json.loads(_invoke("model", str(complete), "--tokens", "8", "--json").stdout)
    partial = json.loads(
        _invoke("model", str(_folder(tmp_path, "brandnew")), "--tokens", "8", "--json").stdout
    )
    assert set(partial) == set(full)
    assert full["total_incomplete"] is False and full["cache_unknown_reason"] is None


@pytest.mark.parametrize("lang", CODES)
def test_the_table_says_the_total_is_incomplete_in_the_language(tmp_path: Path, lang: str) -> None:
    result = _invoke("model", str(_folder(tmp_path, "brandnew")), "--tokens", "8", "--lang", lang)
    assert result.exit_code == 0, result.output
    assert MESSAGES["model_partial_total"][lang] in result.stdout
    assert MESSAGES["model_cache_unknown_unknown_family"][lang] in result.stdout


@pytest.mark.parametrize("lang", CODES)
def test_without_weight_files_the_family_is_refused_in_one_line(tmp_path: Path, lang: str) -> None:
    folder = _folder(tmp_path, "brandnew", weights=False)
    result = _invoke("model", str(folder), "--tokens", "8", "--lang", lang)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "brandnew" in result.output


def test_an_incomplete_total_is_not_compared_with_cards(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "brandnew")
    result = _invoke("model", str(folder), "--tokens", "8", "--shortlist", "--days", "2")
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
