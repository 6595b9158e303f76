"""The lab notebook runs in a child process of its own, which fills mkdocs-jupyter's cache.

mkdocs-jupyter executes a notebook inside the build, and three things go wrong there:
- nbclient replaces the build's Ctrl-C handler while the kernel runs, so a Ctrl-C under
  `mkdocs serve` can end in "an error happened during the rebuild" and a server that stays;
- two builds executing at once (kernels over TCP) can hang until the block timeout;
- it writes its cache entry in place, so a full disk leaves a truncated entry that breaks
  every later build.

So before the notebook page renders, the hook (mkdocs_hooks.on_pre_page) asks `fill()` for
the entry mkdocs-jupyter will look up. A miss runs `python -m build_hooks.notebook_run`:
the same conversion mkdocs-jupyter does, in its own session (a terminal's Ctrl-C ends it
through this process, not behind its back), one at a time on this machine, under the block
timeout, written atomically. mkdocs-jupyter then finds the entry and only reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build_hooks import config, digests, store

# nb2html's options that mkdocs-jupyter passes from its configuration (the rest are its defaults).
OPTIONS = ("kernel_name", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
           "highlight_extra_classes", "include_requirejs", "custom_mathjax_url", "theme")
# One notebook run at a time on this machine, whichever checkout or cache it is for.
MACHINE_LOCK = Path(tempfile.gettempdir()) / "crossover-lab-notebook.lock"


class NotebookError(RuntimeError):
    """The lab notebook could not be executed or its output not stored (the message names which)."""


def cache_path(plugin_config, source: str, execute: bool) -> Path:
    """The cache entry mkdocs-jupyter looks up for this notebook (its own key function)."""
    from mkdocs_jupyter import plugin

    return plugin._get_cache_path(plugin_config["cache_dir"],
                                  plugin._compute_cache_key(source, plugin_config, execute))


def fill(plugin_config, source: str, timeout_s: float, log=print) -> Path:
    """Make sure the executed notebook's cache entry exists; run it in a child process if not."""
    entry = cache_path(plugin_config, source, True)
    if sealed(entry):
        return entry
    job = {"source": source, "entry": str(entry), "toc_depth": plugin_config["toc_depth"],
           "options": {name: plugin_config[name] for name in OPTIONS}}
    with _machine_lock(timeout_s, log):
        if not sealed(entry):  # another build may have run it while this one waited
            _discard(entry)
            _run_child(job, timeout_s)
    return entry


def _seal_path(entry: Path) -> Path:
    return entry.with_name(entry.name + ".sha256")


def sealed(entry: Path) -> bool:
    """Whether the entry is a regular file whose bytes match the digest its run stored beside it
    (mkdocs-jupyter reads the entry itself, so the digest cannot be inside it). A damaged, forged
    or foreign entry is run again: that costs time, never a wrong page."""
    data = digests.read_regular(entry)
    return data is not None and digests.load_entry(_seal_path(entry)) == digests.digest(data)


def _discard(entry: Path) -> None:
    """Remove an entry that is not sealed, so the run can write its own."""
    if entry.is_dir() and not entry.is_symlink():
        raise NotebookError(f"{entry} is a folder where the executed notebook's cache entry belongs: remove it")
    with contextlib.suppress(FileNotFoundError):
        entry.unlink()


@contextlib.contextmanager
def _machine_lock(timeout_s: float, log):
    """flock on MACHINE_LOCK, polled (no alarm to share with the page deadline, and any thread may wait)."""
    with MACHINE_LOCK.open("a") as handle:
        deadline = time.monotonic() + timeout_s
        said = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not said:
                    log(f"crossover: waiting for another build's lab notebook run ({MACHINE_LOCK})")
                    said = True
                if time.monotonic() > deadline:
                    raise NotebookError(f"gave up after {timeout_s:g} s waiting for {MACHINE_LOCK}") from None
                time.sleep(0.5)
        yield


def _run_child(job: dict, timeout_s: float) -> None:
    child = subprocess.Popen([sys.executable, "-m", "build_hooks.notebook_run"], cwd=config.PROJECT_ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    try:
        output, _ = child.communicate(json.dumps(job), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _end(child)
        raise NotebookError(f"{job['source']}: the lab notebook ran longer than {timeout_s:g} s "
                            "(CROSSOVER_BLOCK_TIMEOUT) and was stopped") from None
    except BaseException:  # Ctrl-C: the kernel goes with the build
        _end(child)
        raise
    if child.returncode != 0:
        raise NotebookError(f"{job['source']}: the lab notebook failed (exit {child.returncode}):\n"
                            + output[-3000:])


def _end(child: subprocess.Popen) -> None:
    """End the child and its kernel (its whole session), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def main() -> int:
    """Convert the notebook described on stdin as mkdocs-jupyter would, executing it, and store the entry."""
    from mkdocs_jupyter import convert, plugin

    job = json.loads(sys.stdin.read())
    options = job["options"]
    body = convert.nb2html(job["source"], execute=True, start=0, end=None, **options)
    toc_tokens, title = plugin._get_nb_toc_tokens(job["source"], job["toc_depth"])
    entry = json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title})
    try:
        store.write_atomically(Path(job["entry"]), entry)
        digests.save_entry(_seal_path(Path(job["entry"])), digests.digest(entry.encode()))
    except OSError as exc:
        print(f"crossover: could not store the executed notebook in {job['entry']}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
