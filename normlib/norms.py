"""LayerNorm, RMSNorm, partial RMSNorm and BatchNorm, with exact O(d) backward passes.

All functions normalize over the **last axis** of ``x`` (shape ``(..., d)``),
compute their statistics in at least float32 with a two-pass variance, and return
the result in the input dtype (integer input is promoted to float64).

The chapters that explain them: ``book/layernorm.md`` (LayerNorm, BatchNorm),
``book/rmsnorm.md`` (RMSNorm, pRMSNorm) and ``book/jacobian.md`` (the Jacobians).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import as_features, check_eps, check_param, compute_dtype

__all__ = [
    "layer_norm",
    "rms_norm",
    "partial_rms_norm",
    "layer_norm_vjp",
    "rms_norm_vjp",
    "layer_norm_jacobian",
    "rms_norm_jacobian",
    "layer_norm_stats",
    "rms_norm_stats",
    "batch_norm",
    "BatchNormResult",
]


# ----------------------------------------------------------------------------- statistics


def layer_norm_stats(x, *, eps: float = 1e-5):
    """Mean, reciprocal standard deviation and normalized input of LayerNorm.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input; statistics are taken over the last axis.
    eps : float, keyword-only
        Added to the variance inside the square root.

    Returns
    -------
    mean, rstd, x_hat : ndarray
        ``mean`` and ``rstd`` have shape ``(..., 1)``; ``x_hat = (x - mean) * rstd``
        has the shape of ``x``. All three are in the compute dtype (>= float32).

    Notes
    -----
    Two-pass statistics: :math:`\\mu = \\tfrac1d\\sum_i x_i`,
    :math:`\\sigma^2 = \\tfrac1d\\sum_i (x_i-\\mu)^2` (biased, as in PyTorch),
    :math:`\\mathrm{rstd} = 1/\\sqrt{\\sigma^2+\\epsilon}`.
    See the chapter "LayerNorm" (``book/layernorm.md``).
    """
    eps = check_eps(eps)
    a = as_features(x)
    return _ln_stats(a.astype(compute_dtype(a), copy=False), eps)


def _ln_stats(xc: np.ndarray, eps: float):
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported below
        mean = xc.mean(axis=-1, keepdims=True)  # (..., 1)
        centered = xc - mean  # (..., d)
        var = np.mean(centered * centered, axis=-1, keepdims=True)  # (..., 1), two-pass
    _check_positive(var, eps, "variance")
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    return mean, rstd, centered * rstd


def rms_norm_stats(x, *, eps: float = 1e-5):
    """Reciprocal RMS and normalized input of RMSNorm.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input; the statistic is taken over the last axis.
    eps : float, keyword-only
        Added to the mean square inside the square root; >= 0.

    Returns
    -------
    rrms, x_hat : ndarray
        ``rrms = 1/sqrt(mean(x**2) + eps)`` of shape ``(..., 1)`` and
        ``x_hat = x * rrms``, in the compute dtype (>= float32).

    Notes
    -----
    :math:`\\mathrm{RMS}(x) = \\sqrt{\\tfrac1d\\sum_i x_i^2 + \\epsilon}` (ε inside the root).
    See the chapter "RMSNorm" (``book/rmsnorm.md``).
    """
    eps = check_eps(eps)
    a = as_features(x)
    return _rms_stats(a.astype(compute_dtype(a), copy=False), eps)


def _rms_stats(xc: np.ndarray, eps: float):
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported below
        ms = np.mean(xc * xc, axis=-1, keepdims=True)  # (..., 1)
    _check_positive(ms, eps, "mean square")
    rrms = 1.0 / np.sqrt(ms + eps)  # (..., 1)
    return rrms, xc * rrms


def _ln_vjp_from_stats(x_hat: np.ndarray, rstd, g: np.ndarray) -> np.ndarray:
    """LayerNorm VJP from saved forward statistics (no validation; shared with ``stack``).

    ``dx = rstd·(g − mean(g) − x_hat·mean(g ⊙ x_hat))`` over the last axis. The means are
    sums divided by ``d`` (what ``np.mean`` computes, without its per-call overhead, which
    dominates for the small rows of the stack model).
    """
    d = g.shape[-1]
    mean_g = np.add.reduce(g, axis=-1, keepdims=True) / d  # (..., 1)
    mean_gx = np.add.reduce(g * x_hat, axis=-1, keepdims=True) / d  # (..., 1)
    return rstd * (g - mean_g - x_hat * mean_gx)


def _check_positive(stat: np.ndarray, eps: float, what: str) -> None:
    """Refuse a statistic that overflowed, or a zero one that eps = 0 would divide by."""
    if stat.size and not np.isfinite(stat).all():
        raise ValueError(
            f"the {what} overflows {stat.dtype}: |x| up to about "
            f"{np.sqrt(np.finfo(stat.dtype).max):.1e} is safe; rescale x before normalizing"
        )
    if eps == 0.0 and stat.size and not np.all(stat > 0):
        raise ValueError(
            f"a row has zero {what} and eps=0: the normalization divides by zero; pass eps > 0"
        )


# ----------------------------------------------------------------------------- forward


def layer_norm(x, weight=None, bias=None, *, eps: float = 1e-5) -> np.ndarray:
    """Layer normalization over the last axis (Ba et al., 2016).

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input features on the last axis. Integer input is promoted to float64.
    weight, bias : array_like, shape (d,), optional
        Per-feature gain γ (default 1) and shift β (default 0).
    eps : float, keyword-only
        Added to the variance inside the square root (PyTorch convention); >= 0.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        Non-real dtypes (bool, complex, object, str) or a non-numeric ``eps``.
    ValueError
        0-d input, an empty last axis, non-finite values, a weight or bias whose
        shape is not ``(d,)``, a negative ``eps``, or a zero-variance row with ``eps=0``.

    Notes
    -----
    .. math::

        \\mu = \\frac1d\\sum_i x_i,\\quad \\sigma^2 = \\frac1d\\sum_i (x_i-\\mu)^2,\\quad
        y = \\gamma \\odot \\frac{x-\\mu}{\\sqrt{\\sigma^2+\\epsilon}} + \\beta .

    Statistics are computed in at least float32 (two passes), so float16 input whose
    squares overflow float16 still normalizes correctly. Explained in the chapter
    "LayerNorm" (``book/layernorm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib import layer_norm
    >>> y = layer_norm(np.array([1.0, 2.0, 3.0]), eps=0.0)
    >>> np.round(y, 4)
    array([-1.2247,  0.    ,  1.2247])
    """
    eps = check_eps(eps)
    a = as_features(x)
    d = a.shape[-1]
    w = check_param(weight, d, "weight")
    b = check_param(bias, d, "bias")
    ct = compute_dtype(a, w, b)
    _, _, x_hat = _ln_stats(a.astype(ct, copy=False), eps)
    y = x_hat
    if w is not None:
        y = y * w.astype(ct, copy=False)
    if b is not None:
        y = y + b.astype(ct, copy=False)
    return y.astype(a.dtype, copy=False)


def rms_norm(x, weight=None, *, eps: float = 1e-5) -> np.ndarray:
    """Root-mean-square normalization over the last axis (Zhang & Sennrich, 2019).

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input features on the last axis.
    weight : array_like, shape (d,), optional
        Per-feature gain g (default 1). For a zero-centered ("Gemma-style")
        parametrization pass ``1 + w``.
    eps : float, keyword-only
        Added to the mean square inside the square root; >= 0.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`layer_norm`.

    Notes
    -----
    .. math::

        \\mathrm{RMS}(x) = \\sqrt{\\frac1d\\sum_i x_i^2 + \\epsilon},\\qquad
        y = g \\odot \\frac{x}{\\mathrm{RMS}(x)} .

    The paper's formula has no ε; its code and PyTorch's ``F.rms_norm`` put it
    inside the square root, as here. Explained in the chapter "RMSNorm"
    (``book/rmsnorm.md``).
    """
    eps = check_eps(eps)
    a = as_features(x)
    w = check_param(weight, a.shape[-1], "weight")
    ct = compute_dtype(a, w)
    _, y = _rms_stats(a.astype(ct, copy=False), eps)
    if w is not None:
        y = y * w.astype(ct, copy=False)
    return y.astype(a.dtype, copy=False)


def partial_rms_norm(x, weight=None, *, p: float = 0.0625, eps: float = 1e-5) -> np.ndarray:
    """Partial RMSNorm (pRMSNorm): the RMS is estimated from the first ⌈p·d⌉ features.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input features on the last axis.
    weight : array_like, shape (d,), optional
        Per-feature gain g (default 1).
    p : float, keyword-only
        Fraction of features used for the statistic, ``0 < p <= 1``. The paper
        uses 6.25% (12.5% on CIFAR-10).
    eps : float, keyword-only
        Added to the partial mean square inside the square root; >= 0.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``; every feature is divided by the partial RMS.

    Notes
    -----
    With :math:`k = \\lceil p\\,d \\rceil`:
    :math:`\\overline{\\mathrm{RMS}}(x) = \\sqrt{\\tfrac1k\\sum_{i=1}^k x_i^2 + \\epsilon}`,
    :math:`y = g \\odot x / \\overline{\\mathrm{RMS}}(x)`. Explained in the chapter
    "RMSNorm" (``book/rmsnorm.md``).
    """
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"p must be a real number in (0, 1]; got {type(p).__name__}")
    if not (0.0 < float(p) <= 1.0):
        raise ValueError(f"p must lie in (0, 1]; got {p!r}")
    eps = check_eps(eps)
    a = as_features(x)
    d = a.shape[-1]
    w = check_param(weight, d, "weight")
    k = max(1, math.ceil(float(p) * d - 1e-12))
    ct = compute_dtype(a, w)
    xc = a.astype(ct, copy=False)
    head = xc[..., :k]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported below
        ms = np.mean(head * head, axis=-1, keepdims=True)  # (..., 1)
    _check_positive(ms, eps, "partial mean square")
    y = xc / np.sqrt(ms + eps)
    if w is not None:
        y = y * w.astype(ct, copy=False)
    return y.astype(a.dtype, copy=False)


# ----------------------------------------------------------------------------- backward


def _check_dy(dy, a: np.ndarray) -> np.ndarray:
    g = as_features(dy, "dy")
    if g.shape != a.shape:
        raise ValueError(f"dy must have the shape of x, {a.shape}; got shape {g.shape}")
    return g


def layer_norm_vjp(x, dy, weight=None, *, eps: float = 1e-5) -> np.ndarray:
    """Vector–Jacobian product of :func:`layer_norm`: dL/dx given dL/dy, in O(d).

    Parameters
    ----------
    x : array_like, shape (..., d)
        The forward input.
    dy : array_like, shape (..., d)
        Upstream gradient dL/dy.
    weight : array_like, shape (d,), optional
        The gain γ used in the forward pass (the bias does not affect dL/dx).
    eps : float, keyword-only
        Added to the variance inside the square root; >= 0.

    Returns
    -------
    ndarray
        dL/dx, same shape as ``x``, in the promoted dtype of ``x`` and ``dy``. Only the
        input gradient: the gradients of the gain and the bias (dL/dγ, dL/dβ) are not
        returned.

    Raises
    ------
    TypeError
        Non-real dtypes (bool, complex, object, str) of ``x``, ``dy`` or ``weight``, or
        a non-numeric ``eps``.
    ValueError
        0-d input, an empty last axis, non-finite values, ``dy`` not of the shape of
        ``x``, a weight whose shape is not ``(d,)`` or a negative ``eps``.

    Notes
    -----
    With :math:`g = \\gamma\\odot dy` and :math:`\\hat x = (x-\\mu)\\,\\mathrm{rstd}`:

    .. math::

        dx = \\mathrm{rstd}\\,\\big(g - \\overline{g} - \\hat x\\,\\overline{g\\odot\\hat x}\\big),

    where the bar is the mean over the last axis. Exact with
    :math:`\\mathrm{rstd} = 1/\\sqrt{\\sigma^2+\\epsilon}`. Derived in the chapter
    "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    A uniform upstream gradient is orthogonal to every direction LayerNorm can move
    its output in (the output always has mean zero), so it does not reach the input:

    >>> import numpy as np
    >>> from normlib.norms import layer_norm_vjp
    >>> x = np.array([1.0, 2.0, 4.0])
    >>> np.allclose(layer_norm_vjp(x, np.ones(3)), 0.0)
    True

    It agrees with central finite differences of :func:`layer_norm`:

    >>> from normlib.norms import layer_norm
    >>> from normlib.numerics import fd_vjp
    >>> dy = np.array([0.3, -1.0, 0.5])
    >>> np.allclose(layer_norm_vjp(x, dy), fd_vjp(layer_norm, x, dy), atol=1e-7)
    True
    """
    eps = check_eps(eps)
    a = as_features(x)
    g = _check_dy(dy, a)
    out_dt = np.promote_types(a.dtype, g.dtype)
    w = check_param(weight, a.shape[-1], "weight")
    ct = compute_dtype(a, g, w)
    _, rstd, x_hat = _ln_stats(a.astype(ct, copy=False), eps)
    g = g.astype(ct, copy=False)
    if w is not None:
        g = g * w.astype(ct, copy=False)
    return _ln_vjp_from_stats(x_hat, rstd, g).astype(out_dt, copy=False)


def rms_norm_vjp(x, dy, weight=None, *, eps: float = 1e-5) -> np.ndarray:
    """Vector–Jacobian product of :func:`rms_norm`: dL/dx given dL/dy, in O(d).

    Parameters
    ----------
    x : array_like, shape (..., d)
        The forward input.
    dy : array_like, shape (..., d)
        Upstream gradient dL/dy.
    weight : array_like, shape (d,), optional
        The gain g used in the forward pass.
    eps : float, keyword-only
        Added to the mean square inside the square root; >= 0.

    Returns
    -------
    ndarray
        dL/dx, same shape as ``x``, in the promoted dtype of ``x`` and ``dy``. Only the
        input gradient: the gradient of the gain (dL/dg) is not returned.

    Raises
    ------
    TypeError
        Non-real dtypes (bool, complex, object, str) of ``x``, ``dy`` or ``weight``, or
        a non-numeric ``eps``.
    ValueError
        0-d input, an empty last axis, non-finite values, ``dy`` not of the shape of
        ``x``, a weight whose shape is not ``(d,)`` or a negative ``eps``.

    Notes
    -----
    With :math:`g = w\\odot dy`, :math:`r = 1/\\sqrt{\\overline{x^2}+\\epsilon}` and
    :math:`\\hat x = r x`:

    .. math::

        dx = r\\,\\big(g - \\hat x\\,\\overline{g\\odot\\hat x}\\big).

    Derived in the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    RMSNorm's output keeps the direction of ``x``; an upstream gradient along ``x``
    only asks to change its length, which RMSNorm removes (exactly so at ``eps=0``):

    >>> import numpy as np
    >>> from normlib.norms import rms_norm, rms_norm_vjp
    >>> x = np.array([1.0, -2.0, 4.0])
    >>> np.allclose(rms_norm_vjp(x, x, eps=0.0), 0.0)
    True

    It agrees with central finite differences of :func:`rms_norm`:

    >>> from normlib.numerics import fd_vjp
    >>> dy = np.array([0.3, -1.0, 0.5])
    >>> np.allclose(rms_norm_vjp(x, dy), fd_vjp(rms_norm, x, dy), atol=1e-7)
    True
    """
    eps = check_eps(eps)
    a = as_features(x)
    g = _check_dy(dy, a)
    out_dt = np.promote_types(a.dtype, g.dtype)
    w = check_param(weight, a.shape[-1], "weight")
    ct = compute_dtype(a, g, w)
    rrms, x_hat = _rms_stats(a.astype(ct, copy=False), eps)
    g = g.astype(ct, copy=False)
    if w is not None:
        g = g * w.astype(ct, copy=False)
    dx = rrms * (g - x_hat * np.mean(g * x_hat, axis=-1, keepdims=True))
    return dx.astype(out_dt, copy=False)


def layer_norm_jacobian(x, *, eps: float = 1e-5) -> np.ndarray:
    """The explicit Jacobian dy/dx of :func:`layer_norm` with unit gain, shape (..., d, d).

    Meant for checks and spectra; use :func:`layer_norm_vjp` in anything that scales.

    Parameters
    ----------
    x : array_like, shape (..., d)
        The point at which the Jacobian is taken.
    eps : float, keyword-only
        Added to the variance inside the square root; >= 0.

    Returns
    -------
    ndarray, shape (..., d, d)
        ``J[..., i, j] = ∂y_i/∂x_j``, in the dtype of ``x``.

    Notes
    -----
    .. math::

        J = \\frac{1}{\\sigma}\\Big(I - \\frac{\\mathbf 1\\mathbf 1^\\top}{d}
            - \\frac{\\hat x\\hat x^\\top}{d}\\Big),\\qquad \\sigma = \\sqrt{\\mathrm{var}(x)+\\epsilon},
            \\quad \\hat x = (x-\\mu)/\\sigma.

    ``J[..., i, j] = ∂y_i/∂x_j``. J is symmetric. Derived in the chapter
    "The LayerNorm Jacobian" (``book/jacobian.md``).
    """
    eps = check_eps(eps)
    a = as_features(x)
    d = a.shape[-1]
    ct = compute_dtype(a)
    _, rstd, x_hat = _ln_stats(a.astype(ct, copy=False), eps)
    eye = np.eye(d, dtype=ct)
    J = eye - 1.0 / d - x_hat[..., :, None] * x_hat[..., None, :] / d  # (..., d, d)
    return (rstd[..., None] * J).astype(a.dtype, copy=False)


def rms_norm_jacobian(x, *, eps: float = 1e-5) -> np.ndarray:
    """The explicit Jacobian dy/dx of :func:`rms_norm` with unit gain, shape (..., d, d).

    Parameters
    ----------
    x : array_like, shape (..., d)
        The point at which the Jacobian is taken.
    eps : float, keyword-only
        Added to the mean square inside the square root; >= 0.

    Returns
    -------
    ndarray, shape (..., d, d)
        ``J[..., i, j] = ∂y_i/∂x_j``, in the dtype of ``x``.

    Notes
    -----
    .. math::

        J = \\frac{1}{\\mathrm{RMS}(x)}\\Big(I - \\frac{\\hat x\\hat x^\\top}{d}\\Big),
        \\qquad \\hat x = x/\\mathrm{RMS}(x).

    J is symmetric. Derived in the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).
    """
    eps = check_eps(eps)
    a = as_features(x)
    d = a.shape[-1]
    ct = compute_dtype(a)
    rrms, x_hat = _rms_stats(a.astype(ct, copy=False), eps)
    J = np.eye(d, dtype=ct) - x_hat[..., :, None] * x_hat[..., None, :] / d
    return (rrms[..., None] * J).astype(a.dtype, copy=False)


# ----------------------------------------------------------------------------- BatchNorm


@dataclass(frozen=True)
class BatchNormResult:
    """Output of :func:`batch_norm`.

    Attributes
    ----------
    y : ndarray
        The normalized output, shape and dtype of ``x``.
    running_mean, running_var : ndarray or None
        The running statistics after this call (updated in training mode,
        unchanged in evaluation mode; ``None`` when none were given in training mode).
    batch_mean, batch_var : ndarray or None
        The statistics used in training mode (biased variance); ``None`` in eval mode.
    """

    y: np.ndarray
    running_mean: np.ndarray | None
    running_var: np.ndarray | None
    batch_mean: np.ndarray | None
    batch_var: np.ndarray | None


def batch_norm(
    x,
    weight=None,
    bias=None,
    *,
    training: bool,
    running_mean=None,
    running_var=None,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> BatchNormResult:
    """Batch normalization (Ioffe & Szegedy, 2015) with explicit train/eval modes.

    Features are on the last axis; statistics are taken over **all leading axes**
    (the batch, and time for sequences).

    Parameters
    ----------
    x : array_like, shape (N, ..., d)
        A batch (at least two values per feature in training mode).
    weight, bias : array_like, shape (d,), optional
        Per-feature gain γ (default 1) and shift β (default 0).
    training : bool, keyword-only, required
        ``True``: normalize with the batch statistics and update the running ones.
        ``False``: normalize with ``running_mean``/``running_var`` (both required).
    running_mean, running_var : array_like, shape (d,), optional
        Running statistics (keyword-only); required in evaluation mode.
    momentum : float, keyword-only
        Running update ``r <- (1 - momentum) r + momentum * batch_stat``, PyTorch's
        convention (the running variance uses the unbiased batch variance).
    eps : float, keyword-only
        Added to the variance inside the square root; >= 0.

    Returns
    -------
    BatchNormResult

    Notes
    -----
    Training: :math:`y = \\gamma (x-\\mu_B)/\\sqrt{\\sigma_B^2+\\epsilon} + \\beta` with batch
    mean and biased batch variance. Evaluation: the same with the running statistics.
    The two modes are different computations on the same input: see the chapter
    "Why normalize" (``book/why-normalize.md``) and "LayerNorm" (``book/layernorm.md``).
    """
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"training must be True or False; got {type(training).__name__}")
    eps = check_eps(eps)
    if isinstance(momentum, (bool, np.bool_)) or not isinstance(momentum, (int, float, np.floating)):
        raise TypeError(f"momentum must be a real number in [0, 1]; got {type(momentum).__name__}")
    if not 0.0 <= float(momentum) <= 1.0:
        raise ValueError(f"momentum must lie in [0, 1]; got {momentum!r}")
    a = as_features(x)
    if a.ndim < 2:
        raise ValueError(f"x must have shape (N, ..., d) with a batch axis; got shape {a.shape}")
    d = a.shape[-1]
    w = check_param(weight, d, "weight")
    b = check_param(bias, d, "bias")
    rm = check_param(running_mean, d, "running_mean")
    rv = check_param(running_var, d, "running_var")
    if (rm is None) != (rv is None):
        raise ValueError("running_mean and running_var must be given together")
    ct = compute_dtype(a, w, b)
    xc = a.astype(ct, copy=False).reshape(-1, d)  # (n, d)
    n = xc.shape[0]
    if training:
        if n < 2:
            raise ValueError(
                f"training-mode batch norm needs at least 2 values per feature; got {n}"
            )
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported below
            mean = xc.mean(axis=0)
            centered = xc - mean
            var = np.mean(centered * centered, axis=0)
        _check_positive(var, eps, "batch variance")
        y = centered / np.sqrt(var + eps)
        if rm is not None:
            mom = float(momentum)
            new_rm = (1 - mom) * rm + mom * mean
            new_rv = (1 - mom) * rv + mom * var * n / (n - 1)
        else:
            new_rm = new_rv = None
        bmean, bvar = mean, var
    else:
        if rm is None:
            raise ValueError("evaluation-mode batch norm needs running_mean and running_var")
        if np.any(rv < 0):
            raise ValueError("running_var must be non-negative")
        _check_positive(rv, eps, "running variance")
        y = (xc - rm) / np.sqrt(rv.astype(ct) + eps)
        new_rm, new_rv, bmean, bvar = rm, rv, None, None
    if w is not None:
        y = y * w.astype(ct, copy=False)
    if b is not None:
        y = y + b.astype(ct, copy=False)
    return BatchNormResult(
        y=y.reshape(a.shape).astype(a.dtype, copy=False),
        running_mean=new_rm,
        running_var=new_rv,
        batch_mean=bmean,
        batch_var=bvar,
    )
