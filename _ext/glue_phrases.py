"""Glued wording in a translated edition: the phrase catalog ``_phrases.po``.

A chapter glues some of its prose as data: ``glue_phrase(key, condition, if_true, if_false)``
picks the sentence the measurement supports, and a few ``glue_value(key, "…")`` calls glue
computed wording. Sphinx's catalogs never see those strings (they are cell outputs), so a
Chinese page would show them in English. This module

- **extracts** every wording a chapter can glue, from the chapter sources (both branches of
  every ``glue_phrase`` and of every ``a if condition else b`` choice between wordings,
  whatever the data say today, and every string ``glue_value``), plus
  the wordings glued by the current execution that no source string accounts for;
- turns an f-string into a **template**: each ``{expression}`` becomes ``{0}``, ``{1}``…,
  and the translation must keep the same placeholders; the values are filled in at build
  time, so no number is frozen into the catalog;
- **translates** a glued string at build time (``_ext/i18n.py``): an exact msgid first, then
  the templates; a placeholder's value is itself looked up (so a glued "above" inside an
  f-string is translated too). A wording with no translation stays English, and the checks
  of the built Chinese edition report it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

GLUE_CALLS = {"glue_phrase": (2, 3), "glue_value": (1,)}
_WORDS = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{2,}")
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


def _template(node: ast.JoinedStr) -> tuple[str, list[str]]:
    """The f-string as a template with ``{0}``, ``{1}``…, and the string constants its
    expressions can produce (e.g. the branches of ``('above' if z > 0 else 'below')``)."""
    parts, inner, n = [], [], 0
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        else:
            parts.append("{%d}" % n)
            n += 1
            inner += [c.value for c in ast.walk(v.value)
                      if isinstance(c, ast.Constant) and isinstance(c.value, str) and _WORDS.search(c.value + " xx")]
    return "".join(parts), inner


def _wordings(arg: ast.AST) -> list[tuple[str, str]]:
    """(msgid, kind) of the wordings an argument can evaluate to."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [(arg.value, "wording")]
    if isinstance(arg, ast.JoinedStr):
        tpl, inner = _template(arg)
        return [(tpl, "template")] + [(s, "wording") for s in inner]
    if isinstance(arg, ast.IfExp):
        return _wordings(arg.body) + _wordings(arg.orelse)
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):  # "a" + ("b" if c else "") + "d"
        left, right = _wordings(arg.left), _wordings(arg.right)
        if left and right and all(k == "wording" for _, k in left + right):
            return [(a + b, "wording") for a, _ in left for b, _ in right]
    return []


def source_messages(chapter: Path) -> list[tuple[str, str]]:
    """(msgid, comment) of every wording the chapter's code cells can glue."""
    import jupytext

    out = []
    nb = jupytext.read(chapter)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines())
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.IfExp):  # a wording chosen by the data, glued later
                for branch in (node.body, node.orelse):
                    for msgid, kind in _wordings(branch):
                        if " " in msgid.strip() and re.search(r"[A-Za-z]{3,}", _PLACEHOLDER.sub("", msgid)):
                            out.append((msgid, f"{chapter.stem}: a wording chosen by a condition"))
                continue
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in GLUE_CALLS or not node.args:
                continue
            key = node.args[0].value if isinstance(node.args[0], ast.Constant) else "?"
            for i in GLUE_CALLS[name]:
                if i < len(node.args):
                    for msgid, kind in _wordings(node.args[i]):
                        if re.search(r"[A-Za-z]{3,}", _PLACEHOLDER.sub("", msgid)):
                            out.append((msgid, f"{chapter.stem}: {name}({key!r}) {kind}"))
    return out


_NUM = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*%?")


@dataclass
class Phrases:
    """A phrase catalog: exact wordings and templates, msgid -> msgstr.

    Besides the ``{0}``-templates of f-strings, a wording recorded from an execution
    (``executed_wordings``) that contains numbers also matches the same wording with other
    numbers: its translation keeps the msgid's numbers (the catalog checker requires it),
    and each is replaced by the value found at the same position of the glued text.
    """

    exact: dict = field(default_factory=dict)
    alt: dict = field(default_factory=dict)  # figure alt texts (``_alt.po``), msgid -> msgstr
    templates: list = field(default_factory=list)  # (compiled regex, msgstr, numeric?)

    @classmethod
    def from_catalog(cls, catalog: dict) -> "Phrases":
        p = cls()
        for msgid, msgstr in catalog.items():
            p.exact[msgid] = msgstr
            if _PLACEHOLDER.search(msgid):
                pieces = _PLACEHOLDER.split(msgid)  # text, index, text, index, ...
                rx = "".join(re.escape(s) if i % 2 == 0 else f"(?P<p{s}>.+?)" for i, s in enumerate(pieces))
                p.templates.append((re.compile(rx + r"\Z", re.S), msgstr, None))
            elif _NUM.search(msgid):
                pieces = _NUM.split(msgid)
                rx = r"(\S+?)".join(re.escape(s) for s in pieces)
                p.templates.append((re.compile(rx + r"\Z", re.S), msgstr, _NUM.findall(msgid)))
        p.templates.sort(key=lambda t: -len(t[0].pattern))  # the most specific first
        return p

    def translate(self, text: str) -> str | None:
        """The translation of a glued wording, or None."""
        if text in self.exact:
            return self.exact[text]
        for rx, msgstr, numbers in self.templates:
            m = rx.match(text)
            if not m:
                continue
            if numbers is None:
                values = {k[1:]: self.exact.get(v, v) for k, v in m.groupdict().items()}
                return _PLACEHOLDER.sub(lambda n: values.get(n.group(1), n.group(0)), msgstr)
            pairs = set(zip(numbers, m.groups()))
            if len(pairs) != len(set(numbers)):
                continue  # a number that repeats in the msgid now reads two ways: ambiguous
            new = dict(pairs)
            return _NUM.sub(lambda n: new.get(n.group(0), n.group(0)), msgstr)
        return None


def alt_messages(chapters: list[Path]) -> list[tuple[str, str]]:
    """(alt text, comment) of every figure's ``:alt:`` option in the chapter sources.

    The alt text of a ``{glue:figure}`` is set after Sphinx's translation step, so it never
    reaches the page catalogs; ``_alt.po`` translates it once the figure is resolved.
    """
    out = []
    for ch in chapters:
        name = None
        for line in ch.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*```\{(?:glue:figure|figure|image)\}\s*(\S*)", line)
            if m:
                name = m.group(1)
            m = re.match(r"\s*:alt:\s*(.+\S)", line)
            if m:
                out.append((m.group(1), f"{ch.stem}: the alt text of figure {name}"))
    return out


def executed_wordings(folder: Path) -> list[tuple[str, str]]:
    """(value, comment) of the English string values glued by the executed chapters."""
    out = []
    for f in sorted(folder.glob("book/**/*.glue.json")):
        for key, rec in json.loads(f.read_text(encoding="utf-8")).items():
            text = (rec.get("data") or {}).get("text/plain")
            if isinstance(text, list):
                text = "".join(text)
            if not text or text[:1] not in "'\"":
                continue
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and " " in value.strip() and re.search(r"[A-Za-z]{2,}", value):
                out.append((value, f"{f.name.split('.')[0]}: {key} (its value in the current execution)"))
    return out


def phrase_messages(chapters: list[Path], executed: Path) -> list[tuple[str, str]]:
    """The phrase catalog's messages: source wordings and templates, then any executed
    wording that none of them accounts for."""
    msgs: dict[str, list[str]] = {}
    for ch in chapters:
        for msgid, comment in source_messages(ch):
            msgs.setdefault(msgid, []).append(comment)
    known = Phrases.from_catalog({m: m for m in msgs})
    for value, comment in executed_wordings(executed):
        if known.translate(value) is None:
            msgs.setdefault(value, []).append(comment)
    return [(m, "; ".join(dict.fromkeys(c))) for m, c in msgs.items()]


# a figure text passed through the translator of normlib.plotting.glue_figure: t("...") or t('...')
_FIGURE_TEXT = re.compile(r"""(?<![\w.])t\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')\s*\)""")
_GLUE_FIGURE_CALL = re.compile(r"""glue_figure\(\s*["']([^"']+)["']""")


def figure_texts(text: str) -> list[str]:
    """The literal strings of ``t("...")`` calls in ``text`` (code), unescaped, in order."""
    out = []
    for m in _FIGURE_TEXT.finditer(text):
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        out.append(ast.literal_eval('"' + raw.replace('"', '\\"') + '"') if "\\" in raw else raw)
    return out


def figure_keys(text: str) -> list[str]:
    """The glue keys a page's code glues with ``glue_figure("key", ...)`` (drawn per edition)."""
    return _GLUE_FIGURE_CALL.findall(text)


def figure_messages(chapters: list[Path], modules: list[Path], extra: list[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(msgid, comment) of every figure text: ``t("...")`` in the pages' code and in normlib.

    ``extra`` adds texts computed at run time (a figure that labels its rows with the chapters'
    titles, for example), each with its comment.
    """
    msgs: dict[str, list[str]] = {}
    for path in list(chapters) + list(modules):
        for s in figure_texts(path.read_text(encoding="utf-8")):
            msgs.setdefault(s, []).append(f"a figure text of {path.parent.name}/{path.name}")
    for s, comment in extra:
        msgs.setdefault(s, []).append(comment)
    return [(m, "; ".join(dict.fromkeys(c))) for m, c in msgs.items()]


#: a word in a table cell's text: the segments worth translating
_LETTERS = re.compile(r"[A-Za-z]{2,}")


def table_texts(html_text: str) -> list[str]:
    """The text segments that cells print as Markdown or HTML on one built English page, in
    order: tables and paragraphs in a cell's output (``.cell_output``) or a glued output
    (``div.output``).

    A segment is one run of text (a docutils text node: the parts around a formula or a
    bold span are separate segments), stripped; only segments with a word in them (two
    letters or more) are kept. Math, code and plain-text output (``pre``: printed lines stay
    as the code printed them) are skipped; check tables (first head ``check``) are left to
    ``_checks.po``.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    out = []
    for box in soup.select("article .cell_output, article div.output"):
        if box.find_parent(class_=["cell_output", "output"]) is not None:
            continue  # an output inside an output: its text is read with the outer one
        for table in box.select("table"):
            if [th.get_text(" ", strip=True) for th in table.select("th")][:1] == ["check"]:
                table.decompose()
        for form in box.select(".ledger-filter"):  # the ledger's filter: _ui.po (_ext/i18n.py)
            form.decompose()
        for s in box.find_all(string=True):
            if (s.find_parent(class_=["math", "notranslate"]) is not None
                    or s.find_parent(["code", "script", "style", "pre"]) is not None):
                continue
            core = s.strip()
            if core and _LETTERS.search(core):
                out.append(core)
    return out


def table_messages(html_root: Path, chapters: list[Path], book_root: Path) -> list[tuple[str, str]]:
    """(msgid, comment) of the texts cells print as tables and paragraphs on the built English pages
    (``_build/html``) of ``chapters``; a text that a recorded one with other numbers already
    accounts for (``Phrases``) is not added again."""
    msgs: dict[str, list[str]] = {}
    for ch in chapters:
        rel = ch.relative_to(book_root).with_suffix(".html")
        page = html_root / rel
        if not page.is_file():
            raise FileNotFoundError(f"{page}: the English edition is not built (make book): the tables' texts come from it")
        for text in table_texts(page.read_text(encoding="utf-8")):
            msgs.setdefault(text, []).append(f"{rel.with_suffix('')}: a cell's printed table or note")
    known = Phrases()
    out = []
    for msgid, where in msgs.items():
        if known.translate(msgid) is None:
            out.append((msgid, "; ".join(dict.fromkeys(where))))
            known = Phrases.from_catalog({m: m for m, _ in out})
    return out
