"""How every run of the CLI ends: its output written once, or one error line on stderr.

Shared by the typer app (`iteragpu.cli.app`) and the fast path of `iteragpu model`
(`iteragpu.cli.fast`), so that both report a refused input, a usage error or a failed write in
the same words, in the reader's language, with the same exit code. It imports neither click nor
typer: the fast path exists because `import typer` alone costs more than a whole run of the
peer it is timed against (benchmarks/model_bench.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from iteragpu.i18n.catalogue import N_, translate

if TYPE_CHECKING:
    from iteragpu.core.numbers import InputError

# The exit codes of `iteragpu.cli.options`, which imports typer (tests/test_cli_fast.py checks
# that they are the same).
EXIT_OK = 0
EXIT_INVALID_INPUT = 2


class Collected(io.StringIO):
    """A command's output, collected to be written at the end. It states the encoding of the
    stream it will be written to, as click's `echo` asks before writing (a bare StringIO has
    none, and click then looks up the ASCII codec: half a millisecond of every --help)."""

    def __init__(self, encoding: str | None) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str | None:  # type: ignore[override]
        return self._encoding


def write_output(text: str, lang: str) -> None:
    """Write a run's whole output to stdout; a failed write is one error line (exit 2)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, UnicodeError) as error:
        # Send what is still buffered to /dev/null: otherwise the interpreter's own flush at
        # exit fails again and prints a traceback-like report after our one line.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        fail(translate(N_("could not write the output: {why}"), lang, why=_why(error, lang)), lang)


def _why(error: Exception, lang: str) -> str:
    """Why a write failed, in the reader's language (the system's own wording is English)."""
    import errno

    number = getattr(error, "errno", None)
    if number == errno.ENOSPC:
        return translate(N_("no space left on the device"), lang)
    if number == errno.EPIPE:
        return translate(N_("the reading end of the pipe is closed"), lang)
    if isinstance(error, UnicodeError):
        return translate(N_("the terminal cannot show these characters"), lang)
    code = errno.errorcode.get(number or 0, str(number))
    return translate(N_("system error {code}"), lang, code=code)


def fail(text: str, lang: str, code: int = EXIT_INVALID_INPUT) -> NoReturn:
    """End the run with `text` as one line on stderr, after "iteragpu: error:" in `lang`."""
    first_line = " ".join(text.split())
    error = translate(N_("error"), lang)
    print(f"iteragpu: {error}: {first_line}", file=sys.stderr)
    sys.exit(code)


def refuse(error: InputError, lang: str) -> NoReturn:
    """Report a refused input (`InputError`, `EvidenceError`) in the reader's language."""
    values = dict(error.values)
    if error.numbers:
        from fractions import Fraction

        from iteragpu.i18n.numbers import format_number

        for name in error.numbers:
            places = len(values[name].partition(".")[2])
            values[name] = format_number(Fraction(values[name]), places, lang)
    text = translate(_catalogued(error.template, lang), lang, **values)
    path = getattr(error, "path", None)  # the file an `EvidenceError` is about
    fail(text if path is None else f"{path}: {text}", lang)


# The safetensors reader writes "{path}: " + a detail, and the catalogue holds the detail.
_PATH_PREFIX = "{path}: "


def _catalogued(template: str, lang: str) -> str:
    """`template` as the catalogue holds it: whole, or as "{path}: " and its catalogued rest."""
    from iteragpu.i18n.catalogue import translations

    if not template.startswith(_PATH_PREFIX) or translations(lang).gettext(template) != template:
        return template
    detail = template.removeprefix(_PATH_PREFIX)
    return _PATH_PREFIX + translations(lang).gettext(detail)


def emit_json(payload: dict[str, Any]) -> None:
    """Print `payload` as the `--json` outputs are written (`iteragpu.cli.json_text`)."""
    from iteragpu.cli.json_text import json_text  # only the JSON outputs pay for it

    print(json_text(payload))
