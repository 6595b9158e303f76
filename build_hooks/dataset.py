"""Load every results file the site is built from and merge them into one dataset.

Committed reference files (results/*.json) come first; the build host's own fresh
measurement joins them and replaces a committed file from the same machine. Any file
that fails validation stops the build with its path and field.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from build_hooks import store

MERGED_FORMAT = "crossover-merged-v1"
# A lesson page draws an experiment for this many machines at most: the build host (or, where it has no
# such data, the newest machine that has) and machines with a GPU, newest first; drawn GPU machines first.
# Other CPU-only machines are left to the gallery and data/results.json: three near-identical CPU tables per
# section made every page long without teaching more (#39); the sentences that compare machines still read them all.
SHOWN_MACHINES = 3
# A CPU's widest vector or matrix extension, widest first: (isa flag, the name a label shows).
# The race page gets this table too (race.race_data), so a reader's file is named the same way.
VECTOR_UNITS = (("amx_tile", "AVX-512 + AMX"),  # AMX multiplies 16-bit and int8 only: fp32 runs on AVX-512
                ("avx512_bf16", "AVX-512 BF16"), ("avx512f", "AVX-512"),
                ("avx2", "AVX2"), ("sve", "SVE"), ("asimd", "NEON"))
# The device kinds that are a GPU: torch's NVIDIA (cuda) and Apple (mps, through Metal), and the
# race's browser lane (webgpu). The one list every page asks (is_gpu); the race page gets it too.
GPU_DEVICES = ("cuda", "mps", "webgpu")


def is_gpu(device: str) -> bool:
    """Whether a device kind is a GPU (CUDA, MPS or the browser's WebGPU), not a CPU."""
    return device in GPU_DEVICES


# The experiments the views read inside recording_reads(): a page names the snippet that measured a number.
_reads: contextvars.ContextVar[set | None] = contextvars.ContextVar("crossover_reads", default=None)


@contextlib.contextmanager
def recording_reads():
    """Collect, in the yielded set, the experiments any Machine is asked about inside the block."""
    read: set[str] = set()
    token = _reads.set(read)
    try:
        yield read
    finally:
        _reads.reset(token)


@contextlib.contextmanager
def not_recording():
    """Reads inside the block are not the rendering's inputs: a provenance line checks a machine's
    matrix products against its peak, yet the section it sits under shows no matrix product, and
    its "Code behind" must not say gemm_rate measured it."""
    token = _reads.set(None)
    try:
        yield
    finally:
        _reads.reset(token)


def _note(group: str) -> None:
    read = _reads.get()
    if read is not None:
        read.add(group)


@dataclass(frozen=True)
class Machine:
    """One results file: a machine, its provenance and its measurements."""

    doc: dict
    source: str  # where the file came from, relative to the project when possible
    origin: str  # "this build host" or "committed reference"
    # Set by Dataset where another file shares this CPU's brand at another clock (tell_apart): the clock joins the
    # name, so "AMD EPYC" and "AMD EPYC" read as two machines. Not compared: the same file, however it is named.
    clock_in_name: bool = field(default=False, compare=False)

    @property
    def id(self) -> str:
        return self.doc["machine_id"]

    @property
    def cpu(self) -> dict:
        return self.doc["machine_info"]["cpu"]

    @property
    def gpu(self) -> dict | None:
        return self.doc["machine_info"]["gpu"]

    @property
    def vector_units(self) -> str | None:
        """The CPU's widest vector or matrix extension, where the file records them (one brand, several kinds)."""
        isa = set(self.cpu.get("isa") or ())
        return next((name for flag, name in VECTOR_UNITS if flag in isa), None)

    @property
    def brand(self) -> str:
        """The CPU's brand as recorded, with its clock where another file shares the brand (clock_in_name)."""
        brand = self.cpu["brand"]
        return f"{brand} at {self.cpu['clock_hz'] / 1e9:.2f} GHz" if self.clock_in_name else brand

    @property
    def label(self) -> str:
        """A short human name: the GPU when there is one, else the CPU, its threads and vector units."""
        units = f", {self.vector_units}" if self.vector_units else ""
        cpu = f"{self.brand} ({self.cpu['threads_used']} threads{units})"
        return f"{self.gpu['name']} + {cpu}" if self.gpu else cpu

    def device_label(self, device: str) -> str:
        if is_gpu(device):
            return self.gpu["name"] if self.gpu else f"{device.upper()} (no GPU recorded)"
        units = f", {self.vector_units}" if self.vector_units else ""
        return f"CPU: {self.brand}, {self.cpu['threads_used']} threads{units}"

    @property
    def cpu_short_name(self) -> str:
        """The CPU in a few words for a sentence ("16-thread Intel Xeon", "2-thread Intel Xeon at 2.80GHz"): its brand
        without trademark signs or the words "CPU" and "Processor", and its thread count. A clock in the brand stays:
        two files of one brand are told apart by it. The full label stays in tables and captions."""
        brand = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b", " ", self.brand).replace("@", "at")
        brand = " ".join(brand.split()) or self.cpu["brand"]
        return f"{self.cpu['threads_used']}-thread {brand}"

    def devices(self, group: str) -> list[str]:
        _note(group)
        meta = self.doc["experiments"].get(group)
        return list(meta["devices"]) if meta else []

    @property
    def uses_mps(self) -> bool:
        """Whether this machine's GPU is Apple's, measured through MPS (it shares the CPU's memory)."""
        return any(self.gpu_device(g) == "mps" for g in self.doc["experiments"])

    def gpu_device(self, group: str) -> str | None:
        """The GPU device kind this machine measured `group` on (cuda, mps ...), or None."""
        return next((d for d in self.devices(group) if is_gpu(d)), None)

    def benchmarks(self, group: str, **params) -> list[dict]:
        """This machine's points of one experiment whose params match `params`."""
        _note(group)
        return [b for b in self.doc["benchmarks"]
                if b["group"] == group and all(b["params"].get(k) == v for k, v in params.items())]

    def measured(self, group: str, **params) -> list[dict]:
        """Like benchmarks(), without out-of-memory points: only those with timings."""
        return [b for b in self.benchmarks(group, **params) if b.get("status", "ok") == "ok"]

    def experiment(self, group: str) -> dict | None:
        _note(group)
        return self.doc["experiments"].get(group)

    @property
    def unfinished(self) -> dict[str, str]:
        """{experiment: why it has no results} for what a GPU machine's run did not finish."""
        return self.doc.get("unfinished", {})


def tell_apart(machines: list[Machine]) -> list[Machine]:
    """The machines, each whose CPU brand another shares at another clock named with its clock (Machine.brand): two
    files both called "AMD EPYC (2 threads)" are two machines a learner must tell apart. A brand that names its
    clock already ("@ 2.80GHz") is left as it is."""
    clocks: dict[str, set[str]] = {}
    for machine in machines:
        clocks.setdefault(machine.cpu["brand"], set()).add(f"{machine.cpu['clock_hz'] / 1e9:.2f}")
    return [dataclasses.replace(m, clock_in_name=True)
            if len(clocks[m.cpu["brand"]]) > 1 and "hz" not in m.cpu["brand"].lower() else m for m in machines]


@dataclass
class Dataset:
    machines: list[Machine] = field(default_factory=list)
    # A committed file the host's fresh measurement replaced (same machine): kept to
    # show how much a re-measurement moves the numbers.
    earlier: dict[str, Machine] = field(default_factory=dict)
    # The bytes of every file it was loaded from, hashed (load sets it): what view_cache keys on.
    # None for a dataset made in memory, which is then never cached.
    digest: str | None = None

    def __post_init__(self) -> None:
        self.machines = tell_apart(self.machines)

    @property
    def host(self) -> Machine | None:
        return next((m for m in self.machines if m.origin == "this build host"), None)

    @property
    def quick(self) -> bool:
        return any(m.doc["mode"] == "quick" for m in self.machines)

    def with_experiment(self, group: str) -> list[Machine]:
        return [m for m in self.machines if m.experiment(group)]

    def shown(self, group: str | None = None) -> list[Machine]:
        """The machines a lesson page draws (for `group`, or any): the first in order and those with a GPU, at most
        SHOWN_MACHINES, the GPU machines first."""
        machines = self.with_experiment(group) if group else self.machines
        # One order for every section, so a page draws the same machines throughout.
        ordered = sorted(machines, key=lambda m: (m.origin != "this build host", m.gpu is None, -_timestamp(m)))
        chosen = (ordered[:1] + [m for m in ordered[1:] if m.gpu is not None])[:SHOWN_MACHINES]
        # Drawn GPU machines first: a lesson asks what a GPU changes, so its numbers lead and the build host follows.
        return sorted(chosen, key=lambda m: m.gpu is None)

    def not_shown(self, group: str | None = None) -> int:
        """How many machines measured `group` (or anything) but are left off a lesson page."""
        return len(self.with_experiment(group) if group else self.machines) - len(self.shown(group))

    def to_json(self) -> str:
        """The merged data as published at site/data/results.json."""
        merged = {
            "format": MERGED_FORMAT,
            "description": "Every results file this site was rendered from; each entry "
                           "is one machine's file, schema crossover-results-v1.",
            "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machines": [{"origin": m.origin, "source": m.source, **m.doc} for m in self.machines],
        }
        return json.dumps(merged, indent=1, sort_keys=True, allow_nan=False) + "\n"


def _timestamp(machine: Machine) -> float:
    return dt.datetime.fromisoformat(machine.doc["datetime"]).timestamp()


def display_path(path: Path, root: Path) -> str:
    """`path` relative to the project; outside it, only its name (never the build machine's layout)."""
    return _relative(path, root) or path.name


def _error_path(path: Path, root: Path) -> str:
    """How an error names a file: relative to the project when it is inside it, else in full."""
    return _relative(path, root) or str(path)


def _relative(path: Path, root: Path) -> str | None:
    try:
        return str(Path(os.path.abspath(path)).relative_to(root))
    except ValueError:
        return None


# The race names a reader's own file's lanes "yours-…": a committed file may not pass for one.
READERS_PREFIX = "yours-"


def _load_named(path: Path, project_root: Path) -> dict:
    """store.load, with errors naming the file relative to the project."""
    try:
        doc = store.load(path)
    except store.ResultsError as exc:
        raise store.ResultsError(_error_path(path, project_root), exc.field, exc.problem) from None
    if doc["machine_id"].startswith(READERS_PREFIX):
        raise store.ResultsError(_error_path(path, project_root), "$.machine_id",
                                 f"'{doc['machine_id']}' starts with '{READERS_PREFIX}', which the race keeps for "
                                 "a reader's own file; a measured machine's id never does")
    return doc


def load(results_dir: Path, host_file: Path | None, project_root: Path) -> Dataset:
    """Validate and merge the committed results and the host's own file."""
    machines = {m.id: m for m in load_committed(results_dir, project_root)}
    earlier = {}
    if host_file is not None:
        doc = _load_named(host_file, project_root)
        if doc["machine_id"] in machines and machines[doc["machine_id"]].doc["mode"] == doc["mode"]:
            earlier[doc["machine_id"]] = machines[doc["machine_id"]]
        # The host's fresh measurement of its own hardware wins over a committed copy.
        machines[doc["machine_id"]] = Machine(doc, display_path(host_file, project_root),
                                              "this build host")
    host_first = sorted(machines.values(), key=lambda m: (m.origin != "this build host", m.id))
    return Dataset(host_first, earlier, _digest(host_first, earlier))


def _digest(machines: list[Machine], earlier: dict[str, Machine]) -> str:
    """A digest of what a dataset holds: each machine's role, the name pages show for its file (display_path, so
    a copy of the project and its cache shares renderings) and its document as loaded. Taken from the loaded
    documents, not by reading the files again: a file replaced between two reads would otherwise file the old
    file's renderings under the new one's digest."""
    h = hashlib.sha256()
    for role, machine in [("shown", m) for m in machines] + [("earlier", m) for _, m in sorted(earlier.items())]:
        text = json.dumps(machine.doc, sort_keys=True, separators=(",", ":"))
        h.update(f"{role}|{machine.origin}|{machine.source}|{len(text)}|{text}".encode())
    return h.hexdigest()


def load_committed(results_dir: Path, project_root: Path) -> list[Machine]:
    """Validate every committed results file; one machine id may appear only once."""
    machines: dict[str, Machine] = {}
    if results_dir.exists() and not results_dir.is_dir():
        raise store.ResultsError(_error_path(results_dir, project_root), "$",
                                 "should be a directory of results files, but is a file")
    for path in sorted(results_dir.glob("*.json")):
        doc = _load_named(path, project_root)
        if doc["machine_id"] in machines:
            raise store.ResultsError(_error_path(path, project_root), "$.machine_id",
                                     f"'{doc['machine_id']}' is also in {machines[doc['machine_id']].source}")
        machines[doc["machine_id"]] = Machine(doc, display_path(path, project_root),
                                              "committed reference")
    return list(machines.values())
