"""Copy this machine's full measurement into results/ as a committed reference file.

    python -m build_hooks.publish            # after `make measure`

Only a complete, full-mode, schema-valid file is accepted (a GPU machine's run may publish
what finished, with the rest listed as unfinished); it is written atomically as
results/<machine_id>.json, replacing an older file from the same machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_hooks import config, dataset, experiments, measure, store, untrusted

NOT_REACHED = "not measured: the run's time limit came first"


def publish(settings: config.Settings | None = None, rehearsal: bool = False, partial: bool = False) -> Path:
    """Write this machine's measurement of its suite (all experiments, or a GPU slot's) to results/.

    partial (a GPU machine's run): what finished is published, and every experiment of the
    suite without results is listed under "unfinished" with why, so the site shows it as not
    measured; without it, a file lacking any experiment is refused.
    """
    settings = settings or config.settings()
    if settings.quick and not (rehearsal and settings.results_dir != config.PROJECT_ROOT / "results"):
        raise ValueError("refusing to publish quick-mode results: unset CROSSOVER_QUICK")
    from build_hooks import provenance
    from snippets.benchmarking import all_threads

    machine_id = provenance.collect(all_threads())["machine_id"]
    source = measure.cache_path(settings, machine_id)
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist: run `make measure` first")
    doc = store.load(source)
    suite = experiments.suite(settings.gpu_slot)
    # Staleness and completeness are judged over the same experiments: the suite this run measures.
    missing = [name for name in suite if name not in doc["experiments"]]
    if missing and not partial:
        raise ValueError(f"{source} lacks {', '.join(missing)}: run `make measure` to complete it")
    stale = [name for name in measure.stale_experiments(doc, experiments.current_keys(settings.mode, suite))
             if name in doc["experiments"]]
    if stale:
        raise ValueError(f"{source} holds results of older code for {', '.join(stale)}: "
                         "run `make site` (or `make measure`) before publishing")
    doc = _suite_only(doc, suite, {name: doc.get("unfinished", {}).get(name, NOT_REACHED) for name in missing})
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


def _suite_only(doc: dict, suite: list[str], unfinished: dict[str, str]) -> dict:
    """The document with the suite's experiments only (a host cache may hold others, measured by an
    earlier, fuller run) and the suite's unfinished ones listed with why."""
    doc = {**doc, "experiments": {n: m for n, m in doc["experiments"].items() if n in suite},
           "benchmarks": [b for b in doc["benchmarks"] if b["group"] in suite]}
    doc.pop("unfinished", None)
    return {**doc, "unfinished": unfinished} if unfinished else doc


def main(argv: list[str] | None = None) -> int:
    # --rehearsal: a quick-mode run (scripts/measure-gpu on a CPU) may publish, but never into results/.
    # --partial: publish what finished, listing the rest as unfinished (scripts/measure-gpu).
    args = sys.argv[1:] if argv is None else argv
    try:
        print(f"published {publish(rehearsal='--rehearsal' in args, partial='--partial' in args)}")
    except (ValueError, FileNotFoundError, store.ResultsError) as exc:
        print(untrusted.terminal(f"crossover: {exc}"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
