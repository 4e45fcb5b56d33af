/*
 * The split over several GPUs on the page: its fields, table and chart's words. These are
 * Sizer methods (page.js installs them). Mirrors no Python module (browser only).
 */

import { div, rational } from "./rational.js";
import {
  parseCount, parseNonNegative, parsePositive, parseTokens, readsDecimalComma,
} from "./numbers.js";
import { gib, gibToBytes } from "./memory.js";
import { fillTemplate, formatNumber } from "./format.js";
import { LIMITS } from "./compute.js";
import { htmlNode, keyed, patchContent, setAttr } from "./dom.js";
import { SPLIT_MAX_RANKS, vllmSplit } from "./split.js";

export function splitWords(key, values) {
  var box = this.splitMessages;
  var el = box ? box.querySelector('[data-split-text="' + key + '"]') : null;
  return fillTemplate(el ? el.textContent.trim() : key, values || {});
}

// The field each refusal of the split is about, marked invalid and pointed at the message.
const SPLIT_FIELDS = {
  vllm_heads_not_divisible: ["tp"],
  vllm_tp_above_experts: ["tp"],
  vllm_not_divisible: ["tp"],
  vllm_moe_not_divisible: ["tp"],
  ep_needs_tp: ["tp", "ep"],
};

/** A refusal's words (`words`: the section's splitWords or fitWords), every placeholder
 * filled from its values: counts in the page's digits, names as they are; a reason the page
 * has no words for is said by the section's `refused` line, never by its code. */
export function refusalText(words, has, refusal, symbols) {
  var values = {};
  Object.keys(refusal.values || {}).forEach(function (key) {
    var value = refusal.values[key];
    values[key] = typeof value === "bigint" ? formatNumber(rational(value), 0, symbols) :
      String(value);
  });
  var key = "reason_" + refusal.reason;
  return words(has(key) ? key : "refused", values);
}

/** Mark `el` invalid and described by the message `messageId` (null: valid again); a field
 * with a note (an element `<id>-note`) keeps it among its descriptions. */
export function markField(doc, el, messageId) {
  if (!el) return;
  var note = doc.getElementById(el.id + "-note") ? el.id + "-note" : null;
  var ids = [messageId, note].filter(function (id) {
    return id !== null;
  }).join(" ");
  if (messageId) setAttr(el, "aria-invalid", "true");
  else if (el.hasAttribute("aria-invalid")) el.removeAttribute("aria-invalid");
  if (ids) setAttr(el, "aria-describedby", ids);
  else if (el.hasAttribute("aria-describedby")) el.removeAttribute("aria-describedby");
}

/** Whether the split's messages hold words for `key`. */
export function hasSplitWords(key) {
  var box = this.splitMessages;
  return !!(box && box.querySelector('[data-split-text="' + key + '"]'));
}

/** The split's options from the page's fields and the form's query, or null (refused). */
export function splitOptions(query) {
  var comma = readsDecimalComma(this.data);
  var f = this.splitFields;
  var tp = parseCount(f.tp ? f.tp.value : "1", SPLIT_MAX_RANKS, comma);
  var pp = parseCount(f.pp ? f.pp.value : "1", SPLIT_MAX_RANKS, comma);
  var tokens = parseTokens(query.tokens, LIMITS.tokens, comma);
  var sequences = parseCount(query.sequences, LIMITS.sequences, comma);
  var bits = parsePositive(query.bits, LIMITS.bits, comma);
  var perValue = parsePositive(query.bytes_per_value, LIMITS.bytes_per_value, comma);
  var reserve = parseNonNegative(query.reserve_gib, LIMITS.reserve_gib, comma);
  if (!tp.ok || !pp.ok) {
    return {
      ok: false,
      reason: "bad_split_count",
      values: {},
      fields: (tp.ok ? [] : ["tp"]).concat(pp.ok ? [] : ["pp"]),
    };
  }
  if (!tokens.ok || !sequences.ok || !bits.ok || !perValue.ok || !reserve.ok) return null;
  return {
    ok: true,
    tp: tp.value,
    pp: pp.value,
    ep: f.ep ? f.ep.value === "on" : false,
    tokens: tokens.value,
    sequences: sequences.value,
    elementBytes: div(bits.value, rational(8n)),
    kvBytesPerValue: perValue.value,
    reserveBytes: gibToBytes(reserve.value),
  };
}

/** The split section: each GPU's layers and bytes under vLLM's rules, the GPU that fills
 * first, and the chart of every GPU's need against each card's capacity on paper. */
export function renderSplit(query) {
  var box = this.splitBox;
  if (!box) return;
  var doc = this.doc;
  var status = box.querySelector("[data-split-status]");
  var body = box.querySelector("table tbody");
  var plot = box.querySelector("[data-split-plot]");
  var text = box.querySelector("[data-split-chart-text]");
  var self = this;
  var clear = function (state, line) {
    self.splitChartLast = null; // nothing to redraw on a resize
    setAttr(box, "data-state", state);
    patchContent(doc, body, []);
    patchContent(doc, plot, []);
    patchContent(doc, text, "");
    patchContent(doc, status, line);
  };
  var fields = this.splitFields;
  Object.keys(fields).forEach(function (key) {
    markField(doc, fields[key], null);
  });
  if (!this.splitRead) {
    clear("empty", this.splitWords("needs_config"));
    return;
  }
  var options = this.splitOptions(query);
  if (options === null) {
    clear("empty", this.results.getAttribute("data-empty") || "");
    return;
  }
  var split = options.ok ? vllmSplit(this.splitRead, options) : options;
  if (!split.ok) {
    clear("refused", refusalText(this.splitWords.bind(this), hasSplitWords.bind(this), split,
      this.symbols));
    var statusId = status && status.id ? status.id : null;
    (split.fields || SPLIT_FIELDS[split.reason] || []).forEach(function (key) {
      markField(doc, fields[key], statusId);
    });
    return;
  }
  setAttr(box, "data-state", "ok");
  var symbols = this.symbols;
  var gibText = function (bytes) {
    return formatNumber(gib(bytes), 2, symbols);
  };
  var count = function (n) {
    return formatNumber(rational(BigInt(n)), 0, symbols);
  };
  patchContent(doc, body, split.ranks.map(function (r) {
    var first = r.layers[0];
    var end = r.layers[1];
    var layers = end > first ? count(first) + "–" + count(end - 1n) : self.splitWords("no_layers");
    return keyed("rank-" + r.rank, htmlNode("tr", {}, [
      count(r.rank), count(r.tpRank), count(r.stage), layers, gibText(r.weightsBytes),
      gibText(r.replicatedBytes), gibText(r.kvCacheBytes), gibText(r.totalBytes),
    ].map(function (cell) {
      return htmlNode("td", {}, cell);
    })));
  }));
  patchContent(doc, status, this.splitWords("first_to_fill", {
    rank: count(split.firstToFill.rank),
    gpus: count(split.gpus),
    total_gib: gibText(split.firstToFill.totalBytes),
  }));
  this.drawSplitChart(split, options.reserveBytes, plot, text);
}
