"""A decoder's parameter count from its config, for the families of `config.FAMILIES`.

The count is the one Transformers 5.24 builds (the proof tests compare it with
`sum(p.numel() for p in model.parameters())`): embeddings, then per layer the attention
projections (with their biases where the family or `attention_bias` has them), the MLP or the
mixture of experts, and the norms; then the final norm and the output head, which tied
embeddings share with the input embeddings, so it counts once. A multimodal model's vision
encoder and projector are counted where its wrapper has a recipe (iteragpu.models.towers);
otherwise they are not (the caller says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iteragpu.models.config import MlaConfig, ModelConfig
from iteragpu.models.errors import ConfigError

if TYPE_CHECKING:
    from iteragpu.models.recipe import Counts

GATED_MLP_MATRICES = 3  # gate, up and down projections


def recipe_counts(config: ModelConfig) -> Counts | None:
    """The counts of the family's recipe (iteragpu.models.recipe), when it has one."""
    from iteragpu.models.recipe import count, recipe

    described = recipe(config.model_type)
    if described is None or config.values is None:
        return None
    wrapped = None
    if config.is_multimodal:
        from iteragpu.models.towers import wrapper_counts

        wrapped = wrapper_counts(config)
    if wrapped is None:
        return count(described, described.scope(config.values, "config.json"), config.layer_kinds)
    # A multimodal wrapper with a recipe (iteragpu.models.towers): the head tied by its rule,
    # and its vision tower and projector added, all active (every image goes through them).
    values = {**config.values, "tie_word_embeddings": wrapped.tied}
    counts = count(described, described.scope(values, "config.json"), config.layer_kinds)
    kept = wrapped.float32
    counts.add(wrapped.parameters - kept, wrapped.parameters - kept, False)
    counts.add(kept, kept, True)
    return counts


def active_parameters(config: ModelConfig) -> int | None:
    """Parameters used per token: the routed experts not chosen left out; None where the
    family has no recipe to say which parameters are routed experts."""
    counts = recipe_counts(config)
    return None if counts is None else counts.active


def float32_parameters(config: ModelConfig) -> int:
    """Parameters Transformers keeps in float32 whatever the model's dtype (0 without a recipe)."""
    counts = recipe_counts(config)
    return 0 if counts is None else counts.float32


def count_parameters(config: ModelConfig) -> int:
    """Parameters of the decoder (embeddings, layers, final norm, output head)."""
    counts = recipe_counts(config)
    if counts is not None:
        return counts.parameters
    vocab = _required(config.vocab_size, "vocab_size")
    hidden = config.hidden_size
    embeddings = vocab * hidden
    head = 0 if config.tie_word_embeddings else vocab * hidden
    layers = sum(_layer(config, index) for index in range(config.layers))
    return embeddings + layers + hidden + head


def _layer(config: ModelConfig, index: int) -> int:
    hidden = config.hidden_size
    family = config.family
    norms = family.norms_per_layer * hidden
    if config.mla is not None:
        return _mla_attention(config, config.mla) + _moe_or_mlp(config, config.mla, index) + norms
    return (
        _attention(config)
        + _mlp(config, _required(config.intermediate_size, "intermediate_size"))
        + norms
    )


def _attention(config: ModelConfig) -> int:
    hidden, head_dim = config.hidden_size, config.head_dim
    q_width, kv_width = config.heads * head_dim, config.kv_heads * head_dim
    weights = hidden * (q_width + 2 * kv_width) + q_width * hidden
    biases = 0
    if config.family.qkv_bias or config.attention_bias:
        biases += q_width + 2 * kv_width
    if config.attention_bias:
        biases += hidden  # o_proj's bias (Llama's attention_bias; Qwen2 has none there)
    qk_norms = 2 * head_dim if config.family.qk_norm else 0
    return weights + biases + qk_norms


def _mlp(config: ModelConfig, intermediate: int) -> int:
    hidden = config.hidden_size
    biases = (2 * intermediate + hidden) if config.mlp_bias else 0
    return GATED_MLP_MATRICES * hidden * intermediate + biases


def _mla_attention(config: ModelConfig, mla: MlaConfig) -> int:
    hidden, heads = config.hidden_size, config.heads
    q_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    bias = config.attention_bias
    if mla.q_lora_rank is None:
        query = hidden * heads * q_head
    else:
        rank = mla.q_lora_rank
        # q_a_proj (+bias), its RMSNorm, q_b_proj
        query = hidden * rank + (rank if bias else 0) + rank + rank * heads * q_head
    latent = mla.kv_lora_rank + mla.qk_rope_head_dim
    kv = (
        hidden * latent  # kv_a_proj_with_mqa
        + (latent if bias else 0)
        + mla.kv_lora_rank  # kv_a_layernorm
        + mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)  # kv_b_proj
    )
    output = heads * mla.v_head_dim * hidden + (hidden if bias else 0)
    return query + kv + output


def _moe_or_mlp(config: ModelConfig, mla: MlaConfig, index: int) -> int:
    """DeepSeek: dense MLPs for the first `first_k_dense_replace` layers, then experts on every
    layer (Transformers 5.24 does not read moe_layer_freq: modeling_deepseek_v2.py)."""
    if index < mla.first_k_dense_replace:
        return _mlp(config, _required(config.intermediate_size, "intermediate_size"))
    hidden, width = config.hidden_size, mla.moe_intermediate_size
    experts = mla.n_routed_experts * GATED_MLP_MATRICES * hidden * width
    router = mla.n_routed_experts * hidden
    shared = GATED_MLP_MATRICES * hidden * width * mla.n_shared_experts
    return experts + router + shared


def _required(value: int | None, key: str) -> int:
    if value is None:
        raise ConfigError(
            "config.json has no {key}: the parameters cannot be counted without it",
            "missing_key",
            key=key,
        )
    return value
