"""The tables the sizer page's training mode reads (docs/hooks.py gives them to the page as
`training`): how each family's class names and builds its modules (naming.json), PEFT's default
targets, its MoE conversion and Mamba refusals, and the byte rules' constants. The page's
script (src/iteragpu/web/sizer/training*.js and sharding.js) applies the same rules as
iteragpu.training to them; tests/js/sizer_training.test.mjs holds its answers equal to
`iteragpu train`'s (vectors from iteragpu.docs_tools.sizer_training_vectors)."""

from __future__ import annotations

from typing import Any


def sizer_tables() -> dict[str, Any]:
    """Every table the page's training mode reads, as JSON."""
    from iteragpu.training import adapters, sharding, states
    from iteragpu.training.naming import table

    return {
        "naming": table(),
        "peft": {
            "default_targets": {k: list(v) for k, v in adapters.PEFT_DEFAULT_TARGETS.items()},
            "moe_converted": dict(adapters.PEFT_MOE_CONVERTED),
            "moe_targets": {k: dict(v) for k, v in adapters.PEFT_MOE_TARGETS.items()},
            "moe_fused": {
                k: {n: list(o) for n, o in v.items()} for k, v in adapters.PEFT_MOE_FUSED.items()
            },
            "mamba_types": sorted(adapters.PEFT_MAMBA_TYPES),
            "mamba_incompatible": sorted(adapters.PEFT_MAMBA_INCOMPATIBLE),
        },
        "constants": {
            "block": adapters.BLOCK,
            "nested_block": adapters.NESTED_BLOCK,
            "nf4_fp4_codes": adapters.NF4_FP4_CODES,
            "dynamic_codes": adapters.DYNAMIC_CODES,
            "min_8bit_size": states.MIN_8BIT_SIZE,
            "block_8bit": states.BLOCK_8BIT,
            "qmap_values": states.QMAP_VALUES,
            "zero_alignment_factor": sharding.ZERO_ALIGNMENT_FACTOR,
            "zero3_sub_group_size": sharding.ZERO3_SUB_GROUP_SIZE,
        },
    }
