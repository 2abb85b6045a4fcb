"""Sphinx extension: a fix the theme cannot make, so that every page loads with no console error.

- **Duplicated inline scripts.** sphinx-thebe and sphinx-togglebutton add their inline
  configuration scripts after the HTML builder was created, and with Sphinx 7.4 such
  scripts reach the page twice. A repeated ``const THEBE_JS_URL = ...`` is a
  SyntaxError in the browser. Exact duplicates (same file or body, same attributes)
  are dropped from each page's script list; the order of first appearance is kept.

(The light color mode is the theme's own ``html_context: default_mode: light`` in
``_config.yml``.)
"""

from __future__ import annotations


def _key(script) -> tuple:
    """Identity of a script tag: its file (None and "" both mean inline) and attributes."""
    if not hasattr(script, "attributes"):
        return (str(script), ())  # an old-style plain string
    filename = str(script.filename) if script.filename else ""
    return (filename, tuple(sorted((k, str(v)) for k, v in script.attributes.items())))


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for s in scripts:
        k = _key(s)
        if k not in seen:
            seen.add(k)
            kept.append(s)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
