"""The worked-examples registry: every figure the guides compute, with its inputs and exact value.

This is the single source that the CLI (`iteragpu examples`), the doctested snippets and the
figure checker of the pages read. Each figure carries its unit and the rounding the guides state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import Any

from iteragpu.core.allocator import ALLOCATOR_BLOCK_BYTES, predict_allocations
from iteragpu.core.kv_cache import K_AND_V, KVCacheSpec
from iteragpu.core.peaks import two_peaks
from iteragpu.core.units import bytes_per, from_unit, gib, to_unit
from iteragpu.core.weights import BITS_PER_BYTE, estimate_weights
from iteragpu.gpus import catalog
from iteragpu.models.config import parse_config
from iteragpu.models.kv import estimate_kv, layer_layouts
from iteragpu.models.presets import PRESETS_DIR

UNITS_WITH_BYTES = ("B", "GB", "GiB", "MiB")


@dataclass(frozen=True)
class Figure:
    """One stated figure: `key` names its unit (`total_gib`), `value` is exact."""

    key: str
    value: Fraction
    unit: str
    decimals: int
    role: str  # "input" or "result"

    @property
    def exact_bytes(self) -> Fraction | None:
        """The figure in bytes when it is a byte quantity, else None."""
        if self.unit not in UNITS_WITH_BYTES:
            return None
        return from_unit(self.value, self.unit)


@dataclass(frozen=True)
class WorkedExample:
    id: str
    title: dict[str, str]
    where: str  # guide page and anchor that state it
    figures: tuple[Figure, ...]

    def figure(self, key: str) -> Figure:
        for figure in self.figures:
            if figure.key == key:
                return figure
        raise KeyError(f"example {self.id!r} has no figure {key!r}")


def _in(key: str, value: int | Fraction, unit: str = "", decimals: int = 0) -> Figure:
    return Figure(key, Fraction(value), unit, decimals, "input")


def _out(key: str, value: int | Fraction, unit: str = "", decimals: int = 0) -> Figure:
    return Figure(key, Fraction(value), unit, decimals, "result")


# The guides' inputs, each stated once.
PARAMETERS_7B = 7_000_000_000
GUIDE_RESERVES_GIB = {"measurement": 4, "sizing": 6}
KV_EXAMPLE = {"layers": 32, "kv_heads": 8, "head_dim": 128, "tokens": 8192, "bytes_per_value": 2}
CONVERT_EXAMPLE_BYTES = 24_000_000_000
TWO_PEAKS_GIB = {"a": (8, 10), "b": (6, 12)}
SHORTLIST_CARD_IDS = ("rtx-4090", "rtx-6000-ada")
# The lab's validation case (batch, context, width, dtype), as the guides state it.
LAB_VALIDATION_CASE = (1, 16, 64, "float32")
# PyTorch's default CUBLAS_WORKSPACE_CONFIG (:SIZE_KIB:COUNT pairs) before Hopper and on Hopper
# (aten/src/ATen/cuda/CublasHandlePool.cpp), and the caching allocator's segment for small
# blocks (kSmallBuffer, c10/cuda/CUDACachingAllocator.cpp).
LAB_CUBLAS_DEFAULT_WORKSPACE_CONFIGS = {"before_hopper": ":4096:2:16:8", "hopper": ":4096:8"}
LAB_SMALL_SEGMENT_BYTES = 2_097_152


def _units_definitions() -> WorkedExample:
    return WorkedExample(
        id="units-gb-gib",
        title={"ko": "GB와 GiB의 정의", "id": "Definisi GB dan GiB"},
        where="measurement.md#weights-gb-gib, sizing.md#units-before-comparing",
        figures=(
            _in("decimal_base", 10),
            _in("gb_exponent", 9),
            _in("binary_base", 2),
            _in("gib_exponent", 30),
            _in("one_gb", 1, "GB"),
            _in("one_gib", 1, "GiB"),
            _out("gb_bytes", bytes_per("GB"), "B"),
            _out("gib_bytes", bytes_per("GiB"), "B"),
        ),
    )


def _weights(bits: int, reserve_gib: int, where: str) -> WorkedExample:
    estimate = estimate_weights(PARAMETERS_7B, bits, reserve_gib)
    return WorkedExample(
        id=f"weights-7b-{bits}bit-reserve-{reserve_gib}gib",
        title={
            "ko": f"파라미터 70억 개, {bits}비트, 여유분 {reserve_gib} GiB",
            "id": f"7 miliar parameter, {bits} bit, margin {reserve_gib} GiB",
        },
        where=where,
        figures=(
            _in("parameters", PARAMETERS_7B),
            _in("bits", bits),
            _in("bytes_per_parameter", Fraction(bits, 8), "B", 1 if bits % 8 else 0),
            _in("reserve_gib", reserve_gib, "GiB"),
            _out("weights_bytes", estimate.weights_bytes, "B"),
            _out("weights_gb", estimate.weights_gb, "GB", 0 if bits % 8 == 0 else 1),
            _out("weights_gib", estimate.weights_gib, "GiB", 2),
            _out("total_gib", estimate.total_gib, "GiB", 2),
        ),
    )


def _kv_cache(sequences: int) -> WorkedExample:
    kv = KV_EXAMPLE
    spec = KVCacheSpec(
        layers=kv["layers"],
        kv_heads=kv["kv_heads"],
        head_dim=kv["head_dim"],
        tokens=kv["tokens"],
        bytes_per_value=Fraction(kv["bytes_per_value"]),
        sequences=sequences,
    )
    label = {"ko": f"시퀀스 {sequences}개", "id": f"{sequences} sekuens"}
    return WorkedExample(
        id=f"kv-cache-{sequences}-sequence" + ("s" if sequences > 1 else ""),
        title={"ko": f"KV 캐시, {label['ko']}", "id": f"Cache KV, {label['id']}"},
        where="measurement.md#inference-context-concurrency",
        figures=(
            _in("k_and_v", K_AND_V),
            _in("layers", spec.layers),
            _in("kv_heads", spec.kv_heads),
            _in("head_dim", spec.head_dim),
            _in("tokens", spec.tokens),
            _in("bytes_per_value", spec.bytes_per_value, "B"),
            _in("sequences", spec.sequences),
            _out("kv_cache_bytes", spec.kv_cache_bytes, "B"),
            _out("kv_cache_gib", spec.kv_cache_gib, "GiB"),
        ),
    )


def _convert_24e9() -> WorkedExample:
    return WorkedExample(
        id="convert-24e9-bytes",
        title={"ko": "240억 바이트를 GiB로", "id": "24 miliar byte dalam GiB"},
        where="sizing.md#units-before-comparing",
        figures=(
            _in("bytes", CONVERT_EXAMPLE_BYTES, "B"),
            _in("card_nominal_gb", to_unit(CONVERT_EXAMPLE_BYTES, "GB"), "GB"),
            _out("gib", gib(CONVERT_EXAMPLE_BYTES), "GiB", 2),
        ),
    )


def _two_peaks() -> WorkedExample:
    instants = TWO_PEAKS_GIB
    report = two_peaks(
        [
            (from_unit(a, "GiB").numerator, from_unit(r, "GiB").numerator)
            for a, r in instants.values()
        ]
    )
    figures = []
    for name, (allocated, reserved) in instants.items():
        figures += [
            _in(f"instant_{name}_allocated_gib", allocated, "GiB"),
            _in(f"instant_{name}_reserved_gib", reserved, "GiB"),
        ]
    for name, difference in zip(instants, report.differences_at_instants_bytes, strict=True):
        figures.append(_out(f"instant_{name}_difference_gib", gib(difference), "GiB"))
    figures += [
        _out("allocated_peak_gib", gib(report.allocated_peak_bytes), "GiB"),
        _out("reserved_peak_gib", gib(report.reserved_peak_bytes), "GiB"),
        _out("difference_of_peaks_gib", gib(report.difference_of_peaks_bytes), "GiB"),
    ]
    return WorkedExample(
        id="two-peaks",
        title={"ko": "두 피크의 차이", "id": "Selisih dua puncak"},
        where="measurement.md#two-peaks",
        figures=tuple(figures),
    )


def _shortlist_7b() -> WorkedExample:
    reserve_gib = GUIDE_RESERVES_GIB["sizing"]
    need = estimate_weights(PARAMETERS_7B, 16, reserve_gib)
    cards = [catalog.card(card_id) for card_id in SHORTLIST_CARD_IDS]
    packages = [card.fixed_packages[0] for card in cards]
    # The guide compares the cards under the same requirements: one card for the same days.
    (days,) = {p.days for p in packages}
    (card_count,) = {p.cards for p in packages}
    figures = [
        _in("parameters", PARAMETERS_7B),
        _in("bits", 16),
        _in("reserve_gib", reserve_gib, "GiB"),
        _in("days", days),
        _in("cards", card_count),
        _out("need_gib", need.total_gib, "GiB", 2),
    ]
    for card, package in zip(cards, packages, strict=True):
        prefix = card.id.replace("-", "_")
        if card.nominal_memory_gb is None:
            raise ValueError(f"the guide's card {card.id} needs a nominal capacity")
        # The nominal figure is what the guide states; no margin is derived from it, since read
        # as decimal GB it is a convention, not the card's memory (see the GPU sheets).
        figures += [
            _in(f"{prefix}_nominal_gb", card.nominal_memory_gb, "GB"),
            _in(f"{prefix}_price_usd", Fraction(package.price), "USD", 2),
        ]
    return WorkedExample(
        id="shortlist-7b",
        title={
            "ko": "같은 요건의 짧은 후보 목록",
            "id": "Daftar pendek dengan persyaratan yang sama",
        },
        where="sizing.md#shortlist",
        figures=tuple(figures),
    )


def reported_key(prefix: str, unit: str) -> str:
    """The key of a figure as a tool reported it: `declared_mib`; in bytes, `..._reported_bytes`
    (every key names its unit, and `<prefix>_bytes` is the figure in bytes)."""
    return f"{prefix}_reported_bytes" if unit == "B" else f"{prefix}_{unit.lower()}"


def _decimals(price: Decimal) -> int:
    """The decimals a price list writes (`0.5904`: 4), never fewer than a cent's two."""
    exponent = price.as_tuple().exponent
    return max(2, -exponent if isinstance(exponent, int) else 0)


def _price_decimals(value: Fraction, at_least: int) -> int:
    """The fewest decimals (at least `at_least`) that write `value` exactly; a rate per GPU is
    an instance's rate divided by its GPUs, a finite decimal for the instances listed."""
    decimals = at_least
    while (value * 10**decimals).denominator != 1:
        decimals += 1
        if decimals > 12:
            raise ValueError(f"{value} has no short exact decimal")
    return decimals


def _card_sheet(card_id: str) -> WorkedExample:
    """The figures of one GPU sheet, read from the catalog."""
    card = catalog.card(card_id)
    figures = []
    if card.nominal_memory_gb is not None and card.nominal_memory_bytes is not None:
        figures += [
            _in("nominal_gb", card.nominal_memory_gb, "GB"),
            _out("nominal_bytes", card.nominal_memory_bytes, "B"),
            _out("nominal_gib", gib(card.nominal_memory_bytes), "GiB", 2),
        ]
    declared = card.declared
    if declared is not None:
        figures += [
            _in(
                reported_key("declared", declared.reported_unit),
                declared.reported,
                declared.reported_unit,
            ),
            _out("declared_bytes", declared.bytes, "B"),
            _out("declared_gib", gib(declared.bytes), "GiB", 2),
        ]
    for number, reading in enumerate(card.readings_not_bounds, 1):
        figures += [
            _in(
                reported_key(f"reading_{number}", reading.reported_unit),
                reading.reported,
                reading.reported_unit,
            ),
            _out(f"reading_{number}_bytes", reading.bytes, "B"),
            _out(f"reading_{number}_gib", gib(reading.bytes), "GiB", 2),
        ]
    for number, package in enumerate(card.fixed_packages, 1):
        figures += [
            _in(f"package_{number}_cards", package.cards),
            _in(f"package_{number}_days", package.days),
            _in(f"package_{number}_price_usd", Fraction(package.price), "USD", 2),
        ]
        if package.hourly_price is not None:
            # An offer read on a provider's page: its hourly rate for the whole package.
            figures.append(
                _in(f"package_{number}_hourly_usd", Fraction(package.hourly_price), "USD", 2)
            )
    for number, offer in enumerate(card.offers, 1):
        # An hourly offer read on a price list: its rate as the page states it (per GPU or for
        # the whole instance), with the page's own decimals, and the exact rate per GPU.
        figures += [
            _in(f"offer_{number}_cards", offer.cards),
            _in(
                f"offer_{number}_hourly_usd",
                Fraction(offer.hourly_price),
                "USD",
                _decimals(offer.hourly_price),
            ),
            _out(
                f"offer_{number}_gpu_hourly_usd",
                offer.gpu_hourly_price,
                "USD",
                _price_decimals(offer.gpu_hourly_price, _decimals(offer.hourly_price)),
            ),
        ]
    lowest = card.lowest_offer()
    if lowest is not None:
        figures.append(
            _out(
                "lowest_gpu_hourly_usd",
                lowest.gpu_hourly_price,
                "USD",
                _price_decimals(lowest.gpu_hourly_price, _decimals(lowest.hourly_price)),
            )
        )
    return WorkedExample(
        id=f"card-{card_id}",
        title={"ko": f"GPU 시트: {card.name}", "id": f"Lembar GPU: {card.name}"},
        where=f"gpus/{card_id}.md",
        figures=tuple(figures),
    )


def _lab_prediction() -> WorkedExample:
    """The lab's `predict` for the guides' validation case, as the lab page states it."""
    batch, context, width, dtype = LAB_VALIDATION_CASE
    prediction = predict_allocations(batch, context, width, dtype)
    model_load, inputs = prediction.model_load, prediction.inputs
    small = [t for t in model_load.tensors if t.raw_bytes < ALLOCATOR_BLOCK_BYTES]
    (small_bytes,) = {t.raw_bytes for t in small}
    return WorkedExample(
        id="lab-predict-validation",
        title={"ko": "실습 검증 사례의 할당 예측", "id": "Prediksi alokasi kasus validasi lab"},
        where="lab.md#predict",
        figures=(
            _in("batch", batch),
            _in("context", context),
            _in("width", width),
            _in("parameters", prediction.parameter_count),
            _in("bits", BITS_PER_BYTE * prediction.element_size_bytes),
            _in("block_bytes", ALLOCATOR_BLOCK_BYTES, "B"),
            _out("model_load_raw_bytes", model_load.raw_bytes, "B"),
            _out("small_tensors", len(small)),
            _out("small_tensor_bytes", small_bytes, "B"),
            _out("model_load_rounding_bytes", model_load.rounding_bytes, "B"),
            _out("model_load_allocated_bytes", model_load.allocated_bytes, "B"),
            _out("inputs_added_bytes", inputs.added_bytes, "B"),
            _out("inputs_allocated_bytes", inputs.allocated_bytes, "B"),
        ),
    )


def _lab_not_predicted() -> WorkedExample:
    """Sizes the lab page gives for what `predict` leaves out (PyTorch's defaults)."""
    workspaces = {
        era: sum(
            int(size) * int(count) * 1024
            for size, count in re.findall(r":([0-9]+):([0-9]+)", config)
        )
        for era, config in LAB_CUBLAS_DEFAULT_WORKSPACE_CONFIGS.items()
    }
    return WorkedExample(
        id="lab-not-predicted",
        title={"ko": "예측하지 않는 메모리의 크기", "id": "Ukuran memori yang tidak diprediksi"},
        where="lab.md#predict",
        figures=(
            _out(
                "cublas_workspace_before_hopper_mib",
                Fraction(workspaces["before_hopper"], 2**20),
                "MiB",
            ),
            _out("cublas_workspace_hopper_mib", Fraction(workspaces["hopper"], 2**20), "MiB"),
            _out("small_segment_mib", Fraction(LAB_SMALL_SEGMENT_BYTES, 2**20), "MiB"),
        ),
    )


# The KV-cache guide's models, as their published config.json state them (snippets/models/).
LLAMA_3_8B_ATTENTION = {"layers": 32, "query_heads": 32, "kv_heads": 8, "head_dim": 128}
GEMMA_2_9B_CONFIG: dict[str, Any] = {
    "model_type": "gemma2",
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "vocab_size": 256000,
    "sliding_window": 4096,
}
KV_GUIDE_TOKENS = 8192
KV_GUIDE_BYTES_PER_VALUE = 2
PAGED_EXAMPLE = {"tokens": 1000, "block_tokens": 16}
QUANTIZED_KV_BITS = 4


def _llama_spec(kv_heads: int, tokens: int, bytes_per_value: Fraction) -> KVCacheSpec:
    attention = LLAMA_3_8B_ATTENTION
    return KVCacheSpec(
        layers=attention["layers"],
        kv_heads=kv_heads,
        head_dim=attention["head_dim"],
        tokens=tokens,
        bytes_per_value=bytes_per_value,
    )


def _kv_heads_llama() -> WorkedExample:
    """GQA as published, and the same layers if every query head had its own K/V (MHA) or all
    shared one (MQA): the cache scales with KV heads, not query heads."""
    attention = LLAMA_3_8B_ATTENTION
    two = Fraction(KV_GUIDE_BYTES_PER_VALUE)

    def cache_gib(kv_heads: int) -> Fraction:
        return _llama_spec(kv_heads, KV_GUIDE_TOKENS, two).kv_cache_gib

    return WorkedExample(
        id="kv-heads-llama-3-8b",
        title={
            "ko": "KV 헤드: Llama-3-8B의 GQA, MHA, MQA",
            "id": "Kepala KV: GQA, MHA, MQA Llama-3-8B",
        },
        where="kv-cache.md#mha-gqa-mqa",
        figures=(
            _in("layers", attention["layers"]),
            _in("query_heads", attention["query_heads"]),
            _in("kv_heads", attention["kv_heads"]),
            _in("head_dim", attention["head_dim"]),
            _in("tokens", KV_GUIDE_TOKENS),
            _in("bytes_per_value", two, "B"),
            _out(
                "kv_per_token_bytes", _llama_spec(attention["kv_heads"], 1, two).kv_cache_bytes, "B"
            ),
            _out("gqa_kv_cache_gib", cache_gib(attention["kv_heads"]), "GiB"),
            _out("mha_kv_cache_gib", cache_gib(attention["query_heads"]), "GiB"),
            _out("mqa_kv_cache_gib", cache_gib(1), "GiB", 3),
        ),
    )


def _gemma_2_9b() -> WorkedExample:
    """Gemma-2-9B's alternating sliding and global layers, under Transformers' dynamic cache."""
    config = GEMMA_2_9B_CONFIG
    layouts = layer_layouts(parse_config(config))
    two = Fraction(KV_GUIDE_BYTES_PER_VALUE)
    estimate = estimate_kv(layouts, KV_GUIDE_TOKENS, two)
    sliding = sum(1 for layout in layouts if layout.window is not None)
    return WorkedExample(
        id="kv-gemma-2-9b",
        title={"ko": "KV 캐시: Gemma-2-9B, 슬라이딩과 전체 어텐션", "id": "Cache KV: Gemma-2-9B"},
        where="kv-cache.md#sliding-windows",
        figures=(
            _in("layers", config["num_hidden_layers"]),
            _in("sliding_layers", sliding),
            _in("full_layers", len(layouts) - sliding),
            _in("query_heads", config["num_attention_heads"]),
            _in("kv_heads", config["num_key_value_heads"]),
            _in("head_dim", config["head_dim"]),
            _in("hidden_size", config["hidden_size"]),
            _out(
                "hidden_over_heads", Fraction(config["hidden_size"], config["num_attention_heads"])
            ),
            _in("window", config["sliding_window"]),
            _in("tokens", KV_GUIDE_TOKENS),
            _in("bytes_per_value", two, "B"),
            _out("kv_per_token_bytes", estimate.kv_bytes_per_token, "B"),
            _out("peak_kv_cache_bytes", estimate.kv_cache_bytes, "B"),
            _out("peak_kv_cache_gib", gib(estimate.kv_cache_bytes), "GiB", 3),
            _out("decoding_kv_cache_bytes", estimate.kv_cache_decoding_bytes, "B"),
            _out("decoding_kv_cache_gib", gib(estimate.kv_cache_decoding_bytes), "GiB", 2),
        ),
    )


def _kv_quantized() -> WorkedExample:
    bytes_per_value = Fraction(QUANTIZED_KV_BITS, BITS_PER_BYTE)
    spec = _llama_spec(LLAMA_3_8B_ATTENTION["kv_heads"], KV_GUIDE_TOKENS, bytes_per_value)
    return WorkedExample(
        id="kv-quantized-4bit",
        title={"ko": "4비트 KV 캐시", "id": "Cache KV 4 bit"},
        where="kv-cache.md#quantized",
        figures=(
            _in("bits", QUANTIZED_KV_BITS),
            _in("tokens", KV_GUIDE_TOKENS),
            _out("bytes_per_value", bytes_per_value, "B", 1),
            _out("kv_cache_gib", spec.kv_cache_gib, "GiB", 2),
        ),
    )


def _kv_paged() -> WorkedExample:
    tokens, block = PAGED_EXAMPLE["tokens"], PAGED_EXAMPLE["block_tokens"]
    blocks = -(-tokens // block)  # whole blocks: a partly filled block is allocated in full
    two = Fraction(KV_GUIDE_BYTES_PER_VALUE)
    kv_heads = LLAMA_3_8B_ATTENTION["kv_heads"]
    return WorkedExample(
        id="kv-paged-blocks",
        title={"ko": "블록 단위 할당", "id": "Alokasi per blok"},
        where="kv-cache.md#paged",
        figures=(
            _in("tokens", tokens),
            _in("block_tokens", block),
            _out("blocks", blocks),
            _out("allocated_tokens", blocks * block),
            _out("kv_cache_bytes", _llama_spec(kv_heads, tokens, two).kv_cache_bytes, "B"),
            _out(
                "allocated_kv_cache_bytes",
                _llama_spec(kv_heads, blocks * block, two).kv_cache_bytes,
                "B",
            ),
        ),
    )


def _exact_decimals(value: Fraction, most: int = 2) -> int:
    """The fewest decimals (up to `most`) that state `value` exactly; `most` when none does."""
    for decimals in range(most + 1):
        if (value * 10**decimals).denominator == 1:
            return decimals
    return most


# The load specification guide's worked example: Llama-3.1-8B (the `llama-3.1-8b` preset, the
# config.json its repository publishes) at 16 bits, in the three cases the guide asks a reader
# to prepare (a usual input, a long one, one near the functional limit, with its concurrency).
LOAD_SPEC_PRESET = "llama-3.1-8b"
LOAD_SPEC_CASES = {
    # case: (input tokens, output tokens, sequences held at once)
    "usual": (1536, 512, 1),
    "long": (7168, 1024, 1),
    "limit": (7168, 1024, 4),
}


def _load_spec(case: str) -> WorkedExample:
    from iteragpu.models.model import size_model

    prompt, output, sequences = LOAD_SPEC_CASES[case]
    tokens = prompt + output
    sized = size_model(PRESETS_DIR / f"{LOAD_SPEC_PRESET}.json", tokens=tokens, sequences=sequences)
    weights = sized.weights.byte_count
    parameters = sized.weights.parameters
    if parameters is None:
        raise ValueError(f"the {LOAD_SPEC_PRESET} preset must state its parameters")
    kv = sized.kv.kv_cache_bytes
    titles = {
        "usual": {"ko": "평소 입력", "id": "masukan biasa"},
        "long": {"ko": "긴 입력", "id": "masukan panjang"},
        "limit": {"ko": "한계 입력과 동시성", "id": "masukan batas dan konkurensi"},
    }[case]
    return WorkedExample(
        id=f"load-spec-llama-3-1-8b-{case}",
        title={
            "ko": f"부하 명세서: Llama-3.1-8B, {titles['ko']}",
            "id": f"Spesifikasi beban: Llama-3.1-8B, {titles['id']}",
        },
        where="load-specification.md#worked-example",
        figures=(
            _in("parameters", parameters),
            _in("bytes_per_parameter", Fraction(weights, parameters), "B"),
            _in("input_tokens", prompt),
            _in("output_tokens", output),
            _out("tokens", tokens),
            _in("sequences", sequences),
            _out("weights_bytes", weights, "B"),
            _out("weights_gib", gib(weights), "GiB", 2),
            _out("kv_cache_bytes", kv, "B"),
            _out("kv_cache_gib", gib(kv), "GiB", _exact_decimals(gib(kv))),
            _out("model_total_bytes", weights + kv, "B"),
            _out("model_total_gib", gib(weights + kv), "GiB", 2),
            # The printed sheet's other columns (`iteragpu model --sheet markdown`).
            _in("bytes_per_value", sized.kv.bytes_per_value, "B"),
            _out("state_bytes", sized.state.state_bytes, "B"),
            _in("reserve_bytes", sized.reserve_bytes, "B"),
        ),
    )


def _load_spec_tp2() -> WorkedExample:
    """The limit case on two GPUs under vLLM's rules (`iteragpu model llama-3.1-8b --tokens 8192
    --sequences 4 --runtime vllm --tp 2 --sheet markdown`): each GPU holds half the KV heads and
    half the split weights, and the norms whole."""
    from iteragpu.models.model import size_model
    from iteragpu.parallel.plan import plan_split
    from iteragpu.parallel.records import SplitRequest

    prompt, output, sequences = LOAD_SPEC_CASES["limit"]
    tokens, tp = prompt + output, 2
    one = size_model(PRESETS_DIR / f"{LOAD_SPEC_PRESET}.json", tokens=tokens, sequences=sequences)
    plan = plan_split(SplitRequest(LOAD_SPEC_PRESET, tokens, sequences, runtime="vllm", tp=tp))
    first = plan.ranks[0]
    if any(rank.total_bytes != first.total_bytes for rank in plan.ranks):
        raise ValueError("the guide says both GPUs hold the same bytes")
    both = sum(rank.total_bytes for rank in plan.ranks)
    half = one.weights.byte_count / tp
    return WorkedExample(
        id="load-spec-llama-3-1-8b-limit-tp2",
        title={
            "ko": "부하 명세서: Llama-3.1-8B 한계 입력, vLLM TP 2",
            "id": "Spesifikasi beban: Llama-3.1-8B masukan batas, vLLM TP 2",
        },
        where="load-specification.md#two-gpus",
        figures=(
            _in("tokens", tokens),
            _in("sequences", sequences),
            _in("tp2", tp),
            _in("first_rank", plan.first_to_fill.rank),
            _in("kv_heads", one.config.kv_heads),
            _out("kv_heads_per_gpu", Fraction(one.config.kv_heads, tp)),
            _out("tp2_weights_bytes", first.weights_bytes, "B"),
            _out("tp2_kv_cache_bytes", first.kv_cache_bytes, "B"),
            _out("tp2_total_bytes", first.total_bytes, "B"),
            _out("tp2_total_gib", gib(first.total_bytes), "GiB", 2),
            _out("half_weights_bytes", half, "B"),
            _out("tp2_above_even_bytes", first.weights_bytes - half, "B"),
            _out("tp2_replicated_bytes", first.weights_replicated_bytes, "B"),
            _out("gpus_total_bytes", both, "B"),
            _out("above_one_gpu_bytes", both - one.total_bytes, "B"),
        ),
    )


# The quantization guide's checkpoint: Llama-3.1-8B's shapes as AutoGPTQ writes them at 4 bits,
# group size 128 (`QuantLinear`'s buffers, auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py:
# qweight I32 [in // 32 * bits, out], qzeros I32 [ceil(in / group), out // 32 * bits], scales F16
# [ceil(in / group), out], g_idx I32 [in]; auto_gptq/modeling/llama.py quantizes the seven
# Linear modules of each layer and leaves the embeddings, the norms and lm_head in float16).
GPTQ_EXAMPLE = {"bits": 4, "group_size": 128}
GPTQ_EXAMPLE_FOLDER = "llama-3.1-8b-gptq-layout"
_DTYPE_BYTES = {"F16": 2, "I32": 4}


def gptq_example_config() -> dict[str, Any]:
    """The example checkpoint's config.json: the preset's, in float16, with GPTQ's settings."""
    import json

    config: dict[str, Any] = json.loads((PRESETS_DIR / f"{LOAD_SPEC_PRESET}.json").read_text())
    config["torch_dtype"] = "float16"
    config["quantization_config"] = {
        "quant_method": "gptq",
        "bits": GPTQ_EXAMPLE["bits"],
        "group_size": GPTQ_EXAMPLE["group_size"],
        "desc_act": False,
        "sym": True,
    }
    return config


def gptq_example_tensors() -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor of the example checkpoint: name -> (safetensors dtype, shape)."""
    import math

    config = gptq_example_config()
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    kv = config["num_key_value_heads"] * hidden // config["num_attention_heads"]
    bits, group = GPTQ_EXAMPLE["bits"], GPTQ_EXAMPLE["group_size"]
    linears = (
        ("self_attn.q_proj", hidden, hidden),
        ("self_attn.k_proj", hidden, kv),
        ("self_attn.v_proj", hidden, kv),
        ("self_attn.o_proj", hidden, hidden),
        ("mlp.gate_proj", hidden, inner),
        ("mlp.up_proj", hidden, inner),
        ("mlp.down_proj", inner, hidden),
    )
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {
        "model.embed_tokens.weight": ("F16", (config["vocab_size"], hidden)),
        "model.norm.weight": ("F16", (hidden,)),
        "lm_head.weight": ("F16", (config["vocab_size"], hidden)),
    }
    for layer in range(config["num_hidden_layers"]):
        prefix = f"model.layers.{layer}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            tensors[f"{prefix}{norm}.weight"] = ("F16", (hidden,))
        for module, inputs, outputs in linears:
            groups = math.ceil(inputs / group)
            tensors[f"{prefix}{module}.qweight"] = ("I32", (inputs // 32 * bits, outputs))
            tensors[f"{prefix}{module}.qzeros"] = ("I32", (groups, outputs // 32 * bits))
            tensors[f"{prefix}{module}.scales"] = ("F16", (groups, outputs))
            tensors[f"{prefix}{module}.g_idx"] = ("I32", (inputs,))
    return tensors


def gptq_example_header() -> tuple[dict[str, Any], int]:
    """The example checkpoint's safetensors header (tensors back to back) and its data bytes:
    the replayed snippet writes it with that many bytes of (sparse) data."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in gptq_example_tensors().items():
        size = _DTYPE_BYTES[dtype]
        for dimension in shape:
            size *= dimension
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    return header, offset


def _quantized_gptq() -> WorkedExample:
    """The example checkpoint read as `iteragpu model` reads it: roles from the layout."""
    from iteragpu.models.quantized import (
        GROUP_INDEX,
        QUANTIZED_WEIGHTS,
        SCALES,
        UNQUANTIZED,
        ZEROS,
        read_layout,
    )
    from iteragpu.models.safetensors import TensorHeader

    config = gptq_example_config()
    header, _ = gptq_example_header()
    tensors = {
        name: TensorHeader(
            name,
            entry["dtype"],
            tuple(entry["shape"]),
            entry["data_offsets"][1] - entry["data_offsets"][0],
        )
        for name, entry in header.items()
        if name != "__metadata__"
    }
    layout = read_layout(config["quantization_config"], tensors)
    by_role: dict[str, int] = {}
    values: dict[str, int] = {}
    for group in layout.roles:
        by_role[group.role] = by_role.get(group.role, 0) + group.bytes
        values[group.role] = values.get(group.role, 0) + (group.parameters or 0)
    if layout.parameters is None:
        raise ValueError("the example checkpoint must read whole: " + str(layout.reason))
    total = sum(by_role.values())
    bits = GPTQ_EXAMPLE["bits"]
    uniform = Fraction(layout.parameters * bits, BITS_PER_BYTE)
    return WorkedExample(
        id="quantized-gptq-llama-3-1-8b",
        title={
            "ko": "GPTQ 4비트 체크포인트: Llama-3.1-8B의 텐서 배치",
            "id": "Checkpoint GPTQ 4 bit: tata letak tensor Llama-3.1-8B",
        },
        where="quantization-quality.md#memory-side",
        figures=(
            _in("parameters", layout.parameters),
            _in("bits", bits),
            _in("group_size", GPTQ_EXAMPLE["group_size"]),
            _out("uniform_weights_bytes", uniform, "B"),
            _out("uniform_weights_gib", gib(uniform), "GiB", 2),
            _out("quantized_parameters", values[QUANTIZED_WEIGHTS]),
            _out("quantized_weights_bytes", by_role[QUANTIZED_WEIGHTS], "B"),
            _out("scales_bytes", by_role[SCALES], "B"),
            _out("zeros_bytes", by_role[ZEROS], "B"),
            _out("group_index_bytes", by_role[GROUP_INDEX], "B"),
            _out("unquantized_bytes", by_role[UNQUANTIZED], "B"),
            _out("unquantized_gib", gib(by_role[UNQUANTIZED]), "GiB", 2),
            _out("weights_bytes", total, "B"),
            _out("weights_gb", Fraction(total, 10**9), "GB", 2),
            _out("weights_gib", gib(total), "GiB", 2),
        ),
    )


# The fine-tuning guide's runs of `iteragpu train` on the same preset (LoRA and DoRA at r 16,
# PEFT's default targets for Llama; AdamW; bf16 unless stated).
TRAIN_RUNS: dict[str, dict[str, Any]] = {
    "full": {"method": "full"},
    "full-bf16-master": {"method": "full", "precision": "bf16-master"},
    "lora": {"method": "lora", "lora_r": 16},
    "dora": {"method": "dora", "lora_r": 16},
    "qlora": {"method": "qlora", "lora_r": 16},
    "qlora-double-quant": {"method": "qlora", "lora_r": 16, "double_quant": True},
}


TRAIN_RUN_TITLES = {
    "full": {"ko": "전체 학습, bf16", "id": "pelatihan penuh, bf16"},
    "full-bf16-master": {
        "ko": "전체 학습, bf16과 float32 마스터",
        "id": "pelatihan penuh, bf16 dengan master float32",
    },
    "lora": {"ko": "LoRA r16", "id": "LoRA r16"},
    "dora": {"ko": "DoRA r16", "id": "DoRA r16"},
    "qlora": {"ko": "QLoRA r16", "id": "QLoRA r16"},
    "qlora-double-quant": {"ko": "QLoRA r16, 이중 양자화", "id": "QLoRA r16, kuantisasi ganda"},
}


def _train(run: str) -> WorkedExample:
    from iteragpu.training.plan import plan_training, tensor_bytes
    from iteragpu.training.records import TrainRequest

    settings = TRAIN_RUNS[run]
    plan = plan_training(PRESETS_DIR / f"{LOAD_SPEC_PRESET}.json", TrainRequest(**settings))
    states = plan.rank_gpu_bytes(plan.first_to_fill)
    figures = [
        _in("parameters", sum(t.elements for t in plan.tensors if t.role in ("base", "quantized"))),
        _out("trainable_parameters", sum(t.elements for t in plan.trainable)),
    ]
    if "lora_r" in settings:
        figures.append(_in("lora_r", settings["lora_r"]))
    if settings["method"] == "qlora":
        quant_state = sum(tensor_bytes(t) for t in plan.tensors if t.role == "quant_state")
        figures.append(_out("quant_state_bytes", quant_state, "B"))
    figures += [
        _out("model_states_bytes", states, "B"),
        _out("model_states_gib", gib(states), "GiB", 2),
    ]
    label = TRAIN_RUN_TITLES[run]
    return WorkedExample(
        id=f"train-llama-3-1-8b-{run}",
        title={
            "ko": f"학습 모델 상태: Llama-3.1-8B, {label['ko']}",
            "id": f"Status model pelatihan: Llama-3.1-8B, {label['id']}",
        },
        where="fine-tuning.md#model-states",
        figures=tuple(figures),
    )


# The experiment cost guide's series: four configurations, each with one warm-up run, three
# repeats and room for two failed attempts, at an assumed time per run, priced with the short
# list's packages (one card, three days).
COST_SERIES = {"configurations": 4, "warmup_runs": 1, "repeats": 3, "failed_runs": 2}
HOURS_PER_DAY = 24


def _cost_series(hours_per_run: int) -> WorkedExample:
    cards = [catalog.card(card_id) for card_id in SHORTLIST_CARD_IDS]
    packages = [card.fixed_packages[0] for card in cards]
    (days,) = {p.days for p in packages}
    (card_count,) = {p.cards for p in packages}
    series = COST_SERIES
    per_configuration = series["warmup_runs"] + series["repeats"] + series["failed_runs"]
    runs = series["configurations"] * per_configuration
    hours = runs * hours_per_run
    package_hours = days * HOURS_PER_DAY
    needed = -(-hours // package_hours)  # whole packages: a package started is paid in full
    figures = [
        _in("configurations", series["configurations"]),
        _in("warmup_runs", series["warmup_runs"]),
        _in("repeats", series["repeats"]),
        _in("failed_runs", series["failed_runs"]),
        _out("runs", runs),
        _in("hours_per_run", hours_per_run),
        _out("series_hours", hours),
        _in("cards", card_count),
        _in("days", days),
        _out("package_hours", package_hours),
        _out("packages", needed),
    ]
    for card, package in zip(cards, packages, strict=True):
        prefix = card.id.replace("-", "_")
        price = Fraction(package.price)
        figures += [
            _in(f"{prefix}_price_usd", price, "USD", 2),
            _out(f"{prefix}_series_cost_usd", needed * price, "USD", 2),
        ]
    return WorkedExample(
        id=f"cost-series-{hours_per_run}h",
        title={
            "ko": f"실험 시리즈의 비용, 실행당 {hours_per_run}시간",
            "id": f"Biaya rangkaian eksperimen, {hours_per_run} jam per eksekusi",
        },
        where="experiment-cost.md#worked-example",
        figures=tuple(figures),
    )


# The batch guide's settings: micro-batch, accumulation steps, GPUs, and the sequence length.
EFFECTIVE_BATCH = {"micro_batch": 4, "grad_accum": 8, "gpus": 2, "sequence_length": 2048}


def _effective_batch() -> WorkedExample:
    setting = EFFECTIVE_BATCH
    effective = setting["micro_batch"] * setting["grad_accum"] * setting["gpus"]
    return WorkedExample(
        id="effective-batch",
        title={"ko": "유효 배치", "id": "Batch efektif"},
        where="batch-accumulation.md#three-numbers",
        figures=(
            _in("micro_batch", setting["micro_batch"]),
            _in("grad_accum", setting["grad_accum"]),
            _in("gpus", setting["gpus"]),
            _out("effective_batch", effective),
            _in("sequence_length", setting["sequence_length"]),
            _out("tokens_per_update", effective * setting["sequence_length"]),
            _in("halved_micro_batch", setting["micro_batch"] // 2),
            _out("doubled_grad_accum", setting["grad_accum"] * 2),
        ),
    )


# A split over several GPUs (iteragpu.parallel), at published sizes: the presets of
# iteragpu model (meta-llama/Llama-3.1-8B and -70B, which have Llama-3-8B's and -70B's shapes).
SPLIT_TOKENS = 8192
SPLIT_TP_8B = (1, 2, 8)


def _split(preset: str, runtime: str, **options: Any) -> Any:
    from iteragpu.parallel.plan import plan_split
    from iteragpu.parallel.records import SplitRequest

    return plan_split(SplitRequest(preset, SPLIT_TOKENS, runtime=runtime, **options))


def _split_llama_3_8b() -> WorkedExample:
    """Llama-3-8B's shapes at TP 1, 2 and 8 under vLLM: every rank alike (its vocabulary,
    128,256, needs no padding and divides), the norms whole on every rank."""
    figures = [_in("tokens", SPLIT_TOKENS)]
    for tp in SPLIT_TP_8B:
        rank = _split("llama-3.1-8b", "vllm", tp=tp).ranks[0]
        figures += [
            _in(f"tp{tp}", tp),
            _out(f"tp{tp}_weights_bytes", rank.weights_bytes, "B"),
            _out(f"tp{tp}_weights_gib", gib(rank.weights_bytes), "GiB", 2),
            _out(f"tp{tp}_kv_cache_bytes", rank.kv_cache_bytes, "B"),
            _out(f"tp{tp}_kv_cache_gib", gib(rank.kv_cache_bytes), "GiB", 3),
            _out(f"tp{tp}_total_gib", gib(rank.total_bytes), "GiB", 2),
        ]
        if tp == 2:
            replicated = rank.weights_replicated_bytes
            figures += [
                _out("tp2_replicated_bytes", replicated, "B"),
                _out("tp2_above_even_split_bytes", replicated - replicated / tp, "B"),
            ]
    return WorkedExample(
        id="split-llama-3-8b",
        title={
            "ko": "여러 GPU: Llama-3-8B의 TP 1, 2, 8 (vLLM)",
            "id": "Beberapa GPU: Llama-3-8B pada TP 1, 2, 8 (vLLM)",
        },
        where="sizing.md#several-gpus",
        figures=tuple(figures),
    )


def _split_llama_3_70b() -> WorkedExample:
    """Llama-3-70B's 8 KV heads at TP 8 and 16 under vLLM: from TP 8 on, each rank holds one
    KV head, so its cache stops shrinking; Transformers refuses TP 16 (it would not run)."""
    eight = _split("llama-3.1-70b", "vllm", tp=8).ranks[0]
    sixteen = _split("llama-3.1-70b", "vllm", tp=16).ranks[0]
    return WorkedExample(
        id="split-llama-3-70b",
        title={
            "ko": "여러 GPU: Llama-3-70B의 TP 16과 KV 헤드 복제 (vLLM)",
            "id": "Beberapa GPU: Llama-3-70B pada TP 16 dan replikasi kepala KV (vLLM)",
        },
        where="kv-cache.md#split-cache",
        figures=(
            _in("tokens", SPLIT_TOKENS),
            _in("kv_heads", 8),
            _in("tp8", 8),
            _in("tp16", 16),
            _out("tp8_kv_cache_bytes", eight.kv_cache_bytes, "B"),
            _out("tp16_kv_cache_bytes", sixteen.kv_cache_bytes, "B"),
            _out("tp16_kv_cache_gib", gib(sixteen.kv_cache_bytes), "GiB", 4),
            _out("tp8_weights_gib", gib(eight.weights_bytes), "GiB", 2),
            _out("tp16_weights_bytes", sixteen.weights_bytes, "B"),
            _out("tp16_weights_gib", gib(sixteen.weights_bytes), "GiB", 2),
            _out("tp16_replicated_gib", gib(sixteen.weights_replicated_bytes), "GiB", 2),
            _out("tp16_total_gib", gib(sixteen.total_bytes), "GiB", 2),
        ),
    )


def _split_stages(layers: int, stages: int) -> WorkedExample:
    """Layers per pipeline stage: vLLM's get_pp_indices and Transformers' layer_range_for_rank."""
    from iteragpu.parallel import transformers_rules, vllm_rules

    vllm = vllm_rules.pp_ranges(layers, stages)
    transformers = transformers_rules.layer_ranges(layers, stages)
    return WorkedExample(
        id=f"split-pp-{layers}-on-{stages}",
        title={
            "ko": f"여러 GPU: 레이어 {layers}개를 파이프라인 {stages}단계로",
            "id": f"Beberapa GPU: {layers} lapisan pada {stages} tingkat pipeline",
        },
        where="sizing.md#several-gpus",
        figures=(
            _in("layers", layers),
            _in("stages", stages),
            *(_out(f"vllm_stage_{i}", end - start) for i, (start, end) in enumerate(vllm)),
            *(
                _out(f"transformers_stage_{i}", end - start)
                for i, (start, end) in enumerate(transformers)
            ),
        ),
    )


def _split_vllm() -> WorkedExample:
    """vLLM's constants and its experts per EP rank (60 experts on 8 ranks)."""
    from iteragpu.parallel import vllm_rules

    experts = vllm_rules.expert_counts(60, 8)
    return WorkedExample(
        id="split-vllm",
        title={"ko": "여러 GPU: vLLM의 규칙", "id": "Beberapa GPU: aturan vLLM"},
        where="sizing.md#several-gpus",
        figures=(
            _in("vocab_padding", vllm_rules.VOCAB_PADDING),
            _in("block_tokens", vllm_rules.BLOCK_SIZE),
            _in("experts", 60),
            _in("ep_ranks", 8),
            _out("experts_first_ranks", experts[0]),
            _out("experts_last_ranks", experts[-1]),
        ),
    )


def _split_llamacpp() -> WorkedExample:
    """llama.cpp's -ngl counting, its context cut by -np and padded, and a q8_0 row."""
    from iteragpu.parallel import llamacpp_rules

    cells, streams = llamacpp_rules.context_cells(8192, 3)
    block, block_bytes = llamacpp_rules.KV_TYPES["q8_0"]
    return WorkedExample(
        id="split-llamacpp",
        title={"ko": "여러 GPU: llama.cpp의 규칙", "id": "Beberapa GPU: aturan llama.cpp"},
        where="kv-cache.md#split-cache",
        figures=(
            _in("layers", 32),
            _out("gpu_layers_all", 32 + 1),
            _in("context", 8192),
            _in("parallel", 3),
            _out("cells_per_stream", cells),
            _out("cells", cells * streams),
            _in("padding_cells", llamacpp_rules.PADDING_FLASH),
            _in("q8_0_block_values", block),
            _in("q8_0_block_bytes", block_bytes, "B"),
        ),
    )


# What fits, solved backwards (iteragpu fit): the load specification's limit case (8,192
# tokens, 4 sequences) under vLLM 0.34.0's default sizing (the extensible KV cache, 1.0 of each
# card's total), and the quantization guide's card.
FIT_CARD = "rtx-4090"
FIT_QUANTIZED_CARD = "rtx-4090"


def _fit(path: str, card_id: str, **options: Any) -> Any:
    from iteragpu.parallel.fit import FitRequest, fit

    capacity = catalog.card(card_id).declared_memory_bytes
    if capacity is None:
        raise ValueError(f"{card_id} has no declared capacity")
    return fit(FitRequest(path, "vllm", capacity, **options))


def _fit_load_spec() -> WorkedExample:
    """The limit case on one RTX 4090: the most sequences at 8,192 tokens, the longest
    context for its 4 sequences, and vLLM's blocks, all upper bounds."""
    prompt, output, sequences = LOAD_SPEC_CASES["limit"]
    tokens = prompt + output
    card = catalog.card(FIT_CARD)
    at_tokens = _fit(LOAD_SPEC_PRESET, FIT_CARD, tokens=tokens)
    for_sequences = _fit(LOAD_SPEC_PRESET, FIT_CARD, sequences=sequences)
    assert at_tokens.blocks is not None
    return WorkedExample(
        id="fit-load-spec-rtx-4090",
        title={
            "ko": "카드에 들어가는 한도: 한계 입력을 RTX 4090 한 장에 (vLLM)",
            "id": "Batas yang muat: masukan batas pada satu RTX 4090 (vLLM)",
        },
        where="load-specification.md#fit",
        figures=(
            _in("declared_bytes", card.declared_memory_bytes or 0, "B"),
            _in("tokens", tokens),
            _in("sequences", sequences),
            _out("sequences_at_most", at_tokens.sequences),
            _out("blocks_at_most", at_tokens.blocks[0]),
            _in("block_tokens", at_tokens.block_size or 0),
            _out("tokens_at_most", for_sequences.tokens),
        ),
    )


def _fit_cards() -> WorkedExample:
    """Each catalogue card with a declared capacity: the most sequences of the limit case's
    8,192 tokens that vLLM could hold on one card (an upper bound)."""
    prompt, output, sequences = LOAD_SPEC_CASES["limit"]
    tokens = prompt + output
    figures = [_in("tokens", tokens), _in("sequences", sequences)]
    from iteragpu.parallel.fit import FitError

    for card in catalog.load_catalog():
        if card.declared_memory_bytes is None:
            continue
        key = card.id.replace("-", "_")
        try:
            most = _fit(LOAD_SPEC_PRESET, card.id, tokens=tokens).sequences
        except FitError:
            most = 0
        figures += [
            _in(f"{key}_declared_gib", gib(card.declared_memory_bytes), "GiB", 2),
            _out(f"{key}_sequences_at_most", most),
        ]
    return WorkedExample(
        id="fit-load-spec-cards",
        title={
            "ko": "카드에 들어가는 한도: 카탈로그 카드별 한계 입력의 최대 동시 시퀀스 (vLLM)",
            "id": "Batas yang muat: sekuens bersamaan terbanyak masukan batas per kartu (vLLM)",
        },
        where="experiment-cost.md#fit",
        figures=tuple(figures),
    )


def _fit_quantized() -> WorkedExample:
    """The longest context of one sequence on an RTX 4090 under vLLM's default sizing: the
    bf16 weights (fit, from the preset) and the GPTQ layout (its header's bytes, which fit
    reads from the checkpoint's files: the page's console session replays it)."""
    from iteragpu.parallel import vllm_rules

    card = catalog.card(FIT_QUANTIZED_CARD)
    capacity = card.declared_memory_bytes or 0
    bf16 = _fit(LOAD_SPEC_PRESET, FIT_QUANTIZED_CARD)
    _, gptq_weights = gptq_example_header()  # the tensors back to back: their bytes
    per_token = bf16.ranks[0].kv_bytes_per_token
    size = vllm_rules.block_bytes(per_token)
    budget = vllm_rules.requested_memory(capacity, vllm_rules.UTILIZATION_EXTENSIBLE)
    blocks = (budget - gptq_weights) // size
    positions = bf16.positions or 0
    gptq_tokens = min(positions, vllm_rules.BLOCK_SIZE * (blocks - 1))
    return WorkedExample(
        id="fit-quantized-rtx-4090",
        title={
            "ko": "카드에 들어가는 한도: RTX 4090 한 장의 가장 긴 컨텍스트, bf16과 GPTQ 4비트",
            "id": "Batas yang muat: konteks terpanjang satu RTX 4090, bf16 dan GPTQ 4 bit (vLLM)",
        },
        where="quantization-quality.md#fit",
        figures=(
            _in("declared_bytes", capacity, "B"),
            _in("positions", positions),
            _out("bf16_tokens_at_most", bf16.tokens),
            _out("gptq_weights_bytes", gptq_weights, "B"),
            _out("gptq_tokens_at_most", gptq_tokens),
        ),
    )


_BUILDERS: tuple[Callable[[], WorkedExample], ...] = (
    _units_definitions,
    lambda: _weights(16, GUIDE_RESERVES_GIB["measurement"], "measurement.md#weights-gb-gib"),
    lambda: _weights(16, GUIDE_RESERVES_GIB["sizing"], "sizing.md#worked-example-7b"),
    lambda: _weights(8, GUIDE_RESERVES_GIB["sizing"], "sizing.md#worked-example-7b"),
    lambda: _weights(4, GUIDE_RESERVES_GIB["sizing"], "sizing.md#worked-example-7b"),
    lambda: _kv_cache(1),
    lambda: _kv_cache(4),
    _convert_24e9,
    _two_peaks,
    _shortlist_7b,
    _lab_prediction,
    _lab_not_predicted,
    _kv_heads_llama,
    _gemma_2_9b,
    _kv_quantized,
    _kv_paged,
    lambda: _load_spec("usual"),
    lambda: _load_spec("long"),
    lambda: _load_spec("limit"),
    _load_spec_tp2,
    _quantized_gptq,
    *(lambda run=run: _train(run) for run in TRAIN_RUNS),
    lambda: _cost_series(2),
    lambda: _cost_series(4),
    _effective_batch,
    _split_llama_3_8b,
    _split_llama_3_70b,
    lambda: _split_stages(32, 3),
    lambda: _split_stages(34, 4),
    _split_vllm,
    _split_llamacpp,
    _fit_load_spec,
    _fit_cards,
    _fit_quantized,
)


@cache
def registry() -> dict[str, WorkedExample]:
    """Every worked example of the guides, in the order they state them, then one per GPU sheet."""
    examples = [build() for build in _BUILDERS]
    examples += [_card_sheet(card.id) for card in catalog.load_catalog()]
    return {example.id: example for example in examples}


def example(example_id: str) -> WorkedExample:
    try:
        return registry()[example_id]
    except KeyError:
        known = ", ".join(registry())
        raise KeyError(f"unknown example {example_id!r}; known: {known}") from None


def figure(reference: str) -> Figure:
    """A figure by `example-id.key`, e.g. `weights-7b-16bit-reserve-4gib.total_gib`."""
    example_id, _, key = reference.partition(".")
    return example(example_id).figure(key)
