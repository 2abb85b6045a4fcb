"""Settings typed in inline math (tests/prose_numbers.py, issue 29 §2).

A setting of the code typed into a formula (``$B = 128$``) drifts from the code like one
typed in a sentence. The rule, on synthetic formulas and chapters; the allowlist of
constants (``tests/data/math_settings_allow.toml``); and the baseline of today's chapters
(``tests/data/math_settings_baseline.toml``), which the chapters must match exactly: a
new typed setting fails, and so does a baselined one that was fixed without shrinking the
baseline (``python tests/prose_numbers.py --shrink-baseline``).
"""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import prose_numbers as pn  # noqa: E402

CHAPTERS = pn._chapters()


@pytest.mark.parametrize("tex, flagged", [
    ("B = 128", ["128"]),
    (r"\sigma = 0.02", ["0.02"]),
    (r"N = M = 500", ["500"]),
    (r"L = 16, 64, 256", ["16", "64", "256"]),
    (r"d \in \{64, 128\}", ["64", "128"]),  # a list of values, no `=`
    (r"\beta = (0.9, 0.98)", ["0.9", "0.98"]),
    (r"\mathcal N(0, 0.02^2)", ["0.02"]),
    (r"\epsilon = 10^{-5}", ["10"]),
    (r"L = 10{,}000", ["10000"]),
    (r"B \ge 32", ["32"]),
    (r"p = 12.5\%", ["12.5"]),
    (r"c \approx 0.3", ["0.3"]),
    ("64", ["64"]),  # a formula that is only a number
    (r"2.5\times10^{-4}", ["2.5", "10"]),
    (r"700\text{k}", ["700"]),
    (r"x = .5", [".5"]),
    # constants of the mathematics, indices, names, the left-hand side: not settings
    (r"L = \frac12\|Y - T\|^2", []),
    (r"\mathbb E D_{ii} = \tfrac12", []),
    (r"s = 1 - \tfrac23\varepsilon = \tfrac13", []),
    (r"a \in \{\tfrac12, 1, 2\}", []),
    (r"x^2 = 1", []),
    (r"h_{12} = h_{L-1}", []),
    (r"y = x_{16} + W_{10, 20}", []),  # indices on the right: names, not settings
    (r"\chi^2_{16}", []),
    (r"\mathrm{float16} = x", []),
    (r"128 = 2^7", []),
    (r"\ln 15", []),
    (r"e^{-5/(16d)}", []),
    (pn._tex_body("{gmath}`d = {{width:d}}`"), []),  # a glued value
    (pn._tex_body(r"{gmath}`d \in \{64, {{width:d}}\}`"), ["64"]),  # a typed item beside a glued one
    (pn._tex_body("{gmath}`width:d`"), []),
    (pn._tex_body("{gmath}`C3.6a:.4f`"), []),
    ("2", []),
    (r"0.674/\sqrt n =", []),
])
def test_the_rule(tex, flagged):
    assert pn.settings_in_math(tex) == flagged


def _chapter(tmp_path: Path, body: str, name: str = "demo") -> Path:
    path = tmp_path / f"{name}.md"
    path.write_text("---\njupytext:\n  x: 1.5\n---\n" + textwrap.dedent(body), encoding="utf-8")
    return path


def test_only_inline_math_in_prose_is_read(tmp_path):
    path = _chapter(tmp_path, r"""
    # Width $d = 512$

    We train with $B = 128$ and $\sigma = 0.02$, a glued {gmath}`d = {{width:d}}` and a
    typed {math}`L = 64`; `$x = 99$` is code and {glue:text}`n:d` a role.
    A span over a line break: $N =
    1000$.

    $$
    y = 0.5 x + 1000
    $$

    ```{code-cell} ipython3
    # $B = 256$
    ```

    :::{admonition} With $k = 16$
    :class: tip
    Body $m = 0.1$.
    :::
    """)
    found = [(t.line, t.number, t.math) for t in pn.math_settings(path)]
    assert found == [
        (6, "512", "$d = 512$"),
        (8, "128", "$B = 128$"), (8, "0.02", r"$\sigma = 0.02$"),
        (9, "64", "{math}`L = 64`"),
        (10, "1000", "$N = 1000$"),
        (21, "16", "$k = 16$"), (23, "0.1", "$m = 0.1$"),
    ]
    # the prose lint of numbers outside math is unchanged: it finds nothing here
    assert [t.number for t in pn.typed_numbers(path)] == []


def test_the_allowlist_covers_by_formula_or_words_around_it(tmp_path, monkeypatch):
    path = _chapter(tmp_path, "float16 has $11$ significant bits; a width of $11$; $R = 65520$ and $B = 65520$.\n")
    allow = tmp_path / "allow.toml"
    allow.write_text('[[allow]]\nchapter = "demo"\ntext = "$11$ significant bits"\nreason = "r"\n'
                     '[[allow]]\nchapter = "demo"\ntext = "R = 65520"\nreason = "r"\n', encoding="utf-8")
    monkeypatch.setattr(pn, "MATH_ALLOWLIST", allow)
    assert [t.math for t in pn.math_unexplained(path)] == ["$11$", "$B = 65520$"]


def test_the_baseline_tolerates_what_it_lists_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(pn, "MATH_ALLOWLIST", tmp_path / "none.toml")
    path = _chapter(tmp_path, "At $B = 128$, again $B = 128$, and $L = 64$.\n")
    new, gone = pn.math_against_baseline(path, {"demo": Counter({"128 in $B = 128$": 2, "64 in $L = 64$": 1})})
    assert new == [] and gone == []
    # one occurrence more than listed: new
    new, gone = pn.math_against_baseline(path, {"demo": Counter({"128 in $B = 128$": 1, "64 in $L = 64$": 1})})
    assert [t.key for t in new] == ["128 in $B = 128$"] and gone == []
    # a listed setting that was glued in the meantime: the baseline must shrink
    new, gone = pn.math_against_baseline(path, {"demo": Counter({"128 in $B = 128$": 2, "64 in $L = 64$": 1,
                                                                 "32 in $B = 32$": 1})})
    assert new == [] and gone == ["32 in $B = 32$"]
    # another chapter's entries do not count
    new, _ = pn.math_against_baseline(path, {"other": Counter({"64 in $L = 64$": 1})})
    assert len(new) == 3


def test_shrinking_the_baseline_never_adds_to_it(tmp_path, monkeypatch):
    monkeypatch.setattr(pn, "MATH_ALLOWLIST", tmp_path / "none.toml")
    base = tmp_path / "baseline.toml"
    base.write_text('[demo]\n"128 in $B = 128$" = 1\n"32 in $B = 32$" = 1\n', encoding="utf-8")
    monkeypatch.setattr(pn, "MATH_BASELINE", base)
    path = _chapter(tmp_path, "At $B = 128$ and a new $L = 64$.\n")
    assert pn.write_math_baseline([path], base) == {"demo": Counter({"128 in $B = 128$": 1})}
    assert pn.math_baseline() == {"demo": Counter({"128 in $B = 128$": 1})}
    assert pn.main([str(path)]) == 1  # $L = 64$ is still new


# ----------------------------------------------------------------------------- the book


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_new_setting_is_typed_in_math_and_the_baseline_is_exact(path):
    new, gone = pn.math_against_baseline(path)
    assert not new, ("settings typed in inline math (glue them: {gmath}`d = {{key:d}}` or "
                     "$d =$ {glue:text}`key:d`; a constant of the mathematics goes in "
                     "tests/data/math_settings_allow.toml with a reason):\n" + "\n".join(map(str, new)))
    assert not gone, ("no longer in the chapter, still in tests/data/math_settings_baseline.toml "
                      "(run `python tests/prose_numbers.py --shrink-baseline`): " + ", ".join(gone))


def test_the_baseline_names_only_chapters():
    assert set(pn.math_baseline()) <= {p.stem for p in CHAPTERS}


def test_the_math_allowlist_is_explained_and_used():
    entries = pn.math_allowlist()
    assert len(entries) <= 20, "the allowlist of constants typed in math must stay short"
    for a in entries:
        assert a.get("reason", "").strip(), f"allowlist entry {a} has no reason"
        targets = CHAPTERS if a["chapter"] == "*" else [p for p in CHAPTERS if p.stem == a["chapter"]]
        assert targets, f"allowlist entry {a['text']!r}: no chapter {a['chapter']!r}"
        used = any(t.covered_by(a["text"]) for p in targets for t in pn.math_settings(p))
        assert used, f"allowlist entry {a['text']!r} ({a['chapter']}) matches nothing: remove it"
