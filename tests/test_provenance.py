"""Tests for build_hooks.provenance."""

import pytest

from build_hooks import provenance, store


def test_collect_describes_this_machine():
    """The provenance block names the CPU, threads, software and a slug-safe machine id."""
    prov = provenance.collect(threads=2)
    cpu = prov["machine_info"]["cpu"]
    assert cpu["threads_used"] == 2 and cpu["brand"]
    assert prov["software"]["torch"].startswith("2.13.0")
    assert prov["software"]["float32_matmul_precision"] in {"highest", "high", "medium"}
    doc = {"schema_version": store.SCHEMA_VERSION, "mode": "quick", "environment_key": "x" * 10,
           **prov, "experiments": {}, "benchmarks": []}
    store.validate(doc, "provenance")  # what collect() produces is schema-valid


def test_machine_id_is_stable_and_hardware_specific():
    """Same hardware gives the same id; a different GPU gives another."""
    machine = {"cpu": {"brand": "X", "arch": "x86_64", "threads_used": 8}, "gpu": None}
    with_gpu = {**machine, "gpu": {"name": "NVIDIA H200"}}
    assert provenance.machine_id(machine) == provenance.machine_id(dict(machine))
    assert provenance.machine_id(machine) != provenance.machine_id(with_gpu)
    assert provenance.machine_id(with_gpu).startswith("nvidia-h200-")


def test_flops_per_cycle_follows_the_instruction_set():
    """AVX-512 on Intel counts 64 FP32 FLOPs/cycle, AVX2+FMA 32; the reason is given."""
    assert provenance.fp32_flops_per_cycle("GenuineIntel", {"avx512f", "avx2", "fma"})[0] == 64
    per_cycle, why = provenance.fp32_flops_per_cycle("AuthenticAMD", {"avx512f", "avx2", "fma"})
    assert per_cycle == 32 and "Zen 4" in why


def fake_platform(monkeypatch, system, commands=None, registry=None, machine="arm64"):
    """Pretend to run on another OS: platform answers, sysctl output and Windows registry values."""
    monkeypatch.setattr(provenance.platform, "system", lambda: system)
    monkeypatch.setattr(provenance.platform, "machine", lambda: machine)
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: {})  # no /proc/cpuinfo off Linux
    monkeypatch.setattr(provenance, "_command", lambda *args: (commands or {}).get(args[-1]))
    monkeypatch.setattr(provenance, "_windows_processor", lambda value: (registry or {}).get(value))


def test_apple_silicon_reads_its_brand_and_claims_no_clock_or_peak(monkeypatch):
    """On a Mac the brand comes from sysctl; Apple Silicon has no clock key, so no peak is made up."""
    fake_platform(monkeypatch, "Darwin", {"machdep.cpu.brand_string": "Apple M2 Pro"})
    cpu = provenance.cpu_info(threads=8)
    assert cpu["brand"] == "Apple M2 Pro" and cpu["clock_hz"] is None
    assert cpu["fp32_peak_flops"] is None and "unknown" in cpu["peak_formula"]
    assert "fp32_flops_per_cycle" not in cpu


def test_intel_mac_has_a_clock_but_still_no_guessed_peak(monkeypatch):
    """An Intel Mac reports its clock; without the instruction set the peak stays unknown, not SSE-sized."""
    fake_platform(monkeypatch, "Darwin", {"machdep.cpu.brand_string": "Intel(R) Core(TM) i9-9880H",
                                          "hw.cpufrequency_max": "2300000000"}, machine="x86_64")
    cpu = provenance.cpu_info(threads=8)
    assert cpu["clock_hz"] == 2.3e9 and cpu["fp32_peak_flops"] is None


def test_windows_reads_the_registry(monkeypatch):
    """On Windows the brand and rated clock come from the processor's registry key."""
    fake_platform(monkeypatch, "Windows", registry={"ProcessorNameString": "AMD Ryzen 7 5800X 8-Core Processor ",
                                                     "~MHz": 3801}, machine="AMD64")
    cpu = provenance.cpu_info(threads=16)
    assert cpu["brand"] == "AMD Ryzen 7 5800X 8-Core Processor" and cpu["clock_hz"] == 3.801e9
    assert cpu["fp32_peak_flops"] is None


def test_unknown_everything_says_unknown(monkeypatch):
    """With no OS answer the brand is 'unknown', never platform.processor()'s 'arm' or 'Intel64 Family 6'."""
    fake_platform(monkeypatch, "Darwin")
    monkeypatch.setattr(provenance.platform, "processor", lambda: "arm")
    assert provenance.cpu_info(threads=4)["brand"] == "unknown"


def test_mps_is_the_gpu_on_apple_silicon(monkeypatch):
    """Where torch offers MPS and no CUDA, the GPU is recorded as Apple's, with the machine's shared memory."""
    import torch

    fake_platform(monkeypatch, "Darwin", {"machdep.cpu.brand_string": "Apple M3"})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    gpu = provenance.gpu_info()
    assert gpu["name"] == "Apple M3 GPU (MPS)" and gpu["cuda_version"] is None and gpu["memory_bytes"] > 0
    machine = {"cpu": provenance.cpu_info(threads=8), "gpu": gpu}
    doc = {"schema_version": store.SCHEMA_VERSION, "mode": "quick", "environment_key": "x" * 10,
           "machine_id": provenance.machine_id(machine), "machine_info": machine,
           "software": provenance.collect(threads=2)["software"], "commit_info": {"id": None, "dirty": None},
           "datetime": "2026-11-30T12:00:00+00:00", "experiments": {}, "benchmarks": []}
    store.validate(doc, "mps provenance")


def test_one_brand_with_different_instruction_sets_is_two_machines():
    """One brand string with AVX-512 BF16 or with AVX2 only gives two ids; a file without isa keeps its old id."""
    base = {"cpu": {"brand": "AMD EPYC", "arch": "x86_64", "threads_used": 2}, "gpu": None}
    zen4 = {**base, "cpu": {**base["cpu"], "isa": ["avx", "avx2", "fma", "avx512f", "avx512_bf16"]}}
    older = {**base, "cpu": {**base["cpu"], "isa": ["avx", "avx2", "fma"]}}
    assert len({provenance.machine_id(m) for m in (base, zen4, older)}) == 3
    assert provenance.machine_id(base) == "amd-epyc-81bd7f4baa"  # the id files without isa were written with


def test_tf32_is_read_through_the_fp32_precision_api_without_raising():
    """Once fp32_precision = "tf32" is set (torch 2.9's API), provenance reads TF32 as allowed instead of
    raising on the legacy flags (which torch refuses to read after the new API was used)."""
    import torch

    matmul = torch.backends.cuda.matmul
    if not hasattr(matmul, "fp32_precision"):
        pytest.skip("this torch predates the fp32_precision API")
    before = matmul.fp32_precision
    try:
        assert provenance.software_info()["cuda_matmul_allow_tf32"] is False
        matmul.fp32_precision = "tf32"
        info = provenance.software_info()
        assert info["cuda_matmul_allow_tf32"] is True and info["float32_matmul_precision"] == "high"
    finally:
        matmul.fp32_precision = before
