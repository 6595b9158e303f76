"""Accessibility and weight of every built page: axe-core in Chromium, light and dark; size budgets."""

import re
from pathlib import Path

import pytest

from conftest import reach_box

SERIOUS = {"serious", "critical"}
# WCAG 2.1 A and AA, plus axe's best practices.
AXE_OPTIONS = {"resultTypes": ["violations"],
               "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}}
KIB = 1024
BUDGET = {"lab/crossover_lab/": 500 * KIB}  # everything else: LESSON_BUDGET
LESSON_BUDGET = 600 * KIB


def pages(site: Path) -> list[str]:
    """Every built page as a path below the site root ('' for the home page)."""
    found = [str(p.parent.relative_to(site)) + "/" for p in site.rglob("index.html")]
    return sorted("" if p == "./" else p for p in found if p != "404/")


def weight(site: Path, page: str) -> int:
    """Bytes a first visit downloads for `page`: its HTML, stylesheets, scripts and images (uncompressed)."""
    html_path = site / page / "index.html"
    html = html_path.read_text()
    total = len(html.encode())
    local = re.findall(r'<(?:link[^>]*rel="stylesheet"[^>]*href|script[^>]*src|img[^>]*src)="([^"#?]+)', html)
    for ref in set(local):
        if not ref.startswith(("data:", "http:", "https:")):
            total += (html_path.parent / ref).resolve().stat().st_size
    return total


def test_every_page_fits_its_weight_budget(built_site):
    """No lesson page downloads more than 600 KiB with the theme, and the lab page not more than 500 KiB."""
    over = {page: weight(built_site, page) // KIB for page in pages(built_site)
            if weight(built_site, page) > BUDGET.get(page, LESSON_BUDGET)}
    assert not over, f"pages over budget (KiB): {over}"


def test_scripts_load_only_where_used(built_site):
    """The race and recall scripts load on their own pages only, and no page loads pyodide."""
    for page in pages(built_site):
        html = (built_site / page / "index.html").read_text()
        assert ("race.js" in html) == (page == "race/"), page
        assert ("recall.js" in html) == (page == "recap/"), page
        assert "pyodide" not in html, page


# Dark mode changes colours only, so it is checked by the rules that read colours; light mode runs them all.
COLOUR_RULES = {"resultTypes": ["violations"], "runOnly": {"type": "rule", "values": ["color-contrast",
                                                                                    "link-in-text-block"]}}
SHARDS = 2  # every scheme's pages in this many tests, which the test workers share
# A table row built like an earlier row of its table (the same tags, classes and inline styles, down to the marks)
# is styled like it, so axe checks the first of each kind: the long tables of All measurements, About the data and
# the code reference took half of the audit's time, row after identical row.
MARK_REPEATED_ROWS = """() => {
  let marked = 0;
  for (const body of document.querySelectorAll("tbody")) {
    const seen = new Set();
    for (const row of body.rows) {
      const shape = [...row.querySelectorAll("*")]
        .map(e => e.tagName + "." + e.getAttribute("class") + "|" + e.getAttribute("style")).join(" ");
      if (seen.has(shape)) { row.dataset.axeRepeat = ""; marked++; } else seen.add(shape);
    }
  }
  return marked;
}"""
READERS_BOXES = ("#yours", "#browser")  # a reader's own file or browser, on the race page and the gallery
SETTLED = "!document.getAnimations().some(a => a.playState === 'running')"
REPEATED_ROWS_LEFT_OUT = {"exclude": [["[data-axe-repeat]"]]}


@pytest.mark.long
@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violations(browser, site_url, built_site, scheme, shard):
    """axe-core finds no serious or critical violation on any page: every rule in light mode, colours in dark (a table
    row built like an earlier one of its table is left out)."""
    from axe_playwright_python.sync_playwright import Axe

    axe, found = Axe(), {}
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    for path in pages(built_site)[shard::SHARDS]:
        page.goto(site_url + path)
        for box in READERS_BOXES:  # shown as a reader reaches them, so that they are audited too
            if page.locator(box).count():
                reach_box(page, box)
        page.wait_for_function(SETTLED)  # scrolled, the theme fades its back-to-top button in: audit it as drawn
        page.evaluate(MARK_REPEATED_ROWS)
        options = AXE_OPTIONS if scheme == "light" else COLOUR_RULES
        for violation in axe.run(page, context=REPEATED_ROWS_LEFT_OUT, options=options).response["violations"]:
            if violation["impact"] in SERIOUS:
                found[f"{path or 'home'}: {violation['id']}"] = [n["target"] for n in violation["nodes"][:3]]
    page.close()
    assert not found, found


def test_a_row_unlike_the_rows_before_it_is_still_audited(browser):
    """Only rows built like an earlier row of their table are left out: a row with a mark of its own (here a faint
    one) is audited, and its contrast violation is found."""
    from axe_playwright_python.sync_playwright import Axe

    page = browser.new_page()
    cell = '<td>{}</td>'
    rows = [cell.format("1.0 ms"), cell.format("2.0 ms"), cell.format('3.0 ms <span style="color:#ddd">noisy</span>')]
    page.set_content("<main><table><tbody>" + "".join(f"<tr>{r}</tr>" for r in rows) + "</tbody></table></main>")
    assert page.evaluate(MARK_REPEATED_ROWS) == 1
    found = Axe().run(page, context=REPEATED_ROWS_LEFT_OUT, options=COLOUR_RULES).response["violations"]
    page.close()
    assert [v["id"] for v in found] == ["color-contrast"]


def luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour (0-255 channels)."""
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def ring_contrast(page, focus: str, shown: str) -> float:
    """Focus `focus` by keyboard modality and return the lowest-quartile contrast of the pixels
    that changed around `shown` against what they were before (0 when nothing changed)."""
    import io

    import numpy
    from PIL import Image

    box = page.locator(shown).first.bounding_box()
    clip = {"x": max(box["x"] - 8, 0), "y": max(box["y"] - 8, 0), "width": box["width"] + 16, "height": box["height"] + 16}

    def shot():
        return numpy.asarray(Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")).astype(int)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    before = shot()
    page.keyboard.press("Shift")  # keyboard modality, so :focus-visible (and the theme's polyfill) apply
    page.locator(focus).first.focus()
    after = shot()
    changed = numpy.abs(after - before).sum(axis=2) > 60
    if not changed.any():
        return 0.0
    ratios = sorted(contrast(a, b) for a, b in zip(after[changed], before[changed]))
    return ratios[len(ratios) // 4]


FOCUSABLE = [  # (page, what takes focus, what shows the ring)
    ("race/", "#yours-keep", "#yours-keep"),
    ("race/", "#browser-keep", "#browser-keep"),
    ("race/", "form[data-md-component=palette] input:has(+ label:not([hidden]))",
     "form[data-md-component=palette] label:not([hidden])"),
    ("race/", ".race__controls select", ".race__controls select"),
    ("batch-size/", ".crossover-table", ".crossover-table"),
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_focus_rings_are_visible_at_three_to_one(browser, site_url, scheme):
    """Every control's focus ring, measured from pixels, changes the picture and contrasts 3:1 with what it covers."""
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    weak = {}
    for path, focus, shown in FOCUSABLE:
        page.goto(site_url + path)
        for box in READERS_BOXES:
            if shown.startswith(box):
                reach_box(page, box)
        page.locator(shown).first.scroll_into_view_if_needed()
        ratio = ring_contrast(page, focus, shown)
        if ratio < 3:
            weak[f"{path} {focus}"] = round(ratio, 2)
    page.close()
    assert not weak, weak


def test_a_secondary_button_under_the_pointer_keeps_its_text_readable_in_dark_mode(browser, site_url):
    """Hovered in the dark scheme, a secondary button's text contrasts 4.5:1 with the amber the theme fills it with."""
    import re

    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page.goto(site_url + "race/")
    button = page.locator("#race-reset")
    button.hover()
    page.wait_for_timeout(400)  # the theme's colour transition
    colours = button.evaluate("b => [getComputedStyle(b).color, getComputedStyle(b).backgroundColor]")
    page.close()
    text, fill = ([float(c) for c in re.findall(r"[\d.]+", colour)] for colour in colours)
    assert len(fill) < 4 or fill[3] > 0.9, colours  # an opaque fill, or the check compares against nothing
    assert contrast(text, fill) >= 4.5, colours
