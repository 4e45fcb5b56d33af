/*
 * The short list: each card's status, reasons and review order for a need.
 * Mirrors iteragpu.gpus.shortlist.
 */

import { add, cmp, mul, neg, rational } from "./rational.js";
import { gib } from "./memory.js";

const STATUS_ORDER = { fit: 0, check_needed: 1, excluded: 2 };

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

/** Review order of candidates to check (iteragpu.gpus.shortlist._review_key): the cards whose
 * capacity on paper holds the need first; then cost (no package last), then margin on paper. */
function reviewCompare(a, b) {
  if (a.holdsNeedOnPaper !== b.holdsNeedOnPaper) return a.holdsNeedOnPaper ? -1 : 1;
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
 * The card's package of `cards` cards for `days` days (iteragpu.gpus.shortlist._package): a
 * fixed-price package of exactly those days, else the cheapest hourly offer for `cards` cards
 * priced as its instance's rate x 24 h x days (the first of equal prices); null without either.
 */
function cardPackage(card, days, cards) {
  for (var i = 0; i < card.packages.length; i += 1) {
    if (card.packages[i].days === days && card.packages[i].cards === cards) {
      return card.packages[i];
    }
  }
  var cheapest = null;
  (card.offers || []).forEach(function (offer) {
    if (offer.cards !== cards) return;
    var price = mul(offer.instanceHourly, rational(24n * days));
    if (cheapest === null || cmp(price, cheapest.price) < 0) {
      cheapest = { cards: cards, days: days, price: price, currency: offer.currency, hourly: true };
    }
  });
  return cheapest;
}

/**
 * Every card for a need of `needBytes` over `days` on `cards` cards. Package is `fit` when
 * the catalog lists one for the same days and cards, else `check_needed`; the overall status
 * is the worst. The page takes no lab result, so memory is never `fit` and, as in
 * iteragpu.gpus.shortlist, a candidate not fit on every requirement gets no rank: those to
 * review come in review order (those whose capacity on paper holds the need first, then cost,
 * then margin on paper; ties in catalogue order, as Array.prototype.sort is stable), which is
 * not a rank, then the excluded ones. `needMissing` names the parts of the need still to
 * measure (iteragpu.gpus.need), recorded on every candidate.
 */
export function shortlist(catalog, needBytes, days, cards, needMissing) {
  if (cards === undefined || cards === null) cards = 1n;
  var candidates = catalog.map(function (card) {
    var pkg = cardPackage(card, days, cards);
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
      // The capacity on paper holds the whole need (a margin known and not negative).
      holdsNeedOnPaper: margin.bytes !== null && margin.bytes >= 0n,
      // The parts of the need still to measure: the need is then a lower bound, an exclusion
      // stands and a margin is at most the figure shown.
      needMissing: needMissing || [],
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
