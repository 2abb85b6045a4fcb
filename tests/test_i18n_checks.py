"""The evidence pages' check tables in a translated edition (``_ext/i18n.py``).

A check table is generated (``normlib.book.check_table_md`` writes Markdown, ``CheckTable``
raw HTML), so Sphinx's translation step never sees it: the Chinese build translates its
heads and words from ``_ui.po`` and each check's *what* and *why* from ``_checks.po``,
through the row's check ID. These tests use stand-in checks, not the registry's data.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.pofile import read_po
from docutils import nodes
from docutils.core import publish_doctree

from normlib.book import CheckTable, check_table_md
from normlib.claims import CheckResult, registry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
_spec = importlib.util.spec_from_file_location("i18n", ROOT / "_ext" / "i18n.py")
i18n = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("i18n", i18n)  # dataclasses defined in it look their module up
_spec.loader.exec_module(i18n)
_lt_spec = importlib.util.spec_from_file_location("locale_tools", ROOT / "_ext" / "locale_tools.py")
locale_tools = importlib.util.module_from_spec(_lt_spec)
_lt_spec.loader.exec_module(locale_tools)

CHECK_TABLE_HEADS, CHECK_RESULT_HEADS, PASS_MARK = i18n.CHECK_TABLE_HEADS, i18n.CHECK_RESULT_HEADS, i18n.PASS_MARK

UI = {"check": "检验", "what is measured": "测量的是什么", "value": "值", "window": "窗口",
      "why this window": "为何取此窗口", "rejects": "会被拒绝的值", "what": "测量的是什么",
      "measured": "测量值", "reference": "参照值", "tolerance": "容差", "must hold": "必须成立",
      "exact": "须精确相等", "reads {0} at the printed precision": "按印出的精度读作 {0}",
      "in [{0}, {1}]": "落在 [{0}, {1}] 内", "True": "成立", "False": "不成立", PASS_MARK: "✓ 通过"}


def _check(cid, what, why, tol):
    return SimpleNamespace(id=cid, what=what, why=why, tolerance=lambda: tol)


CHECKS = {
    "X1a": _check("X1a", "the fit's slope", "the paper's printed digits: half a unit", "in [0.2, 0.995]"),
    "X1b": _check("X1b", "the model holds", "False if the sum rule fails", "must hold"),
    "X1c": _check("X1c", "the printed ratio", "the article's four decimals", "reads 0.0190 at the printed precision"),
}
TEXTS = {"the fit's slope": "拟合的斜率", "the paper's printed digits: half a unit": "论文印出的位数：半个单位",
         "the model holds": "模型成立", "False if the sum rule fails": "若求和规则不成立则为 False",
         "the printed ratio": "印出的比值", "the article's four decimals": "文章的四位小数"}


def _doctree(md: str):
    """``md`` parsed by MyST into a docutils tree, smart quotes on (as Sphinx builds it)."""
    from myst_parser.parsers.docutils_ import Parser

    return publish_doctree(md, parser=Parser(), settings_overrides={
        "smart_quotes": True, "report_level": 5, "halt_level": 5, "myst_enable_extensions": ["dollarmath"]})


def _table_md(heads, rows):
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _cells(tree):
    table = next(tree.findall(nodes.table))
    heads = [e.astext() for e in table.findall(nodes.entry) if isinstance(e.parent.parent, nodes.thead)]
    body = [[c.astext() for c in row.children] for tb in table.findall(nodes.tbody) for row in tb.children]
    return heads, body


def test_the_heads_are_the_ones_normlib_writes():
    """The edition recognizes a check table by its heads: a head renamed in normlib.book, or
    the pass mark, must be renamed here too (or the Chinese tables silently stay English)."""
    _, checks = registry()
    first = check_table_md([next(iter(checks))], page="rmsnorm").splitlines()[0]
    assert tuple(c.strip() for c in first.strip().strip("|").split("|")) == CHECK_TABLE_HEADS
    k = _check("X2", "w", "why", "must hold")
    html_text = CheckTable(CheckResult(k, True, None, "holds"))._repr_html_()
    assert re.findall(r"<th>([^<]*)</th>", html_text) == list(CHECK_RESULT_HEADS)
    assert f'<td class="pass">{PASS_MARK}</td>' in html_text
    md = CheckTable(CheckResult(k, True, None, "holds"))._repr_markdown_().splitlines()[0]
    assert tuple(c.strip() for c in md.strip().strip("|").split("|")) == CHECK_RESULT_HEADS


def test_a_check_tables_cells_are_translated_through_the_rows_check_id():
    """Mutants: the heads or a column left English; the window's template not applied; the
    rejected boolean not translated; smart quotes (fit’s) making the cell look foreign."""
    md = _table_md(CHECK_TABLE_HEADS, [
        ["`X1a`", "the fit's slope", "**0.5**", "in [0.2, 0.995]", "the paper's printed digits: half a unit", "1.5"],
        ["`X1b`", "the model holds", "**成立**", "must hold", "False if the sum rule fails", "False"],
        ["`X1c`", "the printed ratio", "**0.0190**", "reads 0.0190 at the printed precision",
         "the article's four decimals", ""]])
    tree = _doctree(md)
    assert "fit’s" in tree.astext()  # the tree holds what Sphinx makes of the Markdown
    assert i18n.translate_check_tables(tree, UI, TEXTS, CHECKS) == 3
    heads, body = _cells(tree)
    assert heads == [UI[h] for h in CHECK_TABLE_HEADS]
    assert body[0] == ["X1a", "拟合的斜率", "0.5", "落在 [0.2, 0.995] 内", "论文印出的位数：半个单位", "1.5"]
    assert body[1] == ["X1b", "模型成立", "成立", "必须成立", "若求和规则不成立则为 False", "不成立"]
    assert body[2] == ["X1c", "印出的比值", "0.0190", "按印出的精度读作 0.0190", "文章的四位小数", ""]


def test_a_cell_that_is_not_its_checks_text_and_another_table_are_left_alone():
    """Mutants: a cell replaced whatever it holds (a hand-made table with a check ID in its
    first column would show another text); any table with six columns taken for a check table."""
    md = _table_md(CHECK_TABLE_HEADS, [["`X1a`", "something else", "**0.5**", "in [0, 1]", "another reason", "1.5"]])
    tree = _doctree(md)
    i18n.translate_check_tables(tree, UI, TEXTS, CHECKS)
    _, body = _cells(tree)
    assert body[0] == ["X1a", "something else", "0.5", "in [0, 1]", "another reason", "1.5"]
    other = _doctree(_table_md(("check", "what", "value", "window", "why", "rejects"),
                               [["`X1a`", "the fit's slope", "0.5", "in [0.2, 0.995]", "x", "1.5"]]))
    assert i18n.translate_check_tables(other, UI, TEXTS, CHECKS) == 0
    assert _cells(other)[1][0][1] == "the fit’s slope"


def test_a_text_without_a_translation_stays_english():
    """Mutant: a missing translation replaced by an empty cell (a check would lose its label)."""
    tree = _doctree(_table_md(CHECK_TABLE_HEADS, [["`X1a`", "the fit's slope", "0.5", "in [0.2, 0.995]", "the paper's printed digits: half a unit", ""]]))
    i18n.translate_check_tables(tree, UI, {}, CHECKS)
    assert _cells(tree)[1][0][1] == "the fit’s slope"


@pytest.mark.parametrize("text, expected", [
    ("must hold", "必须成立"), ("exact", "须精确相等"),
    ("in [0.2, 0.995]", "落在 [0.2, 0.995] 内"), ("in [-∞, 0.5]", "落在 [-∞, 0.5] 内"),
    ("reads 0.0190 at the printed precision", "按印出的精度读作 0.0190"),
    ("atol 1e-12", "atol 1e-12"), ("atol 1e-12 + rtol 1e-09", "atol 1e-12 + rtol 1e-09"),
])
def test_the_window_is_translated_with_its_values_kept(text, expected):
    """Mutants: the values swapped or dropped; a window with no template returned empty."""
    assert i18n.translate_tolerance(text, UI) == expected


def test_the_result_table_html_is_translated_and_escaped():
    """``CheckTable``'s raw HTML: heads, the row's what (matched after unescaping), the shown
    ``holds``, the window and the pass mark. Mutants: the what compared still escaped; the
    translation not escaped; the heads left English."""
    k = _check("X2", "a & b <c>", "why", "must hold")
    html_text = CheckTable(CheckResult(k, True, None, "holds"))._repr_html_()
    out = i18n.translate_check_html(html_text, UI, {"a & b <c>": "甲 & 乙 <丙>"}, {"X2": k}, holds="成立")
    assert "<td>甲 &amp; 乙 &lt;丙&gt;</td>" in out
    assert "<b>成立</b>" in out and "<td>必须成立</td>" in out and "✓ 通过" in out
    assert all(f"<th>{UI[h]}</th>" in out for h in CHECK_RESULT_HEADS if h)
    assert "<th>what</th>" not in out and PASS_MARK not in out


def test_the_check_catalog_template_holds_every_checks_what_and_why():
    """Mutant: the extraction skipping the why column (or the checks of one claim)."""
    _, checks = registry()
    msgids = {m for m, _ in locale_tools.check_messages()}
    assert msgids == {k.what for k in checks.values()} | {k.why for k in checks.values()}


def test_every_checks_text_has_a_chinese_translation():
    """The Chinese edition shows no check-table text in English: ``_checks.po`` translates
    every check's what and why, none fuzzy, and the heads and window words are in ``_ui.po``."""
    _, checks = registry()
    with (ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "_checks.po").open("rb") as f:
        done = {m.id for m in read_po(f) if m.id and m.string and not m.fuzzy}
    missing = sorted(({k.what for k in checks.values()} | {k.why for k in checks.values()}) - done)
    assert not missing, f"{len(missing)} check texts without a translation, e.g. {missing[:3]}"
    with (ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "_ui.po").open("rb") as f:
        ui = {m.id for m in read_po(f) if m.id and m.string and not m.fuzzy}
    words = {h for h in CHECK_TABLE_HEADS + CHECK_RESULT_HEADS if h} | set(i18n.CHECK_UI_STRINGS) | {PASS_MARK}
    assert words <= ui, sorted(words - ui)


# ----------------------------------------------------------------------------- other output tables

_gp_spec = importlib.util.spec_from_file_location("glue_phrases", ROOT / "_ext" / "glue_phrases.py")
glue_phrases = sys.modules.get("glue_phrases") or importlib.util.module_from_spec(_gp_spec)
if "glue_phrases" not in sys.modules:
    sys.modules["glue_phrases"] = glue_phrases
    _gp_spec.loader.exec_module(glue_phrases)

TABLES = glue_phrases.Phrases.from_catalog({"seeds that blow up": "发生爆炸的种子", "0 of 8": "8 个中的 0 个",
                                            "smallest overflowing /": "最小溢出值 /", "a & b": "甲 & 乙"})


def _output(md: str, classes=("cell_output",)):
    tree = _doctree(md)
    table = next(tree.findall(nodes.table))
    box = nodes.container(classes=list(classes))
    table.replace_self(box)
    box += table
    return tree


def test_a_printed_table_is_translated_with_its_numbers_taken_over():
    """Mutants: a recorded text with numbers matched only exactly (2 of 8 stays English);
    the math of a cell translated; a table outside any output touched; a check table taken."""
    md = _table_md(("seeds that blow up", "ratio"), [["2 of 8", "smallest overflowing / $T$"]])
    tree = _output(md)
    assert i18n.translate_output_tables(tree, TABLES) == 3
    heads, body = _cells(tree)
    assert heads == ["发生爆炸的种子", "ratio"]
    assert body[0][0] == "8 个中的 2 个"
    assert body[0][1].startswith("最小溢出值 /") and next(tree.findall(nodes.math)).astext() == "T"
    prose = _doctree(md)  # the same table in the page's own text: Sphinx's catalogs translate it
    assert i18n.translate_output_tables(prose, TABLES) == 0
    glued = _output(md, classes=("output", "text_markdown"))  # a glued output
    assert i18n.translate_output_tables(glued, TABLES) == 3
    checks = _output(_table_md(("check", "seeds that blow up"), [["`X1a`", "0 of 8"]]))
    assert i18n.translate_output_tables(checks, TABLES) == 0


def test_a_printed_html_table_is_translated_and_escaped():
    """Mutants: the cell compared still escaped (a &amp; b is never found); the translation
    not escaped (a bare & in the page)."""
    out = i18n.translate_output_table_html("<table><tr><th>a &amp; b</th><td>5 of 8</td><td>other</td></tr></table>", TABLES)
    assert out == "<table><tr><th>甲 &amp; 乙</th><td>8 个中的 5 个</td><td>other</td></tr></table>"
    # the note printed with an HTML table (mutant: only th and td looked at; a tag's attributes
    # breaking the match)
    out = i18n.translate_output_table_html('<table></table><p class="note">seeds that blow up</p><p>other</p>', TABLES)
    assert out == '<table></table><p class="note">发生爆炸的种子</p><p>other</p>'


def test_a_glued_html_table_is_found_as_an_output():
    """MyST-NB pastes a glued HTML output as a raw node that itself carries the class
    ``output`` (no container around it). Mutant: only the ancestors looked at."""
    raw = nodes.raw("", "<table><tr><th>seeds that blow up</th></tr></table>", format="html",
                    classes=["output", "text_html"])
    section = nodes.section()
    section += raw
    assert i18n._in_cell_output(raw)
    assert not i18n._in_cell_output(nodes.raw("", "<table></table>", format="html"))


def test_the_table_texts_are_read_from_the_english_page():
    """Mutants: math or code read as text; the check tables included (they are _checks.po's);
    a glued output's table missed."""
    page = """<article>
    <div class="cell_output"><table><thead><tr><th>check</th><th>what</th></tr></thead>
      <tbody><tr><td>X</td><td>checked words</td></tr></tbody></table>
    <table><thead><tr><th>seeds that <span class="math notranslate">\\(T\\)</span> blow up</th></tr></thead>
      <tbody><tr><td><code>code here</code> 0 of 8</td><td>12</td></tr></tbody></table></div>
    <div class="output text_html"><table><tr><th>glued head</th></tr></table></div>
    <table><tr><td>prose table</td></tr></table></article>"""
    assert glue_phrases.table_texts(page) == ["seeds that", "blow up", "0 of 8", "glued head"]


# ----------------------------------------------------------------------------- citations


@pytest.mark.parametrize("authors, expected", [
    (["Liu, Liyuan", "Liu, Xiaodong", "Gao, Jianfeng"], "Liu 等人"),
    (["Nguyen, Toan", "Salazar, Julian"], "Nguyen 与 Salazar"),
    (["Dehghani, Mostafa"], "Dehghani"),
])
def test_the_chinese_edition_cites_with_chinese_joiners(authors, expected):
    """Mutants: the style's et al. or "and" left English; the style registered under another
    name than the one the Chinese build asks for (sphinxcontrib-bibtex would fail or fall back)."""
    from pybtex.database import Entry, Person

    style = i18n.zh_reference_style()()
    entry = Entry("article", persons={"author": [Person(a) for a in authors]}, fields={"year": "2020", "title": "t"})
    names = style.person.names("author", full=False)
    assert names.format_data({"entry": entry, "style": style}).render_as("text") == expected
    i18n._register_reference_styles()
    from sphinxcontrib.bibtex.plugin import find_plugin

    assert find_plugin("sphinxcontrib.bibtex.style.referencing", i18n.REFERENCE_STYLES["zh_CN"]) is not None
    assert f'"bibtex_reference_style": "{i18n.REFERENCE_STYLES["zh_CN"]}"' in (ROOT / "_ext" / "locale_tools.py").read_text()


def test_the_chinese_edition_punctuates_citations_in_chinese(monkeypatch):
    """[Nguyen 与 Salazar，2019；Wang 等人，2022，表 3]: Chinese commas between author, year and
    post-text, ； between works. Mutants: the English edition's ASCII ", " left in a
    parenthetical or a textual citation."""
    from pybtex.database import Entry, Person
    from pybtex.richtext import BaseMultipartText
    from sphinxcontrib.bibtex.style import template
    from sphinxcontrib.bibtex.style.referencing import format_references

    # render the references as plain text (the Sphinx reference node needs a builder)
    monkeypatch.setattr(template.SphinxReferenceText, "render", BaseMultipartText.render)
    style = i18n.zh_reference_style()()

    def ref(authors, year, post=""):
        entry = Entry("article", persons={"author": [Person(a) for a in authors]}, fields={"year": year, "title": "t"})
        return entry, None, template.SphinxReferenceInfo(None, "a", "b", "id", None, "", post)

    refs = [ref(["Nguyen, Toan", "Salazar, Julian"], "2019"),
            ref(["Wang, Hongyu", "Ma, Shuming", "Dong, Li"], "2022", "表 3")]
    assert format_references(style, "p", refs).render_as("text") == "[Nguyen 与 Salazar，2019；Wang 等人，2022，表 3]"
    assert format_references(style, "t", refs).render_as("text") == "Nguyen 与 Salazar [2019]；Wang 等人 [2022，表 3]"


def test_a_printed_note_is_translated_and_printed_plain_text_is_not():
    """A Markdown note a cell prints (a paragraph in its output) is translated like a table;
    a printed line (plain-text output, a literal block) stays as the code printed it.
    Mutants: literal blocks translated; only tables looked at."""
    box = nodes.container(classes=["cell_output"])
    box += nodes.paragraph("", "", nodes.Text("seeds that blow up"))
    box += nodes.literal_block("", "seeds that blow up")
    tree = nodes.document(None, None)
    tree += box
    assert i18n.translate_output_tables(tree, TABLES) == 1
    assert box.children[0].astext() == "发生爆炸的种子" and box.children[1].astext() == "seeds that blow up"
    page = ('<article><div class="cell_output"><p>seeds that blow up</p><pre>printed line here</pre></div>'
            '<p>prose here</p></article>')
    assert glue_phrases.table_texts(page) == ["seeds that blow up"]
