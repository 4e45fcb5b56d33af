"""KV cache of attention layers: 2 (K and V) x layers x KV heads x head dim x tokens kept x bytes
per value x sequences.

Uses the model's KV heads (not its query heads) and its declared head dimension (not hidden size
divided by heads: some models differ). A sliding window keeps min(tokens, window); a static cache
allocates its maximum length up front; a quantized cache may store a fractional byte per value.
"""

from __future__ import annotations

from fractions import Fraction

from iteragpu.core.records import Record
from iteragpu.core.units import gib

K_AND_V = 2

# Input bounds of the CLI and the sizer, far above any model and context of today, so that a
# cache size always describes something: a value takes at most 8 bytes (64 bits).
MAX_LAYERS = 10**4
MAX_KV_HEADS = 10**4
MAX_HEAD_DIM = 10**5
MAX_TOKENS = 10**9  # also bounds --window and --static-max-tokens
MAX_SEQUENCES = 10**6
MAX_BYTES_PER_VALUE = 8


class KVCacheSpec(Record):
    layers: int
    kv_heads: int
    head_dim: int
    tokens: int
    bytes_per_value: Fraction
    sequences: int = 1
    window: int | None = None
    static_max_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("layers", "kv_heads", "head_dim", "tokens", "sequences"):
            _require_positive_int(name, getattr(self, name))
        for name in ("window", "static_max_tokens"):
            value = getattr(self, name)
            if value is not None:
                _require_positive_int(name, value)
        if self.bytes_per_value <= 0:
            raise ValueError(f"bytes per value must be positive, got {self.bytes_per_value}")
        if self.static_max_tokens is not None and self.static_max_tokens < self.tokens:
            raise ValueError(
                f"a static cache of {self.static_max_tokens} tokens "
                f"cannot hold {self.tokens} tokens"
            )

    @property
    def tokens_kept(self) -> int:
        """Tokens whose K and V are held per sequence."""
        kept = self.tokens if self.static_max_tokens is None else self.static_max_tokens
        return kept if self.window is None else min(kept, self.window)

    @property
    def kv_cache_bytes(self) -> Fraction:
        return (
            K_AND_V
            * self.layers
            * self.kv_heads
            * self.head_dim
            * self.tokens_kept
            * Fraction(self.bytes_per_value)
            * self.sequences
        )

    @property
    def kv_cache_gib(self) -> Fraction:
        return gib(self.kv_cache_bytes)


def _require_positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name.replace('_', ' ')} must be a positive whole number, got {value!r}")


def kv_cache_bytes(
    layers: int,
    kv_heads: int,
    head_dim: int,
    tokens: int,
    bytes_per_value: int | Fraction,
    sequences: int = 1,
    window: int | None = None,
) -> Fraction:
    """Exact KV cache bytes of a uniform dense cache.

    >>> kv_cache_bytes(32, 8, 128, 8192, 2)
    Fraction(1073741824, 1)
    """
    spec = KVCacheSpec(
        layers, kv_heads, head_dim, tokens, Fraction(bytes_per_value), sequences, window
    )
    return spec.kv_cache_bytes


def cached_values_bytes(
    values_per_token: int, tokens: int, bytes_per_value: int | Fraction, sequences: int = 1
) -> Fraction:
    """Exact bytes of one cache layer holding `values_per_token` values for each of `tokens`
    tokens of `sequences` sequences, whatever its layout: keys and values per KV head
    (2 x KV heads x head dim values), or a compressed latent (MLA: latent rank + rope dims).

    >>> 32 * cached_values_bytes(K_AND_V * 8 * 128, 8192, 2) == kv_cache_bytes(32, 8, 128, 8192, 2)
    True
    """
    for name, value in (("values per token", values_per_token), ("sequences", sequences)):
        _require_positive_int(name, value)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise ValueError(f"tokens must be a whole number, got {tokens!r}")
    if Fraction(bytes_per_value) <= 0:
        raise ValueError(f"bytes per value must be positive, got {bytes_per_value}")
    return values_per_token * tokens * Fraction(bytes_per_value) * sequences
