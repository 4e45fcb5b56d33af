/*
 * Numbers as the page writes them: half-up rounding, grouped digits, bytes, exact decimals;
 * templates filled.
 * Mirrors iteragpu.core.numbers.round_half_up, iteragpu.i18n.numbers and
 * iteragpu.i18n.sheet.fill_template.
 */

import { abs, isWhole } from "./rational.js";
import { has } from "./objects.js";

// ------------------------------------------------------------------------------------------
// Rounding and formatting (iteragpu.core.numbers.round_half_up, iteragpu.i18n.numbers.format_number)
// ------------------------------------------------------------------------------------------

/** |value| x 10^decimals rounded half up, and whether the rounded value is negative. */
export function roundHalfUp(value, decimals) {
  var scale = 10n ** BigInt(decimals);
  var scaled = (2n * abs(value.n) * scale + value.d) / (2n * value.d);
  // Babel prints a rounded negative zero as 0.
  return { negative: value.n < 0n && scaled !== 0n, scaled: scaled };
}

function group(digits, separator) {
  var parts = [];
  for (var end = digits.length; end > 0; end -= 3) {
    parts.unshift(digits.slice(Math.max(0, end - 3), end));
  }
  return parts.join(separator);
}

/** `value` rounded half up to `decimals` places, with the locale's symbols ("#,##0.00"). */
export function formatNumber(value, decimals, symbols) {
  var rounded = roundHalfUp(value, decimals);
  var digits = rounded.scaled.toString();
  var text;
  if (decimals > 0) {
    digits = digits.padStart(decimals + 1, "0");
    text =
      group(digits.slice(0, -decimals), symbols.group) +
      symbols.decimal +
      digits.slice(-decimals);
  } else {
    text = group(digits, symbols.group);
  }
  return (rounded.negative ? symbols.minus : "") + text;
}

/** A byte count: no decimals when whole, else three (sizer_vectors._bytes_text). */
export function formatBytes(value, symbols) {
  return formatNumber(value, isWhole(value) ? 0 : 3, symbols);
}

/** A terminating decimal's text (`0.5`, `2`): bytes per value as a field holds it. */
export function exactDecimal(value) {
  var whole = value.n / value.d;
  var rest = value.n % value.d;
  var digits = "";
  while (rest !== 0n && digits.length < 60) {
    rest *= 10n;
    digits += (rest / value.d).toString();
    rest %= value.d;
  }
  return whole.toString() + (digits ? "." + digits : "");
}

/** `template` with each {name} replaced. */
export function fillTemplate(template, values) {
  return template.replace(/\{([a-z_]+)\}/g, function (whole, name) {
    return has(values, name) ? values[name] : whole;
  });
}
