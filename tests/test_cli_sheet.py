"""`iteragpu model PATH --sheet markdown|json`: the filled inference load sheet
(iteragpu.i18n.sheet), for one GPU and for a split, in the reader's language.

Every byte the sheet states is compared with what `iteragpu model --json` states for the same
arguments (the command's own payload, rank by rank for a split); the Markdown is read back as
tables by `sheet_tables` below, and `quantity_columns_without_unit` holds every column that
holds a quantity to naming its unit (it is shown to fail on a header stripped of its unit).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from foreign_text import english_runs, foreign_numbers
from models.published_configs import GEMMA_2_9B, LLAMA_3_8B
from test_cli_model import model_folder
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.sheet import sheet_words

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner(env={"COLUMNS": "80"})
LIMIT = ["llama-3.1-8b", "--tokens", "8192", "--sequences", "4"]
# The units a column name may end with, per language (the sheet's words name them).
UNITS = {"B", "GiB", "GB", "토큰", "개", "token", "buah"}
_NUMBER = {
    "ko": re.compile(r"^-?\d{1,3}(?:,\d{3})*(?:\.\d+)?$"),
    "id": re.compile(r"^-?\d{1,3}(?:\.\d{3})*(?:,\d+)?$"),
}
_UNIT = re.compile(r"\(([^()]+)\)$")


def run(*args: str, lang: str = "ko") -> Any:
    return runner.invoke(app, ["model", *args, "--lang", lang], prog_name="iteragpu")


def output(*args: str, lang: str = "ko") -> str:
    result = run(*args, lang=lang)
    assert result.exit_code == 0, result.output
    text: str = result.stdout
    return text


def payload(*args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(output(*args))
    return data


# ---------------------------------------------------------------------------------------------
# Reading the Markdown back
# ---------------------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    """A table row's cells: split on the pipes that are not escaped."""
    inner = line.strip()[1:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def sheet_tables(text: str) -> list[dict[str, Any]]:
    """Every table of a Markdown text: its header, its alignment row and its rows, each row a
    list of cells as many as the header's (a table that is not one fails here)."""
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    found = []
    for lines in tables:
        header, align, *rows = (_cells(line) for line in lines)
        assert all(re.fullmatch(r"-{3,}:?", a) for a in align), align
        assert all(len(row) == len(header) == len(align) for row in rows), lines
        found.append({"header": header, "align": align, "rows": rows})
    return found


def number(text: str, lang: str) -> float:
    group, decimal = (",", ".") if lang == "ko" else (".", ",")
    return float(text.replace(group, "").replace(decimal, "."))


def quantity_columns_without_unit(table: dict[str, Any], lang: str) -> list[str]:
    """The names of the columns that hold a number in some row and do not end with a unit."""
    missing = []
    for index, name in enumerate(table["header"]):
        holds = any(_NUMBER[lang].match(row[index]) for row in table["rows"])
        unit = _UNIT.search(name)
        if holds and (unit is None or unit.group(1) not in UNITS):
            missing.append(name)
    return missing


def gpu_table(text: str, lang: str) -> dict[str, Any]:
    tables = sheet_tables(text)
    assert len(tables) == 3
    assert tables[2]["header"][0] == sheet_words(lang)["gpu"]
    return tables[2]


def column(table: dict[str, Any], words: dict[str, str], key: str) -> int:
    index: int = table["header"].index(words[key])
    return index


# ---------------------------------------------------------------------------------------------
# One GPU
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", CODES)
def test_the_sheet_of_one_gpu_states_the_commands_bytes(lang: str) -> None:
    text = output(*LIMIT, "--sheet", "markdown", lang=lang)
    sized = payload(*LIMIT, "--json")
    words = sheet_words(lang)
    assert text.startswith(f"**{words['title']}**\n")
    fields, load, gpus = sheet_tables(text)
    # What runs: a field per row, in the page's order; what the inputs do not say, empty.
    values = {row[0]: row[1] for row in fields["rows"]}
    assert fields["header"] == [words["field"], words["value"]]
    assert values[words["model"]] == "`llama-3.1-8b` (`meta-llama/Llama-3.1-8B`)"
    assert values[words["model_type"]] == "`llama`"
    assert values[words["task"]] == words["task_inference"]
    assert values[words["weights_dtype"]] == "`bfloat16`"
    for empty in ("revision", "decoding", "quality_bar", "environment"):
        assert values[words[empty]] == "", empty
    # The load: the sum of input and output is given, not its parts.
    (row,) = load["rows"]
    assert row[:2] == ["", ""]
    assert [number(cell, lang) for cell in row[2:]] == [8192, 4, 2]
    # One GPU, its bytes those of --json, its measured peak left to the reader.
    (gpu,) = gpus["rows"]
    assert gpu[0] == words["gpu_row"].replace("{rank}", "0")
    for key in ("weights_bytes", "kv_cache_bytes", "state_bytes", "reserve_bytes", "total_bytes"):
        assert number(gpu[column(gpus, words, key)], lang) == sized[key], key
    assert gpu[column(gpus, words, "measured_peak_bytes")] == ""
    assert number(gpu[column(gpus, words, "total_gib")], lang) == round(
        sized["total_bytes"] / 2**30, 2
    )
    for table in (fields, load, gpus):
        assert quantity_columns_without_unit(table, lang) == []
    assert english_runs(text) == []
    assert foreign_numbers(text, lang) == []


@pytest.mark.parametrize("lang", CODES)
def test_the_unit_check_finds_a_quantity_column_without_its_unit(lang: str) -> None:
    text = output(*LIMIT, "--sheet", "markdown", lang=lang)
    words = sheet_words(lang)
    bare = words["kv_cache_bytes"].rsplit("(", 1)[0].strip()
    stripped = text.replace(f"| {words['kv_cache_bytes']} |", f"| {bare} |")
    assert stripped != text
    assert quantity_columns_without_unit(gpu_table(stripped, lang), lang) == [bare]


def test_a_model_folder_states_no_revision_and_a_static_cache(tmp_path: Path) -> None:
    folder = str(model_folder(tmp_path, GEMMA_2_9B, "gemma"))
    args = [folder, "--tokens", "8192", "--cache", "static", "--static-max-tokens", "16384"]
    sheet = payload(*args, "--sheet", "json")
    assert sheet["model"] == folder and sheet["hf_repo"] is None
    assert sheet["revision"] is None
    assert sheet["revision_unknown_reason"] == "not_in_inputs"
    assert (sheet["cache"], sheet["static_max_tokens"]) == ("static", 16384)
    sized = payload(*args, "--json")
    (rank,) = sheet["ranks"]
    assert rank["kv_cache_bytes"] == sized["kv_cache_bytes"]
    assert rank["state_bytes"] == sized["state_bytes"]
    assert "16,384" in output(*args, "--sheet", "markdown")


def test_weights_at_bits_have_no_dtype_and_say_why(tmp_path: Path) -> None:
    folder = str(model_folder(tmp_path, LLAMA_3_8B, "llama"))
    sheet = payload(folder, "--tokens", "1024", "--bits", "4.5", "--sheet", "json")
    assert (sheet["weights_source"], sheet["weights_bits"]) == ("config", "4.5")
    assert sheet["weights_dtype"] is None
    assert sheet["weights_dtype_unknown_reason"] == "weights_at_bits"
    text = output(folder, "--tokens", "1024", "--bits", "4.5", "--sheet", "markdown", lang="id")
    assert "4,5 bit" in text


def test_weights_from_files_name_their_dtypes(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, LLAMA_3_8B, "with-files")
    header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})
    data = len(header).to_bytes(8, "little") + header.encode() + bytes(4)
    (folder / "model.safetensors").write_bytes(data)
    sheet = payload(str(folder), "--tokens", "16", "--sheet", "json")
    assert sheet["weights_source"] == "safetensors"
    assert sheet["weights_formats"] == ["F16"]
    assert sheet["weights_dtype"] is None
    assert sheet["weights_dtype_unknown_reason"] == "weights_from_files"
    assert sheet["ranks"][0]["weights_bytes"] == 4
    assert "`F16`" in output(str(folder), "--tokens", "16", "--sheet", "markdown")


# ---------------------------------------------------------------------------------------------
# A split: a row per GPU, the first to fill named
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize(
    "split",
    [["--runtime", "vllm", "--tp", "2"], ["--runtime", "vllm", "--pp", "2"], ["--tp", "2"]],
    ids=lambda s: " ".join(s),
)
def test_a_split_has_a_row_per_gpu_and_names_the_first_to_fill(lang: str, split: list[str]) -> None:
    text = output(*LIMIT, *split, "--sheet", "markdown", lang=lang)
    plan = payload(*LIMIT, *split, "--json")
    words = sheet_words(lang)
    table = gpu_table(text, lang)
    assert len(table["rows"]) == plan["gpus"] == 2
    first = plan["first_to_fill"]["rank"]
    for row, rank in zip(table["rows"], plan["ranks"], strict=True):
        label = "gpu_first" if rank["rank"] == first else "gpu_row"
        assert row[0] == words[label].replace("{rank}", str(rank["rank"]))
        for key in ("weights_bytes", "kv_cache_bytes", "state_bytes", "reserve_bytes"):
            assert number(row[column(table, words, key)], lang) == rank[key], key
        assert number(row[column(table, words, "total_bytes")], lang) == rank["total_bytes"]
    assert quantity_columns_without_unit(table, lang) == []
    assert english_runs(text) == []


def test_under_pipeline_stages_the_last_gpu_fills_first() -> None:
    # Stage 1 holds the final norm beside lm_head, stage 0 the embedding: 8,192 B more.
    sheet = payload(*LIMIT, "--runtime", "vllm", "--pp", "2", "--sheet", "json")
    first, second = sheet["ranks"]
    assert second["total_bytes"] - first["total_bytes"] == 4096 * 2
    assert sheet["first_to_fill"] == 1
    assert (sheet["runtime"], sheet["runtime_version"], sheet["cache"]) == (
        "vllm",
        "0.34.0",
        "vllm_blocks",
    )


@pytest.mark.parametrize(
    "split",
    [[], ["--runtime", "vllm", "--tp", "2"], ["--runtime", "vllm", "--tp", "2", "--pp", "2"]],
)
def test_the_json_sheets_bytes_are_the_commands(split: list[str]) -> None:
    sheet = payload(*LIMIT, *split, "--sheet", "json")
    sized = payload(*LIMIT, *split, "--json")
    ranks = sized.get("ranks") or [sized]
    assert len(sheet["ranks"]) == sheet["gpus"] == len(ranks)
    for row, rank in zip(sheet["ranks"], ranks, strict=True):
        for key in ("weights", "kv_cache", "state", "reserve", "total"):
            assert row[f"{key}_bytes"] == rank[f"{key}_bytes"], key
            assert row[f"{key}_bytes_exact"] == rank[f"{key}_bytes_exact"], key
            assert isinstance(row[f"{key}_bytes"], int)
        assert row["measured_peak_bytes"] is None
        assert row["measured_peak_unknown_reason"] == "not_measured"
    # Every null says why; nothing the inputs do not give is filled.
    for key, value in sheet.items():
        if key.endswith("_unknown_reason"):
            known = sheet[key.removesuffix("_unknown_reason")] is not None
            assert (value is None) == known, key
    for key in ("input_tokens", "output_tokens", "decoding", "quality_bar", "environment"):
        assert sheet[key] is None and sheet[f"{key}_unknown_reason"] is not None


def test_a_llama_cpp_split_keeps_the_host_part_apart(tmp_path: Path) -> None:
    from parallel.test_llamacpp_rules import write_gguf

    path = str(write_gguf(tmp_path / "tiny.gguf"))
    args = [path, "--tokens", "1024", "--runtime", "llama.cpp", "--pp", "2", "--gpu-layers", "3"]
    sheet = payload(*args, "--sheet", "json")
    plan = payload(*args, "--json")
    assert sheet["host"]["device"] == "host" and sheet["host"]["rank"] is None
    assert sheet["host"]["total_bytes"] == plan["host"]["total_bytes"] > 0
    assert sheet["weights_source"] == "gguf"
    assert sheet["weights_formats"] and all(isinstance(f, str) for f in sheet["weights_formats"])
    text = output(*args, "--sheet", "markdown")
    rows = gpu_table(text, "ko")["rows"]
    assert rows[-1][0] == sheet_words("ko")["host"]
    assert len(rows) == len(plan["ranks"]) + 1


# ---------------------------------------------------------------------------------------------
# What makes no sense is refused in one line
# ---------------------------------------------------------------------------------------------


REFUSED = [
    (["--sheet", "markdown", "--json"], "give --sheet json or --json, not both"),
    (["--sheet", "json", "--json"], "give --sheet json or --json, not both"),
    (
        ["--sheet", "markdown", "--shortlist", "--days", "2"],
        "--sheet prints the load sheet alone: run --shortlist without --sheet",
    ),
]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize(("args", "message"), REFUSED, ids=lambda a: str(a))
def test_what_makes_no_sense_is_refused_in_one_line(
    lang: str, args: list[str], message: str
) -> None:
    from iteragpu.i18n.catalogue import translate

    result = run(*LIMIT, *args, lang=lang)
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(f": {translate(message, lang)}")


def test_an_unknown_sheet_form_is_clicks_refusal() -> None:
    result = run(*LIMIT, "--sheet", "xml")
    assert result.exit_code == 2
    assert "xml" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("lang", CODES)
def test_a_model_whose_cache_is_unknown_gets_no_sheet(tmp_path: Path, lang: str) -> None:
    folder = model_folder(tmp_path, {"model_type": "not-a-family"}, "unknown")
    header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})
    (folder / "model.safetensors").write_bytes(
        len(header).to_bytes(8, "little") + header.encode() + bytes(4)
    )
    assert run(str(folder), "--tokens", "16", lang=lang).exit_code == 0  # its weights alone
    result = run(str(folder), "--tokens", "16", "--sheet", "json", lang=lang)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert str(folder) in line and "--sheet" in line


# ---------------------------------------------------------------------------------------------
# The pages: the guide shows the command's output, the CLI page documents the keys
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("name", ["load_spec_sheet", "load_spec_tp2"])
def test_the_guide_shows_the_sheet_the_command_prints(lang: str, name: str) -> None:
    console = (ROOT / "snippets" / f"{name}.{lang}.console").read_text("utf-8")
    command, _, printed = console.partition("\n")
    assert "--sheet markdown" in command
    page = (ROOT / "docs" / lang / "docs" / "load-specification.md").read_text("utf-8")
    assert f'--8<-- "{name}.{lang}.console"' in page
    if name == "load_spec_sheet":  # rendered on the page, as the reader pastes it
        assert printed.rstrip("\n") in page


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_page_lists_the_sheets_json_keys(lang: str) -> None:
    page = (ROOT / "docs" / lang / "docs" / "cli.md").read_text("utf-8")
    (paragraph,) = [line for line in page.splitlines() if "`measured_peak_bytes`" in line]
    documented = set(re.findall(r"`([a-z_]+)`", paragraph))
    sheet = payload(*LIMIT, "--runtime", "vllm", "--tp", "2", "--sheet", "json")
    keys = {k for k in sheet if not k.endswith("_unknown_reason")}
    rank_keys = {k for k in sheet["ranks"][0] if not k.endswith(("_exact", "_unknown_reason"))}
    assert keys | rank_keys <= documented


@pytest.mark.parametrize("tp", [1, 2])
def test_the_sizers_sheet_states_the_commands_bytes_for_the_same_model(tp: int) -> None:
    from iteragpu.docs_tools.sizer_sheet_vectors import LLAMA, LLAMA_QUERY, sizer_sheet
    from iteragpu.docs_tools.sizer_vectors import DEFAULT_QUERY, expected
    from iteragpu.i18n.sheet import sheet_json

    query = {**DEFAULT_QUERY, **LLAMA_QUERY}
    split = None if tp == 1 else {"preset": LLAMA["name"], "tp": tp, "pp": 1, "ep": False}
    page = sizer_sheet(query, expected(query), LLAMA, split)
    assert page is not None
    runtime = [] if tp == 1 else ["--runtime", "vllm", "--tp", str(tp)]
    command = payload(*LIMIT, *runtime, "--sheet", "json")
    mine = sheet_json(page)
    for key in ("weights", "kv_cache", "state", "reserve", "total"):
        assert [r[f"{key}_bytes"] for r in mine["ranks"]] == [
            r[f"{key}_bytes"] for r in command["ranks"]
        ], key


def test_a_cell_is_one_line_its_pipes_escaped_and_code_fenced_past_its_backticks() -> None:
    # The same literal as tests/js/sizer_sheet.test.mjs: both printers write it alike.
    from iteragpu.i18n.sheet import cell, code

    assert cell(code("a|b `c`\nd")) == "``a\\|b `c` d``"
    assert code("`x") == "`` `x ``"
