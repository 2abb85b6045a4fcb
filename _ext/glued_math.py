"""Sphinx extension: glued values typeset as inline math, ``{gmath}`d = {{width:d}}```.

MyST does not parse inside math, so ``$d = {glue:text}`width:d`$`` shows the role's text,
not the value, and a setting typed into a formula (``$d = 128$``) drifts from the code
(the prose lint, ``tests/prose_numbers.py``, fails on it). This role writes the formula
with the glued values in it:

- ``{gmath}`d = {{width:d}}``` typesets ``d = 128``: the role's content is TeX, and each
  ``{{key:fmt}}`` is replaced by the glued value ``key`` formatted as ``{glue:text}`key:fmt```
  formats it (the format spec ends in a type character; no spec means ``s``);
- ``{gmath}`width:d``` (no ``{{…}}`` and no space) is the value alone: ``{{width:d}}``;
- ``{{other.md::key:fmt}}`` takes the value glued by another chapter, as ``{glue:text}`` does.

A value's text becomes TeX: ``1e-05`` is ``10^{-5}``, ``2.5e-04`` is ``2.5 \\times 10^{-4}``,
``8,192`` is ``8{,}192``, ``25%`` is ``25\\%``, ``inf`` is ``\\infty``, and a wording is set in
``\\text{…}``.

Where it works:

- **English HTML and the single-page (PDF) build**: the value is filled in while the
  chapter is read (from MyST-NB's glue data), or, where that data is not at hand (a key of
  another chapter), after reading, from the ``<chapter>.glue.json`` file MyST-NB writes.
- **The Chinese edition**: a translated message keeps the role unchanged
  (``tests/check_catalogs.py`` requires it); Sphinx parses the translation without the
  notebook's glue data, so the value is filled in after reading, from that edition's glue
  files (``_ext/i18n.py`` gives it its own output folder).
- **Notebook downloads**: ``_ext/notebook_downloads.py`` turns the role into ``$d = 128$``
  (:func:`render`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

from docutils import nodes

#: a glued value in the role's TeX: ``{{key:fmt}}`` or ``{{doc.md::key:fmt}}``
PLACEHOLDER = re.compile(r"\{\{\s*([^{}\s]+?)\s*\}\}")
#: a role whose whole content is one reference: ``{gmath}`width:d```
BARE_REF = re.compile(r"[^{}\s]+")
_NUMBER = re.compile(r"(?P<sign>[-+−]?)(?P<mant>\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE](?P<exp>[-+]?\d+))?(?P<pct>%?)")


def template(content: str) -> str:
    """The role's TeX with placeholders; a bare reference (no ``{{…}}``, no space) is the value alone."""
    content = content.strip()
    return "{{" + content + "}}" if BARE_REF.fullmatch(content) else content


def split_ref(ref: str) -> tuple[str, str, str]:
    """``(doc, key, fmt)`` of ``[doc::]key[:fmt]`` (``doc`` empty for this document; ``fmt`` ``s`` by default)."""
    doc, sep, rest = ref.partition("::")
    if not sep:
        doc, rest = "", ref
    key, sep, fmt = rest.rpartition(":")
    if not sep:
        key, fmt = rest, "s"
    return doc, key, fmt


def refs(content: str) -> list[tuple[str, str, str]]:
    """The ``(doc, key, fmt)`` of every glued value the role uses."""
    return [split_ref(m.group(1)) for m in PLACEHOLDER.finditer(template(content))]


def format_value(text_plain: str, fmt: str) -> str:
    """The text ``{glue:text}`key:fmt``` shows for a glued ``text/plain`` value (MyST-NB's rule)."""
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text_plain, fmt)


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
                "#": r"\#", "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\~{}"}


def latex_value(text: str) -> str:
    """A formatted value as TeX (see the module docstring)."""
    text = text.strip()
    if text.lower() in ("inf", "+inf", "-inf", "−inf"):
        return ("-" if text[0] in "-−" else "") + r"\infty"
    if text.lower() == "nan":
        return r"\mathrm{NaN}"
    m = _NUMBER.fullmatch(text)
    if not m:
        return r"\text{" + "".join(_TEX_SPECIAL.get(c, c) for c in text) + "}"
    sign = "-" if m["sign"] in "-−" and m["sign"] else ""
    mant = m["mant"].replace(",", "{,}")
    out = mant
    if m["exp"] is not None:
        exp = int(m["exp"])
        out = f"10^{{{exp}}}" if mant == "1" else f"{mant} \\times 10^{{{exp}}}"
    return sign + out + (r"\%" if m["pct"] else "")


def render(content: str, lookup: Callable[[str, str], str]) -> str:
    """The role's TeX with every glued value filled in; ``lookup(doc, key)`` gives a
    value's ``text/plain`` (raising ``KeyError`` when it is not glued)."""

    def fill(m: re.Match) -> str:
        doc, key, fmt = split_ref(m.group(1))
        return latex_value(format_value(lookup(doc, key), fmt))

    return PLACEHOLDER.sub(fill, template(content))


# ----------------------------------------------------------------------------- Sphinx


class glued_math(nodes.math):
    """A ``{gmath}`` formula whose values are filled in after reading (:class:`FillGluedMath`).

    A subclass of ``nodes.math`` so that Sphinx counts the page as having math (and loads
    MathJax); it is replaced by a plain ``nodes.math`` before any writer sees it.
    """


def _plain(data: dict) -> str:
    text = (data or {}).get("text/plain")
    if text is None:
        raise KeyError("text/plain")
    return "".join(text) if isinstance(text, list) else text


def gmath_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    document = inliner.document
    env = getattr(document.settings, "env", None)
    docs = {}
    for doc, _, _ in refs(text):
        if doc and env is not None:
            _, path = env.relfn2path(doc, env.docname)
            found = env.path2doc(path)
            if found is None:
                msg = inliner.reporter.error(f"gmath: no document {doc!r} (in {rawtext})", line=lineno)
                return [inliner.problematic(rawtext, rawtext, msg)], [msg]
            docs[doc] = found
    # the chapter's own glue data, while it is read (not there in a translated message)
    local = None
    if "nb_renderer" in document and not docs:
        local = document["nb_renderer"].renderer.nb_client.glue_data
    if local is not None:
        try:
            latex = render(text, lambda doc, key: _plain(local[key]["data"]))
        except KeyError as exc:
            msg = inliner.reporter.error(f"gmath: no glued value {exc.args[0]!r} in this chapter (in {rawtext})",
                                         line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        except Exception as exc:  # a format that does not fit the value
            msg = inliner.reporter.error(f"gmath: cannot format {rawtext}: {exc}", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        node = nodes.math(rawtext, latex)
    else:
        node = glued_math(rawtext, template(text), gmath=text, refdoc=env.docname if env else "", docs=docs)
    node.source, node.line = inliner.reporter.source, lineno
    return [node], []


def _glue_file(folder: str, docname: str) -> dict:
    parts = docname.split("/")
    path = Path(folder).joinpath(*parts[:-1], f"{parts[-1]}.glue.json")
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def _fill(app, doctree, docname) -> None:
    """Replace every pending ``{gmath}`` formula by its math (on ``doctree-resolved``)."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    config = getattr(app.env, "mystnb_config", None)
    folder = getattr(config, "output_folder", None)
    cache: dict = {}
    for node in list(doctree.findall(glued_math)):
        text, refdoc, docs = node["gmath"], node["refdoc"], node.get("docs", {})

        def lookup(doc, key):
            target = docs.get(doc, refdoc) if doc else refdoc
            if target not in cache:
                cache[target] = _glue_file(folder, target) if folder else {}
            return _plain(cache[target][key]["data"])

        try:
            latex = render(text, lookup)
        except Exception as exc:
            what = f"no glued value {exc.args[0]!r}" if isinstance(exc, KeyError) else f"cannot format it: {exc}"
            logger.warning(f"gmath: {what} for {{gmath}}`{text}` [gmath]", location=node, type="gmath")
            node.replace_self(nodes.literal(text, text))
            continue
        math = nodes.math(node.rawsource, latex)
        math.source, math.line = node.source, node.line
        node.replace_self(math)


def setup(app):
    app.add_role("gmath", gmath_role)
    app.add_node(glued_math)
    # before the writers and before _ext/i18n.py's doctree-resolved handler (priority 500)
    app.connect("doctree-resolved", _fill, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
