"""What each GPU holds when a model is split over several: tensor, pipeline and expert
parallelism as Transformers, vLLM and llama.cpp place the model's tensors and its KV cache.

`plan.plan_split(request)` answers one `records.SplitRequest` with a `records.SplitPlan`: one
`RankPlan` per GPU (its layers, its tensors sharded or whole, its weights, KV cache, states and
reserve, in bytes) and the one that fills first. Each runtime's rules live in one module, read
at its source at a pinned version: `transformers_rules` (Transformers 5.24.0, its own plans in
`transformers_plans.json`), `vllm_rules` (vLLM 0.34.0) and `llamacpp_rules` (llama.cpp at
commit 00342301d01a, the commit `iteragpu.models.gguf` pins). The tensors come from the
families' recipes (`iteragpu.models.shapes.parameter_tensors`), never from a second
description.
"""
