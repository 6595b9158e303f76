"""Tests for build_hooks.dataset: loading and merging results files."""

import json

import pytest

from build_hooks import dataset, store
from conftest import synthetic_doc


def save(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_host_file_replaces_committed_copy_of_same_machine(tmp_path):
    """The host's measurement of a machine wins over a committed file with the same id."""
    save(tmp_path / "results" / "a.json", synthetic_doc("same-machine", brand="Old"))
    save(tmp_path / "results" / "b.json", synthetic_doc("other-machine", gpu="Fixture GPU"))
    host = save(tmp_path / "cache" / "h.json", synthetic_doc("same-machine", brand="New"))
    data = dataset.load(tmp_path / "results", host, tmp_path)
    assert [(m.id, m.origin) for m in data.machines] == [
        ("same-machine", "this build host"), ("other-machine", "committed reference")]
    assert data.machines[0].cpu["brand"] == "New"


def test_invalid_committed_file_stops_with_its_name(tmp_path):
    """A malformed committed file raises ResultsError naming that file relative to the project."""
    doc = synthetic_doc()
    doc["benchmarks"][0]["unit"] = "parsecs"
    save(tmp_path / "results" / "bad.json", doc)
    with pytest.raises(store.ResultsError) as err:
        dataset.load(tmp_path / "results", None, tmp_path)
    assert err.value.path == "results/bad.json" and err.value.field == "$.benchmarks[0].unit"


def test_duplicate_committed_machines_are_refused(tmp_path):
    """Two committed files for one machine id are an error, not a silent pick."""
    save(tmp_path / "results" / "a.json", synthetic_doc("dup"))
    save(tmp_path / "results" / "b.json", synthetic_doc("dup"))
    with pytest.raises(store.ResultsError, match="also in"):
        dataset.load(tmp_path / "results", None, tmp_path)


def test_merged_json_lists_every_machine_with_origin(tmp_path):
    """The published merged file carries each machine's document and where it came from."""
    save(tmp_path / "results" / "a.json", synthetic_doc("m1"))
    merged = json.loads(dataset.load(tmp_path / "results", None, tmp_path).to_json())
    assert merged["format"] == dataset.MERGED_FORMAT
    assert merged["machines"][0]["origin"] == "committed reference"
    store.validate({k: v for k, v in merged["machines"][0].items() if k not in {"origin", "source"}}, "m")


def test_results_path_that_is_a_file_is_a_clear_error(tmp_path):
    """A file where the results folder should be is reported as such, naming it relative to the project."""
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(store.ResultsError, match="should be a directory"):
        dataset.load(tmp_path / "results", None, tmp_path)


def test_duplicate_machines_are_named_relative_to_the_project(tmp_path):
    """The duplicate-machine error names both files as results/…, not by the build machine's absolute path."""
    save(tmp_path / "results" / "a.json", synthetic_doc("dup"))
    save(tmp_path / "results" / "b.json", synthetic_doc("dup"))
    with pytest.raises(store.ResultsError) as err:
        dataset.load(tmp_path / "results", None, tmp_path)
    assert str(err.value).startswith("results/b.json: 'dup' is also in results/a.json")
    assert str(err.value).endswith("(field $.machine_id)")
    assert str(tmp_path) not in str(err.value)


def test_a_committed_machine_may_not_pass_for_a_readers_own(tmp_path):
    """A machine id in the race's 'yours-' namespace is refused at load, naming file and field."""
    save(tmp_path / "results" / "a.json", synthetic_doc("yours-cpu"))
    with pytest.raises(store.ResultsError, match=r"results/a.json: 'yours-cpu' starts with .*\(field \$\.machine_id\)$"):
        dataset.load(tmp_path / "results", None, tmp_path)


def test_a_machine_is_named_with_its_widest_vector_units_where_recorded():
    """Two CPUs of one brand read apart in every label: the widest extension the file records joins the name."""
    from build_hooks.dataset import Machine
    from conftest import synthetic_doc

    doc = synthetic_doc(brand="AMD EPYC")
    assert Machine(doc, "f", "t").label == "AMD EPYC (4 threads)"
    doc["machine_info"]["cpu"]["isa"] = ["avx", "avx2", "fma", "avx512f", "avx512_bf16"]
    machine = Machine(doc, "f", "t")
    assert machine.label == "AMD EPYC (4 threads, AVX-512 BF16)"
    assert machine.device_label("cpu") == "CPU: AMD EPYC, 4 threads, AVX-512 BF16"
    doc["machine_info"]["cpu"]["isa"].append("amx_tile")  # AMX multiplies bf16 only: the fp32 unit is named too
    assert Machine(doc, "f", "t").label == "AMD EPYC (4 threads, AVX-512 + AMX)"


def test_the_digest_is_of_the_documents_loaded_not_of_the_files_read_again(tmp_path, monkeypatch):
    """A file replaced just after it was read changes nothing about the loaded dataset's digest (its renderings are
    filed under what they were rendered from); loading the new file gives a new digest."""
    first, second = synthetic_doc("m"), synthetic_doc("m", brand="Another CPU")
    path = tmp_path / "m.json"
    path.write_text(store.dumps(first))
    read = store.load

    def read_then_replace(file):
        doc = read(file)
        path.write_text(store.dumps(second))  # a swap between the read and anything after it
        return doc
    monkeypatch.setattr(store, "load", read_then_replace)
    swapped = dataset.load(tmp_path, None, tmp_path)
    monkeypatch.setattr(store, "load", read)
    assert swapped.machines[0].doc["machine_info"]["cpu"]["brand"] == "Fixture CPU"
    path.write_text(store.dumps(first))
    assert swapped.digest == dataset.load(tmp_path, None, tmp_path).digest
    path.write_text(store.dumps(second))
    assert swapped.digest != dataset.load(tmp_path, None, tmp_path).digest


def test_a_lesson_page_draws_its_gpu_machines_before_the_build_host():
    """shown() keeps the build host among the machines drawn but puts those with a GPU first: a lesson asks what a
    GPU changes; CPU-only guests beyond the host are left to the gallery."""
    host = dataset.Machine(synthetic_doc("host", brand="Host CPU"), "h", "this build host")
    guest = dataset.Machine(synthetic_doc("guest", brand="Guest CPU"), "g", "committed reference")
    gpu = dataset.Machine(synthetic_doc("gpu-box", brand="Box CPU", gpu="Fixture GPU"), "b", "committed reference")
    data = dataset.Dataset([host, guest, gpu])
    assert [m.id for m in data.shown()] == ["gpu-box", "host"]
    assert data.not_shown() == 1


def test_a_cpus_short_name_drops_trademarks_and_filler_and_keeps_its_threads():
    """cpu_short_name reads "16-thread Intel Xeon" from "Intel(R) Xeon(R) Processor", keeps a clock (two files of one
    brand differ by it), and keeps a plain brand as is."""
    doc = synthetic_doc()
    doc["machine_info"]["cpu"] |= {"brand": "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", "threads_used": 16}
    assert dataset.Machine(doc, "f", "t").cpu_short_name == "16-thread Intel Xeon Platinum 8480+ at 2.00GHz"
    doc["machine_info"]["cpu"] |= {"brand": "Intel(R) Xeon(R) Processor", "threads_used": 16}
    assert dataset.Machine(doc, "f", "t").cpu_short_name == "16-thread Intel Xeon"
    doc["machine_info"]["cpu"] |= {"brand": "AMD EPYC", "threads_used": 2}
    assert dataset.Machine(doc, "f", "t").cpu_short_name == "2-thread AMD EPYC"


def test_two_files_of_one_brand_at_different_clocks_are_named_with_their_clocks():
    """Two CPUs of one brand at different clocks carry their clock in every name; a lone brand, or one that names its
    clock already, is left as recorded."""
    fast, slow, other = synthetic_doc("fast", brand="AMD EPYC"), synthetic_doc("slow", brand="AMD EPYC"), \
        synthetic_doc("other", brand="Intel Xeon @ 2.80GHz")
    fast["machine_info"]["cpu"]["clock_hz"], slow["machine_info"]["cpu"]["clock_hz"] = 2.6e9, 2.25e9
    data = dataset.Dataset([dataset.Machine(doc, "f", "t") for doc in (fast, slow, other)])
    names = {m.id: (m.label, m.device_label("cpu"), m.cpu_short_name) for m in data.machines}
    assert names["fast"][0].startswith("AMD EPYC at 2.60 GHz (") and names["slow"][0].startswith("AMD EPYC at 2.25 GHz (")
    assert names["fast"][1].startswith("CPU: AMD EPYC at 2.60 GHz, ") and names["slow"][2].endswith("AMD EPYC at 2.25 GHz")
    assert "GHz at" not in names["other"][0] and names["other"][0].startswith("Intel Xeon @ 2.80GHz (")
    alone = dataset.Dataset([dataset.Machine(fast, "f", "t")]).machines[0]
    assert alone.label.startswith("AMD EPYC (") and alone == dataset.Machine(fast, "f", "t")
