"""The "supported families" page of each language, written from the families the package reads.

    python -m iteragpu.docs_tools.families_page --write   # every language
    python -m iteragpu.docs_tools.families_page --check   # exit 1 if a page differs

One row per `model_type` the reader knows: those described as data (iteragpu.models.recipe,
`families/<type>.json`, with the Transformers class its `about` names) and those described by
code (iteragpu.models.config.FAMILIES); then the GGUF architectures read from a file's metadata
(iteragpu.models.gguf) with what their cache follows; then the families refused for their
recurrent state. The words are docs/families.yml's; the pages hold no figure.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iteragpu.docs_tools import require_extra
from iteragpu.i18n.languages import CODES
from iteragpu.models import config as model_config
from iteragpu.models import gguf as gguf_reader
from iteragpu.models.recipe import recipe

require_extra("yaml")

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
WORDS = DOCS / "families.yml"
PAGE = "families.md"
TRANSFORMERS = "5.24.0"  # the version `nox -s models` pins and the proofs run against
LLAMA_CPP = "00342301d01a"  # the llama.cpp commit whose loader the GGUF reader follows
HEADER = "<!-- Written by `python -m iteragpu.docs_tools.families_page --write`; do not edit. -->"
_CLASS = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:ForCausalLM|ForConditionalGeneration|LMHeadModel))\b")


def load_words(path: Path = WORDS) -> dict[str, Any]:
    import yaml

    words: dict[str, Any] = yaml.safe_load(path.read_text("utf-8"))
    return words


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rows(lang: str, words: dict[str, Any]) -> list[list[str]]:
    """One row per known family, sorted by model_type."""
    result = []
    for model_type in model_config.known_families():
        described = recipe(model_type)
        if described is not None:
            found = _CLASS.search(str(described.data.get("about", "")))
            cls = f"`{found.group(1)}`" if found else "-"
            how = words["described_data"][lang].format(file=f"families/{model_type}.json")
            routed = any("routed" in term for term in described.data.get("layer", []))
            active = words["active_moe" if routed else "active_dense"][lang]
        else:
            cls = "-"
            how = words["described_code"][lang]
            active = words["active_unknown"][lang]
        result.append([f"`{model_type}`", cls, how, active, _cache_cell(model_type, lang, words)])
    return result


def cache_kinds(model_type: str) -> tuple[list[str], list[str]]:
    """The layer kinds a family's layers may take (its recipe's `layer_kind` rule, `chunk` and
    `states`; a hand-described family: full and sliding), and those that keep a state."""
    described = recipe(model_type)
    if described is None:
        return [model_config.FULL, model_config.SLIDING], []
    data = described.data
    states = sorted(data.get("states", {}))
    rule = str(data.get("layer_kind", ""))
    named = set(re.findall(r"'([a-z_]+)'", rule))
    if not named:
        named = {model_config.FULL}
        if data.get("defaults", {}).get("sliding_window") is not None or data.get("window"):
            named.add(model_config.SLIDING)
    if data.get("chunk") is not None:
        named.add(model_config.CHUNKED)
    kinds = sorted(named | set(states))
    return kinds, states


def _cache_cell(model_type: str, lang: str, words: dict[str, Any]) -> str:
    kinds, states = cache_kinds(model_type)
    cell = ", ".join(f"`{k}`" for k in kinds)
    if states:
        cell += "; " + words["states"][lang].format(kinds=", ".join(f"`{k}`" for k in states))
    return cell


def gguf_rows(lang: str, words: dict[str, Any]) -> list[list[str]]:
    """One row per GGUF architecture: its families and what its cache follows."""
    return [
        [
            f"`{arch}`",
            ", ".join(f"`{t}`" for t in types),
            words["gguf_rules"][rule][lang],
        ]
        for arch, types, rule in gguf_reader.architectures()
    ]


def _table(headers: list[str], body: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
        *("| " + " | ".join(_cell(c) for c in row) + " |" for row in body),
    ]


def page_markdown(lang: str, words: dict[str, Any] | None = None) -> str:
    w = load_words() if words is None else words
    table = _table(w["table"][lang], rows(lang, w))
    gguf_table = _table(w["gguf_table"][lang], gguf_rows(lang, w))
    refused = ", ".join(f"`{t}`" for t in model_config.refused_state_families())
    return "\n".join(
        [
            "---",
            f'title: "{w["title"][lang]}"',
            f'description: "{w["description"][lang]}"',
            "---",
            HEADER,
            "",
            f"# {w['title'][lang]} {{ #families }}",
            "",
            w["intro"][lang].format(transformers=TRANSFORMERS),
            "",
            f"## {w['exact_heading'][lang]} {{ #exact }}",
            "",
            *table,
            "",
            f"## {w['gguf_heading'][lang]} {{ #gguf }}",
            "",
            w["gguf_intro"][lang].format(commit=LLAMA_CPP),
            "",
            *gguf_table,
            "",
            w["gguf_differs"][lang],
            "",
            f"## {w['refused_heading'][lang]} {{ #refused }}",
            "",
            w["refused"][lang].format(types=refused),
            "",
            f"## {w['new_heading'][lang]} {{ #new-family }}",
            "",
            w["new"][lang],
            "",
        ]
    )


def page_path(lang: str, docs: Path = DOCS) -> Path:
    return docs / lang / "docs" / PAGE


def stale_pages(docs: Path = DOCS) -> list[Path]:
    words = load_words()
    stale = []
    for lang in CODES:
        path = page_path(lang, docs)
        if not path.is_file() or path.read_text("utf-8") != page_markdown(lang, words):
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--check"]):
        usage = "usage: python -m iteragpu.docs_tools.families_page --write | --check"
        print(usage, file=sys.stderr)
        return 2
    if args == ["--write"]:
        words = load_words()
        for lang in CODES:
            page_path(lang).write_text(page_markdown(lang, words), "utf-8")
        return 0
    stale = stale_pages()
    for path in stale:
        print(f"{path}: not written from the families; run --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
