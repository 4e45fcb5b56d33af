/*
 * The training mode on the page (#training): its form, table and status line.
 * Mirrors no Python module (browser only).
 */

import { rational } from "./rational.js";
import { readsDecimalComma, STRIP } from "./numbers.js";
import { gib } from "./memory.js";
import { fillTemplate, formatNumber } from "./format.js";
import { htmlNode, keyed, patchContent, setHidden } from "./dom.js";
import { trainingPlan } from "./training.js";

// ------------------------------------------------------------------------------------------
// The training mode on the page (#training): its own form, its table of model states and
// its status line; computed from the config the page has read (trainingPlan above), never
// from the parameter count alone. Its plan is the need the cards are judged against when the
// task is training or adaptation (page_need.js).
// ------------------------------------------------------------------------------------------

function TrainingView(sizer) {
  var doc = sizer.doc;
  this.sizer = sizer;
  this.doc = doc;
  this.form = doc.getElementById("sizer-train-form");
  this.status = doc.getElementById("sizer-train-status");
  this.states = doc.getElementById("sizer-train-states");
  this.ranks = doc.getElementById("sizer-train-ranks");
  this.messages = doc.getElementById("sizer-train-messages");
  this.fields = {};
  var fields = this.fields;
  Array.prototype.forEach.call(this.form.querySelectorAll("[data-sizer-train]"), function (el) {
    fields[el.getAttribute("data-sizer-train")] = el;
  });
}

TrainingView.prototype.text = function (attribute, key, values) {
  var el = this.messages.querySelector("[" + attribute + '="' + key + '"]');
  return fillTemplate(el ? el.textContent.trim() : key, values || {});
};

TrainingView.prototype.read = function () {
  var form = {};
  var fields = this.fields;
  Object.keys(fields).forEach(function (key) {
    form[key] = fields[key].value;
  });
  return form;
};

TrainingView.prototype.say = function (state, reason, line) {
  this.status.setAttribute("data-state", state);
  if (reason) {
    this.status.setAttribute("data-reason", reason);
  } else {
    this.status.removeAttribute("data-reason");
  }
  this.status.textContent = line;
};

TrainingView.prototype.clear = function () {
  patchContent(this.doc, this.states.tBodies[0], []);
  patchContent(this.doc, this.ranks.tBodies[0], []);
  setHidden(this.ranks, true);
  var fields = this.fields;
  Object.keys(fields).forEach(function (key) {
    fields[key].removeAttribute("aria-invalid");
  });
};

/** Recompute from the read config and the form, keep the plan (the page judges the cards
 * against its need: page_need.js), and judge again. */
TrainingView.prototype.update = function () {
  this.plan = this.compute();
  if (this.sizer.refreshNeed) this.sizer.refreshNeed();
  return this.plan;
};

/** The plan from the read config and the form; say why where nothing is stated. */
TrainingView.prototype.compute = function () {
  var self = this;
  var sizer = this.sizer;
  var symbols = sizer.symbols;
  this.clear();
  var text = sizer.configText ? sizer.configText.value : "";
  if (String(text).replace(STRIP, "") === "") {
    this.say("empty", null, this.text("data-train-text", "no_config"));
    return null;
  }
  var plan = trainingPlan(text, this.read(), sizer.data, readsDecimalComma(sizer.data));
  if (!plan.valid) {
    if (plan.field) {
      var field = this.fields[plan.field];
      field.setAttribute("aria-invalid", "true");
      var label = this.doc.querySelector('label[for="' + field.id + '"]');
      this.say("error", plan.reason, (label ? label.textContent.trim() : plan.field) + ": " +
        sizer.words("data-reason", plan.reason, {}));
    } else if (plan.config) {
      // The config reader's own status line above says why.
      this.say("error", plan.reason, this.text("data-train-text", "config_refused"));
    } else if (this.messages.querySelector('[data-train-reason="' + plan.reason + '"]')) {
      var values = {};
      Object.keys(plan.values || {}).forEach(function (key) {
        values[key] = String(plan.values[key]);
      });
      this.say("error", plan.reason, this.text("data-train-reason", plan.reason, values));
    } else {
      this.say("error", plan.reason, this.text("data-train-text", "refused"));
    }
    return plan;
  }
  var count = function (value) {
    return formatNumber(rational(BigInt(value)), 0, symbols);
  };
  var stated = this.text("data-train-text", "stated");
  var row = function (key, label, bytes) {
    var value = rational(bytes);
    return keyed(key, htmlNode("tr", { "data-item": key }, [
      htmlNode("td", { "data-column": "item" }, label),
      htmlNode("td", { "data-column": "gib" }, formatNumber(gib(value), 2, symbols)),
      htmlNode("td", { "data-column": "bytes", "data-bytes": String(bytes) }, count(bytes)),
      htmlNode("td", { "data-column": "status", "data-status": "estimated" }, stated),
    ]));
  };
  var rows = plan.roles.map(function (r) {
    return row("role-" + r.role, self.text("data-train-text", "role_" + r.role, {
      tensors: count(r.tensors),
      state: self.text("data-train-text", r.trainable ? "trained" : "frozen"),
    }), r.bytes);
  });
  var sharded = plan.request.shard !== "none";
  if (sharded) rows.push(row("weights-share", this.text("data-train-text", "weights_share"), plan.weightsBytes));
  rows.push(row("gradients", this.text("data-train-text", "gradients"), plan.gradientsBytes));
  rows.push(row("optimizer", this.text("data-train-text", "optimizer"), plan.optimizerBytes));
  if (plan.masterWeightsBytes || plan.masterGradientsBytes) {
    rows.push(row("master-weights", this.text("data-train-text", "master_weights"), plan.masterWeightsBytes));
    rows.push(row("master-gradients", this.text("data-train-text", "master_gradients"),
      plan.masterGradientsBytes));
  }
  rows.push(row("model-states", this.text("data-train-text", "model_states"), plan.modelStatesBytes));
  if (plan.hostBytes) rows.push(row("host", this.text("data-train-text", "host"), plan.hostBytes));
  var shape = plan.request;
  var activations = this.text("data-train-text", "activations");
  if (shape.sequence_length !== null && shape.micro_batch !== null) {
    activations = this.text("data-train-text", "activations_shape", {
      sequence_length: count(shape.sequence_length),
      micro_batch: count(shape.micro_batch),
      grad_accum: count(shape.grad_accum),
      checkpointing: this.text("data-train-text", "checkpointing_" + shape.checkpointing),
    });
  }
  rows.push(keyed("activations", htmlNode("tr", { "data-item": "activations" }, [
    htmlNode("td", { "data-column": "item" }, activations),
    htmlNode("td", { "data-column": "gib" }, "-"),
    htmlNode("td", { "data-column": "bytes" }, "-"),
    htmlNode("td", { "data-column": "status", "data-status": "unknown" },
      this.text("data-train-text", "to_measure")),
  ])));
  patchContent(this.doc, this.states.tBodies[0], rows);
  var line = this.text("data-train-text", "summary", {
    model_type: plan.modelType,
    parameters: count(plan.parameters),
    trainable: count(plan.trainableParameters),
    tensors: count(plan.trainableTensors),
  });
  if (sharded) {
    line += " " + this.text("data-train-text", "sharded", {
      shard: plan.request.shard, gpus: count(plan.request.gpus), rank: count(plan.firstToFill),
    });
    setHidden(this.ranks, false);
    patchContent(this.doc, this.ranks.tBodies[0], plan.ranks.map(function (r) {
      return keyed("rank " + r.rank, htmlNode("tr", { "data-rank": String(r.rank) }, [
        htmlNode("td", {}, count(r.rank)),
        htmlNode("td", { "data-bytes": String(r.modelStatesBytes) }, count(r.modelStatesBytes)),
        htmlNode("td", { "data-bytes": String(r.paddingBytes) }, count(r.paddingBytes)),
      ]));
    }));
  }
  this.say("ok", null, line);
  return plan;
};

/** The training mode of a started page, or null where the page has none. */
export function startTraining(doc, sizer) {
  if (!doc.getElementById("sizer-train-form") || !sizer.data.training) return null;
  var view = new TrainingView(sizer);
  var onInput = function () {
    view.update();
  };
  view.form.addEventListener("input", onInput);
  view.form.addEventListener("change", onInput);
  view.form.addEventListener("submit", function (event) {
    event.preventDefault();
  });
  // Every config the page reads (typed, dropped, chosen by name) goes through loadConfig:
  // the training mode follows it, without a change to the reader.
  var load = sizer.loadConfig;
  sizer.loadConfig = function (text) {
    var read = load.call(sizer, text);
    view.update();
    return read;
  };
  view.update();
  return view;
}
