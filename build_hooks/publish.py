"""Copy this machine's full measurement into results/ as a committed reference file.

    python -m build_hooks.publish            # after `make measure`

Only a complete, full-mode, schema-valid file is accepted; it is written atomically
as results/<machine_id>.json, replacing an older file from the same machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_hooks import config, dataset, experiments, measure, store, untrusted


def publish(settings: config.Settings | None = None, rehearsal: bool = False) -> Path:
    from snippets.benchmarking import all_threads

    from build_hooks import provenance

    settings = settings or config.settings()
    if settings.quick and not (rehearsal and settings.results_dir != config.PROJECT_ROOT / "results"):
        raise ValueError("refusing to publish quick-mode results: unset CROSSOVER_QUICK")
    machine_id = provenance.collect(all_threads())["machine_id"]
    source = measure.cache_path(settings, machine_id)
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist: run `make measure` first")
    doc = store.load(source)
    missing = [name for name in experiments.suite(settings.gpu_slot) if name not in doc["experiments"]]
    if missing:
        raise ValueError(f"{source} lacks {', '.join(missing)}: run `make measure` to complete it")
    stale = measure.stale_experiments(doc, experiments.current_keys(settings.mode))
    if stale:
        raise ValueError(f"{source} holds results of older code for {', '.join(stale)}: "
                         "run `make site` (or `make measure`) before publishing")
    if settings.results_dir.exists() and not settings.results_dir.is_dir():
        raise ValueError(f"{settings.results_dir} is a file, not a folder of results files: move it "
                         "away (or set CROSSOVER_RESULTS_DIR) and publish again")
    target = settings.results_dir / f"{machine_id}.json"
    for other in dataset.load_committed(settings.results_dir, config.PROJECT_ROOT):
        if other.id == machine_id and other.source != dataset.display_path(target, config.PROJECT_ROOT):
            raise ValueError(f"{other.source} already holds this machine ({machine_id}): publishing would make "
                             f"a second file for it; remove or rename that file first")
    store.remove_stale_temporaries(target)  # left by a publish that was killed mid-write
    store.save_atomic(target, doc)
    return target


def main(argv: list[str] | None = None) -> int:
    # --rehearsal: a quick-mode run (scripts/measure-gpu on a CPU) may publish, but never into results/.
    rehearsal = "--rehearsal" in (sys.argv[1:] if argv is None else argv)
    try:
        print(f"published {publish(rehearsal=rehearsal)}")
    except (ValueError, FileNotFoundError, store.ResultsError) as exc:
        print(untrusted.terminal(f"crossover: {exc}"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
