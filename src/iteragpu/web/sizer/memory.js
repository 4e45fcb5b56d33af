/*
 * Weights and KV cache bytes, and the byte units. Mirrors iteragpu.core.weights and
 * iteragpu.core.kv_cache.
 */

import { add, div, mul, rational } from "./rational.js";
import { FULL, SLIDING } from "./config_reader.js";

export const BYTES_PER_GIB = rational(1n << 30n);
export const BYTES_PER_GB = rational(10n ** 9n);
export const K_AND_V = 2n;
// Below this many bits per value a format is a quantized one (iteragpu.core.weights).
export const QUANTIZED_BELOW_BITS = rational(16n);

// ------------------------------------------------------------------------------------------
// Arithmetic
// ------------------------------------------------------------------------------------------

/** Dense weights in bytes: parameters x bits / 8. */
export function weightsBytes(parameters, bits) {
  return mul(rational(parameters), div(bits, rational(8n)));
}

/** Bytes in `gib` GiB. */
export function gibToBytes(gib) {
  return mul(gib, BYTES_PER_GIB);
}

export function gib(bytes) {
  return div(bytes, BYTES_PER_GIB);
}

/** KV cache bytes of a uniform dense cache; `window` null keeps every token. */
export function kvCacheBytes(spec) {
  var kept = spec.window === null || spec.window === undefined
    ? spec.tokens
    : spec.tokens < spec.window ? spec.tokens : spec.window;
  var count = K_AND_V * spec.layers * spec.kvHeads * spec.headDim * kept * spec.sequences;
  return mul(rational(count), spec.bytesPerValue);
}

/**
 * The KV cache per layer kind, as iteragpu.models.kv sizes it: full layers hold every token;
 * windowed ones hold min(tokens, window) in a static cache, and every prompt token at a
 * dynamic cache's peak (Transformers keeps the prompt's storage until the first decoding
 * step). `values` are the parsed fields: `kv_values` (null: 2 x kv_heads x head_dim),
 * `window` and `windowed_layers` (null: every layer when a window is given).
 */
export function kvByKind(values, cache) {
  var perLayer = values.kv_values !== null && values.kv_values !== undefined
    ? values.kv_values
    : K_AND_V * values.kv_heads * values.head_dim;
  var window = values.window === undefined ? null : values.window;
  var windowed = window === null ? 0n
    : values.windowed_layers === null || values.windowed_layers === undefined
      ? values.layers
      : values.windowed_layers;
  var tokens = values.tokens;
  var kinds = [
    { kind: FULL, count: values.layers - windowed, window: null, held: tokens },
    {
      kind: SLIDING,
      count: windowed,
      window: window,
      held: cache === "static" && window !== null && window < tokens ? window : tokens,
    },
  ];
  var perValue = values.bytes_per_value;
  var groups = [];
  var total = rational(0n);
  kinds.forEach(function (k) {
    if (k.count === 0n) return;
    var bytes = mul(rational(k.count * perLayer * k.held * values.sequences), perValue);
    total = add(total, bytes);
    groups.push({
      kind: k.kind, count: k.count, window: k.window, tokensHeld: k.held, bytes: bytes,
    });
  });
  return {
    groups: groups,
    bytes: total,
    perToken: mul(rational(values.layers * perLayer), perValue),
  };
}
