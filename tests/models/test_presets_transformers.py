"""The presets' parameter counts against the real thing: Transformers (pinned) building each
published config on the meta device (no weights allocated, nothing downloaded).

Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

import json

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.parameters import count_parameters
from iteragpu.models.presets import presets

pytestmark = pytest.mark.transformers


@pytest.mark.parametrize("preset", presets(), ids=lambda p: p.name)
def test_each_presets_count_is_what_transformers_builds(preset) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    raw = json.loads(preset.config_path.read_text("utf-8"))
    config = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    # parameters() yields a tied embedding once, as the checkpoint stores it.
    built = sum(p.numel() for p in model.parameters())
    assert count_parameters(parse_config(raw)) == built, preset.name
