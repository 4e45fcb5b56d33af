# mesure_memoire.py를 이 파일과 같은 폴더에 두고, PyTorch, Transformers와 GPU가 있는 환경에서
# 실행합니다. 아무것도 내려받지 않습니다.
import os

import torch
from mesure_memoire import Recorder
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"

# 무작위 가중치의 작은 Llama입니다. 여러분의 모델과 데이터로 바꾸세요.
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

# 콜백은 Trainer의 스텝마다 forward_backward, optimizer_step, zero_grad 단계를 열고 닫으며,
# 학습이 시작될 때 Trainer의 모델과 옵티마이저를 Recorder에 넘깁니다.
recorder = Recorder(device=DEVICE, output_dir="mesures")
trainer = Trainer(
    model=model,
    args=arguments,
    train_dataset=dataset,
    callbacks=[recorder.trainer_callback()],
)
# with 블록 안에서 학습해야, 메모리 부족으로 멈춰도 그 단계가 기록되고 결과가 써집니다.
with recorder:
    trainer.train()
