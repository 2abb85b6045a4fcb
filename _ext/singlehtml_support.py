"""Sphinx extension: let the single-page HTML builder render every custom node.

``make pdf`` prints the book's single-page HTML (``--builder singlehtml``) with
headless Chromium. Some extensions register their HTML visitors under the builder
name ``html`` only (sphinx-proof's theorem boxes, for instance), while others register
under ``singlehtml`` too; Sphinx then looks up ``singlehtml`` alone and the proof boxes
have no visitor. This extension copies the ``html`` visitors the ``singlehtml`` table
lacks, so both builders render the same nodes.

The theme's layout loads ``searchindex.js`` on every page, but the single-page builder
writes no search index; the missing file is a failed request that the PDF printer
(rightly) refuses. An empty ``searchindex.js`` is written in its place: the printed book
has no search box to feed.
"""

from __future__ import annotations

from pathlib import Path


def _share_html_visitors(app) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for name, pair in handlers.get("html", {}).items():
        single.setdefault(name, pair)


def _empty_search_index(app, exception) -> None:
    if exception is not None or app.builder.name != "singlehtml":
        return
    index = Path(app.outdir) / "searchindex.js"
    if not index.exists():
        index.write_text("/* the single-page (PDF) edition has no search index */\n", encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _share_html_visitors)
    app.connect("build-finished", _empty_search_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
