"""Every family's and every multimodal wrapper's training tensors (iteragpu.training.naming and
.adapters) against the real thing, on the meta device: Transformers 5.24 builds the model
(AutoModelForCausalLM; a wrapper: AutoModelForImageTextToText) in bfloat16, PEFT 0.21.2 wraps it,
and each parameter's full name, shape, dtype and requires_grad must equal what `train_tensors`
states, for:
- full fine-tuning (every parameter trains, but those the class builds frozen);
- LoRA with PEFT's default targets, where PEFT has them for the model_type;
- LoRA all-linear, and DoRA all-linear (PEFT's meaning, its MoE conversion for Transformers 5
  included: the fused experts and the router wrapped as parameters);
- LoRA on named parameters (PEFT's `target_parameters`: 3-D experts, transposed ones, 2-D ones);
- QLoRA: the modules Transformers' bitsandbytes integration makes Linear4bit
  (`replace_with_bnb_linear` with `get_modules_to_not_convert`, as the 4-bit quantizer calls
  them), against the quantized weights stated.
Where PEFT refuses a setup (DoRA on wrapped parameters, out_proj in a Mamba model, a MoE model
left with no default target), `train_tensors` must refuse it too.

Each family is built from its config class's defaults with fewer layers, the fewest that keep
every layer layout the defaults hold (checked through the recipe), plus variants for layouts
the defaults leave out. The packing of 4-bit weights and the optimizer states are proved on CPU
by test_adapters_torch.py, test_states_torch.py and test_families_step_torch.py. Run by
`nox -s training` (marker `training`), grouped per family over two workers.
"""

from __future__ import annotations

import copy
import json
import warnings
from functools import cache
from typing import Any

import pytest

from iteragpu.core.numbers import InputError
from iteragpu.models.config import parse_config
from iteragpu.models.shapes import parameter_tensors, stated_types
from iteragpu.training.adapters import (
    PEFT_DEFAULT_TARGETS,
    PEFT_MAMBA_INCOMPATIBLE,
    PEFT_MAMBA_TYPES,
    PEFT_MOE_CONVERTED,
    PEFT_MOE_FUSED,
    PEFT_MOE_TARGETS,
    train_tensors,
)
from iteragpu.training.naming import family_naming, model_tensors
from iteragpu.training.records import TrainRequest

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
transformers.utils.logging.set_verbosity_error()

SIZES = {"float32": 4, "bfloat16": 2, "float16": 2, "uint8": 1}
PREFIX = "base_model.model."
# Config classes whose defaults Transformers cannot build from (tests/models says why).
BUILDABLE: dict[str, dict[str, Any]] = {
    "dbrx": {"attn_config": {"rope_theta": 10000.0}},
    "ministral": {"head_dim": 128},
}
# Fewer layers where the class needs more than their count changed: Gemma-3n's last
# num_kv_shared_layers read earlier layers' KV, and must be fewer than the layers.
FEWER: dict[str, dict[str, Any]] = {
    "gemma3n_text": {"num_hidden_layers": 10, "num_kv_shared_layers": 4},
}
WRAPPED_ONLY = [t for t in stated_types() if family_naming(t).wrapper is not None]
TEXT = [t for t in stated_types() if t not in WRAPPED_ONLY]

# Layouts the class defaults leave out: attention layers in the hybrid families, short
# convolutions, dense layers in MoE models, latent queries, a tied head, biases, cross-attention.
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("llama-tied", "llama", {"tie_word_embeddings": True}),
    ("bamba-attention", "bamba", {"num_hidden_layers": 2, "attn_layer_indices": [1]}),
    (
        "granitemoehybrid-attention",
        "granitemoehybrid",
        {"num_hidden_layers": 2, "layer_types": ["mamba", "attention"]},
    ),
    (
        "lfm2-conv",
        "lfm2",
        {"num_hidden_layers": 2, "layer_types": ["conv", "full_attention"], "full_attn_idxs": [1]},
    ),
    ("qwen3_moe-dense-tied", "qwen3_moe", {"mlp_only_layers": [0], "tie_word_embeddings": True}),
    ("qwen3_next-dense", "qwen3_next", {"mlp_only_layers": [0]}),
    ("deepseek_v2-no-q-lora", "deepseek_v2", {"q_lora_rank": None}),
    ("kimi_linear-q-lora-tied", "kimi_linear", {"q_lora_rank": 64, "tie_word_embeddings": True}),
    ("stablelm-qk-norm-bias", "stablelm", {"qk_layernorm": True, "use_qkv_bias": True}),
    (
        "falcon-new-decoder",
        "falcon",
        {"new_decoder_architecture": True, "num_kv_heads": 8, "bias": True},
    ),
    ("gpt2-cross-attention", "gpt2", {"add_cross_attention": True}),
]


def _text(model_type: str, heads: int = 8) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "num_hidden_layers": 2,
        "num_attention_heads": heads,
        "hidden_size": 64 * heads,
    }


def _vision(
    model_type: str,
    layers: str = "num_hidden_layers",
    heads: str = "num_attention_heads",
    width: str = "hidden_size",
) -> dict[str, Any]:
    return {"model_type": model_type, layers: 2, heads: 4, width: 256}


# Each wrapper from a text_config and a vision_config with only their sizes (every other key the
# class's default: a SigLIP tower with its attention-pooling head), and published layouts.
WRAPPERS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "llava",
        "llava",
        {"text_config": _text("llama"), "vision_config": _vision("clip_vision_model")},
    ),
    (
        "mistral3",
        "mistral3",
        {"text_config": _text("mistral"), "vision_config": _vision("pixtral")},
    ),
    (
        "gemma3",
        "gemma3",
        {"text_config": _text("gemma3_text"), "vision_config": _vision("siglip_vision_model")},
    ),
    (
        "qwen2_vl",
        "qwen2_vl",
        {
            "text_config": _text("qwen2_vl_text"),
            "vision_config": _vision("qwen2_vl_vision", "depth", "num_heads", "embed_dim"),
        },
    ),
    (
        "qwen2_5_vl",
        "qwen2_5_vl",
        {
            "text_config": _text("qwen2_5_vl_text"),
            "vision_config": _vision("qwen2_5_vl_vision", "depth", "num_heads"),
        },
    ),
    (
        "qwen3_vl",
        "qwen3_vl",
        {
            "text_config": _text("qwen3_vl_text", heads=32),
            "vision_config": _vision("qwen3_vl_vision", "depth", "num_heads"),
        },
    ),
    (
        "llama4",
        "llama4",
        {"text_config": _text("llama4_text"), "vision_config": _vision("llama4_vision_model")},
    ),
    (
        "llava-siglip-mistral-tied",
        "llava",
        {
            "text_config": {**_text("mistral"), "tie_word_embeddings": True},
            "vision_config": {**_vision("siglip_vision_model"), "vision_use_head": False},
            "vision_feature_layer": [-2, -1],
        },
    ),
    (
        "llava-pixtral-unbiased",
        "llava",
        {
            "text_config": _text("mistral"),
            "vision_config": _vision("pixtral"),
            "multimodal_projector_bias": False,
        },
    ),
    (
        "gemma3-published-tower",
        "gemma3",
        {
            "text_config": _text("gemma3_text"),
            "vision_config": {
                "model_type": "siglip_vision_model",
                "hidden_size": 1152,
                "image_size": 896,
                "intermediate_size": 4304,
                "num_attention_heads": 16,
                "num_hidden_layers": 2,
                "patch_size": 14,
                "vision_use_head": False,
            },
        },
    ),
    (
        "llama4-tied",
        "llama4",
        {
            "text_config": {**_text("llama4_text"), "tie_word_embeddings": True},
            "vision_config": _vision("llama4_vision_model"),
        },
    ),
]


def _layouts(raw: dict[str, Any]) -> set[frozenset[tuple[str, tuple[int, ...]]]]:
    """The distinct layouts of the decoder layers, as the recipe states them."""
    specs = parameter_tensors(parse_config(raw))
    assert specs is not None
    layers: dict[int, set[tuple[str, tuple[int, ...]]]] = {}
    for spec in specs:
        if spec.layer is not None:
            layers.setdefault(spec.layer, set()).add((spec.name, spec.shape))
    return {frozenset(layer) for layer in layers.values()}


def _config(model_type: str, changes: dict[str, Any]) -> Any:
    settings = {**BUILDABLE.get(model_type, {}), **changes}
    if "num_hidden_layers" in changes:
        return transformers.AutoConfig.for_model(model_type, **settings)
    # The fewest layers that keep every layout of the class's defaults (a meta build's time goes
    # with its modules: PEFT's DoRA on Cohere's 40 layers takes seconds).
    whole = transformers.AutoConfig.for_model(model_type, **settings)
    wanted = _layouts(whole.to_dict())
    candidates = [FEWER[model_type]] if model_type in FEWER else []
    candidates += [{"num_hidden_layers": n} for n in (2, 4, 8) if n < whole.num_hidden_layers]
    for fewer_settings in candidates:
        try:
            fewer = transformers.AutoConfig.for_model(model_type, **settings, **fewer_settings)
            with torch.device("meta"):
                transformers.AutoModelForCausalLM.from_config(fewer)
        except (ValueError, IndexError, TypeError):
            continue
        if _layouts(fewer.to_dict()) == wanted:
            return fewer
    return whole


@cache
def _built(model_type: str, changes_text: str) -> tuple[dict[str, Any], Any]:
    changes = json.loads(changes_text)
    with torch.device("meta"):
        if model_type in {w[1] for w in WRAPPERS}:
            config = transformers.AutoConfig.for_model(model_type, **changes)
            model = transformers.AutoModelForImageTextToText.from_config(
                config, dtype=torch.bfloat16
            )
        else:
            config = _config(model_type, changes)
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    raw = config.to_dict()
    if model_type not in {w[1] for w in WRAPPERS}:
        raw = {**raw, "model_type": model_type}
    return raw, model


def _fresh(model_type: str, changes: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    raw, model = _built(model_type, json.dumps(changes, sort_keys=True))
    return raw, copy.deepcopy(model)


Held = dict[str, tuple[tuple[int, ...], str, bool]]


def _theirs(model: Any) -> Held:
    return {
        name.removeprefix(PREFIX): (
            tuple(p.shape),
            str(p.dtype).removeprefix("torch."),
            p.requires_grad,
        )
        for name, p in model.named_parameters()
    }


def _ours(raw: dict[str, Any], request: TrainRequest) -> tuple[Held, int]:
    tensors = train_tensors(parse_config(raw), request)
    held = {t.name: (t.shape, t.dtype, t.trainable) for t in tensors}
    assert len(held) == len(tensors), "a name stated twice"
    return held, sum(t.elements * SIZES[t.dtype] for t in tensors)


def _compare(raw: dict[str, Any], request: TrainRequest, model: Any) -> str:
    ours, total = _ours(raw, request)
    theirs = _theirs(model)
    assert sorted(set(ours) - set(theirs))[:3] == [] and sorted(set(theirs) - set(ours))[:3] == []
    for name, held in theirs.items():
        assert ours[name] == held, name
    built = sum(p.numel() * p.element_size() for p in model.parameters())
    assert total == built
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return f"{len(theirs)} tensors, {trainable:,} trainable, {total:,} B"


def _refusals(raw: dict[str, Any], request: TrainRequest, model: Any, lora: dict[str, Any]) -> str:
    """Both refuse, or neither: then every tensor compared."""
    try:
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            wrapped = peft.get_peft_model(model, peft.LoraConfig(**lora))
    except ValueError as error:  # PEFT's refusals, NoMatchingPeftModuleError included
        with pytest.raises(InputError) as caught:
            train_tensors(parse_config(raw), request)
        assert "\n" not in str(caught.value)
        return f"refused, as PEFT does ({caught.value.reason}: {str(error)[:60]})"
    return _compare(raw, request, wrapped)


def _setups(model_type: str) -> list[str]:
    setups = ["full", "all-linear", "dora", "qlora"]
    if model_type in PEFT_DEFAULT_TARGETS:
        setups.insert(1, "default")
    return setups


def _cases() -> list[Any]:
    cases = []
    for case, model_type, changes in (
        [(t, t, {}) for t in TEXT] + VARIANTS + [(n, t, c) for n, t, c in WRAPPERS]
    ):
        for setup in _setups(model_type):
            cases.append(
                pytest.param(
                    model_type,
                    changes,
                    setup,
                    id=f"{case}-{setup}",
                    marks=pytest.mark.xdist_group(case),
                )
            )
    return cases


REPORT: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _report() -> Any:
    yield
    if REPORT:
        print("\n" + "\n".join(REPORT))


def _a_linear_target(raw: dict[str, Any], model_type: str) -> tuple[str, ...]:
    """One linear module PEFT wraps as it is: not converted to a parameter, not refused (QLoRA's
    quantization does not depend on it)."""
    converted = PEFT_MOE_TARGETS.get(PEFT_MOE_CONVERTED.get(model_type, ""), {})
    for param in model_tensors(parse_config(raw)).params:
        leaf = param.module.rpartition(".")[2]
        if (
            param.kind in ("linear", "linear_subclass", "conv1d")
            and param.leaf == "weight"
            and leaf not in converted
            and leaf not in PEFT_MAMBA_INCOMPATIBLE
            and not param.module.endswith("lm_head")
        ):
            return (param.module,)
    raise AssertionError(model_type)


@pytest.mark.parametrize(("model_type", "changes", "setup"), _cases())
def test_peft_and_transformers_build_what_is_stated(
    model_type: str, changes: dict[str, Any], setup: str
) -> None:
    raw, model = _fresh(model_type, changes)
    if setup == "full":
        outcome = _compare(raw, TrainRequest(method="full"), model)
    elif setup == "default":
        outcome = _refusals(raw, TrainRequest(method="lora"), model, {"r": 8})
    elif setup == "all-linear":
        request = TrainRequest(method="lora", lora_r=4, lora_targets=("all-linear",))
        outcome = _refusals(raw, request, model, {"r": 4, "target_modules": "all-linear"})
    elif setup == "dora":
        request = TrainRequest(method="dora", lora_r=4, lora_targets=("all-linear",))
        lora = {"r": 4, "target_modules": "all-linear", "use_dora": True}
        outcome = _refusals(raw, request, model, lora)
    else:
        outcome = _quantized(raw, model_type, model)
    REPORT.append(f"{model_type} {json.dumps(changes)[:40]} {setup}: {outcome}")


def _quantized(raw: dict[str, Any], model_type: str, model: Any) -> str:
    """The modules Transformers makes Linear4bit, as its 4-bit quantizer chooses them."""
    bnb = pytest.importorskip("bitsandbytes")
    from transformers.integrations.bitsandbytes import replace_with_bnb_linear
    from transformers.quantizers.base import HfQuantizer

    skip = HfQuantizer.get_modules_to_not_convert(model, None, model._keep_in_fp32_modules)
    replace_with_bnb_linear(model, skip, transformers.BitsAndBytesConfig(load_in_4bit=True))
    theirs = {n for n, m in model.named_modules() if isinstance(m, bnb.nn.Linear4bit)}
    request = TrainRequest(method="qlora", lora_targets=_a_linear_target(raw, model_type))
    tensors = train_tensors(parse_config(raw), request)
    ours = {
        t.name.removesuffix(".weight").removesuffix(".base_layer")
        for t in tensors
        if t.role == "quantized"
    }
    assert ours == theirs
    # Every other floating tensor is float32 under QLoRA (prepare_model_for_kbit_training), but
    # a Linear4bit's bias, which its first forward casts to the compute dtype (bf16 here:
    # test_adapters_torch.py steps it).
    for t in tensors:
        if t.role in ("base", "adapter"):
            module = t.name.removesuffix(".bias").removesuffix(".base_layer")
            biased = t.name.endswith(".bias") and module in theirs
            assert t.dtype == ("bfloat16" if biased else "float32"), t.name
    return f"{len(theirs)} Linear4bit modules"


# LoRA on parameters (PEFT's target_parameters), beside target modules: fused 3-D experts (and a
# conversion adding the router), experts Transformers holds transposed (gpt-oss), 2-D experts
# (DBRX), Llama 4's experts [experts, in, out] that PEFT reads as [experts, out, in].
PARAMETERS = [
    ("mixtral", ("q_proj",), ("mlp.experts.gate_up_proj", "mlp.experts.down_proj")),
    ("gpt_oss", ("q_proj", "v_proj"), ("mlp.experts.gate_up_proj", "mlp.experts.down_proj")),
    ("dbrx", ("Wqkv",), ("ffn.experts.mlp.w1", "ffn.experts.mlp.v1", "ffn.experts.mlp.w2")),
    ("llama4_text", ("q_proj",), ("feed_forward.experts.gate_up_proj",)),
    ("qwen3_moe", ("q_proj", "gate_proj", "up_proj"), ()),  # converted: a fused pair, 2r
    ("olmoe", ("o_proj", "gate"), ("mlp.experts.down_proj",)),
]


@pytest.mark.parametrize(
    ("model_type", "modules", "parameters"),
    [pytest.param(*p, marks=pytest.mark.xdist_group(p[0])) for p in PARAMETERS],
    ids=[p[0] for p in PARAMETERS],
)
def test_lora_on_parameters_is_what_peft_builds(
    model_type: str, modules: tuple[str, ...], parameters: tuple[str, ...]
) -> None:
    raw, model = _fresh(model_type, {})
    request = TrainRequest(
        method="lora", lora_r=4, lora_targets=modules, lora_parameters=parameters
    )
    lora = {"r": 4, "target_modules": list(modules), "target_parameters": list(parameters)}
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        wrapped = peft.get_peft_model(model, peft.LoraConfig(**lora))
    REPORT.append(f"{model_type} parameters {parameters}: {_compare(raw, request, wrapped)}")


def test_refusals_are_peft_s() -> None:
    """DoRA on parameters, one of a fused pair, a Mamba out_proj: PEFT raises, so does the
    tool; a decoder without a causal-LM class is refused too (Transformers has none)."""
    cases = [
        (
            "mixtral",
            TrainRequest(
                method="dora", lora_targets=("q_proj",), lora_parameters=("mlp.experts.down_proj",)
            ),
            {
                "target_modules": ["q_proj"],
                "target_parameters": ["mlp.experts.down_proj"],
                "use_dora": True,
            },
        ),
        (
            "qwen3_moe",
            TrainRequest(method="lora", lora_targets=("q_proj", "up_proj")),
            {"target_modules": ["q_proj", "up_proj"]},
        ),
        (
            "mamba",
            TrainRequest(method="lora", lora_targets=("x_proj", "out_proj")),
            {"target_modules": ["x_proj", "out_proj"]},
        ),
    ]
    for model_type, request, lora in cases:
        raw, model = _fresh(model_type, {})
        outcome = _refusals(raw, request, model, {"r": 4, **lora})
        assert outcome.startswith("refused"), model_type
    for model_type in WRAPPED_ONLY:
        config = transformers.AutoConfig.for_model(model_type)
        with pytest.raises(ValueError):
            transformers.AutoModelForCausalLM.from_config(config)
        with pytest.raises(InputError) as caught:
            train_tensors(parse_config(config.to_dict()), TrainRequest())
        assert caught.value.reason == "no_causal_lm"


def test_peft_s_tables_are_copied_whole() -> None:
    """The conversion tables and the model types they apply to, as PEFT and Transformers hold
    them, for every family and wrapper the tool reads."""
    from peft.utils import transformers_weight_conversion as conversion
    from transformers.conversion_mapping import get_checkpoint_conversion_mapping

    from iteragpu.models.recipe import recipe_types
    from iteragpu.models.towers import wrapper_types

    assert {k: dict(v) for k, v in conversion._MOE_TARGET_MODULE_MAPPING.items()} == (
        PEFT_MOE_TARGETS
    )
    assert {
        k: {n: tuple(o) for n, o in v.items()} for k, v in conversion._MOE_FUSED_TARGETS.items()
    } == PEFT_MOE_FUSED
    converted = {}
    for model_type in (*recipe_types(), *wrapper_types()):
        base = conversion._MODEL_TO_CONVERSION_PATTERN.get(model_type)
        mapped = get_checkpoint_conversion_mapping(model_type) is not None
        if mapped and base in conversion._MOE_TARGET_MODULE_MAPPING:
            converted[model_type] = base
    assert converted == PEFT_MOE_CONVERTED
    assert PEFT_MAMBA_TYPES & set(recipe_types()) == {"falcon_h1", "mamba", "mamba2"}
