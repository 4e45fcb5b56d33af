/*
 * The number grammar every input is read with: parseNumber, parseCount, parseTokens,
 * parsePositive, parseNonNegative. Mirrors iteragpu.core.numbers.
 */

import { cmp, isWhole, mul, rational } from "./rational.js";
import { exactDecimal, formatNumber } from "./format.js";

// ------------------------------------------------------------------------------------------
// Parsing, as iteragpu.core.numbers does it. Each parser returns {ok: true, value} or
// {ok: false, reason}; the page holds one message per reason.
// ------------------------------------------------------------------------------------------

// Python's str.isspace() and re's \s: the characters str.strip() removes.
export const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
export const STRIP = new RegExp("^[" + PY_SPACE + "]+|[" + PY_SPACE + "]+$", "g");
// iteragpu.core.numbers.parse_count's count: a number, then an optional K, M, B, G or T.
function countPattern(marks) {
  return new RegExp(
    "^[" + PY_SPACE + "]*([0-9_" + marks + "eE+-]+)[" + PY_SPACE + "]*([KkMmBbGgTt])?[" +
      PY_SPACE + "]*$"
  );
}
const COUNT_SUFFIXES = { K: 10n ** 3n, M: 10n ** 6n, B: 10n ** 9n, G: 10n ** 9n, T: 10n ** 12n };
// iteragpu.core.numbers.parse_tokens' count of tokens: a number, and a K, M, G or T only to
// be refused with its two readings, decimal and binary (32k: 32,000 or 32,768).
function tokenPattern(marks) {
  return new RegExp(
    "^[" + PY_SPACE + "]*([0-9_" + marks + "eE+-]+)[" + PY_SPACE + "]*([KkMmGgTt])?[" +
      PY_SPACE + "]*$"
  );
}
const TOKEN_SUFFIXES = {
  K: [10n ** 3n, 2n ** 10n],
  M: [10n ** 6n, 2n ** 20n],
  G: [10n ** 9n, 2n ** 30n],
  T: [10n ** 12n, 2n ** 40n],
};
// iteragpu.core.numbers' grammar: ASCII digits, `_` only between two digits, no NaN or
// infinity; `marks` are the decimal marks read (`.`, and `,` where the reader writes 13,04).
const DIGITS = "[0-9](?:_?[0-9])*";
function numberPattern(marks) {
  return new RegExp(
    "^([+-])?(?:(" + DIGITS + ")(?:[" + marks + "](" + DIGITS + ")?)?|[" + marks + "](" +
      DIGITS + "))(?:[eE]([+-]?" + DIGITS + "))?$"
  );
}
const GRAMMARS = {
  dot: { count: countPattern("."), tokens: tokenPattern("."), number: numberPattern(".") },
  comma: { count: countPattern(".,"), tokens: tokenPattern(".,"), number: numberPattern(".,") },
};
// A mark after one to three leading digits (not a lone 0) and before exactly three may group
// thousands where a decimal comma is read: refused as ambiguous (1,234 or 1.500 in Indonesian).
const AMBIGUOUS_WHOLE = /^[1-9][0-9]{0,2}$/;
const AMBIGUOUS_FRACTION = /^[0-9]{3}$/;
// Any decimal digit but 0-9 (Python's str.isdecimal()): refused, whatever the field.
const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/u;
// iteragpu.core.numbers.MAX_DIGITS and MAX_EXPONENT: every value lies within 10^-100 and 10^100.
const MAX_DIGITS = 50;
const MAX_EXPONENT = 50n;

function fail(reason) {
  return { ok: false, reason: reason };
}

export function ok(value) {
  return { ok: true, value: value };
}

/**
 * iteragpu.core.numbers.parse_number: the exact value of a number of the shared grammar;
 * with `decimalComma` (parse_number's decimal_comma), `13,04` too.
 */
export function parseNumber(text, decimalComma) {
  text = String(text);
  if (NON_ASCII_DIGIT.test(text)) return fail("non_ascii_digit");
  var grammar = decimalComma ? GRAMMARS.comma : GRAMMARS.dot;
  var match = grammar.number.exec(text.replace(STRIP, ""));
  if (match === null) return fail("not_number");
  var written = match[3] !== undefined ? match[3] : match[4] !== undefined ? match[4] : "";
  var fraction = written.replace(/_/g, "");
  var whole = match[2] !== undefined ? match[2] : "";
  var digits = whole.replace(/_/g, "") + fraction;
  if (digits.length > MAX_DIGITS) return fail("too_many_digits");
  var exponentText = match[5] !== undefined ? match[5].replace(/_/g, "") : "0";
  // Compare the exponent's digits before BigInt(): a 5,000-digit exponent must not reach it.
  var exponentDigits = exponentText.replace(/^[+-]/, "").replace(/^0+/, "");
  if (
    exponentDigits.length > String(MAX_EXPONENT).length ||
    BigInt(exponentDigits || "0") > MAX_EXPONENT
  ) {
    return fail("exponent_out_of_range");
  }
  if (decimalComma && AMBIGUOUS_WHOLE.test(whole) && AMBIGUOUS_FRACTION.test(written)) {
    return fail("ambiguous_separator");
  }
  var scale = BigInt(exponentText) - BigInt(fraction.length);
  var coefficient = BigInt(digits) * (match[1] === "-" ? -1n : 1n);
  return ok(
    scale >= 0n ? rational(coefficient * 10n ** scale) : rational(coefficient, 10n ** -scale)
  );
}

/** A value above `maximum` (a BigInt; undefined for none) fails as too_large. */
function bounded(parsed, maximum) {
  if (maximum !== undefined && cmp(parsed.value, rational(maximum)) > 0) {
    return fail("too_large");
  }
  return parsed;
}

/** iteragpu.core.numbers.parse_count: a positive whole count, `7e9`, `7B`, `1.5B`, `70M`. */
export function parseCount(text, maximum, decimalComma) {
  text = String(text);
  if (NON_ASCII_DIGIT.test(text)) return fail("non_ascii_digit");
  var match = (decimalComma ? GRAMMARS.comma : GRAMMARS.dot).count.exec(text);
  if (match === null) return fail("not_count");
  var parsed = parseNumber(match[1], decimalComma);
  if (!parsed.ok) return parsed;
  var value = parsed.value;
  if (match[2] !== undefined) value = mul(value, rational(COUNT_SUFFIXES[match[2].toUpperCase()]));
  if (!isWhole(value)) return fail("not_whole");
  if (value.n <= 0n) return fail("not_positive");
  var counted = bounded(ok(value), maximum);
  return counted.ok ? ok(value.n) : counted;
}

/**
 * iteragpu.core.numbers.parse_tokens: a positive whole count of tokens without a suffix. A K,
 * M, G or T fails as ambiguous_suffix with the suffix and its two `readings` (decimal, binary).
 */
export function parseTokens(text, maximum, decimalComma) {
  text = String(text);
  if (NON_ASCII_DIGIT.test(text)) return fail("non_ascii_digit");
  var match = (decimalComma ? GRAMMARS.comma : GRAMMARS.dot).tokens.exec(text);
  if (match === null) return fail("not_token_count");
  var parsed = parseNumber(match[1], decimalComma);
  if (!parsed.ok) return parsed;
  var value = parsed.value;
  if (value.n <= 0n) return fail("not_positive");
  if (match[2] !== undefined) {
    var factors = TOKEN_SUFFIXES[match[2].toUpperCase()];
    var refused = fail("ambiguous_suffix");
    refused.suffix = match[2];
    refused.readings = [mul(value, rational(factors[0])), mul(value, rational(factors[1]))];
    return refused;
  }
  if (!isWhole(value)) return fail("not_whole");
  var counted = bounded(ok(value), maximum);
  return counted.ok ? ok(value.n) : counted;
}

/**
 * The fields of an ambiguous_suffix message ({suffix}, {decimal_reading}, {binary_reading},
 * {decimal_factor}, {binary_factor}) written with the page's `symbols`, every digit kept;
 * none for another refusal.
 */
export function suffixReadingTexts(refusal, symbols) {
  if (!refusal.readings) return {};
  var figure = function (value) {
    var text = exactDecimal(value);
    var mark = text.indexOf(".");
    return formatNumber(value, mark < 0 ? 0 : text.length - mark - 1, symbols);
  };
  var factors = TOKEN_SUFFIXES[refusal.suffix.toUpperCase()];
  return {
    suffix: refusal.suffix,
    decimal_reading: figure(refusal.readings[0]),
    binary_reading: figure(refusal.readings[1]),
    decimal_factor: figure(rational(factors[0])),
    binary_factor: figure(rational(factors[1])),
  };
}

/** iteragpu.core.numbers.parse_positive: bits, bytes per value. */
export function parsePositive(text, maximum, decimalComma) {
  var parsed = parseNumber(text, decimalComma);
  if (!parsed.ok) return parsed;
  return parsed.value.n > 0n ? bounded(parsed, maximum) : fail("not_positive");
}

/** iteragpu.core.numbers.parse_non_negative: a reserve. */
export function parseNonNegative(text, maximum, decimalComma) {
  var parsed = parseNumber(text, decimalComma);
  if (!parsed.ok) return parsed;
  return parsed.value.n >= 0n ? bounded(parsed, maximum) : fail("negative");
}

/**
 * Whether the page's reader writes a decimal comma (`data.lang`'s decimal symbol, as Babel
 * gives it): the numbers typed on that page may then use one (iteragpu.cli.language).
 */
export function readsDecimalComma(data) {
  var symbols = data.lang && data.symbols ? data.symbols[data.lang] : undefined;
  return symbols !== undefined && symbols.decimal === ",";
}
