// What the results viewer's pure functions answer, for the Python tests that pin them
// (tests/test_results_validator.py, tests/test_results_estimate.py). Not a test file itself:
//
//   node tests/js/results_driver.mjs verdicts CASES.json   # [path, ...] -> [{ok, problem}, ...]
//   node tests/js/results_driver.mjs estimate CASES.json   # [{path, params, bits, lang,
//                                                          #   messages, symbols}, ...]
// Every answer is JSON on stdout; BigInt values are written as decimal strings.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);
const results = require(join(ROOT, "src", "iteragpu", "web", "results.js"));
const sizer = require(join(ROOT, "src", "iteragpu", "web", "sizer.js"));
const schema = results.loadSchema(
  JSON.parse(readFileSync(join(ROOT, "src", "iteragpu", "lab", "result.schema.json"), "utf-8"))
);

function jsonable(value) {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(jsonable);
  if (value !== null && typeof value === "object") {
    if ("n" in value && "d" in value && typeof value.n === "bigint") {
      return value.n.toString() + "/" + value.d.toString();
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonable(v)]));
  }
  return value;
}

function verdicts(paths) {
  return paths.map((path) => {
    const read = results.readResult(new Uint8Array(readFileSync(path)), schema);
    return { ok: read.ok, problem: read.ok ? null : read.problem };
  });
}

function estimate(cases) {
  return cases.map((c) => {
    const read = results.readResult(new Uint8Array(readFileSync(c.path)), schema);
    if (!read.ok) return { error: read.problem };
    const comma = c.symbols.decimal === ",";
    let parameters = null;
    let bits = null;
    if (c.params !== null) {
      const p = sizer.parseCount(c.params, sizer.LIMITS.params, comma);
      const b = sizer.parsePositive(c.bits, sizer.LIMITS.bits, comma);
      if (!p.ok || !b.ok) return { refused: [p.ok ? null : p.reason, b.ok ? null : b.reason] };
      parameters = p.value;
      bits = b.value;
    }
    const comparison = results.compare(read.result, parameters, bits);
    return {
      comparison: jsonable(comparison),
      texts: results.estimateTexts(comparison, c.messages, c.symbols),
    };
  });
}

const [mode, file] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(file, "utf-8"));
const answer = mode === "verdicts" ? verdicts(cases) : mode === "estimate" ? estimate(cases) : null;
if (answer === null) {
  process.stderr.write("usage: node results_driver.mjs verdicts|estimate CASES.json\n");
  process.exit(2);
}
process.stdout.write(JSON.stringify(answer));
