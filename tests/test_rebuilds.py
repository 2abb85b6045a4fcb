"""Rebuilds are fast and correct: a prose edit re-executes nothing, a normlib change re-executes all.

A one-chapter book is built three times in a temporary directory with the book's own
Sphinx extensions (``_ext/``): cold, after a prose-only edit, and after a one-byte change
to its ``normlib/``. MyST-NB logs "Executing notebook" whenever it runs a chapter.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JB = Path(sys.executable).parent / "jupyter-book"

pytestmark = pytest.mark.slow

CONFIG = """title: tiny
only_build_toc_files: true
execute:
  execute_notebooks: cache
  raise_on_error: true
sphinx:
  local_extensions:
    normlib_cache_guard: _ext
"""

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Tiny

Some prose.

```{code-cell} ipython3
x = 6 * 7
x
```
"""


def _build(book: Path) -> str:
    out = subprocess.run([str(JB), "build", str(book)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


@pytest.fixture
def book(tmp_path):
    b = tmp_path / "tiny"
    (b / "_ext").mkdir(parents=True)
    shutil.copy2(ROOT / "_ext" / "normlib_cache_guard.py", b / "_ext")
    (b / "normlib").mkdir()
    (b / "normlib" / "__init__.py").write_text("VALUE = 1\n")
    (b / "requirements.txt").write_text("numpy\n")
    (b / "pyproject.toml").write_text("[project]\nname = 'tiny'\n")
    (b / "_config.yml").write_text(CONFIG)
    (b / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n  - file: chapter\n")
    (b / "index.md").write_text("# Home\n")
    (b / "chapter.md").write_text(CHAPTER)
    return b


@pytest.mark.skipif(not JB.is_file(), reason="jupyter-book is not installed next to this Python")
def test_prose_edit_reuses_the_execution_and_normlib_change_reruns_it(book):
    assert "Executing notebook" in _build(book)  # cold

    chapter = book / "chapter.md"
    chapter.write_text(chapter.read_text().replace("Some prose.", "Some edited prose."))
    log = _build(book)
    assert "Executing notebook" not in log and "Using cached notebook" in log
    assert "Some edited prose." in (book / "_build" / "html" / "chapter.html").read_text()

    (book / "normlib" / "__init__.py").write_text("VALUE = 2\n")
    log = _build(book)
    assert "Executing notebook" in log, "a normlib change must re-execute the chapters"

    (book / "requirements.txt").write_text("numpy==2.4.6\n")
    assert "Executing notebook" in _build(book), "a requirements change must re-execute the chapters"
