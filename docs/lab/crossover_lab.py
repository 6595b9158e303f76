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
# This notebook measures **your** machine the way the site measures its own, in a shorter
# form: fewer repeats, and no waiting for a steady machine. It does four things:
#
# - It times one epoch of a 512→H→10 MLP on a fixed dataset, for every batch size and
#   layer width the [race](../../race/) offers. It runs on the CPU and on any GPU torch can
#   use here (NVIDIA's through CUDA, Apple's through MPS).
# - It marks where the GPU starts to win.
# - It checks the host→device bus (on CUDA) and fp32 against bf16 (on the CPU and CUDA).
# - It writes a results file in the project's schema. You can add that file to the race in
#   your browser.
#
# It needs only `torch`, `numpy` and `matplotlib` (`pip install torch numpy matplotlib`).
# It is written for Python 3.10 to 3.13 and torch 2.4 or newer. The project's tests run it
# with Python 3.11 and torch 2.13, and check that Python 3.10 to 3.13 accept its syntax.
# How long it runs depends on the machine; the progress line says how long is left.
#
# <!-- site only -->
# The page you are reading was produced by running it on the machine that built the site,
# in a run of its own. That run skips the site's wait for a steady machine, and other work may
# have shared the machine. So its times can differ from the site's tables for the same
# configuration several-fold. The site's tables are the ones measured for the record.
#
# Download it as a notebook for Jupyter or Colab
# ([crossover_lab.ipynb](../crossover_lab.ipynb)) or as a plain Python script (the `.py`
# button above).
# <!-- end site only -->

# %%
import datetime
import hashlib
import html
import io
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
from matplotlib.ticker import FuncFormatter, LogFormatter
from torch import nn

# %% [markdown]
# ## What it times
#
# The race's own sizes, on every device torch finds here. Change `SIZES` to time fewer.

# %%
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
# ## A progress line
#
# Timing every point takes minutes. One line, redrawn in place, says how far the run is
# and about how long is left.

# %%
def in_jupyter() -> bool:
    """True in a Jupyter kernel (JupyterLab, Colab, VS Code, the site's build), False in a terminal."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


class Progress:
    """One progress line. In Jupyter it is one output redrawn in place, so a saved notebook (like the
    page you are reading) keeps only its last state; in a terminal it is redrawn with a carriage return."""

    def __init__(self, total: int, desc: str, every: float = 0.5):
        self.total, self.desc, self.every, self.done = total, desc, every, 0
        self.start = self.shown = time.perf_counter()
        self.handle = None
        if in_jupyter():
            from IPython.display import display

            self.handle = display({"text/plain": self.line()}, raw=True, display_id=True)

    def line(self) -> str:
        def clock(seconds: float) -> str:
            return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"

        elapsed = time.perf_counter() - self.start
        if self.done == self.total:
            return f"{self.desc}: {self.done} of {self.total}, done in {clock(elapsed)}"
        left = f", about {clock(elapsed / self.done * (self.total - self.done))} left" if self.done else ""
        return f"{self.desc}: {self.done} of {self.total} ({100 * self.done // self.total}%){left}"

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.done < self.total and time.perf_counter() - self.shown < self.every:
            return
        self.shown = time.perf_counter()
        if self.handle is not None:
            self.handle.update({"text/plain": self.line()}, raw=True)
        else:
            end = "\n" if self.done == self.total else ""
            print(f"\r{self.line()}", end=end, file=sys.stderr, flush=True)


# %% [markdown]
# ## Timing one epoch
#
# The dataset is created on the device, as it would sit after a one-off copy. GPU work is
# asynchronous. So the clock stops only after waiting for the device to finish
# (`torch.cuda.synchronize()` or `torch.mps.synchronize()`). Each point is timed once per
# round, and the rounds are interleaved. So a machine that speeds up or slows down while
# it runs shows up as spread, not as a false difference between points.

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

    # Warm-up: one whole untimed epoch, so every shape the timed epochs meet has run once (the
    # allocator grows, and a CPU library such as oneDNN builds its kernels for each shape on first use).
    epoch()
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
progress = Progress(total=len(points) * ROUNDS, desc="timing epochs")
for _ in range(ROUNDS):
    for point in points:
        samples[point].append(time_epoch(point[0], epochs[point]))
        progress.update(1)
median = {point: statistics.median(times) for point, times in samples.items()}
for w in WIDTHS:
    print(f"width {w}: " + ", ".join(f"{d} {median[(d, w, BATCHES[0])]:.3g} s at batch {BATCHES[0]}, "
                                     f"{median[(d, w, BATCHES[-1])]:.3g} s at batch {BATCHES[-1]}"
                                     for d in DEVICES) + " per epoch")

# %% [markdown]
# ## Where is the crossover?
#
# The crossover is the smallest batch from which the GPU finishes the epoch first. It must
# do so in every round and by at least 10%, at that batch and every larger one. Without a
# GPU there is none to find: the plot shows the CPU alone.

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


# The Okabe-Ito colours the site's plots use: told apart with any kind of colour vision, on light
# and dark backgrounds. One colour per width; the CPU draws solid lines and circles, a GPU dashed
# lines and squares. INK (text, axes) becomes the page's own text colour in Jupyter and on the site.
PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#0072B2", "#F0E442"]
INK = "#010203"


def show(fig, description: str) -> None:
    """In Jupyter (and on the page you are reading), the figure as an SVG that scales to the screen,
    takes the text colour of light or dark mode and carries `description` for screen readers;
    in a terminal, matplotlib's own window."""
    if not in_jupyter():
        plt.show()
        return
    from IPython.display import display

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)  # else Jupyter shows it a second time, as a PNG
    svg = buffer.getvalue()
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg[svg.index("<svg"):], flags=re.S)  # tool, version, date
    head, rest = svg.split(">", 1)
    svg = (head.replace("<svg ", '<svg role="img" aria-labelledby="lab-plot-title" aria-describedby="lab-plot-desc" '
                        'class="lab-plot" style="max-width: 100%; height: auto" ', 1)
           + f'><title id="lab-plot-title">{html.escape(fig.axes[0].get_title())}</title>'
           + f'<desc id="lab-plot-desc">{html.escape(description)}</desc>' + rest).replace(INK, "currentColor")
    display({"text/html": svg, "text/plain": description}, raw=True)


def describe() -> str:
    """What the plot shows, in words, for readers who cannot see it."""
    ends = "; ".join(f"{d.upper()} at width {w}: {median[(d, w, BATCHES[0])]:.3g} s at batch {BATCHES[0]}, "
                     f"{median[(d, w, BATCHES[-1])]:.3g} s at batch {BATCHES[-1]}" for d in DEVICES for w in WIDTHS)
    if GPU is None:
        verdict = "No GPU was found, so the CPU is shown alone and there is no crossover."
    else:
        found = [f"from batch {crossover(w)} at width {w}" if crossover(w) else f"at no batch at width {w}"
                 for w in WIDTHS]
        verdict = f"The {GPU.upper()} GPU finishes first " + ", ".join(found) + "."
    return (f"Line chart, both axes logarithmic: seconds to train one epoch of {ROWS} rows against batch size "
            f"({BATCHES[0]} to {BATCHES[-1]} samples), one line per device and layer width. {ends}. {verdict}")


style = {"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 12, "axes.titlesize": 12,
         "axes.labelsize": 12, "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11,
         "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK, "xtick.color": INK, "ytick.color": INK,
         "grid.color": INK, "grid.alpha": 0.15, "legend.frameon": False,
         "axes.facecolor": "none", "figure.facecolor": "none", "savefig.transparent": True,
         "svg.hashsalt": "crossover-lab"}  # the same ids from run to run
plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.01 rather than 10^-2


class PlainBetween(LogFormatter):
    """Labels between powers of ten where matplotlib would put some (a short axis), as 0.3 rather than 3e-01."""

    def __call__(self, value, pos=None):
        return f"{value:g}" if super().__call__(value, pos) else ""


with plt.rc_context(style):
    # Sized so that its text stays about 11 px tall when a phone shrinks it to the width of its screen.
    fig, ax = plt.subplots(figsize=(4.4, 4))
    for d in DEVICES:
        for colour, w in zip(PALETTE, WIDTHS):
            ax.plot(BATCHES, [median[(d, w, b)] for b in BATCHES], "-" if d == "cpu" else "--", color=colour,
                    marker="o" if d == "cpu" else "s", markersize=4, linewidth=1.8, label=f"{d.upper()}, width {w}")
    crossings = {}  # batch: the widths whose crossover it is
    for w in WIDTHS:
        if crossover(w):
            crossings.setdefault(crossover(w), []).append(str(w))
    for b, widths in crossings.items():
        ax.axvline(b, linestyle=":", color=INK, alpha=0.6)
        ax.annotate(f"crossover, width {', '.join(widths)}", (b, 1), xycoords=("data", "axes fraction"),
                    xytext=(3, -4), textcoords="offset points", rotation=90, va="top", ha="left", fontsize=11)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(BATCHES)
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(PlainBetween(labelOnlyBase=False))
    ax.grid(True, which="major")
    ax.set(xlabel="batch size (samples per step)", ylabel="time per epoch (s)",
           title=f"One epoch of {ROWS} rows, by batch size")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, handlelength=2.6)
    show(fig, describe())
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
# JSON). Add it to the race in your browser ("Add your machine"). It holds only the epochs
# and the precision check. So it is not a file for the project's `results/` folder. That
# folder takes the complete files `make measure` writes, published with
# `python -m build_hooks.publish`, which checks them first.

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
now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
benchmarks = [entry("epoch_time", {"device": d, "batch": b, "width": w, "rows": ROWS}, t,
                    {"steps": -(-ROWS // b)}) for (d, w, b), t in samples.items()] + [entry(*e) for e in extra]
groups = sorted({b["group"] for b in benchmarks})
results = {
    "schema_version": 1, "mode": "quick" if QUICK else "full", "machine_id": machine_id,
    "environment_key": hashlib.sha256(f"{identity}{torch.__version__}".encode()).hexdigest()[:20],
    "machine_info": {"cpu": {"brand": brand, "arch": platform.machine(), "threads_used": THREADS,
                             "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(), "clock_hz": None, "fp32_peak_flops": None,
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
out_dir = os.environ.get("CROSSOVER_LAB_OUTPUT", ".")  # the project's build and tests set it; you need not
os.makedirs(out_dir, exist_ok=True)
path = os.path.join(out_dir, f"{machine_id}.json")
with open(path, "w") as f:
    json.dump(results, f, indent=1)
where = " in the folder this notebook runs in" if out_dir == "." else ""
print(f"Your results file is {machine_id}.json{where}: to race it, open the site's race page, "
      "press \"Choose a results file\" under \"Add your machine\" and pick it (it never leaves your browser; "
      "tick \"keep\" to find it there after a reload).")
