"""normlib.transformer: the placement equations by hand, gradients against finite differences
(float64) and autograd, the initialization, the task, and determinism of training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from normlib import deepnorm_constants, layer_norm
from normlib import transformer as tf
from normlib.transformer import TinyTransformer, ffn_grad_norms, first_update_norm, hidden_grad_norms, reversal_task, train

TINY = dict(width=8, heads=2, vocab=5, seq_len=4)


def _tiny(placement, depth=2, *, qk_norm=False, init="xavier", seed=0):
    return TinyTransformer(placement, depth, qk_norm=qk_norm, init=init, seed=seed, **TINY).double()


def _np(t):
    return t.detach().cpu().numpy()


# ----------------------------------------------------------------------------- the equations, by hand


def _attention_by_hand(block, x, *, qk_norm):
    """Causal multi-head attention of one block written out in numpy (float64)."""
    a = block.attn
    B, T, C = x.shape
    H, dh = a.heads, a.head_dim

    def heads(w):
        return (x @ _np(w.weight).T).reshape(B, T, H, dh).transpose(0, 2, 1, 3)

    q, k, v = heads(a.q), heads(a.k), heads(a.v)
    if qk_norm:
        rms = lambda z, g: g * z / np.sqrt((z * z).mean(-1, keepdims=True) + 1e-6)  # noqa: E731
        q, k = rms(q, _np(a.q_norm.weight)), rms(k, _np(a.k_norm.weight))
    logits = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    allowed = np.tril(np.ones((T, T), dtype=bool))
    z = np.where(allowed, logits, -np.inf)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    return y @ _np(a.o.weight).T, np.abs(np.where(allowed, logits, 0.0)).max()


def _ffn_by_hand(block, x):
    return np.maximum(x @ _np(block.ffn.w1.weight).T, 0.0) @ _np(block.ffn.w2.weight).T


def _ln(block_ln, x):
    return layer_norm(x, _np(block_ln.weight), _np(block_ln.bias), eps=block_ln.eps)


@pytest.mark.parametrize("qk_norm", [False, True])
@pytest.mark.parametrize("placement", ["post", "pre", "deepnorm"])
def test_block_equations_by_hand(placement, qk_norm):
    """One block against its equation: post LN(x + F(x)), pre x + F(LN(x)), deepnorm LN(αx + F(x)); numpy oracle."""
    model = _tiny(placement, depth=3, qk_norm=qk_norm, seed=4)
    block = model.blocks[1]
    with torch.no_grad():  # non-trivial gains and biases, so that the LN parameters are exercised
        for p in block.parameters():
            if p.ndim == 1:
                p.add_(0.1 * torch.arange(p.numel(), dtype=p.dtype) / p.numel())
    x = np.random.default_rng(1).standard_normal((2, 4, 8))
    if placement == "pre":
        att, _ = _attention_by_hand(block, _ln(block.ln1, x), qk_norm=qk_norm)
        h = x + att
        want = h + _ffn_by_hand(block, _ln(block.ln2, h))
    else:
        alpha = 1.0 if placement == "post" else deepnorm_constants("decoder", M=3)[0]
        att, _ = _attention_by_hand(block, x, qk_norm=qk_norm)
        h = _ln(block.ln1, alpha * x + att)
        want = _ln(block.ln2, alpha * h + _ffn_by_hand(block, h))
    got = _np(block(torch.from_numpy(x)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_deepnorm_alpha_is_the_decoder_constant():
    for depth in (1, 6, 40):
        m = TinyTransformer("deepnorm", depth, seed=0, **TINY)
        assert (m.alpha, m.beta) == deepnorm_constants("decoder", M=depth)
        assert all(b.alpha == m.alpha for b in m.blocks)
    for placement in ("post", "pre"):
        assert (TinyTransformer(placement, 3, **TINY).alpha, TinyTransformer(placement, 3, **TINY).beta) == (1.0, 1.0)


@pytest.mark.parametrize("placement", ["post", "pre", "deepnorm"])
def test_model_forward_by_hand(placement):
    """Embeddings, the stack, the final LN (pre only) and the head, composed by hand."""
    model = _tiny(placement, depth=2, seed=3)
    tokens, _ = reversal_task(3, seq_len=4, vocab=5, rng=0)
    inp = tokens[:, :-1]
    x = _np(model.tok.weight)[_np(inp)] + _np(model.pos.weight)[: inp.shape[1]]
    with torch.no_grad():
        for b in model.blocks:
            x = _np(b(torch.from_numpy(x)))
    if placement == "pre":
        x = _ln(model.ln_f, x)
    else:
        assert isinstance(model.ln_f, torch.nn.Identity)
    np.testing.assert_allclose(_np(model(inp)), x @ _np(model.head.weight).T, rtol=1e-12, atol=1e-12)


def test_max_logit_is_the_largest_allowed_logit():
    model = _tiny("pre", depth=2, qk_norm=False, seed=5)
    x = np.random.default_rng(2).standard_normal((2, 4, 8))
    with torch.no_grad():
        out = torch.from_numpy(x)
        want = []
        for b in model.blocks:
            _, m = _attention_by_hand(b, _ln(b.ln1, _np(out)), qk_norm=False)
            want.append(m)
            out = b(out)
    got = max(float(b.attn.max_logit) for b in model.blocks)
    assert got == pytest.approx(max(want), rel=1e-12)
    tokens, _ = reversal_task(2, seq_len=4, vocab=5, rng=1)
    model(tokens[:, :-1])
    assert model.max_logit == max(float(b.attn.max_logit) for b in model.blocks)


def test_min_entropy_of_uniform_attention_is_the_mean_log_of_the_causal_window():
    """Zero query weights: every logit is 0, each query t attends uniformly to t + 1 keys,
    so each head's entropy averaged over queries is mean_t ln(t + 1); with one-hot
    attention (a huge logit on the diagonal) it is 0."""
    model = _tiny("pre", depth=1, seed=3)
    x = torch.from_numpy(np.random.default_rng(4).standard_normal((2, 4, 8)))
    with torch.no_grad():
        model.blocks[0].attn.q.weight.zero_()
        model.blocks[0].attn(x)
    want = float(np.mean(np.log(np.arange(1, 5))))
    assert float(model.blocks[0].attn.min_entropy) == pytest.approx(want, rel=1e-12)


def test_training_records_entropy_and_qk_gains():
    kw = dict(depth=1, width=8, heads=2, lr=1e-2, steps=4, batch=2, eval_batch=4)
    plain, normed = train("pre", **kw), train("pre", qk_norm=True, **kw)
    assert np.isnan(plain.qk_gain).all() and normed.qk_gain[0] == 1.0  # gains start at ones
    ceiling = float(np.mean(np.log(np.arange(1, 17))))  # uniform attention over the causal window
    for r in (plain, normed):
        assert r.attn_entropy.shape == (4,) and np.all((r.attn_entropy >= 0) & (r.attn_entropy <= ceiling + 1e-6))


def test_max_logit_before_a_forward_raises():
    with pytest.raises(RuntimeError, match="after a forward"):
        TinyTransformer("pre", 1, **TINY).max_logit


# ----------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("qk_norm", [False, True])
@pytest.mark.parametrize("placement", ["post", "pre", "deepnorm"])
def test_gradients_match_central_finite_differences(placement, qk_norm):
    """Autograd against (L(θ + h e) − L(θ − h e)) / 2h, float64, on 4 entries of every parameter tensor."""
    model = _tiny(placement, depth=2, qk_norm=qk_norm, seed=7)
    with torch.no_grad():  # move gains/biases off their constant init so that their gradients are generic
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(torch.from_numpy(np.random.default_rng(p.numel()).normal(0, 0.1, p.numel())))
    tokens, mask = reversal_task(4, seq_len=4, vocab=5, rng=3)
    model.zero_grad()
    model.loss(tokens, mask).backward()
    rng = np.random.default_rng(11)
    h = 1e-6
    checked = 0
    for name, p in model.named_parameters():
        flat = p.data.view(-1)
        for i in rng.choice(flat.numel(), size=min(4, flat.numel()), replace=False):
            old = flat[i].item()
            with torch.no_grad():
                flat[i] = old + h
                up = model.loss(tokens, mask).item()
                flat[i] = old - h
                down = model.loss(tokens, mask).item()
                flat[i] = old
            fd = (up - down) / (2 * h)
            assert p.grad.view(-1)[i].item() == pytest.approx(fd, rel=1e-5, abs=1e-8), f"{name}[{i}]"
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("placement", ["post", "pre", "deepnorm"])
def test_ffn_grad_norms_match_autograd_on_named_parameters(placement):
    model = TinyTransformer(placement, 3, width=16, heads=2, vocab=7, seq_len=6, seed=2)
    tokens, mask = reversal_task(5, seq_len=6, vocab=7, rng=4)
    for m in (None, mask):
        got = ffn_grad_norms(model, tokens, m)
        model.zero_grad(set_to_none=True)
        model.loss(tokens, m).backward()
        want = [float(model.get_parameter(f"blocks.{l}.ffn.w2.weight").grad.norm()) for l in range(3)]
        assert got.shape == (3,)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        model.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in model.parameters())  # ffn_grad_norms leaves .grad alone
    ffn_grad_norms(model, tokens)
    assert all(p.grad is None for p in model.parameters())


def test_hidden_grad_norms_match_retained_gradients():
    model = _tiny("post", depth=3, seed=1)
    tokens, mask = reversal_task(3, seq_len=4, vocab=5, rng=2)
    got = hidden_grad_norms(model, tokens, mask)
    inp = tokens[:, :-1]
    xs = [model.tok(inp) + model.pos.weight[: inp.shape[1]]]
    for b in model.blocks:
        xs.append(b(xs[-1]))
    for x in xs:
        x.retain_grad()
    logits = model.head(model.ln_f(xs[-1]))
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    ((nll * mask).sum() / mask.sum()).backward()
    np.testing.assert_allclose(got, [float(x.grad.norm()) for x in xs], rtol=1e-12)
    assert got.shape == (4,)


def test_first_update_norm_sgd_is_linear_in_the_rate_and_leaves_the_model_alone():
    model = TinyTransformer("post", 2, width=16, heads=2, vocab=7, seq_len=6, seed=0).double()
    tokens, mask = reversal_task(8, seq_len=6, vocab=7, rng=0)
    before = [p.detach().clone() for p in model.parameters()]
    small = first_update_norm(model, tokens, lr=1e-6, mask=mask)
    smaller = first_update_norm(model, tokens, lr=1e-7, mask=mask)
    assert small / 1e-6 == pytest.approx(smaller / 1e-7, rel=1e-3)  # ΔF = η J g + O(η²)
    for p, q in zip(before, model.parameters()):
        assert torch.equal(p, q)
    # by hand: SGD step on a copy, RMS over positions of the per-token change of F
    grads = torch.autograd.grad(model.loss(tokens, mask), list(model.parameters()))
    with torch.no_grad():
        f0 = model.features(tokens[:, :-1])
        for p, g in zip(model.parameters(), grads):
            p -= 1e-3 * g
        f1 = model.features(tokens[:, :-1])
    want = float((f1 - f0).pow(2).sum(-1).mean().sqrt())
    assert first_update_norm(TinyTransformer("post", 2, width=16, heads=2, vocab=7, seq_len=6, seed=0).double(), tokens, lr=1e-3, mask=mask) == pytest.approx(want, rel=1e-9)


def test_first_update_norm_adam_step_is_sign_like():
    """Adam's first step moves every parameter with a non-zero gradient by about η."""
    model = TinyTransformer("deepnorm", 2, width=16, heads=2, vocab=7, seq_len=6, seed=0).double()
    tokens, _ = reversal_task(8, seq_len=6, vocab=7, rng=0)
    a = first_update_norm(model, tokens, lr=1e-5, optimizer="adam")
    b = first_update_norm(model, tokens, lr=2e-5, optimizer="adam")
    assert b / a == pytest.approx(2.0, rel=1e-3)


# ----------------------------------------------------------------------------- initialization


def test_initial_weights_are_the_seeded_draws():
    """Every drawn tensor is std × (the next standard normals of default_rng(seed)), in registration order."""
    for placement, init in (("post", "xavier"), ("pre", "gpt2"), ("deepnorm", "xavier")):
        depth = 3
        model = TinyTransformer(placement, depth, init=init, seed=9, **TINY)
        rng = np.random.default_rng(9)
        alpha, beta = (model.alpha, model.beta)
        for name, p in model.named_parameters():
            if p.ndim == 1:
                assert torch.all(p == (0.0 if name.endswith("bias") else 1.0)), name
                continue
            z = rng.standard_normal(tuple(p.shape))
            if init == "gpt2":
                std = 0.02 / math.sqrt(2 * depth) if name.endswith(("attn.o.weight", "ffn.w2.weight")) else 0.02
            elif name in ("tok.weight", "pos.weight"):
                std = math.sqrt(0.5)
            else:
                std = math.sqrt(2.0 / sum(p.shape))
                if name.split(".")[-2] in ("v", "o", "w1", "w2"):
                    std *= beta
            np.testing.assert_allclose(_np(p), (z * std).astype(np.float32), rtol=0, atol=0, err_msg=name)
        assert alpha >= 1.0


def test_deepnorm_is_post_with_beta_scaled_branch_weights():
    post = TinyTransformer("post", 4, seed=3, **TINY)
    deep = TinyTransformer("deepnorm", 4, seed=3, **TINY)
    beta = deepnorm_constants("decoder", M=4)[1]
    for (name, p), (_, q) in zip(post.named_parameters(), deep.named_parameters()):
        scaled = name.split(".")[-2] in ("v", "o", "w1", "w2") and name.startswith("blocks")
        np.testing.assert_allclose(_np(q), _np(p) * (beta if scaled else 1.0), rtol=1e-6, err_msg=name)


def test_the_same_seed_gives_the_same_raw_weights_for_every_placement_and_qk_norm():
    a = dict(TinyTransformer("post", 2, seed=5, **TINY).named_parameters())
    b = dict(TinyTransformer("pre", 2, seed=5, qk_norm=True, **TINY).named_parameters())
    for name in a:
        assert torch.equal(a[name], b[name]), name
    c = TinyTransformer("post", 2, seed=6, **TINY)
    assert not torch.equal(a["blocks.0.ffn.w2.weight"], c.get_parameter("blocks.0.ffn.w2.weight"))


def test_init_does_not_touch_torch_global_generator():
    state = torch.random.get_rng_state()
    TinyTransformer("pre", 2, seed=0, **TINY)
    train("post", depth=1, steps=2, lr=1e-3, eval_batch=4, batch=2, **TINY)
    assert torch.equal(state, torch.random.get_rng_state())


# ----------------------------------------------------------------------------- the task


def test_reversal_task_structure():
    tokens, mask = reversal_task(6, seq_len=8, vocab=10, rng=0)
    t = _np(tokens)
    assert t.shape == (6, 9) and mask.shape == (6, 8) and tokens.dtype == torch.long and mask.dtype == torch.bool
    np.testing.assert_array_equal(t[:, 4], 0)  # the separator
    np.testing.assert_array_equal(t[:, 5:], t[:, 3::-1])  # the reversal
    assert t[:, :4].min() >= 1 and t[:, :4].max() <= 9
    np.testing.assert_array_equal(_np(mask), np.repeat([[False] * 4 + [True] * 4], 6, axis=0))
    again, _ = reversal_task(6, seq_len=8, vocab=10, rng=np.random.default_rng(0))
    assert torch.equal(tokens, again)


def test_a_model_that_knows_nothing_scores_log_vocab_minus_one():
    """The reference loss ln(vocab − 1): uniform logits over the symbols."""
    tokens, mask = reversal_task(64, seq_len=8, vocab=10, rng=0)
    logits = torch.zeros(64, 8, 10)
    logits[..., 0] = -1e9
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    assert float((nll * mask).sum() / mask.sum()) == pytest.approx(math.log(9), rel=1e-6)


# ----------------------------------------------------------------------------- training


def test_training_is_deterministic_for_a_seed():
    kw = dict(depth=2, width=16, heads=2, lr=3e-3, steps=6, warmup_steps=2, batch=4, eval_batch=8, clip=1.0)
    a, b = train("post", seed=1, **kw), train("post", seed=1, **kw)
    for field in ("loss", "grad_norm", "max_logit", "attn_entropy", "lr_used"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.final_loss == b.final_loss and not a.diverged
    c = train("post", seed=2, **kw)
    assert not np.array_equal(a.loss, c.loss)


def test_train_result_is_frozen_and_read_only():
    r = train("pre", depth=1, width=8, heads=2, lr=1e-3, steps=3, batch=2, eval_batch=4)
    assert r.loss.shape == r.grad_norm.shape == r.max_logit.shape == (3,)
    assert isinstance(r.final_loss, float) and r.final_loss > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.final_loss = 0.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        r.loss[0] = 0.0


def test_training_learns_the_task():
    """Pre-LN, 2 layers, 4 symbols: 120 steps take the held-out loss far below ln(7) = 1.95."""
    r = train("pre", depth=2, width=16, heads=2, vocab=8, seq_len=8, lr=1e-2, steps=120, seed=0, batch=16, eval_batch=64)
    assert r.final_loss < 0.25 * math.log(7) and r.loss[-1] < r.loss[0]


def test_clipping_and_grad_norm_record():
    r = train("post", depth=2, width=16, heads=2, lr=1e-3, steps=4, batch=4, eval_batch=4, clip=1e-3)
    assert np.all(r.grad_norm > 1e-3)  # recorded before clipping


def test_divergence_is_reported_not_silent():
    r = train("pre", depth=2, width=16, heads=2, lr=1e30, steps=5, batch=4, eval_batch=4)
    assert r.diverged and math.isnan(r.final_loss)
    first_nan = int(np.argmax(np.isnan(r.loss)))
    assert np.all(np.isnan(r.loss[first_nan:])) and np.all(np.isfinite(r.loss[:first_nan]))


def test_lr_schedule():
    lrs = [tf.lr_schedule(t, lr=1.0, warmup_steps=4, steps=20) for t in range(20)]
    np.testing.assert_allclose(lrs[:4], [0.25, 0.5, 0.75, 1.0])
    assert lrs[4] == pytest.approx(1.0) and lrs[-1] == pytest.approx(0.1)
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:]))
    assert tf.lr_schedule(10, lr=2.0, warmup_steps=0, steps=20, decay="none") == 2.0


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, kwargs, exc, msg",
    [
        (("middle", 2), {}, ValueError, "placement must be one of"),
        (("post", 0), {}, ValueError, "depth"),
        (("post", 2), dict(init="kaiming"), ValueError, "init must be one of"),
        (("deepnorm", 2), dict(init="gpt2"), ValueError, "init='xavier'"),
        (("post", 2), dict(width=10, heads=4), ValueError, "multiple of heads"),
        (("post", 2), dict(qk_norm=1), TypeError, "qk_norm"),
        (("post", 2), dict(vocab=2), ValueError, "vocab"),
        (("post", 2), dict(seed=-1), ValueError, "seed"),
    ],
)
def test_bad_model_arguments(args, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        TinyTransformer(*args, **kwargs)


def test_bad_tokens_and_measurement_arguments():
    model = TinyTransformer("post", 1, **TINY)
    tokens, _ = reversal_task(2, seq_len=4, vocab=5, rng=0)
    with pytest.raises(TypeError, match="LongTensor"):
        ffn_grad_norms(model, tokens.float())
    with pytest.raises(ValueError, match="vocabulary|0 … 4"):
        ffn_grad_norms(model, tokens + 10)
    with pytest.raises(ValueError, match="at least 2 positions"):
        ffn_grad_norms(model, tokens[:, :1])
    with pytest.raises(ValueError, match="seq_len=4"):
        model(torch.zeros(1, 6, dtype=torch.long))
    with pytest.raises(TypeError, match="TinyTransformer"):
        ffn_grad_norms(torch.nn.Linear(2, 2), tokens)
    with pytest.raises(ValueError, match="lr"):
        first_update_norm(model, tokens, lr=0.0)
    with pytest.raises(ValueError, match="optimizer"):
        first_update_norm(model, tokens, lr=1e-3, optimizer="lion")


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        (dict(lr=0.0), ValueError, "lr"),
        (dict(lr=1e-3, warmup_steps=10, steps=5), ValueError, "warmup_steps must be <= steps"),
        (dict(lr=1e-3, clip=0.0), ValueError, "clip"),
        (dict(lr=1e-3, decay="linear"), ValueError, "decay"),
        (dict(lr=1e-3, weight_decay=-1.0), ValueError, "weight_decay"),
        (dict(lr=1e-3, seq_len=5), ValueError, "even"),
    ],
)
def test_bad_train_arguments(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        train("post", depth=1, steps=kwargs.pop("steps", 5), **kwargs)


def test_reversal_task_bad_input():
    with pytest.raises(ValueError, match="even"):
        reversal_task(2, seq_len=5, rng=0)
    with pytest.raises(TypeError, match="rng"):
        reversal_task(2, seq_len=4)
    with pytest.raises(ValueError, match="vocab"):
        reversal_task(2, seq_len=4, vocab=2, rng=0)


# ----------------------------------------------------------------------------- the vectorized trainer


GRID = dict(depth=2, width=16, heads=2, vocab=7, seq_len=6, batch=4, eval_batch=8, steps=5)


def test_train_grid_members_are_the_single_runs():
    """Each run of a grid equals train() with its own (lr, warmup, seed): the runs do not interact."""
    grid = tf.train_grid("post", lrs=(1e-3, 4e-3), warmups=(0, 3), seeds=(0, 2), clip=0.5, **GRID)
    assert [(r.lr, r.warmup_steps, r.seed) for r in grid] == [
        (lr, w, s) for lr in (1e-3, 4e-3) for w in (0, 3) for s in (0, 2)
    ]
    for r in grid:
        one = train("post", lr=r.lr, warmup_steps=r.warmup_steps, seed=r.seed, clip=0.5, **GRID)
        for field in ("loss", "grad_norm", "max_logit", "lr_used"):
            np.testing.assert_allclose(getattr(r, field), getattr(one, field), rtol=2e-5, err_msg=field)
        assert r.final_loss == pytest.approx(one.final_loss, rel=1e-4)


def test_written_out_adamw_is_torch_adamw():
    """train()'s per-run AdamW, schedule and clipping against torch.optim.AdamW on the plain module."""
    kw = dict(GRID, steps=6)
    got = train("pre", lr=3e-3, warmup_steps=2, seed=1, clip=0.3, weight_decay=0.1, **kw)
    model = TinyTransformer("pre", 2, width=16, heads=2, vocab=7, seq_len=6, seed=1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.1)
    rng = np.random.default_rng([1, 1])
    losses, norms = [], []
    for t in range(6):
        for g in opt.param_groups:
            g["lr"] = tf.lr_schedule(t, lr=3e-3, warmup_steps=2, steps=6)
        tokens, mask = reversal_task(4, seq_len=6, vocab=7, rng=rng)
        opt.zero_grad()
        loss = model.loss(tokens, mask)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.3)))
        losses.append(float(loss.detach()))
        opt.step()
    np.testing.assert_allclose(got.loss, losses, rtol=2e-5)
    np.testing.assert_allclose(got.grad_norm, norms, rtol=2e-5)


def test_a_diverging_run_does_not_touch_its_neighbours():
    grid = tf.train_grid("pre", lrs=(1e-3, 1e30), seeds=(0,), **GRID)
    alone = train("pre", lr=1e-3, seed=0, **GRID)
    assert not grid[0].diverged and grid[1].diverged and math.isnan(grid[1].final_loss)
    np.testing.assert_allclose(grid[0].loss, alone.loss, rtol=2e-5)


def test_train_grid_bad_input():
    with pytest.raises(ValueError, match="lrs must not be empty"):
        tf.train_grid("post", lrs=(), **GRID)
    with pytest.raises(ValueError, match="lrs"):
        tf.train_grid("post", lrs=(1e-3, -1.0), **GRID)
    with pytest.raises(ValueError, match="warmup"):
        tf.train_grid("post", lrs=1e-3, warmups=(0, 99), **GRID)
    with pytest.raises(ValueError, match="seeds"):
        tf.train_grid("post", lrs=1e-3, seeds=(-1,), **GRID)


def test_train_grids_in_worker_processes_equal_in_process_runs():
    jobs = [dict(placement=p, lrs=(2e-3,), seeds=(0, 1), **GRID) for p in ("post", "pre", "deepnorm")]
    here = tf.train_grids(jobs, processes=1)
    there = tf.train_grids(jobs, processes=2)
    assert len(there) == 3
    for a_runs, b_runs in zip(here, there):
        for a, b in zip(a_runs, b_runs):
            assert (a.placement, a.seed) == (b.placement, b.seed)
            np.testing.assert_allclose(a.loss, b.loss, rtol=1e-5)
            assert not b.loss.flags.writeable  # read-only after the trip through pickle
    with pytest.raises(TypeError, match="dict"):
        tf.train_grids([("post",)])


def test_train_grids_on_any_executor_and_device():
    """A thread executor (the caller's) gives the serial results in job order; device reaches every job."""
    from concurrent.futures import Future, ThreadPoolExecutor

    jobs = [dict(placement=p, lrs=(2e-3,), seeds=(0,), **GRID) for p in ("post", "pre")]
    serial = tf.train_grids(jobs, processes=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = tf.train_grids(jobs, executor=pool, device="cpu")
        assert not pool._shutdown  # the caller owns the executor
    for a_runs, b_runs in zip(serial, threaded):
        for a, b in zip(a_runs, b_runs):
            assert a.placement == b.placement
            np.testing.assert_allclose(a.loss, b.loss, rtol=1e-5)

    class Recording:
        """The smallest executor: runs each call at submit, records the jobs."""

        def __init__(self):
            self.jobs = []

        def submit(self, fn, job):
            self.jobs.append(job)
            f = Future()
            f.set_result(fn(job))
            return f

    rec = Recording()
    tf.train_grids(jobs[:1], executor=rec, device="cpu")
    assert rec.jobs[0]["device"] == "cpu"
    with pytest.raises(TypeError, match="Executor"):
        tf.train_grids(jobs, executor=object())
    with pytest.raises(ValueError, match="device"):
        tf.train_grid("post", lrs=1e-3, device="no-such-device", **GRID)


def test_first_update_norm_of_a_parameter_subset():
    """Updating only some parameters: by hand, and the pieces are additive to first order in η."""
    model = TinyTransformer("deepnorm", 3, width=16, heads=2, vocab=7, seq_len=6, seed=1).double()
    tokens, _ = reversal_task(8, seq_len=6, vocab=7, rng=1)
    branch = lambda n: n.startswith("blocks") and n.split(".")[-2] in ("v", "o", "w1", "w2")  # noqa: E731
    names = [n for n, _ in model.named_parameters() if branch(n)]
    grads = torch.autograd.grad(model.loss(tokens), [model.get_parameter(n) for n in names])
    stepped = TinyTransformer("deepnorm", 3, width=16, heads=2, vocab=7, seq_len=6, seed=1).double()
    with torch.no_grad():
        for n, g in zip(names, grads):
            stepped.get_parameter(n).sub_(1e-3 * g)
        want = float((stepped.features(tokens[:, :-1]) - model.features(tokens[:, :-1])).pow(2).sum(-1).mean().sqrt())
    assert first_update_norm(model, tokens, lr=1e-3, params=branch) == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="selects no parameter"):
        first_update_norm(model, tokens, lr=1e-3, params=lambda n: False)
    with pytest.raises(TypeError, match="predicate"):
        first_update_norm(model, tokens, lr=1e-3, params=["blocks.0.ffn.w2.weight"])


# ----------------------------------------------------------------------------- reading a sweep


def test_initial_losses_are_a_run_s_first_loss_and_what_a_frozen_run_keeps():
    """initial_losses draws train_grid's batches: step 0 of every run, and every step of a run at a negligible rate."""
    kw = {k: GRID[k] for k in ("depth", "width", "heads", "vocab", "seq_len", "batch")}
    ref = tf.initial_losses("post", seeds=(0, 3), steps=GRID["steps"], **kw)
    assert ref.shape == (2, GRID["steps"])
    moving = tf.train_grid("post", lrs=(1e-2,), seeds=(0, 3), **GRID)
    np.testing.assert_allclose(ref[:, 0], [r.loss[0] for r in moving], rtol=2e-5)
    assert np.all(np.abs([r.loss[1:] - row[1:] for r, row in zip(moving, ref)]) > 1e-4)  # a real rate moves the loss
    frozen = tf.train_grid("post", lrs=(1e-12,), seeds=(0, 3), **GRID)
    np.testing.assert_allclose([r.loss for r in frozen], ref, rtol=2e-5)
    one = TinyTransformer("post", GRID["depth"], width=16, heads=2, vocab=7, seq_len=6, seed=3)
    rng = np.random.default_rng([3, 1])
    with torch.no_grad():
        by_hand = [float(one.loss(*reversal_task(4, seq_len=6, vocab=7, rng=rng))) for _ in range(GRID["steps"])]
    np.testing.assert_allclose(ref[1], by_hand, rtol=1e-12)
    with pytest.raises(ValueError, match="seeds must not be empty"):
        tf.initial_losses("post", seeds=(), steps=2, **kw)
    with pytest.raises(ValueError, match="placement"):
        tf.initial_losses("sideways", seeds=0, steps=2, **kw)


@pytest.mark.parametrize(
    "k, n, want",
    [(8, 8, "yes"), (7, 8, "yes"), (6, 8, "undecided"), (2, 8, "undecided"), (1, 8, "no"), (0, 8, "no"),
     (3, 3, "undecided"), (0, 3, "undecided"), (1, 1, "undecided"), (5, 5, "yes"), (9, 10, "yes"), (8, 10, "undecided")],
)
def test_majority_call_is_the_one_sided_binomial_test(k, n, want):
    assert tf.majority_call(k, n) == want
    tail = sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n  # the closed form the rule compares with 0.05
    assert (tail < 0.05) == (want == "yes")


def test_majority_call_bad_input():
    assert tf.majority_call(6, 8, level=0.2) == "yes"  # P(X >= 6 | 8, 1/2) = 37/256 = 0.14
    with pytest.raises(ValueError, match="at most"):
        tf.majority_call(9, 8)
    with pytest.raises(ValueError, match=r"\(0, 1/2\)"):
        tf.majority_call(4, 8, level=0.5)
    with pytest.raises(TypeError, match="level"):
        tf.majority_call(4, 8, level="0.05")
    with pytest.raises(TypeError, match="integer"):
        tf.majority_call(4.0, 8)


def test_worker_pool_runs_jobs_like_this_process():
    jobs = [dict(placement="pre", lrs=(2e-3,), seeds=(0,), **GRID)]
    (here,) = tf.train_grids(jobs, processes=1)
    with tf.worker_pool(1) as pool:
        (there,) = tf.train_grids(jobs, executor=pool)
        threads = pool.submit(torch.get_num_threads).result()
    np.testing.assert_allclose(here[0].loss, there[0].loss, rtol=1e-5)
    assert threads == 1
    with pytest.raises(ValueError, match="processes"):
        tf.worker_pool(0)
    with pytest.raises(TypeError, match="threads"):
        tf.worker_pool(1, threads=1.5)


def test_submit_grids_returns_futures_in_job_order_and_refuses_bad_input():
    from concurrent.futures import ThreadPoolExecutor

    jobs = [dict(placement=p, lrs=(2e-3,), seeds=(0,), **GRID) for p in ("pre", "post")]
    serial = tf.train_grids(jobs, processes=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = tf.submit_grids(jobs, pool)
        got = [f.result() for f in futures]
    for a_runs, b_runs in zip(serial, got):
        assert [r.placement for r in a_runs] == [r.placement for r in b_runs]
        np.testing.assert_allclose(a_runs[0].loss, b_runs[0].loss, rtol=1e-5)
    with pytest.raises(TypeError, match="Executor"):
        tf.submit_grids(jobs, object())
    with pytest.raises(TypeError, match="dict"):
        tf.submit_grids([("pre",)], ThreadPoolExecutor(max_workers=1))


def test_design_jobs_one_job_per_seed_set_longest_first():
    design = {("post", 0, 5): ((1e-3, 2e-3), (4e-3,)), ("pre", 3, 8): ((1e-3,), ())}
    jobs = tf.design_jobs(design, seeds=(0, 1, 2, 3), few=(0,), depth=2)
    assert [(j["placement"], j["warmups"], j["steps"], j["lrs"], j["seeds"]) for j in jobs] == [
        ("post", (0,), 5, (1e-3, 2e-3), (0, 1, 2, 3)),  # 2 rates x 4 seeds x 5 steps = 40 run-steps
        ("pre", (3,), 8, (1e-3,), (0, 1, 2, 3)),  # 32
        ("post", (0,), 5, (4e-3,), (0,)),  # 5; the empty rate list of "pre" makes no job
    ]
    assert all(j["depth"] == 2 for j in jobs)
    with pytest.raises(TypeError, match="mapping"):
        tf.design_jobs([("post", 0, 5)], seeds=(0,))
    with pytest.raises(TypeError, match="design entries"):
        tf.design_jobs({("post", 0): ((1e-3,), ())}, seeds=(0,))


# ----------------------------------------------------------------------------- the initialization scale (real-transformer)


def test_set_normal_init_is_sigma_times_the_seeded_draws_and_can_be_repeated():
    model = tf.set_normal_init(TinyTransformer("post", 2, seed=4, **TINY).double(), 0.3)
    rng = np.random.default_rng(4)
    for name, p in model.named_parameters():
        if p.ndim == 1:
            assert torch.all(p == (0.0 if name.endswith("bias") else 1.0)), name  # LayerNorm untouched
            continue
        np.testing.assert_allclose(_np(p), 0.3 * rng.standard_normal(tuple(p.shape)), rtol=1e-6, err_msg=name)
    again = tf.set_normal_init(tf.set_normal_init(TinyTransformer("post", 2, seed=4, **TINY).double(), 2.0), 0.3)
    for (name, p), (_, q) in zip(model.named_parameters(), again.named_parameters()):
        np.testing.assert_allclose(_np(q), _np(p), rtol=1e-12, err_msg=name)
    gpt2 = tf.set_normal_init(TinyTransformer("pre", 2, init="gpt2", seed=4, **TINY).double(), 0.3)
    theirs = dict(gpt2.named_parameters())  # Pre-LN has a final LN: match by name
    for name, p in model.named_parameters():  # the same draws, whatever the init
        q = theirs[name]
        np.testing.assert_allclose(_np(q), _np(p), rtol=1e-6, err_msg=name)  # each was stored in float32 first


@pytest.mark.parametrize("bad, exc", [(0.0, ValueError), (-1.0, ValueError), (float("inf"), ValueError), ("0.1", TypeError)])
def test_set_normal_init_bad_sigma(bad, exc):
    with pytest.raises(exc, match="sigma"):
        tf.set_normal_init(TinyTransformer("post", 1, **TINY), bad)
    with pytest.raises(TypeError, match="TinyTransformer"):
        tf.set_normal_init(torch.nn.Linear(2, 2), 0.1)


def _group_gradients(model, tokens, groups):
    """Each mini-batch's W2 gradients by autograd on its own loss: (groups, depth, d * 4d)."""
    weights = [b.ffn.w2.weight for b in model.blocks]
    out = []
    for chunk in tokens.chunk(groups):
        out.append(torch.stack([g.flatten() for g in torch.autograd.grad(model.loss(chunk), weights)]))
    return torch.stack(out).double()


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_ffn_grad_stats_against_each_mini_batch_by_autograd(placement):
    model = TinyTransformer(placement, 3, width=16, heads=2, vocab=7, seq_len=6, seed=1).double()
    tokens, _ = reversal_task(12, seq_len=6, vocab=7, rng=3)
    stats = tf.ffn_grad_stats(model, tokens, groups=4)
    g = _group_gradients(model, tokens, 4)  # (K, L, n)
    mean = g.mean(0)
    np.testing.assert_allclose(stats.group_norms, _np(g.norm(dim=-1)), rtol=1e-10)
    np.testing.assert_allclose(stats.mean_norm, _np(mean.norm(dim=-1)), rtol=1e-10)
    np.testing.assert_allclose(stats.mean_norm, ffn_grad_norms(model, tokens), rtol=1e-10)  # the whole batch's gradient
    # the U-statistic: the mean over pairs k != j of g_k . g_j
    pairs = [(g[k] * g[j]).sum(-1) for k in range(4) for j in range(4) if k != j]
    np.testing.assert_allclose(stats.expected_sq, _np(torch.stack(pairs).mean(0)), rtol=1e-9)
    np.testing.assert_allclose(stats.noise_share, 1 - stats.expected_sq / stats.mean_norm**2)
    assert stats.groups == 4 and stats.group_norms.shape == (4, 3)
    with pytest.raises(ValueError):
        stats.mean_norm[0] = 1.0  # read-only
    assert all(p.grad is None for p in model.parameters())


def test_ffn_grad_stats_expected_sq_is_unbiased_for_the_expected_gradient():
    """Averaged over many independent batches, expected_sq approaches ‖E g‖² (here: a 2048-sequence mean), mean_norm² overshoots it."""
    model = TinyTransformer("post", 1, width=8, heads=2, vocab=7, seq_len=6, seed=0).double()
    big, _ = reversal_task(2048, seq_len=6, vocab=7, rng=11)
    target = ffn_grad_norms(model, big) ** 2  # ‖E g‖² up to a noise of order tr Σ / 4096
    est, naive = [], []
    for r in range(80):
        tokens, _ = reversal_task(8, seq_len=6, vocab=7, rng=1000 + r)
        s = tf.ffn_grad_stats(model, tokens, groups=2)
        est.append(s.expected_sq)
        naive.append(s.mean_norm**2)
    est, naive = np.array(est), np.array(naive)
    se = est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(0) - target) < 4 * se + 0.01 * target)
    assert np.all(naive.mean(0) > target + 4 * se)  # the plain norm carries the noise tr Σ / K


def test_ffn_grad_stats_bad_input():
    model = TinyTransformer("post", 1, **TINY)
    tokens, _ = reversal_task(6, seq_len=4, vocab=5, rng=0)
    with pytest.raises(ValueError, match="groups"):
        tf.ffn_grad_stats(model, tokens, groups=1)
    with pytest.raises(ValueError, match="divide"):
        tf.ffn_grad_stats(model, tokens, groups=4)
    with pytest.raises(TypeError, match="groups"):
        tf.ffn_grad_stats(model, tokens, groups=2.0)
    with pytest.raises(TypeError, match="LongTensor"):
        tf.ffn_grad_stats(model, tokens.float(), groups=2)


def test_init_profile_is_the_model_built_and_measured_by_hand():
    kw = dict(width=16, heads=2, seed=3)
    got = tf.init_profile("post", 2, sigma=0.1, batch=8, groups=4, **kw)
    model = tf.set_normal_init(TinyTransformer("post", 2, **kw), 0.1)
    tokens, _ = reversal_task(8, rng=np.random.default_rng([3, 7]))
    want = tf.ffn_grad_stats(model, tokens, groups=4)
    np.testing.assert_array_equal(got.expected_sq, want.expected_sq)
    assert tf.init_profile("pre", 1, width=64, batch=2, groups=2).group_norms.shape == (2, 1)  # heads = max(4, d // 64)


def test_attention_without_mixing_is_each_positions_own_value():
    import pickle

    stats = tf.init_profile("post", 2, width=16, heads=2, mixing=False, batch=4, groups=2)
    assert pickle.loads(pickle.dumps(stats)).expected_sq.flags.writeable is False
    model = TinyTransformer("post", 1, width=16, heads=2, seed=0).double()
    model.blocks[0].attn.causal = torch.eye(model.seq_len, dtype=torch.bool)
    x = torch.randn(3, 5, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    attn = model.blocks[0].attn
    torch.testing.assert_close(attn(x), attn.o(attn.v(x)))
    with pytest.raises(TypeError, match="mixing"):
        tf.init_profile("post", 1, mixing=0)


def test_init_profiles_in_worker_processes_equal_in_process_runs():
    jobs = [dict(placement=p, depth=2, width=16, heads=2, seed=s, batch=4, groups=2) for p in ("post", "pre") for s in (0, 1)]
    here = tf.init_profiles(jobs, processes=1)
    there = tf.init_profiles(jobs, processes=2)
    for a, b in zip(here, there):
        np.testing.assert_array_equal(a.expected_sq, b.expected_sq)
    twice = tf.init_profiles(jobs[:2] + [dict(jobs[0])], processes=1)  # an identical job runs once
    assert twice[2] is twice[0]
    with pytest.raises(TypeError, match="dict"):
        tf.init_profiles([("post", 2)])


def test_linear_grad_stats_on_a_transposed_weight_and_bad_input():
    """A Conv1D-like layer (y = x W + b, W of shape (in, out), as Hugging Face's GPT-2) gives the same norms."""

    class Conv1D(torch.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.weight = torch.nn.Parameter(w)

        def forward(self, x):
            return x @ self.weight

    gen = torch.Generator().manual_seed(1)
    w = torch.randn(5, 3, dtype=torch.float64, generator=gen)
    layer, x, y = Conv1D(w), torch.randn(6, 4, 5, dtype=torch.float64, generator=gen), torch.randn(6, 4, 3, dtype=torch.float64, generator=gen)
    loss = lambda: (layer(x) - y).pow(2).mean()  # noqa: E731  the mean of 3 equal mini-batch means
    stats = tf.linear_grad_stats(loss, [layer], groups=3)
    for k in range(3):
        g, = torch.autograd.grad((layer(x[2 * k:2 * k + 2]) - y[2 * k:2 * k + 2]).pow(2).mean(), [layer.weight])
        assert stats.group_norms[k, 0] == pytest.approx(float(g.norm()), rel=1e-12)
    with pytest.raises(TypeError, match="callable"):
        tf.linear_grad_stats(1.0, [layer], groups=2)
    with pytest.raises(ValueError, match="at least one"):
        tf.linear_grad_stats(loss, [], groups=2)
    with pytest.raises(ValueError, match="did not run"):
        tf.linear_grad_stats(loss, [layer, Conv1D(w)], groups=2)
    with pytest.raises(ValueError, match="divide"):
        tf.linear_grad_stats(loss, [layer], groups=4)


def test_ffn_inputs_are_what_each_w1_reads():
    model = tf.init_model("pre", 2, width=16, heads=2, seed=1)
    tokens, _ = reversal_task(3, rng=0)
    xs = tf.ffn_inputs(model, tokens)
    assert len(xs) == 2 and xs[0].shape == (3, 16, 16)
    with torch.no_grad():
        x = model.tok(tokens[:, :-1]) + model.pos.weight[:16]
        x = x + model.blocks[0].attn(model.blocks[0].ln1(x))
        torch.testing.assert_close(xs[0], model.blocks[0].ln2(x))
    with pytest.raises(TypeError, match="mixing"):
        tf.init_model("post", 1, mixing="no")
