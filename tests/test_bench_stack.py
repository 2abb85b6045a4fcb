"""Tests of benchmarks/bench_stack.py's measuring helpers: their arguments and result fields.

What they measure is never asserted: timings belong to one machine at one moment.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_stack.py"
_spec = importlib.util.spec_from_file_location("bench_stack", _PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_stack"] = bench  # dataclasses look their module up there
_spec.loader.exec_module(bench)

BAD_MEASURE = [
    (lambda: bench.measure_conditional(4, 8, repeats=0), ValueError, "repeats"),
    (lambda: bench.measure_conditional(0, 8), ValueError, "depth"),
    (lambda: bench.measure_conditional(4, 8, placement="middle"), ValueError, "placement"),
    (lambda: bench.explicit_cost(4, 8, probe_widths=()), ValueError, "probe_widths"),
    (lambda: bench.explicit_cost(4, 8, probe_widths=(8.5,)), TypeError, "probe width"),
    (lambda: bench.explicit_cost(4, 8, probe_depth=0), ValueError, "probe_depth"),
    (lambda: bench.time_exact_vs_draws((("post", 2),), width=4, repeats=0), ValueError, "repeats"),
    (lambda: bench.time_exact_vs_draws((), width=4), ValueError, "runs"),
    (lambda: bench.time_exact_vs_draws((("side", 2),), width=4), ValueError, "placement"),
]


@pytest.mark.parametrize("call, exc, word", BAD_MEASURE)
def test_measuring_helpers_refuse_bad_arguments(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


def test_measuring_helpers_return_their_dataclasses():
    """Tiny sizes: the fields are filled and consistent (no statement about speed)."""
    t = bench.time_exact_vs_draws((("post", 2), ("pre", 2)), width=4, n_seeds=1, repeats=2, fresh=False)
    assert len(t.exact_s) == len(t.draws_s) == 2 and min(t.exact_s + t.draws_s) >= 0
    assert len(t.pair_ratios) == 2 and t.ratio > 0 and t.cpu_ratio > 0
    c = bench.measure_conditional(3, 8, repeats=1)
    assert (c.depth, c.width) == (3, 8) and c.peak_bytes > 0
    e = bench.explicit_cost(10, 16, probe_widths=(4, 8), probe_depth=1, repeats=1)
    assert e.weight_bytes == 10 * 8 * 16 * 16 * 8 and e.probe_widths == (4, 8)
    assert e.seconds == pytest.approx(e.seconds_per_weight * 10 * 8 * 16 * 16)


def test_a_fresh_process_reports_its_time():
    """One side of (a) in a child process, as the report runs it: a time comes back."""
    wall, cpu = bench._fresh_process("draws", (("post", 2),), 4, 1)
    assert wall >= 0.0 and cpu >= 0.0
