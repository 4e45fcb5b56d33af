"""A local model sized for a card: weights, KV cache per layer kind, reserve, and the total.

`size_model(PATH, ...)` reads a Hugging Face model folder (`config.json`, plus its safetensors
when present), a bare `config.json`, or a `.gguf` file, never the network, and returns a
`ModelSizing`; `payload(sizing)` is its `--json` object. Weights come from the files when they
exist (exact bytes per dtype), else from the parameter count of the config at `bits`/`dtype`.
Every bad input raises a `ModelInputError` (an `InputError`) with a one-line message.

The `--json` keys (stable): `parameters`, `active_parameters` (per token: a mixture of experts'
routed experts a token does not use left out; `parameters` for a dense model; null where the
family's recipe cannot tell), `weights_source`, `weights_bytes`, `kv_bytes_per_token` (one
sequence, all layers, before windows), `kv_cache_bytes` (the asked tokens and sequences, after
windows, under the stated cache semantics), `layers` (per kind and layout: counts, windows,
tokens held), `state_bytes` (the conv and recurrent states of Mamba, linear-attention and
short-convolution layers: constant in tokens, per sequence; 0 for a model without them) with
`states` (per layer kind: counts and tensors), `total_bytes` (weights + KV + states + reserve);
each byte figure is an integer under `*_bytes` (rounded up when a fractional byte per value
makes it fractional; `*_bytes_exact` then holds the exact decimal), with `*_gb`/`*_gib` beside
it as exact decimal text. A value that is not known is null. Beside them: `modules` (a
multimodal model's top modules with their parameters: vision tower, projector, language model,
head; null for a text model), `weights_formats` (per format and dtype: tensors, elements,
bytes; null for weights from a config), `weights_roles` (a quantized checkpoint's tensors by
role: quantized_weights, scales, zeros, group_index, quantization_state, unquantized,
unknown_integer, each with dtype, tensors, bytes and the parameters it holds; null without a
quantization_config), `parameters_unknown_reason` (why `parameters` is null: integer_tensors,
quantization_method_not_read, quantization_config_unreadable, tensor_not_in_layout; else null),
`cache` (kind, static length, sliding layers), `kv_cache_decoding_bytes` (a dynamic cache while
decoding), `mla_alternative` (the other MLA layout's figures, else null), `caveats` (codes of
`CAVEATS`), and `total_incomplete` with `cache_unknown_reason` (true and a refusal code for a
`PartialSizing`: a family the reader does not know, sized from its weight files alone; else
false and null).
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from iteragpu.core.kv_cache import MAX_BYTES_PER_VALUE, MAX_SEQUENCES, MAX_TOKENS
from iteragpu.core.numbers import exact_decimal_text, limit_text
from iteragpu.core.quantity import byte_fields
from iteragpu.core.records import Record
from iteragpu.core.units import ceil_bytes, from_unit
from iteragpu.core.weights import MAX_BITS, MAX_RESERVE_GIB, dense_weight_bytes
from iteragpu.models.config import SLIDING, ModelConfig, load_config
from iteragpu.models.dtypes import dtype_bits, dtype_bytes
from iteragpu.models.errors import ConfigError, ModelInputError
from iteragpu.models.json_reader import json_loads as _json_loads
from iteragpu.models.kv import (
    MLA_LATENT,
    MLA_LATENT_KV,
    MLA_PER_HEAD,
    Cache,
    CacheKind,
    KVEstimate,
    LayerGroup,
    MlaLayout,
    estimate_kv,
    layer_layouts,
)
from iteragpu.models.parameters import (
    active_parameters,
    count_parameters,
    float32_parameters,
)
from iteragpu.models.state import StateEstimate, estimate_state, layer_states, needs_model_dtype
from iteragpu.models.tensors import INTEGER, WeightsInventory

if TYPE_CHECKING:
    from iteragpu.models.presets import Preset

CONFIG_NAME: Final = "config.json"
# The endings of what `safetensors.weight_files` looks for: its files and its index.
_SAFETENSORS_NAMES: Final = (".safetensors", ".safetensors.index.json")

FLOAT32_BYTES: Final = 4  # a module Transformers keeps in float32

# Stable codes of what the figures leave out or assume (the CLI words them per language).
CAVEATS: Final = {
    "activations_not_counted": "activations, temporary buffers and the CUDA context are not "
    "counted",
    "cache_dynamic_prompt_peak": "dynamic cache: the KV figure is the peak right after the "
    "whole context arrives as one prompt; sliding layers then hold every prompt token until "
    "the first decoding step (kv_cache_decoding_bytes: while decoding)",
    "cache_static_allocation": "static cache: the KV figure is the allocation, made up front",
    "mla_latent": "MLA: the compressed latent is cached (Transformers 5.24, vLLM); "
    "mla_alternative gives the per-head layout",
    "mla_per_head": "MLA: keys and values are cached per head, expanded; mla_alternative gives "
    "the compressed latent",
    "weights_uniform_dtype": "weights from the config at a dtype: every parameter at its bits, "
    "as Transformers builds the model (the family keeps no module in float32)",
    "weights_float32_modules": "weights from the config at a dtype: the parameters Transformers "
    "keeps in float32 (routers) at 4 bytes each, every other parameter at the dtype's bits",
    "weights_uniform_bits": "weights from the config at --bits: every parameter at those bits, "
    "modules Transformers keeps in float32 included; quantization scales are not counted",
    "quantized_checkpoint_from_config": "weights from the config of a quantized checkpoint "
    "(quantization_method): the bits given apply to every parameter; its scales and the "
    "modules it keeps in 16 bits are not counted; its weight files give the exact bytes",
    "multimodal_encoder_not_counted": "weights from the config count the text decoder only: "
    "the vision or audio encoder and the projector are not counted",  # a wrapper without a recipe
    "mtp_layers_not_counted": "weights from the config: the multi-token-prediction layers that "
    "checkpoints store are not counted",
    "cache_unknown": "the family's cache is not known here: the weights come from the files, "
    "the cache keys are null and the total leaves the cache out (total_incomplete)",
    "parameters_unknown_integer_tensors": "parameters unknown: integer tensors (packed "
    "quantized weights) do not say how many values they hold",
    "kv_quantization_overheads_not_counted": "quantized KV cache: its scales and the tokens a "
    "quantized cache keeps at full precision are not counted",
    "mla_llama_cpp_latent": "MLA in a GGUF file: llama.cpp caches the latent and the rotary key "
    "as keys and the latent again as values (its V cache); --mla-layout does not apply",
    "mla_llama_cpp_per_head": "MLA in a GGUF file without MLA sizes (an older conversion): "
    "llama.cpp caches keys and values per head; --mla-layout does not apply",
    "states_llama_cpp": "layer states of a GGUF file as llama.cpp allocates them: float32, a "
    "convolution state of conv_kernel - 1 positions per channel",
}


class Weights(Record):
    """The model's weights: from its files (an inventory) or from its config at `bits`."""

    source: str  # "safetensors", "gguf" or "config"
    parameters: int | None
    byte_count: Fraction
    bits: Fraction | None = None  # config only
    inventory: WeightsInventory | None = None
    # Config only: the parameters counted at 4 bytes, the modules Transformers keeps in float32
    # at a dtype (0: none); None at --bits, where every parameter takes the bits.
    float32_parameters: int | None = None


class ModelSizing(Record):
    """Everything `iteragpu model` states about one model."""

    path: Path
    config: ModelConfig
    weights: Weights
    kv: KVEstimate
    mla_alternative: KVEstimate | None
    reserve_gib: Fraction
    caveats: tuple[str, ...]
    state: StateEstimate
    preset: Preset | None = None  # the published config read by name, when `path` is a name

    @property
    def reserve_bytes(self) -> Fraction:
        return from_unit(self.reserve_gib, "GiB")

    @property
    def total_bytes(self) -> Fraction:
        return (
            self.weights.byte_count
            + self.kv.kv_cache_bytes
            + self.state.state_bytes
            + self.reserve_bytes
        )


def size_model(
    path: Path | str,
    *,
    tokens: int,
    sequences: int = 1,
    kv_bytes_per_value: Fraction | int | None = None,
    kv_dtype: str | None = None,
    reserve_gib: Fraction | int = 0,
    cache: CacheKind = "dynamic",
    static_max_tokens: int | None = None,
    bits: Fraction | int | None = None,
    dtype: str | None = None,
    mla_layout: MlaLayout = MLA_LATENT,
) -> ModelSizing:
    """Size the model at `path` for `tokens` tokens of context and `sequences` sequences.

    `kv_bytes_per_value` or `kv_dtype` (default: the model's dtype, `dtype` else the config's)
    sets the attention cache's bytes per value; `bits` or `dtype` (default: the config's
    `dtype`) sets the weights' when they come from the config, and is refused when the weights
    come from files. The layers' states take the model's dtype (or float32, per the family).
    `cache` is `dynamic` (Transformers' default) or `static` (length `static_max_tokens`,
    default `tokens`).
    """
    path = Path(path)
    _check_count("tokens", tokens, MAX_TOKENS)
    _check_count("sequences", sequences, MAX_SEQUENCES)
    reserve = Fraction(reserve_gib)
    if not 0 <= reserve <= MAX_RESERVE_GIB:
        raise ModelInputError(
            "reserve must be between 0 and {maximum} GiB, got {value}",
            "bad_reserve",
            maximum=limit_text(MAX_RESERVE_GIB),
            value=exact_decimal_text(reserve),
        )
    if static_max_tokens is not None:
        _check_count("static max tokens", static_max_tokens, MAX_TOKENS)
    cache_rules = Cache(cache, static_max_tokens)
    if mla_layout not in (MLA_LATENT, MLA_PER_HEAD):
        raise ModelInputError(
            "unknown MLA layout {layout!r} (mla_latent or mla_per_head)",
            "unknown_layout",
            layout=str(mla_layout),
        )

    config, inventory = _read(path)
    preset = None
    if not path.exists() and len(path.parts) == 1:
        from iteragpu.models.presets import find_preset  # only for a name: it reads an index

        preset = find_preset(str(path))
    weights = _weights(config, inventory, bits, dtype)
    per_value = _kv_bytes_per_value(config, kv_bytes_per_value, kv_dtype, dtype)
    state = estimate_state(config, _model_bytes_per_value(config, dtype), sequences)
    kv = estimate_kv(layer_layouts(config, mla_layout), tokens, per_value, sequences, cache_rules)
    alternative = None
    runtime_kv = None if config.runtime is None else config.runtime.kv
    if config.mla is not None and runtime_kv is None:
        other: MlaLayout = MLA_PER_HEAD if mla_layout == MLA_LATENT else MLA_LATENT
        layouts = layer_layouts(config, other)
        alternative = estimate_kv(layouts, tokens, per_value, sequences, cache_rules)
    caveats = _caveats(config, weights, kv, mla_layout, state)
    return ModelSizing(path, config, weights, kv, alternative, reserve, caveats, state, preset)


def _model_bytes_per_value(config: ModelConfig, dtype: str | None) -> Fraction | None:
    """The model's bytes per value (`dtype`, else the config's), where a state takes it; None
    where no layer keeps such a state."""
    if not needs_model_dtype(layer_states(config)):
        return None
    if dtype is not None:
        return dtype_bytes(dtype, "--dtype")
    if config.dtype is None:
        raise ModelInputError(
            "the config states no dtype, which this model's layer states take: give --dtype",
            "no_state_dtype",
        )
    return dtype_bytes(config.dtype, "dtype (config.json)")


def _check_count(what: str, value: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= maximum:
        raise ModelInputError(
            "{what} must be a whole number between 1 and {maximum}, got {value}",
            "bad_count",
            what=what,
            maximum=limit_text(maximum),
            value=str(value)[:40],
        )


def _read(path: Path) -> tuple[ModelConfig, WeightsInventory | None]:
    """The config, and the weight files' inventory when there are weight files."""
    if path.is_dir():
        config_path = path / CONFIG_NAME
        if not config_path.is_file():
            raise ConfigError(
                "{path}: no {name} in this folder",
                "missing_config",
                path=str(path),
                name=CONFIG_NAME,
            )
        config = load_config(config_path)
        if not _may_hold_safetensors(path):
            return config, None
        # Imported here: a folder with only a config.json (the common case) never pays for it.
        from iteragpu.models import safetensors as safetensors_files

        found = safetensors_files.weight_files(path)
        return config, None if found is None else safetensors_files.read_inventory(found)
    if path.suffix.lower() == ".safetensors":
        raise ModelInputError(
            "{path}: give the model's folder (its config.json holds the attention layout), "
            "not one of its .safetensors files",
            "safetensors_path",
            path=str(path),
        )
    if path.suffix.lower() == ".gguf":
        from iteragpu.models import gguf as gguf_files

        reader = gguf_files.open_gguf(path)
        inventory = gguf_files.read_inventory(path, reader)
        return gguf_files.read_config(path, reader), inventory
    if not path.exists():
        # Not on disk: a popular model by name (iteragpu.models.presets), else nothing.
        from iteragpu.models.presets import find_preset, preset_names

        preset = find_preset(str(path)) if len(path.parts) == 1 else None
        if preset is None:
            raise ModelInputError(
                "{path}: no such file or folder, nor a model name ({names})",
                "missing_path",
                path=str(path),
                names=", ".join(preset_names()),
            )
        return load_config(preset.config_path), None
    return load_config(path), None


def read_model(path: Path) -> tuple[ModelConfig, WeightsInventory | None]:
    """The model at `path` (a folder, a config.json, a .gguf file or a model's name): its
    config, and its weight files' inventory when it has weight files."""
    return _read(path)


def _may_hold_safetensors(folder: Path) -> bool:
    """False when no name in `folder` could be a safetensors file or index: the reader would
    find none. One listing, case-insensitive (wider than the reader's own match), where the
    reader's glob would compile a pattern."""
    try:
        names = os.listdir(folder)
    except OSError:
        return True  # the reader says what is wrong with the folder
    return any(name.lower().endswith(_SAFETENSORS_NAMES) for name in names)


def _weights(
    config: ModelConfig,
    inventory: WeightsInventory | None,
    bits: Fraction | int | None,
    dtype: str | None,
) -> Weights:
    if bits is not None and dtype is not None:
        raise ModelInputError("give --bits or --dtype, not both", "bits_and_dtype")
    if inventory is not None:
        if bits is not None or dtype is not None:
            raise ModelInputError(
                "--bits and --dtype apply to weights from a config: this model's weights are "
                "read from its {source} files",
                "bits_with_files",
                source=inventory.source,
            )
        return Weights(
            inventory.source,
            inventory.parameters,
            Fraction(inventory.total_bytes),
            inventory=inventory,
        )
    from_dtype = dtype is not None or (bits is None and config.dtype is not None)
    if dtype is not None:
        stored_bits = Fraction(dtype_bits(dtype, "--dtype"))
    elif bits is not None:
        stored_bits = Fraction(bits)
        if not 0 < stored_bits <= MAX_BITS:
            raise ModelInputError(
                "bits must be above 0 and at most {maximum}, got {value}",
                "bad_bits",
                maximum=str(MAX_BITS),
                value=exact_decimal_text(stored_bits),
            )
    elif config.dtype is not None:
        stored_bits = Fraction(dtype_bits(config.dtype, "dtype (config.json)"))
    else:
        raise ModelInputError(
            "no weight files and no dtype in the config: give --bits or --dtype", "no_bits"
        )
    parameters = count_parameters(config)
    # At a dtype, Transformers keeps some modules in float32 whatever the dtype (a router):
    # they weigh 4 bytes each. At --bits the storage is the uniform one the bits describe.
    kept = float32_parameters(config) if from_dtype else 0
    byte_count = dense_weight_bytes(parameters - kept, stored_bits) + kept * FLOAT32_BYTES
    float32 = kept if from_dtype else None
    return Weights("config", parameters, byte_count, stored_bits, float32_parameters=float32)


def _kv_bytes_per_value(
    config: ModelConfig,
    per_value: Fraction | int | None,
    kv_dtype: str | None,
    dtype: str | None = None,
) -> Fraction:
    if per_value is not None and kv_dtype is not None:
        raise ModelInputError(
            "give --kv-bytes-per-value or --kv-dtype, not both", "kv_bytes_and_dtype"
        )
    if kv_dtype is not None:
        return dtype_bytes(kv_dtype, "--kv-dtype")
    if per_value is not None:
        value = Fraction(per_value)
        if not 0 < value <= MAX_BYTES_PER_VALUE:
            raise ModelInputError(
                "KV bytes per value must be above 0 and at most {maximum}, got {value}",
                "bad_kv_bytes",
                maximum=str(MAX_BYTES_PER_VALUE),
                value=exact_decimal_text(value),
            )
        return value
    if dtype is not None:
        return dtype_bytes(dtype, "--dtype")  # the model's dtype, as Transformers caches
    if config.dtype is None:
        raise ModelInputError(
            "the config states no dtype: give --kv-dtype or --kv-bytes-per-value", "no_kv_dtype"
        )
    return dtype_bytes(config.dtype, "dtype (config.json)")


def _caveats(
    config: ModelConfig,
    weights: Weights,
    kv: KVEstimate,
    mla_layout: MlaLayout,
    state: StateEstimate,
) -> tuple[str, ...]:
    codes = ["activations_not_counted"]
    codes.append(
        "cache_dynamic_prompt_peak" if kv.cache.kind == "dynamic" else "cache_static_allocation"
    )
    runtime = config.runtime
    if config.mla is not None:
        if runtime is None or runtime.kv is None:
            codes.append(mla_layout)
        else:  # the file fixes llama.cpp's layout
            latent = runtime.kv[0] == MLA_LATENT_KV
            codes.append("mla_llama_cpp_latent" if latent else "mla_llama_cpp_per_head")
    if runtime is not None and state.groups:
        codes.append("states_llama_cpp")
    if weights.source == "config":
        # Only what holds: at --bits every parameter takes them; at a dtype, the modules
        # Transformers keeps in float32 are counted at 4 bytes where the family has any.
        if weights.float32_parameters is None:
            codes.append("weights_uniform_bits")
        elif weights.float32_parameters:
            codes.append("weights_float32_modules")
        else:
            codes.append("weights_uniform_dtype")
        if config.quantization_method is not None:
            codes.append("quantized_checkpoint_from_config")
        if config.is_multimodal:
            from iteragpu.models.towers import wrapper_counts

            if wrapper_counts(config) is None:
                codes.append("multimodal_encoder_not_counted")
        if config.mla is not None and config.mla.mtp_layers:
            codes.append("mtp_layers_not_counted")
    if weights.parameters is None:
        codes.append("parameters_unknown_integer_tensors")
    if kv.bytes_per_value < 2:
        codes.append("kv_quantization_overheads_not_counted")
    return tuple(codes)


# ---------------------------------------------------------------------------------------------
# The --json object
# ---------------------------------------------------------------------------------------------


def _per_token_fields(byte_count: Fraction) -> dict[str, Any]:
    """`kv_bytes_per_token` (whole bytes, rounded up) and its exact decimal text."""
    return {
        "kv_bytes_per_token": ceil_bytes(byte_count),
        "kv_bytes_per_token_exact": exact_decimal_text(byte_count),
    }


def _group_json(group: LayerGroup) -> dict[str, Any]:
    layout = group.layout
    return {
        "kind": layout.kind,
        "count": group.count,
        "window": layout.window,
        "layout": layout.layout,
        "heads": layout.heads,
        "key_dim": layout.key_dim,
        "value_dim": layout.value_dim,
        "values_per_token": layout.values_per_token,
        **_per_token_fields(group.kv_bytes_per_token),
        "tokens_held": group.held.peak,
        "tokens_held_decoding": group.held.decoding,
        "tokens_in_tensors_after_prompt": group.held.in_tensors_after_prompt,
        **byte_fields("kv_cache", group.kv_cache_bytes, "GiB"),
    }


def _kv_json(kv: KVEstimate) -> dict[str, Any]:
    return {
        **_per_token_fields(kv.kv_bytes_per_token),
        **byte_fields("kv_cache", kv.kv_cache_bytes, "GB", "GiB"),
        **byte_fields("kv_cache_decoding", kv.kv_cache_decoding_bytes, "GB", "GiB"),
        "layers": [_group_json(group) for group in kv.groups],
    }


def _weights_json(weights: Weights) -> dict[str, Any]:
    inventory = weights.inventory
    formats = None
    if inventory is not None:
        formats = [
            {
                "format": g.format,
                "dtype": g.dtype,
                "tensors": g.tensors,
                # A packed integer tensor's elements are containers, not values: not shown as such.
                "elements": None if g.format == INTEGER else g.elements,
                "stored_elements": g.elements,
                "bytes": g.bytes,
            }
            for g in inventory.groups
        ]
    return {
        "parameters": weights.parameters,
        "weights_source": weights.source,
        "weights_bits": None if weights.bits is None else exact_decimal_text(weights.bits),
        **byte_fields("weights", weights.byte_count, "GB", "GiB"),
        "weights_files": None if inventory is None else list(inventory.files),
        "weights_formats": formats,
        # Read with the checkpoint's quantization_config (iteragpu.models.quantized), else null.
        "weights_roles": None
        if inventory is None or inventory.layout is None
        else [
            {
                "role": g.role,
                "dtype": g.dtype,
                "tensors": g.tensors,
                "bytes": g.bytes,
                "parameters": g.parameters,
            }
            for g in inventory.layout.roles
        ],
        "parameters_unknown_reason": None
        if inventory is None
        else inventory.parameters_unknown_reason,
    }


def _state_json(state: StateEstimate) -> dict[str, Any]:
    return {
        **byte_fields("state", state.state_bytes, "GB", "GiB"),
        "states": [
            {
                "kind": group.kind,
                "count": group.count,
                "tensors": [
                    {
                        "name": tensor.name,
                        "elements_per_sequence": tensor.elements,
                        "dtype": "float32" if tensor.float32 else "model",
                        **byte_fields("layer", group.tensor_bytes(tensor)),
                    }
                    for tensor in group.tensors
                ],
                **byte_fields("state", group.state_bytes, "GiB"),
            }
            for group in state.groups
        ],
    }


def modules_json(config: ModelConfig) -> list[dict[str, Any]] | None:
    """A multimodal model's top modules (vision tower, projector, language model, head) and
    their parameters, as Transformers builds them; None for a text model or a wrapper without
    a recipe."""
    if not config.is_multimodal:
        return None
    from iteragpu.models.towers import wrapper_counts

    counted = wrapper_counts(config)
    if counted is None:
        return None
    return [{"name": name, "parameters": count} for name, count in counted.modules]


def active_parameter_count(sizing: ModelSizing) -> int | None:
    """Active parameters where the family's recipe tells the routed experts apart, and the
    total is the config's count (a file's count of a quantized layout may differ)."""
    active = active_parameters(sizing.config)
    if active is None or sizing.weights.parameters is None:
        return None
    counted = count_parameters(sizing.config)
    return active if counted == sizing.weights.parameters else None


def _preset_json(preset: Preset) -> dict[str, Any]:
    return {
        "name": preset.name,
        "hf_repo": preset.hf_repo,
        "hf_revision": preset.hf_revision,
        "read_at": preset.read_at,
        "card_parameters": preset.card_parameters,
        "card_url": preset.card_url,
    }


def payload(sizing: ModelSizing) -> dict[str, Any]:
    """The `--json` object of `iteragpu model` (keys listed in this module's docstring)."""
    config, kv = sizing.config, sizing.kv
    alternative = sizing.mla_alternative
    return {
        "path": str(sizing.path),
        "preset": None if sizing.preset is None else _preset_json(sizing.preset),
        "model_type": config.model_type,
        "outer_model_type": config.outer_model_type,
        "quantization_method": config.quantization_method,
        **_weights_json(sizing.weights),
        # Per token: the routed experts not chosen left out; `parameters` for a dense model.
        "active_parameters": active_parameter_count(sizing),
        "modules": modules_json(config),
        "tokens": kv.tokens,
        "sequences": kv.sequences,
        "kv_bytes_per_value": exact_decimal_text(kv.bytes_per_value),
        "cache": {
            "kind": kv.cache.kind,
            "static_max_tokens": kv.cache.static_max_tokens,
            "sliding_layers": sum(g.count for g in kv.groups if g.layout.kind == SLIDING),
        },
        **_kv_json(kv),
        "mla_alternative": None if alternative is None else _kv_json(alternative),
        **_state_json(sizing.state),
        "reserve_gib": exact_decimal_text(sizing.reserve_gib),
        **byte_fields("reserve", sizing.reserve_bytes),
        **byte_fields("total", sizing.total_bytes, "GB", "GiB"),
        "total_incomplete": False,
        "cache_unknown_reason": None,
        "caveats": list(sizing.caveats),
    }


# ---------------------------------------------------------------------------------------------
# A family this package does not know: the weights from the files, the cache unknown
# ---------------------------------------------------------------------------------------------


class PartialSizing(Record):
    """A model whose family the reader does not know (or whose layers keep a state it does not
    model), sized from its weight files alone: the cache is unknown, with the reason, and the
    total holds the weights and the reserve only, so it is incomplete, never a guess."""

    path: Path
    model_type: str | None  # as config.json states it
    weights: Weights
    reserve_gib: Fraction
    cache_reason: str  # the reader's refusal code: unknown_family, recurrent_state...

    @property
    def reserve_bytes(self) -> Fraction:
        return from_unit(self.reserve_gib, "GiB")

    @property
    def total_bytes(self) -> Fraction:
        return self.weights.byte_count + self.reserve_bytes


def size_weights_only(
    path: Path | str, refusal: ModelInputError, reserve_gib: Fraction | int = 0
) -> PartialSizing:
    """The weights of a model folder from its safetensors headers, for a config the reader
    refused with `refusal` (an `UnsupportedModelError`); `refusal` itself is raised again when
    the folder holds no weight files: then nothing can be stated."""
    path = Path(path)
    if not path.is_dir() or not _may_hold_safetensors(path):
        raise refusal
    from iteragpu.models import safetensors as safetensors_files

    found = safetensors_files.weight_files(path)
    if found is None:
        raise refusal
    inventory = safetensors_files.read_inventory(found)
    try:
        raw = _json_loads((path / CONFIG_NAME).read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        raw = None
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    weights = Weights(
        inventory.source, inventory.parameters, Fraction(inventory.total_bytes), inventory=inventory
    )
    return PartialSizing(
        path,
        model_type if isinstance(model_type, str) else None,
        weights,
        Fraction(reserve_gib),
        refusal.reason,
    )


def _unknown_kv_json() -> dict[str, Any]:
    """`_kv_json`'s keys, every value null: the cache of a family the reader does not know."""
    keys = ["kv_bytes_per_token", "kv_bytes_per_token_exact", "layers"]
    for stem in ("kv_cache", "kv_cache_decoding"):
        keys += [f"{stem}_bytes", f"{stem}_bytes_exact", f"{stem}_gb", f"{stem}_gib"]
    return dict.fromkeys(keys)


def partial_payload(sizing: PartialSizing) -> dict[str, Any]:
    """The `--json` object for a `PartialSizing`: the same keys as `payload`, the cache's null
    with `cache_unknown_reason`, and `total_incomplete` true."""
    return {
        "path": str(sizing.path),
        "preset": None,
        "model_type": sizing.model_type,
        "outer_model_type": None,
        "quantization_method": None,
        **_weights_json(sizing.weights),
        "active_parameters": None,
        "modules": None,
        "tokens": None,
        "sequences": None,
        "kv_bytes_per_value": None,
        "cache": None,
        **_unknown_kv_json(),
        "mla_alternative": None,
        **dict.fromkeys(["state_bytes", "state_bytes_exact", "state_gb", "state_gib", "states"]),
        "cache_unknown_reason": sizing.cache_reason,
        "reserve_gib": exact_decimal_text(sizing.reserve_gib),
        **byte_fields("reserve", sizing.reserve_bytes),
        **byte_fields("total", sizing.total_bytes, "GB", "GiB"),
        "total_incomplete": True,
        "caveats": ["activations_not_counted", "cache_unknown"],
    }
