"""Tests of normlib.attention: closed forms (float64), the float16 overflow boundary on both
sides, RoPE's invariances, property tests of the QK-Norm and soft-cap bounds, bad input.

Where an expected value comes from:
* float16's largest finite value is (2 − 2⁻¹⁰)·2¹⁵ = 65504 and the next binade starts at
  2¹⁶ = 65536, so with round-to-nearest-even every real number below 65520 (the midpoint)
  rounds to a finite value and 65520 itself (a tie; 65504's last significand bit is odd)
  rounds to inf. numpy's own cast is checked against this first.
* The error of a left-to-right float16 sum of n terms is at most γ_n·Σ|terms| with
  γ_n = n·u/(1 − n·u), u = 2⁻¹¹ (Higham, Accuracy and Stability, §4.2); the margins of the
  two-sided threshold tests are derived from it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal

import normlib as nl
from normlib import attention as att

U16 = 2.0**-11  # float16 unit roundoff
U32 = 2.0**-24
SETTINGS = settings(max_examples=60, deadline=None)


def _gamma(n: int, u: float) -> float:
    return n * u / (1.0 - n * u)


# ----------------------------------------------------------------------------- the format itself


def test_fp16_max_and_the_rounding_boundary():
    """FP16_MAX is numpy's float16 max; 65520 is the first real number that rounds to inf."""
    assert att.FP16_MAX == float(np.finfo(np.float16).max) == 65504.0
    with np.errstate(over="ignore"):
        assert np.float16(np.nextafter(65520.0, 0.0)) == 65504.0
        assert np.isinf(np.float16(65520.0))
    assert att.overflow_threshold(1) == 65520.0


@pytest.mark.parametrize("fmt, finfo_max", [("float16", np.finfo(np.float16).max), ("float32", np.finfo(np.float32).max)])
def test_overflow_limit_is_half_an_ulp_above_the_largest_finite(fmt, finfo_max):
    """(2 − 2^-p)·2^emax = max + ulp(max)/2, for the formats numpy has."""
    dt = np.dtype(fmt)
    ulp = float(finfo_max) - float(np.nextafter(finfo_max, finfo_max.dtype.type(0)))  # ulp in max's binade
    assert att.overflow_threshold(1, dtype=fmt) == float(finfo_max) + ulp / 2
    with np.errstate(over="ignore"):
        assert np.isinf(np.array(att.overflow_threshold(1, dtype=fmt), dtype=np.float64).astype(dt))
        below = np.nextafter(att.overflow_threshold(1, dtype=fmt), 0.0)
        assert np.isfinite(np.array(below, dtype=np.float64).astype(dt))


def test_bfloat16_threshold_closed_form():
    """bfloat16: 8 significand bits, float32's exponent range: (2 − 2⁻⁸)·2¹²⁷."""
    assert att.overflow_threshold(1, dtype="bfloat16") == (2 - 2**-8) * 2.0**127


@pytest.mark.parametrize("d", [1, 2, 64, 128, 256])
def test_threshold_closed_forms(d):
    assert att.overflow_threshold(d, scale="after") == 65520.0
    assert att.overflow_threshold(d, scale="before") == pytest.approx(65520.0 * math.sqrt(d), rel=1e-15)


# ----------------------------------------------------------------------------- float64 closed forms


def test_float64_logits_equal_the_definition():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 5, 16))
    k = rng.standard_normal((2, 3, 7, 16))
    want = np.einsum("...id,...jd->...ij", q, k) / 4.0
    for scale in ("after", "before"):
        got = att.attention_logits(q, k, dtype="float64", scale=scale)
        assert got.dtype == np.float64 and got.shape == (2, 3, 5, 7)
        assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_float64_qk_norm_and_softcap_closed_forms():
    rng = np.random.default_rng(1)
    q = 100.0 * rng.standard_normal((4, 8))
    k = 0.01 * rng.standard_normal((6, 8))
    gq, gk = 1 + 0.1 * rng.standard_normal(8), 1 + 0.1 * rng.standard_normal(8)
    qh = gq * q / np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + 1e-6)
    kh = gk * k / np.sqrt(np.mean(k * k, axis=-1, keepdims=True) + 1e-6)
    want = qh @ kh.T / math.sqrt(8)
    got = att.attention_logits(q, k, dtype="float64", qk_norm=True, g_q=gq, g_k=gk, eps=1e-6)
    assert_allclose(got, want, rtol=1e-12)
    capped = att.attention_logits(q, k, dtype="float64", qk_norm=True, g_q=gq, g_k=gk, softcap=2.0)
    assert_allclose(capped, 2.0 * np.tanh(want / 2.0), rtol=1e-12)


def test_qk_norm_reuses_rms_norm():
    """QK-Norm is normlib.rms_norm over the head dimension (no second copy of the formula)."""
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((3, 8)), rng.standard_normal((5, 8))
    g = rng.uniform(0.5, 2.0, 8)
    got = att.attention_logits(q, k, dtype="float64", qk_norm=True, g_q=g, eps=1e-5)
    want = nl.rms_norm(q, g, eps=1e-5) @ nl.rms_norm(k, eps=1e-5).T / math.sqrt(8)
    assert_allclose(got, want, rtol=1e-14)


def test_soft_cap_closed_form_and_special_values():
    x = np.array([-np.inf, -1e6, -50.0, 0.0, 1e-3, 50.0, np.inf, np.nan])
    y = att.soft_cap(x, 50.0)
    assert_allclose(y[:7], 50.0 * np.tanh(x[:7] / 50.0), rtol=1e-15)
    assert y[0] == -50.0 and y[6] == 50.0 and np.isnan(y[7])
    assert att.soft_cap(np.float16(60000.0), 50.0).dtype == np.float16
    assert att.soft_cap(3, 2.0).dtype == np.float64


def test_qk_norm_bound_closed_form():
    assert att.qk_norm_bound(128) == pytest.approx(math.sqrt(128), rel=1e-15)
    g = np.linspace(-3.0, 2.0, 16)
    assert att.qk_norm_bound(16, g_q=g, g_k=np.full(16, 0.5)) == pytest.approx(4.0 * 3.0 * 0.5)


def test_qk_norm_bound_is_attained_by_parallel_constant_rows():
    """q = k = constant row with eps = 0: RMSNorm gives ones, the logit is exactly √d."""
    d = 64
    q = np.full((1, d), 7.0)
    got = att.attention_logits(q, q, dtype="float64", qk_norm=True, eps=0.0)
    assert got[0, 0] == pytest.approx(att.qk_norm_bound(d), rel=1e-15)


# ----------------------------------------------------------------------------- the overflow boundary, exactly


@pytest.mark.parametrize("accumulate", ["float16", "float32"])
def test_rounding_of_the_product_at_65519_and_65520(accumulate):
    """Two terms: 65504 + 15 = 65519 rounds to 65504 (finite); 65504 + 16 = 65520 rounds to inf."""
    k = np.ones((1, 2))
    below = att.attention_logits([[65504.0, 15.0]], k, dtype="float16", accumulate=accumulate)
    above = att.attention_logits([[65504.0, 16.0]], k, dtype="float16", accumulate=accumulate)
    assert below[0, 0] == np.float16(65504.0 / math.sqrt(2)) and np.isinf(above[0, 0])


def test_exact_products_on_both_sides_of_65520_float32_accumulation():
    """d = 64, q = a·1, k = 1: q·k = 64a is exact in float32; 64·1023.5 = 65504 fits, 64·1024 does not."""
    k = np.ones((1, 64))
    fits = att.attention_logits(np.full((1, 64), 1023.5), k, dtype="float16", scale="after")
    over = att.attention_logits(np.full((1, 64), 1024.0), k, dtype="float16", scale="after")
    assert fits[0, 0] == np.float16(65504.0 / 8.0) and np.isinf(over[0, 0])
    # scaled first, the same vectors give the finite logit 8192
    assert att.attention_logits(np.full((1, 64), 1024.0), k, dtype="float16", scale="before")[0, 0] == 8192.0


def _parallel_pair(d: int, norm_product: float, rng):
    """float16-exact q = a·s, k = s (s random signs): q·k = ‖q‖‖k‖ = d·a exactly; returns (q, k, exact product)."""
    s = rng.choice([-1.0, 1.0], size=d)
    a = float(np.float16(norm_product / d))
    q, k = (a * s)[None, :], s[None, :]
    return q, k, float(d) * a


@pytest.mark.parametrize("scale", ["after", "before"])
@pytest.mark.parametrize("accumulate, d", [("float32", 128), ("float32", 64), ("float16", 8), ("float16", 16)])
def test_threshold_two_sided(scale, accumulate, d):
    """Just below overflow_threshold: finite; just above: inf, for both scale orders and accumulations.

    The margin covers rounding: float16 rounding of a (u), of q/√d ("before": u), of the
    sum (γ_d for float16 accumulation; exact in float32 for these inputs) and of the product (u).
    """
    rng = np.random.default_rng(d)
    t = att.overflow_threshold(d, scale=scale)
    margin = 4 * U16 + (_gamma(d, U16) if accumulate == "float16" else _gamma(d, U32))
    q, k, exact_below = _parallel_pair(d, t * (1 - 2 * margin), rng)
    assert exact_below < t
    low = att.attention_logits(q, k, dtype="float16", accumulate=accumulate, scale=scale)
    assert np.isfinite(low).all(), (scale, accumulate, d, exact_below, t)
    q, k, exact_above = _parallel_pair(d, t * (1 + 2 * margin), rng)
    assert exact_above > t
    high = att.attention_logits(q, k, dtype="float16", accumulate=accumulate, scale=scale)
    assert np.isinf(high[0, 0]), (scale, accumulate, d, exact_above, t)


def test_float16_accumulation_overflows_on_a_cancelling_sum_float32_does_not():
    """60000 + 60000 − 60000: the float16 partial sum overflows; in float32 the result is 60000."""
    q = np.array([[60000.0, 60000.0, 60000.0]])
    k = np.array([[1.0, 1.0, -1.0]])
    h = att.attention_logits(q, k, dtype="float16", accumulate="float16", scale="after")
    f = att.attention_logits(q, k, dtype="float16", accumulate="float32", scale="after")
    assert np.isinf(h[0, 0]) and f[0, 0] == np.float16(60000.0 / math.sqrt(3))


def test_float16_accumulation_rounds_every_partial_sum():
    """Summing 4096 ones: float16 stalls at 2048 (2048 + 1 rounds back to 2048); float32 is exact."""
    ones = np.ones((1, 4096))
    h = att.attention_logits(ones, ones, dtype="float16", accumulate="float16", scale="after")
    f = att.attention_logits(ones, ones, dtype="float16", accumulate="float32", scale="after")
    assert h[0, 0] == np.float16(2048.0 / 64.0) and f[0, 0] == np.float16(4096.0 / 64.0)


def test_accumulate_float16_is_ignored_above_float16_storage():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((3, 8)), rng.standard_normal((4, 8))
    a = att.attention_logits(q, k, dtype="float32", accumulate="float16")
    b = att.attention_logits(q, k, dtype="float32", accumulate="float32")
    assert_array_equal(a, b)


def test_softcap_turns_an_overflowed_logit_into_the_cap():
    """Gemma-2 style: the product overflows to inf, tanh(inf) = 1, the logit becomes the cap."""
    q = np.full((1, 64), 1024.0)
    k = np.ones((1, 64))
    assert att.attention_logits(q, k, dtype="float16", softcap=50.0)[0, 0] == 50.0


def test_inf_logit_makes_softmax_nan():
    """The chain the chapter shows: an inf logit turns the whole softmax row into NaN."""
    q = np.array([[1024.0] * 64])
    k = np.stack([np.ones(64), -np.ones(64) / 1024])
    z = att.attention_logits(q, k, dtype="float16").astype(np.float32)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - z.max(axis=-1, keepdims=True))  # inf − inf = NaN in the overflowed entry
        p = e / e.sum(axis=-1, keepdims=True)  # ... and the NaN sum spreads it over the row
    assert np.isinf(z[0, 0]) and np.isfinite(z[0, 1]) and np.isnan(p).all()


# ----------------------------------------------------------------------------- RoPE


def test_rope_position_zero_is_identity_and_d2_is_a_rotation():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 8))
    assert_array_equal(att.rope(x, np.zeros(5)), x)
    y = att.rope(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.3, 0.3]))
    assert_allclose(y, [[math.cos(0.3), math.sin(0.3)], [-math.sin(0.3), math.cos(0.3)]], rtol=1e-15)


def test_rope_matches_the_rotate_half_formula():
    """q·cos + rotate_half(q)·sin with cos/sin repeated over both halves (Hugging Face's layout)."""
    rng = np.random.default_rng(5)
    d, T, base = 16, 6, 1e6
    x = rng.standard_normal((2, T, d))
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    ang = np.arange(T)[:, None] * inv
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    rot = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)
    assert_allclose(att.rope(x, np.arange(T), base=base), x * cos + rot * sin, rtol=1e-13, atol=1e-14)


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@SETTINGS
@given(
    half=st.integers(1, 8),
    data=st.data(),
    pos=st.integers(0, 10_000),
    base=st.sampled_from([100.0, 1e4, 1e6]),
)
def test_rope_preserves_norms(half, data, pos, base):
    x = data.draw(arrays(np.float64, (3, 2 * half), elements=finite, fill=st.nothing()))
    y = att.rope(x, np.full(3, pos), base=base)
    assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(
    half=st.integers(1, 8),
    data=st.data(),
    m=st.integers(0, 2000),
    n=st.integers(0, 2000),
    shift=st.integers(-2000, 2000),
)
def test_rope_dot_products_depend_only_on_relative_position(half, data, m, n, shift):
    d = 2 * half
    q = data.draw(arrays(np.float64, (1, d), elements=finite, fill=st.nothing()))
    k = data.draw(arrays(np.float64, (1, d), elements=finite, fill=st.nothing()))
    a = float((att.rope(q, [m]) @ att.rope(k, [n]).T)[0, 0])
    b = float((att.rope(q, [m + shift]) @ att.rope(k, [n + shift]).T)[0, 0])
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert abs(a - b) <= 1e-9 * (1.0 + scale)


# ----------------------------------------------------------------------------- bound properties


@st.composite
def qk_pairs(draw):
    d = draw(st.integers(1, 16))
    big = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    q = draw(arrays(np.float64, (3, d), elements=big, fill=st.nothing()))
    k = draw(arrays(np.float64, (4, d), elements=big, fill=st.nothing()))
    gain = st.floats(-5, 5, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    gq = draw(arrays(np.float64, (d,), elements=gain, fill=st.nothing()))
    gk = draw(arrays(np.float64, (d,), elements=gain, fill=st.nothing()))
    return q, k, gq, gk


@SETTINGS
@given(qk_pairs(), st.sampled_from([1e-6, 1e-3, 1.0]))
def test_qk_norm_bounds_every_logit(pair, eps):
    """|logit| <= √d·max|g_q|·max|g_k| whatever the scale of q and k."""
    q, k, gq, gk = pair
    z = att.attention_logits(q, k, dtype="float64", qk_norm=True, g_q=gq, g_k=gk, eps=eps)
    bound = att.qk_norm_bound(q.shape[-1], gq, gk)
    assert np.all(np.abs(z) <= bound * (1 + 1e-12) + 1e-300)


@SETTINGS
@given(qk_pairs(), st.sampled_from(["float16", "float32"]))
def test_qk_norm_with_unit_gain_never_overflows_float16(pair, accumulate):
    """With unit gains and d <= 16 the raw product is at most d·(1 + rounding), far below 65504."""
    q, k, _, _ = pair
    q = np.clip(q, -6e4, 6e4)
    k = np.clip(k, -6e4, 6e4)
    z = att.attention_logits(q, k, dtype="float16", accumulate=accumulate, qk_norm=True)
    assert np.isfinite(z).all()
    assert np.all(np.abs(z.astype(np.float64)) <= att.qk_norm_bound(q.shape[-1]) * (1 + 64 * U16))


@SETTINGS
@given(
    arrays(np.float64, st.integers(1, 20), elements=st.floats(allow_nan=False, allow_subnormal=False), fill=st.nothing()),
    st.floats(1e-3, 1e3),
)
def test_soft_cap_is_bounded_odd_and_monotone(x, cap):
    y = att.soft_cap(x, cap)
    assert np.all(np.abs(y) <= cap)
    assert_allclose(att.soft_cap(-x, cap), -y, rtol=4e-16, atol=0)
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(y[order]) >= 0)


# The smallest positive subnormal float64, the spacing of float64 numbers below 2⁻¹⁰²².
ETA64 = 2.0**-1074


@SETTINGS
@given(st.floats(-1e-2, 1e-2, allow_subnormal=False), st.floats(1.0, 100.0))
@example(2.2e-308, 19.0)  # found by Hypothesis: x is normal, but x/cap = 1.2e-309 is subnormal
def test_soft_cap_is_the_identity_near_zero(x, cap):
    """cap·tanh(x/cap) = x − x³/(3cap²) + O(x⁵): the error is below |x|³/(3cap²) (alternating series),
    up to the rounding of the three float64 operations.

    Rounding, in the standard model with gradual underflow, fl(a) = a(1 + δ) + η with
    |δ| ≤ u = 2⁻⁵³ and |η| ≤ ETA64/2 (η ≠ 0 only for a subnormal result):
    q = fl(x/c) = (x/c)(1 + δ₁) + η₁, t = tanh(q)(1 + δ₂) + η₂ (tanh within an ulp: |δ₂| ≤ 2u,
    |η₂| ≤ ETA64), y = fl(c·t) = c·t(1 + δ₃) + η₃ (y is of size |x|). So

        |y − x| ≤ |x|³/(3c²) + (|δ₁| + |δ₂| + |δ₃| + O(u²))·|x| + c·(|η₁| + |η₂|) + |η₃|,

    and 4u|x| + O(u²) is below 4·spacing(|x|) (spacing(|x|) > u|x| for normal x), while the
    absolute terms add at most c·(ETA64/2 + ETA64) + ETA64/2 ≤ 2c·ETA64 (c ≥ 1). The strategy excludes
    subnormal x (their relative precision is lower) but x/cap can still be subnormal for a
    normal x near 2.2e-308: then a rounding of x/cap loses up to ETA64/2 absolutely, which
    c multiplies back up; at x = 2.2e-308, cap = 19 the error is 8·ETA64, twice
    4·spacing(x) = 4·ETA64 but below 2·19·ETA64. For every x ≥ 1e-300 the absolute term is
    negligible (< 1e-321), so the test is as strict as before where it matters.
    """
    bound = abs(x) ** 3 / (3 * cap**2) + 4 * np.spacing(abs(x)) + 2 * cap * ETA64
    assert abs(float(att.soft_cap(x, cap)) - x) <= bound


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"dtype": "bfloat16"}, "dtype must be one of"),
        ({"dtype": "half"}, "dtype must be one of"),
        ({"accumulate": "float64"}, "accumulate must be one of"),
        ({"scale": "middle"}, "scale must be one of"),
        ({"softcap": 0.0}, "softcap must be a finite number > 0"),
        ({"softcap": -1.0}, "softcap must be a finite number > 0"),
        ({"eps": -1.0}, "eps must be"),
        ({"g_q": np.ones(4)}, "pass qk_norm=True"),
        ({"qk_norm": True, "g_q": np.ones(5)}, r"shape \(4,\)"),
    ],
)
def test_attention_logits_bad_options(kwargs, match):
    q = np.ones((2, 4))
    with pytest.raises(ValueError, match=match):
        att.attention_logits(q, q, **kwargs)


def test_attention_logits_bad_arrays():
    with pytest.raises(ValueError, match="same head dimension"):
        att.attention_logits(np.ones((2, 4)), np.ones((2, 6)))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., T, d\)"):
        att.attention_logits(np.ones(4), np.ones((2, 4)))
    with pytest.raises(ValueError, match="do not broadcast"):
        att.attention_logits(np.ones((2, 3, 4)), np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        att.attention_logits(np.array([[1.0, np.nan]]), np.ones((1, 2)))
    with pytest.raises(ValueError, match="itself overflows float16"):
        att.attention_logits(np.array([[1e5, 1.0]]), np.ones((1, 2)), dtype="float16")
    with pytest.raises(TypeError, match="real floating"):
        att.attention_logits(np.ones((1, 2), dtype=bool), np.ones((1, 2)))
    with pytest.raises(TypeError, match="qk_norm must be True or False"):
        att.attention_logits(np.ones((1, 2)), np.ones((1, 2)), qk_norm=1)


def test_rope_bad_input():
    with pytest.raises(ValueError, match="even, nonzero head dimension"):
        att.rope(np.ones((2, 5)), np.arange(2))
    with pytest.raises(ValueError, match="do not broadcast"):
        att.rope(np.ones((3, 4)), np.arange(2))
    with pytest.raises(ValueError, match="base must be a finite number > 0"):
        att.rope(np.ones((2, 4)), np.arange(2), base=0.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        att.rope(np.ones((2, 4)), np.array([0.0, np.inf]))


def test_soft_cap_and_bounds_bad_input():
    with pytest.raises(ValueError, match="cap must be a finite number > 0"):
        att.soft_cap(np.ones(3), 0.0)
    with pytest.raises(ValueError, match="cap must be a finite number > 0"):
        att.soft_cap(np.ones(3), math.inf)
    with pytest.raises(TypeError, match="real floating"):
        att.soft_cap(np.array(["a"]), 1.0)
    with pytest.raises(ValueError, match=r"g_q must have shape \(8,\)"):
        att.qk_norm_bound(8, g_q=np.ones(7))
    with pytest.raises(ValueError, match="integer >= 1"):
        att.qk_norm_bound(0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        att.overflow_threshold(64, dtype="float64")
    with pytest.raises(ValueError, match="scale must be one of"):
        att.overflow_threshold(64, scale="inside")
    with pytest.raises(TypeError, match="integer"):
        att.overflow_threshold(64.0)


# ----------------------------------------------------------------------------- overflow_band


def test_overflow_band_closed_forms():
    """d = 1, "after", float32: no rounding at all, so the band is the threshold itself;
    float16 accumulation at d = 128: ρ = 1 + γ_128 = 1/(1 − 128/2048) = 16/15."""
    assert att.overflow_band(1) == (65520.0, 65520.0)
    lo, hi = att.overflow_band(128, accumulate="float16")
    assert lo == pytest.approx(65520.0 * 15 / 16, rel=1e-15) and hi == pytest.approx(65520.0 * 16 / 15, rel=1e-15)
    lo, hi = att.overflow_band(128, scale="before", accumulate="float32")
    rho = (1 + 2.0**-11 / (1 - 2.0**-11)) * (1 + 127 * 2.0**-24 / (1 - 127 * 2.0**-24))
    assert hi / att.overflow_threshold(128, scale="before") == pytest.approx(rho, rel=1e-15)
    assert lo * hi == pytest.approx(att.overflow_threshold(128, scale="before") ** 2, rel=1e-15)


@pytest.mark.parametrize("scale", ["after", "before"])
@pytest.mark.parametrize("accumulate", ["float16", "float32"])
@pytest.mark.parametrize("d", [16, 128])
def test_first_overflow_lies_in_the_band(scale, accumulate, d):
    """Parallel float16 vectors q = a·u, k = u: bisection over a for the first overflow of
    attention_logits; the last finite ‖q‖‖k‖ is below hi and the first infinite one is >= lo."""
    n = 12
    u = np.abs(np.random.default_rng(d).standard_normal((n, d))).astype(np.float16).astype(np.float64)
    lo_b, hi_b = att.overflow_band(d, scale=scale, accumulate=accumulate)
    t = att.overflow_threshold(d, scale=scale)

    def pair(a):
        q = (a[:, None] * u).astype(np.float16).astype(np.float64)
        return q, np.linalg.norm(q, axis=1) * np.linalg.norm(u, axis=1)

    def inf_at(a):
        q, _ = pair(a)
        return np.isinf(att.attention_logits(q[:, None], u[:, None], dtype="float16", accumulate=accumulate, scale=scale)[:, 0, 0])

    a_t = t / np.einsum("ij,ij->i", u, u)
    lo, hi = a_t / 1.1, 1.1 * a_t  # the band is narrower (ρ <= 16/15); q stays finite in float16
    assert not inf_at(lo).any() and inf_at(hi).all()
    while np.max(hi / lo) > 1 + 1e-7:
        mid = np.sqrt(lo * hi)
        o = inf_at(mid)
        hi, lo = np.where(o, mid, hi), np.where(o, lo, mid)
    assert np.all(pair(lo)[1] < hi_b) and np.all(pair(hi)[1] >= lo_b)


def test_overflow_band_rejects_bad_input():
    with pytest.raises(ValueError):
        att.overflow_band(0)
    with pytest.raises(ValueError):
        att.overflow_band(8, scale="middle")
    with pytest.raises(ValueError):
        att.overflow_band(8, accumulate="float64")
    with pytest.raises(ValueError, match="too large"):
        att.overflow_band(4096, accumulate="float16")
    with pytest.raises(TypeError):
        att.overflow_band(8.0)


# ----------------------------------------------------------------------------- bisections and the bilinear form


def test_first_failure_brackets_the_threshold():
    lo, hi = att.first_failure(lambda x: x >= math.pi, 1.0, 10.0, rel=1e-9)
    assert lo < math.pi <= hi and hi / lo <= 1 + 1e-9


@pytest.mark.parametrize(("lo", "hi"), [(4.0, 10.0), (1.0, 2.0)])  # fails(lo) True / fails(hi) False
def test_first_failure_refuses_a_bracket_without_a_change(lo, hi):
    with pytest.raises(ValueError, match="fails"):
        att.first_failure(lambda x: x >= 3.0, lo, hi)


def test_first_failure_refuses_non_bool_and_bad_arguments():
    with pytest.raises(TypeError, match="bool"):
        att.first_failure(lambda x: "yes", 1.0, 2.0)
    with pytest.raises(TypeError):
        att.first_failure(3.0, 1.0, 2.0)
    with pytest.raises(ValueError):
        att.first_failure(lambda x: x > 1.5, 2.0, 1.0)
    with pytest.raises(ValueError):
        att.first_failure(lambda x: x > 1.5, 1.0, 2.0, rel=0.0)


def test_float16_first_failure_returns_consecutive_float16_values():
    last, first = att.float16_first_failure(lambda g: g >= 22.62, 1.0, 80.0)
    assert (last, first) == (22.609375, 22.625)  # the two float16 values around 22.62
    assert np.nextafter(np.float16(last), np.float16(np.inf)) == np.float16(first)
    # a threshold that is itself a float16 value is returned as the first failure
    assert att.float16_first_failure(lambda g: g >= 42.0, 1.0, 80.0) == (41.96875, 42.0)


def test_float16_first_failure_refuses_bad_brackets():
    with pytest.raises(ValueError):
        att.float16_first_failure(lambda g: g > 2, 1e6, 2e6)  # not finite in float16
    with pytest.raises(ValueError):
        att.float16_first_failure(lambda g: g > 2, 3.0, 3.0001)  # one float16 value
    with pytest.raises(ValueError, match="fails"):
        att.float16_first_failure(lambda g: g > 100, 1.0, 4.0)


def test_bilinear_peaks_against_dense_svd_and_eigh():
    rng = np.random.default_rng(0)
    for d_head, d_model in ((3, 7), (8, 12), (5, 5), (4, 30)):
        wq, wk = rng.standard_normal((d_head, d_model)), rng.standard_normal((d_head, d_model))
        a = wq.T @ wk
        p = att.bilinear_peaks(wq, wk)
        assert_allclose(p.two_tokens, np.linalg.norm(a, 2), rtol=1e-12)
        assert_allclose(p.one_token, np.max(np.abs(np.linalg.eigvalsh((a + a.T) / 2))), rtol=1e-12)
        assert p.one_token <= p.two_tokens * (1 + 1e-12)


def test_bilinear_peaks_are_attained():
    rng = np.random.default_rng(1)
    wq, wk = rng.standard_normal((4, 10)), rng.standard_normal((4, 10))
    u, s, vt = np.linalg.svd(wq.T @ wk)
    p = att.bilinear_peaks(wq, wk)
    assert_allclose(abs((wq @ u[:, 0]) @ (wk @ vt[0])), p.two_tokens, rtol=1e-12)  # two tokens
    w, v = np.linalg.eigh((wq.T @ wk + wk.T @ wq) / 2)
    x = v[:, np.argmax(np.abs(w))]
    assert_allclose(abs((wq @ x) @ (wk @ x)), p.one_token, rtol=1e-12)  # one token


def test_bilinear_peaks_equal_projections_and_closed_form():
    w = np.random.default_rng(2).standard_normal((3, 6))
    p = att.bilinear_peaks(w, w)  # A = WᵀW is symmetric positive semi-definite: both peaks are its top eigenvalue
    assert_allclose(p.one_token, p.two_tokens, rtol=1e-12)
    assert_allclose(p.two_tokens, np.linalg.norm(w, 2) ** 2, rtol=1e-12)
    assert att.bilinear_peaks([[1.0, 0.0]], [[0.0, 1.0]]) == att.BilinearPeaks(two_tokens=1.0, one_token=0.5)


@pytest.mark.parametrize(("wq", "wk"), [(np.ones((2, 3)), np.ones((3, 2))), (np.ones(3), np.ones(3)),
                                        (np.full((2, 3), np.nan), np.ones((2, 3)))])
def test_bilinear_peaks_bad_input(wq, wk):
    with pytest.raises(ValueError):
        att.bilinear_peaks(wq, wk)
