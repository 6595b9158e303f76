"""The GPU paths of the snippets, shown on a CPU with fakes: what each waits for, copies and reports."""

from __future__ import annotations

import torch

from snippets import activation_memory, inference_latency, precision, step_profile


def test_peak_memory_is_read_after_a_warm_up_pass(monkeypatch):
    """activation_memory resets CUDA's peak only after one full pass, so batch 1 is not charged the workspaces."""
    events = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: events.append("sync"))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: events.append("reset"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: 100)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 350)
    model = activation_memory.make_model("cpu")
    model.register_forward_hook(lambda *_: events.append("forward"))
    assert activation_memory.peak_step_bytes(model, torch.randn(1, *activation_memory.IMAGE)) == 250
    assert events.index("forward") < events.index("reset") and events.count("forward") == 2


class Spy(torch.Tensor):
    """A tensor that remembers where it was copied."""
    copies: list[str] = []

    def to(self, device, *args, **kwargs):
        Spy.copies.append(str(device))
        return self


def test_a_latency_call_copies_the_request_in_and_the_answer_out():
    """inference_latency serves one request per call: host request → device, answer → host."""
    Spy.copies = []
    request = torch.randn(1, 4).as_subclass(Spy)
    answer = inference_latency.serve(lambda x: x * 2, request, "cuda")
    assert Spy.copies == ["cuda", "cpu"] and isinstance(answer, torch.Tensor)


def test_profiler_rows_say_not_available_without_kernel_times():
    """Without CUPTI every kernel time is 0: the CUDA point says "not available" instead of a 1 ns row."""
    profiles = [{"aten::addmm": (2e-5, 2, 0.0), "aten::relu": (1e-5, 1, 0.0)}] * 3
    blind = step_profile.summarise(profiles, "matrix products", "cuda")
    assert blind["extra"]["device_time"] == step_profile.NO_KERNEL_TIMES and "device_s" not in blind["extra"]
    assert blind["samples"] == [2e-5] * 3  # the host's issue time is real either way
    seen = step_profile.summarise([{"aten::addmm": (2e-5, 2, 5e-6)}] * 3, "matrix products", "cuda")
    assert seen["extra"]["device_s"] == 5e-6 and "device_time" not in seen["extra"]
    assert "device_s" not in step_profile.summarise(profiles, "matrix products", "cpu")["extra"]


def test_every_precision_waits_once_per_step(monkeypatch):
    """fp32 and bf16 steps read their loss once per step, as fp16's GradScaler must wait once per step."""
    reads = []
    original = torch.Tensor.item
    monkeypatch.setattr(torch.Tensor, "item", lambda self: reads.append(1) or original(self))
    for dtype in ("fp32", "bf16"):
        reads.clear()
        step = precision.make_step("cpu", dtype, 4, 16)
        step()
        step()
        assert len(reads) == 2, dtype


def test_usable_cores_follow_a_container_quota(monkeypatch, tmp_path):
    """A cgroup quota of 1.5 CPUs caps the worker count at 2 even where affinity shows more cores."""
    import builtins

    from snippets import benchmarking

    quota = tmp_path / "cpu.max"
    quota.write_text("150000 100000\n")
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: real_open(quota if path == "/sys/fs/cgroup/cpu.max"
                                                                          else path, *a, **k))
    monkeypatch.setattr(benchmarking.os, "sched_getaffinity", lambda pid: set(range(16)))
    assert benchmarking.usable_cores() == 2



class Event:
    """A profiler event as step_profile reads it: a name, a time range, host self time and a parent."""

    def __init__(self, name: str, start: float, end: float, parent=None):
        self.name, self.cpu_parent = name, parent
        self.time_range = type("Interval", (), {"start": start, "end": end})()
        self.self_cpu_time_total, self.self_device_time_total = end - start, 0.0


def test_a_step_profile_counts_operations_run_on_another_thread():
    """An operation with no parent in the step's thread (CUDA runs backward on autograd's own thread) is credited
    to the step it ran during, and one between steps to none."""
    steps = [Event(f"{step_profile.STEP_LABEL}{i}", 100.0 * i, 100.0 * i + 50) for i in range(2)]
    forward = Event("aten::addmm", 10, 20, parent=steps[0])
    backward = [Event("aten::mm", 30, 40), Event("aten::mm", 130, 140)]  # the autograd thread's: no parent
    between = Event("aten::mm", 70, 80)
    profiles = step_profile.per_step([*steps, forward, *backward, between], 2, "cpu")
    assert [p.get("aten::mm", (0, 0, 0))[1] for p in profiles] == [1, 1]
    assert profiles[0]["aten::addmm"][1] == 1 and "aten::addmm" not in profiles[1]
