"""Families as data: one declarative recipe per `model_type`, read from `families/<type>.json`.

A recipe says what Transformers 5.24 builds for a decoder family, in the manner of llama.cpp's
per-architecture tables and Transformers' modular files (a family described as its difference
from another):

- `base`: the family it starts from (its keys are inherited, then overridden here);
- `defaults`: the config class's defaults for the keys a saved config may leave out;
- `derived`: keys computed when the config leaves them out or null (`head_dim` from the hidden
  size and heads);
- `let`: names for sub-expressions (`q_width`), evaluated once, in order;
- `embeddings`, `layer`, `final`: the terms, each `{"name", "count"}` where `count` is an
  expression over the config's values (and `layer`, the layer's index, for `layer` terms), with
  optional `when` (a condition: the term exists only where it holds), `dtype: "float32"` (a
  module Transformers keeps in float32 whatever the model's dtype: its router, for DeepSeek-V3)
  and `routed` (the term holds every routed expert: `{"experts": expr, "per_token": expr}`; its
  count is for all experts, and only `per_token` of `experts` are used per token).
- `aliases`: the canonical key each of the family's own keys stands for (`"hidden_size":
  "n_embd"`; a dotted name reads a nested object, `"attn_config.kv_n_heads"`);
- `attention`: `kv_heads` and `head_dim` as expressions, where the family computes them
  otherwise than from `num_key_value_heads` and `head_dim` (Falcon's multi-query attention);
- `layer_kind`: each layer's kind when the config has no `layer_types`, an expression giving
  one of Transformers 5.24's cache layer types (cache_utils.py's LAYER_TYPE_MAPPING):
  "full_attention", "sliding_attention", "chunked_attention" (a sliding cache whose window is
  `chunk`: Llama 4), "linear_attention" and "conv" (a state, no KV: Mamba, Gated DeltaNet,
  short convolutions), "hybrid" (a state and a full KV in one layer: Falcon-H1),
  "hybrid_sliding", "dummy" (nothing: a layer that reads another layer's KV);
- `window`: the sliding window, an expression (None: no window), where the family's config
  class drops the config's `sliding_window` (Qwen2-MoE's is 0 unless `use_sliding_window`);
- `chunk`: the chunked-attention layers' window, an expression (`attention_chunk_size`);
- `states`: per layer kind, the tensors a layer of that kind keeps in the cache whatever the
  tokens, each `{"name", "count", "dtype"}`: `count` the elements per sequence (an expression,
  `layer` and `kind` known), `dtype` "model" (the model's dtype) or "float32" (a recurrent
  state Transformers keeps in float32 in a bfloat16 model), `name` the cache's attribute
  (`conv_states[0]`, `recurrent_states[0]`);
- `mla`: true for a family whose attention layers are DeepSeek's latent attention (Kimi-Linear):
  they cache the latent (kv.py), read from `kv_lora_rank` and `qk_rope_head_dim`;
- `no_attention`: true for a family without attention heads (Mamba): no heads are read and no
  layer holds a KV.
- `shared_kv`: an expression over `layer`, true for a layer that reads an earlier layer's KV
  and holds none (Gemma-3n's last num_kv_shared_layers): its kind becomes "dummy" whatever the
  config's `layer_types` say, as Transformers' cache builds it (kv_sharing_modes "reuse");
- `require`: conditions the family's config class enforces, each `{"holds": expr, "key":
  name}`: a config where one fails describes no model Transformers builds, and is refused
  naming `key` (Mamba-2: `expand * hidden_size == num_heads * head_dim`).

In `layer` terms, `layer` is the layer's index and `kind` its kind.

A term may also say the tensors it builds, which training sizes need (optimizer states per
tensor, row splits, LoRA targets): `"linear": [in, out]` (an nn.Linear: `<name>.weight` of
[out, in], and `<name>.bias` of [out] where the term's `"bias"` expression holds), `"shape":
[...]` (one tensor, `<name>.weight`), or `"tensors": [{"name", "shape", "when"}]` (each named
in full: `self_attn.sinks`, `mlp.experts.gate_up_proj`; with `"repeat": expr`, one tensor per
index `{i}` of the name: `self_attn.q_layernorm.norms.{i}.weight`). A term with tensors needs
no `count`: it is their elements' sum (a test holds the two equal where a term has both).

Expressions are a small, safe subset of Python: integers, booleans, None, strings, names of
config values, `+ - * // %`, comparisons (`is None` too), `and or not`, `x if c else y`,
`min`, `max`, `len`, `per_layer(x, layer)` (x's entry for the layer where the config
gives one value per layer, else x), `x[i]` and `x in list`. Booleans count as 0 and 1
(`attention_bias * q`). Nothing else is evaluated, and a name the config lacks is a one-line
error naming the key.

The test that keeps each recipe true builds the family's config with Transformers on the meta
device and compares the parameters, the active parameters and the bytes at bfloat16
(tests/models/test_families_transformers.py).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Final

from iteragpu.core.records import Record
from iteragpu.models.errors import ConfigError
from iteragpu.models.json_reader import json_loads

FAMILIES_DIR: Final = Path(__file__).with_name("families")
_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {"min": min, "max": max, "len": len}
_BINARY: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}
_COMPARE: Final[dict[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


class RecipeError(ValueError):
    """A recipe file that is not a valid recipe: a bug of the package, not of the reader."""


@cache
def _parsed(expression: str) -> ast.expr:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as error:
        raise RecipeError(f"not an expression: {expression!r}") from error
    return tree.body


def _reads(expression: str | int, name: str) -> bool:
    """Whether `expression` reads the value `name`."""
    if not isinstance(expression, str):
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(_parsed(expression)))


class Scope:
    """The config's values (with defaults and derived keys) and the recipe's `let` names."""

    def __init__(self, values: Mapping[str, Any], where: str) -> None:
        self.values = dict(values)
        self.where = where

    def evaluate(self, expression: str | int | bool, **extra: Any) -> Any:
        if not isinstance(expression, str):
            return expression
        return self._node(_parsed(expression), extra)

    def count(self, expression: str | int, **extra: Any) -> int:
        value = self.evaluate(expression, **extra)
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int) or value < 0:
            raise ConfigError(
                "{where}: the family's sizes give no whole count for {key}",
                "bad_key",
                where=self.where,
                key=str(expression)[:60],
            )
        return value

    def _node(self, node: ast.expr, extra: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, bool | int | str):
                return node.value
            raise RecipeError(f"constant {node.value!r}")
        if isinstance(node, ast.Name):
            if node.id in extra:
                return extra[node.id]
            if node.id in self.values:
                return self.values[node.id]
            raise ConfigError(
                "{where}: no {key}: the parameters cannot be counted without it",
                "missing_key",
                where=self.where,
                key=node.id,
            )
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self._node(node.left, extra), self._node(node.right, extra)
            for value in (left, right):
                if value is None or isinstance(value, str | list | dict | float):
                    raise ConfigError(
                        "{where}: a size of this family is not a whole number ({key})",
                        "bad_key",
                        where=self.where,
                        key=ast.unparse(node)[:60],
                    )
            if isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0:
                raise ConfigError(
                    "{where}: a size of this family divides by zero ({key})",
                    "bad_key",
                    where=self.where,
                    key=ast.unparse(node)[:60],
                )
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            value = self._node(node.operand, extra)
            if isinstance(node.op, ast.Not):
                return not value
            if isinstance(node.op, ast.USub):
                return -value
            raise RecipeError(f"operator {ast.unparse(node)}")
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: Any = True
                for value_node in node.values:
                    result = self._node(value_node, extra)
                    if not result:
                        return result
                return result
            result = False
            for value_node in node.values:
                result = self._node(value_node, extra)
                if result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self._node(node.left, extra)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._node(right_node, extra)
                if type(op) not in _COMPARE:
                    raise RecipeError(f"comparison {ast.unparse(node)}")
                try:
                    holds = _COMPARE[type(op)](left, right)
                except TypeError:
                    raise ConfigError(
                        "{where}: a key of this family has the wrong type ({key})",
                        "bad_key",
                        where=self.where,
                        key=ast.unparse(node)[:60],
                    ) from None
                if not holds:
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            branch = node.body if self._node(node.test, extra) else node.orelse
            return self._node(branch, extra)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "per_layer" and len(node.args) == 2 and not node.keywords:
                return self._per_layer(node, extra)
            function = _FUNCTIONS.get(node.func.id)
            if function is None or node.keywords:
                raise RecipeError(f"call {ast.unparse(node)}")
            return function(*(self._node(arg, extra) for arg in node.args))
        if isinstance(node, ast.Subscript):
            container, index = self._node(node.value, extra), self._node(node.slice, extra)
            try:
                return container[index]
            except (IndexError, KeyError, TypeError):
                raise ConfigError(
                    "{where}: {key} is too short for the layers it describes",
                    "bad_key",
                    where=self.where,
                    key=ast.unparse(node.value)[:60],
                ) from None
        if isinstance(node, ast.List | ast.Tuple):
            return [self._node(item, extra) for item in node.elts]
        raise RecipeError(f"not allowed in a recipe: {ast.unparse(node)}")

    def _per_layer(self, node: ast.Call, extra: Mapping[str, Any]) -> Any:
        """`per_layer(x, layer)`: `x[layer]` where the config gives one value per layer (a
        list, which must name every layer, as the config class requires), else `x`."""
        value, layer = (self._node(arg, extra) for arg in node.args)
        if not isinstance(value, list):
            return value
        if len(value) != self.values.get("num_hidden_layers"):
            raise ConfigError(
                "{where}: {key} is too short for the layers it describes",
                "bad_key",
                where=self.where,
                key=ast.unparse(node.args[0])[:60],
            )
        return value[layer]


class Recipe:
    """One family's recipe, with its base's keys merged in."""

    def __init__(self, model_type: str, data: Mapping[str, Any]) -> None:
        self.model_type = model_type
        self.data = data

    @property
    def defaults(self) -> dict[str, Any]:
        return dict(self.data.get("defaults", {}))

    def scope(self, raw: Mapping[str, Any], where: str) -> Scope:
        """The config's values over the family's defaults, derived keys, then `let` names."""
        values: dict[str, Any] = {**self.defaults, **raw}
        scope = Scope(values, where)
        for key, expression in self.data.get("derived", {}).items():
            if values.get(key) is None:
                scope.values[key] = scope.evaluate(expression)
        for key, expression in self.data.get("let", {}).items():
            scope.values[key] = scope.evaluate(expression)
        return scope

    def check(self, scope: Scope) -> None:
        """Refuse a config that breaks one of the family's `require` conditions."""
        for rule in self.data.get("require", []):
            if not scope.evaluate(rule["holds"]):
                raise ConfigError(
                    "{where}: {key} does not agree with the family's other sizes ({rule})",
                    "bad_key",
                    where=scope.where,
                    key=rule["key"],
                    rule=rule["holds"][:80],
                )

    def layer_kind(self, scope: Scope, layer: int) -> str:
        expression = self.data.get("layer_kind", "'full_attention'")
        kind = scope.evaluate(expression, layer=layer)
        if not isinstance(kind, str):
            raise RecipeError(f"{self.model_type}: layer_kind gives {kind!r}")
        return kind


class Counts:
    """What a recipe counts: parameters, those used per token, those kept in float32."""

    def __init__(self) -> None:
        self.parameters = 0
        self.active: int | None = 0  # None: the experts a token uses are not stated
        self.float32 = 0

    def add(self, count: int, active: int | None, float32: bool) -> None:
        self.parameters += count
        self.active = None if active is None or self.active is None else self.active + active
        if float32:
            self.float32 += count


class TensorSpec(Record):
    """One parameter tensor a recipe's term builds."""

    name: str  # within its module: `self_attn.q_proj.weight`, `embed_tokens.weight`
    layer: int | None  # the decoder layer's index; None for embeddings and final modules
    shape: tuple[int, ...]
    float32: bool  # kept in float32 whatever the model's dtype
    routed: bool  # holds every routed expert (`routed`)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


def term_tensors(
    scope: Scope, term: Mapping[str, Any], **extra: Any
) -> list[tuple[str, tuple[int, ...]]] | None:
    """The (name, shape) of each tensor `term` builds, or None where it states none."""
    name = term["name"]
    if "linear" in term:
        inputs, outputs = (scope.count(e, **extra) for e in term["linear"])
        found: list[tuple[str, tuple[int, ...]]] = [(f"{name}.weight", (outputs, inputs))]
        if "bias" in term and scope.evaluate(term["bias"], **extra):
            found.append((f"{name}.bias", (outputs,)))
        return found
    if "shape" in term:
        return [(f"{name}.weight", tuple(scope.count(e, **extra) for e in term["shape"]))]
    if "tensors" in term:
        found = []
        for t in term["tensors"]:
            if "when" in t and not scope.evaluate(t["when"], **extra):
                continue
            shape = tuple(scope.count(e, **extra) for e in t["shape"])
            if "repeat" not in t:
                found.append((t["name"], shape))
                continue
            # One tensor per index (StableLM's q_layernorm.norms.{i}: one per head).
            repeat = scope.count(t["repeat"], **extra)
            found += [(t["name"].replace("{i}", str(i)), shape) for i in range(repeat)]
        return found
    return None


def _term_count(scope: Scope, term: Mapping[str, Any], **extra: Any) -> int:
    if "count" in term:
        return scope.count(term["count"], **extra)
    found = term_tensors(scope, term, **extra)
    if found is None:
        raise RecipeError(f"term {term['name']!r} has neither a count nor tensors")
    return sum(TensorSpec("", None, shape, False, False).elements for _, shape in found)


def _terms(scope: Scope, terms: list[Mapping[str, Any]], counts: Counts, **extra: Any) -> None:
    for term in terms:
        if "when" in term and not scope.evaluate(term["when"], **extra):
            continue
        count = _term_count(scope, term, **extra)
        active: int | None = count
        routed = term.get("routed")
        if routed is not None:
            experts = scope.count(routed["experts"], **extra)
            # None (DeepSeek-V2's class default): the parameters count, the active ones are unknown.
            stated = scope.evaluate(routed["per_token"], **extra) is not None
            per_token = scope.count(routed["per_token"], **extra) if stated else 0
            if experts == 0 or count % experts or per_token > experts:
                raise ConfigError(
                    "{where}: {key} must be between 1 and the number of experts",
                    "bad_key",
                    where=scope.where,
                    key=str(routed["per_token"]),
                )
            active = count // experts * per_token if stated else None
        counts.add(count, active, term.get("dtype") == "float32")


def count(recipe: Recipe, scope: Scope, kinds: tuple[str, ...]) -> Counts:
    """The parameters Transformers builds for the family, per the recipe (`kinds`: each
    layer's kind, in order)."""
    counts = Counts()
    data = recipe.data
    _terms(scope, data.get("embeddings", []), counts)
    for index, kind in enumerate(kinds):
        _terms(scope, data.get("layer", []), counts, layer=index, kind=kind)
    _terms(scope, data.get("final", []), counts)
    return counts


def tensors(recipe: Recipe, scope: Scope, kinds: tuple[str, ...]) -> tuple[TensorSpec, ...] | None:
    """Every parameter tensor Transformers builds for the family, in order, tied weights once;
    None where a term of the recipe states its count and not its tensors."""
    data = recipe.data
    found: list[TensorSpec] = []
    sections: list[tuple[str, int | None, str | None]] = [("embeddings", None, None)]
    sections += [("layer", index, kind) for index, kind in enumerate(kinds)]
    sections.append(("final", None, None))
    for section, layer, kind in sections:
        extra: dict[str, Any] = {} if layer is None else {"layer": layer, "kind": kind}
        for term in data.get(section, []):
            if "when" in term and not scope.evaluate(term["when"], **extra):
                continue
            built = term_tensors(scope, term, **extra)
            if built is None:
                return None
            float32 = term.get("dtype") == "float32"
            routed = term.get("routed") is not None
            found += [TensorSpec(n, layer, shape, float32, routed) for n, shape in built]
    return tuple(found)


class StateTensor(Record):
    """One tensor a layer keeps in the cache whatever the tokens, for one sequence."""

    name: str  # the cache's attribute: conv_states[0], recurrent_states[0]
    elements: int
    float32: bool  # kept in float32 whatever the model's dtype


def states(
    recipe: Recipe, scope: Scope, kinds: tuple[str, ...]
) -> tuple[tuple[StateTensor, ...], ...]:
    """Per layer, the state tensors its kind keeps (empty for attention-only kinds)."""
    rules = recipe.data.get("states", {})
    made: dict[str, tuple[StateTensor, ...]] = {}
    result = []
    for index, kind in enumerate(kinds):
        terms = rules.get(kind, [])
        # Layers of one kind share their states unless a count reads the layer's index (a
        # config may declare 100,000 layers).
        if kind in made:
            result.append(made[kind])
            continue
        layer_tensors = tuple(
            StateTensor(
                term["name"],
                scope.count(term["count"], layer=index, kind=kind),
                term.get("dtype", "model") == "float32",
            )
            for term in terms
        )
        if not any(_reads(term["count"], "layer") for term in terms):
            made[kind] = layer_tensors
        result.append(layer_tensors)
    return tuple(result)


def _load(
    model_type: str, seen: tuple[str, ...] = (), directory: Path = FAMILIES_DIR
) -> dict[str, Any]:
    if model_type in seen:
        raise RecipeError(f"recipe cycle: {' -> '.join((*seen, model_type))}")
    path = directory / f"{model_type}.json"
    # config's reader of JSON: the C scanner, without importing json (its regular expressions
    # cost every `iteragpu model` run, benchmarks/model_bench.py).
    data: dict[str, Any] = json_loads(path.read_text("utf-8"))
    base = data.get("base")
    if base is None:
        return data
    merged = _load(base, (*seen, model_type), directory)
    for key, value in data.items():
        if key in ("defaults", "derived", "let") and isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


@cache
def recipe(model_type: str) -> Recipe | None:
    """The recipe of `model_type`, or None when the package has none."""
    if not (FAMILIES_DIR / f"{model_type}.json").is_file():
        return None
    return Recipe(model_type, _load(model_type))


@cache
def recipe_types() -> tuple[str, ...]:
    """Every model_type with a recipe, sorted."""
    return tuple(sorted(path.stem for path in FAMILIES_DIR.glob("*.json")))


@cache
def wrapper_text_type(wrapper_type: str) -> str | None:
    """The text decoder's model_type a multimodal wrapper builds when its text_config names
    none (its recipe's `text`, families/wrappers/<type>.json), or None without a recipe. Here,
    not in iteragpu.models.towers, so that the config reader needs no import of the towers."""
    directory = FAMILIES_DIR / "wrappers"
    if not (directory / f"{wrapper_type}.json").is_file():
        return None
    return str(_load(wrapper_type, directory=directory)["text"])
