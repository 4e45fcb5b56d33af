"""The lab notebook as a Markdown page: what the site shows of `iteragpu_lab.<code>.ipynb`.

Markdown cells are kept as they are and code cells become fenced Python blocks: the notebook
ships without outputs, so there is nothing else to show. The page is then an ordinary MkDocs
page (its headings get the table of contents' anchors, the search indexes it, the theme
highlights the code) with no notebook renderer to import and no JupyterLab stylesheet inlined.
"""

from __future__ import annotations

import json
import re
from typing import Any

_BACKTICK_RUNS = re.compile(r"`+")


def notebook_markdown(notebook: bytes | str) -> str:
    """The Markdown of a notebook (JSON, nbformat 4): its cells, in order, one block each."""
    blocks = []
    for index, cell in enumerate(json.loads(notebook)["cells"]):
        source = _source(cell).strip("\n")
        if not source.strip():
            continue
        if cell["cell_type"] == "markdown":
            blocks.append(source)
        elif cell["cell_type"] == "code":
            blocks.append(fenced(source, "python"))
        else:
            # Raw cells are for nbconvert's targets, not for readers: nothing to show yet, so
            # refuse rather than drop what a future notebook might put there.
            raise ValueError(f"cell {index}: cannot show a {cell['cell_type']!r} cell on the site")
    return "\n\n".join(blocks) + "\n"


def fenced(code: str, language: str) -> str:
    """`code` in a backtick fence longer than any run of backticks it contains."""
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"


def _source(cell: dict[str, Any]) -> str:
    # nbformat stores multi-line text either as one string or as a list of lines.
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)
