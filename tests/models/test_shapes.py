"""The tensors a recipe states against its own counts, without torch: for every family whose
terms state their tensors, on each of its vector configs (iteragpu.docs_tools.
sizer_config_vectors.family_configs: tied and untied, options flipped, sizes changed, windows),
the tensors' elements add up to the parameters the recipe counts, the float32-kept ones to its
float32 count, and the routed experts' to what `active_parameters` leaves out. That each
tensor's name and shape is what Transformers builds is tests/models/test_shapes_transformers.py.
"""

from __future__ import annotations

import pytest

from iteragpu.docs_tools.sizer_config_vectors import family_configs
from iteragpu.models.config import parse_config
from iteragpu.models.errors import ModelInputError
from iteragpu.models.parameters import count_parameters, float32_parameters
from iteragpu.models.recipe import recipe
from iteragpu.models.shapes import parameter_tensors, stated_types


@pytest.mark.parametrize("model_type", stated_types())
def test_the_tensors_add_up_to_the_counts(model_type: str) -> None:
    checked = 0
    for config in family_configs(model_type).values():
        try:
            read = parse_config(config)
            parameters = count_parameters(read)
        except ModelInputError:
            continue  # a config the vectors keep for its refusal
        tensors = parameter_tensors(read)
        assert tensors is not None
        assert sum(t.elements for t in tensors) == parameters, config
        assert sum(t.elements for t in tensors if t.float32) == float32_parameters(read)
        names = [(t.layer, t.name) for t in tensors]
        assert len(names) == len(set(names)), "a tensor stated twice"
        checked += 1
    assert checked >= 2


def test_a_family_whose_terms_state_counts_only_has_no_tensors() -> None:
    from iteragpu.models import recipe as recipes

    llama = recipe("llama")
    assert llama is not None
    data = {**llama.data, "final": [{"name": "norm", "count": "hidden_size"}]}
    counted = recipes.Recipe("llama", data)
    read = parse_config(
        {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
    )
    scope = counted.scope(read.values or {}, "config.json")
    assert recipes.tensors(counted, scope, read.layer_kinds) is None
    assert parameter_tensors(read) is not None
