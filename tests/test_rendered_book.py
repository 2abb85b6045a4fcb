"""Checks of the built HTML book, in files and in a real headless browser.

These tests read ``_build/html`` and are marked ``rendered``: ``make test`` leaves them
out (it runs before any build), and ``.ci/run`` runs them after ``make book`` with
Debian's Chromium installed: ``pytest -m rendered tests/test_rendered_book.py``.
Every page must load with no network, typeset every formula, decode every image and log
no console error; chapter pages must offer their executed notebook; exercises must come
with their solutions.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
from browser import Browser, find_chromium  # noqa: E402  (_ext/browser.py)

HTML = ROOT / "_build" / "html"
BOOK = ROOT / "book"

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not (HTML / "book" / "rmsnorm.html").is_file(), reason="no built book (run `make book` first)"),
]
needs_browser = pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed (CI installs it)")


def _toc_pages() -> list[str]:
    """Every page of the table of contents, in reading order (e.g. "book/rmsnorm")."""
    return re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _is_notebook(page: str) -> bool:
    head = (ROOT / f"{page}.md").read_text(encoding="utf-8")[:2000]
    return "kernelspec:" in head


def _source(page: str) -> str:
    return (ROOT / f"{page}.md").read_text(encoding="utf-8")


PAGES = _toc_pages()


def test_no_page_loads_scripts_or_styles_from_the_network():
    """Every script and stylesheet is served from the built site (the book reads offline)."""
    bad = []
    for page in PAGES + ["index"]:
        text = (HTML / f"{page}.html").read_text(encoding="utf-8")
        for m in re.finditer(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]+"', text):
            tag = m.group(0)
            if "<link" in tag and 'rel="stylesheet"' not in tag and "preload" not in tag:
                continue
            bad.append(f"{page}: {tag}")
    assert not bad, "external resources:\n" + "\n".join(bad)


def test_mathjax_is_local():
    """MathJax is loaded from _static (copied from the PyPI package django-static-mathjax), never from a CDN."""
    text = (HTML / "book" / "rmsnorm.html").read_text(encoding="utf-8")
    assert re.search(r'<script[^>]+src="\.\./_static/mathjax/tex-chtml\.js', text)
    assert (HTML / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_rmsnorm_chapter_shows_the_article_numbers_from_execution():
    """The glued demo numbers appear as pasted text (acceptance criterion of the book)."""
    text = (HTML / "book" / "rmsnorm.html").read_text(encoding="utf-8")
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', text)
    for number in ("0.0189", "3.7342", "1.58e-05"):
        assert number in pasted, f"{number} is not pasted from execution in rmsnorm.html"


@pytest.mark.parametrize("page", [p for p in PAGES if _is_notebook(p)])
def test_every_chapter_offers_its_executed_notebook(page):
    """The download menu links the executed .ipynb, which exists and carries outputs."""
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    m = re.search(r'<a href="([^"]+\.ipynb)"[^>]*download-notebook-button', text)
    assert m, f"{page}.html has no .ipynb download button"
    target = (HTML / page).parent / m.group(1)
    assert target.resolve().is_file(), f"{m.group(1)} does not exist in the built site"
    nb = json.loads(target.read_text(encoding="utf-8"))
    n_out = sum(len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code")
    assert n_out > 0, f"{target.name} has no outputs: it would open unexecuted"
    assert re.search(r'<a href="[^"]+\.md"[^>]*download-source-button', text), f"{page}.html has no .md download"


@pytest.mark.parametrize("page", [p for p in PAGES if "{exercise}" in _source(p)])
def test_exercises_come_with_their_solutions(page):
    """Each exercise renders as an exercise box, with a folded solution after it."""
    n_src = len(re.findall(r"^```\{exercise\}", _source(page), flags=re.M))
    n_sol = len(re.findall(r"^```\{solution-start\}", _source(page), flags=re.M))
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    assert n_sol == n_src, f"{page}: {n_src} exercises but {n_sol} solutions"
    assert len(re.findall(r'class="[^"]*\bexercise\b[^"]*admonition', text)) == n_src
    assert len(re.findall(r'class="[^"]*\bsolution\b[^"]*\bdropdown\b', text)) == n_src


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


# prose with TeX left in it: a formula MyST did not recognize, or MathJax did not typeset
_RAW_TEX = re.compile(r"\$\$|\\(?:frac|sqrt|mathrm|mathbb|left|right|begin|end|sum|hat|odot|epsilon|sigma|lVert|rVert)\b")

_PAGE_REPORT = """(() => {
  const maths = [...document.querySelectorAll('.math')];
  const untyped = maths.filter(m => !m.querySelector('mjx-container')).length;
  const merror = document.querySelectorAll('mjx-merror').length;
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const article = document.querySelector('article') || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, .math, .cell_input').forEach(e => e.remove());
  return {n_math: maths.length, untyped, merror, images, prose: copy.textContent};
})()"""


@needs_browser
@pytest.mark.parametrize("page", PAGES + ["index"])
def test_page_renders_in_a_real_browser(browser, page):
    """Headless Chromium, offline: every formula typeset, every image decoded, no console error."""
    browser.open((HTML / f"{page}.html").as_uri())
    r = browser.evaluate(_PAGE_REPORT)
    assert r["untyped"] == 0 and r["merror"] == 0, f"{page}: {r['untyped']} of {r['n_math']} formulas not typeset, {r['merror']} MathJax errors"
    assert not r["images"], f"{page}: images that did not decode: {r['images']}"
    raw = sorted(set(_RAW_TEX.findall(r["prose"])))
    assert not raw, f"{page}: raw TeX in the prose: {raw}"
    assert not browser.errors, f"{page}: console errors: {browser.errors}"


@needs_browser
def test_search_works_offline(browser):
    """The built-in search finds a chapter from the local index, with no network."""
    import time

    browser.open((HTML / "search.html").as_uri() + "?q=RMSNorm")
    deadline = time.monotonic() + 30
    hits = []
    while time.monotonic() < deadline:
        hits = browser.evaluate("[...document.querySelectorAll('#search-results li a')].map(a => a.getAttribute('href'))")
        if hits:
            break
        time.sleep(0.2)
    assert any("rmsnorm" in h for h in hits), f"search for RMSNorm found {hits}"
    assert not browser.errors, f"search page: console errors: {browser.errors}"
