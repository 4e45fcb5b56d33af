"""The CLI's gettext catalogues: one per language of the list, complete, what Babel compiles,
holding every message the code marks (its own and click's), and saying the glossary's terms."""

from __future__ import annotations

import ast
import gettext
import importlib
import io
import re
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
from babel.messages.extract import extract_from_file

from iteragpu.cli import click_text
from iteragpu.docs_tools import catalogues
from iteragpu.docs_tools.glossary import avoided, load
from iteragpu.examples import registry
from iteragpu.i18n.catalogue import LOCALE_DIR, MoCatalogue, catalogue_path, translations
from iteragpu.i18n.languages import CODES

TERMS = load().terms


@pytest.mark.parametrize("lang", CODES)
def test_every_language_of_the_list_has_a_complete_catalogue(lang: str) -> None:
    # Every message extracted from the code, translated, not fuzzy, and the committed .mo
    # equal to what Babel compiles from the .po.
    assert catalogues.problems(lang) == []
    assert translations(lang).gettext("Usage:") != "Usage:"


def _answers(catalogue: MoCatalogue | gettext.GNUTranslations, messages: list[str]) -> list[str]:
    """What a catalogue says for each message, singular and at several plural counts."""
    return [
        text
        for message in messages
        for text in (
            catalogue.gettext(message),
            *(catalogue.ngettext(message, message + " (plural)", n) for n in (0, 1, 2, 5, 11, 21)),
        )
    ]


def _ids(catalogue: gettext.GNUTranslations) -> list[str]:
    """Every message id of a catalogue the standard library read whole, and a few it lacks."""
    keys = catalogue._catalog  # type: ignore[attr-defined]
    found = sorted({key if isinstance(key, str) else key[0] for key in keys})
    return [*found, "no such message", "Usage", "Usage: ", "\ud800", "\x00"]


@pytest.mark.parametrize("lang", CODES)
def test_the_runtime_reader_answers_as_the_standard_library(lang: str) -> None:
    """`translations` reads only the messages looked up (parsing the whole .mo cost every
    text command 2 ms): for every message, plural counts and missing messages included, it
    answers what `gettext.GNUTranslations` answers."""
    data = catalogue_path(lang).read_bytes()
    reference = gettext.GNUTranslations(io.BytesIO(data))
    messages = _ids(reference)
    assert len(messages) > 300
    assert _answers(translations(lang), messages) == _answers(reference, messages)


def _compiled(locale: str, entries: dict[str | tuple[str, str], str | tuple[str, ...]]) -> bytes:
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo

    catalog = Catalog(locale=locale)
    for message_id, text in entries.items():
        catalog.add(message_id, text)
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def _big_endian(data: bytes) -> bytes:
    """The same .mo with its header and string tables written big-endian."""
    count, originals, translated, hash_size, hash_at = (
        int.from_bytes(data[at : at + 4], "little") for at in (8, 12, 16, 20, 24)
    )
    words = [*range(0, 28, 4)]
    words += [at for start in (originals, translated) for at in range(start, start + 8 * count, 4)]
    words += range(hash_at, hash_at + 4 * hash_size, 4)
    swapped = bytearray(data)
    for at in words:
        swapped[at : at + 4] = data[at : at + 4][::-1]
    return bytes(swapped)


PLURAL_ENTRIES: dict[str | tuple[str, str], str | tuple[str, ...]] = {
    "Usage:": "Использование:",
    ("{n} file", "{n} files"): ("{n} файл", "{n} файла", "{n} файлов"),
    "{n} file and more": "{n} файл и больше",  # sorts right after the plural's singular
    "untranslated": "",
}


@pytest.mark.parametrize("order", ["little", "big"])
def test_the_reader_follows_the_plural_rule_and_byte_order_of_any_catalogue(order: str) -> None:
    # Russian: three forms, chosen by an expression the header states.
    data = _compiled("ru", PLURAL_ENTRIES)
    data = data if order == "little" else _big_endian(data)
    reference = gettext.GNUTranslations(io.BytesIO(data))
    messages = [*_ids(reference), "{n} file", "{n} files", "untranslated"]
    assert _answers(MoCatalogue(data), messages) == _answers(reference, messages)
    assert MoCatalogue(data).ngettext("{n} file", "{n} files", 5) == "{n} файлов"


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"\x00\x00\x00\x00" + data[4:],  # not a .mo
        lambda data: data[:4] + (7 << 16).to_bytes(4, "little") + data[8:],  # unknown version
        lambda data: data[: len(data) // 2],  # cut short
    ],
)
def test_a_damaged_catalogue_is_refused_as_the_standard_library_refuses_it(damage: Any) -> None:
    intact = catalogue_path(CODES[0]).read_bytes()
    data = damage(intact)
    with pytest.raises(OSError):
        gettext.GNUTranslations(io.BytesIO(data))
    # Read when it is looked up: refused at the latest when a message leads to a lost string.
    with pytest.raises(OSError):
        _answers(MoCatalogue(data), _ids(gettext.GNUTranslations(io.BytesIO(intact))))


def test_no_catalogue_is_left_for_a_language_outside_the_list() -> None:
    assert sorted(p.name for p in LOCALE_DIR.iterdir() if p.is_dir()) == sorted(CODES)


def test_a_missing_or_incomplete_catalogue_is_reported(tmp_path: Path) -> None:
    assert catalogues.problems("xx", tmp_path) == [
        f"{catalogue_path('xx', '.po', tmp_path)}: missing"
    ]
    lang = CODES[-1]
    po = catalogue_path(lang, ".po", tmp_path)
    po.parent.mkdir(parents=True)
    shutil.copy(catalogue_path(lang, ".po"), po)
    shutil.copy(catalogue_path(lang), catalogue_path(lang, ".mo", tmp_path))
    assert catalogues.problems(lang, tmp_path) == []
    text = po.read_text("utf-8")
    # One message gone, another untranslated: both reported, and the .mo no longer Babel's.
    without = re.sub(r'\nmsgid "First estimate"\nmsgstr "[^"]*"\n', "\n", text)
    untranslated = re.sub(r'(\nmsgid "Rank"\nmsgstr )"[^"]*"', r'\1""', without)
    assert untranslated != without != text
    po.write_text(untranslated, "utf-8")
    found = "\n".join(catalogues.problems(lang, tmp_path))
    assert "no entry for 'First estimate'" in found
    assert "untranslated or fuzzy: 'Rank'" in found
    assert "not what Babel compiles" in found


def _runtime_modules() -> list[Path]:
    return catalogues.source_files()


def _calls(name: str) -> list[tuple[Path, ast.Call]]:
    found = []
    for path in _runtime_modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call):
                function = node.func
                called = function.id if isinstance(function, ast.Name) else None
                called = function.attr if isinstance(function, ast.Attribute) else called
                if called == name:
                    found.append((path, node))
    return found


def test_every_message_the_code_marks_is_a_literal_the_extraction_finds() -> None:
    """A message built at run time (an f-string, a variable) would never reach a catalogue."""
    extracted = {m if isinstance(m, str) else m[0] for m, _, _ in catalogues.extracted()}
    calls = [c for name in ("InputError", "EvidenceError", "N_", "NP_") for c in _calls(name)]
    assert len(calls) > 100
    for path, call in calls:
        first = call.args[0] if call.args else None
        where = f"{path.name}:{call.lineno}"
        assert isinstance(first, ast.Constant) and isinstance(first.value, str), where
        assert first.value in extracted, where


def _fields(message: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(message) if field is not None}


@pytest.mark.parametrize("lang", CODES)
def test_every_translation_keeps_the_fields_of_its_message(lang: str) -> None:
    catalog = catalogues.read_po(lang)
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        # click fills a plural pair's both forms with the same values: a translation may name
        # the fields of either form; any other message, exactly its own.
        wanted = set().union(*(_fields(i) for i in ids))
        for text in strings:
            if len(ids) > 1:
                assert _fields(text) <= wanted, (ids[0], text)
            else:
                assert _fields(text) == wanted, (ids[0], text)


def _click_messages() -> set[str | tuple[str, ...]]:
    """Every message click and typer mark for gettext, read from their installed sources."""
    found: set[str | tuple[str, ...]] = set()
    for package in ("click", "typer"):
        root = Path(importlib.import_module(package).__file__ or "").parent
        for path in root.glob("*.py"):
            keywords = {"_": None, "ngettext": (1, 2)}
            for _, message, _, _ in extract_from_file("python", str(path), keywords=keywords):
                found.add(message)
    return found


def test_the_click_messages_we_translate_are_still_clicks() -> None:
    theirs = _click_messages()
    for message in (*click_text.CLICK_MESSAGES, *click_text.CLICK_PLURALS):
        assert message in theirs, message


def test_the_modules_we_lend_our_catalogue_still_use_gettext() -> None:
    for name in click_text.SPEAKING_MODULES:
        assert hasattr(importlib.import_module(name), "_"), name


# English words of the catalogue's messages and the glossary term each must be said with.
PINNED = {
    "peak": r"\bpeaks?\b",
    "guide": r"\bguides?\b",
    "reserve": r"\breserve\b",
    "weights": r"\bweights\b",
    "kv_cache": r"\bKV cache\b",
    "kv_heads": r"\bKV heads\b",
    "concurrency": r"\bconcurrency\b",
    "sequence": r"\bsequences?\b",
    "workload": r"\bload\b",
    "evidence": r"\bevidence\b",
    "measurement": r"\bmeasurements?\b|\bmeasuring\b",
    "nominal_capacity": r"\bnominal capacity\b",
    "declared_capacity": r"\bdeclared capacity\b",
    "effective_margin": r"\beffective margin\b",
    "requirement": r"\brequirements?\b",
    "candidate": r"\bcandidates?\b",
    "package": r"\bpackages?\b",
    "rank": r"\branks?\b|\branked\b",
    "excluded": r"\bexcluded\b",
    "device": r"\bdevices?\b",
    "quantization": r"\bquantization\b",
    "dense": r"\bdense\b",
    "window": r"(?<!-)\bwindows?\b",
}


def _translations(lang: str) -> list[tuple[str, str]]:
    """(English message, what the reader of `lang` reads) for every message of the catalogue."""
    pairs = []
    for message in catalogues.read_po(lang):
        if message.id:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            pairs += [(ids[0], text) for text in strings]
    return pairs


@pytest.mark.parametrize("lang", CODES)
def test_the_catalogue_never_says_an_avoided_variant(lang: str) -> None:
    # The titles of the worked examples too: the CLI prints them.
    texts = [text for _, text in _translations(lang)] + [e.title[lang] for e in registry().values()]
    hits = {text: avoided(text, lang, TERMS) for text in texts}
    assert {text: found for text, found in hits.items() if found} == {}


@pytest.mark.parametrize("lang", CODES)
def test_the_catalogue_says_the_glossarys_terms(lang: str) -> None:
    words = {term.key: term.words[lang] for term in TERMS}
    assert set(PINNED) <= set(words)
    missing = [
        (key, message, text)
        for message, text in _translations(lang)
        for key, english in PINNED.items()
        if re.search(english, re.sub(r"\{\w*\}", "", message), re.IGNORECASE)
        and words[key].casefold() not in text.casefold()
    ]
    assert missing == [], "\n".join(f"{k}: {m[:60]!r} -> {t[:60]!r}" for k, m, t in missing)
