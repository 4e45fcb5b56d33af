/*
 * The whole sizing of the form's query (compute, describe) and the query in the URL.
 * Mirrors iteragpu.docs_tools.sizer_vectors.expected.
 */

import { add, cmp, exact, mul, rational } from "./rational.js";
import {
  ok, parseCount, parseNonNegative, parsePositive, parseTokens, readsDecimalComma,
} from "./numbers.js";
import { gib, gibToBytes, kvByKind, QUANTIZED_BELOW_BITS, weightsBytes } from "./memory.js";
import { formatBytes, formatNumber } from "./format.js";
import { loadCatalog } from "./catalog.js";
import { shortlist } from "./shortlist.js";

// What an inference need leaves to measure (iteragpu.gpus.need.INFERENCE_MISSING), and a
// training run's (TRAINING_MISSING).
export const INFERENCE_MISSING = ["activations", "prefill_temporaries"];
export const TRAINING_MISSING = ["activations", "step_temporaries"];

// ------------------------------------------------------------------------------------------
// The whole sizing, as iteragpu.docs_tools.sizer_vectors.expected() computes it
// ------------------------------------------------------------------------------------------

// Python's order of validation: the first error is the one the CLI would report.
// The largest value of each field, as the CLI bounds it (iteragpu.docs_tools.sizer_vectors.LIMITS).
export const LIMITS = {
  params: 10n ** 15n,
  bits: 64n,
  reserve_gib: 10n ** 6n,
  layers: 10n ** 4n,
  kv_heads: 10n ** 4n,
  head_dim: 10n ** 5n,
  tokens: 10n ** 9n,
  bytes_per_value: 8n,
  sequences: 10n ** 6n,
  window: 10n ** 9n,
  windowed_layers: 10n ** 4n,
  kv_values: 2n * 10n ** 4n * 10n ** 5n,
  state_bytes: 10n ** 15n,
};
const CACHES = ["dynamic", "static"];

const FIELDS = [
  ["task", null],
  ["params", parseCount],
  ["bits", parsePositive],
  ["reserve_gib", parseNonNegative],
  ["layers", parseLayers],
  ["kv_values", parseCount],
  ["kv_heads", parseCount],
  ["head_dim", parseCount],
  ["tokens", parseTokens],
  ["bytes_per_value", parsePositive],
  ["sequences", parseCount],
  ["window", parseTokens],
  ["windowed_layers", parseCount],
  ["state_bytes", parseNonNegative],
  ["cache", null],
  ["days", parseCount],
];
// Fields that may stay empty: no window; every layer windowed; values from heads x dims.
// No state: a model whose layers keep none.
const OPTIONAL = { window: true, windowed_layers: true, kv_values: true, state_bytes: true };

/** The layers that hold a KV: a positive count, or 0 (a model of state layers alone). */
function parseLayers(text, maximum, decimalComma) {
  var zero = parseNonNegative(text, maximum, decimalComma);
  if (zero.ok && zero.value.n === 0n) return ok(0n);
  return parseCount(text, maximum, decimalComma);
}

/** The query over the defaults: missing keys take the default, unknown keys are ignored. */
export function merge(query, defaults) {
  var merged = {};
  Object.keys(defaults).forEach(function (key) {
    var value = query && Object.prototype.hasOwnProperty.call(query, key) ? query[key] : null;
    merged[key] = value === null || value === undefined ? defaults[key] : String(value);
  });
  return merged;
}

/**
 * Size a query with `data` (the page's sizer data: defaults, tasks, catalog). Returns
 * {valid: true, ...exact values, candidates} or {valid: false, field, reason, errors}, where
 * `errors` lists every invalid field in Python's order and `field`/`reason` is the first.
 */
export function compute(query, data) {
  var q = merge(query, data.defaults);
  var decimalComma = readsDecimalComma(data);
  var values = {};
  var errors = [];
  FIELDS.forEach(function (entry) {
    var key = entry[0];
    var parse = entry[1];
    if (key === "task") {
      if (data.tasks.indexOf(q.task) < 0) errors.push({ field: key, reason: "unknown_task" });
      return;
    }
    if (key === "cache") {
      if (CACHES.indexOf(q.cache) < 0) errors.push({ field: key, reason: "unknown_cache" });
      return;
    }
    // Values per token given: the heads and their dimension are not read.
    if ((key === "kv_heads" || key === "head_dim") && q.kv_values !== "") return;
    if (OPTIONAL[key] && q[key] === "") {
      values[key] = null;
      return;
    }
    var parsed = parse(q[key], LIMITS[key], decimalComma);
    if (parsed.ok) values[key] = parsed.value;
    else if (parsed.readings) {
      errors.push({
        field: key, reason: parsed.reason, suffix: parsed.suffix, readings: parsed.readings,
      });
    } else errors.push({ field: key, reason: parsed.reason });
    if (key === "windowed_layers" && parsed.ok) {
      // Checked where Python checks it, once the layers and the window are read.
      var known = errors.every(function (e) {
        return e.field !== "layers" && e.field !== "window";
      });
      if (known && values.window === null) {
        errors.push({ field: key, reason: "window_needed" });
      } else if (known && values.windowed_layers > values.layers) {
        errors.push({ field: key, reason: "windowed_above_layers" });
      }
    }
  });
  if (errors.length > 0) {
    return {
      valid: false,
      query: q,
      field: errors[0].field,
      reason: errors[0].reason,
      errors: errors,
    };
  }
  var weights = weightsBytes(values.params, values.bits);
  var total = add(weights, gibToBytes(values.reserve_gib));
  var kv = kvByKind(values, q.cache);
  // The layers' states: per sequence, whatever the tokens (iteragpu.models.state).
  var state = values.state_bytes === null
    ? rational(0n)
    : mul(values.state_bytes, rational(values.sequences));
  var catalog = data.cards || loadCatalog(data.catalog);
  return {
    valid: true,
    query: q,
    task: q.task,
    weightsBytes: weights,
    totalBytes: total,
    reserveBytes: gibToBytes(values.reserve_gib),
    kvCacheBytes: kv.bytes,
    kvBytesPerToken: kv.perToken,
    kvGroups: kv.groups,
    stateBytes: state,
    // `iteragpu model`'s total: weights, KV cache, states and reserve (the rough range leaves
    // KV and states out).
    modelTotalBytes: add(add(total, kv.bytes), state),
    weightsGib: gib(weights),
    totalGib: gib(total),
    kvCacheGib: gib(kv.bytes),
    quantizationNotCounted: cmp(values.bits, QUANTIZED_BELOW_BITS) < 0,
    // Every card is judged against the whole need the page computed (weights, KV cache,
    // states, reserve), as `iteragpu model --shortlist` judges it; the prompt's activations and
    // temporaries are still to measure, so the need is a lower bound. The first estimate
    // (weights + reserve) is the guide's arithmetic and decides nothing.
    days: values.days,
    needMissing: INFERENCE_MISSING,
    candidates: shortlist(catalog, add(add(total, kv.bytes), state), values.days, 1n,
      INFERENCE_MISSING),
  };
}

/** The four figures as the page shows them, for one language's symbols. */
export function texts(result, symbols) {
  return {
    "weights-gib": formatNumber(result.weightsGib, 2, symbols),
    "range-gib": formatNumber(result.totalGib, 2, symbols),
    "kv-bytes": formatBytes(result.kvCacheBytes, symbols),
    "kv-gib": formatNumber(result.kvCacheGib, 2, symbols),
    "kv-bytes-per-token": formatBytes(result.kvBytesPerToken, symbols),
    "state-bytes": formatBytes(result.stateBytes, symbols),
    "model-total-gib": formatNumber(gib(result.modelTotalBytes), 2, symbols),
  };
}

/** A count (at most 10^9 here, so exact) as the JSON integer Python writes. */
function jsonInteger(value) {
  return JSON.parse(value.toString());
}

/** A result in the shape of iteragpu.docs_tools.sizer_vectors.expected(), for every language given. */
export function describe(result, symbolsByLang) {
  if (!result.valid) {
    return { valid: false, field: result.field, reason: result.reason, errors: result.errors };
  }
  var langs = Object.keys(symbolsByLang);
  var text = {};
  langs.forEach(function (lang) {
    text[lang] = texts(result, symbolsByLang[lang]);
  });
  return {
    valid: true,
    weights_bytes: exact(result.weightsBytes),
    total_bytes: exact(result.totalBytes),
    kv_cache_bytes: exact(result.kvCacheBytes),
    kv_bytes_per_token: exact(result.kvBytesPerToken),
    kv_groups: result.kvGroups.map(function (g) {
      return {
        kind: g.kind,
        count: jsonInteger(g.count),
        window: g.window === null ? null : jsonInteger(g.window),
        tokens_held: jsonInteger(g.tokensHeld),
        kv_cache_bytes: exact(g.bytes),
      };
    }),
    state_bytes: exact(result.stateBytes),
    model_total_bytes: exact(result.modelTotalBytes),
    quantization_not_counted: result.quantizationNotCounted,
    text: text,
    need_missing: result.needMissing.slice(),
    candidates: result.candidates.map(function (c) {
      var declared = {};
      if (c.declaredGib !== null) {
        langs.forEach(function (lang) {
          declared[lang] = formatNumber(c.declaredGib, 2, symbolsByLang[lang]);
        });
      }
      return {
        card_id: c.id,
        rank: c.rank,
        status: c.status,
        requirements: { memory: c.requirements.memory, package: c.requirements.package },
        reasons: { memory: c.reasons.memory, package: c.reasons.package },
        declared_text: declared,
        // Its digits: a whole need of many GiB leaves a margin beyond 2^53, which a JSON number
        // would round.
        paper_margin_bytes: c.paperMarginBytes === null ? null : c.paperMarginBytes.toString(),
        paper_margin_basis: c.paperBasis,
        holds_need_on_paper: c.holdsNeedOnPaper,
      };
    }),
  };
}

/** The query of a URL's search string, over the defaults. */
export function queryFromSearch(search, defaults) {
  var params = new URLSearchParams(search);
  var query = {};
  Object.keys(defaults).forEach(function (key) {
    if (params.has(key)) query[key] = params.get(key);
  });
  return merge(query, defaults);
}

export function searchFromQuery(query, defaults) {
  var params = new URLSearchParams();
  Object.keys(defaults).forEach(function (key) {
    params.set(key, query[key]);
  });
  return "?" + params.toString();
}
