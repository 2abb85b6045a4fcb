"""Tests of normlib.resampling: the paired bootstrap of test errors and the two-way standard error.

Closed forms: a contrast's estimate is the difference of the two error rates; identical models
give zero in every replicate; for an additive difference matrix D_si = α_s + β_i the replicates'
variance is exactly var(α)/S + var(β)/N (population variances), and the two-way standard error
recovers the same components; with one seed the bootstrap is the ordinary image bootstrap.
Monte Carlo tolerances come from the number of replicates (the relative standard deviation of a
variance estimated from n draws of a near-normal quantity is sqrt(2/n)).
"""

from __future__ import annotations

import numpy as np
import pytest

from normlib.resampling import PairedBootstrap, paired_bootstrap, two_way_se


def _random_correct(rng, S=6, N=200, p=0.9):
    return rng.random((S, N)) < p


def test_estimate_is_the_difference_of_error_rates_and_identical_models_give_zero():
    rng = np.random.default_rng(0)
    a, b = _random_correct(rng), _random_correct(rng, p=0.8)
    bs = paired_bootstrap({"a": a, "b": b}, {"a-b": ("a", "b"), "a-a": ("a", "a")}, n_boot=500, rng=1)
    assert bs.names == ("a-b", "a-a")
    assert bs.estimate[0] == pytest.approx(100 * ((1 - a.mean()) - (1 - b.mean())), abs=1e-12)
    assert np.all(bs.draws[:, 1] == 0.0) and bs.estimate[1] == 0.0
    assert (bs.n_seeds, bs.n_images) == a.shape


def test_additive_difference_has_the_closed_form_bootstrap_variance():
    # c_b = u_s (seed effect), c_a = 1 - v_i (image effect): D = c_b - c_a = u_s + v_i - 1
    rng = np.random.default_rng(2)
    S, N = 8, 300
    u, v = rng.random(S) < 0.5, rng.random(N) < 0.3
    b = np.broadcast_to(u[:, None], (S, N))
    a = np.broadcast_to(~v[None, :], (S, N))
    n_boot = 20_000
    bs = paired_bootstrap({"a": a, "b": b}, {"d": ("a", "b")}, n_boot=n_boot, rng=3)
    want = 100**2 * (u.astype(float).var() / S + v.astype(float).var() / N)
    got = bs.draws[:, 0].var()
    assert got == pytest.approx(want, rel=4 * np.sqrt(2 / n_boot))
    # the mean of the replicates is the estimate (the bootstrap is unbiased for a mean)
    assert bs.draws[:, 0].mean() == pytest.approx(bs.estimate[0], abs=4 * np.sqrt(want / n_boot))
    # the two-way standard error sees the same two components (sample variances, no residual)
    se = two_way_se(a, b)
    want_se2 = 100**2 * (u.astype(float).var(ddof=1) / S + v.astype(float).var(ddof=1) / N)
    assert se**2 == pytest.approx(want_se2, rel=1e-12)


def test_one_seed_is_the_image_bootstrap():
    rng = np.random.default_rng(4)
    a, b = _random_correct(rng, S=1, N=400), _random_correct(rng, S=1, N=400, p=0.7)
    n_boot = 20_000
    bs = paired_bootstrap({"a": a, "b": b}, {"d": ("a", "b")}, n_boot=n_boot, rng=5)
    D = (b.astype(float) - a.astype(float))[0]
    want = 100**2 * D.var() / D.size
    assert bs.draws[:, 0].var() == pytest.approx(want, rel=4 * np.sqrt(2 / n_boot))


def test_pairing_removes_the_shared_image_noise():
    # two models that err on the same hard images: the paired interval is much narrower than the
    # interval an unpaired (independent-images) bootstrap would give
    rng = np.random.default_rng(6)
    S, N = 5, 500
    hard = rng.random(N) < 0.1
    a = np.broadcast_to(~hard, (S, N)).copy()
    b = a.copy()
    b[:, :5] = ~b[:, :5]  # b differs from a on five images only
    bs = paired_bootstrap({"a": a, "b": b}, {"d": ("a", "b")}, n_boot=4000, rng=7)
    lo, hi = bs.interval("d")[0]
    assert hi - lo < 2.0  # points; an unpaired comparison at 10% error would span about 7.5
    unpaired_half_width = 1.96 * 100 * np.sqrt(2 * 0.1 * 0.9 / N)
    assert hi - lo < unpaired_half_width


def test_intervals_are_bonferroni_and_nest():
    rng = np.random.default_rng(8)
    mats = {k: _random_correct(rng, p=p) for k, p in (("a", 0.9), ("b", 0.85), ("c", 0.8))}
    bs = paired_bootstrap(mats, {"a-b": ("a", "b"), "a-c": ("a", "c")}, n_boot=5000, rng=9)
    one = bs.interval(level=0.95)
    fam = bs.interval(level=0.95, family=2)
    assert np.all(fam[:, 0] <= one[:, 0]) and np.all(fam[:, 1] >= one[:, 1])
    q = np.quantile(bs.draws[:, 0], [0.0125, 0.9875])
    assert fam[0] == pytest.approx(q)
    assert bs.interval("a-c").shape == (1, 2)


def test_average_keeps_the_replicates():
    rng = np.random.default_rng(10)
    mats = {k: _random_correct(rng, p=p) for k, p in (("a", 0.9), ("b", 0.85), ("c", 0.8))}
    bs = paired_bootstrap(mats, {"a-b": ("a", "b"), "a-c": ("a", "c")}, n_boot=1000, rng=11)
    avg = bs.average(name="mean")
    assert isinstance(avg, PairedBootstrap) and avg.names == ("mean",)
    assert avg.estimate[0] == pytest.approx(bs.estimate.mean())
    assert np.allclose(avg.draws[:, 0], bs.draws.mean(axis=1))


def test_chunking_does_not_change_the_result():
    rng = np.random.default_rng(12)
    mats = {"a": _random_correct(rng), "b": _random_correct(rng)}
    x = paired_bootstrap(mats, {"d": ("a", "b")}, n_boot=700, rng=13, chunk=700)
    y = paired_bootstrap(mats, {"d": ("a", "b")}, n_boot=700, rng=13, chunk=700)
    assert np.array_equal(x.draws, y.draws)


def test_bad_input():
    ok = np.ones((3, 10), dtype=bool)
    with pytest.raises(ValueError, match="same"):
        paired_bootstrap({"a": ok, "b": np.ones((3, 11), bool)}, {"d": ("a", "b")}, n_boot=100)
    with pytest.raises(KeyError, match="'c'"):
        paired_bootstrap({"a": ok}, {"d": ("a", "c")}, n_boot=100)
    with pytest.raises(ValueError, match="0 and 1"):
        paired_bootstrap({"a": ok, "b": np.full((3, 10), 0.5)}, {"d": ("a", "b")}, n_boot=100)
    with pytest.raises(TypeError, match="booleans"):
        paired_bootstrap({"a": ok, "b": np.full((3, 10), "x")}, {"d": ("a", "b")}, n_boot=100)
    with pytest.raises(ValueError, match="at least one"):
        paired_bootstrap({"a": ok}, {}, n_boot=100)
    with pytest.raises(ValueError, match="matrix"):
        paired_bootstrap({"a": np.ones(10, bool)}, {"d": ("a", "a")}, n_boot=100)
    with pytest.raises(ValueError, match="n_boot"):
        paired_bootstrap({"a": ok}, {"d": ("a", "a")}, n_boot=10)
    bs = paired_bootstrap({"a": ok, "b": ok}, {"d": ("a", "b")}, n_boot=400, rng=0)
    with pytest.raises(ValueError, match="level"):
        bs.interval(level=1.5)
    with pytest.raises(ValueError, match="replicates"):
        bs.interval(level=0.95, family=12)  # 400 replicates cannot give a 99.6% interval
    with pytest.raises(KeyError, match="no contrast"):
        bs.interval("e")
    with pytest.raises(ValueError, match="two seeds"):
        two_way_se(np.ones((1, 5), bool), np.ones((1, 5), bool))


# --- the Wilson score interval ---------------------------------------------------------------

from normlib.resampling import wilson_interval  # noqa: E402


@pytest.mark.parametrize("k,n", [(0, 1), (0, 10), (1, 10), (5, 500), (16, 4000), (250, 500), (499, 500), (7, 7)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_interval_matches_scipy_and_inverts_the_score_test(k, n, level):
    from scipy import stats

    lo, hi = wilson_interval(k, n, level=level)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    # each interior bound is where the two-sided score test just rejects: |p - p0| / sqrt(p0 (1 - p0) / n) = z
    z = stats.norm.ppf(0.5 + level / 2)
    for p0 in (lo, hi):
        if 0.0 < p0 < 1.0:
            assert abs(k / n - p0) / np.sqrt(p0 * (1 - p0) / n) == pytest.approx(z, rel=1e-9)


def test_wilson_interval_closed_form_at_zero_successes():
    # k = 0: the upper bound is z^2 / (n + z^2)
    z = 1.959963984540054
    assert wilson_interval(0, 500) == pytest.approx((0.0, z * z / (500 + z * z)), abs=1e-15)
    assert wilson_interval(500, 500) == pytest.approx((1.0 - z * z / (500 + z * z), 1.0), abs=1e-15)


def test_wilson_interval_narrows_with_n_and_widens_with_level():
    w = lambda k, n, lv=0.95: np.subtract(*wilson_interval(k, n, level=lv)[::-1])  # noqa: E731
    assert w(10, 100) > w(100, 1000) > w(1000, 10000)
    assert w(10, 100, 0.8) < w(10, 100, 0.95) < w(10, 100, 0.99)


@pytest.mark.parametrize("args,kw,exc", [
    ((1.0, 10), {}, TypeError), ((1, 10.0), {}, TypeError), ((True, 10), {}, TypeError),
    ((-1, 10), {}, ValueError), ((11, 10), {}, ValueError), ((0, 0), {}, ValueError),
    ((1, 10), {"level": 1.0}, ValueError), ((1, 10), {"level": 0.0}, ValueError),
    ((1, 10), {"level": float("nan")}, ValueError), ((1, 10), {"level": "0.95"}, TypeError),
])
def test_wilson_interval_refuses_bad_input(args, kw, exc):
    with pytest.raises(exc):
        wilson_interval(*args, **kw)
