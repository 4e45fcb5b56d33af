/*
 * A pasted config.json read into a model: the decoder's values, its parameters, its KV cache
 * values per token (readConfig). Mirrors iteragpu.models.config and iteragpu.models.parameters.
 */

import { rational } from "./rational.js";
import { STRIP } from "./numbers.js";
import { K_AND_V } from "./memory.js";
import { exactDecimal } from "./format.js";
import { get, has, record } from "./objects.js";
import { ConfigFailure, isObject, readJson, refuse, truthy } from "./json_reader.js";
import {
  CONFIG_MAX_CHARS, CONFIG_MAX_LAYERS, DTYPE_ALIASES, DTYPE_BITS, FAMILIES, family, layerKinds,
  LAYOUT_PER_HEAD, MLA_LATENT, MLA_PER_HEAD, Reader, readMla, refuseState, TEXT_MODEL_TYPES,
} from "./config_reader.js";
import {
  aliased, checkRequire, recipeAttention, recipeOf, recipeScope, section, stateBytes,
} from "./recipes.js";
import { recipeCounts, wrapperCounts, wrapperTextType } from "./towers.js";

function parseDecoder(text, outer, outerType, families) {
  var modelType = get(text, "model_type");
  if (typeof modelType !== "string") refuse("no_model_type");
  refuseState(text, families);
  var recipe = recipeOf(families, modelType);
  var byHand = has(FAMILIES, modelType);
  if (!byHand && recipe === null) refuse("unknown_family", modelType);
  var fam = byHand
    ? FAMILIES[modelType]
    : family(section(recipe, "defaults"), 2, { mla: truthy(get(recipe, "mla")) });
  if (byHand && recipe !== null) {
    // Its recipe's defaults are its config class's (counting reads them too); the layer rules
    // stay the hand ones (config.family_of).
    fam = record(fam, { defaults: record(fam.defaults, section(recipe, "defaults")) });
  }
  var read = new Reader(record(fam.defaults, byHand ? text : aliased(recipe, text)));
  var layers = read.positive("num_hidden_layers");
  if (layers > CONFIG_MAX_LAYERS) refuse("bad_key", "num_hidden_layers");
  var hidden = read.positive("hidden_size");
  var heads;
  var kvHeads;
  var headDim;
  if (!byHand && truthy(get(recipe, "no_attention"))) {
    heads = kvHeads = headDim = 0n; // Mamba: no layer attends, none holds a KV
  } else {
    heads = read.positive("num_attention_heads");
    if (!byHand && truthy(get(recipe, "mla"))) {
      // Latent attention caches no KV head: its key-value heads are unused.
      kvHeads = heads;
      headDim = read.optionalPositive("head_dim") || hidden / heads;
    } else {
      var attention = byHand ? {} : recipeAttention(recipe, read.raw);
      kvHeads = attention.kv_heads || read.optionalPositive("num_key_value_heads") || heads;
      if (heads % kvHeads !== 0n) refuse("bad_key", "num_key_value_heads");
      headDim = attention.head_dim || read.optionalPositive("head_dim") || hidden / heads;
      if (headDim === 0n) refuse("bad_key", "hidden_size");
    }
  }
  var kinds = layerKinds(read, modelType, layers, byHand ? null : recipe);
  if (!byHand && truthy(get(recipe, "require"))) {
    checkRequire(recipe, recipeScope(recipe, read.raw));
  }
  var tie = has(outer, "tie_word_embeddings")
    ? outer.tie_word_embeddings
    : get(read.raw, "tie_word_embeddings");
  var dtype = null;
  [text, outer].some(function (c) {
    return ["dtype", "torch_dtype"].some(function (key) {
      if (truthy(get(c, key))) dtype = get(c, key);
      return dtype !== null;
    });
  });
  var quantization = truthy(get(outer, "quantization_config"))
    ? get(outer, "quantization_config")
    : get(text, "quantization_config");
  var method = isObject(quantization) ? get(quantization, "quant_method") : null;
  return {
    modelType: modelType,
    outerModelType: outerType,
    family: fam,
    layers: layers,
    hidden: hidden,
    heads: heads,
    kvHeads: kvHeads,
    headDim: headDim,
    slidingLayers: kinds.sliding,
    kvLayers: kinds.kvLayers,
    window: kinds.window,
    chunkWindow: kinds.chunk,
    firstKind: kinds.firstKind,
    layerKinds: kinds.kinds,
    kindCounts: kinds.counted,
    vocab: read.optionalPositive("vocab_size"),
    // One per layer (Gemma-3n) for a family whose recipe reads it so (`per_layer`).
    intermediate: !byHand && Array.isArray(get(read.raw, "intermediate_size"))
      ? null
      : read.optionalPositive("intermediate_size"),
    tied: read.booleanValue("tie_word_embeddings", tie),
    attentionBias: read.boolean("attention_bias"),
    mlpBias: read.boolean("mlp_bias"),
    dtype: typeof dtype === "string" ? dtype : null,
    quantizationMethod: typeof method === "string" ? method : null,
    mla: fam.mla ? readMla(read, text, byHand) : null,
    // The config's values over the family's defaults, and the recipe that counts them (a
    // hand-described family's too, when it has one: count_parameters prefers it).
    values: record(read.raw, { tie_word_embeddings: read.booleanValue("tie_word_embeddings", tie) }),
    recipe: recipe,
    // A multimodal wrapper's whole config (its vision_config, projector keys), else null.
    outerValues: outerType !== null ? outer : null,
  };
}

/**
 * The decoder a config's object describes (iteragpu.models.config.parse_config); `multimodal`
 * holds the wrappers' recipes (`wrappers`), whose `text` names the decoder a text_config
 * without a model_type builds, or a wrapper whose text keys sit at the top (Qwen2-VL's
 * published configs).
 */
export function parseConfig(raw, families, multimodal) {
  if (!isObject(raw)) refuse("config_not_object");
  var outerType = get(raw, "model_type");
  var text = get(raw, "text_config");
  if (text === null) {
    var inner = wrapperTextType(multimodal, outerType);
    if (inner !== null) {
      // A wrapper whose text keys sit at the top (Qwen2-VL's published configs).
      return parseDecoder(record(raw, { model_type: inner }), raw, outerType, families);
    }
    return parseDecoder(raw, raw, null, families);
  }
  if (!isObject(text)) refuse("bad_key", "text_config");
  var textType = get(text, "model_type");
  if (textType === null && typeof outerType === "string") {
    textType = get(TEXT_MODEL_TYPES, outerType);
    if (!truthy(textType)) textType = wrapperTextType(multimodal, outerType);
  }
  refuseState(raw, families);
  var outer = outerType !== null ? String(outerType) : "multimodal";
  return parseDecoder(record(text, { model_type: textType }), raw, outer, families);
}

function countParameters(c) {
  if (c.recipe !== null) return recipeCounts(c).parameters;
  if (c.vocab === null) refuse("missing_key", "vocab_size");
  var hidden = c.hidden;
  var embeddings = c.vocab * hidden;
  var head = c.tied ? 0n : c.vocab * hidden;
  var norms = c.family.norms * hidden;
  var layers;
  if (c.mla !== null) {
    var m = c.mla;
    var moe = 0n; // layers from first_k_dense_replace on, every moe_layer_freq-th
    if (m.firstDense < c.layers) {
      moe = (c.layers - 1n) / m.frequency - (m.firstDense + m.frequency - 1n) / m.frequency + 1n;
    }
    var dense = c.layers - moe;
    if (dense > 0n && c.intermediate === null) refuse("missing_key", "intermediate_size");
    var experts = (m.routed * 3n * hidden * m.moeWidth) + m.routed * hidden +
      3n * hidden * m.moeWidth * m.shared;
    layers = c.layers * (mlaAttention(c, m) + norms) + moe * experts +
      (dense > 0n ? dense * mlp(c, c.intermediate) : 0n);
  } else {
    if (c.intermediate === null) refuse("missing_key", "intermediate_size");
    layers = c.layers * (attention(c) + mlp(c, c.intermediate) + norms);
  }
  return embeddings + layers + hidden + head;
}

function attention(c) {
  var q = c.heads * c.headDim;
  var kv = c.kvHeads * c.headDim;
  var total = c.hidden * (q + 2n * kv) + q * c.hidden;
  if (c.family.qkvBias || c.attentionBias) total += q + 2n * kv;
  if (c.attentionBias) total += c.hidden; // o_proj's bias
  if (c.family.qkNorm) total += 2n * c.headDim;
  return total;
}

function mlp(c, intermediate) {
  var biases = c.mlpBias ? 2n * intermediate + c.hidden : 0n;
  return 3n * c.hidden * intermediate + biases; // gate, up and down projections
}

function mlaAttention(c, m) {
  var hidden = c.hidden;
  var heads = c.heads;
  var bias = c.attentionBias;
  var qHead = m.nope + m.rope;
  var query;
  if (m.qLoraRank === null) {
    query = hidden * heads * qHead;
  } else {
    var rank = m.qLoraRank;
    query = hidden * rank + (bias ? rank : 0n) + rank + rank * heads * qHead;
  }
  var latent = m.kvLoraRank + m.rope;
  var kv = hidden * latent + (bias ? latent : 0n) + m.kvLoraRank +
    m.kvLoraRank * heads * (m.nope + m.valueDim);
  return query + kv + heads * m.valueDim * hidden + (bias ? hidden : 0n);
}

/** Bits per value of a dtype name (iteragpu.models.dtypes.dtype_bits), or null. */
function dtypeBits(name) {
  var key = name.replace(STRIP, "").toLowerCase();
  if (key.indexOf("torch.") === 0) key = key.slice("torch.".length);
  if (has(DTYPE_ALIASES, key)) key = DTYPE_ALIASES[key];
  return has(DTYPE_BITS, key) ? BigInt(DTYPE_BITS[key]) : null;
}

/** Values one layer caches per token (iteragpu.models.kv.layer_layouts). */
function valuesPerToken(c, layout) {
  if (c.mla === null) return K_AND_V * c.kvHeads * c.headDim;
  if (layout === MLA_PER_HEAD) return c.heads * (c.mla.nope + c.mla.rope + c.mla.valueDim);
  return c.mla.kvLoraRank + c.mla.rope;
}

/**
 * Read a pasted config.json: {ok: true, config, parameters, query, notes} where `query` holds
 * the sizer's fields it fills (bits and bytes per value only when it states a dtype), or
 * {ok: false, reason, key}. `mlaLayout` is mla_latent (default) or mla_per_head; `families`
 * the recipes of the families described as data (the page's data `families`), by model_type;
 * `multimodal` an object holding the multimodal wrappers' and their towers' recipes (`wrappers`
 * and `towers`: the page's data). `activeParameters` (per token) and `float32Parameters` (kept
 * in float32 at any dtype) are the recipe's, where the family has one (else null and 0); a
 * wrapper's tower and projector are in all three.
 */
export function readConfig(text, mlaLayout, families, multimodal) {
  var layout = mlaLayout === MLA_PER_HEAD ? MLA_PER_HEAD : MLA_LATENT;
  try {
    text = String(text);
    if (text.length > CONFIG_MAX_CHARS) refuse("config_too_large");
    var config = parseConfig(readJson(text), families, multimodal);
    // The dtype is read before the parameters are counted, as size_model reads them.
    var bits = null;
    if (config.dtype !== null) {
      bits = dtypeBits(config.dtype);
      if (bits === null) refuse("unknown_dtype", "dtype");
    }
    // A multimodal wrapper's vision tower and projector, where it and its tower have recipes.
    var wrapped = config.recipe !== null && config.outerModelType !== null
      ? wrapperCounts(config, multimodal)
      : null;
    var counts = recipeCounts(config, wrapped);
    var parameters = counts !== null ? counts.parameters : countParameters(config);
    // The layers' states, at the model's dtype (the config's) or float32, per sequence.
    var state = { bytes: rational(0n), needsModelDtype: false };
    if (config.recipe !== null && truthy(get(config.recipe, "states"))) {
      state = stateBytes(config.recipe, recipeScope(config.recipe, config.values),
        config.layerKinds, bits === null ? null : rational(bits, 8n));
      if (state.needsModelDtype && bits === null) refuse("no_state_dtype");
    }
    // The page's fields model the layers that hold a KV: full and sliding attention (hybrid
    // layers' KV is one of these, a chunked layer's a sliding one whose window is the chunk).
    // A family without attention heads (Mamba) holds no KV, whatever its layer kinds.
    var noKv = config.kvLayers === 0n || (config.mla === null && config.kvHeads === 0n);
    var window = noKv ? null : config.window !== null ? config.window : config.chunkWindow;
    var query = {
      params: parameters.toString(),
      layers: noKv ? "0" : config.kvLayers.toString(),
      window: window === null ? "" : window.toString(),
      windowed_layers: !noKv && config.slidingLayers > 0n ? config.slidingLayers.toString() : "",
      state_bytes: state.bytes.n === 0n ? "" : exactDecimal(state.bytes),
    };
    if (noKv) {
      query.kv_values = ""; // no layer holds a KV: heads and their size are not read
    } else if (config.mla === null) {
      query.kv_heads = config.kvHeads.toString();
      query.head_dim = config.headDim.toString();
      query.kv_values = "";
    } else {
      query.kv_values = valuesPerToken(config, layout).toString();
    }
    if (bits !== null) {
      query.bits = bits.toString();
      query.bytes_per_value = exactDecimal(rational(bits, 8n));
    }
    var notes = [];
    if (config.mla !== null) notes.push(layout);
    if (config.quantizationMethod !== null) notes.push("quantized_checkpoint_from_config");
    if (config.outerModelType !== null && wrapped === null) {
      notes.push("multimodal_encoder_not_counted");
    }
    if (config.mla !== null && config.mla.mtpLayers > 0n) notes.push("mtp_layers_not_counted");
    if (config.dtype === null) notes.push("no_dtype");
    if (state.bytes.n > 0n || noKv || config.kvLayers !== config.layers) {
      notes.push("layer_states");
    }
    return {
      ok: true,
      config: config,
      layout: config.mla === null ? LAYOUT_PER_HEAD : layout,
      parameters: parameters,
      stateBytes: state.bytes,
      activeParameters: counts !== null ? counts.active : null,
      float32Parameters: counts !== null ? counts.float32 : 0n,
      query: query,
      notes: notes,
    };
  } catch (error) {
    if (error instanceof ConfigFailure) return { ok: false, reason: error.reason, key: error.key };
    throw error;
  }
}
