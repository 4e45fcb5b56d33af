"""The tensors iteragpu.training.adapters states, against what PEFT, bitsandbytes and
Transformers build: every parameter and every 4-bit quantization-state tensor of a tiny Llama
under LoRA, DoRA, modules_to_save, the bias options and QLoRA (NF4 and FP4, with and without
double quantization), compared by name, shape, dtype, trainability and bytes; and at published
sizes, the trainable counts against PEFT on the meta device."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.presets import presets
from iteragpu.models.shapes import parameter_tensors
from iteragpu.training.adapters import PEFT_DEFAULT_TARGETS, train_tensors
from iteragpu.training.records import TrainRequest

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
transformers.utils.logging.disable_progress_bar()

TINY: dict[str, Any] = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
BIASED = {**TINY, "attention_bias": True, "mlp_bias": True}
# Odd sizes: an odd element count (a padded last byte), partial blocks of 64 and more than 256
# blocks (two nested absmax blocks): gate_proj [401, 45] holds 18,045 values, 282 blocks.
ODD = {
    **TINY,
    "hidden_size": 45,
    "num_attention_heads": 3,
    "num_key_value_heads": 1,
    "head_dim": 16,
    "intermediate_size": 401,
    "attention_bias": True,
}
SIZES = {"float32": 4, "bfloat16": 2, "float16": 2, "uint8": 1}
WRAPPER = "base_model.model."

Held = dict[str, tuple[tuple[int, ...], str, bool]]


def _dtype(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def _theirs(model: Any) -> Held:
    """Every parameter of the built model, and each Params4bit's QuantState tensors named as
    bitsandbytes' state dict names them (the offset a 0-d tensor it holds)."""
    found: Held = {}
    for name, param in model.named_parameters():
        name = name.removeprefix(WRAPPER)
        found[name] = (tuple(param.shape), _dtype(param), param.requires_grad)
        state = getattr(param, "quant_state", None)
        if state is None:
            continue
        parts = {"absmax": state.absmax, "quant_map": state.code}
        if state.nested:
            parts |= {
                "nested_absmax": state.state2.absmax,
                "nested_quant_map": state.state2.code,
                "nested_offset": state.offset,
            }
        for part, tensor in parts.items():
            assert isinstance(tensor, torch.Tensor)
            found[f"{name}.{part}"] = (tuple(tensor.shape), _dtype(tensor), False)
    return found


def _storages(model: Any) -> int:
    """The bytes of every distinct storage the parameters and quantization states hold."""
    seen: dict[int, int] = {}
    for param in model.parameters():
        tensors = [param]
        state = getattr(param, "quant_state", None)
        if state is not None:
            tensors += [state.absmax, state.code]
            if state.nested:
                tensors += [state.state2.absmax, state.state2.code, state.offset]
        for tensor in tensors:
            storage = tensor.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _ours(raw: dict[str, Any], request: TrainRequest) -> tuple[Held, int]:
    tensors = train_tensors(parse_config(raw), request)
    held = {t.name: (t.shape, t.dtype, t.trainable) for t in tensors}
    assert len(held) == len(tensors), "a name stated twice"
    return held, sum(t.elements * SIZES[t.dtype] for t in tensors)


def _compare(raw: dict[str, Any], request: TrainRequest, model: Any) -> int:
    ours, total = _ours(raw, request)
    theirs = _theirs(model)
    assert ours.keys() == theirs.keys()
    for name, held in theirs.items():
        assert ours[name] == held, name
    assert total == _storages(model)
    return total


def _model(raw: dict[str, Any], dtype: Any) -> Any:
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**raw)
    return transformers.AutoModelForCausalLM.from_config(config).to(dtype)


SETUPS = [
    # (id, config, model dtype, LoraConfig keywords, request)
    ("full-bf16", TINY, "bfloat16", None, TrainRequest(method="full", precision="bf16")),
    ("full-fp32", TINY, "float32", None, TrainRequest(method="full", precision="autocast-bf16")),
    ("lora-default-r8", TINY, "bfloat16", {"r": 8}, TrainRequest(method="lora", lora_r=8)),
    (
        "lora-all-linear-r4-fp16",
        TINY,
        "float16",
        {"r": 4, "target_modules": "all-linear"},
        TrainRequest(method="lora", precision="fp16", lora_r=4, lora_targets=("all-linear",)),
    ),
    (
        "lora-fp32-base",
        TINY,
        "float32",
        {"r": 4, "target_modules": ["q_proj", "k_proj", "down_proj"]},
        TrainRequest(
            method="lora",
            precision="fp32",
            lora_r=4,
            lora_targets=("q_proj", "k_proj", "down_proj"),
        ),
    ),
    (
        "lora-bias-all-save-o_proj",
        BIASED,
        "bfloat16",
        {
            "r": 4,
            "bias": "all",
            "target_modules": ["q_proj", "o_proj"],
            "modules_to_save": ["o_proj"],
        },
        TrainRequest(
            method="lora",
            lora_r=4,
            lora_bias="all",
            lora_targets=("q_proj", "o_proj"),
            modules_to_save=("o_proj",),
        ),
    ),
    (
        "lora-bias-lora-only",
        BIASED,
        "bfloat16",
        {"r": 4, "bias": "lora_only", "target_modules": ["v_proj", "up_proj"]},
        TrainRequest(
            method="lora", lora_r=4, lora_bias="lora_only", lora_targets=("v_proj", "up_proj")
        ),
    ),
    (
        "dora-all-linear",
        TINY,
        "bfloat16",
        {"r": 4, "use_dora": True, "target_modules": "all-linear"},
        TrainRequest(method="dora", lora_r=4, lora_targets=("all-linear",)),
    ),
    (
        "lora-save-lm_head",
        TINY,
        "bfloat16",
        {"r": 8, "modules_to_save": ["lm_head"]},
        TrainRequest(method="lora", modules_to_save=("lm_head",)),
    ),
    (
        "dora-tied-save-embed_tokens",
        {**TINY, "tie_word_embeddings": True},
        "float16",
        {"r": 4, "use_dora": True, "modules_to_save": ["embed_tokens"]},
        TrainRequest(method="dora", precision="fp16", lora_r=4, modules_to_save=("embed_tokens",)),
    ),
    (
        "lora-tied-save-lm_head",
        {**TINY, "tie_word_embeddings": True},
        "bfloat16",
        {"r": 4, "modules_to_save": ["lm_head"]},
        TrainRequest(method="lora", lora_r=4, modules_to_save=("lm_head",)),
    ),
    (
        "dora-embed_tokens-q_proj",
        TINY,
        "bfloat16",
        {"r": 4, "use_dora": True, "target_modules": ["embed_tokens", "q_proj"]},
        TrainRequest(method="dora", lora_r=4, lora_targets=("embed_tokens", "q_proj")),
    ),
    (
        "lora-tied-head-target",
        {**TINY, "tie_word_embeddings": True},
        "bfloat16",
        {"r": 4, "target_modules": ["lm_head", "k_proj"]},
        TrainRequest(method="lora", lora_r=4, lora_targets=("lm_head", "k_proj")),
    ),
    (
        "lora-adapter-bf16",
        TINY,
        "bfloat16",
        {"r": 4, "target_modules": "all-linear"},
        TrainRequest(
            method="lora", lora_r=4, lora_targets=("all-linear",), adapter_dtype="bfloat16"
        ),
    ),
]


@pytest.mark.parametrize("setup", SETUPS, ids=[s[0] for s in SETUPS])
def test_peft_builds_what_is_stated(setup: tuple[Any, ...], report: list[str]) -> None:
    name, raw, dtype, lora, request = setup
    model = _model(raw, getattr(torch, dtype))
    if lora is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = peft.get_peft_model(
                model,
                peft.LoraConfig(**lora),
                autocast_adapter_dtype=request.adapter_dtype is None,
            )
    total = _compare(raw, request, model)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    report.append(f"{name}: {total} B held, {trainable} trainable values")


@pytest.fixture(scope="module")
def report() -> Any:
    lines: list[str] = []
    yield lines
    print("\n" + "\n".join(lines))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny models saved in bfloat16, for Transformers to quantize as it loads them."""
    folders = {}
    for key, raw in (("tiny", TINY), ("odd", ODD)):
        folder = tmp_path_factory.mktemp(key)
        _model(raw, torch.bfloat16).save_pretrained(folder)
        folders[key] = folder
    return folders


QLORA = [
    # (id, saved model, quant type, double quant, LoraConfig keywords, request keywords)
    (
        "nf4-default-save-lm_head",
        "tiny",
        "nf4",
        False,
        {"modules_to_save": ["lm_head"]},
        {"modules_to_save": ("lm_head",)},
    ),
    (
        "nf4-dq-all-linear",
        "tiny",
        "nf4",
        True,
        {"target_modules": "all-linear"},
        {"lora_targets": ("all-linear",)},
    ),
    (
        "fp4-all-linear",
        "tiny",
        "fp4",
        False,
        {"target_modules": "all-linear"},
        {"lora_targets": ("all-linear",)},
    ),
    (
        "qdora-nf4-dq-all-linear",
        "tiny",
        "nf4",
        True,
        {"target_modules": "all-linear", "use_dora": True},
        {"lora_targets": ("all-linear",), "method": "qdora"},
    ),
    (
        "fp4-dq-odd-bias-all",
        "odd",
        "fp4",
        True,
        {"target_modules": ["q_proj", "gate_proj"], "bias": "all"},
        {"lora_targets": ("q_proj", "gate_proj"), "lora_bias": "all"},
    ),
]


@pytest.mark.parametrize("setup", QLORA, ids=[s[0] for s in QLORA])
def test_bitsandbytes_quantizes_what_is_stated(
    setup: tuple[Any, ...], saved: dict[str, Path], report: list[str]
) -> None:
    pytest.importorskip("bitsandbytes")
    pytest.importorskip("accelerate")
    name, key, quant_type, double, lora, asked = setup
    raw = TINY if key == "tiny" else ODD
    quantization = transformers.BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type=quant_type,
        bnb_4bit_use_double_quant=double,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_pretrained(
            saved[key], quantization_config=quantization, device_map="cpu", dtype=torch.bfloat16
        )
        model = peft.prepare_model_for_kbit_training(model)
        model = peft.get_peft_model(model, peft.LoraConfig(r=4, **lora))
    request = TrainRequest(
        **{
            "method": "qlora",
            "lora_r": 4,
            "quant_type": quant_type,
            "double_quant": double,
            **asked,
        }
    )
    total = _compare(raw, request, model)
    footprint = model.get_memory_footprint()
    report.append(f"qlora {name}: {total} B held (get_memory_footprint {footprint} B)")


def test_default_targets_are_peft_s() -> None:
    from peft.utils.constants import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING as mapping

    listed = {k: tuple(v) for k, v in mapping.items() if not isinstance(v, str)}
    assert listed == PEFT_DEFAULT_TARGETS


PUBLISHED = [
    ("lora-default-r16", {"r": 16}, {"lora_r": 16}),
    (
        "dora-all-linear-r8",
        {"r": 8, "use_dora": True, "target_modules": "all-linear"},
        {"lora_r": 8, "method": "dora", "lora_targets": ("all-linear",)},
    ),
]


def _published() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for preset in presets():
        if preset.name == "llama-3.1-70b":
            continue  # 80 layers on the meta device cost a minute; the 8B has the same layout
        raw = json.loads(preset.config_path.read_text("utf-8"))
        if parameter_tensors(parse_config(raw)) is not None:
            found.append((preset.name, raw))
    return found


def test_trainable_counts_at_published_sizes(report: list[str]) -> None:
    """Each published config whose family states its tensors, built by Transformers on the
    meta device and wrapped by PEFT: the trainable tensors and their count match."""
    published = _published()
    assert any(name.startswith("llama") for name, _ in published)
    for preset, raw in published:
        config = transformers.AutoConfig.for_model(**raw)
        for setup, lora, asked in PUBLISHED:
            with torch.device("meta"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = transformers.AutoModelForCausalLM.from_config(config)
                model = peft.get_peft_model(model, peft.LoraConfig(**lora))
            theirs = {
                n.removeprefix(WRAPPER): tuple(p.shape)
                for n, p in model.named_parameters()
                if p.requires_grad
            }
            request = TrainRequest(**{"method": "lora", **asked})
            tensors = train_tensors(parse_config(raw), request)
            ours = {t.name: t.shape for t in tensors if t.trainable}
            assert ours == theirs, (preset, setup)
            count = sum(t.elements for t in tensors if t.trainable)
            assert count == sum(p.numel() for p in model.parameters() if p.requires_grad)
            report.append(f"{preset} {setup}: {count:,} trainable")


def test_a_qdora_step_holds_what_is_stated(saved: dict[str, Path], report: list[str]) -> None:
    """QDoRA (DoRA's adapters on QLoRA's 4-bit base, PEFT's use_dora on bitsandbytes'
    Linear4bit) runs on the CPU: two micro-steps, one AdamW step; every trainable tensor's
    gradient and optimizer states against what iteragpu.training.states states for it."""
    pytest.importorskip("bitsandbytes")
    pytest.importorskip("accelerate")
    from test_states_torch import _bytes, _stated

    from iteragpu.training.states import state_items

    quantization = transformers.BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_pretrained(
            saved["tiny"], quantization_config=quantization, device_map="cpu", dtype=torch.bfloat16
        )
        model = peft.prepare_model_for_kbit_training(model)
        model = peft.get_peft_model(
            model, peft.LoraConfig(r=4, target_modules="all-linear", use_dora=True)
        )
    request = TrainRequest(
        method="qdora", lora_r=4, lora_targets=("all-linear",), double_quant=True
    )
    total = _compare(TINY, request, model)
    trainable = {n.removeprefix(WRAPPER): p for n, p in model.named_parameters() if p.requires_grad}
    optimizer = torch.optim.AdamW(list(trainable.values()), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    for _micro in range(2):
        ids = torch.randint(0, 256, (2, 8), generator=generator)
        (model(input_ids=ids, labels=ids).loss / 2).backward()
    optimizer.step()
    tensors = {t.name: t for t in train_tensors(parse_config(TINY), request) if t.trainable}
    assert tensors.keys() == trainable.keys()
    states = 0
    for name, p in trainable.items():
        measured = {("gradient", "grad"): (tuple(p.grad.shape), _dtype(p.grad), _bytes(p.grad))}
        for key, value in optimizer.state[p].items():
            measured[("optimizer", key)] = (tuple(value.shape), _dtype(value), _bytes(value))
        assert measured == _stated(state_items(tensors[name], request)), name
        states += sum(b for _, _, b in measured.values())
    report.append(f"qdora step: {total} B held, {states} B of gradients and AdamW states")
