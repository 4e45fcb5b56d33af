"""The identifiers a reader needs to meet as they are, even in a sentence of their language: the
keys and values of the files they hold (a model's `config.json`, the lab's result), the values
they type (`--mla-layout mla_latent`, `--kv-dtype fp8_e4m3`), the lab's phase names and the
PyTorch settings the pages name. Any other snake_case word in reader text is the code's own
word left in place of the reader's (`weights_gib (hasil)`, `KV 구성 per_head`)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
# The files whose keys and identifier values the reader holds or reads.
_FILES = (
    "snippets/models/*/config.json",
    "src/iteragpu/models/presets/*.json",
    "src/iteragpu/models/families/*.json",
    "src/iteragpu/lab/result.schema.json",
    "src/iteragpu/web/results-example.*.json",
)
# Names the pages and messages give the reader to type or look up that the files above may not
# hold: the allocator settings of PyTorch the pages name, the values of `--mla-layout`, and the
# keys of the model files the reader has.
_NAMED = frozenset(
    {"roundup_power2_divisions", "expandable_segments", "max_split_size_mb"}
    | {"garbage_collection_threshold", "mla_latent", "mla_per_head"}
    # The keys of a safetensors header and index, a config's nested and per-layer keys.
    | {"data_offsets", "weight_map", "text_config", "layer_types"}
    | {"full_attention", "sliding_attention"}
)


def _walk(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            found.update(_IDENTIFIER.findall(str(key)))
            _walk(value, found)
    elif isinstance(node, list):
        for value in node:
            _walk(value, found)
    elif isinstance(node, str) and _IDENTIFIER.fullmatch(node):
        found.add(node)


@cache
def reader_identifiers() -> frozenset[str]:
    from iteragpu.lab.mesure_memoire import PHASES
    from iteragpu.models.config import FAMILIES
    from iteragpu.models.dtypes import ALIASES, DTYPE_BITS

    found: set[str] = set()
    for pattern in _FILES:
        for path in sorted(ROOT.glob(pattern)):
            _walk(json.loads(path.read_text("utf-8")), found)
    for family in FAMILIES.values():
        found.update(family.defaults)
    found.update(PHASES, DTYPE_BITS, ALIASES, ALIASES.values())
    return frozenset(found | _NAMED)
