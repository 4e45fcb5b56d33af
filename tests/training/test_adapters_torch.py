"""The tensors iteragpu.training.adapters states, against what PEFT, bitsandbytes and
Transformers build: every parameter and every 4-bit quantization-state tensor of a tiny Llama
under LoRA, DoRA, modules_to_save, the bias options and QLoRA (NF4 and FP4, with and without
double quantization), compared by name, shape, dtype, trainability and bytes; each of these
setups then taking a real step (two micro-steps of gradient accumulation, one optimizer step,
test_states_torch's `_step`), every `.grad`, master copy and `optimizer.state` tensor against
the planned ones and `iteragpu train --json`'s bytes per part against the real tensors' bytes;
and at published sizes, the trainable counts against PEFT on the meta device."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_states_torch import _bytes, _stated, _step

from iteragpu.models.config import parse_config
from iteragpu.models.presets import presets
from iteragpu.models.shapes import parameter_tensors
from iteragpu.training.adapters import PEFT_DEFAULT_TARGETS, train_tensors
from iteragpu.training.plan import ROLES, payload, plan_training, tensor_bytes
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


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Any:
    """One thread: the tiny models step quicker so, and the session shares two cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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


def _built(setup: tuple[Any, ...]) -> Any:
    _name, raw, dtype, lora, request = setup
    model = _model(raw, getattr(torch, dtype))
    if lora is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = peft.get_peft_model(
                model,
                peft.LoraConfig(**lora),
                autocast_adapter_dtype=request.adapter_dtype is None,
            )
    return model


@pytest.mark.parametrize(
    "setup", [pytest.param(s, id=s[0], marks=pytest.mark.xdist_group(s[0])) for s in SETUPS]
)
def test_peft_builds_what_is_stated(setup: tuple[Any, ...], report: list[str]) -> None:
    name, raw, _dtype, _lora, request = setup
    model = _built(setup)
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
    (  # the 4-bit attention layers' biases frozen (bias="none")
        "nf4-odd-v_proj",
        "odd",
        "nf4",
        False,
        {"target_modules": ["v_proj"]},
        {"lora_targets": ("v_proj",)},
    ),
]


def _quantized(
    setup: tuple[Any, ...], saved: dict[str, Path]
) -> tuple[dict[str, Any], Any, TrainRequest]:
    """A QLORA setup loaded 4-bit by Transformers, prepared and wrapped by PEFT: its config,
    model and request."""
    pytest.importorskip("bitsandbytes")
    pytest.importorskip("accelerate")
    _name, key, quant_type, double, lora, asked = setup
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
    return raw, model, request


# One group: the module's `saved` folders are written once, on one worker.
@pytest.mark.parametrize(
    "setup", [pytest.param(s, id=s[0], marks=pytest.mark.xdist_group("qlora")) for s in QLORA]
)
def test_bitsandbytes_quantizes_what_is_stated(
    setup: tuple[Any, ...], saved: dict[str, Path], report: list[str]
) -> None:
    name = setup[0]
    raw, model, request = _quantized(setup, saved)
    # What the run holds once it runs: bitsandbytes casts a 4-bit layer's bias to the compute
    # dtype at the first forward (iteragpu.training.adapters._held). With gradients on, as a
    # run's forward is (a no-grad eval forward would repack the CPU weights for inference).
    model(input_ids=torch.arange(8).reshape(1, 8))
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


# How each setup is stepped: the optimizer, and a precision holding the same weights as the
# setup's own (bf16-master bf16's, autocast-fp16 fp32's), so that every precision's and every
# optimizer's states meet PEFT's adapters, saved copies and trainable biases once.
STEPPED: dict[str, dict[str, Any]] = {
    "full-bf16": {"precision": "bf16-master"},
    "lora-all-linear-r4-fp16": {"optimizer": "sgd-momentum"},
    "lora-fp32-base": {"precision": "autocast-fp16"},
    "lora-bias-all-save-o_proj": {"precision": "bf16-master"},
    "lora-bias-lora-only": {"optimizer": "adafactor"},
    "dora-all-linear": {"optimizer": "adamw-amsgrad"},
    "lora-save-lm_head": {"optimizer": "adamw-8bit"},
    "dora-tied-save-embed_tokens": {"optimizer": "sgd"},
    "lora-tied-save-lm_head": {"fused": True},
    "lora-adapter-bf16": {"precision": "bf16-master"},
    "nf4-default-save-lm_head": {"optimizer": "adamw-8bit"},
    "fp4-all-linear": {"optimizer": "adafactor"},
}


def _stepped(name: str, request: TrainRequest) -> TrainRequest:
    asked = {key: getattr(request, key) for key in request._fields}
    return TrainRequest(**{**asked, **STEPPED.get(name, {})})


def _real_bytes(model: Any) -> dict[str, int]:
    """The bytes of every parameter and quantization-state tensor, named as `_theirs` names
    them (a tied weight once, as named_parameters yields it)."""
    found: dict[str, int] = {}
    for name, param in model.named_parameters():
        name = name.removeprefix(WRAPPER)
        found[name] = _bytes(param)
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
            found[f"{name}.{part}"] = _bytes(tensor)
    return found


def _check_step(
    name: str, raw: dict[str, Any], request: TrainRequest, model: Any, tmp_path: Path
) -> dict[str, int]:
    """Step the built model as `request` says; every tensor the step made against the plan's
    items, then the plan's bytes per part (`iteragpu train --json`) against the real tensors'."""
    (tmp_path / "config.json").write_text(json.dumps(raw), "utf-8")
    plan = plan_training(tmp_path, request)
    run = _step(model, request.precision, request.optimizer, request.fused)
    held = {n.removeprefix(WRAPPER): measured for n, measured in run["held"].items()}
    # What trains is what the plan trains; every trainable tensor's gradient, master copy and
    # optimizer states, tensor by tensor (frozen ones hold no gradient: `_step`).
    assert held.keys() == plan.states.keys()
    for tensor, measured in held.items():
        assert measured == _stated(plan.states[tensor]), tensor
    shared = {
        ("optimizer", key): (tuple(value.shape), _dtype(value), _bytes(value))
        for key, value in run["shared"].items()
    }
    assert shared == _stated(plan.shared)

    real = _real_bytes(model)
    roles = {t.name: t.role for t in plan.tensors}
    assert real.keys() == roles.keys()
    trainable = {t.name for t in plan.trainable}
    parts = {kind: 0 for kind in ("gradient", "optimizer", "master_weight", "master_gradient")}
    for measured in held.values():
        for (kind, _), (_, _, size) in measured.items():
            parts[kind] += size
    parts["optimizer"] += sum(size for _, _, size in shared.values())
    answer = payload(plan)
    by_role = {entry["role"]: entry["weights_bytes"] for entry in answer["weights"]}
    assert by_role == {
        role: sum(real[n] for n in real if roles[n] == role)
        for role in ROLES
        if role in roles.values()
    }
    planned = {
        "trainable_parameters": answer["trainable_parameters"],
        "trainable_tensors": answer["trainable_tensors"],
        "trainable_weights_bytes": sum(tensor_bytes(t) for t in plan.trainable),
        "frozen_weights_bytes": sum(tensor_bytes(t) for t in plan.tensors if not t.trainable),
        "weights_bytes": answer["weights_bytes"],
        "gradients_bytes": answer["gradients_bytes"],
        # on the GPU and on the host: a CPU step cannot tell them apart (test_states_torch's
        # test_where_each_state_lives does, on the meta device)
        "optimizer_state_bytes": answer["optimizer_state_bytes"] + answer["optimizer_host_bytes"],
        "master_weights_bytes": answer["master_weights_bytes"],
        "master_gradients_bytes": answer["master_gradients_bytes"],
        "model_states_bytes": answer["model_states_bytes"] + answer["optimizer_host_bytes"],
    }
    weights = _storages(model)
    measured_parts = {
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "trainable_tensors": sum(1 for p in model.parameters() if p.requires_grad),
        "trainable_weights_bytes": sum(real[n] for n in trainable),
        "frozen_weights_bytes": sum(real[n] for n in real if n not in trainable),
        "weights_bytes": weights,
        "gradients_bytes": parts["gradient"],
        "optimizer_state_bytes": parts["optimizer"],
        "master_weights_bytes": parts["master_weight"],
        "master_gradients_bytes": parts["master_gradient"],
        "model_states_bytes": weights + sum(parts.values()),
    }
    assert planned == measured_parts, name
    return measured_parts


ALL_STEPPED = [pytest.param(s[0], id=s[0], marks=pytest.mark.xdist_group(s[0])) for s in SETUPS]


@pytest.mark.parametrize("name", ALL_STEPPED)
def test_a_peft_step_holds_what_is_planned(name: str, tmp_path: Path, table: list[str]) -> None:
    setup = next(s for s in SETUPS if s[0] == name)
    _, raw, _, _, request = setup
    request = _stepped(name, request)
    model = _built(setup)
    _row(table, name, request, _check_step(name, raw, request, model, tmp_path))


@pytest.mark.parametrize(
    "setup", [pytest.param(s, id=s[0], marks=pytest.mark.xdist_group("qlora")) for s in QLORA]
)
def test_a_qlora_step_holds_what_is_planned(
    setup: tuple[Any, ...], saved: dict[str, Path], tmp_path: Path, table: list[str]
) -> None:
    """QLoRA and QDoRA (DoRA's adapters on the 4-bit base: PEFT's use_dora on bitsandbytes'
    Linear4bit) run on the CPU."""
    raw, model, request = _quantized(setup, saved)
    request = _stepped(setup[0], request)
    _row(table, setup[0], request, _check_step(setup[0], raw, request, model, tmp_path))


def _row(table: list[str], name: str, request: TrainRequest, parts: dict[str, int]) -> None:
    run = f"{request.precision}/{request.optimizer}{'/fused' if request.fused else ''}"
    table.append(
        f"| {name} | {run} | {parts['trainable_parameters']:,} | {parts['gradients_bytes']:,} "
        f"| {parts['optimizer_state_bytes']:,} | {parts['master_weights_bytes']:,} "
        f"| {parts['frozen_weights_bytes']:,} | yes |"
    )


@pytest.fixture(scope="module")
def table() -> Any:
    rows: list[str] = []
    yield rows
    if rows:
        print(
            "\n| setup | precision/optimizer | trainable values | gradients B"
            " | optimizer states B | master weights B | frozen weights B | ours == real |"
        )
        print("|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
