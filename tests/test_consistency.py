"""Tests for build_hooks.consistency: one configuration timed by two experiments must agree."""

from build_hooks import consistency, cost_model
from build_hooks.dataset import Machine
from conftest import add_points, synthetic_doc

STEPS = {("cpu", 32, b): 1e-4 * (1 + b / 64) for b in (1, 4, 16, 64, 256, 1024)}


def machine(epoch_factor: dict[int, float]) -> Machine:
    """A machine whose epoch per step is the step alone times `epoch_factor[batch]` (default 1.1)."""
    epochs = {(d, w, b): t * 1.1 * epoch_factor.get(b, 1.0) * -(-10000 // b) for (d, w, b), t in STEPS.items()}
    return Machine(synthetic_doc(step_times=STEPS, epoch_times=epochs), "f", "this build host")


def test_a_step_that_agrees_with_its_epoch_is_not_flagged():
    """An epoch 10% slower per step than the step alone (its loop and slicing) agrees."""
    checks = [c for c in consistency.checks(machine({})) if c.kind == "epoch"]
    assert len(checks) == len(STEPS) and all(c.agrees for c in checks)
    assert consistency.disagreeing(machine({})) == set()


def test_a_step_timed_in_another_state_is_flagged_both_ways():
    """A step alone 2x slower, or 2x faster, than its share of an epoch disagrees, by batch and width."""
    m = machine({1: 0.5, 64: 2.0})
    assert consistency.disagreeing(m) == {(1, 32), (64, 32)}


def test_a_step_faster_than_the_fastest_matrix_product_is_flagged():
    """A step whose FLOP rate beats every square product alone by more than the tolerance is a contradiction."""
    m = machine({})
    best_step_rate = max(b["extra_info"]["flops"] / b["stats"]["median"] for b in m.measured("training_step"))
    add_points(m.doc, "gemm_rate", [({"n": 512}, 2 * 512**3 / (best_step_rate / 2), {"flops": 2 * 512**3})])
    flagged = consistency.disagreeing(m)
    assert flagged and all(c.ratio > consistency.TOLERANCE for c in consistency.checks(m)
                           if c.kind == "gemm" and (c.batch, c.width) in flagged)


def test_the_cost_model_is_fitted_without_contradicted_steps(monkeypatch):
    """Steps another experiment contradicts never reach the fit; with too few left, the raw model stands."""
    steps = {("cpu", w, b): 1e-4 * (1 + b / 64) * (1 + w / 512) for w in (32, 512) for b in (1, 4, 16, 64, 256)}
    doc = synthetic_doc(step_times=steps)
    for bench in doc["benchmarks"]:
        bench["extra_info"].update(ops=40, bytes=4 * bench["params"]["batch"] * 600, footprint=2**20)
    add_points(doc, "call_overhead", [({"op": "add_"}, 2e-6, {})])
    add_points(doc, "gemm_rate", [({"n": n}, 2 * n**3 / 5e10, {"flops": 2 * n**3}) for n in (64, 512)])
    add_points(doc, "memory_bandwidth", [({"bytes": 2**20}, 2**21 / 2e10, {"bytes": 2**21})])
    m = Machine(doc, "f", "this build host")
    monkeypatch.setattr(consistency, "disagreeing", lambda machine, device="cpu": set())
    everything = set(cost_model.fit(m, "cpu").trained_on)
    contradicted = set(sorted(everything)[:2])
    monkeypatch.setattr(consistency, "disagreeing", lambda machine, device="cpu": contradicted)
    assert set(cost_model.fit(m, "cpu").trained_on) == everything - contradicted
    monkeypatch.setattr(consistency, "disagreeing", lambda machine, device="cpu": everything)
    assert cost_model.fit(m, "cpu") is None and cost_model.model(m, "cpu") is not None


def test_a_gpu_step_alone_may_cost_its_host_and_device_time_added():
    """On a GPU a step alone up to GPU_OVERLAP_LIMIT times its epoch share agrees (an epoch overlaps the host's issuing
    with the kernels); beyond it, or on a CPU beyond TOLERANCE, it disagrees."""
    def check(device: str, ratio: float) -> consistency.Check:
        return consistency.Check("epoch", device, 64, 32, ratio)
    assert check("cuda", 1.6).agrees and check("mps", 1.9).agrees and not check("cuda", 2.2).agrees
    assert not check("cpu", 1.6).agrees and check("cpu", 1.2).agrees
