"""`measure` never leaves a broken result file: temporary file, fsync, os.link, own files only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import fake_factory, load_schema, make_clock, validation_argv

from iteragpu.i18n.languages import SOURCE
from iteragpu.lab import mesure_memoire as mm

FAKE_MEASURE = Path(__file__).with_name("fake_measure.py")


def start_slow_measure(folder: Path, output: str) -> tuple[subprocess.Popen[str], Path]:
    ready = folder.parent / f"{folder.name}-{output}.ready"
    argv = validation_argv(Path(output))
    argv[argv.index("--repeats") + 1] = "50"  # 50 x 0.2 s: long enough to be interrupted
    process = subprocess.Popen(
        [sys.executable, str(FAKE_MEASURE), str(ready), *argv],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the fake measurement never reached a forward pass"
        time.sleep(0.02)
    time.sleep(0.1)  # well inside a forward pass
    return process, ready


def rerun_writes(folder: Path, output: str) -> dict[str, Any]:
    code = mm.main(
        validation_argv(folder / output), backend_factory=fake_factory(), clock=make_clock()
    )
    assert code == 0
    result: dict[str, Any] = json.loads((folder / output).read_text(encoding="utf-8"))
    return result


def assert_no_leftovers(folder: Path, *expected: str) -> None:
    """Nothing but the expected files: no temporary file, no empty file."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(expected)
    for name in expected:
        assert (folder / name).stat().st_size > 0


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_sigint_mid_run_write_a_complete_partial_result(
    tmp_path: Path, signum: int, code: int
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    process, _ = start_slow_measure(folder, "out.json")
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    assert_no_leftovers(folder, "out.json")
    result = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_schema()).validate(result)
    assert result["outcome"]["status"] == "interrupted"
    assert result["outcome"]["exit_code"] == code
    last = result["phases"][-1]
    assert last["status"] == "interrupted"  # the interrupted phase is kept
    assert last["start_allocated_bytes"] is not None and last["end_allocated_bytes"] is not None
    interrupted = mm.say(SOURCE, "status_interrupted")
    assert mm.say(SOURCE, "wrote", path="out.json", status=interrupted) in stdout
    # a rerun works (a new name: the partial result is kept)
    assert rerun_writes(folder, "again.json")["outcome"]["status"] == "ok"


def test_sigkill_mid_run_leaves_nothing_and_a_rerun_works(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    process, _ = start_slow_measure(folder, "out.json")
    process.kill()
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert list(folder.iterdir()) == []  # no output, no 0-byte file, no temporary file
    assert rerun_writes(folder, "out.json")["outcome"]["status"] == "ok"
    assert_no_leftovers(folder, "out.json")


def test_existing_output_is_refused_with_3(tmp_path: Path) -> None:
    target = tmp_path / "taken.json"
    target.write_bytes(b"someone's data\n")
    code = mm.main(validation_argv(target), backend_factory=fake_factory(), clock=make_clock())
    assert code == mm.EXIT_OUTPUT_EXISTS == 3
    assert target.read_bytes() == b"someone's data\n"
    assert_no_leftovers(tmp_path, "taken.json")


def test_publish_never_overwrites_and_keeps_the_complete_result(tmp_path: Path) -> None:
    """The output appears between the checks and the link: exit 3, nothing of theirs touched."""
    target = tmp_path / "race.json"
    real_link = os.link

    def link_after_someone_else(source: str, destination: str) -> None:
        Path(destination).write_text("theirs")
        real_link(source, destination)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "link", link_after_someone_else)
        with pytest.raises(mm.UsageError) as info:
            mm.publish_new_file(str(target), '{"ours": true}\n')
    assert info.value.code == mm.EXIT_OUTPUT_EXISTS
    assert target.read_text() == "theirs"
    [kept] = [p for p in tmp_path.iterdir() if p.name != "race.json"]
    assert kept.name.startswith(".race.json.") and kept.name.endswith(".tmp")
    assert kept.read_text() == '{"ours": true}\n'
    assert str(kept) in str(info.value)


def test_a_file_that_replaced_the_temporary_file_is_not_deleted(tmp_path: Path) -> None:
    """Clean-up compares the inode: a file put at the temporary name meanwhile stays."""
    target = tmp_path / "out.json"
    real_link = os.link
    replaced: list[Path] = []

    def link_then_replace(source: str, destination: str) -> None:
        real_link(source, destination)
        os.unlink(source)
        Path(source).write_text("another program's file")
        replaced.append(Path(source))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "link", link_then_replace)
        mm.publish_new_file(str(target), "ours\n")
    assert target.read_text() == "ours\n"
    [other] = replaced
    assert other.read_text() == "another program's file"


def test_a_failed_write_removes_only_its_own_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "full.json"
    seen: list[str] = []

    def disk_full(fd: int) -> None:
        [name] = [p for p in tmp_path.iterdir()]
        seen.append(name.name)
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "fsync", disk_full)
        with pytest.raises(mm.UsageError) as info:
            mm.publish_new_file(str(target), "ours\n")
    assert info.value.code == mm.EXIT_OUTPUT_ERROR == 5
    assert "No space left on device" in str(info.value)
    assert seen and list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_a_replacement_alone(tmp_path: Path) -> None:
    target = tmp_path / "full.json"

    def replace_then_fail(fd: int) -> None:
        [temporary] = list(tmp_path.iterdir())
        temporary.unlink()
        temporary.write_text("not ours")
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "fsync", replace_then_fail)
        with pytest.raises(mm.UsageError):
            mm.publish_new_file(str(target), "ours\n")
    [left] = list(tmp_path.iterdir())
    assert left.read_text() == "not ours"


def test_measure_write_failure_exits_5_without_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"

    def no_link(source: str, destination: str) -> None:
        raise OSError(1, "Operation not permitted")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "link", no_link)
        code = mm.main(validation_argv(out), backend_factory=fake_factory(), clock=make_clock())
    assert code == mm.EXIT_OUTPUT_ERROR
    assert not out.exists()
    [kept] = list(tmp_path.iterdir())  # the complete result, under its temporary name
    jsonschema.Draft202012Validator(load_schema()).validate(json.loads(kept.read_text()))
    err = capsys.readouterr().err
    kept_as = mm.say(
        SOURCE,
        "cannot_write_kept",
        path=repr(str(out)),
        error="[Errno 1] Operation not permitted",
        temporary=repr(str(kept)),
    )
    assert err.splitlines()[-1] == mm.error_line(SOURCE, "mesure_memoire.py", kept_as)


def test_unwritable_folder_is_refused_before_measuring(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running with privileges that ignore folder permissions")

        def forbidden(args: object) -> object:
            raise AssertionError("nothing must run when the result cannot be written")

        code = mm.main(validation_argv(folder / "r.json"), backend_factory=forbidden)  # type: ignore[arg-type]
        assert code == mm.EXIT_OUTPUT_ERROR
    finally:
        folder.chmod(0o700)


def test_remove_own_file_compares_the_inode(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("mine")
    identity = (path.stat().st_dev, path.stat().st_ino)
    os.link(path, tmp_path / "held")  # keeps the inode busy, so the next file gets another
    path.unlink()
    path.write_text("someone else's")
    assert mm.remove_own_file(str(path), identity) is False
    assert path.read_text() == "someone else's"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "held")  # a link to our file is not our file
    assert mm.remove_own_file(str(link), identity) is False and link.is_symlink()
    assert mm.remove_own_file(str(tmp_path / "held"), identity) is True
    assert not (tmp_path / "held").exists()
    assert mm.remove_own_file(str(tmp_path / "missing"), identity) is False


def test_signal_during_the_write_waits_for_the_complete_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    real_fsync = os.fsync

    def fsync_then_signal(fd: int) -> None:
        signal.raise_signal(signal.SIGTERM)  # arrives while the result is being written
        real_fsync(fd)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mm.os, "fsync", fsync_then_signal)
        code = mm.main(validation_argv(out), backend_factory=fake_factory(), clock=make_clock())
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["outcome"]["status"] == "ok"
    waited = mm.say(SOURCE, "signal_while_writing", signal="SIGTERM")
    assert waited in capsys.readouterr().err.splitlines()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler was restored


@pytest.mark.parametrize(("interrupt", "code"), [(KeyboardInterrupt, 130), (mm.Terminated, 143)])
def test_interrupt_before_any_phase_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], interrupt: type, code: int
) -> None:
    def loading_torch(args: object) -> object:
        raise interrupt()  # e.g. while PyTorch loads

    out = tmp_path / "r.json"
    assert mm.main(validation_argv(out), backend_factory=loading_torch) == code  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    reason = mm.say(SOURCE, "interrupted_sigint" if code == 130 else "terminated_sigterm")
    nothing = mm.say(SOURCE, "interrupted_nothing_written", reason=reason)
    assert capsys.readouterr().err == mm.error_line(SOURCE, "mesure_memoire.py", nothing) + "\n"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
