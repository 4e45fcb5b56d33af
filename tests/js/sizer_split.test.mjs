// The sizer's split over several GPUs against `iteragpu.parallel`'s vLLM plans.
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=... node --test tests/js/
//
// Each vector (iteragpu.docs_tools.sizer_split_vectors) is a config's text, a split (TP, PP, EP,
// tokens, sequences, reserve) and Python's answer: per rank, weights, the part other ranks hold
// too, KV bytes per token, token slots, KV cache and total, and the rank that fills first; or
// the refusal's reason. The sizer reads the text as the page does (readConfig) and splits it
// (vllmSplit): every figure must be Python's, exactly.

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

/** An exact figure's text ("12/1") as a rational. */
function rational(text) {
  const [n, d] = String(text).split("/");
  return sizer.rational(BigInt(n), BigInt(d ?? "1"));
}

function same(value, text) {
  const expected = rational(text);
  return value.n * expected.d === expected.n * value.d;
}

function split(vector) {
  const read = sizer.readConfig(vector.text, "mla_latent", data.families, data);
  assert.equal(read.ok, true, `${vector.name}: ${read.reason}`);
  const o = vector.options;
  const [rn, rd] = o.reserve_gib.split("/").map(BigInt);
  return sizer.vllmSplit(read, {
    tp: BigInt(o.tp),
    pp: BigInt(o.pp),
    ep: o.ep,
    tokens: BigInt(o.tokens),
    sequences: BigInt(o.sequences),
    elementBytes: sizer.rational(2n),
    kvBytesPerValue: sizer.rational(2n),
    reserveBytes: sizer.rational(rn * 2n ** 30n, rd),
  });
}

test("there are split vectors, refusals among them", () => {
  const splits = vectors.model_splits;
  assert.ok(splits.length >= 100);
  assert.ok(splits.some((v) => v.reason !== undefined));
  assert.ok(splits.some((v) => v.ranks !== undefined && v.ranks.length >= 8));
});

for (const vector of vectors.model_splits) {
  const o = vector.options;
  test(`${vector.name} tp ${o.tp} pp ${o.pp} ep ${o.ep}`, () => {
    const got = split(vector);
    if (vector.reason !== undefined) {
      assert.equal(got.ok, false, "Python refuses this split");
      assert.equal(got.reason, vector.reason);
      return;
    }
    assert.equal(got.ok, true, got.reason);
    assert.equal(got.ranks.length, vector.ranks.length);
    vector.ranks.forEach((expected, i) => {
      const rank = got.ranks[i];
      const where = `${vector.name} rank ${i}`;
      assert.equal(Number(rank.rank), expected.rank, where);
      assert.equal(Number(rank.stage), expected.stage, where);
      assert.deepEqual(rank.layers.map(Number), expected.layers, where);
      assert.ok(same(rank.weightsBytes, expected.weights), `${where} weights`);
      assert.ok(same(rank.replicatedBytes, expected.replicated), `${where} replicated`);
      assert.ok(same(rank.kvBytesPerToken, expected.kv_per_token), `${where} kv per token`);
      assert.equal(Number(rank.kvTokens), expected.kv_tokens, where);
      assert.ok(same(rank.kvCacheBytes, expected.kv), `${where} kv`);
      assert.ok(same(rank.totalBytes, expected.total), `${where} total`);
    });
    assert.equal(Number(got.firstToFill.rank), vector.first_to_fill);
  });
}
