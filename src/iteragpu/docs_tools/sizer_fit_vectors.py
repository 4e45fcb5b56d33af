"""Test vectors for the sizer's "solve for" section: `iteragpu.parallel.fit`'s vLLM answers
per config, split and card, which web/sizer/fit.js's `vllmFit` (over split.js's `vllmSplit`)
must match.

Each vector is a config's text, the split and cache (TP, PP, tokens or sequences, KV bytes per
value, reserve), the card's declared bytes and the utilization, and Python's answer: tokens,
sequences, vLLM's blocks, its "GPU KV cache size" tokens and "Maximum concurrency" text, what
limits the answer, and the flags; or the refusal's reason code (for a load that does not fit,
also what the fullest GPU lacks as `iteragpu fit` words it, in GiB rounded up to 0.01, and the
tokens x sequences it tried). `sizer_vectors` adds them to
its output (`model_fits`).
"""

from __future__ import annotations

import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from iteragpu.core.numbers import InputError
from iteragpu.docs_tools.sizer_split_vectors import CONFIGS
from iteragpu.gpus.declared import declared_cards
from iteragpu.models.presets import find_preset
from iteragpu.parallel.fit import FitRequest, fit

PRESETS: Final = ("llama-3.1-8b", "qwen3-8b", "llama-3.1-70b")
# (tp, pp, solve, tokens or sequences, kv bytes per value, utilization)
CASES: Final = (
    (1, 1, "tokens", 1, 2, "1.0"),
    (1, 1, "sequences", 8192, 2, "1.0"),
    (2, 1, "tokens", 4, 1, "0.92"),
    (1, 2, "sequences", 4096, 2, "0.9"),
    (4, 1, "sequences", 32768, 1, "1.0"),
    (1, 1, "sequences", 300000, 2, "1.0"),  # above most models' positions
)
CARDS: Final = ("rtx-4090", "a100-40gb", "h100-80gb")
RESERVE_GIB: Final = Fraction(1, 2)


def _vector(name: str, text: str, card: str, case: tuple[Any, ...]) -> dict[str, Any]:
    tp, pp, solve, amount, per_value, utilization = case
    capacity = next(c[2] for c in declared_cards() if c[0] == card)
    assert capacity is not None
    vector: dict[str, Any] = {
        "name": name,
        "text": text,
        "card": card,
        "options": {
            "tp": tp,
            "pp": pp,
            "solve": solve,
            "tokens": amount if solve == "sequences" else None,
            "sequences": amount if solve == "tokens" else None,
            "kv_bytes_per_value": per_value,
            "reserve_gib": f"{RESERVE_GIB.numerator}/{RESERVE_GIB.denominator}",
            "utilization": utilization,
            "capacity_bytes": capacity,
        },
    }
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "config.json").write_text(text, "utf-8")
        request = FitRequest(
            folder,
            "vllm",
            capacity,
            tokens=vector["options"]["tokens"],
            sequences=vector["options"]["sequences"],
            tp=tp,
            pp=pp,
            gpus=tp * pp,
            kv_dtype="fp8" if per_value == 1 else None,
            dtype="bfloat16",
            reserve_gib=RESERVE_GIB,
            utilization=utilization,
        )
        try:
            answer = fit(request)
        except InputError as refusal:
            refused = {**vector, "reason": refusal.reason}
            if refusal.reason == "fit_does_not_fit":
                # what the fullest GPU lacks, in GiB rounded up to 0.01, and the load tried
                for key in ("lack", "tokens", "sequences", "gpus"):
                    refused[key] = refusal.values[key]
            return refused
    assert answer.blocks is not None and answer.cache_tokens is not None
    assert answer.concurrency is not None
    return {
        **vector,
        "tokens": answer.tokens,
        "sequences": answer.sequences,
        "blocks": answer.blocks[0],
        "cache_tokens": answer.cache_tokens[0],
        "concurrency": answer.concurrency[0],
        "limited_by": answer.limited_by,
        "positions": answer.positions,
        "flags": [list(flag) for flag in answer.flags if flag[0] != "--dtype"],
    }


def fit_vectors() -> list[dict[str, Any]]:
    """Every config under every case, on every card of CARDS."""
    texts = {
        name: json.dumps({**config, "max_position_embeddings": 4096 * (i + 1)})
        for i, (name, config) in enumerate(CONFIGS.items())
    }
    for name in PRESETS:
        preset = find_preset(name)
        assert preset is not None, name
        texts[name] = preset.config_path.read_text("utf-8")
    return [
        _vector(name, text, card, case)
        for name, text in texts.items()
        for card in CARDS
        for case in CASES
    ]
