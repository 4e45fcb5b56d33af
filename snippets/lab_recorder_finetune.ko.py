# mesure_memoire.py를 이 파일과 같은 폴더에 두고, PyTorch, Transformers, PEFT와 GPU가 있는
# 환경에서 실행합니다. 아무것도 내려받지 않습니다.
import os

import torch
from mesure_memoire import Recorder
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

# 무작위 가중치의 작은 Llama와 무작위 토큰입니다. 여러분의 모델, 데이터, 설정으로 바꾸세요.
config = LlamaConfig(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
generator = torch.Generator().manual_seed(0)
train_batch = torch.randint(0, 256, (4, 32), generator=generator)  # 마이크로배치 4
eval_batch = torch.randint(0, 256, (8, 32), generator=generator)  # 평가 배치 8

with Recorder(device=DEVICE, output_dir="mesures") as recorder:
    # 로딩: 가중치를 올리고 어댑터를 붙입니다. 모델과 옵티마이저가 이 단계 안에서 생기므로
    # watch로 넘기면, 이 단계부터 구성(파라미터, 그래디언트, 옵티마이저 상태)을 셉니다.
    with recorder.phase("load"):
        model = LlamaForCausalLM(config).to(DEVICE)
        model = get_peft_model(model, LoraConfig(r=16, task_type="CAUSAL_LM"))
        optimizer = torch.optim.AdamW(p for p in model.parameters() if p.requires_grad)
        recorder.watch(model=model, optimizer=optimizer)
    inputs = train_batch.to(DEVICE)
    # 스텝 1은 따로 기록됩니다. AdamW는 첫 optimizer_step에서 상태를 만듭니다.
    for step in range(1, 4):
        # labels를 주면 모델이 순전파 안에서 손실까지 계산합니다.
        with recorder.phase("forward", step=step):
            loss = model(input_ids=inputs, labels=inputs).loss
        with recorder.phase("backward", step=step):
            loss.backward()
        with recorder.phase("optimizer_step", step=step):
            optimizer.step()
        with recorder.phase("zero_grad", step=step):
            optimizer.zero_grad(set_to_none=True)
    # 평가: 학습과 다른 배치 크기로, 그래디언트 없이 실행합니다.
    with recorder.phase("evaluate"):
        model.eval()
        with torch.no_grad():
            held_out = eval_batch.to(DEVICE)
            eval_loss = model(input_ids=held_out, labels=held_out).loss
    # 내보내기: 어댑터를 기본 모델에 병합하고 merged 폴더에 저장합니다.
    with recorder.phase("export"):
        merged = model.merge_and_unload()
        merged.save_pretrained("merged")
