"""Property tests (hypothesis) for the invariances and identities the book states.

Inputs are bounded (|x| <= 1e3, d <= 16) and every tolerance is derived from the
float64 unit roundoff u = 2**-53 and the conditioning of the case (``rstd``), so the
tests stay tight on well-conditioned draws without failing on nearly constant ones.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose

import normlib as nl

U = 2.0**-53  # float64 unit roundoff
# Safety factor on u for a handful of roundings plus a pairwise sum over d <= 16 terms.
C = 64.0

SETTINGS = settings(max_examples=50, deadline=None)

dims = st.integers(min_value=2, max_value=16)
eps_pos = st.sampled_from([1e-12, 1e-5, 1e-2, 1.0])
eps_any = st.sampled_from([0.0, 1e-12, 1e-5, 1e-2, 1.0])


def vectors(d, lo=-1e3, hi=1e3):
    """float64 vectors of length d, without subnormals and without hypothesis's 'fill' shortcut."""
    el = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    return arrays(np.float64, (d,), elements=el, fill=st.nothing())


@st.composite
def spread_vectors(draw, min_rel_std=1e-3):
    """A vector whose standard deviation is not tiny next to its magnitude (so eps=0 is well defined)."""
    d = draw(dims)
    x = draw(vectors(d))
    assume(np.std(x) > min_rel_std * (1.0 + np.max(np.abs(x))))
    return x


@st.composite
def vector_pairs(draw):
    """(x, dy) of equal length d."""
    d = draw(dims)
    return draw(vectors(d)), draw(vectors(d, -10, 10))


def _rstd(x, eps):
    return 1.0 / np.sqrt(np.var(x) + eps)


def _rrms(x, eps):
    return 1.0 / np.sqrt(np.mean(x * x) + eps)


# ----------------------------------------------------------------------------- invariances (C2.3, C2.4)


@SETTINGS
@given(x=spread_vectors(0.0), c=st.floats(-1e3, 1e3), eps=eps_any)
def test_layer_norm_shift_invariance(x, c, eps):
    """LN(x + c) = LN(x) exactly in real arithmetic; rounding of x + c costs u·(|x| + |c|) per entry, amplified by rstd."""
    assume(eps > 0 or np.std(x) > 1e-6)
    rstd = _rstd(x, eps)
    atol = C * U * (np.max(np.abs(x)) + abs(c)) * rstd * (1 + np.sqrt(x.size))
    assert_allclose(nl.layer_norm(x + c, eps=eps), nl.layer_norm(x, eps=eps), rtol=0, atol=atol)


@SETTINGS
@given(x=spread_vectors(), a=st.floats(1e-3, 1e3))
def test_layer_norm_scale_invariance_eps0(x, a):
    """With eps = 0, LN(a·x) = LN(x) for a > 0 up to rounding (relative error ~u·max|x|/std)."""
    atol = C * U * np.max(np.abs(x)) / np.std(x) * (1 + np.sqrt(x.size))
    assert_allclose(nl.layer_norm(a * x, eps=0.0), nl.layer_norm(x, eps=0.0), rtol=0, atol=atol)


@SETTINGS
@given(x=spread_vectors(), a=st.floats(1e-3, 1e3))
def test_rms_norm_scale_invariance_eps0(x, a):
    """With eps = 0, RMSNorm(a·x) = RMSNorm(x) for a > 0: x/RMS(x) is homogeneous of degree 0."""
    assert_allclose(nl.rms_norm(a * x, eps=0.0), nl.rms_norm(x, eps=0.0), rtol=C * U, atol=C * U)


@SETTINGS
@given(x=spread_vectors(), a=st.floats(1e-2, 1e2), eps=eps_pos)
def test_layer_norm_scale_residual_with_eps_has_exact_form(x, a, eps):
    """With eps > 0: LN(a·x) = LN(x)·sqrt((v + eps)/(v + eps/a²)), v = var(x) (divide num. and den. by a)."""
    v = np.var(x)
    factor = np.sqrt((v + eps) / (v + eps / a**2))
    assert_allclose(nl.layer_norm(a * x, eps=eps), nl.layer_norm(x, eps=eps) * factor, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(x=spread_vectors(), a=st.floats(1e-2, 1e2), eps=eps_pos)
def test_rms_norm_scale_residual_with_eps_has_exact_form(x, a, eps):
    """With eps > 0: RMSNorm(a·x) = RMSNorm(x)·sqrt((ms + eps)/(ms + eps/a²)), ms = mean(x²)."""
    ms = np.mean(x * x)
    factor = np.sqrt((ms + eps) / (ms + eps / a**2))
    assert_allclose(nl.rms_norm(a * x, eps=eps), nl.rms_norm(x, eps=eps) * factor, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- output statistics


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_layer_norm_output_mean_zero_variance_shrunk_by_eps(x, eps):
    """mean(LN(x)) = 0 and var(LN(x)) = v/(v + eps): x_hat = (x - mu)·rstd, so var(x_hat) = v·rstd²."""
    v = np.var(x)
    y = nl.layer_norm(x, eps=eps)
    rstd = _rstd(x, eps)
    assert abs(np.mean(y)) <= C * U * (1 + np.max(np.abs(x)) * rstd)
    assert_allclose(np.var(y), v / (v + eps), rtol=1e-12, atol=C * U * (1 + np.max(np.abs(x)) * rstd) ** 2)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_rms_norm_output_mean_square(x, eps):
    """mean(RMSNorm(x)²) = ms/(ms + eps), ms = mean(x²): the unit-RMS output, shrunk by eps."""
    ms = np.mean(x * x)
    assume(ms > 0)
    y = nl.rms_norm(x, eps=eps)
    assert_allclose(np.mean(y * y), ms / (ms + eps), rtol=1e-12, atol=1e-15)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_partial_rms_norm_with_p1_is_rms_norm(x, eps):
    """p = 1 uses all d features, so pRMSNorm is RMSNorm (k = d)."""
    assert_allclose(nl.partial_rms_norm(x, p=1.0, eps=eps), nl.rms_norm(x, eps=eps), rtol=1e-14, atol=1e-300)


# ----------------------------------------------------------------------------- VJP = dyᵀ J


@SETTINGS
@given(xd=vector_pairs(), eps=eps_pos, with_weight=st.booleans())
def test_layer_norm_vjp_is_dy_transpose_J(xd, eps, with_weight):
    """The O(d) VJP equals (w ⊙ dy)ᵀ J with the explicit Jacobian (the bias does not enter)."""
    x, dy = xd
    w = np.linspace(0.5, 2.0, x.size) if with_weight else None
    g = dy if w is None else w * dy
    ref = g @ nl.layer_norm_jacobian(x, eps=eps)
    scale = _rstd(x, eps) * np.sum(np.abs(g)) * (1 + np.max(np.abs(nl.layer_norm(x, eps=eps)))) ** 2
    assert_allclose(nl.layer_norm_vjp(x, dy, w, eps=eps), ref, rtol=1e-12, atol=C * U * scale)


@SETTINGS
@given(xd=vector_pairs(), eps=eps_pos, with_weight=st.booleans())
def test_rms_norm_vjp_is_dy_transpose_J(xd, eps, with_weight):
    """The O(d) VJP equals (w ⊙ dy)ᵀ J with the explicit RMSNorm Jacobian."""
    x, dy = xd
    w = np.linspace(0.5, 2.0, x.size) if with_weight else None
    g = dy if w is None else w * dy
    ref = g @ nl.rms_norm_jacobian(x, eps=eps)
    scale = _rrms(x, eps) * np.sum(np.abs(g)) * (1 + np.max(np.abs(nl.rms_norm(x, eps=eps)))) ** 2
    assert_allclose(nl.rms_norm_vjp(x, dy, w, eps=eps), ref, rtol=1e-12, atol=C * U * scale)


# ----------------------------------------------------------------------------- Jacobian structure (C4.1, C4.3)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_layer_norm_jacobian_kills_the_constant_direction(x, eps):
    """J·1 = rstd·(1 - 1 - x_hat·mean(x_hat)) = 0 because mean(x_hat) = 0."""
    J = nl.layer_norm_jacobian(x, eps=eps)
    atol = C * U * _rstd(x, eps) * x.size * (1 + np.max(np.abs(x)) * _rstd(x, eps))
    assert_allclose(J @ np.ones(x.size), 0.0, rtol=0, atol=atol)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_layer_norm_jacobian_is_symmetric(x, eps):
    """J = rstd·(I - 11ᵀ/d - x_hat x_hatᵀ/d) is symmetric (every term is)."""
    J = nl.layer_norm_jacobian(x, eps=eps)
    assert_allclose(J, J.T, rtol=0, atol=C * U * np.max(np.abs(J)))


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_layer_norm_jacobian_on_x_hat(x, eps):
    """J·x_hat = rstd·x_hat·(1 - mean(x_hat²)) = rstd·x_hat·eps/(v + eps): near zero, exactly zero only at eps = 0."""
    v = np.var(x)
    rstd = _rstd(x, eps)
    x_hat = (x - np.mean(x)) * rstd
    J = nl.layer_norm_jacobian(x, eps=eps)
    expected = rstd * x_hat * eps / (v + eps)
    atol = C * U * rstd * x.size * (1 + np.max(np.abs(x)) * rstd) ** 2
    assert_allclose(J @ x_hat, expected, rtol=1e-10, atol=atol)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_rms_norm_jacobian_on_x(x, eps):
    """J·x = rrms·(x - x_hat·(x_hat·x)/d) = rrms·x·eps/(ms + eps), ms = mean(x²)."""
    ms = np.mean(x * x)
    rrms = _rrms(x, eps)
    J = nl.rms_norm_jacobian(x, eps=eps)
    expected = rrms * x * eps / (ms + eps)
    atol = C * U * rrms * x.size * np.max(np.abs(x)) * (1 + np.max(np.abs(x)) * rrms) ** 2
    assert_allclose(J @ x, expected, rtol=1e-10, atol=atol)


@SETTINGS
@given(x=spread_vectors(0.0), eps=eps_pos)
def test_rms_norm_jacobian_is_symmetric(x, eps):
    """J = rrms·(I - x_hat x_hatᵀ/d) is symmetric."""
    J = nl.rms_norm_jacobian(x, eps=eps)
    assert_allclose(J, J.T, rtol=0, atol=C * U * np.max(np.abs(J)))
