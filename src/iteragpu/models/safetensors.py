"""safetensors headers read with the standard library, never a byte of tensor data.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON naming each
tensor's dtype, shape and `data_offsets` within the data that follows, then the data. Every
offset is checked against the file's size and every byte count against dtype x shape, so a
truncated or inconsistent file is refused on one line instead of miscounted. A sharded model's
`model.safetensors.index.json` maps each tensor to its shard; every shard it names must exist.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Final, TypeGuard

from iteragpu.core.records import Record
from iteragpu.models.errors import (
    HeaderError,
    MissingShardError,
    UnknownDtypeError,
    system_error_code,
)
from iteragpu.models.quantized import MAX_STATE_BYTES, quantization_config, read_layout
from iteragpu.models.tensors import (
    FLOAT,
    INTEGER,
    QUANTIZATION_METADATA,
    WeightsInventory,
    group_tensors,
    is_quantization_metadata,
)

INDEX_NAME: Final = "model.safetensors.index.json"
SINGLE_NAME: Final = "model.safetensors"
_LENGTH_BYTES: Final = 8
# The safetensors library refuses headers above 100 MB; so does this reader (no JSON that size
# describes real tensors, and reading it would defeat "headers only").
MAX_HEADER_BYTES: Final = 100_000_000

# Bits per element of each dtype the safetensors format defines (F4 packs two values per byte,
# F6 four values in three bytes: the header's shape counts values, not bytes).
DTYPE_BITS: Final[dict[str, int]] = {
    "F64": 64,
    "F32": 32,
    "F16": 16,
    "BF16": 16,
    "F8_E4M3": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2": 8,
    "F8_E5M2FNUZ": 8,
    "F8_E8M0": 8,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "F4": 4,
    "C64": 64,
    "I64": 64,
    "I32": 32,
    "I16": 16,
    "I8": 8,
    "U64": 64,
    "U32": 32,
    "U16": 16,
    "U8": 8,
    "BOOL": 8,
}
_INTEGER_DTYPES: Final = frozenset({"I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL"})


class TensorHeader(Record):
    name: str
    dtype: str
    shape: tuple[int, ...]
    byte_count: int
    start: int = 0  # where its data begins in the file (bytes from the file's start)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def format(self) -> str:
        if is_quantization_metadata(self.name):
            return QUANTIZATION_METADATA
        return INTEGER if self.dtype in _INTEGER_DTYPES else FLOAT


def read_header(path: Path) -> dict[str, TensorHeader]:
    """The tensors a safetensors file declares, checked against its size; no data is read."""
    try:
        size = path.stat().st_size
        with path.open("rb") as stream:
            prefix = stream.read(_LENGTH_BYTES)
            if len(prefix) < _LENGTH_BYTES:
                raise _error(path, "only {size} bytes, no header length", "truncated", size)
            length = int.from_bytes(prefix, "little")
            if length > size - _LENGTH_BYTES:
                raise _error(
                    path,
                    "header length {length} is larger than the file ({size} bytes)",
                    "header_too_long",
                    size,
                    length=str(length),
                )
            if length > MAX_HEADER_BYTES:
                raise _error(
                    path,
                    "header length {length} is over the format's 100 MB limit",
                    "header_too_long",
                    size,
                    length=str(length),
                )
            raw = stream.read(length)
    except FileNotFoundError:
        raise MissingShardError("{path}: no such file", "missing_file", path=str(path)) from None
    except OSError as error:
        raise HeaderError(
            "{path}: cannot be read (system error {code})",
            "unreadable",
            path=str(path),
            code=system_error_code(error),
        ) from None
    if len(raw) < length:  # the file shrank while being read
        raise _error(path, "header cut short", "truncated", size)
    return _parse_header(path, raw, size - _LENGTH_BYTES - length, _LENGTH_BYTES + length)


def _parse_header(
    path: Path, raw: bytes, data_bytes: int, data_start: int = 0
) -> dict[str, TensorHeader]:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise _error(path, "header is not valid JSON", "header_not_json") from None
    if not isinstance(header, dict):
        raise _error(path, "header is not a JSON object", "header_not_json")
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _tensor(path, name, entry, data_bytes, data_start)
    return tensors


def _tensor(
    path: Path, name: str, entry: Any, data_bytes: int, data_start: int = 0
) -> TensorHeader:
    if not isinstance(entry, dict):
        raise _error(path, "tensor {name!r} is not described by an object", "bad_tensor", name=name)
    dtype: Any = entry.get("dtype")
    shape: Any = entry.get("shape")
    offsets: Any = entry.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise UnknownDtypeError(
            "{path}: tensor {name!r} has unknown dtype {dtype} (known: {known})",
            "unknown_dtype",
            path=str(path),
            name=name,
            dtype=json.dumps(dtype)[:40],
            known=", ".join(DTYPE_BITS),
        )
    if not _whole_numbers(shape):
        raise _error(path, "tensor {name!r} has no valid shape", "bad_tensor", name=name)
    if not _whole_numbers(offsets) or len(offsets) != 2 or offsets[0] > offsets[1]:
        raise _error(path, "tensor {name!r} has no valid data_offsets", "bad_tensor", name=name)
    if offsets[1] > data_bytes:
        raise _error(
            path,
            "tensor {name!r} ends at byte {end}, past the file's {data} bytes of data",
            "truncated",
            name=name,
            end=str(offsets[1]),
            data=str(data_bytes),
        )
    bits = math.prod(shape) * DTYPE_BITS[dtype]
    if bits != 8 * (offsets[1] - offsets[0]):
        raise _error(
            path,
            "tensor {name!r}: {dtype} x {shape} is {expected} bits; its offsets hold {held} bytes",
            "size_mismatch",
            name=name,
            dtype=dtype,
            shape=str(shape),
            expected=str(bits),
            held=str(offsets[1] - offsets[0]),
        )
    return TensorHeader(name, dtype, tuple(shape), offsets[1] - offsets[0], data_start + offsets[0])


def _whole_numbers(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    )


def _error(
    path: Path, detail: str, reason: str, size: int | None = None, **values: str
) -> HeaderError:
    sized = {"size": str(size)} if size is not None else {}
    return HeaderError("{path}: " + detail, reason, path=str(path), **sized, **values)


class SafetensorsFiles(Record):
    """The files that hold a model, and the index's tensor-to-shard map when sharded."""

    files: tuple[Path, ...]
    index: Path | None = None
    weight_map: dict[str, str] | None = None


def weight_files(folder: Path) -> SafetensorsFiles | None:
    """The safetensors files that hold a folder's model, or None when it has none.

    The index's shards when `model.safetensors.index.json` exists; else `model.safetensors`;
    else the folder's only `.safetensors` file. Several files and no index is ambiguous
    (Mistral's folders hold the same weights twice, as shards and as `consolidated`): refused.
    """
    index = folder / INDEX_NAME
    if index.exists():
        return _index_shards(index)
    if (folder / SINGLE_NAME).is_file():
        return SafetensorsFiles((folder / SINGLE_NAME,))
    found = sorted(folder.glob("*.safetensors"))
    if len(found) > 1:
        raise HeaderError(
            "{path}: {count} .safetensors files and no {index}: which of them form the model "
            "is ambiguous",
            "ambiguous_files",
            path=str(folder),
            count=str(len(found)),
            index=INDEX_NAME,
        )
    return SafetensorsFiles(tuple(found)) if found else None


def _index_shards(index: Path) -> SafetensorsFiles:
    try:
        raw = json.loads(index.read_text("utf-8"))
    except (OSError, UnicodeError, json.JSONDecodeError, RecursionError):
        raise HeaderError(
            "{path}: not a readable JSON index", "bad_index", path=str(index)
        ) from None
    weight_map = raw.get("weight_map") if isinstance(raw, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise HeaderError(
            "{path}: no weight_map of tensor names to shard files", "bad_index", path=str(index)
        )
    shards = []
    for name in dict.fromkeys(weight_map.values()):
        # A shard is a file of the model's folder: a name that climbs out of it is refused.
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise HeaderError(
                "{path}: shard name {shard!r} leaves the model's folder",
                "bad_index",
                path=str(index),
                shard=name,
            )
        shard = index.parent / name
        if not shard.is_file():
            raise MissingShardError(
                "{path}: names shard {shard!r}, which is not in the folder",
                "missing_shard",
                path=str(index),
                shard=name,
            )
        shards.append(shard)
    if not shards:
        raise HeaderError("{path}: weight_map is empty", "bad_index", path=str(index))
    return SafetensorsFiles(tuple(shards), index, weight_map)


def read_inventory(found: SafetensorsFiles) -> WeightsInventory:
    """All tensors of the files, grouped by format and dtype, each header read once.

    A tensor name in two files, or an index naming a tensor its shard does not hold, is refused.
    Where the folder's config.json has a `quantization_config`, the tensors are also read with
    its scheme (`iteragpu.models.quantized`): roles, and the parameters the packing holds.
    """
    headers = {path: read_header(path) for path in found.files}
    owner: dict[str, Path] = {}
    for path, tensors in headers.items():
        for name in tensors:
            if name in owner:
                raise HeaderError(
                    "{path}: tensor {name!r} is also in {other}",
                    "duplicate_tensor",
                    path=str(path),
                    name=name,
                    other=str(owner[name]),
                )
            owner[name] = path
    if found.index is not None and found.weight_map is not None:
        for name, shard in found.weight_map.items():
            if owner.get(name) != found.index.parent / shard:
                raise HeaderError(
                    "{path}: names tensor {name!r} in {shard!r}, which does not hold it",
                    "index_mismatch",
                    path=str(found.index),
                    name=name,
                    shard=shard,
                )
    rows = (
        (t.format, t.dtype, t.elements, t.byte_count)
        for ts in headers.values()
        for t in ts.values()
    )
    groups = group_tensors(rows)
    files = tuple(str(p) for p in found.files)
    folder = found.index.parent if found.index is not None else found.files[0].parent
    config = quantization_config(folder)
    if config is None:
        return WeightsInventory("safetensors", files, groups)
    tensors = {name: t for ts in headers.values() for name, t in ts.items()}
    with _DataReader(owner, tensors) as read_data:
        layout = read_layout(config, tensors, read_data)
    return WeightsInventory("safetensors", files, groups, layout)


class _DataReader:
    """A few tensors' data by name (bitsandbytes' quant-state JSON: iteragpu.models.quantized
    asks for it), each file opened once; never a weight's data."""

    def __init__(self, owner: dict[str, Path], tensors: dict[str, TensorHeader]) -> None:
        self.owner = owner
        self.tensors = tensors
        self.opened: dict[Path, Any] = {}

    def __enter__(self) -> _DataReader:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in self.opened.values():
            stream.close()

    def __call__(self, name: str) -> bytes | None:
        tensor, path = self.tensors.get(name), self.owner.get(name)
        if tensor is None or path is None or tensor.byte_count > MAX_STATE_BYTES:
            return None
        try:
            stream = self.opened.get(path)
            if stream is None:
                stream = self.opened[path] = path.open("rb")
            stream.seek(tensor.start)
            data: bytes = stream.read(tensor.byte_count)
        except OSError:
            return None
        return data if len(data) == tensor.byte_count else None
