"""Build-time tools: outside the runtime import graph, behind the `docs-tools` extra.

`figure_check` (every figure of every page), `sizer_vectors` (the browser sizer's test vectors),
`lab_archive` (the lab's notebooks and archive), `number_symbols` (Babel's symbols cached for
the runtime), `pint_units` (pint, the units' independent check), `chromium` (how the tests
and benchmarks launch the browser), `build_site` (every language of the site, in one process;
needs the `docs` extra too), `notebook_page` (the lab notebook as a Markdown page), `code_font`
(the site's code font, cut from D2Coding to the characters of its code), `serve` (the built
site over HTTP, as `nox -s serve` and the browser tests serve it), `site_search` (each
language's search file: Korean morphemes, Indonesian stems, the glossary's synonyms) and
`search_check` (the readers' queries typed into the built site's search box). Nothing of the runtime
package imports them.
"""

from __future__ import annotations

from importlib.util import find_spec

EXTRA = "docs-tools"


def require_extra(*modules: str) -> None:
    """Refuse to load a tool whose third-party modules are missing, naming the extra."""
    missing = [name for name in modules if find_spec(name) is None]
    if missing:
        raise ModuleNotFoundError(
            f"iteragpu.docs_tools needs the {EXTRA!r} extra (missing: {', '.join(missing)}): "
            f"pip install 'iteragpu[{EXTRA}]'"
        )
