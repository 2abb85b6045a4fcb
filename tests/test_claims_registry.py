"""The claims ledger: the catalogue, the registry (normlib/claims.toml), the chapters, and check().

Tests (1)-(4) iterate over whatever the registry holds today (chapters are being written
and claims move from "pending" to a final status one by one); test (5) pins down the
semantics of ``normlib.claims.check`` on a small temporary registry.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import normlib.claims as claims_mod
from normlib.claims import STATUSES, ClaimCheckFailed, check, registry

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
CATALOGUE = Path(__file__).resolve().parent / "data" / "claim_ids.txt"
SHARED_CLAIMS_MD = ROOT.parent / "shared" / "CLAIMS.md"

CLAIM_ROW = re.compile(r"^\|\s*(C\d+\.\d+)\s*\|", re.M)
# a code cell of a jupytext MyST chapter: ```{code-cell} ipython3 ... ``` (any fence length >= 3)
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
# verify("C3.6a", ...) or check('C3.6a', ...), also as claims.check / book.verify
CHECK_CALL = re.compile(r"\b(?:verify|check)\(\s*([\"'])(C\d+\.\d+[A-Za-z0-9_.-]*)\1")
FINAL_WITH_CHECKS = ("reproduced", "re-derived", "differs")


def _natural(cid: str) -> tuple[int, int]:
    a, b = cid[1:].split(".")
    return int(a), int(b)


def _catalogue() -> list[str]:
    return [line.strip() for line in CATALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _chapters() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(BOOK.glob("*.md"))}


def _used_check_ids() -> dict[str, set[str]]:
    """Check IDs passed to verify()/check() in the code cells of each chapter (prose examples do not count)."""
    used: dict[str, set[str]] = {}
    for name, text in _chapters().items():
        ids = {m.group(2) for cell in CODE_CELL.finditer(text) for m in CHECK_CALL.finditer(cell.group(2))}
        if ids:
            used[name] = ids
    return used


# ----------------------------------------------------------------------------- (1) the catalogue


def test_catalogue_is_well_formed():
    """tests/data/claim_ids.txt: the 50 IDs C1.1 ... C9.5 of CLAIMS.md, unique, in natural order."""
    ids = _catalogue()
    assert len(ids) == len(set(ids)), "duplicate IDs in the catalogue"
    assert all(re.fullmatch(r"C\d+\.\d+", i) for i in ids)
    assert ids == sorted(ids, key=_natural)
    assert ids[0] == "C1.1" and ids[-1] == "C9.5"


@pytest.mark.skipif(not SHARED_CLAIMS_MD.is_file(), reason="CLAIMS.md is not next to the repository")
def test_catalogue_equals_claims_md():
    """The vendored list equals the IDs in the tables of the shared CLAIMS.md (the source of truth)."""
    parsed = CLAIM_ROW.findall(SHARED_CLAIMS_MD.read_text(encoding="utf-8"))
    assert _catalogue() == parsed


# ----------------------------------------------------------------------------- (2) registry = catalogue


def test_registry_holds_exactly_the_catalogue():
    """Every catalogue ID is registered, and the registry holds no other claim."""
    claims, _ = registry()
    cat = set(_catalogue())
    assert sorted(cat - set(claims), key=_natural) == [], "claims missing from normlib/claims.toml"
    assert sorted(set(claims) - cat, key=_natural) == [], "claims in normlib/claims.toml but not in the catalogue"


def test_every_status_is_known():
    """Statuses come from the fixed list of the ledger (registry() also validates this at load)."""
    claims, _ = registry()
    assert {c.status for c in claims.values()} <= set(STATUSES)


# ----------------------------------------------------------------------------- (3) finished claims are complete


def _finished():
    claims, _ = registry()
    return [c for c in claims.values() if c.status != "pending"]


def test_finished_claims_link_to_a_labelled_section():
    """A non-pending claim names a label, and book/<chapter>.md contains the line '(<label>)='."""
    problems = []
    for c in _finished():
        if not c.label.strip():
            problems.append(f"{c.id}: empty label")
            continue
        path = BOOK / f"{c.chapter}.md"
        if not path.is_file():
            problems.append(f"{c.id}: chapter file {path.relative_to(ROOT)} does not exist")
            continue
        lines = {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
        if f"({c.label})=" not in lines:
            problems.append(f"{c.id}: no line '({c.label})=' in {path.relative_to(ROOT)}")
    assert not problems, "\n".join(problems)


def test_finished_claims_have_their_evidence():
    """reproduced/re-derived/differs need a check; source-checked a verdict; not-reproducible-here a note."""
    _, checks = registry()
    has_check = {k.claim for k in checks.values()}
    problems = []
    for c in _finished():
        if c.status in FINAL_WITH_CHECKS and c.id not in has_check:
            problems.append(f"{c.id} is '{c.status}' but has no check")
        if c.status == "source-checked" and not c.verdict.strip():
            problems.append(f"{c.id} is 'source-checked' but has no verdict")
        if c.status == "not-reproducible-here" and not c.note.strip():
            problems.append(f"{c.id} is 'not-reproducible-here' but has no note saying what would be needed")
    assert not problems, "\n".join(problems)


def test_written_chapters_leave_no_claim_pending():
    """A chapter that is an executable notebook (not a placeholder) owns no 'pending' claim.

    Placeholders are plain MyST pages; once a chapter becomes a jupytext notebook it must
    give every claim it owns a final status (so C2-C5 can never slip back to pending).
    """
    claims, _ = registry()
    notebooks = {name for name, text in _chapters().items() if text.startswith("---") and "jupytext:" in text[:2000]}
    pending = sorted(
        (c.id for c in claims.values() if c.chapter in notebooks and c.status == "pending"), key=_natural
    )
    assert not pending, f"claims still pending in written chapters: {pending}"


def test_claims_of_the_written_chapters_are_final():
    """The chapters of the foundation and gradient-ledger work own C2.x-C5.x; none is pending."""
    claims, _ = registry()
    owned = [c for c in claims.values() if _natural(c.id)[0] in (2, 3, 4, 5)]
    assert len(owned) == 6 + 8 + 3 + 10
    assert all(c.status != "pending" for c in owned), [c.id for c in owned if c.status == "pending"]


# ----------------------------------------------------------------------------- (4) checks <-> chapters


def test_every_check_of_a_finished_claim_is_used_by_a_chapter():
    """Each check of a non-pending claim is called (verify/check) in some chapter's code, so it runs in CI."""
    claims, checks = registry()
    used = set().union(*_used_check_ids().values()) if _used_check_ids() else set()
    unused = sorted(k.id for k in checks.values() if claims[k.claim].status != "pending" and k.id not in used)
    assert not unused, "registered checks that no chapter calls: " + ", ".join(unused)


def test_chapters_call_only_registered_checks_of_finished_claims():
    """No chapter calls an unregistered check ID, nor a check of a claim still 'pending'."""
    claims, checks = registry()
    problems = []
    for chapter, ids in _used_check_ids().items():
        for i in sorted(ids):
            if i not in checks:
                problems.append(f"book/{chapter}.md calls unregistered check {i!r}")
            elif claims[checks[i].claim].status == "pending":
                problems.append(f"book/{chapter}.md calls {i!r} but claim {checks[i].claim} is 'pending'")
    assert not problems, "\n".join(problems)


def test_call_scanner_finds_both_quote_styles_and_skips_prose():
    """Control for the scanner above: it sees verify/check calls in code cells, in either quotes, and only there."""
    text = (
        'Prose: `verify("C9.9z", x)` is only an example.\n'
        "```{code-cell} ipython3\n"
        'r1 = verify("C1.1a", x)\n'
        "r2 = claims.check('C1.1b', y, expected=1.0)\n"
        "my_check('C1.1c', z)\n"
        "```\n"
    )
    ids = {m.group(2) for cell in CODE_CELL.finditer(text) for m in CHECK_CALL.finditer(cell.group(2))}
    assert ids == {"C1.1a", "C1.1b"}


# ----------------------------------------------------------------------------- (5) check() semantics

GOOD_TOML = """
[claim."C1.1"]
chapter = "why-normalize"
statement = "a finished claim"
article = "0.0189"
status = "reproduced"
label = "sec-test"

[claim."C1.2"]
chapter = "why-normalize"
statement = "a pending claim"
article = "—"
status = "pending"

[check."C1.1a"]
what = "printed"
printed = "0.0189"
fmt = ".4f"

[check."C1.1b"]
what = "close, reference in the registry"
expected = 1.0
atol = 1e-3

[check."C1.1c"]
what = "close, reference at the call"
rtol = 1e-6

[check."C1.1d"]
what = "range"
lo = 0.0
hi = 1.0

[check."C1.1e"]
what = "bool"
kind = "bool"

[check."C1.1f"]
what = "one-sided range"
hi = 2.0

[check."C1.2a"]
what = "a check of the pending claim"
lo = 0.0
"""


@pytest.fixture
def temp_registry(tmp_path):
    """Point normlib.claims at a temporary claims.toml; restore the real one (and its cache) afterwards."""
    original = claims_mod._REGISTRY_PATH
    path = tmp_path / "claims.toml"

    def use(text: str) -> Path:
        path.write_text(text, encoding="utf-8")
        claims_mod.registry.cache_clear()
        return path

    claims_mod._REGISTRY_PATH = path
    use(GOOD_TOML)
    try:
        yield use
    finally:
        claims_mod._REGISTRY_PATH = original
        claims_mod.registry.cache_clear()


def test_temp_registry_is_loaded(temp_registry):
    """Sanity: the fixture's registry replaces the real one (2 claims, 7 checks)."""
    cl, ck = registry()
    assert sorted(cl) == ["C1.1", "C1.2"] and len(ck) == 7
    assert ck["C1.1a"].mode == "printed" and ck["C1.1b"].mode == "close"
    assert ck["C1.1d"].mode == "range" and ck["C1.1e"].mode == "bool"


@pytest.mark.parametrize("m", [0.0189, 0.01886, 0.018949, np.float64(0.0189), np.float32(0.0189)])
def test_printed_mode_passes_on_printed_match(temp_registry, m):
    """'0.0189' at '.4f': anything that rounds to 0.0189 passes (the article's precision)."""
    r = check("C1.1a", m)
    assert r.shown == "0.0189" and r.expected == "0.0189"


@pytest.mark.parametrize("m", [0.0190, 0.01884, -0.0189, 0.189])
def test_printed_mode_fails_otherwise(temp_registry, m):
    """0.0190 (and 0.0188, a sign flip, a factor 10) do not read as the printed 0.0189."""
    with pytest.raises(ClaimCheckFailed, match="the article printed 0.0189"):
        check("C1.1a", m)


def test_printed_mode_refuses_expected(temp_registry):
    """The registry fixes the reference of a printed check; passing expected= too is an error."""
    with pytest.raises(TypeError, match="do not pass expected"):
        check("C1.1a", 0.0189, expected=0.0189)


def test_close_mode_with_registry_reference(temp_registry):
    """expected = 1.0, atol = 1e-3: 1.0009 passes, 1.002 fails, and a second reference at the call is refused."""
    assert check("C1.1b", 1.0009).measured == pytest.approx(1.0009)
    with pytest.raises(ClaimCheckFailed, match="off by"):
        check("C1.1b", 1.002)
    with pytest.raises(TypeError, match="exactly once"):
        check("C1.1b", 1.0, expected=1.0)


def test_close_mode_with_reference_at_the_call(temp_registry):
    """rtol = 1e-6 around expected = 2.0 given at run time: tolerance 2e-6."""
    check("C1.1c", 2.0 + 1.5e-6, expected=2.0)
    with pytest.raises(ClaimCheckFailed, match="expected 2.0"):
        check("C1.1c", 2.0 + 3e-6, expected=2.0)
    with pytest.raises(TypeError, match="exactly once"):
        check("C1.1c", 2.0)


RTOL_TOML = """
[check."C1.1g"]
what = "close, a large relative tolerance"
rtol = 0.5
"""


@pytest.mark.parametrize(("m", "passes"), [(1.45, True), (0.55, True), (1.6, False), (0.4, False)])
def test_close_mode_rtol_is_relative_to_the_expected_value(temp_registry, m, passes):
    """|m - e| <= atol + rtol·|e| with e = 1, rtol = 0.5: the window is [0.5, 1.5] whatever m is.

    A tolerance taken relative to the measurement (rtol·|m|) would accept 1.6 (0.6 <= 0.8)
    and reject 0.55 (0.45 > 0.275): this test fails on that bug (mutation testing found
    that no other test did).
    """
    temp_registry(GOOD_TOML + RTOL_TOML)
    if passes:
        assert check("C1.1g", m, expected=1.0).shown
    else:
        with pytest.raises(ClaimCheckFailed, match="within 0.5 "):
            check("C1.1g", m, expected=1.0)


@pytest.mark.parametrize(("m", "shown"), [(-0.0001, "0.000"), (-0.0, "0.000"), (-0.0006, "-0.001"), (0.0004, "0.000")])
def test_a_negative_value_that_rounds_to_zero_is_shown_without_sign(temp_registry, m, shown):
    """No '-0.000' in a check table or the ledger: the sign of a number that rounds to zero is dropped."""
    temp_registry(GOOD_TOML + '[check."C1.1h"]\nwhat = "w"\nlo = -1.0\nfmt = ".3f"\n')
    assert check("C1.1h", m).shown == shown


def test_ledger_fields_label_timing_and_headline(temp_registry):
    """short labels a check; timing (or 'machine-dependent' in what) marks a figure; headline orders a claim's numbers."""
    extra = (
        '[check."C1.1t"]\nwhat = "seconds per call (machine-dependent; sanity range)"\nhi = 5.0\n'
        '[check."C1.1u"]\nwhat = "a ratio of times"\nhi = 5.0\ntiming = true\n'
        '[check."C1.1v"]\nwhat = "per-layer factor of the typical ratio (leading order)"\nhi = 5.0\nshort = "factor"\n'
    )
    temp_registry(GOOD_TOML.replace('label = "sec-test"', 'label = "sec-test"\nheadline = ["C1.1v", "C1.1a"]') + extra)
    cl, ck = registry()
    assert cl["C1.1"].headline == ("C1.1v", "C1.1a")
    assert ck["C1.1t"].is_timing and ck["C1.1u"].is_timing and not ck["C1.1v"].is_timing
    assert ck["C1.1v"].label == "factor"
    assert ck["C1.1t"].label == "seconds per call"  # default: the start of `what`


@pytest.mark.parametrize(
    ("headline", "msg"),
    [('["C1.2a"]', "not a check of C1.1"), ('["C1.1z"]', "not a check of C1.1"), ('"C1.1a"', "must be a list")],
)
def test_bad_headline_raises_at_load(temp_registry, headline, msg):
    """A headline must list checks of its own claim."""
    temp_registry(GOOD_TOML.replace('label = "sec-test"', f'label = "sec-test"\nheadline = {headline}'))
    with pytest.raises(ValueError, match=msg):
        registry()


def test_headline_refuses_a_timing(temp_registry):
    """A timing is a figure, never the number that carries a verdict."""
    extra = '[check."C1.1u"]\nwhat = "a ratio of times"\nhi = 5.0\ntiming = true\n'
    temp_registry(GOOD_TOML.replace('label = "sec-test"', 'label = "sec-test"\nheadline = ["C1.1u"]') + extra)
    with pytest.raises(ValueError, match="a timing"):
        registry()


@pytest.mark.parametrize(
    ("verdict", "word"),
    [("CORRECT", "CORRECT"), ("CORRECT numbers, with caveats", "CORRECT"), ("IMPRECISE: p = 12.5%", "IMPRECISE"),
     ("WRONG (see C5.3)", "WRONG"), ("UNSUPPORTED", "UNSUPPORTED"), ("", "")],
)
def test_source_verdict_reads_the_first_word(verdict, word):
    c = claims_mod.Claim(id="C1.1", chapter="x", statement="s", article="-", status="reproduced", verdict=verdict)
    assert claims_mod.source_verdict(c) == word


def test_unknown_verdict_word_raises(temp_registry):
    temp_registry(GOOD_TOML.replace('label = "sec-test"', 'label = "sec-test"\nverdict = "MOSTLY RIGHT"'))
    with pytest.raises(ValueError, match="does not start with one of"):
        registry()


@pytest.mark.parametrize("m", [0.0, 0.5, 1.0])
def test_range_mode_passes_inside_inclusive(temp_registry, m):
    """lo = 0, hi = 1: the bounds are inclusive."""
    check("C1.1d", m)


@pytest.mark.parametrize("m", [-1e-9, 1.0 + 1e-9, 5.0])
def test_range_mode_fails_outside(temp_registry, m):
    """Just outside [0, 1] fails."""
    with pytest.raises(ClaimCheckFailed, match=r"outside in \[0, 1\]"):
        check("C1.1d", m)


def test_range_mode_one_sided_and_refuses_expected(temp_registry):
    """hi only: -1e6 passes, 2.5 fails; a range check takes no expected=."""
    check("C1.1f", -1e6)
    with pytest.raises(ClaimCheckFailed):
        check("C1.1f", 2.5)
    with pytest.raises(TypeError, match="takes no expected"):
        check("C1.1d", 0.5, expected=0.5)


def test_bool_mode(temp_registry):
    """kind = 'bool': True and numpy True pass, False fails, non-bools (1, 'yes', 1.0) are a TypeError."""
    assert check("C1.1e", True).shown == "holds"
    check("C1.1e", np.bool_(True))
    with pytest.raises(ClaimCheckFailed, match="does not hold"):
        check("C1.1e", False)
    with pytest.raises(ClaimCheckFailed):
        check("C1.1e", np.bool_(False))
    for bad in (1, "yes", 1.0):
        with pytest.raises(TypeError, match="needs a bool"):
            check("C1.1e", bad)


@pytest.mark.parametrize(
    ("cid", "kw"), [("C1.1a", {}), ("C1.1b", {}), ("C1.1c", {"expected": 2.0}), ("C1.1d", {})], ids=["printed", "close", "close-at-call", "range"]
)
def test_nan_never_passes(temp_registry, cid, kw):
    """A NaN measurement fails every numeric mode (NaN compares false with everything)."""
    with pytest.raises(ClaimCheckFailed, match="NaN"):
        check(cid, math.nan, **kw)


def test_non_numeric_measurement(temp_registry):
    """A string, None, a bool, a list or a 1-element array is not a (scalar, numeric) measurement."""
    for bad in ("0.0189", None, True, [0.0189], np.array([0.5])):
        with pytest.raises(TypeError, match="must be a real number"):
            check("C1.1d", bad)


def test_unknown_check_id(temp_registry):
    """An ID that is not in the registry is a KeyError naming it."""
    with pytest.raises(KeyError, match="C1.1z"):
        check("C1.1z", 0.5)


def test_check_of_pending_claim_raises(temp_registry):
    """A pending claim cannot pass a check: the chapter must first set its status."""
    with pytest.raises(ClaimCheckFailed, match="pending"):
        check("C1.2a", 0.5)


def test_claim_of(temp_registry):
    """claim_of maps a check ID to its claim; unknown IDs are a KeyError."""
    assert claims_mod.claim_of("C1.1d").id == "C1.1"
    with pytest.raises(KeyError):
        claims_mod.claim_of("C7.7a")


MALFORMED = {
    "bad-claim-id": ('[claim."C1"]\nchapter = "x"\nstatement = "s"\narticle = "-"\nstatus = "pending"\n', r"bad claim ID 'C1'"),
    "bad-claim-id-prefix": ('[claim."X1.1"]\nchapter = "x"\nstatement = "s"\narticle = "-"\nstatus = "pending"\n', r"bad claim ID"),
    "bad-status": ('[claim."C2.1"]\nchapter = "x"\nstatement = "s"\narticle = "-"\nstatus = "done"\n', r"status 'done'"),
    "unknown-claim-field": (
        '[claim."C2.1"]\nchapter = "x"\nstatement = "s"\narticle = "-"\nstatus = "pending"\nlable = "typo"\n',
        r"claim C2\.1.*lable",
    ),
    "check-of-unregistered-claim": ('[check."C9.9a"]\nwhat = "w"\nlo = 0.0\n', r"'C9.9a' does not start with a registered claim"),
    "check-bad-id": ('[check."c1.1a"]\nwhat = "w"\nlo = 0.0\n', r"does not start with a registered claim"),
    "two-modes-printed-and-atol": ('[check."C1.1x"]\nwhat = "w"\nprinted = "0.5"\nfmt = ".1f"\natol = 0.1\nexpected = 0.5\n', r"exactly one of"),
    "two-modes-range-and-rtol": ('[check."C1.1x"]\nwhat = "w"\nlo = 0.0\nrtol = 0.1\n', r"exactly one of"),
    "no-mode": ('[check."C1.1x"]\nwhat = "w"\n', r"exactly one of"),
    "bool-with-range": ('[check."C1.1x"]\nwhat = "w"\nkind = "bool"\nlo = 0.0\n', r"kind 'bool'"),
    "bad-kind": ('[check."C1.1x"]\nwhat = "w"\nkind = "string"\n', r"kind 'string'"),
    "printed-not-in-fmt": ('[check."C1.1x"]\nwhat = "w"\nprinted = "0.019"\nfmt = ".4f"\n', r"printed '0.019' is not in format '.4f'"),
    "printed-not-a-number": ('[check."C1.1x"]\nwhat = "w"\nprinted = "about 34"\nfmt = ".0f"\n', r"not in format"),
    "printed-as-float": ('[check."C1.1x"]\nwhat = "w"\nprinted = 0.0189\nfmt = ".4f"\n', r"not in format"),
    "bad-fmt": ('[check."C1.1x"]\nwhat = "w"\nlo = 0.0\nfmt = "%.3f"\n', r"not a float format spec"),
    "negative-atol": ('[check."C1.1x"]\nwhat = "w"\nexpected = 1.0\natol = -0.1\n', r"atol must be a finite number >= 0"),
    "lo-above-hi": ('[check."C1.1x"]\nwhat = "w"\nlo = 2.0\nhi = 1.0\n', r"lo 2.0 > hi 1.0"),
    "unknown-check-field": ('[check."C1.1x"]\nwhat = "w"\nlo = 0.0\ntolerance = 1\n', r"check C1\.1x.*tolerance"),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_malformed_registry_raises_at_load(temp_registry, case):
    """Each malformed entry, appended to a good registry, makes registry() raise ValueError naming the problem."""
    entry, msg = MALFORMED[case]
    temp_registry(GOOD_TOML + "\n" + entry)
    with pytest.raises(ValueError, match=msg):
        registry()


def test_real_registry_is_back_after_the_temp_registry_tests():
    """Runs after the tests above: the fixture's teardown restored the path and cleared the cache, so the real registry is seen."""
    cl, _ = registry()  # no cache_clear here: a teardown that forgot it would leave the 2-claim temp registry
    assert claims_mod._REGISTRY_PATH == Path(claims_mod.__file__).with_name("claims.toml")
    assert set(cl) == set(_catalogue())
