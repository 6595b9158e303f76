"""The built lab notebook page as a reader meets it: one progress line, a readable plot, no build leftovers, two downloads."""

import json
import re

import pytest
from test_site_accessibility import contrast, ring_contrast

from build_hooks import plots

PAGE = "lab/crossover_lab/"


@pytest.fixture
def lab(browser, site_url):
    """The lab page at phone width (375 px, so 343 px of content) in light mode."""
    page = browser.new_page(viewport={"width": 375, "height": 800}, is_mobile=True)
    page.goto(site_url + PAGE)
    yield page
    page.close()


def rgb(css: str, over: list[float] | None = None) -> list[float]:
    """A computed CSS colour as sRGB channels, composited over `over` when it is translucent."""
    channels = [float(c) for c in re.findall(r"[\d.]+", css)]
    alpha = channels[3] if len(channels) > 3 else 1.0
    return [alpha * c + (1 - alpha) * b for c, b in zip(channels[:3], over or [255.0] * 3)]


def page_background(page) -> list[float]:
    return rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_progress_is_one_output_and_nothing_goes_to_stderr(lab):
    """The timing loop's progress is a single output line, finished, and no cell leaves stderr output on the page."""
    outputs = lab.locator(".jp-OutputArea-output").all_inner_texts()
    progress = [text for text in outputs if "timing epochs" in text]
    assert len(progress) == 1 and "done in" in progress[0] and len(progress[0].strip().splitlines()) == 1
    assert lab.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0


def test_plot_is_inline_svg_described_in_words_in_the_sites_palette(lab):
    """The plot is an inline SVG (no bitmap) named and described by its own data, drawn only in the site's Okabe-Ito colours."""
    from playwright.sync_api import expect

    assert lab.locator(".jp-OutputArea-output img").count() == 0
    svg = lab.locator("svg.lab-plot[role=img]")
    expect(svg).to_have_accessible_name(re.compile(r"epoch of \d+ rows"))
    expect(svg).to_have_accessible_description(re.compile(r"seconds to train one epoch.*batch size.*CPU at width \d+: "
                                                          r"[\d.e-]+ s at batch 1"))
    assert "Plot drawn by the code cell" not in lab.content()  # the generic alt text of a bitmap
    colours = {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", svg.evaluate("s => s.outerHTML"))}
    assert colours and colours <= {c.lower() for c in plots.PALETTE}  # no red/green pair from matplotlib's default cycle


@pytest.mark.parametrize("width, smallest", [(343, 10), (375, 11)])
def test_plot_fits_a_phone_with_readable_text(browser, site_url, width, smallest):
    """On a phone the plot shrinks to the content width, and its smallest text stays at least 10-11 px."""
    page = browser.new_page(viewport={"width": width, "height": 800}, is_mobile=True)
    page.goto(site_url + PAGE)
    sizes = page.locator("svg.lab-plot").evaluate("""s => { const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        return {width: s.getBoundingClientRect().width, right: s.getBoundingClientRect().right,
                font: Math.min(...[...s.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * k))}; }""")
    page.close()
    assert sizes["right"] <= width and sizes["width"] > 0.8 * (width - 32)
    assert sizes["font"] >= smallest


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plot_text_takes_the_pages_text_colour(browser, site_url, scheme):
    """The plot's text and axes are drawn in currentColor, so they contrast 4.5:1 with the page in light and dark mode."""
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page.goto(site_url + PAGE)
    svg = page.locator("svg.lab-plot")
    assert "fill: currentColor" in svg.evaluate("s => s.outerHTML")
    background = page_background(page)
    ink = rgb(svg.evaluate("s => getComputedStyle(s).color"), over=background)
    page.close()
    assert contrast(ink, background) >= 4.5


def test_no_output_names_a_build_setting(lab):
    """No output a reader sees mentions the build's environment variables (CROSSOVER_...) or its cache folder."""
    outputs = "\n".join(lab.locator(".jp-OutputArea-output").all_inner_texts())
    assert "Your results file is" in outputs
    assert "CROSSOVER_" not in outputs and "/cache/" not in outputs and "/tmp" not in outputs


def test_header_downloads_the_ipynb_with_the_py_beside_it(lab, built_site, site_url):
    """The header's first download is a valid nbformat-4 .ipynb the site ships; the jupytext .py is the second, each named."""
    links = lab.locator(".lab-downloads a[download]")
    assert links.count() == 2
    ipynb, py = links.nth(0), links.nth(1)
    assert re.search(r"\.ipynb.*Jupyter", ipynb.get_attribute("aria-label"))
    assert re.search(r"Python script, \.py", py.get_attribute("aria-label"))
    ipynb_url = ipynb.evaluate("a => a.href")
    py_url = py.evaluate("a => a.href")
    assert ipynb_url.endswith(".ipynb") and py_url.endswith(".py")
    notebook = json.loads((built_site / ipynb_url.removeprefix(site_url)).read_text())
    assert notebook["nbformat"] == 4 and notebook["cells"]
    assert (built_site / py_url.removeprefix(site_url)).read_text().startswith("# ---\n# jupyter:")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_header_downloads_show_focus_and_contrast(browser, site_url, scheme):
    """Both download links show a focus ring at 3:1 against what it covers, and their text contrasts 4.5:1, light and dark."""
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page.goto(site_url + PAGE)
    background = page_background(page)
    for n in range(2):
        link = f".lab-downloads a >> nth={n}"
        assert ring_contrast(page, link, link) >= 3, n
        text = rgb(page.locator(link).evaluate("a => getComputedStyle(a).color"), over=background)
        assert contrast(text, background) >= 4.5, n
    page.close()
