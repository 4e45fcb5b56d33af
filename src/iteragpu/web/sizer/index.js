/*
 * The sizer's public API, as one object: every name the old single-file sizer.js exported
 * (node's tests and results.js use it; the browser entry main.js publishes it as
 * window.IteraGPUSizer). Its `page` is the started page's Sizer, set by autostart.
 * Mirrors no Python module: the package's index.
 */

import { rational, exact } from "./rational.js";
import {
  parseNumber, parseCount, parseTokens, suffixReadingTexts, parsePositive, parseNonNegative,
  readsDecimalComma,
} from "./numbers.js";
import { weightsBytes, gibToBytes, gib, kvCacheBytes, kvByKind } from "./memory.js";
import { fillTemplate, roundHalfUp, formatNumber, formatBytes } from "./format.js";
import { loadCatalog } from "./catalog.js";
import { shortlist } from "./shortlist.js";
import { CONFIG_MAX_CHARS } from "./config_reader.js";
import { evaluateExpression } from "./recipes.js";
import { readConfig } from "./config.js";
import { LIMITS, compute, texts, describe, queryFromSearch, searchFromQuery } from "./compute.js";
import { chartModel, splitChartModel } from "./chart.js";
import { recipeTensors } from "./training_tensors.js";
import { trainingPlan } from "./training.js";
import { vllmSplit } from "./split.js";
import { vllmFit, vllmFitFlags, fitPositions } from "./fit.js";
import { sheetMarkdown, sizerSheet } from "./sheet.js";
import { start } from "./page.js";
import { inferenceNeed, judge, splitNeed, trainingNeed } from "./need.js";

/** Start the page once the document is parsed; the started Sizer becomes `api.page`. */
export function autostart(win) {
  if (typeof win.document === "undefined") return;
  const run = function () {
    api.page = start(win.document, win);
  };
  if (win.document.readyState === "loading") {
    win.document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
}

export const api = {
  rational,
  exact,
  LIMITS,
  parseNumber,
  parseCount,
  parseTokens,
  suffixReadingTexts,
  parsePositive,
  parseNonNegative,
  readsDecimalComma,
  weightsBytes,
  gibToBytes,
  gib,
  kvCacheBytes,
  kvByKind,
  readConfig,
  evaluateExpression,
  CONFIG_MAX_CHARS,
  chartModel,
  fillTemplate,
  roundHalfUp,
  formatNumber,
  formatBytes,
  loadCatalog,
  shortlist,
  recipeTensors,
  vllmSplit,
  splitChartModel,
  vllmFit,
  vllmFitFlags,
  fitPositions,
  sheetMarkdown,
  sizerSheet,
  compute,
  trainingPlan,
  texts,
  describe,
  queryFromSearch,
  searchFromQuery,
  start,
  autostart,
  inferenceNeed,
  splitNeed,
  trainingNeed,
  judge,
  page: null,
};

export default api;

export {
  rational, exact, LIMITS, parseNumber, parseCount, parseTokens, suffixReadingTexts, parsePositive,
  parseNonNegative, readsDecimalComma, weightsBytes, gibToBytes, gib, kvCacheBytes, kvByKind,
  readConfig, evaluateExpression, CONFIG_MAX_CHARS, chartModel, fillTemplate, roundHalfUp,
  formatNumber, formatBytes, loadCatalog, shortlist, recipeTensors, vllmSplit, splitChartModel,
  vllmFit, vllmFitFlags, fitPositions, sheetMarkdown, sizerSheet, compute, trainingPlan, texts,
  describe, queryFromSearch, searchFromQuery, start, inferenceNeed, splitNeed, trainingNeed, judge,
};
