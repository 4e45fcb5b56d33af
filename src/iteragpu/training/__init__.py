"""Training and fine-tuning model states, per tensor and per GPU (`iteragpu train`).

- `records`: the request (method, precision, optimizer, sharding) and what each tensor holds;
- `naming`: every parameter of a family's causal-LM class (a wrapper's ForConditionalGeneration
  class), named in full, with the class of its module (`naming.json`, the table it reads);
- `adapters`: which tensors a run holds and trains (full, LoRA, DoRA, modules_to_save, QLoRA,
  QDoRA, PEFT's target_parameters and its MoE conversion);
- `states`: gradients, optimizer states (and where each lives), master weights, per tensor;
- `sharding`: what each rank holds under FSDP2 and ZeRO;
- `plan`: the run as `iteragpu train` states it (`--json` keys);
- `compare`: DeepSpeed's and Accelerate's estimators for the same run, item by item;
- `page`: the tables the sizer page's training mode reads.
Activations are not computed: they are measured by the lab.
"""
