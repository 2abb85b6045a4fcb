"""Helpers the chapters use to check claims visibly and glue numbers into the prose.

Chapters call :func:`verify` for every claimed number: it runs
:func:`normlib.claims.check` (which raises when the measurement leaves its
tolerance) and glues the measured value under the check's ID, so that the ledger
page (``book/ledger.md``) can show the book's number next to the article's.
"""

from __future__ import annotations

import html

from .claims import CheckResult, check

__all__ = ["verify", "expect", "SentenceUnsupported", "glue_value", "glue_phrase", "glue_quoted", "shown_key",
           "CheckTable", "check_table_md"]


class SentenceUnsupported(AssertionError):
    """The data no longer support a sentence the page states: rewrite the sentence."""


def expect(condition, key: str, sentence: str) -> None:
    """Guard a hand-written sentence: raise when the data computed beside it stop supporting it.

    Parameters
    ----------
    condition : bool
        What the sentence asserts, computed from the data (a numpy bool is accepted). Its
        margin comes from the measurement's uncertainty, like a check's window (write
        ``lo > 1``, the lower end of an interval, not ``mean > 1``).
    key : str
        The sentence's name; the page marks the sentence with a comment line
        ``% guard: <key>`` just before its paragraph, list item or admonition, and
        ``tests/test_guards.py`` pairs every marker with an ``expect`` call of the same key.
    sentence : str
        The sentence (or its gist), repeated in the error so the author knows what to rewrite.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``condition`` is not a bool, or ``key`` or ``sentence`` is not a non-empty str.
    SentenceUnsupported
        ``condition`` is false: the page (and so nbval and the book's build) fails, naming the
        sentence to rewrite.

    Notes
    -----
    Headings, verdict boxes, "what this means in practice" paragraphs, findings and summaries
    are written by hand and guarded this way; wording generated from data
    (:func:`glue_phrase`) is kept for results that legitimately vary by machine. See
    CONTRIBUTING.md and, for an example, the landing page (``book/intro.md``).
    """
    import numpy as np

    if not isinstance(condition, (bool, np.bool_)):
        raise TypeError(f"expect({key!r}): condition must be a bool; got {type(condition).__name__}")
    for name, v in (("key", key), ("sentence", sentence)):
        if not isinstance(v, str) or not v.strip():
            raise TypeError(f"expect: {name} must be a non-empty str; got {v!r}")
    if not bool(condition):
        raise SentenceUnsupported(
            f"the data no longer support the sentence {key!r}: rewrite it (and its translation): {sentence}"
        )


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
    data stop supporting it. See CONTRIBUTING.md; the landing page (``book/intro.md``)
    generates its sentences about the registry this way.
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
    the claims ledger come from one place (``book/ledger.md``). See
    :func:`normlib.claims.quoted_numbers`.
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
        The measured value moves with the floating-point kernels (or the machine): both
        glued values are marked so (see :func:`glue_value`); the check itself still runs.

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
    md = {"machine_dependent": True} if machine_dependent else {}
    if result.check.mode == "bool":
        glue_value(check_id, "holds", **md)
    else:
        glue_value(check_id, float(result.measured), **md)
    glue_value(shown_key(check_id), result.shown, **md)
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


def check_table_md(check_ids, *, page: str) -> str:
    """A Markdown table of checks that another page ran, its values glued from that page.

    Parameters
    ----------
    check_ids : iterable of str
        Check IDs of ``claims.toml``, in the order to show them.
    page : str
        The page (path under ``book/`` without ``.md``, e.g. ``"rmsnorm"``) whose cells called
        :func:`verify` for these checks.

    Returns
    -------
    str
        A Markdown table (check, what is measured, the value, the window, why the window is
        that wide, a value the window rejects); each value is a cross-document glue role of
        the ``glue:text`` kind that names ``/book/<page>.md::<id>__shown`` with the format
        ``s``, so the evidence page shows the number the lecture checked, without running the
        computation again.

    Raises
    ------
    KeyError
        An unknown check ID.

    Notes
    -----
    An evidence page (``book/evidence/<chapter>.md``) displays this with
    ``IPython.display.Markdown``; a value the lecture did not glue fails the ``-W`` build.
    See the claims ledger (``book/ledger.md``).
    """
    from .claims import registry

    _, checks = registry()
    rows = ["| check | what is measured | value | window | why this window | rejects |", "|---|---|---|---|---|---|"]
    for cid in check_ids:
        if cid not in checks:
            raise KeyError(f"no check {cid!r} in claims.toml")
        k = checks[cid]
        cx = "" if k.counterexample is None else str(k.counterexample)
        cells = [f"`{cid}`", k.what, f"**{{glue:text}}`/book/{page}.md::{shown_key(cid)}:s`**",
                 k.tolerance(), k.why, cx]
        rows.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(rows)
