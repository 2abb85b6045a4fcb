"""normlib.deepnorm_constants against DeepNet's four cases (Wang et al., 2022, Sec. 4.3; CLAIMS.md C7.2).

The expected values are the closed forms of the paper, evaluated at layer counts where
they are exact numbers (e.g. 2N = 16 gives alpha = 2 exactly), and against torchscale's
code for the decoder cases (alpha = (2M)^(1/4) or (3M)^(1/4); init_scale = (8M)^(1/4) or
(12M)^(1/4), the weights divided by it).
"""

from __future__ import annotations

import doctest
import math

import pytest

import normlib
from normlib import deepnorm as dn_mod
from normlib import deepnorm_constants


@pytest.mark.parametrize(
    "kind, kwargs, alpha, beta",
    [
        # encoder-only: alpha = (2N)^(1/4), beta = (8N)^(-1/4)
        ("encoder", dict(N=8), 2.0, 64.0**-0.25),  # (16)^(1/4) = 2, (64)^(-1/4) = 1/(2 sqrt 2)
        ("encoder", dict(N=2), math.sqrt(2.0), 0.5),
        # decoder-only: the same formulas in M
        ("decoder", dict(M=8), 2.0, 1.0 / (2.0 * math.sqrt(2.0))),
        ("decoder", dict(M=50), 100.0**0.25, 400.0**-0.25),
        # encoder-decoder, decoder: alpha = (3M)^(1/4), beta = (12M)^(-1/4)
        ("encdec-decoder", dict(M=27), 3.0, 324.0**-0.25),  # 81^(1/4) = 3
        ("encdec-decoder", dict(M=12), math.sqrt(6.0), 1.0 / math.sqrt(12.0)),
        # encoder-decoder, encoder: alpha = 0.81 (N^4 M)^(1/16), beta = 0.87 (N^4 M)^(-1/16)
        ("encdec-encoder", dict(N=2, M=2**12), 0.81 * 2.0, 0.87 / 2.0),  # N^4 M = 2^16
        ("encdec-encoder", dict(N=1, M=1), 0.81, 0.87),
    ],
)
def test_the_four_cases_closed_form(kind, kwargs, alpha, beta):
    a, b = deepnorm_constants(kind, **kwargs)
    assert a == pytest.approx(alpha, rel=1e-14) and b == pytest.approx(beta, rel=1e-14)


def test_paper_configurations():
    """The paper's 1000-layer model is a 500-layer encoder + 500-layer decoder; its 200-layer one 100 + 100."""
    a_e, b_e = deepnorm_constants("encdec-encoder", N=500, M=500)
    a_d, b_d = deepnorm_constants("encdec-decoder", M=500)
    assert a_e == pytest.approx(0.81 * (500.0**5) ** (1 / 16), rel=1e-14)
    assert b_e == pytest.approx(0.87 * (500.0**5) ** (-1 / 16), rel=1e-14)
    assert a_d == pytest.approx(1500.0**0.25, rel=1e-14) and b_d == pytest.approx(6000.0**-0.25, rel=1e-14)
    # alpha > 1 and beta < 1 in every case at depth > 1
    for kind in normlib.deepnorm.DEEPNORM_KINDS:
        a, b = deepnorm_constants(kind, N=6, M=6)
        assert a > 1.0 and b < 1.0


def test_the_bound_is_depth_free():
    """The design rule behind the constants: 2N sublayers x (v^2 + w^2)/alpha^2 = 1 with v = w = beta."""
    for n in (1, 6, 18, 100, 500):
        for kind, key, sublayers in (("encoder", "N", 2 * n), ("decoder", "M", 2 * n), ("encdec-decoder", "M", 3 * n)):
            a, b = deepnorm_constants(kind, **{key: n})
            assert sublayers * 2 * b * b / (a * a) == pytest.approx(1.0, rel=1e-13)


def test_half_integer_layers_for_a_sublayer_stack():
    """A stack of S FFN sublayers is N = S/2 layers: alpha = S^(1/4), beta = (4S)^(-1/4)."""
    a, b = deepnorm_constants("encoder", N=7 / 2)
    assert a == pytest.approx(7.0**0.25, rel=1e-15) and b == pytest.approx(28.0**-0.25, rel=1e-15)


def test_unused_count_is_ignored():
    assert deepnorm_constants("decoder", M=4, N=99) == deepnorm_constants("decoder", M=4)


@pytest.mark.parametrize(
    "kind, kwargs, exc, msg",
    [
        ("bert", dict(N=2), ValueError, r"kind must be one of \('encoder', 'decoder', 'encdec-encoder', 'encdec-decoder'\)"),
        (3, dict(N=2), TypeError, "kind must be one of"),
        ("encoder", {}, ValueError, "needs the layer count N; N is missing"),
        ("encoder", dict(M=4), ValueError, "needs the layer count N"),
        ("decoder", dict(N=4), ValueError, "needs the layer count M; M is missing"),
        ("encdec-encoder", dict(N=4), ValueError, "needs the layer counts N and M; M is missing"),
        ("encdec-encoder", dict(M=4), ValueError, "N is missing"),
        ("encdec-decoder", dict(N=4), ValueError, "M is missing"),
        ("encoder", dict(N=0), ValueError, "N must be a finite number of layers > 0"),
        ("decoder", dict(M=-3), ValueError, "M must be a finite number of layers > 0"),
        ("decoder", dict(M=float("inf")), ValueError, "finite"),
        ("decoder", dict(M=float("nan")), ValueError, "finite"),
        ("encoder", dict(N=True), TypeError, "N must be a positive number of layers"),
        ("encoder", dict(N="6"), TypeError, "N must be a positive number of layers"),
    ],
)
def test_bad_input(kind, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        deepnorm_constants(kind, **kwargs)


def test_layer_counts_are_keyword_only():
    with pytest.raises(TypeError):
        deepnorm_constants("encoder", 6)  # type: ignore[misc]


def test_docstring_examples():
    runner = doctest.DocTestRunner()
    for t in doctest.DocTestFinder().find(dn_mod):
        runner.run(t, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 0
