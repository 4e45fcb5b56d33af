"""The shell commands that pages show (`snippets/*.sh`) run and do what the pages say."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.i18n.languages import CODES
from iteragpu.lab import mesure_memoire

SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"
SCRIPT = Path(mesure_memoire.__file__)


def _commands(name: str) -> list[list[str]]:
    lines = (SNIPPETS / name).read_text("utf-8").splitlines()
    return [shlex.split(line) for line in lines if line.strip()]


def test_lab_commands_run_as_the_pages_describe(tmp_path: Path) -> None:
    commands = _commands("lab_commands.sh")
    assert [c[2] for c in commands] == ["estimate", "predict", "environment", "measure"]
    results = []
    for command in commands:
        assert command[:2] == ["python", "mesure_memoire.py"]
        # -I -S: no site-packages, so no PyTorch, as on a machine without it.
        results.append(
            subprocess.run(
                [sys.executable, "-I", "-S", str(SCRIPT), *command[2:]],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                check=False,
            )
        )
    estimate, predict, environment, measure = results
    assert estimate.returncode == 0
    assert "14,000,000,000 B" in estimate.stdout and "17.04 GiB" in estimate.stdout
    assert predict.returncode == 0 and "model_load:" in predict.stdout
    assert "133,632 B" in predict.stdout
    assert environment.returncode == 2 and "PyTorch" in environment.stdout + environment.stderr
    assert measure.returncode == 2
    assert not (tmp_path / "mesures.json").exists()
    assert "Traceback" not in measure.stderr


def test_lab_train_commands_run_as_the_pages_describe(tmp_path: Path) -> None:
    """`predict --task train` prints the model states after each phase without PyTorch;
    `measure --task train` stops with code 2 and writes nothing where there is no GPU."""
    commands = _commands("lab_train_commands.sh")
    assert [c[2:4] for c in commands] == [["predict", "--task"], ["measure", "--task"]]
    predict, measure = (
        subprocess.run(
            [sys.executable, "-I", "-S", str(SCRIPT), *command[2:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        for command in commands
    )
    assert predict.returncode == 0 and "534,528 B" in predict.stdout  # after optimizer_step
    assert measure.returncode == 2 and len(measure.stderr.splitlines()) == 1
    assert not (tmp_path / "train.json").exists()


def test_the_micro_batch_sweep_runs_and_report_compares_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch guide's sweep, replayed on the lab's simulated allocator (synthetic counters,
    never a measurement): the runs differ only in --batch and the output name, each writes its
    result, and `iteragpu report` reads them all and names the run with the highest peak."""
    from lab_support import SimulatedBackend, make_clock
    from results_support import _with_device

    *sweep, report = _commands("lab_train_sweep.sh")
    assert len(sweep) >= 3 and report[:2] == ["iteragpu", "report"]

    def option(command: list[str], name: str) -> str:
        return command[command.index(name) + 1]

    def fixed(command: list[str]) -> list[str]:
        return [w for i, w in enumerate(command) if command[i - 1] not in ("--batch", "--output")]

    assert all(fixed(command) == fixed(sweep[0]) for command in sweep)
    assert fixed(sweep[0])[:4] == ["python", "mesure_memoire.py", "measure", "--task"]
    batches = [int(option(command, "--batch")) for command in sweep]
    assert batches == sorted(set(batches))
    assert report[2:] == [option(command, "--output") for command in sweep]
    monkeypatch.chdir(tmp_path)
    peaks = []
    for command in sweep:
        code = mesure_memoire.main(
            [*command[2:], "--lang", "ko"],
            backend_factory=_with_device(SimulatedBackend, "simulated"),
            clock=make_clock(),
        )
        assert code == 0
        written = json.loads((tmp_path / option(command, "--output")).read_text("utf-8"))
        peaks.append(max(p["peak_allocated_bytes"] for p in written["phases"]))
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, [*report[1:], "--lang", "ko"])
    assert result.exit_code == 0, result.output
    highest = result.output.strip().splitlines()[-1]
    assert report[2 + peaks.index(max(peaks))] in highest
    assert f"{max(peaks):,} B" in highest


@pytest.mark.parametrize("lang", CODES)
def test_install_snippet_commands_run(lang: str) -> None:
    # One install snippet per language: its last command reproduces the examples in that
    # language, as the page that shows it is written.
    runner = CliRunner()
    commands = [c for c in _commands(f"cli_install.{lang}.sh") if c[0] == "iteragpu"]
    assert len(commands) >= 2
    assert ["--lang", lang] == commands[-1][-2:]
    for command in commands:
        result = runner.invoke(app, command[1:], prog_name="iteragpu")
        assert result.exit_code == 0, (command, result.output)
