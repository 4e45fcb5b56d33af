"""The load sheet (`iteragpu.i18n.sheet`) of what `iteragpu model` sized: one GPU
(`size_model`'s answer) or a split (`plan_split`'s), with what the command was asked.

`iteragpu fit` (issue 25) builds its sheet the same way, from the sizing or the plan it solved
for, with `source="iteragpu_fit"`. Only what the inputs say is filled: the revision of a
published config where the preset knows it, never a local folder's; the input and output
lengths are left to the reader (the command takes their sum, `--tokens`).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iteragpu.i18n.sheet import GpuRow, LoadSheet, gpu_row

if TYPE_CHECKING:
    from iteragpu.models.model import ModelSizing
    from iteragpu.models.presets import Preset
    from iteragpu.parallel.records import SplitPlan, SplitRequest


def _revision(preset: Preset | None) -> tuple[str | None, str]:
    if preset is None:
        return None, "not_in_inputs"
    return preset.hf_revision, "hub_revision_unknown"


def _formats(path: str) -> tuple[str, ...]:
    """The dtypes of a model's weight files (largest first), as their headers state them."""
    from iteragpu.models.model import read_model

    _, inventory = read_model(Path(path))
    if inventory is None:
        return ()
    return tuple(dict.fromkeys(group.dtype for group in inventory.groups))


def sizing_sheet(
    sizing: ModelSizing, path: str, settings: dict[str, Any], source: str = "iteragpu_model"
) -> LoadSheet:
    """The sheet of one GPU: `sizing` for the model at `path`, with `size_model`'s `settings`."""
    config, weights, kv = sizing.config, sizing.weights, sizing.kv
    revision, revision_reason = _revision(sizing.preset)
    formats: tuple[str, ...] = ()
    dtype: str | None = None
    if weights.source == "config":
        at_bits = settings.get("bits") is not None
        dtype = None if at_bits else (settings.get("dtype") or config.dtype)
        dtype_reason = "weights_at_bits" if at_bits else "not_in_inputs"
    else:
        assert weights.inventory is not None
        formats = tuple(dict.fromkeys(group.dtype for group in weights.inventory.groups))
        dtype_reason = "weights_from_files"
    kv_dtype = settings.get("kv_dtype")
    if kv_dtype is None and settings.get("kv_bytes_per_value") is None:
        kv_dtype = settings.get("dtype") or config.dtype  # the model's, as Transformers caches
    static = kv.cache.kind == "static"
    return LoadSheet(
        source=source,
        model=path,
        hf_repo=None if sizing.preset is None else sizing.preset.hf_repo,
        model_type=config.outer_model_type or config.model_type,
        revision=revision,
        revision_reason=revision_reason,
        weights_source=weights.source,
        weights_bits=weights.bits,
        weights_formats=formats,
        weights_dtype=dtype,
        weights_dtype_reason=dtype_reason,
        quantization_method=config.quantization_method,
        tokens=kv.tokens,
        sequences=kv.sequences,
        cache=kv.cache.kind,
        kv_bytes_per_value=kv.bytes_per_value,
        kv_dtype=kv_dtype,
        static_max_tokens=(kv.cache.static_max_tokens or kv.tokens) if static else None,
        rows=(
            GpuRow(
                0,
                weights.byte_count,
                kv.kv_cache_bytes,
                sizing.state.state_bytes,
                sizing.reserve_bytes,
            ),
        ),
    )


def split_sheet(
    plan: SplitPlan, request: SplitRequest, source: str = "iteragpu_model"
) -> LoadSheet:
    """The sheet of a split: a row per GPU (and llama.cpp's host part), the runtime's rules."""
    from iteragpu.models.dtypes import dtype_bits
    from iteragpu.models.presets import find_preset
    from iteragpu.parallel import vllm_rules
    from iteragpu.parallel.payload import VERSIONS

    path = Path(request.path)
    preset = None
    if not path.exists() and len(path.parts) == 1:
        preset = find_preset(request.path)
    revision, revision_reason = _revision(preset)
    bits: Fraction | None = None
    dtype: str | None = None
    formats: tuple[str, ...] = ()
    if plan.weights_dtype == "gguf":
        weights_source, dtype_reason = "gguf", "weights_from_files"
        formats = _formats(request.path)
    elif request.bits is not None:
        weights_source, dtype_reason = "config", "weights_at_bits"
        bits = Fraction(request.bits)
    else:
        # Transformers and vLLM cast the checkpoint's tensors to the dtype they load at.
        weights_source, dtype_reason = "config", "not_in_inputs"
        dtype = plan.weights_dtype
        bits = Fraction(dtype_bits(dtype, "--dtype"))
    cache, block = {
        "transformers": ("dynamic", None),
        "vllm": ("vllm_blocks", vllm_rules.BLOCK_SIZE),
        "llama.cpp": ("llamacpp_cells", None),
    }[plan.runtime]
    return LoadSheet(
        source=source,
        model=request.path,
        hf_repo=None if preset is None else preset.hf_repo,
        model_type=plan.model_type,
        revision=revision,
        revision_reason=revision_reason,
        weights_source=weights_source,
        weights_bits=bits,
        weights_formats=formats,
        weights_dtype=dtype,
        weights_dtype_reason=dtype_reason,
        quantization_method=None,  # plan_split refuses a quantized checkpoint
        tokens=plan.tokens,
        sequences=plan.sequences,
        cache=cache,
        cache_block_tokens=block,
        kv_bytes_per_value=plan.kv_bytes_per_value,
        kv_dtype=plan.kv_dtype,
        runtime=plan.runtime,
        runtime_version=VERSIONS[plan.runtime],
        tp=plan.tp,
        pp=plan.pp,
        ep=plan.ep,
        rows=tuple(gpu_row(rank) for rank in plan.ranks),
        host=None if plan.host is None else gpu_row(plan.host, host=True),
    )
