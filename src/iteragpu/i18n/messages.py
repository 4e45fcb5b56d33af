"""Result labels in every language of the list (`iteragpu.i18n.languages`); the CLI's help text
stays in English. A language of the list without its entry in a message fails a test."""

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
    "declared_gib": {"ko": "선언 용량 (GiB)", "id": "Kapasitas terdeklarasi (GiB)"},
    "effective_margin_gib": {"ko": "유효 여유 (GiB)", "id": "Margin efektif (GiB)"},
    "unknown": {"ko": "알 수 없음", "id": "tidak diketahui"},
    "cost": {"ko": "비용 ({currency})", "id": "Biaya ({currency})"},
    "overall": {"ko": "종합", "id": "Keseluruhan"},
    "requirement_memory": {"ko": "메모리", "id": "memori"},
    "requirement_package": {"ko": "요금제", "id": "paket"},
    "shortlist_title": {
        "ko": "필요량 {need_gib} GiB, 카드 {cards}장 × {days}일",
        "id": "Kebutuhan {need_gib} GiB, {cards} kartu × {days} hari",
    },
    "rank_rule": {
        "ko": "순위는 모든 요건이 적합인 후보에만 총 비용, 유효 여유, 기간 순으로 매깁니다. "
        "확인 필요 후보는 순위 없이 카탈로그 순서로, 제외된 후보는 그 뒤에 사유와 함께 나열합니다.",
        "id": "Peringkat hanya diberikan kepada kandidat yang semua persyaratannya sesuai, menurut "
        "total biaya, margin efektif, lalu jadwal. Kandidat yang perlu diverifikasi dicantumkan "
        "tanpa peringkat menurut urutan katalog, lalu kandidat yang gugur beserta alasannya.",
    },
    "nominal_convention": {
        "ko": "「공칭 (GB)」 열은 카탈로그 표기를 십진 GB(10^9 B)로 읽는 관례일 뿐, "
        "카드의 메모리가 아닙니다. 선언 용량은 공개된 도구 출력에서 가져온 값이며, "
        "빌린 장치 자신의 판독값만이 증거입니다.",
        "id": "Kolom «Nominal (GB)» adalah angka katalog yang dibaca sebagai GB desimal "
        "(10^9 B) menurut konvensi, bukan memori kartu. Kapasitas terdeklarasi diambil dari "
        "keluaran alat yang dipublikasikan; hanya pembacaan perangkat yang Anda sewa sendiri "
        "yang menjadi bukti.",
    },
    "declared_source": {
        "ko": "{card} · 선언 용량 출처: {tool} {tool_version}, {date}, {url}",
        "id": "{card} · sumber kapasitas terdeklarasi: {tool} {tool_version}, {date}, {url}",
    },
    "declared_unknown": {
        "ko": "{card} · 선언 용량: 카탈로그에 공개 출처가 없어 알 수 없습니다.",
        "id": "{card} · kapasitas terdeklarasi: tidak diketahui, katalog tidak memuat sumber "
        "publik.",
    },
    "reason_nominal_not_proof": {
        "ko": "공칭 용량이 필요량보다 크지만 증거는 아닙니다: "
        "실제 여유 메모리, 시스템·컨텍스트 할당, 소프트웨어를 확인하세요.",
        "id": "Kapasitas nominal di atas kebutuhan bukan bukti: periksa memori bebas, alokasi "
        "sistem dan konteks, serta perangkat lunak.",
    },
    "reason_above_nominal_within_declared": {
        "ko": "필요량이 공칭 {nominal_memory_gb} GB(십진 GB로 읽는 관례)보다 크지만, 장치가 "
        "선언하는 용량 {declared_memory_gib} GiB 안에 있습니다. 공칭 수치는 어느 쪽도 증명하지 "
        "않으니 측정으로 확인하세요.",
        "id": "Kebutuhan melebihi nominal {nominal_memory_gb} GB (dibaca sebagai GB desimal "
        "menurut konvensi), tetapi masih dalam kapasitas yang dideklarasikan perangkat, "
        "{declared_memory_gib} GiB. Angka nominal tidak membuktikan apa pun; periksa dengan "
        "pengukuran.",
    },
    "reason_above_nominal_declared_unknown": {
        "ko": "필요량이 공칭 {nominal_memory_gb} GB(십진 GB로 읽는 관례)보다 크고, 장치가 "
        "선언하는 용량은 카탈로그에 없습니다. 공칭 수치만으로는 제외할 수 없으니 측정으로 "
        "확인하세요.",
        "id": "Kebutuhan melebihi nominal {nominal_memory_gb} GB (dibaca sebagai GB desimal "
        "menurut konvensi), dan kapasitas yang dideklarasikan perangkat tidak ada di katalog. "
        "Angka nominal saja tidak cukup untuk menggugurkan; periksa dengan pengukuran.",
    },
    "reason_nominal_unknown": {
        "ko": "공칭 용량이 카탈로그에 없습니다.",
        "id": "Kapasitas nominal tidak ada di katalog.",
    },
    "reason_declared_below_need": {
        "ko": "필요량 {need_gib} GiB가 장치가 선언하는 용량 {declared_memory_gib} GiB보다 큽니다. "
        "어떤 프로세스도 그보다 많이 확보할 수 없습니다.",
        "id": "Kebutuhan {need_gib} GiB melebihi kapasitas yang dideklarasikan perangkat, "
        "{declared_memory_gib} GiB; tidak ada proses yang dapat memperoleh lebih dari itu.",
    },
    "reason_evidence_fits": {
        "ko": "측정 결과 {evidence}: 관측된 reserved 최고치 {peak_reserved_gib} GiB가 필요량 "
        "이상이고, 여유분을 더해도 장치가 보고한 용량 {reported_capacity_gib} GiB 안에 들어갑니다.",
        "id": "Hasil pengukuran {evidence}: puncak reserved yang teramati, "
        "{peak_reserved_gib} GiB, tidak kurang dari kebutuhan, dan ditambah margin masih muat "
        "dalam kapasitas yang dilaporkan perangkat, {reported_capacity_gib} GiB.",
    },
    "reason_evidence_below_need": {
        "ko": "측정 결과 {evidence}: 실행은 성공했지만 관측된 reserved 최고치 {peak_reserved_gib} "
        "GiB가 필요량 {need_gib} GiB보다 작습니다. 이 카드가 더 작은 부하에서 작동했다는 것일 뿐, "
        "이 필요량의 증거는 아닙니다.",
        "id": "Hasil pengukuran {evidence}: eksekusi berhasil, tetapi puncak reserved yang "
        "teramati, {peak_reserved_gib} GiB, lebih kecil dari kebutuhan {need_gib} GiB. Ini hanya "
        "menunjukkan kartu bekerja pada beban yang lebih kecil, bukan bukti untuk kebutuhan ini.",
    },
    "reason_evidence_margin_not_met": {
        "ko": "측정 결과 {evidence}: 관측된 reserved 최고치 {peak_reserved_gib} GiB에 여유분 "
        "{margin_gib} GiB를 더하면 장치가 보고한 용량 {reported_capacity_gib} GiB를 넘습니다.",
        "id": "Hasil pengukuran {evidence}: puncak reserved yang teramati, "
        "{peak_reserved_gib} GiB, ditambah margin {margin_gib} GiB melebihi kapasitas yang "
        "dilaporkan perangkat, {reported_capacity_gib} GiB.",
    },
    "reason_evidence_capacity_unknown": {
        "ko": "측정 결과 {evidence}: 장치가 보고한 전체 용량이 기록되지 않아 여유분을 확인할 수 "
        "없습니다.",
        "id": "Hasil pengukuran {evidence}: kapasitas total yang dilaporkan perangkat tidak "
        "tercatat, sehingga margin tidak dapat diperiksa.",
    },
    "reason_evidence_peak_unknown": {
        "ko": "측정 결과 {evidence}: reserved 최고치가 하나도 읽히지 않았습니다.",
        "id": "Hasil pengukuran {evidence}: tidak ada puncak reserved yang terbaca.",
    },
    "reason_evidence_readings_incomplete": {
        "ko": "측정 결과 {evidence}: 읽지 못한 카운터가 있어 실제 최고치가 더 높았을 수 있습니다.",
        "id": "Hasil pengukuran {evidence}: ada penghitung yang tidak terbaca, sehingga puncak "
        "sebenarnya mungkin lebih tinggi.",
    },
    "reason_evidence_out_of_memory": {
        "ko": "측정 결과 {evidence}: reserved 최고치 {peak_reserved_gib} GiB, 곧 필요량 "
        "{need_gib} GiB 이하에서 메모리 부족으로 실패했습니다.",
        "id": "Hasil pengukuran {evidence}: gagal karena kehabisan memori pada puncak reserved "
        "{peak_reserved_gib} GiB, tidak lebih dari kebutuhan {need_gib} GiB.",
    },
    "reason_evidence_out_of_memory_above_need": {
        "ko": "측정 결과 {evidence}: 메모리 부족으로 실패했지만, 그 전에 필요량 {need_gib} GiB보다 "
        "많은 {peak_reserved_gib} GiB를 reserved로 확보했습니다. 이 필요량의 실패도 성공도 "
        "증명하지 않습니다.",
        "id": "Hasil pengukuran {evidence}: gagal karena kehabisan memori, tetapi sebelumnya "
        "sempat memegang {peak_reserved_gib} GiB reserved, lebih dari kebutuhan {need_gib} GiB. "
        "Ini tidak membuktikan kegagalan maupun keberhasilan untuk kebutuhan ini.",
    },
    "reason_evidence_not_completed": {
        "ko": "측정 결과 {evidence}: 메모리 부족이 아닌 이유로 실패했거나 중단되어, 메모리에 대해 "
        "아무것도 말해 주지 않습니다.",
        "id": "Hasil pengukuran {evidence}: gagal bukan karena kehabisan memori, atau dihentikan, "
        "sehingga tidak menyatakan apa pun tentang memori.",
    },
    "reason_evidence_conflict": {
        "ko": "측정 결과 {evidence}가 서로 어긋납니다. 하나는 들어간다고, 다른 하나는 메모리 "
        "부족이라고 말합니다.",
        "id": "Hasil pengukuran {evidence} saling bertentangan: yang satu muat, yang lain "
        "kehabisan memori.",
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
        "ko": "가격은 속도 순위가 아닙니다.",
        "id": "Harga bukan peringkat kecepatan.",
    },
}


def message(key: str, lang: str, **values: object) -> str:
    return MESSAGES[key][lang].format(**values)
