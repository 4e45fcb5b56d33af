// The sizer's config.json reader against `iteragpu model CONFIG`'s answers.
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=... node --test tests/js/
//
// Each vector (iteragpu.docs_tools.sizer_config_vectors) is a config's text, the options the CLI
// was given and what size_model answered. Here the text is read by the sizer, its fields fill a
// query with the same options, and the sizer's figures must equal Python's: parameters, weights,
// KV bytes per token, the KV cache per layer kind, the total. A refused config must be refused
// for the same reason (and the same key, where Python names one). The families described as
// data are read from the page's data (`families`, python docs/hooks.py --sizer-data), as the
// page reads them; a vector of a family of the vectors' own carries its recipe (`families`).
// What the reader read is compared too: KV heads, head size, each layer's kind, the window, the
// active and float32 parameters. A multimodal config's wrapper and vision tower are read from
// the page's data too (`wrappers`, `towers`), as the page reads them. The expression vectors
// check the recipe evaluator alone.

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
const data = dataPath
  ? JSON.parse(readFileSync(dataPath, "utf-8"))
  : { defaults: vectors.defaults, tasks: ["inference", "training", "adaptation"], cards: [] };
if (!data.catalog) data.cards = [];
if (!data.families || !data.wrappers || !data.towers) {
  throw new Error("ITERAGPU_SIZER_DATA must be the page's data, with its families, wrappers " +
    "and towers (python docs/hooks.py --sizer-data)");
}
const configVectors = vectors.model_configs.filter((v) => v.text !== undefined);
const expressionVectors = vectors.model_configs.filter((v) => v.expression !== undefined);

/** The recipes a vector is read with: the page's, and the vector's own family's. */
function familiesOf(vector) {
  return { ...data.families, ...(vector.families ?? {}) };
}

/** An exact figure's text ("12", "9/8") as [numerator, denominator]. */
function fraction(text) {
  const [n, d] = String(text).split("/");
  return [BigInt(n), BigInt(d ?? "1")];
}

/** Whether the rational `value` ({n, d}) plus `extra` ([n, d]) is the figure `text`. */
function sumIs(value, extra, text) {
  const [n, d] = fraction(text);
  const sumN = value.n * extra[1] + extra[0] * value.d;
  const sumD = value.d * extra[1];
  return sumN * d === n * sumD;
}

// The caveats that depend on the config alone: the page states them beside the filled fields.
const CONFIG_CAVEATS = [
  "mla_latent",
  "mla_per_head",
  "quantized_checkpoint_from_config",
  "multimodal_encoder_not_counted",
  "mtp_layers_not_counted",
];

// How the page's fields model each layer kind that holds a KV (the others, layout `none` or no
// values per token: a family without attention heads, are left out): a hybrid layer's KV is a full layer's, a hybrid sliding or chunked layer's a
// sliding one's (a chunked layer's window is the chunk).
const FORM_KIND = {
  full_attention: "full_attention",
  hybrid: "full_attention",
  sliding_attention: "sliding_attention",
  hybrid_sliding: "sliding_attention",
  chunked_attention: "sliding_attention",
};

/** Python's KV groups as the page's fields model them: merged by the form's kind. */
function formGroups(layers) {
  const merged = new Map();
  for (const g of layers.filter((g) => g.layout !== "none" && g.values_per_token > 0)) {
    const kind = FORM_KIND[g.kind];
    assert.ok(kind !== undefined, `a KV layer kind the form does not model: ${g.kind}`);
    const key = JSON.stringify([kind, g.window, g.tokens_held]);
    const [n, d] = fraction(g.kv_cache_bytes);
    const seen = merged.get(key);
    if (seen === undefined) {
      merged.set(key, { kind, count: BigInt(g.count), window: g.window, tokensHeld: g.tokens_held,
        n, d });
    } else {
      seen.count += BigInt(g.count);
      [seen.n, seen.d] = [seen.n * d + n * seen.d, seen.d * d];
    }
  }
  return [...merged.values()].map((g) => ({ kind: g.kind, count: g.count, window: g.window,
    tokens_held: g.tokensHeld, bytes: sizer.rational(g.n, g.d) }));
}

/** The sizer query a config fills, with `iteragpu model`'s options typed over it. */
function queryOf(read, options) {
  const query = { ...vectors.defaults, ...read.query };
  query.tokens = options.tokens;
  query.sequences = options.sequences ?? "1";
  query.reserve_gib = options.reserve_gib ?? "0";
  query.cache = options.cache ?? "dynamic";
  if (options.kv_bytes_per_value !== undefined) query.bytes_per_value = options.kv_bytes_per_value;
  if (options.bits !== undefined) query.bits = options.bits;
  return query;
}

assert.ok(configVectors.length >= 60, "too few config vectors");
assert.ok(expressionVectors.length >= 100, "too few expression vectors");

for (const [index, vector] of configVectors.entries()) {
  test(`config ${index}: ${vector.name} ${JSON.stringify(vector.options)}`, () => {
    const want = vector.expected;
    const read = sizer.readConfig(vector.text, vector.options.mla_layout, familiesOf(vector),
      data);
    if (!want.valid) {
      assert.equal(read.ok, false, `JS read a config Python refuses: ${want.error}`);
      assert.equal(read.reason, want.reason, want.error);
      if (want.key !== null) assert.equal(read.key, want.key, want.error);
      return;
    }
    assert.equal(read.ok, true, `${read.reason} ${read.key}`);
    assert.equal(read.config.modelType, want.model_type);
    assert.equal(read.parameters.toString(), String(want.parameters));
    assert.equal(read.query.params, String(want.parameters));
    const reading = want.reading;
    assert.equal(read.config.kvHeads.toString(), String(reading.kv_heads), "kv heads");
    assert.equal(read.config.headDim.toString(), String(reading.head_dim), "head_dim");
    const windowedKinds = ["sliding_attention", "hybrid_sliding", "chunked_attention"];
    const sliding = reading.layer_kinds.filter((k) => windowedKinds.includes(k)).length;
    assert.equal(read.config.slidingLayers.toString(), String(sliding), "sliding layers");
    assert.deepEqual(read.config.layerKinds, reading.layer_kinds, "layer kinds");
    const kvLayers = formGroups(want.layers).reduce((sum, g) => sum + g.count, 0n);
    assert.equal(read.query.layers, String(kvLayers), "KV layers");
    const window = read.config.window === null ? null : Number(read.config.window);
    assert.equal(window, reading.sliding_window, "window");
    const chunk = read.config.chunkWindow === null ? null : Number(read.config.chunkWindow);
    assert.equal(chunk, reading.chunk_window, "chunk");
    const formWindow = read.query.window === "" ? null : Number(read.query.window);
    const wantWindow = kvLayers === 0n ? null : reading.sliding_window ?? reading.chunk_window;
    assert.equal(formWindow, wantWindow, "window field");
    const active = read.activeParameters === null ? null : read.activeParameters.toString();
    const wantActive = reading.active_parameters === null ? null : String(reading.active_parameters);
    assert.equal(active, wantActive, "active parameters");
    assert.equal(read.float32Parameters.toString(), String(reading.float32_parameters), "float32");
    const result = sizer.compute(queryOf(read, vector.options), data);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    // At the config's dtype, Python weighs the modules Transformers keeps in float32 (a router)
    // at 4 bytes each; the page's weights field holds every parameter at the dtype's bits, so
    // the difference is the float32 count readConfig states (float32Parameters).
    const kept = vector.options.bits === undefined ? read.float32Parameters : 0n;
    const widened = kept === 0n ? [0n, 1n] : [kept * (32n - BigInt(result.query.bits)), 8n];
    assert.ok(sumIs(result.weightsBytes, widened, want.weights_bytes),
      `weights ${sizer.exact(result.weightsBytes)} + float32 ${kept} != ${want.weights_bytes}`);
    assert.equal(sizer.exact(result.kvBytesPerToken), want.kv_bytes_per_token);
    assert.equal(sizer.exact(result.kvCacheBytes), want.kv_cache_bytes);
    assert.equal(sizer.exact(result.stateBytes), want.state_bytes, "state bytes");
    assert.ok(sumIs(result.modelTotalBytes, widened, want.total_bytes), "total");
    if (kept === 0n) assert.equal(sizer.exact(result.modelTotalBytes), want.total_bytes);
    const kinds = (groups) =>
      groups
        .map((g) => [g.kind, String(g.count), g.window === null ? null : String(g.window),
          String(g.tokens_held ?? g.tokensHeld), typeof g.bytes === "object"
            ? sizer.exact(g.bytes) : g.kv_cache_bytes])
        .sort();
    assert.deepEqual(kinds(result.kvGroups), kinds(formGroups(want.layers)));
    for (const group of want.layers) {
      if (group.layout !== "none") assert.equal(group.layout, read.layout);
    }
    const notes = read.notes.filter((n) => CONFIG_CAVEATS.includes(n)).sort();
    assert.deepEqual(notes, want.caveats.filter((c) => CONFIG_CAVEATS.includes(c)).sort());
  });
}

for (const [index, vector] of expressionVectors.entries()) {
  const how = vector.count ? "count" : "value";
  test(`expression ${index}: ${vector.expression} (${how})`, () => {
    const got = sizer.evaluateExpression(vector.expression, vector.values, vector.count);
    const want = vector.expected;
    if (want.valid) assert.deepEqual(got, { ok: true, value: want.repr });
    else assert.deepEqual(got, { ok: false, reason: want.reason, key: want.key });
  });
}

test("every family of the page's data has vectors, read and refused", () => {
  const families = Object.keys(data.families);
  assert.ok(families.length >= 2, "the page's data holds the recipes");
  for (const family of families) {
    const own = configVectors.filter((v) => v.name.startsWith(`family-${family}-`));
    assert.ok(own.some((v) => v.expected.valid && v.expected.model_type === family), family);
    assert.ok(own.some((v) => !v.expected.valid), family);
  }
});

test("every wrapper of the page's data has vectors, counted and refused", () => {
  const wrappers = Object.keys(data.wrappers);
  assert.ok(wrappers.length >= 2, "the page's data holds the wrappers' recipes");
  for (const wrapper of wrappers) {
    const own = configVectors.filter((v) => v.name.startsWith(`family-wrapper-${wrapper}-`));
    const counted = own.filter((v) => v.expected.valid &&
      !v.expected.caveats.includes("multimodal_encoder_not_counted"));
    assert.ok(counted.length > 0, wrapper);
    assert.ok(own.some((v) => !v.expected.valid && v.expected.key === "vision_config"), wrapper);
    assert.ok(own.some((v) => !v.expected.valid && v.expected.key !== "vision_config"), wrapper);
  }
});

test("a wrapper's tower is not counted without the page's wrappers and towers", () => {
  const vector = configVectors.find((v) => v.name === "family-wrapper-gemma3-minimal");
  if (vector === undefined) return; // a tree without Gemma-3's recipe
  const counted = sizer.readConfig(vector.text, undefined, data.families, data);
  assert.equal(counted.ok, true);
  assert.ok(!counted.notes.includes("multimodal_encoder_not_counted"));
  const text = sizer.readConfig(vector.text, undefined, data.families);
  assert.equal(text.ok, true);
  assert.ok(text.notes.includes("multimodal_encoder_not_counted"));
  assert.ok(text.parameters < counted.parameters);
});

test("a family described only as data is unknown without the page's families", () => {
  const vector = configVectors.find((v) => v.name === "family-mixtral-minimal");
  if (vector === undefined) return; // a tree without Mixtral's recipe
  assert.equal(sizer.readConfig(vector.text, undefined, data.families).ok, true);
  const read = sizer.readConfig(vector.text);
  assert.deepEqual(read, { ok: false, reason: "unknown_family", key: "mixtral" });
});

test("every expression, however bad, ends in a value or a reason, never an exception", () => {
  const pieces = [
    "a", "b", "l", "d", "s", "n", "1", "0", "-", "+", "*", "//", "%", "(", ")", "[", "]", ",",
    "<", "==", "is", "not", "in", "and", "or", "if", "else", "min", "max", "len", "'x'", "None",
    "True", ".", "**", "/", ":", "lambda", "1.5", "\\", '"',
  ];
  const values = JSON.stringify({ a: 3, b: -1, l: [1, 2], d: { k: 1 }, s: "ab", n: null });
  let seed = 12345;
  const random = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 3000; i++) {
    const size = 1 + random(9);
    const expression = Array.from({ length: size }, () => pieces[random(pieces.length)]).join(" ");
    for (const count of [false, true]) {
      const got = sizer.evaluateExpression(expression, values, count);
      assert.equal(typeof got.ok, "boolean", expression);
      if (!got.ok) assert.equal(typeof got.reason, "string", expression);
    }
  }
});

test("a config beyond the size limit is refused before it is read", () => {
  const text = `{"model_type": "llama", "pad": "${"x".repeat(sizer.CONFIG_MAX_CHARS)}"}`;
  assert.deepEqual(sizer.readConfig(text), { ok: false, reason: "config_too_large", key: null });
});

test("keys named like Object's own members stay data", () => {
  for (const text of [
    '{"model_type": "constructor"}',
    '{"model_type": "__proto__"}',
    '{"__proto__": {"model_type": "llama"}}',
    '{"model_type": "toString", "text_config": {"model_type": "hasOwnProperty"}}',
  ]) {
    const read = sizer.readConfig(text);
    assert.equal(read.ok, false, text);
    assert.ok(["unknown_family", "no_model_type"].includes(read.reason), text);
  }
});

test("every bad text ends in a reason, never an exception", () => {
  const families = configVectors.filter((v) => v.name.startsWith("family-") && v.expected.valid);
  const bases = [configVectors.find((v) => v.expected.valid), ...families.slice(0, 40)];
  for (const vector of bases) {
    const base = vector.text;
    for (let cut = 0; cut < base.length; cut += 7) {
      const read = sizer.readConfig(base.slice(0, cut) + base.slice(cut + 3), undefined,
        familiesOf(vector), data);
      assert.equal(typeof read.ok, "boolean");
      if (!read.ok) assert.equal(typeof read.reason, "string");
    }
  }
});

test("the chart stacks weights, reserve and KV and marks each card's capacities", () => {
  if (!data.catalog) return;
  const result = sizer.compute({ reserve_gib: "6" }, data);
  const cards = sizer.loadCatalog(data.catalog);
  const model = sizer.chartModel(result, cards);
  assert.deepEqual(model.segments.map((s) => s.key), ["weights", "reserve", "kv"]);
  assert.equal(sizer.exact(model.segments[2].end), sizer.exact(result.modelTotalBytes));
  assert.equal(sizer.exact(model.segments[1].end), sizer.exact(result.totalBytes));
  // The cards that matter: those to check, in the short list's review order; the excluded
  // are named apart.
  const toCheck = result.candidates.filter((c) => c.status !== "excluded");
  assert.deepEqual(model.cards.map((c) => c.id), toCheck.map((c) => c.id));
  assert.deepEqual(
    model.excluded.map((c) => c.id),
    result.candidates.filter((c) => c.status === "excluded").map((c) => c.id)
  );
  assert.equal(model.cards.length + model.excluded.length, cards.length);
  const unknown = model.cards.filter((c) => c.declaredBytes === null);
  assert.ok(unknown.length > 0, "the catalogue has cards without a declared capacity");
  for (const card of model.cards) {
    const paper = card.declaredBytes !== null ? card.declaredBytes : card.nominalBytes;
    // Judged on the whole need (weights, reserve, KV cache), never the first estimate.
    const whole = result.modelTotalBytes;
    const within = paper.n * whole.d >= whole.n * paper.d;
    assert.equal(card.paper, within ? "within" : "beyond", card.id);
  }
  // The axis holds twice the need with its KV cache.
  const need = result.modelTotalBytes;
  assert.ok(model.maxBytes.n * need.d >= 2n * need.n * model.maxBytes.d);
  // A large need: small cards fall out of the chart, and none of those drawn is beyond on
  // paper by more than the binary reading allows.
  const big = sizer.compute({ params: "70e9", bits: "16", reserve_gib: "6" }, data);
  const bigModel = sizer.chartModel(big, cards);
  assert.ok(bigModel.excluded.length > model.excluded.length);
  assert.ok(bigModel.cards.every((c) => c.nominalGb === null || c.nominalGb.n * (1n << 30n) >= big.modelTotalBytes.n / big.modelTotalBytes.d));
  assert.equal(
    sizer.fillTemplate("{card}: {nominal}, {x}", { card: "A", nominal: "B" }), "A: B, {x}"
  );
});
