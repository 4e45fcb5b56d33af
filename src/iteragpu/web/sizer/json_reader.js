/*
 * A config.json's text read as Python's json reads it (floats and big integers kept apart),
 * and the refusal every reader throws. Mirrors iteragpu.models.json_reader and
 * iteragpu.models.errors.
 */

import { has, record } from "./objects.js";

export function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !isFloat(value) && !isBigInteger(value);
}

// Python's json reads `6.0`, `1e3`, NaN and Infinity as floats, which no count accepts;
// JSON.parse reads `6.0` as 6. Such literals outside strings become a marker object first.
export const FLOAT_KEY = "\u0000float";
// An integer beyond 2^53, which JSON.parse would round, is kept as its digits (a marker object
// too): Python's json reads it exactly, and a family's recipe may compute with it.
export const INTEGER_KEY = "\u0000integer";
const MAX_SAFE_INTEGER = 9007199254740991n;
const JSON_TOKEN = /"(?:[^"\\]|\\[\s\S])*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|-?Infinity|NaN/g;
const JSON_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const FLOAT_ZERO = /^-?0(?:\.0+)?(?:[eE][+-]?[0-9]+)?$/;

export function isFloat(value) {
  return value !== null && typeof value === "object" && has(value, FLOAT_KEY);
}

export function isBigInteger(value) {
  return value !== null && typeof value === "object" && has(value, INTEGER_KEY);
}

/** Python's truthiness of a JSON value. */
export function truthy(value) {
  if (isFloat(value)) return !FLOAT_ZERO.test(value[FLOAT_KEY]); // NaN is true, as in Python
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === "object") return Object.keys(value).length > 0;
  return !!value;
}

export function ConfigFailure(reason, key) {
  this.reason = reason;
  this.key = key === undefined ? null : key;
}

export function refuse(reason, key) {
  throw new ConfigFailure(reason, key);
}

export function readJson(text) {
  var marked = text.replace(JSON_TOKEN, function (token) {
    if (token.charAt(0) === '"') return token;
    if (JSON_INTEGER.test(token)) {
      var integer = BigInt(token);
      if (integer <= MAX_SAFE_INTEGER && integer >= -MAX_SAFE_INTEGER) return token;
      return "{" + JSON.stringify(INTEGER_KEY) + ":" + JSON.stringify(token) + "}";
    }
    return "{" + JSON.stringify(FLOAT_KEY) + ":" + JSON.stringify(token) + "}";
  });
  try {
    return JSON.parse(marked, function (key, value) {
      // Objects without a prototype: a `__proto__` key stays a key.
      return value !== null && typeof value === "object" && !Array.isArray(value)
        ? record(value)
        : value;
    });
  } catch (error) {
    refuse("config_not_json");
  }
}

/** Typed reads of a config's keys (iteragpu.models.config._Reader); counts are BigInt. */
