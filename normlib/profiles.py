"""Per-layer gradient profiles over seeds: the growth from the first to the last layer, depth slopes, intervals.

numpy only (scipy's Student t quantile is imported inside :func:`mean_interval`). A profile
is one seed's positive per-layer quantity (for example ``‖∂L/∂W2_l‖`` of every layer, from
:func:`normlib.transformer.ffn_grad_stats`); ``profiles`` stacks the seeds on the first axis,
the layers on the last. Every statistic here is a mean of per-seed values, so its interval
is a Student t interval over the seeds, and two statistics measured on the same seeds are
compared through the per-seed differences (:func:`paired_interval`), two on different seeds
through :func:`welch_interval`. Used in the chapter "A real Transformer"
(``book/real-transformer.md``) and its benchmark ``benchmarks/bench_init_scale.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "log_growth", "log_slope", "mean_interval", "paired_interval", "welch_interval"]


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided interval: ``estimate``, ``lo``, ``hi``, its standard error ``se``,
    the degrees of freedom ``df`` of the Student t quantile, and the ``level`` (0.95 for a 95% interval)."""

    estimate: float
    lo: float
    hi: float
    se: float
    df: float
    level: float

    def exp(self) -> tuple[float, float, float]:
        """``(e^estimate, e^lo, e^hi)``: the interval of a log quantity read as a ratio."""
        return math.exp(self.estimate), math.exp(self.lo), math.exp(self.hi)


def _as_profiles(profiles, name="profiles") -> np.ndarray:
    a = np.asarray(profiles)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must be a real array; got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must have shape (seeds, layers); got shape {a.shape}")
    if a.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 layers to fit a slope; got shape {a.shape}")
    if not (np.isfinite(a).all() and (a > 0).all()):
        raise ValueError(f"{name} must be finite and positive (the logarithm is fitted)")
    return a


def log_growth(profiles) -> np.ndarray:
    """Each seed's ``ln G``: the least-squares slope of ``ln profile`` against the layer index, times ``depth − 1``.

    Parameters
    ----------
    profiles : array_like, shape (seeds, depth)
        Positive per-layer values, the first layer (next to the input) first.

    Returns
    -------
    numpy.ndarray, shape (seeds,)
        ``ln G`` per seed; ``G = e^{ln G}`` is the fitted growth from the first to the last
        layer (> 1: the quantity grows toward the output). Their mean is the ``ln G`` of the
        geometric-mean profile, since the fit is linear in ``ln profile``.

    Raises
    ------
    TypeError
        A non-numeric array.
    ValueError
        Not 2-D, fewer than 2 layers, or a non-positive or non-finite value.

    Notes
    -----
    Unlike the ratio of the last to the first layer, the fit uses every layer. See the
    chapter "A real Transformer" (``book/real-transformer.md``).
    """
    a = np.log(_as_profiles(profiles))
    x = np.arange(a.shape[1], dtype=np.float64)
    x -= x.mean()
    slope = (a @ x) / (x @ x)
    return slope * (a.shape[1] - 1)


def log_slope(depths, values) -> np.ndarray:
    """Each seed's least-squares slope of ``ln value`` against ``ln depth`` (a power law ``value ∝ depth^b``).

    Parameters
    ----------
    depths : array_like, shape (k,)
        Positive depths (at least two distinct).
    values : array_like, shape (seeds, k)
        Positive values, one row per seed, one column per depth.

    Returns
    -------
    numpy.ndarray, shape (seeds,)
        The exponent ``b`` per seed; their mean is the slope of the geometric mean over seeds.

    Raises
    ------
    TypeError
        A non-numeric array.
    ValueError
        Shapes that do not match, non-positive values, or fewer than two distinct depths.

    Notes
    -----
    Xiong et al.'s Theorem 1 gives ``b = 0`` for Post-LN's last layer and ``b = −1/2`` for
    Pre-LN's at large depth. See ``book/real-transformer.md``.
    """
    v = np.log(_as_profiles(values, "values"))
    d = np.asarray(depths, dtype=np.float64)
    if d.shape != (v.shape[1],):
        raise ValueError(f"depths must have shape ({v.shape[1]},) to match values; got {d.shape}")
    if not (np.isfinite(d).all() and (d > 0).all()) or np.ptp(d) == 0:
        raise ValueError("depths must be positive, finite and not all equal")
    x = np.log(d)
    x -= x.mean()
    return (v @ x) / (x @ x)


def _t(level, df):
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, df))


def _check_level(level):
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}")
    return float(level)


def _as_sample(x, name) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must be a real 1-D array; got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"{name} must be 1-D with at least 2 values; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


def mean_interval(x, *, level=0.95) -> Interval:
    """The mean of per-seed values with its Student t interval.

    Parameters
    ----------
    x : array_like, shape (n,)
        One value per seed (n >= 2), e.g. :func:`log_growth`'s ``ln G``.
    level : float, keyword-only
        Two-sided coverage (default 0.95).

    Returns
    -------
    Interval
        ``mean ± t_{n−1} · s / √n``.

    Raises
    ------
    TypeError, ValueError
        A non-numeric, non-1-D or too short sample, or a level outside (0, 1).

    Notes
    -----
    Exact for normal per-seed values; the chapter "A real Transformer"
    (``book/real-transformer.md``) checks the coverage for its statistics on its evidence
    page (a percentile bootstrap over 8–10 seeds covers less than it says).
    """
    a, level = _as_sample(x, "x"), _check_level(level)
    n = a.size
    m, se = float(a.mean()), float(a.std(ddof=1) / math.sqrt(n))
    h = _t(level, n - 1) * se
    return Interval(m, m - h, m + h, se, float(n - 1), level)


def paired_interval(x, y, *, level=0.95) -> Interval:
    """The mean of the per-seed differences ``x − y`` (the same seeds, in the same order) with its t interval.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Two statistics measured on the same n seeds.
    level : float, keyword-only
        Two-sided coverage (default 0.95).

    Returns
    -------
    Interval

    Raises
    ------
    ValueError
        Samples of different lengths, and the errors of :func:`mean_interval`.

    Notes
    -----
    Seeds shared by two configurations make their values correlated; comparing the two
    intervals (overlap) ignores that, the differences do not. See
    ``book/real-transformer.md``.
    """
    a, b = _as_sample(x, "x"), _as_sample(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"paired samples need the same seeds: got {a.size} and {b.size} values")
    return mean_interval(a - b, level=level)


def welch_interval(x, y, *, level=0.95) -> Interval:
    """``mean(x) − mean(y)`` for two independent samples, with Welch's t interval.

    Parameters
    ----------
    x, y : array_like
        Per-seed values of two configurations whose seeds are not shared (or whose draws
        are unrelated, e.g. two widths).
    level : float, keyword-only
        Two-sided coverage (default 0.95).

    Returns
    -------
    Interval
        With the Welch–Satterthwaite degrees of freedom.

    Raises
    ------
    TypeError, ValueError
        As :func:`mean_interval`, for either sample.

    Notes
    -----
    See ``book/real-transformer.md``.
    """
    a, b, level = _as_sample(x, "x"), _as_sample(y, "y"), _check_level(level)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0:
        df = float(a.size + b.size - 2)
    else:
        df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    m = float(a.mean() - b.mean())
    h = _t(level, df) * se
    return Interval(m, m - h, m + h, se, float(df), level)
