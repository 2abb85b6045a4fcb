"""Build a few pages of the book on their own, for reading them as a reader will (not for CI).

``make pages CH="rmsnorm"`` (or ``python _ext/build_pages.py rmsnorm [more ...]``) writes a
table of contents holding only the named chapters, each with its evidence page
(``book/evidence/<chapter>.md``) when it exists, and builds them into ``_build/pages/`` with
the book's own configuration and extensions, executing just those pages (their own
execution cache under ``_build/pages/``, so the book's cache is untouched). References to
pages outside the selection cannot resolve, so the build runs without ``-W``; everything
else (glue, the ``{article}`` role, figures, proof boxes) renders as in the book. Open
``_build/pages/_build/html/book/<chapter>.html``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def toc(chapters: list[str]) -> str:
    """The YAML of a table of contents with the chapters (and their evidence pages)."""
    first, *rest = chapters
    lines = ["format: jb-book", f"root: book/{first}"]
    ev = [f"book/evidence/{first}"] if (ROOT / "book" / "evidence" / f"{first}.md").is_file() else []
    entries = [(c, (ROOT / "book" / "evidence" / f"{c}.md").is_file()) for c in rest]
    if ev or entries:
        lines.append("chapters:")
        for e in ev:
            lines.append(f"  - file: {e}")
        for c, has_ev in entries:
            lines.append(f"  - file: book/{c}")
            if has_ev:
                lines.append("    sections:")
                lines.append(f"      - file: book/evidence/{c}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for c in argv:
        if not (ROOT / "book" / f"{c}.md").is_file():
            print(f"no chapter book/{c}.md")
            return 2
    out = ROOT / "_build" / "pages"
    out.mkdir(parents=True, exist_ok=True)
    toc_path = out / "_toc.yml"
    toc_path.write_text(toc(argv), encoding="utf-8")
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "--toc", str(toc_path),
           "--path-output", str(out), "--keep-going"]
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
