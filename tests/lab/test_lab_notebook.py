"""The notebooks built from iteragpu_lab.py: one per language, valid, output-free, in their
reader's language, and runnable to the end headless ("Run All") without a GPU."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from foreign_text import english_sentences, foreign_numbers
from hypothesis import given, settings
from hypothesis import strategies as st
from lab_support import NOTEBOOK_SOURCE, notebook_code_cells, notebook_namespace, run_script

from iteragpu.docs_tools import lab_archive
from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.lab import mesure_memoire as mm

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupytext")

HANGUL = range(0xAC00, 0xD7A4)
# What a notebook reader may meet in English: the names of the things the cells work with.
PROPER_NAMES = ("Run All",)
_MARKER = re.compile(r"^\s*# \[([a-z]{2,3})\]", re.M)


def has_hangul(text: str) -> bool:
    return any(ord(c) in HANGUL for c in text)


def load(lang: str) -> Any:
    return nbformat.reads(lab_archive.notebook_bytes(lang).decode("utf-8"), as_version=4)


def cell_by_tag(nb: Any, tag: str) -> Any:
    matches = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    assert len(matches) == 1, tag
    return matches[0]


def stream_text(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def comments(source: str) -> list[str]:
    """The comments of a code cell, as a reader sees them."""
    return [line.split("#", 1)[1] for line in source.splitlines() if line.lstrip().startswith("#")]


@pytest.mark.parametrize("lang", CODES)
def test_notebook_is_valid_and_output_free(lang: str) -> None:
    raw = lab_archive.notebook_bytes(lang)
    assert raw == lab_archive.notebook_bytes(lang)  # deterministic
    nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert nb.metadata["iteragpu_lab"]["language"] == lang
    assert "jupytext" not in nb.metadata
    for cell in nb.cells:
        assert not any(t.startswith("lang-") for t in cell.metadata.get("tags", []))
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert has_hangul(markdown) == (lang == "ko")
    if lang == "id":
        assert "pengukuran" in markdown
    json.loads(raw)  # plain JSON


@pytest.mark.parametrize("lang", CODES)
def test_the_code_is_shared_and_only_the_messages_and_comments_differ(lang: str) -> None:
    source, other = load(SOURCE), load(lang)
    code = [c for c in other.cells if c.cell_type == "code"]
    assert len(code) == len([c for c in source.cells if c.cell_type == "code"]) >= 8
    for mine, theirs in zip(source.cells, other.cells, strict=True):
        assert mine.cell_type == theirs.cell_type
        if mine.cell_type == "code" and "messages" not in mine.metadata.get("tags", []):
            strip = [line for line in mine.source.splitlines() if not line.lstrip().startswith("#")]
            theirs_code = theirs.source.splitlines()
            assert strip == [line for line in theirs_code if not line.lstrip().startswith("#")]
    messages = notebook_namespace("messages", lang=lang)
    assert messages["LANG"] == lang
    assert sorted(messages["MESSAGES"]) == sorted(notebook_namespace("messages")["MESSAGES"])


def test_every_shared_comment_is_written_in_every_language() -> None:
    """A block of `# [xx]` comment lines in the source holds every language of the list."""
    for tag, source in notebook_code_cells().items():
        blocks: list[list[str]] = []
        previous = False
        for line in source.splitlines():
            marker = _MARKER.match(line)
            if marker and not previous:
                blocks.append([])
            if marker:
                blocks[-1].append(marker[1])
            previous = bool(marker)
        for block in blocks:
            assert sorted(set(block)) == sorted(CODES), (tag, block)


@pytest.mark.parametrize("lang", CODES)
def test_a_reader_meets_only_their_language_in_the_cells(lang: str) -> None:
    nb = load(lang)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not _MARKER.search(cell.source), "a language marker was left in"
            prose = "\n".join(comments(cell.source))
        else:
            prose = re.sub(r"`[^`]*`", " ", cell.source)
        assert english_sentences(prose, allow=PROPER_NAMES) == [], (cell.id, prose[:200])
        if lang != "ko":
            assert not has_hangul(prose), cell.id
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    for key, text in messages.items():
        assert english_sentences(text) == [], key


def test_notebook_does_not_import_the_script() -> None:
    imported: set[str] = set()
    for cell in load(SOURCE).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
    assert imported, "expected some imports"
    assert not imported & {"mesure_memoire", "iteragpu"}
    for lang, word in (("ko", "자립형"), ("id", "mandiri")):
        assert word in cell_by_tag(load(lang), "setup").source


@pytest.mark.parametrize("lang", CODES)
def test_notebook_messages_are_the_scripts_where_they_say_the_same(lang: str) -> None:
    """Every message the notebook shares with the script is the script's sentence."""
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    shared = set(messages) & set(mm.MESSAGES[lang])
    assert {"estimate_title", "note_reserve", "cpu_only_build", "caching_disabled"} <= shared
    for key in shared:
        assert messages[key] == mm.MESSAGES[lang][key], key


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 64),
    st.integers(1, 4096),
    st.integers(1, 4096),
    st.sampled_from(sorted(mm.DTYPE_SIZES)),
)
def test_notebook_prediction_is_the_scripts(
    batch: int, context: int, width: int, dtype: str
) -> None:
    """The notebook's copy of predict agrees with the script over many inputs (no torch)."""
    predicted = NAMESPACE["predicted_allocations"](batch, context, width, dtype)
    prediction = mm.predict(batch, context, width, dtype)
    assert predicted == (
        prediction["phases"]["model_load"]["allocated_bytes"],
        prediction["phases"]["inputs"]["allocated_bytes"],
    )


NAMESPACE = notebook_namespace("setup", "messages", "functions", "protocol")


@pytest.mark.parametrize("lang", CODES)
def test_notebook_refuses_a_second_measurement_in_the_same_kernel(lang: str) -> None:
    namespace = notebook_namespace(
        "setup", "messages", "functions", "protocol", "parameters", lang=lang
    )
    runs: list[tuple[Any, ...]] = []
    namespace["gpu_problem"] = lambda device: None  # as if a GPU were there
    namespace["run_measurement"] = lambda *args: runs.append(args) or []
    measure = compile(notebook_code_cells(lang)["measure"], "<notebook measure>", "exec")
    exec(measure, namespace)
    assert len(runs) == 1 and namespace["MEASURED_IN_THIS_KERNEL"] is True
    with pytest.raises(namespace["AlreadyMeasuredError"]) as info:
        exec(measure, namespace)
    assert len(runs) == 1  # nothing ran the second time
    assert str(info.value) == namespace["MESSAGES"]["already_measured"]
    assert info.value._render_traceback_() == [str(info.value)]  # one line, no traceback


@pytest.mark.parametrize("lang", CODES)
def test_without_a_gpu_the_measure_cell_says_why_and_the_results_cell_has_nothing_to_show(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = notebook_namespace(
        "setup", "messages", "functions", "protocol", "parameters", lang=lang
    )
    namespace["gpu_problem"] = lambda device: "no GPU here (test)"
    cells = notebook_code_cells(lang)
    for tag in ("measure", "results"):
        exec(compile(cells[tag], f"<notebook {tag}>", "exec"), namespace)
    assert "MEASURED_IN_THIS_KERNEL" not in namespace
    messages = namespace["MESSAGES"]
    assert capsys.readouterr().out.splitlines() == [
        messages["cannot_measure_here"].format(reason="no GPU here (test)"),
        messages["nothing_to_show"],
    ]


def test_the_results_cell_alone_has_nothing_to_show(capsys: pytest.CaptureFixture[str]) -> None:
    """Run before the measure cell (out of order), the results cell says so, without NameError."""
    namespace = notebook_namespace("setup", "messages", "functions", "protocol", "parameters")
    exec(compile(notebook_code_cells()["results"], "<notebook results>", "exec"), namespace)
    assert capsys.readouterr().out == namespace["MESSAGES"]["nothing_to_show"] + "\n"


@pytest.mark.parametrize("lang", CODES)
def test_the_results_cell_reads_the_phases_in_the_readers_language(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = notebook_namespace(
        "setup", "messages", "functions", "protocol", "parameters", lang=lang
    )
    counters = dict.fromkeys(namespace["COUNTERS"], 1_234_567)
    namespace["phases"] = [
        {"phase": "model_load", "repeat": None, "status": "ok", "error": None, **counters},
        {
            "phase": "inputs",
            "repeat": None,
            "status": "failed",
            "error": "OutOfMemoryError: x",
            **dict.fromkeys(namespace["COUNTERS"]),
        },
    ]
    exec(compile(notebook_code_cells(lang)["results"], "<notebook results>", "exec"), namespace)
    out = capsys.readouterr().out
    messages = namespace["MESSAGES"]
    assert messages["model_load_not_zero"] in out
    assert messages["status_failed"] in out and "null" in out
    assert foreign_numbers(out, lang) == [] and english_sentences(out) == []
    predicted = namespace["predicted_allocations"](1, 16, 64, "float32")[0]
    assert namespace["local_text"](str(1_234_567 - predicted)) in out


def test_notebook_asks_no_device_for_its_free_memory() -> None:
    """mem_get_info creates a CUDA context on the device it asks: the notebook never calls it."""
    for tag, source in notebook_code_cells().items():
        for node in ast.walk(ast.parse(source)):
            assert not (isinstance(node, ast.Attribute) and node.attr == "mem_get_info"), tag


def test_notebook_caching_off_leaves_counters_null(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = notebook_namespace("setup", "messages", "functions", "protocol")
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    record: dict[str, Any] = dict.fromkeys(namespace["COUNTERS"])
    namespace["torch"] = SimpleNamespace(
        cuda=SimpleNamespace(
            **dict.fromkeys(
                [
                    "memory_allocated",
                    "memory_reserved",
                    "max_memory_allocated",
                    "max_memory_reserved",
                ],
                lambda device: 0,
            )
        )
    )
    namespace["read_counters"](record, namespace["COUNTERS"], "cuda:0")
    assert set(record.values()) == {None}
    assert namespace["counters_unavailable"]() == mm.say(
        SOURCE, "caching_disabled", setting="PYTORCH_NO_CUDA_MEMORY_CACHING='1'"
    )
    monkeypatch.delenv("PYTORCH_NO_CUDA_MEMORY_CACHING")
    namespace["read_counters"](record, namespace["COUNTERS"], "cuda:0")
    assert set(record.values()) == {0}


# --- "Run All", headless, as a reader without a GPU runs it ------------------------------------


def run_all(lang: str, folder: Path) -> Any:
    """Both notebooks executed headless with nbclient, every cell, as "Run All" runs them."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = load(lang)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(folder)}}
    )
    client.execute()  # raises CellExecutionError if any cell fails
    return nb


def check_run_all(nb: Any, lang: str, folder: Path, why: str) -> None:
    """Every cell ran without an error; the measure cell says `why` in the notebook's language
    and the results cell that there is nothing to show; the estimates are the script's; no
    English sentence and no other language's number format in any output."""
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is not None, cell.id
            assert [o for o in cell.outputs if o.output_type == "error"] == [], cell.id
            assert [o for o in cell.outputs if o.get("name") == "stderr"] == [], cell.id
            # PyTorch's own import warnings are quoted as PyTorch wrote them, under a label in
            # the reader's language (like a file name, they are not the notebook's words)
            out = "\n".join(
                line
                for line in stream_text(cell).splitlines()
                if not line.startswith(messages["label_import_warning"] + ":")
            )
            assert english_sentences(out, allow=PROPER_NAMES) == [], (cell.id, out)
            if "environment" not in cell.metadata.get("tags", []):  # versions, not quantities
                assert foreign_numbers(out, lang) == [], (cell.id, out)
    assert stream_text(cell_by_tag(nb, "measure")) == (
        messages["cannot_measure_here"].format(reason=why) + "\n"
    )
    assert stream_text(cell_by_tag(nb, "results")) == messages["nothing_to_show"] + "\n"
    # the training step: nothing measured either, and said so in the reader's language
    assert stream_text(cell_by_tag(nb, "train-measure")) == (
        messages["cannot_measure_here"].format(reason=why) + "\n"
    )
    assert stream_text(cell_by_tag(nb, "train-results")) == messages["nothing_to_show"] + "\n"
    for tag, bits in (("estimate", "16"), ("estimate-4bit", "4")):
        script = run_script(
            *["estimate", "--parameters", "7000000000", "--bits", bits, "--reserve-gib", "4"],
            *["--lang", lang],
            cwd=folder,
        )
        assert script.returncode == 0
        assert stream_text(cell_by_tag(nb, tag)) == script.stdout
    gib = mm.local_number(mm.Exact(14_000_000_000, 2**30), lang, 2)
    assert f"{gib} GiB" in stream_text(cell_by_tag(nb, "estimate"))
    environment = stream_text(cell_by_tag(nb, "environment"))
    assert environment.startswith("Python:") and "PyTorch:" in environment


@pytest.mark.parametrize("lang", CODES)
def test_run_all_without_torch_completes_in_the_readers_language(lang: str, tmp_path: Path) -> None:
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("PyTorch is installed here: `nox -s lab_torch` runs the variant with it")
    nb = run_all(lang, tmp_path)
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    why = messages["notebook_no_torch"].format(error="ModuleNotFoundError")
    check_run_all(nb, lang, tmp_path, why)
    environment = stream_text(cell_by_tag(nb, "environment"))
    assert f"{messages['not_installed']} (ModuleNotFoundError)" in environment


@pytest.mark.torch
@pytest.mark.parametrize("lang", CODES)
def test_run_all_with_the_cpu_torch_completes_in_the_readers_language(
    lang: str, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the notebook would measure it")
    nb = run_all(lang, tmp_path)
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    key = "cpu_only_build" if torch.version.cuda is None else "sees_no_gpu"
    check_run_all(nb, lang, tmp_path, messages[key].format(version=torch.__version__))


@pytest.mark.torch
@pytest.mark.parametrize("lang", CODES)
def test_run_all_on_a_gpu_measures_in_the_readers_language(lang: str, tmp_path: Path) -> None:
    """`nox -s gpu`: on a GPU, "Run All" measures the validation case, and the results cell
    finds model_load and inputs where predict puts them, in the reader's language."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU here: the CPU variants above run instead")
    nb = run_all(lang, tmp_path)
    messages = notebook_namespace("messages", lang=lang)["MESSAGES"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert [o for o in cell.outputs if o.output_type == "error"] == [], cell.id
    progress = stream_text(cell_by_tag(nb, "measure")).splitlines()
    assert progress[0] == f"model_load: {messages['status_ok']}"
    assert len(progress) == 6 and english_sentences("\n".join(progress)) == []
    results = stream_text(cell_by_tag(nb, "results"))
    assert english_sentences(results) == [] and foreign_numbers(results, lang) == []
    local_text = notebook_namespace("setup", "messages", "functions", lang=lang)["local_text"]
    for phase, predicted in zip(
        ("model_load", "inputs"),
        notebook_namespace("setup", "messages", "functions", "protocol")["predicted_allocations"](
            1, 16, 64, "float32"
        ),
        strict=True,
    ):
        expected = messages["predicted_line"].format(
            phase=phase,
            measured=local_text(str(predicted)),
            predicted=local_text(str(predicted)),
            difference="0",
        )
        assert expected in results.splitlines()
    # the training step: every phase of each step, the model states counted as predicted
    training = stream_text(cell_by_tag(nb, "train-measure")).splitlines()
    assert len(training) == 2 + 3 * 5 and all(messages["status_ok"] in line for line in training)
    lines = stream_text(cell_by_tag(nb, "train-results")).splitlines()
    assert len(lines) == 2 + 3 * 5 and english_sentences("\n".join(lines)) == []
    differences = [line for line in lines if ", 0 B)" in line or " 0 B)" in line]
    assert len(differences) == len(lines), lines


def test_the_source_marks_its_comments_with_known_languages() -> None:
    marked = set(_MARKER.findall(NOTEBOOK_SOURCE.read_text("utf-8")))
    assert marked == set(CODES), f"comments in {sorted(marked)}, languages {sorted(CODES)}"
