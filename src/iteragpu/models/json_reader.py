"""JSON text read as `json.loads` reads it, through the C scanner that `json` itself uses,
without importing `json`: its modules compile six regular expressions at import, about 2 ms of
every `iteragpu model` run (`benchmarks/model_bench.py`). The config reader and the family
recipes (iteragpu.models.recipe) both read JSON this way.
"""

from __future__ import annotations

from typing import Any, Final

# What `json.loads` skips around a document (its WHITESPACE pattern).
_JSON_WHITESPACE: Final = " \t\n\r"


class _JsonDecoding:
    """The settings `json.loads` gives the C scanner (`json.decoder.JSONDecoder()`'s)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


def json_loads(text: str) -> Any:
    """`json.loads(text)`, through the C scanner that `json` itself uses, without importing
    `json`: its modules compile six regular expressions at import, about 2 ms of every
    `iteragpu model` run (`benchmarks/model_bench.py`). Whatever the scanner does not read
    whole (not JSON, a byte-order mark, extra data) is given to `json.loads`, which raises
    its own error: the errors, as the values, are `json.loads`'s."""
    try:
        from _json import make_scanner
    except ImportError:  # an interpreter without CPython's accelerator
        return _json_module_loads(text)
    if not text.startswith("\ufeff"):
        start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
        decoding: Any = _JsonDecoding  # the scanner reads these attributes, duck-typed
        try:
            value, end = make_scanner(decoding)(text, start)
        except Exception:
            # Not JSON (or too deep, or a huge number): json.loads raises its own error. (The
            # scanner cannot say it itself until json.decoder is imported: a SystemError.)
            pass
        else:
            if not text[end:].strip(_JSON_WHITESPACE):
                return value
    return _json_module_loads(text)


def _json_module_loads(text: str) -> Any:
    import json

    return json.loads(text)
