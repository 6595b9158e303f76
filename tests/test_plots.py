"""Tests for build_hooks.plots: compact SVG with text untouched, panels and legends, axis units, bar colours."""

import re

from build_hooks import plots

SVG = ('<svg width="100pt" height="50pt"><defs><path id="m1" d="M 0 0 \n L 0 3.5"/></defs>'
       '<g id="line2d_1"><g clip-path="url(#p1)">'
       '<use xlink:href="#m1" x="10.123456" y="20.987654" style="fill: #e69f00; stroke: #e69f00"/>\n'
       '<use xlink:href="#m1" x="30.5" y="40.25" style="fill: #e69f00; stroke: #e69f00"/></g></g>'
       "<text style=\"font-size: 10px; font-family: 'DejaVu Sans', 'Bitstream Vera Sans', sans-serif; fill: currentColor\" "
       'x="1.23456" y="2">0.123456 id="kept" style="x"</text></svg>')


def test_geometry_is_rounded_and_text_kept_exactly():
    """Coordinates keep two decimals of a point; a label's text, numbers and quotes included, is unchanged."""
    out = plots.compact(SVG)
    assert 'x="10.12" y="20.98"' in out and 'x="1.23"' in out
    assert '>0.123456 id="kept" style="x"</text>' in out


def test_shared_marker_styles_move_to_their_group_and_unused_ids_go():
    """Markers of one line share one style on their group; ids nothing refers to are dropped, referenced ones kept."""
    out = plots.compact(SVG)
    assert out.count("fill: #e69f00") == 1 and 'clip-path="url(#p1)" style="fill: #e69f00; stroke: #e69f00"' in out
    assert 'id="line2d_1"' not in out and 'id="m1"' in out
    assert 'd="M 0 0 L 0 3.5"' in out


def test_the_font_list_is_said_once_on_the_root():
    """Every label's font list moves to the root element; labels keep their size and colour."""
    out = plots.compact(SVG)
    assert out.startswith(f'<svg style="font-family: {plots.FONT_FAMILY}"') and out.count("font-family") == 1
    assert 'style="font-size: 10px; fill: currentColor"' in out


def test_ids_named_by_aria_attributes_are_kept():
    """A title or description that aria-labelledby or aria-describedby names keeps its id."""
    svg = '<svg role="img" aria-labelledby="t" aria-describedby="d"><title id="t">T</title><desc id="d">D</desc><g id="x"/></svg>'
    out = plots.compact(svg)
    assert 'id="t"' in out and 'id="d"' in out and 'id="x"' not in out


def test_a_root_style_is_kept_when_the_font_joins_it():
    """A root element that already has a style keeps it, with the font list added to the same attribute."""
    out = plots.compact('<svg style="max-width: 100%" width="1"><text>a</text></svg>')
    assert out.count("style=") == 1 and "max-width: 100%" in out and "font-family" in out


def test_markers_rewritten_by_a_sanitiser_share_their_style_too():
    """<use></use> pairs (as nbconvert writes them) move their shared style to the group like <use/> does."""
    svg = ('<svg width="1"><g><use style="fill: red" x="1"></use><use style="fill: red" x="2"></use></g></svg>')
    out = plots.compact(svg)
    assert out.count("fill: red") == 1 and '<g style="fill: red">' in out


def test_panels_share_one_legend_drawn_at_its_own_size_under_a_title_that_is_page_text():
    """Two panels give two labelled SVGs and one legend SVG (hidden from screen readers: the group's name says it),
    every series in it; the title is escaped page text ending in a full stop, so it is a sentence of its own."""
    series = [plots.Series("<b>CPU</b>", [1, 2], [1, 2], "-", "a"), plots.Series("GPU", [1, 2], [2, 1], "--", "b"),
              plots.Series("points", [1, 2], [1, 1], "o", "c")]
    panel = {"series": series, "xlabel": "x", "ylabel": "y", "subtitle": "one"}
    out = plots.line_panels([panel, panel | {"subtitle": "two"}], title="T & t", alt="alt")
    assert out.count('<svg role="img"') == 2 and out.count('class="crossover-panels__legend"') == 1
    legend = out.split('class="crossover-panels__legend"')[1]
    assert 'aria-hidden="true"' in out.split('class="crossover-panels__legend"')[0][-40:]
    assert "&lt;b&gt;CPU&lt;/b&gt;" in legend and "<b>" not in legend and ">GPU<" in legend and ">points<" in legend
    assert '<p class="crossover-panels__title"><bdi>T &amp; t</bdi>.</p>' in out


def test_an_axis_with_a_unit_reads_in_engineering_steps():
    """A byte axis reads 10 kB … 1 GB (not raw counts that run into each other); a seconds axis labels its
    minor ticks as 6 ms, not 6×10⁻³."""
    series = [plots.Series("copy", [4096, 2**20, 2**30], [0.01, 0.006, 0.02], "-", "a")]
    out = plots.line_panels([{"series": series, "xlabel": "size", "xunit": "B", "ylabel": "t", "yunit": "s",
                              "subtitle": "s"}], title="T", alt="alt")
    assert ">10 kB<" in out and ">1 GB<" in out and ">1048576<" not in out
    assert ">6 ms<" in out and "10^" not in out and "times" not in out


def test_a_bar_keeps_its_colour_when_another_chart_lacks_a_key():
    """With the full list of keys, fp32 and bf16 keep their colours on a chart without fp64 (no shift along the
    palette), so one precision is one colour across a page's charts."""
    def colours(series: dict) -> set[str]:
        out = plots.bars(["a"], series, title="T", ylabel="y", alt="alt", keys=["fp64", "fp32", "bf16"])
        return {c for c in re.findall(r"#[0-9a-f]{6}", str(out).lower()) if c in PALETTE}

    PALETTE = [c.lower() for c in plots.PALETTE]
    assert colours({"fp64": [1.0], "fp32": [2.0], "bf16": [3.0]}) == set(PALETTE[:3])
    assert colours({"fp32": [2.0], "bf16": [3.0]}) == set(PALETTE[1:3])


def test_a_series_band_is_shaded_around_its_line():
    """A series with a band draws one filled area (a path with the series' colour at low opacity) beside its line;
    without a band there is none."""
    def draw(band):
        series = [plots.Series("estimate", [1, 2, 4], [2.0, 2.0, 2.0], ":", "a", band=band)]
        return plots.line_panels([{"series": series, "xlabel": "x", "ylabel": "y", "subtitle": "s"}],
                                 title="T", alt="alt")
    shaded, bare = draw(([1.5, 1.5, 1.5], [9.0, 9.0, 9.0])), draw(None)
    assert "fill-opacity: 0.12" in shaded or 'fill-opacity="0.12"' in shaded or "opacity: 0.12" in shaded
    assert "0.12" not in bare


def test_a_log_scale_chart_draws_dots_not_bars():
    """On a log axis a bar's length depends on where the axis is cut, so bars(log=True) draws a dot per value; a
    linear chart keeps its bars."""
    series = {"fp32": [2e-3, 5e-2], "bf16": [1e-3, 6e-2]}
    dots = plots.bars(["matmul", "step"], series, title="T", ylabel="y", alt="alt", log=True, unit="s")
    bars = plots.bars(["matmul", "step"], series, title="T2", ylabel="y", alt="alt")
    values = sum(len(v) for v in series.values())
    # A dot is a marker (<use> of one shape); a bar is a path of its own.
    assert str(dots).count("<use") >= str(bars).count("<use") + values
    assert str(bars).count("<path") >= str(dots).count("<path") + values


def test_one_legend_names_a_series_only_a_later_panel_draws():
    """line_panels' legend names every series of every panel once: a roof drawn only in the second panel is named."""
    from build_hooks import plots

    time = plots.Series("CPU", [1, 2], [1.0, 2.0])
    roof = plots.Series("the fastest product", [1, 2], [5.0, 5.0], ":", markers=False)
    svg = str(plots.line_panels([{"series": [time], "xlabel": "x", "ylabel": "s", "subtitle": "Lower is better"},
                                 {"series": [time, roof], "xlabel": "x", "ylabel": "rate",
                                  "subtitle": "Higher is better"}], title="Two panels", alt="two panels"))
    legend = svg.split('class="crossover-panels__row"')[0]
    assert "the fastest product" in legend and legend.count(">CPU<") == 1
