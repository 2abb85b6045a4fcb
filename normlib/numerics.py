"""Finite-difference Jacobians and VJP checks, in float64.

Used by the tests and by the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).
"""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from ._validate import as_features

__all__ = ["fd_jacobian", "fd_vjp"]


def fd_jacobian(f: Callable[[np.ndarray], np.ndarray], x, *, h: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian of ``f`` at a 1-D point ``x``, in float64.

    Parameters
    ----------
    f : callable
        Maps a float64 vector of shape (n,) to an array of shape (m,).
    x : array_like, shape (n,)
    h : float, keyword-only
        Step size (> 0).

    Returns
    -------
    ndarray, shape (m, n)
        ``J[i, j] ≈ ∂f_i/∂x_j``.

    Notes
    -----
    :math:`J_{:,j} = (f(x + h e_j) - f(x - h e_j)) / (2h)`, truncation error
    :math:`O(h^2)` plus round-off :math:`O(u\\,|f|/h)`. Used in the chapter
    "The LayerNorm Jacobian" (``book/jacobian.md``).

    Raises
    ------
    TypeError
        ``f`` not callable, ``h`` not a real number, or ``x`` of a non-real dtype.
    ValueError
        ``x`` not a non-empty finite 1-D vector, ``h <= 0``, or ``f`` returning
        something other than a finite 1-D array of the same length at every point.
    """
    if not callable(f):
        raise TypeError(f"f must be callable (a function of a 1-D vector); got {type(f).__name__}")
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Real):
        raise TypeError(f"h must be a positive real number; got {type(h).__name__}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be a positive finite number; got {h!r}")
    x = _as_point(x)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((_eval(f, x + e) - _eval(f, x - e)) / (2 * h))
    if any(c.shape != cols[0].shape for c in cols):
        raise ValueError("f must return arrays of one fixed shape (m,); its output shape changed with x")
    return np.stack(cols, axis=-1)


def _as_point(x) -> np.ndarray:
    """A float64 copy of a non-empty, finite, real 1-D point (the norms' dtype rules)."""
    # same dtype/finiteness rules as the norms (rejects bool, complex, object, str, NaN, inf)
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if x.ndim != 1:
        raise ValueError(f"x must be a non-empty 1-D vector, shape (n,); got shape {x.shape}")
    return as_features(x, "x").astype(np.float64)


def _eval(f, z: np.ndarray) -> np.ndarray:
    out = np.asarray(f(z))
    if out.ndim != 1:
        raise ValueError(
            f"f must return a 1-D array of shape (m,); got shape {out.shape} "
            "(wrap a scalar function in np.atleast_1d, flatten a matrix-valued one)"
        )
    if out.dtype == np.bool_ or not (np.issubdtype(out.dtype, np.floating) or np.issubdtype(out.dtype, np.integer)):
        raise TypeError(f"f must return real numbers; got dtype {out.dtype}")
    out = out.astype(np.float64)
    if not np.isfinite(out).all():
        raise ValueError("f returned NaN or infinite values near x; finite differences need finite values")
    return out


def fd_vjp(f: Callable[[np.ndarray], np.ndarray], x, dy, *, h: float = 1e-6) -> np.ndarray:
    """Central finite-difference vector–Jacobian product ``dyᵀ J`` of ``f`` at ``x``.

    Parameters
    ----------
    f : callable
        Maps a float64 vector of shape (n,) to an array of the shape of ``dy``.
    x : array_like, shape (n,)
        The point.
    dy : array_like
        The cotangent; must have exactly the shape of ``f(x)`` (no broadcasting).
    h : float, keyword-only
        Step size (> 0).

    Returns
    -------
    ndarray, shape (n,)
        ``dyᵀ J`` in float64.

    Raises
    ------
    TypeError, ValueError
        As for :func:`fd_jacobian`, and when ``dy`` does not have the shape of ``f(x)``.

    Notes
    -----
    Differentiates the scalar "fake loss" :math:`L(x) = \\sum_i f_i(x)\\,dy_i` by central
    differences: :math:`(dy^\\top J)_j \\approx (L(x + h e_j) - L(x - h e_j))/(2h)`. Used in
    the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).
    """
    dy = as_features(dy, "dy").astype(np.float64)
    if not callable(f):
        raise TypeError(f"f must be callable (a function of a 1-D vector); got {type(f).__name__}")
    x = _as_point(x)
    fx_shape = np.shape(f(x.copy()))
    if fx_shape != dy.shape:
        raise ValueError(f"dy must have the shape of f(x), {fx_shape}; got shape {dy.shape}")
    return fd_jacobian(lambda z: np.atleast_1d(np.sum(np.asarray(f(z)) * dy)), x, h=h)[0]
