"""Wall-clock timing and operation counting for the cost comparisons of the book.

Two small tools, both used by the chapter "RMSNorm" (``book/rmsnorm.md``) and by
``benchmarks/bench_norms.py``:

* :func:`median_time` and :func:`interleaved_times` time callables the way
  :mod:`timeit` does (``number`` calls per repeat, several repeats, warm-up calls
  first) and report the **median** per-call time, which is robust to the
  occasional slow repeat of a busy machine. :func:`interleaved_times` alternates
  the candidates inside every repeat, so that a slow phase of the machine hits all
  of them alike and their *ratio* stays meaningful.
* :func:`paired_ratio` turns two interleaved timings into a ratio with a bootstrap
  confidence interval, resampling the repeats as pairs.
* :func:`count_array_ops` records every numpy ufunc a function applies to an
  array argument (element-wise calls and reductions, with the shape they ran
  on), which turns "one statistic fewer" into a count of passes over the data.

Nothing here prints, and nothing here is asserted about speed: timings are
measurements of one machine at one moment.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ._validate import check_int, check_positive_real

__all__ = ["Timing", "median_time", "interleaved_times", "OpCount", "count_array_ops"]
__all__ += ["RatioCI", "paired_ratio"]  # time ratios with a bootstrap interval (chapter "RMSNorm")


@dataclass(frozen=True)
class Timing:
    """Per-call wall-clock times of one callable.

    Attributes
    ----------
    times : tuple of float
        Seconds per call, one entry per repeat (each repeat timed ``number`` calls
        and divided by ``number``).
    number : int
        Calls per repeat.
    warmup : int
        Untimed calls made before the first repeat.
    """

    times: tuple[float, ...]
    number: int
    warmup: int

    @property
    def repeats(self) -> int:
        """Number of timed repeats."""
        return len(self.times)

    @property
    def median(self) -> float:
        """Median seconds per call over the repeats (the number to report)."""
        return float(statistics.median(self.times))

    @property
    def best(self) -> float:
        """Fastest repeat, seconds per call."""
        return float(min(self.times))

    @property
    def worst(self) -> float:
        """Slowest repeat, seconds per call."""
        return float(max(self.times))

    @property
    def spread(self) -> float:
        """Relative spread ``(worst - best) / median``: how noisy the repeats were."""
        return (self.worst - self.best) / self.median if self.median > 0 else math.inf


def _check_args(repeats, warmup, number, min_time):
    repeats = check_int(repeats, "repeats", 1)
    warmup = check_int(warmup, "warmup", 0)
    if number is not None:
        number = check_int(number, "number", 1)
    min_time = check_positive_real(min_time, "min_time (seconds)")
    return repeats, warmup, number, min_time


def _calls_for(fn: Callable[[], object], min_time: float) -> int:
    """Like ``timeit.Timer.autorange``: the smallest 1, 2, 5, 10, ... with a run >= min_time."""
    n = 1
    while True:
        for k in (1, 2, 5):
            calls = n * k
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if time.perf_counter() - t0 >= min_time:
                return calls
        n *= 10


def _time_once(fn: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def median_time(
    fn: Callable[[], object],
    *,
    repeats: int = 7,
    warmup: int = 1,
    number: int | None = None,
    min_time: float = 0.02,
) -> Timing:
    """Time a zero-argument callable, timeit-style.

    Parameters
    ----------
    fn : callable
        Called with no arguments; its result is discarded.
    repeats : int, keyword-only
        Timed repeats (>= 1); the median over them is the reported time.
    warmup : int, keyword-only
        Untimed calls first (>= 0): caches, allocator, lazy initialization.
    number : int, optional, keyword-only
        Calls per repeat. If omitted, chosen like :meth:`timeit.Timer.autorange`:
        the smallest of 1, 2, 5, 10, 20, ... calls that take at least ``min_time``.
    min_time : float, keyword-only
        Seconds one repeat should last when ``number`` is chosen automatically.

    Returns
    -------
    Timing
        Per-call times of every repeat; ``.median`` is the number to report.

    Raises
    ------
    TypeError
        ``fn`` is not callable, or a count is not an integer.
    ValueError
        ``repeats < 1``, ``warmup < 0``, ``number < 1`` or ``min_time <= 0``.

    Notes
    -----
    The median of several repeats is the robust summary; the minimum (``.best``)
    is what :mod:`timeit` recommends for a quiet machine. Neither makes a timing on
    a shared machine exact: compare candidates with :func:`interleaved_times`.
    Used for the measured costs in the chapter "RMSNorm" (``book/rmsnorm.md``).

    Examples
    --------
    >>> from normlib.timing import median_time
    >>> t = median_time(lambda: sum(range(100)), repeats=3, number=10)
    >>> t.repeats, t.number, t.best <= t.median <= t.worst
    (3, 10, True)
    """
    return interleaved_times({"fn": fn}, repeats=repeats, warmup=warmup, number=number, min_time=min_time)["fn"]


def interleaved_times(
    fns: Mapping[str, Callable[[], object]],
    *,
    repeats: int = 7,
    warmup: int = 1,
    number: int | None = None,
    min_time: float = 0.02,
) -> dict[str, Timing]:
    """Time several callables in alternation, so that their ratios resist machine noise.

    Every repeat times each candidate once (``number`` calls), in an order that
    rotates from one repeat to the next; a slow phase of a shared machine then
    falls on all candidates alike.

    Parameters
    ----------
    fns : mapping of str to callable
        Named zero-argument callables (at least one).
    repeats, warmup, number, min_time
        As in :func:`median_time`; ``warmup`` calls are made for every candidate.
        With ``number=None`` each candidate gets its own ``number``.

    Returns
    -------
    dict of str to Timing
        In the order of ``fns``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`median_time`; also an empty or non-mapping ``fns`` or a
        non-callable entry (the message names it).

    Notes
    -----
    In repeat :math:`r` the candidates run in the order of ``fns`` rotated by
    :math:`r \\bmod k` (:math:`k` candidates), so each one runs first equally often.
    The ratio of two medians is the number to report; it is still a measurement of
    one machine. Used in the chapter "RMSNorm" (``book/rmsnorm.md``).

    Examples
    --------
    >>> from normlib.timing import interleaved_times
    >>> t = interleaved_times({"a": lambda: None, "b": lambda: None}, repeats=2, number=5)
    >>> sorted(t), t["a"].repeats
    (['a', 'b'], 2)
    """
    repeats, warmup, number, min_time = _check_args(repeats, warmup, number, min_time)
    if not isinstance(fns, Mapping) or not fns:
        raise TypeError("fns must be a non-empty mapping of names to zero-argument callables")
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"fns[{name!r}] must be callable; got {type(fn).__name__}")
    names = list(fns)
    for name in names:
        for _ in range(warmup):
            fns[name]()
    numbers_ = {name: number if number is not None else _calls_for(fns[name], min_time) for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(_time_once(fns[name], numbers_[name]))
    return {name: Timing(times=tuple(times[name]), number=numbers_[name], warmup=warmup) for name in names}


@dataclass(frozen=True)
class RatioCI:
    """A time ratio ``a / b`` with a bootstrap confidence interval.

    Attributes
    ----------
    ratio : float
        ``exp(median_r log(a_r / b_r))`` over the paired repeats ``r``.
    lo, hi : float
        Percentile bootstrap interval of ``ratio`` at ``level``.
    level : float
        Confidence level of ``(lo, hi)``, e.g. 0.95.
    n_pairs : int
        Number of paired repeats.
    """

    ratio: float
    lo: float
    hi: float
    level: float
    n_pairs: int

    @property
    def direction(self) -> str:
        """``"above 1"`` or ``"below 1"`` when the interval excludes 1, else ``"consistent with 1"``."""
        if self.lo > 1.0:
            return "above 1"
        if self.hi < 1.0:
            return "below 1"
        return "consistent with 1"


def paired_ratio(a: Timing, b: Timing, *, rng, n_boot: int = 2000, level: float = 0.95) -> RatioCI:
    """Ratio of two interleaved timings with a bootstrap interval over paired repeats.

    Parameters
    ----------
    a, b : Timing
        From one call of :func:`interleaved_times`, so that repeat ``r`` of ``a`` and
        repeat ``r`` of ``b`` ran back to back (at least 2 repeats each).
    rng : numpy.random.Generator, keyword-only
        Source of the bootstrap resamples.
    n_boot : int, keyword-only
        Bootstrap resamples (>= 100).
    level : float, keyword-only
        Confidence level, in (0, 1).

    Returns
    -------
    RatioCI

    Raises
    ------
    TypeError
        ``a`` or ``b`` is not a :class:`Timing`, ``rng`` is not a Generator, or a count is
        not an integer.
    ValueError
        Different numbers of repeats, fewer than 2, a non-positive time, ``n_boot < 100``
        or ``level`` outside (0, 1).

    Notes
    -----
    Interleaving puts repeat :math:`r` of both candidates in the same phase of a shared
    machine, so the per-repeat ratio :math:`q_r = a_r/b_r` cancels most of the machine's
    slow and fast phases. The estimate is :math:`\\exp(\\operatorname{median}_r \\ln q_r)`
    (the median is robust to the occasional disturbed repeat), and the interval is the
    percentile bootstrap of that statistic, resampling the :math:`q_r` (the pairs) with
    replacement. It describes the noise of this run on this machine, not the spread
    between machines. Used in the chapter "RMSNorm" (``book/rmsnorm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib.timing import Timing, paired_ratio
    >>> a = Timing(times=(2.0, 2.2, 1.9, 2.1), number=1, warmup=0)
    >>> b = Timing(times=(1.0, 1.1, 1.0, 1.0), number=1, warmup=0)
    >>> r = paired_ratio(a, b, rng=np.random.default_rng(0))
    >>> round(r.ratio, 2), r.lo <= r.ratio <= r.hi, r.direction
    (2.0, True, 'above 1')
    """
    if not isinstance(a, Timing) or not isinstance(b, Timing):
        raise TypeError("a and b must be Timing results of one interleaved_times call")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)); got {type(rng).__name__}")
    n_boot = check_int(n_boot, "n_boot", 100)
    level = check_positive_real(level, "level")
    if not level < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    ta, tb = np.asarray(a.times, dtype=float), np.asarray(b.times, dtype=float)
    if ta.shape != tb.shape or ta.size < 2:
        raise ValueError(f"a and b need the same number (>= 2) of paired repeats; got {ta.size} and {tb.size}")
    if not (np.all(ta > 0) and np.all(tb > 0)):
        raise ValueError("every time must be > 0")
    logq = np.log(ta / tb)
    boot = np.median(logq[rng.integers(0, logq.size, size=(n_boot, logq.size))], axis=1)
    lo, hi = np.quantile(boot, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return RatioCI(float(np.exp(np.median(logq))), float(np.exp(lo)), float(np.exp(hi)), float(level), int(logq.size))


# ----------------------------------------------------------------------------- op counting


@dataclass(frozen=True)
class OpCount:
    """The numpy ufunc calls one function made on its array arguments.

    Attributes
    ----------
    ops : tuple of (str, str, tuple)
        ``(ufunc name, method, shape)`` per call, in order; ``method`` is
        ``"__call__"`` for element-wise use and ``"reduce"`` for reductions;
        ``shape`` is the largest input shape of the call.
    """

    ops: tuple[tuple[str, str, tuple[int, ...]], ...]

    def select(self, shape: tuple[int, ...], method: str, *, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
        """Names of the ufuncs applied with ``method`` on arrays of exactly ``shape``."""
        return tuple(n for n, m, s in self.ops if s == tuple(shape) and m == method and n not in exclude)


class _Recording(np.ndarray):
    """An ndarray view that logs every ufunc applied to it (see :func:`count_array_ops`)."""

    _log: list | None = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shapes = [np.shape(i) for i in inputs]
        if _Recording._log is not None:
            _Recording._log.append((ufunc.__name__, method, max(shapes, key=len)))
        inputs = tuple(i.view(np.ndarray) if isinstance(i, _Recording) else i for i in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Recording) else o for o in kwargs["out"])
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if isinstance(result, np.ndarray) and result.ndim:
            return result.view(_Recording)
        return result


def count_array_ops(fn: Callable[..., object], *arrays, **kwargs) -> OpCount:
    """Record the numpy ufuncs ``fn(*arrays, **kwargs)`` applies to its array arguments.

    Parameters
    ----------
    fn : callable
        A function of numpy arrays (e.g. :func:`normlib.layer_norm`).
    *arrays : ndarray
        Positional arguments; each is passed as a recording view (same data).
    **kwargs
        Passed through unchanged (not recorded).

    Returns
    -------
    OpCount

    Notes
    -----
    Works through numpy's ``__array_ufunc__`` protocol, so it sees every ufunc
    (``np.add``, ``np.multiply``, ...) and every reduction built on one
    (``np.mean`` is ``np.add.reduce`` followed by a division), including the ones
    on intermediate arrays derived from the arguments. It does not see work done
    outside ufuncs (copies, ``astype``, BLAS calls). Used to count the passes over
    the data of LayerNorm and RMSNorm in the chapter "RMSNorm" (``book/rmsnorm.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from normlib import rms_norm
    >>> from normlib.timing import count_array_ops
    >>> c = count_array_ops(rms_norm, np.ones((2, 4)))
    >>> c.select((2, 4), "reduce", exclude=("logical_and",))
    ('add',)
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    views = []
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"argument {i} must be a numpy array; got {type(a).__name__}")
        views.append(a.view(_Recording))
    log: list = []
    previous, _Recording._log = _Recording._log, log
    try:
        fn(*views, **kwargs)
    finally:
        _Recording._log = previous
    return OpCount(ops=tuple(log))
