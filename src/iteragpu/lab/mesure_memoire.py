#!/usr/bin/env python3
"""IteraGPU Lab v1: estimate, predict, inspect the environment and measure GPU memory by phase,
for the lab's forward passes, its training step, or your own loop (the Recorder).

`estimate`, `predict` and `environment` need only the standard library (this file runs under
`python -I -S`); `measure` and the Recorder need PyTorch and a CUDA or HIP/ROCm GPU.

    python mesure_memoire.py estimate --parameters 7000000000 --bits 16 --reserve-gib 4
    python mesure_memoire.py predict --batch 1 --context 16 --width 64 --dtype float32
    python mesure_memoire.py predict --task train --batch 1 --context 16 --width 64
    python mesure_memoire.py environment --device cuda:0
    python mesure_memoire.py measure --device cuda:0 --batch 2 --context 128 --width 1024 \
        --dtype float32 --warmup 3 --repeats 5 --output mesures.json
    python mesure_memoire.py measure --task train --optimizer adamw --precision fp32 \
        --device cuda:0 --batch 2 --context 128 --width 1024 --steps 3 --output train.json

    from mesure_memoire import Recorder          # your own loop, this file beside it
    with Recorder(device="cuda:0", model=model, optimizer=optimizer) as recorder:
        with recorder.phase("backward", step=1):
            loss.backward()

Every command takes `--lang ko|id`; without it the language comes from the locale (LANGUAGE,
LC_ALL, LC_MESSAGES, LANG: the first one set decides), and is Korean, the source language, for
any other locale. Help, errors, progress, text and the prose of the JSON are in that language,
with its number format (13.04 / 13,04); JSON keys and codes stay English. Numbers are read in
that language too: the decimal comma is accepted where the language writes it (`--bits 4,5` in
Indonesian), the point everywhere. The messages live in MESSAGES at the end of this file.

Counters are stored as raw bytes; a value that was not read is `null`, never 0.

The sections of this file, in order:
  Language            --lang and the locale; say() reads MESSAGES
  Numbers             the number grammar shared with the CLI and the sizer
  Exact arithmetic    Exact, rounding, exact decimals; estimate
  The network         the lab's network and the allocated bytes of its forward passes (predict)
  The training step   its model states, predicted (predict --task train)
  The protocol        phase_protocol, the six steps (the one copy); measure_phase, run_protocol
  Parts               tensor_parts: parameters, gradients, optimizer state walked at a phase's end
  Recorder            the protocol around the phases of your own loop
  Environment         Python, PyTorch, devices, driver, allocator settings
  Command line        the commands, the safe write, the result file
  Messages            every sentence, in each language
"""

from __future__ import annotations

import os
import sys
import time

# Annotations only: importing `typing` and creating TypedDict classes costs several
# milliseconds, and `estimate` should start about as fast as the interpreter (`nox -s bench`).
# Modules that only some commands need (argparse and re, json, signal, unicodedata, platform,
# subprocess, shutil, warnings, importlib, ctypes, threading, secrets, contextlib) are imported
# where they are used: a plain `estimate` never imports argparse (estimate_arguments).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator, Sequence
    from types import FrameType
    from typing import IO, Any, Literal, NoReturn, NotRequired, Protocol, TypedDict

    class Rational(Protocol):
        """int, Fraction or Exact: what the exact functions accept."""

        @property
        def numerator(self) -> int: ...
        @property
        def denominator(self) -> int: ...

    class TensorPrediction(TypedDict):
        name: str
        shape: list[int]
        numel: int
        element_size_bytes: int
        raw_bytes: int
        allocated_bytes: int  # raw_bytes rounded up to the allocator's 512-byte blocks
        rounding_bytes: int

    class AllocationStep(TypedDict):
        """The tensors one step adds, and the allocated level the allocator will then show."""

        tensors: list[TensorPrediction]
        raw_bytes: int
        rounding_bytes: int
        added_bytes: int
        allocated_bytes: int  # cumulative, since the process started

    class Prediction(TypedDict):
        tool: str
        tool_version: str
        lab_version: str
        command: str
        language: str
        dimensions: dict[str, int]
        dtype: str
        element_size_bytes: int
        allocator: dict[str, Any]
        phases: dict[str, AllocationStep]
        kept_output: AllocationStep
        weights_estimate: dict[str, Any]
        not_predicted: list[str]

    CounterKey = Literal[
        "start_allocated_bytes",
        "start_reserved_bytes",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "end_allocated_bytes",
        "end_reserved_bytes",
    ]

    class PhaseError(TypedDict):
        step: str
        type: str
        message: str
        out_of_memory: bool
        # allocator | cublas | cuda (schema 1.1.0); null when not an out-of-memory error
        out_of_memory_kind: NotRequired[str | None]

    class PhasePrediction(TypedDict):
        start_allocated_bytes: int
        end_allocated_bytes: int
        start_allocated_difference_bytes: int | None  # measured - predicted; null if not read
        end_allocated_difference_bytes: int | None

    class PhaseRecord(TypedDict):
        phase: str
        repeat: int | None
        step: int | None  # the training step (1: the first), null for the forward phases
        forward_passes: int
        status: str  # ok | failed | interrupted
        peak_reset: bool
        start_allocated_bytes: int | None
        start_reserved_bytes: int | None
        peak_allocated_bytes: int | None
        peak_reserved_bytes: int | None
        end_allocated_bytes: int | None
        end_reserved_bytes: int | None
        duration_ns: int | None
        error: PhaseError | None
        read_errors: dict[str, str]
        prediction: NotRequired[PhasePrediction]
        parts: NotRequired[Parts | None]
        parts_prediction: NotRequired[dict[str, int | None]]

    class Parts(TypedDict):
        """What a phase's end holds, by part (raw bytes; *_allocated_bytes rounded to 512 B)."""

        parameters_bytes: int
        parameters_allocated_bytes: int
        gradients_bytes: int
        gradients_allocated_bytes: int
        optimizer_state_bytes: int | None  # None: no optimizer given, not counted
        optimizer_state_allocated_bytes: int | None
        optimizer_state_host_bytes: int | None
        model_state_allocated_bytes: int | None
        activations_and_temporaries_bytes: int | None  # end allocated minus the parts
        peak_excess_bytes: int | None  # peak allocated minus end allocated

    class OutcomeError(TypedDict):
        type: str
        message: str

    class Outcome(TypedDict):
        status: str  # ok | failed | interrupted
        exit_code: int
        failed_phase: str | None
        failed_repeat: int | None
        failed_step: int | None
        error: OutcomeError | None
        complete_readings: bool

    class CounterSource(Protocol):
        """Device synchronisation and memory counters for ONE device (raw bytes)."""

        def synchronize(self) -> None: ...
        def memory_allocated(self) -> int: ...
        def memory_reserved(self) -> int: ...
        def max_memory_allocated(self) -> int: ...
        def max_memory_reserved(self) -> int: ...
        def reset_peak_memory_stats(self) -> None: ...

    class Workload(Protocol):
        """What each phase runs."""

        def load_model(self) -> None: ...
        def make_inputs(self) -> None: ...
        def forward(self) -> None: ...

    class Backend(Protocol):
        """What `measure` needs from the machine: built by a factory after the checks pass."""

        source: CounterSource
        workload: Workload
        environment: dict[str, Any]

    BackendFactory = Callable[[argparse.Namespace], Backend]

BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30
BYTES_PER_MIB = 2**20

# The single place where the lab's version lives; lab_archive.py reads it from here.
LAB_VERSION = "v1"
__version__ = "1.3.0"
# 1.3.0 measures a training step (--task train) and the reader's own loop (Recorder), phase by
# phase with its parts, and records the task, the rank and the world size (schema 1.3.0);
# result.schema.json still reads 1.0.0, 1.1.0 and 1.2.0 results.
SCHEMA_VERSION = "1.3.0"
TOOL_NAME = "mesure_memoire.py"

# The seed of the network's initialisation and of the synthetic input.
SEED = 0

# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): every request is rounded
# up to a multiple of 512 bytes (kMinBlockSize), so a tensor under 512 B takes 512 B.
ALLOCATOR_BLOCK_BYTES = 512

# Exit codes (also listed in --help and in the lab READMEs).
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_UNAVAILABLE = 2  # bad arguments, PyTorch missing, device not a GPU or not present
EXIT_OUTPUT_EXISTS = 3
EXIT_PHASE_FAILED = 4
EXIT_OUTPUT_ERROR = 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention
EXIT_TERMINATED = 143  # 128 + SIGTERM

DTYPE_SIZES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}

PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")

NOT_COUNTED = ["activations", "gradients", "kv_cache", "optimizer_states"]
NOT_COUNTED_QUANTIZED = [
    "quantization_scales_and_metadata",
    "modules_kept_at_another_precision",
]

# Environment variables read by PyTorch's allocators (PYTORCH_ALLOC_CONF; the older
# PYTORCH_CUDA_ALLOC_CONF and PYTORCH_HIP_ALLOC_CONF), by CUDA's module loader, and the switch
# that bypasses the caching allocator altogether.
ALLOCATOR_ENV_VARS = (
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "CUDA_MODULE_LOADING",
)
NO_CACHING_VAR = "PYTORCH_NO_CUDA_MEMORY_CACHING"
# The size of the workspaces cuBLAS and cuBLASLt take through PyTorch's allocator.
BLAS_WORKSPACE_ENV_VARS = ("CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE")
# Which GPUs a process sees, and in which order (cuda:N is an index into this view).
VISIBLE_DEVICE_ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
# What `predict` leaves out (message keys; the sentences are in MESSAGES).
NOT_PREDICTED = (
    "not_predicted_workspace",
    "not_predicted_temporaries",
    "not_predicted_reserved",
    "not_predicted_context",
)


# ---------------------------------------------------------------------------------------------
# Language: --lang, else the locale; every sentence comes from MESSAGES (end of this file)
# ---------------------------------------------------------------------------------------------

# The language the messages are written in first; also the default for any other locale.
SOURCE_LANGUAGE = "ko"
# The locale variables as Python's gettext and GNU gettext read them: the first one set and not
# empty decides (LANGUAGE may list several locales, `fr:id`). The CLI reads them alike
# (iteragpu.i18n.environment; tests/lab/test_lab_language.py pins the two together).
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def locale_language(environ: dict[str, str] | None = None) -> str:
    """The language the locale asks for (`id_ID.UTF-8` -> `id`), or SOURCE_LANGUAGE when the
    deciding variable names none of the script's languages (`C`, `en_US.UTF-8`) or none is set.

    >>> locale_language({"LANG": "id_ID.UTF-8"}), locale_language({"LC_ALL": "C", "LANG": "id"})
    ('id', 'ko')
    """
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name)
        if value:
            for locale in value.split(":"):
                # language_TERRITORY.codeset@modifier, or a BCP 47 tag (ko-KR)
                code = locale.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
                if code in MESSAGES:
                    return code
            break
    return SOURCE_LANGUAGE


def requested_language(argv: Sequence[str], environ: dict[str, str] | None = None) -> str:
    """The language of this run: `--lang CODE` (or `--lang=CODE`, or an abbreviation that
    argparse accepts) when CODE is known, else the locale's. An unknown CODE is reported by
    argparse, in the locale's language."""
    for index, arg in enumerate(argv):
        if arg == "--":
            break
        name, equals, value = arg.partition("=")
        if len(name) >= 3 and "--lang".startswith(name):
            if not equals:
                value = argv[index + 1] if index + 1 < len(argv) else ""
            if value in MESSAGES:
                return value
            break
    return locale_language(environ)


def say(lang: str, key: str, **params: object) -> str:
    """The message `key` in `lang`, its placeholders filled (only this one is formatted)."""
    text = MESSAGES[lang][key]
    return text.format(**params) if params else text


class Exact:
    """An exact rational number, always in lowest terms: what `estimate` computes with.

    The script's own rather than fractions.Fraction: importing fractions loads decimal and
    numbers, about a tenth of the start-up that `estimate` may take (`benchmarks/cli_startup.py`).
    It compares and combines with int, Fraction and Exact alike (anything with a numerator and a
    denominator), so the tests check it against the core's Fractions directly.
    """

    __slots__ = ("denominator", "numerator")
    __hash__ = None  # type: ignore[assignment]  # equal to a Fraction, so no hash of its own

    def __init__(self, numerator: int, denominator: int = 1) -> None:
        if denominator == 0:
            raise ZeroDivisionError(f"Exact({numerator}, 0)")
        if denominator < 0:
            numerator, denominator = -numerator, -denominator
        divisor, rest = abs(numerator), denominator
        while rest:  # Euclid: the greatest common divisor (denominator when numerator is 0)
            divisor, rest = rest, divisor % rest
        self.numerator = numerator // divisor
        self.denominator = denominator // divisor

    def __repr__(self) -> str:
        return f"Exact({self.numerator}, {self.denominator})"

    def __add__(self, other: Rational) -> Exact:
        n, d = other.numerator, other.denominator
        return Exact(self.numerator * d + n * self.denominator, self.denominator * d)

    __radd__ = __add__

    def __sub__(self, other: Rational) -> Exact:
        return self + Exact(-other.numerator, other.denominator)

    def __mul__(self, other: Rational) -> Exact:
        return Exact(self.numerator * other.numerator, self.denominator * other.denominator)

    __rmul__ = __mul__

    def __truediv__(self, other: Rational) -> Exact:
        return Exact(self.numerator * other.denominator, self.denominator * other.numerator)

    def __neg__(self) -> Exact:
        return Exact(-self.numerator, self.denominator)

    def __abs__(self) -> Exact:
        return Exact(abs(self.numerator), self.denominator)

    def _sign_of_difference(self, other: Rational) -> int:
        difference = self.numerator * other.denominator - other.numerator * self.denominator
        return (difference > 0) - (difference < 0)

    def __eq__(self, other: object) -> bool:
        if not (hasattr(other, "numerator") and hasattr(other, "denominator")):
            return NotImplemented
        return self._sign_of_difference(other) == 0

    def __lt__(self, other: Rational) -> bool:
        return self._sign_of_difference(other) < 0

    def __le__(self, other: Rational) -> bool:
        return self._sign_of_difference(other) <= 0

    def __gt__(self, other: Rational) -> bool:
        return self._sign_of_difference(other) > 0

    def __ge__(self, other: Rational) -> bool:
        return self._sign_of_difference(other) >= 0


def exact(value: Rational) -> Exact:
    """`value` (an int, a Fraction or an Exact) as an Exact."""
    return value if isinstance(value, Exact) else Exact(value.numerator, value.denominator)


# Babel's (CLDR's) symbols for each language, as the package caches them in
# iteragpu.i18n.number_symbols: tests/lab/test_lab_language.py pins the two together.
NUMBER_SYMBOLS: dict[str, dict[str, str]] = {
    "ko": {"group": ",", "decimal": ".", "minus": "-"},
    "id": {"group": ".", "decimal": ",", "minus": "-"},
}


def local_number(value: int | Rational, lang: str, places: int | None = 0) -> str:
    """`value` as a reader of `lang` writes it: rounded half up to at most `places` decimals
    (every decimal when `places` is None: the value must end), trailing zeros dropped, digits
    grouped by thousands.

    >>> local_number(Exact(14_000_000_000, 2**30), "id", 2), local_number(2**30, "ko")
    ('13,04', '1,073,741,824')
    """
    symbols = NUMBER_SYMBOLS[lang]
    if isinstance(value, int):
        text = str(value)
    else:
        text = exact_decimal_text(value) if places is None else format_decimal(value, places)
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    first = len(whole) % 3 or 3
    groups = [whole[:first]] + [whole[i : i + 3] for i in range(first, len(whole), 3)]
    text = symbols["group"].join(groups) + (symbols["decimal"] + fraction if fraction else "")
    return symbols["minus"] + text if negative else text


def format_bytes(value: int, lang: str) -> str:
    """Raw bytes, grouped as `lang` groups them.

    >>> format_bytes(14_000_000_000, "ko"), format_bytes(14_000_000_000, "id")
    ('14,000,000,000 B', '14.000.000.000 B')
    """
    return f"{local_number(value, lang)} B"


def _is_wide(character: str) -> bool:
    # East Asian Wide and Fullwidth ranges that the messages can hold (Hangul first);
    # tests/lab/test_lab_language.py checks every character of MESSAGES against unicodedata.
    code = ord(character)
    return (
        0xAC00 <= code <= 0xD7A3
        or 0x1100 <= code <= 0x115F
        or 0x2E80 <= code <= 0xA4CF
        or 0xF900 <= code <= 0xFAFF
        or 0xFE30 <= code <= 0xFE4F
        or 0xFF00 <= code <= 0xFF60
        or 0xFFE0 <= code <= 0xFFE6
    )


def text_cells(text: str) -> int:
    """Terminal cells `text` takes: a Hangul syllable takes two.

    >>> text_cells("peak"), text_cells("피크")
    (4, 4)
    """
    return sum(2 if _is_wide(c) else 1 for c in text)


def aligned(rows: Sequence[tuple[str, str]]) -> list[str]:
    """`label: value` lines whose values start in one column, in any script."""
    width = max(text_cells(label) for label, _ in rows) + 2
    return [f"{label}:{' ' * (width - text_cells(label) - 1)}{value}" for label, value in rows]


def dense_weight_bytes(parameters: int, bits: Rational) -> Exact:
    """Bytes taken by `parameters` dense values of `bits` bits each (uniform storage).

    A copy of `iteragpu.core.weights.dense_weight_bytes`, so that this script runs alone;
    tests/test_formula_copies.py pins it to that original.

    >>> dense_weight_bytes(7_000_000_000, 16)
    Exact(14000000000, 1)
    """
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise ValueError(f"parameters must be a positive whole number, got {parameters!r}")
    bits = exact(bits)
    if bits <= 0:
        raise ValueError(f"bits must be positive, got {bits}")
    return parameters * bits / 8


class LabError(Exception):
    """An error told to the user: a message key and its parameters, written in the reader's
    language when it is shown (`text`); `str()` gives the source language."""

    def __init__(self, key: str, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params = params

    def text(self, lang: str) -> str:
        return say(lang, self.key, **self.params)

    def __str__(self) -> str:
        return self.text(SOURCE_LANGUAGE)


class UsageError(LabError):
    """A one-line error for the user, with its exit code."""

    def __init__(self, key: str, code: int = EXIT_UNAVAILABLE, **params: object) -> None:
        super().__init__(key, **params)
        self.code = code


# ---------------------------------------------------------------------------------------------
# Numbers: the grammar shared with the CLI and the sizer (iteragpu.core.numbers)
# ---------------------------------------------------------------------------------------------

MAX_DIGITS = 50
MAX_EXPONENT = 50

_COUNT_SUFFIXES = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_COUNT_CHARACTERS = frozenset("0123456789_.eE+-")
# A suffix after a number of tokens (or a dimension): its decimal and its binary reading, both in
# use, so that `32k` is refused as ambiguous (the core's parse_tokens).
_TOKEN_SUFFIXES = {
    "K": (10**3, 2**10),
    "M": (10**6, 2**20),
    "G": (10**9, 2**30),
    "T": (10**12, 2**40),
}
_SHOWN_CHARACTERS = 40
# Where a decimal comma is read, a mark between one to three leading digits and exactly three
# more may as well group thousands (1,234 or 1.500): refused, never guessed.
_GROUP_DIGITS = 3


class NumberError(LabError, ValueError):
    """A number the shared grammar refuses; `reason` is the core's code for the same refusal
    (iteragpu.core.numbers.InputError.reason), the message is one line."""

    # The two values an ambiguous suffix may mean (decimal, binary), as the core's `readings`.
    readings: tuple[Exact, Exact] | None = None

    @property
    def reason(self) -> str:
        return self.key


def shown(text: str) -> str:
    """`text` quoted for an error message, cut short (`'...'...`) so that the message stays one
    short line; no word of any language (the core's `shown`)."""
    if len(text) <= _SHOWN_CHARACTERS:
        return repr(text)
    return f"{text[:_SHOWN_CHARACTERS]!r}..."


def limit_text(limit: int) -> str:
    """A limit as the grammar writes it: `1e15` for a large power of ten, else its digits.

    >>> limit_text(10**15), limit_text(64)
    ('1e15', '64')
    """
    digits = str(limit)
    if limit >= 10**4 and digits.rstrip("0") == "1":
        return f"1e{len(digits) - 1}"
    return digits


def decimal_comma(lang: str) -> bool:
    """Whether a reader of `lang` writes decimals with a comma (13,04), so that it is read."""
    return NUMBER_SYMBOLS[lang]["decimal"] == ","


def _refuse_non_ascii_digits(text: str) -> None:
    for character in text:
        if character.isdecimal() and not "0" <= character <= "9":
            import unicodedata  # only on this error path: it costs start-up otherwise

            name = unicodedata.name(character, "")
            raise NumberError(
                "non_ascii_digit",
                character=repr(character),
                codepoint=f"U+{ord(character):04X}{' ' + name if name else ''}",
            )


def _digits_end(text: str, start: int) -> int:
    """Where the digits starting at `start` end (`start` itself when there are none): ASCII
    digits, each `_` between two of them."""
    end = len(text)
    if start >= end or not "0" <= text[start] <= "9":
        return start
    i = start + 1
    while i < end:
        if "0" <= text[i] <= "9":
            i += 1
        elif text[i] == "_" and i + 1 < end and "0" <= text[i + 1] <= "9":
            i += 2
        else:
            break
    return i


def _scan(text: str, marks: str) -> tuple[str, str | None, str | None, str | None, str | None]:
    """(sign, whole, mark, fraction, exponent) of `text` if it is a number of the grammar with
    a decimal mark among `marks` (None for an absent part), else NumberError `not_number`:
    [+-] (digits [mark [digits]] | mark digits) [(e|E) [+-] digits]. Scanned by hand, as the
    core scans it: a regular expression costs start-up to compile."""
    end = len(text)
    i = 1 if text[:1] in ("+", "-") else 0
    sign = text[:i]
    whole_end = _digits_end(text, i)
    whole = text[i:whole_end] or None
    i = whole_end
    mark = fraction = exponent = None
    if i < end and text[i] in marks:
        mark = text[i]
        fraction_end = _digits_end(text, i + 1)
        fraction = text[i + 1 : fraction_end] or None
        i = fraction_end
    if whole is not None or fraction is not None:
        if i < end and text[i] in "eE":
            start = i + 1 + (text[i + 1 : i + 2] in ("+", "-"))
            exponent_end = _digits_end(text, start)
            exponent = text[i + 1 : exponent_end] if exponent_end > start else None
            i = exponent_end if exponent_end > start else -1
        if i == end:
            return sign, whole, mark, fraction, exponent
    raise NumberError("not_number", text=shown(text))


def _refuse_ambiguous(
    parts: tuple[str, str | None, str | None, str | None, str | None], text: str
) -> None:
    """Refuse `1,234` or `1.500` where a decimal comma is read: a mark after one to three
    leading digits (not a lone 0) and before exactly three may as well group thousands."""
    sign, whole, mark, fraction, exponent = parts
    if (
        mark is None
        or whole is None
        or fraction is None
        or not 1 <= len(whole) <= _GROUP_DIGITS
        or not whole.isdigit()
        or whole.startswith("0")
        or len(fraction) != _GROUP_DIGITS
        or not fraction.isdigit()
    ):
        return
    exponent_text = "" if exponent is None else text.strip()[-len(exponent) - 1 :]
    decimals = fraction.rstrip("0")
    if len(decimals) == _GROUP_DIGITS:
        decimals += "0"  # 1,2340 is 1.234 and no group of three
    raise NumberError(
        "ambiguous_separator",
        text=shown(text),
        whole=sign + whole + fraction + exponent_text,
        decimal=sign + whole + (mark + decimals if decimals else "") + exponent_text,
    )


def parse_number(text: str, lang: str = SOURCE_LANGUAGE) -> Exact:
    """The exact value of a number written in the shared grammar, read as a reader of `lang`
    writes it (the decimal comma where `lang` writes one, the point everywhere); NumberError,
    with the core's reason, otherwise. A copy of iteragpu.core.numbers.parse_number.

    >>> parse_number("7e9"), parse_number("1_000.5"), parse_number("+.25")
    (Exact(7000000000, 1), Exact(2001, 2), Exact(1, 4))
    >>> parse_number("4,5", "id")
    Exact(9, 2)
    """
    _refuse_non_ascii_digits(text)
    comma = decimal_comma(lang)
    parts = _scan(text.strip(), ".," if comma else ".")
    sign, whole, _, fraction, exponent = parts
    fraction = (fraction or "").replace("_", "")
    digits = (whole or "").replace("_", "") + fraction
    # Every digit counts, leading zeros included, as in the CLI (iteragpu.core.numbers).
    if len(digits) > MAX_DIGITS:
        raise NumberError("too_many_digits", text=shown(text), limit=MAX_DIGITS)
    exponent_text = (exponent or "0").replace("_", "")
    # Checked on its digits first, so that a 5,000-digit exponent never reaches int().
    exponent_digits = exponent_text.lstrip("+-").lstrip("0")
    if len(exponent_digits) > len(str(MAX_EXPONENT)) or int(exponent_digits or 0) > MAX_EXPONENT:
        raise NumberError("exponent_out_of_range", text=shown(text), limit=MAX_EXPONENT)
    if comma:
        _refuse_ambiguous(parts, text)
    scale = int(exponent_text) - len(fraction)
    magnitude = int(digits) * 10 ** max(scale, 0)
    return Exact(-magnitude if sign == "-" else magnitude, 10 ** max(-scale, 0))


def parse_count(text: str, lang: str = SOURCE_LANGUAGE, *, maximum: int) -> int:
    """A positive whole count: `7000000000`, `7e9`, `7B`, `1.5B`, `70M`, at most `maximum`
    (the core's parse_count).

    >>> parse_count("7B", maximum=10**15), parse_count("1,5B", "id", maximum=10**15)
    (7000000000, 1500000000)
    """
    _refuse_non_ascii_digits(text)
    number = text.strip()
    multiplier = 1
    if number[-1:] and number[-1] in "KkMmBbGgTt":
        multiplier = _COUNT_SUFFIXES[number[-1].upper()]
        number = number[:-1].rstrip()
    allowed = _COUNT_CHARACTERS | {","} if decimal_comma(lang) else _COUNT_CHARACTERS
    if not number or not allowed.issuperset(number):
        raise NumberError("not_count", text=shown(text))
    value = parse_number(number, lang) * multiplier
    if value.denominator != 1:
        raise NumberError("not_whole", text=shown(text))
    if value <= 0:
        raise NumberError("not_positive", text=shown(text))
    _check_maximum(value, maximum, text)
    return value.numerator  # whole: its denominator is 1


def _refuse_ambiguous_suffix(text: str, lang: str) -> None:
    """Refuse `32k` as the core's parse_tokens refuses it: a positive number of the grammar then
    K, M, G or T may be read in decimal (k = 1,000) or binary (k = 1,024); both readings are said
    in `lang`'s figures. Anything else is left to the grammar."""
    number = text.strip()
    suffix = number[-1:]
    if not suffix or suffix not in "KkMmGgTt":
        return
    number = number[:-1].rstrip()
    allowed = _COUNT_CHARACTERS | {","} if decimal_comma(lang) else _COUNT_CHARACTERS
    if not number or not allowed.issuperset(number):
        return
    try:
        value = parse_number(number, lang)
    except NumberError:
        return
    if value <= 0:
        return
    decimal_factor, binary_factor = _TOKEN_SUFFIXES[suffix.upper()]
    readings = (value * exact(decimal_factor), value * exact(binary_factor))
    error = NumberError(
        "ambiguous_suffix",
        text=shown(text),
        suffix=suffix,
        decimal_reading=local_number(readings[0], lang, None),
        binary_reading=local_number(readings[1], lang, None),
        decimal_factor=local_number(decimal_factor, lang),
        binary_factor=local_number(binary_factor, lang),
    )
    error.readings = readings
    raise error


def parse_whole(text: str, lang: str = SOURCE_LANGUAGE, *, minimum: int, maximum: int) -> int:
    """A whole number in [minimum, maximum], minimum 0 or 1 (a dimension, a count of passes),
    written in digits: `--context 32k` is refused as ambiguous (32,000 or 32,768), as the CLI
    refuses `--tokens 32k`.

    >>> parse_whole("6.4e1", minimum=1, maximum=2**31 - 1)
    64
    """
    _refuse_non_ascii_digits(text)
    _refuse_ambiguous_suffix(text, lang)
    value = parse_number(text, lang)
    if value < 0:
        raise NumberError("negative", text=shown(text))
    if value.denominator != 1:
        raise NumberError("not_whole", text=shown(text))
    if value < minimum:
        raise NumberError("not_positive", text=shown(text))
    _check_maximum(value, maximum, text)
    return value.numerator  # whole: its denominator is 1


def parse_decimal(
    text: str, lang: str = SOURCE_LANGUAGE, *, maximum: int, allow_zero: bool
) -> Exact:
    """A positive (or, with `allow_zero`, non-negative) exact number up to `maximum` (the
    core's parse_positive and parse_non_negative)."""
    value = parse_number(text, lang)
    if allow_zero and value < 0:
        raise NumberError("negative", text=shown(text))
    if not allow_zero and value <= 0:
        raise NumberError("not_positive", text=shown(text))
    _check_maximum(value, maximum, text)
    return value


def _check_maximum(value: Exact, maximum: int, text: str) -> None:
    if value > maximum:
        raise NumberError("too_large", text=shown(text), limit=limit_text(maximum))


# ---------------------------------------------------------------------------------------------
# Exact arithmetic and formatting (estimate)
# ---------------------------------------------------------------------------------------------


def ceil_fraction(value: Rational) -> int:
    """Smallest whole number >= value.

    >>> ceil_fraction(Exact(3, 2))
    2
    """
    return -((-value.numerator) // value.denominator)


def format_decimal(value: Rational, places: int = 2) -> str:
    """Round half up to `places` decimals, then drop trailing zeros (with a decimal point: see
    local_number for the reader's format).

    >>> format_decimal(Exact(14_000_000_000, 2**30))
    '13.04'
    >>> format_decimal(Exact(14))
    '14'
    """
    scale = 10**places
    scaled = exact(value) * scale
    sign = "-" if scaled < 0 else ""
    scaled = abs(scaled)
    rounded = (scaled.numerator * 2 + scaled.denominator) // (2 * scaled.denominator)
    whole, frac = divmod(rounded, scale)
    text = f"{whole}.{frac:0{places}d}".rstrip("0").rstrip(".") if places else str(whole)
    return sign + text if rounded else text


def exact_decimal_text(value: Rational) -> str:
    """The exact decimal expansion of a value whose denominator is 2^a * 5^b.

    Bytes divided by 10^9 or 2^30 always terminate, so the JSON can carry them exactly.

    >>> exact_decimal_text(Exact(14_000_000_000, 2**30))
    '13.03851604461669921875'
    """
    value = exact(value)
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    if denominator != 1:
        raise ValueError(f"{value} has no finite decimal expansion")
    places = max(twos, fives)
    scaled = abs(value.numerator) * (10**places // value.denominator)
    whole, frac = divmod(scaled, 10**places)
    text = str(whole) + (f".{frac:0{places}d}".rstrip("0").rstrip(".") if places else "")
    return "-" + text if value < 0 else text


def estimate(
    parameters: int, bits: Rational, reserve_gib: Rational, lang: str = SOURCE_LANGUAGE
) -> dict[str, Any]:
    """Weights of a dense set of parameters plus an assumed reserve; GB and GiB never mixed.

    In the JSON, `*_bytes` are integers (rounded up when the exact value is not whole) and the
    `*_gb` / `*_gib` strings are exact decimals; the text report rounds them to 2 places.
    """
    bits, reserve_gib = exact(bits), exact(reserve_gib)
    if reserve_gib < 0:
        raise ValueError(f"reserve must be zero or positive, got {reserve_gib}")
    weights = dense_weight_bytes(parameters, bits)
    reserve_bytes_exact = reserve_gib * BYTES_PER_GIB
    total_exact = weights + reserve_bytes_exact
    not_counted = list(NOT_COUNTED)
    notes = [say(lang, "note_weights_only"), say(lang, "note_reserve")]
    if bits < 16:
        not_counted += NOT_COUNTED_QUANTIZED
        notes.append(say(lang, "note_quantized"))
    return {
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "lab_version": LAB_VERSION,
        "command": "estimate",
        "language": lang,
        "parameters": parameters,
        "bits": exact_decimal_text(bits),
        "weights_bytes": ceil_fraction(weights),
        "weights_bytes_exact": exact_decimal_text(weights),
        "weights_gb": exact_decimal_text(weights / BYTES_PER_GB),
        "weights_gib": exact_decimal_text(weights / BYTES_PER_GIB),
        "reserve_gib": exact_decimal_text(reserve_gib),
        "reserve_bytes": ceil_fraction(reserve_bytes_exact),
        "total_gib": exact_decimal_text(total_exact / BYTES_PER_GIB),
        "total_bytes": ceil_fraction(total_exact),
        "bytes_per_gb": BYTES_PER_GB,
        "bytes_per_gib": BYTES_PER_GIB,
        "rounding": say(lang, "rounding_rule"),
        "not_counted": not_counted,
        "notes": notes,
    }


def decimal_value(text: str) -> Exact:
    """The value of a plain decimal such as exact_decimal_text writes it (`-13.5`), whatever its
    number of digits.

    >>> decimal_value("13.03851604461669921875") == Exact(14_000_000_000, 2**30)
    True
    """
    whole, _, fraction = text.lstrip("-").partition(".")
    value = Exact(int(whole + fraction), 10 ** len(fraction))
    return -value if text.startswith("-") else value


def format_estimate_text(result: dict[str, Any], lang: str = SOURCE_LANGUAGE) -> str:
    """The `estimate` report in `lang` (the notebook prints the same lines)."""
    weights = decimal_value(result["weights_bytes_exact"])
    weights_line = format_bytes(result["weights_bytes"], lang)
    if weights != result["weights_bytes"]:
        rounded = say(lang, "rounded_up_from", exact=local_number(weights, lang, None))
        weights_line += " " + rounded
    gb, gib = local_number(BYTES_PER_GB, lang), local_number(BYTES_PER_GIB, lang)
    rows = [
        (say(lang, "label_parameters"), local_number(result["parameters"], lang)),
        (say(lang, "label_bits"), local_number(decimal_value(result["bits"]), lang, 6)),
        (say(lang, "label_weights"), weights_line),
        (
            say(lang, "label_weights_gb"),
            f"{local_number(weights / BYTES_PER_GB, lang, 2)} GB (1 GB = {gb} B)",
        ),
        (
            say(lang, "label_weights_gib"),
            f"{local_number(weights / BYTES_PER_GIB, lang, 2)} GiB (1 GiB = {gib} B)",
        ),
        (
            say(lang, "label_reserve_gib"),
            f"{local_number(decimal_value(result['reserve_gib']), lang, 6)} GiB "
            + say(lang, "assumed"),
        ),
        (
            say(lang, "label_total_gib"),
            f"{local_number(decimal_value(result['total_gib']), lang, 2)} GiB "
            + say(lang, "weights_plus_reserve", total=format_bytes(result["total_bytes"], lang)),
        ),
        (
            say(lang, "label_not_counted"),
            say(lang, "list_separator").join(say(lang, n) for n in result["not_counted"]),
        ),
    ]
    rows += [(say(lang, "label_note"), note) for note in result["notes"]]
    title = say(lang, "estimate_title", version=LAB_VERSION)
    return "\n".join([title, *aligned(rows)]) + "\n"


# ---------------------------------------------------------------------------------------------
# The network: the small original dense network, and what the allocator will show (no PyTorch)
# ---------------------------------------------------------------------------------------------


def network_parameter_shapes(width: int) -> list[tuple[str, tuple[int, ...]]]:
    """Parameter tensors of the lab network: LayerNorm -> Linear(w, 4w) -> GELU -> Linear(4w, w).

    >>> network_parameter_shapes(2)
    [('norm.weight', (2,)), ('norm.bias', (2,)), ('up.weight', (8, 2)), ('up.bias', (8,)), \
('down.weight', (2, 8)), ('down.bias', (2,))]
    """
    hidden = 4 * width
    return [
        ("norm.weight", (width,)),
        ("norm.bias", (width,)),
        ("up.weight", (hidden, width)),
        ("up.bias", (hidden,)),
        ("down.weight", (width, hidden)),
        ("down.bias", (width,)),
    ]


def round_up_to_block(nbytes: int, block: int = ALLOCATOR_BLOCK_BYTES) -> int:
    """Round one allocation up to the caching allocator's block size.

    >>> round_up_to_block(1), round_up_to_block(512), round_up_to_block(513)
    (512, 512, 1024)
    """
    return -(-nbytes // block) * block


def _tensor(name: str, shape: tuple[int, ...], element_size: int) -> TensorPrediction:
    numel = 1
    for dim in shape:
        numel *= dim
    raw = numel * element_size
    allocated = round_up_to_block(raw)
    return {
        "name": name,
        "shape": list(shape),
        "numel": numel,
        "element_size_bytes": element_size,
        "raw_bytes": raw,
        "allocated_bytes": allocated,
        "rounding_bytes": allocated - raw,
    }


def _step(tensors: list[TensorPrediction], before: int) -> AllocationStep:
    raw = sum(t["raw_bytes"] for t in tensors)
    added = sum(t["allocated_bytes"] for t in tensors)
    return {
        "tensors": tensors,
        "raw_bytes": raw,
        "rounding_bytes": added - raw,
        "added_bytes": added,
        "allocated_bytes": before + added,
    }


def predict(
    batch: int, context: int, width: int, dtype: str, lang: str = SOURCE_LANGUAGE
) -> Prediction:
    """Allocated bytes that PyTorch's default caching allocator shows after `model_load` and
    `inputs` in a fresh process: each tensor the protocol creates, rounded up to 512 B.

    >>> p = predict(1, 16, 64, "float32")
    >>> p["phases"]["model_load"]["allocated_bytes"], p["phases"]["inputs"]["added_bytes"]
    (133632, 4096)
    """
    element_size = DTYPE_SIZES[dtype]
    parameters = [_tensor(n, s, element_size) for n, s in network_parameter_shapes(width)]
    model_load = _step(parameters, 0)
    inputs = _step(
        [_tensor("inputs", (batch, context, width), element_size)], model_load["allocated_bytes"]
    )
    # The protocol keeps the last forward output alive between phases.
    output = _step(
        [_tensor("output", (batch, context, width), element_size)], inputs["allocated_bytes"]
    )
    parameter_count = sum(t["numel"] for t in parameters)
    weights = dense_weight_bytes(parameter_count, 8 * element_size)
    return {
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "lab_version": LAB_VERSION,
        "command": "predict",
        "language": lang,
        "dimensions": {"batch": batch, "context": context, "width": width},
        "dtype": dtype,
        "element_size_bytes": element_size,
        "allocator": {
            "backend": "native",
            "block_bytes": ALLOCATOR_BLOCK_BYTES,
            "rule": say(lang, "allocator_rule", block=local_number(ALLOCATOR_BLOCK_BYTES, lang)),
        },
        "phases": {"model_load": model_load, "inputs": inputs},
        "kept_output": output,
        "weights_estimate": {
            "parameters": parameter_count,
            "bits": 8 * element_size,
            "weights_bytes": ceil_fraction(weights),
        },
        "not_predicted": [say(lang, key) for key in NOT_PREDICTED],
    }


def format_prediction_text(prediction: Prediction, lang: str = SOURCE_LANGUAGE) -> str:
    """The `predict` report in `lang`."""
    dims = prediction["dimensions"]
    size = prediction["element_size_bytes"]
    rows = [
        (
            say(lang, "label_input"),
            say(
                lang,
                "predict_input",
                batch=local_number(dims["batch"], lang),
                context=local_number(dims["context"], lang),
                width=local_number(dims["width"], lang),
                dtype=prediction["dtype"],
                size=local_number(size, lang),
            ),
        ),
        (say(lang, "label_rule"), prediction["allocator"]["rule"]),
    ]
    for name, step in prediction["phases"].items():
        rows.append(
            (
                name,
                say(
                    lang,
                    "predict_step",
                    allocated=format_bytes(step["allocated_bytes"], lang),
                    added=format_bytes(step["added_bytes"], lang),
                    raw=format_bytes(step["raw_bytes"], lang),
                    rounding=format_bytes(step["rounding_bytes"], lang),
                ),
            )
        )
        for t in step["tensors"]:
            shape = "x".join(local_number(d, lang) for d in t["shape"])
            raw = format_bytes(t["raw_bytes"], lang)
            rows.append(
                (
                    f"  {t['name']}",
                    f"{shape:>14}  {raw:>16} -> {format_bytes(t['allocated_bytes'], lang)}",
                )
            )
    check = prediction["weights_estimate"]
    rows.append(
        (
            say(lang, "label_estimate_check"),
            say(
                lang,
                "estimate_check",
                parameters=local_number(check["parameters"], lang),
                bits=check["bits"],
                bytes=format_bytes(check["weights_bytes"], lang),
            ),
        )
    )
    rows += [(say(lang, "label_not_predicted"), item) for item in prediction["not_predicted"]]
    title = say(lang, "predict_title", version=LAB_VERSION)
    return "\n".join([title, *aligned(rows)]) + "\n"


def predict_network(
    width: int, dtype: str, batch: int, context: int, lang: str = SOURCE_LANGUAGE
) -> dict[str, Any]:
    """The result's `network` block (kept from schema 1.0.0): parameter and input bytes."""
    prediction = predict(batch, context, width, dtype, lang)
    parameters = prediction["phases"]["model_load"]
    inputs = prediction["phases"]["inputs"]
    return {
        "architecture": say(lang, "network_architecture"),
        "parameter_tensors": [
            {"name": t["name"], "shape": t["shape"], "numel": t["numel"]}
            for t in parameters["tensors"]
        ],
        "parameter_count": prediction["weights_estimate"]["parameters"],
        "element_size_bytes": prediction["element_size_bytes"],
        "predicted_parameter_bytes": parameters["raw_bytes"],
        "predicted_parameter_bytes_rounded_512": parameters["added_bytes"],
        "predicted_input_bytes": inputs["raw_bytes"],
        "predicted_input_bytes_rounded_512": inputs["added_bytes"],
        "allocated_after_model_load_bytes": None,
    }


# ---------------------------------------------------------------------------------------------
# The training step: its model states, predicted (predict --task train; no PyTorch)
# ---------------------------------------------------------------------------------------------

TRAIN_OPTIMIZERS = ("adamw", "sgd")
TRAIN_PRECISIONS = ("fp32", "bf16", "autocast-bf16")
# The parameters' dtype under each precision: autocast keeps float32 weights and casts them for
# each operation (iteragpu.training.states.weight_dtype).
PRECISION_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "autocast-bf16": "float32"}
# AdamW's `step`: a 0-dim float32 tensor (torch.optim.optimizer._get_scalar_dtype).
STEP_DTYPE = "float32"
STEP_BYTES = 4


def train_state_items(shape: tuple[int, ...], dtype: str, optimizer: str) -> list[dict[str, Any]]:
    """What one trainable tensor adds to a training step with torch.optim's `optimizer` (not
    fused): its gradient, and AdamW's `exp_avg`, `exp_avg_sq` (the tensor's shape and dtype) and
    `step` (on the host: "Deliberately host `step` on CPU if both capturable and fused are off",
    torch/optim/adam.py); SGD without momentum keeps no state. A copy of
    iteragpu.training.states.state_items for the lab's optimizers, which
    tests/test_formula_copies.py pins to that original.

    >>> items = train_state_items((2, 3), "float32", "adamw")
    >>> [(i["name"], i["bytes"], i["device"]) for i in items]
    [('grad', 24, 'gpu'), ('step', 4, 'host'), ('exp_avg', 24, 'gpu'), ('exp_avg_sq', 24, 'gpu')]
    """
    numel = 1
    for size in shape:
        numel *= size
    tensor_bytes = numel * DTYPE_SIZES[dtype]

    def item(kind: str, name: str, shape: tuple[int, ...], dtype: str, size: int, device: str):  # type: ignore[no-untyped-def]
        return {
            "kind": kind,
            "name": name,
            "shape": shape,
            "dtype": dtype,
            "bytes": size,
            "device": device,
        }

    items = [item("gradient", "grad", shape, dtype, tensor_bytes, "gpu")]
    if optimizer == "adamw":
        items.append(item("optimizer", "step", (), STEP_DTYPE, STEP_BYTES, "host"))
        items += [
            item("optimizer", n, shape, dtype, tensor_bytes, "gpu")
            for n in ("exp_avg", "exp_avg_sq")
        ]
    return items


# What each phase of a step leaves alive of the model states: (gradients, optimizer state).
# Backward creates the gradients; the optimizer's first step creates its state, which stays;
# zero_grad(set_to_none=True) frees the gradients.
STEP_STATES = {
    "first_step": {
        "forward": (False, False),
        "loss": (False, False),
        "backward": (True, False),
        "optimizer_step": (True, True),
        "zero_grad": (False, True),
    },
    "warm_step": {
        "forward": (False, True),
        "loss": (False, True),
        "backward": (True, True),
        "optimizer_step": (True, True),
        "zero_grad": (False, True),
    },
}


def predict_train(
    batch: int,
    context: int,
    width: int,
    precision: str,
    optimizer: str,
    lang: str = SOURCE_LANGUAGE,
) -> dict[str, Any]:
    """The model states' allocated bytes after each phase of the lab's training step, before
    any GPU: parameters, gradients and optimizer state, each tensor rounded up to the caching
    allocator's 512-byte blocks (the host's `step` tensors apart). Activations, temporaries and
    library workspaces are not predicted: what `measure` finds beyond these parts.

    >>> p = predict_train(1, 16, 64, "fp32", "adamw")
    >>> [p["phases"]["first_step"][n]["model_state_allocated_bytes"] for n in STEP_PHASES]
    [133632, 133632, 267264, 534528, 400896]
    """
    dtype = PRECISION_DTYPES[precision]
    size = DTYPE_SIZES[dtype]
    shapes = network_parameter_shapes(width)
    parameters = _step([_tensor(n, s, size) for n, s in shapes], 0)
    activation = (batch, context, width)
    inputs = _step(
        [_tensor("inputs", activation, size), _tensor("target", activation, size)],
        parameters["allocated_bytes"],
    )
    items = []
    for name, shape in shapes:
        for state in train_state_items(shape, dtype, optimizer):
            on_device = state["device"] == "gpu"
            rounded = round_up_to_block(state["bytes"]) if on_device else 0
            items.append(
                {"tensor": name, **state, "shape": list(state["shape"]), "allocated_bytes": rounded}
            )

    def total(kind: str, field: str, device: str = "gpu") -> int:
        return sum(i[field] for i in items if i["kind"] == kind and i["device"] == device)

    def level(gradients: bool, states: bool) -> dict[str, int]:
        parts = {
            "parameters_allocated_bytes": parameters["added_bytes"],
            "gradients_allocated_bytes": total("gradient", "allocated_bytes") if gradients else 0,
            "optimizer_state_allocated_bytes": total("optimizer", "allocated_bytes")
            if states
            else 0,
            "optimizer_state_host_bytes": total("optimizer", "bytes", "host") if states else 0,
        }
        parts["model_state_allocated_bytes"] = sum(
            v for k, v in parts.items() if k.endswith("_allocated_bytes")
        )
        return parts

    phases: dict[str, Any] = {"model_load": level(False, False), "inputs": level(False, False)}
    for kind, states in STEP_STATES.items():
        phases[kind] = {name: level(*alive) for name, alive in states.items()}
    return {
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "lab_version": LAB_VERSION,
        "command": "predict",
        "task": "train",
        "language": lang,
        "dimensions": {"batch": batch, "context": context, "width": width},
        "precision": precision,
        "optimizer": optimizer,
        "dtype": dtype,
        "element_size_bytes": size,
        "allocator": {
            "backend": "native",
            "block_bytes": ALLOCATOR_BLOCK_BYTES,
            "rule": say(lang, "allocator_rule", block=local_number(ALLOCATOR_BLOCK_BYTES, lang)),
        },
        "parameters": parameters,
        "inputs": inputs,
        "state_items": items,
        "phases": phases,
        "not_predicted": [say(lang, key) for key in TRAIN_NOT_PREDICTED],
    }


# What `predict --task train` leaves out (message keys).
TRAIN_NOT_PREDICTED = (
    "not_predicted_activations",
    "not_predicted_workspace",
    "not_predicted_reserved",
    "not_predicted_context",
)


def predicted_parts(prediction: dict[str, Any], phase: str, step: int | None) -> dict[str, int]:
    """The predicted parts at the end of `phase` (of training step `step`)."""
    phases = prediction["phases"]
    if step is None:
        return dict(phases[phase])
    return dict(phases["first_step" if step == 1 else "warm_step"][phase])


def format_train_prediction_text(prediction: dict[str, Any], lang: str = SOURCE_LANGUAGE) -> str:
    """The `predict --task train` report in `lang`."""
    dims = prediction["dimensions"]
    rows = [
        (
            say(lang, "label_input"),
            say(
                lang,
                "predict_train_input",
                batch=local_number(dims["batch"], lang),
                context=local_number(dims["context"], lang),
                width=local_number(dims["width"], lang),
                precision=prediction["precision"],
                optimizer=prediction["optimizer"],
                dtype=prediction["dtype"],
            ),
        ),
        (say(lang, "label_rule"), prediction["allocator"]["rule"]),
        (
            say(lang, "label_parameters"),
            say(
                lang,
                "predict_step",
                allocated=format_bytes(prediction["parameters"]["allocated_bytes"], lang),
                added=format_bytes(prediction["parameters"]["added_bytes"], lang),
                raw=format_bytes(prediction["parameters"]["raw_bytes"], lang),
                rounding=format_bytes(prediction["parameters"]["rounding_bytes"], lang),
            ),
        ),
        (
            say(lang, "label_inputs_target"),
            say(
                lang,
                "predict_train_inputs",
                added=format_bytes(prediction["inputs"]["added_bytes"], lang),
            ),
        ),
    ]
    named: list[tuple[str, int | None]] = [("model_load", None), ("inputs", None)]
    named += [(n, step) for step in (1, 2) for n in STEP_PHASES]
    for name, step in named:
        parts = predicted_parts(prediction, name, step)
        where = (
            name
            if step is None
            else say(lang, "step_phase_" + ("first" if step == 1 else "warm"), phase=name)
        )
        rows.append(
            (
                where,
                say(
                    lang,
                    "predict_train_level",
                    total=format_bytes(parts["model_state_allocated_bytes"], lang),
                    parameters=format_bytes(parts["parameters_allocated_bytes"], lang),
                    gradients=format_bytes(parts["gradients_allocated_bytes"], lang),
                    optimizer=format_bytes(parts["optimizer_state_allocated_bytes"], lang),
                    host=format_bytes(parts["optimizer_state_host_bytes"], lang),
                ),
            )
        )
    rows += [(say(lang, "label_not_predicted"), item) for item in prediction["not_predicted"]]
    title = say(lang, "predict_train_title", version=LAB_VERSION)
    return "\n".join([title, *aligned(rows)]) + "\n"


# ---------------------------------------------------------------------------------------------
# The protocol: the six steps around a phase (testable without a GPU: counters are injected)
# ---------------------------------------------------------------------------------------------


class TorchCounterSource:
    """The real counter source: torch.cuda functions bound to one device."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._cuda = torch.cuda
        self._device = device

    def synchronize(self) -> None:
        self._cuda.synchronize(self._device)

    def memory_allocated(self) -> int:
        return int(self._cuda.memory_allocated(self._device))

    def memory_reserved(self) -> int:
        return int(self._cuda.memory_reserved(self._device))

    def max_memory_allocated(self) -> int:
        return int(self._cuda.max_memory_allocated(self._device))

    def max_memory_reserved(self) -> int:
        return int(self._cuda.max_memory_reserved(self._device))

    def reset_peak_memory_stats(self) -> None:
        self._cuda.reset_peak_memory_stats(self._device)


class CountersUnavailable(RuntimeError):
    """The allocator's counters mean nothing here (e.g. its cache is bypassed)."""


class UnreadableCounters:
    """Synchronises the device but refuses every counter, so each one is stored as null.

    With PYTORCH_NO_CUDA_MEMORY_CACHING set, PyTorch bypasses its caching allocator and the
    counters read 0 whatever is allocated: a 0 that must not be mistaken for a reading.
    """

    def __init__(self, source: CounterSource, reason: str) -> None:
        self._source = source
        self.reason = reason

    def synchronize(self) -> None:
        self._source.synchronize()

    def _refuse(self) -> int:
        raise CountersUnavailable(self.reason)

    def memory_allocated(self) -> int:
        return self._refuse()

    def memory_reserved(self) -> int:
        return self._refuse()

    def max_memory_allocated(self) -> int:
        return self._refuse()

    def max_memory_reserved(self) -> int:
        return self._refuse()

    def reset_peak_memory_stats(self) -> None:
        self._source.reset_peak_memory_stats()


def build_torch_network(torch: Any, width: int, device: Any, dtype: Any) -> Any:
    """The lab network; its parameters follow network_parameter_shapes(width)."""
    from collections import OrderedDict

    nn = torch.nn
    hidden = 4 * width
    kw = {"device": device, "dtype": dtype}
    return nn.Sequential(
        OrderedDict(
            [
                ("norm", nn.LayerNorm(width, **kw)),
                ("up", nn.Linear(width, hidden, **kw)),
                ("act", nn.GELU()),
                ("down", nn.Linear(hidden, width, **kw)),
            ]
        )
    ).eval()


class TorchWorkload:
    """The real workload: the small dense network on a synthetic input, seeded."""

    def __init__(
        self, torch: Any, device: Any, batch: int, context: int, width: int, dtype: str
    ) -> None:
        self._torch = torch
        self._device = device
        self._shape = (batch, context, width)
        self._width = width
        self._dtype = getattr(torch, dtype)
        self.model: Any = None
        self.inputs: Any = None
        self.output: Any = None

    def load_model(self) -> None:
        self._torch.manual_seed(SEED)
        self.model = build_torch_network(self._torch, self._width, self._device, self._dtype)

    def make_inputs(self) -> None:
        generator = self._torch.Generator(device=self._device).manual_seed(SEED)
        self.inputs = self._torch.randn(
            self._shape, generator=generator, device=self._device, dtype=self._dtype
        )

    def forward(self) -> None:
        with self._torch.inference_mode():
            # The previous output stays alive until the new one replaces it.
            self.output = self.model(self.inputs)


class TorchTrainWorkload(TorchWorkload):
    """The lab's training step: the same network and input, a target, the mean squared error,
    torch.optim's AdamW or SGD with their defaults (AdamW's foreach mode on a GPU, its `step`
    on the host; SGD without momentum), under a precision of TRAIN_PRECISIONS."""

    def __init__(
        self,
        torch: Any,
        device: Any,
        batch: int,
        context: int,
        width: int,
        precision: str,
        optimizer: str,
    ) -> None:
        super().__init__(torch, device, batch, context, width, PRECISION_DTYPES[precision])
        self._autocast = precision == "autocast-bf16"
        self._optimizer_name = optimizer
        self.optimizer: Any = None
        self.target: Any = None
        self.loss_value: Any = None

    def load_model(self) -> None:
        super().load_model()
        self.model.train()
        make = self._torch.optim.AdamW if self._optimizer_name == "adamw" else self._torch.optim.SGD
        self.optimizer = make(self.model.parameters())  # no state until its first step

    def make_inputs(self) -> None:
        super().make_inputs()
        generator = self._torch.Generator(device=self._device).manual_seed(SEED + 1)
        self.target = self._torch.randn(
            self._shape, generator=generator, device=self._device, dtype=self._dtype
        )

    def _region(self) -> Any:
        import contextlib

        if not self._autocast:
            return contextlib.nullcontext()
        return self._torch.autocast(device_type=self._device.type, dtype=self._torch.bfloat16)

    def forward(self) -> None:
        with self._region():
            self.output = self.model(self.inputs)

    def loss(self) -> None:
        with self._region():
            self.loss_value = self._torch.nn.functional.mse_loss(self.output, self.target)

    def backward(self) -> None:
        self.loss_value.backward()
        # The graph is freed; dropping the output and the loss too leaves no activation alive.
        self.output = self.loss_value = None

    def optimizer_step(self) -> None:
        self.optimizer.step()

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def parts(self) -> dict[str, int | None]:
        return tensor_parts(self.model, self.optimizer, str(self._device))


COUNTER_KEYS: tuple[CounterKey, ...] = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (SIGINT) but with its own exit code."""


# Exit code and message key of each interrupt, by exception type name (as phase records store
# it).
INTERRUPTS = {
    "KeyboardInterrupt": (EXIT_INTERRUPTED, "interrupted_sigint"),
    "Terminated": (EXIT_TERMINATED, "terminated_sigterm"),
}


def _interrupt(name: str) -> tuple[int, str]:
    # Any other KeyboardInterrupt (a library's subclass) counts as SIGINT.
    return INTERRUPTS.get(name, INTERRUPTS["KeyboardInterrupt"])


def interrupt_exit_code(exc: BaseException) -> int:
    return _interrupt(type(exc).__name__)[0]


def _interrupt_message(exc: BaseException, lang: str) -> str:
    return say(lang, _interrupt(type(exc).__name__)[1])


def _describe_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:2000] + "..."


def out_of_memory_kind(exc: BaseException) -> str | None:
    """Which part of the GPU stack ran out of memory, or None when `exc` is something else.

    - `allocator`: PyTorch's caching allocator raised torch.OutOfMemoryError. Before raising,
      it has already released its unused cached blocks, so end_reserved is read after that.
    - `cublas`: cuBLAS (hipBLAS) could not allocate its workspace or handle.
    - `cuda`: another CUDA (HIP) call reported that memory ran out.
    A host MemoryError is not a GPU out-of-memory.
    """
    text = str(exc)
    if "CUBLAS_STATUS_ALLOC_FAILED" in text or "HIPBLAS_STATUS_ALLOC_FAILED" in text:
        return "cublas"
    if type(exc).__name__ == "OutOfMemoryError":
        return "allocator"
    if isinstance(exc, MemoryError):
        return None
    return "cuda" if "out of memory" in text.lower() else None


def _new_record(
    phase: str, repeat: int | None, forward_passes: int, step: int | None = None
) -> PhaseRecord:
    return {
        "phase": phase,
        "repeat": repeat,
        "step": step,
        "forward_passes": forward_passes,
        "status": "ok",
        "peak_reset": False,
        "start_allocated_bytes": None,
        "start_reserved_bytes": None,
        "peak_allocated_bytes": None,
        "peak_reserved_bytes": None,
        "end_allocated_bytes": None,
        "end_reserved_bytes": None,
        "duration_ns": None,
        "error": None,
        "read_errors": {},
    }


def _fail(record: PhaseRecord, step: str, exc: BaseException) -> None:
    if record["error"] is None:  # keep the first error: the others follow from it
        kind = out_of_memory_kind(exc)
        record["status"] = "failed"
        record["error"] = {
            "step": step,
            "type": type(exc).__name__,
            "message": _describe_error(exc),
            "out_of_memory": kind is not None,
            "out_of_memory_kind": kind,
        }


def _read(record: PhaseRecord, key: CounterKey, counter: Callable[[], int]) -> None:
    try:
        record[key] = int(counter())
    except Exception as exc:
        record["read_errors"][key] = f"{type(exc).__name__}: {_describe_error(exc)}"


def _read_end(record: PhaseRecord, source: CounterSource) -> None:
    if record["peak_reset"]:
        # Peaks are only meaningful for this phase when they were reset at its start.
        _read(record, "peak_allocated_bytes", source.max_memory_allocated)
        _read(record, "peak_reserved_bytes", source.max_memory_reserved)
    _read(record, "end_allocated_bytes", source.memory_allocated)
    _read(record, "end_reserved_bytes", source.memory_reserved)


def _close_interrupted(record: PhaseRecord, source: CounterSource) -> None:
    """After an interrupt: synchronize, then take the final readings that are still missing."""
    final: list[tuple[CounterKey, Callable[[], int]]] = []
    if record["peak_reset"]:
        final += [
            ("peak_allocated_bytes", source.max_memory_allocated),
            ("peak_reserved_bytes", source.max_memory_reserved),
        ]
    final += [
        ("end_allocated_bytes", source.memory_allocated),
        ("end_reserved_bytes", source.memory_reserved),
    ]
    import contextlib

    try:
        with contextlib.suppress(Exception):
            source.synchronize()
        for key, counter in final:
            if record[key] is None:
                _read(record, key, counter)
    except KeyboardInterrupt:
        pass  # a second interrupt: keep what was read


def phase_protocol(
    record: PhaseRecord,
    source: CounterSource,
    clock: Callable[[], int] = time.perf_counter_ns,
    lang: str = SOURCE_LANGUAGE,
) -> Iterator[None]:
    """The guide's six steps around one phase: the only copy of the protocol, which `measure`'s
    forward passes, its training step and the Recorder all drive.

    1. synchronize the device; 2. read start allocated and reserved; 3. reset the peaks;
    4. run the phase: this generator yields there, once, when steps 1 to 3 succeeded (the
    caller runs the phase, then resumes it, or throws the phase's exception into it);
    5. synchronize, read both absolute peaks and both end levels, record success or the error;
    6. keep raw bytes, `None` (JSON null) for anything not read. An interrupt (SIGINT or
    SIGTERM) keeps the phase, as `interrupted`, with its final readings.
    """
    step = "synchronize_before"
    try:
        try:
            source.synchronize()
        except Exception as exc:
            _fail(record, step, exc)
        step = "read_start"
        _read(record, "start_allocated_bytes", source.memory_allocated)
        _read(record, "start_reserved_bytes", source.memory_reserved)
        if record["error"] is None:
            step = "reset_peak"
            try:
                source.reset_peak_memory_stats()
                record["peak_reset"] = True
            except Exception as exc:
                _fail(record, step, exc)
        if record["error"] is None:
            started = clock()
            step = "run"
            try:
                yield
            except Exception as exc:
                _fail(record, step, exc)
            step = "synchronize_after"
            try:
                source.synchronize()
            except Exception as exc:
                _fail(record, step, exc)
            record["duration_ns"] = clock() - started
        step = "read_end"
        _read_end(record, source)
    except KeyboardInterrupt as exc:
        record["status"] = "interrupted"
        record["error"] = {
            "step": step,
            "type": type(exc).__name__,
            "message": _interrupt_message(exc, lang),
            "out_of_memory": False,
            "out_of_memory_kind": None,
        }
        _close_interrupted(record, source)


def resume(steps: Iterator[None], exc: BaseException | None = None) -> None:
    """Steps 5 and 6 of a phase_protocol that yielded: `exc` is what the phase raised."""
    try:
        if exc is None:
            next(steps)
        else:
            steps.throw(exc)  # type: ignore[attr-defined]
    except StopIteration:
        pass


def measure_phase(
    phase: str,
    source: CounterSource,
    action: Callable[[], None],
    *,
    repeat: int | None = None,
    forward_passes: int = 0,
    step: int | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
    lang: str = SOURCE_LANGUAGE,
) -> PhaseRecord:
    """Run `action` as one phase under phase_protocol and return its record."""
    record = _new_record(phase, repeat, forward_passes, step)
    steps = phase_protocol(record, source, clock, lang)
    try:
        next(steps)  # steps 1 to 3; StopIteration when the phase cannot run
    except StopIteration:
        return record
    try:
        action()
    except BaseException as exc:  # an interrupt too: the protocol records it
        resume(steps, exc)
    else:
        resume(steps)
    return record


def _outcome(
    status: str = "ok",
    exit_code: int = EXIT_OK,
    phase: str | None = None,
    repeat: int | None = None,
    error: OutcomeError | None = None,
    complete_readings: bool = True,
    step: int | None = None,
) -> Outcome:
    return {
        "status": status,
        "exit_code": exit_code,
        "failed_phase": phase,
        "failed_repeat": repeat,
        "failed_step": step,
        "error": error,
        "complete_readings": complete_readings,
    }


def _interrupted(
    exc_type: str,
    phase: str | None,
    repeat: int | None,
    complete_readings: bool,
    lang: str,
    step: int | None = None,
) -> Outcome:
    code, key = _interrupt(exc_type)
    error: OutcomeError = {"type": exc_type, "message": say(lang, key)}
    return _outcome("interrupted", code, phase, repeat, error, complete_readings, step)


def settle(outcome: Outcome, record: PhaseRecord, lang: str) -> Outcome:
    """The run's outcome once `record` is kept: the first failed or interrupted phase decides."""
    if record["read_errors"]:
        outcome["complete_readings"] = False
    err = record["error"]
    if outcome["status"] != "ok" or record["status"] == "ok" or err is None:
        return outcome
    where = (record["phase"], record["repeat"])
    complete = outcome["complete_readings"]
    if record["status"] == "interrupted":
        return _interrupted(err["type"], *where, complete, lang, record["step"])
    error: OutcomeError = {"type": err["type"], "message": err["message"]}
    return _outcome("failed", EXIT_PHASE_FAILED, *where, error, complete, record["step"])


# The phases of one training step, in the order they run (measure --task train, predict).
STEP_PHASES = ("forward", "loss", "backward", "optimizer_step", "zero_grad")

# One planned phase: its name, what it runs, its repeat (warm_forward), forward passes, step.
Planned = tuple[str, "Callable[[], None]", "int | None", int, "int | None"]


def phase_plan(workload: Any, warmup: int, repeats: int, steps: int | None) -> list[Planned]:
    """The phases `measure` runs: the forward passes, or (`steps` given) the training steps."""
    plan: list[Planned] = [
        ("model_load", workload.load_model, None, 0, None),
        ("inputs", workload.make_inputs, None, 0, None),
    ]
    if steps is not None:
        for step in range(1, steps + 1):
            plan += [
                (n, getattr(workload, n), None, int(n == "forward"), step) for n in STEP_PHASES
            ]
        return plan

    def warm_up() -> None:
        for _ in range(warmup):
            workload.forward()

    plan += [
        ("cold_forward", workload.forward, None, 1, None),
        ("warmup", warm_up, None, warmup, None),
    ]
    plan += [("warm_forward", workload.forward, i, 1, None) for i in range(1, repeats + 1)]
    return plan


def run_protocol(
    source: CounterSource,
    workload: Workload,
    *,
    warmup: int = 0,
    repeats: int = 1,
    steps: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
    clock: Callable[[], int] = time.perf_counter_ns,
    lang: str = SOURCE_LANGUAGE,
) -> tuple[list[PhaseRecord], Outcome]:
    """All phases in order; stops at the first failed or interrupted phase. A workload that
    counts its own tensors (`parts()`) gets each phase's parts recorded too."""
    plan = phase_plan(workload, warmup, repeats, steps)
    count_parts = getattr(workload, "parts", None)
    phases: list[PhaseRecord] = []
    outcome = _outcome()
    try:
        for index, (name, action, repeat, passes, step) in enumerate(plan, start=1):
            label = name if repeat is None else f"{name} {repeat}/{repeats}"
            label = label if step is None else f"{name} {step}/{steps}"
            where = f"[{index}/{len(plan)}] {label}"
            record = measure_phase(
                name,
                source,
                action,
                repeat=repeat,
                forward_passes=passes,
                step=step,
                clock=clock,
                lang=lang,
            )
            if count_parts is not None:
                record["parts"] = phase_parts(record, count_parts)
            phases.append(record)
            outcome = settle(outcome, record, lang)
            err = record["error"]
            if record["status"] == "interrupted" and err is not None:
                progress(f"{where}: {err['message']}")
                break
            if record["status"] != "ok" and err is not None:
                progress(
                    f"{where}: "
                    + say(lang, "phase_failed", error=f"{err['type']}: {err['message']}")
                )
                break
            progress(f"{where}: " + phase_ok_text(record, lang))
    except KeyboardInterrupt as exc:  # between two phases: the phases read so far are kept
        stopped = plan[min(len(phases), len(plan) - 1)]  # the phase that did not start
        outcome = _interrupted(
            type(exc).__name__,
            stopped[0],
            stopped[2],
            outcome["complete_readings"],
            lang,
            stopped[4],
        )
    return phases, outcome


def phase_ok_text(record: PhaseRecord, lang: str) -> str:
    """A phase that succeeded, in one progress line: its duration and its allocated peak."""
    peak = record["peak_allocated_bytes"]
    duration = record["duration_ns"]
    not_read = say(lang, "value_not_read")
    milliseconds = not_read if duration is None else local_number(Exact(duration, 10**6), lang, 3)
    peak_text = not_read if peak is None else format_bytes(peak, lang)
    return say(lang, "phase_ok", ms=milliseconds, peak=peak_text)


def phase_predictions(
    prediction: Prediction, phases: Sequence[PhaseRecord]
) -> dict[str, int | None]:
    """Attach to each phase the allocated levels predicted at its start and end (in place).

    Returns the summary stored under the result's `prediction`: in particular the bytes that
    cold_forward added beyond the prediction (library workspaces such as cuBLAS's, which the
    prediction leaves out, not the model).
    """
    model = prediction["phases"]["model_load"]["allocated_bytes"]
    inputs = prediction["phases"]["inputs"]["allocated_bytes"]
    kept = prediction["kept_output"]["allocated_bytes"]
    levels = {
        "model_load": (0, model),
        "inputs": (model, inputs),
        "cold_forward": (inputs, kept),
        "warmup": (kept, kept),
        "warm_forward": (kept, kept),
    }
    unexplained: int | None = None
    for record in phases:
        start, end = levels[record["phase"]]
        measured_start, measured_end = (
            record["start_allocated_bytes"],
            record["end_allocated_bytes"],
        )
        record["prediction"] = {
            "start_allocated_bytes": start,
            "end_allocated_bytes": end,
            "start_allocated_difference_bytes": None
            if measured_start is None
            else measured_start - start,
            "end_allocated_difference_bytes": None if measured_end is None else measured_end - end,
        }
        if (
            record["phase"] == "cold_forward"
            and measured_start is not None
            and measured_end is not None
        ):
            unexplained = (measured_end - end) - (measured_start - start)
    return {"cold_forward_unexplained_bytes": unexplained}


# ---------------------------------------------------------------------------------------------
# Parts: what the program's own tensors hold at a phase's end (parameters, gradients, state)
# ---------------------------------------------------------------------------------------------

# The parts counted by walking the tensors, in raw bytes and as the caching allocator takes
# them (each storage rounded up to 512 B), then what is computed from them and the counters.
COUNTED_PARTS = ("parameters", "gradients", "optimizer_state")


def tensor_parts(model: Any, optimizer: Any, device: str) -> dict[str, int | None]:
    """The bytes the program's own tensors hold on `device` ("cuda:0", or "cpu"), by part:
    the parameters (the model's and the optimizer's), their `.grad`, and every tensor the
    optimizer keeps in its `state`, each storage counted once (a tied weight is one), raw and
    rounded up to the caching allocator's 512-byte blocks as it was requested. Optimizer state
    on the host (AdamW's `step`, unless fused or capturable) is counted apart; without an
    optimizer its parts are None: not counted, never 0. No PyTorch import: it reads the tensors
    it is given (`untyped_storage()`, `device`)."""
    seen: set[tuple[str, int, int]] = set()
    counted: dict[str, int | None] = {}
    for part in COUNTED_PARTS:
        counted[f"{part}_bytes"] = counted[f"{part}_allocated_bytes"] = 0
    counted["optimizer_state_host_bytes"] = 0

    def add(part: str, tensor: Any) -> None:
        storage = tensor.untyped_storage()
        where = str(tensor.device)
        key = (where, storage.data_ptr(), id(storage) if storage.data_ptr() == 0 else 0)
        if key in seen:
            return
        seen.add(key)
        nbytes = int(storage.nbytes())
        if where == device:
            counted[f"{part}_bytes"] += nbytes  # type: ignore[operator]
            counted[f"{part}_allocated_bytes"] += round_up_to_block(nbytes)  # type: ignore[operator]
        elif part == "optimizer_state" and where == "cpu":
            counted["optimizer_state_host_bytes"] += nbytes  # type: ignore[operator]

    parameters = list(model.parameters()) if model is not None else []
    groups = optimizer.param_groups if optimizer is not None else []
    parameters += [p for group in groups for p in group["params"]]
    for parameter in parameters:
        add("parameters", parameter)
    for parameter in parameters:
        if parameter.grad is not None:
            add("gradients", parameter.grad)
    if optimizer is None:
        for key in ("optimizer_state_bytes", "optimizer_state_allocated_bytes"):
            counted[key] = None
        counted["optimizer_state_host_bytes"] = None
        return counted
    for state in optimizer.state.values():
        for value in state.values():
            if hasattr(value, "untyped_storage"):
                add("optimizer_state", value)
    return counted


def phase_parts(record: PhaseRecord, count: Callable[[], dict[str, int | None]]) -> Parts | None:
    """The parts of `record` at its end: what `count` walks, the model states' allocated sum,
    the rest of allocated ("activations and temporaries": end allocated minus the counted parts,
    never below 0, null when a part or the counter is missing) and the peak's excess over the
    end level. None when the tensors could not be walked."""
    try:
        counted = count()
    except Exception:
        return None
    parts: dict[str, int | None] = dict(counted)
    sums = [counted[f"{part}_allocated_bytes"] for part in COUNTED_PARTS]
    model_state = None if None in sums else sum(s or 0 for s in sums)
    end, peak = record["end_allocated_bytes"], record["peak_allocated_bytes"]
    rest = None if end is None or model_state is None else end - model_state
    parts["model_state_allocated_bytes"] = model_state
    parts["activations_and_temporaries_bytes"] = None if rest is None or rest < 0 else rest
    parts["peak_excess_bytes"] = None if end is None or peak is None else peak - end
    return parts  # type: ignore[return-value]


def parameter_groups(model: Any) -> list[dict[str, Any]] | None:
    """The model's parameters grouped by shape, dtype and whether they train, with their count:
    what `iteragpu report` states each one's gradient and optimizer state from."""
    if model is None:
        return None
    groups: dict[tuple[Any, ...], int] = {}
    try:
        parameters = list({id(p): p for p in model.parameters()}.values())  # tied: once
    except Exception:
        return None
    for parameter in parameters:
        key = (
            tuple(parameter.shape),
            str(parameter.dtype).removeprefix("torch."),
            bool(parameter.requires_grad),
        )
        groups[key] = groups.get(key, 0) + 1
    return [
        {"shape": list(shape), "dtype": dtype, "trainable": trainable, "count": count}
        for (shape, dtype, trainable), count in groups.items()
    ]


# ---------------------------------------------------------------------------------------------
# Recorder: the protocol around the phases of your own loop (`from mesure_memoire import ...`)
# ---------------------------------------------------------------------------------------------

# A phase's name in a Recorder: a word of ASCII letters, digits and `_.:-`, at most 64.
PHASE_NAME_CHARACTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"
)
MAX_PHASE_NAME = 64
MAX_RANKS = 10**6


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _distributed_rank(torch: Any) -> tuple[int, int] | None:
    """(rank, world size) of torch.distributed's default group, else of torchrun's variables
    (RANK, WORLD_SIZE), else None."""
    import contextlib

    with contextlib.suppress(Exception):
        distributed = torch.distributed
        if distributed.is_available() and distributed.is_initialized():
            return int(distributed.get_rank()), int(distributed.get_world_size())
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank and world and rank.isdigit() and world.isdigit():
        return int(rank), int(world)
    return None


class Recorder:
    """The lab's protocol around the phases of your own loop: put this file beside your code.

        from mesure_memoire import Recorder

        with Recorder(device="cuda:0", model=model, optimizer=optimizer) as recorder:
            for step in range(1, 4):
                with recorder.phase("forward", step=step):
                    output = model(inputs)
                ...

    Each phase runs under the six steps of `phase_protocol`, the function `measure` uses, and
    its record gets the parts the program itself can count (tensor_parts): parameters,
    gradients and optimizer state, given the model and the optimizer (`watch` gives them later,
    once they exist). When the `with` block ends, the result is written once, in `measure`'s
    schema, to a new file `<output_dir>/mesures-rank<R>.json` (temporary file, fsync, link:
    never overwritten). Each process records its own GPU: the rank and world size come from
    torch.distributed, else torchrun's RANK and WORLD_SIZE, else 0 of 1.

    An exception in a phase (out of memory included) is that phase's failure; Ctrl-C and
    SIGTERM leave it `interrupted`. Either way the result is written, one line says so on
    stderr, and the program ends with `measure`'s code: 4, 130 or 143. A refused call (a phase
    opened twice, a phase inside a phase, an output folder that is a file, a result file that
    exists) prints one line and ends it with code 2 (3 for an existing file), writing nothing.
    `begin` and `end` open and close a phase where a `with` block cannot (a TrainerCallback:
    `trainer_callback`); `close` writes the result and returns the code without ending.
    `counters` replaces torch.cuda's six functions for the device (a simulation in the lab's
    tests); its results say so (`counters_source`) and are not GPU measurements.
    """

    def __init__(
        self,
        device: Any = "cuda:0",
        model: Any = None,
        optimizer: Any = None,
        *,
        output_dir: str = ".",
        rank: int | None = None,
        world_size: int | None = None,
        lang: str | None = None,
        counters: CounterSource | None = None,
    ) -> None:
        self.lang = lang if lang in MESSAGES else locale_language()
        self.model, self.optimizer = model, optimizer
        self.phases: list[PhaseRecord] = []
        self.outcome = _outcome()
        self.path: str | None = None
        self._open: tuple[PhaseRecord, Iterator[None] | None] | None = None
        self._signals: InterruptSignals | None = None
        self._closed = self._refused = False
        self._started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self._clock = time.perf_counter_ns
        try:
            self._setup(str(device), output_dir, rank, world_size, counters)
        except UsageError as exc:
            self._refuse(exc)

    def _setup(
        self, device: str, folder: str, rank: int | None, world: int | None, counters: Any
    ) -> None:
        torch: Any = sys.modules.get("torch")
        why: str | None = None if torch else "ModuleNotFoundError"
        self.counters_source = "injected"
        if counters is None:
            index = parse_device(device)
            torch, why = import_torch()
            if torch is None:
                raise UsageError("torch_missing_for_recorder", error=why)
            problem = device_problem(torch, index, self.lang)
            if problem is not None:
                raise UsageError("nothing_written", problem=problem)
            device = f"cuda:{index}"
            counters = TorchCounterSource(torch, torch.device("cuda", index))
            self.counters_source = "torch.cuda"
        elif device != "cpu":
            device = f"cuda:{parse_device(device)}"
        self.device = device
        found = _distributed_rank(torch) or (0, 1)
        self.rank = found[0] if rank is None else rank
        self.world_size = found[1] if world is None else world
        if not (_whole(self.rank) and _whole(self.world_size)) or not (
            0 <= self.rank < self.world_size <= MAX_RANKS
        ):
            raise UsageError("rank_out_of_range", rank=repr(self.rank), world=repr(self.world_size))
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise UsageError("output_dir_is_file", folder=repr(folder))
        self.output = os.path.join(folder, f"mesures-rank{self.rank}.json")
        if os.path.isdir(folder):
            check_output_path(self.output)
        self.environment = collect_environment(device, torch, why, self.lang)
        reason = self.environment["allocator"]["caching_disabled_reason"]
        if reason is not None and self.counters_source == "torch.cuda":
            counters = UnreadableCounters(counters, reason)
        self.source: CounterSource = counters

    def _refuse(self, exc: UsageError) -> NoReturn:
        self._refused = True
        _error(self.lang, exc.text(self.lang))
        raise SystemExit(exc.code) from None

    def watch(self, model: Any = None, optimizer: Any = None) -> None:
        """Give the model and the optimizer whose tensors each phase counts (once they exist)."""
        self.model = self.model if model is None else model
        self.optimizer = self.optimizer if optimizer is None else optimizer

    def phase(self, name: str, step: int | None = None) -> _RecorderPhase:
        """`with recorder.phase("backward", step=1): ...`: one phase, measured."""
        return _RecorderPhase(self, name, step)

    def begin(self, name: str, step: int | None = None) -> None:
        """Open a phase (steps 1 to 3 of the protocol); `end` closes it."""
        if self._open is not None:
            self._refuse(
                UsageError(
                    "phase_inside_phase", phase=repr(name), open=repr(self._open[0]["phase"])
                )
            )
        if not (
            isinstance(name, str)
            and 0 < len(name) <= MAX_PHASE_NAME
            and PHASE_NAME_CHARACTERS.issuperset(name)
        ):
            self._refuse(UsageError("phase_name_invalid", phase=shown(str(name))))
        if step is not None and not (_whole(step) and step >= 1):
            self._refuse(UsageError("phase_step_invalid", step=repr(step)))
        if any(p["phase"] == name and p["step"] == step for p in self.phases):
            self._refuse(UsageError("phase_opened_twice", phase=repr(name), step=repr(step)))
        record = _new_record(name, None, 0, step)
        steps: Iterator[None] | None = phase_protocol(record, self.source, self._clock, self.lang)
        try:
            next(steps)  # type: ignore[arg-type]
        except StopIteration:
            steps = None  # steps 1 to 3 failed: the phase runs unmeasured, its record says why
        self._open = (record, steps)

    def end(self, exc: BaseException | None = None) -> None:
        """Close the open phase (steps 5 and 6); `exc` is what the phase raised, if anything."""
        if self._open is None:
            self._refuse(UsageError("no_phase_open"))
        record, steps = self._open
        self._open = None
        if steps is not None:
            resume(steps, exc)
        elif exc is not None and record["error"] is None:
            _fail(record, "run", exc)
        record["parts"] = (
            phase_parts(record, lambda: tensor_parts(self.model, self.optimizer, self.device))
            if self.model is not None
            else None
        )
        self.phases.append(record)
        self.outcome = settle(self.outcome, record, self.lang)

    def __enter__(self) -> Recorder:
        self._signals = InterruptSignals().__enter__()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, traceback: Any) -> Literal[False]:
        signals, self._signals = self._signals, None
        try:
            if self._refused:  # a refusal ends the program and writes nothing
                return False
            if self._open is not None:
                self.end(exc)
            elif isinstance(exc, KeyboardInterrupt) and self.outcome["status"] == "ok":
                complete = self.outcome["complete_readings"]
                self.outcome = _interrupted(type(exc).__name__, None, None, complete, self.lang)
            elif isinstance(exc, Exception) and self.outcome["status"] == "ok":
                error: OutcomeError = {"type": type(exc).__name__, "message": _describe_error(exc)}
                complete = self.outcome["complete_readings"]
                self.outcome = _outcome(
                    "failed", EXIT_PHASE_FAILED, error=error, complete_readings=complete
                )
            code = self.close(signals)
        finally:
            if signals is not None:
                signals.__exit__(None, None, None)
        phase_failed = any(p["status"] != "ok" for p in self.phases)
        if isinstance(exc, Exception) and not phase_failed:
            return False  # the program's own exception, outside the phases: it goes on
        if code != EXIT_OK:
            raise SystemExit(code) from None
        return False

    def result(self) -> dict[str, Any]:
        """The result object, as `close` writes it."""
        optimizer = self.optimizer
        groups = getattr(optimizer, "param_groups", None) or []
        fused = any(g.get("fused") or g.get("capturable") for g in groups) if groups else None
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": TOOL_NAME, "version": __version__, "lab_version": LAB_VERSION},
            "language": self.lang,
            "task": "recorder",
            "command_line": list(sys.argv) if sys.argv and sys.argv[0] else [TOOL_NAME],
            "started_utc": self._started,
            "device": self.device,
            "rank": self.rank,
            "world_size": self.world_size,
            "counters_source": self.counters_source,
            "units": {
                "memory": say(self.lang, "units_memory"),
                "duration": say(self.lang, "units_duration"),
            },
            "counters": {key: say(self.lang, f"counter_{key}") for key in COUNTER_KEYS},
            "counters_unavailable_reason": getattr(self.source, "reason", None),
            "training": {
                "optimizer": None if optimizer is None else type(optimizer).__name__,
                "precision": None,
                "fused": fused,
                "steps": max(
                    (p["step"] for p in self.phases if p["step"] is not None), default=None
                ),
                "prediction": None,
            },
            "parameter_groups": parameter_groups(self.model),
            "environment": self.environment,
            "phases": self.phases,
            "outcome": self.outcome,
        }

    def close(self, signals: InterruptSignals | None = None) -> int:
        """Write the result (once) and return `measure`'s exit code for it; one line on stderr
        says where it went, or why it could not be written (the code is then 5, or 3)."""
        import json

        if self._closed:
            return self.outcome["exit_code"]
        self._closed = True
        folder = os.path.dirname(self.output) or "."
        status = say(self.lang, f"status_{self.outcome['status']}")
        try:
            os.makedirs(folder, exist_ok=True)
            text = json.dumps(self.result(), indent=2, ensure_ascii=False) + "\n"
            if signals is None:
                publish_new_file(self.output, text)
            else:
                with signals.deferred_while():
                    publish_new_file(self.output, text)
        except UsageError as exc:
            _error(self.lang, exc.text(self.lang))
            return exc.code
        except OSError as exc:
            _error(
                self.lang,
                say(self.lang, "cannot_write", path=repr(self.output), error=_describe_error(exc)),
            )
            return EXIT_OUTPUT_ERROR
        self.path = self.output
        code = self.outcome["exit_code"]
        if code != EXIT_OK and self.outcome["error"] is not None:
            phase = self.outcome["failed_phase"] or say(self.lang, "between_phases")
            message = self.outcome["error"]["message"]
            _error(
                self.lang,
                say(
                    self.lang,
                    "phase_outcome",
                    phase=phase,
                    status=status,
                    message=message,
                    path=self.output,
                ),
            )
        else:
            _progress(say(self.lang, "wrote", path=self.output, status=status))
        return code

    def trainer_callback(self) -> Any:
        """A transformers.TrainerCallback that measures Trainer's own steps with this recorder:
        `forward_backward` (Trainer.training_step: forward, loss, backward, then gradient
        clipping), `optimizer_step` and `zero_grad` (the scheduler's step and model.zero_grad),
        each with the step it belongs to (Trainer's global_step + 1). It gives the recorder
        Trainer's model and optimizer when training begins. Keep `trainer.train()` inside
        `with recorder:` so that a failure is recorded and the result written."""
        import importlib

        base: Any = importlib.import_module("transformers").TrainerCallback

        def begin(name: str) -> Callable[..., None]:
            def event(callback: Any, args: Any, state: Any, control: Any, **kw: Any) -> None:
                if self._open is not None:
                    self.end()
                if name:
                    self.begin(name, step=state.global_step + 1)

            return event

        def watch(callback: Any, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.watch(kw.get("model"), kw.get("optimizer"))

        events = {
            "on_train_begin": watch,
            "on_step_begin": begin("forward_backward"),
            "on_pre_optimizer_step": begin("optimizer_step"),
            "on_optimizer_step": begin("zero_grad"),
            "on_step_end": begin(""),  # closes zero_grad: global_step has just been counted
        }
        return type("RecorderCallback", (base,), events)()


class _RecorderPhase:
    """`with recorder.phase(name, step=...)`: begin on entry, end on exit (the exception, if
    any, is the phase's and goes on)."""

    def __init__(self, recorder: Recorder, name: str, step: int | None) -> None:
        self.recorder, self.name, self.step = recorder, name, step

    def __enter__(self) -> PhaseRecord:
        self.recorder.begin(self.name, self.step)
        assert self.recorder._open is not None
        return self.recorder._open[0]

    def __exit__(self, kind: Any, exc: BaseException | None, traceback: Any) -> Literal[False]:
        if not self.recorder._refused:
            self.recorder.end(exc)
        return False


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------


# At most 4 digits: no machine has 10,000 GPUs, and a 5,000-digit index never reaches int().
def parse_device(text: str) -> int:
    """Return the GPU index of 'cuda' or 'cuda:N'; raise UsageError (exit 2) otherwise."""
    name, colon, index = text.strip().partition(":")
    # At most 4 digits: no machine has 10,000 GPUs, and a 5,000-digit index never reaches int().
    if name == "cuda" and (not colon or (index.isascii() and index.isdigit() and len(index) <= 4)):
        return int(index or 0)
    key = "device_not_gpu" if name == "cpu" else "device_unsupported"
    raise UsageError(key, device=shown(text))


def import_torch() -> tuple[Any, str | None]:
    """(torch module or None, why it is missing: the exception's type, and its message unless
    the plain `ModuleNotFoundError` says it all).

    Warnings raised while importing (e.g. NumPy missing) are kept in IMPORT_WARNINGS for the
    environment report instead of being printed between the script's own lines.
    """
    import importlib
    import warnings

    module: Any = None
    why: str | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module = importlib.import_module("torch")
        except Exception as exc:  # ImportError, or OSError from a broken installation
            why = type(exc).__name__
            if not (isinstance(exc, ModuleNotFoundError) and exc.name == "torch"):
                why += f": {_describe_error(exc)}"
    IMPORT_WARNINGS[:] = [
        f"{w.category.__name__}: {_describe_error(Warning(w.message))}" for w in caught
    ]
    return module, why


IMPORT_WARNINGS: list[str] = []


def _import_nvml(lang: str) -> tuple[Any, str | None]:
    """NVML through nvidia-ml-py (`pynvml`), initialised; it never creates a CUDA context."""
    import importlib

    try:
        nvml: Any = importlib.import_module("pynvml")
    except Exception as exc:
        return None, say(lang, "nvml_not_importable", error=type(exc).__name__)
    try:
        nvml.nvmlInit()
    except Exception as exc:
        error = f"{type(exc).__name__}: {_describe_error(exc)}"
        return None, say(lang, "nvml_not_initialised", error=error)
    return nvml, None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_devices(nvml: Any, missing: list[str], lang: str) -> list[dict[str, Any]]:
    """Every GPU as NVML sees it (its own order, not the cuda:N order), without a context."""
    devices: list[dict[str, Any]] = []
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        missing.append(say(lang, "nvml_count_not_read", error=type(exc).__name__))
        return devices
    for index in range(count):
        entry: dict[str, Any] = {
            "nvml_index": index,
            "name": None,
            "uuid": None,
            "pci_bus_id": None,
            "total_memory_bytes": None,
        }
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            entry["name"] = _text(nvml.nvmlDeviceGetName(handle))
            entry["uuid"] = _text(nvml.nvmlDeviceGetUUID(handle))
            entry["pci_bus_id"] = _text(nvml.nvmlDeviceGetPciInfo(handle).busId)
            entry["total_memory_bytes"] = int(nvml.nvmlDeviceGetMemoryInfo(handle).total)
        except Exception as exc:
            missing.append(say(lang, "nvml_device_not_read", index=index, error=type(exc).__name__))
        devices.append(entry)
    return devices


def _nvidia_smi_driver_version() -> str | None:
    import shutil
    import subprocess

    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[0] if lines else None


def _file_first_line(path: str, pattern: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096)
    except OSError:
        return None
    import re

    match = re.search(pattern, text)
    return match.group(1) if match else None


def _cuda_version_text(version: int) -> str:
    """12040 -> '12.4', as cuDriverGetVersion and NVML encode it."""
    return f"{version // 1000}.{version % 1000 // 10}"


def _libcuda_driver_cuda_version() -> str | None:
    """The CUDA version the driver supports, from libcuda's cuDriverGetVersion.

    That call needs neither cuInit nor a context, so it touches no GPU.
    """
    import ctypes

    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            libcuda = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        try:
            status = libcuda.cuDriverGetVersion(ctypes.byref(version))
        except AttributeError:
            return None
        return _cuda_version_text(version.value) if status == 0 and version.value > 0 else None
    return None


def collect_driver(nvml: Any, missing: list[str], lang: str) -> dict[str, str | None]:
    """The driver version and the CUDA version it supports, each with where it was read.

    Driver: nvidia-smi, then NVML, then /proc/driver/nvidia/version, then the amdgpu module
    (ROCm). CUDA version supported by the driver: NVML, then libcuda.
    """
    driver: dict[str, str | None] = {
        "version": None,
        "version_source": None,
        "cuda_version": None,
        "cuda_version_source": None,
    }
    candidates: list[tuple[str, Callable[[], str | None]]] = [
        ("nvidia-smi", _nvidia_smi_driver_version),
        ("nvml", lambda: _text(nvml.nvmlSystemGetDriverVersion()) if nvml else None),
        (
            "/proc/driver/nvidia/version",
            lambda: _file_first_line("/proc/driver/nvidia/version", r"Kernel Module\s+([0-9.]+)"),
        ),
        ("amdgpu", lambda: _file_first_line("/sys/module/amdgpu/version", r"(\S+)")),
    ]
    import contextlib

    for source, read in candidates:
        with contextlib.suppress(Exception):
            value = read()
            if value:
                driver["version"], driver["version_source"] = value, source
                break
    if driver["version"] is None:
        missing.append(say(lang, "driver_not_read"))

    def nvml_cuda() -> str | None:
        if nvml is None:
            return None
        return _cuda_version_text(int(nvml.nvmlSystemGetCudaDriverVersion()))

    for source, read in (("nvml", nvml_cuda), ("libcuda", _libcuda_driver_cuda_version)):
        with contextlib.suppress(Exception):
            value = read()
            if value:
                driver["cuda_version"], driver["cuda_version_source"] = value, source
                break
    if driver["cuda_version"] is None:
        missing.append(say(lang, "driver_cuda_not_read"))
    return driver


def device_problem(torch: Any, index: int, lang: str = SOURCE_LANGUAGE) -> str | None:
    """Why cuda:index cannot be measured with this PyTorch, or None when it can."""
    version = getattr(torch, "__version__", "?")
    cuda = getattr(torch.version, "cuda", None)
    hip = getattr(torch.version, "hip", None)
    if cuda is None and hip is None:
        return say(lang, "cpu_only_build", version=version)
    try:
        if not torch.cuda.is_available():
            return say(lang, "sees_no_gpu", version=version)
        count = int(torch.cuda.device_count())
    except Exception as exc:
        return say(lang, "gpu_query_failed", error=f"{type(exc).__name__}: {_describe_error(exc)}")
    if index >= count:
        return say(lang, "no_such_gpu", device=f"cuda:{index}", count=count)
    return None


def caching_disabled_reason(
    environ: dict[str, str] | None = None, lang: str = SOURCE_LANGUAGE
) -> str | None:
    """Why the caching allocator's counters cannot be read, or None.

    PyTorch's CUDA allocator bypasses its cache when PYTORCH_NO_CUDA_MEMORY_CACHING is set at
    all, whatever its value (forceUncachedAllocator in c10/cuda/CUDACachingAllocator.cpp);
    every counter then reads 0 whatever is allocated.
    """
    env = os.environ if environ is None else environ
    if NO_CACHING_VAR in env:
        return say(lang, "caching_disabled", setting=f"{NO_CACHING_VAR}={env[NO_CACHING_VAR]!r}")
    return None


def _allocator(
    torch: Any, cuda_available: bool | None, missing: list[str], lang: str
) -> dict[str, Any]:
    reason = caching_disabled_reason(lang=lang)
    allocator: dict[str, Any] = {
        "backend": None,
        "settings": {name: os.environ.get(name) for name in ALLOCATOR_ENV_VARS},
        "settings_in_effect": None,
        "caching_enabled": False if reason else (None if torch is None else True),
        "caching_disabled_reason": reason,
    }
    if torch is None:
        return allocator
    if cuda_available:
        try:
            allocator["backend"] = str(torch.cuda.get_allocator_backend())
        except Exception as exc:
            missing.append(say(lang, "allocator_backend_not_read", error=type(exc).__name__))
    # PyTorch's own reading of its allocator settings (a private function in 2.9 and later).
    read_settings = getattr(torch._C, "_accelerator_getAllocatorSettings", None)
    if read_settings is None:
        missing.append(say(lang, "allocator_settings_unexposed"))
    else:
        try:
            allocator["settings_in_effect"] = str(read_settings())
        except Exception as exc:
            missing.append(say(lang, "allocator_settings_not_read", error=type(exc).__name__))
    return allocator


def collect_environment(
    device: str,
    torch: Any = None,
    torch_error: str | None = None,
    lang: str = SOURCE_LANGUAGE,
) -> dict[str, Any]:
    """Python, platform, PyTorch and its backend, devices, driver and allocator settings.

    Only the requested device is queried for its free memory (mem_get_info creates a CUDA
    context, hundreds of MiB, on the device it asks); the other visible devices are listed from
    their properties (cudaGetDeviceProperties, which PyTorch calls without making the device
    current) and from NVML when nvidia-ml-py is importable. Never raises: anything that cannot
    be read is `None` and listed under `missing`.
    """
    import platform

    missing: list[str] = []
    nvml, nvml_why = _import_nvml(lang)
    env: dict[str, Any] = {
        "language": lang,
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable or None,
        },
        "platform": {
            "system": platform.system() or None,
            "release": platform.release() or None,
            "machine": platform.machine() or None,
            "description": platform.platform() or None,
        },
        "torch": {
            "installed": torch is not None,
            "version": None,
            "cuda": None,
            "hip": None,
            "backend": None,
            "cuda_available": None,
            "device_count": None,
            "import_error": torch_error,
            "import_warnings": list(IMPORT_WARNINGS),
        },
        "seed": SEED,
        "visible_devices": {name: os.environ.get(name) for name in VISIBLE_DEVICE_ENV_VARS},
        "devices": [],
        "nvml_devices": None,
        "driver_version": None,
        "driver": None,
        "allocator": None,
        "blas_workspace": {name: os.environ.get(name) for name in BLAS_WORKSPACE_ENV_VARS},
        "requested_device": device,
        "requested_device_usable": False,
        "requested_device_problem": None,
        "missing": missing,
    }
    index: int | None = None
    try:
        index = parse_device(device)
    except UsageError as exc:
        env["requested_device_problem"] = exc.text(lang)
    t = env["torch"]
    if torch is None:
        missing.append(say(lang, "torch_not_installed", error=torch_error))
    else:
        t["version"] = str(getattr(torch, "__version__", None))
        t["cuda"] = getattr(torch.version, "cuda", None)
        t["hip"] = getattr(torch.version, "hip", None)
        t["backend"] = "hip" if t["hip"] else "cuda" if t["cuda"] else "cpu-only"
        try:
            t["cuda_available"] = bool(torch.cuda.is_available())
            t["device_count"] = int(torch.cuda.device_count()) if t["cuda_available"] else 0
        except Exception as exc:
            error = f"{type(exc).__name__}: {_describe_error(exc)}"
            missing.append(say(lang, "gpu_query_failed", error=error))
        for i in range(t["device_count"] or 0):
            env["devices"].append(_describe_device(torch, i, i == index, missing, lang))
        if index is not None:
            env["requested_device_problem"] = device_problem(torch, index, lang)
        env["requested_device_usable"] = env["requested_device_problem"] is None
    env["allocator"] = _allocator(torch, t["cuda_available"], missing, lang)
    if nvml is None:
        missing.append(say(lang, "nvml_list_not_read", why=nvml_why))
    else:
        env["nvml_devices"] = _nvml_devices(nvml, missing, lang)
    env["driver"] = collect_driver(nvml, missing, lang)
    env["driver_version"] = env["driver"]["version"]
    if nvml is not None:
        import contextlib

        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    if torch is not None and not env["devices"]:
        missing.append(say(lang, "no_visible_gpu"))
    return env


def _pci_bus_id(props: Any) -> str | None:
    """The device's PCI address, formatted as PyTorch itself does (domain:bus:device.0)."""
    try:
        return f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    except (AttributeError, TypeError, ValueError):
        return None


def _describe_device(
    torch: Any, index: int, requested: bool, missing: list[str], lang: str
) -> dict[str, Any]:
    info: dict[str, Any] = {
        "index": index,
        "requested": requested,
        "name": None,
        "total_memory_bytes": None,
        "compute_capability": None,
        "uuid": None,
        "pci_bus_id": None,
        "arch_name": None,
        "free_bytes": None,
        "mem_get_info_total_bytes": None,
    }
    try:
        props = torch.cuda.get_device_properties(index)
        info["name"] = str(props.name)
        info["total_memory_bytes"] = int(props.total_memory)
        info["compute_capability"] = f"{props.major}.{props.minor}"
        uuid = getattr(props, "uuid", None)
        info["uuid"] = None if uuid is None else str(uuid)
        info["pci_bus_id"] = _pci_bus_id(props)
        if getattr(torch.version, "hip", None):
            info["arch_name"] = str(getattr(props, "gcnArchName", "")) or None
    except Exception as exc:
        missing.append(
            say(lang, "properties_not_read", device=f"cuda:{index}", error=type(exc).__name__)
        )
    if requested:
        # Only here: mem_get_info creates a context on the device it asks (measure needs one).
        try:
            free, total = torch.cuda.mem_get_info(index)
            info["free_bytes"], info["mem_get_info_total_bytes"] = int(free), int(total)
        except Exception as exc:
            missing.append(
                say(lang, "mem_get_info_not_read", device=f"cuda:{index}", error=type(exc).__name__)
            )
    return info


def format_environment_text(env: dict[str, Any], lang: str = SOURCE_LANGUAGE) -> str:
    """The `environment` report in `lang`."""

    # A value that is None is said in words (the JSON keeps null): a figure that could not be
    # read, a variable that is not set, a build without that backend.
    def show(value: Any, absent: str = "value_not_read") -> str:
        if isinstance(value, bool):
            return say(lang, "yes" if value else "no")
        return say(lang, absent) if value is None else str(value)

    def number(value: int | None) -> str:
        return say(lang, "value_not_read") if value is None else local_number(value, lang)

    def read(value: str | None, source: str | None) -> str:
        return show(value) if source is None else f"{value} {say(lang, 'read_from', source=source)}"

    t = env["torch"]
    driver = env["driver"]
    allocator = env["allocator"]
    caching = allocator["caching_disabled_reason"]
    # An installed PyTorch without a CUDA (or HIP) version is a build without that backend.
    build = "value_not_in_build" if t["installed"] else "value_not_read"
    rows = [
        ("Python", f"{env['python']['version']} ({env['python']['implementation']})"),
        (say(lang, "label_platform"), show(env["platform"]["description"])),
        ("PyTorch", show(t["version"]) if t["installed"] else say(lang, "not_installed")),
        ("torch.version.cuda", show(t["cuda"], build) + " " + say(lang, "build_cuda")),
        ("torch.version.hip", show(t["hip"], build)),
        (say(lang, "label_driver"), read(driver["version"], driver["version_source"])),
        (
            say(lang, "label_driver_cuda"),
            read(driver["cuda_version"], driver["cuda_version_source"]),
        ),
        (say(lang, "label_allocator_backend"), show(allocator["backend"])),
        (say(lang, "label_allocator_settings"), show(allocator["settings_in_effect"])),
        (
            say(lang, "label_caching"),
            say(lang, "bypassed", reason=caching)
            if caching
            else show(allocator["caching_enabled"]),
        ),
        (say(lang, "label_seed"), str(env["seed"])),
    ]
    rows += [(k, show(v, "variable_not_set")) for k, v in allocator["settings"].items()]
    rows += [(k, show(v, "variable_not_set")) for k, v in env["blas_workspace"].items()]
    rows += [(k, show(v, "variable_not_set")) for k, v in env["visible_devices"].items()]
    for d in env["devices"]:
        line = say(
            lang,
            "device_line",
            name=show(d["name"]),
            total=number(d["total_memory_bytes"]),
            capability=show(d["compute_capability"]),
            uuid=show(d["uuid"]),
            pci=show(d["pci_bus_id"]),
        )
        if d["arch_name"]:
            line += say(lang, "device_arch", arch=d["arch_name"])
        if d["requested"]:
            line += say(
                lang,
                "device_free",
                free=number(d["free_bytes"]),
                total=number(d["mem_get_info_total_bytes"]),
            )
        rows.append((f"cuda:{d['index']}", line))
    for d in env["nvml_devices"] or []:
        rows.append(
            (
                f"NVML {d['nvml_index']}",
                say(
                    lang,
                    "nvml_line",
                    name=show(d["name"]),
                    uuid=show(d["uuid"]),
                    pci=show(d["pci_bus_id"]),
                    total=number(d["total_memory_bytes"]),
                ),
            )
        )
    usable = "can_be_measured" if env["requested_device_usable"] else "cannot_be_measured"
    rows.append((say(lang, "label_requested", device=env["requested_device"]), say(lang, usable)))
    rows += [(say(lang, "label_import_warning"), w) for w in t["import_warnings"]]
    rows += [(say(lang, "label_missing"), m) for m in env["missing"]]
    return "\n".join(aligned(rows)) + "\n"


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

COMMANDS = ("estimate", "predict", "environment", "measure")
TASKS = ("forward", "train")

# Bounds checked when the arguments are parsed (documented in the READMEs):
MAX_PARAMETERS = 10**15  # a thousand times the largest models of the guides' era
MAX_BITS = 64  # the widest value PyTorch stores per parameter (float64)
MAX_RESERVE_GIB = 2**20  # 1 PiB
MAX_DIMENSION = 2**31 - 1  # batch, context and width: a tensor dimension PyTorch indexes
MAX_WARMUP = 10**6
MAX_REPEATS = 10**4  # one record per repeat


_COLUMNS: list[int] = []  # the terminal's width, read once


def _terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size reads it (COLUMNS, then the terminal,
    else 80), without importing shutil: it costs start-up on every run."""
    if not _COLUMNS:
        try:
            columns = int(os.environ.get("COLUMNS", "0"))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                columns = 80
        _COLUMNS.append(columns or 80)
    return _COLUMNS[0]


def wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells (a Hangul syllable takes two), broken
    at spaces; a word longer than `width` keeps its own line.

    >>> wrapped("가중치 추정치 bobot", 8)
    ['가중치', '추정치', 'bobot']
    """
    lines: list[str] = []
    line, cells = "", 0
    for word in text.split():
        size = text_cells(word)
        if line and cells + 1 + size > width:
            lines.append(line)
            line, cells = "", 0
        line, cells = (f"{line} {word}", cells + 1 + size) if line else (word, size)
    return [*lines, line] if line else lines


def _argparse_classes() -> tuple[type[argparse.ArgumentParser], type[argparse.HelpFormatter]]:
    """argparse's parser, whose usage errors are one line in the reader's language, and a help
    formatter with the terminal's width (argparse would import shutil for it), wrapped by
    terminal cells rather than characters, so that Korean lines fit too; the exit-code epilog
    (several lines) is kept as written. Defined on first use: argparse is not imported until a
    parser is needed."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, lang: str = SOURCE_LANGUAGE, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.lang = lang

        def error(self, message: str) -> NoReturn:
            # One line, no usage block, no traceback.
            self.exit(EXIT_UNAVAILABLE, error_line(self.lang, self.prog, message) + "\n")

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=_terminal_columns() - 2)

        def _split_lines(self, text: str, width: int) -> list[str]:
            return wrapped(text, width)

        def _fill_text(self, text: str, width: int, indent: str) -> str:
            if "\n" in text:
                return "".join(indent + line for line in text.splitlines(keepends=True))
            return "\n".join(indent + line for line in wrapped(text, width - len(indent)))

    return Parser, Formatter


class _ArgparseLanguage:
    """argparse's own words ("usage:", "options", "the following arguments are required", "-h"'s
    help...) in `lang` while a parser is built and used: argparse looks every one up through
    its module's `_` and `ngettext` (gettext's), which this swaps for ARGPARSE_MESSAGES and back.
    """

    def __init__(self, lang: str) -> None:
        self.table = ARGPARSE_MESSAGES[lang]
        self.saved: tuple[Any, Any] | None = None

    def gettext(self, message: str) -> str:
        return self.table.get(message, message)

    def ngettext(self, singular: str, plural: str, count: int) -> str:
        return self.gettext(singular if count == 1 else plural)

    def __enter__(self) -> _ArgparseLanguage:
        import argparse

        self.saved = (getattr(argparse, "_"), getattr(argparse, "ngettext"))  # noqa: B009
        setattr(argparse, "_", self.gettext)  # noqa: B010
        setattr(argparse, "ngettext", self.ngettext)  # noqa: B010
        return self

    def __exit__(self, *exc_info: object) -> None:
        import argparse

        if self.saved is not None:
            setattr(argparse, "_", self.saved[0])  # noqa: B010
            setattr(argparse, "ngettext", self.saved[1])  # noqa: B010


def _argument_type(parse: Callable[[str, str], Any], lang: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text, lang)
        except NumberError as exc:
            import argparse

            raise argparse.ArgumentTypeError(exc.text(lang)) from None

    return convert


def _add_lang(p: argparse.ArgumentParser, lang: str) -> None:
    import argparse

    p.add_argument(
        "--lang",
        choices=sorted(MESSAGES),
        default=argparse.SUPPRESS,  # read before parsing: see requested_language
        help=say(lang, "lang_help", source=SOURCE_LANGUAGE),
    )


def _add_json(p: argparse.ArgumentParser, lang: str, key: str = "json_help") -> None:
    p.add_argument("--json", action="store_true", help=say(lang, key))


def _add_dimensions(p: argparse.ArgumentParser, lang: str) -> None:
    dimension = _argument_type(
        lambda t, lg: parse_whole(t, lg, minimum=1, maximum=MAX_DIMENSION), lang
    )
    for name in ("batch", "context", "width"):
        p.add_argument(
            f"--{name}", type=dimension, required=True, metavar="N", help=say(lang, f"{name}_help")
        )
    p.add_argument("--dtype", choices=sorted(DTYPE_SIZES), help=say(lang, "dtype_help"))
    p.add_argument("--task", choices=TASKS, default="forward", help=say(lang, "task_help"))
    p.add_argument("--optimizer", choices=TRAIN_OPTIMIZERS, help=say(lang, "optimizer_help"))
    p.add_argument("--precision", choices=TRAIN_PRECISIONS, help=say(lang, "precision_help"))


def _estimate_options(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument(
        "--parameters",
        type=_argument_type(lambda t, lg: parse_count(t, lg, maximum=MAX_PARAMETERS), lang),
        required=True,
        metavar="N",
        help=say(lang, "parameters_help", maximum=limit_text(MAX_PARAMETERS)),
    )
    p.add_argument(
        "--bits",
        type=_argument_type(
            lambda t, lg: parse_decimal(t, lg, maximum=MAX_BITS, allow_zero=False), lang
        ),
        required=True,
        metavar="N",
        help=say(lang, "bits_help", maximum=MAX_BITS),
    )
    p.add_argument(
        "--reserve-gib",
        type=_argument_type(
            lambda t, lg: parse_decimal(t, lg, maximum=MAX_RESERVE_GIB, allow_zero=True), lang
        ),
        default=Exact(0),
        metavar="GiB",
        help=say(lang, "reserve_help", maximum=limit_text(MAX_RESERVE_GIB)),
    )
    _add_json(p, lang)
    p.set_defaults(handler=cmd_estimate)


class Arguments:
    """A command's arguments read without argparse (estimate_arguments), as argparse's
    Namespace holds them."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def estimate_arguments(argv: Sequence[str], lang: str) -> Any:
    """`estimate`'s arguments read without argparse when they are plainly valid: the command,
    then --parameters and --bits, --reserve-gib at most once, each with its value (`--bits 16`
    or `--bits=16`), --json, --lang CODE. Anything else (help, an abbreviation, a repeated or
    missing option, a value the grammar refuses) gives None, and argparse reads and answers it:
    importing argparse costs a quarter of `estimate`'s start-up. tests/lab/test_lab_script.py
    pins the two readings together."""
    if not argv or argv[0] != "estimate":
        return None
    readers: dict[str, Callable[[str], Any]] = {
        "--parameters": lambda t: parse_count(t, lang, maximum=MAX_PARAMETERS),
        "--bits": lambda t: parse_decimal(t, lang, maximum=MAX_BITS, allow_zero=False),
        "--reserve-gib": lambda t: parse_decimal(t, lang, maximum=MAX_RESERVE_GIB, allow_zero=True),
    }
    values: dict[str, Any] = {"json": False}
    words = iter(argv[1:])
    for word in words:
        name, equals, value = word.partition("=")
        if word == "--json":
            values["json"] = True
            continue
        if name not in (*readers, "--lang") or name in values:
            return None
        if not equals:
            value = next(words, "-")
        if value.startswith("-"):
            return None
        if name == "--lang":
            if value not in MESSAGES:
                return None
            values[name] = value
            continue
        try:
            values[name] = readers[name](value)
        except NumberError:
            return None
    if "--parameters" not in values or "--bits" not in values:
        return None
    return Arguments(
        command="estimate",
        handler=cmd_estimate,
        parameters=values["--parameters"],
        bits=values["--bits"],
        reserve_gib=values.get("--reserve-gib", Exact(0)),
        json=values["json"],
    )


def _predict_options(p: argparse.ArgumentParser, lang: str) -> None:
    _add_dimensions(p, lang)
    _add_json(p, lang, "predict_json_help")
    p.set_defaults(handler=cmd_predict)


def _environment_options(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument(
        "--device", default="cuda:0", metavar="cuda:N", help=say(lang, "device_help_environment")
    )
    _add_json(p, lang)
    p.set_defaults(handler=cmd_environment)


def _measure_options(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument(
        "--device", default="cuda:0", metavar="cuda:N", help=say(lang, "device_help_measure")
    )
    _add_dimensions(p, lang)
    count = _argument_type(lambda t, lg: parse_whole(t, lg, minimum=0, maximum=MAX_WARMUP), lang)
    p.add_argument("--warmup", type=count, metavar="N", help=say(lang, "warmup_help"))
    repeats = _argument_type(lambda t, lg: parse_whole(t, lg, minimum=1, maximum=MAX_REPEATS), lang)
    p.add_argument("--repeats", type=repeats, metavar="N", help=say(lang, "repeats_help"))
    p.add_argument("--steps", type=repeats, metavar="N", help=say(lang, "steps_help"))
    p.add_argument(
        "--output", required=True, metavar=say(lang, "file_metavar"), help=say(lang, "output_help")
    )
    p.set_defaults(handler=cmd_measure)


def resolve_task(args: argparse.Namespace) -> None:
    """Fill the defaults of `args.task` in place, and refuse (exit 2) what does not go with
    it: a training option without `--task train`, a forward one with it, a dtype that is not
    the one `--precision` trains in."""
    measure = args.command == "measure"
    train_options = ["--optimizer", "--precision"] + (["--steps"] if measure else [])
    forward_options = ["--warmup", "--repeats"] if measure else []
    given = {o for o in train_options + forward_options if getattr(args, o[2:]) is not None}
    if args.task == "forward":
        if given & set(train_options):
            raise UsageError("needs_task_train", option=min(given & set(train_options)))
        args.dtype = args.dtype or "float32"
        if measure:
            args.warmup = 3 if args.warmup is None else args.warmup
            args.repeats = 5 if args.repeats is None else args.repeats
            args.steps = None
        return
    if given & set(forward_options):
        raise UsageError("forward_option_with_train", option=min(given & set(forward_options)))
    args.optimizer = args.optimizer or "adamw"
    args.precision = args.precision or "fp32"
    trained = PRECISION_DTYPES[args.precision]
    if args.dtype not in (None, trained):
        raise UsageError(
            "train_dtype",
            dtype=args.dtype,
            precision=args.precision,
            trained=trained,
            optimizer=args.optimizer,
        )
    args.dtype = trained
    if measure:
        args.steps = 3 if args.steps is None else args.steps


_OPTIONS: dict[str, Callable[[argparse.ArgumentParser, str], None]] = {
    "estimate": _estimate_options,
    "predict": _predict_options,
    "environment": _environment_options,
    "measure": _measure_options,
}


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is no option nor --lang's value)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--":
            return None
        elif arg.startswith("-"):
            skip = len(arg) >= 3 and "--lang".startswith(arg)  # its value follows
        else:
            return arg if arg in _OPTIONS else None
    return None


def build_parser(
    lang: str = SOURCE_LANGUAGE, command: str | None = None
) -> argparse.ArgumentParser:
    """The parser in `lang`. Every command is listed; only `command`'s options are declared
    (building all four costs start-up), so its --help is complete, and a run parses exactly as
    with every command built. Call it inside `_ArgparseLanguage(lang)`."""
    parser_class, formatter_class = _argparse_classes()
    common: dict[str, Any] = {
        "epilog": say(lang, "epilog"),
        "formatter_class": formatter_class,
        "lang": lang,
    }
    parser = parser_class(
        prog=os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else TOOL_NAME,
        description=say(lang, "description", version=LAB_VERSION),
        **common,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help=say(lang, "version_help"),
    )
    _add_lang(parser, lang)
    sub = parser.add_subparsers(dest="command", required=True, metavar=say(lang, "command_metavar"))
    for name, add_options in _OPTIONS.items():
        p = sub.add_parser(
            name,
            help=say(lang, f"{name}_help"),
            description=say(lang, f"{name}_description", block=ALLOCATOR_BLOCK_BYTES),
            **common,
        )
        if name == command:
            _add_lang(p, lang)
            add_options(p, lang)
    return parser


def _print_json(data: Any, stream: IO[str]) -> None:
    import json

    stream.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def cmd_estimate(args: argparse.Namespace) -> int:
    result = estimate(args.parameters, args.bits, args.reserve_gib, args.lang)
    if args.json:
        _print_json(result, sys.stdout)
    else:
        sys.stdout.write(format_estimate_text(result, args.lang))
    return EXIT_OK


def cmd_predict(args: argparse.Namespace) -> int:
    resolve_task(args)
    if args.task == "train":
        trained = predict_train(
            args.batch, args.context, args.width, args.precision, args.optimizer, args.lang
        )
        if args.json:
            _print_json(trained, sys.stdout)
        else:
            sys.stdout.write(format_train_prediction_text(trained, args.lang))
        return EXIT_OK
    prediction = predict(args.batch, args.context, args.width, args.dtype, args.lang)
    if args.json:
        _print_json(prediction, sys.stdout)
    else:
        sys.stdout.write(format_prediction_text(prediction, args.lang))
    return EXIT_OK


def cmd_environment(args: argparse.Namespace) -> int:
    lang = args.lang
    torch, why = import_torch()
    env = collect_environment(args.device, torch, why, lang)
    if args.json:
        _print_json(env, sys.stdout)
    else:
        sys.stdout.write(format_environment_text(env, lang))
    if env["requested_device_usable"]:
        return EXIT_OK
    reason = env["requested_device_problem"] or (
        say(lang, "torch_not_installed", error=why)
        if torch is None
        else say(lang, "device_not_measurable")
    )
    _error(lang, say(lang, "cannot_measure", device=args.device, reason=reason))
    return EXIT_UNAVAILABLE


class _TorchBackend:
    def __init__(self, torch: Any, torch_device: Any, args: argparse.Namespace) -> None:
        self.environment = collect_environment(args.device, torch, None, args.lang)
        self.source: CounterSource = TorchCounterSource(torch, torch_device)
        reason = self.environment["allocator"]["caching_disabled_reason"]
        if reason is not None:
            self.source = UnreadableCounters(self.source, reason)
        self.workload: Workload = TorchWorkload(
            torch, torch_device, args.batch, args.context, args.width, args.dtype
        )
        if getattr(args, "task", "forward") == "train":
            self.workload = TorchTrainWorkload(
                torch,
                torch_device,
                args.batch,
                args.context,
                args.width,
                args.precision,
                args.optimizer,
            )


def torch_backend(args: argparse.Namespace) -> Backend:
    """Import PyTorch and check the device; raise UsageError (exit 2) when it is unusable."""
    index = parse_device(args.device)
    torch, why = import_torch()
    if torch is None:
        raise UsageError("torch_missing_for_measure", error=why)
    problem = device_problem(torch, index, args.lang)
    if problem is not None:
        raise UsageError("nothing_written", problem=problem)
    return _TorchBackend(torch, torch.device("cuda", index), args)


def check_output_path(path: str, *, meanwhile: bool = False) -> None:
    """Refuse an existing --output (exit 3) and a folder that is missing or not writable."""
    if os.path.lexists(path):
        key = "output_created_meanwhile" if meanwhile else "output_exists"
        raise UsageError(key, EXIT_OUTPUT_EXISTS, path=repr(path))
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise UsageError("output_folder_is_file", path=repr(path), folder=repr(parent))
    if not os.path.isdir(parent):
        raise UsageError("output_folder_missing", path=repr(path), folder=repr(parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(
            "output_folder_not_writable", EXIT_OUTPUT_ERROR, path=repr(path), folder=repr(parent)
        )


FileIdentity = tuple[int, int]  # (st_dev, st_ino): which file a name points to


def remove_own_file(path: str, identity: FileIdentity) -> bool:
    """Remove `path` only if it is still the file this process created; True if removed.

    A file that replaced it meanwhile (another inode) is left alone.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return False
    if (found.st_dev, found.st_ino) != identity:
        return False
    os.unlink(path)
    return True


def _create_temporary(directory: str, target: str) -> tuple[int, str, FileIdentity]:
    """A new hidden file beside `target`, created exclusively (O_EXCL), never a link."""
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        name = os.path.join(directory, f".{target}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(name, flags, 0o644)
        except FileExistsError:
            continue
        found = os.fstat(fd)
        return fd, name, (found.st_dev, found.st_ino)
    raise UsageError("no_temporary_name", EXIT_OUTPUT_ERROR, path=repr(target))


def _fsync_directory(directory: str) -> None:
    """Make the new name durable; not every platform can open a folder, which is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_new_file(path: str, text: str) -> None:
    """Write `text` to a temporary file in the folder of `path`, flush and fsync it, publish it
    under `path` with os.link (which never overwrites), then remove the temporary name.

    Exit 3 if `path` appeared meanwhile, 5 if the file cannot be written or published. A run
    killed at any point leaves no half-written `path`. Only files this process created are
    ever removed; a complete result that cannot be published is kept under its temporary name.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary, identity = _create_temporary(directory, os.path.basename(path))
    except OSError as exc:
        raise UsageError(
            "cannot_create_beside", EXIT_OUTPUT_ERROR, path=repr(path), error=_describe_error(exc)
        ) from None
    complete = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        complete = True
        os.link(temporary, path)
    except FileExistsError:
        raise UsageError(
            "output_created_meanwhile_kept",
            EXIT_OUTPUT_EXISTS,
            path=repr(path),
            temporary=repr(temporary),
        ) from None
    except OSError as exc:
        raise UsageError(
            "cannot_write_kept" if complete else "cannot_write",
            EXIT_OUTPUT_ERROR,
            path=repr(path),
            error=_describe_error(exc),
            temporary=repr(temporary),
        ) from None
    finally:
        if not complete:
            remove_own_file(temporary, identity)
    # Published: `path` and the temporary name are two links to the same file.
    remove_own_file(temporary, identity)
    _fsync_directory(directory)


class _Deferring:
    """While entered, the signals of an InterruptSignals wait (see deferred_while)."""

    def __init__(self, signals: InterruptSignals) -> None:
        self.signals = signals

    def __enter__(self) -> None:
        self.signals._deferring = True

    def __exit__(self, *exc_info: object) -> None:
        self.signals._deferring = False


class InterruptSignals:
    """While measuring, SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated, so that
    both keep a partial result; while the result is written, both wait until it is published.

    Signal handlers can only be installed from the main thread; elsewhere this does nothing.
    """

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}
        self._deferring = False
        self.deferred: int | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        import signal  # already loaded by __enter__: no import runs in the handler

        if self._deferring:
            self.deferred = signum
            return
        if signum == signal.SIGTERM:
            raise Terminated()
        raise KeyboardInterrupt()

    def __enter__(self) -> InterruptSignals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        import signal

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def deferred_while(self) -> _Deferring:
        return _Deferring(self)


def build_result(
    args: argparse.Namespace,
    argv: Sequence[str],
    environment: dict[str, Any],
    phases: list[PhaseRecord],
    outcome: Outcome,
    started_utc: str,
    counters_unavailable: str | None = None,
    counters_source: str = "torch.cuda",
) -> dict[str, Any]:
    """The result file's object: raw readings, the prediction beside them, and prose (the
    descriptions of the counters and units, the notes) in the run's language, `language`."""
    lang = args.lang
    prediction = predict(args.batch, args.context, args.width, args.dtype, lang)
    network = predict_network(args.width, args.dtype, args.batch, args.context, lang)
    for record in phases:
        if record["phase"] == "model_load":
            network["allocated_after_model_load_bytes"] = record["end_allocated_bytes"]
    train = args.task == "train"
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__, "lab_version": LAB_VERSION},
        "language": lang,
        "task": args.task,
        "command_line": list(argv),
        "started_utc": started_utc,
        "device": args.device,
        "rank": 0,
        "world_size": 1,
        "counters_source": counters_source,
        "dimensions": {"batch": args.batch, "context": args.context, "width": args.width},
        "dtype": args.dtype,
        "policy": {
            "warmup_passes": args.warmup,
            "repeats": args.repeats,
            "steps": args.steps,
            "single_process": True,
            "empty_cache_between_phases": False,
            "phase_boundaries": say(lang, "policy_phase_boundaries"),
        },
        "units": {
            "memory": say(lang, "units_memory"),
            "duration": say(lang, "units_duration"),
        },
        "counters": {key: say(lang, f"counter_{key}") for key in COUNTER_KEYS},
        "counters_unavailable_reason": counters_unavailable,
        "network": network,
    }
    if not train:
        summary = phase_predictions(prediction, phases)
        result["prediction"] = {
            "model_load_allocated_bytes": prediction["phases"]["model_load"]["allocated_bytes"],
            "inputs_allocated_bytes": prediction["phases"]["inputs"]["allocated_bytes"],
            "kept_output_allocated_bytes": prediction["kept_output"]["allocated_bytes"],
            "rule": prediction["allocator"]["rule"],
            "cold_forward_unexplained_bytes": summary["cold_forward_unexplained_bytes"],
            "cold_forward_unexplained_meaning": say(lang, "unexplained_meaning"),
            "not_predicted": prediction["not_predicted"],
        }
        result["training"] = result["parameter_groups"] = None
    else:
        trained = predict_train(
            args.batch, args.context, args.width, args.precision, args.optimizer, lang
        )
        for record in phases:
            expected: dict[str, int | None] = dict(
                predicted_parts(trained, record["phase"], record["step"])
            )
            parts = record.get("parts")
            measured = None if parts is None else parts["model_state_allocated_bytes"]
            total = expected["model_state_allocated_bytes"]
            expected["model_state_difference_bytes"] = (
                None if measured is None or total is None else measured - total
            )
            record["parts_prediction"] = expected
        result["training"] = {
            "optimizer": args.optimizer,
            "precision": args.precision,
            "fused": False,
            "steps": args.steps,
            "prediction": {
                "phases": trained["phases"],
                "inputs_allocated_bytes": trained["inputs"]["added_bytes"],
                "rule": trained["allocator"]["rule"],
                "not_predicted": trained["not_predicted"],
            },
        }
        result["parameter_groups"] = [
            {"shape": list(shape), "dtype": args.dtype, "trainable": True, "count": 1}
            for _, shape in network_parameter_shapes(args.width)
        ]
    result["environment"] = environment
    result["phases"] = phases
    result["outcome"] = outcome
    return result


def cmd_measure(
    args: argparse.Namespace,
    argv: Sequence[str] = (),
    backend_factory: BackendFactory = torch_backend,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> int:
    import json
    import signal

    lang = args.lang
    resolve_task(args)
    check_output_path(args.output)  # before anything else, PyTorch included
    try:
        parse_device(args.device)
    except UsageError as exc:
        raise UsageError("nothing_written", problem=exc.text(lang)) from None
    with InterruptSignals() as signals:
        backend = backend_factory(args)  # UsageError (exit 2) when PyTorch or the GPU is missing
        # PyTorch takes seconds to load: look again before spending GPU time.
        check_output_path(args.output, meanwhile=True)
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        sizes = {
            "device": args.device,
            "batch": local_number(args.batch, lang),
            "context": local_number(args.context, lang),
            "width": local_number(args.width, lang),
            "dtype": args.dtype,
        }
        if args.task == "train":
            line = say(
                lang,
                "measuring_train",
                **sizes,
                precision=args.precision,
                optimizer=args.optimizer,
                steps=local_number(args.steps, lang),
            )
        else:
            line = say(
                lang,
                "measuring",
                **sizes,
                warmup=local_number(args.warmup, lang),
                repeats=local_number(args.repeats, lang),
            )
        _progress(line)
        source = backend.source
        unavailable = source.reason if isinstance(source, UnreadableCounters) else None
        if unavailable:
            _progress(say(lang, "counters_not_read", reason=unavailable))
        phases, outcome = run_protocol(
            backend.source,
            backend.workload,
            warmup=args.warmup,
            repeats=args.repeats,
            steps=args.steps,
            progress=_progress,
            clock=clock,
            lang=lang,
        )
        with signals.deferred_while():
            result = build_result(
                args,
                argv,
                backend.environment,
                phases,
                outcome,
                started,
                unavailable,
                getattr(backend, "counters_source", "torch.cuda"),
            )
            publish_new_file(args.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        if signals.deferred is not None:
            name = signal.Signals(signals.deferred).name
            _progress(say(lang, "signal_while_writing", signal=name))
    code = outcome["exit_code"]
    status = say(lang, f"status_{outcome['status']}")
    sys.stdout.write(say(lang, "wrote", path=args.output, status=status) + "\n")
    if code != EXIT_OK and outcome["error"] is not None:
        message = outcome["error"]["message"]
        _error(
            lang,
            say(
                lang,
                "phase_outcome",
                phase=outcome["failed_phase"],
                status=status,
                message=message,
                path=args.output,
            ),
        )
    return code


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def error_line(lang: str, prog: str, message: str) -> str:
    """`prog: error: message` on one line, in `lang`."""
    return f"{prog}: {say(lang, 'error_word')}: {' '.join(message.split())}"


def _error(lang: str, message: str) -> None:
    print(error_line(lang, TOOL_NAME, message), file=sys.stderr, flush=True)


def main(
    argv: Sequence[str] | None = None,
    *,
    backend_factory: BackendFactory = torch_backend,
    clock: Callable[[], int] = time.perf_counter_ns,
    environ: dict[str, str] | None = None,
) -> int:
    """Entry point; returns the exit code. Tests inject a fake backend factory (and may give
    the locale's variables in `environ`)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    lang = requested_language(args_list, environ)
    args = estimate_arguments(args_list, lang)
    try:
        if args is None:
            with _ArgparseLanguage(lang):
                args = build_parser(lang, chosen_command(args_list)).parse_args(args_list)
    except SystemExit as exc:  # --help, --version or a one-line usage error
        return exc.code if isinstance(exc.code, int) else EXIT_UNAVAILABLE
    args.lang = lang
    try:
        if args.command == "measure":
            return cmd_measure(args, [TOOL_NAME, *args_list], backend_factory, clock)
        code: int = args.handler(args)
        return code
    except UsageError as exc:
        _error(lang, exc.text(lang))
        return exc.code
    except KeyboardInterrupt as exc:  # before any phase ran: nothing was measured or written
        _error(lang, say(lang, "interrupted_nothing_written", reason=_interrupt_message(exc, lang)))
        return interrupt_exit_code(exc)
    except BrokenPipeError:
        return EXIT_INTERNAL
    except Exception as exc:
        _error(
            lang, say(lang, "internal_error", error=f"{type(exc).__name__}: {_describe_error(exc)}")
        )
        return EXIT_INTERNAL


# ---------------------------------------------------------------------------------------------
# Messages: every sentence a reader meets, in each language of the project's list
# (src/iteragpu/i18n/languages.py; adding a language is one entry here and in ARGPARSE_MESSAGES,
# and tests/lab/test_lab_language.py names what is missing). The words are the glossary's
# (docs/glossary.yml) and, where the CLI says the same sentence, the CLI's. Plain literals:
# only the chosen language's message is formatted, when it is said.
# ---------------------------------------------------------------------------------------------

MESSAGES: dict[str, dict[str, str]] = {
    "ko": {
        # help
        "description": "IteraGPU Lab {version}: 가중치 추정치, 할당 예측, 환경 보고, 단계별 GPU "
        "메모리 측정(원시 바이트).",
        "version_help": "버전을 보여 주고 끝냅니다",
        "command_metavar": "명령",
        "lang_help": "도움말, 메시지, 출력의 언어(기본값: 로캘 변수 LANGUAGE, LC_ALL, "
        "LC_MESSAGES, LANG 가운데 먼저 설정된 것의 언어, 그 밖의 로캘에서는 {source})",
        "json_help": "JSON으로 출력합니다",
        "estimate_help": "밀집 가중치(바이트, GB, GiB)와 여유분을 더한 초기 추정치(표준 "
        "라이브러리만 사용)",
        "estimate_description": "파라미터 수와 값당 비트 수로 밀집 가중치(균일 저장)를 계산하고 "
        "가정한 여유분(GiB)을 더합니다. 활성화, 그래디언트, KV 캐시, 옵티마이저 상태는 포함하지 "
        "않습니다.",
        "parameters_help": "파라미터 수. 예: 7000000000, 7e9, 7B (최대 {maximum})",
        "bits_help": "값당 비트 수. 예: 16, 4.5 (최대 {maximum})",
        "reserve_help": "가정한 여유분(GiB, 기본값 0, 최대 {maximum})",
        "predict_help": "model_load와 inputs 뒤의 allocated 바이트 예측, --task train이면 단계마다 "
        "모델 상태의 allocated 바이트 예측(표준 라이브러리만 사용)",
        "predict_description": "measure의 네트워크와 입력에 대해 PyTorch의 기본 캐싱 할당자가 "
        "model_load와 inputs가 끝난 뒤 보여 줄 allocated 바이트를 계산합니다. 각 텐서를 "
        "{block} B의 배수로 올림합니다. cuBLAS/cuBLASLt 작업 공간, 임시 텐서, reserved "
        "세그먼트는 예측하지 않습니다.",
        "predict_json_help": "유도 과정과 함께 JSON으로 출력합니다",
        "batch_help": "배치: 합성 입력 텐서의 첫 번째 차원",
        "context_help": "컨텍스트: 텐서의 한 차원일 뿐, LLM의 컨텍스트 길이가 아닙니다",
        "width_help": "너비: 네트워크의 폭이자 입력의 마지막 차원",
        "dtype_help": "값의 형식(기본값 float32)",
        "environment_help": "Python, 플랫폼, PyTorch 백엔드, 장치, 드라이버, 할당자 설정",
        "environment_description": "환경을 보고합니다. 요청한 장치를 측정할 수 있을 때만 0으로 "
        "끝납니다. 여유 메모리는 요청한 장치에만 묻습니다.",
        "device_help_environment": "점검할 장치(기본값 cuda:0)",
        "measure_help": "실습용 소형 밀집 네트워크의 순전파나 학습 스텝을 단계별로 측정합니다"
        "(PyTorch와 GPU 필요)",
        "measure_description": "합성 (batch, context, width) 입력으로 model_load, inputs, "
        "cold_forward, warmup, warm_forward 단계를 측정하고 반복마다 따로 기록합니다. --task "
        "train이면 model_load, inputs 다음에 스텝마다 forward, loss, backward, optimizer_step, "
        "zero_grad를 측정하고, 단계가 끝날 때 파라미터, 그래디언트, 옵티마이저 상태의 바이트를 "
        "텐서에서 직접 셉니다. context는 텐서의 한 차원일 뿐, LLM의 컨텍스트 길이가 아닙니다. "
        "원시 바이트와 predict의 예측을 새 JSON 파일에 씁니다. 같은 폴더의 임시 파일에 먼저 쓴 "
        "다음, 덮어쓰지 않고 게시합니다.",
        "device_help_measure": "측정할 GPU(기본값 cuda:0)",
        "warmup_help": "워밍업 패스 수(기본값 3, --task forward만)",
        "repeats_help": "warm_forward 반복 횟수(기본값 5, --task forward만)",
        "steps_help": "학습 스텝 수(기본값 3, --task train만): 첫 스텝과 그 뒤의 스텝을 따로 기록",
        "task_help": "forward(기본값): 순전파 단계. train: 학습 스텝(forward, loss, backward, "
        "optimizer_step, zero_grad)",
        "optimizer_help": "--task train의 옵티마이저: torch.optim의 AdamW 또는 SGD(기본값 adamw)",
        "precision_help": "--task train의 정밀도: fp32, bf16, 또는 float32 가중치에 bf16 autocast"
        "(기본값 fp32)",
        "file_metavar": "파일",
        "output_help": "새 JSON 파일(덮어쓰지 않음)",
        "epilog": """\
종료 코드:
  0    성공(estimate와 predict는 결과를 출력함, environment는 요청한 장치를 측정할
       수 있음, measure는 모든 단계가 성공해 결과 파일을 씀)
  1    예상하지 못한 내부 오류(stderr에 한 줄, 트레이스백 없음)
  2    잘못된 인수, PyTorch 없음, GPU가 아닌 장치(예: cpu), 또는 없는 GPU.
       measure는 아무것도 쓰지 않음
  3    measure: --output 파일이 이미 있음(그대로 둠)
  4    measure: 단계가 실패함(메모리 부족 포함). 실패한 단계, 오류 메시지, 마지막
       판독값과 함께 결과 파일을 씀
  5    measure: 결과 파일을 만들거나 쓸 수 없음
  130  중단됨(SIGINT, Ctrl-C). measure는 가능하면 중단된 단계와 마지막 판독값을
       담은 부분 결과를 씀
  143  종료됨(SIGTERM). 130과 같이 처리하며 코드만 다름

숫자: ASCII 숫자 0-9, 숫자 사이에만 쓰는 '_', 소수점 '.', 지수(7e9). 최대 50자리,
지수는 -50..50. 쉼표는 소수점으로도 자릿수 구분으로도 쓰지 않습니다.
--parameters는 K, M, B(또는 G), T도 받습니다: 7B = 7e9, 70M = 7e7.
""",
        "error_word": "오류",
        # numbers
        "non_ascii_digit": "숫자는 0-9로만 씁니다. 쓸 수 없는 문자: {character} ({codepoint})",
        "not_number": "숫자가 아닙니다: {text}. 숫자 0-9, 소수점 '.', 7e9 같은 지수로 쓰고, "
        "자릿수는 '_'로 묶거나 묶지 않습니다(4.5, 1_234, 1234)",
        "too_many_digits": "숫자가 너무 깁니다(최대 {limit}자리): {text}",
        "exponent_out_of_range": "지수가 범위를 벗어났습니다(-{limit}..{limit}): {text}",
        "ambiguous_separator": "모호한 숫자입니다: {text}. 세 자리 앞의 ',' 또는 '.'는 소수점일 "
        "수도, 천 단위 구분일 수도 있습니다. 정수라면 {whole}, 소수라면 {decimal}처럼 쓰세요",
        "not_count": "7e9, 7B, 1.5B 같은 양의 정수여야 합니다(소수점은 '.', 자릿수는 '_'로 묶거나 "
        "묶지 않음): {text}",
        "ambiguous_suffix": "모호한 숫자입니다: {text}. {decimal_reading}({suffix} = "
        "{decimal_factor}) 또는 {binary_reading}({suffix} = {binary_factor}), 두 가지로 읽힙니다. "
        "접미사 없이 숫자로만 쓰세요",
        "not_whole": "정수여야 합니다: {text}",
        "not_positive": "0보다 커야 합니다: {text}",
        "negative": "음수일 수 없습니다: {text}",
        "too_large": "{limit} 이하여야 합니다: {text}",
        # estimate
        "estimate_title": "IteraGPU Lab {version} - 밀집 가중치 추정치(가중치만)",
        "label_parameters": "파라미터",
        "label_bits": "값당 비트",
        "label_weights": "가중치",
        "label_weights_gb": "가중치 (GB)",
        "label_weights_gib": "가중치 (GiB)",
        "label_reserve_gib": "여유분 (GiB)",
        "label_total_gib": "초기 추정치 (GiB)",
        "label_not_counted": "포함하지 않음",
        "label_note": "참고",
        "rounded_up_from": "({exact} B에서 올림)",
        "assumed": "(가정)",
        "weights_plus_reserve": "(가중치 + 여유분, {total})",
        "list_separator": ", ",
        "activations": "활성화",
        "gradients": "그래디언트",
        "kv_cache": "KV 캐시",
        "optimizer_states": "옵티마이저 상태",
        "quantization_scales_and_metadata": "양자화 스케일과 메타데이터",
        "modules_kept_at_another_precision": "다른 정밀도로 유지되는 모듈",
        "note_weights_only": "가중치만 계산했으며 균일한 밀집 저장을 가정합니다. 활성화, "
        "그래디언트, KV 캐시, 옵티마이저 상태는 포함하지 않습니다.",
        "note_reserve": "여유분은 가정입니다. 부하가 이 값 안에 들어간다는 증명이 아닙니다.",
        "note_quantized": "이론적 균일 나눗셈입니다. 양자화 스케일과 다른 정밀도로 유지되는 "
        "모듈은 포함하지 않습니다.",
        "rounding_rule": "*_gb와 *_gib는 정확한 소수, *_bytes는 정수 바이트로 올림한 값이며, "
        "텍스트 보고서는 소수를 둘째 자리에서 반올림합니다(0.5는 올림)",
        # predict
        "predict_title": "IteraGPU Lab {version} - PyTorch 캐싱 할당자의 allocated 바이트 예측",
        "label_input": "입력",
        "predict_input": "배치 {batch}, 컨텍스트 {context}, 너비 {width}, {dtype} (값당 {size} B)",
        "label_rule": "규칙",
        "allocator_rule": "각 텐서를 {block} B의 배수로 올림하며, {block} B보다 작은 텐서도 "
        "{block} B를 차지합니다(roundup_power2_divisions를 쓰지 않는 PyTorch 캐싱 할당자)",
        "predict_step": "끝에서 allocated {allocated} (+{added}: 원시 {raw} + 올림 {rounding})",
        "label_estimate_check": "추정치 확인",
        "estimate_check": "파라미터 {parameters}개 × {bits}비트 = 원시 {bytes}",
        "label_not_predicted": "예측하지 않음",
        "not_predicted_workspace": "첫 행렬 곱셈에서 cuBLAS 또는 cuBLASLt가 PyTorch 할당자를 통해 "
        "가져가 이후 단계에도 남는 작업 공간: Hopper 이전에는 약 8 MiB, Hopper에서는 32 MiB, "
        "cuBLASLt를 쓰면 더 크고, cuBLAS가 자체 작업 공간을 쓰면 0입니다. GPU와 버전에 따라 "
        "다릅니다(CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE).",
        "not_predicted_temporaries": "순전파 안의 임시 텐서(종료 수준이 아니라 피크를 정합니다).",
        "not_predicted_reserved": "reserved 바이트: 할당자의 세그먼트(작은 블록은 2 MiB, 큰 블록은 "
        "더 큰 세그먼트)는 설정과 이력에 따라 달라집니다.",
        "not_predicted_context": "CUDA 컨텍스트, 커널, 그 밖에 PyTorch 할당자 밖의 메모리.",
        "network_architecture": "LayerNorm(width) -> Linear(width, 4*width) -> GELU -> "
        "Linear(4*width, width), 합성 (batch, context, width) 텐서에 적용",
        # environment
        "yes": "예",
        "no": "아니요",
        "value_not_read": "읽지 못함",
        "value_not_in_build": "없음",
        "variable_not_set": "설정되지 않음",
        "label_platform": "플랫폼",
        "not_installed": "설치되지 않음",
        "build_cuda": "(빌드의 CUDA)",
        "label_driver": "드라이버",
        "read_from": "({source}에서 읽음)",
        "label_driver_cuda": "드라이버의 CUDA",
        "label_allocator_backend": "할당자 백엔드",
        "label_allocator_settings": "적용 중인 할당자 설정",
        "label_caching": "캐싱 할당자",
        "bypassed": "우회됨: {reason}",
        "label_seed": "시드",
        "device_line": "{name}, 전체 {total} B, compute capability {capability}, UUID {uuid}, "
        "PCI {pci}",
        "device_arch": ", 아키텍처 {arch}",
        "device_free": ", 여유 메모리 {free} / {total} B",
        "nvml_line": "{name}, UUID {uuid}, PCI {pci}, 전체 {total} B",
        "label_requested": "요청한 장치 {device}",
        "can_be_measured": "측정할 수 있음",
        "cannot_be_measured": "측정할 수 없음",
        "label_import_warning": "PyTorch 가져오기 경고",
        "label_missing": "빠진 항목",
        "torch_not_installed": "PyTorch가 설치되어 있지 않습니다({error})",
        "nvml_not_importable": "nvidia-ml-py(pynvml)를 가져올 수 없습니다: {error}",
        "nvml_not_initialised": "NVML을 초기화할 수 없습니다: {error}",
        "nvml_list_not_read": "NVML 장치 목록을 읽지 못했습니다: {why}",
        "nvml_count_not_read": "NVML 장치 수를 읽지 못했습니다: {error}",
        "nvml_device_not_read": "NVML 장치 {index}의 정보를 모두 읽지 못했습니다: {error}",
        "driver_not_read": "드라이버 버전을 읽지 못했습니다(nvidia-smi, NVML, "
        "/proc/driver/nvidia/version, amdgpu)",
        "driver_cuda_not_read": "드라이버가 지원하는 CUDA 버전을 읽지 못했습니다(NVML, libcuda)",
        "allocator_backend_not_read": "할당자 백엔드를 읽지 못했습니다: {error}",
        "allocator_settings_unexposed": "적용 중인 할당자 설정을 읽지 못했습니다: 이 PyTorch는 "
        "설정을 공개하지 않습니다",
        "allocator_settings_not_read": "적용 중인 할당자 설정을 읽지 못했습니다: {error}",
        "gpu_query_failed": "GPU를 조회할 수 없습니다: {error}",
        "no_visible_gpu": "보이는 GPU가 없습니다",
        "properties_not_read": "{device}의 속성을 읽지 못했습니다: {error}",
        "mem_get_info_not_read": "{device}의 torch.cuda.mem_get_info()를 읽지 못했습니다: {error}",
        "cpu_only_build": "PyTorch {version}: CPU 전용 빌드입니다(CUDA나 HIP/ROCm 없음). 측정할 "
        "GPU가 없습니다",
        "sees_no_gpu": "PyTorch {version}: GPU가 보이지 않습니다"
        "(torch.cuda.is_available()이 False)",
        "no_such_gpu": "{device} GPU가 없습니다(보이는 GPU {count}개)",
        "caching_disabled": "{setting}: PyTorch가 캐싱 할당자를 우회하므로, 카운터는 무엇이 "
        "할당되든 0을 읽습니다",
        "device_not_gpu": "{device} 장치는 GPU가 아닙니다. measure에는 cuda:0 같은 CUDA 또는 "
        "HIP/ROCm 장치가 필요하며, CPU 결과를 GPU 측정으로 읽어서는 안 됩니다",
        "device_unsupported": "지원하지 않는 장치입니다: {device}. cuda 또는 cuda:N을 쓰세요"
        "(PyTorch의 HIP/ROCm 빌드도 cuda라는 이름을 씁니다)",
        "cannot_measure": "{device} 장치를 측정할 수 없습니다: {reason}",
        "device_not_measurable": "장치를 측정할 수 없습니다",
        # measure
        "measuring": "{device} 측정: 배치 {batch}, 컨텍스트 {context}, 너비 {width}, {dtype}, "
        "워밍업 {warmup}, 반복 {repeats}",
        "counters_not_read": "카운터를 읽지 않습니다: {reason}",
        "phase_ok": "성공, {ms} ms, allocated 피크 {peak}",
        "phase_failed": "실패({error})",
        "interrupted_sigint": "사용자가 중단했습니다(SIGINT, Ctrl-C)",
        "terminated_sigterm": "SIGTERM으로 종료되었습니다",
        "signal_while_writing": "결과를 쓰는 동안 {signal} 신호가 도착했습니다. 결과는 완전합니다",
        "status_ok": "성공",
        "status_failed": "실패",
        "status_interrupted": "중단",
        "wrote": "{path} 파일을 썼습니다(결과: {status})",
        "phase_outcome": "{phase} 단계 {status}: {message} (결과는 {path} 파일에 썼습니다)",
        "interrupted_nothing_written": "{reason}. 아무것도 쓰지 않았습니다",
        "internal_error": "내부 오류: {error}",
        "torch_missing_for_measure": "PyTorch가 설치되어 있지 않습니다({error}). measure에는 "
        "PyTorch와 CUDA 또는 HIP/ROCm GPU가 필요합니다. 아무것도 쓰지 않았습니다.",
        "nothing_written": "{problem}. 아무것도 쓰지 않았습니다.",
        "output_exists": "{path} 파일이 이미 있어 덮어쓰지 않습니다. 시리즈마다 새 이름을 고르세요",
        "output_created_meanwhile": "그사이 다른 실행이 {path} 파일을 만들었으므로 덮어쓰지 "
        "않습니다. 시리즈마다 새 이름을 고르세요",
        "output_created_meanwhile_kept": "그사이 다른 실행이 {path} 파일을 만들었으므로 덮어쓰지 "
        "않습니다. 이번 실행의 완전한 결과는 {temporary}에 남겨 두었습니다",
        "output_folder_missing": "{path} 파일을 만들 수 없습니다: {folder} 폴더가 없습니다",
        "output_folder_not_writable": "{path} 파일을 만들 수 없습니다: {folder} 폴더에 쓸 수 "
        "없습니다",
        "no_temporary_name": "{path} 옆에 쓸 수 있는 임시 파일 이름이 없습니다",
        "cannot_create_beside": "{path} 옆에 파일을 만들 수 없습니다: {error}",
        "cannot_write": "{path} 파일을 쓸 수 없습니다: {error}",
        "cannot_write_kept": "{path} 파일을 쓸 수 없습니다: {error}. 완전한 결과는 {temporary}에 "
        "남겨 두었습니다",
        # training step, parts, Recorder
        "needs_task_train": "--task train에서만 쓰는 옵션입니다: {option}",
        "forward_option_with_train": "--task forward에서만 쓰는 옵션입니다: {option}. 학습 스텝의 "
        "수는 --steps로 정합니다",
        "train_dtype": "--task train: --precision {precision}에서 파라미터의 형식은 "
        "{trained}입니다. --dtype {dtype}에서는 {optimizer} 학습을 실행하지 않습니다. --dtype을 "
        "빼거나 --dtype {trained}처럼 쓰세요",
        "output_folder_is_file": "{path} 파일을 만들 수 없습니다: 폴더가 아니라 파일입니다: "
        "{folder}",
        "output_dir_is_file": "결과 폴더가 폴더가 아니라 파일입니다: {folder}. 아무것도 쓰지 "
        "않았습니다",
        "measuring_train": "{device} 학습 스텝 측정: 배치 {batch}, 컨텍스트 {context}, 너비 "
        "{width}, {dtype}, 정밀도 {precision}, 옵티마이저 {optimizer}, 스텝 {steps}",
        "predict_train_title": "IteraGPU Lab {version} - 학습 스텝의 모델 상태 allocated 바이트 "
        "예측",
        "predict_train_input": "배치 {batch}, 컨텍스트 {context}, 너비 {width}, 정밀도 "
        "{precision}(파라미터 {dtype}), 옵티마이저 {optimizer}",
        "label_inputs_target": "입력과 목표값",
        "predict_train_inputs": "+{added}(모델 상태가 아님)",
        "predict_train_level": "모델 상태 {total} = 파라미터 {parameters} + 그래디언트 "
        "{gradients} + 옵티마이저 상태 {optimizer} (따로: 호스트의 옵티마이저 상태 {host})",
        "step_phase_first": "{phase} (첫 스텝)",
        "step_phase_warm": "{phase} (그 뒤의 스텝)",
        "not_predicted_activations": "활성화와 임시 텐서: forward와 loss가 backward를 위해 "
        "남기는 텐서와 각 단계 안의 임시 텐서. measure가 allocated에서 모델 상태를 뺀 나머지로 "
        "보고합니다.",
        "torch_missing_for_recorder": "PyTorch가 설치되어 있지 않습니다({error}). Recorder에는 "
        "PyTorch와 CUDA 또는 HIP/ROCm GPU가 필요합니다. 아무것도 쓰지 않았습니다",
        "rank_out_of_range": "프로세스 번호(rank)는 0 이상이고 프로세스 수(world size) {world}보다 "
        "작은 정수여야 합니다: {rank}. 아무것도 쓰지 않았습니다",
        "phase_inside_phase": "{open} 단계가 아직 열려 있는 동안 {phase} 단계를 열 수 없습니다. "
        "단계는 겹치지 않습니다. 아무것도 쓰지 않았습니다",
        "phase_name_invalid": "단계 이름은 ASCII 영문자, 숫자, '_.:-'로 된 64자 이하의 낱말이어야 "
        "합니다: {phase}. 아무것도 쓰지 않았습니다",
        "phase_step_invalid": "step은 1 이상의 정수여야 합니다(스텝에 속하지 않는 단계에는 주지 "
        "않습니다): {step}. 아무것도 쓰지 않았습니다",
        "phase_opened_twice": "같은 단계를 두 번 열었습니다: {phase}, step {step}. 스텝마다 "
        "단계는 한 번만 기록합니다. 아무것도 쓰지 않았습니다",
        "no_phase_open": "열린 단계가 없는데 end()를 불렀습니다. 아무것도 쓰지 않았습니다",
        "between_phases": "(단계 사이)",
        # the result file's descriptions
        "policy_phase_boundaries": "시작 판독 전과 실행 뒤에 torch.cuda.synchronize(device), 시작 "
        "판독 뒤에 torch.cuda.reset_peak_memory_stats(device)",
        "units_memory": "바이트(원시 torch.cuda 카운터, null은 읽지 못한 값)",
        "units_duration": "나노초(time.perf_counter_ns, 실행과 마지막 동기화)",
        "counter_start_allocated_bytes": "단계 전의 torch.cuda.memory_allocated",
        "counter_start_reserved_bytes": "단계 전의 torch.cuda.memory_reserved",
        "counter_peak_allocated_bytes": "단계의 초기화 이후 torch.cuda.max_memory_allocated(절대 "
        "피크: 단계 전에 있던 할당도 포함)",
        "counter_peak_reserved_bytes": "단계의 초기화 이후 torch.cuda.max_memory_reserved(절대 "
        "피크)",
        "counter_end_allocated_bytes": "단계 뒤의 torch.cuda.memory_allocated",
        "counter_end_reserved_bytes": "단계 뒤의 torch.cuda.memory_reserved(메모리 부족 오류 "
        "뒤에는 할당자가 사용하지 않는 캐시 블록을 해제한 뒤의 값)",
        "unexplained_meaning": "cold_forward가 예측보다 더 할당한 바이트: 라이브러리(먼저 "
        "cuBLAS/cuBLASLt 작업 공간)가 PyTorch 할당자를 통해 가져간 메모리이며, 모델이 아닙니다",
    },
    "id": {
        # help
        "description": "IteraGPU Lab {version}: estimasi bobot, prediksi alokasi, laporan "
        "lingkungan, dan pengukuran memori GPU per fase (byte mentah).",
        "version_help": "tampilkan versi lalu keluar",
        "command_metavar": "PERINTAH",
        "lang_help": "bahasa bantuan, pesan, dan keluaran (bawaan: bahasa dari variabel lokal "
        "LANGUAGE, LC_ALL, LC_MESSAGES, atau LANG, yang pertama disetel; untuk lokal lain "
        "{source})",
        "json_help": "cetak JSON",
        "estimate_help": "bobot dense dalam byte, GB, dan GiB, ditambah margin menjadi perkiraan "
        "awal (cukup pustaka standar)",
        "estimate_description": "Bobot dense dari jumlah parameter dan jumlah bit per nilai "
        "(penyimpanan seragam), ditambah margin yang diasumsikan dalam GiB. Aktivasi, gradien, "
        "cache KV, dan status optimizer tidak dihitung.",
        "parameters_help": "jumlah parameter, mis. 7000000000, 7e9, atau 7B (paling banyak "
        "{maximum})",
        "bits_help": "jumlah bit per nilai, mis. 16 atau 4,5 (paling banyak {maximum})",
        "reserve_help": "margin yang diasumsikan dalam GiB (bawaan 0, paling banyak {maximum})",
        "predict_help": "byte allocated setelah model_load dan inputs; dengan --task train, byte "
        "allocated status model setelah setiap fase (cukup pustaka standar)",
        "predict_description": "Byte allocated yang akan ditunjukkan alokator cache bawaan "
        "PyTorch di akhir model_load dan inputs untuk jaringan dan masukan measure: setiap tensor "
        "dibulatkan ke atas ke kelipatan {block} B. Ruang kerja cuBLAS/cuBLASLt, tensor "
        "sementara, dan segmen reserved tidak diprediksi.",
        "predict_json_help": "cetak JSON beserta penurunannya",
        "batch_help": "batch: dimensi pertama tensor masukan sintetis",
        "context_help": "context: satu dimensi tensor, bukan panjang konteks LLM",
        "width_help": "width: lebar jaringan dan dimensi terakhir masukan",
        "dtype_help": "tipe nilai (bawaan float32)",
        "environment_help": "Python, platform, backend PyTorch, perangkat, driver, dan "
        "pengaturan alokator",
        "environment_description": "Melaporkan lingkungan; keluar dengan 0 hanya bila perangkat "
        "yang diminta dapat diukur. Memori bebas hanya ditanyakan kepada perangkat yang diminta.",
        "device_help_environment": "perangkat yang diperiksa (bawaan cuda:0)",
        "measure_help": "ukur lintasan maju atau langkah pelatihan jaringan dense kecil milik "
        "lab per fase (memerlukan PyTorch dan GPU)",
        "measure_description": "Fase model_load, inputs, cold_forward, warmup, dan warm_forward "
        "(setiap pengulangan dicatat terpisah) pada masukan sintetis (batch, context, width). "
        "Dengan --task train: setelah model_load dan inputs, setiap langkah mengukur forward, "
        "loss, backward, optimizer_step, dan zero_grad, dan di akhir setiap fase byte parameter, "
        "gradien, dan status optimizer dihitung langsung dari tensornya. context adalah satu "
        "dimensi tensor, bukan panjang konteks LLM. Byte mentah, beserta prediksi predict, "
        "ditulis ke berkas JSON BARU: mula-mula ke berkas sementara di folder yang sama, lalu "
        "diterbitkan tanpa menimpa.",
        "device_help_measure": "GPU yang diukur (bawaan cuda:0)",
        "warmup_help": "jumlah lintasan pemanasan (bawaan 3, hanya --task forward)",
        "repeats_help": "jumlah pengulangan warm_forward (bawaan 5, hanya --task forward)",
        "steps_help": "jumlah langkah pelatihan (bawaan 3, hanya --task train); langkah pertama "
        "dan langkah berikutnya dicatat terpisah",
        "task_help": "forward (bawaan): fase lintasan maju; train: langkah pelatihan (forward, "
        "loss, backward, optimizer_step, zero_grad)",
        "optimizer_help": "optimizer untuk --task train: AdamW atau SGD dari torch.optim (bawaan "
        "adamw)",
        "precision_help": "presisi untuk --task train: fp32, bf16, atau autocast bf16 di atas "
        "bobot float32 (bawaan fp32)",
        "file_metavar": "BERKAS",
        "output_help": "berkas JSON baru (tidak pernah ditimpa)",
        "epilog": """\
kode keluar:
  0    berhasil (estimate dan predict mencetak hasilnya; environment: perangkat yang
       diminta dapat diukur; measure: semua fase berhasil dan berkas hasil ditulis)
  1    kesalahan internal yang tidak terduga (satu baris di stderr, tanpa traceback)
  2    argumen tidak valid, PyTorch tidak ada, perangkat bukan GPU (mis. cpu), atau
       GPU tersebut tidak ada; untuk measure tidak ada yang ditulis
  3    measure: berkas --output sudah ada (dibiarkan utuh)
  4    measure: sebuah fase gagal (termasuk kehabisan memori); berkas hasil ditulis
       dengan fase yang gagal, pesan kesalahan, dan pembacaan terakhir
  5    measure: berkas hasil tidak dapat dibuat atau ditulis
  130  dihentikan (SIGINT, Ctrl-C); measure menulis hasil parsial, dengan fase yang
       terhenti dan pembacaan terakhirnya, bila memungkinkan
  143  diakhiri (SIGTERM); ditangani seperti 130, dengan kodenya sendiri

angka: digit ASCII 0-9, '_' hanya di antara digit, satu tanda desimal ',' atau '.'
(4,5 atau 4.5), eksponen (7e9); paling banyak 50 digit dan eksponen dalam -50..50.
Tanda desimal setelah 1 sampai 3 digit dan sebelum tepat 3 digit (1,234 atau 1.500)
ditolak karena ambigu: bisa berarti desimal atau pemisah ribuan.
--parameters juga menerima K, M, B (atau G), dan T: 7B = 7e9, 70M = 7e7.
""",
        "error_word": "kesalahan",
        # numbers
        "non_ascii_digit": "angka hanya ditulis dengan digit 0-9: {character} ({codepoint}) "
        "bukan salah satunya",
        "not_number": "bukan angka: {text}. Tulis dengan digit 0-9, satu tanda desimal ',' atau "
        "'.', dan eksponen seperti 7e9; kelompok digit ditulis dengan '_' atau tanpa pemisah "
        "(4,5, 1_234, 1234)",
        "too_many_digits": "terlalu banyak digit (paling banyak {limit}): {text}",
        "exponent_out_of_range": "eksponen di luar rentang (-{limit}..{limit}): {text}",
        "ambiguous_separator": "angka ambigu: {text}. Tanda ',' atau '.' sebelum tiga digit bisa "
        "berarti desimal atau pemisah ribuan; tulis {whole} untuk bilangan bulat atau {decimal} "
        "untuk desimal",
        "not_count": "harus bilangan bulat positif seperti 7e9, 7B, atau 1,5B (tanda desimal ',' "
        "atau '.', kelompok digit dengan '_' atau tanpa pemisah): {text}",
        "ambiguous_suffix": "angka ambigu: {text}. Bisa berarti {decimal_reading} ({suffix} = "
        "{decimal_factor}) atau {binary_reading} ({suffix} = {binary_factor}); tulis dengan angka "
        "saja, tanpa akhiran",
        "not_whole": "harus bilangan bulat: {text}",
        "not_positive": "harus lebih besar dari 0: {text}",
        "negative": "tidak boleh negatif: {text}",
        "too_large": "paling besar {limit}: {text}",
        # estimate
        "estimate_title": "IteraGPU Lab {version} - estimasi bobot dense (bobot saja)",
        "label_parameters": "parameter",
        "label_bits": "bit per nilai",
        "label_weights": "bobot",
        "label_weights_gb": "bobot (GB)",
        "label_weights_gib": "bobot (GiB)",
        "label_reserve_gib": "margin (GiB)",
        "label_total_gib": "perkiraan awal (GiB)",
        "label_not_counted": "tidak dihitung",
        "label_note": "catatan",
        "rounded_up_from": "(dibulatkan ke atas dari {exact} B)",
        "assumed": "(asumsi)",
        "weights_plus_reserve": "(bobot + margin, {total})",
        "list_separator": ", ",
        "activations": "aktivasi",
        "gradients": "gradien",
        "kv_cache": "cache KV",
        "optimizer_states": "status optimizer",
        "quantization_scales_and_metadata": "skala dan metadata kuantisasi",
        "modules_kept_at_another_precision": "modul yang disimpan pada presisi lain",
        "note_weights_only": "Bobot saja, dengan penyimpanan dense yang seragam: aktivasi, "
        "gradien, cache KV, dan status optimizer tidak dihitung.",
        "note_reserve": "Margin adalah asumsi, bukan bukti bahwa beban muat dalam angka ini.",
        "note_quantized": "Pembagian seragam teoretis: skala kuantisasi dan modul yang disimpan "
        "pada presisi lain tidak dihitung.",
        "rounding_rule": "*_gb dan *_gib adalah desimal eksak; *_bytes dibulatkan ke atas ke byte "
        "bulat; laporan teks membulatkan desimal ke 2 angka di belakang koma (setengah ke atas)",
        # predict
        "predict_title": "IteraGPU Lab {version} - prediksi byte allocated alokator cache PyTorch",
        "label_input": "masukan",
        "predict_input": "batch {batch}, context {context}, width {width}, {dtype} ({size} B per "
        "nilai)",
        "label_rule": "aturan",
        "allocator_rule": "setiap tensor dibulatkan ke atas ke kelipatan {block} B, dan tensor "
        "yang lebih kecil dari {block} B tetap menempati {block} B (alokator cache PyTorch tanpa "
        "roundup_power2_divisions)",
        "predict_step": "allocated {allocated} di akhir (+{added}: mentah {raw} + pembulatan "
        "{rounding})",
        "label_estimate_check": "pemeriksaan estimasi",
        "estimate_check": "{parameters} parameter × {bits} bit = {bytes} mentah",
        "label_not_predicted": "tidak diprediksi",
        "not_predicted_workspace": "Ruang kerja yang diambil cuBLAS atau cuBLASLt melalui "
        "alokator PyTorch pada perkalian matriks pertama dan tetap ada pada fase berikutnya: "
        "sekitar 8 MiB sebelum Hopper, 32 MiB pada Hopper, lebih besar dengan cuBLASLt, dan 0 bila "
        "cuBLAS memakai ruang kerjanya sendiri; ukurannya bergantung pada GPU dan versi "
        "(CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE).",
        "not_predicted_temporaries": "Tensor sementara di dalam lintasan maju (menentukan puncak, "
        "bukan level akhir).",
        "not_predicted_reserved": "Byte reserved: segmen alokator (2 MiB untuk blok kecil, lebih "
        "besar untuk blok besar) bergantung pada pengaturan dan riwayatnya.",
        "not_predicted_context": "Konteks CUDA, kernel, dan memori lain di luar alokator PyTorch.",
        "network_architecture": "LayerNorm(width) -> Linear(width, 4*width) -> GELU -> "
        "Linear(4*width, width), diterapkan pada tensor sintetis (batch, context, width)",
        # environment
        "yes": "ya",
        "no": "tidak",
        "value_not_read": "tidak terbaca",
        "value_not_in_build": "tidak ada",
        "variable_not_set": "tidak diatur",
        "label_platform": "Platform",
        "not_installed": "tidak terpasang",
        "build_cuda": "(CUDA build-nya)",
        "label_driver": "Driver",
        "read_from": "(dibaca dari {source})",
        "label_driver_cuda": "CUDA driver",
        "label_allocator_backend": "Backend alokator",
        "label_allocator_settings": "Pengaturan alokator yang berlaku",
        "label_caching": "Alokator cache",
        "bypassed": "dilewati: {reason}",
        "label_seed": "Seed",
        "device_line": "{name}, total {total} B, compute capability {capability}, UUID {uuid}, "
        "PCI {pci}",
        "device_arch": ", arsitektur {arch}",
        "device_free": ", memori bebas {free} dari {total} B",
        "nvml_line": "{name}, UUID {uuid}, PCI {pci}, total {total} B",
        "label_requested": "Perangkat yang diminta, {device}",
        "can_be_measured": "dapat diukur",
        "cannot_be_measured": "tidak dapat diukur",
        "label_import_warning": "Peringatan impor PyTorch",
        "label_missing": "Tidak tersedia",
        "torch_not_installed": "PyTorch tidak terpasang ({error})",
        "nvml_not_importable": "nvidia-ml-py (pynvml) tidak dapat diimpor: {error}",
        "nvml_not_initialised": "NVML tidak dapat diinisialisasi: {error}",
        "nvml_list_not_read": "daftar perangkat NVML tidak terbaca: {why}",
        "nvml_count_not_read": "jumlah perangkat NVML tidak terbaca: {error}",
        "nvml_device_not_read": "perangkat NVML {index} tidak terbaca sepenuhnya: {error}",
        "driver_not_read": "versi driver tidak terbaca (nvidia-smi, NVML, "
        "/proc/driver/nvidia/version, amdgpu)",
        "driver_cuda_not_read": "versi CUDA yang didukung driver tidak terbaca (NVML, libcuda)",
        "allocator_backend_not_read": "backend alokator tidak terbaca: {error}",
        "allocator_settings_unexposed": "pengaturan alokator yang berlaku tidak terbaca: PyTorch "
        "ini tidak menyediakannya",
        "allocator_settings_not_read": "pengaturan alokator yang berlaku tidak terbaca: {error}",
        "gpu_query_failed": "GPU tidak dapat dikueri: {error}",
        "no_visible_gpu": "tidak ada GPU yang terlihat",
        "properties_not_read": "properti {device} tidak terbaca: {error}",
        "mem_get_info_not_read": "torch.cuda.mem_get_info() untuk {device} tidak terbaca: {error}",
        "cpu_only_build": "PyTorch {version} adalah build khusus CPU (tanpa CUDA atau HIP/ROCm): "
        "tidak ada GPU untuk diukur",
        "sees_no_gpu": "PyTorch {version} tidak melihat GPU (torch.cuda.is_available() bernilai "
        "False)",
        "no_such_gpu": "GPU {device} tidak ada ({count} terlihat)",
        "caching_disabled": "{setting} disetel: PyTorch melewati alokator cache-nya, sehingga "
        "penghitung membaca 0 apa pun yang dialokasikan",
        "device_not_gpu": "perangkat {device} bukan GPU: measure memerlukan perangkat CUDA atau "
        "HIP/ROCm seperti cuda:0; hasil CPU tidak boleh dibaca sebagai pengukuran GPU",
        "device_unsupported": "perangkat {device} tidak didukung: gunakan cuda atau cuda:N (build "
        "HIP/ROCm dari PyTorch juga memakai nama cuda)",
        "cannot_measure": "{device} tidak dapat diukur: {reason}",
        "device_not_measurable": "perangkat tidak dapat diukur",
        # measure
        "measuring": "mengukur {device}: batch {batch}, context {context}, width {width}, "
        "{dtype}, pemanasan {warmup}, pengulangan {repeats}",
        "counters_not_read": "penghitung tidak dibaca: {reason}",
        "phase_ok": "berhasil, {ms} ms, puncak allocated {peak}",
        "phase_failed": "GAGAL ({error})",
        "interrupted_sigint": "dihentikan oleh pengguna (SIGINT, Ctrl-C)",
        "terminated_sigterm": "diakhiri oleh SIGTERM",
        "signal_while_writing": "{signal} datang saat hasil sedang ditulis; hasilnya lengkap",
        "status_ok": "berhasil",
        "status_failed": "gagal",
        "status_interrupted": "terhenti",
        "wrote": "{path} ditulis (hasil: {status})",
        "phase_outcome": "fase {phase} {status}: {message} (hasil ditulis ke {path})",
        "interrupted_nothing_written": "{reason}; tidak ada yang ditulis",
        "internal_error": "kesalahan internal: {error}",
        "torch_missing_for_measure": "PyTorch tidak terpasang ({error}); measure memerlukan "
        "PyTorch dengan GPU CUDA atau HIP/ROCm. Tidak ada yang ditulis.",
        "nothing_written": "{problem}. Tidak ada yang ditulis.",
        "output_exists": "menolak menimpa {path}: berkas itu sudah ada; pilih nama baru untuk "
        "setiap rangkaian",
        "output_created_meanwhile": "menolak menimpa {path}: berkas itu dibuat eksekusi lain "
        "sementara itu; pilih nama baru untuk setiap rangkaian",
        "output_created_meanwhile_kept": "menolak menimpa {path}: berkas itu dibuat eksekusi lain "
        "sementara itu; hasil lengkap eksekusi ini disimpan sebagai {temporary}",
        "output_folder_missing": "tidak dapat membuat {path}: folder {folder} tidak ada",
        "output_folder_not_writable": "tidak dapat membuat {path}: folder {folder} tidak dapat "
        "ditulisi",
        "no_temporary_name": "tidak ada nama berkas sementara yang bebas di samping {path}",
        "cannot_create_beside": "tidak dapat membuat berkas di samping {path}: {error}",
        "cannot_write": "tidak dapat menulis {path}: {error}",
        "cannot_write_kept": "tidak dapat menulis {path}: {error}; hasil lengkap disimpan sebagai "
        "{temporary}",
        # training step, parts, Recorder
        "needs_task_train": "{option} hanya dipakai dengan --task train",
        "forward_option_with_train": "{option} hanya dipakai dengan --task forward; jumlah langkah "
        "pelatihan ditentukan dengan --steps",
        "train_dtype": "--task train: parameter untuk --precision {precision} bertipe {trained}, "
        "jadi {optimizer} tidak dijalankan dengan --dtype {dtype}; hilangkan --dtype atau tulis "
        "{trained}",
        "output_folder_is_file": "tidak dapat membuat {path}: {folder} adalah berkas, bukan folder",
        "output_dir_is_file": "direktori hasil {folder} adalah berkas, bukan direktori; tidak "
        "ada yang ditulis",
        "measuring_train": "mengukur langkah pelatihan di {device}: batch {batch}, context "
        "{context}, width {width}, {dtype}, presisi {precision}, optimizer {optimizer}, langkah "
        "{steps}",
        "predict_train_title": "IteraGPU Lab {version} - prediksi byte allocated status model "
        "dalam langkah pelatihan",
        "predict_train_input": "batch {batch}, context {context}, width {width}, presisi "
        "{precision} (parameter {dtype}), optimizer {optimizer}",
        "label_inputs_target": "masukan dan target",
        "predict_train_inputs": "+{added} (bukan status model)",
        "predict_train_level": "status model {total} = parameter {parameters} + gradien "
        "{gradients} + status optimizer {optimizer} (status optimizer di host, {host}, terpisah)",
        "step_phase_first": "{phase} (langkah pertama)",
        "step_phase_warm": "{phase} (langkah berikutnya)",
        "not_predicted_activations": "Aktivasi dan tensor sementara: tensor yang disimpan forward "
        "dan loss untuk backward, serta tensor sementara di dalam setiap fase; measure "
        "melaporkannya sebagai sisa allocated setelah status model dikurangkan.",
        "torch_missing_for_recorder": "PyTorch tidak terpasang ({error}); Recorder memerlukan "
        "PyTorch dengan GPU CUDA atau HIP/ROCm. Tidak ada yang ditulis",
        "rank_out_of_range": "nomor proses (rank) harus bilangan bulat, paling kecil 0 dan kurang "
        "dari jumlah proses (world size) {world}: {rank}. Tidak ada yang ditulis",
        "phase_inside_phase": "fase {phase} tidak dapat dibuka selama fase {open} masih terbuka; "
        "fase tidak boleh tumpang tindih. Tidak ada yang ditulis",
        "phase_name_invalid": "nama fase harus satu kata dari huruf ASCII, digit, dan '_.:-', "
        "paling panjang 64 karakter: {phase}. Tidak ada yang ditulis",
        "phase_step_invalid": "step harus bilangan bulat paling kecil 1 (tidak diberikan untuk "
        "fase di luar langkah): {step}. Tidak ada yang ditulis",
        "phase_opened_twice": "fase {phase} (step {step}) dibuka dua kali; setiap fase dicatat "
        "sekali per langkah. Tidak ada yang ditulis",
        "no_phase_open": "end() dipanggil padahal tidak ada fase yang terbuka. Tidak ada yang "
        "ditulis",
        "between_phases": "(di antara fase)",
        # the result file's descriptions
        "policy_phase_boundaries": "torch.cuda.synchronize(device) sebelum pembacaan awal dan "
        "setelah eksekusi; torch.cuda.reset_peak_memory_stats(device) setelah pembacaan awal",
        "units_memory": "byte (penghitung torch.cuda mentah; null berarti tidak terbaca)",
        "units_duration": "nanodetik (time.perf_counter_ns, eksekusi dan sinkronisasi terakhir)",
        "counter_start_allocated_bytes": "torch.cuda.memory_allocated sebelum fase",
        "counter_start_reserved_bytes": "torch.cuda.memory_reserved sebelum fase",
        "counter_peak_allocated_bytes": "torch.cuda.max_memory_allocated sejak reset fase itu "
        "(puncak absolut: termasuk yang sudah ada sebelum fase)",
        "counter_peak_reserved_bytes": "torch.cuda.max_memory_reserved sejak reset fase itu "
        "(puncak absolut)",
        "counter_end_allocated_bytes": "torch.cuda.memory_allocated setelah fase",
        "counter_end_reserved_bytes": "torch.cuda.memory_reserved setelah fase (setelah kesalahan "
        "kehabisan memori: setelah alokator melepaskan blok cache yang tidak terpakai)",
        "unexplained_meaning": "byte allocated yang ditambahkan cold_forward melebihi prediksi: "
        "memori yang diambil pustaka (terutama ruang kerja cuBLAS/cuBLASLt) melalui alokator "
        "PyTorch, bukan model",
    },
}

# argparse's own messages, by the English text argparse looks up through gettext; each language
# gives every one a user can meet (tests/lab/test_lab_language.py reads them from the running
# Python's argparse and names any that a newer argparse adds).
ARGPARSE_MESSAGES: dict[str, dict[str, str]] = {
    "ko": {
        "usage: ": "사용법: ",
        "positional arguments": "위치 인수",
        "options": "옵션",
        "show this help message and exit": "이 도움말을 보여 주고 끝냅니다",
        "argument %(argument_name)s: %(message)s": "인수 %(argument_name)s: %(message)s",
        "the following arguments are required: %s": "다음 인수가 필요합니다: %s",
        "one of the arguments %s is required": "다음 인수 가운데 하나가 필요합니다: %s",
        "expected one argument": "값이 하나 필요합니다",
        "expected at most one argument": "값은 하나까지만 줄 수 있습니다",
        "expected at least one argument": "값이 하나 이상 필요합니다",
        "expected %s argument": "값이 %s개 필요합니다",
        "expected %s arguments": "값이 %s개 필요합니다",
        "ambiguous option: %(option)s could match %(matches)s": "모호한 옵션입니다: "
        "%(option)s (후보: %(matches)s)",
        "unrecognized arguments: %s": "알 수 없는 인수입니다: %s",
        "not allowed with argument %s": "%s 인수와 함께 쓸 수 없습니다",
        "ignored explicit argument %r": "값을 받지 않는 옵션입니다: %r",
        "invalid %(type)s value: %(value)r": "잘못된 %(type)s 값입니다: %(value)r",
        "invalid choice: %(value)r (choose from %(choices)s)": "고를 수 없는 값입니다: "
        "%(value)r (다음 가운데 하나: %(choices)s)",
        "unexpected option string: %s": "예상하지 못한 옵션입니다: %s",
    },
    "id": {
        "usage: ": "penggunaan: ",
        "positional arguments": "argumen posisi",
        "options": "opsi",
        "show this help message and exit": "tampilkan bantuan ini lalu keluar",
        "argument %(argument_name)s: %(message)s": "argumen %(argument_name)s: %(message)s",
        "the following arguments are required: %s": "argumen berikut wajib diisi: %s",
        "one of the arguments %s is required": "salah satu argumen berikut wajib diisi: %s",
        "expected one argument": "memerlukan satu nilai",
        "expected at most one argument": "paling banyak satu nilai",
        "expected at least one argument": "memerlukan setidaknya satu nilai",
        "expected %s argument": "memerlukan %s nilai",
        "expected %s arguments": "memerlukan %s nilai",
        "ambiguous option: %(option)s could match %(matches)s": "opsi ambigu: %(option)s bisa "
        "berarti %(matches)s",
        "unrecognized arguments: %s": "argumen tidak dikenal: %s",
        "not allowed with argument %s": "tidak boleh dipakai bersama argumen %s",
        "ignored explicit argument %r": "opsi ini tidak menerima nilai: %r",
        "invalid %(type)s value: %(value)r": "nilai %(type)s tidak valid: %(value)r",
        "invalid choice: %(value)r (choose from %(choices)s)": "pilihan tidak valid: %(value)r "
        "(pilih salah satu dari %(choices)s)",
        "unexpected option string: %s": "opsi tak terduga: %s",
    },
}


if __name__ == "__main__":
    sys.exit(main())
