/*
 * What fits on the page: its fields, answer and flags. These are Sizer methods (page.js
 * installs them). Mirrors no Python module (browser only).
 */

import { cmp, exact, rational } from "./rational.js";
import { parsePositive, readsDecimalComma } from "./numbers.js";
import { fillTemplate, formatNumber } from "./format.js";
import { patchContent, setAttr } from "./dom.js";
import { vllmSplit } from "./split.js";
import { fitPositions, vllmFit, vllmFitFlags } from "./fit.js";

export function fitWords(key, values) {
  var box = this.fitMessages;
  var el = box ? box.querySelector('[data-fit-text="' + key + '"]') : null;
  return fillTemplate(el ? el.textContent.trim() : key, values || {});
}

/** The "solve for" section: vLLM's upper bound of the split above on one catalogue card,
 * with its flags, what is certain and what is to measure. */
export function renderFit(query) {
  var box = this.fitBox;
  if (!box) return;
  var doc = this.doc;
  var status = box.querySelector("[data-fit-status]");
  var flagsOut = box.querySelector("[data-fit-flags]");
  var f = this.fitFields;
  var clear = function (state, line) {
    setAttr(box, "data-state", state);
    patchContent(doc, flagsOut, "");
    patchContent(doc, status, line);
  };
  if (f.card && f.card.options.length === 0) {
    var placeholder = doc.createElement("option");
    placeholder.value = "";
    placeholder.textContent = this.fitWords("choose_card");
    f.card.appendChild(placeholder);
    this.data.cards.forEach(function (card) {
      if (card.declaredBytes === null) return;
      var option = doc.createElement("option");
      option.value = card.id;
      option.textContent = card.name;
      f.card.appendChild(option);
    });
  }
  if (!this.splitRead) {
    clear("empty", this.fitWords("needs_config"));
    return;
  }
  var options = this.splitOptions(query);
  var card = null;
  var wanted = f.card ? f.card.value : "";
  this.data.cards.forEach(function (c) {
    if (c.id === wanted) card = c;
  });
  if (options === null || !options.ok || card === null) {
    clear("empty", this.fitWords("choose_card"));
    return;
  }
  var perValue = options.kvBytesPerValue;
  var kvDtype = cmp(perValue, options.elementBytes) === 0 ? "auto" :
    cmp(perValue, rational(1n)) === 0 ? "fp8" : null;
  if (kvDtype === null) {
    clear("refused", this.fitWords("reason_fit_kv_dtype"));
    return;
  }
  var utilizationText = f.utilization ? f.utilization.value.trim() : "1.0";
  var share = parsePositive(utilizationText, 1n, readsDecimalComma(this.data));
  if (!share.ok || cmp(share.value, rational(1n)) > 0) {
    clear("refused", this.fitWords("reason_fit_bad_utilization"));
    return;
  }
  var utilization = exact(share.value).indexOf("/") >= 0 ?
    String(Number(share.value.n) / Number(share.value.d)) : exact(share.value);
  if (utilization.indexOf(".") < 0) utilization += ".0";
  var solve = f.solve ? f.solve.value : "tokens";
  var positions = fitPositions(this.splitRead);
  if (solve !== "tokens" && positions !== null && options.tokens > positions) {
    clear("refused", this.fitWords("reason_fit_above_positions"));
    return;
  }
  var split = vllmSplit(this.splitRead, options);
  if (!split.ok) {
    clear("refused", this.splitWords("reason_" + split.reason, {}));
    return;
  }
  var answer = vllmFit(split, {
    capacityBytes: card.declaredBytes.n / card.declaredBytes.d,
    utilization: utilization,
    tokens: solve === "tokens" ? null : options.tokens,
    sequences: solve === "tokens" ? options.sequences : null,
    positions: positions,
  });
  if (!answer.ok) {
    clear("refused", this.fitWords("reason_" + answer.reason));
    return;
  }
  setAttr(box, "data-state", "ok");
  var symbols = this.symbols;
  var count = function (n) {
    return formatNumber(rational(BigInt(n)), 0, symbols);
  };
  var flags = vllmFitFlags(answer, split, {
    utilization: utilization,
    kvCacheDtype: kvDtype,
    tp: options.tp,
    pp: options.pp,
    ep: options.ep,
  });
  var words = ["vllm", "serve", this.fitWords("model_placeholder")];
  flags.forEach(function (flag) {
    words.push(flag[0]);
    if (flag[1]) words.push(flag[1]);
  });
  patchContent(doc, flagsOut, words.join(" "));
  patchContent(doc, status, [
    this.fitWords("answer", {
      tokens: count(answer.tokens),
      sequences: count(answer.sequences),
      card: card.name,
      gpus: count(split.gpus),
    }),
    this.fitWords("limit_" + answer.limitedBy, { positions: count(answer.positions || 0n) }),
    this.fitWords("blocks", {
      blocks: count(answer.blocks),
      cache_tokens: count(answer.cacheTokens),
      tokens: count(answer.tokens),
      concurrency: formatNumber(
        rational(BigInt(answer.concurrency.replace(".", "")), 100n), 2, symbols),
    }),
  ].join(" "));
}
