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
import mmap
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
    normalized to unit length). The backward pass needs the weights again: ``8d²``
    float64 per layer (268 MB at L = 256, d = 128) are kept, in ordinary pages (see
    ``_small_page_array``), and the buffer is reused by later calls (up to
    ``EXACT_KEEP_LIMIT``). Above ``EXACT_STORE_LIMIT`` (2 GiB)
    each layer's weights are redrawn in the backward pass from the generator state
    saved in the forward pass (the same numbers, about twice the drawing time). The
    floor is the time of drawing the numbers; ``benchmarks/bench_stack.py`` measures
    the ratio to it.

    Conditional sampler: at initialization a block's weights appear nowhere else and
    are independent of its input, so given the forward pass they are Gaussian
    conditioned on ``W1 u = a1`` and ``W2 r = f`` (``r = ReLU(a1)``, ``f = W2 r``),
    independently across layers. With ``n`` = the number of active units, forward
    needs only ``n ~ Binomial(4d, 1/2)``, ``‖r‖² = β²‖u‖²/d · χ²_n`` and
    ``f = β‖r‖/sqrt(4d) · N(0, I_d)``. Backward, ``v = m ⊙ W2ᵀδ`` has the component
    ``(f·δ)/‖r‖`` along ``r`` and ``N(0, β²‖δ‖²/(4d))`` noise in the other ``n − 1``
    active directions, so ``‖v‖² = (f·δ)²/‖r‖² + β²‖δ‖²/(4d) · χ²_(n−1)``; and
    ``W1ᵀv = u (f·δ)/‖u‖² + P⊥u ζ`` with ``ζ ~ N(0, β²‖v‖²/d · I_d)`` (``a1·v = f·δ``).
    No 4d-vector and no matrix is ever formed. Seed ``s`` draws from its own
    ``default_rng(s)``, in this order: ``h`` (d), the counts ``n`` (depth), the forward
    χ²'s (depth), the branch normals (depth x d), the top gradient (d), the backward
    χ²'s (depth), and d normals per layer backward, top layer first. The arithmetic
    runs on groups of seeds at once (vectorized over seeds, one layer at a time), and
    a seed's numbers do not depend on the other seeds. Memory: the residual stream,
    ``(depth + 1) · d`` float64 per seed, with groups kept under
    ``CONDITIONAL_STREAM_BUDGET``. Derived in the chapter "Pre-Norm vs Post-Norm"
    (``book/pre-vs-post.md``).

    Examples
    --------
    >>> from normlib import simulate_stack
    >>> res = simulate_stack("post", 64)
    >>> f"{res.ratio:.3f}"
    '0.715'
    """
    cfg = _validate(placement, depth, width, n_seeds, final_norm, method, seeds, eps, alpha, beta)
    L, d = cfg["depth"], cfg["width"]
    seed_list = cfg["seeds"]
    hn = np.empty((len(seed_list), L))
    hg = np.empty((len(seed_list), L))
    pg = np.empty((len(seed_list), L))
    if cfg["method"] == "exact":
        k = HIDDEN_FACTOR * d
        fits = L * 2 * k * d * 8 <= EXACT_STORE_LIMIT
        store = _take_store(L * 2 * k * d if fits else 2 * k * d)
        try:
            for i, s in enumerate(seed_list):
                hn[i], hg[i], pg[i] = _exact_seed(np.random.default_rng(s), cfg, store, fits)
        finally:
            _return_store(store)
    else:
        # seeds per group: the streams fit the memory budget, and one layer's (seeds, d)
        # arrays stay small enough for the cache (larger groups run slower per seed)
        group = max(1, min(CONDITIONAL_STREAM_BUDGET // ((L + 1) * d * 8), _GROUP_ELEMENTS // d))
        for i in range(0, len(seed_list), group):
            part = slice(i, i + group)
            hn[part], hg[part], pg[part] = _conditional_seeds(seed_list[part], cfg)
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
    """LayerNorm with unit gain of one vector: ``(x_hat, rstd)``; two-pass variance, eps inside the root."""
    xc = x - np.add.reduce(x) / x.size
    var = np.dot(xc, xc) / x.size
    if not (var + eps > 0.0 and math.isfinite(var)):  # eps = 0 and a constant vector, or an overflow
        _ln_stats(x[None, :], eps)  # raises with the library's message
    rstd = 1.0 / math.sqrt(var + eps)
    return xc * rstd, rstd


# ----------------------------------------------------------------------------- exact protocol


#: Above this many bytes of weights (counted as ``depth · 8d²`` float64, the most the
#: backward pass can need) the exact method stops storing them and redraws each layer's
#: weights in the backward pass from the generator state saved in the forward pass:
#: the same numbers, about twice the drawing time, O(d²) memory.
EXACT_STORE_LIMIT = 2 * 1024**3

#: The exact method keeps its weight store between calls when it is at most this many
#: bytes, so that repeated runs in one process reuse memory that is already mapped
#: (a fresh buffer costs a page fault per page on first touch). Larger stores are freed.
EXACT_KEEP_LIMIT = 512 * 1024**2

_KEPT: dict = {}  # the kept weight store, taken out while a call uses it (see _take_store)


def _take_store(n: int) -> np.ndarray:
    """A float64 array of at least ``n`` elements for the weights, reusing the kept one."""
    buf = _KEPT.pop("store", None)  # atomic: a concurrent call simply allocates its own
    if buf is None or buf.size < n:
        buf = _small_page_array(n)
    return buf


def _small_page_array(n: int) -> np.ndarray:
    """An uninitialized float64 array of ``n`` elements in ordinary (4 KiB) pages.

    numpy asks the kernel for transparent huge pages on large arrays; where the kernel
    then compacts memory on the first touch of each 2 MiB page, a fresh process pays
    about three times as long to fill a large store once (measured by
    ``benchmarks/bench_stack.py``). The store is written once and read once, so huge
    pages buy nothing here: map it anonymously and decline them.
    """
    nbytes = max(8 * n, mmap.PAGESIZE)
    m = mmap.mmap(-1, nbytes)
    if hasattr(m, "madvise") and hasattr(mmap, "MADV_NOHUGEPAGE"):
        m.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(m, dtype=np.float64, count=n)


def _return_store(buf: np.ndarray) -> None:
    if buf.nbytes <= EXACT_KEEP_LIMIT:
        _KEPT["store"] = buf


def _exact_seed(rng: np.random.Generator, cfg: dict, store: np.ndarray, keep: bool):
    """One seed of the article's protocol; returns (hidden_norm, hidden_grad, param_grad).

    Per layer the generator fills Z1 (4d x d) and then Z2 (d x 4d) with standard
    normals (one call of 8d² numbers: the same numbers as two calls, in the article's
    order). When ``keep`` (``store`` has room for every layer) the layers are drawn
    straight into ``store`` and the backward pass reads them back. Otherwise each
    layer is drawn into a one-layer scratch and redrawn backward from the generator
    state saved forward.
    """
    L, d, eps = cfg["depth"], cfg["width"], cfg["eps"]
    alpha, beta = cfg["alpha"], cfg["beta"]
    pre = cfg["placement"] == "pre"
    k = HIDDEN_FACTOR * d
    n = 2 * k * d  # normals per layer
    s1, s2 = beta / math.sqrt(d), beta / math.sqrt(k)  # W1 = s1 Z1, W2 = s2 Z2

    def weights(l):  # layer l's (Z1, Z2) as views of the store or the scratch
        block = store[l * n : (l + 1) * n] if keep else store[:n]
        return block[: k * d].reshape(k, d), block[k * d :].reshape(d, k)

    states = []  # generator states before each layer's draw (when not keeping)
    inactive = [None] * L  # the units with a1 <= 0 (the ReLU mask zeroes their gradient)
    hidden_norm = np.empty(L)
    hidden_grad = np.empty(L)
    param_grad = np.empty(L)
    relu_norm = np.empty(L)  # ‖ReLU(a1)‖ per layer
    saved = [None] * L  # pre: (x_hat, rstd) of the stream before the block; post: of z

    h = rng.standard_normal(d)
    for l in range(L):
        if not keep:
            states.append(rng.bit_generator.state)
        rng.standard_normal(out=store[l * n : (l + 1) * n] if keep else store[:n])
        Z1, Z2 = weights(l)
        if pre:
            u, rs = _ln(h, eps)
            saved[l] = (u, rs)
        else:
            u = h
        a1 = s1 * (Z1 @ u)
        inactive[l] = a1 <= 0.0
        r = np.maximum(a1, 0.0)
        relu_norm[l] = math.sqrt(np.dot(r, r))
        f = s2 * (Z2 @ r)
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
        if not keep:  # the same numbers again, from the saved generator state
            gen = np.random.Generator(type(rng.bit_generator)())
            gen.bit_generator.state = states[l]
            gen.standard_normal(out=store[:n])
        Z1, Z2 = weights(l)
        delta = g if pre else _ln_vjp(*saved[l], g)  # gradient at the residual sum z
        n_delta = np.linalg.norm(delta)
        hidden_grad[l] = n_delta
        param_grad[l] = n_delta * relu_norm[l]
        v = delta @ Z2  # W2ᵀ δ (without s2), zeroed where the ReLU was off
        v[inactive[l]] = 0.0
        w = (s1 * s2) * (v @ Z1)  # W1ᵀ v
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


#: Memory budget (bytes) for the residual streams the conditional sampler keeps for its
#: backward pass; seeds are processed in groups that fit (at least one seed per group).
CONDITIONAL_STREAM_BUDGET = 256 * 1024**2
_BLOCK = 512  # layers of random numbers drawn per generator call in the conditional sampler
_GROUP_ELEMENTS = 16384  # at most this many entries (128 KB) per (seeds, d) array of a group


def _ln_rows(x: np.ndarray, eps: float, out: np.ndarray | None = None):
    """LayerNorm over the last axis of a (seeds, d) array: ``(x_hat, rstd, mean, var)``, the last three (seeds,).

    Two-pass variance, eps inside the root; ``x_hat`` is written into ``out`` when given
    (which may be ``x`` itself). The caller checks its results for non-finite values
    once, at the end.
    """
    d = x.shape[-1]
    mean = np.add.reduce(x, axis=-1) / d
    xc = np.subtract(x, mean[:, None], out=out)
    var = np.add.reduce(xc * xc, axis=-1) / d
    if eps == 0.0 and not np.all(var > 0.0):
        raise ValueError("a row of the residual stream has zero variance and eps=0: LayerNorm divides by zero; pass eps > 0")
    rstd = 1.0 / np.sqrt(var + eps)
    xc *= rstd[:, None]
    return xc, rstd, mean, var


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of two (seeds, d) arrays; each row is summed on its own."""
    return np.add.reduce(a * b, axis=-1)


def _draw_rows(gens, n_rows: int, d: int) -> np.ndarray:
    """The next ``n_rows`` rows of d standard normals from every generator: shape (n_rows, seeds, d)."""
    out = np.empty((len(gens), n_rows, d))
    for j, gen in enumerate(gens):
        gen.standard_normal(out=out[j])  # the same numbers as one long draw, row by row
    return np.ascontiguousarray(out.transpose(1, 0, 2))


def _conditional_seeds(seeds, cfg: dict):
    """The conditional sampler for a group of seeds at once; returns three (seeds, depth) arrays.

    Every seed has its own generator and draws, in this order: ``h0`` (d normals), the
    active-unit counts (depth binomials), the forward chi-squares (depth), the branch
    normals (depth x d), the top gradient (d), the backward chi-squares (depth), and
    the backward normals (depth x d, top layer first). The arithmetic runs on all
    seeds of the group together, one layer at a time; each seed's row depends only on
    its own generator.
    """
    L, d, eps = cfg["depth"], cfg["width"], cfg["eps"]
    alpha, beta = cfg["alpha"], cfg["beta"]
    pre = cfg["placement"] == "pre"
    k = HIDDEN_FACTOR * d
    S = len(seeds)
    gens = [np.random.default_rng(s) for s in seeds]

    hidden_norm = np.empty((S, L))
    hidden_grad = np.empty((S, L))
    param_grad = np.empty((S, L))
    stream = np.empty((L + 1, S, d))  # h_0 ... h_L
    u_sq = np.empty((L, S))  # ‖u_l‖², u_l the branch input
    r_sq = np.empty((L, S))  # ‖ReLU(a1_l)‖²
    rstd = np.empty((L, S))  # rstd of the LayerNorm: pre, of h_l; post/deepnorm, of z_l
    mean = np.empty((L, S))  # and its mean

    n_active = np.empty((L, S))
    chi_fwd = np.empty((L, S))
    for j, gen in enumerate(gens):
        stream[0, j] = gen.standard_normal(d)
        n_active[:, j] = gen.binomial(k, 0.5, size=L)  # units with a1 > 0
        chi_fwd[:, j] = gen.gamma(n_active[:, j] / 2.0, 2.0)  # Σ (a1/scale)² over them ~ χ²_n

    for l0 in range(0, L, _BLOCK):
        noise = _draw_rows(gens, min(_BLOCK, L - l0), d)  # become f = W2 ReLU(a1)
        for j in range(len(noise)):
            l = l0 + j
            h = stream[l]
            if pre:
                u, rstd[l], mean[l], _ = _ln_rows(h, eps)
            else:
                u = h
            u_sq[l] = _rowdot(u, u)
            r_sq[l] = beta * beta * u_sq[l] / d * chi_fwd[l]  # a1 ~ N(0, β²‖u‖²/d I_4d)
            f = noise[j]
            f *= (beta * np.sqrt(r_sq[l] / k))[:, None]  # f ~ N(0, β²‖r‖²/(4d) I_d)
            if pre:
                np.add(h, f, out=stream[l + 1])
                hidden_norm[:, l] = np.sqrt(_rowdot(stream[l + 1], stream[l + 1]) / d)
            else:
                f += h if alpha == 1.0 else alpha * h  # z = α h + f
                _, rstd[l], mean[l], var = _ln_rows(f, eps, out=stream[l + 1])
                hidden_norm[:, l] = np.sqrt(var) * rstd[l]  # ‖LN(z)‖/√d = sqrt(var/(var + ε))

    g = np.empty((S, d))
    chi_bwd = np.empty((L, S))
    for j, gen in enumerate(gens):
        g[j] = gen.standard_normal(d)
        g[j] /= np.linalg.norm(g[j])
        chi_bwd[:, j] = gen.gamma(np.maximum(n_active[:, j] - 1, 0) / 2.0, 2.0)  # χ²_(n−1), 0 when n <= 1
    if cfg["final_norm"]:
        x_hat, rs, _, _ = _ln_rows(stream[L], eps)
        g = _ln_vjp(x_hat, rs[:, None], g)

    for top in range(L, 0, -_BLOCK):
        noise = _draw_rows(gens, min(_BLOCK, top), d)  # zeta, top layer first
        for j in range(len(noise)):
            l = top - 1 - j
            if pre:
                u = (stream[l] - mean[l][:, None]) * rstd[l][:, None]  # LN(h_l), as forward
                delta = g
                f_delta = _rowdot(stream[l + 1] - stream[l], delta)  # f = h_(l+1) − h_l
            else:
                u = stream[l]
                delta = _ln_vjp(stream[l + 1], rstd[l][:, None], g)
                # f = z − α h with z = x_hat/rstd + mean, and Σ δ = 0
                f_delta = _rowdot(stream[l + 1], delta) / rstd[l] - alpha * _rowdot(u, delta)
            dd = _rowdot(delta, delta)
            hidden_grad[:, l] = np.sqrt(dd)
            param_grad[:, l] = hidden_grad[:, l] * np.sqrt(r_sq[l])
            w = _branch_vjp_rows(u, u_sq[l], r_sq[l], f_delta, dd, chi_bwd[l], noise[j], beta)
            if pre:
                g = g + _ln_vjp(u, rstd[l][:, None], w)
            else:
                g = alpha * delta + w
    if not (np.isfinite(hidden_norm).all() and np.isfinite(hidden_grad).all() and np.isfinite(param_grad).all()):
        raise ValueError("the conditional sampler produced a non-finite value: the stream or gradient overflowed float64")
    return hidden_norm, hidden_grad, param_grad


def _branch_vjp_rows(u, u_sq, r_sq, f_delta, delta_sq, chi, zeta, beta):
    """Sample ``W1ᵀ(m ⊙ W2ᵀδ)`` given each block's forward pass, for a (seeds, d) group of rows.

    Per row: the branch input ``u`` and ``‖u‖²``; ``‖r‖²`` with ``r = ReLU(a1)``;
    ``f·δ`` with ``f = W2 r`` the branch output and ``δ`` the gradient at ``f``; ``‖δ‖²``;
    ``chi ~ χ²_(n-1)`` with ``n`` the number of active units (0 when n <= 1); ``zeta``,
    d standard normals.

    ``v = m ⊙ W2ᵀδ`` lies in the active coordinates; its component along ``r`` is
    fixed by ``W2 r = f`` to ``(f·δ)/‖r‖``, the other ``n - 1`` are
    ``N(0, β²‖δ‖²/(4d))``, so ``‖v‖² = (f·δ)²/‖r‖² + β²‖δ‖²/(4d)·χ²_(n-1)``. Then
    ``a1·v = f·δ`` fixes ``W1ᵀv`` along ``u``, and the rest is ``P⊥u ζ`` with
    ``ζ ~ N(0, β²‖v‖²/d I)``.
    """
    d = u.shape[-1]
    v_sq = (beta * beta / (HIDDEN_FACTOR * d)) * delta_sq * chi
    if np.all(r_sq > 0.0):
        v_sq += f_delta * f_delta / r_sq
    else:  # no active unit (tiny widths): r = 0 and f = 0
        v_sq += f_delta * f_delta / np.where(r_sq > 0.0, r_sq, np.inf)
    zeta = zeta * (beta * np.sqrt(v_sq / d))[:, None]
    if np.all(u_sq > 0.0):
        along_u = (f_delta - _rowdot(u, zeta)) / u_sq
    else:  # u = 0 (width 1): W1ᵀv = ζ
        along_u = np.where(u_sq > 0.0, f_delta - _rowdot(u, zeta), 0.0) / np.where(u_sq > 0.0, u_sq, 1.0)
    return zeta + u * along_u[:, None]
