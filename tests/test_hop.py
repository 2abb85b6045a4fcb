"""normlib.hop: one backward hop through a Post-Norm or a Pre-Norm block, against three oracles.

The backward passes are checked against the explicit Jacobians (normlib.layer_norm_jacobian and the
FFN's W2 D W1), against central finite differences of the forward block (float64) and against PyTorch
autograd; the closed forms the chapter derives (post_hop_leading_order, pre_hop_mean_square) against
their special cases and a Monte-Carlo estimate; and the sampler against the single-draw functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import normlib as nl
from normlib import hop

ACTS = hop.ACTIVATIONS
EPS = 1e-5


def _forward(name, placement, W1, W2, eps):
    """The block as a function of its input, for finite differences."""
    def phi(a):
        return hop.activation(name, a)[0]

    if placement == "post":
        return lambda h: nl.layer_norm(h + W2 @ phi(W1 @ h), eps=eps)
    return lambda h: h + W2 @ phi(W1 @ nl.layer_norm(h, eps=eps))


# ----------------------------------------------------------------------------- activations


@pytest.mark.parametrize("name", ["gelu", "tanh"])
def test_activation_derivative_matches_finite_differences(name):
    a = np.linspace(-4.0, 4.0, 41)
    h = 1e-6
    fd = (hop.activation(name, a + h)[0] - hop.activation(name, a - h)[0]) / (2 * h)
    assert_allclose(hop.activation(name, a)[1], fd, atol=1e-8)


def test_gelu_is_x_times_the_normal_cdf():
    """GELU(1) = Φ(1) = 0.8413447460685429 (the normal CDF at 1), GELU(0) = 0, GELU'(0) = 1/2."""
    phi, dphi = hop.activation("gelu", np.array([0.0, 1.0]))
    assert_allclose(phi, [0.0, 0.8413447460685429], rtol=1e-14)
    assert_allclose(dphi[0], 0.5, rtol=1e-14)


def test_relu_values_and_its_derivative_at_zero():
    phi, dphi = hop.activation("relu", np.array([-2.0, 0.0, 3.0]))
    assert_allclose(phi, [0.0, 0.0, 3.0])
    assert_allclose(dphi, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", ["gelu", "tanh"])
def test_gaussian_moments_against_a_fine_integral(name):
    """Q, P, R against the trapezoid rule on [-12c, 12c] with a fine grid (error far below 1e-9; the
    smooth activations only: ReLU's φ′ jumps at 0, and its closed forms are tested below)."""
    c = 1.7
    xi = np.linspace(-12.0, 12.0, 240_001)
    w = np.exp(-0.5 * xi * xi) / math.sqrt(2 * math.pi)
    phi, dphi = hop.activation(name, c * xi)
    want = [np.trapezoid(w * f, xi) for f in (phi**2, dphi**2, dphi**2 * xi**2)]
    assert_allclose(hop.gaussian_moments(name, scale=c), want, rtol=1e-8, atol=1e-10)


def test_relu_moments_are_the_closed_forms_and_homogeneous_moments_balance():
    """For a positively homogeneous φ, E φ(a)² = E a²φ′(a)² = c² E φ′(a)²: at c = 1, Q = P."""
    Q, P, R = hop.gaussian_moments("relu", scale=1.0)
    assert Q == P == R == 0.5
    for name in ("gelu", "tanh"):  # not homogeneous: the two differ
        Q, P, _ = hop.gaussian_moments(name)
        assert abs(Q - P) > 0.02


@pytest.mark.parametrize("bad", ["swish", 3, None])
def test_unknown_activation_is_refused(bad):
    with pytest.raises((TypeError, ValueError), match="activation"):
        hop.activation(bad, np.zeros(2))


def test_activation_refuses_non_finite_and_non_real():
    with pytest.raises(ValueError, match="NaN or infinite"):
        hop.activation("relu", np.array([np.nan]))
    with pytest.raises(TypeError, match="real"):
        hop.activation("relu", np.array([1 + 1j]))


# ----------------------------------------------------------------------------- one block: three oracles


@pytest.mark.parametrize("name", ACTS)
def test_post_and_pre_hop_equal_the_explicit_jacobians(name):
    """((I + W2 D W1)ᵀ J_zᵀ) g and (I + W2 D W1 J_h)ᵀ g with the explicit d × d matrices."""
    b = hop.draw_block(3, width=24)
    eye = np.eye(24)
    _, dphi = hop.activation(name, b.W1 @ b.h)
    dF = b.W2 @ (dphi[:, None] * b.W1)
    z = b.h + b.W2 @ hop.activation(name, b.W1 @ b.h)[0]
    want_post = (eye + dF).T @ (nl.layer_norm_jacobian(z, eps=EPS).T @ b.g)
    r = hop.post_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS)
    assert_allclose(r.dh, want_post, rtol=1e-12, atol=1e-13)
    assert_allclose(r.z, z, rtol=1e-14, atol=1e-14)
    _, dphi_p = hop.activation(name, b.W1 @ nl.layer_norm(b.h, eps=EPS))
    want_pre = (eye + b.W2 @ (dphi_p[:, None] * b.W1) @ nl.layer_norm_jacobian(b.h, eps=EPS)).T @ b.g
    assert_allclose(hop.pre_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS), want_pre, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("name", ["gelu", "tanh"])
def test_hop_matches_central_finite_differences(placement, name):
    """gᵀ ∂block/∂h by central differences of the forward block (float64; smooth activations, so
    no ReLU kink lies within h of a pre-activation)."""
    b = hop.draw_block(4, width=16)
    f = _forward(name, placement, b.W1, b.W2, EPS)
    fd = nl.fd_vjp(f, b.h, b.g, h=1e-5)
    got = (hop.post_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS).dh if placement == "post"
           else hop.pre_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS))
    assert_allclose(got, fd, atol=1e-8)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("name", ACTS)
def test_hop_matches_torch_autograd(placement, name):
    torch = pytest.importorskip("torch")
    b = hop.draw_block(5, width=16)
    act = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "tanh": torch.tanh}[name]
    W1, W2 = torch.from_numpy(b.W1), torch.from_numpy(b.W2)
    h = torch.from_numpy(b.h.copy()).requires_grad_(True)

    def ln(t):
        return torch.nn.functional.layer_norm(t, (16,), eps=EPS)

    out = ln(h + W2 @ act(W1 @ h)) if placement == "post" else h + W2 @ act(W1 @ ln(h))
    (out @ torch.from_numpy(b.g)).backward()
    got = (hop.post_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS).dh if placement == "post"
           else hop.pre_hop(b.h, b.W1, b.W2, b.g, activation=name, eps=EPS))
    assert_allclose(got, h.grad.numpy(), rtol=1e-11, atol=1e-12)


def test_hops_broadcast_over_a_batch_of_blocks():
    blocks = [hop.draw_block(s, width=8) for s in range(3)]
    H, W1, W2, G = (np.stack([getattr(b, f) for b in blocks]) for f in ("h", "W1", "W2", "g"))
    batch = hop.post_hop(H, W1, W2, G, activation="gelu").dh
    for i, b in enumerate(blocks):
        assert_allclose(batch[i], hop.post_hop(b.h, b.W1, b.W2, b.g, activation="gelu").dh, rtol=1e-13, atol=1e-15)


def test_post_norm_block_with_relu_is_blind_to_its_input_scale_at_eps_zero():
    """φ positively homogeneous, ε = 0: ∂L/∂h at 4h is a quarter of that at h (exact in binary
    floating point), and ∂L/∂h ⟂ h; with GELU neither holds."""
    b = hop.draw_block(6, width=32)
    d1 = hop.post_hop(b.h, b.W1, b.W2, b.g, eps=0.0).dh
    d4 = hop.post_hop(4 * b.h, b.W1, b.W2, b.g, eps=0.0).dh
    assert_allclose(4 * d4, d1, rtol=1e-13, atol=1e-15)
    assert abs(b.h @ d1) / (np.linalg.norm(b.h) * np.linalg.norm(d1)) < 1e-13
    g1 = hop.post_hop(b.h, b.W1, b.W2, b.g, activation="gelu", eps=0.0).dh
    assert abs(b.h @ g1) / (np.linalg.norm(b.h) * np.linalg.norm(g1)) > 1e-4


def test_draw_block_protocol():
    b = hop.draw_block(0, width=16)
    assert b.W1.shape == (64, 16) and b.W2.shape == (16, 64)
    assert abs(b.h.mean()) < 1e-15 and abs(b.h.var() - 1.0) < 1e-14 and abs(np.linalg.norm(b.g) - 1.0) < 1e-14
    rng = np.random.default_rng(0)  # the same stream, in the documented order
    h = rng.standard_normal(16)
    assert_allclose(b.h, (h - h.mean()) / (h - h.mean()).std())
    assert_allclose(b.W1, rng.standard_normal((64, 16)) / 4.0)


@pytest.mark.parametrize(
    "call, err, msg",
    [
        (lambda b: hop.post_hop(b.h, b.W1, b.W2, b.g, eps=-1.0), ValueError, "eps"),
        (lambda b: hop.post_hop(b.h, b.W1.T, b.W2, b.g), ValueError, "W1 must have shape"),
        (lambda b: hop.pre_hop(b.h, b.W1, b.W2, b.g[:-1]), ValueError, "g must have the shape"),
        (lambda b: hop.pre_hop(b.h, b.W1, b.W2, b.g, activation="elu"), ValueError, "activation"),
        (lambda b: hop.post_hop(b.h * np.nan, b.W1, b.W2, b.g), ValueError, "NaN"),
        (lambda b: hop.draw_block(-1), ValueError, "seed"),
        (lambda b: hop.draw_block(0, width=2), ValueError, "width"),
        (lambda b: hop.sample_hops(0), ValueError, "n_draws"),
        (lambda b: hop.sample_hops(2, scales={"relu": (0.0,)}), ValueError, "scales"),
        (lambda b: hop.sample_hops(2, scales=(1.0,)), TypeError, "mapping"),
        (lambda b: hop.pre_hop_mean_square(np.ones(8)), ValueError, "constant"),
    ],
)
def test_bad_input_is_refused(call, err, msg):
    with pytest.raises(err, match=msg):
        call(hop.draw_block(0, width=8))


# ----------------------------------------------------------------------------- what the chapter derives


def test_post_leading_order_for_relu_is_one_over_s_squared_and_gelu_exceeds_one():
    for s in (0.5, 1.0, 3.0):
        assert_allclose(hop.post_hop_leading_order("relu", scale=s), 1 / s**2, rtol=1e-15)
    Q, P, _ = hop.gaussian_moments("gelu")
    assert_allclose(hop.post_hop_leading_order("gelu"), (1 + P) / (1 + Q), rtol=1e-15)
    assert 1.02 < hop.post_hop_leading_order("gelu") < 1.025


def test_pre_mean_square_for_relu_is_one_plus_the_trace_over_2d():
    """The ReLU case of the theorem: 1 + tr(J_h²)/(2d), with J_h from normlib.layer_norm_jacobian."""
    for x in (hop.draw_block(1, width=32).h * 3.0, 2.0 + 1e-3 * hop.draw_block(2, width=32).h):
        J = nl.layer_norm_jacobian(x, eps=EPS)
        assert_allclose(hop.pre_hop_mean_square(x, eps=EPS), 1 + np.trace(J @ J) / (2 * 32), rtol=1e-13)


@pytest.mark.parametrize("name", ["gelu", "tanh"])
def test_pre_mean_square_against_monte_carlo(name):
    """The general-φ theorem against 6000 draws at d = 8: the mean square within four standard errors,
    and its difference from ReLU's on the same draws (paired) within four of that difference's."""
    s = hop.sample_hops(6000, width=8, scales={name: (1.0,), "relu": (1.0,)})
    h0 = hop.draw_block(0, width=8).h  # every draw has var(h) = 1, so the exact value is the same for all
    m2, m2_relu = s.pre[name][:, 0] ** 2, s.pre["relu"][:, 0] ** 2
    exact, exact_relu = (hop.pre_hop_mean_square(h0, activation=a, eps=EPS) for a in (name, "relu"))
    assert abs(m2.mean() - exact) < 4 * m2.std(ddof=1) / math.sqrt(m2.size)
    diff = m2 - m2_relu
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    assert abs(diff.mean() - (exact - exact_relu)) < 4 * se
    assert abs(exact - exact_relu) > 4 * se  # ReLU's value would fail the window: the test has the power


def test_post_ln_factor_mean_square_is_the_trace_over_d():
    """E_g ‖J_z g‖² = tr(J_z²)/d exactly for g uniform on the sphere: the sample mean within 4 SE."""
    s = hop.sample_hops(3000, width=16, scales={"relu": (1.0,)})
    ln2 = s.ln["relu"][:, 0] ** 2
    theory = np.mean(((16 - 2) / (s.var_z["relu"][:, 0] + EPS) + EPS**2 / (s.var_z["relu"][:, 0] + EPS) ** 3) / 16)
    assert abs(ln2.mean() - theory) < 4 * ln2.std(ddof=1) / math.sqrt(ln2.size)


# ----------------------------------------------------------------------------- the sampler


def test_sample_hops_equals_the_single_draw_functions():
    s = hop.sample_hops(40, width=8, scales={"relu": (1.0, 4.0), "gelu": (2.0,)})
    for i in (0, 31, 32, 39):  # across a chunk boundary
        b = hop.draw_block(i, width=8)
        for name, sc in s.scales.items():
            for j, sv in enumerate(sc):
                r = hop.post_hop(sv * b.h, b.W1, b.W2, b.g, activation=name)
                assert_allclose(s.post[name][i, j], np.linalg.norm(r.dh), rtol=1e-12)
                assert_allclose(s.ln[name][i, j], np.linalg.norm(r.dz), rtol=1e-12)
                assert_allclose(s.pre[name][i, j], np.linalg.norm(hop.pre_hop(sv * b.h, b.W1, b.W2, b.g, activation=name)), rtol=1e-12)
        r = hop.post_hop(b.h, b.W1, b.W2, b.g, activation="gelu")
        zc = r.z - r.z.mean()
        gp = b.g - zc * (zc @ b.g) / (zc @ zc)
        rp = hop.post_hop(b.h, b.W1, b.W2, gp / np.linalg.norm(gp), activation="gelu")
        assert_allclose(s.post_perp["gelu"][i], np.linalg.norm(rp.dh), rtol=1e-12)
        assert_allclose(s.frac_one["gelu"][i], r.dh.sum() ** 2 / (8 * r.dh @ r.dh), rtol=1e-10)
