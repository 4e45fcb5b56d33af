/*
 * What fits on the page: its fields, answer and flags. These are Sizer methods (page.js
 * installs them). Mirrors no Python module (browser only).
 */

import { cmp, exact, mul, rational } from "./rational.js";
import { parsePositive, readsDecimalComma } from "./numbers.js";
import { fillTemplate, formatNumber } from "./format.js";
import { patchContent, setAttr } from "./dom.js";
import { gib } from "./memory.js";
import { SPLIT_BLOCK_SIZE, vllmSplit } from "./split.js";
import { fitPositions, lackHundredths, vllmFit, vllmFitFlags } from "./fit.js";
import { hasSplitWords, markField, refusalText } from "./page_split.js";

/** Whether the fit's messages hold words for `key`. */
export function hasFitWords(key) {
  var box = this.fitMessages;
  return !!(box && box.querySelector('[data-fit-text="' + key + '"]'));
}

export function fitWords(key, values) {
  var box = this.fitMessages;
  var el = box ? box.querySelector('[data-fit-text="' + key + '"]') : null;
  return fillTemplate(el ? el.textContent.trim() : key, values || {});
}

/** The utilization's text as vLLM reads it ("1.0", "0.92") and its value, or null; a blank
 * field is vLLM 0.34.0's default with its extensible KV cache (vllm_rules
 * UTILIZATION_EXTENSIBLE), as `iteragpu fit` without --utilization. */
export function fitUtilization(text, decimalComma) {
  var typed = String(text).trim();
  if (typed === "") return { text: "1.0", value: rational(1n), places: 1 };
  var share = parsePositive(typed, 1n, decimalComma);
  if (!share.ok || cmp(share.value, rational(1n)) > 0) return null;
  var utilization = exact(share.value).indexOf("/") >= 0 ?
    String(Number(share.value.n) / Number(share.value.d)) : exact(share.value);
  if (utilization.indexOf(".") < 0) utilization += ".0";
  if (utilization.indexOf("e") >= 0) return null;
  return {
    text: utilization,
    value: share.value,
    places: utilization.length - utilization.indexOf(".") - 1,
  };
}

/**
 * The fit's lines for an answer or a load that does not fit (`answer`: vllmFit's result), in
 * the page's words (`words(key, values)`): `status`, what vLLM answers or what the fullest GPU
 * lacks; `spent`, how the budget is spent on the
 * GPU with the fewest blocks (the card's declared capacity x utilization, less its weights,
 * less the reserve, the room left in blocks) and where the utilization and the reserve come
 * from.
 */
export function fitLines(words, answer, o, symbols) {
  var count = function (n) {
    return formatNumber(rational(BigInt(n)), 0, symbols);
  };
  var gibText = function (bytes) {
    return formatNumber(gib(bytes), 2, symbols);
  };
  var weightsOf = function (rank) {
    var weights = null;
    o.ranks.forEach(function (r) {
      if (r.rank === rank) weights = r.weightsBytes;
    });
    return weights;
  };
  var lines = [];
  var spent = [];
  var budget = {
    card: o.cardName,
    capacity_gib: gibText(rational(o.capacityBytes)),
    utilization: formatNumber(o.utilization.value, o.utilization.places, symbols),
    budget_gib: gibText(rational(answer.budget)),
  };
  if (!answer.ok) {
    var lack = lackHundredths(answer.lackBytes);
    lines.push(words("reason_fit_does_not_fit", {
      card: o.cardName,
      gpus: count(answer.gpus),
      tokens: count(answer.tokens),
      sequences: count(answer.sequences),
      lack: formatNumber(rational(lack, 100n), 2, symbols),
    }));
    spent.push(words("budget", budget));
    spent.push(words("room_short", {
      rank: count(answer.lacking.rank),
      budget_gib: budget.budget_gib,
      weights_gib: gibText(weightsOf(answer.lacking.rank)),
      reserve_gib: gibText(o.reserveBytes),
      room_gib: gibText(answer.lacking.roomBytes),
      blocks: count(answer.neededBlocks),
      need_gib: gibText(answer.neededBytes),
    }));
  } else {
    lines.push(words("answer", {
      tokens: count(answer.tokens),
      sequences: count(answer.sequences),
      card: o.cardName,
      gpus: count(o.gpus),
    }));
    lines.push(words("limit_" + answer.limitedBy, { positions: count(answer.positions || 0n) }));
    spent.push(words("budget", budget));
    var weakest = answer.weakest;
    spent.push(words("room", {
      rank: count(weakest.rank),
      budget_gib: budget.budget_gib,
      weights_gib: gibText(weightsOf(weakest.rank)),
      reserve_gib: gibText(o.reserveBytes),
      room_gib: gibText(weakest.roomBytes),
      blocks: count(weakest.blocks),
      block_tokens: count(SPLIT_BLOCK_SIZE),
      block_mib: formatNumber(mul(weakest.blockBytes, rational(1n, 1n << 20n)), 2, symbols),
    }));
    lines.push(words("blocks", {
      blocks: count(answer.blocks),
      cache_tokens: count(answer.cacheTokens),
      tokens: count(answer.tokens),
      concurrency: formatNumber(
        rational(BigInt(answer.concurrency.replace(".", "")), 100n), 2, symbols),
    }));
  }
  if (cmp(o.utilization.value, rational(1n)) === 0) spent.push(words("utilization_default", {}));
  spent.push(words("reserve_rule", { reserve_gib: gibText(o.reserveBytes) }));
  return { status: lines, spent: spent };
}

/** The "solve for" section: vLLM's upper bound of the split above on one catalogue card,
 * with its flags, how the card's memory is spent, what is certain and what is to measure. */
export function renderFit(query) {
  var box = this.fitBox;
  if (!box) return;
  var doc = this.doc;
  var self = this;
  var status = box.querySelector("[data-fit-status]");
  var statusId = status && status.id ? status.id : null;
  var flagsOut = box.querySelector("[data-fit-flags]");
  var spentOut = box.querySelector("[data-fit-budget]");
  var f = this.fitFields;
  var clear = function (state, line, spent) {
    setAttr(box, "data-state", state);
    patchContent(doc, flagsOut, "");
    patchContent(doc, spentOut, spent || "");
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
  markField(doc, f.utilization, null);
  markField(doc, f.card, null);
  if (!this.splitRead) {
    clear("empty", this.fitWords("needs_config"));
    return;
  }
  var options = this.splitOptions(query);
  if (options === null) {
    clear("empty", this.results.getAttribute("data-empty") || "");
    return;
  }
  if (!options.ok) {
    // the split's own refusal (its fields are marked by the split section)
    clear("refused", refusalText(this.splitWords.bind(this), hasSplitWords.bind(this), options,
      this.symbols));
    return;
  }
  var utilization = fitUtilization(f.utilization ? f.utilization.value : "",
    readsDecimalComma(this.data));
  if (utilization === null) {
    clear("refused", this.fitWords("reason_fit_bad_utilization"));
    markField(doc, f.utilization, statusId);
    return;
  }
  var perValue = options.kvBytesPerValue;
  var kvDtype = cmp(perValue, options.elementBytes) === 0 ? "auto" :
    cmp(perValue, rational(1n)) === 0 ? "fp8" : null;
  if (kvDtype === null) {
    clear("refused", this.fitWords("reason_fit_kv_dtype"));
    return;
  }
  var split = vllmSplit(this.splitRead, options);
  if (!split.ok) {
    clear("refused", refusalText(this.splitWords.bind(this), hasSplitWords.bind(this), split,
      this.symbols));
    return;
  }
  var card = null;
  var wanted = f.card ? f.card.value : "";
  this.data.cards.forEach(function (c) {
    if (c.id === wanted && c.declaredBytes !== null) card = c;
  });
  if (card === null) {
    clear("empty", this.fitWords("choose_card"));
    markField(doc, f.card, statusId);
    return;
  }
  var solve = f.solve ? f.solve.value : "tokens";
  var positions = fitPositions(this.splitRead);
  var capacity = card.declaredBytes.n / card.declaredBytes.d;
  var answer = vllmFit(split, {
    capacityBytes: capacity,
    utilization: utilization.text,
    tokens: solve === "tokens" ? null : options.tokens,
    sequences: solve === "tokens" ? options.sequences : null,
    positions: positions,
  });
  var words = function (key, values) {
    return self.fitWords(key, values);
  };
  var lineOptions = {
    cardName: card.name,
    capacityBytes: capacity,
    utilization: utilization,
    reserveBytes: options.reserveBytes,
    gpus: split.gpus,
    ranks: split.ranks,
  };
  if (!answer.ok) {
    if (answer.reason === "fit_does_not_fit") {
      var lines = fitLines(words, answer, lineOptions, this.symbols);
      clear("refused", lines.status.join(" "), lines.spent.join(" "));
    } else {
      clear("refused", refusalText(words, hasFitWords.bind(this), answer, this.symbols));
    }
    return;
  }
  setAttr(box, "data-state", "ok");
  var flags = vllmFitFlags(answer, split, {
    utilization: utilization.text,
    kvCacheDtype: kvDtype,
    tp: options.tp,
    pp: options.pp,
    ep: options.ep,
  });
  var command = ["vllm", "serve", this.fitWords("model_placeholder")];
  flags.forEach(function (flag) {
    command.push(flag[0]);
    if (flag[1]) command.push(flag[1]);
  });
  var said = fitLines(words, answer, lineOptions, this.symbols);
  patchContent(doc, flagsOut, command.join(" "));
  patchContent(doc, spentOut, said.spent.join(" "));
  patchContent(doc, status, said.status.join(" "));
}
