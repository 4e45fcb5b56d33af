"""`iteragpu train`: the command's plumbing, output and refusals (CliRunner, fixed width).

The figures it states are proved elsewhere against the real libraries after a real step
(`nox -s training`: tests/training/test_states_torch.py for gradients, optimizer states and
master copies, test_adapters_torch.py for PEFT's adapters and bitsandbytes' 4-bit states,
test_sharding_torch.py for FSDP2's shards over gloo). Here: the JSON's keys and sums, the
issue's measured tiny Llama (P = 106,816 in 21 tensors: fp32 AdamW holds 16P + 84 B, the 84 B
of `step` counters in host memory), per-GPU figures of a sharded run, the text in each
language, and every bad input one line with exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import message

# The tiny Llama: vocab 256, hidden 64, 2 layers, 4 heads, 2 KV heads, head untied.
TINY = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "tie_word_embeddings": False,
    "dtype": "float32",
}
P = 106_816
MIXTRAL = {**TINY, "model_type": "mixtral", "num_local_experts": 4}


def _folder(tmp_path: Path, config: dict[str, Any]) -> Path:
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return folder


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["train", *args], prog_name="iteragpu", env={"COLUMNS": "120"})


def _json(*args: str) -> dict[str, Any]:
    result = _run(*args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_fp32_adamw_holds_16_bytes_a_parameter_and_4_a_tensor_on_the_host(
    tmp_path: Path,
) -> None:
    data = _json(str(_folder(tmp_path, TINY)), "--precision", "fp32")
    assert (data["parameters"], data["trainable_parameters"], data["trainable_tensors"]) == (
        P,
        P,
        21,
    )
    assert data["weights_bytes"] == data["gradients_bytes"] == 4 * P
    assert data["optimizer_state_bytes"] == 8 * P  # exp_avg and exp_avg_sq, on the GPU
    assert data["optimizer_host_bytes"] == 4 * 21  # one float32 `step` per tensor
    assert data["model_states_bytes"] == 16 * P
    assert data["model_states_bytes"] + data["optimizer_host_bytes"] == 16 * P + 84
    names = {(s["name"], s["device"]): s["bytes"] for s in data["optimizer_states"]}
    assert names == {("exp_avg", "gpu"): 4 * P, ("exp_avg_sq", "gpu"): 4 * P, ("step", "host"): 84}
    assert data["activations_bytes"] is None
    assert data["activations_reason"] == "measured by the lab"
    assert data["status"]["activations"] == "unknown"
    assert {data["status"][k] for k in ("weights", "gradients")} == {"estimated"}


@pytest.mark.parametrize(
    ("precision", "per_parameter"), [("bf16", 8), ("bf16-master", 20), ("autocast-bf16", 16)]
)
def test_each_precision_holds_what_pytorch_holds(
    tmp_path: Path, precision: str, per_parameter: int
) -> None:
    data = _json(str(_folder(tmp_path, TINY)), "--precision", precision)
    assert data["model_states_bytes"] == per_parameter * P
    master = data["master_weights_bytes"] + data["master_gradients_bytes"]
    assert master == (8 * P if precision == "bf16-master" else 0)


def test_the_fused_mode_keeps_the_step_counters_on_the_gpu(tmp_path: Path) -> None:
    data = _json(str(_folder(tmp_path, TINY)), "--precision", "fp32", "--fused")
    assert data["optimizer_host_bytes"] == 0
    assert data["model_states_bytes"] == 16 * P + 84


def test_lora_at_a_published_size_trains_what_peft_trains() -> None:
    # PEFT 0.21.2's default Llama targets (q_proj, v_proj) at r=16 on Llama-3.1-8B: 6,815,744
    # trainable parameters (tests/training/test_adapters_torch.py builds it with PEFT).
    data = _json("llama-3.1-8b", "--method", "lora", "--lora-r", "16")
    assert data["trainable_parameters"] == 6_815_744
    roles = {w["role"]: w for w in data["weights"]}
    assert roles["adapter"]["trainable"] and not roles["base"]["trainable"]
    assert roles["adapter"]["weights_bytes"] == 4 * 6_815_744  # float32 adapters on bf16
    assert data["gradients_bytes"] == 4 * 6_815_744


def test_a_sharded_run_states_every_rank_and_the_first_to_fill(tmp_path: Path) -> None:
    whole = _json(str(_folder(tmp_path, TINY)), "--precision", "fp32")
    data = _json(
        str(_folder(tmp_path, TINY)), "--precision", "fp32", "--shard", "fsdp2", "--gpus", "3"
    )
    assert len(data["ranks"]) == 3
    largest = max(data["ranks"], key=lambda r: (r["model_states_bytes"], -r["rank"]))
    assert data["first_to_fill"] == largest["rank"]
    assert data["model_states_bytes"] == largest["model_states_bytes"]
    assert data["model_states_bytes"] < whole["model_states_bytes"]
    # Every rank holds its padded share: together at least the whole, the padding named.
    held = sum(r["model_states_bytes"] for r in data["ranks"])
    assert held >= whole["model_states_bytes"]
    assert held - sum(r["padding_bytes"] for r in data["ranks"]) <= whole["model_states_bytes"]


def test_lora_on_a_moe_s_experts_and_a_wrapper_s_tower(tmp_path: Path) -> None:
    data = _json(
        str(_folder(tmp_path, MIXTRAL)),
        "--method",
        "lora",
        "--lora-r",
        "2",
        "--lora-targets",
        "q_proj",
        "--lora-parameters",
        "mlp.experts.gate_up_proj,mlp.experts.down_proj",
    )
    assert data["request"]["lora_parameters"] == [
        "mlp.experts.gate_up_proj",
        "mlp.experts.down_proj",
    ]
    # Per layer: q_proj's LoRA (2x64 + 64x2), gate_up_proj's (8x64 + 256x8), down_proj's
    # (8x128 + 64x8): r x 4 experts wide, PEFT's ParamWrapper.
    per_layer = 2 * 64 + 64 * 2 + 8 * 64 + 256 * 8 + 8 * 128 + 64 * 8
    assert data["trainable_parameters"] == 2 * per_layer
    llava = {
        "model_type": "llava",
        "text_config": {**TINY, "vocab_size": 512},
        "vision_config": {
            "model_type": "clip_vision_model",
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 28,
            "patch_size": 14,
        },
    }
    data = _json(str(_folder(tmp_path, llava)), "--method", "lora", "--lora-targets", "all-linear")
    assert data["model_type"] == "llama"
    # The tower's 12 linears, the projector's 2 and the decoder's 14 (not the head).
    assert data["trainable_tensors"] == 2 * (12 + 2 + 14)


def test_compare_states_each_peer_s_figures_item_by_item(tmp_path: Path) -> None:
    folder = str(_folder(tmp_path, TINY))
    assert _json(folder)["compare"] is None
    # bf16 weights, fp32 masters and AdamW under ZeRO-2 on 2 GPUs: DeepSpeed's own 2 + 18/N
    # bytes per parameter, and the tool's items sum to the same (106,816 is a multiple of 2N).
    data = _json(
        folder,
        "--precision",
        "bf16-master",
        "--shard",
        "zero2",
        "--gpus",
        "2",
        "--compare",
        "deepspeed",
    )
    compared = data["compare"]
    assert compared["peer_bytes"] == 2 * P + 18 * P // 2 == 1_174_976
    assert compared["ours_bytes"] == data["model_states_bytes"] == 1_174_976
    assert sum(i["peer_bytes"] for i in compared["items"]) == compared["peer_bytes"]
    assert [i["difference_bytes"] for i in compared["items"]] == [0, 0]
    # Accelerate: the base model without its head (256 x 64), 4 bytes a parameter, and under
    # fp32 four times that at the step (16 bytes a parameter): the largest figure, printed.
    data = _json(folder, "--precision", "fp32", "--compare", "accelerate")
    compared = data["compare"]
    assert compared["head_parameters_left_out"] == 256 * 64
    assert compared["peer_bytes"] == 16 * (P - 256 * 64)
    assert compared["ours_bytes"] == 16 * P
    assert "acc_largest" in compared["notes"] and "acc_no_head" in compared["notes"]


@pytest.mark.parametrize("lang", CODES)
def test_the_comparison_speaks_the_readers_language(tmp_path: Path, lang: str) -> None:
    result = _run(str(_folder(tmp_path, TINY)), "--lang", lang, "--compare", "accelerate")
    assert result.exit_code == 0, result.output
    for key in ("compare_item_header", "compare_ours_header", "compare_item_gradients"):
        assert message(key, lang) in result.stdout, key
    assert "estimate_training_usage(bytes=361728, mixed_precision='bfloat16')" in result.stdout


@pytest.mark.parametrize("lang", CODES)
def test_the_table_speaks_the_readers_language(tmp_path: Path, lang: str) -> None:
    result = _run(str(_folder(tmp_path, TINY)), "--lang", lang, "--shard", "zero2", "--gpus", "2")
    assert result.exit_code == 0, result.output
    for key in ("train_gradients", "train_model_states", "train_activations", "train_rank_header"):
        assert message(key, lang) in result.stdout, key
    assert message("train_status_unknown", lang) in result.stdout


BAD: dict[str, tuple[list[str], dict[str, Any] | None]] = {
    "rank_zero": (["--method", "lora", "--lora-r", "0"], None),
    "unknown_target": (["--method", "lora", "--lora-targets", "no_such_proj"], None),
    "qlora_on_quantized": (
        ["--method", "qlora"],
        {**TINY, "quantization_config": {"quant_method": "gptq", "bits": 4}},
    ),
    "gpus_zero": (["--shard", "fsdp2", "--gpus", "0"], None),
    "more_gpus_than_rows": (["--shard", "fsdp2", "--gpus", "5000"], None),
    "fused_8bit": (["--optimizer", "adamw-8bit", "--fused"], None),
    "unknown_method": (["--method", "prefix"], None),
    "negative_accumulation": (["--grad-accum", "-2"], None),
    "unknown_family": ([], {**TINY, "model_type": "no_such_family"}),
    "unknown_parameter": (["--method", "lora", "--lora-parameters", "no.such"], None),
    "empty_parameters": (["--method", "lora", "--lora-parameters", ","], None),
    "dora_on_parameters": (
        ["--method", "dora", "--lora-parameters", "mlp.experts.down_proj"],
        MIXTRAL,
    ),
    "moe_without_targets": (["--method", "lora"], MIXTRAL),
    "mamba_out_proj": (
        ["--method", "lora", "--lora-targets", "all-linear"],
        {**TINY, "model_type": "mamba", "state_size": 8},
    ),
    "text_of_a_wrapper": ([], {**TINY, "model_type": "qwen2_vl_text"}),
    "unknown_peer": (["--compare", "megatron"], None),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    args, config = BAD[name]
    result = _run(str(_folder(tmp_path, config or TINY)), *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("iteragpu: ")
    assert "Traceback" not in result.output


def _command_request(values: dict[str, str]) -> Any:
    """What `iteragpu train` reads from the options a training form's values stand for."""
    from iteragpu.cli.train_request import train_request

    return train_request(
        method=values["method"],
        precision=values["precision"],
        optimizer=values["optimizer"],
        fused=values["fused"] == "true",
        lora_r=values["lora_r"],
        lora_targets=values["lora_targets"] or None,
        lora_bias="none",
        modules_to_save=None,
        adapter_dtype=None,
        quant_type="nf4",
        double_quant=values["double_quant"] == "true",
        shard=values["shard"],
        gpus=values["gpus"],
        micro_batch=None,
        sequence_length=None,
        grad_accum="1",
        lang="ko",
    )


def _read_or_reason(reader: Any, values: dict[str, str]) -> Any:
    from iteragpu.core.numbers import InputError

    try:
        return reader(values)
    except InputError as error:
        return error.reason


def test_the_sizer_vectors_read_the_form_as_the_command_reads_its_options() -> None:
    """The training vectors (docs_tools, which may not import the CLI) read each form's values
    into the request `iteragpu train` reads from the same options, or refuse them alike."""
    from iteragpu.docs_tools import sizer_training_vectors as vectors

    for form in (*vectors.REQUESTS, *vectors.BAD_REQUESTS):
        values = {**vectors.DEFAULT_REQUEST, **form}
        ours = _read_or_reason(vectors.request, values)
        assert ours == _read_or_reason(_command_request, values), form
