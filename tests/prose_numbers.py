"""Find numbers typed by hand in the prose of the book's chapters.

Every number the book states in prose is glued (``{glue:text}``): a measured value, a
setting of the code (seeds, steps, widths), or a number quoted from the article or a paper
(``[quoted]`` in ``normlib/claims.toml``, glued by ``normlib.book.glue_quoted``). Typed
numbers drift; this scanner lists them.

What is scanned: the prose of a jupytext MyST chapter, including admonitions, proof boxes,
exercises, figure captions and alt text, and markdown tables. What is not: the front
matter, code cells and other fenced code, math (``$…$``, ``$$…$$``, ``{math}``), roles
(``{glue:text}``, ``{cite:p}``, ``{ref}``, ``{eq}``, …), inline code, labels ``(x)=``,
directive options other than ``:alt:``, link targets, HTML comments.

Numbers that are names, not quantities, are allowed: digits attached to a word (GPT-2,
Qwen3, float16, L2, C3.6, 4d), years (1950–2030), a source's numbered items ("Theorem 1",
"Figure 2(b)", "§3.4", "arXiv:2203.00555") and software versions ("FlashAttention 2.6").
Anything else needs an entry in ``tests/data/prose_numbers_allow.toml`` with a reason.

Usage::

    python tests/prose_numbers.py book/rmsnorm.md [book/other.md ...]
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST = Path(__file__).resolve().parent / "data" / "prose_numbers_allow.toml"

FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,}|~{3,})(?P<info>[^\n]*)$")
ROLE = re.compile(r"\{[A-Za-z][\w:.-]*\}`[^`]*`")
INLINE_CODE = re.compile(r"``[^`]+``|`[^`\n]+`")
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\\n]|\n(?![ \t]*\n))+?\$")
LABEL = re.compile(r"^\s*\([\w:./-]+\)=\s*$", re.M)
COMMENT = re.compile(r"<!--.*?-->", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")
HTML_TAG = re.compile(r"<[^>\n]+>")
OPTION = re.compile(r"^\s*:(?P<name>[\w-]+):(?P<value>.*)$")

# a number: 12, 1.5, 0.001, 2,000, 1e-5, 3×10, 45%, .5; leading sign or unicode minus
NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d(?:\d|,(?=\d{3}))*(?:\.\d+)?|\.\d+)(?:[eE][-+−]?\d+)?")
ITEM_WORDS = (
    r"Theorem|Theorems|Lemma|Lemmas|Proposition|Propositions|Corollary|Definition|Remark|Figure|"
    r"Figures|Fig\.|Figs\.|Table|Tables|Section|Sections|Sec\.|§|Eq\.|Eqs\.|Equation|Equations|"
    r"Appendix|App\.|Algorithm|Chapter|Chapters|Exercise|Exercises|Step|Steps|Part|Listing|Box|"
    r"arXiv:?|version|v|Issue|issue|PR|page|p\.|pp\."
)
ITEM = re.compile(rf"(?:{ITEM_WORDS})\s*$")
SOFTWARE = re.compile(
    r"(?:FlashAttention|Flash\s?Attention|PyTorch|torch|Python|Jupyter Book|transformers|NumPy|numpy|"
    r"MathJax|Sphinx|MyST-NB|Chromium|CUDA|cuDNN|SciPy|scikit-learn|Matplotlib|"
    r"Gemma|Llama|LLaMA|Qwen|GPT|ViT|PaLM|Mistral|Mixtral|OLMo|Phi|T5|DeepSeek|Claude)[- ]v?$"
)


@dataclass(frozen=True)
class Typed:
    """A number found in a chapter's prose."""

    path: str
    line: int
    number: str
    context: str
    line_text: str = ""
    span: tuple[int, int] = (0, 0)

    def covered_by(self, text: str) -> bool:
        """True if ``text`` occurs in the line at a place that contains this number."""
        s, e = self.span
        start = self.line_text.find(text)
        while start != -1:
            if start <= s and e <= start + len(text):
                return True
            start = self.line_text.find(text, start + 1)
        return False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.number!r} in: {self.context}"


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The chapter's prose, line by line, with everything that is not prose blanked out.

    Returns ``(line_number, text)`` pairs (1-based), so findings point at the source.
    """
    lines = text.split("\n")
    out = [""] * len(lines)
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        j = 1
        while j < len(lines) and lines[j].strip() != "---":
            j += 1
        i = j + 1
    stack: list[tuple[str, bool]] = []  # (fence, is_code)
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line.strip())
        if m:
            fence, info = m.group("fence"), m.group("info").strip()
            if stack and fence == stack[-1][0] and not info:
                stack.pop()
                i += 1
                continue
            if not stack or not stack[-1][1]:
                directive = re.match(r"\{([\w:-]+)\}\s*(.*)", info)
                is_code = not directive or directive.group(1) in ("code-cell", "code", "code-block", "math", "raw", "literalinclude")
                if not directive and not info and fence.startswith(":"):
                    is_code = False
                stack.append((fence, is_code))
                if directive and not is_code:
                    out[i] = directive.group(2)  # a directive's argument is a title: prose
                i += 1
                continue
        if stack and stack[-1][1]:
            i += 1
            continue
        opt = OPTION.match(line)
        if opt and stack:
            out[i] = opt.group("value") if opt.group("name") == "alt" else ""
            i += 1
            continue
        out[i] = line
        i += 1
    prose = "\n".join(out)
    # multi-line constructs first, keeping line numbers by replacing with same newlines
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    for pattern in (COMMENT, DISPLAY_MATH):
        prose = pattern.sub(blank, prose)
    for pattern in (LABEL, ROLE, INLINE_CODE, INLINE_MATH, LINK_TARGET, HTML_TAG):
        prose = pattern.sub(blank, prose)
    return [(n + 1, t) for n, t in enumerate(prose.split("\n")) if t.strip()]


def _is_name(line: str, start: int, end: int) -> bool:
    before, after = line[:start], line[end:]
    # digits attached to a word: GPT-2, Qwen3, float16, L2, 4d, 22B, C3.6
    if re.search(r"[A-Za-z][-‑]?$", before) or re.match(r"[A-Za-z]", after):
        return True
    if ITEM.search(before) or SOFTWARE.search(before):
        return True
    # a list of items after a numbered item word: "Figures 2 and 3", "Theorem 4.2 and 4.3"
    if re.search(rf"(?:{ITEM_WORDS})\s*[\d.()a-z]+(?:\s*(?:,|and|or|–|-)\s*[\d.()a-z]+)*\s*(?:,|and|or|–|-)\s*$", before):
        return True
    return False


def _is_year(token: str, after: str) -> bool:
    return bool(re.fullmatch(r"(19[5-9]\d|20[0-3]\d)", token)) and not re.match(r"[,.]\d", after)


def typed_numbers(path: Path) -> list[Typed]:
    """Every number typed in the prose of one chapter (before the allowlist)."""
    text = path.read_text(encoding="utf-8")
    found = []
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    for n, line in prose_lines(text):
        for m in NUMBER.finditer(line):
            token = m.group(0).lstrip("+-−")
            if not re.search(r"\d", token):
                continue
            s, e = m.span()
            if _is_name(line, s, e) or _is_year(token, line[e:]):
                continue
            ctx = line[max(0, s - 40) : e + 40].strip()
            found.append(Typed(rel, n, m.group(0), re.sub(r"\s+", " ", ctx), line, (s, e)))
    return found


def allowlist() -> list[dict]:
    """Entries of ``tests/data/prose_numbers_allow.toml``: ``chapter``, ``text``, ``reason``."""
    if not ALLOWLIST.is_file():
        return []
    return tomllib.loads(ALLOWLIST.read_text(encoding="utf-8")).get("allow", [])


def unexplained(path: Path) -> tuple[list[Typed], list[dict]]:
    """(typed numbers no allowlist entry explains, allowlist entries of this chapter)."""
    entries = [a for a in allowlist() if a.get("chapter") in (path.stem, "*")]
    left = [t for t in typed_numbers(path) if not any(t.covered_by(a["text"]) for a in entries)]
    return left, entries


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "book").glob("*.md"))
    total = 0
    for p in paths:
        left, _ = unexplained(p)
        for t in left:
            print(t)
        total += len(left)
        print(f"{p.name}: {len(left)} typed number(s)", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
