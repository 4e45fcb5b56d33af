"""Quantized checkpoints written by the real library, on CPU: bitsandbytes' 4-bit (NF4
double-quantized, FP4, a BF16 quant storage) and 8-bit Linear layers of the tiny Llama of
test_quantized_layouts.py, saved as Transformers saves them (the modules' state dict, which
`Linear4bit._save_to_state_dict` fills with `QuantState.as_dict(packed=True)`, through
`safetensors.torch.save_file`). Their headers read back to the config's parameter count, and
to the layout the hand-built headers of the default tests assume.

Run where torch and bitsandbytes are installed (marker `transformers`); skipped elsewhere.
Checked with torch 2.13.0 and bitsandbytes 0.50.2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_quantized_layouts import (
    HIDDEN,
    LINEAR_VALUES,
    LINEARS,
    LLAMA,
    LLAMA_PARAMETERS,
    VOCAB,
    bnb_4bit,
    bnb_state,
    config_count,
    inventory,
    roles,
)

from iteragpu.models import quantized as q
from iteragpu.models.model import payload, size_model

pytestmark = pytest.mark.transformers

torch = pytest.importorskip("torch")
bnb = pytest.importorskip("bitsandbytes")
safetensors_torch = pytest.importorskip("safetensors.torch")


def quantized_llama(kind: str, **options: Any) -> dict[str, Any]:
    """The tiny Llama's state dict, its Linear layers quantized by bitsandbytes on CPU."""
    torch.manual_seed(0)
    state: dict[str, Any] = {
        "model.embed_tokens.weight": torch.randn(VOCAB, HIDDEN, dtype=torch.float16),
        "lm_head.weight": torch.randn(VOCAB, HIDDEN, dtype=torch.float16),
        "model.norm.weight": torch.ones(HIDDEN, dtype=torch.float16),
    }
    for layer in range(2):
        prefix = f"model.layers.{layer}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            state[prefix + norm + ".weight"] = torch.ones(HIDDEN, dtype=torch.float16)
        for module, inputs, outputs in LINEARS:
            weight = torch.randn(outputs, inputs, dtype=torch.float16)
            if kind == "4bit":
                linear = bnb.nn.Linear4bit(inputs, outputs, bias=False, **options)
                linear.weight = bnb.nn.Params4bit(weight, requires_grad=False, **options)
            else:
                linear = bnb.nn.Linear8bitLt(inputs, outputs, bias=False, has_fp16_weights=False)
                linear.weight = bnb.nn.Int8Params(
                    weight, requires_grad=False, has_fp16_weights=False
                )
            linear = linear.to("cpu")  # bitsandbytes quantizes on the move to a device
            for key, value in linear.state_dict().items():
                state[prefix + module + "." + key] = value.detach().contiguous()
    return state


def write(folder: Path, state: dict[str, Any], quantization: dict[str, Any]) -> Path:
    folder.mkdir()
    safetensors_torch.save_file(state, folder / "model.safetensors", metadata={"format": "pt"})
    config = {**LLAMA, "quantization_config": quantization}
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return folder


CASES = {
    "nf4_double_quant": {"quant_type": "nf4", "compress_statistics": True},
    "fp4": {"quant_type": "fp4", "compress_statistics": False},
    "nf4_bf16_storage": {
        "quant_type": "nf4",
        "compress_statistics": True,
        "quant_storage": "bfloat16",
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_bitsandbytes_4bit_files_read_back_to_the_config_count(tmp_path: Path, case: str) -> None:
    options = dict(CASES[case])
    storage = options.pop("quant_storage", "uint8")
    state = quantized_llama("4bit", quant_storage=getattr(torch, storage), **options)
    quantization = {
        "quant_method": "bitsandbytes",
        "load_in_4bit": True,
        "bnb_4bit_quant_type": options["quant_type"],
        "bnb_4bit_use_double_quant": options["compress_statistics"],
        "bnb_4bit_quant_storage": storage,
    }
    folder = write(tmp_path / case, state, quantization)
    found = inventory(folder)
    assert found.parameters == LLAMA_PARAMETERS == config_count(tmp_path)
    dtype = {"uint8": "U8", "bfloat16": "BF16"}[storage]
    assert roles(found)[(q.QUANTIZED_WEIGHTS, dtype)] == (14, LINEAR_VALUES // 2, LINEAR_VALUES)
    # The real file's tensor names and shapes are the ones the default tests build by hand
    # (the quant-state JSON's length aside).
    header = {name: (t.dtype, list(t.shape)) for name, t in _headers(folder).items()}
    by_hand = bnb_4bit(options["quant_type"], options["compress_statistics"])(
        "model.layers.0.mlp.down_proj", LINEARS[-1][1], LINEARS[-1][2]
    )
    for name, (hand_dtype, hand_shape, *_) in by_hand.items():
        real_dtype, real_shape = header[name]
        if ".quant_state." in name:
            assert real_dtype == hand_dtype
        elif name.endswith(".weight"):
            assert real_dtype == dtype and real_shape[1] == 1
        else:
            assert (real_dtype, real_shape) == (hand_dtype, hand_shape)
    data = payload(size_model(folder, tokens=1))
    assert data["parameters"] == LLAMA_PARAMETERS and data["parameters_unknown_reason"] is None
    assert sum(r["bytes"] for r in data["weights_roles"]) == data["weights_bytes"]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("inputs", "outputs"), [(5, 7), (63, 65), (64, 7)])
def test_bitsandbytes_4bit_odd_layers_count_exactly(
    tmp_path: Path, case: str, inputs: int, outputs: int
) -> None:
    """A Linear4bit whose both dimensions are odd packs an odd count: the header cannot tell it
    from the even count above, the quant state's JSON can. The count read back is what
    bitsandbytes' own QuantState says (`quant_state.shape`), and the real file's quant state
    is the JSON the default tests build (tests/models/test_quantized_layouts.py, bnb_state)."""
    options = dict(CASES[case])
    storage = getattr(torch, options.pop("quant_storage", "uint8"))
    torch.manual_seed(0)
    weight = torch.randn(outputs, inputs, dtype=torch.float16)
    linear = bnb.nn.Linear4bit(inputs, outputs, bias=False, quant_storage=storage, **options)
    linear.weight = bnb.nn.Params4bit(weight, requires_grad=False, quant_storage=storage, **options)
    linear = linear.to("cpu")
    quant_state = linear.weight.quant_state
    values = int(torch.Size(quant_state.shape).numel())
    assert values == inputs * outputs
    state = {
        f"model.layers.0.mlp.down_proj.{k}": v.contiguous() for k, v in linear.state_dict().items()
    }
    state["model.norm.weight"] = torch.ones(HIDDEN, dtype=torch.float16)
    quantization = {
        "quant_method": "bitsandbytes",
        "load_in_4bit": True,
        "bnb_4bit_quant_type": options["quant_type"],
        "bnb_4bit_use_double_quant": options["compress_statistics"],
    }
    found = inventory(write(tmp_path / case, state, quantization))
    assert found.parameters == values + HIDDEN
    dtype = {torch.uint8: "U8", torch.bfloat16: "BF16"}[storage]
    packed = state["model.layers.0.mlp.down_proj.weight"]
    assert roles(found)[(q.QUANTIZED_WEIGHTS, dtype)] == (
        1,
        packed.numel() * packed.element_size(),
        values,
    )
    name = f"model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__{options['quant_type']}"
    stated = json.loads(bytes(state[name].numpy().tobytes()))
    assert stated["shape"] == [outputs, inputs]
    by_hand = json.loads(bnb_state(options["quant_type"], [outputs, inputs], False))
    assert {k: stated[k] for k in by_hand} == by_hand


def test_bitsandbytes_8bit_files_read_back_to_the_config_count(tmp_path: Path) -> None:
    state = quantized_llama("8bit")
    quantization = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    found = inventory(write(tmp_path / "int8", state, quantization))
    assert found.parameters == LLAMA_PARAMETERS
    got = roles(found)
    assert got[(q.QUANTIZED_WEIGHTS, "I8")] == (14, LINEAR_VALUES, LINEAR_VALUES)
    assert got[(q.SCALES, "F32")][0] == 14  # SCB


def _headers(folder: Path) -> dict[str, Any]:
    from iteragpu.models.safetensors import read_header

    return read_header(folder / "model.safetensors")
