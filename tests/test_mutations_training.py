"""Tests that kill the mutants of normlib.transformer and normlib.mlp that survived mutation
testing (issue 13, §9): the learning-rate schedule, gradient clipping, the warmup bound, and
the batched MLP's bookkeeping (dropped remainder, lr × seed pairing, output init, divergence).

Tiny models and synthetic data (no scikit-learn), one torch thread: the file runs in a
couple of seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from normlib import transformer as tf
from normlib.mlp import DigitsSplit, init_mlp, train_mlp

torch.set_num_threads(1)

GRID = dict(depth=1, width=8, heads=2, vocab=5, seq_len=4, batch=2, eval_batch=4)


# ----------------------------------------------------------------------------- lr_schedule


@pytest.mark.parametrize("steps", [2, 3, 10])
def test_one_post_warmup_step_gets_the_peak_rate(steps):
    """Mutant: the cosine branch is taken when one step is left after warmup (``steps - warmup < 1``).

    Then frac = (t − w)/(steps − w − 1) = 0/0: ZeroDivisionError. A single post-warmup step
    is both the first and the last of the decay; the schedule gives it the peak rate.
    """
    w = steps - 1
    assert tf.lr_schedule(steps - 1, lr=2.0, warmup_steps=w, steps=steps) == 2.0
    assert [tf.lr_schedule(t, lr=2.0, warmup_steps=w, steps=steps) for t in range(w)] == pytest.approx(
        [2.0 * (t + 1) / w for t in range(w)]
    )


def test_a_single_step_without_warmup_gets_the_peak_rate():
    assert tf.lr_schedule(0, lr=0.5, warmup_steps=0, steps=1) == 0.5


def test_two_post_warmup_steps_go_from_the_peak_to_a_tenth():
    """The smallest cosine: frac 0 then 1, i.e. lr then lr/10 (the divisor steps − w − 1 is 1)."""
    assert tf.lr_schedule(3, lr=1.0, warmup_steps=3, steps=5) == 1.0
    assert tf.lr_schedule(4, lr=1.0, warmup_steps=3, steps=5) == pytest.approx(0.1)


def test_train_with_one_post_warmup_step_runs():
    """The same through train(): 3 steps, warmup 2, so the last step is the only decay step."""
    r = tf.train("pre", lr=1e-3, warmup_steps=2, steps=3, **GRID)
    np.testing.assert_allclose(r.lr_used, [0.5e-3, 1e-3, 1e-3], rtol=1e-7)  # lr_used is recorded from a float32 tensor
    assert not r.diverged


# ----------------------------------------------------------------------------- warmup == steps


def test_warmup_as_long_as_the_run_is_allowed():
    """Mutant: ``max(warmups) >= steps`` refused. warmup_steps = steps is legal: the whole run warms up."""
    r = tf.train("post", lr=3e-3, warmup_steps=3, steps=3, **GRID)
    np.testing.assert_allclose(r.lr_used, [1e-3, 2e-3, 3e-3], rtol=1e-7)  # lr_used is recorded from a float32 tensor
    grid = tf.train_grid("post", lrs=(3e-3,), warmups=(0, 3), steps=3, **GRID)
    assert [g.warmup_steps for g in grid] == [0, 3]
    with pytest.raises(ValueError, match="warmup_steps must be <= steps"):
        tf.train("post", lr=3e-3, warmup_steps=4, steps=3, **GRID)


# ----------------------------------------------------------------------------- clipping


def test_a_clip_above_the_gradient_norm_changes_nothing():
    """Mutant: the clip coefficient clip/‖g‖ is not clamped at 1.

    With a threshold far above every gradient norm the run must equal the unclipped run
    bit for bit (coefficient exactly 1). Unclamped, the gradient is scaled up by
    clip/‖g‖ ≈ 10⁴ with a different factor at every step, which changes AdamW's moment
    estimates (and the eps term), so the losses after the first step differ.
    """
    kw = dict(lr=1e-2, steps=4, seed=3, **GRID)
    free = tf.train("pre", **kw)
    clip = 1e3
    assert np.nanmax(free.grad_norm) < clip / 10  # the premise: the threshold is above every norm
    clipped = tf.train("pre", clip=clip, **kw)
    np.testing.assert_array_equal(clipped.grad_norm, free.grad_norm)
    np.testing.assert_array_equal(clipped.loss, free.loss)
    assert clipped.final_loss == free.final_loss


# ----------------------------------------------------------------------------- the MLP


def _split(n_train=7, d=6, classes=4, seed=0) -> DigitsSplit:
    """Synthetic data in the shape of load_digits_split (standard normal inputs)."""
    rng = np.random.default_rng(seed)

    def part(n):
        return rng.standard_normal((n, d)), rng.integers(0, classes, n).astype(np.int64)

    (xt, yt), (xv, yv), (xs, ys) = part(n_train), part(9), part(9)
    yt[:classes] = np.arange(classes)  # every class occurs in training: n_classes = y_train.max() + 1
    return DigitsSplit(xt, yt, xv, yv, xs, ys)


def test_the_remainder_batch_is_dropped():
    """Mutant: the last, incomplete batch is trained too (ceil(n / B) steps per epoch).

    n = 7, B = 3: two steps of three examples; the example at position 6 of the epoch's
    permutation (``default_rng([seed, 1]).permutation(7)``) is never seen, so changing its
    input and label changes nothing. Training it (a batch of one) changes the weights.
    """
    split = _split()
    dropped = int(np.random.default_rng([5, 1]).permutation(7)[6])
    x, y = split.x_train.copy(), split.y_train.copy()
    x[dropped] += 10.0
    y[dropped] = (y[dropped] + 1) % 4
    other = DigitsSplit(x, y, split.x_val, split.y_val, split.x_test, split.y_test)
    if int(y.max()) != int(split.y_train.max()):  # the class count must not change with the label
        pytest.skip("relabelling changed the number of classes")
    kw = dict(lrs=[0.1], seeds=[5], epochs=1, hidden=(5,))
    a, b = train_mlp(split, "none", 3, **kw), train_mlp(other, "none", 3, **kw)
    for wa, wb in zip(a.model.weights + a.model.biases, b.model.weights + b.model.biases):
        np.testing.assert_array_equal(wa, wb)
    np.testing.assert_array_equal(a.train_loss, b.train_loss)


@pytest.mark.parametrize("norm", ["none", "layernorm"])
def test_every_lr_seed_pair_is_its_own_single_run(norm):
    """Mutant: rates and seeds paired with ``tile`` where ``repeat`` belongs (or the reverse).

    Model ``k·S + s`` has rate k and seed s: each entry (k, s) of a 2 × 3 grid equals the
    run of that rate and seed alone (K ≠ S, so a transposed pairing cannot coincide).
    """
    split = _split(n_train=12)
    lrs, seeds = [0.05, 0.2], [0, 4, 9]
    kw = dict(epochs=2, hidden=(5,))
    grid = train_mlp(split, norm, 4, lrs=lrs, seeds=seeds, **kw)
    assert grid.train_loss.shape == (2, 3)
    for k, lr in enumerate(lrs):
        for s, seed in enumerate(seeds):
            one = train_mlp(split, norm, 4, lrs=[lr], seeds=[seed], **kw)
            np.testing.assert_allclose(grid.train_loss[k, s], one.train_loss[0, 0], rtol=1e-12)
            for wg, wo in zip(grid.model.weights, one.model.weights):
                np.testing.assert_allclose(wg[k * len(seeds) + s], wo[0], rtol=1e-12, atol=1e-15)
    assert len({round(float(v), 12) for v in grid.train_loss.ravel()}) == 6  # six different runs


def test_output_layer_is_lecun_hidden_layers_he():
    """Mutant: the output layer He-initialized (variance 2/fan_in instead of 1/fan_in).

    The weights are the seeded draws scaled exactly: √(2/fan_in) for hidden layers,
    √(1/fan_in) for the last layer.
    """
    sizes, seeds = (6, 5, 4, 3), [2, 7]
    m = init_mlp("none", sizes, seeds)
    for layer, (fi, fo) in enumerate(zip(sizes[:-1], sizes[1:])):
        var = 1.0 if layer == len(sizes) - 2 else 2.0
        for i, s in enumerate(seeds):
            draws = np.random.default_rng([s, 0, layer]).standard_normal((fi, fo))
            np.testing.assert_array_equal(m.weights[layer][i], np.sqrt(var / fi) * draws)


def test_a_single_healthy_model_is_not_diverged():
    """Mutant: the divergence threshold 2·ln(C) computed from the wrong axis (ln M = 0 for one model).

    One model (M = 1) at a negligible rate keeps about its initial loss, which lies between
    ln C and 2 ln C (C = 4 classes): it is not diverged, and its errors are not set to 1.
    """
    run = train_mlp(_split(n_train=12), "none", 4, lrs=[1e-12], seeds=[0], epochs=1, hidden=(5,))
    C = 4
    assert math.log(C) < float(run.train_loss[0, 0]) < 2 * math.log(C)  # the premise
    assert run.diverged.shape == (1, 1) and not run.diverged[0, 0]
    assert run.test_error[0, 0] < 1.0


def test_only_the_diverging_model_is_flagged():
    """Two rates, one seed: the absurd rate diverges, the small one is not flagged with it."""
    run = train_mlp(_split(n_train=12), "none", 4, lrs=[1e-12, 1e6], seeds=[0], epochs=2, hidden=(5,))
    assert run.diverged.tolist() == [[False], [True]]
    assert run.test_error[1, 0] == 1.0 and run.test_error[0, 0] < 1.0
