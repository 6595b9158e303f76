"""Every committed reference results file is valid and is real data, not a test fixture."""

from pathlib import Path

import pytest

from build_hooks import store

FILES = sorted((Path(__file__).resolve().parent.parent / "results").glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_committed_results_are_valid_full_measurements(path):
    """A committed file passes the schema, was measured in full mode and is not a fixture."""
    doc = store.load(path)
    assert doc["mode"] == "full"
    assert "fixture" not in doc["environment_key"]
