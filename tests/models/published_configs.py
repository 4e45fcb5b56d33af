"""The sizes that matter here from published config.json files, shared by the model tests."""

from __future__ import annotations

from typing import Any

# Mistral's config is the sizer's too: one copy, where the sizer's vectors read it.
from iteragpu.docs_tools.sizer_config_vectors import MISTRAL_7B_V01
from iteragpu.examples import GEMMA_2_9B_CONFIG

__all__ = ["GEMMA_2_9B", "LLAMA_3_8B", "MISTRAL_7B_V01"]

# The keys of the published config.json files (sizes that matter here).
LLAMA_3_8B: dict[str, Any] = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
# Gemma-2-9B's published config is the KV-cache guide's (iteragpu.examples), saved in float32.
GEMMA_2_9B: dict[str, Any] = {**GEMMA_2_9B_CONFIG, "torch_dtype": "float32"}
