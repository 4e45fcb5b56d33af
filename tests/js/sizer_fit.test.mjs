// The sizer's "solve for" section against `iteragpu.parallel.fit`'s vLLM answers.
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=... node --test tests/js/
//
// Each vector (iteragpu.docs_tools.sizer_fit_vectors) is a config's text, a split, a card's
// declared bytes, a utilization, what is solved, and Python's answer: tokens, sequences, vLLM's
// blocks, its cache size in tokens and its concurrency text, what limits the answer, the flags;
// or the refusal's reason. The sizer reads the text as the page does (readConfig), splits it
// (vllmSplit) and solves it (vllmFit): every figure must be Python's, exactly.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sizer from "../../src/iteragpu/web/sizer/index.js";
import { lackHundredths } from "../../src/iteragpu/web/sizer/fit.js";
import { fillTemplate, formatNumber } from "../../src/iteragpu/web/sizer/format.js";
import { fitLines, fitUtilization } from "../../src/iteragpu/web/sizer/page_fit.js";
import { refusalText } from "../../src/iteragpu/web/sizer/page_split.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const path = process.env.ITERAGPU_SIZER_VECTORS;
if (!path) throw new Error("ITERAGPU_SIZER_VECTORS is not set (see tests/js/sizer.test.mjs)");
const vectors = JSON.parse(readFileSync(path, "utf-8"));
const dataPath = process.env.ITERAGPU_SIZER_DATA;
if (!dataPath) throw new Error("ITERAGPU_SIZER_DATA is not set (python docs/hooks.py --sizer-data)");
const data = JSON.parse(readFileSync(dataPath, "utf-8"));

function solve(vector) {
  const read = sizer.readConfig(vector.text, "mla_latent", data.families, data);
  assert.equal(read.ok, true, `${vector.name}: ${read.reason}`);
  const o = vector.options;
  const positions = sizer.fitPositions(read);
  const tokens = o.tokens === null ? null : BigInt(o.tokens);
  const sequences = o.sequences === null ? null : BigInt(o.sequences);
  if (tokens !== null && positions !== null && tokens > positions) {
    return { ok: false, reason: "fit_above_positions" };
  }
  const [rn, rd] = o.reserve_gib.split("/").map(BigInt);
  const split = sizer.vllmSplit(read, {
    tp: BigInt(o.tp),
    pp: BigInt(o.pp),
    ep: false,
    tokens: tokens ?? 1n,
    sequences: sequences ?? 1n,
    elementBytes: sizer.rational(2n),
    kvBytesPerValue: sizer.rational(BigInt(o.kv_bytes_per_value)),
    reserveBytes: sizer.rational(rn * 2n ** 30n, rd ?? 1n),
  });
  if (!split.ok) return split;
  const answer = sizer.vllmFit(split, {
    capacityBytes: BigInt(o.capacity_bytes),
    utilization: o.utilization,
    tokens: tokens,
    sequences: sequences,
    positions: positions,
  });
  if (!answer.ok) return answer;
  const flags = sizer.vllmFitFlags(answer, split, {
    utilization: o.utilization,
    kvCacheDtype: o.kv_bytes_per_value === 1 ? "fp8" : "auto",
    tp: BigInt(o.tp),
    pp: BigInt(o.pp),
    ep: false,
  });
  return { ...answer, flags };
}

test("there are fit vectors, answers and refusals among them", () => {
  const fits = vectors.model_fits;
  assert.ok(fits.length >= 100);
  assert.ok(fits.some((v) => v.reason === undefined && v.limited_by === "memory"));
  assert.ok(fits.some((v) => v.reason === undefined && v.limited_by === "positions"));
  assert.ok(fits.some((v) => v.reason === "fit_does_not_fit"));
  assert.ok(fits.some((v) => v.reason === "fit_above_positions"));
  assert.ok(fits.some((v) => v.reason === "fit_does_not_fit" && v.lack !== undefined));
});

test("what a GPU lacks is rounded up to the next 0.01 GiB, never down", () => {
  const gib = 2n ** 30n;
  assert.equal(lackHundredths(sizer.rational(1n)), 1n);
  assert.equal(lackHundredths(sizer.rational(gib)), 100n);
  assert.equal(lackHundredths(sizer.rational(gib + 1n)), 101n);
  assert.equal(lackHundredths(sizer.rational(gib * 3n, 200n)), 2n); // 0.015 GiB
});

test("every fit is Python's, figure by figure and flag by flag", () => {
  for (const vector of vectors.model_fits) {
    const got = solve(vector);
    const label = `${vector.name} on ${vector.card} ${JSON.stringify(vector.options)}`;
    if (vector.reason !== undefined) {
      assert.equal(got.ok, false, label);
      assert.equal(got.reason, vector.reason, label);
      if (vector.lack !== undefined) {
        // what the fullest GPU lacks, rounded up to 0.01 GiB, for the load Python tried
        const h = lackHundredths(got.lackBytes);
        assert.equal(`${h / 100n}.${String(h % 100n).padStart(2, "0")}`, vector.lack, label);
        assert.equal(String(got.tokens), vector.tokens, label);
        assert.equal(String(got.sequences), vector.sequences, label);
        assert.equal(String(got.gpus), vector.gpus, label);
      }
      continue;
    }
    assert.equal(got.ok, true, `${label}: ${got.reason}`);
    assert.equal(String(got.tokens), String(vector.tokens), label);
    assert.equal(String(got.sequences), String(vector.sequences), label);
    assert.equal(String(got.blocks), String(vector.blocks), label);
    assert.equal(String(got.cacheTokens), String(vector.cache_tokens), label);
    assert.equal(got.concurrency, vector.concurrency, label);
    assert.equal(got.limitedBy, vector.limited_by, label);
    assert.deepEqual(got.flags, vector.flags, label);
  }
});

// ------------------------------------------------------------------------------------------
// Every line the fit and split sections can show, in each language's own words (the hidden
// message spans of docs/<lang>/docs/sizer.md), filled by the page's own functions for every
// refusal the JS can produce: no placeholder may be left ("{heads}" once showed at TP 3), and
// no reason may be said by its code.
// ------------------------------------------------------------------------------------------

/** A section's words in a language, as the page reads them (an element's textContent). */
function sectionWords(lang, attribute) {
  const page = readFileSync(join(ROOT, "docs", lang, "docs", "sizer.md"), "utf-8");
  const found = {};
  const pattern = new RegExp(`<span ${attribute}="([a-z_0-9]+)">(.*?)</span>`, "g");
  for (const match of page.matchAll(pattern)) {
    found[match[1]] = match[2].replace(/<[^>]+>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  }
  const words = (key, values) => {
    assert.ok(Object.hasOwn(found, key), `${lang}: no words for ${key}`);
    return fillTemplate(found[key].trim(), values || {});
  };
  return { found, words, has: (key) => Object.hasOwn(found, key) };
}

const LANGUAGES = ["ko", "id"];

function assertFilled(text, where) {
  assert.ok(!text.includes("{") && !text.includes("}"), `${where}: a placeholder is left: ${text}`);
  assert.ok(!/reason_|fit_|vllm_|split_/.test(text.replace(/--[a-z-]+|iteragpu [a-z -]+/g, "")),
    `${where}: a code is shown: ${text}`);
}

/** Every refusal reason split.js and page_split.js can produce, with its values' names, read
 * from their source (a reason added there without words fails here). */
function splitReasons() {
  const source = ["split.js", "page_split.js"].map((name) =>
    readFileSync(join(ROOT, "src", "iteragpu", "web", "sizer", name), "utf-8")).join("\n");
  const reasons = {};
  for (const m of source.matchAll(/splitRefuse\("([a-z_]+)"(?:,\s*\{([^}]*)\})?/g)) {
    reasons[m[1]] = [...(m[2] || "").matchAll(/([a-z_]+):/g)].map((k) => k[1]);
  }
  for (const m of source.matchAll(/reason: "([a-z_]+)"/g)) reasons[m[1]] = reasons[m[1]] || [];
  // splitDivide's refusal names its values in its own object
  const divide = source.match(/splitRefuse\("vllm_not_divisible", \{([\s\S]*?)\}\)/);
  reasons.vllm_not_divisible = [...divide[1].matchAll(/([a-z_]+):/g)].map((k) => k[1]);
  return reasons;
}

test("the split's refusals: every reason the JS can give has words, every placeholder filled", () => {
  const reasons = splitReasons();
  for (const reason of ["bad_split_count", "vllm_heads_not_divisible", "vllm_not_divisible",
    "vllm_tp_above_experts", "vllm_moe_not_divisible", "ep_needs_tp"]) {
    assert.ok(Object.hasOwn(reasons, reason), `the source no longer yields ${reason}?`);
  }
  for (const lang of LANGUAGES) {
    const { words, has } = sectionWords(lang, "data-split-text");
    const symbols = data.symbols[lang];
    for (const [reason, keys] of Object.entries(reasons)) {
      assert.ok(has(`reason_${reason}`), `${lang}: no words for reason_${reason}`);
      const values = Object.fromEntries(keys.map((k, i) => [k, k === "name" || k === "what" ||
        k === "where" ? "layers.0.mlp" : 12345n + BigInt(i)]));
      const text = refusalText(words, has, { reason, values }, symbols);
      assertFilled(text, `${lang} ${reason}`);
      for (const value of Object.values(values)) {
        if (typeof value === "bigint") {
          assert.ok(text.includes(formatNumber(sizer.rational(value), 0, symbols)),
            `${lang} ${reason}: ${value} is not said in the page's digits: ${text}`);
        }
      }
    }
    // a reason the page has no words for is said by the section's own line, not its code
    assertFilled(refusalText(words, has, { reason: "no_such_reason", values: {} }, symbols),
      `${lang} unknown`);
  }
});

test("the split's refusals of the vectors, as vllmSplit gives them, are filled", () => {
  let refused = 0;
  for (const vector of vectors.model_splits) {
    if (vector.reason === undefined) continue;
    const read = sizer.readConfig(vector.text, "mla_latent", data.families, data);
    const o = vector.options;
    const [rn, rd] = o.reserve_gib.split("/").map(BigInt);
    const got = sizer.vllmSplit(read, {
      tp: BigInt(o.tp), pp: BigInt(o.pp), ep: o.ep, tokens: BigInt(o.tokens),
      sequences: BigInt(o.sequences), elementBytes: sizer.rational(2n),
      kvBytesPerValue: sizer.rational(2n), reserveBytes: sizer.rational(rn * 2n ** 30n, rd),
    });
    assert.equal(got.ok, false);
    for (const lang of LANGUAGES) {
      const { words, has } = sectionWords(lang, "data-split-text");
      assert.ok(has(`reason_${got.reason}`), `${lang}: no words for reason_${got.reason}`);
      assertFilled(refusalText(words, has, got, data.symbols[lang]), `${lang} ${vector.name}`);
    }
    refused += 1;
  }
  assert.ok(refused > 0);
});

test("the fit's lines, answers and loads that do not fit, are filled and say the budget", () => {
  let lacking = 0;
  for (const vector of vectors.model_fits) {
    const read = sizer.readConfig(vector.text, "mla_latent", data.families, data);
    const o = vector.options;
    const tokens = o.tokens === null ? null : BigInt(o.tokens);
    const sequences = o.sequences === null ? null : BigInt(o.sequences);
    const [rn, rd] = o.reserve_gib.split("/").map(BigInt);
    const reserveBytes = sizer.rational(rn * 2n ** 30n, rd ?? 1n);
    const split = sizer.vllmSplit(read, {
      tp: BigInt(o.tp), pp: BigInt(o.pp), ep: false, tokens: tokens ?? 1n,
      sequences: sequences ?? 1n, elementBytes: sizer.rational(2n),
      kvBytesPerValue: sizer.rational(BigInt(o.kv_bytes_per_value)), reserveBytes,
    });
    if (!split.ok) continue;
    const answer = sizer.vllmFit(split, {
      capacityBytes: BigInt(o.capacity_bytes), utilization: o.utilization, tokens, sequences,
      positions: sizer.fitPositions(read),
    });
    for (const lang of LANGUAGES) {
      const { words, has } = sectionWords(lang, "data-fit-text");
      const symbols = data.symbols[lang];
      const where = `${lang} ${vector.name} ${JSON.stringify(o)}`;
      if (!answer.ok && answer.reason !== "fit_does_not_fit") {
        assertFilled(refusalText(words, has, answer, symbols), where);
        continue;
      }
      const lines = fitLines(words, answer, {
        cardName: vector.card, capacityBytes: BigInt(o.capacity_bytes),
        utilization: fitUtilization(o.utilization, false), reserveBytes, gpus: split.gpus,
        ranks: split.ranks,
      }, symbols);
      const text = [...lines.status, ...lines.spent].join(" ");
      assertFilled(text, where);
      // the budget: the card's declared capacity x utilization, in the page's digits
      const budget = BigInt(Math.ceil(o.capacity_bytes * Number(o.utilization)));
      const gibText = (bytes) => formatNumber(sizer.rational(bytes, 2n ** 30n), 2, symbols);
      assert.ok(text.includes(gibText(budget)), `${where}: no budget: ${text}`);
      assert.ok(text.includes(gibText(BigInt(o.capacity_bytes))), `${where}: no capacity`);
      assert.ok(text.includes(formatNumber(reserveBytes, 0, symbols) === "0" ? "0" :
        formatNumber(sizer.rational(rn, rd ?? 1n), 2, symbols)), `${where}: no reserve`);
      if (answer.ok) {
        assert.ok(text.includes(formatNumber(sizer.rational(answer.blocks), 0, symbols)), where);
      } else {
        // what the fullest GPU lacks, Python's figure in the page's digits
        const [whole, cents] = vector.lack.split(".");
        assert.ok(text.includes(`${whole}${symbols.decimal}${cents}`) ||
          text.includes(formatNumber(sizer.rational(BigInt(whole + cents), 100n), 2, symbols)),
          `${where}: lack ${vector.lack} not said: ${text}`);
        lacking += 1;
      }
    }
  }
  assert.ok(lacking > 0);
  for (const lang of LANGUAGES) {
    const { words, found } = sectionWords(lang, "data-fit-text");
    for (const key of ["needs_config", "choose_card", "reason_fit_kv_dtype",
      "reason_fit_bad_utilization", "utilization_default"]) {
      assertFilled(words(key, {}), `${lang} ${key}`);
    }
    assert.ok(Object.keys(found).length > 0);
  }
});

test("a blank utilization is vLLM's default 1.0; above 1 or not a number is refused", () => {
  assert.equal(fitUtilization("", false).text, "1.0");
  assert.equal(fitUtilization("1", false).text, "1.0");
  assert.equal(fitUtilization("0.92", false).text, "0.92");
  assert.equal(fitUtilization("0,9", true).text, "0.9");
  assert.equal(fitUtilization("1.01", false), null);
  assert.equal(fitUtilization("0", false), null);
  assert.equal(fitUtilization("abc", false), null);
});
