"""Start-up logs read back and set beside the plan (`iteragpu report --vllm-log/--llama-log`).

The sample logs are written here from the runtimes' own format strings (below, each with the
file that prints it), filled with figures these tests state: they are samples of the formats,
not a run's output (no GPU ran them). vLLM's arithmetic behind the figures is held to vLLM's
own functions by test_fit_rules.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from models.published_configs import LLAMA_3_8B
from parallel.test_llamacpp_rules import HEAD_DIM, KV_HEADS, LAYERS, write_gguf
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.core.numbers import InputError
from iteragpu.i18n.languages import CODES
from iteragpu.parallel import reconcile, runtime_logs
from iteragpu.parallel import vllm_rules as rules
from iteragpu.parallel.plan import plan_split
from iteragpu.parallel.records import SplitRequest

# vLLM 0.34.0: vllm/logger.py _FORMAT (the record's prefix), then each line's own format.
VLLM_PREFIX = "(%s pid=%d) INFO 12-03 10:00:%02d [%s] "
VLLM_ENGINE = "Initializing a V1 LLM engine (v%s) with config: %s"  # v1/engine/core.py
VLLM_LOADING = "Model loading took %s GiB memory and %.6f seconds"  # v1/worker/gpu/model_runner.py
VLLM_AVAILABLE = "Available KV cache memory: %s GiB"  # v1/worker/gpu_worker.py
VLLM_CAPACITY = (  # v1/core/kv_cache_utils.py update_kv_cache_capacity
    "%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx"
)
VLLM_EXTENDED = "Extended KV cache to %d blocks (%.2f GiB)."  # v1/worker/extensible_kv_cache.py
# llama.cpp: src/llama-model.cpp load_tensors (at 00342301d01a); llama_kv_cache; llama_context.
LLAMA_OFFLOADED = "%s: offloaded %d/%d layers to GPU\n"
LLAMA_MODEL_BUFFER = "%s: %12s model buffer size = %8.2f MiB\n"
LLAMA_KV_BUFFER = "%s: %10s KV buffer size = %8.2f MiB\n"
LLAMA_KV_SIZE = (
    "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, "
    "V (%s): %7.2f MiB\n"
)
LLAMA_COMPUTE = "%s: %10s compute buffer size = %8.2f MiB\n"
LLAMA_N_SEQ = "%s: n_seq_max     = %u\n"

runner = CliRunner()


def model(tmp_path: Path) -> str:
    folder = tmp_path / "llama"
    folder.mkdir()
    config = {**LLAMA_3_8B, "max_position_embeddings": 131072}
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return str(folder)


def engine_line(tp: int, kv: str = "auto") -> str:
    config = (
        "model='meta-llama/Llama-3.1-8B', speculative_config=None, dtype=torch.bfloat16, "
        f"max_seq_len=8192, download_dir=None, load_format=auto, tensor_parallel_size={tp}, "
        f"pipeline_parallel_size=1, data_parallel_size=1, kv_cache_dtype={kv}, device_config=cuda"
    )
    return VLLM_PREFIX % ("EngineCore", 7, 0, "core.py:154") + VLLM_ENGINE % ("0.34.0", config)


def vllm_log(
    tp: int, available: str, blocks: int | None, loading: str = "7.50", extended: bool = False
) -> str:
    lines = [engine_line(tp)]
    for rank in range(tp):
        name = f"Worker_TP{rank}" if tp > 1 else "EngineCore"
        lines.append(
            VLLM_PREFIX % (name, 10 + rank, 20, "model_runner.py:442")
            + VLLM_LOADING % (loading, 10.5)
        )
        lines.append(
            VLLM_PREFIX % (name, 10 + rank, 40, "gpu_worker.py:796") + VLLM_AVAILABLE % available
        )
    if blocks is not None:
        if extended:
            lines.append(
                VLLM_PREFIX % ("Worker_TP0", 10, 50, "extensible_kv_cache.py:536")
                + VLLM_EXTENDED % (blocks, blocks * 64 * 65536 / 2**30)
            )
        capacity = VLLM_CAPACITY % (
            "GPU",
            f"{rules.cache_size_tokens(blocks, 8192):,}",
            f"{8192:,}",
            rules.max_concurrency(blocks, 8192),
        )
        lines.append(VLLM_PREFIX % ("EngineCore", 7, 51, "kv_cache_utils.py:1169") + capacity)
    return "\n".join(lines) + "\n"


def statuses(result: reconcile.Reconciliation) -> dict[str, str]:
    return {f"{i.item}/{i.rank}": i.status for i in result.items}


def test_a_vllm_log_within_its_rounding(tmp_path: Path) -> None:
    path = model(tmp_path)
    # TP 2: 4 KV heads per rank, 65,536 B per token, 4 MiB per block of 64 tokens
    first, last = rules.gib_range("30.5")
    blocks = first // (64 * 65536)
    assert last // (64 * 65536) > blocks  # the figure leaves two counts open
    log = runtime_logs.parse_vllm(vllm_log(2, "30.5", blocks), "v.log")
    assert log.available_gib == ((0, "30.5"), (1, "30.5"))
    assert log.setting("tensor_parallel_size") == "2" and log.concurrency_tokens == 8192
    result = reconcile.reconcile_vllm(log, path, "v.log", capacity_bytes=48 * 10**9)
    found = statuses(result)
    assert found["blocks/None"] == found["cache_tokens/None"] == "within_range"
    assert found["max_model_len/None"] == "bound_holds"
    # the weights: 7.5 GiB logged against the plan's, the difference stated
    weights = [i for i in result.items if i.item == "weights"]
    plan = plan_split(SplitRequest(path, 1, 1, "vllm", 2))
    assert weights[0].computed == rules.format_gib(int(plan.ranks[0].weights_bytes) + 1)
    assert weights[0].difference is not None and weights[0].status == "differs"
    # 0.92 of 48e9 B less the weights, against the 30.5 GiB vLLM measured
    budget = next(i for i in result.items if i.item == "available_budget")
    assert budget.status == "bound_holds" and budget.difference is not None
    assert budget.difference.startswith("-")


def test_a_vllm_log_of_other_settings_differs(tmp_path: Path) -> None:
    path = model(tmp_path)
    first, _ = rules.gib_range("30.5")
    blocks = first // (64 * 65536)
    # read as an fp8 cache: half the block's bytes, twice the blocks the memory buys, so
    # the logged count is below them
    log = runtime_logs.parse_vllm(vllm_log(2, "30.5", blocks), "v.log")
    result = reconcile.reconcile_vllm(log, path, "v.log", kv_dtype="fp8")
    blocks_item = next(i for i in result.items if i.item == "blocks")
    assert blocks_item.status == "differs" and blocks_item.difference is not None
    assert int(blocks_item.difference) == blocks - 2 * first // (64 * 65536)


def test_an_extensible_log_is_held_to_its_bound(tmp_path: Path) -> None:
    path = model(tmp_path)
    first, _ = rules.gib_range("30.5")
    measured = first // (64 * 65536) - 40  # counted again after warmup: fewer
    log = runtime_logs.parse_vllm(vllm_log(2, "30.5", measured, extended=True), "v.log")
    result = reconcile.reconcile_vllm(log, path, "v.log")
    assert statuses(result)["blocks/None"] == "bound_holds"
    assert "vllm_extensible_measured" in result.notes


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("nothing a runtime prints\n", "log_not_vllm"),
        ("INFO Available KV cache memory: 1.005 GiB\n", "log_bad_gib"),
    ],
)
def test_a_log_that_does_not_match_is_refused(tmp_path: Path, text: str, reason: str) -> None:
    path = model(tmp_path)
    with pytest.raises(InputError) as refused:
        log = runtime_logs.parse_vllm(text, "x.log")
        reconcile.reconcile_vllm(log, path, "x.log")
    assert refused.value.reason == reason


def llama_log(gguf: Path, *, model_extra_mib: float = 0.01) -> str:
    plan = plan_split(SplitRequest(str(gguf), 1024, 1, "llama.cpp", parallel=2))
    gpu_mib = float(plan.ranks[0].weights_bytes) / 2**20 + model_extra_mib
    host_mib = float(plan.host.weights_bytes) / 2**20 if plan.host else 0.0
    # f16 rows of KV_HEADS x HEAD_DIM values: 2 bytes each, 1,024 cells (2 streams of 512)
    k_mib = LAYERS * KV_HEADS * HEAD_DIM * 2 * 1024 / 2**20
    return "".join(
        [
            LLAMA_N_SEQ % ("llama_context", 2),
            LLAMA_OFFLOADED % ("load_tensors", 5, 5),
            LLAMA_MODEL_BUFFER % ("load_tensors", "CUDA0", gpu_mib),
            LLAMA_MODEL_BUFFER % ("load_tensors", "CPU_Mapped", host_mib),
            LLAMA_KV_BUFFER % ("llama_kv_cache", "CUDA0", 2 * k_mib),
            LLAMA_KV_SIZE
            % ("llama_kv_cache", 2 * k_mib, 512, LAYERS, 2, 2, "f16", k_mib, "f16", k_mib),
            LLAMA_COMPUTE % ("llama_context", "CUDA0", 10.0),
        ]
    )


def test_a_llamacpp_log_beside_the_plan(tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", context_length=4096)
    log = runtime_logs.parse_llama(llama_log(gguf), "l.log")
    assert log.kv_size is not None and log.kv_size[1:5] == (512, LAYERS, 2, 2)
    result = reconcile.reconcile_llama(log, str(gguf), "l.log")
    found = statuses(result)
    assert found["cells/None"] == found["kv_k/None"] == found["kv_v/None"] == "equal"
    assert found["kv_buffer/0"] == "equal"
    assert found["model_buffer/0"] == "differs"  # written 0.01 MiB above the tensors
    assert found["compute_buffer:CUDA0/None"] == "measured_only"
    model_item = next(i for i in result.items if i.item == "model_buffer")
    assert model_item.difference == "+0.01"


def test_a_llamacpp_log_without_its_cache_lines_is_refused() -> None:
    with pytest.raises(InputError) as refused:
        runtime_logs.parse_llama(LLAMA_OFFLOADED % ("load_tensors", 5, 5), "l.log")
    assert refused.value.reason == "log_not_llamacpp"


def report(*args: str) -> Any:
    return runner.invoke(app, ["report", *args], env={"COLUMNS": "100"})


@pytest.mark.parametrize("lang", CODES)
def test_report_prints_the_items_in_the_readers_language(tmp_path: Path, lang: str) -> None:
    path = model(tmp_path)
    first, _ = rules.gib_range("30.5")
    log_file = tmp_path / "vllm.log"
    log_file.write_text(vllm_log(2, "30.5", first // (64 * 65536)), "utf-8")
    result = report("--vllm-log", str(log_file), "--model", path, "--lang", lang)
    assert result.exit_code == 0, result.output
    assert str(log_file) in result.stdout and "0.34.0" in result.stdout
    # Where each setting came from and the units that count things, in the reader's words: the
    # settings' names are vLLM's identifiers, the rest is not English.
    text = result.stdout.replace(str(log_file), " ").replace(path, " ")
    english = {"default", "option", "blocks", "tokens", "cells", "all"}
    english |= {"log"} if lang == "ko" else set()  # "log" is an Indonesian word too
    assert not english & set(re.findall(r"[A-Za-z]+", text)), text
    as_json = report("--vllm-log", str(log_file), "--model", path, "--json")
    data = json.loads(as_json.stdout)
    assert set(data) == {"runtime", "path", "log", "log_version", "settings", "items", "notes"}
    # The JSON's settings keep their stable form: the value, then its source in English.
    assert data["settings"]["tensor_parallel_size"] == "2 (log)"
    assert data["settings"]["block_size"] == "64 (default)"
    assert {i["unit"] for i in data["items"]} >= {"blocks", "tokens", "x"}
    assert {i["status"] for i in data["items"]} >= {"within_range", "differs"}


@pytest.mark.parametrize(
    "args",
    [
        ["--vllm-log", "{bad}", "--model", "{model}"],
        ["--vllm-log", "{missing}", "--model", "{model}"],
        ["--vllm-log", "{bad}"],
        ["--llama-log", "{bad}", "--model", "{model}", "--tp", "2"],
        ["{bad}", "--vllm-log", "{bad}", "--model", "{model}"],
        [],
    ],
)
def test_report_refusals_are_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    bad = tmp_path / "bad.log"
    bad.write_text("garbage\n", "utf-8")
    values = {"bad": str(bad), "missing": str(tmp_path / "none.log"), "model": model(tmp_path)}
    result = report(*(a.format(**values) for a in args))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
