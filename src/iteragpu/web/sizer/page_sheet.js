/*
 * The filled load sheet on the page (#filled-sheet): built and copied when the reader asks.
 * Mirrors no Python module (browser only).
 */

import { readsDecimalComma } from "./numbers.js";
import { compute } from "./compute.js";
import { setAttr } from "./dom.js";
import { vllmSplit } from "./split.js";
import { sheetMarkdown, sizerSheet } from "./sheet.js";

function SheetView(sizer) {
  var doc = sizer.doc;
  this.sizer = sizer;
  this.box = doc.getElementById("sizer-sheet");
  this.button = doc.getElementById("sizer-sheet-copy");
  this.status = this.box.querySelector("[data-sheet-status]");
  this.output = this.box.querySelector("[data-sheet-output]");
  this.messages = doc.getElementById("sizer-sheet-messages");
  this.model = { name: null, hfRepo: null }; // the published model chosen by name, if any
}

SheetView.prototype.words = function (key) {
  var el = this.messages ? this.messages.querySelector('[data-sheet-text="' + key + '"]') : null;
  return el ? el.textContent.trim() : key;
};

/** The Markdown of the page's inputs now, or {refused: reason}. */
SheetView.prototype.text = function () {
  var sizer = this.sizer;
  var data = sizer.data;
  var query = sizer.read();
  var result = compute(query, data);
  if (!result.valid) return { refused: "invalid" };
  if (query.task !== "inference") return { refused: "task" };
  var lang = sizer.doc.documentElement.lang;
  var words = data.sheet.words[lang] || data.sheet.words[data.lang];
  var options = sizer.splitOptions(query);
  var split = null;
  var gpus = options && options.ok ? options.tp * options.pp : null;
  if (gpus === null || gpus > 1n) {
    // Several GPUs asked: the split of the config read, or no sheet (never one GPU's instead).
    var planned = sizer.splitRead && options && options.ok ? vllmSplit(sizer.splitRead, options) : null;
    if (planned === null || !planned.ok) return { refused: "split" };
    split = planned;
  }
  var model = {
    name: this.model.name,
    hfRepo: this.model.hfRepo,
    modelType: sizer.splitRead ? sizer.splitRead.config.modelType : null,
  };
  var sheet = sizerSheet(result, model, split, options, data.sheet.versions,
    readsDecimalComma(data));
  return { markdown: sheetMarkdown(sheet, words, sizer.symbols) };
};

/** Copy the sheet: to the clipboard where the browser lets the page, and shown below. */
SheetView.prototype.copy = function () {
  var self = this;
  var made = this.text();
  setAttr(this.box, "data-state", made.refused ? "refused" : "ok");
  if (made.refused) {
    this.output.hidden = true;
    this.status.textContent = this.words("refused_" + made.refused);
    return null;
  }
  this.output.querySelector("code").textContent = made.markdown;
  this.output.hidden = false;
  var shown = function (key) {
    self.status.textContent = self.words(key);
  };
  var clipboard = this.sizer.win.navigator && this.sizer.win.navigator.clipboard;
  if (clipboard && clipboard.writeText) {
    clipboard.writeText(made.markdown).then(function () {
      shown("copied");
    }, function () {
      shown("select");
    });
  } else {
    shown("select");
  }
  return made.markdown;
};

/** An edit: the sheet shown is no longer the inputs' (cleared, never left standing). */
SheetView.prototype.stale = function () {
  if (this.output.hidden && this.box.getAttribute("data-state") === "empty") return;
  this.output.hidden = true;
  this.status.textContent = "";
  setAttr(this.box, "data-state", "empty");
};

export function startSheet(doc, sizer) {
  if (!doc.getElementById("sizer-sheet") || !sizer.data.sheet) return null;
  var view = new SheetView(sizer);
  view.button.addEventListener("click", function () {
    view.copy();
  });
  var stale = function () {
    view.stale();
  };
  sizer.form.addEventListener("input", stale);
  sizer.form.addEventListener("change", stale);
  // The model's name: a published model chosen by name; a config typed or read from a file
  // has none the page knows.
  if (sizer.modelPreset) {
    sizer.modelPreset.addEventListener("change", function () {
      var chosen = (sizer.data.presets || []).filter(function (preset) {
        return preset.name === sizer.modelPreset.value;
      })[0];
      view.model = chosen ? { name: chosen.name, hfRepo: chosen.hf_repo } : { name: null, hfRepo: null };
      view.stale();
    });
  }
  [sizer.configText, sizer.configFile].forEach(function (el) {
    if (!el) return;
    el.addEventListener(el === sizer.configFile ? "change" : "input", function () {
      view.model = { name: null, hfRepo: null };
      view.stale();
    });
  });
  return view;
}
