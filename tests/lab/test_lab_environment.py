"""The environment report: the whole environment, and only the requested GPU asked for memory.

PyTorch and NVML are replaced by TEST-ONLY fakes that log what is called on which device.
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from foreign_text import english_sentences, number_separators
from lab_support import load_schema

from iteragpu.i18n.languages import CODES
from iteragpu.lab import mesure_memoire as mm


class FakeProperties(SimpleNamespace):
    pass


def fake_torch(count: int = 3, hip: str | None = None) -> Any:
    calls: list[tuple[str, int]] = []

    def properties(index: int) -> FakeProperties:
        calls.append(("get_device_properties", index))
        return FakeProperties(
            name=f"GPU {index}",
            total_memory=24 * 2**30 + index,
            major=8,
            minor=9,
            uuid=f"0000000{index}-1111-2222-3333-444444444444",
            pci_domain_id=0,
            pci_bus_id=0x41 + index,
            pci_device_id=0,
            gcnArchName="gfx942:sramecc+:xnack-" if hip else "",
        )

    def mem_get_info(index: int) -> tuple[int, int]:
        calls.append(("mem_get_info", index))  # would create a CUDA context on `index`
        return 20 * 2**30, 24 * 2**30

    cuda = SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: count,
        get_device_properties=properties,
        mem_get_info=mem_get_info,
        get_allocator_backend=lambda: "native",
    )
    return SimpleNamespace(
        __version__="2.13.0+fake",
        version=SimpleNamespace(cuda=None if hip else "12.8", hip=hip),
        cuda=cuda,
        _C=SimpleNamespace(_accelerator_getAllocatorSettings=lambda: "expandable_segments:True"),
        float32="float32",
        calls=calls,
    )


class FakeNvml:
    """TEST-ONLY stand-in for pynvml."""

    def __init__(self, count: int = 2) -> None:
        self.count = count
        self.shut_down = False

    def nvmlDeviceGetCount(self) -> int:
        return self.count

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return f"NVML GPU {handle}".encode()

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return f"GPU-{handle:08d}-1111-2222-3333-444444444444"

    def nvmlDeviceGetPciInfo(self, handle: int) -> Any:
        return SimpleNamespace(busId=f"00000000:{0x41 + handle:02X}:00.0".encode())

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> Any:
        return SimpleNamespace(total=24 * 2**30)

    def nvmlSystemGetDriverVersion(self) -> str:
        return "550.54.15"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12040

    def nvmlShutdown(self) -> None:
        self.shut_down = True


@pytest.fixture
def no_driver_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """No nvidia-smi, no NVML, no /proc or /sys files, no libcuda: each test adds its own."""
    monkeypatch.setattr(mm, "_nvidia_smi_driver_version", lambda: None)
    monkeypatch.setattr(mm, "_import_nvml", lambda lang: (None, "not importable (test)"))
    monkeypatch.setattr(mm, "_file_first_line", lambda path, pattern: None)
    monkeypatch.setattr(mm, "_libcuda_driver_cuda_version", lambda: None)


def validate_environment(env: dict[str, Any]) -> None:
    schema = load_schema()
    environment_schema = {"$defs": schema["$defs"], **schema["$defs"]["environment"]}
    jsonschema.Draft202012Validator(environment_schema).validate(env)


@pytest.mark.usefixtures("no_driver_tools")
@pytest.mark.parametrize("requested", [0, 2])
def test_only_the_requested_device_is_asked_for_its_memory(requested: int) -> None:
    torch = fake_torch(count=3)
    env = mm.collect_environment(f"cuda:{requested}", torch)
    asked = [index for call, index in torch.calls if call == "mem_get_info"]
    assert asked == [requested]
    assert [d["index"] for d in env["devices"]] == [0, 1, 2]  # the others are still listed
    for device in env["devices"]:
        assert device["requested"] is (device["index"] == requested)
        assert device["name"] == f"GPU {device['index']}"
        assert device["uuid"].startswith(f"0000000{device['index']}-")
        assert device["pci_bus_id"] == f"0000:{0x41 + device['index']:02x}:00.0"
        assert device["arch_name"] is None  # a CUDA build
        if device["requested"]:
            assert device["free_bytes"] == 20 * 2**30
        else:
            assert device["free_bytes"] is None and device["mem_get_info_total_bytes"] is None
    assert env["requested_device_usable"] is True
    validate_environment(env)


@pytest.mark.usefixtures("no_driver_tools")
@pytest.mark.parametrize("lang", CODES)
def test_a_missing_device_index_is_not_queried_and_not_usable(lang: str) -> None:
    torch = fake_torch(count=1)
    env = mm.collect_environment("cuda:3", torch, lang=lang)
    assert [call for call in torch.calls if call[0] == "mem_get_info"] == []
    assert env["requested_device_usable"] is False
    assert env["requested_device_problem"] == mm.say(lang, "no_such_gpu", device="cuda:3", count=1)


@pytest.mark.usefixtures("no_driver_tools")
def test_environment_variables_are_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {
        "CUDA_VISIBLE_DEVICES": "GPU-00000002",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "HIP_VISIBLE_DEVICES": "1",
        "ROCR_VISIBLE_DEVICES": "0,1",
        "PYTORCH_ALLOC_CONF": "expandable_segments:True",
        "PYTORCH_HIP_ALLOC_CONF": "garbage_collection_threshold:0.6",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "CUBLASLT_WORKSPACE_SIZE": "1024",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTORCH_NO_CUDA_MEMORY_CACHING", raising=False)
    env = mm.collect_environment("cuda:0", fake_torch())
    recorded = {
        **env["visible_devices"],
        **env["allocator"]["settings"],
        **env["blas_workspace"],
    }
    for name, value in values.items():
        assert recorded[name] == value
    assert env["allocator"]["settings"]["PYTORCH_NO_CUDA_MEMORY_CACHING"] is None
    assert env["allocator"]["settings_in_effect"] == "expandable_segments:True"
    assert env["allocator"]["backend"] == "native"
    assert env["allocator"]["caching_enabled"] is True
    assert env["seed"] == mm.SEED
    validate_environment(env)


@pytest.mark.usefixtures("no_driver_tools")
def test_caching_off_is_recorded_and_makes_the_counters_unreadable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    torch = fake_torch()
    env = mm.collect_environment("cuda:0", torch)
    assert env["allocator"]["caching_enabled"] is False
    assert "PYTORCH_NO_CUDA_MEMORY_CACHING" in env["allocator"]["caching_disabled_reason"]
    monkeypatch.setattr(mm, "TorchCounterSource", lambda torch, device: object())
    monkeypatch.setattr(mm, "TorchWorkload", lambda *a: object())
    args = argparse.Namespace(
        device="cuda:0", batch=1, context=16, width=64, dtype="float32", lang="id"
    )
    backend = mm._TorchBackend(torch, "cuda:0", args)
    assert backend.environment["allocator"]["caching_disabled_reason"] == mm.say(
        "id", "caching_disabled", setting="PYTORCH_NO_CUDA_MEMORY_CACHING='1'"
    )
    assert isinstance(backend.source, mm.UnreadableCounters)
    with pytest.raises(mm.CountersUnavailable):
        backend.source.memory_allocated()


@pytest.mark.usefixtures("no_driver_tools")
def test_rocm_records_the_architecture_name() -> None:
    env = mm.collect_environment("cuda:0", fake_torch(count=1, hip="6.2.41133"))
    assert env["torch"]["backend"] == "hip"
    assert env["devices"][0]["arch_name"] == "gfx942:sramecc+:xnack-"


def test_nvml_lists_every_gpu_without_torch(
    monkeypatch: pytest.MonkeyPatch, no_driver_tools: None
) -> None:
    nvml = FakeNvml(count=2)
    monkeypatch.setattr(mm, "_import_nvml", lambda lang: (nvml, None))
    env = mm.collect_environment("cuda:0", None, "ModuleNotFoundError: test")
    assert env["nvml_devices"] == [
        {
            "nvml_index": i,
            "name": f"NVML GPU {i}",
            "uuid": f"GPU-{i:08d}-1111-2222-3333-444444444444",
            "pci_bus_id": f"00000000:{0x41 + i:02X}:00.0",
            "total_memory_bytes": 24 * 2**30,
        }
        for i in range(2)
    ]
    assert env["driver"] == {
        "version": "550.54.15",
        "version_source": "nvml",
        "cuda_version": "12.4",
        "cuda_version_source": "nvml",
    }
    assert env["driver_version"] == "550.54.15"
    assert nvml.shut_down
    validate_environment(env)


DRIVER_FALLBACKS = [
    ({"smi": "555.42"}, ("555.42", "nvidia-smi")),
    ({"nvml": True}, ("550.54.15", "nvml")),
    ({"proc": "535.104.05"}, ("535.104.05", "/proc/driver/nvidia/version")),
    ({"amdgpu": "6.8.5"}, ("6.8.5", "amdgpu")),
    ({"smi": "555.42", "nvml": True, "proc": "1"}, ("555.42", "nvidia-smi")),
    ({}, (None, None)),
]


@pytest.mark.parametrize(("available", "expected"), DRIVER_FALLBACKS)
def test_driver_version_fallbacks(
    monkeypatch: pytest.MonkeyPatch,
    no_driver_tools: None,
    available: dict[str, Any],
    expected: tuple[str | None, str | None],
) -> None:
    monkeypatch.setattr(mm, "_nvidia_smi_driver_version", lambda: available.get("smi"))
    files = {
        "/proc/driver/nvidia/version": available.get("proc"),
        "/sys/module/amdgpu/version": available.get("amdgpu"),
    }
    monkeypatch.setattr(mm, "_file_first_line", lambda path, pattern: files[path])
    nvml = FakeNvml() if available.get("nvml") else None
    missing: list[str] = []
    driver = mm.collect_driver(nvml, missing, "ko")
    assert (driver["version"], driver["version_source"]) == expected
    assert (mm.say("ko", "driver_not_read") in missing) is (expected[0] is None)


def test_driver_cuda_version_falls_back_to_libcuda(
    monkeypatch: pytest.MonkeyPatch, no_driver_tools: None
) -> None:
    monkeypatch.setattr(mm, "_libcuda_driver_cuda_version", lambda: "12.8")
    driver = mm.collect_driver(None, [], "ko")
    assert (driver["cuda_version"], driver["cuda_version_source"]) == ("12.8", "libcuda")


def test_proc_version_file_is_parsed(tmp_path: Any) -> None:
    proc = tmp_path / "version"
    proc.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
        "GCC version:  gcc version 12.3.0\n"
    )
    assert mm._file_first_line(str(proc), r"Kernel Module\s+([0-9.]+)") == "550.54.15"
    assert mm._file_first_line(str(tmp_path / "missing"), r"(\S+)") is None


@pytest.mark.parametrize(("encoded", "text"), [(12040, "12.4"), (11080, "11.8"), (13000, "13.0")])
def test_cuda_version_encoding(encoded: int, text: str) -> None:
    assert mm._cuda_version_text(encoded) == text


@pytest.mark.usefixtures("no_driver_tools")
@pytest.mark.parametrize("lang", CODES)
def test_environment_text_lists_the_new_fields(lang: str) -> None:
    environment = mm.collect_environment("cuda:1", fake_torch(count=2), lang=lang)
    text = mm.format_environment_text(environment, lang)
    assert "CUBLAS_WORKSPACE_CONFIG:" in text and "CUDA_VISIBLE_DEVICES:" in text
    [seed] = [line for line in text.splitlines() if line.startswith(mm.say(lang, "label_seed"))]
    assert seed.split(":", 1)[1].strip() == "0"
    [first] = [line for line in text.splitlines() if line.startswith("cuda:0:")]
    [second] = [line for line in text.splitlines() if line.startswith("cuda:1:")]
    free = mm.say(lang, "device_free", free="", total="").strip(", ").split()[0]
    assert free not in first and free in second
    # the fake device's memory grouped as the reader groups digits (versions, compute
    # capabilities and PCI addresses are no quantities and keep their dots)
    _, group = number_separators(lang)
    assert f"{24 * 2**30:,} B".replace(",", group) in first
    assert english_sentences(text) == []
