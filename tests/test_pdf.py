"""Checks of the book's PDF (``make pdf``): every chapter is in it, with typeset math and glued numbers.

Marked ``rendered`` (run after a build): ``pytest -m rendered tests/test_pdf.py``.
The text is read with ``pdftotext`` (Debian's poppler-utils).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "_build" / "pdf" / "book.pdf"

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not PDF.is_file(), reason="no PDF (run `make pdf` first)"),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext is not installed (poppler-utils)"),
]


def _titles() -> list[str]:
    """The H1 title of every page in the table of contents."""
    pages = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    titles = []
    for page in pages:
        m = re.search(r"^# (.+)$", (ROOT / f"{page}.md").read_text(encoding="utf-8"), flags=re.M)
        titles.append(m.group(1).strip())
    return titles


@pytest.fixture(scope="module")
def text() -> str:
    out = subprocess.run(["pdftotext", "-layout", str(PDF), "-"], capture_output=True, text=True, check=True).stdout
    return re.sub(r"\s+", " ", out)


def _plain(title: str) -> str:
    # titles may hold inline math or markup: compare the words only
    return re.sub(r"\s+", " ", re.sub(r"[$`*]|\\[a-z]+", "", title)).strip()


@pytest.mark.parametrize("title", _titles())
def test_every_page_title_is_in_the_pdf(text, title):
    words = _plain(title)
    assert words.lower() in text.lower(), f"title {title!r} not found in the PDF text"


def test_glued_numbers_and_numbered_items_survive(text):
    for number in ("0.0189", "3.7342", "1.58e-05"):
        assert number in text, f"the glued number {number} is not in the PDF"
    assert re.search(r"Fig\. \d+(\.\d+)*", text), "no numbered figure caption in the PDF"
    assert re.search(r"(Theorem|Lemma|Proposition) \d+(\.\d+)*", text), "no numbered proof box in the PDF"
    assert re.search(r"\(\d+(\.\d+)*\)", text), "no equation number in the PDF"
    assert re.search(r"\[[A-Z][^\]]{0,80}, (19|20)\d\d[a-z]?\]", text), "no author-year citation in the PDF"


def test_math_is_typeset_not_raw_tex(text):
    """MathJax removes the \\( \\) and \\[ \\] delimiters of every formula it typesets.

    (TeX inside code, such as a plot label, is legitimate and has no such delimiters.)
    """
    raw = re.findall(r"\\\(.{0,60}?\\\)|\\\[.{0,60}", text)
    assert not raw, f"untypeset formulas in the PDF: {raw[:5]}"


# ----------------------------------------------------------------------------- the Chinese PDF

PDF_ZH = ROOT / "_build" / "pdf" / "book-zh.pdf"
LOCALE = ROOT / "locales" / "zh_CN" / "LC_MESSAGES"
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def _zh_titles() -> list[str]:
    """The Chinese title of every page, read from its catalog (the msgstr of its H1)."""
    from babel.messages.pofile import read_po

    pages = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for page, title in zip(pages, _titles()):
        po = LOCALE / f"{page}.po"
        with po.open("rb") as f:
            cat = read_po(f)
        m = cat.get(title)
        out.append(m.string if m is not None and m.string else title)
    return out


@pytest.fixture(scope="module")
def text_zh() -> str:
    if not PDF_ZH.is_file():
        pytest.skip("no Chinese PDF (make pdf builds it)")
    out = subprocess.run(["pdftotext", "-layout", str(PDF_ZH), "-"], capture_output=True, text=True, check=True).stdout
    return re.sub(r"\s+", " ", out)


@pytest.mark.parametrize("title", _zh_titles())
def test_every_chinese_title_is_in_the_chinese_pdf(text_zh, title):
    words = _plain(title)
    assert CJK.search(words) or words.isascii(), f"title {title!r} is neither Chinese nor a name"
    assert words.replace(" ", "") in text_zh.replace(" ", ""), f"title {title!r} not found in the Chinese PDF"


def _embedded_named_fonts(pdf: Path) -> list[tuple[str, str]]:
    """(PostScript name, type) of every named font pdffonts lists, subset prefix removed."""
    out = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout
    fonts = []
    for line in out.splitlines()[2:]:
        name = line.split()[0]
        if name != "[none]":
            fonts.append((name.split("+", 1)[-1], line[37:54].strip()))
    return fonts


def _font_file(postscript_name: str) -> str | None:
    """The installed file of exactly this PostScript name (fc-match falls back to another font: refused)."""
    out = subprocess.run(["fc-match", "-f", "%{file}|%{postscriptname}", f":postscriptname={postscript_name}"],
                         capture_output=True, text=True).stdout
    path, _, found = out.partition("|")
    return path if found == postscript_name else None


def _cmap(path: str, postscript_name: str) -> set[int]:
    from fontTools.ttLib import TTCollection, TTFont

    fonts = TTCollection(path).fonts if path.endswith((".ttc", ".otc")) else [TTFont(path)]
    for f in fonts:
        if f["name"].getDebugName(6) == postscript_name:
            return set(f.getBestCmap())
    raise AssertionError(f"{path} holds no font named {postscript_name}")


def test_chinese_pdf_embeds_a_cjk_font_that_covers_every_character(text_zh):
    """No tofu: a named CJK TrueType font is embedded, and every CJK character of the text is in its map.

    Chromium draws a CFF font (Noto Sans CJK) as unnamed Type 3 fonts, whose coverage cannot be
    read; ``make pdf`` prints the Chinese edition's CJK characters with a TrueType font
    (``_ext/print_pdf.py``), so the characters are checked against the map of the font that drew
    them. Synthetic bold (the font has no bold face) is drawn from the same glyphs as Type 3.
    """
    if shutil.which("pdffonts") is None or shutil.which("fc-match") is None:
        pytest.skip("pdffonts or fc-match missing")
    chars = {ord(c) for c in text_zh if CJK.match(c)}
    assert len(chars) > 500, "the Chinese PDF holds too little Chinese text"
    covered: set[int] = set()
    cjk_fonts = []
    for name, kind in _embedded_named_fonts(PDF_ZH):
        path = _font_file(name)
        if path is None:  # a web font of the page (the theme's icons, MathJax's): no CJK in it
            continue
        cmap = _cmap(path, name)
        if len(cmap & chars) > 100:
            cjk_fonts.append((name, kind))
        covered |= cmap
    assert cjk_fonts, "no named CJK font is embedded in the Chinese PDF"
    assert all(kind == "CID TrueType" for _, kind in cjk_fonts), cjk_fonts
    missing = sorted(chr(c) for c in chars - covered)
    assert not missing, f"characters no embedded font covers (drawn as tofu): {''.join(missing[:40])}"

