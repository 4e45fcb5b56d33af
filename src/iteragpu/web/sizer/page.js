/*
 * The page itself: the Sizer (form, URL, figures, short list, config reading) and start().
 * Mirrors no Python module (browser only).
 */

import { rational } from "./rational.js";
import { STRIP, suffixReadingTexts } from "./numbers.js";
import { gib } from "./memory.js";
import { fillTemplate, formatBytes, formatNumber } from "./format.js";
import { loadCatalog } from "./catalog.js";
import { has } from "./objects.js";
import { CONFIG_MAX_CHARS, MLA_LATENT } from "./config_reader.js";
import { readConfig } from "./config.js";
import { compute, merge, queryFromSearch, searchFromQuery, texts } from "./compute.js";
import { htmlNode, keyed, patchContent, setAttr, setHidden } from "./dom.js";
import { drawChart, drawSplitChart } from "./chart.js";
import { startTraining } from "./page_training.js";
import { renderSplit, splitOptions, splitWords } from "./page_split.js";
import { fitWords, renderFit } from "./page_fit.js";
import { startSheet } from "./page_sheet.js";

// ------------------------------------------------------------------------------------------
// DOM
// ------------------------------------------------------------------------------------------

const PRESET = "data-sizer-preset"; // the weight-format select: 16, 8, 4 or custom
const OUTPUT_IDS = [
  "weights-gib", "range-gib", "kv-bytes", "kv-gib", "kv-bytes-per-token", "state-bytes",
  "model-total-gib",
];

function Sizer(doc, win, data) {
  this.doc = doc;
  this.win = win;
  this.data = data;
  this.data.cards = loadCatalog(data.catalog);
  var lang = doc.documentElement.lang;
  this.symbols = data.symbols[lang] || data.symbols[data.lang];
  this.form = doc.getElementById("sizer-form");
  this.preset = this.form.querySelector("[" + PRESET + "]");
  this.fields = {};
  var fields = this.fields;
  Array.prototype.forEach.call(this.form.querySelectorAll("[data-sizer-key]"), function (el) {
    fields[el.getAttribute("data-sizer-key")] = el;
  });
  this.results = doc.getElementById("sizer-results");
  this.errorBox = doc.getElementById("sizer-error");
  this.errorList = doc.getElementById("sizer-error-list");
  this.messages = doc.getElementById("sizer-messages");
  this.quantizationNote = doc.getElementById("sizer-quantization-note");
  this.table = doc.getElementById("sizer-candidates");
  // Each cell's column name, which the narrow-screen layout shows beside the value.
  this.columnNames = Array.prototype.map.call(this.table.tHead.rows[0].cells, function (th) {
    return th.textContent.trim();
  });
  this.checklists = doc.querySelectorAll("[data-task-checklist]");
  this.outputs = OUTPUT_IDS.map(function (id) {
    return doc.getElementById(id);
  }).filter(Boolean);
  this.chart = doc.getElementById("memory-chart");
  this.kvKinds = doc.getElementById("sizer-kv-kinds");
  this.configText = doc.getElementById("sizer-config-text");
  this.modelPreset = doc.getElementById("sizer-preset"); // published configs by name
  this.configFile = doc.getElementById("sizer-config-file");
  this.configStatus = doc.getElementById("sizer-config-status");
  this.mlaLayout = doc.getElementById("sizer-mla-layout");
  this.mlaField = this.mlaLayout ? this.mlaLayout.closest("[data-sizer-mla]") : null;
  // Several GPUs (renderSplit): its own fields, kept apart from the single-GPU query.
  this.splitBox = doc.getElementById("sizer-split");
  this.splitMessages = doc.getElementById("sizer-split-messages");
  this.splitFields = {};
  var splitFields = this.splitFields;
  Array.prototype.forEach.call(doc.querySelectorAll("[data-sizer-split-key]"), function (el) {
    splitFields[el.getAttribute("data-sizer-split-key")] = el;
  });
  this.splitRead = null; // the config read last, which the split places
  // What fits, solved backwards (renderFit): the split above on one catalogue card.
  this.fitBox = doc.getElementById("sizer-fit");
  this.fitMessages = doc.getElementById("sizer-fit-messages");
  this.fitFields = {};
  var fitFields = this.fitFields;
  Array.prototype.forEach.call(doc.querySelectorAll("[data-sizer-fit-key]"), function (el) {
    fitFields[el.getAttribute("data-sizer-fit-key")] = el;
  });
}

Sizer.prototype.message = function (attribute, key) {
  // The page's messages never change: each is looked up once (dozens are read per edit).
  var cache = this.messageCache || (this.messageCache = {});
  var id = attribute + "=" + key;
  if (!has(cache, id)) {
    var el = this.messages.querySelector("[" + attribute + '="' + key + '"]');
    cache[id] = el ? el.textContent.trim() : key;
  }
  return cache[id];
};

Sizer.prototype.label = function (key) {
  var el = key === "bits" && this.preset.value !== "custom" ? this.preset : this.fields[key];
  var label = el && el.id ? this.doc.querySelector('label[for="' + el.id + '"]') : null;
  return label ? label.textContent.trim() : key;
};

/** Put a query into the form. */
Sizer.prototype.fill = function (query) {
  var fields = this.fields;
  Object.keys(fields).forEach(function (key) {
    fields[key].value = query[key];
  });
  var presets = Array.prototype.map.call(this.preset.options, function (o) {
    return o.value;
  });
  this.preset.value =
    query.bits !== "custom" && presets.indexOf(query.bits) >= 0 ? query.bits : "custom";
  this.showCustomBits();
  this.syncLayoutFields();
};

Sizer.prototype.showCustomBits = function () {
  var custom = this.preset.value === "custom";
  var wrapper = this.fields.bits.closest("[data-sizer-custom-bits]") || this.fields.bits;
  setHidden(wrapper, !custom);
};

/** The query the form holds. */
Sizer.prototype.read = function () {
  var query = {};
  var fields = this.fields;
  Object.keys(fields).forEach(function (key) {
    query[key] = fields[key].value;
  });
  if (this.preset.value !== "custom") query.bits = this.preset.value;
  return merge(query, this.data.defaults);
};

Sizer.prototype.render = function (result) {
  var self = this;
  var doc = this.doc;
  var empty = this.results.getAttribute("data-empty") || "";
  Object.keys(this.fields).forEach(function (key) {
    self.fields[key].removeAttribute("aria-invalid");
    self.fields[key].removeAttribute("aria-describedby");
  });
  this.preset.removeAttribute("aria-invalid");
  this.preset.removeAttribute("aria-describedby");
  var body = this.table.tBodies[0];

  var task = result.query.task;
  var taskKnown = this.data.tasks.indexOf(task) >= 0;
  Array.prototype.forEach.call(this.checklists, function (el) {
    setHidden(el, !(taskKnown && el.getAttribute("data-task-checklist") === task));
  });

  if (!result.valid) {
    this.outputs.forEach(function (output) {
      patchContent(doc, output, empty);
    });
    patchContent(doc, body, []);
    patchContent(doc, this.errorList, result.errors.map(function (error) {
      var el = error.field === "bits" && self.preset.value !== "custom"
        ? self.preset
        : self.fields[error.field];
      var id = "sizer-error-" + error.field;
      if (el) {
        // The field names its error, which a screen reader reads with it.
        el.setAttribute("aria-invalid", "true");
        el.setAttribute("aria-describedby", id);
      }
      return htmlNode("li", { id: id, "data-field": error.field, "data-reason": error.reason },
        self.label(error.field) +
        ": " +
        self.words("data-reason", error.reason, suffixReadingTexts(error, self.symbols)));
    }));
    setHidden(this.errorBox, false);
    setHidden(this.quantizationNote, true);
    setAttr(this.results, "data-state", "error");
    this.renderKinds(result);
    this.drawChart(result);
    return;
  }

  var shown = texts(result, this.symbols);
  this.outputs.forEach(function (output) {
    patchContent(doc, output, shown[output.id]);
  });
  patchContent(doc, this.errorList, []);
  setHidden(this.errorBox, true);
  setHidden(this.quantizationNote, !result.quantizationNotCounted);
  setAttr(this.results, "data-state", "ok");
  this.renderKinds(result);
  this.drawChart(result);
  var sheets = this.data.sheets || {};
  patchContent(doc, body, result.candidates.map(function (c) {
    var cells = [
      ["card", c.name],
      ["nominal-gb", c.nominalGb === null ? "" : formatNumber(c.nominalGb, 0, self.symbols)],
      [
        "declared-gib",
        c.declaredGib === null
          ? self.message("data-text", "unknown")
          : formatNumber(c.declaredGib, 2, self.symbols),
      ],
      [
        "paper-margin-gib",
        c.paperMarginBytes === null
          ? self.message("data-text", "unknown")
          : formatNumber(gib(rational(c.paperMarginBytes)), 2, self.symbols) + " (" +
            self.message("data-text", "basis_short_" + c.paperBasis) + ")",
      ],
      [
        "cost",
        c.cost === null
          ? self.message("data-text", "unknown") // price unknown, never 0
          : formatNumber(c.cost, 2, self.symbols) + " " + c.currency,
      ],
      ["memory", c.requirements.memory],
      ["package", c.requirements.package],
      ["overall", c.status],
      ["why", c.reasons.memory],
    ];
    var row = {
      "data-card-id": c.id,
      "data-status": c.status,
      "data-rank": c.rank === null ? "" : String(c.rank),
    };
    return htmlNode("tr", row, cells.map(function (cell, index) {
      var attributes = { "data-column": cell[0], "data-label": self.columnNames[index] || "" };
      var content = cell[1];
      if (cell[0] === "memory" || cell[0] === "package" || cell[0] === "overall") {
        attributes["data-status"] = cell[1];
        content = self.message("data-status", cell[1]);
      } else if (cell[0] === "why") {
        attributes["data-memory-reason"] = cell[1];
        content = self.message("data-memory-reason", cell[1]);
      } else if (cell[0] === "card" && sheets[c.id]) {
        content = [htmlNode("a", { href: sheets[c.id] }, cell[1])];
      }
      return htmlNode("td", attributes, content);
    }));
  }));
};

/** A text of the page's messages: `attribute`="key", with {name} fields filled. */
Sizer.prototype.words = function (attribute, key, values) {
  return fillTemplate(this.message(attribute, key), values || {});
};

/** The KV cache per layer kind, one row each. */
Sizer.prototype.renderKinds = function (result) {
  if (!this.kvKinds) return;
  var body = this.kvKinds.tBodies[0];
  var doc = this.doc;
  if (!result.valid) {
    patchContent(doc, body, []);
    return;
  }
  var self = this;
  patchContent(doc, body, result.kvGroups.map(function (g) {
    return keyed(g.kind, htmlNode("tr", { "data-kind": g.kind }, [
      ["kind", self.message("data-layer-kind", g.kind)],
      ["count", formatNumber(rational(g.count), 0, self.symbols)],
      [
        "window",
        g.window === null
          ? self.message("data-text", "no_window")
          : formatNumber(rational(g.window), 0, self.symbols),
      ],
      ["tokens-held", formatNumber(rational(g.tokensHeld), 0, self.symbols)],
      ["kv-bytes", formatBytes(g.bytes, self.symbols)],
    ].map(function (cell) {
      return htmlNode("td", { "data-column": cell[0] }, cell[1]);
    })));
  }));
};

/** Per-head fields are not read while values per token are given (an MLA config's). */
Sizer.prototype.syncLayoutFields = function () {
  var given = this.fields.kv_values && this.fields.kv_values.value !== "";
  ["kv_heads", "head_dim"].forEach(function (key) {
    if (this.fields[key]) this.fields[key].disabled = given;
  }, this);
};

/** Read a config's text and fill the form from it; a bad config leaves the form as it was. */
Sizer.prototype.loadConfig = function (text) {
  var status = this.configStatus;
  if (String(text).replace(STRIP, "") === "") {
    status.textContent = "";
    status.removeAttribute("data-state");
    return null;
  }
  var layout = this.mlaLayout ? this.mlaLayout.value : MLA_LATENT;
  var read = readConfig(text, layout, this.data.families, this.data);
  status.removeAttribute("data-reason");
  if (!read.ok) {
    this.splitRead = null;
    this.configFailure(read.reason, read.key);
    return read;
  }
  this.splitRead = read;
  var query = this.read();
  Object.keys(read.query).forEach(function (key) {
    query[key] = read.query[key];
  });
  this.fill(query);
  if (this.mlaField) this.mlaField.hidden = read.config.mla === null;
  this.update();
  var c = read.config;
  var self = this;
  var lines = [
    this.words("data-config-text", "summary", {
      model_type: c.modelType,
      parameters: formatNumber(rational(read.parameters), 0, this.symbols),
      layers: formatNumber(rational(c.layers), 0, this.symbols),
      windowed: formatNumber(rational(c.slidingLayers), 0, this.symbols),
      layout: this.words("data-config-layout", read.layout),
    }),
  ].concat(read.notes.map(function (note) {
    return self.words("data-config-note", note);
  }));
  status.setAttribute("data-state", "ok");
  status.textContent = lines.join(" ");
  return read;
};

/** The figures shown belong to no input the reader now sees (a refused config under them):
 * cleared, never left standing, until the form is edited or a config is read. */
Sizer.prototype.clearResults = function () {
  var empty = this.results.getAttribute("data-empty") || "";
  var doc = this.doc;
  this.outputs.forEach(function (output) {
    patchContent(doc, output, empty);
  });
  patchContent(doc, this.table.tBodies[0], []);
  patchContent(doc, this.errorList, []);
  this.errorBox.hidden = true;
  this.quantizationNote.hidden = true;
  this.results.setAttribute("data-state", "stale");
  this.renderKinds({ valid: false });
  this.drawChart({ valid: false });
  this.renderSplit(this.read());
  this.renderFit(this.read());
};

/** One line saying why the config was not read, in the page's words; the form is kept, and
 * the figures of the previous input are cleared (they are not the pasted config's). */
Sizer.prototype.configFailure = function (reason, key) {
  this.clearResults();
  var status = this.configStatus;
  status.setAttribute("data-state", "error");
  status.setAttribute("data-reason", reason);
  status.textContent = this.words("data-config-reason", reason, {
    key: key === null ? "" : String(key),
    limit: formatNumber(rational(BigInt(CONFIG_MAX_CHARS)), 0, this.symbols),
  });
};

/** A dropped or chosen file: read here, as text, if it is not too large. */
Sizer.prototype.loadFile = function (file) {
  var self = this;
  if (!file) return;
  if (file.size > CONFIG_MAX_CHARS) {
    this.configFailure("config_too_large", null);
    return;
  }
  file.text().then(function (text) {
    self.configText.value = text;
    self.loadConfig(text);
  });
};

/** Recompute from the form, show it, and keep the URL in step. */
Sizer.prototype.update = function () {
  this.showCustomBits();
  this.syncLayoutFields();
  var query = this.read();
  var result = compute(query, this.data);
  this.render(result);
  this.renderSplit(query);
  this.renderFit(query);
  var url =
    this.win.location.pathname +
    searchFromQuery(query, this.data.defaults) +
    splitSearch(this.splitFields) +
    this.win.location.hash;
  try {
    this.win.history.replaceState(this.win.history.state, "", url);
  } catch (error) {
    // Some browsers refuse too many history updates in a row; the figures are still right.
  }
  return result;
};

/** The split's fields in the URL, after the single-GPU query, where they are not 1, 1, off. */
function splitSearch(fields) {
  var params = new URLSearchParams();
  var defaults = { tp: "1", pp: "1", ep: "" };
  Object.keys(defaults).forEach(function (key) {
    var el = fields[key];
    if (el && el.value !== defaults[key]) params.set(key, el.value);
  });
  var text = params.toString();
  return text ? "&" + text : "";
}

/** Start the sizer on a page: state from the URL, then recompute on every input. */
export function start(doc, win) {
  var dataElement = doc.getElementById("sizer-data");
  if (!dataElement || !doc.getElementById("sizer-form")) return null;
  var sizer = new Sizer(doc, win, JSON.parse(dataElement.textContent));
  var query = queryFromSearch(win.location.search, sizer.data.defaults);
  sizer.fill(query);
  sizer.render(compute(query, sizer.data));
  var splitParams = new URLSearchParams(win.location.search);
  Object.keys(sizer.splitFields).forEach(function (key) {
    if (splitParams.has(key)) sizer.splitFields[key].value = splitParams.get(key);
  });
  sizer.renderSplit(query);
  sizer.renderFit(query);
  var onInput = function () {
    sizer.update();
  };
  sizer.form.addEventListener("input", onInput);
  sizer.form.addEventListener("change", onInput);
  sizer.form.addEventListener("submit", function (event) {
    event.preventDefault();
  });
  if (sizer.configText) {
    sizer.configText.addEventListener("input", function () {
      sizer.loadConfig(sizer.configText.value);
    });
    // A file dropped on the text area is read here, in the page: nothing is uploaded.
    sizer.configText.addEventListener("dragover", function (event) {
      event.preventDefault();
    });
    sizer.configText.addEventListener("drop", function (event) {
      event.preventDefault();
      sizer.loadFile(event.dataTransfer && event.dataTransfer.files[0]);
    });
  }
  if (sizer.modelPreset && sizer.configText) {
    // The published configs of iteragpu.models.presets, read as a pasted config would be.
    (sizer.data.presets || []).forEach(function (preset) {
      var option = doc.createElement("option");
      option.value = preset.name;
      option.textContent = preset.hf_repo;
      sizer.modelPreset.appendChild(option);
    });
    sizer.modelPreset.addEventListener("change", function () {
      var chosen = (sizer.data.presets || []).filter(function (preset) {
        return preset.name === sizer.modelPreset.value;
      })[0];
      if (!chosen) return;
      sizer.configText.value = chosen.text;
      sizer.loadConfig(chosen.text);
    });
  }
  if (sizer.configFile) {
    sizer.configFile.addEventListener("change", function () {
      sizer.loadFile(sizer.configFile.files[0]);
    });
  }
  if (sizer.mlaLayout) {
    sizer.mlaLayout.addEventListener("change", function () {
      if (sizer.configText && sizer.configText.value) sizer.loadConfig(sizer.configText.value);
    });
  }
  // The chart is drawn at the width it has: redrawn, once per frame at most, when that changes.
  var pending = false;
  win.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    win.requestAnimationFrame(function () {
      pending = false;
      sizer.chartWidth = null;
      sizer.drawChart(compute(sizer.read(), sizer.data));
    });
  });
  sizer.training = startTraining(doc, sizer);
  sizer.sheet = startSheet(doc, sizer);
  return sizer;
}

// The Sizer's methods kept beside their own part of the page.
Sizer.prototype.drawChart = drawChart;
Sizer.prototype.drawSplitChart = drawSplitChart;
Sizer.prototype.splitWords = splitWords;
Sizer.prototype.splitOptions = splitOptions;
Sizer.prototype.renderSplit = renderSplit;
Sizer.prototype.fitWords = fitWords;
Sizer.prototype.renderFit = renderFit;
