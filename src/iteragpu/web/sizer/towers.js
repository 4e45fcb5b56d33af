/*
 * Multimodal wrappers: the vision tower and projector a wrapper builds beside its text
 * decoder. Mirrors iteragpu.models.towers.
 */

import { get, record } from "./objects.js";
import { isObject, refuse, truthy } from "./json_reader.js";
import { evaluateRecipe, pyValue, recipeCount } from "./expressions.js";
import {
  addTerm, checkRequire, countRecipe, recipeOf, recipeScope, section, terms,
} from "./recipes.js";

// ------------------------------------------------------------------------------------------
// Multimodal wrappers as data (iteragpu.models.towers): what a wrapper builds beside its text
// decoder, its vision tower and projector, from the page's data (`wrappers`, `towers`: docs/
// hooks.py sizer_data). A wrapper's expressions read its keys over its defaults and two dicts,
// `text` (the decoder's values; `tie_word_embeddings` the text config's own) and `vision`
// (the tower's values): `vision['hidden_size'] * text['hidden_size']`. A wrapper or a tower
// without a recipe is not counted (the note multimodal_encoder_not_counted says so).
// ------------------------------------------------------------------------------------------

/** The recipe of `modelType` in the page's data's `key` (`wrappers`, `towers`), or null. */
function multimodalRecipe(multimodal, key, modelType) {
  if (!isObject(multimodal) || typeof modelType !== "string") return null;
  return recipeOf(get(multimodal, key), modelType);
}

/** The decoder's model_type a wrapper builds when its text_config names none, or null. */
export function wrapperTextType(multimodal, wrapperType) {
  var described = multimodalRecipe(multimodal, "wrappers", wrapperType);
  return described === null ? null : String(get(described, "text"));
}

/** Refuse a size that is not a positive whole number (towers._positive), naming its key. */
function refuseNotPositive(values, keys) {
  if (!Array.isArray(keys)) return;
  keys.forEach(function (key) {
    var value = pyValue(get(values, String(key)));
    if (typeof value !== "bigint" || value <= 0n || value > 1000000000000n) {
      refuse("bad_key", String(key));
    }
  });
}

/**
 * The tower a wrapper's vision config names and its values (towers._vision): {recipe, scope},
 * or null where the tower has no recipe. No vision config: the wrapper's own default one; a
 * stated one must give the tower's `required` keys (its layers, heads and width).
 */
function visionOf(rules, outer, multimodal) {
  var key = String(get(rules, "key"));
  var stated = get(outer, key);
  var raw;
  if (stated === null) {
    raw = record(section(rules, "defaults")); // the class's own default vision config
  } else if (isObject(stated)) {
    raw = record(stated);
  } else {
    refuse("bad_key", key);
  }
  var modelType = truthy(get(rules, "fixed")) ? get(rules, "model_type") : get(raw, "model_type");
  if (modelType === null) modelType = get(rules, "model_type");
  if (typeof modelType !== "string") refuse("bad_key", key + ".model_type");
  var described = multimodalRecipe(multimodal, "towers", modelType);
  if (described === null) return null;
  var aliases = section(described, "aliases");
  Object.keys(aliases).forEach(function (canonical) {
    var name = String(aliases[canonical]);
    if (get(raw, canonical) === null && get(raw, name) !== null) raw[canonical] = raw[name];
  });
  if (stated !== null) {
    var required = get(described, "required");
    (Array.isArray(required) ? required : []).forEach(function (name) {
      if (get(raw, String(name)) === null) refuse("missing_key", String(name));
    });
  }
  var values = record(section(described, "defaults"), raw);
  refuseNotPositive(values, get(described, "positive"));
  var scope = recipeScope(described, values);
  checkRequire(described, scope);
  return { recipe: described, scope: scope, modelType: modelType };
}

/** A tower's parameters (towers._tower_counts): embeddings, `layers` alike layers, final. */
function towerCounts(described, scope) {
  var counts = { parameters: 0n, active: 0n, float32: 0n };
  terms(described, "embeddings").forEach(function (term) {
    addTerm(term, scope, counts, null);
  });
  var layers = recipeCount(get(described, "layers"), scope, null);
  var one = { parameters: 0n, active: 0n, float32: 0n };
  terms(described, "layer").forEach(function (term) {
    addTerm(term, scope, one, null);
  });
  counts.parameters += one.parameters * layers;
  counts.float32 += one.float32 * layers;
  terms(described, "final").forEach(function (term) {
    addTerm(term, scope, counts, null);
  });
  return counts;
}

/**
 * What a multimodal config's wrapper builds beside its decoder (towers.wrapper_counts):
 * {parameters, float32, tied} of its vision tower and projector, and whether the head is tied
 * by the wrapper's rule; null where the wrapper, its tower or the decoder has no recipe.
 */
export function wrapperCounts(c, multimodal) {
  var outer = c.outerValues;
  var described = truthy(c.outerModelType)
    ? multimodalRecipe(multimodal, "wrappers", c.outerModelType)
    : null;
  if (described === null || outer === null || c.recipe === null) return null;
  var found = visionOf(section(described, "vision"), outer, multimodal);
  if (found === null) return null;
  var vision = towerCounts(found.recipe, found.scope);
  var textScope = recipeScope(c.recipe, c.values);
  var rawText = get(outer, "text_config");
  var ownTie = isObject(rawText) ? get(rawText, "tie_word_embeddings") : null;
  if (ownTie === null) ownTie = get(section(c.recipe, "defaults"), "tie_word_embeddings", false);
  // The wrapper's keys over its defaults, each of `lists` as a list (`-2` reads `[-2]`).
  var values = record(section(described, "defaults"), outer);
  var lists = get(described, "lists");
  (Array.isArray(lists) ? lists : []).forEach(function (name) {
    var value = get(values, String(name));
    if (!Array.isArray(value)) values[String(name)] = [value];
  });
  values.text = record(textScope, { tie_word_embeddings: ownTie });
  values.vision = found.scope;
  var scope = recipeScope(described, values);
  refuseNotPositive(scope, get(described, "positive"));
  checkRequire(described, scope);
  var tied = evaluateRecipe(get(described, "tie"), scope, null);
  if (tied !== null && typeof tied !== "boolean") refuse("bad_key", "tie_word_embeddings");
  var projector = { parameters: 0n, active: 0n, float32: 0n };
  terms(described, "projector").forEach(function (term) {
    addTerm(term, scope, projector, null);
  });
  return {
    parameters: vision.parameters + projector.parameters,
    float32: vision.float32 + projector.float32,
    tied: tied === true,
    // What the training mode reads (its wrapperTensors): the recipes and their scopes.
    described: described,
    scope: scope,
    vision: found,
    visionType: found.modelType,
  };
}

/**
 * What the family's recipe counts (iteragpu.models.parameters.recipe_counts), or null; with a
 * wrapper's counts (`wrapped`), the head tied by its rule and its tower and projector added,
 * all active (every image goes through them).
 */
export function recipeCounts(c, wrapped) {
  if (c.recipe === null) return null;
  if (!wrapped) return countRecipe(c.recipe, recipeScope(c.recipe, c.values), c.layerKinds);
  var values = record(c.values, { tie_word_embeddings: wrapped.tied });
  var counts = countRecipe(c.recipe, recipeScope(c.recipe, values), c.layerKinds);
  counts.parameters += wrapped.parameters;
  counts.float32 += wrapped.float32;
  if (counts.active !== null) counts.active += wrapped.parameters;
  return counts;
}

/** Parameters of the decoder (iteragpu.models.parameters.count_parameters). */
