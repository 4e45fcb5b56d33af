/*
 * The recipes' expressions (a subset of Python) parsed and evaluated on BigInt, with
 * Python's reprs for the keys of refusals. Mirrors iteragpu.models.recipe's evaluator.
 */

import { abs, cmp, rational } from "./rational.js";
import { has, record } from "./objects.js";
import { FLOAT_KEY, INTEGER_KEY, isBigInteger, isFloat, refuse, truthy } from "./json_reader.js";

// ------------------------------------------------------------------------------------------
// Families as data (iteragpu.models.recipe): the recipe of a family, from the page's data
// (`families`: docs/hooks.py sizer_data, each recipe with its base merged in), read as the
// Python reader reads it. Its expressions are the subset of Python the recipe module
// evaluates, here on BigInt: integers, booleans (0 and 1 in arithmetic), None, strings, names,
// + - * and Python's floored // and %, chained comparisons (is, is not, in, not in too), and,
// or, not, `x if c else y`, min, max, len, x[i], list literals. What the Python refuses with
// a ConfigError is refused with its reason and key (the key of a failed expression is its
// text as Python's ast.unparse writes it); what no recipe may hold is refused as bad_recipe.
// ------------------------------------------------------------------------------------------

const EXPRESSION_TOKEN =
  /[ \t\r\n]*(?:([0-9](?:_?[0-9])*)|([A-Za-z_][A-Za-z0-9_]*)|('(?:[^'\\\n]|\\[\s\S])*'|"(?:[^"\\\n]|\\[\s\S])*")|(\/\/|==|!=|<=|>=|[-+*%<>()[\],]))/y;
const EXPRESSION_KEYWORDS = ["and", "or", "not", "if", "else", "is", "in", "None", "True", "False"];
const STRING_ESCAPES = record({
  n: "\n", t: "\t", r: "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"',
});
// ast.unparse's precedences (Python's _Precedence), for the parentheses of a key's text.
const PRECEDENCE = {
  tuple: 2, test: 4, or: 5, and: 6, not: 7, cmp: 8, arith: 13, term: 14, factor: 15, atom: 18,
};
const PARSED_EXPRESSIONS = Object.create(null);

export function badRecipe(expression) {
  refuse("bad_recipe", pyText(expression).slice(0, 60));
}

function tokenize(expression) {
  var tokens = [];
  var at = 0;
  EXPRESSION_TOKEN.lastIndex = 0;
  while (true) {
    var rest = expression.slice(at);
    if (/^[ \t\r\n]*$/.test(rest)) break;
    EXPRESSION_TOKEN.lastIndex = at;
    var match = EXPRESSION_TOKEN.exec(expression);
    if (match === null) return null;
    at = EXPRESSION_TOKEN.lastIndex;
    if (match[1] !== undefined) {
      // 1.5, 1e3, 0x10: a float or a literal no recipe holds.
      if (/^[.A-Za-z0-9_]/.test(expression.slice(at))) return null;
      tokens.push({ kind: "number", value: BigInt(match[1].replace(/_/g, "")) });
    } else if (match[2] !== undefined) {
      var keyword = EXPRESSION_KEYWORDS.indexOf(match[2]) >= 0;
      tokens.push({ kind: keyword ? "keyword" : "name", value: match[2] });
    } else if (match[3] !== undefined) {
      tokens.push({ kind: "string", value: unquote(match[3]) });
    } else {
      tokens.push({ kind: "op", value: match[4] });
    }
  }
  tokens.push({ kind: "end", value: null });
  return tokens;
}

function unquote(literal) {
  return literal.slice(1, -1).replace(/\\([\s\S])/g, function (whole, c) {
    if (c === "\n") return "";
    return has(STRING_ESCAPES, c) ? STRING_ESCAPES[c] : whole;
  });
}

/** A recursive-descent parser of Python's grammar, for the subset: nodes as ast's. */
function ExpressionParser(tokens) {
  this.tokens = tokens;
  this.at = 0;
}

ExpressionParser.prototype.peek = function (offset) {
  return this.tokens[Math.min(this.at + (offset || 0), this.tokens.length - 1)];
};

ExpressionParser.prototype.accept = function (kind, value) {
  var token = this.peek();
  if (token.kind !== kind || (value !== undefined && token.value !== value)) return null;
  this.at += 1;
  return token;
};

ExpressionParser.prototype.expect = function (kind, value) {
  var token = this.accept(kind, value);
  if (token === null) throw new SyntaxError("expression");
  return token;
};

ExpressionParser.prototype.test = function () {
  var body = this.boolean("or");
  if (this.accept("keyword", "if") === null) return body;
  var condition = this.boolean("or");
  this.expect("keyword", "else");
  return { t: "if", test: condition, body: body, orelse: this.test() };
};

ExpressionParser.prototype.boolean = function (op) {
  var values = [op === "or" ? this.boolean("and") : this.not()];
  while (this.accept("keyword", op) !== null) {
    values.push(op === "or" ? this.boolean("and") : this.not());
  }
  return values.length === 1 ? values[0] : { t: "bool", op: op, values: values };
};

ExpressionParser.prototype.not = function () {
  if (this.accept("keyword", "not") !== null) {
    return { t: "unary", op: "not", operand: this.not() };
  }
  return this.comparison();
};

ExpressionParser.prototype.comparison = function () {
  var left = this.arith();
  var ops = [];
  var comparators = [];
  while (true) {
    var token = this.peek();
    var op = null;
    if (token.kind === "op" && ["<", ">", "==", ">=", "<=", "!="].indexOf(token.value) >= 0) {
      op = token.value;
      this.at += 1;
    } else if (token.kind === "keyword" && token.value === "in") {
      op = "in";
      this.at += 1;
    } else if (token.kind === "keyword" && token.value === "not" &&
      this.peek(1).kind === "keyword" && this.peek(1).value === "in") {
      op = "not in";
      this.at += 2;
    } else if (token.kind === "keyword" && token.value === "is") {
      this.at += 1;
      op = this.accept("keyword", "not") !== null ? "is not" : "is";
    }
    if (op === null) break;
    ops.push(op);
    comparators.push(this.arith());
  }
  if (ops.length === 0) return left;
  return { t: "compare", left: left, ops: ops, comparators: comparators };
};

ExpressionParser.prototype.arith = function () {
  var node = this.term();
  var token;
  while ((token = this.accept("op", "+") || this.accept("op", "-")) !== null) {
    node = { t: "binary", op: token.value, left: node, right: this.term() };
  }
  return node;
};

ExpressionParser.prototype.term = function () {
  var node = this.factor();
  var token;
  var next = function (parser) {
    return parser.accept("op", "*") || parser.accept("op", "//") || parser.accept("op", "%");
  };
  while ((token = next(this)) !== null) {
    node = { t: "binary", op: token.value, left: node, right: this.factor() };
  }
  return node;
};

ExpressionParser.prototype.factor = function () {
  var token = this.accept("op", "-") || this.accept("op", "+");
  if (token !== null) return { t: "unary", op: token.value, operand: this.factor() };
  var node = this.atom();
  while (true) {
    if (this.accept("op", "(") !== null) {
      node = { t: "call", func: node, args: this.items(")") };
    } else if (this.accept("op", "[") !== null) {
      var index = this.test();
      if (this.accept("op", ",") !== null) {
        var elts = [index].concat(this.items("]"));
        index = { t: "tuple", elts: elts };
      } else {
        this.expect("op", "]");
      }
      node = { t: "subscript", value: node, index: index };
    } else {
      return node;
    }
  }
};

/** Expressions separated by commas (one may trail) up to `close`, which is consumed. */
ExpressionParser.prototype.items = function (close) {
  var elts = [];
  while (this.accept("op", close) === null) {
    elts.push(this.test());
    if (this.accept("op", ",") === null) {
      this.expect("op", close);
      break;
    }
  }
  return elts;
};

ExpressionParser.prototype.atom = function () {
  var token = this.peek();
  this.at += 1;
  if (token.kind === "number") return { t: "constant", value: token.value };
  if (token.kind === "name") return { t: "name", id: token.value };
  if (token.kind === "string") {
    var text = token.value;
    while (this.peek().kind === "string") text += this.tokens[this.at++].value;
    return { t: "constant", value: text };
  }
  if (token.kind === "keyword" && token.value === "None") return { t: "constant", value: null };
  if (token.kind === "keyword" && token.value === "True") return { t: "constant", value: true };
  if (token.kind === "keyword" && token.value === "False") return { t: "constant", value: false };
  if (token.kind === "op" && token.value === "[") return { t: "list", elts: this.items("]") };
  if (token.kind === "op" && token.value === "(") {
    if (this.accept("op", ")") !== null) return { t: "tuple", elts: [] };
    var inner = this.test();
    if (this.accept("op", ",") !== null) {
      return { t: "tuple", elts: [inner].concat(this.items(")")) };
    }
    this.expect("op", ")");
    return inner;
  }
  throw new SyntaxError("expression");
};

/** Whether the expression reads the name `name`. */
export function mentions(node, name) {
  var any = function (nodes) {
    return nodes.some(function (n) {
      return mentions(n, name);
    });
  };
  switch (node.t) {
    case "name": return node.id === name;
    case "constant": return false;
    case "binary": return any([node.left, node.right]);
    case "unary": return mentions(node.operand, name);
    case "if": return any([node.test, node.body, node.orelse]);
    case "subscript": return any([node.value, node.index]);
    case "call": return any([node.func].concat(node.args));
    case "compare": return any([node.left].concat(node.comparators));
    case "bool": return any(node.values);
    default: return any(node.elts); // list, tuple
  }
}

/** The parsed expression, once per text: {node, layer} (whether it reads `layer`), or null. */
export function parsedExpression(expression) {
  if (has(PARSED_EXPRESSIONS, expression)) return PARSED_EXPRESSIONS[expression];
  var parsed = null;
  var tokens = tokenize(expression);
  if (tokens !== null) {
    try {
      var parser = new ExpressionParser(tokens);
      var node = parser.test();
      parser.expect("end");
      parsed = { node: node, layer: mentions(node, "layer") };
    } catch (error) {
      if (!(error instanceof SyntaxError || error instanceof RangeError)) throw error;
    }
  }
  PARSED_EXPRESSIONS[expression] = parsed;
  return parsed;
}

/** Python's str() of a recipe's expression (a string, or a number or boolean as JSON has it). */
export function pyText(expression) {
  if (typeof expression === "string") return expression;
  if (expression === null || expression === undefined) return "None";
  if (typeof expression === "boolean") return expression ? "True" : "False";
  return String(expression);
}

function codePoints(text, count) {
  return Array.from(text).slice(0, count).join("");
}

/** Python's repr() of a string. */
function stringRepr(text) {
  var quote = text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' : "'";
  var out = quote;
  Array.from(text).forEach(function (c) {
    var code = c.codePointAt(0);
    if (c === "\\" || c === quote) out += "\\" + c;
    else if (c === "\n") out += "\\n";
    else if (c === "\t") out += "\\t";
    else if (c === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + ("0" + code.toString(16)).slice(-2);
    else out += c;
  });
  return out + quote;
}

const DECIMAL_TEXT = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * A float's JSON text, exactly: {negative, digits, point} for negative? 0.digits x 10^point
 * (digits without leading or trailing zeros, "" for zero), or {special: nan, inf or -inf}.
 * Beyond a double's range it is infinite or zero, as Python's float reads it.
 */
function floatParts(text) {
  if (text === "NaN") return { special: "nan" };
  var match = DECIMAL_TEXT.exec(text.replace("Infinity", "inf"));
  if (match === null) return { special: text.charAt(0) === "-" ? "-inf" : "inf" };
  var all = match[2] + (match[3] || "");
  var lead = all.length - all.replace(/^0+/, "").length;
  var digits = all.slice(lead).replace(/0+$/, "");
  var exponent = match[4] ? match[4].replace(/^([+-]?)0+(?=[0-9])/, "$1") : "0";
  // An exponent far beyond a double's range: only its sign matters.
  var far = exponent.replace(/^[+-]/, "").length > 6;
  var point = far ? 0 : match[2].length - lead + parseInt(exponent, 10);
  var negative = match[1] === "-";
  if (digits !== "" && (point > 309 || (far && exponent.charAt(0) !== "-"))) {
    return { special: negative ? "-inf" : "inf" };
  }
  if (point < -323 || far) digits = "";
  return { negative: negative, digits: digits, point: point };
}

function bitLength(n) {
  return n === 0n ? 0 : n.toString(2).length;
}

/**
 * The double nearest a float's text, as Python's float reads it (round half to even), as an
 * exact rational; or {special}: nan, inf, -inf (beyond the largest double, too).
 */
function floatExact(text) {
  var parts = floatParts(text);
  if (parts.special !== undefined) return parts;
  if (parts.digits === "") return { value: rational(0n), zero: true };
  var scale = parts.point - parts.digits.length;
  var n = BigInt(parts.digits) * (scale > 0 ? 10n ** BigInt(scale) : 1n);
  var d = scale < 0 ? 10n ** BigInt(-scale) : 1n;
  // value = m x 2^e with 2^52 <= m < 2^53 (fewer bits below the normal range).
  var e = Math.max(bitLength(n) - bitLength(d) - 53, -1074);
  var m;
  for (;;) {
    var num = e < 0 ? n << BigInt(-e) : n;
    var den = e > 0 ? d << BigInt(e) : d;
    m = num / den;
    var rest = num % den;
    if (2n * rest > den || (2n * rest === den && m % 2n === 1n)) m += 1n;
    if (m >= 1n << 53n && e < 2000) {
      e += 1;
    } else if (m < 1n << 52n && e > -1074 && num / den < 1n << 52n) {
      e -= 1;
    } else {
      break;
    }
  }
  if (m === 0n) return { value: rational(0n), zero: true };
  if (bitLength(m) + e > 1024) return { special: parts.negative ? "-inf" : "inf" };
  var sign = parts.negative ? -1n : 1n;
  var value = e >= 0 ? rational(sign * (m << BigInt(e))) : rational(sign * m, 1n << BigInt(-e));
  return { value: value, zero: false };
}

/**
 * The shortest digits that read back as the double `exact` holds, as Python's repr finds
 * them (of each length, the nearest): {digits, point} for 0.digits x 10^point.
 */
function shortestDigits(exact) {
  var n = abs(exact.value.n);
  var d = exact.value.d;
  var atLeast = function (power) { // n / d >= 10^power
    return n * 10n ** BigInt(Math.max(-power, 0)) >= d * 10n ** BigInt(Math.max(power, 0));
  };
  var point = n.toString().length - d.toString().length; // then 10^(point-1) <= v < 10^point
  while (atLeast(point)) point += 1;
  while (!atLeast(point - 1)) point -= 1;
  for (var k = 1; k <= 17; k++) {
    var shift = k - point; // q = round(v x 10^shift), k digits
    var num = n * (shift > 0 ? 10n ** BigInt(shift) : 1n);
    var den = d * (shift < 0 ? 10n ** BigInt(-shift) : 1n);
    var q = num / den;
    var rest = num % den;
    if (2n * rest > den || (2n * rest === den && q % 2n === 1n)) q += 1n;
    var text = q.toString() + "e" + String(-shift);
    var back = floatExact(text);
    if (back.value !== undefined && cmp(back.value, rational(n, d)) === 0) {
      var digits = q.toString();
      return { digits: digits.replace(/0+$/, ""), point: point + (digits.length - k) };
    }
  }
  return null; // unreachable: 17 digits always read back
}

/** Python's repr() of a float, from its JSON text. */
function floatRepr(text) {
  var exact = floatExact(text);
  if (exact.special !== undefined) return exact.special;
  var sign = floatParts(text).negative ? "-" : "";
  if (exact.zero) return sign + "0.0";
  var shortest = shortestDigits(exact);
  var digits = shortest.digits;
  var point = shortest.point;
  if (point <= -4 || point > 16) {
    var exponent = point - 1;
    var mantissa = digits.charAt(0) + (digits.length > 1 ? "." + digits.slice(1) : "");
    var shown = String(Math.abs(exponent));
    if (shown.length < 2) shown = "0" + shown; // Python writes 1e-05
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + shown;
  }
  if (point <= 0) return sign + "0." + "0".repeat(-point) + digits;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length) + ".0";
  return sign + digits.slice(0, point) + "." + digits.slice(point);
}

/** Python's repr() of a value the evaluator holds. */
export function pyRepr(value) {
  value = pyValue(value);
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return stringRepr(value);
  if (Array.isArray(value)) return "[" + value.map(pyRepr).join(", ") + "]";
  if (isFloat(value)) return floatRepr(value[FLOAT_KEY]);
  return "{" + Object.keys(value).map(function (key) {
    return stringRepr(key) + ": " + pyRepr(value[key]);
  }).join(", ") + "}";
}

/** The node's text as Python's ast.unparse writes it (a failed expression's key). */
function unparse(node, precedence) {
  if (precedence === undefined) precedence = PRECEDENCE.test;
  var wrap = function (own, text) {
    return precedence > own ? "(" + text + ")" : text;
  };
  var items = function (elts) {
    if (elts.length === 1) return unparse(elts[0]) + ",";
    return elts.map(function (e) { return unparse(e); }).join(", ");
  };
  switch (node.t) {
    case "constant": return pyRepr(node.value);
    case "name": return node.id;
    case "binary": {
      var own = node.op === "+" || node.op === "-" ? PRECEDENCE.arith : PRECEDENCE.term;
      var right = unparse(node.right, own + 1);
      return wrap(own, unparse(node.left, own) + " " + node.op + " " + right);
    }
    case "unary":
      if (node.op === "not") {
        return wrap(PRECEDENCE.not, "not " + unparse(node.operand, PRECEDENCE.not));
      }
      return wrap(PRECEDENCE.factor, node.op + unparse(node.operand, PRECEDENCE.factor));
    case "bool": {
      var level = PRECEDENCE[node.op];
      return wrap(PRECEDENCE[node.op], node.values.map(function (value) {
        level += 1;
        return unparse(value, level);
      }).join(" " + node.op + " "));
    }
    case "compare":
      return wrap(PRECEDENCE.cmp, unparse(node.left, PRECEDENCE.cmp + 1) +
        node.ops.map(function (op, i) {
          return " " + op + " " + unparse(node.comparators[i], PRECEDENCE.cmp + 1);
        }).join(""));
    case "if":
      return wrap(PRECEDENCE.test, unparse(node.body, PRECEDENCE.test + 1) + " if " +
        unparse(node.test, PRECEDENCE.test + 1) + " else " +
        unparse(node.orelse, PRECEDENCE.test));
    case "call":
      return unparse(node.func, PRECEDENCE.atom) + "(" + node.args.map(function (a) {
        return unparse(a);
      }).join(", ") + ")";
    case "subscript":
      var bare = node.index.t === "tuple" && node.index.elts.length > 0; // x[a, b]
      return unparse(node.value, PRECEDENCE.atom) + "[" +
        (bare ? items(node.index.elts) : unparse(node.index)) + "]";
    case "list": return "[" + node.elts.map(function (e) { return unparse(e); }).join(", ") + "]";
    default: // tuple
      var parenthesized = node.elts.length === 0 || precedence > PRECEDENCE.tuple;
      return parenthesized ? "(" + items(node.elts) + ")" : items(node.elts);
  }
}

function failedKey(node) {
  return codePoints(unparse(node), 60);
}

function floatValue(digits) {
  var value = record();
  value[FLOAT_KEY] = digits;
  return value;
}

/** A JSON value as the evaluator holds it: integers as BigInt, the markers read. */
export function pyValue(value) {
  if (typeof value === "number") {
    return Number.isInteger(value) ? BigInt(value) : floatValue(String(value));
  }
  if (isBigInteger(value)) return BigInt(value[INTEGER_KEY]);
  return value === undefined ? null : value;
}

/** Python's type of an evaluator's value: none, bool, int, str, list, float or dict. */
function pyKind(value) {
  if (value === null) return "none";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "bigint") return "int";
  if (typeof value === "string") return "str";
  if (Array.isArray(value)) return "list";
  return isFloat(value) ? "float" : "dict";
}

function isWholeValue(value) {
  return typeof value === "bigint" || typeof value === "boolean";
}

function whole(value) {
  if (typeof value === "boolean") return value ? 1n : 0n;
  return value;
}

/** -1, 0 or 1, or NaN (a NaN float): numbers compared as Python compares them. */
function numberOrder(a, b) {
  if (!isFloat(a) && !isFloat(b)) {
    var x = whole(a);
    var y = whole(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  // Python compares an integer and a float exactly, as values (the float's binary one).
  var exact = function (value) {
    return isFloat(value) ? floatExact(value[FLOAT_KEY]) : { value: rational(whole(value)) };
  };
  var x = exact(a);
  var y = exact(b);
  var infinity = function (v) {
    return v.special === "nan" ? NaN : v.special === "inf" ? 1 : v.special === "-inf" ? -1 : 0;
  };
  var p = infinity(x);
  var q = infinity(y);
  if (isNaN(p) || isNaN(q)) return NaN;
  if (p !== 0 || q !== 0) return p < q ? -1 : p > q ? 1 : 0;
  return cmp(x.value, y.value);
}

const NUMERIC = record({ bool: true, int: true, float: true });

function pyEqual(a, b) {
  a = pyValue(a);
  b = pyValue(b);
  var ka = pyKind(a);
  var kb = pyKind(b);
  if (has(NUMERIC, ka) && has(NUMERIC, kb)) return numberOrder(a, b) === 0;
  if (ka !== kb) return false;
  if (ka === "none" || ka === "str") return a === b;
  if (ka === "list") {
    return a.length === b.length && a.every(function (item, i) {
      return pyEqual(item, b[i]);
    });
  }
  var keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every(function (key) {
    return has(b, key) && pyEqual(a[key], b[key]);
  });
}

function holds(op, order) {
  if (isNaN(order)) return false;
  if (op === "<") return order < 0;
  if (op === "<=") return order <= 0;
  if (op === ">") return order > 0;
  return order >= 0;
}

/** `a op b` for < <= > >=, as Python orders them; `fail` where Python raises TypeError. */
function pyOrder(op, a, b, fail) {
  a = pyValue(a);
  b = pyValue(b);
  var ka = pyKind(a);
  var kb = pyKind(b);
  if (has(NUMERIC, ka) && has(NUMERIC, kb)) return holds(op, numberOrder(a, b));
  if (ka === "str" && kb === "str") return holds(op, a < b ? -1 : a > b ? 1 : 0);
  if (ka === "list" && kb === "list") {
    for (var i = 0; i < Math.min(a.length, b.length); i++) {
      if (!pyEqual(a[i], b[i])) return pyOrder(op, a[i], b[i], fail);
    }
    return holds(op, a.length < b.length ? -1 : a.length > b.length ? 1 : 0);
  }
  return fail();
}

function pyContains(container, item, fail) {
  container = pyValue(container);
  item = pyValue(item);
  var kind = pyKind(container);
  if (kind === "list") {
    return container.some(function (element) {
      return pyEqual(element, item);
    });
  }
  if (kind === "str") return typeof item === "string" ? container.indexOf(item) >= 0 : fail();
  if (kind === "dict") {
    if (Array.isArray(item) || pyKind(item) === "dict") return fail(); // unhashable
    return typeof item === "string" && has(container, item);
  }
  return fail();
}

/** Python's `is`: None, True and False are themselves; small integers are cached. */
function pyIdentical(a, b) {
  if (a === null || b === null) return a === b;
  if (typeof a === "boolean" || typeof b === "boolean") return a === b;
  if (typeof a === "bigint" && typeof b === "bigint") return a === b && a >= -5n && a <= 256n;
  return a === b;
}

function pyCompare(op, a, b, fail) {
  if (op === "==") return pyEqual(a, b);
  if (op === "!=") return !pyEqual(a, b);
  if (op === "in") return pyContains(b, a, fail);
  if (op === "not in") return !pyContains(b, a, fail);
  if (op === "is") return pyIdentical(a, b);
  if (op === "is not") return !pyIdentical(a, b);
  return pyOrder(op, a, b, fail);
}

function floorDivide(a, b) {
  var q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

function floorModulo(a, b) {
  var r = a % b;
  return r !== 0n && (r < 0n) !== (b < 0n) ? r + b : r;
}

/** The items min and max iterate over, and len counts. */
function pyItems(value, fail) {
  var kind = pyKind(value);
  if (kind === "list") return value.map(pyValue);
  if (kind === "str") return Array.from(value);
  if (kind === "dict") return Object.keys(value);
  return fail();
}

const FUNCTIONS = record({
  min: function (args, fail) {
    return extreme(args, "<", fail);
  },
  max: function (args, fail) {
    return extreme(args, ">", fail);
  },
  len: function (args, fail) {
    if (args.length !== 1) return fail();
    return BigInt(pyItems(args[0], fail).length);
  },
});

function extreme(args, op, fail) {
  var items = args.length === 1 ? pyItems(args[0], fail) : args;
  if (items.length === 0) return fail();
  var best = items[0];
  for (var i = 1; i < items.length; i++) {
    if (pyOrder(op, items[i], best, fail)) best = items[i];
  }
  return best;
}

/** `container[index]`, or `fail` where Python raises IndexError, KeyError or TypeError. */
function pySubscript(container, index, fail) {
  var kind = pyKind(container);
  if (kind === "list" || kind === "str") {
    var items = kind === "str" ? Array.from(container) : container;
    if (!isWholeValue(index)) return fail();
    var i = whole(index);
    if (i < 0n) i += BigInt(items.length);
    if (i < 0n || i >= BigInt(items.length)) return fail();
    return pyValue(items[i.toString()]);
  }
  if (kind === "dict") {
    if (typeof index === "string" && has(container, index)) return pyValue(container[index]);
    return fail();
  }
  return fail();
}

function evaluateNode(node, scope, extra) {
  var fail = function () {
    refuse("bad_key", failedKey(node));
  };
  switch (node.t) {
    case "constant": return node.value;
    case "name":
      if (extra !== null && has(extra, node.id)) return extra[node.id];
      if (has(scope, node.id)) return pyValue(scope[node.id]);
      return refuse("missing_key", node.id);
    case "binary": {
      var left = evaluateNode(node.left, scope, extra);
      var right = evaluateNode(node.right, scope, extra);
      if (!isWholeValue(left) || !isWholeValue(right)) return fail();
      var a = whole(left);
      var b = whole(right);
      if ((node.op === "//" || node.op === "%") && b === 0n) return fail();
      if (node.op === "+") return a + b;
      if (node.op === "-") return a - b;
      if (node.op === "*") return a * b;
      return node.op === "//" ? floorDivide(a, b) : floorModulo(a, b);
    }
    case "unary": {
      var operand = evaluateNode(node.operand, scope, extra);
      if (node.op === "not") return !truthy(operand);
      if (node.op !== "-") return badRecipe(unparse(node));
      if (isWholeValue(operand)) return -whole(operand);
      if (isFloat(operand)) {
        var digits = operand[FLOAT_KEY];
        return floatValue(digits.charAt(0) === "-" ? digits.slice(1) : "-" + digits);
      }
      return fail(); // Python's TypeError
    }
    case "bool": {
      var result = node.op === "and";
      for (var i = 0; i < node.values.length; i++) {
        result = evaluateNode(node.values[i], scope, extra);
        if (truthy(result) !== (node.op === "and")) return result;
      }
      return result;
    }
    case "compare": {
      var lhs = evaluateNode(node.left, scope, extra);
      for (var j = 0; j < node.ops.length; j++) {
        var rhs = evaluateNode(node.comparators[j], scope, extra);
        if (!pyCompare(node.ops[j], lhs, rhs, fail)) return false;
        lhs = rhs;
      }
      return true;
    }
    case "if":
      return truthy(evaluateNode(node.test, scope, extra))
        ? evaluateNode(node.body, scope, extra)
        : evaluateNode(node.orelse, scope, extra);
    case "call": {
      if (node.func.t === "name" && node.func.id === "per_layer" && node.args.length === 2) {
        return perLayer(node, scope, extra);
      }
      if (node.func.t !== "name" || !has(FUNCTIONS, node.func.id)) {
        return badRecipe(unparse(node));
      }
      var args = node.args.map(function (arg) {
        return evaluateNode(arg, scope, extra);
      });
      return FUNCTIONS[node.func.id](args, fail);
    }
    case "subscript": {
      var container = evaluateNode(node.value, scope, extra);
      var index = evaluateNode(node.index, scope, extra);
      return pySubscript(container, index, function () {
        refuse("bad_key", failedKey(node.value));
      });
    }
    default: // list, tuple: a list
      return node.elts.map(function (e) {
        return evaluateNode(e, scope, extra);
      });
  }
}

/**
 * `per_layer(x, layer)`: `x[layer]` where the config gives one value per layer (a list, which
 * must name every layer), else `x` (recipe.Scope._per_layer).
 */
function perLayer(node, scope, extra) {
  var value = evaluateNode(node.args[0], scope, extra);
  var layer = evaluateNode(node.args[1], scope, extra);
  if (!Array.isArray(value)) return value;
  var layers = has(scope, "num_hidden_layers") ? pyValue(scope.num_hidden_layers) : null;
  var fail = function () {
    refuse("bad_key", failedKey(node.args[0]));
  };
  if (!isWholeValue(layers) || whole(layers) !== BigInt(value.length)) return fail();
  return pySubscript(value, layer, fail);
}

/** A recipe's expression (a string; a number or boolean stands for itself) over `scope`. */
export function evaluateRecipe(expression, scope, extra) {
  if (typeof expression !== "string") return pyValue(expression);
  var parsed = parsedExpression(expression);
  if (parsed === null) badRecipe(expression);
  return evaluateNode(parsed.node, scope, extra || null);
}

export function readsLayer(expression) {
  if (typeof expression !== "string") return false;
  var parsed = parsedExpression(expression);
  return parsed === null || parsed.layer; // an unreadable one is refused at layer 0
}

/** A count (iteragpu.models.recipe.Scope.count): a whole number, not negative. */
export function recipeCount(expression, scope, extra) {
  var value = evaluateRecipe(expression, scope, extra);
  if (typeof value === "boolean") value = whole(value);
  if (typeof value !== "bigint" || value < 0n) {
    refuse("bad_key", codePoints(pyText(expression), 60));
  }
  return value;
}
