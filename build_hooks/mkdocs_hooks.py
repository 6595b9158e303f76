"""MkDocs hooks: the little that needs MkDocs itself.

Prepare the data before pages render (measuring what is missing, so `mkdocs serve`
works alone), ship it as data/results.json, key the lab notebook's cache by machine and
name the page of a failing exec block. Everything a page shows is filled by the
Markdown extension `build_hooks.markers`, which works without MkDocs.

Registered in mkdocs.yml under `hooks:`. Each hook is small and raises PluginError with
the file or field at fault, which stops even a non-strict build.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from build_hooks import (
    background,
    code_on_demand,
    code_view,
    deferred,
    digests,
    experiments,
    measure,
    notebook_run,
    post_html,
    render,
    site_data,
    store,
    untrusted,
    view_cache,
)
from build_hooks import config as crossover_config
from build_hooks import page as page_api

log = logging.getLogger("mkdocs.crossover")


class _NameThePage(logging.Filter):
    """markdown-exec names a failing block by id; add the page it sits on."""

    page: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self.page and isinstance(record.msg, str) and "exited with errors" in record.msg:
            record.msg = record.msg.replace("exited with errors", f"exited with errors on page {self.page}", 1)
        return True


_page_names = _NameThePage()
# Where markdown-exec (through MkDocs' plugin loggers) reports a failing block.
EXEC_LOGGERS = ["mkdocs.plugins.markdown_exec._internal.formatters.base", "mkdocs.plugins.markdown_exec"]


def on_startup(command, dirty):
    """`mkdocs serve` answers at once and measures beside the server (background); a build measures first."""
    site_data.serving = command == "serve"


def on_serve(server, config, builder):
    """Rebuild when the background measurement finishes an experiment: its progress file changes."""
    folder = background.progress_file(crossover_config.settings()).parent
    folder.mkdir(parents=True, exist_ok=True)
    server.watch(str(folder), recursive=False)
    return server


def on_config(config):
    deferred.enable()  # figures and code join each page after search has indexed it (on_post_page)
    # A snippet added under a running serve is an experiment from this build on; an edited view is imported
    # again before this build renders (every view, when the experiments changed).
    page_api.load_views(everything=experiments.refresh())
    view_cache.new_build()
    for name in EXEC_LOGGERS:
        exec_logger = logging.getLogger(name)
        if _page_names not in exec_logger.filters:
            exec_logger.addFilter(_page_names)
    try:
        # Recovering from a stale or corrupt host cache is routine, not a warning that
        # would fail a --strict build once: it is logged at INFO.
        block_timeout()  # a bad CROSSOVER_BLOCK_TIMEOUT stops the build before it measures
        data = site_data.prepare(log=log.info)
    except (store.ResultsError, measure.MeasurementError, crossover_config.SettingError) as exc:
        raise PluginError(untrusted.terminal(f"crossover: {exc}")) from exc
    _isolate_notebook_runs(config, data)
    return config


def _isolate_notebook_runs(config, data) -> None:
    """Run the lab notebook once per machine, library versions and mode, like a measurement.

    mkdocs-jupyter caches an executed notebook by its source alone; keying its cache folder
    by the host's environment key keeps quick-mode or other-hardware outputs out of a build.
    """
    jupyter = config.plugins.get("mkdocs-jupyter")
    host = data.host
    if jupyter is None:
        return
    # Under `mkdocs serve` while this machine is still being measured, the notebook waits too: running it
    # would hold up the first page and share the cores with the measurement. It runs once the host is done.
    measuring = site_data.serving and (host is None or background.read(crossover_config.settings()) is not None)
    jupyter.config["execute"] = not measuring
    if host is None:
        return
    folder = crossover_config.settings().cache_dir / "notebook" / host.doc["environment_key"]
    jupyter.config["cache_dir"] = str(folder)
    # The notebook writes its results file here instead of next to the page source.
    os.environ["CROSSOVER_LAB_OUTPUT"] = str(folder / "results")


def on_pre_page(page, config, files):
    """The lab notebook is executed in a child process of its own before mkdocs-jupyter renders it from
    the cache (notebook_run says why)."""
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None or not jupyter.config["execute"] or not jupyter.should_include(page.file):
        return page
    try:
        notebook_run.fill(jupyter.config, page.file.abs_src_path, block_timeout(), log=log.info)
    except notebook_run.NotebookError as exc:
        raise PluginError(untrusted.terminal(f"crossover: {exc}")) from exc
    return page


def on_files(files, config):
    files.append(File.generated(config, "data/results.json",
                                content=site_data.current().to_json()))
    # The build's own schema, for the race's "Add your machine" to validate a reader's file with.
    files.append(File.generated(config, "data/results.schema.json", content=store.SCHEMA_PATH.read_text()))
    notebook = os.path.join(config["docs_dir"], "lab", "crossover_lab.py")
    if os.path.exists(notebook):  # a one-page test site has none
        files.append(File.generated(config, "lab/crossover_lab.ipynb", content=_notebook_download(notebook)))
    return files


def _notebook_download(source: str) -> str:
    """The lab notebook as .ipynb (readers expect one for Jupyter or Colab), from its jupytext source,
    converted once per version of the source (jupytext's import alone is a fifth of a warm build)."""
    with open(source, encoding="utf-8") as handle:
        text = handle.read()
    text = for_download(text)
    cached = crossover_config.settings().cache_dir / "notebook" / f"{digests.digest(text.encode())}.ipynb"
    stored = digests.load_entry(cached)
    if stored is not None:
        return stored
    import jupytext

    notebook = jupytext.writes(jupytext.reads(text, fmt="py:percent"), fmt="ipynb")
    digests.save_entry(cached, notebook)
    return notebook


_SITE_ONLY = re.compile(r"^# <!-- site only -->\n.*?^# <!-- end site only -->\n", re.M | re.S)
_RELATIVE_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#)[^)]*\)")


def for_download(source: str) -> str:
    """The lab's source as a downloaded notebook should read: without what only makes sense on the site's page
    (between `<!-- site only -->` marks), and with the site's relative links as their text, which Jupyter and
    Colab could not follow."""
    text = _SITE_ONLY.sub("", source)
    return "\n".join(_RELATIVE_LINK.sub(r"\1", line) if line.startswith("#") else line for line in text.split("\n"))


class PageTimeout(Exception):
    """A page's exec blocks or sections did not finish within CROSSOVER_BLOCK_TIMEOUT."""


def on_page_markdown(markdown, page, config, files):
    _page_names.page = page.file.src_uri  # exec blocks of this page run next
    _start_deadline(page.file.src_uri)
    if page.file.src_uri == MEASUREMENTS_PAGE:
        markdown = with_every_experiment(markdown)
    return markdown


MEASUREMENTS_PAGE = "measurements.md"


def with_every_experiment(markdown: str) -> str:
    """"All measurements" with a heading and table for every experiment, listed on the page or not.

    A new experiment needs only its snippet, its view and one line on a lesson page: its
    raw table joins this page by itself, before the provenance.
    """
    from build_hooks import experiments

    listed = set(re.findall(r"\{\{\s*section:\s*measurements_([a-z0-9_]+)\s*\}\}", markdown))
    missing = [name for name in experiments.REGISTRY if name not in listed]
    added = "".join(f"## {name.replace('_', ' ').capitalize()}\n\n{{{{ section: measurements_{name} }}}}\n\n"
                    for name in missing)
    head, marker, tail = markdown.partition("## Provenance")
    return head + added + marker + tail


def on_page_content(html, page, config, files):
    _stop_deadline()
    html = render.site_root_links(html, page.url.count("/"))
    return deferred.code_blocks(html)  # before the search plugin reads the page (on_page_context)


def block_timeout() -> float:
    return crossover_config.seconds("CROSSOVER_BLOCK_TIMEOUT", 600)


def _start_deadline(page: str) -> None:
    """Interrupt a page whose blocks never return: an endless loop must not hang the build."""
    if threading.current_thread() is not threading.main_thread():
        return
    seconds = block_timeout()

    def expire(signum, frame):
        raise PageTimeout(f"{page} took more than {seconds:g} s to render "
                          "(CROSSOVER_BLOCK_TIMEOUT): an exec block or section never returned")

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _stop_deadline() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)


def on_post_page(output, page, config):
    """Untrusted text that reached the table of contents or the title is shown as text too;
    then the theme's and plugins' HTML gets its accessibility and weight fixes, and the source
    listings of its "Code behind" blocks move to files of their own (code_on_demand)."""
    depth = page.url.count("/")
    output = code_view.measurements_once(render.provenance_once(untrusted.restore(deferred.restore(output))))
    output = render.site_root_links(post_html.fix(output, depth=depth), depth)
    return code_on_demand.extract(output, Path(config["site_dir"]), "../" * depth)


def on_post_build(config):
    """Publish the site's own stylesheets and scripts without their comments (post_html.slim_css, slim_js); drop
    rendered views no recent build used (view_cache), so the cache does not grow forever."""
    for sheet in (Path(config["site_dir"]) / "stylesheets").glob("*.css"):
        sheet.write_text(post_html.slim_css(sheet.read_text(encoding="utf-8")), encoding="utf-8")
    for script in (Path(config["site_dir"]) / "javascripts").glob("*.js"):  # the site's own; vendor/ is left alone
        script.write_text(post_html.slim_js(script.read_text(encoding="utf-8")), encoding="utf-8")
    view_cache.prune()
