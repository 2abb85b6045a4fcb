"""Sphinx extension: serve MathJax 3 from the built site, only the files the pages load.

The book must render its formulas with no network. MathJax 3.2.2's ``es5`` bundle ships
in the PyPI package ``sphinx-mathjax-offline`` (pinned in ``requirements.txt``). That
package's own extension copies the whole bundle (24 MB: every combined component, the
SVG fonts, the speech rules of 20 languages) into every site; the pages load only the
TeX-to-CHTML component, its web fonts and the TeX extensions it autoloads on demand. This
extension copies just those (about 2 MB) into ``_build/html/_static/mathjax/``, so that
``mathjax_path: mathjax/tex-chtml.js`` (``_config.yml``) resolves locally. The browser
test (``tests/test_rendered_book.py``) fails on any file a page asks for and does not
find, and on any formula left untypeset.
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

MATHJAX_VERSION = "3.2.2"
DISTRIBUTION = "sphinx-mathjax-offline"
# relative to the es5 bundle: the combined component, the CHTML fonts, the TeX extensions
# that tex-chtml.js loads when a formula uses them (\boldsymbol, \cancel, \mathtools, ...)
NEEDED = ("tex-chtml.js", "output/chtml/fonts", "input/tex/extensions")


def mathjax_bundle() -> Path:
    """The directory holding ``tex-chtml.js`` of the installed MathJax bundle."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            f"MathJax for offline math comes from the PyPI package {DISTRIBUTION}; "
            "install the pinned environment (pip install -r requirements.txt)"
        ) from exc
    es5 = Path(str(dist.locate_file("sphinx-mathjax-offline/static/mathjax")))
    if not (es5 / "tex-chtml.js").is_file():
        raise RuntimeError(f"no tex-chtml.js under {es5}: is {DISTRIBUTION} installed?")
    return es5


def copy_needed(source: Path, target: Path) -> None:
    """Copy the files of :data:`NEEDED` from ``source`` to ``target`` (same layout)."""
    for rel in NEEDED:
        src, dst = source / rel, target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def _copy_bundle(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    source = mathjax_bundle()
    stamp = target / ".bundle-source"
    signature = f"{source}\n{NEEDED}"
    if stamp.is_file() and stamp.read_text() == signature and (target / "tex-chtml.js").is_file():
        return
    if target.exists():
        shutil.rmtree(target)  # a site built with the whole bundle: keep only what is needed
    copy_needed(source, target)
    stamp.write_text(signature)


def setup(app):
    mathjax_bundle()  # fail early, with a message that says what to install
    app.connect("build-finished", _copy_bundle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
