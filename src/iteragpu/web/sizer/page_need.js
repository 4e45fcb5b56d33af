/*
 * The task drives the page: what the fullest GPU needs for the task the reader chose (need.js),
 * every card judged against it (the candidates' table and the chart), the need's table, the
 * summary that stays in view, and the sections shown for the task. Mirrors no Python module
 * (browser only); the figures are need.js's, which mirror iteragpu.gpus.need and cli.needs.
 *
 * It wraps the Sizer's render and drawChart (startNeed): every result they are given is first
 * judged for the task, so no path of the page (an edit, a config read, a resize, a link
 * opened) can show cards judged against a smaller figure than the need.
 */

import { rational } from "./rational.js";
import { gib } from "./memory.js";
import { formatBytes, formatNumber } from "./format.js";
import { compute } from "./compute.js";
import { htmlNode, keyed, patchContent, setAttr, setHidden } from "./dom.js";
import { inferenceNeed, judge, splitNeed, trainingNeed } from "./need.js";
import { vllmSplit } from "./split.js";

const TRAINING_TASKS = ["training", "adaptation"];
// How many names of the cards that hold the need on paper the summary lists.
const SUMMARY_CARDS = 3;

/** True for a task whose need is a training run's (full training or adaptation). */
export function isTraining(task) {
  return TRAINING_TASKS.indexOf(task) >= 0;
}

function NeedView(sizer) {
  var doc = sizer.doc;
  this.sizer = sizer;
  this.doc = doc;
  this.summary = doc.getElementById("sizer-summary");
  this.table = doc.getElementById("sizer-need");
  this.status = doc.getElementById("sizer-need-status");
  this.messages = doc.getElementById("sizer-need-messages");
  this.taskOnly = doc.querySelectorAll("[data-sizer-task-only]");
}

/** A text of the need's messages, `{name}` filled. */
NeedView.prototype.text = function (key, values) {
  var el = this.messages ? this.messages.querySelector('[data-need-text="' + key + '"]') : null;
  var template = el ? el.textContent.trim() : key;
  return template.replace(/\{([a-z_]+)\}/g, function (whole, name) {
    return values && Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole;
  });
};

/**
 * The result judged for its task: `need` (null where the task's need cannot be computed
 * yet, with `needReason`), and `candidates` against that need. An invalid result is left as
 * it is (the page shows its errors).
 */
NeedView.prototype.judgeResult = function (result) {
  if (!result.valid || result.need !== undefined) return result;
  var sizer = this.sizer;
  var task = result.query.task;
  var judged = Object.assign({}, result);
  var needed = null;
  var reason = null;
  if (isTraining(task)) {
    var plan = sizer.training ? sizer.training.plan : null;
    if (!plan) reason = "needs_config";
    else if (!plan.valid) reason = "training_refused";
    else needed = trainingNeed(plan, result.reserveBytes);
  } else {
    needed = this.splitNeed(result) || inferenceNeed(result);
  }
  judged.need = needed;
  judged.needReason = reason;
  if (needed === null) {
    judged.candidates = [];
  } else if (needed.basis !== "one_gpu") {
    // compute() judged one GPU's inference need; a split or a training run has its own.
    judged.candidates = judge(sizer.data.cards, needed, result.days);
  }
  return judged;
};

/** The fullest rank's need where the reader split the model (TP x PP above 1), else null. */
NeedView.prototype.splitNeed = function (result) {
  var sizer = this.sizer;
  if (!sizer.splitRead || !sizer.splitOptions) return null;
  var options = sizer.splitOptions(result.query);
  if (!options || !options.ok || options.tp * options.pp <= 1n) return null;
  var split = vllmSplit(sizer.splitRead, options);
  return split.ok ? splitNeed(split, options.reserveBytes) : null;
};

/** Show the sections of the chosen task, hide the others'. */
NeedView.prototype.showTask = function (task) {
  var training = isTraining(task);
  Array.prototype.forEach.call(this.taskOnly, function (el) {
    var only = el.getAttribute("data-sizer-task-only");
    setHidden(el, only === "training" ? !training : training);
  });
};

/** The need's table: each part, its GiB and bytes, the parts to measure, the total. */
NeedView.prototype.renderTable = function (result) {
  if (!this.table) return;
  var self = this;
  var doc = this.doc;
  var symbols = this.sizer.symbols;
  var body = this.table.tBodies[0];
  var needed = result.valid ? result.need : null;
  if (!needed) {
    patchContent(doc, body, []);
    setAttr(this.table, "data-state", result.valid ? "empty" : "error");
    if (this.status) {
      patchContent(doc, this.status, result.valid && result.needReason
        ? this.text("reason_" + result.needReason)
        : "");
    }
    return;
  }
  setAttr(this.table, "data-state", "ok");
  var row = function (key, label, bytes, kind) {
    return keyed(key, htmlNode("tr", { "data-part": key }, [
      htmlNode("th", { scope: "row" }, label),
      htmlNode("td", { "data-column": "gib" },
        bytes === null ? "-" : formatNumber(gib(bytes), 2, symbols)),
      htmlNode("td", { "data-column": "bytes", "data-bytes": bytes === null ? "" : String(bytes.n / bytes.d) },
        bytes === null ? self.text("to_measure") : formatBytes(bytes, symbols)),
      htmlNode("td", { "data-column": "kind" }, kind || ""),
    ]));
  };
  var rows = needed.parts.map(function (p, index) {
    var kind = p.layerKind ? self.sizer.message("data-layer-kind", p.layerKind) : "";
    return row(p.part + "-" + index, self.text("part_" + p.part), p.bytes, kind);
  });
  needed.missing.forEach(function (code) {
    rows.push(row("missing-" + code, self.text("part_" + code), null, ""));
  });
  rows.push(row("total", this.text(needed.complete ? "total" : "total_lower_bound"), needed.bytes,
    this.text("cards_" + (needed.cards === 1n ? "one" : "many"), {
      cards: formatNumber(rational(needed.cards), 0, symbols),
    })));
  patchContent(doc, body, rows);
  if (this.status) {
    patchContent(doc, this.status, this.text("basis_" + needed.basis + (needed.complete ? "" : "_incomplete")));
  }
};

/** The summary that stays in view: the need, and the cards that hold it on paper. */
NeedView.prototype.renderSummary = function (result) {
  if (!this.summary) return;
  var doc = this.doc;
  var symbols = this.sizer.symbols;
  var lines = [];
  var state;
  if (!result.valid) {
    state = "error";
    lines.push(keyed("error", htmlNode("p", {}, this.text("summary_error"))));
  } else if (!result.need) {
    state = "empty";
    lines.push(keyed("need", htmlNode("p", {}, this.text("reason_" + result.needReason))));
  } else {
    state = "ok";
    var needed = result.need;
    lines.push(keyed("need", htmlNode("p", { "data-summary": "need" },
      this.text(needed.complete ? "summary_need" : "summary_need_lower_bound", {
        gib: formatNumber(gib(needed.bytes), 2, symbols),
        cards: formatNumber(rational(needed.cards), 0, symbols),
      }))));
    var holding = result.candidates.filter(function (c) {
      return c.status !== "excluded" && c.holdsNeedOnPaper;
    });
    var excluded = result.candidates.filter(function (c) {
      return c.status === "excluded";
    }).length;
    var names = holding.slice(0, SUMMARY_CARDS).map(function (c) {
      return c.name;
    }).join(", ");
    var more = holding.length - SUMMARY_CARDS;
    lines.push(keyed("cards", htmlNode("p", { "data-summary": "cards" },
      holding.length === 0
        ? this.text("summary_no_card")
        : this.text(more > 0 ? "summary_cards_more" : "summary_cards", {
          names: names,
          more: formatNumber(rational(BigInt(Math.max(more, 0))), 0, symbols),
          excluded: formatNumber(rational(BigInt(excluded)), 0, symbols),
        }))));
  }
  setAttr(this.summary, "data-state", state);
  patchContent(doc, this.summary.querySelector("[data-summary-body]") || this.summary, lines);
};

/** Start the task-driven view: wrap render and drawChart, follow the task and the training. */
export function startNeed(doc, sizer) {
  var view = new NeedView(sizer);
  var render = sizer.render;
  var draw = sizer.drawChart;
  sizer.judgeResult = function (result) {
    return view.judgeResult(result);
  };
  sizer.render = function (result) {
    var judged = view.judgeResult(result);
    view.showTask(judged.query ? judged.query.task : null);
    render.call(sizer, judged);
    view.renderTable(judged);
    view.renderSummary(judged);
    sizer.lastJudged = judged;
    return judged;
  };
  sizer.drawChart = function (result) {
    var judged = view.judgeResult(result);
    if (judged.valid && !judged.need) {
      // No need for this task yet (a training run without a config): nothing to draw.
      var figure = sizer.chart;
      if (!figure) return;
      setAttr(figure, "data-state", "empty");
      patchContent(doc, figure.querySelector("[data-chart-plot]"), []);
      patchContent(doc, doc.getElementById("memory-chart-text"),
        view.text("reason_" + judged.needReason));
      return;
    }
    draw.call(sizer, judged);
  };
  // The training form changes the need: judge again (its own view recomputes the plan first).
  var refresh = function () {
    // Figures kept from the last input while a config does not read (page.js markStale)
    // stay as they are, marked stale, until the config reads or a field is edited.
    if (sizer.results && sizer.results.getAttribute("data-stale") === "true") return;
    sizer.render(compute(sizer.read(), sizer.data));
  };
  sizer.refreshNeed = refresh;
  refresh();
  return view;
}
