"""The package's gettext catalogues, kept with Babel: extracted from the code, merged into each
language's `.po`, compiled to the `.mo` the runtime reads with the standard library.

    python -m iteragpu.docs_tools.catalogues           # say what is missing or stale (exit 1)
    python -m iteragpu.docs_tools.catalogues --write   # merge new messages, compile every .mo

The message ids are the English texts of the runtime modules: `N_("...")`, the pairs of
`NP_("...", "...")` (plural messages of click's), and the first argument of `InputError(...)`
and `EvidenceError(...)`. Each language of `iteragpu.i18n.languages` has
`src/iteragpu/i18n/locale/<code>/LC_MESSAGES/iteragpu.po`; a translator fills its `msgstr`s,
then `--write` compiles. The `.mo` files are committed (the wheel ships them, the runtime never
imports Babel); tests/test_catalogues.py checks that each is what Babel compiles from its `.po`.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from iteragpu import __version__
from iteragpu.docs_tools import require_extra
from iteragpu.i18n.catalogue import DOMAIN, LOCALE_DIR, catalogue_path
from iteragpu.i18n.languages import CODES

require_extra("babel")

PACKAGE = Path(__file__).resolve().parents[1]
# The runtime layers whose texts a reader sees; the lab carries its own table, the build
# tools speak to developers.
RUNTIME_LAYERS = ("cli", "core", "gpus", "i18n", "models", "parallel", "training")
KEYWORDS: dict[str, Any] = {
    "N_": None,
    "NP_": (1, 2),
    "InputError": (1,),
    "EvidenceError": (1,),
    # `iteragpu.models.errors`: the model reader's `InputError`s.
    **dict.fromkeys(
        (
            "ModelInputError",
            "HeaderError",
            "UnknownDtypeError",
            "MissingShardError",
            "ConfigError",
            "UnsupportedModelError",
            "GgufError",
        ),
        (1,),
    ),
    # `iteragpu.training`: a run's refusals (adapters, states, sharding).
    **dict.fromkeys(
        (
            "AdapterInputError",
            "StateInputError",
            "UnknownPrecisionError",
            "UnknownOptimizerError",
            "FusedUnsupportedError",
            "UntrainableTensorError",
            "ShardingError",
            "GpuCountError",
            "EmptyRankError",
            "UnshardableError",
            "TrainInputError",
            "NamingError",
            "CompareInputError",
        ),
        (1,),
    ),
    # `iteragpu.parallel`: a split the runtime refuses or this package does not model; a
    # request `fit` cannot answer; a file that is no runtime's start-up log.
    "SplitError": (1,),
    "FitError": (1,),
    "LogError": (1,),
    # `iteragpu.models.safetensors._error(path, detail, ...)`: "{path}: " + detail; the CLI
    # translates the detail (`iteragpu.cli.app._refuse`).
    "_error": (2,),
}
# Fixed header dates, so that the catalogues are the same at every run of `--write`.
HEADER_DATE = datetime(2026, 1, 1, tzinfo=UTC)
HEADER_COMMENT = """\
# The iteragpu CLI's messages in {lang} (src/iteragpu/i18n/languages.py).
# Translate each msgstr with the terms of docs/glossary.yml, keep every {{name}} field, then run
# `python -m iteragpu.docs_tools.catalogues --write` (it merges new messages and compiles the .mo).
#"""


def source_files() -> list[Path]:
    """The runtime modules messages are extracted from."""
    return sorted(path for layer in RUNTIME_LAYERS for path in (PACKAGE / layer).rglob("*.py"))


def extracted() -> Iterator[tuple[str | tuple[str, ...], str, int]]:
    """(message id, or a (singular, plural) pair; module path; line) of every marked message."""
    from babel.messages.extract import extract_from_file

    for path in source_files():
        relative = path.relative_to(PACKAGE.parent).as_posix()
        for line, message, _, _ in extract_from_file("python", str(path), keywords=KEYWORDS):
            yield message, relative, line


def template() -> Any:
    """The catalogue template (a .pot in memory): every message id with where it is used."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(project="iteragpu", domain=DOMAIN, creation_date=HEADER_DATE, fuzzy=False)
    for message, path, line in extracted():
        catalog.add(message, locations=[(path, line)])
    return catalog


def read_po(lang: str, locale_dir: Path = LOCALE_DIR) -> Any:
    """The `.po` of `lang` as Babel reads it (an empty catalogue when there is none yet)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po as babel_read_po

    path = catalogue_path(lang, ".po", locale_dir)
    if not path.exists():
        return Catalog(locale=lang, domain=DOMAIN, fuzzy=False)
    with path.open("rb") as handle:
        return babel_read_po(handle, locale=lang, domain=DOMAIN)


def merged(lang: str) -> Any:
    """The `.po` of `lang` with the template's messages: new ones untranslated, gone ones
    dropped, translations kept."""
    catalog = read_po(lang)
    catalog.update(template(), no_fuzzy_matching=True, update_creation_date=True)
    catalog.obsolete.clear()
    catalog.fuzzy = False
    catalog.revision_date = HEADER_DATE
    catalog.project, catalog.version = "iteragpu", __version__
    catalog.header_comment = HEADER_COMMENT.format(lang=lang)
    catalog.last_translator = catalog.language_team = "IteraGPU Lab"
    catalog.msgid_bugs_address = ""
    return catalog


def po_text(catalog: Any) -> bytes:
    from babel.messages.pofile import write_po

    out = io.BytesIO()
    write_po(out, catalog, width=100, include_lineno=False, ignore_obsolete=True)
    return out.getvalue()


def mo_bytes(catalog: Any) -> bytes:
    """The compiled catalogue, as `pybabel compile` writes it (fuzzy entries left out)."""
    from babel.messages.mofile import write_mo

    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def problems(lang: str, locale_dir: Path = LOCALE_DIR) -> list[str]:
    """What keeps the catalogue of `lang` from being complete, one line each."""
    po_path = catalogue_path(lang, ".po", locale_dir)
    mo_path = catalogue_path(lang, ".mo", locale_dir)
    if not po_path.exists():
        return [f"{po_path}: missing"]
    found = []
    catalog = read_po(lang, locale_dir)
    wanted = {_message_id(m.id) for m in template() if m.id}
    present = {_message_id(m.id) for m in catalog if m.id}
    found += [f"{po_path}: no entry for {message!r}" for message in sorted(wanted - present)]
    found += [f"{po_path}: unused entry {message!r}" for message in sorted(present - wanted)]
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy or not all(strings):
            found.append(f"{po_path}: untranslated or fuzzy: {_message_id(message.id)!r}")
    if not mo_path.exists():
        found.append(f"{mo_path}: missing")
    elif mo_path.read_bytes() != mo_bytes(catalog):
        found.append(f"{mo_path}: not what Babel compiles from {po_path.name}")
    return found


def _message_id(message_id: str | tuple[str, ...]) -> str:
    return message_id if isinstance(message_id, str) else message_id[0]


def write(lang: str) -> None:
    catalog = merged(lang)
    po_path = catalogue_path(lang, ".po")
    po_path.parent.mkdir(parents=True, exist_ok=True)
    po_path.write_bytes(po_text(catalog))
    catalogue_path(lang).write_bytes(mo_bytes(read_po(lang)))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([], ["--write"]):
        print("usage: python -m iteragpu.docs_tools.catalogues [--write]", file=sys.stderr)
        return 2
    if args == ["--write"]:
        for lang in CODES:
            write(lang)
    found = [line for lang in CODES for line in problems(lang)]
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
