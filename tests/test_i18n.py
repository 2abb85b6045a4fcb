"""The translated editions' tools: glue keys in translations, catalog merges (no Sphinx build)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
