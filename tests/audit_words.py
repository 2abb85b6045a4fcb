"""Count audit talk in the main line of a chapter: check IDs and tolerance words.

A chapter is a lecture: the reader's line of argument carries claim IDs (``C3.6``) at
most, while check IDs (``C3.6a``, ``C5.8-post-factor``), tolerances, acceptance rules and
z-scores live in the folded check blocks. This module counts what is left outside them,
in the chapter source (prose outside code cells, exercise solutions and dropdowns) and in
the built HTML page (text outside hidden cells, code, details and dropdowns).

Usage::

    python tests/audit_words.py book/rmsnorm.md [...]          # source
    python tests/audit_words.py _build/html/book/rmsnorm.html   # built page
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from prose_numbers import FENCE  # noqa: E402

#: the most audit terms a chapter may show outside folded blocks
BUDGET = 3
#: pages that are about the audit (the ledger lists check IDs by design)
EXEMPT = {"ledger", "execution-report", "bibliography"}

CHECK_ID = re.compile(r"\bC\d+\.\d+(?:[a-z]\w*|-[A-Za-z][\w.-]*)")
WORDS = re.compile(
    r"\b(?:tolerances?|atol|rtol|z-scores?|acceptance(?:\s+rules?)?|accepts?|accepted)\b|\|z\|",
    re.I,
)


def audit_terms(text: str) -> list[str]:
    """The check IDs and tolerance words in ``text``, in order."""
    return [m.group(0) for m in CHECK_ID.finditer(text)] + [m.group(0) for m in WORDS.finditer(text)]


def source_main_line(text: str) -> str:
    """A chapter source's text outside code cells, solutions, dropdowns and front matter."""
    lines = text.split("\n")
    keep: list[str] = []
    i = 0
    if lines and lines[0].strip() == "---":
        i = lines.index("---", 1) + 1 if "---" in lines[1:] else 0
    stack: list[tuple[str, bool]] = []  # (fence, folded)
    in_solution = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        m = FENCE.match(stripped)
        if m:
            fence, info = m.group("fence"), m.group("info").strip()
            if info.startswith("{solution-start}"):
                in_solution = True
            elif info.startswith("{solution-end}"):
                in_solution = False
            elif stack and fence == stack[-1][0] and not info:
                stack.pop()
            else:
                folded = bool(re.match(r"\{(code-cell|code|code-block|dropdown|toggle|literalinclude)\}", info)) or (
                    bool(stack) and stack[-1][1]
                )
                stack.append((fence, folded))
            i += 1
            continue
        if stack and not stack[-1][1] and re.match(r"\s*:class:.*\bdropdown\b", line):
            stack[-1] = (stack[-1][0], True)
        if not in_solution and not (stack and stack[-1][1]):
            keep.append(line)
        i += 1
    return "\n".join(keep)


def html_main_line(html: str) -> str:
    """A built page's article text outside hidden cells, code, details and dropdowns."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    body = soup.find("article") or soup.find("main") or soup
    for el in body.select(
        "div.tag_hide-cell, div.tag_hide-output .cell_output, div.cell_input, details, "
        "div.dropdown, div.toggle, div.solution, .toggle-details, script, style, pre"
    ):
        el.decompose()
    return body.get_text(" ")


def count(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return audit_terms(html_main_line(text) if path.suffix == ".html" else source_main_line(text))


def main(argv: list[str]) -> int:
    bad = 0
    for a in argv:
        p = Path(a)
        terms = count(p)
        over = p.stem not in EXEMPT and len(terms) > BUDGET
        bad += over
        print(f"{p}: {len(terms)} audit term(s) outside folded blocks (budget {BUDGET}){' OVER' if over else ''}")
        if terms:
            print("   ", ", ".join(terms))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
