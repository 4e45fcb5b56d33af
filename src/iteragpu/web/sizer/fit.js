/*
 * What fits, solved backwards: the longest context and the most sequences a split holds on a
 * card (vllmFit), and vLLM's flags for it. Mirrors iteragpu.parallel.fit.
 */

import { add, cmp, mul, neg, rational } from "./rational.js";
import { ceilDiv } from "./sharding.js";
import { SPLIT_BLOCK_SIZE } from "./split.js";

// What fits, solved backwards: vLLM 0.34.0's upper bound of a split on a card
// (iteragpu.parallel.fit, the Python module's, checked against its answers: sizer_fit_vectors,
// node --test). Each rank's room for the cache is `math.ceil(total * utilization)` (vLLM's
// request_memory, in its floats) less its weights and reserve; its blocks are that room over
// its bytes per block of 64 tokens; every rank keeps the weakest rank's count; one block (the
// null block) serves no request.
const FIT_KEYS = [
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
const FIT_UNSCALED_ROPE = ["su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"];
const FIT_MAX_TOKENS = 1000000000n;
const FIT_MAX_SEQUENCES = 1000000n;

/** The model's positions as vLLM derives its longest max_model_len (config/model.py), or
 * null when the config states none. */
export function fitPositions(read) {
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

/** What a rank needs for `tokens` x `sequences` in vLLM's blocks, with the null block. */
function blocksNeeded(tokens, sequences) {
  return sequences * ceilDiv(tokens, SPLIT_BLOCK_SIZE) + 1n;
}

/**
 * vLLM's answer for a split (vllmSplit's result) on cards of `o.capacityBytes` (BigInt) at
 * `o.utilization` (its text, "1.0"): solves the tokens per sequence (`o.tokens` null) for
 * `o.sequences`, or the sequences (`o.sequences` null) at `o.tokens`. Returns
 * { ok, tokens, sequences, blocks, cacheTokens, concurrency, limitedBy, positions, budget,
 * ranks, weakest } (each rank's fixed bytes, room for the cache, bytes per block and blocks;
 * `weakest`: the first rank with the fewest blocks, whose count every rank keeps) or
 * { ok: false, reason } (for "fit_does_not_fit" also the `tokens` x `sequences` tried, as
 * iteragpu.parallel.fit tries them, `lackBytes`, the most any GPU lacks for them, `lacking`,
 * that GPU's entry of `ranks`, and the blocks and bytes its cache needs for them).
 */
export function vllmFit(split, o) {
  var positions = o.positions;
  if (o.tokens !== null && positions !== null && o.tokens > positions) {
    return {
      ok: false,
      reason: "fit_above_positions",
      values: { tokens: o.tokens, positions: positions },
    };
  }
  var budget = BigInt(Math.ceil(Number(o.capacityBytes) * Number(o.utilization)));
  var ranks = split.ranks.map(function (r) {
    var perBlock = mul(r.kvBytesPerToken, rational(SPLIT_BLOCK_SIZE));
    var fixed = add(r.totalBytes, neg(r.kvCacheBytes));
    var room = add(rational(budget), neg(fixed));
    return {
      rank: r.rank,
      fixedBytes: fixed,
      roomBytes: room,
      blockBytes: perBlock,
      blocks: room.n < 0n ? -1n : (room.n * perBlock.d) / (room.d * perBlock.n),
    };
  });
  var weakest = ranks[0];
  ranks.forEach(function (r) {
    if (r.blocks < weakest.blocks) weakest = r;
  });
  // iteragpu.parallel.fit's target: the asked tokens (else 1) x the asked sequences (else 1)
  var notFit = function () {
    var tokens = o.tokens === null ? 1n : o.tokens;
    var sequences = o.sequences === null ? 1n : o.sequences;
    var need = rational(blocksNeeded(tokens, sequences));
    var lack = null;
    var lacking = null;
    ranks.forEach(function (r) {
      var short = add(mul(r.blockBytes, need), neg(r.roomBytes));
      if (lack === null || cmp(short, lack) > 0) {
        lack = short;
        lacking = r;
      }
    });
    return {
      ok: false,
      reason: "fit_does_not_fit",
      tokens: tokens,
      sequences: sequences,
      gpus: BigInt(ranks.length),
      budget: budget,
      lackBytes: lack,
      lacking: lacking,
      neededBlocks: need.n,
      neededBytes: mul(lacking.blockBytes, need),
    };
  };
  var blocks = weakest.blocks;
  if (blocks < 1n) return notFit();
  var usable = blocks - 1n;
  var cap = positions === null ? FIT_MAX_TOKENS : positions;
  var tokens, sequences, limitedBy;
  if (o.tokens === null) {
    sequences = o.sequences;
    if (usable < sequences) return notFit();
    tokens = SPLIT_BLOCK_SIZE * (usable / sequences);
    limitedBy = "memory";
    if (tokens >= cap) {
      tokens = cap;
      limitedBy = positions === null ? "memory" : "positions";
    }
  } else {
    tokens = o.tokens;
    sequences = usable / ceilDiv(tokens, SPLIT_BLOCK_SIZE);
    if (sequences > FIT_MAX_SEQUENCES) sequences = FIT_MAX_SEQUENCES;
    if (sequences < 1n) return notFit();
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
    budget: budget,
    ranks: ranks,
    weakest: weakest,
  };
}

/** What a GPU lacks (bytes, a rational above 0) in hundredths of a GiB, rounded up, as
 * `iteragpu fit` says it: at least this, never less (a BigInt). */
export function lackHundredths(lackBytes) {
  return ceilDiv(lackBytes.n * 100n, lackBytes.d * (1n << 30n));
}

/** vLLM's flags for the answer, ready to paste (the model's name is the reader's). */
export function vllmFitFlags(answer, split, o) {
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
