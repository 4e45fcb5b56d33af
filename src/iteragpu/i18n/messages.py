"""The result labels and notes of the CLI's tables, by key: each key's English text is a message
of the package's catalogue (`iteragpu.i18n.catalogue`), translated into every language of the
list there. Keys stay stable where code chooses a text by a code (`status_<status>`,
`reason_<reason>`, `requirement_<name>`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from iteragpu.i18n.catalogue import N_, translate
from iteragpu.i18n.languages import CODES

TEXTS: Final[dict[str, str]] = {
    "figure": N_("Figure"),
    "bytes_header": N_("Bytes (B)"),
    "stated_header": N_("Figure in the guide"),
    "exact_header": N_("Exact value"),
    "unit_header": N_("Unit"),
    "role_input": N_("input"),
    "role_result": N_("result"),
    # The worked examples' figures (`iteragpu examples run`), by the label of their key.
    "figure_allocated_kv_cache_bytes": N_("KV cache of the allocated blocks"),
    "figure_allocated_peak_gib": N_("Allocated peak"),
    "figure_allocated_tokens": N_("Tokens the allocated blocks hold"),
    "figure_batch": N_("Batch size"),
    "figure_binary_base": N_("Base of binary units"),
    "figure_bits": N_("Bits per value"),
    "figure_block_bytes": N_("Allocator block"),
    "figure_block_tokens": N_("Tokens per block"),
    "figure_blocks": N_("Blocks"),
    "figure_bytes": N_("Quantity"),
    "figure_bytes_per_parameter": N_("Bytes per parameter"),
    "figure_bytes_per_value": N_("Bytes per value"),
    "figure_card_nominal_gb": N_("Nominal capacity of a card"),
    "figure_cards": N_("Cards"),
    "figure_context": N_("Context (tokens)"),
    "figure_cublas_workspace_before_hopper_mib": N_("cuBLAS workspace before Hopper"),
    "figure_cublas_workspace_hopper_mib": N_("cuBLAS workspace on Hopper"),
    "figure_days": N_("Days"),
    "figure_decimal_base": N_("Base of decimal units"),
    "figure_declared": N_("Declared capacity"),
    "figure_declared_reported": N_("Declared capacity, as the tool reported it"),
    "figure_decoding_kv_cache": N_("KV cache while decoding"),
    "figure_difference_of_peaks_gib": N_("Difference of the two peaks"),
    "figure_full_layers": N_("Full-attention layers"),
    "figure_gb_bytes": N_("Bytes in one GB"),
    "figure_gb_exponent": N_("Exponent of GB"),
    "figure_gib": N_("Quantity in GiB"),
    "figure_gib_bytes": N_("Bytes in one GiB"),
    "figure_gib_exponent": N_("Exponent of GiB"),
    "figure_gqa_kv_cache_gib": N_("KV cache with GQA, as published"),
    "figure_head_dim": N_("Head dimension"),
    "figure_hidden_over_heads": N_("Hidden size ÷ query heads"),
    "figure_hidden_size": N_("Hidden size"),
    "figure_inputs_added_bytes": N_("Added by the inputs"),
    "figure_inputs_allocated_bytes": N_("Allocated after the inputs"),
    "figure_instant_allocated": N_("Instant {instant}: allocated"),
    "figure_instant_reserved": N_("Instant {instant}: reserved"),
    "figure_instant_difference": N_("Instant {instant}: reserved − allocated"),
    "figure_k_and_v": N_("K and V"),
    "figure_kv_cache": N_("KV cache"),
    "figure_kv_heads": N_("KV heads"),
    "figure_kv_per_token_bytes": N_("KV cache per token"),
    "figure_layers": N_("Layers"),
    "figure_mha_kv_cache_gib": N_("KV cache if every query head had its own K and V (MHA)"),
    "figure_model_load_allocated_bytes": N_("Model loading: allocated"),
    "figure_model_load_raw_bytes": N_("Model loading: tensor bytes before rounding"),
    "figure_model_load_rounding_bytes": N_("Model loading: added by block rounding"),
    "figure_mqa_kv_cache_gib": N_("KV cache if all query heads shared one K and V (MQA)"),
    "figure_need_gib": N_("Need"),
    "figure_nominal": N_("Nominal capacity"),
    "figure_one_gb": N_("One GB"),
    "figure_one_gib": N_("One GiB"),
    "figure_package_cards": N_("Package {number}: cards"),
    "figure_package_days": N_("Package {number}: days"),
    "figure_package_price_usd": N_("Package {number}: price"),
    "figure_package_hourly_usd": N_("Package {number}: hourly rate"),
    "figure_offer_cards": N_("Hourly offer {number}: GPUs"),
    "figure_offer_hourly_usd": N_("Hourly offer {number}: rate as the page states it"),
    "figure_offer_gpu_hourly_usd": N_("Hourly offer {number}: rate per GPU"),
    "figure_lowest_gpu_hourly_usd": N_("Lowest hourly rate per GPU"),
    # A split over several GPUs (iteragpu.parallel): `tp<N>_...` and `<runtime>_stage_<N>`.
    "figure_split_tp": N_("Tensor-parallel GPUs"),
    "figure_split_weights": N_("TP {tp}: weights per GPU"),
    "figure_split_kv_cache": N_("TP {tp}: KV cache per GPU"),
    "figure_split_total": N_("TP {tp}: total per GPU"),
    "figure_split_replicated": N_("TP {tp}: weights every GPU holds whole"),
    "figure_split_above_even": N_("TP {tp}: per GPU above an even split"),
    "figure_split_stage_layers": N_("{runtime}: layers of stage {stage}"),
    "figure_stages": N_("Pipeline stages"),
    "figure_experts": N_("Experts"),
    "figure_ep_ranks": N_("Expert-parallel GPUs"),
    "figure_experts_first_ranks": N_("Experts on each of the first GPUs"),
    "figure_experts_last_ranks": N_("Experts on each of the last GPUs"),
    "figure_vocab_padding": N_("Vocabulary padded to a multiple of"),
    "figure_gpu_layers_all": N_("-ngl that offloads every layer"),
    "figure_parallel": N_("Parallel slots (-np)"),
    "figure_cells_per_stream": N_("Cache cells per slot"),
    "figure_cells": N_("Cache cells in all"),
    "figure_padding_cells": N_("Padding of the cells"),
    "figure_q8_0_block_values": N_("Values per 8-bit cache block"),
    "figure_q8_0_block_bytes": N_("Bytes per 8-bit cache block"),
    "figure_card_nominal": N_("{card}: nominal capacity"),
    "figure_card_price": N_("{card}: package price"),
    # What fits (iteragpu fit): answers that are upper bounds until the runtime reports its figure.
    "figure_card_declared": N_("{card}: declared capacity"),
    "figure_card_sequences_at_most": N_("{card}: concurrent sequences, at most"),
    "figure_sequences_at_most": N_("Concurrent sequences, at most"),
    "figure_tokens_at_most": N_("Tokens per sequence, at most"),
    "figure_blocks_at_most": N_("vLLM cache blocks, at most"),
    "figure_positions": N_("The model's positions (max_position_embeddings)"),
    "figure_bf16_tokens_at_most": N_("Tokens per sequence at most, bf16 weights"),
    "figure_gptq_tokens_at_most": N_("Tokens per sequence at most, GPTQ 4-bit weights"),
    "figure_gptq_weights_bytes": N_("GPTQ 4-bit weights"),
    "figure_parameters": N_("Parameters"),
    "figure_peak_kv_cache": N_("KV cache at its peak"),
    "figure_query_heads": N_("Query heads"),
    "figure_reading": N_("Reading {number}"),
    "figure_reading_reported": N_("Reading {number}, as the tool reported it"),
    "figure_reserve_gib": N_("Reserve"),
    "figure_reserved_peak_gib": N_("Reserved peak"),
    "figure_sequences": N_("Sequences"),
    "figure_sliding_layers": N_("Sliding-window layers"),
    "figure_small_segment_mib": N_("Allocator segment for small blocks"),
    "figure_small_tensor_bytes": N_("Each small tensor"),
    "figure_small_tensors": N_("Tensors smaller than one block"),
    "figure_tokens": N_("Tokens"),
    "figure_total_gib": N_("First estimate"),
    "figure_weights": N_("Weights only"),
    "figure_width": N_("Width"),
    "figure_window": N_("Window (tokens)"),
    # The figures of the guides added with issue 26 (load specification, quantization,
    # fine-tuning, experiment cost, batch and accumulation).
    "figure_input_tokens": N_("Input tokens"),
    # The printed load sheet and its split over two GPUs (load-specification.md).
    "figure_state_bytes": N_("Layer states"),
    "figure_reserve_bytes": N_("Reserve"),
    "figure_first_rank": N_("GPU that fills first"),
    "figure_kv_heads_per_gpu": N_("KV heads per GPU"),
    "figure_half_weights_bytes": N_("Half the weights of one GPU"),
    "figure_gpus_total_bytes": N_("Total of both GPUs"),
    "figure_above_one_gpu_bytes": N_("Both GPUs above one GPU"),
    "figure_output_tokens": N_("Output tokens"),
    "figure_model_total": N_("Weights + KV cache"),
    "figure_group_size": N_("Group size (values per scale)"),
    "figure_uniform_weights": N_("Weights if every parameter took the bits (uniform division)"),
    "figure_quantized_parameters": N_("Parameters of the quantized layers"),
    "figure_quantized_weights_bytes": N_("Quantized weights, packed"),
    "figure_scales_bytes": N_("Scales"),
    "figure_zeros_bytes": N_("Zero points"),
    "figure_group_index_bytes": N_("Group indices"),
    "figure_unquantized": N_("Tensors left unquantized"),
    "figure_trainable_parameters": N_("Trainable parameters"),
    "figure_lora_r": N_("LoRA r (the adapters' inner dimension)"),
    "figure_quant_state_bytes": N_("Quantization states"),
    "figure_model_states": N_("Model states on one GPU"),
    "figure_configurations": N_("Configurations"),
    "figure_warmup_runs": N_("Warm-up runs per configuration"),
    "figure_repeats": N_("Repeats per configuration"),
    "figure_failed_runs": N_("Failed attempts allowed per configuration"),
    "figure_runs": N_("Runs"),
    "figure_hours_per_run": N_("Hours per run (assumed)"),
    "figure_series_hours": N_("Hours of the series"),
    "figure_package_hours": N_("Hours in one package"),
    "figure_packages": N_("Packages"),
    "figure_card_series_cost": N_("{card}: cost of the series"),
    "figure_micro_batch": N_("Micro-batch"),
    "figure_grad_accum": N_("Accumulation steps"),
    "figure_gpus": N_("GPUs"),
    "figure_effective_batch": N_("Effective batch (sequences per update)"),
    "figure_sequence_length": N_("Sequence length (tokens)"),
    "figure_tokens_per_update": N_("Tokens per update"),
    "figure_halved_micro_batch": N_("Micro-batch halved"),
    "figure_doubled_grad_accum": N_("Accumulation steps doubled"),
    "weights_only": N_("Weights only"),
    "reserve": N_("Reserve"),
    "rough_range": N_("First estimate"),
    "weights_title": N_("Dense weights: {parameters} parameters × {bits} bits ÷ 8"),
    "weights_not_counted": N_(
        "Not counted: activations, gradients, optimizer states, KV cache, working memory."
    ),
    "quantization_not_counted": N_(
        "A theoretical uniform division: quantization scales and modules kept at another "
        "precision are not counted."
    ),
    "reserve_not_proof": N_(
        "The reserve is a hypothesis, not proof that the load fits in this range."
    ),
    "kv_cache": N_("KV cache"),
    "kv_title": N_(
        "2 (K, V) × {layers} layers × {kv_heads} KV heads × head dimension {head_dim} × "
        "{tokens_kept} tokens kept × {bytes_per_value} B per value × {sequences} sequences"
    ),
    "kv_not_counted": N_(
        "This item alone: it measures neither throughput nor the occupancy of the whole GPU."
    ),
    "quantity": N_("Quantity"),
    "value_in": N_("Value ({unit})"),
    "examples_id": N_("ID"),
    "examples_title": N_("Example"),
    "examples_where": N_("Place in the guides"),
    "status_fit": N_("fit"),
    "status_check_needed": N_("check needed"),
    "status_excluded": N_("excluded"),
    "rank": N_("Rank"),
    "card": N_("Card"),
    "nominal_gb": N_("Nominal (GB)"),
    "declared_gib": N_("Declared capacity (GiB)"),
    "effective_margin_gib": N_("Effective margin (GiB)"),
    "paper_margin_gib": N_("Margin on paper (GiB)"),
    "preset_source": N_(
        "Published config.json of {repo} (Hub revision: {revision}), kept verbatim; read at {url}"
    ),
    "preset_revision_unknown": N_("not known"),
    "preset_card": N_("Parameters stated by the model card: {parameters} ({url})"),
    "basis_declared": N_("declared"),
    "basis_nominal": N_("nominal"),
    "unknown": N_("unknown"),
    "report_title": N_("Lab result {path}: device {device}, schema {schema}, outcome {outcome}"),
    "report_phase": N_("Phase"),
    "report_counter": N_("Counter"),
    "counter_start_allocated_bytes": N_("allocated at the start"),
    "counter_start_reserved_bytes": N_("reserved at the start"),
    "counter_peak_allocated_bytes": N_("allocated peak"),
    "counter_peak_reserved_bytes": N_("reserved peak"),
    "counter_end_allocated_bytes": N_("allocated at the end"),
    "counter_end_reserved_bytes": N_("reserved at the end"),
    "not_measured": N_("not measured"),
    "phase_status_ok": N_("succeeded"),
    "phase_status_failed": N_("failed"),
    "phase_status_interrupted": N_("interrupted"),
    "report_phase_error": N_("{phase}: {status}: {error}: {detail}"),
    "report_out_of_memory": N_("out of memory"),
    "report_counters_unavailable": N_("The counters were not read: {reason}"),
    "report_predicted_end": N_("Predicted allocated at the end (B)"),
    "report_measured_end": N_("Allocated at the end (B)"),
    "report_difference": N_("Difference (B)"),
    "report_no_prediction": N_(
        "Schema {schema}: the lab recorded no prediction per phase (schema 1.1.0 and later do)."
    ),
    "report_estimate_recorded": N_(
        "Estimate: {parameters} parameters × {bits} bits ÷ 8, the network the lab recorded"
    ),
    "report_estimate_given": N_("Estimate: {parameters} parameters × {bits} bits ÷ 8, as given"),
    "report_estimated_weights": N_("Estimated weights"),
    "report_model_load_allocated": N_("model_load, allocated at the end"),
    "report_difference_row": N_("Difference (measured − estimated)"),
    "report_share": N_("Difference as a share of the estimate: {share} %"),
    "explain_rounding": N_(
        "Allocator block rounding: each parameter tensor rounded up to 512 B blocks adds "
        "{rounding} B (the lab records this per tensor)."
    ),
    "explain_rounding_not_attributable": N_(
        "Allocator block rounding (512 B blocks) cannot be attributed: the estimate is not of "
        "the network the lab recorded."
    ),
    "explain_unexplained": N_(
        "Unexplained: {unexplained} B (buffers and other allocations are not recorded apart "
        "in the result)."
    ),
    "explain_not_measured": N_(
        "model_load allocated was not measured: no difference can be stated."
    ),
    "explain_segments": N_(
        "Reserved minus allocated after model_load: {cached} B, held in the allocator's "
        "segments (2 MiB small, 20 MiB large); it is not part of allocated."
    ),
    "explain_context": N_(
        "The CUDA context is outside these counters: it is in none of these figures."
    ),
    "explain_cublas": N_(
        "cold_forward allocated {workspace} B beyond the lab's prediction: library workspaces "
        "(cuBLAS first), not the model."
    ),
    # iteragpu report: the training step, the parts, several ranks (lab schema 1.3.0)
    "report_task_line": N_("Task {task}, process {rank} of {world}"),
    "report_model_state_title": N_(
        "Model states at the end of each phase: predicted (predict --task train) beside those "
        "counted from the tensors, each tensor rounded up to 512 B"
    ),
    "report_predicted_model_state": N_("Predicted model states (B)"),
    "report_counted_model_state": N_("Counted model states (B)"),
    "report_parts_title": N_(
        "Parts at the end of each phase, as allocated (each tensor rounded up to 512 B): "
        "parameters, gradients and optimizer state counted from the tensors; activations and "
        "temporaries are what allocated holds beyond them, computed"
    ),
    "part_parameters": N_("Parameters (B)"),
    "part_gradients": N_("Gradients (B)"),
    "part_optimizer_state": N_("Optimizer state (B)"),
    "part_activations": N_("Activations and temporaries (B)"),
    "part_peak_excess": N_("Peak above the end (B)"),
    "report_steps_title": N_(
        "The first step beside the warm ones: the allocated peak of each phase"
    ),
    "report_first_step": N_("First step (B)"),
    "report_warm_steps": N_("Warm steps, highest (B)"),
    "report_no_network": N_(
        "This result records no network of the lab (a Recorder's): give --params and --bits "
        "for a dense-weights estimate."
    ),
    "report_train_title": N_(
        "Estimate of iteragpu train ({precision}, {optimizer}{fused}) for the recorded "
        "parameters, beside the bytes counted at the end of the first step's optimizer_step"
    ),
    "report_train_fused": N_(", fused"),
    "report_estimated": N_("Estimated (B)"),
    "report_counted": N_("Counted (B)"),
    "not_counted": N_("not counted"),
    "train_item_gradients": N_("Gradients"),
    "train_item_optimizer_gpu": N_("Optimizer state on the GPU"),
    "train_item_optimizer_host": N_("Optimizer state in host memory"),
    "train_item_master_weights": N_("Master weights"),
    "train_item_master_gradients": N_("Master gradients"),
    "report_train_no_groups": N_(
        "This result records no parameters (written before schema 1.3.0, or the Recorder had "
        "no model): no estimate per item."
    ),
    "report_train_no_phase": N_(
        "No optimizer_step of the first step with its parts: the counted bytes are not measured."
    ),
    "report_side_by_side_title": N_(
        "The results side by side: the allocated peak of each phase (B)"
    ),
    "report_run_label": N_("process {rank}: {path}"),
    "report_highest_peak": N_(
        "Highest allocated peak: process {rank} ({path}), {peak} B, in {phase}."
    ),
    "report_highest_peak_none": N_("No allocated peak was read in these results."),
    "cost": N_("Cost ({currency})"),
    "overall": N_("Overall"),
    "requirement_memory": N_("memory"),
    "requirement_package": N_("package"),
    # The same requirements as column headers (capitalised like the other headers).
    "requirement_header_memory": N_("Memory"),
    "requirement_header_package": N_("Package"),
    "shortlist_title": N_("Need {need_gib} GiB, {cards} cards × {days} days"),
    "rank_rule": N_(
        "Only candidates fit on every requirement are ranked: by total cost, then effective "
        "margin, then timeline. Candidates that need checks follow without a rank, in review "
        "order: first the cards whose capacity on paper holds the need (margin on paper 0 or "
        "more), then the others; within each, package cost for the period (no package last), "
        "then the margin on paper, largest first. That order is for review, not a rank. The "
        "excluded ones come last, with their reason."
    ),
    # The need compared with the cards (iteragpu.gpus.need): its parts, and what is missing.
    "need_parts": N_("Need of the fullest GPU, everything computed: {parts}."),
    "need_part_weights": N_("weights"),
    "need_part_kv_cache": N_("KV cache"),
    "need_part_kv_cache_kind": N_("KV cache ({kind})"),
    "need_part_layer_states": N_("layer states"),
    "need_part_layer_states_kind": N_("layer states ({kind})"),
    "need_part_gradients": N_("gradients"),
    "need_part_optimizer_states": N_("optimizer states"),
    "need_part_master_weights": N_("master weights"),
    "need_part_master_gradients": N_("master gradients"),
    "need_part_reserve": N_("reserve"),
    "need_missing_activations": N_("activations: to measure"),
    "need_missing_prefill_temporaries": N_(
        "temporary buffers of the prompt's forward pass: to measure"
    ),
    "need_missing_step_temporaries": N_("temporary buffers of the training step: to measure"),
    "need_incomplete": N_(
        "The need is incomplete, a lower bound: not in it yet: {missing}. An exclusion on "
        "paper stands (the known part already exceeds the card); a margin on paper is at most "
        "the figure shown (≤)."
    ),
    "need_lower_bound_verdict": N_("Need incomplete ({missing}): judged on a lower bound."),
    "paper_margin_rule": N_(
        "Margin on paper: the capacity the device declares minus the need, else the nominal "
        "figure read as decimal GB minus the need (the word in brackets says which). Negative: "
        "the need is beyond that capacity on paper. It is not evidence either way."
    ),
    "nominal_convention": N_(
        "The «Nominal (GB)» column reads the catalogue's figure as decimal GB (10^9 B) by "
        "convention; it is not the card's memory. The declared capacity comes from published "
        "tool output; only a reading on the device you rent is evidence."
    ),
    "declared_source": N_(
        "{card} · source of the declared capacity: {tool} {tool_version}, {date}, {url}"
    ),
    "declared_unknown": N_(
        "{card} · declared capacity: unknown, the catalogue cites no public source."
    ),
    "reason_nominal_not_proof": N_(
        "A nominal capacity above the need is not evidence: check the free memory, the system "
        "and context allocations, and the software."
    ),
    "reason_above_nominal_within_declared": N_(
        "The need is above the nominal {nominal_memory_gb} GB (read as decimal GB by "
        "convention) but within the capacity the device declares, {declared_memory_gib} GiB. "
        "The nominal figure proves neither; check by measuring."
    ),
    "reason_above_nominal_declared_unknown": N_(
        "The need is above the nominal {nominal_memory_gb} GB (read as decimal GB by "
        "convention), and the catalogue lacks the capacity the device declares. The nominal "
        "figure alone cannot exclude the card; check by measuring."
    ),
    "reason_above_nominal_binary": N_(
        "The need of {need_gib} GiB is above the nominal {nominal_memory_gb} GB even read in "
        "binary units ({nominal_binary_gib} GiB, the most generous reading of the figure): no "
        "card sold with that figure holds it."
    ),
    "reason_nominal_unknown": N_("The catalogue lacks the nominal capacity."),
    "reason_declared_below_need": N_(
        "The need of {need_gib} GiB is above the capacity the device declares, "
        "{declared_memory_gib} GiB; no process can obtain more than that."
    ),
    "reason_evidence_fits": N_(
        "Measurement {evidence}: the observed reserved peak, {peak_reserved_gib} GiB, is at "
        "least the need, and with the margin it stays within the capacity the device reported, "
        "{reported_capacity_gib} GiB."
    ),
    "reason_evidence_below_need": N_(
        "Measurement {evidence}: the run succeeded, but its observed reserved peak, "
        "{peak_reserved_gib} GiB, is below the need of {need_gib} GiB. It only shows that the "
        "card worked at a smaller load, not evidence for this need."
    ),
    "reason_evidence_margin_not_met": N_(
        "Measurement {evidence}: the observed reserved peak, {peak_reserved_gib} GiB, plus the "
        "margin of {margin_gib} GiB is above the capacity the device reported, "
        "{reported_capacity_gib} GiB."
    ),
    "reason_evidence_capacity_unknown": N_(
        "Measurement {evidence}: the total capacity the device reported was not recorded, so "
        "the margin cannot be checked."
    ),
    "reason_evidence_peak_unknown": N_("Measurement {evidence}: no reserved peak was read."),
    "reason_evidence_readings_incomplete": N_(
        "Measurement {evidence}: some counters were not read, so the real peak may have been "
        "higher."
    ),
    "reason_evidence_out_of_memory": N_(
        "Measurement {evidence}: failed for lack of memory at a reserved peak of "
        "{peak_reserved_gib} GiB, no more than the need of {need_gib} GiB."
    ),
    "reason_evidence_out_of_memory_above_need": N_(
        "Measurement {evidence}: failed for lack of memory, but had held {peak_reserved_gib} GiB "
        "reserved before, more than the need of {need_gib} GiB. It proves neither failure nor "
        "success for this need."
    ),
    "reason_evidence_not_completed": N_(
        "Measurement {evidence}: failed for another reason than memory, or was interrupted, so "
        "it says nothing about memory."
    ),
    "reason_evidence_conflict": N_(
        "Measurements {evidence} disagree: one fits, another ran out of memory."
    ),
    "reason_package_listed": N_(
        "The catalogue lists a package of the same duration and number of cards."
    ),
    "reason_package_missing": N_(
        "The catalogue lists no package of the same duration and number of cards."
    ),
    "reason_no_evidence": N_("No evidence yet."),
    "reason_user_confirmed": N_("Confirmed by the user."),
    "reason_user_failed": N_("Failure recorded by the user."),
    "price_not_speed": N_("A price is not a speed ranking."),
    # iteragpu model
    "model_title": N_(
        "{model_type}, {layers} layers, {parameters} parameters; {tokens} tokens × "
        "{sequences} sequences, KV cache at {bytes_per_value} B per value"
    ),
    "model_active": N_(
        "Mixture of experts: {active} parameters active per token of {parameters} (the routed "
        "experts a token does not use left out; all of them are in memory)"
    ),
    "model_layers_header": N_("Layers"),
    "model_window_header": N_("Window (tokens)"),
    "model_tokens_held_header": N_("Tokens held"),
    "model_weights_files": N_("Weights (read from the {source} files)"),
    "model_weights_config": N_("Weights (config.json, {bits} bits per parameter)"),
    "model_tensors": N_("· {format} {dtype}, {tensors} tensors"),
    "format_float": N_("floating point"),
    "format_quantized_blocks": N_("quantized blocks"),
    "format_quantization_metadata": N_("quantization scales and indices"),
    "format_integer": N_("integer (packed)"),
    "model_kv_layers": N_("KV cache, {kind}"),
    "layer_kind_full_attention": N_("full attention"),
    "layer_kind_sliding_attention": N_("sliding window"),
    "layer_kind_chunked_attention": N_("chunked attention"),
    "layer_kind_hybrid": N_("hybrid, full attention"),
    "layer_kind_hybrid_sliding": N_("hybrid, sliding window"),
    "layer_kind_dummy": N_("shared KV, holds none"),
    "layer_kind_linear_attention": N_("linear attention or SSM"),
    "layer_kind_conv": N_("short convolution"),
    "model_state_layers": N_("Layer states, {kind}"),
    "model_modules": N_("Parameters per top module: {modules}."),
    "train_title": N_(
        "{model_type}: {parameters} parameters, {trainable} trainable in {tensors} tensors; "
        "{method}, {precision}, {optimizer}"
    ),
    "train_status_header": N_("Status"),
    "train_status_estimated": N_("stated"),
    "train_status_unknown": N_("to measure"),
    "train_role_base": N_("Weights, base ({tensors} tensors, {state})"),
    "train_role_saved_copy": N_("Weights, trainable copies ({tensors} tensors, {state})"),
    "train_role_adapter": N_("Adapters ({tensors} tensors, {state})"),
    "train_role_quantized": N_("Weights, 4-bit packed ({tensors} tensors, {state})"),
    "train_role_quant_state": N_("Quantization states ({tensors} tensors)"),
    "train_trainable": N_("trained"),
    "train_frozen": N_("frozen"),
    "train_weights_share": N_("Weights held by this GPU"),
    "train_gradients": N_("Gradients"),
    "train_optimizer": N_("Optimizer states on the GPU"),
    "train_master_weights": N_("Master weights (float32)"),
    "train_master_gradients": N_("Master gradients (float32)"),
    "train_model_states": N_("Model states on one GPU"),
    "train_host": N_("Optimizer step counters in host memory (not on the GPU)"),
    "train_activations": N_("Activations"),
    "train_sharded": N_(
        "{shard} over {gpus} GPUs: the figures above are those of GPU {rank}, the first to "
        "fill; every GPU:"
    ),
    "train_rank_header": N_("GPU"),
    "train_model_states_gib_header": N_("Model states (GiB)"),
    "train_padding_header": N_("Padding (B)"),
    "train_note_activations": N_(
        "Activations are not computed: they depend on the kernels, checkpointing and the "
        "allocator. Measure them with the lab on your card (activations_bytes: null)."
    ),
    "train_note_rules": N_(
        "Stated from PyTorch's, PEFT's and bitsandbytes' own rules, each checked against their "
        "tensors after a real step on CPU; temporary buffers of the step itself are not "
        "counted."
    ),
    "train_note_recorded": N_(
        "--micro-batch and --sequence-length are recorded in the JSON: they size the "
        "activations, which are measured, not computed."
    ),
    # iteragpu train --compare: a peer's estimate beside the tool's, item by item.
    "compare_title": N_("What {peer} {version} states for this run, per GPU: {call}"),
    "compare_item_header": N_("Item"),
    "compare_peer_header": N_("{peer} (B)"),
    "compare_ours_header": N_("This tool (B)"),
    "compare_difference_header": N_("Difference (B)"),
    "compare_total": N_("Model states on one GPU"),
    "compare_item_parameters_16bit": N_("16-bit parameters"),
    "compare_item_split_states": N_("Gradients, fp32 copies and Adam states, split"),
    "compare_item_largest_layer": N_("Largest layer, gathered"),
    "compare_item_model": N_("Model"),
    "compare_item_gradients": N_("Gradients"),
    "compare_item_optimizer": N_("Optimizer"),
    "compare_item_step": N_("At the optimizer step"),
    "compare_reason_ds_parameters_16bit": N_(
        "DeepSpeed counts 2 bytes for every parameter, whole on each GPU; the tool counts the "
        "weights the run holds in its precision, 4-bit packing and adapters included."
    ),
    "compare_reason_ds_split_states": N_(
        "DeepSpeed counts 18 bytes per parameter split over the GPUs (16-bit and fp32 "
        "gradients, fp32 master weights, AdamW's two fp32 states); the tool counts the "
        "trainable tensors' gradients, master copies and optimizer states, alignment padding "
        "included."
    ),
    "compare_reason_ds_largest_layer": N_(
        "DeepSpeed adds 4 bytes per parameter of the largest module, gathered to compute; the "
        "tool leaves gathered layers out (a transient buffer)."
    ),
    "compare_reason_ds_zero3_parameters": N_(
        "DeepSpeed's ZeRO-3 estimate holds no 16-bit parameter shard; the tool counts each "
        "GPU's shard of every parameter."
    ),
    "compare_reason_ds_all_trained": N_(
        "DeepSpeed is given the model's parameters and trains every one: LoRA, QLoRA and "
        "frozen parameters hold no gradient or state in the run."
    ),
    "compare_reason_ds_mixed_adam": N_(
        "DeepSpeed assumes 16-bit weights with fp32 master copies and AdamW, whatever the "
        "run's precision and optimizer."
    ),
    "compare_reason_ds_zero2_only": N_(
        "DeepSpeed has estimators for ZeRO-2 and ZeRO-3 only: ZeRO-2's is shown for this run."
    ),
    "compare_reason_host_states": N_(
        "The optimizer's step counters in host memory are on neither side of the comparison."
    ),
    "compare_reason_acc_model": N_(
        "Accelerate counts 4 bytes per parameter of the base model (float32); the tool counts "
        "the weights in the run's precision."
    ),
    "compare_reason_acc_gradients_fp32": N_(
        "Accelerate counts the float32 model's bytes again for the gradients."
    ),
    "compare_reason_acc_gradients_mixed": N_(
        "Accelerate counts 1.5 times the float32 model for the gradients (an fp32 and a "
        "16-bit copy); the tool counts the trainable tensors' gradients."
    ),
    "compare_reason_acc_optimizer": N_(
        "Accelerate counts twice the float32 model (AdamW's two states); the tool counts the "
        "optimizer's states on the GPU and the master weights."
    ),
    "compare_reason_acc_step_fp32": N_(
        "Accelerate counts 4 times the float32 model at the step (model, gradients and AdamW "
        "together); the tool's figure is the sum of its items."
    ),
    "compare_reason_acc_step_mixed": N_(
        "Accelerate repeats its optimizer figure at the step under mixed precision; the "
        "tool's figure is the sum of its items."
    ),
    "compare_reason_acc_largest": N_(
        "Accelerate prints the largest of its four figures (Training using Adam), not their sum."
    ),
    "compare_reason_acc_all_trained": N_(
        "Accelerate trains every parameter with AdamW: it knows neither LoRA nor QLoRA nor "
        "other optimizers."
    ),
    "compare_reason_acc_no_head": N_(
        "Accelerate builds the base model (AutoModel), without the output head: "
        "{parameters} parameters fewer."
    ),
    "compare_reason_acc_buffers": N_(
        "Accelerate's total also holds the model's buffers (rotary tables), which the tool "
        "does not size."
    ),
    "compare_reason_acc_one_device": N_(
        "Accelerate's estimate is for one device: it does not shard."
    ),
    "model_weights_role": N_("· {role} {dtype}, {tensors} tensors"),
    "weights_role_quantized_weights": N_("quantized weights"),
    "weights_role_scales": N_("scales"),
    "weights_role_zeros": N_("zero points"),
    "weights_role_group_index": N_("group indices"),
    "weights_role_quantization_state": N_("quantization state"),
    "weights_role_unquantized": N_("left unquantized"),
    "weights_role_unknown_integer": N_("integer tensors of unknown layout"),
    "model_total": N_("Total"),
    "model_partial_title": N_(
        "{model_type}: a family whose cache is not known here; {parameters} parameters, "
        "weights read from the files"
    ),
    "model_partial_total": N_("Total without the cache (incomplete)"),
    "model_cache_unknown_unknown_family": N_(
        "KV cache: unknown. The layer layout of this family is not known here, so the cache is "
        "not guessed and the total above leaves it out: it is incomplete."
    ),
    "model_cache_unknown_recurrent_state": N_(
        "KV cache and states: unknown. The layers of this family keep a recurrent state "
        "(Mamba, linear attention) whose size is not known here, so neither is guessed and "
        "the total above leaves them out: it is incomplete."
    ),
    "model_cache_unknown_unknown_layer_kind": N_(
        "KV cache: unknown. A layer kind of this model keeps a state whose size is not known "
        "here, so the cache is not guessed and the total above leaves it out: it is incomplete."
    ),
    "caveat_activations_not_counted": N_(
        "Not counted: activations, temporary buffers and the CUDA context."
    ),
    "caveat_cache_dynamic_prompt_peak": N_(
        "Dynamic cache: the KV figure is the peak right after the whole context arrives as one "
        "prompt; sliding-window layers then hold every prompt token until the first decoding "
        "step. While decoding, the cache holds {decoding_gib} GiB."
    ),
    "caveat_cache_static_allocation": N_(
        "Static cache: the KV figure is the allocation made up front, {length} tokens per "
        "sequence (a sliding-window layer: its window)."
    ),
    "caveat_mla_latent": N_(
        "MLA: the compressed latent is cached, as in Transformers and vLLM; keys and "
        "values per head would take {alternative_gib} GiB (--mla-layout mla_per_head)."
    ),
    "caveat_mla_per_head": N_(
        "MLA: keys and values are cached per head; the compressed latent would take "
        "{alternative_gib} GiB (--mla-layout mla_latent)."
    ),
    "caveat_weights_uniform_dtype": N_(
        "Weights from config.json: every parameter at {bits} bits, as Transformers builds the "
        "model at that dtype (this family keeps no module in float32)."
    ),
    "caveat_weights_float32_modules": N_(
        "Weights from config.json: the {float32_parameters} parameters Transformers keeps in "
        "float32 (routers) at 4 bytes each, every other parameter at {bits} bits."
    ),
    "caveat_weights_uniform_bits": N_(
        "Weights from config.json at --bits: every parameter at {bits} bits, the modules "
        "Transformers keeps in float32 included; quantization scales are not counted."
    ),
    "caveat_mla_llama_cpp_latent": N_(
        "MLA in a GGUF file: llama.cpp caches the latent and the rotary key as keys and the "
        "latent again as values (its V cache), as the layer row shows; --mla-layout does not "
        "apply."
    ),
    "caveat_mla_llama_cpp_per_head": N_(
        "MLA in a GGUF file without MLA sizes (an older conversion): llama.cpp caches keys and "
        "values per head; --mla-layout does not apply."
    ),
    "caveat_states_llama_cpp": N_(
        "Layer states of a GGUF file as llama.cpp allocates them: all in float32, and the "
        "convolution state one position shorter than its kernel (Transformers keeps the whole "
        "kernel, in the model's dtype)."
    ),
    "caveat_quantized_checkpoint_from_config": N_(
        "A quantized checkpoint ({method}) sized from its config: its scales and the modules it "
        "keeps in 16 bits are not counted; its weight files give the exact bytes."
    ),
    "caveat_multimodal_encoder_not_counted": N_(
        "Weights from the config count the text decoder only: the vision or audio encoder and "
        "the projector are not counted."
    ),
    "caveat_mtp_layers_not_counted": N_(
        "Weights from the config: the multi-token-prediction layers that checkpoints store are "
        "not counted."
    ),
    "caveat_parameters_unknown_integer_tensors": N_(
        "Parameters unknown: integer tensors (packed quantized weights) do not say how many "
        "values they hold."
    ),
    "caveat_cache_unknown": N_(
        "The cache of this family is not known here: the weights come from the files and the "
        "total leaves the cache out, so it is incomplete."
    ),
    "caveat_kv_quantization_overheads_not_counted": N_(
        "Quantized KV cache: its scales and the tokens it keeps at full precision are not counted."
    ),
    # A split over several GPUs (iteragpu model --tp/--pp/--ep/--runtime).
    "split_title": N_(
        "{model_type} on {gpus} GPUs with {runtime} {version}: TP {tp}, PP {pp}, EP {ep}; "
        "{tokens} tokens x {sequences} sequences, weights {weights_dtype}, KV cache "
        "{kv_dtype} ({bytes_per_value} B per value)"
    ),
    "split_title_llamacpp": N_(
        "{model_type} with llama.cpp ({version}) on {gpus} GPUs: context {tokens} tokens "
        "shared by {sequences} slots (-np), weights from the GGUF file, KV cache {kv_dtype} "
        "({bytes_per_value} B per value)"
    ),
    "split_rank_header": N_("GPU"),
    "split_tp_rank_header": N_("TP index"),
    "split_stage_header": N_("PP stage"),
    "split_layers_header": N_("Layers"),
    "split_weights_header": N_("Weights (GiB)"),
    "split_replicated_header": N_("of which replicated (GiB)"),
    "split_kv_header": N_("KV cache (GiB)"),
    "split_total_header": N_("Total (GiB)"),
    "split_host": N_("host"),
    "split_no_layers": N_("none"),
    "split_output_layer": N_("{layers} + output"),
    "split_first_to_fill": N_(
        "Fills first: GPU {rank}, {total_gib} GiB ({total_bytes} B). A card must hold this "
        "GPU's need: a package fits only if its fullest GPU fits."
    ),
    "split_host_note": N_(
        "Host memory (not on a GPU): {weights_gib} GiB of weights (the token embedding always, "
        "and the layers not offloaded, memory-mapped from the file) and {kv_gib} GiB of KV cache."
    ),
    "split_note_cache_dynamic_prompt_peak": N_(
        "KV cache: Transformers' dynamic cache right after the whole context arrives as one "
        "prompt; each GPU caches its own KV heads for its own layers."
    ),
    "split_note_vllm_blocks": N_(
        "KV cache: vLLM's blocks of 64 tokens per sequence, for the tokens and sequences asked."
    ),
    "split_note_vllm_gpu_memory_utilization": N_(
        "vLLM gives its cache what --gpu-memory-utilization (0.92 by default) leaves of each "
        "card after the weights: the KV figure is what the asked context takes of it."
    ),
    "split_note_llamacpp_padding_flash_attention": N_(
        "KV cache: llama.cpp's context cut into --parallel streams, each padded to 256 cells "
        "(flash attention on or auto, the default; 32 with -fa off)."
    ),
    "split_note_llamacpp_host_mmap": N_(
        "Weights left on the host are read from the memory-mapped file; with --split-mode row "
        "or -ot the placement differs and is not modelled."
    ),
    "split_note_activations_not_counted": N_(
        "Activations, communication buffers and the CUDA context are not counted: they go in "
        "--reserve-gib, added to each GPU."
    ),
    # What fits, solved backwards (iteragpu fit).
    "fit_title": N_(
        "{model_type} on {gpus} x {card} ({capacity} B each) with {runtime} {version}; "
        "solved: {solved}"
    ),
    "fit_card_given": N_("a card given by its capacity"),
    "fit_solved_tokens": N_("the context per sequence"),
    "fit_solved_sequences": N_("the sequences at once"),
    "fit_solved_tp": N_("the tensor-parallel GPUs"),
    "fit_solved_kv_dtype": N_("the cache type"),
    "fit_solved_gpu_layers": N_("the layers on the GPUs"),
    "fit_solved_none": N_("nothing (the load given is checked)"),
    "fit_answer_at_most": N_(
        "At most {tokens} tokens per sequence with {sequences} sequences at once; KV cache "
        "{kv_dtype}, TP {tp}, PP {pp}."
    ),
    "fit_answer_exact": N_(
        "As vLLM counts it from its own figure: {tokens} tokens per sequence with {sequences} "
        "sequences at once; KV cache {kv_dtype}, TP {tp}, PP {pp}."
    ),
    "fit_answer_llamacpp_at_most": N_(
        "At most {tokens} tokens per slot with {sequences} slots (-np); {gpu_layers} layers on "
        "the GPUs (the output layer counting as one), KV cache {kv_dtype}."
    ),
    "fit_limit_positions": N_("Limited by the model's {positions} positions, not by memory."),
    "fit_limit_memory": N_(
        "Limited by memory: one more block, cell or sequence does not fit on GPU {rank}."
    ),
    "fit_limit_asked": N_(
        "The load asked fits; the fullest GPU ({rank}) keeps {left_gib} GiB beyond its cache."
    ),
    "fit_vllm_blocks_at_most": N_(
        "vLLM's cache: at most {blocks} blocks of {block_size} tokens (the weakest GPU's "
        'count, the null block included), so its log says at most "GPU KV cache size: '
        "{cache_tokens} tokens, Maximum concurrency for {tokens} tokens per request: "
        '{concurrency}x".'
    ),
    "fit_vllm_blocks_exact": N_(
        "vLLM's cache: {blocks} blocks of {block_size} tokens (the weakest GPU's count, the "
        'null block included); its log says "GPU KV cache size: {cache_tokens} tokens, '
        'Maximum concurrency for {tokens} tokens per request: {concurrency}x".'
    ),
    "fit_flags": N_("{runtime}'s flags, ready to paste:"),
    "fit_no_flags": N_(
        'Transformers takes no serving flags: call `from_pretrained` with `tp_plan="auto"` '
        "under torchrun --nproc-per-node {gpus} and keep the context within these figures."
    ),
    "fit_rank_header": N_("GPU"),
    "fit_fixed_header": N_("Weights and reserve (GiB)"),
    "fit_per_token_header": N_("KV per token (B)"),
    "fit_room_header": N_("Room for the cache (GiB)"),
    "fit_kv_header": N_("Cache of the answer (GiB)"),
    "fit_left_header": N_("Left (GiB)"),
    "fit_certain": N_("Certain (the files and the runtime's rules): {items}."),
    "fit_to_measure": N_("To measure on the card (no file tells them): {items}."),
    "fit_item_weights": N_("the weights"),
    "fit_item_kv_per_token": N_("the KV cache per token"),
    "fit_item_vllm_blocks": N_("vLLM's blocks of {block_size} tokens"),
    "fit_item_vllm_null_block": N_("the null block vLLM holds back"),
    "fit_item_weakest_rank": N_("the weakest GPU's block count on every GPU"),
    "fit_item_llamacpp_cells": N_("llama.cpp's streams padded to 256 cells"),
    "fit_item_llamacpp_streams": N_("the context cut into -np streams"),
    "fit_item_activation_peak": N_("the activation peak"),
    "fit_item_cuda_graphs": N_("the CUDA graphs"),
    "fit_item_non_torch_memory": N_("memory outside PyTorch (NCCL, attention workspaces)"),
    "fit_item_cuda_context": N_("the CUDA context"),
    "fit_item_other_processes": N_("other processes on the card"),
    "fit_item_cuda_total_memory": N_(
        "the total CUDA reports, which vLLM multiplies (at most the declared capacity)"
    ),
    "fit_item_compute_buffers": N_("llama.cpp's compute buffers"),
    "fit_item_allocator_overhead": N_("the caching allocator's rounding and free fragments"),
    "fit_alternatives": N_("Other cache types: {items}."),
    "fit_alternative": N_("{kv_dtype}: {tokens} tokens x {sequences}"),
    "fit_note_vllm_budget_share_of_total": N_(
        "vLLM's budget is --gpu-memory-utilization times the card's total memory (1.0 by "
        "default with its extensible KV cache, on by default on CUDA; 0.92 without); other "
        "processes only gate its start."
    ),
    "fit_note_vllm_available_range": N_(
        "vLLM prints its figure rounded to 0.01 GiB: the blocks are a range, and the flags "
        "take its low end."
    ),
    "fit_note_vllm_extensible_measures_again": N_(
        "With the extensible KV cache vLLM counts its blocks again after CUDA graphs and "
        "warmup: these figures are an upper bound; --kv-sizing profiled "
        "(--no-enable-extensible-kv-cache) makes them exact."
    ),
    "fit_note_llamacpp_reserve": N_(
        "llama.cpp: --reserve-gib (1 GiB by default) stays free on each GPU for its compute "
        "buffers and the CUDA context; -c is the context of all slots, each slot's padded to "
        "256 cells (flash attention on or auto)."
    ),
    "fit_note_positions_unknown": N_(
        "The model states no positions (max_position_embeddings): the context is not capped "
        "by them here."
    ),
    "fit_note_quantized_weights_from_files": N_(
        "A quantized checkpoint on one GPU: its weights are its files' bytes, as the headers "
        "declare them (no split is planned for it)."
    ),
    "fit_item_quantized_repacking": N_(
        "how vLLM's kernels repack the quantized weights, and their workspaces"
    ),
    "fit_note_llamacpp_no_fit_at_pinned_commit": N_(
        "llama.cpp at commit 00342301d01a does not fit by itself: it allocates what -c, -np "
        "and -ngl ask and fails when a buffer does not fit (later versions' --fit keep 1024 "
        "MiB free per device)."
    ),
    # A runtime's start-up log beside the plan (iteragpu report --vllm-log/--llama-log).
    "rec_title_vllm": N_("{log} (vLLM {version}) beside the plan of {path}"),
    "rec_title_llamacpp": N_("{log} (llama.cpp) beside the plan of {path}"),
    "rec_version_unknown": N_("version not printed"),
    "rec_settings": N_("Settings: {settings}"),
    # One setting of the run: the runtime's name, its value, where it came from.
    "rec_setting": N_("{name} {value} ({source})"),
    "rec_source_option": N_("option"),
    "rec_source_log": N_("log"),
    "rec_source_default": N_("default"),
    "rec_source_detail": N_("{source}: {detail}"),
    "rec_value_all": N_("all"),
    # The units of the items that count a runtime's things (GiB and MiB stay as they are).
    "rec_unit_blocks": N_("blocks"),
    "rec_unit_tokens": N_("tokens"),
    "rec_unit_cells": N_("cells"),
    "rec_unit_x": N_("times"),
    "rec_item_header": N_("Item"),
    "rec_gpu_header": N_("GPU"),
    "rec_unit_header": N_("Unit"),
    "rec_computed_header": N_("Computed"),
    "rec_logged_header": N_("Logged"),
    "rec_difference_header": N_("Logged - computed"),
    "rec_status_header": N_("Agreement"),
    "rec_item_weights": N_("Weights (model loading)"),
    "rec_item_available_budget": N_("Room for the cache: card share less weights"),
    "rec_item_blocks": N_("Blocks"),
    "rec_item_cache_tokens": N_("GPU KV cache size"),
    "rec_item_concurrency": N_("Maximum concurrency"),
    "rec_item_max_model_len": N_("`max_model_len`: most the blocks allow, served"),
    "rec_item_cells": N_("Cells per stream"),
    "rec_item_kv_k": N_("K cache"),
    "rec_item_kv_v": N_("V cache"),
    "rec_item_kv_buffer": N_("KV buffer"),
    "rec_item_model_buffer": N_("Model buffer"),
    "rec_item_model_buffer_host": N_("Model buffer (host)"),
    "rec_item_compute_buffer": N_("Compute buffer {name}"),
    "rec_status_equal": N_("equal"),
    "rec_status_within_range": N_("within the rounding"),
    "rec_status_differs": N_("differs"),
    "rec_status_bound_holds": N_("within the bound"),
    "rec_status_bound_exceeded": N_("above the bound"),
    "rec_status_measured_only": N_("measured only"),
    "rec_status_not_logged": N_("not in the log"),
    "rec_note_weights_loading": N_(
        "vLLM's loading figure is how much memory grew while it loaded: the allocator's "
        "rounding and buffers the model registers come on top of the tensors counted here."
    ),
    "rec_note_vllm_one_available_line": N_(
        "The log prints one worker's available memory: it stands for every GPU here."
    ),
    "rec_note_vllm_extensible_measured": N_(
        "Extensible KV cache: vLLM counted its blocks again after CUDA graphs and warmup, at "
        "or under those its available memory buys."
    ),
    "rec_note_vllm_version_differs": N_(
        "The log names another vLLM version than 0.34.0, whose rules are read here: a "
        "difference may be the version's."
    ),
    "rec_note_llamacpp_buffers_aligned": N_(
        "llama.cpp's buffers hold each tensor rounded up to the backend's alignment (and "
        "quantized rows padded on CUDA): a few MiB above the tensors counted here."
    ),
    "rec_note_llamacpp_compute_not_computed": N_(
        "Compute buffers depend on the graph and the batch: measured by llama.cpp, not "
        "computed here."
    ),
}
"""Every key and its English text, the message id of the catalogue."""


def message(key: str, lang: str, **values: object) -> str:
    """The text of `key` in `lang`, its `{name}` fields filled from `values`."""
    return translate(TEXTS[key], lang, **values)


class _EveryLanguage(Mapping[str, Mapping[str, str]]):
    """`MESSAGES[key][lang]`: each key's text in every language of the list, read from the
    catalogues when asked (so that importing this module reads no catalogue)."""

    def __getitem__(self, key: str) -> Mapping[str, str]:
        if key not in TEXTS:
            raise KeyError(key)
        return {lang: message(key, lang) for lang in CODES}

    def __iter__(self) -> Iterator[str]:
        return iter(TEXTS)

    def __len__(self) -> int:
        return len(TEXTS)


MESSAGES: Final[Mapping[str, Mapping[str, str]]] = _EveryLanguage()
