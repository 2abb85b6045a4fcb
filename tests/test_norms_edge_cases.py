"""Edge cases (a case table) and bad input for every public function of normlib.norms/numerics.

Bad input must raise ``TypeError``/``ValueError`` with a message that says what was
expected; ``pytest.raises(..., match=...)`` asserts the message, not only the type.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import normlib as nl

# Tolerances, one place.
TOL = {
    # float64 against a float64 reference of the same maths: a few ulps of O(1) outputs
    "float64": dict(rtol=1e-12, atol=1e-12),
    # float16 output: unit roundoff 2**-11 = 4.9e-4 on |y| <= ~2, statistics are float32
    "float16": dict(rtol=1e-3, atol=1e-3),
}

D = 5


# ----------------------------------------------------------------------------- value edge cases


def test_d1_layer_norm_is_zero_with_eps():
    """d = 1: the only feature is its own mean, x - mu = 0, so LN = 0 (with eps > 0) plus the bias."""
    x = np.array([[3.0], [-7.0], [0.0]])
    assert_allclose(nl.layer_norm(x, eps=1e-5), np.zeros((3, 1)), rtol=0, atol=0)
    assert_allclose(nl.layer_norm(x, None, np.array([2.5]), eps=1e-5), np.full((3, 1), 2.5), rtol=0, atol=0)


def test_d1_rms_norm_is_sign_with_eps0():
    """d = 1: RMS(x) = |x|, so RMSNorm(x) = sign(x) with eps = 0."""
    assert_allclose(nl.rms_norm(np.array([[3.0], [-7.0]]), eps=0.0), [[1.0], [-1.0]], **TOL["float64"])


def test_d1_layer_norm_eps0_raises():
    """d = 1 and eps = 0: variance 0, the division is 0/0; must raise, not return NaN."""
    with pytest.raises(ValueError, match="zero variance and eps=0"):
        nl.layer_norm(np.array([3.0]), eps=0.0)


EMPTY_BATCH_CASES = {
    "layer_norm": (lambda x: nl.layer_norm(x), (0, D)),
    "rms_norm": (lambda x: nl.rms_norm(x), (0, D)),
    "partial_rms_norm": (lambda x: nl.partial_rms_norm(x, p=0.5), (0, D)),
    "layer_norm_vjp": (lambda x: nl.layer_norm_vjp(x, x), (0, D)),
    "rms_norm_vjp": (lambda x: nl.rms_norm_vjp(x, x), (0, D)),
    "layer_norm_jacobian": (lambda x: nl.layer_norm_jacobian(x), (0, D, D)),
    "rms_norm_jacobian": (lambda x: nl.rms_norm_jacobian(x), (0, D, D)),
    "batch_norm_eval": (
        lambda x: nl.batch_norm(x, training=False, running_mean=np.zeros(D), running_var=np.ones(D)).y,
        (0, D),
    ),
    "layer_norm_eps0": (lambda x: nl.layer_norm(x, eps=0.0), (0, D)),
}


@pytest.mark.parametrize("name", list(EMPTY_BATCH_CASES), ids=list(EMPTY_BATCH_CASES))
def test_empty_batch_returns_empty(name):
    """A (0, d) batch is a valid, empty batch: the result is empty with the natural shape, no warning."""
    fn, shape = EMPTY_BATCH_CASES[name]
    out = fn(np.zeros((0, D)))
    assert out.shape == shape
    assert out.dtype == np.float64


@pytest.mark.parametrize(
    "fn",
    [lambda x: nl.layer_norm(x, eps=0.0), lambda x: nl.layer_norm_vjp(x, x, eps=0.0), lambda x: nl.layer_norm_jacobian(x, eps=0.0)],
    ids=["layer_norm", "layer_norm_vjp", "layer_norm_jacobian"],
)
def test_constant_rows_eps0_raise(fn):
    """A constant row has variance 0; with eps = 0 LayerNorm divides 0 by 0 and must refuse."""
    x = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 4.0]])
    with pytest.raises(ValueError, match="zero variance and eps=0.*pass eps > 0"):
        fn(x)


@pytest.mark.parametrize(
    "fn",
    [lambda x: nl.rms_norm(x, eps=0.0), lambda x: nl.rms_norm_vjp(x, x, eps=0.0), lambda x: nl.rms_norm_jacobian(x, eps=0.0)],
    ids=["rms_norm", "rms_norm_vjp", "rms_norm_jacobian"],
)
def test_zero_rows_eps0_raise_for_rms(fn):
    """An all-zero row has mean square 0; with eps = 0 RMSNorm divides 0 by 0 and must refuse."""
    with pytest.raises(ValueError, match="zero mean square and eps=0"):
        fn(np.array([[1.0, 2.0], [0.0, 0.0]]))


def test_partial_rms_norm_zero_head_eps0_raises():
    """pRMSNorm with k = 1 and x[0] = 0: the partial mean square is 0 although x is not zero."""
    with pytest.raises(ValueError, match="zero partial mean square and eps=0"):
        nl.partial_rms_norm(np.array([0.0, 1.0, 2.0, 3.0]), p=0.25, eps=0.0)


def test_constant_rows_with_eps_give_zero():
    """Constant rows: x - mu = 0 exactly, so LN = 0 with any eps > 0 (no NaN), while other rows are normal."""
    x = np.array([[4.0, 4.0, 4.0], [1.0, 2.0, 3.0]])
    y = nl.layer_norm(x, eps=1e-5)
    assert_allclose(y[0], np.zeros(3), rtol=0, atol=0)
    assert_allclose(y[1], np.array([-1.0, 0.0, 1.0]) / math.sqrt(2.0 / 3.0 + 1e-5), **TOL["float64"])


@pytest.mark.parametrize("scale", [1e-4, 1e4], ids=["tiny-1e-4", "huge-1e+4"])
@pytest.mark.parametrize(
    "fn", [nl.layer_norm, nl.rms_norm, lambda x, eps: nl.partial_rms_norm(x, p=0.5, eps=eps)], ids=["LN", "RMS", "pRMS"]
)
def test_scale_invariance_at_extreme_scales_eps0(rng, scale, fn):
    """With eps = 0 and float64, f(scale·x) = f(x) to rtol 1e-12 (only roundings of O(1) ratios differ)."""
    x = rng.standard_normal((3, 16)) + 0.2
    assert_allclose(fn(scale * x, eps=0.0), fn(x, eps=0.0), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("eps", [0.0, 1e-12, 1e-5, 1e-2], ids=["eps=0", "eps=1e-12", "eps=1e-5", "eps=1e-2"])
def test_eps_enters_inside_the_root(rng, eps):
    """For several eps: LN = (x - mu)/sqrt(var + eps) and RMSNorm = x/sqrt(ms + eps), the float64 closed forms."""
    x = rng.standard_normal((4, 9)) * 0.3
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    assert_allclose(nl.layer_norm(x, eps=eps), (x - mu) / np.sqrt(var + eps), **TOL["float64"])
    ms = np.mean(x * x, -1, keepdims=True)
    assert_allclose(nl.rms_norm(x, eps=eps), x / np.sqrt(ms + eps), **TOL["float64"])


@pytest.mark.parametrize("fn", [nl.layer_norm, nl.rms_norm], ids=["LN", "RMS"])
def test_float16_input_whose_squares_overflow(rng, fn):
    """Values 3e4..6e4 in float16: x² (up to 3.6e9) overflows float16 (max 65504); statistics must be computed wider."""
    x16 = rng.uniform(3e4, 6e4, (4, 64)).astype(np.float16)
    assert np.isfinite(x16).all() and np.all(x16.astype(np.float32) ** 2 > np.finfo(np.float16).max)
    y = fn(x16, eps=1e-5)  # a float16 computation would overflow and warn (an error under pytest)
    assert y.dtype == np.float16
    assert np.isfinite(y).all()
    assert_allclose(y.astype(np.float64), fn(x16.astype(np.float64), eps=1e-5), **TOL["float16"])


def test_float32_single_pass_variance_trap(rng):
    """float32 values near 1e4 with spread 1e-2: the two-pass variance is right, E[x²] - E[x]² is not.

    Reference: the float64 variance of the same float32 numbers. Error budget of a float32
    two-pass variance: the mean is stored in float32, off by at most ulp(1e4)/2 = 4.9e-4, which
    adds at most (4.9e-4)² = 2.4e-7 to a variance of ~1e-4: relative error <= 2.4e-3, so rtol 5e-3.
    """
    x = (1e4 + 1e-2 * rng.standard_normal((4, 256))).astype(np.float32)
    ref_var = x.astype(np.float64).var(axis=-1)
    _, rstd, _ = nl.layer_norm_stats(x, eps=0.0)
    var = 1.0 / rstd[..., 0].astype(np.float64) ** 2
    assert_allclose(var, ref_var, rtol=5e-3, atol=0)
    # the trap this test guards against: single-pass E[x²] - E[x]² in float32 (ulp(1e8) = 8)
    # returns 0 or a negative multiple of 8 here, i.e. wrong by at least 100%
    naive = np.mean(x * x, axis=-1) - np.mean(x, axis=-1) ** 2
    assert np.all(np.abs(naive - ref_var) >= 0.9 * ref_var)


def test_integer_input_is_promoted_to_float64():
    """int64 [1, 2, 3] -> float64 [-sqrt(1.5), 0, sqrt(1.5)] (the closed form of LN([1,2,3]), eps = 0)."""
    y = nl.layer_norm(np.array([1, 2, 3]), eps=0.0)
    assert y.dtype == np.float64
    assert_allclose(y, [-math.sqrt(1.5), 0.0, math.sqrt(1.5)], **TOL["float64"])
    assert nl.rms_norm(np.array([3, 4], dtype=np.int32), eps=0.0).dtype == np.float64
    assert nl.layer_norm_jacobian(np.array([1, 2, 3])).dtype == np.float64


def test_python_lists_are_accepted():
    """array_like input: a nested list behaves like the float64 array."""
    assert_allclose(nl.layer_norm([[1.0, 2.0, 3.0]], eps=0.0), nl.layer_norm(np.array([[1.0, 2.0, 3.0]]), eps=0.0), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_output_dtype_follows_input(rng, dtype):
    """Outputs keep the input's floating dtype (statistics are computed in at least float32)."""
    x = rng.standard_normal((2, 8)).astype(dtype)
    for fn in (nl.layer_norm, nl.rms_norm, nl.partial_rms_norm):
        assert fn(x).dtype == dtype


@pytest.mark.parametrize(
    "fn",
    [
        nl.layer_norm,
        nl.rms_norm,
        lambda x: nl.partial_rms_norm(x, p=0.5),
        nl.layer_norm_jacobian,
        nl.rms_norm_jacobian,
        lambda x: nl.layer_norm_vjp(x, np.cos(x)),
        lambda x: nl.rms_norm_vjp(x, np.cos(x)),
    ],
    ids=["layer_norm", "rms_norm", "partial_rms_norm", "layer_norm_jacobian", "rms_norm_jacobian", "layer_norm_vjp", "rms_norm_vjp"],
)
def test_batch_dims_act_row_by_row(rng, fn):
    """A (2, 3, d) batch equals the function applied to each (d,) row on its own."""
    x = rng.standard_normal((2, 3, 6))
    out = fn(x)
    assert out.shape[:2] == (2, 3)
    for idx in np.ndindex(2, 3):
        assert_allclose(out[idx], fn(x[idx]), **TOL["float64"])


def test_inputs_are_not_modified(rng):
    """Pure functions: x, dy, weight and running statistics are left untouched."""
    x, dy, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.uniform(1, 2, 4)
    rm, rv = np.zeros(4), np.ones(4)
    copies = [a.copy() for a in (x, dy, w, rm, rv)]
    nl.layer_norm(x, w, w, eps=0.0)
    nl.rms_norm_vjp(x, dy, w)
    nl.layer_norm_vjp(x, dy, w)
    nl.batch_norm(x, w, w, training=True, running_mean=rm, running_var=rv)
    for a, c in zip((x, dy, w, rm, rv), copies):
        assert_allclose(a, c, rtol=0, atol=0)


# ----------------------------------------------------------------------------- bad input

X_OK = np.array([1.0, 2.0, 4.0])  # a good 1-D input (d = 3)

# Every public function, called on a 1-D x (batch_norm gets a batch of two copies).
PUBLIC = {
    "layer_norm": lambda x: nl.layer_norm(x),
    "rms_norm": lambda x: nl.rms_norm(x),
    "partial_rms_norm": lambda x: nl.partial_rms_norm(x, p=0.5),
    "layer_norm_vjp": lambda x: nl.layer_norm_vjp(x, np.ones(np.shape(x))),
    "rms_norm_vjp": lambda x: nl.rms_norm_vjp(x, np.ones(np.shape(x))),
    "layer_norm_jacobian": lambda x: nl.layer_norm_jacobian(x),
    "rms_norm_jacobian": lambda x: nl.rms_norm_jacobian(x),
    "batch_norm": lambda x: nl.batch_norm(np.stack([x, x]) if np.ndim(x) else x, training=True),
    "layer_norm_stats": lambda x: nl.layer_norm_stats(x),
    "rms_norm_stats": lambda x: nl.rms_norm_stats(x),
    "fd_jacobian": lambda x: nl.fd_jacobian(np.sin, x),
}

BAD_X = {
    # name: (x, exception, message the error must contain)
    "0-d": (np.array(2.0), ValueError, r"1-D"),
    "empty-last-axis": (np.zeros(0), ValueError, r"at least one feature"),
    "complex": (np.array([1.0, 2.0, 3.0]) + 1j, TypeError, r"real floating.*complex"),
    "bool": (np.array([True, False, True]), TypeError, r"real floating.*bool"),
    "object": (np.array([1.0, 2.0, 3.0], dtype=object), TypeError, r"real floating.*object"),
    "str": (np.array(["1", "2", "3"]), TypeError, r"real floating.*<U1"),
    "nan": (np.array([1.0, np.nan, 3.0]), ValueError, r"NaN or infinite"),
    "inf": (np.array([1.0, np.inf, 3.0]), ValueError, r"NaN or infinite"),
    "-inf": (np.array([1.0, -np.inf, 3.0]), ValueError, r"NaN or infinite"),
}


@pytest.mark.parametrize("case", list(BAD_X), ids=list(BAD_X))
@pytest.mark.parametrize("fname", list(PUBLIC), ids=list(PUBLIC))
def test_bad_x_is_rejected_with_a_clear_message(fname, case):
    """Every public function rejects 0-d, empty, non-real and non-finite input, saying what it expected."""
    x, exc, msg = BAD_X[case]
    with pytest.raises(exc, match=msg):
        PUBLIC[fname](x)


@pytest.mark.parametrize("fname", list(PUBLIC), ids=list(PUBLIC))
def test_good_x_is_accepted(fname):
    """The control for the table above: the same callers accept a good input."""
    PUBLIC[fname](X_OK)


BAD_PARAMS = {
    # name: (call, exception, message)
    "ln-weight-shape": (lambda: nl.layer_norm(X_OK, np.ones(4)), ValueError, r"weight must have shape \(3,\).*got shape \(4,\)"),
    "ln-weight-2d": (lambda: nl.layer_norm(X_OK, np.ones((1, 3))), ValueError, r"weight must have shape \(3,\)"),
    "ln-bias-shape": (lambda: nl.layer_norm(X_OK, None, np.ones(2)), ValueError, r"bias must have shape \(3,\)"),
    "ln-weight-nan": (lambda: nl.layer_norm(X_OK, np.array([1.0, np.nan, 1.0])), ValueError, r"weight contains NaN"),
    "ln-weight-bool": (lambda: nl.layer_norm(X_OK, np.ones(3, bool)), TypeError, r"weight must have a real"),
    "rms-weight-shape": (lambda: nl.rms_norm(X_OK, np.ones(2)), ValueError, r"weight must have shape \(3,\)"),
    "prms-weight-shape": (lambda: nl.partial_rms_norm(X_OK, np.ones(2)), ValueError, r"weight must have shape \(3,\)"),
    "ln-vjp-dy-shape": (lambda: nl.layer_norm_vjp(X_OK, np.ones(4)), ValueError, r"dy must have the shape of x, \(3,\)"),
    "rms-vjp-dy-shape": (lambda: nl.rms_norm_vjp(X_OK, np.ones((2, 3))), ValueError, r"dy must have the shape of x"),
    "ln-vjp-dy-nan": (lambda: nl.layer_norm_vjp(X_OK, np.array([1.0, np.nan, 0.0])), ValueError, r"dy contains NaN"),
    "rms-vjp-dy-complex": (lambda: nl.rms_norm_vjp(X_OK, np.ones(3) * 1j), TypeError, r"dy must have a real"),
    "ln-vjp-weight-shape": (lambda: nl.layer_norm_vjp(X_OK, X_OK, np.ones(2)), ValueError, r"weight must have shape"),
    "rms-vjp-weight-shape": (lambda: nl.rms_norm_vjp(X_OK, X_OK, np.ones(2)), ValueError, r"weight must have shape"),
    "bn-weight-shape": (lambda: nl.batch_norm(np.ones((2, 3)), np.ones(2), training=True), ValueError, r"weight must have shape"),
    "bn-bias-shape": (lambda: nl.batch_norm(np.ones((2, 3)), None, np.ones(2), training=True), ValueError, r"bias must have shape"),
}


@pytest.mark.parametrize("case", list(BAD_PARAMS), ids=list(BAD_PARAMS))
def test_bad_weight_bias_dy(case):
    """Weights, biases and upstream gradients of the wrong shape or kind are refused with the expected shape named."""
    call, exc, msg = BAD_PARAMS[case]
    with pytest.raises(exc, match=msg):
        call()


# eps is checked by every function that takes it
EPS_FUNCS = {
    "layer_norm": lambda e: nl.layer_norm(X_OK, eps=e),
    "rms_norm": lambda e: nl.rms_norm(X_OK, eps=e),
    "partial_rms_norm": lambda e: nl.partial_rms_norm(X_OK, eps=e),
    "layer_norm_vjp": lambda e: nl.layer_norm_vjp(X_OK, X_OK, eps=e),
    "rms_norm_vjp": lambda e: nl.rms_norm_vjp(X_OK, X_OK, eps=e),
    "layer_norm_jacobian": lambda e: nl.layer_norm_jacobian(X_OK, eps=e),
    "rms_norm_jacobian": lambda e: nl.rms_norm_jacobian(X_OK, eps=e),
    "batch_norm": lambda e: nl.batch_norm(np.stack([X_OK, -X_OK]), training=True, eps=e),
    "layer_norm_stats": lambda e: nl.layer_norm_stats(X_OK, eps=e),
    "rms_norm_stats": lambda e: nl.rms_norm_stats(X_OK, eps=e),
}
BAD_EPS = {
    "negative": (-1e-5, ValueError, r"eps must be a finite number >= 0; got -1e-05"),
    "nan": (float("nan"), ValueError, r"eps must be a finite number >= 0"),
    "inf": (float("inf"), ValueError, r"eps must be a finite number >= 0"),
    "str": ("1e-5", TypeError, r"eps must be a real number >= 0; got str"),
    "none": (None, TypeError, r"eps must be a real number >= 0; got NoneType"),
    "bool": (True, TypeError, r"eps must be a real number >= 0; got bool"),
    "array": (np.array([1e-5]), TypeError, r"eps must be a real number"),
}


@pytest.mark.parametrize("case", list(BAD_EPS), ids=list(BAD_EPS))
@pytest.mark.parametrize("fname", list(EPS_FUNCS), ids=list(EPS_FUNCS))
def test_bad_eps(fname, case):
    """eps must be a finite real >= 0: negative, NaN, inf, strings, None, bools and arrays are refused."""
    eps, exc, msg = BAD_EPS[case]
    with pytest.raises(exc, match=msg):
        EPS_FUNCS[fname](eps)


@pytest.mark.parametrize("fname", list(EPS_FUNCS), ids=list(EPS_FUNCS))
def test_numpy_scalar_eps_is_accepted(fname):
    """Control: numpy float scalars and ints are valid eps values."""
    EPS_FUNCS[fname](np.float32(1e-5))
    EPS_FUNCS[fname](1)


@pytest.mark.parametrize(
    ("p", "exc", "msg"),
    [
        (0.0, ValueError, r"p must lie in \(0, 1\]; got 0.0"),
        (-0.5, ValueError, r"p must lie in \(0, 1\]"),
        (1.5, ValueError, r"p must lie in \(0, 1\]; got 1.5"),
        (float("nan"), ValueError, r"p must lie in \(0, 1\]"),
        ("0.5", TypeError, r"p must be a real number in \(0, 1\]; got str"),
        (None, TypeError, r"p must be a real number"),
        (True, TypeError, r"p must be a real number"),
    ],
    ids=["p=0", "p<0", "p>1", "p=nan", "p-str", "p-None", "p-bool"],
)
def test_partial_rms_norm_bad_p(p, exc, msg):
    """p is the fraction of features used, 0 < p <= 1."""
    with pytest.raises(exc, match=msg):
        nl.partial_rms_norm(X_OK, p=p)


BAD_BN = {
    "no-training-flag": (lambda: nl.batch_norm(np.ones((4, 3))), TypeError, r"training"),
    "training-None": (lambda: nl.batch_norm(np.ones((4, 3)), training=None), TypeError, r"training must be True or False"),
    "training-str": (lambda: nl.batch_norm(np.ones((4, 3)), training="eval"), TypeError, r"training must be True or False"),
    "eval-without-running-stats": (
        lambda: nl.batch_norm(np.ones((4, 3)), training=False),
        ValueError,
        r"evaluation-mode batch norm needs running_mean and running_var",
    ),
    "only-running-mean": (
        lambda: nl.batch_norm(np.ones((4, 3)), training=False, running_mean=np.zeros(3)),
        ValueError,
        r"running_mean and running_var must be given together",
    ),
    "running-var-negative": (
        lambda: nl.batch_norm(np.ones((4, 3)), training=False, running_mean=np.zeros(3), running_var=-np.ones(3)),
        ValueError,
        r"running_var must be non-negative",
    ),
    "running-mean-shape": (
        lambda: nl.batch_norm(np.ones((4, 3)), training=False, running_mean=np.zeros(2), running_var=np.ones(3)),
        ValueError,
        r"running_mean must have shape \(3,\)",
    ),
    "no-batch-axis": (lambda: nl.batch_norm(np.ones(3), training=True), ValueError, r"batch axis"),
    "batch-of-one": (lambda: nl.batch_norm(np.ones((1, 3)), training=True), ValueError, r"at least 2 values per feature"),
    "momentum>1": (lambda: nl.batch_norm(np.eye(3), training=True, momentum=1.5), ValueError, r"momentum must lie in \[0, 1\]"),
    "momentum-str": (lambda: nl.batch_norm(np.eye(3), training=True, momentum="0.1"), TypeError, r"momentum must be a real"),
    "constant-feature-eps0": (lambda: nl.batch_norm(np.ones((4, 3)), training=True, eps=0.0), ValueError, r"zero batch variance"),
}


@pytest.mark.parametrize("case", list(BAD_BN), ids=list(BAD_BN))
def test_batch_norm_bad_calls(case):
    """batch_norm needs an explicit mode, running statistics in eval mode, a batch axis, and momentum in [0, 1]."""
    call, exc, msg = BAD_BN[case]
    with pytest.raises(exc, match=msg):
        call()


BAD_FD = {
    "f-not-callable": (lambda: nl.fd_jacobian(3.0, X_OK), TypeError, r"f must be callable"),
    "x-2d": (lambda: nl.fd_jacobian(np.sin, np.ones((2, 2))), ValueError, r"1-D vector.*\(2, 2\)"),
    "h-zero": (lambda: nl.fd_jacobian(np.sin, X_OK, h=0.0), ValueError, r"h must be a positive finite number"),
    "h-negative": (lambda: nl.fd_jacobian(np.sin, X_OK, h=-1e-6), ValueError, r"h must be a positive"),
    "h-nan": (lambda: nl.fd_jacobian(np.sin, X_OK, h=float("nan")), ValueError, r"h must be a positive"),
    "h-str": (lambda: nl.fd_jacobian(np.sin, X_OK, h="1e-6"), TypeError, r"h must be a positive real number; got str"),
    "h-bool": (lambda: nl.fd_jacobian(np.sin, X_OK, h=True), TypeError, r"h must be a positive real number; got bool"),
    "fd_vjp-dy-nan": (lambda: nl.fd_vjp(np.sin, X_OK, np.array([np.nan, 0, 0])), ValueError, r"dy contains NaN"),
}


@pytest.mark.parametrize("case", list(BAD_FD), ids=list(BAD_FD))
def test_fd_bad_calls(case):
    """fd_jacobian / fd_vjp validate f, x, h and dy like the norms do."""
    call, exc, msg = BAD_FD[case]
    with pytest.raises(exc, match=msg):
        call()


# ----------------------------------------------------------------------------- overflow of the statistics

OVERFLOW_CASES = {
    # finite input whose squares overflow the compute dtype: used to return zeros (or NaN) with only a warning
    "layer_norm-f64": (lambda: nl.layer_norm(np.array([1e308, -1e308, 5e307])), "variance overflows float64"),
    "layer_norm-f32": (lambda: nl.layer_norm(np.array([3e19, 1.0, -2e19], dtype=np.float32)), "variance overflows float32"),
    "rms_norm": (lambda: nl.rms_norm(np.array([1e200, 2e200])), "mean square overflows float64"),
    "partial_rms_norm": (lambda: nl.partial_rms_norm(np.array([1e200, 2.0]), p=0.5), "partial mean square overflows"),
    "layer_norm_vjp": (lambda: nl.layer_norm_vjp(np.array([1e200, 1.0]), np.ones(2)), "variance overflows"),
    "rms_norm_jacobian": (lambda: nl.rms_norm_jacobian(np.array([1e200, 1.0])), "mean square overflows"),
    "batch_norm": (lambda: nl.batch_norm(np.array([[1e200], [-1e200]]), training=True), "batch variance overflows"),
}


@pytest.mark.parametrize("case", list(OVERFLOW_CASES), ids=list(OVERFLOW_CASES))
def test_statistics_that_overflow_raise(case):
    """|x| beyond sqrt(max of the compute dtype) overflows x²: a ValueError that says how to fix it, no warning, no NaN."""
    call, msg = OVERFLOW_CASES[case]
    with pytest.raises(ValueError, match=msg + r".*rescale x"):
        call()


def test_large_but_safe_values_still_normalize():
    """Control: |x| ~ 1e150 squares to 1e300 < 1.8e308, so LN works and equals LN(x / 1e150) (scale invariance, eps negligible)."""
    x = np.array([1e150, -1e150, 3e149])
    assert_allclose(nl.layer_norm(x), nl.layer_norm(x / 1e150, eps=0.0), **TOL["float64"])
