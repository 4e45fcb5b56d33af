"""Test vectors for the sizer's split over several GPUs: `iteragpu.parallel`'s vLLM plans per
config and option, which web/sizer/split.js's `vllmSplit` must match rank by rank.

Each vector is a config's text, the split's options (TP, PP, EP, tokens, sequences, bits, KV
bytes per value, reserve) and, per rank, its weights, the part other ranks hold too, its KV
bytes per token and cache, and its total (exact fractions as text), with the rank that fills
first; or the refusal's reason code. `sizer_vectors` adds them to its output (`model_splits`).

The configs: the published ones of `iteragpu model`'s presets (Llama-3.1-8B and -70B, Qwen2.5-7B,
Qwen3-8B), and small ones of each family the vLLM rules model (dense, mixtures of experts with
and without a shared expert, DeepSeek's latent attention), uneven sizes included, some split
in ways vLLM refuses.
"""

from __future__ import annotations

import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from iteragpu.core.numbers import InputError
from iteragpu.models.presets import find_preset
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitRequest

SMALL: Final = {"hidden_size": 64, "num_attention_heads": 8, "dtype": "bfloat16"}
CONFIGS: Final[dict[str, dict[str, Any]]] = {
    "llama-small": {
        "model_type": "llama",
        **SMALL,
        "vocab_size": 250,
        "intermediate_size": 96,
        "num_hidden_layers": 5,
        "num_key_value_heads": 2,
        "tie_word_embeddings": True,
        "attention_bias": True,
    },
    "qwen2-small": {
        "model_type": "qwen2",
        **SMALL,
        "vocab_size": 32001,
        "intermediate_size": 128,
        "num_hidden_layers": 7,
        "num_key_value_heads": 4,
        "tie_word_embeddings": False,
    },
    "qwen3-moe-small": {
        "model_type": "qwen3_moe",
        **SMALL,
        "vocab_size": 256,
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "num_experts": 6,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 3,
        "num_key_value_heads": 4,
        "head_dim": 16,
    },
    "qwen2-moe-small": {
        "model_type": "qwen2_moe",
        **SMALL,
        "vocab_size": 256,
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 64,
        "num_experts": 10,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 2,
        "num_key_value_heads": 8,
    },
    "mixtral-small": {
        "model_type": "mixtral",
        **SMALL,
        "vocab_size": 256,
        "intermediate_size": 64,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
    },
    "deepseek-v3-small": {
        "model_type": "deepseek_v3",
        **SMALL,
        "vocab_size": 300,
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "n_shared_experts": 1,
        "first_k_dense_replace": 1,
        "num_hidden_layers": 3,
        "num_key_value_heads": 8,
        "q_lora_rank": 32,
        "kv_lora_rank": 16,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "topk_method": "noaux_tc",
    },
    "llama-24-heads": {
        "model_type": "llama",
        "hidden_size": 192,
        "num_attention_heads": 24,
        "num_key_value_heads": 8,
        "dtype": "bfloat16",
        "vocab_size": 1000,
        "intermediate_size": 300,
        "num_hidden_layers": 4,
    },
    "gemma2-sliding": {
        "model_type": "gemma2",
        **SMALL,
        "vocab_size": 256,
        "intermediate_size": 96,
        "num_hidden_layers": 2,
        "num_key_value_heads": 4,
        "head_dim": 8,
    },
}
PRESETS: Final = ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "qwen3-8b")
# (tp, pp, ep) of each config; refusals included where vLLM refuses.
SPLITS: Final = (
    (1, 1, False),
    (2, 1, False),
    (4, 1, False),
    (8, 1, False),
    (3, 1, False),
    (16, 1, False),
    (1, 2, False),
    (1, 3, False),
    (2, 2, False),
    (2, 1, True),
    (4, 1, True),
    (1, 1, True),
    (6, 1, False),
    (12, 1, False),
)
TOKENS: Final = 1000
SEQUENCES: Final = 3
RESERVE_GIB: Final = Fraction(1, 2)


def _text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _vector(name: str, text: str, tp: int, pp: int, ep: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "config.json").write_text(text, "utf-8")
        request = SplitRequest(
            folder,
            TOKENS,
            SEQUENCES,
            runtime="vllm",
            tp=tp,
            pp=pp,
            ep=ep,
            reserve_gib=RESERVE_GIB,
        )
        vector: dict[str, Any] = {
            "name": name,
            "text": text,
            "options": {
                "tp": tp,
                "pp": pp,
                "ep": ep,
                "tokens": TOKENS,
                "sequences": SEQUENCES,
                "reserve_gib": _text(RESERVE_GIB),
            },
        }
        try:
            plan = plan_split(request)
        except InputError as refusal:
            return {**vector, "reason": refusal.reason}
    return {
        **vector,
        "element_bytes": "2",
        "kv_bytes_per_value": _text(plan.kv_bytes_per_value),
        "first_to_fill": plan.first_to_fill.rank,
        "ranks": [
            {
                "rank": r.rank,
                "stage": r.pp_stage,
                "layers": list(r.layers),
                "weights": _text(r.weights_bytes),
                "replicated": _text(r.weights_replicated_bytes),
                "kv_per_token": _text(r.kv_bytes_per_token),
                "kv_tokens": r.kv_tokens,
                "kv": _text(r.kv_cache_bytes),
                "total": _text(r.total_bytes),
            }
            for r in plan.ranks
        ],
    }


def split_vectors() -> list[dict[str, Any]]:
    """Every config under every split of SPLITS."""
    texts = {name: json.dumps(config) for name, config in CONFIGS.items()}
    for name in PRESETS:
        preset = find_preset(name)
        assert preset is not None, name
        texts[name] = preset.config_path.read_text("utf-8")
    found = []
    for name, text in texts.items():
        for tp, pp, ep in SPLITS:
            found.append(_vector(name, text, tp, pp, ep))
    return found
