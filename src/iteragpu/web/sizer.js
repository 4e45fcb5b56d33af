/*
 * IteraGPU sizer: the sizing guide's arithmetic in the browser.
 *
 * Plain JavaScript, no dependency, no network. Loaded with `require()` in node (module.exports)
 * and with a <script> tag in the browser (window.IteraGPUSizer), where it starts itself on a page
 * that holds <script type="application/json" id="sizer-data">.
 *
 * Pure part: exact arithmetic on BigInt rationals, never floats, matching the Python package:
 *   parsing       iteragpu.core.numbers (parse_number, parse_count, parse_positive,
 *                 parse_non_negative): the grammar shared by the CLI, the lab and this page
 *   weights       params x bits / 8, plus reserve x 2^30           (iteragpu.core.weights)
 *   KV cache      2 x layers x kv_heads x head_dim x min(tokens, window)
 *                 x bytes_per_value x sequences                      (iteragpu.core.kv_cache)
 *   rounding      half up, away from zero             (iteragpu.core.numbers.round_half_up)
 *   formatting    grouped, with the locale's symbols given by Babel  (iteragpu.i18n.numbers)
 *   short list    statuses, reasons and rank of iteragpu.gpus.shortlist.shortlist(need_gib, days)
 *   config.json   iteragpu.models.config and .parameters: the families described by hand, and
 *                 those described as data (iteragpu.models.recipe; the page's `families`),
 *                 whose expressions, a subset of Python, are evaluated here on BigInt, and
 *                 the multimodal wrappers' vision towers and projectors (iteragpu.models.towers;
 *                 the page's `wrappers` and `towers`), counted by the same evaluator
 *
 * DOM part: reads the state from the URL query, fills the form, recomputes on every input and
 * keeps the URL in step (history.replaceState). Every human text (labels, statuses, messages,
 * checklists) lives in the page, in the page's language; this file holds none.
 */
(function (root, factory) {
  "use strict";
  var api = factory();
  if (typeof module === "object" && module && module.exports) {
    module.exports = api;
  } else {
    root.IteraGPUSizer = api;
    api.autostart(root);
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  // ------------------------------------------------------------------------------------------
  // Exact rationals: {n, d} with BigInt n, d, d > 0, reduced.
  // ------------------------------------------------------------------------------------------

  function abs(x) {
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

  function rational(n, d) {
    if (d === undefined) d = 1n;
    if (d === 0n) throw new RangeError("zero denominator");
    if (d < 0n) {
      n = -n;
      d = -d;
    }
    var g = gcd(n, d);
    return g > 1n ? { n: n / g, d: d / g } : { n: n, d: d };
  }

  function add(a, b) {
    return rational(a.n * b.d + b.n * a.d, a.d * b.d);
  }

  function mul(a, b) {
    return rational(a.n * b.n, a.d * b.d);
  }

  function div(a, b) {
    return rational(a.n * b.d, a.d * b.n);
  }

  function cmp(a, b) {
    var left = a.n * b.d;
    var right = b.n * a.d;
    return left < right ? -1 : left > right ? 1 : 0;
  }

  function neg(a) {
    return { n: -a.n, d: a.d };
  }

  function isWhole(a) {
    return a.d === 1n;
  }

  /** `n` or `n/d`: the exact form the Python vectors use. */
  function exact(a) {
    return a.d === 1n ? a.n.toString() : a.n.toString() + "/" + a.d.toString();
  }

  var BYTES_PER_GIB = rational(1n << 30n);
  var BYTES_PER_GB = rational(10n ** 9n);
  var K_AND_V = 2n;
  // Below this many bits per value a format is a quantized one (iteragpu.core.weights).
  var QUANTIZED_BELOW_BITS = rational(16n);

  // ------------------------------------------------------------------------------------------
  // Parsing, as iteragpu.core.numbers does it. Each parser returns {ok: true, value} or
  // {ok: false, reason}; the page holds one message per reason.
  // ------------------------------------------------------------------------------------------

  // Python's str.isspace() and re's \s: the characters str.strip() removes.
  var PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var STRIP = new RegExp("^[" + PY_SPACE + "]+|[" + PY_SPACE + "]+$", "g");
  // iteragpu.core.numbers.parse_count's count: a number, then an optional K, M, B, G or T.
  function countPattern(marks) {
    return new RegExp(
      "^[" + PY_SPACE + "]*([0-9_" + marks + "eE+-]+)[" + PY_SPACE + "]*([KkMmBbGgTt])?[" +
        PY_SPACE + "]*$"
    );
  }
  var COUNT_SUFFIXES = { K: 10n ** 3n, M: 10n ** 6n, B: 10n ** 9n, G: 10n ** 9n, T: 10n ** 12n };
  // iteragpu.core.numbers.parse_tokens' count of tokens: a number, and a K, M, G or T only to
  // be refused with its two readings, decimal and binary (32k: 32,000 or 32,768).
  function tokenPattern(marks) {
    return new RegExp(
      "^[" + PY_SPACE + "]*([0-9_" + marks + "eE+-]+)[" + PY_SPACE + "]*([KkMmGgTt])?[" +
        PY_SPACE + "]*$"
    );
  }
  var TOKEN_SUFFIXES = {
    K: [10n ** 3n, 2n ** 10n],
    M: [10n ** 6n, 2n ** 20n],
    G: [10n ** 9n, 2n ** 30n],
    T: [10n ** 12n, 2n ** 40n],
  };
  // iteragpu.core.numbers' grammar: ASCII digits, `_` only between two digits, no NaN or
  // infinity; `marks` are the decimal marks read (`.`, and `,` where the reader writes 13,04).
  var DIGITS = "[0-9](?:_?[0-9])*";
  function numberPattern(marks) {
    return new RegExp(
      "^([+-])?(?:(" + DIGITS + ")(?:[" + marks + "](" + DIGITS + ")?)?|[" + marks + "](" +
        DIGITS + "))(?:[eE]([+-]?" + DIGITS + "))?$"
    );
  }
  var GRAMMARS = {
    dot: { count: countPattern("."), tokens: tokenPattern("."), number: numberPattern(".") },
    comma: { count: countPattern(".,"), tokens: tokenPattern(".,"), number: numberPattern(".,") },
  };
  // A mark after one to three leading digits (not a lone 0) and before exactly three may group
  // thousands where a decimal comma is read: refused as ambiguous (1,234 or 1.500 in Indonesian).
  var AMBIGUOUS_WHOLE = /^[1-9][0-9]{0,2}$/;
  var AMBIGUOUS_FRACTION = /^[0-9]{3}$/;
  // Any decimal digit but 0-9 (Python's str.isdecimal()): refused, whatever the field.
  var NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/u;
  // iteragpu.core.numbers.MAX_DIGITS and MAX_EXPONENT: every value lies within 10^-100 and 10^100.
  var MAX_DIGITS = 50;
  var MAX_EXPONENT = 50n;

  function fail(reason) {
    return { ok: false, reason: reason };
  }

  function ok(value) {
    return { ok: true, value: value };
  }

  /**
   * iteragpu.core.numbers.parse_number: the exact value of a number of the shared grammar;
   * with `decimalComma` (parse_number's decimal_comma), `13,04` too.
   */
  function parseNumber(text, decimalComma) {
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
  function parseCount(text, maximum, decimalComma) {
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
  function parseTokens(text, maximum, decimalComma) {
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
  function suffixReadingTexts(refusal, symbols) {
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
  function parsePositive(text, maximum, decimalComma) {
    var parsed = parseNumber(text, decimalComma);
    if (!parsed.ok) return parsed;
    return parsed.value.n > 0n ? bounded(parsed, maximum) : fail("not_positive");
  }

  /** iteragpu.core.numbers.parse_non_negative: a reserve. */
  function parseNonNegative(text, maximum, decimalComma) {
    var parsed = parseNumber(text, decimalComma);
    if (!parsed.ok) return parsed;
    return parsed.value.n >= 0n ? bounded(parsed, maximum) : fail("negative");
  }

  /**
   * Whether the page's reader writes a decimal comma (`data.lang`'s decimal symbol, as Babel
   * gives it): the numbers typed on that page may then use one (iteragpu.cli.language).
   */
  function readsDecimalComma(data) {
    var symbols = data.lang && data.symbols ? data.symbols[data.lang] : undefined;
    return symbols !== undefined && symbols.decimal === ",";
  }

  // ------------------------------------------------------------------------------------------
  // Arithmetic
  // ------------------------------------------------------------------------------------------

  /** Dense weights in bytes: parameters x bits / 8. */
  function weightsBytes(parameters, bits) {
    return mul(rational(parameters), div(bits, rational(8n)));
  }

  /** Bytes in `gib` GiB. */
  function gibToBytes(gib) {
    return mul(gib, BYTES_PER_GIB);
  }

  function gib(bytes) {
    return div(bytes, BYTES_PER_GIB);
  }

  /** KV cache bytes of a uniform dense cache; `window` null keeps every token. */
  function kvCacheBytes(spec) {
    var kept = spec.window === null || spec.window === undefined
      ? spec.tokens
      : spec.tokens < spec.window ? spec.tokens : spec.window;
    var count = K_AND_V * spec.layers * spec.kvHeads * spec.headDim * kept * spec.sequences;
    return mul(rational(count), spec.bytesPerValue);
  }

  /**
   * The KV cache per layer kind, as iteragpu.models.kv sizes it: full layers hold every token;
   * windowed ones hold min(tokens, window) in a static cache, and every prompt token at a
   * dynamic cache's peak (Transformers keeps the prompt's storage until the first decoding
   * step). `values` are the parsed fields: `kv_values` (null: 2 x kv_heads x head_dim),
   * `window` and `windowed_layers` (null: every layer when a window is given).
   */
  function kvByKind(values, cache) {
    var perLayer = values.kv_values !== null && values.kv_values !== undefined
      ? values.kv_values
      : K_AND_V * values.kv_heads * values.head_dim;
    var window = values.window === undefined ? null : values.window;
    var windowed = window === null ? 0n
      : values.windowed_layers === null || values.windowed_layers === undefined
        ? values.layers
        : values.windowed_layers;
    var tokens = values.tokens;
    var kinds = [
      { kind: FULL, count: values.layers - windowed, window: null, held: tokens },
      {
        kind: SLIDING,
        count: windowed,
        window: window,
        held: cache === "static" && window !== null && window < tokens ? window : tokens,
      },
    ];
    var perValue = values.bytes_per_value;
    var groups = [];
    var total = rational(0n);
    kinds.forEach(function (k) {
      if (k.count === 0n) return;
      var bytes = mul(rational(k.count * perLayer * k.held * values.sequences), perValue);
      total = add(total, bytes);
      groups.push({
        kind: k.kind, count: k.count, window: k.window, tokensHeld: k.held, bytes: bytes,
      });
    });
    return {
      groups: groups,
      bytes: total,
      perToken: mul(rational(values.layers * perLayer), perValue),
    };
  }

  // ------------------------------------------------------------------------------------------
  // Rounding and formatting (iteragpu.core.numbers.round_half_up, iteragpu.i18n.numbers.format_number)
  // ------------------------------------------------------------------------------------------

  /** |value| x 10^decimals rounded half up, and whether the rounded value is negative. */
  function roundHalfUp(value, decimals) {
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
  function formatNumber(value, decimals, symbols) {
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
  function formatBytes(value, symbols) {
    return formatNumber(value, isWhole(value) ? 0 : 3, symbols);
  }

  // ------------------------------------------------------------------------------------------
  // Catalog and short list (iteragpu.gpus.catalog, iteragpu.gpus.shortlist)
  // ------------------------------------------------------------------------------------------

  var STATUS_ORDER = { fit: 0, check_needed: 1, excluded: 2 };

  function catalogValue(raw) {
    var parsed = parseNumber(String(raw));
    if (!parsed.ok) throw new Error("catalog: not a number: " + raw);
    return parsed.value;
  }

  /**
   * The cards of gpu_catalog.json with exact numbers: the nominal figure read as decimal GB (a
   * convention, not the card's memory) and the bytes a device declares, with the rounding of
   * the tool that printed them (iteragpu.gpus.catalog.DeclaredMemory.bound_bytes).
   */
  function loadCatalog(raw) {
    return raw.cards.map(function (card) {
      var nominalGb = card.nominal_memory_gb === null ? null : catalogValue(card.nominal_memory_gb);
      var declared =
        card.declared_memory_bytes === null ? null : catalogValue(card.declared_memory_bytes);
      return {
        id: card.id,
        name: card.name,
        nominalGb: nominalGb,
        nominalBytes: nominalGb === null ? null : mul(nominalGb, BYTES_PER_GB),
        // The most generous reading of "N GB", N GiB: no card sold as N GB holds more.
        nominalBinaryBytes: nominalGb === null ? null : mul(nominalGb, BYTES_PER_GIB),
        declaredBytes: declared,
        declaredBoundBytes:
          declared === null
            ? null
            : add(declared, catalogValue(card.declared_memory_source.resolution_bytes)),
        packages: card.packages.map(function (p) {
          return {
            cards: BigInt(p.cards),
            days: BigInt(p.days),
            price: catalogValue(p.price),
            currency: p.currency,
          };
        }),
      };
    });
  }

  function worst(statuses) {
    return statuses.reduce(function (a, b) {
      return STATUS_ORDER[b] > STATUS_ORDER[a] ? b : a;
    });
  }

  /**
   * Memory without a lab run (iteragpu.gpus.shortlist): excluded above the declared capacity
   * and its rounding, or, without one, above the nominal figure read in binary units (N GB as
   * N GiB, its most generous reading); otherwise check_needed, with the reason the nominal figure gives. Below
   * that reading the nominal figure neither excludes nor proves.
   */
  function memoryWithoutEvidence(card, needBytes) {
    if (card.declaredBoundBytes !== null && cmp(needBytes, card.declaredBoundBytes) > 0) {
      return { status: "excluded", reason: "declared_below_need" };
    }
    var binary = card.nominalBinaryBytes;
    if (card.declaredBytes === null && binary !== null && cmp(needBytes, binary) > 0) {
      return { status: "excluded", reason: "above_nominal_binary" };
    }
    if (card.nominalBytes === null) return { status: "check_needed", reason: "nominal_unknown" };
    if (cmp(needBytes, card.nominalBytes) <= 0) {
      return { status: "check_needed", reason: "nominal_not_proof" };
    }
    return {
      status: "check_needed",
      reason:
        card.declaredBytes === null
          ? "above_nominal_declared_unknown"
          : "above_nominal_within_declared",
    };
  }

  /** floor(a) as a whole number of bytes (BigInt). */
  function floorBytes(a) {
    var q = a.n / a.d;
    return a.n < 0n && q * a.d !== a.n ? q - 1n : q;
  }

  /**
   * The margin on paper (iteragpu.gpus.shortlist._paper_margin): the declared capacity minus
   * the need, else the nominal figure read as decimal GB minus the need, rounded down to a
   * byte; with its basis. Null when the catalogue has neither figure.
   */
  function paperMargin(card, needBytes) {
    if (card.declaredBytes !== null) {
      return { bytes: floorBytes(add(card.declaredBytes, neg(needBytes))), basis: "declared" };
    }
    if (card.nominalBytes !== null) {
      return { bytes: floorBytes(add(card.nominalBytes, neg(needBytes))), basis: "nominal" };
    }
    return { bytes: null, basis: null };
  }

  /** Review order of candidates to check: cost (no package last), then margin on paper. */
  function reviewCompare(a, b) {
    if ((a.cost === null) !== (b.cost === null)) return a.cost === null ? 1 : -1;
    if (a.cost !== null) {
      var byCost = cmp(a.cost, b.cost);
      if (byCost !== 0) return byCost;
    }
    if ((a.paperMarginBytes === null) !== (b.paperMarginBytes === null)) {
      return a.paperMarginBytes === null ? 1 : -1;
    }
    if (a.paperMarginBytes === null || a.paperMarginBytes === b.paperMarginBytes) return 0;
    return a.paperMarginBytes > b.paperMarginBytes ? -1 : 1;
  }

  /**
   * Every card for a need of `needBytes` over `days` on `cards` cards. Package is `fit` when
   * the catalog lists one for the same days and cards, else `check_needed`; the overall status
   * is the worst. The page takes no lab result, so memory is never `fit` and, as in
   * iteragpu.gpus.shortlist, a candidate not fit on every requirement gets no rank: those to
   * review come in review order (cost, then margin on paper; ties in catalogue order, as
   * Array.prototype.sort is stable), which is not a rank, then the excluded ones.
   */
  function shortlist(catalog, needBytes, days, cards) {
    if (cards === undefined) cards = 1n;
    var candidates = catalog.map(function (card) {
      var pkg = null;
      for (var i = 0; i < card.packages.length; i += 1) {
        if (card.packages[i].days === days && card.packages[i].cards === cards) {
          pkg = card.packages[i];
          break;
        }
      }
      var memory = memoryWithoutEvidence(card, needBytes);
      var requirements = { memory: memory.status, package: pkg ? "fit" : "check_needed" };
      var margin = paperMargin(card, needBytes);
      return {
        id: card.id,
        name: card.name,
        nominalGb: card.nominalGb,
        declaredGib: card.declaredBytes === null ? null : gib(card.declaredBytes),
        package: pkg,
        cost: pkg ? pkg.price : null,
        currency: pkg ? pkg.currency : null,
        requirements: requirements,
        reasons: { memory: memory.reason, package: pkg ? "package_listed" : "package_missing" },
        status: worst([requirements.memory, requirements.package]),
        rank: null,
        paperMarginBytes: margin.bytes,
        paperBasis: margin.basis,
      };
    });
    var excluded = function (c) {
      return c.status === "excluded";
    };
    return candidates
      .filter(function (c) {
        return !excluded(c);
      })
      .sort(reviewCompare)
      .concat(candidates.filter(excluded));
  }

  // ------------------------------------------------------------------------------------------
  // A model's config.json, read in the page (never sent anywhere), as iteragpu.models.config
  // and iteragpu.models.parameters read it for `iteragpu model CONFIG`: each failure is a
  // reason code (the Python error's `reason`) and the key it names, which the page words.
  // ------------------------------------------------------------------------------------------

  // Published configs are a few KiB; a pasted text beyond this is refused before it is read.
  var CONFIG_MAX_CHARS = 1 << 20;
  var FULL = "full_attention";
  var SLIDING = "sliding_attention";
  // Transformers 5.24's other cache layer types (iteragpu.models.config), where a family's
  // recipe describes them: chunked attention (a sliding cache whose window is the chunk), layers
  // that keep a state and no KV, both in one layer, and a layer that holds nothing.
  var CHUNKED = "chunked_attention";
  var LINEAR = "linear_attention";
  var CONV = "conv";
  var HYBRID = "hybrid";
  var HYBRID_SLIDING = "hybrid_sliding";
  var DUMMY = "dummy";
  var SLIDING_KINDS = [SLIDING, HYBRID_SLIDING];
  var STATE_ONLY_KINDS = [LINEAR, CONV, DUMMY];
  // The old names Transformers renames in a config's layer_types (config.LEGACY_KINDS).
  var LEGACY_KINDS = record({ mamba: LINEAR, attention: FULL });
  var LAYOUT_PER_HEAD = "per_head";
  var MLA_LATENT = "mla_latent";
  var MLA_PER_HEAD = "mla_per_head";
  // A config's counts above this describe no model (iteragpu.models.config._Reader).
  var CONFIG_MAX_VALUE = 1e12;
  // The most decoder layers a config may declare (iteragpu.models.config.MAX_LAYERS).
  var CONFIG_MAX_LAYERS = 100000n;

  /** A plain object without a prototype: `__proto__` or `constructor` keys stay data. */
  function record(base, extra) {
    var out = Object.create(null);
    [base, extra].forEach(function (source) {
      if (source) Object.keys(source).forEach(function (key) {
        out[key] = source[key];
      });
    });
    return out;
  }

  function has(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  /** Python's dict.get: `fallback` (else null) only when the key is absent. */
  function get(object, key, fallback) {
    return has(object, key) ? object[key] : fallback === undefined ? null : fallback;
  }

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value) &&
      !isFloat(value) && !isBigInteger(value);
  }

  // Transformers 5.24's defaults per family, for the keys a saved config may omit.
  var LLAMA = {
    num_key_value_heads: null,
    head_dim: null,
    tie_word_embeddings: false,
    attention_bias: false,
    mlp_bias: false,
    sliding_window: null,
  };
  var QWEN2 = record(LLAMA, { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28 });
  var GEMMA = record(LLAMA, { num_key_value_heads: 16, head_dim: 256, tie_word_embeddings: true });
  var DEEPSEEK = record(LLAMA, {
    first_k_dense_replace: 0,
    moe_layer_freq: 1,
    kv_lora_rank: 512,
    q_lora_rank: 1536,
    qk_nope_head_dim: 128,
    qk_rope_head_dim: 64,
    v_head_dim: 128,
    n_routed_experts: 64,
    n_shared_experts: 2,
    moe_intermediate_size: 1407,
  });

  function family(defaults, normsPerLayer, flags) {
    flags = flags || {};
    return {
      defaults: record(defaults),
      norms: BigInt(normsPerLayer || 2),
      qkNorm: !!flags.qkNorm,
      qkvBias: !!flags.qkvBias,
      mla: !!flags.mla,
    };
  }

  var FAMILIES = record({
    llama: family(LLAMA),
    mistral: family(record(LLAMA, { sliding_window: 4096 })),
    qwen2: family(QWEN2, 2, { qkvBias: true }),
    qwen3: family(record(QWEN2, { num_key_value_heads: 32, head_dim: 128 }), 2, { qkNorm: true }),
    gemma: family(GEMMA),
    gemma2: family(record(GEMMA, { num_key_value_heads: 8, sliding_window: 4096 }), 4),
    gemma3_text: family(
      record(GEMMA, { num_key_value_heads: 4, sliding_window: 4096 }), 4, { qkNorm: true }
    ),
    deepseek_v2: family(DEEPSEEK, 2, { mla: true }),
    deepseek_v3: family(
      record(DEEPSEEK, {
        num_key_value_heads: 128,
        first_k_dense_replace: 3,
        n_routed_experts: 256,
        n_shared_experts: 1,
        moe_intermediate_size: 2048,
      }),
      2,
      { mla: true }
    ),
  });
  var TEXT_MODEL_TYPES = record({
    gemma3: "gemma3_text", llava: "llama", mistral3: "mistral", llama4: "llama4_text",
  });
  // Families whose layers keep a recurrent state, not a KV cache: refused, never guessed,
  // unless a recipe of the page's data describes their states.
  var STATE_FAMILIES = [
    "mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "falcon_h1", "bamba",
    "nemotron_h", "granitemoehybrid", "recurrent_gemma", "rwkv", "qwen3_next", "qwen3_5",
    "qwen3_5_moe", "kimi_linear", "minimax", "lfm2", "plamo2", "xlstm",
  ];
  var STATE_KEYS = ["ssm_cfg", "mamba_d_state", "layers_block_type", "linear_attn_config"];
  var DTYPE_BITS = record({
    float64: 64, float32: 32, float16: 16, bfloat16: 16, float8_e4m3fn: 8, float8_e5m2: 8,
    int8: 8, int4: 4,
  });
  var DTYPE_ALIASES = record({
    fp64: "float64", fp32: "float32", fp16: "float16", half: "float16", bf16: "bfloat16",
    fp8: "float8_e4m3fn", fp8_e4m3: "float8_e4m3fn", fp8_e5m2: "float8_e5m2",
  });

  // Python's json reads `6.0`, `1e3`, NaN and Infinity as floats, which no count accepts;
  // JSON.parse reads `6.0` as 6. Such literals outside strings become a marker object first.
  var FLOAT_KEY = "\u0000float";
  // An integer beyond 2^53, which JSON.parse would round, is kept as its digits (a marker object
  // too): Python's json reads it exactly, and a family's recipe may compute with it.
  var INTEGER_KEY = "\u0000integer";
  var MAX_SAFE_INTEGER = 9007199254740991n;
  var JSON_TOKEN = /"(?:[^"\\]|\\[\s\S])*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|-?Infinity|NaN/g;
  var JSON_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
  var FLOAT_ZERO = /^-?0(?:\.0+)?(?:[eE][+-]?[0-9]+)?$/;

  function isFloat(value) {
    return value !== null && typeof value === "object" && has(value, FLOAT_KEY);
  }

  function isBigInteger(value) {
    return value !== null && typeof value === "object" && has(value, INTEGER_KEY);
  }

  /** Python's truthiness of a JSON value. */
  function truthy(value) {
    if (isFloat(value)) return !FLOAT_ZERO.test(value[FLOAT_KEY]); // NaN is true, as in Python
    if (Array.isArray(value)) return value.length > 0;
    if (value !== null && typeof value === "object") return Object.keys(value).length > 0;
    return !!value;
  }

  function ConfigFailure(reason, key) {
    this.reason = reason;
    this.key = key === undefined ? null : key;
  }

  function refuse(reason, key) {
    throw new ConfigFailure(reason, key);
  }

  function readJson(text) {
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
  function Reader(raw) {
    this.raw = raw;
  }

  Reader.prototype.positive = function (key) {
    var value = get(this.raw, key);
    if (value === null) refuse("missing_key", key);
    return this.positiveValue(key, value);
  };

  Reader.prototype.optionalPositive = function (key) {
    var value = get(this.raw, key);
    return value === null ? null : this.positiveValue(key, value);
  };

  Reader.prototype.nonNegative = function (key) {
    return this.nonNegativeValue(key, get(this.raw, key));
  };

  Reader.prototype.positiveValue = function (key, value) {
    var number = this.nonNegativeValue(key, value);
    if (number === 0n) refuse("bad_key", key);
    return number;
  };

  Reader.prototype.nonNegativeValue = function (key, value) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) refuse("bad_key", key);
    if (value > CONFIG_MAX_VALUE) refuse("bad_key", key);
    return BigInt(value);
  };

  Reader.prototype.boolean = function (key) {
    return this.booleanValue(key, get(this.raw, key, false));
  };

  Reader.prototype.booleanValue = function (key, value) {
    if (value === null) return false;
    if (typeof value !== "boolean") refuse("bad_key", key);
    return value;
  };

  function refuseState(config, families) {
    var modelType = get(config, "model_type");
    if (typeof modelType === "string" && !has(FAMILIES, modelType) &&
      recipeOf(families, modelType) !== null) {
      return; // its recipe describes its states
    }
    var keys = STATE_KEYS.filter(function (key) {
      return has(config, key);
    });
    var stateFamily = typeof modelType === "string" && STATE_FAMILIES.indexOf(modelType) >= 0;
    if (stateFamily || keys.length > 0) refuse("recurrent_state", stateFamily ? modelType : keys[0]);
  }

  /** The kinds whose cache the reader models for the family (config._allowed_kinds). */
  function allowedKinds(recipe) {
    var allowed = [FULL, SLIDING];
    if (recipe === null) return allowed;
    allowed = allowed.concat(Object.keys(section(recipe, "states")), [DUMMY]);
    if (get(recipe, "chunk") !== null) allowed.push(CHUNKED);
    return allowed;
  }

  function refuseUnknownKinds(kinds, allowed) {
    var seen = record();
    kinds.forEach(function (k) {
      seen[k] = true;
    });
    var unknown = Object.keys(seen).filter(function (k) {
      return allowed.indexOf(k) < 0;
    }).sort();
    if (unknown.length > 0) refuse("unknown_layer_kind", unknown[0]);
  }

  /** A positive whole value of a recipe's expression, as _Reader.positive_value reads it. */
  function positiveRecipeValue(read, key, value) {
    if (typeof value !== "bigint") return read.positiveValue(key, value); // refused
    if (value <= 0n || value > 1000000000000n) refuse("bad_key", key);
    return value;
  }

  /**
   * Each layer's kind, the sliding window and the chunked layers' window
   * (iteragpu.models.config._layer_kinds): `kinds`, one per layer; `sliding`, the layers the
   * page's windowed field counts (sliding, hybrid sliding and chunked); `window`, the sliding
   * window, else the chunk. `recipe` is the family's for a family described only as data.
   */
  function layerKinds(read, modelType, layers, recipe) {
    var qwen = modelType === "qwen2" || modelType === "qwen3";
    var window = recipe !== null && get(recipe, "window") !== null
      ? recipeWindow(recipe, read)
      : read.optionalPositive("sliding_window");
    if (qwen && !read.boolean("use_sliding_window")) window = null;
    var allowed = allowedKinds(recipe);
    var declared = get(read.raw, "layer_types");
    var kinds = [];
    var i;
    if (declared !== null) {
      var names = Array.isArray(declared) && declared.every(function (k) {
        return typeof k === "string";
      });
      if (!names || BigInt(declared.length) !== layers) refuse("bad_key", "layer_types");
      kinds = declared.map(function (k) {
        return has(LEGACY_KINDS, k) ? LEGACY_KINDS[k] : k;
      });
      refuseUnknownKinds(kinds, allowed);
    } else if (modelType === "gemma2") {
      for (i = 0n; i < layers; i++) kinds.push((i + 1n) % 2n ? SLIDING : FULL);
    } else if (modelType === "gemma3_text") {
      var pattern = read.positiveValue(
        "sliding_window_pattern",
        has(read.raw, "sliding_window_pattern")
          ? read.raw.sliding_window_pattern
          : get(read.raw, "_sliding_window_pattern", 6)
      );
      for (i = 0n; i < layers; i++) kinds.push((i + 1n) % pattern ? SLIDING : FULL);
    } else if (qwen) {
      var first = read.nonNegative("max_window_layers");
      for (i = 0n; i < layers; i++) kinds.push(window !== null && i >= first ? SLIDING : FULL);
    } else if (recipe !== null) {
      kinds = recipeLayerKinds(recipe, read.raw, layers);
      refuseUnknownKinds(kinds, allowed);
    } else {
      for (i = 0n; i < layers; i++) kinds.push(window !== null ? SLIDING : FULL);
    }
    var shared = recipe !== null ? get(recipe, "shared_kv") : null;
    if (shared !== null) {
      // A layer that reads another layer's KV holds none, whatever layer_types says.
      kinds = kinds.map(function (k, index) {
        return truthy(evaluateRecipe(shared, read.raw, record({ layer: BigInt(index) })))
          ? DUMMY : k;
      });
    }
    var counted = record();
    kinds.forEach(function (k) {
      counted[k] = (counted[k] || 0n) + 1n;
    });
    var slides = SLIDING_KINDS.some(function (k) {
      return has(counted, k);
    });
    if (slides && window === null) refuse("no_window");
    var chunk = null;
    if (has(counted, CHUNKED)) {
      var rule = recipe !== null ? get(recipe, "chunk") : null;
      var value = evaluateRecipe(rule, read.raw, null);
      if (value === null) refuse("no_window");
      chunk = positiveRecipeValue(read, "attention_chunk_size", value);
    }
    window = slides ? window : null;
    // The page models one window: a config whose sliding and chunked layers keep different
    // windows is refused rather than sized with one of them (no family has both).
    if (window !== null && chunk !== null && window !== chunk) refuse("two_windows");
    var windowed = (counted[SLIDING] || 0n) + (counted[HYBRID_SLIDING] || 0n) +
      (counted[CHUNKED] || 0n);
    var stateOnly = STATE_ONLY_KINDS.reduce(function (sum, k) {
      return sum + (counted[k] || 0n);
    }, 0n);
    return {
      sliding: windowed,
      kvLayers: layers - stateOnly,
      window: window,
      chunk: chunk,
      firstKind: declared !== null ? kinds[0] : null,
      kinds: kinds,
      counted: counted,
    };
  }

  function readMla(read, text, byHand) {
    if (!byHand) {
      // A recipe family's latent attention: only the cache's sizes are read (its recipe counts
      // the parameters, the experts included).
      return {
        kvLoraRank: read.positive("kv_lora_rank"),
        qLoraRank: read.optionalPositive("q_lora_rank"),
        nope: read.positive("qk_nope_head_dim"),
        rope: read.positive("qk_rope_head_dim"),
        valueDim: read.positive("v_head_dim"),
        routed: 0n,
        shared: 0n,
        moeWidth: 0n,
        firstDense: 0n,
        frequency: 1n,
        mtpLayers: 0n,
      };
    }
    var mtp = has(text, "num_nextn_predict_layers")
      ? text.num_nextn_predict_layers
      : get(text, "num_mtp_layers", 0);
    return {
      kvLoraRank: read.positive("kv_lora_rank"),
      qLoraRank: read.optionalPositive("q_lora_rank"),
      nope: read.positive("qk_nope_head_dim"),
      rope: read.positive("qk_rope_head_dim"),
      valueDim: read.positive("v_head_dim"),
      routed: read.positive("n_routed_experts"),
      shared: read.nonNegative("n_shared_experts"),
      moeWidth: read.positive("moe_intermediate_size"),
      firstDense: read.nonNegative("first_k_dense_replace"),
      frequency: read.positive("moe_layer_freq"),
      mtpLayers: read.nonNegativeValue("num_nextn_predict_layers", truthy(mtp) ? mtp : 0),
    };
  }

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

  var EXPRESSION_TOKEN =
    /[ \t\r\n]*(?:([0-9](?:_?[0-9])*)|([A-Za-z_][A-Za-z0-9_]*)|('(?:[^'\\\n]|\\[\s\S])*'|"(?:[^"\\\n]|\\[\s\S])*")|(\/\/|==|!=|<=|>=|[-+*%<>()[\],]))/y;
  var EXPRESSION_KEYWORDS = ["and", "or", "not", "if", "else", "is", "in", "None", "True", "False"];
  var STRING_ESCAPES = record({
    n: "\n", t: "\t", r: "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"',
  });
  // ast.unparse's precedences (Python's _Precedence), for the parentheses of a key's text.
  var PRECEDENCE = {
    tuple: 2, test: 4, or: 5, and: 6, not: 7, cmp: 8, arith: 13, term: 14, factor: 15, atom: 18,
  };
  var PARSED_EXPRESSIONS = Object.create(null);

  function badRecipe(expression) {
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
  function mentions(node, name) {
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
  function parsedExpression(expression) {
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
  function pyText(expression) {
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

  var DECIMAL_TEXT = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

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
  function pyRepr(value) {
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
  function pyValue(value) {
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

  var NUMERIC = record({ bool: true, int: true, float: true });

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

  var FUNCTIONS = record({
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
  function evaluateRecipe(expression, scope, extra) {
    if (typeof expression !== "string") return pyValue(expression);
    var parsed = parsedExpression(expression);
    if (parsed === null) badRecipe(expression);
    return evaluateNode(parsed.node, scope, extra || null);
  }

  function readsLayer(expression) {
    if (typeof expression !== "string") return false;
    var parsed = parsedExpression(expression);
    return parsed === null || parsed.layer; // an unreadable one is refused at layer 0
  }

  /** A count (iteragpu.models.recipe.Scope.count): a whole number, not negative. */
  function recipeCount(expression, scope, extra) {
    var value = evaluateRecipe(expression, scope, extra);
    if (typeof value === "boolean") value = whole(value);
    if (typeof value !== "bigint" || value < 0n) {
      refuse("bad_key", codePoints(pyText(expression), 60));
    }
    return value;
  }

  function section(recipe, key) {
    var value = get(recipe, key);
    return isObject(value) ? value : {};
  }

  function terms(recipe, key) {
    var value = get(recipe, key);
    return Array.isArray(value) ? value : [];
  }

  /** The recipe of `modelType` in `families` (the page's data), or null. */
  function recipeOf(families, modelType) {
    if (!isObject(families) || !has(families, modelType)) return null;
    return isObject(families[modelType]) ? families[modelType] : null;
  }

  /** The config's values over the family's defaults, then derived keys, then `let` names. */
  function recipeScope(recipe, raw) {
    var values = record(section(recipe, "defaults"), raw);
    var scope = record(values);
    var derived = section(recipe, "derived");
    Object.keys(derived).forEach(function (key) {
      if (get(values, key) === null) scope[key] = evaluateRecipe(derived[key], scope, null);
    });
    var lets = section(recipe, "let");
    Object.keys(lets).forEach(function (key) {
      scope[key] = evaluateRecipe(lets[key], scope, null);
    });
    return scope;
  }

  function reads(expression, name) {
    if (typeof expression !== "string") return false;
    var parsed = parsedExpression(expression);
    if (parsed === null) return true; // an unreadable one is refused where it is first read
    return name === "layer" ? parsed.layer : mentions(parsed.node, name);
  }

  /** Whether any of a term's expressions (its count, condition, experts, tensors) reads `name`. */
  function termReads(term, name) {
    var expressions = [get(term, "count"), get(term, "when"), get(term, "bias")];
    var routed = get(term, "routed");
    if (isObject(routed)) expressions.push(get(routed, "experts"), get(routed, "per_token"));
    [get(term, "linear"), get(term, "shape")].forEach(function (list) {
      if (Array.isArray(list)) expressions = expressions.concat(list);
    });
    var tensors = get(term, "tensors");
    if (Array.isArray(tensors)) {
      tensors.forEach(function (t) {
        if (!isObject(t)) return;
        expressions.push(get(t, "when"));
        if (Array.isArray(get(t, "shape"))) expressions = expressions.concat(t.shape);
      });
    }
    return expressions.some(function (e) {
      return reads(e, name);
    });
  }

  function termReadsLayer(term) {
    return termReads(term, "layer");
  }

  function product(shape, scope, extra) {
    if (!Array.isArray(shape)) badRecipe("shape");
    return shape.reduce(function (total, e) {
      return total * recipeCount(e, scope, extra);
    }, 1n);
  }

  /**
   * A term's parameters (recipe._term_count): its `count`, else the elements of the tensors it
   * states (`linear`: [in, out] and a bias of `out` where `bias` holds; `shape`; `tensors`).
   */
  function termCount(term, scope, extra) {
    if (has(term, "count")) return recipeCount(term.count, scope, extra);
    if (has(term, "linear")) {
      var linear = term.linear;
      if (!Array.isArray(linear) || linear.length !== 2) badRecipe("linear");
      var inputs = recipeCount(linear[0], scope, extra);
      var outputs = recipeCount(linear[1], scope, extra);
      var biased = has(term, "bias") && truthy(evaluateRecipe(term.bias, scope, extra));
      return outputs * inputs + (biased ? outputs : 0n);
    }
    if (has(term, "shape")) return product(term.shape, scope, extra);
    if (has(term, "tensors") && Array.isArray(term.tensors)) {
      return term.tensors.reduce(function (total, t) {
        if (!isObject(t)) badRecipe("tensors");
        if (has(t, "when") && !truthy(evaluateRecipe(t.when, scope, extra))) return total;
        return total + product(get(t, "shape"), scope, extra);
      }, 0n);
    }
    return badRecipe("count");
  }

  /** Adds one term's parameters, those used per token and those kept in float32 to `counts`. */
  function addTerm(term, scope, counts, extra) {
    if (has(term, "when") && !truthy(evaluateRecipe(term.when, scope, extra))) return;
    var count = termCount(term, scope, extra);
    var active = count;
    var routed = get(term, "routed");
    if (routed !== null) {
      var experts = recipeCount(get(routed, "experts"), scope, extra);
      // None (DeepSeek-V2's class default): the parameters count, the active ones are unknown.
      var stated = evaluateRecipe(get(routed, "per_token"), scope, extra) !== null;
      var perToken = stated ? recipeCount(get(routed, "per_token"), scope, extra) : 0n;
      if (experts === 0n || count % experts !== 0n || perToken > experts) {
        refuse("bad_key", pyText(get(routed, "per_token")));
      }
      active = stated ? count / experts * perToken : null;
    }
    counts.parameters += count;
    counts.active = active === null || counts.active === null ? null : counts.active + active;
    if (get(term, "dtype") === "float32") counts.float32 += count;
  }

  function addCounts(counts, more, times) {
    counts.parameters += more.parameters * times;
    counts.float32 += more.float32 * times;
    counts.active = counts.active === null || more.active === null
      ? null
      : counts.active + more.active * times;
  }

  /**
   * The parameters a recipe counts (iteragpu.models.recipe.count): embeddings, each layer's
   * terms (`layer`, its index, and `kind`, its kind, known), the final ones. A layer term that
   * reads neither is the same on every layer: counted once and multiplied; one that reads only
   * the kind is counted once per kind (layer 0 is read whole first, and each layer in order,
   * so a refusal is the Python's).
   */
  function countRecipe(recipe, scope, kinds) {
    var counts = { parameters: 0n, active: 0n, float32: 0n };
    terms(recipe, "embeddings").forEach(function (term) {
      addTerm(term, scope, counts, null);
    });
    var layerTerms = terms(recipe, "layer");
    var varying = layerTerms.map(termReadsLayer);
    var byKind = layerTerms.map(function (term, k) {
      return !varying[k] && termReads(term, "kind");
    });
    var same = { parameters: 0n, active: 0n, float32: 0n };
    var perKind = record(); // kind -> term index -> its counts
    for (var index = 0; index < kinds.length; index++) {
      var kind = kinds[index];
      var extra = record({ layer: BigInt(index), kind: kind });
      if (!has(perKind, kind)) perKind[kind] = [];
      for (var k = 0; k < layerTerms.length; k++) {
        if (varying[k]) {
          addTerm(layerTerms[k], scope, counts, extra);
        } else if (byKind[k]) {
          var known = perKind[kind][k];
          if (known === undefined) {
            known = perKind[kind][k] = { parameters: 0n, active: 0n, float32: 0n };
            addTerm(layerTerms[k], scope, known, extra);
          }
          addCounts(counts, known, 1n);
        } else if (index === 0) {
          addTerm(layerTerms[k], scope, same, extra);
        }
      }
    }
    addCounts(counts, same, BigInt(kinds.length));
    terms(recipe, "final").forEach(function (term) {
      addTerm(term, scope, counts, null);
    });
    return counts;
  }

  /** Python's `not` of a recipe's `require` condition: refused naming its key (Recipe.check). */
  function checkRequire(recipe, scope) {
    var rules = get(recipe, "require");
    if (!Array.isArray(rules)) return;
    rules.forEach(function (rule) {
      if (!truthy(evaluateRecipe(get(rule, "holds"), scope, null))) {
        refuse("bad_key", get(rule, "key"));
      }
    });
  }

  /**
   * Bytes per sequence of every layer's state (iteragpu.models.state): each kind's `states`
   * tensors, elements x the model's bytes per value (`modelBytes`, a rational; null where the
   * dtype is not known) or 4 for float32. Returns {bytes, needsModelDtype}.
   */
  function stateBytes(recipe, scope, kinds, modelBytes) {
    var rules = section(recipe, "states");
    var made = record();
    var elements = { model: 0n, float32: 0n };
    var needs = false; // a tensor at the model's dtype, even of no elements (needs_model_dtype)
    for (var index = 0; index < kinds.length; index++) {
      var kind = kinds[index];
      var list = has(rules, kind) && Array.isArray(rules[kind]) ? rules[kind] : [];
      if (list.length === 0) continue;
      var layer = made[kind];
      if (layer === undefined) {
        var extra = record({ layer: BigInt(index), kind: kind });
        layer = { model: 0n, float32: 0n, needs: false };
        list.forEach(function (term) {
          var count = recipeCount(get(term, "count"), scope, extra);
          if (get(term, "dtype") === "float32") {
            layer.float32 += count;
          } else {
            layer.model += count;
            layer.needs = true;
          }
        });
        // Layers of one kind share their states unless a count reads the layer's index.
        var readsIndex = list.some(function (term) {
          return reads(get(term, "count"), "layer");
        });
        if (!readsIndex) made[kind] = layer;
      }
      elements.model += layer.model;
      elements.float32 += layer.float32;
      needs = needs || layer.needs;
    }
    var bytes = rational(elements.float32 * 4n);
    if (needs && modelBytes !== null) bytes = add(bytes, mul(rational(elements.model), modelBytes));
    return { bytes: bytes, needsModelDtype: needs };
  }

  /** Each layer's kind by the recipe's `layer_kind`, over the config's values alone. */
  function recipeLayerKinds(recipe, raw, layers) {
    var expression = has(recipe, "layer_kind") ? recipe.layer_kind : "'full_attention'";
    var kindAt = function (index) {
      var kind = evaluateRecipe(expression, raw, record({ layer: index }));
      if (typeof kind !== "string") badRecipe("layer_kind");
      return kind;
    };
    var kinds = [];
    if (!readsLayer(expression)) {
      var kind = kindAt(0n);
      for (var i = 0n; i < layers; i++) kinds.push(kind);
      return kinds;
    }
    for (var index = 0n; index < layers; index++) kinds.push(kindAt(index));
    return kinds;
  }

  /** The window a recipe computes (`window`; None: none), read as the config's would be. */
  function recipeWindow(recipe, read) {
    var value = evaluateRecipe(recipe.window, read.raw, null);
    if (value === null) return null;
    if (typeof value !== "bigint") return read.positiveValue("sliding_window", value); // refused
    if (value <= 0n || value > 1000000000000n) refuse("bad_key", "sliding_window");
    return value;
  }

  /** The config with the canonical names a recipe's `aliases` give its own keys. */
  function aliased(recipe, text) {
    var aliases = section(recipe, "aliases");
    var names = Object.keys(aliases);
    if (names.length === 0) return text;
    var values = record(text);
    names.forEach(function (canonical) {
      if (get(values, canonical) !== null) return;
      var value = text;
      String(aliases[canonical]).split(".").forEach(function (part) {
        value = isObject(value) ? get(value, part) : null;
      });
      if (value !== null) values[canonical] = value;
    });
    return values;
  }

  /** KV heads and head size where the recipe computes them (`attention`). */
  function recipeAttention(recipe, raw) {
    var rules = section(recipe, "attention");
    var keys = Object.keys(rules);
    var out = {};
    if (keys.length === 0) return out;
    var scope = recipeScope(recipe, raw);
    keys.forEach(function (key) {
      out[key] = recipeCount(rules[key], scope, null);
    });
    return out;
  }

  /** A recipe expression over a config's values (JSON text), for the tests: {ok, value} as
   * Python's repr, or {ok: false, reason, key}; `asCount` reads it as Scope.count does. */
  function evaluateExpression(expression, valuesText, asCount) {
    try {
      var values = readJson(String(valuesText));
      if (!isObject(values)) refuse("config_not_object");
      var value = asCount
        ? recipeCount(expression, values, null)
        : evaluateRecipe(expression, values, null);
      return { ok: true, value: pyRepr(value) };
    } catch (error) {
      if (!(error instanceof ConfigFailure)) throw error;
      return { ok: false, reason: error.reason, key: error.key };
    }
  }

  /**
   * The decoder of `text` (iteragpu.models.config._parse_decoder): a family of FAMILIES, read
   * by hand, else one whose recipe `families` holds (the page's data), read by its recipe.
   */
  function parseDecoder(text, outer, outerType, families) {
    var modelType = get(text, "model_type");
    if (typeof modelType !== "string") refuse("no_model_type");
    refuseState(text, families);
    var recipe = recipeOf(families, modelType);
    var byHand = has(FAMILIES, modelType);
    if (!byHand && recipe === null) refuse("unknown_family", modelType);
    var fam = byHand
      ? FAMILIES[modelType]
      : family(section(recipe, "defaults"), 2, { mla: truthy(get(recipe, "mla")) });
    if (byHand && recipe !== null) {
      // Its recipe's defaults are its config class's (counting reads them too); the layer rules
      // stay the hand ones (config.family_of).
      fam = record(fam, { defaults: record(fam.defaults, section(recipe, "defaults")) });
    }
    var read = new Reader(record(fam.defaults, byHand ? text : aliased(recipe, text)));
    var layers = read.positive("num_hidden_layers");
    if (layers > CONFIG_MAX_LAYERS) refuse("bad_key", "num_hidden_layers");
    var hidden = read.positive("hidden_size");
    var heads;
    var kvHeads;
    var headDim;
    if (!byHand && truthy(get(recipe, "no_attention"))) {
      heads = kvHeads = headDim = 0n; // Mamba: no layer attends, none holds a KV
    } else {
      heads = read.positive("num_attention_heads");
      if (!byHand && truthy(get(recipe, "mla"))) {
        // Latent attention caches no KV head: its key-value heads are unused.
        kvHeads = heads;
        headDim = read.optionalPositive("head_dim") || hidden / heads;
      } else {
        var attention = byHand ? {} : recipeAttention(recipe, read.raw);
        kvHeads = attention.kv_heads || read.optionalPositive("num_key_value_heads") || heads;
        if (heads % kvHeads !== 0n) refuse("bad_key", "num_key_value_heads");
        headDim = attention.head_dim || read.optionalPositive("head_dim") || hidden / heads;
        if (headDim === 0n) refuse("bad_key", "hidden_size");
      }
    }
    var kinds = layerKinds(read, modelType, layers, byHand ? null : recipe);
    if (!byHand && truthy(get(recipe, "require"))) {
      checkRequire(recipe, recipeScope(recipe, read.raw));
    }
    var tie = has(outer, "tie_word_embeddings")
      ? outer.tie_word_embeddings
      : get(read.raw, "tie_word_embeddings");
    var dtype = null;
    [text, outer].some(function (c) {
      return ["dtype", "torch_dtype"].some(function (key) {
        if (truthy(get(c, key))) dtype = get(c, key);
        return dtype !== null;
      });
    });
    var quantization = truthy(get(outer, "quantization_config"))
      ? get(outer, "quantization_config")
      : get(text, "quantization_config");
    var method = isObject(quantization) ? get(quantization, "quant_method") : null;
    return {
      modelType: modelType,
      outerModelType: outerType,
      family: fam,
      layers: layers,
      hidden: hidden,
      heads: heads,
      kvHeads: kvHeads,
      headDim: headDim,
      slidingLayers: kinds.sliding,
      kvLayers: kinds.kvLayers,
      window: kinds.window,
      chunkWindow: kinds.chunk,
      firstKind: kinds.firstKind,
      layerKinds: kinds.kinds,
      kindCounts: kinds.counted,
      vocab: read.optionalPositive("vocab_size"),
      // One per layer (Gemma-3n) for a family whose recipe reads it so (`per_layer`).
      intermediate: !byHand && Array.isArray(get(read.raw, "intermediate_size"))
        ? null
        : read.optionalPositive("intermediate_size"),
      tied: read.booleanValue("tie_word_embeddings", tie),
      attentionBias: read.boolean("attention_bias"),
      mlpBias: read.boolean("mlp_bias"),
      dtype: typeof dtype === "string" ? dtype : null,
      quantizationMethod: typeof method === "string" ? method : null,
      mla: fam.mla ? readMla(read, text, byHand) : null,
      // The config's values over the family's defaults, and the recipe that counts them (a
      // hand-described family's too, when it has one: count_parameters prefers it).
      values: record(read.raw, { tie_word_embeddings: read.booleanValue("tie_word_embeddings", tie) }),
      recipe: recipe,
      // A multimodal wrapper's whole config (its vision_config, projector keys), else null.
      outerValues: outerType !== null ? outer : null,
    };
  }

  /**
   * The decoder a config's object describes (iteragpu.models.config.parse_config); `multimodal`
   * holds the wrappers' recipes (`wrappers`), whose `text` names the decoder a text_config
   * without a model_type builds, or a wrapper whose text keys sit at the top (Qwen2-VL's
   * published configs).
   */
  function parseConfig(raw, families, multimodal) {
    if (!isObject(raw)) refuse("config_not_object");
    var outerType = get(raw, "model_type");
    var text = get(raw, "text_config");
    if (text === null) {
      var inner = wrapperTextType(multimodal, outerType);
      if (inner !== null) {
        // A wrapper whose text keys sit at the top (Qwen2-VL's published configs).
        return parseDecoder(record(raw, { model_type: inner }), raw, outerType, families);
      }
      return parseDecoder(raw, raw, null, families);
    }
    if (!isObject(text)) refuse("bad_key", "text_config");
    var textType = get(text, "model_type");
    if (textType === null && typeof outerType === "string") {
      textType = get(TEXT_MODEL_TYPES, outerType);
      if (!truthy(textType)) textType = wrapperTextType(multimodal, outerType);
    }
    refuseState(raw, families);
    var outer = outerType !== null ? String(outerType) : "multimodal";
    return parseDecoder(record(text, { model_type: textType }), raw, outer, families);
  }

  // ------------------------------------------------------------------------------------------
  // Multimodal wrappers as data (iteragpu.models.towers): what a wrapper builds beside its text
  // decoder, its vision tower and projector, from the page's data (`wrappers`, `towers`: docs/
  // hooks.py sizer_data). A wrapper's expressions read its keys over its defaults and two dicts,
  // `text` (the decoder's values; `tie_word_embeddings` the text config's own) and `vision`
  // (the tower's values): `vision['hidden_size'] * text['hidden_size']`. A wrapper or a tower
  // without a recipe is not counted (the note multimodal_encoder_not_counted says so).
  // ------------------------------------------------------------------------------------------

  /** The recipe of `modelType` in the page's data's `key` (`wrappers`, `towers`), or null. */
  function multimodalRecipe(multimodal, key, modelType) {
    if (!isObject(multimodal) || typeof modelType !== "string") return null;
    return recipeOf(get(multimodal, key), modelType);
  }

  /** The decoder's model_type a wrapper builds when its text_config names none, or null. */
  function wrapperTextType(multimodal, wrapperType) {
    var described = multimodalRecipe(multimodal, "wrappers", wrapperType);
    return described === null ? null : String(get(described, "text"));
  }

  /** Refuse a size that is not a positive whole number (towers._positive), naming its key. */
  function refuseNotPositive(values, keys) {
    if (!Array.isArray(keys)) return;
    keys.forEach(function (key) {
      var value = pyValue(get(values, String(key)));
      if (typeof value !== "bigint" || value <= 0n || value > 1000000000000n) {
        refuse("bad_key", String(key));
      }
    });
  }

  /**
   * The tower a wrapper's vision config names and its values (towers._vision): {recipe, scope},
   * or null where the tower has no recipe. No vision config: the wrapper's own default one; a
   * stated one must give the tower's `required` keys (its layers, heads and width).
   */
  function visionOf(rules, outer, multimodal) {
    var key = String(get(rules, "key"));
    var stated = get(outer, key);
    var raw;
    if (stated === null) {
      raw = record(section(rules, "defaults")); // the class's own default vision config
    } else if (isObject(stated)) {
      raw = record(stated);
    } else {
      refuse("bad_key", key);
    }
    var modelType = truthy(get(rules, "fixed")) ? get(rules, "model_type") : get(raw, "model_type");
    if (modelType === null) modelType = get(rules, "model_type");
    if (typeof modelType !== "string") refuse("bad_key", key + ".model_type");
    var described = multimodalRecipe(multimodal, "towers", modelType);
    if (described === null) return null;
    var aliases = section(described, "aliases");
    Object.keys(aliases).forEach(function (canonical) {
      var name = String(aliases[canonical]);
      if (get(raw, canonical) === null && get(raw, name) !== null) raw[canonical] = raw[name];
    });
    if (stated !== null) {
      var required = get(described, "required");
      (Array.isArray(required) ? required : []).forEach(function (name) {
        if (get(raw, String(name)) === null) refuse("missing_key", String(name));
      });
    }
    var values = record(section(described, "defaults"), raw);
    refuseNotPositive(values, get(described, "positive"));
    var scope = recipeScope(described, values);
    checkRequire(described, scope);
    return { recipe: described, scope: scope, modelType: modelType };
  }

  /** A tower's parameters (towers._tower_counts): embeddings, `layers` alike layers, final. */
  function towerCounts(described, scope) {
    var counts = { parameters: 0n, active: 0n, float32: 0n };
    terms(described, "embeddings").forEach(function (term) {
      addTerm(term, scope, counts, null);
    });
    var layers = recipeCount(get(described, "layers"), scope, null);
    var one = { parameters: 0n, active: 0n, float32: 0n };
    terms(described, "layer").forEach(function (term) {
      addTerm(term, scope, one, null);
    });
    counts.parameters += one.parameters * layers;
    counts.float32 += one.float32 * layers;
    terms(described, "final").forEach(function (term) {
      addTerm(term, scope, counts, null);
    });
    return counts;
  }

  /**
   * What a multimodal config's wrapper builds beside its decoder (towers.wrapper_counts):
   * {parameters, float32, tied} of its vision tower and projector, and whether the head is tied
   * by the wrapper's rule; null where the wrapper, its tower or the decoder has no recipe.
   */
  function wrapperCounts(c, multimodal) {
    var outer = c.outerValues;
    var described = truthy(c.outerModelType)
      ? multimodalRecipe(multimodal, "wrappers", c.outerModelType)
      : null;
    if (described === null || outer === null || c.recipe === null) return null;
    var found = visionOf(section(described, "vision"), outer, multimodal);
    if (found === null) return null;
    var vision = towerCounts(found.recipe, found.scope);
    var textScope = recipeScope(c.recipe, c.values);
    var rawText = get(outer, "text_config");
    var ownTie = isObject(rawText) ? get(rawText, "tie_word_embeddings") : null;
    if (ownTie === null) ownTie = get(section(c.recipe, "defaults"), "tie_word_embeddings", false);
    // The wrapper's keys over its defaults, each of `lists` as a list (`-2` reads `[-2]`).
    var values = record(section(described, "defaults"), outer);
    var lists = get(described, "lists");
    (Array.isArray(lists) ? lists : []).forEach(function (name) {
      var value = get(values, String(name));
      if (!Array.isArray(value)) values[String(name)] = [value];
    });
    values.text = record(textScope, { tie_word_embeddings: ownTie });
    values.vision = found.scope;
    var scope = recipeScope(described, values);
    refuseNotPositive(scope, get(described, "positive"));
    checkRequire(described, scope);
    var tied = evaluateRecipe(get(described, "tie"), scope, null);
    if (tied !== null && typeof tied !== "boolean") refuse("bad_key", "tie_word_embeddings");
    var projector = { parameters: 0n, active: 0n, float32: 0n };
    terms(described, "projector").forEach(function (term) {
      addTerm(term, scope, projector, null);
    });
    return {
      parameters: vision.parameters + projector.parameters,
      float32: vision.float32 + projector.float32,
      tied: tied === true,
      // What the training mode reads (its wrapperTensors): the recipes and their scopes.
      described: described,
      scope: scope,
      vision: found,
      visionType: found.modelType,
    };
  }

  /**
   * What the family's recipe counts (iteragpu.models.parameters.recipe_counts), or null; with a
   * wrapper's counts (`wrapped`), the head tied by its rule and its tower and projector added,
   * all active (every image goes through them).
   */
  function recipeCounts(c, wrapped) {
    if (c.recipe === null) return null;
    if (!wrapped) return countRecipe(c.recipe, recipeScope(c.recipe, c.values), c.layerKinds);
    var values = record(c.values, { tie_word_embeddings: wrapped.tied });
    var counts = countRecipe(c.recipe, recipeScope(c.recipe, values), c.layerKinds);
    counts.parameters += wrapped.parameters;
    counts.float32 += wrapped.float32;
    if (counts.active !== null) counts.active += wrapped.parameters;
    return counts;
  }

  /** Parameters of the decoder (iteragpu.models.parameters.count_parameters). */
  function countParameters(c) {
    if (c.recipe !== null) return recipeCounts(c).parameters;
    if (c.vocab === null) refuse("missing_key", "vocab_size");
    var hidden = c.hidden;
    var embeddings = c.vocab * hidden;
    var head = c.tied ? 0n : c.vocab * hidden;
    var norms = c.family.norms * hidden;
    var layers;
    if (c.mla !== null) {
      var m = c.mla;
      var moe = 0n; // layers from first_k_dense_replace on, every moe_layer_freq-th
      if (m.firstDense < c.layers) {
        moe = (c.layers - 1n) / m.frequency - (m.firstDense + m.frequency - 1n) / m.frequency + 1n;
      }
      var dense = c.layers - moe;
      if (dense > 0n && c.intermediate === null) refuse("missing_key", "intermediate_size");
      var experts = (m.routed * 3n * hidden * m.moeWidth) + m.routed * hidden +
        3n * hidden * m.moeWidth * m.shared;
      layers = c.layers * (mlaAttention(c, m) + norms) + moe * experts +
        (dense > 0n ? dense * mlp(c, c.intermediate) : 0n);
    } else {
      if (c.intermediate === null) refuse("missing_key", "intermediate_size");
      layers = c.layers * (attention(c) + mlp(c, c.intermediate) + norms);
    }
    return embeddings + layers + hidden + head;
  }

  function attention(c) {
    var q = c.heads * c.headDim;
    var kv = c.kvHeads * c.headDim;
    var total = c.hidden * (q + 2n * kv) + q * c.hidden;
    if (c.family.qkvBias || c.attentionBias) total += q + 2n * kv;
    if (c.attentionBias) total += c.hidden; // o_proj's bias
    if (c.family.qkNorm) total += 2n * c.headDim;
    return total;
  }

  function mlp(c, intermediate) {
    var biases = c.mlpBias ? 2n * intermediate + c.hidden : 0n;
    return 3n * c.hidden * intermediate + biases; // gate, up and down projections
  }

  function mlaAttention(c, m) {
    var hidden = c.hidden;
    var heads = c.heads;
    var bias = c.attentionBias;
    var qHead = m.nope + m.rope;
    var query;
    if (m.qLoraRank === null) {
      query = hidden * heads * qHead;
    } else {
      var rank = m.qLoraRank;
      query = hidden * rank + (bias ? rank : 0n) + rank + rank * heads * qHead;
    }
    var latent = m.kvLoraRank + m.rope;
    var kv = hidden * latent + (bias ? latent : 0n) + m.kvLoraRank +
      m.kvLoraRank * heads * (m.nope + m.valueDim);
    return query + kv + heads * m.valueDim * hidden + (bias ? hidden : 0n);
  }

  /** Bits per value of a dtype name (iteragpu.models.dtypes.dtype_bits), or null. */
  function dtypeBits(name) {
    var key = name.replace(STRIP, "").toLowerCase();
    if (key.indexOf("torch.") === 0) key = key.slice("torch.".length);
    if (has(DTYPE_ALIASES, key)) key = DTYPE_ALIASES[key];
    return has(DTYPE_BITS, key) ? BigInt(DTYPE_BITS[key]) : null;
  }

  /** Values one layer caches per token (iteragpu.models.kv.layer_layouts). */
  function valuesPerToken(c, layout) {
    if (c.mla === null) return K_AND_V * c.kvHeads * c.headDim;
    if (layout === MLA_PER_HEAD) return c.heads * (c.mla.nope + c.mla.rope + c.mla.valueDim);
    return c.mla.kvLoraRank + c.mla.rope;
  }

  /**
   * Read a pasted config.json: {ok: true, config, parameters, query, notes} where `query` holds
   * the sizer's fields it fills (bits and bytes per value only when it states a dtype), or
   * {ok: false, reason, key}. `mlaLayout` is mla_latent (default) or mla_per_head; `families`
   * the recipes of the families described as data (the page's data `families`), by model_type;
   * `multimodal` an object holding the multimodal wrappers' and their towers' recipes (`wrappers`
   * and `towers`: the page's data). `activeParameters` (per token) and `float32Parameters` (kept
   * in float32 at any dtype) are the recipe's, where the family has one (else null and 0); a
   * wrapper's tower and projector are in all three.
   */
  function readConfig(text, mlaLayout, families, multimodal) {
    var layout = mlaLayout === MLA_PER_HEAD ? MLA_PER_HEAD : MLA_LATENT;
    try {
      text = String(text);
      if (text.length > CONFIG_MAX_CHARS) refuse("config_too_large");
      var config = parseConfig(readJson(text), families, multimodal);
      // The dtype is read before the parameters are counted, as size_model reads them.
      var bits = null;
      if (config.dtype !== null) {
        bits = dtypeBits(config.dtype);
        if (bits === null) refuse("unknown_dtype", "dtype");
      }
      // A multimodal wrapper's vision tower and projector, where it and its tower have recipes.
      var wrapped = config.recipe !== null && config.outerModelType !== null
        ? wrapperCounts(config, multimodal)
        : null;
      var counts = recipeCounts(config, wrapped);
      var parameters = counts !== null ? counts.parameters : countParameters(config);
      // The layers' states, at the model's dtype (the config's) or float32, per sequence.
      var state = { bytes: rational(0n), needsModelDtype: false };
      if (config.recipe !== null && truthy(get(config.recipe, "states"))) {
        state = stateBytes(config.recipe, recipeScope(config.recipe, config.values),
          config.layerKinds, bits === null ? null : rational(bits, 8n));
        if (state.needsModelDtype && bits === null) refuse("no_state_dtype");
      }
      // The page's fields model the layers that hold a KV: full and sliding attention (hybrid
      // layers' KV is one of these, a chunked layer's a sliding one whose window is the chunk).
      // A family without attention heads (Mamba) holds no KV, whatever its layer kinds.
      var noKv = config.kvLayers === 0n || (config.mla === null && config.kvHeads === 0n);
      var window = noKv ? null : config.window !== null ? config.window : config.chunkWindow;
      var query = {
        params: parameters.toString(),
        layers: noKv ? "0" : config.kvLayers.toString(),
        window: window === null ? "" : window.toString(),
        windowed_layers: !noKv && config.slidingLayers > 0n ? config.slidingLayers.toString() : "",
        state_bytes: state.bytes.n === 0n ? "" : exactDecimal(state.bytes),
      };
      if (noKv) {
        query.kv_values = ""; // no layer holds a KV: heads and their size are not read
      } else if (config.mla === null) {
        query.kv_heads = config.kvHeads.toString();
        query.head_dim = config.headDim.toString();
        query.kv_values = "";
      } else {
        query.kv_values = valuesPerToken(config, layout).toString();
      }
      if (bits !== null) {
        query.bits = bits.toString();
        query.bytes_per_value = exactDecimal(rational(bits, 8n));
      }
      var notes = [];
      if (config.mla !== null) notes.push(layout);
      if (config.quantizationMethod !== null) notes.push("quantized_checkpoint_from_config");
      if (config.outerModelType !== null && wrapped === null) {
        notes.push("multimodal_encoder_not_counted");
      }
      if (config.mla !== null && config.mla.mtpLayers > 0n) notes.push("mtp_layers_not_counted");
      if (config.dtype === null) notes.push("no_dtype");
      if (state.bytes.n > 0n || noKv || config.kvLayers !== config.layers) {
        notes.push("layer_states");
      }
      return {
        ok: true,
        config: config,
        layout: config.mla === null ? LAYOUT_PER_HEAD : layout,
        parameters: parameters,
        stateBytes: state.bytes,
        activeParameters: counts !== null ? counts.active : null,
        float32Parameters: counts !== null ? counts.float32 : 0n,
        query: query,
        notes: notes,
      };
    } catch (error) {
      if (error instanceof ConfigFailure) return { ok: false, reason: error.reason, key: error.key };
      throw error;
    }
  }

  /** A terminating decimal's text (`0.5`, `2`): bytes per value as a field holds it. */
  function exactDecimal(value) {
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

  // ------------------------------------------------------------------------------------------
  // The whole sizing, as iteragpu.docs_tools.sizer_vectors.expected() computes it
  // ------------------------------------------------------------------------------------------

  // Python's order of validation: the first error is the one the CLI would report.
  // The largest value of each field, as the CLI bounds it (iteragpu.docs_tools.sizer_vectors.LIMITS).
  var LIMITS = {
    params: 10n ** 15n,
    bits: 64n,
    reserve_gib: 10n ** 6n,
    layers: 10n ** 4n,
    kv_heads: 10n ** 4n,
    head_dim: 10n ** 5n,
    tokens: 10n ** 9n,
    bytes_per_value: 8n,
    sequences: 10n ** 6n,
    window: 10n ** 9n,
    windowed_layers: 10n ** 4n,
    kv_values: 2n * 10n ** 4n * 10n ** 5n,
    state_bytes: 10n ** 15n,
  };
  var CACHES = ["dynamic", "static"];

  var FIELDS = [
    ["task", null],
    ["params", parseCount],
    ["bits", parsePositive],
    ["reserve_gib", parseNonNegative],
    ["layers", parseLayers],
    ["kv_values", parseCount],
    ["kv_heads", parseCount],
    ["head_dim", parseCount],
    ["tokens", parseTokens],
    ["bytes_per_value", parsePositive],
    ["sequences", parseCount],
    ["window", parseTokens],
    ["windowed_layers", parseCount],
    ["state_bytes", parseNonNegative],
    ["cache", null],
    ["days", parseCount],
  ];
  // Fields that may stay empty: no window; every layer windowed; values from heads x dims.
  // No state: a model whose layers keep none.
  var OPTIONAL = { window: true, windowed_layers: true, kv_values: true, state_bytes: true };

  /** The layers that hold a KV: a positive count, or 0 (a model of state layers alone). */
  function parseLayers(text, maximum, decimalComma) {
    var zero = parseNonNegative(text, maximum, decimalComma);
    if (zero.ok && zero.value.n === 0n) return ok(0n);
    return parseCount(text, maximum, decimalComma);
  }

  /** The query over the defaults: missing keys take the default, unknown keys are ignored. */
  function merge(query, defaults) {
    var merged = {};
    Object.keys(defaults).forEach(function (key) {
      var value = query && Object.prototype.hasOwnProperty.call(query, key) ? query[key] : null;
      merged[key] = value === null || value === undefined ? defaults[key] : String(value);
    });
    return merged;
  }

  /**
   * Size a query with `data` (the page's sizer data: defaults, tasks, catalog). Returns
   * {valid: true, ...exact values, candidates} or {valid: false, field, reason, errors}, where
   * `errors` lists every invalid field in Python's order and `field`/`reason` is the first.
   */
  function compute(query, data) {
    var q = merge(query, data.defaults);
    var decimalComma = readsDecimalComma(data);
    var values = {};
    var errors = [];
    FIELDS.forEach(function (entry) {
      var key = entry[0];
      var parse = entry[1];
      if (key === "task") {
        if (data.tasks.indexOf(q.task) < 0) errors.push({ field: key, reason: "unknown_task" });
        return;
      }
      if (key === "cache") {
        if (CACHES.indexOf(q.cache) < 0) errors.push({ field: key, reason: "unknown_cache" });
        return;
      }
      // Values per token given: the heads and their dimension are not read.
      if ((key === "kv_heads" || key === "head_dim") && q.kv_values !== "") return;
      if (OPTIONAL[key] && q[key] === "") {
        values[key] = null;
        return;
      }
      var parsed = parse(q[key], LIMITS[key], decimalComma);
      if (parsed.ok) values[key] = parsed.value;
      else if (parsed.readings) {
        errors.push({
          field: key, reason: parsed.reason, suffix: parsed.suffix, readings: parsed.readings,
        });
      } else errors.push({ field: key, reason: parsed.reason });
      if (key === "windowed_layers" && parsed.ok) {
        // Checked where Python checks it, once the layers and the window are read.
        var known = errors.every(function (e) {
          return e.field !== "layers" && e.field !== "window";
        });
        if (known && values.window === null) {
          errors.push({ field: key, reason: "window_needed" });
        } else if (known && values.windowed_layers > values.layers) {
          errors.push({ field: key, reason: "windowed_above_layers" });
        }
      }
    });
    if (errors.length > 0) {
      return {
        valid: false,
        query: q,
        field: errors[0].field,
        reason: errors[0].reason,
        errors: errors,
      };
    }
    var weights = weightsBytes(values.params, values.bits);
    var total = add(weights, gibToBytes(values.reserve_gib));
    var kv = kvByKind(values, q.cache);
    // The layers' states: per sequence, whatever the tokens (iteragpu.models.state).
    var state = values.state_bytes === null
      ? rational(0n)
      : mul(values.state_bytes, rational(values.sequences));
    var catalog = data.cards || loadCatalog(data.catalog);
    return {
      valid: true,
      query: q,
      task: q.task,
      weightsBytes: weights,
      totalBytes: total,
      reserveBytes: gibToBytes(values.reserve_gib),
      kvCacheBytes: kv.bytes,
      kvBytesPerToken: kv.perToken,
      kvGroups: kv.groups,
      stateBytes: state,
      // `iteragpu model`'s total: weights, KV cache, states and reserve (the rough range leaves
      // KV and states out).
      modelTotalBytes: add(add(total, kv.bytes), state),
      weightsGib: gib(weights),
      totalGib: gib(total),
      kvCacheGib: gib(kv.bytes),
      quantizationNotCounted: cmp(values.bits, QUANTIZED_BELOW_BITS) < 0,
      candidates: shortlist(catalog, total, values.days),
    };
  }

  /** The four figures as the page shows them, for one language's symbols. */
  function texts(result, symbols) {
    return {
      "weights-gib": formatNumber(result.weightsGib, 2, symbols),
      "range-gib": formatNumber(result.totalGib, 2, symbols),
      "kv-bytes": formatBytes(result.kvCacheBytes, symbols),
      "kv-gib": formatNumber(result.kvCacheGib, 2, symbols),
      "kv-bytes-per-token": formatBytes(result.kvBytesPerToken, symbols),
      "state-bytes": formatBytes(result.stateBytes, symbols),
      "model-total-gib": formatNumber(gib(result.modelTotalBytes), 2, symbols),
    };
  }

  /** A count (at most 10^9 here, so exact) as the JSON integer Python writes. */
  function jsonInteger(value) {
    return JSON.parse(value.toString());
  }

  /** A result in the shape of iteragpu.docs_tools.sizer_vectors.expected(), for every language given. */
  function describe(result, symbolsByLang) {
    if (!result.valid) {
      return { valid: false, field: result.field, reason: result.reason, errors: result.errors };
    }
    var langs = Object.keys(symbolsByLang);
    var text = {};
    langs.forEach(function (lang) {
      text[lang] = texts(result, symbolsByLang[lang]);
    });
    return {
      valid: true,
      weights_bytes: exact(result.weightsBytes),
      total_bytes: exact(result.totalBytes),
      kv_cache_bytes: exact(result.kvCacheBytes),
      kv_bytes_per_token: exact(result.kvBytesPerToken),
      kv_groups: result.kvGroups.map(function (g) {
        return {
          kind: g.kind,
          count: jsonInteger(g.count),
          window: g.window === null ? null : jsonInteger(g.window),
          tokens_held: jsonInteger(g.tokensHeld),
          kv_cache_bytes: exact(g.bytes),
        };
      }),
      state_bytes: exact(result.stateBytes),
      model_total_bytes: exact(result.modelTotalBytes),
      quantization_not_counted: result.quantizationNotCounted,
      text: text,
      candidates: result.candidates.map(function (c) {
        var declared = {};
        if (c.declaredGib !== null) {
          langs.forEach(function (lang) {
            declared[lang] = formatNumber(c.declaredGib, 2, symbolsByLang[lang]);
          });
        }
        return {
          card_id: c.id,
          rank: c.rank,
          status: c.status,
          requirements: { memory: c.requirements.memory, package: c.requirements.package },
          reasons: { memory: c.reasons.memory, package: c.reasons.package },
          declared_text: declared,
          paper_margin_bytes: c.paperMarginBytes === null ? null : jsonInteger(c.paperMarginBytes),
          paper_margin_basis: c.paperBasis,
        };
      }),
    };
  }

  // ------------------------------------------------------------------------------------------
  // The memory chart (#memory-chart): plain SVG drawn by this script. A charting library
  // (Chart.js 4.5, uPlot 1.6) would add several times this file's bytes to the page and draw
  // no better a single stacked bar with tick marks; benchmarks/sizer_bench.py prints the page's
  // script bytes and the recompute-and-redraw time against one 16 ms frame.
  // ------------------------------------------------------------------------------------------

  /**
   * What the chart draws for a valid result: the need stacked as weights, reserve, then the KV
   * cache (drawn apart: the rough range leaves it out), and the cards that matter: those still
   * to check, in the short list's review order, each with its nominal and declared capacity and
   * whether the rough range is within its capacity on paper (declared, else nominal read as
   * decimal GB). The excluded cards are named apart, not drawn. The axis runs to twice the
   * need with its KV cache, or to the first capacity on paper that holds it if that is larger;
   * a mark beyond the axis is drawn at its end, clipped. Exact bytes, which only the drawing
   * rounds to pixels.
   */
  function chartModel(result, cards) {
    var byId = {};
    cards.forEach(function (card) {
      byId[card.id] = card;
    });
    var start = rational(0n);
    var segments = [
      ["weights", result.weightsBytes],
      ["reserve", result.reserveBytes],
      // The cache: the KV and the layers' states (a model without states: the KV alone).
      ["kv", add(result.kvCacheBytes, result.stateBytes || rational(0n))],
    ].map(function (entry) {
      var segment = { key: entry[0], bytes: entry[1], start: start, end: add(start, entry[1]) };
      start = segment.end;
      return segment;
    });
    var need = start;
    var top = add(need, need);
    var holding = null; // the smallest capacity on paper that holds the need
    var shown = [];
    var excluded = [];
    (result.candidates || []).forEach(function (candidate) {
      var card = byId[candidate.id];
      if (!card) return;
      if (candidate.status === "excluded") {
        excluded.push({ id: card.id, name: card.name, reason: candidate.reasons.memory });
        return;
      }
      var paper = card.declaredBytes !== null ? card.declaredBytes : card.nominalBytes;
      var within = paper === null ? null : cmp(result.totalBytes, paper) <= 0;
      if (paper !== null && cmp(paper, need) >= 0 && (holding === null || cmp(paper, holding) < 0)) {
        holding = paper;
      }
      shown.push({
        id: card.id,
        name: card.name,
        nominalGb: card.nominalGb,
        nominalBytes: card.nominalBytes,
        declaredBytes: card.declaredBytes,
        paper: within === null ? null : within ? "within" : "beyond",
        paperBasis: candidate.paperBasis,
        paperMarginBytes: candidate.paperMarginBytes,
      });
    });
    if (holding !== null && cmp(holding, top) > 0) top = holding;
    return { segments: segments, cards: shown, excluded: excluded, maxBytes: top };
  }

  /** GiB as a float, for pixels only. */
  function gibFloat(bytes) {
    return Number((bytes.n * 1000n) / (bytes.d * (1n << 30n))) / 1000;
  }

  /** A round step giving about five ticks up to `maximum`. */
  function tickStep(maximum) {
    var raw = maximum / 5;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / power;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * power;
  }

  var SVG_NS = "http://www.w3.org/2000/svg";

  var HTML_NS = "http://www.w3.org/1999/xhtml";

  // The figures, the chart and its text alternative are redrawn on every edit. They are
  // described (an element: its name, attributes and text or children) and the page's nodes
  // brought to that description: a node already there of the same name is kept, only its
  // changed attributes and text rewritten. Re-creating every row, mark and sentence on each
  // edit made the browser match styles, shape text and lay out all of them again (issue 19).

  /** An HTML element's description; `content` is its text or its children's descriptions. */
  function htmlNode(name, attributes, content) {
    return { ns: HTML_NS, name: name, attributes: attributes, content: content };
  }

  /** An SVG element's description. */
  function svgNode(name, attributes, content) {
    return { ns: SVG_NS, name: name, attributes: attributes, content: content || [] };
  }

  /** A description with a key: the node made for it is kept for the same key on the next draw. */
  function keyed(key, spec) {
    spec.key = String(key);
    return spec;
  }

  function setAttr(el, name, value) {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  }

  function setHidden(el, hidden) {
    if (el.hidden !== hidden) el.hidden = hidden;
  }

  function textOf(content) {
    return content === null || content === undefined ? "" : String(content);
  }

  function create(doc, spec) {
    var el = doc.createElementNS(spec.ns, spec.name);
    if (spec.key !== undefined) el.sizerKey = spec.key;
    Object.keys(spec.attributes).forEach(function (key) {
      el.setAttribute(key, String(spec.attributes[key]));
    });
    if (Array.isArray(spec.content)) {
      spec.content.forEach(function (child) {
        el.appendChild(create(doc, child));
      });
    } else {
      el.textContent = textOf(spec.content);
    }
    return el;
  }

  /** Bring an element's attributes and content to its description. */
  function patch(doc, el, spec) {
    var attributes = spec.attributes;
    el.getAttributeNames().forEach(function (key) {
      if (!has(attributes, key)) el.removeAttribute(key);
    });
    Object.keys(attributes).forEach(function (key) {
      setAttr(el, key, String(attributes[key]));
    });
    patchContent(doc, el, spec.content);
  }

  /** Bring an element's content to a text (one text node, none for "") or to children. */
  function patchContent(doc, el, content) {
    if (!Array.isArray(content)) {
      var text = textOf(content);
      var only = el.firstChild;
      if (text === "" ? only === null : only !== null && only === el.lastChild &&
          only.nodeType === 3 && only.data === text) return;
      if (text !== "" && only !== null && only === el.lastChild && only.nodeType === 3) {
        only.data = text;
      } else {
        el.textContent = text;
      }
      return;
    }
    if (content.length && content.every(function (spec) {
      return spec.key !== undefined;
    })) {
      patchKeyed(doc, el, content);
      return;
    }
    var child = el.firstChild;
    content.forEach(function (spec) {
      if (child && child.nodeType === 1 && child.localName === spec.name &&
          child.namespaceURI === spec.ns) {
        patch(doc, child, spec);
        child = child.nextSibling;
      } else {
        var fresh = create(doc, spec);
        if (child) {
          el.replaceChild(fresh, child);
        } else {
          el.appendChild(fresh);
        }
        child = fresh.nextSibling;
      }
    });
    while (child) {
      var next = child.nextSibling;
      el.removeChild(child);
      child = next;
    }
  }

  /** Children described with keys (the chart's marks: a card's label and marks keep their
   * nodes when the cards reorder): the node of each key is kept, and only those out of order
   * moved (the longest run already in order stays), since a moved node is styled and laid out
   * again like a new one. Rows and list items are matched by place instead: a reordered row
   * rewrites its text in place, cheaper than moving it. */
  function patchKeyed(doc, el, content) {
    var byKey = {};
    var old = [];
    for (var child = el.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 1 && child.sizerKey !== undefined && !has(byKey, child.sizerKey)) {
        byKey[child.sizerKey] = old.length;
      }
      old.push(child);
    }
    var used = {};
    var kept = content.map(function (spec) {
      var at = has(byKey, spec.key) ? byKey[spec.key] : -1;
      var node = at < 0 || used[at] ? null : old[at];
      if (!node || node.localName !== spec.name || node.namespaceURI !== spec.ns) return -1;
      used[at] = true;
      return at;
    });
    old.forEach(function (node, at) {
      if (!used[at]) el.removeChild(node);
    });
    var stay = inOrder(kept);
    var anchor = null;
    for (var i = content.length - 1; i >= 0; i -= 1) {
      var spec = content[i];
      var node;
      if (kept[i] >= 0) {
        node = old[kept[i]];
        patch(doc, node, spec);
        if (!stay[i]) el.insertBefore(node, anchor);
      } else {
        node = create(doc, spec);
        el.insertBefore(node, anchor);
      }
      anchor = node;
    }
  }

  /** Which of `positions` (old places, -1 for none) form a longest increasing run. */
  function inOrder(positions) {
    var tails = [];
    var previous = [];
    positions.forEach(function (p, i) {
      previous.push(-1);
      if (p < 0) return;
      var lo = 0;
      var hi = tails.length;
      while (lo < hi) {
        var mid = (lo + hi) >> 1;
        if (positions[tails[mid]] < p) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0) previous[i] = tails[lo - 1];
      tails[lo] = i;
    });
    var stay = positions.map(function () {
      return false;
    });
    for (var k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = previous[k]) {
      stay[k] = true;
    }
    return stay;
  }

  /** `template` with each {name} replaced. */
  function fillTemplate(template, values) {
    return template.replace(/\{([a-z_]+)\}/g, function (whole, name) {
      return has(values, name) ? values[name] : whole;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Training mode (`iteragpu train`, iteragpu.training): a run's model states from a pasted
  // config, tensor by tensor and per GPU. The tables (how each family's causal-LM class names
  // and builds its modules, PEFT's default targets and MoE conversion, the byte rules'
  // constants) are the page's data (`training`: iteragpu.training.page.sizer_tables); the
  // tensors come from the family's recipe, as the rest of the page reads it. Each function
  // below mirrors the Python one it names; tests/js/sizer_training.test.mjs holds the answers
  // to `iteragpu train`'s (iteragpu.docs_tools.sizer_training_vectors). Activations are not
  // computed: the page shows them as to be measured.
  // ------------------------------------------------------------------------------------------

  var TRAIN_METHODS = ["full", "lora", "dora", "qlora", "qdora"];
  var QUANTIZED_METHODS = ["qlora", "qdora"]; // adapters.QUANTIZED_METHODS
  var DORA_METHODS = ["dora", "qdora"];
  var TRAIN_PRECISIONS = ["fp32", "bf16", "fp16", "autocast-bf16", "autocast-fp16", "bf16-master"];
  var TRAIN_OPTIMIZERS = ["adamw", "adamw-amsgrad", "adamw-8bit", "sgd", "sgd-momentum", "adafactor"];
  var TRAIN_SHARDS = ["none", "fsdp2", "zero1", "zero2", "zero3"];
  var TRAIN_FUSED = ["adamw", "adamw-amsgrad", "sgd", "sgd-momentum"];
  var TRAIN_MAX_RANK = 65536n; // iteragpu.cli.train_request
  var TRAIN_MAX_GPUS = 100000n;
  var ALL_LINEAR = "all-linear";
  var LINEAR_KINDS = ["linear", "linear_subclass", "conv1d"];
  var ROLES = ["base", "saved_copy", "adapter", "quantized", "quant_state"];
  var DTYPE_BYTES = { float32: 4n, bfloat16: 2n, float16: 2n, uint8: 1n, int32: 4n };
  var WEIGHT_DTYPES = {
    fp32: "float32", bf16: "bfloat16", fp16: "float16", "autocast-bf16": "float32",
    "autocast-fp16": "float32", "bf16-master": "bfloat16",
  };

  function TrainFailure(reason, values) {
    this.reason = reason;
    this.values = values || {};
  }

  function trainRefuse(reason, values) {
    throw new TrainFailure(reason, values);
  }

  function elementsOf(shape) {
    return shape.reduce(function (total, size) {
      return total * size;
    }, 1n);
  }

  function under(module, ancestor) {
    return module === ancestor || module.indexOf(ancestor + ".") === 0;
  }

  /** recipe.term_tensors: the [name, shape] of each tensor a term states, or null (the one
   * reader of a recipe's tensors, for the training mode and the split alike). */
  function termTensors(term, scope, extra) {
    var name = String(get(term, "name"));
    if (has(term, "linear")) {
      var inputs = recipeCount(term.linear[0], scope, extra);
      var outputs = recipeCount(term.linear[1], scope, extra);
      var found = [[name + ".weight", [outputs, inputs]]];
      if (has(term, "bias") && truthy(evaluateRecipe(term.bias, scope, extra))) {
        found.push([name + ".bias", [outputs]]);
      }
      return found;
    }
    if (has(term, "shape")) {
      return [[name + ".weight", term.shape.map(function (e) {
        return recipeCount(e, scope, extra);
      })]];
    }
    if (has(term, "tensors")) {
      var out = [];
      term.tensors.forEach(function (t) {
        if (has(t, "when") && !truthy(evaluateRecipe(t.when, scope, extra))) return;
        var shape = t.shape.map(function (e) {
          return recipeCount(e, scope, extra);
        });
        if (!has(t, "repeat")) {
          out.push([String(t.name), shape]);
          return;
        }
        var repeat = recipeCount(t.repeat, scope, extra);
        for (var i = 0n; i < repeat; i++) out.push([String(t.name).split("{i}").join(String(i)), shape]);
      });
      return out;
    }
    return null;
  }

  /** Each tensor of `terms` ({name, layer, shape, float32}), or null where one states none. */
  function termsTensors(scope, list, extra, layer) {
    var found = [];
    for (var k = 0; k < list.length; k++) {
      var term = list[k];
      if (has(term, "when") && !truthy(evaluateRecipe(term.when, scope, extra))) continue;
      var made = termTensors(term, scope, extra);
      if (made === null) return null;
      var float32 = get(term, "dtype") === "float32";
      var routed = get(term, "routed") !== null;
      made.forEach(function (t) {
        var elements = t[1].reduce(function (a, b) { return a * b; }, 1n);
        found.push({
          name: t[0], layer: layer, shape: t[1], float32: float32, routed: routed, elements: elements,
        });
      });
    }
    return found;
  }

  /** recipe.tensors: every tensor the family builds, in order, tied weights once; or null. */
  function recipeTensors(recipe, scope, kinds) {
    var found = termsTensors(scope, terms(recipe, "embeddings"), null, null);
    if (found === null) return null;
    for (var index = 0; index < kinds.length; index++) {
      var extra = record({ layer: BigInt(index), kind: kinds[index] });
      var layer = termsTensors(scope, terms(recipe, "layer"), extra, index);
      if (layer === null) return null;
      found = found.concat(layer);
    }
    var final = termsTensors(scope, terms(recipe, "final"), null, null);
    return final === null ? null : found.concat(final);
  }

  /** naming.family_naming: the family's entry, each key from the nearest on its base chain. */
  function familyNaming(training, families, modelType) {
    var table = get(get(training, "naming"), "families");
    var chain = [];
    var seen = modelType;
    for (var guard = 0; guard < 64; guard++) {
      if (has(table, seen)) chain.push(table[seen]);
      var described = recipeOf(families, seen);
      var base = described === null ? null : get(described, "base");
      if (typeof base !== "string") break;
      seen = base;
    }
    var merged = {};
    var modules = {};
    var transposed = [];
    var frozen = [];
    chain.slice().reverse().forEach(function (entry) {
      Object.keys(entry).forEach(function (key) {
        merged[key] = entry[key];
      });
      Object.keys(section(entry, "modules")).forEach(function (key) {
        modules[key] = entry.modules[key];
      });
      (get(entry, "transposed") || []).forEach(function (m) {
        if (transposed.indexOf(m) < 0) transposed.push(m);
      });
      (get(entry, "frozen") || []).forEach(function (m) {
        if (frozen.indexOf(m) < 0) frozen.push(m);
      });
    });
    if (!has(merged, "outer") || !has(merged, "layer")) {
      trainRefuse("no_tensor_names", { family: modelType });
    }
    return {
      outer: String(merged.outer),
      layer: String(merged.layer),
      head: has(merged, "head") ? String(merged.head) : "lm_head",
      tied: isObject(get(merged, "tied")) ? merged.tied : {},
      last: get(merged, "last"),
      modules: modules,
      transposed: transposed,
      frozen: frozen,
      wrapper: has(table, modelType) ? get(table[modelType], "wrapper") : null,
    };
  }

  /** naming._Classes: each module's class from the table, else from its term's kind. */
  function moduleClasses(recipe, modules) {
    var linear = {};
    ["embeddings", "layer", "final", "projector"].forEach(function (key) {
      terms(recipe, key).forEach(function (term) {
        if (has(term, "linear")) linear[String(term.name)] = true;
      });
    });
    var embedding = {};
    terms(recipe, "embeddings").forEach(function (term) {
      if (has(term, "shape") && term.shape.length === 2) embedding[String(term.name)] = true;
    });
    var patterns = Object.keys(modules).sort().map(function (key) {
      var source = key.split("*").map(function (part) {
        return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      }).join("[^.]+");
      return [new RegExp("^" + source + "$"), modules[key]];
    });
    return function (module) {
      for (var i = 0; i < patterns.length; i++) {
        if (patterns[i][0].test(module)) return patterns[i][1];
      }
      if (has(linear, module)) return "linear";
      if (has(embedding, module)) return "embedding";
      return "parameters";
    };
  }

  function trainParam(name, shape, float32, kind, frozen) {
    var dot = name.lastIndexOf(".");
    return {
      name: name, shape: shape, float32: float32, kind: kind, frozen: frozen,
      module: name.slice(0, Math.max(dot, 0)), leaf: name.slice(dot + 1),
      elements: elementsOf(shape),
    };
  }

  function specParams(specs, kind, nameOf, frozen) {
    return specs.map(function (spec) {
      var module = spec.name.slice(0, Math.max(spec.name.lastIndexOf("."), 0));
      return trainParam(nameOf(spec), spec.shape, spec.float32, kind(module),
        (frozen || []).indexOf(spec.name) >= 0);
    });
  }

  /** naming._finish: tied heads, the last module, the transposed experts. */
  function finishTensors(modelType, params, head, naming, tied, sources, lastPrefix) {
    var byName = {};
    var modules = {};
    params.forEach(function (p) {
      byName[p.name] = p;
      modules[p.module] = true;
    });
    var tiedHeads = {};
    if (tied) {
      Object.keys(sources).forEach(function (module) {
        var weight = byName[sources[module] + ".weight"];
        if (!has(modules, module) && weight !== undefined) {
          tiedHeads[module] = { shape: weight.shape, float32: weight.float32 };
        }
      });
    }
    var last = params.length ? params[params.length - 1].module : "";
    if (naming.last !== null && naming.last !== undefined && has(tiedHeads, head)) {
      var prefix = (lastPrefix !== null ? lastPrefix : naming.outer) + naming.last + ".";
      params.forEach(function (p) {
        if (p.name.indexOf(prefix) === 0) last = p.module;
      });
    }
    var transposed = {};
    params.forEach(function (p) {
      naming.transposed.forEach(function (t) {
        if (p.module.slice(-(t.length + 1)) === "." + t) transposed[p.module] = true;
      });
    });
    return {
      modelType: modelType, params: params, head: head, tiedHeads: tiedHeads,
      lastModule: last, transposed: transposed,
    };
  }

  /** naming.model_tensors: every parameter as the causal-LM (or wrapper) class holds it. */
  function modelTensors(c, data) {
    var training = get(data, "training");
    var naming = familyNaming(training, data.families, c.modelType);
    if (c.outerModelType !== null) return wrapperTensors(c, data, naming);
    if (naming.wrapper !== null && naming.wrapper !== undefined) {
      trainRefuse("no_causal_lm", { family: c.modelType, wrapper: naming.wrapper });
    }
    var specs = c.recipe === null
      ? null
      : recipeTensors(c.recipe, recipeScope(c.recipe, c.values), c.layerKinds);
    if (specs === null) trainRefuse("no_tensors", { family: c.modelType });
    var head = naming.head;
    var params = specParams(specs, moduleClasses(c.recipe, naming.modules), function (spec) {
      if (spec.layer !== null) return naming.layer.split("{layer}").join(String(spec.layer)) + spec.name;
      if (spec.name === head || spec.name.indexOf(head + ".") === 0) return spec.name;
      return naming.outer + spec.name;
    }, naming.frozen);
    var tied = c.tied && Object.keys(naming.tied).length > 0;
    return finishTensors(c.modelType, params, head, naming, tied, naming.tied, null);
  }

  function wrapperTensors(c, data, naming) {
    var wrapped = wrapperCounts(c, data);
    var towers = get(get(get(data, "training"), "naming"), "towers");
    if (wrapped === null) trainRefuse("no_tensors", { family: c.outerModelType });
    var entry = get(towers, wrapped.visionType);
    if (entry === null) trainRefuse("no_tensor_names", { family: wrapped.visionType });
    var vision = wrapped.vision;
    var layers = recipeCount(get(vision.recipe, "layers"), vision.scope, null);
    var towerSpecs = termsTensors(vision.scope, terms(vision.recipe, "embeddings"), null, null);
    for (var i = 0n; i < layers && towerSpecs !== null; i++) {
      var layer = termsTensors(vision.scope, terms(vision.recipe, "layer"), null, Number(i));
      towerSpecs = layer === null ? null : towerSpecs.concat(layer);
    }
    var finalSpecs = termsTensors(vision.scope, terms(vision.recipe, "final"), null, null);
    var projector = termsTensors(wrapped.scope, terms(wrapped.described, "projector"), null, null);
    var textValues = record(c.values, { tie_word_embeddings: wrapped.tied });
    var text = recipeTensors(c.recipe, recipeScope(c.recipe, textValues), c.layerKinds);
    if (towerSpecs === null || finalSpecs === null || projector === null || text === null) {
      trainRefuse("no_tensors", { family: c.outerModelType });
    }
    var modules = section(wrapped.described, "modules");
    var visionPrefix = String(modules.vision) + ".";
    var towerLayer = String(get(entry, "layer"));
    var params = specParams(towerSpecs.concat(finalSpecs),
      moduleClasses(vision.recipe, section(entry, "modules")), function (spec) {
        if (spec.layer !== null) {
          return visionPrefix + towerLayer.split("{layer}").join(String(spec.layer)) + spec.name;
        }
        return visionPrefix + spec.name;
      });
    if (get(modules, "projector") !== null) {
      var projectorPrefix = String(modules.projector) + ".";
      params = params.concat(specParams(projector, moduleClasses(wrapped.described, {}),
        function (spec) {
          return projectorPrefix + spec.name;
        }));
    }
    var language = String(modules.language_model) + ".";
    var head = String(modules.lm_head);
    var ownHead = naming.head;
    var outer = naming.outer;
    var innerLayer = naming.layer.indexOf(outer) === 0 ? naming.layer.slice(outer.length) : naming.layer;
    var strip = function (name) {
      return name.indexOf(outer) === 0 ? name.slice(outer.length) : name;
    };
    params = params.concat(specParams(text, moduleClasses(c.recipe, naming.modules), function (spec) {
      if (spec.layer !== null) return language + innerLayer.split("{layer}").join(String(spec.layer)) + spec.name;
      if (spec.name === ownHead || spec.name.indexOf(ownHead + ".") === 0) {
        return head + spec.name.slice(ownHead.length);
      }
      return language + strip(spec.name);
    }, naming.frozen));
    var sources = {};
    Object.keys(naming.tied).forEach(function (key) {
      sources[head] = language + strip(String(naming.tied[key]));
    });
    return finishTensors(c.outerModelType, params, head, naming, wrapped.tied, sources, language);
  }

  function weightDtype(precision) {
    if (!has(WEIGHT_DTYPES, precision)) trainRefuse("unknown_precision");
    return WEIGHT_DTYPES[precision];
  }

  /** adapters._Model: a model's tensors, its linear modules and the module tree. */
  function TrainModel(tensors, training) {
    var self = this;
    this.tensors = tensors;
    this.modelType = tensors.modelType;
    this.head = tensors.head;
    this.params = tensors.params;
    this.peft = get(training, "peft");
    this.linears = {};
    this.linearOrder = [];
    this.embeddings = {};
    this.params.forEach(function (p) {
      if (p.leaf !== "weight") return;
      if (LINEAR_KINDS.indexOf(p.kind) >= 0) {
        if (!has(self.linears, p.module)) self.linearOrder.push(p.module);
        self.linears[p.module] = p;
      } else if (p.kind === "embedding") {
        self.embeddings[p.module] = p;
      }
    });
    this.modules = [];
    var seen = {};
    this.params.forEach(function (p) {
      var parts = p.module.split(".");
      for (var end = 1; end <= parts.length; end++) {
        var key = parts.slice(0, end).join(".");
        if (!has(seen, key)) {
          seen[key] = true;
          self.modules.push(key);
        }
      }
    });
    Object.keys(tensors.tiedHeads).forEach(function (head) {
      if (!has(seen, head)) {
        self.modules.push(head);
        seen[head] = true;
      }
    });
  }

  TrainModel.prototype.allLinear = function () {
    var head = this.head;
    return this.linearOrder.filter(function (m) {
      return m !== head;
    });
  };

  /** _Model.converted: PEFT's _convert_peft_config_moe. */
  TrainModel.prototype.converted = function (names) {
    var base = get(this.peft.moe_converted, this.modelType);
    if (base === null) return { names: names, parameters: [], multiples: {} };
    var mapping = this.peft.moe_targets[base];
    var fused = this.peft.moe_fused[base];
    if (names !== null && names.length === 1 && names[0] === ALL_LINEAR) {
      var leaves = {};
      this.allLinear().forEach(function (m) {
        leaves[m.slice(m.lastIndexOf(".") + 1)] = true;
      });
      Object.keys(mapping).forEach(function (old) {
        leaves[old] = true;
      });
      names = Object.keys(leaves).sort();
    }
    var moved = [];
    var remaining = [];
    var present = {};
    Object.keys(fused).forEach(function (target) {
      present[target] = {};
    });
    (names || []).forEach(function (target) {
      var olds = Object.keys(mapping);
      for (var i = 0; i < olds.length; i++) {
        var old = olds[i];
        if (target === old || target.slice(-(old.length + 1)) === "." + old) {
          var renamed = mapping[old];
          if (moved.indexOf(renamed) < 0) moved.push(renamed);
          if (has(present, renamed)) present[renamed][old] = true;
          return;
        }
      }
      remaining.push(target);
    });
    var multiples = {};
    var family = this.modelType;
    Object.keys(fused).forEach(function (target) {
      var required = fused[target];
      var got = Object.keys(present[target]);
      if (got.length > 0 && got.length < required.length) {
        trainRefuse("lora_targets_fused", {
          present: got.sort().join(", "),
          missing: required.filter(function (r) {
            return got.indexOf(r) < 0;
          }).sort().join(", "),
          fused: target,
          family: family,
        });
      }
      if (got.length === required.length && required.length > 1) multiples[target] = required.length;
    });
    if (!remaining.length && !moved.length) {
      trainRefuse("lora_targets_converted_none", { family: family });
    }
    return { names: remaining, parameters: moved, multiples: multiples };
  };

  /** _Model.lora_targets: the modules LoRA wraps (no modules to save on this page). */
  TrainModel.prototype.loraTargets = function (names, withParameters) {
    var self = this;
    var chosen;
    if (names !== null && names.length === 1 && names[0] === ALL_LINEAR) {
      chosen = this.allLinear();
    } else {
      if (names === null) {
        var found = get(this.peft.default_targets, this.modelType);
        if (found === null && withParameters) found = [];
        if (found === null) trainRefuse("lora_targets_no_default", { family: this.modelType });
        names = found;
      }
      if (!names.length && !withParameters) trainRefuse("lora_targets_empty");
      chosen = [];
      names.forEach(function (name) {
        var matched = self.modules.filter(function (m) {
          return m === name || m.slice(-(name.length + 1)) === "." + name;
        });
        if (!matched.length) {
          trainRefuse("lora_target_unknown", { target: name, family: self.modelType });
        }
        matched.forEach(function (module) {
          if (!has(self.linears, module) && !has(self.embeddings, module) &&
              !has(self.tensors.tiedHeads, module)) {
            trainRefuse("lora_target_not_linear", { target: name, module: module });
          }
        });
        chosen = chosen.concat(matched);
      });
    }
    var targets = {};
    chosen.forEach(function (m) {
      targets[m] = true;
    });
    return targets;
  };

  /** _Model.quantized_linears: what Transformers makes Linear4bit. */
  TrainModel.prototype.quantizedLinears = function () {
    var kept = {};
    this.params.forEach(function (p) {
      if (p.float32) kept[p.module] = true;
    });
    var self = this;
    var found = {};
    this.linearOrder.forEach(function (m) {
      var kind = self.linears[m].kind;
      if ((kind === "linear" || kind === "conv1d") && m !== self.head &&
          m !== self.tensors.lastModule && !has(kept, m)) {
        found[m] = true;
      }
    });
    return found;
  };

  /** _Model.wrapped_parameters: per module, the leaves PEFT's target_parameters wraps. */
  TrainModel.prototype.wrappedParameters = function (names, method, targets, quantized) {
    if (!names.length) return {};
    if (DORA_METHODS.indexOf(method) >= 0) {
      trainRefuse("lora_parameters_dora", { family: this.modelType, name: names[0] });
    }
    var self = this;
    var found = {};
    var order = [];
    names.forEach(function (name) {
      var matched = self.params.filter(function (p) {
        return p.name === name || p.name.slice(-(name.length + 1)) === "." + name;
      });
      if (!matched.length) {
        trainRefuse("lora_parameter_unknown", { target: name, family: self.modelType });
      }
      matched.forEach(function (p) {
        if (p.shape.length !== 2 && p.shape.length !== 3) {
          trainRefuse("lora_parameter_shape", { name: p.name, dims: String(p.shape.length) });
        }
        if (has(targets, p.module) || has(quantized, p.module)) {
          trainRefuse("lora_parameter_wrapped", { name: p.name });
        }
        if (!has(found, p.module)) {
          found[p.module] = [];
          order.push(p.module);
        }
        if (found[p.module].indexOf(p.leaf) < 0) found[p.module].push(p.leaf);
      });
    });
    var position = {};
    this.params.forEach(function (p, i) {
      position[p.name] = i;
    });
    var result = {};
    order.forEach(function (module) {
      result[module] = found[module].slice().sort(function (a, b) {
        return position[module + "." + a] - position[module + "." + b];
      });
    });
    return result;
  };

  /** _Model.check_mamba: what PEFT refuses in a Mamba-based model. */
  TrainModel.prototype.checkMamba = function (targets, wrapped) {
    if (this.peft.mamba_types.indexOf(this.modelType) < 0) return;
    var modules = Object.keys(targets).concat(Object.keys(wrapped)).sort();
    for (var i = 0; i < modules.length; i++) {
      var leaf = modules[i].slice(modules[i].lastIndexOf(".") + 1);
      if (this.peft.mamba_incompatible.indexOf(leaf) >= 0) {
        trainRefuse("lora_target_mamba", { module: modules[i], family: this.modelType });
      }
    }
  };

  function trainTensor(name, shape, dtype, role, trainable) {
    return {
      name: name, shape: shape, dtype: dtype, role: role, trainable: trainable,
      elements: elementsOf(shape),
    };
  }

  /** adapters._adapters: LoRA's (and DoRA's) tensors for one wrapped module. */
  function adapterTensors(module, weight, request, out) {
    var rank = request.loraR;
    var dtype = "float32"; // PEFT's autocast_adapter_dtype: float32 whatever the base
    var magnitude;
    if (weight.kind === "embedding") {
      out.push(trainTensor(module + ".lora_embedding_A.default", [rank, weight.shape[0]], dtype, "adapter", true));
      out.push(trainTensor(module + ".lora_embedding_B.default", [weight.shape[1], rank], dtype, "adapter", true));
      magnitude = weight.shape[1];
    } else {
      var conv = weight.kind === "conv1d"; // Transformers' Conv1D holds [in, out]
      var inputs = conv ? weight.shape[0] : weight.shape[1];
      var outputs = conv ? weight.shape[1] : weight.shape[0];
      out.push(trainTensor(module + ".lora_A.default.weight", [rank, inputs], dtype, "adapter", true));
      out.push(trainTensor(module + ".lora_B.default.weight", [outputs, rank], dtype, "adapter", true));
      magnitude = outputs;
    }
    if (DORA_METHODS.indexOf(request.method) >= 0) {
      out.push(trainTensor(module + ".lora_magnitude_vector.default.weight", [magnitude], dtype, "adapter", true));
    }
  }

  /** adapters._parameter_adapters: PEFT's ParamWrapper for one parameter. */
  function parameterAdapters(at, target, transposed, rank, out) {
    var experts;
    var inputs;
    var outputs;
    if (target.shape.length === 3) {
      experts = target.shape[0];
      inputs = transposed ? target.shape[1] : target.shape[2];
      outputs = transposed ? target.shape[2] : target.shape[1];
    } else {
      experts = 1n;
      outputs = target.shape[0];
      inputs = target.shape[1];
    }
    var width = rank * experts;
    out.push(trainTensor(at + ".lora_A.default.weight", [width, inputs], "float32", "adapter", true));
    out.push(trainTensor(at + ".lora_B.default.weight", [outputs, width], "float32", "adapter", true));
  }

  /** adapters._quantized: a Linear4bit's packed weight and its QuantState's tensors. */
  function quantizedTensors(name, elements, doubleQuant, constants, out) {
    var block = BigInt(constants.block);
    var blocks = (elements + block - 1n) / block;
    out.push(trainTensor(name, [(elements + 1n) / 2n, 1n], "uint8", "quantized", false));
    var codes = BigInt(constants.nf4_fp4_codes);
    if (!doubleQuant) {
      out.push(trainTensor(name + ".absmax", [blocks], "float32", "quant_state", false));
      out.push(trainTensor(name + ".quant_map", [codes], "float32", "quant_state", false));
      return;
    }
    var nested = (blocks + BigInt(constants.nested_block) - 1n) / BigInt(constants.nested_block);
    out.push(trainTensor(name + ".absmax", [blocks], "uint8", "quant_state", false));
    out.push(trainTensor(name + ".quant_map", [codes], "float32", "quant_state", false));
    out.push(trainTensor(name + ".nested_absmax", [nested], "float32", "quant_state", false));
    out.push(trainTensor(name + ".nested_quant_map", [BigInt(constants.dynamic_codes)], "float32", "quant_state", false));
    out.push(trainTensor(name + ".nested_offset", [], "float32", "quant_state", false));
  }

  /** adapters.held_tensors: every tensor the run holds, in the model's order. */
  function heldTensors(tensors, request, training) {
    var model = new TrainModel(tensors, training);
    var base = weightDtype(request.precision);
    if (request.method === "full") {
      return model.params.map(function (p) {
        return trainTensor(p.name, p.shape, p.float32 ? "float32" : base, "base", !p.frozen);
      });
    }
    var converted = model.converted(request.loraTargets);
    var ranks = {};
    Object.keys(converted.multiples).forEach(function (leaf) {
      ranks[leaf] = request.loraR * BigInt(converted.multiples[leaf]);
    });
    var targets = model.loraTargets(converted.names, converted.parameters.length > 0);
    var quantized = QUANTIZED_METHODS.indexOf(request.method) >= 0 ? model.quantizedLinears() : {};
    var wrapped = model.wrappedParameters(converted.parameters, request.method, targets, quantized);
    model.checkMamba(targets, wrapped);
    var qlora = QUANTIZED_METHODS.indexOf(request.method) >= 0;
    var byModule = {};
    model.params.forEach(function (p) {
      (byModule[p.module] = byModule[p.module] || []).push(p);
    });
    var holders = Object.keys(wrapped);
    var out = [];
    model.params.forEach(function (p) {
      var module = p.module;
      var levels = has(wrapped, module) ? wrapped[module].length : 0;
      var holder = null;
      for (var h = 0; h < holders.length; h++) {
        if (under(module, holders[h])) {
          holder = holders[h];
          break;
        }
      }
      var prefix;
      if (has(targets, module)) {
        prefix = module + ".base_layer." + p.leaf;
      } else if (holder !== null) {
        prefix = holder + new Array(wrapped[holder].length + 1).join(".base_layer") +
          p.name.slice(holder.length);
      } else {
        prefix = p.name;
      }
      var dtype = qlora || p.float32 ? "float32" : base;
      if (has(quantized, module) && p.leaf === "weight") {
        quantizedTensors(prefix, p.elements, request.doubleQuant, training.constants, out);
      } else if (has(quantized, module)) {
        // adapters._held: a 4-bit layer's bias is cast to the compute dtype at the first forward
        out.push(trainTensor(prefix, p.shape, base, "base", false));
      } else {
        out.push(trainTensor(prefix, p.shape, dtype, "base", false));
      }
      if (has(targets, module) && p.leaf === "weight") adapterTensors(module, p, request, out);
      var mine = byModule[module];
      if (mine[mine.length - 1] === p && levels) {
        wrapped[module].forEach(function (leaf, index) {
          var target = mine.filter(function (q) {
            return q.leaf === leaf;
          })[0];
          var at = module + new Array(levels - index).join(".base_layer");
          var rank = has(ranks, leaf) ? ranks[leaf] : request.loraR;
          parameterAdapters(at, target, has(tensors.transposed, module), rank, out);
        });
      }
    });
    Object.keys(tensors.tiedHeads).forEach(function (module) {
      if (has(targets, module)) {
        var tied = tensors.tiedHeads[module];
        adapterTensors(module, trainParam(module + ".weight", tied.shape, false, "linear", false),
          request, out);
      }
    });
    return out;
  }

  function stateItem(kind, name, shape, dtype, device) {
    return {
      kind: kind, name: name, shape: shape, dtype: dtype,
      bytes: elementsOf(shape) * DTYPE_BYTES[dtype], device: device || "gpu",
    };
  }

  /** states.check_request: a fused mode only where the optimizer has one. */
  function checkTrainRequest(request) {
    if (request.fused && TRAIN_FUSED.indexOf(request.optimizer) < 0) {
      trainRefuse("fused_unsupported", { name: request.optimizer });
    }
  }

  /** states.state_items: the gradient, master copies and optimizer states of one tensor. */
  function stateItems(tensor, request, constants) {
    if (!tensor.trainable) return [];
    var shape = tensor.shape;
    var items = [stateItem("gradient", "grad", shape, tensor.dtype)];
    var stepped = tensor.dtype;
    if (request.precision === "bf16-master" && (tensor.dtype === "bfloat16" || tensor.dtype === "float16")) {
      stepped = "float32";
      items.push(stateItem("master_weight", "master", shape, "float32"));
      items.push(stateItem("master_gradient", "master_grad", shape, "float32"));
    }
    var optimizer = request.optimizer;
    var stepDevice = request.fused ? "gpu" : "host";
    if (optimizer === "adamw" || optimizer === "adamw-amsgrad") {
      items.push(stateItem("optimizer", "step", [], "float32", stepDevice));
      items.push(stateItem("optimizer", "exp_avg", shape, stepped));
      items.push(stateItem("optimizer", "exp_avg_sq", shape, stepped));
      if (optimizer === "adamw-amsgrad") items.push(stateItem("optimizer", "max_exp_avg_sq", shape, stepped));
    } else if (optimizer === "sgd-momentum") {
      items.push(stateItem("optimizer", "momentum_buffer", shape, stepped));
    } else if (optimizer === "adafactor") {
      items.push(stateItem("optimizer", "step", [], "float32", "host"));
      if (shape.length >= 2) {
        items.push(stateItem("optimizer", "row_var", shape.slice(0, -1).concat([1n]), stepped));
        items.push(stateItem("optimizer", "col_var",
          shape.slice(0, -2).concat([1n, shape[shape.length - 1]]), stepped));
      } else {
        items.push(stateItem("optimizer", "variance", shape, stepped));
      }
    } else if (optimizer === "adamw-8bit") {
      if (tensor.elements < BigInt(constants.min_8bit_size)) {
        items.push(stateItem("optimizer", "state1", shape, "float32"));
        items.push(stateItem("optimizer", "state2", shape, "float32"));
      } else {
        var blocks = (tensor.elements + BigInt(constants.block_8bit) - 1n) / BigInt(constants.block_8bit);
        items.push(stateItem("optimizer", "state1", shape, "uint8"));
        items.push(stateItem("optimizer", "state2", shape, "uint8"));
        items.push(stateItem("optimizer", "absmax1", [blocks], "float32"));
        items.push(stateItem("optimizer", "absmax2", [blocks], "float32"));
      }
    }
    return items;
  }

  /** states.shared_items: bitsandbytes' two maps, GradScaler's scale and growth tracker. */
  function sharedItems(tensors, request, constants) {
    var items = [];
    var eightBit = tensors.some(function (t) {
      return t.trainable && t.elements >= BigInt(constants.min_8bit_size);
    });
    if (request.optimizer === "adamw-8bit" && eightBit) {
      items.push(stateItem("optimizer", "qmap1", [BigInt(constants.qmap_values)], "float32"));
      items.push(stateItem("optimizer", "qmap2", [BigInt(constants.qmap_values)], "float32"));
    }
    if (request.precision === "autocast-fp16") {
      items.push(stateItem("optimizer", "scale", [], "float32"));
      items.push(stateItem("optimizer", "growth_tracker", [], "int32"));
    }
    return items;
  }

  var RANK_KINDS = ["parameters", "quant_states", "gradients", "optimizer", "master_weights",
    "master_gradients", "host", "padding"];
  var ITEM_KINDS = { gradient: "gradients", optimizer: "optimizer", master_weight: "master_weights",
    master_gradient: "master_gradients" };

  function Tally(gpus) {
    this.gpus = gpus;
    this.kinds = [];
    for (var r = 0; r < gpus; r++) {
      var kinds = {};
      RANK_KINDS.forEach(function (k) {
        kinds[k] = 0n;
      });
      this.kinds.push(kinds);
    }
  }

  Tally.prototype.add = function (kind, amounts, padding) {
    for (var r = 0; r < this.gpus; r++) {
      var amount = Array.isArray(amounts) ? amounts[r] : amounts;
      var pad = padding === undefined ? 0n : Array.isArray(padding) ? padding[r] : padding;
      this.kinds[r][kind] += amount;
      if (kind !== "host") this.kinds[r].padding += pad;
    }
  };

  function itemKind(item) {
    return item.device === "host" ? "host" : ITEM_KINDS[item.kind];
  }

  function elementBytes(dtype) {
    if (!has(DTYPE_BYTES, dtype)) trainRefuse("shard_dtype", { dtype: dtype });
    return DTYPE_BYTES[dtype];
  }

  function itemElementBytes(item) {
    var elements = elementsOf(item.shape);
    return elements ? item.bytes / elements : elementBytes(item.dtype);
  }

  function stateShape(tensor, item) {
    if (item.shape.length === 0) return "whole";
    if (item.shape.length === tensor.shape.length && item.shape.every(function (s, i) {
      return s === tensor.shape[i];
    })) {
      return "rows";
    }
    trainRefuse("shard_state_shape", { name: item.name, tensor: tensor.name });
    return null;
  }

  function ceilDiv(a, b) {
    return (a + b - 1n) / b;
  }

  /** sharding.fsdp2_rows: each rank's real rows (torch.chunk, then empty chunks). */
  function fsdp2Rows(rows, gpus) {
    var chunk = ceilDiv(rows, BigInt(gpus));
    var out = [];
    for (var r = 0; r < gpus; r++) {
      var left = rows - BigInt(r) * chunk;
      out.push(left < 0n ? 0n : left < chunk ? left : chunk);
    }
    return out;
  }

  function shardFsdp2(tally, tensors, states, gpus) {
    var lastRankRows = null;
    tensors.forEach(function (tensor) {
      var size = elementBytes(tensor.dtype);
      if (tensor.role === "quant_state") {
        tally.add("quant_states", tensor.elements * size);
        return;
      }
      if (!tensor.shape.length) trainRefuse("shard_scalar", { tensor: tensor.name });
      var rows = tensor.shape[0];
      var rowElements = rows ? tensor.elements / rows : 0n;
      var real = fsdp2Rows(rows, gpus);
      var padded = ceilDiv(rows, BigInt(gpus));
      tally.add("parameters", padded * rowElements * size, real.map(function (mine) {
        return (padded - mine) * rowElements * size;
      }));
      (tensor.trainable ? states[tensor.name] || [] : []).forEach(function (item) {
        var itemSize = itemElementBytes(item);
        if (stateShape(tensor, item) === "whole") {
          tally.add(itemKind(item), item.bytes);
        } else if (item.kind === "gradient" && item.device === "gpu") {
          tally.add("gradients", padded * rowElements * itemSize, real.map(function (mine) {
            return (padded - mine) * rowElements * itemSize;
          }));
        } else {
          tally.add(itemKind(item), real.map(function (mine) {
            return mine * rowElements * itemSize;
          }));
        }
      });
      lastRankRows = (lastRankRows || 0n) + real[gpus - 1];
    });
    if (lastRankRows === 0n) trainRefuse("shard_empty_rank", { gpus: String(gpus) });
  }

  function zero3SubGroups(partitions, size) {
    var total = partitions.reduce(function (t, p) {
      return t + p;
    }, 0n);
    if (!partitions.length || size >= total) return partitions.length ? 1n : 0n;
    var groups = 0n;
    var running = 0n;
    partitions.forEach(function (p, index) {
      running += p;
      if (running >= size || index === partitions.length - 1) {
        groups += 1n;
        running = 0n;
      }
    });
    return groups;
  }

  function shardZero(tally, tensors, states, stage, gpus, constants) {
    var n = BigInt(gpus);
    var sharded = { optimizer: true, master_weight: true, master_gradient: true };
    if (stage >= 2) sharded.gradient = true;
    var trainable = tensors.filter(function (t) {
      return t.trainable && t.role !== "quant_state";
    });
    var dtypes = [];
    trainable.forEach(function (t) {
      if (dtypes.indexOf(t.dtype) < 0) dtypes.push(t.dtype);
    });
    dtypes.sort();
    if (stage < 3 && dtypes.length > 1) trainRefuse("shard_dtypes", { stage: String(stage) });
    var partition;
    var real = [];
    var flatParameters;
    var r;
    if (stage < 3) {
      var total = trainable.reduce(function (t, x) {
        return t + x.elements;
      }, 0n);
      var alignment = BigInt(constants.zero_alignment_factor) * n;
      partition = ceilDiv(total, alignment) * alignment / n;
      for (r = 0; r < gpus; r++) {
        var left = total - BigInt(r) * partition;
        real.push(left < 0n ? 0n : left < partition ? left : partition);
      }
      flatParameters = trainable.length ? 1n : 0n;
    } else {
      var partitions = trainable.map(function (t) {
        return ceilDiv(t.elements, n);
      });
      partition = partitions.reduce(function (t, p) {
        return t + p;
      }, 0n);
      for (r = 0; r < gpus; r++) {
        var mine = 0n;
        trainable.forEach(function (t, i) {
          var rest = t.elements - BigInt(r) * partitions[i];
          mine += rest < 0n ? 0n : rest < partitions[i] ? rest : partitions[i];
        });
        real.push(mine);
      }
      flatParameters = zero3SubGroups(partitions, BigInt(constants.zero3_sub_group_size));
    }
    if (trainable.length && real[gpus - 1] <= 0n) {
      var busy = false;
      if (stage === 3) {
        busy = tensors.some(function (t) {
          if (t.role === "quant_state" || t.trainable) return false;
          return t.elements - (n - 1n) * ceilDiv(t.elements, n) > 0n;
        });
      }
      if (!busy) trainRefuse("shard_empty_rank", { gpus: String(gpus) });
    }
    tensors.forEach(function (tensor) {
      var size = elementBytes(tensor.dtype);
      if (tensor.role === "quant_state") {
        tally.add("quant_states", tensor.elements * size);
      } else if (stage === 3) {
        var part = ceilDiv(tensor.elements, n);
        var pads = [];
        for (var q = 0; q < gpus; q++) {
          var rest = tensor.elements - BigInt(q) * part;
          pads.push((part - (rest < 0n ? 0n : rest < part ? rest : part)) * size);
        }
        tally.add("parameters", part * size, pads);
      } else if (!tensor.trainable) {
        tally.add("parameters", tensor.elements * size);
      }
    });
    if (stage < 3 && trainable.length) {
      var flatSize = elementBytes(dtypes[0]);
      var flat = partition * n;
      var sum = trainable.reduce(function (t, x) {
        return t + x.elements;
      }, 0n);
      tally.add("parameters", flat * flatSize, (flat - sum) * flatSize);
    }
    var families = [];
    var familyKeys = {};
    trainable.forEach(function (tensor) {
      (states[tensor.name] || []).forEach(function (item) {
        var scalar = stateShape(tensor, item) === "whole";
        if (has(sharded, item.kind)) {
          var key = [item.kind, item.name, item.dtype, item.device].join("\u0000");
          if (!has(familyKeys, key)) families.push(key);
          familyKeys[key] = { item: item, size: itemElementBytes(item), scalar: scalar };
        } else {
          tally.add(itemKind(item), item.bytes);
        }
      });
    });
    families.forEach(function (key) {
      var entry = familyKeys[key];
      var target = entry.item.device === "host" ? "host" : ITEM_KINDS[entry.item.kind];
      if (entry.scalar) {
        tally.add(target, flatParameters * entry.size);
      } else {
        tally.add(target, partition * entry.size, real.map(function (mine) {
          return (partition - mine) * entry.size;
        }));
      }
    });
  }

  /** sharding.shard_plan: each rank's bytes per kind. */
  function shardPlan(tensors, states, shard, gpus, constants) {
    if (TRAIN_SHARDS.indexOf(shard) < 0) trainRefuse("shard_mode");
    if (gpus < 1) trainRefuse("gpus");
    if (shard === "none" && gpus > 1) trainRefuse("gpus_unsharded", { gpus: String(gpus) });
    var tally = new Tally(gpus);
    if (shard === "none") {
      tensors.forEach(function (tensor) {
        tally.add(tensor.role === "quant_state" ? "quant_states" : "parameters",
          tensor.elements * elementBytes(tensor.dtype));
        (tensor.trainable ? states[tensor.name] || [] : []).forEach(function (item) {
          tally.add(itemKind(item), item.bytes);
        });
      });
    } else if (shard === "fsdp2") {
      shardFsdp2(tally, tensors, states, gpus);
    } else {
      shardZero(tally, tensors, states, Number(shard.slice(-1)), gpus, constants);
    }
    return tally.kinds.map(function (kinds, rank) {
      var gpu = kinds.parameters + kinds.quant_states + kinds.gradients + kinds.optimizer +
        kinds.master_weights + kinds.master_gradients;
      return record(kinds, { rank: rank, gpu: gpu });
    });
  }

  /**
   * The training form's values read as `iteragpu train` reads its options (train_request):
   * {ok: true, request} or {ok: false, field, reason}.
   */
  function trainRequest(form, decimalComma) {
    var request = {
      method: String(form.method), precision: String(form.precision),
      optimizer: String(form.optimizer), shard: String(form.shard),
      fused: form.fused === true || form.fused === "true",
      doubleQuant: form.double_quant === true || form.double_quant === "true",
    };
    var text = String(form.lora_targets || "");
    if (text.replace(STRIP, "") === "") {
      request.loraTargets = null;
    } else {
      var names = text.split(",").map(function (name) {
        return name.replace(STRIP, "");
      }).filter(Boolean);
      if (!names.length) return { ok: false, field: "lora_targets", reason: "no_names" };
      request.loraTargets = names;
    }
    var rank = parseCount(form.lora_r, TRAIN_MAX_RANK, decimalComma);
    if (!rank.ok) return { ok: false, field: "lora_r", reason: rank.reason };
    request.loraR = rank.value;
    var gpus = parseCount(form.gpus, TRAIN_MAX_GPUS, decimalComma);
    if (!gpus.ok) return { ok: false, field: "gpus", reason: gpus.reason };
    request.gpus = Number(gpus.value);
    return { ok: true, request: request };
  }

  /**
   * iteragpu.training.plan for a pasted config and the training form (its fields' text, as
   * the page holds them): {valid: true, ...the plan's figures} or {valid: false, reason,
   * values} (a refused config: its reason and key, as the config reader's).
   */
  function trainingPlan(text, form, data, decimalComma) {
    var read = trainRequest(form, decimalComma);
    if (!read.ok) return { valid: false, reason: read.reason, field: read.field, values: {} };
    var request = read.request;
    var training = get(data, "training");
    var constants = training.constants;
    try {
      checkTrainRequest(request);
      var c = parseConfig(readJson(String(text)), data.families, data);
      if (c.quantizationMethod !== null) {
        trainRefuse(QUANTIZED_METHODS.indexOf(request.method) >= 0
          ? "qlora_quantized_checkpoint"
          : "quantized_checkpoint",
          { method: c.quantizationMethod });
      }
      var model = modelTensors(c, data);
      var tensors = heldTensors(model, request, training);
      var states = {};
      tensors.forEach(function (t) {
        if (t.trainable) states[t.name] = stateItems(t, request, constants);
      });
      var shared = sharedItems(tensors, request, constants);
      var ranks = shardPlan(tensors, states, request.shard, request.gpus, constants);
    } catch (error) {
      if (error instanceof TrainFailure) {
        return { valid: false, reason: error.reason, values: error.values };
      }
      if (error instanceof ConfigFailure) {
        return { valid: false, reason: error.reason, values: { key: error.key }, config: true };
      }
      throw error;
    }
    var sharedGpu = shared.reduce(function (t, item) {
      return item.device === "gpu" ? t + item.bytes : t;
    }, 0n);
    var first = ranks.reduce(function (best, rank) {
      return rank.gpu > best.gpu ? rank : best;
    });
    var roles = [];
    ROLES.forEach(function (role) {
      var held = tensors.filter(function (t) {
        return t.role === role;
      });
      if (!held.length) return;
      roles.push({
        role: role,
        tensors: held.length,
        elements: held.reduce(function (t, x) {
          return t + x.elements;
        }, 0n),
        trainable: held.some(function (t) {
          return t.trainable;
        }),
        bytes: held.reduce(function (t, x) {
          return t + x.elements * DTYPE_BYTES[x.dtype];
        }, 0n),
      });
    });
    var trainable = tensors.filter(function (t) {
      return t.trainable;
    });
    return {
      valid: true,
      request: request,
      modelType: c.modelType,
      parameters: model.params.reduce(function (t, p) {
        return t + p.elements;
      }, 0n),
      trainableParameters: trainable.reduce(function (t, x) {
        return t + x.elements;
      }, 0n),
      trainableTensors: trainable.length,
      roles: roles,
      weightsBytes: first.parameters + first.quant_states,
      gradientsBytes: first.gradients,
      optimizerBytes: first.optimizer + sharedGpu,
      hostBytes: first.host,
      masterWeightsBytes: first.master_weights,
      masterGradientsBytes: first.master_gradients,
      modelStatesBytes: first.gpu + sharedGpu,
      ranks: ranks.map(function (rank) {
        return { rank: rank.rank, modelStatesBytes: rank.gpu + sharedGpu, paddingBytes: rank.padding };
      }),
      firstToFill: first.rank,
    };
  }

  // ------------------------------------------------------------------------------------------
  // DOM
  // ------------------------------------------------------------------------------------------

  var PRESET = "data-sizer-preset"; // the weight-format select: 16, 8, 4 or custom
  var OUTPUT_IDS = [
    "weights-gib", "range-gib", "kv-bytes", "kv-gib", "kv-bytes-per-token", "state-bytes",
    "model-total-gib",
  ];

  /** The query of a URL's search string, over the defaults. */
  function queryFromSearch(search, defaults) {
    var params = new URLSearchParams(search);
    var query = {};
    Object.keys(defaults).forEach(function (key) {
      if (params.has(key)) query[key] = params.get(key);
    });
    return merge(query, defaults);
  }

  function searchFromQuery(query, defaults) {
    var params = new URLSearchParams();
    Object.keys(defaults).forEach(function (key) {
      params.set(key, query[key]);
    });
    return "?" + params.toString();
  }

  function Sizer(doc, win, data) {
    this.doc = doc;
    this.win = win;
    this.data = data;
    this.data.cards = loadCatalog(data.catalog);
    var lang = doc.documentElement.lang;
    this.symbols = data.symbols[lang] || data.symbols[data.lang];
    this.form = doc.getElementById("sizer-form");
    this.preset = this.form.querySelector("[" + PRESET + "]");
    this.fields = {};
    var fields = this.fields;
    Array.prototype.forEach.call(this.form.querySelectorAll("[data-sizer-key]"), function (el) {
      fields[el.getAttribute("data-sizer-key")] = el;
    });
    this.results = doc.getElementById("sizer-results");
    this.errorBox = doc.getElementById("sizer-error");
    this.errorList = doc.getElementById("sizer-error-list");
    this.messages = doc.getElementById("sizer-messages");
    this.quantizationNote = doc.getElementById("sizer-quantization-note");
    this.table = doc.getElementById("sizer-candidates");
    // Each cell's column name, which the narrow-screen layout shows beside the value.
    this.columnNames = Array.prototype.map.call(this.table.tHead.rows[0].cells, function (th) {
      return th.textContent.trim();
    });
    this.checklists = doc.querySelectorAll("[data-task-checklist]");
    this.outputs = OUTPUT_IDS.map(function (id) {
      return doc.getElementById(id);
    }).filter(Boolean);
    this.chart = doc.getElementById("memory-chart");
    this.kvKinds = doc.getElementById("sizer-kv-kinds");
    this.configText = doc.getElementById("sizer-config-text");
    this.modelPreset = doc.getElementById("sizer-preset"); // published configs by name
    this.configFile = doc.getElementById("sizer-config-file");
    this.configStatus = doc.getElementById("sizer-config-status");
    this.mlaLayout = doc.getElementById("sizer-mla-layout");
    this.mlaField = this.mlaLayout ? this.mlaLayout.closest("[data-sizer-mla]") : null;
    // Several GPUs (renderSplit): its own fields, kept apart from the single-GPU query.
    this.splitBox = doc.getElementById("sizer-split");
    this.splitMessages = doc.getElementById("sizer-split-messages");
    this.splitFields = {};
    var splitFields = this.splitFields;
    Array.prototype.forEach.call(doc.querySelectorAll("[data-sizer-split-key]"), function (el) {
      splitFields[el.getAttribute("data-sizer-split-key")] = el;
    });
    this.splitRead = null; // the config read last, which the split places
    // What fits, solved backwards (renderFit): the split above on one catalogue card.
    this.fitBox = doc.getElementById("sizer-fit");
    this.fitMessages = doc.getElementById("sizer-fit-messages");
    this.fitFields = {};
    var fitFields = this.fitFields;
    Array.prototype.forEach.call(doc.querySelectorAll("[data-sizer-fit-key]"), function (el) {
      fitFields[el.getAttribute("data-sizer-fit-key")] = el;
    });
  }

  Sizer.prototype.message = function (attribute, key) {
    // The page's messages never change: each is looked up once (dozens are read per edit).
    var cache = this.messageCache || (this.messageCache = {});
    var id = attribute + "=" + key;
    if (!has(cache, id)) {
      var el = this.messages.querySelector("[" + attribute + '="' + key + '"]');
      cache[id] = el ? el.textContent.trim() : key;
    }
    return cache[id];
  };

  Sizer.prototype.label = function (key) {
    var el = key === "bits" && this.preset.value !== "custom" ? this.preset : this.fields[key];
    var label = el && el.id ? this.doc.querySelector('label[for="' + el.id + '"]') : null;
    return label ? label.textContent.trim() : key;
  };

  /** Put a query into the form. */
  Sizer.prototype.fill = function (query) {
    var fields = this.fields;
    Object.keys(fields).forEach(function (key) {
      fields[key].value = query[key];
    });
    var presets = Array.prototype.map.call(this.preset.options, function (o) {
      return o.value;
    });
    this.preset.value =
      query.bits !== "custom" && presets.indexOf(query.bits) >= 0 ? query.bits : "custom";
    this.showCustomBits();
    this.syncLayoutFields();
  };

  Sizer.prototype.showCustomBits = function () {
    var custom = this.preset.value === "custom";
    var wrapper = this.fields.bits.closest("[data-sizer-custom-bits]") || this.fields.bits;
    setHidden(wrapper, !custom);
  };

  /** The query the form holds. */
  Sizer.prototype.read = function () {
    var query = {};
    var fields = this.fields;
    Object.keys(fields).forEach(function (key) {
      query[key] = fields[key].value;
    });
    if (this.preset.value !== "custom") query.bits = this.preset.value;
    return merge(query, this.data.defaults);
  };

  Sizer.prototype.render = function (result) {
    var self = this;
    var doc = this.doc;
    var empty = this.results.getAttribute("data-empty") || "";
    Object.keys(this.fields).forEach(function (key) {
      self.fields[key].removeAttribute("aria-invalid");
      self.fields[key].removeAttribute("aria-describedby");
    });
    this.preset.removeAttribute("aria-invalid");
    this.preset.removeAttribute("aria-describedby");
    var body = this.table.tBodies[0];

    var task = result.query.task;
    var taskKnown = this.data.tasks.indexOf(task) >= 0;
    Array.prototype.forEach.call(this.checklists, function (el) {
      setHidden(el, !(taskKnown && el.getAttribute("data-task-checklist") === task));
    });

    if (!result.valid) {
      this.outputs.forEach(function (output) {
        patchContent(doc, output, empty);
      });
      patchContent(doc, body, []);
      patchContent(doc, this.errorList, result.errors.map(function (error) {
        var el = error.field === "bits" && self.preset.value !== "custom"
          ? self.preset
          : self.fields[error.field];
        var id = "sizer-error-" + error.field;
        if (el) {
          // The field names its error, which a screen reader reads with it.
          el.setAttribute("aria-invalid", "true");
          el.setAttribute("aria-describedby", id);
        }
        return htmlNode("li", { id: id, "data-field": error.field, "data-reason": error.reason },
          self.label(error.field) +
          ": " +
          self.words("data-reason", error.reason, suffixReadingTexts(error, self.symbols)));
      }));
      setHidden(this.errorBox, false);
      setHidden(this.quantizationNote, true);
      setAttr(this.results, "data-state", "error");
      this.renderKinds(result);
      this.drawChart(result);
      return;
    }

    var shown = texts(result, this.symbols);
    this.outputs.forEach(function (output) {
      patchContent(doc, output, shown[output.id]);
    });
    patchContent(doc, this.errorList, []);
    setHidden(this.errorBox, true);
    setHidden(this.quantizationNote, !result.quantizationNotCounted);
    setAttr(this.results, "data-state", "ok");
    this.renderKinds(result);
    this.drawChart(result);
    var sheets = this.data.sheets || {};
    patchContent(doc, body, result.candidates.map(function (c) {
      var cells = [
        ["card", c.name],
        ["nominal-gb", c.nominalGb === null ? "" : formatNumber(c.nominalGb, 0, self.symbols)],
        [
          "declared-gib",
          c.declaredGib === null
            ? self.message("data-text", "unknown")
            : formatNumber(c.declaredGib, 2, self.symbols),
        ],
        [
          "paper-margin-gib",
          c.paperMarginBytes === null
            ? self.message("data-text", "unknown")
            : formatNumber(gib(rational(c.paperMarginBytes)), 2, self.symbols) + " (" +
              self.message("data-text", "basis_short_" + c.paperBasis) + ")",
        ],
        [
          "cost",
          c.cost === null
            ? self.message("data-text", "unknown") // price unknown, never 0
            : formatNumber(c.cost, 2, self.symbols) + " " + c.currency,
        ],
        ["memory", c.requirements.memory],
        ["package", c.requirements.package],
        ["overall", c.status],
        ["why", c.reasons.memory],
      ];
      var row = {
        "data-card-id": c.id,
        "data-status": c.status,
        "data-rank": c.rank === null ? "" : String(c.rank),
      };
      return htmlNode("tr", row, cells.map(function (cell, index) {
        var attributes = { "data-column": cell[0], "data-label": self.columnNames[index] || "" };
        var content = cell[1];
        if (cell[0] === "memory" || cell[0] === "package" || cell[0] === "overall") {
          attributes["data-status"] = cell[1];
          content = self.message("data-status", cell[1]);
        } else if (cell[0] === "why") {
          attributes["data-memory-reason"] = cell[1];
          content = self.message("data-memory-reason", cell[1]);
        } else if (cell[0] === "card" && sheets[c.id]) {
          content = [htmlNode("a", { href: sheets[c.id] }, cell[1])];
        }
        return htmlNode("td", attributes, content);
      }));
    }));
  };

  /** A text of the page's messages: `attribute`="key", with {name} fields filled. */
  Sizer.prototype.words = function (attribute, key, values) {
    return fillTemplate(this.message(attribute, key), values || {});
  };

  /** The chart and its text alternative, for a result (nothing drawn for an invalid one). */
  Sizer.prototype.drawChart = function (result) {
    var figure = this.chart;
    if (!figure) return;
    var doc = this.doc;
    var plot = this.chartPlot || (this.chartPlot = figure.querySelector("[data-chart-plot]"));
    var text = this.chartText || (this.chartText = doc.getElementById("memory-chart-text"));
    if (!result.valid) {
      setAttr(figure, "data-state", "error");
      patchContent(doc, plot, []);
      patchContent(doc, text, this.results.getAttribute("data-empty") || "");
      return;
    }
    setAttr(figure, "data-state", "ok");
    var self = this;
    var symbols = this.symbols;
    var model = chartModel(result, this.data.cards);
    var gibText = function (bytes) {
      return formatNumber(gib(bytes), 2, symbols);
    };

    // Measured once, on an empty plot (reading it forces a layout inside the input handler),
    // again on resize.
    if (!this.chartWidth) {
      patchContent(doc, plot, []);
      this.chartWidth = Math.max(280, Math.floor(plot.clientWidth || 640));
    }
    var width = this.chartWidth;
    var labelWidth = Math.min(150, Math.round(width * 0.32));
    var plotWidth = width - labelWidth - 18;
    var rowHeight = 22;
    var needHeight = 30;
    var cardsTop = 8 + needHeight + 8;
    var axisY = cardsTop + model.cards.length * rowHeight + 4;
    var height = axisY + 38;
    var maxGib = gibFloat(model.maxBytes) * 1.03;
    var step = tickStep(maxGib);
    var axisMax = Math.ceil(maxGib / step) * step;
    var x = function (bytes) {
      return labelWidth + (plotWidth * Math.min(gibFloat(bytes), axisMax)) / axisMax;
    };
    var beyondAxis = function (bytes) {
      return gibFloat(bytes) > axisMax;
    };
    var marks = [
      keyed("defs", svgNode("defs", {}, [
        svgNode("pattern", {
          id: "memory-chart-kv-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
          patternTransform: "rotate(45)",
        }, [
          svgNode("rect", { width: 6, height: 6, class: "sizer-chart-kv-ground" }),
          svgNode("line", { x1: 1, y1: 0, x2: 1, y2: 6, class: "sizer-chart-kv-hatch" }),
        ]),
      ])),
    ];

    // The axis in GiB: grid lines, ticks in the page's number format, the unit.
    var decimals = step < 1 ? (step < 0.1 ? 2 : 1) : 0;
    for (var i = 0; i * step <= axisMax * 1.0001; i += 1) {
      var value = i * step;
      var tx = labelWidth + (plotWidth * value) / axisMax;
      marks.push(keyed("grid " + i, svgNode("line", {
        x1: tx, x2: tx, y1: 6, y2: axisY, class: "sizer-chart-grid",
      })));
      var scaled = rational(BigInt(Math.round(value * 100)), 100n);
      marks.push(keyed("tick " + i, svgNode("text", {
        x: tx, y: axisY + 15, "text-anchor": "middle", class: "sizer-chart-tick",
      }, formatNumber(scaled, decimals, symbols))));
    }
    marks.push(keyed("unit", svgNode("text", {
      x: labelWidth + plotWidth, y: axisY + 33, "text-anchor": "end", class: "sizer-chart-unit",
    }, this.words("data-chart-text", "axis"))));

    // The need: weights, reserve, then the KV cache, hatched.
    marks.push(keyed("need", svgNode("text", {
      x: labelWidth - 8, y: 8 + needHeight / 2 + 4, "text-anchor": "end",
      class: "sizer-chart-label",
    }, this.words("data-chart-text", "need_label"))));
    model.segments.forEach(function (segment) {
      marks.push(keyed("segment " + segment.key, svgNode("rect", {
        x: x(segment.start),
        y: 12,
        width: Math.max(0, x(segment.end) - x(segment.start)),
        height: needHeight - 8,
        class: "sizer-chart-" + segment.key,
        "data-segment": segment.key,
        "data-bytes": exact(segment.bytes),
      }, [
        svgNode("title", {},
          self.words("data-chart-text", "segment_" + segment.key) + " " +
          gibText(segment.bytes) + " GiB"),
      ])));
    });
    [["range", model.segments[1].end], ["kv", model.segments[2].end]].forEach(function (guide) {
      var gx = x(guide[1]);
      marks.push(keyed("guide " + guide[0], svgNode("line", {
        x1: gx, x2: gx, y1: 10, y2: axisY, class: "sizer-chart-guide-" + guide[0],
        "data-guide": guide[0],
      })));
    });

    // One row per card to check: its declared capacity (a bar, upper half) and its nominal
    // figure read as decimal GB (a hollow triangle, lower half): neither is a bound. The row's
    // label and marks say whether the rough range is within its capacity on paper.
    var items = [];
    model.cards.forEach(function (card, index) {
      var top = cardsTop + index * rowHeight;
      var nominal = card.nominalBytes === null
        ? self.words("data-chart-text", "nominal_unknown")
        : self.words("data-chart-text", "nominal", {
          gb: formatNumber(card.nominalGb, 0, symbols),
          gib: gibText(card.nominalBytes),
        });
      var declared = card.declaredBytes === null
        ? self.words("data-chart-text", "declared_unknown")
        : self.words("data-chart-text", "declared", { gib: gibText(card.declaredBytes) });
      var paper = card.paper === null
        ? self.words("data-chart-text", "paper_unknown")
        : self.words("data-chart-text", "paper_" + card.paper, {
          gib: gibText(rational(card.paperMarginBytes)),
          basis: self.message("data-text", "basis_" + card.paperBasis),
        });
      var sentence = self.words("data-chart-text", "card", {
        card: card.name, nominal: nominal, declared: declared, paper: paper,
      });
      var paperClass = card.paper === null ? "" : " sizer-chart-" + card.paper;
      var label = {
        x: labelWidth - 8, y: top + rowHeight / 2 + 4, "text-anchor": "end",
        class: "sizer-chart-label" + paperClass,
      };
      if (card.paper !== null) label["data-paper"] = card.paper;
      marks.push(keyed("label " + card.id, svgNode("text", label, card.name)));
      if (card.declaredBytes !== null) {
        var dx = x(card.declaredBytes);
        marks.push(keyed("declared " + card.id, svgNode("rect", {
          x: dx - 1.5, y: top + 2, width: 3, height: rowHeight / 2 - 2,
          class: "sizer-chart-declared" + paperClass, "data-mark": "declared",
          "data-card-id": card.id, "data-clipped": beyondAxis(card.declaredBytes) ? "true" : "false",
        }, [svgNode("title", {}, sentence)])));
      }
      if (card.nominalBytes !== null) {
        var nx = x(card.nominalBytes);
        var y0 = top + rowHeight / 2 + 1;
        marks.push(keyed("nominal " + card.id, svgNode("path", {
          d: "M" + nx + " " + y0 + "l-4.5 8h9z",
          class: "sizer-chart-nominal" + paperClass, "data-mark": "nominal",
          "data-card-id": card.id, "data-clipped": beyondAxis(card.nominalBytes) ? "true" : "false",
        }, [svgNode("title", {}, sentence)])));
      }
      var item = { "data-card-id": card.id };
      if (card.paper !== null) item["data-paper"] = card.paper;
      items.push(htmlNode("li", item, sentence));
    });
    patchContent(doc, plot, [
      keyed("chart", svgNode("svg", {
        width: width,
        height: height,
        viewBox: "0 0 " + width + " " + height,
        role: "img",
        "aria-label": this.words("data-chart-text", "title"),
        "aria-describedby": "memory-chart-text",
      }, marks)),
    ]);

    var alternative = [
      keyed("need", htmlNode("p", {}, this.words("data-chart-text", "need", {
        weights: gibText(result.weightsBytes),
        reserve: gibText(result.reserveBytes),
        range: gibText(result.totalBytes),
        kv: gibText(add(result.kvCacheBytes, result.stateBytes || rational(0n))),
        total: gibText(result.modelTotalBytes),
      }))),
      keyed("cards", htmlNode("ul", {}, items)),
    ];
    if (model.excluded.length) {
      alternative.push(keyed("excluded", htmlNode("p", {
        "data-chart-excluded": model.excluded.map(function (c) {
          return c.id;
        }).join(" "),
      }, this.words("data-chart-text", "excluded", {
        cards: model.excluded.map(function (c) {
          return c.name;
        }).join(", "),
      }))));
    }
    patchContent(doc, text, alternative);
  };

  /** The KV cache per layer kind, one row each. */
  Sizer.prototype.renderKinds = function (result) {
    if (!this.kvKinds) return;
    var body = this.kvKinds.tBodies[0];
    var doc = this.doc;
    if (!result.valid) {
      patchContent(doc, body, []);
      return;
    }
    var self = this;
    patchContent(doc, body, result.kvGroups.map(function (g) {
      return keyed(g.kind, htmlNode("tr", { "data-kind": g.kind }, [
        ["kind", self.message("data-layer-kind", g.kind)],
        ["count", formatNumber(rational(g.count), 0, self.symbols)],
        [
          "window",
          g.window === null
            ? self.message("data-text", "no_window")
            : formatNumber(rational(g.window), 0, self.symbols),
        ],
        ["tokens-held", formatNumber(rational(g.tokensHeld), 0, self.symbols)],
        ["kv-bytes", formatBytes(g.bytes, self.symbols)],
      ].map(function (cell) {
        return htmlNode("td", { "data-column": cell[0] }, cell[1]);
      })));
    }));
  };

  /** Per-head fields are not read while values per token are given (an MLA config's). */
  Sizer.prototype.syncLayoutFields = function () {
    var given = this.fields.kv_values && this.fields.kv_values.value !== "";
    ["kv_heads", "head_dim"].forEach(function (key) {
      if (this.fields[key]) this.fields[key].disabled = given;
    }, this);
  };

  /** Read a config's text and fill the form from it; a bad config leaves the form as it was. */
  Sizer.prototype.loadConfig = function (text) {
    var status = this.configStatus;
    if (String(text).replace(STRIP, "") === "") {
      status.textContent = "";
      status.removeAttribute("data-state");
      return null;
    }
    var layout = this.mlaLayout ? this.mlaLayout.value : MLA_LATENT;
    var read = readConfig(text, layout, this.data.families, this.data);
    status.removeAttribute("data-reason");
    if (!read.ok) {
      this.splitRead = null;
      this.configFailure(read.reason, read.key);
      return read;
    }
    this.splitRead = read;
    var query = this.read();
    Object.keys(read.query).forEach(function (key) {
      query[key] = read.query[key];
    });
    this.fill(query);
    if (this.mlaField) this.mlaField.hidden = read.config.mla === null;
    this.update();
    var c = read.config;
    var self = this;
    var lines = [
      this.words("data-config-text", "summary", {
        model_type: c.modelType,
        parameters: formatNumber(rational(read.parameters), 0, this.symbols),
        layers: formatNumber(rational(c.layers), 0, this.symbols),
        windowed: formatNumber(rational(c.slidingLayers), 0, this.symbols),
        layout: this.words("data-config-layout", read.layout),
      }),
    ].concat(read.notes.map(function (note) {
      return self.words("data-config-note", note);
    }));
    status.setAttribute("data-state", "ok");
    status.textContent = lines.join(" ");
    return read;
  };

  /** The figures shown belong to no input the reader now sees (a refused config under them):
   * cleared, never left standing, until the form is edited or a config is read. */
  Sizer.prototype.clearResults = function () {
    var empty = this.results.getAttribute("data-empty") || "";
    var doc = this.doc;
    this.outputs.forEach(function (output) {
      patchContent(doc, output, empty);
    });
    patchContent(doc, this.table.tBodies[0], []);
    patchContent(doc, this.errorList, []);
    this.errorBox.hidden = true;
    this.quantizationNote.hidden = true;
    this.results.setAttribute("data-state", "stale");
    this.renderKinds({ valid: false });
    this.drawChart({ valid: false });
    this.renderSplit(this.read());
    this.renderFit(this.read());
  };

  /** One line saying why the config was not read, in the page's words; the form is kept, and
   * the figures of the previous input are cleared (they are not the pasted config's). */
  Sizer.prototype.configFailure = function (reason, key) {
    this.clearResults();
    var status = this.configStatus;
    status.setAttribute("data-state", "error");
    status.setAttribute("data-reason", reason);
    status.textContent = this.words("data-config-reason", reason, {
      key: key === null ? "" : String(key),
      limit: formatNumber(rational(BigInt(CONFIG_MAX_CHARS)), 0, this.symbols),
    });
  };

  /** A dropped or chosen file: read here, as text, if it is not too large. */
  Sizer.prototype.loadFile = function (file) {
    var self = this;
    if (!file) return;
    if (file.size > CONFIG_MAX_CHARS) {
      this.configFailure("config_too_large", null);
      return;
    }
    file.text().then(function (text) {
      self.configText.value = text;
      self.loadConfig(text);
    });
  };

  /** Recompute from the form, show it, and keep the URL in step. */
  Sizer.prototype.update = function () {
    this.showCustomBits();
    this.syncLayoutFields();
    var query = this.read();
    var result = compute(query, this.data);
    this.render(result);
    this.renderSplit(query);
    this.renderFit(query);
    var url =
      this.win.location.pathname +
      searchFromQuery(query, this.data.defaults) +
      splitSearch(this.splitFields) +
      this.win.location.hash;
    try {
      this.win.history.replaceState(this.win.history.state, "", url);
    } catch (error) {
      // Some browsers refuse too many history updates in a row; the figures are still right.
    }
    return result;
  };

  /** The split's fields in the URL, after the single-GPU query, where they are not 1, 1, off. */
  function splitSearch(fields) {
    var params = new URLSearchParams();
    var defaults = { tp: "1", pp: "1", ep: "" };
    Object.keys(defaults).forEach(function (key) {
      var el = fields[key];
      if (el && el.value !== defaults[key]) params.set(key, el.value);
    });
    var text = params.toString();
    return text ? "&" + text : "";
  }

  /** Start the sizer on a page: state from the URL, then recompute on every input. */
  function start(doc, win) {
    var dataElement = doc.getElementById("sizer-data");
    if (!dataElement || !doc.getElementById("sizer-form")) return null;
    var sizer = new Sizer(doc, win, JSON.parse(dataElement.textContent));
    var query = queryFromSearch(win.location.search, sizer.data.defaults);
    sizer.fill(query);
    sizer.render(compute(query, sizer.data));
    var splitParams = new URLSearchParams(win.location.search);
    Object.keys(sizer.splitFields).forEach(function (key) {
      if (splitParams.has(key)) sizer.splitFields[key].value = splitParams.get(key);
    });
    sizer.renderSplit(query);
    sizer.renderFit(query);
    var onInput = function () {
      sizer.update();
    };
    sizer.form.addEventListener("input", onInput);
    sizer.form.addEventListener("change", onInput);
    sizer.form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    if (sizer.configText) {
      sizer.configText.addEventListener("input", function () {
        sizer.loadConfig(sizer.configText.value);
      });
      // A file dropped on the text area is read here, in the page: nothing is uploaded.
      sizer.configText.addEventListener("dragover", function (event) {
        event.preventDefault();
      });
      sizer.configText.addEventListener("drop", function (event) {
        event.preventDefault();
        sizer.loadFile(event.dataTransfer && event.dataTransfer.files[0]);
      });
    }
    if (sizer.modelPreset && sizer.configText) {
      // The published configs of iteragpu.models.presets, read as a pasted config would be.
      (sizer.data.presets || []).forEach(function (preset) {
        var option = doc.createElement("option");
        option.value = preset.name;
        option.textContent = preset.hf_repo;
        sizer.modelPreset.appendChild(option);
      });
      sizer.modelPreset.addEventListener("change", function () {
        var chosen = (sizer.data.presets || []).filter(function (preset) {
          return preset.name === sizer.modelPreset.value;
        })[0];
        if (!chosen) return;
        sizer.configText.value = chosen.text;
        sizer.loadConfig(chosen.text);
      });
    }
    if (sizer.configFile) {
      sizer.configFile.addEventListener("change", function () {
        sizer.loadFile(sizer.configFile.files[0]);
      });
    }
    if (sizer.mlaLayout) {
      sizer.mlaLayout.addEventListener("change", function () {
        if (sizer.configText && sizer.configText.value) sizer.loadConfig(sizer.configText.value);
      });
    }
    // The chart is drawn at the width it has: redrawn, once per frame at most, when that changes.
    var pending = false;
    win.addEventListener("resize", function () {
      if (pending) return;
      pending = true;
      win.requestAnimationFrame(function () {
        pending = false;
        sizer.chartWidth = null;
        sizer.drawChart(compute(sizer.read(), sizer.data));
      });
    });
    sizer.training = startTraining(doc, sizer);
    sizer.sheet = startSheet(doc, sizer);
    return sizer;
  }

  // ------------------------------------------------------------------------------------------
  // The training mode on the page (#training): its own form, its table of model states and
  // its status line; computed from the config the page has read (trainingPlan above), never
  // from the parameter count alone, and kept out of the URL and of the figures above.
  // ------------------------------------------------------------------------------------------

  function TrainingView(sizer) {
    var doc = sizer.doc;
    this.sizer = sizer;
    this.doc = doc;
    this.form = doc.getElementById("sizer-train-form");
    this.status = doc.getElementById("sizer-train-status");
    this.states = doc.getElementById("sizer-train-states");
    this.ranks = doc.getElementById("sizer-train-ranks");
    this.messages = doc.getElementById("sizer-train-messages");
    this.fields = {};
    var fields = this.fields;
    Array.prototype.forEach.call(this.form.querySelectorAll("[data-sizer-train]"), function (el) {
      fields[el.getAttribute("data-sizer-train")] = el;
    });
  }

  TrainingView.prototype.text = function (attribute, key, values) {
    var el = this.messages.querySelector("[" + attribute + '="' + key + '"]');
    return fillTemplate(el ? el.textContent.trim() : key, values || {});
  };

  TrainingView.prototype.read = function () {
    var form = {};
    var fields = this.fields;
    Object.keys(fields).forEach(function (key) {
      form[key] = fields[key].value;
    });
    return form;
  };

  TrainingView.prototype.say = function (state, reason, line) {
    this.status.setAttribute("data-state", state);
    if (reason) {
      this.status.setAttribute("data-reason", reason);
    } else {
      this.status.removeAttribute("data-reason");
    }
    this.status.textContent = line;
  };

  TrainingView.prototype.clear = function () {
    patchContent(this.doc, this.states.tBodies[0], []);
    patchContent(this.doc, this.ranks.tBodies[0], []);
    setHidden(this.ranks, true);
    var fields = this.fields;
    Object.keys(fields).forEach(function (key) {
      fields[key].removeAttribute("aria-invalid");
    });
  };

  /** Recompute from the read config and the form; say why where nothing is stated. */
  TrainingView.prototype.update = function () {
    var self = this;
    var sizer = this.sizer;
    var symbols = sizer.symbols;
    this.clear();
    var text = sizer.configText ? sizer.configText.value : "";
    if (String(text).replace(STRIP, "") === "") {
      this.say("empty", null, this.text("data-train-text", "no_config"));
      return null;
    }
    var plan = trainingPlan(text, this.read(), sizer.data, readsDecimalComma(sizer.data));
    if (!plan.valid) {
      if (plan.field) {
        var field = this.fields[plan.field];
        field.setAttribute("aria-invalid", "true");
        var label = this.doc.querySelector('label[for="' + field.id + '"]');
        this.say("error", plan.reason, (label ? label.textContent.trim() : plan.field) + ": " +
          sizer.words("data-reason", plan.reason, {}));
      } else if (plan.config) {
        // The config reader's own status line above says why.
        this.say("error", plan.reason, this.text("data-train-text", "config_refused"));
      } else if (this.messages.querySelector('[data-train-reason="' + plan.reason + '"]')) {
        var values = {};
        Object.keys(plan.values || {}).forEach(function (key) {
          values[key] = String(plan.values[key]);
        });
        this.say("error", plan.reason, this.text("data-train-reason", plan.reason, values));
      } else {
        this.say("error", plan.reason, this.text("data-train-text", "refused"));
      }
      return plan;
    }
    var count = function (value) {
      return formatNumber(rational(BigInt(value)), 0, symbols);
    };
    var stated = this.text("data-train-text", "stated");
    var row = function (key, label, bytes) {
      var value = rational(bytes);
      return keyed(key, htmlNode("tr", { "data-item": key }, [
        htmlNode("td", { "data-column": "item" }, label),
        htmlNode("td", { "data-column": "gib" }, formatNumber(gib(value), 2, symbols)),
        htmlNode("td", { "data-column": "bytes", "data-bytes": String(bytes) }, count(bytes)),
        htmlNode("td", { "data-column": "status", "data-status": "estimated" }, stated),
      ]));
    };
    var rows = plan.roles.map(function (r) {
      return row("role-" + r.role, self.text("data-train-text", "role_" + r.role, {
        tensors: count(r.tensors),
        state: self.text("data-train-text", r.trainable ? "trained" : "frozen"),
      }), r.bytes);
    });
    var sharded = plan.request.shard !== "none";
    if (sharded) rows.push(row("weights-share", this.text("data-train-text", "weights_share"), plan.weightsBytes));
    rows.push(row("gradients", this.text("data-train-text", "gradients"), plan.gradientsBytes));
    rows.push(row("optimizer", this.text("data-train-text", "optimizer"), plan.optimizerBytes));
    if (plan.masterWeightsBytes || plan.masterGradientsBytes) {
      rows.push(row("master-weights", this.text("data-train-text", "master_weights"), plan.masterWeightsBytes));
      rows.push(row("master-gradients", this.text("data-train-text", "master_gradients"),
        plan.masterGradientsBytes));
    }
    rows.push(row("model-states", this.text("data-train-text", "model_states"), plan.modelStatesBytes));
    if (plan.hostBytes) rows.push(row("host", this.text("data-train-text", "host"), plan.hostBytes));
    rows.push(keyed("activations", htmlNode("tr", { "data-item": "activations" }, [
      htmlNode("td", { "data-column": "item" }, this.text("data-train-text", "activations")),
      htmlNode("td", { "data-column": "gib" }, "-"),
      htmlNode("td", { "data-column": "bytes" }, "-"),
      htmlNode("td", { "data-column": "status", "data-status": "unknown" },
        this.text("data-train-text", "to_measure")),
    ])));
    patchContent(this.doc, this.states.tBodies[0], rows);
    var line = this.text("data-train-text", "summary", {
      model_type: plan.modelType,
      parameters: count(plan.parameters),
      trainable: count(plan.trainableParameters),
      tensors: count(plan.trainableTensors),
    });
    if (sharded) {
      line += " " + this.text("data-train-text", "sharded", {
        shard: plan.request.shard, gpus: count(plan.request.gpus), rank: count(plan.firstToFill),
      });
      setHidden(this.ranks, false);
      patchContent(this.doc, this.ranks.tBodies[0], plan.ranks.map(function (r) {
        return keyed("rank " + r.rank, htmlNode("tr", { "data-rank": String(r.rank) }, [
          htmlNode("td", {}, count(r.rank)),
          htmlNode("td", { "data-bytes": String(r.modelStatesBytes) }, count(r.modelStatesBytes)),
          htmlNode("td", { "data-bytes": String(r.paddingBytes) }, count(r.paddingBytes)),
        ]));
      }));
    }
    this.say("ok", null, line);
    return plan;
  };

  /** The training mode of a started page, or null where the page has none. */
  function startTraining(doc, sizer) {
    if (!doc.getElementById("sizer-train-form") || !sizer.data.training) return null;
    var view = new TrainingView(sizer);
    var onInput = function () {
      view.update();
    };
    view.form.addEventListener("input", onInput);
    view.form.addEventListener("change", onInput);
    view.form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    // Every config the page reads (typed, dropped, chosen by name) goes through loadConfig:
    // the training mode follows it, without a change to the reader.
    var load = sizer.loadConfig;
    sizer.loadConfig = function (text) {
      var read = load.call(sizer, text);
      view.update();
      return read;
    };
    view.update();
    return view;
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

  // ------------------------------------------------------------------------------------------
  // Several GPUs: vLLM 0.34.0's split of a model read from its config (iteragpu.parallel,
  // vllm_rules), per rank: weights, what other ranks hold too, KV cache, total. The rules are
  // the Python module's, checked against its answers (sizer_split_vectors, node --test). The
  // page splits a model it has read (a config.json or a published model); Transformers' and
  // llama.cpp's splits are the CLI's (`iteragpu model --runtime`).
  // ------------------------------------------------------------------------------------------

  var SPLIT_VOCAB_PADDING = 64n; // vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
  var SPLIT_BLOCK_SIZE = 64n; // config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE
  var SPLIT_MAX_RANKS = 4096n; // iteragpu.parallel.plan.MAX_RANKS
  var SPLIT_FAMILIES = [
    "llama", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
  ];
  var SPLIT_QKV = record({
    "self_attn.q_proj": "q", "self_attn.k_proj": "kv", "self_attn.v_proj": "kv",
  });
  var SPLIT_ROW = [
    "self_attn.o_proj", "mlp.down_proj", "mlp.shared_expert.down_proj",
    "mlp.shared_experts.down_proj",
  ];
  var SPLIT_COLUMN = [
    "mlp.gate_proj", "mlp.up_proj", "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj",
    "mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj", "self_attn.q_b_proj",
    "self_attn.kv_b_proj",
  ];
  var SPLIT_REPLICATED = [
    "input_layernorm", "post_attention_layernorm", "self_attn.q_norm", "self_attn.k_norm",
    "mlp.gate", "mlp.shared_expert_gate", "self_attn.q_a_proj", "self_attn.q_a_layernorm",
    "self_attn.kv_a_proj_with_mqa", "self_attn.kv_a_layernorm", "norm",
  ];

  function SplitRefusal(reason, values) {
    this.reason = reason;
    this.values = values || {};
  }

  function splitRefuse(reason, values) {
    throw new SplitRefusal(reason, values);
  }

  /** vLLM's `divide`: the quotient, or its refusal naming the size and the layer class. */
  function splitDivide(numerator, denominator, what, where) {
    if (numerator % denominator !== 0n) {
      splitRefuse("vllm_not_divisible", {
        what: what, numerator: numerator, denominator: denominator, where: where,
      });
    }
    return numerator / denominator;
  }

  /** get_pp_indices: [first, end) of each stage, the remainder from the second-to-last back. */
  function vllmStages(layers, pp) {
    var per = layers / pp;
    var parts = [];
    for (var i = 0n; i < pp; i++) parts.push(per);
    for (var r = 2n; r < layers % pp + 2n; r++) parts[parts.length - Number(r)] += 1n;
    var start = 0n;
    return parts.map(function (n) {
      var range = [start, start + n];
      start += n;
      return range;
    });
  }

  /** determine_expert_map: the experts of each EP rank, the first `experts % ep` one more. */
  function vllmExpertCounts(experts, ep) {
    var counts = [];
    for (var rank = 0n; rank < ep; rank++) counts.push(experts / ep + (rank < experts % ep ? 1n : 0n));
    return counts;
  }

  function splitModule(name) {
    var cut = name.lastIndexOf(".");
    return cut < 0 ? name : name.slice(0, cut);
  }

  /** One tensor's [how, elements per TP rank] under vLLM (vllm_rules._shares). */
  function vllmShares(t, config, tp, ep) {
    var module = splitModule(t.name);
    var total = t.elements;
    var rows = t.shape[0];
    var same = function (how, elements) {
      var list = [];
      for (var i = 0n; i < tp; i++) list.push(elements);
      return [how, list];
    };
    var split = tp > 1n;
    if (t.layer === null) {
      if (t.name.indexOf("embed_tokens") === 0 || t.name.indexOf("lm_head") === 0) {
        var padded = (rows + SPLIT_VOCAB_PADDING - 1n) / SPLIT_VOCAB_PADDING * SPLIT_VOCAB_PADDING;
        var part = splitDivide(padded, tp, "pad_vocab_size(vocab_size)", "VocabParallelEmbedding");
        return same(split ? "vocab" : "replicated", total / rows * part);
      }
      if (module === "norm") return same("replicated", total);
      return splitRefuse("vllm_tensor_not_modelled", { name: t.name });
    }
    if (has(SPLIT_QKV, module)) {
      var width = total / rows;
      if (SPLIT_QKV[module] === "q") {
        var heads = splitDivide(config.heads, tp, "num_attention_heads", "QKVParallelLinear");
        return same(split ? "column" : "replicated", heads * config.headDim * width);
      }
      var kv = config.kvHeads / tp > 0n ? config.kvHeads / tp : 1n;
      var how = tp > config.kvHeads ? "kv_replicated" : split ? "column" : "replicated";
      return same(how, kv * config.headDim * width);
    }
    var last = t.shape[t.shape.length - 1];
    if (SPLIT_ROW.indexOf(module) >= 0) {
      if (t.name.slice(-5) === ".bias") return same("replicated", total);
      var cut = splitDivide(last, tp, module + ".input_size", "RowParallelLinear");
      return same(split ? "row" : "replicated", total / last * cut);
    }
    if (SPLIT_COLUMN.indexOf(module) >= 0) {
      var out = splitDivide(rows, tp, module + ".output_size", "ColumnParallelLinear");
      return same(split ? "column" : "replicated", total / rows * out);
    }
    if (SPLIT_REPLICATED.indexOf(module) >= 0 || t.name === "mlp.gate.weight") {
      return same("replicated", total);
    }
    if (t.routed && t.name.indexOf("mlp.experts.") === 0) {
      var experts = rows;
      if (ep) {
        return ["experts", vllmExpertCounts(experts, tp).map(function (n) {
          return total / experts * n;
        })];
      }
      var inner = t.name.slice(-12) === "gate_up_proj" ? t.shape[1] / 2n : t.shape[2];
      if (inner % tp !== 0n) splitRefuse("vllm_moe_not_divisible", { size: inner, tp: tp });
      return same(split ? "expert_slices" : "replicated", total / tp);
    }
    return splitRefuse("vllm_tensor_not_modelled", { name: t.name });
  }

  /**
   * vLLM's split of a model read from its config (`read`: readConfig's result): each rank's
   * weights, their part other ranks hold too, its KV cache and total, and the rank that fills
   * first; or {ok: false, reason, values} as iteragpu.parallel refuses. `o`: tp, pp (BigInt),
   * ep (boolean), tokens and sequences (BigInt), elementBytes, kvBytesPerValue and reserveBytes
   * (rationals).
   */
  function vllmSplit(read, o) {
    try {
      var c = read.config;
      var tp = o.tp;
      var pp = o.pp;
      if (tp < 1n || pp < 1n || tp > SPLIT_MAX_RANKS || pp > SPLIT_MAX_RANKS) {
        splitRefuse("bad_split_count");
      }
      if (tp * pp > SPLIT_MAX_RANKS) splitRefuse("bad_split_count");
      if (c.quantizationMethod !== null) splitRefuse("split_quantized");
      if (c.outerModelType !== null) splitRefuse("split_multimodal");
      if (c.recipe === null) splitRefuse("split_tensors_unknown");
      var scope = recipeScope(c.recipe, c.values);
      var tensors = recipeTensors(c.recipe, scope, c.layerKinds);
      if (tensors === null) splitRefuse("split_tensors_unknown");
      if (SPLIT_FAMILIES.indexOf(c.modelType) < 0) splitRefuse("split_family_not_modelled");
      var states = section(c.recipe, "states");
      if (c.layerKinds.some(function (kind) {
        return has(states, kind) && Array.isArray(states[kind]) && states[kind].length > 0;
      })) {
        splitRefuse("split_states_not_modelled");
      }
      if (c.layerKinds.some(function (kind) { return kind !== FULL; })) {
        splitRefuse("vllm_sliding_not_modelled");
      }
      if (o.ep && tp === 1n) splitRefuse("ep_needs_tp");
      if (c.heads % tp !== 0n) splitRefuse("vllm_heads_not_divisible", { heads: c.heads, tp: tp });
      var experts = get(scope, "num_experts");
      if (experts === null) experts = get(scope, "num_local_experts");
      if ((c.modelType === "qwen2_moe" || c.modelType === "qwen3_moe") && experts !== null &&
          tp > BigInt(experts)) {
        splitRefuse("vllm_tp_above_experts", { tp: tp, experts: BigInt(experts) });
      }
      if (c.mla === null) {
        if (tp >= c.kvHeads) {
          splitDivide(tp, c.kvHeads, "tensor_parallel_size / num_key_value_heads", "QKVParallelLinear");
        } else {
          splitDivide(c.kvHeads, tp, "num_key_value_heads", "QKVParallelLinear");
        }
      }
      var stages = vllmStages(c.layers, pp);
      var placed = tensors.map(function (t) {
        return { t: t, size: o.elementBytes, parts: vllmShares(t, c, tp, o.ep) };
      });
      // DeepSeek's gate.e_score_correction_bias: float32, on each layer with experts.
      if ((c.modelType === "deepseek_v2" || c.modelType === "deepseek_v3") &&
          get(c.values, "topk_method") === "noaux_tc") {
        var routedLayers = [];
        tensors.forEach(function (t) {
          if (t.routed && t.layer !== null && routedLayers.indexOf(t.layer) < 0) {
            routedLayers.push(t.layer);
          }
        });
        var count = BigInt(get(scope, "n_routed_experts"));
        routedLayers.forEach(function (layer) {
          var list = [];
          for (var i = 0n; i < tp; i++) list.push(count);
          placed.push({
            t: { name: "mlp.gate.e_score_correction_bias", layer: layer, shape: [count] },
            size: rational(4n),
            parts: ["replicated", list],
          });
        });
      }
      var perRankHeads = c.kvHeads / tp > 0n ? c.kvHeads / tp : 1n;
      var slots = o.sequences * ((o.tokens + SPLIT_BLOCK_SIZE - 1n) / SPLIT_BLOCK_SIZE) *
        SPLIT_BLOCK_SIZE;
      var latent = c.mla === null ? null : c.mla.kvLoraRank + c.mla.rope;
      var ranks = [];
      stages.forEach(function (span, stage) {
        var first = stage === 0;
        var last = stage === stages.length - 1;
        var layerCount = span[1] - span[0];
        var values = latent !== null ? latent : perRankHeads * 2n * c.headDim;
        var perToken = mul(rational(layerCount * values), o.kvBytesPerValue);
        for (var r = 0n; r < tp; r++) {
          var weights = rational(0n);
          var repeated = rational(0n);
          placed.forEach(function (p) {
            var t = p.t;
            if (t.layer !== null) {
              if (t.layer < span[0] || t.layer >= span[1]) return;
            } else if (t.name.indexOf("embed_tokens") === 0) {
              if (!(first || (c.tied && last))) return;
            } else if (!last) {
              return;
            }
            var bytes = mul(rational(p.parts[1][Number(r)]), p.size);
            weights = add(weights, bytes);
            if (p.parts[0] === "replicated" || p.parts[0] === "kv_replicated") {
              repeated = add(repeated, bytes);
            }
          });
          var kvBytes = mul(perToken, rational(slots));
          ranks.push({
            rank: BigInt(stage) * tp + r,
            tpRank: r,
            stage: BigInt(stage),
            layers: span,
            weightsBytes: weights,
            replicatedBytes: tp > 1n ? repeated : rational(0n),
            kvBytesPerToken: perToken,
            kvTokens: slots,
            kvCacheBytes: kvBytes,
            totalBytes: add(add(weights, kvBytes), o.reserveBytes),
          });
        }
      });
      var fullest = ranks[0];
      ranks.forEach(function (rank) {
        if (cmp(rank.totalBytes, fullest.totalBytes) > 0) fullest = rank;
      });
      return { ok: true, ranks: ranks, firstToFill: fullest, gpus: BigInt(ranks.length) };
    } catch (error) {
      if (error instanceof SplitRefusal) return { ok: false, reason: error.reason, values: error.values };
      if (error instanceof ConfigFailure) return { ok: false, reason: error.reason, values: {} };
      throw error;
    }
  }

  /**
   * The split's chart model: each rank's need (weights, reserve, KV cache) and each catalogue
   * card's capacity on paper (declared, else the nominal figure read as decimal GB) against the
   * fullest rank; the axis runs to twice the fullest rank, or to the smallest capacity that
   * holds it when that is larger.
   */
  function splitChartModel(split, cards, reserveBytes) {
    var fullest = split.firstToFill.totalBytes;
    var ranks = split.ranks.map(function (r) {
      var start = rational(0n);
      var segments = [
        ["weights", r.weightsBytes],
        ["reserve", reserveBytes],
        ["kv", r.kvCacheBytes],
      ].map(function (entry) {
        var segment = { key: entry[0], bytes: entry[1], start: start, end: add(start, entry[1]) };
        start = segment.end;
        return segment;
      });
      return { rank: r.rank, totalBytes: r.totalBytes, segments: segments };
    });
    var top = add(fullest, fullest);
    var holding = null;
    var shown = [];
    cards.forEach(function (card) {
      var paper = card.declaredBytes !== null ? card.declaredBytes : card.nominalBytes;
      if (paper === null) return;
      var within = cmp(fullest, paper) <= 0;
      if (within && (holding === null || cmp(paper, holding) < 0)) holding = paper;
      shown.push({
        id: card.id,
        name: card.name,
        paperBytes: paper,
        basis: card.declaredBytes !== null ? "declared" : "nominal",
        within: within,
      });
    });
    if (holding !== null && cmp(holding, top) > 0) top = holding;
    return { ranks: ranks, cards: shown, fullest: split.firstToFill, maxBytes: top };
  }

  Sizer.prototype.splitWords = function (key, values) {
    var box = this.splitMessages;
    var el = box ? box.querySelector('[data-split-text="' + key + '"]') : null;
    return fillTemplate(el ? el.textContent.trim() : key, values || {});
  };

  /** The split's options from the page's fields and the form's query, or null (refused). */
  Sizer.prototype.splitOptions = function (query) {
    var comma = readsDecimalComma(this.data);
    var f = this.splitFields;
    var tp = parseCount(f.tp ? f.tp.value : "1", SPLIT_MAX_RANKS, comma);
    var pp = parseCount(f.pp ? f.pp.value : "1", SPLIT_MAX_RANKS, comma);
    var tokens = parseTokens(query.tokens, LIMITS.tokens, comma);
    var sequences = parseCount(query.sequences, LIMITS.sequences, comma);
    var bits = parsePositive(query.bits, LIMITS.bits, comma);
    var perValue = parsePositive(query.bytes_per_value, LIMITS.bytes_per_value, comma);
    var reserve = parseNonNegative(query.reserve_gib, LIMITS.reserve_gib, comma);
    if (!tp.ok || !pp.ok) return { ok: false, reason: "bad_split_count" };
    if (!tokens.ok || !sequences.ok || !bits.ok || !perValue.ok || !reserve.ok) return null;
    return {
      ok: true,
      tp: tp.value,
      pp: pp.value,
      ep: f.ep ? f.ep.value === "on" : false,
      tokens: tokens.value,
      sequences: sequences.value,
      elementBytes: div(bits.value, rational(8n)),
      kvBytesPerValue: perValue.value,
      reserveBytes: gibToBytes(reserve.value),
    };
  };

  /** The split section: each GPU's layers and bytes under vLLM's rules, the GPU that fills
   * first, and the chart of every GPU's need against each card's capacity on paper. */
  Sizer.prototype.renderSplit = function (query) {
    var box = this.splitBox;
    if (!box) return;
    var doc = this.doc;
    var status = box.querySelector("[data-split-status]");
    var body = box.querySelector("table tbody");
    var plot = box.querySelector("[data-split-plot]");
    var text = box.querySelector("[data-split-chart-text]");
    var clear = function (state, line) {
      setAttr(box, "data-state", state);
      patchContent(doc, body, []);
      patchContent(doc, plot, []);
      patchContent(doc, text, "");
      patchContent(doc, status, line);
    };
    if (!this.splitRead) {
      clear("empty", this.splitWords("needs_config"));
      return;
    }
    var options = this.splitOptions(query);
    if (options === null) {
      clear("empty", this.results.getAttribute("data-empty") || "");
      return;
    }
    var split = options.ok ? vllmSplit(this.splitRead, options) : options;
    if (!split.ok) {
      var values = {};
      Object.keys(split.values || {}).forEach(function (key) {
        values[key] = String(split.values[key]);
      });
      clear("refused", this.splitWords("reason_" + split.reason, values));
      return;
    }
    setAttr(box, "data-state", "ok");
    var symbols = this.symbols;
    var gibText = function (bytes) {
      return formatNumber(gib(bytes), 2, symbols);
    };
    var count = function (n) {
      return formatNumber(rational(BigInt(n)), 0, symbols);
    };
    var self = this;
    patchContent(doc, body, split.ranks.map(function (r) {
      var first = r.layers[0];
      var end = r.layers[1];
      var layers = end > first ? count(first) + "–" + count(end - 1n) : self.splitWords("no_layers");
      return keyed("rank-" + r.rank, htmlNode("tr", {}, [
        count(r.rank), count(r.tpRank), count(r.stage), layers, gibText(r.weightsBytes),
        gibText(r.replicatedBytes), gibText(r.kvCacheBytes), gibText(r.totalBytes),
      ].map(function (cell) {
        return htmlNode("td", {}, cell);
      })));
    }));
    patchContent(doc, status, this.splitWords("first_to_fill", {
      rank: count(split.firstToFill.rank),
      gpus: count(split.gpus),
      total_gib: gibText(split.firstToFill.totalBytes),
    }));
    this.drawSplitChart(split, options.reserveBytes, plot, text);
  };

  Sizer.prototype.drawSplitChart = function (split, reserveBytes, plot, text) {
    var doc = this.doc;
    var symbols = this.symbols;
    var self = this;
    var model = splitChartModel(split, this.data.cards, reserveBytes);
    var gibText = function (bytes) {
      return formatNumber(gib(bytes), 2, symbols);
    };
    var width = this.chartWidth || 640;
    var labelWidth = Math.min(120, Math.round(width * 0.25));
    var plotWidth = width - labelWidth - 18;
    var rowHeight = 20;
    var axisY = 8 + model.ranks.length * rowHeight + 4;
    var height = axisY + 34 + model.cards.length * 0;
    var maxGib = gibFloat(model.maxBytes) * 1.03;
    var step = tickStep(maxGib);
    var axisMax = Math.ceil(maxGib / step) * step;
    var x = function (bytes) {
      return labelWidth + (plotWidth * Math.min(gibFloat(bytes), axisMax)) / axisMax;
    };
    var marks = [];
    model.ranks.forEach(function (r, index) {
      var y = 8 + index * rowHeight;
      marks.push(keyed("label-" + r.rank, svgNode("text", {
        x: labelWidth - 6, y: y + 14, "text-anchor": "end", class: "sizer-chart-label",
      }, self.splitWords("gpu_label", { rank: formatNumber(rational(r.rank), 0, symbols) }))));
      r.segments.forEach(function (s) {
        if (s.bytes.n === 0n) return;
        marks.push(keyed("bar-" + r.rank + "-" + s.key, svgNode("rect", {
          x: x(s.start), y: y + 3, width: Math.max(1, x(s.end) - x(s.start)), height: rowHeight - 6,
          class: "sizer-chart-segment", "data-segment": s.key,
        })));
      });
    });
    model.cards.forEach(function (card) {
      if (gibFloat(card.paperBytes) > axisMax) return;
      var cx = x(card.paperBytes);
      marks.push(keyed("card-" + card.id, svgNode("line", {
        x1: cx, x2: cx, y1: 4, y2: axisY, class: "sizer-chart-card",
        "data-paper": card.within ? "within" : "beyond",
      })));
    });
    for (var tick = 0; tick <= axisMax + 1e-9; tick += step) {
      var tx = labelWidth + (plotWidth * tick) / axisMax;
      marks.push(keyed("tick-" + tick, svgNode("text", {
        x: tx, y: axisY + 16, "text-anchor": "middle", class: "sizer-chart-tick",
      }, formatNumber(rational(BigInt(Math.round(tick * 100)), 100n), step < 1 ? 2 : 0, symbols))));
    }
    marks.push(keyed("axis", svgNode("text", {
      x: labelWidth + plotWidth, y: axisY + 32, "text-anchor": "end", class: "sizer-chart-tick",
    }, "GiB")));
    patchContent(doc, plot, [keyed("svg", svgNode("svg", {
      viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img",
      "aria-hidden": "true",
    }, marks))]);
    var lines = model.cards.map(function (card) {
      return keyed("text-" + card.id, htmlNode("p", {}, self.splitWords(
        card.within ? "card_within" : "card_beyond", {
          card: card.name,
          paper_gib: gibText(card.paperBytes),
          basis: self.splitWords("basis_" + card.basis),
          total_gib: gibText(model.fullest.totalBytes),
        })));
    });
    patchContent(doc, text, lines);
  };

  // What fits, solved backwards: vLLM 0.34.0's upper bound of a split on a card
  // (iteragpu.parallel.fit, the Python module's, checked against its answers: sizer_fit_vectors,
  // node --test). Each rank's room for the cache is `math.ceil(total * utilization)` (vLLM's
  // request_memory, in its floats) less its weights and reserve; its blocks are that room over
  // its bytes per block of 64 tokens; every rank keeps the weakest rank's count; one block (the
  // null block) serves no request.
  var FIT_KEYS = [
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
  ];
  var FIT_UNSCALED_ROPE = ["su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"];
  var FIT_MAX_TOKENS = 1000000000n;
  var FIT_MAX_SEQUENCES = 1000000n;

  /** The model's positions as vLLM derives its longest max_model_len (config/model.py), or
   * null when the config states none. */
  function fitPositions(read) {
    var values = read.config.values || {};
    var found = null;
    FIT_KEYS.forEach(function (key) {
      var v = values[key];
      if (typeof v === "number" && Number.isInteger(v) && v > 0 && (found === null || v < found)) {
        found = v;
      }
    });
    if (found === null) return null;
    if (typeof values.model_max_length === "number") found = values.model_max_length;
    var rope = values.rope_parameters || values.rope_scaling;
    if (rope && typeof rope === "object" && read.config.modelType.indexOf("gemma3") < 0) {
      var kind = rope.rope_type || rope.type;
      var factor = rope.factor;
      if (FIT_UNSCALED_ROPE.indexOf(kind) < 0 && typeof factor === "number" && factor) {
        found = found * factor;
      }
    }
    return BigInt(Math.trunc(found));
  }

  /** `f"{blocks / per_request:.2f}"` as Python prints vLLM's double (half to even at a tie,
   * which only an exact quotient reaches). */
  function concurrencyText(blocks, perRequest) {
    var scaled = blocks * 100n;
    var q = scaled / perRequest;
    var twice = 2n * (scaled - q * perRequest);
    if (twice > perRequest || (twice === perRequest && q % 2n === 1n)) q += 1n;
    var whole = q / 100n;
    var cents = String(q % 100n).padStart(2, "0");
    return String(whole) + "." + cents;
  }

  /**
   * vLLM's answer for a split (vllmSplit's result) on cards of `o.capacityBytes` (BigInt) at
   * `o.utilization` (its text, "1.0"): solves the tokens per sequence (`o.tokens` null) for
   * `o.sequences`, or the sequences (`o.sequences` null) at `o.tokens`. Returns
   * { ok, tokens, sequences, blocks, cacheTokens, concurrency, limitedBy, positions } or
   * { ok: false, reason }.
   */
  function vllmFit(split, o) {
    var budget = BigInt(Math.ceil(Number(o.capacityBytes) * Number(o.utilization)));
    var blocks = null;
    for (var i = 0; i < split.ranks.length; i++) {
      var r = split.ranks[i];
      var perBlock = mul(r.kvBytesPerToken, rational(SPLIT_BLOCK_SIZE));
      var fixed = add(r.totalBytes, neg(r.kvCacheBytes));
      var room = add(rational(budget), neg(fixed));
      if (room.n < 0n) return { ok: false, reason: "fit_does_not_fit" };
      var count = (room.n * perBlock.d) / (room.d * perBlock.n);
      if (blocks === null || count < blocks) blocks = count;
    }
    var usable = blocks - 1n;
    var positions = o.positions;
    var cap = positions === null ? FIT_MAX_TOKENS : positions;
    var tokens, sequences, limitedBy;
    if (o.tokens === null) {
      sequences = o.sequences;
      if (usable < sequences) return { ok: false, reason: "fit_does_not_fit" };
      tokens = SPLIT_BLOCK_SIZE * (usable / sequences);
      limitedBy = "memory";
      if (tokens >= cap) {
        tokens = cap;
        limitedBy = positions === null ? "memory" : "positions";
      }
    } else {
      tokens = o.tokens;
      if (positions !== null && tokens > positions) {
        return { ok: false, reason: "fit_above_positions" };
      }
      sequences = usable / ceilDiv(tokens, SPLIT_BLOCK_SIZE);
      if (sequences > FIT_MAX_SEQUENCES) sequences = FIT_MAX_SEQUENCES;
      if (sequences < 1n) return { ok: false, reason: "fit_does_not_fit" };
      limitedBy = "memory";
    }
    var perRequest = ceilDiv(tokens, SPLIT_BLOCK_SIZE);
    // get_kv_cache_capacity: int(max_concurrency * max_model_len), in vLLM's doubles
    var cacheTokens = BigInt(Math.trunc((Number(blocks) / Number(perRequest)) * Number(tokens)));
    return {
      ok: true,
      tokens: tokens,
      sequences: sequences,
      blocks: blocks,
      cacheTokens: cacheTokens,
      concurrency: concurrencyText(blocks, perRequest),
      limitedBy: limitedBy,
      positions: positions,
    };
  }

  /** vLLM's flags for the answer, ready to paste (the model's name is the reader's). */
  function vllmFitFlags(answer, split, o) {
    var flags = [
      ["--max-model-len", String(answer.tokens)],
      ["--max-num-seqs", String(answer.sequences)],
      ["--gpu-memory-utilization", o.utilization],
      ["--kv-cache-dtype", o.kvCacheDtype],
      ["--tensor-parallel-size", String(o.tp)],
    ];
    if (o.pp > 1n) flags.push(["--pipeline-parallel-size", String(o.pp)]);
    if (o.ep) flags.push(["--enable-expert-parallel", ""]);
    return flags;
  }

  Sizer.prototype.fitWords = function (key, values) {
    var box = this.fitMessages;
    var el = box ? box.querySelector('[data-fit-text="' + key + '"]') : null;
    return fillTemplate(el ? el.textContent.trim() : key, values || {});
  };

  /** The "solve for" section: vLLM's upper bound of the split above on one catalogue card,
   * with its flags, what is certain and what is to measure. */
  Sizer.prototype.renderFit = function (query) {
    var box = this.fitBox;
    if (!box) return;
    var doc = this.doc;
    var status = box.querySelector("[data-fit-status]");
    var flagsOut = box.querySelector("[data-fit-flags]");
    var f = this.fitFields;
    var clear = function (state, line) {
      setAttr(box, "data-state", state);
      patchContent(doc, flagsOut, "");
      patchContent(doc, status, line);
    };
    if (f.card && f.card.options.length === 0) {
      var placeholder = doc.createElement("option");
      placeholder.value = "";
      placeholder.textContent = this.fitWords("choose_card");
      f.card.appendChild(placeholder);
      this.data.cards.forEach(function (card) {
        if (card.declaredBytes === null) return;
        var option = doc.createElement("option");
        option.value = card.id;
        option.textContent = card.name;
        f.card.appendChild(option);
      });
    }
    if (!this.splitRead) {
      clear("empty", this.fitWords("needs_config"));
      return;
    }
    var options = this.splitOptions(query);
    var card = null;
    var wanted = f.card ? f.card.value : "";
    this.data.cards.forEach(function (c) {
      if (c.id === wanted) card = c;
    });
    if (options === null || !options.ok || card === null) {
      clear("empty", this.fitWords("choose_card"));
      return;
    }
    var perValue = options.kvBytesPerValue;
    var kvDtype = cmp(perValue, options.elementBytes) === 0 ? "auto" :
      cmp(perValue, rational(1n)) === 0 ? "fp8" : null;
    if (kvDtype === null) {
      clear("refused", this.fitWords("reason_fit_kv_dtype"));
      return;
    }
    var utilizationText = f.utilization ? f.utilization.value.trim() : "1.0";
    var share = parsePositive(utilizationText, 1n, readsDecimalComma(this.data));
    if (!share.ok || cmp(share.value, rational(1n)) > 0) {
      clear("refused", this.fitWords("reason_fit_bad_utilization"));
      return;
    }
    var utilization = exact(share.value).indexOf("/") >= 0 ?
      String(Number(share.value.n) / Number(share.value.d)) : exact(share.value);
    if (utilization.indexOf(".") < 0) utilization += ".0";
    var solve = f.solve ? f.solve.value : "tokens";
    var positions = fitPositions(this.splitRead);
    if (solve !== "tokens" && positions !== null && options.tokens > positions) {
      clear("refused", this.fitWords("reason_fit_above_positions"));
      return;
    }
    var split = vllmSplit(this.splitRead, options);
    if (!split.ok) {
      clear("refused", this.splitWords("reason_" + split.reason, {}));
      return;
    }
    var answer = vllmFit(split, {
      capacityBytes: card.declaredBytes.n / card.declaredBytes.d,
      utilization: utilization,
      tokens: solve === "tokens" ? null : options.tokens,
      sequences: solve === "tokens" ? options.sequences : null,
      positions: positions,
    });
    if (!answer.ok) {
      clear("refused", this.fitWords("reason_" + answer.reason));
      return;
    }
    setAttr(box, "data-state", "ok");
    var symbols = this.symbols;
    var count = function (n) {
      return formatNumber(rational(BigInt(n)), 0, symbols);
    };
    var flags = vllmFitFlags(answer, split, {
      utilization: utilization,
      kvCacheDtype: kvDtype,
      tp: options.tp,
      pp: options.pp,
      ep: options.ep,
    });
    var words = ["vllm", "serve", this.fitWords("model_placeholder")];
    flags.forEach(function (flag) {
      words.push(flag[0]);
      if (flag[1]) words.push(flag[1]);
    });
    patchContent(doc, flagsOut, words.join(" "));
    patchContent(doc, status, [
      this.fitWords("answer", {
        tokens: count(answer.tokens),
        sequences: count(answer.sequences),
        card: card.name,
        gpus: count(split.gpus),
      }),
      this.fitWords("limit_" + answer.limitedBy, { positions: count(answer.positions || 0n) }),
      this.fitWords("blocks", {
        blocks: count(answer.blocks),
        cache_tokens: count(answer.cacheTokens),
        tokens: count(answer.tokens),
        concurrency: formatNumber(
          rational(BigInt(answer.concurrency.replace(".", "")), 100n), 2, symbols),
      }),
    ].join(" "));
  };

  // ------------------------------------------------------------------------------------------
  // The filled load sheet (#filled-sheet): the inference load specification of
  // docs/<code>/docs/load-specification.md, filled from the page's inputs, as Markdown the
  // reader copies. The same text as Python's iteragpu.i18n.sheet.sheet_markdown for the same
  // figures (tests/js/sizer_sheet.test.mjs holds it to docs_tools.sizer_sheet_vectors); its
  // words are the catalogue's (the page's data: `sheet`, from docs/hooks.py). What the inputs do
  // not say is an empty cell, never a guess. Built when the reader asks, not on every edit.
  // ------------------------------------------------------------------------------------------

  var SHEET_RUNTIME_NAMES = { transformers: "Transformers", vllm: "vLLM", "llama.cpp": "llama.cpp" };
  var SHEET_SPACE = new RegExp("[" + PY_SPACE + "]+");

  /** `text` as a table cell: one line, its pipes escaped (iteragpu.i18n.sheet.cell). */
  function sheetCell(text) {
    return String(text).split(SHEET_SPACE).filter(function (part) {
      return part !== "";
    }).join(" ").replace(/\|/g, "\\|");
  }

  /** `text` as inline code, fenced past any backtick it holds (iteragpu.i18n.sheet.code). */
  function sheetCode(text) {
    var fence = "`";
    while (text.indexOf(fence) >= 0) fence += "`";
    var pad = text.charAt(0) === "`" || text.charAt(text.length - 1) === "`" ? " " : "";
    return fence + pad + text + pad + fence;
  }

  /** An exact value in the locale's format, every decimal it needs (at most 20). */
  function sheetDecimal(value, symbols) {
    var digits = exactDecimal(value).split(".")[1] || "";
    return formatNumber(value, Math.min(digits.length, 20), symbols);
  }

  function sheetCeil(value) {
    return rational((value.n + value.d - 1n) / value.d);
  }

  function sheetTable(header, align, rows) {
    var line = function (cells) {
      return "| " + cells.join(" | ") + " |";
    };
    return [line(header), line(align)].concat(rows.map(line));
  }

  function sheetRowTotal(row) {
    return add(add(add(row.weights, row.kv), row.state), row.reserve);
  }

  /** The GPU that needs the most, the lowest on a tie. */
  function sheetFirstToFill(sheet) {
    var first = sheet.rows[0];
    sheet.rows.forEach(function (row) {
      if (cmp(sheetRowTotal(row), sheetRowTotal(first)) > 0) first = row;
    });
    return first;
  }

  /**
   * The sheet as Markdown (iteragpu.i18n.sheet.sheet_markdown): `sheet` holds the LoadSheet's
   * fields (snake_case, counts as BigInt, bytes as rationals; each row {rank, weights, kv,
   * state, reserve}), `words` the sheet's words in the page's language.
   */
  function sheetMarkdown(sheet, words, symbols) {
    var w = words;
    var count = function (value) {
      return value === null ? "" : formatNumber(rational(BigInt(value)), 0, symbols);
    };
    var bits = sheet.weights_bits === null ? "" : sheetDecimal(sheet.weights_bits, symbols);
    var weights;
    if (sheet.weights_source === "parameters") {
      weights = fillTemplate(w.weights_parameters_bits, { bits: bits });
    } else if (sheet.weights_source === "config") {
      weights = sheet.weights_dtype !== null
        ? fillTemplate(w.weights_config_dtype, { dtype: sheetCode(sheet.weights_dtype) })
        : fillTemplate(w.weights_config_bits, { bits: bits });
    } else {
      weights = fillTemplate(w["weights_" + sheet.weights_source], {
        formats: sheet.weights_formats.map(sheetCode).join(", "),
      });
    }
    if (sheet.quantization_method !== null) {
      weights = fillTemplate(w.weights_quantized, {
        weights: weights, method: sheetCode(sheet.quantization_method),
      });
    }
    var cacheTokens = sheet.cache === "static" ? sheet.static_max_tokens : sheet.cache_block_tokens;
    var cache = fillTemplate(w["cache_" + sheet.cache], { tokens: count(cacheTokens) });
    if (sheet.kv_dtype !== null) {
      cache = fillTemplate(w.cache_kv_dtype, { cache: cache, dtype: sheetCode(sheet.kv_dtype) });
    }
    var split = sheet.runtime === null ? w.split_none : fillTemplate(w.split_runtime, {
      runtime: SHEET_RUNTIME_NAMES[sheet.runtime] || sheet.runtime,
      version: sheetCode(sheet.runtime_version || ""),
      tp: count(sheet.tp),
      pp: count(sheet.pp),
      ep: sheet.ep ? w.ep_on : w.ep_off,
      gpus: count(sheet.rows.length),
    });
    var model = "";
    if (sheet.model !== null) {
      model = sheetCode(sheet.model) + (sheet.hf_repo ? " (" + sheetCode(sheet.hf_repo) + ")" : "");
    }
    var fields = [
      ["model", model],
      ["model_type", sheet.model_type === null ? "" : sheetCode(sheet.model_type)],
      ["revision", sheet.revision === null ? "" : sheetCode(sheet.revision)],
      ["task", w["task_" + sheet.task]],
      ["weights_format", weights],
      ["weights_dtype", sheet.weights_dtype === null ? "" : sheetCode(sheet.weights_dtype)],
      ["cache", cache],
      ["split", split],
      ["decoding", ""],
      ["quality_bar", ""],
      ["environment", ""],
    ];
    var load = [
      count(sheet.input_tokens), count(sheet.output_tokens), count(sheet.tokens),
      count(sheet.sequences), sheetDecimal(sheet.kv_bytes_per_value, symbols),
    ];
    var first = sheetFirstToFill(sheet);
    var rows = sheet.rows.concat(sheet.host === null ? [] : [sheet.host]);
    var gpuRows = rows.map(function (row) {
      var label;
      if (row.rank === null) {
        label = w.host;
      } else {
        var named = sheet.rows.length > 1 && row === first;
        label = fillTemplate(w[named ? "gpu_first" : "gpu_row"], { rank: count(row.rank) });
      }
      var total = sheetRowTotal(row);
      return [sheetCell(label)].concat([row.weights, row.kv, row.state, row.reserve, total].map(
        function (value) {
          return formatNumber(sheetCeil(value), 0, symbols);
        }
      ), [formatNumber(gib(total), 2, symbols), "", sheetCell(w["source_" + sheet.source])]);
    });
    var loadKeys = ["input_tokens", "output_tokens", "tokens", "sequences", "kv_bytes_per_value"];
    var gpuKeys = [
      "gpu", "weights_bytes", "kv_cache_bytes", "state_bytes", "reserve_bytes", "total_bytes",
      "total_gib", "measured_peak_bytes", "source",
    ];
    var pick = function (key) {
      return w[key];
    };
    var lines = ["**" + w.title + "**", ""]
      .concat(sheetTable([w.field, w.value], ["---", "---"], fields.map(function (f) {
        return [sheetCell(w[f[0]]), sheetCell(f[1])];
      })))
      .concat([""])
      .concat(sheetTable(loadKeys.map(pick), loadKeys.map(function () {
        return "---:";
      }), [load]))
      .concat([""])
      .concat(sheetTable(gpuKeys.map(pick), ["---", "---:", "---:", "---:", "---:", "---:",
        "---:", "---:", "---"], gpuRows))
      .concat(["", w.note_not_counted, w.note_fill]);
    return lines.join("\n");
  }

  /**
   * The sheet of the page's inputs: `result` (compute's, valid), `model` ({name, hfRepo,
   * modelType}, each null when the page does not know it), and, when the split over several
   * GPUs holds more than one, `split` (vllmSplit's, ok) with its `options` (splitOptions').
   * The weights come from the parameter count at the bits given (one GPU) or from the config's
   * tensors at those bits (a split); the page knows no dtype by name, so none is stated.
   */
  function sizerSheet(result, model, split, options, versions, decimalComma) {
    var q = result.query;
    var bits = parsePositive(q.bits, LIMITS.bits, decimalComma).value;
    var perValue = parsePositive(q.bytes_per_value, LIMITS.bytes_per_value, decimalComma).value;
    var tokens = parseTokens(q.tokens, LIMITS.tokens, decimalComma).value;
    var sequences = parseCount(q.sequences, LIMITS.sequences, decimalComma).value;
    var sheet = {
      source: "sizer",
      model: model.name,
      hf_repo: model.hfRepo,
      model_type: model.modelType,
      revision: null,
      task: "inference",
      weights_source: "parameters",
      weights_bits: bits,
      weights_formats: [],
      weights_dtype: null,
      quantization_method: null,
      input_tokens: null,
      output_tokens: null,
      tokens: tokens,
      sequences: sequences,
      cache: q.cache,
      static_max_tokens: q.cache === "static" ? tokens : null,
      cache_block_tokens: null,
      kv_dtype: null,
      kv_bytes_per_value: perValue,
      runtime: null,
      runtime_version: null,
      tp: 1n,
      pp: 1n,
      ep: false,
      rows: [{
        rank: 0n, weights: result.weightsBytes, kv: result.kvCacheBytes,
        state: result.stateBytes, reserve: result.reserveBytes,
      }],
      host: null,
    };
    if (split) {
      sheet.weights_source = "config";
      sheet.cache = "vllm_blocks";
      sheet.static_max_tokens = null;
      sheet.cache_block_tokens = SPLIT_BLOCK_SIZE;
      sheet.runtime = "vllm";
      sheet.runtime_version = versions.vllm;
      sheet.tp = options.tp;
      sheet.pp = options.pp;
      sheet.ep = options.ep;
      sheet.rows = split.ranks.map(function (r) {
        return {
          rank: r.rank, weights: r.weightsBytes, kv: r.kvCacheBytes, state: rational(0n),
          reserve: options.reserveBytes,
        };
      });
    }
    return sheet;
  }

  function SheetView(sizer) {
    var doc = sizer.doc;
    this.sizer = sizer;
    this.box = doc.getElementById("sizer-sheet");
    this.button = doc.getElementById("sizer-sheet-copy");
    this.status = this.box.querySelector("[data-sheet-status]");
    this.output = this.box.querySelector("[data-sheet-output]");
    this.messages = doc.getElementById("sizer-sheet-messages");
    this.model = { name: null, hfRepo: null }; // the published model chosen by name, if any
  }

  SheetView.prototype.words = function (key) {
    var el = this.messages ? this.messages.querySelector('[data-sheet-text="' + key + '"]') : null;
    return el ? el.textContent.trim() : key;
  };

  /** The Markdown of the page's inputs now, or {refused: reason}. */
  SheetView.prototype.text = function () {
    var sizer = this.sizer;
    var data = sizer.data;
    var query = sizer.read();
    var result = compute(query, data);
    if (!result.valid) return { refused: "invalid" };
    if (query.task !== "inference") return { refused: "task" };
    var lang = sizer.doc.documentElement.lang;
    var words = data.sheet.words[lang] || data.sheet.words[data.lang];
    var options = sizer.splitOptions(query);
    var split = null;
    var gpus = options && options.ok ? options.tp * options.pp : null;
    if (gpus === null || gpus > 1n) {
      // Several GPUs asked: the split of the config read, or no sheet (never one GPU's instead).
      var planned = sizer.splitRead && options && options.ok ? vllmSplit(sizer.splitRead, options) : null;
      if (planned === null || !planned.ok) return { refused: "split" };
      split = planned;
    }
    var model = {
      name: this.model.name,
      hfRepo: this.model.hfRepo,
      modelType: sizer.splitRead ? sizer.splitRead.config.modelType : null,
    };
    var sheet = sizerSheet(result, model, split, options, data.sheet.versions,
      readsDecimalComma(data));
    return { markdown: sheetMarkdown(sheet, words, sizer.symbols) };
  };

  /** Copy the sheet: to the clipboard where the browser lets the page, and shown below. */
  SheetView.prototype.copy = function () {
    var self = this;
    var made = this.text();
    setAttr(this.box, "data-state", made.refused ? "refused" : "ok");
    if (made.refused) {
      this.output.hidden = true;
      this.status.textContent = this.words("refused_" + made.refused);
      return null;
    }
    this.output.querySelector("code").textContent = made.markdown;
    this.output.hidden = false;
    var shown = function (key) {
      self.status.textContent = self.words(key);
    };
    var clipboard = this.sizer.win.navigator && this.sizer.win.navigator.clipboard;
    if (clipboard && clipboard.writeText) {
      clipboard.writeText(made.markdown).then(function () {
        shown("copied");
      }, function () {
        shown("select");
      });
    } else {
      shown("select");
    }
    return made.markdown;
  };

  /** An edit: the sheet shown is no longer the inputs' (cleared, never left standing). */
  SheetView.prototype.stale = function () {
    if (this.output.hidden && this.box.getAttribute("data-state") === "empty") return;
    this.output.hidden = true;
    this.status.textContent = "";
    setAttr(this.box, "data-state", "empty");
  };

  function startSheet(doc, sizer) {
    if (!doc.getElementById("sizer-sheet") || !sizer.data.sheet) return null;
    var view = new SheetView(sizer);
    view.button.addEventListener("click", function () {
      view.copy();
    });
    var stale = function () {
      view.stale();
    };
    sizer.form.addEventListener("input", stale);
    sizer.form.addEventListener("change", stale);
    // The model's name: a published model chosen by name; a config typed or read from a file
    // has none the page knows.
    if (sizer.modelPreset) {
      sizer.modelPreset.addEventListener("change", function () {
        var chosen = (sizer.data.presets || []).filter(function (preset) {
          return preset.name === sizer.modelPreset.value;
        })[0];
        view.model = chosen ? { name: chosen.name, hfRepo: chosen.hf_repo } : { name: null, hfRepo: null };
        view.stale();
      });
    }
    [sizer.configText, sizer.configFile].forEach(function (el) {
      if (!el) return;
      el.addEventListener(el === sizer.configFile ? "change" : "input", function () {
        view.model = { name: null, hfRepo: null };
        view.stale();
      });
    });
    return view;
  }

  var api = {
    rational: rational,
    exact: exact,
    LIMITS: LIMITS,
    parseNumber: parseNumber,
    parseCount: parseCount,
    parseTokens: parseTokens,
    suffixReadingTexts: suffixReadingTexts,
    parsePositive: parsePositive,
    parseNonNegative: parseNonNegative,
    readsDecimalComma: readsDecimalComma,
    weightsBytes: weightsBytes,
    gibToBytes: gibToBytes,
    gib: gib,
    kvCacheBytes: kvCacheBytes,
    kvByKind: kvByKind,
    readConfig: readConfig,
    evaluateExpression: evaluateExpression,
    CONFIG_MAX_CHARS: CONFIG_MAX_CHARS,
    chartModel: chartModel,
    fillTemplate: fillTemplate,
    roundHalfUp: roundHalfUp,
    formatNumber: formatNumber,
    formatBytes: formatBytes,
    loadCatalog: loadCatalog,
    shortlist: shortlist,
    recipeTensors: recipeTensors,
    vllmSplit: vllmSplit,
    splitChartModel: splitChartModel,
    vllmFit: vllmFit,
    vllmFitFlags: vllmFitFlags,
    fitPositions: fitPositions,
    sheetMarkdown: sheetMarkdown,
    sizerSheet: sizerSheet,
    compute: compute,
    trainingPlan: trainingPlan,
    texts: texts,
    describe: describe,
    queryFromSearch: queryFromSearch,
    searchFromQuery: searchFromQuery,
    start: start,
    autostart: autostart,
    page: null,
  };
  return api;
});
