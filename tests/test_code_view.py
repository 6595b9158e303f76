"""Tests for build_hooks.code_view: the code behind a number, read from the very function that wrote it."""

from build_hooks import code_view, page, render


def test_a_view_is_found_at_its_file_and_line():
    """of_view gives the project-relative file, the decorator's line and the function's source."""
    source = code_view.of_view(page.view("fact", "host_cpu"))
    lines = open(source.path).read().splitlines()
    assert source.path == "build_hooks/views/training_step.py" and lines[source.line - 1] == "@fact"
    assert "def host_cpu" in source.code


def test_a_measurement_is_read_without_importing_its_snippet():
    """of_measurement finds snippets/<name>.py's measure() by parsing it (no torch import)."""
    source = code_view.of_measurement("training_step")
    assert source.path == "snippets/training_step.py" and source.code.startswith("def measure(")
    assert code_view.of_measurement("not_an_experiment") is None


def test_the_block_links_the_reference_entry_and_names_what_measured_it():
    """A section's block links its entry on the code page and lists the measuring functions."""
    block = code_view.block("section", "threads", page.view("section", "threads"), ("threads",))
    assert 'href="../code/#section-threads"' in render.site_root_links(block, 1) and "build_hooks/views/threads.py:" in block
    assert "measured by <code>snippets/threads.py:" in block and "How threads is measured" in block


def test_highlighting_is_kept_on_disk(tmp_path, monkeypatch):
    """A second process reads the highlighted code instead of running Pygments again; an entry edited on disk
    no longer matches its seal and is made afresh."""
    from build_hooks import digests

    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path))
    code_view.highlighted.cache_clear()
    first = code_view.highlighted("x = 1\n")
    (stored,) = (tmp_path / "code").glob("*.html")
    digests.save_entry(stored, first.replace("highlight", "highlight from-disk"))
    code_view.highlighted.cache_clear()
    assert "from-disk" in code_view.highlighted("x = 1\n")
    stored.write_text(stored.read_text().replace("from-disk", "forged"))  # edited, not re-sealed
    code_view.highlighted.cache_clear()
    assert code_view.highlighted("x = 1\n") == first
    code_view.highlighted.cache_clear()


def test_code_behind_names_only_the_experiments_a_section_renders(plots_left_out):
    """A section whose provenance line checks the machine's peak against its matrix products is still measured by
    its own experiment alone: gemm_rate is named only where matrix products are what the section shows."""
    from build_hooks import view_cache
    from build_hooks.dataset import Dataset, Machine
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(), "f", "this build host")])
    page.render_section("training_step", data)
    assert view_cache.reads[("section", "training_step")] == ("training_step",)
    page.render_section("gemm_rate", data)
    assert "gemm_rate" in view_cache.reads[("section", "gemm_rate")]


def test_a_page_shows_each_experiments_measuring_block_once():
    """Two sections that read one experiment: its "How it is measured" block stays under the first only, and each
    section's one line still names the snippet."""
    reads = ("epoch_time", "training_step")
    first, second = (str(code_view.block("section", name, page.view("section", name), reads))
                     for name in ("race_table", "verdict_grid"))
    assert first.count("How epoch_time is measured") == second.count("How epoch_time is measured") == 1
    once = code_view.measurements_once(first + second)
    assert once.count("How epoch_time is measured") == once.count("How training_step is measured") == 1
    assert once.count("measured by <code>snippets/epoch_time.py") == 2  # each section's one line
