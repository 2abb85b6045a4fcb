"""Checks of the built HTML book (run after `make book`; skipped when there is no build).

`.ci/run` runs this module again after the book build, with Debian's Chromium installed,
so that the offline rendering of the math is checked in a real browser.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"

pytestmark = pytest.mark.skipif(
    not (HTML / "book" / "rmsnorm.html").is_file(), reason="no built book (run `make book` first)"
)


def _pages():
    return sorted((HTML / "book").glob("*.html"))


def test_no_page_loads_scripts_or_styles_from_the_network():
    """Every script and stylesheet is served from the built site (the book reads offline)."""
    bad = []
    for page in _pages() + [HTML / "index.html"]:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]+"', text):
            tag = m.group(0)
            if "<link" in tag and 'rel="stylesheet"' not in tag and "preload" not in tag:
                continue
            bad.append(f"{page.name}: {tag}")
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


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHAPTERS_WITH_MATH = ["layernorm", "rmsnorm", "jacobian", "pre-vs-post", "qk-norm"]


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (CI installs it)")
@pytest.mark.parametrize("chapter", CHAPTERS_WITH_MATH)
def test_math_renders_offline_in_a_real_browser(chapter):
    """Headless Chromium with no network access typesets every formula of a chapter."""
    page = (HTML / "book" / f"{chapter}.html").as_uri()
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--allow-file-access-from-files",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=20000",
            "--dump-dom",
            page,
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    dom = out.stdout
    n_source = (HTML / "book" / f"{chapter}.html").read_text(encoding="utf-8").count('class="math')
    n_math = dom.count("<mjx-container")
    assert n_math > 0, "MathJax did not typeset the page:\n" + out.stderr[-2000:]
    # every math node of the page (inline and display) was typeset
    assert n_math >= n_source, f"{n_math} formulas typeset of {n_source} math nodes"
    assert "<mjx-merror" not in dom, "MathJax reported a TeX error on the page"
