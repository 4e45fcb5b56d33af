"""Which tensors a training run holds and which it trains: full fine-tuning, LoRA, DoRA,
`modules_to_save` and QLoRA, each tensor named as the run's model names it.

The rules are PEFT 0.21.2's, bitsandbytes 0.50.2's and Transformers 5.24's, read at the source
(file and line cited where each is applied), and proved by tests/training/test_adapters_torch.py,
which builds each setup with the real libraries and compares every parameter and every
quantization-state tensor (name, shape, dtype, trainable) with what this module states.

The tensors and their names come from iteragpu.training.naming (every family's causal-LM class,
every multimodal wrapper's ForConditionalGeneration class). Names are the model's, without
PEFT's `base_model.model.` wrapper prefix: a LoRA-wrapped linear
keeps its weight as `<module>.base_layer.weight` and adds `<module>.lora_A.default.weight`
[r, in] and `<module>.lora_B.default.weight` [out, r] (DoRA: `<module>.lora_magnitude_vector.
default.weight` [out]); a module to save keeps `<module>.original_module.*` frozen beside a
trainable `<module>.modules_to_save.default.*`; a 4-bit weight's quantization state is named as
bitsandbytes' state dict names it (`<weight>.absmax`, `<weight>.quant_map`, with double
quantization `<weight>.nested_absmax`, `<weight>.nested_quant_map`, and `<weight>.nested_offset`,
held as a 0-d tensor). PEFT's `target_parameters` (`--lora-parameters`: LoRA on a parameter
that is no nn.Linear, a MoE's fused 3-D experts `mlp.experts.gate_up_proj`) nests one
ParamWrapper per targeted parameter of a module: the module's parameters sit under as many
`base_layer.`, each wrapper's adapters at its own depth.

Weights' dtype follows the precision (`weight_dtype`): fp32 and autocast hold fp32 weights,
bf16 and bf16-master bfloat16, fp16 float16; a tensor the family keeps in float32
(`TensorSpec.float32`) stays float32. The checkpoint's own dtype does not enter: a run loads
its weights in the precision's dtype.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from iteragpu.core.numbers import InputError, shown
from iteragpu.training.naming import LINEAR_KINDS, ModelTensors, Param
from iteragpu.training.records import ALL_LINEAR, TrainRequest, TrainTensor

if TYPE_CHECKING:
    from iteragpu.models.config import ModelConfig


class AdapterInputError(InputError):
    """A training request the model's tensors cannot hold (a rank of 0, an unknown module)."""


# PEFT 0.21.2 peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: the
# targets LoraConfig(target_modules=None) takes (tuners_utils.py _prepare_adapter_config, which
# raises "Please specify `target_modules`" for a model_type not in it). A test reads the installed
# mapping and holds this copy equal to it (the one regular-expression entry, gemma4, left out).
PEFT_DEFAULT_TARGETS: Final[dict[str, tuple[str, ...]]] = {
    "t5": ("q", "v"),
    "mt5": ("q", "v"),
    "bart": ("q_proj", "v_proj"),
    "gpt2": ("c_attn",),
    "bloom": ("query_key_value",),
    "blip-2": ("q", "v", "q_proj", "v_proj"),
    "opt": ("q_proj", "v_proj"),
    "gptj": ("q_proj", "v_proj"),
    "gpt_neox": ("query_key_value",),
    "gpt_neo": ("q_proj", "v_proj"),
    "bert": ("query", "value"),
    "roberta": ("query", "value"),
    "xlm-roberta": ("query", "value"),
    "electra": ("query", "value"),
    "deberta-v2": ("query_proj", "value_proj"),
    "deberta": ("in_proj",),
    "layoutlm": ("query", "value"),
    "llama": ("q_proj", "v_proj"),
    "llama4": ("q_proj", "v_proj"),
    "chatglm": ("query_key_value",),
    "gpt_bigcode": ("c_attn",),
    "mpt": ("Wqkv",),
    "RefinedWebModel": ("query_key_value",),
    "RefinedWeb": ("query_key_value",),
    "falcon": ("query_key_value",),
    "btlm": ("c_proj", "c_attn"),
    "codegen": ("qkv_proj",),
    "mistral": ("q_proj", "v_proj"),
    "mixtral": ("q_proj", "v_proj"),
    "stablelm": ("q_proj", "v_proj"),
    "phi": ("q_proj", "v_proj", "fc1", "fc2"),
    "gemma": ("q_proj", "v_proj"),
    "gemma2": ("q_proj", "v_proj"),
    "gemma3_text": ("q_proj", "v_proj"),
    "qwen2": ("q_proj", "v_proj"),
    "qwen3": ("q_proj", "v_proj"),
    "nemotron_h": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "rwkv": ("key", "value", "receptance", "output"),
    "rwkv7": ("r_proj", "k_proj", "v_proj", "o_proj", "key", "value"),
}

# PEFT 0.21.2 utils/transformers_weight_conversion.py: for a model_type whose checkpoint
# conversion Transformers 5 maps onto mixtral's or qwen2_moe's (`_MODEL_TO_CONVERSION_PATTERN`,
# with `get_checkpoint_conversion_mapping` set), inject_adapter first runs
# _convert_peft_config_moe: the targets naming a v4 expert projection or the router become
# `target_parameters` (the fused 3-D experts, the router's weight), the rest stay modules, and a
# fused pair (gate_proj and up_proj into gate_up_proj) gets twice the rank. A test reads the
# installed mappings and holds these copies equal to them.
PEFT_MOE_CONVERTED: Final[dict[str, str]] = {
    "deepseek_v2": "qwen2_moe",
    "deepseek_v3": "qwen2_moe",
    "ernie4_5_moe": "qwen2_moe",
    "glm4_moe": "qwen2_moe",
    "minimax_m2": "mixtral",
    "mixtral": "mixtral",
    "olmoe": "qwen2_moe",
    "qwen3_moe": "qwen2_moe",
    "qwen3_next": "qwen2_moe",
}
PEFT_MOE_TARGETS: Final[dict[str, dict[str, str]]] = {  # _MOE_TARGET_MODULE_MAPPING
    "mixtral": {
        "gate": "gate.weight",
        "w1": "gate_up_proj",
        "w3": "gate_up_proj",
        "w2": "down_proj",
    },
    "qwen2_moe": {
        "gate": "gate.weight",
        "gate_proj": "gate_up_proj",
        "up_proj": "gate_up_proj",
        "down_proj": "down_proj",
    },
}
PEFT_MOE_FUSED: Final[dict[str, dict[str, tuple[str, ...]]]] = {  # _MOE_FUSED_TARGETS
    "mixtral": {"gate_up_proj": ("w1", "w3")},
    "qwen2_moe": {"gate_up_proj": ("gate_proj", "up_proj")},
}
# tuners_utils.py _check_lora_target_modules_mamba: LoRA may not wrap a module named so in these
# model types (the check reads the module's last name, for modules and parameters alike).
PEFT_MAMBA_TYPES: Final = frozenset({"falcon_h1", "mamba", "mamba2", "falcon_mamba", "nemotron_h"})
PEFT_MAMBA_INCOMPATIBLE: Final = frozenset({"out_proj", "conv1d"})

ADAPTER_DTYPES: Final = ("float32", "bfloat16", "float16")
# QDoRA: DoRA's adapters on QLoRA's 4-bit base (PEFT 0.21.2 tuners/lora/bnb.py Linear4bit
# takes use_dora; its DoraLinearLayer reads the dequantized weight's norm once, at creation).
QUANTIZED_METHODS: Final = frozenset({"qlora", "qdora"})
DORA_METHODS: Final = frozenset({"dora", "qdora"})
SIXTEEN_BIT: Final = frozenset({"bfloat16", "float16"})

# bitsandbytes 0.50.2: Params4bit's blocksize (nn/modules.py, 64 by default; Transformers'
# BitsAndBytesConfig leaves it so) and quantize_blockwise's for the nested absmax
# (functional.py quantize_4bit: `quantize_blockwise(_absmax - offset, blocksize=256)`).
BLOCK: Final = 64
NESTED_BLOCK: Final = 256
NF4_FP4_CODES: Final = 16  # get_4bit_type: a float32 table of 16 values per quantized weight
DYNAMIC_CODES: Final = 256  # create_dynamic_map(): the nested state's float32 table


def weight_dtype(precision: str) -> str:
    """The dtype a run holds its weights in: fp32 under fp32 and autocast (torch.autocast casts
    per op and keeps no 16-bit copy), bfloat16 under bf16 and bf16-master (the fp32 master is
    the optimizer's, iteragpu.training.states), float16 under fp16."""
    if precision in ("fp32", "autocast-bf16", "autocast-fp16"):
        return "float32"
    if precision in ("bf16", "bf16-master"):
        return "bfloat16"
    if precision == "fp16":
        return "float16"
    raise AdapterInputError(
        "the precision must be one of {known}: {precision} is not",
        "precision",
        known="fp32, bf16, fp16, autocast-bf16, autocast-fp16, bf16-master",
        precision=shown(precision),
    )


def train_tensors(config: ModelConfig, request: TrainRequest) -> tuple[TrainTensor, ...]:
    """Every tensor the run holds as a parameter (or a 4-bit weight's quantization state), in
    the model's order, named in full, with what it stores and whether it trains."""
    from iteragpu.training.naming import model_tensors

    refuse_quantized(config, request)
    return held_tensors(model_tensors(config), request)


def refuse_quantized(config: ModelConfig, request: TrainRequest) -> None:
    """Refuse a checkpoint already quantized: its training sizes are not stated."""
    if config.quantization_method is not None:
        if request.method in QUANTIZED_METHODS:
            raise AdapterInputError(
                "QLoRA quantizes a 16- or 32-bit checkpoint to 4 bits: this checkpoint is "
                "already quantized ({method})",
                "qlora_quantized_checkpoint",
                method=config.quantization_method,
            )
        raise AdapterInputError(
            "training sizes are stated for an unquantized checkpoint: this one is quantized "
            "({method})",
            "quantized_checkpoint",
            method=config.quantization_method,
        )


def held_tensors(tensors: ModelTensors, request: TrainRequest) -> tuple[TrainTensor, ...]:
    """`train_tensors` from the model's parameters (iteragpu.training.naming.model_tensors)."""
    model = _Model(tensors)
    base = weight_dtype(request.precision)
    if request.method == "full":
        # A parameter the model builds with requires_grad=False (Ernie-4.5-MoE's
        # e_score_correction_bias) is not trained.
        return tuple(
            TrainTensor(p.name, p.shape, "float32" if p.float32 else base, "base", not p.frozen)
            for p in model.params
        )
    if request.method not in ("lora", "dora", "qlora", "qdora"):
        raise AdapterInputError(
            "the method must be one of full, lora, dora, qlora, qdora: {method} is not",
            "method",
            method=shown(str(request.method)),
        )
    rank = request.lora_r
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise AdapterInputError(
            "--lora-r must be a whole number of 1 or more: {rank} is not",
            "lora_rank",
            rank=shown(str(rank)),
        )
    adapter = request.adapter_dtype
    if adapter is not None and adapter not in ADAPTER_DTYPES:
        raise AdapterInputError(
            "the adapter dtype must be one of {known}: {dtype} is not",
            "adapter_dtype",
            known=", ".join(ADAPTER_DTYPES),
            dtype=shown(adapter),
        )
    saved = model.saved_modules(request.modules_to_save)
    names, parameters, multiples = model.converted(request.lora_targets, request.lora_parameters)
    ranks = {leaf: rank * multiple for leaf, multiple in multiples.items()}
    targets = model.lora_targets(names, saved, bool(parameters))
    quantized = model.quantized_linears() if request.method in QUANTIZED_METHODS else frozenset()
    for module in saved:
        inside = [m for m in quantized if _under(m, module)]
        if inside:
            raise AdapterInputError(
                "a module to save cannot hold a 4-bit layer under QLoRA: {name} holds {layer}",
                "modules_to_save_quantized",
                name=shown(module),
                layer=shown(sorted(inside)[0]),
            )
    wrapped = model.wrapped_parameters(parameters, request.method, saved, targets, quantized)
    model.check_mamba(targets, wrapped)
    return tuple(_held(model, request, base, saved, targets, quantized, wrapped, ranks))


def _held(
    model: _Model,
    request: TrainRequest,
    base: str,
    saved: tuple[str, ...],
    targets: frozenset[str],
    quantized: frozenset[str],
    wrapped: Mapping[str, tuple[str, ...]],
    ranks: Mapping[str, int],
) -> Iterable[TrainTensor]:
    qlora = request.method in QUANTIZED_METHODS
    bias = request.lora_bias

    def dtype_of(param: Param) -> str:
        # QLoRA: peft/utils/other.py prepare_model_for_kbit_training (0.21.2, line 204) casts
        # every float16 and bfloat16 parameter but Params4bit to float32.
        if qlora or param.float32:
            return "float32"
        return base

    by_module: dict[str, list[Param]] = {}
    for param in model.params:
        by_module.setdefault(param.module, []).append(param)
    for param in model.params:
        module = param.module
        owner = next((s for s in saved if _under(module, s)), None)
        if owner is not None:
            # PEFT 0.21.2 utils/other.py ModulesToSaveWrapper: the original kept frozen as
            # `<module>.original_module`, a deep copy trainable as `modules_to_save.default`
            # (its dtype the original's); a `bias="all"` does not reach the original.
            rest = param.name[len(owner) + 1 :]
            dtype = dtype_of(param)
            yield TrainTensor(f"{owner}.original_module.{rest}", param.shape, dtype, "base", False)
            yield TrainTensor(
                f"{owner}.modules_to_save.default.{rest}", param.shape, dtype, "saved_copy", True
            )
            continue
        levels = len(wrapped.get(module, ()))
        holder = next((w for w in wrapped if _under(module, w)), None)
        if module in targets:
            prefix = f"{module}.base_layer.{param.leaf}"
        elif holder is not None:
            # tuners/lora/layer.py ParamWrapper: each targeted parameter of a module nests one
            # wrapper around it, so the module's parameters (its submodules' too) sit under as
            # many `base_layer`s.
            depth = len(wrapped[holder])
            prefix = f"{holder}{'.base_layer' * depth}{param.name[len(holder) :]}"
        else:
            prefix = param.name
        is_bias = param.leaf == "bias"
        # PEFT 0.21.2 tuners_utils.py _mark_only_adapters_as_trainable: bias="all" trains every
        # parameter named `*.bias`; "lora_only" the bias of each LoRA-wrapped layer.
        trains_bias = is_bias and (bias == "all" or (bias == "lora_only" and module in targets))
        if module in quantized and param.leaf == "weight":
            yield from _quantized(prefix, param.elements, request.double_quant)
        elif module in quantized:
            # bitsandbytes 0.50.2 nn/modules.py Linear4bit.forward: `x = x.to(self.compute_dtype)`,
            # then `bias.data = bias.data.to(x.dtype)`: at the first forward a 4-bit layer's bias
            # leaves prepare_model_for_kbit_training's float32 for the compute dtype, and is held,
            # trained (its `.grad`, its optimizer states) and frozen in it from then on. The
            # compute dtype (bnb_4bit_compute_dtype) is taken as the precision's weight dtype.
            yield TrainTensor(prefix, param.shape, base, "base", trains_bias)
        else:
            yield TrainTensor(prefix, param.shape, dtype_of(param), "base", trains_bias)
        if module in targets and param.leaf == "weight":
            yield from _adapters(module, param, request)
        if by_module[module][-1] is param:
            for index, leaf in enumerate(wrapped.get(module, ())):
                target = next(p for p in by_module[module] if p.leaf == leaf)
                at = f"{module}{'.base_layer' * (levels - 1 - index)}"
                rank = ranks.get(leaf, request.lora_r)
                yield from _parameter_adapters(
                    at, target, module in model.transposed, rank, request
                )
    for module, (shape, _) in model.tied_heads.items():
        if module in targets:
            # A tied output head wrapped: its base weight is the embedding's (listed once, as
            # the embedding's); the adapters are its own.
            yield from _adapters(module, Param(f"{module}.weight", shape, False, "linear"), request)
    for module in saved:
        tied = model.tied_heads.get(module)
        if tied is None:
            continue
        # A tied output head saved: the original shares the embedding's weight (listed once, as
        # the embedding's), the copy is a tensor of its own.
        shape, float32 = tied
        dtype = "float32" if qlora or float32 else base
        yield TrainTensor(
            f"{module}.modules_to_save.default.weight", shape, dtype, "saved_copy", True
        )


def _adapter_dtype(request: TrainRequest) -> str:
    # PEFT 0.21.2 tuners_utils.py: _move_adapter_to_device_of_base_layer gives the adapters the
    # base layer's dtype (a Linear4bit's compute_dtype), then cast_adapter_dtype
    # (autocast_adapter_dtype=True) upcasts float16 and bfloat16 ones to float32: they are
    # float32 whatever the base. `adapter_dtype` is what autocast_adapter_dtype=False (or a cast)
    # leaves them in.
    return request.adapter_dtype if request.adapter_dtype is not None else "float32"


def _adapters(module: str, weight: Param, request: TrainRequest) -> Iterable[TrainTensor]:
    """The adapters LoRA (and DoRA) adds to one wrapped module of weight `weight`."""
    rank = request.lora_r
    dtype = _adapter_dtype(request)
    if weight.kind == "embedding":
        # tuners/lora/layer.py Embedding.update_layer: ParameterDicts `lora_embedding_A`
        # [r, num_embeddings] and `lora_embedding_B` [embedding_dim, r].
        rows, width = weight.shape
        yield TrainTensor(
            f"{module}.lora_embedding_A.default", (rank, rows), dtype, "adapter", True
        )
        yield TrainTensor(
            f"{module}.lora_embedding_B.default", (width, rank), dtype, "adapter", True
        )
        magnitude = width
    else:
        if weight.kind == "conv1d":
            # Transformers' Conv1D holds its weight [in, out]: tuners/lora/model.py
            # _create_new_module sets fan_in_fan_out and reads in_features, out_features from
            # `weight.ds_shape if hasattr(...) else weight.shape` in that order.
            inputs, outputs = weight.shape
        else:
            outputs, inputs = weight.shape
        yield TrainTensor(f"{module}.lora_A.default.weight", (rank, inputs), dtype, "adapter", True)
        yield TrainTensor(
            f"{module}.lora_B.default.weight", (outputs, rank), dtype, "adapter", True
        )
        magnitude = outputs
    if request.method in DORA_METHODS:
        # tuners/lora/dora.py DoraLinearLayer (DoraEmbeddingLayer): one magnitude per output
        # row (per embedding dimension).
        yield TrainTensor(
            f"{module}.lora_magnitude_vector.default.weight", (magnitude,), dtype, "adapter", True
        )


def _parameter_adapters(
    at: str, target: Param, transposed: bool, rank: int, request: TrainRequest
) -> Iterable[TrainTensor]:
    """The adapters PEFT's `target_parameters` adds for one parameter (tuners/lora/layer.py
    ParamWrapper, 0.21.2): `_get_in_out_features` reads a 3-D parameter as (experts, in, out)
    and a 2-D one as (out, in) with one expert; `update_layer` swaps in and out for a 3-D one
    unless its module is `is_transposed` (Transformers' experts hold [experts, out, in]), then
    makes `lora_A = nn.Linear(in, r * experts)` and `lora_B = nn.Linear(r * experts, out)`
    (`rank`: r, or the rank_pattern's for a fused pair)."""
    if len(target.shape) == 3:
        experts, inputs, outputs = target.shape
        if not transposed:
            inputs, outputs = outputs, inputs
    else:
        experts, (outputs, inputs) = 1, target.shape
    width = rank * experts
    dtype = _adapter_dtype(request)
    yield TrainTensor(f"{at}.lora_A.default.weight", (width, inputs), dtype, "adapter", True)
    yield TrainTensor(f"{at}.lora_B.default.weight", (outputs, width), dtype, "adapter", True)


def _quantized(name: str, elements: int, double_quant: bool) -> Iterable[TrainTensor]:
    """A Linear4bit's weight and its QuantState's tensors (bitsandbytes 0.50.2)."""
    # backends/default/ops.py quantize_4bit: two 4-bit values a byte, an odd count padded, stored
    # [(n + 1) // 2, 1] in uint8 (Transformers' bnb_4bit_quant_storage default); one absmax per
    # block of 64, the last block partial.
    blocks = -(-elements // BLOCK)
    yield TrainTensor(name, ((elements + 1) // 2, 1), "uint8", "quantized", False)
    if not double_quant:
        yield TrainTensor(f"{name}.absmax", (blocks,), "float32", "quant_state", False)
        yield TrainTensor(f"{name}.quant_map", (NF4_FP4_CODES,), "float32", "quant_state", False)
        return
    # functional.py quantize_4bit with compress_statistics: offset = absmax.mean() (a 0-d
    # float32 tensor), the absmax less it quantized by quantize_blockwise to uint8 with one
    # float32 absmax per 256 and its own copy of the 256-value dynamic map (`code.to(device,
    # copy=True)`); get_4bit_type makes a 16-value table per weight.
    yield TrainTensor(f"{name}.absmax", (blocks,), "uint8", "quant_state", False)
    yield TrainTensor(f"{name}.quant_map", (NF4_FP4_CODES,), "float32", "quant_state", False)
    nested = -(-blocks // NESTED_BLOCK)
    yield TrainTensor(f"{name}.nested_absmax", (nested,), "float32", "quant_state", False)
    yield TrainTensor(f"{name}.nested_quant_map", (DYNAMIC_CODES,), "float32", "quant_state", False)
    yield TrainTensor(f"{name}.nested_offset", (), "float32", "quant_state", False)


def _under(module: str, ancestor: str) -> bool:
    return module == ancestor or module.startswith(f"{ancestor}.")


class _Model:
    """A model's tensors by full name, its linear modules and the module tree around them."""

    def __init__(self, tensors: ModelTensors) -> None:
        self.model_type = tensors.model_type
        self.head = tensors.head
        self.params = tensors.params
        self.transposed = tensors.transposed
        self.tied_heads = dict(tensors.tied_heads)
        self.last_module = tensors.last_module
        # The modules PEFT wraps with LoRA: nn.Linear (and its subclasses), Transformers'
        # Conv1D (tuners/lora/model.py dispatch_default), nn.Embedding.
        self.linears: dict[str, Param] = {}
        self.embeddings: dict[str, Param] = {}
        for param in self.params:
            if param.leaf != "weight":
                continue
            if param.kind in LINEAR_KINDS:
                self.linears[param.module] = param
            elif param.kind == "embedding":
                self.embeddings[param.module] = param
        self.modules: list[str] = []
        seen: set[str] = set()
        for param in self.params:
            parts = param.module.split(".")
            for end in range(1, len(parts) + 1):
                key = ".".join(parts[:end])
                if key not in seen:
                    seen.add(key)
                    self.modules.append(key)
        for head in self.tied_heads:
            if head not in seen:
                self.modules.append(head)
                seen.add(head)

    def saved_modules(self, names: Sequence[str]) -> tuple[str, ...]:
        """The modules `modules_to_save` wraps: PEFT 0.21.2 utils/other.py _set_trainable wraps
        every module whose name ends with one of the names (a plain `endswith`)."""
        found: list[str] = []
        for name in names:
            matched = [m for m in self.modules if m.endswith(name)] if name else []
            if not matched:
                raise AdapterInputError(
                    "the module to save {name} names no module of this {family} model",
                    "modules_to_save_unknown",
                    name=shown(name),
                    family=self.model_type,
                )
            found += [m for m in matched if m not in found]
        for module in found:
            inner = next((m for m in found if m != module and _under(m, module)), None)
            if inner is not None:
                raise AdapterInputError(
                    "the modules to save overlap: {outer} holds {inner}",
                    "modules_to_save_overlap",
                    outer=shown(module),
                    inner=shown(inner),
                )
        return tuple(m for m in self.modules if m in found)

    def lora_targets(
        self, names: tuple[str, ...] | None, saved: Sequence[str], with_parameters: bool = False
    ) -> frozenset[str]:
        """The linear (and embedding) modules LoRA wraps."""
        if names == (ALL_LINEAR,):
            chosen = self.all_linear()
        else:
            if names is None:
                default = PEFT_DEFAULT_TARGETS.get(self.model_type)
                if default is None and with_parameters:
                    # lora/model.py _prepare_adapter_config: no default and target_parameters
                    # given: only the parameters are wrapped.
                    default = ()
                if default is None:
                    raise AdapterInputError(
                        "PEFT has no default LoRA targets for {family}: name the target modules",
                        "lora_targets_no_default",
                        family=self.model_type,
                    )
                names = default
            if not names and not with_parameters:
                raise AdapterInputError(
                    "LoRA needs at least one target module", "lora_targets_empty"
                )
            chosen = []
            for name in names:
                # tuners_utils.py check_target_module_exists: the module's name is the target
                # or ends with "." and the target.
                matched = [m for m in self.modules if m == name or m.endswith(f".{name}")]
                if not matched:
                    raise AdapterInputError(
                        "the LoRA target {target} names no module of this {family} model",
                        "lora_target_unknown",
                        target=shown(name),
                        family=self.model_type,
                    )
                for module in matched:
                    # LoraModel._create_new_module: nn.Linear, Conv1D and nn.Embedding (among
                    # the layers these families hold); others raise "Target module ... is not
                    # supported".
                    if not (
                        module in self.linears
                        or module in self.embeddings
                        or module in self.tied_heads
                    ):
                        raise AdapterInputError(
                            "the LoRA target {target} is not a linear or embedding layer: {module}",
                            "lora_target_not_linear",
                            target=shown(name),
                            module=shown(module),
                        )
                chosen += matched
        # check_target_module_exists: no adapter inside a module to save (at a name boundary).
        return frozenset(
            m
            for m in chosen
            if not any(re.match(rf"(^|.*\.){re.escape(s)}($|\..*)", m) for s in saved)
        )

    def quantized_linears(self) -> frozenset[str]:
        """The modules Transformers 5.24 makes bitsandbytes Linear4bit: every nn.Linear (`type(
        module) is nn.Linear`: not a subclass) and Conv1D (integrations/bitsandbytes.py
        replace_with_bnb_linear) but those get_keys_to_not_convert skips (quantizers/base.py:
        the output embeddings, tied weights, the module of the model's last parameter) and the
        float32-kept modules (`_keep_in_fp32_modules`)."""
        kept = {p.module for p in self.params if p.float32}
        return frozenset(
            m
            for m, weight in self.linears.items()
            if weight.kind in ("linear", "conv1d")
            and m != self.head
            and m != self.last_module
            and m not in kept
        )

    def wrapped_parameters(
        self,
        names: tuple[str, ...],
        method: str,
        saved: Sequence[str],
        targets: frozenset[str],
        quantized: frozenset[str],
    ) -> dict[str, tuple[str, ...]]:
        """Per module, the leaves of its parameters PEFT's `target_parameters` wraps, in the
        module's order (tuners_utils.py _inject_parameters walks named_modules, then each
        module's own parameters: a key matches a target equal to it or ending with "." and
        it)."""
        if not names:
            return {}
        if method in DORA_METHODS:
            # tuners/lora/layer.py ParamWrapper.__init__: "does not work with use_dora=True".
            raise AdapterInputError(
                "DoRA does not work with LoRA on parameters (PEFT's ParamWrapper), and the "
                "targets of this {family} model wrap {name}",
                "lora_parameters_dora",
                family=self.model_type,
                name=shown(names[0]),
            )
        found: dict[str, list[str]] = {}
        for name in names:
            matched = [p for p in self.params if p.name == name or p.name.endswith(f".{name}")]
            if not matched:
                raise AdapterInputError(
                    "the LoRA parameter {target} names no parameter of this {family} model",
                    "lora_parameter_unknown",
                    target=shown(name),
                    family=self.model_type,
                )
            for param in matched:
                module = param.module
                if len(param.shape) not in (2, 3):
                    # ParamWrapper._get_in_out_features: "only 2d and 3d are supported".
                    raise AdapterInputError(
                        "PEFT wraps 2-D and 3-D parameters only: {name} has {dims}",
                        "lora_parameter_shape",
                        name=shown(param.name),
                        dims=str(len(param.shape)),
                    )
                clash = module in targets or module in quantized
                if clash or any(_under(module, s) for s in saved):
                    raise AdapterInputError(
                        "the LoRA parameter {name} lies in a module LoRA, QLoRA or "
                        "--modules-to-save already wraps",
                        "lora_parameter_wrapped",
                        name=shown(param.name),
                    )
                leaves = found.setdefault(module, [])
                if param.leaf not in leaves:
                    leaves.append(param.leaf)
        order = {p.name: i for i, p in enumerate(self.params)}
        return {
            module: tuple(sorted(leaves, key=lambda leaf: order[f"{module}.{leaf}"]))
            for module, leaves in found.items()
        }

    def all_linear(self) -> list[str]:
        """PEFT 0.21.2 tuners_utils.py _maybe_include_all_linear_layers: every nn.Linear and
        Conv1D (isinstance: subclasses too) but the model's output embeddings
        (get_output_embeddings()), the vision tower's and projector's included."""
        return [m for m in self.linears if m != self.head]

    def converted(
        self, names: tuple[str, ...] | None, parameters: tuple[str, ...]
    ) -> tuple[tuple[str, ...] | None, tuple[str, ...], dict[str, int]]:
        """The target modules and parameters PEFT injects, after _convert_peft_config_moe
        (PEFT_MOE_CONVERTED), and the rank multiple of each fused parameter's leaf."""
        base = PEFT_MOE_CONVERTED.get(self.model_type)
        if base is None:
            return names, parameters, {}
        mapping, fused = PEFT_MOE_TARGETS[base], PEFT_MOE_FUSED[base]
        if names == (ALL_LINEAR,):
            # _resolve_string_target_modules: the leaf names of all-linear's modules, and every
            # v4 name of the mapping.
            leaves = {m.rpartition(".")[2] for m in self.all_linear()}
            names = tuple(sorted(leaves | set(mapping)))
        moved = list(parameters)
        remaining: list[str] = []
        present: dict[str, set[str]] = {new: set() for new in fused}
        # `set(peft_config.target_modules or [])`: no targets stays none, and PEFT's defaults
        # are never applied afterwards (_prepare_adapter_config sees a set).
        for target in names or ():
            hit = next(
                (
                    (old, new)
                    for old, new in mapping.items()
                    if target == old or target.endswith(f".{old}")
                ),
                None,
            )
            if hit is None:
                remaining.append(target)
                continue
            old, new = hit
            if new not in moved:
                moved.append(new)
            if new in present:
                present[new].add(old)
        multiples: dict[str, int] = {}
        for new, required in fused.items():
            if 0 < len(present[new]) < len(required):
                raise AdapterInputError(
                    "PEFT fuses {present} with {missing} into {fused} for this {family} model: "
                    "target both or neither",
                    "lora_targets_fused",
                    present=", ".join(sorted(present[new])),
                    missing=", ".join(sorted(set(required) - present[new])),
                    fused=new,
                    family=self.model_type,
                )
            if len(present[new]) == len(required) > 1:
                multiples[new] = len(required)
        if not remaining and not moved:
            raise AdapterInputError(
                "PEFT 0.21.2 leaves a {family} model no LoRA target by default (its MoE "
                "targets are converted for Transformers 5): name the target modules",
                "lora_targets_converted_none",
                family=self.model_type,
            )
        return tuple(remaining), tuple(moved), multiples

    def check_mamba(self, targets: frozenset[str], wrapped: Mapping[str, tuple[str, ...]]) -> None:
        """Refuse what PEFT refuses in a Mamba-based model (PEFT_MAMBA_TYPES)."""
        if self.model_type not in PEFT_MAMBA_TYPES:
            return
        for module in sorted({*targets, *wrapped}):
            if module.rpartition(".")[2] in PEFT_MAMBA_INCOMPATIBLE:
                raise AdapterInputError(
                    "PEFT does not wrap {module} in a {family} model (out_proj and conv1d are "
                    "incompatible with Mamba-based models): leave it out of the targets",
                    "lora_target_mamba",
                    module=shown(module),
                    family=self.model_type,
                )
