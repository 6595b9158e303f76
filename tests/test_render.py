"""Tests for build_hooks.render: formatting primitives and the noise rule in words."""

import pytest

from build_hooks import render, stats


@pytest.mark.parametrize("value, unit, text", [
    (1.234e-4, "s", "123 µs"), (0.0456, "s", "45.6 ms"), (1.5e11, "FLOP/s", "150 GFLOP/s"),
    (12.0, "s", "12.0 s"), (0, "s", "0 s"),
])
def test_si_formatting(value, unit, text):
    """Values get an SI prefix and three significant figures."""
    assert render.si(value, unit) == text


def test_marks_note_states_the_thresholds_the_code_uses(monkeypatch):
    """The words about noisy points and sample counts come from stats, never typed separately."""
    monkeypatch.setattr(stats, "NOISY_IQR_RATIO", 0.25)
    monkeypatch.setattr(stats, "MIN_SAMPLES", 7)
    note = render.marks_note({"noisy", "few"})
    assert "more than 25% of the median" in note and "fewer than 7" in note and "<li>Noisy (†): " in note


def test_a_single_sample_is_never_shown_as_quiet():
    """A point with one sample carries the 'too few samples' mark, whatever its IQR of zero says."""
    one = stats.summarise([1e-3])
    assert "‡" in render.mark(one, {"noisy": False}) and "only 1 samples" in render.mark(one, {})


def test_digits_follow_the_spread():
    """A tight point shows more digits than a spread-out one."""
    tight = stats.summarise([1.0, 1.0001, 0.9999, 1.0, 1.0002, 0.9998])
    loose = stats.summarise([1.0, 1.4, 0.7, 1.2, 0.8, 1.1])
    assert len(render.measured_value(tight, {}, "s")) > len(render.measured_value(loose, {}, "s"))


def test_bidi_controls_are_removed_and_html_escaped():
    """An unclosed right-to-left override cannot reorder a number; markup is escaped."""
    assert render.esc("<b>\u202e61</b>") == "&lt;b&gt;61&lt;/b&gt;"


QUOTE_BREAKER = '1" autofocus onfocus="window.__pwned = 1" x="'


def elements(html: str) -> list:
    """Every element of an HTML fragment, as html5lib parses it (a browser's view, not a grep)."""
    import html5lib

    return list(html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False).iter())


def test_table_escapes_cells_captions_and_its_accessible_name():
    """Text in a cell, heading or caption, quotes included, stays text; only Html passes as markup."""
    out = render.table([QUOTE_BREAKER], [["<img src=x onerror=alert(1)>", render.html("<b>{}</b>", "<i>")]],
                       caption="batch " + QUOTE_BREAKER)
    tags = [e.tag for e in elements(out) if isinstance(e.tag, str)]
    assert "img" not in tags and "i" not in tags and tags.count("b") == 1
    assert not any(name in e.attrib for e in elements(out) for name in ("autofocus", "onfocus", "x"))
    region = next(e for e in elements(out) if e.get("role") == "region")
    assert region.get("aria-label") == "batch " + QUOTE_BREAKER


def test_html_fills_values_as_text_and_keeps_format_specs():
    """render.html escapes what it is given (bidi controls removed) and formats numbers as str.format does."""
    assert render.html("<td>{:.1f}</td><td>{}</td>", 0.25, "<\u202eb>") == "<td>0.2</td><td>&lt;b&gt;</td>"
    assert isinstance(render.html("{}", "x"), render.Html)


def test_a_section_that_returns_a_plain_string_is_refused(monkeypatch):
    """A view that formats HTML by hand (a str) stops the build instead of risking an unescaped value."""
    from build_hooks import page
    from build_hooks.dataset import Dataset

    monkeypatch.setitem(page.SECTIONS, "hand_made", lambda data: "<p>hand made</p>")
    with pytest.raises(TypeError, match="section 'hand_made' returned str, not Html"):
        page.render_section("hand_made", Dataset([]))


def test_a_table_is_left_out_of_the_search_index():
    """Measured tables carry the theme's search exclusion: their numbers are read, not searched for."""
    assert "data-search-exclude" in str(render.table(["a"], [[1]]))


def test_an_iqr_at_the_noise_threshold_gets_a_decimal():
    """IQR shares print whole percent, except those that would print the noisy threshold itself."""
    from build_hooks.render import iqr_share

    assert [iqr_share({"iqr": iqr, "median": 1.0}) for iqr in (0.22, 0.1016, 0.0993, 0.08)] == \
        ["22%", "10.2%", "9.9%", "8%"]


def test_links_to_other_pages_are_made_relative_to_each_page():
    """One rendering links home, a lesson page and a nested page right: SITE_ROOT becomes ../ per folder, and a
    results file's text that imitates the marker (escaped, so never a whole href attribute) is left alone."""
    from build_hooks import render

    link = render.html('<a href="{}">code</a> {}', render.SITE_ROOT + "code/", 'href="' + render.SITE_ROOT)
    assert render.site_root_links(link, 0).startswith('<a href="code/">')
    assert render.site_root_links(link, 1).startswith('<a href="../code/">')
    assert render.site_root_links(link, 2).startswith('<a href="../../code/">')
    assert "href=&quot;" + render.SITE_ROOT in render.site_root_links(link, 1)


def test_a_machines_provenance_is_stated_once_per_page():
    """The second identical provenance line on a page shrinks to the machine's name and 'as above' (under a heading
    naming the machine, to nothing); others stay."""
    from build_hooks import render

    line = '<p class="crossover-provenance">Measured on <strong>CPU A</strong>, 2 threads; torch 2.13.</p>'
    other = '<p class="crossover-provenance">Measured on <strong>CPU B</strong>, 4 threads; torch 2.13.</p>'
    page = render.provenance_once(line + "<p>table</p>" + other + line + other)
    assert page.count("2 threads") == 1 and page.count("4 threads") == 1
    assert page.count("Measured on <strong>CPU A</strong> (as above).") == 1
    assert page.count("Measured on <strong>CPU B</strong> (as above).") == 1
    headed = line.replace('provenance"', 'provenance crossover-provenance--headed"')
    twice = render.provenance_once(headed + "<p>table</p>" + headed)
    assert twice.count("2 threads") == 1 and "as above" not in twice, "a heading already names the machine"


def test_agreement_is_stated_against_the_consistency_checks_tolerance():
    """A difference the 1.1x rule calls real but the consistency check tolerates is said to be within its tolerance,
    and one beyond it is said to be marked, so the two rules never read as contradicting each other."""
    from build_hooks import consistency, stats, wording

    def point(median):
        return stats.summarise([median * 0.99, median, median * 1.01])

    within = wording.same_configuration([(point(1.0), point(1.0)), (point(1.15), point(1.0))], flagged=True)
    assert "1 of the 2 agree" in within and "The other differs by 1.15× (slower here)" in within and f"inside the consistency check's {consistency.TOLERANCE:g}× tolerance" in within
    assert "no point is marked ≠" in within
    beyond = wording.same_configuration([(point(1.6), point(1.0))], flagged=True)
    assert f"That is outside the consistency check's {consistency.TOLERANCE:g}× tolerance" in beyond and "marked ≠" in beyond
    assert "marked" not in wording.same_configuration([(point(1.6), point(1.0))])
    one_of_two = wording.same_configuration([(point(1.6), point(1.0)), (point(1.15), point(1.0))])
    assert "1 of them is outside" in one_of_two  # the verb agrees with the count


def test_a_headline_built_on_marked_points_says_so():
    """A sentence whose ratio comes from points the table marks says which marks, in words; unmarked points add nothing."""
    from build_hooks import stats, wording

    def bench(load):
        return {"stats": stats.summarise([1.0, 1.01, 1.02, 1.03, 1.04]), "extra_info": {"under_load": load}}

    assert wording.marked_timings([bench(False), bench(False)]) == ""
    assert wording.marked_timings([bench(True), bench(True)]) == " (timings taken under load)"
    assert wording.marked_timings([bench(False), bench(True)]) == " (some timings taken under load)"


def test_an_interval_end_near_one_keeps_two_decimals():
    """An end that would print as 1.0x but is not 1 shows two decimals, so it never reads as 'no difference'."""
    from build_hooks import wording

    assert wording._interval_end(1.03) == "1.03×" and wording._interval_end(1.0) == "1.0×"
    assert wording._interval_end(1.5) == "1.5×" and wording._interval_end(0.97) == "0.97×"


def test_a_precise_ratio_keeps_its_interval_around_it_and_a_trimmed_interval_keeps_its_number():
    """With two decimals beside it, a 1.53× ratio's top prints 1.54×, not 1.5×; an interval of equal ends from the
    middle 3 of 5 rounds keeps the number, so it does not read as 'only 3 of 5 rounds'."""
    from build_hooks import stats, wording

    ratio = stats.Ratio(1.53, 0.99, 1.54, True, 3, 3)
    assert wording.interval_words(ratio, precise=True) == "0.99× to 1.54× over all 3 rounds"
    trimmed = stats.Ratio(1.2, 1.2, 1.2, True, 5, 3)
    assert wording.times_with_interval(trimmed) == "1.2× (1.2× in each of the middle 3 of 5 rounds)"
    every = stats.Ratio(1.2, 1.2, 1.2, True, 3, 3)
    assert wording.times_with_interval(every) == "1.2× (in each of the 3 rounds)"


def test_each_machines_table_region_has_a_name_of_its_own():
    """per_machine's tables are named after their machine, so a page never has two regions with one name (the second
    machine has a GPU: a page draws other machines that have one)."""
    import re

    from build_hooks import render
    from build_hooks.dataset import Dataset, Machine
    from conftest import synthetic_doc

    data = Dataset([Machine(synthetic_doc("a", brand="Fixture A"), "f", "this build host"),
                    Machine(synthetic_doc("b", brand="Fixture B <i>", gpu="Fixture GPU"), "g", "committed reference")])
    drawn = str(render.per_machine(data, "training_step", lambda m: render.table(["batch"], [[1]])))
    labels = re.findall(r'role="region" tabindex="0" aria-label="([^"]*)"', drawn)
    assert len(labels) == 2 and len(set(labels)) == 2 and "&lt;i&gt;" in labels[0], labels
    assert 'aria-label="Table: batch"' in str(render.table(["batch"], [[1]]))  # alone, as before


def test_a_sentences_timing_has_the_digits_its_table_prints():
    """median_text gives a median the digits its spread supports, exactly as measured_value prints it in a table."""
    from build_hooks import stats

    wide = stats.summarise([4.2e-3, 4.75e-3, 5.3e-3, 4.0e-3, 5.6e-3])
    tight = stats.summarise([4.749e-3, 4.75e-3, 4.751e-3, 4.750e-3, 4.7505e-3])
    for point in (wide, tight):
        assert render.median_text(point) in str(render.measured_value(point, {}, "s"))
    assert render.median_text(wide) != render.median_text(tight)


def test_overlapping_spreads_never_read_as_agreement_beside_a_not_equal_mark():
    """Two views whose spreads overlap but whose medians differ beyond the consistency tolerance are not said to
    agree where the table marks them not equal; without the mark, overlapping spreads agree."""
    from build_hooks import stats, wording

    wide = stats.summarise([0.9, 1.0, 1.5, 1.8, 2.0])
    narrow = stats.summarise([1.0, 1.01, 1.02, 1.03, 1.04])
    said = wording.same_configuration([(wide, narrow)], None, flagged=True)
    assert not said.startswith("They agree") and "marked ≠" in said and "by 1.47× (slower here)" in said
    assert wording.same_configuration([(wide, narrow)], None, flagged=False).startswith("They agree")


def test_a_gpus_memory_is_given_in_gib_as_its_driver_reports_it():
    """A GPU's memory prints in GiB ("139.8 GiB usable"), not as decimal GB that a datasheet's figure would contradict."""
    from build_hooks.dataset import Machine
    from conftest import synthetic_doc

    doc = synthetic_doc(gpu="Fixture GPU", step_times={("cpu", 32, 1): 1e-3, ("cuda", 32, 1): 1e-3})
    doc["machine_info"]["gpu"]["memory_bytes"] = 150_109_880_320
    line = str(render.provenance(Machine(doc, "f", "t"), full=True))
    assert "139.8 GiB usable" in line and "150 GB" not in line


def test_a_short_wide_table_names_each_cells_column_for_its_phone_cards():
    """A table of at most CARD_MAX_ROWS rows and at least CARD_MIN_COLUMNS columns is marked for cards, each cell
    carrying its column's name as text; a longer or narrower table stays a bare, scrolling table."""
    head = ["machine", "fp32", render.html("bf16 <small>{}</small>", "AMX"), QUOTE_BREAKER]
    short = str(render.table(head, [["A", "1 ms", "2 ms", "x"]] * render.CARD_MAX_ROWS))
    assert "crossover-table--cards" in short and 'data-label="bf16 AMX"' in short and 'data-label="fp32"' in short
    assert not any(name in e.attrib for e in elements(short) for name in ("autofocus", "onfocus", "x"))
    long = str(render.table(head, [["A", "1 ms", "2 ms", "x"]] * (render.CARD_MAX_ROWS + 1)))
    narrow = str(render.table(head[:3], [["A", "1 ms", "2 ms"]]))
    assert not any("cards" in t or "data-label" in t for t in (long, narrow))


def test_a_ratio_prints_at_most_three_figures_with_thousands_grouped():
    """multiple(): one decimal below 10, whole numbers below 1,000, then three figures with commas (152,000×)."""
    assert [render.multiple(r) for r in (1.46, 12.4, 2093.4, 152107.0)] == ["1.5×", "12×", "2,090×", "152,000×"]


def test_a_ratio_that_prints_as_the_meaningful_ratio_gets_two_decimals():
    """A claimed 1.108× prints "1.11×", not the threshold's own "1.1×", with its interval in two decimals too; a ratio
    away from the threshold keeps one."""
    from build_hooks import stats, wording

    near = stats.Ratio(1.108, 1.097, 1.25, True, 5, 3)
    assert wording.times_with_interval(near) == "1.11× (1.10× to 1.25× in the middle 3 of 5 rounds)"
    assert wording.ratio_sentence(near, "{} faster", "{} slower", "level") == (
        "1.11× faster (1.10× to 1.25× in the middle 3 of 5 rounds)")
    assert wording.claimed_multiple(1.3) == "1.3×" and wording.claimed_multiple(1.06) == "1.06×"


def test_the_pointer_to_machines_left_out_is_said_once_per_page():
    """provenance_once keeps the first "measured on N more machines" note of a page and drops the same note again."""
    from types import SimpleNamespace

    from build_hooks import render

    data = SimpleNamespace(shown=lambda group=None: [], machines=[SimpleNamespace(gpu="G") for _ in range(3)])
    pointer = str(render.more_machines(data))
    page = render.provenance_once(pointer + "<p>table</p>" + pointer)
    assert page.count("Measured on 3 more machines.") == 1
    data.machines = [SimpleNamespace(gpu=None) for _ in range(3)]  # none with a GPU: said, so no GPU is promised
    cpu_only = str(render.more_machines(data))
    assert "Measured on 3 more machines, CPU only." in cpu_only
    assert render.provenance_once(cpu_only + "<p>table</p>" + cpu_only).count("CPU only") == 1
