"""A split answered: `plan_split(request)` reads the model, checks the request and hands the
model's tensors and cache layouts to the runtime's rules (one module per runtime).

The weights are held at the dtype the runtime loads them at (`--dtype`, else the config's), or
at `--bits`: a runtime casts the checkpoint's tensors to that dtype, so their files' dtypes do
not decide. A quantized checkpoint is refused (its scales and packing are not split here); so is
a family whose recipe does not state its tensors. llama.cpp reads a GGUF file: its tensors'
own types and sizes.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Final

from iteragpu.core.units import from_unit
from iteragpu.models.dtypes import dtype_bits, dtype_bytes
from iteragpu.parallel.records import RUNTIMES, SplitError, SplitModel, SplitPlan, SplitRequest

MAX_RANKS: Final = 4096  # TP x PP: more GPUs than any catalogue package, well under a minute


def plan_split(request: SplitRequest) -> SplitPlan:
    """Every rank of `request`'s split; `SplitError` (an `InputError`) for what the runtime
    refuses or this package does not model."""
    _check(request)
    return plan_for(read_split_model(request), request)


def plan_for(model: SplitModel, request: SplitRequest) -> SplitPlan:
    """`plan_split` of a model already read (`read_split_model`): `iteragpu fit` plans one
    model under several splits and cache types."""
    _check(request)
    reserve = from_unit(Fraction(request.reserve_gib), "GiB")
    if request.runtime == "transformers":
        from iteragpu.parallel import transformers_rules as rules

        per_value = _model_kv_bytes(request, model)
        return rules.plan(model, request, per_value, reserve)
    if request.runtime == "vllm":
        from iteragpu.parallel import vllm_rules

        per_value = vllm_rules.kv_bytes_per_value(
            request.kv_dtype, _model_dtype_bytes(request, model)
        )
        return vllm_rules.plan(model, request, per_value, reserve)
    from iteragpu.parallel import llamacpp_rules

    return llamacpp_rules.plan(model, request, Fraction(0), reserve)


def _check(request: SplitRequest) -> None:
    if request.runtime not in RUNTIMES:
        raise SplitError(
            "unknown runtime {runtime!r} ({known})",
            "unknown_runtime",
            runtime=str(request.runtime),
            known=", ".join(RUNTIMES),
        )
    for what, value in (
        ("--tp", request.tp),
        ("--pp", request.pp),
        ("--parallel", request.parallel),
    ):
        if not 1 <= value <= MAX_RANKS:
            raise SplitError(
                "{what} must be a whole number between 1 and {maximum}, got {value}",
                "bad_split_count",
                what=what,
                maximum=str(MAX_RANKS),
                value=str(value),
            )
    if request.tp * request.pp > MAX_RANKS:
        raise SplitError(
            "--tp x --pp is {ranks} GPUs, above {maximum}",
            "bad_split_count",
            ranks=str(request.tp * request.pp),
            maximum=str(MAX_RANKS),
        )
    llama = request.runtime == "llama.cpp"
    for option, given in (
        ("--gpu-layers", request.gpu_layers is not None),
        ("--tensor-split", request.tensor_split is not None),
        ("--parallel", request.parallel != 1),
    ):
        if given and not llama:
            raise SplitError(
                "{option} is llama.cpp's (--runtime llama.cpp)",
                "llamacpp_option",
                option=option,
            )
    if request.pp_partition is not None and request.runtime != "vllm":
        raise SplitError(
            "--pp-partition is vLLM's VLLM_PP_LAYER_PARTITION (--runtime vllm)",
            "vllm_option",
        )
    if request.gpu_layers is not None and request.gpu_layers < 0:
        raise SplitError(
            "--gpu-layers must be 0 or more, got {value}",
            "bad_split_count",
            value=str(request.gpu_layers),
        )
    if request.tensor_split is not None and (
        not request.tensor_split or any(share < 0 for share in request.tensor_split)
    ):
        raise SplitError(
            "--tensor-split takes shares of 0 or more, one per GPU", "bad_tensor_split"
        )


def read_split_model(request: SplitRequest) -> SplitModel:
    """The model of `request.path` as a split needs it: its tensors at their element size,
    and its cache layouts."""
    from iteragpu.models.kv import layer_layouts
    from iteragpu.models.model import read_model

    path = Path(request.path)
    gguf_file = path.suffix.lower() == ".gguf"
    if gguf_file != (request.runtime == "llama.cpp"):
        raise SplitError(
            "{path}: llama.cpp reads a .gguf file, Transformers and vLLM a model folder or "
            "config.json (--runtime {runtime})",
            "split_wrong_format",
            path=str(path),
            runtime=request.runtime,
        )
    config, _ = read_model(path)
    layouts = tuple(layer_layouts(config))
    if gguf_file:
        return SplitModel(config, (), Fraction(0), "gguf", layouts, _gguf_tensors(path))
    if config.quantization_method is not None:
        raise SplitError(
            "{path}: a quantized checkpoint ({method}): its split is not modelled here",
            "split_quantized",
            path=str(path),
            method=config.quantization_method,
        )
    if config.is_multimodal:
        raise SplitError(
            "{path}: a multimodal model ({wrapper}): its split is not modelled here",
            "split_multimodal",
            path=str(path),
            wrapper=str(config.outer_model_type),
        )
    from iteragpu.models.shapes import parameter_tensors

    tensors = parameter_tensors(config)
    if tensors is None:
        raise SplitError(
            "{family}: its recipe does not state its tensors, which a split needs",
            "split_tensors_unknown",
            family=config.model_type,
        )
    if request.bits is not None:
        if request.dtype is not None:
            raise SplitError("give --bits or --dtype, not both", "bits_and_dtype")
        bits = Fraction(request.bits)
        return SplitModel(config, tensors, bits / 8, f"{_number(bits)} bits", layouts)
    dtype = request.dtype or config.dtype
    if dtype is None:
        raise SplitError("no dtype in the config: give --dtype or --bits", "no_bits")
    where = "--dtype" if request.dtype else "dtype (config.json)"
    return SplitModel(config, tensors, Fraction(dtype_bits(dtype, where), 8), dtype, layouts)


def _number(value: Fraction) -> str:
    from iteragpu.core.numbers import exact_decimal_text

    return exact_decimal_text(value)


def _model_dtype_bytes(request: SplitRequest, model: SplitModel) -> Fraction:
    """The model's dtype bytes, which the cache takes by default."""
    config = model.config
    if request.dtype is not None:
        return dtype_bytes(request.dtype, "--dtype")
    if config.dtype is None:
        raise SplitError("the config states no dtype: give --kv-dtype or --dtype", "no_kv_dtype")
    return dtype_bytes(config.dtype, "dtype (config.json)")


def _model_kv_bytes(request: SplitRequest, model: SplitModel) -> Fraction:
    """Transformers' cache: `--kv-dtype`, else the model's dtype."""
    if request.kv_dtype is not None:
        return dtype_bytes(request.kv_dtype, "--kv-dtype")
    return _model_dtype_bytes(request, model)


def _gguf_tensors(path: Path) -> tuple[tuple[str, int, int], ...]:
    """A GGUF file's tensors: (name, elements, bytes), as its header declares them."""
    from iteragpu.models.gguf import open_gguf

    reader = open_gguf(path)
    return tuple((str(t.name), int(t.n_elements), int(t.n_bytes)) for t in reader.tensors)
