"""pytest configuration: run the book's MyST-markdown chapters under nbval, in place.

nbval only collects ``.ipynb`` files. The chapters are jupytext MyST notebooks
(``book/*.md``); this plugin reads each one with jupytext into memory and hands it to
nbval's collector, so no ``.ipynb`` is ever written next to the sources (the book
build would then fail on "multiple files").

The plugin is registered globally in ``pytest_configure`` so that it sees files under
``book/`` although this conftest lives in ``tests/``. Run one chapter alone with
``pytest tests/conftest.py book/rmsnorm.md`` (naming this file loads the plugin).

One execution serves both commands. When every cell of a chapter passes under nbval,
the executed notebook (nbval's recorded outputs in the chapter's cells) is stored in
the book's execution cache (``_build/.jupyter_cache``, the cache MyST-NB reads in
``make book``), keyed exactly as MyST-NB keys it (the hash of the code cells). The
cache carries the normlib fingerprint it was made with (see
``_ext/normlib_cache_guard.py``), so a cache from an older normlib is emptied before it
is written to or read. nbval's checks are unchanged: a chapter that fails is not cached.

Three guards: the chapters' kernels must import this checkout's normlib (checked once,
in a subprocess with the kernels' environment, before the first chapter runs); no code
path may reach a model hub (``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set here, and
the kernels inherit them); a hung cell fails after ``CELL_TIMEOUT`` seconds
and any other test after ``TEST_TIMEOUT`` (``SLOW_TIMEOUT`` if marked slow; pytest-timeout markers added at collection;
``--timeout`` on the command line overrides neither). A
failing cell is reported by its line in the ``.md`` file and its section, not by
nbval's 0-based code-cell index alone.

The collection is ordered longest file first (``tests/data/run_seconds.toml``), each file's
items kept together and in order: ``make test`` hands whole files to its pytest-xdist
workers in that order (``--dist loadfile --no-loadscope-reorder``), so the longest
chapters start first and the two workers finish together.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK_DIR = (ROOT / "book").resolve()
CACHE_DIR = ROOT / "_build" / ".jupyter_cache"
CELL_TIMEOUT = 900  # seconds per chapter cell (the longest training cell takes about 3 minutes)
TEST_TIMEOUT = 300  # seconds per unit test (pytest-timeout)
SLOW_TIMEOUT = 900  # seconds per test marked slow (e.g. test_rebuilds.py: several small book builds)
# how long each test file runs, roughly: the collection is ordered longest file first
RUN_SECONDS = ROOT / "tests" / "data" / "run_seconds.toml"
DEFAULT_CHAPTER_SECONDS = 60.0  # a chapter not in RUN_SECONDS ("about a minute", CONTRIBUTING)
DEFAULT_TEST_SECONDS = 1.0  # a test module not in RUN_SECONDS

# every chapter and test that imports transformers builds its models from configurations
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _is_chapter(path: Path) -> bool:
    # the lectures (book/*.md) and their evidence pages (book/evidence/*.md)
    if path.suffix != ".md" or path.resolve().parent not in (BOOK_DIR, BOOK_DIR / "evidence"):
        return False
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "jupytext:" in head and "kernelspec:" in head


_KERNEL_NORMLIB: list[str] = []


def kernel_normlib() -> Path:
    """The normlib a chapter's kernel imports: same interpreter, environment and directory."""
    if not _KERNEL_NORMLIB:
        out = subprocess.run(
            [sys.executable, "-c", "import normlib; print(normlib.__file__)"],
            cwd=BOOK_DIR, env=os.environ.copy(), capture_output=True, text=True, timeout=120,
        )
        if out.returncode != 0:
            raise pytest.UsageError(
                f"the chapters' kernels cannot import normlib: {out.stderr.strip()[-500:]}\n"
                f"run through make (it sets PYTHONPATH={ROOT}) or `pip install -e .`"
            )
        _KERNEL_NORMLIB.append(out.stdout.strip())
    return Path(_KERNEL_NORMLIB[0]).resolve()


def check_kernel_normlib() -> None:
    """Refuse to run a chapter whose kernel would import another checkout's normlib."""
    found = kernel_normlib()
    if not found.is_relative_to(ROOT.resolve()):
        raise pytest.UsageError(
            f"the chapters' kernels import normlib from {found}, not from this checkout ({ROOT}); "
            f"set PYTHONPATH={ROOT} (make does) or re-run `pip install -e .` here"
        )


def cell_locations(path: Path) -> list[tuple[int, str]]:
    """(1-based line, section title) of every code cell of a MyST chapter, in order."""
    out, section = [], ""
    fence = None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if fence is None:
            m = re.match(r"^(`{3,})\{code-cell\}", line)
            if m:
                out.append((n, section))
                fence = m.group(1)
                continue
            h = re.match(r"^#{1,6}\s+(.+?)\s*$", line)
            if h:
                section = h.group(1)
        elif line.strip() == fence:
            fence = None
    return out


def _cache_guard():
    spec = importlib.util.spec_from_file_location("normlib_cache_guard", ROOT / "_ext" / "normlib_cache_guard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class MystChapterCollector:
    """Collect jupytext MyST chapters as nbval notebooks; cache the ones that pass."""

    def __init__(self):
        self.reports: dict[str, dict] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        parent = getattr(item, "parent", None)
        if not getattr(parent, "is_myst_chapter", False):
            return
        report = outcome.get_result()
        state = self.reports.setdefault(parent.nodeid, {"ok": True, "seconds": 0.0})
        if report.failed or report.skipped:
            state["ok"] = False
        if report.when == "call":
            state["seconds"] += report.duration

    def pytest_runtest_teardown(self, item, nextitem):
        parent = getattr(item, "parent", None)
        if not getattr(parent, "is_myst_chapter", False):
            return
        if nextitem is not None and getattr(nextitem, "parent", None) is parent:
            return  # not the chapter's last cell yet
        state = self.reports.get(parent.nodeid, {"ok": False})
        items = getattr(parent, "cell_items", [])
        if not state["ok"] or not items or any(getattr(i, "test_outputs", None) is None for i in items):
            return
        _cache_guard().store_executed_notebook(
            ROOT, CACHE_DIR, parent.path, parent.source_notebook,
            [i.test_outputs for i in items], round(state["seconds"], 3),
        )

    def pytest_collect_file(self, file_path: Path, parent):
        if not _is_chapter(file_path):
            return None
        opt = parent.config.option
        if not (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)):
            return None
        check_kernel_normlib()
        return _chapter_file_class().from_parent(parent, path=file_path)


_CLASS = None


def _chapter_file_class():
    global _CLASS
    if _CLASS is None:
        import copy

        import jupytext
        import nbval.plugin as nbval_plugin

        class MystChapterFile(nbval_plugin.IPyNbFile):
            """An nbval notebook whose cells come from a jupytext MyST file."""

            is_myst_chapter = True

            def collect(self):
                # nbval reads self.fspath with nbformat.read; give it jupytext's parse instead
                original = nbval_plugin.nbformat.read
                notebook = jupytext.read(str(self.path))
                self.source_notebook = copy.deepcopy(notebook)

                def read(*args, **kwargs):
                    return notebook

                nbval_plugin.nbformat.read = read
                try:
                    items = list(super().collect())
                finally:
                    nbval_plugin.nbformat.read = original
                locations = cell_locations(Path(self.path))
                rel = Path(self.path).resolve().relative_to(ROOT)
                for item in items:
                    item.add_marker(pytest.mark.timeout(CELL_TIMEOUT))
                    if item.cell_num < len(locations):
                        line, section = locations[item.cell_num]
                        where = f"{rel}:{line} (code cell {item.cell_num}, section “{section}”)"
                        item.md_location = where
                        item.reportinfo = (lambda w=where, ln=line: (self.path, ln - 1, w))
                        original_repr = item.repr_failure
                        item.repr_failure = (lambda excinfo, w=where, r=original_repr: f"at {w}\n" + r(excinfo))
                self.cell_items = items
                yield from items

        _CLASS = MystChapterFile
    return _CLASS


def run_seconds() -> dict[str, float]:
    """Roughly how long each test file runs, by path relative to the checkout (RUN_SECONDS)."""
    import tomllib

    table = tomllib.loads(RUN_SECONDS.read_text(encoding="utf-8"))["seconds"]
    return {name: float(seconds) for name, seconds in table.items()}


def longest_files_first(items: list, seconds: dict[str, float]) -> list:
    """``items`` with whole files in decreasing run time; each file's items stay together, in order.

    A file not in ``seconds`` counts DEFAULT_CHAPTER_SECONDS when it is a chapter, else
    DEFAULT_TEST_SECONDS; files of equal time keep their collection order (the sort is stable).
    """
    cost: dict[Path, float] = {}

    def key(item) -> float:
        path = Path(item.path)
        if path not in cost:
            try:
                rel = path.resolve().relative_to(ROOT).as_posix()
            except ValueError:
                rel = None
            default = DEFAULT_CHAPTER_SECONDS if _is_chapter(path) else DEFAULT_TEST_SECONDS
            cost[path] = seconds.get(rel, default)
        return -cost[path]

    return sorted(items, key=key)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Every test without its own timeout marker gets TEST_TIMEOUT, or SLOW_TIMEOUT when marked slow
    (chapter cells have CELL_TIMEOUT). The files are then ordered longest first (RUN_SECONDS):
    pytest-xdist's workers, which `make test` gives whole files in collection order, start with
    the longest chapters and end with short files, so they finish together. Runs last, after
    any other plugin's reordering or deselection."""
    for item in items:
        if item.get_closest_marker("timeout") is None:
            slow = item.get_closest_marker("slow") is not None
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT if slow else TEST_TIMEOUT))
    items[:] = longest_files_first(items, run_seconds())


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("myst-chapters"):
        config.pluginmanager.register(MystChapterCollector(), "myst-chapters")


@pytest.fixture
def rng():
    """A fresh, seeded generator per test (never global seeding)."""
    import numpy as np

    return np.random.default_rng(20261129)
