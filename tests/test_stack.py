"""Tests of normlib.stack: the residual amplification model (Post-Norm, Pre-Norm, DeepNorm).

1. The exact method reproduces every number the article prints (CLAIMS.md C5.7),
   compared as strings at the article's printed precision.
2. The conditional sampler has the distribution of the exact model (per-layer means and
   spreads over many seeds, and a joint test over all layers).
3. Bad input raises with a message saying what was expected.
4. Shapes, dtypes, per-seed consistency, invariances.
5. Post-Norm's stream has norm sqrt(d·var/(var+eps)), i.e. 1 up to eps.
6. The O(d) backward pass equals PyTorch autograd on the same weights.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from numpy.testing import assert_allclose, assert_array_equal

import normlib as nl
import normlib.stack as st_
from normlib import deepnorm_constants
from normlib.stack import StackResult, _exact_draws, simulate_stack

# ----------------------------------------------------------------------------- 1. the article's numbers

# Printed by the article's simulation (seed text, section "把梯度账跑出来"; CLAIMS.md C5.7):
# d = 128, 4 seeds default_rng(0..3), layers 0, 16, 31, 47, 63 of L = 64.
PICK = [0, 16, 31, 47, 63]
ARTICLE_L64 = {
    "post": {
        "hidden_norm": ("{:.2f}", "1.00, 1.00, 1.00, 1.00, 1.00"),
        "hidden_grad": ("{:.2f}", "0.56, 0.59, 0.54, 0.68, 0.82"),
        "param_grad": ("{:.1f}", "8.9, 9.3, 8.8, 10.7, 12.5"),
    },
    "pre": {
        "hidden_norm": ("{:.2f}", "1.24, 3.22, 4.07, 4.93, 5.66"),
        "hidden_grad": ("{:.2f}", "4.73, 1.94, 1.40, 1.13, 1.00"),
        "param_grad": ("{:.1f}", "77.1, 30.8, 23.0, 17.3, 16.6"),
    },
}
# input/output parameter-gradient ratio, param_grad[0] / param_grad[-1] of the seed means
ARTICLE_RATIOS = {
    "post": {16: "0.853", 64: "0.715", 256: "0.167"},
    "pre": {16: "2.209", 64: "4.651", 256: "11.164"},
}


@pytest.fixture(scope="module")
def article_runs():
    return {(p, L): simulate_stack(p, L) for p in ("post", "pre") for L in (16, 64, 256)}


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("quantity", ["hidden_norm", "hidden_grad", "param_grad"])
def test_article_layer_profile_L64(article_runs, placement, quantity):
    fmt, printed = ARTICLE_L64[placement][quantity]
    values = getattr(article_runs[(placement, 64)], quantity)
    assert ", ".join(fmt.format(values[l]) for l in PICK) == printed


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("depth", [16, 64, 256])
def test_article_ratio_vs_depth(article_runs, placement, depth):
    assert f"{article_runs[(placement, depth)].ratio:.3f}" == ARTICLE_RATIOS[placement][depth]


# ----------------------------------------------------------------------------- 2. conditional == exact in distribution

N_SEEDS = 400
D_SMALL, L_SMALL = 32, 16
Z_MAX = 4.5  # per layer and per statistic; two-sided p ≈ 7e-6 under the null


def _chi2_quantile(k: int, z: float) -> float:
    """Wilson–Hilferty approximation of the chi-square quantile with k degrees of freedom."""
    c = 2.0 / (9.0 * k)
    return k * (1.0 - c + z * math.sqrt(c)) ** 3


def _hotelling(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample T² of the per-layer means (samples on axis 0), ~ χ²_L for large samples."""
    scale = np.sqrt(0.5 * (a.var(axis=0) + b.var(axis=0)))
    scale[scale == 0] = 1.0
    a, b = a / scale, b / scale  # T² is invariant to per-layer scaling; this conditions S
    delta = a.mean(axis=0) - b.mean(axis=0)
    S = np.cov(a, rowvar=False) / len(a) + np.cov(b, rowvar=False) / len(b)
    return float(delta @ np.linalg.pinv(S, hermitian=True) @ delta)


CONFIGS = {
    "post": dict(placement="post"),
    "pre": dict(placement="pre"),
    "pre+final_norm": dict(placement="pre", final_norm=True),
    "deepnorm": dict(placement="deepnorm"),
    "deepnorm(1.2,0.8)": dict(placement="deepnorm", alpha=1.2, beta=0.8),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_conditional_matches_exact_in_distribution(name):
    kw = dict(CONFIGS[name], width=D_SMALL, seeds=range(N_SEEDS))
    ex = simulate_stack(depth=L_SMALL, method="exact", **kw)
    co = simulate_stack(depth=L_SMALL, method="conditional", **kw)
    n = N_SEEDS
    # the joint threshold: χ²_L at p = 1e-4, inflated 5% for the estimated covariance
    t2_max = 1.05 * _chi2_quantile(L_SMALL, 3.719)
    for q in ("hidden_norm", "hidden_grad", "param_grad"):
        a = getattr(ex, f"per_seed_{q}")
        b = getattr(co, f"per_seed_{q}")
        # means, layer by layer
        se = np.sqrt(a.var(axis=0, ddof=1) / n + b.var(axis=0, ddof=1) / n)
        diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
        assert np.all(diff <= Z_MAX * se + 1e-12), (q, diff / np.maximum(se, 1e-300))
        # spreads: variance difference over its standard error, sqrt((m4 - var²)/n) per sample
        va, vb = a.var(axis=0), b.var(axis=0)
        m4a = np.mean((a - a.mean(axis=0)) ** 4, axis=0)
        m4b = np.mean((b - b.mean(axis=0)) ** 4, axis=0)
        se_v = np.sqrt((m4a - va**2) / n + (m4b - vb**2) / n)
        assert np.all(np.abs(va - vb) <= Z_MAX * se_v + 1e-20), (q, np.abs(va - vb) / np.maximum(se_v, 1e-300))
        # all layers jointly
        if q != "hidden_norm" or name.startswith("pre"):  # post's norm is 1 to ~1e-6: no spread to test
            assert _hotelling(a, b) <= t2_max, (q, _hotelling(a, b), t2_max)
    # the per-seed ratio, on a log scale (a ratio has heavy tails; at d = 32 a zero
    # top gradient needs all 128 hidden units inactive, probability 2^-128)
    ra, rb = np.log(ex.per_seed_ratio), np.log(co.per_seed_ratio)
    se = math.sqrt(ra.var(ddof=1) / n + rb.var(ddof=1) / n)
    assert abs(ra.mean() - rb.mean()) <= Z_MAX * se


def test_conditional_is_reproducible_and_uses_its_own_stream():
    a = simulate_stack("pre", 8, width=16, n_seeds=2, method="conditional")
    b = simulate_stack("pre", 8, width=16, n_seeds=2, method="conditional")
    c = simulate_stack("pre", 8, width=16, n_seeds=2, method="exact")
    assert_array_equal(a.per_seed_param_grad, b.per_seed_param_grad)
    # same seeds, different random streams: the numbers differ
    assert not np.allclose(a.per_seed_param_grad, c.per_seed_param_grad)


def test_conditional_handles_large_depth():
    res = simulate_stack("post", 10_000, width=64, n_seeds=1, method="conditional")
    for q in (res.hidden_norm, res.hidden_grad, res.param_grad):
        assert np.all(np.isfinite(q))


# ----------------------------------------------------------------------------- 3. bad input

BAD = [
    (dict(placement="mid", depth=4), ValueError, "placement"),
    (dict(placement=3, depth=4), TypeError, "placement"),
    (dict(placement="post", depth=0), ValueError, "depth"),
    (dict(placement="post", depth=-3), ValueError, "depth"),
    (dict(placement="post", depth=4.0), TypeError, "depth"),
    (dict(placement="post", depth=True), TypeError, "depth"),
    (dict(placement="post", depth=4, width=0), ValueError, "width"),
    (dict(placement="post", depth=4, width=8.5), TypeError, "width"),
    (dict(placement="post", depth=4, n_seeds=0), ValueError, "n_seeds"),
    (dict(placement="post", depth=4, n_seeds="4"), TypeError, "n_seeds"),
    (dict(placement="post", depth=4, method="monte-carlo"), ValueError, "method"),
    (dict(placement="post", depth=4, final_norm=True), ValueError, "final_norm"),
    (dict(placement="deepnorm", depth=4, final_norm=True), ValueError, "final_norm"),
    (dict(placement="pre", depth=4, final_norm="yes"), TypeError, "final_norm"),
    (dict(placement="post", depth=4, alpha=2.0), ValueError, "deepnorm"),
    (dict(placement="pre", depth=4, beta=0.5), ValueError, "deepnorm"),
    (dict(placement="deepnorm", depth=4, alpha=0.0), ValueError, "alpha"),
    (dict(placement="deepnorm", depth=4, beta=float("nan")), ValueError, "beta"),
    (dict(placement="deepnorm", depth=4, beta="small"), TypeError, "beta"),
    (dict(placement="post", depth=4, eps=-1e-5), ValueError, "eps"),
    (dict(placement="post", depth=4, eps="tiny"), TypeError, "eps"),
    (dict(placement="post", depth=4, seeds=[]), ValueError, "seed"),
    (dict(placement="post", depth=4, seeds=[0, -1]), ValueError, "seed"),
    (dict(placement="post", depth=4, seeds=[0, 1.5]), TypeError, "seed"),
    (dict(placement="post", depth=4, seeds=7), TypeError, "seeds"),
]


@pytest.mark.parametrize("kwargs, exc, word", BAD)
def test_bad_input_raises_with_a_clear_message(kwargs, exc, word):
    kwargs = dict(kwargs)
    placement, depth = kwargs.pop("placement"), kwargs.pop("depth")
    kwargs.setdefault("width", 8)
    with pytest.raises(exc, match=word):
        simulate_stack(placement, depth, **kwargs)


# ----------------------------------------------------------------------------- 4. shapes and consistency


@pytest.mark.parametrize("method", ["exact", "conditional"])
@pytest.mark.parametrize("placement, final_norm", [("post", False), ("pre", False), ("pre", True), ("deepnorm", False)])
def test_result_shapes_dtypes_and_means(method, placement, final_norm):
    res = simulate_stack(placement, 5, width=8, n_seeds=3, final_norm=final_norm, method=method)
    assert isinstance(res, StackResult)
    assert (res.placement, res.depth, res.width, res.n_seeds, res.final_norm, res.method) == (
        placement, 5, 8, 3, final_norm, method,
    )
    assert res.seeds == (0, 1, 2)
    for q in ("hidden_norm", "hidden_grad", "param_grad"):
        mean, per_seed = getattr(res, q), getattr(res, f"per_seed_{q}")
        assert mean.shape == (5,) and per_seed.shape == (3, 5)
        assert mean.dtype == np.float64 and per_seed.dtype == np.float64
        assert np.all(np.isfinite(per_seed)) and np.all(per_seed > 0)
        assert_allclose(mean, per_seed.mean(axis=0), rtol=1e-15)
        assert not mean.flags.writeable
    assert isinstance(res.ratio, float)
    assert res.ratio == res.param_grad[0] / res.param_grad[-1]
    assert_allclose(res.per_seed_ratio, res.per_seed_param_grad[:, 0] / res.per_seed_param_grad[:, -1])
    with pytest.raises(AttributeError):
        res.depth = 3  # frozen


@pytest.mark.parametrize("method", ["exact", "conditional"])
def test_per_seed_rows_do_not_depend_on_the_other_seeds(method):
    many = simulate_stack("pre", 6, width=8, n_seeds=4, method=method)
    one = simulate_stack("pre", 6, width=8, seeds=[2], method=method)
    assert one.n_seeds == 1 and one.seeds == (2,)
    assert_array_equal(one.per_seed_param_grad[0], many.per_seed_param_grad[2])
    assert_array_equal(one.per_seed_hidden_norm[0], many.per_seed_hidden_norm[2])


def test_deepnorm_defaults_and_reduction_to_post():
    L = 12
    res = simulate_stack("deepnorm", L, width=8, n_seeds=2)
    # L FFN sublayers = 2N sublayers of DeepNet's bound: N = L/2, α = L^(1/4), β = (4L)^(-1/4)
    assert res.alpha == pytest.approx(L**0.25) and res.beta == pytest.approx((4 * L) ** -0.25)
    assert (res.alpha, res.beta) == deepnorm_constants("encoder", N=L / 2)
    # α = β = 1 is exactly Post-Norm, with the same random stream
    a = simulate_stack("deepnorm", L, width=8, n_seeds=2, alpha=1.0, beta=1.0)
    b = simulate_stack("post", L, width=8, n_seeds=2)
    for q in ("per_seed_hidden_norm", "per_seed_hidden_grad", "per_seed_param_grad"):
        assert_array_equal(getattr(a, q), getattr(b, q))


def test_final_norm_changes_only_the_backward():
    a = simulate_stack("pre", 10, width=16, n_seeds=2)
    b = simulate_stack("pre", 10, width=16, n_seeds=2, final_norm=True)
    assert_array_equal(a.per_seed_hidden_norm, b.per_seed_hidden_norm)
    # the top gradient is a unit vector pushed through LN at a stream of norm ~ ‖h_L‖:
    # the gradient that reaches the stream shrinks by about 1/(‖h_L‖/sqrt(d))
    assert np.all(b.per_seed_hidden_grad[:, -1] < a.per_seed_hidden_grad[:, -1])
    assert_allclose(a.per_seed_hidden_grad[:, -1], 1.0, rtol=1e-14)


@pytest.mark.parametrize("method", ["exact", "conditional"])
@pytest.mark.parametrize("placement", ["post", "pre"])
def test_width_one_is_finite(method, placement):
    # d = 1: LayerNorm of a scalar is 0 (the variance is 0; eps keeps it finite)
    res = simulate_stack(placement, 4, width=1, n_seeds=3, method=method)
    assert np.all(np.isfinite(res.per_seed_param_grad))
    assert np.all(np.isfinite(res.per_seed_hidden_grad))


# ----------------------------------------------------------------------------- 5. Post-Norm's stream norm


@pytest.mark.parametrize("method", ["exact", "conditional"])
def test_post_norm_stream_has_unit_rms(method):
    # LN(z) with unit gain has ‖·‖/sqrt(d) = sqrt(var/(var + eps)): exactly 1 for eps = 0,
    # just below 1 for eps > 0 (var of z is O(1) here, so the gap is ~ eps/2).
    res0 = simulate_stack("post", 20, width=32, n_seeds=3, eps=0.0, method=method)
    assert_allclose(res0.per_seed_hidden_norm, 1.0, rtol=0, atol=1e-13)
    res = simulate_stack("post", 20, width=32, n_seeds=3, method=method)
    assert np.all(res.per_seed_hidden_norm <= 1.0)
    assert np.all(res.per_seed_hidden_norm > 1.0 - 1e-4)


def test_post_norm_stream_norm_closed_form_with_large_eps():
    # eps = 1 makes the gap visible; recompute z of layer 0 from the drawn weights
    d, eps = 16, 1.0
    h0, W1, W2, _ = _exact_draws(0, 1, d)
    z = h0 + W2[0] @ np.maximum(W1[0] @ h0, 0)
    expected = math.sqrt(z.var() / (z.var() + eps))
    res = simulate_stack("post", 1, width=d, seeds=[0], eps=eps)
    assert_allclose(res.hidden_norm[0], expected, rtol=1e-14)


# ----------------------------------------------------------------------------- 6. backward vs autograd


def _autograd_reference(placement, depth, d, seed, *, final_norm=False, alpha=1.0, beta=1.0, eps=1e-5):
    """The same model in PyTorch (float64), differentiated by autograd."""
    h0, W1, W2, g = _exact_draws(seed, depth, d, beta=beta)
    ln = lambda x: F.layer_norm(x, (d,), eps=eps)  # noqa: E731
    h = torch.from_numpy(h0)
    W2s = [torch.from_numpy(W2[l]).requires_grad_(True) for l in range(depth)]
    zs, norms = [], []
    for l in range(depth):
        u = ln(h) if placement == "pre" else h
        f = W2s[l] @ torch.relu(torch.from_numpy(W1[l]) @ u)
        z = (h if placement == "pre" else alpha * h) + f
        z.retain_grad()
        zs.append(z)
        h = z if placement == "pre" else ln(z)
        norms.append(float(h.detach().norm()) / math.sqrt(d))
    out = ln(h) if final_norm else h
    (out * torch.from_numpy(g)).sum().backward()
    hidden_grad = [float(z.grad.norm()) for z in zs]
    param_grad = [float(W.grad.norm()) for W in W2s]  # Frobenius norm of ∂ℓ/∂W2
    return np.array(norms), np.array(hidden_grad), np.array(param_grad)


@pytest.mark.parametrize(
    "placement, kw",
    [
        ("post", {}),
        ("pre", {}),
        ("pre", dict(final_norm=True)),
        ("deepnorm", {}),
        ("deepnorm", dict(alpha=1.7, beta=0.6)),
    ],
)
@pytest.mark.parametrize("seed", [0, 5])
def test_exact_backward_matches_autograd(placement, kw, seed):
    d, L = 8, 3
    res = simulate_stack(placement, L, width=d, seeds=[seed], **kw)
    ref_kw = dict(kw)
    if placement == "deepnorm":
        ref_kw.setdefault("alpha", res.alpha)
        ref_kw.setdefault("beta", res.beta)
    norms, hidden_grad, param_grad = _autograd_reference(placement, L, d, seed, **ref_kw)
    assert_allclose(res.hidden_norm, norms, rtol=1e-12)
    assert_allclose(res.hidden_grad, hidden_grad, rtol=1e-10)
    assert_allclose(res.param_grad, param_grad, rtol=1e-10)


def test_exact_backward_matches_explicit_jacobians():
    # Post-Norm, d = 6, L = 2: chain the explicit d x d Jacobians (LN and the FFN) by hand.
    d, L, eps = 6, 2, 1e-5
    h0, W1, W2, g = _exact_draws(3, L, d)
    hs, zs, masks = [h0], [], []
    for l in range(L):
        a1 = W1[l] @ hs[-1]
        zs.append(hs[-1] + W2[l] @ np.maximum(a1, 0))
        masks.append((a1 > 0).astype(float))
        hs.append(nl.layer_norm(zs[-1], eps=eps))
    grads = []
    for l in range(L - 1, -1, -1):
        delta = nl.layer_norm_jacobian(zs[l], eps=eps).T @ g
        grads.append(np.linalg.norm(delta))
        J_block = np.eye(d) + W2[l] @ np.diag(masks[l]) @ W1[l]  # dz/dh
        g = J_block.T @ delta
    res = simulate_stack("post", L, width=d, seeds=[3], eps=eps)
    assert_allclose(res.hidden_grad, grads[::-1], rtol=1e-12)


def test_public_names():
    assert nl.simulate_stack is simulate_stack and nl.StackResult is StackResult
    assert "simulate_stack" in nl.__all__ and "StackResult" in nl.__all__


# ----------------------------------------------------------------------------- 2b. one block, conditioning step


def _block_samples(d, beta, n, rng):
    """Exact draws of one FFN block at a fixed input u, with a gradient δ correlated with f.

    Returns the forward summaries the conditional step uses and the exact W1ᵀ(m ⊙ W2ᵀδ).
    δ = f + e puts a large f·δ in, so the conditioning terms dominate (with δ independent
    of f they are O(1/d) effects that a whole-stack test cannot resolve).
    """
    k = 4 * d
    u = 1.7 * rng.standard_normal(d)
    e = 0.5 * rng.standard_normal(d)
    W1 = rng.standard_normal((n, k, d)) * (beta / math.sqrt(d))
    W2 = rng.standard_normal((n, d, k)) * (beta / math.sqrt(k))
    a1 = W1 @ u  # (n, k)
    r = np.maximum(a1, 0.0)
    f = np.einsum("nij,nj->ni", W2, r)  # (n, d)
    delta = f + e
    v = np.einsum("nij,ni->nj", W2, delta) * (a1 > 0)  # (n, k)
    w = np.einsum("nij,ni->nj", W1, v)  # (n, d)
    return u, e, r, f, delta, w


@pytest.mark.parametrize("beta", [1.0, 0.6])
def test_conditional_block_step_matches_exact(beta):
    from normlib.stack import _branch_vjp_given_forward

    d, n = 6, 20_000
    rng = np.random.default_rng(11)
    u, e, r, f, delta, w_exact = _block_samples(d, beta, n, rng)
    u_sq = float(u @ u)
    active = (r > 0).sum(axis=1)
    chi = rng.gamma(np.maximum(active - 1, 0) / 2.0, 2.0)
    zeta = rng.standard_normal((n, d))
    w_cond = np.array([
        _branch_vjp_given_forward(u, u_sq, float(r[i] @ r[i]), f[i], delta[i], chi[i], zeta[i], beta)
        for i in range(n)
    ])
    # identity: u·W1ᵀv = a1·v = f·δ, sample by sample, in both
    f_delta = np.einsum("ni,ni->n", f, delta)
    assert_allclose(w_exact @ u, f_delta, rtol=1e-9, atol=1e-12)
    assert_allclose(w_cond @ u, f_delta, rtol=1e-9, atol=1e-12)
    # the distribution of W1ᵀv given the forward pass: compare several statistics
    x = np.arange(1.0, d + 1)
    p_perp = np.eye(d) - np.outer(u, u) / u_sq
    stats = {
        "‖w‖²": lambda w: np.einsum("ni,ni->n", w, w),
        "‖P⊥u w‖²": lambda w: np.einsum("ni,ni->n", w @ p_perp, w @ p_perp),
        "e·w": lambda w: w @ e,
        "(x·w)²": lambda w: (w @ x) ** 2,
        "(δ·w)": lambda w: np.einsum("ni,ni->n", w, delta),
    }
    for name, stat in stats.items():
        a, b = stat(w_exact), stat(w_cond)
        se = math.sqrt(a.var(ddof=1) / n + b.var(ddof=1) / n)
        assert abs(a.mean() - b.mean()) <= Z_MAX * se, (name, a.mean(), b.mean(), (a.mean() - b.mean()) / se)


def test_exact_redraws_weights_above_the_memory_limit(monkeypatch):
    import normlib.stack as st

    stored = simulate_stack("pre", 6, width=8, n_seeds=2, final_norm=True)
    monkeypatch.setattr(st, "EXACT_STORE_LIMIT", 0)  # force the redraw path
    redrawn = simulate_stack("pre", 6, width=8, n_seeds=2, final_norm=True)
    for q in ("per_seed_hidden_norm", "per_seed_hidden_grad", "per_seed_param_grad"):
        assert_array_equal(getattr(stored, q), getattr(redrawn, q))


# ----------------------------------------------------------------------------- 7. the measuring helpers' arguments
# (what they measure is never asserted: timings belong to one machine at one moment)

BAD_MEASURE = [
    (lambda: st_.measure_conditional(4, 8, repeats=0), ValueError, "repeats"),  # used to give a NaN median
    (lambda: st_.measure_conditional(0, 8), ValueError, "depth"),
    (lambda: st_.measure_conditional(4, 8, placement="middle"), ValueError, "placement"),
    (lambda: st_.explicit_cost(4, 8, probe_widths=()), ValueError, "probe_widths"),  # used to be an IndexError
    (lambda: st_.explicit_cost(4, 8, probe_widths=(8.5,)), TypeError, "probe width"),
    (lambda: st_.explicit_cost(4, 8, probe_depth=0), ValueError, "probe_depth"),
    (lambda: st_.time_exact_vs_draws((("post", 2),), width=4, repeats=0), ValueError, "repeats"),
    (lambda: st_.time_exact_vs_draws((), width=4), ValueError, "runs"),
    (lambda: st_.time_exact_vs_draws((("side", 2),), width=4), ValueError, "placement"),
]


@pytest.mark.parametrize("call, exc, word", BAD_MEASURE)
def test_measuring_helpers_refuse_bad_arguments(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


def test_measuring_helpers_return_their_dataclasses():
    """Tiny sizes: the fields are filled and consistent (no statement about speed)."""
    t = st_.time_exact_vs_draws((("post", 2), ("pre", 2)), width=4, n_seeds=1, repeats=1)
    assert isinstance(t, st_.ExactTiming) and t.repeats == 1 and t.exact_s >= 0 and t.draws_s >= 0
    c = st_.measure_conditional(3, 8, repeats=1)
    assert (c.depth, c.width) == (3, 8) and c.peak_bytes > 0
    e = st_.explicit_cost(10, 16, probe_widths=(4, 8), probe_depth=1, repeats=1)
    assert e.weight_bytes == 10 * 8 * 16 * 16 * 8 and e.probe_widths == (4, 8)
    assert e.seconds == pytest.approx(e.seconds_per_weight * 10 * 8 * 16 * 16)


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_ratio_of_a_width_one_stack_raises_instead_of_nan(placement):
    """d = 1: LN of one feature is constant, every parameter gradient is 0 and 0/0 used to return NaN."""
    res = simulate_stack(placement, 3, width=1, n_seeds=2)
    assert np.all(res.per_seed_param_grad == 0.0)
    with pytest.raises(ValueError, match="ratio is undefined.*width=1"):
        res.ratio
    with pytest.raises(ValueError, match="ratio is undefined"):
        res.per_seed_ratio
