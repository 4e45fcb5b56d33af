"""Every parameter tensor a run's model holds, named in full as Transformers 5.24 names it, with
the class of the module that holds it: what LoRA may wrap, what `all-linear` means, what
bitsandbytes quantizes.

The tensors' shapes come from the family's recipe (iteragpu.models.recipe; a multimodal
wrapper's tower and projector from iteragpu.models.towers); how the causal-LM class names them
and which module classes hold them from one table, `naming.json` beside this module (its
`about` says each key). The table is proved family by family by
tests/training/test_families_torch.py: each family built by Transformers on the meta device,
wrapped by PEFT (LoRA's default targets, all-linear, DoRA) and quantized by Transformers'
bitsandbytes integration, every tensor's name, shape, dtype and trainability compared.

A multimodal wrapper is its ForConditionalGeneration class (AutoModelForImageTextToText): the
tower under the recipe's `modules.vision`, the projector under `modules.projector`, the text
decoder's modules under `modules.language_model` (its family's own prefix dropped) and the head
at `modules.lm_head`, in that order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record

if TYPE_CHECKING:
    from iteragpu.models.config import ModelConfig
    from iteragpu.models.recipe import Recipe, TensorSpec

TABLE: Final = Path(__file__).with_name("naming.json")

# The module classes the table names (its `about` says what each means for PEFT and
# bitsandbytes).
Kind = Literal["linear", "linear_subclass", "conv1d", "embedding", "parameters"]
KINDS: Final = ("linear", "linear_subclass", "conv1d", "embedding", "parameters")
LINEAR_KINDS: Final = frozenset({"linear", "linear_subclass", "conv1d"})


class NamingError(InputError):
    """A model whose tensors' names or modules are not stated (one line, exit 2)."""


class Param(Record):
    """One parameter tensor the model holds, named in full."""

    name: str  # `model.layers.0.self_attn.q_proj.weight`
    shape: tuple[int, ...]
    float32: bool  # kept in float32 whatever the model's dtype
    kind: Kind  # the class of the module that holds it
    frozen: bool = False  # built with requires_grad=False: not trained even in full

    @property
    def module(self) -> str:
        return self.name.rpartition(".")[0]

    @property
    def leaf(self) -> str:
        return self.name.rpartition(".")[2]

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


class ModelTensors(Record):
    """A model's parameters as the run's model holds them, and what PEFT and bitsandbytes read
    around them."""

    model_type: str  # the config's model_type (the wrapper's): PEFT's default targets read it
    params: tuple[Param, ...]  # in the order Transformers registers them, tied weights once
    head: str  # the output embeddings' module
    # A tied head: its module, and its weight's shape and float32 flag (the embedding's).
    tied_heads: Mapping[str, tuple[tuple[int, ...], bool]]
    last_module: str  # the module of the last parameter Transformers registers
    transposed: frozenset[str]  # experts modules whose 3-D weights are [experts, in, out]


class Naming(Record):
    """One family's entry of the table, its base chain merged in."""

    outer: str
    layer: str
    head: str
    tied: Mapping[str, str]
    last: str | None
    modules: Mapping[str, str]
    transposed: tuple[str, ...]
    frozen: tuple[str, ...]
    wrapper: str | None


@cache
def _table() -> dict[str, Any]:
    from iteragpu.models.json_reader import json_loads

    data: dict[str, Any] = json_loads(TABLE.read_text("utf-8"))
    return data


def table() -> dict[str, Any]:
    """The whole table (the sizer page embeds it)."""
    return _table()


@cache
def family_naming(model_type: str) -> Naming:
    """The family's entry, each key taken from the nearest entry on its recipe's base chain;
    `modules` and `transposed` merged along the chain (the nearest wins)."""
    from iteragpu.models.recipe import recipe

    chain: list[dict[str, Any]] = []
    seen = model_type
    families = _table()["families"]
    while True:
        if seen in families:
            chain.append(families[seen])
        described = recipe(seen)
        base = described.data.get("base") if described is not None else None
        if not isinstance(base, str):
            break
        seen = base
    merged: dict[str, Any] = {}
    modules: dict[str, str] = {}
    transposed: list[str] = []
    frozen: list[str] = []
    for entry in reversed(chain):
        merged.update(entry)
        modules.update(entry.get("modules", {}))
        transposed += [m for m in entry.get("transposed", []) if m not in transposed]
        frozen += [m for m in entry.get("frozen", []) if m not in frozen]
    if "outer" not in merged or "layer" not in merged:
        raise NamingError(
            "the {family} family's tensor names are not stated: training sizes need them",
            "no_tensor_names",
            family=model_type,
        )
    return Naming(
        outer=str(merged["outer"]),
        layer=str(merged["layer"]),
        head=str(merged.get("head", "lm_head")),
        tied=dict(merged.get("tied", {})),
        last=merged.get("last"),
        modules=modules,
        transposed=tuple(transposed),
        frozen=tuple(frozen),
        wrapper=merged.get("wrapper") if model_type in families else None,
    )


def _pattern(key: str) -> re.Pattern[str]:
    """A module name of the table: `*` stands for one component (`altup_projections.*`)."""
    parts = re.split(r"(\*)", key)
    return re.compile("".join(r"[^.]+" if p == "*" else re.escape(p) for p in parts) + "$")


@cache
def _patterns(items: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((_pattern(key), kind) for key, kind in items)


class _Classes:
    """The class of each module of a recipe's terms: the table's where it names the module,
    else an nn.Linear for a `linear` term, an nn.Embedding for a 2-D `shape` term among the
    embeddings, else a module holding its parameters."""

    def __init__(self, described: Recipe, modules: Mapping[str, str]) -> None:
        data = described.data
        self.linear = {
            str(term["name"])
            for section in ("embeddings", "layer", "final", "projector")
            for term in data.get(section, [])
            if "linear" in term
        }
        self.embedding = {
            str(term["name"])
            for term in data.get("embeddings", [])
            if "shape" in term and len(term["shape"]) == 2
        }
        self.table = _patterns(tuple(sorted(modules.items())))

    def kind(self, module: str) -> Kind:
        for pattern, kind in self.table:
            if pattern.match(module):
                if kind not in KINDS:
                    raise ValueError(f"naming.json: unknown module class {kind!r}")
                return kind  # type: ignore[return-value]
        if module in self.linear:
            return "linear"
        if module in self.embedding:
            return "embedding"
        return "parameters"


def _params(
    specs: Sequence[TensorSpec],
    classes: _Classes,
    name_of: Any,
    frozen: Sequence[str] = (),
) -> list[Param]:
    found = []
    for spec in specs:
        module = spec.name.rpartition(".")[0]
        kind = classes.kind(module)
        found.append(Param(name_of(spec), spec.shape, spec.float32, kind, spec.name in frozen))
    return found


def model_tensors(config: ModelConfig) -> ModelTensors:
    """Every parameter of the model `config` describes, as its causal-LM class (a wrapper: its
    ForConditionalGeneration class) holds it; NamingError for what is not stated."""
    from iteragpu.models.recipe import recipe
    from iteragpu.models.shapes import parameter_tensors

    naming = family_naming(config.model_type)
    if config.outer_model_type is not None:
        return _wrapper_tensors(config, naming)
    if naming.wrapper is not None:
        raise NamingError(
            "Transformers 5.24 builds the {family} decoder only inside its wrapper: give the "
            "{wrapper} config",
            "no_causal_lm",
            family=config.model_type,
            wrapper=naming.wrapper,
        )
    specs = parameter_tensors(config)
    described = recipe(config.model_type)
    if specs is None or described is None:
        raise NamingError(
            "the {family} family's recipe states its parameter count, not its tensors: "
            "training sizes need each tensor",
            "no_tensors",
            family=config.model_type,
        )
    classes = _Classes(described, naming.modules)
    head = naming.head

    def name_of(spec: TensorSpec) -> str:
        if spec.layer is not None:
            return naming.layer.format(layer=spec.layer) + spec.name
        if spec.name == head or spec.name.startswith(f"{head}."):
            return spec.name
        return naming.outer + spec.name

    params = _params(specs, classes, name_of, naming.frozen)
    tied = config.tie_word_embeddings and bool(naming.tied)
    return _finish(config.model_type, params, head, naming, tied, naming.tied)


def _finish(
    model_type: str,
    params: list[Param],
    head: str,
    naming: Naming,
    tied: bool,
    tied_sources: Mapping[str, str],
    last_prefix: str | None = None,
) -> ModelTensors:
    names = {p.name: p for p in params}
    tied_heads: dict[str, tuple[tuple[int, ...], bool]] = {}
    modules = {p.module for p in params}
    if tied:
        for module, source in tied_sources.items():
            weight = names.get(f"{source}.weight")
            if module not in modules and weight is not None:
                tied_heads[module] = (weight.shape, weight.float32)
    last = params[-1].module if params else ""
    if naming.last is not None and head in tied_heads:
        # The class registers these after the recipe's last term (Gemma-3n's AltUp
        # projections after the final norm).
        prefix = (last_prefix if last_prefix is not None else naming.outer) + naming.last + "."
        under = [p.module for p in params if p.name.startswith(prefix)]
        if under:
            last = under[-1]
    return ModelTensors(
        model_type=model_type,
        params=tuple(params),
        head=head,
        tied_heads=tied_heads,
        last_module=last,
        transposed=frozenset(
            p.module for p in params if any(p.module.endswith(f".{t}") for t in naming.transposed)
        ),
    )


def _wrapper_tensors(config: ModelConfig, naming: Naming) -> ModelTensors:
    from iteragpu.models.recipe import recipe
    from iteragpu.models.towers import tower, wrapper, wrapper_tensors

    outer_type = str(config.outer_model_type)
    found = wrapper_tensors(config)
    described = wrapper(outer_type)
    if found is None or described is None:
        raise NamingError(
            "the {family} wrapper's tower or projector is not stated tensor by tensor: "
            "training sizes need each tensor",
            "no_tensors",
            family=outer_type,
        )
    towers = _table()["towers"]
    vision_recipe = tower(found.vision_type)
    if found.vision_type not in towers or vision_recipe is None:
        raise NamingError(
            "the {family} vision tower's tensor names are not stated: training sizes need them",
            "no_tensor_names",
            family=found.vision_type,
        )
    entry = towers[found.vision_type]
    modules = found.modules
    vision = f"{modules['vision']}."
    tower_layer = str(entry["layer"])
    vision_classes = _Classes(vision_recipe, entry.get("modules", {}))

    def vision_name(spec: TensorSpec) -> str:
        if spec.layer is not None:
            return vision + tower_layer.format(layer=spec.layer) + spec.name
        return vision + spec.name

    params = _params(found.vision, vision_classes, vision_name)
    if modules.get("projector") is not None:
        projector = f"{modules['projector']}."
        params += _params(
            found.projector, _Classes(described, {}), lambda spec: projector + spec.name
        )
    text_recipe = recipe(config.model_type)
    assert text_recipe is not None  # wrapper_tensors found it
    language = f"{modules['language_model']}."
    head, own_head = str(modules["lm_head"]), naming.head
    outer = naming.outer
    inner_layer = naming.layer.removeprefix(outer)

    def text_name(spec: TensorSpec) -> str:
        if spec.layer is not None:
            return language + inner_layer.format(layer=spec.layer) + spec.name
        if spec.name == own_head or spec.name.startswith(f"{own_head}."):
            return head + spec.name[len(own_head) :]
        return language + spec.name.removeprefix(outer)

    params += _params(found.text, _Classes(text_recipe, naming.modules), text_name, naming.frozen)
    # The wrapper's head shares the decoder's input embeddings (the family's tied source).
    sources = {}
    for source in naming.tied.values():
        sources[head] = language + source.removeprefix(outer)
    return _finish(outer_type, params, head, naming, found.tied, sources, language)
