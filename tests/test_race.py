"""Tests for build_hooks.race: the race's baked data and its static table."""

import json

import pytest

from build_hooks import page, race, untrusted
from build_hooks.dataset import Dataset, Machine
from conftest import synthetic_doc

HOSTILE = "</script><script>window.__pwned = 1</script>"


def dataset(gpu=None, brand="Fixture CPU"):
    steps = {("cpu", 32, b): 1e-4 * b for b in (1, 64)}
    epochs = {("cpu", 32, 1): 2.0, ("cpu", 32, 64): 0.5}
    if gpu:
        steps |= {("cuda", 32, 1): 1e-3, ("cuda", 32, 64): 1.1e-3}
        epochs |= {("cuda", 32, 1): 10.0, ("cuda", 32, 64): 0.1}
    return Dataset([Machine(synthetic_doc(brand=brand, gpu=gpu, step_times=steps, epoch_times=epochs), "f", "t")])


def test_lanes_carry_measured_medians_and_regimes():
    """Each lane's epoch seconds are the measured medians; regimes follow the epochs' time per step."""
    data = race.race_data(dataset(gpu="Fixture GPU"))
    cpu, gpu = data["lanes"]
    assert cpu["epochs"]["32"]["64"]["seconds"] == 0.5 and gpu["epochs"]["32"]["64"]["seconds"] == 0.1
    assert cpu["epochs"]["32"]["64"]["regime"]["kind"] == "throughput"   # 0.5 s / 157 steps: 16x 2.0 s / 10000
    assert gpu["epochs"]["32"]["64"]["regime"]["same"]                    # 0.1 s / 157: cheaper than 10 s / 10000
    assert data["machines"][0]["crossover"] == {"32": 64}


def test_a_lanes_note_follows_its_epochs_not_the_separate_step_experiment():
    """A step experiment that grew 100x cannot put 'grows with the batch' under a lane whose epochs took flat steps."""
    steps = {("cpu", 32, 1): 1e-4, ("cpu", 32, 64): 1e-2}                  # the step experiment: 100x
    epochs = {("cpu", 32, 1): 1.0, ("cpu", 32, 64): 1.0 / 10000 * 157}     # the epochs: the same cost per step
    data = Dataset([Machine(synthetic_doc(step_times=steps, epoch_times=epochs), "f", "t")])
    regime = race.race_data(data)["lanes"][0]["epochs"]["32"]["64"]["regime"]
    assert regime["kind"] == "fixed" and regime["same"] and regime["ratio"] == pytest.approx(1.0)


def test_cpu_only_build_has_no_measured_gpu_lane_and_no_crossover():
    """Without GPU data no measured GPU lane or crossover appears; without work counts no estimate either."""
    data = race.race_data(dataset())
    assert [lane["kind"] for lane in data["lanes"]] == ["CPU"] and data["machines"][0]["crossover"] == {}


def test_cpu_only_build_gets_a_labelled_estimate_lane_from_the_cost_model():
    """With work counts, a CPU-only build races a GPU lane marked as an estimate with its source."""
    data = dataset()
    for bench in data.machines[0].doc["benchmarks"]:
        if bench["group"] == "training_step":
            bench["extra_info"].update(ops=40, bytes=10**6)
    lanes = race.race_data(data)["lanes"]
    assert [(lane["kind"], lane["estimate"]) for lane in lanes] == [("CPU", False), ("GPU", True)]
    assert "datasheet" in lanes[1]["source"] and lanes[1]["epochs"]["32"]["64"]["seconds"] > 0
    assert "estimate, not measured" in race.static_table(data)


def test_data_script_cannot_close_its_script_element():
    """A machine name containing </script> stays inside the JSON: no '<' survives."""
    script = race.data_script(dataset(brand=HOSTILE))
    body = script[len('<script type="application/json" id="race-data">'):-len("</script>")]
    assert "<" not in body and HOSTILE in json.loads(body)["lanes"][0]["machine"]


def test_static_table_escapes_names_and_shows_every_point():
    """The no-JavaScript table shows each measured epoch time and escapes machine names."""
    html = race.static_table(dataset(brand=HOSTILE, gpu="Fixture GPU"))
    assert "<script>" not in html and "2.00 s" in html and "100 ms" in html


def test_static_table_accepts_machines_with_different_widths():
    """A first lane without the smallest width (a full-mode file beside a quick host) still renders, one table per width."""
    wide = synthetic_doc("wide-machine", step_times={("cpu", 512, b): 1e-3 * b for b in (1, 64)},
                         epoch_times={("cpu", 512, 1): 9.0, ("cpu", 512, 64): 3.0})
    narrow = synthetic_doc("narrow-machine", epoch_times={("cpu", 8, 1): 1.0, ("cpu", 8, 64): 0.2})
    data = Dataset([Machine(wide, "a", "committed reference"), Machine(narrow, "b", "committed reference")])
    html = race.static_table(data)
    assert "Width 512:" in html and "Width 8:" in html and "10,000 rows" in html
    assert html.count("<table") == 2  # one table per width, each a few lanes wide


def test_static_table_marks_a_caveated_epoch_as_every_other_table_does():
    """An epoch measured under load carries its * mark and the legend; the same epoch measured idle does not."""
    data = dataset()
    loaded = next(b for b in data.machines[0].doc["benchmarks"]
                  if b["group"] == "epoch_time" and b["params"]["batch"] == 64)
    loaded["extra_info"]["under_load"] = True
    html = race.static_table(data)
    cell = html.split("500 ms")[1].split("</td>")[0]  # batch 64's epoch
    assert html.count(">*</sup>") == 1 and '<sup title="taken under load">*</sup>' in cell
    assert "<li>Under load (*): other processes used the CPU meanwhile.</li>" in html
    clean = race.static_table(dataset())
    assert ">*</sup>" not in clean and "* measured while" not in clean


def test_static_table_marks_an_epoch_longer_than_at_half_the_batch():
    """An epoch longer than its own lane's at half the batch (beyond the meaningful ratio) carries ↑ and the key says
    it; one a hair longer, within that ratio, does not."""
    doc = synthetic_doc("odd-machine", epoch_times={("cpu", 32, 1): 1.0, ("cpu", 32, 2): 0.4, ("cpu", 32, 4): 0.9,
                                                    ("cpu", 32, 8): 0.95})
    html = race.static_table(Dataset([Machine(doc, "a", "committed reference")]))
    assert html.count(">↑</sup>") == 1 and '<sup title="longer than at half the batch">↑</sup>' in html.split(
        "900 ms")[1].split("</td>")[0]
    assert race.LONGER_WORDS in html
    assert not race.longer_than_half({"epochs": {"32": {"4": {"seconds": 1.0}, "8": {"seconds": 1.05}}}}, "32", "8")


def test_the_browser_plan_copies_the_epoch_experiment_and_its_model():
    """Race your browser trains the epoch experiment's rows, widths and batches, with training_step's model and optimiser."""
    import torch

    from snippets import training_step

    data = dataset()
    plan = race.race_data(data)["browser"]
    measured = [b["params"] for b in data.machines[0].measured("epoch_time", device="cpu")]
    assert plan["rows"] == measured[0]["rows"] and plan["widths"] == [32] and plan["batches"] == [1, 64]
    model, optimiser, loss = training_step.make_model(8, "cpu")
    assert (plan["inputs"], plan["classes"]) == (model[0].in_features, model[2].out_features)
    assert plan["learning_rate"] == optimiser.param_groups[0]["lr"] and type(optimiser) is torch.optim.SGD
    assert isinstance(loss, torch.nn.CrossEntropyLoss) and isinstance(model[1], torch.nn.ReLU)
    assert plan["min_rounds"] <= plan["max_rounds"] and plan["budget_s"] > 0


def test_no_browser_plan_without_epochs_of_the_builds_mode():
    """A build whose machines measured no CPU epochs offers no sizes to race in a browser."""
    doc = synthetic_doc(step_times={("cpu", 32, 1): 1e-4})
    assert race.browser_plan(Dataset([Machine(doc, "f", "t")])) is None


def test_an_estimated_lane_counts_the_sizes_its_host_bounds():
    """host_bound_sizes counts every raced size of an estimated lane whose host issuing outlasts the modelled GPU."""
    from build_hooks import race
    from build_hooks.dataset import Dataset, Machine
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(), "f", "t")])
    lane = next(lane for lane in race.race_data(data)["lanes"] if lane["estimate"])
    bound, raced = race.host_bound_sizes(data, lane)
    assert raced == sum(len(e) for e in lane["epochs"].values()) and bound == raced  # made-up ms per op: host-bound


def test_the_static_chart_uses_the_live_races_lane_styles():
    """race.lane_style's colours and dashes are race.js's DASHES and crossover.css's lane colours, in order."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    script = (root / "docs" / "javascripts" / "race.js").read_text()
    dashes = json.loads(re.search(r"var DASHES = (\[.*?\]);", script).group(1))
    css = (root / "docs" / "stylesheets" / "crossover.css").read_text()
    colours = [re.search(rf"\.race-chart__line--s{i} {{ stroke: (#[0-9A-Fa-f]{{6}}); }}", css).group(1)
               for i in range(len(race.LANE_COLOURS))]
    assert dashes == race.LANE_DASHES and colours == race.LANE_COLOURS
    assert re.search(r"var STYLES = (\d+);", script).group(1) == str(len(race.LANE_COLOURS))
    letters = [race.lane_style(i)[0] for i in range(12)]
    assert len(set(letters)) == 12 and len({race.lane_style(i)[2] for i in range(12)}) == 12


def test_a_measured_gpu_meets_its_own_machines_cpu_not_a_faster_one_elsewhere():
    """The grid's pairing: a GPU against the CPU in its own machine, even where another machine's CPU is faster."""
    gpu_box = synthetic_doc(machine_id="gpu-box", brand="Slow CPU", gpu="Fixture GPU",
                            step_times={("cpu", 32, 1): 1e-3, ("cuda", 32, 1): 5e-4},
                            epoch_times={("cpu", 32, 1): 4.0, ("cuda", 32, 1): 2.0})
    cpu_box = synthetic_doc(machine_id="cpu-box", brand="Fast CPU",
                            step_times={("cpu", 32, 1): 1e-4}, epoch_times={("cpu", 32, 1): 0.5})
    data = Dataset([Machine(gpu_box, "a", "t"), Machine(cpu_box, "b", "t")])
    pairing = race.verdicts(race.race_data(data))[(32, 1)]
    assert pairing["leader"] == "GPU" and pairing["cpu"]["machine_id"] == "gpu-box"



def test_the_grid_marks_each_verdict_that_rests_on_too_few_samples():
    """A verdict read from an epoch with fewer than MIN_SAMPLES samples is marked rough in its cell, with a note;
    when every verdict is, one note says so and no cell repeats it; with enough samples, neither."""
    from build_hooks import page

    def grid(samples: dict[str, int], only_batch: int | None = None) -> str:
        data = dataset(gpu="Fixture GPU")
        for bench in data.machines[0].doc["benchmarks"]:
            if bench["group"] == "epoch_time":
                n = samples[bench["params"]["device"]] if only_batch in (None, bench["params"]["batch"]) else 8
                bench["stats"]["data"] = [bench["stats"]["median"]] * n
        return str(page.render_section("verdict_grid", data))

    def rough_cells(html: str) -> int:
        return sum("rough" in cell.split("</a>")[0] for cell in html.split('class="verdict ')[1:])

    plenty = grid({"cpu": 8, "cuda": 8})
    assert "fewer than" not in plenty and rough_cells(plenty) == 0
    every = grid({"cpu": 8, "cuda": 2})
    assert "Every verdict is rough: each epoch has under" in every and rough_cells(every) == 0
    some = grid({"cpu": 2, "cuda": 2}, only_batch=1)
    assert "Rough: an epoch it compares has fewer than" in some and 0 < rough_cells(some) < some.count('class="verdict ')


def test_a_lead_over_an_epoch_slower_than_at_half_the_batch_is_out_of_line():
    """A lost epoch slower than its own at half the batch marks the verdict, unless the lead clears that time too."""
    def lane(seconds_by_batch: dict[int, float]) -> dict:
        return {"epochs": {"8": {str(b): {"seconds": s} for b, s in seconds_by_batch.items()}}}
    slowed = lane({8: 1.0, 16: 2.0})
    assert race.out_of_line(slowed, "8", "16", rival=1.5)  # against 1.0 s at batch 8, the 1.5 s rival loses
    assert not race.out_of_line(slowed, "8", "16", rival=0.5)  # 2× clear of even the faster time: it stands
    assert not race.out_of_line(lane({8: 1.0, 16: 1.05}), "8", "16", rival=1.0)  # within the meaningful ratio
    assert not race.out_of_line(lane({16: 2.0}), "8", "16", rival=1.5)  # no half batch to compare with


def test_a_lead_over_an_epoch_whose_steps_were_quicker_at_twice_the_batch_is_out_of_line():
    """A lost epoch whose steps took longer than its own steps at twice the batch marks the verdict, unless the lead
    clears the epoch priced at that quicker pace too (#39 review: a CPU slowdown at one size read as a GPU win)."""
    def lane(seconds_by_batch: dict[int, float]) -> dict:
        return {"epochs": {"8": {str(b): {"seconds": s, "rows": 1024} for b, s in seconds_by_batch.items()}}}
    slowed = lane({16: 3.0, 32: 1.0})  # 64 steps of 47 ms against 32 steps of 31 ms: at that pace, 2.0 s
    assert race.at_double_pace(slowed, "8", "16") == pytest.approx(2.0)
    assert race.out_of_line(slowed, "8", "16", rival=2.5)  # the 2.5 s rival would lose to the 2.0 s pace
    assert not race.out_of_line(slowed, "8", "16", rival=1.0)  # 2× clear of even that pace: it stands
    assert race.at_double_pace(lane({16: 2.1, 32: 1.0}), "8", "16") is None  # within the meaningful ratio
    assert not race.out_of_line(lane({16: 3.0}), "8", "16", rival=2.5)  # no larger batch to compare with


def test_a_lead_over_a_slowed_loser_is_also_given_against_its_half_batch_epoch():
    """against_half is the lead over the loser's faster epoch at half the batch, only where that epoch was
    meaningfully faster; the race's corner sentence then gives the grid's lead and the smaller one."""
    from build_hooks.views.race import _corner

    def lane(seconds_by_batch: dict[int, float]) -> dict:
        return {"epochs": {"8": {str(b): {"seconds": s} for b, s in seconds_by_batch.items()}}}
    assert race.against_half(lane({8: 1.0, 16: 1.3}), "8", "16", rival=0.2) == 5.0
    assert race.against_half(lane({8: 1.0, 16: 1.05}), "8", "16", rival=0.2) is None  # within the meaningful ratio
    assert race.against_half(lane({16: 1.3}), "8", "16", rival=0.2) is None
    pairing = {"leader": "GPU", "ratio": 6.5, "narrow": False, "out_of_line": False, "estimate": False,
               "against_half": 5.0}
    said = _corner(pairing, 2048, 16)
    assert said.endswith("the GPU finishes first, 5.0× to 6.5× ahead (the CPU's epoch here ran slower than at batch 8)")
    assert _corner({**pairing, "against_half": None}, 2048, 16).endswith("finishes first, 6.5× ahead")


def test_a_grid_cell_carries_the_marks_of_the_epochs_it_compares():
    """A verdict read from a noisy epoch shows the noisy mark in its cell and names it in the link, with the key
    under the grid; a grid of steady epochs shows neither."""
    from build_hooks import page

    def grid(noisy: bool) -> str:
        data = dataset(gpu="Fixture GPU")
        for bench in data.machines[0].doc["benchmarks"]:
            if bench["group"] == "epoch_time" and bench["params"]["batch"] == 64:
                bench["extra_info"]["noisy"] = noisy
        return str(page.render_section("verdict_grid", data))

    marked, steady = grid(True), grid(False)
    assert '<sup>†</sup>' in marked and "Noisy (†)" in marked and ", noisy" in marked
    assert "†" not in steady and "Noisy" not in steady
    # A mark most cells carry tells no cell apart: said once under the grid, in no cell.
    data = dataset(gpu="Fixture GPU")
    for bench in data.machines[0].doc["benchmarks"]:
        if bench["group"] == "epoch_time":
            bench["extra_info"]["noisy"] = True
    everywhere = str(page.render_section("verdict_grid", data))
    assert "<sup>†</sup>" not in everywhere and ("Most cells (2 of 2) rest on noisy timings. Noisy: timings&#x27; "
                                                  "middle half spans over 10% of the median. Read every ratio"
                                                  in everywhere)  # defined where it is said: no cell shows it
    assert "Noisy (†)" not in everywhere


def test_the_grid_says_when_its_gpu_machine_began_most_rounds_slow(monkeypatch):
    """A raced GPU machine that began more than half its rounds slow gets one short note under the grid, linking to
    the gallery; one that rarely did gets none."""
    from build_hooks import gate, page

    data = dataset(gpu="Fixture GPU")
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: 0.61)
    slow = str(page.render_section("verdict_grid", data))
    assert ("The GPU machine began 61% of its measurements running slow. So both its CPU&#x27;s and its GPU&#x27;s "
            'times may run long (<a href="crossover-site-root:/gallery/">gallery</a>).') in slow  # short: on two pages
    said = page.render_fact("race_doubts", data)  # on home, the sentence under the grid says it instead
    assert said.endswith("The GPU machine began 61% of its measurements running slow (a speed check before each ran over "
                         "1.4× its best). So both its CPU's and its GPU's "
                         "times may run long") and "check task" not in said
    assert "running slow" not in str(page.render_section("verdict_grid_home", data))
    # Home's first screen names the pairing only: the sentence under the grid (race_doubts) says the machine ran slow.
    assert "slow" not in page.render_fact("race_pairing", data)
    # The grid's own rounds first where they differ from the machine's overall share.
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: 0.32 if groups else 0.61)
    assert ("The GPU machine began 32% of the grid's measurements running slow (a speed check before each ran over 1.4× "
            "its best). Over all its experiments, the share was 61%"
            in page.render_fact("race_doubts", data))
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: 0.05)
    assert "running slow" not in str(page.render_section("verdict_grid", data))


def test_the_summary_says_where_the_gpus_clear_wins_lie():
    """The sentence above the grid names each width's clear winning batches as runs of neighbouring batches, widest
    first, then the narrow leads apart, leaving out a lead marked out of line, and says nothing where the GPU wins
    nowhere or everywhere."""
    from build_hooks.views.race import _wins_where

    def grid(gpu_cells, out_of_line=(), changed=(), narrow=()):
        def side(w, b):
            return {"epochs": {str(w): {str(b): {"caveats": ["unsettled"] if (w, b) in changed else []}}}}
        return {(w, b): {"leader": "GPU" if (w, b) in gpu_cells else "CPU", "out_of_line": (w, b) in out_of_line,
                         "narrow": (w, b) in narrow, "gpu": side(w, b), "cpu": side(w, b)}
                for w in (8, 32, 512, 2048) for b in (1, 16, 64, 512)}

    wide = grid({(512, 16), (512, 512), (2048, 64), (2048, 512), (32, 16)}, out_of_line={(32, 16)})
    assert _wins_where(wide, "the GPU") == ("The GPU wins at width 2048 from batch 64 up and at width 512 at batches "
                                            "16 and 512")
    assert _wins_where(grid({(2048, 16), (2048, 64)}), "the GPU") == "The GPU wins at width 2048 at batches 16 to 64"
    assert _wins_where(grid({(2048, 16), (2048, 512)}, changed={(2048, 16)}), "the GPU") == (
        "The GPU wins at width 2048 at batches 16§ and 512")  # a win on a changed state keeps its mark
    assert _wins_where(grid({(2048, 512)}), "the GPU") == "The GPU wins at width 2048 at batch 512"
    assert _wins_where(grid({(w, b) for w in (8, 32, 512, 2048) for b in (16, 64, 512)}), "the GPU") == (
        "The GPU wins at every width, from batch 16 up")
    assert _wins_where(grid(set()), "the GPU") == ""
    # A narrow lead is named apart, so a learner does not count it with the clear ones.
    assert _wins_where(grid({(512, 64), (2048, 512)}, narrow={(512, 64)}, changed={(512, 64)}), "the GPU") == (
        "The GPU wins at width 2048 at batch 512. The GPU's lead is narrow at width 512, batch 64, on a run taken while the "
        "machine changed state (§)")
    assert _wins_where(grid({(512, 64)}, narrow={(512, 64)}), "the GPU") == (
        "The GPU leads only narrowly, at width 512, batch 64")
    assert _wins_where(wide, "the GPU", compact=True) == (
        "Clear GPU wins: width 2048 from batch 64 up; width 512 at batches 16 and 512")  # the race page's list
    assert _wins_where(grid({(w, b) for w in (8, 32, 512, 2048) for b in (1, 16, 64, 512)}), "the GPU") == ""


def test_home_gives_the_counts_and_where_the_gpu_wins_above_the_grid_and_the_doubts_under_it(monkeypatch):
    """Above home's grid: where the GPU wins; under it (race_doubts): the counts, how many GPU leads rest on a changed
    state (§), then what weakens every verdict. Where the GPU wins nowhere, the counts go above instead."""
    from build_hooks.views import race as views

    def cell(leader, caveats=()):
        side = {"epochs": {"32": {"64": {"caveats": list(caveats)}}}, "label": "Fixture", "machine_id": "m"}
        return {"leader": leader, "out_of_line": False, "estimate": False, "gpu": side, "cpu": side}
    found = {(32, 1): cell("CPU"), (32, 64): cell("GPU", ["unsettled"])}
    monkeypatch.setattr(race, "verdicts", lambda race_data: found)
    monkeypatch.setattr(race, "race_data", lambda data: {})
    monkeypatch.setattr(views, "_doubts", lambda data, found, define=False: [])
    above = page.render_fact("race_ground", Dataset([]))
    assert above == "The GPU wins at width 32 at batch 64§"
    under = page.render_fact("race_doubts", Dataset([]))
    assert under.startswith("Of the 2 settings raced above, the GPU finishes first at 1 and the CPU at 1. Of the GPU's "
                            "wins, 1 (width 32, batch 64) rests on a time taken while the machine changed state (§). "
                            "Every verdict rests")
    found[(32, 64)] = cell("CPU")
    assert page.render_fact("race_ground", Dataset([])) == "The CPU finishes first at all 2 settings raced below"
    assert page.render_fact("race_doubts", Dataset([])).startswith("Every verdict rests")  # the counts said above


def test_a_race_sentence_marks_each_time_as_the_tables_do():
    """_symbols gives a point's caveat marks in the tables' order, nothing for a point without caveats, and leaves
    out a mark every point of its lane carries (the tables say it once, in words)."""
    from build_hooks.views.race import _symbols

    marked, bare = {"seconds": 0.66, "caveats": ["unsettled", "few", "noisy"]}, {"seconds": 1.72}
    lane = {"epochs": {"32": {"1": marked, "2": bare}}}
    assert _symbols(marked, lane) == "†‡§" and _symbols(bare, lane) == ""
    every_few = {"epochs": {"32": {"1": marked, "2": {**bare, "caveats": ["few"]}}}}
    assert _symbols(marked, every_few) == "†§"


def test_the_tally_counts_each_sides_first_finishes_leaving_out_of_line_verdicts_apart(monkeypatch):
    """race_tally counts the grid's CPU and GPU leads; a GPU lead out of line is not counted as one."""
    found = {(8, 1): {"leader": "CPU", "out_of_line": False, "estimate": False},
             (8, 2): {"leader": "GPU", "out_of_line": True, "estimate": False},
             (8, 4): {"leader": "GPU", "out_of_line": False, "estimate": False},
             (8, 8): {"leader": "level", "out_of_line": False, "estimate": False}}
    monkeypatch.setattr(race, "verdicts", lambda race_data: found)
    monkeypatch.setattr(race, "race_data", lambda data: {})
    assert page.render_fact("race_tally", Dataset([])) == ("In the race's small network, the CPU finished first at 1 "
                                                           "of 4 settings, the GPU at 1")
    # Home's count says the out-of-line cell's lead is not counted: the cell still shows who led.
    from build_hooks.views.race import _verdict_counts
    assert "1 out of line (a lead not counted" in _verdict_counts(found, "the GPU", "the CPU")


def test_a_race_tables_lane_says_whether_it_is_an_estimate_the_build_host_or_a_gpus_own_cpu():
    """_lane_role labels an estimate, the build host's CPU and a CPU whose machine's GPU races too; other lanes
    need no label."""
    from types import SimpleNamespace

    def lane(kind, machine, estimate=False, label="Fixture"):
        return {"kind": kind, "machine_id": machine, "estimate": estimate, "label": label}
    lanes = [lane("CPU", "host"), lane("CPU", "box"), lane("GPU", "box", label="Fixture GPU"), lane("CPU", "other"),
             lane("GPU", "host", estimate=True)]
    data = SimpleNamespace(host=SimpleNamespace(id="host"))
    said = [str(race._lane_role(one, lanes, data)) for one in lanes]
    assert said == ["<br><small>the build host</small>", "<br><small>Fixture GPU's own CPU</small>", "", "",
                    "<br><small>estimate, not measured</small>"]


def test_the_race_opens_with_the_grids_counts_and_marks_a_lead_over_a_loser_slower_than_at_half_the_batch(
        monkeypatch):
    """race_grid_counts counts the grid (an out-of-line lead apart) and says where the GPU wins; a grid cell whose loser took longer than at half
    the batch carries ↑, in its label too, and the key says the lead would still hold; out of line gets no ↑."""
    from build_hooks.views import race as views

    def cell(leader, against_half=None, out_of_line=False):
        side = {"epochs": {"32": {b: {"caveats": []} for b in ("1", "2", "64")}}, "label": "Fixture",
                "machine_id": "m"}
        return {"leader": leader, "out_of_line": out_of_line, "estimate": False, "gpu": side, "cpu": side,
                "narrow": False, "ratio": 2.0, "against_half": against_half}
    found = {(32, 1): cell("CPU"), (32, 64): cell("GPU", against_half=1.5), (32, 2): cell("GPU", 1.5, True)}
    monkeypatch.setattr(race, "verdicts", lambda race_data: found)
    monkeypatch.setattr(race, "race_data", lambda data: {"widths": [32], "batches": [1, 2, 64], "lanes": []})
    monkeypatch.setattr(views, "_doubts", lambda data, found, define=False: [])
    assert page.render_fact("race_grid_counts", Dataset([])) == (
        "The grid below has all 3 settings: the CPU finishes first at 1, the GPU at 1. Clear GPU wins: width "
        "32 at batch 64")  # where it wins follows, so the two corners read as ends of a rule
    marked = views._verdict_cell(found[(32, 64)], 32, 64)
    assert "2.0×, ↑1.5×" in marked and "loser longer than at half the batch" in marked
    assert "↑" not in views._verdict_cell(found[(32, 2)], 32, 2)
    key = untrusted_text(page.render_section("verdict_grid", Dataset([])))
    assert "Slow loser (↑): slower than its epoch at half the batch. The figure after ↑ is the lead against" in key


def test_a_lead_over_a_loser_that_slowed_is_narrow_when_it_barely_clears_the_losers_half_batch_epoch():
    """matchup judges narrow against the loser's faster epoch at half the batch too, where the loser slowed: a GPU 1.3×
    ahead of a CPU that took only 1.11× the GPU's time at half the batch is narrow; one far ahead of both is not."""
    def point(seconds):
        return {"seconds": seconds, "q1": seconds * 0.99, "q3": seconds * 1.01}

    def race_of(cpu_half, cpu, gpu):
        lane = {"kind": "CPU", "machine_id": "m", "estimate": False, "label": "c",
                "epochs": {"512": {"32": point(cpu_half), "64": point(cpu)}}}
        gpu_lane = {"kind": "GPU", "machine_id": "m", "estimate": False, "label": "g",
                    "epochs": {"512": {"32": point(gpu * 1.5), "64": point(gpu)}}}
        return {"lanes": [lane, gpu_lane]}

    slowed = race.matchup(race_of(31.5, 35.5, 28.3), "512", "64")
    assert slowed["leader"] == "GPU" and not slowed["out_of_line"] and slowed["narrow"]
    clear = race.matchup(race_of(60.0, 70.0, 28.3), "512", "64")
    assert clear["leader"] == "GPU" and not clear["narrow"]


def test_a_worked_example_reads_a_width_whose_verdict_carries_no_caveat_mark():
    """_example_width keeps the lessons' small network unless its verdict at that end carries a mark (§ here) and
    another width's does not; with every width marked it keeps the small network."""
    from build_hooks.views import race as views

    def cell(caveats):
        side = {"epochs": {w: {b: {"caveats": caveats} for b in ("1", "512")} for w in ("8", "32")}}
        return {"gpu": side, "cpu": side}
    found = {(32, 1): cell(["unsettled"]), (8, 1): cell([]), (32, 512): cell([]), (8, 512): cell([])}
    race_data = {"widths": [8, 32]}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(race, "verdicts", lambda race_data: found)
        assert views._example_width(race_data, "smallest") == "8"
        assert views._example_width(race_data, "largest") == "32"
        found[(8, 1)] = cell(["noisy"])
        assert views._example_width(race_data, "smallest") == "32"


def test_a_lone_grid_lead_names_its_changed_state_and_narrowness_only_for_a_table():
    """_lone_lead gives a lone lead's batch with § and ", narrow" where the grid says so, and the bare batch for a
    sentence (marked False)."""
    from build_hooks.views import race as views

    side = {"epochs": {"512": {"64": {"caveats": ["unsettled"]}}}}
    pairing = {"gpu": side, "cpu": side, "narrow": True}
    assert views._lone_lead(pairing, 512, 64, marked=True) == "64§, narrow"
    assert views._lone_lead(pairing, 512, 64, marked=False) == "64"
    assert views._lone_lead(pairing | {"narrow": False}, 512, 64, marked=True) == "64§"


def untrusted_text(markup) -> str:
    """A rendering's text with HTML escapes undone, for matching words with apostrophes."""
    import html
    return html.unescape(str(markup))


def test_the_race_tables_put_the_gpu_pair_first_and_key_a_lane_wide_mark_once():
    """static_table orders the measured GPU and its own CPU first, and a lane whose every epoch rests on too few runs
    loses ‡ in its cells for one note under the tables."""
    def lane(kind, machine, few):
        point = {"seconds": 1.0, "rows": 64, "caveats": ["few"] if few else []}
        return {"kind": kind, "machine_id": machine, "label": f"Lane {kind} {machine}", "estimate": False,
                "epochs": {"32": {"1": dict(point), "2": dict(point)}}}
    lanes = [lane("CPU", "host", False), lane("GPU", "box", True), lane("CPU", "box", False)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32], "batches": [1, 2]})
        patch.setattr(race, "_lane_role", lambda lane, lanes, data: "")
        patch.setattr(race, "longer_than_half", lambda lane, width, batch: False)
        shown = str(race.static_table(Dataset([])))
    assert shown.index("Lane GPU box") < shown.index("Lane CPU box") < shown.index("Lane CPU host")
    assert "‡" not in shown.split("</table>")[0]
    assert "Every epoch of Lane GPU box rests on fewer than" in shown


def test_the_race_opens_where_its_intro_says():
    """race_data's opening (which race.js reads) is batch 64 at width 32 where raced, else the smallest raced, and
    race_opening names that setting."""
    from build_hooks import page

    data = dataset(gpu="Fixture GPU")
    assert race.race_data(data)["opening"] == {"batch": 64, "width": 32}
    assert page.render_fact("race_opening", data) == ("The race opens at batch 64 and width 32: the 512→32→10 network "
                                                      "the lessons use")
    assert race.opening([8, 512], [2, 4]) == (2, 8)


def test_the_largest_batch_verdict_reads_the_width_its_bullet_reads():
    """With measured lanes, the largest-batch verdict is said at the width where the gap moved most towards the GPU,
    the width the sentence before it gives (#39 read: a bullet that switched widths)."""
    from build_hooks import page

    epochs = {("cpu", 8, 1): 1.0, ("cpu", 8, 64): 0.1, ("cpu", 2048, 1): 2.0, ("cpu", 2048, 64): 1.0,
              ("cuda", 8, 1): 5.0, ("cuda", 8, 64): 0.5, ("cuda", 2048, 1): 5.0, ("cuda", 2048, 64): 0.1}
    steps = dict.fromkeys(epochs, 1e-4)
    data = Dataset([Machine(synthetic_doc(gpu="Fixture GPU", step_times=steps, epoch_times=epochs), "f", "t")])
    fall = page.render_fact("race_estimate_flat", data)
    largest = page.render_fact("race_largest_batch", data)
    assert fall.startswith("At width 2048, between batch 1 and 64,") and largest.startswith("at batch 64 and width 2048")


def test_home_names_the_raced_network_and_its_epochs_rows_from_the_experiment():
    """The grid's pairing sentence names the network's inputs and outputs (the experiment's declarations) and the
    epoch's rows (the race's data), so the work per step home quotes can be tied to the grid."""
    from build_hooks import experiments
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(gpu="Fixture GPU"), "f", "this build host")])
    model, rows = experiments.declared("training_step"), race.race_data(data)["join"]["rows"]
    said = page.render_fact("race_pairing", data)
    assert f"({model['INPUTS']} inputs, one hidden layer, {model['CLASSES']} outputs) through whole epochs of " \
           f"{rows[0]:,} rows" in said


def test_an_out_of_line_slowdown_both_experiments_show_is_said_to_be_likely_a_slow_code_path(monkeypatch):
    """reproduced_slowdowns says both experiments show the out-of-line losers' slowdowns where the training step broke
    its trend at the same settings too (all of them, or how many), and nothing where it did not."""
    from build_hooks import analysis
    from build_hooks.dataset import Machine
    from build_hooks.views import race as views
    from conftest import synthetic_doc

    machine = Machine(synthetic_doc(machine_id="box"), "f", "t")

    def cell(out_of_line):
        side = {"machine_id": machine.id, "label": "Fixture"}
        return {"leader": "GPU", "out_of_line": out_of_line, "estimate": False, "gpu": side, "cpu": side}
    found = {(32, 16): cell(True), (512, 64): cell(True), (512, 128): cell(False)}
    data = Dataset([machine])
    slow_steps = {32: {16}, 512: {64}}
    monkeypatch.setattr(analysis, "out_of_line_steps", lambda m, device, width: slow_steps.get(width, set()))
    assert views.reproduced_slowdowns(data, found) == " Both experiments show these slowdowns: likely a slow code path."
    slow_steps[512] = set()
    assert views.reproduced_slowdowns(data, found) == (" Both experiments show 1 of these slowdowns: likely a slow "
                                                       "code path.")
    slow_steps[32] = set()
    assert views.reproduced_slowdowns(data, found) == ""


def test_home_says_where_a_lane_ran_a_narrower_width_slower_at_half_its_batches_or_more(monkeypatch):
    """race_doubts names a raced lane whose epochs at one width ran slower, beyond both spreads, than at the next wider
    width at half the shared batches or more; a stray batch is not said."""
    from build_hooks.views import race as views

    def epochs(narrow_times):
        return {"8": {str(b): {"seconds": t, "q1": t, "q3": t} for b, t in narrow_times.items()},
                "32": {str(b): {"seconds": 1.0, "q1": 1.0, "q3": 1.0} for b in narrow_times}}
    cpu = {"id": "lane-0", "kind": "CPU", "machine_id": "m", "label": "Fixture CPU", "epochs": epochs({1: 2.0, 2: 2.0})}
    gpu = {"id": "lane-1", "kind": "GPU", "machine_id": "m", "label": "Fixture GPU", "epochs": epochs({1: 2.0, 2: 0.5})}
    found = {(8, 1): {"estimate": False, "cpu": cpu, "gpu": gpu}}
    said = views._width_inversions(Dataset([]), found)
    assert said == ["The GPU machine's CPU ran width 8 clearly slower than width 32 at 2 of 2 batches, though width 8 "
                    "does less work", "The GPU machine's GPU ran width 8 clearly slower than width 32 at 1 of 2 "
                    "batches, though width 8 does less work"]
    gpu["epochs"] = epochs({1: 2.0, 2: 0.5, 4: 0.5})  # 1 of 3: a stray
    assert len(views._width_inversions(Dataset([]), found)) == 1


def test_the_guides_middle_step_gives_this_builds_verdicts_at_its_two_batches():
    """race_middle_batches says who finishes first at the guide's batches 32 and 128 at the widest width, as the
    smallest batch's sentence says its own; without those batches it says so."""

    epochs = {("cpu", 2048, 1): 2.0, ("cpu", 2048, 32): 1.0, ("cpu", 2048, 128): 0.5,
              ("cuda", 2048, 1): 9.0, ("cuda", 2048, 32): 1.0, ("cuda", 2048, 128): 0.1}
    steps = dict.fromkeys(epochs, 1e-3)
    data = Dataset([Machine(synthetic_doc(gpu="Fixture GPU", step_times=steps, epoch_times=epochs), "f", "t")])
    said = untrusted.restore(page.render_fact("race_middle_batches", data))
    assert said.startswith("at batch 32 and width 2048, ") and "too close to call" in said.split(". At")[0]
    assert ". At batch 128 and width 2048, " in said and "finishes first, 5.0× ahead" in said
    assert page.render_fact("race_middle_batches", dataset(gpu="Fixture GPU")).startswith(
        "the race has no epoch at batch 32 or 128")  # a fixture of batches 1 and 64 only
