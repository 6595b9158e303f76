"""Tests for build_hooks.claims: two measurements agree on claims, or the differences are listed."""

import json

from build_hooks import claims
from conftest import complete_doc


def test_same_verdicts_with_other_numbers_agree(tmp_path, capsys):
    """Scaling every time by 1.2 changes numbers but no claim."""
    first, second = complete_doc(), complete_doc()
    for bench in second["benchmarks"]:
        if bench["unit"] == "s":
            for key in ("median", "q1", "q3", "mean", "min", "max"):
                bench["stats"][key] *= 1.2
            bench["stats"]["data"] = [x * 1.2 for x in bench["stats"]["data"]]
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, doc in zip(paths, (first, second)):
        path.write_text(json.dumps(doc))
    assert claims.main([str(p) for p in paths]) == 0
    assert "0 differ" in capsys.readouterr().out


def test_a_flipped_verdict_is_reported(tmp_path, capsys):
    """When one thread becomes faster than two, the threads claims (this machine's and across machines) differ."""
    first, second = complete_doc(), complete_doc()
    times = {b["params"]["threads"]: b for b in second["benchmarks"] if b["group"] == "threads"}
    slow, fast = times[1]["stats"], times[max(times)]["stats"]
    times[1]["stats"], times[max(times)]["stats"] = fast, slow
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, doc in zip(paths, (first, second)):
        path.write_text(json.dumps(doc))
    assert claims.main([str(p) for p in paths]) == 1
    out = capsys.readouterr().out
    assert "threads_summary" in out and "one_thread_wins" in out and "one_thread_answer" in out and "3 differ" in out


def test_a_claim_that_differs_only_in_its_marks_keeps_its_verdict():
    """An interval's rounds and caveat words are marks: two claims that differ only there have one verdict."""
    quiet = "2 threads were 1.4× faster (1.3× to 1.5× over all 5 rounds)"
    noisy = "2 threads were 1.6× faster (in each of the middle 3 of 5 rounds; timings noisy)"
    assert claims.normalise(quiet) != claims.normalise(noisy) and claims.verdict(quiet) == claims.verdict(noisy)
    assert claims.verdict("one thread was 1.1× faster (over all 5 rounds)") != claims.verdict(quiet)
    assert claims.verdict("it took 3 ms (estimate, 2 ms to 7 ms)") == "it took # (estimate, #)"  # not a mark


def test_normalise_keeps_batches_and_blanks_measurements():
    """Batch sizes stay (a moved crossover is a different claim); times and ratios do not."""
    text = "at batch 64, 2 threads were 1.4× faster; it took 12.3 ms (45%)"
    assert claims.normalise(text) == "at batch 64, 2 threads were # faster; it took # (#)"


def test_terminal_controls_from_a_results_file_are_printed_as_escapes(tmp_path, capsys):
    """An ANSI sequence in a CPU brand reaches the claims output as visible escapes, never raw."""
    painted = "\x1b[2J\x1b[32m37 of 37 claims agree\x1b[0m"
    first, second = complete_doc(machine_id="a"), complete_doc(machine_id="b")
    second["machine_info"]["cpu"]["brand"] = painted  # the host_cpu claim differs, so it is printed
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    claims.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J" in out


def test_a_file_with_zero_byte_counts_is_reported_per_claim_not_with_a_traceback(tmp_path, capsys):
    """Schema-valid zeros that a claim divides by name the claim, the file and the experiment."""
    first, second = complete_doc(machine_id="a"), complete_doc(machine_id="b")
    for bench in second["benchmarks"]:
        if bench["group"] == "grad_accumulation":
            bench["extra_info"]["activation_bytes"] = 0
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    assert claims.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    out = capsys.readouterr().out
    assert "accumulation_summary" in out and "b.json" in out and "grad_accumulation points" in out


def test_two_files_missing_the_same_experiment_agree(tmp_path, capsys):
    """A claim neither file can compute (the same experiment missing from both) is the same claim, whatever the paths."""
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        doc = complete_doc()
        doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] != "data_parallel"]
        doc["experiments"].pop("data_parallel", None)
        path.write_text(json.dumps(doc))
    assert claims.main([str(p) for p in paths]) == 0
    assert "0 differ" in capsys.readouterr().out
