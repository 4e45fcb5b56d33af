"""One real optimizer step on tiny random models of families beyond Llama: a MoE whose experts
PEFT wraps as parameters (Mixtral, all-linear: the router's and the fused experts' LoRA, the
fused pair at twice the rank), a hybrid state family trained in full (Jamba: Mamba mixers,
attention, 3-D experts, under Adafactor's factored states), biases trained with LoRA (Qwen2,
`bias="all"`), and GPT-2's Conv1D under DoRA. Two micro-steps of gradient accumulation, then one
step; every trainable parameter's `.grad` and `optimizer.state` tensor compared byte for byte
(shape, dtype, bytes) with what iteragpu.training states for the tensor `train_tensors` names,
and every parameter's name, shape, dtype and trainability with `train_tensors`. Run by
`nox -s training` (marker `training`).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from test_states_torch import _bytes, _dtype, _optimizer, _stated

from iteragpu.models.config import parse_config
from iteragpu.training.adapters import train_tensors
from iteragpu.training.records import TrainRequest
from iteragpu.training.states import state_items, state_totals, weight_dtype

pytestmark = pytest.mark.training

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
transformers.utils.logging.set_verbosity_error()

VOCAB = 128
SMALL = {"vocab_size": VOCAB, "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2}
RUNS: list[tuple[str, dict[str, Any], dict[str, Any] | None, TrainRequest]] = [
    (
        "mixtral",
        {**SMALL, "num_hidden_layers": 2, "intermediate_size": 48, "num_local_experts": 4},
        {"r": 2, "target_modules": "all-linear"},
        TrainRequest(method="lora", lora_r=2, lora_targets=("all-linear",)),
    ),
    (
        "jamba",
        {
            **SMALL,
            "num_hidden_layers": 2,
            "intermediate_size": 48,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "attn_layer_period": 2,
            "attn_layer_offset": 1,
            "expert_layer_period": 2,
            "expert_layer_offset": 1,
            "mamba_d_state": 8,
            "mamba_expand": 2,
            "use_mamba_kernels": False,
        },
        None,
        TrainRequest(method="full", precision="fp32", optimizer="adafactor"),
    ),
    (
        "qwen2",
        {**SMALL, "num_hidden_layers": 2, "intermediate_size": 48},
        {"r": 4, "target_modules": "all-linear", "bias": "all"},
        TrainRequest(
            method="lora", precision="fp32", lora_r=4, lora_targets=("all-linear",), lora_bias="all"
        ),
    ),
    (
        "gpt2",
        {"vocab_size": VOCAB, "n_embd": 32, "n_head": 4, "n_layer": 2, "n_positions": 64},
        {"r": 4, "target_modules": "all-linear", "use_dora": True},
        TrainRequest(method="dora", lora_r=4, lora_targets=("all-linear",), optimizer="adamw"),
    ),
]


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _run(
    model_type: str, settings: dict[str, Any], lora: dict[str, Any] | None, request: TrainRequest
) -> tuple[Any, Any, dict[str, Any]]:
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(model_type, **settings)
    dtype = getattr(torch, weight_dtype(request.precision))
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
    if lora is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = peft.get_peft_model(model, peft.LoraConfig(**lora))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = _optimizer(request.optimizer, params)
    generator = torch.Generator().manual_seed(0)
    for _micro in range(2):
        ids = torch.randint(0, VOCAB, (2, 8), generator=generator)
        (model(input_ids=ids, labels=ids).loss / 2).backward()
    assert len(optimizer.state) == 0
    optimizer.step()
    return config, model, {id(p): optimizer.state[p] for p in params}


@pytest.mark.parametrize("run", RUNS, ids=[r[0] for r in RUNS])
def test_each_state_byte_of_a_family(run: tuple[Any, ...]) -> None:
    model_type, settings, lora, request = run
    config, model, states = _run(model_type, settings, lora, request)
    tensors = {t.name: t for t in train_tensors(parse_config(config.to_dict()), request)}
    named = {n.removeprefix("base_model.model."): p for n, p in model.named_parameters()}
    assert tensors.keys() == named.keys()
    measured_total = 0
    for name, p in named.items():
        tensor = tensors[name]
        assert (tensor.shape, tensor.dtype, tensor.trainable) == (
            tuple(p.shape),
            _dtype(p),
            p.requires_grad,
        ), name
        if not p.requires_grad:
            assert p.grad is None
            continue
        # Every trainable tensor took part in the loss: a gradient and states for each.
        measured = {("gradient", "grad"): (tuple(p.grad.shape), _dtype(p.grad), _bytes(p.grad))}
        for key, value in states[id(p)].items():
            measured[("optimizer", key)] = (tuple(value.shape), _dtype(value), _bytes(value))
        assert measured == _stated(state_items(tensor, request)), name
        measured_total += sum(b for _, _, b in measured.values())
    totals = state_totals(tensors.values(), request)
    assert measured_total == totals.gpu_bytes + totals.optimizer_host_bytes
