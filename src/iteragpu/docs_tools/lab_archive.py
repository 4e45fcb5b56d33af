"""Build IteraGPU Lab v1: the two notebooks, the reproducible archive and the downloads.

    python -m iteragpu.docs_tools.lab_archive --out DIR

Functions for the site and the noxfile:

- `build_notebooks(out_dir)` writes iteragpu_lab.ko.ipynb and iteragpu_lab.id.ipynb;
- `build_archive(out_dir, source_date_epoch=...)` writes iteragpu-lab-v1.zip and its .sha256;
- `build_downloads(out_dir, source_date_epoch=...)` writes the archive and every file the site
  publishes individually next to it, and returns {file name: path}.

The archive is reproducible in the way pypa/wheel builds wheels: sorted members, one fixed
timestamp (SOURCE_DATE_EPOCH, else a constant), normalised modes, ZIP_DEFLATED at a fixed level.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import io
import os
import re
import sys
import time
import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from iteragpu.core.numbers import shown
from iteragpu.docs_tools import require_extra
from iteragpu.i18n.languages import CODES
from iteragpu.lab.mesure_memoire import LAB_VERSION, __version__

require_extra("jupytext", "nbformat")

LAB_DIR = Path(__file__).resolve().parents[1] / "lab"
NOTEBOOK_SOURCE = LAB_DIR / "iteragpu_lab.py"
SCRIPT = LAB_DIR / "mesure_memoire.py"
LANGUAGES = CODES  # a notebook and a README per language of the list

ARCHIVE_STEM = f"iteragpu-lab-{LAB_VERSION}"
ARCHIVE_NAME = f"{ARCHIVE_STEM}.zip"

# 2025-01-01T00:00:00Z; ZIP cannot store dates before 1980-01-01.
DEFAULT_SOURCE_DATE_EPOCH = 1_735_689_600
ZIP_MIN_EPOCH = 315_532_800
ZIP_MAX_EPOCH = 4_354_819_199  # 2107-12-31T23:59:59Z: a ZIP date stores years 1980 to 2107
COMPRESS_LEVEL = 9
EXIT_INVALID_INPUT = 2

# Files copied byte for byte from the lab folder into the archive.
LAB_FILES = (
    "mesure_memoire.py",
    *(f"README.{lang}.md" for lang in LANGUAGES),
    "comparison_template.csv",
    *(f"sizing_sheet.{lang}.md" for lang in LANGUAGES),
    "result.schema.json",
)


def notebook_name(lang: str) -> str:
    return f"iteragpu_lab.{lang}.ipynb"


def license_path() -> Path:
    """The project's LICENSE: the repository's file, else the installed distribution's copy."""
    repo_license = Path(__file__).resolve().parents[3] / "LICENSE"
    if repo_license.is_file():
        return repo_license
    try:
        dist = metadata.distribution("iteragpu")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for candidate in dist.files or []:
            if candidate.name == "LICENSE":
                located = Path(str(dist.locate_file(candidate)))
                if located.is_file():
                    return located
    raise FileNotFoundError("the project's LICENSE file was not found")


# A comment line of a shared code cell in one language: `# [ko] ...`, `# [id] ...`.
_LANGUAGE_COMMENT = re.compile(r"^(?P<indent>\s*)# \[(?P<lang>[a-z]{2,3})\] ?(?P<text>.*)$")


def localized_code(source: str, lang: str) -> str:
    r"""A shared code cell as `lang`'s notebook shows it: its `# [<lang>] ...` comment lines
    become plain comments and the other languages' are dropped, so that a reader meets the
    comments of their language only.

    >>> localized_code("# [ko] 시드\n# [id] Seed\nSEED = 0", "id")
    '# Seed\nSEED = 0'
    """
    lines = []
    for line in source.split("\n"):
        match = _LANGUAGE_COMMENT.match(line)
        if match is None:
            lines.append(line)
        elif match["lang"] == lang:
            lines.append(f"{match['indent']}# {match['text']}".rstrip())
    return "\n".join(lines)


def notebook_bytes(lang: str, source: Path = NOTEBOOK_SOURCE) -> bytes:
    """One language's notebook from the jupytext percent source: the shared cells, their
    comments in `lang` (`localized_code`), and the cells tagged lang-<lang> (markdown, and the
    code cell of its messages); no outputs, no execution counts, stable ids and metadata.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    return _notebook_bytes(lang, source.read_text(encoding="utf-8"))


# Keyed by the source's text: the archive and the notebook downloads share one conversion
# (jupytext's parse is a third of a second), and an edited source is converted anew.
@functools.lru_cache(maxsize=8)
def _notebook_bytes(lang: str, text: str) -> bytes:
    # Typed as Any: jupytext and nbformat are only partly annotated.
    jupytext: Any = importlib.import_module("jupytext")
    nbformat: Any = importlib.import_module("nbformat")

    nb = jupytext.reads(text, fmt="py:percent")
    cells: list[Any] = []
    for cell in nb.cells:
        tags = list(cell.metadata.get("tags", []))
        langs = [t for t in tags if t.startswith("lang-")]
        if langs and f"lang-{lang}" not in langs:
            continue
        other_tags = [t for t in tags if not t.startswith("lang-")]
        meta = {"tags": other_tags} if other_tags else {}
        source_text = cell.source
        index = len(cells)
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(localized_code(source_text, lang), metadata=meta)
            new.outputs = []
            new.execution_count = None
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(source_text, metadata=meta)
        else:
            new = nbformat.v4.new_raw_cell(source_text, metadata=meta)
        new.id = f"{lang}-{index:02d}-{cell.cell_type}"
        cells.append(new)
    out = nbformat.v4.new_notebook(cells=cells)
    out.nbformat, out.nbformat_minor = 4, 5
    out.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "iteragpu_lab": {"version": __version__, "lab_version": LAB_VERSION, "language": lang},
    }
    nbformat.validate(out)
    text_out: str = nbformat.writes(out, version=4)
    return (text_out.rstrip("\n") + "\n").encode("utf-8")


def build_notebooks(out_dir: Path) -> dict[str, Path]:
    """Write iteragpu_lab.<lang>.ipynb for each language; return {lang: path}."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for lang in LANGUAGES:
        path = out_dir / notebook_name(lang)
        path.write_bytes(notebook_bytes(lang))
        paths[lang] = path
    return paths


def resolve_source_date_epoch(source_date_epoch: int | None = None) -> int:
    """The argument, else $SOURCE_DATE_EPOCH, else DEFAULT_SOURCE_DATE_EPOCH; raised to 1980,
    refused after 2107 (a ZIP date cannot hold it) with a one-line ValueError."""
    if source_date_epoch is None:
        raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        source_date_epoch = (
            parse_epoch(raw, "SOURCE_DATE_EPOCH") if raw else DEFAULT_SOURCE_DATE_EPOCH
        )
    if isinstance(source_date_epoch, bool) or source_date_epoch < 0:
        raise ValueError(f"source_date_epoch must be >= 0, got {source_date_epoch!r}")
    if source_date_epoch > ZIP_MAX_EPOCH:
        raise ValueError(
            f"source date epoch {source_date_epoch} is after 2107-12-31T23:59:59Z, "
            "the last date a ZIP archive can store"
        )
    return max(source_date_epoch, ZIP_MIN_EPOCH)


def parse_epoch(text: str, what: str) -> int:
    """Seconds since 1970 as SOURCE_DATE_EPOCH writes them: ASCII digits only.

    >>> parse_epoch("1700000000", "SOURCE_DATE_EPOCH")
    1700000000
    """
    if re.fullmatch(r"[0-9]+", text) is None:
        raise ValueError(
            f"{what} must be a whole number of seconds written with the digits 0-9, "
            f"got {shown(text)}"
        )
    # More digits than the last storable date has: refused before int() meets 5,000 digits.
    if len(text.lstrip("0")) > len(str(ZIP_MAX_EPOCH)):
        raise ValueError(
            f"{what} {shown(text)} is after 2107-12-31T23:59:59Z, "
            "the last date a ZIP archive can store"
        )
    return int(text)


def archive_members() -> dict[str, bytes]:
    """Member name (under the top folder) -> content, for every file of the archive."""
    members = {name: (LAB_DIR / name).read_bytes() for name in LAB_FILES}
    members["LICENSE"] = license_path().read_bytes()
    for lang in LANGUAGES:
        members[notebook_name(lang)] = notebook_bytes(lang)
    return members


def _member_mode(name: str, data: bytes) -> int:
    return 0o755 if name.endswith(".py") and data.startswith(b"#!") else 0o644


def _safe_member(name: str) -> str:
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"unsafe archive member name: {name!r}")
    return name


def archive_bytes(source_date_epoch: int | None = None) -> bytes:
    """The archive's bytes: identical for identical inputs, whatever the clock says."""
    epoch = resolve_source_date_epoch(source_date_epoch)
    date_time = time.gmtime(epoch)[:6]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as zf:
        for name, data in sorted(archive_members().items()):
            info = zipfile.ZipInfo(_safe_member(f"{ARCHIVE_STEM}/{name}"), date_time=date_time)
            info.create_system = 3  # Unix, so that the modes below are read
            info.external_attr = (0o100000 | _member_mode(name, data)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(
                info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL
            )
    return buffer.getvalue()


def build_archive(out_dir: Path, *, source_date_epoch: int | None = None) -> Path:
    """Write OUT/iteragpu-lab-v1.zip and OUT/iteragpu-lab-v1.zip.sha256; return the zip path."""
    out_dir = Path(out_dir)
    data = archive_bytes(source_date_epoch)  # a bad epoch is refused before anything is written
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ARCHIVE_NAME
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    (out_dir / f"{ARCHIVE_NAME}.sha256").write_bytes(f"{digest}  {ARCHIVE_NAME}\n".encode())
    return path


def download_names() -> list[str]:
    """File names the site publishes, in order: archive, checksum, script, notebooks,
    READMEs, licence."""
    return [
        ARCHIVE_NAME,
        f"{ARCHIVE_NAME}.sha256",
        SCRIPT.name,
        *(notebook_name(lang) for lang in LANGUAGES),
        *(f"README.{lang}.md" for lang in LANGUAGES),
        "LICENSE",
    ]


def build_downloads(out_dir: Path, *, source_date_epoch: int | None = None) -> dict[str, Path]:
    """Write the archive and each file the site publishes individually next to it.

    Returns {published file name: path}, keys as in download_names(): iteragpu-lab-v1.zip,
    iteragpu-lab-v1.zip.sha256, mesure_memoire.py, iteragpu_lab.ko.ipynb,
    iteragpu_lab.id.ipynb, README.ko.md, README.id.md, LICENSE. Every file is byte-identical
    to the archive's member of the same name.
    """
    out_dir = Path(out_dir)
    archive = build_archive(out_dir, source_date_epoch=source_date_epoch)
    files: dict[str, Path] = {
        ARCHIVE_NAME: archive,
        f"{ARCHIVE_NAME}.sha256": out_dir / f"{ARCHIVE_NAME}.sha256",
    }
    files.update({notebook_name(lang): path for lang, path in build_notebooks(out_dir).items()})
    copies = {SCRIPT.name: SCRIPT, "LICENSE": license_path()}
    copies.update({f"README.{lang}.md": LAB_DIR / f"README.{lang}.md" for lang in LANGUAGES})
    for name, source in copies.items():
        target = out_dir / name
        target.write_bytes(source.read_bytes())
        files[name] = target
    return {name: files[name] for name in download_names()}


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage block: the house rule for every command's bad input.
        self.exit(EXIT_INVALID_INPUT, f"lab_archive: error: {' '.join(message.split())}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 written; 2 bad arguments or SOURCE_DATE_EPOCH, or a build error (one line)."""
    parser = _OneLineParser(
        prog="python -m iteragpu.docs_tools.lab_archive",
        description=f"Build IteraGPU Lab {LAB_VERSION}: archive, checksum, notebooks and the "
        "individual downloads.",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--source-date-epoch",
        default=None,
        help="timestamp of the archive members, 1980 to 2107 (default: $SOURCE_DATE_EPOCH, "
        f"else {DEFAULT_SOURCE_DATE_EPOCH})",
    )
    parser.add_argument(
        "--archive-only", action="store_true", help="write only the archive and its checksum"
    )
    args = parser.parse_args(argv)
    try:
        epoch = (
            None
            if args.source_date_epoch is None
            else parse_epoch(args.source_date_epoch.strip(), "--source-date-epoch")
        )
        if args.archive_only:
            archive = build_archive(args.out, source_date_epoch=epoch)
            paths = {ARCHIVE_NAME: archive}
        else:
            paths = build_downloads(args.out, source_date_epoch=epoch)
    except (OSError, ValueError, ImportError) as exc:
        print(f"lab_archive: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
