# 결과 파일마다 학습 스텝 하나에 걸린 시간(그 스텝에 속한 단계들의 duration_ns 합)을 출력합니다.
# 사용법: python step_time.py mesures/mesures-rank0.json [다른 결과 파일 ...]
import json
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as stream:
        result = json.load(stream)
    step_ns = {}
    for phase in result["phases"]:
        step = phase.get("step")
        if step is None:
            continue  # 로딩, 평가, 내보내기처럼 스텝 밖의 단계
        if phase["status"] != "ok" or phase["duration_ns"] is None:
            sys.exit(f"{path}: 스텝 {step}의 {phase['phase']} 단계는 끝까지 측정되지 않았습니다")
        step_ns[step] = step_ns.get(step, 0) + phase["duration_ns"]
    for step, total in sorted(step_ns.items()):
        note = " (첫 스텝: 초기화가 들어 있어 따로 봅니다)" if step == 1 else ""
        print(f"{path}: 스텝 {step}: {total / 1e9:.3f} s{note}")
