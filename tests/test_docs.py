"""Tests of the Markdown sources and the built pages: no hand-typed measurements, no broken links."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import yaml

from conftest import ROOT

# A number with the unit of something measured: times, ratios, bandwidths, rates. A shape (512×512)
# is not a ratio, and "1990s" is not seconds (seconds need a space: "12 s").
MEASURED = re.compile(
    r"(?<![\w.])\d[\d.,]*(?:e[+-]?\d+)?"
    r"(?:\s*(?:ms|µs|us|ns|[kMGTP]?B/s|[kMGTP]?FLOP/s|[kMGTP]?FLOPS|samples/s)(?![\w/])"
    r"|\s+(?:s|min)(?![\w/])|\s?[×x](?![\w\d]|\s*\d))")
# A label that covers the numbers before it in its sentence, and every number inside it.
LABEL = re.compile(r"\((?:published|source|datasheet)[^)]*\)|\[\^[^\]]+\]", re.I)
# A bare word that labels only the number right after it: "the published 5 µs".
LABEL_WORD = re.compile(r"\b(?:published|datasheet)\b(?:\W+\w+){0,2}\W*$", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_(])")


def prose_paragraphs(path: Path):
    """(first line number, text) of each paragraph outside fenced code blocks, lines joined."""
    paragraph, start, fence = [], 0, None
    for number, line in enumerate(path.read_text().splitlines() + [""], 1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is not None:
            continue
        if stripped:
            start = start or number
            paragraph.append(CODE_SPAN.sub("", stripped))
        elif paragraph:
            yield start, " ".join(paragraph)
            paragraph, start = [], 0


CODE_SPAN = re.compile(r"(`+).+?\1")


def unlabelled(sentence: str) -> list[str]:
    """The measured-looking numbers of one sentence that no label covers."""
    labels = [m.span() for m in LABEL.finditer(sentence)]
    hits = []
    for match in MEASURED.finditer(sentence):
        inside = any(a <= match.start() < b for a, b in labels)
        before_a_label = any(a >= match.end() for a, _ in labels)
        named = LABEL_WORD.search(sentence[:match.start()])
        if not (inside or before_a_label or named):
            hits.append(match.group(0).strip())
    return hits


def unlabelled_measurements(path: Path) -> list[str]:
    return [f"{path.name}:{n}: {hit}" for n, text in prose_paragraphs(path)
            for sentence in SENTENCE_END.split(text) for hit in unlabelled(sentence)]


def test_no_measured_number_is_typed_in_prose():
    """No Markdown page states a time, ratio, bandwidth or rate outside a labelled published figure."""
    offenders = [hit for page in sorted((ROOT / "docs").rglob("*.md")) for hit in unlabelled_measurements(page)]
    assert offenders == []


TYPED = ["a step takes 12 s.", "the GPU is 40× faster.", "HBM moves 4.8 TB/s.", "it reached 1.2 TFLOPS.",
         "a step takes 12.3 ms, unlike the published 5 µs.", "it runs 2.5x faster.", "about 350 GB/s here.",
         "1e-3 s per call."]
LABELLED = ["PCIe moves 32 GB/s *(published: PCI-SIG)*.", "67 TFLOP/s over 4.8 TB/s *(published: NVIDIA)*.",
            "the published 5 µs.", "a 512×512 matrix.", "in the 1990s.", "*(published: datasheet: 989 vs 67 TFLOP/s)*"]


def test_scanner_catches_every_form_of_a_typed_measurement(tmp_path):
    """Seconds, ratios, TB/s, TFLOPS and a number beside a labelled one are caught; labelled ones, code,
    shapes and decades are not."""
    page = tmp_path / "page.md"
    page.write_text("\n\n".join(TYPED + LABELLED) + "\n```\nprint('4 ms')\n```\nIt takes `3 ms` in code.\n")
    hits = unlabelled_measurements(page)
    assert [h.split(": ", 1)[1] for h in hits] == ["12 s", "40×", "4.8 TB/s", "1.2 TFLOPS", "12.3 ms", "2.5x",
                                                  "350 GB/s", "1e-3 s"]


def nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_navigation():
    """Every Markdown page is reachable from the navigation, and the nav names no missing page."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda *a: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    in_nav = set(nav_pages(config["nav"]))
    docs = ROOT / "docs"
    on_disk = {str(p.relative_to(docs)) for p in [*docs.rglob("*.md"), *docs.glob("lab/*.py")]}
    assert in_nav == on_disk


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and tag in {"a", "link", "script", "img"}:
                self.links.append(attrs[key])


SUB_PATH = "/sub/"  # a project site on a forge is served under its name, not at the host's root


def test_no_broken_internal_links_when_served_under_a_sub_path(built_site):
    """Every internal href/src of every page, resolved as a browser would with the site served under /sub/
    (as a project site on a forge is), stays under /sub/, reaches a file, and every #fragment an id."""
    pages = {p: Links() for p in built_site.rglob("*.html")}
    for path, parser in pages.items():
        parser.feed(path.read_text())
    broken = []
    for path, parser in pages.items():
        # A server answers any missing path with 404.html, so MkDocs writes its links from the site's root
        # (site_url, which a project site sets to its sub-path): it is checked as served at the root.
        root = "/" if path.name == "404.html" else SUB_PATH
        base = root + str(path.relative_to(built_site))
        for link in parser.links:
            url = urlparse(urljoin(base, link))
            if url.scheme or url.netloc:
                continue
            if not url.path.startswith(root):
                broken.append(f"{base} -> {link} (leaves {root})")
                continue
            target = built_site / url.path[len(root):]
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{base} -> {link}")
            elif url.fragment and target.suffix == ".html" and url.fragment not in pages.get(target, Links()).ids:
                broken.append(f"{base} -> {link} (no such id)")
    assert broken == []


GENERAL_TRUTHS = {  # page: (what a page must no longer say, what it says instead)
    "batch-size.md": ("PyTorch's name for an NVIDIA GPU", "ROCm builds"),
    "cheatsheet.md": ("non_blocking=True)`?\n3.", "second CUDA stream"),
    "limits.md": ("activations, not weights", "what grows with the batch is activations"),
    "mixed-precision.md": ("32-bit\nmaster copy of the weights", "keeps no lasting 16-bit"),
    "worked-examples.md": ("so does\n  decoding", "Decoding images is CPU work too"),
    "recap.md": ("Why does a small network's GPU step time",
                 "The site's [GPU estimate](cost-model.md) assumes the same flat step"),
}


@pytest.mark.parametrize("page", sorted(GENERAL_TRUTHS))
def test_general_truths_say_only_what_holds(page):
    """A general sentence holds on any hardware: CUDA is not only NVIDIA's in PyTorch, pinned copies overlap only on a
    second stream, weights dominate large models, autocast keeps no master copy, decoding is no synchronisation."""
    wrong, right = GENERAL_TRUTHS[page]
    text = (ROOT / "docs" / page).read_text()
    assert wrong not in text and right in text
    if page == "batch-size.md":  # the GPU's flat time is said of a GPU, before the CPU-only chart
        assert "On a GPU, multiplying 256 inputs" in text
