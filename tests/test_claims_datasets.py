"""Six synthetic datasets whose truth is known: every data-dependent sentence on the race page,
the home page, the FAQ, the cheat sheet and the recap says what each dataset shows."""

import pytest

from build_hooks import markers, untrusted
from build_hooks.dataset import Dataset, Machine
from conftest import ROOT, complete_doc, synthetic_doc

BATCHES = (1, 16, 64, 256)
PAGES = ["index.md", "race.md", "faq.md", "cheatsheet.md", "recap.md", "cost-model.md",
         "batch-size.md", "mixed-precision.md"]  # the homes of the peak and bf16 claims the FAQ links to


def steps_for(case: str) -> dict:
    """(device, width, batch) -> step seconds for each case."""
    cpu = {("cpu", 32, b): 1e-4 * b for b in BATCHES}
    gpu_time = {"gpu slower everywhere": lambda b: 3e-4 * b, "gpu faster everywhere": lambda b: 3e-5 * b,
                "crossover at 64": lambda b: 5e-3}.get(case)
    return cpu | ({("cuda", 32, b): gpu_time(b) for b in BATCHES} if gpu_time else {})


def dataset_for(case: str) -> Dataset:
    gpu = "Fixture GPU" if case in ("gpu slower everywhere", "gpu faster everywhere", "crossover at 64") else None
    doc = complete_doc(gpu)
    steps = steps_for(case)
    curve = synthetic_doc(gpu=gpu, step_times=steps,
                          epoch_times={k: t * -(-10000 // k[2]) for k, t in steps.items()})
    for bench in curve["benchmarks"]:
        if bench["group"] == "training_step":
            bench["extra_info"].update({"ops": 40, "bytes": 1000 * bench["params"]["batch"] + 50_000})
            if case == "cpu above its nominal peak":
                bench["extra_info"]["flops"] = int(4e11 * bench["stats"]["median"])  # above the 3.84e11 peak
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] not in ("training_step", "epoch_time")]
    doc["benchmarks"] += curve["benchmarks"]
    for group in ("training_step", "epoch_time"):
        doc["experiments"][group] = {**doc["experiments"][group], "devices": curve["experiments"][group]["devices"]}
    if case == "bf16 faster than fp32":
        for bench in doc["benchmarks"]:
            if bench["group"] == "precision" and bench["params"]["dtype"] == "bf16":
                for key in ("median", "q1", "q3", "mean", "min", "max"):
                    bench["stats"][key] /= 10
    return Dataset([Machine(doc, "fixture", "this build host")])


def rendered(case: str) -> dict[str, str]:
    data = dataset_for(case)
    return {name: untrusted.restore(markers.fill((ROOT / "docs" / name).read_text(), data)) for name in PAGES}


CASES = {
    "gpu slower everywhere": (["never became the shorter one", "never, up to batch", "shorter\">never</td>"],
                              ["from batch"]),
    "gpu faster everywhere": (["first from batch 1 (width 32)"],
                              ["never, up to batch", "never became", "never stayed ahead"]),
    "crossover at 64": (["first from batch 64 (width 32)", "from batch 64"], ["from batch 1 ", "never, up to batch"]),
    "no gpu": (["No GPU has been measured", "No GPU was measured", "(estimate)"], ["the shorter one", "GPU step shorter"]),
    "bf16 faster than fp32": (["faster in bf16 than in fp32", "native 16-bit"], ["slower in bf16"]),
    "cpu above its nominal peak": (["above its CPU's fp32 peak at the reported clock, 384 GFLOP/s"], ["close to or above"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pages_say_what_each_dataset_shows(case, plots_left_out):
    """Expected sentences appear on the pages and contradicting ones never do."""
    text = "\n".join(rendered(case).values())
    says, never = CASES[case]
    for phrase in says:
        assert phrase in text, (case, phrase)
    for phrase in never:
        assert phrase not in text, (case, phrase)


@pytest.mark.parametrize("case, smallest, largest", [
    ("gpu slower everywhere", "CPU", "CPU"),
    ("gpu faster everywhere", "Fixture GPU", "Fixture GPU"),
    ("crossover at 64", "CPU", "Fixture GPU"),
    ("no gpu", "CPU", "(estimate)"),  # the estimate pays the host's per-op cost at batch 1
])
def test_race_guide_names_the_winner_the_data_shows(case, smallest, largest, plots_left_out):
    """The race guide's computed sentences name the device that finished first at batch 1 and 256."""
    race = rendered(case)["race.md"]
    first_at = {line.split("at batch ")[1].split(" ")[0]: line for line in race.split("\n")
                if "finishes first" in line and "at batch " in line}  # not the verdict grid's count
    assert smallest in first_at["1"].split("finishes first")[0].split("width 32,")[1]
    assert largest in first_at["256"].split("finishes first")[0].split("width 32,")[1]


@pytest.mark.parametrize("case, summary, leaders", [
    ("gpu slower everywhere", "The CPU finishes first at all", {"CPU"}),
    ("gpu faster everywhere", "The GPU finishes first at all", {"GPU"}),
    ("crossover at 64", "Of the", {"CPU", "GPU"}),
])
def test_the_verdict_grid_and_its_sentence_follow_the_data(case, summary, leaders, plots_left_out):
    """The home page's verdict grid names the leader the epochs show at each setting, and its sentence counts them."""
    from build_hooks import race

    data = dataset_for(case)
    found = race.verdicts(race.race_data(data))
    assert {pairing["leader"] for pairing in found.values()} == leaders
    if case == "crossover at 64":  # the GPU's flat 5 ms step against the CPU's 0.1 ms a sample
        assert found[(32, 1)]["leader"] == "CPU" and found[(32, 256)]["leader"] == "GPU"
    home = rendered(case)["index.md"]
    assert summary in home and "verdict-grid" in home
    assert "race/?batch=256&amp;width=32&amp;machine=" in home  # each cell opens the race at its setting
