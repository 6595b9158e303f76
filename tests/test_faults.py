"""Fault injection: kills, hangs, concurrent builds, hostile and broken input never lose data or lie.

Each test is one fault case; the closing note of the hardening issue counts them.
"""

import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from build_hooks import config, experiments, measure, render, store
from build_hooks.dataset import Machine
from conftest import MKDOCS, ROOT, quick_env, synthetic_doc

SLOW = '''
import time
NAME = "slow"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
def plan(devices, quick):
    return [{"device": "cpu", "n": 1}]
def measure(point, threads, quick):
    print("slow experiment started", flush=True)
    time.sleep(60)
    return {"unit": "s", "samples": [0.1]}
'''

# Finishes at once, so a one-second point timeout can only ever catch the slow experiment, under any load.
INSTANT = SLOW.replace('NAME = "slow"', 'NAME = "instant"').replace(
    '    print("slow experiment started", flush=True)\n    time.sleep(60)\n', '')

RUNNER = '''
import signal
import sys
from pathlib import Path
# A shell that starts a job in the background makes it ignore SIGINT; a person's Ctrl-C
# reaches a foreground process, so restore Python's usual handler for the Ctrl-C test.
signal.signal(signal.SIGINT, signal.default_int_handler)
from build_hooks import experiments, measure
experiments.SNIPPETS = Path(sys.argv[1])
experiments.SHARED_SOURCES = [experiments.SNIPPETS / "benchmarking.py"]
experiments.REGISTRY = sys.argv[2].split(",")
sys.exit(measure.main([]))
'''


@pytest.fixture
def snippets(tmp_path):
    copy = tmp_path / "snippets"
    shutil.copytree(experiments.SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "slow.py").write_text(SLOW)
    (copy / "instant.py").write_text(INSTANT)
    return copy


def start_measure(tmp_path, snippets, registry, smoke=False, **env):
    """`python -m build_hooks.measure` in a subprocess, on a private snippets folder and cache (smoke: as the site
    builds measure, for tests of what happens around the measuring rather than of it)."""
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(snippets), ",".join(registry)],
        env={**os.environ, **quick_env(tmp_path / "cache", smoke=smoke), **env}, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_slow_start(process, cache_dir, timeout=120):
    """Block until the slow experiment has begun (so everything before it is saved)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = process.stdout.readline()
        if "slow experiment started" in line:
            return
    raise AssertionError("the slow experiment never started")


def cache_doc(tmp_path):
    return store.load(next((tmp_path / "cache").glob("*.quick.json")))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_killed_mid_experiment_keeps_finished_ones_and_resumes(tmp_path, snippets, sig):
    """Killed during an experiment: finished experiments stay on disk; the next run measures only the rest."""
    process = start_measure(tmp_path, snippets, ["call_overhead", "slow"], smoke=True)
    wait_for_slow_start(process, tmp_path / "cache")
    before = cache_doc(tmp_path)
    process.send_signal(sig)
    _, err = process.communicate(timeout=60)
    assert process.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    if sig == signal.SIGINT:
        assert "interrupted" in err
    assert cache_doc(tmp_path) == before and set(before["experiments"]) == {"call_overhead"}
    (snippets / "slow.py").write_text(SLOW.replace("time.sleep(60)", "pass").replace(
        'print("slow experiment started", flush=True)', ""))
    resumed = start_measure(tmp_path, snippets, ["call_overhead", "slow"], smoke=True)
    resumed.communicate(timeout=120)
    after = cache_doc(tmp_path)
    assert after["experiments"]["call_overhead"] == before["experiments"]["call_overhead"]
    assert "slow" in after["experiments"]


def test_killed_mid_write_leaves_old_file_and_the_leftover_is_cleaned(tmp_path, doc):
    """SIGKILL while a results file is being written: the old file is intact; the stray temp is removed later."""
    path = tmp_path / "cache" / "m.quick.json"
    store.save_atomic(path, doc)
    before = path.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", f'''
import json, os, time
from pathlib import Path
from build_hooks import store
doc = json.loads(Path({str(path)!r}).read_text())
doc["datetime"] = "2026-01-01T00:00:00+00:00"
os.fsync = lambda fd: (print("writing", flush=True), time.sleep(60))
store.save_atomic(Path({str(path)!r}), doc)
'''], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert "writing" in writer.stdout.readline()
    writer.kill()
    writer.wait()
    assert path.read_bytes() == before
    leftovers = list(path.parent.glob(".m.quick.json.*.tmp"))
    assert leftovers and store.remove_stale_temporaries(path) == leftovers
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.slow
def test_hanging_measurement_is_bounded_and_reported(tmp_path, snippets):
    """A point that never returns is stopped by the per-point timeout, named, and the rest is kept."""
    process = start_measure(tmp_path, snippets, ["instant", "slow"], CROSSOVER_POINT_TIMEOUT="2")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "'slow'" in err and "no result after 2 s" in err
    assert set(cache_doc(tmp_path)["experiments"]) == {"instant"}


@pytest.mark.slow
def test_hang_in_native_code_is_ended_by_the_watchdog(tmp_path, snippets):
    """A point that Python's timeout cannot reach (as in a hung CUDA call) is killed, located, and the rest kept."""
    # Blocking SIGALRM stands in for native code that never returns to the interpreter.
    (snippets / "slow.py").write_text(SLOW.replace(
        "    time.sleep(60)", "    import signal\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
                             "    time.sleep(60)"))
    process = start_measure(tmp_path, snippets, ["instant", "slow"], CROSSOVER_POINT_TIMEOUT="1")
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "Timeout" in err and "slow.py" in err  # the watchdog names the file and line that hung
    assert set(cache_doc(tmp_path)["experiments"]) == {"instant"}


@pytest.mark.slow
def test_two_measurements_at_once_do_not_corrupt_the_cache(tmp_path, snippets):
    """Two concurrent runs on one cache serialise on the lock: one measures, the other reuses; the file is valid."""
    first = start_measure(tmp_path, snippets, ["call_overhead", "gemm_rate"], smoke=True)
    second = start_measure(tmp_path, snippets, ["call_overhead", "gemm_rate"], smoke=True)
    assert first.wait(timeout=180) == 0 and second.wait(timeout=180) == 0
    doc = cache_doc(tmp_path)
    assert set(doc["experiments"]) == {"call_overhead", "gemm_rate"}
    names = [b["name"] for b in doc["benchmarks"]]
    assert len(names) == len(set(names))  # nothing measured twice into the file


def test_absurdly_large_results_file_is_refused(tmp_path, monkeypatch):
    """A results file above the size limit is refused with its path before being parsed."""
    monkeypatch.setattr(store, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(synthetic_doc()))
    with pytest.raises(store.ResultsError, match="larger than"):
        store.load(path)


def test_path_like_machine_id_cannot_escape_results(tmp_path):
    """A machine id shaped like a path is rejected by the schema, so publish never writes outside results/."""
    doc = synthetic_doc(machine_id="../../outside")
    with pytest.raises(store.ResultsError, match=r"\$\.machine_id"):
        store.validate(doc, "hostile.json")


def test_committed_results_from_other_library_versions_are_flagged():
    """A committed file measured with another torch shows a visible 'different library versions' note: each version
    named in the full record, in a few words under a lesson's result (which links to the record)."""
    host = Machine(synthetic_doc("host"), "cache", "this build host")
    other_doc = synthetic_doc("gpu-runner", gpu="Fixture GPU")
    other_doc["software"]["torch"] = "2.9.0"
    other = Machine(other_doc, "results/gpu-runner.json", "committed reference")
    line = render.provenance(other, host, full=True)
    assert "different library versions" in line and "torch 2.9.0 (this build: 2.13.0)" in line
    assert "different library versions" not in render.provenance(host, host, full=True)
    short = render.provenance(other, host)
    assert "Other library versions than this build's: compare with care." in short and "torch 2.9.0." in short
    assert "#machines-in-this-build\">Full record</a>" in short
    assert "Other library versions" not in render.provenance(host, host)


def build_page_with_block(tmp_path, quick_cache, block: str, **env):
    """A strict build of a one-page site (the project's configuration, hooks and theme) whose page ends with the
    exec block `block`: a block's failure is the page's, so one page proves it, in seconds and under any load."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "probe.md").write_text(f"# Probe\n\nA page with one exec block.\n\n{block}\n")
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {docs}\n"
                           f"hooks: [{ROOT / 'build_hooks' / 'mkdocs_hooks.py'}]\n"
                           f"theme: {{custom_dir: {ROOT / 'overrides'}}}\nwatch: []\nnav: [probe.md]\n")
    cache = tmp_path / "cache"
    shutil.copytree(quick_cache, cache)
    return subprocess.run([*MKDOCS, "build", "--strict", "-f", str(config_file), "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=quick_env(cache) | env, capture_output=True, text=True, timeout=600)


def test_failing_snippet_fails_the_strict_build_naming_block_and_page(tmp_path, quick_cache):
    """An exec block that raises stops the strict build; the message names its id and its page."""
    result = build_page_with_block(tmp_path, quick_cache,
                                  '```python exec="1" id="broken-block"\nraise ValueError("kaput")\n```')
    assert result.returncode != 0
    assert "'broken-block' exited with errors on page probe.md" in result.stderr
    assert "kaput" in result.stderr


def test_no_gpu_is_shown_as_not_measured(built_site):
    """On a CPU-only build the pages say the GPU was not measured instead of showing GPU numbers."""
    html = (built_site / "batch-size" / "index.html").read_text()
    merged = json.loads((built_site / "data" / "results.json").read_text())
    if any(m["machine_info"]["gpu"] for m in merged["machines"]):
        pytest.skip("this build has GPU results")
    assert "GPU: not measured" in html
    transfer = (built_site / "transfer" / "index.html").read_text()
    assert "This build measured no copy to a GPU" in transfer and "Not applicable on any machine in this build" in transfer


@pytest.mark.slow
def test_endless_exec_block_is_stopped_naming_block_and_page(tmp_path, quick_cache):
    """An exec block that never returns is interrupted after CROSSOVER_BLOCK_TIMEOUT; the build names it."""
    result = build_page_with_block(tmp_path, quick_cache,
                                  '```python exec="1" id="endless-block"\nwhile True:\n    pass\n```',
                                  CROSSOVER_BLOCK_TIMEOUT="3")
    assert result.returncode != 0
    assert "'endless-block' exited with errors on page probe.md" in result.stderr
    assert "CROSSOVER_BLOCK_TIMEOUT" in result.stderr


def test_recovering_from_a_corrupt_host_cache_logs_information_not_a_warning(tmp_path, monkeypatch, caplog):
    """A corrupt host cache is set aside and measured afresh, said at INFO on the build's logger: a warning would
    fail the --strict build that recovers. (One experiment here: what is measured afterwards does not matter.)"""
    import logging

    from build_hooks import mkdocs_hooks, site_data

    # Smoke: no canaries or settle waits; the recovery, not the numbers, is under test.
    settings = config.Settings(cache_dir=tmp_path / "cache", results_dir=config.PROJECT_ROOT / "results", quick=True,
                               smoke=True)
    measure.run(only=["call_overhead"], settings=settings, log=lambda msg: None)
    next(settings.cache_dir.glob("*.quick.json")).write_text("{ not json")
    real_run = measure.run

    def run(settings=None, log=print, **kwargs):  # the build's call, narrowed to one experiment
        return real_run(only=["call_overhead"], settings=settings, log=log)

    monkeypatch.setattr(site_data.measure, "run", run)
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(settings.cache_dir))
    monkeypatch.setenv("CROSSOVER_QUICK", "1")
    monkeypatch.setenv("CROSSOVER_SMOKE", "1")
    with caplog.at_level(logging.INFO, logger="mkdocs.crossover"):
        site_data.prepare(log=mkdocs_hooks.log.info)
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mkdocs.crossover"]
    assert any(level == logging.INFO and "host cache is unusable" in text for level, text in said), said
    assert not any(level >= logging.WARNING for level, _ in said)
    assert list((settings.cache_dir / "archive").glob("*.invalid.json"))
    assert "site_data.prepare(log=log.info)" in inspect.getsource(mkdocs_hooks.on_config)  # what the build passes


@pytest.mark.parametrize("value", ["abc", "-5", "nan", "0", "inf", "1e300"])
def test_bad_point_timeout_is_a_clear_error_before_measuring(tmp_path, snippets, monkeypatch, value):
    """CROSSOVER_POINT_TIMEOUT must be seconds > 0; anything else stops the run naming the variable."""
    monkeypatch.setenv("CROSSOVER_POINT_TIMEOUT", value)
    settings = config.Settings(cache_dir=tmp_path / "cache", results_dir=tmp_path / "results", quick=True)
    with pytest.raises(config.SettingError, match="CROSSOVER_POINT_TIMEOUT"):
        measure.run(only=["call_overhead"], settings=settings, log=lambda msg: None)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.json"))


def test_timed_out_process_group_leaves_no_orphans(tmp_path):
    """A command that starts its own children (as torchrun does) is killed whole on timeout."""
    from snippets.benchmarking import run_process_group

    pid_file = tmp_path / "grandchild.pid"
    spawner = ("import subprocess, sys, time; "
               f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
               f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    with pytest.raises(subprocess.TimeoutExpired):
        run_process_group([sys.executable, "-c", spawner], env=dict(os.environ), timeout=2)
    grandchild = int(pid_file.read_text())
    time.sleep(0.2)
    assert not alive(grandchild)


def alive(pid: int) -> bool:
    """True if `pid` is a running (not zombie) process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("value", ["-1", "1e300"])
def test_bad_block_timeout_stops_the_build_before_measuring(monkeypatch, value):
    """CROSSOVER_BLOCK_TIMEOUT is checked when the build starts, naming the variable, before anything is measured."""
    from mkdocs.exceptions import PluginError

    from build_hooks import mkdocs_hooks, site_data

    monkeypatch.setenv("CROSSOVER_BLOCK_TIMEOUT", value)
    monkeypatch.setattr(site_data, "prepare", lambda log: pytest.fail("measured despite a bad timeout"))
    with pytest.raises(PluginError, match="CROSSOVER_BLOCK_TIMEOUT"):
        mkdocs_hooks.on_config({"plugins": {}})


def worker_pids(tag: str) -> list[int]:
    """Live torchrun workers of the data-parallel experiment, found by their command line, that inherited `tag` in
    their environment: this test's own, not those of a build measuring beside it (the slow tier runs on two workers)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            mine = tag.encode() in Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if b"data_parallel.py --worker" in command and mine and alive(int(entry)):
            found.append(int(entry))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig, after_s", [(signal.SIGINT, 1.0), (signal.SIGINT, 8.0), (signal.SIGKILL, 1.0),
                                          (signal.SIGKILL, 8.0)],
                         ids=["Ctrl-C while workers import torch", "Ctrl-C while they train",
                              "SIGKILL while workers import torch", "SIGKILL while they train"])
def test_torchrun_workers_die_with_their_measurer(tmp_path, sig, after_s):
    """However the measurer ends, and at whatever moment, no torchrun worker outlives it by more than a few seconds."""
    marker = uuid.uuid4().hex
    tag = f"CROSSOVER_TEST_TAG={marker}\0"
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from snippets import data_parallel; data_parallel.launch(2, 1, 10**6)")
    measurer = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.DEVNULL,
                                env={**os.environ, "CROSSOVER_TEST_TAG": marker})
    deadline = time.time() + 60
    while not worker_pids(tag) and time.time() < deadline:
        time.sleep(0.1)
    assert worker_pids(tag), "torchrun never started its workers"
    time.sleep(after_s)
    measurer.send_signal(sig)
    measurer.wait(timeout=60)
    deadline = time.time() + 20  # torchrun's own shutdown, then the hard kill
    while worker_pids(tag) and time.time() < deadline:
        time.sleep(0.2)
    assert not worker_pids(tag)


SPAWNER = '''
import subprocess, sys, time
NAME = "spawner"
BENCH_VERSION = 1
PARAMS = {}
def plan(devices, quick):
    return [{"device": "cpu"}]
def measure(point, threads, quick):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(f"child {child.pid}", flush=True)
    time.sleep(120)
'''


@pytest.mark.slow
def test_a_point_that_times_out_takes_its_child_processes_with_it(tmp_path, snippets):
    """A snippet's own child process (not in a group of its own) is ended when its point times out."""
    (snippets / "spawner.py").write_text(SPAWNER)
    process = start_measure(tmp_path, snippets, ["spawner"], CROSSOVER_POINT_TIMEOUT="2")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1 and "no result after 2 s" in err
    child = int(out.split("child ")[1].split()[0])
    assert not alive(child)


STEADY = '''
import torch
from snippets.benchmarking import time_it
NAME = "steady"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
ROUNDS = 3
CALLS = [0]
def plan(devices, quick):
    return [{"device": "cpu", "n": n} for n in (1, 2, 3, 4)]
def measure(point, threads, quick):
    CALLS[0] += 1
    print(f"call {CALLS[0]}", flush=True)
    a = torch.ones(256, 256)
    return {"unit": "s", "samples": time_it(lambda: a @ a, threads=threads, min_run_time=0.05)}
'''

BURNER = "import time\nend = time.time() + float(__import__('sys').argv[1])\nwhile time.time() < end: pass\n"


@pytest.mark.slow
def test_a_slow_state_injected_into_some_rounds_is_waited_out_remeasured_or_marked(tmp_path, snippets):
    """Processes that eat both cores for a few seconds mid-run: the rounds they hit are re-measured or marked."""
    (snippets / "steady.py").write_text(STEADY)
    process = start_measure(tmp_path, snippets, ["steady"], CROSSOVER_SETTLE_BUDGET="60")  # time to wait it out
    burners = []
    try:
        for line in process.stdout:
            if line.strip() == "call 5":  # round two begins: the machine turns slow for four seconds
                # Six, not two: beside a busy test suite, two more processes hardly move the canary.
                burners = [subprocess.Popen([sys.executable, "-c", BURNER, "4"]) for _ in range(6)]
                break
        out, err = process.communicate(timeout=300)
    finally:
        for burner in burners:
            burner.wait()
    assert process.returncode == 0, err[-2000:]
    measured_under = cache_doc(tmp_path)["experiments"]["steady"]["conditions"]
    points = [b for b in cache_doc(tmp_path)["benchmarks"] if b["group"] == "steady"]
    assert measured_under["waited_s"] > 1 or measured_under["remeasured"] > 0
    assert measured_under["remeasured"] > 0 or any(b["extra_info"]["unsettled"] for b in points)
    assert "re-measured" in out  # the run's table says so
