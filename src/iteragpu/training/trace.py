"""The tracer: one real training step of a Transformers causal LM run under PyTorch's
`FakeTensorMode`, and what PyTorch would hold during it, from PyTorch's own accounting.

This is the truth the torch-free activation rules of issue 36 are held to. It needs torch and
transformers (peft for LoRA) and imports them inside its functions only: nothing of the runtime
imports this module, and it imports without torch (tests/test_wheel.py imports every module).
Written against torch 2.13.0 and transformers 5.24.0 (peft 0.21.2); `trace_step` reports the
versions it ran with.

How it counts (the same code counts a fake run and a real CPU run, which
tests/training/test_trace_torch.py holds equal to the byte):

- Live bytes: a `TorchDispatchMode` (torch/utils/_python_dispatch.py) sees every aten op's
  outputs, forward, backward and optimizer alike (on CPU the autograd engine runs the backward
  on the calling thread, and the mode stack is thread state it carries). Each output's
  `untyped_storage()` is counted once, by identity, `nbytes()` bytes, until a weakref callback
  on the storage says it is freed: since torch 2.1 a storage keeps one Python object for its
  life (`c10::impl::PyObjectSlot` in c10/core/StorageImpl.h), fake storages included. The
  parameters, buffers and the batch are counted from the start. The peak is read after each
  op's outputs are counted, while its inputs are still alive, as an allocator sees it. What a
  kernel allocates and frees inside itself (a workspace) is not an output and is not seen.
- Saved for backward: autograd's `torch.autograd.graph.saved_tensors_hooks` (the pack hook
  returns the tensor itself, so what autograd keeps is unchanged) records each saved tensor's
  storage; `activations_bytes` is those still alive right after the loss is computed,
  parameters and buffers excluded, each storage once. Under non-reentrant checkpointing the
  checkpoint's own hook (torch/utils/checkpoint.py `_checkpoint_hook`) replaces ours inside a
  layer, so only what it keeps is counted: the layer's inputs, which `_CheckpointFrame.save_inputs`
  saves with `_make_saved_tensor` (a SavedVariable, which runs the outer default hooks).
  Tensors the checkpoint keeps only through its closure (the keyword arguments of the layer, e.g.
  the rotary cos/sin shared by every layer) are not saved tensors; `retained_bytes` (everything
  alive at the loss but parameters, buffers, the batch and the loss) shows them.
- Phase and layer: module forward pre/post hooks give the module running in a forward (and in
  a checkpoint's recompute); in the backward, a tensor hook on each module's outputs says its
  backward started and one on its inputs that it ended. The loss phase starts when the output
  head's forward ends (Transformers computes the loss inside the model's forward,
  `LlamaForCausalLM.forward` -> `self.loss_function`, loss/loss_utils.py `ForCausalLMLoss`).

The step, as a Trainer runs it: `loss = model(input_ids=..., labels=...).loss` (the output's
logits dropped at once, as `Trainer.compute_loss` does), `loss.backward()`,
`optimizer.step()`, `optimizer.zero_grad(set_to_none=True)`; twice: AdamW creates its states in
the first step (`_init_group`), so the first step's peak is reported apart from the warm second.

Settings and the traps met:

- No attention mask is passed: an unpadded batch. Transformers skips an all-ones mask
  (masking_utils.py `_ignore_causal_mask_sdpa`: `fast_all(padding_mask)`) and SDPA runs with
  `is_causal=True` and `enable_gqa` (integrations/sdpa_attention.py `use_gqa_in_sdpa`: no mask).
  A fake mask cannot be read: `is_tracing(padding_mask)` (utils/import_utils.py, true for a
  `FakeTensor`) makes it build a 4-D mask, and with a mask SDPA repeats K and V to every head
  (`repeat_kv`), which a real run does not do. Without a mask both runs take the real path.
- The model is built inside the fake mode at its dtype (`from_config(config, dtype=...)`), with
  Transformers' random init: moving fake parameters with `.to()` is avoided altogether.
- Checkpointing `full`: `model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=
  {"use_reentrant": False})`. At 5.24 `gradient_checkpointing_enable` is a deprecated alias of
  `activation_checkpointing_enable` (modeling_utils.py), whose default is already
  `{"use_reentrant": False}` (non-reentrant: torch's `_checkpoint_without_reentrant_generator`);
  it checkpoints each `GradientCheckpointingLayer`'s `forward` (modeling_layers.py, hooks stay
  outside) and, for a model read from `input_ids`, makes the embeddings' output require grad
  (`enable_input_require_grads`), which changes nothing under full fine-tuning.
- LoRA: `peft.get_peft_model(model, LoraConfig(task_type="CAUSAL_LM", r=...))`, PEFT's default
  targets for the family; PEFT keeps adapters in float32 on a 16-bit base
  (`autocast_adapter_dtype=True`). The frozen parameters are counted as live bytes and excluded
  from the activations like any parameter; only trainable ones get gradients and AdamW states.
- The optimizer: AdamW, `foreach` by default (what torch picks on CUDA,
  torch/optim/optimizer.py `_default_to_fused_or_foreach`; on a CPU it would pick the for-loop).
  Its `step` counters are 4-byte tensors on the parameters' device here; on a GPU, without
  `fused`/`capturable`, they live in host memory (torch/optim/adam.py `_init_group`): 4 bytes
  per trainable tensor counted here that a GPU would not hold.
"""

from __future__ import annotations

import contextlib
import importlib
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Final, Literal

from iteragpu.core.records import Record

Checkpointing = Literal["none", "full"]
Attention = Literal["sdpa", "eager"]
TracePrecision = Literal["bf16", "fp32"]
TraceMethod = Literal["full", "lora"]
OptimizerImpl = Literal["foreach", "for-loop", "fused"]

CHECKPOINTING: Final = ("none", "full")
ATTENTIONS: Final = ("sdpa", "eager")
TRACE_PRECISIONS: Final = ("bf16", "fp32")
TRACE_METHODS: Final = ("full", "lora")
TORCH_VERSION: Final = "2.13.0"
TRANSFORMERS_VERSION: Final = "5.24.0"


class Peak(Record):
    """The most live tensor bytes seen over some phases, and where it happened."""

    bytes: int
    phase: str  # forward, loss, backward, optimizer_step
    layer: str | None  # the module running then, by qualified name; None when none is
    op: str  # the aten op whose outputs made the peak
    shape: tuple[int, ...]  # the shape of that op's first output


class TraceResult(Record):
    """What PyTorch holds during one training step (the first and a warm second one)."""

    activations_bytes: int  # saved for backward, alive at the loss, parameters excluded
    retained_bytes: int  # all alive at the loss but parameters, buffers, the batch, the loss
    forward_backward_peak_bytes: int  # first step, forward to backward, no optimizer state
    first_step_peak_bytes: int  # the first step, the optimizer's step included
    step_peak_bytes: int  # a warm step (the second), optimizer states alive throughout
    peak_phase: str  # of the warm step's peak
    peak_layer: str | None
    forward_backward_peak: Peak
    first_step_peak: Peak
    step_peak: Peak
    first_step_phases: tuple[Peak, ...]  # each phase's own peak in the first step, in order
    step_phases: tuple[Peak, ...]  # the same for the warm step
    parameter_bytes: int  # parameters and buffers, each storage once
    gradient_bytes: int  # the `.grad` storages after the first backward
    optimizer_state_bytes: int  # the optimizer's state tensors after the first step
    batch_bytes: int  # input_ids and labels
    fake: bool
    seconds: float
    versions: tuple[tuple[str, str], ...]  # (package, version) that ran it


def _module(name: str) -> Any:
    """torch, transformers or peft, imported here so that the runtime never loads them."""
    return importlib.import_module(name)


class _Counter:
    """Live storages, each once, with the peak; plus the current phase and layer."""

    def __init__(self) -> None:
        self.live: dict[int, tuple[Any, int]] = {}  # id(storage) -> (weakref, nbytes)
        self.current = 0
        self.phase: str = "setup"
        self.forward_stack: list[str] = []
        self.backward_stack: list[str] = []
        self.in_backward = False
        self.peaks: dict[str, Peak] = {}  # per phase: the highest live bytes seen in it

    def _freed(self, key: int) -> Callable[[Any], None]:
        def callback(_: Any) -> None:
            entry = self.live.pop(key, None)
            if entry is not None:
                self.current -= entry[1]

        return callback

    def track(self, tensor: Any) -> None:
        storage = tensor.untyped_storage()
        key = id(storage)
        nbytes = int(storage.nbytes())
        entry = self.live.get(key)
        if entry is None:
            self.live[key] = (weakref.ref(storage, self._freed(key)), nbytes)
            self.current += nbytes
        elif entry[1] != nbytes:  # resized in place
            self.current += nbytes - entry[1]
            self.live[key] = (entry[0], nbytes)

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.in_backward = phase == "backward"
        self.forward_stack.clear()
        self.backward_stack.clear()

    def layer(self) -> str | None:
        if self.forward_stack:
            return self.forward_stack[-1]
        if self.in_backward and self.backward_stack:
            return self.backward_stack[-1]
        return None

    def observe(self, op: str, shape: tuple[int, ...]) -> None:
        best = self.peaks.get(self.phase)
        if best is None or self.current > best.bytes:
            self.peaks[self.phase] = Peak(self.current, self.phase, self.layer(), op, shape)

    def enter_backward(self, name: str) -> None:
        """A module's backward starts: the stack keeps only its ancestors, then it. A
        checkpoint's recompute that stopped early (torch/utils/checkpoint.py
        `_StopRecomputationError`) never ran its modules' post hooks: its forward stack is
        dropped here, once autograd has gone on."""
        self.forward_stack.clear()
        while self.backward_stack and not name.startswith(self.backward_stack[-1] + "."):
            self.backward_stack.pop()
        self.backward_stack.append(name)

    def exit_backward(self, name: str) -> None:
        self.forward_stack.clear()
        if name in self.backward_stack:
            del self.backward_stack[self.backward_stack.index(name) :]


def _tensors(value: Any, torch: Any) -> Iterator[Any]:
    leaves, _ = torch.utils._pytree.tree_flatten(value)
    yield from (leaf for leaf in leaves if isinstance(leaf, torch.Tensor))


def _dispatch_mode(counter: _Counter, torch: Any) -> Any:
    base: Any = torch.utils._python_dispatch.TorchDispatchMode

    class CountingMode(base):  # type: ignore[misc]
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            out = func(*args, **(kwargs or {}))
            first: tuple[int, ...] = ()
            for index, tensor in enumerate(_tensors(out, torch)):
                if index == 0:
                    first = tuple(int(n) for n in tensor.shape)
                counter.track(tensor)
            counter.observe(str(func.name()), first)
            return out

    return CountingMode()


def _calling(method: Callable[[str], None], label: str) -> Callable[[Any], None]:
    """A tensor hook that calls `method(label)` and leaves the gradient as it is."""

    def hook(_gradient: Any) -> None:
        method(label)

    return hook


def _module_hooks(model: Any, counter: _Counter, torch: Any) -> list[Any]:
    """Forward pre/post hooks naming the running module; tensor hooks for the backward."""
    handles = []
    head = model.get_output_embeddings()

    def hook_grads(value: Any, callback: Callable[[Any], None]) -> None:
        for tensor in _tensors(value, torch):
            if tensor.requires_grad and torch.is_grad_enabled():
                tensor.register_hook(callback)

    for name, module in model.named_modules():
        label = name or "<model>"

        def pre(_module: Any, args: Any, kwargs: Any, label: str = label) -> None:
            counter.forward_stack.append(label)
            if not counter.in_backward:
                # the backward's stack on the inputs: done when their gradient is
                hook_grads((args, kwargs), _calling(counter.exit_backward, label))

        def post(module: Any, _args: Any, _kwargs: Any, output: Any, label: str = label) -> None:
            if counter.forward_stack and counter.forward_stack[-1] == label:
                counter.forward_stack.pop()
            if counter.in_backward:
                return
            hook_grads(output, _calling(counter.enter_backward, label))
            if module is head and counter.phase == "forward":
                counter.phase = "loss"

        handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(module.register_forward_hook(post, with_kwargs=True))
    return handles


def _storages(tensors: Iterator[Any]) -> dict[int, int]:
    found: dict[int, int] = {}
    for tensor in tensors:
        storage = tensor.untyped_storage()
        found[id(storage)] = int(storage.nbytes())
    return found


def _config(config: Any, transformers: Any) -> Any:
    """An AutoConfig from a config object, a dict or a config.json path."""
    if isinstance(config, dict):
        values = dict(config)
        return transformers.AutoConfig.for_model(values.pop("model_type"), **values)
    if isinstance(config, str | bytes) or hasattr(config, "__fspath__"):
        return transformers.AutoConfig.from_pretrained(config)
    return config


def build_model(
    config: Any,
    *,
    precision: TracePrecision = "bf16",
    attention: Attention = "sdpa",
    method: TraceMethod = "full",
    checkpointing: Checkpointing = "none",
    lora_r: int = 8,
    seed: int = 0,
) -> Any:
    """The model as trained: random init from the config at the precision's dtype, in training
    mode, the attention kernel set, LoRA and checkpointing applied. Call it inside a
    `FakeTensorMode` for a fake model (nothing allocated), outside for a real one."""
    torch = _module("torch")
    transformers = _module("transformers")
    if precision not in TRACE_PRECISIONS or attention not in ATTENTIONS:
        raise ValueError(f"precision {precision!r} / attention {attention!r} not traced")
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    config = _config(config, transformers)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(
        config, dtype=dtype, attn_implementation=attention
    )
    model.config.use_cache = False
    if checkpointing == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    elif checkpointing != "none":
        raise ValueError(f"checkpointing {checkpointing!r} not traced")
    if method == "lora":
        peft = _module("peft")
        model = peft.get_peft_model(model, peft.LoraConfig(task_type="CAUSAL_LM", r=lora_r))
    elif method != "full":
        raise ValueError(f"method {method!r} not traced")
    model.train()
    return model


def _optimizer(model: Any, impl: OptimizerImpl, torch: Any) -> Any:
    params = [p for p in model.parameters() if p.requires_grad]
    flags = {"foreach": impl == "foreach", "fused": impl == "fused"}
    return torch.optim.AdamW(params, lr=1e-4, **flags)


def trace_step(
    config: Any,
    *,
    micro_batch: int = 1,
    sequence_length: int = 512,
    checkpointing: Checkpointing = "none",
    attention: Attention = "sdpa",
    precision: TracePrecision = "bf16",
    method: TraceMethod = "full",
    lora_r: int = 8,
    optimizer: OptimizerImpl = "foreach",
    fake: bool = True,
    seed: int = 0,
) -> TraceResult:
    """Two training steps of the model `config` describes (an AutoConfig, a dict with its
    `model_type`, or a config.json path), fake by default (nothing allocated, device `cpu`),
    or real on the CPU with `fake=False`; counted the same way (module docstring)."""
    torch = _module("torch")
    fake_tensor = _module("torch._subclasses.fake_tensor")
    started = time.perf_counter()
    counter = _Counter()
    mode = fake_tensor.FakeTensorMode() if fake else contextlib.nullcontext()
    with mode, contextlib.ExitStack() as patches:
        if fake:
            patches.enter_context(_unpacked_batch())
        with _swappable_parameters(mode) if fake else contextlib.nullcontext():
            model = build_model(
                config,
                precision=precision,
                attention=attention,
                method=method,
                checkpointing=checkpointing,
                lora_r=lora_r,
                seed=seed,
            )
        states = list(model.parameters()) + list(model.buffers())
        state_storages = _storages(iter(states))
        for tensor in states:
            counter.track(tensor)
        vocab = int(model.config.get_text_config().vocab_size)
        generator = torch.Generator().manual_seed(seed)
        input_ids = torch.randint(0, vocab, (micro_batch, sequence_length), generator=generator)
        labels = input_ids.clone()
        batch = _storages(iter((input_ids, labels)))
        counter.track(input_ids)
        counter.track(labels)
        opt = _optimizer(model, optimizer, torch)
        handles = _module_hooks(model, counter, torch)
        saved: dict[int, tuple[Any, int]] = {}

        def pack(tensor: Any) -> Any:
            storage = tensor.untyped_storage()
            entry = saved.get(id(storage))
            if entry is None or entry[0]() is None:  # (an id a freed storage had is reused)
                saved[id(storage)] = (weakref.ref(storage), int(storage.nbytes()))
            return tensor

        activations = retained = gradient_bytes = state_bytes = 0
        peaks: dict[int, dict[str, Peak]] = {}
        try:
            with _dispatch_mode(counter, torch):
                for step in (1, 2):
                    counter.enter("forward")
                    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                        loss = model(input_ids=input_ids, labels=labels).loss
                    if step == 1:
                        alive = {k: n for k, (ref, n) in saved.items() if ref() is not None}
                        activations = sum(n for k, n in alive.items() if k not in state_storages)
                        skip = {**state_storages, **batch, **_storages(iter((loss,)))}
                        retained = sum(n for k, (_, n) in counter.live.items() if k not in skip)
                    saved.clear()
                    counter.enter("backward")
                    loss.backward()
                    del loss
                    if step == 1:  # (no list of the gradients: it would outlive them)
                        gradient_bytes = sum(
                            _storages(
                                p.grad for p in model.parameters() if p.grad is not None
                            ).values()
                        )
                    counter.enter("optimizer_step")
                    opt.step()
                    if step == 1:
                        state_bytes = sum(
                            _storages(
                                t
                                for state in opt.state.values()
                                for t in state.values()
                                if isinstance(t, torch.Tensor)
                            ).values()
                        )
                    peaks[step] = counter.peaks
                    counter.enter("zero_grad")
                    opt.zero_grad(set_to_none=True)
                    counter.peaks = {}
        finally:
            for handle in handles:
                handle.remove()
    first, warm = peaks[1], peaks[2]
    forward_backward = _best(first, ("forward", "loss", "backward"))
    first_step = _best(first, ("forward", "loss", "backward", "optimizer_step"))
    step_peak = _best(warm, ("forward", "loss", "backward", "optimizer_step"))
    versions: tuple[tuple[str, str], ...] = (
        ("torch", str(torch.__version__)),
        ("transformers", _version("transformers")),
    )
    if method == "lora":
        versions += (("peft", _version("peft")),)
    return TraceResult(
        activations_bytes=activations,
        retained_bytes=retained,
        forward_backward_peak_bytes=forward_backward.bytes,
        first_step_peak_bytes=first_step.bytes,
        step_peak_bytes=step_peak.bytes,
        peak_phase=step_peak.phase,
        peak_layer=step_peak.layer,
        forward_backward_peak=forward_backward,
        first_step_peak=first_step,
        step_peak=step_peak,
        first_step_phases=_in_order(first),
        step_phases=_in_order(warm),
        parameter_bytes=sum(state_storages.values()),
        gradient_bytes=gradient_bytes,
        optimizer_state_bytes=state_bytes,
        batch_bytes=sum(batch.values()),
        fake=fake,
        seconds=time.perf_counter() - started,
        versions=versions,
    )


def _best(peaks: dict[str, Peak], phases: tuple[str, ...]) -> Peak:
    return max((peaks[p] for p in phases if p in peaks), key=lambda peak: peak.bytes)


def _in_order(peaks: dict[str, Peak]) -> tuple[Peak, ...]:
    order = ("forward", "loss", "backward", "optimizer_step")
    return tuple(peaks[p] for p in order if p in peaks)


def _version(name: str) -> str:
    return str(getattr(_module(name), "__version__", "?"))


@contextlib.contextmanager
def _swappable_parameters(mode: Any) -> Iterator[None]:
    """Let `Module.to()` work on fake parameters while the model is built.

    `Module._apply` (torch/nn/modules/module.py) always swaps a `FakeTensor` parameter with
    `torch.utils.swap_tensors`, which refuses a tensor that has a weakref; the fake mode's
    `MetaConverter.tensor_memo` (torch/_subclasses/meta_utils.py), a WeakValueDictionary, holds
    one on every fake tensor it made, so PEFT's `_move_adapter_to_device_of_base_layer` and
    `cast_adapter_dtype` (peft/tuners/tuners_utils.py) fail with "Couldn't swap Linear.weight".
    The build runs with a plain dict as the memo (strong references, no weakref); the fake
    mode's own memo is put back before the step, so what the build memoized is released."""
    converter = mode.fake_tensor_converter.meta_converter
    memo = converter.tensor_memo
    converter.tensor_memo = {}
    try:
        yield
    finally:
        converter.tensor_memo = memo


@contextlib.contextmanager
def _unpacked_batch() -> Iterator[None]:
    """Under fake tensors, tell Transformers the batch is not packed, as it finds for real.

    With no attention mask, `_preprocess_mask_arguments` (masking_utils.py) looks for packed
    sequences in the position ids (`find_packed_sequence_indices`): for the model's own
    `arange` positions, one sequence a row, it returns None and SDPA runs with `is_causal` and
    `enable_gqa`. It cannot read a fake tensor (`is_tracing` is true for a FakeTensor) and
    returns the packed-sequence mask, so a 4-D mask is built and K and V are repeated to every
    head (`repeat_kv`, integrations/sdpa_attention.py). The tracer passes no position ids, so
    None is the real answer."""
    masking = _module("transformers.masking_utils")
    original = masking.find_packed_sequence_indices
    masking.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        masking.find_packed_sequence_indices = original
