"""A runtime's start-up log read back: the lines that say what it allocated, parsed by the
format strings its source prints them with, at the versions the split rules cite.

vLLM 0.34.0 (the sdist `vllm-0.34.0.tar.gz`; every line goes through vllm/logger.py's
`_FORMAT`, "(%(vllm_process_name)s pid=%(process)d) %(levelname)s %(asctime)s
[%(fileinfo)s:%(lineno)d] %(message)s", the worker's name `Worker[_PPp][_TPt]` from
v1/executor/multiproc_executor.py, `EngineCore` when one process runs the model):

- v1/engine/core.py: "Initializing a V1 LLM engine (v%s) with config: %s", the config's
  `key=value, ` pairs (config/vllm.py `VllmConfig.__str__`: `dtype`, `max_seq_len`,
  `tensor_parallel_size`, `pipeline_parallel_size`, `kv_cache_dtype`);
- platforms/interface.py: "Setting kv cache block size to %d for %s backend(s).";
- v1/worker/gpu/model_runner.py: "Model loading took %s GiB memory and %.6f seconds";
- v1/worker/gpu_worker.py: "Available KV cache memory: %s GiB";
- v1/core/kv_cache_utils.py: "%s KV cache size: %s tokens, Maximum concurrency for %s tokens
  per request: %.2fx" (the counts with thousands commas);
- v1/core/kv_cache_planning.py: "Auto-fit max_model_len: reduced from %d to %d ..." and
  "--max-model-len auto reduced max_model_len from %d to %d ...";
- v1/worker/extensible_kv_cache.py: "Extended KV cache to %d blocks (%.2f GiB).", printed only
  with the extensible KV cache, once its blocks are measured after warmup.

llama.cpp at commit 00342301d01a: src/llama-model.cpp `load_tensors` prints "%s: offloaded
%d/%d layers to GPU" and "%s: %12s model buffer size = %8.2f MiB" (read at the commit);
`llama_kv_cache`'s "%s: %10s KV buffer size = %8.2f MiB" and "%s: size = %7.2f MiB (%6u
cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB", the context's "%s:
%10s compute buffer size = %8.2f MiB" and its "n_seq_max", "n_ctx" lines were read in
src/llama-kv-cache.cpp and src/llama-context.cpp of versions whose `llama_kv_cache`
constructor is the one the pinned `create_memory` calls (those files are not stored at the
commit itself in the sources searched).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from iteragpu.core.numbers import InputError
from iteragpu.core.records import Record

MAX_LOG_BYTES: Final = 64 * 2**20  # a start-up log is kilobytes; a bigger file is no log
_NUMBER: Final = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)"


class LogError(InputError):
    """A log that is no start-up log of the runtime named: one line, exit 2."""


class VllmLog(Record):
    """What a vLLM start-up printed. Lists follow the log's order; `ranks` gives each
    per-worker figure's rank (PP stage x TP size + TP rank, from the worker's name)."""

    version: str | None
    config: tuple[tuple[str, str], ...]  # the engine's config pairs it printed
    block_size: int | None  # "Setting kv cache block size to N"
    loading_gib: tuple[tuple[int, str], ...]  # (rank, "Model loading took X GiB")
    available_gib: tuple[tuple[int, str], ...]  # (rank, "Available KV cache memory: X GiB")
    cache_tokens: int | None  # "GPU KV cache size: N tokens"
    concurrency_tokens: int | None  # "Maximum concurrency for L tokens per request"
    concurrency: str | None  # "C.CC" of "C.CCx"
    auto_fit: tuple[int, int] | None  # max_model_len reduced from, to
    extended_blocks: int | None  # "Extended KV cache to N blocks": the extensible cache's

    def setting(self, key: str) -> str | None:
        return next((value for name, value in self.config if name == key), None)


class LlamaLog(Record):
    """What a llama.cpp start-up printed: buffers by name (CUDA0, CPU_Mapped...) in MiB text."""

    offloaded: tuple[int, int] | None  # "offloaded N/M layers to GPU"
    model_buffers: tuple[tuple[str, str], ...]
    kv_buffers: tuple[tuple[str, str], ...]
    compute_buffers: tuple[tuple[str, str], ...]
    kv_size: tuple[str, int, int, int, int, str, str, str, str] | None
    # (total MiB, cells per stream, layers, seqs, streams, K type, K MiB, V type, V MiB)
    n_ctx: int | None
    n_seq_max: int | None


def read_text(path: Path, runtime: str) -> str:
    """The log's text; `LogError` for a file that cannot be a log."""
    try:
        size = path.stat().st_size
        if size > MAX_LOG_BYTES:
            raise LogError(
                "{path}: {size} B is no {runtime} start-up log (at most {limit} B read)",
                "log_too_big",
                path=str(path),
                size=str(size),
                runtime=runtime,
                limit=str(MAX_LOG_BYTES),
            )
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as error:
        raise LogError(
            "{path}: cannot be read ({why})",
            "log_unreadable",
            path=str(path),
            why=error.strerror or type(error).__name__,
        ) from None


_WORKER: Final = re.compile(r"\((Worker(?:_DP\d+)?(?:_PP(\d+))?(?:_PCP\d+)?(?:_TP(\d+))?\S*) pid=")
_VLLM: Final = {
    "engine": re.compile(r"Initializing a V1 LLM engine \(v([^)\s]+)\) with config: (.*)$"),
    "block": re.compile(r"Setting kv cache block size to (\d+) for "),
    "loading": re.compile(r"Model loading took " + _NUMBER + r" GiB memory and "),
    "available": re.compile(r"Available KV cache memory: " + _NUMBER + r" GiB"),
    "capacity": re.compile(
        r"\S+ KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) tokens per "
        r"request: (\d+\.\d\d)x"
    ),
    "extended": re.compile(r"Extended KV cache to (\d+) blocks \("),
    "auto_fit": re.compile(
        r"(?:Auto-fit max_model_len: reduced from|--max-model-len auto reduced max_model_len "
        r"from) (\d+) to (\d+)"
    ),
}
_CONFIG_PAIR: Final = re.compile(
    r"(dtype|max_seq_len|tensor_parallel_size|pipeline_parallel_size|kv_cache_dtype)=([^,\s]+)"
)


def _worker_rank(line: str, tp: int, seen: int) -> int:
    found = _WORKER.search(line)
    if found is None or (found.group(2) is None and found.group(3) is None):
        return seen
    stage = int(found.group(2) or 0)
    return stage * tp + int(found.group(3) or 0)


def parse_vllm(text: str, path: str) -> VllmLog:
    """The start-up lines of a vLLM 0.34.0 log; `LogError` when it holds neither the cache
    memory nor the cache size line."""
    version = None
    config: list[tuple[str, str]] = []
    block_size = cache_tokens = concurrency_tokens = None
    concurrency = None
    auto_fit = extended = None
    loading: list[tuple[int, str]] = []
    available: list[tuple[int, str]] = []
    lines = text.splitlines()
    for line in lines:
        found = _VLLM["engine"].search(line)
        if found:
            version = found.group(1)
            config = [(k, v.strip("'\"")) for k, v in _CONFIG_PAIR.findall(found.group(2))]
            break
    tp = next((int(v) for k, v in config if k == "tensor_parallel_size" and v.isdigit()), 1)
    for line in lines:
        if found := _VLLM["block"].search(line):
            block_size = int(found.group(1))
        elif found := _VLLM["loading"].search(line):
            loading.append((_worker_rank(line, tp, len(loading)), found.group(1)))
        elif found := _VLLM["available"].search(line):
            available.append((_worker_rank(line, tp, len(available)), found.group(1)))
        elif found := _VLLM["capacity"].search(line):
            cache_tokens = int(found.group(1).replace(",", ""))
            concurrency_tokens = int(found.group(2).replace(",", ""))
            concurrency = found.group(3)
        elif found := _VLLM["auto_fit"].search(line):
            auto_fit = (int(found.group(1)), int(found.group(2)))
        elif found := _VLLM["extended"].search(line):
            extended = int(found.group(1))
    if not available and cache_tokens is None:
        raise LogError(
            '{path}: no vLLM start-up line found ("Available KV cache memory: ... GiB" or '
            '"GPU KV cache size: ... tokens"): not a vLLM log, or cut before the cache',
            "log_not_vllm",
            path=path,
        )
    return VllmLog(
        version,
        tuple(config),
        block_size,
        tuple(loading),
        tuple(available),
        cache_tokens,
        concurrency_tokens,
        concurrency,
        auto_fit,
        extended,
    )


_MIB: Final = r"(\d+\.\d\d) MiB"
_LLAMA: Final = {
    "offloaded": re.compile(r"offloaded (\d+)/(\d+) layers to GPU"),
    "model": re.compile(r": +(\S+) model buffer size = +" + _MIB),
    "kv": re.compile(r": +(\S+) KV buffer size = +" + _MIB),
    "compute": re.compile(r": +(\S+) compute buffer size = +" + _MIB),
    "size": re.compile(
        r": size = +" + _MIB + r" \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), "
        r"K \((\w+)\): +" + _MIB + r", V \((\w+)\): +" + _MIB
    ),
    "n_ctx": re.compile(r": n_ctx += (\d+)\s*$"),
    "n_seq_max": re.compile(r": n_seq_max += (\d+)\s*$"),
}


def parse_llama(text: str, path: str) -> LlamaLog:
    """The start-up lines of a llama.cpp log; `LogError` when it holds no KV cache line."""
    offloaded = kv_size = None
    n_ctx = n_seq_max = None
    model: list[tuple[str, str]] = []
    kv: list[tuple[str, str]] = []
    compute: list[tuple[str, str]] = []
    for line in text.splitlines():
        if found := _LLAMA["offloaded"].search(line):
            offloaded = (int(found.group(1)), int(found.group(2)))
        elif found := _LLAMA["model"].search(line):
            model.append((found.group(1), found.group(2)))
        elif found := _LLAMA["kv"].search(line):
            kv.append((found.group(1), found.group(2)))
        elif found := _LLAMA["compute"].search(line):
            compute.append((found.group(1), found.group(2)))
        elif found := _LLAMA["size"].search(line):
            g = found.groups()
            kv_size = (g[0], int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5], g[6], g[7], g[8])
        elif found := _LLAMA["n_ctx"].search(line):
            n_ctx = int(found.group(1))
        elif found := _LLAMA["n_seq_max"].search(line):
            n_seq_max = int(found.group(1))
    if kv_size is None or not kv:
        raise LogError(
            '{path}: no llama.cpp cache line found ("llama_kv_cache: size = ... MiB (... '
            'cells ...)" and its "KV buffer size" lines): not a llama.cpp log, or cut before '
            "the cache",
            "log_not_llamacpp",
            path=path,
        )
    return LlamaLog(offloaded, tuple(model), tuple(kv), tuple(compute), kv_size, n_ctx, n_seq_max)
