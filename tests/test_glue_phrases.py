"""The phrase catalog of glued wording (``_ext/glue_phrases.py``): extraction and lookup."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("glue_phrases", ROOT / "_ext" / "glue_phrases.py")
gp = importlib.util.module_from_spec(_spec)
sys.modules["glue_phrases"] = gp
_spec.loader.exec_module(gp)

CHAPTER = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# A chapter

```{code-cell} ipython3
glue_phrase("k1", a > b, "A is above B", "A is not above B")
glue_phrase("k2", z > 2, f"{abs(z):.1f} standard errors {('above' if z > 0 else 'below')} one", "within noise")
glue_value("k3", "computed elsewhere" if x else "not computed")
glue_value("k4", 0.25)
glue_value("k5", sentence)
glue_phrase("k6", ok, "Every rate" + (", and more" if more else "") + " trains", "none")
glue_value("k7", "a wording glued as a value")
glue_value("k8", f"{n_ok} of {n} rows")
```
'''


def test_both_branches_templates_and_inner_words_are_extracted(tmp_path):
    """Mutants: ``glue_value`` left out of the calls read (its wordings, k7, and f-string
    templates, k8, never reach the catalog); f-strings not turned into templates."""
    ch = tmp_path / "x.md"
    ch.write_text(CHAPTER, encoding="utf-8")
    ids = list(dict.fromkeys(m for m, _ in gp.source_messages(ch)))
    assert sorted(ids) == sorted(["A is above B", "A is not above B", "{0} standard errors {1} one", "above", "below",
                   "within noise", "computed elsewhere", "not computed", ", and more",
                   "Every rate, and more trains", "Every rate trains", "none",
                   "a wording glued as a value", "{0} of {1} rows"])


def test_executed_wording_that_no_source_explains_is_added(tmp_path):
    ch = tmp_path / "book" / "x.md"
    ch.parent.mkdir()
    ch.write_text(CHAPTER, encoding="utf-8")
    glue = {"k1": {"data": {"text/plain": "'A is above B'"}},
            "k2": {"data": {"text/plain": "'2.5 standard errors below one'"}},
            "k5": {"data": {"text/plain": "'a sentence built at run time'"}},
            "k4": {"data": {"text/plain": "0.25"}}}
    (tmp_path / "book" / "x.glue.json").write_text(json.dumps(glue), encoding="utf-8")
    msgs = dict(gp.phrase_messages([ch], tmp_path))
    assert "a sentence built at run time" in msgs and "(its value in the current execution)" in msgs["a sentence built at run time"]
    assert "2.5 standard errors below one" not in msgs  # the template accounts for it


def test_lookup_exact_template_and_numbers():
    p = gp.Phrases.from_catalog({
        "A is above B": "A 高于 B",
        "{0} standard errors {1} one": "比一{1} {0} 个标准误",
        "above": "高",
        "13.0 ± 0.3, 0.1 standard errors above the bound 13": "13.0 ± 0.3，比界 13 高 0.1 个标准误",
    })
    assert p.translate("A is above B") == "A 高于 B"
    assert p.translate("2.5 standard errors above one") == "比一高 2.5 个标准误"
    assert p.translate("13.4 ± 0.2, 2.1 standard errors above the bound 13") == "13.4 ± 0.2，比界 13 高 2.1 个标准误"
    assert p.translate("13.4 ± 0.2, 2.1 standard errors below the bound 13") is None  # other words: no guess
    assert p.translate("something else") is None
    q = gp.Phrases.from_catalog({"64 of 64 rows": "64 行中的 64 行"})
    assert q.translate("32 of 32 rows") == "32 行中的 32 行"
    assert q.translate("32 of 64 rows") is None  # which 64 became 32? no guess


def test_a_template_matches_the_whole_glued_text():
    """Mutant: a template not anchored at the end of the text; its last placeholder (or
    number) then matches one character: 第二层的位于 0 for "… at 0.154"."""
    p = gp.Phrases.from_catalog({"the second layer's at {0}": "第二层的位于 {0}",
                                 "a rate of 0.5": "速率为 0.5"})
    assert p.translate("the second layer's at 0.154") == "第二层的位于 0.154"
    assert p.translate("a rate of 0.154") == "速率为 0.154"
    assert p.translate("a rate of 0.154 and more") is None


def test_the_most_specific_template_is_tried_first():
    """Mutant: templates tried least specific first (or in catalog order): "3 of 4 rows"
    would match "{0} of {1}" with {1} = "4 rows" and read "4 rows 中的 3"."""
    p = gp.Phrases.from_catalog({"{0} of {1}": "{1} 中的 {0}", "{0} of {1} rows": "{1} 行中的 {0} 行"})
    assert p.translate("3 of 4 rows") == "4 行中的 3 行"
    assert p.translate("3 of 4") == "4 中的 3"
