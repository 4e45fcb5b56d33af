"""Multimodal wrappers as data: what a wrapper builds beside its text decoder (its vision tower
and projector), from config.json alone, as Transformers 5.24 builds it.

Two kinds of recipe, in the format of iteragpu.models.recipe (`defaults`, `derived`, `let`,
`aliases`, `require`, terms with `count` and `when`, `base`):

- `families/towers/<vision model_type>.json`, one vision encoder (CLIP, SigLIP, Pixtral, the
  Qwen-VL vision transformers and their mergers, Llama 4's vision model): `defaults`, the vision
  config class's defaults; `aliases`, the canonical key each of the class's other names stands
  for (`"depth": "num_hidden_layers"`: a config stating `num_hidden_layers` sets `depth`);
  `required`, the keys a stated vision_config must give (its layers, heads and width: never
  defaulted, as the text reader's); `positive`, the keys that must be positive whole numbers;
  `layers`, the number of encoder layers (an expression); `embeddings`, `layer` (the terms of
  one layer: every layer is alike, `layer` is not known) and `final`.
- `families/wrappers/<wrapper model_type>.json`, one wrapper: `text`, the decoder's
  model_type when text_config names none; `vision`: `key` (the vision config's key,
  `vision_config`), `model_type` (its type when it names none, or always where `fixed`: the
  class builds one tower whatever the config names) and `defaults` (the vision config the class
  builds when config.json has none: its sub-config's init arguments, LLaVA's CLIP ViT-L/14-336);
  `defaults`, the wrapper's own keys; `positive`; `lists`, the keys that are a value or a list
  of values (`vision_feature_layer`), read as a list; `tie`, whether the head shares the input
  embeddings (an expression); `projector`, its terms; `modules`, the top modules' names in the
  model Transformers builds (`vision`, `projector` (null: none, the tower holds it),
  `language_model`, `lm_head`).

A wrapper's expressions read the wrapper's keys over its defaults, and two dicts: `text`, the
decoder's values (its family defaults and derived keys; `tie_word_embeddings` the text config's
own), and `vision`, the tower's values (its defaults, derived and `let` names):
`vision['hidden_size'] * text['hidden_size']`.

The test that keeps each recipe true builds the wrapper's config with Transformers on the meta
device and compares the parameters, per top module too (tests/models/test_wrappers_transformers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from iteragpu.core.records import Record
from iteragpu.models.config import ModelConfig
from iteragpu.models.errors import ConfigError
from iteragpu.models.recipe import (
    FAMILIES_DIR,
    Counts,
    Recipe,
    Scope,
    TensorSpec,
    _load,
    _terms,
    recipe,
)

TOWERS_DIR: Final = FAMILIES_DIR / "towers"
WRAPPERS_DIR: Final = FAMILIES_DIR / "wrappers"
WHERE: Final = "config.json"


class WrapperCounts(Record):
    """What a multimodal wrapper builds beside its text decoder."""

    parameters: int  # the vision tower's and the projector's (all used for every image)
    float32: int  # those of them Transformers keeps in float32 whatever the dtype
    tied: bool  # whether the text head shares the input embeddings (the wrapper's rule)
    # Each top module of the model Transformers builds, in order, with its parameters: the
    # vision tower, the projector, the language model (without its head) and the head (0 when
    # tied: it is the embeddings).
    modules: tuple[tuple[str, int], ...]


@cache
def tower(model_type: str) -> Recipe | None:
    """The recipe of the vision encoder `model_type`, or None when the package has none."""
    if not (TOWERS_DIR / f"{model_type}.json").is_file():
        return None
    return Recipe(model_type, _load(model_type, directory=TOWERS_DIR))


@cache
def wrapper(model_type: str) -> Recipe | None:
    """The recipe of the multimodal wrapper `model_type`, or None when the package has none."""
    if not (WRAPPERS_DIR / f"{model_type}.json").is_file():
        return None
    return Recipe(model_type, _load(model_type, directory=WRAPPERS_DIR))


@cache
def wrapper_types() -> tuple[str, ...]:
    """Every wrapper model_type with a recipe, sorted."""
    return tuple(sorted(path.stem for path in WRAPPERS_DIR.glob("*.json")))


def text_model_type(wrapper_type: str) -> str | None:
    """The text decoder's model_type a wrapper builds when its text_config names none."""
    from iteragpu.models.recipe import wrapper_text_type

    return wrapper_text_type(wrapper_type)


class _Wrapped(Record):
    """A multimodal config's wrapper, read: its recipe and scope, its tower's, its decoder's
    recipe and whether the head is tied by the wrapper's rule."""

    described: Recipe
    scope: Scope
    vision: Recipe
    vision_scope: Scope
    text: Recipe
    tied: bool


def _wrapped(config: ModelConfig) -> _Wrapped | None:
    outer = config.outer_values
    described = wrapper(config.outer_model_type) if config.outer_model_type else None
    text = recipe(config.model_type)
    if described is None or outer is None or text is None or config.values is None:
        return None
    found = _vision(described.data["vision"], outer)
    if found is None:
        return None
    vision_recipe, vision_scope = found
    text_scope = text.scope(config.values, WHERE)
    raw_text = outer.get("text_config")
    own_tie = raw_text.get("tie_word_embeddings") if isinstance(raw_text, Mapping) else None
    if own_tie is None:
        own_tie = text.defaults.get("tie_word_embeddings", False)
    scope = described.scope(
        {
            **_listed(described, outer),
            "text": {**text_scope.values, "tie_word_embeddings": own_tie},
            "vision": vision_scope.values,
        },
        WHERE,
    )
    _positive(scope.values, described.data.get("positive", []), WHERE)
    described.check(scope)
    tied = scope.evaluate(described.data["tie"])
    if tied is not None and not isinstance(tied, bool):
        import json  # only on this error path

        raise ConfigError(
            "{where}: {key} must be true or false, got {value}",
            "bad_key",
            where=WHERE,
            key="tie_word_embeddings",
            value=json.dumps(tied)[:40],
        )
    return _Wrapped(described, scope, vision_recipe, vision_scope, text, bool(tied))


def wrapper_counts(config: ModelConfig) -> WrapperCounts | None:
    """The vision tower and projector of a multimodal config, and its top modules; None where
    the wrapper, or the tower its vision_config names, has no recipe (they are not counted)."""
    wrapped = _wrapped(config)
    if wrapped is None:
        return None
    assert config.values is not None
    vision = _tower_counts(wrapped.vision, wrapped.vision_scope)
    projector = Counts()
    _terms(wrapped.scope, wrapped.described.data.get("projector", []), projector)
    tied = wrapped.tied
    decoder, head = _decoder(wrapped.text, {**config.values, "tie_word_embeddings": tied}, config)
    names = wrapped.described.data["modules"]
    modules = [(str(names["vision"]), vision.parameters)]
    if names.get("projector") is not None:
        modules.append((str(names["projector"]), projector.parameters))
    modules += [(str(names["language_model"]), decoder - head), (str(names["lm_head"]), head)]
    return WrapperCounts(
        parameters=vision.parameters + projector.parameters,
        float32=vision.float32 + projector.float32,
        tied=tied,
        modules=tuple(modules),
    )


class WrapperTensors(Record):
    """Every parameter tensor of a multimodal wrapper, by part, for training sizes."""

    vision_type: str  # the tower's model_type (families/towers/<type>.json)
    vision: tuple[TensorSpec, ...]  # named within the tower; `layer` the encoder layer's index
    projector: tuple[TensorSpec, ...]  # named within the projector (or none: Qwen-VL's merger
    # is the tower's)
    text: tuple[TensorSpec, ...]  # the decoder's, its head tied by the wrapper's rule
    tied: bool
    modules: Mapping[str, str | None]  # the recipe's `modules`: vision, projector,
    # language_model, lm_head


def wrapper_tensors(config: ModelConfig) -> WrapperTensors | None:
    """The tensors of a multimodal config's tower, projector and decoder; None where a recipe
    is missing or one of its terms states a count and not its tensors."""
    from iteragpu.models.recipe import tensors, term_tensors

    wrapped = _wrapped(config)
    if wrapped is None:
        return None
    assert config.values is not None

    def built(scope: Scope, terms: list[Any], layer: int | None) -> list[TensorSpec] | None:
        found: list[TensorSpec] = []
        for term in terms:
            if "when" in term and not scope.evaluate(term["when"]):
                continue
            made = term_tensors(scope, term)
            if made is None:
                return None
            float32 = term.get("dtype") == "float32"
            found += [TensorSpec(n, layer, shape, float32, False) for n, shape in made]
        return found

    data, scope = wrapped.vision.data, wrapped.vision_scope
    parts: list[list[TensorSpec] | None] = [built(scope, data.get("embeddings", []), None)]
    parts += [built(scope, data.get("layer", []), i) for i in range(scope.count(data["layers"]))]
    parts.append(built(scope, data.get("final", []), None))
    projector = built(wrapped.scope, wrapped.described.data.get("projector", []), None)
    text_values = {**config.values, "tie_word_embeddings": wrapped.tied}
    text = tensors(wrapped.text, wrapped.text.scope(text_values, WHERE), config.layer_kinds)
    if projector is None or text is None or any(part is None for part in parts):
        return None
    return WrapperTensors(
        vision_type=wrapped.vision.model_type,
        vision=tuple(t for part in parts for t in part or ()),
        projector=tuple(projector),
        text=text,
        tied=wrapped.tied,
        modules=dict(wrapped.described.data["modules"]),
    )


def _vision(rules: Mapping[str, Any], outer: Mapping[str, Any]) -> tuple[Recipe, Scope] | None:
    """The tower a wrapper's vision config names, and its values; None without its recipe."""
    key = str(rules["key"])
    where = f"{WHERE} {key}"
    stated = outer.get(key)
    if stated is None:
        # Transformers builds the wrapper's own default vision config.
        raw: dict[str, Any] = dict(rules.get("defaults", {}))
    elif isinstance(stated, Mapping):
        raw = dict(stated)
    else:
        raise ConfigError(
            "{where}: a key of this family has the wrong type ({key})",
            "bad_key",
            where=WHERE,
            key=key,
        )
    model_type = rules["model_type"] if rules.get("fixed") else raw.get("model_type")
    if model_type is None:
        model_type = rules["model_type"]
    if not isinstance(model_type, str):
        raise ConfigError(
            "{where}: a key of this family has the wrong type ({key})",
            "bad_key",
            where=WHERE,
            key=f"{key}.model_type",
        )
    described = tower(model_type)
    if described is None:
        return None
    for canonical, name in described.data.get("aliases", {}).items():
        if raw.get(canonical) is None and raw.get(name) is not None:
            raw[canonical] = raw[name]
    if stated is not None:
        for name in described.data.get("required", []):
            if raw.get(name) is None:
                raise ConfigError(
                    "{where}: no {key}: the parameters cannot be counted without it",
                    "missing_key",
                    where=where,
                    key=name,
                )
    values = {**described.defaults, **raw}
    _positive(values, described.data.get("positive", []), where)
    scope = described.scope(values, where)
    described.check(scope)
    return described, scope


def _tower_counts(described: Recipe, scope: Scope) -> Counts:
    """A tower's parameters: its embeddings, `layers` alike layers, and its final terms."""
    data = described.data
    counts = Counts()
    _terms(scope, data.get("embeddings", []), counts)
    layers = scope.count(data["layers"])
    one = Counts()
    _terms(scope, data.get("layer", []), one)
    kept = one.float32 * layers
    counts.add(one.parameters * layers - kept, one.parameters * layers - kept, False)
    counts.add(kept, kept, True)
    _terms(scope, data.get("final", []), counts)
    return counts


def _decoder(text: Recipe, values: Mapping[str, Any], config: ModelConfig) -> tuple[int, int]:
    """The text decoder's parameters, and its head's (0 when tied)."""
    from iteragpu.models.recipe import count

    scope = text.scope(values, WHERE)
    whole = count(text, scope, config.layer_kinds)
    head = Counts()
    _terms(scope, [t for t in text.data.get("final", []) if t["name"] == "lm_head"], head)
    return whole.parameters, head.parameters


def _listed(described: Recipe, outer: Mapping[str, Any]) -> dict[str, Any]:
    """The wrapper's keys over its defaults, each of `lists` as a list (`-2` reads `[-2]`)."""
    values = {**described.defaults, **outer}
    for key in described.data.get("lists", []):
        if not isinstance(values.get(key), list):
            values[key] = [values.get(key)]
    return values


def _positive(values: Mapping[str, Any], keys: list[str], where: str) -> None:
    """Refuse, on one line, a size that is not a positive whole number."""
    from iteragpu.models.config import _Reader

    read = _Reader(values, where)
    for key in keys:
        read.positive_value(key, values.get(key))
