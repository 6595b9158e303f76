"""The conditions a measurement was taken under: other processes' CPU use, steal, speed drift.

On a 2-core VM a timing taken while anything else runs can be 10x off, and the VM's
own speed drifts. pyperf's answer is to look before trusting ("the system is not
stable"); this module does the same with what Linux exposes:

- foreign CPU: the share of the machine's CPU capacity used by *other* processes during
  a point, from /proc/stat's busy time minus this process's own (and its children's);
- steal: the share the hypervisor gave to other guests;
- the canary: a fixed small matrix product timed between rounds, whose spread over the
  run shows how much the machine's speed drifted.

Off Linux the numbers are None and nothing is flagged. Nothing here imports torch.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

# A point is "under load" when other processes used more than this share of the CPU.
FOREIGN_CPU_LIMIT = 0.15


@dataclass(frozen=True)
class Snapshot:
    own_cpu: float  # seconds of CPU this process and its reaped children used
    busy: int | None  # jiffies the whole machine spent busy (steal excluded)
    steal: int | None
    total: int | None


def _proc_stat() -> tuple[int, int, int] | None:
    """(busy, steal, total) jiffies summed over all CPUs, or None off Linux."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal, sum(fields[:8])


def snapshot() -> Snapshot:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    stat = _proc_stat()
    return Snapshot(own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
                    *(stat if stat else (None, None, None)))


# /proc/stat counts in ticks (10 ms): over a short window one tick is a large share, so a
# verdict needs at least this much CPU capacity (seconds x cores) behind it.
MIN_CAPACITY_S = 1.0


def foreign_cpu(before: Snapshot, after: Snapshot) -> float | None:
    """Share of the machine's CPU capacity (0..1) other processes used between two snapshots."""
    return foreign_cpu_over([(before, after)])


def foreign_cpu_over(windows: list[tuple[Snapshot, Snapshot]]) -> float | None:
    """Like foreign_cpu, pooled over several windows (a point's rounds); None if too short to tell."""
    if not windows or any(b.busy is None or a.busy is None for b, a in windows):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    busy_s = sum(a.busy - b.busy for b, a in windows) / tick
    capacity_s = sum(a.total - b.total for b, a in windows) / tick
    own_s = sum(a.own_cpu - b.own_cpu for b, a in windows)
    if capacity_s < MIN_CAPACITY_S:
        return None
    return max(0.0, min(1.0, (busy_s - own_s) / capacity_s))


def steal(before: Snapshot, after: Snapshot) -> float | None:
    """Share of CPU time the hypervisor gave to other guests between two snapshots."""
    if before.steal is None or after.steal is None or after.total == before.total:
        return None
    return (after.steal - before.steal) / (after.total - before.total)


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def drift(readings: list[float] | None) -> float | None:
    """How far a canary moved over an experiment's rounds, as max / min (None with under two readings)."""
    return max(readings) / min(readings) if readings and len(readings) > 1 else None
