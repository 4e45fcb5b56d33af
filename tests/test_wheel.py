"""The wheel's dependencies are honest: installed alone in a fresh venv (its declared
dependencies only, from the configured package index), every runtime module imports and every
command runs; the build tools refuse to load with a message naming their extra.

Slow (about a minute: a wheel build, a venv, an install), so it builds once per session.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import per_language

from iteragpu.docs_tools import EXTRA
from iteragpu.gpus.catalog import load_catalog
from iteragpu.i18n.languages import CODES

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_RESULT = ROOT / "tests" / "lab" / "data" / "result-1.0.0-fake-counters.json"
# Imported by the build tools only: the runtime must run without them.
BUILD_ONLY = ("babel", "pint", "yaml", "jupytext", "nbformat", "mkdocs")
# The notebook's source runs its cells when imported; `python -m iteragpu` runs the CLI.
NOT_IMPORTED = ("iteragpu.lab.iteragpu_lab", "iteragpu.__main__")

# Run inside the fresh venv: import every module of the installed package and report.
IMPORT_EVERYTHING = """
import importlib, importlib.util, json, pkgutil, sys
import iteragpu
skip = set(sys.argv[1].split(","))
report = {"imported": [], "refused": {}, "location": iteragpu.__file__,
          "build_only_present": [m for m in sys.argv[2].split(",") if importlib.util.find_spec(m)]}
for info in pkgutil.walk_packages(iteragpu.__path__, "iteragpu."):
    if info.name in skip:
        continue
    try:
        importlib.import_module(info.name)
        report["imported"].append(info.name)
    except ImportError as error:
        report["refused"][info.name] = str(error)
print(json.dumps(report))
"""


@dataclass(frozen=True)
class Installed:
    python: Path
    bin: Path
    package: Path  # the installed iteragpu folder

    def run(
        self, *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=cwd,
            env={"PATH": f"{self.bin}:/usr/bin:/bin", "COLUMNS": "200", **(env or {})},
        )


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp.glob("iteragpu-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    located = subprocess.run(
        [
            str(python),
            "-c",
            "import iteragpu, pathlib; print(pathlib.Path(iteragpu.__file__).parent)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp,
    )
    yield Installed(python, env_dir / "bin", Path(located.stdout.strip()))


def test_every_runtime_module_imports_without_the_build_tools(installed: Installed) -> None:
    done = installed.run(
        installed.python,
        "-c",
        IMPORT_EVERYTHING,
        ",".join(NOT_IMPORTED),
        ",".join(BUILD_ONLY),
        cwd=installed.package.parent.parent,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["location"].startswith(str(installed.package))  # not this checkout
    assert report["build_only_present"] == []  # so nothing below leans on them
    runtime = [m for m in report["imported"] if not m.startswith("iteragpu.docs_tools")]
    for layer in ("core", "gpus", "i18n", "cli", "lab"):
        assert any(m.startswith(f"iteragpu.{layer}.") for m in runtime), layer
    assert "iteragpu.examples" in runtime
    refused_runtime = {m: e for m, e in report["refused"].items() if "docs_tools" not in m}
    assert refused_runtime == {}
    # A build tool either loads (it needs nothing more) or names the extra it needs.
    assert report["refused"], "the build tools need their extra"
    for module, error in report["refused"].items():
        assert f"iteragpu[{EXTRA}]" in error, (module, error)


def test_the_data_files_are_in_the_wheel(installed: Installed) -> None:
    for name in (
        "gpus/gpu_catalog.json",
        "lab/result.schema.json",
        "lab/mesure_memoire.py",
        "i18n/number_symbols.py",
        "web/sizer/index.js",
        "web/sizer/main.js",
        "web/results.js",
        *(f"i18n/locale/{lang}/LC_MESSAGES/iteragpu.mo" for lang in CODES),
    ):
        assert (installed.package / name).is_file(), name


def _evidence(tmp_path: Path) -> Path:
    """The lab's 1.0.0 fixture, as if run on the catalog's first card (not a measurement)."""
    card = load_catalog()[0]
    result = json.loads(FIXTURE_RESULT.read_text("utf-8"))
    (device,) = result["environment"]["devices"]
    device.update(name=card.device_names[0], total_memory_bytes=card.declared_memory_bytes)
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(result), "utf-8")
    return path


COMMANDS = {
    "weights": ["weights", "--params", "7e9", "--bits", "16", "--reserve-gib", "4"],
    "weights --json": ["weights", "--params", "7e9", "--bits", "4", "--json"],
    "kv-cache": [
        *("kv-cache", "--layers", "32", "--kv-heads", "8", "--head-dim", "128"),
        *("--tokens", "8192", "--bytes-per-value", "2", "--lang", "id"),
    ],
    "convert": ["convert", "24e9 B", "GiB"],
    "shortlist": ["shortlist", "--need-gib", "19.04", "--days", "3", "--json"],
    "examples list": ["examples", "list"],
    "examples run": ["examples", "run", "--all", "--lang", "id"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_runs_from_the_installed_copy(installed: Installed, name: str) -> None:
    done = installed.run(installed.bin / "iteragpu", *COMMANDS[name])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() and done.stderr == ""


def test_the_short_list_reads_evidence_with_jsonschema(
    installed: Installed, tmp_path: Path
) -> None:
    evidence = _evidence(tmp_path)
    args = ("shortlist", "--need-gib", "0.000001", "--days", "3", "--evidence", evidence)
    done = installed.run(installed.bin / "iteragpu", *args, "--json")
    assert done.returncode == 0, done.stderr
    reasons = [
        r["reason"] for c in json.loads(done.stdout)["candidates"] for r in c["requirements"]
    ]
    assert any(reason.startswith("evidence_") for reason in reasons)
    refused = installed.run(installed.bin / "iteragpu", *args[:-1], FIXTURE_RESULT)
    assert refused.returncode == 2 and "카탈로그의 카드가 아닌 장치" in refused.stderr


@pytest.mark.parametrize(
    ("lang", "words"),
    per_language(
        {"ko": ("사용법:", "옵션", "종료 코드"), "id": ("Penggunaan:", "Opsi", "Kode keluar")}
    ),
)
def test_help_speaks_each_language_from_the_installed_catalogues(
    installed: Installed, lang: str, words: tuple[str, ...]
) -> None:
    """The wheel's compiled catalogues, read without Babel: by --lang, and by the locale."""
    for command in (["--help"], ["weights", "--help"], ["examples", "run", "--help"]):
        by_option = installed.run(installed.bin / "iteragpu", *command, "--lang", lang)
        by_locale = installed.run(
            installed.bin / "iteragpu", *command, env={"LANG": f"{lang}_XX.UTF-8"}
        )
        for done in (by_option, by_locale):
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith(words[0]), done.stdout[:80]
            assert all(word in done.stdout for word in words), command
            assert "Show this message" not in done.stdout


def test_python_m_iteragpu_and_the_lab_run_from_the_installed_copy(
    installed: Installed, tmp_path: Path
) -> None:
    help_text = installed.run(installed.python, "-m", "iteragpu", "--help")
    assert help_text.returncode == 0 and "weights" in help_text.stdout
    estimate = ("estimate", "--parameters", "7e9", "--bits", "16", "--json")
    for command in (
        [installed.python, installed.package / "lab" / "mesure_memoire.py", *estimate],
        [installed.python, "-m", "iteragpu.lab.mesure_memoire", *estimate],
    ):
        done = installed.run(*command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["weights_bytes"] == 14_000_000_000
