"""Sphinx extension: re-execute every chapter when normlib (or the environment) changes.

MyST-NB's execution cache hashes only the cells of a notebook, and Sphinx re-reads
only documents whose source changed. A change to ``normlib`` (its code or its claims
registry) or to ``requirements.txt`` would otherwise be hidden behind a stale cache.
This extension fingerprints those files; when the fingerprint differs from the one
of the last successful build, it empties the execution cache and marks every
document outdated, so all chapters run again.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

FINGERPRINT_NAME = "normlib-fingerprint.txt"


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


def _stamp_path(app) -> Path:
    return Path(app.doctreedir) / FINGERPRINT_NAME


def _on_builder_inited(app) -> None:
    root = Path(app.confdir)
    current = fingerprint(root)
    stamp = _stamp_path(app)
    previous = stamp.read_text().strip() if stamp.is_file() else None
    app.env.normlib_fingerprint = current
    app.env.normlib_changed = previous != current
    # a missing stamp (first build, or _build/.doctrees deleted) with a cache left
    # over counts as a change: the cache's provenance is unknown
    if previous != current:
        cache = app.env.mystnb_config.execution_cache_path
        cache = Path(cache) if cache else Path(app.outdir).parent / ".jupyter_cache"
        if cache.exists():
            shutil.rmtree(cache)
            from sphinx.util import logging

            logging.getLogger(__name__).info(
                "normlib changed since the last build: execution cache cleared, all chapters re-run"
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
    # run after myst-nb's own builder-inited handler, which sets mystnb_config
    app.connect("builder-inited", _on_builder_inited, priority=900)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
