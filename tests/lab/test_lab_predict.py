"""`predict`: the allocated bytes PyTorch's caching allocator shows after model_load and inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from foreign_text import foreign_numbers
from hypothesis import given, settings
from hypothesis import strategies as st
from lab_support import (
    CUBLAS_WORKSPACE_PRE_HOPPER_BYTES,
    K_MIN_BLOCK_SIZE,
    K_SMALL_BUFFER,
    K_SMALL_SIZE,
    SimulatedCachingAllocator,
    SimulatedWorkload,
    pytorch_allocation_size,
    pytorch_round_size,
    run_script,
)
from support import per_language

from iteragpu import examples
from iteragpu.lab import mesure_memoire as mm

VALIDATION = ("--batch", "1", "--context", "16", "--width", "64", "--dtype", "float32")


def test_validation_case_derivation() -> None:
    """The guides' validation case, derived from the shapes (not from any stated figure)."""
    prediction = mm.predict(1, 16, 64, "float32")
    model_load = prediction["phases"]["model_load"]
    numels = [t["numel"] for t in model_load["tensors"]]
    assert numels == [64, 64, 256 * 64, 256, 64 * 256, 64]
    parameters = sum(numels)
    assert prediction["weights_estimate"]["parameters"] == parameters == 33_216
    # raw = the estimate of the same parameters at 32 bits
    assert model_load["raw_bytes"] == mm.dense_weight_bytes(parameters, 32) == 132_864
    small = [t for t in model_load["tensors"] if t["raw_bytes"] < K_MIN_BLOCK_SIZE]
    assert [t["raw_bytes"] for t in small] == [256, 256, 256]  # three 256-B tensors
    assert model_load["rounding_bytes"] == 3 * (K_MIN_BLOCK_SIZE - 256) == 768
    assert model_load["allocated_bytes"] == 132_864 + 768 == 133_632
    inputs = prediction["phases"]["inputs"]
    assert inputs["added_bytes"] == 1 * 16 * 64 * 4 == 4_096
    assert inputs["allocated_bytes"] == 133_632 + 4_096


def test_example_registry_states_the_code_figures() -> None:
    """The lab pages' figures come from predict (through the examples registry)."""
    figures = {f.key: f.value for f in examples.example("lab-predict-validation").figures}
    prediction = mm.predict(1, 16, 64, "float32")
    model_load = prediction["phases"]["model_load"]
    assert figures["model_load_allocated_bytes"] == model_load["allocated_bytes"]
    assert figures["model_load_raw_bytes"] == model_load["raw_bytes"]
    assert figures["model_load_rounding_bytes"] == model_load["rounding_bytes"]
    assert figures["inputs_added_bytes"] == prediction["phases"]["inputs"]["added_bytes"]
    assert figures["parameters"] == prediction["weights_estimate"]["parameters"]


DIMENSIONS = st.tuples(
    st.integers(1, 8),
    st.integers(1, 64),
    st.integers(1, 300),
    st.sampled_from(sorted(mm.DTYPE_SIZES)),
)


@settings(max_examples=200, deadline=None)
@given(DIMENSIONS)
def test_prediction_equals_the_simulated_allocator(dims: tuple[int, int, int, str]) -> None:
    """Over many shapes and dtypes: predict == what an allocator with PyTorch's rules shows."""
    batch, context, width, dtype = dims
    allocator = SimulatedCachingAllocator()
    workload = SimulatedWorkload(allocator, batch, context, width, dtype)
    workload.load_model()
    after_model = allocator.memory_allocated()
    workload.make_inputs()
    prediction = mm.predict(batch, context, width, dtype)
    assert prediction["phases"]["model_load"]["allocated_bytes"] == after_model
    assert prediction["phases"]["inputs"]["allocated_bytes"] == allocator.memory_allocated()
    workload.forward()
    kept = prediction["kept_output"]["allocated_bytes"]
    assert allocator.memory_allocated() - kept == workload.workspace_bytes  # only the workspace


@settings(max_examples=300)
@given(st.integers(1, 64 * 2**20))
def test_rounding_agrees_with_pytorchs_rule(nbytes: int) -> None:
    assert mm.round_up_to_block(nbytes) == pytorch_round_size(nbytes)
    assert mm.ALLOCATOR_BLOCK_BYTES == K_MIN_BLOCK_SIZE


@pytest.mark.parametrize(
    ("request_bytes", "segment_bytes"),
    [
        (1, K_SMALL_BUFFER),
        (K_SMALL_SIZE, K_SMALL_BUFFER),
        (K_SMALL_SIZE + 1, 20 * 2**20),
        (8_519_680, 20 * 2**20),  # the default cuBLAS workspace before Hopper
        (10 * 2**20, 10 * 2**20),
        (10 * 2**20 + 1, 12 * 2**20),
        (32 * 2**20, 32 * 2**20),  # the default cuBLAS workspace on Hopper
    ],
)
def test_simulated_segments_follow_pytorchs_sizes(request_bytes: int, segment_bytes: int) -> None:
    assert pytorch_allocation_size(pytorch_round_size(request_bytes)) == segment_bytes
    allocator = SimulatedCachingAllocator()
    allocator.malloc(request_bytes)
    assert allocator.memory_reserved() == segment_bytes


def test_validation_case_fits_one_small_segment() -> None:
    allocator = SimulatedCachingAllocator()
    workload = SimulatedWorkload(allocator, 1, 16, 64, "float32")
    workload.load_model()
    workload.make_inputs()
    assert allocator.memory_reserved() == K_SMALL_BUFFER
    assert len(allocator.segments) == 1


def test_predict_json_from_the_command_line(tmp_path: Path) -> None:
    done = run_script("predict", *VALIDATION, "--json", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    data = json.loads(done.stdout)
    assert data["phases"]["model_load"]["allocated_bytes"] == 133_632
    assert data["phases"]["inputs"]["allocated_bytes"] == 137_728
    assert data["phases"]["inputs"]["added_bytes"] == 4_096
    tensors = data["phases"]["model_load"]["tensors"]
    assert [t["name"] for t in tensors] == [n for n, _ in mm.network_parameter_shapes(64)]
    for t in tensors:
        assert t["allocated_bytes"] == t["raw_bytes"] + t["rounding_bytes"]
        assert t["allocated_bytes"] % 512 == 0 and t["allocated_bytes"] >= 512
    assert data["allocator"]["block_bytes"] == 512
    assert any("cuBLAS" in item for item in data["not_predicted"])
    for key, value in data["phases"]["model_load"].items():
        if key.endswith("_bytes"):
            assert type(value) is int  # the JSON convention: integer bytes


PREDICTED_TEXT = per_language(
    {
        "ko": ("133,632 B", "132,864 B", "768 B", "+4,096 B", "137,728 B"),
        "id": ("133.632 B", "132.864 B", "768 B", "+4.096 B", "137.728 B"),
    }
)


@pytest.mark.parametrize(("lang", "figures"), PREDICTED_TEXT)
def test_predict_text(tmp_path: Path, lang: str, figures: tuple[str, ...]) -> None:
    done = run_script("predict", *VALIDATION, "--lang", lang, cwd=tmp_path)
    assert done.returncode == 0
    model_load, raw, rounding, inputs_added, inputs = figures
    lines = done.stdout.splitlines()
    [model_line] = [line for line in lines if line.startswith("model_load:")]
    assert model_line.split(":", 1)[1].strip() == mm.say(
        lang, "predict_step", allocated=model_load, added=model_load, raw=raw, rounding=rounding
    )
    [inputs_line] = [line for line in lines if line.startswith("inputs:")]
    assert f" {inputs} " in inputs_line and f"({inputs_added}:" in inputs_line
    not_predicted = [line for line in lines if line.startswith(mm.say(lang, "label_not_predicted"))]
    assert len(not_predicted) == len(mm.NOT_PREDICTED) and "cuBLAS" in not_predicted[0]
    assert foreign_numbers(done.stdout, lang) == []


@pytest.mark.parametrize(("lang", "separator"), [("ko", ","), ("id", ".")])
def test_readmes_state_the_predicted_figures(lang: str, separator: str) -> None:
    """The READMEs are not figure-checked pages: their prediction figures are pinned here."""
    readme = Path(mm.__file__).with_name(f"README.{lang}.md")
    text = readme.read_text("utf-8")
    prediction = mm.predict(1, 16, 64, "float32")
    model_load = prediction["phases"]["model_load"]
    inputs = prediction["phases"]["inputs"]
    for value in (
        prediction["weights_estimate"]["parameters"],
        model_load["raw_bytes"],
        model_load["rounding_bytes"],
        model_load["allocated_bytes"],
        inputs["added_bytes"],
        inputs["allocated_bytes"],
    ):
        assert f"{value:,}".replace(",", separator) in text, (readme.name, value)


def test_page_sizes_of_what_is_not_predicted_come_from_pytorchs_defaults() -> None:
    figures = {f.key: f.value for f in examples.example("lab-not-predicted").figures}
    assert figures["small_segment_mib"] * 2**20 == K_SMALL_BUFFER
    assert figures["cublas_workspace_before_hopper_mib"] * 2**20 == (
        CUBLAS_WORKSPACE_PRE_HOPPER_BYTES
    )
    assert figures["cublas_workspace_hopper_mib"] == 32
