# Letakkan mesure_memoire.py di folder yang sama dengan berkas ini, lalu jalankan di lingkungan
# yang memiliki PyTorch dan GPU.
import os

import torch
from mesure_memoire import Recorder

# Dengan satu GPU, cuda:0. Bila dijalankan dengan torchrun di beberapa GPU, setiap proses memakai
# GPU-nya sendiri.
DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
).to(DEVICE)
optimizer = torch.optim.AdamW(model.parameters())
inputs = torch.randn(8, 1024, device=DEVICE)
target = torch.randn(8, 1024, device=DEVICE)

# Hasilnya ditulis ke mesures/mesures-rank0.json (nomor rank per proses). Bila berkas itu sudah
# ada, tidak ada yang ditimpa dan tidak ada yang dijalankan.
with Recorder(device=DEVICE, model=model, optimizer=optimizer, output_dir="mesures") as recorder:
    # Langkah pertama dicatat terpisah: AdamW membuat statusnya pada optimizer_step pertama.
    for step in range(1, 4):
        with recorder.phase("forward", step=step):
            output = model(inputs)
        with recorder.phase("loss", step=step):
            loss = torch.nn.functional.mse_loss(output, target)
        with recorder.phase("backward", step=step):
            loss.backward()
        with recorder.phase("optimizer_step", step=step):
            optimizer.step()
        with recorder.phase("zero_grad", step=step):
            optimizer.zero_grad(set_to_none=True)
