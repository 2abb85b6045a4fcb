"""benchmarks/validate_stack_tail.py's helpers on tiny sizes, and the recorded run's settings (no statement about agreement)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("validate_stack_tail", _ROOT / "benchmarks" / "validate_stack_tail.py")
val = importlib.util.module_from_spec(_spec)
sys.modules["validate_stack_tail"] = val
_spec.loader.exec_module(val)


def test_group_log_ratios_is_the_articles_statistic_on_a_tiny_stack():
    from normlib.stack import simulate_stack

    logs, _ = val.group_log_ratios("conditional", 3, 100, width=8, depth=16)
    r = simulate_stack("post", 16, width=8, method="conditional", seeds=range(100, 112))
    pg = r.per_seed_param_grad.reshape(3, 4, 16).mean(axis=1)  # four-seed means, per group
    np.testing.assert_allclose(logs, np.log(pg[:, 0] / pg[:, -1]), rtol=1e-12)


def test_the_script_uses_normlibs_wilson_interval():
    # the interval itself is tested in tests/test_resampling.py; here: the script's recorded 5 of 500
    from normlib.resampling import wilson_interval

    assert val.wilson_interval is wilson_interval
    lo, hi = val.wilson_interval(5, 500)
    assert 0.0042 < lo < 0.0043 and 0.0231 < hi < 0.0233  # 5 of 500: [0.43%, 2.32%]


def test_groups_must_be_an_integer():
    with pytest.raises(TypeError):
        val.group_log_ratios("conditional", 2.5, 0, width=8, depth=16)


def test_the_recorded_run_has_the_scripts_settings():
    head = (_ROOT / "benchmarks" / "recorded" / "validate_stack_tail.txt").read_text(encoding="utf-8").splitlines()[0]
    assert f"d = {val.WIDTH}, L = {val.DEPTH}" in head
    assert f"exact {val.EXACT_GROUPS}, conditional {val.COND_GROUPS}" in head
