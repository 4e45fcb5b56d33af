"""GGUF files: tensor infos read with the `gguf` package (the `models` extra), no tensor data.

Each tensor's logical element count and its ggml type give its exact bytes (a quantized type's
blocks include their scales). The attention layout comes from the file's metadata, translated
into the keys of a Hugging Face config for the architectures whose llama.cpp metadata says all
the KV cache needs; any other architecture is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from iteragpu.models.config import FULL, MAX_LAYERS, SLIDING
from iteragpu.models.errors import (
    ConfigError,
    GgufError,
    UnsupportedModelError,
    system_error_code,
)
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
# rule (`_Sliding`). An architecture without a row is refused by name.
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
}


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


def config_from_metadata(path: Path, reader: GGUFReader) -> dict[str, Any]:
    """The file's attention layout as the keys of a Hugging Face config.json."""
    arch = _field(reader, "general.architecture")
    row = _ARCHITECTURES.get(arch) if isinstance(arch, str) else None
    if row is None:
        raise UnsupportedModelError(
            "{path}: GGUF architecture {arch!r}: how its metadata describes the KV cache is not "
            "known here (known: {known}); give the model's config.json instead",
            "gguf_architecture",
            path=str(path),
            arch=str(arch),
            known=", ".join(_ARCHITECTURES),
        )
    assert isinstance(arch, str)
    read = _Metadata(path, reader, arch)
    model_type = row.model_type
    if arch == "deepseek2":
        return _deepseek2(read)
    config: dict[str, Any] = {}
    for key, name in {**_ATTENTION, **row.keys}.items():
        if key in ("num_attention_heads", "num_key_value_heads"):
            config[key] = read.uniform(name)
        elif key != "head_dim":
            config[key] = read.count(name)
    key_length = read.field("attention.key_length")
    value_length = read.field("attention.value_length")
    if key_length is not None and value_length is not None and key_length != value_length:
        raise UnsupportedModelError(
            "{path}: keys of {key} and values of {value} values per head: this layout is not "
            "known here",
            "gguf_layout",
            path=str(path),
            key=str(key_length),
            value=str(value_length),
        )
    config["head_dim"] = key_length if key_length is not None else value_length
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
    if sliding is None:
        config["sliding_window"] = None  # llama.cpp slides no layer of this file
    else:
        config.update(_sliding_keys(read, sliding, config.get("num_hidden_layers")))
    return {"model_type": model_type, **config}


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


def _deepseek2(read: _Metadata) -> dict[str, Any]:
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
    return {k: v for k, v in config.items() if v is not None or k == "q_lora_rank"}


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
