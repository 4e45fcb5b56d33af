"""Which tensors a training run holds and which it trains: full fine-tuning, LoRA, DoRA,
`modules_to_save` and QLoRA, each tensor named as the run's model names it.

The rules are PEFT 0.21.2's, bitsandbytes 0.50.2's and Transformers 5.24's, read at the source
(file and line cited where each is applied), and proved by tests/training/test_adapters_torch.py,
which builds each setup with the real libraries and compares every parameter and every
quantization-state tensor (name, shape, dtype, trainable) with what this module states.

Names are the model's, without PEFT's `base_model.model.` wrapper prefix: a LoRA-wrapped linear
keeps its weight as `<module>.base_layer.weight` and adds `<module>.lora_A.default.weight`
[r, in] and `<module>.lora_B.default.weight` [out, r] (DoRA: `<module>.lora_magnitude_vector.
default.weight` [out]); a module to save keeps `<module>.original_module.*` frozen beside a
trainable `<module>.modules_to_save.default.*`; a 4-bit weight's quantization state is named as
bitsandbytes' state dict names it (`<weight>.absmax`, `<weight>.quant_map`, with double
quantization `<weight>.nested_absmax`, `<weight>.nested_quant_map`, and `<weight>.nested_offset`,
held as a 0-d tensor).

Weights' dtype follows the precision (`weight_dtype`): fp32 and autocast hold fp32 weights,
bf16 and bf16-master bfloat16, fp16 float16; a tensor the family keeps in float32
(`TensorSpec.float32`) stays float32. The checkpoint's own dtype does not enter: a run loads
its weights in the precision's dtype.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from iteragpu.core.numbers import InputError, shown
from iteragpu.core.records import Record
from iteragpu.training.records import ALL_LINEAR, TrainRequest, TrainTensor

if TYPE_CHECKING:
    from iteragpu.models.config import ModelConfig
    from iteragpu.models.recipe import TensorSpec


class AdapterInputError(InputError):
    """A training request the model's tensors cannot hold (a rank of 0, an unknown module)."""


# How a family's CausalLM names its tensors (Transformers 5.24, models/<family>/modeling_*.py):
# `outer` before embeddings and final modules, `layer` before a decoder layer's (with its index),
# `top` the modules on the CausalLM itself (the output head), named without a prefix; `tied`
# what a tied output head shares its weight with (`_tied_weights_keys`). A family without an
# entry takes its recipe's base's (mistral and ministral: llama's).
class Naming(Record):
    """How a family's CausalLM names its tensors."""

    outer: str  # before embeddings and final modules: `model.`
    layer: str  # before a decoder layer's, with its index: `model.layers.{layer}.`
    top: tuple[str, ...]  # modules on the CausalLM itself, named without a prefix
    head: str  # the output embeddings (get_output_embeddings())
    tied: tuple[tuple[str, str], ...]  # (a tied head, the module whose weight it shares)


NAMING: Final[dict[str, Naming]] = {
    "llama": Naming(
        "model.",
        "model.layers.{layer}.",
        ("lm_head",),
        "lm_head",
        (("lm_head", "model.embed_tokens"),),
    ),
}

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

ADAPTER_DTYPES: Final = ("float32", "bfloat16", "float16")
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
    from iteragpu.models.shapes import parameter_tensors

    if config.quantization_method is not None:
        if request.method == "qlora":
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
    if config.outer_model_type is not None:
        raise AdapterInputError(
            "training sizes are stated for text models: {model_type} is multimodal",
            "multimodal",
            model_type=config.outer_model_type,
        )
    specs = parameter_tensors(config)
    if specs is None:
        raise AdapterInputError(
            "the {family} family's recipe states its parameter count, not its tensors: "
            "training sizes need each tensor",
            "no_tensors",
            family=config.model_type,
        )
    return held_tensors(specs, config.model_type, request, config.tie_word_embeddings)


def held_tensors(
    specs: Sequence[TensorSpec], model_type: str, request: TrainRequest, tied: bool = False
) -> tuple[TrainTensor, ...]:
    """`train_tensors` from the family's tensors (iteragpu.models.shapes.parameter_tensors)."""
    model = _Model(specs, model_type, tied)
    base = weight_dtype(request.precision)
    if request.method == "full":
        return tuple(
            TrainTensor(p.name, p.shape, "float32" if p.float32 else base, "base", True)
            for p in model.params
        )
    if request.method not in ("lora", "dora", "qlora"):
        raise AdapterInputError(
            "the method must be one of full, lora, dora, qlora: {method} is not",
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
    targets = model.lora_targets(request.lora_targets, saved)
    quantized = model.quantized_linears() if request.method == "qlora" else frozenset()
    for module in saved:
        inside = [m for m in quantized if _under(m, module)]
        if inside:
            raise AdapterInputError(
                "a module to save cannot hold a 4-bit layer under QLoRA: {name} holds {layer}",
                "modules_to_save_quantized",
                name=shown(module),
                layer=shown(sorted(inside)[0]),
            )
    return tuple(_held(model, request, base, saved, targets, quantized))


def _held(
    model: _Model,
    request: TrainRequest,
    base: str,
    saved: tuple[str, ...],
    targets: frozenset[str],
    quantized: frozenset[str],
) -> Iterable[TrainTensor]:
    qlora = request.method == "qlora"
    bias = request.lora_bias

    def dtype_of(param: _Param) -> str:
        # QLoRA: peft/utils/other.py prepare_model_for_kbit_training (0.21.2, line 204) casts
        # every float16 and bfloat16 parameter but Params4bit to float32.
        if qlora or param.float32:
            return "float32"
        return base

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
        prefix = f"{module}.base_layer.{param.leaf}" if module in targets else param.name
        is_bias = param.leaf == "bias"
        # PEFT 0.21.2 tuners_utils.py _mark_only_adapters_as_trainable: bias="all" trains every
        # parameter named `*.bias`; "lora_only" the bias of each LoRA-wrapped layer.
        trains_bias = is_bias and (bias == "all" or (bias == "lora_only" and module in targets))
        if module in quantized and param.leaf == "weight":
            yield from _quantized(prefix, param.elements, request.double_quant)
        else:
            yield TrainTensor(prefix, param.shape, dtype_of(param), "base", trains_bias)
        if module in targets and param.leaf == "weight":
            yield from _adapters(module, param.shape, module in model.embeddings, request)
    for module, (shape, _) in model.tied_heads.items():
        if module in targets:
            # A tied output head wrapped: its base weight is the embedding's (listed once, as
            # the embedding's); the adapters are its own.
            yield from _adapters(module, shape, False, request)
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


def _adapters(
    module: str, shape: tuple[int, ...], embedding: bool, request: TrainRequest
) -> Iterable[TrainTensor]:
    """The adapters LoRA (and DoRA) adds to one wrapped module of weight `shape`."""
    rank = request.lora_r
    # PEFT 0.21.2 tuners_utils.py: _move_adapter_to_device_of_base_layer gives the adapters the
    # base layer's dtype (a Linear4bit's compute_dtype), then cast_adapter_dtype
    # (autocast_adapter_dtype=True) upcasts float16 and bfloat16 ones to float32: they are
    # float32 whatever the base. `adapter_dtype` is what autocast_adapter_dtype=False (or a cast)
    # leaves them in.
    dtype = request.adapter_dtype if request.adapter_dtype is not None else "float32"
    if embedding:
        # tuners/lora/layer.py Embedding.update_layer: ParameterDicts `lora_embedding_A`
        # [r, num_embeddings] and `lora_embedding_B` [embedding_dim, r].
        rows, width = shape
        yield TrainTensor(
            f"{module}.lora_embedding_A.default", (rank, rows), dtype, "adapter", True
        )
        yield TrainTensor(
            f"{module}.lora_embedding_B.default", (width, rank), dtype, "adapter", True
        )
        magnitude = width
    else:
        outputs, inputs = shape
        yield TrainTensor(f"{module}.lora_A.default.weight", (rank, inputs), dtype, "adapter", True)
        yield TrainTensor(
            f"{module}.lora_B.default.weight", (outputs, rank), dtype, "adapter", True
        )
        magnitude = outputs
    if request.method == "dora":
        # tuners/lora/dora.py DoraLinearLayer (DoraEmbeddingLayer): one magnitude per output
        # row (per embedding dimension).
        yield TrainTensor(
            f"{module}.lora_magnitude_vector.default.weight", (magnitude,), dtype, "adapter", True
        )


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


class _Param:
    __slots__ = ("elements", "float32", "leaf", "module", "name", "shape")

    def __init__(self, name: str, shape: tuple[int, ...], float32: bool) -> None:
        self.name = name
        self.module, _, self.leaf = name.rpartition(".")
        self.shape = shape
        self.float32 = float32
        elements = 1
        for size in shape:
            elements *= size
        self.elements = elements


class _Model:
    """A model's tensors by full name, its linear modules and the module tree around them."""

    def __init__(self, specs: Sequence[TensorSpec], model_type: str, tied: bool) -> None:
        naming = _naming(model_type)
        self.model_type = model_type
        outer, layer_prefix, top = naming.outer, naming.layer, naming.top
        self.head = naming.head
        linear = _linear_terms(model_type)
        self.params: list[_Param] = []
        self.linears: dict[str, tuple[int, ...]] = {}
        self.embeddings: dict[str, tuple[int, ...]] = {}  # nn.Embedding modules
        embedding = _embedding_terms(model_type)
        for spec in specs:
            if spec.layer is not None:
                prefix = layer_prefix.format(layer=spec.layer)
                section = "layer"
            else:
                prefix = "" if spec.name.split(".", 1)[0] in top else outer
                section = "outside"
            param = _Param(prefix + spec.name, spec.shape, spec.float32)
            self.params.append(param)
            within = spec.name.rpartition(".")[0]
            if within in linear[section] and param.leaf == "weight":
                self.linears[param.module] = param.shape
            elif within in embedding and spec.layer is None and len(spec.shape) == 2:
                self.embeddings[param.module] = param.shape
        self.modules: list[str] = []
        seen: set[str] = set()
        for param in self.params:
            parts = param.module.split(".")
            for end in range(1, len(parts) + 1):
                key = ".".join(parts[:end])
                if key not in seen:
                    seen.add(key)
                    self.modules.append(key)
        # A tied output head: a module whose weight is another's (absent from the specs).
        self.tied_heads: dict[str, tuple[tuple[int, ...], bool]] = {}
        for head, source in naming.tied:
            if tied and head not in seen:
                weight = next((p for p in self.params if p.name == f"{source}.weight"), None)
                if weight is not None:
                    self.tied_heads[head] = (weight.shape, weight.float32)
                    self.modules.append(head)
                    seen.add(head)
        self.last_module = self.params[-1].module if self.params else ""

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

    def lora_targets(self, names: tuple[str, ...] | None, saved: Sequence[str]) -> frozenset[str]:
        """The linear modules LoRA wraps."""
        if names == (ALL_LINEAR,):
            # PEFT 0.21.2 tuners_utils.py _maybe_include_all_linear_layers: every nn.Linear but
            # the model's output embeddings (get_output_embeddings()).
            chosen = [m for m in self.linears if m != self.head]
        else:
            if names is None:
                default = PEFT_DEFAULT_TARGETS.get(self.model_type)
                if default is None:
                    raise AdapterInputError(
                        "PEFT has no default LoRA targets for {family}: name the target modules",
                        "lora_targets_no_default",
                        family=self.model_type,
                    )
                names = default
            if not names:
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
                    # LoraModel._create_new_module: nn.Linear and nn.Embedding (among the
                    # layers these families hold); others raise "Target module ... is not
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
        """The nn.Linear modules Transformers 5.24 makes bitsandbytes Linear4bit: every one
        (integrations/bitsandbytes.py replace_with_bnb_linear: `type(module) is nn.Linear`) but
        those get_keys_to_not_convert skips (quantizers/base.py: the output embeddings, tied
        weights, the module of the model's last parameter) and the float32-kept modules
        (`_keep_in_fp32_modules`)."""
        kept = {p.module for p in self.params if p.float32}
        return frozenset(
            m for m in self.linears if m != self.head and m != self.last_module and m not in kept
        )


def _naming(model_type: str) -> Naming:
    from iteragpu.models.recipe import recipe

    seen = model_type
    while True:
        if seen in NAMING:
            return NAMING[seen]
        described = recipe(seen)
        base = described.data.get("base") if described is not None else None
        if not isinstance(base, str):
            raise AdapterInputError(
                "the {family} family's tensor names are not stated: training sizes need them",
                "no_tensor_names",
                family=model_type,
            )
        seen = base


def _linear_terms(model_type: str) -> dict[str, frozenset[str]]:
    """The recipe's `linear` terms (iteragpu.models.recipe: an nn.Linear each), by section."""
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    data = described.data if described is not None else {}

    def names(*sections: str) -> frozenset[str]:
        return frozenset(
            str(term["name"]) for s in sections for term in data.get(s, []) if "linear" in term
        )

    return {"layer": names("layer"), "outside": names("embeddings", "final")}


def _embedding_terms(model_type: str) -> frozenset[str]:
    """The recipe's 2-D `shape` terms among the embeddings: an nn.Embedding each."""
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    data = described.data if described is not None else {}
    return frozenset(
        str(term["name"])
        for term in data.get("embeddings", [])
        if "shape" in term and len(term["shape"]) == 2
    )
