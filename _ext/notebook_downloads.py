"""Sphinx extension: every chapter page offers its executed notebook for download.

sphinx-book-theme's download menu offers the page's source (the jupytext ``.md``) and
"print to PDF"; it adds the executed ``.ipynb`` only when a launch service (Binder,
Colab, ...) is configured, which an offline book has not. MyST-NB writes each executed
chapter to ``_build/jupyter_execute/<page>.ipynb``, but with outputs only when it
executed the chapter in this build: a chapter served from the execution cache is
written without them (MyST-NB merges the cached outputs into a copy). This extension
merges the cached outputs into that notebook, writes it next to the page's source in
``_build/html/_sources/`` and adds an ``.ipynb`` entry to the page's download menu, so
a reader gets a notebook that opens with every output in place, without running
anything.
"""

from __future__ import annotations

from pathlib import Path

BUTTON_LABEL = "download-notebook-button"


def executed_notebook(app, pagename: str) -> Path:
    return Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"


def _with_outputs(app, source: Path) -> str:
    """The notebook's text, with the outputs of its execution merged in from the cache."""
    import nbformat
    from jupyter_cache import get_cache

    nb = nbformat.read(source, as_version=4)
    cache_path = getattr(app.env.mystnb_config, "execution_cache_path", "")
    if cache_path and Path(cache_path).is_dir():
        try:
            _, nb = get_cache(cache_path).merge_match_into_notebook(nb)
        except KeyError:
            pass  # not in the cache: the notebook was executed in this build, outputs included
    return nbformat.writes(nb)


def _add_notebook_download(app, pagename, templatename, context, doctree):
    if doctree is None or app.builder.format != "html":
        return
    source = executed_notebook(app, pagename)
    if not source.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_with_outputs(app, source), encoding="utf-8")
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        if any(b.get("label") == BUTTON_LABEL for b in group["buttons"]):
            return  # the theme already added it (a launch service is configured)
        group["buttons"].insert(
            0,
            {
                "type": "link",
                "url": f"{context['pathto']('_sources', 1)}/{pagename}.ipynb",
                "text": ".ipynb",
                "icon": "fas fa-code",
                "tooltip": "Download the executed notebook (with outputs)",
                "label": BUTTON_LABEL,
            },
        )
        return


def setup(app):
    # after sphinx-book-theme's add_header_buttons (priority 501) built the menu
    app.connect("html-page-context", _add_notebook_download, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
