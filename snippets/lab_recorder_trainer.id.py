# Letakkan mesure_memoire.py di folder yang sama dengan berkas ini, lalu jalankan di lingkungan
# yang memiliki PyTorch, Transformers, dan GPU. Tidak ada yang diunduh.
import os

import torch
from mesure_memoire import Recorder
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

# Llama kecil dengan bobot acak; ganti dengan model dan data Anda.
config = LlamaConfig(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
model = LlamaForCausalLM(config)
tokens = torch.randint(0, 256, (16, 32), generator=torch.Generator().manual_seed(0))
dataset = [{"input_ids": row, "labels": row} for row in tokens]
arguments = TrainingArguments(
    output_dir="trainer-out",
    per_device_train_batch_size=4,
    max_steps=3,
    report_to="none",
    save_strategy="no",
    logging_strategy="no",
)

# Callback ini membuka dan menutup fase forward_backward, optimizer_step, dan zero_grad pada
# setiap langkah Trainer, dan memberikan model serta optimizer Trainer kepada Recorder saat
# pelatihan dimulai.
recorder = Recorder(device=DEVICE, output_dir="mesures")
trainer = Trainer(
    model=model,
    args=arguments,
    train_dataset=dataset,
    callbacks=[recorder.trainer_callback()],
)
# Latih di dalam blok with: bila berhenti karena kehabisan memori, fase itu tetap dicatat dan
# hasilnya ditulis.
with recorder:
    trainer.train()
