"""What the batch and accumulation guide (docs/*/docs/batch-accumulation.md) states about gradient
accumulation, against the real thing: a tiny Llama built with Transformers (no download), its
gradients computed by torch 2.13 on CPU.

- Accumulating micro-batches writes into the same `.grad` tensors: no gradient storage is added
  per micro-batch (the guide: accumulation adds no memory in plain PyTorch).
- With micro-batches of equal token counts, each loss divided by the number of accumulation
  steps, the accumulated gradient is the gradient of the large batch (same update).
- With unequal token counts, dividing each micro-batch's token mean by the number of steps is
  not the large batch's gradient; dividing the summed loss by the tokens of the whole update (what
  Transformers' Trainer does with `num_items_in_batch`) is.

Run by `nox -s training` (marker `training`).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = {
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
}
IGNORE = -100  # the label Transformers' causal LM loss ignores (padding)


def _model() -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(**TINY)
    model = transformers.LlamaForCausalLM(config).float()
    model.train()
    return model


def _token_loss(model: Any, ids: Any, labels: Any, reduction: str) -> Any:
    """The causal LM loss over the label tokens (shifted as the model shifts them)."""
    logits = model(input_ids=ids).logits[:, :-1, :]
    target = labels[:, 1:]
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)),
        target.reshape(-1),
        ignore_index=IGNORE,
        reduction=reduction,
    )


def _grads(model: Any) -> list[Any]:
    return [p.grad.detach().clone() for p in model.parameters()]


def _batch(sequences: int, length: int, seed: int) -> Any:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, TINY["vocab_size"], (sequences, length), generator=generator)


def test_accumulation_writes_into_the_same_gradient_tensors() -> None:
    model = _model()
    ids = _batch(8, 16, 1)
    seen = []
    for micro in ids.split(2):
        (_token_loss(model, micro, micro, "mean") / 4).backward()
        seen.append(
            [
                (p.grad.data_ptr(), p.grad.numel() * p.grad.element_size())
                for p in model.parameters()
            ]
        )
    assert all(step == seen[0] for step in seen)  # same storage, same bytes, every micro-step


def test_equal_micro_batches_accumulate_to_the_large_batch_gradient() -> None:
    ids = _batch(8, 16, 2)
    large = _model()
    _token_loss(large, ids, ids, "mean").backward()
    accumulated = _model()
    steps = 4
    for micro in ids.split(8 // steps):
        (_token_loss(accumulated, micro, micro, "mean") / steps).backward()
    for whole, summed in zip(_grads(large), _grads(accumulated), strict=True):
        torch.testing.assert_close(summed, whole, rtol=1e-4, atol=1e-6)


def test_unequal_token_counts_need_the_tokens_of_the_whole_update() -> None:
    ids = _batch(4, 16, 3)
    labels = ids.clone()
    labels[2:, 6:] = IGNORE  # the second micro-batch has fewer label tokens (padding)
    large = _model()
    _token_loss(large, ids, labels, "mean").backward()
    reference = _grads(large)

    per_micro_mean = _model()
    for micro_ids, micro_labels in zip(ids.split(2), labels.split(2), strict=True):
        (_token_loss(per_micro_mean, micro_ids, micro_labels, "mean") / 2).backward()
    differs = any(
        not torch.allclose(got, want, rtol=1e-4, atol=1e-6)
        for got, want in zip(_grads(per_micro_mean), reference, strict=True)
    )
    assert differs

    tokens = int((labels[:, 1:] != IGNORE).sum())  # every label token of the update
    whole_update = _model()
    for micro_ids, micro_labels in zip(ids.split(2), labels.split(2), strict=True):
        (_token_loss(whole_update, micro_ids, micro_labels, "sum") / tokens).backward()
    for got, want in zip(_grads(whole_update), reference, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
