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


def _command(*args: str) -> str | None:
    """What a system tool prints, or None where it is missing or fails."""
    try:
        out = subprocess.run(list(args), capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


def _windows_processor(value: str):
    """A value of the first processor's registry key (Windows only), or None."""
    try:
        import winreg

        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE,
                            r"HARDWARE\DESCRIPTION\System\CentralProcessor\0") as key:
            return winreg.QueryValueEx(key, value)[0]
    except (ImportError, OSError):
        return None


def _number(text) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def cpu_brand(cpuinfo: dict[str, str]) -> str:
    """The CPU's marketing name on Linux, macOS and Windows; "unknown" rather than a guess.

    platform.processor() is not a brand ("arm" on a Mac, "Intel64 Family 6 Model 158 ..."
    on Windows, empty on Linux), so it is never used as one.
    """
    system = platform.system()
    if system == "Darwin":
        brand = _command("sysctl", "-n", "machdep.cpu.brand_string")
    elif system == "Windows":
        brand = _windows_processor("ProcessorNameString")
    else:
        brand = cpuinfo.get("model name") or cpuinfo.get("Model name")
    return (brand or "").strip() or "unknown"


def _max_clock_hz(cpuinfo: dict[str, str]) -> float | None:
    """The CPU's maximum clock where the OS tells it, else None (Apple Silicon does not)."""
    system = platform.system()
    if system == "Darwin":  # Intel Macs only; Apple Silicon has no such key
        return _number(_command("sysctl", "-n", "hw.cpufrequency_max"))
    if system == "Windows":  # the rated clock, in MHz
        mhz = _number(_windows_processor("~MHz"))
        return mhz * 1e6 if mhz else None
    cpufreq = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return float(cpufreq.read_text().strip()) * 1e3
    except (OSError, ValueError):
        pass
    mhz = _number(cpuinfo.get("cpu MHz"))
    return mhz * 1e6 if mhz else None


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


# The instruction-set extensions that change what a CPU measurement means (vector width, 16-bit
# matrix instructions): two VMs with one brand string ("AMD EPYC") but different ones are two machines.
ISA_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx_vnni",
             "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve", "sve2", "bf16", "i8mm")


def cpu_info(threads: int) -> dict:
    """The host CPU, the threads the measurements use and its theoretical fp32 peak."""
    info = _cpuinfo()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    vendor = info.get("vendor_id", "")
    clock = _max_clock_hz(info)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpu = {"brand": cpu_brand(info), "vendor": vendor, "arch": platform.machine(), "cores_available": cores,
           "threads_used": threads, "clock_hz": clock, "memory_bytes": _memory_bytes()}
    if info:
        cpu["isa"] = [flag for flag in ISA_FLAGS if flag in flags]
    if not info:  # off Linux nothing portable says which vector units the CPU has: no peak, not a wrong one
        return {**cpu, "fp32_peak_flops": None,
                "peak_formula": "unknown: this OS does not expose the CPU's vector instruction set"}
    per_cycle, why = fp32_flops_per_cycle(vendor, flags)
    return {**cpu, "fp32_flops_per_cycle": per_cycle,
            "fp32_peak_flops": threads * clock * per_cycle if clock else None,
            "peak_formula": f"threads x clock x FLOPs/cycle; {why}"}


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def gpu_info() -> dict | None:
    """The GPU the measurements use (CUDA, else Apple's MPS), or None where there is none."""
    import torch

    if not torch.cuda.is_available():
        return _mps_info(torch)
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


def _mps_info(torch) -> dict | None:
    """Apple's GPU through Metal: it shares the machine's memory, and torch reports no name for it."""
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        return None
    brand = cpu_brand({})
    return {"name": f"{brand} GPU (MPS)" if brand != "unknown" else "Apple GPU (MPS)",
            "memory_bytes": _memory_bytes() or 0, "cuda_version": None, "count": 1}


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
        **precision_settings(torch),
        "os": f"{platform.system()} {platform.release()}",
    }


# The legacy flags' defaults, which the fp32_precision API's "none" (not set) leaves in force.
LEGACY_DEFAULTS = {"float32_matmul_precision": "highest", "cuda_matmul_allow_tf32": False, "cudnn_allow_tf32": True}


def precision_settings(torch) -> dict:
    """What "fp32" means on this run: the float32 matmul precision and whether cuBLAS and cuDNN may use TF32.

    torch 2.9 added per-backend `fp32_precision` settings ("ieee", "tf32", "bf16", or "none"
    to inherit); once anything sets one, reading a legacy flag (`allow_tf32`,
    get_float32_matmul_precision) raises. So the new settings are read where this torch
    has them, and the legacy flags only where they are still the ones in force.
    """
    backends = torch.backends
    if not hasattr(getattr(backends.cuda, "matmul", None), "fp32_precision"):  # before torch 2.9
        return _legacy_precision(torch)
    matmul = _effective(backends.cuda.matmul.fp32_precision, backends.fp32_precision)
    conv = _effective(getattr(getattr(backends.cudnn, "conv", None), "fp32_precision", "none"),
                      getattr(backends.cudnn, "fp32_precision", "none"), backends.fp32_precision)
    cpu = _effective(getattr(getattr(backends.mkldnn, "matmul", None), "fp32_precision", "none"),
                     getattr(backends.mkldnn, "fp32_precision", "none"), backends.fp32_precision)
    if matmul == conv == cpu == "none":  # nothing set through the new API: the legacy flags decide
        return _legacy_precision(torch)
    legacy = {**LEGACY_DEFAULTS, **_legacy_precision(torch, quiet=True)}
    return {"float32_matmul_precision": "medium" if cpu == "bf16" else "high" if "tf32" in (matmul, cpu)
            else "highest" if "ieee" in (matmul, cpu) else legacy["float32_matmul_precision"],
            "cuda_matmul_allow_tf32": matmul == "tf32" if matmul != "none" else legacy["cuda_matmul_allow_tf32"],
            "cudnn_allow_tf32": conv == "tf32" if conv != "none" else legacy["cudnn_allow_tf32"]}


def _effective(*levels: str) -> str:
    """The first setting that is not "none" from the most specific level up, else "none"."""
    return next((level for level in levels if level != "none"), "none")


def _legacy_precision(torch, quiet: bool = False) -> dict:
    """The legacy flags; quiet: only those that can still be read (a mix of APIs makes each raise)."""
    readers = {"float32_matmul_precision": torch.get_float32_matmul_precision,
               "cuda_matmul_allow_tf32": lambda: bool(torch.backends.cuda.matmul.allow_tf32),
               "cudnn_allow_tf32": lambda: bool(torch.backends.cudnn.allow_tf32)}
    found = {}
    for key, read in readers.items():
        try:
            found[key] = read()
        except RuntimeError:
            if not quiet:
                raise
    return found


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
    if cpu.get("isa") is not None:  # files from before it was recorded keep their ids
        identity.append(cpu["isa"])
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
        "datetime": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
