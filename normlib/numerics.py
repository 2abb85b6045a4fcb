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
    :math:`J_{:,j} = (f(x + h e_j) - f(x - h e_j)) / (2h)`, error :math:`O(h^2)`.
    """
    if not callable(f):
        raise TypeError(f"f must be callable (a function of a 1-D vector); got {type(f).__name__}")
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Real):
        raise TypeError(f"h must be a positive real number; got {type(h).__name__}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be a positive finite number; got {h!r}")
    # same dtype/finiteness rules as the norms (rejects bool, complex, object, str, NaN, inf)
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if x.ndim != 1:
        raise ValueError(f"x must be a non-empty 1-D vector, shape (n,); got shape {x.shape}")
    x = as_features(x, "x").astype(np.float64)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((np.asarray(f(x + e), dtype=np.float64) - np.asarray(f(x - e), dtype=np.float64)) / (2 * h))
    return np.stack(cols, axis=-1)


def fd_vjp(f: Callable[[np.ndarray], np.ndarray], x, dy, *, h: float = 1e-6) -> np.ndarray:
    """Central finite-difference vector–Jacobian product ``dyᵀ J`` of ``f`` at ``x``.

    Uses the scalar "fake loss" ``L(x) = sum(f(x) * dy)`` and differentiates it.
    """
    dy = as_features(dy, "dy").astype(np.float64)
    return fd_jacobian(lambda z: np.atleast_1d(np.sum(np.asarray(f(z)) * dy)), x, h=h)[0]
