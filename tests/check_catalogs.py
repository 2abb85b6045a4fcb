"""Check the translation catalogs (``locales/<lang>/LC_MESSAGES/**.po``).

    python tests/check_catalogs.py            # every catalog; exit 1 on a failure
    python tests/check_catalogs.py --all      # and require every catalog to be complete

For each catalog it prints the numbers of translated, fuzzy, untranslated and obsolete
messages. For every translated message it checks that the translation keeps the markup of
the English unchanged:

- every role with its target, MyST's ``{ref}`...``` and the reST ``:func:`...``` of the
  API reference's docstrings, which the translation writes as MyST roles (``{func}`...```:
  Sphinx parses a translated message with the page's parser, MyST), and
  (``{ref}`text <target>``` may translate *text*, never
  *target*; a role without a title, such as a glue role ``{glue:text}`key:.3f```, a math
  role ``{gmath}`d = {{width:d}}``` or ``{doc}`rmsnorm```, is kept whole), so no glue key,
  formula, reference or citation is lost;
- every math span (``$...$``, ``$$...$$``) and inline code span, character for character;
- every link target of an inline link ``[text](url)``;
- no stray ``$`` or backtick (Sphinx does not warn on a broken ``$``);
- the placeholders ``{0}``, ``{1}``… of a glued-wording template (``_phrases.po``), each once;
- no number in the translation that the English does not contain (a typed number would
  freeze a value that the English edition computes).

A markup failure always fails. Fuzzy and untranslated messages fail only in the catalogs
listed in ``locales/<lang>/COMPLETE`` (pages declared translated) or with ``--all``; for
the others they are reported. With ``--all``, a catalog listed in ``locales/<lang>/PENDING``
(a page whose translation is in progress: the translated build shows it with a banner
saying so, ``_ext/i18n.py``) may still be incomplete, and must leave that list once it is
complete (so the list only shrinks). ``make test`` runs this through tests/test_check_catalogs.py.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"

_ROLE = re.compile(r"\{([A-Za-z][\w:.-]*)\}`([^`]*)`")
# a reST role of a docstring (the API reference: Sphinx autodoc), ``:func:`target``` or
# ``:py:class:`title <target>```: kept with its name and target, or the link is lost
_REST_ROLE = re.compile(r"(?<![\w`]):([A-Za-z][\w.-]*(?::[A-Za-z][\w.-]*)*):`([^`]+)`")
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_DMATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_MATH = re.compile(r"\$([^$]+?)\$", re.S)
_LINK = re.compile(r"\]\(([^()\s]+)\)")
_TARGET = re.compile(r"^\(([^()\s]+)\)=\s*$", re.M)
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?")
#: an English month name lets its number stand in the translation (mainland usage writes 2024 年 7 月)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_PLACEHOLDER = re.compile(r"\{\d+\}")  # a template's value in _phrases.po (_ext/glue_phrases.py)


@dataclass
class Markup:
    roles: Counter = field(default_factory=Counter)
    code: Counter = field(default_factory=Counter)
    math: Counter = field(default_factory=Counter)
    links: Counter = field(default_factory=Counter)
    targets: Counter = field(default_factory=Counter)
    plain: str = ""
    errors: list = field(default_factory=list)


def markup(text: str) -> Markup:
    """Split a message into its markup (what a translation must keep) and its plain text."""
    m = Markup()

    def role(match):
        name, content = match.group(1), match.group(2)
        titled = _TITLED.match(content)
        whole = name.startswith("glue") or name in ("math", "gmath")  # no title: kept character for character
        m.roles[(name, titled.group(2) if titled and not whole else content)] += 1
        return " "

    rest = _ROLE.sub(role, text)
    rest = _REST_ROLE.sub(role, rest)
    rest = _CODE.sub(lambda x: m.code.update([x.group(2)]) or " ", rest)
    rest = _DMATH.sub(lambda x: m.math.update(["$$" + x.group(1)]) or " ", rest)
    rest = _MATH.sub(lambda x: m.math.update([x.group(1)]) or " ", rest)
    m.links.update(_LINK.findall(rest))
    m.targets.update(_TARGET.findall(rest))
    if "$" in rest:
        m.errors.append("a stray `$` (broken math)")
    if "`" in rest:
        m.errors.append("a stray backtick (broken role or code)")
    m.plain = rest
    return m


def unclosed_strong(text: str) -> list[str]:
    """The ``**`` delimiters of ``text`` that CommonMark cannot read as closing their bold span.

    A closing ``**`` must be right-flanking: when a punctuation mark precedes it (a Chinese
    "：" or "。" ends many bold labels), whitespace or punctuation must follow it. ``**标签：**正文``
    breaks that rule and renders its asterisks literally; ``**标签**：正文`` does not. Delimiters
    are paired in order (odd ones open, even ones close); inline code and math are skipped.
    """
    plain = re.sub(r"`[^`]*`|\$[^$]*\$", lambda m: " " * len(m.group(0)), text)
    bad = []
    for k, m in enumerate(re.finditer(r"\*\*", plain)):
        if k % 2 == 0:
            continue  # an opening delimiter
        before = plain[m.start() - 1] if m.start() else " "
        after = plain[m.end()] if m.end() < len(plain) else " "
        if (unicodedata.category(before).startswith("P") and not after.isspace()
                and not unicodedata.category(after).startswith("P")):
            bad.append(plain[max(0, m.start() - 12):m.end() + 4])
    return bad


def check_message(msgid: str, msgstr: str) -> list[str]:
    """Every way ``msgstr`` fails to keep the markup of ``msgid`` (empty: it keeps it)."""
    src, dst = markup(msgid), markup(msgstr)
    problems = list(dst.errors)
    closers = unclosed_strong(msgstr)
    if closers:
        problems.append(f"a closing ** after punctuation and before text renders literally (move the "
                        f"punctuation after the **): {closers!r}")
    if _REST_ROLE.search(msgstr):
        # Sphinx parses a translation with the page's parser (MyST for every page of this book),
        # so a docstring's :func:`x` must be written {func}`x` in the translation, or the link is lost
        problems.append("a reST role in the translation: write it as a MyST role, {func}`target`")
    for name in ("roles", "code", "math", "links", "targets"):
        a, b = getattr(src, name), getattr(dst, name)
        if a != b:
            lost, added = a - b, b - a
            what = {"roles": "role", "code": "inline code", "math": "math span",
                    "links": "link target", "targets": "target"}[name]
            if lost:
                problems.append(f"{what} missing or altered: {sorted(lost)!r}")
            if added:
                problems.append(f"{what} not in the English: {sorted(added)!r}")
    if Counter(_PLACEHOLDER.findall(msgid)) != Counter(_PLACEHOLDER.findall(msgstr)):
        problems.append("the placeholders {0}, {1}, ... of the English must each appear once")
    allowed = set(_DIGITS.findall(msgid))
    allowed |= {str(k) for k, month in enumerate(_MONTHS, 1) if re.search(rf"\b{month}\b", msgid)}  # July -> 7 月
    new = [n for n in _NUMBER.findall(dst.plain) if n not in allowed]
    if new:
        problems.append(f"number(s) not in the English: {new}")
    return problems


@dataclass
class Report:
    path: Path
    translated: int = 0
    fuzzy: int = 0
    untranslated: int = 0
    obsolete: int = 0
    problems: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.fuzzy == 0 and self.untranslated == 0


def check_catalog(path: Path) -> Report:
    from babel.messages.pofile import read_po

    with Path(path).open("rb") as f:
        catalog = read_po(f)
    rep = Report(Path(path), obsolete=len(catalog.obsolete))
    for msg in catalog:
        if not msg.id:
            continue  # the header
        msgid = msg.id if isinstance(msg.id, str) else msg.id[0]
        msgstr = msg.string if isinstance(msg.string, str) else (msg.string[0] if msg.string else "")
        if msg.fuzzy:
            rep.fuzzy += 1
        elif not msgstr:
            rep.untranslated += 1
        else:
            rep.translated += 1
            for p in check_message(msgid, msgstr):
                line = f" (line {msg.lineno})" if msg.lineno else ""
                rep.problems.append(f"{p}{line}: msgid {msgid[:60]!r}")
    return rep


def declared_complete(lang_dir: Path) -> set[str]:
    f = lang_dir / "COMPLETE"
    if not f.is_file():
        return set()
    return {ln.split("#")[0].strip() for ln in f.read_text(encoding="utf-8").splitlines()} - {""}


def declared_pending(lang_dir: Path) -> set[str]:
    """The catalogs listed in ``locales/<lang>/PENDING``: translation in progress."""
    f = lang_dir / "PENDING"
    if not f.is_file():
        return set()
    return {ln.split("#")[0].strip() for ln in f.read_text(encoding="utf-8").splitlines()} - {""}


def run(locales: Path = LOCALES, require_all: bool = False, out=sys.stdout) -> int:
    """Check every catalog under ``locales``; print a table; return the number of failures."""
    failures = 0
    for lang_dir in sorted(p for p in Path(locales).iterdir() if p.is_dir()):
        base = lang_dir / "LC_MESSAGES"
        complete = declared_complete(lang_dir)
        pending = declared_pending(lang_dir)
        present = {str(p.relative_to(base)) for p in base.rglob("*.po")}
        for name in sorted(complete - present):
            print(f"{lang_dir.name}: {name} is declared complete in COMPLETE but has no catalog", file=out)
            failures += 1
        for name in sorted(pending - present):
            print(f"{lang_dir.name}: {name} is listed in PENDING but has no catalog", file=out)
            failures += 1
        for name in sorted(pending & complete):
            print(f"{lang_dir.name}: {name} is listed both in COMPLETE and in PENDING", file=out)
            failures += 1
        print(f"{'catalog':<40} {'translated':>10} {'fuzzy':>6} {'untransl.':>9} {'obsolete':>8}", file=out)
        totals = Counter()
        for po in sorted(base.rglob("*.po")):
            rel = str(po.relative_to(base))
            rep = check_catalog(po)
            totals.update(translated=rep.translated, fuzzy=rep.fuzzy,
                          untranslated=rep.untranslated, obsolete=rep.obsolete)
            must = (require_all and rel not in pending) or rel in complete
            flag = "" if rep.complete else ("  INCOMPLETE" if must else "  (not yet translated)" if not rep.translated else "  (partly translated)")
            if rel in pending and rep.complete:
                print(f"{lang_dir.name}/{rel} is complete: remove it from PENDING", file=out)
                failures += 1
            print(f"{lang_dir.name + '/' + rel:<40} {rep.translated:>10} {rep.fuzzy:>6} "
                  f"{rep.untranslated:>9} {rep.obsolete:>8}{flag}", file=out)
            for p in rep.problems:
                print(f"    MARKUP {p}", file=out)
            failures += len(rep.problems) + (0 if rep.complete or not must else 1)
        print(f"{lang_dir.name + ' (all)':<40} {totals['translated']:>10} {totals['fuzzy']:>6} "
              f"{totals['untranslated']:>9} {totals['obsolete']:>8}", file=out)
    return failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="every catalog must be complete (0 fuzzy, 0 untranslated)")
    ap.add_argument("--locales", type=Path, default=LOCALES)
    args = ap.parse_args(argv)
    failures = run(args.locales, args.all)
    print("catalogs OK" if not failures else f"{failures} catalog failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
