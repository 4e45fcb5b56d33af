"""The two notebooks built from iteragpu_lab.py: valid, output-free, and runnable headless."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lab_support import notebook_code_cells, run_script

from iteragpu.docs_tools import lab_archive
from iteragpu.lab import mesure_memoire as mm

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupytext")

HANGUL = range(0xAC00, 0xD7A4)


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


@pytest.mark.parametrize("lang", lab_archive.LANGUAGES)
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


def test_both_notebooks_share_the_same_code_cells() -> None:
    ko, id_ = load("ko"), load("id")
    code_ko = [c.source for c in ko.cells if c.cell_type == "code"]
    code_id = [c.source for c in id_.cells if c.cell_type == "code"]
    assert code_ko == code_id and len(code_ko) >= 8
    md_ko = [c for c in ko.cells if c.cell_type == "markdown"]
    md_id = [c for c in id_.cells if c.cell_type == "markdown"]
    assert len(md_ko) == len(md_id) > 0


def test_notebook_does_not_import_the_script() -> None:
    imported: set[str] = set()
    for cell in load("ko").cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
    assert imported, "expected some imports"
    assert not imported & {"mesure_memoire", "iteragpu"}
    assert "self-contained" in lab_archive.NOTEBOOK_SOURCE.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", lab_archive.LANGUAGES)
def test_notebook_runs_headless_and_stops_at_no_gpu(lang: str, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is visible: the no-GPU stop is not expected here")
    except ImportError:
        pass
    nb = load(lang)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    with pytest.raises(nbclient.exceptions.CellExecutionError) as info:
        client.execute()
    error = info.value
    assert error.ename == "NoGPUError"
    assert error.evalue.startswith("No GPU:")
    measure = cell_by_tag(nb, "measure")
    [output] = [o for o in measure.outputs if o.output_type == "error"]
    assert output.traceback == [error.evalue]  # one line, no traceback
    # every cell before the measurement ran; the calculation matches the script
    index = nb.cells.index(measure)
    for cell in nb.cells[:index]:
        if cell.cell_type == "code":
            assert cell.execution_count is not None
            assert not [o for o in cell.outputs if o.output_type == "error"]
    for tag, bits in (("estimate", "16"), ("estimate-4bit", "4")):
        script = run_script(
            "estimate",
            "--parameters",
            "7000000000",
            "--bits",
            bits,
            "--reserve-gib",
            "4",
            cwd=tmp_path,
        )
        assert script.returncode == 0
        assert stream_text(cell_by_tag(nb, tag)) == script.stdout
    assert "13.04 GiB" in stream_text(cell_by_tag(nb, "estimate"))
    assert "torch:" in stream_text(cell_by_tag(nb, "environment"))


def _notebook_namespace(*tags: str) -> dict[str, Any]:
    cells = notebook_code_cells()
    namespace: dict[str, Any] = {}
    for tag in tags:
        exec(compile(cells[tag], f"<notebook {tag}>", "exec"), namespace)
    return namespace


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


NAMESPACE = _notebook_namespace("setup", "protocol")


def test_notebook_refuses_a_second_measurement_in_the_same_kernel() -> None:
    namespace = _notebook_namespace("setup", "protocol", "parameters")
    runs: list[tuple[Any, ...]] = []
    namespace["gpu_problem"] = lambda device: None  # as if a GPU were there
    namespace["run_measurement"] = lambda *args: runs.append(args) or []
    measure = compile(notebook_code_cells()["measure"], "<notebook measure>", "exec")
    exec(measure, namespace)
    assert len(runs) == 1 and namespace["MEASURED_IN_THIS_KERNEL"] is True
    with pytest.raises(namespace["AlreadyMeasuredError"]) as info:
        exec(measure, namespace)
    assert len(runs) == 1  # nothing ran the second time
    assert "Restart the kernel" in str(info.value)
    assert info.value._render_traceback_() == [str(info.value)]  # one line, no traceback


def test_notebook_without_gpu_does_not_mark_the_kernel_measured() -> None:
    namespace = _notebook_namespace("setup", "protocol", "parameters")
    namespace["gpu_problem"] = lambda device: "No GPU: test"
    with pytest.raises(namespace["NoGPUError"]):
        exec(compile(notebook_code_cells()["measure"], "<notebook measure>", "exec"), namespace)
    assert "MEASURED_IN_THIS_KERNEL" not in namespace


def test_notebook_asks_no_device_for_its_free_memory() -> None:
    """mem_get_info creates a CUDA context on the device it asks: the notebook never calls it."""
    for tag, source in notebook_code_cells().items():
        for node in ast.walk(ast.parse(source)):
            assert not (isinstance(node, ast.Attribute) and node.attr == "mem_get_info"), tag


def test_notebook_caching_off_leaves_counters_null(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = _notebook_namespace("setup", "protocol")
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
    monkeypatch.delenv("PYTORCH_NO_CUDA_MEMORY_CACHING")
    namespace["read_counters"](record, namespace["COUNTERS"], "cuda:0")
    assert set(record.values()) == {0}
