"""Tests for build_hooks.provenance."""

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
