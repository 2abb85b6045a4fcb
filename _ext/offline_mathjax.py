"""Sphinx extension: serve MathJax 3 from the built site, installed from PyPI.

The book must render its formulas with no network. MathJax 3.2.2 (its ``es5``
bundle) ships inside the PyPI package ``django-static-mathjax`` (pinned in
``requirements.txt``; it is a plain data package and does not need Django). This
extension copies that bundle into ``_build/html/_static/mathjax/`` so that
``mathjax_path: mathjax/tex-chtml.js`` (``_config.yml``) resolves locally.
Python and make are all a fresh machine needs: no npm.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

MATHJAX_VERSION = "3.2.2"


def mathjax_bundle() -> Path:
    """The directory holding ``tex-chtml.js`` of the installed MathJax bundle."""
    try:
        root = resources.files("mathjax")
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "MathJax for offline math comes from the PyPI package django-static-mathjax; "
            "install the pinned environment (pip install -r requirements.txt)"
        ) from exc
    es5 = Path(str(root)) / "static" / "mathjax" / "es5"
    if not (es5 / "tex-chtml.js").is_file():
        raise RuntimeError(f"no tex-chtml.js under {es5}: is django-static-mathjax {MATHJAX_VERSION} installed?")
    return es5


def _copy_bundle(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    stamp = target / ".bundle-source"
    source = mathjax_bundle()
    if stamp.is_file() and stamp.read_text() == str(source) and (target / "tex-chtml.js").is_file():
        return
    shutil.copytree(source, target, dirs_exist_ok=True)
    stamp.write_text(str(source))


def setup(app):
    mathjax_bundle()  # fail early, with a message that says what to install
    app.connect("build-finished", _copy_bundle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
