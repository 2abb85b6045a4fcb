"""Attention logits in a chosen floating-point format: overflow, QK-Norm, soft-capping, RoPE.

The attention logit of a query ``q`` and a key ``k`` of head dimension ``d`` is
``q·k/√d``. This module computes it the way a kernel would in a given format
(``float16``, ``float32`` or ``float64``), rounding every intermediate result to the
precision it is stored or accumulated in, so that overflow gives ``inf`` exactly where
the arithmetic overflows. It also gives the closed forms the chapter checks against:
the norm product at which a logit can first overflow (:func:`overflow_threshold`) and
the band that rounding moves it within (:func:`overflow_band`),
the bound QK-Norm puts on every logit (:func:`qk_norm_bound`), soft-capping
(:func:`soft_cap`) and rotary position embeddings (:func:`rope`); the largest logit a pair of
projection matrices can produce from normalized tokens (:func:`bilinear_peaks`); and the
bisections the chapter uses to find where a kernel first fails (:func:`first_failure`, and
:func:`float16_first_failure` over the values a float16 parameter can take).

numpy only. Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import check_choice, check_eps, check_int, check_positive_real
from .norms import rms_norm

__all__ = [
    "FP16_MAX",
    "BilinearPeaks",
    "attention_logits",
    "bilinear_peaks",
    "first_failure",
    "float16_first_failure",
    "overflow_band",
    "overflow_threshold",
    "qk_norm_bound",
    "rope",
    "soft_cap",
]

#: The largest finite float16 value, (2 − 2⁻¹⁰)·2¹⁵.
FP16_MAX = 65504.0

DTYPES = ("float16", "float32", "float64")
ACCUMULATE = ("float16", "float32")
SCALES = ("before", "after")

# Storage formats for the closed-form threshold: (significand bits incl. the hidden one, largest exponent).
_FORMATS = {"float16": (11, 15), "bfloat16": (8, 127), "float32": (24, 127)}


def _overflow_limit(fmt: str) -> float:
    """The smallest real number that rounds to inf (round to nearest, ties to even).

    It lies half a unit in the last place above the largest finite value:
    ``(2 − 2^-p)·2^emax`` (65520 for float16, where the largest finite value is 65504).
    """
    p, emax = _FORMATS[fmt]
    return math.ldexp(2.0 - math.ldexp(1.0, -p), emax)


# ----------------------------------------------------------------------------- validation helpers


def _real(x, name: str) -> np.ndarray:
    """``x`` as an array of real numbers (floating or integer dtype; bool, complex, object refused)."""
    a = np.asarray(x)
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(f"{name} must have a real floating (or integer) dtype; got dtype {a.dtype}")
    return a


def _qk_array(x, name: str) -> np.ndarray:
    a = _real(x, name)
    if a.ndim < 2:
        raise ValueError(
            f"{name} must have shape (..., T, d): positions on the second-to-last axis and the head "
            f"dimension on the last; got shape {a.shape}"
        )
    if a.shape[-1] == 0:
        raise ValueError(f"{name} must have a head dimension d >= 1 on its last axis; got shape {a.shape}")
    if a.size and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values; attention_logits needs finite input")
    return a.astype(np.float64) if np.issubdtype(a.dtype, np.integer) else a


def _cast(a: np.ndarray, dt: np.dtype, name: str) -> np.ndarray:
    """Round ``a`` to ``dt``, refusing values the format cannot hold (the projection already overflowed)."""
    with np.errstate(over="ignore"):
        out = a.astype(dt)
    if out.size and not np.isfinite(out).all():
        raise ValueError(
            f"{name} has entries up to {float(np.max(np.abs(a))):.6g} in magnitude, beyond the largest finite "
            f"{dt.name} value {float(np.finfo(dt).max):.6g}: {name} itself overflows {dt.name} before any "
            f"logit is computed"
        )
    return out


def _round(x64: np.ndarray, dt: np.dtype) -> np.ndarray:
    """One rounding of an exactly computed float64 intermediate to ``dt`` (overflow gives inf)."""
    with np.errstate(over="ignore"):
        return x64.astype(dt)


def _dot(qd: np.ndarray, kd: np.ndarray, acc: np.dtype) -> np.ndarray:
    """All dot products q_i·k_j, summed in ``acc``; (..., Tq, d), (..., Tk, d) -> (..., Tq, Tk) in ``acc``."""
    if acc == np.float16:
        # Sequential float16 accumulation: every product and every partial sum is rounded to
        # float16. Products and sums of two float16 numbers are exact in float64, so each step
        # below is exactly one correctly rounded float16 operation.
        qb = qd[..., :, None, :]  # (..., Tq, 1, d)
        kb = kd[..., None, :, :]  # (..., 1, Tk, d)
        shape = np.broadcast_shapes(qb.shape[:-1], kb.shape[:-1])
        s = np.zeros(shape, dtype=np.float16)
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(qd.shape[-1]):
                p = _round(qb[..., i].astype(np.float64) * kb[..., i].astype(np.float64), np.dtype(np.float16))
                s = _round(s.astype(np.float64) + p.astype(np.float64), np.dtype(np.float16))
        return s
    with np.errstate(over="ignore", invalid="ignore"):
        return np.matmul(qd.astype(acc), np.swapaxes(kd.astype(acc), -1, -2))


# ----------------------------------------------------------------------------- public API


def soft_cap(x, cap) -> np.ndarray:
    """Logit soft-capping ``cap·tanh(x/cap)``: smooth, odd, and bounded by ``cap``.

    Parameters
    ----------
    x : array_like
        Logits (any shape, real dtype). ``±inf`` is allowed and maps to ``±cap``
        (``tanh(±inf) = ±1``); NaN stays NaN.
    cap : float
        The cap, a finite number > 0 (Gemma 2: 50.0 on attention logits, 30.0 on the
        final logits).

    Returns
    -------
    ndarray
        ``cap·tanh(x/cap)``, same shape as ``x``; the dtype of ``x`` for floating input,
        float64 for integer input. Computed in float64 and rounded once.

    Raises
    ------
    TypeError
        Non-real ``x`` or a non-numeric ``cap``.
    ValueError
        ``cap <= 0`` or not finite.

    Notes
    -----
    .. math::

        \\operatorname{softcap}_c(x) = c\\tanh(x/c),\\qquad
        |\\operatorname{softcap}_c(x)| < c,\\qquad
        \\frac{d}{dx}\\operatorname{softcap}_c(x) = 1 - \\tanh^2(x/c).

    Near zero it is the identity (``x − x³/(3c²) + …``); for ``|x| ≫ c`` its derivative
    decays like ``4·exp(−2|x|/c)``, so a capped logit stops learning.
    Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import soft_cap
    >>> [round(float(v), 3) for v in soft_cap([1.0, 50.0, 1e9], 50.0)]
    [1.0, 38.08, 50.0]
    """
    c = check_positive_real(cap, "cap")
    a = _real(x, "x")
    out_dt = a.dtype if np.issubdtype(a.dtype, np.floating) else np.dtype(np.float64)
    with np.errstate(over="ignore"):  # x/cap may overflow to ±inf; tanh(±inf) = ±1 is exact
        y = c * np.tanh(a.astype(np.float64) / c)
    return _round(y, out_dt)


def rope(x, positions, *, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding over the last axis (the "rotate-half" layout of Llama and Qwen).

    Parameters
    ----------
    x : array_like, shape (..., T, d)
        Queries or keys, head dimension ``d`` (even) on the last axis.
    positions : array_like
        Token positions, broadcastable to ``x.shape[:-1]`` (typically shape ``(T,)``);
        real and finite (integers in practice).
    base : float, keyword-only
        The frequency base θ (10000 in RoFormer; 1e6 in Qwen3).

    Returns
    -------
    ndarray
        Same shape as ``x``; the dtype of ``x`` for floating input (computed in float64
        and rounded once), float64 for integer input.

    Raises
    ------
    TypeError, ValueError
        Odd ``d``, positions that do not broadcast, non-finite input, ``base <= 0``.

    Notes
    -----
    Feature ``i < d/2`` is paired with feature ``i + d/2`` and the pair is rotated by the
    angle ``p·θ^(−2i/d)`` at position ``p``:

    .. math::

        \\begin{pmatrix} y_i \\\\ y_{i+d/2} \\end{pmatrix} =
        \\begin{pmatrix} \\cos p\\omega_i & -\\sin p\\omega_i \\\\ \\sin p\\omega_i & \\cos p\\omega_i \\end{pmatrix}
        \\begin{pmatrix} x_i \\\\ x_{i+d/2} \\end{pmatrix},\\qquad \\omega_i = \\theta^{-2i/d}.

    This is Hugging Face's ``rotate_half`` convention; RoFormer (Su et al.) pairs
    neighbouring features ``(2i, 2i+1)`` instead, which is the same map up to a fixed
    permutation of the features. Each pair is rotated, so norms are preserved and
    ``rope(q, m)·rope(k, n)`` depends on the positions only through ``m − n``.
    Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.attention import rope
    >>> y = rope(np.array([[1.0, 0.0]]), np.array([1.0]), base=10000.0)  # d = 2: rotate by 1 rad
    >>> np.round(y, 4)
    array([[0.5403, 0.8415]])
    """
    b = check_positive_real(base, "base")
    a = _real(x, "x")
    if a.ndim < 1 or a.shape[-1] == 0 or a.shape[-1] % 2:
        raise ValueError(
            f"x must have an even, nonzero head dimension on its last axis (RoPE rotates pairs of "
            f"features); got shape {a.shape}"
        )
    if a.size and not np.isfinite(a).all():
        raise ValueError("x contains NaN or infinite values; rope needs finite input")
    p = _real(positions, "positions")
    if p.size and not np.isfinite(p).all():
        raise ValueError("positions contain NaN or infinite values")
    try:
        np.broadcast_shapes(p.shape, a.shape[:-1])
    except ValueError:
        raise ValueError(
            f"positions of shape {p.shape} do not broadcast to x.shape[:-1] = {a.shape[:-1]} "
            f"(pass one position per token, e.g. shape ({a.shape[-2] if a.ndim >= 2 else 1},))"
        ) from None
    half = a.shape[-1] // 2
    omega = b ** (-np.arange(half, dtype=np.float64) * 2.0 / a.shape[-1])  # (d/2,)
    angle = p.astype(np.float64)[..., None] * omega  # (..., d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x64 = a.astype(np.float64)
    x1, x2 = x64[..., :half], x64[..., half:]
    y = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    out_dt = a.dtype if np.issubdtype(a.dtype, np.floating) else np.dtype(np.float64)
    return _round(y, out_dt)


def qk_norm_bound(d, g_q=None, g_k=None) -> float:
    """The bound QK-Norm puts on every attention logit: ``√d · max|g_q| · max|g_k|``.

    Parameters
    ----------
    d : int
        Head dimension, >= 1.
    g_q, g_k : array_like, shape (d,), optional
        The RMSNorm gains of the queries and keys (default: ones, as at initialization).

    Returns
    -------
    float
        The bound on ``|RMSNorm(q)·RMSNorm(k)|/√d``.

    Raises
    ------
    TypeError, ValueError
        ``d`` not an integer >= 1; a gain of the wrong shape or not finite.

    Notes
    -----
    With ``q̂ = g_q ⊙ q/RMS(q)``, ``‖q/RMS(q)‖ = √d`` (strictly less when ε > 0), so
    ``‖q̂‖ ≤ max|g_q|·√d``, and by Cauchy–Schwarz

    .. math::

        \\frac{|\\hat q\\cdot\\hat k|}{\\sqrt d} \\le \\frac{\\|\\hat q\\|\\,\\|\\hat k\\|}{\\sqrt d}
        \\le \\sqrt d\\,\\max_i|g_{q,i}|\\,\\max_i|g_{k,i}| ,

    whatever the size of ``q`` and ``k``. The raw product ``q̂·k̂`` is bounded by ``√d``
    times this. Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import qk_norm_bound
    >>> round(qk_norm_bound(128), 4)
    11.3137
    """
    n = check_int(d, "d")
    m = 1.0
    for g, name in ((g_q, "g_q"), (g_k, "g_k")):
        if g is None:
            continue
        a = _real(g, name)
        if a.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), one gain per head feature; got shape {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        m *= float(np.max(np.abs(a.astype(np.float64))))
    return math.sqrt(n) * m


def overflow_threshold(d, *, scale: str = "after", dtype: str = "float16") -> float:
    """The smallest ``‖q‖·‖k‖`` at which some logit ``q·k/√d`` can overflow ``dtype``.

    Parameters
    ----------
    d : int
        Head dimension, >= 1.
    scale : {"after", "before"}, keyword-only
        ``"after"``: the raw product ``q·k`` is stored in ``dtype`` and then multiplied by
        ``1/√d`` (eager ``q @ k.T * scale``); ``"before"``: ``q`` is multiplied by ``1/√d``
        first, so only the logit itself must fit.
    dtype : {"float16", "bfloat16", "float32"}, keyword-only
        The format the product (or the logit) is stored in.

    Returns
    -------
    float
        ``R`` for ``scale="after"`` and ``R·√d`` for ``scale="before"``, where
        ``R = (2 − 2^−p)·2^emax`` is the smallest real number that rounds to inf
        (65520 for float16, half a unit in the last place above 65504).

    Raises
    ------
    TypeError, ValueError
        ``d`` not an integer >= 1; an unknown ``scale`` or ``dtype``.

    Notes
    -----
    Every partial sum of ``Σ_i q_i k_i`` is bounded by ``Σ_i |q_i k_i| ≤ ‖q‖‖k‖``
    (Cauchy–Schwarz), with equality for parallel ``q`` and ``k``. This is the threshold
    of exact arithmetic on the stored ``q`` and ``k``; for ``"before"`` the rounding of each
    ``q_i/√d`` lowers the necessary ``‖q‖‖k‖`` to ``R·√d/(1 + u)`` (``u`` the unit roundoff,
    ``2^-11`` in float16). Rounded partial sums move it, by a relative amount of order
    ``2^-24·d`` with float32 accumulation and up to ``γ_d`` (several percent at d = 128)
    with float16 accumulation (:func:`overflow_band` gives the band):

    .. math::

        \\text{after: } \\|q\\|\\|k\\| \\ge R, \\qquad
        \\text{before: } \\frac{\\|q\\|\\|k\\|}{\\sqrt d} \\ge R .

    In terms of the logit, "after" overflows once the logit reaches ``R/√d`` (5791 for
    float16 and d = 128), "before" only when the logit itself reaches ``R``.
    Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import overflow_threshold
    >>> overflow_threshold(128), round(overflow_threshold(128, scale="before"), 1)
    (65520.0, 741274.2)
    """
    n = check_int(d, "d")
    check_choice(scale, "scale", SCALES)
    check_choice(dtype, "dtype", tuple(_FORMATS))
    r = _overflow_limit(dtype)
    return r if scale == "after" else r * math.sqrt(n)


def _gamma(m: int, u: float) -> float:
    """Higham's γ_m = m·u / (1 − m·u), the bound on |Π(1 + δ_i) − 1| over m roundings."""
    return m * u / (1.0 - m * u)


def overflow_band(d, *, scale: str = "after", accumulate: str = "float32") -> tuple[float, float]:
    """Where rounding can put the first float16 overflow of a sum of non-negative products.

    Parameters
    ----------
    d : int
        Head dimension, >= 1.
    scale : {"after", "before"}, keyword-only
        The scale order, as in :func:`overflow_threshold` and :func:`attention_logits`.
    accumulate : {"float16", "float32"}, keyword-only
        The precision the products are summed in (storage format float16).

    Returns
    -------
    (lo, hi) : tuple of float
        ``T/ρ`` and ``T·ρ``, with ``T = overflow_threshold(d, scale=scale)`` and
        ``ρ = (1 + γ_{n16}(2^-11))·(1 + γ_{n32}(2^-24))``: for float16 accumulation
        ``n16 = d`` ("after": one rounding of each product and d − 1 of the partial sums)
        or ``d + 1`` ("before": also the rounding of ``q_i/√d``), ``n32 = 0``; for float32
        accumulation ``n32 = d − 1`` (products of two float16 numbers are exact in
        float32) and ``n16 = 1`` for "before", 0 for "after". ``γ_m = m·u/(1 − m·u)``.

    Raises
    ------
    TypeError, ValueError
        ``d`` not an integer >= 1; an unknown ``scale`` or ``accumulate``; ``d >= 2047``
        with float16 accumulation (the bound needs ``m·2^-11 < 1``).

    Notes
    -----
    For float16 inputs ``q``, ``k`` whose products ``q_i k_i`` are all >= 0 (parallel
    vectors, the worst case of :func:`overflow_threshold`), :func:`attention_logits`
    returns ``inf`` for ``‖q‖‖k‖ >= hi`` and a finite value for ``‖q‖‖k‖ < lo``.
    Proof: with non-negative terms the computed partial sums never decrease, so some
    partial sum overflows if and only if the computed sum, carried in a format without
    overflow, reaches ``R`` (65520). That sum is ``Σ_i q_i k_i Π_j (1 + δ_ij)`` with at most
    ``n16`` factors ``|δ| <= 2^-11`` and ``n32`` factors ``|δ| <= 2^-24`` per term, so it
    lies between ``s/ρ`` and ``s·ρ`` (``(1 + u)^m <= 1 + γ_m`` and ``(1 − u)^m >= 1 − m·u
    = 1/(1 + γ_m)``, Higham, *Accuracy and Stability of Numerical Algorithms*, Lemma
    3.1). Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import overflow_band
    >>> lo, hi = overflow_band(128, accumulate="float16")
    >>> round(lo), round(hi)
    (61425, 69888)
    """
    n = check_int(d, "d")
    check_choice(scale, "scale", SCALES)
    check_choice(accumulate, "accumulate", ACCUMULATE)
    if accumulate == "float16":
        n16, n32 = n + (1 if scale == "before" else 0), 0
    else:
        n16, n32 = (1 if scale == "before" else 0), n - 1
    if n16 * 2.0**-11 >= 1.0:
        raise ValueError(f"the rounding bound γ_m needs m·2^-11 < 1; d = {n} is too large for float16 accumulation")
    rho = (1.0 + _gamma(n16, 2.0**-11)) * (1.0 + _gamma(n32, 2.0**-24))
    t = overflow_threshold(n, scale=scale)
    return t / rho, t * rho


def attention_logits(
    q,
    k,
    *,
    dtype: str = "float32",
    accumulate: str = "float32",
    scale: str = "after",
    qk_norm: bool = False,
    g_q=None,
    g_k=None,
    eps: float = 1e-6,
    softcap=None,
) -> np.ndarray:
    """Attention logits ``q·k/√d`` computed, and rounded, as a kernel in ``dtype`` would.

    Parameters
    ----------
    q : array_like, shape (..., Tq, d)
        Queries; finite. Leading axes (batch, heads) broadcast against those of ``k``.
    k : array_like, shape (..., Tk, d)
        Keys, same head dimension ``d``.
    dtype : {"float16", "float32", "float64"}, keyword-only
        The storage format: ``q`` and ``k`` are rounded to it, and so is every
        element-wise result (the QK-Norm output, the scaled query, the product, the
        scaled logit).
    accumulate : {"float16", "float32"}, keyword-only
        The precision the dot products are summed in. ``"float16"``: every product and
        every partial sum is rounded to float16, summing left to right over the head
        dimension; ``"float32"``: products and sums in float32 (BLAS order), the result
        rounded once to ``dtype``. The sum is carried in the wider of ``accumulate`` and
        ``dtype`` (no kernel accumulates below its storage format), so ``"float16"``
        matters only with ``dtype="float16"``.
    scale : {"after", "before"}, keyword-only
        ``"after"``: the product ``q·k`` is rounded to ``dtype``, then multiplied by
        ``1/√d`` (eager ``q @ k.T * scale``); ``"before"``: ``q/√d`` is rounded to
        ``dtype`` first and then multiplied with ``k``.
    qk_norm : bool, keyword-only
        Apply RMSNorm (:func:`normlib.rms_norm`, statistics in float32) over the head
        dimension of ``q`` and ``k`` first, with gains ``g_q`` and ``g_k``.
    g_q, g_k : array_like, shape (d,), optional, keyword-only
        QK-Norm gains (default ones); only with ``qk_norm=True``.
    eps : float, keyword-only
        QK-Norm's ε, inside the square root (Qwen3 uses 1e-6).
    softcap : float, optional, keyword-only
        If given, return ``softcap·tanh(logit/softcap)`` (:func:`soft_cap`), applied to
        the scaled logit (as Gemma 2 does).

    Returns
    -------
    ndarray, shape (..., Tq, Tk)
        The logits in ``dtype``. Overflow gives ``±inf`` (and ``inf − inf`` inside a
        float16 sum gives NaN), exactly where the rounded arithmetic overflows; with a
        soft cap, ``±inf`` becomes ``±softcap``.

    Raises
    ------
    TypeError, ValueError
        Unknown ``dtype``/``accumulate``/``scale``; ``q``/``k`` not of shape
        ``(..., T, d)``, with different head dimensions, non-finite, or too large to be
        stored in ``dtype`` at all; gains without ``qk_norm``; ``softcap <= 0``.

    Notes
    -----
    Each element-wise step is computed exactly (float64 holds every product and sum of
    two float16 numbers) and rounded once to its format, round to nearest, ties to even.
    With ``s = Σ_i q_i k_i`` and ``fl(·)`` the rounding to ``dtype``:

    .. math::

        \\text{after: } \\ell = \\mathrm{fl}\\big(\\mathrm{fl}(s)\\cdot d^{-1/2}\\big),\\qquad
        \\text{before: } \\ell = \\mathrm{fl}\\Big(\\sum_i \\mathrm{fl}(q_i d^{-1/2})\\,k_i\\Big).

    How real kernels map onto it: PyTorch's eager ``(q @ k.transpose(-1, -2)) * scale``
    in float16 on the CPU is ``dtype="float16", accumulate="float32", scale="after"``;
    ``(q * scale) @ k.transpose(-1, -2)`` is ``scale="before"``; a fused kernel that
    keeps the logits in float32 registers (``scaled_dot_product_attention`` on the CPU)
    is ``dtype="float32"`` applied to float16-rounded inputs.
    :func:`overflow_threshold` gives the norm product at which overflow first becomes
    possible. Explained in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.attention import attention_logits
    >>> q = np.full((1, 64), 32.0); k = np.full((1, 64), 32.0)  # q·k = 65536, logit 8192
    >>> float(attention_logits(q, k, dtype="float16", scale="after")[0, 0])
    inf
    >>> float(attention_logits(q, k, dtype="float16", scale="before")[0, 0])
    8192.0
    """
    check_choice(dtype, "dtype", DTYPES)
    check_choice(accumulate, "accumulate", ACCUMULATE)
    check_choice(scale, "scale", SCALES)
    eps = check_eps(eps)
    if not isinstance(qk_norm, (bool, np.bool_)):
        raise TypeError(f"qk_norm must be True or False; got {type(qk_norm).__name__} {qk_norm!r}")
    cap = None if softcap is None else check_positive_real(softcap, "softcap")
    qa, ka = _qk_array(q, "q"), _qk_array(k, "k")
    if qa.shape[-1] != ka.shape[-1]:
        raise ValueError(
            f"q and k must have the same head dimension (last axis); got d = {qa.shape[-1]} for q "
            f"and d = {ka.shape[-1]} for k"
        )
    try:
        np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch, head) axes of q {qa.shape[:-2]} and k {ka.shape[:-2]} do not broadcast"
        ) from None
    if not qk_norm and (g_q is not None or g_k is not None):
        raise ValueError("g_q and g_k are the QK-Norm gains; pass qk_norm=True to use them")

    dt = np.dtype(dtype)
    acc = np.promote_types(np.dtype(accumulate), dt)
    qd, kd = _cast(qa, dt, "q"), _cast(ka, dt, "k")
    if qk_norm:
        qd = rms_norm(qd, g_q, eps=eps)  # statistics in float32, result rounded to dt
        kd = rms_norm(kd, g_k, eps=eps)
    c = 1.0 / math.sqrt(qd.shape[-1])
    if scale == "before":
        qd = _round(qd.astype(np.float64) * c, dt)
    s = _round(_dot(qd, kd, acc).astype(np.float64), dt)  # the product, stored in dtype
    if scale == "after":
        with np.errstate(invalid="ignore"):
            s = _round(s.astype(np.float64) * c, dt)
    if cap is not None:
        s = soft_cap(s, cap)
    return s


# ----------------------------------------------------------------------------- where a kernel fails


def _bracket_ok(fails, lo: float, hi: float) -> None:
    if not callable(fails):
        raise TypeError(f"fails must be a callable returning a bool; got {type(fails).__name__}")
    for x, want, name in ((lo, False, "lo"), (hi, True, "hi")):
        got = fails(x)
        if not isinstance(got, (bool, np.bool_)):
            raise TypeError(f"fails({name}) must return a bool; got {type(got).__name__} {got!r}")
        if bool(got) is not want:
            raise ValueError(
                f"fails({name} = {x!r}) is {bool(got)}; a bisection needs fails(lo) False and fails(hi) True "
                f"(widen the bracket, or check that the kernel runs at all at lo)"
            )


def first_failure(fails, lo, hi, *, rel: float = 1e-6) -> tuple[float, float]:
    """Geometric bisection for the smallest ``x`` in ``[lo, hi]`` at which ``fails(x)`` is True.

    Parameters
    ----------
    fails : callable
        ``fails(x) -> bool``, False at ``lo`` and True at ``hi``, with one change in between
        (a kernel's output turning non-finite as a scale grows).
    lo, hi : float
        The bracket, ``0 < lo < hi``.
    rel : float, keyword-only
        Stop when ``hi/lo <= 1 + rel`` (> 0).

    Returns
    -------
    (last_ok, first_fail) : tuple of float
        The last ``x`` tried at which ``fails`` was False and the first at which it was True;
        ``first_fail / last_ok <= 1 + rel``.

    Raises
    ------
    TypeError
        ``fails`` is not callable or returns something other than a bool.
    ValueError
        ``fails(lo)`` is True or ``fails(hi)`` is False, or a bad bracket or ``rel``.

    Notes
    -----
    The midpoint is geometric, ``sqrt(lo·hi)``, because the chapter's scales span orders of
    magnitude. The failure point is known only to the bracket ``(last_ok, first_fail]``; a
    quantity that takes discrete values (a float16 gain) is better searched over those values
    with :func:`float16_first_failure`. Used in the chapter "QK-Norm and half precision"
    (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import first_failure
    >>> lo, hi = first_failure(lambda x: x * x >= 2.0, 1.0, 2.0, rel=1e-9)
    >>> round(hi, 6)
    1.414214
    """
    a, b = check_positive_real(lo, "lo"), check_positive_real(hi, "hi")
    r = check_positive_real(rel, "rel")
    if not a < b:
        raise ValueError(f"the bracket needs lo < hi; got lo = {a!r}, hi = {b!r}")
    _bracket_ok(fails, a, b)
    while b / a > 1.0 + r:
        mid = math.sqrt(a * b)
        if fails(mid):
            b = mid
        else:
            a = mid
    return a, b


def float16_first_failure(fails, lo, hi) -> tuple[float, float]:
    """The first float16 value in ``[lo, hi]`` at which ``fails`` is True, and the one before it.

    Parameters
    ----------
    fails : callable
        ``fails(g) -> bool`` for a float16 value ``g`` (passed as a Python float), False at
        ``lo`` and True at ``hi`` with one change in between.
    lo, hi : float
        A bracket of finite, positive float16 values (rounded to float16 first), ``lo < hi``.

    Returns
    -------
    (last_ok, first_fail) : tuple of float
        Two consecutive float16 values: ``fails(last_ok)`` is False, ``fails(first_fail)`` True.

    Raises
    ------
    TypeError
        ``fails`` is not callable or returns something other than a bool.
    ValueError
        A bracket outside the positive finite float16 range, ``lo >= hi`` after rounding, or
        ``fails`` not False at ``lo`` and True at ``hi``.

    Notes
    -----
    A parameter stored in float16 (a norm gain filled with ``fill_(g)``) can only take float16
    values; a bisection over the reals stops between two of them, at a number the model never
    used (22.6171875, the midpoint of 22.609375 and 22.625). Positive float16 values are
    ordered like their bit patterns, so this bisects over the integers ``uint16`` and returns
    values the parameter really took. Used in the chapter "QK-Norm and half precision"
    (``book/qk-norm.md``).

    Examples
    --------
    >>> from normlib.attention import float16_first_failure
    >>> float16_first_failure(lambda g: g >= 22.62, 20.0, 24.0)
    (22.609375, 22.625)
    """
    with np.errstate(over="ignore"):  # a bound beyond float16's range is refused below, not warned about
        a16, b16 = np.float16(check_positive_real(lo, "lo")), np.float16(check_positive_real(hi, "hi"))
    if not (np.isfinite(a16) and np.isfinite(b16)) or not a16 > 0 or not a16 < b16:
        raise ValueError(f"the bracket needs positive finite float16 values lo < hi; got {float(a16)!r}, {float(b16)!r}")
    i, j = int(a16.view(np.uint16)), int(b16.view(np.uint16))

    def val(k: int) -> float:
        return float(np.array(k, dtype=np.uint16).view(np.float16))

    _bracket_ok(fails, val(i), val(j))
    while j - i > 1:
        m = (i + j) // 2
        if fails(val(m)):
            j = m
        else:
            i = m
    return val(i), val(j)


# ----------------------------------------------------------------------------- the bilinear form


@dataclass(frozen=True)
class BilinearPeaks:
    """The largest ``|x_iᵀ W_qᵀ W_k x_j|`` over unit vectors: two tokens, and one token (i = j)."""

    two_tokens: float
    one_token: float


def bilinear_peaks(w_q, w_k) -> BilinearPeaks:
    """How large a raw attention product two projections can make from unit-norm tokens.

    Parameters
    ----------
    w_q, w_k : array_like, shape (d_head, d_model)
        Query and key projection matrices (``q = W_q x``, ``k = W_k x``), real and finite.

    Returns
    -------
    BilinearPeaks
        ``two_tokens = σ_max(W_qᵀ W_k)``: the largest ``|q_i·k_j|`` for unit ``x_i``, ``x_j``
        (attained with ``x_i``, ``x_j`` along the top left and right singular vectors);
        ``one_token = max |λ(S)|`` with ``S = (W_qᵀ W_k + W_kᵀ W_q)/2``: the largest
        ``|q·k|`` of a single unit token, ``xᵀ W_qᵀ W_k x = xᵀ S x``. Multiply by
        ``‖x_i‖‖x_j‖`` (``d_model`` for RMS-normalized tokens with unit gain).

    Raises
    ------
    TypeError, ValueError
        Non-real input, matrices that are not 2-D, of different shapes or not finite.

    Notes
    -----
    ``q_i·k_j = x_iᵀ A x_j`` with ``A = W_qᵀ W_k`` (``d_model × d_model``, rank at most
    ``d_head``), so ``|q_i·k_j| ≤ σ_max(A)‖x_i‖‖x_j‖`` with equality for the top singular
    pair. One token sees only the symmetric part: ``xᵀAx = xᵀSx ≤ max|λ(S)|‖x‖²``, which is at
    most ``σ_max(A)`` and in general smaller. Both are computed without forming ``A``:
    with QR factors ``W_qᵀ = Q_1R_1`` and ``W_kᵀ = Q_2R_2``, ``σ(A) = σ(R_1R_2ᵀ)``, and ``S``
    lives in the span of ``[Q_1, Q_2]`` (dimension ``≤ 2 d_head``). With RoPE and biases the
    product of positions ``m``, ``n`` is ``(W_q x_m + b_q)ᵀ R_{n−m} (W_k x_n + b_k)``; the
    rotation keeps norms, so these peaks still bound the weight term of two tokens. Explained
    in the chapter "QK-Norm and half precision" (``book/qk-norm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.attention import bilinear_peaks
    >>> p = bilinear_peaks(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))  # q·k = x_1 y_2
    >>> p.two_tokens, p.one_token  # two tokens reach 1; one token at most 1/2 (x_1 x_2)
    (1.0, 0.5)
    """
    a, b = _real(w_q, "w_q"), _real(w_k, "w_k")
    if a.ndim != 2 or a.shape != b.shape or 0 in a.shape:
        raise ValueError(f"w_q and w_k must be 2-D of the same shape (d_head, d_model); got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("w_q and w_k must be finite")
    a, b = a.astype(np.float64), b.astype(np.float64)
    q1, r1 = np.linalg.qr(a.T)  # (d_model, h), (h, h)
    q2, r2 = np.linalg.qr(b.T)
    two = float(np.linalg.norm(r1 @ r2.T, 2))
    basis, _ = np.linalg.qr(np.concatenate([q1, q2], axis=1))  # spans the column spaces of A and Aᵀ
    m = (basis.T @ q1) @ (r1 @ r2.T) @ (q2.T @ basis)  # A in that basis
    one = float(np.max(np.abs(np.linalg.eigvalsh((m + m.T) / 2.0))))
    return BilinearPeaks(two_tokens=two, one_token=one)
