"""Sphinx extension: the first mention of a normlib function on a page links to its API entry.

The chapters name the functions they use as inline code (```normlib.rms_norm```,
```normlib.transformer.train_grid```). After references are resolved, the first such
literal per page and object that names an object documented on the API reference page
(``book/api.md``, Sphinx autodoc) becomes a link to its entry; a re-exported name
(``normlib.rms_norm``) resolves to its defining module (``normlib.norms.rms_norm``).
Nothing in the chapters' sources changes.
"""

from __future__ import annotations

import re

from docutils import nodes

_NAME = re.compile(r"^(normlib(?:\.\w+)+)(?:\(\))?$")


def _targets(env) -> dict[str, tuple[str, str]]:
    """Documented name (and its re-exported aliases) -> (docname, anchor)."""
    import importlib

    objects = env.get_domain("py").objects
    out = {name: (entry.docname, entry.node_id) for name, entry in objects.items() if name.startswith("normlib.")}
    try:
        package = importlib.import_module("normlib")
    except ImportError:  # pragma: no cover
        return out
    for alias in getattr(package, "__all__", []):
        obj = getattr(package, alias, None)
        full = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', alias)}"
        if full in out:
            out[f"normlib.{alias}"] = out[full]
    return out


def _link_first_mentions(app, doctree, docname) -> None:
    if app.builder.format != "html" or docname.endswith("/api"):
        return
    targets = _targets(app.env)
    seen = set()
    for lit in list(doctree.findall(nodes.literal)):
        if isinstance(lit.parent, nodes.reference) or "code" in lit.get("classes", []) and lit.get("language"):
            continue
        m = _NAME.match(lit.astext().strip())
        if not m or m.group(1) not in targets:
            continue
        target = targets[m.group(1)]
        if target in seen:
            continue
        seen.add(target)
        uri = app.builder.get_relative_uri(docname, target[0]) + "#" + target[1]
        ref = nodes.reference("", "", internal=True, refuri=uri, reftitle=f"{m.group(1)} in the API reference")
        lit.replace_self(ref)
        ref.append(lit)


def setup(app):
    app.connect("doctree-resolved", _link_first_mentions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
