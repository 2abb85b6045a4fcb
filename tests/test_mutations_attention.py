"""Tests that kill the mutants of normlib.attention that survived mutation testing (issue 13, §9).

Each pinned value is derived by hand in its docstring from float16's format: 11 significand
bits, so in the binade [2^e, 2^(e+1)) the spacing is 2^(e−10); round to nearest, ties to
even; every real number from 65520 up rounds to inf (65504 is the largest finite value).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from normlib.attention import attention_logits, soft_cap


def test_scale_before_rounds_the_scaled_query_to_float16():
    """Mutant: ``scale="before"`` multiplies q by 1/√d without rounding the result to float16.

    q = k = ones(1, 3), d = 3. 1/√3 = 0.577350…, in [0.5, 1) where the float16 spacing is
    2⁻¹¹: 0.577350·2¹¹ = 1182.4, so fl(1/√3) = 1182/2048 = 0.5771484375. The logit is
    3·0.5771484375 = 1.7314453125 = 1773/1024, exact in float16 (spacing 2⁻¹⁰ in [1, 2)).
    Without the rounding the sum is 3/√3 = √3 = 1.7320508…, which rounds to
    1774/1024 = 1.732421875.
    """
    q = np.ones((1, 3))
    got = attention_logits(q, q, dtype="float16", scale="before")
    assert got.dtype == np.float16
    assert float(got[0, 0]) == 1.7314453125 == 1773 / 1024
    assert float(np.float16(1 / math.sqrt(3))) == 1182 / 2048  # the derivation's first step
    # "after" rounds only the product 3 (exact) and then 3/√3 = √3 once
    assert float(attention_logits(q, q, dtype="float16", scale="after")[0, 0]) == 1774 / 1024
    # the same inputs in float16 with float16 accumulation: 3 partial sums of 1182/2048, all exact
    assert float(attention_logits(q, q, dtype="float16", accumulate="float16", scale="before")[0, 0]) == 1773 / 1024


def test_float16_accumulation_rounds_every_product():
    """Mutant: the float16 accumulation adds the exact (float64) product without rounding it.

    q = [−60000, 300], k = [1, 300] (all exact in float16). The first product −60000 is
    exact; the second, 300·300 = 90000, is above 65520 and rounds to inf, so the partial
    sum −60000 + inf is inf and the logit is inf. Adding the unrounded 90000 instead gives
    −60000 + 90000 = 30000, finite. (With float32 accumulation the sum 30000 is finite too,
    and 30000/√2 = 21213.2 is stored in float16.)
    """
    q, k = np.array([[-60000.0, 300.0]]), np.array([[1.0, 300.0]])
    assert float(np.float16(-60000.0)) == -60000.0 and float(np.float16(300.0)) == 300.0
    got = attention_logits(q, k, dtype="float16", accumulate="float16")
    assert got.dtype == np.float16 and float(got[0, 0]) == math.inf
    f32 = float(attention_logits(q, k, dtype="float16", accumulate="float32")[0, 0])
    assert f32 == float(np.float16(30000.0 / math.sqrt(2)))


def test_soft_cap_of_float16_is_computed_in_float64_and_rounded_once():
    """Mutant: soft_cap computes ``cap·tanh(x/cap)`` in the dtype of x (float16).

    x = 7, cap = 50: 50·tanh(0.14) = 6.954622…; in [4, 8) the float16 spacing is 2⁻⁸,
    6.954622·2⁸ = 1780.38, so the once-rounded result is 1780/256 = 6.953125. In float16
    arithmetic x/cap rounds to 0.1400146…, and the product rounds up to 1781/256 = 6.95703125.
    """
    x = np.float16(7.0)
    assert 50 * math.tanh(0.14) == pytest.approx(6.954622393922902, abs=1e-15)
    got = soft_cap(np.array([x]), 50.0)
    assert got.dtype == np.float16 and float(got[0]) == 6.953125 == 1780 / 256


@pytest.mark.parametrize("cap", [50.0, 30.0, 5.0])
def test_soft_cap_of_every_float16_is_the_rounded_float64_value(cap):
    """Every finite float16 x: soft_cap(x) equals fl16(soft_cap(float64(x))), one rounding."""
    bits = np.arange(0, 2**16, dtype=np.uint32).astype(np.uint16)
    xs = bits.view(np.float16)
    xs = xs[np.isfinite(xs)]
    want = soft_cap(xs.astype(np.float64), cap).astype(np.float16)
    np.testing.assert_array_equal(soft_cap(xs, cap), want)


def test_attention_logits_soft_cap_in_float16_is_rounded_once():
    """The same through attention_logits: a float16 logit of 7 (q = [7], k = [1], d = 1), cap 50 → 1780/256."""
    got = attention_logits(np.array([[7.0]]), np.array([[1.0]]), dtype="float16", softcap=50.0)
    assert got.dtype == np.float16 and float(got[0, 0]) == 1780 / 256
