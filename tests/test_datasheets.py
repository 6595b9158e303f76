"""Datasheet figures: every GPU named with a source, dense rates ordered, torch's names matched."""

from __future__ import annotations

import pytest

from build_hooks import datasheets


def test_every_sheet_names_a_specific_source():
    """Each figure set cites a document and where in it (a table, column or appendix)."""
    for sheet in datasheets.SHEETS:
        assert any(word in sheet.source for word in ("table", "column", "Appendix", "newsroom")), sheet.name


def test_tensor_rates_are_above_plain_fp32_where_published():
    """TF32 and BF16 tensor-core rates are at least the plain FP32 rate (dense figures, not sparse ones doubled)."""
    for sheet in datasheets.SHEETS:
        for rate in (sheet.tf32_flops, sheet.bf16_flops):
            assert rate is None or rate >= sheet.fp32_flops
        assert sheet.bf16_flops is None or sheet.bf16_flops < 1.2e15  # no sparse 1,979 TFLOP/s


@pytest.mark.parametrize("torch_name, sheet", [
    ("NVIDIA H200", "NVIDIA H200 SXM"), ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"), ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"),
    ("NVIDIA L4", "NVIDIA L4"), ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
    ("NVIDIA H200 NVL", "NVIDIA H200 NVL"), ("NVIDIA GH200 480GB", "NVIDIA GH200"),
    ("nvidia  h200", "NVIDIA H200 SXM"), ("Apple M1 Max GPU (MPS)", "Apple M1 Max (32-core GPU)"),
])
def test_torch_device_names_find_their_sheet(torch_name, sheet):
    """The name torch reports for a GPU finds that GPU's datasheet."""
    assert datasheets.for_gpu(torch_name).name == sheet


def test_an_unknown_gpu_has_no_sheet():
    """A GPU we have no figures for gets none (and so no plausibility bound), not a neighbour's."""
    assert datasheets.for_gpu("NVIDIA L40S") is None and datasheets.for_gpu("Fixture GPU") is None


def test_a_name_that_contains_another_gpus_name_is_not_that_gpu():
    """Whole names only: a GH200 is not an H200 (its host link is NVLink-C2C), nor an L40S an L4."""
    assert datasheets.for_gpu("NVIDIA GH200 480GB").host_link_bytes_s == datasheets.NVLINK_C2C
    assert datasheets.for_gpu("NVIDIA H200 NVL").fp32_flops < datasheets.for_gpu("NVIDIA H200").fp32_flops
    assert datasheets.for_gpu("NVIDIA L40") is None and datasheets.for_gpu("NVIDIA H200 SXM 141GB extra") is None
