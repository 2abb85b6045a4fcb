"""Tests of normlib.timing: argument checks, consistency of the reported fields, op counts.

No test asserts anything about speed: wall-clock times depend on the machine and its load.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import normlib as nl
from normlib.timing import OpCount, Timing, count_array_ops, interleaved_times, median_time


def _noop():
    return None


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"repeats": 0}, ValueError),
        ({"repeats": -3}, ValueError),
        ({"repeats": 2.0}, TypeError),
        ({"repeats": True}, TypeError),
        ({"warmup": -1}, ValueError),
        ({"warmup": 0.5}, TypeError),
        ({"number": 0}, ValueError),
        ({"number": "3"}, TypeError),
        ({"min_time": 0.0}, ValueError),
        ({"min_time": -1.0}, ValueError),
        ({"min_time": float("nan")}, ValueError),
        ({"min_time": float("inf")}, ValueError),
        ({"min_time": "fast"}, TypeError),
    ],
)
def test_median_time_rejects_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        median_time(_noop, **kwargs)


def test_median_time_rejects_non_callable():
    with pytest.raises(TypeError, match="callable"):
        median_time(42, repeats=1, number=1)


@pytest.mark.parametrize("fns", [{}, [_noop], None])
def test_interleaved_times_rejects_empty_or_non_mapping(fns):
    with pytest.raises(TypeError, match="mapping"):
        interleaved_times(fns, repeats=1, number=1)


def test_interleaved_times_names_the_bad_entry():
    with pytest.raises(TypeError, match="'b'"):
        interleaved_times({"a": _noop, "b": 3}, repeats=1, number=1)


# ----------------------------------------------------------------------------- consistency


def test_timing_fields_are_consistent():
    t = median_time(lambda: sum(range(50)), repeats=5, warmup=2, number=20)
    assert isinstance(t, Timing)
    assert t.repeats == len(t.times) == 5
    assert t.number == 20 and t.warmup == 2
    assert all(x >= 0.0 for x in t.times)
    assert t.best <= t.median <= t.worst
    assert t.best == min(t.times) and t.worst == max(t.times)
    assert t.median == pytest.approx(float(np.median(t.times)))
    if t.median > 0:
        assert t.spread == pytest.approx((t.worst - t.best) / t.median)


def test_timing_is_frozen():
    t = median_time(_noop, repeats=1, number=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.number = 3  # type: ignore[misc]


def test_calls_are_counted_exactly():
    calls = {"a": 0, "b": 0}

    def make(name):
        def f():
            calls[name] += 1

        return f

    t = interleaved_times({"a": make("a"), "b": make("b")}, repeats=4, warmup=3, number=5)
    assert list(t) == ["a", "b"]
    # warm-up + repeats × number, for each candidate, and nothing else
    assert calls == {"a": 3 + 4 * 5, "b": 3 + 4 * 5}
    assert t["a"].repeats == t["b"].repeats == 4


def test_autorange_picks_a_number_from_the_1_2_5_sequence():
    t = median_time(_noop, repeats=2, warmup=0, min_time=1e-4)
    digits = str(t.number).rstrip("0")
    assert digits in {"1", "2", "5"}
    assert t.number >= 1


# ----------------------------------------------------------------------------- op counting


def test_count_array_ops_sees_the_statistics(rng):
    x = rng.standard_normal((3, 8))
    ln = count_array_ops(nl.layer_norm, x, np.ones(8), np.zeros(8))
    rms = count_array_ops(nl.rms_norm, x, np.ones(8))
    assert isinstance(ln, OpCount)
    skip = ("logical_and",)  # the finiteness check of the input
    # where the numbers in the chapter "RMSNorm" come from: mean + variance vs mean square
    assert ln.select((3, 8), "reduce", exclude=skip) == ("add", "add")
    assert rms.select((3, 8), "reduce", exclude=skip) == ("add",)
    assert len(rms.select((3, 8), "__call__", exclude=("isfinite",))) < len(
        ln.select((3, 8), "__call__", exclude=("isfinite",))
    )


def test_count_array_ops_leaves_results_unchanged(rng):
    x = rng.standard_normal((2, 5))
    expected = nl.rms_norm(x)
    seen = {}

    def f(a):
        seen["y"] = np.asarray(nl.rms_norm(a)).view(np.ndarray)

    count_array_ops(f, x)
    np.testing.assert_array_equal(seen["y"], expected)


def test_count_array_ops_rejects_bad_input():
    with pytest.raises(TypeError, match="callable"):
        count_array_ops(None, np.ones(3))
    with pytest.raises(TypeError, match="numpy array"):
        count_array_ops(nl.rms_norm, [1.0, 2.0])


def test_count_array_ops_does_not_leak_between_calls():
    x = np.ones((2, 3))
    first = count_array_ops(nl.rms_norm, x)
    second = count_array_ops(nl.rms_norm, x)
    assert first.ops == second.ops
    # outside a counting call nothing is recorded
    np.add(x, x)
    assert count_array_ops(lambda a: None, x).ops == ()


# ----------------------------------------------------------------------------- paired_ratio

from normlib.timing import RatioCI, Timing, paired_ratio  # noqa: E402


def _t(times):
    return Timing(times=tuple(times), number=1, warmup=0)


def test_paired_ratio_of_an_exact_ratio_has_a_zero_width_interval():
    """a = 3 b in every repeat, however noisy b is: ratio 3, interval [3, 3]."""
    b = np.random.default_rng(1).uniform(0.5, 5.0, 12)
    r = paired_ratio(_t(3.0 * b), _t(b), rng=np.random.default_rng(0))
    assert r.ratio == pytest.approx(3.0) and r.lo == pytest.approx(3.0) and r.hi == pytest.approx(3.0)
    assert r.direction == "above 1" and r.n_pairs == 12 and r.level == 0.95


def test_pairing_cancels_a_common_slowdown():
    """Repeats slowed by a shared factor (a busy machine) leave the paired ratio near the true 0.8."""
    rng = np.random.default_rng(2)
    load = np.exp(rng.normal(0.0, 0.7, 30))  # the machine's phase, common to both candidates
    a = 0.8 * load * np.exp(rng.normal(0.0, 0.02, 30))
    b = 1.0 * load * np.exp(rng.normal(0.0, 0.02, 30))
    r = paired_ratio(_t(a), _t(b), rng=np.random.default_rng(0))
    assert r.lo < 0.8 < r.hi and r.hi - r.lo < 0.05 and r.direction == "below 1"


def test_paired_ratio_interval_covers_the_truth_at_about_its_level():
    """Coverage of the 90% interval over 300 simulated runs of 15 noisy pairs: within 80%–97%."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(300):
        a = 1.2 * np.exp(rng.normal(0.0, 0.1, 15))
        b = np.exp(rng.normal(0.0, 0.1, 15))
        r = paired_ratio(_t(a), _t(b), rng=rng, n_boot=400, level=0.9)
        hits += r.lo <= 1.2 <= r.hi
    assert 0.80 <= hits / 300 <= 0.97


def test_consistent_with_one():
    r = RatioCI(ratio=1.01, lo=0.9, hi=1.1, level=0.95, n_pairs=10)
    assert r.direction == "consistent with 1"


@pytest.mark.parametrize(
    ("a", "b", "kw", "exc"),
    [
        ([1.0, 2.0], [1.0, 2.0, 3.0], {}, ValueError),
        ([1.0], [1.0], {}, ValueError),
        ([1.0, 0.0], [1.0, 1.0], {}, ValueError),
        ([1.0, 2.0], [1.0, 2.0], {"n_boot": 10}, ValueError),
        ([1.0, 2.0], [1.0, 2.0], {"level": 1.0}, ValueError),
        ([1.0, 2.0], [1.0, 2.0], {"rng": 0}, TypeError),
        ([1.0, 2.0], [1.0, 2.0], {"n_boot": 1000.0}, TypeError),
    ],
)
def test_paired_ratio_bad_input(a, b, kw, exc):
    kwargs = {"rng": np.random.default_rng(0)} | kw
    with pytest.raises(exc):
        paired_ratio(_t(a), _t(b), **kwargs)


def test_paired_ratio_needs_timings():
    with pytest.raises(TypeError, match="Timing"):
        paired_ratio((1.0, 2.0), _t([1.0, 2.0]), rng=np.random.default_rng(0))
