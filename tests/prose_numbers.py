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
Qwen3, float16, L2, C3.6, 4d), years (1950–2039), a source's numbered items ("Theorem 1",
"Figure 2(b)", "§3.4", "arXiv:2203.00555") and software versions ("FlashAttention 2.6").
Anything else needs an entry in ``tests/data/prose_numbers_allow.toml`` with a reason.

Inline math in the prose is scanned separately, for settings typed in formulas
(``$B = 128$``; the rule is stated above :func:`settings_in_math`): constants of the
mathematics go in ``tests/data/math_settings_allow.toml``, and the settings today's
chapters still type are listed in ``tests/data/math_settings_baseline.toml``, which may
only shrink.

Usage::

    python tests/prose_numbers.py book/rmsnorm.md [book/other.md ...]  # typed numbers, and settings
                                                                        # in math the baseline lacks
    python tests/prose_numbers.py --math-all book/rmsnorm.md            # every setting in math, baselined too
    python tests/prose_numbers.py --shrink-baseline                     # drop fixed entries from the baseline
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections import Counter
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


def _blank(m: re.Match) -> str:
    """The match replaced by spaces, its newlines kept (so line numbers stay right)."""
    return re.sub(r"[^\n]", " ", m.group(0))


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The chapter's prose, line by line, with everything that is not prose blanked out.

    Returns ``(line_number, text)`` pairs (1-based), so findings point at the source.
    """
    prose = _prose_text(text)
    for pattern in (COMMENT, DISPLAY_MATH):  # multi-line constructs first
        prose = pattern.sub(_blank, prose)
    for pattern in (LABEL, ROLE, INLINE_CODE, INLINE_MATH, LINK_TARGET, HTML_TAG):
        prose = pattern.sub(_blank, prose)
    return [(n + 1, t) for n, t in enumerate(prose.split("\n")) if t.strip()]


def _prose_text(text: str) -> str:
    """The chapter with its front matter, code, and directive options (except ``:alt:``)
    blanked out, line for line; markup inside the prose is left in place."""
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
    return "\n".join(out)


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


# ----------------------------------------------------------------------------- settings typed in math
#
# The lint above skips math. A setting of the code typed into a formula (``$B = 128$``,
# ``$\sigma = 0.02$``, ``$d \in \{64, 128\}$``) drifts from the code as much as one typed
# in a sentence. In inline math (``$…$`` and the ``{math}`` role) in prose, a literal with
# two or more digits or a decimal point fails when it stands on the right of a relation
# (``=``, ``\approx``, ``\sim``, ``<``, ``\le``, ``\to``, …: anywhere after the first one),
# in a list of values (numbers separated by commas: ``\{64, 128\}``, ``(0.9, 0.98)``), or
# in a formula that is only a number (``$64$``, ``$10^{-3}$``: a number typed in prose,
# dressed as math). Single digits (the 0, 1, ½ and squares of the mathematics), subscripts
# (indices), the left-hand side of the first relation and words inside ``\text{…}`` pass.
# Glue a setting instead: ``{gmath}`d = {{width:d}}``` (``_ext/glued_math.py``) or
# ``$d =$ {glue:text}`width:d```. A constant of the mathematics with several digits (an
# IEEE 754 limit, a derivation's 16) goes in ``tests/data/math_settings_allow.toml``
# with a reason. Today's chapters still type such settings: they are listed in
# ``tests/data/math_settings_baseline.toml``, which may only shrink
# (``tests/test_math_settings.py``).

MATH_ALLOWLIST = Path(__file__).resolve().parent / "data" / "math_settings_allow.toml"
MATH_BASELINE = Path(__file__).resolve().parent / "data" / "math_settings_baseline.toml"

MATH_ROLE = re.compile(r"\{(?P<name>math|gmath)\}`(?P<tex>[^`]*)`")
_TEX_WORDS = re.compile(r"\\(?:text|textrm|textit|textsf|texttt|mathrm|mathit|mathsf|mathtt|operatorname|mbox)\s*\{[^{}]*\}")
_TEX_SUBSCRIPT = re.compile(r"_\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])")
_TEX_FRAC_DIGITS = re.compile(r"(\\[dt]?frac)\s*(\d)\s*(\d)")  # \tfrac12 is 1/2, not 12
_TEX_THOUSANDS = re.compile(r"(?<=\d)\{,\}(?=\d{3})")  # 8{,}192
_TEX_GLUED = re.compile(r"\{\{[^{}]*\}\}")  # a glued value in a {gmath} role
_TEX_RELATION = re.compile(
    r"(?<![<>!=:])=(?!=)|:=|<|>|\\(?:approx|simeq|equiv|coloneqq|sim|le|leq|ge|geq|lt|gt|ll|gg|ne|neq|to)(?![A-Za-z])"
)
# what a formula that is only a number may hold besides digits: $65520$, $10^{-3}$, $2.5\times10^{-4}$
_TEX_ARITHMETIC = re.compile(r"\\(?:times|cdot|ldots|cdots|dots|pm|mp|[dt]?frac|sqrt|left|right|[bB]ig[lr]?|[,;:! %])")
_TEX_NUMBER = re.compile(r"(?<![\d.])(?:\d+(?:\.\d+)?|\.\d+)(?![\d])")
_TEX_LIST_SEP = re.compile(r"\s*(?:\\[,;:! ]|~|\s)*,(?:\s|\\[,;:! ]|~|\\[lc]?dots\s*,?)*\s*")


@dataclass(frozen=True)
class MathSetting:
    """A multi-digit or decimal literal on the right of a relation, or in a list, in inline math."""

    path: str
    line: int
    number: str
    math: str  # the math span as written, whitespace collapsed: "$B = 128$"
    context: str = ""  # the span with up to 40 characters of the text around it, collapsed
    span: tuple[int, int] = (0, 0)  # where the math is in ``context``

    @property
    def key(self) -> str:
        """How the baseline names it: ``"128 in $B = 128$"``."""
        return f"{self.number} in {self.math}"

    def covered_by(self, text: str) -> bool:
        """True if ``text`` occurs in the span or in the words around it ("$11$ significant
        bits") so that this number, in this span, is part of it."""
        number = re.compile(rf"(?<![\d.]){re.escape(self.number)}(?!\d)")
        s, e = self.span
        start = self.context.find(text)
        while start != -1:
            if any(s <= start + m.start() < e for m in number.finditer(text)):
                return True
            start = self.context.find(text, start + 1)
        return False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.number!r} in math: {self.math}"


def inline_math(text: str) -> list[tuple[int, str, tuple[str, str]]]:
    """``(line, source, (before, after))`` of every inline math span in a chapter's prose:
    ``$…$`` and the ``{math}`` and ``{gmath}`` roles (source as written, ``{math}`x```
    included), with up to 40 characters of the text before and after it."""
    prose = _prose_text(text)
    for pattern in (COMMENT, DISPLAY_MATH):
        prose = pattern.sub(_blank, prose)
    original = prose
    spans = [m.span() for m in MATH_ROLE.finditer(prose)]
    for pattern in (LABEL, ROLE, INLINE_CODE, LINK_TARGET):
        prose = pattern.sub(_blank, prose)
    spans += [m.span() for m in INLINE_MATH.finditer(prose)]
    return [(prose.count("\n", 0, s) + 1, original[s:e], (original[max(0, s - 40) : s], original[e : e + 40]))
            for s, e in sorted(spans)]


def _tex_body(src: str) -> str:
    """The TeX of a span: ``$x$`` -> ``x``; ``{gmath}`d = {{w:d}}``` -> ``d =  0 ``: a glued
    value stands as a single digit, a value that is not typed (but still an item of a list)."""
    m = MATH_ROLE.fullmatch(src)
    tex = m.group("tex") if m else src[1:-1]
    if m and m.group("name") == "gmath" and re.fullmatch(r"[^{}\s]+", tex.strip()):
        return " 0 "  # {gmath}`key:fmt`: the glued value alone
    return _TEX_GLUED.sub(" 0 ", tex)


def settings_in_math(tex: str) -> list[str]:
    """The literals of one inline formula that the rule flags, in order (see above)."""
    tex = _TEX_FRAC_DIGITS.sub(r"\1{\2}{\3}", tex)
    tex = _TEX_THOUSANDS.sub("", tex)
    tex = _TEX_WORDS.sub(_blank, tex)
    tex = _TEX_SUBSCRIPT.sub(_blank, tex)
    rel = _TEX_RELATION.search(tex)
    right_from = rel.end() if rel else len(tex)
    numbers = []
    for m in _TEX_NUMBER.finditer(tex):
        word = re.search(r"(\\?)[A-Za-z]+$", tex[: m.start()])
        if word and not word.group(1):
            continue  # digits attached to a name: W1, x2
        numbers.append(m)
    in_list = set()
    for a, b in zip(numbers, numbers[1:]):
        if _TEX_LIST_SEP.fullmatch(tex[a.end() : b.start()]):
            in_list |= {a.start(), b.start()}
    # a formula that is only a number ($64$, $10^{-3}$) is a number typed in prose
    only_a_number = not rel and not re.search(r"[A-Za-z]", _TEX_ARITHMETIC.sub("", _TEX_NUMBER.sub("", tex)))
    return [m.group(0) for m in numbers
            if (len(m.group(0).replace(".", "")) > 1 or "." in m.group(0))
            and (only_a_number or m.start() >= right_from or m.start() in in_list)]


def math_settings(path: Path) -> list[MathSetting]:
    """Every setting typed in the inline math of one chapter's prose (before allowlist and baseline)."""
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    found = []
    for line, src, (before, after) in inline_math(path.read_text(encoding="utf-8")):
        shown = re.sub(r"\s+", " ", src)
        before, after = re.sub(r"\s+", " ", before), re.sub(r"\s+", " ", after)
        span = (len(before), len(before) + len(shown))
        found += [MathSetting(rel, line, n, shown, before + shown + after, span)
                  for n in settings_in_math(_tex_body(src))]
    return found


def math_allowlist() -> list[dict]:
    """Entries of ``tests/data/math_settings_allow.toml``: ``chapter``, ``text``, ``reason``."""
    if not MATH_ALLOWLIST.is_file():
        return []
    return tomllib.loads(MATH_ALLOWLIST.read_text(encoding="utf-8")).get("allow", [])


def math_unexplained(path: Path) -> list[MathSetting]:
    """The settings typed in a chapter's inline math that no allowlist entry explains."""
    entries = [a for a in math_allowlist() if a.get("chapter") in (path.stem, "*")]
    return [t for t in math_settings(path) if not any(t.covered_by(a["text"]) for a in entries)]


def math_baseline() -> dict[str, Counter]:
    """``tests/data/math_settings_baseline.toml``: chapter -> Counter of ``MathSetting.key``."""
    if not MATH_BASELINE.is_file():
        return {}
    data = tomllib.loads(MATH_BASELINE.read_text(encoding="utf-8"))
    return {ch: Counter(keys) for ch, keys in data.items()}


def math_against_baseline(path: Path, baseline: dict | None = None) -> tuple[list[MathSetting], list[str]]:
    """(settings in math the baseline does not list, baseline entries no longer found)."""
    base = (math_baseline() if baseline is None else baseline).get(path.stem, Counter())
    left = math_unexplained(path)
    seen = Counter(t.key for t in left)
    budget = Counter(base)
    new = []
    for t in left:
        if budget[t.key] > 0:
            budget[t.key] -= 1
        else:
            new.append(t)
    gone = sorted((base - seen).elements())
    return new, gone


def write_math_baseline(chapters: list[Path], path: Path = MATH_BASELINE, *, _create: bool = False) -> dict[str, Counter]:
    """Shrink the baseline to what the chapters still type; never add to it (``_create``
    wrote the first one, of the chapters of issue 29)."""
    old = math_baseline()
    kept = {}
    for ch in chapters:
        now = Counter(t.key for t in math_unexplained(ch))
        if not _create:
            now &= old.get(ch.stem, Counter())
        if now:
            kept[ch.stem] = now
    lines = [
        "# Settings still typed in the chapters' inline math (tests/prose_numbers.py, \"settings",
        "# typed in math\"), per chapter: \"<number> in <math span>\" = times it occurs. This list may",
        "# only shrink: glue a setting, then run `python tests/prose_numbers.py --shrink-baseline`.",
        "# tests/test_math_settings.py fails on a typed setting not listed here, and on an entry",
        "# that no longer occurs (so the list stays exact).",
    ]
    for ch in sorted(kept):
        lines += ["", f"[{ch}]" if re.fullmatch(r"[A-Za-z0-9_-]+", ch) else f"[{json.dumps(ch)}]"]
        lines += [f"{json.dumps(k, ensure_ascii=False)} = {n}" for k, n in sorted(kept[ch].items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return kept


def _chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book").glob("*.md") if "jupytext:" in p.read_text(encoding="utf-8")[:2000])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--shrink-baseline"]:
        kept = write_math_baseline(_chapters())
        print(f"{MATH_BASELINE.relative_to(ROOT)}: {sum(sum(c.values()) for c in kept.values())} entries kept")
        return 0
    show_all = argv[:1] == ["--math-all"]
    argv = argv[1:] if show_all else argv
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "book").glob("*.md"))
    total = 0
    for p in paths:
        left, _ = unexplained(p)
        for t in left:
            print(t)
        if show_all:
            new, gone = math_unexplained(p), []
        else:
            new, gone = math_against_baseline(p)
        for t in new:
            print(t)
        for key in gone:
            print(f"{p.name}: the baseline lists {key!r}, which no longer occurs: "
                  "run `python tests/prose_numbers.py --shrink-baseline`")
        total += len(left) + len(new) + len(gone)
        print(f"{p.name}: {len(left)} typed number(s), {len(new)} setting(s) typed in math"
              + (" (baselined ones included)" if show_all else " (not in the baseline)"), file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
