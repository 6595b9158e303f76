"""Tests for build_hooks.render and build_hooks.plots: formatting, escaping, honesty."""

import pytest

from build_hooks import render
from build_hooks.dataset import Dataset, Machine
from conftest import synthetic_doc

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.mark.parametrize("value, unit, text", [
    (1.234e-4, "s", "123 µs"), (0.0456, "s", "45.6 ms"), (1.5e11, "FLOP/s", "150 GFLOP/s"),
    (12.0, "s", "12.0 s"), (0, "s", "0 s"),
])
def test_si_formatting(value, unit, text):
    """Values get an SI prefix and three significant figures."""
    assert render.si(value, unit) == text


def test_hostile_machine_name_is_escaped_everywhere():
    """A machine name with HTML in it appears only escaped in the section, table and plot."""
    doc = synthetic_doc(brand=HOSTILE, gpu=HOSTILE, step_times={
        ("cpu", 32, 1): 1e-3, ("cuda", 32, 1): 2e-3})
    data = Dataset([Machine(doc, "fixture", "test")])
    html = render.training_step_section(data) + render.machines_table(data)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_cpu_only_machine_says_gpu_not_measured():
    """Without a GPU curve the section states that the GPU was not measured."""
    html = render.training_step_section(Dataset([Machine(synthetic_doc(), "f", "t")]))
    assert "GPU: not measured" in html


def test_plot_is_inline_svg_with_text_alternative_and_page_colours():
    """The plot is an inline SVG with role=img, an aria-label and colours bound to currentColor."""
    svg = render.step_plot(Machine(synthetic_doc(), "f", "t"))
    assert svg.startswith("<svg role=\"img\" aria-label=")
    assert "currentColor" in svg and "#010203" not in svg
    assert "batch size (samples)" in svg and "time per training step (ms)" in svg


def test_empty_dataset_says_so():
    """No machine with the experiment renders an explicit 'not measured' message."""
    assert "No machine has measured" in render.training_step_section(Dataset([]))
