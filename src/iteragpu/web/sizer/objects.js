/*
 * Plain-object helpers shared by the readers: prototype-free records, Python's `in` and
 * dict.get. Mirrors no Python module (what a Python dict gives for free).
 */

/** A plain object without a prototype: `__proto__` or `constructor` keys stay data. */
export function record(base, extra) {
  var out = Object.create(null);
  [base, extra].forEach(function (source) {
    if (source) Object.keys(source).forEach(function (key) {
      out[key] = source[key];
    });
  });
  return out;
}

export function has(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** Python's dict.get: `fallback` (else null) only when the key is absent. */
export function get(object, key, fallback) {
  return has(object, key) ? object[key] : fallback === undefined ? null : fallback;
}
