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
}


def message(key: str, lang: str, **values: object) -> str:
    return MESSAGES[key][lang].format(**values)
