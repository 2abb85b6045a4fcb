"""The translated editions' tools: glue keys in translations, catalog merges (no Sphinx build)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_local_glue_keys_become_references_to_this_document():
    i18n = _load("i18n")
    text = ("共 {glue:text}`n:d` 条，{glue}`fig` 与 {glue:md}`t`；{glue:text}`v` 无格式；"
            "{glue:text}`book/other.md::x:.2f` 不变，{ref}`见此 <a>` 不变。")
    out = i18n.localize_glue_keys(text, "book/intro.md")
    assert out == ("共 {glue:text}`/book/intro.md::n:d` 条，{glue}`/book/intro.md::fig` 与 "
                   "{glue:md}`/book/intro.md::t`；{glue:text}`/book/intro.md::v:s` 无格式；"
                   "{glue:text}`book/other.md::x:.2f` 不变，{ref}`见此 <a>` 不变。")


def _pot(path: Path, msgids: list[str]) -> None:
    body = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', ""]
    for m in msgids:
        body += [f'msgid "{m}"', 'msgstr ""', ""]
    path.write_text("\n".join(body), encoding="utf-8")


def _translate_all(po: Path) -> None:
    """A translator's pass over ``po``: every message gets the msgstr "译文" + msgid."""
    from babel.messages.pofile import read_po, write_po

    with po.open("rb") as f:
        cat = read_po(f)
    for m in cat:
        if m.id:
            m.string = "译文" + m.id
    with po.open("wb") as f:
        write_po(f, cat, width=0)


def test_an_english_edit_marks_the_translation_fuzzy_and_keeps_the_previous_english(tmp_path):
    lt = _load("locale_tools")
    pot, po = tmp_path / "page.pot", tmp_path / "zh" / "page.po"
    _pot(pot, ["The ratio is {glue:text}`r:.2f` at every depth.", "Removed later."])
    lt.merge(pot, po, "zh_CN")
    _translate_all(po)
    _pot(pot, ["The ratio is {glue:text}`r:.2f` at each depth.", "A new paragraph."])
    counts = lt.merge(pot, po, "zh_CN")
    assert counts == {"messages": 2, "fuzzy": 1, "untranslated": 1, "obsolete": 1}
    text = po.read_text(encoding="utf-8")
    assert '#| msgid "The ratio is {glue:text}`r:.2f` at every depth."' in text
    assert '#~ msgid "Removed later."' in text


def test_an_obsolete_translation_is_revived_when_its_english_returns(tmp_path):
    """A message missing from one extraction (a preview) keeps its translation when it comes back."""
    from babel.messages.pofile import read_po

    lt = _load("locale_tools")
    pot, po = tmp_path / "page.pot", tmp_path / "zh" / "page.po"
    _pot(pot, ["A caption.", "A paragraph."])
    lt.merge(pot, po, "zh_CN")
    _translate_all(po)
    _pot(pot, ["A paragraph."])
    assert lt.merge(pot, po, "zh_CN")["obsolete"] == 1
    _pot(pot, ["A caption.", "A paragraph."])
    assert lt.merge(pot, po, "zh_CN") == {"messages": 2, "fuzzy": 0, "untranslated": 0, "obsolete": 0}
    with po.open("rb") as f:
        assert {m.id: m.string for m in read_po(f) if m.id}["A caption."] == "译文A caption."


def _phrases_po(folder: Path) -> None:
    """A zh_CN ``_phrases.po`` with a translated, a fuzzy (stale) and an empty message."""
    base = folder / "locales" / "zh_CN" / "LC_MESSAGES"
    base.mkdir(parents=True)
    (base / "_phrases.po").write_text("\n".join([
        'msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', "",
        'msgid "the gap is above the bound"', 'msgstr "差距高于界"', "",
        "#, fuzzy", '#| msgid "the gap is below the bound"',
        'msgid "the gap is not above the bound"', 'msgstr "差距低于界"', "",
        'msgid "no gap was measured"', 'msgstr ""', "",
    ]), encoding="utf-8")


def _app(folder: Path):
    from types import SimpleNamespace

    config = SimpleNamespace(language="zh_CN", locale_dirs=["locales"])
    return SimpleNamespace(srcdir=str(folder), config=config)


def test_the_catalog_reader_keeps_only_finished_translations(tmp_path):
    """Mutants: the reader keeps fuzzy messages (a stale translation, here of the opposite
    sentence, glued into the Chinese page) or empty ones (the glued sentence vanishes)."""
    i18n = _load("i18n")
    _load("glue_phrases")
    _phrases_po(tmp_path)
    app = _app(tmp_path)
    assert i18n._catalog(app, "_phrases.po") == {"the gap is above the bound": "差距高于界"}

    from docutils import nodes

    doctree = nodes.paragraph()
    for text in ("the gap is above the bound", "the gap is not above the bound", "no gap was measured"):
        doctree += nodes.inline(text, text, classes=["pasted-text"])
    i18n._translate_glued_wording(app, doctree, "book/x")
    assert [n.astext() for n in doctree.findall(nodes.inline)] == [
        "差距高于界", "the gap is not above the bound", "no gap was measured"]


# ----------------------------------------------------------------------------- figures per edition


def test_figure_texts_are_the_literal_strings_passed_to_t():
    import glue_phrases

    code = 'ax.set_xlabel(t("depth L (layers)"))\nax.set_title(t(\'a "quoted" word\'))\nlabel=t(name)\nfoo.t("x")\n'
    assert glue_phrases.figure_texts(code) == ["depth L (layers)", 'a "quoted" word']  # t(name) and foo.t: not texts


def test_figure_keys_and_the_translated_directive():
    import glue_phrases
    import i18n

    src = ('```{code-cell} ipython3\nglue_figure("fig-a", draw)\n```\n\n```{glue:figure} fig-a\n:alt: x\n```\n\n'
           '```{glue:figure} fig-ab\n```\n\n:::{glue:figure} fig-a\n:::\n')
    assert glue_phrases.figure_keys(src) == ["fig-a"]
    out = i18n.translated_figures(src, "zh_CN")
    assert out.count("{glue:figure} fig-a__zh_CN") == 2  # both fence styles
    assert "{glue:figure} fig-ab\n" in out  # another key, not glued per edition, untouched


def test_figure_messages_gather_pages_modules_and_extras(tmp_path):
    import glue_phrases

    page = tmp_path / "p.md"
    page.write_text('```{code-cell} ipython3\nt("a")\nt("b")\n```\n', encoding="utf-8")
    mod = tmp_path / "m.py"
    mod.write_text('x = t("b")\n', encoding="utf-8")
    msgs = dict(glue_phrases.figure_messages([page], [mod], [("Title", "a row label")]))
    assert list(msgs) == ["a", "b", "Title"]
    assert "p.md" in msgs["b"] and "m.py" in msgs["b"]


def test_the_ledger_filter_is_translated_whole():
    import i18n

    from normlib import ledger
    from normlib.claims import registry

    claims, _ = registry()
    titles = ledger.toc_chapters()
    html = ledger.filter_controls_html(claims.values(), titles)
    ui = {"Chapter": "章节", "Verdict": "判定", "all": "全部", "CORRECT": "正确", "{shown} of {total} claims": "共 {total} 条中的 {shown} 条",
          "Filter the claims": "筛选论断"}
    zh_titles = {titles["rmsnorm"]: "RMSNorm：去掉均值"}
    out = i18n.translate_filter_html(html, ui, zh_titles)
    assert "<label>章节 <select" in out and ">全部</option>" in out and ">正确</option>" in out
    assert ">RMSNorm：去掉均值</option>" in out
    assert 'data-count="共 {total} 条中的 {shown} 条"' in out and 'aria-label="筛选论断"' in out
    assert 'value="CORRECT"' in out and 'data-verdict="CORRECT"' in out  # values the script matches stay


def test_ui_messages_cover_every_string_the_filter_shows():
    """Every visible string of the filter (labels, menu entries, count) is a UI message to translate."""
    import re

    locale_tools = _load("locale_tools")

    from normlib import ledger
    from normlib.claims import registry

    claims, _ = registry()
    html = ledger.filter_controls_html(claims.values(), ledger.toc_chapters())
    titles = set(ledger.toc_chapters().values())
    import html as _html

    shown = {_html.unescape(m.strip()) for m in re.findall(r">([^<>]*[A-Za-z][^<>]*)<", html)} - titles
    shown |= {_html.unescape(a) for a in re.findall(r'(?:data-count|aria-label)="([^"]*)"', html)}
    msgids = {m for m, _ in locale_tools.ui_messages()}
    assert shown - msgids == set(), shown - msgids


def test_the_landing_pages_verdict_table_is_translated_and_the_ui_catalog_has_its_texts():
    """The verdict table is written by normlib.ledger inside a ``verdict-table`` container,
    which gettext does not extract: the Chinese build translates its texts from ``_ui.po``
    (a table left in English was what the rendered Chinese landing page showed)."""
    from types import SimpleNamespace

    from babel.messages.pofile import read_po
    from docutils import nodes

    from normlib.ledger import VERDICT_TABLE_TEXTS

    i18n = _load("i18n")
    with (ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "_ui.po").open("rb") as f:
        ui = {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}
    assert set(VERDICT_TABLE_TEXTS) <= set(ui), set(VERDICT_TABLE_TEXTS) - set(ui)
    box = nodes.container(classes=["verdict-table"])
    para = nodes.paragraph()
    para += nodes.Text("what it means")
    box += para
    other = nodes.paragraph()
    other += nodes.Text("what it means")  # outside the table: left alone
    curly = nodes.paragraph()
    curly += nodes.Text("the source or the book\u2019s computation says otherwise")  # as MyST renders it
    box += curly
    doc = nodes.document(None, None)
    doc += box
    doc += other
    app = SimpleNamespace(config=SimpleNamespace(language="zh_CN"), env_ui=ui)
    i18n._translate_generated(app, doc, "book/intro")
    assert para.astext() == ui["what it means"] and other.astext() == "what it means"
    assert curly.astext() == ui["the source or the book's computation says otherwise"]


def test_the_side_by_side_build_waits_for_a_complete_cache(monkeypatch):
    """`make book` builds the two editions side by side only when nothing is left to execute
    (`locale_tools.py cached` exits 0); one missing chapter sends it down the sequential path."""
    lt = _load("locale_tools")
    monkeypatch.setattr(lt, "missing_executions", lambda: [])
    assert lt.cached() == 0
    monkeypatch.setattr(lt, "missing_executions", lambda: ["warmup-lr"])
    assert lt.cached() == 1
    make = (Path(__file__).resolve().parent.parent / "Makefile").read_text(encoding="utf-8")
    recipe = make.split("\nbook: setup\n", 1)[1].split("\n\n", 1)[0]
    assert "locale_tools.py cached; then" in recipe and "-j2" in recipe.split("else")[0], "the parallel path is not guarded"
    assert "-j" not in recipe.split("else")[1], "the sequential path builds in parallel"


def test_the_site_downloads_are_written_under_a_lock(tmp_path, monkeypatch):
    """Two HTML builds side by side write the same staging folder: both take one lock."""
    sd = _load("site_downloads")
    build = tmp_path / "_build"

    class App:
        outdir = str(build / "html" / "zh")

    class App2:
        outdir = str(build / "singlehtml")

    a, b = sd._lock(App()), sd._lock(App2())
    assert a.lock_file == b.lock_file == str(build / "site-downloads") + ".lock"
    with a:
        assert a.is_locked
        with pytest.raises(Exception):
            b.acquire(timeout=0.1)

    class Builder:
        format = "html"

    App.builder, App.confdir = Builder(), str(tmp_path)
    held = []

    def build_downloads(root, staging):  # records whether another build could take the lock now
        other = sd._lock(App2())
        try:
            other.acquire(timeout=0.1)
            other.release()
            held.append(False)
        except Exception:
            held.append(True)
        (staging / "downloads").mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(sd, "build_downloads", build_downloads)
    sd._on_builder_inited(App())
    (build / "html" / "zh").mkdir(parents=True)
    sd._on_build_finished(App(), None)
    assert held == [True], "the wheel and requirements are written without the lock"
