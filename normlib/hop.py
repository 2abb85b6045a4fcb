"""One backward hop of the backbone gradient through a Post-Norm or a Pre-Norm block.

A block is the article's sublayer, a two-layer feed-forward branch ``F(x) = W2 φ(W1 x)``
of width ``d`` and hidden width ``4d`` with Gaussian weights (``W1 ~ N(0, 1/d)``,
``W2 ~ N(0, 1/(4d))`` entrywise), around a LayerNorm with unit gain and zero bias:

* Post-Norm, ``h' = LN(h + F(h))``: the gradient crosses the LayerNorm Jacobian, then the
  residual Jacobian ``(I + ∂F/∂h)ᵀ``;
* Pre-Norm, ``h' = h + F(LN(h))``: the gradient goes down the identity, and the branch adds
  ``J_h (∂F/∂x)ᵀ g``.

Every backward pass uses O(d) LayerNorm vector–Jacobian products and matrix–vector
products, never a d × d Jacobian. :func:`sample_hops` measures the hop gain
``‖∂L/∂h‖ / ‖g‖`` over many independent draws of a block, and
:func:`post_hop_leading_order` and :func:`pre_hop_mean_square` give what the chapter
derives for its mean square. Explained in the chapter "The LayerNorm Jacobian"
(``book/jacobian.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import as_features, check_eps
from ._validate import check_choice as _check_choice
from ._validate import check_int as _check_count
from ._validate import check_positive_real as _check_positive_real
from .norms import layer_norm, layer_norm_vjp

__all__ = [
    "ACTIVATIONS",
    "HIDDEN_FACTOR",
    "activation",
    "gaussian_moments",
    "Block",
    "draw_block",
    "PostHop",
    "post_hop",
    "pre_hop",
    "post_hop_leading_order",
    "pre_hop_mean_square",
    "HopSample",
    "sample_hops",
]

#: The branch activations: ReLU (the article's), GELU (exact, with the normal CDF), tanh.
ACTIVATIONS = ("relu", "gelu", "tanh")
#: The FFN's hidden width is HIDDEN_FACTOR · d.
HIDDEN_FACTOR = 4
#: The trapezoid rule on [-12, 12] for the Gaussian moments of a smooth activation: for an integrand
#: analytic in a strip around the real axis it converges exponentially (error far below 1e-12 here).
_QUAD_HALF_WIDTH, _QUAD_POINTS = 12.0, 6001
#: Draws sampled together by :func:`sample_hops` (memory: about 0.5 MB per draw at d = 128).
_CHUNK = 32


# ----------------------------------------------------------------------------- activations


def activation(name: str, a) -> tuple[np.ndarray, np.ndarray]:
    """The activation φ and its derivative φ′ at ``a``, elementwise.

    Parameters
    ----------
    name : {"relu", "gelu", "tanh"}
        ``"gelu"`` is the exact GELU, ``a·Φ(a)`` with Φ the standard normal CDF (PyTorch's
        default, ``approximate="none"``).
    a : array_like
        Pre-activations (real).

    Returns
    -------
    phi, dphi : ndarray
        φ(a) and φ′(a), float64, the shape of ``a``. The derivative of ReLU at 0 is taken as 0.

    Raises
    ------
    TypeError
        ``name`` is not a string, or ``a`` is not real.
    ValueError
        An unknown ``name``, or non-finite ``a``.

    Notes
    -----
    ReLU is positively homogeneous (φ(ca) = cφ(a) for c > 0); GELU and tanh are not, which is
    why a Post-Norm hop keeps the gradient's mean square at one only for the first. See the
    chapter "The LayerNorm Jacobian" (``book/jacobian.md``). GELU needs SciPy (``scipy.special``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.hop import activation
    >>> activation("relu", np.array([-1.0, 2.0]))
    (array([0., 2.]), array([0., 1.]))
    """
    name = _check_choice(name, "activation", ACTIVATIONS)
    x = np.asarray(a)
    if x.dtype == np.bool_ or not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
        raise TypeError(f"a must be real; got dtype {x.dtype}")
    x = x.astype(np.float64, copy=False)
    if x.size and not np.isfinite(x).all():
        raise ValueError("a contains NaN or infinite values")
    if name == "relu":
        return np.maximum(x, 0.0), (x > 0).astype(np.float64)
    if name == "tanh":
        t = np.tanh(x)
        return t, 1.0 - t * t
    from scipy.special import ndtr  # GELU only: the normal CDF

    cdf = ndtr(x)
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return x * cdf, cdf + x * pdf


def gaussian_moments(name: str, *, scale: float = 1.0) -> tuple[float, float, float]:
    """Gaussian moments of an activation that set the mean square of a hop.

    Parameters
    ----------
    name : {"relu", "gelu", "tanh"}
        The activation (see :func:`activation`).
    scale : float, keyword-only
        The standard deviation ``c`` of the pre-activation ``a = c·ξ``, ``ξ ~ N(0, 1)`` (> 0).

    Returns
    -------
    Q, P, R : float
        ``Q = E φ(a)²``, ``P = E φ′(a)²`` and ``R = E φ′(a)² ξ²``.

    Raises
    ------
    TypeError, ValueError
        An unknown activation or a scale that is not a finite number > 0.

    Notes
    -----
    For ReLU the closed forms are ``Q = c²/2`` and ``P = R = 1/2`` (φ′² depends only on the
    sign of ``a``); for the others, the trapezoid rule on ``ξ ∈ [−12, 12]``, which converges
    exponentially for these analytic integrands (exact to rounding). Used by :func:`post_hop_leading_order` and :func:`pre_hop_mean_square`; see the
    chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> from normlib.hop import gaussian_moments
    >>> gaussian_moments("relu", scale=2.0)
    (2.0, 0.5, 0.5)
    """
    name = _check_choice(name, "activation", ACTIVATIONS)
    c = _check_positive_real(scale, "scale")
    if name == "relu":
        return c * c / 2.0, 0.5, 0.5
    xi = np.linspace(-_QUAD_HALF_WIDTH, _QUAD_HALF_WIDTH, _QUAD_POINTS)
    w = np.exp(-0.5 * xi * xi)
    w /= w.sum()  # the trapezoid weights of the standard normal density (its end values are ~e^-72)
    phi, dphi = activation(name, c * xi)
    return float(w @ phi**2), float(w @ dphi**2), float(w @ (dphi**2 * xi**2))


# ----------------------------------------------------------------------------- one block


@dataclass(frozen=True)
class Block:
    """One random block and upstream gradient, as :func:`draw_block` draws them.

    Attributes
    ----------
    h : ndarray, shape (d,)
        Input direction: mean 0 and variance 1 exactly (``‖h‖/√d = 1``).
    W1 : ndarray, shape (4d, d)
        First FFN matrix, entries N(0, 1/d).
    W2 : ndarray, shape (d, 4d)
        Second FFN matrix, entries N(0, 1/(4d)).
    g : ndarray, shape (d,)
        Upstream gradient ∂L/∂h′, uniform on the unit sphere.
    """

    h: np.ndarray
    W1: np.ndarray
    W2: np.ndarray
    g: np.ndarray


def _draw_into(rng: np.random.Generator, h, W1, W2, g) -> None:
    """Fill one draw in place, in the order h, W1, W2, g (the protocol of :func:`draw_block`)."""
    d = h.shape[-1]
    rng.standard_normal(out=h)
    h -= h.mean()
    h /= math.sqrt(float(np.mean(h * h)))
    rng.standard_normal(out=W1)
    W1 /= math.sqrt(d)
    rng.standard_normal(out=W2)
    W2 /= math.sqrt(W2.shape[-1])
    rng.standard_normal(out=g)
    g /= math.sqrt(float(g @ g))


def draw_block(seed: int, *, width: int = 128) -> Block:
    """Draw one block and one upstream gradient from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    seed : int
        The seed (>= 0); draw ``i`` of :func:`sample_hops` is ``draw_block(i)``.
    width : int, keyword-only
        The width ``d`` (>= 3; the hidden width is ``4d``).

    Returns
    -------
    Block

    Raises
    ------
    TypeError, ValueError
        A seed or width that is not an integer in range.

    Notes
    -----
    Drawn in the order ``h``, ``W1``, ``W2``, ``g``, each from the standard normal, then
    ``h`` centered and scaled to variance 1, the matrices scaled to their variances and
    ``g`` to unit norm. See the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> from normlib.hop import draw_block
    >>> b = draw_block(0, width=8)
    >>> b.W1.shape, b.W2.shape, round(float(b.h.var()), 12)
    ((32, 8), (8, 32), 1.0)
    """
    seed = _check_count(seed, "seed", minimum=0)
    d = _check_count(width, "width", minimum=3)
    h, W1, W2, g = np.empty(d), np.empty((HIDDEN_FACTOR * d, d)), np.empty((d, HIDDEN_FACTOR * d)), np.empty(d)
    _draw_into(np.random.default_rng(seed), h, W1, W2, g)
    return Block(h=h, W1=W1, W2=W2, g=g)


@dataclass(frozen=True)
class PostHop:
    """The backward pass of one Post-Norm block (:func:`post_hop`).

    Attributes
    ----------
    dh : ndarray, shape (..., d)
        ∂L/∂h, the gradient the block sends down the backbone.
    dz : ndarray, shape (..., d)
        ``J_zᵀ g``, the gradient just below the LayerNorm (its factor alone).
    z : ndarray, shape (..., d)
        The LayerNorm's input ``h + F(h)``.
    """

    dh: np.ndarray
    dz: np.ndarray
    z: np.ndarray


def _matvec(M, v):
    return np.matmul(M, v[..., None])[..., 0]


def _rmatvec(M, v):
    return np.matmul(v[..., None, :], M)[..., 0, :]


def _check_block(h, W1, W2, g):
    h = as_features(h, "h")
    d = h.shape[-1]
    W1 = np.asarray(W1, dtype=np.float64)
    W2 = np.asarray(W2, dtype=np.float64)
    g = as_features(g, "g")
    if W1.shape[-1] != d or W1.ndim < 2 or W2.shape[-2:] != W1.shape[-2:][::-1]:
        raise ValueError(f"W1 must have shape (..., k, {d}) and W2 shape (..., {d}, k); got {W1.shape} and {W2.shape}")
    if g.shape != h.shape:
        raise ValueError(f"g must have the shape of h, {h.shape}; got {g.shape}")
    if not (np.isfinite(W1).all() and np.isfinite(W2).all()):
        raise ValueError("W1 and W2 must be finite")
    return h.astype(np.float64, copy=False), W1, W2, g.astype(np.float64, copy=False)


def post_hop(h, W1, W2, g, *, activation: str = "relu", eps: float = 1e-5) -> PostHop:
    """Backward pass of a Post-Norm block ``h′ = LN(h + W2 φ(W1 h))`` for the upstream gradient ``g``.

    Parameters
    ----------
    h : array_like, shape (..., d)
        The block's input.
    W1 : array_like, shape (..., k, d)
    W2 : array_like, shape (..., d, k)
        The FFN's matrices (leading axes broadcast against those of ``h``).
    g : array_like, shape (..., d)
        Upstream gradient ∂L/∂h′.
    activation : {"relu", "gelu", "tanh"}, keyword-only
    eps : float, keyword-only
        The LayerNorm's ε (>= 0).

    Returns
    -------
    PostHop

    Raises
    ------
    TypeError, ValueError
        Non-real or non-finite arrays, shapes that do not fit, an unknown activation, ``eps < 0``.

    Notes
    -----
    ``∂L/∂h = (I + W2 D W1)ᵀ J_z g`` with ``z = h + F(h)``, ``D = diag φ′(W1 h)`` and ``J_z`` the
    LayerNorm Jacobian (:func:`normlib.layer_norm_vjp`). See the chapter "The LayerNorm
    Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.hop import draw_block, post_hop
    >>> b = draw_block(1, width=16)
    >>> r = post_hop(b.h, b.W1, b.W2, b.g)
    >>> r.dh.shape, bool(abs(r.dz.sum()) < 1e-12)   # J_z g has no component on the constant direction
    ((16,), True)
    """
    name = _check_choice(activation, "activation", ACTIVATIONS)
    eps = check_eps(eps)
    h, W1, W2, g = _check_block(h, W1, W2, g)
    return _post(h, W1, W2, g, name, eps)


def _post(h, W1, W2, g, name, eps):
    a1 = _matvec(W1, h)  # (..., k)
    phi, dphi = activation(name, a1)
    z = h + _matvec(W2, phi)
    dz = layer_norm_vjp(z, g, eps=eps)  # through the LayerNorm
    dh = dz + _rmatvec(W1, dphi * _rmatvec(W2, dz))  # through z = h + F(h)
    return PostHop(dh=dh, dz=dz, z=z)


def _post_forward(h, W1, W2, name):
    """The forward pass of a Post-Norm block up to the LayerNorm: its input z and φ′(W1 h)."""
    a1 = _matvec(W1, h)
    phi, dphi = activation(name, a1)
    return h + _matvec(W2, phi), dphi


def _post_backward(W1, W2, dphi, dzs):
    """``dz + W1ᵀ D W2ᵀ dz`` for several gradients ``dz`` below the LayerNorm, as one batched product."""
    D = np.stack(dzs, axis=-1)  # (..., d, p)
    back = np.matmul(np.swapaxes(W1, -1, -2), dphi[..., None] * np.matmul(np.swapaxes(W2, -1, -2), D))
    return [dz + back[..., i] for i, dz in enumerate(dzs)]


def pre_hop(h, W1, W2, g, *, activation: str = "relu", eps: float = 1e-5) -> np.ndarray:
    """Backward pass of a Pre-Norm block ``h′ = h + W2 φ(W1 LN(h))`` for the upstream gradient ``g``.

    Parameters
    ----------
    h : array_like, shape (..., d)
    W1 : array_like, shape (..., k, d)
    W2 : array_like, shape (..., d, k)
    g : array_like, shape (..., d)
    activation : {"relu", "gelu", "tanh"}, keyword-only
    eps : float, keyword-only
        The LayerNorm's ε (>= 0).

    Returns
    -------
    ndarray
        ∂L/∂h ``= g + J_h W1ᵀ D W2ᵀ g``, shape of ``h``.

    Raises
    ------
    TypeError, ValueError
        As :func:`post_hop`.

    Notes
    -----
    The identity path carries ``g`` unchanged; the LayerNorm Jacobian ``J_h`` acts on the branch
    only. See the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.hop import draw_block, pre_hop
    >>> b = draw_block(2, width=16)
    >>> pre_hop(b.h, b.W1, b.W2, b.g).shape
    (16,)
    """
    name = _check_choice(activation, "activation", ACTIVATIONS)
    eps = check_eps(eps)
    h, W1, W2, g = _check_block(h, W1, W2, g)
    return _pre(h, W1, W2, g, name, eps)


def _pre(h, W1, W2, g, name, eps):
    a1 = _matvec(W1, layer_norm(h, eps=eps))
    _, dphi = activation(name, a1)
    return g + layer_norm_vjp(h, _rmatvec(W1, dphi * _rmatvec(W2, g)), eps=eps)


# ----------------------------------------------------------------------------- what the chapter derives


def post_hop_leading_order(activation: str = "relu", *, scale: float = 1.0) -> float:
    """Leading-order mean square of a Post-Norm hop, ``(1 + P)/(s² + Q)``, for a unit upstream gradient.

    Parameters
    ----------
    activation : {"relu", "gelu", "tanh"}
    scale : float, keyword-only
        The input scale ``s = ‖h‖/√d`` (> 0).

    Returns
    -------
    float
        ``(1 + E φ′(a)²) / (s² + E φ(a)²)`` with ``a ~ N(0, s²)``: ``1/s²`` for ReLU.

    Raises
    ------
    TypeError, ValueError
        As :func:`gaussian_moments`.

    Notes
    -----
    The LayerNorm's input has variance ``s² + E φ(a)²`` (its factor alone has mean square one
    over that), and the residual Jacobian multiplies the mean square by ``1 + E φ′(a)²``; the
    terms dropped are of relative order 1/d. The two cancel at unit scale exactly when
    ``E φ(a)² = E φ′(a)²``, which holds for every positively homogeneous φ. Derived in the
    chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> from normlib.hop import post_hop_leading_order
    >>> post_hop_leading_order("relu", scale=2.0)
    0.25
    """
    s = _check_positive_real(scale, "scale")
    Q, P, _ = gaussian_moments(activation, scale=s)
    return (1.0 + P) / (s * s + Q)


def pre_hop_mean_square(h, *, activation: str = "relu", eps: float = 1e-5) -> float:
    """Exact mean square of a Pre-Norm hop over the weights, for a fixed input and a unit upstream gradient.

    Parameters
    ----------
    h : array_like, shape (d,)
        The block's input (non-zero variance).
    activation : {"relu", "gelu", "tanh"}, keyword-only
    eps : float, keyword-only
        The LayerNorm's ε (>= 0).

    Returns
    -------
    float
        ``1 + ((d − 2) P + R ε²/σ⁴) / (d σ²)``, with ``σ² = var(h) + ε`` and ``P``, ``R`` the
        moments of :func:`gaussian_moments` at the scale ``c = √(var(h)/σ²)``.

    Raises
    ------
    TypeError, ValueError
        Non-real or non-finite ``h``, ``d < 3``, a constant ``h``, an unknown activation,
        ``eps < 0``.

    Notes
    -----
    For ReLU, ``P = R = 1/2`` and the value is ``1 + tr(J_h²)/(2d)``. The cross term between the
    identity path and the branch has mean zero because ``W2`` is independent of everything
    else. Derived in the chapter "The LayerNorm Jacobian" (``book/jacobian.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.hop import pre_hop_mean_square
    >>> h = np.tile([1.0, -1.0], 64)                       # variance 1, d = 128
    >>> round(pre_hop_mean_square(h, eps=0.0), 6)         # 1 + (126/128)/2
    1.492188
    """
    eps = check_eps(eps)
    x = as_features(h, "h").astype(np.float64, copy=False)
    if x.ndim != 1:
        raise ValueError(f"h must be one input of shape (d,); got shape {x.shape}")
    d = x.shape[0]
    if d < 3:
        raise ValueError(f"h needs at least 3 features; got {d}")
    v = float(np.mean((x - x.mean()) ** 2))
    if v == 0:
        raise ValueError("h is constant: the formula needs an input with non-zero variance")
    s2 = v + eps
    _, P, R = gaussian_moments(activation, scale=math.sqrt(v / s2))
    return 1.0 + ((d - 2) * P + R * eps**2 / s2**2) / (d * s2)


# ----------------------------------------------------------------------------- many draws


@dataclass(frozen=True, eq=False)
class HopSample:
    """Hop gains over independent draws (:func:`sample_hops`).

    Every mapping is keyed by the activation; draw ``i`` is :func:`draw_block`
    ``(i, width=width)``, and the same draw (input direction, weights, upstream gradient) is
    used at every scale, for every activation and in both placements, so comparisons between
    them are paired.

    Attributes
    ----------
    width : int
    eps : float
    scales : dict of str to tuple of float
        The input scales ``s = ‖h‖/√d`` measured for each activation.
    post, pre : dict of str to ndarray, each of shape (n_draws, n_scales)
        ``‖∂L/∂h‖`` of the Post-Norm and the Pre-Norm block.
    ln : dict of str to ndarray, shape (n_draws, n_scales)
        ``‖J_z g‖``, the Post-Norm block's LayerNorm factor alone.
    var_z : dict of str to ndarray, shape (n_draws, n_scales)
        Variance of the Post-Norm LayerNorm's input ``z = h + F(h)``.
    post_eps0 : dict of str to ndarray, shape (n_draws,)
        ``‖∂L/∂h‖`` of the Post-Norm block with ε = 0, at unit scale.
    cos_eps0 : dict of str to ndarray, shape (n_draws,)
        ``|cos(h, ∂L/∂h)|`` of the Post-Norm block with ε = 0 at unit scale.
    post_perp, ln_perp : dict of str to ndarray, shape (n_draws,)
        ``‖∂L/∂h‖`` and ``‖J_z g⊥‖`` at unit scale for ``g⊥``, the upstream gradient with its
        component on ``ẑ = z − z̄`` removed and renormalized (the situation inside a stack).
    frac_one : dict of str to ndarray, shape (n_draws,)
        Share of ``‖∂L/∂h‖²`` (unit scale, the drawn ``g``) on the constant direction.
    """

    width: int
    eps: float
    scales: dict
    post: dict
    pre: dict
    ln: dict
    var_z: dict
    post_eps0: dict
    cos_eps0: dict
    post_perp: dict
    ln_perp: dict
    frac_one: dict


def sample_hops(n_draws: int, *, width: int = 128, scales=None, eps: float = 1e-5) -> HopSample:
    """Backpropagate a unit gradient through one Post-Norm and one Pre-Norm block, over many draws.

    Parameters
    ----------
    n_draws : int
        Number of independent draws (>= 1); draw ``i`` is :func:`draw_block` ``(i, width=width)``.
    width : int, keyword-only
        The width ``d`` (>= 3).
    scales : mapping of str to sequence of float, keyword-only
        For each branch activation of :data:`ACTIVATIONS` to run, the input scales ``s`` (each
        > 0; the block sees ``s·h``); default ``{"relu": (1.0,)}``. Every activation runs on the
        same draws.
    eps : float, keyword-only
        The LayerNorm's ε (>= 0); ``post_eps0`` and ``cos_eps0`` use ε = 0.

    Returns
    -------
    HopSample

    Raises
    ------
    TypeError, ValueError
        Counts, scales or activations out of range, ``eps < 0``.

    Notes
    -----
    The draws are made in chunks and every hop of a chunk is one batched matrix product, so the
    cost is mostly that of drawing the weights. See the chapter "The LayerNorm Jacobian"
    (``book/jacobian.md``).

    Examples
    --------
    >>> from normlib.hop import sample_hops
    >>> s = sample_hops(4, width=16, scales={"relu": (1.0, 2.0), "gelu": (1.0,)})
    >>> s.post["relu"].shape, s.post["gelu"].shape, s.post_perp["gelu"].shape
    ((4, 2), (4, 1), (4,))
    """
    n = _check_count(n_draws, "n_draws")
    d = _check_count(width, "width", minimum=3)
    eps = check_eps(eps)
    if scales is None:
        scales = {"relu": (1.0,)}
    if not hasattr(scales, "items") or not scales:
        raise TypeError("scales must be a non-empty mapping {activation: (scale, ...)}")
    runs = {}
    for name, ss in scales.items():
        name = _check_choice(name, "activation", ACTIVATIONS)
        sc = tuple(_check_positive_real(s, "scales") for s in np.atleast_1d(np.asarray(ss, dtype=float)).tolist())
        if not sc:
            raise ValueError(f"no scales for activation {name!r}")
        runs[name] = sc
    k = HIDDEN_FACTOR * d
    arr = {f: {a: np.empty((n, len(sc))) for a, sc in runs.items()} for f in ("post", "pre", "ln", "var_z")}
    vec = {f: {a: np.empty(n) for a in runs} for f in ("post_eps0", "cos_eps0", "post_perp", "ln_perp", "frac_one")}
    for start in range(0, n, _CHUNK):
        m = min(_CHUNK, n - start)
        h, W1, W2, g = np.empty((m, d)), np.empty((m, k, d)), np.empty((m, d, k)), np.empty((m, d))
        for j in range(m):
            _draw_into(np.random.default_rng(start + j), h[j], W1[j], W2[j], g[j])
        rows = slice(start, start + m)
        for name, sc in runs.items():
            for js, s in enumerate(sc + ((1.0,) if 1.0 not in sc else ())):
                z, dphi = _post_forward(s * h, W1, W2, name)
                cots = [layer_norm_vjp(z, g, eps=eps)]
                if s == 1.0:  # the unit-scale extras: ε = 0, and g with its ẑ component removed
                    zc = z - z.mean(-1, keepdims=True)
                    gp = g - zc * (np.sum(zc * g, -1) / np.sum(zc * zc, -1))[:, None]
                    gp /= np.linalg.norm(gp, axis=-1, keepdims=True)
                    cots += [layer_norm_vjp(z, g, eps=0.0), layer_norm_vjp(z, gp, eps=eps)]
                dhs = _post_backward(W1, W2, dphi, cots)
                if s == 1.0:
                    vec["post_eps0"][name][rows] = np.linalg.norm(dhs[1], axis=-1)
                    vec["cos_eps0"][name][rows] = np.abs(np.sum(h * dhs[1], -1)) / (np.linalg.norm(h, axis=-1) * np.linalg.norm(dhs[1], axis=-1))
                    vec["frac_one"][name][rows] = dhs[0].sum(-1) ** 2 / (d * np.sum(dhs[0] * dhs[0], -1))
                    vec["post_perp"][name][rows] = np.linalg.norm(dhs[2], axis=-1)
                    vec["ln_perp"][name][rows] = np.linalg.norm(cots[2], axis=-1)
                if js < len(sc):
                    arr["post"][name][rows, js] = np.linalg.norm(dhs[0], axis=-1)
                    arr["ln"][name][rows, js] = np.linalg.norm(cots[0], axis=-1)
                    arr["var_z"][name][rows, js] = np.var(z, axis=-1)
                    arr["pre"][name][rows, js] = np.linalg.norm(_pre(s * h, W1, W2, g, name, eps), axis=-1)
    return HopSample(width=d, eps=eps, scales=runs, **arr, **vec)
