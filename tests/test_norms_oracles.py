"""Oracles 2 and 3 of 3: central finite differences and PyTorch (plus Hugging Face's RMSNorms).

All references are float64 except the Hugging Face modules, which compute their statistics
in float32 by design and are therefore held to float32-level tolerances.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from numpy.testing import assert_allclose

import normlib as nl

# Tolerances, one place (inputs are O(1), so rstd and every output are O(1) too).
TOL = {
    # two float64 implementations of the same formula differ by a few ulps per reduction
    # (d <= 64 terms): well below 1e-12; the brief asks for ~1e-10 or better.
    "float64": dict(rtol=1e-12, atol=1e-12),
    # central differences with h = 1e-6: truncation h²/6·|f'''| ~ 1e-13 and round-off
    # u·|f|/h ~ 1e-10 for O(1) values; 1e-8 leaves a margin yet fails on any O(1) formula error.
    "fd": dict(rtol=1e-7, atol=1e-8),
    # Hugging Face's RMSNorms compute in float32 (unit roundoff 6e-8); the mean of d squares,
    # the rsqrt and two products each add a few roundings: relative error <= ~1e-6 of O(1) outputs.
    "hf_float32": dict(rtol=1e-6, atol=1e-6),
}

EPS = [0.0, 1e-5, 1e-2]
D = 7  # odd, small: Jacobians stay cheap and no symmetry hides a wrong sign


def _x(rng, *shape):
    """Gaussian rows with a non-zero mean, so that centring matters."""
    return rng.standard_normal(shape) + 0.5


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


# ----------------------------------------------------------------------------- finite differences


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("with_weight", [False, True], ids=["no-weight", "weight"])
def test_layer_norm_vjp_matches_central_differences(rng, eps, with_weight):
    """dL/dx of the fake loss sum(LN(x)·dy) by central differences (normlib.fd_vjp) vs the O(d) formula."""
    x, dy = _x(rng, D), rng.standard_normal(D)
    w = rng.uniform(0.5, 2.0, D) if with_weight else None
    fd = nl.fd_vjp(lambda z: nl.layer_norm(z, w, eps=eps), x, dy)
    assert_allclose(nl.layer_norm_vjp(x, dy, w, eps=eps), fd, **TOL["fd"])


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("with_weight", [False, True], ids=["no-weight", "weight"])
def test_rms_norm_vjp_matches_central_differences(rng, eps, with_weight):
    """dL/dx of the fake loss sum(RMSNorm(x)·dy) by central differences vs the O(d) formula."""
    x, dy = _x(rng, D), rng.standard_normal(D)
    w = rng.uniform(0.5, 2.0, D) if with_weight else None
    fd = nl.fd_vjp(lambda z: nl.rms_norm(z, w, eps=eps), x, dy)
    assert_allclose(nl.rms_norm_vjp(x, dy, w, eps=eps), fd, **TOL["fd"])


@pytest.mark.parametrize("eps", EPS)
def test_layer_norm_jacobian_matches_central_differences(rng, eps):
    """J[i, j] = dy_i/dx_j by central differences of layer_norm vs the explicit matrix."""
    x = _x(rng, D)
    fd = nl.fd_jacobian(lambda z: nl.layer_norm(z, eps=eps), x)
    assert_allclose(nl.layer_norm_jacobian(x, eps=eps), fd, **TOL["fd"])


@pytest.mark.parametrize("eps", EPS)
def test_rms_norm_jacobian_matches_central_differences(rng, eps):
    """J[i, j] = dy_i/dx_j by central differences of rms_norm vs the explicit matrix."""
    x = _x(rng, D)
    fd = nl.fd_jacobian(lambda z: nl.rms_norm(z, eps=eps), x)
    assert_allclose(nl.rms_norm_jacobian(x, eps=eps), fd, **TOL["fd"])


def test_batched_vjp_matches_central_differences_row_by_row(rng):
    """A (2, 3, d) batch: each row's VJP equals the finite-difference VJP of that row alone."""
    x, dy = _x(rng, 2, 3, D), rng.standard_normal((2, 3, D))
    dx = nl.layer_norm_vjp(x, dy, eps=1e-5)
    for idx in np.ndindex(2, 3):
        fd = nl.fd_vjp(lambda z: nl.layer_norm(z, eps=1e-5), x[idx], dy[idx])
        assert_allclose(dx[idx], fd, **TOL["fd"])


# ----------------------------------------------------------------------------- PyTorch, forward


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("shape", [(D,), (4, D), (2, 3, 64)], ids=["d", "batch", "batch3d-64"])
def test_layer_norm_matches_torch_float64(rng, eps, shape):
    """torch.nn.functional.layer_norm in float64 (biased variance, eps inside the root) is the reference."""
    x = _x(rng, *shape)
    d = shape[-1]
    w, b = rng.uniform(0.5, 2.0, d), rng.standard_normal(d)
    ref = F.layer_norm(_t(x), (d,), _t(w), _t(b), eps=eps).numpy()
    assert_allclose(nl.layer_norm(x, w, b, eps=eps), ref, **TOL["float64"])
    ref0 = F.layer_norm(_t(x), (d,), eps=eps).numpy()
    assert_allclose(nl.layer_norm(x, eps=eps), ref0, **TOL["float64"])


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("shape", [(D,), (4, D), (2, 3, 64)], ids=["d", "batch", "batch3d-64"])
def test_rms_norm_matches_torch_float64(rng, eps, shape):
    """torch.nn.functional.rms_norm in float64 (eps inside the root) is the reference."""
    x = _x(rng, *shape)
    d = shape[-1]
    w = rng.uniform(0.5, 2.0, d)
    ref = F.rms_norm(_t(x), (d,), _t(w), eps=eps).numpy()
    assert_allclose(nl.rms_norm(x, w, eps=eps), ref, **TOL["float64"])
    ref0 = F.rms_norm(_t(x), (d,), eps=eps).numpy()
    assert_allclose(nl.rms_norm(x, eps=eps), ref0, **TOL["float64"])


# ----------------------------------------------------------------------------- PyTorch, autograd


def _torch_vjp(fn, x, dy):
    xt = _t(x).requires_grad_(True)
    (gx,) = torch.autograd.grad(fn(xt), xt, grad_outputs=_t(dy))
    return gx.numpy()


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("with_weight", [False, True], ids=["no-weight", "weight"])
def test_layer_norm_vjp_matches_torch_autograd(rng, eps, with_weight):
    """torch.autograd.grad of F.layer_norm with grad_outputs = dy is dyᵀJ."""
    x, dy = _x(rng, 3, D), rng.standard_normal((3, D))
    w = rng.uniform(0.5, 2.0, D) if with_weight else None
    wt = None if w is None else _t(w)
    ref = _torch_vjp(lambda t: F.layer_norm(t, (D,), wt, eps=eps), x, dy)
    assert_allclose(nl.layer_norm_vjp(x, dy, w, eps=eps), ref, **TOL["float64"])


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("with_weight", [False, True], ids=["no-weight", "weight"])
def test_rms_norm_vjp_matches_torch_autograd(rng, eps, with_weight):
    """torch.autograd.grad of F.rms_norm with grad_outputs = dy is dyᵀJ."""
    x, dy = _x(rng, 3, D), rng.standard_normal((3, D))
    w = rng.uniform(0.5, 2.0, D) if with_weight else None
    wt = None if w is None else _t(w)
    ref = _torch_vjp(lambda t: F.rms_norm(t, (D,), wt, eps=eps), x, dy)
    assert_allclose(nl.rms_norm_vjp(x, dy, w, eps=eps), ref, **TOL["float64"])


@pytest.mark.parametrize("eps", EPS)
def test_layer_norm_jacobian_matches_torch_functional_jacobian(rng, eps):
    """torch.autograd.functional.jacobian of F.layer_norm (float64) is the reference matrix."""
    x = _x(rng, D)
    ref = torch.autograd.functional.jacobian(lambda t: F.layer_norm(t, (D,), eps=eps), _t(x)).numpy()
    assert_allclose(nl.layer_norm_jacobian(x, eps=eps), ref, **TOL["float64"])


@pytest.mark.parametrize("eps", EPS)
def test_rms_norm_jacobian_matches_torch_functional_jacobian(rng, eps):
    """torch.autograd.functional.jacobian of F.rms_norm (float64) is the reference matrix."""
    x = _x(rng, D)
    ref = torch.autograd.functional.jacobian(lambda t: F.rms_norm(t, (D,), eps=eps), _t(x)).numpy()
    assert_allclose(nl.rms_norm_jacobian(x, eps=eps), ref, **TOL["float64"])


# ----------------------------------------------------------------------------- PyTorch, BatchNorm


def test_batch_norm_training_and_running_update_match_torch(rng):
    """F.batch_norm(training=True, momentum=0.1) normalizes with biased batch stats and updates running stats with the unbiased variance."""
    n, d = 5, 4
    x = rng.standard_normal((n, d)) * 3.0 + 1.0
    w, b = rng.uniform(0.5, 2.0, d), rng.standard_normal(d)
    rm0, rv0 = rng.standard_normal(d), rng.uniform(0.5, 2.0, d)
    rm_t, rv_t = _t(rm0).clone(), _t(rv0).clone()  # torch updates these in place
    ref = F.batch_norm(_t(x), rm_t, rv_t, _t(w), _t(b), training=True, momentum=0.1, eps=1e-5).numpy()
    r = nl.batch_norm(x, w, b, training=True, running_mean=rm0, running_var=rv0, momentum=0.1, eps=1e-5)
    assert_allclose(r.y, ref, **TOL["float64"])
    assert_allclose(r.running_mean, rm_t.numpy(), **TOL["float64"])
    assert_allclose(r.running_var, rv_t.numpy(), **TOL["float64"])
    # the unbiased factor n/(n-1) = 1.25 matters here: a biased update would be off by far more than the tolerance
    biased = 0.9 * rv0 + 0.1 * x.var(axis=0)
    assert np.max(np.abs(biased - rv_t.numpy())) > 1e-3


def test_batch_norm_sequence_batch_matches_torch(rng):
    """Features last (N, T, d) in normlib is (N, d, T) in torch; statistics pool the N and T axes in both."""
    x = rng.standard_normal((3, 5, 4))
    rm_t, rv_t = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    ref = F.batch_norm(_t(x.transpose(0, 2, 1)), rm_t, rv_t, training=True, momentum=0.1, eps=1e-5)
    r = nl.batch_norm(x, training=True, running_mean=np.zeros(4), running_var=np.ones(4), eps=1e-5)
    assert_allclose(r.y, ref.numpy().transpose(0, 2, 1), **TOL["float64"])
    assert_allclose(r.running_var, rv_t.numpy(), **TOL["float64"])


def test_batch_norm_eval_matches_torch(rng):
    """F.batch_norm(training=False) uses the running statistics: the float64 reference for eval mode."""
    x = rng.standard_normal((6, 4))
    w, b = rng.uniform(0.5, 2.0, 4), rng.standard_normal(4)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2.0, 4)
    ref = F.batch_norm(_t(x), _t(rm), _t(rv), _t(w), _t(b), training=False, eps=1e-5).numpy()
    r = nl.batch_norm(x, w, b, training=False, running_mean=rm, running_var=rv, eps=1e-5)
    assert_allclose(r.y, ref, **TOL["float64"])


def test_batch_norm_train_and_eval_differ_layer_norm_does_not(rng):
    """C1.5: the same input gives different BN outputs in train and eval mode; LN of a sample ignores its batch."""
    x = rng.standard_normal((8, 4)) * 2.0 + 3.0
    train = nl.batch_norm(x, training=True, running_mean=np.zeros(4), running_var=np.ones(4))
    ev = nl.batch_norm(x, training=False, running_mean=train.running_mean, running_var=train.running_var)
    assert np.max(np.abs(train.y - ev.y)) > 0.1  # running stats after one step are far from this batch's
    # BN (training) of sample 0 changes when its batch-mates change; LN of sample 0 does not
    other = np.concatenate([x[:1], rng.standard_normal((7, 4))])
    assert np.max(np.abs(nl.batch_norm(other, training=True).y[0] - train.y[0])) > 0.1
    assert_allclose(nl.layer_norm(other)[0], nl.layer_norm(x)[0], **TOL["float64"])
    assert_allclose(nl.layer_norm(x[:1])[0], nl.layer_norm(x)[0], **TOL["float64"])


# ----------------------------------------------------------------------------- Hugging Face RMSNorms


@pytest.fixture(scope="module")
def hf():
    """The two Hugging Face RMSNorm classes (imported once; transformers is slow to import)."""
    from transformers.models.gemma.modeling_gemma import GemmaRMSNorm
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    return LlamaRMSNorm, GemmaRMSNorm


def _hf_input(rng, dtype):
    x = rng.standard_normal((3, 64)) * 2.0 + 0.3
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_llama_rmsnorm_matches(hf, rng, dtype):
    """LlamaRMSNorm(eps=1e-6, weight=g) is g ⊙ x/sqrt(mean(x²) + eps), computed in float32."""
    llama_cls = hf[0]
    x = _hf_input(rng, dtype)
    g = rng.uniform(0.5, 2.0, 64).astype(np.float32)  # the module's weight is a float32 parameter
    mod = llama_cls(64, eps=1e-6)
    with torch.no_grad():
        mod.weight.copy_(torch.from_numpy(g))
        out = mod(torch.from_numpy(x)).numpy()
    ref64 = nl.rms_norm(x.astype(np.float64), g.astype(np.float64), eps=1e-6)
    assert_allclose(out, ref64, **TOL["hf_float32"])
    assert_allclose(nl.rms_norm(x, g, eps=1e-6), out, **TOL["hf_float32"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_gemma_rmsnorm_matches_one_plus_w(hf, rng, dtype):
    """GemmaRMSNorm(weight=w) scales by (1 + w) (zero-centred gain, C8.5): equals rms_norm(x, 1 + w, eps=1e-6)."""
    gemma_cls = hf[1]
    x = _hf_input(rng, dtype)
    w = rng.uniform(-0.5, 0.5, 64).astype(np.float32)
    mod = gemma_cls(64, eps=1e-6)
    with torch.no_grad():
        mod.weight.copy_(torch.from_numpy(w))
        out = mod(torch.from_numpy(x)).numpy()
    ref64 = nl.rms_norm(x.astype(np.float64), 1.0 + w.astype(np.float64), eps=1e-6)
    assert_allclose(out, ref64, **TOL["hf_float32"])
    # the plain gain w (without the 1 +) would be far off: guards against a test that cannot fail
    assert np.max(np.abs(out - nl.rms_norm(x.astype(np.float64), w.astype(np.float64), eps=1e-6))) > 0.1


def test_gemma_rmsnorm_at_init_is_unit_gain(hf, rng):
    """Gemma's weight starts at 0, so at init its output is the plain RMSNorm (gain 1)."""
    gemma_cls = hf[1]
    x = _hf_input(rng, np.float64)
    with torch.no_grad():
        out = gemma_cls(64, eps=1e-6)(torch.from_numpy(x)).numpy()
    assert_allclose(out, nl.rms_norm(x, eps=1e-6), **TOL["hf_float32"])
