"""Popular models by name: verbatim published configs, their counts against the model cards,
`iteragpu model NAME`, and the page that lists them."""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.models.config import FAMILIES, parse_config
from iteragpu.models.parameters import count_parameters
from iteragpu.models.presets import PRESETS_DIR, find_preset, left_out, preset_names, presets

runner = CliRunner(env={"COLUMNS": "200"})
DOCS = Path(__file__).parents[1] / "docs"


def _git_blob(data: bytes) -> str:
    # What `git hash-object` prints, and the Hub's id for a small (non-LFS) file.
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.mark.parametrize("preset", presets(), ids=lambda p: p.name)
def test_each_preset_is_the_published_file_byte_for_byte(preset) -> None:  # type: ignore[no-untyped-def]
    data = preset.config_path.read_bytes()
    assert _git_blob(data) == preset.git_blob  # no reformatting, no added newline
    config = json.loads(data)
    assert config["model_type"] in FAMILIES
    assert preset.read_at.startswith("https://github.com/")
    assert preset.card_url == f"https://huggingface.co/{preset.hf_repo}"
    assert preset.hf_revision is None or re.fullmatch(r"[0-9a-f]{40}", preset.hf_revision)
    assert preset.verbatim.split(":")[0] in {"hub_blob_id", "two_copies", "one_copy"}


@pytest.mark.parametrize("preset", presets(), ids=lambda p: p.name)
def test_the_count_from_each_config_is_the_model_cards_figure(preset) -> None:  # type: ignore[no-untyped-def]
    # The card writes a rounded figure ("8.2B", "3.21B", "70B"): the count read from the config
    # must lie within one unit of its last digit.
    stated = preset.card_parameters
    assert stated.endswith("B")
    figure = Decimal(stated.removesuffix("B"))
    unit = Decimal(1).scaleb(figure.as_tuple().exponent)  # type: ignore[arg-type]
    counted = Decimal(count_parameters(parse_config(json.loads(preset.config_path.read_text()))))
    assert abs(counted / 10**9 - figure) < unit, (preset.name, counted, stated)


def test_only_listed_files_are_kept_and_the_left_out_say_why() -> None:
    kept = {path.stem for path in PRESETS_DIR.glob("*.json")} - {"index"}
    assert kept == set(preset_names())
    reasons = left_out()
    for family in ("exaone", "hyperclovax-seed", "sea-lion", "sahabat-ai"):
        assert reasons[family], family  # asked for, not found: said so, not retyped
    assert not set(reasons) & set(preset_names())


@pytest.mark.parametrize("lang", CODES)
def test_iteragpu_model_name_reads_the_preset(lang: str) -> None:
    result = runner.invoke(app, ["model", "qwen3-8b", "--tokens", "8192", "--json", "--lang", lang])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    preset = find_preset("qwen3-8b")
    assert preset is not None
    config = json.loads(preset.config_path.read_text())
    assert payload["preset"]["hf_revision"] == preset.hf_revision
    assert payload["parameters"] == count_parameters(parse_config(config))
    # The KV cache per token from the published sizes: K and V, every layer, every KV head.
    per_token = 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * 128 * 2
    assert payload["kv_bytes_per_token"] == per_token
    text = runner.invoke(app, ["model", "QWEN3-8B", "--tokens", "8192", "--lang", lang])
    assert text.exit_code == 0
    assert "Qwen/Qwen3-8B" in text.stdout and preset.read_at in text.stdout


@pytest.mark.parametrize("lang", CODES)
def test_an_unknown_name_is_refused_with_the_names(lang: str) -> None:
    result = runner.invoke(app, ["model", "exaone-3.5-7.8b", "--tokens", "8192", "--lang", lang])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert all(name in lines[0] for name in preset_names())


def test_a_folder_on_disk_wins_over_a_preset_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "qwen3-8b"
    folder.mkdir()
    preset = find_preset("llama-3.2-3b")
    assert preset is not None
    (folder / "config.json").write_bytes(preset.config_path.read_bytes())
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["model", "qwen3-8b", "--tokens", "8", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["preset"] is None and payload["model_type"] == "llama"


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_page_lists_every_preset_with_its_sources(lang: str) -> None:
    text = (DOCS / lang / "docs" / "cli.md").read_text("utf-8")
    section = text[text.index("{ #presets }") : text.index("{ #json }")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(presets())
    for row, preset in zip(rows, presets(), strict=True):
        assert row.startswith(f"| `{preset.name}` |")
        for value in (preset.hf_repo, preset.read_at, preset.card_parameters, preset.card_url):
            assert value in row, (preset.name, value)
        assert (preset.hf_revision or "") in row
