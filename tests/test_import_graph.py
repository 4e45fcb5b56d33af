"""The package's layers, read from its imports: the core on the ground floor, the lab and the
build tools as leaves, and no cycle (CONTRIBUTING.md draws the same graph).

Every `import` of every module of src/iteragpu counts, those inside functions included: a lazy
import is still a dependency. The console script's fast path (`iteragpu.cli.fast`) is pinned too:
nothing it reaches imports click or typer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import iteragpu

PACKAGE = Path(iteragpu.__file__).resolve().parent
ROOT_MODULES = ("iteragpu", "iteragpu.__main__")
# Each layer and the layers it may import (a layer may always import itself). The root package
# and `python -m iteragpu` hold only the version and the entry point.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "gpus": {"core"},
    "i18n": {"core"},
    # examples: the guides' figures, a training run's model states (training) and a split's
    # per-GPU plan (parallel) among them
    "examples": {"core", "gpus", "models", "parallel", "training"},
    "models": {"core"},  # reading local model files: arithmetic from the core only
    # parallel: a model's tensors and cache placed on several GPUs by a runtime's rules
    "parallel": {"core", "models"},
    # training: a run's model states from the model's tensors (models) and the core's units
    "training": {"core", "models"},
    "cli": {"core", "gpus", "i18n", "examples", "models", "parallel", "training", "root"},
    "lab": set(),  # the standalone script: it runs alone, from the archive
    # models: the sizer's config vectors are `iteragpu model`'s own answers (sizer_config_vectors)
    "docs_tools": {
        "core",
        "gpus",
        "i18n",
        "examples",
        "models",
        "parallel",
        "training",
        "lab",
        "root",
    },
    "root": {"cli"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    if module in ROOT_MODULES:
        return "root"
    return module.split(".")[1]


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The package's modules that `module` imports (`from A import B` counts A, and A.B when
    B is a module)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            if name in known:
                yield name


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {module: set(imported(module, path, known)) - {module} for module, path in found.items()}


GRAPH = graph()
EDGES = sorted((a, b) for a, targets in GRAPH.items() for b in targets)


def test_the_graph_reads_every_layer() -> None:
    assert {layer(module) for module in GRAPH} == set(ALLOWED)
    assert ("iteragpu.cli.app", "iteragpu.core.weights") in EDGES  # a lazy import counts
    assert len(EDGES) > 30


def test_the_core_imports_nothing_of_the_package_outside_the_core() -> None:
    outside = [(a, b) for a, b in EDGES if layer(a) == "core" and layer(b) != "core"]
    assert outside == []


def test_nothing_outside_the_build_tools_imports_them() -> None:
    assert [(a, b) for a, b in EDGES if layer(b) == "docs_tools" != layer(a)] == []


def test_only_the_build_tools_import_the_lab() -> None:
    assert [
        (a, b) for a, b in EDGES if layer(b) == "lab" and layer(a) not in ("lab", "docs_tools")
    ] == []
    # The lab itself is a leaf: it runs alone from the archive, importing nothing of ours.
    assert [(a, b) for a, b in EDGES if layer(a) == "lab"] == []


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(name: str) -> None:
    allowed = ALLOWED[name] | {name}
    assert [(a, b) for a, b in EDGES if layer(a) == name and layer(b) not in allowed] == []


def test_no_import_cycle() -> None:
    cycles = []
    state: dict[str, str] = {}  # "open" while on the path, "done" once explored

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(GRAPH[module]):
            if state.get(target) == "open":
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_a_cycle_or_a_wrong_layer_would_be_seen(tmp_path: Path) -> None:
    """The reader finds relative, aliased and function-level imports (what a mistake looks like)."""
    source = tmp_path / "units.py"
    source.write_text(
        "def f():\n    from ..lab import mesure_memoire as mm\n    import iteragpu.cli.app\n",
        "utf-8",
    )
    known = {"iteragpu.lab", "iteragpu.lab.mesure_memoire", "iteragpu.cli.app"}
    assert set(imported("iteragpu.core.units", source, known)) == known


# Third-party packages of the build tools (the `docs-tools` extra): the runtime never imports
# them, not even lazily. The CLI's catalogues are compiled by Babel and read with `gettext`.
BUILD_ONLY_PACKAGES = ("babel", "pint", "yaml", "jupytext", "nbformat", "mkdocs")


def third_party_imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0]


def test_the_runtime_imports_no_build_tool() -> None:
    runtime = {m: p for m, p in modules().items() if layer(m) not in ("docs_tools", "lab")}
    found = {
        (module, name)
        for module, path in runtime.items()
        for name in third_party_imports(path)
        if name in BUILD_ONLY_PACKAGES
    }
    assert found == set()
    # ... and the reader can see it fail: the build tools do import Babel.
    assert "babel" in set(third_party_imports(PACKAGE / "docs_tools" / "catalogues.py"))


# The console script's fast path (`iteragpu.cli.fast`) answers `iteragpu model` without click or
# typer: `import typer` alone costs more than the peer's whole run (benchmarks/model_bench.py).
# What it imports, lazily or not, is pinned here; its one way to typer is the app it falls back
# to, imported only when it declines.
FAST_PATH = "iteragpu.cli.fast"
FALLBACK = "iteragpu.cli.app"
TYPER_PACKAGES = ("click", "typer")


def fast_path_modules() -> set[str]:
    """The package's modules the fast path may import, its fallback left out, with the
    packages that hold them (importing a module runs its package's __init__ first)."""
    found: set[str] = set()
    stack = [FAST_PATH]
    while stack:
        module = stack.pop()
        if module in found:
            continue
        found.add(module)
        stack += [target for target in GRAPH[module] if (module, target) != (FAST_PATH, FALLBACK)]
    parents = {".".join(m.split(".")[:n]) for m in found for n in range(1, m.count(".") + 1)}
    return found | parents


def test_the_fast_path_imports_neither_click_nor_typer() -> None:
    reached = fast_path_modules()
    paths = modules()
    # What it reads a model with, and the one request and output the typer command shares.
    assert {
        "iteragpu.cli.model_request",
        "iteragpu.cli.output",
        "iteragpu.cli.language",
        "iteragpu.cli.payloads",
        "iteragpu.cli.views",
        "iteragpu.models.model",
        "iteragpu.gpus.shortlist",
    } <= reached
    assert (FAST_PATH, FALLBACK) in EDGES  # the fallback, only when it declines
    # Nothing else it reaches leads to the app or to the modules that define typer's options.
    assert reached.isdisjoint({FALLBACK, "iteragpu.cli.options", "iteragpu.cli.click_text"})
    found = {
        (module, name)
        for module in reached
        for name in third_party_imports(paths[module])
        if name in TYPER_PACKAGES
    }
    assert found == set()
    # ... and the reader can see it fail: the app and its options import both.
    assert {"click", "typer"} <= set(third_party_imports(paths[FALLBACK]))
    assert {"click", "typer"} <= set(third_party_imports(paths["iteragpu.cli.options"]))
