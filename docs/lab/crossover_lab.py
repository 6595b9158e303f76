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
# This notebook measures **your** machine the way the site measures its own: the time to
# train one epoch of a 512→H→10 MLP on a fixed dataset, for every batch size and layer
# width the [race](../../race/) offers, on the CPU and on any GPU torch can use here
# (NVIDIA's through CUDA, Apple's through MPS). It marks where the GPU starts to win,
# checks the host→device bus (on CUDA) and fp32 against bf16 (on the CPU and CUDA), and
# writes a results file in the project's schema that you can add to the race in your browser.
#
# It needs only `torch`, `numpy` and `matplotlib` (`pip install torch numpy matplotlib`;
# `tqdm`, if you have it, draws the progress bar). It is written for Python 3.10 to 3.13
# and torch 2.4 or newer; the project's tests run it with Python 3.11 and torch 2.13 and
# check that Python 3.10 to 3.13 accept its syntax. On a laptop CPU it takes a minute or
# two. The page you are reading was
# produced by running it on the machine that built the site. Download it as a notebook
# for Jupyter or Colab ([crossover_lab.ipynb](../crossover_lab.ipynb)) or as a plain
# Python script (the download button above).

# %%
import datetime
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import matplotlib.pyplot as plt
import torch
import torch.utils.benchmark as benchmark
from torch import nn

try:
    from tqdm import tqdm
except ImportError:  # a progress line without tqdm
    class tqdm:  # noqa: N801 - stands in for tqdm's class
        def __init__(self, total, desc="", mininterval=0.1):
            self.total, self.done, self.desc, self.every = total, 0, desc, mininterval
            self.shown = time.perf_counter()

        def update(self, n=1):
            self.done += n
            if self.done == self.total or time.perf_counter() - self.shown >= self.every:
                self.shown = time.perf_counter()
                print(f"{self.desc}: {self.done}/{self.total}", file=sys.stderr, flush=True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

QUICK = os.environ.get("CROSSOVER_QUICK") == "1"  # tiny sizes, for the project's tests
# Exactly the race's epochs: the same rows, widths and batches as the site's epoch_time experiment.
SIZES = {
    "full": {"rows": 2048, "widths": [8, 32, 512, 2048], "batches": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]},
    "quick": {"rows": 512, "widths": [32], "batches": [1, 16]},
}
ROWS, WIDTHS, BATCHES = (SIZES["quick" if QUICK else "full"][k] for k in ("rows", "widths", "batches"))
ROUNDS = 2 if QUICK else 3  # timed epochs per point, one per round, rounds interleaved
THREADS = torch.get_num_threads()  # set explicitly: torch.utils.benchmark's Timer defaults to ONE thread
mps = getattr(torch.backends, "mps", None)
DEVICES = (["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
           + (["mps"] if mps is not None and mps.is_available() else []))
GPU = next((d for d in DEVICES if d != "cpu"), None)
print(f"devices: {DEVICES}, CPU threads: {THREADS}, torch {torch.__version__}, Python {platform.python_version()}")

# %% [markdown]
# ## Timing one epoch
#
# The dataset is created on the device, as it would sit after a one-off copy. GPU work is
# asynchronous, so the clock stops only after waiting for the device to finish
# (`torch.cuda.synchronize()` or `torch.mps.synchronize()`). Each point is timed once per
# round and the rounds are interleaved, so a machine that speeds up or slows down while
# it runs shows up as spread instead of as a false difference between points.

# %%
def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def make_epoch(device: str, width: int, batch: int):
    """A function that trains one epoch of ROWS rows in batches of `batch`."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, width), nn.ReLU(), nn.Linear(width, 10)).to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(ROWS, 512, device=device)
    y = torch.randint(0, 10, (ROWS,), device=device)

    def epoch(limit: int = ROWS):
        for start in range(0, limit, batch):
            optimiser.zero_grad(set_to_none=True)
            loss_fn(model(x[start:start + batch]), y[start:start + batch]).backward()
            optimiser.step()

    epoch(limit=3 * batch)  # warm-up: allocator, kernels, caches
    return epoch


def time_epoch(device: str, epoch) -> float:
    synchronize(device)
    start = time.perf_counter()
    epoch()
    synchronize(device)
    return time.perf_counter() - start


torch.set_num_threads(THREADS)
points = [(d, w, b) for d in DEVICES for w in WIDTHS for b in BATCHES]
epochs = {point: make_epoch(*point) for point in points}
samples = {point: [] for point in points}
# A refresh every few seconds: a saved notebook (like the page you are reading) keeps every one.
with tqdm(total=len(points) * ROUNDS, desc="timing epochs", mininterval=5) as bar:
    for _ in range(ROUNDS):
        for point in points:
            samples[point].append(time_epoch(point[0], epochs[point]))
            bar.update(1)
median = {point: statistics.median(times) for point, times in samples.items()}
for w in WIDTHS:
    print(f"width {w}: " + ", ".join(f"{d} {median[(d, w, BATCHES[0])]:.3g} s at batch {BATCHES[0]}, "
                                     f"{median[(d, w, BATCHES[-1])]:.3g} s at batch {BATCHES[-1]}"
                                     for d in DEVICES) + " per epoch")

# %% [markdown]
# ## Where is the crossover?
#
# The crossover is the smallest batch from which the GPU finishes the epoch first, in
# every round and by at least 10%, at that batch and every larger one. Without a GPU there is none to find: the plot shows the CPU alone.

# %%
def gpu_ahead(width: int, batch: int) -> bool:
    """Ahead beyond the noise: faster in every round (rounds ran interleaved, so the machine's
    drift cancels) and by at least 10% at the median, the rule the site's pages use."""
    gpu, cpu = samples[(GPU, width, batch)], samples[("cpu", width, batch)]
    return all(g < c for g, c in zip(gpu, cpu)) and median[(GPU, width, batch)] * 1.1 <= median[("cpu", width, batch)]


def crossover(width: int):
    if GPU is None:
        return None
    found = None
    for b in reversed(BATCHES):
        if gpu_ahead(width, b):
            found = b
        else:
            break
    return found


fig, ax = plt.subplots(figsize=(7, 4))
for d in DEVICES:
    for w in WIDTHS:
        ax.plot(BATCHES, [median[(d, w, b)] for b in BATCHES], "-" if d == "cpu" else "--",
                marker="o", label=f"{d.upper()}, width {w}")
for w in WIDTHS:
    if crossover(w):
        ax.axvline(crossover(w), linestyle=":", color="grey")
        ax.annotate(f"crossover, width {w}", (crossover(w), ax.get_ylim()[1]), rotation=90, va="top")
ax.set(xscale="log", yscale="log", xlabel="batch size (samples)", ylabel="time per epoch (s)",
       title=f"One epoch of {ROWS} rows versus batch size")
ax.legend(fontsize="small")
plt.show()
print({w: crossover(w) for w in WIDTHS} if GPU else "No GPU here: no crossover to measure.")

# %% [markdown]
# ## Two quick checks: the bus and 16-bit arithmetic

# %%
MIN_RUN_TIME = 0.02 if QUICK else 0.2
extra = []
if "cuda" in DEVICES:
    size = 2**20 if QUICK else 2**26
    host = torch.ones(size, dtype=torch.uint8).pin_memory()  # written, so no page is left untouched
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    timer = benchmark.Timer("dev.copy_(host)", globals={"dev": dev, "host": host}, num_threads=THREADS)
    times = list(timer.blocked_autorange(min_run_time=MIN_RUN_TIME).times)
    print(f"host→device, pinned, {size >> 20} MiB: {size / statistics.median(times) / 1e9:.1f} GB/s")
    extra.append(("transfer", {"device": "cuda", "bytes": size, "direction": "host_to_device",
                               "memory": "pinned"}, times, {"bytes": size}))
else:
    print("No CUDA GPU: there is no host↔device bus to measure here.")

for d in [d for d in DEVICES if d != "mps"]:  # torch's benchmark Timer does not wait for MPS
    n = 128 if QUICK else (512 if d == "cpu" else 4096)  # a CPU without bf16 units is slow at bf16
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
# JSON). Add it to the race in your browser, or copy it into the project's `results/`
# folder: the build validates it and shows it with its provenance.

# %%
def stats(times):
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive") if len(times) > 1 else (times[0],) * 3
    return {"median": statistics.median(times), "q1": q1, "q3": q3, "iqr": q3 - q1, "min": min(times),
            "max": max(times), "mean": statistics.fmean(times), "data": times}


def entry(group, params, times, info):
    s = stats(times)
    return {"group": group, "name": f"{group}{sorted(params.items())}", "params": params, "unit": "s",
            "status": "ok", "stats": s, "extra_info": {**info, "noisy": s["iqr"] > 0.1 * s["median"]}}


def cpu_brand() -> str:
    """The CPU's name on Linux, macOS or Windows, else "unknown" (never a guess)."""
    try:
        if platform.system() == "Darwin":
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip() or "unknown"
        if platform.system() == "Windows":
            import winreg

            key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")
            return winreg.QueryValueEx(key, "ProcessorNameString")[0].strip() or "unknown"
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration, subprocess.SubprocessError, ImportError):
        return "unknown"


def instruction_sets() -> list[str] | None:
    """The vector and matrix extensions Linux reports (as build_hooks/provenance.py records them), else None."""
    wanted = ("avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx_vnni",
              "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve", "sve2", "bf16", "i8mm")
    try:
        with open("/proc/cpuinfo") as f:
            line = next(line for line in f if line.startswith(("flags", "Features")))
    except (OSError, StopIteration):
        return None
    flags = set(line.split(":", 1)[1].split())
    return [flag for flag in wanted if flag in flags]


def memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


brand = cpu_brand()
gpu = None
if GPU == "cuda":
    props = torch.cuda.get_device_properties(0)
    gpu = {"name": props.name, "memory_bytes": props.total_memory, "cuda_version": torch.version.cuda}
elif GPU == "mps":  # Apple's GPU shares the machine's memory
    gpu = {"name": f"{brand} GPU (MPS)" if brand != "unknown" else "Apple GPU (MPS)",
           "memory_bytes": memory_bytes(), "cuda_version": None}
isa = instruction_sets()
identity = json.dumps([brand, platform.machine(), THREADS, gpu and gpu["name"]] + ([isa] if isa is not None else []))
# The same id the project's own measuring gives this machine (build_hooks/provenance.py).
slug = re.sub(r"[^a-z0-9]+", "-", (gpu["name"] if gpu else brand).lower()).strip("-")[:40]
machine_id = f"{slug or 'machine'}-{hashlib.sha256(identity.encode()).hexdigest()[:10]}"
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
benchmarks = [entry("epoch_time", {"device": d, "batch": b, "width": w, "rows": ROWS}, t,
                    {"steps": -(-ROWS // b)}) for (d, w, b), t in samples.items()] + [entry(*e) for e in extra]
groups = sorted({b["group"] for b in benchmarks})
results = {
    "schema_version": 1, "mode": "quick" if QUICK else "full", "machine_id": machine_id,
    "environment_key": hashlib.sha256(f"{identity}{torch.__version__}".encode()).hexdigest()[:20],
    "machine_info": {"cpu": {"brand": brand, "arch": platform.machine(), "threads_used": THREADS,
                             "cores_available": os.cpu_count(), "clock_hz": None, "fp32_peak_flops": None,
                             "peak_formula": "not computed by the lab notebook",
                             **({"isa": isa} if isa is not None else {})}, "gpu": gpu},
    "software": {"python": platform.python_version(), "torch": torch.__version__,
                 "numpy": __import__("numpy").__version__, "blas": "unknown",
                 "float32_matmul_precision": torch.get_float32_matmul_precision(),
                 "os": platform.platform()[:200]},
    "commit_info": {"id": None, "dirty": None},
    "datetime": now,
    "experiments": {g: {"bench_version": 1, "cache_key": "lab-notebook-v2", "measured_at": now,
                        "duration_s": 0.0, "devices": sorted({b["params"]["device"] for b in benchmarks
                                                              if b["group"] == g})} for g in groups},
    "benchmarks": benchmarks,
}
out_dir = os.environ.get("CROSSOVER_LAB_OUTPUT", ".")
os.makedirs(out_dir, exist_ok=True)
path = os.path.join(out_dir, f"{machine_id}.json")
with open(path, "w") as f:
    json.dump(results, f, indent=1)
where = "the folder this notebook runs in" if out_dir == "." else "the folder named by CROSSOVER_LAB_OUTPUT"
print(f"Your results file is {machine_id}.json in {where}: to race it, open the site's race page, "
      "press \"Choose a results file\" under \"Add your machine\" and pick it (it never leaves your browser; "
      "tick \"keep\" to find it there after a reload).")
