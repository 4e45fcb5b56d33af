"""The KV cache per layer: each layer's layout, and the tokens it holds under a cache's rules.

Layouts (values cached per token, per layer):
- `per_head`: keys and values of every KV head (GQA/MQA use `num_key_value_heads`, not the
  query heads), `2 x kv_heads x head_dim`;
- `mla_latent`: DeepSeek's multi-head latent attention caches the compressed latent and the
  shared rotary key, `kv_lora_rank + qk_rope_head_dim`, as Transformers 5.24 and serving engines
  with an MLA kernel (vLLM, SGLang) do;
- `mla_per_head`: the same layers with keys and values expanded per head,
  `heads x (qk_nope_head_dim + qk_rope_head_dim) + heads x v_head_dim`, as attention consumes
  them and as an engine without an MLA kernel caches them;
- `mla_latent_kv`: the same layers as llama.cpp caches them (a GGUF file with DeepSeek's MLA
  sizes, iteragpu.models.gguf): the latent and the rotary key as one key head,
  `kv_lora_rank + qk_rope_head_dim`, and the latent again as its value, `kv_lora_rank`;
- `none`: a layer that keeps no KV (a Mamba, linear-attention or short-convolution layer, whose
  state iteragpu.models.state sizes; a layer that reads another layer's KV).

Chunked attention (Llama 4) is cached as a sliding layer whose window is the chunk, as
Transformers 5.24 does (DynamicSlidingWindowLayer for both); a hybrid layer's KV is a full or a
sliding layer's.

Caches (T = tokens per sequence, W = a sliding layer's window, M = the static length, M >= T):
- `static` (Transformers' StaticCache): allocated up front; a full layer holds M tokens, a
  sliding layer min(M, W).
- `dynamic` (Transformers' default DynamicCache): a full layer holds T. A sliding layer keeps a
  view of its last W - 1 tokens, but right after a prompt that view still holds the storage of
  the whole prompt: T tokens, until the first decoding step replaces it with min(T, W) tokens of
  storage. The figure for fit is that peak (the whole T as one prompt); the decoding figure is
  given beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Final, Literal

from iteragpu.core.kv_cache import MAX_TOKENS, cached_values_bytes
from iteragpu.core.numbers import limit_text
from iteragpu.core.records import Record
from iteragpu.models.config import CHUNKED, SLIDING_KINDS, STATE_ONLY_KINDS, ModelConfig
from iteragpu.models.errors import ModelInputError

PER_HEAD: Final = "per_head"
MLA_LATENT: Final = "mla_latent"
MLA_PER_HEAD: Final = "mla_per_head"
MLA_LATENT_KV: Final = "mla_latent_kv"
NO_KV: Final = "none"
MlaLayout = Literal["mla_latent", "mla_per_head"]
CacheKind = Literal["dynamic", "static"]
CACHE_KINDS: Final = ("dynamic", "static")


class LayerLayout(Record):
    """What one decoder layer caches per token."""

    kind: str  # a cache layer type: FULL, SLIDING, CHUNKED, HYBRID... (config.py)
    window: int | None
    layout: str  # PER_HEAD, MLA_LATENT, MLA_PER_HEAD or MLA_LATENT_KV
    heads: int  # KV heads (per_head), query heads (mla_per_head), 1 (mla_latent, _kv)
    key_dim: int  # per head: key values; mla_latent: kv_lora_rank
    value_dim: int  # per head: value values; mla_latent: qk_rope_head_dim

    @property
    def values_per_token(self) -> int:
        return self.heads * (self.key_dim + self.value_dim)


def layer_layouts(config: ModelConfig, mla_layout: MlaLayout = "mla_latent") -> list[LayerLayout]:
    """One layout per decoder layer, in order (layers of one kind share their layout: a
    layout depends on nothing else, and a config may declare 100,000 layers)."""
    made: dict[str, LayerLayout] = {}
    layouts = []
    for kind in config.layer_kinds:
        layout = made.get(kind)
        if layout is None:
            layout = made[kind] = _layout(config, kind, mla_layout)
        layouts.append(layout)
    return layouts


def _layout(config: ModelConfig, kind: str, mla_layout: MlaLayout) -> LayerLayout:
    if kind in STATE_ONLY_KINDS:
        return LayerLayout(kind, None, NO_KV, 0, 0, 0)
    window = (
        config.sliding_window
        if kind in SLIDING_KINDS
        else config.chunk_window
        if kind == CHUNKED
        else None
    )
    runtime = config.runtime
    if runtime is not None and runtime.kv is not None:
        # The runtime that reads the file caches its own layout (llama.cpp's MLA): the
        # file fixes it, whatever --mla-layout says.
        layout, heads, key, value = runtime.kv
        return LayerLayout(kind, window, layout, heads, key, value)
    mla = config.mla
    if mla is None:
        return LayerLayout(kind, window, PER_HEAD, config.kv_heads, *[config.head_dim] * 2)
    if mla_layout == MLA_LATENT:
        return LayerLayout(kind, window, MLA_LATENT, 1, mla.kv_lora_rank, mla.qk_rope_head_dim)
    key = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    return LayerLayout(kind, window, MLA_PER_HEAD, config.heads, key, mla.v_head_dim)


class Cache(Record):
    """A cache's kind and, for a static one, its length (None: the asked tokens)."""

    kind: CacheKind = "dynamic"
    static_max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in CACHE_KINDS:
            raise ModelInputError(
                "unknown cache {kind!r} (dynamic or static)", "unknown_cache", kind=str(self.kind)
            )
        if self.static_max_tokens is not None and self.kind != "static":
            raise ModelInputError(
                "--static-max-tokens applies to a static cache (--cache static)", "static_only"
            )

    def length(self, tokens: int) -> int:
        """Tokens a full layer holds per sequence."""
        if self.kind == "dynamic" or self.static_max_tokens is None:
            return tokens
        if self.static_max_tokens < tokens:
            raise ModelInputError(
                "a static cache of {maximum} tokens cannot hold {tokens} tokens",
                "static_too_short",
                maximum=str(self.static_max_tokens),
                tokens=str(tokens),
            )
        return self.static_max_tokens


class TokensHeld(Record):
    """Tokens of K/V storage one layer holds per sequence, at the peak and while decoding, and
    the length of its cache tensors right after the prompt (what `keys.shape[-2]` shows)."""

    peak: int
    decoding: int
    in_tensors_after_prompt: int


def tokens_held(layout: LayerLayout, tokens: int, cache: Cache) -> TokensHeld:
    """The tokens `layout` holds for a context of `tokens` under `cache`'s rules."""
    if not 0 < tokens <= MAX_TOKENS:
        raise ModelInputError(
            "tokens must be between 1 and {maximum}, got {tokens}",
            "bad_tokens",
            maximum=limit_text(MAX_TOKENS),
            tokens=str(tokens),
        )
    length = cache.length(tokens)
    if layout.layout == NO_KV:
        return TokensHeld(0, 0, 0)
    if layout.window is None:
        return TokensHeld(length, length, length)
    window = layout.window
    assert window is not None  # a sliding layer always has its window (config.py)
    if cache.kind == "static":
        held = min(length, window)
        return TokensHeld(held, held, held)
    # DynamicSlidingWindowLayer keeps `full[:, :, -W + 1:]`, a view of the prompt's storage.
    return TokensHeld(tokens, min(tokens, window), min(tokens, window - 1))


class LayerGroup(Record):
    """Layers of one kind and layout: how many, and their cache."""

    layout: LayerLayout
    count: int
    held: TokensHeld
    bytes_per_value: Fraction
    sequences: int

    @property
    def kv_bytes_per_token(self) -> Fraction:
        """All `count` layers, one sequence, one token, before any window."""
        if self.layout.values_per_token == 0:
            return Fraction(0)  # a layer that keeps no KV
        return self.count * cached_values_bytes(
            self.layout.values_per_token, 1, self.bytes_per_value
        )

    def _bytes(self, tokens: int) -> Fraction:
        if tokens == 0 or self.layout.values_per_token == 0:
            return Fraction(0)
        return self.count * cached_values_bytes(
            self.layout.values_per_token, tokens, self.bytes_per_value, self.sequences
        )

    @property
    def kv_cache_bytes(self) -> Fraction:
        return self._bytes(self.held.peak)

    @property
    def kv_cache_decoding_bytes(self) -> Fraction:
        return self._bytes(self.held.decoding)


class KVEstimate(Record):
    """The cache of every layer for `tokens` tokens of `sequences` sequences."""

    groups: tuple[LayerGroup, ...]
    tokens: int
    sequences: int
    bytes_per_value: Fraction
    cache: Cache

    @property
    def kv_bytes_per_token(self) -> Fraction:
        return sum((g.kv_bytes_per_token for g in self.groups), Fraction(0))

    @property
    def kv_cache_bytes(self) -> Fraction:
        """The figure for fit: a static cache's allocation, a dynamic cache's prompt peak."""
        return sum((g.kv_cache_bytes for g in self.groups), Fraction(0))

    @property
    def kv_cache_decoding_bytes(self) -> Fraction:
        """What the cache holds while decoding at `tokens` (equal to the peak when static)."""
        return sum((g.kv_cache_decoding_bytes for g in self.groups), Fraction(0))


def estimate_kv(
    layouts: Sequence[LayerLayout],
    tokens: int,
    bytes_per_value: Fraction,
    sequences: int = 1,
    cache: Cache | None = None,
) -> KVEstimate:
    """Group identical layers (in order of first appearance) and size their caches."""
    cache = cache or Cache()
    counts: dict[LayerLayout, int] = {}
    for layout in layouts:
        counts[layout] = counts.get(layout, 0) + 1
    groups = tuple(
        LayerGroup(layout, count, tokens_held(layout, tokens, cache), bytes_per_value, sequences)
        for layout, count in counts.items()
    )
    return KVEstimate(groups, tokens, sequences, bytes_per_value, cache)
