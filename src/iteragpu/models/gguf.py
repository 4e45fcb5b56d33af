"""GGUF files: tensor infos read with the `gguf` package (the `models` extra), no tensor data.

Each tensor's logical element count and its ggml type give its exact bytes (a quantized type's
blocks include their scales). The attention layout comes from the file's metadata, translated
into the keys of a Hugging Face config for the architectures whose llama.cpp metadata says all
the KV cache needs; any other architecture is refused by name.

What llama.cpp allocates where it is not what Transformers caches rides on the config
(`ModelConfig.runtime`): the recurrent and convolution states of Mamba, hybrid and
short-convolution layers (`_STATES`), and DeepSeek's MLA cache (`_deepseek2`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from iteragpu.models.config import (
    CHUNKED,
    CONV,
    FULL,
    HYBRID,
    LINEAR,
    MAX_LAYERS,
    SLIDING,
    ModelConfig,
    RuntimeCache,
    parse_config,
)
from iteragpu.models.errors import (
    ConfigError,
    GgufError,
    UnsupportedModelError,
    system_error_code,
)
from iteragpu.models.kv import MLA_LATENT_KV, MLA_PER_HEAD
from iteragpu.models.recipe import StateTensor
from iteragpu.models.tensors import (
    FLOAT,
    INTEGER,
    QUANTIZATION_METADATA,
    QUANTIZED_BLOCKS,
    WeightsInventory,
    group_tensors,
    is_quantization_metadata,
)

if TYPE_CHECKING:
    from gguf import GGUFReader

MAGIC: Final = b"GGUF"
EXTRA_HINT: Final = "pip install 'iteragpu[models]'"
_FLOAT_TYPES: Final = frozenset({"F64", "F32", "F16", "BF16"})
_INTEGER_TYPES: Final = frozenset({"I8", "I16", "I32", "I64"})


# llama.cpp architecture (general.architecture) -> how its metadata gives a Hugging Face config,
# in the manner of llama.cpp's LLM_KV table (src/llama-arch.cpp) and of what its hparams loader
# reads per architecture: ggml-org/llama.cpp src/llama-model.cpp, llama_model::load_hparams, at
# commit 00342301d01add50835550e8a916f12097d94517 (key names: gguf-py/gguf/constants.py, class
# Keys). Each row: the Hugging Face model_type whose layer rules apply, the config keys read from
# "{arch}.<key>" beyond _ATTENTION's, the config keys llama.cpp's own rules fix, and its sliding
# rule (`_Sliding`). The architectures whose layers keep a state are _STATES' rows; an
# architecture in neither table is refused by name.
class _Sliding(NamedTuple):
    """llama.cpp's sliding layers for an architecture: `hparams.set_swa_pattern(period)` (layer
    il slides when il % period < period - 1, llama-hparams.cpp) with the window
    `{arch}.attention.sliding_window`, or `default` where llama.cpp has one (None: the key is
    required)."""

    period: int
    default: int | None = None


class _Arch(NamedTuple):
    model_type: str
    keys: Mapping[str, str] = {}  # HF config key -> the metadata key after "{arch}."
    fixed: Mapping[str, Any] = {}  # HF config keys that llama.cpp's rules fix
    sliding: _Sliding | None = None  # None: llama.cpp slides no layer (it reads no window)


_ATTENTION: Final = {
    "num_hidden_layers": "block_count",
    "hidden_size": "embedding_length",
    "num_attention_heads": "attention.head_count",  # per layer or one count
    "num_key_value_heads": "attention.head_count_kv",
    "head_dim": "attention.key_length",  # absent: hidden_size // heads, as in llama.cpp
    "intermediate_size": "feed_forward_length",
}
_EXPERTS: Final = {"num_local_experts": "expert_count", "num_experts_per_tok": "expert_used_count"}
_MOE_WIDTH: Final = {"moe_intermediate_size": "expert_feed_forward_length"}
_SIGMOID_GATING: Final = 2  # {arch}.expert_gating_func: gguf.ExpertGatingFuncType.SIGMOID
_ARCHITECTURES: Final = {
    # Every row without `sliding`: llama.cpp reads no window, so no layer slides (Mistral's,
    # Phi-3's and Starcoder-2's windows included: "Phi SWA is currently disabled").
    "llama": _Arch("llama", _EXPERTS),  # with expert_count: mixtral (below)
    "qwen2": _Arch("qwen2", fixed={"use_sliding_window": False}),
    "qwen2moe": _Arch(
        "qwen2_moe",
        {
            "num_experts": "expert_count",
            "num_experts_per_tok": "expert_used_count",
            "moe_intermediate_size": "expert_feed_forward_length",
            "shared_expert_intermediate_size": "expert_shared_feed_forward_length",
        },
        {"use_sliding_window": False},
    ),
    "qwen3": _Arch("qwen3", fixed={"use_sliding_window": False}),
    "qwen3moe": _Arch("qwen3_moe", {**_EXPERTS, **_MOE_WIDTH}, {"use_sliding_window": False}),
    "gemma": _Arch("gemma"),
    "gemma2": _Arch("gemma2", sliding=_Sliding(2, 4096)),
    "gemma3": _Arch("gemma3_text", sliding=_Sliding(6)),
    "phi3": _Arch("phi3"),
    "phimoe": _Arch("phimoe", _EXPERTS),
    "deepseek2": _Arch("deepseek_v2"),  # multi-head latent attention: _deepseek2
    "gpt-oss": _Arch("gpt_oss", _EXPERTS, sliding=_Sliding(2)),
    "command-r": _Arch("cohere"),
    "cohere2": _Arch("cohere2", sliding=_Sliding(4)),
    "olmo2": _Arch("olmo2"),  # with a window above 0: olmo3 (below)
    "olmoe": _Arch(
        "olmoe", {"num_experts": "expert_count", "num_experts_per_tok": "expert_used_count"}
    ),
    "granite": _Arch("granite"),
    "granitemoe": _Arch("granitemoe", _EXPERTS),
    "starcoder2": _Arch("starcoder2"),
    "stablelm": _Arch("stablelm"),
    "exaone4": _Arch("exaone4"),  # 64 layers: three sliding layers of four (below)
    "smollm3": _Arch("smollm3", fixed={"use_sliding_window": False}),
    "glm4": _Arch("glm4"),
    "glm4moe": _Arch(
        "glm4_moe",
        {
            "n_routed_experts": "expert_count",
            "num_experts_per_tok": "expert_used_count",
            "moe_intermediate_size": "expert_feed_forward_length",
            "n_shared_experts": "expert_shared_count",
            "first_k_dense_replace": "leading_dense_block_count",
        },
    ),
    "seed_oss": _Arch("seed_oss"),
    "ernie4_5": _Arch("ernie4_5"),
    # Gemma-3n: four sliding layers of five, and the layers after llama.cpp's first 20 share
    # an earlier one's KV (_attention); Llama 4: chunked attention (_llama4).
    "gemma3n": _Arch("gemma3n_text", sliding=_Sliding(5)),
    "llama4": _Arch(
        "llama4_text",
        {
            "num_local_experts": "expert_count",
            "num_experts_per_tok": "expert_used_count",
            "intermediate_size": "expert_feed_forward_length",
            "intermediate_size_mlp": "feed_forward_length",
            "interleave_moe_layer_step": "interleave_moe_layer_step",
        },
    ),
}


LLAMA_CPP: Final = "llama.cpp"


class _State(NamedTuple):
    """An architecture whose layers keep a recurrent or convolution state in llama.cpp
    (llm_arch_is_recurrent / llm_arch_is_hybrid, src/llama-arch.cpp), and how load_hparams
    (src/llama-model.cpp at the pinned commit) tells which layers: `recurrent` is "all"
    (recurrent_layer_arr all true), "no_kv_heads" (a layer is recurrent iff its
    head_count_kv is 0) or "three_of_four" (Qwen3-Next: iff (il + 1) % 4 != 0, a constant);
    `attention`: which layers hold a KV ("others": the non-recurrent ones, the hybrid memory's
    default filter; "all": Falcon-H1's; "none": a purely recurrent model)."""

    model_type: str  # the Transformers family whose layer rules apply
    recurrent: str
    attention: str
    kind: str  # Transformers' kind of a recurrent layer
    group_count: bool = False  # load_hparams reads ssm.group_count (else ssm_n_group stays 0)
    shortconv: bool = False  # LFM2: shortconv.l_cache instead of the ssm.* sizes


_STATES: Final = {
    "mamba": _State("mamba", "all", "none", LINEAR),
    "mamba2": _State("mamba2", "all", "none", LINEAR, group_count=True),
    "jamba": _State("jamba", "no_kv_heads", "others", LINEAR),
    "falcon-h1": _State("falcon_h1", "all", "all", HYBRID, group_count=True),
    "granitehybrid": _State("granitemoehybrid", "no_kv_heads", "others", LINEAR, group_count=True),
    "qwen3next": _State("qwen3_next", "three_of_four", "others", LINEAR, group_count=True),
    "lfm2": _State("lfm2", "no_kv_heads", "others", CONV, shortconv=True),
}
_QWEN3NEXT_INTERVAL: Final = 4  # load_hparams: "TODO: extract the magic 4"


# What each architecture's cache follows, for the supported-families page
# (iteragpu.docs_tools.families_page): Transformers' layout; llama.cpp's own states; llama.cpp's
# MLA cache; a chunk, a sliding pattern or KV-holding layers that llama.cpp fixes itself.
_ALSO_READ_AS: Final = {
    "llama": ("mixtral",),
    "olmo2": ("olmo3",),
    "deepseek2": ("deepseek_v3",),
}
_FIXED_BY_LLAMA_CPP: Final = {"deepseek2": "mla", "llama4": "chunked", "gemma3n": "shared_kv"}


def architectures() -> list[tuple[str, tuple[str, ...], str]]:
    """Every GGUF architecture read here: its name, the Transformers families whose layer rules
    apply, and what its cache follows (`transformers`, `states`, `mla`, `chunked`, `shared_kv`,
    `sliding_pattern`)."""
    found = []
    for arch, row in _ARCHITECTURES.items():
        rule = _FIXED_BY_LLAMA_CPP.get(arch)
        if rule is None:
            fixed = row.sliding is not None or arch in ("olmo2", "exaone4")
            rule = "sliding_pattern" if fixed else "transformers"
        found.append((arch, (row.model_type, *_ALSO_READ_AS.get(arch, ())), rule))
    found += [(arch, (state.model_type,), "states") for arch, state in _STATES.items()]
    return found


def open_gguf(path: Path) -> GGUFReader:
    """The file's reader (tensor data stays on disk, memory-mapped and never touched)."""
    try:
        with path.open("rb") as stream:
            magic = stream.read(len(MAGIC))
    except OSError as error:
        raise GgufError(
            "{path}: cannot be read (system error {code})",
            "unreadable",
            path=str(path),
            code=system_error_code(error),
        ) from None
    if magic != MAGIC:
        raise GgufError(
            "{path}: not a GGUF file (starts with {magic}, expected b'GGUF')",
            "gguf_magic",
            path=str(path),
            magic=repr(magic),
        )
    try:
        from gguf import GGUFReader
    except ImportError:
        raise GgufError(
            "{path}: reading a GGUF file needs the gguf library: {hint}",
            "gguf_missing",
            path=str(path),
            hint=EXTRA_HINT,
        ) from None
    try:
        return GGUFReader(path)
    except (ValueError, IndexError, KeyError, OverflowError, TypeError, OSError) as error:
        # numpy reports a short file as a failed reshape or read past the end: say truncated.
        raise GgufError(
            "{path}: not a readable GGUF file, truncated or malformed ({detail})",
            "gguf_malformed",
            path=str(path),
            # The exception's kind, not its English text (numpy's wording).
            detail=type(error).__name__,
        ) from None


def read_inventory(path: Path, reader: GGUFReader) -> WeightsInventory:
    """The file's tensors grouped by format and ggml type, with exact bytes."""
    size = path.stat().st_size

    def rows() -> list[tuple[str, str, int, int]]:
        found = []
        for tensor in reader.tensors:
            if tensor.data_offset + tensor.n_bytes > size:
                raise GgufError(
                    "{path}: tensor {name!r} ends past the end of the file (truncated)",
                    "truncated",
                    path=str(path),
                    name=tensor.name,
                )
            dtype = tensor.tensor_type.name
            if is_quantization_metadata(tensor.name):
                fmt = QUANTIZATION_METADATA
            elif dtype in _FLOAT_TYPES:
                fmt = FLOAT
            elif dtype in _INTEGER_TYPES:
                fmt = INTEGER
            else:
                fmt = QUANTIZED_BLOCKS
            found.append((fmt, dtype, int(tensor.n_elements), int(tensor.n_bytes)))
        return found

    return WeightsInventory("gguf", (str(path),), group_tensors(rows()))


def read_config(path: Path, reader: GGUFReader) -> ModelConfig:
    """The file's model as a config, with what llama.cpp allocates where it differs from
    Transformers' cache (`ModelConfig.runtime`)."""
    raw, runtime = _translate(path, reader)
    config = parse_config(raw, str(path))
    fields = {name: getattr(config, name) for name in config._fields}
    return ModelConfig(**{**fields, "runtime": runtime})


def config_from_metadata(path: Path, reader: GGUFReader) -> dict[str, Any]:
    """The file's attention layout as the keys of a Hugging Face config.json."""
    return _translate(path, reader)[0]


def _translate(path: Path, reader: GGUFReader) -> tuple[dict[str, Any], RuntimeCache]:
    arch = _field(reader, "general.architecture")
    known = {**_ARCHITECTURES, **_STATES}
    if not isinstance(arch, str) or arch not in known:
        raise UnsupportedModelError(
            "{path}: GGUF architecture {arch!r}: how its metadata describes the KV cache is not "
            "known here (known: {known}); give the model's config.json instead",
            "gguf_architecture",
            path=str(path),
            arch=str(arch),
            known=", ".join(known),
        )
    read = _Metadata(path, reader, arch)
    if arch in _STATES:
        return _recurrent(read, _STATES[arch])
    if arch == "deepseek2":
        return _deepseek2(read)
    return _attention(read, _ARCHITECTURES[arch]), RuntimeCache(LLAMA_CPP)


def _attention(read: _Metadata, row: _Arch) -> dict[str, Any]:
    """An attention-only architecture's config (llama.cpp's KV is Transformers' layout)."""
    arch = read.arch
    model_type = row.model_type
    config: dict[str, Any] = {}
    for key, name in {**_ATTENTION, **row.keys}.items():
        if key in ("num_attention_heads", "num_key_value_heads"):
            config[key] = read.uniform(name)
        elif key != "head_dim":
            config[key] = read.count(name)
    config["head_dim"] = _head_dim(read)
    layers = config["num_hidden_layers"]
    sliding = row.sliding
    if arch == "llama" and config.get("num_local_experts"):
        model_type = "mixtral"  # convert_hf_to_gguf.py writes Mixtral as llama with experts
    elif arch == "olmo2" and read.field("attention.sliding_window"):
        # llama.cpp: a window above 0 slides three layers of four (Olmo-3, converted as olmo2).
        model_type, sliding = "olmo3", _Sliding(4)
    elif arch == "exaone4" and layers == 64:
        sliding = _Sliding(4, 4096)  # llama.cpp: only EXAONE-4.0-32B slides (window 4096)
    elif arch == "glm4moe":
        # The next-token-prediction layers are blocks without a KV cache in llama.cpp
        # (n_layer_kv_from_start), and no layers of the Transformers model.
        nextn = read.count("nextn_predict_layers") or 0
        if isinstance(layers, int) and 0 < nextn < layers:
            config["num_hidden_layers"] = layers - nextn
            config["num_nextn_predict_layers"] = nextn
    config = {key: value for key, value in config.items() if value is not None}
    config.update(row.fixed)
    if arch == "llama4":
        config.update(_llama4(read, config.get("num_hidden_layers")))
    elif sliding is None:
        config["sliding_window"] = None  # llama.cpp slides no layer of this file
    else:
        config.update(_sliding_keys(read, sliding, config.get("num_hidden_layers")))
    if arch == "gemma3n" and isinstance(layers, int):
        # llama.cpp (load_hparams, LLM_ARCH_GEMMA3N) sets n_layer_kv_from_start = 20 whatever
        # the file says: layers from the 21st on reuse the KV of layer 18 (sliding) or 19
        # (full) and hold none (create_memory's `reuse`), as Transformers' shared layers.
        config["num_kv_shared_layers"] = max(0, layers - _GEMMA3N_KV_LAYERS)
    return {"model_type": model_type, **config}


# llama.cpp's own constants for two architectures (src/llama-model.cpp at the pinned commit,
# load_hparams): Llama 4's chunk and pattern, Gemma-3n's layers that hold a KV.
_LLAMA4_CHUNK: Final = 8192
_LLAMA4_PERIOD: Final = 4
_GEMMA3N_KV_LAYERS: Final = 20


def _llama4(read: _Metadata, layers: Any) -> dict[str, Any]:
    """Llama 4's layers as llama.cpp lays them out (load_hparams, LLM_ARCH_LLAMA4): a file
    whose `sliding_window` is 0 attends fully on every layer; any other (or none) gets chunked
    attention of 8192 tokens on three layers of four (set_swa_pattern(4), LLAMA_SWA_TYPE_CHUNKED),
    the fourth full: Transformers' default layout (attention_chunk_size 8192, a NoPE full layer
    every fourth), whatever chunk the file states."""
    window = read.field("attention.sliding_window")
    if not isinstance(layers, int) or layers <= 0:
        return {}  # parse_config refuses the missing layer count
    count = min(layers, MAX_LAYERS)
    if window == 0:
        return {"attention_chunk_size": None, "layer_types": [FULL] * count}
    period = _LLAMA4_PERIOD
    kinds = [CHUNKED if il % period < period - 1 else FULL for il in range(count)]
    return {"attention_chunk_size": _LLAMA4_CHUNK, "layer_types": kinds}


def _sliding_keys(read: _Metadata, sliding: _Sliding, layers: Any) -> dict[str, Any]:
    """llama.cpp's sliding layers as the Hugging Face keys `sliding_window` and `layer_types`."""
    window = read.field("attention.sliding_window")
    if window is None:
        window = sliding.default
    if not isinstance(window, int) or window <= 0:
        raise ConfigError(
            "{where}: no {key}: the attention layout cannot be read without it",
            "missing_key",
            where=str(read.path),
            key=f"{read.arch}.attention.sliding_window",
        )
    if not isinstance(layers, int) or layers <= 0:
        return {"sliding_window": window}  # parse_config refuses the missing layer count
    period = sliding.period
    slides = [il % period < period - 1 for il in range(min(layers, MAX_LAYERS))]
    stated = read.field("attention.sliding_window_pattern")
    if stated is not None and stated != period and stated != slides:
        # The pinned llama.cpp sets this architecture's pattern itself and reads no such key:
        # a file that states another one is not what it runs.
        raise ConfigError(
            "{where}: {key} does not agree with the family's other sizes ({rule})",
            "bad_key",
            where=str(read.path),
            key=f"{read.arch}.attention.sliding_window_pattern",
            rule=f"llama.cpp: layer il slides when il % {period} < {period - 1}",
        )
    kinds = [SLIDING if slide else FULL for slide in slides]
    return {"sliding_window": window, "layer_types": kinds}


def _deepseek2(read: _Metadata) -> tuple[dict[str, Any], RuntimeCache]:
    """DeepSeek-V2/V3's multi-head latent attention, as the converter writes it.

    convert_hf_to_gguf.py (DeepseekV2Model) writes MLA as one KV head of
    key_length = kv_lora_rank + qk_rope_head_dim and value_length = kv_lora_rank (what
    llama.cpp caches: the latent and the shared rotary key), the per-head sizes as
    key_length_mla = qk_nope_head_dim + qk_rope_head_dim and value_length_mla = v_head_dim, and
    rope.dimension_count = qk_rope_head_dim. Older files have no *_mla keys: their key_length and
    value_length are the per-head sizes.
    """
    heads = read.uniform("attention.head_count")
    kv_heads = read.uniform("attention.head_count_kv")
    rank = read.required("attention.kv_lora_rank")
    rope = read.required("rope.dimension_count")
    key_mla = read.field("attention.key_length_mla")
    value_mla = read.field("attention.value_length_mla")
    if key_mla is not None or value_mla is not None:
        key, value = (
            read.required("attention.key_length_mla"),
            read.required("attention.value_length_mla"),
        )
        latent = (read.field("attention.key_length"), read.field("attention.value_length"))
        if latent != (rank + rope, rank) or kv_heads != 1:
            raise ConfigError(
                "{where}: {key} does not agree with the family's other sizes ({rule})",
                "bad_key",
                where=str(read.path),
                key=f"{read.arch}.attention.key_length",
                rule="MLA: kv_lora_rank + rope keys, kv_lora_rank values, one KV head",
            )
    else:
        key, value = read.required("attention.key_length"), read.required("attention.value_length")
    if key <= rope:
        raise ConfigError(
            "{where}: {key} does not agree with the family's other sizes ({rule})",
            "bad_key",
            where=str(read.path),
            key=f"{read.arch}.attention.key_length_mla",
            rule="qk_nope_head_dim + qk_rope_head_dim, above rope.dimension_count",
        )
    if key_mla is not None:
        # The pinned llama.cpp caches MLA as one KV head (llm_build_deepseek2: Kcur = the rotary
        # key and the latent, Vcur = the latent, both stored through build_attn_inp_kv): keys of
        # key_length = kv_lora_rank + rope and values of value_length = kv_lora_rank. The
        # V-less cache (hparams.is_mla(), ggml-org/llama.cpp#19067) came after it.
        kv = (MLA_LATENT_KV, 1, rank + rope, rank)
    else:
        # An older file: llama.cpp runs plain attention over the expanded keys and values,
        # head_count_kv heads of key_length and value_length (MHA, "without the absorption").
        kv = (MLA_PER_HEAD, kv_heads or heads or 0, key, value)
    gating = read.field("expert_gating_func")
    config = {
        # llama.cpp tells DeepSeek-V3's sigmoid router from V2's softmax one (absent: V2).
        "model_type": "deepseek_v3" if gating == _SIGMOID_GATING else "deepseek_v2",
        "num_hidden_layers": read.count("block_count"),
        "hidden_size": read.count("embedding_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": heads,  # as DeepSeek's configs state; MLA layouts do not read it
        "kv_lora_rank": rank,
        "q_lora_rank": read.field("attention.q_lora_rank"),  # absent: none (V2-Lite)
        "qk_rope_head_dim": rope,
        "qk_nope_head_dim": key - rope,
        "v_head_dim": value,
        "intermediate_size": read.count("feed_forward_length"),
        "n_routed_experts": read.count("expert_count"),
        "num_experts_per_tok": read.count("expert_used_count"),
        "n_shared_experts": read.count("expert_shared_count"),
        "moe_intermediate_size": read.count("expert_feed_forward_length"),
        "first_k_dense_replace": read.count("leading_dense_block_count"),
    }
    raw = {k: v for k, v in config.items() if v is not None or k == "q_lora_rank"}
    return raw, RuntimeCache(LLAMA_CPP, kv=kv)


def _recurrent(read: _Metadata, row: _State) -> tuple[dict[str, Any], RuntimeCache]:
    """A recurrent or hybrid architecture: its layers' kinds, the attention layers' KV as the
    Transformers family's, and each recurrent layer's states as llama.cpp allocates them.

    llama.cpp keeps, per recurrent layer and sequence, one `r` row of n_embd_r() and one `s`
    row of n_embd_s() values (llama_memory_recurrent: r_l, s_l of mem_size = max(1, n_seq_max)
    rows), both GGML_TYPE_F32 (create_memory passes F32, F32 for the recurrent and the hybrid
    memory): llama_hparams::n_embd_r() = (ssm_d_conv - 1) * (ssm_d_inner + 2 * ssm_n_group *
    ssm_d_state), or n_embd * (shortconv.l_cache - 1) for LFM2; n_embd_s() = ssm_d_state *
    ssm_d_inner (src/llama-hparams.cpp). Transformers keeps conv_kernel positions of the
    convolution, in the model's dtype.
    """
    layers = read.required("block_count")
    if layers > MAX_LAYERS:
        raise ConfigError(
            "{where}: num_hidden_layers must be at most 100000, got {value}",
            "bad_key",
            where=str(read.path),
            key="num_hidden_layers",
            value=str(layers),
        )
    hidden = read.required("embedding_length")
    kv_heads = _per_layer(read, "attention.head_count_kv", layers)
    heads = _per_layer(read, "attention.head_count", layers)
    if kv_heads is None:
        kv_heads = heads  # llama.cpp: "n_head_kv is optional, default to n_head"
    if row.recurrent == "all":
        recurrent = [True] * layers
    elif row.recurrent == "three_of_four":
        interval = read.field("full_attention_interval")
        if interval is not None and interval != _QWEN3NEXT_INTERVAL:
            # The pinned llama.cpp fixes the interval and reads no such key: a file that
            # states another one is not what it runs.
            raise ConfigError(
                "{where}: {key} does not agree with the family's other sizes ({rule})",
                "bad_key",
                where=str(read.path),
                key=f"{read.arch}.full_attention_interval",
                rule="llama.cpp: layer il is recurrent when (il + 1) % 4 != 0",
            )
        recurrent = [(il + 1) % _QWEN3NEXT_INTERVAL != 0 for il in range(layers)]
    else:
        recurrent = [(kv_heads or [0] * layers)[il] == 0 for il in range(layers)]
    attends = {
        "all": [True] * layers,
        "none": [False] * layers,
        "others": [not r for r in recurrent],
    }[row.attention]
    config: dict[str, Any] = {
        "model_type": row.model_type,
        "num_hidden_layers": layers,
        "hidden_size": hidden,
    }
    if any(attends):
        attention_heads = _attention_count(read, "attention.head_count", heads, attends)
        kv = _attention_count(read, "attention.head_count_kv", kv_heads, attends)
        head_dim = _head_dim(read)
        config |= {
            "num_attention_heads": attention_heads,
            "num_key_value_heads": kv,
            # absent: n_embd / n_head, as llama.cpp
            "head_dim": head_dim if head_dim is not None else hidden // attention_heads,
        }
    if row.shortconv:
        l_cache = read.required("shortconv.l_cache")
        conv_rows, state_values = hidden * (l_cache - 1), 0
        config["conv_L_cache"] = l_cache
    else:
        d_conv = read.required("ssm.conv_kernel")
        d_inner = read.required("ssm.inner_size")
        d_state = read.required("ssm.state_size")
        dt_rank = read.required("ssm.time_step_rank")
        groups = read.required("ssm.group_count") if row.group_count else 0
        conv_rows = (d_conv - 1) * (d_inner + 2 * groups * d_state)
        state_values = d_state * d_inner
        config |= _ssm_keys(read, row.model_type, hidden, d_conv, d_inner, d_state, dt_rank, groups)
    if row.recurrent == "no_kv_heads":
        # llama.cpp's per-layer rule, as the layer_types Transformers reads.
        config["layer_types"] = [row.kind if r else FULL for r in recurrent]
    ffn = read.count("feed_forward_length")
    if ffn and row.attention != "none":  # Mamba's converter writes 0; its width is d_inner
        config["intermediate_size"] = ffn
    config |= _experts(read, row.model_type)
    tensors = [StateTensor("cache_r_l", conv_rows, True)] if conv_rows else []
    if state_values:
        tensors.append(StateTensor("cache_s_l", state_values, True))
    runtime = RuntimeCache(LLAMA_CPP, states=((row.kind, tuple(tensors)),))
    return config, runtime


def _per_layer(read: _Metadata, name: str, layers: int) -> list[int] | None:
    """A count llama.cpp reads per layer (get_key_or_arr): the file's array, or its one value
    for every layer; None where absent."""
    value = read.field(name)
    if value is None:
        return None
    values = value if isinstance(value, list) else [value] * layers
    if len(values) != layers or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values
    ):
        raise ConfigError(
            "{where}: {key} does not agree with the family's other sizes ({rule})",
            "bad_key",
            where=str(read.path),
            key=f"{read.arch}.{name}",
            rule=f"len = 1 or block_count ({layers})",
        )
    return [int(v) for v in values]


def _attention_count(
    read: _Metadata, name: str, values: list[int] | None, attends: list[bool]
) -> int:
    """The one count every attention layer has (llama.cpp reads it per layer)."""
    found = {v for v, a in zip(values or [], attends, strict=False) if a}
    if not values or 0 in found:
        raise ConfigError(
            "{where}: no {key}: the attention layout cannot be read without it",
            "missing_key",
            where=str(read.path),
            key=f"{read.arch}.{name}",
        )
    if len(found) != 1:
        raise UnsupportedModelError(
            "{path}: {key} differs between layers: a per-layer head count is not known here",
            "gguf_layout",
            path=str(read.path),
            key=f"{read.arch}.{name}",
        )
    return found.pop()


def _head_dim(read: _Metadata) -> int | None:
    key_length = read.field("attention.key_length")
    value_length = read.field("attention.value_length")
    if key_length is not None and value_length is not None and key_length != value_length:
        raise UnsupportedModelError(
            "{path}: keys of {key} and values of {value} values per head: this layout is not "
            "known here",
            "gguf_layout",
            path=str(read.path),
            key=str(key_length),
            value=str(value_length),
        )
    found = key_length if key_length is not None else value_length
    return found if isinstance(found, int) else None


def _ssm_keys(
    read: _Metadata,
    model_type: str,
    hidden: int,
    d_conv: int,
    d_inner: int,
    d_state: int,
    dt_rank: int,
    groups: int,
) -> dict[str, Any]:
    """The SSM sizes in the Transformers family's keys, as convert_hf_to_gguf.py writes them:
    ssm.inner_size is the mixer's width, ssm.time_step_rank Mamba-1's dt rank or the SSM heads
    (Mamba-2 mixers: d_inner // head_dim; Qwen3-Next: linear_num_value_heads), ssm.group_count
    the groups (Qwen3-Next: linear_num_key_heads), ssm.state_size the state (Qwen3-Next:
    linear_key_head_dim)."""
    if dt_rank <= 0 or d_inner % dt_rank:
        raise ConfigError(
            "{where}: {key} does not agree with the family's other sizes ({rule})",
            "bad_key",
            where=str(read.path),
            key=f"{read.arch}.ssm.time_step_rank",
            rule="ssm.inner_size % ssm.time_step_rank == 0",
        )
    head = d_inner // dt_rank
    expand = d_inner // hidden if d_inner % hidden == 0 else d_inner / hidden
    if model_type == "mamba":
        return {
            "intermediate_size": d_inner,
            "expand": expand,
            "state_size": d_state,
            "conv_kernel": d_conv,
            "time_step_rank": dt_rank,
        }
    if model_type == "mamba2":
        return {
            "expand": expand,
            "num_heads": dt_rank,
            "head_dim": head,
            "state_size": d_state,
            "conv_kernel": d_conv,
            "n_groups": groups,
        }
    if model_type == "jamba":
        return {
            "mamba_expand": expand,
            "mamba_d_state": d_state,
            "mamba_d_conv": d_conv,
            "mamba_dt_rank": dt_rank,
        }
    if model_type == "qwen3_next":
        return {
            "full_attention_interval": _QWEN3NEXT_INTERVAL,
            "linear_conv_kernel_dim": d_conv,
            "linear_key_head_dim": d_state,
            "linear_num_key_heads": groups,
            "linear_num_value_heads": dt_rank,
            "linear_value_head_dim": head,
        }
    # Falcon-H1 and Granite-4.0-H (Bamba's Mamba-2 mixer).
    keys = {
        "mamba_n_heads": dt_rank,
        "mamba_d_head": head,
        "mamba_n_groups": groups,
        "mamba_d_state": d_state,
        "mamba_d_conv": d_conv,
        "mamba_expand": expand,
    }
    if model_type == "falcon_h1":
        keys["mamba_d_ssm"] = d_inner
    return keys


def _experts(read: _Metadata, model_type: str) -> dict[str, Any]:
    """The expert counts in the Transformers family's keys (they shape no cache)."""
    count, used = read.count("expert_count"), read.count("expert_used_count")
    if not count:
        return {"num_local_experts": 0} if model_type == "granitemoehybrid" else {}
    names = {
        "jamba": ("num_experts", "num_experts_per_tok"),
        "granitemoehybrid": ("num_local_experts", "num_experts_per_tok"),
        "qwen3_next": ("num_experts", "num_experts_per_tok"),
    }.get(model_type)
    if names is None:
        return {}
    found = {names[0]: count, names[1]: used}
    width = read.count("expert_feed_forward_length")
    shared = read.count("expert_shared_feed_forward_length")
    if model_type == "qwen3_next":
        found |= {"moe_intermediate_size": width, "shared_expert_intermediate_size": shared}
    elif model_type == "granitemoehybrid":
        found |= {"shared_intermediate_size": shared}
    return {k: v for k, v in found.items() if v is not None}


class _Metadata:
    """Reads of one file's `{arch}.` keys."""

    def __init__(self, path: Path, reader: GGUFReader, arch: str) -> None:
        self.path = path
        self.reader = reader
        self.arch = arch

    def field(self, name: str) -> Any:
        return _field(self.reader, f"{self.arch}.{name}")

    def uniform(self, name: str) -> int | None:
        return _uniform(self.path, self.reader, f"{self.arch}.{name}")

    def count(self, name: str) -> int | None:
        """A count that does not shape the KV: None where absent or differing per layer."""
        value = self.field(name)
        if isinstance(value, list):
            value = value[0] if value and len(set(value)) == 1 else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def required(self, name: str) -> int:
        value = self.field(name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConfigError(
                "{where}: no {key}: the attention layout cannot be read without it",
                "missing_key",
                where=str(self.path),
                key=f"{self.arch}.{name}",
            )
        return value


def _field(reader: GGUFReader, key: str) -> Any:
    field = reader.get_field(key)
    if field is None:
        return None
    value = field.contents()
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _uniform(path: Path, reader: GGUFReader, key: str) -> int | None:
    """A count that llama.cpp may store per layer: the same for every layer, or refused."""
    value = _field(reader, key)
    if isinstance(value, list):
        if len(set(value)) != 1:
            raise UnsupportedModelError(
                "{path}: {key} differs between layers: a per-layer head count is not known here",
                "gguf_layout",
                path=str(path),
                key=key,
            )
        return int(value[0])
    return value if isinstance(value, int) else None


def training_context(path: Path) -> int | None:
    """`{arch}.context_length`: the context the model was trained with (llama.cpp's
    `n_ctx_train`, which `-c 0` takes), or None when the file does not state it."""
    reader = open_gguf(path)
    arch = _field(reader, "general.architecture")
    value = _field(reader, f"{arch}.context_length") if isinstance(arch, str) else None
    return value if isinstance(value, int) and value > 0 else None
