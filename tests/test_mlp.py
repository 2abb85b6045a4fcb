"""Tests of normlib.mlp: the deep-stack probe and the batched MLP of the digits benchmark.

1. The hand-written backward pass of every norm equals PyTorch autograd (float64), and
   BatchNorm's running statistics and its two modes match torch's own batch norm.
2. The deep-stack probe equals the same stack in PyTorch, and its scales follow the
   closed forms (gain per layer without normalization; flat with LayerNorm).
3. Training: deterministic, learning happens, equal settings give equal models,
   divergence is reported rather than raised.
4. The data split and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from numpy.testing import assert_allclose, assert_array_equal

from normlib import mlp
from normlib.mlp import MLP, _loss_and_grads, deep_stack_profile, init_mlp, load_digits_split, mlp_logits, train_mlp

EPS = 1e-5


def _random_model(norm, sizes=(5, 6, 7, 3), n_models=2, seed=0):
    """An MLP with non-trivial gains, shifts, biases and running statistics."""
    rng = np.random.default_rng(seed)
    m = init_mlp(norm, sizes, list(range(n_models)))
    r = lambda a: a + 0.3 * rng.standard_normal(a.shape)  # noqa: E731
    return MLP(
        norm,
        tuple(r(w) for w in m.weights),
        tuple(r(b) for b in m.biases),
        tuple(r(g) for g in m.gains),
        tuple(r(s) for s in m.shifts),
        tuple(r(a) for a in m.running_mean),
        tuple(np.exp(r(a)) for a in m.running_var),
    )


def _torch_loss(model, x, y, *, training=True, rm=None, rv=None):
    """The same network written with torch.nn.functional, one model at a time."""
    T = lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=True)  # noqa: E731
    W = [T(w) for w in model.weights]
    b = [T(v) for v in model.biases]
    g = [T(v) for v in model.gains]
    s = [T(v) for v in model.shifts]
    total, logits_all = 0.0, []
    for i in range(model.n_models):
        h = torch.tensor(x[i])
        for layer in range(len(W) - 1):
            z = h @ W[layer][i] + b[layer][i]
            d = z.shape[-1]
            if model.norm == "layernorm":
                z = F.layer_norm(z, (d,), g[layer][i], s[layer][i], eps=EPS)
            elif model.norm == "rmsnorm":
                z = F.rms_norm(z, (d,), g[layer][i], eps=EPS)
            elif model.norm == "batchnorm":
                rmean = None if rm is None else rm[layer][i]
                rvar = None if rv is None else rv[layer][i]
                z = F.batch_norm(z, rmean, rvar, g[layer][i], s[layer][i], training=training, momentum=0.1, eps=EPS)
            h = torch.relu(z)
        logits = h @ W[-1][i] + b[-1][i]
        logits_all.append(logits)
        total = total + F.cross_entropy(logits, torch.tensor(y[i]))
    total.backward()
    grads = [p.grad.numpy() for p in (*W, *b, *g, *s)]
    return total, grads, torch.stack(logits_all).detach().numpy()


@pytest.mark.parametrize("norm", mlp.NORMS)
def test_backward_equals_autograd(norm):
    """Loss and every parameter gradient equal PyTorch autograd (float64) for each norm."""
    model = _random_model(norm)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5))
    y = rng.integers(0, 3, (2, 4))
    loss, grads, _ = _loss_and_grads(model, x, y, EPS)
    t_loss, t_grads, _ = _torch_loss(model, x, y)
    assert_allclose(loss.sum(), t_loss.detach().item(), rtol=1e-12)
    assert len(grads) == len(t_grads)
    for ours, ref in zip(grads, t_grads):
        assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)


def test_batchnorm_two_modes_equal_torch():
    """mlp_logits: running statistics = torch eval mode; batch statistics = torch training mode per chunk."""
    model = _random_model("batchnorm", n_models=3)
    x = np.random.default_rng(2).standard_normal((3, 8, 5))
    y = np.zeros((3, 8), dtype=np.int64)
    rm = [torch.tensor(a.copy()) for a in model.running_mean]
    rv = [torch.tensor(a.copy()) for a in model.running_var]
    _, _, t_eval = _torch_loss(model, x, y, training=False, rm=rm, rv=rv)
    assert_allclose(mlp_logits(model, x, stats="running"), t_eval, rtol=1e-12)
    ours = mlp_logits(model, x, stats="batch", batch_size=4)
    ref = np.concatenate([_torch_loss(model, x[:, i : i + 4], y[:, i : i + 4])[2] for i in (0, 4)], axis=1)
    assert_allclose(ours, ref, rtol=1e-12)
    assert np.abs(ours - t_eval).max() > 0.1  # the two modes really differ


def test_running_statistics_follow_torch():
    """One training step updates BatchNorm's running mean and (unbiased) variance like torch.nn.BatchNorm1d."""
    split = load_digits_split()
    run = train_mlp(split, "batchnorm", 500, lrs=[1e-12], seeds=[0], epochs=1, hidden=(8,), momentum=0.0)
    # with a negligible learning rate the weights stay at their initial values: replay the two batches
    init = init_mlp("batchnorm", (64, 8, 10), [0])
    perm = np.random.default_rng([0, 1]).permutation(len(split.y_train))
    bn = torch.nn.BatchNorm1d(8, eps=EPS, momentum=0.1).double()
    for t in range(2):
        xb = split.x_train[perm[t * 500 : (t + 1) * 500]]
        z = torch.tensor(xb @ init.weights[0][0] + init.biases[0][0])
        bn.train()(z)
    assert_allclose(run.model.running_mean[0][0], bn.running_mean.numpy(), rtol=1e-9, atol=1e-12)
    assert_allclose(run.model.running_var[0][0], bn.running_var.numpy(), rtol=1e-9)


# ----------------------------------------------------------------------------- 2. deep stack


@pytest.mark.parametrize("norm", ["none", "layernorm"])
def test_deep_stack_equals_torch(norm):
    """Same draws, same network in torch: activation RMS, gradient RMS and weight-gradient norms agree."""
    L, n, m, gain, seed = 5, 16, 7, 1.3, 11
    prof = deep_stack_profile(L, width=n, gain=gain, norm=norm, n_samples=m, rng=seed)
    gen = np.random.default_rng(seed)
    h0 = gen.standard_normal((m, n))
    Ws = [torch.tensor(gain * np.sqrt(2.0 / n) * gen.standard_normal((n, n)), requires_grad=True) for _ in range(L)]
    v = torch.tensor(gen.standard_normal((m, n)))
    hs = [torch.tensor(h0, requires_grad=True)]
    for W in Ws:
        z = hs[-1] @ W
        if norm == "layernorm":
            z = F.layer_norm(z, (n,), eps=EPS)
        h = torch.relu(z)
        h.retain_grad()
        hs.append(h)
    (hs[-1] * v).sum().backward()
    rms = lambda t: float(t.pow(2).mean().sqrt())  # noqa: E731
    assert_allclose(prof.act_rms, [rms(h.detach()) for h in hs], rtol=1e-12)
    assert_allclose(prof.grad_rms[:-1], [rms(h.grad) for h in hs[:-1]], rtol=1e-10)
    assert_allclose(prof.grad_rms[-1], rms(v), rtol=1e-12)
    assert_allclose(prof.weight_grad, [float(W.grad.norm()) for W in Ws], rtol=1e-10)


@pytest.mark.parametrize("gain", [2**-0.5, 1.0, 2**0.5])
def test_deep_stack_scales_follow_the_gain(gain):
    """Without normalization E h_l² = gain^(2l): fitted log-slope of the activation RMS is log(gain)."""
    L = 40
    slopes = []
    for seed in range(4):
        p = deep_stack_profile(L, width=256, gain=gain, n_samples=32, rng=seed)
        slopes.append(np.polyfit(np.arange(L + 1), np.log(p.act_rms), 1)[0])
    # per-layer log fluctuations are O(1/sqrt(n·m)); 0.01 is several standard errors of a 4-seed mean
    assert abs(np.mean(slopes) - np.log(gain)) < 0.01


def test_layernorm_stack_is_flat():
    """With LayerNorm (ε = 0) the gain drops out exactly; activation RMS stays near sqrt(1/2); no gradient drift."""
    ref = deep_stack_profile(40, width=256, gain=1.0, norm="layernorm", n_samples=32, rng=3, eps=0.0)
    for gain in (0.5, 2.0):
        p = deep_stack_profile(40, width=256, gain=gain, norm="layernorm", n_samples=32, rng=3, eps=0.0)
        assert_allclose(p.act_rms, ref.act_rms, rtol=1e-10)
        assert_allclose(p.grad_rms, ref.grad_rms, rtol=1e-10)
    assert_allclose(ref.act_rms[1:], np.sqrt(0.5), rtol=0.05)
    # the fitted log-slope of the gradient RMS is a random walk's: about ±0.015 per seed at n = 256
    slopes = [np.polyfit(np.arange(41), np.log(deep_stack_profile(40, norm="layernorm", rng=s).grad_rms), 1)[0] for s in range(8)]
    assert abs(np.mean(slopes)) < 0.015


# ----------------------------------------------------------------------------- 3. training


@pytest.fixture(scope="module")
def split():
    return load_digits_split()


def test_training_learns_and_is_deterministic(split):
    """LayerNorm MLP at batch 32 for 3 epochs: test error well below chance (0.9); a rerun is identical."""
    a = train_mlp(split, "layernorm", 32, lrs=[0.1], seeds=[0, 1], epochs=3, hidden=(32, 32))
    b = train_mlp(split, "layernorm", 32, lrs=[0.1], seeds=[0, 1], epochs=3, hidden=(32, 32))
    assert a.test_error.shape == (1, 2) and np.all(a.test_error < 0.2)
    assert_array_equal(a.test_error, b.test_error)
    for wa, wb in zip(a.model.weights, b.model.weights):
        assert_array_equal(wa, wb)


def test_models_are_independent(split):
    """Two copies of the same (lr, seed) in one batched run end identical; a lone run gives the same model."""
    both = train_mlp(split, "batchnorm", 8, lrs=[0.05, 0.05], seeds=[3], epochs=1, hidden=(16,))
    lone = train_mlp(split, "batchnorm", 8, lrs=[0.05], seeds=[3], epochs=1, hidden=(16,))
    for w_both, w_lone in zip(both.model.weights, lone.model.weights):
        assert_allclose(w_both[0], w_both[1], rtol=0, atol=0)
        assert_allclose(w_both[0], w_lone[0], rtol=1e-12, atol=1e-14)
    assert both.test_error_batch is not None and lone.test_error_batch.shape == (1, 1)


def test_divergence_is_reported_not_raised(split):
    """A plain MLP at an absurd learning rate diverges: flagged, error 1.0; its sane neighbor is unaffected."""
    run = train_mlp(split, "none", 128, lrs=[0.05, 30.0], seeds=[0], epochs=2, hidden=(64, 64))
    assert not run.diverged[0, 0] and run.diverged[1, 0]
    assert run.test_error[1, 0] == 1.0 and run.test_error[0, 0] < 0.5


def test_correct_on_test_agrees_with_the_run_and_picks_the_chosen_rate(split):
    """The per-image matrix at the chosen rate reproduces the run's test errors, in both BatchNorm modes,
    a diverged model counts as wrong everywhere, and select_models keeps the models it names."""
    run = train_mlp(split, "batchnorm", 32, lrs=[0.02, 0.1, 30.0], seeds=[0, 1], epochs=2, hidden=(16, 16))
    k = mlp.chosen_lr(run)
    assert k == int(np.argmin(run.val_error.mean(axis=1)))
    for lr_index in range(3):
        c = mlp.correct_on_test(run, split, lr_index=lr_index)
        assert c.shape == (2, len(split.y_test)) and c.dtype == bool
        assert_allclose(1 - c.mean(axis=1), run.test_error[lr_index], rtol=0, atol=1e-12)
        cb = mlp.correct_on_test(run, split, stats="batch", lr_index=lr_index)
        assert_allclose(1 - cb.mean(axis=1), run.test_error_batch[lr_index], rtol=0, atol=1e-12)
    assert run.diverged[2].all() and not mlp.correct_on_test(run, split, lr_index=2).any()
    assert_array_equal(mlp.correct_on_test(run, split), mlp.correct_on_test(run, split, lr_index=k))
    one = mlp.select_models(run.model, [3])
    assert one.n_models == 1
    for w, w_all in zip(one.weights, run.model.weights):
        assert_array_equal(w[0], w_all[3])
    with pytest.raises(ValueError, match="out of range"):
        mlp.select_models(run.model, [6])
    with pytest.raises(ValueError, match="out of range"):
        mlp.correct_on_test(run, split, lr_index=3)
    with pytest.raises(TypeError, match="MLPRun"):
        mlp.chosen_lr(run.model)


def test_pre_norm_rows_and_serving(split):
    """pre_norm_rows are the Linear outputs of the forward pass; served answers depend on the batch-mates
    only for BatchNorm in training mode."""
    bn = _random_model("batchnorm", sizes=(64, 8, 8, 10), n_models=2, seed=1)
    x = split.x_test[:7]
    z1, z2 = mlp.pre_norm_rows(bn, x)
    assert z1.shape == (2, 7, 8) and z2.shape == (2, 7, 8)
    assert_allclose(z1, x @ bn.weights[0] + bn.biases[0][:, None, :], rtol=1e-14, atol=1e-14)
    u = (z1 - bn.running_mean[0][:, None]) / np.sqrt(bn.running_var[0][:, None] + EPS) * bn.gains[0][:, None] + bn.shifts[0][:, None]
    assert_allclose(z2, np.maximum(u, 0) @ bn.weights[1] + bn.biases[1][:, None, :], rtol=1e-12, atol=1e-12)
    kw = dict(batch_size=4, n_draws=3, rng=0)
    train = mlp.serve(bn, x, split.x_test[7:40], stats="batch", **kw)
    run = mlp.serve(bn, x, split.x_test[7:40], stats="running", **kw)
    assert train.shape == run.shape == (2, 3, 7, 10)
    assert np.abs(train - train[:, :1]).max() > 1e-3  # the batch-mates move the training-mode answer
    assert np.abs(run - run[:, :1]).max() < 1e-12
    assert_allclose(run[:, 0], mlp_logits(bn, x), rtol=1e-12, atol=1e-12)
    ln = _random_model("layernorm", sizes=(64, 8, 10), n_models=1)
    served = mlp.serve(ln, x, split.x_test[7:40], **kw)
    assert np.abs(served - served[:, :1]).max() < 1e-12
    with pytest.raises(ValueError, match="shape"):
        mlp.serve(ln, x[:, :5], split.x_test, **kw)
    with pytest.raises(ValueError, match="shape"):
        mlp.pre_norm_rows(ln, x[:, :5])


# ----------------------------------------------------------------------------- 4. data and bad input


def test_split(split):
    """1000/297/500 images, standardized on the training set, labels 0..9, different seeds give different splits."""
    assert (len(split.y_train), len(split.y_val), len(split.y_test)) == (1000, 297, 500)
    assert_allclose(split.x_train.mean(axis=0), 0.0, atol=1e-12)
    assert set(np.unique(split.y_train)) == set(range(10))
    other = load_digits_split(seed=1)
    assert not np.array_equal(other.y_train, split.y_train)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"norm": "groupnorm"}, ValueError, "norm must be one of"),
        ({"batch_size": 1}, ValueError, "batch_size must be an integer >= 2"),
        ({"lrs": []}, ValueError, "must not be empty"),
        ({"lrs": [-0.1]}, ValueError, "finite number > 0"),
        ({"momentum": 1.0}, ValueError, "momentum must lie in"),
        ({"bn_momentum": 0.0}, ValueError, "bn_momentum must lie in"),
        ({"epochs": 0}, ValueError, "epochs must be an integer >= 1"),
        ({"batch_size": 5000}, ValueError, "exceeds"),
        ({"eps": -1.0}, ValueError, "eps"),
    ],
)
def test_train_bad_input(split, kwargs, exc, match):
    args = {"norm": "layernorm", "batch_size": 8, "lrs": [0.1], "seeds": [0], "epochs": 1, "hidden": (4,)}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        train_mlp(split, args.pop("norm"), args.pop("batch_size"), **args)


def test_logits_bad_input():
    model = init_mlp("batchnorm", (5, 4, 3), [0, 1])
    x = np.zeros((7, 5))
    with pytest.raises(ValueError, match="needs batch_size"):
        mlp_logits(model, x, stats="batch")
    with pytest.raises(ValueError, match="last batch of one input"):
        mlp_logits(model, x, stats="batch", batch_size=2)
    with pytest.raises(ValueError, match="x must have shape"):
        mlp_logits(model, np.zeros((7, 4)))
    with pytest.raises(ValueError, match="stats must be one of"):
        mlp_logits(model, x, stats="train")


def test_stack_bad_input():
    with pytest.raises(ValueError, match="norm must be one of"):
        deep_stack_profile(3, norm="batchnorm")
    with pytest.raises(ValueError, match="gain"):
        deep_stack_profile(3, gain=0.0)
    with pytest.raises(TypeError, match="depth"):
        deep_stack_profile(2.5)
