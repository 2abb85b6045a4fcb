"""A window whose `why` states a coverage has that coverage: the quantiles are computed here.

A check's window must come from a coverage chosen before looking (issue 25, "the χ² window"):
when `why` says "99% coverage" or "99.994%", the window's ends must be the quantiles of the
statistic's distribution under the hypothesis the check tests. Each entry below names the check,
the distribution, the coverage the registry states, and how the ends follow; the test recomputes
them with scipy and compares with the registry's `lo`/`hi` at the digits the registry prints, and
requires the stated coverage to appear in the check's `why`.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest
from scipy import stats

from normlib.claims import registry

ROOT = Path(__file__).resolve().parent.parent
_, CHECKS = registry()


def _close(a: float, b: float, digits: int) -> bool:
    """a equals b at the precision the registry writes (``digits`` significant digits)."""
    return abs(a - b) <= 0.5 * 10 ** (math.floor(math.log10(abs(b))) - digits + 1)


# ---------------------------------------------------------------------------------------- pre-vs-post

def test_reduced_chi_square_window_of_the_post_fit_is_the_one_sided_99_percent_quantile():
    k = CHECKS["C5.8-post-exp-chi2"]
    dof = 8  # ten depths, two fitted parameters (the check's `what` says so)
    assert "8 degrees of freedom" in k.what
    assert k.lo == 0.0
    assert _close(k.hi, stats.chi2.ppf(0.99, dof) / dof, 4)
    assert "99% coverage" in k.why and "one-sided" in k.why.lower()
    assert math.isclose(stats.chi2.ppf(0.99, dof), 20.09, abs_tol=0.005)  # the number the `why` quotes


def test_power_law_rejection_threshold_has_the_probability_its_why_states():
    k = CHECKS["C5.8-post-pow-chi2"]
    dof = 8
    assert stats.chi2.sf(k.lo * dof, dof) < 1e-13
    assert "below 1e-13" in k.why


def test_calibration_window_is_the_99_percent_range_of_a_standard_deviation_ratio():
    """spread of 8 independent exponents / their true standard error ~ sqrt(chi2_7 / 7)."""
    k = CHECKS["C5.5-exponent-calibration"]
    groups = 8
    assert "8 independent groups" in k.what
    lo = math.sqrt(stats.chi2.ppf(0.005, groups - 1) / (groups - 1))
    hi = math.sqrt(stats.chi2.ppf(0.995, groups - 1) / (groups - 1))
    assert _close(k.lo, lo, 3) and _close(k.hi, hi, 4)
    assert "coverage of 99%" in k.why
    assert f"{lo:.3f}" in k.why and f"{hi:.3f}" in k.why


@pytest.mark.parametrize("cid", ["C5.5-z", "C5.5-exponent-z", "C5.5-toy-upper", "C5.5-toy-lower"])
def test_four_standard_error_windows_state_their_two_sided_coverage(cid):
    k = CHECKS[cid]
    assert (k.lo, k.hi) == (-4.0, 4.0)
    coverage = 1 - 2 * stats.norm.sf(4.0)
    assert f"{100 * coverage:.3f}%" in k.why  # 99.994%


@pytest.mark.parametrize("cid, n_stats", [("C5.5-ffn-width", 6), ("C5.8-sampler", 3)])
def test_largest_of_several_z_windows_state_a_union_bound(cid, n_stats):
    """P(max of n |z| > 4) <= n * P(|z| > 4) whatever the dependence; the `why` gives that bound."""
    k = CHECKS[cid]
    assert (k.lo, k.hi) == (0.0, 4.0)
    bound = n_stats * 2 * stats.norm.sf(4.0)
    stated = {6: "0.038%", 3: "1.9e-4"}[n_stats]
    assert stated in k.why
    value = float(stated.rstrip("%")) / (100 if stated.endswith("%") else 1)
    assert _close(value, bound, 2)


def test_the_validation_script_settings_shown_on_the_evidence_page_are_the_scripts():
    """The evidence page glues the deep validation's settings; they must be the script's own."""
    spec = importlib.util.spec_from_file_location("validate_stack_gain", ROOT / "benchmarks" / "validate_stack_gain.py")
    script = importlib.util.module_from_spec(spec)
    sys.modules["validate_stack_gain"] = script  # dataclasses look their module up there
    spec.loader.exec_module(script)
    page = (ROOT / "book" / "evidence" / "pre-vs-post.md").read_text(encoding="utf-8")
    m = re.search(r"VALIDATE = dict\(width=(\d+), depth=(\d+), seeds=(\d+), target=([\d.e-]+)\)", page)
    assert m, "the evidence page no longer states the validation's settings"
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (script.WIDTH, script.DEPTH, script.SEEDS)
