// The browser sizer's pure functions against the Python core's answers.
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   python docs/hooks.py --sizer-data > /tmp/sizer-data.json        (optional, see below)
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=/tmp/sizer-data.json \
//     node --test tests/js/
//
// `nox -s js` does all three. The sizer data (catalog, defaults, Babel's number symbols) is what
// the page embeds; without ITERAGPU_SIZER_DATA it is read from the built page site/ko/sizer/.

import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sizer from "../../src/iteragpu/web/sizer/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SIZER_DIR = join(ROOT, "src", "iteragpu", "web", "sizer");
// The modules past the arithmetic (the old single file's part after its chart section) that
// call Number(): the chart's pixels, vLLM's float budget, list indices, the DOM's fields. Every
// other module (the arithmetic: rational, numbers, format, config, compute, ...) holds no float.
const NUMBER_ALLOWED = new Set([
  "chart.js", "fit.js", "page_fit.js", "sharding.js", "split.js", "training.js",
  "training_tensors.js", "page.js", "page_split.js", "page_training.js", "page_sheet.js",
]);

// The Python message of each reason the sizer reports (iteragpu.core.numbers, sizer_vectors).
const PYTHON_MESSAGES = {
  not_count: "must be a positive whole number such as 7e9 or 7B",
  not_number: "must be a finite number",
  not_whole: "must be a whole number",
  not_positive: "must be positive",
  negative: "cannot be negative",
  unknown_task: "must be one of",
  non_ascii_digit: "must use the digits 0-9",
  too_many_digits: "has too many digits",
  exponent_out_of_range: "has an exponent out of range",
  too_large: "must be at most",
  window_needed: "needs a window",
  windowed_above_layers: "cannot exceed layers",
  unknown_cache: "must be dynamic or static",
};

function loadVectors() {
  const path = process.env.ITERAGPU_SIZER_VECTORS;
  if (!path) {
    throw new Error(
      "ITERAGPU_SIZER_VECTORS is not set: write the vectors with " +
        "`python -m iteragpu.docs_tools.sizer_vectors > FILE` and point it at FILE (or run `nox -s js`)"
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
  readFileSync(join(ROOT, "src", "iteragpu", "gpus", "gpu_catalog.json"), "utf-8")
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
    // Exact bytes, every language's texts, candidate order, ranks, statuses and reasons.
    assert.deepEqual(described, expected);
  });
}

test("every generated vector: weights, KV cache and short list as the Python core says", () => {
  // Seeded random queries and each card's edges (nominal, declared + rounding, one byte
  // either side): a changed constant in the sizer's modules changes at least one of these answers.
  assert.ok(vectors.generated.length >= 100, `${vectors.generated.length} generated vectors`);
  const reasons = new Set();
  for (const { query, expected } of vectors.generated) {
    assert.equal(expected.valid, true, JSON.stringify(query));
    const described = sizer.describe(sizer.compute(query, data), data.symbols);
    assert.deepEqual(described, expected, JSON.stringify(query));
    expected.candidates.forEach((c) => reasons.add(c.reasons.memory));
  }
  const everyReason = [
    "nominal_not_proof",
    "above_nominal_within_declared",
    "above_nominal_declared_unknown",
    "declared_below_need",
    "above_nominal_binary",
  ];
  for (const reason of everyReason) {
    assert.ok(reasons.has(reason), `no generated vector reaches ${reason}`);
  }
});

test("no candidate of the page is ranked: it takes no lab result, so memory is never fit", () => {
  for (const { expected } of [...vectors.cases, ...vectors.generated]) {
    if (!expected.valid) continue;
    for (const candidate of expected.candidates) {
      assert.equal(candidate.rank, null);
      assert.notEqual(candidate.requirements.memory, "fit");
    }
    const statuses = expected.candidates.map((c) => c.status);
    const firstExcluded = statuses.indexOf("excluded");
    if (firstExcluded >= 0) {
      assert.ok(statuses.slice(firstExcluded).every((s) => s === "excluded"), statuses.join());
    }
  }
});

test("every vector's language texts are checked in both languages", () => {
  const langs = new Set();
  for (const { expected } of vectors.cases) {
    if (expected.valid) Object.keys(expected.text).forEach((lang) => langs.add(lang));
  }
  assert.deepEqual([...langs].sort(), Object.keys(data.symbols).sort());
});

test("counts parse like iteragpu.core.numbers.parse_count", () => {
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
    "1e50": 10n ** 50n,
  };
  for (const [text, value] of Object.entries(cases)) {
    assert.deepEqual(sizer.parseCount(text), { ok: true, value }, text);
  }
  const failures = {
    "": "not_count",
    seven: "not_count",
    "１６": "non_ascii_digit", // one grammar: only 0-9, in every field
    "7EB": "not_number",
    "-1.5": "not_whole",
    "0.5": "not_whole",
    "0": "not_positive",
    "-7e9": "not_positive",
    "1e99999": "exponent_out_of_range", // the shared bound: nothing can freeze the page
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
  assert.deepEqual(sizer.parsePositive("１６"), { ok: false, reason: "non_ascii_digit" });
  assert.deepEqual(sizer.parsePositive("١٢"), { ok: false, reason: "non_ascii_digit" });
  for (const text of ["nan", "NaN", "inf", "-Infinity", "", "4,5", "1e", "e1", "0x10"]) {
    assert.deepEqual(sizer.parsePositive(text), { ok: false, reason: "not_number" }, text);
  }
  assert.deepEqual(sizer.parsePositive("0"), { ok: false, reason: "not_positive" });
  assert.deepEqual(sizer.parsePositive("-0.5"), { ok: false, reason: "not_positive" });
  assert.deepEqual(sizer.parseNonNegative("0").value, r(0n));
  assert.deepEqual(sizer.parseNonNegative("-0").value, r(0n));
  assert.deepEqual(sizer.parseNonNegative("-1"), { ok: false, reason: "negative" });
  assert.deepEqual(sizer.parseNonNegative("0e999999999999"), {
    ok: false,
    reason: "exponent_out_of_range",
  });
});

test("every parse vector: the same value or the same reason as iteragpu.core.numbers", () => {
  assert.ok(vectors.parse.length >= 100, `${vectors.parse.length} parse vectors`);
  const parsers = {
    count: sizer.parseCount,
    positive: sizer.parsePositive,
    non_negative: sizer.parseNonNegative,
  };
  for (const vector of vectors.parse) {
    for (const [name, parse] of Object.entries(parsers)) {
      const result = parse(vector.text);
      const value = typeof result.value === "bigint" ? sizer.rational(result.value) : result.value;
      const got = result.ok
        ? { ok: true, value: sizer.exact(value) }
        : { ok: false, reason: result.reason };
      assert.deepEqual(got, vector[name], `${name}(${JSON.stringify(vector.text)})`);
    }
  }
});

test("each field's bound is the Python one", () => {
  const limits = Object.fromEntries(Object.entries(sizer.LIMITS).map(([k, v]) => [k, String(v)]));
  assert.deepEqual(limits, vectors.limits);
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
  // The window is a token count: a blank is refused as one, without a suffix's readings.
  assert.equal(sizer.compute({ window: " " }, data).reason, "not_token_count");
});

test("the task never changes a figure", () => {
  const figures = (task) => {
    const described = sizer.describe(sizer.compute({ task }, data), data.symbols);
    return JSON.stringify(described);
  };
  assert.equal(figures("training"), figures("inference"));
  assert.equal(figures("adaptation"), figures("inference"));
});

test("the declared capacity excludes, else the nominal figure read in binary units", () => {
  const declared = (bytes) => ({
    declared_memory_bytes: bytes,
    declared_memory_source: { resolution_bytes: 1048576 },
  });
  const unknown = { declared_memory_bytes: null, declared_memory_source: null };
  const pkg = [{ cards: 1, days: 3, price: "1", currency: "USD" }];
  const catalog = {
    cards: [
      { id: "b", name: "B", nominal_memory_gb: null, ...unknown, packages: [] },
      { id: "a", name: "A", nominal_memory_gb: 80, ...unknown, packages: [] },
      { id: "d", name: "D", nominal_memory_gb: 8, ...declared(8 * 2 ** 30), packages: pkg },
      { id: "c", name: "C", nominal_memory_gb: 8, ...unknown, packages: pkg },
      { id: "e", name: "E", nominal_memory_gb: 16, ...declared(24 * 2 ** 30), packages: pkg },
    ],
  };
  // The whole need of the defaults: weights 13.04 GiB + reserve 6 GiB + KV cache 1 GiB.
  const result = sizer.compute({}, { ...data, catalog });
  assert.deepEqual(
    result.candidates.map((c) => [c.id, c.reasons.memory, c.requirements.package, c.status, c.rank]),
    [
      // To check, in review order: those holding the need on paper first, then with a package
      // first, then the larger margin on paper.
      ["e", "above_nominal_within_declared", "fit", "check_needed", null],
      ["a", "nominal_not_proof", "check_needed", "check_needed", null],
      ["b", "nominal_unknown", "check_needed", "check_needed", null],
      // Excluded, in catalogue order: "8 GB" read as 8 GiB still cannot hold 20.04 GiB.
      ["d", "declared_below_need", "fit", "excluded", null],
      ["c", "above_nominal_binary", "fit", "excluded", null],
    ]
  );
  assert.deepEqual(
    result.candidates.map((c) => [c.id, c.paperBasis, c.paperMarginBytes === null]),
    [
      ["e", "declared", false],
      ["a", "nominal", false],
      ["b", null, true],
      ["d", "declared", false],
      ["c", "nominal", false],
    ]
  );
  // "80 GB" read as 80e9 B, minus the whole need (7e9 x 2 B + 6 GiB + the KV cache of 32
  // layers x 2 x 8 heads x 128 x 8,192 tokens x 2 B), to the byte; the first estimate
  // (weights + reserve) is still shown, and decides nothing.
  const firstEstimate = 14n * 10n ** 9n + 6n * (1n << 30n);
  const need = firstEstimate + 32n * 2n * 8n * 128n * 8192n * 2n;
  assert.deepEqual(result.totalBytes, { n: firstEstimate, d: 1n });
  assert.deepEqual(result.modelTotalBytes, { n: need, d: 1n });
  assert.equal(result.candidates[1].paperMarginBytes, 80n * 10n ** 9n - need);
  assert.deepEqual(result.candidates.map((c) => c.holdsNeedOnPaper), [true, true, false, false, false]);
  assert.deepEqual(result.needMissing, ["activations", "prefill_temporaries"]);
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

test("the scripts hold no human text and make no request", () => {
  const modules = readdirSync(SIZER_DIR).filter((name) => name.endsWith(".js"));
  assert.ok(modules.includes("index.js") && modules.includes("main.js"), "no sizer modules");
  for (const name of modules) {
    const source = readFileSync(join(SIZER_DIR, name), "utf-8");
    assert.doesNotMatch(source, /[\u3131-\u318e\uac00-\ud7a3]/, `Korean text in sizer/${name}`);
    assert.doesNotMatch(source, /\b(fetch|XMLHttpRequest|WebSocket|sendBeacon|importScripts)\b/);
    // Floats never state a figure: only the chart's pixels and the modules that follow vLLM's
    // own float arithmetic or index a list with one may call Number(); none parses or rounds one.
    assert.doesNotMatch(source, /\b(parseFloat|toFixed)\b/, `floats in sizer/${name}`);
    if (!NUMBER_ALLOWED.has(name)) {
      assert.doesNotMatch(source, /\bNumber\(/, `floats in sizer/${name}`);
    }
  }
  const chart = readFileSync(join(SIZER_DIR, "chart.js"), "utf-8");
  assert.ok(chart.includes("// The memory chart (#memory-chart)"), "no chart section in sizer/chart.js");
});

test("the review order puts the cards that hold the whole need on paper first (Python's vectors)", () => {
  assert.ok(vectors.review_order.length > 0);
  for (const v of vectors.review_order) {
    const result = sizer.compute(v.query, { ...data, catalog: vectors.review_order_catalog });
    assert.deepEqual(result.candidates.map((c) => c.id), v.candidates, JSON.stringify(v.query));
    assert.deepEqual(result.candidates.map((c) => c.holdsNeedOnPaper), v.holds_need_on_paper);
    assert.deepEqual(result.candidates.map((c) => c.status), v.status);
  }
});

test("an hourly offer prices any campaign as its instance's rate x 24 h x days", () => {
  const offer = (cards, price, per) => ({ cards, hourly_price: price, price_per: per, currency: "USD" });
  const card = {
    id: "x", name: "X", nominal_memory_gb: 80, declared_memory_bytes: null,
    declared_memory_source: null,
    packages: [{ cards: 1, days: 3, price: "100", currency: "USD" }],
    hourly_offers: [offer(1, "2.50", "gpu"), offer(1, "1.99", "gpu"), offer(8, "16", "instance"), offer(8, "1.5", "gpu")],
  };
  const cards = sizer.loadCatalog({ cards: [card] });
  const price = (days, count) => {
    const c = sizer.shortlist(cards, sizer.rational(1n), days, count)[0];
    return c.cost === null ? null : sizer.exact(c.cost);
  };
  assert.equal(price(3n, 1n), "100"); // the fixed package of exactly those days wins
  assert.equal(price(2n, 1n), "2388/25"); // 1.99 x 24 x 2 = 95.52: the cheapest offer
  assert.equal(price(1n, 8n), "288"); // 8 x 1.5 x 24 beats 16 x 24
  assert.equal(price(1n, 2n), null); // no offer for two cards
});
