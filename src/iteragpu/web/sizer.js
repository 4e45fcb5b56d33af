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
    dot: { count: countPattern("."), number: numberPattern(".") },
    comma: { count: countPattern(".,"), number: numberPattern(".,") },
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
   * Memory without a lab run (iteragpu.gpus.shortlist): excluded only above the declared capacity
   * and its rounding; otherwise check_needed, with the reason the nominal figure gives. The
   * nominal figure never excludes.
   */
  function memoryWithoutEvidence(card, needBytes) {
    if (card.declaredBoundBytes !== null && cmp(needBytes, card.declaredBoundBytes) > 0) {
      return { status: "excluded", reason: "declared_below_need" };
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

  /**
   * Every card for a need of `needBytes` over `days` on `cards` cards. Package is `fit` when
   * the catalog lists one for the same days and cards, else `check_needed`; the overall status
   * is the worst. The page takes no lab result, so memory is never `fit` and, as in
   * iteragpu.gpus.shortlist, a candidate not fit on every requirement gets no rank: those to review
   * come in catalogue order, then the excluded ones.
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
      };
    });
    var excluded = function (c) {
      return c.status === "excluded";
    };
    return candidates
      .filter(function (c) {
        return !excluded(c);
      })
      .concat(candidates.filter(excluded));
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
  };

  var FIELDS = [
    ["task", null],
    ["params", parseCount],
    ["bits", parsePositive],
    ["reserve_gib", parseNonNegative],
    ["layers", parseCount],
    ["kv_heads", parseCount],
    ["head_dim", parseCount],
    ["tokens", parseCount],
    ["bytes_per_value", parsePositive],
    ["sequences", parseCount],
    ["window", parseCount],
    ["days", parseCount],
  ];

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
      if (key === "window" && q.window === "") {
        values.window = null;
        return;
      }
      var parsed = parse(q[key], LIMITS[key], decimalComma);
      if (parsed.ok) values[key] = parsed.value;
      else errors.push({ field: key, reason: parsed.reason });
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
    var kv = kvCacheBytes({
      layers: values.layers,
      kvHeads: values.kv_heads,
      headDim: values.head_dim,
      tokens: values.tokens,
      bytesPerValue: values.bytes_per_value,
      sequences: values.sequences,
      window: values.window,
    });
    var catalog = data.cards || loadCatalog(data.catalog);
    return {
      valid: true,
      query: q,
      task: q.task,
      weightsBytes: weights,
      totalBytes: total,
      kvCacheBytes: kv,
      weightsGib: gib(weights),
      totalGib: gib(total),
      kvCacheGib: gib(kv),
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
    };
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
        };
      }),
    };
  }

  // ------------------------------------------------------------------------------------------
  // DOM
  // ------------------------------------------------------------------------------------------

  var PRESET = "data-sizer-preset"; // the weight-format select: 16, 8, 4 or custom

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
    this.outputs = ["weights-gib", "range-gib", "kv-bytes", "kv-gib"].map(function (id) {
      return doc.getElementById(id);
    });
  }

  Sizer.prototype.message = function (attribute, key) {
    var el = this.messages.querySelector("[" + attribute + '="' + key + '"]');
    return el ? el.textContent.trim() : key;
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
  };

  Sizer.prototype.showCustomBits = function () {
    var custom = this.preset.value === "custom";
    var wrapper = this.fields.bits.closest("[data-sizer-custom-bits]") || this.fields.bits;
    wrapper.hidden = !custom;
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
    while (this.errorList.firstChild) this.errorList.removeChild(this.errorList.firstChild);
    var body = this.table.tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);

    var task = result.query.task;
    var taskKnown = this.data.tasks.indexOf(task) >= 0;
    Array.prototype.forEach.call(this.checklists, function (el) {
      el.hidden = !(taskKnown && el.getAttribute("data-task-checklist") === task);
    });

    if (!result.valid) {
      this.outputs.forEach(function (output) {
        output.textContent = empty;
      });
      result.errors.forEach(function (error) {
        var el = error.field === "bits" && self.preset.value !== "custom"
          ? self.preset
          : self.fields[error.field];
        var item = doc.createElement("li");
        item.id = "sizer-error-" + error.field;
        if (el) {
          // The field names its error, which a screen reader reads with it.
          el.setAttribute("aria-invalid", "true");
          el.setAttribute("aria-describedby", item.id);
        }
        item.setAttribute("data-field", error.field);
        item.setAttribute("data-reason", error.reason);
        item.textContent =
          self.label(error.field) + ": " + self.message("data-reason", error.reason);
        self.errorList.appendChild(item);
      });
      this.errorBox.hidden = false;
      this.quantizationNote.hidden = true;
      this.results.setAttribute("data-state", "error");
      return;
    }

    var shown = texts(result, this.symbols);
    this.outputs.forEach(function (output) {
      output.textContent = shown[output.id];
    });
    this.errorBox.hidden = true;
    this.quantizationNote.hidden = !result.quantizationNotCounted;
    this.results.setAttribute("data-state", "ok");
    var sheets = this.data.sheets || {};
    result.candidates.forEach(function (c) {
      var row = doc.createElement("tr");
      row.setAttribute("data-card-id", c.id);
      row.setAttribute("data-status", c.status);
      row.setAttribute("data-rank", c.rank === null ? "" : String(c.rank));
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
      cells.forEach(function (cell, index) {
        var td = doc.createElement("td");
        td.setAttribute("data-column", cell[0]);
        td.setAttribute("data-label", self.columnNames[index] || "");
        if (cell[0] === "memory" || cell[0] === "package" || cell[0] === "overall") {
          td.setAttribute("data-status", cell[1]);
          td.textContent = self.message("data-status", cell[1]);
        } else if (cell[0] === "why") {
          td.setAttribute("data-memory-reason", cell[1]);
          td.textContent = self.message("data-memory-reason", cell[1]);
        } else if (cell[0] === "card" && sheets[c.id]) {
          var link = doc.createElement("a");
          link.href = sheets[c.id];
          link.textContent = cell[1];
          td.appendChild(link);
        } else {
          td.textContent = cell[1];
        }
        row.appendChild(td);
      });
      body.appendChild(row);
    });
  };

  /** Recompute from the form, show it, and keep the URL in step. */
  Sizer.prototype.update = function () {
    this.showCustomBits();
    var query = this.read();
    var result = compute(query, this.data);
    this.render(result);
    var url =
      this.win.location.pathname +
      searchFromQuery(query, this.data.defaults) +
      this.win.location.hash;
    try {
      this.win.history.replaceState(this.win.history.state, "", url);
    } catch (error) {
      // Some browsers refuse too many history updates in a row; the figures are still right.
    }
    return result;
  };

  /** Start the sizer on a page: state from the URL, then recompute on every input. */
  function start(doc, win) {
    var dataElement = doc.getElementById("sizer-data");
    if (!dataElement || !doc.getElementById("sizer-form")) return null;
    var sizer = new Sizer(doc, win, JSON.parse(dataElement.textContent));
    var query = queryFromSearch(win.location.search, sizer.data.defaults);
    sizer.fill(query);
    sizer.render(compute(query, sizer.data));
    var onInput = function () {
      sizer.update();
    };
    sizer.form.addEventListener("input", onInput);
    sizer.form.addEventListener("change", onInput);
    sizer.form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    return sizer;
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
    rational: rational,
    exact: exact,
    LIMITS: LIMITS,
    parseNumber: parseNumber,
    parseCount: parseCount,
    parsePositive: parsePositive,
    parseNonNegative: parseNonNegative,
    readsDecimalComma: readsDecimalComma,
    weightsBytes: weightsBytes,
    gibToBytes: gibToBytes,
    gib: gib,
    kvCacheBytes: kvCacheBytes,
    roundHalfUp: roundHalfUp,
    formatNumber: formatNumber,
    formatBytes: formatBytes,
    loadCatalog: loadCatalog,
    shortlist: shortlist,
    compute: compute,
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
