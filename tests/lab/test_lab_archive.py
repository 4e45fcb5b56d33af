"""The IteraGPU Lab v1 archive and downloads: reproducible, complete, safe."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from iteragpu.docs_tools import lab_archive
from iteragpu.lab import mesure_memoire as mm

pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

REPO = Path(__file__).resolve().parents[2]
TOP = "iteragpu-lab-v1/"
EXPECTED = sorted(
    TOP + name
    for name in (
        "LICENSE",
        "README.id.md",
        "README.ko.md",
        "comparison_template.csv",
        "iteragpu_lab.id.ipynb",
        "iteragpu_lab.ko.ipynb",
        "mesure_memoire.py",
        "result.schema.json",
        "sizing_sheet.id.md",
        "sizing_sheet.ko.md",
    )
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SOURCE_DATE_EPOCH", raising=False)  # test the built-in default
        first = lab_archive.build_archive(tmp_path_factory.mktemp("a"))
        time.sleep(2.1)  # ZIP times have a 2 s resolution: a wall-clock leak would show
        second = lab_archive.build_archive(tmp_path_factory.mktemp("b"))
    return first, second


def test_version_comes_from_the_script() -> None:
    assert lab_archive.ARCHIVE_NAME == f"iteragpu-lab-{mm.LAB_VERSION}.zip" == "iteragpu-lab-v1.zip"


def test_rebuild_is_byte_identical(built: tuple[Path, Path]) -> None:
    first, second = built
    assert first.name == second.name == "iteragpu-lab-v1.zip"
    assert first.read_bytes() == second.read_bytes()
    sums = [(p.parent / (p.name + ".sha256")).read_bytes() for p in built]
    assert sums[0] == sums[1]


def test_checksum_file_is_sha256sum_format(built: tuple[Path, Path]) -> None:
    archive = built[0]
    line = (archive.parent / "iteragpu-lab-v1.zip.sha256").read_text(encoding="ascii")
    assert line == f"{hashlib.sha256(archive.read_bytes()).hexdigest()}  iteragpu-lab-v1.zip\n"
    sha256sum = shutil.which("sha256sum")
    if sha256sum is not None:
        command = [sha256sum, "--check", "--status", "iteragpu-lab-v1.zip.sha256"]
        assert subprocess.run(command, cwd=archive.parent, check=False).returncode == 0


def test_members_sorted_under_one_top_folder(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[0]) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert names == EXPECTED
        epoch = lab_archive.DEFAULT_SOURCE_DATE_EPOCH
        for info in zf.infolist():
            assert info.filename.startswith(TOP)
            assert ".." not in info.filename.split("/") and not info.filename.startswith("/")
            assert info.date_time == time.gmtime(epoch)[:6]
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.create_system == 3
            mode = info.external_attr >> 16
            assert stat.S_ISREG(mode)
            expected = 0o755 if info.filename.endswith("mesure_memoire.py") else 0o644
            assert stat.S_IMODE(mode) == expected, info.filename
            assert info.comment == b"" and info.extra == b""


def test_licence_script_and_templates_are_byte_identical(built: tuple[Path, Path]) -> None:
    lab = REPO / "src" / "iteragpu" / "lab"
    with zipfile.ZipFile(built[0]) as zf:
        assert zf.read(TOP + "LICENSE") == (REPO / "LICENSE").read_bytes()
        assert zf.read(TOP + "mesure_memoire.py") == (lab / "mesure_memoire.py").read_bytes()
        for name in lab_archive.LAB_FILES:
            assert zf.read(TOP + name) == (lab / name).read_bytes(), name


def test_archived_notebooks_are_valid_without_outputs(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[0]) as zf:
        for lang in ("ko", "id"):
            raw = zf.read(f"{TOP}iteragpu_lab.{lang}.ipynb")
            nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
            nbformat.validate(nb)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    assert cell.outputs == [] and cell.execution_count is None


def test_comparison_template_is_header_only() -> None:
    lines = (lab_archive.LAB_DIR / "comparison_template.csv").read_text().splitlines()
    assert len(lines) == 1
    columns = lines[0].split(",")
    assert "cold_forward_peak_allocated_bytes" in columns
    assert len(columns) == len(set(columns))
    units = ("_bytes", "_ns", "_text", "_count", "_positions", "_features", "_number", "_512")
    for column in columns:
        assert column.endswith(units), column


def test_source_date_epoch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    from_env = lab_archive.build_archive(tmp_path / "env")
    with zipfile.ZipFile(from_env) as zf:
        assert zf.infolist()[0].date_time == time.gmtime(1_700_000_000)[:6]
    explicit = lab_archive.build_archive(tmp_path / "arg", source_date_epoch=1_700_000_000)
    assert explicit.read_bytes() == from_env.read_bytes()
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert lab_archive.resolve_source_date_epoch() == lab_archive.DEFAULT_SOURCE_DATE_EPOCH
    assert lab_archive.resolve_source_date_epoch(0) == lab_archive.ZIP_MIN_EPOCH  # 1980
    assert lab_archive.DEFAULT_SOURCE_DATE_EPOCH >= lab_archive.ZIP_MIN_EPOCH
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError):
        lab_archive.resolve_source_date_epoch()


def test_the_last_date_a_zip_can_store_is_2107(tmp_path: Path) -> None:
    last = lab_archive.ZIP_MAX_EPOCH
    assert time.gmtime(last)[:6] == (2107, 12, 31, 23, 59, 59)
    archive = lab_archive.build_archive(tmp_path, source_date_epoch=last)
    with zipfile.ZipFile(archive) as zf:
        assert zf.infolist()[0].date_time == (2107, 12, 31, 23, 59, 58)  # 2 s resolution
    with pytest.raises(ValueError, match="2107"):
        lab_archive.resolve_source_date_epoch(last + 1)


# Each was a struct.error, an OverflowError, a silently accepted Unicode digit or a two-line
# argparse usage block before; now one line on stderr, exit 2, and nothing written.
BAD_EPOCHS = [
    ("past 2107", "4354819200", "2107"),
    ("far future", "99999999999999999999", "2107"),
    ("5000 digits", "9" * 5000, repr("9" * 40) + "..."),  # cut short: one short line
    ("Arabic-Indic digit", "\u0661\u0667\u0660\u0660\u0660\u0660\u0660\u0660\u0660\u0660", "0-9"),
    ("negative", "-1", "0-9"),
    ("fraction", "1.5", "0-9"),
    ("word", "yesterday", "0-9"),
]


@pytest.mark.parametrize(("name", "value", "needle"), BAD_EPOCHS, ids=[b[0] for b in BAD_EPOCHS])
@pytest.mark.parametrize("where", ["environment", "option"])
def test_bad_source_date_epoch_is_one_line_and_exit_2(
    tmp_path: Path, name: str, value: str, needle: str, where: str
) -> None:
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "iteragpu.docs_tools.lab_archive",
        "--out",
        str(out),
        "--archive-only",
    ]
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    if where == "environment":
        env["SOURCE_DATE_EPOCH"] = value
    else:
        command += ["--source-date-epoch", value]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lab_archive: error: "), done.stderr
    assert needle in lines[0]
    assert len(lines[0]) < 300
    assert not out.exists()


def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "iteragpu.docs_tools.lab_archive"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--out" in done.stderr


def test_unsafe_member_names_are_refused() -> None:
    for bad in ("../x", "/abs", "a//b", "a/./b", "a\\b"):
        with pytest.raises(ValueError):
            lab_archive._safe_member(bad)


def test_build_downloads(tmp_path: Path) -> None:
    files = lab_archive.build_downloads(tmp_path)
    assert (
        list(files)
        == lab_archive.download_names()
        == [
            "iteragpu-lab-v1.zip",
            "iteragpu-lab-v1.zip.sha256",
            "mesure_memoire.py",
            "iteragpu_lab.ko.ipynb",
            "iteragpu_lab.id.ipynb",
            "README.ko.md",
            "README.id.md",
            "LICENSE",
        ]
    )
    for name, path in files.items():
        assert path.is_file() and path.parent == tmp_path and path.name == name
    assert files["LICENSE"].read_bytes() == (REPO / "LICENSE").read_bytes()
    with zipfile.ZipFile(files["iteragpu-lab-v1.zip"]) as zf:
        for name, path in files.items():
            if not name.startswith("iteragpu-lab-v1.zip"):
                assert zf.read(TOP + name) == path.read_bytes(), name


def test_command_line_entry_point(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "iteragpu.docs_tools.lab_archive", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "iteragpu-lab-v1.zip").is_file()
    assert (tmp_path / "out" / "iteragpu_lab.id.ipynb").is_file()
    assert (
        lab_archive.build_archive(tmp_path / "again").read_bytes()
        == (tmp_path / "out" / "iteragpu-lab-v1.zip").read_bytes()
    )
