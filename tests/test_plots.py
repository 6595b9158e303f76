"""Tests for build_hooks.plots.compact: the same drawing in fewer bytes, text untouched."""

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
