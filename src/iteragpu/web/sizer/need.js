/*
 * What the fullest GPU needs for the task the reader chose, and every card judged against it.
 * Mirrors iteragpu.gpus.need (the need: its computed parts, the parts still to measure) and
 * iteragpu.cli.needs (each task's parts from the sizing's own figures).
 *
 * A need with a part still to measure is a lower bound: a card it already exceeds cannot hold
 * the task (an exclusion on paper stands), and the margin on paper of a card that holds it is
 * at most the figure shown. The first estimate (weights + reserve) is the guide's arithmetic
 * and never decides a verdict here.
 */

import { add, rational } from "./rational.js";
import { shortlist } from "./shortlist.js";
import { INFERENCE_MISSING, TRAINING_MISSING } from "./compute.js";

function part(name, bytes, layerKind) {
  return { part: name, bytes: bytes, layerKind: layerKind || null };
}

function total(parts) {
  return parts.reduce(function (sum, p) {
    return add(sum, p.bytes);
  }, rational(0n));
}

function need(task, parts, missing, cards, basis) {
  return {
    task: task,
    parts: parts,
    missing: missing.slice(),
    bytes: total(parts),
    complete: missing.length === 0,
    cards: cards,
    basis: basis,
  };
}

/**
 * One GPU's inference need (cli.needs.model_need): the weights, the KV cache per layer kind,
 * the layers' states, the reserve; the activations and the prompt's temporaries to measure.
 * `result` is a valid `compute` result.
 */
export function inferenceNeed(result) {
  var parts = [part("weights", result.weightsBytes)];
  result.kvGroups.forEach(function (g) {
    if (g.bytes.n !== 0n) parts.push(part("kv_cache", g.bytes, g.kind));
  });
  if (result.stateBytes && result.stateBytes.n !== 0n) {
    parts.push(part("layer_states", result.stateBytes));
  }
  parts.push(part("reserve", result.reserveBytes));
  return need("inference", parts, INFERENCE_MISSING, 1n, "one_gpu");
}

/**
 * The fullest GPU's need of a split (cli.needs.rank_need): that rank's weights, KV cache and
 * the reserve each GPU keeps (the split's own total is their sum); as many cards as ranks.
 * `split` is a valid `vllmSplit` answer, `reserveBytes` the reserve it was given.
 */
export function splitNeed(split, reserveBytes) {
  var rank = split.firstToFill;
  var parts = [
    part("weights", rank.weightsBytes),
    part("kv_cache", rank.kvCacheBytes),
    part("reserve", reserveBytes),
  ];
  return need("inference", parts, INFERENCE_MISSING, BigInt(split.ranks.length), "fullest_rank");
}

/**
 * The fullest GPU's need of a training run (cli.needs.train_need): its model states (the
 * weights with their quantization state, gradients, optimizer states with the shared ones,
 * master copies) and the reserve; the activations and the step's temporaries to measure; as
 * many cards as the run's GPUs. `plan` is a valid `trainingPlan` answer.
 */
export function trainingNeed(plan, reserveBytes) {
  var parts = [
    part("weights", rational(plan.weightsBytes)),
    part("gradients", rational(plan.gradientsBytes)),
    part("optimizer_states", rational(plan.optimizerBytes)),
  ];
  if (plan.masterWeightsBytes) parts.push(part("master_weights", rational(plan.masterWeightsBytes)));
  if (plan.masterGradientsBytes) {
    parts.push(part("master_gradients", rational(plan.masterGradientsBytes)));
  }
  parts.push(part("reserve", reserveBytes));
  return need("training", parts, TRAINING_MISSING, BigInt(plan.request.gpus), "fullest_gpu");
}

/** Every catalogue card judged against a need over `days`, for as many cards as it needs. */
export function judge(catalog, theNeed, days) {
  return shortlist(catalog, theNeed.bytes, days, theNeed.cards, theNeed.missing);
}
