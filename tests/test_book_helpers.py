"""normlib.book: the result table the chapters show (no myst-nb needed for these)."""

from __future__ import annotations

from normlib.book import CheckTable
from normlib.claims import Check, CheckResult


def _result():
    k = Check(id="C9.9a", claim="C9.9", what="ratio <a & b>", fmt=".3f", atol=0.01)
    return CheckResult(k, 0.7153, "0.715", "0.715")


def test_check_table_html_escapes_and_marks_the_pass():
    html = CheckTable(_result())._repr_html_()
    assert html.startswith('<table class="claim-checks">') and html.endswith("</table>")
    assert "<code>C9.9a</code>" in html
    assert "ratio &lt;a &amp; b&gt;" in html  # user text is escaped
    assert '<td class="pass">' in html and html.count("<tr>") == 2  # header + one row
    assert "atol 0.01" in html


def test_check_table_markdown_has_one_row_per_result():
    md = CheckTable(_result(), _result())._repr_markdown_().splitlines()
    assert len(md) == 4 and md[2].startswith("| `C9.9a` | ratio <a & b> | **0.715** | 0.715 |")


def test_cached_registry_is_read_only():
    """registry() is cached for the whole process: a chapter must not be able to edit a check in place."""
    import pytest

    from normlib.claims import registry

    claims, checks = registry()
    some = next(iter(checks))
    with pytest.raises(TypeError):
        checks[some] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        claims["C0.0"] = None  # type: ignore[index]
    assert some in registry()[1] and registry()[1][some].id == some


def test_glue_value_writes_what_myst_nb_glue_writes_and_marks_timings():
    """glue_value's output equals myst_nb.glue's (plain value); machine_dependent adds a marker."""
    import numpy as np
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from myst_nb import glue

    from normlib.book import glue_value

    InteractiveShell.instance()
    with capture_output() as ours:
        assert glue_value("k", np.float64(1.5)) == 1.5 and type(glue_value("k2", np.float64(1.5))) is float
    with capture_output() as theirs:
        glue("k", 1.5, display=False)
    assert ours.outputs[0].data == theirs.outputs[0].data
    assert ours.outputs[0].metadata == theirs.outputs[0].metadata
    assert "normlib" not in ours.outputs[0].metadata

    with capture_output() as timed:
        glue_value("t", 0.25, machine_dependent=True)
    md = timed.outputs[0].metadata
    assert md["scrapbook"]["name"] == "t" and md["normlib"] == {"machine_dependent": True}
