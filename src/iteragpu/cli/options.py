"""What the commands share: exit codes, `--lang` (the one list of languages) and `--json`.

No `from __future__ import annotations`: typer reads these annotations at start-up.
"""

from typing import Annotated

import click
import typer

from iteragpu.i18n.languages import CODES, SOURCE

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
EPILOG = "Exit codes: 0 success; 2 invalid input or usage (one-line message on stderr)."

DEFAULT_LANG = SOURCE
LANG_CHOICES = "|".join(CODES)
LangOption = Annotated[
    str,
    typer.Option(
        "--lang",
        click_type=click.Choice(CODES),
        help=f"Language of the results: {', '.join(CODES)}.",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON object instead of a table.")
]
