/*
 * Training mode, first step: the model's tensors from its recipe, named as the family's
 * causal-LM class names them, and the methods' targets. Mirrors iteragpu.training.naming,
 * iteragpu.training.adapters' targets and iteragpu.models.tensors.
 */

import { get, has, record } from "./objects.js";
import { isObject, truthy } from "./json_reader.js";
import { evaluateRecipe, recipeCount } from "./expressions.js";
import { recipeOf, recipeScope, section, terms } from "./recipes.js";
import { wrapperCounts } from "./towers.js";

// ------------------------------------------------------------------------------------------
// Training mode (`iteragpu train`, iteragpu.training): a run's model states from a pasted
// config, tensor by tensor and per GPU. The tables (how each family's causal-LM class names
// and builds its modules, PEFT's default targets and MoE conversion, the byte rules'
// constants) are the page's data (`training`: iteragpu.training.page.sizer_tables); the
// tensors come from the family's recipe, as the rest of the page reads it. Each function
// below mirrors the Python one it names; tests/js/sizer_training.test.mjs holds the answers
// to `iteragpu train`'s (iteragpu.docs_tools.sizer_training_vectors). Activations are not
// computed: the page shows them as to be measured.
// ------------------------------------------------------------------------------------------

const TRAIN_METHODS = ["full", "lora", "dora", "qlora", "qdora"];
export const QUANTIZED_METHODS = ["qlora", "qdora"]; // adapters.QUANTIZED_METHODS
export const DORA_METHODS = ["dora", "qdora"];
const TRAIN_PRECISIONS = ["fp32", "bf16", "fp16", "autocast-bf16", "autocast-fp16", "bf16-master"];
const TRAIN_OPTIMIZERS = ["adamw", "adamw-amsgrad", "adamw-8bit", "sgd", "sgd-momentum", "adafactor"];
export const TRAIN_SHARDS = ["none", "fsdp2", "zero1", "zero2", "zero3"];
export const TRAIN_FUSED = ["adamw", "adamw-amsgrad", "sgd", "sgd-momentum"];
export const TRAIN_MAX_RANK = 65536n; // iteragpu.cli.train_request
export const TRAIN_MAX_GPUS = 100000n;
const ALL_LINEAR = "all-linear";
const LINEAR_KINDS = ["linear", "linear_subclass", "conv1d"];
export const ROLES = ["base", "saved_copy", "adapter", "quantized", "quant_state"];
export const DTYPE_BYTES = { float32: 4n, bfloat16: 2n, float16: 2n, uint8: 1n, int32: 4n };
const WEIGHT_DTYPES = {
  fp32: "float32", bf16: "bfloat16", fp16: "float16", "autocast-bf16": "float32",
  "autocast-fp16": "float32", "bf16-master": "bfloat16",
};

export function TrainFailure(reason, values) {
  this.reason = reason;
  this.values = values || {};
}

export function trainRefuse(reason, values) {
  throw new TrainFailure(reason, values);
}

export function elementsOf(shape) {
  return shape.reduce(function (total, size) {
    return total * size;
  }, 1n);
}

export function under(module, ancestor) {
  return module === ancestor || module.indexOf(ancestor + ".") === 0;
}

/** recipe.term_tensors: the [name, shape] of each tensor a term states, or null (the one
 * reader of a recipe's tensors, for the training mode and the split alike). */
function termTensors(term, scope, extra) {
  var name = String(get(term, "name"));
  if (has(term, "linear")) {
    var inputs = recipeCount(term.linear[0], scope, extra);
    var outputs = recipeCount(term.linear[1], scope, extra);
    var found = [[name + ".weight", [outputs, inputs]]];
    if (has(term, "bias") && truthy(evaluateRecipe(term.bias, scope, extra))) {
      found.push([name + ".bias", [outputs]]);
    }
    return found;
  }
  if (has(term, "shape")) {
    return [[name + ".weight", term.shape.map(function (e) {
      return recipeCount(e, scope, extra);
    })]];
  }
  if (has(term, "tensors")) {
    var out = [];
    term.tensors.forEach(function (t) {
      if (has(t, "when") && !truthy(evaluateRecipe(t.when, scope, extra))) return;
      var shape = t.shape.map(function (e) {
        return recipeCount(e, scope, extra);
      });
      if (!has(t, "repeat")) {
        out.push([String(t.name), shape]);
        return;
      }
      var repeat = recipeCount(t.repeat, scope, extra);
      for (var i = 0n; i < repeat; i++) out.push([String(t.name).split("{i}").join(String(i)), shape]);
    });
    return out;
  }
  return null;
}

/** Each tensor of `terms` ({name, layer, shape, float32}), or null where one states none. */
function termsTensors(scope, list, extra, layer) {
  var found = [];
  for (var k = 0; k < list.length; k++) {
    var term = list[k];
    if (has(term, "when") && !truthy(evaluateRecipe(term.when, scope, extra))) continue;
    var made = termTensors(term, scope, extra);
    if (made === null) return null;
    var float32 = get(term, "dtype") === "float32";
    var routed = get(term, "routed") !== null;
    made.forEach(function (t) {
      var elements = t[1].reduce(function (a, b) { return a * b; }, 1n);
      found.push({
        name: t[0], layer: layer, shape: t[1], float32: float32, routed: routed, elements: elements,
      });
    });
  }
  return found;
}

/** recipe.tensors: every tensor the family builds, in order, tied weights once; or null. */
export function recipeTensors(recipe, scope, kinds) {
  var found = termsTensors(scope, terms(recipe, "embeddings"), null, null);
  if (found === null) return null;
  for (var index = 0; index < kinds.length; index++) {
    var extra = record({ layer: BigInt(index), kind: kinds[index] });
    var layer = termsTensors(scope, terms(recipe, "layer"), extra, index);
    if (layer === null) return null;
    found = found.concat(layer);
  }
  var final = termsTensors(scope, terms(recipe, "final"), null, null);
  return final === null ? null : found.concat(final);
}

/** naming.family_naming: the family's entry, each key from the nearest on its base chain. */
function familyNaming(training, families, modelType) {
  var table = get(get(training, "naming"), "families");
  var chain = [];
  var seen = modelType;
  for (var guard = 0; guard < 64; guard++) {
    if (has(table, seen)) chain.push(table[seen]);
    var described = recipeOf(families, seen);
    var base = described === null ? null : get(described, "base");
    if (typeof base !== "string") break;
    seen = base;
  }
  var merged = {};
  var modules = {};
  var transposed = [];
  var frozen = [];
  chain.slice().reverse().forEach(function (entry) {
    Object.keys(entry).forEach(function (key) {
      merged[key] = entry[key];
    });
    Object.keys(section(entry, "modules")).forEach(function (key) {
      modules[key] = entry.modules[key];
    });
    (get(entry, "transposed") || []).forEach(function (m) {
      if (transposed.indexOf(m) < 0) transposed.push(m);
    });
    (get(entry, "frozen") || []).forEach(function (m) {
      if (frozen.indexOf(m) < 0) frozen.push(m);
    });
  });
  if (!has(merged, "outer") || !has(merged, "layer")) {
    trainRefuse("no_tensor_names", { family: modelType });
  }
  return {
    outer: String(merged.outer),
    layer: String(merged.layer),
    head: has(merged, "head") ? String(merged.head) : "lm_head",
    tied: isObject(get(merged, "tied")) ? merged.tied : {},
    last: get(merged, "last"),
    modules: modules,
    transposed: transposed,
    frozen: frozen,
    wrapper: has(table, modelType) ? get(table[modelType], "wrapper") : null,
  };
}

/** naming._Classes: each module's class from the table, else from its term's kind. */
function moduleClasses(recipe, modules) {
  var linear = {};
  ["embeddings", "layer", "final", "projector"].forEach(function (key) {
    terms(recipe, key).forEach(function (term) {
      if (has(term, "linear")) linear[String(term.name)] = true;
    });
  });
  var embedding = {};
  terms(recipe, "embeddings").forEach(function (term) {
    if (has(term, "shape") && term.shape.length === 2) embedding[String(term.name)] = true;
  });
  var patterns = Object.keys(modules).sort().map(function (key) {
    var source = key.split("*").map(function (part) {
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }).join("[^.]+");
    return [new RegExp("^" + source + "$"), modules[key]];
  });
  return function (module) {
    for (var i = 0; i < patterns.length; i++) {
      if (patterns[i][0].test(module)) return patterns[i][1];
    }
    if (has(linear, module)) return "linear";
    if (has(embedding, module)) return "embedding";
    return "parameters";
  };
}

export function trainParam(name, shape, float32, kind, frozen) {
  var dot = name.lastIndexOf(".");
  return {
    name: name, shape: shape, float32: float32, kind: kind, frozen: frozen,
    module: name.slice(0, Math.max(dot, 0)), leaf: name.slice(dot + 1),
    elements: elementsOf(shape),
  };
}

function specParams(specs, kind, nameOf, frozen) {
  return specs.map(function (spec) {
    var module = spec.name.slice(0, Math.max(spec.name.lastIndexOf("."), 0));
    return trainParam(nameOf(spec), spec.shape, spec.float32, kind(module),
      (frozen || []).indexOf(spec.name) >= 0);
  });
}

/** naming._finish: tied heads, the last module, the transposed experts. */
function finishTensors(modelType, params, head, naming, tied, sources, lastPrefix) {
  var byName = {};
  var modules = {};
  params.forEach(function (p) {
    byName[p.name] = p;
    modules[p.module] = true;
  });
  var tiedHeads = {};
  if (tied) {
    Object.keys(sources).forEach(function (module) {
      var weight = byName[sources[module] + ".weight"];
      if (!has(modules, module) && weight !== undefined) {
        tiedHeads[module] = { shape: weight.shape, float32: weight.float32 };
      }
    });
  }
  var last = params.length ? params[params.length - 1].module : "";
  if (naming.last !== null && naming.last !== undefined && has(tiedHeads, head)) {
    var prefix = (lastPrefix !== null ? lastPrefix : naming.outer) + naming.last + ".";
    params.forEach(function (p) {
      if (p.name.indexOf(prefix) === 0) last = p.module;
    });
  }
  var transposed = {};
  params.forEach(function (p) {
    naming.transposed.forEach(function (t) {
      if (p.module.slice(-(t.length + 1)) === "." + t) transposed[p.module] = true;
    });
  });
  return {
    modelType: modelType, params: params, head: head, tiedHeads: tiedHeads,
    lastModule: last, transposed: transposed,
  };
}

/** naming.model_tensors: every parameter as the causal-LM (or wrapper) class holds it. */
export function modelTensors(c, data) {
  var training = get(data, "training");
  var naming = familyNaming(training, data.families, c.modelType);
  if (c.outerModelType !== null) return wrapperTensors(c, data, naming);
  if (naming.wrapper !== null && naming.wrapper !== undefined) {
    trainRefuse("no_causal_lm", { family: c.modelType, wrapper: naming.wrapper });
  }
  var specs = c.recipe === null
    ? null
    : recipeTensors(c.recipe, recipeScope(c.recipe, c.values), c.layerKinds);
  if (specs === null) trainRefuse("no_tensors", { family: c.modelType });
  var head = naming.head;
  var params = specParams(specs, moduleClasses(c.recipe, naming.modules), function (spec) {
    if (spec.layer !== null) return naming.layer.split("{layer}").join(String(spec.layer)) + spec.name;
    if (spec.name === head || spec.name.indexOf(head + ".") === 0) return spec.name;
    return naming.outer + spec.name;
  }, naming.frozen);
  var tied = c.tied && Object.keys(naming.tied).length > 0;
  return finishTensors(c.modelType, params, head, naming, tied, naming.tied, null);
}

function wrapperTensors(c, data, naming) {
  var wrapped = wrapperCounts(c, data);
  var towers = get(get(get(data, "training"), "naming"), "towers");
  if (wrapped === null) trainRefuse("no_tensors", { family: c.outerModelType });
  var entry = get(towers, wrapped.visionType);
  if (entry === null) trainRefuse("no_tensor_names", { family: wrapped.visionType });
  var vision = wrapped.vision;
  var layers = recipeCount(get(vision.recipe, "layers"), vision.scope, null);
  var towerSpecs = termsTensors(vision.scope, terms(vision.recipe, "embeddings"), null, null);
  for (var i = 0n; i < layers && towerSpecs !== null; i++) {
    var layer = termsTensors(vision.scope, terms(vision.recipe, "layer"), null, Number(i));
    towerSpecs = layer === null ? null : towerSpecs.concat(layer);
  }
  var finalSpecs = termsTensors(vision.scope, terms(vision.recipe, "final"), null, null);
  var projector = termsTensors(wrapped.scope, terms(wrapped.described, "projector"), null, null);
  var textValues = record(c.values, { tie_word_embeddings: wrapped.tied });
  var text = recipeTensors(c.recipe, recipeScope(c.recipe, textValues), c.layerKinds);
  if (towerSpecs === null || finalSpecs === null || projector === null || text === null) {
    trainRefuse("no_tensors", { family: c.outerModelType });
  }
  var modules = section(wrapped.described, "modules");
  var visionPrefix = String(modules.vision) + ".";
  var towerLayer = String(get(entry, "layer"));
  var params = specParams(towerSpecs.concat(finalSpecs),
    moduleClasses(vision.recipe, section(entry, "modules")), function (spec) {
      if (spec.layer !== null) {
        return visionPrefix + towerLayer.split("{layer}").join(String(spec.layer)) + spec.name;
      }
      return visionPrefix + spec.name;
    });
  if (get(modules, "projector") !== null) {
    var projectorPrefix = String(modules.projector) + ".";
    params = params.concat(specParams(projector, moduleClasses(wrapped.described, {}),
      function (spec) {
        return projectorPrefix + spec.name;
      }));
  }
  var language = String(modules.language_model) + ".";
  var head = String(modules.lm_head);
  var ownHead = naming.head;
  var outer = naming.outer;
  var innerLayer = naming.layer.indexOf(outer) === 0 ? naming.layer.slice(outer.length) : naming.layer;
  var strip = function (name) {
    return name.indexOf(outer) === 0 ? name.slice(outer.length) : name;
  };
  params = params.concat(specParams(text, moduleClasses(c.recipe, naming.modules), function (spec) {
    if (spec.layer !== null) return language + innerLayer.split("{layer}").join(String(spec.layer)) + spec.name;
    if (spec.name === ownHead || spec.name.indexOf(ownHead + ".") === 0) {
      return head + spec.name.slice(ownHead.length);
    }
    return language + strip(spec.name);
  }, naming.frozen));
  var sources = {};
  Object.keys(naming.tied).forEach(function (key) {
    sources[head] = language + strip(String(naming.tied[key]));
  });
  return finishTensors(c.outerModelType, params, head, naming, wrapped.tied, sources, language);
}

export function weightDtype(precision) {
  if (!has(WEIGHT_DTYPES, precision)) trainRefuse("unknown_precision");
  return WEIGHT_DTYPES[precision];
}

/** adapters._Model: a model's tensors, its linear modules and the module tree. */
export function TrainModel(tensors, training) {
  var self = this;
  this.tensors = tensors;
  this.modelType = tensors.modelType;
  this.head = tensors.head;
  this.params = tensors.params;
  this.peft = get(training, "peft");
  this.linears = {};
  this.linearOrder = [];
  this.embeddings = {};
  this.params.forEach(function (p) {
    if (p.leaf !== "weight") return;
    if (LINEAR_KINDS.indexOf(p.kind) >= 0) {
      if (!has(self.linears, p.module)) self.linearOrder.push(p.module);
      self.linears[p.module] = p;
    } else if (p.kind === "embedding") {
      self.embeddings[p.module] = p;
    }
  });
  this.modules = [];
  var seen = {};
  this.params.forEach(function (p) {
    var parts = p.module.split(".");
    for (var end = 1; end <= parts.length; end++) {
      var key = parts.slice(0, end).join(".");
      if (!has(seen, key)) {
        seen[key] = true;
        self.modules.push(key);
      }
    }
  });
  Object.keys(tensors.tiedHeads).forEach(function (head) {
    if (!has(seen, head)) {
      self.modules.push(head);
      seen[head] = true;
    }
  });
}

TrainModel.prototype.allLinear = function () {
  var head = this.head;
  return this.linearOrder.filter(function (m) {
    return m !== head;
  });
};

/** _Model.converted: PEFT's _convert_peft_config_moe. */
TrainModel.prototype.converted = function (names) {
  var base = get(this.peft.moe_converted, this.modelType);
  if (base === null) return { names: names, parameters: [], multiples: {} };
  var mapping = this.peft.moe_targets[base];
  var fused = this.peft.moe_fused[base];
  if (names !== null && names.length === 1 && names[0] === ALL_LINEAR) {
    var leaves = {};
    this.allLinear().forEach(function (m) {
      leaves[m.slice(m.lastIndexOf(".") + 1)] = true;
    });
    Object.keys(mapping).forEach(function (old) {
      leaves[old] = true;
    });
    names = Object.keys(leaves).sort();
  }
  var moved = [];
  var remaining = [];
  var present = {};
  Object.keys(fused).forEach(function (target) {
    present[target] = {};
  });
  (names || []).forEach(function (target) {
    var olds = Object.keys(mapping);
    for (var i = 0; i < olds.length; i++) {
      var old = olds[i];
      if (target === old || target.slice(-(old.length + 1)) === "." + old) {
        var renamed = mapping[old];
        if (moved.indexOf(renamed) < 0) moved.push(renamed);
        if (has(present, renamed)) present[renamed][old] = true;
        return;
      }
    }
    remaining.push(target);
  });
  var multiples = {};
  var family = this.modelType;
  Object.keys(fused).forEach(function (target) {
    var required = fused[target];
    var got = Object.keys(present[target]);
    if (got.length > 0 && got.length < required.length) {
      trainRefuse("lora_targets_fused", {
        present: got.sort().join(", "),
        missing: required.filter(function (r) {
          return got.indexOf(r) < 0;
        }).sort().join(", "),
        fused: target,
        family: family,
      });
    }
    if (got.length === required.length && required.length > 1) multiples[target] = required.length;
  });
  if (!remaining.length && !moved.length) {
    trainRefuse("lora_targets_converted_none", { family: family });
  }
  return { names: remaining, parameters: moved, multiples: multiples };
};

/** _Model.lora_targets: the modules LoRA wraps (no modules to save on this page). */
TrainModel.prototype.loraTargets = function (names, withParameters) {
  var self = this;
  var chosen;
  if (names !== null && names.length === 1 && names[0] === ALL_LINEAR) {
    chosen = this.allLinear();
  } else {
    if (names === null) {
      var found = get(this.peft.default_targets, this.modelType);
      if (found === null && withParameters) found = [];
      if (found === null) trainRefuse("lora_targets_no_default", { family: this.modelType });
      names = found;
    }
    if (!names.length && !withParameters) trainRefuse("lora_targets_empty");
    chosen = [];
    names.forEach(function (name) {
      var matched = self.modules.filter(function (m) {
        return m === name || m.slice(-(name.length + 1)) === "." + name;
      });
      if (!matched.length) {
        trainRefuse("lora_target_unknown", { target: name, family: self.modelType });
      }
      matched.forEach(function (module) {
        if (!has(self.linears, module) && !has(self.embeddings, module) &&
            !has(self.tensors.tiedHeads, module)) {
          trainRefuse("lora_target_not_linear", { target: name, module: module });
        }
      });
      chosen = chosen.concat(matched);
    });
  }
  var targets = {};
  chosen.forEach(function (m) {
    targets[m] = true;
  });
  return targets;
};

/** _Model.quantized_linears: what Transformers makes Linear4bit. */
TrainModel.prototype.quantizedLinears = function () {
  var kept = {};
  this.params.forEach(function (p) {
    if (p.float32) kept[p.module] = true;
  });
  var self = this;
  var found = {};
  this.linearOrder.forEach(function (m) {
    var kind = self.linears[m].kind;
    if ((kind === "linear" || kind === "conv1d") && m !== self.head &&
        m !== self.tensors.lastModule && !has(kept, m)) {
      found[m] = true;
    }
  });
  return found;
};

/** _Model.wrapped_parameters: per module, the leaves PEFT's target_parameters wraps. */
TrainModel.prototype.wrappedParameters = function (names, method, targets, quantized) {
  if (!names.length) return {};
  if (DORA_METHODS.indexOf(method) >= 0) {
    trainRefuse("lora_parameters_dora", { family: this.modelType, name: names[0] });
  }
  var self = this;
  var found = {};
  var order = [];
  names.forEach(function (name) {
    var matched = self.params.filter(function (p) {
      return p.name === name || p.name.slice(-(name.length + 1)) === "." + name;
    });
    if (!matched.length) {
      trainRefuse("lora_parameter_unknown", { target: name, family: self.modelType });
    }
    matched.forEach(function (p) {
      if (p.shape.length !== 2 && p.shape.length !== 3) {
        trainRefuse("lora_parameter_shape", { name: p.name, dims: String(p.shape.length) });
      }
      if (has(targets, p.module) || has(quantized, p.module)) {
        trainRefuse("lora_parameter_wrapped", { name: p.name });
      }
      if (!has(found, p.module)) {
        found[p.module] = [];
        order.push(p.module);
      }
      if (found[p.module].indexOf(p.leaf) < 0) found[p.module].push(p.leaf);
    });
  });
  var position = {};
  this.params.forEach(function (p, i) {
    position[p.name] = i;
  });
  var result = {};
  order.forEach(function (module) {
    result[module] = found[module].slice().sort(function (a, b) {
      return position[module + "." + a] - position[module + "." + b];
    });
  });
  return result;
};

/** _Model.check_mamba: what PEFT refuses in a Mamba-based model. */
TrainModel.prototype.checkMamba = function (targets, wrapped) {
  if (this.peft.mamba_types.indexOf(this.modelType) < 0) return;
  var modules = Object.keys(targets).concat(Object.keys(wrapped)).sort();
  for (var i = 0; i < modules.length; i++) {
    var leaf = modules[i].slice(modules[i].lastIndexOf(".") + 1);
    if (this.peft.mamba_incompatible.indexOf(leaf) >= 0) {
      trainRefuse("lora_target_mamba", { module: modules[i], family: this.modelType });
    }
  }
};
