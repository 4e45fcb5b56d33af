"""Every Python copy of a formula, pinned to the core over generated inputs.

The lab script (`mesure_memoire.py`) runs alone under `python -I -S`, and the notebook source
(`iteragpu_lab.py`) duplicates its few functions on purpose so that it runs alone too. Each copy
is compared here with the originals the core owns (`iteragpu.core.units` for the constants,
`iteragpu.core.weights` for the dense-weights formula, `iteragpu.core.numbers` for the number
grammar, the rounding and the exact decimals, `iteragpu.core.allocator` for the allocator's
block and the lab network) and, apart from the core, with an independent computation, over
inputs Hypothesis generates. The mutation tests at the end change one
constant in a temporary copy of a source and show that these properties then fail: a changed
constant cannot survive the default test run.

The notebook runs code when executed (it measures on a GPU), so its definitions are read with
`ast` and only its imports, constant assignments, functions and classes are executed.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import re
import sys
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st
from lab_support import notebook_source

from iteragpu.core import allocator, units
from iteragpu.core.numbers import (
    InputError,
    decimal_places,
    exact_decimal_text,
    parse_count,
    parse_number,
    parse_tokens,
    round_half_up,
)
from iteragpu.core.units import bytes_per
from iteragpu.core.weights import dense_weight_bytes, estimate_weights
from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS
from iteragpu.i18n.numbers import format_number
from iteragpu.lab import mesure_memoire
from iteragpu.training import states
from iteragpu.training.records import TrainRequest, TrainTensor

LAB_DIR = Path(mesure_memoire.__file__).resolve().parent
SCRIPT_SOURCE = LAB_DIR / "mesure_memoire.py"
NOTEBOOK_SOURCE = LAB_DIR / "iteragpu_lab.py"

# PyTorch's CUDA caching allocator rounds every block to kMinBlockSize = 512 bytes
# (c10/cuda/CUDACachingAllocator.cpp); stated here apart from the core and the lab.
CUDA_ALLOCATOR_BLOCK_BYTES = 512

DEFAULT = settings(max_examples=200, deadline=None)
# A mutant must fail on the default run's inputs (the explicit edges and 200 generated ones),
# the same on every run, without shrinking.
MUTANT = settings(
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    report_multiple_bugs=False,
)

Copy = Any  # the lab module or the notebook's namespace: both expose the same names
Property = Callable[[Copy, settings], Callable[[], None]]


def notebook_definitions(path: Path = NOTEBOOK_SOURCE, lang: str = SOURCE) -> SimpleNamespace:
    """The imports, constants, functions and classes of `lang`'s notebook (its messages among
    them), without running its cells."""
    tree = ast.parse(notebook_source(lang, path.read_text("utf-8")), str(path))
    kept = [node for node in tree.body if _is_definition(node)]
    namespace: dict[str, Any] = {"__name__": "iteragpu_lab_definitions"}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(path), "exec"), namespace)
    return SimpleNamespace(**namespace)


def _is_definition(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
        return True
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        # A constant: literals and arithmetic on them, no name, call or attribute.
        allowed = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.BinOp, ast.UnaryOp)
        return all(
            isinstance(sub, (*allowed, ast.operator, ast.unaryop, ast.expr_context))
            for sub in ast.walk(node.value)
        )
    return False


def script_copy(path: Path) -> ModuleType:
    """A copy of the lab script loaded as its own module (the package keeps the real one)."""
    name = f"mesure_memoire_copy_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing resolve names through sys.modules
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


NOTEBOOK = notebook_definitions()
# The notebook of every other language runs the same code with its own messages and numbers.
COPIES = {
    "script": mesure_memoire,
    "notebook": NOTEBOOK,
    **{f"notebook ({lang})": notebook_definitions(lang=lang) for lang in CODES if lang != SOURCE},
}


def _decimals(min_value: Fraction, max_value: int) -> st.SearchStrategy[Fraction]:
    """Numbers with up to 6 decimals: what the lab's grammar (and a notebook cell) can state."""
    return st.integers(min_value=0, max_value=6).flatmap(
        lambda places: st.integers(
            min_value=math.ceil(min_value * 10**places), max_value=max_value * 10**places
        ).map(lambda scaled: Fraction(scaled, 10**places))
    )


parameters_st = st.integers(min_value=1, max_value=10**13)
# The widths loaders use, the edges of the 16-bit threshold, any width, and decimal fractions.
bits_st = st.one_of(
    st.sampled_from([1, 2, 3, 4, 6, 8, 15, 16, 17, 32, 64]),
    st.integers(min_value=1, max_value=64),
    _decimals(Fraction(1, 10**6), 64),
)
reserve_st = st.one_of(st.integers(min_value=0, max_value=1024), _decimals(Fraction(0), 1024))
width_st = st.integers(min_value=1, max_value=8192)
dims_st = st.integers(min_value=1, max_value=4096)
dtype_st = st.sampled_from(sorted(mesure_memoire.DTYPE_SIZES))


def _rounded_text(value: Fraction, places: int) -> str:
    """The core's rounding (half away from zero) as the copies write it: 13.10 -> 13.1."""
    rounded = round_half_up(value, places)
    text = format(abs(rounded) if rounded == 0 else rounded, "f")  # no "-0"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _renders(text: str, exact: Fraction, places: int) -> bool:
    """The copy states `exact` as the core does: rounded half up to `places`, or exactly."""
    return text in {_rounded_text(exact, places), exact_decimal_text(exact)}


# --- The properties: each takes a copy and Hypothesis settings, and returns a test ------------


@cache
def _pint_bytes(unit: str) -> Fraction:
    """Bytes in one `unit` by pint: a check apart from the core, which owns the constants."""
    import pint

    return Fraction(pint.UnitRegistry().Quantity(1, unit).to("byte").magnitude)


def unit_constants_match(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(st.integers(min_value=0, max_value=10**30))
    def check(byte_count: int) -> None:
        originals = (units.BYTES_PER_GB, units.BYTES_PER_GIB)
        assert originals == (copy.BYTES_PER_GB, copy.BYTES_PER_GIB)
        assert originals == (_pint_bytes("gigabyte"), _pint_bytes("gibibyte"))
        assert Fraction(byte_count, copy.BYTES_PER_GB) == byte_count / bytes_per("GB")
        assert Fraction(byte_count, copy.BYTES_PER_GIB) == byte_count / bytes_per("GiB")

    return check


def dense_weights_match(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(parameters_st, bits_st)
    def check(parameters: int, bits: int | Fraction) -> None:
        weights = copy.dense_weight_bytes(parameters, bits)
        assert weights == dense_weight_bytes(parameters, bits)  # the core's original
        assert weights == estimate_weights(parameters, bits).weights_bytes
        assert weights == Fraction(parameters) * Fraction(bits) / 8  # eight bits a byte

    return check


def estimate_matches(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(parameters_st, bits_st, reserve_st)
    # The edges of the 16-bit threshold, always tried: generated inputs may miss one value.
    @example(7_000_000_000, 16, 4)
    @example(7_000_000_000, 15, 4)
    @example(7_000_000_000, Fraction("15.999999"), 4)
    @example(7_000_000_000, 17, 4)
    def check(parameters: int, bits: int | Fraction, reserve: int | Fraction) -> None:
        result = copy.estimate(parameters, bits, Fraction(reserve))
        core = estimate_weights(parameters, bits, reserve)
        assert result["parameters"] == parameters
        assert _renders(result["bits"], Fraction(bits), 6)
        assert _renders(result["reserve_gib"], Fraction(reserve), 6)
        assert result["weights_bytes"] == math.ceil(core.weights_bytes)
        assert Fraction(result["weights_bytes_exact"]) == core.weights_bytes
        assert _renders(result["weights_gb"], core.weights_gb, 2)
        assert _renders(result["weights_gib"], core.weights_gib, 2)
        assert _renders(result["total_gib"], core.total_gib, 2)
        assert result["total_bytes"] == math.ceil(core.total_bytes)
        quantized = set(copy.NOT_COUNTED_QUANTIZED)
        assert quantized, "the copy names what a quantized load adds"
        assert (quantized <= set(result["not_counted"])) == core.quantization_not_counted
        assert set(copy.NOT_COUNTED) <= set(result["not_counted"])

    return check


def rounding_matches(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(
        st.fractions(min_value=-(10**9), max_value=10**9, max_denominator=10**7),
        st.integers(min_value=0, max_value=6),
    )
    def check(value: Fraction, places: int) -> None:
        assert copy.format_decimal(value, places) == _rounded_text(value, places)
        assert copy.ceil_fraction(value) == math.ceil(value)

    return check


def _independent_network_bytes(width: int, element_size: int) -> tuple[int, int]:
    """LayerNorm(w) -> Linear(w, 4w) -> GELU -> Linear(4w, w), counted by tensor group.

    Three tensors of w values (the norm's weight and bias, the down bias), one of 4w (the up
    bias) and two of 4w^2 (the two matrices): 8w^2 + 7w values.
    """

    def block(nbytes: int) -> int:
        return nbytes + (-nbytes) % CUDA_ALLOCATOR_BLOCK_BYTES

    raw = (8 * width * width + 7 * width) * element_size
    rounded = (
        3 * block(width * element_size)
        + block(4 * width * element_size)
        + 2 * block(4 * width * width * element_size)
    )
    return raw, rounded


def _element_size(dtype: str) -> int:
    """Bytes per value from the dtype's name: float32 -> 4, bfloat16 -> 2."""
    match = re.fullmatch(r"b?float(\d+)", dtype)
    assert match, dtype
    return int(match[1]) // 8


def script_network_matches(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(width_st, dtype_st, dims_st, dims_st)
    def check(width: int, dtype: str, batch: int, context: int) -> None:
        size = _element_size(dtype)
        network = copy.predict_network(width, dtype, batch, context)
        raw, rounded = _independent_network_bytes(width, size)
        assert network["element_size_bytes"] == size == allocator.ELEMENT_SIZE_BYTES[dtype]
        assert network["parameter_count"] == 8 * width * width + 7 * width
        assert network["predicted_parameter_bytes"] == raw
        assert network["predicted_parameter_bytes_rounded_512"] == rounded
        input_bytes = batch * context * width * size
        assert network["predicted_input_bytes"] == input_bytes
        assert network["predicted_input_bytes_rounded_512"] == (
            -(-input_bytes // CUDA_ALLOCATOR_BLOCK_BYTES) * CUDA_ALLOCATOR_BLOCK_BYTES
        )
        # ... and the core's original, tensor by tensor
        core = allocator.predict_allocations(batch, context, width, dtype)
        assert [(t["name"], t["numel"]) for t in network["parameter_tensors"]] == [
            (t.name, t.numel) for t in core.model_load.tensors
        ]
        assert network["predicted_parameter_bytes_rounded_512"] == core.model_load.added_bytes

    return check


def allocated_levels_match(copy: Copy, config: settings) -> Callable[[], None]:
    """`predict`: the allocated level after each step, every tensor in whole 512-byte blocks."""

    @config
    @given(width_st, dtype_st, dims_st, dims_st)
    def check(width: int, dtype: str, batch: int, context: int) -> None:
        size = _element_size(dtype)
        prediction = copy.predict(batch, context, width, dtype)
        _, parameters = _independent_network_bytes(width, size)
        activation = batch * context * width * size
        activation += (-activation) % CUDA_ALLOCATOR_BLOCK_BYTES
        assert prediction["phases"]["model_load"]["allocated_bytes"] == parameters
        assert prediction["phases"]["inputs"]["allocated_bytes"] == parameters + activation
        assert prediction["kept_output"]["allocated_bytes"] == parameters + 2 * activation
        count = 8 * width * width + 7 * width
        weights = estimate_weights(count, 8 * size).weights_bytes
        assert prediction["weights_estimate"]["weights_bytes"] == weights
        # ... and the core's original, which the worked examples read
        core = allocator.predict_allocations(batch, context, width, dtype)
        for name, step in (("model_load", core.model_load), ("inputs", core.inputs)):
            copied = prediction["phases"][name]
            assert [t["raw_bytes"] for t in copied["tensors"]] == [
                t.raw_bytes for t in step.tensors
            ]
            assert (copied["raw_bytes"], copied["rounding_bytes"]) == (
                step.raw_bytes,
                step.rounding_bytes,
            )
            assert copied["allocated_bytes"] == step.allocated_bytes
        assert prediction["kept_output"]["allocated_bytes"] == core.kept_output.allocated_bytes
        assert prediction["allocator"]["block_bytes"] == allocator.ALLOCATOR_BLOCK_BYTES

    return check


def exact_text_matches(copy: Copy, config: settings) -> Callable[[], None]:
    """The script's own exact decimals (it cannot import the core) are the core's."""

    @config
    @given(
        st.integers(min_value=-(10**30), max_value=10**30),
        st.integers(min_value=0, max_value=40),
        st.integers(min_value=0, max_value=40),
    )
    def check(numerator: int, twos: int, fives: int) -> None:
        value = Fraction(numerator, 2**twos * 5**fives)
        assert copy.exact_decimal_text(value) == exact_decimal_text(value)
        with pytest.raises(ValueError):  # a third never ends: refused, not rounded
            copy.exact_decimal_text(value + Fraction(1, 3))

    return check


def block_rounding_matches(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(st.integers(min_value=0, max_value=2**48))
    def check(nbytes: int) -> None:
        rounded = copy.round_up_to_block(nbytes)
        assert rounded == allocator.round_up_to_block(nbytes)  # the core's original
        assert rounded % CUDA_ALLOCATOR_BLOCK_BYTES == 0
        assert nbytes <= rounded < nbytes + CUDA_ALLOCATOR_BLOCK_BYTES

    return check


# Strings of the grammar's alphabet, and numbers written at and past its bounds (digits and
# exponent), so that a changed bound in the copy meets an input that shows it.
GRAMMAR_ALPHABET = "0123456789_.,eE+- \u0663"
grammar_text_st = st.one_of(
    st.text(alphabet=GRAMMAR_ALPHABET, max_size=16),
    st.builds(
        lambda sign, digits, point, exponent: f"{sign}{digits[:point]}.{digits[point:]}{exponent}",
        st.sampled_from(["", "+", "-"]),
        st.text(alphabet="0123456789", min_size=1, max_size=60),
        st.integers(min_value=0, max_value=60),
        st.sampled_from(["", "e", "E"]).flatmap(
            lambda e: st.just("") if not e else st.integers(-60, 60).map(lambda n: f"{e}{n}")
        ),
    ),
)


def _decimal_comma(lang: str) -> bool:
    """Whether `lang` writes a decimal comma, from Babel's symbols (not the script's table)."""
    return NUMBER_SYMBOLS[lang]["decimal"] == ","


def _reading(parse: Callable[[], Fraction | int]) -> tuple[Fraction | int | None, str | None]:
    """(value, None) or (None, the refusal's reason)."""
    try:
        return parse(), None
    except (InputError, ValueError) as refusal:
        return None, getattr(refusal, "reason", "no reason")


# Where a decimal comma is read: the marks, the ambiguous group of three, several marks.
DECIMAL_MARK_EXAMPLES = [
    "4,5",
    "1,234",
    "1.500",
    "12.345e3",
    "0,125",
    "1234,567",
    "1,2340",
    "1,5,0",
]


def number_grammar_matches(copy: Copy, config: settings) -> Callable[[], None]:
    """The script reads a number exactly as the core's grammar does, or refuses it for the same
    reason, as a reader of each language writes it (a decimal comma where the language has one)."""

    @config
    @given(grammar_text_st, st.sampled_from(CODES))
    @example("1" * 50, SOURCE)
    @example("1" * 51, SOURCE)
    @example("1e50", SOURCE)
    @example("1e51", SOURCE)
    @example("1e-50", SOURCE)
    @example("1e-51", SOURCE)
    def check(text: str, lang: str) -> None:
        comma = _decimal_comma(lang)
        original = _reading(lambda: parse_number(text, decimal_comma=comma))
        assert _reading(lambda: copy.parse_number(text, lang)) == original, (text, lang)

    for text in DECIMAL_MARK_EXAMPLES:
        for lang in CODES:
            check = example(text, lang)(check)
    return check


def count_grammar_matches(copy: Copy, config: settings) -> Callable[[], None]:
    """`--parameters` reads a count (7e9, 7B, 1,5B) as the CLI's `--params` does."""

    @config
    @given(
        st.one_of(grammar_text_st, grammar_text_st.map(lambda text: text + "B")),
        st.sampled_from(CODES),
    )
    @example("7B", SOURCE)
    @example("1,5B", "id")
    @example("1.5B", SOURCE)
    @example("7X", SOURCE)
    @example("2e15", SOURCE)
    def check(text: str, lang: str) -> None:
        limit = mesure_memoire.MAX_PARAMETERS
        comma = _decimal_comma(lang)
        original = _reading(lambda: parse_count(text, "n", maximum=limit, decimal_comma=comma))
        assert _reading(lambda: copy.parse_count(text, lang, maximum=limit)) == original

    return check


def _suffix_reading(parse: Callable[[], Fraction | int]) -> tuple[Any, ...]:
    """(value, reason, the two readings of an ambiguous suffix or None)."""
    try:
        return parse(), None, None
    except (InputError, ValueError) as refusal:
        return None, getattr(refusal, "reason", "no reason"), getattr(refusal, "readings", None)


def token_grammar_matches(copy: Copy, config: settings) -> Callable[[], None]:
    """`--context 32k` is refused as the CLI refuses `--tokens 32k` (parse_tokens): ambiguous,
    with the same two readings, said in the reader's figures; a count the CLI reads in digits
    the script reads alike."""

    @config
    @given(
        st.one_of(
            grammar_text_st,
            st.tuples(grammar_text_st, st.sampled_from(["k", "K", "m", "M", "G", "t", " k"])).map(
                "".join
            ),
        ),
        st.sampled_from(CODES),
    )
    @example("32k", SOURCE)
    @example("32K", "id")
    @example("1M", SOURCE)
    @example("1,5k", "id")
    @example("0.3k", SOURCE)
    @example("32768", SOURCE)
    def check(text: str, lang: str) -> None:
        limit = mesure_memoire.MAX_DIMENSION
        comma = _decimal_comma(lang)
        cli = _suffix_reading(lambda: parse_tokens(text, "n", maximum=limit, decimal_comma=comma))
        script = _suffix_reading(lambda: copy.parse_whole(text, lang, minimum=1, maximum=limit))
        if "ambiguous_suffix" in (cli[1], script[1]) or cli[1] is None:
            assert script == cli, (text, lang)
        if cli[2] is not None:
            try:
                copy.parse_whole(text, lang, minimum=1, maximum=limit)
            except ValueError as refusal:
                said = refusal.params  # type: ignore[attr-defined]
            for reading, name in zip(cli[2], ("decimal_reading", "binary_reading"), strict=True):
                assert said[name] == format_number(reading, decimal_places(reading) or 0, lang)

    return check


def notebook_network_matches(copy: Copy, config: settings) -> Callable[[], None]:
    @config
    @given(width_st, dtype_st)
    def check(width: int, dtype: str) -> None:
        raw, rounded = copy.predicted_parameter_bytes(width, dtype)
        assert (raw, rounded) == _independent_network_bytes(width, _element_size(dtype))
        # ... and the lab's own prediction, the one the notebook says it duplicates
        network = mesure_memoire.predict_network(width, dtype, 1, 1)
        assert raw == network["predicted_parameter_bytes"]
        assert rounded == network["predicted_parameter_bytes_rounded_512"]
        # ... and the core's original
        core = allocator.predict_allocations(1, 1, width, dtype).model_load
        assert (raw, rounded) == (core.raw_bytes, core.added_bytes)

    return check


def notebook_text_matches_script(copy: Copy, config: settings) -> Callable[[], None]:
    """The notebook's estimate cells print what `mesure_memoire.py estimate` prints."""

    @config
    @given(parameters_st, bits_st, reserve_st)
    def check(parameters: int, bits: int | Fraction, reserve: int | Fraction) -> None:
        notebook = copy.format_estimate_text(copy.estimate(parameters, bits, Fraction(reserve)))
        script = mesure_memoire.format_estimate_text(
            mesure_memoire.estimate(parameters, bits, Fraction(reserve), copy.LANG), copy.LANG
        )
        assert notebook == script

    return check


shape_st = st.lists(st.integers(min_value=1, max_value=4096), min_size=0, max_size=3).map(tuple)


def _original_items(
    shape: tuple[int, ...], precision: str, optimizer: str
) -> list[tuple[Any, ...]]:
    """iteragpu train's items for one trainable tensor stored as `precision` stores weights."""
    tensor = TrainTensor("t", shape, states.weight_dtype(precision), "base", True)
    request = TrainRequest(precision=precision, optimizer=optimizer)  # type: ignore[arg-type]
    return [
        (i.kind, i.name, i.shape, i.dtype, i.bytes, i.device)
        for i in states.state_items(tensor, request)
    ]


def train_states_match(copy: Copy, config: settings) -> Callable[[], None]:
    """`predict --task train`'s items: iteragpu.training.states.state_items, item by item."""

    @config
    @given(
        shape_st,
        st.sampled_from(mesure_memoire.TRAIN_PRECISIONS),
        st.sampled_from(("adamw", "sgd")),
    )
    def check(shape: tuple[int, ...], precision: str, optimizer: str) -> None:
        dtype = copy.PRECISION_DTYPES[precision]
        assert dtype == states.weight_dtype(precision)
        items = copy.train_state_items(shape, dtype, optimizer)
        copied = [
            (i["kind"], i["name"], tuple(i["shape"]), i["dtype"], i["bytes"], i["device"])
            for i in items
        ]
        assert copied == _original_items(shape, precision, optimizer)

    return check


def train_levels_match(copy: Copy, config: settings) -> Callable[[], None]:
    """The model states after each phase: the original's items of each parameter, each tensor
    in whole 512-byte blocks, the host's apart (iteragpu.training.states.state_totals)."""

    @config
    @given(
        width_st,
        dims_st,
        dims_st,
        st.sampled_from(mesure_memoire.TRAIN_PRECISIONS),
        st.sampled_from(("adamw", "sgd")),
    )
    def check(width: int, batch: int, context: int, precision: str, optimizer: str) -> None:
        prediction = copy.predict_train(batch, context, width, precision, optimizer)

        def block(nbytes: int) -> int:
            return nbytes + (-nbytes) % CUDA_ALLOCATOR_BLOCK_BYTES

        shapes = [s for _, s in allocator.network_parameter_shapes(width)]
        items = [i for s in shapes for i in _original_items(s, precision, optimizer)]
        size = _element_size(states.weight_dtype(precision))
        parameters = sum(block(math.prod(s) * size) for s in shapes)
        gradients = sum(block(i[4]) for i in items if i[0] == "gradient")
        on_gpu = sum(block(i[4]) for i in items if i[0] == "optimizer" and i[5] == "gpu")
        tensors = [
            TrainTensor(str(n), s, states.weight_dtype(precision), "base", True)
            for n, s in enumerate(shapes)
        ]
        request = TrainRequest(precision=precision, optimizer=optimizer)  # type: ignore[arg-type]
        host = states.state_totals(tensors, request).optimizer_host_bytes
        first, warm = prediction["phases"]["first_step"], prediction["phases"]["warm_step"]
        expected_first = {
            "forward": (0, 0, 0),
            "loss": (0, 0, 0),
            "backward": (gradients, 0, 0),
            "optimizer_step": (gradients, on_gpu, host),
            "zero_grad": (0, on_gpu, host),
        }
        for name, (grads, state, on_host) in expected_first.items():
            for phases, kept in ((first, (grads, state, on_host)), (warm, (grads, on_gpu, host))):
                level = phases[name]
                assert level["parameters_allocated_bytes"] == parameters
                assert (
                    level["gradients_allocated_bytes"],
                    level["optimizer_state_allocated_bytes"],
                    level["optimizer_state_host_bytes"],
                ) == kept, (name, kept)
                assert level["model_state_allocated_bytes"] == parameters + kept[0] + kept[1]
        activation = block(batch * context * width * size)
        assert prediction["inputs"]["added_bytes"] == 2 * activation  # the inputs and the target

    return check


SHARED: dict[str, Property] = {
    "unit constants": unit_constants_match,
    "dense weights": dense_weights_match,
    "estimate": estimate_matches,
    "rounding": rounding_matches,
}
SCRIPT_ONLY: dict[str, Property] = {
    "number grammar": number_grammar_matches,
    "count grammar": count_grammar_matches,
    "token grammar": token_grammar_matches,
    "block rounding": block_rounding_matches,
    "network": script_network_matches,
    "allocated levels": allocated_levels_match,
    "exact decimals": exact_text_matches,
    "train states": train_states_match,
    "train levels": train_levels_match,
}


def notebook_train_states_match(copy: Copy, config: settings) -> Callable[[], None]:
    """The notebook's model states after each phase are the script's `predict --task train`."""

    @config
    @given(width_st, st.sampled_from(("fp32", "bf16")), st.sampled_from(("adamw", "sgd")))
    def check(width: int, precision: str, optimizer: str) -> None:
        dtype = mesure_memoire.PRECISION_DTYPES[precision]
        first, warm = copy.predicted_model_states(width, dtype, optimizer)
        phases = mesure_memoire.predict_train(1, 1, width, precision, optimizer)["phases"]
        for kind, copied in (("first_step", first), ("warm_step", warm)):
            script = {n: level["model_state_allocated_bytes"] for n, level in phases[kind].items()}
            assert copied == script, kind

    return check


NOTEBOOK_ONLY: dict[str, Property] = {
    "train states": notebook_train_states_match,
    "network": notebook_network_matches,
    "estimate text": notebook_text_matches_script,
}
CASES = [
    *((copy, name) for copy in COPIES for name in SHARED),
    *(("script", name) for name in SCRIPT_ONLY),
    *((copy, name) for copy in COPIES if copy != "script" for name in NOTEBOOK_ONLY),
]


def _property(copy: str, name: str) -> Property:
    return {**SHARED, **(SCRIPT_ONLY if copy == "script" else NOTEBOOK_ONLY)}[name]


@pytest.mark.parametrize(("copy", "name"), CASES, ids=[f"{c}: {n}" for c, n in CASES])
def test_copy_matches_the_core(copy: str, name: str) -> None:
    _property(copy, name)(COPIES[copy], DEFAULT)()


def test_the_notebook_is_read_without_running_a_cell() -> None:
    for name in ("dense_weight_bytes", "estimate", "format_decimal", "predicted_parameter_bytes"):
        assert callable(getattr(NOTEBOOK, name)), name
    # the measurement and print cells did not run
    for ran in ("phases", "problem", "predicted"):
        assert not hasattr(NOTEBOOK, ran), ran


@DEFAULT
@given(
    st.integers(min_value=1, max_value=10**40),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=0, max_value=40),
)
def test_core_exact_decimals_keep_every_digit_of_a_negative_value(
    numerator: int, twos: int, fives: int
) -> None:
    """A negative margin in JSON is as exact as a positive one (Decimal's unary minus rounded
    to 28 significant digits: -1.000000000931322574615478516 for -(2^30 + 1) B in GiB)."""
    value = Fraction(numerator, 2**twos * 5**fives)
    text = exact_decimal_text(value)
    assert Fraction(text) == value
    assert exact_decimal_text(-value) == "-" + text


# --- Mutants: one constant changed in a temporary copy, and a property fails ------------------

# (what changes, text in the source, its replacement, the property that must fail)
NOTEBOOK_MUTANTS = [
    ("16-bit threshold lowered to 8", "if bits < 16:", "if bits < 8:", "estimate"),
    ("16-bit threshold made inclusive", "if bits < 16:", "if bits <= 16:", "estimate"),
    ("16-bit threshold raised to 32", "if bits < 16:", "if bits < 32:", "estimate"),
    ("512-byte block halved", "-(-s // 512) * 512", "-(-s // 256) * 256", "network"),
    ("512-byte block doubled", "-(-s // 512) * 512", "-(-s // 1024) * 1024", "network"),
    ("GiB taken as 10^9 B", "BYTES_PER_GIB = 2**30", "BYTES_PER_GIB = 10**9", "unit constants"),
    ("GB taken as 2^30 B", "BYTES_PER_GB = 10**9", "BYTES_PER_GB = 2**30", "unit constants"),
    ("seven bits a byte", "parameters * bits / 8", "parameters * bits / 7", "dense weights"),
    ("bfloat16 as four bytes", '"bfloat16": 2', '"bfloat16": 4', "network"),
    (
        "AdamW with one moment",
        '2 * parameters if optimizer_name == "adamw"',
        '1 * parameters if optimizer_name == "adamw"',
        "train states",
    ),
    (
        "halves rounded down",
        "scaled.numerator * 2 + scaled.denominator",
        "scaled.numerator * 2",
        "rounding",
    ),
]
SCRIPT_MUTANTS = [
    ("16-bit threshold lowered to 8", "if bits < 16:", "if bits < 8:", "estimate"),
    (
        "512-byte block halved",
        "ALLOCATOR_BLOCK_BYTES = 512",
        "ALLOCATOR_BLOCK_BYTES = 256",
        "block rounding",
    ),
    ("GiB taken as 10^9 B", "BYTES_PER_GIB = 2**30", "BYTES_PER_GIB = 10**9", "unit constants"),
    ("seven bits a byte", "parameters * bits / 8", "parameters * bits / 7", "dense weights"),
    ("hidden width 2w", "hidden = 4 * width", "hidden = 2 * width", "network"),
    ("16-bit threshold made inclusive", "if bits < 16:", "if bits <= 16:", "estimate"),
    (
        "levels not cumulative",
        '"allocated_bytes": before + added',
        '"allocated_bytes": added',
        "allocated levels",
    ),
    ("51 digits allowed", "MAX_DIGITS = 50", "MAX_DIGITS = 51", "number grammar"),
    ("exponent bound widened", "MAX_EXPONENT = 50", "MAX_EXPONENT = 60", "number grammar"),
    ("ambiguous groups of four", "_GROUP_DIGITS = 3", "_GROUP_DIGITS = 4", "number grammar"),
    (
        "Indonesian read with a decimal point",
        '"id": {"group": ".", "decimal": ","',
        '"id": {"group": ",", "decimal": "."',
        "number grammar",
    ),
    ("counts without suffixes", '"B": 10**9,', '"B": 10**6,', "count grammar"),
    ("k read as 1000 both ways", '"K": (10**3, 2**10)', '"K": (10**3, 10**3)', "token grammar"),
    ("tokens suffixes unread", 'not in "KkMmGgTt"', 'not in "Kk"', "token grammar"),
    (
        "AdamW's step on the GPU",
        '"step", (), STEP_DTYPE, STEP_BYTES, "host"',
        '"step", (), STEP_DTYPE, STEP_BYTES, "gpu"',
        "train states",
    ),
    (
        "AdamW with one moment",
        'for n in ("exp_avg", "exp_avg_sq")',
        'for n in ("exp_avg",)',
        "train states",
    ),
    ("bf16 trained in float32", '"bf16": "bfloat16"', '"bf16": "float32"', "train states"),
    (
        "gradients kept after zero_grad",
        '"zero_grad": (False, True)',
        '"zero_grad": (True, True)',
        "train levels",
    ),
    (
        "optimizer state before the first step",
        """"first_step": {
        "forward": (False, False),""",
        """"first_step": {
        "forward": (False, True),""",
        "train levels",
    ),
    (
        "exact decimals cut at 2 places",
        "places = max(twos, fives)",
        "places = min(max(twos, fives), 2)",
        "exact decimals",
    ),
]


def _copy_of(source: Path, tmp_path: Path, old: str | None = None, new: str = "") -> Path:
    """A copy of `source` in `tmp_path`, with every `old` replaced by `new` when given."""
    text = source.read_text("utf-8")
    if old is not None:
        assert old in text, f"the mutation no longer applies to {source.name}: {old!r}"
        text = text.replace(old, new)
    copy = tmp_path / source.name
    copy.write_text(text, "utf-8")
    return copy


@pytest.mark.parametrize(
    ("change", "old", "new", "name"), NOTEBOOK_MUTANTS, ids=[m[0] for m in NOTEBOOK_MUTANTS]
)
def test_a_changed_constant_in_the_notebook_fails(
    tmp_path: Path, change: str, old: str, new: str, name: str
) -> None:
    mutant = notebook_definitions(_copy_of(NOTEBOOK_SOURCE, tmp_path, old, new))
    with pytest.raises(AssertionError):
        _property("notebook", name)(mutant, MUTANT)()


@pytest.mark.parametrize(
    ("change", "old", "new", "name"), SCRIPT_MUTANTS, ids=[m[0] for m in SCRIPT_MUTANTS]
)
def test_a_changed_constant_in_the_script_fails(
    tmp_path: Path, change: str, old: str, new: str, name: str
) -> None:
    mutant = script_copy(_copy_of(SCRIPT_SOURCE, tmp_path, old, new))
    with pytest.raises(AssertionError):
        _property("script", name)(mutant, MUTANT)()


def test_the_unmutated_copies_pass_the_mutant_settings(tmp_path: Path) -> None:
    """The mutants fail because of their change, not because of the settings or the loading."""
    notebook = notebook_definitions(_copy_of(NOTEBOOK_SOURCE, tmp_path))
    script = script_copy(_copy_of(SCRIPT_SOURCE, tmp_path))
    for name in {*SHARED, *NOTEBOOK_ONLY}:
        _property("notebook", name)(notebook, MUTANT)()
    for name in {*SHARED, *SCRIPT_ONLY}:
        _property("script", name)(script, MUTANT)()
