"""Sphinx extension: the built site carries what a reader needs to run a chapter.

At the start of an HTML build (any HTML builder) this extension writes, into ``_build/site-downloads/``
(copied into the site's ``downloads/`` when the build finishes):

- ``normlib-<version>-py3-none-any.whl``: the book's helper package, built from this
  checkout with pip (it ships ``claims.toml``, so every claim check works outside a clone);
- ``requirements-chapter.txt``: the exact pins (from ``requirements.txt``) of the
  packages of normlib's ``torch``, ``book`` and ``notebook`` extras, the smallest
  environment that runs one downloaded chapter in JupyterLab;
- ``requirements.txt``: the whole environment the book was built and tested with (the
  repository's lock file, as it is), which the execution report names.

The page ``book/download.md`` links to both and says how to install them; the first
cell of every downloaded notebook says the same (``_ext/notebook_downloads.py``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

EXTRAS = ("torch", "book", "notebook")
REQUIREMENTS_NAME = "requirements-chapter.txt"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def chapter_requirements(root: Path) -> str:
    """The text of ``requirements-chapter.txt``: the extras' packages at their exact pins."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = {}
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if m:
            pins[_norm(m.group(1))] = m.group(0)
    names = [re.match(r"[A-Za-z0-9._-]+", r).group(0) for e in EXTRAS for r in project["optional-dependencies"][e]]
    names = ["numpy"] + names
    missing = [n for n in names if _norm(n) not in pins]
    if missing:
        raise RuntimeError(f"requirements.txt pins none of {missing}: run `make requirements`")
    lines = [
        "# The smallest environment that runs one chapter of \"Normalization, re-derived\"",
        "# (the exact versions the book was built with). Install the CPU build of torch",
        "# first, then this file and the normlib wheel beside it:",
        "#   pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
        f"#   pip install -r {REQUIREMENTS_NAME} normlib-{project['version']}-py3-none-any.whl",
    ]
    return "\n".join(lines + sorted(dict.fromkeys(pins[_norm(n)] for n in names), key=str.lower)) + "\n"


def build_downloads(root: Path, out: Path) -> list[Path]:
    """Write the wheel and the requirements file into ``out/downloads``; return their paths."""
    target = out / "downloads"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    leftover = not (root / "build").exists()  # setuptools builds in the source tree
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(target), str(root)],
        check=True, cwd=str(out), stdout=subprocess.DEVNULL,
    )
    if leftover:
        shutil.rmtree(root / "build", ignore_errors=True)
    (target / REQUIREMENTS_NAME).write_text(chapter_requirements(root), encoding="utf-8")
    shutil.copyfile(root / "requirements.txt", target / "requirements.txt")
    return sorted(target.iterdir())


def _staging(app) -> Path:
    """``<build dir>/site-downloads``: the ``_build`` folder above the output folder (so the
    Chinese edition in ``_build/html/zh`` shares the English one's), else the output's parent."""
    out = Path(app.outdir)
    build = next((p for p in out.parents if p.name == "_build"), out.parent)
    return build / "site-downloads"


def _lock(app):
    """A lock on the staging folder: `make book` and `make pdf` build the two editions side
    by side, and both write (and read) the same ``site-downloads`` (and setuptools' ``build/``)."""
    from filelock import FileLock

    staging = _staging(app)
    staging.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(staging) + ".lock")


def _on_builder_inited(app) -> None:
    if app.builder.format == "html":  # not for the gettext catalogs of `make locale-update`
        with _lock(app):
            build_downloads(Path(app.confdir), _staging(app))


def _on_build_finished(app, exception) -> None:
    """Copy the downloads into the site.

    Not through ``html_extra_path``: Sphinx copies extra files only when at least one page
    was out of date, so an up-to-date rebuild (``make book`` after ``make test``) would
    leave the site without them.
    """
    if exception is not None or app.builder.format != "html":
        return
    with _lock(app):
        src = _staging(app) / "downloads"
        shutil.copytree(src, Path(app.outdir) / "downloads", dirs_exist_ok=True)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
