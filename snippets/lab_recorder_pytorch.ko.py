# mesure_memoire.py를 이 파일과 같은 폴더에 두고, PyTorch와 GPU가 있는 환경에서 실행합니다.
import os

import torch
from mesure_memoire import Recorder

# GPU 하나면 cuda:0입니다. torchrun으로 여러 GPU에서 실행하면 프로세스마다 자기 GPU를 씁니다.
DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
).to(DEVICE)
optimizer = torch.optim.AdamW(model.parameters())
inputs = torch.randn(8, 1024, device=DEVICE)
target = torch.randn(8, 1024, device=DEVICE)

# 결과는 mesures/mesures-rank0.json(프로세스마다 rank 번호)에 씁니다. 파일이 이미 있으면
# 덮어쓰지 않고 아무것도 실행하지 않은 채 멈춥니다.
with Recorder(device=DEVICE, model=model, optimizer=optimizer, output_dir="mesures") as recorder:
    # 첫 스텝은 따로 기록됩니다. AdamW는 첫 optimizer_step에서 상태를 만듭니다.
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
