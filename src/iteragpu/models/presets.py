"""Popular models by name: published `config.json` files kept verbatim in the package.

`iteragpu model NAME` and the sizer's preset list read the same files. Each preset is the
file as its model's Hugging Face repository publishes it, byte for byte (`git_blob` is the git
hash of the kept file, which is also the Hub's id for a small file, so a reader can check it),
with where it was read (`read_at`), how it is known to be verbatim (`verbatim`), the Hub
revision where one is known (`hf_revision`, else null), and the parameter count as the model
card states it (`card_parameters`, with `card_url` and `card_read_at`, where the card's text
was read). The tests check the count read from each config against that figure and against
Transformers building the model on the meta device.

Models readers ask about whose published config could not be read from a public source are
left out, each with the reason (`left_out` in `presets/index.json`); nothing is retyped.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from iteragpu.core.records import Record

PRESETS_DIR = Path(__file__).with_name("presets")
INDEX = PRESETS_DIR / "index.json"


class Preset(Record):
    name: str
    hf_repo: str
    hf_revision: str | None
    git_blob: str
    read_at: str
    verbatim: str
    card_parameters: str
    card_url: str
    card_read_at: str

    @property
    def config_path(self) -> Path:
        return PRESETS_DIR / f"{self.name}.json"


@cache
def _index() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(INDEX.read_text("utf-8"))
    return data


def presets() -> tuple[Preset, ...]:
    """Every preset, in the index's order."""
    return tuple(Preset(**entry) for entry in _index()["presets"])


def left_out() -> dict[str, str]:
    """The models readers ask about that are not presets, each with the reason."""
    reasons: dict[str, str] = _index()["left_out"]
    return reasons


def preset_names() -> tuple[str, ...]:
    return tuple(p.name for p in presets())


def find_preset(name: str) -> Preset | None:
    """The preset called `name` (case-insensitive), else None."""
    wanted = name.strip().lower()
    return next((p for p in presets() if p.name == wanted), None)
