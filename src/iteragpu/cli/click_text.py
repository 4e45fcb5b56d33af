"""click's and typer's own words (help headings, usage errors) and the app's help texts, in the
reader's language.

click and typer mark their messages for gettext (`from gettext import gettext as _`) and look
them up in the process-wide default domain, whose language only the locale variables choose. The
app instead lends them its own catalogue for the time of one invocation (`speaking`): the
modules' `_` and `ngettext` names are bound to the catalogue of the language the reader chose
with `--lang`, and put back afterwards. `CLICK_MESSAGES` lists the messages of theirs that a
reader can meet; their translations are in the package's catalogue (a test checks that each is
still spelled so in click's or typer's source).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, Protocol

import click

from iteragpu.i18n.catalogue import N_, MoCatalogue, translations
from iteragpu.i18n.languages import CODES


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a plural pair of click's for the catalogue (an `ngettext` message)."""
    return singular, plural


# click's text of the `--help` option it adds to every command: asked for at every run, shown
# only by --help.
HELP_OPTION_TEXT: Final = N_("Show this message and exit.")
CLICK_MESSAGES: Final = (
    # Help pages.
    N_("Usage:"),
    N_("Options"),
    N_("Commands"),
    N_("Arguments"),
    HELP_OPTION_TEXT,
    N_("default: {default}"),
    N_("required"),
    # Usage errors.
    N_("Missing command."),
    N_("Missing argument"),
    N_("Missing option"),
    N_("Missing parameter"),
    N_("No such option {name!r}."),
    N_("No such command {name!r}."),
    N_("Option {name!r} does not take a value."),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
)
CLICK_PLURALS: Final = (
    NP_("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)"),
    NP_("Got unexpected extra argument ({args})", "Got unexpected extra arguments ({args})"),
    NP_("Option {name!r} requires an argument.", "Option {name!r} requires {nargs} arguments."),
    NP_("{value!r} is not {choice}.", "{value!r} is not one of {choices}."),
)
# Their usage lines: click does not translate these placeholders; the app sets them per command.
OPTIONS_METAVAR: Final = N_("[OPTIONS]")
SUBCOMMAND_METAVAR: Final = N_("COMMAND [ARGS]...")


class Catalogue(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...


class ReaderCatalogue:
    """The reader's catalogue, read from its `.mo` when a text first needs it, so that a run
    that prints only JSON reads none. Until then, and unless help was asked for, the help
    option's text, which click asks for at every run, is left as it is: nobody will read it."""

    def __init__(self, lang: str, help_asked: bool) -> None:
        self.lang = lang
        self.help_asked = help_asked
        self._read: MoCatalogue | None = None

    def _catalogue(self) -> MoCatalogue:
        if self._read is None:
            self._read = translations(self.lang)
        return self._read

    def gettext(self, message: str) -> str:
        if self._read is None and not self.help_asked and message == HELP_OPTION_TEXT:
            return message
        return self._catalogue().gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self._catalogue().ngettext(singular, plural, n)


# The modules whose `_` (and `ngettext`) print what a reader of the CLI sees.
SPEAKING_MODULES: Final = (
    "click.core",
    "click.decorators",
    "click.exceptions",
    "click.formatting",
    "click.parser",
    "click.types",
    "typer.core",
)


# The modules that measure help text by `term_len` (click 8.4 and later): measured in terminal
# cells instead of characters, a Hangul syllable takes two, so Korean help wraps at the width
# and its columns line up.
MEASURING_MODULES: Final = ("click.formatting", "click._textwrap")


def _cells(text: str) -> int:
    from iteragpu.cli.table import display_width  # unicodedata: only when help is shown

    return display_width(text)


@contextmanager
def speaking(catalogue: Catalogue) -> Iterator[None]:
    """click and typer print their messages through `catalogue` inside this block, and
    measure help text in terminal cells."""
    replacements: list[tuple[str, str, Callable[..., str] | Callable[[str], int]]] = [
        (name, attribute, function)
        for name in SPEAKING_MODULES
        for attribute, function in (
            ("_", catalogue.gettext),
            ("ngettext", catalogue.ngettext),
        )
    ]
    replacements += [(name, "term_len", _cells) for name in MEASURING_MODULES]
    saved = []
    for name, attribute, function in replacements:
        module = importlib.import_module(name)
        if hasattr(module, attribute):
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, function)
    try:
        yield
    finally:
        for module, attribute, original in reversed(saved):
            setattr(module, attribute, original)


def localize(command: click.Command, catalogue: Catalogue) -> None:
    """Translate the help texts of `command`, its parameters and its subcommands already built
    (help, short help, epilog, metavars, usage placeholders), from the message ids the code
    gives them. Each text's message id is kept on the object, so that translating again into
    another language starts from the ids."""
    t = catalogue.gettext
    _translate_fields(command, ("help", "short_help", "epilog", "options_metavar"), t)
    if isinstance(command, click.Group):
        _translate_fields(command, ("subcommand_metavar",), t)
        for subcommand in command.commands.values():
            localize(subcommand, catalogue)
    for param in command.params:
        _translate_fields(param, ("help", "metavar"), t)


_SOURCE_TEXTS = "_iteragpu_message_ids"


def _translate_fields(target: object, fields: tuple[str, ...], t: Callable[[str], str]) -> None:
    source: dict[str, object] = target.__dict__.setdefault(_SOURCE_TEXTS, {})
    for field in fields:
        if field not in source:
            source[field] = getattr(target, field, None)
        message_id = source[field]
        if isinstance(message_id, str) and message_id:
            # Help texts may name the list of languages: "{codes}".
            setattr(target, field, t(message_id).replace("{codes}", ", ".join(CODES)))
