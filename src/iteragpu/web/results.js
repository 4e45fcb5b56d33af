/*
 * IteraGPU results viewer: lab `measure` result files read, checked and drawn in the browser.
 *
 * Plain JavaScript, no network: the files the reader picks are read with FileReader and never
 * leave the page. A native ES module, imported by node's tests and loaded with
 * <script type="module"> in the browser (window.IteraGPUResults). It imports the sizer's API
 * (sizer/index.js), whose exact arithmetic, number grammar and number formatting it uses (one
 * grammar and one format for the whole site). It starts itself on a page that holds
 * <script type="application/json" id="results-data"> (docs/hooks.py).
 *
 * Pure part:
 *   readResult    what iteragpu.gpus.evidence reads before its own checks: at most 256 KiB,
 *                 UTF-8, strict JSON (no NaN or infinities, no fractions or exponents, integers
 *                 within 64 bits, no duplicate key, nesting at most 16), valid against the lab's
 *                 result.schema.json. Integers are BigInt, objects Map while checking.
 *   validate      the JSON Schema keywords the lab's schema uses, interpreted from the schema
 *                 itself (no generated code to fall out of step); a schema using any other
 *                 keyword is refused when the page starts, never half-checked. Verdicts are
 *                 pinned to Python's jsonschema by tests/test_results_validator.py.
 *   compare       iteragpu.gpus.comparison.compare: the dense-weights estimate beside
 *                 model_load's allocated bytes, and what the result records to explain the
 *                 difference (pinned by tests/test_results_estimate.py).
 *   groupStates   iteragpu.training.groups.group_states: the model states `iteragpu train`
 *                 states for the parameters a result records (schema 1.3.0), item by item,
 *                 beside the bytes the lab counted (pinned by tests/test_results_train.py).
 *
 * DOM part: the chart (plain SVG), its table, the environment, the runs side by side and the
 * estimate. Every word comes from the page (its hidden #results-messages) or from the CLI's
 * catalogue in the page's data; this file holds none.
 */
import sizer from "./sizer/index.js";

// iteragpu.gpus.evidence: MAX_EVIDENCE_BYTES, MAX_NESTING, MAX_INTEGER.
var MAX_BYTES = 256 * 1024;
var MAX_NESTING = 16;
var MAX_INTEGER = (1n << 64n) - 1n;
var MAX_INTEGER_DIGITS = MAX_INTEGER.toString().length;
var PHASES = ["model_load", "inputs", "cold_forward", "warmup", "warm_forward"];
// The four counters the chart draws for each phase, in the legend's order.
var CHART_COUNTERS = [
  "end_allocated_bytes",
  "end_reserved_bytes",
  "peak_allocated_bytes",
  "peak_reserved_bytes",
];

function problem(code, values) {
  var p = { code: code };
  Object.keys(values || {}).forEach(function (key) {
    p[key] = values[key];
  });
  return p;
}

function shortened(text, limit) {
  limit = limit || 40;
  return text.length <= limit ? text : text.slice(0, limit - 3) + "...";
}

// Python's repr() of a short string, as the CLI quotes keys and numbers.
function quoted(text) {
  return "'" + shortened(text) + "'";
}

// ------------------------------------------------------------------------------------------
// Strict JSON, as iteragpu.gpus.evidence._load parses it (Python's json with its hooks).
// ------------------------------------------------------------------------------------------

// Python's json number: sticky, read where the parser stands.
var NUMBER = /(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

function StrictParser(text) {
  this.text = text;
  this.at = 0;
}

StrictParser.prototype.fail = function (at) {
  // Python's JSONDecodeError position: line and column, both from 1.
  var before = this.text.slice(0, at === undefined ? this.at : at);
  var lines = before.split("\n");
  throw problem("not_json", { line: lines.length, column: lines[lines.length - 1].length + 1 });
};

StrictParser.prototype.space = function () {
  var t = this.text;
  while (this.at < t.length) {
    var c = t.charCodeAt(this.at);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    this.at += 1;
  }
};

StrictParser.prototype.document = function () {
  this.space();
  var value = this.value(1);
  this.space();
  if (this.at !== this.text.length) this.fail();
  return value;
};

StrictParser.prototype.value = function (depth) {
  var t = this.text;
  var c = t[this.at];
  if (c === "{" || c === "[") {
    // Python measures the depth once parsed; stopping here gives the same verdict and keeps
    // a hostile file from going deeper than this.
    if (depth > MAX_NESTING) throw problem("too_deep", { depth: String(depth) });
    return c === "{" ? this.object(depth) : this.array(depth);
  }
  if (c === '"') return this.string();
  var words = [["true", true], ["false", false], ["null", null]];
  for (var i = 0; i < words.length; i++) {
    if (t.startsWith(words[i][0], this.at)) {
      this.at += words[i][0].length;
      return words[i][1];
    }
  }
  var constants = ["NaN", "Infinity", "-Infinity"];
  for (var j = 0; j < constants.length; j++) {
    if (t.startsWith(constants[j], this.at)) throw problem("constant", { name: quoted(constants[j]) });
  }
  NUMBER.lastIndex = this.at;
  var number = NUMBER.exec(t);
  if (number === null) this.fail();
  // Python's json hands a number with a fraction or an exponent to parse_float, which the
  // evidence reader refuses: the lab writes only integers (1e999 would otherwise be inf).
  if (number[2] !== undefined || number[3] !== undefined) {
    throw problem("fraction", { number: quoted(number[0]) });
  }
  var digits = number[1];
  // Digits counted before BigInt(): an integer of thousands of digits is refused unread.
  if (digits.replace("-", "").length > MAX_INTEGER_DIGITS) {
    throw problem("beyond_64_bits", { number: quoted(digits) });
  }
  var integer = BigInt(digits);
  if ((integer < 0n ? -integer : integer) > MAX_INTEGER) {
    throw problem("beyond_64_bits", { number: quoted(digits) });
  }
  this.at += digits.length;
  return integer;
};

StrictParser.prototype.string = function () {
  var t = this.text;
  var start = this.at;
  this.at += 1;
  var out = "";
  var escapes = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
  for (;;) {
    if (this.at >= t.length) this.fail(start);
    var c = t[this.at];
    if (c === '"') {
      this.at += 1;
      return out;
    }
    if (c.charCodeAt(0) < 0x20) this.fail(); // Python's strict mode: no raw control character
    if (c === "\\") {
      var e = t[this.at + 1];
      if (e === "u") {
        var hex = t.slice(this.at + 2, this.at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail();
        out += String.fromCharCode(parseInt(hex, 16));
        this.at += 6;
      } else if (Object.prototype.hasOwnProperty.call(escapes, e)) {
        out += escapes[e];
        this.at += 2;
      } else {
        this.fail();
      }
    } else {
      out += c;
      this.at += 1;
    }
  }
};

StrictParser.prototype.object = function (depth) {
  var t = this.text;
  var result = new Map();
  var duplicate = null;
  this.at += 1;
  this.space();
  if (t[this.at] === "}") {
    this.at += 1;
    return result;
  }
  for (;;) {
    if (t[this.at] !== '"') this.fail();
    var key = this.string();
    this.space();
    if (t[this.at] !== ":") this.fail();
    this.at += 1;
    this.space();
    var value = this.value(depth + 1);
    if (result.has(key) && duplicate === null) duplicate = key;
    result.set(key, value);
    this.space();
    if (t[this.at] === ",") {
      this.at += 1;
      this.space();
    } else if (t[this.at] === "}") {
      this.at += 1;
      // Python's object_pairs_hook sees the pairs once the object is closed.
      if (duplicate !== null) throw problem("duplicate_key", { key: quoted(duplicate) });
      return result;
    } else {
      this.fail();
    }
  }
};

StrictParser.prototype.array = function (depth) {
  var t = this.text;
  var result = [];
  this.at += 1;
  this.space();
  if (t[this.at] === "]") {
    this.at += 1;
    return result;
  }
  for (;;) {
    result.push(this.value(depth + 1));
    this.space();
    if (t[this.at] === ",") {
      this.at += 1;
      this.space();
    } else if (t[this.at] === "]") {
      this.at += 1;
      return result;
    } else {
      this.fail();
    }
  }
};

/** Strict JSON text to values (BigInt, Map), or a thrown problem. */
function parseStrict(text) {
  return new StrictParser(text).document();
}

// ------------------------------------------------------------------------------------------
// The lab's JSON Schema (draft 2020-12), interpreted: only the keywords below.
// ------------------------------------------------------------------------------------------

var ANNOTATIONS = ["$schema", "title", "description", "$defs"];
var KEYWORDS = [
  "type", "enum", "const", "required", "properties", "additionalProperties", "propertyNames",
  "pattern", "minimum", "minItems", "items", "$ref", "oneOf", "allOf", "if", "then", "else",
];

/**
 * Python's re.search semantics for the patterns the schema holds: its `$` also matches before
 * a final newline ("cuda:0\n" matches ^cuda(:[0-9]+)?$ in Python). Patterns with anything else
 * whose meaning differs between the two engines are refused.
 */
function pythonPattern(pattern) {
  var body = pattern.endsWith("$") ? pattern.slice(0, -1) : pattern;
  if (/[\\$]/.test(body)) throw new Error("results.js cannot check the pattern " + pattern);
  return new RegExp(body + (body === pattern ? "" : "(?=\\n?$)"), "u");
}

/** The schema as values `validate` compares: integers as BigInt, objects kept plain. */
function loadSchema(raw) {
  function walk(node, inProperties) {
    if (Array.isArray(node)) return node.map(function (item) {
      return walk(item, false);
    });
    if (typeof node === "number") {
      if (!Number.isInteger(node)) throw new Error("results.js: a fraction in the schema");
      return BigInt(node);
    }
    if (node === null || typeof node !== "object") return node;
    var out = {};
    Object.keys(node).forEach(function (key) {
      if (
        !inProperties && ANNOTATIONS.indexOf(key) < 0 && KEYWORDS.indexOf(key) < 0
      ) {
        throw new Error("results.js does not check the schema keyword " + key);
      }
      var childIsMap = !inProperties && (key === "properties" || key === "$defs");
      if (!inProperties && (key === "enum" || key === "const")) {
        out[key] = key === "enum" ? node[key].map(plainToValue) : plainToValue(node[key]);
      } else if (!inProperties && key === "pattern") {
        out[key] = node[key];
        out.patternRegExp = pythonPattern(node[key]);
      } else {
        out[key] = walk(node[key], childIsMap);
      }
    });
    return out;
  }
  return walk(raw, false);
}

// A schema's enum or const value in the form parsed results take (Map, BigInt).
function plainToValue(node) {
  if (Array.isArray(node)) return node.map(plainToValue);
  if (typeof node === "number") return BigInt(node);
  if (node !== null && typeof node === "object") {
    var map = new Map();
    Object.keys(node).forEach(function (key) {
      map.set(key, plainToValue(node[key]));
    });
    return map;
  }
  return node;
}

function jsonType(value) {
  if (value === null) return "null";
  if (typeof value === "bigint") return "integer";
  if (Array.isArray(value)) return "array";
  if (value instanceof Map) return "object";
  return typeof value; // string, boolean
}

function hasType(value, type) {
  var actual = jsonType(value);
  return actual === type || (type === "number" && actual === "integer");
}

// jsonschema's equality: true is not 1, an object's key order does not matter.
function equal(a, b) {
  if (jsonType(a) !== jsonType(b)) return false;
  if (Array.isArray(a)) {
    return a.length === b.length && a.every(function (item, i) {
      return equal(item, b[i]);
    });
  }
  if (a instanceof Map) {
    if (a.size !== b.size) return false;
    for (var entry of a) {
      if (!b.has(entry[0]) || !equal(entry[1], b.get(entry[0]))) return false;
    }
    return true;
  }
  return a === b;
}

// JSON of a schema value, for a message (the CLI shows the same rule and value).
function schemaText(value) {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return "[" + value.map(schemaText).join(", ") + "]";
  if (value instanceof Map) {
    var parts = [];
    value.forEach(function (v, k) {
      parts.push(JSON.stringify(k) + ": " + schemaText(v));
    });
    return "{" + parts.join(", ") + "}";
  }
  if (value !== null && typeof value === "object") {
    return "{" + Object.keys(value).map(function (k) {
      return JSON.stringify(k) + ": " + schemaText(value[k]);
    }).join(", ") + "}";
  }
  return JSON.stringify(value);
}

function pointer(path) {
  return "/" + path.join("/");
}

function ruleProblem(path, rule, expected) {
  return problem("schema_rule", {
    where: pointer(path),
    rule: shortened(rule + ": " + schemaText(expected), 120),
  });
}

function resolve(root, ref) {
  var match = /^#\/\$defs\/([^/]+)$/.exec(ref);
  if (!match || !root.$defs || !Object.prototype.hasOwnProperty.call(root.$defs, match[1])) {
    throw new Error("results.js cannot follow " + ref);
  }
  return root.$defs[match[1]];
}

/** The first problem of `value` against `schema`, or null. */
function check(schema, value, path, root) {
  if (schema === true) return null;
  if (schema === false) return ruleProblem(path, "false", false);
  var found;
  if (schema.type !== undefined) {
    var types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some(function (t) {
      return hasType(value, t);
    })) {
      return problem("wrong_type", {
        where: pointer(path),
        types: types.map(function (t) {
          return "'" + t + "'";
        }).join(" | "),
      });
    }
  }
  if (schema.enum !== undefined && !schema.enum.some(function (e) {
    return equal(value, e);
  })) {
    return ruleProblem(path, "enum", schema.enum);
  }
  if (schema.const !== undefined && !equal(value, schema.const)) {
    return ruleProblem(path, "const", schema.const);
  }
  if (schema.$ref !== undefined) {
    found = check(resolve(root, schema.$ref), value, path, root);
    if (found) return found;
  }
  if (value instanceof Map) {
    if (schema.required !== undefined) {
      for (var r = 0; r < schema.required.length; r++) {
        if (!value.has(schema.required[r])) {
          return problem("missing_key", { key: quoted(schema.required[r]), where: pointer(path) });
        }
      }
    }
    for (var entry of value) {
      var key = entry[0];
      var known = schema.properties && Object.prototype.hasOwnProperty.call(schema.properties, key);
      if (schema.propertyNames !== undefined) {
        found = check(schema.propertyNames, key, path, root);
        if (found) return found;
      }
      if (known) {
        found = check(schema.properties[key], entry[1], path.concat([key]), root);
      } else if (schema.additionalProperties !== undefined) {
        found = schema.additionalProperties === false
          ? ruleProblem(path, "additionalProperties", false)
          : check(schema.additionalProperties, entry[1], path.concat([key]), root);
      } else {
        found = null;
      }
      if (found) return found;
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && BigInt(value.length) < schema.minItems) {
      return ruleProblem(path, "minItems", schema.minItems);
    }
    if (schema.items !== undefined) {
      for (var i = 0; i < value.length; i++) {
        found = check(schema.items, value[i], path.concat([String(i)]), root);
        if (found) return found;
      }
    }
  }
  if (typeof value === "bigint" && schema.minimum !== undefined && value < schema.minimum) {
    return ruleProblem(path, "minimum", schema.minimum);
  }
  if (typeof value === "string" && schema.patternRegExp !== undefined &&
      !schema.patternRegExp.test(value)) {
    return ruleProblem(path, "pattern", schema.pattern);
  }
  if (schema.allOf !== undefined) {
    for (var a = 0; a < schema.allOf.length; a++) {
      found = check(schema.allOf[a], value, path, root);
      if (found) return found;
    }
  }
  if (schema.oneOf !== undefined) {
    var matching = schema.oneOf.filter(function (option) {
      return check(option, value, path, root) === null;
    }).length;
    if (matching !== 1) return ruleProblem(path, "oneOf", schema.oneOf);
  }
  if (schema.if !== undefined) {
    var branch = check(schema.if, value, path, root) === null ? schema.then : schema.else;
    if (branch !== undefined) {
      found = check(branch, value, path, root);
      if (found) return found;
    }
  }
  return null;
}

function validate(schema, value) {
  return check(schema, value, [], schema);
}

// Maps and BigInts to plain objects (no prototype: a key "__proto__" stays a key).
function plain(value) {
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Map) {
    var out = Object.create(null);
    value.forEach(function (v, k) {
      out[k] = plain(v);
    });
    return out;
  }
  return value;
}

/**
 * A result file's bytes (Uint8Array) to {ok: true, result} or {ok: false, problem}: the
 * checks of iteragpu.gpus.evidence._load, in its order.
 */
function readResult(bytes, schema) {
  if (bytes.length > MAX_BYTES) {
    return { ok: false, problem: problem("too_large", { limit: String(MAX_BYTES) }) };
  }
  var text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    return { ok: false, problem: problem("not_utf8") };
  }
  var value;
  try {
    value = parseStrict(text);
  } catch (thrown) {
    if (thrown instanceof Error) throw thrown;
    return { ok: false, problem: thrown };
  }
  var found = validate(schema, value);
  if (found) return { ok: false, problem: found };
  var result = plain(value);
  var senseless = senseProblem(result);
  if (senseless) return { ok: false, problem: senseless };
  return { ok: true, result: result };
}

// A phase's six counters, in the order the lab writes them: each reading, allocated first.
var READINGS = ["start", "peak", "end"];
var KINDS = ["allocated", "reserved"];
var COUNTERS = [];
READINGS.forEach(function (reading) {
  KINDS.forEach(function (kind) {
    COUNTERS.push(reading + "_" + kind + "_bytes");
  });
});

/**
 * The first reading of a schema-valid result that cannot be true, as
 * iteragpu.gpus.evidence._sense_problem finds it (same order, same codes): a counter read
 * although the run says the counters were unavailable; a counter of a completed phase left
 * unread with no read error saying why; a phase's peak below its own start or end level;
 * reserved below allocated at the same reading. Null when every reading makes sense.
 */
function senseProblem(result) {
  if (result.rank !== undefined && result.world_size !== undefined &&
      result.rank >= result.world_size) {
    return problem("rank_outside_world", {
      where: "/rank",
      rank: String(result.rank),
      world: String(result.world_size),
    });
  }
  var unavailable = result.counters_unavailable_reason;
  var available = unavailable === null || unavailable === undefined;
  for (var i = 0; i < result.phases.length; i++) {
    var phase = result.phases[i];
    var at = "/phases/" + i + "/";
    var errors = phase.read_errors || {};
    for (var k = 0; k < COUNTERS.length; k++) {
      var key = COUNTERS[k];
      if (!available && phase[key] !== null) {
        return problem("counter_while_unavailable", { where: at + key });
      }
      var explained = Object.prototype.hasOwnProperty.call(errors, key);
      if (available && phase[key] === null && phase.status === "ok" && !explained) {
        return problem("counter_not_read", { where: at + key });
      }
    }
    for (var a = 0; a < KINDS.length; a++) {
      var peak = phase["peak_" + KINDS[a] + "_bytes"];
      var levels = ["start", "end"];
      for (var b = 0; b < levels.length; b++) {
        var level = phase[levels[b] + "_" + KINDS[a] + "_bytes"];
        if (peak !== null && level !== null && peak < level) {
          return problem(levels[b] === "start" ? "peak_below_start" : "peak_below_end", {
            where: at + "peak_" + KINDS[a] + "_bytes",
            peak: String(peak),
            level: String(level),
          });
        }
      }
    }
    for (var r = 0; r < READINGS.length; r++) {
      var allocated = phase[READINGS[r] + "_allocated_bytes"];
      var reserved = phase[READINGS[r] + "_reserved_bytes"];
      if (allocated !== null && reserved !== null && reserved < allocated) {
        return problem("reserved_below_allocated", {
          where: at + READINGS[r] + "_reserved_bytes",
          reserved: String(reserved),
          allocated: String(allocated),
        });
      }
    }
    if (phase.parts !== undefined && phase.parts !== null) {
      var found = partsProblem(phase.parts, phase, at + "parts/");
      if (found) return found;
    }
  }
  return null;
}

// The counted parts of a phase (schema 1.3.0), then what the lab computes from them.
var COUNTED_PARTS = ["parameters", "gradients", "optimizer_state"];

/** What the lab computes of a phase's parts (iteragpu.gpus.evidence._computed_parts). */
function computedParts(parts, phase) {
  var modelState = 0n;
  for (var i = 0; i < COUNTED_PARTS.length; i++) {
    var value = parts[COUNTED_PARTS[i] + "_allocated_bytes"];
    if (value === null) {
      modelState = null;
      break;
    }
    modelState += value;
  }
  var end = phase.end_allocated_bytes;
  var peak = phase.peak_allocated_bytes;
  var rest = end === null || modelState === null ? null : end - modelState;
  return {
    model_state_allocated_bytes: modelState,
    activations_and_temporaries_bytes: rest === null || rest < 0n ? null : rest,
    peak_excess_bytes: end === null || peak === null ? null : peak - end,
  };
}

/** iteragpu.gpus.evidence._check_parts: a part below its raw bytes, a computed part that is
 * not what its inputs give. */
function partsProblem(parts, phase, at) {
  for (var i = 0; i < COUNTED_PARTS.length; i++) {
    var raw = parts[COUNTED_PARTS[i] + "_bytes"];
    var allocated = parts[COUNTED_PARTS[i] + "_allocated_bytes"];
    if (raw !== null && allocated !== null && allocated < raw) {
      return problem("part_below_raw", {
        where: at + COUNTED_PARTS[i] + "_allocated_bytes",
        allocated: String(allocated),
        raw: String(raw),
      });
    }
  }
  var computed = computedParts(parts, phase);
  var keys = Object.keys(computed);
  for (var k = 0; k < keys.length; k++) {
    if (parts[keys[k]] !== computed[keys[k]]) {
      return problem("part_not_computed", {
        where: at + keys[k],
        value: String(parts[keys[k]]),
        expected: String(computed[keys[k]]),
      });
    }
  }
  return null;
}

// ------------------------------------------------------------------------------------------
// The estimate beside model_load (iteragpu.gpus.comparison.compare)
// ------------------------------------------------------------------------------------------

function ceilBytes(value) {
  var q = value.n / value.d;
  return q * value.d === value.n || value.n < 0n ? q : q + 1n;
}

/** `parameters` (BigInt) and `bits` (rational), or null for the network the lab recorded. */
function compare(result, parameters, bits) {
  var network = result.network;
  var count;
  var width;
  var fromResult = false;
  if (network === undefined) {
    // A Recorder's result records no network of the lab: only a given estimate.
    if (parameters === null || bits === null) return null;
    count = parameters;
    width = bits;
  } else {
    var recordedBits = sizer.rational(network.element_size_bytes * 8n);
    count = parameters === null ? network.parameter_count : parameters;
    width = bits === null ? recordedBits : bits;
    fromResult = count === network.parameter_count &&
      width.n === recordedBits.n && width.d === recordedBits.d;
  }
  var exactBytes = sizer.weightsBytes(count, width);
  var estimate = ceilBytes(exactBytes);
  var phase = result.phases.find(function (p) {
    return p.phase === "model_load";
  });
  var measured = phase ? phase.end_allocated_bytes : null;
  var reserved = phase ? phase.end_reserved_bytes : null;
  var difference = measured === null ? null : measured - estimate;
  var share = difference === null || estimate === 0n ? null : sizer.rational(difference, estimate);
  // The lab's rounding is of its own tensors: it explains nothing of another model's estimate.
  var rounding = null;
  if (fromResult && estimate === network.predicted_parameter_bytes) {
    rounding = network.predicted_parameter_bytes_rounded_512 - network.predicted_parameter_bytes;
  }
  var prediction = result.prediction;
  return {
    parameters: count,
    bits: width,
    fromResult: fromResult,
    estimatedWeightsExactBytes: exactBytes,
    estimatedWeightsBytes: estimate,
    modelLoadAllocatedBytes: measured,
    differenceBytes: difference,
    differenceShare: share,
    blockRoundingBytes: rounding,
    unexplainedBytes: difference === null ? null : difference - (rounding === null ? 0n : rounding),
    modelLoadCachedBytes: measured === null || reserved === null ? null : reserved - measured,
    coldForwardUnexplainedBytes: prediction ? prediction.cold_forward_unexplained_bytes : null,
  };
}

/** Decimals that write a rational exactly, or null (iteragpu.core.numbers.decimal_places). */
function decimalPlaces(value) {
  var d = value.d;
  var twos = 0;
  var fives = 0;
  while (d % 2n === 0n) {
    d /= 2n;
    twos += 1;
  }
  while (d % 5n === 0n) {
    d /= 5n;
    fives += 1;
  }
  return d === 1n ? Math.max(twos, fives) : null;
}

function fill(template, values) {
  return template.replace(/\{([a-z_]+)\}/g, function (whole, name) {
    return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole;
  });
}

function bytesText(value, symbols) {
  return sizer.formatNumber(sizer.rational(value), 0, symbols);
}

function gibText(value, symbols) {
  return sizer.formatNumber(sizer.gib(sizer.rational(value)), 2, symbols);
}

// iteragpu.cli.views._signed_bytes: ASCII signs, as the CLI writes them.
function signedBytes(value, symbols, notMeasured) {
  if (value === null) return notMeasured;
  var text = bytesText(value < 0n ? -value : value, symbols);
  return value > 0n ? "+" + text : value < 0n ? "-" + text : text;
}

/**
 * The words `iteragpu report` prints for the comparison (iteragpu.cli.views._estimate_text):
 * the title, the table's rows and the explanation, from the CLI's own messages.
 */
function estimateTexts(c, messages, symbols) {
  var places = decimalPlaces(c.bits);
  var title = fill(messages[c.fromResult ? "report_estimate_recorded" : "report_estimate_given"], {
    parameters: bytesText(c.parameters, symbols),
    bits: sizer.formatNumber(c.bits, places === null ? 2 : places, symbols),
  });
  var notMeasured = messages.not_measured;
  function cells(value) {
    return value === null ? [notMeasured, ""] : [bytesText(value, symbols), gibText(value, symbols)];
  }
  var rows = [
    [messages.report_estimated_weights].concat(cells(c.estimatedWeightsBytes)),
    [messages.report_model_load_allocated].concat(cells(c.modelLoadAllocatedBytes)),
    [messages.report_difference_row, signedBytes(c.differenceBytes, symbols, notMeasured), ""],
  ];
  var lines = [];
  if (c.differenceShare === null) {
    lines.push(messages.explain_not_measured);
  } else {
    var share = sizer.formatNumber(
      { n: c.differenceShare.n * 100n, d: c.differenceShare.d }, 2, symbols
    );
    lines.push(fill(messages.report_share, { share: share }));
    lines.push(c.blockRoundingBytes === null
      ? messages.explain_rounding_not_attributable
      : fill(messages.explain_rounding, { rounding: bytesText(c.blockRoundingBytes, symbols) }));
    lines.push(fill(messages.explain_unexplained, {
      unexplained: signedBytes(c.unexplainedBytes, symbols, notMeasured),
    }));
  }
  if (c.modelLoadCachedBytes !== null) {
    lines.push(fill(messages.explain_segments, { cached: bytesText(c.modelLoadCachedBytes, symbols) }));
  }
  if (c.coldForwardUnexplainedBytes !== null && c.coldForwardUnexplainedBytes !== undefined) {
    lines.push(fill(messages.explain_cublas, {
      workspace: bytesText(c.coldForwardUnexplainedBytes, symbols),
    }));
  }
  lines.push(messages.explain_context);
  return { title: title, rows: rows, lines: lines };
}

// ------------------------------------------------------------------------------------------
// The estimate of `iteragpu train` per model-state item (iteragpu.training.states, through
// iteragpu.training.groups): every rule as the Python states it, in BigInt bytes.
// ------------------------------------------------------------------------------------------

var DTYPE_BYTES = { float32: 4n, bfloat16: 2n, float16: 2n, uint8: 1n, int32: 4n };
var PRECISIONS = ["fp32", "bf16", "fp16", "autocast-bf16", "autocast-fp16", "bf16-master"];
var OPTIMIZERS = ["adamw", "adamw-amsgrad", "adamw-8bit", "sgd", "sgd-momentum", "adafactor"];
var FUSED_OPTIMIZERS = ["adamw", "adamw-amsgrad", "sgd", "sgd-momentum"];
var MIN_8BIT_SIZE = 4096n; // bitsandbytes Optimizer2State(min_8bit_size=4096)
var BLOCK_8BIT = 256n;
var QMAP_VALUES = 256n;

function elements(shape) {
  return shape.reduce(function (n, size) {
    return n * BigInt(size);
  }, 1n);
}

function item(kind, name, shape, dtype, device) {
  return { kind: kind, name: name, bytes: elements(shape) * DTYPE_BYTES[dtype], device: device };
}

/** iteragpu.training.states.state_items for one trainable tensor (none when frozen). */
function stateItems(shape, dtype, trainable, request) {
  if (!trainable) return [];
  var items = [item("gradient", "grad", shape, dtype, "gpu")];
  var stepped = dtype;
  if (request.precision === "bf16-master" && (dtype === "bfloat16" || dtype === "float16")) {
    stepped = "float32";
    items.push(item("master_weight", "master", shape, "float32", "gpu"));
    items.push(item("master_gradient", "master_grad", shape, "float32", "gpu"));
  }
  var opt = request.optimizer;
  if (opt === "adamw" || opt === "adamw-amsgrad") {
    items.push(item("optimizer", "step", [], "float32", request.fused ? "gpu" : "host"));
    var names = opt === "adamw-amsgrad" ? ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"] : ["exp_avg", "exp_avg_sq"];
    names.forEach(function (name) {
      items.push(item("optimizer", name, shape, stepped, "gpu"));
    });
  } else if (opt === "sgd-momentum") {
    items.push(item("optimizer", "momentum_buffer", shape, stepped, "gpu"));
  } else if (opt === "adafactor") {
    items.push(item("optimizer", "step", [], "float32", "host"));
    if (shape.length >= 2) {
      items.push(item("optimizer", "row_var", shape.slice(0, -1).concat([1]), stepped, "gpu"));
      items.push(item("optimizer", "col_var", shape.slice(0, -2).concat([1, shape[shape.length - 1]]), stepped, "gpu"));
    } else {
      items.push(item("optimizer", "variance", shape, stepped, "gpu"));
    }
  } else if (opt === "adamw-8bit") {
    var count = elements(shape);
    if (count < MIN_8BIT_SIZE) {
      items.push(item("optimizer", "state1", shape, "float32", "gpu"));
      items.push(item("optimizer", "state2", shape, "float32", "gpu"));
    } else {
      var blocks = (count + BLOCK_8BIT - 1n) / BLOCK_8BIT;
      items.push(item("optimizer", "state1", shape, "uint8", "gpu"));
      items.push(item("optimizer", "state2", shape, "uint8", "gpu"));
      items.push({ kind: "optimizer", name: "absmax1", bytes: blocks * 4n, device: "gpu" });
      items.push({ kind: "optimizer", name: "absmax2", bytes: blocks * 4n, device: "gpu" });
    }
  }
  return items;
}

/** iteragpu.training.groups.group_states: {gradient, gpu, host, master_weight,
 * master_gradient} bytes for the recorded groups under `request`; null when `request` is one
 * `iteragpu train` refuses (fused with an optimizer that has no fused mode). */
function groupStates(groups, request) {
  if (PRECISIONS.indexOf(request.precision) < 0 || OPTIMIZERS.indexOf(request.optimizer) < 0) return null;
  if (request.fused && FUSED_OPTIMIZERS.indexOf(request.optimizer) < 0) return null;
  var sums = { gradient: 0n, gpu: 0n, host: 0n, master_weight: 0n, master_gradient: 0n };
  var eightBit = false;
  groups.forEach(function (group) {
    var shape = group.shape.map(function (size) {
      return Number(size);
    });
    stateItems(shape, group.dtype, group.trainable, request).forEach(function (it) {
      var key = it.kind === "optimizer" ? it.device : it.kind;
      sums[key] += it.bytes * group.count;
    });
    if (group.trainable && elements(shape) >= MIN_8BIT_SIZE) eightBit = true;
  });
  // shared_items: bitsandbytes' two maps once, GradScaler's scale and growth tracker once
  if (request.optimizer === "adamw-8bit" && eightBit) sums.gpu += 2n * QMAP_VALUES * 4n;
  if (request.precision === "autocast-fp16") sums.gpu += 4n + 4n;
  return sums;
}

/** iteragpu.cli.train_report.train_items: each item's estimate beside the bytes counted at
 * the end of the first step's optimizer_step; null without recorded parameters. */
function trainItems(result, request) {
  var groups = result.parameter_groups;
  if (groups === undefined || groups === null) return null;
  var stated = groupStates(groups, request);
  if (stated === null) return null;
  var phase = result.phases.find(function (p) {
    return p.phase === "optimizer_step" && (p.step === 1n || p.step === null || p.step === undefined) &&
      p.parts !== undefined && p.parts !== null;
  });
  var parts = phase ? phase.parts : null;
  function counted(key) {
    return parts === null ? null : parts[key];
  }
  var items = [
    { item: "gradients", estimated: stated.gradient, measured: counted("gradients_bytes") },
    { item: "optimizer_gpu", estimated: stated.gpu, measured: counted("optimizer_state_bytes") },
    { item: "optimizer_host", estimated: stated.host, measured: counted("optimizer_state_host_bytes") },
  ];
  if (stated.master_weight || stated.master_gradient) {
    items.push({ item: "master_weights", estimated: stated.master_weight, measured: null });
    items.push({ item: "master_gradients", estimated: stated.master_gradient, measured: null });
  }
  items.forEach(function (it) {
    it.difference = it.measured === null ? null : it.measured - it.estimated;
  });
  return { items: items, measured: phase !== undefined };
}

// ------------------------------------------------------------------------------------------
// What the chart shows: per phase, its last record (warm_forward has one per repeat).
// ------------------------------------------------------------------------------------------

/** A phase as the report names it: `warm_forward #2`, `backward (2)`. */
function recordName(record) {
  if (record.repeat !== null && record.repeat !== undefined) return record.phase + " #" + record.repeat;
  if (record.step !== null && record.step !== undefined) return record.phase + " (" + record.step + ")";
  return record.phase;
}

function forwardTask(result) {
  return result.task === undefined || result.task === "forward";
}

/** Per phase, what the chart draws: the forward phases by name (warm_forward's last
 * repeat), or each phase of a training step or of a Recorder's loop as it was recorded. */
function phaseRows(result) {
  if (!forwardTask(result)) {
    return result.phases.map(function (record) {
      return { phase: recordName(record), record: record };
    });
  }
  return PHASES.map(function (name) {
    var records = result.phases.filter(function (p) {
      return p.phase === name;
    });
    return { phase: name, record: records.length ? records[records.length - 1] : null };
  });
}

/** iteragpu.cli.train_report.step_rows: each phase of the training step, its allocated peak
 * in the first step and the highest of the warm ones (null when not read or not run). */
function stepRows(result) {
  var names = [];
  result.phases.forEach(function (p) {
    if (p.step !== null && p.step !== undefined && names.indexOf(p.phase) < 0) names.push(p.phase);
  });
  function peak(name, first) {
    var best = null;
    result.phases.forEach(function (p) {
      if (p.phase !== name || p.step === null || p.step === undefined || (p.step === 1n) !== first) return;
      var v = p.peak_allocated_bytes;
      if (v !== null && (best === null || v > best)) best = v;
    });
    return best;
  }
  return names.map(function (name) {
    return { phase: name, first: peak(name, true), warm: peak(name, false) };
  });
}

/** iteragpu.cli.train_report.highest_peak: the run and phase with the highest allocated
 * peak, the first on a tie; null when none was read. */
function highestPeak(results) {
  var best = null;
  results.forEach(function (result, index) {
    result.phases.forEach(function (p) {
      var v = p.peak_allocated_bytes;
      if (v !== null && (best === null || v > best.peak)) {
        best = { index: index, phase: recordName(p), peak: v };
      }
    });
  });
  return best;
}

// ------------------------------------------------------------------------------------------
// DOM
// ------------------------------------------------------------------------------------------

var SVG = "http://www.w3.org/2000/svg";
// Plain SVG, coloured by CSS: each series has a colour per palette with at least 3:1 against
// the page (WCAG 1.4.11), text takes Material's own foreground colours.
var STYLE = [
  ".results-chart svg { display: block; width: 100%; height: auto; max-width: 44rem; }",
  ".results-chart { --results-allocated: #3949ab; --results-reserved: #00796b;",
  "  --results-failed: #c62828; }",
  "[data-md-color-scheme=\"slate\"] .results-chart { --results-allocated: #9fa8da;",
  "  --results-reserved: #4db6ac; --results-failed: #ef9a9a; }",
  ".results-chart text { fill: var(--md-default-fg-color); font-size: 15px; }",
  ".results-chart .results-axis { stroke: var(--md-default-fg-color--light); }",
  ".results-chart .results-grid { stroke: var(--md-default-fg-color--lightest); }",
  ".results-mark[data-counter$=\"allocated_bytes\"] rect { fill: var(--results-allocated);",
  "  stroke: var(--results-allocated); }",
  ".results-mark[data-counter$=\"reserved_bytes\"] rect { fill: var(--results-reserved);",
  "  stroke: var(--results-reserved); }",
  ".results-mark[data-counter^=\"peak\"] rect { fill-opacity: .25; stroke-width: 2; }",
  ".results-mark[data-state=\"not_measured\"] rect { fill: none; stroke-dasharray: 3 2;",
  "  stroke: var(--md-default-fg-color--light); }",
  ".results-failed { fill: none; stroke: var(--results-failed); stroke-width: 2; }",
  ".results-chart text.results-failed-label { fill: var(--results-failed); font-weight: 700; }",
  ".results-legend { display: flex; flex-wrap: wrap; gap: .3em 1.2em; margin: .4em 0; }",
  ".results-swatch { display: inline-block; width: .9em; height: .9em; margin-right: .3em;",
  "  vertical-align: -.1em; border: 2px solid; }",
  ".results-runs { display: flex; flex-wrap: wrap; gap: 1rem; }",
  ".results-runs > section { flex: 1 1 22rem; min-width: 0; }",
  ".results-scroll { overflow-x: auto; }",
  ".results-example { font-weight: 700; }",
  ".results-part[data-part=\"parameters\"] { fill: #3949ab; }",
  ".results-part[data-part=\"gradients\"] { fill: #8e24aa; }",
  ".results-part[data-part=\"optimizer_state\"] { fill: #00796b; }",
  ".results-part[data-part=\"activations\"] { fill: #ef6c00; }",
  "[data-md-color-scheme=\"slate\"] .results-part[data-part=\"parameters\"] { fill: #9fa8da; }",
  "[data-md-color-scheme=\"slate\"] .results-part[data-part=\"gradients\"] { fill: #ce93d8; }",
  "[data-md-color-scheme=\"slate\"] .results-part[data-part=\"optimizer_state\"] { fill: #4db6ac; }",
  "[data-md-color-scheme=\"slate\"] .results-part[data-part=\"activations\"] { fill: #ffb74d; }",
  ".results-peak { fill: none; stroke: var(--md-default-fg-color); stroke-width: 1.5;",
  "  stroke-dasharray: 4 2; }",
].join("\n");

function Viewer(doc, win, data) {
  this.doc = doc;
  this.win = win;
  this.data = data;
  this.schema = loadSchema(data.schema);
  this.symbols = data.symbols;
  this.cli = data.messages;
  this.messages = doc.getElementById("results-messages");
  this.input = doc.getElementById("result-file");
  this.errorBox = doc.getElementById("results-error");
  this.errorList = doc.getElementById("results-error-list");
  this.chart = doc.getElementById("phase-chart");
  this.environment = doc.getElementById("results-environment");
  this.differences = doc.getElementById("results-differences");
  this.estimateForm = doc.getElementById("results-estimate-form");
  this.estimateOut = doc.getElementById("results-estimate");
  this.runs = [];
  var style = doc.createElement("style");
  style.textContent = STYLE;
  doc.head.appendChild(style);
}

Viewer.prototype.word = function (key, values) {
  var el = this.messages.querySelector('[data-text="' + key + '"]');
  return fill(el ? el.textContent.trim() : key, values || {});
};

Viewer.prototype.problemText = function (p) {
  var el = this.messages.querySelector('[data-problem="' + p.code + '"]');
  var values = {};
  var symbols = this.symbols;
  Object.keys(p).forEach(function (key) {
    // Counts the page states (the size limit, a depth, a line) in the page's number format.
    values[key] = /^[0-9]+$/.test(p[key]) ? bytesText(BigInt(p[key]), symbols) : p[key];
  });
  return fill(el ? el.textContent.trim() : p.code, values);
};

Viewer.prototype.el = function (name, attrs, text) {
  var node = this.doc.createElement(name);
  Object.keys(attrs || {}).forEach(function (key) {
    node.setAttribute(key, attrs[key]);
  });
  if (text !== undefined) node.textContent = text;
  return node;
};

Viewer.prototype.svg = function (name, attrs, text) {
  var node = this.doc.createElementNS(SVG, name);
  Object.keys(attrs || {}).forEach(function (key) {
    node.setAttribute(key, String(attrs[key]));
  });
  if (text !== undefined) node.textContent = text;
  return node;
};

/** Files picked or dropped: read each, keep the valid ones, name the first problem of others. */
Viewer.prototype.load = function (files) {
  var self = this;
  var reads = Array.prototype.map.call(files, function (file) {
    return file.arrayBuffer().then(
      function (buffer) {
        return { name: file.name, read: readResult(new Uint8Array(buffer), self.schema) };
      },
      function () {
        return { name: file.name, read: { ok: false, problem: problem("unreadable") } };
      }
    );
  });
  return Promise.all(reads).then(function (loaded) {
    self.show(loaded.map(function (item) {
      return { name: item.name, example: false, read: item.read };
    }));
  });
};

Viewer.prototype.loadExample = function () {
  var bytes = new TextEncoder().encode(this.data.example);
  this.show([{ name: this.data.example_name, example: true, read: readResult(bytes, this.schema) }]);
};

/** The training example: one file per process of a simulated run. */
Viewer.prototype.loadTrainExample = function () {
  var self = this;
  this.show(this.data.example_train.map(function (text, index) {
    var bytes = new TextEncoder().encode(text);
    return { name: self.data.example_train_names[index], example: true, read: readResult(bytes, self.schema) };
  }));
};

Viewer.prototype.show = function (items) {
  var self = this;
  clear(this.errorList);
  var refused = items.filter(function (item) {
    return !item.read.ok;
  });
  refused.forEach(function (item) {
    var li = self.el("li", { "data-problem": item.read.problem.code });
    li.textContent = self.word("file_problem", { file: item.name, problem: self.problemText(item.read.problem) });
    self.errorList.appendChild(li);
  });
  this.errorBox.hidden = refused.length === 0;
  this.runs = items.filter(function (item) {
    return item.read.ok;
  }).map(function (item) {
    // An example is named as such wherever its name appears.
    var label = item.example ? self.word("example_label") : item.name;
    var rank = item.read.result.rank;
    if (item.example && item.read.result.world_size > 1n) {
      label = self.word("example_rank_label", { rank: String(rank) });
    }
    return { label: label, example: item.example, result: item.read.result };
  });
  this.render();
};

Viewer.prototype.render = function () {
  var doc = this.doc;
  var self = this;
  [this.chart, this.environment, this.differences, this.estimateOut].forEach(clear);
  var any = this.runs.length > 0;
  this.doc.querySelectorAll("[data-results-shown]").forEach(function (el) {
    el.hidden = !any;
  });
  this.doc.querySelectorAll("[data-results-empty]").forEach(function (el) {
    el.hidden = any;
  });
  if (!any) return;
  var scale = chartScale(this.runs);
  var runs = this.el("div", { class: "results-runs" });
  this.runs.forEach(function (run, index) {
    runs.appendChild(self.runChart(run, index, scale));
  });
  this.chart.appendChild(this.legend());
  this.chart.appendChild(runs);
  this.runs.forEach(function (run, index) {
    self.environment.appendChild(self.environmentOf(run, index));
  });
  if (this.runs.length > 1) {
    this.differences.appendChild(this.differenceTable());
    this.differences.appendChild(this.highestPeakText());
  } else {
    this.differences.appendChild(this.el("p", {}, this.word("one_run")));
  }
  this.renderEstimate();
  this.renderTrain();
  doc.documentElement.setAttribute("data-results-runs", String(this.runs.length));
};

// The parts a training phase is drawn in, stacked from the bottom: the counted ones, then the
// rest of allocated (iteragpu report's columns).
var PART_BARS = [
  ["parameters", "parameters_allocated_bytes", "part_parameters"],
  ["gradients", "gradients_allocated_bytes", "part_gradients"],
  ["optimizer_state", "optimizer_state_allocated_bytes", "part_optimizer_state"],
  ["activations", "activations_and_temporaries_bytes", "part_activations"],
];

function hasParts(run) {
  return run.result.phases.some(function (p) {
    return p.parts !== undefined && p.parts !== null;
  });
}

Viewer.prototype.legend = function () {
  var self = this;
  var legend = this.el("p", { class: "results-legend" });
  if (this.runs.some(hasParts)) {
    var parts = this.el("span", { class: "results-parts-legend" });
    PART_BARS.forEach(function (bar) {
      var item = self.el("span", { "data-part": bar[0] });
      var swatch = self.svg("svg", { width: 14, height: 14, "aria-hidden": "true" });
      swatch.appendChild(self.svg("rect", { width: 14, height: 14, class: "results-part", "data-part": bar[0] }));
      item.appendChild(swatch);
      item.appendChild(self.doc.createTextNode(" " + self.cli[bar[2]]));
      legend.appendChild(item);
    });
    legend.appendChild(self.el("span", {}, self.word("legend_peak")));
  }
  CHART_COUNTERS.forEach(function (key) {
    var item = self.el("span");
    var swatch = self.el("span", { class: "results-swatch", "aria-hidden": "true" });
    var colour = key.indexOf("allocated") >= 0 ? "--results-allocated" : "--results-reserved";
    swatch.style.borderColor = "var(" + colour + ")";
    swatch.style.background = key.indexOf("peak") === 0 ? "transparent" : "var(" + colour + ")";
    item.appendChild(swatch);
    item.appendChild(self.doc.createTextNode(self.cli["counter_" + key]));
    legend.appendChild(item);
  });
  var missing = this.el("span", {}, this.word("legend_not_measured"));
  legend.appendChild(missing);
  return legend;
};

function clear(node) {
  while (node && node.firstChild) node.removeChild(node.firstChild);
}

// The largest counter of every run shown: runs side by side share one scale.
function chartScale(runs) {
  var top = 0n;
  runs.forEach(function (run) {
    // What each chart draws: the four counters, or the parts (allocated) and their peak.
    var drawn = hasParts(run) ? ["end_allocated_bytes", "peak_allocated_bytes"] : CHART_COUNTERS;
    phaseRows(run.result).forEach(function (row) {
      if (!row.record) return;
      drawn.forEach(function (key) {
        var v = row.record[key];
        if (v !== null && v > top) top = v;
      });
    });
  });
  return niceTop(top);
}

// A round top for the axis: 1, 2 or 5 times a power of ten, at least the largest value.
function niceTop(value) {
  if (value <= 0n) return 1n;
  var power = 1n;
  while (power * 10n <= value) power *= 10n;
  var steps = [1n, 2n, 5n, 10n];
  for (var i = 0; i < steps.length; i++) {
    if (steps[i] * power >= value) return steps[i] * power;
  }
  return 10n * power;
}

function phaseName(record, name) {
  return record && record.repeat !== null ? name + " #" + record.repeat : name;
}

Viewer.prototype.failureText = function (record) {
  var error = record.error;
  return fill(this.cli.report_phase_error, {
    phase: phaseName(record, record.phase),
    status: this.cli["phase_status_" + record.status],
    error: error.out_of_memory ? this.cli.report_out_of_memory : error.type,
    detail: error.message,
  });
};

Viewer.prototype.runChart = function (run, index, top) {
  var self = this;
  var symbols = this.symbols;
  var section = this.el("section", { "data-run": String(index) });
  var captionId = "phase-chart-caption-" + index;
  var tableId = "phase-chart-table-" + index;
  var caption = this.el("p", { id: captionId, class: run.example ? "results-example" : "" });
  // The example's label already says "example data, not a measurement", and so does its
  // simulated device's name (results_page.EXAMPLE_DEVICE): its caption names no device, so the
  // warning is said once. The environment still shows the device.
  caption.textContent = run.example
    ? this.word("table_caption", { run: run.label })
    : this.word("chart_caption", { run: run.label, device: deviceName(run.result) || this.word("not_recorded") });
  section.appendChild(caption);

  var width = 640;
  var height = 340;
  var left = 96;
  var bottom = 270;
  var topY = 24;
  var plot = bottom - topY;
  var svg = this.svg("svg", {
    viewBox: "0 0 " + width + " " + height,
    role: "img",
    "aria-labelledby": captionId,
    "aria-describedby": tableId,
    class: "results-svg",
  });
  // Axis: five gridlines from 0 to the common top, labelled in bytes.
  for (var g = 0; g <= 4; g++) {
    var value = (top * BigInt(g)) / 4n;
    var y = bottom - (plot * g) / 4;
    svg.appendChild(this.svg("line", { x1: left, x2: width - 8, y1: y, y2: y, class: g ? "results-grid" : "results-axis" }));
    svg.appendChild(this.svg("text", { x: left - 6, y: y + 4, "text-anchor": "end" }, bytesText(value, symbols)));
  }
  svg.appendChild(this.svg("text", { x: 4, y: 14 }, this.cli.bytes_header));
  var rows = phaseRows(run.result);
  // A training step or a Recorder's loop: each phase's parts stacked, its peak outlined, the
  // phases' names turned to fit below.
  var stacked = hasParts(run);
  var slot = (width - left - 8) / rows.length;
  var barWidth = stacked ? Math.max(slot - 6, 1) : (slot - 16) / CHART_COUNTERS.length;
  if (stacked) svg.setAttribute("viewBox", "0 0 " + width + " " + (height + 110));
  rows.forEach(function (row, p) {
    var x0 = left + slot * p + (stacked ? 3 : 8);
    var centre = x0 + (stacked ? barWidth : slot - 16) / 2;
    var group = self.svg("g", { class: "results-phase", "data-phase": row.phase });
    var record = row.record;
    if (stacked) {
      var turn = "rotate(-60 " + centre + " " + (bottom + 12) + ")";
      group.appendChild(self.svg("text", { x: centre, y: bottom + 12, "text-anchor": "end", transform: turn, class: "results-turned" }, row.phase));
    } else {
      group.appendChild(self.svg("text", { x: centre, y: bottom + 18, "text-anchor": "middle" }, row.phase));
    }
    if (!record) {
      group.setAttribute("data-state", "not_recorded");
      group.appendChild(self.svg("text", { x: x0 + (slot - 16) / 2, y: bottom - 8, "text-anchor": "middle" }, "—"));
      var none = self.svg("title", {}, phaseName(null, row.phase) + ": " + self.word("phase_not_recorded"));
      group.appendChild(none);
      svg.appendChild(group);
      return;
    }
    group.setAttribute("data-status", record.status);
    if (stacked) self.stackParts(group, record, row.phase, x0, barWidth, bottom, plot, top);
    else CHART_COUNTERS.forEach(function (key, c) {
      var v = record[key];
      var mark = self.svg("g", { class: "results-mark", "data-counter": key, "data-phase": row.phase });
      var x = x0 + barWidth * c + 1;
      var h;
      if (v === null) {
        // Not measured: a dashed outline at the baseline, never a bar of 0.
        mark.setAttribute("data-state", "not_measured");
        h = 10;
      } else {
        mark.setAttribute("data-state", "measured");
        mark.setAttribute("data-bytes", v.toString());
        h = Number((v * 10000n) / top) / 10000 * plot;
        if (v > 0n && h < 1) h = 1; // a value above zero stays visible
      }
      mark.appendChild(self.svg("rect", { x: x, y: bottom - h, width: Math.max(barWidth - 3, 1), height: h }));
      var said = v === null ? self.cli.not_measured : bytesText(v, symbols) + " B";
      mark.appendChild(self.svg("title", {}, phaseName(record, row.phase) + ", " + self.cli["counter_" + key] + ": " + said));
      group.appendChild(mark);
    });
    if (record.status !== "ok") {
      group.appendChild(self.svg("rect", { x: x0 - 3, y: topY, width: slot - 10, height: plot, class: "results-failed" }));
      var label = record.error && record.error.out_of_memory
        ? self.cli.report_out_of_memory
        : self.cli["phase_status_" + record.status];
      var labelY = stacked ? topY - 6 : bottom + 36;
      group.appendChild(self.svg("text", { x: centre, y: labelY, "text-anchor": "middle", class: "results-failed-label" }, label));
      group.appendChild(self.svg("title", {}, record.error ? self.failureText(record) : label));
    }
    svg.appendChild(group);
  });
  section.appendChild(svg);
  section.appendChild(this.phaseTable(run, tableId));
  if (stepRows(run.result).length) section.appendChild(this.stepTable(run));
  run.result.phases.forEach(function (record) {
    if (record.status !== "ok" && record.error) {
      section.appendChild(self.el("p", { class: "results-failure", "data-phase": record.phase }, self.failureText(record)));
    }
  });
  if (run.result.counters_unavailable_reason) {
    section.appendChild(this.el("p", {}, fill(this.cli.report_counters_unavailable, { reason: run.result.counters_unavailable_reason })));
  }
  return section;
};

/** A phase's parts stacked from the baseline (each as allocated, the rest of allocated on
 * top: their sum is the end level), and its allocated peak as a dashed outline. */
Viewer.prototype.stackParts = function (group, record, name, x, width, bottom, plot, top) {
  var self = this;
  var symbols = this.symbols;
  function height(v) {
    var h = Number((v * 10000n) / top) / 10000 * plot;
    return v > 0n && h < 1 ? 1 : h;
  }
  var parts = record.parts;
  if (parts === undefined || parts === null) {
    var none = self.svg("g", { class: "results-mark", "data-state": "not_measured", "data-phase": name });
    none.appendChild(self.svg("rect", { x: x, y: bottom - 10, width: width, height: 10 }));
    none.appendChild(self.svg("title", {}, name + ": " + self.cli.not_measured));
    group.appendChild(none);
    return;
  }
  var base = bottom;
  PART_BARS.forEach(function (bar) {
    var v = parts[bar[1]];
    if (v === null) return; // not counted: nothing drawn, never a bar of 0
    var h = height(v);
    var rect = self.svg("rect", { x: x, y: base - h, width: width, height: h, class: "results-part", "data-part": bar[0], "data-bytes": v.toString() });
    rect.appendChild(self.svg("title", {}, name + ", " + self.cli[bar[2]] + ": " + bytesText(v, symbols) + " B"));
    group.appendChild(rect);
    base -= h;
  });
  var peak = record.peak_allocated_bytes;
  if (peak !== null) {
    var outline = self.svg("rect", { x: x, y: bottom - height(peak), width: width, height: height(peak), class: "results-peak", "data-bytes": peak.toString() });
    outline.appendChild(self.svg("title", {}, name + ", " + self.cli.counter_peak_allocated_bytes + ": " + bytesText(peak, symbols) + " B"));
    group.appendChild(outline);
  }
};

/** The chart's text alternative: the same figures, in bytes, in the page's format. */
Viewer.prototype.phaseTable = function (run, id) {
  var self = this;
  var wrap = this.el("div", { class: "results-scroll" });
  var table = this.el("table", { id: id });
  table.appendChild(this.el("caption", { class: run.example ? "results-example" : "" }, this.word("table_caption", { run: run.label })));
  var head = this.el("tr");
  head.appendChild(this.el("th", { scope: "col" }, this.cli.report_phase));
  head.appendChild(this.el("th", { scope: "col" }, this.word("status_header")));
  CHART_COUNTERS.forEach(function (key) {
    head.appendChild(self.el("th", { scope: "col" }, self.cli["counter_" + key] + " (B)"));
  });
  var parts = hasParts(run) ? PART_BARS.concat([["peak_excess", "peak_excess_bytes", "part_peak_excess"]]) : [];
  parts.forEach(function (bar) {
    head.appendChild(self.el("th", { scope: "col" }, self.cli[bar[2]]));
  });
  table.appendChild(this.el("thead")).appendChild(head);
  var body = table.appendChild(this.el("tbody"));
  phaseRows(run.result).forEach(function (row) {
    var tr = self.el("tr", { "data-phase": row.phase });
    tr.appendChild(self.el("th", { scope: "row" }, phaseName(row.record, row.phase)));
    if (!row.record) {
      var none = self.el("td", { colspan: String(CHART_COUNTERS.length + 1) }, self.word("phase_not_recorded"));
      tr.appendChild(none);
    } else {
      var status = self.cli["phase_status_" + row.record.status];
      if (row.record.error && row.record.error.out_of_memory) status += ": " + self.cli.report_out_of_memory;
      tr.appendChild(self.el("td", {}, status));
      CHART_COUNTERS.forEach(function (key) {
        var v = row.record[key];
        tr.appendChild(self.el("td", { "data-counter": key }, v === null ? self.cli.not_measured : bytesText(v, self.symbols)));
      });
      parts.forEach(function (bar) {
        var counted = row.record.parts;
        var v = counted === undefined || counted === null ? null : counted[bar[1]];
        tr.appendChild(self.el("td", { "data-part": bar[0] }, v === null ? self.cli.not_measured : bytesText(v, self.symbols)));
      });
    }
    body.appendChild(tr);
  });
  wrap.appendChild(table);
  return wrap;
};

/** The first step beside the warm ones (iteragpu report's table). */
Viewer.prototype.stepTable = function (run) {
  var self = this;
  var wrap = this.el("div", { class: "results-scroll" });
  // No class: Material styles a table without one.
  var table = this.el("table", { "data-steps": "" });
  table.appendChild(this.el("caption", { class: run.example ? "results-example" : "" }, this.cli.report_steps_title));
  var head = this.el("tr");
  [this.cli.report_phase, this.cli.report_first_step, this.cli.report_warm_steps].forEach(function (text) {
    head.appendChild(self.el("th", { scope: "col" }, text));
  });
  table.appendChild(this.el("thead")).appendChild(head);
  var body = table.appendChild(this.el("tbody"));
  stepRows(run.result).forEach(function (row) {
    var tr = self.el("tr", { "data-phase": row.phase });
    tr.appendChild(self.el("th", { scope: "row" }, row.phase));
    [row.first, row.warm].forEach(function (v, i) {
      tr.appendChild(self.el("td", { "data-step": i ? "warm" : "first" }, v === null ? self.cli.not_measured : bytesText(v, self.symbols)));
    });
    body.appendChild(tr);
  });
  wrap.appendChild(table);
  return wrap;
};

// The measured device's record in the environment (the device cuda:N names), or null.
function measuredDevice(result) {
  var index = /:([0-9]+)/.exec(result.device);
  var wanted = index ? BigInt(index[1]) : 0n;
  return result.environment.devices.find(function (d) {
    return d.index === wanted;
  }) || null;
}

function deviceName(result) {
  var device = measuredDevice(result);
  return device ? device.name : null;
}

/** What the environment records: GPU, driver, PyTorch, CUDA or HIP, allocator settings. */
Viewer.prototype.environmentOf = function (run, index) {
  var self = this;
  var env = run.result.environment;
  var section = this.el("section", { "data-run": String(index) });
  section.appendChild(this.el("p", { class: run.example ? "results-example" : "" }, run.label));
  var dl = this.el("dl", { class: "results-environment" });
  var missing = this.word("not_recorded");
  function item(label, value) {
    dl.appendChild(self.el("dt", {}, self.word(label)));
    dl.appendChild(self.el("dd", {}, value === null || value === undefined || value === "" ? missing : value));
  }
  var device = measuredDevice(run.result);
  var capacity = device && device.total_memory_bytes !== null
    ? bytesText(device.total_memory_bytes, this.symbols) + " B"
    : null;
  item("env_gpu", device && device.name ? device.name + " (" + run.result.device + ")" : null);
  item("env_gpu_memory", capacity);
  var driver = env.driver && env.driver.version ? env.driver.version : env.driver_version;
  item("env_driver", driver);
  item("env_pytorch", env.torch.version);
  item("env_cuda", env.torch.cuda);
  item("env_hip", env.torch.hip);
  var settings = [];
  var allocatorSettings = env.allocator.settings;
  Object.keys(allocatorSettings).forEach(function (key) {
    if (allocatorSettings[key] !== null) settings.push(key + "=" + allocatorSettings[key]);
  });
  item("env_allocator", settings.length ? settings.join(", ") : this.word("env_defaults"));
  item("env_allocator_in_effect", env.allocator.settings_in_effect === undefined ? null : env.allocator.settings_in_effect);
  item("env_outcome", this.cli["phase_status_" + run.result.outcome.status]);
  if (run.result.task !== undefined) {
    item("env_task", fill(this.cli.report_task_line, {
      task: run.result.task,
      rank: bytesText(run.result.rank, this.symbols),
      world: bytesText(run.result.world_size, this.symbols),
    }));
    var injected = run.result.counters_source === "injected";
    item("env_counters", injected ? this.word("counters_injected") : run.result.counters_source);
  }
  section.appendChild(dl);
  return section;
};

/** Runs side by side: each counter of each phase, and each run minus the first. */
Viewer.prototype.differenceTable = function () {
  var self = this;
  var wrap = this.el("div", { class: "results-scroll" });
  var table = this.el("table", { id: "results-difference-table" });
  var head = this.el("tr");
  head.appendChild(this.el("th", { scope: "col" }, this.cli.report_phase));
  head.appendChild(this.el("th", { scope: "col" }, this.cli.report_counter));
  this.runs.forEach(function (run) {
    head.appendChild(self.el("th", { scope: "col", class: run.example ? "results-example" : "" }, run.label + " (B)"));
  });
  this.runs.slice(1).forEach(function (run) {
    head.appendChild(self.el("th", { scope: "col" }, self.word("difference_header", { run: run.label, first: self.runs[0].label })));
  });
  table.appendChild(this.el("thead")).appendChild(head);
  var body = table.appendChild(this.el("tbody"));
  var rowsByRun = this.runs.map(function (run) {
    return phaseRows(run.result);
  });
  // Every phase any run recorded, in the order first met (a training step's by its step).
  var names = [];
  rowsByRun.forEach(function (rows) {
    rows.forEach(function (row) {
      if (names.indexOf(row.phase) < 0) names.push(row.phase);
    });
  });
  names.forEach(function (name) {
    CHART_COUNTERS.forEach(function (key) {
      var tr = self.el("tr", { "data-phase": name, "data-counter": key });
      tr.appendChild(self.el("th", { scope: "row" }, name));
      tr.appendChild(self.el("td", {}, self.cli["counter_" + key]));
      var values = rowsByRun.map(function (rows) {
        var row = rows.find(function (r) {
          return r.phase === name;
        });
        var record = row ? row.record : null;
        return record ? record[key] : null;
      });
      values.forEach(function (v) {
        tr.appendChild(self.el("td", {}, v === null ? self.cli.not_measured : bytesText(v, self.symbols)));
      });
      values.slice(1).forEach(function (v) {
        var d = v === null || values[0] === null ? null : v - values[0];
        tr.appendChild(self.el("td", { "data-difference": "" }, signedBytes(d, self.symbols, self.cli.not_measured)));
      });
      body.appendChild(tr);
    });
  });
  wrap.appendChild(table);
  return wrap;
};

/** The run (a process) with the highest allocated peak, in the CLI's words. */
Viewer.prototype.highestPeakText = function () {
  var best = highestPeak(this.runs.map(function (run) {
    return run.result;
  }));
  if (best === null) return this.el("p", { class: "results-highest" }, this.cli.report_highest_peak_none);
  var run = this.runs[best.index];
  return this.el("p", { class: "results-highest", "data-run": String(best.index) }, fill(this.cli.report_highest_peak, {
    rank: bytesText(run.result.rank === undefined ? 0n : run.result.rank, this.symbols),
    path: run.label,
    peak: bytesText(best.peak, this.symbols),
    phase: best.phase,
  }));
};

/** The estimate's inputs: both empty (the network the lab recorded) or both given. */
Viewer.prototype.estimateInputs = function () {
  var params = this.doc.getElementById("results-params");
  var bits = this.doc.getElementById("results-bits");
  var comma = this.symbols.decimal === ",";
  var p = params.value.trim();
  var b = bits.value.trim();
  [params, bits].forEach(function (el) {
    el.removeAttribute("aria-invalid");
  });
  if (p === "" && b === "") return { ok: true, parameters: null, bits: null };
  if (p === "" || b === "") {
    (p === "" ? params : bits).setAttribute("aria-invalid", "true");
    return { ok: false, message: this.word("together") };
  }
  var pc = sizer.parseCount(p, sizer.LIMITS.params, comma);
  var bc = sizer.parsePositive(b, sizer.LIMITS.bits, comma);
  var errors = [];
  var self = this;
  [[pc, params], [bc, bits]].forEach(function (pair) {
    if (!pair[0].ok) {
      pair[1].setAttribute("aria-invalid", "true");
      var label = self.doc.querySelector('label[for="' + pair[1].id + '"]');
      var reason = self.messages.querySelector('[data-reason="' + pair[0].reason + '"]');
      errors.push((label ? label.textContent.trim() : pair[1].id) + ": " + (reason ? reason.textContent.trim() : pair[0].reason));
    }
  });
  if (errors.length) return { ok: false, message: errors.join(" ") };
  return { ok: true, parameters: pc.value, bits: bc.value };
};

Viewer.prototype.renderEstimate = function () {
  var self = this;
  clear(this.estimateOut);
  if (!this.runs.length) return;
  var inputs = this.estimateInputs();
  if (!inputs.ok) {
    this.estimateOut.appendChild(this.el("p", { role: "alert", class: "results-estimate-error" }, inputs.message));
    return;
  }
  this.runs.forEach(function (run, index) {
    var c = compare(run.result, inputs.parameters, inputs.bits);
    var section = self.el("section", { "data-run": String(index) });
    section.appendChild(self.el("p", { class: run.example ? "results-example" : "" }, run.label));
    if (c === null) {
      section.appendChild(self.el("p", { class: "results-no-network" }, self.cli.report_no_network));
      self.estimateOut.appendChild(section);
      return;
    }
    var texts = estimateTexts(c, self.cli, self.symbols);
    section.appendChild(self.el("p", { class: "results-estimate-title" }, texts.title));
    var wrap = self.el("div", { class: "results-scroll" });
    // No class: Material styles a table without one.
    var table = self.el("table");
    var head = self.el("tr");
    [self.cli.figure, self.cli.bytes_header, "GiB"].forEach(function (text) {
      head.appendChild(self.el("th", { scope: "col" }, text));
    });
    table.appendChild(self.el("thead")).appendChild(head);
    var body = table.appendChild(self.el("tbody"));
    texts.rows.forEach(function (cells) {
      var tr = self.el("tr");
      tr.appendChild(self.el("th", { scope: "row" }, cells[0]));
      tr.appendChild(self.el("td", {}, cells[1]));
      tr.appendChild(self.el("td", {}, cells[2]));
      body.appendChild(tr);
    });
    wrap.appendChild(table);
    section.appendChild(wrap);
    var list = self.el("ul", { class: "results-explanation" });
    texts.lines.forEach(function (line) {
      list.appendChild(self.el("li", {}, line));
    });
    section.appendChild(list);
    self.estimateOut.appendChild(section);
  });
};

/** The estimate of `iteragpu train` for each run's recorded parameters, item by item, once
 * the reader has chosen a precision and an optimizer (iteragpu report --precision ...). */
Viewer.prototype.renderTrain = function () {
  var self = this;
  var out = this.doc.getElementById("results-train");
  var precision = this.doc.getElementById("results-precision");
  var optimizer = this.doc.getElementById("results-optimizer");
  var fused = this.doc.getElementById("results-fused");
  clear(out);
  if (!out || !precision || !this.runs.length || precision.value === "" || optimizer.value === "") return;
  var request = { precision: precision.value, optimizer: optimizer.value, fused: fused.checked };
  if (groupStates([], request) === null) {
    out.appendChild(this.el("p", { role: "alert", class: "results-train-error" }, this.word("fused_refused", { optimizer: request.optimizer })));
    return;
  }
  this.runs.forEach(function (run, index) {
    var section = self.el("section", { "data-run": String(index) });
    section.appendChild(self.el("p", { class: run.example ? "results-example" : "" }, run.label));
    section.appendChild(self.el("p", { class: "results-train-title" }, fill(self.cli.report_train_title, {
      precision: request.precision,
      optimizer: request.optimizer,
      fused: request.fused ? self.cli.report_train_fused : "",
    })));
    var found = trainItems(run.result, request);
    if (found === null) {
      section.appendChild(self.el("p", {}, self.cli.report_train_no_groups));
      out.appendChild(section);
      return;
    }
    var wrap = self.el("div", { class: "results-scroll" });
    var table = self.el("table");
    var head = self.el("tr");
    [self.cli.figure, self.cli.report_estimated, self.cli.report_counted, self.cli.report_difference].forEach(function (text) {
      head.appendChild(self.el("th", { scope: "col" }, text));
    });
    table.appendChild(self.el("thead")).appendChild(head);
    var body = table.appendChild(self.el("tbody"));
    found.items.forEach(function (it) {
      var tr = self.el("tr", { "data-item": it.item });
      tr.appendChild(self.el("th", { scope: "row" }, self.cli["train_item_" + it.item]));
      tr.appendChild(self.el("td", { "data-bytes": it.estimated.toString() }, bytesText(it.estimated, self.symbols)));
      var missing = it.item.indexOf("master_") === 0 ? self.cli.not_counted : self.cli.not_measured;
      tr.appendChild(self.el("td", {}, it.measured === null ? missing : bytesText(it.measured, self.symbols)));
      tr.appendChild(self.el("td", { "data-difference": "" }, signedBytes(it.difference, self.symbols, self.cli.not_measured)));
      body.appendChild(tr);
    });
    wrap.appendChild(table);
    section.appendChild(wrap);
    if (!found.measured) section.appendChild(self.el("p", {}, self.cli.report_train_no_phase));
    out.appendChild(section);
  });
};

function start(doc, win) {
  var dataElement = doc.getElementById("results-data");
  if (!dataElement || !doc.getElementById("result-file")) return null;
  var viewer = new Viewer(doc, win, JSON.parse(dataElement.textContent));
  viewer.input.addEventListener("change", function () {
    if (viewer.input.files && viewer.input.files.length) viewer.load(viewer.input.files);
  });
  var drop = doc.getElementById("results-drop");
  if (drop) {
    drop.addEventListener("dragover", function (event) {
      event.preventDefault();
    });
    drop.addEventListener("drop", function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) viewer.load(event.dataTransfer.files);
    });
  }
  var example = doc.getElementById("results-example");
  if (example) {
    example.addEventListener("click", function () {
      viewer.loadExample();
    });
  }
  var trainExample = doc.getElementById("results-example-train");
  if (trainExample) {
    trainExample.addEventListener("click", function () {
      viewer.loadTrainExample();
    });
  }
  var trainForm = doc.getElementById("results-train-form");
  if (trainForm) {
    trainForm.addEventListener("change", function () {
      viewer.renderTrain();
    });
    trainForm.addEventListener("submit", function (event) {
      event.preventDefault();
    });
  }
  if (viewer.estimateForm) {
    viewer.estimateForm.addEventListener("input", function () {
      viewer.renderEstimate();
    });
    viewer.estimateForm.addEventListener("submit", function (event) {
      event.preventDefault();
    });
  }
  doc.documentElement.setAttribute("data-results-ready", "true");
  return viewer;
}

function autostart(win) {
  if (typeof win.document === "undefined") return;
  var run = function () {
    api.page = start(win.document, win);
  };
  if (win.document.readyState === "loading") {
    win.document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
}

var api = {
  MAX_BYTES: MAX_BYTES,
  PHASES: PHASES,
  CHART_COUNTERS: CHART_COUNTERS,
  parseStrict: parseStrict,
  loadSchema: loadSchema,
  validate: validate,
  readResult: readResult,
  compare: compare,
  decimalPlaces: decimalPlaces,
  estimateTexts: estimateTexts,
  phaseRows: phaseRows,
  stepRows: stepRows,
  highestPeak: highestPeak,
  groupStates: groupStates,
  trainItems: trainItems,
  autostart: autostart,
  start: start,
};

export default api;
// The same names one by one (node's require() of this module sees these).
export {
  MAX_BYTES, PHASES, CHART_COUNTERS, parseStrict, loadSchema, validate, readResult, compare,
  decimalPlaces, estimateTexts, phaseRows, stepRows, highestPeak, groupStates, trainItems,
  autostart, start,
};

// In the browser (a <script type="module">, run once the document is parsed): published as
// window.IteraGPUResults and started.
if (typeof window !== "undefined") {
  window.IteraGPUResults = api;
  api.autostart(window);
}
