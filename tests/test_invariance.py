"""Tests of normlib.invariance: the invariance table of Ba et al. and its closed forms.

Expected values come from the papers' Table 1 (``PAPER_TABLE``, Ba et al. 2016 and
Zhang & Sennrich 2019), from the closed forms derived in ``book/layernorm.md``, and from
the definitions of the transformations (Ba et al. §5.1). All in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose

import normlib as nl
from normlib import invariance as inv

U = np.finfo(np.float64).eps  # 2**-52
ROUNDING_UNITS = 16.0  # 2·log2(256): two roundings per level of a pairwise sum, as in the chapter


@pytest.fixture
def layer(rng):
    """A random layer and data set: W (H, d_in), X (N, d_in), gain, bias."""
    H, d_in, N = 32, 8, 12
    W = rng.standard_normal((H, d_in)) / np.sqrt(d_in)
    X = 0.5 + rng.standard_normal((N, d_in))
    gain = 1.0 + 0.1 * rng.standard_normal(H)
    bias = 0.1 * rng.standard_normal(H)
    return W, X, gain, bias


# ----------------------------------------------------------------------------- weight_norm


def test_weight_norm_rows_have_length_g(rng):
    v = rng.standard_normal((5, 7))
    g = rng.uniform(0.5, 2.0, 5)
    w = inv.weight_norm(v, g)
    assert_allclose(np.linalg.norm(w, axis=1), g, rtol=1e-14)
    # same direction as v
    assert_allclose(w / g[:, None], v / np.linalg.norm(v, axis=1, keepdims=True), rtol=1e-14)


def test_weight_norm_docstring_example():
    assert_allclose(inv.weight_norm(np.array([[3.0, 4.0]]), np.array([10.0])), [[6.0, 8.0]])


def test_weight_norm_default_gain_is_unit_rows(rng):
    w = inv.weight_norm(rng.standard_normal((4, 3)))
    assert_allclose(np.linalg.norm(w, axis=1), 1.0, rtol=1e-14)


@pytest.mark.parametrize(
    "v, g, exc",
    [
        (np.zeros((2, 3)), None, ValueError),  # zero row: direction undefined
        (np.ones(3), None, ValueError),  # 1-D
        (np.ones((2, 3)), np.ones(3), ValueError),  # gain of the wrong length
        (np.ones((2, 3), dtype=bool), None, TypeError),
        (np.array([["a", "b"]]), None, TypeError),
        (np.array([[np.nan, 1.0]]), None, ValueError),
        (np.ones((0, 3)), None, ValueError),
    ],
)
def test_weight_norm_bad_input(v, g, exc):
    with pytest.raises(exc):
        inv.weight_norm(v, g)


# ----------------------------------------------------------------------------- normalized_layer


def test_normalized_layer_matches_the_definitions(layer):
    W, X, gain, bias = layer
    A = X @ W.T
    eps = 1e-5
    assert_allclose(inv.normalized_layer("layernorm", W, X, gain, bias, eps=eps), nl.layer_norm(A, gain, bias, eps=eps))
    assert_allclose(inv.normalized_layer("rmsnorm", W, X, gain, bias, eps=eps), nl.rms_norm(A, gain, eps=eps) + bias)
    assert_allclose(
        inv.normalized_layer("prmsnorm", W, X, gain, bias, eps=eps, p=0.25),
        nl.partial_rms_norm(A, gain, p=0.25, eps=eps) + bias,
    )
    # BatchNorm: per unit over the batch axis
    mu, var = A.mean(axis=0), A.var(axis=0)
    assert_allclose(
        inv.normalized_layer("batchnorm", W, X, gain, bias, eps=eps), gain * (A - mu) / np.sqrt(var + eps) + bias, rtol=1e-12
    )
    # WeightNorm: g_i v_i·x / ||v_i|| + b_i
    expected = gain * (A / np.linalg.norm(W, axis=1)) + bias
    assert_allclose(inv.normalized_layer("weightnorm", W, X, gain, bias), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "norm, W, X, exc",
    [
        ("groupnorm", np.ones((3, 2)), np.ones((4, 2)), ValueError),
        (3, np.ones((3, 2)), np.ones((4, 2)), TypeError),
        ("layernorm", np.ones((3, 2)), np.ones((4, 5)), ValueError),  # d_in mismatch
        ("layernorm", np.ones(3), np.ones((4, 3)), ValueError),  # W not 2-D
        ("layernorm", np.ones((3, 2)), np.ones((4, 2), dtype=complex), TypeError),
    ],
)
def test_normalized_layer_bad_input(norm, W, X, exc):
    with pytest.raises(exc):
        inv.normalized_layer(norm, W, X)


def test_normalized_layer_bad_gain_and_eps(layer):
    W, X, gain, _ = layer
    with pytest.raises(ValueError):
        inv.normalized_layer("layernorm", W, X, gain[:-1])
    with pytest.raises(ValueError):
        inv.normalized_layer("layernorm", W, X, eps=-1e-5)


# ----------------------------------------------------------------------------- transform


def test_transforms_do_what_their_names_say(layer, rng):
    W, X, _, _ = layer
    lo, hi = np.log(1.5), np.log(4.0)

    W2, X2 = inv.transform("weight_matrix_rescale", W, X, rng=rng)
    ratio = W2 / W
    assert X2 is X or np.array_equal(X2, X)
    assert_allclose(ratio, ratio.flat[0], rtol=1e-14)  # one common factor
    assert ratio.flat[0] > 0 and lo - 1e-12 <= abs(np.log(ratio.flat[0])) <= hi + 1e-12

    W2, _ = inv.transform("weight_matrix_recenter", W, X, rng=rng)
    shift = W2 - W  # every row gets the same vector γ
    assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-15)
    # so every summed input of a case moves by the same amount γᵀx_n
    dA = X @ W2.T - X @ W.T
    assert_allclose(dA, np.broadcast_to(dA[:, :1], dA.shape), atol=1e-12)

    W2, _ = inv.transform("weight_vector_rescale", W, X, rng=rng)
    row_factors = (W2 / W)[:, 0]
    assert_allclose(W2, row_factors[:, None] * W, rtol=1e-14)
    assert np.all(row_factors > 0) and np.all(np.abs(np.log(row_factors)) >= lo - 1e-12)

    _, X2 = inv.transform("dataset_rescale", W, X, rng=rng)
    r = X2 / X
    assert_allclose(r, r.flat[0], rtol=1e-14)

    _, X2 = inv.transform("dataset_recenter", W, X, rng=rng)
    shift = X2 - X
    assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-14)

    _, X2 = inv.transform("case_rescale", W, X, rng=rng)
    case_factors = (X2 / X)[:, 0]
    assert_allclose(X2, case_factors[:, None] * X, rtol=1e-14)
    assert np.all(case_factors > 0)


def test_transform_accepts_int_seed_and_is_reproducible(layer):
    W, X, _, _ = layer
    a = inv.transform("case_rescale", W, X, rng=7)[1]
    b = inv.transform("case_rescale", W, X, rng=np.random.default_rng(7))[1]
    assert np.array_equal(a, b)


@pytest.mark.parametrize("bad_rng, exc", [(None, TypeError), (1.5, TypeError), (True, TypeError), ("0", TypeError)])
def test_transform_bad_rng(layer, bad_rng, exc):
    W, X, _, _ = layer
    with pytest.raises(exc):
        inv.transform("dataset_rescale", W, X, rng=bad_rng)


def test_transform_unknown_name(layer, rng):
    W, X, _, _ = layer
    with pytest.raises(ValueError, match="transform must be one of"):
        inv.transform("weight_matrix_rotate", W, X, rng=rng)
    with pytest.raises(TypeError):
        inv.transform(None, W, X, rng=rng)


# ----------------------------------------------------------------------------- each cell of the table


@pytest.mark.parametrize("norm", inv.NORMS)
@pytest.mark.parametrize("j, name", list(enumerate(inv.TRANSFORMS)))
def test_each_cell_matches_the_papers(layer, rng, norm, j, name):
    W, X, gain, bias = layer
    cell = inv.check_invariance(norm, name, W, X, gain, bias, rng=rng, eps=0.0, tol=1e-9, p=0.25)
    assert cell.invariant == inv.PAPER_TABLE[norm][j], (norm, name, cell.residual)
    # and the evidence is not marginal: rounding level or order one
    assert cell.residual < 1e-13 or cell.residual > 1e-2


@pytest.mark.parametrize("norm", inv.NORMS)
def test_cells_with_eps_keep_their_verdicts(layer, rng, norm):
    W, X, gain, bias = layer
    # p = 0.25 (8 of 32 units): with p = 6.25% pRMSNorm's statistic comes from 2 units, their
    # mean square can be tiny for some case, and then the ε-residual of C2.4 exceeds 1e-3.
    for j, name in enumerate(inv.TRANSFORMS):
        cell = inv.check_invariance(norm, name, W, X, gain, bias, rng=rng, eps=1e-5, tol=1e-3, p=0.25)
        assert cell.invariant == inv.PAPER_TABLE[norm][j], (norm, name, cell.residual)


def test_invariance_table_agrees_and_reports_its_gap():
    table = inv.invariance_table(np.random.default_rng(0))
    assert len(table.cells) == len(inv.NORMS) * len(inv.TRANSFORMS)
    assert table.disagreements() == []
    assert table.verdicts() == inv.PAPER_TABLE
    assert table.largest_invariant_residual() < 1e-13
    assert table.smallest_broken_residual() > 1e-2


def test_disagreements_finds_a_flipped_cell():
    table = inv.invariance_table(np.random.default_rng(1), n_cases=8, d_in=4, hidden=16, trials=1)
    ref = dict(inv.PAPER_TABLE)
    ref["layernorm"] = (True, False) + ref["layernorm"][2:]  # deny LN's re-centering invariance
    assert table.disagreements(ref) == [("layernorm", "weight_matrix_recenter")]


def test_table_cell_lookup_errors():
    table = inv.invariance_table(np.random.default_rng(2), n_cases=4, d_in=3, hidden=8, trials=1)
    assert table.cell("rmsnorm", "case_rescale").norm == "rmsnorm"
    with pytest.raises(ValueError):
        table.cell("instancenorm", "case_rescale")
    with pytest.raises(ValueError):
        table.cell("rmsnorm", "flip")


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"n_cases": 1}, ValueError),  # BatchNorm needs two cases
        ({"hidden": 1}, ValueError),
        ({"d_in": 0}, ValueError),
        ({"n_cases": 4.0}, TypeError),
        ({"tol": 0.0}, ValueError),
        ({"tol": -1.0}, ValueError),
        ({"trials": 0}, ValueError),
        ({"trials": 2.5}, TypeError),
        ({"eps": -1.0}, ValueError),
    ],
)
def test_invariance_table_bad_input(kwargs, exc):
    with pytest.raises(exc):
        inv.invariance_table(np.random.default_rng(0), **kwargs)


def test_check_invariance_zero_output_is_an_error(rng):
    W = np.zeros((4, 3))
    W[:, 0] = 1.0
    X = np.zeros((5, 3))
    X[:, 1] = 1.0  # every summed input is zero
    with pytest.raises(ValueError):
        inv.check_invariance("weightnorm", "dataset_rescale", W, X, rng=rng)


def test_invariance_cell_is_frozen():
    cell = inv.InvarianceCell("layernorm", "case_rescale", 1e-16, 1e-9)
    assert cell.invariant
    with pytest.raises(AttributeError):
        cell.residual = 1.0  # type: ignore[misc]


# ----------------------------------------------------------------------------- C2.3 and C2.4


@settings(max_examples=60, deadline=None)
@given(
    x=arrays(np.float64, st.integers(2, 64), elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
    c=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
)
def test_shift_invariance_to_rounding(x, c):
    sigma = float(np.std(x))
    assume(sigma > 1e-3 * (np.max(np.abs(x)) + 1.0))
    r = np.max(np.abs(nl.layer_norm(x + c) - nl.layer_norm(x)))
    assert r <= ROUNDING_UNITS * U * (np.max(np.abs(x)) + abs(c)) / sigma


@settings(max_examples=60, deadline=None)
@given(
    x=arrays(np.float64, st.integers(2, 64), elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
    log_a=st.floats(-6.0, 6.0),
)
def test_scale_invariance_is_exact_without_eps(x, log_a):
    sigma = float(np.std(x))
    assume(sigma > 1e-3 * (np.max(np.abs(x)) + 1.0))
    a = float(np.exp(log_a))
    r = np.max(np.abs(nl.layer_norm(a * x, eps=0.0) - nl.layer_norm(x, eps=0.0)))
    assert r <= ROUNDING_UNITS * U * np.max(np.abs(x)) / sigma


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 1e-3, 1e-1])
@pytest.mark.parametrize("a", [0.01, 0.3, 2.0, 10.0, 100.0])
def test_rescale_residual_closed_form(rng, eps, a):
    x = 1.0 + 2.0 * rng.standard_normal(256)
    measured = np.max(np.abs(nl.layer_norm(a * x, eps=eps) - nl.layer_norm(x, eps=eps)))
    assert_allclose(measured, inv.ln_rescale_residual(x, a, eps=eps), rtol=1e-6)


def test_rescale_residual_small_eps_limit(rng):
    x = rng.standard_normal(512)
    eps, a = 1e-8, 10.0
    sigma = x.std()
    approx = eps / (2 * sigma**2) * (1 - 1 / a**2) * np.max(np.abs(x - x.mean())) / sigma
    assert_allclose(inv.ln_rescale_residual(x, a, eps=eps), approx, rtol=1e-6)


def test_rescale_residual_special_values(rng):
    x = rng.standard_normal((3, 16))
    assert np.all(inv.ln_rescale_residual(x, 5.0, eps=0.0) == 0.0)  # no eps: exact invariance
    assert np.all(inv.ln_rescale_residual(x, 1.0, eps=1e-5) == 0.0)  # a = 1: nothing changes
    assert inv.ln_rescale_residual(x, 2.0).shape == (3,)
    # a → ∞: the residual levels off at eps/(2σ²)·max|x̂0| to first order
    big = inv.ln_rescale_residual(x[0], 1e8, eps=1e-5)
    sigma = x[0].std()
    assert_allclose(big, 1e-5 / (2 * sigma**2) * np.max(np.abs(x[0] - x[0].mean())) / sigma, rtol=1e-4)


@pytest.mark.parametrize(
    "x, a, eps, exc",
    [
        (np.ones(4), 2.0, 1e-5, ValueError),  # constant row
        (np.arange(4.0), 0.0, 1e-5, ValueError),
        (np.arange(4.0), -2.0, 1e-5, ValueError),
        (np.arange(4.0), np.inf, 1e-5, ValueError),
        (np.arange(4.0), 2.0, -1.0, ValueError),
        (np.arange(4.0), 2.0, "1e-5", TypeError),
        (np.float64(3.0), 2.0, 1e-5, ValueError),
    ],
)
def test_rescale_residual_bad_input(x, a, eps, exc):
    with pytest.raises(exc):
        inv.ln_rescale_residual(x, a, eps=eps)


# ----------------------------------------------------------------------------- C2.5


@pytest.fixture
def problem(rng):
    N, d_in, H = 16, 8, 12
    return (
        rng.standard_normal((H, d_in)) / np.sqrt(d_in),
        rng.standard_normal((N, d_in)),
        rng.standard_normal((N, H)),
    )


def test_gradient_scales_as_one_over_a_without_eps(problem):
    W, X, T = problem
    scales = np.array([0.5, 1.0, 3.0, 20.0])
    resp = inv.ln_step_response(W, X, T, scales, lr=1e-4, eps=0.0)
    assert_allclose(resp.grad_norm * scales, resp.grad_norm[1], rtol=1e-12)
    assert np.all(resp.output_before < 1e-13)


def test_gradient_matches_finite_differences(problem):
    W, X, T = problem

    def loss(w_flat):
        Y = nl.layer_norm(X @ w_flat.reshape(W.shape).T, eps=1e-5)
        return np.atleast_1d(0.5 * np.sum((Y - T) ** 2))

    Z = X @ W.T
    G = nl.layer_norm_vjp(Z, nl.layer_norm(Z, eps=1e-5) - T, eps=1e-5).T @ X
    G_fd = nl.fd_jacobian(loss, W.ravel(), h=1e-6)[0].reshape(W.shape)
    assert_allclose(G, G_fd, rtol=1e-6, atol=1e-7)


def test_step_effect_scales_as_one_over_a_squared(problem):
    W, X, T = problem
    scales = np.logspace(-0.3, 1.3, 9)
    resp = inv.ln_step_response(W, X, T, scales, lr=1e-5)
    slope = np.polyfit(np.log(scales), np.log(resp.output_change), 1)[0]
    assert abs(slope + 2.0) < 0.01
    assert resp.lr == 1e-5 and resp.scales.shape == (9,)


def test_input_scaling_leaves_gradient_and_step_unchanged_without_eps(problem):
    """y = LN(W x): scaling x by a changes neither dL/dW nor what a step does (the loss is the same function of W)."""
    W, X, T = problem
    scales = np.array([0.5, 1.0, 3.0, 20.0])
    resp = inv.ln_step_response(W, X, T, scales, lr=1e-3, eps=0.0, rescale="input")
    assert resp.rescale == "input" and resp.grads.shape == (4,) + W.shape
    assert_allclose(resp.grads, np.broadcast_to(resp.grads[1], resp.grads.shape), rtol=1e-11, atol=1e-13)
    assert_allclose(resp.output_change, resp.output_change[1], rtol=1e-10)
    assert np.all(resp.output_before < 1e-13)


def test_weight_and_input_scaling_differ(problem):
    """The gradient at a·W is 1/a times the one at W; at a·X it is the one at X (not 1/a times it)."""
    W, X, T = problem
    scales = np.array([1.0, 4.0])
    g_w = inv.ln_step_response(W, X, T, scales, lr=1e-3, eps=0.0).grads
    g_x = inv.ln_step_response(W, X, T, scales, lr=1e-3, eps=0.0, rescale="input").grads
    assert_allclose(4.0 * g_w[1], g_w[0], rtol=1e-11, atol=1e-13)
    assert_allclose(g_x[1], g_x[0], rtol=1e-11, atol=1e-13)
    assert np.linalg.norm(g_x[1] - g_w[1]) > 0.5 * np.linalg.norm(g_x[1])


@pytest.mark.parametrize(("value", "exc"), [("bias", ValueError), (None, TypeError)])
def test_step_response_rescale_is_checked(problem, value, exc):
    W, X, T = problem
    with pytest.raises(exc, match="rescale must be one of"):
        inv.ln_step_response(W, X, T, np.array([1.0]), lr=1e-3, rescale=value)


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"scales": np.array([1.0, -2.0])}, ValueError),
        ({"scales": np.array([])}, ValueError),
        ({"scales": np.ones((2, 2))}, ValueError),
        ({"lr": 0.0}, ValueError),
        ({"lr": "0.1"}, TypeError),
        ({"eps": -1.0}, ValueError),
        ({"target": np.zeros((3, 3))}, ValueError),
    ],
)
def test_step_response_bad_input(problem, kwargs, exc):
    W, X, T = problem
    args = {"scales": np.array([1.0, 2.0]), "lr": 1e-3, "target": T}
    args.update(kwargs)
    with pytest.raises(exc):
        inv.ln_step_response(W, X, args.pop("target"), args.pop("scales"), **args)


@pytest.mark.parametrize(
    "x, a, exc, msg",
    [
        (np.array([1.0, np.nan, 3.0]), 2.0, ValueError, r"x contains NaN"),  # used to return NaN silently
        (np.array([1.0, 2.0, 3.0]) + 1j, 2.0, TypeError, r"x must have a real"),  # used to drop the imaginary part
        (np.array([True, False, True]), 2.0, TypeError, r"x must have a real"),
        (np.zeros(0), 2.0, ValueError, r"at least one feature"),
        (np.arange(4.0), "2", TypeError, r"a must be real positive"),  # used to be parsed as 2.0
        (np.arange(4.0), np.array([2.0, np.nan]), ValueError, r"a must be finite and > 0"),
    ],
    ids=["x-nan", "x-complex", "x-bool", "x-empty", "a-str", "a-nan"],
)
def test_rescale_residual_rejects_what_it_used_to_accept(x, a, exc, msg):
    with pytest.raises(exc, match=msg):
        inv.ln_rescale_residual(x, a, eps=1e-5)


def test_rescale_residual_broadcasts_factors_over_a_single_row():
    """x of shape (d,) and a of shape (k,) give k residuals, each the scalar-a value (as book/layernorm.md uses it)."""
    x = np.array([1.0, 2.0, 4.0, -1.0])
    scales = np.array([0.5, 2.0, 10.0])
    out = inv.ln_rescale_residual(x, scales, eps=1e-3)
    assert out.shape == (3,)
    assert_allclose(out, [float(inv.ln_rescale_residual(x, s, eps=1e-3)) for s in scales], rtol=1e-15)


def test_step_response_scales_must_be_real(problem):
    W, X, T = problem
    with pytest.raises(TypeError, match="scales must be real"):
        inv.ln_step_response(W, X, T, np.array(["1", "2"]), lr=1e-3)


def test_table_markdown_shows_every_verdict_and_marks_a_disagreement():
    """verdict_markdown: one row per norm with ✓/✗ per column and the agreement count; a cell that
    differs from the papers carries the paper's mark; residual_markdown: the residual of every cell."""
    table = inv.invariance_table(np.random.default_rng(0))
    md = table.verdict_markdown()
    assert md.count("\n") == len(inv.NORMS) + 1
    assert "| 6 of 6 |" in md and "(paper:" not in md
    flipped = inv.InvarianceTable(
        cells=tuple(c if (c.norm, c.transform) != ("layernorm", "dataset_recenter")
                    else inv.InvarianceCell(c.norm, c.transform, 0.0, c.tol) for c in table.cells),
        eps=table.eps, tol=table.tol)
    assert "✓ (paper: ✗)" in flipped.verdict_markdown() and "5 of 6" in flipped.verdict_markdown()
    res = table.residual_markdown()
    assert res.count("e") >= len(table.cells) and res.count("\n") == len(inv.NORMS) + 1
