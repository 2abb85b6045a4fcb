"""Small multilayer perceptrons in numpy: a deep-stack probe and the digits benchmark.

Two things the chapter "Why normalize" (``book/why-normalize.md``) needs:

:func:`deep_stack_profile`
    A plain deep ReLU stack at initialization, with or without LayerNorm: the size of
    the activations going up and of the gradient coming down, layer by layer.
:func:`train_mlp`
    A two-hidden-layer MLP trained with SGD on scikit-learn's bundled ``digits`` data
    (:func:`load_digits_split`), with BatchNorm, LayerNorm, RMSNorm or no
    normalization. Many independent models (seeds × learning rates) are trained at
    once as one batched computation, so that a run at batch size 2 costs about what a
    single model would.

Every layer is ``Linear -> norm -> ReLU``; the backward pass is written out (the
LayerNorm kernel is normlib's own, and BatchNorm is the same kernel applied along the
batch axis instead of the feature axis) and is tested against PyTorch autograd.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ._validate import check_choice, check_eps, check_int, check_positive_real
from .norms import _ln_stats, _ln_vjp_from_stats, _rms_stats

__all__ = [
    "NORMS",
    "StackProfile",
    "deep_stack_profile",
    "DigitsSplit",
    "load_digits_split",
    "MLP",
    "MLPRun",
    "init_mlp",
    "mlp_logits",
    "train_mlp",
    "chosen_lr",
    "select_models",
    "correct_on_test",
    "pre_norm_rows",
    "serve",
]

#: The normalizations the MLP can use between each hidden Linear and its ReLU.
NORMS = ("none", "batchnorm", "layernorm", "rmsnorm")


def _one_blas_thread():
    """Run BLAS single-threaded: these matrices are tiny, and on a loaded machine a
    multi-threaded BLAS spends far more time waking threads than multiplying (measured
    15x slower on 2 shared cores). Uses threadpoolctl (a scikit-learn dependency) when present."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


# ----------------------------------------------------------------------------- deep stack


@dataclass(frozen=True, eq=False)
class StackProfile:
    """Output of :func:`deep_stack_profile`.

    Attributes
    ----------
    act_rms : ndarray, shape (depth + 1,)
        Root mean square of the activations ``h_l`` over samples and units; entry 0 is
        the input.
    grad_rms : ndarray, shape (depth + 1,)
        Root mean square of ``dL/dh_l`` over samples and units (entry ``depth`` is the
        unit-variance gradient that starts the backward pass).
    weight_grad : ndarray, shape (depth,)
        Frobenius norm of ``dL/dW_l`` for layers 1..depth.
    """

    act_rms: np.ndarray
    grad_rms: np.ndarray
    weight_grad: np.ndarray


def deep_stack_profile(
    depth: int,
    *,
    width: int = 256,
    gain: float = 1.0,
    norm: str = "none",
    n_samples: int = 64,
    rng=None,
    eps: float = 1e-5,
) -> StackProfile:
    """Activation and gradient sizes through a deep ReLU stack at initialization.

    Parameters
    ----------
    depth : int
        Number of layers ``L`` (>= 1).
    width : int, keyword-only
        Units per layer ``n`` (>= 2).
    gain : float, keyword-only
        Weight scale relative to He initialization: ``W_l`` has i.i.d. entries
        ``N(0, gain² · 2/n)``. ``gain = 1`` is He et al.'s choice for ReLU;
        ``gain = 1/sqrt(2)`` is the variance ``1/n`` (LeCun, and Glorot for equal fan-in
        and fan-out).
    norm : {"none", "layernorm"}, keyword-only
        ``h_l = ReLU(W_l h_{l-1})`` or ``h_l = ReLU(LN(W_l h_{l-1}))`` (unit gain, zero bias).
    n_samples : int, keyword-only
        Inputs ``h_0 ~ N(0, I)`` pushed through together (>= 1).
    rng : numpy.random.Generator or int or None, keyword-only
        Source of the weights, the inputs and the starting gradient.
    eps : float, keyword-only
        LayerNorm's ε (added to the variance inside the square root).

    Returns
    -------
    StackProfile

    Notes
    -----
    The loss is ``L = Σ v ⊙ h_L`` with ``v ~ N(0, I)``, so the backward pass starts from a
    unit-variance gradient. Without normalization, with ``σ_w² = 2 gain²/n``,

    .. math::

        \\mathbb E\\,h_{l}^2 = \\mathrm{gain}^{2}\\,\\mathbb E\\,h_{l-1}^2, \\qquad
        \\mathbb E\\,(\\partial L/\\partial h_{l-1})^2 \\approx \\mathrm{gain}^{2}\\,
        \\mathbb E\\,(\\partial L/\\partial h_{l})^2 ,

    (the first exactly, the second up to the correlation of the ReLU mask with the
    gradient), so both scales move by ``gain`` per layer. With LayerNorm the forward
    scale is reset at every layer and the gain cancels in the backward pass. See the
    chapter "Why normalize" (``book/why-normalize.md``).
    """
    L = check_int(depth, "depth", 1)
    n = check_int(width, "width", 2)
    g = check_positive_real(gain, "gain")
    check_choice(norm, "norm", ("none", "layernorm"))
    m = check_int(n_samples, "n_samples", 1)
    eps = check_eps(eps)
    gen = np.random.default_rng(rng)
    std = g * np.sqrt(2.0 / n)
    with _one_blas_thread():
        return _deep_stack(gen, L, n, std, norm, m, eps)


def _deep_stack(gen, L, n, std, norm, m, eps) -> StackProfile:
    h = gen.standard_normal((m, n))
    acts, saved = [h], []
    for _ in range(L):
        W = std * gen.standard_normal((n, n))
        z = h @ W  # (m, n)
        if norm == "layernorm":
            _, rstd, z_hat = _ln_stats(z, eps)
            saved.append((W, rstd, z_hat, z_hat > 0))
            h = np.maximum(z_hat, 0.0)
        else:
            saved.append((W, None, None, z > 0))
            h = np.maximum(z, 0.0)
        acts.append(h)
    delta = gen.standard_normal((m, n))  # dL/dh_L
    grads = [delta]
    wgrad = np.empty(L)
    for layer in range(L - 1, -1, -1):
        W, rstd, z_hat, mask = saved[layer]
        dz = delta * mask  # through the ReLU
        if norm == "layernorm":
            dz = _ln_vjp_from_stats(z_hat, rstd, dz)
        wgrad[layer] = np.linalg.norm(acts[layer].T @ dz)
        delta = dz @ W.T
        grads.append(delta)
    rms = lambda a: float(np.sqrt(np.mean(a * a)))  # noqa: E731
    return StackProfile(
        act_rms=np.array([rms(a) for a in acts]),
        grad_rms=np.array([rms(d) for d in reversed(grads)]),
        weight_grad=wgrad,
    )


# ----------------------------------------------------------------------------- data


@dataclass(frozen=True, eq=False)
class DigitsSplit:
    """A fixed train/validation/test split of scikit-learn's ``digits`` (8×8 images, 10 classes).

    Attributes
    ----------
    x_train, x_val, x_test : ndarray, float64, shape (n, 64)
        Pixels standardized with the training set's per-pixel mean and standard
        deviation (pixels that are constant in the training set are only centred).
    y_train, y_val, y_test : ndarray, int64, shape (n,)
        Labels 0..9.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits_split(*, n_train: int = 1000, n_val: int = 297, seed: int = 0) -> DigitsSplit:
    """Load ``sklearn.datasets.load_digits`` (bundled, no download) and split it.

    Parameters
    ----------
    n_train, n_val : int, keyword-only
        Sizes of the training and validation sets; the rest of the 1797 images is the
        test set (at least 100 images must remain).
    seed : int, keyword-only
        Seed of the permutation that assigns images to the three sets.

    Returns
    -------
    DigitsSplit

    Notes
    -----
    Used for the small-batch benchmark of the chapter "Why normalize"
    (``book/why-normalize.md``). scikit-learn is imported inside this function.
    """
    from sklearn.datasets import load_digits

    data = load_digits()
    x, y = data.data.astype(np.float64), data.target.astype(np.int64)
    n_tr = check_int(n_train, "n_train", 10)
    n_va = check_int(n_val, "n_val", 1)
    if n_tr + n_va > len(y) - 100:
        raise ValueError(f"n_train + n_val must leave at least 100 of {len(y)} images for the test set")
    perm = np.random.default_rng(check_int(seed, "seed", 0)).permutation(len(y))
    tr, va, te = perm[:n_tr], perm[n_tr : n_tr + n_va], perm[n_tr + n_va :]
    mean, std = x[tr].mean(axis=0), x[tr].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z = (x - mean) / std
    return DigitsSplit(z[tr], y[tr], z[va], y[va], z[te], y[te])


# ----------------------------------------------------------------------------- the model


@dataclass(frozen=True, eq=False)
class MLP:
    """The parameters of ``M`` independent MLPs of the same shape, stacked on a leading axis.

    Attributes
    ----------
    norm : str
        One of :data:`NORMS`.
    weights, biases : tuple of ndarray
        Per Linear layer: ``(M, fan_in, fan_out)`` and ``(M, fan_out)``.
    gains, shifts : tuple of ndarray
        Per hidden layer ``(M, width)``: the norm's gain γ and shift β (``shifts`` is
        empty for RMSNorm, both are empty without normalization).
    running_mean, running_var : tuple of ndarray
        BatchNorm's running statistics per hidden layer, ``(M, width)`` (empty otherwise).
    """

    norm: str
    weights: tuple
    biases: tuple
    gains: tuple
    shifts: tuple
    running_mean: tuple
    running_var: tuple

    @property
    def n_models(self) -> int:
        return self.weights[0].shape[0]


def init_mlp(norm: str, sizes, seeds) -> MLP:
    """He-initialized MLPs, one per seed.

    Parameters
    ----------
    norm : str
        One of :data:`NORMS`.
    sizes : sequence of int
        Layer widths, input first and classes last, e.g. ``(64, 128, 128, 10)``.
    seeds : sequence of int
        One seed per model (repeats give identical models); seed ``s`` draws the
        weights of Linear layer ``l`` from ``numpy.random.default_rng([s, 0, l])``.

    Returns
    -------
    MLP
        ``len(seeds)`` models; hidden weights ``N(0, 2/fan_in)``, the output
        layer ``N(0, 1/fan_in)``, biases 0, gains 1, shifts 0, running mean 0 and
        running variance 1 (PyTorch's defaults).

    Notes
    -----
    See the chapter "Why normalize" (``book/why-normalize.md``).
    """
    check_choice(norm, "norm", NORMS)
    sizes = tuple(check_int(s, "layer width", 1) for s in sizes)
    if len(sizes) < 2:
        raise ValueError(f"sizes needs at least an input and an output width; got {sizes}")
    seeds = [check_int(s, "seed", 0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must not be empty")
    weights, biases = [], []
    for layer, (fi, fo) in enumerate(zip(sizes[:-1], sizes[1:])):
        scale = np.sqrt((1.0 if layer == len(sizes) - 2 else 2.0) / fi)
        w = np.stack([scale * np.random.default_rng([s, 0, layer]).standard_normal((fi, fo)) for s in seeds])
        weights.append(w)
        biases.append(np.zeros((len(seeds), fo)))
    M, hidden = len(seeds), sizes[1:-1]
    ones = tuple(np.ones((M, h)) for h in hidden)
    zeros = tuple(np.zeros((M, h)) for h in hidden)
    return MLP(
        norm=norm,
        weights=tuple(weights),
        biases=tuple(biases),
        gains=ones if norm != "none" else (),
        shifts=tuple(z.copy() for z in zeros) if norm in ("batchnorm", "layernorm") else (),
        running_mean=tuple(z.copy() for z in zeros) if norm == "batchnorm" else (),
        running_var=tuple(o.copy() for o in ones) if norm == "batchnorm" else (),
    )


def _norm_forward(norm, z, layer, model, stats, eps):
    """z (M, B, h) -> (normalized u, cache for backward, batch mean, batch var)."""
    if norm == "layernorm":
        _, rstd, z_hat = _ln_stats(z, eps)
        return z_hat * model.gains[layer][:, None, :] + model.shifts[layer][:, None, :], (rstd, z_hat), None, None
    if norm == "rmsnorm":
        rrms, z_hat = _rms_stats(z, eps)
        return z_hat * model.gains[layer][:, None, :], (rrms, z_hat), None, None
    # batchnorm: statistics over the batch axis (axis 1)
    if stats == "batch":
        zt = z.swapaxes(1, 2)  # (M, h, B): the batch is now the last axis
        mean, rstd, zt_hat = _ln_stats(zt, eps)
        z_hat = zt_hat.swapaxes(1, 2)
        var = 1.0 / rstd[..., 0] ** 2 - eps  # (M, h), biased batch variance
        cache = (rstd, zt_hat)
        bmean = mean[..., 0]
    else:
        rm, rv = model.running_mean[layer], model.running_var[layer]
        z_hat = (z - rm[:, None, :]) / np.sqrt(rv[:, None, :] + eps)
        cache, bmean, var = None, None, None
    return z_hat * model.gains[layer][:, None, :] + model.shifts[layer][:, None, :], cache, bmean, var


def _forward(model: MLP, x: np.ndarray, stats: str, eps: float, keep: bool):
    """Logits (M, B, C) and, if keep, everything the backward pass needs."""
    h, caches, batch_stats = x, [], []
    n_hidden = len(model.weights) - 1
    for layer in range(n_hidden):
        z = h @ model.weights[layer] + model.biases[layer][:, None, :]
        if model.norm == "none":
            u, cache = z, None
        else:
            u, cache, bmean, bvar = _norm_forward(model.norm, z, layer, model, stats, eps)
            batch_stats.append((bmean, bvar))
        hn = np.maximum(u, 0.0)
        if keep:
            caches.append((h, cache, u > 0))
        h = hn
    logits = h @ model.weights[-1] + model.biases[-1][:, None, :]
    return logits, (caches, h), batch_stats


def mlp_logits(model: MLP, x, *, stats: str = "running", batch_size: int | None = None, eps: float = 1e-5) -> np.ndarray:
    """Logits of every model on inputs ``x``.

    Parameters
    ----------
    model : MLP
        The models (from :func:`init_mlp` or :func:`train_mlp`).
    x : array_like, shape (n, d_in) or (M, n, d_in)
        Inputs, shared by all models or one set per model.
    stats : {"running", "batch"}, keyword-only
        BatchNorm only: normalize with the running statistics (evaluation mode) or with
        the statistics of consecutive batches of ``batch_size`` inputs (training mode).
        Ignored by the other norms, which have no mode.
    batch_size : int, optional, keyword-only
        Batch size for ``stats="batch"`` (the last batch holds the remainder; a
        remainder of one input is refused).
    eps : float, keyword-only
        The norms' ε.

    Returns
    -------
    ndarray, shape (M, n, n_classes)

    Notes
    -----
    See the chapter "Why normalize" (``book/why-normalize.md``), where the two modes
    of BatchNorm are compared on the same test set.
    """
    eps = check_eps(eps)
    check_choice(stats, "stats", ("running", "batch"))
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 2:
        a = np.broadcast_to(a, (model.n_models, *a.shape))
    if a.ndim != 3 or a.shape[0] != model.n_models or a.shape[-1] != model.weights[0].shape[1]:
        raise ValueError(
            f"x must have shape (n, {model.weights[0].shape[1]}) or ({model.n_models}, n, "
            f"{model.weights[0].shape[1]}); got {np.shape(x)}"
        )
    if model.norm != "batchnorm" or stats == "running":
        with _one_blas_thread():
            return _forward(model, a, "running", eps, keep=False)[0]
    if batch_size is None:
        raise ValueError("stats='batch' needs batch_size")
    bs = check_int(batch_size, "batch_size", 2)
    n = a.shape[1]
    if n % bs == 1:
        raise ValueError(f"{n} inputs in batches of {bs} leave a last batch of one input, which BatchNorm cannot normalize")
    with _one_blas_thread():
        chunks = [_forward(model, a[:, i : i + bs], "batch", eps, keep=False)[0] for i in range(0, n, bs)]
    return np.concatenate(chunks, axis=1)


def _loss_and_grads(model: MLP, x, y, eps):
    """Mean cross-entropy of each model on its batch, and the gradient of each model's loss."""
    logits, (caches, h_last), batch_stats = _forward(model, x, "batch", eps, keep=True)
    M, B, _ = logits.shape
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    onehot_idx = (np.arange(M)[:, None], np.arange(B)[None, :], y)
    loss = -logp[onehot_idx].mean(axis=1)  # (M,)
    dlogits = np.exp(logp)
    dlogits[onehot_idx] -= 1.0
    dlogits /= B
    gW = [None] * len(model.weights)
    gb = [None] * len(model.biases)
    gg = [None] * len(model.gains)
    gs = [None] * len(model.shifts)
    gW[-1] = h_last.swapaxes(1, 2) @ dlogits
    gb[-1] = dlogits.sum(axis=1)
    dh = dlogits @ model.weights[-1].swapaxes(1, 2)
    for layer in range(len(caches) - 1, -1, -1):
        h_in, cache, mask = caches[layer]
        du = dh * mask
        if model.norm == "none":
            dz = du
        else:
            scale, hat = cache
            if model.norm == "batchnorm":
                z_hat = hat.swapaxes(1, 2)
            else:
                z_hat = hat
            gg[layer] = (du * z_hat).sum(axis=1)
            if model.norm != "rmsnorm":
                gs[layer] = du.sum(axis=1)
            g = du * model.gains[layer][:, None, :]
            if model.norm == "layernorm":
                dz = _ln_vjp_from_stats(z_hat, scale, g)
            elif model.norm == "rmsnorm":
                dz = scale * (g - z_hat * np.mean(g * z_hat, axis=-1, keepdims=True))
            else:  # batchnorm: LayerNorm's VJP along the batch axis
                dz = _ln_vjp_from_stats(hat, scale, g.swapaxes(1, 2)).swapaxes(1, 2)
        gW[layer] = h_in.swapaxes(1, 2) @ dz
        gb[layer] = dz.sum(axis=1)
        if layer > 0:
            dh = dz @ model.weights[layer].swapaxes(1, 2)
    return loss, [*gW, *gb, *gg, *gs], batch_stats


@dataclass(frozen=True, eq=False)
class MLPRun:
    """Output of :func:`train_mlp`: ``len(lrs) × len(seeds)`` trained models and their errors.

    Attributes
    ----------
    norm : str
    batch_size : int
    lrs : ndarray, shape (K,)
        Learning rates.
    seeds : ndarray, shape (S,)
    epochs : int
    val_error, test_error : ndarray, shape (K, S)
        Classification error (fraction) on the validation and test sets, BatchNorm in
        evaluation mode (running statistics).
    test_error_batch : ndarray or None, shape (K, S)
        BatchNorm only: the test error in training mode (statistics of test batches of
        ``batch_size`` inputs).
    train_loss : ndarray, shape (K, S)
        Mean training loss over the last epoch (training mode).
    diverged : ndarray of bool, shape (K, S)
        Non-finite parameters, or a last-epoch training loss that is not finite or
        exceeds ``2 ln(n_classes)`` (twice the loss of a uniform guess); the errors of
        such models are set to 1.0.
    model : MLP
        The trained models, model ``k * S + s`` having learning rate ``k`` and seed ``s``.
    """

    norm: str
    batch_size: int
    lrs: np.ndarray
    seeds: np.ndarray
    epochs: int
    val_error: np.ndarray
    test_error: np.ndarray
    test_error_batch: np.ndarray | None
    train_loss: np.ndarray
    diverged: np.ndarray
    model: MLP


def train_mlp(
    split: DigitsSplit,
    norm: str,
    batch_size: int,
    *,
    lrs,
    seeds,
    epochs: int,
    hidden=(128, 128),
    momentum: float = 0.9,
    bn_momentum: float = 0.1,
    eps: float = 1e-5,
) -> MLPRun:
    """Train ``len(lrs) × len(seeds)`` MLPs at once with mini-batch SGD and momentum.

    Parameters
    ----------
    split : DigitsSplit
        The data (:func:`load_digits_split`).
    norm : str
        One of :data:`NORMS`, used after every hidden Linear layer, before the ReLU.
    batch_size : int
        Mini-batch size (>= 2; ``len(x_train) // batch_size`` steps per epoch, the
        remainder is dropped).
    lrs : sequence of float, keyword-only
        Learning rates (each > 0).
    seeds : sequence of int, keyword-only
        Seed ``s`` fixes the initialization (shared by all learning rates) and the order
        of the training examples (``default_rng([s, 1])``, one permutation per epoch).
    epochs : int, keyword-only
        Passes over the training set.
    hidden : sequence of int, keyword-only
        Hidden widths.
    momentum : float, keyword-only
        Heavy-ball momentum ``v <- momentum v + g``, ``p <- p - lr v`` in [0, 1).
    bn_momentum : float, keyword-only
        BatchNorm's running-statistics update (PyTorch's convention, unbiased variance).
    eps : float, keyword-only
        The norms' ε.

    Returns
    -------
    MLPRun

    Notes
    -----
    Every model of one call sees ``batch_size * (len(x_train) // batch_size)`` examples per
    epoch (the remainder of each reshuffled epoch is dropped, so runs with different batch
    sizes see slightly different numbers of examples); models with the same seed
    share their initialization and data order, so learning rates are compared on common
    random numbers. Used for the small-batch benchmark of the chapter "Why normalize"
    (``book/why-normalize.md``).
    """
    check_choice(norm, "norm", NORMS)
    bs = check_int(batch_size, "batch_size", 2)
    ep = check_int(epochs, "epochs", 1)
    eps = check_eps(eps)
    lr = np.array([check_positive_real(v, "learning rate") for v in lrs])
    seeds = np.array([check_int(s, "seed", 0) for s in seeds])
    if lr.size == 0 or seeds.size == 0:
        raise ValueError("lrs and seeds must not be empty")
    if not 0.0 <= float(momentum) < 1.0:
        raise ValueError(f"momentum must lie in [0, 1); got {momentum!r}")
    if not 0.0 < float(bn_momentum) <= 1.0:
        raise ValueError(f"bn_momentum must lie in (0, 1]; got {bn_momentum!r}")
    x, y = split.x_train, split.y_train
    n = len(y)
    if bs > n:
        raise ValueError(f"batch_size {bs} exceeds the {n} training examples")
    K, S = lr.size, seeds.size
    M = K * S
    # model k*S + s has learning rate k and seed s; the arrays are updated in place below
    model = init_mlp(norm, (x.shape[1], *hidden, int(y.max()) + 1), np.tile(seeds, K).tolist())
    params = [*model.weights, *model.biases, *model.gains, *model.shifts]
    lr_of = [np.repeat(lr, S).reshape((M,) + (1,) * (p.ndim - 1)) for p in params]
    vel = [np.zeros_like(p) for p in params]
    orders = [np.random.default_rng([int(s), 1]) for s in seeds]
    steps = n // bs
    last_loss = np.zeros(M)
    with _one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):  # divergence is reported, not raised
        for _ in range(ep):
            perm = np.tile(np.stack([g.permutation(n) for g in orders]), (K, 1))  # (M, n)
            epoch_loss = np.zeros(M)
            for t in range(steps):
                idx = perm[:, t * bs : (t + 1) * bs]  # (M, B)
                loss, grads, bstats = _loss_and_grads(model, x[idx], y[idx], eps)
                epoch_loss += loss
                for p, v, g, r in zip(params, vel, grads, lr_of):
                    v *= momentum
                    v += g
                    p -= r * v
                for layer, (bmean, bvar) in enumerate(bstats if norm == "batchnorm" else ()):
                    model.running_mean[layer][...] = (1 - bn_momentum) * model.running_mean[layer] + bn_momentum * bmean
                    model.running_var[layer][...] = (1 - bn_momentum) * model.running_var[layer] + (
                        bn_momentum * bvar * bs / (bs - 1)
                    )
            last_loss = epoch_loss / steps
    # diverged: non-finite, or a final loss worse than twice that of a uniform guess, 2 ln(C)
    finite = np.isfinite(last_loss) & (last_loss <= 2.0 * np.log(model.weights[-1].shape[-1]))
    for p in params:
        finite &= np.isfinite(p.reshape(M, -1)).all(axis=1)

    def error(xs, ys, **kw):
        with np.errstate(over="ignore", invalid="ignore"):
            pred = mlp_logits(model, xs, eps=eps, **kw).argmax(axis=-1)  # (M, n)
        err = (pred != ys[None, :]).mean(axis=1)
        return np.where(finite, err, 1.0).reshape(K, S)

    return MLPRun(
        norm=norm,
        batch_size=bs,
        lrs=lr,
        seeds=seeds,
        epochs=ep,
        val_error=error(split.x_val, split.y_val),
        test_error=error(split.x_test, split.y_test),
        test_error_batch=error(split.x_test, split.y_test, stats="batch", batch_size=bs) if norm == "batchnorm" else None,
        train_loss=last_loss.reshape(K, S),
        diverged=~finite.reshape(K, S),
        model=model,
    )


# ----------------------------------------------------------------------------- reading a run


def chosen_lr(run: MLPRun) -> int:
    """The index of the learning rate with the lowest mean validation error over the seeds.

    Parameters
    ----------
    run : MLPRun
        A run of :func:`train_mlp`.

    Returns
    -------
    int
        ``argmin_k mean_s val_error[k, s]`` (the first one on a tie).

    Notes
    -----
    The selection rule of the digits benchmark in the chapter "Why normalize"
    (``book/why-normalize.md``): every norm and batch size gets the rate that suits it.
    """
    if not isinstance(run, MLPRun):
        raise TypeError(f"run must be an MLPRun; got {type(run).__name__}")
    return int(np.argmin(run.val_error.mean(axis=1)))


def select_models(model: MLP, indices) -> MLP:
    """A sub-stack of the models, in the order given.

    Parameters
    ----------
    model : MLP
        Stacked models (e.g. ``run.model`` of :func:`train_mlp`, model ``k * S + s`` having
        learning rate ``k`` and seed ``s``).
    indices : sequence of int
        Which models to keep (each in ``[0, model.n_models)``).

    Returns
    -------
    MLP

    Notes
    -----
    Used to serve one trained network in the chapter "Where normalization stops"
    (``book/boundaries.md``).
    """
    if not isinstance(model, MLP):
        raise TypeError(f"model must be an MLP; got {type(model).__name__}")
    idx = [check_int(i, "model index", 0) for i in indices]
    if not idx:
        raise ValueError("indices must not be empty")
    if max(idx) >= model.n_models:
        raise ValueError(f"model index {max(idx)} out of range for {model.n_models} models")
    pick = lambda arrays: tuple(a[idx] for a in arrays)  # noqa: E731
    return MLP(model.norm, pick(model.weights), pick(model.biases), pick(model.gains), pick(model.shifts),
               pick(model.running_mean), pick(model.running_var))


def correct_on_test(run: MLPRun, split: DigitsSplit, *, stats: str = "running", lr_index: int | None = None) -> np.ndarray:
    """Which test images each seed's network classifies correctly, at one learning rate.

    Parameters
    ----------
    run : MLPRun
        A run of :func:`train_mlp` on ``split``.
    split : DigitsSplit
        The data the run was trained on.
    stats : {"running", "batch"}, keyword-only
        BatchNorm only: evaluation mode (running statistics) or training mode (statistics of
        consecutive test batches of the run's batch size); see :func:`mlp_logits`.
    lr_index : int, optional, keyword-only
        The learning rate (default: :func:`chosen_lr`).

    Returns
    -------
    ndarray of bool, shape (len(run.seeds), len(split.y_test))
        Row ``s`` is seed ``run.seeds[s]``; a diverged model (see :class:`MLPRun`) counts as
        wrong everywhere.

    Notes
    -----
    The input of a paired comparison (:func:`normlib.resampling.paired_bootstrap`): the
    rows of two runs with the same seeds share their initialization and data order, and
    every column is the same test image. See the chapters "Why normalize"
    (``book/why-normalize.md``) and "Where normalization stops" (``book/boundaries.md``).
    """
    if not isinstance(run, MLPRun):
        raise TypeError(f"run must be an MLPRun; got {type(run).__name__}")
    check_choice(stats, "stats", ("running", "batch"))
    k = chosen_lr(run) if lr_index is None else check_int(lr_index, "lr_index", 0)
    if k >= len(run.lrs):
        raise ValueError(f"lr_index {k} out of range for {len(run.lrs)} learning rates")
    S = len(run.seeds)
    sub = select_models(run.model, range(k * S, (k + 1) * S))
    kw = dict(stats="batch", batch_size=run.batch_size) if stats == "batch" and run.norm == "batchnorm" else {}
    with np.errstate(over="ignore", invalid="ignore"):
        pred = mlp_logits(sub, split.x_test, **kw).argmax(axis=-1)  # (S, N)
    return (pred == split.y_test[None, :]) & ~run.diverged[k][:, None]


def pre_norm_rows(model: MLP, x) -> tuple:
    """The rows that enter each hidden layer's norm (its Linear layer's output), in evaluation mode.

    Parameters
    ----------
    model : MLP
        The models.
    x : array_like, shape (n, d_in)
        Inputs, shared by all models.

    Returns
    -------
    tuple of ndarray
        One ``(M, n, width)`` array per hidden layer: ``z = h W + b`` before the norm (BatchNorm
        with its running statistics for the layers below).

    Notes
    -----
    Dropping the centering (RMSNorm for LayerNorm) changes a row's output by an amount set by
    the row's mean over its spread; the chapter "Where normalization stops"
    (``book/boundaries.md``) measures that ratio on these rows.
    """
    if not isinstance(model, MLP):
        raise TypeError(f"model must be an MLP; got {type(model).__name__}")
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != model.weights[0].shape[1]:
        raise ValueError(f"x must have shape (n, {model.weights[0].shape[1]}); got {np.shape(x)}")
    h, rows = np.broadcast_to(a, (model.n_models, *a.shape)), []
    with _one_blas_thread():
        for layer in range(len(model.weights) - 1):
            z = h @ model.weights[layer] + model.biases[layer][:, None, :]
            rows.append(z)
            u = z if model.norm == "none" else _norm_forward(model.norm, z, layer, model, "running", 1e-5)[0]
            h = np.maximum(u, 0.0)
    return tuple(rows)


def serve(model: MLP, requests, others, *, batch_size: int, n_draws: int, rng=None, stats: str = "batch") -> np.ndarray:
    """Logits of each request when it is served in a batch with randomly drawn other requests.

    Parameters
    ----------
    model : MLP
        The models.
    requests : array_like, shape (n, d_in)
        The inputs whose answers are tracked.
    others : array_like, shape (m, d_in)
        The pool the ``batch_size - 1`` batch-mates of each request are drawn from (with
        replacement, a fresh draw for every request and every repetition).
    batch_size : int, keyword-only
        The serving batch (>= 2).
    n_draws : int, keyword-only
        How many times each request is served.
    rng : numpy.random.Generator or int or None, keyword-only
        Source of the batch-mates.
    stats : {"batch", "running"}, keyword-only
        BatchNorm's mode (see :func:`mlp_logits`); the other norms have one computation.

    Returns
    -------
    ndarray, shape (M, n_draws, n, n_classes)

    Notes
    -----
    In training mode a BatchNorm network's answer to a request depends on the other requests
    of its batch; with running statistics, and for LayerNorm or RMSNorm, it does not. See the
    chapter "Where normalization stops" (``book/boundaries.md``).
    """
    if not isinstance(model, MLP):
        raise TypeError(f"model must be an MLP; got {type(model).__name__}")
    bs = check_int(batch_size, "batch_size", 2)
    draws = check_int(n_draws, "n_draws", 1)
    check_choice(stats, "stats", ("running", "batch"))
    req, pool = np.asarray(requests, dtype=np.float64), np.asarray(others, dtype=np.float64)
    d = model.weights[0].shape[1]
    if req.ndim != 2 or req.shape[1] != d or pool.ndim != 2 or pool.shape[1] != d or len(pool) == 0:
        raise ValueError(f"requests and others must have shape (n, {d}) (others not empty); got {req.shape}, {pool.shape}")
    gen = np.random.default_rng(rng)
    out = []
    for _ in range(draws):
        mates = pool[gen.integers(0, len(pool), (len(req), bs - 1))]  # (n, bs - 1, d)
        batches = np.concatenate([req[:, None, :], mates], axis=1).reshape(-1, d)
        logits = mlp_logits(model, batches, stats=stats, batch_size=bs)  # (M, n * bs, C)
        out.append(logits[:, ::bs])  # the request is first in each batch
    return np.stack(out, axis=1)
