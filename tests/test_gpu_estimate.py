"""The first-principles GPU estimate: max of host and device, monotone in batch, its uncertainty stated."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import synthetic_doc
from test_cost_model import machine_from_model

from build_hooks import dataset, gpu_estimate, race
from build_hooks.dataset import Machine

ROOT = Path(__file__).resolve().parent.parent


def committed_machines() -> list[Machine]:
    return [m for m in dataset.load_committed(ROOT / "results", ROOT)]


def test_a_step_costs_the_larger_of_host_and_device_not_their_sum():
    """The host issues while the GPU runs: the step is max(host, device), each part from its own terms."""
    estimate = gpu_estimate.for_host(machine_from_model(true_op=20e-6))
    step = estimate.step(32, 32)
    assert step["seconds"] == max(step["host"], step["device"])
    assert step["device"] == pytest.approx(step["launches"] + step["compute"] + step["memory"])
    assert step["host"] == pytest.approx(40 * 20e-6)  # 40 operations at this host's fitted 20 µs


def test_the_host_never_issues_faster_than_a_launch():
    """A host cheaper per operation than a kernel launch still pays one launch per operation."""
    estimate = gpu_estimate.for_host(machine_from_model(true_op=1e-7))
    assert estimate.step(1, 32)["host"] == pytest.approx(40 * gpu_estimate.LAUNCH_S)


@pytest.mark.parametrize("machine", committed_machines(), ids=lambda m: m.id)
def test_the_estimate_is_monotone_in_batch_for_every_width(machine):
    """On every committed machine: a bigger batch never makes a step cheaper, nor an epoch dearer."""
    estimate = gpu_estimate.for_host(machine)
    for width in sorted({w for _, w in estimate.work}):
        batches = sorted(b for b, w in estimate.work if w == width)
        steps = [estimate.step(b, width)["seconds"] for b in batches]
        epochs = [estimate.epoch(b, width, 2048) for b in batches]
        assert steps == sorted(steps), (width, steps)
        assert epochs == sorted(epochs, reverse=True), (width, epochs)


def test_the_race_lane_carries_the_stated_uncertainty():
    """The estimated lane's quartiles are its stated factor either way, and its source says unvalidated."""
    machine = committed_machines()[0]
    lane = race.estimate_lane(0, machine)
    point = next(iter(next(iter(lane["epochs"].values())).values()))
    assert point["q1"] == pytest.approx(point["seconds"] / gpu_estimate.UNCERTAINTY)
    assert point["q3"] == pytest.approx(point["seconds"] * gpu_estimate.UNCERTAINTY)
    assert "unvalidated" in lane["source"] and lane["uncertainty"] == gpu_estimate.UNCERTAINTY


def test_its_error_is_measured_against_a_real_h200_only():
    """The estimate's error is computed where an H200 was measured, and nowhere else."""
    steps = {(d, 32, b): t for b in (1, 16) for d, t in (("cpu", 1e-4 * b), ("cuda", 3e-4))}
    doc = synthetic_doc(gpu="NVIDIA H200", step_times=steps)
    for bench in doc["benchmarks"]:
        bench["extra_info"].update({"ops": 40, "bytes": 10_000})
    from conftest import add_points
    add_points(doc, "call_overhead", [({"op": "add_"}, 1e-6, {})])
    assert gpu_estimate.measured_error(Machine(doc, "f", "t")) > 0
    assert gpu_estimate.measured_error(Machine(synthetic_doc(gpu="Other GPU", step_times=steps), "f", "t")) is None
