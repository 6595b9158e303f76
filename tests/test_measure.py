"""Tests for build_hooks.measure: quick runs, reuse, invalidation and failures."""

import json
import os
import shutil
from pathlib import Path

import pytest

from build_hooks import config, experiments, measure, store

BROKEN = '''
NAME = "broken"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
def plan(devices, quick):
    return [{"device": "cpu", "n": 1}, {"device": "cpu", "n": 2}]
def measure(point, threads, quick):
    if point["n"] == 2:
        raise RuntimeError("simulated failure")
    return {"unit": "s", "samples": [0.1]}
'''


@pytest.fixture
def snippets(tmp_path, monkeypatch):
    """A private copy of snippets/ so tests can edit experiments freely."""
    copy = tmp_path / "snippets"
    shutil.copytree(experiments.SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(experiments, "SNIPPETS", copy)
    monkeypatch.setattr(experiments, "SHARED_SOURCES", [copy / "benchmarking.py"])
    return copy


def stub_experiment(name: str, depends: tuple[str, ...] = (), extra: str = "") -> str:
    """A snippet that measures in no time: the runner and its cache are what the tests below test."""
    return f'''"""A stub experiment for the cache tests."""
NAME = "{name}"
BENCH_VERSION = 1
PARAMS = {{"n": "positive"}}
DEPENDS = {list(depends)!r}
EXTRA_INFO = {{{extra}}}
def plan(devices, quick):
    return [{{"device": "cpu", "n": 1}}, {{"device": "cpu", "n": 2}}]
def measure(point, threads, quick):
    return {{"unit": "s", "samples": [1e-4 * point["n"], 1.1e-4 * point["n"], 1.2e-4 * point["n"]],
            "extra": {{k: 1 for k in EXTRA_INFO}}}}
'''


@pytest.fixture
def stub_snippets(tmp_path, monkeypatch):
    """A snippets/ of three instant experiments and a shared helper: step, epoch (imports step), other."""
    folder = tmp_path / "stub_snippets"
    folder.mkdir()
    (folder / "benchmarking.py").write_text('"""A stub of the shared timing helper."""\n')
    (folder / "step.py").write_text(stub_experiment("step"))
    (folder / "epoch.py").write_text(stub_experiment("epoch", depends=("step",)))
    (folder / "other.py").write_text(stub_experiment("other", extra='"flops": "FLOP"'))
    monkeypatch.setattr(experiments, "SNIPPETS", folder)
    monkeypatch.setattr(experiments, "SHARED_SOURCES", [folder / "benchmarking.py"])
    monkeypatch.setattr(experiments, "REGISTRY", experiments.discover())
    from snippets import benchmarking

    monkeypatch.setattr(benchmarking, "Canaries", SteadyCanaries)  # the machine's drift is not under test
    return folder


class SteadyCanaries:
    """Canaries of a machine that never changes state: the Gate lets every round through at once."""

    def __init__(self, threads: int):
        self.threads = threads

    def all_threads(self) -> float:
        return 1e-3

    def read(self) -> dict[str, float]:
        return {"one_thread": 1e-5, "all_threads": 1e-3, "memory": 1e-3}


STUBS = ["step", "epoch", "other"]


@pytest.fixture
def settings(tmp_path):
    return config.Settings(cache_dir=tmp_path / "cache", results_dir=tmp_path / "results", quick=True)


@pytest.fixture
def measured(monkeypatch):
    """Names of the experiments actually measured during the test."""
    names, real = [], measure._measure_experiment

    def spy(module, *args, **kwargs):
        names.append(module.NAME)
        return real(module, *args, **kwargs)

    monkeypatch.setattr(measure, "_measure_experiment", spy)
    return names


@pytest.mark.slow
def test_quick_run_writes_valid_records(quick_cache):
    """Every registered experiment ran in quick mode (the session's one run) into a schema-valid file."""
    path = next(p for p in quick_cache.glob("*.quick.json"))
    doc = store.load(path)
    assert doc["mode"] == "quick"
    assert set(doc["experiments"]) == set(experiments.REGISTRY)
    assert {b["group"] for b in doc["benchmarks"]} >= set(experiments.REGISTRY) - {"transfer"}
    assert all(b["stats"]["median"] > 0 for b in doc["benchmarks"] if b.get("status", "ok") == "ok")



@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> dict:
    """One real quick run of two experiments, canaries and Gate included (the site builds measure in smoke mode)."""
    folder = tmp_path_factory.mktemp("real-run")
    settings = config.Settings(cache_dir=folder / "cache", results_dir=config.PROJECT_ROOT / "results", quick=True)
    return store.load(measure.run(only=["training_step", "epoch_time"], settings=settings, log=lambda msg: None))


@pytest.mark.slow
def test_each_round_records_how_it_was_timed_and_the_canary_it_started_under(real_run):
    """Every timed point keeps, per round, the all-thread canary it started under and the calls each sample averaged."""
    doc = real_run
    timed = [b for b in doc["benchmarks"] if b.get("status", "ok") == "ok"]
    for b in timed:
        options = b["options"]
        assert len(options["canary_s"]) == len(options["calls_per_sample"]) == options["rounds"], b["name"]
        assert all(c > 0 for c in options["canary_s"])
    by_name = {b["name"]: b for b in timed}
    step = next(b for b in timed if b["group"] == "training_step")
    assert all(n >= 1 for n in step["options"]["calls_per_sample"])  # Timer's number_per_run
    epoch = next(b for b in timed if b["group"] == "epoch_time")
    assert epoch["options"]["calls_per_sample"] == [1] * epoch["options"]["rounds"]  # one epoch a sample
    assert by_name and all(meta["conditions"]["fastest_all_threads_s"] > 0 for meta in doc["experiments"].values())


def test_second_run_reuses_results(stub_snippets, settings, measured):
    """With nothing changed, a second run measures nothing and leaves the file as it was."""
    path = measure.run(only=STUBS, settings=settings)
    before = path.read_text()
    measured.clear()
    measure.run(only=STUBS, settings=settings)
    assert measured == [] and path.read_text() == before


def test_editing_experiment_code_remeasures_it_and_its_dependents(stub_snippets, settings, measured):
    """A change to an experiment's source re-measures it and the experiments that import it, only."""
    measure.run(only=STUBS, settings=settings)
    measured.clear()
    source = stub_snippets / "step.py"
    source.write_text(source.read_text() + "\n# an edit\n")
    measure.run(only=STUBS, settings=settings)
    assert sorted(measured) == ["epoch", "step"]


def test_editing_the_timing_helper_remeasures_everything(stub_snippets, settings, measured):
    """The shared timing helper is part of every experiment's key."""
    measure.run(only=STUBS, settings=settings)
    measured.clear()
    helper = stub_snippets / "benchmarking.py"
    helper.write_text(helper.read_text() + "\n# an edit\n")
    measure.run(only=STUBS, settings=settings)
    assert sorted(measured) == sorted(STUBS)


def test_changed_environment_keeps_old_results_aside(stub_snippets, settings, measured):
    """Results from other library versions are moved to the archive, not deleted, then re-measured."""
    path = measure.run(only=STUBS, settings=settings)
    doc = json.loads(path.read_text())
    doc["environment_key"] = "an-older-environment"
    path.write_text(json.dumps(doc))
    measured.clear()
    measure.run(only=STUBS, settings=settings, log=lambda msg: None)
    assert sorted(measured) == sorted(STUBS)
    archived = list((settings.cache_dir / "archive").glob("*previous-environment.json"))
    assert len(archived) == 1 and "an-older-environment" in archived[0].read_text()


def test_corrupt_host_cache_is_set_aside_and_remeasured(stub_snippets, settings):
    """A truncated host cache is moved aside with a message naming it, then measured afresh."""
    path = measure.run(only=["step"], settings=settings)
    path.write_text(path.read_text()[:100])
    messages = []
    measure.run(only=["step"], settings=settings, log=messages.append)
    assert store.load(path)["experiments"]
    assert str(path) in messages[0] and "unusable" in messages[0]
    assert list((settings.cache_dir / "archive").glob("*invalid.json"))


def test_failing_experiment_is_named_and_others_kept(stub_snippets, settings, monkeypatch):
    """An experiment that raises stops the run naming it and its point; finished ones stay saved."""
    (stub_snippets / "zz_broken.py").write_text(BROKEN.replace('"broken"', '"zz_broken"'))  # measured last
    monkeypatch.setattr(experiments, "REGISTRY", ["step", "zz_broken"])
    with pytest.raises(measure.MeasurementError, match=r"'zz_broken'.*'n': 2.*simulated failure"):
        measure.run(settings=settings)
    path = next(settings.cache_dir.glob("*.quick.json"))
    assert set(store.load(path)["experiments"]) == {"step"}


def test_interrupt_mid_experiment_keeps_finished_ones(stub_snippets, settings, monkeypatch, measured):
    """Ctrl-C during an experiment keeps earlier experiments; the next run measures only the rest."""
    (stub_snippets / "zz_slow.py").write_text(BROKEN.replace('"broken"', '"zz_slow"').replace(
        'raise RuntimeError("simulated failure")', "raise KeyboardInterrupt"))  # measured last
    monkeypatch.setattr(experiments, "REGISTRY", ["step", "zz_slow"])
    with pytest.raises(KeyboardInterrupt):
        measure.run(settings=settings)
    (stub_snippets / "zz_slow.py").write_text(BROKEN.replace('"broken"', '"zz_slow"').replace(
        'raise RuntimeError("simulated failure")', "pass"))
    measured.clear()
    measure.run(settings=settings)
    assert measured == ["zz_slow"]


def test_out_of_memory_is_recorded_not_raised(snippets, settings, monkeypatch):
    """An injected CUDA-style OOM during the memory sweep becomes an 'oom' point; the sweep goes on."""
    import torch

    real_forward = torch.nn.Conv2d.forward

    def forward(self, x):
        if x.shape[0] >= 4:
            raise torch.OutOfMemoryError("CUDA out of memory (injected by the test)")
        return real_forward(self, x)

    monkeypatch.setattr(torch.nn.Conv2d, "forward", forward)
    doc = store.load(measure.run(only=["activation_memory"], settings=settings))
    status = {b["params"]["batch"]: b["status"] for b in doc["benchmarks"]}
    assert status == {1: "ok", 4: "oom"}
    assert "injected" in next(b for b in doc["benchmarks"] if b["status"] == "oom")["extra_info"]["error"]


def test_unknown_experiment_is_refused(settings):
    """Asking for an experiment that does not exist names it and the known ones."""
    with pytest.raises(KeyError, match="unknown experiment 'nope'"):
        measure.run(only=["nope"], settings=settings)


def test_cli_reports_failure_without_traceback(snippets, settings, monkeypatch, capsys):
    """The command-line entry point prints a one-line error and exits 1 on an unknown experiment."""
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(settings.cache_dir))
    assert measure.main(["--only", "nope"]) == 1
    assert "unknown experiment" in capsys.readouterr().err


@pytest.mark.parametrize("make", ["file", "read-only"])
def test_unusable_cache_dir_is_a_clear_error(tmp_path, make):
    """A cache directory that is a file, or cannot be written, gives a crossover message, not a traceback."""
    directory = tmp_path / "cache"
    if make == "file":
        directory.write_text("not a folder")
    else:
        directory.mkdir()
        directory.chmod(0o500)
        if os.access(directory, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: permissions are not enforced")
    with pytest.raises(measure.MeasurementError, match="cache directory"):
        measure.usable_cache_dir(directory)


def test_lock_waiter_names_the_holder_and_gives_up_with_a_message(tmp_path):
    """A second measurement says whom it waits for; past its timeout it fails naming the holder."""
    path, messages = tmp_path / "cache" / "m.json", []
    with store.locked(path):
        with pytest.raises(store.LockTimeout, match="process .* since"):
            with store.locked(path, timeout_s=0.6, log=messages.append):
                pass
    assert messages and "waiting for another measurement" in messages[0] and "process" in messages[0]


def torch_and_numpy_venv(directory):
    """A venv holding torch and numpy with their own dependencies, and nothing else.

    Installing torch again would take minutes, so the venv links the installed packages
    of those distributions (their files and metadata) rather than copying them.
    """
    import importlib.metadata as metadata
    import re
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    python = directory / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    installed = Path(sysconfig.get_paths()["purelib"])
    todo, seen = ["torch", "numpy"], set()
    while todo:
        dist = metadata.distribution(todo.pop())
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if (installed / top).exists() and not (Path(purelib) / top).exists():
                (Path(purelib) / top).symlink_to(installed / top)
        for requirement in dist.requires or []:
            if "extra ==" not in requirement:
                todo.append(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0])
    return python, seen


@pytest.mark.slow
def test_measuring_needs_only_torch_and_numpy(tmp_path):
    """In a venv holding only torch and numpy (as on a bare GPU runner), measuring runs and saves."""
    import subprocess

    from conftest import ROOT, quick_env

    python, installed = torch_and_numpy_venv(tmp_path / "venv")
    assert not installed & {"jsonschema", "tqdm", "mkdocs", "matplotlib", "pyyaml"}
    env = quick_env(tmp_path / "cache", smoke=False)  # the canaries too, with torch and numpy only
    for package in ("jsonschema", "tqdm", "mkdocs"):  # the venv really lacks the site's packages
        assert subprocess.run([python, "-c", f"import {package}"], cwd=ROOT, env=env,
                              capture_output=True).returncode != 0
    result = subprocess.run([python, "-m", "build_hooks.measure", "--only", "call_overhead", "--only", "gemm_rate"],
                            cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "measuring call_overhead" in result.stderr
    doc = store.load(next((tmp_path / "cache").glob("*.quick.json")))
    assert {"call_overhead", "gemm_rate"} <= set(doc["experiments"])


def test_other_processes_cpu_use_is_detected_and_short_windows_are_not_judged():
    """A busy neighbour process is seen as foreign CPU; a window too short to tell gives no verdict."""
    import subprocess
    import sys
    import time

    from build_hooks import conditions

    if conditions.snapshot().busy is None:
        pytest.skip("no /proc/stat on this system")
    quick = conditions.snapshot()
    assert conditions.foreign_cpu(quick, conditions.snapshot()) is None  # microseconds: no verdict
    neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        before = conditions.snapshot()
        time.sleep(1.5)
        after = conditions.snapshot()
    finally:
        neighbour.kill()
        neighbour.wait()
    cores = len(os.sched_getaffinity(0))
    assert conditions.foreign_cpu(before, after) > 0.5 / cores  # one busy core out of `cores`


def test_a_changed_experiment_format_drops_only_that_experiment(stub_snippets, settings, measured):
    """Old points that miss a newly declared extra_info key are dropped; other experiments are kept, not re-measured."""
    measure.run(only=["step", "other"], settings=settings)
    path = next(settings.cache_dir.glob("*.quick.json"))
    kept_before = store.load(path)["experiments"]["step"]
    source = stub_snippets / "other.py"
    source.write_text(source.read_text().replace('EXTRA_INFO = {"flops": "FLOP"}',
                                                 'EXTRA_INFO = {"flops": "FLOP", "new_key": "count"}'))
    messages = []
    measured.clear()
    measure.run(only=["other"], settings=settings, log=messages.append)
    assert any("dropped them and kept the rest" in m for m in messages), messages
    assert measured == ["other"]
    assert not (settings.cache_dir / "archive").exists()
    assert store.load(path)["experiments"]["step"] == kept_before


def test_mps_is_offered_where_torch_has_it(monkeypatch):
    """devices() lists MPS where torch offers it."""
    import torch

    from snippets import benchmarking

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert benchmarking.devices() == ["cpu", "mps"]


@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_gpu_timing_waits_only_at_block_edges(monkeypatch, device):
    """On CUDA and MPS alike, calls in a block run back to back: one wait before and one after each block."""
    from snippets import benchmarking

    events = []
    monkeypatch.setattr(benchmarking, "synchronize", lambda d: events.append(("wait", d)))
    samples = benchmarking.time_it(lambda: events.append("call"), threads=1, min_run_time=0.001, warmup=0,
                                   device=device)
    blocks = [part for part in " ".join("|" if e != "call" else "c" for e in events).split("|") if part.strip()]
    assert len(samples) >= benchmarking.MIN_SAMPLES_PER_ROUND
    assert all(e == ("wait", device) for e in events if e != "call")
    # The sizing call, then the timed blocks: each block's calls sit between exactly two waits.
    sizes = [part.split().count("c") for part in blocks]
    assert sizes[0] == 1 and len(set(sizes[1:])) == 1 and sizes[1] == benchmarking.CALLS_PER_SAMPLE[-1]
    assert events.count(("wait", device)) == 2 * (1 + len(samples))


def test_gpu_blocks_are_sized_once_and_capped():
    """A block holds a tenth of the budget's calls, at least one and never more than the cap."""
    from snippets import benchmarking

    assert benchmarking.calls_per_block(1e-3, 0.1) == 10
    assert benchmarking.calls_per_block(1.0, 0.1) == 1
    assert benchmarking.calls_per_block(1e-12, 0.1) == benchmarking.MAX_CALLS_PER_BLOCK


def test_two_caches_set_aside_in_the_same_second_are_both_kept(tmp_path):
    """Archive names never collide: a second corrupt cache in the same second gets its own file."""
    cache = tmp_path / "m.quick.json"
    cache.write_text("first")
    first = measure._set_aside(cache, "invalid")
    cache.write_text("second")
    second = measure._set_aside(cache, "invalid")
    assert first != second and first.read_text() == "first" and second.read_text() == "second"


def test_a_warm_run_sweeps_stray_temporaries(tmp_path, monkeypatch):
    """The torch-free warm path removes temporaries a killed writer left, as the README says."""
    settings = config.Settings(cache_dir=tmp_path / "cache", results_dir=tmp_path / "results", quick=True)
    settings.cache_dir.mkdir()
    stray = settings.cache_dir / ".m.quick.json.abc.tmp"
    stray.write_text("half")
    monkeypatch.setattr(measure, "current_without_torch", lambda s: settings.cache_dir / "m.quick.json")
    measure.run(settings=settings, log=lambda msg: None)
    assert not stray.exists()


class _Bar:
    def set_postfix_str(self, *args, **kwargs):
        pass

    def update(self, n=1):
        pass


def test_the_time_box_stops_new_rounds_but_keeps_two(monkeypatch):
    """CROSSOVER_EXPERIMENT_BOX: no round starts once the box would overrun; two rounds always run, and it is recorded."""
    import time
    import types

    def slow(point, threads, quick):
        time.sleep(0.05)
        return {"unit": "s", "samples": [0.05, 0.051, 0.052]}

    module = types.SimpleNamespace(NAME="boxed", ROUNDS=6, measure=slow)
    monkeypatch.setenv("CROSSOVER_EXPERIMENT_BOX", "0.12")
    entries, measured_under = measure._measure_experiment(module, [{"device": "cpu"}], 1, True, _Bar())
    assert measured_under["rounds"] == 2 and measured_under["planned_rounds"] == 6
    assert measured_under["time_box_s"] == 0.12 and entries[0]["options"]["rounds"] == 2
    monkeypatch.delenv("CROSSOVER_EXPERIMENT_BOX")
    _, unboxed = measure._measure_experiment(module, [{"device": "cpu"}], 1, True, _Bar())
    assert unboxed["rounds"] == 6 and "planned_rounds" not in unboxed


def test_headline_experiments_are_measured_first():
    """The GPU pages' experiments come first, the rest by name, so a run cut short keeps the headlines."""
    order = measure.in_measuring_order(["threads", "epoch_time", "checkpointing", "transfer"])
    assert order == ["epoch_time", "transfer", "checkpointing", "threads"]


def test_a_rounds_median_is_the_one_its_stored_stats_print():
    """The runner judges a two-sample round by the same median stats.round_medians stores (their mean)."""
    from build_hooks import stats
    from build_hooks.measure import _sample_median

    rounds = [[1.0, 2.0], [3.0, 5.0, 4.0]]
    assert [_sample_median({"samples": r}) for r in rounds] == stats.summarise(sum(rounds, []), rounds)["round_medians"]


def test_experiments_that_failed_last_time_are_measured_last():
    """A resumed run measures what can succeed first: failed experiments go to the end, in their usual order."""
    names = ["training_step", "epoch_time", "zz_other", "transfer"]
    assert measure.in_measuring_order(names) == ["epoch_time", "training_step", "transfer", "zz_other"]
    assert measure.in_measuring_order(names, {"epoch_time": "failed"}) == ["training_step", "transfer", "zz_other",
                                                                           "epoch_time"]


def test_rounds_alternate_their_order_so_no_device_always_starts_one():
    """Odd rounds run the plan as listed (CPU points first), even rounds reversed (GPU points first)."""
    assert measure.round_order(3, 1) == [0, 1, 2] and measure.round_order(3, 2) == [2, 1, 0]


def test_one_profiling_session_serves_every_kind_of_a_round(monkeypatch):
    """step_profile records one profile per round and device, read by each kind, not one per kind."""
    from build_hooks import experiments

    module = experiments.load("step_profile")
    sessions = []
    monkeypatch.setattr(module, "profile_steps", lambda step, device, steps: sessions.append(device) or [{}] * steps)
    monkeypatch.setattr(module, "make_step", lambda *args: None)
    plan = module.plan(["cpu"], quick=True)
    for round_number in (1, 2):
        for i in measure.round_order(len(plan), round_number):
            module.measure(plan[i], 1, True)
    assert sessions == ["cpu", "cpu"]


def test_a_stamp_that_names_a_path_is_not_followed(tmp_path, monkeypatch):
    """A stamp whose results name reaches outside the cache (another machine's committed file) means: check again."""
    from build_hooks import provenance

    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    settings = config.settings()
    settings.cache_dir.mkdir(parents=True)
    measure._stamp_path(settings).write_text(json.dumps(
        {"fingerprint": provenance.light_fingerprint(), "results": "../../results/other.json",
         "environment_key": "x"}))
    monkeypatch.setattr(store, "load", lambda path: pytest.fail(f"followed the stamp to {path}"))
    assert measure.current_without_torch(settings) is None


def test_a_file_where_the_archive_folder_belongs_is_named(tmp_path):
    """A corrupt cache cannot be set aside into a file named archive: the error names both, nothing is lost."""
    (tmp_path / "archive").write_text("not a folder")
    cache = tmp_path / "m.quick.json"
    cache.write_text("{broken")
    with pytest.raises(measure.MeasurementError, match="archive is a file"):
        measure._set_aside(cache, "corrupt")
    assert cache.read_text() == "{broken"


def test_ctrl_c_during_the_torch_import_is_held_then_honoured():
    """A Ctrl-C while torch imports cannot be swallowed by the import: the block finishes, then the run stops."""
    import signal

    finished = []
    # A run started in the background by a shell without job control inherits an ignored Ctrl-C, which the
    # code leaves ignored: the test stands where a terminal's run does.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with measure._ctrl_c_held():
                os.kill(os.getpid(), signal.SIGINT)
                finished.append(True)  # the import goes on undisturbed
        assert finished and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


@pytest.mark.parametrize("kind", ["fifo", "endless", "folder"])
def test_a_stamp_that_is_no_file_means_check_again_without_hanging(tmp_path, monkeypatch, kind):
    """A stamp that is a FIFO, a link to /dev/zero or a folder is ignored (the full check runs); nothing hangs."""
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    settings = config.settings()
    settings.cache_dir.mkdir(parents=True)
    stamp = measure._stamp_path(settings)
    {"fifo": lambda: os.mkfifo(stamp), "endless": lambda: stamp.symlink_to("/dev/zero"), "folder": stamp.mkdir}[kind]()
    assert measure.current_without_torch(settings) is None


def test_a_process_left_by_a_point_stops_the_next_one_and_is_named_but_one_there_before_is_not():
    """The check before each point names a process started since the experiment began, by id and command, and
    leaves alone one that was there before it (a host's helper, a test runner's browser)."""
    import subprocess

    from snippets.benchmarking import descendants

    present = set(descendants(os.getpid()))  # this test worker's own (a browser, when it drove one)
    child = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(measure.MeasurementError, match=rf"before timing toy: .*{child.pid} sleep 30"):
            measure._no_leftover_processes("toy", present, grace_s=0.1)
        measure._no_leftover_processes("toy", present | {child.pid}, grace_s=0.1)
    finally:
        child.kill()
        child.wait()
