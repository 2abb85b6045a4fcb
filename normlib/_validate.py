"""Input validation shared by every public function of normlib.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError``
(right kind, wrong shape or value) with a message that says what was expected and
what arrived, so that a bad call never degrades into a silent NaN.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_features",
    "check_choice",
    "check_eps",
    "check_int",
    "check_param",
    "check_positive_real",
    "compute_dtype",
]


def _describe(a: np.ndarray) -> str:
    return f"shape {a.shape} and dtype {a.dtype}"


def as_features(x, name: str = "x", *, allow_empty_batch: bool = True) -> np.ndarray:
    """Return ``x`` as a real floating array of shape ``(..., d)`` with ``d >= 1``.

    Integer input is promoted to float64; bool, complex, object and string
    input is rejected. Non-finite values are rejected.
    """
    if isinstance(x, np.ndarray):
        a = x
    else:
        try:
            a = np.asarray(x)
        except Exception as exc:  # pragma: no cover - numpy raises many types here
            raise TypeError(f"{name} must be array-like of real numbers; got {type(x).__name__}") from exc
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(
            f"{name} must have a real floating (or integer) dtype; got dtype {a.dtype}"
        )
    if np.issubdtype(a.dtype, np.integer):
        a = a.astype(np.float64)
    if a.ndim == 0:
        raise ValueError(
            f"{name} must be at least 1-D with features on the last axis, shape (..., d); got a 0-d array"
        )
    if a.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one feature on its last axis; got {_describe(a)}")
    if not allow_empty_batch and a.size == 0:
        raise ValueError(f"{name} must not be empty; got {_describe(a)}")
    if a.size and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values; normalization needs finite input")
    return a


def check_eps(eps) -> float:
    """Validate ``eps``: a finite real number >= 0."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number >= 0; got {type(eps).__name__}")
    e = float(eps)
    if not np.isfinite(e) or e < 0:
        raise ValueError(f"eps must be a finite number >= 0; got {eps!r}")
    return e


def check_param(p, d: int, name: str) -> np.ndarray | None:
    """Validate a per-feature parameter (gain, bias): ``None`` or shape ``(d,)``."""
    if p is None:
        return None
    a = as_features(p, name)
    if a.shape != (d,):
        raise ValueError(
            f"{name} must have shape ({d},) to match the last axis of x; got shape {a.shape}"
        )
    return a


def compute_dtype(*arrays: np.ndarray | None) -> np.dtype:
    """The dtype statistics are computed in: at least float32."""
    dt = np.dtype(np.float32)
    for a in arrays:
        if a is not None:
            dt = np.promote_types(dt, a.dtype)
    return dt


def check_int(value, name: str, minimum: int = 1) -> int:
    """Validate an integer count ``>= minimum`` (bools are refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_choice(value, name: str, choices: tuple) -> str:
    """Validate a string option against its allowed values."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {choices}; got {type(value).__name__} {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def check_positive_real(value, name: str) -> float:
    """Validate a finite real number ``> 0`` (bools are refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number; got {type(value).__name__} {value!r}")
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return v
