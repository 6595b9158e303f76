"""No GPU number above its datasheet's peak: a check that fails loudly before a file is committed.

    python -m build_hooks.plausibility results/nvidia-h200-....json

A rate above the vendor's peak is not a fast GPU; it is a timer that stopped before the
work finished (a missing synchronize), a wrong FLOP or byte count, or a doctored file.
Each GPU point that has a rate is checked against the datasheet of the GPU the file
names (build_hooks/datasheets.py):

- gemm_rate: FLOP/s against FP32, or TF32 where the file says TF32 was allowed;
- precision matmuls: FLOP/s against the rate of their dtype (FP32, BF16, FP16), fp32 as TF32
  where the file says TF32 was allowed (as gemm_rate);
- memory_bandwidth: bytes moved per second against the memory bandwidth, for copies of at
  least STREAMING_BYTES only (a smaller copy may run from the GPU's cache, which is faster);
- transfer: bytes per second against one direction of the host link.

CPU points are not checked: a CPU's peak is computed from the clock the operating system
reports, which boost clocks exceed, so it is no bound.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_hooks import datasheets, store, untrusted

TOLERANCE = 1.02  # a datasheet rounds its figures; 2% over is rounding, more is a defect
STREAMING_BYTES = 2**28  # source + destination: several times the largest last-level cache of these GPUs


def violations(doc: dict) -> list[str]:
    """Every GPU point whose rate exceeds its datasheet peak, as a sentence naming it."""
    gpu = doc["machine_info"].get("gpu")
    sheet = datasheets.for_gpu(gpu and gpu["name"])
    if sheet is None:
        return []
    tf32 = doc["software"].get("cuda_matmul_allow_tf32") is True
    found = []
    for bench in doc["benchmarks"]:
        if bench["params"].get("device") == "cpu" or "stats" not in bench:
            continue
        rate, peak, what = _rate_and_peak(bench, sheet, tf32)
        if rate is not None and peak is not None and rate > TOLERANCE * peak:
            found.append(f"{untrusted.terminal(bench['name'])}: {rate:.3g} {what} is above the "
                         f"{sheet.name}'s peak of {peak:.3g} ({sheet.source})")
    return found


def _rate_and_peak(bench: dict, sheet: datasheets.Datasheet, tf32: bool) -> tuple[float | None, float | None, str]:
    group, extra, seconds = bench["group"], bench["extra_info"], bench["stats"]["min"]
    if group == "gemm_rate":
        return extra["flops"] / seconds, sheet.peak(_fp32_as_run("fp32", tf32)), "FLOP/s"
    if group == "precision" and bench["params"]["op"] == "matmul" and "flops" in extra:
        return extra["flops"] / seconds, sheet.peak(_fp32_as_run(bench["params"]["dtype"], tf32)), "FLOP/s"
    if group == "memory_bandwidth" and extra["bytes"] >= STREAMING_BYTES:
        return extra["bytes"] / seconds, sheet.memory_bytes_s, "bytes/s"
    if group == "transfer":
        return extra["bytes"] / seconds, sheet.host_link_bytes_s, "bytes/s"
    return None, None, ""


def _fp32_as_run(dtype: str, tf32: bool) -> str:
    """The datasheet rate an fp32 matmul is held to: TF32's where the file says cuBLAS could use it."""
    return "tf32" if dtype == "fp32" and tf32 else dtype


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    bad = 0
    for path in paths:
        try:
            found = violations(store.load(path))
        except store.ResultsError as exc:
            print(f"crossover: {exc}", file=sys.stderr)
            return 1
        for line in found:
            print(f"crossover: IMPLAUSIBLE: {path}: {line}", file=sys.stderr)
        bad += len(found)
    if bad:
        print(f"crossover: {bad} number(s) above the datasheet peak: a timer that stopped early or a wrong "
              "count; do not commit this file", file=sys.stderr)
        return 1
    print(f"crossover: plausible: no GPU number above its datasheet peak in {len(paths)} file(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
