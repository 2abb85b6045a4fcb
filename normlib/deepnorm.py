"""DeepNet's DeepNorm constants (Wang et al., 2022, "DeepNet: Scaling Transformers to 1,000 Layers").

DeepNorm replaces Post-LN's ``x <- LN(x + G(x))`` by ``x <- LN(alpha * x + G(x))`` and
scales the initial weights inside the residual branches (the FFN's two weights, the
attention's value and output projections; not the query and key projections) by
``beta``. The constants depend only on the architecture: the number of **layers** of
the encoder (``N``) and of the decoder (``M``). A layer is an attention sublayer plus
an FFN sublayer (plus a cross-attention sublayer in an encoder-decoder's decoder).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["DEEPNORM_KINDS", "deepnorm_constants"]

#: The four cases of DeepNet's Figure 2(b) / Section 4.3 (arXiv:2203.00555; its Table 1 is a BLEU table).
DEEPNORM_KINDS = ("encoder", "decoder", "encdec-encoder", "encdec-decoder")

# Which layer counts each case needs, in the order of the formulas.
_NEEDS = {
    "encoder": ("N",),
    "decoder": ("M",),
    "encdec-encoder": ("N", "M"),
    "encdec-decoder": ("M",),
}


def _layers(value, name: str, kind: str) -> float:
    if value is None:
        need = " and ".join(_NEEDS[kind])
        raise ValueError(f"deepnorm_constants({kind!r}) needs the layer count{'s' if len(_NEEDS[kind]) > 1 else ''} {need}; {name} is missing")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number of layers; got {type(value).__name__} {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number of layers > 0; got {value!r}")
    return v


def deepnorm_constants(kind: str, *, N=None, M=None) -> tuple[float, float]:
    """DeepNet's residual weight ``alpha`` and initialization scale ``beta``.

    Parameters
    ----------
    kind : {"encoder", "decoder", "encdec-encoder", "encdec-decoder"}
        Encoder-only (BERT-like), decoder-only (GPT-like), or the encoder or the decoder
        of an encoder-decoder model.
    N : int or float, keyword-only
        Number of encoder **layers** (each: attention + FFN). Needed by ``"encoder"``
        and ``"encdec-encoder"``. A stack of ``S`` residual sublayers of one kind
        corresponds to ``N = S / 2`` (DeepNet's bound sums over ``2N`` sublayers), so
        a non-integer ``N`` is accepted.
    M : int or float, keyword-only
        Number of decoder layers. Needed by ``"decoder"``, ``"encdec-encoder"`` and
        ``"encdec-decoder"``.

    Returns
    -------
    alpha, beta : float
        The constants of the case (the table under Notes).

    Raises
    ------
    TypeError
        ``kind`` not a string, or a layer count that is not a real number.
    ValueError
        An unknown ``kind``; a layer count the case needs that is missing, or not
        finite and positive.

    Notes
    -----
    ==================  ==========================  ===========================
    kind                alpha                       beta
    ==================  ==========================  ===========================
    encoder             (2N)^(1/4)                  (8N)^(-1/4)
    decoder             (2M)^(1/4)                  (8M)^(-1/4)
    encdec-encoder      0.81 (N^4 M)^(1/16)         0.87 (N^4 M)^(-1/16)
    encdec-decoder      (3M)^(1/4)                  (12M)^(-1/4)
    ==================  ==========================  ===========================

    DeepNorm computes :math:`x_{l+1} = \\mathrm{LN}(\\alpha x_l + G_l(x_l))` for every
    sublayer :math:`G_l` and multiplies the Xavier-initialized FFN, value and output
    projection weights by :math:`\\beta`. DeepNet's Theorem 4.2 bounds the model update
    by :math:`\\lVert\\Delta F\\rVert \\le \\sum_{i=1}^{2N} \\frac{\\sqrt{v_i^2 + w_i^2}}{\\alpha}
    \\lVert\\theta_i^* - \\theta_i\\rVert`; with SGD each term is
    :math:`\\Theta(\\eta (v^2 + w^2)/\\alpha^2)`, and :math:`v = w = \\beta`,
    :math:`\\alpha^2 = \\sqrt{2N}`, :math:`2\\beta^2 = 1/\\sqrt{2N}` make the sum over
    the :math:`2N` sublayers :math:`\\Theta(\\eta)` (Wang et al., 2022, Section 4.3 and
    the pseudocode of Figure 2(b), which prints the constants). Every case is
    :math:`\\alpha = K^{1/4}`, :math:`\\beta = (4K)^{-1/4}` (so :math:`2\\alpha^2\\beta^2 = 1`)
    with an effective sublayer count :math:`K`: :math:`2N`, :math:`2M`, :math:`3M`, and
    for the encoder of an encoder-decoder, whose updates reach the output through the
    decoder's cross-attention (DeepNet's Theorem 4.3), :math:`K = (N^4 M / 27)^{1/4}`,
    i.e. :math:`\\alpha_e = 27^{-1/16}(N^4M)^{1/16}` and
    :math:`\\beta_e = 2^{-1/2}\\,27^{1/16}(N^4M)^{-1/16}`; the paper rounds the prefactors
    :math:`27^{-1/16} = 0.8139\\ldots` and :math:`2^{-1/2}27^{1/16} = 0.8688\\ldots` to the
    printed 0.81 and 0.87, which this function uses. A layer count that the case does
    not use is ignored. Explained in the chapter "DeepNorm" (``book/deepnorm.md``).

    Examples
    --------
    >>> from normlib import deepnorm_constants
    >>> a, b = deepnorm_constants("encoder", N=2)
    >>> round(a, 6), round(b, 6)
    (1.414214, 0.5)
    >>> a, b = deepnorm_constants("encdec-decoder", M=12)
    >>> round(a, 6), round(b, 6)
    (2.44949, 0.288675)
    """
    if not isinstance(kind, str):
        raise TypeError(f"kind must be one of {DEEPNORM_KINDS}; got {type(kind).__name__} {kind!r}")
    if kind not in DEEPNORM_KINDS:
        raise ValueError(f"kind must be one of {DEEPNORM_KINDS}; got {kind!r}")
    if kind == "encoder":
        n = _layers(N, "N", kind)
        return (2.0 * n) ** 0.25, (8.0 * n) ** -0.25
    if kind == "decoder":
        m = _layers(M, "M", kind)
        return (2.0 * m) ** 0.25, (8.0 * m) ** -0.25
    if kind == "encdec-encoder":
        n, m = _layers(N, "N", kind), _layers(M, "M", kind)
        return 0.81 * (n**4 * m) ** (1.0 / 16.0), 0.87 * (n**4 * m) ** (-1.0 / 16.0)
    m = _layers(M, "M", kind)  # encdec-decoder
    return (3.0 * m) ** 0.25, (12.0 * m) ** -0.25
