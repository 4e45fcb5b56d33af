"""The multimodal wrappers described as data (iteragpu.models.towers): LLaVA, Mistral-3,
Gemma-3, Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Llama 4, their vision towers and projectors counted.

Without torch: each wrapper's class defaults give the figures Transformers 5.24 builds on the
meta device (measured once; tests/models/test_wrappers_transformers.py proves them against
Transformers itself), and each malformed vision config is refused on one line (the reader and
`iteragpu model`, exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.models.config import parse_config
from iteragpu.models.errors import ModelInputError
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters
from iteragpu.models.towers import text_model_type, wrapper_counts, wrapper_types

Modules = tuple[tuple[str, int], ...]

# Each wrapper's class defaults as a config.json: its text_config's class defaults (the layers,
# heads and width, and the keys where the wrapper's default text config differs from its class:
# Mistral-3's), no vision_config (the class's own default tower). The transformers test builds
# these and the class's whole defaults (`AutoConfig.for_model`): both give the figures below.
DEFAULT_CONFIGS: dict[str, dict[str, Any]] = {
    "gemma3": {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text"}},
    "llama4": {"model_type": "llama4", "text_config": {"model_type": "llama4_text"}},
    "llava": {"model_type": "llava", "text_config": {"model_type": "llama"}},
    "mistral3": {
        "model_type": "mistral3",
        "text_config": {
            "model_type": "mistral",
            "vocab_size": 131072,
            "intermediate_size": 32768,
            "head_dim": 128,
            "sliding_window": None,
        },
    },
    "qwen2_5_vl": {"model_type": "qwen2_5_vl", "text_config": {"model_type": "qwen2_5_vl_text"}},
    "qwen2_vl": {"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2_vl_text"}},
    "qwen3_vl": {"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text"}},
}
SHAPES: dict[str, tuple[int, int, int]] = {  # the text config's layers, heads, width
    "gemma3": (26, 8, 2304),
    "llama4": (48, 40, 5120),
    "llava": (32, 32, 4096),
    "mistral3": (40, 32, 5120),
    "qwen2_5_vl": (80, 64, 8192),
    "qwen2_vl": (80, 64, 8192),
    "qwen3_vl": (32, 32, 4096),
}
for _type, (_layers, _heads, _hidden) in SHAPES.items():
    DEFAULT_CONFIGS[_type]["text_config"].update(
        num_hidden_layers=_layers, num_attention_heads=_heads, hidden_size=_hidden
    )

# What Transformers 5.24 builds from each wrapper's class defaults: parameters, then per top
# module the parameters no module before it holds (a tied head: 0).
DEFAULTS: dict[str, tuple[int, Modules]] = {
    "gemma3": (
        2_723_312_896,
        (
            ("model.vision_tower", 92_884_224),
            ("model.multi_modal_projector", 1_770_240),
            ("model.language_model", 2_628_658_432),
            ("lm_head", 0),
        ),
    ),
    "llama4": (
        108_225_039_360,
        (
            ("vision_model", 415_856_640),
            ("multi_modal_projector", 39_321_600),
            ("language_model.model", 106_735_375_360),
            ("language_model.lm_head", 1_034_485_760),
        ),
    ),
    "llava": (
        7_062_902_784,
        (
            ("model.vision_tower", 303_507_456),
            ("model.multi_modal_projector", 20_979_712),
            ("model.language_model", 6_607_343_616),
            ("lm_head", 131_072_000),
        ),
    ),
    "mistral3": (
        23_340_272_640,
        (
            ("model.vision_tower", 403_305_472),
            ("model.multi_modal_projector", 35_652_608),
            ("model.language_model", 22_901_314_560),
            ("lm_head", 0),
        ),
    ),
    "qwen2_5_vl": (
        75_789_228_800,
        (
            ("model.visual", 3_083_025_152),
            ("model.language_model", 71_460_495_360),
            ("lm_head", 1_245_708_288),
        ),
    ),
    "qwen2_vl": (
        73_381_962_752,
        (
            ("model.visual", 675_759_104),
            ("model.language_model", 71_460_495_360),
            ("lm_head", 1_245_708_288),
        ),
    ),
    "qwen3_vl": (
        12_616_410_352,
        (
            ("model.visual", 566_949_104),
            ("model.language_model", 11_427_131_392),
            ("lm_head", 622_329_856),
        ),
    ),
}
# Llama 4's text decoder routes its experts (one of 16 per token): the active parameters.
ACTIVE = {"llama4": 17_628_072_960}


def test_every_wrapper_recipe_has_its_figures() -> None:
    assert sorted(DEFAULTS) == list(wrapper_types()) == sorted(DEFAULT_CONFIGS)


@pytest.mark.parametrize("wrapper_type", sorted(DEFAULTS))
def test_the_class_defaults_give_what_transformers_builds(wrapper_type: str) -> None:
    total, modules = DEFAULTS[wrapper_type]
    read = parse_config(DEFAULT_CONFIGS[wrapper_type])
    counted = wrapper_counts(read)
    assert counted is not None
    assert counted.modules == modules
    assert count_parameters(read) == total == sum(count for _, count in modules)
    assert counted.parameters == sum(count for _, count in modules[: len(modules) - 2])
    assert active_parameters(read) == ACTIVE.get(wrapper_type, total)
    assert float32_parameters(read) == counted.float32 == 0


@pytest.mark.parametrize("wrapper_type", sorted(DEFAULTS))
def test_each_wrapper_names_its_default_text_decoder(wrapper_type: str) -> None:
    assert (
        text_model_type(wrapper_type) == DEFAULT_CONFIGS[wrapper_type]["text_config"]["model_type"]
    )


def _llava(**vision: Any) -> dict[str, Any]:
    return {
        "model_type": "llava",
        "torch_dtype": "bfloat16",  # so that `iteragpu model` reaches the count
        "text_config": {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "hidden_size": 256,
        },
        "vision_config": {
            "model_type": "clip_vision_model",
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "hidden_size": 128,
            **vision,
        },
    }


def _qwen(**vision: Any) -> dict[str, Any]:
    return {
        "model_type": "qwen2_vl",
        "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "qwen2_vl_text",
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "hidden_size": 512,
        },
        "vision_config": {"depth": 2, "num_heads": 4, "embed_dim": 128, **vision},
    }


def _without(config: dict[str, Any], key: str) -> dict[str, Any]:
    vision = {k: v for k, v in config["vision_config"].items() if k != key}
    return {**config, "vision_config": vision}


MALFORMED = [  # each config, and the key its one-line refusal names
    pytest.param({**_llava(), "vision_config": [1, 2]}, "vision_config", id="vision-config-a-list"),
    pytest.param(
        {**_llava(), "vision_config": "clip"}, "vision_config", id="vision-config-a-string"
    ),
    pytest.param(
        {**_qwen(), "vision_config": 7}, "vision_config", id="qwen-vision-config-a-number"
    ),
    pytest.param(
        _llava(model_type=["clip_vision_model"]),
        "vision_config.model_type",
        id="vision-model-type-a-list",
    ),
    pytest.param(_llava(hidden_size=-128), "hidden_size", id="negative-vision-width"),
    pytest.param(_llava(num_hidden_layers=-2), "num_hidden_layers", id="negative-vision-layers"),
    pytest.param(_llava(patch_size=0), "patch_size", id="zero-patch-size"),
    pytest.param(
        _llava(intermediate_size=-4), "intermediate_size", id="negative-vision-intermediate"
    ),
    pytest.param(_llava(image_size="336"), "image_size", id="image-size-a-string"),
    pytest.param(_qwen(depth=-1), "depth", id="qwen-negative-depth"),
    pytest.param(_qwen(spatial_merge_size=0), "spatial_merge_size", id="qwen-zero-merge"),
    pytest.param(
        _without(_llava(), "num_attention_heads"), "num_attention_heads", id="no-vision-heads"
    ),
    pytest.param(_llava(num_attention_heads=None), "num_attention_heads", id="null-vision-heads"),
    pytest.param(_without(_qwen(), "num_heads"), "num_heads", id="qwen-no-vision-heads"),
    pytest.param(_without(_llava(), "hidden_size"), "hidden_size", id="no-vision-width"),
    pytest.param(
        _llava(num_attention_heads=3), "num_attention_heads", id="vision-heads-not-dividing-width"
    ),
    pytest.param(
        {**_llava(), "tie_word_embeddings": "yes"}, "tie_word_embeddings", id="tie-not-a-boolean"
    ),
    pytest.param(
        {**DEFAULT_CONFIGS["mistral3"], "torch_dtype": "bfloat16", "spatial_merge_size": -2},
        "spatial_merge_size",
        id="negative-merge-size",
    ),
]


@pytest.mark.parametrize(("raw", "key"), MALFORMED)
def test_a_malformed_vision_config_is_refused_on_one_line(
    raw: dict[str, Any], key: str, tmp_path: Path
) -> None:
    with pytest.raises(ModelInputError) as error:
        count_parameters(parse_config(raw))
    assert "\n" not in str(error.value)
    assert key in str(error.value)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(raw), "utf-8")
    result = CliRunner().invoke(app, ["model", str(folder), "--tokens", "8"], prog_name="iteragpu")
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert key in result.output, result.output
    assert "Traceback" not in result.output


def test_a_missing_vision_key_is_named() -> None:
    with pytest.raises(ModelInputError, match="vision_config: no num_heads"):
        count_parameters(parse_config(_without(_qwen(), "num_heads")))


def test_a_vision_config_may_name_its_sizes_by_the_canonical_keys() -> None:
    # Qwen2VLVisionConfig's attribute_map: num_hidden_layers is depth, num_attention_heads is
    # num_heads.
    own = parse_config(_qwen())
    canonical = parse_config(
        {
            **_qwen(),
            "vision_config": {"num_hidden_layers": 2, "num_attention_heads": 4, "embed_dim": 128},
        }
    )
    assert count_parameters(own) == count_parameters(canonical)


def test_a_tower_or_wrapper_without_a_recipe_is_not_counted() -> None:
    unknown_tower = parse_config(_llava(model_type="no_such_vision_model"))
    assert wrapper_counts(unknown_tower) is None
    text_only = parse_config(
        {**_llava(model_type="no_such_vision_model"), "model_type": "idefics3"}
    )
    assert wrapper_counts(text_only) is None
    assert count_parameters(unknown_tower) == count_parameters(text_only)
    counted = wrapper_counts(parse_config(_llava()))
    assert counted is not None
    assert (
        count_parameters(parse_config(_llava())) == count_parameters(text_only) + counted.parameters
    )


def test_without_a_vision_config_the_class_default_tower_is_built() -> None:
    # LLaVA's own CLIP ViT-L/14-336, not CLIPVisionConfig's class defaults (ViT-B/32).
    config = {key: value for key, value in _llava().items() if key != "vision_config"}
    counted = wrapper_counts(parse_config(config))
    assert counted is not None
    assert counted.modules[0] == ("model.vision_tower", 303_507_456)


def test_each_wrapper_ties_its_head_by_its_own_rule() -> None:
    # LLaVA and Qwen2-VL: the wrapper's key or the text config's (Transformers' BC rule).
    tied_text = _llava()
    tied_text["text_config"] = {**tied_text["text_config"], "tie_word_embeddings": True}
    assert wrapper_counts(parse_config(tied_text)).tied  # type: ignore[union-attr]
    assert not wrapper_counts(parse_config(_llava())).tied  # type: ignore[union-attr]
    # Mistral-3: the wrapper's key, true by default, whatever the text config says.
    mistral3 = {
        "model_type": "mistral3",
        "text_config": {**DEFAULT_CONFIGS["mistral3"]["text_config"], "tie_word_embeddings": False},
    }
    counted = wrapper_counts(parse_config(mistral3))
    assert counted is not None and counted.tied and counted.modules[-1] == ("lm_head", 0)
    # Llama 4: the text config's own key; the wrapper's is not read.
    llama4 = {**DEFAULT_CONFIGS["llama4"], "tie_word_embeddings": True}
    assert not wrapper_counts(parse_config(llama4)).tied  # type: ignore[union-attr]


def test_iteragpu_model_counts_the_tower_and_projector(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    raw = {**DEFAULT_CONFIGS["llava"], "torch_dtype": "bfloat16"}
    (folder / "config.json").write_text(json.dumps(raw), "utf-8")
    result = CliRunner().invoke(
        app, ["model", str(folder), "--tokens", "8", "--json"], prog_name="iteragpu"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["parameters"] == data["active_parameters"] == DEFAULTS["llava"][0]
