"""Print the book's single-page HTML to one PDF with headless Chromium (offline).

Usage: ``python _ext/print_pdf.py _build/singlehtml/index.html _build/pdf/book.pdf``
(``make pdf`` runs it after ``jupyter-book build . --builder singlehtml``).

Chromium runs headless with no network access needed: the page, its figures and the
MathJax bundle are all local files. ``--virtual-time-budget`` lets the page's scripts
(MathJax typesetting every formula) finish before the page is printed, so the PDF
shows typeset math, numbered figures, equations and citations as the HTML does.
Debian's package is ``chromium`` (``apt-get install chromium``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--run-all-compositor-stages-before-draw",
    "--virtual-time-budget=120000",
    "--no-pdf-header-footer",
)


def find_browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit(
        "make pdf needs a Chromium browser on PATH (Debian: apt-get install chromium); "
        f"looked for {', '.join(BROWSERS)}"
    )


def print_pdf(page: Path, out: Path, *, timeout: float = 600.0) -> Path:
    if not page.is_file():
        raise SystemExit(f"no {page}: build the single-page HTML first (make pdf does)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        cmd = [find_browser(), *FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={out}", page.resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not out.is_file() or out.stat().st_size == 0:
        raise SystemExit(f"Chromium did not write {out} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    done = print_pdf(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"wrote {done} ({done.stat().st_size / 1e6:.1f} MB)")
