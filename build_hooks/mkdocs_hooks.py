"""MkDocs hooks: make sure results exist before pages render, fill facts, ship the data.

Registered in mkdocs.yml under `hooks:`. Each hook is small and raises PluginError with
the file, field, page or marker at fault, which stops even a non-strict build.
"""

from __future__ import annotations

import logging
import re

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from build_hooks import facts, measure, site_data, store

log = logging.getLogger("mkdocs.crossover")
FACT_MARKER = re.compile(r"\{\{\s*fact:\s*([A-Za-z0-9_]+)\s*\}\}")
QUICK_BANNER = ('!!! warning "Quick mode: not representative"\n'
                "    This build measured tiny sizes only (`CROSSOVER_QUICK=1`, used by the tests). "
                "Its numbers are real but say little about this hardware.\n\n")


def on_config(config):
    try:
        site_data.prepare(log=log.warning)
    except (store.ResultsError, measure.MeasurementError) as exc:
        raise PluginError(f"crossover: {exc}") from exc
    return config


def on_files(files, config):
    files.append(File.generated(config, "data/results.json",
                                content=site_data.current().to_json()))
    return files


def on_page_markdown(markdown, page, config, files):
    data = site_data.current()

    def fill(match: re.Match) -> str:
        name = match.group(1)
        try:
            return facts.render(name, data)
        except (KeyError, facts.MissingData) as exc:
            raise PluginError(f"crossover: {page.file.src_uri}: marker "
                              f"'{match.group(0)}': {exc}") from exc

    markdown = FACT_MARKER.sub(fill, markdown)
    return (QUICK_BANNER + markdown) if data.quick else markdown
