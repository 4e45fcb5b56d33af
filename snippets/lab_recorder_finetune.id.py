# Letakkan mesure_memoire.py di folder yang sama dengan berkas ini, lalu jalankan di lingkungan
# yang memiliki PyTorch, Transformers, PEFT, dan GPU. Tidak ada yang diunduh.
import os

import torch
from mesure_memoire import Recorder
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

# Llama kecil berbobot acak dan token acak. Ganti dengan model, data, dan pengaturan Anda.
config = LlamaConfig(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
generator = torch.Generator().manual_seed(0)
train_batch = torch.randint(0, 256, (4, 32), generator=generator)  # microbatch 4
eval_batch = torch.randint(0, 256, (8, 32), generator=generator)  # batch evaluasi 8

with Recorder(device=DEVICE, output_dir="mesures") as recorder:
    # Pemuatan: memuat bobot dan memasang adapter. Model dan optimizer lahir di dalam fase ini,
    # jadi serahkan lewat watch agar komponennya (parameter, gradien, status optimizer)
    # dihitung mulai fase ini.
    with recorder.phase("load"):
        model = LlamaForCausalLM(config).to(DEVICE)
        model = get_peft_model(model, LoraConfig(r=16, task_type="CAUSAL_LM"))
        optimizer = torch.optim.AdamW(p for p in model.parameters() if p.requires_grad)
        recorder.watch(model=model, optimizer=optimizer)
    inputs = train_batch.to(DEVICE)
    # Langkah 1 dicatat terpisah: AdamW membuat statusnya pada optimizer_step pertama.
    for step in range(1, 4):
        # Bila labels diberikan, model menghitung loss di dalam lintasan maju.
        with recorder.phase("forward", step=step):
            loss = model(input_ids=inputs, labels=inputs).loss
        with recorder.phase("backward", step=step):
            loss.backward()
        with recorder.phase("optimizer_step", step=step):
            optimizer.step()
        with recorder.phase("zero_grad", step=step):
            optimizer.zero_grad(set_to_none=True)
    # Evaluasi: dengan ukuran batch yang berbeda dari pelatihan, tanpa gradien.
    with recorder.phase("evaluate"):
        model.eval()
        with torch.no_grad():
            held_out = eval_batch.to(DEVICE)
            eval_loss = model(input_ids=held_out, labels=held_out).loss
    # Ekspor: gabungkan adapter ke model dasar, lalu simpan di folder merged.
    with recorder.phase("export"):
        merged = model.merge_and_unload()
        merged.save_pretrained("merged")
