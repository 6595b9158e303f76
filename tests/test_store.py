"""Tests for build_hooks.store: validation, error messages and atomic writes."""

import errno
import json
import os
import threading

import pytest

from build_hooks import store


def write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_round_trip(tmp_path, doc):
    """A document saved atomically loads back identical."""
    path = tmp_path / "m.json"
    store.save_atomic(path, doc)
    assert store.load(path) == doc


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("machine_info"), "$"),
    (lambda d: d["benchmarks"][0]["stats"].__setitem__("median", "fast"), "$.benchmarks[0].stats.median"),
    (lambda d: d["benchmarks"][1]["stats"].__setitem__("median", -1.0), "$.benchmarks[1].stats.median"),
    (lambda d: d["benchmarks"][0]["params"].__setitem__("device", "tpu"), "$.benchmarks[0].params.device"),
    (lambda d: d["machine_info"]["cpu"].__setitem__("threads_used", 0), "$.machine_info.cpu.threads_used"),
    (lambda d: d["benchmarks"][0].__setitem__("group", "unknown_experiment"), "$.benchmarks[0].group"),
    (lambda d: d.__setitem__("machine_id", "../../etc/passwd"), "$.machine_id"),
])
def test_malformed_file_names_file_and_field(tmp_path, doc, mutate, field):
    """A schema violation raises ResultsError carrying the file path and the JSON path of the field."""
    mutate(doc)
    path = write(tmp_path / "bad.json", doc)
    with pytest.raises(store.ResultsError) as err:
        store.load(path)
    assert err.value.field == field and str(path) in str(err.value)


def test_truncated_json_is_reported(tmp_path, doc):
    """A truncated file is reported as invalid JSON with its path."""
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(doc)[:200])
    with pytest.raises(store.ResultsError, match="not valid JSON") as err:
        store.load(path)
    assert str(path) in str(err.value)


def test_nan_is_rejected(tmp_path, doc):
    """NaN, which Python's json would accept, is refused as a measured value."""
    text = json.dumps(doc).replace('"median": 0.0001', '"median": NaN', 1)
    assert "NaN" in text
    with pytest.raises(store.ResultsError, match="NaN"):
        store.parse(text, "nan.json")


def test_future_schema_version_says_so(tmp_path, doc):
    """A file from a newer schema names $.schema_version and says to update."""
    doc["schema_version"] = store.SCHEMA_VERSION + 1
    with pytest.raises(store.ResultsError, match="newer") as err:
        store.load(write(tmp_path / "future.json", doc))
    assert err.value.field == "$.schema_version"


def test_interrupted_write_keeps_old_file(tmp_path, doc, monkeypatch):
    """A write that dies before the rename leaves the previous file whole and no temp file behind."""
    path = tmp_path / "m.json"
    store.save_atomic(path, doc)
    before = path.read_bytes()

    def crash(fd):
        raise KeyboardInterrupt  # as if Ctrl-C arrived mid-write

    monkeypatch.setattr(os, "fsync", crash)
    changed = {**doc, "datetime": "2026-01-01T00:00:00+00:00"}
    with pytest.raises(KeyboardInterrupt):
        store.save_atomic(path, changed)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_invalid_document_is_never_written(tmp_path, doc):
    """save_atomic validates first: an invalid document does not replace a good file."""
    path = tmp_path / "m.json"
    store.save_atomic(path, doc)
    doc["benchmarks"][0]["stats"]["median"] = -5
    with pytest.raises(store.ResultsError):
        store.save_atomic(path, doc)
    assert store.load(path)["benchmarks"][0]["stats"]["median"] > 0


def test_lock_serialises_writers(tmp_path):
    """Two holders of the same lock never overlap."""
    path, inside, overlaps = tmp_path / "m.json", [], []

    def worker():
        with store.locked(path):
            inside.append(1)
            overlaps.append(len(inside))
            threading.Event().wait(0.05)
            inside.pop()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [1, 1, 1, 1]


def _set_stat(key, value):
    def mutate(d):
        d["benchmarks"][0]["stats"][key] = value
    return mutate


@pytest.mark.parametrize("text_of, field, says", [
    (lambda d: json.dumps(d).replace('"median": ', '"median": 1.0, "median": ', 1), "$", "appears twice"),
    (lambda d: json.dumps(d).replace('"median": ', '"median": 1e999, "y": ', 1), "$", "out of range"),
    (lambda d: "[" * 5000 + "]" * 5000, "$", "nested too deeply"),
], ids=["duplicate key", "1e999", "deep nesting"])
def test_hostile_json_text_is_refused_naming_the_problem(tmp_path, doc, text_of, field, says):
    """Duplicate keys, an infinite literal and absurd nesting are refused with a message, not a crash."""
    path = tmp_path / "m.json"
    path.write_text(text_of(doc))
    with pytest.raises(store.ResultsError, match=says) as err:
        store.load(path)
    assert err.value.field == field


@pytest.mark.parametrize("mutate, field", [
    (_set_stat("median", 0.0), "$.benchmarks[0].stats.median"),
    (_set_stat("median", -0.0), "$.benchmarks[0].stats.median"),
    (_set_stat("median", 1e308), "$.benchmarks[0].stats.median"),
    (_set_stat("data", [1e-4, 1e300]), "$.benchmarks[0].stats"),
    (lambda d: d.__setitem__("datetime", "yesterday"), "$.datetime"),
    (lambda d: d.__setitem__("datetime", "2026-11-30T00:00:00"), "$.datetime"),
    (lambda d: d["benchmarks"][0]["extra_info"].__setitem__("flops", "12"), "$.benchmarks[0].extra_info"),
    (lambda d: d["benchmarks"][0]["extra_info"].pop("flops"), "$.benchmarks[0].extra_info"),
], ids=["zero time", "negative zero", "1e308 s", "huge sample", "not a date", "no time zone",
        "flops as text", "flops missing"])
def test_schema_valid_but_absurd_values_are_refused_at_load(tmp_path, doc, mutate, field):
    """Times must be positive and sane, dates real, extra_info as the experiment declares: checked before rendering."""
    mutate(doc)
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "m.json", doc))
    assert err.value.field.startswith(field)


def test_extra_info_error_names_experiment_and_point(tmp_path, doc):
    """A malformed extra_info names file, experiment, point and key."""
    doc["benchmarks"][0]["extra_info"].pop("flops")
    with pytest.raises(store.ResultsError, match=r"m\.json: benchmark 1 \(training_step\[.*\]\), its extra info: 'flops' "
                       r"is missing \(training_step declares it in EXTRA_INFO\).*\(field \$\.benchmarks\[0\]\.extra_info\)$"):
        store.load(write(tmp_path / "m.json", doc))


def test_long_values_are_not_echoed_whole(tmp_path, doc):
    """A megabyte string in a bad field is quoted short in the error."""
    doc["benchmarks"][0]["unit"] = "x" * 1_000_000
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "m.json", doc))
    assert len(str(err.value)) < 500


def test_non_utf8_bytes_are_refused(tmp_path, doc):
    """A byte that is not UTF-8 gives a ResultsError, not a UnicodeDecodeError."""
    path = tmp_path / "m.json"
    path.write_bytes(json.dumps(doc).encode().replace(b"Fixture CPU", b"Fixture \xff CPU"))
    with pytest.raises(store.ResultsError, match="not UTF-8"):
        store.load(path)


@pytest.mark.parametrize("make", ["symlink to /dev/zero", "symlink to a file", "fifo", "directory"])
def test_only_regular_files_are_read(tmp_path, doc, make):
    """Symlinks, FIFOs and directories named *.json are refused before reading (no hang, no endless read)."""
    path = tmp_path / "m.json"
    if make == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    elif make == "symlink to a file":
        path.symlink_to(write(tmp_path / "real.txt", doc))
    elif make == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(store.ResultsError, match="symbolic link|not a regular file"):
        store.load(path)


@pytest.mark.parametrize("key, value", [("batch", "<img src=x onerror=alert(1)>"), ("width", 8.0), ("batch", -1)])
def test_a_param_of_the_wrong_kind_is_refused_naming_file_point_and_key(tmp_path, doc, key, value):
    """A training-step batch that is text, fractional or negative stops the load before any view formats it."""
    doc["benchmarks"][0]["params"][key] = value
    with pytest.raises(store.ResultsError, match=r"m\.json: benchmark 1 \(training_step\[.*\]\), its " + key
                       + r" in its params: .* is wrong for experiment training_step: must be a whole number.*"
                       r"\(field \$\.benchmarks\[0\]\.params\." + key + r"\)$") as err:
        store.load(write(tmp_path / "m.json", doc))
    assert err.value.field == f"$.benchmarks[0].params.{key}"


def test_an_error_about_a_file_never_carries_terminal_controls(tmp_path, doc):
    """A file name and a quoted value with ANSI escapes reach the message as visible escapes."""
    doc["benchmarks"][0]["params"]["batch"] = "\x1b[31mred"
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "m\x1b[2J.json", doc))
    assert "\x1b" not in str(err.value) and "\\x1b[2J" in str(err.value)


@pytest.mark.parametrize("code, says", [(errno.ENOSPC, "the disk is full"), (errno.EFBIG, "the file is larger than")])
def test_a_failed_write_names_the_file_and_keeps_the_old_one(tmp_path, doc, monkeypatch, code, says):
    """A full disk or a file too big is a ResultsError naming file and cause; the earlier file and no temporary remain."""
    path = tmp_path / "m.json"
    store.save_atomic(path, doc)
    before = path.read_text()

    def no_space(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", no_space)
    changed = {**doc, "machine_id": "changed"}
    with pytest.raises(store.ResultsError, match=f"m.json: cannot be written \\({says}.*\\(field \\$\\)$") as err:
        store.save_atomic(path, changed)
    assert "unchanged" in str(err.value)
    assert path.read_text() == before and not list(tmp_path.glob("*.tmp"))


def test_a_replaced_folder_is_named_not_a_traceback(tmp_path, doc):
    """A cache folder replaced by a file mid-run gives a message naming the path."""
    (tmp_path / "cache").write_text("I was a folder")
    with pytest.raises(store.ResultsError, match="cache/m.json: cannot be written \\(a folder on its path"):
        store.save_atomic(tmp_path / "cache" / "m.json", doc)


def test_a_full_disk_leaves_no_empty_lock_holder(tmp_path, monkeypatch):
    """If the holder note cannot be written, the lock still works and no empty note is left."""
    from pathlib import Path

    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name == store.LOCK_HOLDER:
            self.touch()  # the file is created, then the write fails, as on a full disk
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with store.locked(tmp_path / "m.json"):
        assert not (tmp_path / store.LOCK_HOLDER).exists()


def test_stray_temporaries_are_swept_unless_a_writer_holds_the_lock(tmp_path):
    """sweep_temporaries removes *.tmp when the folder is free and leaves them while a writer holds it."""
    stray = tmp_path / ".m.json.abc.tmp"
    stray.write_text("half")
    with store.locked(tmp_path / "m.json"):
        import subprocess
        import sys
        # flock is per open file: another process sees the folder locked.
        code = ("import sys; from pathlib import Path; from build_hooks import store; "
                "sys.exit(len(store.sweep_temporaries(Path(sys.argv[1]))))")
        assert subprocess.run([sys.executable, "-c", code, str(tmp_path)]).returncode == 0
        assert stray.exists()
    assert store.sweep_temporaries(tmp_path) == [stray] and not stray.exists()


def _every_param():
    """(experiment, key) for every param every experiment declares, device included."""
    from build_hooks import experiments

    return [(name, key) for name in experiments.REGISTRY for key in ["device", *experiments.params_spec(name)]]


@pytest.mark.parametrize("payload", ['<img src=x onerror="window.__pwned = 1">', '1" autofocus onfocus="alert(1)" x="',
                                     "CROSSOVERTEXT0123456789ABCDEF01234567TXETREVOSSORC"],
                         ids=["html", "quote-breaking", "placeholder"])
@pytest.mark.parametrize("group, key", _every_param(), ids=lambda v: str(v))
def test_a_payload_in_any_param_of_any_experiment_is_refused_naming_file_point_and_key(tmp_path, group, key, payload):
    """What the build loads: every declared param of every experiment refuses markup, naming where it is."""
    from conftest import complete_doc

    doc = complete_doc(gpu="Fixture GPU")
    # Only this experiment's points: the schema checks each point on its own, and a sixth of the document
    # validates in a sixth of the time (these 207 cases were the fast tier's largest cost).
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] == group]
    doc["experiments"] = {group: doc["experiments"][group]}
    index, bench = 0, doc["benchmarks"][0]
    bench["params"][key] = payload
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "m.json", doc))
    assert err.value.field.startswith(f"$.benchmarks[{index}].params"), err.value
    assert str(err.value).startswith(str(tmp_path / "m.json"))


def as_browser_run(doc):
    """The fixture re-labelled the way the race page's "Race your browser" writes a file."""
    doc["software"] = {"stack": "tensorflow.js", "tfjs": "4.22.0", "browser": "Mozilla/5.0 Fixture"}
    doc["machine_info"]["gpu"] = {"name": "Fixture adapter", "vendor": "fixture", "fallback_adapter": False}
    for bench in doc["benchmarks"]:
        bench["params"]["device"] = "wasm"
    for meta in doc["experiments"].values():
        meta["devices"] = ["wasm"]
    return doc


def test_a_browser_run_is_schema_valid_but_refused_as_a_build_file(tmp_path, doc):
    """A browser's file passes the schema (the race page accepts it) yet the build refuses it, naming $.software.stack."""
    import jsonschema
    browser = as_browser_run(doc)
    jsonschema.Draft202012Validator(store.schema()).validate(browser)
    with pytest.raises(store.ResultsError, match="measured in a web browser") as err:
        store.load(write(tmp_path / "browser.json", browser))
    assert err.value.field == "$.software.stack"


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["software"].pop("torch"), "$.software"),
    (lambda d: d["benchmarks"][0]["params"].__setitem__("device", "webgpu"), "$.benchmarks[0].params.device"),
    (lambda d: d["machine_info"].__setitem__("gpu", {"name": "A GPU without its memory"}), "$.machine_info.gpu"),
])
def test_a_pytorch_file_keeps_its_own_requirements(tmp_path, doc, mutate, field):
    """Without the browser's stack a file needs torch's software fields, torch's devices and a full GPU record."""
    mutate(doc)
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "torch.json", doc))
    assert err.value.field == field


def test_a_file_is_checked_once_per_content_and_code(tmp_path, monkeypatch, doc):
    """A file that passed is not parsed again; one changed byte is checked again and refused by field."""
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "machine.json"
    path.write_text(store.dumps(doc))
    store.load(path)
    assert len(list((tmp_path / "cache" / "validated").iterdir())) == 1
    monkeypatch.setattr(store, "_validator", lambda: pytest.fail("checked against the schema again"))
    assert store.load(path) == doc
    monkeypatch.undo()
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    path.write_text(store.dumps(doc).replace('"schema_version": 1', '"schema_version": "1"'))
    with pytest.raises(store.ResultsError, match="schema_version"):
        store.load(path)


def test_a_forged_mark_skips_only_the_schema(tmp_path, monkeypatch, doc):
    """A mark made by hand for a file never checked still leaves the bounds and origin checks to refuse it."""
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    bench = next(b for b in doc["benchmarks"] if b["stats"].get("median"))
    bench["stats"] |= {k: 1e9 for k in ("min", "max", "mean", "median", "q1", "q3") if k in bench["stats"]}
    path = tmp_path / "machine.json"
    path.write_text(store.dumps(doc))
    mark = store._passed(path.read_bytes())
    mark.parent.mkdir(parents=True)
    mark.touch()
    with pytest.raises(store.ResultsError, match=r"benchmarks\[\d+\]"):
        store.load(path)
    schema_wrong = store.dumps(doc | {"benchmarks": "not a list"})
    path.write_text(schema_wrong)
    mark = store._passed(path.read_bytes())
    mark.touch()
    with pytest.raises(store.ResultsError, match="benchmarks"):  # the schema's words, not a traceback
        store.load(path)


def test_a_folder_named_like_a_temporary_is_left_alone(tmp_path):
    """A stray folder matching the temporaries' pattern is not ours to delete, and deleting it never crashes."""
    (tmp_path / ".m.json.abc.tmp").mkdir()
    (tmp_path / ".m.json.def.tmp").write_text("partial")
    assert store.remove_stale_temporaries(tmp_path / "m.json") == [tmp_path / ".m.json.def.tmp"]
    assert (tmp_path / ".m.json.abc.tmp").is_dir()


# ---- messages a reader understands: the field in words, what is wrong, what to do, then the JSON path ----

PYTEST_BENCHMARK_FILE = {  # the layout pytest-benchmark writes, which the schema borrows
    "machine_info": {"node": "laptop", "processor": "x86_64"}, "commit_info": {"id": "abc1234", "dirty": False},
    "benchmarks": [{"group": None, "name": "test_sum", "params": None, "stats": {"min": 1e-6}}],
    "datetime": "2026-11-30T00:00:00+00:00", "version": "4.0.0",
}


def refusal(tmp_path, doc) -> store.ResultsError:
    with pytest.raises(store.ResultsError) as err:
        store.load(write(tmp_path / "m.json", doc))
    return err.value


def test_a_pytest_benchmark_file_is_named_as_such_and_says_how_to_make_a_crossover_file(tmp_path):
    """pytest-benchmark's JSON is recognised by its keys, not reported as a null params field."""
    err = refusal(tmp_path, PYTEST_BENCHMARK_FILE)
    assert "is a pytest-benchmark results file" in str(err) and "make measure" in str(err), err
    assert "params" not in str(err) and err.field == "$"


def test_any_other_file_without_a_schema_version_is_not_a_crossover_results_file(tmp_path):
    """A JSON object with no schema_version is foreign, whatever else it has."""
    err = refusal(tmp_path, {"benchmarks": [], "hello": "world"})
    assert "this is not a Crossover results file (it has no schema_version)" in str(err)
    assert "python -m build_hooks.measure" in str(err)


def test_markup_in_the_machine_id_names_the_field_in_words_and_what_is_allowed(tmp_path, doc):
    """An HTML machine id: 'the machine id', the characters it may hold, and the JSON path at the end."""
    doc["machine_id"] = "<b>mine</b>"
    err = refusal(tmp_path, doc)
    assert str(err) == (f"{tmp_path / 'm.json'}: the machine id: '<b>mine</b>' is not allowed: it must be lower-case "
                        "letters a-z, digits and hyphens only, starting with a letter or digit, at most 81 characters "
                        "(such as \"my-laptop-m3\"); change it to such a value (field $.machine_id)")


def test_a_benchmark_is_named_by_its_number_and_name(tmp_path, doc):
    """A null params reads 'benchmark 1 (its name), its params: is null, but must be an object'."""
    doc["benchmarks"][0]["params"] = None
    err = refusal(tmp_path, doc)
    name = doc["benchmarks"][0]["name"]
    assert f"m.json: benchmark 1 ({name}), its params: is null, but must be an object; " in str(err), err
    assert str(err).endswith("(field $.benchmarks[0].params)")


def _conditions(doc, **values):
    meta = doc["experiments"][doc["benchmarks"][0]["group"]]
    meta["conditions"] = {"rounds": 5, "canary_s": [0.01], "foreign_cpu": None, "steal": None, **values}


@pytest.mark.parametrize("mutate, says", [
    (lambda d: d["benchmarks"][0].__setitem__("unit", "parsecs"),
     "its unit: 'parsecs' is not one of 's', 'bytes', 'B/s', 'FLOP/s', 'samples/s', 'ratio', 'count'; change it"),
    (lambda d: d["machine_info"]["cpu"].__setitem__("threads_used", 0),
     "the thread count in the CPU: 0 is below the smallest allowed value, 1;"),
    (lambda d: d["machine_info"]["cpu"].__setitem__("threads_used", 5000),
     "the thread count in the CPU: 5000 is above the largest allowed value, 4096;"),
    (lambda d: d.__setitem__("schema_version", "1"), "the schema version: is the text '1', but must be a whole number;"),
    (lambda d: d["software"].pop("torch"), "the software: has no 'torch', which every results file has here;"),
    (lambda d: d["benchmarks"][0].__setitem__("options", {"speed": "fast"}),
     "its options (How the point was timed (build_hooks/measure.py)): has 'speed', which this field of a Crossover "
     "results file does not have: remove it"),
    (lambda d: _conditions(d, waited_s=1e6), "its waited s in its conditions (Seconds the Gate waited for a steady "
                                             "state and spent re-measuring): 1000000.0 is above the largest allowed"),
], ids=["enum", "minimum", "maximum", "type", "required", "additionalProperties", "description"])
def test_schema_keywords_are_translated_into_words(tmp_path, doc, mutate, says):
    """Each schema keyword's complaint is a sentence (with the schema's description where it has one), never jsonschema's."""
    mutate(doc)
    err = str(refusal(tmp_path, doc))
    assert says in err, err
    for library_words in ("is not of type", "is a required property", "is not one of [", "is less than the minimum",
                          "is greater than the maximum", "Additional properties are not allowed", ": field $"):
        assert library_words not in err


def test_an_infinite_number_is_shown_as_infinity(doc):
    """A float('inf') handed to validate() is quoted as Infinity, as JSON calls it, with the field in words."""
    doc["benchmarks"][0]["extra_info"]["flops"] = float("inf")
    with pytest.raises(store.ResultsError, match=r"its flops in its extra info: Infinity is out of range") as err:
        store.validate(doc, "m.json")
    assert err.value.field == "$.benchmarks[0].extra_info.flops"


def test_an_out_of_range_literal_says_what_it_reads_as(tmp_path, doc):
    """1e999 in the file's text is refused as a number that reads as Infinity, not as broken JSON."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc).replace('"median": ', '"median": 1e999, "y": ', 1))
    with pytest.raises(store.ResultsError, match=r"the number 1e999 is out of range: it reads as Infinity") as err:
        store.load(path)
    assert "not valid JSON" not in str(err.value)


def test_a_point_that_could_not_run_is_stored_as_failed_without_stats(tmp_path, doc):
    """Status "failed" loads back without stats; a "failed" point that still carries stats is refused."""
    bench = doc["benchmarks"][0]
    failed = {**bench, "status": "failed"}
    del failed["stats"]
    path = tmp_path / "f.json"
    write(path, {**doc, "benchmarks": [failed] + doc["benchmarks"][1:]})
    assert store.load(path)["benchmarks"][0]["status"] == "failed"
    write(path, {**doc, "benchmarks": [{**failed, "stats": bench["stats"]}] + doc["benchmarks"][1:]})
    with pytest.raises(store.ResultsError):
        store.load(path)


def test_an_experiment_both_measured_and_unfinished_is_refused(tmp_path, doc):
    """A file cannot list an experiment as unfinished and carry its results: refused naming the field."""
    import json

    bad = {**doc, "unfinished": {"training_step": "failed: a deliberate failure"}}
    path = tmp_path / "both.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(store.ResultsError, match=r"unfinished\.training_step"):
        store.load(path)


@pytest.mark.parametrize("field, value", [
    ("machine_id", "amd-epyc-81bd7f4baa\n"),  # Python's `$` matches before a final newline; the schema means none
    ("group", "training_step\n"),
])
def test_an_identifier_with_a_trailing_newline_is_refused(doc, field, value):
    """Every schema pattern is a whole-string match: 'id\\n' is not the machine 'id' listed a second time."""
    if field == "machine_id":
        doc["machine_id"] = value
    else:
        doc["benchmarks"][0]["group"] = value
    with pytest.raises(store.ResultsError, match="is not allowed"):
        store.validate(doc, "newline.json")


def test_a_time_in_another_unit_is_refused_naming_the_point(doc):
    """A time 'in count' of 1e15 would slip past the time bounds: a point must be in its experiment's unit."""
    index, bench = next((i, b) for i, b in enumerate(doc["benchmarks"]) if b["unit"] == "s")
    bench["unit"] = "count"
    for key in ("median", "q1", "q3", "mean", "min", "max"):
        bench["stats"][key] = 1e15
    with pytest.raises(store.ResultsError, match=rf"not the unit of experiment {bench['group']}.*benchmarks\[{index}\]\.unit"):
        store.validate(doc, "units.json")


def test_quartiles_out_of_order_are_refused(doc):
    """q1 above the median (or the median above q3) is no distribution a timer produces."""
    stats = doc["benchmarks"][0]["stats"]
    stats["q1"], stats["q3"] = stats["median"] * 1.5, stats["median"] * 0.5
    stats["min"], stats["max"] = min(stats["min"], stats["q3"]), max(stats["max"], stats["q1"])
    with pytest.raises(store.ResultsError, match="quartiles are out of order"):
        store.validate(doc, "quartiles.json")


def test_the_lock_holders_command_reaches_the_terminal_escaped(tmp_path):
    """A waiter prints who holds the lock; escape sequences in the holder's note are shown, never sent."""
    (tmp_path / store.LOCK_HOLDER).write_text(json.dumps(
        {"pid": 1, "command": "python \x1b[2J\x1b[H cleared", "since": "2026-12-02T10:00:00+00:00"}))
    said = store._holder(tmp_path)
    assert "\x1b" not in said and "\\x1b[2J" in said


def test_a_cache_folder_replaced_by_a_file_mid_run_is_named_not_a_traceback(tmp_path, doc):
    """The folder under the lock turned into a file: the write's own error (file and cause) reaches the user, not
    a NotADirectoryError from removing the lock's holder note."""
    import shutil

    path = tmp_path / "cache" / "host.json"
    with pytest.raises(store.ResultsError, match="a folder on its path is a file"):
        with store.locked(path, log=lambda message: None):
            shutil.rmtree(path.parent)
            path.parent.write_text("a file where the cache folder was")
            store.save_atomic(path, doc)


def test_a_lock_note_that_is_no_file_names_no_holder_and_never_hangs(tmp_path):
    """The lock holder's note being a link to /dev/zero or a FIFO gives 'holder unknown' at once."""
    import os

    (tmp_path / store.LOCK_HOLDER).symlink_to("/dev/zero")
    assert store._holder(tmp_path) == "holder unknown"
    (tmp_path / store.LOCK_HOLDER).unlink()
    os.mkfifo(tmp_path / store.LOCK_HOLDER)
    assert store._holder(tmp_path) == "holder unknown"


def test_a_file_dated_in_the_future_is_refused(tmp_path, doc):
    """A measurement dated years ahead would be drawn first as the newest machine: it is refused, naming the date."""
    doc["datetime"] = "9999-11-30T00:00:00+00:00"
    with pytest.raises(store.ResultsError, match=r"is in the future") as err:
        store.validate(doc, tmp_path / "m.json")
    assert err.value.field == "$.datetime"
