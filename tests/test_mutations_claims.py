"""Tests that kill the mutants of normlib.claims and normlib.book that survived mutation testing.

Issue 13, section 9: each test below fails when one plausible one-line bug is applied
(named in its docstring) and passes on the real code. They run against a small in-memory
registry (``claims.registry`` is monkeypatched, so the real claims.toml and its cache are
untouched) and record what :func:`normlib.book.verify` glues by monkeypatching
``normlib.book.glue_value`` (no IPython kernel, no myst-nb needed except in the one test
that checks the real display output).

Every edge value is exact in binary floating point (0.25, 0.5, 0.75, ...), so "exactly at
the edge" really is at the edge and not one rounding away from it.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType

import numpy as np
import pytest

import normlib.book as book
import normlib.claims as claims_mod
from normlib.claims import Check, Claim, ClaimCheckFailed, check

_CLAIM = Claim(id="C1.1", chapter="why-normalize", statement="s", method="reproduced", reason="r.", kind="extension")
_CHECKS = (
    Check(id="C1.1r", claim="C1.1", what="range", fmt=".3f", lo=0.5, hi=0.75),
    Check(id="C1.1p", claim="C1.1", what="a point window", fmt=".3f", lo=0.5, hi=0.5),
    Check(id="C1.1a", claim="C1.1", what="close, atol, reference in the registry", fmt=".3f", expected=1.0, atol=0.25),
    Check(id="C1.1c", claim="C1.1", what="close, rtol, reference at the call", fmt=".3f", rtol=0.5),
    Check(id="C1.1m", claim="C1.1", what="close, atol + rtol, reference at the call", fmt=".3f", atol=0.25, rtol=0.25),
    Check(id="C1.1t", claim="C1.1", what="printed", fmt=".3f", printed="0.019"),
    Check(id="C1.1b", claim="C1.1", what="bool", kind="bool"),
    Check(id="C1.1w", claim="C1.1", what="|m − e| of the fit", fmt=".3f", lo=0.0, hi=0.995,
          why="the printed precision | half a unit", counterexample=1.5),
)


@pytest.fixture
def reg(monkeypatch):
    """Replace the registry by the checks above (restored by monkeypatch at teardown)."""
    claims = MappingProxyType({"C1.1": _CLAIM})
    checks = MappingProxyType({k.id: k for k in _CHECKS})
    monkeypatch.setattr(claims_mod, "registry", lambda: (claims, checks))
    return checks


@pytest.fixture
def glued(monkeypatch):
    """Record every (key, value) that verify glues, instead of displaying it."""
    calls: list[tuple[str, object]] = []

    def record(key, value, **kw):
        calls.append((key, value))
        return value

    monkeypatch.setattr(book, "glue_value", record)
    return calls


@pytest.fixture
def glued_kw(monkeypatch):
    """Record every (key, value, keyword arguments) that verify glues."""
    calls: list[tuple[str, object, dict]] = []

    def record(key, value, **kw):
        calls.append((key, value, kw))
        return value

    monkeypatch.setattr(book, "glue_value", record)
    return calls


# ----------------------------------------------------------------------------- verify


FAILING = [
    ("C1.1r", 0.8, {}),
    ("C1.1a", 1.5, {}),
    ("C1.1c", 4.0, {"expected": 2.0}),
    ("C1.1t", 0.0201, {}),
    ("C1.1b", False, {}),
]


@pytest.mark.parametrize(("cid", "m", "kw"), FAILING, ids=[f[0] for f in FAILING])
def test_verify_raises_on_a_failed_check_and_glues_nothing(reg, glued, cid, m, kw):
    """Mutant: verify catches ClaimCheckFailed (and returns, or glues anyway).

    A failed claim check must fail the chapter: verify re-raises check()'s
    ClaimCheckFailed, and glues nothing (a ledger row must never show a value that failed).
    """
    with pytest.raises(ClaimCheckFailed):
        book.verify(cid, m, **kw)
    assert glued == []


def test_verify_passes_expected_through_to_check(reg, glued):
    """Mutant: verify calls check(check_id, measured) without expected=.

    C1.1c takes its reference at the call: with it, 2.5 passes around 2.0 (tolerance 1.0)
    and the result carries the reference; 3.5 fails around 2.0 but would pass around 3.0,
    so the reference really decides (a verify that dropped it raises TypeError instead).
    """
    r = book.verify("C1.1c", 2.5, expected=2.0)
    assert r.expected == "2.000" and r.measured == 2.5
    with pytest.raises(ClaimCheckFailed):
        book.verify("C1.1c", 3.5, expected=2.0)
    book.verify("C1.1c", 3.5, expected=3.0)


def test_verify_glues_the_raw_value_under_the_id_and_the_formatted_string_under_the_shown_key(reg, glued):
    """Mutant: verify glues the raw measurement (or its float) under ``shown_key(id)``.

    The ledger pastes the shown key with format spec ``s``: it must be the check's
    formatted string (``fmt = ".3f"``; a negative value that rounds to zero without its sign).
    """
    book.verify("C1.1r", 0.6123456)
    book.verify("C1.1m", -0.0001, expected=0.0)
    book.verify("C1.1b", True)
    assert glued == [
        ("C1.1r", 0.6123456),
        ("C1.1r__shown", "0.612"),
        ("C1.1m", -0.0001),
        ("C1.1m__shown", "0.000"),
        ("C1.1b", "holds"),
        ("C1.1b__shown", "holds"),
    ]
    assert all(type(v) is str for k, v in glued if k.endswith("__shown"))
    assert type(glued[0][1]) is float  # a plain Python float under the ID (numpy scalars break glue format specs)


def test_verify_converts_a_numpy_measurement_to_a_plain_float(reg, glued):
    book.verify("C1.1r", np.float32(0.625))
    assert glued[0] == ("C1.1r", 0.625) and type(glued[0][1]) is float and glued[1] == ("C1.1r__shown", "0.625")


def test_verify_displays_the_shown_string_through_the_real_glue(reg):
    """The same through the real glue_value and IPython's display (myst-nb's glue bundle)."""
    pytest.importorskip("myst_nb")
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    with capture_output() as out:
        book.verify("C1.1r", 0.6123456)
    names = [o.metadata["scrapbook"]["name"] for o in out.outputs]
    assert names == ["C1.1r", "C1.1r__shown"]
    plain = [next(v for k, v in o.data.items() if k.endswith("text/plain")) for o in out.outputs]
    assert plain == ["0.6123456", "'0.612'"]


# ----------------------------------------------------------------------------- verify: the machine-dependent marker

# one check of each kind verify glues differently: a number, a bool, a reference at the call
_KINDS = [("C1.1r", 0.625, {}), ("C1.1b", True, {}), ("C1.1c", 2.5, {"expected": 2.0})]


def test_verify_glues_without_the_machine_dependent_marker_by_default(reg, glued_kw):
    """Mutant: ``machine_dependent=True`` as verify's default (every claim's number would be
    exempt from the reproducibility checks of ``_ext/glued_values.py``)."""
    for cid, m, kw in _KINDS:
        book.verify(cid, m, **kw)
    assert [k for k, _, _ in glued_kw] == [key for cid, _, _ in _KINDS for key in (cid, book.shown_key(cid))]
    assert all(not kw.get("machine_dependent", False) for _, _, kw in glued_kw), glued_kw


@pytest.mark.parametrize(("cid", "m", "kw"), _KINDS, ids=[k[0] for k in _KINDS])
def test_a_machine_dependent_check_marks_every_key_it_glues(reg, glued_kw, cid, m, kw):
    """Mutant: the shown value (``shown_key``) glued without the marker, or the value of a bool
    check: the ledger's copy of a timing would then be compared across builds, or worse, a
    marked value's formatted twin would differ unmarked."""
    book.verify(cid, m, machine_dependent=True, **kw)
    assert [(k, c.get("machine_dependent")) for k, _, c in glued_kw] == [(cid, True), (book.shown_key(cid), True)]


def test_the_machine_dependent_marker_reaches_the_reader_of_the_builds(reg):
    """The same through the real glue_value and IPython's display, read back by
    ``_ext/glued_values.py`` (the comparison ``make determinism-kernels`` runs)."""
    pytest.importorskip("myst_nb")
    import importlib.util
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    path = Path(__file__).resolve().parent.parent / "_ext" / "glued_values.py"
    spec = importlib.util.spec_from_file_location("glued_values_for_verify", path)
    glued_values = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glued_values)

    InteractiveShell.instance()
    with capture_output() as out:
        book.verify("C1.1r", 0.6123456, machine_dependent=True)
        book.verify("C1.1a", 1.0)
    read = glued_values.glued_in_outputs({"data": o.data, "metadata": o.metadata} for o in out.outputs)
    assert {k: v["machine_dependent"] for k, v in read.items()} == {
        "C1.1r": True, "C1.1r__shown": True, "C1.1a": False, "C1.1a__shown": False}


# ----------------------------------------------------------------------------- check_table_md


def _cells(row: str) -> list[str]:
    """The cells of one Markdown table row (a ``\\|`` inside a cell is not a separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_check_table_md_shows_the_lectures_shown_value_and_the_window(reg):
    """Mutants: the glue role names the raw value (``C1.1w``, unformatted) instead of
    ``C1.1w__shown``; the role is not an absolute path to the lecture; a ``|`` in a cell is
    not escaped (the row falls apart); the window or the rejected value is left out."""
    md = book.check_table_md(["C1.1w", "C1.1r"], page="rmsnorm")
    lines = md.splitlines()
    assert len(lines) == 4 and lines[1] == "|---|---|---|---|---|---|"
    assert _cells(lines[0]) == ["check", "what is measured", "value", "window", "why this window", "rejects"]
    assert _cells(lines[2]) == [
        "`C1.1w`", "\\|m − e\\| of the fit", "**{glue:text}`/book/rmsnorm.md::C1.1w__shown:s`**",
        "in [0, 0.995]", "the printed precision \\| half a unit", "1.5"]
    assert _cells(lines[3])[0] == "`C1.1r`" and _cells(lines[3])[3] == "in [0.5, 0.75]" and _cells(lines[3])[5] == ""


def test_check_table_md_refuses_an_unknown_check(reg):
    """Mutant: an unknown ID skipped (the evidence page would silently show one check fewer)."""
    with pytest.raises(KeyError, match="C1.1zz"):
        book.check_table_md(["C1.1r", "C1.1zz"], page="rmsnorm")


# ----------------------------------------------------------------------------- check(): NaN reference


@pytest.mark.parametrize("cid", ["C1.1c", "C1.1m"])
@pytest.mark.parametrize("e", [math.nan, np.float64("nan")])
def test_a_nan_reference_fails_a_close_check(reg, cid, e):
    """Mutant: ``if abs(m - e) > tol: raise`` instead of ``if not abs(m - e) <= tol``.

    With a NaN reference, |m − e| and the tolerance are NaN and every comparison is false:
    only the negated ``<=`` rejects it. A NaN closed form must fail the check, not pass it.
    """
    with pytest.raises(ClaimCheckFailed):
        check(cid, 1.0, expected=e)


def test_a_nan_reference_in_the_registry_fails(monkeypatch):
    k = Check(id="C1.1n", claim="C1.1", what="close, NaN reference", expected=math.nan, atol=0.25)
    monkeypatch.setattr(
        claims_mod, "registry", lambda: (MappingProxyType({"C1.1": _CLAIM}), MappingProxyType({k.id: k}))
    )
    with pytest.raises(ClaimCheckFailed):
        check("C1.1n", 1.0)


# ----------------------------------------------------------------------------- check(): the edges are inclusive


@pytest.mark.parametrize("m", [0.5, 0.75])
def test_a_range_check_accepts_a_value_exactly_at_lo_or_hi(reg, m):
    """Mutant: ``m <= lo`` / ``m >= hi`` (a strict window). lo = 0.5 and hi = 0.75 themselves pass."""
    assert check("C1.1r", m).measured == m


@pytest.mark.parametrize("m", [np.nextafter(0.5, 0.0), np.nextafter(0.75, 1.0)])
def test_a_range_check_rejects_the_next_float_outside(reg, m):
    with pytest.raises(ClaimCheckFailed):
        check("C1.1r", float(m))


@pytest.mark.parametrize(
    ("cid", "m", "kw"),
    [
        ("C1.1a", 1.25, {}),  # |m − 1| = atol = 0.25
        ("C1.1a", 0.75, {}),
        ("C1.1c", 3.0, {"expected": 2.0}),  # |m − 2| = rtol·|e| = 0.5·2 = 1
        ("C1.1c", -1.0, {"expected": -2.0}),  # rtol uses |e|
        ("C1.1m", 2.75, {"expected": 2.0}),  # atol + rtol·|e| = 0.25 + 0.5 = 0.75
        ("C1.1m", 1.25, {"expected": 2.0}),
    ],
)
def test_a_close_check_accepts_a_value_exactly_at_the_tolerance(reg, cid, m, kw):
    """Mutant: ``abs(m - e) < tol``. A value with |m − e| = tol exactly (all terms exact in binary) passes."""
    assert check(cid, m, **kw).measured == m


@pytest.mark.parametrize(
    ("cid", "m", "kw"),
    [
        ("C1.1a", float(np.nextafter(1.25, 2.0)), {}),
        ("C1.1c", float(np.nextafter(3.0, 4.0)), {"expected": 2.0}),
        ("C1.1m", float(np.nextafter(1.25, 0.0)), {"expected": 2.0}),
    ],
)
def test_a_close_check_rejects_the_next_float_outside(reg, cid, m, kw):
    with pytest.raises(ClaimCheckFailed):
        check(cid, m, **kw)


# ----------------------------------------------------------------------------- lo == hi


def test_a_point_window_lo_equal_to_hi_is_a_valid_check():
    """Mutant: ``if not k.lo < k.hi: raise`` at load. lo == hi is a legal (point) window; lo > hi is not."""
    claims_mod._validate_check(Check(id="C1.1p", claim="C1.1", what="point", lo=0.5, hi=0.5))
    with pytest.raises(ValueError, match="lo 0.75 > hi 0.5"):
        claims_mod._validate_check(Check(id="C1.1x", claim="C1.1", what="w", lo=0.75, hi=0.5))


def test_a_point_window_accepts_exactly_its_point(reg):
    check("C1.1p", 0.5)
    for m in (np.nextafter(0.5, 0.0), np.nextafter(0.5, 1.0)):
        with pytest.raises(ClaimCheckFailed):
            check("C1.1p", float(m))


def test_a_point_window_loads_from_toml(tmp_path, monkeypatch):
    """The same through registry() reading a claims.toml (the loader validates every check)."""
    path = tmp_path / "claims.toml"
    path.write_text(
        '[claim."C1.1"]\nchapter = "why-normalize"\nkind = "extension"\nstatement = "s"\nreason = "r."\nmethod = "reproduced"\n\n'
        '[check."C1.1p"]\nwhat = "a point window"\nlo = 0.5\nhi = 0.5\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(claims_mod, "_REGISTRY_PATH", path)
    claims_mod.registry.cache_clear()
    try:
        _, checks = claims_mod.registry()
        assert checks["C1.1p"].lo == checks["C1.1p"].hi == 0.5
    finally:
        monkeypatch.undo()
        claims_mod.registry.cache_clear()
