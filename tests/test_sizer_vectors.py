"""The sizer's test vectors come from the same core as the CLI and the registry."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from support import per_language

from iteragpu.cli.language import reads_decimal_comma
from iteragpu.core.numbers import InputError, parse_tokens
from iteragpu.docs_tools.sizer_vectors import (
    CASES,
    DEFAULT_QUERY,
    expected,
    generated_queries,
)
from iteragpu.docs_tools.sizer_vectors import vectors as build_vectors
from iteragpu.examples import figure
from iteragpu.gpus.catalog import load_catalog
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number


@cache
def vectors() -> dict[str, Any]:
    """Every vector the page's script is checked against, built once per test process (the
    training and split vectors alone take tens of seconds); the tests only read them."""
    return build_vectors()


def test_defaults_reproduce_the_guides_worked_examples() -> None:
    default = expected({})
    assert default["valid"]
    assert default["total_bytes"] == str(
        int(figure("weights-7b-16bit-reserve-6gib.total_gib").exact_bytes or 0)
    )
    for lang in CODES:
        texts = default["text"][lang]
        total = figure("weights-7b-16bit-reserve-6gib.total_gib")
        assert texts["range-gib"] == format_number(total.value, 2, lang)
        kv = figure("kv-cache-1-sequence.kv_cache_bytes")
        assert texts["kv-bytes"] == format_number(kv.value, 0, lang)
    # Every card is listed once: those to check in review order, then the excluded.
    assert sorted(c["card_id"] for c in default["candidates"]) == sorted(
        c.id for c in load_catalog()
    )


def test_invalid_queries_are_flagged_not_computed() -> None:
    for query in ({"params": "-7e9"}, {"bits": "nan"}, {"task": "dreaming"}, {"params": "0"}):
        result = expected(query)
        assert result == {"valid": False, "error": result["error"]}
        assert result["error"]


def test_vectors_cover_every_case_and_each_input() -> None:
    data = vectors()
    assert len(data["cases"]) == len(CASES)
    varied = {key for case in CASES for key in case}
    assert varied >= set(DEFAULT_QUERY) - {"window"} | {"window"}
    assert sum(1 for c in data["cases"] if c["expected"]["valid"]) >= 10
    fractional = expected({"bits": "4.5", "reserve_gib": "0"})
    assert "/" not in fractional["weights_bytes"]  # 7e9 x 4.5 / 8 is a whole number of bytes
    assert expected({"params": "13000000001", "bits": "3"})["weights_bytes"].endswith("/8")


def test_no_candidate_of_the_sizer_is_ranked_and_reasons_are_stated() -> None:
    default = expected({})
    # a package of one card (the sizer's default): an 8-card offer does not price one card
    priced = {card.id for card in load_catalog() if any(p.cards == 1 for p in card.packages)}
    declared = {card.id for card in load_catalog() if card.declared is not None}
    need = Fraction(default["total_bytes"])
    cards = {card.id: card for card in load_catalog()}
    for candidate in default["candidates"]:
        assert candidate["rank"] is None
        card = cards[candidate["card_id"]]
        if card.declared is None and (card.nominal_memory_gb or 0) * 2**30 < need:
            # A card sold as 16 GB cannot hold 19.04 GiB, even reading its figure as GiB.
            assert candidate["status"] == "excluded"
            assert candidate["reasons"]["memory"] == "above_nominal_binary"
            continue
        assert candidate["status"] == "check_needed"
        package = "package_listed" if candidate["card_id"] in priced else "package_missing"
        assert candidate["reasons"]["package"] == package
        assert candidate["reasons"]["memory"] in {
            "nominal_not_proof",
            "above_nominal_declared_unknown",
        }
        known = candidate["card_id"] in declared
        assert set(candidate["declared_text"]) == (set(CODES) if known else set())  # null: none
    guide = [c for c in default["candidates"] if c["card_id"] in {"rtx-4090", "rtx-6000-ada"}]
    assert [c["declared_text"]["id"] for c in guide] == ["23,99", "47,99"]


def test_generated_vectors_reach_every_edge_of_every_card() -> None:
    generated = vectors()["generated"]
    assert len(generated) >= 100 and all(v["expected"]["valid"] for v in generated)
    needs = {Fraction(v["expected"]["total_bytes"]) for v in generated}
    for card in load_catalog():
        assert card.nominal_memory_bytes is not None
        edges = [int(card.nominal_memory_bytes)]
        if card.declared is not None:
            edges.append(card.declared.bound_bytes)
        else:
            edges.append(card.nominal_memory_gb * 2**30)  # the binary reading of "N GB"
        for edge in edges:
            assert {edge - 1, edge, edge + 1} <= needs, card.id
    reasons = {c["reasons"]["memory"] for v in generated for c in v["expected"]["candidates"]}
    assert reasons >= {
        "nominal_not_proof",
        "above_nominal_within_declared",
        "above_nominal_declared_unknown",
        "declared_below_need",
        "above_nominal_binary",
    }
    flags = {v["expected"]["quantization_not_counted"] for v in generated}
    assert flags == {True, False}
    assert generated_queries() == generated_queries()  # seeded: the same on every run


def test_the_per_kind_kv_is_iteragpu_models_and_static_windows_keep_the_guides_formula() -> None:
    from iteragpu.core.kv_cache import kv_cache_bytes

    windowed = {"window": "4096", "tokens": "32768"}
    static = expected(windowed)
    assert static["kv_cache_bytes"] == str(kv_cache_bytes(32, 8, 128, 32768, 2, window=4096))
    dynamic = expected({**windowed, "cache": "dynamic"})  # the prompt peak: every token held
    assert dynamic["kv_cache_bytes"] == str(kv_cache_bytes(32, 8, 128, 32768, 2))
    half = expected({**windowed, "windowed_layers": "16"})
    assert [(g["kind"], g["count"], g["tokens_held"]) for g in half["kv_groups"]] == [
        ("full_attention", 16, 32768),
        ("sliding_attention", 16, 4096),
    ]
    assert Fraction(half["model_total_bytes"]) == Fraction(half["total_bytes"]) + Fraction(
        half["kv_cache_bytes"]
    )
    mla = expected({"layers": "61", "kv_values": "576", "kv_heads": "x", "tokens": "1"})
    assert mla["kv_bytes_per_token"] == str(61 * 576 * 2)
    for query, reason in (
        ({"windowed_layers": "4"}, "needs a window"),
        ({"window": "1", "windowed_layers": "33"}, "cannot exceed layers"),
        ({"cache": "paged"}, "dynamic or static"),
    ):
        result = expected(query)
        assert not result["valid"] and reason in result["error"], query


@cache
def _config_vectors() -> tuple[dict[str, Any], ...]:
    from iteragpu.docs_tools.sizer_config_vectors import config_vectors

    return tuple(config_vectors())


def test_config_vectors_are_size_models_answers_and_cover_each_rule() -> None:
    from iteragpu.docs_tools.sizer_config_vectors import BAD_CONFIGS, CONFIGS, FAMILY_PREFIX

    # The configs named here (the families' and the expressions' vectors are checked below).
    vectors = [
        v for v in _config_vectors() if "text" in v and not v["name"].startswith(FAMILY_PREFIX)
    ]
    names = {v["name"] for v in vectors}
    assert {"gemma-2-9b", "llama-3-8b"} | set(CONFIGS) | set(BAD_CONFIGS) <= names
    valid = [v for v in vectors if v["expected"]["valid"]]
    refused = [v for v in vectors if not v["expected"]["valid"]]
    assert {v["name"] for v in refused} == set(BAD_CONFIGS)  # each bad config is refused
    reasons = {v["expected"]["reason"] for v in refused}
    assert reasons >= {"config_not_json", "recurrent_state", "unknown_family", "bad_key"}
    layouts = {g["layout"] for v in valid for g in v["expected"]["layers"]}
    assert layouts == {"per_head", "mla_latent", "mla_per_head"}
    kinds = {tuple(sorted(g["kind"] for g in v["expected"]["layers"])) for v in valid}
    assert ("full_attention", "sliding_attention") in kinds
    # The sizer's own query, filled as the page fills it, gives size_model's figures.
    gemma = next(v for v in valid if v["name"] == "gemma-2-9b" and v["options"].get("cache"))
    want = gemma["expected"]
    query = {
        "params": str(want["parameters"]),
        "bits": want["weights_bits"],
        "reserve_gib": gemma["options"].get("reserve_gib", "0"),
        "layers": "42",
        "kv_heads": "8",
        "head_dim": "256",
        "tokens": gemma["options"]["tokens"],
        "sequences": gemma["options"].get("sequences", "1"),
        "bytes_per_value": want["kv_bytes_per_value"],
        "window": "4096",
        "windowed_layers": "21",
        "cache": gemma["options"]["cache"],
    }
    sized = expected(query)
    assert sized["kv_cache_bytes"] == want["kv_cache_bytes"]
    assert sized["model_total_bytes"] == want["total_bytes"]


def test_token_vectors_refuse_a_suffix_with_both_readings_and_keep_7b() -> None:
    from iteragpu.docs_tools.sizer_vectors import TOKEN_CASES, refusal

    data = vectors()
    assert [case["query"] for case in data["token_cases"]] == TOKEN_CASES
    ambiguous = refusal({"tokens": "32k"})
    assert ambiguous is not None
    assert ambiguous["field"] == "tokens" and ambiguous["reason"] == "ambiguous_suffix"
    assert [Fraction(r) for r in ambiguous["readings"]] == [32 * 1000, 32 * 1024]
    for lang, (decimal, binary) in per_language(
        {"ko": ("32,000", "32,768"), "id": ("32.000", "32.768")}
    ):
        texts = ambiguous["text"][lang]
        assert (texts["decimal_reading"], texts["binary_reading"]) == (decimal, binary)
        # The core writes the readings of its own message as Babel groups them.
        with pytest.raises(InputError) as error:
            parse_tokens("32k", "tokens", decimal_comma=reads_decimal_comma(lang))
        assert {k: error.value.values[k] for k in texts} == texts
    window = refusal({"window": "4k", "tokens": "32768"})
    assert window is not None and window["field"] == "window"
    assert [Fraction(r) for r in window["readings"]] == [4 * 1000, 4 * 1024]
    assert refusal({"tokens": "1B"}) == {"field": "tokens", "reason": "not_token_count"}
    # Llama-3-70B (80 layers, 8 KV heads of 128, 2 B a value) at 32,768 tokens x 8: 80 GiB.
    llama = {"tokens": "32768", "layers": "80", "kv_heads": "8", "head_dim": "128"}
    sized = expected({**llama, "sequences": "8"})
    assert Fraction(sized["kv_cache_bytes"]) == 2 * 80 * 8 * 128 * 2 * 32768 * 8 == 80 * 2**30
    assert expected({**llama, "tokens": "32K", "sequences": "8"})["valid"] is False
    # Counts of parameters and sequences keep their decimal suffixes.
    assert refusal({"params": "70B", "sequences": "1k", "days": "2"}) is None
    assert expected({"params": "70B"})["weights_bytes"] == str(70 * 10**9 * 16 // 8)


def test_every_token_parse_vector_states_its_readings() -> None:
    reasons = set()
    for key in ("parse", "parse_decimal_comma"):
        for vector in vectors()[key]:
            tokens = vector["tokens"]
            if tokens["ok"]:
                assert vector["count"] == tokens  # a count in digits reads the same either way
                continue
            reasons.add(tokens["reason"])
            assert ("readings" in tokens) == (tokens["reason"] == "ambiguous_suffix")
            if "readings" in tokens:
                decimal, binary = (Fraction(r) for r in tokens["readings"])
                assert binary / decimal in {Fraction(1024, 1000) ** n for n in (1, 2, 3, 4)}
    assert reasons >= {"ambiguous_suffix", "not_token_count", "not_positive", "not_number"}


def test_every_recipe_family_has_configs_read_and_refused() -> None:
    from iteragpu.docs_tools.sizer_config_vectors import FAMILY_LAYERS, FAMILY_PREFIX, READ_KEYS
    from iteragpu.models.recipe import recipe, recipe_types

    vectors = [v for v in _config_vectors() if v["name"].startswith(FAMILY_PREFIX)]
    for model_type in recipe_types():
        described = recipe(model_type)
        assert described is not None
        aliases = described.data.get("aliases", {})
        prefix = f"{FAMILY_PREFIX}{model_type}-"
        own = {v["name"]: v for v in vectors if v["name"].startswith(prefix)}
        minimal = own[f"{FAMILY_PREFIX}{model_type}-minimal"]
        want = minimal["expected"]
        assert want["valid"] and want["model_type"] == model_type, want
        # Only the keys the reader never defaults, under the family's own names, and what the
        # recipe needs without a default.
        config = json.loads(minimal["text"])
        for key in READ_KEYS:
            assert aliases.get(key, key).split(".")[0] in config, (model_type, key)
        assert len(want["reading"]["layer_kinds"]) == FAMILY_LAYERS
        tied = own[f"{FAMILY_PREFIX}{model_type}-tied-flipped"]["expected"]
        assert tied["valid"], tied
        refused = own[f"{FAMILY_PREFIX}{model_type}-no-layers"]["expected"]
        assert (refused["reason"], refused["key"]) == ("missing_key", "num_hidden_layers")
        assert sum(1 for v in own.values() if not v["expected"]["valid"]) >= 2, model_type
    # Tying the head changes the count of some family; the window and the kinds slide somewhere.
    assert any(
        v["expected"]["valid"]
        and v["expected"]["parameters"]
        != next(
            w["expected"]["parameters"]
            for w in vectors
            if w["name"] == v["name"].replace("-tied-flipped", "-minimal")
            and w["options"] == v["options"]
        )
        for v in vectors
        if v["name"].endswith("-tied-flipped")
    )
    valid = [v["expected"] for v in vectors if v["expected"]["valid"]]
    kinds = {k for expected in valid for k in expected["reading"]["layer_kinds"]}
    # Every cache layer type a recipe gives, as the reader reads it (config.py): chunked attention
    # (Llama 4), state layers (Mamba, linear attention), hybrid ones, and layers holding nothing.
    assert kinds >= {
        "full_attention",
        "sliding_attention",
        "chunked_attention",
        "linear_attention",
        "hybrid",
        "dummy",
    }
    assert kinds <= {
        "full_attention",
        "sliding_attention",
        "chunked_attention",
        "linear_attention",
        "conv",
        "hybrid",
        "hybrid_sliding",
        "dummy",
    }
    # The states are sized somewhere, and a model without any KV layer (Mamba) reads.
    assert any(expected["state_bytes"] != "0" for expected in valid)
    assert any(all(g["values_per_token"] == 0 for g in expected["layers"]) for expected in valid)


def test_every_wrapper_has_configs_counted_and_refused() -> None:
    from iteragpu.docs_tools.sizer_config_vectors import WRAPPER_PREFIX
    from iteragpu.models.towers import text_model_type, wrapper_types

    vectors = [v for v in _config_vectors() if v["name"].startswith(WRAPPER_PREFIX)]
    not_counted = "multimodal_encoder_not_counted"
    for wrapper_type in wrapper_types():
        prefix = f"{WRAPPER_PREFIX}{wrapper_type}-"
        own = {
            v["name"][len(prefix) :]: v["expected"] for v in vectors if v["name"].startswith(prefix)
        }
        minimal = own["minimal"]
        assert minimal["valid"], minimal
        assert minimal["model_type"] == text_model_type(wrapper_type)
        assert not_counted not in minimal["caveats"]
        # The text keys at the top read as in text_config (Qwen2-VL's published configs).
        assert own["top-level"]["parameters"] == minimal["parameters"]
        assert own["default-vision"]["parameters"] != minimal["parameters"]
        if "unknown-tower" in own:
            assert not_counted in own["unknown-tower"]["caveats"]
        refused = {name: (e["reason"], e["key"]) for name, e in own.items() if not e["valid"]}
        assert refused["vision-not-object"] == ("bad_key", "vision_config")
        assert refused["vision-empty"][0] == "missing_key"
        assert any(name.startswith("negative-") for name in refused), wrapper_type
    # Gemma-3-4B as Transformers builds it, its SigLIP tower and projector included.
    gemma = next(v["expected"] for v in _config_vectors() if v["name"] == "gemma-3-4b")
    assert gemma["parameters"] == 4_300_079_472
    assert not_counted not in gemma["caveats"]


def test_a_family_added_later_is_covered_under_its_own_key_names() -> None:
    from iteragpu.docs_tools.sizer_config_vectors import (
        DOTTED_FAMILY,
        extra_families,
        family_configs,
        sized,
    )

    with extra_families({"zz_later": DOTTED_FAMILY}):
        configs = family_configs("zz_later")
        minimal = configs["family-zz_later-minimal"]
        assert {"n_layers", "n_heads", "d_model"} <= set(minimal)
        assert "num_hidden_layers" not in minimal
        answers = {name: sized(json.dumps(c), {"tokens": "1"}) for name, c in configs.items()}
    assert answers["family-zz_later-minimal"]["valid"]
    refused = [name for name, answer in answers.items() if not answer["valid"]]
    assert "family-zz_later-no-layers" in refused


def test_the_vectors_own_family_reads_nested_keys_and_counts_its_router_in_float32() -> None:
    vectors = {v["name"]: v for v in _config_vectors() if v["name"].startswith("family-dotted")}
    dotted = vectors["family-dotted"]["expected"]
    assert dotted["valid"]
    reading = dotted["reading"]
    assert reading["kv_heads"] == 2  # attn_config.kv_n_heads
    assert reading["float32_parameters"] == 8 * 4 * 64  # each layer's router
    assert reading["active_parameters"] < dotted["parameters"]
    assert reading["layer_kinds"][:3] == ["sliding_attention"] * 2 + ["full_attention"]
    assert vectors["family-dotted-not-nested"]["expected"]["reading"]["kv_heads"] == 8
    reasons = {
        name: (v["expected"]["reason"], v["expected"]["key"])
        for name, v in vectors.items()
        if not v["expected"]["valid"]
    }
    assert reasons["family-dotted-window-zero"] == ("bad_key", "(layer + 1) % window_every")
    assert reasons["family-dotted-top-k-above"] == ("bad_key", "num_experts_per_tok")


def test_expression_vectors_cover_the_subset_and_its_refusals() -> None:
    from iteragpu.docs_tools.sizer_config_vectors import EXPRESSIONS

    vectors = [v for v in _config_vectors() if "expression" in v]
    expressions = {v["expression"] for v in vectors}
    assert len(expressions) >= 100
    for piece in ("//", "%", " is None", " is not ", " not in ", " in ", " and ", " or ", "not "):
        assert any(piece in e for e in expressions), piece
    for piece in (" if ", " else ", "min(", "max(", "len(", "[", "'", "<", "==", "!="):
        assert any(piece in e for e in expressions), piece
    refused = {(v["expected"]["reason"]) for v in vectors if not v["expected"]["valid"]}
    assert refused == {"bad_key", "missing_key"}
    assert any(v["expected"]["valid"] for v in vectors)
    # What Python cannot evaluate at all is left out, never stated as a refusal.
    assert {"min(a, s)", "len(a)", "-n"} <= set(EXPRESSIONS) - expressions


def test_the_pages_data_carries_every_recipe_with_its_base_merged() -> None:
    import importlib.util
    from pathlib import Path

    from iteragpu.models.recipe import recipe, recipe_types

    path = Path(__file__).resolve().parents[1] / "docs" / "hooks.py"
    spec = importlib.util.spec_from_file_location("iteragpu_site_hooks", path)
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    families = hooks.sizer_data()["families"]
    assert list(families) == list(recipe_types())
    for model_type, data in families.items():
        described = recipe(model_type)
        assert described is not None and data == described.data
        assert "layer" in data, model_type  # a base's terms are merged in
    # What the page embeds is JSON: the same data once read back.
    assert json.loads(json.dumps(families)) == families
    # The multimodal wrappers' recipes and their towers', as iteragpu.models.towers reads them.
    from iteragpu.models.towers import TOWERS_DIR, tower, wrapper, wrapper_types

    data = hooks.sizer_data()
    assert list(data["wrappers"]) == list(wrapper_types())
    assert sorted(data["towers"]) == sorted(p.stem for p in TOWERS_DIR.glob("*.json"))
    for model_type, recipe_data in data["wrappers"].items():
        described = wrapper(model_type)
        assert described is not None and recipe_data == described.data
        assert described.data["vision"]["model_type"] in data["towers"]
    for model_type, recipe_data in data["towers"].items():
        described = tower(model_type)
        assert described is not None and recipe_data == described.data
    assert json.loads(json.dumps(data["towers"])) == data["towers"]
