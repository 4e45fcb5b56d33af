"""The `--json` object of a split (`iteragpu model PATH --tp T --pp P [--ep] --runtime R`).

Keys (stable): `path`, `model_type`, `runtime` and `runtime_version` (the release or commit
whose rules were read), `tp`, `pp`, `ep`, `gpus`, `tokens`, `sequences` (llama.cpp: its
`--parallel` slots, sharing `tokens`), `weights_dtype`, `kv_dtype`, `kv_bytes_per_value`;
`ranks`: one object per GPU with `rank`, `device`, `tp_rank`, `pp_stage`, `layers` ([first,
end) of the decoder layers it runs, null when none), `output_layer` (llama.cpp), `tensors`
(per name and how it is held: `column`, `row`, `vocab`, `experts`, `expert_slices`,
`replicated`, `kv_replicated`, `whole`, `duplicated`; with `layers`, `elements`, `bytes`), and
byte figures (`*_bytes` integers rounded up, `*_bytes_exact`, `*_gib`): `weights`,
`weights_replicated` (of the weights, what other ranks of the stage hold too), `kv_cache`,
`state`, `reserve`, `fixed` (weights + states + reserve), `total`; with `kv_bytes_per_token`
(one token of one sequence on this rank's layers, exact decimal text) and `kv_tokens` (the
token slots the runtime allocates, all sequences: vLLM's whole blocks, llama.cpp's padded
cells), so that `kv_cache = kv_bytes_per_token x kv_tokens` for vLLM and llama.cpp; `host`:
llama.cpp's part in host memory (same keys), else null; `first_to_fill`: the rank that needs
the most (`rank`, `total_bytes`, `total_gib`); `notes`: codes of what the figures assume or
leave out.
"""

from __future__ import annotations

from typing import Any

from iteragpu.core.numbers import exact_decimal_text
from iteragpu.core.quantity import byte_fields
from iteragpu.parallel.records import RankPlan, SplitPlan

VERSIONS = {
    "transformers": "5.24.0",
    "vllm": "0.34.0",
    "llama.cpp": "00342301d01add50835550e8a916f12097d94517",
}


def rank_json(rank: RankPlan) -> dict[str, Any]:
    return {
        "rank": rank.rank,
        "device": rank.device,
        "tp_rank": rank.tp_rank,
        "pp_stage": rank.pp_stage,
        "layers": list(rank.layers) if rank.layers[1] > rank.layers[0] else None,
        "output_layer": rank.output_layer,
        "tensors": [
            {
                "name": share.name,
                "section": share.section,
                "how": share.how,
                "layers": share.layers,
                "elements": share.elements,
                **byte_fields("tensor", share.byte_count),
            }
            for share in rank.tensors
        ],
        **byte_fields("weights", rank.weights_bytes, "GiB"),
        **byte_fields("weights_replicated", rank.weights_replicated_bytes, "GiB"),
        "kv_bytes_per_token": exact_decimal_text(rank.kv_bytes_per_token),
        "kv_tokens": rank.kv_tokens,
        **byte_fields("kv_cache", rank.kv_cache_bytes, "GiB"),
        **byte_fields("state", rank.state_bytes, "GiB"),
        **byte_fields("reserve", rank.reserve_bytes, "GiB"),
        **byte_fields("fixed", rank.fixed_bytes, "GiB"),
        **byte_fields("total", rank.total_bytes, "GB", "GiB"),
    }


def plan_json(plan: SplitPlan, path: str) -> dict[str, Any]:
    """The split's object (keys in this module's docstring)."""
    first = plan.first_to_fill
    return {
        "path": path,
        "model_type": plan.model_type,
        "runtime": plan.runtime,
        "runtime_version": VERSIONS[plan.runtime],
        "tp": plan.tp,
        "pp": plan.pp,
        "ep": plan.ep,
        "gpus": len(plan.ranks),
        "tokens": plan.tokens,
        "sequences": plan.sequences,
        "weights_dtype": plan.weights_dtype,
        "kv_dtype": plan.kv_dtype,
        "kv_bytes_per_value": exact_decimal_text(plan.kv_bytes_per_value),
        "ranks": [rank_json(rank) for rank in plan.ranks],
        "host": None if plan.host is None else rank_json(plan.host),
        "first_to_fill": {"rank": first.rank, **byte_fields("total", first.total_bytes, "GiB")},
        "notes": list(plan.notes),
    }
