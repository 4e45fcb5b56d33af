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
});

test("every fit is Python's, figure by figure and flag by flag", () => {
  for (const vector of vectors.model_fits) {
    const got = solve(vector);
    const label = `${vector.name} on ${vector.card} ${JSON.stringify(vector.options)}`;
    if (vector.reason !== undefined) {
      assert.equal(got.ok, false, label);
      assert.equal(got.reason, vector.reason, label);
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
