"""Result labels in Korean and Indonesian; the CLI's help text stays in English."""

from __future__ import annotations

from typing import Final

MESSAGES: Final[dict[str, dict[str, str]]] = {
    "figure": {"ko": "항목", "id": "Butir"},
    "bytes_header": {"ko": "바이트 (B)", "id": "Byte (B)"},
    "stated_header": {"ko": "안내서 수치", "id": "Angka di panduan"},
    "exact_header": {"ko": "정확한 값", "id": "Nilai eksak"},
    "unit_header": {"ko": "단위", "id": "Satuan"},
    "role_input": {"ko": "입력", "id": "masukan"},
    "role_result": {"ko": "결과", "id": "hasil"},
    "weights_only": {"ko": "가중치만", "id": "Bobot saja"},
    "reserve": {"ko": "여유분", "id": "Cadangan"},
    "rough_range": {"ko": "개략적 범위", "id": "Rentang kasar"},
    "weights_title": {
        "ko": "밀집 가중치 {parameters}개 × {bits}비트 ÷ 8",
        "id": "Bobot dense {parameters} parameter × {bits} bit ÷ 8",
    },
    "weights_not_counted": {
        "ko": "포함하지 않음: 활성화, 그래디언트, 옵티마이저 상태, KV 캐시, 작업 메모리.",
        "id": "Tidak dihitung: aktivasi, gradien, status optimizer, cache KV, memori kerja.",
    },
    "quantization_not_counted": {
        "ko": "이론적 균일 나눗셈입니다. "
        "양자화 스케일과 다른 정밀도로 유지되는 모듈은 포함하지 않습니다.",
        "id": "Pembagian seragam teoretis: skala kuantisasi dan modul yang disimpan "
        "pada presisi lain tidak dihitung.",
    },
    "reserve_not_proof": {
        "ko": "여유분은 가정입니다. 부하가 이 범위에 들어간다는 증명이 아닙니다.",
        "id": "Cadangan adalah hipotesis, bukan bukti bahwa beban muat dalam rentang ini.",
    },
    "kv_cache": {"ko": "KV 캐시", "id": "Cache KV"},
    "kv_title": {
        "ko": "2 (K, V) × 레이어 {layers} × KV 헤드 {kv_heads} × 헤드 차원 {head_dim} × "
        "유지 토큰 {tokens_kept} × 값당 {bytes_per_value} B × 시퀀스 {sequences}",
        "id": "2 (K, V) × {layers} lapisan × {kv_heads} head KV × dimensi head {head_dim} × "
        "{tokens_kept} token disimpan × {bytes_per_value} B per nilai × {sequences} sekuens",
    },
    "kv_not_counted": {
        "ko": "이 항목만의 크기입니다. 처리량이나 GPU 전체 점유를 측정하지 않습니다.",
        "id": "Hanya butir ini: tidak mengukur throughput maupun okupansi GPU secara keseluruhan.",
    },
    "quantity": {"ko": "수량", "id": "Kuantitas"},
    "value_in": {"ko": "값 ({unit})", "id": "Nilai ({unit})"},
    "examples_id": {"ko": "ID", "id": "ID"},
    "examples_title": {"ko": "예제", "id": "Contoh"},
    "examples_where": {"ko": "안내서 위치", "id": "Lokasi di panduan"},
    "status_fit": {"ko": "적합", "id": "sesuai"},
    "status_check_needed": {"ko": "확인 필요", "id": "perlu diverifikasi"},
    "status_excluded": {"ko": "제외", "id": "gugur"},
    "rank": {"ko": "순위", "id": "Peringkat"},
    "card": {"ko": "카드", "id": "Kartu"},
    "nominal_gb": {"ko": "공칭 (GB)", "id": "Nominal (GB)"},
    "nominal_gib": {"ko": "공칭 (GiB)", "id": "Nominal (GiB)"},
    "margin_gib": {"ko": "공칭 여유 (GiB)", "id": "Margin nominal (GiB)"},
    "cost": {"ko": "비용 ({currency})", "id": "Biaya ({currency})"},
    "overall": {"ko": "종합", "id": "Keseluruhan"},
    "requirement_memory": {"ko": "메모리", "id": "memori"},
    "requirement_package": {"ko": "요금제", "id": "paket"},
    "shortlist_title": {
        "ko": "필요량 {need_gib} GiB, 카드 {cards}장 × {days}일",
        "id": "Kebutuhan {need_gib} GiB, {cards} kartu × {days} hari",
    },
    "reason_nominal_not_proof": {
        "ko": "공칭 용량이 필요량보다 크지만 증거는 아닙니다: "
        "실제 여유 메모리, 시스템·컨텍스트 할당, 소프트웨어를 확인하세요.",
        "id": "Kapasitas nominal di atas kebutuhan bukan bukti: periksa memori bebas, alokasi "
        "sistem dan konteks, serta perangkat lunak.",
    },
    "reason_nominal_below_need": {
        "ko": "공칭 용량이 필요량보다 작습니다.",
        "id": "Kapasitas nominal di bawah kebutuhan.",
    },
    "reason_nominal_unknown": {
        "ko": "공칭 용량이 카탈로그에 없습니다.",
        "id": "Kapasitas nominal tidak ada di katalog.",
    },
    "reason_evidence_fits": {
        "ko": "측정 결과 {evidence}: "
        "관측된 reserved 최고치와 여유분이 보고된 용량 안에 들어갑니다.",
        "id": "Hasil pengukuran {evidence}: puncak reserved yang teramati ditambah margin muat "
        "dalam kapasitas yang dilaporkan.",
    },
    "reason_evidence_margin_not_met": {
        "ko": "측정 결과 {evidence}: "
        "관측된 reserved 최고치와 여유분이 보고된 용량을 넘거나 읽히지 않았습니다.",
        "id": "Hasil pengukuran {evidence}: puncak reserved yang teramati ditambah margin melebihi "
        "kapasitas yang dilaporkan, atau tidak terbaca.",
    },
    "reason_evidence_out_of_memory": {
        "ko": "측정 결과 {evidence}: 메모리 부족으로 실패했습니다.",
        "id": "Hasil pengukuran {evidence}: gagal karena kehabisan memori.",
    },
    "reason_package_listed": {
        "ko": "같은 기간과 카드 수의 요금제가 카탈로그에 있습니다.",
        "id": "Paket dengan durasi dan jumlah kartu yang sama ada di katalog.",
    },
    "reason_package_missing": {
        "ko": "같은 기간과 카드 수의 요금제가 카탈로그에 없습니다.",
        "id": "Tidak ada paket dengan durasi dan jumlah kartu yang sama di katalog.",
    },
    "reason_no_evidence": {"ko": "증거 없음.", "id": "Belum ada bukti."},
    "reason_user_confirmed": {"ko": "사용자가 확인함.", "id": "Dikonfirmasi pengguna."},
    "reason_user_failed": {"ko": "사용자가 실패를 기록함.", "id": "Kegagalan dicatat pengguna."},
    "price_not_speed": {
        "ko": "가격은 속도 순위가 아닙니다. "
        "공칭 여유는 프로세스가 실제로 쓸 수 있는 메모리가 아닙니다.",
        "id": "Harga bukan peringkat kecepatan. Margin nominal bukan memori yang benar-benar "
        "tersedia bagi proses.",
    },
}


def message(key: str, lang: str, **values: object) -> str:
    return MESSAGES[key][lang].format(**values)
