/*
 * The GPU catalogue as the page's data holds it, read into exact values.
 * Mirrors iteragpu.gpus.catalog.
 */

import { add, mul, rational } from "./rational.js";
import { parseNumber } from "./numbers.js";
import { BYTES_PER_GB, BYTES_PER_GIB } from "./memory.js";

// ------------------------------------------------------------------------------------------
// Catalog and short list (iteragpu.gpus.catalog, iteragpu.gpus.shortlist)
// ------------------------------------------------------------------------------------------

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
export function loadCatalog(raw) {
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
      // On-demand hourly offers (iteragpu.gpus.catalog.HourlyOffer): priced for any days as
      // the instance's hourly rate x 24 h x days.
      offers: (card.hourly_offers || []).map(function (o) {
        var hourly = catalogValue(o.hourly_price);
        var cards = BigInt(o.cards);
        return {
          cards: cards,
          instanceHourly: o.price_per === "gpu" ? mul(hourly, rational(cards)) : hourly,
          currency: o.currency,
        };
      }),
    };
  });
}
