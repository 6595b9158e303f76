"""What does torch.compile cost, and what does it buy, for a training step on the CPU?

torch.compile (its default backend, inductor) traces the model, fuses chains of
elementwise operations and generates C++ kernels for them, compiled by the machine's
C++ compiler. Two models are measured: the race's MLP (snippets/training_step.py) and
the small transformer (snippets/transformer_block.py); the optimiser step stays eager
in both, so only the model's forward and backward are compiled.

- phase "compile": the wall time of the first compiled training step, compilation
  included, with an empty compiler cache (torch._inductor.utils.fresh_cache: a new
  cache folder, deleted afterwards, and the in-memory caches cleared), once per round.
  The compiler's own start-up (imports, first use) is paid once per process before it,
  untimed, so every round times the same work. Kernels are compiled in this process
  (compile_threads = 1): by default inductor starts worker processes, which would
  outlive the point; on a machine with more cores they would shorten the compile.
- phase "step": seconds per training step, eager against compiled, at a few batches
  (a quick build, for tests, measures the MLP only).
  The batch dimension is marked dynamic, so one compilation serves every batch (sizes
  above 1), as in a training run whose last batch is smaller.

If torch.compile fails on a machine (no C++ compiler, an unsupported platform), the
point records the error instead of a time, and the build goes on.

Run it alone:  python snippets/compile_speed.py
"""

from __future__ import annotations

import time

import torch

try:  # imported as part of the project
    from snippets import training_step, transformer_block
    from snippets.benchmarking import all_threads, budget, time_it
except ImportError:  # run as a script: python snippets/compile_speed.py
    import training_step
    import transformer_block
    from benchmarking import all_threads, budget, time_it

NAME = "compile_speed"
# Cold compiles take tens of seconds: the build host measures this, never a GPU machine's
# six-minute slot (forecast already near its limit); its pages read the build host anyway.
GPU_SLOT = False
DEVICES = ["cpu"]  # compilation is measured where this build runs: on its CPU
BENCH_VERSION = 1
PARAMS = {"model": ["mlp", "transformer"], "phase": ["compile", "step"], "mode": ["eager", "compiled"],
          "batch": "positive"}
DEPENDS = ["training_step", "transformer_block"]
EXTRA_INFO = {}
EXTRA_INFO_OPTIONAL = {"error": "text"}  # why torch.compile failed, where it did
ROUNDS = 2  # each round compiles both models from an empty cache (tens of seconds on a small VM)
QUICK_ROUNDS = 1  # a quick build (tests, previews; never published) compiles once: a compile is most of its time
POINT_TIMEOUT_S = 600
MLP_WIDTH = 512
TRANSFORMER = {"d_model": 128, "seq": 64}
# Quick builds (tests) compile the MLP only: the transformer's compile alone takes tens of seconds per round here.
QUICK = {"mlp": [16, 64]}
FULL = {"mlp": [16, 64, 256], "transformer": [4, 16, 64]}


def build(model: str):
    """(module, make_step) for one model: make_step(module, batch) is a no-argument training step."""
    if model == "mlp":
        module, _, loss_fn = training_step.make_model(MLP_WIDTH, "cpu")

        def make_step(net, batch):
            optimiser = torch.optim.SGD(module.parameters(), lr=0.01)
            x = torch.randn(batch, training_step.INPUTS)
            y = torch.randint(0, training_step.CLASSES, (batch,))
            _dynamic(x, y)
            return lambda: training_step.train_step(net, optimiser, loss_fn, x, y)
    else:
        module, _ = transformer_block.make_model(TRANSFORMER["d_model"], TRANSFORMER["seq"], "cpu")

        def make_step(net, batch):
            optimiser = torch.optim.AdamW(module.parameters(), lr=1e-3)
            tokens, targets = transformer_block.make_batch(batch, TRANSFORMER["seq"], "cpu")
            _dynamic(tokens, targets)
            return lambda: transformer_block.train_step(net, optimiser, tokens, targets)
    return module, make_step


def _dynamic(*tensors) -> None:
    """Mark the batch dimension dynamic: one compiled graph for every batch size."""
    for tensor in tensors:
        torch._dynamo.mark_dynamic(tensor, 0)


def fresh_compiler_cache():
    """An empty inductor cache for one compilation (a temporary folder, removed afterwards)."""
    from torch._inductor.utils import fresh_cache

    return fresh_cache()


_compiler_ready = False
_compiled: dict[str, tuple] = {}  # model -> (module, compiled module, make_step), from this process's last compile


def _prepare_compiler() -> None:
    """Once per process, untimed: the compiler's imports and first use, and compiling in this process."""
    global _compiler_ready
    if _compiler_ready:
        return
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1  # no worker processes to outlive the point
    with fresh_compiler_cache():
        torch.compile(lambda x: (x * 2).relu().sum())(torch.ones(8))
    torch._dynamo.reset()
    _compiler_ready = True


def compile_model(model: str, batch: int) -> float:
    """Compile `model` from an empty cache; the seconds of its first compiled training step."""
    _prepare_compiler()
    torch._dynamo.reset()  # forget every earlier compilation
    module, make_step = build(model)
    make_step(module, batch)()  # the eager first step (optimiser state, allocator): not the compiler's cost
    compiled = torch.compile(module)
    step = make_step(compiled, batch)
    with fresh_compiler_cache():
        start = time.perf_counter()
        step()
        seconds = time.perf_counter() - start
    _compiled[model] = (module, compiled, make_step)
    return seconds


def failed(exc: Exception) -> dict:
    """A point without a time: what went wrong, as text (the page says compilation failed here)."""
    return {"unit": "s", "status": "failed",
            "extra": {"error": f"torch.compile failed: {type(exc).__name__}: {exc}"[:200]}}


def plan(device_list: list[str], quick: bool) -> list[dict]:
    """Per model: its compile (at the smallest batch), then eager and compiled steps at each batch."""
    if "cpu" not in device_list:
        return []
    batches = QUICK if quick else FULL
    points = []
    for model, sizes in batches.items():
        points.append({"device": "cpu", "model": model, "phase": "compile", "mode": "compiled", "batch": sizes[0]})
        points += [{"device": "cpu", "model": model, "phase": "step", "mode": mode, "batch": b}
                   for b in sizes for mode in ("eager", "compiled")]
    return points


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Compile time (one sample per round), or seconds per eager or compiled training step."""
    torch.set_num_threads(threads)
    model, batch = point["model"], point["batch"]
    if point["phase"] == "compile":
        try:
            return {"unit": "s", "samples": [compile_model(model, batch)], "extra": {}}
        except Exception as exc:  # noqa: BLE001 - any compiler failure is a result to show, not a crash
            return failed(exc)
    if point["mode"] == "eager":
        module, make_step = build(model)
        step = make_step(module, batch)
    else:
        try:
            if model not in _compiled:  # measured alone: compile first, untimed
                compile_model(model, batch)
            _, compiled, make_step = _compiled[model]
            step = make_step(compiled, batch)
            with fresh_compiler_cache():  # a recompilation, if a guard asks for one, stays out of every cache
                step()
        except Exception as exc:  # noqa: BLE001
            return failed(exc)
    samples = time_it(step, threads=threads, min_run_time=budget(quick), device="cpu")
    return {"unit": "s", "samples": samples, "extra": {}}


if __name__ == "__main__":
    threads = all_threads()
    for point in plan(["cpu"], quick=False):
        result = measure(point, threads, quick=False)
        if result.get("status"):
            print(f"{point['model']:>11} {point['phase']:>7} {point['mode']:>8} batch {point['batch']:>3}: "
                  f"{result['extra']['error']}")
            continue
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['model']:>11} {point['phase']:>7} {point['mode']:>8} batch {point['batch']:>3}: "
              f"{median * 1e3:10.2f} ms")
