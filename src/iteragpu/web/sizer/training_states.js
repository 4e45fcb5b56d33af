/*
 * Training mode, second step: the tensors a run holds (adapters, quantized weights) and the
 * states kept per tensor. Mirrors iteragpu.training.adapters and iteragpu.training.states.
 */

import { has } from "./objects.js";
import {
  DORA_METHODS, DTYPE_BYTES, elementsOf, QUANTIZED_METHODS, TRAIN_FUSED, TrainModel, trainParam,
  trainRefuse, under, weightDtype,
} from "./training_tensors.js";

function trainTensor(name, shape, dtype, role, trainable) {
  return {
    name: name, shape: shape, dtype: dtype, role: role, trainable: trainable,
    elements: elementsOf(shape),
  };
}

/** adapters._adapters: LoRA's (and DoRA's) tensors for one wrapped module. */
function adapterTensors(module, weight, request, out) {
  var rank = request.loraR;
  var dtype = "float32"; // PEFT's autocast_adapter_dtype: float32 whatever the base
  var magnitude;
  if (weight.kind === "embedding") {
    out.push(trainTensor(module + ".lora_embedding_A.default", [rank, weight.shape[0]], dtype, "adapter", true));
    out.push(trainTensor(module + ".lora_embedding_B.default", [weight.shape[1], rank], dtype, "adapter", true));
    magnitude = weight.shape[1];
  } else {
    var conv = weight.kind === "conv1d"; // Transformers' Conv1D holds [in, out]
    var inputs = conv ? weight.shape[0] : weight.shape[1];
    var outputs = conv ? weight.shape[1] : weight.shape[0];
    out.push(trainTensor(module + ".lora_A.default.weight", [rank, inputs], dtype, "adapter", true));
    out.push(trainTensor(module + ".lora_B.default.weight", [outputs, rank], dtype, "adapter", true));
    magnitude = outputs;
  }
  if (DORA_METHODS.indexOf(request.method) >= 0) {
    out.push(trainTensor(module + ".lora_magnitude_vector.default.weight", [magnitude], dtype, "adapter", true));
  }
}

/** adapters._parameter_adapters: PEFT's ParamWrapper for one parameter. */
function parameterAdapters(at, target, transposed, rank, out) {
  var experts;
  var inputs;
  var outputs;
  if (target.shape.length === 3) {
    experts = target.shape[0];
    inputs = transposed ? target.shape[1] : target.shape[2];
    outputs = transposed ? target.shape[2] : target.shape[1];
  } else {
    experts = 1n;
    outputs = target.shape[0];
    inputs = target.shape[1];
  }
  var width = rank * experts;
  out.push(trainTensor(at + ".lora_A.default.weight", [width, inputs], "float32", "adapter", true));
  out.push(trainTensor(at + ".lora_B.default.weight", [outputs, width], "float32", "adapter", true));
}

/** adapters._quantized: a Linear4bit's packed weight and its QuantState's tensors. */
function quantizedTensors(name, elements, doubleQuant, constants, out) {
  var block = BigInt(constants.block);
  var blocks = (elements + block - 1n) / block;
  out.push(trainTensor(name, [(elements + 1n) / 2n, 1n], "uint8", "quantized", false));
  var codes = BigInt(constants.nf4_fp4_codes);
  if (!doubleQuant) {
    out.push(trainTensor(name + ".absmax", [blocks], "float32", "quant_state", false));
    out.push(trainTensor(name + ".quant_map", [codes], "float32", "quant_state", false));
    return;
  }
  var nested = (blocks + BigInt(constants.nested_block) - 1n) / BigInt(constants.nested_block);
  out.push(trainTensor(name + ".absmax", [blocks], "uint8", "quant_state", false));
  out.push(trainTensor(name + ".quant_map", [codes], "float32", "quant_state", false));
  out.push(trainTensor(name + ".nested_absmax", [nested], "float32", "quant_state", false));
  out.push(trainTensor(name + ".nested_quant_map", [BigInt(constants.dynamic_codes)], "float32", "quant_state", false));
  out.push(trainTensor(name + ".nested_offset", [], "float32", "quant_state", false));
}

/** adapters.held_tensors: every tensor the run holds, in the model's order. */
export function heldTensors(tensors, request, training) {
  var model = new TrainModel(tensors, training);
  var base = weightDtype(request.precision);
  if (request.method === "full") {
    return model.params.map(function (p) {
      return trainTensor(p.name, p.shape, p.float32 ? "float32" : base, "base", !p.frozen);
    });
  }
  var converted = model.converted(request.loraTargets);
  var ranks = {};
  Object.keys(converted.multiples).forEach(function (leaf) {
    ranks[leaf] = request.loraR * BigInt(converted.multiples[leaf]);
  });
  var targets = model.loraTargets(converted.names, converted.parameters.length > 0);
  var quantized = QUANTIZED_METHODS.indexOf(request.method) >= 0 ? model.quantizedLinears() : {};
  var wrapped = model.wrappedParameters(converted.parameters, request.method, targets, quantized);
  model.checkMamba(targets, wrapped);
  var qlora = QUANTIZED_METHODS.indexOf(request.method) >= 0;
  var byModule = {};
  model.params.forEach(function (p) {
    (byModule[p.module] = byModule[p.module] || []).push(p);
  });
  var holders = Object.keys(wrapped);
  var out = [];
  model.params.forEach(function (p) {
    var module = p.module;
    var levels = has(wrapped, module) ? wrapped[module].length : 0;
    var holder = null;
    for (var h = 0; h < holders.length; h++) {
      if (under(module, holders[h])) {
        holder = holders[h];
        break;
      }
    }
    var prefix;
    if (has(targets, module)) {
      prefix = module + ".base_layer." + p.leaf;
    } else if (holder !== null) {
      prefix = holder + new Array(wrapped[holder].length + 1).join(".base_layer") +
        p.name.slice(holder.length);
    } else {
      prefix = p.name;
    }
    var dtype = qlora || p.float32 ? "float32" : base;
    if (has(quantized, module) && p.leaf === "weight") {
      quantizedTensors(prefix, p.elements, request.doubleQuant, training.constants, out);
    } else if (has(quantized, module)) {
      // adapters._held: a 4-bit layer's bias is cast to the compute dtype at the first forward
      out.push(trainTensor(prefix, p.shape, base, "base", false));
    } else {
      out.push(trainTensor(prefix, p.shape, dtype, "base", false));
    }
    if (has(targets, module) && p.leaf === "weight") adapterTensors(module, p, request, out);
    var mine = byModule[module];
    if (mine[mine.length - 1] === p && levels) {
      wrapped[module].forEach(function (leaf, index) {
        var target = mine.filter(function (q) {
          return q.leaf === leaf;
        })[0];
        var at = module + new Array(levels - index).join(".base_layer");
        var rank = has(ranks, leaf) ? ranks[leaf] : request.loraR;
        parameterAdapters(at, target, has(tensors.transposed, module), rank, out);
      });
    }
  });
  Object.keys(tensors.tiedHeads).forEach(function (module) {
    if (has(targets, module)) {
      var tied = tensors.tiedHeads[module];
      adapterTensors(module, trainParam(module + ".weight", tied.shape, false, "linear", false),
        request, out);
    }
  });
  return out;
}

function stateItem(kind, name, shape, dtype, device) {
  return {
    kind: kind, name: name, shape: shape, dtype: dtype,
    bytes: elementsOf(shape) * DTYPE_BYTES[dtype], device: device || "gpu",
  };
}

/** states.check_request: a fused mode only where the optimizer has one. */
export function checkTrainRequest(request) {
  if (request.fused && TRAIN_FUSED.indexOf(request.optimizer) < 0) {
    trainRefuse("fused_unsupported", { name: request.optimizer });
  }
}

/** states.state_items: the gradient, master copies and optimizer states of one tensor. */
export function stateItems(tensor, request, constants) {
  if (!tensor.trainable) return [];
  var shape = tensor.shape;
  var items = [stateItem("gradient", "grad", shape, tensor.dtype)];
  var stepped = tensor.dtype;
  if (request.precision === "bf16-master" && (tensor.dtype === "bfloat16" || tensor.dtype === "float16")) {
    stepped = "float32";
    items.push(stateItem("master_weight", "master", shape, "float32"));
    items.push(stateItem("master_gradient", "master_grad", shape, "float32"));
  }
  var optimizer = request.optimizer;
  var stepDevice = request.fused ? "gpu" : "host";
  if (optimizer === "adamw" || optimizer === "adamw-amsgrad") {
    items.push(stateItem("optimizer", "step", [], "float32", stepDevice));
    items.push(stateItem("optimizer", "exp_avg", shape, stepped));
    items.push(stateItem("optimizer", "exp_avg_sq", shape, stepped));
    if (optimizer === "adamw-amsgrad") items.push(stateItem("optimizer", "max_exp_avg_sq", shape, stepped));
  } else if (optimizer === "sgd-momentum") {
    items.push(stateItem("optimizer", "momentum_buffer", shape, stepped));
  } else if (optimizer === "adafactor") {
    items.push(stateItem("optimizer", "step", [], "float32", "host"));
    if (shape.length >= 2) {
      items.push(stateItem("optimizer", "row_var", shape.slice(0, -1).concat([1n]), stepped));
      items.push(stateItem("optimizer", "col_var",
        shape.slice(0, -2).concat([1n, shape[shape.length - 1]]), stepped));
    } else {
      items.push(stateItem("optimizer", "variance", shape, stepped));
    }
  } else if (optimizer === "adamw-8bit") {
    if (tensor.elements < BigInt(constants.min_8bit_size)) {
      items.push(stateItem("optimizer", "state1", shape, "float32"));
      items.push(stateItem("optimizer", "state2", shape, "float32"));
    } else {
      var blocks = (tensor.elements + BigInt(constants.block_8bit) - 1n) / BigInt(constants.block_8bit);
      items.push(stateItem("optimizer", "state1", shape, "uint8"));
      items.push(stateItem("optimizer", "state2", shape, "uint8"));
      items.push(stateItem("optimizer", "absmax1", [blocks], "float32"));
      items.push(stateItem("optimizer", "absmax2", [blocks], "float32"));
    }
  }
  return items;
}

/** states.shared_items: bitsandbytes' two maps, GradScaler's scale and growth tracker. */
export function sharedItems(tensors, request, constants) {
  var items = [];
  var eightBit = tensors.some(function (t) {
    return t.trainable && t.elements >= BigInt(constants.min_8bit_size);
  });
  if (request.optimizer === "adamw-8bit" && eightBit) {
    items.push(stateItem("optimizer", "qmap1", [BigInt(constants.qmap_values)], "float32"));
    items.push(stateItem("optimizer", "qmap2", [BigInt(constants.qmap_values)], "float32"));
  }
  if (request.precision === "autocast-fp16") {
    items.push(stateItem("optimizer", "scale", [], "float32"));
    items.push(stateItem("optimizer", "growth_tracker", [], "int32"));
  }
  return items;
}
