// The sizer's training mode against `iteragpu train`'s answers.
//
//   python -m iteragpu.docs_tools.sizer_vectors > /tmp/vectors.json
//   python docs/hooks.py --sizer-data > /tmp/data.json
//   ITERAGPU_SIZER_VECTORS=/tmp/vectors.json ITERAGPU_SIZER_DATA=/tmp/data.json node --test tests/js/
//
// Each vector (iteragpu.docs_tools.sizer_training_vectors) is a config's text, the training
// form's values and what `iteragpu train --json` answered: the model's parameters, the trainable
// ones, the weights per role, the gradients, optimizer states (on the GPU and in host memory),
// master copies and model states of the GPU first to fill, every rank's; or the refusal's
// reason. The page's script reads the same text with the page's data (`families`, `wrappers`,
// `towers` and the training tables, `training`) and must give the same figures.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sizer from "../../src/iteragpu/web/sizer/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const path = process.env.ITERAGPU_SIZER_VECTORS;
if (!path) throw new Error("ITERAGPU_SIZER_VECTORS is not set (see tests/js/sizer.test.mjs)");
const vectors = JSON.parse(readFileSync(path, "utf-8")).training;
const dataPath = process.env.ITERAGPU_SIZER_DATA;
if (!dataPath) throw new Error("ITERAGPU_SIZER_DATA is not set (python docs/hooks.py --sizer-data)");
const data = JSON.parse(readFileSync(dataPath, "utf-8"));
if (!data.training) throw new Error("the page's data holds no training tables");

/** The page's answer in the shape of the vector's (bytes as numbers where Python's are). */
function shaped(plan) {
  if (!plan.valid) return { valid: false, reason: plan.reason };
  const n = (value) => Number(value);
  return {
    valid: true,
    parameters: n(plan.parameters),
    trainable_parameters: n(plan.trainableParameters),
    trainable_tensors: plan.trainableTensors,
    weights_bytes: n(plan.weightsBytes),
    gradients_bytes: n(plan.gradientsBytes),
    optimizer_state_bytes: n(plan.optimizerBytes),
    optimizer_host_bytes: n(plan.hostBytes),
    master_weights_bytes: n(plan.masterWeightsBytes),
    master_gradients_bytes: n(plan.masterGradientsBytes),
    model_states_bytes: n(plan.modelStatesBytes),
    first_to_fill: plan.firstToFill,
    weights: plan.roles.map((r) => ({
      role: r.role,
      tensors: r.tensors,
      elements: n(r.elements),
      trainable: r.trainable,
      weights_bytes: n(r.bytes),
    })),
    ranks: plan.ranks.map((r) => ({
      rank: r.rank,
      model_states_bytes: n(r.modelStatesBytes),
      padding_bytes: n(r.paddingBytes),
    })),
  };
}

test("the vectors cover every family, wrapper and choice, and refusals", () => {
  assert.ok(vectors.length > 500);
  const valid = vectors.filter((v) => v.expected.valid);
  assert.ok(valid.length > 400);
  for (const method of ["full", "lora", "dora", "qlora"]) {
    assert.ok(valid.some((v) => v.form.method === method), method);
  }
  for (const shard of ["none", "fsdp2", "zero1", "zero2", "zero3"]) {
    assert.ok(valid.some((v) => v.form.shard === shard), shard);
  }
  assert.ok(valid.some((v) => JSON.parse(v.text).vision_config !== undefined));
});

test("the page states every figure `iteragpu train` states, or refuses for its reason", () => {
  const wrong = [];
  for (const vector of vectors) {
    const plan = sizer.trainingPlan(vector.text, vector.form, data, false);
    try {
      assert.deepEqual(shaped(plan), vector.expected);
    } catch (error) {
      wrong.push(`${vector.name} ${JSON.stringify(vector.form)}: ${error.message.slice(0, 400)}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 5), []);
});

test("a training run's need is its fullest GPU's model states plus the reserve (iteragpu train)", () => {
  let checked = 0;
  for (const v of vectors) {
    if (!v.expected.valid) continue;
    const plan = sizer.trainingPlan(v.text, v.form, data, false);
    const reserve = sizer.rational(6n * (1n << 30n));
    const need = sizer.trainingNeed(plan, reserve);
    const states = BigInt(v.expected.model_states_bytes);
    assert.deepEqual(need.bytes, sizer.rational(states + 6n * (1n << 30n)), v.name);
    assert.equal(need.cards, BigInt(v.form.gpus), v.name);
    assert.deepEqual(need.missing, ["activations", "step_temporaries"]);
    assert.equal(need.complete, false);
    checked += 1;
  }
  assert.ok(checked > 100, `only ${checked} plans checked`);
});

test("the run's shape is read as the CLI reads it: recorded, refused when malformed", () => {
  const tiny = vectors.find((v) => v.name === "tiny-llama" && v.expected.valid);
  const plan = (extra) => sizer.trainingPlan(tiny.text, { ...tiny.form, ...extra }, data, false);
  const read = plan({ sequence_length: "4096", micro_batch: "4", grad_accum: "8", checkpointing: "full" });
  assert.equal(read.valid, true);
  assert.equal(read.request.sequence_length, 4096n);
  assert.equal(read.request.micro_batch, 4n);
  assert.equal(read.request.grad_accum, 8n);
  assert.equal(read.request.checkpointing, "full");
  // The states do not depend on them: activations are measured.
  assert.equal(read.modelStatesBytes, plan({}).modelStatesBytes);
  assert.deepEqual([plan({ sequence_length: "4k" }).field, plan({ sequence_length: "4k" }).reason],
    ["sequence_length", "ambiguous_suffix"]);
  assert.equal(plan({ micro_batch: "0" }).field, "micro_batch");
  assert.equal(plan({ grad_accum: "-1" }).field, "grad_accum");
  assert.equal(plan({ micro_batch: "" }).request.micro_batch, null);
});

test("a training run's chart stacks weights, model states and reserve, and judges cards on them", () => {
  const tiny = vectors.find((v) => v.name === "preset-llama-3.1-8b" && v.expected.valid && v.form.method === "qlora");
  assert.ok(tiny, "a QLoRA vector on Llama 3.1 8B");
  const plan = sizer.trainingPlan(tiny.text, tiny.form, data, false);
  const reserve = sizer.rational(2n * (1n << 30n));
  const need = sizer.trainingNeed(plan, reserve);
  const cards = sizer.loadCatalog(data.catalog);
  const candidates = sizer.judge(cards, need, 3n);
  const result = sizer.compute({}, data);
  const model = sizer.chartModel({ ...result, candidates }, cards, need);
  assert.deepEqual(model.segments.map((s) => s.key), ["weights", "states", "reserve"]);
  assert.deepEqual(model.segments[2].end, need.bytes);
  assert.equal(sizer.exact(model.segments[0].bytes), String(plan.weightsBytes));
  // Every card drawn is judged against the training need, not the inference figures.
  for (const card of model.cards) {
    const paper = card.declaredBytes !== null ? card.declaredBytes : card.nominalBytes;
    const within = paper.n * need.bytes.d >= need.bytes.n * paper.d;
    assert.equal(card.paper, within ? "within" : "beyond", card.id);
  }
  // QLoRA on an 8B model: the T4 (16 GB) is not excluded by a 7.66 GiB + 2 GiB need.
  const t4 = candidates.find((c) => c.id === "t4");
  assert.notEqual(t4.status, "excluded");
  assert.deepEqual(t4.needMissing, ["activations", "step_temporaries"]);
});
