# Untuk setiap berkas hasil, cetak waktu satu langkah pelatihan (jumlah duration_ns fase-fase
# langkah itu). Pemakaian: python step_time.py mesures/mesures-rank0.json [berkas hasil lain ...]
import json
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as stream:
        result = json.load(stream)
    step_ns = {}
    for phase in result["phases"]:
        step = phase.get("step")
        if step is None:
            continue  # fase di luar langkah, seperti pemuatan, evaluasi, dan ekspor
        if phase["status"] != "ok" or phase["duration_ns"] is None:
            sys.exit(f"{path}: fase {phase['phase']} langkah {step} tidak selesai diukur")
        step_ns[step] = step_ns.get(step, 0) + phase["duration_ns"]
    for step, total in sorted(step_ns.items()):
        note = " (langkah pertama: berisi inisialisasi, dilihat terpisah)" if step == 1 else ""
        print(f"{path}: langkah {step}: {total / 1e9:.3f} s{note}")
