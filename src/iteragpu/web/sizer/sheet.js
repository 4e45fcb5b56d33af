/*
 * The filled load sheet as Markdown (sheetMarkdown) and its figures from the page's inputs
 * (sizerSheet). Mirrors iteragpu.i18n.sheet.
 */

import { add, cmp, rational } from "./rational.js";
import { parseCount, parsePositive, parseTokens, PY_SPACE } from "./numbers.js";
import { gib } from "./memory.js";
import { exactDecimal, fillTemplate, formatNumber } from "./format.js";
import { LIMITS } from "./compute.js";
import { SPLIT_BLOCK_SIZE } from "./split.js";

// ------------------------------------------------------------------------------------------
// The filled load sheet (#filled-sheet): the inference load specification of
// docs/<code>/docs/load-specification.md, filled from the page's inputs, as Markdown the
// reader copies. The same text as Python's iteragpu.i18n.sheet.sheet_markdown for the same
// figures (tests/js/sizer_sheet.test.mjs holds it to docs_tools.sizer_sheet_vectors); its
// words are the catalogue's (the page's data: `sheet`, from docs/hooks.py). What the inputs do
// not say is an empty cell, never a guess. Built when the reader asks, not on every edit.
// ------------------------------------------------------------------------------------------

const SHEET_RUNTIME_NAMES = { transformers: "Transformers", vllm: "vLLM", "llama.cpp": "llama.cpp" };
const SHEET_SPACE = new RegExp("[" + PY_SPACE + "]+");

/** `text` as a table cell: one line, its pipes escaped (iteragpu.i18n.sheet.cell). */
function sheetCell(text) {
  return String(text).split(SHEET_SPACE).filter(function (part) {
    return part !== "";
  }).join(" ").replace(/\|/g, "\\|");
}

/** `text` as inline code, fenced past any backtick it holds (iteragpu.i18n.sheet.code). */
function sheetCode(text) {
  var fence = "`";
  while (text.indexOf(fence) >= 0) fence += "`";
  var pad = text.charAt(0) === "`" || text.charAt(text.length - 1) === "`" ? " " : "";
  return fence + pad + text + pad + fence;
}

/** An exact value in the locale's format, every decimal it needs (at most 20). */
function sheetDecimal(value, symbols) {
  var digits = exactDecimal(value).split(".")[1] || "";
  return formatNumber(value, Math.min(digits.length, 20), symbols);
}

function sheetCeil(value) {
  return rational((value.n + value.d - 1n) / value.d);
}

function sheetTable(header, align, rows) {
  var line = function (cells) {
    return "| " + cells.join(" | ") + " |";
  };
  return [line(header), line(align)].concat(rows.map(line));
}

function sheetRowTotal(row) {
  return add(add(add(row.weights, row.kv), row.state), row.reserve);
}

/** The GPU that needs the most, the lowest on a tie. */
function sheetFirstToFill(sheet) {
  var first = sheet.rows[0];
  sheet.rows.forEach(function (row) {
    if (cmp(sheetRowTotal(row), sheetRowTotal(first)) > 0) first = row;
  });
  return first;
}

/**
 * The sheet as Markdown (iteragpu.i18n.sheet.sheet_markdown): `sheet` holds the LoadSheet's
 * fields (snake_case, counts as BigInt, bytes as rationals; each row {rank, weights, kv,
 * state, reserve}), `words` the sheet's words in the page's language.
 */
export function sheetMarkdown(sheet, words, symbols) {
  var w = words;
  var count = function (value) {
    return value === null ? "" : formatNumber(rational(BigInt(value)), 0, symbols);
  };
  var bits = sheet.weights_bits === null ? "" : sheetDecimal(sheet.weights_bits, symbols);
  var weights;
  if (sheet.weights_source === "parameters") {
    weights = fillTemplate(w.weights_parameters_bits, { bits: bits });
  } else if (sheet.weights_source === "config") {
    weights = sheet.weights_dtype !== null
      ? fillTemplate(w.weights_config_dtype, { dtype: sheetCode(sheet.weights_dtype) })
      : fillTemplate(w.weights_config_bits, { bits: bits });
  } else {
    weights = fillTemplate(w["weights_" + sheet.weights_source], {
      formats: sheet.weights_formats.map(sheetCode).join(", "),
    });
  }
  if (sheet.quantization_method !== null) {
    weights = fillTemplate(w.weights_quantized, {
      weights: weights, method: sheetCode(sheet.quantization_method),
    });
  }
  var cacheTokens = sheet.cache === "static" ? sheet.static_max_tokens : sheet.cache_block_tokens;
  var cache = fillTemplate(w["cache_" + sheet.cache], { tokens: count(cacheTokens) });
  if (sheet.kv_dtype !== null) {
    cache = fillTemplate(w.cache_kv_dtype, { cache: cache, dtype: sheetCode(sheet.kv_dtype) });
  }
  var split = sheet.runtime === null ? w.split_none : fillTemplate(w.split_runtime, {
    runtime: SHEET_RUNTIME_NAMES[sheet.runtime] || sheet.runtime,
    version: sheetCode(sheet.runtime_version || ""),
    tp: count(sheet.tp),
    pp: count(sheet.pp),
    ep: sheet.ep ? w.ep_on : w.ep_off,
    gpus: count(sheet.rows.length),
  });
  var model = "";
  if (sheet.model !== null) {
    model = sheetCode(sheet.model) + (sheet.hf_repo ? " (" + sheetCode(sheet.hf_repo) + ")" : "");
  }
  var fields = [
    ["model", model],
    ["model_type", sheet.model_type === null ? "" : sheetCode(sheet.model_type)],
    ["revision", sheet.revision === null ? "" : sheetCode(sheet.revision)],
    ["task", w["task_" + sheet.task]],
    ["weights_format", weights],
    ["weights_dtype", sheet.weights_dtype === null ? "" : sheetCode(sheet.weights_dtype)],
    ["cache", cache],
    ["split", split],
    ["decoding", ""],
    ["quality_bar", ""],
    ["environment", ""],
  ];
  var load = [
    count(sheet.input_tokens), count(sheet.output_tokens), count(sheet.tokens),
    count(sheet.sequences), sheetDecimal(sheet.kv_bytes_per_value, symbols),
  ];
  var first = sheetFirstToFill(sheet);
  var rows = sheet.rows.concat(sheet.host === null ? [] : [sheet.host]);
  var gpuRows = rows.map(function (row) {
    var label;
    if (row.rank === null) {
      label = w.host;
    } else {
      var named = sheet.rows.length > 1 && row === first;
      label = fillTemplate(w[named ? "gpu_first" : "gpu_row"], { rank: count(row.rank) });
    }
    var total = sheetRowTotal(row);
    return [sheetCell(label)].concat([row.weights, row.kv, row.state, row.reserve, total].map(
      function (value) {
        return formatNumber(sheetCeil(value), 0, symbols);
      }
    ), [formatNumber(gib(total), 2, symbols), "", sheetCell(w["source_" + sheet.source])]);
  });
  var loadKeys = ["input_tokens", "output_tokens", "tokens", "sequences", "kv_bytes_per_value"];
  var gpuKeys = [
    "gpu", "weights_bytes", "kv_cache_bytes", "state_bytes", "reserve_bytes", "total_bytes",
    "total_gib", "measured_peak_bytes", "source",
  ];
  var pick = function (key) {
    return w[key];
  };
  var lines = ["**" + w.title + "**", ""]
    .concat(sheetTable([w.field, w.value], ["---", "---"], fields.map(function (f) {
      return [sheetCell(w[f[0]]), sheetCell(f[1])];
    })))
    .concat([""])
    .concat(sheetTable(loadKeys.map(pick), loadKeys.map(function () {
      return "---:";
    }), [load]))
    .concat([""])
    .concat(sheetTable(gpuKeys.map(pick), ["---", "---:", "---:", "---:", "---:", "---:",
      "---:", "---:", "---"], gpuRows))
    .concat(["", w.note_not_counted, w.note_fill]);
  return lines.join("\n");
}

/**
 * The sheet of the page's inputs: `result` (compute's, valid), `model` ({name, hfRepo,
 * modelType}, each null when the page does not know it), and, when the split over several
 * GPUs holds more than one, `split` (vllmSplit's, ok) with its `options` (splitOptions').
 * The weights come from the parameter count at the bits given (one GPU) or from the config's
 * tensors at those bits (a split); the page knows no dtype by name, so none is stated.
 */
export function sizerSheet(result, model, split, options, versions, decimalComma) {
  var q = result.query;
  var bits = parsePositive(q.bits, LIMITS.bits, decimalComma).value;
  var perValue = parsePositive(q.bytes_per_value, LIMITS.bytes_per_value, decimalComma).value;
  var tokens = parseTokens(q.tokens, LIMITS.tokens, decimalComma).value;
  var sequences = parseCount(q.sequences, LIMITS.sequences, decimalComma).value;
  var sheet = {
    source: "sizer",
    model: model.name,
    hf_repo: model.hfRepo,
    model_type: model.modelType,
    revision: null,
    task: "inference",
    weights_source: "parameters",
    weights_bits: bits,
    weights_formats: [],
    weights_dtype: null,
    quantization_method: null,
    input_tokens: null,
    output_tokens: null,
    tokens: tokens,
    sequences: sequences,
    cache: q.cache,
    static_max_tokens: q.cache === "static" ? tokens : null,
    cache_block_tokens: null,
    kv_dtype: null,
    kv_bytes_per_value: perValue,
    runtime: null,
    runtime_version: null,
    tp: 1n,
    pp: 1n,
    ep: false,
    rows: [{
      rank: 0n, weights: result.weightsBytes, kv: result.kvCacheBytes,
      state: result.stateBytes, reserve: result.reserveBytes,
    }],
    host: null,
  };
  if (split) {
    sheet.weights_source = "config";
    sheet.cache = "vllm_blocks";
    sheet.static_max_tokens = null;
    sheet.cache_block_tokens = SPLIT_BLOCK_SIZE;
    sheet.runtime = "vllm";
    sheet.runtime_version = versions.vllm;
    sheet.tp = options.tp;
    sheet.pp = options.pp;
    sheet.ep = options.ep;
    sheet.rows = split.ranks.map(function (r) {
      return {
        rank: r.rank, weights: r.weightsBytes, kv: r.kvCacheBytes, state: rational(0n),
        reserve: options.reserveBytes,
      };
    });
  }
  return sheet;
}
