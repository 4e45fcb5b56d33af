"""Training and fine-tuning model states, per tensor and per GPU (`iteragpu train`).

- `records`: the request (method, precision, optimizer, sharding) and what each tensor holds;
- `adapters`: which tensors a run holds and trains (full, LoRA, DoRA, modules_to_save, QLoRA);
- `states`: gradients, optimizer states (and where each lives), master weights, per tensor;
- `sharding`: what each rank holds under FSDP2 and ZeRO.
Activations are not computed: they are measured by the lab.
"""
