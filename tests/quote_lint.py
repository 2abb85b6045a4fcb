"""Find quotations attributed to the article that are not its registered words.

The book quotes the article only through the ``{article}`` role (``_ext/article_quotes.py``),
which shows a span registered in ``normlib/claims.toml`` and found verbatim in the article.
This scanner flags any other quotation mark in a sentence that attributes words to the
article: on the English pages a sentence naming "the article" (the article says, calls,
writes, its words, ...), on the Chinese catalogs a message naming 文章 or 原文.

What is scanned: the prose of every page under ``book/`` (code cells, math, inline code,
roles, link targets and comments removed) and every ``msgstr`` of the Chinese catalogs
(``locales/zh_CN/LC_MESSAGES``), where the role is kept as written and removed the same way.
A quotation of a paper in a sentence that also names the article is allowed when the
quotation's own clause names the paper: list it in ``tests/data/quote_allow.toml`` with a
reason.

Usage::

    python tests/quote_lint.py            # every page and catalog; exit 1 on a finding
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOW = Path(__file__).resolve().parent / "data" / "quote_allow.toml"

FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}.*?^\1\s*$", re.M | re.S)
FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
ROLE = re.compile(r"\{[A-Za-z][\w:.+-]*\}`[^`]*`")
CODE = re.compile(r"``[^`]+``|`[^`\n]+`")
LINK = re.compile(r"\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->|^%.*$", re.S | re.M)
OPTION = re.compile(r"^\s*:(?!alt:)[\w-]+:.*$", re.M)

# a quoted span: “…”, "…", 「…」, ‘…’ (never across a blank line)
QUOTED = re.compile(r"“[^”\n]{1,200}”|\"[^\"\n]{1,200}\"|「[^」\n]{1,200}」|‘[^’\n]{2,200}’")
EN_ATTRIBUTION = re.compile(r"\b(?:the |this |its own |the source )?article(?:'s)?\b", re.I)
ZH_ATTRIBUTION = re.compile(r"文章|原文|该文|本文所评")
SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+")


@dataclass(frozen=True)
class Finding:
    where: str
    quote: str
    sentence: str

    def __str__(self) -> str:
        return f"{self.where}: {self.quote} in: {self.sentence[:160]}"


def prose(text: str) -> str:
    """The prose of a MyST page with code, math, roles, inline code and comments blanked."""
    text = FRONT.sub("", text)
    text = FENCE.sub("", text)
    for rx in (COMMENT, OPTION, MATH, ROLE, CODE, LINK):
        text = rx.sub(" ", text)
    return text


def _sentences(text: str):
    for para in re.split(r"\n\s*\n", text):
        flat = " ".join(para.split())
        yield from (s for s in SENTENCE_END.split(flat) if s)


def allowlist() -> list[dict]:
    if not ALLOW.is_file():
        return []
    return tomllib.loads(ALLOW.read_text(encoding="utf-8")).get("allow", [])


def _allowed(quote: str, where: str) -> bool:
    return any(a["quote"] == quote and a.get("page", "*") in ("*", where.split(":")[0]) for a in allowlist())


def scan_text(text: str, where: str, *, chinese: bool) -> list[Finding]:
    """Quotations in sentences that attribute words to the article (roles already removed)."""
    attribution = ZH_ATTRIBUTION if chinese else EN_ATTRIBUTION
    out = []
    for s in _sentences(text):
        if not attribution.search(s):
            continue
        for m in QUOTED.finditer(s):
            if not _allowed(m.group(0), where):
                out.append(Finding(where, m.group(0), s))
    return out


def scan_page(path: Path) -> list[Finding]:
    rel = path.relative_to(ROOT).as_posix()
    return scan_text(prose(path.read_text(encoding="utf-8")), rel, chinese=False)


def _msgstrs(po: Path):
    import babel.messages.pofile as pofile

    with po.open("rb") as fh:
        cat = pofile.read_po(fh)
    for m in cat:
        if m.id and m.string:
            yield m.string if isinstance(m.string, str) else " ".join(m.string)


def scan_catalog(po: Path) -> list[Finding]:
    rel = po.relative_to(ROOT).as_posix()
    out = []
    for s in _msgstrs(po):
        for rx in (MATH, ROLE, CODE, LINK):
            s = rx.sub(" ", s)
        out += scan_text(s, rel, chinese=True)
    return out


def pages() -> list[Path]:
    return sorted((ROOT / "book").rglob("*.md"))


def catalogs() -> list[Path]:
    return sorted((ROOT / "locales" / "zh_CN" / "LC_MESSAGES").rglob("*.po"))


def main() -> int:
    found = [f for p in pages() for f in scan_page(p)] + [f for c in catalogs() for f in scan_catalog(c)]
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
