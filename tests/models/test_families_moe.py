"""The mixture-of-experts families described as data (`families/<type>.json`): Qwen2-MoE,
Qwen3-MoE, OLMoE, Granite-MoE, gpt-oss, GLM-4-MoE, ERNIE-4.5-MoE, MiniMax-M2, Phi-MoE, and the
counts of DeepSeek-V2/V3 (whose MLA cache stays the hand code's, config.py and kv.py).

Without torch: each malformed config is refused on one line (the reader and `iteragpu model`,
exit 2), and the recipes give, for each config class's defaults, the figures Transformers 5.24
builds on the meta device (measured once; tests/models/test_families_transformers.py proves
them against Transformers itself).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.docs_tools.sizer_config_vectors import CONFIGS, DEEPSEEK_V2_LITE
from iteragpu.models import parameters
from iteragpu.models.config import FULL, SLIDING, ModelConfig, parse_config
from iteragpu.models.errors import ModelInputError
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters

# Per family: the keys naming its routed experts, the experts a token uses and one size the
# recipe reads (the config's own names).
KEYS: dict[str, tuple[str, str, str]] = {
    "qwen2_moe": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "qwen3_moe": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "olmoe": ("num_experts", "num_experts_per_tok", "intermediate_size"),
    "granitemoe": ("num_local_experts", "num_experts_per_tok", "intermediate_size"),
    "gpt_oss": ("num_local_experts", "num_experts_per_tok", "intermediate_size"),
    "glm4_moe": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "ernie4_5_moe": ("moe_num_experts", "moe_k", "moe_intermediate_size"),
    "minimax_m2": ("num_local_experts", "num_experts_per_tok", "intermediate_size"),
    "phimoe": ("num_local_experts", "num_experts_per_tok", "intermediate_size"),
    "deepseek_v2": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "deepseek_v3": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size"),
}
LAYERS = 2

# Each config class's defaults (layers, heads, hidden size) and what Transformers 5.24 builds
# from them at bfloat16: parameters, active parameters (None: the class states no experts per
# token), bytes (routers kept in float32 weigh 4).
DEFAULTS: dict[str, tuple[tuple[int, int, int], int, int | None, int]] = {
    "qwen2_moe": ((24, 16, 2048), 14_315_784_192, 2_689_173_504, 28_631_568_384),
    "qwen3_moe": ((24, 32, 2048), 15_350_731_776, 1_761_186_816, 30_701_463_552),
    "olmoe": ((16, 16, 2048), 13_361_612_800, 2_087_323_648, 26_723_225_600),
    "granitemoe": ((32, 32, 4096), 37_039_116_288, 11_067_985_920, 74_078_232_576),
    "gpt_oss": ((36, 64, 2880), 116_829_156_672, 5_711_982_912, 233_658_313_344),
    "glm4_moe": ((46, 96, 4096), 103_481_200_640, 10_053_079_040, 207_009_587_200),
    "ernie4_5_moe": ((28, 20, 2560), 21_825_437_888, 3_352_150_208, 43_659_726_592),
    "minimax_m2": ((62, 48, 3072), 228_689_748_992, 11_030_537_216, 457_379_497_984),
    "phimoe": ((32, 32, 4096), 41_872_793_600, 6_640_640_000, 83_745_587_200),
    "deepseek_v2": ((32, 32, 4096), 38_612_307_968, None, 77_241_393_152),
    "deepseek_v3": ((61, 128, 7168), 671_026_404_352, 37_552_282_624, 1_342_265_669_632),
}


def small(model_type: str, **changes: Any) -> dict[str, Any]:
    """A small valid config of the family: 2 layers, 4 experts, 2 per token, a MoE layer."""
    experts, per_token, _ = KEYS[model_type]
    config: dict[str, Any] = {
        "model_type": model_type,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "hidden_size": 64,
        "intermediate_size": 48,
        "moe_intermediate_size": 16,
        "vocab_size": 96,
        experts: 4,
        per_token: 2,
        "dtype": "bfloat16",
    }
    if model_type == "deepseek_v3":
        config["first_k_dense_replace"] = 1  # layer 1 holds the experts
    return {**config, **changes}


def read(raw: dict[str, Any]) -> ModelConfig:
    """The config read and counted, as `iteragpu model` reads and counts it."""
    config = parse_config(raw)
    count_parameters(config)
    active_parameters(config)
    return config


def without(config: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != key}


def _malformed() -> list[Any]:
    cases = []
    for model_type, (experts, per_token, size) in KEYS.items():
        config = small(model_type)
        cases += [
            pytest.param(without(config, "num_attention_heads"), id=f"{model_type}-no-heads"),
            pytest.param(
                {**config, "layer_types": [FULL] * (LAYERS + 1)},
                id=f"{model_type}-layer-types-longer",
            ),
            pytest.param(
                {**config, per_token: config[experts] + 1}, id=f"{model_type}-per-token-above"
            ),
            pytest.param({**config, size: -16}, id=f"{model_type}-negative-size"),
        ]
    return cases


@pytest.mark.parametrize("model_type", sorted(KEYS))
def test_the_small_config_is_read(model_type: str) -> None:
    config = read(small(model_type))
    assert config.layers == LAYERS
    total, active = count_parameters(config), active_parameters(config)
    assert active is not None and 0 < active < total


@pytest.mark.parametrize("raw", _malformed())
def test_a_malformed_config_is_refused_on_one_line(raw: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(ModelInputError) as error:
        read(raw)
    assert "\n" not in str(error.value)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(raw), "utf-8")
    result = CliRunner().invoke(app, ["model", str(folder), "--tokens", "8"], prog_name="iteragpu")
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_the_config_class_defaults_give_what_transformers_builds(model_type: str) -> None:
    (layers, heads, hidden), built, active, at_bf16 = DEFAULTS[model_type]
    config = parse_config(
        {
            "model_type": model_type,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "hidden_size": hidden,
        }
    )
    assert count_parameters(config) == built
    assert active_parameters(config) == active
    kept = float32_parameters(config)
    assert (built - kept) * 2 + kept * 4 == at_bf16


def test_routers_kept_in_float32_are_the_deepseek_glm_and_ernie_routers() -> None:
    # DeepSeek-V3: 58 MoE layers (3 dense first), a router of 256 experts x 7168 each.
    v3 = parse_config(
        {
            "model_type": "deepseek_v3",
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "hidden_size": 7168,
        }
    )
    assert float32_parameters(v3) == 58 * 256 * 7168
    # ERNIE-4.5-MoE: its router and the router's score correction, one per expert.
    ernie = parse_config(small("ernie4_5_moe"))
    assert float32_parameters(ernie) == (LAYERS - 1) * (4 * 64 + 4)
    assert float32_parameters(parse_config(small("glm4_moe"))) == (LAYERS - 1) * 4 * 64
    for model_type in ("qwen2_moe", "qwen3_moe", "gpt_oss", "minimax_m2", "phimoe"):
        assert float32_parameters(parse_config(small(model_type))) == 0


def _hand_count(config: ModelConfig) -> int:
    """DeepSeek's count by the hand code (iteragpu.models.parameters) the recipes replace."""
    assert config.vocab_size is not None
    embeddings = config.vocab_size * config.hidden_size
    head = 0 if config.tie_word_embeddings else embeddings
    layers = sum(parameters._layer(config, index) for index in range(config.layers))
    return embeddings + layers + config.hidden_size + head


# The sizer vectors' DeepSeek-V3-shaped config (dense first layers, MoE every other layer).
V3_SHAPED = CONFIGS["deepseek-v3-shaped"]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(DEEPSEEK_V2_LITE, id="v2-lite"),
        pytest.param({**DEEPSEEK_V2_LITE, "num_experts_per_tok": 6}, id="v2-lite-6-per-token"),
        pytest.param(
            {**DEEPSEEK_V2_LITE, "attention_bias": True, "mlp_bias": True, "q_lora_rank": 256},
            id="v2-biases-q-rank",
        ),
        pytest.param(V3_SHAPED, id="v3-shaped-every-other-layer"),
        pytest.param(small("deepseek_v2", tie_word_embeddings=True), id="v2-tied"),
        pytest.param(small("deepseek_v3"), id="v3-small"),
    ],
)
def test_deepseek_recipes_count_what_the_hand_code_counts(raw: dict[str, Any]) -> None:
    config = parse_config(raw)
    assert config.mla is not None  # the cache stays the hand code's MLA
    assert count_parameters(config) == _hand_count(config)


def test_deepseek_v2_without_experts_per_token_counts_its_parameters_not_the_active() -> None:
    # DeepseekV2Config's num_experts_per_tok defaults to None: the count holds, the active
    # parameters are unknown rather than guessed.
    config = parse_config(DEEPSEEK_V2_LITE)
    assert count_parameters(config) == _hand_count(config)
    assert active_parameters(config) is None
    stated = parse_config({**DEEPSEEK_V2_LITE, "num_experts_per_tok": 6})
    routed = 26 * 64 * 3 * 2048 * 1408  # 26 MoE layers (the first is dense), 64 experts
    assert active_parameters(stated) == count_parameters(stated) - routed + routed // 64 * 6


def test_qwen2_moe_window_is_dropped_unless_use_sliding_window() -> None:
    # Transformers writes sliding_window 0 when use_sliding_window is false.
    saved = small("qwen2_moe", num_hidden_layers=4, sliding_window=0, use_sliding_window=False)
    config = parse_config({**saved, "layer_types": [FULL] * 4})
    assert config.sliding_window is None and set(config.layer_kinds) == {FULL}
    assert parse_config(saved).layer_kinds == (FULL,) * 4
    # Sliding: every other layer below max_window_layers.
    windowed = {**saved, "sliding_window": 16, "use_sliding_window": True, "max_window_layers": 2}
    config = parse_config(windowed)
    assert config.layer_kinds == (SLIDING, FULL, FULL, FULL)
    assert config.sliding_window == 16
    with pytest.raises(ModelInputError):
        parse_config({**windowed, "sliding_window": 0})


def test_qwen3_moe_slides_every_layer_only_with_use_sliding_window() -> None:
    config = parse_config(small("qwen3_moe", sliding_window=4096))
    assert config.sliding_window is None and set(config.layer_kinds) == {FULL}
    config = parse_config(small("qwen3_moe", sliding_window=16, use_sliding_window=True))
    assert config.layer_kinds == (SLIDING,) * LAYERS and config.sliding_window == 16


def test_gpt_oss_alternates_sliding_and_full_layers() -> None:
    config = parse_config(small("gpt_oss", num_hidden_layers=4))
    assert config.layer_kinds == (SLIDING, FULL, SLIDING, FULL)
    assert config.sliding_window == 128  # GptOssConfig's default


@pytest.mark.parametrize(
    ("model_type", "names", "aliases"),
    [
        ("qwen3_moe", ("num_experts",), ("num_local_experts",)),
        ("olmoe", ("num_experts",), ("num_local_experts",)),
        ("gpt_oss", ("num_local_experts",), ("num_experts",)),
        ("glm4_moe", ("n_routed_experts",), ("num_local_experts",)),
        ("ernie4_5_moe", ("moe_num_experts", "moe_k"), ("num_experts", "num_experts_per_tok")),
    ],
)
def test_the_config_class_attribute_names_read_the_same(
    model_type: str, names: tuple[str, ...], aliases: tuple[str, ...]
) -> None:
    # What Transformers' attribute_map accepts for the same attribute counts the same.
    config = small(model_type)
    renamed = dict(config)
    for name, alias in zip(names, aliases, strict=True):
        renamed[alias] = renamed.pop(name)
    first, second = parse_config(config), parse_config(renamed)
    assert count_parameters(first) == count_parameters(second)
    assert active_parameters(first) == active_parameters(second)


def test_deepseek_layers_hold_experts_from_first_k_dense_replace_whatever_moe_layer_freq() -> None:
    # Transformers 5.24 builds DeepseekV2Moe for every layer_idx >= first_k_dense_replace
    # (modeling_deepseek_v2.py, DeepseekV2DecoderLayer); moe_layer_freq is not read.
    every = parse_config(small("deepseek_v2", num_hidden_layers=4, first_k_dense_replace=1))
    freq = parse_config(
        small("deepseek_v2", num_hidden_layers=4, first_k_dense_replace=1, moe_layer_freq=2)
    )
    assert count_parameters(freq) == count_parameters(every)
    dense = parse_config(small("deepseek_v2", num_hidden_layers=4, first_k_dense_replace=4))
    assert count_parameters(every) > count_parameters(dense)
