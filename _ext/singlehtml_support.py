"""Sphinx extension: let the single-page HTML builder render every custom node.

``make pdf`` prints the book's single-page HTML (``--builder singlehtml``) with
headless Chromium. Some extensions register their HTML visitors under the builder
name ``html`` only (sphinx-proof's theorem boxes, for instance), while others register
under ``singlehtml`` too; Sphinx then looks up ``singlehtml`` alone and the proof boxes
have no visitor. This extension copies the ``html`` visitors the ``singlehtml`` table
lacks, so both builders render the same nodes.
"""

from __future__ import annotations


def _share_html_visitors(app) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for name, pair in handlers.get("html", {}).items():
        single.setdefault(name, pair)


def setup(app):
    app.connect("builder-inited", _share_html_visitors)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
