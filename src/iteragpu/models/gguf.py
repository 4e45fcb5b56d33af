"""GGUF files: tensor infos read with the `gguf` package (the `models` extra), no tensor data.

Each tensor's logical element count and its ggml type give its exact bytes (a quantized type's
blocks include their scales). The attention layout comes from the file's metadata, translated
into the keys of a Hugging Face config for the architectures whose llama.cpp metadata says all
the KV cache needs; any other architecture is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from iteragpu.models.errors import GgufError, UnsupportedModelError, system_error_code
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
# llama.cpp architecture -> the Hugging Face family whose layer rules apply.
_FAMILIES: Final = {
    "llama": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3_text",
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
    family = _FAMILIES.get(arch) if isinstance(arch, str) else None
    if family is None:
        raise UnsupportedModelError(
            "{path}: GGUF architecture {arch!r}: how its metadata describes the KV cache is not "
            "known here (known: {known}); give the model's config.json instead",
            "gguf_architecture",
            path=str(path),
            arch=str(arch),
            known=", ".join(_FAMILIES),
        )
    key_length = _field(reader, f"{arch}.attention.key_length")
    value_length = _field(reader, f"{arch}.attention.value_length")
    if key_length is not None and value_length is not None and key_length != value_length:
        raise UnsupportedModelError(
            "{path}: keys of {key} and values of {value} values per head: this layout is not "
            "known here",
            "gguf_layout",
            path=str(path),
            key=str(key_length),
            value=str(value_length),
        )
    config: dict[str, Any] = {
        "model_type": family,
        "num_hidden_layers": _field(reader, f"{arch}.block_count"),
        "num_attention_heads": _uniform(path, reader, f"{arch}.attention.head_count"),
        "num_key_value_heads": _uniform(path, reader, f"{arch}.attention.head_count_kv"),
        "hidden_size": _field(reader, f"{arch}.embedding_length"),
        "head_dim": key_length,
        "sliding_window": _field(reader, f"{arch}.attention.sliding_window"),
    }
    if family in ("qwen2", "qwen3"):
        config["use_sliding_window"] = False  # llama.cpp runs them without a window
    return {key: value for key, value in config.items() if value is not None}


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
