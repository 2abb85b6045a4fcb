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
