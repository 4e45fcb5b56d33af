# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] tags=["lang-ko"]
# # IteraGPU Lab v1: 가중치 계산과 단계별 GPU 메모리 측정
#
# 이 노트북은 두 가지 일을 합니다. 먼저 표준 라이브러리만으로 밀집(dense) 가중치가 차지하는 크기를
# 바이트, GB, GiB로 계산합니다. 그다음 PyTorch와 접근 가능한 GPU가 있으면, 작은 독자 밀집
# 네트워크를 합성 입력으로 실행하면서 단계마다 메모리 카운터를 기록합니다.
#
# - 이 노트북은 자립형입니다. `mesure_memoire.py` 스크립트를 가져오지 않으며, 필요한 작은 함수들을
#   노트북 안에 복제해 두었습니다. 계산 셀의 출력은 `python mesure_memoire.py estimate`의 출력과
#   같습니다.
# - 출력과 메시지는 한국어로, 숫자는 13.04처럼 씁니다. GPU가 없어도 모든 셀을 끝까지 실행할 수
#   있으며, 측정 셀은 측정할 수 없는 이유를 알려 줍니다.
# - 모델이나 패키지를 다운로드하지 않습니다.
# - 출력 없이 제공됩니다. 여러분의 환경에서 열고, 검토하고, 실행하세요.
# - 측정 결과는 측정 방법을 익히기 위한 것이며, 여러분의 연구 모델에 대해 카드의 성능을 입증하지
#   않습니다.

# %% [markdown] tags=["lang-id"]
# # IteraGPU Lab v1: perhitungan bobot dan pengukuran memori GPU per fase
#
# Notebook ini melakukan dua hal. Pertama, dengan pustaka standar saja, notebook ini menghitung
# ukuran bobot dense dalam byte, GB, dan GiB. Kemudian, bila PyTorch dan GPU yang dapat diakses
# tersedia, notebook ini menjalankan jaringan dense kecil yang orisinal pada masukan sintetis dan
# mencatat penghitung memori untuk setiap fase.
#
# - Notebook ini mandiri. Ia tidak mengimpor skrip `mesure_memoire.py`; fungsi-fungsi kecil yang
#   diperlukan disalin ke dalam notebook. Keluaran sel perhitungan sama dengan keluaran `python
#   mesure_memoire.py estimate --lang id`.
# - Keluaran dan pesannya berbahasa Indonesia, dengan angka seperti 13,04. Tanpa GPU, semua sel
#   tetap dapat dijalankan sampai selesai, dan sel pengukuran menjelaskan mengapa pengukuran tidak
#   dapat dilakukan.
# - Notebook ini tidak mengunduh model maupun paket.
# - Notebook disertakan tanpa keluaran. Buka, telaah, dan jalankan di lingkungan Anda.
# - Hasil pengukurannya berguna untuk mempelajari metode pengukuran; hasil itu tidak membuktikan
#   kemampuan sebuah kartu untuk model riset Anda.

# %% tags=["setup"]
# [ko] 이 노트북은 일부러 자립형으로 만들었습니다. mesure_memoire.py를 가져오지 않고, 필요한 작은
# [ko] 함수를 여기에 복제해 둡니다. 실습의 테스트가 그 수치와 문장이 스크립트의 `estimate` 출력과
# [ko] 같은지 확인합니다.
# [id] Notebook ini sengaja dibuat mandiri: ia tidak mengimpor mesure_memoire.py. Beberapa fungsi
# [id] kecil yang diperlukan disalin di sini, dan pengujian lab memeriksa bahwa angka serta
# [id] kalimatnya sama dengan keluaran `estimate` pada skrip.
import os
import platform
import time
import warnings
from collections import OrderedDict
from fractions import Fraction

# [ko] 가져오는 동안의 경고(예: NumPy 없음)는 셀 사이에 출력하지 않고 환경 셀에서 보여 줍니다.
# [id] Peringatan saat impor (misalnya NumPy tidak ada) ditampilkan di sel lingkungan, tidak
# [id] dicetak di antara sel.
with warnings.catch_warnings(record=True) as TORCH_IMPORT_WARNINGS:
    warnings.simplefilter("always")
    try:
        import torch
    except Exception as exc:
        # [ko] 계산 셀에는 PyTorch가 필요 없습니다. 빠진 이유만 기록해 둡니다.
        # [id] Sel perhitungan tidak memerlukan PyTorch; alasan ketiadaannya dicatat saja.
        torch = None
        TORCH_IMPORT_ERROR = type(exc).__name__
        if not (isinstance(exc, ModuleNotFoundError) and exc.name == "torch"):
            TORCH_IMPORT_ERROR += f": {exc}"
    else:
        TORCH_IMPORT_ERROR = None

LAB_VERSION = "v1"
BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30
# [ko] 네트워크 초기화와 합성 입력에 쓰는 시드
# [id] Seed untuk inisialisasi jaringan dan masukan sintetis
SEED = 0

# %% tags=["lang-ko", "messages"]
# 이 노트북이 출력하는 문장과 숫자 형식입니다(한국어). 키는 코드에서 쓰는 식별자입니다.
LANG = "ko"
NUMBER_SYMBOLS = {"group": ",", "decimal": ".", "minus": "-"}
MESSAGES = {
    "estimate_title": "IteraGPU Lab {version} - 밀집 가중치 추정치(가중치만)",
    "label_parameters": "파라미터",
    "label_bits": "값당 비트",
    "label_weights": "가중치",
    "label_weights_gb": "가중치 (GB)",
    "label_weights_gib": "가중치 (GiB)",
    "label_reserve_gib": "여유분 (GiB)",
    "label_total_gib": "초기 추정치 (GiB)",
    "label_not_counted": "포함하지 않음",
    "label_note": "참고",
    "rounded_up_from": "({exact} B에서 올림)",
    "assumed": "(가정)",
    "weights_plus_reserve": "(가중치 + 여유분, {total})",
    "list_separator": ", ",
    "activations": "활성화",
    "gradients": "그래디언트",
    "kv_cache": "KV 캐시",
    "optimizer_states": "옵티마이저 상태",
    "quantization_scales_and_metadata": "양자화 스케일과 메타데이터",
    "modules_kept_at_another_precision": "다른 정밀도로 유지되는 모듈",
    "note_weights_only": "가중치만 계산했으며 균일한 밀집 저장을 가정합니다. 활성화, "
    "그래디언트, KV 캐시, 옵티마이저 상태는 포함하지 않습니다.",
    "note_reserve": "여유분은 가정입니다. 부하가 이 값 안에 들어간다는 증명이 아닙니다.",
    "note_quantized": "이론적 균일 나눗셈입니다. 양자화 스케일과 다른 정밀도로 유지되는 "
    "모듈은 포함하지 않습니다.",
    "parameters_not_positive": "파라미터 수는 양의 정수여야 합니다: {value!r}",
    "bits_not_positive": "값당 비트 수는 0보다 커야 합니다: {value}",
    "reserve_negative": "여유분은 음수일 수 없습니다: {value}",
    "label_platform": "플랫폼",
    "label_seed": "시드",
    "not_installed": "설치되지 않음",
    "build_cuda": "(빌드의 CUDA)",
    "label_allocator_backend": "할당자 백엔드",
    "label_import_warning": "PyTorch 가져오기 경고",
    "no_visible_gpu": "보이는 GPU가 없습니다",
    "notebook_device_line": "{name}, 전체 {total} B, compute capability {capability}, UUID {uuid}",
    "notebook_not_a_gpu": "{device} 장치는 GPU가 아닙니다. CPU 결과는 GPU 측정이 아닙니다",
    "notebook_no_torch": "이 커널에 PyTorch가 설치되어 있지 않습니다({error}). 위의 계산 셀에는 "
    "PyTorch가 필요 없습니다",
    "cpu_only_build": "PyTorch {version}: CPU 전용 빌드입니다(CUDA나 HIP/ROCm 없음). 측정할 "
    "GPU가 없습니다",
    "sees_no_gpu": "PyTorch {version}: GPU가 보이지 않습니다(torch.cuda.is_available()이 False)",
    "no_such_gpu": "{device} GPU가 없습니다(보이는 GPU {count}개)",
    "caching_disabled": "{setting}: PyTorch가 캐싱 할당자를 우회하므로, 카운터는 무엇이 "
    "할당되든 0을 읽습니다",
    "interrupted_sigint": "사용자가 중단했습니다(SIGINT, Ctrl-C)",
    "status_ok": "성공",
    "status_failed": "실패",
    "status_interrupted": "중단",
    "already_measured": "이 커널에서 이미 측정했습니다. cuBLAS 작업 공간과 할당자 캐시가 남아 "
    "있어 model_load가 0에서 시작하지 않고 cold_forward도 첫 패스가 아닙니다. 커널을 다시 "
    "시작한 다음 모든 셀을 다시 실행하세요.",
    "cannot_measure_here": "측정하지 않았습니다: {reason}",
    "nothing_to_show": "보여 줄 결과가 없습니다: 이 커널에서는 아무것도 측정하지 않았습니다.",
    "counters_not_read": "카운터를 읽지 않습니다: {reason}",
    "model_load_not_zero": "주의: model_load가 0 B에서 시작하지 않았습니다. 이미 할당된 것이 "
    "있었습니다",
    "predicted_line": "{phase}: allocated {measured} B, 예측 {predicted} B, 차이 {difference} B",
    "column_phase": "단계",
    "column_repeat": "반복",
    "column_status": "상태",
    "phase_error_line": "{phase} {status}: {error}",
    "train_line": "{phase}: allocated {allocated} B, 모델 상태 {counted} B(예측 {predicted} B, "
    "차이 {difference} B), 활성화와 임시 텐서 {rest} B",
    "step_label": "{phase}, 스텝 {step}",
}

# %% tags=["lang-id", "messages"]
# Kalimat dan format angka yang dicetak notebook ini (bahasa Indonesia). Kuncinya adalah
# pengenal yang dipakai kode.
LANG = "id"
NUMBER_SYMBOLS = {"group": ".", "decimal": ",", "minus": "-"}
MESSAGES = {
    "estimate_title": "IteraGPU Lab {version} - estimasi bobot dense (bobot saja)",
    "label_parameters": "parameter",
    "label_bits": "bit per nilai",
    "label_weights": "bobot",
    "label_weights_gb": "bobot (GB)",
    "label_weights_gib": "bobot (GiB)",
    "label_reserve_gib": "margin (GiB)",
    "label_total_gib": "perkiraan awal (GiB)",
    "label_not_counted": "tidak dihitung",
    "label_note": "catatan",
    "rounded_up_from": "(dibulatkan ke atas dari {exact} B)",
    "assumed": "(asumsi)",
    "weights_plus_reserve": "(bobot + margin, {total})",
    "list_separator": ", ",
    "activations": "aktivasi",
    "gradients": "gradien",
    "kv_cache": "cache KV",
    "optimizer_states": "status optimizer",
    "quantization_scales_and_metadata": "skala dan metadata kuantisasi",
    "modules_kept_at_another_precision": "modul yang disimpan pada presisi lain",
    "note_weights_only": "Bobot saja, dengan penyimpanan dense yang seragam: aktivasi, "
    "gradien, cache KV, dan status optimizer tidak dihitung.",
    "note_reserve": "Margin adalah asumsi, bukan bukti bahwa beban muat dalam angka ini.",
    "note_quantized": "Pembagian seragam teoretis: skala kuantisasi dan modul yang disimpan "
    "pada presisi lain tidak dihitung.",
    "parameters_not_positive": "jumlah parameter harus bilangan bulat positif: {value!r}",
    "bits_not_positive": "jumlah bit per nilai harus lebih besar dari 0: {value}",
    "reserve_negative": "margin tidak boleh negatif: {value}",
    "label_platform": "Platform",
    "label_seed": "Seed",
    "not_installed": "tidak terpasang",
    "build_cuda": "(CUDA build-nya)",
    "label_allocator_backend": "Backend alokator",
    "label_import_warning": "Peringatan impor PyTorch",
    "no_visible_gpu": "tidak ada GPU yang terlihat",
    "notebook_device_line": "{name}, total {total} B, compute capability {capability}, UUID {uuid}",
    "notebook_not_a_gpu": "perangkat {device} bukan GPU; hasil CPU bukan pengukuran GPU",
    "notebook_no_torch": "PyTorch tidak terpasang di kernel ini ({error}); sel perhitungan di "
    "atas tidak memerlukannya",
    "cpu_only_build": "PyTorch {version} adalah build khusus CPU (tanpa CUDA atau HIP/ROCm): "
    "tidak ada GPU untuk diukur",
    "sees_no_gpu": "PyTorch {version} tidak melihat GPU (torch.cuda.is_available() bernilai False)",
    "no_such_gpu": "GPU {device} tidak ada ({count} terlihat)",
    "caching_disabled": "{setting} disetel: PyTorch melewati alokator cache-nya, sehingga "
    "penghitung membaca 0 apa pun yang dialokasikan",
    "interrupted_sigint": "dihentikan oleh pengguna (SIGINT, Ctrl-C)",
    "status_ok": "berhasil",
    "status_failed": "gagal",
    "status_interrupted": "terhenti",
    "already_measured": "Sudah diukur di kernel ini: ruang kerja cuBLAS dan cache alokator "
    "masih ada, sehingga model_load tidak akan dimulai dari 0 dan cold_forward bukan lagi "
    "lintasan pertama. Mulai ulang kernel, lalu jalankan lagi semua sel.",
    "cannot_measure_here": "Tidak ada yang diukur: {reason}",
    "nothing_to_show": "Tidak ada hasil untuk ditampilkan: tidak ada yang diukur di kernel ini.",
    "counters_not_read": "penghitung tidak dibaca: {reason}",
    "model_load_not_zero": "perhatian: model_load tidak dimulai dari 0 B; sudah ada yang "
    "dialokasikan",
    "predicted_line": "{phase}: allocated {measured} B, prediksi {predicted} B, selisih "
    "{difference} B",
    "column_phase": "fase",
    "column_repeat": "pengulangan",
    "column_status": "status",
    "phase_error_line": "{phase} {status}: {error}",
    "train_line": "{phase}: allocated {allocated} B, status model {counted} B (prediksi "
    "{predicted} B, selisih {difference} B), aktivasi dan tensor sementara {rest} B",
    "step_label": "{phase}, langkah {step}",
}

# %% [markdown] tags=["lang-ko"]
# ## GB와 GiB를 섞지 않고 가중치 계산하기
#
# 1 GB는 1,000,000,000바이트이고 1 GiB는 1,073,741,824바이트(2³⁰)입니다. 먼저 원시 바이트를
# 구하고, 행을 비교할 때 한 번만 변환합니다. GB 값과 GiB 값을 한 합계 안에 섞지 않습니다.
#
# 각각 2바이트(16비트)로 저장된 70억 개의 파라미터는 14,000,000,000바이트, 즉 14 GB 또는 약 13.04
# GiB를 차지합니다. 여기에 4 GiB의 여유분을 더하면 약 17.04 GiB가 됩니다. 이 합계가 초기
# 추정치입니다. 준비 단계에서 세운 가정일 뿐이며, 부하가 이 값 안에 들어간다는 것을 증명하지
# 않습니다.
#
# 이 계산에는 활성화, 그래디언트, KV 캐시, 옵티마이저 상태가 포함되지 않습니다. 소수 값은 정확한
# 분수에서 계산해 소수 둘째 자리에서 반올림합니다. 합계도 반올림된 값끼리 더하지 않고 정확한
# 값에서 구합니다.

# %% [markdown] tags=["lang-id"]
# ## Menghitung bobot tanpa mencampur GB dan GiB
#
# Satu GB sama dengan 1.000.000.000 byte; satu GiB sama dengan 1.073.741.824 byte (2³⁰). Hitung
# dulu byte mentahnya, lalu terapkan satu konversi saja untuk membandingkan baris. Nilai GB dan
# GiB tidak pernah dicampur dalam satu jumlah.
#
# Tujuh miliar parameter yang masing-masing disimpan dalam dua byte (16 bit) mewakili
# 14.000.000.000 byte: 14 GB, atau sekitar 13,04 GiB. Menambahkan margin 4 GiB menghasilkan
# sekitar 17,04 GiB. Jumlah ini adalah perkiraan awal, hanya asumsi perencanaan; ia tidak
# membuktikan bahwa suatu beban akan muat di dalamnya.
#
# Perhitungan ini tidak mencakup aktivasi, gradien, cache KV, maupun status optimizer. Nilai
# desimal dihitung dari pecahan yang eksak lalu dibulatkan ke dua angka di belakang koma. Totalnya
# juga dihitung dari nilai eksak, bukan dari nilai yang sudah dibulatkan.

# %% tags=["functions"]
# [ko] mesure_memoire.py에서 복제한 함수입니다. 같은 공식, 같은 반올림, 같은 문장을 씁니다.
# [id] Disalin dari mesure_memoire.py: rumus, pembulatan, dan kalimat yang sama.
NOT_COUNTED = ["activations", "gradients", "kv_cache", "optimizer_states"]
NOT_COUNTED_QUANTIZED = ["quantization_scales_and_metadata", "modules_kept_at_another_precision"]


def dense_weight_bytes(parameters, bits):
    # [ko] 파라미터 `parameters`개를 값마다 `bits`비트로 균일하게 저장할 때의 바이트 수
    # [id] Byte untuk `parameters` nilai yang masing-masing disimpan dalam `bits` bit (seragam)
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise ValueError(MESSAGES["parameters_not_positive"].format(value=parameters))
    bits = Fraction(bits)
    if bits <= 0:
        raise ValueError(MESSAGES["bits_not_positive"].format(value=bits))
    return parameters * bits / 8


def ceil_fraction(value):
    return -((-value.numerator) // value.denominator)


def format_decimal(value, places=2):
    # [ko] 소수 `places`자리로 반올림(0.5는 올림)한 다음 끝의 0을 지웁니다.
    # [id] Bulatkan ke `places` angka desimal (setengah ke atas), lalu buang nol di belakang.
    scale = 10**places
    scaled = value * scale
    sign = "-" if scaled < 0 else ""
    scaled = abs(scaled)
    rounded = (scaled.numerator * 2 + scaled.denominator) // (2 * scaled.denominator)
    whole, frac = divmod(rounded, scale)
    text = f"{whole}.{frac:0{places}d}".rstrip("0").rstrip(".") if places else str(whole)
    return sign + text if rounded else text


def exact_decimal_text(value):
    # [ko] 분모가 2^a × 5^b인 값의 정확한 소수 전개입니다(바이트 ÷ 10^9, ÷ 2^30은 항상 끝납니다).
    # [id] Ekspansi desimal eksak dari nilai berpenyebut 2^a × 5^b (byte ÷ 10^9 atau ÷ 2^30
    # [id] selalu berakhir).
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    places = max(twos, fives)
    scaled = abs(value.numerator) * (10**places // value.denominator)
    whole, frac = divmod(scaled, 10**places)
    text = str(whole) + (f".{frac:0{places}d}".rstrip("0").rstrip(".") if places else "")
    return "-" + text if value < 0 else text


def local_text(text):
    # [ko] 점을 쓴 숫자("1234.5")를 이 노트북의 언어로 씁니다: 천 단위 구분과 소수점.
    # [id] Angka bertitik ("1234.5") ditulis dalam bahasa notebook ini: pemisah ribuan dan
    # [id] tanda desimal.
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    first = len(whole) % 3 or 3
    groups = [whole[:first]] + [whole[i : i + 3] for i in range(first, len(whole), 3)]
    text = NUMBER_SYMBOLS["group"].join(groups)
    if fraction:
        text += NUMBER_SYMBOLS["decimal"] + fraction
    return NUMBER_SYMBOLS["minus"] + text if negative else text


def shown(value):
    # [ko] 읽지 못한 값(None)은 null로 보여 줍니다. 0으로 채우지 않습니다.
    # [id] Nilai yang tidak terbaca (None) ditampilkan sebagai null, tidak diisi 0.
    return "null" if value is None else str(value)


def text_cells(text):
    # [ko] 터미널에서 차지하는 칸 수: 한글 음절은 두 칸입니다.
    # [id] Jumlah sel terminal yang ditempati: satu suku kata Hangul menempati dua sel.
    wide = ((0xAC00, 0xD7A3), (0x1100, 0x115F), (0x2E80, 0xA4CF), (0xF900, 0xFAFF))
    wide += ((0xFE30, 0xFE4F), (0xFF00, 0xFF60), (0xFFE0, 0xFFE6))
    return sum(2 if any(a <= ord(c) <= b for a, b in wide) else 1 for c in text)


def aligned(rows):
    width = max(text_cells(label) for label, _ in rows) + 2
    return [f"{label}:{' ' * (width - text_cells(label) - 1)}{value}" for label, value in rows]


def estimate(parameters, bits, reserve_gib):
    exact = dense_weight_bytes(parameters, bits)
    bits = Fraction(bits)
    reserve_gib = Fraction(reserve_gib)
    if reserve_gib < 0:
        raise ValueError(MESSAGES["reserve_negative"].format(value=reserve_gib))
    total_exact = exact + reserve_gib * BYTES_PER_GIB
    not_counted = list(NOT_COUNTED)
    notes = [MESSAGES["note_weights_only"], MESSAGES["note_reserve"]]
    if bits < 16:
        not_counted += NOT_COUNTED_QUANTIZED
        notes.append(MESSAGES["note_quantized"])
    return {
        "parameters": parameters,
        "bits": format_decimal(bits, 6),
        "weights_bytes": ceil_fraction(exact),
        "weights_bytes_exact": exact_decimal_text(exact),
        "weights_gb": format_decimal(exact / BYTES_PER_GB),
        "weights_gib": format_decimal(exact / BYTES_PER_GIB),
        "reserve_gib": format_decimal(reserve_gib, 6),
        "total_gib": format_decimal(total_exact / BYTES_PER_GIB),
        "total_bytes": ceil_fraction(total_exact),
        "not_counted": not_counted,
        "notes": notes,
    }


def format_estimate_text(result):
    m = MESSAGES
    weights_line = f"{local_text(str(result['weights_bytes']))} B"
    if Fraction(result["weights_bytes_exact"]) != result["weights_bytes"]:
        exact = local_text(result["weights_bytes_exact"])
        weights_line += " " + m["rounded_up_from"].format(exact=exact)
    gb, gib = local_text(str(BYTES_PER_GB)), local_text(str(BYTES_PER_GIB))
    total = m["weights_plus_reserve"].format(total=f"{local_text(str(result['total_bytes']))} B")
    rows = [
        (m["label_parameters"], local_text(str(result["parameters"]))),
        (m["label_bits"], local_text(result["bits"])),
        (m["label_weights"], weights_line),
        (m["label_weights_gb"], f"{local_text(result['weights_gb'])} GB (1 GB = {gb} B)"),
        (m["label_weights_gib"], f"{local_text(result['weights_gib'])} GiB (1 GiB = {gib} B)"),
        (m["label_reserve_gib"], f"{local_text(result['reserve_gib'])} GiB {m['assumed']}"),
        (m["label_total_gib"], f"{local_text(result['total_gib'])} GiB {total}"),
        (m["label_not_counted"], m["list_separator"].join(m[n] for n in result["not_counted"])),
    ]
    rows += [(m["label_note"], note) for note in result["notes"]]
    return "\n".join([m["estimate_title"].format(version=LAB_VERSION), *aligned(rows)]) + "\n"


# %% tags=["estimate"]
PARAMETERS = 7_000_000_000
BITS = 16
RESERVE_GIB = 4

print(format_estimate_text(estimate(PARAMETERS, BITS, RESERVE_GIB)), end="")

# %% [markdown] tags=["lang-ko"]
# ## 4비트: 이론적인 나누기
#
# 같은 파라미터를 4비트로 나누면 균일한 압축 저장을 가정하게 됩니다. 실제 양자화 로딩은 스케일 및
# 기타 정보를 추가하고 일부 모듈을 다른 정밀도로 유지할 수 있으며, 이 계산은 그것을 세지 않습니다.
# 따라서 가중치 저장 형식과 계산 형식을 기록지에 따로 적으세요.

# %% [markdown] tags=["lang-id"]
# ## Empat bit: pembagian teoretis
#
# Membagi parameter yang sama pada empat bit mengasumsikan penyimpanan padat yang seragam.
# Pemuatan terkuantisasi yang sebenarnya dapat menambahkan skala dan informasi lain, serta
# mempertahankan sebagian modul pada presisi lain; perhitungan ini tidak menghitung semua itu.
# Karena itu, catat format penyimpanan bobot dan format komputasi secara terpisah di lembar
# catatan Anda.

# %% tags=["estimate-4bit"]
print(format_estimate_text(estimate(PARAMETERS, 4, RESERVE_GIB)), end="")

# %% [markdown] tags=["lang-ko"]
# ## 환경 기록하기
#
# 측정하기 전에 환경을 적어 둡니다. Python, 플랫폼, PyTorch 버전과 그 빌드가 CUDA용인지
# HIP/ROCm용인지(`torch.version.cuda`, `torch.version.hip`), 보이는 장치와 그 UUID, 할당자
# 백엔드, 그리고 결과에 영향을 주는 환경 변수입니다. 보이는 GPU를 고르는 변수
# (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`),
# 할당자 설정(`PYTORCH_ALLOC_CONF`, 예전 이름 `PYTORCH_CUDA_ALLOC_CONF`,
# `PYTORCH_HIP_ALLOC_CONF`, 캐시를 끄는 `PYTORCH_NO_CUDA_MEMORY_CACHING`, `CUDA_MODULE_LOADING`),
# cuBLAS 작업 공간의 크기를 정하는 변수(`CUBLAS_WORKSPACE_CONFIG`, `CUBLASLT_WORKSPACE_SIZE`)를
# 기록합니다.
#
# 이 셀은 장치의 속성만 읽습니다. 여유 메모리(`mem_get_info`)는 묻지 않습니다. 그 호출은 묻는
# 장치마다 수백 MiB의 CUDA 컨텍스트를 만들기 때문입니다. 스크립트의 `environment` 명령은 요청한
# 장치에만 여유 메모리를 묻고, 드라이버 버전과 드라이버가 지원하는 CUDA 버전도 기록합니다.
#
# PyTorch의 HIP/ROCm 빌드도 `torch.cuda`라는 이름을 그대로 사용합니다. 두 하드웨어 계열을 비교하기
# 전에 실제로 설치된 백엔드를 확인하세요. 같은 Python 함수를 쓴다고 해서 커널, 정밀도, 결과가
# 같다는 것이 입증되지는 않습니다.

# %% [markdown] tags=["lang-id"]
# ## Mencatat lingkungan
#
# Sebelum mengukur, catat lingkungannya: Python, platform, versi PyTorch dan apakah build-nya
# untuk CUDA atau HIP/ROCm (`torch.version.cuda`, `torch.version.hip`), perangkat yang terlihat
# beserta UUID-nya, backend alokator, serta variabel lingkungan yang memengaruhi hasil: variabel
# yang memilih GPU yang terlihat (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`,
# `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`), pengaturan alokator (`PYTORCH_ALLOC_CONF`, nama
# lamanya `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_HIP_ALLOC_CONF`, `PYTORCH_NO_CUDA_MEMORY_CACHING`
# yang mematikan cache, dan `CUDA_MODULE_LOADING`), serta variabel yang menentukan ukuran ruang
# kerja cuBLAS (`CUBLAS_WORKSPACE_CONFIG`, `CUBLASLT_WORKSPACE_SIZE`).
#
# Sel ini hanya membaca properti perangkat. Sel ini tidak menanyakan memori bebas
# (`mem_get_info`), karena panggilan itu membuat konteks CUDA berukuran ratusan MiB pada setiap
# perangkat yang ditanya. Perintah `environment` pada skrip hanya menanyakan memori bebas perangkat
# yang diminta, dan juga mencatat versi driver serta versi CUDA yang didukung driver.
#
# Build HIP/ROCm dari PyTorch menggunakan kembali nama `torch.cuda`. Identifikasi backend yang
# benar-benar terpasang sebelum membandingkan dua keluarga perangkat keras: penggunaan fungsi
# Python yang sama tidak membuktikan bahwa kernel, presisi, atau hasilnya setara.

# %% tags=["environment"]
ENVIRONMENT_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "CUDA_MODULE_LOADING",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUBLASLT_WORKSPACE_SIZE",
)


rows = [
    ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
    (MESSAGES["label_platform"], platform.platform()),
    (MESSAGES["label_seed"], str(SEED)),
]
if torch is None:
    rows.append(("PyTorch", f"{MESSAGES['not_installed']} ({TORCH_IMPORT_ERROR})"))
else:
    rows.append(("PyTorch", torch.__version__))
    rows.append(("torch.version.cuda", f"{shown(torch.version.cuda)} {MESSAGES['build_cuda']}"))
    rows.append(("torch.version.hip", shown(torch.version.hip)))
    if torch.cuda.is_available():
        rows.append((MESSAGES["label_allocator_backend"], torch.cuda.get_allocator_backend()))
        for i in range(torch.cuda.device_count()):
            # [ko] 속성만 읽습니다. mem_get_info는 묻는 장치마다 CUDA 컨텍스트를 만듭니다.
            # [id] Hanya properti yang dibaca: mem_get_info membuat konteks CUDA pada setiap
            # [id] perangkat yang ditanya.
            props = torch.cuda.get_device_properties(i)
            line = MESSAGES["notebook_device_line"].format(
                name=props.name,
                total=local_text(str(props.total_memory)),
                capability=f"{props.major}.{props.minor}",
                uuid=getattr(props, "uuid", None),
            )
            rows.append((f"cuda:{i}", line))
    else:
        rows.append(("GPU", f"{MESSAGES['no_visible_gpu']} (torch.cuda.is_available() = False)"))
rows += [(name, shown(os.environ.get(name))) for name in ENVIRONMENT_VARIABLES]
for caught in TORCH_IMPORT_WARNINGS:
    warning = " ".join(str(caught.message).split())
    rows.append((MESSAGES["label_import_warning"], f"{caught.category.__name__}: {warning}"))
print("\n".join(aligned(rows)))

# %% [markdown] tags=["lang-ko"]
# ## 각 단계를 구획한 다음 피크 기록하기
#
# GPU 연산은 완료되기 전에 큐에 들어갈 수 있습니다. 그래서 각 단계는 다음 프로토콜로 구획합니다.
#
# 1. 단계에 이름을 붙이고 정확한 입력을 기록합니다.
# 2. 장치를 동기화(`torch.cuda.synchronize`)한 다음 시작 allocated와 reserved를 기록합니다.
# 3. 같은 장치에서 `reset_peak_memory_stats`를 호출합니다.
# 4. 이후에 필요한 출력을 보존하면서 단계를 실행합니다.
# 5. 동기화하고 두 피크와 두 종료 수준을 기록한 다음 성공 또는 오류를 남깁니다.
# 6. 원시 결과, 크기, 구성을 유지하고, 누락된 측정값을 0으로 채우지 않습니다.
#
# `memory_allocated`는 PyTorch가 추적하는 텐서가 차지한 바이트이고, `memory_reserved`는 캐시가
# 있는 할당자가 관리하는 메모리로, 이미 텐서에 쓰인 메모리도 포함합니다. 둘을 더하면 일부를 두 번
# 세게 되므로 별도의 열로 유지하세요. max 변형은 마지막 초기화 이후의 절대 피크이며, 시작 시점에
# 이미 있던 할당까지 포함합니다. 두 피크의 차이는 캐시를 측정하지 않습니다. 두 최댓값이 같은
# 순간의 상태를 나타낸다는 보장이 없기 때문입니다.
#
# `reset_peak_memory_stats`는 텐서를 해제하지 않습니다. 종료 수준에서 시작 수준을 뺀 값을 모든
# 임시 텐서의 정확한 용량으로 제시하지 마세요. 단계 중에 이전 객체가 해제되었을 수도 있습니다.

# %% [markdown] tags=["lang-id"]
# ## Membatasi setiap fase sebelum mencatat puncaknya
#
# Operasi GPU dapat diantrekan sebelum selesai. Karena itu setiap fase dibatasi dengan protokol
# berikut.
#
# 1. Beri nama pada fase dan catat inputnya secara persis.
# 2. Sinkronkan perangkat (`torch.cuda.synchronize`), lalu catat allocated dan reserved awal.
# 3. Panggil `reset_peak_memory_stats` pada perangkat yang sama.
# 4. Jalankan fase dengan menyimpan output yang diperlukan untuk langkah berikutnya.
# 5. Sinkronkan, catat kedua puncak dan kedua level akhir, lalu catat berhasil atau gagal.
# 6. Simpan hasil mentah, dimensi, dan konfigurasi; jangan mengisi pengukuran yang hilang dengan
#    nol.
#
# `memory_allocated` menggambarkan byte yang ditempati tensor yang dilacak PyTorch;
# `memory_reserved` menggambarkan memori yang dikelola alokator dengan cache, termasuk yang sudah
# dipakai tensor tersebut. Menjumlahkan keduanya berarti menghitung sebagian memori dua kali, jadi
# simpan dalam dua kolom terpisah. Varian max adalah puncak absolut sejak reset terakhir, termasuk
# alokasi yang sudah ada sejak awal. Selisih antara kedua puncak tidak mengukur cache, karena dua
# nilai maksimum tidak selalu menggambarkan keadaan pada saat yang sama.
#
# `reset_peak_memory_stats` tidak melepaskan tensor. Jangan menyajikan level akhir dikurangi level
# awal sebagai volume pasti semua tensor sementara: objek sebelumnya juga bisa saja dilepaskan
# selama fase berlangsung.

# %% tags=["protocol"]
# [ko] mesure_memoire.py에서 복제(축약)한 부분입니다: 네트워크, 예측, 여섯 단계의 프로토콜, 단계들.
# [id] Disalin (dipersingkat) dari mesure_memoire.py: jaringan, prediksi, protokol enam langkah,
# [id] dan fase-fasenya.
DTYPE_SIZES = {"float32": 4, "float16": 2, "bfloat16": 2}
COUNTERS = (
    "start_allocated_bytes",
    "start_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "end_allocated_bytes",
    "end_reserved_bytes",
)


class AlreadyMeasuredError(RuntimeError):
    # [ko] 같은 커널의 두 번째 측정은 빈 장치에서 시작하지 않습니다.
    # [ko] 트레이스백 없이 한 줄로 보입니다.
    # [id] Pengukuran kedua di kernel yang sama tidak dimulai dari perangkat kosong; ditampilkan
    # [id] dalam satu baris, tanpa traceback.

    def _render_traceback_(self):
        return [str(self)]


def gpu_problem(device):
    # [ko] `device`를 측정할 수 없는 이유, 측정할 수 있으면 None
    # [id] Alasan `device` tidak dapat diukur, atau None bila dapat diukur
    if not device.startswith("cuda"):
        return MESSAGES["notebook_not_a_gpu"].format(device=repr(device))
    if torch is None:
        return MESSAGES["notebook_no_torch"].format(error=TORCH_IMPORT_ERROR)
    if torch.version.cuda is None and torch.version.hip is None:
        return MESSAGES["cpu_only_build"].format(version=torch.__version__)
    if not torch.cuda.is_available():
        return MESSAGES["sees_no_gpu"].format(version=torch.__version__)
    index = torch.device(device).index or 0
    if index >= torch.cuda.device_count():
        return MESSAGES["no_such_gpu"].format(device=device, count=torch.cuda.device_count())
    return None


def counters_unavailable():
    # [ko] 무엇이 할당되든 카운터가 0을 읽는 이유, 없으면 None(스크립트와 같은 판단)
    # [id] Alasan penghitung membaca 0 apa pun yang dialokasikan, atau None (seperti skrip)
    value = os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING")
    if value is not None:
        setting = f"PYTORCH_NO_CUDA_MEMORY_CACHING={value!r}"
        return MESSAGES["caching_disabled"].format(setting=setting)
    return None


def predicted_parameter_bytes(width, dtype):
    # [ko] 아키텍처에서 구한 파라미터 바이트: 원시 값과, 할당자의 512바이트 블록으로 올림한 값
    # [id] Byte parameter dari arsitektur: mentah, dan dibulatkan ke blok alokator 512 byte
    hidden = 4 * width
    numels = [width, width, hidden * width, hidden, width * hidden, width]
    sizes = [n * DTYPE_SIZES[dtype] for n in numels]
    return sum(sizes), sum(-(-s // 512) * 512 for s in sizes)


def predicted_allocations(batch, context, width, dtype):
    # [ko] model_load 뒤와 inputs 뒤의 allocated: 텐서마다 512 B 단위로 올림
    # [id] allocated setelah model_load dan setelah inputs: setiap tensor dibulatkan ke 512 B
    _, model_load = predicted_parameter_bytes(width, dtype)
    s = batch * context * width * DTYPE_SIZES[dtype]
    inputs = -(-s // 512) * 512
    return model_load, model_load + inputs


def build_network(width, device, dtype):
    nn = torch.nn
    kw = {"device": device, "dtype": dtype}
    layers = [
        ("norm", nn.LayerNorm(width, **kw)),
        ("up", nn.Linear(width, 4 * width, **kw)),
        ("act", nn.GELU()),
        ("down", nn.Linear(4 * width, width, **kw)),
    ]
    return nn.Sequential(OrderedDict(layers)).eval()


def read_counters(record, keys, device):
    cuda = torch.cuda
    readers = {
        "start_allocated_bytes": cuda.memory_allocated,
        "start_reserved_bytes": cuda.memory_reserved,
        "peak_allocated_bytes": cuda.max_memory_allocated,
        "peak_reserved_bytes": cuda.max_memory_reserved,
        "end_allocated_bytes": cuda.memory_allocated,
        "end_reserved_bytes": cuda.memory_reserved,
    }
    # [ko] 캐시가 우회되면 카운터는 None으로 둡니다. 0은 판독값이 아닙니다.
    # [id] Bila cache dilewati, penghitung dibiarkan None: 0 bukan pembacaan.
    if counters_unavailable() is None:
        for key in keys:
            record[key] = readers[key](device)


def measure_phase(name, device, action, repeat=None):
    # [ko] 동기화, 판독, 피크 초기화, 실행, 동기화, 판독. None은 읽지 못한 값입니다.
    # [ko] Ctrl-C로 멈추면 그 단계를 `interrupted`로 남기고 마지막 값을 읽습니다.
    # [id] Sinkronisasi, baca, reset puncak, jalankan, sinkronisasi, baca; None = tidak terbaca.
    # [id] Ctrl-C menyimpan fase itu sebagai `interrupted`, beserta pembacaan terakhirnya.
    cuda = torch.cuda
    record = {"phase": name, "repeat": repeat, "status": "ok", "error": None}
    record.update(dict.fromkeys(COUNTERS))
    record["duration_ns"] = None
    cuda.synchronize(device)
    read_counters(record, COUNTERS[:2], device)
    cuda.reset_peak_memory_stats(device)
    started = time.perf_counter_ns()
    try:
        action()
    except KeyboardInterrupt:
        record["status"] = "interrupted"
        record["error"] = f"KeyboardInterrupt: {MESSAGES['interrupted_sigint']}"
    except Exception as exc:
        # [ko] 메모리 부족을 포함한 실패: 단계와 메시지를 남깁니다.
        # [id] Kegagalan, termasuk kehabisan memori: fase dan pesannya disimpan.
        record["status"] = "failed"
        record["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    cuda.synchronize(device)
    if record["status"] != "interrupted":
        record["duration_ns"] = time.perf_counter_ns() - started
    read_counters(record, COUNTERS[2:], device)
    return record


def run_measurement(device, batch, context, width, dtype, warmup, repeats):
    dev = torch.device(device)
    torch_dtype = getattr(torch, dtype)
    state = {}

    def load_model():
        torch.manual_seed(SEED)
        state["model"] = build_network(width, dev, torch_dtype)

    def make_inputs():
        generator = torch.Generator(device=dev).manual_seed(SEED)
        shape = (batch, context, width)
        state["inputs"] = torch.randn(shape, generator=generator, device=dev, dtype=torch_dtype)

    def forward():
        with torch.inference_mode():
            state["output"] = state["model"](state["inputs"])

    def warm_up():
        for _ in range(warmup):
            forward()

    plan = [("model_load", load_model, None), ("inputs", make_inputs, None)]
    plan += [("cold_forward", forward, None), ("warmup", warm_up, None)]
    plan += [("warm_forward", forward, i) for i in range(1, repeats + 1)]
    phases = []
    for name, action, repeat in plan:
        phases.append(measure_phase(name, dev, action, repeat))
        label = name if repeat is None else f"{name} {repeat}/{repeats}"
        print(f"{label}: {MESSAGES['status_' + phases[-1]['status']]}")
        if phases[-1]["status"] != "ok":
            break
    return phases


# %% [markdown] tags=["lang-ko"]
# ## 단계: 첫 번째 패스와 워밍업 이후 패스
#
# 측정은 `model_load`, `inputs`, `cold_forward`, `warmup`, `warm_forward`를 구분합니다.
#
# - `model_load`: 장치 위에 작은 네트워크(LayerNorm → Linear(width, 4×width) → GELU →
#   Linear(4×width, width))를 만듭니다. 아키텍처로부터 계산한 파라미터 바이트(numel × 원소
#   크기)와, 캐시 할당자의 512바이트 블록으로 올림한 값을 이 단계 뒤의 allocated 값 옆에 적습니다.
# - `inputs`: (batch, context, width) 모양의 합성 입력을 만듭니다. 여기서 context는 텐서의 한
#   차원일 뿐, KV 캐시가 있는 실제 LLM의 컨텍스트 길이가 아닙니다.
# - `cold_forward`: 장치 초기화 후 소형 모델의 첫 번째 순전파입니다. 서버, 드라이버, 서비스의 전체
#   시작 시간을 측정하지 않습니다.
# - `warmup`: 반복 전에 정해진 횟수만큼 순전파를 실행합니다. 그 횟수를 기록합니다.
# - `warm_forward`: 같은 프로세스 안에서 기존 상태를 활용하는 반복이며, 반복마다 따로 기록합니다.
#
# 다음 셀의 값은 검증 사례입니다: batch 1, context 16, width 64, float32, 워밍업 1회, 반복 2회.
# 처음에는 적당한 크기로 시작하고, 한 번에 하나의 차원만 바꾸세요. 이전 객체나 예약을 남길 수 있는
# 조건을 바꿀 때는 새 프로세스(새 커널)에서 새 시리즈를 시작하세요.

# %% [markdown] tags=["lang-id"]
# ## Fase: lintasan pertama dan lintasan setelah pemanasan
#
# Pengukuran membedakan `model_load`, `inputs`, `cold_forward`, `warmup`, dan `warm_forward`.
#
# - `model_load`: membangun jaringan kecil di perangkat (LayerNorm → Linear(width, 4×width) → GELU
#   → Linear(4×width, width)). Byte parameter yang dihitung dari arsitektur (numel × ukuran
#   elemen), beserta nilai yang dibulatkan ke atas ke blok 512 byte alokator cache, dicatat di
#   samping nilai allocated setelah fase ini.
# - `inputs`: membuat input sintetis berbentuk (batch, context, width). Di sini context hanyalah
#   satu dimensi tensor, bukan panjang konteks LLM sungguhan dengan cache KV.
# - `cold_forward`: lintasan maju pertama model kecil setelah inisialisasi perangkat. Ini tidak
#   mengukur seluruh permulaan server, driver, atau layanan.
# - `warmup`: sejumlah lintasan maju sebelum pengulangan; jumlahnya dicatat.
# - `warm_forward`: pengulangan dalam proses yang sama yang memanfaatkan status yang sudah ada;
#   setiap pengulangan dicatat terpisah.
#
# Nilai pada sel berikut adalah kasus validasi: batch 1, context 16, width 64, float32, satu
# pemanasan, dan dua pengulangan. Mulailah dengan dimensi yang sederhana, lalu ubah satu dimensi
# pada satu waktu. Jika Anda mengubah kondisi yang dapat meninggalkan objek atau reservasi
# sebelumnya, mulailah rangkaian baru dalam proses baru (kernel baru).

# %% tags=["parameters"]
# [ko] 실습의 검증 사례입니다. 한 번에 차원 하나만 바꾸세요.
# [id] Kasus validasi lab; ubah satu dimensi pada satu waktu.
DEVICE = "cuda:0"
BATCH, CONTEXT, WIDTH = 1, 16, 64
DTYPE = "float32"
WARMUP, REPEATS = 1, 2

# %% [markdown] tags=["lang-ko"]
# ## 측정 실행하기
#
# 다음 셀은 PyTorch와 접근 가능한 GPU(CUDA 또는 HIP/ROCm)가 필요합니다. 둘 중 하나라도 없으면 측정할
# 수 없는 이유를 알리고 아무것도 측정하지 않습니다. CPU 결과를 GPU 측정으로 해석해서는 안 되기
# 때문입니다. 이어지는 결과 셀은 보여 줄 결과가 없다고 알리며, 위의 계산 셀은 GPU 없이도
# 유효합니다.
#
# 단계가 실패하면(메모리 부족 포함) 그 단계와 오류 메시지, 마지막으로 읽은 값을 남기고 이후 단계는
# 실행하지 않습니다. Ctrl-C(커널 중단)로 멈추면 중단된 단계를 `interrupted`로 남기고 마지막 값을
# 읽습니다.
#
# 이 셀은 커널마다 한 번만 측정합니다. 같은 커널에서 다시 실행하면 cuBLAS 작업 공간과 할당자
# 캐시가 남아 있어 `model_load`가 0에서 시작하지 않고 `cold_forward`도 더 이상 첫 패스가 아닙니다.
# 그래서 두 번째 실행은 커널을 다시 시작할 때까지 거부됩니다.

# %% [markdown] tags=["lang-id"]
# ## Menjalankan pengukuran
#
# Sel berikut memerlukan PyTorch dan GPU yang dapat diakses (CUDA atau HIP/ROCm). Jika salah
# satunya tidak ada, sel ini menjelaskan mengapa pengukuran tidak dapat dilakukan dan tidak mengukur
# apa pun: tidak ada hasil CPU yang boleh ditafsirkan sebagai pengukuran GPU. Sel hasil berikutnya
# menyatakan bahwa tidak ada hasil untuk ditampilkan, dan sel perhitungan di atas tetap berlaku
# tanpa GPU.
#
# Jika sebuah fase gagal (termasuk kehabisan memori), fase tersebut, pesan kesalahannya, dan nilai
# terakhir yang terbaca tetap disimpan, dan fase berikutnya tidak dijalankan. Jika Anda
# menghentikannya dengan Ctrl-C (interupsi kernel), fase yang terhenti disimpan sebagai
# `interrupted` beserta nilai terakhirnya.
#
# Sel ini mengukur sekali per kernel. Menjalankannya lagi di kernel yang sama akan mewarisi ruang
# kerja cuBLAS dan cache alokator, sehingga `model_load` tidak lagi dimulai dari 0 dan
# `cold_forward` bukan lagi lintasan pertama. Karena itu, jalankan kedua ditolak sampai kernel
# dimulai ulang.

# %% tags=["measure"]
# [ko] 같은 커널에서 두 번째로 측정하면 빈 장치에서 시작하지 않으므로 거부합니다.
# [id] Pengukuran kedua di kernel yang sama ditolak, karena tidak dimulai dari perangkat kosong.
if globals().get("MEASURED_IN_THIS_KERNEL"):
    raise AlreadyMeasuredError(MESSAGES["already_measured"])
problem = gpu_problem(DEVICE)
if problem is None:
    MEASURED_IN_THIS_KERNEL = True
    phases = run_measurement(DEVICE, BATCH, CONTEXT, WIDTH, DTYPE, WARMUP, REPEATS)
else:
    # [ko] GPU 없이는 아무것도 측정하지 않습니다. 이유를 알리고, 다음 셀은 결과가 없다고 알립니다.
    # [id] Tanpa GPU tidak ada yang diukur: alasannya dicetak, dan sel berikutnya menyatakan
    # [id] bahwa tidak ada hasil.
    phases = []
    print(MESSAGES["cannot_measure_here"].format(reason=problem))

# %% [markdown] tags=["lang-ko"]
# ## 결과 읽기
#
# 모든 값은 원시 바이트입니다. 읽지 못한 값은 `null`로 남기며 0으로 채우지 않습니다.
# `PYTORCH_NO_CUDA_MEMORY_CACHING`이 설정되어 있으면 카운터가 할당과 무관하게 0을 읽으므로 모든
# 카운터를 `null`로 둡니다.
#
# 예측은 스크립트의 `predict`와 같은 규칙입니다. 각 텐서를 512바이트 단위로 올림하면 `model_load`와
# `inputs` 뒤의 allocated 값이 나옵니다. 첫 행렬 곱셈이 PyTorch 할당자를 통해 가져가는 cuBLAS 작업
# 공간은 예측하지 않으므로, `cold_forward` 뒤의 차이는 모델이 아니라 그 작업 공간 같은 라이브러리
# 메모리입니다. 결과 파일로 남기려면 같은 차원으로 스크립트의 `measure` 명령을 실행하세요.
# 스크립트는 기존 파일을 덮어쓰지 않습니다.

# %% [markdown] tags=["lang-id"]
# ## Membaca hasil
#
# Semua nilai adalah byte mentah. Nilai yang tidak terbaca dibiarkan `null` dan tidak diisi dengan
# nol. Bila `PYTORCH_NO_CUDA_MEMORY_CACHING` disetel, penghitung membaca 0 apa pun yang
# dialokasikan, sehingga semua penghitung dibiarkan `null`.
#
# Prediksinya memakai aturan yang sama dengan `predict` pada skrip: membulatkan setiap tensor ke
# atas ke kelipatan 512 byte memberikan nilai allocated setelah `model_load` dan `inputs`. Ruang
# kerja cuBLAS yang diambil perkalian matriks pertama melalui alokator PyTorch tidak diprediksi,
# jadi selisih setelah `cold_forward` adalah memori pustaka seperti ruang kerja itu, bukan model.
# Untuk menyimpan hasil dalam berkas, jalankan perintah `measure` pada skrip dengan dimensi yang
# sama; skrip tidak menimpa berkas yang sudah ada.

# %% tags=["results"]
# [ko] 측정 셀을 건너뛰었거나 측정하지 못했으면 보여 줄 것이 없습니다.
# [id] Bila sel pengukuran dilewati atau tidak mengukur apa pun, tidak ada yang ditampilkan.
measured_phases = globals().get("phases") or []
if not measured_phases:
    print(MESSAGES["nothing_to_show"])
else:
    model_load_predicted, inputs_predicted = predicted_allocations(BATCH, CONTEXT, WIDTH, DTYPE)
    if counters_unavailable():
        print(MESSAGES["counters_not_read"].format(reason=counters_unavailable()))
    if measured_phases[0]["start_allocated_bytes"] not in (0, None):
        print(MESSAGES["model_load_not_zero"])
    # [ko] 실행된 단계만 봅니다. 실패나 중단은 inputs 전에 멈출 수 있습니다.
    # [id] Hanya fase yang berjalan: kegagalan atau interupsi bisa berhenti sebelum inputs.
    predictions = (model_load_predicted, inputs_predicted)
    for record, predicted in zip(measured_phases, predictions, strict=False):
        measured = record["end_allocated_bytes"]
        line = MESSAGES["predicted_line"].format(
            phase=record["phase"],
            measured="null" if measured is None else local_text(str(measured)),
            predicted=local_text(str(predicted)),
            difference="null" if measured is None else local_text(str(measured - predicted)),
        )
        print(line)
    columns = ["phase", "repeat", "status", *COUNTERS, "duration_ns"]
    header = [MESSAGES["column_phase"], MESSAGES["column_repeat"], MESSAGES["column_status"]]
    print(" | ".join([*header, *COUNTERS, "duration_ns"]))
    for record in measured_phases:
        cells = []
        for key in columns:
            value = record.get(key)
            if key == "status":
                cells.append(MESSAGES["status_" + value])
            elif isinstance(value, int):
                cells.append(local_text(str(value)))
            else:
                cells.append(shown(value))
        print(" | ".join(cells))
    for record in measured_phases:
        if record["error"]:
            status = MESSAGES["status_" + record["status"]]
            error_line = MESSAGES["phase_error_line"]
            print(error_line.format(phase=record["phase"], status=status, error=record["error"]))

# %% [markdown] tags=["lang-ko"]
# ## 학습 스텝 측정하기
#
# 같은 네트워크로 학습 스텝을 측정합니다. 입력과 같은 모양의 목표값과 평균 제곱 오차 손실을
# 붙이고, `model_load`, `inputs` 다음에 스텝마다 `forward`, `loss`, `backward`,
# `optimizer_step`, `zero_grad`를 각각 하나의 단계로 구획합니다. 첫 스텝은 따로 봅니다.
# 옵티마이저(torch.optim의 AdamW 또는 SGD)는 첫 `optimizer_step`에서 상태를 만들기 때문입니다.
#
# 단계가 끝날 때마다 텐서를 훑어 파라미터, 그래디언트, 옵티마이저 상태가 차지한 바이트를
# 텐서마다 512바이트로 올림해 셉니다(모델 상태). allocated에서 모델 상태를 뺀 나머지는
# 활성화와 임시 텐서로, 계산한 값입니다. 입력과 cuBLAS 작업 공간도 여기에 들어갑니다. 모델
# 상태는 스크립트의 `predict --task train`과 같은 규칙으로 예측해 옆에 적습니다. 그래디언트는
# `backward`에서 생겨 `zero_grad`에서 사라지고, AdamW의 두 모멘트는 첫 `optimizer_step`에서
# 생겨 남습니다.
#
# 앞의 측정 셀을 실행했다면 cuBLAS 작업 공간이 이미 있으므로 `model_load`는 0에서 시작하지
# 않습니다. 모델 상태의 비교는 그래도 정확합니다. 결과 파일로 남기려면 스크립트의
# `measure --task train`을 쓰고, 여러분의 루프는 스크립트의 `Recorder`로 측정하세요.

# %% [markdown] tags=["lang-id"]
# ## Mengukur langkah pelatihan
#
# Langkah pelatihan diukur dengan jaringan yang sama. Sebuah target berbentuk sama dengan masukan
# dan loss galat kuadrat rata-rata ditambahkan; setelah `model_load` dan `inputs`, setiap langkah
# dibatasi menjadi fase `forward`, `loss`, `backward`, `optimizer_step`, dan `zero_grad`.
# Langkah pertama dilihat terpisah, karena optimizer (AdamW atau SGD dari torch.optim) membuat
# statusnya pada `optimizer_step` pertama.
#
# Di akhir setiap fase, tensornya ditelusuri untuk menghitung byte parameter, gradien, dan status
# optimizer, dengan setiap tensor dibulatkan ke atas ke 512 byte (status model). Sisa allocated
# setelah status model dikurangkan adalah aktivasi dan tensor sementara, hasil perhitungan;
# masukan dan ruang kerja cuBLAS juga termasuk di dalamnya. Status model diprediksi dengan aturan
# yang sama dengan `predict --task train` pada skrip dan dicatat di sampingnya: gradien muncul
# pada `backward` dan hilang pada `zero_grad`, dan dua momen AdamW muncul pada `optimizer_step`
# pertama lalu tetap ada.
#
# Jika sel pengukuran sebelumnya sudah dijalankan, ruang kerja cuBLAS sudah ada, jadi
# `model_load` tidak dimulai dari 0; perbandingan status model tetap tepat. Untuk menyimpan hasil
# dalam berkas, gunakan `measure --task train` pada skrip, dan ukur loop Anda sendiri dengan
# `Recorder` pada skrip.

# %% tags=["train-functions"]
# [ko] mesure_memoire.py에서 복제(축약)한 부분입니다: 텐서 훑기, 모델 상태의 예측, 학습 스텝.
# [id] Disalin (dipersingkat) dari mesure_memoire.py: penelusuran tensor, prediksi status model,
# [id] dan langkah pelatihan.
STEP_PHASES = ("forward", "loss", "backward", "optimizer_step", "zero_grad")


def model_states(model, optimizer, device):
    # [ko] 장치 위의 파라미터, 그래디언트, 옵티마이저 상태: 저장소마다 한 번, 512 B로 올림
    # [id] Parameter, gradien, dan status optimizer di perangkat: sekali per penyimpanan,
    # [id] dibulatkan ke 512 B
    seen = set()
    total = 0
    tensors = list(model.parameters())
    tensors += [p.grad for p in model.parameters() if p.grad is not None]
    tensors += [v for state in optimizer.state.values() for v in state.values()]
    for tensor in tensors:
        if not torch.is_tensor(tensor) or str(tensor.device) != device:
            continue
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            total += -(-storage.nbytes() // 512) * 512
    return total


def predicted_model_states(width, dtype, optimizer_name):
    # [ko] 단계가 끝날 때의 모델 상태(첫 스텝, 그 뒤의 스텝): 그래디언트는 파라미터와 같은
    # [ko] 모양과 형식이고, AdamW의 두 모멘트도 그렇습니다. SGD는 상태가 없습니다.
    # [id] Status model di akhir fase (langkah pertama, langkah berikutnya): gradien berbentuk
    # [id] dan bertipe sama dengan parameter, begitu pula dua momen AdamW; SGD tanpa status.
    _, parameters = predicted_parameter_bytes(width, dtype)
    states = 2 * parameters if optimizer_name == "adamw" else 0
    first = {"forward": parameters, "loss": parameters, "backward": 2 * parameters}
    first.update({"optimizer_step": 2 * parameters + states, "zero_grad": parameters + states})
    warm = {
        name: value + (states if name in ("forward", "loss", "backward") else 0)
        for name, value in first.items()
    }
    return first, warm


def run_training(device, batch, context, width, dtype, optimizer_name, steps):
    dev = torch.device(device)
    torch_dtype = getattr(torch, dtype)
    state = {}

    def load_model():
        torch.manual_seed(SEED)
        state["model"] = build_network(width, dev, torch_dtype).train()
        optim = torch.optim.AdamW if optimizer_name == "adamw" else torch.optim.SGD
        state["optimizer"] = optim(state["model"].parameters())

    def make_inputs():
        shape = (batch, context, width)
        generator = torch.Generator(device=dev).manual_seed(SEED)
        state["inputs"] = torch.randn(shape, generator=generator, device=dev, dtype=torch_dtype)
        generator = torch.Generator(device=dev).manual_seed(SEED + 1)
        state["target"] = torch.randn(shape, generator=generator, device=dev, dtype=torch_dtype)

    def forward():
        state["output"] = state["model"](state["inputs"])

    def loss():
        state["loss"] = torch.nn.functional.mse_loss(state["output"], state["target"])

    def backward():
        state["loss"].backward()
        # [ko] 그래프는 해제되었습니다. 출력과 손실도 놓아 활성화가 남지 않게 합니다.
        # [id] Grafnya sudah dilepas; keluaran dan loss juga dilepas agar tidak ada aktivasi.
        state["output"] = state["loss"] = None

    def optimizer_step():
        state["optimizer"].step()

    def zero_grad():
        state["optimizer"].zero_grad(set_to_none=True)

    steps_actions = (forward, loss, backward, optimizer_step, zero_grad)
    actions = dict(zip(STEP_PHASES, steps_actions, strict=True))
    plan = [("model_load", load_model, None), ("inputs", make_inputs, None)]
    plan += [(name, actions[name], step) for step in range(1, steps + 1) for name in STEP_PHASES]
    phases = []
    for name, action, step in plan:
        record = measure_phase(name, dev, action)
        record["step"] = step
        record["model_states"] = model_states(state["model"], state["optimizer"], str(dev))
        phases.append(record)
        label = name if step is None else MESSAGES["step_label"].format(phase=name, step=step)
        print(f"{label}: {MESSAGES['status_' + record['status']]}")
        if record["status"] != "ok":
            break
    return phases


# %% tags=["train-parameters"]
# [ko] 검증 사례의 크기로 세 스텝을 측정합니다. 옵티마이저는 "adamw" 또는 "sgd"입니다.
# [id] Tiga langkah diukur dengan ukuran kasus validasi; optimizer "adamw" atau "sgd".
TRAIN_OPTIMIZER = "adamw"
TRAIN_STEPS = 3

# %% tags=["train-measure"]
# [ko] GPU 없이는 아무것도 측정하지 않습니다. 이유를 알리고, 다음 셀은 결과가 없다고 알립니다.
# [id] Tanpa GPU tidak ada yang diukur: alasannya dicetak, dan sel berikutnya menyatakan bahwa
# [id] tidak ada hasil.
problem = gpu_problem(DEVICE)
if problem is None:
    train_phases = run_training(DEVICE, BATCH, CONTEXT, WIDTH, DTYPE, TRAIN_OPTIMIZER, TRAIN_STEPS)
else:
    train_phases = []
    print(MESSAGES["cannot_measure_here"].format(reason=problem))

# %% tags=["train-results"]
# [ko] 단계마다 모델 상태(센 값, 예측, 차이)와 allocated의 나머지를 보여 줍니다.
# [id] Untuk setiap fase: status model (dihitung, prediksi, selisih) dan sisa allocated.
measured_training = globals().get("train_phases") or []
if not measured_training:
    print(MESSAGES["nothing_to_show"])
else:
    first, warm = predicted_model_states(WIDTH, DTYPE, TRAIN_OPTIMIZER)
    _, parameters = predicted_parameter_bytes(WIDTH, DTYPE)
    for record in measured_training:
        step = record["step"]
        predicted = parameters if step is None else (first if step == 1 else warm)[record["phase"]]
        counted = record["model_states"]
        allocated = record["end_allocated_bytes"]
        rest = None if allocated is None else allocated - counted
        phase = record["phase"]
        if step is not None:
            phase = MESSAGES["step_label"].format(phase=phase, step=step)
        print(
            MESSAGES["train_line"].format(
                phase=phase,
                allocated="null" if allocated is None else local_text(str(allocated)),
                counted=local_text(str(counted)),
                predicted=local_text(str(predicted)),
                difference=local_text(str(counted - predicted)),
                rest="null" if rest is None else local_text(str(rest)),
            )
        )

# %% [markdown] tags=["lang-ko"]
# ## 해석의 한계
#
# - 불완전한 시도도 유용한 관찰입니다. 포화 전의 부분적 피크는 전체 실행의 메모리 요구량이
#   아닙니다. 하나의 차원만 줄여 성공하는 사례를 만든 다음 성공과 실패의 경계를 찾으세요.
# - `empty_cache`는 할당자 캐시의 사용되지 않는 블록을 해제할 뿐, 살아 있는 텐서는 해제하지
#   않습니다. 이 실습은 단계 사이에 호출하지 않습니다.
# - PyTorch 카운터는 PyTorch 할당자가 보는 할당만 다룹니다. 일부 NCCL 통신처럼 CUDA 라이브러리가
#   직접 하는 할당은 보이지 않을 수 있으므로, 시스템 도구와의 차이만으로 누수를 단정할 수
#   없습니다.
# - `cudaMallocAsync` 백엔드에서는 `max_memory_reserved`가 두 풀의 최고 수준을 합쳐 동시 피크의
#   상한을 줄 수 있습니다. 그래서 할당자 백엔드도 기록합니다.
# - 메모리 부족으로 실패하면 PyTorch 할당자는 오류를 내기 전에 사용하지 않는 캐시 블록을
#   해제합니다. 따라서 실패한 단계의 종료 reserved는 그 해제 이후의 값입니다.
# - 여러 GPU가 있으면 장치마다 판독을 반복하세요. `cuda:0`의 측정은 다른 GPU를 설명하지 못합니다.
# - 이 작은 네트워크는 계측 연습일 뿐입니다. 문서화된 환경에서 여러분의 부하를 실행하는
#   것만이 여러분의 여유분을 검증할 수 있습니다.
#
# 요약은 한 장짜리 크기 산정 시트에 정리하세요: 가중치 추정치, 테스트한 최대 부하, 성공 또는 실패한
# 단계, 단위를 포함한 네 가지 카운터, 환경, 선택한 결정. 계산한 것, 관찰한 것, 아직 가정하는 것을
# 구분하세요.

# %% [markdown] tags=["lang-id"]
# ## Batas penafsiran
#
# - Percobaan yang tidak tuntas tetap merupakan observasi yang berguna. Puncak sebagian sebelum
#   saturasi bukanlah kebutuhan memori dari eksekusi yang lengkap. Kurangi satu dimensi saja untuk
#   membangun kasus yang berhasil, lalu cari batas antara keberhasilan dan kegagalan.
# - `empty_cache` membebaskan blok yang tidak terpakai dari cache alokator, tanpa membebaskan
#   tensor yang masih hidup. Latihan ini tidak memanggilnya di antara fase.
# - Penghitung PyTorch hanya mencakup alokasi yang terlihat oleh alokator PyTorch. Alokasi yang
#   dilakukan langsung oleh pustaka CUDA, misalnya beberapa komunikasi NCCL, bisa tidak terlihat;
#   jadi perbedaan dengan alat sistem tidak, dengan sendirinya, membuktikan adanya kebocoran.
# - Dengan backend `cudaMallocAsync`, `max_memory_reserved` dapat menggabungkan level tertinggi
#   dari dua pool dan memberikan batas atas puncak simultan. Karena itu backend alokator juga
#   dicatat.
# - Saat kehabisan memori, alokator PyTorch melepaskan blok cache yang tidak terpakai sebelum
#   melaporkan kesalahan. Jadi reserved akhir pada fase yang gagal adalah nilai setelah
#   pelepasan itu.
# - Pada multi-kartu, ulangi pembacaan untuk setiap perangkat; pengukuran pada `cuda:0` tidak
#   menggambarkan GPU lainnya.
# - Jaringan kecil ini hanyalah latihan instrumentasi: hanya eksekusi beban Anda, dalam
#   lingkungannya yang terdokumentasi, yang dapat memvalidasi margin Anda sendiri.
#
# Rangkum hasilnya dalam lembar penentuan ukuran satu halaman: estimasi bobot, beban maksimum
# yang diuji, fase yang berhasil atau gagal, empat penghitung beserta satuannya, lingkungan, dan
# pilihan yang diambil. Pisahkan apa yang Anda hitung, apa yang Anda amati, dan apa yang
# masih Anda duga.
