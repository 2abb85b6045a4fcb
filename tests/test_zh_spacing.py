"""No half-width space between a Chinese character and a link beside it (rvZ3 FLUENCY 5).

Chinese text puts no space between a Chinese character and a cross-reference or link whose
rendered text begins (or ends) with a Chinese character: ``讲{doc}`warmup-lr`的一章`` shows
"讲预热与学习率的一章", where ``讲 {doc}`warmup-lr` 的一章`` showed stray spaces. A space
stays next to Latin letters and digits (``讲 {doc}`qk-norm``` shows "讲 QK-Norm 与半精度",
the title starting with Latin letters), and none follows or precedes Chinese punctuation.

What a role renders is read from the catalogs and the sources: a titled role or a link shows
its title; ``{doc}`page``` the Chinese title of the page (its catalog's translation of the
page's ``#`` heading); ``{ref}`label``` the Chinese heading under ``(label)=``; ``{numref}``
and ``{prf:ref}`` a Chinese name and a number (图 7.1, 命题 3.3); ``{eq}`` a number in
parentheses. Roles whose text is not known here (glued values, citations, claims) are
judged by their neighbours only: a space after Chinese punctuation is stray whatever follows.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LC = ROOT / "locales" / "zh_CN" / "LC_MESSAGES"

#: a Chinese character or full-width punctuation (the quotation marks “”‘’ included)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef“”‘’]")
#: Chinese punctuation, next to which a space is never wanted
PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65“”‘’]")
ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:.+-]*)\}`(?P<content>[^`]*)`|\[(?P<text>[^\]\n]*)\]\((?P<url>[^()\s]*)\)")
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_NUMBERED = {"numref", "prf:ref"}  # 图 7.1, 命题 3.3


def _messages(po: Path) -> dict[str, str]:
    with po.open("rb") as f:
        return {m.id: m.string for m in read_po(f)
                if m.id and m.string and isinstance(m.id, str) and not m.fuzzy}


@lru_cache(maxsize=None)
def _catalog(page: str) -> dict[str, str]:
    po = LC / f"{page}.po"
    return _messages(po) if po.is_file() else {}


def _headings(md: Path):
    """(label or None, heading text) of every heading outside code; the title first."""
    fence, label = None, None
    for line in md.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~", ":::")):
            mark = s[:3]
            fence = None if fence == mark and s.strip(mark[0]) == "" else (fence or mark)
            continue
        if fence:
            continue
        m = re.fullmatch(r"\(([^()\s]+)\)=", s)
        if m:
            label = m.group(1)
        elif re.match(r"#{1,6} ", line):
            yield label, line.lstrip("#").strip()
            label = None
        elif s:
            label = None


@lru_cache(maxsize=None)
def _titles() -> tuple[dict[str, str], dict[str, str]]:
    """Chinese titles: page ('book/x') -> title, label -> heading."""
    pages, labels = {}, {}
    for md in sorted((ROOT / "book").rglob("*.md")):
        page = md.relative_to(ROOT).with_suffix("").as_posix()
        zh = _catalog(page)
        for i, (label, text) in enumerate(_headings(md)):
            shown = zh.get(text, text)
            if i == 0:
                pages[page] = shown
            if label:
                labels[label] = shown
    return pages, labels


def shown(match, page: str) -> str | None:
    """The text a role or link renders on the Chinese ``page`` ('book/x'), or None if unknown."""
    if match.group("name") is None:
        return match.group("text")
    name, content = match.group("name"), match.group("content")
    titled = _TITLED.match(content)
    if titled and name in {"doc", "ref", "numref", "prf:ref", "eq"}:
        return titled.group(1).replace("{number}", "1")
    pages, labels = _titles()
    if name == "doc":
        target = content.lstrip("/") if content.startswith("/") else posixpath.normpath(
            posixpath.join(posixpath.dirname(page), content))
        return pages.get(target)
    if name == "ref":
        return labels.get(content)
    if name in _NUMBERED:
        return "图 1"  # a Chinese name, then a number
    if name == "eq":
        return "(1)"
    return None


def stray_spaces(text: str, page: str) -> list[str]:
    """Excerpts of ``text`` where a space stands between Chinese and a link's Chinese edge."""
    out = []
    for m in ROLE.finditer(text):
        t = shown(m, page) or ""
        before = re.search(r"(\S) +$", text[: m.start()])
        if before and CJK.match(before.group(1)) and (PUNCT.match(before.group(1)) or (t and CJK.match(t[0]))):
            out.append(text[max(0, m.start() - 10): m.end()])
        after = re.match(r" +(\S)", text[m.end():])
        if after and CJK.match(after.group(1)) and (PUNCT.match(after.group(1)) or (t and CJK.match(t[-1]))):
            out.append(text[m.start(): m.end() + 10])
    return out


def violations(catalogs) -> list[str]:
    """``page: excerpt`` of every stray space in the catalogs, given as (page, .po path)."""
    bad = []
    for page, po in catalogs:
        for zh in _messages(po).values():
            bad += [f"{page}: {x!r}" for x in stray_spaces(zh, page)]
    return bad


def _book_catalogs():
    return [(po.relative_to(LC).with_suffix("").as_posix(), po) for po in sorted(LC.rglob("*.po"))]


def test_no_space_between_chinese_and_a_link():
    bad = violations(_book_catalogs())
    assert not bad, f"{len(bad)} stray spaces beside links in Chinese text:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("text, n", [
    ("讲 {doc}`warmup-lr` 的一章", 2),       # the title 预热与学习率 is Chinese at both ends
    ("讲{doc}`warmup-lr`的一章", 0),
    ("讲 {doc}`qk-norm` 的一章", 1),         # QK-Norm 与半精度: the space before the Latin stays
    ("{ref}`论断总账 <ledger>` 对此有说明", 1),
    ("见 {ref}`C6.2 <ledger-c6.2>` 和", 0),   # a Latin title keeps its spaces
    ("与 {prf:ref}`prop-rms-rescale` 相比", 1),  # 命题 3.2: Chinese before, a number after
    ("由 {eq}`eq-rms-ln-gap` 给出", 0),
    ("权重决定。 {claim}`C8.6`", 1),          # never a space after Chinese punctuation
    ("共 {glue:text}`n:d` 个种子", 0),        # a glued number keeps its spaces
    ("见 [下载页](download.md) 的说明", 2),
    ("**{doc}`warmup-lr`** 的一章", 0),       # bold markup between: the space is markdown's
])
def test_the_rule_itself(text, n):
    """Mutants: the edge of the rendered title ignored (QK-Norm's space removed); a space after
    Chinese punctuation kept; a glued number's spaces taken away; a link not read."""
    assert len(stray_spaces(text, "book/intro")) == n


def test_a_mutant_catalog_fails(tmp_path):
    """A stray space put back into a real message of the landing page is caught."""
    fixed = "{ref}`论断总账 <ledger>`对此有说明"
    text = (LC / "book" / "intro.po").read_text(encoding="utf-8")
    assert fixed in text
    mutant = tmp_path / "intro.po"
    mutant.write_text(text.replace(fixed, "{ref}`论断总账 <ledger>` 对此有说明"), encoding="utf-8")
    assert violations([("book/intro", LC / "book" / "intro.po")]) == []
    assert [b for b in violations([("book/intro", mutant)]) if "论断总账" in b]
