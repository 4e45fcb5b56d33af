"""Vectors for the sizer page's training mode: what `iteragpu train` answers (its request read by
iteragpu.cli.train_request, its plan by iteragpu.training.plan) for configs the page may be
given and the choices its training form offers; tests/js/sizer_training.test.mjs holds the
page's script to the same answers, or the same refusal.

The configs are every family's and wrapper's small config of the sizer's config vectors
(iteragpu.docs_tools.sizer_config_vectors: the minimal one, the head tied the other way), and
the published configs `iteragpu model` reads by name.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Final

# The training form's choices, as its fields hold them (text, as the reader types it).
REQUESTS: Final[tuple[dict[str, str], ...]] = (
    {"method": "full"},
    {"method": "lora"},
    {
        "method": "lora",
        "lora_r": "4",
        "lora_targets": "all-linear",
        "optimizer": "adafactor",
        "precision": "fp32",
    },
    {"method": "dora", "lora_r": "4", "lora_targets": "all-linear", "precision": "bf16-master"},
    {
        "method": "qlora",
        "lora_targets": "all-linear",
        "double_quant": "true",
        "optimizer": "adamw-8bit",
    },
    {"method": "qdora", "lora_r": "4", "lora_targets": "all-linear", "precision": "bf16-master"},
    {
        "method": "lora",
        "lora_targets": "q_proj, v_proj",
        "precision": "autocast-fp16",
        "optimizer": "sgd-momentum",
    },
    {"method": "full", "precision": "fp16", "optimizer": "sgd", "shard": "fsdp2", "gpus": "3"},
    {"method": "full", "precision": "bf16-master", "shard": "zero2", "gpus": "2"},
    {
        "method": "lora",
        "lora_targets": "all-linear",
        "shard": "zero3",
        "gpus": "4",
        "fused": "true",
    },
    {
        "method": "full",
        "precision": "autocast-bf16",
        "optimizer": "adamw-amsgrad",
        "shard": "zero1",
        "gpus": "2",
    },
)
# Refusals of the form's own values, on the tiny Llama.
BAD_REQUESTS: Final[tuple[dict[str, str], ...]] = (
    {"method": "lora", "lora_r": "0"},
    {"method": "lora", "lora_r": "1.5"},
    {"method": "lora", "lora_targets": "no_such_proj"},
    {"method": "lora", "lora_targets": " , "},
    {"method": "full", "shard": "fsdp2", "gpus": "0"},
    {"method": "full", "shard": "none", "gpus": "2"},
    {"method": "full", "shard": "fsdp2", "gpus": "5000"},
    {"method": "full", "optimizer": "adafactor", "fused": "true"},
    {"method": "full", "optimizer": "adafactor", "shard": "fsdp2", "gpus": "2"},
)
DEFAULT_REQUEST: Final = {
    "method": "full",
    "precision": "bf16",
    "optimizer": "adamw",
    "lora_r": "8",
    "lora_targets": "",
    "double_quant": "false",
    "fused": "false",
    "shard": "none",
    "gpus": "1",
}
TINY_LLAMA: Final = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}


def request(form: dict[str, str]) -> Any:
    """The TrainRequest of the form's values, read as iteragpu.cli.train_request reads the
    command's options (the core's grammar; this layer may not import the CLI's)."""
    from iteragpu.core.numbers import InputError, parse_count
    from iteragpu.training.records import TrainRequest

    values = {**DEFAULT_REQUEST, **form}
    targets = None
    if values["lora_targets"]:
        names = tuple(n.strip() for n in values["lora_targets"].split(",") if n.strip())
        if not names:
            raise InputError("{what} names no module", "no_names", what="--lora-targets")
        targets = names
    return TrainRequest(
        method=values["method"],  # type: ignore[arg-type]
        precision=values["precision"],  # type: ignore[arg-type]
        optimizer=values["optimizer"],  # type: ignore[arg-type]
        fused=values["fused"] == "true",
        lora_r=parse_count(values["lora_r"], "--lora-r", maximum=65_536),
        lora_targets=targets,
        double_quant=values["double_quant"] == "true",
        shard=values["shard"],  # type: ignore[arg-type]
        gpus=parse_count(values["gpus"], "--gpus", maximum=100_000),
    )


def answer(path: Path, form: dict[str, str]) -> dict[str, Any]:
    """What `iteragpu train` answers for the config at `path` and the form's values: the plan's
    figures, or the refusal's reason."""
    from iteragpu.core.numbers import InputError
    from iteragpu.training.plan import payload, plan_training

    try:
        data = payload(plan_training(path, request(form)))
    except InputError as error:
        return {"valid": False, "reason": error.reason}
    keys = (
        "parameters",
        "trainable_parameters",
        "trainable_tensors",
        "weights_bytes",
        "gradients_bytes",
        "optimizer_state_bytes",
        "optimizer_host_bytes",
        "master_weights_bytes",
        "master_gradients_bytes",
        "model_states_bytes",
        "first_to_fill",
    )
    return {
        "valid": True,
        **{key: data[key] for key in keys},
        "weights": [
            {k: w[k] for k in ("role", "tensors", "elements", "trainable", "weights_bytes")}
            for w in data["weights"]
        ],
        "ranks": [
            {k: r[k] for k in ("rank", "model_states_bytes", "padding_bytes")}
            for r in data["ranks"]
        ],
    }


def configs() -> dict[str, str]:
    """The configs' texts, by name."""
    from iteragpu.docs_tools.sizer_config_vectors import family_configs, wrapper_configs
    from iteragpu.models import towers
    from iteragpu.models.presets import presets
    from iteragpu.models.recipe import recipe_types

    texts = {"tiny-llama": json.dumps(TINY_LLAMA)}
    for model_type in recipe_types():
        found = family_configs(model_type)
        for suffix in ("minimal", "tied-flipped"):
            name = f"family-{model_type}-{suffix}"
            texts[name] = json.dumps(found[name])
    for wrapper_type in towers.wrapper_types():
        found = wrapper_configs(wrapper_type)
        name = next(n for n in found if n.endswith("minimal"))
        texts[name] = json.dumps(found[name])
    for preset in presets():
        texts[f"preset-{preset.name}"] = preset.config_path.read_text("utf-8")
    return texts


def training_vectors() -> list[dict[str, Any]]:
    """Every config with every request, then the bad requests on the tiny Llama."""
    vectors = []
    with tempfile.TemporaryDirectory() as folder:
        for index, (name, text) in enumerate(configs().items()):
            path = Path(folder) / f"{index}.json"
            path.write_text(text, "utf-8")
            requests = REQUESTS if name != "tiny-llama" else (*REQUESTS, *BAD_REQUESTS)
            for form in requests:
                vectors.append(
                    {
                        "name": name,
                        "text": text,
                        "form": {**DEFAULT_REQUEST, **form},
                        "expected": answer(path, form),
                    }
                )
    return vectors
