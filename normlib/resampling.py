"""Paired bootstrap of test errors: models trained from the same seeds, scored on the same images.

When several models are compared on one test set, the images are shared: an image that is
hard for one model tends to be hard for all of them, so most of the test set's sampling
error cancels in a difference. When the models are also trained from the same seeds
(the same initial weights and the same order of the training examples), the seeds are
shared too. A *paired* bootstrap keeps both pairings: every replicate draws one multiset
of seeds and one multiset of images and applies them to every model.

:func:`paired_bootstrap` does that for a table of correctness matrices (seeds × images)
and any number of contrasts (error of one model minus error of another), and
:class:`PairedBootstrap` gives percentile intervals, optionally corrected for a family of
contrasts (Bonferroni), and averages of contrasts. :func:`wilson_interval` is the score
interval of one binomial proportion (a share of repeats, a failure rate).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ._validate import check_int

__all__ = ["PairedBootstrap", "paired_bootstrap", "two_way_se", "wilson_interval"]


@dataclass(frozen=True, eq=False)
class PairedBootstrap:
    """Output of :func:`paired_bootstrap`: observed contrasts and their bootstrap replicates.

    Attributes
    ----------
    names : tuple of str
        The contrasts, in the order of the columns below.
    estimate : ndarray, shape (k,)
        Observed error of the first model minus error of the second, in percentage points
        (mean over all seeds and images).
    draws : ndarray, shape (n_boot, k)
        The same differences in each bootstrap replicate (points).
    n_seeds, n_images : int
        The size of the seed and image axes that were resampled.
    """

    names: tuple
    estimate: np.ndarray
    draws: np.ndarray
    n_seeds: int
    n_images: int

    def _index(self, names) -> list[int]:
        if names is None:
            return list(range(len(self.names)))
        if isinstance(names, str):
            names = [names]
        missing = [n for n in names if n not in self.names]
        if missing:
            raise KeyError(f"no contrast {missing[0]!r}; the contrasts are {list(self.names)}")
        return [self.names.index(n) for n in names]

    def interval(self, names=None, *, level: float = 0.95, family: int = 1) -> np.ndarray:
        """Percentile intervals of contrasts, simultaneous over a family of ``family`` of them.

        Parameters
        ----------
        names : str or sequence of str, optional
            The contrasts (default: all, in order).
        level : float, keyword-only
            The family-wise coverage, in (0, 1).
        family : int, keyword-only
            The number of contrasts the coverage holds for at once (Bonferroni): each interval
            is the central ``1 - (1 - level) / family`` of its replicates.

        Returns
        -------
        ndarray, shape (len(names), 2)
            Lower and upper ends, in points.

        Raises
        ------
        ValueError
            ``level`` not in (0, 1), ``family`` < 1, or a tail too thin for the number of
            replicates (fewer than 10 replicates beyond an end).
        KeyError
            An unknown contrast.

        Notes
        -----
        Bonferroni's rule needs no assumption about how the contrasts are correlated; it is
        conservative when they are. Used in the chapter "Where normalization stops"
        (``book/boundaries.md``) for the families stated there before the runs.
        """
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, numbers.Real) or not 0.0 < level < 1.0:
            raise ValueError(f"level must lie in (0, 1); got {level!r}")
        fam = check_int(family, "family", 1)
        tail = (1.0 - float(level)) / fam / 2.0
        if tail * self.draws.shape[0] < 10:
            raise ValueError(
                f"{self.draws.shape[0]} replicates leave fewer than 10 beyond each end at level {level} over a "
                f"family of {fam}; draw at least {int(np.ceil(10 / tail))}"
            )
        cols = self.draws[:, self._index(names)]
        return np.stack([np.quantile(cols, tail, axis=0), np.quantile(cols, 1.0 - tail, axis=0)], axis=1)

    def average(self, names=None, *, name: str = "average") -> "PairedBootstrap":
        """The average of several contrasts, as a contrast of its own (same replicates).

        Parameters
        ----------
        names : sequence of str, optional
            The contrasts to average (default: all).
        name : str, keyword-only
            The name of the averaged contrast.

        Returns
        -------
        PairedBootstrap
            One contrast: the mean of the chosen columns, replicate by replicate.

        Notes
        -----
        Averaging within each replicate keeps every correlation between the contrasts, so the
        interval of the average is the right one (not a combination of separate intervals).
        Used in the chapter "Where normalization stops" (``book/boundaries.md``).
        """
        idx = self._index(names)
        return PairedBootstrap(
            names=(str(name),),
            estimate=np.array([float(self.estimate[idx].mean())]),
            draws=self.draws[:, idx].mean(axis=1, keepdims=True),
            n_seeds=self.n_seeds,
            n_images=self.n_images,
        )


def _as_correct(value, key) -> np.ndarray:
    a = np.asarray(value)
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"correct[{key!r}] must be a non-empty (seeds, images) matrix; got shape {a.shape}")
    if a.dtype == np.bool_:
        return a.astype(np.float64)
    if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise TypeError(f"correct[{key!r}] must hold booleans (or 0/1); got dtype {a.dtype}")
    if not np.isin(a, (0, 1)).all():
        raise ValueError(f"correct[{key!r}] must hold only 0 and 1 (right or wrong per image)")
    return a.astype(np.float64)


def paired_bootstrap(correct: Mapping, contrasts: Mapping, *, n_boot: int = 10_000, rng=None,
                     chunk: int = 2_000) -> PairedBootstrap:
    """Bootstrap differences of test error, resampling seeds and images jointly for all models.

    Parameters
    ----------
    correct : mapping of key to array_like, each shape (S, N)
        For each model, whether seed ``s``'s network classifies test image ``i`` correctly
        (booleans or 0/1). Row ``s`` must be the same seed in every matrix and column ``i``
        the same image.
    contrasts : mapping of str to (key, key)
        ``name -> (a, b)``: the contrast is the error of ``a`` minus the error of ``b``.
    n_boot : int, keyword-only
        Number of replicates (>= 100).
    rng : numpy.random.Generator or int or None, keyword-only
        Source of the resampling.
    chunk : int, keyword-only
        Replicates computed at once (memory: ``chunk × N`` floats per contrast).

    Returns
    -------
    PairedBootstrap

    Raises
    ------
    ValueError
        Matrices of different shapes, values other than 0/1, an empty contrast table.
    TypeError
        A matrix that is not boolean or numeric.
    KeyError
        A contrast names a model that is not in ``correct``.

    Notes
    -----
    Replicate ``r`` draws multiplicities ``w`` (seeds) and ``v`` (images) from the uniform
    multinomial and gives each model the error ``1 - Σ_s Σ_i w_s v_i c_si / (S N)``; a
    contrast is then ``Σ_s Σ_i w_s v_i (c^b_si - c^a_si) / (S N)``, computed as
    ``((w @ D) * v).sum() / (S N)``. For an additive matrix ``D_si = α_s + β_i`` the
    replicates' variance is exactly ``var(α)/S + var(β)/N`` (population variances), which
    the unit tests check. With an interaction term the two-way bootstrap counts it about
    three times (Owen 2007, "The pigeonhole bootstrap"): it is conservative, and
    :func:`two_way_se` gives the unbiased two-way standard error to compare. Used in the
    chapters "Why normalize" (``book/why-normalize.md``) and "Where normalization stops"
    (``book/boundaries.md``).
    """
    if not contrasts:
        raise ValueError("contrasts must name at least one (a, b) pair")
    mats = {k: _as_correct(v, k) for k, v in correct.items()}
    for name, pair in contrasts.items():
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ValueError(f"contrast {name!r} must be a pair (a, b); got {pair!r}")
        for k in pair:
            if k not in mats:
                raise KeyError(f"contrast {name!r} names {k!r}, which is not a key of correct")
    shapes = {mats[k].shape for pair in contrasts.values() for k in pair}
    if len(shapes) != 1:
        raise ValueError(f"every matrix of a contrast must have the same (seeds, images) shape; got {sorted(shapes)}")
    (S, N), = shapes
    B = check_int(n_boot, "n_boot", 100)
    step = check_int(chunk, "chunk", 1)
    gen = np.random.default_rng(rng)
    diffs = {name: mats[b] - mats[a] for name, (a, b) in contrasts.items()}  # error(a) - error(b)
    draws = np.empty((B, len(diffs)))
    for start in range(0, B, step):
        n = min(step, B - start)
        w = gen.multinomial(S, np.full(S, 1.0 / S), size=n).astype(np.float64)  # (n, S)
        v = gen.multinomial(N, np.full(N, 1.0 / N), size=n).astype(np.float64)  # (n, N)
        for j, D in enumerate(diffs.values()):
            draws[start : start + n, j] = ((w @ D) * v).sum(axis=1) / (S * N)
    estimate = np.array([D.mean() for D in diffs.values()])
    return PairedBootstrap(names=tuple(diffs), estimate=100.0 * estimate, draws=100.0 * draws, n_seeds=S, n_images=N)


def two_way_se(correct_a, correct_b) -> float:
    """Standard error (points) of a difference of mean errors, from a two-way variance decomposition.

    Parameters
    ----------
    correct_a, correct_b : array_like, shape (S, N)
        Correctness matrices of two models on the same seeds (rows) and images (columns).

    Returns
    -------
    float
        ``sqrt(σ²_seed/S + σ²_image/N + σ²_res/(S N))`` with the components estimated
        without bias from the two-way layout of ``D = c_b - c_a`` (negative component
        estimates are set to zero).

    Raises
    ------
    ValueError
        Shapes differ or fewer than two seeds or images.

    Notes
    -----
    The random-effects model ``D_si = μ + α_s + β_i + ε_si``: the row means estimate
    ``σ²_seed + σ²_res/N``, the column means ``σ²_image + σ²_res/S``, the residuals of the
    two-way fit ``σ²_res`` (times ``(S-1)(N-1)/(S N)``). It is the yardstick against which
    the chapter "Where normalization stops" (``book/boundaries.md``) calibrates the paired
    bootstrap of :func:`paired_bootstrap`.
    """
    a, b = _as_correct(correct_a, "a"), _as_correct(correct_b, "b")
    if a.shape != b.shape:
        raise ValueError(f"the two matrices must have the same shape; got {a.shape} and {b.shape}")
    S, N = a.shape
    if S < 2 or N < 2:
        raise ValueError(f"a two-way decomposition needs at least two seeds and two images; got {a.shape}")
    D = b - a
    rows, cols, mu = D.mean(axis=1), D.mean(axis=0), D.mean()
    res = D - rows[:, None] - cols[None, :] + mu
    s2_res = float((res**2).sum() / ((S - 1) * (N - 1)))
    s2_seed = max(float(rows.var(ddof=1)) - s2_res / N, 0.0)
    s2_img = max(float(cols.var(ddof=1)) - s2_res / S, 0.0)
    return 100.0 * float(np.sqrt(s2_seed / S + s2_img / N + s2_res / (S * N)))


def wilson_interval(k, n, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``k / n``.

    Parameters
    ----------
    k : int
        Number of successes, ``0 <= k <= n``.
    n : int
        Number of trials, at least 1.
    level : float, keyword-only
        Two-sided coverage, strictly between 0 and 1 (default 0.95).

    Returns
    -------
    tuple of float
        ``(low, high)``, with ``0 <= low <= k/n <= high <= 1``.

    Raises
    ------
    TypeError
        ``k`` or ``n`` is not an integer (``bool`` included), or ``level`` is not a real number.
    ValueError
        ``n < 1``, ``k`` outside ``[0, n]``, or ``level`` outside ``(0, 1)``.

    Notes
    -----
    With ``p = k/n`` and ``z`` the standard normal quantile at ``(1 + level)/2``, the interval
    is ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``: the set of proportions that a
    two-sided score test at that level does not reject. Unlike the normal-approximation
    interval it stays inside [0, 1] and does not collapse to a point at ``k = 0`` or ``k = n``.
    The chapter "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``) and the script
    ``benchmarks/validate_stack_tail.py`` use it for the share of four-seed groups at or below
    the article's printed ratio.
    """
    k, n = check_int(k, "k", minimum=0), check_int(n, "n")
    if k > n:
        raise ValueError(f"k must lie in [0, n] = [0, {n}]; got {k}")
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"level must be a real number; got {type(level).__name__}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1; got {level}")
    from scipy.special import ndtri

    z = float(ndtri(0.5 + level / 2.0))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # exact at the ends: the bounds are 0 at k = 0 and 1 at k = n (rounding aside)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high
