/*
 * The page itself: the Sizer (form, URL, figures, short list, config reading) and start().
 * Mirrors no Python module (browser only).
 */

import { rational } from "./rational.js";
import { readsDecimalComma, STRIP, suffixReadingTexts } from "./numbers.js";
import { gib } from "./memory.js";
import { fillTemplate, formatBytes, formatNumber } from "./format.js";
import { loadCatalog } from "./catalog.js";
import { has } from "./objects.js";
import { CONFIG_MAX_CHARS, MLA_LATENT } from "./config_reader.js";
import { readConfig } from "./config.js";
import { compute, merge, queryFromSearch, texts } from "./compute.js";
import { htmlNode, keyed, patchContent, setAttr, setHidden } from "./dom.js";
import { drawChart, drawSplitChart } from "./chart.js";
import { startTraining } from "./page_training.js";
import { renderSplit, splitOptions, splitWords } from "./page_split.js";
import { fitWords, renderFit } from "./page_fit.js";
import { startSheet } from "./page_sheet.js";
import { startNeed } from "./page_need.js";
import {
  decodeConfig, encodeConfig, linkConfigToken, searchFromState, stateFromSearch,
} from "./link_state.js";

// ------------------------------------------------------------------------------------------
// DOM
// ------------------------------------------------------------------------------------------

const PRESET = "data-sizer-preset"; // the weight-format select: 16, 8, 4 or custom
const OUTPUT_IDS = [
  "weights-gib", "range-gib", "kv-bytes", "kv-gib", "kv-bytes-per-token", "state-bytes",
  "model-total-gib",
];
// What a config that does not read leaves standing, marked stale, until it reads or a field
// is edited: the figures, their tables and charts, the split and the fit.
const STALE_IDS = [
  "sizer-results", "sizer-kv-kinds", "memory-chart", "sizer-candidates", "sizer-split",
  "sizer-fit",
];
// The grammar's refusals of a number it could not read at all, which a reader's grouping of
// thousands (16,384 where the dot is the decimal mark, 1.234.567) also gets: reworded.
const GROUPING_REASONS = ["not_count", "not_token_count", "not_number"];
// Digits grouped by thousands with one mark (`,` or `.`), then perhaps a fraction after the
// other mark, an exponent and a suffix: 16,384 · 1,234.5 · 1.234,5 · 1.000.000 · 1,500M.
const GROUPED = new RegExp(
  "^([+-]?[1-9][0-9]{0,2})((?:([,.])[0-9]{3})(?:\\3[0-9]{3})*)(?:(?!\\3)[,.]([0-9]+))?" +
    "([eE][+-]?[0-9]+)?([KkMmBbGgTt])?$"
);

/**
 * A number the reader grouped by thousands, which the grammar does not read: {mark} ("comma"
 * or "dot", the grouping mark), {digits} (the number without it, its fraction after the page's
 * decimal mark) and {underscored} (grouped with `_`, as the grammar allows); null otherwise.
 */
export function digitGrouping(text, decimalComma) {
  var match = GROUPED.exec(String(text).replace(STRIP, ""));
  if (match === null) return null;
  var mark = match[3];
  var groups = match[2].split(mark);
  var rest = (match[4] !== undefined ? (decimalComma ? "," : ".") + match[4] : "") +
    (match[5] || "") + (match[6] || "");
  return {
    mark: mark === "," ? "comma" : "dot",
    digits: match[1] + groups.join("") + rest,
    underscored: match[1] + groups.join("_") + rest,
  };
}

/** Each field of `root` named by `attribute`, by that name. */
function fieldsByAttribute(root, attribute) {
  var fields = {};
  if (!root) return fields;
  Array.prototype.forEach.call(root.querySelectorAll("[" + attribute + "]"), function (el) {
    fields[el.getAttribute(attribute)] = el;
  });
  return fields;
}

/** What each section's fields hold: {section: {key: value}}. */
function sectionValues(sections) {
  var values = {};
  Object.keys(sections).forEach(function (name) {
    values[name] = {};
    Object.keys(sections[name]).forEach(function (key) {
      values[name][key] = sections[name][key].value;
    });
  });
  return values;
}

/** Put a value in a field; a select keeps its choice where it has no such option. */
function setFieldValue(el, value) {
  if (el.tagName === "SELECT") {
    var known = Array.prototype.some.call(el.options, function (option) {
      return option.value === value;
    });
    if (!known) return;
  }
  el.value = value;
}

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
  // The query's fields: the form's, and any the page keeps outside it (the task).
  Array.prototype.forEach.call(doc.querySelectorAll("[data-sizer-key]"), function (el) {
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
  // The link (link_state.js): the other sections' fields that travel in it, each written where
  // it differs from what the page opened with, and the pasted config's encoded token.
  this.linkSections = {
    train: fieldsByAttribute(doc.getElementById("sizer-train-form"), "data-sizer-train"),
    split: this.splitFields,
    fit: this.fitFields,
    config: this.mlaLayout ? { layout: this.mlaLayout } : {},
  };
  this.linkDefaults = sectionValues(this.linkSections);
  this.link = { text: null, token: null, encoding: null, restoring: null };
  this.linkNote = this.insertNote("sizer-link-note", this.configStatus, "afterend");
  this.staleNote = this.insertNote("sizer-stale-note", this.results, "beforebegin");
  // Each field's own description (a help text), kept beside its error's.
  this.ownDescriptions = {};
  var own = this.ownDescriptions;
  Object.keys(fields).concat([null]).forEach(function (key) {
    var el = key === null ? this.preset : fields[key];
    own[el.id] = el.getAttribute("aria-describedby");
  }, this);
}

/** A short status line the page adds next to `anchor` (a link's or stale figures' note). */
Sizer.prototype.insertNote = function (id, anchor, where) {
  if (!anchor) return null;
  var note = this.doc.createElement("p");
  note.id = id;
  note.className = "sizer-note";
  note.setAttribute("role", "status");
  note.setAttribute("aria-live", "polite");
  anchor.insertAdjacentElement(where, note);
  return note;
};

/** Say `key`'s text of the page's messages in a note, or empty it (key null). */
Sizer.prototype.say = function (note, key) {
  if (!note) return;
  var text = key === null ? "" : this.message("data-text", key);
  if (note.textContent !== text) note.textContent = text;
  if (key === null) note.removeAttribute("data-note");
  else note.setAttribute("data-note", key);
};

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
  this.renderFieldErrors(result.valid ? [] : result.errors);
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
      var said = self.errorWords(error);
      return htmlNode("li", {
        id: "sizer-error-" + error.field,
        "data-field": error.field,
        "data-reason": error.reason,
        "data-message": said.key,
      }, self.label(error.field) + ": " + said.text);
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

/** The field an error belongs to: the weight-format select names the bits unless custom. */
Sizer.prototype.fieldFor = function (key) {
  return key === "bits" && this.preset.value !== "custom" ? this.preset : this.fields[key];
};

/**
 * An error's words and the message key they come from: the grammar's reason, or, where the
 * reader grouped thousands (16,384) and the grammar read no number at all, what to write.
 */
Sizer.prototype.errorWords = function (error) {
  var field = this.fields[error.field];
  var grouping = GROUPING_REASONS.indexOf(error.reason) >= 0 && field
    ? digitGrouping(field.value, readsDecimalComma(this.data))
    : null;
  if (grouping !== null) {
    var key = "grouped_" + grouping.mark;
    return { key: key, text: this.words("data-reason", key, grouping) };
  }
  return {
    key: error.reason,
    text: this.words("data-reason", error.reason, suffixReadingTexts(error, this.symbols)),
  };
};

/**
 * Each error right under its field too (the list below the figures stays): a line in the
 * field's wrapper that the field names with aria-describedby, removed once the field is right.
 */
Sizer.prototype.renderFieldErrors = function (errors) {
  var self = this;
  var doc = this.doc;
  var wanted = {};
  errors.forEach(function (error) {
    var el = self.fieldFor(error.field);
    if (el) wanted[el.id] = { el: el, error: error };
  });
  Object.keys(this.fields).map(function (key) {
    return self.fields[key];
  }).concat([this.preset]).forEach(function (el) {
    var id = "sizer-field-error-" + el.id;
    var line = doc.getElementById(id);
    var own = self.ownDescriptions[el.id];
    if (!has(wanted, el.id)) {
      if (line) line.remove();
      el.removeAttribute("aria-invalid");
      if (own) el.setAttribute("aria-describedby", own);
      else el.removeAttribute("aria-describedby");
      return;
    }
    var error = wanted[el.id].error;
    if (!line) {
      line = doc.createElement("p");
      line.id = id;
      line.className = "sizer-field-error";
      (el.closest(".sizer-field") || el.parentNode).appendChild(line);
    }
    var said = self.errorWords(error);
    line.setAttribute("data-field", error.field);
    line.setAttribute("data-reason", error.reason);
    line.setAttribute("data-message", said.key);
    // The label is read with the error, not shown twice under it.
    var label = doc.createElement("span");
    label.className = "sizer-visually-hidden";
    label.textContent = self.label(error.field) + ": ";
    line.replaceChildren(label, doc.createTextNode(said.text));
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", own ? id + " " + own : id);
  });
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
    status.removeAttribute("data-reason");
    // No config now: the split and the fit have none to place, and the link holds none.
    this.splitRead = null;
    this.update();
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

/**
 * The figures shown are the last input's, not the config the reader is typing (one that does
 * not read yet): kept, marked stale with a short note, until a config reads or a field is
 * edited (update() unmarks them).
 */
Sizer.prototype.markStale = function (stale) {
  var doc = this.doc;
  STALE_IDS.forEach(function (id) {
    var el = doc.getElementById(id);
    if (!el) return;
    if (stale) el.setAttribute("data-stale", "true");
    else el.removeAttribute("data-stale");
  });
  if (stale) this.results.setAttribute("data-state", "stale");
  this.say(this.staleNote, stale ? "stale" : null);
};

/** One line saying why the config was not read, in the page's words; the form is kept, and
 * the figures of the previous input stay, marked stale (they are not the pasted config's). */
Sizer.prototype.configFailure = function (reason, key) {
  this.markStale(true);
  this.writeAddress();
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
  this.markStale(false);
  var query = this.read();
  var result = compute(query, this.data);
  this.render(result);
  this.renderSplit(query);
  this.renderFit(query);
  this.writeAddress();
  return result;
};

// ------------------------------------------------------------------------------------------
// The link: the whole state in the address (link_state.js), and back from it
// ------------------------------------------------------------------------------------------

/** The published model chosen by name, or null. */
Sizer.prototype.chosenPreset = function () {
  var name = this.modelPreset ? this.modelPreset.value : "";
  return presetNamed(this.data, name);
};

function presetNamed(data, name) {
  return (data.presets || []).filter(function (preset) {
    return name && preset.name === name;
  })[0] || null;
}

/**
 * The model a link names: {model} for a published model chosen and unedited, {token} for a
 * pasted config once encoded and short enough, {tooLong} where it is not. A config not yet
 * encoded is encoded now; the address is written again when it is.
 */
Sizer.prototype.linkConfig = function () {
  var none = { model: null, token: null, tooLong: false };
  if (this.link.restoring !== null) return { model: null, token: this.link.restoring, tooLong: false };
  var text = this.configText ? this.configText.value : "";
  if (String(text).replace(STRIP, "") === "") return none;
  var preset = this.chosenPreset();
  if (preset && preset.text === text) return { model: preset.name, token: null, tooLong: false };
  if (this.link.text !== text) {
    this.encodeLinkConfig(text);
    return none;
  }
  var token = linkConfigToken(this.link.token);
  return { model: null, token: token, tooLong: token === null && Boolean(this.link.token) };
};

/** Encode a pasted config for the link, then write the address if it is still the one shown. */
Sizer.prototype.encodeLinkConfig = function (text) {
  if (this.link.encoding === text) return;
  this.link.encoding = text;
  var self = this;
  var done = function (token) {
    if (self.link.encoding !== text) return;
    self.link.encoding = null;
    self.link.text = text;
    self.link.token = token;
    if (self.configText.value === text) self.writeAddress();
  };
  encodeConfig(text).then(done, function () {
    done(null); // no CompressionStream: the link keeps everything but the config
  });
};

/** Write the whole state into the address, and say by the config when it is left out. */
Sizer.prototype.writeAddress = function () {
  var config = this.linkConfig();
  this.say(this.linkNote, config.tooLong ? "link_config_too_long" : null);
  var sections = {};
  var values = sectionValues(this.linkSections);
  var defaults = this.linkDefaults;
  Object.keys(values).forEach(function (name) {
    sections[name] = { values: values[name], defaults: defaults[name] };
  });
  var search = searchFromState({
    query: this.read(),
    defaults: this.data.defaults,
    model: config.model,
    config: config.token,
    sections: sections,
  });
  try {
    this.win.history.replaceState(
      this.win.history.state, "", this.win.location.pathname + search + this.win.location.hash);
  } catch (error) {
    // Some browsers refuse too many history updates in a row; the figures are still right.
  }
};

/** Put a link's section settings (training, split, fit, how a config is read) into the page. */
Sizer.prototype.restoreSections = function (sections) {
  var fields = this.linkSections;
  Object.keys(fields).forEach(function (name) {
    var values = sections[name] || {};
    Object.keys(fields[name]).forEach(function (key) {
      if (has(values, key)) setFieldValue(fields[name][key], values[key]);
    });
  });
};

/**
 * Open a link's model: a published one by name, or a pasted config decoded (asynchronously).
 * It is read as a pasted one is, then the link's fields, which the reader may have edited
 * after reading it, are put back and everything recomputed. Resolves to the config read, or
 * null where the link holds none or it cannot be read.
 */
Sizer.prototype.restoreConfig = function (link, query) {
  var self = this;
  if (!this.configText || (!link.model && !link.config)) return Promise.resolve(null);
  if (link.model) {
    var preset = presetNamed(this.data, link.model);
    if (!preset) return Promise.resolve(this.linkConfigUnreadable());
    this.modelPreset.value = preset.name;
    return Promise.resolve(this.openLinkConfig(preset.text, null, link, query));
  }
  this.link.restoring = link.config;
  var open = function (text) {
    self.link.restoring = null;
    if (self.configText.value !== "") return null; // one the reader gave meanwhile wins
    if (text === null) return self.linkConfigUnreadable();
    return self.openLinkConfig(text, link.config, link, query);
  };
  return decodeConfig(link.config).then(open, function () {
    return open(null);
  });
};

Sizer.prototype.openLinkConfig = function (text, token, link, query) {
  this.configText.value = text;
  if (token) {
    this.link.text = text;
    this.link.token = token;
  }
  var read = this.loadConfig(text); // as pasting does; the training view follows it
  this.fill(query);
  this.restoreSections(link.sections);
  this.update();
  if (this.training) this.training.update();
  if (read && !read.ok) this.markStale(true);
  return read;
};

/** The link's config could not be read (not one this page wrote, or a model no longer
 * published): said by the config field; the rest of the link is open. */
Sizer.prototype.linkConfigUnreadable = function () {
  var status = this.configStatus;
  status.setAttribute("data-state", "error");
  status.setAttribute("data-reason", "link_config_unreadable");
  status.textContent = this.words("data-config-reason", "link_config_unreadable");
  return null;
};

/** Start the sizer on a page: state from the URL, then recompute on every input. */
export function start(doc, win) {
  var dataElement = doc.getElementById("sizer-data");
  if (!dataElement || !doc.getElementById("sizer-form")) return null;
  var sizer = new Sizer(doc, win, JSON.parse(dataElement.textContent));
  var query = queryFromSearch(win.location.search, sizer.data.defaults);
  var link = stateFromSearch(win.location.search, sizer.data.defaults, sizer.linkDefaults);
  sizer.fill(query);
  sizer.render(compute(query, sizer.data));
  sizer.renderFit(query); // its list of cards, which the link's card is one of
  sizer.restoreSections(link.sections);
  sizer.renderSplit(query);
  sizer.renderFit(query);
  var onInput = function () {
    sizer.update();
  };
  sizer.form.addEventListener("input", onInput);
  sizer.form.addEventListener("change", onInput);
  Object.keys(sizer.fields).forEach(function (key) {
    var el = sizer.fields[key];
    if (sizer.form.contains(el)) return;
    el.addEventListener("input", onInput);
    el.addEventListener("change", onInput);
  });
  sizer.form.addEventListener("submit", function (event) {
    event.preventDefault();
  });
  var trainForm = doc.getElementById("sizer-train-form");
  if (trainForm) {
    // The training view recomputes itself (page_training.js); the address follows it.
    var onTrainInput = function () {
      sizer.writeAddress();
    };
    trainForm.addEventListener("input", onTrainInput);
    trainForm.addEventListener("change", onTrainInput);
  }
  if (sizer.configText) {
    sizer.configText.addEventListener("input", function () {
      // An edited published config is a pasted one: the list no longer names it.
      var chosen = sizer.chosenPreset();
      if (chosen && chosen.text !== sizer.configText.value) sizer.modelPreset.value = "";
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
  // The task drives the page: every result is judged for it from here on (page_need.js).
  sizer.need = startNeed(doc, sizer);
  sizer.sheet = startSheet(doc, sizer);
  // A link's model last: its config is decoded, then read as a pasted one (restoreConfig).
  sizer.restored = sizer.restoreConfig(link, query);
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
