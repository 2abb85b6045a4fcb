"""pytest configuration: run the book's MyST-markdown chapters under nbval, in place.

nbval only collects ``.ipynb`` files. The chapters are jupytext MyST notebooks
(``book/*.md``); this plugin reads each one with jupytext into memory and hands it to
nbval's collector, so no ``.ipynb`` is ever written next to the sources (the book
build would then fail on "multiple files").

The plugin is registered globally in ``pytest_configure`` so that it sees files under
``book/`` although this conftest lives in ``tests/``. Run one chapter alone with
``pytest tests/conftest.py book/rmsnorm.md`` (naming this file loads the plugin).
"""

from __future__ import annotations

from pathlib import Path

import pytest

BOOK_DIR = (Path(__file__).resolve().parent.parent / "book").resolve()


def _is_chapter(path: Path) -> bool:
    if path.suffix != ".md" or path.resolve().parent != BOOK_DIR:
        return False
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "jupytext:" in head and "kernelspec:" in head


class MystChapterCollector:
    """Collect jupytext MyST chapters as nbval notebooks."""

    def pytest_collect_file(self, file_path: Path, parent):
        if not _is_chapter(file_path):
            return None
        opt = parent.config.option
        if not (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)):
            return None
        return _chapter_file_class().from_parent(parent, path=file_path)


_CLASS = None


def _chapter_file_class():
    global _CLASS
    if _CLASS is None:
        import jupytext
        import nbval.plugin as nbval_plugin

        class MystChapterFile(nbval_plugin.IPyNbFile):
            """An nbval notebook whose cells come from a jupytext MyST file."""

            def collect(self):
                # nbval reads self.fspath with nbformat.read; give it jupytext's parse instead
                original = nbval_plugin.nbformat.read
                notebook = jupytext.read(str(self.path))

                def read(*args, **kwargs):
                    return notebook

                nbval_plugin.nbformat.read = read
                try:
                    items = list(super().collect())
                finally:
                    nbval_plugin.nbformat.read = original
                yield from items

        _CLASS = MystChapterFile
    return _CLASS


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("myst-chapters"):
        config.pluginmanager.register(MystChapterCollector(), "myst-chapters")


@pytest.fixture
def rng():
    """A fresh, seeded generator per test (never global seeding)."""
    import numpy as np

    return np.random.default_rng(20261129)
