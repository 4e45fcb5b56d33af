"""What the commands share: exit codes, `--lang` (the one list of languages) and `--json`.

Help texts are English message ids of the catalogue (`N_`): the app translates every help text of
the command it builds into the reader's language (`iteragpu.cli.click_text.localize`).

No `from __future__ import annotations`: typer reads these annotations at start-up.
"""

from typing import Annotated

import click
import typer

from iteragpu.i18n.catalogue import N_
from iteragpu.i18n.languages import CODES, SOURCE

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
EPILOG = N_("Exit codes: 0 success; 2 invalid input or usage (one-line message on stderr).")

# The app replaces this default with the reader's language before it parses anything.
DEFAULT_LANG = SOURCE
LangOption = Annotated[
    str,
    typer.Option(
        "--lang",
        click_type=click.Choice(CODES),
        show_default=False,
        help=N_(
            "Language of the output and of the numbers you type: {codes}. Default: from the "
            "first set of LANGUAGE, LC_ALL, LC_MESSAGES and LANG (id_ID.UTF-8 is id); Korean "
            "otherwise."
        ),
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help=N_("Print one JSON object instead of a table."))
]
# A campaign's length for the commands whose short list is an option (`model`, `train`).
ShortlistDaysOption = Annotated[
    str | None,
    typer.Option(
        "--days", metavar=N_("NUMBER"), help=N_("Campaign length in days, with --shortlist.")
    ),
]
