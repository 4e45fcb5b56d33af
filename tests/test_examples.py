"""Every worked example of the guides, to the byte, cross-checked with pint."""

from __future__ import annotations

from fractions import Fraction

import pytest

from iteragpu.examples import figure, registry
from iteragpu.gpus.catalog import load_catalog
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number

GIB = 2**30
# Llama-3.1-8B from its published shapes (embeddings and head 128,256 x 4,096 each; per layer
# q and o 4,096 x 4,096, k and v 4,096 x 1,024, gate, up and down 4,096 x 14,336; two norms per
# layer and a final one).
_H, _I, _V, _L, _KV = 4096, 14336, 128256, 32, 1024
GPTQ_LINEAR_VALUES = _L * (2 * _H * _H + 2 * _H * _KV + 3 * _H * _I)
L31_PARAMS = 2 * _V * _H + GPTQ_LINEAR_VALUES + (2 * _L + 1) * _H
L31_KV = 2 * _L * _KV * 2  # K and V, 32 layers, 8 heads of 128, 2 bytes: per token
GPTQ_G_IDX = 4 * _L * (6 * _H + _I)  # one int32 per input feature of each Linear
# PEFT's default LoRA targets for Llama are q_proj and v_proj: r x (in + out) for each.
L31_LORA_R16 = _L * 16 * ((_H + _H) + (_H + _KV))

# (reference, the figure as the guides state it in Korean, in Indonesian, exact value)
STATED_COLUMNS = ("ko", "id")
STATED = [
    ("units-gb-gib.gb_bytes", "1,000,000,000", "1.000.000.000", 10**9),
    ("units-gb-gib.gib_bytes", "1,073,741,824", "1.073.741.824", 2**30),
    (
        "weights-7b-16bit-reserve-4gib.weights_bytes",
        "14,000,000,000",
        "14.000.000.000",
        7 * 10**9 * 2,
    ),
    ("weights-7b-16bit-reserve-4gib.weights_gb", "14", "14", Fraction(7 * 10**9 * 2, 10**9)),
    ("weights-7b-16bit-reserve-4gib.weights_gib", "13.04", "13,04", Fraction(7 * 10**9 * 2, GIB)),
    (
        "weights-7b-16bit-reserve-4gib.total_gib",
        "17.04",
        "17,04",
        Fraction(14 * 10**9 + 4 * GIB, GIB),
    ),
    (
        "weights-7b-16bit-reserve-6gib.total_gib",
        "19.04",
        "19,04",
        Fraction(14 * 10**9 + 6 * GIB, GIB),
    ),
    (
        "weights-7b-8bit-reserve-6gib.total_gib",
        "12.52",
        "12,52",
        Fraction(7 * 10**9 + 6 * GIB, GIB),
    ),
    (
        "weights-7b-4bit-reserve-6gib.weights_bytes",
        "3,500,000,000",
        "3.500.000.000",
        7 * 10**9 // 2,
    ),
    ("weights-7b-4bit-reserve-6gib.total_gib", "9.26", "9,26", Fraction(35 * 10**8 + 6 * GIB, GIB)),
    (
        "kv-cache-1-sequence.kv_cache_bytes",
        "1,073,741,824",
        "1.073.741.824",
        2 * 32 * 8 * 128 * 8192 * 2,
    ),
    ("kv-cache-1-sequence.kv_cache_gib", "1", "1", 1),
    (
        "kv-cache-4-sequences.kv_cache_bytes",
        "4,294,967,296",
        "4.294.967.296",
        4 * 2 * 32 * 8 * 128 * 8192 * 2,
    ),
    ("kv-cache-4-sequences.kv_cache_gib", "4", "4", 4),
    ("convert-24e9-bytes.gib", "22.35", "22,35", Fraction(24 * 10**9, GIB)),
    ("two-peaks.allocated_peak_gib", "8", "8", 8),
    ("two-peaks.reserved_peak_gib", "12", "12", 12),
    ("two-peaks.difference_of_peaks_gib", "4", "4", 4),
    ("two-peaks.instant_a_difference_gib", "2", "2", 2),
    ("two-peaks.instant_b_difference_gib", "6", "6", 6),
    ("shortlist-7b.need_gib", "19.04", "19,04", Fraction(14 * 10**9 + 6 * GIB, GIB)),
    ("shortlist-7b.rtx_4090_nominal_gb", "24", "24", 24),
    ("shortlist-7b.rtx_6000_ada_nominal_gb", "48", "48", 48),
    ("shortlist-7b.rtx_4090_price_usd", "47.14", "47,14", Fraction("47.14")),
    ("shortlist-7b.rtx_6000_ada_price_usd", "55.71", "55,71", Fraction("55.71")),
    ("kv-heads-llama-3-8b.kv_per_token_bytes", "131,072", "131.072", 2 * 32 * 8 * 128 * 2),
    ("kv-heads-llama-3-8b.mha_kv_cache_gib", "4", "4", Fraction(2 * 32 * 32 * 128 * 8192 * 2, GIB)),
    (
        "kv-heads-llama-3-8b.mqa_kv_cache_gib",
        "0.125",
        "0,125",
        Fraction(2 * 32 * 128 * 8192 * 2, GIB),
    ),
    ("kv-gemma-2-9b.hidden_over_heads", "224", "224", 224),
    # Right after an 8,192-token prompt every layer holds all of it (dynamic cache).
    (
        "kv-gemma-2-9b.peak_kv_cache_bytes",
        "2,818,572,288",
        "2.818.572.288",
        2 * 42 * 8 * 256 * 8192 * 2,
    ),
    # Decoding: 21 global layers hold 8,192 tokens, 21 sliding layers their 4,096-token window.
    (
        "kv-gemma-2-9b.decoding_kv_cache_gib",
        "1.97",
        "1,97",
        Fraction(2 * 21 * 8 * 256 * (8192 + 4096) * 2, GIB),
    ),
    ("kv-quantized-4bit.kv_cache_gib", "0.25", "0,25", Fraction(2 * 32 * 8 * 128 * 8192, 2 * GIB)),
    ("kv-paged-blocks.allocated_tokens", "1,008", "1.008", 63 * 16),
    ("kv-paged-blocks.allocated_kv_cache_bytes", "132,120,576", "132.120.576", 1008 * 131072),
    # Llama-3.1-8B (vocabulary 128,256, hidden 4,096, MLP 14,336, 32 layers, 8 KV heads of
    # 128, untied head): 8,030,261,248 parameters at 2 bytes, and its KV cache per token.
    ("load-spec-llama-3-1-8b-usual.weights_gib", "14.96", "14,96", Fraction(L31_PARAMS * 2, GIB)),
    ("load-spec-llama-3-1-8b-usual.kv_cache_gib", "0.25", "0,25", Fraction(L31_KV * 2048, GIB)),
    (
        "load-spec-llama-3-1-8b-limit.model_total_bytes",
        "20,355,489,792",
        "20.355.489.792",
        L31_PARAMS * 2 + 4 * L31_KV * 8192,
    ),
    ("load-spec-llama-3-1-8b-limit.model_total_gib", "18.96", "18,96", None),
    # GPTQ 4-bit, group 128, as AutoGPTQ's QuantLinear lays out each of the 224 Linear modules.
    (
        "quantized-gptq-llama-3-1-8b.uniform_weights_bytes",
        "4,015,130,624",
        "4.015.130.624",
        L31_PARAMS // 2,
    ),
    (
        "quantized-gptq-llama-3-1-8b.quantized_weights_bytes",
        "3,489,660,928",
        "3.489.660.928",
        GPTQ_LINEAR_VALUES // 2,
    ),
    (
        "quantized-gptq-llama-3-1-8b.scales_bytes",
        "109,051,904",
        "109.051.904",
        2 * GPTQ_LINEAR_VALUES // 128,
    ),
    (
        "quantized-gptq-llama-3-1-8b.zeros_bytes",
        "27,262,976",
        "27.262.976",
        GPTQ_LINEAR_VALUES // 128 // 2,
    ),
    ("quantized-gptq-llama-3-1-8b.group_index_bytes", "4,980,736", "4.980.736", GPTQ_G_IDX),
    (
        "quantized-gptq-llama-3-1-8b.unquantized_bytes",
        "2,101,878,784",
        "2.101.878.784",
        2 * (L31_PARAMS - GPTQ_LINEAR_VALUES),
    ),
    ("quantized-gptq-llama-3-1-8b.weights_gib", "5.34", "5,34", None),
    ("train-llama-3-1-8b-full.model_states_gib", "59.83", "59,83", Fraction(L31_PARAMS * 8, GIB)),
    ("train-llama-3-1-8b-lora.trainable_parameters", "6,815,744", "6.815.744", L31_LORA_R16),
    ("cost-series-2h.runs", "24", "24", 4 * (1 + 3 + 2)),
    ("cost-series-2h.packages", "1", "1", 1),
    ("cost-series-4h.packages", "2", "2", 2),
    ("cost-series-4h.rtx_4090_series_cost_usd", "94.28", "94,28", 2 * Fraction("47.14")),
    ("cost-series-4h.rtx_6000_ada_series_cost_usd", "111.42", "111,42", 2 * Fraction("55.71")),
    ("effective-batch.effective_batch", "64", "64", 4 * 8 * 2),
    ("effective-batch.tokens_per_update", "131,072", "131.072", 64 * 2048),
]


def test_the_stated_figures_have_a_column_per_language() -> None:
    # A new language of the list adds its column of stated figures to STATED.
    assert STATED_COLUMNS == CODES


@pytest.mark.parametrize(("reference", "ko", "id_", "exact"), STATED, ids=[s[0] for s in STATED])
def test_figure_is_exact_and_stated_as_the_guides_state_it(reference, ko, id_, exact) -> None:
    f = figure(reference)
    if exact is not None:  # None: a rounding of figures checked exactly on other rows
        assert f.value == exact
    assert format_number(f.value, f.decimals, "ko") == ko
    assert format_number(f.value, f.decimals, "id") == id_


def test_two_peaks_difference_is_observed_at_no_instant() -> None:
    example = registry()["two-peaks"]
    differences = {
        example.figure(k).value for k in ("instant_a_difference_gib", "instant_b_difference_gib")
    }
    assert example.figure("difference_of_peaks_gib").value not in differences


def test_every_byte_figure_agrees_with_pint(ureg) -> None:
    checked = 0
    names = {"B": "byte", "GB": "gigabyte", "GiB": "gibibyte", "MiB": "mebibyte"}
    for example in registry().values():
        for f in example.figures:
            if f.exact_bytes is None:
                continue
            via_pint = ureg.Quantity(Fraction(f.value), names[f.unit]).to("byte").magnitude
            assert Fraction(via_pint) == f.exact_bytes, (example.id, f.key)
            checked += 1
    assert checked >= 30


def test_keys_name_their_unit() -> None:
    suffix = {"B": "_bytes", "GB": "_gb", "GiB": "_gib", "MiB": "_mib", "USD": "_usd"}
    for example in registry().values():
        for f in example.figures:
            if f.unit in suffix:
                assert f.key.endswith(suffix[f.unit]) or f.key in {
                    "bytes",
                    "gib",
                    "bytes_per_parameter",
                    "bytes_per_value",
                }, (example.id, f.key)


def test_registry_lists_every_worked_example_of_the_guides() -> None:
    assert set(registry()) == {
        "units-gb-gib",
        "weights-7b-16bit-reserve-4gib",
        "weights-7b-16bit-reserve-6gib",
        "weights-7b-8bit-reserve-6gib",
        "weights-7b-4bit-reserve-6gib",
        "kv-cache-1-sequence",
        "kv-cache-4-sequences",
        "convert-24e9-bytes",
        "two-peaks",
        "shortlist-7b",
        "lab-predict-validation",
        "lab-not-predicted",
        "kv-heads-llama-3-8b",
        "kv-gemma-2-9b",
        "kv-quantized-4bit",
        "kv-paged-blocks",
        "load-spec-llama-3-1-8b-usual",
        "load-spec-llama-3-1-8b-long",
        "load-spec-llama-3-1-8b-limit",
        "load-spec-llama-3-1-8b-limit-tp2",
        "quantized-gptq-llama-3-1-8b",
        "train-llama-3-1-8b-full",
        "train-llama-3-1-8b-full-bf16-master",
        "train-llama-3-1-8b-lora",
        "train-llama-3-1-8b-dora",
        "train-llama-3-1-8b-qlora",
        "train-llama-3-1-8b-qlora-double-quant",
        "cost-series-2h",
        "cost-series-4h",
        "effective-batch",
        "split-llama-3-8b",
        "split-llama-3-70b",
        "split-pp-32-on-3",
        "split-pp-34-on-4",
        "split-vllm",
        "split-llamacpp",
        "fit-load-spec-rtx-4090",
        "fit-load-spec-cards",
        "fit-quantized-rtx-4090",
        *(f"card-{card.id}" for card in load_catalog()),  # one GPU sheet per catalogue card
    }


@pytest.mark.parametrize(
    ("card_id", "declared_mib", "declared_gib_ko"),
    [("rtx-4090", 24564, "23.99"), ("rtx-6000-ada", 49140, "47.99")],
)
def test_gpu_sheets_state_the_declared_capacity_beside_the_nominal_convention(
    card_id: str, declared_mib: int, declared_gib_ko: str
) -> None:
    sheet = registry()[f"card-{card_id}"]
    assert sheet.figure("declared_mib").value == declared_mib
    assert sheet.figure("declared_bytes").exact_bytes == declared_mib * 2**20
    assert format_number(sheet.figure("declared_gib").value, 2, "ko") == declared_gib_ko
    # The nominal figure read as decimal GB is below what the card declares.
    assert sheet.figure("nominal_bytes").value < sheet.figure("declared_bytes").value


def test_the_shortlist_example_derives_no_margin_from_the_nominal_figure() -> None:
    keys = {f.key for f in registry()["shortlist-7b"].figures}
    assert not any("margin" in key or key.endswith("nominal_gib") for key in keys)


def test_unknown_references_fail_loudly() -> None:
    with pytest.raises(KeyError):
        figure("no-such-example.total_gib")
    with pytest.raises(KeyError):
        figure("two-peaks.no_such_key")
