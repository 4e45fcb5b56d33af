"""A model's `config.json` read into what memory sizing needs: sizes, heads and per-layer kinds.

Only the decoder families listed in `FAMILIES` are read, each with the defaults of its
configuration class in Transformers 5.24 for the keys a config may leave out, and Transformers'
rules for which layers slide (`layer_types`; Gemma-2 every other layer; Gemma-3 five of six;
Mistral's `sliding_window` on every layer; Qwen2/3 `use_sliding_window` from layer
`max_window_layers` on). A multimodal config is read through its nested `text_config`: its
decoder is what holds the KV cache. The number of layers, of heads and the hidden size are never
defaulted: a config without them is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from iteragpu.core.records import Record
from iteragpu.models.errors import ConfigError, UnsupportedModelError, system_error_code
from iteragpu.models.json_reader import json_loads as _json_loads

if TYPE_CHECKING:
    from iteragpu.models.recipe import StateTensor

FULL: Final = "full_attention"
SLIDING: Final = "sliding_attention"
# Transformers 5.24's other cache layer types (cache_utils.py), read where a family's recipe
# describes them: chunked attention (a sliding cache whose window is the chunk: Llama 4), layers
# that keep a state and no KV (Mamba, linear attention, short convolutions), both in one layer,
# and a layer that holds nothing (it reads another layer's KV).
CHUNKED: Final = "chunked_attention"
LINEAR: Final = "linear_attention"
CONV: Final = "conv"
HYBRID: Final = "hybrid"
HYBRID_SLIDING: Final = "hybrid_sliding"
DUMMY: Final = "dummy"
SLIDING_KINDS: Final = frozenset({SLIDING, HYBRID_SLIDING})
# The old names Transformers 5.24 renames in every config's layer_types
# (configuration_utils.py, _LEGACY_LAYER_TYPE_REMAP): Granite-4.0-H's published configs use them.
LEGACY_KINDS: Final = {"mamba": "linear_attention", "attention": "full_attention"}
STATE_ONLY_KINDS: Final = frozenset({LINEAR, CONV, DUMMY})

# Transformers 5.24's defaults, per family, for the keys a saved config may omit.
_LLAMA: Final[dict[str, Any]] = {
    "num_key_value_heads": None,  # None: as many as the query heads
    "head_dim": None,  # None: hidden_size // num_attention_heads
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "sliding_window": None,
}
_QWEN2: Final[dict[str, Any]] = {
    **_LLAMA,
    "use_sliding_window": False,
    "sliding_window": 4096,
    "max_window_layers": 28,
}
_GEMMA: Final[dict[str, Any]] = {
    **_LLAMA,
    "num_key_value_heads": 16,
    "head_dim": 256,
    "tie_word_embeddings": True,
}
_DEEPSEEK: Final[dict[str, Any]] = {
    **_LLAMA,
    "first_k_dense_replace": 0,
    "moe_layer_freq": 1,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "moe_intermediate_size": 1407,
}


class Family(Record):
    """What a decoder family's layers hold, beyond what its config states."""

    defaults: Mapping[str, Any]
    norms_per_layer: int = 2  # RMSNorm weights of `hidden_size` per decoder layer
    qk_norm: bool = False  # an RMSNorm of `head_dim` on queries and on keys (Qwen3, Gemma-3)
    qkv_bias: bool = False  # q, k and v projections always carry a bias (Qwen2)
    mla: bool = False  # DeepSeek's multi-head latent attention, with mixture-of-experts MLPs


FAMILIES: Final[dict[str, Family]] = {
    "llama": Family(_LLAMA),
    "mistral": Family({**_LLAMA, "sliding_window": 4096}),
    "qwen2": Family(_QWEN2, qkv_bias=True),
    "qwen3": Family({**_QWEN2, "num_key_value_heads": 32, "head_dim": 128}, qk_norm=True),
    "gemma": Family(_GEMMA),
    "gemma2": Family({**_GEMMA, "num_key_value_heads": 8, "sliding_window": 4096}, 4),
    "gemma3_text": Family(
        {**_GEMMA, "num_key_value_heads": 4, "sliding_window": 4096}, 4, qk_norm=True
    ),
    "deepseek_v2": Family(_DEEPSEEK, mla=True),
    "deepseek_v3": Family(
        {
            **_DEEPSEEK,
            "num_key_value_heads": 128,
            "first_k_dense_replace": 3,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "moe_intermediate_size": 2048,
        },
        mla=True,
    ),
}

# A multimodal config's decoder family, when its `text_config` does not name one.
_TEXT_MODEL_TYPES: Final = {
    "gemma3": "gemma3_text",
    "llava": "llama",
    "mistral3": "mistral",
    "llama4": "llama4_text",
}

# Families whose layers keep a recurrent state (Mamba, linear attention) beside or instead of a
# KV cache; its size depends on per-kind state shapes this package does not model.
_STATE_FAMILIES: Final = frozenset(
    {
        "mamba",
        "mamba2",
        "falcon_mamba",
        "jamba",
        "zamba",
        "zamba2",
        "falcon_h1",
        "bamba",
        "nemotron_h",
        "granitemoehybrid",
        "recurrent_gemma",
        "rwkv",
        "qwen3_next",
        "qwen3_5",
        "qwen3_5_moe",
        "kimi_linear",
        "minimax",
        "lfm2",
        "plamo2",
        "xlstm",
    }
)
_STATE_KEYS: Final = ("ssm_cfg", "mamba_d_state", "layers_block_type", "linear_attn_config")


def refused_state_families() -> list[str]:
    """The families whose layers keep a state and which no recipe describes: refused."""
    from iteragpu.models.recipe import recipe_types

    return sorted(_STATE_FAMILIES - set(recipe_types()))


_CACHE_KINDS: Final = frozenset({FULL, SLIDING})


class MlaConfig(Record):
    """DeepSeek's multi-head latent attention and its mixture of experts."""

    kv_lora_rank: int
    q_lora_rank: int | None
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    n_routed_experts: int
    n_shared_experts: int
    moe_intermediate_size: int
    first_k_dense_replace: int
    moe_layer_freq: int
    mtp_layers: (
        int  # multi-token-prediction layers stored in checkpoints, not built by Transformers
    )


class RuntimeCache(Record):
    """What a runtime other than Transformers allocates where it differs from Transformers'
    cache: llama.cpp's, for a GGUF file (iteragpu.models.gguf reads it from the metadata)."""

    runtime: str  # "llama.cpp"
    # Every attention layer's KV as (layout, heads, key values, value values) per token, where
    # the runtime's differs from the config's layout (DeepSeek's MLA); None: the config's.
    kv: tuple[str, int, int, int] | None = None
    # Per layer kind, the state tensors one layer keeps per sequence (recipe.StateTensor), in
    # place of the family recipe's: the runtime's own shapes and dtypes.
    states: tuple[tuple[str, tuple[StateTensor, ...]], ...] = ()


class ModelConfig(Record):
    """The decoder of a model, as its config describes it."""

    model_type: str  # the decoder's family (a key of FAMILIES)
    outer_model_type: str | None  # the multimodal wrapper's model_type, when there is one
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    head_dim: int
    layer_kinds: tuple[str, ...]  # FULL or SLIDING, one per decoder layer
    sliding_window: int | None
    vocab_size: int | None
    intermediate_size: int | None
    tie_word_embeddings: bool
    attention_bias: bool
    mlp_bias: bool
    dtype: str | None  # `dtype` (`torch_dtype` before Transformers 5) as the config states it
    quantization_method: str | None
    mla: MlaConfig | None
    # The config's values over the family's defaults: what a family recipe counts from.
    values: Mapping[str, Any] | None = None
    chunk_window: int | None = None  # chunked-attention layers' window (Llama 4)
    # A multimodal wrapper's whole config (its vision_config, projector keys), else None.
    outer_values: Mapping[str, Any] | None = None
    # The cache of the runtime that reads the file, where it is not Transformers' (GGUF).
    runtime: RuntimeCache | None = None

    @property
    def family(self) -> Family:
        return family_of(self.model_type) or FAMILIES["llama"]

    @property
    def is_multimodal(self) -> bool:
        return self.outer_model_type is not None


def family_of(model_type: str) -> Family | None:
    """The family of `model_type`: a hand-described one of FAMILIES, else one described as data
    (iteragpu.models.recipe, `families/<type>.json`), else None."""
    family = FAMILIES.get(model_type)
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    if family is not None:
        if described is None:
            return family
        # Its recipe's defaults are its config class's (counting reads them too); the layer
        # rules stay the hand ones.
        return Family(
            {**family.defaults, **described.defaults},
            family.norms_per_layer,
            family.qk_norm,
            family.qkv_bias,
            family.mla,
        )
    if described is None:
        return None
    # A recipe family with DeepSeek's latent attention (`"mla": true`: Kimi-Linear's full
    # layers) caches the latent; its recipe counts the parameters.
    return Family(described.defaults, mla=bool(described.data.get("mla")))


def known_families() -> list[str]:
    from iteragpu.models.recipe import recipe_types

    return sorted({*FAMILIES, *recipe_types()})


def load_config(path: Path) -> ModelConfig:
    """Read `path` (a config.json) into a `ModelConfig`, or raise a one-line `ModelInputError`."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise ConfigError("{path}: no such file", "missing_config", path=str(path)) from None
    except UnicodeDecodeError as error:
        # Where the text stops being UTF-8, not Python's English codec message.
        raise ConfigError(
            "{path}: not UTF-8 text (first bad byte at offset {offset})",
            "unreadable_config",
            path=str(path),
            offset=str(error.start),
        ) from None
    except OSError as error:
        # The system's own wording is English: the error code instead (EACCES, EISDIR...).
        raise ConfigError(
            "{path}: cannot be read (system error {code})",
            "unreadable_config",
            path=str(path),
            code=system_error_code(error),
        ) from None
    try:
        raw = _json_loads(text)
    except ValueError as error:
        from json import JSONDecodeError

        if not isinstance(error, JSONDecodeError):
            raise
        # The position, not the parser's English wording: the message is shown in the
        # reader's language.
        raise ConfigError(
            "{path}: not valid JSON (line {line}, column {column})",
            "config_not_json",
            path=str(path),
            line=str(error.lineno),
            column=str(error.colno),
        ) from None
    except RecursionError:
        raise ConfigError(
            "{path}: not valid JSON (nested too deeply)", "config_not_json", path=str(path)
        ) from None
    if not isinstance(raw, dict):
        raise ConfigError("{path}: not a JSON object", "config_not_object", path=str(path))
    return parse_config(raw, str(path))


MAX_LAYERS: Final = 100_000
"""The most decoder layers a config may declare (web/sizer/config_reader.js has the same bound)."""


def parse_config(raw: Mapping[str, Any], where: str = "config.json") -> ModelConfig:
    """The decoder described by a config's JSON object (`where` names it in messages)."""
    outer_type = raw.get("model_type")
    text = raw.get("text_config")
    if text is None:
        from iteragpu.models.recipe import wrapper_text_type as text_model_type

        inner = text_model_type(outer_type) if isinstance(outer_type, str) else None
        if inner is not None:
            # A wrapper whose text keys sit at the top (Qwen2-VL's published configs).
            return _parse_decoder({**raw, "model_type": inner}, raw, outer_type, where)
        return _parse_decoder(raw, raw, None, where)
    if not isinstance(text, dict):
        raise ConfigError("{where}: text_config is not an object", "bad_key", where=where)
    text_type = text.get("model_type")
    if text_type is None and isinstance(outer_type, str):
        from iteragpu.models.recipe import wrapper_text_type as text_model_type

        text_type = _TEXT_MODEL_TYPES.get(outer_type) or text_model_type(outer_type)
    _refuse_state(raw, where)
    outer = str(outer_type) if outer_type is not None else "multimodal"
    return _parse_decoder({**text, "model_type": text_type}, raw, outer, where)


def _parse_decoder(
    text: Mapping[str, Any], outer: Mapping[str, Any], outer_type: str | None, where: str
) -> ModelConfig:
    model_type = text.get("model_type")
    if not isinstance(model_type, str):
        raise ConfigError(
            "{where}: no model_type: the model's family is unknown", "no_model_type", where=where
        )
    _refuse_state(text, where)
    family = family_of(model_type)
    if family is None:
        raise UnsupportedModelError(
            "{where}: model_type {model_type!r} is not a known family ({known}): its layer "
            "layout is unknown, so nothing is guessed",
            "unknown_family",
            where=where,
            model_type=model_type,
            known=", ".join(known_families()),
        )
    read = _Reader({**family.defaults, **_aliased(model_type, text)}, where)
    layers = read.positive("num_hidden_layers")
    if layers > MAX_LAYERS:
        # Each layer is laid out one by one below: a bound, far above any model, keeps an
        # absurd count from exhausting memory.
        raise ConfigError(
            "{where}: num_hidden_layers must be at most 100000, got {value}",
            "bad_key",
            where=where,
            key="num_hidden_layers",
            value=str(layers),
        )
    hidden = read.positive("hidden_size")
    if _recipe_key(model_type, "no_attention"):
        heads = kv_heads = head_dim = 0  # Mamba: no layer attends, none holds a KV
    else:
        heads, kv_heads, head_dim = _heads(read, model_type, hidden)
    kinds, window, chunk = _layer_kinds(read, model_type, layers)
    if model_type not in FAMILIES:
        from iteragpu.models.recipe import recipe

        described = recipe(model_type)
        if described is not None and described.data.get("require"):
            described.check(described.scope(read.raw, where))
    tie = outer.get("tie_word_embeddings", read.raw.get("tie_word_embeddings"))
    dtype = next(
        (c.get(k) for c in (text, outer) for k in ("dtype", "torch_dtype") if c.get(k)), None
    )
    quantization = outer.get("quantization_config") or text.get("quantization_config")
    method = quantization.get("quant_method") if isinstance(quantization, dict) else None
    return ModelConfig(
        model_type=model_type,
        outer_model_type=outer_type,
        layers=layers,
        hidden_size=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        layer_kinds=kinds,
        sliding_window=window,
        vocab_size=read.optional_positive("vocab_size"),
        # One per layer (Gemma-3n) for a family whose recipe reads it so (`per_layer`).
        intermediate_size=None
        if isinstance(read.raw.get("intermediate_size"), list) and model_type not in FAMILIES
        else read.optional_positive("intermediate_size"),
        tie_word_embeddings=read.boolean_value("tie_word_embeddings", tie),
        attention_bias=read.boolean("attention_bias"),
        mlp_bias=read.boolean("mlp_bias"),
        dtype=str(dtype) if isinstance(dtype, str) else None,
        quantization_method=str(method) if isinstance(method, str) else None,
        mla=_mla(read, text, model_type) if family.mla else None,
        # The tie the model is built with: a multimodal wrapper's own key wins (Gemma-3).
        values={**read.raw, "tie_word_embeddings": read.boolean_value("tie_word_embeddings", tie)},
        chunk_window=chunk,
        outer_values=outer if outer_type is not None else None,
    )


def _heads(read: _Reader, model_type: str, hidden: int) -> tuple[int, int, int]:
    """Query heads, KV heads and the head size."""
    where = read.where
    heads = read.positive("num_attention_heads")
    if _recipe_key(model_type, "mla"):
        # Latent attention caches no KV head: its key-value heads are unused (kv.py).
        return heads, heads, read.optional_positive("head_dim") or hidden // heads
    attention = _recipe_attention(model_type, read)
    kv_heads = attention.get("kv_heads") or read.optional_positive("num_key_value_heads") or heads
    if heads % kv_heads:
        raise ConfigError(
            "{where}: num_attention_heads ({heads}) is not a multiple of num_key_value_heads "
            "({kv_heads})",
            "bad_key",
            where=where,
            heads=str(heads),
            kv_heads=str(kv_heads),
        )
    head_dim = attention.get("head_dim") or read.optional_positive("head_dim") or hidden // heads
    if head_dim == 0:
        raise ConfigError(
            "{where}: hidden_size is smaller than num_attention_heads", "bad_key", where=where
        )
    return heads, kv_heads, head_dim


def _recipe_key(model_type: str, key: str) -> Any:
    """A key of the family's recipe (None for a hand-described family or none)."""
    if model_type in FAMILIES:
        return None
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    return None if described is None else described.data.get(key)


def _aliased(model_type: str, text: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config with the canonical names a family's recipe maps its own keys to (GPT-2's
    `n_embd` is `hidden_size`; a dotted name reads a nested object: DBRX's `attn_config`)."""
    if model_type in FAMILIES:
        return text
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    aliases = {} if described is None else described.data.get("aliases", {})
    if not aliases:
        return text
    values = dict(text)
    for canonical, name in aliases.items():
        if values.get(canonical) is not None:
            continue
        value: Any = text
        for part in name.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            values[canonical] = value
    return values


def _recipe_attention(model_type: str, read: _Reader) -> dict[str, int]:
    """KV heads and head size where a family's recipe computes them (`attention`)."""
    if model_type in FAMILIES:
        return {}
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    rules = {} if described is None else described.data.get("attention", {})
    if not rules:
        return {}
    scope = described.scope(read.raw, read.where)  # type: ignore[union-attr]
    return {key: scope.count(expression) for key, expression in rules.items()}


def _window(read: _Reader, model_type: str) -> int | None:
    """The sliding window: the config's, or what a family's recipe computes (`window`: Qwen2-MoE
    writes 0 unless use_sliding_window is true); None for none."""
    if model_type in FAMILIES:
        return read.optional_positive("sliding_window")
    from iteragpu.models.recipe import Scope, recipe

    described = recipe(model_type)
    rule = None if described is None else described.data.get("window")
    if rule is None:
        return read.optional_positive("sliding_window")
    value = Scope(read.raw, read.where).evaluate(rule)
    return None if value is None else read.positive_value("sliding_window", value)


def _refuse_state(config: Mapping[str, Any], where: str) -> None:
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type not in FAMILIES:
        from iteragpu.models.recipe import recipe

        if recipe(model_type) is not None:
            return  # its recipe describes its states
    # A model_type that is not a string (a list, an object) names no family, stateful or not.
    stateful = isinstance(model_type, str) and model_type in _STATE_FAMILIES
    keys = [key for key in _STATE_KEYS if key in config]
    if stateful or keys:
        what = f"model_type {model_type!r}" if stateful else keys[0]
        raise UnsupportedModelError(
            "{where}: {what} means Mamba or linear-attention layers, whose recurrent state is "
            "not a KV cache: its size per layer kind is not known here, so nothing is guessed",
            "recurrent_state",
            where=where,
            what=what,
        )


def _layer_kinds(
    read: _Reader, model_type: str, layers: int
) -> tuple[tuple[str, ...], int | None, int | None]:
    """Each layer's kind, the sliding window and the chunked layers' window, by Transformers'
    rules for the family."""
    window = _window(read, model_type)
    if model_type in ("qwen2", "qwen3") and not read.boolean("use_sliding_window"):
        window = None  # Transformers drops the window unless use_sliding_window is true
    allowed = _allowed_kinds(model_type)
    declared = read.raw.get("layer_types")
    if declared is not None:
        kinds = _declared_kinds(declared, layers, read.where, allowed)
    elif model_type == "gemma2":
        kinds = tuple(SLIDING if (i + 1) % 2 else FULL for i in range(layers))
    elif model_type == "gemma3_text":
        pattern = read.positive_value(
            "sliding_window_pattern",
            read.raw.get("sliding_window_pattern", read.raw.get("_sliding_window_pattern", 6)),
        )
        kinds = tuple(SLIDING if (i + 1) % pattern else FULL for i in range(layers))
    elif model_type in ("qwen2", "qwen3"):
        first = read.non_negative("max_window_layers")
        kinds = tuple(SLIDING if window is not None and i >= first else FULL for i in range(layers))
    elif model_type not in FAMILIES:
        # A family described as data says its own rule (iteragpu.models.recipe).
        from iteragpu.models.recipe import Scope, recipe

        described = recipe(model_type)
        assert described is not None  # parse_config refused the family otherwise
        scope = Scope(read.raw, read.where)
        kinds = tuple(described.layer_kind(scope, i) for i in range(layers))
        _refuse_unknown_kinds(kinds, read.where, allowed)
    else:
        # Transformers' rule for a config without layer_types: every layer slides when the
        # config has a sliding window.
        kinds = tuple(SLIDING if window is not None else FULL for _ in range(layers))
    shared = _recipe_key(model_type, "shared_kv")
    if shared is not None:
        # A layer that reads another layer's KV holds none, whatever layer_types says.
        from iteragpu.models.recipe import Scope

        scope = Scope(read.raw, read.where)
        kinds = tuple(DUMMY if scope.evaluate(shared, layer=i) else k for i, k in enumerate(kinds))
    if SLIDING_KINDS & set(kinds) and window is None:
        raise ConfigError(
            "{where}: sliding layers without a sliding_window", "no_window", where=read.where
        )
    chunk = None
    if CHUNKED in kinds:
        rule = _recipe_key(model_type, "chunk")
        from iteragpu.models.recipe import Scope

        value = Scope(read.raw, read.where).evaluate(rule)
        if value is None:
            raise ConfigError(
                "{where}: chunked attention layers without attention_chunk_size",
                "no_window",
                where=read.where,
            )
        chunk = read.positive_value("attention_chunk_size", value)
    return kinds, window if SLIDING_KINDS & set(kinds) else None, chunk


def _allowed_kinds(model_type: str) -> frozenset[str]:
    """The layer kinds whose cache the reader models for the family: full and sliding
    attention, and, where its recipe describes them, chunked attention (`chunk`), the kinds
    that keep a state (`states`) and layers that hold nothing."""
    if model_type in FAMILIES:
        return _CACHE_KINDS
    from iteragpu.models.recipe import recipe

    described = recipe(model_type)
    if described is None:
        return _CACHE_KINDS
    extra = set(described.data.get("states", {})) | {DUMMY}
    if described.data.get("chunk") is not None:
        extra.add(CHUNKED)
    return _CACHE_KINDS | extra


def _declared_kinds(
    declared: Any, layers: int, where: str, allowed: frozenset[str]
) -> tuple[str, ...]:
    if not isinstance(declared, list) or not all(isinstance(k, str) for k in declared):
        raise ConfigError("{where}: layer_types is not a list of names", "bad_key", where=where)
    if len(declared) != layers:
        raise ConfigError(
            "{where}: layer_types names {count} layers, num_hidden_layers is {layers}",
            "bad_key",
            where=where,
            count=str(len(declared)),
            layers=str(layers),
        )
    kinds = tuple(LEGACY_KINDS.get(str(kind), str(kind)) for kind in declared)
    _refuse_unknown_kinds(kinds, where, allowed)
    return kinds


def _refuse_unknown_kinds(kinds: tuple[str, ...], where: str, allowed: frozenset[str]) -> None:
    """Refuse a layer kind whose cache is not modelled, declared or given by a recipe."""
    unknown = sorted(set(kinds) - allowed)
    if unknown:
        raise UnsupportedModelError(
            "{where}: layer kind {kind!r} keeps a state whose size is not known here (known: "
            "{known}): nothing is guessed",
            "unknown_layer_kind",
            where=where,
            kind=unknown[0],
            known=", ".join(sorted(allowed)),
        )


def _mla(read: _Reader, text: Mapping[str, Any], model_type: str) -> MlaConfig:
    mtp = text.get("num_nextn_predict_layers", text.get("num_mtp_layers", 0))
    if model_type not in FAMILIES:
        # A recipe family's latent attention: only the cache's sizes are read (its recipe
        # counts the parameters, the experts included).
        return MlaConfig(
            kv_lora_rank=read.positive("kv_lora_rank"),
            q_lora_rank=read.optional_positive("q_lora_rank"),
            qk_nope_head_dim=read.positive("qk_nope_head_dim"),
            qk_rope_head_dim=read.positive("qk_rope_head_dim"),
            v_head_dim=read.positive("v_head_dim"),
            n_routed_experts=0,
            n_shared_experts=0,
            moe_intermediate_size=0,
            first_k_dense_replace=0,
            moe_layer_freq=1,
            mtp_layers=0,
        )
    return MlaConfig(
        kv_lora_rank=read.positive("kv_lora_rank"),
        q_lora_rank=read.optional_positive("q_lora_rank"),
        qk_nope_head_dim=read.positive("qk_nope_head_dim"),
        qk_rope_head_dim=read.positive("qk_rope_head_dim"),
        v_head_dim=read.positive("v_head_dim"),
        n_routed_experts=read.positive("n_routed_experts"),
        n_shared_experts=read.non_negative("n_shared_experts"),
        moe_intermediate_size=read.positive("moe_intermediate_size"),
        first_k_dense_replace=read.non_negative("first_k_dense_replace"),
        moe_layer_freq=read.positive("moe_layer_freq"),
        mtp_layers=read.non_negative_value("num_nextn_predict_layers", mtp or 0),
    )


class _Reader:
    """Typed reads of a config's keys, each failure one line naming the key."""

    def __init__(self, raw: Mapping[str, Any], where: str) -> None:
        self.raw = raw
        self.where = where

    def positive(self, key: str) -> int:
        if self.raw.get(key) is None:
            raise ConfigError(
                "{where}: no {key}: the attention layout cannot be read without it",
                "missing_key",
                where=self.where,
                key=key,
            )
        return self.positive_value(key, self.raw[key])

    def optional_positive(self, key: str) -> int | None:
        value = self.raw.get(key)
        return None if value is None else self.positive_value(key, value)

    def non_negative(self, key: str) -> int:
        return self.non_negative_value(key, self.raw.get(key))

    def positive_value(self, key: str, value: Any) -> int:
        number = self.non_negative_value(key, value)
        if number == 0:
            self._bad(key, value, "a positive whole number")
        return number

    def non_negative_value(self, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self._bad(key, value, "a whole number")
        # Far above any model (and the core's bounds): a larger value describes no model.
        if value > 10**12:
            self._bad(key, value, "at most 1e12")
        return int(value)

    def boolean(self, key: str) -> bool:
        return self.boolean_value(key, self.raw.get(key, False))

    def boolean_value(self, key: str, value: Any) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self._bad(key, value, "true or false")
        return bool(value)

    def _bad(self, key: str, value: Any, expected: str) -> NoReturn:
        # One whole template per expectation, so that the CLI can translate each.
        import json  # only on this error path

        values = {"where": self.where, "key": key, "value": json.dumps(value)[:40]}
        if expected == "a positive whole number":
            raise ConfigError(
                "{where}: {key} must be a positive whole number, got {value}", "bad_key", **values
            )
        if expected == "a whole number":
            raise ConfigError(
                "{where}: {key} must be a whole number, got {value}", "bad_key", **values
            )
        if expected == "at most 1e12":
            raise ConfigError(
                "{where}: {key} must be at most 1e12, got {value}", "bad_key", **values
            )
        raise ConfigError("{where}: {key} must be true or false, got {value}", "bad_key", **values)
