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

The Chinese edition is printed with a TrueType CJK font (``PRINT_CJK_FONT``, Debian's
``fonts-wqy-zenhei``) for its Chinese characters only (a ``unicode-range`` face put first in
the theme's three font stacks; Latin text keeps the theme's fonts). Chromium's PDF backend
(Skia) embeds a TrueType font as a subsetted CID font, but draws a CFF-flavoured one, which
Noto Sans CJK is, as thousands of unnamed Type 3 fonts: larger, unhinted, and impossible to
check for coverage.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import chromium, find_chromium, open_page  # noqa: E402

PRINT_CJK_FONT = "WenQuanYi Zen Hei"
# CJK radicals to CJK unified ideographs, compatibility ideographs, fullwidth forms
CJK_RANGES = "U+2E80-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF"


def cjk_print_style(family: str) -> str:
    """The CSS that draws CJK characters (only) with ``family``, put first in the theme's font stacks."""
    if not family or '"' in family or "\\" in family:
        raise ValueError(f"not a plain font family name: {family!r}")
    face = f'@font-face {{ font-family: "cjk-print"; src: local("{family}"); unicode-range: {CJK_RANGES}; }}'
    # the theme's stacks are built from two system lists (its variables/_fonts.scss)
    system = {"base": "base", "heading": "base", "monospace": "monospace"}
    stacks = " ".join(
        f"--pst-font-family-{v}: \"cjk-print\", var(--pst-font-family-{s}-system);"
        for v, s in system.items())
    return face + "\nhtml { " + stacks + " }"


def installed_family(family: str) -> bool:
    """Whether fontconfig knows a font of exactly this family."""
    import subprocess

    out = subprocess.run(["fc-list", f":family={family}", "family"], capture_output=True, text=True).stdout
    return bool(out.strip())


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


def print_pdf(build: Path, out: Path, *, cjk_font: str | None = None) -> Path:
    """Print the single page of ``build`` to ``out``; ``cjk_font`` draws its CJK characters."""
    page = single_page(build)
    if find_chromium() is None:
        raise SystemExit("make pdf needs Chromium on PATH (Debian: apt-get install chromium)")
    if cjk_font is not None and not installed_family(cjk_font):
        raise SystemExit(f"the Chinese PDF needs the font {cjk_font!r} (Debian: apt-get install fonts-wqy-zenhei)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with chromium(timeout=600.0) as browser, open_page(browser, page.resolve().as_uri()) as (tab, log):
        untyped = tab.evaluate("[...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container')).length")
        if untyped:
            raise SystemExit(f"{untyped} formulas were not typeset; not printing")
        if log.errors:
            raise SystemExit("the page logged errors; not printing:\n" + "\n".join(log.errors))
        if cjk_font is not None:
            tab.add_style_tag(content=cjk_print_style(cjk_font))
            tab.evaluate("document.fonts.ready.then(() => true)")
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
