// What the results viewer's pure functions answer, for the Python tests that pin them
// (tests/test_results_validator.py, tests/test_results_estimate.py). Not a test file itself:
//
//   node tests/js/results_driver.mjs verdicts CASES.json   # [path, ...] -> [{ok, problem}, ...]
//   node tests/js/results_driver.mjs estimate CASES.json   # [{path, params, bits, lang,
//                                                          #   messages, symbols}, ...]
//   node tests/js/results_driver.mjs states CASES.json     # [{groups, request}, ...]
//   node tests/js/results_driver.mjs training CASES.json   # [{paths, request}, ...]
// Every answer is JSON on stdout; BigInt values are written as decimal strings.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import results from "../../src/iteragpu/web/results.js";
import sizer from "../../src/iteragpu/web/sizer/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
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

function states(cases) {
  return cases.map((c) => {
    const groups = c.groups.map((g) => ({ ...g, count: BigInt(g.count) }));
    return jsonable(results.groupStates(groups, c.request));
  });
}

// What the page draws for a training result: its step rows, the highest peak of the runs, and
// the estimate per item for `request`.
function training(cases) {
  return cases.map((c) => {
    const read = c.paths.map((path) => results.readResult(new Uint8Array(readFileSync(path)), schema));
    const bad = read.find((r) => !r.ok);
    if (bad) return { error: bad.problem };
    const found = read.map((r) => r.result);
    return jsonable({
      steps: found.map((r) => results.stepRows(r)),
      rows: found.map((r) => results.phaseRows(r).map((row) => row.phase)),
      highest: results.highestPeak(found),
      items: found.map((r) => results.trainItems(r, c.request)),
    });
  });
}

const [mode, file] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(file, "utf-8"));
const modes = { verdicts, estimate, states, training };
const answer = modes[mode] ? modes[mode](cases) : null;
if (answer === null) {
  process.stderr.write("usage: node results_driver.mjs verdicts|estimate|states|training CASES.json\n");
  process.exit(2);
}
process.stdout.write(JSON.stringify(answer));
