"""Hand-written findings are guarded: every `% guard: key` marker of a page has an expect() call with
that key in the page's code, and every expect() call has its marker (normlib.book.expect)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from normlib.book import SentenceUnsupported, expect

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in (ROOT / "book").rglob("*.md") if "jupytext:" in p.read_text(encoding="utf-8")[:2000])
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
MARKER = re.compile(r"^% guard: (.+)$", re.M)
EXPECT = re.compile(r"\bexpect\(\s*(?:[^,]|\([^)]*\))*?,\s*([\"'])([\w.-]+)\1", re.S)
# a code line that is only a comment (a guard commented out guards nothing)
COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.M)


def guards(text: str) -> tuple[set[str], set[str]]:
    """(keys of the markers in the prose, keys passed to expect() in the code cells)."""
    code = COMMENT_LINE.sub("", "\n".join(m.group(2) for m in CODE_CELL.finditer(text)))
    prose = CODE_CELL.sub("", text)
    marked = {k for m in MARKER.finditer(prose) for k in m.group(1).split()}
    called = {m.group(2) for m in EXPECT.finditer(code)}
    return marked, called


def unpaired(text: str) -> list[str]:
    """What breaks the pairing on a page: a marker with no expect() call, a call with no marker."""
    marked, called = guards(text)
    problems = []
    if marked - called:
        problems.append(f"sentences marked as guarded with no expect() call: {sorted(marked - called)}")
    if called - marked:
        problems.append(f"expect() calls whose sentence is not marked (% guard: key): {sorted(called - marked)}")
    return problems


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_every_marker_has_its_guard_and_every_guard_its_marker(path):
    problems = unpaired(path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


_CELL = "```{code-cell} ipython3\n%s\n```\n"


@pytest.mark.parametrize(("page", "problem"), [
    (_CELL % 'expect(lo > 1.0, "a-rises", "A rises")' + "\nA rises.\n", "not marked (% guard: key): ['a-rises']"),
    (_CELL % 'x = 1' + "\n% guard: a-rises\nA rises.\n", "no expect() call: ['a-rises']"),
    (_CELL % '# expect(lo > 1.0, "a-rises", "A rises")' + "\n% guard: a-rises\nA rises.\n",
     "no expect() call: ['a-rises']"),
    ('Prose: `expect(c, "a-rises", "A rises")` is an example.\n\n% guard: a-rises\nA rises.\n',
     "no expect() call: ['a-rises']"),
    (_CELL % 'expect(lo > 1.0, "a-rises", "A rises")\nexpect(hi < 2.0, "b-falls", "B falls")'
     + "\n% guard: a-rises\nA rises and B falls.\n", "not marked (% guard: key): ['b-falls']"),
])
def test_the_pairing_fails_on_an_unmarked_guard_and_an_unguarded_marker(page, problem):
    """Mutants: the pairing checked one way only (an expect() with no marked sentence, or a marker
    with no expect(), passes); a guard commented out, or an expect() quoted in the prose, counted
    as a call; a second expect() in a cell not read."""
    problems = unpaired(page)
    assert len(problems) == 1 and problems[0].endswith(problem), problems
    fixed = page.replace("% guard: a-rises", "% guard: a-rises b-falls") if "b-falls" in page else None
    if fixed:
        assert unpaired(fixed) == []


def test_guard_scanner_control():
    text = (
        "```{code-cell} ipython3\n"
        'expect(lo > 1.0, "a-rises", "A rises")\n'
        "expect(np.all(x < f(y, z)),\n       'b-falls', 'B falls')\n"
        "```\n\n% guard: a-rises b-falls\nA rises and B falls.\n\n% guard: c-orphan\n"
    )
    marked, called = guards(text)
    assert marked == {"a-rises", "b-falls", "c-orphan"} and called == {"a-rises", "b-falls"}


def test_expect_passes_on_a_true_condition_and_fails_naming_the_sentence():
    assert expect(True, "k", "A rises") is None
    assert expect(np.float64(2.0) > 1.0, "k", "A rises") is None  # a numpy bool (any numpy comparison)
    with pytest.raises(SentenceUnsupported, match="'k'.*A rises"):
        expect(False, "k", "A rises")
    with pytest.raises(SentenceUnsupported):
        expect(np.float64(0.5) > 1.0, "k", "A rises")  # numpy False is false, not "not True"


@pytest.mark.parametrize("bad", [1, 0, "yes", None, np.array([True, True]), 1.0])
def test_expect_refuses_a_condition_that_is_not_a_bool(bad):
    with pytest.raises(TypeError, match="must be a bool"):
        expect(bad, "k", "A rises")


@pytest.mark.parametrize(("key", "sentence"), [("", "s"), ("k", ""), (None, "s"), ("k", 3)])
def test_expect_needs_a_key_and_the_sentence(key, sentence):
    with pytest.raises(TypeError):
        expect(True, key, sentence)
