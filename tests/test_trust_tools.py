"""The trust mechanisms themselves: glue_phrase, quoted numbers, counterexamples, and the
scanners for typed numbers (tests/prose_numbers.py) and audit talk (tests/audit_words.py)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import normlib.book as book
import normlib.claims as claims_mod

sys.path.insert(0, str(Path(__file__).resolve().parent))
import audit_words  # noqa: E402
import prose_numbers  # noqa: E402


@pytest.fixture
def glued(monkeypatch):
    seen = {}
    monkeypatch.setattr(book, "glue_value", lambda key, value, **kw: seen.__setitem__(key, value) or value)
    return seen


# ----------------------------------------------------------------------------- glue_phrase


def test_glue_phrase_glues_the_wording_the_condition_picks(glued):
    assert book.glue_phrase("k", True, "above", "below") == "above"
    assert book.glue_phrase("k2", np.bool_(False), "above", "below") == "below"
    assert glued == {"k": "above", "k2": "below"}


def test_glue_phrase_a_numpy_true_glues_the_true_wording(glued):
    """Mutant: ``condition is True`` (a numpy true, what any comparison of numpy floats
    gives, would glue the *if_false* wording: the opposite of what the data say)."""
    lo, hi = np.float64(0.25), np.float64(0.5)
    assert book.glue_phrase("k", hi > lo, "above", "below") == "above"
    assert book.glue_phrase("k2", bool(hi > lo), "above", "below") == "above"
    assert glued == {"k": "above", "k2": "above"}


@pytest.mark.parametrize("cond", [1, 0.0, "yes", None, np.array([True])])
def test_glue_phrase_refuses_a_condition_that_is_not_a_bool(glued, cond):
    with pytest.raises(TypeError, match="must be a bool"):
        book.glue_phrase("k", cond, "a", "b")
    assert glued == {}


@pytest.mark.parametrize("cond", [True, False, np.bool_(True), np.bool_(False)])
@pytest.mark.parametrize(("if_true", "if_false"), [(1.0, "b"), ("a", 1.0), ("a", None), ("a", b"b"), (None, None)])
def test_glue_phrase_refuses_non_string_wordings(glued, cond, if_true, if_false):
    """Mutant: only ``if_true`` checked (a non-string ``if_false`` is glued as the wording
    once the data turn, or refused only on the day the condition is false)."""
    with pytest.raises(TypeError, match="str"):
        book.glue_phrase("k", cond, if_true, if_false)
    assert glued == {}


# ----------------------------------------------------------------------------- registry fixtures


@pytest.fixture
def registry_file(tmp_path, monkeypatch):
    """Point normlib.claims at a temporary claims.toml; returns a writer."""

    def write(text: str) -> None:
        path = tmp_path / "claims.toml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        monkeypatch.setattr(claims_mod, "_REGISTRY_PATH", path)
        claims_mod.registry.cache_clear()
        claims_mod.quoted_numbers.cache_clear()

    yield write
    claims_mod.registry.cache_clear()
    claims_mod.quoted_numbers.cache_clear()


BASE = """
[claim."C1.1"]
chapter = "demo"
kind = "extension"
statement = "s"
reason = "r."
method = "reproduced"
"""


def test_quoted_numbers_are_read_and_glued_per_chapter(registry_file, glued):
    registry_file(BASE + """
    [quoted."q_demo"]
    value = "0.0189"
    source = "article"
    chapter = "demo"
    what = "the article's demo residual"

    [quoted."q_other"]
    value = "8.45"
    source = "xiong2020layer"
    chapter = "other"
    what = "BLEU without warmup"
    """)
    q = claims_mod.quoted_numbers()
    assert set(q) == {"q_demo", "q_other"} and q["q_demo"].value == "0.0189"
    assert book.glue_quoted("demo") == {"q_demo": "0.0189"}
    assert glued == {"q_demo": "0.0189"}
    with pytest.raises(KeyError, match="nothing|no \\[quoted\\]"):
        book.glue_quoted("absent")


@pytest.mark.parametrize(
    "entry, message",
    [
        ('[quoted."demo"]\nvalue = "1"\nsource = "article"\nchapter = "d"\nwhat = "w"', "q_name"),
        ('[quoted."q_x"]\nvalue = 0.5\nsource = "article"\nchapter = "d"\nwhat = "w"', "printed string"),
        ('[quoted."q_x"]\nvalue = "none"\nsource = "article"\nchapter = "d"\nwhat = "w"', "digit"),
        ('[quoted."q_x"]\nvalue = "1"\nchapter = "d"\nwhat = "w"', "source"),
    ],
)
def test_malformed_quoted_numbers_are_refused(registry_file, entry, message):
    registry_file(BASE + entry)
    with pytest.raises(ValueError, match=message):
        claims_mod.quoted_numbers()


def test_counterexample_of_each_mode_is_run_against_the_rule(registry_file):
    registry_file(BASE + """
    [check."C1.1a"]
    what = "printed"
    printed = "0.50"
    fmt = ".2f"
    why = "printed precision"
    counterexample = 0.56

    [check."C1.1b"]
    what = "range"
    lo = 0.0
    hi = 1.0
    why = "w"
    counterexample = 0.5

    [check."C1.1c"]
    what = "close, run-time reference"
    atol = 0.1
    why = "w"
    counterexample = 1.0
    counterexample_expected = 0.0

    [check."C1.1d"]
    what = "bool"
    kind = "bool"
    why = "w"
    counterexample = false

    [check."C1.1e"]
    what = "close, run-time reference, no counterexample_expected"
    atol = 0.1
    why = "w"
    counterexample = 1.0
    """)
    assert isinstance(claims_mod.counterexample_result("C1.1a"), claims_mod.ClaimCheckFailed)
    assert claims_mod.counterexample_result("C1.1b") is None  # inside the window: a bad counterexample
    assert isinstance(claims_mod.counterexample_result("C1.1c"), claims_mod.ClaimCheckFailed)
    assert isinstance(claims_mod.counterexample_result("C1.1d"), claims_mod.ClaimCheckFailed)
    with pytest.raises(ValueError, match="counterexample_expected"):
        claims_mod.counterexample_result("C1.1e")


@pytest.mark.parametrize(
    "fields, message",
    [
        ('kind = "bool"\ncounterexample = true', "false"),
        ("lo = 0.0\ncounterexample = \"x\"", "number"),
        ("lo = 0.0\ncounterexample = true", "number"),
        ("lo = 0.0\nwhy = 3", "why must be a string"),
        ("lo = 0.0\ncounterexample_expected = \"e\"", "counterexample_expected"),
    ],
)
def test_malformed_counterexamples_are_refused(registry_file, fields, message):
    registry_file(BASE + f'[check."C1.1a"]\nwhat = "w"\n{fields}\n')
    with pytest.raises(ValueError, match=message):
        claims_mod.registry()


# ----------------------------------------------------------------------------- typed numbers


def _chapter(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "demo.md"
    path.write_text("---\njupytext:\n  x: 1.5\n---\n" + textwrap.dedent(body), encoding="utf-8")
    return path


def test_prose_numbers_finds_typed_numbers_and_skips_what_is_not_prose(tmp_path):
    path = _chapter(tmp_path, """
    (sec-1)=
    # A section with 3 seeds

    We train for 200 steps at width {glue:text}`width:d` and $d = 128$, see {cite:p}`ba2016layer`,
    {ref}`Figure 2 <fig-2>` and Xiong et al.'s Theorem 1 and Figure 3(b) of arXiv:2002.04745,
    in 2020, with GPT-2, Qwen3, float16 and L2 norms, claim C3.6, `x = 5`, Gemma 2 and
    FlashAttention 2.6; ratio 4.6× and 1e-5 and 2,000 draws.

    $$
    y = 0.5 x
    $$

    ```{code-cell} ipython3
    seeds = 7
    ```

    :::{figure} fig.png
    :width: 80%
    :alt: a curve rising over 10 layers
    Caption with 0.25.
    :::
    """)
    found = [t.number for t in prose_numbers.typed_numbers(path)]
    assert found == ["3", "200", "4.6", "1e-5", "2,000", "10", "0.25"]


def test_prose_numbers_allowlist_must_cover_the_number_itself(tmp_path, monkeypatch):
    path = _chapter(tmp_path, "A 95% interval over 12 seeds.\n")
    allow = tmp_path / "allow.toml"
    allow.write_text('[[allow]]\nchapter = "*"\ntext = "95% "\nreason = "r"\n', encoding="utf-8")
    monkeypatch.setattr(prose_numbers, "ALLOWLIST", allow)
    left, entries = prose_numbers.unexplained(path)
    assert [t.number for t in left] == ["12"] and len(entries) == 1


def test_prose_numbers_inline_math_may_span_a_line_break(tmp_path):
    path = _chapter(tmp_path, "so $s(a) = 1 -\n\\epsilon/2$ holds; then 7 more.\n")
    assert [t.number for t in prose_numbers.typed_numbers(path)] == ["7"]


def test_prose_numbers_a_year_is_1950_to_2039_only(tmp_path):
    """Mutant: every 20xx passes as a year, so a typed width 2048 (or 2099 steps) is never found."""
    path = _chapter(tmp_path, "Published in 2020 and 1999, trained at width 2048 for 2099 steps (2039).\n")
    assert [t.number for t in prose_numbers.typed_numbers(path)] == ["2048", "2099"]


def test_prose_numbers_reads_directive_titles(tmp_path):
    """Mutant: a directive's argument (the title of an admonition, exercise or proof box) is
    skipped, so "After 300 steps" in a title passes."""
    path = _chapter(tmp_path, """
    :::{admonition} After 300 steps
    :class: tip
    Body with 4.5.
    :::

    ```{exercise} Width 96
    :label: ex-w
    Predict it.
    ```

    ```{prf:theorem} A bound for 12 layers
    :label: thm-b
    ```

    ```{glue:figure} fig_key
    :alt: curves for 5 seeds
    Caption: 0.75 of the runs.
    ```
    """)
    assert [t.number for t in prose_numbers.typed_numbers(path)] == ["300", "4.5", "96", "12", "5", "0.75"]


def test_prose_numbers_finds_a_leading_decimal_point(tmp_path):
    """Mutant: the ``.5`` form of a number (no digit before the point) is never found."""
    path = _chapter(tmp_path, "A dropout of .5 and a ratio of .25; version 0.5 of a tool.\n")
    assert [t.number for t in prose_numbers.typed_numbers(path)] == [".5", ".25"]


# ----------------------------------------------------------------------------- audit words


def test_audit_words_counts_outside_folded_blocks_only(tmp_path):
    path = _chapter(tmp_path, """
    The check C3.6a accepts this; claim C3.6 is fine. Its tolerance is loose.

    ```{code-cell} ipython3
    ---
    tags: [hide-cell]
    ---
    verify("C3.6b", x)  # tolerance
    ```

    ```{solution-start} ex-1
    :class: dropdown
    ```
    The z-score of C5.8-post-factor is small.
    ```{solution-end}
    ```

    :::{admonition} Details
    :class: dropdown
    atol and rtol
    :::
    """)
    assert audit_words.count(path) == ["C3.6a", "accepts", "tolerance"]


def test_audit_words_on_a_built_page():
    html = """<html><body><article>
    <p>We find C5.8-post-factor within tolerance.</p>
    <div class="cell tag_hide-cell"><p>C5.8-agree has |z| below 4</p></div>
    <details><summary>x</summary>atol</details>
    </article></body></html>"""
    assert audit_words.audit_terms(audit_words.html_main_line(html)) == ["C5.8-post-factor", "tolerance"]


def test_audit_words_counts_the_text_after_a_solution(tmp_path):
    """Mutant: a solution block never ends (``solution-end`` ignored), so everything after the
    first solution, the summary included, is never counted."""
    path = _chapter(tmp_path, """
    ```{solution-start} ex-1
    :class: dropdown
    ```
    The tolerance of C3.6a.
    ```{solution-end}
    ```

    ## Summary
    Check C3.6b accepts it.
    """)
    assert audit_words.count(path) == ["C3.6b", "accepts"]


def test_audit_words_only_a_dropdown_class_folds_a_block(tmp_path):
    """Mutant: any ``:class:`` option folds a block, so a visible ``:class: tip`` admonition
    (or a verdict box) is not counted."""
    path = _chapter(tmp_path, """
    :::{admonition} Note
    :class: tip
    The atol of C3.6a.
    :::

    :::{admonition} Details
    :class: dropdown
    The rtol of C3.6b.
    :::
    """)
    assert audit_words.count(path) == ["C3.6a", "atol"]
