"""Schema-valid results files that lack what a view needs: every fact and section either renders or refuses in words
naming the file, never with a traceback (#41: 'KeyError stats', 'IndexError', 'Error reading page code.md')."""

import copy

import pytest

from build_hooks import page, store
from build_hooks.dataset import Dataset, Machine
from conftest import complete_doc

SOURCE = "results/variant.json"


def fail(doc, group, status="failed", where=lambda params: True):
    """Points of `group` (those `where` picks) recorded as not measured, as the runner writes them."""
    for bench in doc["benchmarks"]:
        if bench["group"] == group and where(bench["params"]):
            bench.pop("stats", None)
            bench["status"] = status
            bench["extra_info"] = {"error": "it could not run"}
    return doc


def drop(doc, keep):
    doc["benchmarks"] = [b for b in doc["benchmarks"] if keep(b)]
    return doc


VARIANTS = {
    "a failed activation_memory point": lambda d: fail(d, "activation_memory", where=lambda p: p.get("batch") == 1),
    "every data_loader point failed": lambda d: fail(d, "data_loader"),
    "every training_step point out of memory": lambda d: fail(d, "training_step", "oom"),
    "precision listed with no points": lambda d: drop(d, lambda b: b["group"] != "precision"),
    "no batch-1 points": lambda d: drop(d, lambda b: b["params"].get("batch") != 1),
    "a single width": lambda d: drop(d, lambda b: b["params"].get("width", 32) == 32),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_view_renders_or_refuses_in_words(variant):
    """Each variant is either refused at load or every view renders or says, naming the file, what it cannot compute."""
    doc = VARIANTS[variant](copy.deepcopy(complete_doc()))
    try:
        store.validate(doc, SOURCE)
    except store.ResultsError as refused:  # refused at load, in words, naming the file: as good
        assert SOURCE in str(refused)
        return
    data = Dataset([Machine(doc, SOURCE, "this build host")])
    names = page.names()
    for kind, render in (("fact", page.render_fact), ("section", page.render_section)):
        for name in names[kind]:
            try:
                render(name, data)
            except page.BadData as exc:
                assert SOURCE in str(exc) and name in str(exc), exc
            except page.MissingData:
                pass
