/*
 * The rules a config.json's values are read by: the families described by hand, the
 * checked reader of counts, layer kinds and MLA. Mirrors iteragpu.models.config (its _Reader,
 * families and layer kinds).
 */

import { get, has, record } from "./objects.js";
import { refuse, truthy } from "./json_reader.js";
import { evaluateRecipe } from "./expressions.js";
import { recipeLayerKinds, recipeOf, recipeWindow, section } from "./recipes.js";

// ------------------------------------------------------------------------------------------
// A model's config.json, read in the page (never sent anywhere), as iteragpu.models.config
// and iteragpu.models.parameters read it for `iteragpu model CONFIG`: each failure is a
// reason code (the Python error's `reason`) and the key it names, which the page words.
// ------------------------------------------------------------------------------------------

// Published configs are a few KiB; a pasted text beyond this is refused before it is read.
export const CONFIG_MAX_CHARS = 1 << 20;
export const FULL = "full_attention";
export const SLIDING = "sliding_attention";
// Transformers 5.24's other cache layer types (iteragpu.models.config), where a family's
// recipe describes them: chunked attention (a sliding cache whose window is the chunk), layers
// that keep a state and no KV, both in one layer, and a layer that holds nothing.
const CHUNKED = "chunked_attention";
const LINEAR = "linear_attention";
const CONV = "conv";
const HYBRID = "hybrid";
const HYBRID_SLIDING = "hybrid_sliding";
const DUMMY = "dummy";
const SLIDING_KINDS = [SLIDING, HYBRID_SLIDING];
const STATE_ONLY_KINDS = [LINEAR, CONV, DUMMY];
// The old names Transformers renames in a config's layer_types (config.LEGACY_KINDS).
const LEGACY_KINDS = record({ mamba: LINEAR, attention: FULL });
export const LAYOUT_PER_HEAD = "per_head";
export const MLA_LATENT = "mla_latent";
export const MLA_PER_HEAD = "mla_per_head";
// A config's counts above this describe no model (iteragpu.models.config._Reader).
const CONFIG_MAX_VALUE = 1e12;
// The most decoder layers a config may declare (iteragpu.models.config.MAX_LAYERS).
export const CONFIG_MAX_LAYERS = 100000n;

// Transformers 5.24's defaults per family, for the keys a saved config may omit.
const LLAMA = {
  num_key_value_heads: null,
  head_dim: null,
  tie_word_embeddings: false,
  attention_bias: false,
  mlp_bias: false,
  sliding_window: null,
};
const QWEN2 = record(LLAMA, { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28 });
const GEMMA = record(LLAMA, { num_key_value_heads: 16, head_dim: 256, tie_word_embeddings: true });
const DEEPSEEK = record(LLAMA, {
  first_k_dense_replace: 0,
  moe_layer_freq: 1,
  kv_lora_rank: 512,
  q_lora_rank: 1536,
  qk_nope_head_dim: 128,
  qk_rope_head_dim: 64,
  v_head_dim: 128,
  n_routed_experts: 64,
  n_shared_experts: 2,
  moe_intermediate_size: 1407,
});

export function family(defaults, normsPerLayer, flags) {
  flags = flags || {};
  return {
    defaults: record(defaults),
    norms: BigInt(normsPerLayer || 2),
    qkNorm: !!flags.qkNorm,
    qkvBias: !!flags.qkvBias,
    mla: !!flags.mla,
  };
}

export const FAMILIES = record({
  llama: family(LLAMA),
  mistral: family(record(LLAMA, { sliding_window: 4096 })),
  qwen2: family(QWEN2, 2, { qkvBias: true }),
  qwen3: family(record(QWEN2, { num_key_value_heads: 32, head_dim: 128 }), 2, { qkNorm: true }),
  gemma: family(GEMMA),
  gemma2: family(record(GEMMA, { num_key_value_heads: 8, sliding_window: 4096 }), 4),
  gemma3_text: family(
    record(GEMMA, { num_key_value_heads: 4, sliding_window: 4096 }), 4, { qkNorm: true }
  ),
  deepseek_v2: family(DEEPSEEK, 2, { mla: true }),
  deepseek_v3: family(
    record(DEEPSEEK, {
      num_key_value_heads: 128,
      first_k_dense_replace: 3,
      n_routed_experts: 256,
      n_shared_experts: 1,
      moe_intermediate_size: 2048,
    }),
    2,
    { mla: true }
  ),
});
export const TEXT_MODEL_TYPES = record({
  gemma3: "gemma3_text", llava: "llama", mistral3: "mistral", llama4: "llama4_text",
});
// Families whose layers keep a recurrent state, not a KV cache: refused, never guessed,
// unless a recipe of the page's data describes their states.
const STATE_FAMILIES = [
  "mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "falcon_h1", "bamba",
  "nemotron_h", "granitemoehybrid", "recurrent_gemma", "rwkv", "qwen3_next", "qwen3_5",
  "qwen3_5_moe", "kimi_linear", "minimax", "lfm2", "plamo2", "xlstm",
];
const STATE_KEYS = ["ssm_cfg", "mamba_d_state", "layers_block_type", "linear_attn_config"];
export const DTYPE_BITS = record({
  float64: 64, float32: 32, float16: 16, bfloat16: 16, float8_e4m3fn: 8, float8_e5m2: 8,
  int8: 8, int4: 4,
});
export const DTYPE_ALIASES = record({
  fp64: "float64", fp32: "float32", fp16: "float16", half: "float16", bf16: "bfloat16",
  fp8: "float8_e4m3fn", fp8_e4m3: "float8_e4m3fn", fp8_e5m2: "float8_e5m2",
});

export function Reader(raw) {
  this.raw = raw;
}

Reader.prototype.positive = function (key) {
  var value = get(this.raw, key);
  if (value === null) refuse("missing_key", key);
  return this.positiveValue(key, value);
};

Reader.prototype.optionalPositive = function (key) {
  var value = get(this.raw, key);
  return value === null ? null : this.positiveValue(key, value);
};

Reader.prototype.nonNegative = function (key) {
  return this.nonNegativeValue(key, get(this.raw, key));
};

Reader.prototype.positiveValue = function (key, value) {
  var number = this.nonNegativeValue(key, value);
  if (number === 0n) refuse("bad_key", key);
  return number;
};

Reader.prototype.nonNegativeValue = function (key, value) {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) refuse("bad_key", key);
  if (value > CONFIG_MAX_VALUE) refuse("bad_key", key);
  return BigInt(value);
};

Reader.prototype.boolean = function (key) {
  return this.booleanValue(key, get(this.raw, key, false));
};

Reader.prototype.booleanValue = function (key, value) {
  if (value === null) return false;
  if (typeof value !== "boolean") refuse("bad_key", key);
  return value;
};

export function refuseState(config, families) {
  var modelType = get(config, "model_type");
  if (typeof modelType === "string" && !has(FAMILIES, modelType) &&
    recipeOf(families, modelType) !== null) {
    return; // its recipe describes its states
  }
  var keys = STATE_KEYS.filter(function (key) {
    return has(config, key);
  });
  var stateFamily = typeof modelType === "string" && STATE_FAMILIES.indexOf(modelType) >= 0;
  if (stateFamily || keys.length > 0) refuse("recurrent_state", stateFamily ? modelType : keys[0]);
}

/** The kinds whose cache the reader models for the family (config._allowed_kinds). */
function allowedKinds(recipe) {
  var allowed = [FULL, SLIDING];
  if (recipe === null) return allowed;
  allowed = allowed.concat(Object.keys(section(recipe, "states")), [DUMMY]);
  if (get(recipe, "chunk") !== null) allowed.push(CHUNKED);
  return allowed;
}

function refuseUnknownKinds(kinds, allowed) {
  var seen = record();
  kinds.forEach(function (k) {
    seen[k] = true;
  });
  var unknown = Object.keys(seen).filter(function (k) {
    return allowed.indexOf(k) < 0;
  }).sort();
  if (unknown.length > 0) refuse("unknown_layer_kind", unknown[0]);
}

/** A positive whole value of a recipe's expression, as _Reader.positive_value reads it. */
function positiveRecipeValue(read, key, value) {
  if (typeof value !== "bigint") return read.positiveValue(key, value); // refused
  if (value <= 0n || value > 1000000000000n) refuse("bad_key", key);
  return value;
}

/**
 * Each layer's kind, the sliding window and the chunked layers' window
 * (iteragpu.models.config._layer_kinds): `kinds`, one per layer; `sliding`, the layers the
 * page's windowed field counts (sliding, hybrid sliding and chunked); `window`, the sliding
 * window, else the chunk. `recipe` is the family's for a family described only as data.
 */
export function layerKinds(read, modelType, layers, recipe) {
  var qwen = modelType === "qwen2" || modelType === "qwen3";
  var window = recipe !== null && get(recipe, "window") !== null
    ? recipeWindow(recipe, read)
    : read.optionalPositive("sliding_window");
  if (qwen && !read.boolean("use_sliding_window")) window = null;
  var allowed = allowedKinds(recipe);
  var declared = get(read.raw, "layer_types");
  var kinds = [];
  var i;
  if (declared !== null) {
    var names = Array.isArray(declared) && declared.every(function (k) {
      return typeof k === "string";
    });
    if (!names || BigInt(declared.length) !== layers) refuse("bad_key", "layer_types");
    kinds = declared.map(function (k) {
      return has(LEGACY_KINDS, k) ? LEGACY_KINDS[k] : k;
    });
    refuseUnknownKinds(kinds, allowed);
  } else if (modelType === "gemma2") {
    for (i = 0n; i < layers; i++) kinds.push((i + 1n) % 2n ? SLIDING : FULL);
  } else if (modelType === "gemma3_text") {
    var pattern = read.positiveValue(
      "sliding_window_pattern",
      has(read.raw, "sliding_window_pattern")
        ? read.raw.sliding_window_pattern
        : get(read.raw, "_sliding_window_pattern", 6)
    );
    for (i = 0n; i < layers; i++) kinds.push((i + 1n) % pattern ? SLIDING : FULL);
  } else if (qwen) {
    var first = read.nonNegative("max_window_layers");
    for (i = 0n; i < layers; i++) kinds.push(window !== null && i >= first ? SLIDING : FULL);
  } else if (recipe !== null) {
    kinds = recipeLayerKinds(recipe, read.raw, layers);
    refuseUnknownKinds(kinds, allowed);
  } else {
    for (i = 0n; i < layers; i++) kinds.push(window !== null ? SLIDING : FULL);
  }
  var shared = recipe !== null ? get(recipe, "shared_kv") : null;
  if (shared !== null) {
    // A layer that reads another layer's KV holds none, whatever layer_types says.
    kinds = kinds.map(function (k, index) {
      return truthy(evaluateRecipe(shared, read.raw, record({ layer: BigInt(index) })))
        ? DUMMY : k;
    });
  }
  var counted = record();
  kinds.forEach(function (k) {
    counted[k] = (counted[k] || 0n) + 1n;
  });
  var slides = SLIDING_KINDS.some(function (k) {
    return has(counted, k);
  });
  if (slides && window === null) refuse("no_window");
  var chunk = null;
  if (has(counted, CHUNKED)) {
    var rule = recipe !== null ? get(recipe, "chunk") : null;
    var value = evaluateRecipe(rule, read.raw, null);
    if (value === null) refuse("no_window");
    chunk = positiveRecipeValue(read, "attention_chunk_size", value);
  }
  window = slides ? window : null;
  // The page models one window: a config whose sliding and chunked layers keep different
  // windows is refused rather than sized with one of them (no family has both).
  if (window !== null && chunk !== null && window !== chunk) refuse("two_windows");
  var windowed = (counted[SLIDING] || 0n) + (counted[HYBRID_SLIDING] || 0n) +
    (counted[CHUNKED] || 0n);
  var stateOnly = STATE_ONLY_KINDS.reduce(function (sum, k) {
    return sum + (counted[k] || 0n);
  }, 0n);
  return {
    sliding: windowed,
    kvLayers: layers - stateOnly,
    window: window,
    chunk: chunk,
    firstKind: declared !== null ? kinds[0] : null,
    kinds: kinds,
    counted: counted,
  };
}

export function readMla(read, text, byHand) {
  if (!byHand) {
    // A recipe family's latent attention: only the cache's sizes are read (its recipe counts
    // the parameters, the experts included).
    return {
      kvLoraRank: read.positive("kv_lora_rank"),
      qLoraRank: read.optionalPositive("q_lora_rank"),
      nope: read.positive("qk_nope_head_dim"),
      rope: read.positive("qk_rope_head_dim"),
      valueDim: read.positive("v_head_dim"),
      routed: 0n,
      shared: 0n,
      moeWidth: 0n,
      firstDense: 0n,
      frequency: 1n,
      mtpLayers: 0n,
    };
  }
  var mtp = has(text, "num_nextn_predict_layers")
    ? text.num_nextn_predict_layers
    : get(text, "num_mtp_layers", 0);
  return {
    kvLoraRank: read.positive("kv_lora_rank"),
    qLoraRank: read.optionalPositive("q_lora_rank"),
    nope: read.positive("qk_nope_head_dim"),
    rope: read.positive("qk_rope_head_dim"),
    valueDim: read.positive("v_head_dim"),
    routed: read.positive("n_routed_experts"),
    shared: read.nonNegative("n_shared_experts"),
    moeWidth: read.positive("moe_intermediate_size"),
    firstDense: read.nonNegative("first_k_dense_replace"),
    frequency: read.positive("moe_layer_freq"),
    mtpLayers: read.nonNegativeValue("num_nextn_predict_layers", truthy(mtp) ? mtp : 0),
  };
}
