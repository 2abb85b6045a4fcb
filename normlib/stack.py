"""The residual amplification model: Post-Norm, Pre-Norm and DeepNorm stacks at initialization.

Each sublayer is a two-layer ReLU feed-forward block ``F(u) = W2 ReLU(W1 u)`` of
width ``d`` and hidden width ``4d`` with Xavier-scale Gaussian weights, wrapped in a
residual connection with a LayerNorm (unit gain, zero bias) placed after the sum
(Post-Norm, DeepNorm) or before the branch (Pre-Norm). The forward pass records the
size of the residual stream; the backward pass, started from a random unit gradient
at the top, records the gradient at each residual sum and the gradient of each
block's second weight matrix.

Two ways to sample the same model:

``method="exact"``
    The article's protocol (``CLAIMS.md`` C5.7): every weight matrix is drawn, in a
    fixed order from ``numpy.random.default_rng(seed)``, so the article's printed
    numbers are reproduced digit for digit. The backward pass uses O(d) LayerNorm
    vector-Jacobian products and matrix-vector products, never a d x d Jacobian.
``method="conditional"``
    The same random model sampled without weight matrices, exact in distribution, by
    Gaussian conditioning: O(d) work and memory per layer.

Explained in the chapter "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ._validate import check_choice as _check_choice
from ._validate import check_eps
from ._validate import check_int as _check_count
from ._validate import check_positive_real as _check_positive_real
from .deepnorm import deepnorm_constants
from .norms import _ln_stats
from .norms import _ln_vjp_from_stats as _ln_vjp

__all__ = [
    "StackResult",
    "simulate_stack",
    "ExactTiming",
    "ConditionalCost",
    "ExplicitCost",
    "time_exact_vs_draws",
    "measure_conditional",
    "explicit_cost",
]

PLACEMENTS = ("post", "pre", "deepnorm")
METHODS = ("exact", "conditional")
HIDDEN_FACTOR = 4  # the FFN's hidden width is 4 d


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class StackResult:
    """What :func:`simulate_stack` measured.

    Attributes
    ----------
    placement : {"post", "pre", "deepnorm"}
    depth, width, n_seeds : int
    final_norm : bool
        Whether a final LayerNorm sits on top of the Pre-Norm stack.
    method : {"exact", "conditional"}
    seeds : tuple of int
        The seeds used, one ``numpy.random.default_rng(seed)`` each.
    hidden_norm : ndarray, shape (depth,)
        Mean over seeds of ``‖h_l‖ / sqrt(d)``, the residual stream after layer ``l``
        (before the final LayerNorm, if any).
    hidden_grad : ndarray, shape (depth,)
        Mean over seeds of ``‖∂ℓ/∂z_l‖``, the gradient at layer ``l``'s residual sum
        ``z_l`` (Post/DeepNorm: the input of the LayerNorm; Pre: the stream itself).
        This is also the gradient that reaches the branch output ``F``.
    param_grad : ndarray, shape (depth,)
        Mean over seeds of ``‖∂ℓ/∂W2_l‖_F = ‖∂ℓ/∂z_l‖ · ‖ReLU(a1_l)‖``, the gradient of
        layer ``l``'s second FFN weight (for DeepNorm the β-scaled weight actually used).
    per_seed_hidden_norm, per_seed_hidden_grad, per_seed_param_grad : ndarray, shape (n_seeds, depth)
        The same, seed by seed.
    eps : float
        The LayerNorm epsilon.
    alpha, beta : float
        Residual weight and initialization scale (1 and 1 unless DeepNorm).
    """

    placement: str
    depth: int
    width: int
    n_seeds: int
    final_norm: bool
    method: str
    seeds: tuple
    hidden_norm: np.ndarray
    hidden_grad: np.ndarray
    param_grad: np.ndarray
    per_seed_hidden_norm: np.ndarray
    per_seed_hidden_grad: np.ndarray
    per_seed_param_grad: np.ndarray
    eps: float = 1e-5
    alpha: float = 1.0
    beta: float = 1.0

    @property
    def ratio(self) -> float:
        """Input/output parameter-gradient ratio of the seed means, ``param_grad[0] / param_grad[-1]``.

        This is the article's "input/output parameter-gradient ratio" (C5.7). Raises
        ``ValueError`` when the last layer's gradient is zero (e.g. ``width=1``, where
        LayerNorm is constant and every gradient vanishes): the ratio is undefined.
        """
        _check_nonzero(self.param_grad[-1:], self.width)
        return float(self.param_grad[0] / self.param_grad[-1])

    @property
    def per_seed_ratio(self) -> np.ndarray:
        """The same ratio seed by seed, shape ``(n_seeds,)``; raises like :attr:`ratio`."""
        p = self.per_seed_param_grad
        _check_nonzero(p[:, -1], self.width)
        return p[:, 0] / p[:, -1]


def _check_nonzero(last: np.ndarray, width: int) -> None:
    if not np.all(last > 0):
        raise ValueError(
            "the last layer's parameter gradient is zero, so the input/output ratio is undefined"
            + (" (width=1: LayerNorm of a single feature is constant)" if width == 1 else "")
        )


# ----------------------------------------------------------------------------- public API


def simulate_stack(
    placement: str,
    depth: int,
    *,
    width: int = 128,
    n_seeds: int = 4,
    final_norm: bool = False,
    method: str = "exact",
    seeds=None,
    eps: float = 1e-5,
    alpha: float | None = None,
    beta: float | None = None,
) -> StackResult:
    """Forward norms and backward gradients of a residual stack of ReLU FFN blocks at initialization.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        Where the LayerNorm goes: ``h <- LN(h + F(h))`` (post), ``h <- h + F(LN(h))``
        (pre) or ``h <- LN(α h + F_β(h))`` (deepnorm).
    depth : int
        Number of residual blocks ``L`` (>= 1).
    width : int, keyword-only
        Model width ``d`` (>= 1); the FFN's hidden width is ``4 d``.
    n_seeds : int, keyword-only
        Number of random seeds ``0, 1, ..., n_seeds - 1``; ignored when ``seeds`` is given.
    final_norm : bool, keyword-only
        Pre-Norm only: put a LayerNorm on top of the stack; the unit top gradient is
        then applied at its output.
    method : {"exact", "conditional"}, keyword-only
        ``"exact"`` draws every weight matrix (the article's protocol, reproduces its
        numbers); ``"conditional"`` samples the same model without weight matrices,
        exact in distribution, in O(d) per layer (its own random stream).
    seeds : sequence of int, optional
        Explicit non-negative seeds; seed ``s`` uses ``numpy.random.default_rng(s)``.
    eps : float, keyword-only
        LayerNorm epsilon, inside the square root (>= 0).
    alpha, beta : float, optional
        DeepNorm only: residual weight α and the initialization scale β of both FFN
        weights. Default: DeepNet's encoder-only constants
        (:func:`normlib.deepnorm_constants`) with ``N = depth / 2`` layers: each
        block here is one FFN sublayer, a DeepNet layer has two sublayers, and
        DeepNet's bound sums over the ``2N`` sublayers; so ``α = depth^(1/4)``,
        ``β = (4 depth)^(-1/4)``.

    Returns
    -------
    StackResult
        Per-layer means over seeds and per-seed arrays, float64.

    Raises
    ------
    TypeError
        A non-integer depth, width, n_seeds or seed, a non-bool ``final_norm``, a
        non-string placement or method, or a non-numeric ``eps``/``alpha``/``beta``.
    ValueError
        An unknown placement or method, a count < 1, a negative seed, an empty seed
        list, a negative ``eps``, ``alpha``/``beta`` for a placement other than
        deepnorm, or ``final_norm`` for a placement other than pre.

    Notes
    -----
    Block ``l`` (weights ``W1 = β Z1/sqrt(d)``, ``Z1`` of shape (4d, d), and
    ``W2 = β Z2/sqrt(4d)``, ``Z2`` of shape (d, 4d), standard normal; β = 1 except
    for DeepNorm), with ``u`` the branch input and ``a1 = W1 u``:

    .. math::

        \\text{post: } z = h + W_2\\,\\mathrm{ReLU}(W_1 h),\\; h \\leftarrow \\mathrm{LN}(z);\\qquad
        \\text{pre: } z = h + W_2\\,\\mathrm{ReLU}(W_1 \\mathrm{LN}(h)),\\; h \\leftarrow z;\\qquad
        \\text{deepnorm: } z = \\alpha h + W_2\\,\\mathrm{ReLU}(W_1 h),\\; h \\leftarrow \\mathrm{LN}(z).

    Backward from a unit random gradient ``g`` at the top (after the final LN, if
    any), with ``δ = ∂ℓ/∂z`` (the LayerNorm VJP of ``g`` at ``z`` for post/deepnorm,
    ``g`` itself for pre) and ``m = 1[a1 > 0]``:

    .. math::

        \\text{post/deepnorm: } g \\leftarrow \\alpha\\,\\delta + W_1^\\top(m \\odot W_2^\\top \\delta);\\qquad
        \\text{pre: } g \\leftarrow g + J_{\\mathrm{LN}}(h)^\\top W_1^\\top(m \\odot W_2^\\top g).

    Recorded: ``hidden_norm = ‖h‖/sqrt(d)``, ``hidden_grad = ‖δ‖``,
    ``param_grad = ‖δ ReLU(a1)ᵀ‖_F = ‖δ‖ ‖ReLU(a1)‖``.

    Exact protocol (C5.7): for seed ``s``, ``r = default_rng(s)`` draws ``h`` (d
    normals), then per layer ``Z1`` then ``Z2``, then the top gradient (d normals,
    normalized to unit length). The weights are kept for the backward pass,
    ``depth · 8d²`` float64 (268 MB at L = 256, d = 128); above
    ``EXACT_STORE_LIMIT`` (2 GiB) each layer's weights are redrawn in the backward
    pass from the generator state saved in the forward pass (same numbers, about
    twice the drawing time). Time is about that of drawing the numbers alone.

    Conditional sampler: at initialization a block's weights appear nowhere else and
    are independent of its input, so given the forward pass they are Gaussian
    conditioned on ``W1 u = a1`` and ``W2 r = f`` (``r = ReLU(a1)``, ``f = W2 r``),
    independently across layers. With ``n`` = the number of active units, forward
    needs only ``n ~ Binomial(4d, 1/2)``, ``‖r‖² = β²‖u‖²/d · χ²_n`` and
    ``f = β‖r‖/sqrt(4d) · N(0, I_d)``. Backward, ``v = m ⊙ W2ᵀδ`` has the component
    ``(f·δ)/‖r‖`` along ``r`` and ``N(0, β²‖δ‖²/(4d))`` noise in the other ``n − 1``
    active directions, so ``‖v‖² = (f·δ)²/‖r‖² + β²‖δ‖²/(4d) · χ²_(n−1)``; and
    ``W1ᵀv = u (f·δ)/‖u‖² + P⊥u ζ`` with ``ζ ~ N(0, β²‖v‖²/d · I_d)`` (``a1·v = f·δ``).
    No 4d-vector and no matrix is ever formed. Derived in the chapter
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).

    Examples
    --------
    >>> from normlib import simulate_stack
    >>> res = simulate_stack("post", 64)
    >>> f"{res.ratio:.3f}"
    '0.715'
    """
    cfg = _validate(placement, depth, width, n_seeds, final_norm, method, seeds, eps, alpha, beta)
    run_seed = _exact_seed if cfg["method"] == "exact" else _conditional_seed
    L, d = cfg["depth"], cfg["width"]
    seed_list = cfg["seeds"]
    hn = np.empty((len(seed_list), L))
    hg = np.empty((len(seed_list), L))
    pg = np.empty((len(seed_list), L))
    scratch = {}
    for i, s in enumerate(seed_list):
        hn[i], hg[i], pg[i] = run_seed(np.random.default_rng(s), cfg, scratch)
    arrays = [hn.mean(axis=0), hg.mean(axis=0), pg.mean(axis=0), hn, hg, pg]
    for a in arrays:
        a.setflags(write=False)
    return StackResult(
        placement=cfg["placement"],
        depth=L,
        width=d,
        n_seeds=len(seed_list),
        final_norm=cfg["final_norm"],
        method=cfg["method"],
        seeds=seed_list,
        hidden_norm=arrays[0],
        hidden_grad=arrays[1],
        param_grad=arrays[2],
        per_seed_hidden_norm=arrays[3],
        per_seed_hidden_grad=arrays[4],
        per_seed_param_grad=arrays[5],
        eps=cfg["eps"],
        alpha=cfg["alpha"],
        beta=cfg["beta"],
    )


# ----------------------------------------------------------------------------- validation


def _validate(placement, depth, width, n_seeds, final_norm, method, seeds, eps, alpha, beta) -> dict:
    placement = _check_choice(placement, "placement", PLACEMENTS)
    method = _check_choice(method, "method", METHODS)
    depth = _check_count(depth, "depth")
    width = _check_count(width, "width")
    n_seeds = _check_count(n_seeds, "n_seeds")
    eps = check_eps(eps)
    if not isinstance(final_norm, (bool, np.bool_)):
        raise TypeError(f"final_norm must be True or False; got {type(final_norm).__name__} {final_norm!r}")
    final_norm = bool(final_norm)
    if final_norm and placement != "pre":
        raise ValueError(
            f"final_norm=True is only meaningful for placement='pre' (a {placement!r} stack "
            "already ends with a LayerNorm); got placement=" + repr(placement)
        )
    if placement == "deepnorm":
        a0, b0 = deepnorm_constants("encoder", N=depth / 2)  # depth sublayers = 2N sublayers
        alpha = a0 if alpha is None else _check_positive_real(alpha, "alpha")
        beta = b0 if beta is None else _check_positive_real(beta, "beta")
    else:
        if alpha is not None or beta is not None:
            raise ValueError(
                f"alpha and beta apply only to placement='deepnorm'; got placement={placement!r} "
                f"with alpha={alpha!r}, beta={beta!r}"
            )
        alpha, beta = 1.0, 1.0
    if seeds is None:
        seed_list = tuple(range(n_seeds))
    else:
        if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
            raise TypeError(f"seeds must be a sequence of non-negative integers; got {type(seeds).__name__}")
        seed_list = tuple(seeds)
        if not seed_list:
            raise ValueError("seeds must contain at least one seed; got an empty sequence")
        for s in seed_list:
            if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
                raise TypeError(f"every seed must be a non-negative integer; got {type(s).__name__} {s!r}")
            if s < 0:
                raise ValueError(f"every seed must be a non-negative integer; got {s!r}")
        seed_list = tuple(int(s) for s in seed_list)
    return dict(
        placement=placement, method=method, depth=depth, width=width, final_norm=final_norm,
        eps=eps, alpha=float(alpha), beta=float(beta), seeds=seed_list,
    )


# ----------------------------------------------------------------------------- LayerNorm helpers


def _ln(x: np.ndarray, eps: float):
    """LayerNorm with unit gain: returns ``(x_hat, rstd)``; two-pass variance, eps inside the root."""
    _, rstd, x_hat = _ln_stats(x, eps)
    return x_hat, float(rstd[0])


# ----------------------------------------------------------------------------- exact protocol


#: Above this many bytes of weights the exact method stops storing them and redraws
#: each layer's weights in the backward pass from the generator state saved in the
#: forward pass: the same numbers, about twice the drawing time, O(d²) memory.
EXACT_STORE_LIMIT = 2 * 1024**3


def _draw_buffer(scratch: dict, depth: int, d: int) -> np.ndarray:
    """One float64 buffer of shape (depth, 8 d²) for the raw weights, reused across seeds."""
    n = 2 * HIDDEN_FACTOR * d * d
    buf = scratch.get("weights")
    if buf is None or buf.shape != (depth, n):
        buf = np.empty((depth, n))
        scratch["weights"] = buf
    return buf


def _exact_seed(rng: np.random.Generator, cfg: dict, scratch: dict):
    """One seed of the article's protocol; returns (hidden_norm, hidden_grad, param_grad)."""
    L, d, eps = cfg["depth"], cfg["width"], cfg["eps"]
    alpha, beta = cfg["alpha"], cfg["beta"]
    pre = cfg["placement"] == "pre"
    k = HIDDEN_FACTOR * d
    s1, s2 = beta / math.sqrt(d), beta / math.sqrt(k)  # W1 = s1 Z1, W2 = s2 Z2
    store = L * 2 * k * d * 8 <= EXACT_STORE_LIMIT
    buf = _draw_buffer(scratch, L if store else 1, d)
    Z1 = buf[:, : k * d].reshape(len(buf), k, d)  # raw standard normals, layer by layer
    Z2 = buf[:, k * d :].reshape(len(buf), d, k)
    states = []  # generator states before each layer's draw (when not storing)

    def draw(l: int) -> int:  # forward: one call per layer, Z1 then Z2 (the article's order)
        if not store:
            states.append(rng.bit_generator.state)
        i = l if store else 0
        rng.standard_normal(out=buf[i])
        return i

    def redraw(l: int) -> int:  # backward: the stored layer, or the same numbers again
        if store:
            return l
        gen = np.random.Generator(type(rng.bit_generator)())
        gen.bit_generator.state = states[l]
        gen.standard_normal(out=buf[0])
        return 0

    hidden_norm = np.empty(L)
    hidden_grad = np.empty(L)
    param_grad = np.empty(L)
    relu = np.empty((L, k))  # ReLU(a1) per layer
    saved = [None] * L  # pre: (x_hat, rstd) of the stream before the block; post: of z

    h = rng.standard_normal(d)
    for l in range(L):
        i = draw(l)
        if pre:
            u, rs = _ln(h, eps)
            saved[l] = (u, rs)
        else:
            u = h
        np.maximum(s1 * (Z1[i] @ u), 0.0, out=relu[l])
        f = s2 * (Z2[i] @ relu[l])
        if pre:
            h = h + f
        else:
            h, rs = _ln(alpha * h + f, eps)
            saved[l] = (h, rs)
        hidden_norm[l] = np.linalg.norm(h) / math.sqrt(d)

    g = rng.standard_normal(d)
    g /= np.linalg.norm(g)
    if cfg["final_norm"]:
        g = _ln_vjp(*_ln(h, eps), g)

    for l in range(L - 1, -1, -1):
        r = relu[l]
        i = redraw(l)
        delta = g if pre else _ln_vjp(*saved[l], g)  # gradient at the residual sum z
        n_delta = np.linalg.norm(delta)
        hidden_grad[l] = n_delta
        param_grad[l] = n_delta * np.linalg.norm(r)
        v = s2 * (delta @ Z2[i])  # W2ᵀ δ
        v[r <= 0.0] = 0.0  # ReLU mask (a1 > 0)
        w = s1 * (v @ Z1[i])  # W1ᵀ v
        if pre:
            g = g + _ln_vjp(*saved[l], w)
        else:
            g = alpha * delta + w
    return hidden_norm, hidden_grad, param_grad


def _exact_draws(seed: int, depth: int, width: int, beta: float = 1.0):
    """The random numbers of one exact-protocol seed, scaled: for checks on tiny stacks.

    Returns ``(h0, W1, W2, g)`` with ``W1`` of shape (depth, 4d, d), ``W2`` of shape
    (depth, d, 4d) (β-scaled, as used by the model) and the unit top gradient ``g``.
    Builds every matrix: meant for tests, not for large sizes.
    """
    d, k = width, HIDDEN_FACTOR * width
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal(d)
    W1 = np.empty((depth, k, d))
    W2 = np.empty((depth, d, k))
    for l in range(depth):
        W1[l] = rng.standard_normal((k, d)) * (beta / math.sqrt(d))
        W2[l] = rng.standard_normal((d, k)) * (beta / math.sqrt(k))
    g = rng.standard_normal(d)
    return h0, W1, W2, g / np.linalg.norm(g)


# ----------------------------------------------------------------------------- conditional sampler


def _branch_vjp_given_forward(u, u_sq, r_sq, f, delta, chi, zeta, beta):
    """Sample ``W1ᵀ(m ⊙ W2ᵀδ)`` given the block's forward pass, without the weights.

    Parameters: the branch input ``u`` and ``‖u‖²``; ``‖r‖²`` with ``r = ReLU(a1)``;
    the branch output ``f = W2 r``; the gradient ``δ`` at ``f``; ``chi ~ χ²_(n-1)`` with
    ``n`` the number of active units (0 when n <= 1); ``zeta``, d standard normals.

    ``v = m ⊙ W2ᵀδ`` lies in the active coordinates; its component along ``r`` is
    fixed by ``W2 r = f`` to ``(f·δ)/‖r‖``, the other ``n - 1`` are
    ``N(0, β²‖δ‖²/(4d))``, so ``‖v‖² = (f·δ)²/‖r‖² + β²‖δ‖²/(4d)·χ²_(n-1)``. Then
    ``a1·v = f·δ`` fixes ``W1ᵀv`` along ``u``, and the rest is ``P⊥u ζ`` with
    ``ζ ~ N(0, β²‖v‖²/d I)``.
    """
    d = u.size
    f_delta = np.dot(f, delta)
    v_sq = beta * beta * np.dot(delta, delta) / (HIDDEN_FACTOR * d) * chi
    if r_sq > 0.0:
        v_sq += f_delta * f_delta / r_sq
    zeta = zeta * (beta * math.sqrt(v_sq / d))
    if u_sq > 0.0:  # W1ᵀv = u (a1·v)/‖u‖² + P⊥u ζ
        return zeta + u * ((f_delta - np.dot(u, zeta)) / u_sq)
    return zeta



def _conditional_seed(rng: np.random.Generator, cfg: dict, scratch: dict):
    """One seed of the same model, sampled by Gaussian conditioning in O(d) per layer.

    Only d-vectors are stored: the residual stream (depth + 1, d) and the branch
    outputs f (depth, d); the 4d hidden layer enters through three scalars per layer,
    the number of active units, ‖ReLU(a1)‖² and a chi-square draw for the backward.
    """
    L, d, eps = cfg["depth"], cfg["width"], cfg["eps"]
    alpha, beta = cfg["alpha"], cfg["beta"]
    pre = cfg["placement"] == "pre"
    k = HIDDEN_FACTOR * d

    hidden_norm = np.empty(L)
    hidden_grad = np.empty(L)
    param_grad = np.empty(L)
    stream = np.empty((L + 1, d))  # h_0 ... h_L
    u_sq = np.empty(L)  # ‖u_l‖², u_l = the branch input
    rstd = np.empty(L)  # pre: LN(h_l)'s rstd; post/deepnorm: LN(z_l)'s rstd

    stream[0] = rng.standard_normal(d)
    n_active = rng.binomial(k, 0.5, size=L)  # units with a1 > 0
    chi_fwd = rng.gamma(n_active / 2.0, 2.0)  # Σ over active units of (a1 / scale)² ~ χ²_n
    branch = rng.standard_normal((L, d))  # becomes f = W2 ReLU(a1), row by row
    r_sq = np.empty(L)  # ‖ReLU(a1_l)‖²

    for l in range(L):
        h = stream[l]
        if pre:
            u, rstd[l] = _ln(h, eps)
        else:
            u = h
        u_sq[l] = np.dot(u, u)
        r_sq[l] = beta * beta * u_sq[l] / d * chi_fwd[l]  # a1 ~ N(0, β²‖u‖²/d I_4d)
        f = branch[l]
        f *= beta * math.sqrt(r_sq[l] / k)  # f ~ N(0, β²‖r‖²/(4d) I_d)
        if pre:
            np.add(h, f, out=stream[l + 1])
        else:
            stream[l + 1], rstd[l] = _ln(alpha * h + f, eps)
        hidden_norm[l] = np.linalg.norm(stream[l + 1]) / math.sqrt(d)

    g = rng.standard_normal(d)
    g /= np.linalg.norm(g)
    if cfg["final_norm"]:
        g = _ln_vjp(*_ln(stream[L], eps), g)
    chi_bwd = rng.gamma(np.maximum(n_active - 1, 0) / 2.0, 2.0)  # χ²_(n-1), 0 when n <= 1

    for l in range(L - 1, -1, -1):
        u = _ln(stream[l], eps)[0] if pre else stream[l]
        delta = g if pre else _ln_vjp(stream[l + 1], rstd[l], g)
        n_delta = np.linalg.norm(delta)
        hidden_grad[l] = n_delta
        param_grad[l] = n_delta * math.sqrt(r_sq[l])
        w = _branch_vjp_given_forward(u, u_sq[l], r_sq[l], branch[l], delta, chi_bwd[l], rng.standard_normal(d), beta)
        if pre:
            g = g + _ln_vjp(u, rstd[l], w)
        else:
            g = alpha * delta + w
    return hidden_norm, hidden_grad, param_grad


# ----------------------------------------------------------------------------- timing
# Measurements for benchmarks/bench_stack.py and for the chapter (quick versions).

#: The article's runs (C5.7): L = 64 for both placements, then L = 16, 64, 256 for each.
ARTICLE_RUNS = (("post", 64), ("pre", 64)) + tuple((p, L) for p in ("post", "pre") for L in (16, 64, 256))


@dataclass(frozen=True)
class ExactTiming:
    """Median wall times (s) of the exact protocol and of drawing its random numbers alone."""

    exact_s: float
    draws_s: float
    repeats: int

    @property
    def ratio(self) -> float:
        """``exact_s / draws_s``: what the model costs on top of the random numbers."""
        return self.exact_s / self.draws_s


@dataclass(frozen=True)
class ConditionalCost:
    """Wall time (median, s) and traced peak memory (bytes) of one conditional run."""

    depth: int
    width: int
    seconds: float
    peak_bytes: int


@dataclass(frozen=True)
class ExplicitCost:
    """What the exact (weight-drawing) method would need at a given size.

    ``seconds`` is extrapolated as ``seconds_per_weight · depth · 8 d²`` from runs at
    ``probe_widths``; ``weight_bytes = depth · 8 d² · 8`` is the float64 storage of
    the weights that its backward pass reuses.
    """

    depth: int
    width: int
    seconds: float
    weight_bytes: int
    seconds_per_weight: float
    probe_widths: tuple


def _draws_only(depth: int, width: int, seeds, scratch: dict) -> None:
    """The generator calls of the exact protocol, and nothing else."""
    buf = _draw_buffer(scratch, depth, width)
    for s in seeds:
        rng = np.random.default_rng(s)
        rng.standard_normal(width)
        for l in range(depth):
            rng.standard_normal(out=buf[l])
        rng.standard_normal(width)


def time_exact_vs_draws(runs=ARTICLE_RUNS, *, width: int = 128, n_seeds: int = 4, repeats: int = 3) -> ExactTiming:
    """Time the exact protocol on ``runs`` against drawing the same random numbers alone.

    Parameters
    ----------
    runs : sequence of (placement, depth)
        The stacks to simulate; default :data:`ARTICLE_RUNS`, the article's run set.
    width : int, keyword-only
        Model width ``d`` (>= 1).
    n_seeds : int, keyword-only
        Seeds per run (>= 1), as in :func:`simulate_stack`.
    repeats : int, keyword-only
        Timed repeats (>= 1); the medians are reported.

    Returns
    -------
    ExactTiming

    Notes
    -----
    Each repeat times the whole set of runs both ways (one after the other, so that
    machine noise hits both); the medians are returned. With the default, the
    article's full run set at d = 128 with 4 seeds, one repeat takes about 5 s per way.
    A measurement of one machine, never asserted on. Reported in the chapter
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    import time

    width = _check_count(width, "width")
    n_seeds = _check_count(n_seeds, "n_seeds")
    repeats = _check_count(repeats, "repeats")
    runs = tuple(runs)
    if not runs:
        raise ValueError("runs must contain at least one (placement, depth) pair; got none")
    for placement, depth in runs:
        _check_choice(placement, "placement", PLACEMENTS)
        _check_count(depth, "depth")

    exact, draws = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for placement, depth in runs:
            simulate_stack(placement, depth, width=width, n_seeds=n_seeds)
        t1 = time.perf_counter()
        scratch: dict = {}
        for _placement, depth in runs:
            _draws_only(depth, width, range(n_seeds), scratch)
            scratch.clear()
        t2 = time.perf_counter()
        exact.append(t1 - t0)
        draws.append(t2 - t1)
    return ExactTiming(float(np.median(exact)), float(np.median(draws)), repeats)


def measure_conditional(depth: int = 1000, width: int = 4096, *, placement: str = "pre", repeats: int = 3) -> ConditionalCost:
    """Median time of one conditional-sampler seed, and its peak traced memory (a separate run).

    Parameters
    ----------
    depth, width : int
        Size of the stack (each >= 1).
    placement : {"post", "pre", "deepnorm"}, keyword-only
    repeats : int, keyword-only
        Timed repeats (>= 1).

    Returns
    -------
    ConditionalCost

    Notes
    -----
    The conditional sampler needs O(depth · d) memory (no weight matrix is formed), so
    the traced peak grows like ``depth · d · 8`` bytes. A measurement, never asserted
    on. Reported in the chapter "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    import time
    import tracemalloc

    depth = _check_count(depth, "depth")
    width = _check_count(width, "width")
    placement = _check_choice(placement, "placement", PLACEMENTS)
    repeats = _check_count(repeats, "repeats")

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        simulate_stack(placement, depth, width=width, n_seeds=1, method="conditional")
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    try:
        simulate_stack(placement, depth, width=width, n_seeds=1, method="conditional")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return ConditionalCost(depth, width, float(np.median(times)), int(peak))


def explicit_cost(depth: int = 1000, width: int = 4096, *, probe_widths=(256, 512), probe_depth: int = 4,
                  repeats: int = 3) -> ExplicitCost:
    """Extrapolate the exact method's time to ``depth x width`` from small runs; weight memory exactly.

    Parameters
    ----------
    depth, width : int
        The size to extrapolate to (each >= 1).
    probe_widths : sequence of int, keyword-only
        Widths actually run (non-empty); the last one sets the cost per weight.
    probe_depth : int, keyword-only
        Depth of the probe runs (>= 1).
    repeats : int, keyword-only
        Timed repeats per probe (>= 1).

    Returns
    -------
    ExplicitCost

    Notes
    -----
    The exact method draws :math:`8 d^2` normals per layer and does four matrix-vector
    products over them, so its time is proportional to :math:`L \\cdot d^2`; the cost per
    weight is taken from the last probe width (median of ``repeats``), and the weights
    take :math:`8 L d^2 \\cdot 8` bytes. Reported in the chapter "Pre-Norm vs Post-Norm"
    (``book/pre-vs-post.md``).
    """
    import time

    depth = _check_count(depth, "depth")
    width = _check_count(width, "width")
    probe_depth = _check_count(probe_depth, "probe_depth")
    repeats = _check_count(repeats, "repeats")
    probe_widths = tuple(_check_count(d, "each probe width") for d in probe_widths)
    if not probe_widths:
        raise ValueError("probe_widths must name at least one width to run; got none")

    per_weight = []
    for d in probe_widths:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            simulate_stack("pre", probe_depth, width=d, n_seeds=1)
            times.append(time.perf_counter() - t0)
        per_weight.append(float(np.median(times)) / (probe_depth * 2 * HIDDEN_FACTOR * d * d))
    n_weights = depth * 2 * HIDDEN_FACTOR * width * width
    return ExplicitCost(depth, width, per_weight[-1] * n_weights, n_weights * 8, per_weight[-1], tuple(probe_widths))
