"""Invariance properties of normalized layers: Ba et al.'s Table 1, re-derived numerically.

A normalized layer maps a batch of inputs ``X`` (shape ``(N, d_in)``) through a
weight matrix ``W`` (shape ``(H, d_in)``, one row per hidden unit) to the summed
inputs ``A = X Wᵀ`` and normalizes them. This module builds that layer for five
normalizations (BatchNorm, WeightNorm, LayerNorm, RMSNorm, pRMSNorm), applies the
six transformations of Ba et al. (2016), §5.1, and reports whether the layer's
output is unchanged. It also holds two small closed forms used by the chapter:
the ε-induced residual of LayerNorm's re-scaling invariance, and the
step-size experiment of the implicit learning-rate adaptation.

Everything is float64 numpy; randomness is passed in as a ``numpy.random.Generator``.
The chapter that explains it: "LayerNorm" (``book/layernorm.md``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._validate import as_features, check_eps
from ._validate import check_choice as _check_choice
from ._validate import check_int as _check_int
from ._validate import check_positive_real as _check_positive_real
from .norms import batch_norm, layer_norm, layer_norm_vjp, partial_rms_norm, rms_norm

__all__ = [
    "NORMS",
    "TRANSFORMS",
    "TRANSFORM_TITLES",
    "NORM_TITLES",
    "PAPER_TABLE",
    "weight_norm",
    "normalized_layer",
    "transform",
    "InvarianceCell",
    "InvarianceTable",
    "check_invariance",
    "invariance_table",
    "ln_rescale_residual",
    "StepResponse",
    "ln_step_response",
]

#: The normalizations of the table, in the paper's row order (RMSNorm rows from Zhang & Sennrich).
NORMS = ("batchnorm", "weightnorm", "layernorm", "rmsnorm", "prmsnorm")

#: The transformations of the table, in the paper's column order.
TRANSFORMS = (
    "weight_matrix_rescale",
    "weight_matrix_recenter",
    "weight_vector_rescale",
    "dataset_rescale",
    "dataset_recenter",
    "case_rescale",
)

#: Column titles as the paper prints them.
TRANSFORM_TITLES = {
    "weight_matrix_rescale": "Weight matrix re-scaling",
    "weight_matrix_recenter": "Weight matrix re-centering",
    "weight_vector_rescale": "Weight vector re-scaling",
    "dataset_rescale": "Dataset re-scaling",
    "dataset_recenter": "Dataset re-centering",
    "case_rescale": "Single training case re-scaling",
}

#: Row titles of the table.
NORM_TITLES = {"batchnorm": "BatchNorm", "weightnorm": "WeightNorm", "layernorm": "LayerNorm",
               "rmsnorm": "RMSNorm", "prmsnorm": "pRMSNorm"}

#: Short column titles for the book's tables.
_SHORT_TITLES = {"weight_matrix_rescale": "W re-scaled", "weight_matrix_recenter": "W re-centered",
                 "weight_vector_rescale": "one unit's w re-scaled", "dataset_rescale": "data re-scaled",
                 "dataset_recenter": "data re-centered", "case_rescale": "one case re-scaled"}

#: Table 1 of Ba et al. (2016) and the RMSNorm/pRMSNorm rows of Zhang & Sennrich (2019):
#: True = invariant, False = not invariant, in the order of ``TRANSFORMS``.
PAPER_TABLE = {
    "batchnorm": (True, False, True, True, True, False),
    "weightnorm": (True, False, True, False, False, False),
    "layernorm": (True, True, False, True, False, True),
    "rmsnorm": (True, False, False, True, False, True),
    "prmsnorm": (True, False, False, True, False, True),
}


# ----------------------------------------------------------------------------- validation


def _as_generator(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)) or an int seed; "
        f"got {type(rng).__name__}"
    )


def _as_matrix(a, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real (float or integer) array; got dtype {arr.dtype}")
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array; got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_vector(a, n: int, name: str) -> np.ndarray | None:
    if a is None:
        return None
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real (float or integer) array; got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one entry per hidden unit; got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_positive_factors(a, name: str) -> np.ndarray:
    """Real, finite, strictly positive factor(s) as float64 (any shape)."""
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be real positive number(s); got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0 (a negative factor flips the sign of LN's output)")
    return arr


# ----------------------------------------------------------------------------- the layer


def weight_norm(v, g=None) -> np.ndarray:
    """Weight normalization of a weight matrix, one incoming weight vector per row.

    Parameters
    ----------
    v : array_like, shape (H, d_in)
        Direction parameters; row ``i`` holds the incoming weights of hidden unit ``i``.
    g : array_like, shape (H,), optional
        Per-unit length ``g_i`` (default 1).

    Returns
    -------
    ndarray, shape (H, d_in)
        The effective weights ``w_i = g_i v_i / ||v_i||``, float64.

    Raises
    ------
    TypeError
        Non-real dtypes.
    ValueError
        Wrong shapes, non-finite values, or a row of ``v`` that is exactly zero.

    Notes
    -----
    Salimans & Kingma (2016): :math:`w_i = g_i\\, v_i / \\lVert v_i \\rVert_2`. The
    output is invariant to any positive re-scaling of a row of ``v``, and hence of the
    whole matrix. See the chapter "LayerNorm" (``book/layernorm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.invariance import weight_norm
    >>> weight_norm(np.array([[3.0, 4.0]]), np.array([10.0]))
    array([[6., 8.]])
    """
    V = _as_matrix(v, "v")
    gain = _as_vector(g, V.shape[0], "g")
    norms = np.sqrt(np.sum(V * V, axis=1, keepdims=True))  # (H, 1)
    if np.any(norms == 0):
        raise ValueError("weight_norm: a row of v is zero, so its direction is undefined")
    W = V / norms
    if gain is not None:
        W = W * gain[:, None]
    return W


def normalized_layer(norm: str, W, X, gain=None, bias=None, *, eps: float = 0.0, p: float = 0.0625) -> np.ndarray:
    """The output of one normalized layer for a batch of inputs.

    Parameters
    ----------
    norm : {"batchnorm", "weightnorm", "layernorm", "rmsnorm", "prmsnorm"}
        The normalization.
    W : array_like, shape (H, d_in)
        The weight matrix, one row per hidden unit. For ``"weightnorm"`` these are the
        direction parameters ``v`` of :func:`weight_norm`.
    X : array_like, shape (N, d_in)
        The batch of inputs, one training case per row.
    gain, bias : array_like, shape (H,), optional
        Per-unit gain (default 1) and bias (default 0), applied after the
        normalization; held fixed by every transformation of the table.
    eps : float, keyword-only
        Added inside the square root of BatchNorm, LayerNorm, RMSNorm and pRMSNorm
        (>= 0). The default 0 is the papers' equations, which have no ε.
    p : float, keyword-only
        Fraction of hidden units pRMSNorm uses for its statistic.

    Returns
    -------
    ndarray, shape (N, H)
        The layer's output before any non-linearity, float64.

    Notes
    -----
    With summed inputs :math:`A = X W^\\top` (:math:`a_{n,i} = w_i^\\top x_n`; no bias
    before the normalization, as in Ba et al.'s analysis):

    * BatchNorm: :math:`g_i (a_{n,i} - \\mu_i)/\\sqrt{\\sigma_i^2+\\epsilon} + b_i`,
      statistics of unit ``i`` over the batch (training-mode statistics);
    * WeightNorm: :math:`\\tilde w_i^\\top x_n + b_i` with :math:`\\tilde w_i = g_i v_i/\\lVert v_i\\rVert`;
    * LayerNorm: :math:`g_i (a_{n,i} - \\mu_n)/\\sqrt{\\sigma_n^2+\\epsilon} + b_i`,
      statistics of case ``n`` over the ``H`` hidden units;
    * RMSNorm: :math:`g_i a_{n,i}/\\sqrt{\\overline{a_n^2}+\\epsilon} + b_i`;
    * pRMSNorm: as RMSNorm with the mean square over the first :math:`\\lceil pH\\rceil` units.

    See the chapter "LayerNorm" (``book/layernorm.md``).
    """
    norm = _check_choice(norm, "norm", NORMS)
    Wm = _as_matrix(W, "W")
    Xm = _as_matrix(X, "X")
    if Xm.shape[1] != Wm.shape[1]:
        raise ValueError(
            f"X has {Xm.shape[1]} input features per case but W expects {Wm.shape[1]} "
            f"(W must be (H, d_in) and X (N, d_in))"
        )
    H = Wm.shape[0]
    g = _as_vector(gain, H, "gain")
    b = _as_vector(bias, H, "bias")
    eps = check_eps(eps)
    if norm == "weightnorm":
        out = Xm @ weight_norm(Wm, g).T  # (N, H)
        return out if b is None else out + b
    A = Xm @ Wm.T  # (N, H) summed inputs
    if norm == "batchnorm":
        return batch_norm(A, g, b, training=True, eps=eps).y
    if norm == "layernorm":
        return layer_norm(A, g, b, eps=eps)
    if norm == "rmsnorm":
        out = rms_norm(A, g, eps=eps)
    else:
        out = partial_rms_norm(A, g, p=p, eps=eps)
    return out if b is None else out + b


def _factor(rng: np.random.Generator, size=None, *, lo: float = 1.5, hi: float = 4.0):
    """Positive factors bounded away from 1: exp(±U(log lo, log hi))."""
    mag = rng.uniform(np.log(lo), np.log(hi), size=size)
    sign = rng.choice(np.array([-1.0, 1.0]), size=size)
    return np.exp(sign * mag)


def transform(name: str, W, X, *, rng) -> tuple[np.ndarray, np.ndarray]:
    """Apply one transformation of Ba et al.'s Table 1 to the weights or the data.

    Parameters
    ----------
    name : str
        One of :data:`TRANSFORMS`.
    W : array_like, shape (H, d_in)
        Weight matrix (rows = incoming weight vectors of the hidden units).
    X : array_like, shape (N, d_in)
        The data set (rows = training cases).
    rng : numpy.random.Generator or int, keyword-only
        Source of the random factors δ (positive, with ``|log δ|`` between log 1.5 and
        log 4) and shifts γ (standard normal).

    Returns
    -------
    W_new, X_new : ndarray
        The transformed pair (float64 copies; the untouched one is returned as is).

    Notes
    -----
    ===========================  ==========================================================
    ``weight_matrix_rescale``    :math:`W \\to \\delta W`, one scalar :math:`\\delta > 0`
    ``weight_matrix_recenter``   :math:`W \\to W + \\mathbf 1 \\gamma^\\top`: the same vector
                                 :math:`\\gamma` added to every row, so every summed input of
                                 case ``n`` shifts by the same :math:`\\gamma^\\top x_n`
    ``weight_vector_rescale``    :math:`w_i \\to \\delta_i w_i`, each row by its own :math:`\\delta_i > 0`
    ``dataset_rescale``          :math:`x_n \\to \\delta x_n` for every case, one :math:`\\delta > 0`
    ``dataset_recenter``         :math:`x_n \\to x_n + \\gamma` for every case, one vector :math:`\\gamma`
    ``case_rescale``             :math:`x_n \\to \\delta_n x_n`, each case by its own :math:`\\delta_n > 0`
    ===========================  ==========================================================

    Ba et al. (2016), §5.1. See the chapter "LayerNorm" (``book/layernorm.md``).
    """
    name = _check_choice(name, "transform", TRANSFORMS)
    gen = _as_generator(rng)
    Wm = _as_matrix(W, "W")
    Xm = _as_matrix(X, "X")
    H, d_in = Wm.shape
    N = Xm.shape[0]
    if name == "weight_matrix_rescale":
        return _factor(gen) * Wm, Xm
    if name == "weight_matrix_recenter":
        return Wm + gen.standard_normal(d_in)[None, :], Xm
    if name == "weight_vector_rescale":
        return _factor(gen, H)[:, None] * Wm, Xm
    if name == "dataset_rescale":
        return Wm, _factor(gen) * Xm
    if name == "dataset_recenter":
        return Wm, Xm + gen.standard_normal(d_in)[None, :]
    return Wm, _factor(gen, N)[:, None] * Xm  # case_rescale


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class InvarianceCell:
    """One cell of the invariance table.

    Attributes
    ----------
    norm, transform : str
        Row and column.
    residual : float
        The largest relative change of the output over the trials:
        ``max|h' - h| / max|h|``.
    tol : float
        The relative tolerance below which the output counts as unchanged.
    """

    norm: str
    transform: str
    residual: float
    tol: float

    @property
    def invariant(self) -> bool:
        """Whether the output is unchanged (residual within the tolerance)."""
        return self.residual <= self.tol


def check_invariance(
    norm: str,
    name: str,
    W,
    X,
    gain=None,
    bias=None,
    *,
    rng,
    eps: float = 0.0,
    p: float = 0.0625,
    tol: float = 1e-9,
    trials: int = 3,
) -> InvarianceCell:
    """Whether one normalized layer's output is unchanged by one transformation.

    Parameters
    ----------
    norm : str
        One of :data:`NORMS`.
    name : str
        One of :data:`TRANSFORMS`.
    W, X, gain, bias
        The layer and the data, as in :func:`normalized_layer`. The gain and bias
        are held fixed.
    rng : numpy.random.Generator or int, keyword-only
        Source of the random transformations.
    eps, p : float, keyword-only
        As in :func:`normalized_layer`.
    tol : float, keyword-only
        Relative tolerance (> 0). With ``eps=0`` an exact invariance leaves only
        float64 rounding, around 1e-15; a broken one changes the output by order 1.
    trials : int, keyword-only
        Number of independent random transformations; the worst one counts.

    Returns
    -------
    InvarianceCell

    Notes
    -----
    :math:`r = \\max_t \\max_{n,i} |h^{(t)}_{n,i} - h_{n,i}| / \\max_{n,i} |h_{n,i}|`,
    where :math:`h` is the output before and :math:`h^{(t)}` after trial ``t``.
    The cell is invariant when :math:`r \\le` ``tol``. See ``book/layernorm.md``.
    """
    norm = _check_choice(norm, "norm", NORMS)
    name = _check_choice(name, "transform", TRANSFORMS)
    gen = _as_generator(rng)
    tol = _check_positive_real(tol, "tol")
    trials = _check_int(trials, "trials", 1)
    h = normalized_layer(norm, W, X, gain, bias, eps=eps, p=p)
    scale = float(np.max(np.abs(h)))
    if scale == 0.0:
        raise ValueError("the layer's output is identically zero; the relative residual is undefined")
    worst = 0.0
    for _ in range(int(trials)):
        W2, X2 = transform(name, W, X, rng=gen)
        h2 = normalized_layer(norm, W2, X2, gain, bias, eps=eps, p=p)
        worst = max(worst, float(np.max(np.abs(h2 - h))) / scale)
    return InvarianceCell(norm, name, worst, tol)


@dataclass(frozen=True)
class InvarianceTable:
    """The derived invariance table: one :class:`InvarianceCell` per (norm, transform).

    Attributes
    ----------
    cells : tuple of InvarianceCell
        Row-major, rows in the order of :data:`NORMS`, columns of :data:`TRANSFORMS`.
    eps, tol : float
        The ε of the normalizations and the relative tolerance used.
    """

    cells: tuple[InvarianceCell, ...]
    eps: float
    tol: float

    def cell(self, norm: str, name: str) -> InvarianceCell:
        """The cell of one norm and one transformation."""
        _check_choice(norm, "norm", NORMS)
        _check_choice(name, "transform", TRANSFORMS)
        for c in self.cells:
            if c.norm == norm and c.transform == name:
                return c
        raise KeyError(f"no cell ({norm!r}, {name!r}) in this table")

    def verdicts(self) -> dict[str, tuple[bool, ...]]:
        """``{norm: (invariant?, ...)}`` in the layout of :data:`PAPER_TABLE`."""
        return {n: tuple(self.cell(n, t).invariant for t in TRANSFORMS) for n in NORMS}

    def disagreements(self, reference: dict[str, tuple[bool, ...]] | None = None) -> list[tuple[str, str]]:
        """The (norm, transform) cells whose verdict differs from ``reference`` (default the papers')."""
        ref = PAPER_TABLE if reference is None else reference
        mine = self.verdicts()
        return [(n, t) for n in NORMS for j, t in enumerate(TRANSFORMS) if mine[n][j] != ref[n][j]]

    def largest_invariant_residual(self) -> float:
        """The worst residual among the cells judged invariant (0 if there are none)."""
        return max((c.residual for c in self.cells if c.invariant), default=0.0)

    def smallest_broken_residual(self) -> float:
        """The mildest residual among the cells judged not invariant (inf if there are none)."""
        return min((c.residual for c in self.cells if not c.invariant), default=float("inf"))

    def verdict_markdown(self) -> str:
        """A Markdown table of the derived verdicts (✓ invariant, ✗ not), a cell that disagrees with
        the papers marked with theirs, and a last column counting the agreements per row."""
        lines = ["| | " + " | ".join(_SHORT_TITLES[t] for t in TRANSFORMS) + " | agrees with the papers |",
                 "|---" * (len(TRANSFORMS) + 2) + "|"]
        for norm in NORMS:
            cells, agree = [], 0
            for j, t in enumerate(TRANSFORMS):
                mine, paper = self.cell(norm, t).invariant, PAPER_TABLE[norm][j]
                agree += mine == paper
                cells.append(("✓" if mine else "✗") + ("" if mine == paper else " (paper: " + ("✓" if paper else "✗") + ")"))
            lines.append(f"| {NORM_TITLES[norm]} | " + " | ".join(cells) + f" | {agree} of {len(TRANSFORMS)} |")
        return "\n".join(lines)

    def residual_markdown(self) -> str:
        """A Markdown table of the worst relative change of the output behind each verdict."""
        lines = ["| | " + " | ".join(_SHORT_TITLES[t] for t in TRANSFORMS) + " |", "|---" * (len(TRANSFORMS) + 1) + "|"]
        for norm in NORMS:
            lines.append(f"| {NORM_TITLES[norm]} | " + " | ".join(f"{self.cell(norm, t).residual:.0e}" for t in TRANSFORMS) + " |")
        return "\n".join(lines)


def invariance_table(
    rng,
    *,
    n_cases: int = 32,
    d_in: int = 16,
    hidden: int = 64,
    eps: float = 0.0,
    p: float = 0.0625,
    tol: float = 1e-9,
    trials: int = 3,
) -> InvarianceTable:
    """Re-derive every cell of the invariance table on one random layer and data set.

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Draws the layer (W standard normal / sqrt(d_in), gain 1 + 0.1·N(0,1),
        bias 0.1·N(0,1)), the data (N(0.5, 1) entries, so that the data have a non-zero
        mean) and every transformation.
    n_cases, d_in, hidden : int, keyword-only
        Batch size N (>= 2, BatchNorm needs it), input width and number of hidden units H.
    eps, p, tol, trials : keyword-only
        As in :func:`check_invariance`.

    Returns
    -------
    InvarianceTable

    Notes
    -----
    The same layer and data set are used for every row, and every row gets fresh
    random transformations. See the chapter "LayerNorm" (``book/layernorm.md``).
    """
    gen = _as_generator(rng)
    n_cases = _check_int(n_cases, "n_cases", 2)
    d_in = _check_int(d_in, "d_in", 1)
    hidden = _check_int(hidden, "hidden", 2)
    W = gen.standard_normal((hidden, d_in)) / np.sqrt(d_in)
    X = 0.5 + gen.standard_normal((n_cases, d_in))
    gain = 1.0 + 0.1 * gen.standard_normal(hidden)
    bias = 0.1 * gen.standard_normal(hidden)
    cells = tuple(
        check_invariance(norm, t, W, X, gain, bias, rng=gen, eps=eps, p=p, tol=tol, trials=trials)
        for norm in NORMS
        for t in TRANSFORMS
    )
    return InvarianceTable(cells=cells, eps=float(check_eps(eps)), tol=float(tol))


# ----------------------------------------------------------------------------- C2.4 and C2.5


def ln_rescale_residual(x, a, *, eps: float = 1e-5) -> np.ndarray:
    """Closed form of ``max|LN(a·x) - LN(x)|`` (unit gain, zero bias) over the last axis.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Input rows with non-zero variance.
    a : float or array_like
        Positive scale factor(s); broadcast against the leading axes of ``x``.
    eps : float, keyword-only
        The ε of :func:`normlib.layer_norm` (>= 0).

    Returns
    -------
    ndarray
        ``max_i |x̂0_i| · |a σ/√(a²σ²+ε) − σ/√(σ²+ε)|`` per row, float64.

    Raises
    ------
    TypeError
        Non-real ``x`` or ``a`` (bool, complex, str, object) or a non-numeric ``eps``.
    ValueError
        0-d or empty ``x``, non-finite values, a constant row, a factor ``a <= 0``, or ``eps < 0``.

    Notes
    -----
    With :math:`\\sigma^2` the biased variance of the row (without ε) and
    :math:`\\hat x_0 = (x-\\mu)/\\sigma`,

    .. math::

        \\mathrm{LN}(a x) - \\mathrm{LN}(x) = \\hat x_0\\Big(\\frac{a\\sigma}{\\sqrt{a^2\\sigma^2+\\epsilon}}
        - \\frac{\\sigma}{\\sqrt{\\sigma^2+\\epsilon}}\\Big)
        \\approx \\hat x_0\\,\\frac{\\epsilon}{2\\sigma^2}\\Big(1 - \\frac{1}{a^2}\\Big)
        \\quad (\\epsilon \\ll a^2\\sigma^2,\\ \\epsilon \\ll \\sigma^2).

    Derived in the chapter "LayerNorm" (``book/layernorm.md``).
    """
    eps = check_eps(eps)
    xa = as_features(x, "x").astype(np.float64)
    aa = _as_positive_factors(a, "a")
    mu = xa.mean(axis=-1)
    sigma = np.sqrt(np.mean((xa - mu[..., None]) ** 2, axis=-1))
    if np.any(sigma == 0):
        raise ValueError("a row of x is constant: x̂0 = (x - μ)/σ is undefined")
    xhat_max = np.max(np.abs(xa - mu[..., None]), axis=-1) / sigma
    return xhat_max * np.abs(aa * sigma / np.sqrt(aa**2 * sigma**2 + eps) - sigma / np.sqrt(sigma**2 + eps))


@dataclass(frozen=True)
class StepResponse:
    """Result of :func:`ln_step_response`.

    Attributes
    ----------
    scales : ndarray, shape (k,)
        The factors ``a``.
    rescale : str
        What was multiplied by ``a``: ``"weight"`` (the matrix ``W``) or ``"input"``
        (the batch ``X``).
    output_before : ndarray, shape (k,)
        ``max|Y_a - Y_1|``: how much the re-scaling itself moved the output.
    grads : ndarray, shape (k, H, d_in)
        ``dL/dW`` at each factor (for ``"weight"``, the gradient at ``a W``).
    grad_norm : ndarray, shape (k,)
        Frobenius norm of ``grads[j]``.
    output_change : ndarray, shape (k,)
        RMS change of the output after one gradient step ``W_a - lr · dL/dW``.
    lr : float
        The fixed learning rate.
    """

    scales: np.ndarray
    rescale: str
    output_before: np.ndarray
    grads: np.ndarray
    grad_norm: np.ndarray
    output_change: np.ndarray
    lr: float


def ln_step_response(
    W, X, target, scales, *, lr: float, eps: float = 1e-5, rescale: str = "weight"
) -> StepResponse:
    """One gradient step of ``Y = LN(X Wᵀ)`` after re-scaling the weights or the inputs by each ``a``.

    Parameters
    ----------
    W : array_like, shape (H, d_in)
    X : array_like, shape (N, d_in)
        A batch of inputs.
    target : array_like, shape (N, H)
        Regression target of the loss ``L = ½ Σ (Y - target)²``.
    scales : array_like, shape (k,)
        Positive factors ``a``.
    lr : float, keyword-only
        Fixed learning rate (> 0) of the plain gradient step on ``W``.
    eps : float, keyword-only
    rescale : {"weight", "input"}, keyword-only
        Multiply ``W`` by ``a`` (the case of Ba et al.'s §5.2) or the inputs ``X``
        (a change of the activation scale).

    Returns
    -------
    StepResponse

    Raises
    ------
    TypeError
        Non-real arrays or factors, or a ``rescale`` that is not a string.
    ValueError
        Shapes that do not fit, non-finite values, factors ``<= 0``, ``lr <= 0``,
        ``eps < 0``, or an unknown ``rescale``.

    Notes
    -----
    The gradient is exact: with :math:`Z = X W^\\top`, :math:`Y = \\mathrm{LN}(Z)` and
    :math:`G_Z = \\mathrm{VJP}_{\\mathrm{LN}}(Z, Y - T)` (:func:`normlib.layer_norm_vjp`),
    :math:`\\partial L/\\partial W = G_Z^\\top X`. For ε = 0, :math:`\\mathrm{LN}(aZ) = \\mathrm{LN}(Z)`
    and :math:`G_{aZ} = G_Z/a`, so

    * ``"weight"``: the gradient at :math:`aW` is :math:`G_Z^\\top X/a`, and the step
      :math:`aW - \\eta G/a = a(W - \\eta G/a^2)` moves the output like a step of size
      :math:`\\eta/a^2` at :math:`W`;
    * ``"input"``: the gradient is :math:`(G_Z/a)^\\top (aX) = G_Z^\\top X`, unchanged, and
      so is the step: the loss is the same function of :math:`W` for every :math:`a`.

    See the chapter "LayerNorm" (``book/layernorm.md``).
    """
    Wm = _as_matrix(W, "W")
    Xm = _as_matrix(X, "X")
    if Xm.shape[1] != Wm.shape[1]:
        raise ValueError(f"X has {Xm.shape[1]} features per case but W expects {Wm.shape[1]}")
    T = _as_matrix(target, "target")
    if T.shape != (Xm.shape[0], Wm.shape[0]):
        raise ValueError(f"target must have shape {(Xm.shape[0], Wm.shape[0])} = (N, H); got {T.shape}")
    a = _as_positive_factors(scales, "scales")
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"scales must be a non-empty 1-D array of finite factors > 0; got shape {a.shape}")
    lr = _check_positive_real(lr, "lr")
    eps = check_eps(eps)
    rescale = _check_choice(rescale, "rescale", ("weight", "input"))
    Y0 = layer_norm(Xm @ Wm.T, eps=eps)
    before, grads, change = [], [], []
    for s in a:
        Ws, Xs = (s * Wm, Xm) if rescale == "weight" else (Wm, s * Xm)
        Z = Xs @ Ws.T  # (N, H)
        Y = layer_norm(Z, eps=eps)
        G = layer_norm_vjp(Z, Y - T, eps=eps).T @ Xs  # (H, d_in) = dL/dW at the re-scaled point
        Y_new = layer_norm(Xs @ (Ws - lr * G).T, eps=eps)
        before.append(float(np.max(np.abs(Y - Y0))))
        grads.append(G)
        change.append(float(np.sqrt(np.mean((Y_new - Y) ** 2))))
    G_all = np.stack(grads)
    return StepResponse(
        scales=a.copy(),
        rescale=rescale,
        output_before=np.array(before),
        grads=G_all,
        grad_norm=np.linalg.norm(G_all, axis=(1, 2)),
        output_change=np.array(change),
        lr=lr,
    )
