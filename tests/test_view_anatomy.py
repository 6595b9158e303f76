"""Tests of views/anatomy.py: a measured GPU's datasheet figures beside what this project measured."""

from build_hooks import analysis, datasheets, page
from build_hooks.dataset import Dataset, Machine
from conftest import bare_cells, complete_doc


def test_a_measured_gpu_sets_each_datasheet_figure_beside_the_best_it_measured():
    """anatomy_measured gives a GPU with a datasheet its published fp32 rate beside its fastest matrix product and
    the share; a build without a GPU says only the published figures stand."""
    doc = complete_doc(gpu="NVIDIA H200")
    machine = Machine(doc, "g", "committed reference")
    sheet = datasheets.for_gpu("NVIDIA H200")
    html = bare_cells(page.render_section("anatomy_measured", Dataset([machine])))
    best = analysis.best_matmul_rate(machine, machine.gpu_device("gemm_rate"))
    assert "published (NVIDIA H200 SXM)" in html and f"{100 * best / sheet.fp32_flops:.0f}%</td>" in html
    assert "Measured on" in html  # its provenance under its table
    assert "only the published figures stand" in str(page.render_section("anatomy_measured",
                                                                          Dataset([Machine(complete_doc(), "c", "t")])))
