"""The Transformers plans `iteragpu.parallel` records (transformers_plans.json) against
Transformers 5.24 itself: each family built on the meta device, its `tp_plan` and `ep_plan`
(`DistributedMixin.init_parallel_plans`: the config's plans under the base model's prefix, the
head's `_tp_plan`, `embedding_rowwise` on `embed_tokens`) equal to the recorded ones; and each
parameter the family builds is one the planner places (the recipe's tensors, by the same full
names). Run by `nox -s ranks` (marker `ranks`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from iteragpu.parallel import transformers_rules

pytestmark = pytest.mark.ranks


@pytest.mark.parametrize("model_type", transformers_rules.families())
def test_recorded_plans_are_transformers_own(model_type: str) -> None:
    pytest.importorskip("torch")
    # The models session's builder of each family on the meta device (its buildable settings).
    sys.path.insert(0, str(Path(__file__).parents[1] / "models"))
    from test_families_transformers import _built

    from iteragpu.models.config import parse_config
    from iteragpu.models.shapes import parameter_tensors

    config, model = _built(model_type)
    recorded = transformers_rules.plans()[model_type]
    assert dict(model.tp_plan) == recorded["tp_plan"]
    assert dict(model.ep_plan) == recorded["ep_plan"]
    # every parameter Transformers builds has the name the planner gives the recipe's tensor
    tensors = parameter_tensors(parse_config(config.to_dict()))
    assert tensors is not None
    built = {name for name, _ in model.named_parameters()}
    assert {transformers_rules.full_name(t) for t in tensors} == built
