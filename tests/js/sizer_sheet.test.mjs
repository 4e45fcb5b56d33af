// The sizer's filled load sheet against Python's (iteragpu.i18n.sheet.sheet_markdown).
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   python docs/hooks.py --sizer-data > /tmp/sizer-data.json
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=/tmp/sizer-data.json \
//     node --test tests/js/
//
// Each vector (iteragpu.docs_tools.sizer_sheet_vectors) is a page state: the form's query, the
// model the page knows (chosen by name, or the family of the config read), the split over
// several GPUs of the config read (a preset's text here) and Python's Markdown in every
// language, or null where the page offers no sheet. The sizer computes the page's figures
// (compute), splits the config (readConfig, vllmSplit), builds the sheet (sizerSheet) and
// prints it (sheetMarkdown) with the page data's words: every character must be Python's.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sizer from "../../src/iteragpu/web/sizer/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const path = process.env.ITERAGPU_SIZER_VECTORS;
if (!path) throw new Error("ITERAGPU_SIZER_VECTORS is not set (see tests/js/sizer.test.mjs)");
const vectors = JSON.parse(readFileSync(path, "utf-8"));
const dataPath = process.env.ITERAGPU_SIZER_DATA;
if (!dataPath) throw new Error("ITERAGPU_SIZER_DATA is not set (python docs/hooks.py --sizer-data)");
const data = JSON.parse(readFileSync(dataPath, "utf-8"));

/** The page's sheet for a vector's state, in `lang`, or null where the page offers none. */
function pageSheet(vector, lang) {
  const result = sizer.compute(vector.query, data);
  if (!result.valid || vector.query.task !== "inference") return null;
  const model = vector.model || {};
  let split = null;
  let options = null;
  if (vector.split) {
    const preset = data.presets.find((p) => p.name === vector.split.preset);
    const read = sizer.readConfig(preset.text, "mla_latent", data.families, data);
    assert.equal(read.ok, true, read.reason);
    const q = vector.query;
    const bits = sizer.parsePositive(q.bits, sizer.LIMITS.bits, false).value;
    options = {
      ok: true,
      tp: BigInt(vector.split.tp),
      pp: BigInt(vector.split.pp),
      ep: vector.split.ep,
      tokens: sizer.parseTokens(q.tokens, sizer.LIMITS.tokens, false).value,
      sequences: sizer.parseCount(q.sequences, sizer.LIMITS.sequences, false).value,
      elementBytes: { n: bits.n, d: bits.d * 8n },
      kvBytesPerValue: sizer.parsePositive(q.bytes_per_value, sizer.LIMITS.bytes_per_value, false)
        .value,
      reserveBytes: sizer.gibToBytes(
        sizer.parseNonNegative(q.reserve_gib, sizer.LIMITS.reserve_gib, false).value
      ),
    };
    split = sizer.vllmSplit(read, options);
    assert.equal(split.ok, true, split.reason);
  }
  const sheet = sizer.sizerSheet(
    result,
    { name: model.name ?? null, hfRepo: model.hf_repo ?? null, modelType: model.model_type ?? null },
    split,
    options,
    data.sheet.versions,
    false
  );
  return sizer.sheetMarkdown(sheet, data.sheet.words[lang], data.symbols[lang]);
}

test("there are sheet vectors: one GPU, splits, and states without a sheet", () => {
  const sheets = vectors.sheets;
  assert.ok(sheets.length >= 10);
  assert.ok(sheets.some((v) => v.split !== null && v.markdown !== null));
  assert.ok(sheets.some((v) => v.markdown === null));
  assert.deepEqual(Object.keys(data.sheet.words).sort(), Object.keys(data.symbols).sort());
});

vectors.sheets.forEach((vector, index) => {
  const split = vector.split ? ` tp ${vector.split.tp} pp ${vector.split.pp}` : "";
  test(`sheet ${index}${split}`, () => {
    for (const lang of Object.keys(data.symbols)) {
      const got = pageSheet(vector, lang);
      if (vector.markdown === null) {
        assert.equal(got, null, "Python offers no sheet here");
      } else {
        assert.equal(got, vector.markdown[lang], lang);
      }
    }
  });
});

test("a cell keeps one line and escapes its pipes; code fences past its backticks", () => {
  const vector = vectors.sheets.find((v) => v.markdown !== null && v.split === null);
  const result = sizer.compute(vector.query, data);
  const model = { name: "a|b `c`\nd", hfRepo: null, modelType: null };
  const sheet = sizer.sizerSheet(result, model, null, null, data.sheet.versions, false);
  const text = sizer.sheetMarkdown(sheet, data.sheet.words.ko, data.symbols.ko);
  assert.ok(text.includes("| ``a\\|b `c` d`` |"), text.split("\n")[4]);
});
