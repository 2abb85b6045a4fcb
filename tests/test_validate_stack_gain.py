"""benchmarks/validate_stack_gain.py's helpers on tiny sizes: fields, shapes, bad input (no statement about agreement)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "validate_stack_gain.py"
_spec = importlib.util.spec_from_file_location("validate_stack_gain", _PATH)
val = importlib.util.module_from_spec(_spec)
sys.modules["validate_stack_gain"] = val  # dataclasses look their module up there
_spec.loader.exec_module(val)


def test_walk_stats_and_compare_on_a_tiny_stack():
    a = val.walk_stats("exact", width=8, depth=16, seeds=range(3))
    b = val.walk_stats("conditional", width=8, depth=16, seeds=range(3))
    for s in (a, b):
        assert s.gain.shape == s.log_var.shape == s.drift.shape == (3,)
        assert np.all(s.gain > 0) and np.all(s.log_var >= 0)
    rows = val.compare(a, b)
    assert [r[0] for r in rows] == ["gain", "log_var", "drift"] and all(np.isfinite(r[5]) for r in rows)


@pytest.mark.parametrize("kw, exc", [(dict(depth=8), ValueError), (dict(depth=16.5), TypeError), (dict(width=0), ValueError)])
def test_walk_stats_refuses_bad_sizes(kw, exc):
    args = dict(width=8, depth=16, seeds=range(2)) | kw
    with pytest.raises(exc):
        val.walk_stats("exact", **args)


def test_main_refuses_a_single_seed():
    with pytest.raises(ValueError, match="at least 2"):
        val.main(["--seeds", "1"])
