"""Sphinx extension: re-execute every chapter when normlib (or the environment) changes.

MyST-NB's execution cache hashes only the cells of a notebook, and Sphinx re-reads
only documents whose source changed. A change to ``normlib`` (its code or its claims
registry) or to ``requirements.txt`` would otherwise be hidden behind a stale cache.
This extension fingerprints those files. Two stamps carry the fingerprint:

- the execution cache carries the fingerprint it was filled with
  (``_build/.jupyter_cache`` + ``normlib-fingerprint.txt``); a cache with another
  fingerprint, or none, is emptied before use, so no stale output is ever shown;
- the doctree directory carries the fingerprint of the last successful build; when
  it differs, every document is marked outdated, so all chapters are re-read (and
  re-executed unless the cache already holds executions made with this fingerprint).

``make test`` fills the same cache from nbval's runs (``tests/conftest.py``), using
:func:`ensure_cache_matches` before it writes, so ``make book`` after ``make test``
re-uses those executions instead of running every chapter a second time.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

FINGERPRINT_NAME = "normlib-fingerprint.txt"
CACHE_STAMP_NAME = "normlib-fingerprint.txt"


def fingerprint(root: Path) -> str:
    """SHA-256 over normlib's sources, its registry and the pinned requirements."""
    h = hashlib.sha256()
    files = sorted((root / "normlib").rglob("*.py")) + sorted((root / "normlib").rglob("*.toml"))
    files += [root / "requirements.txt", root / "pyproject.toml"]
    for f in files:
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(root)).encode())
            h.update(b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def ensure_cache_matches(root: Path, cache: Path) -> bool:
    """Empty ``cache`` unless it was filled with the current fingerprint; stamp it.

    Returns True when the cache was emptied (or created).
    """
    current = fingerprint(root)
    stamp = cache / CACHE_STAMP_NAME
    if stamp.is_file() and stamp.read_text().strip() == current:
        return False
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    stamp.write_text(current + "\n")
    return True


def store_executed_notebook(root: Path, cache: Path, path: Path, notebook, outputs: list, seconds: float) -> None:
    """Put a notebook executed elsewhere (nbval, in ``make test``) into the execution cache.

    ``outputs`` holds, for each code cell in order, the outputs recorded when it ran.
    jupyter-cache hashes the notebook exactly as MyST-NB does (the code cells' sources
    and metadata), so the book build finds it and does not execute the chapter again.
    The cache is checked against the current fingerprint first, under a file lock
    (pytest-xdist workers may write at the same time).
    """
    import copy

    import nbformat
    from filelock import FileLock
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    nb = copy.deepcopy(notebook)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if len(code) != len(outputs):
        raise ValueError(f"{Path(path).name}: {len(code)} code cells but {len(outputs)} recorded outputs")
    for n, (cell, outs) in enumerate(zip(code, outputs), start=1):
        cell.outputs = [nbformat.from_dict(dict(o)) for o in outs]
        cell.execution_count = n
        for o in cell.outputs:
            if o.output_type == "execute_result":
                o.execution_count = n
    nbformat.validate(nb)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache) + ".lock"):
        ensure_cache_matches(root, cache)
        get_cache(str(cache)).cache_notebook_bundle(
            CacheBundleIn(nb, str(path), data={"execution_seconds": seconds, "executed_by": "nbval"}),
            check_validity=False,
            overwrite=True,
        )


def _stamp_path(app) -> Path:
    return Path(app.doctreedir) / FINGERPRINT_NAME


def _on_builder_inited(app) -> None:
    root = Path(app.confdir)
    current = fingerprint(root)
    stamp = _stamp_path(app)
    previous = stamp.read_text().strip() if stamp.is_file() else None
    app.env.normlib_fingerprint = current
    app.env.normlib_changed = previous != current
    cache = app.env.mystnb_config.execution_cache_path
    cache = Path(cache) if cache else Path(app.outdir).parent / ".jupyter_cache"
    if ensure_cache_matches(root, cache):
        from sphinx.util import logging

        logging.getLogger(__name__).info(
            "execution cache made with another normlib (or none): cleared, chapters will run"
        )


def _on_env_get_outdated(app, env, added, changed, removed):
    if getattr(env, "normlib_changed", False):
        return sorted(set(env.found_docs) - set(added) - set(changed))
    return []


def _on_build_finished(app, exception) -> None:
    if exception is None and getattr(app.env, "normlib_fingerprint", None):
        stamp = _stamp_path(app)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(app.env.normlib_fingerprint + "\n")


def setup(app):
    import os

    # the chapters' kernels inherit this environment: no code path may reach a model hub
    # (the chapters that use transformers build their models from configurations)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # run after myst-nb's own builder-inited handler, which sets mystnb_config
    app.connect("builder-inited", _on_builder_inited, priority=900)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
