// The results viewer's pure functions on their own (no Python needed): the schema loads, the
// example files pass, strict JSON and the schema's rules refuse what they should, a counter not
// read stays null. Python pins the same functions to its verdicts and to `iteragpu report`:
// tests/test_results_validator.py and tests/test_results_estimate.py.
//
//   node --test tests/js/

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import results from "../../src/iteragpu/web/results.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WEB = join(ROOT, "src", "iteragpu", "web");
const rawSchema = JSON.parse(
  readFileSync(join(ROOT, "src", "iteragpu", "lab", "result.schema.json"), "utf-8")
);
const schema = results.loadSchema(rawSchema);
const encode = (text) => new TextEncoder().encode(text);
const example = readFileSync(join(WEB, "results-example.ko.json"), "utf-8");

test("both example files are valid results", () => {
  for (const lang of ["ko", "id"]) {
    const bytes = new Uint8Array(readFileSync(join(WEB, `results-example.${lang}.json`)));
    const read = results.readResult(bytes, schema);
    assert.equal(read.ok, true, JSON.stringify(read.problem));
  }
});

test("integers are exact BigInts, beyond 2^53", () => {
  const value = results.parseStrict('{"a": 18446744073709551615}');
  assert.equal(value.get("a"), 2n ** 64n - 1n);
});

test("strict JSON refuses what Python's evidence reader refuses", () => {
  const cases = {
    '{"a": 1.0}': "fraction",
    '{"a": 1e3}': "fraction",
    '{"a": NaN}': "constant",
    '{"a": -Infinity}': "constant",
    '{"a": 18446744073709551616}': "beyond_64_bits",
    '{"a": 1, "a": 2}': "duplicate_key",
    '{"a": [1,]}': "not_json",
    "{'a': 1}": "not_json",
    '{"a": "\t"}': "not_json",
    "": "not_json",
  };
  for (const [text, code] of Object.entries(cases)) {
    assert.throws(() => results.parseStrict(text), (p) => p.code === code, text);
  }
  const deep = "[".repeat(17) + "]".repeat(17);
  assert.throws(() => results.parseStrict(deep), (p) => p.code === "too_deep");
  assert.doesNotThrow(() => results.parseStrict("[".repeat(16) + "]".repeat(16)));
});

test("bytes that are not UTF-8, or too many, are refused before parsing", () => {
  const bad = new Uint8Array([0x7b, 0xff, 0x7d]);
  assert.equal(results.readResult(bad, schema).problem.code, "not_utf8");
  const big = new Uint8Array(results.MAX_BYTES + 1).fill(0x20);
  assert.equal(results.readResult(big, schema).problem.code, "too_large");
});

test("a schema rule broken names where", () => {
  const doc = JSON.parse(example);
  doc.outcome.exit_code = 4; // an ok outcome must exit 0
  const read = results.readResult(encode(JSON.stringify(doc)), schema);
  assert.deepEqual(read.problem, {
    code: "schema_rule",
    where: "/outcome/exit_code",
    rule: "const: 0",
  });
});

test("a pattern's $ accepts a final newline, as Python's re does", () => {
  const doc = JSON.parse(example);
  doc.device = "cuda:0\n";
  assert.equal(results.readResult(encode(JSON.stringify(doc)), schema).ok, true);
  doc.device = "cuda:0\n\n";
  assert.equal(results.readResult(encode(JSON.stringify(doc)), schema).ok, false);
});

test("a keyword the viewer does not check stops it", () => {
  const changed = structuredClone(rawSchema);
  changed.properties.device.maxLength = 10;
  assert.throws(() => results.loadSchema(changed), /maxLength/);
});

test("a counter not read stays null in the comparison, never 0", () => {
  const doc = JSON.parse(example);
  doc.phases[0].end_allocated_bytes = null;
  // As the lab writes an unread counter of a completed phase: with the read error that says why.
  doc.phases[0].read_errors = { end_allocated_bytes: "RuntimeError: simulated read failure" };
  const read = results.readResult(encode(JSON.stringify(doc)), schema);
  assert.equal(read.ok, true);
  const c = results.compare(read.result, null, null);
  assert.equal(c.modelLoadAllocatedBytes, null);
  assert.equal(c.differenceBytes, null);
  assert.equal(c.differenceShare, null);
  assert.equal(c.modelLoadCachedBytes, null);
});

test("an unread counter of a completed phase with no read error is refused there", () => {
  const doc = JSON.parse(example);
  doc.phases[0].end_allocated_bytes = null;
  doc.phases[0].read_errors = {};
  const read = results.readResult(encode(JSON.stringify(doc)), schema);
  assert.equal(read.ok, false);
  assert.deepEqual(read.problem, { code: "counter_not_read", where: "/phases/0/end_allocated_bytes" });
});

test("the chart's rows: one per phase, warm_forward's last repeat", () => {
  const read = results.readResult(encode(example), schema);
  const rows = results.phaseRows(read.result);
  assert.deepEqual(rows.map((r) => r.phase), results.PHASES);
  const last = read.result.phases.filter((p) => p.phase === "warm_forward").pop();
  assert.equal(rows[4].record, last);
});

test("decimal places of exact values", () => {
  assert.equal(results.decimalPlaces({ n: 9n, d: 2n }), 1);
  assert.equal(results.decimalPlaces({ n: 1n, d: 1n << 30n }), 30);
  assert.equal(results.decimalPlaces({ n: 1n, d: 3n }), null);
});

test("the training example files are valid and drawn part by part", () => {
  for (const lang of ["ko", "id"]) {
    const found = [0, 1].map((rank) => {
      const bytes = new Uint8Array(readFileSync(join(WEB, `results-example-train.rank${rank}.${lang}.json`)));
      const read = results.readResult(bytes, schema);
      assert.equal(read.ok, true, JSON.stringify(read.problem));
      return read.result;
    });
    const rows = results.phaseRows(found[0]).map((row) => row.phase);
    assert.deepEqual(rows.slice(0, 3), ["model_load", "inputs", "forward (1)"]);
    assert.deepEqual(results.stepRows(found[0]).map((r) => r.phase), [
      "forward", "loss", "backward", "optimizer_step", "zero_grad",
    ]);
    // the second process holds the larger batch: its peak is the higher
    assert.equal(results.highestPeak(found).index, 1);
  }
});

test("the estimate per item follows iteragpu train's rules", () => {
  const groups = [{ shape: [4096n, 8n], dtype: "bfloat16", trainable: true, count: 2n }];
  const adamw = results.groupStates(groups, { precision: "bf16", optimizer: "adamw", fused: false });
  assert.deepEqual(adamw, { gradient: 131072n, gpu: 262144n, host: 8n, master_weight: 0n, master_gradient: 0n });
  const fused = results.groupStates(groups, { precision: "bf16", optimizer: "adamw", fused: true });
  assert.equal(fused.gpu - adamw.gpu, 8n); // the step counters move to the GPU
  const master = results.groupStates(groups, { precision: "bf16-master", optimizer: "sgd", fused: false });
  assert.equal(master.master_weight, 2n * 4096n * 8n * 4n);
  assert.equal(results.groupStates(groups, { precision: "bf16", optimizer: "adafactor", fused: true }), null);
});

test("parts that are not what the lab computes are refused where they are", () => {
  const text = readFileSync(join(WEB, "results-example-train.rank0.ko.json"), "utf-8");
  const doc = JSON.parse(text);
  doc.phases[2].parts.activations_and_temporaries_bytes += 512;
  const read = results.readResult(encode(JSON.stringify(doc)), schema);
  assert.equal(read.problem.code, "part_not_computed");
  assert.equal(read.problem.where, "/phases/2/parts/activations_and_temporaries_bytes");
});
