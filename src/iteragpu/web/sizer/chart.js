/*
 * The SVG charts: their models (exact bytes) and their drawing, the only place floats are
 * used (pixels). The drawing functions are the page's Sizer methods (page.js installs them).
 * Mirrors no Python module.
 */

import { add, cmp, exact, rational } from "./rational.js";
import { gib } from "./memory.js";
import { formatNumber } from "./format.js";
import { htmlNode, keyed, patchContent, setAttr, svgNode } from "./dom.js";
import { inferenceNeed } from "./need.js";

// ------------------------------------------------------------------------------------------
// The memory chart (#memory-chart): plain SVG drawn by this script. A charting library
// (Chart.js 4.5, uPlot 1.6) would add several times this file's bytes to the page and draw
// no better a single stacked bar with tick marks; benchmarks/sizer_bench.py prints the page's
// script bytes and the recompute-and-redraw time against one 16 ms frame.
// ------------------------------------------------------------------------------------------

/**
 * What the chart draws for a valid result: the whole need of the fullest GPU (`need`, of
 * need.js; by default the inference need of `result`) stacked by part — weights, then the
 * reserve and the cache for inference (the first estimate, weights + reserve, ends where the
 * reserve does), or the model states and the reserve for a training run — and the cards that
 * matter: those still to check, in the short list's review order, each with its nominal and
 * declared capacity and whether the whole need is within its capacity on paper (declared,
 * else nominal read as decimal GB). The excluded cards are named apart, not drawn. The axis
 * runs to twice the need, or to the first capacity on paper that holds it if that is larger;
 * a mark beyond the axis is drawn at its end, clipped. Exact bytes, which only the drawing
 * rounds to pixels.
 */
// A need's parts, drawn as these segments in this order.
const SEGMENTS = {
  inference: [["weights", ["weights"]], ["reserve", ["reserve"]], ["kv", ["kv_cache", "layer_states"]]],
  training: [
    ["weights", ["weights"]],
    ["states", ["gradients", "optimizer_states", "master_weights", "master_gradients"]],
    ["reserve", ["reserve"]],
  ],
};

export function chartModel(result, cards, theNeed) {
  var byId = {};
  cards.forEach(function (card) {
    byId[card.id] = card;
  });
  var needed = theNeed || inferenceNeed(result);
  var start = rational(0n);
  var segments = SEGMENTS[needed.task].map(function (entry) {
    var bytes = needed.parts.reduce(function (sum, p) {
      return entry[1].indexOf(p.part) >= 0 ? add(sum, p.bytes) : sum;
    }, rational(0n));
    var segment = { key: entry[0], bytes: bytes, start: start, end: add(start, bytes) };
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
    var within = paper === null ? null : cmp(need, paper) <= 0;
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
  return {
    segments: segments, cards: shown, excluded: excluded, maxBytes: top, need: needed,
  };
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

/** The chart and its text alternative, for a result (nothing drawn for an invalid one). */
export function drawChart(result) {
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
  var model = chartModel(result, this.data.cards, result.need);
  var training = model.need.task === "training";
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
  // Guides: for inference, where the first estimate (weights + reserve) ends and where the
  // whole need does; for a training run, the whole need.
  var guides = training
    ? [["need", model.segments[model.segments.length - 1].end]]
    : [["range", model.segments[1].end], ["kv", model.segments[2].end]];
  guides.forEach(function (guide) {
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
    keyed("need", htmlNode("p", {}, training
      ? this.words("data-chart-text", "need_training", {
        weights: gibText(model.segments[0].bytes),
        states: gibText(model.segments[1].bytes),
        reserve: gibText(model.segments[2].bytes),
        total: gibText(model.need.bytes),
      })
      : this.words("data-chart-text", "need", {
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
}

/**
 * The split's chart model: each rank's need (weights, reserve, KV cache) and each catalogue
 * card's capacity on paper (declared, else the nominal figure read as decimal GB) against the
 * fullest rank; the axis runs to twice the fullest rank, or to the smallest capacity that
 * holds it when that is larger.
 */
export function splitChartModel(split, cards, reserveBytes) {
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

export function drawSplitChart(split, reserveBytes, plot, text) {
  var doc = this.doc;
  var symbols = this.symbols;
  var self = this;
  var model = splitChartModel(split, this.data.cards, reserveBytes);
  var gibText = function (bytes) {
    return formatNumber(gib(bytes), 2, symbols);
  };
  // Drawn at its plot's own width (one user unit a CSS pixel, so the text keeps its 12 px on
  // a phone), measured once on an empty plot and again when the plot's width changes.
  if (!this.splitChartWidth) {
    patchContent(doc, plot, []);
    this.splitChartWidth = Math.max(280, Math.floor(plot.clientWidth || this.chartWidth || 640));
    var view = doc.defaultView;
    if (view && view.ResizeObserver && !this.splitChartObserver) {
      this.splitChartObserver = new view.ResizeObserver(function () {
        var last = self.splitChartLast;
        var now = Math.floor(plot.clientWidth);
        if (!last || !now || Math.abs(now - self.splitChartWidth) < 2) return;
        self.splitChartWidth = null;
        self.drawSplitChart(last[0], last[1], plot, text);
      });
      this.splitChartObserver.observe(plot);
    }
  }
  this.splitChartLast = [split, reserveBytes];
  var width = this.splitChartWidth;
  var labelWidth = Math.min(120, Math.round(width * 0.22));
  var plotWidth = width - labelWidth - 18;
  var rowHeight = 20;
  var cardRow = 17;
  var barsEnd = 8 + model.ranks.length * rowHeight;
  var maxGib = gibFloat(model.maxBytes) * 1.03;
  var step = tickStep(maxGib);
  var axisMax = Math.ceil(maxGib / step) * step;
  var x = function (bytes) {
    return labelWidth + (plotWidth * Math.min(gibFloat(bytes), axisMax)) / axisMax;
  };
  // Each card line drawn (those within the axis) has its name on a row of its own under the
  // bars, beside the line on the side with more room, coloured as the line.
  var drawn = model.cards.filter(function (card) {
    return gibFloat(card.paperBytes) <= axisMax;
  }).sort(function (p, q) {
    return cmp(p.paperBytes, q.paperBytes);
  });
  var axisY = barsEnd + 6 + drawn.length * cardRow + 4;
  var height = axisY + 34;
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
  drawn.forEach(function (card, index) {
    var cx = x(card.paperBytes);
    var rowY = barsEnd + 6 + index * cardRow;
    var side = card.within ? "within" : "beyond";
    marks.push(keyed("card-" + card.id, svgNode("line", {
      x1: cx, x2: cx, y1: 4, y2: rowY + cardRow - 3, class: "sizer-chart-card",
      "data-paper": side,
    })));
    var right = width - cx > cx - labelWidth;
    marks.push(keyed("card-name-" + card.id, svgNode("text", {
      x: right ? cx + 4 : cx - 4, y: rowY + cardRow - 5, "text-anchor": right ? "start" : "end",
      class: "sizer-chart-label sizer-chart-card-name sizer-chart-" + side,
    }, card.name)));
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
}
