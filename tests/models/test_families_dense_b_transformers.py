"""Falcon's other decoders against Transformers (pinned): the class defaults build Falcon-7B's
multi-query decoder only, so tests/models/test_families_transformers.py never sees Falcon-40B's
`new_decoder_architecture` (num_kv_heads groups in the fused projection, two LayerNorms per
layer, keys and values broadcast to every query head before they are cached) nor the RW
decoders (no multi-query, sequential attention and MLP, biases, ALiBi).

Each variant is built on the meta device and compared as the shared proof compares a family
(parameters, active parameters, bytes at bfloat16; the config saved whole and reduced to the
keys the reader needs plus the variant's own), then built tiny on CPU with its cache on: the
cache's tensors, after the prompt and once decoding, and the static cache, must be
`size_model`'s figures layer by layer, and the weights counted from config.json alone the
model's parameters. Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iteragpu.models.config import parse_config
from iteragpu.models.kv import layer_layouts, tokens_held
from iteragpu.models.model import ModelSizing, size_model
from iteragpu.models.parameters import active_parameters, count_parameters, float32_parameters

pytestmark = pytest.mark.transformers

REQUIRED = ("model_type", "num_hidden_layers", "num_attention_heads", "hidden_size")
BATCH = 2
PROMPT = 23

# Falcon decoders the class defaults do not build, by the keys that make them.
VARIANTS: dict[str, dict[str, Any]] = {
    # The class defaults' sizes with Falcon-40B's decoder (num_kv_heads defaults to the heads).
    "new_decoder_architecture": {"new_decoder_architecture": True},
    # Falcon-40B: 128 heads in 8 KV groups.
    "falcon_40b": {
        "new_decoder_architecture": True,
        "hidden_size": 8192,
        "num_attention_heads": 128,
        "num_kv_heads": 8,
        "num_hidden_layers": 60,
    },
    # Falcon2-11B: the new decoder with one LayerNorm for the attention and the MLP, untied.
    "falcon2_11b": {
        "new_decoder_architecture": True,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_kv_heads": 8,
        "num_hidden_layers": 60,
        "num_ln_in_parallel_attn": 1,
        "tie_word_embeddings": False,
    },
    # Falcon-RW-1B: every head a KV head, attention then MLP, biases, ALiBi.
    "falcon_rw_1b": {
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_hidden_layers": 24,
        "vocab_size": 50304,
        "multi_query": False,
        "parallel_attn": False,
        "bias": True,
        "alibi": True,
    },
}
# The same decoders tiny: hidden 64, vocabulary 96, two layers.
TINY = {"hidden_size": 64, "vocab_size": 96, "num_hidden_layers": 2}
TINY_VARIANTS: dict[str, dict[str, Any]] = {
    "new_decoder_architecture": {"new_decoder_architecture": True, "num_attention_heads": 8},
    "grouped": {"new_decoder_architecture": True, "num_attention_heads": 8, "num_kv_heads": 2},
    "one_layernorm": {
        "new_decoder_architecture": True,
        "num_attention_heads": 4,
        "num_kv_heads": 2,
        "num_ln_in_parallel_attn": 1,
        "tie_word_embeddings": False,
    },
    # RW without ALiBi (which holds neither parameters nor cache): Transformers 5.24's ALiBi
    # mask does not fit a static cache longer than the prompt.
    "rw": {"num_attention_heads": 4, "multi_query": False, "parallel_attn": False, "bias": True},
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_falcon_variants_count_what_transformers_builds(
    variant: str, transformers: Any, torch: Any
) -> None:
    overrides = VARIANTS[variant]
    config = transformers.AutoConfig.for_model("falcon", **overrides)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    parameters = {id(p): p for p in model.parameters()}.values()
    built = sum(p.numel() for p in parameters)
    at_bf16 = sum(p.numel() * p.element_size() for p in parameters)
    full = config.to_dict()
    minimal = {key: full[key] for key in (*REQUIRED, *overrides)}
    for raw in (full, minimal):
        read = parse_config(raw)
        assert count_parameters(read) == built, (variant, raw is minimal)
        assert active_parameters(read) == built, variant
        kept = float32_parameters(read)
        assert (built - kept) * 2 + kept * 4 == at_bf16, variant


def _storage(tensor: Any) -> int:
    return int(tensor.untyped_storage().nbytes())


def _tensor_bytes(tensor: Any) -> int:
    return int(tensor.element_size() * tensor.numel())


def _per_layer(sizing: ModelSizing, which: str) -> list[int]:
    kv = sizing.kv
    result = []
    for layout in layer_layouts(sizing.config):
        held = getattr(tokens_held(layout, kv.tokens, kv.cache), which)
        result.append(int(layout.values_per_token * held * kv.bytes_per_value * kv.sequences))
    return result


def _prompt(torch: Any, length: int = PROMPT) -> Any:
    generator = torch.Generator().manual_seed(1)
    return torch.randint(0, TINY["vocab_size"], (BATCH, length), generator=generator)


@pytest.fixture(scope="module", params=sorted(TINY_VARIANTS))
def tiny(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    transformers: Any,
    torch: Any,
) -> tuple[Any, Path]:
    torch.manual_seed(0)
    config = transformers.FalconConfig(**TINY, **TINY_VARIANTS[request.param])
    model = transformers.FalconForCausalLM(config).to(torch.bfloat16).eval()
    model.config.dtype = torch.bfloat16
    folder = tmp_path_factory.mktemp(f"falcon_{request.param}")
    model.save_pretrained(folder)
    return model, folder


def test_tiny_falcon_caches_what_size_model_states(tiny: tuple[Any, Path], torch: Any) -> None:
    model, folder = tiny
    sizing = size_model(folder, tokens=PROMPT, sequences=BATCH)
    with torch.no_grad():
        out = model(input_ids=_prompt(torch), use_cache=True)
    cache = out.cache
    assert type(cache).__name__ == "DynamicCache"
    layers = [(layer.keys, layer.values) for layer in cache.layers]
    # Falcon-40B's decoder caches every query head (its KV groups broadcast), Falcon-7B's one.
    falcon = model.config
    expected_heads = 1 if falcon.multi_query and not falcon.new_decoder_architecture else None
    expected_heads = expected_heads or falcon.num_attention_heads
    assert all(k.shape[1] == v.shape[1] == expected_heads for k, v in layers)
    assert sizing.config.kv_heads == expected_heads
    storage = [_storage(k) + _storage(v) for k, v in layers]
    assert storage == _per_layer(sizing, "peak")
    assert sum(storage) == sizing.kv.kv_cache_bytes
    with torch.no_grad():
        model(input_ids=_prompt(torch, 1), cache=cache, use_cache=True)
    decoding = size_model(folder, tokens=PROMPT + 1, sequences=BATCH)
    after = [_storage(layer.keys) + _storage(layer.values) for layer in cache.layers]
    assert after == _per_layer(decoding, "decoding")


def test_tiny_falcon_static_cache(tiny: tuple[Any, Path], transformers: Any, torch: Any) -> None:
    model, folder = tiny
    maximum = PROMPT + 9
    sizing = size_model(
        folder, tokens=PROMPT, sequences=BATCH, cache="static", static_max_tokens=maximum
    )
    cache = transformers.StaticCache(config=model.config, max_cache_len=maximum)
    with torch.no_grad():
        model(input_ids=_prompt(torch), cache=cache, use_cache=True)
    allocated = [_tensor_bytes(layer.keys) + _tensor_bytes(layer.values) for layer in cache.layers]
    assert allocated == _per_layer(sizing, "peak")


def test_tiny_falcon_weights_from_the_config(tiny: tuple[Any, Path]) -> None:
    model, folder = tiny
    built = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    stored = {t.untyped_storage().data_ptr(): t for t in model.state_dict().values()}
    assert size_model(folder, tokens=PROMPT).weights.parameters == sum(
        t.numel() for t in stored.values()
    )
    from_config = size_model(folder / "config.json", tokens=PROMPT)
    assert from_config.weights.source == "config"
    assert from_config.weights.parameters == built
