"""One figure style for the whole book: a colour-blind-safe palette and labelled axes.

The palette is Okabe & Ito's (2008), safe for the common colour-vision deficiencies.
"""

from __future__ import annotations

__all__ = ["PALETTE", "COLORS", "EDITIONS", "CJK_FONTS", "style", "new_figure", "figure_catalog", "glue_figure"]

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


#: The editions a figure is drawn for: English, and the Chinese edition (issue 28).
EDITIONS = ("en", "zh_CN")
#: Where the Chinese figure texts are translated (a gettext catalog of the repository; not in the wheel).
_FIGURES_PO = ("locales", "zh_CN", "LC_MESSAGES", "_figures.po")
#: A CJK font for the Chinese figures, after the book's Latin one (Debian: fonts-noto-cjk).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC")


def figure_catalog(root=None) -> dict[str, str] | None:
    """The Chinese figure texts, ``{English: Chinese}``, or None outside the repository.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The repository's root (default: the directory above this package).

    Returns
    -------
    dict or None
        The translated messages of ``locales/zh_CN/LC_MESSAGES/_figures.po`` (untranslated and
        fuzzy ones left out), or None when the catalog does not exist (a normlib installed from
        the wheel, where only the English figures are drawn).

    Notes
    -----
    Read by :func:`glue_figure`; ``make locale-update`` extracts the ``t("...")`` strings of
    every figure cell into the catalog. Used by every chapter with a figure, e.g.
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent if root is None else Path(root)
    path = root.joinpath(*_FIGURES_PO)
    if not path.is_file():
        return None
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        cat = read_po(fh)
    return {m.id: m.string for m in cat if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


def glue_figure(key: str, draw, *, catalog: dict | None = None):
    """Draw a figure once per edition from the same data, and glue each for its edition.

    Parameters
    ----------
    key : str
        The glue key of the English figure (``{glue:figure} key`` in the page); the Chinese
        figure is glued as ``key + "__zh_CN"``, which the Chinese edition shows in its place.
    draw : callable
        ``draw(t) -> matplotlib.figure.Figure``: builds the figure from data already computed,
        passing every text a reader sees (titles, axis labels, legend entries, annotations)
        through ``t``: ``ax.set_xlabel(t("depth L (layers)"))``. Write the English as a literal
        string (``t("...")``, formatted afterwards with ``.format(...)`` if it holds a value), so
        that it can be extracted for translation.
    catalog : dict, optional, keyword-only
        ``{English: Chinese}``; default :func:`figure_catalog`. Outside the repository (no
        catalog) only the English figure is drawn.

    Returns
    -------
    matplotlib.figure.Figure
        The English figure (closed after gluing; the glued image stays in the output).

    Raises
    ------
    TypeError
        ``draw`` does not return a matplotlib figure.
    RuntimeError
        A catalog is present (the repository) but no CJK font is installed.

    Notes
    -----
    The Chinese figure uses a CJK font (:data:`CJK_FONTS`) after the book's own; a text with
    no translation is drawn in English (the catalog checks report it). Drawing twice costs the
    plotting only, not the computation. Used by the chapters' figure cells, e.g.
    "Pre-Norm vs Post-Norm" (``book/pre-vs-post.md``).
    """
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from myst_nb import glue

    cat = figure_catalog() if catalog is None else catalog
    fig = draw(lambda s: s)
    if not isinstance(fig, Figure):
        raise TypeError(f"glue_figure({key!r}): draw must return a matplotlib Figure; got {type(fig).__name__}")
    glue(key, fig, display=False)
    plt.close(fig)
    if cat is not None:
        from matplotlib import font_manager

        if not any(f.name in CJK_FONTS for f in font_manager.fontManager.ttflist):
            raise RuntimeError(
                f"glue_figure({key!r}): the Chinese edition's figures need a CJK font ({', '.join(CJK_FONTS)}); "
                "install Debian's fonts-noto-cjk, then delete matplotlib's font cache (fontlist-*.json in "
                f"matplotlib.get_cachedir()) so that it sees them (README, 'The Chinese edition')")
        # An explicit list of installed families: matplotlib falls back glyph by glyph only along
        # font.family itself; the generic "sans-serif" resolves to its first installed font alone,
        # which has no CJK glyphs (every Chinese character would be drawn as a box).
        installed = {f.name for f in font_manager.fontManager.ttflist}
        latin = [f for f in mpl.rcParams["font.sans-serif"] if f in installed and f not in CJK_FONTS][:1]
        with mpl.rc_context({"font.family": latin + [f for f in CJK_FONTS if f in installed]}):
            fig_zh = draw(lambda s: cat.get(s) or s)
            glue(f"{key}__zh_CN", fig_zh, display=False)
            plt.close(fig_zh)
    return fig
