"""The `--json` outputs written as `json.dumps(value, ensure_ascii=False, indent=2)` writes them,
for the only values they hold (objects, arrays, strings, integers, booleans, null), without
importing `json`: its decoder and encoder compile regular expressions at import, over a
millisecond of every `--json` run (`benchmarks/cli_startup.py`). tests/test_cli.py checks every
JSON output against `json.dumps`; a float, which no output holds, is refused.
"""

from __future__ import annotations

from typing import Any

_INDENT = "  "
# What JSON requires to be escaped in a string, written as `json.dumps` writes it.
_ESCAPES = {
    **{code: f"\\u{code:04x}" for code in range(0x20)},
    ord("\b"): "\\b",
    ord("\t"): "\\t",
    ord("\n"): "\\n",
    ord("\f"): "\\f",
    ord("\r"): "\\r",
    ord('"'): '\\"',
    ord("\\"): "\\\\",
}


def json_text(value: Any) -> str:
    """`value` as indented JSON text; TypeError for what the outputs never hold (a float)."""
    return "".join(_parts(value, ""))


def _parts(value: Any, indent: str) -> Any:
    if value is None:
        yield "null"
    elif value is True or value is False:
        yield "true" if value else "false"
    elif isinstance(value, int):
        yield int.__repr__(value)
    elif isinstance(value, str):
        yield '"' + value.translate(_ESCAPES) + '"'
    elif isinstance(value, dict) and value:
        inner = indent + _INDENT
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"JSON keys are strings, not {key!r}")
            yield ("\n" if index == 0 else ",\n") + inner + '"' + key.translate(_ESCAPES) + '": '
            yield from _parts(item, inner)
        yield "\n" + indent + "}"
    elif isinstance(value, list) and value:
        inner = indent + _INDENT
        yield "["
        for index, item in enumerate(value):
            yield ("\n" if index == 0 else ",\n") + inner
            yield from _parts(item, inner)
        yield "\n" + indent + "]"
    elif isinstance(value, dict | list):
        yield "{}" if isinstance(value, dict) else "[]"
    else:
        raise TypeError(f"{type(value).__name__} is not written to the JSON outputs")
