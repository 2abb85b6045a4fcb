"""Helpers the chapters use to check claims visibly and glue numbers into the prose.

Chapters call :func:`verify` for every claimed number: it runs
:func:`normlib.claims.check` (which raises when the measurement leaves its
tolerance) and glues the measured value under the check's ID, so that the ledger
page (``book/ledger.md``) can show the book's number next to the article's.
"""

from __future__ import annotations

import html

from .claims import CheckResult, check

__all__ = ["verify", "glue_value", "glue_phrase", "glue_quoted", "shown_key", "CheckTable"]


def glue_value(key: str, value, *, display: bool = False, machine_dependent: bool = False):
    """Glue a plain Python value (floats/ints/str; numpy scalars are converted).

    Parameters
    ----------
    key : str
        The glue key, referenced in the prose by a ``{glue:text}`` role.
    value : float, int, str or numpy scalar
        The value; a 0-d numpy value is converted with ``.item()``.
    display : bool, keyword-only
        Also display the value in the cell output.
    machine_dependent : bool, keyword-only
        The value is a timing (or otherwise depends on the machine and its load), so
        two builds may differ: it is marked in the output's metadata, and the
        reproducibility check (``_ext/glued_values.py``) leaves it out. The prose must
        say that the number is a timing.

    Returns
    -------
    object
        The glued (plain Python) value.

    Notes
    -----
    Numpy 2 scalars break ``{glue:text}`` format specs, so they are converted here.
    The output is the one ``myst_nb.glue`` writes (a display with ``scrapbook``
    metadata), plus ``{"normlib": {"machine_dependent": true}}`` for timings.
    ``myst_nb`` is imported only inside this function. See the ledger page
    (``book/ledger.md``) and the execution report (``book/execution-report.md``).
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display
    from myst_nb.ext.glue import GLUE_PREFIX  # imported lazily: normlib must work without myst-nb

    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = dict(name=key, mime_prefix=prefix)
    if machine_dependent:
        metadata["normlib"] = {"machine_dependent": True}
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
    return value


def glue_phrase(key: str, condition, if_true: str, if_false: str) -> str:
    """Glue the wording that the data support, so a comparison in the prose cannot go stale.

    Parameters
    ----------
    key : str
        The glue key; the prose writes ``{glue:text}`key:s```.
    condition : bool
        The comparison, computed from the measured values (e.g. ``lo_a > hi_b``).
    if_true, if_false : str
        The wording when the condition holds and when it does not.

    Returns
    -------
    str
        The glued wording.

    Raises
    ------
    TypeError
        ``condition`` is not a bool (a numpy bool is accepted), or a wording is not a str.

    Notes
    -----
    A sentence that compares or ranks measured values ("A is below B", "the intervals
    overlap") is either written with this helper or guarded by a check that fails when the
    data stop supporting it. See CONTRIBUTING.md.
    """
    import numpy as np

    if not isinstance(condition, (bool, np.bool_)):
        raise TypeError(f"glue_phrase({key!r}): condition must be a bool; got {type(condition).__name__}")
    if not isinstance(if_true, str) or not isinstance(if_false, str):
        raise TypeError(f"glue_phrase({key!r}): both wordings must be str")
    return glue_value(key, if_true if bool(condition) else if_false)


def glue_quoted(chapter: str) -> dict:
    """Glue every number that ``claims.toml`` quotes from the article or a paper for a chapter.

    Parameters
    ----------
    chapter : str
        A chapter name (``"rmsnorm"``); every ``[quoted."q_..."]`` entry whose ``chapter``
        is this one is glued under its key, as the string printed in the source.

    Returns
    -------
    dict
        ``{key: value}`` of the glued strings.

    Raises
    ------
    KeyError
        No quoted number is registered for ``chapter``.

    Notes
    -----
    The prose writes ``{glue:text}`q_name:s```, so the article's numbers in the prose and in
    the claims ledger come from one place. See :func:`normlib.claims.quoted_numbers`.
    """
    from .claims import quoted_numbers

    mine = {k: q for k, q in quoted_numbers().items() if q.chapter == chapter}
    if not mine:
        raise KeyError(f"claims.toml has no [quoted] number for chapter {chapter!r}")
    for k, q in mine.items():
        glue_value(k, q.value)
    return {k: q.value for k, q in mine.items()}


def verify(check_id: str, measured, *, expected: float | None = None, machine_dependent: bool = False) -> CheckResult:
    """Check a claimed number (raises on failure) and glue it under its check ID.

    Parameters
    ----------
    check_id : str
        A check ID of ``claims.toml``, e.g. ``"C3.6a"``.
    measured : float or bool
        The measurement.
    expected : float, optional, keyword-only
        The run-time reference of an ``atol``/``rtol`` check.

    machine_dependent : bool, keyword-only
        The measured value comes from a computation whose rounding depends on the CPU's
        floating-point kernels (e.g. a training run): both glues are marked as in
        :func:`glue_value`, so the cross-kernel comparison does not require equality. The
        check itself still runs (and must pass) on every machine.

    Returns
    -------
    CheckResult

    Raises
    ------
    normlib.claims.ClaimCheckFailed
        The measurement is outside its registered tolerance.

    Notes
    -----
    Runs :func:`normlib.claims.check` and glues the measured value (or ``"holds"``
    for a bool check) under ``check_id``, for the chapter's prose, and the value as
    the check table shows it (formatted with the check's ``fmt``, never ``-0.000``)
    under ``check_id + "__shown"``, for the ledger page (``book/ledger.md``).
    """
    result = check(check_id, measured, expected=expected)
    if result.check.mode == "bool":
        glue_value(check_id, "holds")
    else:
        glue_value(check_id, float(result.measured), machine_dependent=machine_dependent)
    glue_value(shown_key(check_id), result.shown, machine_dependent=machine_dependent)
    return result


def shown_key(check_id: str) -> str:
    """The glue key under which :func:`verify` stores a check's formatted value.

    Parameters
    ----------
    check_id : str

    Returns
    -------
    str
        ``check_id + "__shown"``.

    Notes
    -----
    The ledger page (``book/ledger.md``) pastes this string (format spec ``s``).
    """
    return f"{check_id}__shown"


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
