"""Who measured what, where and with which software: the provenance of a results file.

Everything here is read from the machine at measurement time. The only assumption is
the CPU's FLOPs per cycle (no portable way to read it); it is stated in the record
next to the peak it produces, so a reader can check it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import subprocess
from pathlib import Path

from build_hooks.config import PROJECT_ROOT


def _cpuinfo() -> dict[str, str]:
    """First processor block of /proc/cpuinfo as a dict (empty off Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    info: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def _max_clock_hz(cpuinfo: dict[str, str]) -> float | None:
    """The CPU's maximum clock if the kernel exposes it, else the current one."""
    cpufreq = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return float(cpufreq.read_text().strip()) * 1e3
    except (OSError, ValueError):
        pass
    mhz = cpuinfo.get("cpu MHz")
    return float(mhz) * 1e6 if mhz else None


def fp32_flops_per_cycle(vendor: str, flags: set[str]) -> tuple[int, str]:
    """FP32 FLOPs one core can retire per cycle, and the reasoning behind the figure.

    Vector width × FMA pipes × 2 (a fused multiply-add counts as two FLOPs). AMD's
    Zen 4 runs AVX-512 on two 256-bit pipes, so it gets no more than AVX2 does.
    """
    if "avx512f" in flags and vendor == "GenuineIntel":
        return 64, "AVX-512: 16 fp32 lanes x 2 FMA units x 2 FLOPs (Intel server core assumed)"
    if "fma" in flags and "avx2" in flags:
        return 32, "AVX2/FMA: 8 fp32 lanes x 2 FMA units x 2 FLOPs" + (
            " (Zen 4 runs AVX-512 on 256-bit pipes)" if "avx512f" in flags else ""
        )
    if "avx" in flags:
        return 16, "AVX: 8 fp32 lanes x 1 add + 1 multiply unit"
    if platform.machine() in {"aarch64", "arm64"}:
        return 16, "NEON: 4 fp32 lanes x 2 FMA units x 2 FLOPs (assumed)"
    return 8, "SSE: 4 fp32 lanes x 1 add + 1 multiply unit (assumed)"


def cpu_info(threads: int) -> dict:
    """The host CPU, the threads the measurements use and its theoretical fp32 peak."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    vendor = info.get("vendor_id", "")
    clock = _max_clock_hz(info)
    per_cycle, why = fp32_flops_per_cycle(vendor, flags)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    peak = threads * clock * per_cycle if clock else None
    return {
        "brand": info.get("model name") or platform.processor() or platform.machine(),
        "vendor": vendor,
        "arch": platform.machine(),
        "cores_available": cores,
        "threads_used": threads,
        "clock_hz": clock,
        "fp32_flops_per_cycle": per_cycle,
        "fp32_peak_flops": peak,
        "peak_formula": f"threads x clock x FLOPs/cycle; {why}",
        "memory_bytes": _memory_bytes(),
    }


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def gpu_info() -> dict | None:
    """The CUDA device the measurements use, or None where there is none."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return {
        "name": props.name,
        "memory_bytes": props.total_memory,
        "capability": f"{props.major}.{props.minor}",
        "multiprocessors": props.multi_processor_count,
        "cuda_version": torch.version.cuda,
        "driver": _nvidia_driver(),
        "count": torch.cuda.device_count(),
    }


def _nvidia_driver() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        )
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def blas_backend() -> str:
    """The BLAS torch was built against, as torch itself reports it."""
    import torch

    match = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return match.group(1) if match else "unknown"


def software_info() -> dict:
    """Library versions and the precision settings that decide what "fp32" means."""
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": _version("numpy"),
        "blas": blas_backend(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cuda_matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "os": f"{platform.system()} {platform.release()}",
    }


def git_commit() -> dict:
    """The commit the measuring code came from, and whether the tree was modified."""
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                timeout=10, check=True,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"id": commit, "dirty": bool(status) if status is not None else None}


def machine_id(machine: dict) -> str:
    """A short, stable name for the hardware: same machine kind, same id."""
    cpu, gpu = machine["cpu"], machine.get("gpu")
    identity = [cpu["brand"], cpu["arch"], cpu["threads_used"], gpu and gpu["name"]]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9]+", "-", (gpu["name"] if gpu else cpu["brand"]).lower()).strip("-")
    return f"{slug[:40]}-{digest}"


def light_fingerprint() -> dict:
    """What identifies this machine and its libraries, read without importing torch.

    A warm rebuild compares it with the one stored after the last full check: equal
    means the host's results are current and torch need not even be imported. Anything
    that could change a measurement's meaning is in it: CPU model and flags, cores and
    affinity, thread settings, GPU device nodes and driver, library versions.
    """
    info = _cpuinfo()
    flags = info.get("flags") or info.get("Features") or ""
    try:
        nvidia = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        nvidia = None
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "platform": [platform.system(), platform.machine(), platform.python_version()],
        "cpu": [info.get("model name") or platform.processor(), hashlib.sha256(flags.encode()).hexdigest()[:16],
                os.cpu_count(), affinity],
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES")},
        "gpu": [sorted(p.name for p in Path("/dev").glob("nvidia[0-9]*")), nvidia],
        "libraries": {name: _version(name) for name in ("torch", "numpy")},
    }


def collect(threads: int) -> dict:
    """The provenance block written at the top of every results file."""
    machine = {"cpu": cpu_info(threads), "gpu": gpu_info()}
    return {
        "machine_id": machine_id(machine),
        "machine_info": machine,
        "software": software_info(),
        "commit_info": git_commit(),
        "datetime": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
