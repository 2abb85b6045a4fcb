"""Helpers the chapters use to check claims visibly and glue numbers into the prose.

Chapters call :func:`verify` for every claimed number: it runs
:func:`normlib.claims.check` (which raises when the measurement leaves its
tolerance) and glues the measured value under the check's ID, so that the ledger
page (``book/ledger.md``) can show the book's number next to the article's.
"""

from __future__ import annotations

import html

from .claims import CheckResult, check

__all__ = ["verify", "glue_value", "CheckTable"]


def glue_value(key: str, value, *, display: bool = False):
    """Glue a plain Python value (floats/ints/str; numpy scalars are converted).

    Numpy 2 scalars break ``{glue:text}`` format specs, so they are converted here.
    """
    from myst_nb import glue  # imported lazily: normlib must work without myst-nb

    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    glue(key, value, display=display)
    return value


def verify(check_id: str, measured, *, expected: float | None = None) -> CheckResult:
    """Check a claimed number (raises on failure) and glue it under its check ID."""
    result = check(check_id, measured, expected=expected)
    if result.check.mode == "bool":
        glue_value(check_id, "holds")
    else:
        glue_value(check_id, float(result.measured))
    return result


class CheckTable:
    """A small HTML table of passed checks, for showing results to the reader."""

    def __init__(self, *results: CheckResult):
        self.results = results

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results:
            exp = "" if r.expected is None else html.escape(str(r.expected))
            rows.append(
                "<tr>"
                f"<td><code>{html.escape(r.id)}</code></td>"
                f"<td>{html.escape(r.check.what)}</td>"
                f"<td><b>{html.escape(r.shown)}</b></td>"
                f"<td>{exp}</td>"
                f"<td>{html.escape(r.check.tolerance())}</td>"
                '<td class="pass">✓ pass</td></tr>'
            )
        head = "<tr><th>check</th><th>what</th><th>measured</th><th>reference</th><th>tolerance</th><th></th></tr>"
        return f'<table class="claim-checks">{head}{"".join(rows)}</table>'

    def _repr_markdown_(self) -> str:
        lines = ["| check | what | measured | reference | tolerance | |", "|---|---|---|---|---|---|"]
        for r in self.results:
            exp = "" if r.expected is None else str(r.expected)
            lines.append(f"| `{r.id}` | {r.check.what} | **{r.shown}** | {exp} | {r.check.tolerance()} | ✓ pass |")
        return "\n".join(lines)
