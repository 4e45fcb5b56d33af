"""The published model configs appear three times: the folders the pages' `iteragpu model`
sessions read (snippets/models/), the KV-cache guide's registry examples, and the model tests'
fixtures. The folders are the source: the other two must say what they say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from models.published_configs import GEMMA_2_9B, LLAMA_3_8B

from iteragpu import examples

SNIPPET_MODELS = Path(__file__).parents[1] / "snippets" / "models"


def _published(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((SNIPPET_MODELS / name / "config.json").read_text())
    return config


@pytest.mark.parametrize(
    ("name", "fixture"), [("llama-3-8b", LLAMA_3_8B), ("gemma-2-9b", GEMMA_2_9B)]
)
def test_the_test_fixtures_are_the_published_configs(name: str, fixture: dict[str, Any]) -> None:
    assert fixture == _published(name)


def test_the_guides_gemma_config_is_the_published_one() -> None:
    published = _published("gemma-2-9b")
    assert {key: published[key] for key in examples.GEMMA_2_9B_CONFIG} == examples.GEMMA_2_9B_CONFIG


def test_the_guides_llama_attention_is_the_published_one() -> None:
    published = _published("llama-3-8b")
    assert {
        "layers": published["num_hidden_layers"],
        "query_heads": published["num_attention_heads"],
        "kv_heads": published["num_key_value_heads"],
        "head_dim": published["hidden_size"] // published["num_attention_heads"],
    } == examples.LLAMA_3_8B_ATTENTION
