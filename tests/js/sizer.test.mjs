// The browser sizer's pure functions against the Python core's answers.
//
//   python -m iteragpu.sizer_vectors > /tmp/vectors.json
//   python docs/hooks.py --sizer-data > /tmp/sizer-data.json        (optional, see below)
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=/tmp/sizer-data.json \
//     node --test tests/js/
//
// `nox -s js` does all three. The sizer data (catalog, defaults, Babel's number symbols) is what
// the page embeds; without ITERAGPU_SIZER_DATA it is read from the built page site/ko/sizer/.

import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCRIPT = join(ROOT, "src", "iteragpu", "web", "sizer.js");
const require = createRequire(import.meta.url);
const sizer = require(SCRIPT);

// The Python message of each reason the sizer reports (iteragpu.parsing, sizer_vectors).
const PYTHON_MESSAGES = {
  not_count: "must be a positive whole number such as 7e9 or 7B",
  not_number: "must be a finite number",
  not_whole: "must be a whole number",
  not_positive: "must be positive",
  negative: "cannot be negative",
  unknown_task: "must be one of",
};

function loadVectors() {
  const path = process.env.ITERAGPU_SIZER_VECTORS;
  if (!path) {
    throw new Error(
      "ITERAGPU_SIZER_VECTORS is not set: write the vectors with " +
        "`python -m iteragpu.sizer_vectors > FILE` and point it at FILE (or run `nox -s js`)"
    );
  }
  return JSON.parse(readFileSync(path, "utf-8"));
}

function loadData() {
  const path = process.env.ITERAGPU_SIZER_DATA;
  if (path) return JSON.parse(readFileSync(path, "utf-8"));
  const page = join(ROOT, "site", "ko", "sizer", "index.html");
  if (!existsSync(page)) {
    throw new Error(
      "no sizer data: set ITERAGPU_SIZER_DATA (`python docs/hooks.py --sizer-data > FILE`) " +
        "or build the site (`nox -s docs`)"
    );
  }
  const html = readFileSync(page, "utf-8");
  const match = /<script type="application\/json" id="sizer-data">([^<]*)<\/script>/.exec(html);
  assert.ok(match, `${page} embeds no sizer data`);
  return JSON.parse(match[1]);
}

const vectors = loadVectors();
const data = loadData();
const catalogFile = JSON.parse(
  readFileSync(join(ROOT, "src", "iteragpu", "data", "gpu_catalog.json"), "utf-8")
);

function pythonErrorMatches(error, field, reason) {
  const message = PYTHON_MESSAGES[reason];
  return message !== undefined && error.startsWith(`${field} ${message}`);
}

test("the page data holds the Python defaults, tasks and the catalog file", () => {
  assert.deepEqual(data.defaults, vectors.defaults);
  assert.deepEqual(data.tasks, ["inference", "training", "adaptation"]);
  assert.deepEqual(data.catalog, catalogFile);
  for (const lang of ["ko", "id"]) {
    assert.deepEqual(Object.keys(data.symbols[lang]).sort(), ["decimal", "group", "minus"]);
  }
});

test("there are vectors, valid and invalid", () => {
  const valid = vectors.cases.filter((c) => c.expected.valid).length;
  assert.ok(valid >= 10, `${valid} valid cases`);
  assert.ok(vectors.cases.length - valid >= 5);
});

for (const [index, { query, expected }] of vectors.cases.entries()) {
  test(`vector ${index}: ${JSON.stringify(query)}`, () => {
    const result = sizer.compute(query, data);
    const described = sizer.describe(result, data.symbols);
    assert.equal(described.valid, expected.valid);
    if (!expected.valid) {
      assert.ok(
        pythonErrorMatches(expected.error, described.field, described.reason),
        `JS reports ${described.field}/${described.reason}, Python says ${expected.error}`
      );
      return;
    }
    // Exact bytes, every language's texts, candidate order and statuses, margins.
    assert.deepEqual(described, expected);
  });
}

test("every vector's language texts are checked in both languages", () => {
  const langs = new Set();
  for (const { expected } of vectors.cases) {
    if (expected.valid) Object.keys(expected.text).forEach((lang) => langs.add(lang));
  }
  assert.deepEqual([...langs].sort(), Object.keys(data.symbols).sort());
});

test("counts parse like iteragpu.parsing.parse_count", () => {
  const cases = {
    "7e9": 7000000000n,
    "7000000000": 7000000000n,
    "7B": 7000000000n,
    "1.5B": 1500000000n,
    "70M": 70000000n,
    " 7 b ": 7000000000n,
    "0.5K": 500n,
    "1e3k": 1000000n,
    "1_000": 1000n,
    "1e400": 10n ** 400n,
  };
  for (const [text, value] of Object.entries(cases)) {
    assert.deepEqual(sizer.parseCount(text), { ok: true, value }, text);
  }
  const failures = {
    "": "not_count",
    seven: "not_count",
    "１６": "not_count", // parse_count's class is ASCII [0-9]
    "7EB": "not_number",
    "-1.5": "not_whole",
    "0.5": "not_whole",
    "0": "not_positive",
    "-7e9": "not_positive",
    "1e99999": "too_large", // guard: Python would take minutes, the page would freeze
  };
  for (const [text, reason] of Object.entries(failures)) {
    assert.deepEqual(sizer.parseCount(text), { ok: false, reason }, text);
  }
});

test("decimals parse like parse_positive and parse_non_negative", () => {
  const r = sizer.rational;
  assert.deepEqual(sizer.parsePositive("16").value, r(16n));
  assert.deepEqual(sizer.parsePositive("4.5").value, r(9n, 2n));
  assert.deepEqual(sizer.parsePositive("0.5").value, r(1n, 2n));
  assert.deepEqual(sizer.parsePositive(".5").value, r(1n, 2n));
  assert.deepEqual(sizer.parsePositive("1.e1").value, r(10n));
  assert.deepEqual(sizer.parsePositive("\u00a04.5\u3000").value, r(9n, 2n));
  assert.deepEqual(sizer.parsePositive("１６").value, r(16n)); // Decimal() reads any digit
  assert.deepEqual(sizer.parsePositive("١٢").value, r(12n));
  for (const text of ["nan", "NaN", "inf", "-Infinity", "", "4,5", "1e", "e1", "0x10"]) {
    assert.deepEqual(sizer.parsePositive(text), { ok: false, reason: "not_number" }, text);
  }
  assert.deepEqual(sizer.parsePositive("0"), { ok: false, reason: "not_positive" });
  assert.deepEqual(sizer.parsePositive("-0.5"), { ok: false, reason: "not_positive" });
  assert.deepEqual(sizer.parseNonNegative("0").value, r(0n));
  assert.deepEqual(sizer.parseNonNegative("-0").value, r(0n));
  assert.deepEqual(sizer.parseNonNegative("-1"), { ok: false, reason: "negative" });
  assert.deepEqual(sizer.parseNonNegative("0e999999999999").value, r(0n));
});

test("rounding is half up, away from zero, and never prints a negative zero", () => {
  const r = sizer.rational;
  const ko = data.symbols.ko;
  const id = data.symbols.id;
  assert.equal(sizer.formatNumber(r(1305n, 100n), 1, ko), "13.1");
  assert.equal(sizer.formatNumber(r(-1305n, 100n), 1, ko), "-13.1");
  assert.equal(sizer.formatNumber(r(-5n, 2n), 0, ko), "-3");
  assert.equal(sizer.formatNumber(r(14000000000n, 1n << 30n), 2, id), "13,04");
  assert.equal(sizer.formatNumber(r(1073741824n), 0, ko), "1,073,741,824");
  assert.equal(sizer.formatNumber(r(1073741824n), 0, id), "1.073.741.824");
  assert.equal(sizer.formatNumber(r(-1n, 1000n), 2, ko), "0.00");
  assert.equal(sizer.formatNumber(r(-5n, 1000n), 2, id), "-0,01");
  assert.equal(sizer.formatNumber(r(0n), 2, ko), "0.00");
  assert.equal(sizer.formatNumber(r(7n, 1000n), 2, ko), "0.01");
  assert.equal(sizer.formatBytes(r(3n), ko), "3");
  assert.equal(sizer.formatBytes(r(7n, 2n), id), "3,500");
  assert.equal(sizer.formatNumber(r(10n ** 40n + 1n), 0, ko), (10n ** 40n + 1n).toLocaleString("en"));
});

test("the KV cache keeps min(tokens, window) tokens", () => {
  const r = sizer.rational;
  const spec = { layers: 32n, kvHeads: 8n, headDim: 128n, tokens: 8192n, bytesPerValue: r(2n), sequences: 1n };
  assert.deepEqual(sizer.kvCacheBytes({ ...spec, window: null }), r(1073741824n));
  assert.deepEqual(sizer.kvCacheBytes({ ...spec, window: 4096n }), r(536870912n));
  assert.deepEqual(sizer.kvCacheBytes({ ...spec, window: 100000n }), r(1073741824n));
});

test("an unknown task, a bad field or several report every error in Python's order", () => {
  const result = sizer.compute({ task: "dreaming", params: "seven", days: "0" }, data);
  assert.equal(result.valid, false);
  assert.deepEqual(result.errors, [
    { field: "task", reason: "unknown_task" },
    { field: "params", reason: "not_count" },
    { field: "days", reason: "not_positive" },
  ]);
  assert.equal(result.field, "task");
  assert.equal(sizer.compute({ window: "" }, data).valid, true);
  assert.equal(sizer.compute({ window: " " }, data).reason, "not_count");
});

test("the task never changes a figure", () => {
  const figures = (task) => {
    const described = sizer.describe(sizer.compute({ task }, data), data.symbols);
    return JSON.stringify(described);
  };
  assert.equal(figures("training"), figures("inference"));
  assert.equal(figures("adaptation"), figures("inference"));
});

test("a card with an unknown capacity or no package ranks as the Python short list does", () => {
  const catalog = {
    schema_version: 1,
    cards: [
      { id: "b", name: "B", nominal_memory_gb: null, packages: [] },
      { id: "a", name: "A", nominal_memory_gb: 80, packages: [] },
      { id: "c", name: "C", nominal_memory_gb: 80, packages: [{ cards: 1, days: 3, price: "9.5", currency: "USD" }] },
      { id: "d", name: "D", nominal_memory_gb: 8, packages: [{ cards: 1, days: 3, price: "1", currency: "USD" }] },
    ],
  };
  const result = sizer.compute({}, { ...data, catalog });
  assert.deepEqual(
    result.candidates.map((c) => [c.id, c.requirements.memory, c.requirements.package, c.status]),
    [
      ["c", "check_needed", "fit", "check_needed"],
      ["a", "check_needed", "check_needed", "check_needed"],
      ["b", "check_needed", "check_needed", "check_needed"],
      ["d", "excluded", "fit", "excluded"],
    ]
  );
});

test("queries round-trip through the URL", () => {
  const query = sizer.queryFromSearch("?params=1.5B&bits=4.5&window=&unknown=1", data.defaults);
  assert.equal(query.params, "1.5B");
  assert.equal(query.bits, "4.5");
  assert.equal(query.window, "");
  assert.equal(query.days, data.defaults.days);
  assert.equal(Object.hasOwn(query, "unknown"), false);
  const again = sizer.queryFromSearch(sizer.searchFromQuery(query, data.defaults), data.defaults);
  assert.deepEqual(again, query);
});

test("the script holds no human text and makes no request", () => {
  const source = readFileSync(SCRIPT, "utf-8");
  assert.doesNotMatch(source, /[\u3131-\u318e\uac00-\ud7a3]/, "Korean text in sizer.js");
  assert.doesNotMatch(source, /\b(fetch|XMLHttpRequest|WebSocket|sendBeacon|importScripts)\b/);
  assert.doesNotMatch(source, /\b(parseFloat|toFixed|Number\()/, "floats in sizer.js");
});
