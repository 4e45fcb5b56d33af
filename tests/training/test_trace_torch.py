"""iteragpu.training.trace against the real thing: the fake trace of a training step (PyTorch's
FakeTensorMode on device `cpu`, nothing allocated) equals a real CPU run of the same step,
counted the same way, to the byte: the bytes saved for backward, the peaks of the forward and
backward, of the first step and of a warm one, and where each phase peaks (phase, module, op).

Tiny models of two families whose layers differ (Llama; Qwen2 with q/k/v biases and tied
embeddings), full fine-tuning and LoRA (PEFT's default targets), with and without non-reentrant
checkpointing, SDPA and eager attention, bf16 weights, and fp32 for Llama. Then relations the
trace must keep, which can fail: checkpointing keeps less; the saved bytes are affine in the
micro-batch from two sequences on (a per-sequence part and a part every sequence shares, the
rotary cos/sin of shape (1, S, head_dim)), one sequence keeping 8 bytes more; a warm step
holds AdamW's states throughout, so its forward and backward peak the first step's plus the
states, and its optimizer step peaks as the first's (the warm step peaks higher, not lower).
Last, a published shape traced fake only (Llama-3.1-8B, 4,096 tokens, micro-batch 1, bf16, full
fine-tuning, SDPA). Run by `nox -s training` (marker `training`).
"""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from iteragpu.training.trace import (  # noqa: E402
    TORCH_VERSION,
    TRANSFORMERS_VERSION,
    TraceResult,
    trace_step,
)

PRESETS = Path(__file__).resolve().parents[2] / "src" / "iteragpu" / "models" / "presets"
TINY = {
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
FAMILIES = {
    "llama": {"model_type": "llama", **TINY},
    # Qwen2: biases on q/k/v, tied embeddings (the head's gradient lands on the embeddings)
    "qwen2": {"model_type": "qwen2", **TINY, "tie_word_embeddings": True},
}
MICRO_BATCH, SEQUENCE = 2, 32
# Every figure of a trace; `fake` and `seconds` are the run's, not PyTorch's.
FIGURES = (
    "activations_bytes",
    "retained_bytes",
    "forward_backward_peak_bytes",
    "first_step_peak_bytes",
    "step_peak_bytes",
    "peak_phase",
    "peak_layer",
    "forward_backward_peak",
    "first_step_peak",
    "step_peak",
    "first_step_phases",
    "step_phases",
    "parameter_bytes",
    "gradient_bytes",
    "optimizer_state_bytes",
    "batch_bytes",
)


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Any:
    """One thread: the tiny models are quicker so, and the session shares two cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@cache
def _trace(
    family: str,
    method: str = "full",
    checkpointing: str = "none",
    attention: str = "sdpa",
    precision: str = "bf16",
    micro_batch: int = MICRO_BATCH,
    fake: bool = True,
) -> TraceResult:
    if method == "lora":
        pytest.importorskip("peft")
    return trace_step(
        FAMILIES[family],
        micro_batch=micro_batch,
        sequence_length=SEQUENCE,
        checkpointing=checkpointing,  # type: ignore[arg-type]
        attention=attention,  # type: ignore[arg-type]
        precision=precision,  # type: ignore[arg-type]
        method=method,  # type: ignore[arg-type]
        fake=fake,
    )


def _figures(result: TraceResult) -> dict[str, Any]:
    return {name: getattr(result, name) for name in FIGURES}


SETUPS = [
    pytest.param(
        family,
        method,
        checkpointing,
        attention,
        "bf16",
        id=f"{family}-{method}-{checkpointing}-{attention}",
    )
    for family in FAMILIES
    for method in ("full", "lora")
    for checkpointing in ("none", "full")
    for attention in ("sdpa", "eager")
] + [
    pytest.param("llama", method, "none", "sdpa", "fp32", id=f"llama-{method}-none-sdpa-fp32")
    for method in ("full", "lora")
]


@pytest.mark.parametrize(("family", "method", "checkpointing", "attention", "precision"), SETUPS)
def test_the_fake_trace_equals_a_real_run(
    family: str, method: str, checkpointing: str, attention: str, precision: str
) -> None:
    setup = (family, method, checkpointing, attention, precision)
    fake, real = _trace(*setup), _trace(*setup, fake=False)
    assert fake.fake and not real.fake
    assert _figures(fake) == _figures(real)
    # ... and the figures are what they say: every phase seen, the model states as torch
    # holds them (the gradients are the trainable parameters', AdamW keeps two states of
    # each and a 4-byte step counter per tensor).
    assert [p.phase for p in real.step_phases] == ["forward", "loss", "backward", "optimizer_step"]
    assert 0 < real.activations_bytes < real.forward_backward_peak_bytes
    assert real.gradient_bytes <= real.parameter_bytes
    counters = real.optimizer_state_bytes - 2 * real.gradient_bytes
    assert counters > 0 and counters % 4 == 0


def test_the_real_run_sees_the_model_states_torch_holds() -> None:
    """The live-storage count starts from the parameters and buffers as torch holds them."""
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**FAMILIES["qwen2"])
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    tensors = list(model.parameters()) + list(model.buffers())
    held = {id(t.untyped_storage()): t.untyped_storage().nbytes() for t in tensors}
    result = _trace("qwen2", fake=False)
    assert result.parameter_bytes == sum(held.values())
    trainable = {id(p.untyped_storage()): p.untyped_storage().nbytes() for p in model.parameters()}
    assert result.gradient_bytes == sum(trainable.values())  # tied: one gradient
    assert result.optimizer_state_bytes == 2 * result.gradient_bytes + 4 * len(trainable)
    assert result.batch_bytes == 2 * MICRO_BATCH * SEQUENCE * 8  # input_ids and labels, int64


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("method", ["full", "lora"])
def test_checkpointing_keeps_less(family: str, method: str) -> None:
    kept, checkpointed = _trace(family, method), _trace(family, method, "full")
    assert checkpointed.activations_bytes < kept.activations_bytes
    assert checkpointed.forward_backward_peak_bytes < kept.forward_backward_peak_bytes
    # The recompute runs in the backward: the model states are the same.
    assert checkpointed.parameter_bytes == kept.parameter_bytes
    assert checkpointed.optimizer_state_bytes == kept.optimizer_state_bytes


@pytest.mark.parametrize("method", ["full", "lora"])
@pytest.mark.parametrize("checkpointing", ["none", "full"])
def test_the_saved_bytes_are_affine_in_the_micro_batch(method: str, checkpointing: str) -> None:
    """Not proportional: the same bytes for each sequence, plus what every sequence shares:
    the rotary cos and sin, (1, S, head_dim) each, which the checkpoint keeps in its closure
    and not as saved tensors, and the loss's float32 total weight (`nll_loss_forward`'s
    second output, 4 bytes). And micro-batch 1 is 8 bytes above the line: the loss pads the
    labels by one (loss/loss_utils.py `ForCausalLMLoss`: `pad(labels, (0, 1))`, then
    `labels[..., 1:].contiguous()`), a slice that is contiguous, so not copied, only when the
    batch has one row; the target `nll_loss` saves is then the padded storage, one int64
    more."""
    saved = {
        b: _trace("llama", method, checkpointing, micro_batch=b).activations_bytes
        for b in (1, 2, 3, 4)
    }
    per_sequence = saved[3] - saved[2]
    assert saved[4] - saved[3] == per_sequence
    shared = saved[2] - 2 * per_sequence
    head_dim = TINY["hidden_size"] // TINY["num_attention_heads"]
    cos_sin = 2 * SEQUENCE * head_dim * 2  # bf16
    assert shared == (cos_sin if checkpointing == "none" else 0) + 4
    assert saved[1] == per_sequence + shared + 8
    assert saved[2] != 2 * saved[1]


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("method", ["full", "lora"])
@pytest.mark.parametrize("checkpointing", ["none", "full"])
def test_a_warm_step_holds_the_optimizer_states_throughout(
    family: str, method: str, checkpointing: str
) -> None:
    """AdamW creates its states in the first step's `optimizer.step()`: before it, the first
    step's forward and backward run without them; a warm step's run with them, and peak higher
    by exactly their bytes. The optimizer steps themselves hold the same tensors."""
    result = _trace(family, method, checkpointing)
    first = {p.phase: p for p in result.first_step_phases}
    warm = {p.phase: p for p in result.step_phases}
    for phase in ("forward", "loss", "backward"):
        assert warm[phase].bytes == first[phase].bytes + result.optimizer_state_bytes
        assert (warm[phase].layer, warm[phase].op) == (first[phase].layer, first[phase].op)
    assert warm["optimizer_step"] == first["optimizer_step"]
    assert result.step_peak_bytes >= result.first_step_peak_bytes
    assert result.forward_backward_peak_bytes == max(
        first[p].bytes for p in ("forward", "loss", "backward")
    )


@pytest.mark.parametrize("optimizer", ["for-loop", "fused"])
def test_each_adamw_implementation_fake_and_real(optimizer: str) -> None:
    """The optimizer's step as torch runs it, each implementation (`foreach`, the default,
    above): fake equals real, the same states, and the temporaries differ: `foreach` makes
    a list of them for all the parameters at once (`_foreach_sqrt` of every exp_avg_sq), the
    for-loop one parameter's at a time, the fused kernel none but the new states."""

    def run(fake: bool) -> TraceResult:
        return trace_step(
            FAMILIES["llama"],
            micro_batch=MICRO_BATCH,
            sequence_length=SEQUENCE,
            optimizer=optimizer,  # type: ignore[arg-type]
            fake=fake,
        )

    fake, real = run(True), run(False)
    assert _figures(fake) == _figures(real)
    foreach = _trace("llama")
    assert real.optimizer_state_bytes == foreach.optimizer_state_bytes
    assert real.forward_backward_peak == foreach.forward_backward_peak
    step = {r: {p.phase: p.bytes for p in r.first_step_phases} for r in (real, foreach)}
    assert step[real]["optimizer_step"] < step[foreach]["optimizer_step"]
    states = real.parameter_bytes + real.gradient_bytes + real.optimizer_state_bytes
    assert step[real]["optimizer_step"] >= states


def test_the_pinned_versions_ran() -> None:
    versions = dict(_trace("llama", "lora").versions)
    assert versions["torch"].split("+")[0] == TORCH_VERSION
    assert versions["transformers"] == TRANSFORMERS_VERSION
    assert "peft" in versions


def test_lora_trains_only_its_adapters() -> None:
    full, lora = _trace("llama"), _trace("llama", "lora")
    assert lora.parameter_bytes > full.parameter_bytes  # the adapters come on top
    assert lora.gradient_bytes < full.gradient_bytes // 10
    assert lora.step_peak_bytes < full.step_peak_bytes


def _llama_parameters(config: dict[str, Any]) -> int:
    """Llama's parameters from its config (no bias, untied head, GQA)."""
    h, v, i, layers = (
        config["hidden_size"],
        config["vocab_size"],
        config["intermediate_size"],
        config["num_hidden_layers"],
    )
    kv = h // config["num_attention_heads"] * config["num_key_value_heads"]
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * i + 2 * h
    return 2 * v * h + layers * per_layer + h


def test_a_published_shape_fake_only() -> None:
    """Llama-3.1-8B at 4,096 tokens, micro-batch 1, bf16 weights, full fine-tuning, SDPA: about
    15 s on two cores, no memory allocated. What must hold, from the config alone: the model
    states, the float32 log-softmax of the logits kept for the loss, and where the steps peak."""
    config = json.loads((PRESETS / "llama-3.1-8b.json").read_text("utf-8"))
    tokens = 4096
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        started = time.perf_counter()
        result = trace_step(config, micro_batch=1, sequence_length=tokens)
        seconds = time.perf_counter() - started
    finally:
        torch.set_num_threads(threads)
    assert seconds < 90
    parameters = _llama_parameters(config)
    assert parameters == 8_030_261_248  # Meta's published count
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    rotary = 2 * (head_dim // 2) * 4  # inv_freq and original_inv_freq, float32
    assert result.parameter_bytes == 2 * parameters + rotary
    assert result.gradient_bytes == 2 * parameters
    tensors = 2 + 9 * config["num_hidden_layers"] + 1
    assert result.optimizer_state_bytes == 2 * 2 * parameters + 4 * tensors
    # The loss keeps a float32 log-softmax of the logits (S x V x 4 bytes), the rest is the
    # layers': between Korthikanti et al.'s 34 bytes per hidden value per token per layer and
    # 60 (Transformers' RMSNorm keeps a float32 copy of its input).
    log_softmax = tokens * config["vocab_size"] * 4
    per_unit = (result.activations_bytes - log_softmax) / (
        tokens * config["hidden_size"] * config["num_hidden_layers"]
    )
    assert 34 < per_unit < 60
    # The forward and backward peak at the start of the backward, in the loss's gradient; the
    # first step at its optimizer step (foreach AdamW's temporaries on top of the new states),
    # a warm one in its backward.
    assert result.forward_backward_peak.phase == "backward"
    assert result.forward_backward_peak.op == "aten::_log_softmax_backward_data"
    assert result.first_step_peak.phase == "optimizer_step"
    assert (result.peak_phase, result.peak_layer) == ("backward", "<model>")
    assert result.step_peak_bytes == (
        result.forward_backward_peak_bytes + result.optimizer_state_bytes
    )
