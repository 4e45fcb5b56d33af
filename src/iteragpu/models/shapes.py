"""A model's parameter tensors (name, shape, dtype rule) from its config, for training sizes.

Optimizer states are kept per tensor (AdamW's `step` is one 4-byte scalar per tensor; Adafactor
factors a 2-D tensor into a row and a column), sharding splits each tensor by rows, LoRA wraps
the linear layers it targets: all of it needs the tensors, not only their total. They come from
the family's recipe (iteragpu.models.recipe: terms with `linear`, `shape` or `tensors`); the
proof builds each family with Transformers on the meta device and compares every tensor's name
and shape (tests/models/test_shapes_transformers.py).
"""

from __future__ import annotations

from iteragpu.models.config import ModelConfig
from iteragpu.models.recipe import TensorSpec


def parameter_tensors(config: ModelConfig) -> tuple[TensorSpec, ...] | None:
    """Every parameter tensor of the decoder, tied weights once; None where the family's
    recipe does not state its tensors (or the family has no recipe)."""
    from iteragpu.models.recipe import recipe, tensors

    described = recipe(config.model_type)
    if described is None or config.values is None:
        return None
    return tensors(described, described.scope(config.values, "config.json"), config.layer_kinds)


def stated_types() -> list[str]:
    """The families whose recipe (with its base's) states the tensors of every term."""
    from iteragpu.models.recipe import recipe, recipe_types

    found = []
    for model_type in recipe_types():
        described = recipe(model_type)
        assert described is not None
        data = described.data
        terms = [t for section in ("embeddings", "layer", "final") for t in data.get(section, [])]
        if all({"linear", "shape", "tensors"} & set(term) for term in terms):
            found.append(model_type)
    return found
