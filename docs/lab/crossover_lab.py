# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab: find your own crossover
#
# This notebook reproduces the site's central experiment on **your** machine: the time
# of one training step of a 512→H→10 MLP versus batch size, on the CPU and (if you have
# one) the GPU, with the crossover marked. It also checks host→device bandwidth and
# fp32 versus bf16, and writes a results file in the project's schema, so you can add
# your machine to the site.
#
# It needs only `torch`, `numpy` and `matplotlib` (`pip install torch numpy matplotlib`)
# and takes under two minutes on a laptop CPU. The page you are reading was produced by
# running it on the machine that built the site. Download it as a notebook for Jupyter or
# Colab ([crossover_lab.ipynb](../crossover_lab.ipynb)) or as a plain Python script (the
# download button above).

# %%
import datetime
import hashlib
import json
import os
import platform
import statistics

import matplotlib.pyplot as plt
import torch
import torch.utils.benchmark as benchmark
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

QUICK = os.environ.get("CROSSOVER_QUICK") == "1"  # tiny sizes, for the project's tests
THREADS = torch.get_num_threads()  # pass it to Timer explicitly: its default is ONE thread
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
BATCHES = [1, 16] if QUICK else [1, 4, 16, 64, 256, 1024]
WIDTHS = [32] if QUICK else [32, 512]
MIN_RUN_TIME = 0.02 if QUICK else 0.2
print(f"devices: {DEVICES}, CPU threads: {THREADS}, torch {torch.__version__}")

# %% [markdown]
# ## Timing one training step
#
# The batch is created on the device, so the step does not include a copy.
# `torch.utils.benchmark.Timer` synchronises CUDA around its timed blocks.

# %%
def step_times(device: str, batch: int, width: int) -> list[float]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, width), nn.ReLU(), nn.Linear(width, 10)).to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, 512, device=device)
    y = torch.randint(0, 10, (batch,), device=device)

    def step():
        optimiser.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimiser.step()

    for _ in range(3):
        step()
    timer = benchmark.Timer("step()", globals={"step": step}, num_threads=THREADS)
    return list(timer.blocked_autorange(min_run_time=MIN_RUN_TIME).times)


def step_flops(batch: int, width: int) -> int:
    """FLOPs of one step (forward and backward), counted by PyTorch itself."""
    model = nn.Sequential(nn.Linear(512, width), nn.ReLU(), nn.Linear(width, 10))
    x, y = torch.randn(batch, 512), torch.randint(0, 10, (batch,))
    with FlopCounterMode(display=False) as counter:
        nn.functional.cross_entropy(model(x), y).backward()
    return counter.get_total_flops()


samples = {(d, w, b): step_times(d, b, w) for d in DEVICES for w in WIDTHS for b in BATCHES}
median = {key: statistics.median(times) for key, times in samples.items()}
for (d, w, b), t in median.items():
    print(f"{d:>4}  width {w:>4}  batch {b:>5}: {t * 1e3:8.3f} ms per step")

# %% [markdown]
# ## Where is the crossover?
#
# The crossover is the smallest batch from which the GPU step is faster at every
# larger batch. Without a GPU there is none to find: the plot shows the CPU alone.

# %%
def crossover(width: int):
    if "cuda" not in DEVICES:
        return None
    found = None
    for b in reversed(BATCHES):
        if median[("cuda", width, b)] < median[("cpu", width, b)]:
            found = b
        else:
            break
    return found


fig, ax = plt.subplots(figsize=(7, 4))
for d in DEVICES:
    for w in WIDTHS:
        ax.plot(BATCHES, [median[(d, w, b)] * 1e3 for b in BATCHES], "--" if d == "cuda" else "-",
                marker="o", label=f"{d.upper()}, width {w}")
for w in WIDTHS:
    if crossover(w):
        ax.axvline(crossover(w), linestyle=":", color="grey")
        ax.annotate(f"crossover, width {w}", (crossover(w), ax.get_ylim()[1]), rotation=90, va="top")
ax.set(xscale="log", yscale="log", xlabel="batch size (samples)", ylabel="time per training step (ms)",
       title="Training step time versus batch size")
ax.legend()
plt.show()
print({w: crossover(w) for w in WIDTHS} if "cuda" in DEVICES else "No GPU here: no crossover to measure.")

# %% [markdown]
# ## Two quick checks: the bus and 16-bit arithmetic

# %%
extra = []
if "cuda" in DEVICES:
    size = 2**20 if QUICK else 2**26
    host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    timer = benchmark.Timer("dev.copy_(host)", globals={"dev": dev, "host": host}, num_threads=THREADS)
    times = list(timer.blocked_autorange(min_run_time=MIN_RUN_TIME).times)
    print(f"host→device, pinned, {size >> 20} MiB: {size / statistics.median(times) / 1e9:.1f} GB/s")
    extra.append(("transfer", {"device": "cuda", "bytes": size, "direction": "host_to_device",
                               "memory": "pinned"}, times, {"bytes": size}))
else:
    print("No GPU: there is no host↔device bus to measure.")

n = 128 if QUICK else 1024
for d in DEVICES:
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a = torch.randn(n, n, device=d, dtype=dtype)
        timer = benchmark.Timer("a @ a", globals={"a": a}, num_threads=THREADS)
        times = list(timer.blocked_autorange(min_run_time=MIN_RUN_TIME).times)
        print(f"{d:>4} {name} matmul {n}×{n}: {2 * n**3 / statistics.median(times) / 1e9:8.1f} GFLOP/s")
        extra.append(("precision", {"device": d, "op": "matmul", "dtype": name}, times,
                      {"flops": 2 * n**3, "n": n}))

# %% [markdown]
# ## Save a results file in the project's schema
#
# The file follows the project's `results.schema.json` (the layout of pytest-benchmark's
# JSON). To add your machine to the site, copy it into the project's `results/` folder;
# the build validates it and shows it with its provenance.

# %%
def stats(times):
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive") if len(times) > 1 else (times[0],) * 3
    return {"median": statistics.median(times), "q1": q1, "q3": q3, "iqr": q3 - q1, "min": min(times),
            "max": max(times), "mean": statistics.fmean(times), "rounds": len(times), "data": times}


def entry(group, params, times, info):
    s = stats(times)
    return {"group": group, "name": f"{group}{sorted(params.items())}", "params": params, "unit": "s",
            "status": "ok", "stats": s, "extra_info": {**info, "noisy": s["iqr"] > 0.1 * s["median"]}}


cpu_name = platform.processor() or platform.machine()
try:
    cpu_name = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
except (OSError, StopIteration):
    pass
gpu = None
if "cuda" in DEVICES:
    props = torch.cuda.get_device_properties(0)
    gpu = {"name": props.name, "memory_bytes": props.total_memory, "cuda_version": torch.version.cuda}
identity = json.dumps([cpu_name, platform.machine(), THREADS, gpu and gpu["name"]])
slug = "".join(c if c.isalnum() else "-" for c in (gpu["name"] if gpu else cpu_name).lower()).strip("-")[:40]
machine_id = f"{slug}-{hashlib.sha256(identity.encode()).hexdigest()[:10]}"
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
benchmarks = [entry("training_step", {"device": d, "batch": b, "width": w}, t, {"flops": step_flops(b, w)})
              for (d, w, b), t in samples.items()] + [entry(*e) for e in extra]
groups = sorted({b["group"] for b in benchmarks})
results = {
    "schema_version": 1, "mode": "quick" if QUICK else "full", "machine_id": machine_id,
    "environment_key": hashlib.sha256(f"{identity}{torch.__version__}".encode()).hexdigest()[:20],
    "machine_info": {"cpu": {"brand": cpu_name, "arch": platform.machine(), "threads_used": THREADS,
                             "clock_hz": None, "fp32_peak_flops": None,
                             "peak_formula": "not computed by the lab notebook"}, "gpu": gpu},
    "software": {"python": platform.python_version(), "torch": torch.__version__,
                 "numpy": __import__("numpy").__version__, "blas": "unknown",
                 "float32_matmul_precision": torch.get_float32_matmul_precision()},
    "commit_info": {"id": None, "dirty": None},
    "datetime": now,
    "experiments": {g: {"bench_version": 1, "cache_key": "lab-notebook-v1", "measured_at": now,
                        "duration_s": 0.0, "devices": sorted({b["params"]["device"] for b in benchmarks
                                                              if b["group"] == g})} for g in groups},
    "benchmarks": benchmarks,
}
out_dir = os.environ.get("CROSSOVER_LAB_OUTPUT", ".")
os.makedirs(out_dir, exist_ok=True)
path = os.path.join(out_dir, f"{machine_id}.json")
with open(path, "w") as f:
    json.dump(results, f, indent=1)
print(f"wrote {len(benchmarks)} measurements to {os.path.basename(path)}")
