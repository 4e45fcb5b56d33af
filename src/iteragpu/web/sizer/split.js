/*
 * Several GPUs: vLLM's split of a read model over tensor, pipeline and expert parallel ranks
 * (vllmSplit). Mirrors iteragpu.parallel.vllm_rules and iteragpu.parallel.plan.
 */

import { add, cmp, mul, rational } from "./rational.js";
import { get, has, record } from "./objects.js";
import { ConfigFailure } from "./json_reader.js";
import { FULL } from "./config_reader.js";
import { recipeScope, section } from "./recipes.js";
import { recipeTensors } from "./training_tensors.js";

// ------------------------------------------------------------------------------------------
// Several GPUs: vLLM 0.34.0's split of a model read from its config (iteragpu.parallel,
// vllm_rules), per rank: weights, what other ranks hold too, KV cache, total. The rules are
// the Python module's, checked against its answers (sizer_split_vectors, node --test). The
// page splits a model it has read (a config.json or a published model); Transformers' and
// llama.cpp's splits are the CLI's (`iteragpu model --runtime`).
// ------------------------------------------------------------------------------------------

const SPLIT_VOCAB_PADDING = 64n; // vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
export const SPLIT_BLOCK_SIZE = 64n; // config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE
export const SPLIT_MAX_RANKS = 4096n; // iteragpu.parallel.plan.MAX_RANKS
const SPLIT_FAMILIES = [
  "llama", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
];
const SPLIT_QKV = record({
  "self_attn.q_proj": "q", "self_attn.k_proj": "kv", "self_attn.v_proj": "kv",
});
const SPLIT_ROW = [
  "self_attn.o_proj", "mlp.down_proj", "mlp.shared_expert.down_proj",
  "mlp.shared_experts.down_proj",
];
const SPLIT_COLUMN = [
  "mlp.gate_proj", "mlp.up_proj", "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj",
  "mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj", "self_attn.q_b_proj",
  "self_attn.kv_b_proj",
];
const SPLIT_REPLICATED = [
  "input_layernorm", "post_attention_layernorm", "self_attn.q_norm", "self_attn.k_norm",
  "mlp.gate", "mlp.shared_expert_gate", "self_attn.q_a_proj", "self_attn.q_a_layernorm",
  "self_attn.kv_a_proj_with_mqa", "self_attn.kv_a_layernorm", "norm",
];

function SplitRefusal(reason, values) {
  this.reason = reason;
  this.values = values || {};
}

function splitRefuse(reason, values) {
  throw new SplitRefusal(reason, values);
}

/** vLLM's `divide`: the quotient, or its refusal naming the size and the layer class. */
function splitDivide(numerator, denominator, what, where) {
  if (numerator % denominator !== 0n) {
    splitRefuse("vllm_not_divisible", {
      what: what, numerator: numerator, denominator: denominator, where: where,
    });
  }
  return numerator / denominator;
}

/** get_pp_indices: [first, end) of each stage, the remainder from the second-to-last back. */
function vllmStages(layers, pp) {
  var per = layers / pp;
  var parts = [];
  for (var i = 0n; i < pp; i++) parts.push(per);
  for (var r = 2n; r < layers % pp + 2n; r++) parts[parts.length - Number(r)] += 1n;
  var start = 0n;
  return parts.map(function (n) {
    var range = [start, start + n];
    start += n;
    return range;
  });
}

/** determine_expert_map: the experts of each EP rank, the first `experts % ep` one more. */
function vllmExpertCounts(experts, ep) {
  var counts = [];
  for (var rank = 0n; rank < ep; rank++) counts.push(experts / ep + (rank < experts % ep ? 1n : 0n));
  return counts;
}

function splitModule(name) {
  var cut = name.lastIndexOf(".");
  return cut < 0 ? name : name.slice(0, cut);
}

/** One tensor's [how, elements per TP rank] under vLLM (vllm_rules._shares). */
function vllmShares(t, config, tp, ep) {
  var module = splitModule(t.name);
  var total = t.elements;
  var rows = t.shape[0];
  var same = function (how, elements) {
    var list = [];
    for (var i = 0n; i < tp; i++) list.push(elements);
    return [how, list];
  };
  var split = tp > 1n;
  if (t.layer === null) {
    if (t.name.indexOf("embed_tokens") === 0 || t.name.indexOf("lm_head") === 0) {
      var padded = (rows + SPLIT_VOCAB_PADDING - 1n) / SPLIT_VOCAB_PADDING * SPLIT_VOCAB_PADDING;
      var part = splitDivide(padded, tp, "pad_vocab_size(vocab_size)", "VocabParallelEmbedding");
      return same(split ? "vocab" : "replicated", total / rows * part);
    }
    if (module === "norm") return same("replicated", total);
    return splitRefuse("vllm_tensor_not_modelled", { name: t.name });
  }
  if (has(SPLIT_QKV, module)) {
    var width = total / rows;
    if (SPLIT_QKV[module] === "q") {
      var heads = splitDivide(config.heads, tp, "num_attention_heads", "QKVParallelLinear");
      return same(split ? "column" : "replicated", heads * config.headDim * width);
    }
    var kv = config.kvHeads / tp > 0n ? config.kvHeads / tp : 1n;
    var how = tp > config.kvHeads ? "kv_replicated" : split ? "column" : "replicated";
    return same(how, kv * config.headDim * width);
  }
  var last = t.shape[t.shape.length - 1];
  if (SPLIT_ROW.indexOf(module) >= 0) {
    if (t.name.slice(-5) === ".bias") return same("replicated", total);
    var cut = splitDivide(last, tp, module + ".input_size", "RowParallelLinear");
    return same(split ? "row" : "replicated", total / last * cut);
  }
  if (SPLIT_COLUMN.indexOf(module) >= 0) {
    var out = splitDivide(rows, tp, module + ".output_size", "ColumnParallelLinear");
    return same(split ? "column" : "replicated", total / rows * out);
  }
  if (SPLIT_REPLICATED.indexOf(module) >= 0 || t.name === "mlp.gate.weight") {
    return same("replicated", total);
  }
  if (t.routed && t.name.indexOf("mlp.experts.") === 0) {
    var experts = rows;
    if (ep) {
      return ["experts", vllmExpertCounts(experts, tp).map(function (n) {
        return total / experts * n;
      })];
    }
    var inner = t.name.slice(-12) === "gate_up_proj" ? t.shape[1] / 2n : t.shape[2];
    if (inner % tp !== 0n) splitRefuse("vllm_moe_not_divisible", { size: inner, tp: tp });
    return same(split ? "expert_slices" : "replicated", total / tp);
  }
  return splitRefuse("vllm_tensor_not_modelled", { name: t.name });
}

/**
 * vLLM's split of a model read from its config (`read`: readConfig's result): each rank's
 * weights, their part other ranks hold too, its KV cache and total, and the rank that fills
 * first; or {ok: false, reason, values} as iteragpu.parallel refuses. `o`: tp, pp (BigInt),
 * ep (boolean), tokens and sequences (BigInt), elementBytes, kvBytesPerValue and reserveBytes
 * (rationals).
 */
export function vllmSplit(read, o) {
  try {
    var c = read.config;
    var tp = o.tp;
    var pp = o.pp;
    if (tp < 1n || pp < 1n || tp > SPLIT_MAX_RANKS || pp > SPLIT_MAX_RANKS) {
      splitRefuse("bad_split_count");
    }
    if (tp * pp > SPLIT_MAX_RANKS) splitRefuse("bad_split_count");
    if (c.quantizationMethod !== null) splitRefuse("split_quantized");
    if (c.outerModelType !== null) splitRefuse("split_multimodal");
    if (c.recipe === null) splitRefuse("split_tensors_unknown");
    var scope = recipeScope(c.recipe, c.values);
    var tensors = recipeTensors(c.recipe, scope, c.layerKinds);
    if (tensors === null) splitRefuse("split_tensors_unknown");
    if (SPLIT_FAMILIES.indexOf(c.modelType) < 0) splitRefuse("split_family_not_modelled");
    var states = section(c.recipe, "states");
    if (c.layerKinds.some(function (kind) {
      return has(states, kind) && Array.isArray(states[kind]) && states[kind].length > 0;
    })) {
      splitRefuse("split_states_not_modelled");
    }
    if (c.layerKinds.some(function (kind) { return kind !== FULL; })) {
      splitRefuse("vllm_sliding_not_modelled");
    }
    if (o.ep && tp === 1n) splitRefuse("ep_needs_tp");
    if (c.heads % tp !== 0n) splitRefuse("vllm_heads_not_divisible", { heads: c.heads, tp: tp });
    var experts = get(scope, "num_experts");
    if (experts === null) experts = get(scope, "num_local_experts");
    if ((c.modelType === "qwen2_moe" || c.modelType === "qwen3_moe") && experts !== null &&
        tp > BigInt(experts)) {
      splitRefuse("vllm_tp_above_experts", { tp: tp, experts: BigInt(experts) });
    }
    if (c.mla === null) {
      if (tp >= c.kvHeads) {
        splitDivide(tp, c.kvHeads, "tensor_parallel_size / num_key_value_heads", "QKVParallelLinear");
      } else {
        splitDivide(c.kvHeads, tp, "num_key_value_heads", "QKVParallelLinear");
      }
    }
    var stages = vllmStages(c.layers, pp);
    var placed = tensors.map(function (t) {
      return { t: t, size: o.elementBytes, parts: vllmShares(t, c, tp, o.ep) };
    });
    // DeepSeek's gate.e_score_correction_bias: float32, on each layer with experts.
    if ((c.modelType === "deepseek_v2" || c.modelType === "deepseek_v3") &&
        get(c.values, "topk_method") === "noaux_tc") {
      var routedLayers = [];
      tensors.forEach(function (t) {
        if (t.routed && t.layer !== null && routedLayers.indexOf(t.layer) < 0) {
          routedLayers.push(t.layer);
        }
      });
      var count = BigInt(get(scope, "n_routed_experts"));
      routedLayers.forEach(function (layer) {
        var list = [];
        for (var i = 0n; i < tp; i++) list.push(count);
        placed.push({
          t: { name: "mlp.gate.e_score_correction_bias", layer: layer, shape: [count] },
          size: rational(4n),
          parts: ["replicated", list],
        });
      });
    }
    var perRankHeads = c.kvHeads / tp > 0n ? c.kvHeads / tp : 1n;
    var slots = o.sequences * ((o.tokens + SPLIT_BLOCK_SIZE - 1n) / SPLIT_BLOCK_SIZE) *
      SPLIT_BLOCK_SIZE;
    var latent = c.mla === null ? null : c.mla.kvLoraRank + c.mla.rope;
    var ranks = [];
    stages.forEach(function (span, stage) {
      var first = stage === 0;
      var last = stage === stages.length - 1;
      var layerCount = span[1] - span[0];
      var values = latent !== null ? latent : perRankHeads * 2n * c.headDim;
      var perToken = mul(rational(layerCount * values), o.kvBytesPerValue);
      for (var r = 0n; r < tp; r++) {
        var weights = rational(0n);
        var repeated = rational(0n);
        placed.forEach(function (p) {
          var t = p.t;
          if (t.layer !== null) {
            if (t.layer < span[0] || t.layer >= span[1]) return;
          } else if (t.name.indexOf("embed_tokens") === 0) {
            if (!(first || (c.tied && last))) return;
          } else if (!last) {
            return;
          }
          var bytes = mul(rational(p.parts[1][Number(r)]), p.size);
          weights = add(weights, bytes);
          if (p.parts[0] === "replicated" || p.parts[0] === "kv_replicated") {
            repeated = add(repeated, bytes);
          }
        });
        var kvBytes = mul(perToken, rational(slots));
        ranks.push({
          rank: BigInt(stage) * tp + r,
          tpRank: r,
          stage: BigInt(stage),
          layers: span,
          weightsBytes: weights,
          replicatedBytes: tp > 1n ? repeated : rational(0n),
          kvBytesPerToken: perToken,
          kvTokens: slots,
          kvCacheBytes: kvBytes,
          totalBytes: add(add(weights, kvBytes), o.reserveBytes),
        });
      }
    });
    var fullest = ranks[0];
    ranks.forEach(function (rank) {
      if (cmp(rank.totalBytes, fullest.totalBytes) > 0) fullest = rank;
    });
    return { ok: true, ranks: ranks, firstToFill: fullest, gpus: BigInt(ranks.length) };
  } catch (error) {
    if (error instanceof SplitRefusal) return { ok: false, reason: error.reason, values: error.values };
    if (error instanceof ConfigFailure) return { ok: false, reason: error.reason, values: {} };
    throw error;
  }
}
