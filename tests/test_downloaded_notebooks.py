"""Every downloaded notebook runs in an empty folder with the wheel and the chapter requirements.

The promise of "Running the book yourself" (``book/download.md``), checked on the built
site (``pytest -m rendered``; the machinery is ``tests/downloaded_notebooks.py``, which
also runs one notebook on its own). Each page's ``.ipynb`` of ``_build/html/_sources``:

- imports nothing that the standard library, normlib or ``requirements-chapter.txt``
  does not provide (static, every notebook, a fraction of a second);
- executes, alone in an empty folder, with normlib from the site's wheel only. Executing
  costs what the chapter costs, so CI executes the fast notebooks only: the shortest
  pages of ``tests/data/run_seconds.toml`` within :data:`CI_BUDGET` seconds of their run
  times. ``make downloads-check`` (``NORMLIB_ALL_DOWNLOADS=1``) executes all of them:
  run it before a release.

The unit tests at the end check the pieces on small synthetic notebooks, without a build.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import downloaded_notebooks as dn  # noqa: E402  (tests/downloaded_notebooks.py)

HTML = Path(os.environ.get("NORMLIB_HTML", ROOT / "_build" / "html"))
SOURCES = HTML / "_sources"
DOWNLOADS = HTML / "downloads"
ALL = os.environ.get("NORMLIB_ALL_DOWNLOADS") == "1"
# seconds of chapter run time (tests/data/run_seconds.toml) CI spends executing downloads;
# a kernel start adds a few seconds per notebook
CI_BUDGET = 20
# pages whose downloaded notebook is known not to run alone: page -> why (xfail, strict:
# the entry must go when the page is fixed)
KNOWN: dict[str, str] = {}


def _pages() -> list[str]:
    import re

    return re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _run_seconds() -> dict[str, float]:
    data = tomllib.loads((ROOT / "tests" / "data" / "run_seconds.toml").read_text(encoding="utf-8"))["seconds"]
    return {k.removesuffix(".md"): v for k, v in data.items() if k.startswith("book/")}


def fast_pages(pages: list[str], seconds: dict[str, float], budget: float) -> list[str]:
    """The shortest pages (by listed run time; unlisted ones count as 60 s) within ``budget`` seconds."""
    chosen, total = [], 0.0
    for page in sorted(pages, key=lambda p: (seconds.get(p, 60.0), p)):
        cost = seconds.get(page, 60.0)
        if total + cost > budget:
            break
        chosen.append(page)
        total += cost
    return chosen


def _notebook(page: str) -> Path:
    return SOURCES / f"{page}.ipynb"


PAGES = [p for p in _pages() if (ROOT / f"{p}.md").read_text(encoding="utf-8")[:2000].count("kernelspec:")]
FAST = set(fast_pages(PAGES, _run_seconds(), CI_BUDGET))


def _params(pages, known=False):
    out = []
    for p in pages:
        marks = [pytest.mark.rendered]
        if known and p in KNOWN:
            marks.append(pytest.mark.xfail(reason=KNOWN[p], strict=True))
        out.append(pytest.param(p, marks=marks, id=p))
    return out


def _built(page: str) -> Path:
    nb = _notebook(page)
    if not nb.is_file():
        pytest.skip(f"{nb} is not built (make book)")
    return nb


@pytest.mark.parametrize("page", _params(PAGES))
def test_a_downloaded_notebook_imports_only_what_the_chapter_requirements_install(page):
    import nbformat

    nb = nbformat.read(_built(page), as_version=4)
    requirements = (DOWNLOADS / "requirements-chapter.txt").read_text(encoding="utf-8")
    assert not dn.foreign_imports(nb, requirements)


@pytest.mark.parametrize("page", _params(PAGES, known=True))
def test_a_downloaded_notebook_runs_alone_with_the_wheel(page):
    if page not in FAST and not ALL:
        pytest.skip("not among the fast pages: make downloads-check executes every notebook")
    nb = _built(page)
    dn.run_alone(nb, dn.find_wheel(DOWNLOADS), timeout=1800)


# ---- the pieces, on small inputs (no build needed) ------------------------------------------------


def _synthetic(tmp_path, *cells) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "synthetic.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A normlib wheel of this checkout (what _ext/site_downloads.py puts on the site)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    import site_downloads

    out = tmp_path_factory.mktemp("site")
    site_downloads.build_downloads(ROOT, out)
    return dn.find_wheel(out / "downloads")


def test_a_notebook_that_needs_only_normlib_runs_alone_and_gets_the_wheels_normlib(tmp_path, wheel):
    nb = _synthetic(tmp_path, "import normlib\nfrom normlib.claims import registry\nassert registry()[0]\n"
                              f"assert not normlib.__file__.startswith({str(ROOT)!r}), normlib.__file__")
    dn.run_alone(nb, wheel, timeout=120)


def test_a_notebook_that_reads_a_file_of_the_repository_fails_alone(tmp_path, wheel):
    from nbclient.exceptions import CellExecutionError

    nb = _synthetic(tmp_path, "from pathlib import Path\nPath('book/warmup-lr.md').read_text()")
    with pytest.raises(CellExecutionError, match="warmup-lr.md"):
        dn.run_alone(nb, wheel, timeout=120)


def test_a_module_imported_from_the_checkout_is_caught(tmp_path, wheel):
    from nbclient.exceptions import CellExecutionError

    nb = _synthetic(tmp_path, f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\nimport prose_numbers")
    with pytest.raises(CellExecutionError, match="imported from the repository"):
        dn.run_alone(nb, wheel, timeout=120)


def test_foreign_imports_are_listed():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import numpy as np\nimport json\nfrom normlib import norms\n%matplotlib inline"),
                nbformat.v4.new_code_cell("import pytest")]
    assert dn.code_imports(nb) == {"numpy", "json", "normlib", "pytest"}
    assert dn.foreign_imports(nb, "numpy==2.0\n") == ["pytest (from pytest)"]
    assert dn.foreign_imports(nb, "numpy==2.0\npytest==8.0\n") == []


def test_the_fast_pages_are_the_shortest_within_the_budget():
    seconds = {"a": 5, "b": 10, "c": 20, "d": 3}
    assert fast_pages(["a", "b", "c", "d", "e"], seconds, 18) == ["d", "a", "b"]
    assert fast_pages(["e"], seconds, 30) == []  # an unlisted page counts as a minute
