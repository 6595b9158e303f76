"""The dataset the pages of one build render from, prepared once per build.

The MkDocs hook calls prepare() before any page renders; markdown-exec blocks call
current(). Both go through the same path, so a page cannot see data the build did not
validate.
"""

from __future__ import annotations

from build_hooks import background, config, dataset, measure

_current: dataset.Dataset | None = None
serving = False  # set by the MkDocs hook under `mkdocs serve`: measure beside the server, not before it


def prepare(log=print) -> dataset.Dataset:
    """Measure what is missing on this machine, then load and merge every results file.

    Under `mkdocs serve` nothing waits for measuring: what this machine lacks is measured in
    the background (build_hooks/background.py) and the pages render from what is there.
    """
    global _current
    settings = config.settings()
    # Check committed files first: a broken one should stop the build before minutes of measuring.
    dataset.load_committed(settings.results_dir, config.PROJECT_ROOT)
    if serving:
        host_file = measure.current_without_torch(settings)
        if host_file is None:
            background.start(log)
            host_file = background.partial_results(settings)
    else:
        host_file = measure.run(settings=settings, log=log)
    _current = dataset.load(settings.results_dir, host_file, config.PROJECT_ROOT)
    return _current


def current() -> dataset.Dataset:
    """The prepared dataset (preparing it if a page is rendered outside a hooked build)."""
    return _current if _current is not None else prepare()
