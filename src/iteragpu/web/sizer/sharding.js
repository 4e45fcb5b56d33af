/*
 * Training mode, third step: the model states shared out over the GPUs (FSDP2, ZeRO 1-3).
 * Mirrors iteragpu.training.sharding.
 */

import { has, record } from "./objects.js";
import { DTYPE_BYTES, elementsOf, TRAIN_SHARDS, trainRefuse } from "./training_tensors.js";

const RANK_KINDS = ["parameters", "quant_states", "gradients", "optimizer", "master_weights",
  "master_gradients", "host", "padding"];
const ITEM_KINDS = { gradient: "gradients", optimizer: "optimizer", master_weight: "master_weights",
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

export function ceilDiv(a, b) {
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
export function shardPlan(tensors, states, shard, gpus, constants) {
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
