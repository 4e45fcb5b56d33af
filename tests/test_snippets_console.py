"""Every `$ iteragpu ...` session shown on a page runs and prints exactly what the page shows.
A JSON excerpt (`*.excerpt`) is part of its command's `--json` output, nothing changed.

The sessions run in a copy of `snippets/models/` where the quantization guide's checkpoint
(`llama-3.1-8b-gptq-layout`: its config.json is committed, its weights are not) gets its
safetensors file: the header `iteragpu.examples` lays out, with sparse zero data of the size the
header declares (a 5.7 GB file that takes no disk), as `iteragpu model` reads only headers.
"""

from __future__ import annotations

import json
import shlex
import shutil
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.examples import GPTQ_EXAMPLE_FOLDER, gptq_example_config, gptq_example_header

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


def write_sparse_checkpoint(folder: Path) -> None:
    """The example checkpoint's model.safetensors: its header, then data that is never read."""
    header, data_bytes = gptq_example_header()
    raw = json.dumps(header).encode()
    with (folder / "model.safetensors").open("wb") as stream:
        stream.write(struct.pack("<Q", len(raw)) + raw)
        stream.truncate(8 + len(raw) + data_bytes)


# A GGUF file with Llama-3.1-8B's tensors (as `iteragpu fit --runtime llama.cpp` reads them):
# the matrices and the token embedding in F16, the norms and llama3's rope_freqs in F32; its
# data is never read, so the file is sparse.
GGUF_EXAMPLE = "llama-3.1-8b-f16.gguf"


def write_sparse_gguf(path: Path) -> None:
    import numpy as np
    from gguf import GGUFWriter

    hidden, layers, ffn, vocab, heads, kv_heads, head_dim = 4096, 32, 14336, 128256, 32, 8, 128
    writer = GGUFWriter(path, "llama")
    for key, value in (
        ("block_count", layers),
        ("context_length", 131072),
        ("embedding_length", hidden),
        ("feed_forward_length", ffn),
        ("attention.head_count", heads),
        ("attention.head_count_kv", kv_heads),
        ("attention.key_length", head_dim),
        ("attention.value_length", head_dim),
    ):
        writer.add_uint32(f"llama.{key}", value)
    sizes = []

    def tensor(name: str, shape: tuple[int, ...], f32: bool = False) -> None:
        count = 1
        for size in shape:
            count *= size
        nbytes = count * (4 if f32 else 2)
        writer.add_tensor_info(name, shape, np.dtype(np.float32 if f32 else np.float16), nbytes)
        sizes.append(nbytes)

    tensor("token_embd.weight", (vocab, hidden))
    tensor("rope_freqs.weight", (head_dim // 2,), f32=True)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", (hidden,), f32=True)
        tensor(f"blk.{i}.attn_q.weight", (hidden, hidden))
        tensor(f"blk.{i}.attn_k.weight", (kv_heads * head_dim, hidden))
        tensor(f"blk.{i}.attn_v.weight", (kv_heads * head_dim, hidden))
        tensor(f"blk.{i}.attn_output.weight", (hidden, hidden))
        tensor(f"blk.{i}.ffn_norm.weight", (hidden,), f32=True)
        tensor(f"blk.{i}.ffn_gate.weight", (ffn, hidden))
        tensor(f"blk.{i}.ffn_up.weight", (ffn, hidden))
        tensor(f"blk.{i}.ffn_down.weight", (hidden, ffn))
    tensor("output_norm.weight", (hidden,), f32=True)
    tensor("output.weight", (vocab, hidden))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()

    def aligned(size: int) -> int:  # GGUF's default alignment, 32 bytes
        return -(-size // 32) * 32

    with path.open("r+b") as stream:
        stream.truncate(aligned(path.stat().st_size) + sum(aligned(n) for n in sizes))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where `snippets/models/...` holds every committed model, the checkpoint and the
    GGUF file."""
    root = tmp_path_factory.mktemp("snippet-models")
    shutil.copytree(SNIPPETS / "models", root / "snippets" / "models")
    write_sparse_checkpoint(root / "snippets" / "models" / GPTQ_EXAMPLE_FOLDER)
    write_sparse_gguf(root / "snippets" / "models" / GGUF_EXAMPLE)
    return root


def test_the_committed_checkpoint_config_is_the_guides() -> None:
    committed = json.loads((SNIPPETS / "models" / GPTQ_EXAMPLE_FOLDER / "config.json").read_text())
    assert committed == gptq_example_config()
    assert not (SNIPPETS / "models" / GPTQ_EXAMPLE_FOLDER / "model.safetensors").exists()


def test_console_snippets_exist() -> None:
    assert len(CONSOLE_FILES) >= 3


@pytest.mark.parametrize("path", CONSOLE_FILES, ids=[p.name for p in CONSOLE_FILES])
def test_console_snippet_reproduces(
    path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    pairs = sessions(path)
    assert pairs
    for command, expected in pairs:
        argv = shlex.split(command)
        assert argv[0] == "iteragpu"
        result = runner.invoke(app, argv[1:], prog_name="iteragpu")
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout.rstrip("\n") == expected, command


# A JSON excerpt a page shows (`*.excerpt`): the command on its first line, then part of its
# `--json` output, every key, value and list item taken from the real output in its order.
EXCERPT_FILES = sorted(SNIPPETS.glob("*.excerpt"))


def is_excerpt(part: object, whole: object) -> bool:
    """Whether `part` is `whole` with keys and list items of objects left out, nothing changed:
    an object's keys in the whole's order, each value an excerpt of the whole's; a list of
    objects a subsequence of the whole's list, item by item; anything else (a list of numbers
    such as `layers` included) equal, of the same JSON type (`0` is not `false`)."""
    if isinstance(part, dict):
        if not isinstance(whole, dict) or not set(part) <= set(whole):
            return False
        order = [key for key in whole if key in part]
        return list(part) == order and all(is_excerpt(part[k], whole[k]) for k in part)
    if isinstance(part, list) and part and all(isinstance(item, dict) for item in part):
        if not isinstance(whole, list):
            return False
        rest = iter(whole)  # each item of part matched by a later item of whole
        return all(any(is_excerpt(item, candidate) for candidate in rest) for item in part)
    return type(part) is type(whole) and part == whole


def read_excerpt(path: Path) -> tuple[str, object, str]:
    """(command, excerpt, its text after the command line) of an `.excerpt` file."""
    first, _, text = path.read_text("utf-8").partition("\n")
    assert first.startswith("$ iteragpu "), path.name
    return first[2:], json.loads(text), text


def test_the_excerpt_check_fails_on_a_changed_or_reordered_excerpt() -> None:
    whole = {"a": 1, "ranks": [{"rank": 0, "x": [0, 32]}, {"rank": 1, "x": [32, 64]}], "b": False}
    assert is_excerpt({"a": 1, "ranks": [{"rank": 1}]}, whole)
    assert is_excerpt({"ranks": [{"rank": 0}, {"x": [32, 64]}], "b": False}, whole)
    assert not is_excerpt({"a": 2}, whole)  # a changed value
    assert not is_excerpt({"b": False, "a": 1}, whole)  # keys out of order
    assert not is_excerpt({"ranks": [{"rank": 1}, {"rank": 0}]}, whole)  # items out of order
    assert not is_excerpt({"ranks": [{"rank": 0}, {"rank": 0}]}, whole)  # one item twice
    assert not is_excerpt({"ranks": [{"x": [32]}]}, whole)  # a list of numbers cut
    assert not is_excerpt({"b": 0}, whole)  # 0 for false
    assert not is_excerpt({"c": None}, whole)  # a key the output lacks


def test_excerpt_snippets_exist() -> None:
    assert EXCERPT_FILES


@pytest.mark.parametrize("path", EXCERPT_FILES, ids=[p.name for p in EXCERPT_FILES])
def test_json_excerpt_is_part_of_the_commands_output(
    path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    command, excerpt, text = read_excerpt(path)
    # Laid out as the command prints JSON, so that the page shows it as the reader sees it.
    assert text == json.dumps(excerpt, indent=2, ensure_ascii=False) + "\n", path.name
    result = runner.invoke(app, shlex.split(command)[1:], prog_name="iteragpu")
    assert result.exit_code == 0, (command, result.output)
    assert is_excerpt(excerpt, json.loads(result.stdout)), command
