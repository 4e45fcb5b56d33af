/*
 * Families described as data: a family's recipe counted, its layer kinds, window, attention
 * and states. Mirrors iteragpu.models.recipe.
 */

import { add, mul, rational } from "./rational.js";
import { get, has, record } from "./objects.js";
import { ConfigFailure, isObject, readJson, refuse, truthy } from "./json_reader.js";
import {
  badRecipe, evaluateRecipe, mentions, parsedExpression, pyRepr, pyText, readsLayer, recipeCount,
} from "./expressions.js";

export function section(recipe, key) {
  var value = get(recipe, key);
  return isObject(value) ? value : {};
}

export function terms(recipe, key) {
  var value = get(recipe, key);
  return Array.isArray(value) ? value : [];
}

/** The recipe of `modelType` in `families` (the page's data), or null. */
export function recipeOf(families, modelType) {
  if (!isObject(families) || !has(families, modelType)) return null;
  return isObject(families[modelType]) ? families[modelType] : null;
}

/** The config's values over the family's defaults, then derived keys, then `let` names. */
export function recipeScope(recipe, raw) {
  var values = record(section(recipe, "defaults"), raw);
  var scope = record(values);
  var derived = section(recipe, "derived");
  Object.keys(derived).forEach(function (key) {
    if (get(values, key) === null) scope[key] = evaluateRecipe(derived[key], scope, null);
  });
  var lets = section(recipe, "let");
  Object.keys(lets).forEach(function (key) {
    scope[key] = evaluateRecipe(lets[key], scope, null);
  });
  return scope;
}

function reads(expression, name) {
  if (typeof expression !== "string") return false;
  var parsed = parsedExpression(expression);
  if (parsed === null) return true; // an unreadable one is refused where it is first read
  return name === "layer" ? parsed.layer : mentions(parsed.node, name);
}

/** Whether any of a term's expressions (its count, condition, experts, tensors) reads `name`. */
function termReads(term, name) {
  var expressions = [get(term, "count"), get(term, "when"), get(term, "bias")];
  var routed = get(term, "routed");
  if (isObject(routed)) expressions.push(get(routed, "experts"), get(routed, "per_token"));
  [get(term, "linear"), get(term, "shape")].forEach(function (list) {
    if (Array.isArray(list)) expressions = expressions.concat(list);
  });
  var tensors = get(term, "tensors");
  if (Array.isArray(tensors)) {
    tensors.forEach(function (t) {
      if (!isObject(t)) return;
      expressions.push(get(t, "when"));
      if (Array.isArray(get(t, "shape"))) expressions = expressions.concat(t.shape);
    });
  }
  return expressions.some(function (e) {
    return reads(e, name);
  });
}

function termReadsLayer(term) {
  return termReads(term, "layer");
}

function product(shape, scope, extra) {
  if (!Array.isArray(shape)) badRecipe("shape");
  return shape.reduce(function (total, e) {
    return total * recipeCount(e, scope, extra);
  }, 1n);
}

/**
 * A term's parameters (recipe._term_count): its `count`, else the elements of the tensors it
 * states (`linear`: [in, out] and a bias of `out` where `bias` holds; `shape`; `tensors`).
 */
function termCount(term, scope, extra) {
  if (has(term, "count")) return recipeCount(term.count, scope, extra);
  if (has(term, "linear")) {
    var linear = term.linear;
    if (!Array.isArray(linear) || linear.length !== 2) badRecipe("linear");
    var inputs = recipeCount(linear[0], scope, extra);
    var outputs = recipeCount(linear[1], scope, extra);
    var biased = has(term, "bias") && truthy(evaluateRecipe(term.bias, scope, extra));
    return outputs * inputs + (biased ? outputs : 0n);
  }
  if (has(term, "shape")) return product(term.shape, scope, extra);
  if (has(term, "tensors") && Array.isArray(term.tensors)) {
    return term.tensors.reduce(function (total, t) {
      if (!isObject(t)) badRecipe("tensors");
      if (has(t, "when") && !truthy(evaluateRecipe(t.when, scope, extra))) return total;
      return total + product(get(t, "shape"), scope, extra);
    }, 0n);
  }
  return badRecipe("count");
}

/** Adds one term's parameters, those used per token and those kept in float32 to `counts`. */
export function addTerm(term, scope, counts, extra) {
  if (has(term, "when") && !truthy(evaluateRecipe(term.when, scope, extra))) return;
  var count = termCount(term, scope, extra);
  var active = count;
  var routed = get(term, "routed");
  if (routed !== null) {
    var experts = recipeCount(get(routed, "experts"), scope, extra);
    // None (DeepSeek-V2's class default): the parameters count, the active ones are unknown.
    var stated = evaluateRecipe(get(routed, "per_token"), scope, extra) !== null;
    var perToken = stated ? recipeCount(get(routed, "per_token"), scope, extra) : 0n;
    if (experts === 0n || count % experts !== 0n || perToken > experts) {
      refuse("bad_key", pyText(get(routed, "per_token")));
    }
    active = stated ? count / experts * perToken : null;
  }
  counts.parameters += count;
  counts.active = active === null || counts.active === null ? null : counts.active + active;
  if (get(term, "dtype") === "float32") counts.float32 += count;
}

function addCounts(counts, more, times) {
  counts.parameters += more.parameters * times;
  counts.float32 += more.float32 * times;
  counts.active = counts.active === null || more.active === null
    ? null
    : counts.active + more.active * times;
}

/**
 * The parameters a recipe counts (iteragpu.models.recipe.count): embeddings, each layer's
 * terms (`layer`, its index, and `kind`, its kind, known), the final ones. A layer term that
 * reads neither is the same on every layer: counted once and multiplied; one that reads only
 * the kind is counted once per kind (layer 0 is read whole first, and each layer in order,
 * so a refusal is the Python's).
 */
export function countRecipe(recipe, scope, kinds) {
  var counts = { parameters: 0n, active: 0n, float32: 0n };
  terms(recipe, "embeddings").forEach(function (term) {
    addTerm(term, scope, counts, null);
  });
  var layerTerms = terms(recipe, "layer");
  var varying = layerTerms.map(termReadsLayer);
  var byKind = layerTerms.map(function (term, k) {
    return !varying[k] && termReads(term, "kind");
  });
  var same = { parameters: 0n, active: 0n, float32: 0n };
  var perKind = record(); // kind -> term index -> its counts
  for (var index = 0; index < kinds.length; index++) {
    var kind = kinds[index];
    var extra = record({ layer: BigInt(index), kind: kind });
    if (!has(perKind, kind)) perKind[kind] = [];
    for (var k = 0; k < layerTerms.length; k++) {
      if (varying[k]) {
        addTerm(layerTerms[k], scope, counts, extra);
      } else if (byKind[k]) {
        var known = perKind[kind][k];
        if (known === undefined) {
          known = perKind[kind][k] = { parameters: 0n, active: 0n, float32: 0n };
          addTerm(layerTerms[k], scope, known, extra);
        }
        addCounts(counts, known, 1n);
      } else if (index === 0) {
        addTerm(layerTerms[k], scope, same, extra);
      }
    }
  }
  addCounts(counts, same, BigInt(kinds.length));
  terms(recipe, "final").forEach(function (term) {
    addTerm(term, scope, counts, null);
  });
  return counts;
}

/** Python's `not` of a recipe's `require` condition: refused naming its key (Recipe.check). */
export function checkRequire(recipe, scope) {
  var rules = get(recipe, "require");
  if (!Array.isArray(rules)) return;
  rules.forEach(function (rule) {
    if (!truthy(evaluateRecipe(get(rule, "holds"), scope, null))) {
      refuse("bad_key", get(rule, "key"));
    }
  });
}

/**
 * Bytes per sequence of every layer's state (iteragpu.models.state): each kind's `states`
 * tensors, elements x the model's bytes per value (`modelBytes`, a rational; null where the
 * dtype is not known) or 4 for float32. Returns {bytes, needsModelDtype}.
 */
export function stateBytes(recipe, scope, kinds, modelBytes) {
  var rules = section(recipe, "states");
  var made = record();
  var elements = { model: 0n, float32: 0n };
  var needs = false; // a tensor at the model's dtype, even of no elements (needs_model_dtype)
  for (var index = 0; index < kinds.length; index++) {
    var kind = kinds[index];
    var list = has(rules, kind) && Array.isArray(rules[kind]) ? rules[kind] : [];
    if (list.length === 0) continue;
    var layer = made[kind];
    if (layer === undefined) {
      var extra = record({ layer: BigInt(index), kind: kind });
      layer = { model: 0n, float32: 0n, needs: false };
      list.forEach(function (term) {
        var count = recipeCount(get(term, "count"), scope, extra);
        if (get(term, "dtype") === "float32") {
          layer.float32 += count;
        } else {
          layer.model += count;
          layer.needs = true;
        }
      });
      // Layers of one kind share their states unless a count reads the layer's index.
      var readsIndex = list.some(function (term) {
        return reads(get(term, "count"), "layer");
      });
      if (!readsIndex) made[kind] = layer;
    }
    elements.model += layer.model;
    elements.float32 += layer.float32;
    needs = needs || layer.needs;
  }
  var bytes = rational(elements.float32 * 4n);
  if (needs && modelBytes !== null) bytes = add(bytes, mul(rational(elements.model), modelBytes));
  return { bytes: bytes, needsModelDtype: needs };
}

/** Each layer's kind by the recipe's `layer_kind`, over the config's values alone. */
export function recipeLayerKinds(recipe, raw, layers) {
  var expression = has(recipe, "layer_kind") ? recipe.layer_kind : "'full_attention'";
  var kindAt = function (index) {
    var kind = evaluateRecipe(expression, raw, record({ layer: index }));
    if (typeof kind !== "string") badRecipe("layer_kind");
    return kind;
  };
  var kinds = [];
  if (!readsLayer(expression)) {
    var kind = kindAt(0n);
    for (var i = 0n; i < layers; i++) kinds.push(kind);
    return kinds;
  }
  for (var index = 0n; index < layers; index++) kinds.push(kindAt(index));
  return kinds;
}

/** The window a recipe computes (`window`; None: none), read as the config's would be. */
export function recipeWindow(recipe, read) {
  var value = evaluateRecipe(recipe.window, read.raw, null);
  if (value === null) return null;
  if (typeof value !== "bigint") return read.positiveValue("sliding_window", value); // refused
  if (value <= 0n || value > 1000000000000n) refuse("bad_key", "sliding_window");
  return value;
}

/** The config with the canonical names a recipe's `aliases` give its own keys. */
export function aliased(recipe, text) {
  var aliases = section(recipe, "aliases");
  var names = Object.keys(aliases);
  if (names.length === 0) return text;
  var values = record(text);
  names.forEach(function (canonical) {
    if (get(values, canonical) !== null) return;
    var value = text;
    String(aliases[canonical]).split(".").forEach(function (part) {
      value = isObject(value) ? get(value, part) : null;
    });
    if (value !== null) values[canonical] = value;
  });
  return values;
}

/** KV heads and head size where the recipe computes them (`attention`). */
export function recipeAttention(recipe, raw) {
  var rules = section(recipe, "attention");
  var keys = Object.keys(rules);
  var out = {};
  if (keys.length === 0) return out;
  var scope = recipeScope(recipe, raw);
  keys.forEach(function (key) {
    out[key] = recipeCount(rules[key], scope, null);
  });
  return out;
}

/** A recipe expression over a config's values (JSON text), for the tests: {ok, value} as
 * Python's repr, or {ok: false, reason, key}; `asCount` reads it as Scope.count does. */
export function evaluateExpression(expression, valuesText, asCount) {
  try {
    var values = readJson(String(valuesText));
    if (!isObject(values)) refuse("config_not_object");
    var value = asCount
      ? recipeCount(expression, values, null)
      : evaluateRecipe(expression, values, null);
    return { ok: true, value: pyRepr(value) };
  } catch (error) {
    if (!(error instanceof ConfigFailure)) throw error;
    return { ok: false, reason: error.reason, key: error.key };
  }
}

/**
 * The decoder of `text` (iteragpu.models.config._parse_decoder): a family of FAMILIES, read
 * by hand, else one whose recipe `families` holds (the page's data), read by its recipe.
 */
