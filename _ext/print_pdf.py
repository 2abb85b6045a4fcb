"""Print the book's single-page HTML to one PDF with headless Chromium (offline).

Usage: ``python _ext/print_pdf.py _build/singlehtml _build/pdf/book.pdf``
(``make pdf`` runs it after ``jupyter-book build . --builder singlehtml``).

The single page is written where the root document lives (``book/intro.html``, with
``index.html`` redirecting to it), but its links to ``_static/`` and ``_images/`` are
relative to the build directory; the page is therefore copied to the build directory
(``print.html``) before it is opened.

Chromium runs headless and reads only local files: the page, its figures and the MathJax
bundle. Playwright drives Debian's Chromium (``_ext/browser.py``); the page is printed
only after MathJax has typeset every formula and every image has decoded, so the PDF
shows the math, the numbered figures, equations and citations as the HTML does, and not
at all when the page logged an error or failed to load a file. Playwright streams the
PDF to the file. Debian's package is ``chromium`` (``apt-get install chromium``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import chromium, find_chromium, open_page  # noqa: E402


def single_page(build: Path) -> Path:
    """The single-page HTML, copied next to its _static/ and _images/ folders."""
    index = build / "index.html"
    if not index.is_file():
        raise SystemExit(f"no {index}: build the single-page HTML first (make pdf does)")
    text = index.read_text(encoding="utf-8")
    redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', text)
    if redirect:
        text = (build / redirect.group(1)).read_text(encoding="utf-8")
    page = build / "print.html"
    page.write_text(text, encoding="utf-8")
    return page


def print_pdf(build: Path, out: Path) -> Path:
    page = single_page(build)
    if find_chromium() is None:
        raise SystemExit("make pdf needs Chromium on PATH (Debian: apt-get install chromium)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with chromium(timeout=600.0) as browser, open_page(browser, page.resolve().as_uri()) as (tab, log):
        untyped = tab.evaluate("[...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container')).length")
        if untyped:
            raise SystemExit(f"{untyped} formulas were not typeset; not printing")
        if log.errors:
            raise SystemExit("the page logged errors; not printing:\n" + "\n".join(log.errors))
        # sphinx-togglebutton opens the exercise solutions when the page is printed
        tab.evaluate("window.dispatchEvent(new Event('beforeprint')); true")
        tab.pdf(
            path=str(out), format="A4", print_background=True, display_header_footer=False,
            margin={"top": "0.6in", "bottom": "0.6in", "left": "0.6in", "right": "0.6in"},
        )
    if not out.is_file() or out.stat().st_size == 0:
        raise SystemExit(f"Chromium did not write {out}")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    done = print_pdf(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"wrote {done} ({done.stat().st_size / 1e6:.1f} MB)")
