"""Tests of the Markdown sources and the built pages: no hand-typed measurements, no broken links."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import yaml

from conftest import ROOT

MEASURED = re.compile(r"\d[\d.,]*\s*(ms|µs|us|ns|GB/s|MB/s|GFLOP/s|TFLOP/s|PFLOP/s|samples/s)\b", re.I)
LABELLED = re.compile(r"publish|datasheet|source:|\[\^", re.I)


def prose_lines(path: Path):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is None:
            yield number, line


def unlabelled_measurements(path: Path) -> list[str]:
    return [f"{path.name}:{n}: {line.strip()}" for n, line in prose_lines(path)
            if MEASURED.search(line) and not LABELLED.search(line)]


def test_no_measured_number_is_typed_in_prose():
    """No Markdown page states a time, bandwidth or rate outside a labelled published figure."""
    offenders = [hit for page in sorted((ROOT / "docs").rglob("*.md")) for hit in unlabelled_measurements(page)]
    assert offenders == []


def test_scanner_catches_a_typed_measurement(tmp_path):
    """The scanner flags '12.3 ms' in prose and accepts it inside code or a labelled quotation."""
    page = tmp_path / "page.md"
    page.write_text("On this CPU a step takes 12.3 ms.\n```\nprint('4 ms')\n```\n"
                    "PCIe moves 32 GB/s *(published: PCI-SIG)*.\n")
    assert unlabelled_measurements(page) == ["page.md:1: On this CPU a step takes 12.3 ms."]


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


def test_no_broken_internal_links(built_site):
    """Every internal href/src in the built site resolves to a file, and every #fragment to an id."""
    pages = {p: Links() for p in built_site.rglob("*.html")}
    for path, parser in pages.items():
        parser.feed(path.read_text())
    broken = []
    for path, parser in pages.items():
        base = "/" + str(path.relative_to(built_site))
        for link in parser.links:
            url = urlparse(urljoin(base, link))
            if url.scheme or url.netloc:
                continue
            target = built_site / url.path.lstrip("/")
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{base} -> {link}")
            elif url.fragment and target.suffix == ".html" and url.fragment not in pages.get(target, Links()).ids:
                broken.append(f"{base} -> {link} (no such id)")
    assert broken == []
