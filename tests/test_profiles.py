"""normlib.profiles: growth and depth slopes against closed forms, the t intervals against scipy and
their coverage by simulation, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from normlib.profiles import Interval, log_growth, log_slope, mean_interval, paired_interval, welch_interval


def test_log_growth_of_exact_exponential_profiles():
    layers = np.arange(12)
    profiles = np.stack([3.0 * 1.1**layers, 0.5 * 0.9**layers, np.full(12, 2.0)])
    np.testing.assert_allclose(log_growth(profiles), [11 * math.log(1.1), 11 * math.log(0.9), 0.0], atol=1e-12)


def test_log_growth_is_the_growth_of_the_geometric_mean_profile_and_ignores_scale():
    rng = np.random.default_rng(0)
    p = np.exp(rng.normal(size=(7, 9)))
    g = np.exp(np.log(p).mean(axis=0))
    assert log_growth(p).mean() == pytest.approx(log_growth(g[None])[0], abs=1e-12)
    np.testing.assert_allclose(log_growth(p * rng.uniform(0.1, 10, size=(7, 1))), log_growth(p), atol=1e-12)
    fit = np.polyfit(np.arange(9), np.log(p[0]), 1)[0] * 8
    assert log_growth(p)[0] == pytest.approx(fit, abs=1e-12)


def test_log_slope_of_power_laws():
    depths = np.array([6, 12, 24, 48])
    values = np.stack([2.0 * depths**-0.5, 0.3 * depths**0.25])
    np.testing.assert_allclose(log_slope(depths, values), [-0.5, 0.25], atol=1e-12)


def test_mean_interval_is_the_student_t_interval():
    x = np.array([0.1, 0.4, -0.2, 0.3, 0.25])
    iv = mean_interval(x, level=0.9)
    lo, hi = stats.t.interval(0.9, df=4, loc=x.mean(), scale=stats.sem(x))
    assert (iv.estimate, iv.lo, iv.hi, iv.df) == pytest.approx((x.mean(), lo, hi, 4))
    assert iv.exp() == pytest.approx((math.exp(x.mean()), math.exp(lo), math.exp(hi)))
    assert isinstance(iv, Interval)


def test_paired_and_welch_intervals_against_scipy():
    rng = np.random.default_rng(1)
    x, y = rng.normal(1.0, 1.0, 10), rng.normal(0.0, 2.0, 14)
    w = welch_interval(x, y)
    r = stats.ttest_ind(x, y, equal_var=False)
    lo, hi = r.confidence_interval(0.95)
    assert (w.lo, w.hi, w.df) == pytest.approx((lo, hi, r.df))
    y10 = y[:10]
    p = paired_interval(x, y10)
    lo, hi = stats.ttest_rel(x, y10).confidence_interval(0.95)
    assert (p.lo, p.hi) == pytest.approx((lo, hi))


def test_the_t_interval_covers_as_stated_for_normal_seeds_and_the_percentile_bootstrap_does_not():
    """With 8 seeds, the 95% t interval covers the true mean 95% of the time; the percentile bootstrap less."""
    rng = np.random.default_rng(2)
    n, reps = 8, 4000
    samples = rng.normal(0.0, 1.0, size=(reps, n))
    t_cover = np.mean([(lambda iv: iv.lo <= 0 <= iv.hi)(mean_interval(s)) for s in samples])
    boot = samples[:, rng.integers(0, n, size=(500, n))].mean(axis=2)  # (reps, 500) bootstrap means
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    b_cover = np.mean((lo <= 0) & (0 <= hi))
    assert abs(t_cover - 0.95) < 0.012  # 3.5 binomial standard errors
    assert b_cover < 0.93


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: log_growth(np.ones(5)), ValueError, "shape"),
        (lambda: log_growth(np.ones((3, 1))), ValueError, "2 layers"),
        (lambda: log_growth([[1.0, -1.0]]), ValueError, "positive"),
        (lambda: log_growth([[1.0, np.nan]]), ValueError, "positive"),
        (lambda: log_growth(np.array([["a", "b"]])), TypeError, "real"),
        (lambda: log_slope([1, 2], np.ones((2, 3))), ValueError, "depths"),
        (lambda: log_slope([2, 2, 2], np.ones((2, 3))), ValueError, "not all equal"),
        (lambda: mean_interval([1.0]), ValueError, "at least 2"),
        (lambda: mean_interval([1.0, 2.0], level=95), ValueError, "level"),
        (lambda: mean_interval([True, False]), TypeError, "real"),
        (lambda: paired_interval([1.0, 2.0], [1.0, 2.0, 3.0]), ValueError, "same seeds"),
        (lambda: welch_interval([1.0, np.inf], [1.0, 2.0]), ValueError, "NaN or infinite"),
    ],
)
def test_bad_input(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
