"""The proof: `size_model` against the real thing, Transformers (pinned) on torch's CPU build.

Each family is built from a config object (no download) with reduced hidden sizes and layer
counts but its real layer kinds, KV heads and head sizes (windows shortened so that a short
prompt crosses them), saved with `save_pretrained` (config.json and model.safetensors), then run
with the cache on. The bytes `size_model` states are compared with the cache's real tensors, per
layer, under the semantics it states:
- dynamic cache, right after the prompt: the storage each layer holds (`untyped_storage`), which
  is `tokens_held`; the cache tensors' own bytes (`element_size * numel`), which are
  `tokens_in_tensors_after_prompt` (a sliding layer's W - 1 view);
- dynamic cache, once decoding: the storage, which is `tokens_held_decoding`;
- static cache: the tensors' bytes, which are `tokens_held`.
Weights: the safetensors bytes and the stored values equal the model's state dict, and the
count from config.json alone equals `model.parameters()`.

Run by `nox -s models` (marker `transformers`).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from iteragpu.models.kv import layer_layouts, tokens_held
from iteragpu.models.model import ModelSizing, payload, size_model

pytestmark = pytest.mark.transformers

# The version whose cache semantics size_model states (noxfile.py pins the same).
TRANSFORMERS_VERSION = "5.24.0"
TORCH_VERSION = "2.13.0"
BATCH = 2
PROMPT = 23  # longer than every shortened window below
SMALL = {"vocab_size": 96, "intermediate_size": 48}


def _llama(transformers: ModuleType) -> Any:
    # Llama-3-8B's attention: 32 query heads, 8 KV heads, head_dim 128 (hidden reduced).
    config = transformers.LlamaConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        **SMALL,
    )
    return transformers.LlamaForCausalLM(config)


def _mistral(transformers: ModuleType) -> Any:
    # Mistral-7B-v0.1: 32 heads, 8 KV heads, head_dim 128, every layer sliding (4096 -> 16).
    config = transformers.MistralConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        sliding_window=16,
        **SMALL,
    )
    return transformers.MistralForCausalLM(config)


def _qwen2(transformers: ModuleType) -> Any:
    # Qwen2-7B: 28 heads, 4 KV heads, head_dim 128; sliding from layer max_window_layers on.
    config = transformers.Qwen2Config(
        hidden_size=56,
        num_hidden_layers=4,
        num_attention_heads=28,
        num_key_value_heads=4,
        head_dim=128,
        use_sliding_window=True,
        sliding_window=12,
        max_window_layers=2,
        **SMALL,
    )
    return transformers.Qwen2ForCausalLM(config)


def _gemma2(transformers: ModuleType) -> Any:
    # Gemma-2-9B: 16 heads, 8 KV heads, head_dim 256, sliding and global layers alternating.
    config = transformers.Gemma2Config(
        hidden_size=64,
        num_hidden_layers=4,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=256,
        sliding_window=10,
        **SMALL,
    )
    return transformers.Gemma2ForCausalLM(config)


def _gemma3_text() -> dict[str, Any]:
    # Gemma-3-4B's decoder: 8 heads, 4 KV heads, head_dim 256, five sliding layers per global.
    return {
        "hidden_size": 64,
        "num_hidden_layers": 7,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "sliding_window": 10,
        **SMALL,
    }


def _gemma3(transformers: ModuleType) -> Any:
    return transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(**_gemma3_text()))


def _gemma3_multimodal(transformers: ModuleType) -> Any:
    vision = transformers.SiglipVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=16,
    )
    config = transformers.Gemma3Config(
        text_config=_gemma3_text(), vision_config=vision.to_dict(), mm_tokens_per_image=4
    )
    return transformers.Gemma3ForConditionalGeneration(config)


def _deepseek_v2(transformers: ModuleType) -> Any:
    # DeepSeek-V2-Lite's MLA: 16 heads, no q LoRA, kv_lora_rank 512, nope 128, rope 64, v 128.
    config = transformers.DeepseekV2Config(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=16,
        num_key_value_heads=16,
        q_lora_rank=None,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        n_routed_experts=4,
        n_shared_experts=2,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        first_k_dense_replace=1,
        **SMALL,
    )
    return transformers.DeepseekV2ForCausalLM(config)


def _deepseek_v3(transformers: ModuleType) -> Any:
    # DeepSeek-V3's MLA: 128 heads, kv_lora_rank 512, nope 128, rope 64, v 128 (q LoRA reduced).
    config = transformers.DeepseekV3Config(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=128,
        num_key_value_heads=128,
        q_lora_rank=32,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        n_routed_experts=8,
        n_shared_experts=1,
        num_experts_per_tok=2,
        n_group=2,
        topk_group=1,
        moe_intermediate_size=16,
        first_k_dense_replace=1,
        **SMALL,
    )
    return transformers.DeepseekV3ForCausalLM(config)


# Families described as data (iteragpu.models.recipe): each built small from its config class's
# defaults, the hidden and MLP sizes, vocabulary, layers and experts reduced, the attention
# (heads, KV heads, head_dim) and the layer pattern its own; tests/models/tiny/<type>.json
# holds a family's own reductions where the generic ones do not fit it.
TINY_DIR = Path(__file__).with_name("tiny")
_EXPERT_COUNTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_PER_TOKEN = ("num_experts_per_tok", "moe_k")


def _tiny_config(transformers: ModuleType, model_type: str) -> Any:
    default = transformers.AutoConfig.for_model(model_type).to_dict()
    small: dict[str, Any] = {"hidden_size": 64, "vocab_size": 96}
    for key, value in default.items():
        if key.endswith("intermediate_size") and isinstance(value, int):
            small[key] = 48 if key == "intermediate_size" else 16
        elif key in _EXPERT_COUNTS and isinstance(value, int):
            small[key] = min(value, 4)
        elif key in _PER_TOKEN and isinstance(value, int):
            small[key] = min(value, 2)
        elif key == "sliding_window" and isinstance(value, int):
            small[key] = 16
    layers_key = transformers.AutoConfig.for_model(model_type).attribute_map.get(
        "num_hidden_layers", "num_hidden_layers"
    )  # GPT-2 calls it n_layer
    small["num_hidden_layers"] = min(default[layers_key], 4)
    override = TINY_DIR / f"{model_type}.json"
    if override.is_file():
        small.update(json.loads(override.read_text("utf-8")))
    return transformers.AutoConfig.for_model(model_type, **small)


def _tiny(model_type: str) -> Any:
    def build(transformers: ModuleType) -> Any:
        config = _tiny_config(transformers, model_type)
        from test_families_transformers import WRAPPED

        wrapper = WRAPPED.get(model_type)
        if wrapper is None:
            return transformers.AutoModelForCausalLM.from_config(config)
        # A decoder with no causal-LM class of its own (Qwen2-VL's): built in its wrapper, with
        # a tiny vision tower (tiny/wrappers/<wrapper>.json); the cache is the decoder's.
        vision = json.loads((TINY_DIR / "wrappers" / f"{wrapper}.json").read_text("utf-8"))
        outer = transformers.AutoConfig.for_model(
            wrapper, text_config=config.to_dict(), vision_config=vision
        )
        return transformers.AutoModelForImageTextToText.from_config(outer)

    return build


def _recipe_families() -> dict[str, Any]:
    from iteragpu.models.recipe import recipe_types

    built_by_hand = {"llama"}
    return {f"{t}_recipe": _tiny(t) for t in recipe_types() if t not in built_by_hand}


FAMILIES = {
    **_recipe_families(),
    "llama_gqa": _llama,
    "mistral_sliding": _mistral,
    "qwen2_mixed": _qwen2,
    "gemma2_alternating": _gemma2,
    "gemma3_alternating": _gemma3,
    "gemma3_multimodal_text_config": _gemma3_multimodal,
    "deepseek_v2_mla": _deepseek_v2,
    "deepseek_v3_mla": _deepseek_v3,
}


@pytest.fixture(scope="module")
def transformers() -> ModuleType:
    return pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def torch() -> ModuleType:
    return pytest.importorskip("torch")


@pytest.fixture(
    scope="module",
    # One xdist group per family: its four tests share one tiny model, built and saved once.
    params=[pytest.param(n, marks=pytest.mark.xdist_group(f"tiny-{n}")) for n in sorted(FAMILIES)],
)
def saved(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    transformers: ModuleType,
    torch: ModuleType,
) -> Any:
    """(model in bfloat16, its folder with config.json and model.safetensors)."""
    return _build_and_save(request.param, transformers, torch, tmp_path_factory)


def _build_and_save(
    name: str, transformers: ModuleType, torch: ModuleType, folders: pytest.TempPathFactory
) -> tuple[Any, Path]:
    torch.manual_seed(0)
    model = FAMILIES[name](transformers).to(torch.bfloat16).eval()
    model.config.dtype = torch.bfloat16
    folder = folders.mktemp(name)
    model.save_pretrained(folder)
    return model, folder


def _text_config(model: Any) -> Any:
    return model.config.get_text_config(decoder=True)


def _prompt(torch: ModuleType, model: Any, length: int = PROMPT) -> Any:
    generator = torch.Generator().manual_seed(1)
    return torch.randint(0, _text_config(model).vocab_size, (BATCH, length), generator=generator)


def _storage(tensor: Any) -> int:
    return int(tensor.untyped_storage().nbytes())


def _tensor_bytes(tensor: Any) -> int:
    return int(tensor.element_size() * tensor.numel())


def _per_layer(sizing: ModelSizing, which: str) -> list[int]:
    """size_model's bytes per layer: `which` is peak, decoding or in_tensors_after_prompt."""
    kv = sizing.kv
    result = []
    for layout in layer_layouts(sizing.config):
        held = getattr(tokens_held(layout, kv.tokens, kv.cache), which)
        result.append(int(layout.values_per_token * held * kv.bytes_per_value * kv.sequences))
    return result


def _layer_tensors(cache: Any) -> list[tuple[Any, Any]]:
    """Each attention layer's keys and values (a layer that keeps only a state has none)."""
    return [(layer.keys, layer.values) for layer in cache.layers if _holds_kv(layer)]


def _holds_kv(layer: Any) -> bool:
    return getattr(layer, "keys", None) is not None


def _kv(cache: Any, measure: Any) -> list[int]:
    """Per decoder layer, the KV's bytes by `measure` (0 for a layer that holds no KV)."""
    return [
        measure(layer.keys) + measure(layer.values) if _holds_kv(layer) else 0
        for layer in cache.layers
    ]


def _states(cache: Any) -> list[int]:
    """Per decoder layer, the bytes of the conv and recurrent states it keeps (Mamba, linear
    attention, short convolutions: Transformers' LinearAttentionLayer), its storage."""
    held = []
    for layer in cache.layers:
        tensors = [
            *getattr(layer, "conv_states", {}).values(),
            *getattr(layer, "recurrent_states", {}).values(),
        ]
        held.append(sum(_storage(t) for t in tensors if t is not None))
    return held


def _state_per_layer(sizing: ModelSizing) -> list[int]:
    assert all(b.denominator == 1 for b in sizing.state.per_layer)
    return [int(b) for b in sizing.state.per_layer]


def test_the_pinned_versions_run(transformers: ModuleType, torch: ModuleType) -> None:
    assert transformers.__version__ == TRANSFORMERS_VERSION
    assert torch.__version__.split("+")[0] == TORCH_VERSION


def test_dynamic_cache_after_the_prompt_and_while_decoding(saved: Any, torch: ModuleType) -> None:
    model, folder = saved
    sizing = size_model(folder, tokens=PROMPT, sequences=BATCH)
    assert sizing.kv.bytes_per_value == 2  # the config's bfloat16
    with torch.no_grad():
        out = model(input_ids=_prompt(torch, model), use_cache=True)
    cache = out.cache
    assert type(cache).__name__ == "DynamicCache"
    assert len(cache.layers) == sizing.config.layers
    storage = _kv(cache, _storage)
    assert storage == _per_layer(sizing, "peak")
    assert _kv(cache, _tensor_bytes) == _per_layer(sizing, "in_tensors_after_prompt")
    assert sum(storage) == sizing.kv.kv_cache_bytes == payload(sizing)["kv_cache_bytes"]
    states = _states(cache)
    assert states == _state_per_layer(sizing)
    assert sum(states) == sizing.state.state_bytes == payload(sizing)["state_bytes"]

    with torch.no_grad():
        model(input_ids=_prompt(torch, model, 1), cache=cache, use_cache=True)
    decoding = size_model(folder, tokens=PROMPT + 1, sequences=BATCH)
    after = _kv(cache, _storage)
    assert after == _per_layer(decoding, "decoding")
    assert sum(after) == decoding.kv.kv_cache_decoding_bytes
    assert _states(cache) == _state_per_layer(decoding)  # constant in tokens


def test_static_cache_allocation(saved: Any, transformers: ModuleType, torch: ModuleType) -> None:
    model, folder = saved
    maximum = PROMPT + 9
    sizing = size_model(
        folder, tokens=PROMPT, sequences=BATCH, cache="static", static_max_tokens=maximum
    )
    cache = transformers.StaticCache(config=model.config, max_cache_len=maximum)
    with torch.no_grad():
        model(input_ids=_prompt(torch, model), cache=cache, use_cache=True)
    allocated = _kv(cache, _tensor_bytes)
    assert allocated == _per_layer(sizing, "peak")
    assert sum(allocated) == sizing.kv.kv_cache_bytes
    assert _states(cache) == _state_per_layer(sizing)


def test_generate_leaves_the_decoding_figure(saved: Any, torch: ModuleType) -> None:
    model, folder = saved
    new_tokens = 3
    with torch.no_grad():
        out = model.generate(
            input_ids=_prompt(torch, model),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            return_dict_in_generate=True,
            pad_token_id=0,
        )
    cached = PROMPT + new_tokens - 1  # the last generated token is never fed back
    if any(_holds_kv(layer) for layer in out.cache.layers):
        # (A cache of states only has no sequence length: Transformers raises.)
        assert out.cache.get_seq_length() == cached
    sizing = size_model(folder, tokens=cached, sequences=BATCH)
    assert _kv(out.cache, _storage) == _per_layer(sizing, "decoding")
    assert _states(out.cache) == _state_per_layer(sizing)


def test_weights_from_safetensors_and_from_the_config(saved: Any, torch: ModuleType) -> None:
    model, folder = saved
    sizing = size_model(folder, tokens=PROMPT)
    stored = {t.untyped_storage().data_ptr(): t for t in model.state_dict().values()}
    assert sizing.weights.source == "safetensors"
    assert sizing.weights.byte_count == sum(_tensor_bytes(t) for t in stored.values())
    assert sizing.weights.parameters == sum(t.numel() for t in stored.values())
    assert sizing.weights.inventory is not None
    if all(t.dtype == torch.bfloat16 for t in stored.values()):
        [group] = sizing.weights.inventory.groups
        assert (group.format, group.dtype) == ("float", "BF16")

    from_config = size_model(folder / "config.json", tokens=PROMPT)
    decoder = _decoder_parameters(model)
    assert from_config.weights.source == "config"
    assert from_config.weights.parameters == decoder
    # At the config's bfloat16, as Transformers loads the checkpoint: the modules it keeps in
    # float32 (DeepSeek's and GLM-4-MoE's routers) weigh 4 bytes each.
    loaded = type(model).from_pretrained(folder, dtype=torch.bfloat16)
    assert from_config.weights.byte_count == _decoder_parameters(loaded, bytes_=True)
    assert json.loads(json.dumps(payload(from_config)))["parameters"] == decoder


def _decoder_parameters(model: Any, bytes_: bool = False) -> int:
    """Parameters of the whole model, each shared tensor once (their bytes with `bytes_`): a
    multimodal wrapper's vision tower and projector too, which their recipes count
    (iteragpu.models.towers)."""
    unique = {id(p): p for p in model.parameters()}
    if bytes_:
        return sum(p.numel() * p.element_size() for p in unique.values())
    return sum(p.numel() for p in unique.values())


@pytest.mark.parametrize("name", ["deepseek_v2_mla", "deepseek_v3_mla"])
def test_mla_per_head_layout_is_what_attention_consumes(
    name: str, transformers: ModuleType, torch: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> None:
    model, folder = _build_and_save(name, transformers, torch, tmp_path_factory)
    attention = model.model.layers[0].self_attn
    seen: list[int] = []
    expand = attention.expand_kv

    def recording(kv_nope: Any, k_rot: Any) -> Any:
        keys, values = expand(kv_nope, k_rot)
        seen.append(_tensor_bytes(keys) + _tensor_bytes(values))
        return keys, values

    attention.expand_kv = recording
    try:
        with torch.no_grad():
            out = model(input_ids=_prompt(torch, model), use_cache=True)
    finally:
        del attention.expand_kv
    latent = size_model(folder, tokens=PROMPT, sequences=BATCH)
    per_head = size_model(folder, tokens=PROMPT, sequences=BATCH, mla_layout="mla_per_head")
    layers = len(model.model.layers)
    assert seen == [per_head.kv.kv_cache_bytes / layers]
    assert latent.mla_alternative is not None
    assert latent.mla_alternative.kv_cache_bytes == per_head.kv.kv_cache_bytes
    # Transformers 5.24 caches the compressed latent: kv_lora_rank + qk_rope_head_dim.
    [(keys, values), *_] = _layer_tensors(out.cache)
    assert keys.shape[-1] + values.shape[-1] == 512 + 64
    assert payload(latent)["layers"][0]["layout"] == "mla_latent"


def test_cache_rules_match_the_semantics_stated(
    transformers: ModuleType, torch: ModuleType
) -> None:
    """The statement behind the figures, on Transformers' own layer classes."""
    from transformers.cache_utils import DynamicSlidingWindowLayer

    assert transformers.__version__ == TRANSFORMERS_VERSION
    layer = DynamicSlidingWindowLayer(sliding_window=8)
    prompt = torch.zeros(1, 1, 20, 4)
    layer.update(prompt, prompt)
    assert layer.keys.shape[-2] == 7 and _storage(layer.keys) == _tensor_bytes(prompt)
    layer.update(prompt[:, :, :1], prompt[:, :, :1])
    assert layer.keys.shape[-2] == 7 and _storage(layer.keys) == 8 * 4 * 4
