/*
 * Training mode: the training form read as `iteragpu train` reads its options, and the
 * whole plan (trainingPlan). Mirrors iteragpu.cli.train_request and iteragpu.training.plan.
 */

import { parseCount, parseTokens, STRIP } from "./numbers.js";
import { get } from "./objects.js";
import { ConfigFailure, readJson } from "./json_reader.js";
import { parseConfig } from "./config.js";
import {
  DTYPE_BYTES, modelTensors, QUANTIZED_METHODS, ROLES, TRAIN_MAX_GPUS, TRAIN_MAX_RANK,
  TrainFailure, trainRefuse,
} from "./training_tensors.js";
import { checkTrainRequest, heldTensors, sharedItems, stateItems } from "./training_states.js";
import { shardPlan } from "./sharding.js";

/**
 * The training form's values read as `iteragpu train` reads its options (train_request):
 * {ok: true, request} or {ok: false, field, reason}.
 */
function trainRequest(form, decimalComma) {
  var request = {
    method: String(form.method), precision: String(form.precision),
    optimizer: String(form.optimizer), shard: String(form.shard),
    fused: form.fused === true || form.fused === "true",
    doubleQuant: form.double_quant === true || form.double_quant === "true",
  };
  var text = String(form.lora_targets || "");
  if (text.replace(STRIP, "") === "") {
    request.loraTargets = null;
  } else {
    var names = text.split(",").map(function (name) {
      return name.replace(STRIP, "");
    }).filter(Boolean);
    if (!names.length) return { ok: false, field: "lora_targets", reason: "no_names" };
    request.loraTargets = names;
  }
  var rank = parseCount(form.lora_r, TRAIN_MAX_RANK, decimalComma);
  if (!rank.ok) return { ok: false, field: "lora_r", reason: rank.reason };
  request.loraR = rank.value;
  var gpus = parseCount(form.gpus, TRAIN_MAX_GPUS, decimalComma);
  if (!gpus.ok) return { ok: false, field: "gpus", reason: gpus.reason };
  request.gpus = Number(gpus.value);
  // The run's shape (`--sequence-length`, `--micro-batch`, `--grad-accum`), read as the CLI
  // reads them: recorded, as they size the activations, which are measured; a field the form
  // leaves empty is not given (gradient accumulation: 1).
  var shape = [
    ["sequence_length", parseTokens, null],
    ["micro_batch", parseCount, null],
    ["grad_accum", parseCount, 1n],
  ];
  for (var i = 0; i < shape.length; i += 1) {
    var key = shape[i][0];
    var given = form[key] === undefined || form[key] === null ? "" : String(form[key]);
    if (given.replace(STRIP, "") === "") {
      request[key] = shape[i][2];
      continue;
    }
    var parsed = shape[i][1](given, TRAIN_MAX_STEPS, decimalComma);
    if (!parsed.ok) return { ok: false, field: key, reason: parsed.reason };
    request[key] = parsed.value;
  }
  // Gradient checkpointing (Transformers' gradient_checkpointing_enable): recorded; it changes
  // what the activations hold, not the model states.
  request.checkpointing = form.checkpointing === "full" ? "full" : "none";
  return { ok: true, request: request };
}

// iteragpu.cli.train_request.MAX_STEPS: the largest sequence length, micro-batch and
// accumulation the CLI takes.
const TRAIN_MAX_STEPS = 10n ** 9n;

/**
 * iteragpu.training.plan for a pasted config and the training form (its fields' text, as
 * the page holds them): {valid: true, ...the plan's figures} or {valid: false, reason,
 * values} (a refused config: its reason and key, as the config reader's).
 */
export function trainingPlan(text, form, data, decimalComma) {
  var read = trainRequest(form, decimalComma);
  if (!read.ok) return { valid: false, reason: read.reason, field: read.field, values: {} };
  var request = read.request;
  var training = get(data, "training");
  var constants = training.constants;
  try {
    checkTrainRequest(request);
    var c = parseConfig(readJson(String(text)), data.families, data);
    if (c.quantizationMethod !== null) {
      trainRefuse(QUANTIZED_METHODS.indexOf(request.method) >= 0
        ? "qlora_quantized_checkpoint"
        : "quantized_checkpoint",
        { method: c.quantizationMethod });
    }
    var model = modelTensors(c, data);
    var tensors = heldTensors(model, request, training);
    var states = {};
    tensors.forEach(function (t) {
      if (t.trainable) states[t.name] = stateItems(t, request, constants);
    });
    var shared = sharedItems(tensors, request, constants);
    var ranks = shardPlan(tensors, states, request.shard, request.gpus, constants);
  } catch (error) {
    if (error instanceof TrainFailure) {
      return { valid: false, reason: error.reason, values: error.values };
    }
    if (error instanceof ConfigFailure) {
      return { valid: false, reason: error.reason, values: { key: error.key }, config: true };
    }
    throw error;
  }
  var sharedGpu = shared.reduce(function (t, item) {
    return item.device === "gpu" ? t + item.bytes : t;
  }, 0n);
  var first = ranks.reduce(function (best, rank) {
    return rank.gpu > best.gpu ? rank : best;
  });
  var roles = [];
  ROLES.forEach(function (role) {
    var held = tensors.filter(function (t) {
      return t.role === role;
    });
    if (!held.length) return;
    roles.push({
      role: role,
      tensors: held.length,
      elements: held.reduce(function (t, x) {
        return t + x.elements;
      }, 0n),
      trainable: held.some(function (t) {
        return t.trainable;
      }),
      bytes: held.reduce(function (t, x) {
        return t + x.elements * DTYPE_BYTES[x.dtype];
      }, 0n),
    });
  });
  var trainable = tensors.filter(function (t) {
    return t.trainable;
  });
  return {
    valid: true,
    request: request,
    modelType: c.modelType,
    parameters: model.params.reduce(function (t, p) {
      return t + p.elements;
    }, 0n),
    trainableParameters: trainable.reduce(function (t, x) {
      return t + x.elements;
    }, 0n),
    trainableTensors: trainable.length,
    roles: roles,
    weightsBytes: first.parameters + first.quant_states,
    gradientsBytes: first.gradients,
    optimizerBytes: first.optimizer + sharedGpu,
    hostBytes: first.host,
    masterWeightsBytes: first.master_weights,
    masterGradientsBytes: first.master_gradients,
    modelStatesBytes: first.gpu + sharedGpu,
    ranks: ranks.map(function (rank) {
      return { rank: rank.rank, modelStatesBytes: rank.gpu + sharedGpu, paddingBytes: rank.padding };
    }),
    firstToFill: first.rank,
  };
}
