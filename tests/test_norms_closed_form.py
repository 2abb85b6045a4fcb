"""Oracle 1 of 3: closed forms, i.e. small vectors whose outputs are computed by hand.

Every expected value below is written as exact arithmetic (fractions, square roots)
derived in the comment next to it, never copied from normlib's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import normlib as nl

# Tolerances, one place. Hand values are exact reals; normlib computes in float64, so
# the only error is a few roundings of O(1) numbers: a few ulps (u = 1.1e-16).
TOL = {
    "float64": dict(rtol=1e-14, atol=1e-15),
}

S32 = math.sqrt(1.5)  # LN([1,2,3]) with eps=0: mean 2, var 2/3, so (x-2)/sqrt(2/3) = ±sqrt(3/2)


# ----------------------------------------------------------------------------- LayerNorm


def test_layer_norm_123_eps0():
    """mean([1,2,3]) = 2, biased var = 2/3, y = (x-2)/sqrt(2/3) = [-sqrt(1.5), 0, sqrt(1.5)]."""
    y = nl.layer_norm(np.array([1.0, 2.0, 3.0]), eps=0.0)
    assert_allclose(y, [-S32, 0.0, S32], **TOL["float64"])


def test_layer_norm_123_eps_makes_unit_denominator():
    """var = 2/3, eps = 1/3, so sqrt(var + eps) = 1 and y = x - mean = [-1, 0, 1] (eps inside the root)."""
    y = nl.layer_norm(np.array([1.0, 2.0, 3.0]), eps=1.0 / 3.0)
    assert_allclose(y, [-1.0, 0.0, 1.0], **TOL["float64"])


def test_layer_norm_eps_is_inside_the_square_root():
    """With eps outside the root, (x - mu)/(sqrt(var) + eps), [1,2,3] and eps=1/3 would give ±0.8165/1.1498; inside gives ±1."""
    y = nl.layer_norm(np.array([1.0, 2.0, 3.0]), eps=1.0 / 3.0)
    outside = 1.0 / (math.sqrt(2.0 / 3.0) + 1.0 / 3.0)
    assert abs(y[2] - outside) > 0.1
    assert_allclose(y[2], 1.0, **TOL["float64"])


def test_layer_norm_weight_and_bias():
    """x_hat = [-1, 0, 1] (eps = 1/3 as above); gamma = [2,3,4], beta = [1,1,1] give [-1, 1, 5]."""
    y = nl.layer_norm(np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0]), np.ones(3), eps=1.0 / 3.0)
    assert_allclose(y, [-1.0, 1.0, 5.0], **TOL["float64"])


def test_layer_norm_uses_biased_variance():
    """[0, 2]: mean 1, biased var 1 so y = [-1, 1]; the unbiased var 2 would give ±1/sqrt(2)."""
    assert_allclose(nl.layer_norm(np.array([0.0, 2.0]), eps=0.0), [-1.0, 1.0], **TOL["float64"])


def test_layer_norm_stats_123():
    """mean = 2, rstd = 1/sqrt(2/3) = sqrt(1.5), x_hat = [-sqrt(1.5), 0, sqrt(1.5)]."""
    mean, rstd, x_hat = nl.layer_norm_stats(np.array([1.0, 2.0, 3.0]), eps=0.0)
    assert mean.shape == (1,) and rstd.shape == (1,)
    assert_allclose(mean, [2.0], **TOL["float64"])
    assert_allclose(rstd, [S32], **TOL["float64"])
    assert_allclose(x_hat, [-S32, 0.0, S32], **TOL["float64"])


def test_layer_norm_rows_are_independent():
    """Two rows of a batch: [1,2,3] -> ±sqrt(1.5) and [10, 10, 40] (mean 20, var 200) -> [-1,-1,2]/sqrt(2)."""
    x = np.array([[1.0, 2.0, 3.0], [10.0, 10.0, 40.0]])
    y = nl.layer_norm(x, eps=0.0)
    r2 = 1.0 / math.sqrt(2.0)
    assert_allclose(y, [[-S32, 0.0, S32], [-r2, -r2, 2 * r2]], **TOL["float64"])


# ----------------------------------------------------------------------------- RMSNorm


def test_rms_norm_34_eps0():
    """mean([9,16]) = 12.5, RMS = sqrt(12.5) = 5/sqrt(2), so y = [3,4]·sqrt(2)/5."""
    y = nl.rms_norm(np.array([3.0, 4.0]), eps=0.0)
    assert_allclose(y, [3 * math.sqrt(2) / 5, 4 * math.sqrt(2) / 5], **TOL["float64"])


def test_rms_norm_eps_inside_the_root():
    """ms([3,4]) = 12.5; eps = 0.5 makes ms + eps = 13, so y = [3,4]/sqrt(13)."""
    y = nl.rms_norm(np.array([3.0, 4.0]), eps=0.5)
    assert_allclose(y, np.array([3.0, 4.0]) / math.sqrt(13.0), **TOL["float64"])


def test_rms_norm_does_not_centre():
    """[2, 2, 2, 2]: RMS = 2 so RMSNorm gives ones (LayerNorm would give zeros)."""
    assert_allclose(nl.rms_norm(np.full(4, 2.0), eps=0.0), np.ones(4), **TOL["float64"])


def test_rms_norm_weight():
    """[2, -2]: RMS = 2, x/RMS = [1, -1]; gain [3, 5] gives [3, -5]."""
    y = nl.rms_norm(np.array([2.0, -2.0]), np.array([3.0, 5.0]), eps=0.0)
    assert_allclose(y, [3.0, -5.0], **TOL["float64"])


def test_rms_norm_stats_34():
    """rrms = 1/sqrt(12.5) = sqrt(2)/5 = 0.2828..., x_hat = [3,4]·rrms."""
    rrms, x_hat = nl.rms_norm_stats(np.array([3.0, 4.0]), eps=0.0)
    assert_allclose(rrms, [math.sqrt(2) / 5], **TOL["float64"])
    assert_allclose(x_hat, [3 * math.sqrt(2) / 5, 4 * math.sqrt(2) / 5], **TOL["float64"])


def test_gemma_zero_centred_weight_at_init_is_plain_rmsnorm():
    """(1 + w) with w = 0 is the unit gain: [3, 4] -> [3,4]·sqrt(2)/5 as without a weight (C8.5)."""
    y = nl.rms_norm(np.array([3.0, 4.0]), 1.0 + np.zeros(2), eps=0.0)
    assert_allclose(y, [3 * math.sqrt(2) / 5, 4 * math.sqrt(2) / 5], **TOL["float64"])


# ----------------------------------------------------------------------------- pRMSNorm


@pytest.mark.parametrize(
    ("p", "expected_divisor"),
    [
        (0.25, 3.0),  # k = ceil(0.25·4) = 1: RMS of [3] is 3
        (0.5, math.sqrt(12.5)),  # k = 2: RMS of [3, 4] is sqrt(12.5)
        (0.3, math.sqrt(12.5)),  # k = ceil(1.2) = 2
        (1.0, math.sqrt((9 + 16 + 144 + 144) / 4)),  # k = 4: the full RMS, sqrt(78.25)
    ],
    ids=["p=0.25->k=1", "p=0.5->k=2", "p=0.3->k=2", "p=1->k=d"],
)
def test_partial_rms_norm_uses_first_k_features(p, expected_divisor):
    """x = [3, 4, 12, -12]; the RMS is taken over the first ceil(p·d) features only, then divides all of them."""
    x = np.array([3.0, 4.0, 12.0, -12.0])
    assert_allclose(nl.partial_rms_norm(x, p=p, eps=0.0), x / expected_divisor, **TOL["float64"])


def test_partial_rms_norm_k_is_robust_to_float_rounding():
    """p = 0.07, d = 100: p·d = 7.000000000000001 in floats, but k must be 7 (the RMS of seven ones is 1)."""
    x = np.concatenate([np.ones(7), np.full(93, 5.0)])
    assert 0.07 * 100 > 7  # the rounding trap this test is about
    assert_allclose(nl.partial_rms_norm(x, p=0.07, eps=0.0), x, **TOL["float64"])


def test_partial_rms_norm_paper_fraction():
    """p = 6.25% of d = 512 features is k = 32; x = ones(32) then 100s: the divisor is 1."""
    x = np.concatenate([np.ones(32), np.full(480, 100.0)])
    assert_allclose(nl.partial_rms_norm(x, eps=0.0), x, **TOL["float64"])


# ----------------------------------------------------------------------------- Jacobians and VJPs

# LN Jacobian at x = [1,2,3], eps = 1/3: rstd = 1, x_hat = [-1,0,1], d = 3:
# J = I - 11ᵀ/3 - x_hat x_hatᵀ/3 = [[1/3,-1/3,0],[-1/3,2/3,-1/3],[0,-1/3,1/3]] (a path Laplacian / 3).
J_LN_123 = np.array([[1.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]]) / 3.0

# RMS Jacobian at x = [3,4], eps = 0: rrms = sqrt(2)/5, x_hat x_hatᵀ/d = [[9,12],[12,16]]/25,
# J = rrms·(I - x_hat x_hatᵀ/2) = rrms·[[16,-12],[-12,9]]/25.
J_RMS_34 = (math.sqrt(2) / 5) * np.array([[16.0, -12.0], [-12.0, 9.0]]) / 25.0


def test_layer_norm_jacobian_123():
    """The hand-computed matrix J_LN_123 above."""
    assert_allclose(nl.layer_norm_jacobian(np.array([1.0, 2.0, 3.0]), eps=1.0 / 3.0), J_LN_123, **TOL["float64"])


def test_rms_norm_jacobian_34():
    """The hand-computed matrix J_RMS_34 above."""
    assert_allclose(nl.rms_norm_jacobian(np.array([3.0, 4.0]), eps=0.0), J_RMS_34, **TOL["float64"])


@pytest.mark.parametrize("k", [0, 1, 2])
def test_layer_norm_vjp_unit_vectors_pick_rows(k):
    """dy = e_k gives e_kᵀ J = row k of J_LN_123."""
    dy = np.zeros(3)
    dy[k] = 1.0
    dx = nl.layer_norm_vjp(np.array([1.0, 2.0, 3.0]), dy, eps=1.0 / 3.0)
    assert_allclose(dx, J_LN_123[k], **TOL["float64"])


def test_layer_norm_vjp_weight_scales_dy():
    """With gain gamma the VJP is (gamma ⊙ dy)ᵀ J: gamma = [2,3,4], dy = [1,1,0] -> 2·row0 + 3·row1 = [-1/3, 4/3, -1]."""
    dx = nl.layer_norm_vjp(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.0]), np.array([2.0, 3.0, 4.0]), eps=1.0 / 3.0)
    assert_allclose(dx, [-1.0 / 3.0, 4.0 / 3.0, -1.0], **TOL["float64"])


def test_rms_norm_vjp_34():
    """dy = [1, 0] with gain [2, 7] gives 2·row 0 of J_RMS_34 = 2·(sqrt(2)/5)·[16, -12]/25."""
    dx = nl.rms_norm_vjp(np.array([3.0, 4.0]), np.array([1.0, 0.0]), np.array([2.0, 7.0]), eps=0.0)
    assert_allclose(dx, 2 * J_RMS_34[0], **TOL["float64"])


def test_layer_norm_vjp_of_constant_dy_is_zero():
    """LN output has zero mean whatever x is, so moving every output equally has no gradient: 1ᵀJ = 0."""
    dx = nl.layer_norm_vjp(np.array([0.5, -1.0, 4.0, 2.0]), np.ones(4), eps=1e-5)
    assert_allclose(dx, np.zeros(4), rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------- BatchNorm


def test_batch_norm_training_closed_form():
    """Feature column [1, 3]: batch mean 2, biased var 1, eps = 0 -> y = [-1, 1]; gamma 2, beta 5 -> [3, 7]."""
    r = nl.batch_norm(np.array([[1.0], [3.0]]), np.array([2.0]), np.array([5.0]), training=True, eps=0.0)
    assert_allclose(r.y, [[3.0], [7.0]], **TOL["float64"])
    assert_allclose(r.batch_mean, [2.0], **TOL["float64"])
    assert_allclose(r.batch_var, [1.0], **TOL["float64"])


def test_batch_norm_running_update_closed_form():
    """From running (0, 1), momentum 0.1, batch [1, 3]: mean 0.9·0 + 0.1·2 = 0.2; var 0.9·1 + 0.1·2 = 1.1 (unbiased var 2)."""
    r = nl.batch_norm(
        np.array([[1.0], [3.0]]), training=True, running_mean=np.zeros(1), running_var=np.ones(1), momentum=0.1, eps=0.0
    )
    assert_allclose(r.running_mean, [0.2], **TOL["float64"])
    assert_allclose(r.running_var, [1.1], **TOL["float64"])


def test_batch_norm_eval_closed_form():
    """Eval with running mean 2 and var 4, eps = 0: x = 4 -> (4 - 2)/2 = 1, x = 0 -> -1; running stats unchanged."""
    rm, rv = np.array([2.0]), np.array([4.0])
    r = nl.batch_norm(np.array([[4.0], [0.0]]), training=False, running_mean=rm, running_var=rv, eps=0.0)
    assert_allclose(r.y, [[1.0], [-1.0]], **TOL["float64"])
    assert r.batch_mean is None and r.batch_var is None
    assert_allclose(r.running_mean, rm, rtol=0, atol=0)
    assert_allclose(r.running_var, rv, rtol=0, atol=0)


def test_batch_norm_pools_all_leading_axes():
    """x of shape (2, 2, 1) holding 1, 3, 5, 7: one feature, mean 4, biased var 5 -> (x - 4)/sqrt(5)."""
    x = np.array([1.0, 3.0, 5.0, 7.0]).reshape(2, 2, 1)
    r = nl.batch_norm(x, training=True, eps=0.0)
    assert r.y.shape == (2, 2, 1)
    assert_allclose(r.y.ravel(), (np.array([1.0, 3.0, 5.0, 7.0]) - 4.0) / math.sqrt(5.0), **TOL["float64"])
