"""make test's --dist loadgroup: tests given a group at collection (as conftest does) run on one worker."""

import subprocess
import sys

from conftest import own_temp_root

CONFTEST = '''
import pytest

@pytest.fixture(scope="module")
def costly():
    return 1

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if "costly" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group("costly"))
'''
TESTS = "".join(f"def test_grouped_{i}(costly): pass\ndef test_free_{i}(): pass\n" for i in range(4))


def test_tests_grouped_at_collection_run_on_one_worker(tmp_path):
    """With the pinned pytest and pytest-xdist, a group added at collection reaches the scheduler (pytest 9.2
    with pytest-xdist 3.8 drops it silently: pytest-xdist#1386)."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_toy.py").write_text(TESTS)
    result = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
                             "no:cacheprovider"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env=own_temp_root(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:]
    workers = {line.split("]")[0] for line in result.stdout.splitlines() if "PASSED" in line and "grouped" in line}
    assert len(workers) == 1 and all("@costly" in line for line in result.stdout.splitlines()
                                     if "PASSED" in line and "grouped" in line), result.stdout[-2000:]
