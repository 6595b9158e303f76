"""The plausibility check refuses GPU numbers above the datasheet's peak and passes honest ones."""

from __future__ import annotations

import json

from build_hooks import plausibility, stats
from conftest import complete_doc


def h200_doc(gemm_flops_per_s: float) -> dict:
    doc = complete_doc(gpu="NVIDIA H200", machine_id="plausible-fixture")
    for bench in doc["benchmarks"]:
        if bench["group"] == "gemm_rate" and bench["params"]["device"] == "cuda":
            seconds = bench["extra_info"]["flops"] / gemm_flops_per_s
            bench["stats"] = stats.summarise([seconds, seconds])
        if bench["group"] in {"memory_bandwidth", "transfer"}:
            bench["stats"] = stats.summarise([1.0, 1.0])  # 4 kB/s: far below any peak
    return doc


def test_a_doctored_above_peak_number_is_refused(tmp_path, capsys):
    """A gemm rate of 100 TFLOP/s on an H200 (FP32 peak 67) fails the command and names the point."""
    path = tmp_path / "doctored.json"
    path.write_text(json.dumps(h200_doc(100e12)))
    assert plausibility.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "IMPLAUSIBLE" in err and "gemm_rate[" in err and "NVIDIA H200 SXM" in err


def test_numbers_below_the_peak_pass(tmp_path, capsys):
    """The same file at 50 TFLOP/s passes."""
    path = tmp_path / "honest.json"
    path.write_text(json.dumps(h200_doc(50e12)))
    assert plausibility.main([str(path)]) == 0
    assert "plausible" in capsys.readouterr().out


def test_tf32_raises_the_bound():
    """With TF32 allowed in the file, 100 TFLOP/s is under the TF32 tensor-core peak."""
    doc = h200_doc(100e12)
    doc["software"]["cuda_matmul_allow_tf32"] = True
    assert plausibility.violations(doc) == []


def test_a_copy_small_enough_for_the_cache_is_not_held_to_the_memory_bandwidth():
    """A 4 kB copy at 10 TB/s may be cache speed: no violation; the same rate for a 512 MiB copy is one."""
    doc = h200_doc(50e12)
    copies = [b for b in doc["benchmarks"] if b["group"] == "memory_bandwidth" and b["params"]["device"] == "cuda"]
    copies[0]["stats"] = stats.summarise([copies[0]["extra_info"]["bytes"] / 10e12] * 2)
    assert plausibility.violations(doc) == []
    copies[0]["extra_info"]["bytes"] = 2**29
    copies[0]["stats"] = stats.summarise([2**29 / 10e12] * 2)
    assert len(plausibility.violations(doc)) == 1


def test_tf32_raises_the_bound_of_the_precision_experiments_fp32_matmul_too():
    """The precision experiment's fp32 matmul at 100 TFLOP/s is refused under FP32 and passes where TF32 was allowed."""
    doc = h200_doc(50e12)
    fp32 = next(b for b in doc["benchmarks"] if b["group"] == "precision" and b["params"]["device"] == "cuda"
                and b["params"]["op"] == "matmul" and b["params"]["dtype"] == "fp32")
    fp32["stats"] = stats.summarise([fp32["extra_info"]["flops"] / 100e12] * 2)
    assert [line for line in plausibility.violations(doc) if line.startswith("precision")]
    doc["software"]["cuda_matmul_allow_tf32"] = True
    assert plausibility.violations(doc) == []
