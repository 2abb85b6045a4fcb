"""The Sphinx extension _ext/normlib_cache_guard.py: its fingerprint of normlib must notice every change.

MyST-NB's execution cache hashes only cell sources; the extension re-runs every chapter when
``fingerprint(root)`` changes. Here the fingerprint is computed on a copy of normlib/ and
requirements.txt in a temporary directory, which is then edited byte by byte.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "_ext" / "normlib_cache_guard.py"


def _load_extension():
    spec = importlib.util.spec_from_file_location("normlib_cache_guard_under_test", EXT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def guard():
    """The extension module, imported from its file (it is not a package)."""
    return _load_extension()


def _copy_project(dst: Path) -> Path:
    shutil.copytree(ROOT / "normlib", dst / "normlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "requirements.txt", dst / "requirements.txt")
    return dst


@pytest.fixture
def project(tmp_path):
    """A snapshot of the fingerprinted files (the real tree may change under concurrent edits)."""
    return _copy_project(tmp_path / "proj")


def _flip_one_byte(path: Path, offset: int | None = None) -> None:
    data = bytearray(path.read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


def test_fingerprint_is_stable(guard, project):
    """Same bytes, same fingerprint: two calls agree and the value is a SHA-256 hex digest."""
    a, b = guard.fingerprint(project), guard.fingerprint(project)
    assert a == b
    assert len(a) == 64 and int(a, 16) >= 0


def test_fingerprint_does_not_depend_on_the_checkout_location(guard, project, tmp_path):
    """A second copy elsewhere has the same fingerprint (paths are hashed relative to the root)."""
    other = _copy_project(tmp_path / "elsewhere" / "deeper")
    assert guard.fingerprint(other) == guard.fingerprint(project)


@pytest.mark.parametrize(
    "relpath",
    ["normlib/norms.py", "normlib/claims.py", "normlib/__init__.py", "normlib/claims.toml", "requirements.txt"],
)
def test_one_byte_change_changes_the_fingerprint(guard, project, relpath):
    """Flipping one bit of a normlib module, the registry or the lock changes the fingerprint; flipping it back restores it."""
    before = guard.fingerprint(project)
    _flip_one_byte(project / relpath)
    assert guard.fingerprint(project) != before
    _flip_one_byte(project / relpath)
    assert guard.fingerprint(project) == before


def test_last_byte_and_appended_byte_are_seen(guard, project):
    """Edits at the very end of a file count too (no truncated reads)."""
    before = guard.fingerprint(project)
    path = project / "normlib" / "claims.toml"
    original = path.read_bytes()
    path.write_bytes(original + b"\n")
    assert guard.fingerprint(project) != before
    path.write_bytes(original)
    _flip_one_byte(path, offset=len(original) - 1)
    assert guard.fingerprint(project) != before


def test_new_module_and_renamed_module_are_seen(guard, project):
    """Adding a module, or moving a module's bytes to another name, changes the fingerprint."""
    before = guard.fingerprint(project)
    (project / "normlib" / "extra.py").write_text("X = 1\n")
    with_extra = guard.fingerprint(project)
    assert with_extra != before
    (project / "normlib" / "extra.py").rename(project / "normlib" / "extra2.py")
    assert guard.fingerprint(project) not in (before, with_extra)


def test_moving_bytes_between_files_is_seen(guard, project):
    """The file boundaries are part of the hash: moving a line from one file's end to the next file's start is a change."""
    a, b = project / "normlib" / "aaa.py", project / "normlib" / "aab.py"
    a.write_text("X = 1\nY = 2\n")
    b.write_text("Z = 3\n")
    before = guard.fingerprint(project)
    a.write_text("X = 1\n")
    b.write_text("Y = 2\nZ = 3\n")
    assert guard.fingerprint(project) != before


def test_pycache_is_ignored(guard, project):
    """Byte-code caches (and any .py/.toml a tool drops into __pycache__) do not change the fingerprint."""
    before = guard.fingerprint(project)
    cache = project / "normlib" / "__pycache__"
    cache.mkdir()
    (cache / "norms.cpython-311.pyc").write_bytes(b"\x00\x01compiled")
    (cache / "stray.py").write_text("Y = 2\n")
    (cache / "stray.toml").write_text("a = 1\n")
    assert guard.fingerprint(project) == before


def test_unrelated_files_are_ignored(guard, project):
    """Files outside normlib's .py/.toml and the lock (e.g. a README or a chapter) are not part of the fingerprint."""
    before = guard.fingerprint(project)
    (project / "normlib" / "notes.txt").write_text("scratch\n")
    (project / "README.md").write_text("# readme\n")
    assert guard.fingerprint(project) == before


def test_the_real_tree_has_a_fingerprint(guard):
    """The repository itself fingerprints without error (the extension runs on it at every build)."""
    assert len(guard.fingerprint(ROOT)) == 64


# ---- the execution cache's own stamp, and reuse of nbval's executions by the book build


def _write_cache_file(cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    f = cache / "global.db"
    f.write_bytes(b"stale")
    return f


def test_cache_without_stamp_is_emptied(guard, project):
    """A cache of unknown provenance (no stamp) is emptied and stamped with the current fingerprint."""
    cache = project / "_build" / ".jupyter_cache"
    stale = _write_cache_file(cache)
    assert guard.ensure_cache_matches(project, cache) is True
    assert not stale.exists()
    assert (cache / guard.CACHE_STAMP_NAME).read_text().strip() == guard.fingerprint(project)


def test_cache_with_current_stamp_is_kept(guard, project):
    cache = project / "_build" / ".jupyter_cache"
    guard.ensure_cache_matches(project, cache)
    kept = _write_cache_file(cache)
    assert guard.ensure_cache_matches(project, cache) is False
    assert kept.read_bytes() == b"stale"


def test_cache_from_an_older_normlib_is_emptied(guard, project):
    cache = project / "_build" / ".jupyter_cache"
    guard.ensure_cache_matches(project, cache)
    old = _write_cache_file(cache)
    _flip_one_byte(project / "normlib" / "norms.py")
    assert guard.ensure_cache_matches(project, cache) is True
    assert not old.exists()


def _tiny_chapter(path: Path) -> Path:
    path.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        "# Tiny\n\nProse.\n\n```{code-cell} ipython3\n:tags: [hide-input]\nx = 6 * 7\nx\n```\n\n"
        "More prose.\n\n```{code-cell} ipython3\nprint(x)\n```\n",
        encoding="utf-8",
    )
    return path


def test_an_nbval_execution_is_found_by_the_book_build(guard, project):
    """store_executed_notebook keys the notebook as MyST-NB does: its reader finds it, outputs merged."""
    import jupytext
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook

    chapter = _tiny_chapter(project / "tiny.md")
    cache = project / "_build" / ".jupyter_cache"
    outputs = [
        [{"output_type": "execute_result", "data": {"text/plain": "42"}, "metadata": {}, "execution_count": 1}],
        [{"output_type": "stream", "name": "stdout", "text": "42\n"}],
    ]
    guard.store_executed_notebook(project, cache, chapter, jupytext.read(str(chapter)), outputs, 0.5)

    as_read_by_mystnb = read_myst_markdown_notebook(chapter.read_text(encoding="utf-8"), path=str(chapter))
    c = get_cache(str(cache))
    record = c.match_cache_notebook(as_read_by_mystnb)
    assert record.data["execution_seconds"] == 0.5
    _, merged = c.merge_match_into_notebook(as_read_by_mystnb)
    code = [cell for cell in merged.cells if cell.cell_type == "code"]
    assert code[0].outputs[0]["data"]["text/plain"] == "42"
    assert code[1].outputs[0]["text"] == "42\n"

    # a prose-only edit keeps the match; an edit of a code cell loses it
    chapter.write_text(chapter.read_text().replace("More prose.", "Other prose."), encoding="utf-8")
    c.match_cache_notebook(read_myst_markdown_notebook(chapter.read_text(), path=str(chapter)))
    chapter.write_text(chapter.read_text().replace("6 * 7", "6 * 8"), encoding="utf-8")
    with pytest.raises(KeyError):
        c.match_cache_notebook(read_myst_markdown_notebook(chapter.read_text(), path=str(chapter)))


def test_store_refuses_outputs_that_do_not_match_the_cells(guard, project):
    import jupytext

    chapter = _tiny_chapter(project / "tiny.md")
    with pytest.raises(ValueError, match="2 code cells but 1 recorded outputs"):
        guard.store_executed_notebook(project, project / "cache", chapter, jupytext.read(str(chapter)), [[]], 0.1)
