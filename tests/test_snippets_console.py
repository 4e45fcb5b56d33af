"""Every `$ iteragpu ...` session shown on a page runs and prints exactly what the page shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app

SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"
runner = CliRunner(env={"COLUMNS": "120"})


def sessions(path: Path) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a `.console` file."""
    pairs: list[tuple[str, list[str]]] = []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            assert pairs, f"{path.name}: output before the first command"
            pairs[-1][1].append(line)
    return [(command, "\n".join(lines)) for command, lines in pairs]


CONSOLE_FILES = sorted(SNIPPETS.glob("*.console"))


def test_console_snippets_exist() -> None:
    assert len(CONSOLE_FILES) >= 3


@pytest.mark.parametrize("path", CONSOLE_FILES, ids=[p.name for p in CONSOLE_FILES])
def test_console_snippet_reproduces(path: Path) -> None:
    pairs = sessions(path)
    assert pairs
    for command, expected in pairs:
        argv = shlex.split(command)
        assert argv[0] == "iteragpu"
        result = runner.invoke(app, argv[1:], prog_name="iteragpu")
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout.rstrip("\n") == expected, command
