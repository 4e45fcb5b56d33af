"""llama.cpp's split of a GGUF model over GPUs (its default `--split-mode layer`), read at commit
00342301d01add50835550e8a916f12097d94517 (the commit `iteragpu.models.gguf` pins), in
src/llama-model.cpp:

- `llama_model::load_tensors`: with `-ngl N` (`n_gpu_layers`) on a model of `n_layer` layers,
  `i_gpu_start = max(n_layer - N, 0)` and `act_gpu_layers = min(N, n_layer + 1)`; layer `il`
  (0..n_layer, where `il = n_layer` is the output layer: `output_norm`, `output`) is on a GPU
  when `i_gpu_start <= il < i_gpu_start + act_gpu_layers`. So `-ngl N <= n_layer` offloads the
  last N repeating layers and keeps the output layer on the host; the output layer is offloaded
  from `-ngl n_layer + 1` on: it counts as one layer;
- the GPU of an offloaded layer: the splits (`-ts`, else each device's free memory) are summed
  and normalised in `float`, and layer `il` goes to the first device whose cumulative share
  is above `float(il - i_gpu_start) / act_gpu_layers` (`std::upper_bound`);
- "there is very little benefit to offloading the input layer, so always keep it on the CPU":
  `token_embd` stays in host memory (`dev_input`), whatever `-ngl`;
- a tied model has no `output.weight`: `output` is `token_embd` loaded again
  (`TENSOR_DUPLICATED`) on the output layer's device, and a duplicated tensor is created once
  per buffer type (`rope_freqs`, per layer with `TENSOR_DUPLICATED` from layer 1 on: one copy
  on each device that holds a layer);
- `llama_model::create_memory`: unless `--kv-unified`, the context `-c` is cut into `-np`
  streams, `n_ctx_per_stream = ceil(n_ctx / n_seq_max)`, padded up to
  `llama_kv_cache::get_padding` (256 cells with flash attention, which `-fa auto`, the
  default, turns on at this step: `cparams.flash_attn = flash_attn_type != DISABLED`; 32
  with `-fa off`), and the cache holds `n_seq_max` streams of that many cells;
- each layer's K and V (`type_k`, `type_v`: `-ctk`/`-ctv`, default `f16`) are on its layer's
  device (`offload_kqv`, on by default): one row of `n_embd_k_gqa` values per cell, a row of a
  block type taking `ggml_row_size` = values / block x block bytes (q8_0: 34 bytes per 32
  values, q4_0: 18 per 32; ggml's type traits, as the gguf package's GGML_QUANT_SIZES list
  them).

`llama-kv-cache.cpp` and `llama-context.cpp` are not stored at the pinned commit in the sources
searched: `get_padding` (`return cparams.flash_attn ? 256u : 32u;`) and the per-layer device of
the cache were read in the versions the search holds. The later rule that offloads the output
layer first (`i_gpu_start = n_layer + 1 - N`) is not the pinned one.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

from iteragpu.models.config import FULL
from iteragpu.models.kv import PER_HEAD
from iteragpu.models.recipe import TensorSpec
from iteragpu.parallel.records import (
    DUPLICATED,
    WHOLE,
    RankPlan,
    SplitError,
    SplitModel,
    SplitPlan,
    SplitRequest,
)
from iteragpu.parallel.shares import Tally, refuse_states, weights_of

COMMIT: Final = "00342301d01add50835550e8a916f12097d94517"
RUNTIME: Final = "llama.cpp"
PADDING_FLASH: Final = 256  # llama_kv_cache::get_padding with flash attention (on or auto)
# The cache types `-ctk`/`-ctv` take: (values per block, bytes per block), ggml's type traits.
KV_TYPES: Final = {
    "f32": (1, 4),
    "f16": (1, 2),
    "bf16": (1, 2),
    "q8_0": (32, 34),
    "q4_0": (32, 18),
    "q4_1": (32, 20),
    "iq4_nl": (32, 18),
    "q5_0": (32, 22),
    "q5_1": (32, 24),
}
DEFAULT_KV_TYPE: Final = "f16"  # llama_context_default_params: type_k = type_v = GGML_TYPE_F16
_LAYER: Final = re.compile(r"blk\.(\d+)\.")
_INPUT: Final = ("token_embd.",)
_OUTPUT: Final = ("output_norm.", "output.")
_PER_LAYER_DUPLICATES: Final = ("rope_freqs.", "rope_factors_long.", "rope_factors_short.")


def f32(value: float | Fraction) -> float:
    """`value` rounded to a C `float` (IEEE binary32, round to nearest even). A binary32
    sum or quotient of binary32 operands computed in binary64 and then rounded equals the
    binary32 operation's result (53 >= 2 x 24 + 2 bits)."""
    return float(struct.unpack("f", struct.pack("f", float(value)))[0])


def split_points(shares: Sequence[Fraction]) -> list[float]:
    """The normalised cumulative splits, in `float` as `load_tensors` computes them."""
    points, total = [], f32(0)
    for share in shares:
        total = f32(total + f32(share))
        points.append(total)
    return [f32(point / total) for point in points]


def layer_devices(n_layer: int, gpu_layers: int, shares: Sequence[Fraction]) -> list[int | None]:
    """The device of each layer 0..n_layer (the last: the output layer); None: the host.

    >>> layer_devices(4, 3, [Fraction(1)])
    [None, 0, 0, 0, None]
    >>> layer_devices(4, 5, [Fraction(1), Fraction(1)])
    [0, 0, 0, 1, 1]
    """
    start = max(n_layer - gpu_layers, 0)
    active = min(gpu_layers, n_layer + 1) if shares else 0
    points = split_points(shares) if shares else []
    devices: list[int | None] = []
    for il in range(n_layer + 1):
        if il < start or il - start >= active:
            devices.append(None)
            continue
        position = f32(f32(il - start) / active)
        devices.append(next((i for i, p in enumerate(points) if p > position), len(points)))
    return devices


def context_cells(n_ctx: int, parallel: int, padding: int = PADDING_FLASH) -> tuple[int, int]:
    """(cells per stream, streams) of the cache for `-c n_ctx -np parallel`.

    >>> context_cells(8192, 1), context_cells(8192, 3), context_cells(1000, 1)
    ((8192, 1), (2816, 3), (1024, 1))
    """
    per_stream = -(-n_ctx // parallel)
    return -(-per_stream // padding) * padding, parallel


def allocated_tokens(n_ctx: int, parallel: int, padding: int = PADDING_FLASH) -> int:
    """Cells the cache holds in all: the streams times their padded length."""
    cells, streams = context_cells(n_ctx, parallel, padding)
    return cells * streams


def row_bytes(kv_type: str, values: int) -> Fraction:
    """`ggml_row_size`: the bytes of a row of `values` values of a cache type."""
    block, size = KV_TYPES[kv_type]
    if values % block:
        raise SplitError(
            "llama.cpp cannot cache rows of {values} values as {kv_type}: a row holds whole "
            "blocks of {block} values (ggml's row size)",
            "llamacpp_row_not_whole",
            values=str(values),
            kv_type=kv_type,
            block=str(block),
        )
    return Fraction(values // block * size)


def _place(name: str, n_layer: int) -> tuple[str, int]:
    """Where a GGUF tensor belongs: ("layer", il), ("input", 0), ("output", n_layer) or
    ("duplicates", 0) (a tensor every layer loads again)."""
    found = _LAYER.match(name)
    if found and int(found.group(1)) < n_layer:
        return "layer", int(found.group(1))
    if not found:
        if name.startswith(_INPUT):
            return "input", 0
        if name.startswith(_OUTPUT):
            return "output", n_layer
        if name.startswith(_PER_LAYER_DUPLICATES):
            return "duplicates", 0
    raise SplitError(
        "llama.cpp: where tensor {name!r} of this GGUF file goes is not modelled here",
        "llamacpp_tensor_not_modelled",
        name=name,
    )


def plan(
    model: SplitModel, request: SplitRequest, kv_per_value: Fraction, reserve: Fraction
) -> SplitPlan:
    """Each GPU of `request`'s llama.cpp run, and the host (`kv_per_value` is not read: the
    cache's rows are sized by their type)."""
    config = model.config
    if model.gguf is None:
        raise SplitError(
            "llama.cpp reads GGUF files: give the model's .gguf file (its tensors' own types "
            "and sizes) for a llama.cpp split",
            "llamacpp_needs_gguf",
        )
    refuse_states(config, RUNTIME)
    if any(kind != FULL for kind in config.layer_kinds) or any(
        x.layout != PER_HEAD for x in model.layouts
    ):
        raise SplitError(
            "llama.cpp: sliding-window and latent-attention caches are not split here",
            "llamacpp_cache_not_modelled",
        )
    if request.tp > 1 or request.ep:
        raise SplitError(
            "llama.cpp splits by layers (--split-mode layer): give its GPUs with --pp or "
            "--tensor-split, not --tp or --ep (--split-mode row is not modelled)",
            "llamacpp_no_tp",
        )
    if request.sequences != 1:
        raise SplitError(
            "llama.cpp: --tokens is the whole context (-c), shared by --parallel slots (-np); "
            "give --parallel, not --sequences",
            "llamacpp_sequences",
        )
    shares = request.tensor_split or tuple(Fraction(1) for _ in range(request.pp))
    if request.tensor_split is not None and request.pp not in (1, len(shares)):
        raise SplitError(
            "--tensor-split names {count} GPUs and --pp {pp}",
            "llamacpp_split_count",
            count=str(len(shares)),
            pp=str(request.pp),
        )
    if sum(shares) == 0:
        shares = tuple(Fraction(1) for _ in shares)  # all zero: llama.cpp splits by free memory
    n_layer = config.layers
    gpu_layers = n_layer + 1 if request.gpu_layers is None else request.gpu_layers
    devices = layer_devices(n_layer, gpu_layers, shares)
    kv_type = request.kv_dtype or DEFAULT_KV_TYPE
    if kv_type not in KV_TYPES:
        raise SplitError(
            "llama.cpp: --kv-dtype {dtype!r} is not a cache type it takes ({known})",
            "llamacpp_kv_dtype",
            dtype=kv_type,
            known=", ".join(KV_TYPES),
        )
    cells = allocated_tokens(request.tokens, request.parallel)
    gpus = len(shares)
    tallies = [Tally() for _ in range(gpus)]
    host = Tally()

    def tally_of(device: int | None) -> Tally:
        return host if device is None else tallies[device]

    holders = sorted({devices[il] for il in range(n_layer)}, key=lambda d: -1 if d is None else d)
    has_output = any(name.startswith("output.") for name, _, _ in model.gguf)
    for name, elements, size in model.gguf:
        spec = TensorSpec(name, None, (elements,), False, False)
        element = Fraction(size, elements)
        kind, il = _place(name, n_layer)
        if kind == "input":
            host.add(spec, WHOLE, elements, element, where="input")
            output = devices[n_layer]
            if not has_output and output is not None:
                # Tied: `output` is token_embd loaded again on the output layer's device.
                tallies[output].add(spec, DUPLICATED, elements, element, "output.weight", "output")
        elif kind == "duplicates":
            for holder in holders:
                how = WHOLE if holder == devices[0] else DUPLICATED
                tally_of(holder).add(spec, how, elements, element, where="layer")
        else:
            where = "layer" if kind == "layer" else "output"
            tally_of(devices[il]).add(spec, WHOLE, elements, element, where=where)
    kv_rows = [
        row_bytes(kv_type, x.heads * x.key_dim) + row_bytes(kv_type, x.heads * x.value_dim)
        for x in model.layouts
    ]

    def make(device: int | None, tally: Tally) -> RankPlan:
        layers = [il for il in range(n_layer) if devices[il] == device]
        per_token = sum((kv_rows[il] for il in layers), Fraction(0))
        shares_held = tally.shares()
        weights, repeated = weights_of(shares_held)
        rank = -1 if device is None else device
        return RankPlan(
            rank,
            "host" if device is None else "gpu",
            0,
            rank,
            (layers[0], layers[-1] + 1) if layers else (0, 0),
            shares_held,
            weights,
            repeated,
            per_token,
            cells,
            per_token * cells,
            Fraction(0),
            Fraction(0) if device is None else reserve,
            devices[n_layer] == device,
        )

    block, block_bytes = KV_TYPES[kv_type]
    return SplitPlan(
        RUNTIME,
        config.model_type,
        1,
        gpus,
        False,
        request.tokens,
        request.parallel,
        "gguf",
        kv_type,
        Fraction(block_bytes, block),
        tuple(make(device, tallies[device]) for device in range(gpus)),
        make(None, host),
        ("llamacpp_padding_flash_attention", "llamacpp_host_mmap", "activations_not_counted"),
    )
