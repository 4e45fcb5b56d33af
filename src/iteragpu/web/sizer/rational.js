/*
 * Exact rationals: {n, d} with BigInt n, d, d > 0, reduced; never a float.
 * Mirrors Python's fractions.Fraction as iteragpu.core uses it.
 */

// ------------------------------------------------------------------------------------------
// Exact rationals: {n, d} with BigInt n, d, d > 0, reduced.
// ------------------------------------------------------------------------------------------

export function abs(x) {
  return x < 0n ? -x : x;
}

function gcd(a, b) {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) {
    var t = a % b;
    a = b;
    b = t;
  }
  return a;
}

export function rational(n, d) {
  if (d === undefined) d = 1n;
  if (d === 0n) throw new RangeError("zero denominator");
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  var g = gcd(n, d);
  return g > 1n ? { n: n / g, d: d / g } : { n: n, d: d };
}

export function add(a, b) {
  return rational(a.n * b.d + b.n * a.d, a.d * b.d);
}

export function mul(a, b) {
  return rational(a.n * b.n, a.d * b.d);
}

export function div(a, b) {
  return rational(a.n * b.d, a.d * b.n);
}

export function cmp(a, b) {
  var left = a.n * b.d;
  var right = b.n * a.d;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function neg(a) {
  return { n: -a.n, d: a.d };
}

export function isWhole(a) {
  return a.d === 1n;
}

/** `n` or `n/d`: the exact form the Python vectors use. */
export function exact(a) {
  return a.d === 1n ? a.n.toString() : a.n.toString() + "/" + a.d.toString();
}
