"""normlib.plotting.glue_figure: one figure per edition from the same data (issue 28)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import myst_nb  # noqa: E402
import pytest  # noqa: E402

from normlib import plotting  # noqa: E402


def _draw(t):
    fig, ax = plotting.new_figure()
    ax.plot([0, 1], [0, 1], label=t("model"))
    ax.set_xlabel(t("depth L (layers)"))
    ax.set_title(t("not translated"))
    ax.legend()
    return fig


def _texts(fig):
    ax = fig.axes[0]
    return ax.get_xlabel(), ax.get_title(), [t.get_text() for t in ax.get_legend().get_texts()]


@pytest.fixture
def glued(monkeypatch):
    out = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: out.setdefault(key, (value, display)))
    return out


def test_two_editions_glued_with_the_translated_texts(glued):
    cat = {"model": "模型", "depth L (layers)": "深度 L（层）"}
    plotting.glue_figure("fig-x", _draw, catalog=cat)
    assert set(glued) == {"fig-x", "fig-x__zh_CN"}
    assert all(display is False for _, display in glued.values())
    assert _texts(glued["fig-x"][0]) == ("depth L (layers)", "not translated", ["model"])
    assert _texts(glued["fig-x__zh_CN"][0]) == ("深度 L（层）", "not translated", ["模型"])  # untranslated: English


def _cjk_installed():
    from matplotlib import font_manager

    return any(f.name in plotting.CJK_FONTS for f in font_manager.fontManager.ttflist)


@pytest.mark.skipif(not _cjk_installed(), reason="no CJK font installed (Debian: fonts-noto-cjk)")
def test_the_chinese_figure_draws_every_glyph(monkeypatch):
    """The Chinese figure is rendered (as myst_nb's glue does) with a font that has the glyphs:
    a font list that resolves to the Latin font alone draws boxes and warns "Glyph … missing"."""
    import io
    import warnings

    rendered = {}

    def glue(key, value, display=True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value.savefig(io.BytesIO(), format="png")
        rendered[key] = [str(w.message) for w in caught]

    monkeypatch.setattr(myst_nb, "glue", glue)
    plotting.glue_figure("fig-x", _draw, catalog={"model": "模型", "depth L (layers)": "深度 L（层）"})
    assert rendered["fig-x__zh_CN"] == []
    assert rendered["fig-x"] == []


def test_without_a_catalog_only_the_english_figure(glued, tmp_path):
    assert plotting.figure_catalog(tmp_path) is None  # no locales/ there: a wheel install
    plotting.glue_figure("fig-x", _draw, catalog={})
    assert set(glued) == {"fig-x", "fig-x__zh_CN"}  # an empty catalog is still a catalog


def test_draw_must_return_a_figure(glued):
    with pytest.raises(TypeError, match="must return a matplotlib Figure"):
        plotting.glue_figure("fig-x", lambda t: None, catalog={})


def test_figure_catalog_reads_finished_translations_only(tmp_path):
    po = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "_figures.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  'msgid "model"\nmsgstr "模型"\n\n#, fuzzy\nmsgid "depth"\nmsgstr "深度"\n\n'
                  'msgid "empty"\nmsgstr ""\n', encoding="utf-8")
    assert plotting.figure_catalog(tmp_path) == {"model": "模型"}
