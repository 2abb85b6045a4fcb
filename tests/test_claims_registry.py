"""The claims ledger: the catalogue, the registry (normlib/claims.toml), the chapters, and check().

Tests (1)-(4) iterate over what the registry holds today: every claim of the article has a
verdict word, who decided it, a method, and its span of the article (found verbatim in the
article's text); test (5) pins down the semantics of ``normlib.claims.check`` and of the
registry's validation on a small temporary registry.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import normlib.claims as claims_mod
from normlib.claims import METHODS, VERDICT_BY, VERDICTS, ClaimCheckFailed, check, registry

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
CATALOGUE = Path(__file__).resolve().parent / "data" / "claim_ids.txt"
SHARED_CLAIMS_MD = ROOT.parent / "shared" / "CLAIMS.md"
ARTICLE = ROOT.parent / "shared" / "seed" / "000_45cab15fe8d58ae6.txt"

CLAIM_ROW = re.compile(r"^\|\s*(C\d+\.\d+)\s*\|", re.M)
# a code cell of a jupytext MyST chapter: ```{code-cell} ipython3 ... ``` (any fence length >= 3)
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
# verify("C3.6a", ...) or check('C3.6a', ...), also as claims.check / book.verify
CHECK_CALL = re.compile(r"\b(?:verify|check)\(\s*([\"'])(C\d+\.\d+[A-Za-z0-9_.-]*)\1")
WITH_CHECKS = ("reproduced", "re-derived")


def _natural(cid: str) -> tuple[int, int]:
    a, b = cid[1:].split(".")
    return int(a), int(b)


def _catalogue() -> list[str]:
    return [line.strip() for line in CATALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _chapters() -> dict[str, str]:
    """Every page of the book (lectures and evidence pages), by its path under book/ without .md."""
    return {p.relative_to(BOOK).with_suffix("").as_posix(): p.read_text(encoding="utf-8") for p in sorted(BOOK.rglob("*.md"))}


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


def test_every_claim_of_the_article_has_a_verdict_who_decided_it_and_a_method():
    """A status alone is not a verdict: each claim of the article carries one of the four words."""
    claims, _ = registry()
    for c in claims.values():
        assert c.method in METHODS, c.id
        assert c.reason.strip(), c.id
        if c.is_extension:
            assert not c.verdict and not c.verdict_by and not c.article_zh, c.id
        else:
            assert c.verdict in VERDICTS and c.verdict_by in VERDICT_BY, c.id


def test_the_catalogues_extensions_are_marked():
    """CLAIMS.md marks its extensions "(extension)"; each is kind = "extension" here (the registry may
    mark more, where the article's text makes no such claim: C6.2 restates C5.2)."""
    claims, _ = registry()
    marked = {"C2.6", "C4.3", "C6.1", "C7.3"}
    if SHARED_CLAIMS_MD.is_file():
        rows = re.findall(r"^\|\s*(C\d+\.\d+)\s*\|\s*\(extension\)", SHARED_CLAIMS_MD.read_text(encoding="utf-8"), re.M)
        marked |= set(rows)
    assert {c for c in marked if not claims[c].is_extension} == set()


@pytest.mark.skipif(not ARTICLE.is_file(), reason="the article is not next to the repository")
def test_every_span_is_the_articles_own_words():
    """Each article_zh and each [quote] zh occurs verbatim in the article (../shared/seed/)."""
    text = ARTICLE.read_text(encoding="utf-8")
    missing = [f"{k}: {q.zh!r}" for k, q in claims_mod.article_quotes().items() if q.zh not in text]
    assert not missing, "spans not found in the article:\n" + "\n".join(missing)


@pytest.mark.skipif(not ARTICLE.is_file(), reason="the article is not next to the repository")
def test_span_checker_control():
    """Control for the test above: the back-translations the book once quoted are not in the article."""
    text = ARTICLE.read_text(encoding="utf-8")
    assert "按指数恶化" in text and "呈指数恶化" not in text
    assert "提速约 40%" in text and "快了约 40%" not in text


# ----------------------------------------------------------------------------- (3) finished claims are complete


def _finished():
    claims, _ = registry()
    return list(claims.values())


def test_finished_claims_link_to_a_labelled_section():
    """Every claim names a label, and book/<chapter>.md contains the line '(<label>)='; an evidence
    label, where given, is a line of book/evidence/<chapter>.md."""
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
        if c.evidence:
            ev = BOOK / "evidence" / f"{c.chapter}.md"
            ev_lines = {line.strip() for line in ev.read_text(encoding="utf-8").splitlines()} if ev.is_file() else set()
            if f"({c.evidence})=" not in ev_lines:
                problems.append(f"{c.id}: no line '({c.evidence})=' in {ev.relative_to(ROOT)}")
    assert not problems, "\n".join(problems)


def test_finished_claims_have_their_evidence():
    """reproduced/re-derived need a check; source-checked and not-reproducible-here claims are decided by a
    source (and say what it says); not-reproducible-here also says what would be needed."""
    _, checks = registry()
    has_check = {k.claim for k in checks.values()}
    problems = []
    for c in _finished():
        if c.method in WITH_CHECKS and c.id not in has_check:
            problems.append(f"{c.id} is '{c.method}' but has no check")
        if c.method in ("source-checked", "not-reproducible-here") and not c.is_extension and (
                c.verdict_by != "source" or not c.source.strip()):
            problems.append(f"{c.id} is '{c.method}': its verdict is the source's, and 'source' says what it says")
        if c.method == "not-reproducible-here" and not c.note.strip():
            problems.append(f"{c.id} is 'not-reproducible-here' but has no note saying what would be needed")
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- (4) checks <-> chapters


def test_every_check_of_a_finished_claim_is_used_by_a_chapter():
    """Each check is called (verify/check) in some chapter's code (lecture or evidence page), so it runs in CI."""
    claims, checks = registry()
    used = set().union(*_used_check_ids().values()) if _used_check_ids() else set()
    unused = sorted(k.id for k in checks.values() if k.id not in used)
    assert not unused, "registered checks that no chapter calls: " + ", ".join(unused)


def test_chapters_call_only_registered_checks_of_finished_claims():
    """No chapter calls an unregistered check ID."""
    claims, checks = registry()
    problems = []
    for chapter, ids in _used_check_ids().items():
        for i in sorted(ids):
            if i not in checks:
                problems.append(f"book/{chapter}.md calls unregistered check {i!r}")
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
statement = "a claim of the article"
article_zh = "原文"
article_en = "the original"
article_number = "0.0189"
verdict = "CORRECT"
verdict_by = "book"
reason = "The number re-runs."
method = "reproduced"
label = "sec-test"

[claim."C1.2"]
chapter = "why-normalize"
kind = "extension"
statement = "a question the book adds"
reason = "The book finds it."
method = "re-derived"

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
what = "a check of the extension"
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


def test_printed_mode_window_label(temp_registry):
    """The window of a printed check is labelled by the printed digits, not by who printed them
    (the article or a paper): 'reads 0.0189 at the printed precision'."""
    assert registry()[1]["C1.1a"].tolerance() == "reads 0.0189 at the printed precision"


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


def test_verdict_of_is_the_word_or_nothing_for_an_extension(temp_registry):
    cl, _ = registry()
    assert claims_mod.verdict_of(cl["C1.1"]) == "CORRECT" and claims_mod.verdict_of(cl["C1.2"]) == ""
    assert cl["C1.2"].is_extension and not cl["C1.1"].is_extension


_C11 = GOOD_TOML.split('[claim."C1.2"]')[0]


@pytest.mark.parametrize(("old", "new", "msg"), [
    ('verdict = "CORRECT"', 'verdict = "MOSTLY RIGHT"', "has verdict 'MOSTLY RIGHT'"),
    ('verdict = "CORRECT"', 'verdict = "CORRECT numbers, with caveats"', "has verdict"),  # the word alone
    ('verdict = "CORRECT"\n', '', "every claim of the article needs one of"),  # a status alone is not a verdict
    ('verdict_by = "book"', 'verdict_by = "paper"', "verdict_by 'paper'"),
    ('verdict_by = "book"\n', '', "verdict_by ''"),
    ('method = "reproduced"', 'method = "differs"', "method 'differs'"),
    ('method = "reproduced"', 'method = "pending"', "method 'pending'"),
    ('article_zh = "原文"\n', '', "needs article_zh"),
    ('article_en = "the original"\n', '', "needs article_zh"),
    ('article_zh = "原文"', 'article_zh = "' + "长" * 40 + '"', "at most 32"),
    ('reason = "The number re-runs."', 'reason = ""', "empty reason"),
    ('reason = "The number re-runs."', 'reason = "The number re-runs. It matches too."', "one sentence"),
    ('statement = "a claim of the article"', 'statement = "a claim"\nkind = "claim"', "kind 'claim'"),
])
def test_a_claim_of_the_article_must_carry_its_verdict_and_span(temp_registry, old, new, msg):
    assert old in GOOD_TOML
    temp_registry(GOOD_TOML.replace(old, new, 1))
    with pytest.raises(ValueError, match=msg):
        registry()


def test_a_reason_may_cite_et_al(temp_registry):
    """'Ba et al. name it' is one sentence (the sentence rule skips 'et al.')."""
    temp_registry(GOOD_TOML.replace('reason = "The number re-runs."', 'reason = "Ba et al. Name it, as the code shows."'))
    assert registry()[0]["C1.1"].reason.startswith("Ba et al.")


@pytest.mark.parametrize("field", ['verdict = "CORRECT"', 'verdict_by = "book"', 'article_zh = "原文"', 'article_en = "x"'])
def test_an_extension_takes_no_verdict_and_no_span(temp_registry, field):
    temp_registry(GOOD_TOML.replace('kind = "extension"', 'kind = "extension"\n' + field))
    with pytest.raises(ValueError, match="takes no"):
        registry()


QUOTES_TOML = """
[quote."tax"]
claim = "C1.1"
zh = "收缩税"
en = "contraction tax"
"""


def test_article_quotes_hold_each_claims_span_and_the_named_ones(temp_registry):
    temp_registry(GOOD_TOML + QUOTES_TOML)
    claims_mod.article_quotes.cache_clear()
    try:
        q = claims_mod.article_quotes()
        assert set(q) == {"C1.1", "tax"}  # the extension C1.2 has no span
        assert (q["C1.1"].zh, q["C1.1"].en) == ("原文", "the original") and q["tax"].claim == "C1.1"
    finally:
        claims_mod.article_quotes.cache_clear()


@pytest.mark.parametrize(("entry", "msg"), [
    ('[quote."Tax"]\nzh = "收缩税"\nen = "tax"\n', "must look like"),
    ('[quote."tax"]\nzh = ""\nen = "tax"\n', "non-empty"),
    ('[quote."tax"]\nzh = "收缩税"\n', "en"),
    ('[quote."tax"]\nclaim = "C1.2"\nzh = "收缩税"\nen = "tax"\n', "not a registered claim of the article"),
    ('[quote."tax"]\nzh = "' + "长" * 40 + '"\nen = "tax"\n', "at most 32"),
    ('[quote."tax"]\nzh = "收缩税"\nen = "tax"\nwhere = "x"\n', "where"),
])
def test_bad_quote_raises(temp_registry, entry, msg):
    temp_registry(GOOD_TOML + entry)
    claims_mod.article_quotes.cache_clear()
    try:
        with pytest.raises(ValueError, match=msg):
            claims_mod.article_quotes()
    finally:
        claims_mod.article_quotes.cache_clear()


@pytest.mark.parametrize(("n", "ok"), [(claims_mod.MAX_SPAN, True), (claims_mod.MAX_SPAN + 1, False)])
def test_a_span_is_at_most_max_span_characters(temp_registry, n, ok):
    """Mutants: a span's length not checked (a claim's ``article_zh`` or a named quote's ``zh``),
    or checked one character off. The title is the one span allowed to be longer."""
    span = "长" * n
    for text, load in [
        (GOOD_TOML.replace('article_zh = "原文"', f'article_zh = "{span}"'), registry),
        (GOOD_TOML + f'[quote."tax"]\nzh = "{span}"\nen = "tax"\n', claims_mod.article_quotes),
    ]:
        temp_registry(text)
        claims_mod.article_quotes.cache_clear()
        try:
            if ok:
                load()
            else:
                with pytest.raises(ValueError, match=f"is {n} characters; a span is at most {claims_mod.MAX_SPAN}"):
                    load()
        finally:
            claims_mod.article_quotes.cache_clear()
    temp_registry(GOOD_TOML + f'[quote."title"]\nzh = "{span * 2}"\nen = "the title"\n')
    claims_mod.article_quotes.cache_clear()
    try:
        assert claims_mod.article_quotes()["title"].zh == span * 2
    finally:
        claims_mod.article_quotes.cache_clear()


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


def test_a_check_of_an_extension_runs_like_any_other(temp_registry):
    assert check("C1.2a", 0.5).shown


def test_claim_of(temp_registry):
    """claim_of maps a check ID to its claim; unknown IDs are a KeyError."""
    assert claims_mod.claim_of("C1.1d").id == "C1.1"
    with pytest.raises(KeyError):
        claims_mod.claim_of("C7.7a")


MALFORMED = {
    "bad-claim-id": ('[claim."C1"]\nchapter = "x"\nkind = "extension"\nstatement = "s"\nreason = "r."\nmethod = "re-derived"\n', r"bad claim ID 'C1'"),
    "bad-claim-id-prefix": ('[claim."X1.1"]\nchapter = "x"\nkind = "extension"\nstatement = "s"\nreason = "r."\nmethod = "re-derived"\n', r"bad claim ID"),
    "status-is-gone": ('[claim."C2.1"]\nchapter = "x"\nkind = "extension"\nstatement = "s"\nreason = "r."\nmethod = "re-derived"\nstatus = "done"\n', r"claim C2\.1.*status"),
    "missing-method": ('[claim."C2.1"]\nchapter = "x"\nkind = "extension"\nstatement = "s"\nreason = "r."\n', r"claim C2\.1.*method"),
    "unknown-claim-field": (
        '[claim."C2.1"]\nchapter = "x"\nkind = "extension"\nstatement = "s"\nreason = "r."\nmethod = "re-derived"\nlable = "typo"\n',
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


@pytest.mark.parametrize("name", ["atol", "rtol"])
@pytest.mark.parametrize("value", ["inf", "+inf", "-inf", "nan", "-0.5", "true", '"0.1"'])
def test_a_tolerance_that_is_not_a_finite_number_is_refused_at_load(temp_registry, name, value):
    """Mutants: ``math.isfinite`` dropped from the tolerance rule (``atol = inf`` accepts
    every value), or the rule written ``v < 0`` (``atol = nan`` passes it, and a NaN
    window accepts nothing but makes the check's message meaningless)."""
    temp_registry(GOOD_TOML + f'\n[check."C1.1x"]\nwhat = "w"\nexpected = 1.0\n{name} = {value}\n')
    with pytest.raises(ValueError, match=rf"check C1\.1x: {name} must be a finite number >= 0"):
        registry()


@pytest.mark.parametrize("entry", ["lo = nan", "hi = nan", "lo = -inf", "hi = inf", "lo = 0.0\nhi = nan",
                                   'hi = "1.0"', "lo = true"])
def test_a_window_end_that_is_not_a_finite_number_is_refused_at_load(temp_registry, entry):
    """``lo = nan`` would accept every value (``m < nan`` is false); ``hi = inf`` is no end
    (leave it out); a string would fail only when the chapter runs."""
    temp_registry(GOOD_TOML + f'\n[check."C1.1x"]\nwhat = "w"\n{entry}\n')
    with pytest.raises(ValueError, match=r"check C1\.1x: (lo|hi) must be a finite number"):
        registry()


@pytest.mark.parametrize("e", [math.inf, -math.inf, math.nan])
def test_a_close_check_refuses_a_reference_that_is_not_finite(temp_registry, e):
    """An rtol window around an infinite reference is infinite: |m - inf| <= rtol·inf holds for
    every finite m, so a closed form that overflowed would pass anything."""
    with pytest.raises(ClaimCheckFailed, match="not a finite number"):
        check("C1.1c", 2.0, expected=e)
    temp_registry(GOOD_TOML.replace("expected = 1.0\natol = 1e-3", f"expected = {e}\nrtol = 1e-3"))
    with pytest.raises(ClaimCheckFailed, match="not a finite number"):
        check("C1.1b", 1.0)


@pytest.mark.parametrize(("what", "timing", "is_timing"), [
    ("Machine-dependent wall time per step", False, True),
    ("MACHINE-DEPENDENT ratio of two times", False, True),
    ("seconds per call (machine-dependent; sanity range)", False, True),
    ("a ratio of times", True, True),
    ("the growth factor of the gradient", False, False),
])
def test_is_timing_ignores_case(what, timing, is_timing):
    """Mutant: ``.lower()`` dropped from ``is_timing`` (a 'Machine-dependent ...' what at the
    start of a sentence would be shown as a claim's number)."""
    assert claims_mod.Check(id="C1.1x", claim="C1.1", what=what, timing=timing, lo=0.0).is_timing is is_timing


# ----------------------------------------------------------------------------- the window, printed as applied


def _k(**kw):
    return claims_mod.Check(id="C1.1x", claim="C1.1", what="w", **kw)


@pytest.mark.parametrize(("check_", "text"), [
    (_k(lo=0.2, hi=0.995), "in [0.2, 0.995]"),  # .2g would print 0.99
    (_k(hi=3.27), "in [-∞, 3.27]"),  # .2g would print 3.3
    (_k(lo=0.99512345), "in [0.99512345, +∞]"),  # :g would print 0.995123
    (_k(lo=0, hi=1234567.5), "in [0, 1234567.5]"),  # :g would print 1.23457e+06
    (_k(lo=-0.0625, hi=100.0), "in [-0.0625, 100]"),
    (_k(expected=1.0, atol=0.0012345678), "atol 0.0012345678"),
    (_k(rtol=1e-6), "rtol 1e-06"),
    (_k(rtol=0.0123456789), "rtol 0.0123456789"),
    (_k(atol=0.25, rtol=0.125), "atol 0.25 + rtol 0.125"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_tolerance_prints_the_window_applied(check_, text):
    """Mutants: a window end or a tolerance printed with ``.2g`` or ``:g`` (six significant
    digits: the code's own state before issue 29, so 0.99512345 read 0.995123, a window the
    check does not apply). The check tables and the evidence pages print this text."""
    assert check_.tolerance() == text


def test_tolerance_every_printed_end_reads_back_as_the_end_applied():
    """The same as a property: for windows with many digits, each printed number is the float applied."""
    rng = np.random.default_rng(29)
    for lo, width, tol in zip(rng.uniform(-10, 10, 200), rng.uniform(0, 5, 200), rng.uniform(1e-9, 1, 200)):
        lo, hi, tol = float(lo), float(lo + width), float(tol)
        printed = re.fullmatch(r"in \[(\S+), (\S+)\]", _k(lo=lo, hi=hi).tolerance())
        assert (float(printed.group(1)), float(printed.group(2))) == (lo, hi)
        printed = re.fullmatch(r"atol (\S+) \+ rtol (\S+)", _k(atol=tol, rtol=tol / 3).tolerance())
        assert (float(printed.group(1)), float(printed.group(2))) == (tol, tol / 3)


def test_real_registry_is_back_after_the_temp_registry_tests():
    """Runs after the tests above: the fixture's teardown restored the path and cleared the cache, so the real registry is seen."""
    cl, _ = registry()  # no cache_clear here: a teardown that forgot it would leave the 2-claim temp registry
    assert claims_mod._REGISTRY_PATH == Path(claims_mod.__file__).with_name("claims.toml")
    assert set(cl) == set(_catalogue())
