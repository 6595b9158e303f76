"""The first-principles GPU estimate: max of host and device, kernels counted, monotone in batch, its band stated."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_cost_model import machine_from_model

from build_hooks import dataset, gpu_estimate, race
from build_hooks.dataset import Machine
from conftest import synthetic_doc

ROOT = Path(__file__).resolve().parent.parent


def committed_machines() -> list[Machine]:
    return list(dataset.load_committed(ROOT / "results", ROOT))


def test_a_step_costs_the_larger_of_host_and_device_not_their_sum():
    """The host issues while the GPU runs: the step is max(host, device), each part from its own terms."""
    estimate = gpu_estimate.for_host(machine_from_model(true_op=20e-6))
    step = estimate.step(32, 32)
    assert step["seconds"] == max(step["host"], step["device"])
    assert step["device"] == pytest.approx(step["launches"] + step["compute"] + step["memory"])
    # 40 operations at the build host's fitted 20 µs, each launching a kernel (a file without kernel counts)
    assert step["host"] == pytest.approx(40 * 20e-6 + 40 * gpu_estimate.LAUNCH_HOST_S)


def test_the_host_pays_the_published_launch_cost_per_kernel_only():
    """Views launch nothing: with kernels counted, the host pays its per-operation cost for every operation
    CUDA issues and the published launch cost for each kernel, and the device its minimum per kernel."""
    machine = machine_from_model(true_op=1e-7)
    for bench in machine.benchmarks("training_step"):
        bench["extra_info"].update({"cuda_ops": 38, "kernels": 15})
    step = gpu_estimate.for_host(machine).step(1, 32)
    assert step["host"] == pytest.approx(38 * gpu_estimate.for_host(machine).host_op_s + 15 * gpu_estimate.LAUNCH_HOST_S)
    assert step["launches"] == pytest.approx(15 * gpu_estimate.LAUNCH_S)
    assert step["floor"] == pytest.approx(15 * gpu_estimate.LAUNCH_HOST_S)


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


def test_the_race_lane_carries_the_stated_asymmetric_band():
    """The estimated lane's quartiles are its stated band, narrower below than above; its source names the
    datasheet, says unvalidated and points to the cost model page, whose source cites the launch cost."""
    machine = committed_machines()[0]
    lane = race.estimate_lane(0, machine)
    estimate = gpu_estimate.for_host(machine)
    for width, by_batch in lane["epochs"].items():
        for batch, point in by_batch.items():
            floor = point["steps"] * estimate.step(int(batch), int(width))["floor"]
            assert point["q1"] == pytest.approx(max(point["seconds"] * gpu_estimate.FASTER, floor))
            assert point["q3"] == pytest.approx(point["seconds"] * estimate.slower)
            assert point["seconds"] / point["q1"] < point["q3"] / point["seconds"]  # lopsided, as the risk is
    assert "unvalidated" in lane["source"] and estimate.sheet.source in lane["source"]
    assert "Predicting a step" in lane["source"] and "PETSc" in estimate.source  # the inputs, stated once there
    assert lane["band"] == [estimate.faster, estimate.slower] and estimate.slower >= gpu_estimate.SLOWER


def test_a_host_that_issues_faster_lowers_the_bands_lower_edge_to_cover_it():
    """The lower edge follows the fastest measured host: re-priced at that host's pace, the estimate stays in the
    band at every size; a slower machine leaves the stated 0.75x."""
    host, quick, slow = (machine_from_model(true_op=t) for t in (20e-6, 8e-6, 40e-6))
    assert gpu_estimate.for_host(host, [slow]).faster == gpu_estimate.FASTER
    estimate = gpu_estimate.for_host(host, [host, quick, slow])
    assert estimate.faster == pytest.approx(gpu_estimate.host_op_seconds(quick) / estimate.host_op_s)
    assert estimate.faster < gpu_estimate.FASTER and "from 0.4× to 2.5×" in estimate.band_words
    repriced = dataclasses.replace(estimate, host_op_s=gpu_estimate.host_op_seconds(quick))
    for batch, width in estimate.work:
        assert estimate.step_band(batch, width)[0] <= repriced.step(batch, width)["seconds"]
        assert estimate.epoch_band(batch, width, 2048)[0] <= repriced.epoch(batch, width, 2048)


def test_no_lower_edge_falls_below_the_launches_floor():
    """A host so fast that 0.75x the estimate would undercut the kernels' launches: the lower edge is the floor."""
    machine = machine_from_model(true_op=1e-9)
    for bench in machine.benchmarks("training_step"):
        bench["extra_info"].update({"cuda_ops": 38, "kernels": 15})
    estimate = gpu_estimate.for_host(machine)
    for batch, width in estimate.work:
        low, high = estimate.step_band(batch, width)
        assert low >= estimate.step(batch, width)["floor"] and high > estimate.step(batch, width)["seconds"]
        low, _ = estimate.epoch_band(batch, width, 2048)
        assert low >= estimate.steps(batch, 2048) * 15 * gpu_estimate.LAUNCH_HOST_S


def test_it_is_checked_against_a_real_h200_only():
    """The estimate is checked where an H200 was measured, and nowhere else: measured ÷ estimated per size, and how
    many sizes fall outside its band."""
    steps = {(d, 32, b): t for b in (1, 16) for d, t in (("cpu", 1e-4 * b), ("cuda", 3e-4))}
    doc = synthetic_doc(gpu="NVIDIA H200", step_times=steps)
    for bench in doc["benchmarks"]:
        bench["extra_info"].update({"ops": 40, "bytes": 10_000})
    from conftest import add_points
    add_points(doc, "call_overhead", [({"op": "add_"}, 1e-6, {})])
    machine = Machine(doc, "f", "t")
    found, estimate = gpu_estimate.check(machine), gpu_estimate.for_host(machine)
    ratios = sorted(3e-4 / estimate.step(b, 32)["seconds"] for b in (1, 16))
    assert (found.lowest, found.highest, found.sizes) == (ratios[0], ratios[-1], 2)
    assert found.outside == sum(not gpu_estimate.FASTER <= r <= gpu_estimate.SLOWER for r in ratios)
    assert gpu_estimate.check(Machine(synthetic_doc(gpu="Other GPU", step_times=steps), "f", "t")) is None


def test_the_pages_say_how_the_estimate_fared_and_which_way_it_errs():
    """With a measured H200, the cost model states measured ÷ estimated and the sizes outside the band, and pages that
    lean on the estimate warn that its GPU leads are overstated when the measured steps are slower; without one,
    that nothing has checked it."""
    from build_hooks import page, untrusted
    from build_hooks.dataset import Dataset
    from conftest import add_points

    steps = {(d, 32, b): t for b in (1, 16) for d, t in (("cpu", 1e-4 * b), ("cuda", 3e-2))}  # far slower than modelled
    doc = synthetic_doc(gpu="NVIDIA H200", step_times=steps)
    for bench in doc["benchmarks"]:
        bench["extra_info"].update({"ops": 40, "bytes": 10_000})
    add_points(doc, "call_overhead", [({"op": "add_"}, 1e-6, {})])
    data = Dataset([Machine(doc, "f", "t")])
    found = gpu_estimate.check(data.machines[0])
    assert found.outside == 2 and found.median > gpu_estimate.SLOWER
    said = untrusted.restore(page.render_fact("estimate_check", data))
    assert f"took {found.median:.2g}× the estimate" in said and "At 2 of 2 sizes that is outside the band first" in said
    assert said.endswith("Every real step took longer than estimated, so read the estimate as a floor, not a forecast")
    cpu_only = Dataset([Machine(synthetic_doc(step_times={("cpu", 32, 1): 1e-4}), "f", "t")])
    assert page.render_fact("estimate_check", cpu_only).startswith("Nothing has checked it")


def test_a_check_can_be_fed_by_another_host_and_then_checks_that_estimate():
    """check(machine, feeder) sets the GPU's measured steps against the estimate fed by `feeder`'s costs per
    operation, the one a page feeding it from the build host draws; by default each GPU's own host feeds it."""
    from pathlib import Path

    from build_hooks import analysis, cost_model, dataset

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    gpu_box = next(m for m in committed if m.gpu_device("training_step"))
    feeder = next(m for m in committed if m.gpu is None and gpu_estimate.host_op_seconds(m))
    estimate = gpu_estimate.for_host(feeder, work=cost_model.step_work(gpu_box))
    ratios = [p.seconds / estimate.step(p.batch, w)["seconds"] for w in analysis.widths(gpu_box)
              for p in analysis.step_curve(gpu_box, "cuda", w) if (p.batch, w) in estimate.work]
    fed = gpu_estimate.check(gpu_box, feeder)
    assert fed.highest == max(ratios) and fed.sizes == len(ratios)
    assert gpu_estimate.check(gpu_box).highest != fed.highest  # the two hosts issue at different costs


def _h200_slower_than_estimated(by: float) -> Machine:
    """A machine whose H200 steps take `by` times the estimate fed by its own host, at two sizes."""
    from conftest import add_points

    def build(step_times: dict) -> Machine:
        doc = synthetic_doc(gpu="NVIDIA H200", step_times=step_times)
        for bench in doc["benchmarks"]:
            bench["extra_info"].update({"ops": 40, "bytes": 10_000})
        add_points(doc, "call_overhead", [({"op": "add_"}, 1e-6, {})])
        return Machine(doc, "f", "t")

    cpu = {("cpu", 32, b): 1e-4 * b for b in (1, 16)}
    estimate = gpu_estimate.for_host(build(cpu))
    return build({**cpu, **{("cuda", 32, b): by * estimate.step(b, 32)["seconds"] for b in (1, 16)}})


@pytest.mark.parametrize("by", [1.5, 4.0])
def test_a_measured_miss_beyond_the_assumed_band_raises_its_top_to_that_miss(by):
    """A measured H200 that took 4× the estimate raises the band's top to 4× (no comparison leans on a band the data
    broke), and the cost model page says why; one that took 1.5× leaves the assumed 2.5×, unremarked."""
    from build_hooks import page
    from build_hooks.dataset import Dataset

    machine = _h200_slower_than_estimated(by)
    found = gpu_estimate.check(machine, machine)
    assert found.highest == pytest.approx(by)
    estimate = gpu_estimate.for_host(machine)
    assert estimate.slower == pytest.approx(max(by, gpu_estimate.SLOWER))
    for batch, width in estimate.work:
        assert estimate.step_band(batch, width)[1] == pytest.approx(estimate.step(batch, width)["seconds"]
                                                                    * estimate.slower)
    said = page.render_fact("gpu_estimate_model", Dataset([machine]))
    assert f"to {max(by, gpu_estimate.SLOWER):.2g}× its value" in said
    checked = page.render_fact("estimate_check", Dataset([machine]))
    assert ("the band's top was raised to 4×" in checked) == (by > gpu_estimate.SLOWER)
    assert ("as a floor" in checked) == (found.lowest > 1.1)  # a floor only where every real step took longer


def test_a_lead_beyond_the_band_says_how_far_past_its_edge_the_cpus_median_lies():
    """faster_beyond_band: "GPU (CPU 1.2× the band's top)" is the CPU's median over the band's top, "CPU (…× under
    the band's bottom)" the band's bottom over the CPU's median; inside the band it is "neither", and no CPU point
    is "not measured"."""
    from build_hooks.gpu_estimate import faster_beyond_band

    def cpu(median):
        return {"median": median, "q1": median, "q3": median, "data": [median] * 5}
    assert faster_beyond_band(cpu(12.0), 5.0, (4.0, 10.0)) == "GPU (CPU 1.2× the band's top)"
    assert faster_beyond_band(cpu(2.0), 5.0, (4.0, 10.0)) == "CPU (2× under the band's bottom)"
    assert faster_beyond_band(cpu(7.0), 5.0, (4.0, 10.0)) == "neither"
    assert faster_beyond_band(None, 5.0, (4.0, 10.0)) == "not measured"
