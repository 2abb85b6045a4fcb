"""The catalog checker (tests/check_catalogs.py) on synthetic catalogs and on the real ones."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_catalogs", ROOT / "tests" / "check_catalogs.py")
cc = importlib.util.module_from_spec(_spec)
sys.modules["check_catalogs"] = cc  # dataclasses look their module up
_spec.loader.exec_module(cc)

MSGID = ("Of the {glue:text}`intro_n_sourced:d` claims about GPT-2, see {ref}`the depth sweep <pvp-depth>` "
         "and $1/\\sqrt d$ in `q_norm`.")
GOOD = "关于 GPT-2 的 {glue:text}`intro_n_sourced:d` 个论断，见{ref}`深度扫描 <pvp-depth>`，以及 `q_norm` 中的 $1/\\sqrt d$。"


def _po(tmp_path: Path, entries: list[tuple[str, str, bool]], complete: bool = True) -> Path:
    """A locales folder with one catalog zh_CN/LC_MESSAGES/book/page.po of ``entries``."""
    base = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
    base.mkdir(parents=True)
    lines = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', ""]
    for msgid, msgstr, fuzzy in entries:
        if fuzzy:
            lines.append("#, fuzzy")
        esc = lambda s: s.replace("\\", "\\\\").replace('"', '\\"')
        lines += [f'msgid "{esc(msgid)}"', f'msgstr "{esc(msgstr)}"', ""]
    (base / "page.po").write_text("\n".join(lines), encoding="utf-8")
    if complete:
        (tmp_path / "locales" / "zh_CN" / "COMPLETE").write_text("book/page.po\n", encoding="utf-8")
    return tmp_path / "locales"


def _run(locales: Path, **kw) -> tuple[int, str]:
    out = io.StringIO()
    return cc.run(locales, out=out, **kw), out.getvalue()


def test_a_faithful_translation_passes(tmp_path):
    failures, text = _run(_po(tmp_path, [(MSGID, GOOD, False)]))
    assert failures == 0, text
    assert cc.check_message(MSGID, GOOD) == []


@pytest.mark.parametrize("bad, what", [
    (GOOD.replace("{glue:text}`intro_n_sourced:d` ", ""), "role missing"),  # dropped glue role
    (GOOD.replace("intro_n_sourced:d", "intro_n_sourced:.2f"), "role missing"),  # altered glue format
    (GOOD.replace("<pvp-depth>", "<pvp-lemma2>"), "role missing"),  # altered target
    (GOOD.replace("\\sqrt d", "\\sqrt{d}"), "math span missing"),  # altered math
    (GOOD.replace("$1/\\sqrt d$", "$1/\\sqrt d"), "stray `$`"),  # broken math
    (GOOD.replace("`q_norm`", "q_norm"), "inline code missing"),  # dropped code
    (GOOD.replace("个论断", "个论断（共 44 个）"), "number(s) not in the English"),  # typed number
])
def test_a_markup_change_fails(tmp_path, bad, what):
    problems = cc.check_message(MSGID, bad)
    assert any(what in p for p in problems), problems
    failures, text = _run(_po(tmp_path, [(MSGID, bad, False)], complete=False))
    assert failures >= 1 and "MARKUP" in text


def test_numbers_of_the_english_and_names_are_allowed():
    assert cc.check_message("GPT-2 and float16 at step 3", "第 3 步时的 GPT-2 与 float16") == []


def test_a_month_name_allows_its_number_and_no_other():
    """Mainland usage writes 2024 年 7 月 for July 2024: the month's number, and only it, is allowed."""
    assert cc.check_message("released in July 2024", "于 2024 年 7 月发布") == []
    assert any("not in the English" in p for p in cc.check_message("released in July 2024", "于 2024 年 8 月发布"))
    assert any("not in the English" in p for p in cc.check_message("released in 2024", "于 2024 年 7 月发布"))
    assert any("not in the English" in p for p in cc.check_message("Julyan's run", "Julyan 的 7 次运行"))


def test_fuzzy_and_untranslated_fail_a_page_declared_complete(tmp_path):
    failures, text = _run(_po(tmp_path, [(MSGID, GOOD, True)]))
    assert failures == 1 and "INCOMPLETE" in text
    failures, text = _run(_po(tmp_path / "b", [(MSGID, "", False)]))
    assert failures == 1 and "INCOMPLETE" in text


def test_an_undeclared_page_is_reported_not_failed(tmp_path):
    locales = _po(tmp_path, [(MSGID, "", False), ("Plain text.", "", True)], complete=False)
    failures, text = _run(locales)
    assert failures == 0 and "not yet translated" in text
    failures, _ = _run(locales, require_all=True)
    assert failures == 1


def _pending(locales: Path, *names: str) -> Path:
    (locales / "zh_CN" / "PENDING").write_text("# in progress\n" + "".join(f"{n}\n" for n in names), encoding="utf-8")
    return locales


def test_a_pending_page_may_be_incomplete_under_all(tmp_path):
    locales = _pending(_po(tmp_path, [(MSGID, "", False), ("Plain text.", "", True)], complete=False), "book/page.po")
    failures, text = _run(locales, require_all=True)
    assert failures == 0 and "INCOMPLETE" not in text, text


def test_a_pending_page_still_fails_on_markup(tmp_path):
    bad = GOOD.replace("\\sqrt d", "\\sqrt{d}")
    locales = _pending(_po(tmp_path, [(MSGID, bad, False), ("Plain text.", "", False)], complete=False), "book/page.po")
    failures, text = _run(locales, require_all=True)
    assert failures == len(cc.check_message(MSGID, bad)) >= 1 and "MARKUP" in text and "INCOMPLETE" not in text


def test_a_complete_page_must_leave_pending(tmp_path):
    locales = _pending(_po(tmp_path, [(MSGID, GOOD, False)], complete=False), "book/page.po")
    failures, text = _run(locales, require_all=True)
    assert failures == 1 and "remove it from PENDING" in text


@pytest.mark.parametrize("names, what", [(("book/gone.po",), "has no catalog"), (("book/page.po",), "both in COMPLETE")])
def test_pending_names_a_present_catalog_not_declared_complete(tmp_path, names, what):
    locales = _pending(_po(tmp_path, [(MSGID, "", False)], complete=True), *names)
    failures, text = _run(locales)
    assert failures >= 1 and what in text, text


def test_the_pending_banner_follows_the_title():
    spec = importlib.util.spec_from_file_location("i18n_ext", ROOT / "_ext" / "i18n.py")
    i18n = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "_ext"))
    spec.loader.exec_module(i18n)
    src = "---\njupytext: x\n---\n\n```{code-cell}\n# not a title\n```\n(lbl)=\n# The title\n\nBody.\n"
    out = i18n.with_pending_banner(src, "zh_CN")
    assert out.index("# The title") < out.index("译文进行中") < out.index("Body.")
    assert out.count("译文进行中") == 1 and "# not a title\n```" in out
    with pytest.raises(ValueError, match="no title"):
        i18n.with_pending_banner("No title here.\n", "zh_CN")


def test_the_books_catalogs():
    """Every translation keeps its markup, and every catalog is complete (0 fuzzy, 0
    untranslated) except those listed in locales/zh_CN/PENDING, whose pages say that their
    translation is in progress: `make book` builds the Chinese edition of every page."""
    failures, text = _run(ROOT / "locales", require_all=True)
    assert failures == 0, text


@pytest.mark.parametrize("msgstr, ok", [
    ("比界{1} {0} 个标准误", True),
    ("比界高 {0} 个标准误", False),  # {1} (above/below) dropped: the sentence no longer says which
    ("比界{1} {0} 个标准误（{0}）", False),  # {0} twice
    ("比界{1} {0} 个标准误 {2}", False),  # a placeholder the English lacks
])
def test_a_templates_placeholders_are_kept_each_once(msgstr, ok):
    """Mutant: the placeholder rule checks one direction only ("no placeholder the English
    lacks"), so a translation that drops {1} passes."""
    problems = cc.check_message("{0} standard errors {1} the bound", msgstr)
    assert (problems == []) is ok, problems
    if not ok:
        assert any("placeholders" in p for p in problems)


def test_a_link_target_is_kept():
    """Mutant: link targets not compared (a translated link may point elsewhere)."""
    msgid = "See [the article](https://example.org/article#norms) for the setup."
    assert cc.check_message(msgid, "设置见[原文](https://example.org/article#norms)。") == []
    problems = cc.check_message(msgid, "设置见[原文](https://example.org/other)。")
    assert any("link target missing or altered" in p for p in problems), problems


DOC_MSGID = "Calls :func:`layer_norm` and :py:class:`the result <~normlib.norms.NormResult>`; see ``eps``."


@pytest.mark.parametrize("msgstr,ok", [
    ("调用 {func}`layer_norm` 与 {py:class}`结果 <~normlib.norms.NormResult>`；见 ``eps``。", True),
    # Sphinx parses the translation with MyST: a reST role there is not a role, and the link is lost
    ("调用 :func:`layer_norm` 与 :py:class:`结果 <~normlib.norms.NormResult>`；见 ``eps``。", False),
    ("调用 `layer_norm` 与 {py:class}`结果 <~normlib.norms.NormResult>`；见 ``eps``。", False),  # role name dropped
    ("调用 {func}`layernorm` 与 {py:class}`结果 <~normlib.norms.NormResult>`；见 ``eps``。", False),  # target altered
    ("调用 {func}`layer_norm` 与 {class}`结果 <~normlib.norms.NormResult>`；见 ``eps``。", False),  # another role
    ("调用 {func}`layer_norm` 与 {py:class}`结果 <normlib.norms.NormResult>`；见 ``eps``。", False),  # the ~ lost
])
def test_a_docstrings_roles_are_kept_with_their_names_and_targets_as_myst_roles(msgstr, ok):
    # the API reference's docstrings use reST roles; a translation that drops one, or keeps it in
    # reST form (Sphinx parses translations with MyST), loses the link and warns under -W
    assert (cc.check_message(DOC_MSGID, msgstr) == []) is ok


# ----------------------------------------------------------------------------- bold after punctuation
def test_a_closing_bold_after_punctuation_and_before_text_is_caught():
    """CommonMark renders ``**标签：**正文`` with literal asterisks (the closer is not right-flanking);
    ``**标签**：正文``, a closer followed by a space, and an opener after punctuation are fine."""
    from check_catalogs import check_message, unclosed_strong

    assert unclosed_strong("**来源怎么说：**论文假设")
    assert unclosed_strong("见 **正确。**这")
    assert not unclosed_strong("**来源怎么说**：论文假设")
    assert not unclosed_strong("**正确。** 这三个")
    assert not unclosed_strong("注意：**粗体**之后")
    assert not unclosed_strong("`a：**b` 与 $x：**y$")  # inside code and math
    msgid = "**What the source says:** The paper"
    assert any("closing **" in p for p in check_message(msgid, "**来源怎么说：**论文"))
    assert not any("closing **" in p for p in check_message(msgid, "**来源怎么说**：论文"))
