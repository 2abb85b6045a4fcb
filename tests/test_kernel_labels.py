"""Values that moved between floating-point kernel sets stay labelled machine-dependent.

``benchmarks/recorded/determinism-kernels.txt`` is the output of ``make determinism-kernels``
over every executed page. Every glued value it reports as moving without a label must, in the
page's source, either be glued with ``machine_dependent=True`` or no longer be glued at all.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from normlib.kernels import moved_in_report

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("glued_values", ROOT / "_ext" / "glued_values.py")
gv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gv)

REPORT = ROOT / "benchmarks" / "recorded" / "determinism-kernels.txt"
THREADS = ROOT / "benchmarks" / "recorded" / "determinism-threads.txt"  # one thread against two
REPORTS = (REPORT, THREADS)


def _glue_calls(source: str, key: str) -> list[str]:
    """The full text of every glue_value call for ``key`` (a call may span lines)."""
    calls = []
    for m in re.finditer(r'glue_value\(\s*"%s"' % re.escape(key), source):
        depth, i = 0, m.start() + len("glue_value")
        while i < len(source):
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            if depth == 0:
                break
            i += 1
        calls.append(source[m.start():i + 1])
    return calls


@pytest.mark.parametrize("report", REPORTS, ids=lambda r: r.name)
def test_the_recorded_report_names_pages_that_exist(report):
    moved = moved_in_report(report.read_text(encoding="utf-8"))
    assert "book/warmup-lr.md" in moved and "book/evidence/warmup-lr.md" in moved
    for page in moved:
        assert (ROOT / page).is_file(), page


def test_the_threads_run_covered_every_executed_page():
    """The recorded one-thread/two-thread run names every page the book executes."""
    moved = moved_in_report(THREADS.read_text(encoding="utf-8"))
    pages = {p.relative_to(ROOT).as_posix() for p in gv.chapter_paths(ROOT)}
    assert pages <= set(moved), pages - set(moved)


@pytest.mark.parametrize("page,key", sorted({(p, k) for r in REPORTS
                                             for p, ks in moved_in_report(r.read_text(encoding="utf-8")).items()
                                             for k in ks}))
def test_a_value_that_moved_with_the_kernels_is_glued_machine_dependent(page, key):
    calls = _glue_calls((ROOT / page).read_text(encoding="utf-8"), key)
    assert all("machine_dependent=True" in c for c in calls), (
        f"{page}: {key} moved between kernel sets (benchmarks/recorded/determinism-kernels.txt) "
        f"but is glued without machine_dependent=True: {calls}")


def test_the_report_reader_attributes_each_moved_value_to_its_page():
    text = ("comparing ...\n"
            "book/a.md [default]: passed in 1 s\n"
            "book/a.md: 3 glued values, 0 labelled machine-dependent, 1 unlabelled value(s) differ by more than 0.1%\n"
            "  DIFFERS: x_one: 1.0 vs 2.0 (relative 0.5)\n"
            "book/evidence/a.md: 2 glued values, 0 labelled machine-dependent, 2 unlabelled value(s) differ\n"
            "  DIFFERS: y_two: 'a' vs 'b'\n"
            "  DIFFERS: z: 4 vs 5 (relative 0.2)\n"
            "book/b.md: 1 glued values, 0 labelled machine-dependent, 0 unlabelled value(s) differ\n")
    assert moved_in_report(text) == {"book/a.md": ["x_one"], "book/evidence/a.md": ["y_two", "z"], "book/b.md": []}


@pytest.mark.parametrize("text", ["", "comparing ...\n", "  DIFFERS: x: 1 vs 2\nbook/a.md: 1 glued values, 0\n"])
def test_the_report_reader_refuses_a_report_it_cannot_attribute(text):
    with pytest.raises(ValueError):
        moved_in_report(text)


def test_a_glue_call_without_the_label_is_found_even_across_lines():
    src = 'glue_value("k", f(x,\n    y))\nglue_value("k2", 1, machine_dependent=True)\n'
    assert _glue_calls(src, "k") == ['glue_value("k", f(x,\n    y))']
    assert all("machine_dependent=True" in c for c in _glue_calls(src, "k2"))
    assert not all("machine_dependent=True" in c for c in _glue_calls(src, "k"))


def test_page_label_tells_a_lecture_from_its_evidence_page():
    assert gv.page_label(ROOT / "book" / "warmup-lr.md") == "book/warmup-lr.md"
    assert gv.page_label(ROOT / "book" / "evidence" / "warmup-lr.md") == "book/evidence/warmup-lr.md"
