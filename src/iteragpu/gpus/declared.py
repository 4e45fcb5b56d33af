"""The catalogue's cards by id, with their declared bytes, read without building the catalogue's
records (`catalog.load_catalog`): what `iteragpu fit --gpu` needs, at the cost of one JSON read,
so that a fit stays within the CLI's start-up budget."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

CATALOG_PATH = Path(__file__).resolve().parent / "gpu_catalog.json"


@cache
def declared_cards() -> tuple[tuple[str, str, int | None], ...]:
    """(id, name, declared bytes or None) of every card, in the catalogue's order."""
    raw = json.loads(CATALOG_PATH.read_text("utf-8"))
    return tuple((card["id"], card["name"], card["declared_memory_bytes"]) for card in raw["cards"])
