"""Measuring beside `mkdocs serve`: the site is served at once, and this machine joins as it is measured.

A newcomer's `make serve` should show pages in seconds, not after every measurement. So
under `mkdocs serve` (and only there: `make site`, the publishing build, measures first)
the build does not measure; it starts one measuring process beside the server and renders
from the committed results plus whatever this machine has measured so far. That process
is `python -m build_hooks.measure`, guarded by the cache's lock like any other, with its
progress bar in the terminal. After each experiment it writes its progress (progress_file),
which the server watches: the site rebuilds, every page's banner says how far it got, and
this machine's lanes and numbers appear. Ctrl-C in the terminal reaches both processes;
the measurer saves what finished, and the server ends it on exit if it has not ended.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from build_hooks import config, digests

_process: subprocess.Popen | None = None
OWN_CTRL_C_S = 5   # Ctrl-C in a terminal reaches the measurer too: it is given this long to end by itself
STOP_GRACE_S = 20  # a measurer told to stop saves what finished and ends; after this it is killed


def progress_file(settings: config.Settings) -> Path:
    """Where a measuring run says how far it got: a folder of its own, which the server watches."""
    return settings.cache_dir / "progress" / f"{settings.mode}.json"


def write(settings: config.Settings, done: int, total: int, eta_s: float | None, results: str | None,
          current: str | None = None, pid: int | None = None) -> None:
    """Record a run's progress (atomically; failure only costs the banner)."""
    digests.save_entry(progress_file(settings), json.dumps({
        "pid": pid or os.getpid(), "done": done, "total": total, "current": current, "results": results,
        "eta_s": None if eta_s is None else round(eta_s, 1), "written": time.time()}))


def read(settings: config.Settings) -> dict | None:
    """The progress of a measuring run that is still running, or None."""
    try:
        found = json.loads(digests.load_entry(progress_file(settings)) or "null")
        pid, done, total = int(found["pid"]), int(found["done"]), int(found["total"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if done >= total or not _alive(pid):
        return None
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def partial_name(settings: config.Settings) -> str | None:
    """The results file name the last measuring run reported, if any (kept while a new run starts)."""
    try:
        return json.loads(digests.load_entry(progress_file(settings)) or "null")["results"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def partial_results(settings: config.Settings) -> Path | None:
    """This machine's results file as far as the running measurement has saved it, if any."""
    name = partial_name(settings)
    path = settings.cache_dir / Path(str(name)).name if name else None
    return path if path is not None and path.is_file() else None


def start(log=print) -> None:
    """Start the measuring process, unless one this server started is still running."""
    global _process
    if _process is not None and _process.poll() is None:
        return
    settings = config.settings()
    progress_file(settings).parent.mkdir(parents=True, exist_ok=True)
    log("crossover: serving the committed results now; measuring this machine in the background "
        "(its progress below; pages update as each experiment lands)")
    _process = subprocess.Popen([sys.executable, "-m", "build_hooks.measure"], cwd=config.PROJECT_ROOT)
    atexit.register(stop)
    # Until the measurer has looked at what it must do (it imports torch first), the first pages say it started.
    from build_hooks import experiments

    write(settings, 0, len(experiments.suite(settings.gpu_slot)), None, partial_name(settings), pid=_process.pid)


def stop() -> None:
    """End the measuring process this server started: asked first (it saves what finished), then forced."""
    if _process is None or _process.poll() is not None:
        return
    try:  # a second SIGINT while it saves would interrupt its own clean exit
        _process.wait(OWN_CTRL_C_S)
        return
    except subprocess.TimeoutExpired:
        _process.send_signal(signal.SIGINT)
    try:
        _process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        _process.kill()
        _process.wait()


def banner(settings: config.Settings) -> list[str]:
    """The Markdown lines every page opens with while this machine is being measured (or none)."""
    found = read(settings)
    if found is None:
        return []
    left = found.get("eta_s")
    eta = f", about {max(1, round(left / 60))} min left" if isinstance(left, (int, float)) else ""
    return ['!!! info "This machine is being measured"',
            f"    {found['done']} of {found['total']} experiments done{eta}. "
            "Its numbers join the pages as each experiment lands; until then they show the committed machines.",
            ""]
