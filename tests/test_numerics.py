"""normlib.numerics: central finite differences, checked on functions with known Jacobians."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import normlib as nl

TOL = {
    # linear maps: central differences are exact up to round-off u·|A x|/h ~ 1e-16·10/1e-6 = 1e-9
    "linear": dict(rtol=1e-8, atol=1e-8),
    # smooth maps: truncation h²/6·|f'''| ~ 2e-13 plus the same round-off
    "smooth": dict(rtol=1e-8, atol=1e-9),
}


def test_fd_jacobian_of_linear_map_is_the_matrix(rng):
    """f(x) = A x has Jacobian A exactly (a non-square A: 3 outputs, 5 inputs)."""
    A = rng.standard_normal((3, 5))
    x = rng.standard_normal(5)
    J = nl.fd_jacobian(lambda z: A @ z, x)
    assert J.shape == (3, 5)
    assert_allclose(J, A, **TOL["linear"])


def test_fd_jacobian_of_elementwise_sin_is_diag_cos(rng):
    """f(x) = sin(x) elementwise has Jacobian diag(cos(x))."""
    x = rng.uniform(-3, 3, 6)
    assert_allclose(nl.fd_jacobian(np.sin, x), np.diag(np.cos(x)), **TOL["smooth"])


def test_fd_jacobian_of_a_coupled_map():
    """f(x) = [x0·x1, x0²] at (2, 3): Jacobian [[x1, x0], [2·x0, 0]] = [[3, 2], [4, 0]] by hand."""
    J = nl.fd_jacobian(lambda z: np.array([z[0] * z[1], z[0] ** 2]), np.array([2.0, 3.0]))
    assert_allclose(J, [[3.0, 2.0], [4.0, 0.0]], **TOL["smooth"])


def test_fd_jacobian_is_second_order_in_h():
    """Central differences have error O(h²): for exp at 0, (e^h - e^-h)/(2h) - 1 = h²/6 + O(h⁴)."""
    errs = [abs(nl.fd_jacobian(np.exp, np.zeros(1), h=h)[0, 0] - 1.0) for h in (1e-2, 1e-3)]
    assert_allclose(errs[0], 1e-4 / 6, rtol=1e-3)  # h²/6 with h = 1e-2
    assert_allclose(errs[0] / errs[1], 100.0, rtol=1e-2)  # ten times smaller h, 100 times smaller error


def test_fd_jacobian_accepts_lists_and_integers():
    """array_like x, integer x promoted to float64: f(x) = 3x has Jacobian 3·I."""
    assert_allclose(nl.fd_jacobian(lambda z: 3.0 * z, [1, 2]), 3.0 * np.eye(2), **TOL["linear"])


def test_fd_jacobian_evaluates_in_float64():
    """A float32 point is moved to float64 before stepping (in float32, 2 ± 1e-6 would round to a multiple of ulp(2) = 2.4e-7)."""
    seen = []

    def f(z):
        seen.append(z.dtype)
        return z * z

    J = nl.fd_jacobian(f, np.array([1.0, 2.0], dtype=np.float32))
    assert set(seen) == {np.dtype(np.float64)}
    assert_allclose(J, np.diag([2.0, 4.0]), **TOL["smooth"])


def test_fd_vjp_is_dy_transpose_jacobian(rng):
    """fd_vjp(f, x, dy) = dyᵀA for the linear map f(x) = A x."""
    A = rng.standard_normal((4, 3))
    dy = rng.standard_normal(4)
    assert_allclose(nl.fd_vjp(lambda z: A @ z, rng.standard_normal(3), dy), dy @ A, **TOL["linear"])


def test_fd_vjp_of_layer_norm_matches_explicit_jacobian(rng):
    """fd_vjp of LayerNorm equals dyᵀ J with the closed-form Jacobian (a cross-check of both tools)."""
    x, dy = rng.standard_normal(5), rng.standard_normal(5)
    fd = nl.fd_vjp(lambda z: nl.layer_norm(z, eps=1e-5), x, dy)
    assert_allclose(fd, dy @ nl.layer_norm_jacobian(x, eps=1e-5), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize(
    ("call", "exc", "msg"),
    [
        (lambda: nl.fd_jacobian(np.sin, np.array(1.0)), ValueError, r"1-D vector"),
        (lambda: nl.fd_jacobian(np.sin, np.zeros(0)), ValueError, r"at least one feature"),
        (lambda: nl.fd_jacobian(np.sin, np.zeros((2, 2))), ValueError, r"1-D vector"),
        (lambda: nl.fd_jacobian(np.sin, np.array([1 + 2j, 0j])), TypeError, r"real floating.*complex"),
        (lambda: nl.fd_jacobian(np.sin, np.array([True, False])), TypeError, r"real floating.*bool"),
        (lambda: nl.fd_jacobian(np.sin, np.array(["a", "b"])), TypeError, r"real floating"),
        (lambda: nl.fd_jacobian(np.sin, np.array([1.0, np.nan])), ValueError, r"NaN or infinite"),
        (lambda: nl.fd_jacobian(np.sin, np.array([1.0, np.inf])), ValueError, r"NaN or infinite"),
        (lambda: nl.fd_jacobian("sin", np.ones(2)), TypeError, r"f must be callable"),
        (lambda: nl.fd_jacobian(np.sin, np.ones(2), h=0), ValueError, r"h must be a positive finite number"),
        (lambda: nl.fd_jacobian(np.sin, np.ones(2), h=-1e-3), ValueError, r"h must be a positive finite number"),
        (lambda: nl.fd_jacobian(np.sin, np.ones(2), h=float("inf")), ValueError, r"h must be a positive finite number"),
        (lambda: nl.fd_jacobian(np.sin, np.ones(2), h=None), TypeError, r"h must be a positive real number"),
        (lambda: nl.fd_vjp(np.sin, np.ones(2), np.array([1.0, np.inf])), ValueError, r"dy contains NaN or infinite"),
        (lambda: nl.fd_vjp(np.sin, np.ones(2), np.ones(2) * 1j), TypeError, r"dy must have a real"),
    ],
    ids=[
        "x-0d",
        "x-empty",
        "x-2d",
        "x-complex",
        "x-bool",
        "x-str",
        "x-nan",
        "x-inf",
        "f-not-callable",
        "h-zero",
        "h-negative",
        "h-inf",
        "h-None",
        "dy-inf",
        "dy-complex",
    ],
)
def test_fd_bad_input(call, exc, msg):
    """Bad points, steps, functions and cotangents raise with a message saying what was expected."""
    with pytest.raises(exc, match=msg):
        call()


# ----------------------------------------------------------------------------- silent broadcasting and NaN


def test_fd_vjp_refuses_a_cotangent_of_the_wrong_shape():
    """dy of shape (1,) against f(x) of shape (3,) used to broadcast silently and return 3·dyᵀJ-like nonsense."""
    with pytest.raises(ValueError, match=r"dy must have the shape of f\(x\), \(3,\); got shape \(1,\)"):
        nl.fd_vjp(lambda z: 2.0 * z, np.ones(3), np.ones(1))


def test_fd_vjp_of_a_matrix_valued_map():
    """dy may have any shape, as long as it is f(x)'s: f(x) = outer(x, x) at (1, 2), dy = ones: d/dx sum(x xᵀ) = 2·sum(x)·1 = [6, 6]."""
    assert_allclose(nl.fd_vjp(lambda z: np.outer(z, z), np.array([1.0, 2.0]), np.ones((2, 2))), [6.0, 6.0], **TOL["smooth"])


@pytest.mark.parametrize(
    ("f", "exc", "msg"),
    [
        (np.sum, ValueError, r"f must return a 1-D array.*got shape \(\)"),
        (lambda z: np.outer(z, z), ValueError, r"f must return a 1-D array.*got shape \(2, 2\)"),
        (lambda z: z / (z - z), ValueError, r"f returned NaN or infinite values"),
        (lambda z: z > 0, TypeError, r"f must return real numbers; got dtype bool"),
    ],
    ids=["scalar", "matrix", "nan", "bool"],
)
def test_fd_jacobian_refuses_bad_outputs_of_f(f, exc, msg):
    """fd_jacobian's contract is f: (n,) -> (m,), finite: anything else raises instead of returning NaN or a wrong shape."""
    with np.errstate(divide="ignore", invalid="ignore"):
        with pytest.raises(exc, match=msg):
            nl.fd_jacobian(f, np.array([1.0, 2.0]))
