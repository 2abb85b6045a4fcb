"""One figure style for the whole book: a colour-blind-safe palette and labelled axes.

The palette is Okabe & Ito's (2008), safe for the common colour-vision deficiencies.
"""

from __future__ import annotations

__all__ = ["PALETTE", "COLORS", "style", "new_figure"]

#: Okabe–Ito colours, in the order the book uses them.
PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)

#: Fixed colours for the things the book compares again and again.
COLORS = {
    "post": PALETTE[1],
    "pre": PALETTE[0],
    "deepnorm": PALETTE[2],
    "pre+final": PALETTE[3],
    "layernorm": PALETTE[0],
    "rmsnorm": PALETTE[1],
    "prmsnorm": PALETTE[2],
    "batchnorm": PALETTE[3],
    "theory": PALETTE[7],
}

_RC = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}


def style() -> None:
    """Apply the book's matplotlib style globally (call once at the top of a chapter).

    Notes
    -----
    Updates ``matplotlib.rcParams`` (figure size, grid, spines, font size) and sets
    the colour cycle to the Okabe–Ito :data:`PALETTE`. matplotlib is imported here,
    not at import time of :mod:`normlib`. Used by every chapter with a figure, e.g.
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(_RC)
    mpl.rcParams["axes.prop_cycle"] = cycler(color=list(PALETTE))


def new_figure(ncols: int = 1, nrows: int = 1, *, width: float | None = None, height: float | None = None):
    """Create a figure and axes in the book style.

    Parameters
    ----------
    ncols, nrows : int
        Grid of axes (each >= 1).
    width, height : float, optional, keyword-only
        Figure size in inches; defaults 6.4 (one column) or 3.6 per column, and 3.8 per row.

    Returns
    -------
    fig, axes
        As from :func:`matplotlib.pyplot.subplots` (constrained layout).

    Notes
    -----
    Calls :func:`style` first. Used by every chapter with a figure, e.g.
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    import matplotlib.pyplot as plt

    style()
    w = width if width is not None else 6.4 if ncols == 1 else 3.6 * ncols
    h = height if height is not None else 3.8 * nrows
    return plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained")
