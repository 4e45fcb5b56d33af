// The sizer reads numbers in its reader's grammar, as iteragpu.core.numbers does: the dot
// everywhere, and the decimal comma where the page's language writes one (Indonesian), a
// separator that may group thousands (1,234 or 1.500 there) refused as ambiguous.
//
// Same inputs as sizer.test.mjs (`nox -s js` sets both):
//   ITERAGPU_SIZER_VECTORS  python -m iteragpu.docs_tools.sizer_vectors
//   ITERAGPU_SIZER_DATA     python docs/hooks.py --sizer-data

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sizer from "../../src/iteragpu/web/sizer/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function readJson(variable) {
  const path = process.env[variable];
  if (!path) throw new Error(`${variable} is not set (see the header of this file, or run nox -s js)`);
  return JSON.parse(readFileSync(path, "utf-8"));
}

const vectors = readJson("ITERAGPU_SIZER_VECTORS");
const data = readJson("ITERAGPU_SIZER_DATA");

// The language of the list whose decimal sign is a comma, and one whose sign is a dot.
const commaLang = Object.keys(data.symbols).find((lang) => data.symbols[lang].decimal === ",");
const dotLang = Object.keys(data.symbols).find((lang) => data.symbols[lang].decimal === ".");

// The start of the Python message of each reason, after the field's name.
const PYTHON_MESSAGES = {
  not_count: "must be a positive whole number",
  not_number: "must be a finite number",
  not_whole: "must be a whole number",
  not_positive: "must be positive",
  negative: "cannot be negative",
  too_large: "must be at most",
  ambiguous_separator: "is ambiguous",
  ambiguous_suffix: "is ambiguous",
  not_token_count: "must be a positive whole number of tokens",
};

function got(result) {
  if (!result.ok) return { ok: false, reason: result.reason };
  const value = typeof result.value === "bigint" ? sizer.rational(result.value) : result.value;
  return { ok: true, value: sizer.exact(value) };
}

test("every decimal-comma parse vector: the same value or reason as iteragpu.core.numbers", () => {
  assert.ok(vectors.parse_decimal_comma.length >= 100);
  const parsers = {
    count: sizer.parseCount,
    positive: sizer.parsePositive,
    non_negative: sizer.parseNonNegative,
  };
  const reasons = new Set();
  for (const vector of vectors.parse_decimal_comma) {
    for (const [name, parse] of Object.entries(parsers)) {
      const result = got(parse(vector.text, undefined, true));
      assert.deepEqual(result, vector[name], `${name}(${JSON.stringify(vector.text)}, comma)`);
      if (!result.ok) reasons.add(result.reason);
    }
  }
  assert.ok(reasons.has("ambiguous_separator"), "no vector reaches the ambiguous separator");
});

test("the page reads its own language's grammar", () => {
  assert.ok(commaLang && dotLang, "a comma language and a dot language in the list");
  assert.equal(sizer.readsDecimalComma({ ...data, lang: commaLang }), true);
  assert.equal(sizer.readsDecimalComma({ ...data, lang: dotLang }), false);
  assert.equal(sizer.readsDecimalComma(data), false); // no page language: the dot only
  const query = { bits: "4,5" };
  assert.equal(sizer.compute(query, { ...data, lang: commaLang }).valid, true);
  const dot = sizer.compute(query, { ...data, lang: dotLang });
  assert.deepEqual([dot.valid, dot.reason], [false, "not_number"]);
});

for (const [index, { query, expected }] of vectors.cases_decimal_comma.entries()) {
  test(`decimal-comma page, vector ${index}: ${JSON.stringify(query)}`, () => {
    const result = sizer.compute(query, { ...data, lang: commaLang });
    const described = sizer.describe(result, data.symbols);
    assert.equal(described.valid, expected.valid, JSON.stringify(described));
    if (expected.valid) {
      assert.deepEqual(described, expected);
      return;
    }
    const message = PYTHON_MESSAGES[described.reason];
    assert.ok(
      message !== undefined &&
        expected.error.startsWith(`${described.field} `) &&
        expected.error.includes(message),
      `JS reports ${described.field}/${described.reason}, Python says ${expected.error}`
    );
  });
}

// Counts of tokens (iteragpu.core.numbers.parse_tokens): `32k` may be 32,000 or 32,768, so a K,
// M, G or T is refused with both readings, which the page says in its own figures; counts of
// parameters keep their decimal suffixes (7B).

function gotTokens(result) {
  const reading = got(result);
  if (!result.ok && result.readings) reading.readings = result.readings.map(sizer.exact);
  return reading;
}

test("every parse vector of a token count: the same value, reason and readings as Python", () => {
  const reasons = new Set();
  for (const [key, comma] of [["parse", false], ["parse_decimal_comma", true]]) {
    for (const vector of vectors[key]) {
      const result = gotTokens(sizer.parseTokens(vector.text, undefined, comma));
      assert.deepEqual(result, vector.tokens, `parseTokens(${JSON.stringify(vector.text)}, ${comma})`);
      if (!result.ok) reasons.add(result.reason);
    }
  }
  for (const reason of ["ambiguous_suffix", "not_token_count", "not_positive"]) {
    assert.ok(reasons.has(reason), `no token vector reaches ${reason}`);
  }
});

test("32k tokens is refused with its two readings; 7B parameters still read", () => {
  const refused = sizer.parseTokens("32k", 10n ** 9n, false);
  assert.equal(refused.reason, "ambiguous_suffix");
  assert.deepEqual(refused.readings.map(sizer.exact), [String(32 * 1000), String(32 * 1024)]);
  assert.deepEqual(sizer.parseTokens("32768", 10n ** 9n, false), { ok: true, value: 32768n });
  assert.deepEqual(sizer.parseCount("7B", 10n ** 15n, false), { ok: true, value: 7n * 10n ** 9n });
  assert.deepEqual(sizer.suffixReadingTexts({ ok: false, reason: "not_count" }, data.symbols.ko), {});
});

for (const [key, lang] of [["token_cases", null], ["token_cases_decimal_comma", commaLang]]) {
  for (const [index, { query, expected, refusal }] of vectors[key].entries()) {
    test(`${key} ${index}: ${JSON.stringify(query)}`, () => {
      const page = lang === null ? data : { ...data, lang };
      const result = sizer.compute(query, page);
      const described = sizer.describe(result, data.symbols);
      assert.equal(described.valid, expected.valid, `${described.field}/${described.reason}`);
      if (expected.valid) {
        assert.equal(refusal, null);
        assert.deepEqual(described, expected);
        return;
      }
      assert.deepEqual([result.field, result.reason], [refusal.field, refusal.reason]);
      const first = result.errors[0];
      if (refusal.readings === undefined) {
        assert.equal(first.readings, undefined);
        return;
      }
      assert.equal(first.suffix, refusal.suffix);
      assert.deepEqual(first.readings.map(sizer.exact), refusal.readings);
      // What the page says, in each language: the readings in that language's figures.
      for (const [code, texts] of Object.entries(refusal.text)) {
        assert.deepEqual(sizer.suffixReadingTexts(first, data.symbols[code]), texts, code);
      }
    });
  }
}

// A reader who groups thousands (16,384 where the dot is the decimal mark; 1.000.000) gets the
// grammar's refusal of a number it cannot read at all (not_token_count, not_count, not_number),
// whose words are about suffixes or the decimal mark: the page rewords it from what was typed
// (page.js digitGrouping), and what it tells the reader to write reads, to the same value.

import { digitGrouping } from "../../src/iteragpu/web/sizer/page.js";

test("a grouping of thousands the grammar refuses is reworded, and what it suggests reads", () => {
  const parsers = {
    count: sizer.parseCount,
    number: (text, maximum, comma) => sizer.parseNumber(text, comma),
  };
  const grouped = [
    ["16,384", false, "comma", "16384"],
    ["1,000,000", false, "comma", "1000000"],
    ["1,234.5", false, "comma", "1234.5"],
    ["1.234,5", false, "dot", "1234.5"],
    ["1.000.000", true, "dot", "1000000"],
    ["1,000,000", true, "comma", "1000000"],
    ["1.234,5", true, "dot", "1234,5"],
  ];
  for (const [text, comma, mark, digits] of grouped) {
    const said = digitGrouping(text, comma);
    assert.deepEqual([said.mark, said.digits], [mark, digits], text);
    // The grammar refuses the grouped text with a reason the page rewords...
    const parse = digits.includes(".") || digits.includes(",") ? parsers.number : parsers.count;
    const refused = parse(text, undefined, comma);
    assert.equal(refused.ok, false, text);
    assert.ok(["not_count", "not_token_count", "not_number"].includes(refused.reason), refused.reason);
    // ...and reads what it suggests, with or without the underscores, to one value.
    const plain = parse(said.digits, undefined, comma);
    const underscored = parse(said.underscored, undefined, comma);
    assert.ok(plain.ok && underscored.ok, `${said.digits} / ${said.underscored}`);
    assert.equal(sizer.exact(sizer.rational(plain.value.n ?? plain.value)),
      sizer.exact(sizer.rational(underscored.value.n ?? underscored.value)));
  }
  // Korean 16,384 tokens: the grammar's reason is the one about suffixes, the page's words not.
  assert.equal(sizer.parseTokens("16,384", 10n ** 9n, false).reason, "not_token_count");
  // Not a grouping: a decimal comma where the dot is the mark, a lone group (ambiguous where a
  // decimal comma is read, a fraction elsewhere), a group of two digits.
  for (const text of ["1,5", "4,5,6", "16,38", "0,384", "16384", "1,2345"]) {
    assert.equal(digitGrouping(text, false), null, text);
  }
  assert.equal(sizer.parseTokens("16,384", 10n ** 9n, true).reason, "ambiguous_separator");
});
