"""The claims ledger: one registry of every claim the book checks, and the check call.

The registry lives in ``claims.toml`` next to this module. It has two tables:

``[claim."C3.6"]``
    One entry per claim of the catalogue (the IDs of ``CLAIMS.md``): the chapter
    that owns it, a one-line ``statement`` in the book's words, and

    * ``kind``: ``"article"`` (the default: a claim the article makes) or
      ``"extension"`` (a question the book adds; shown and counted apart);
    * ``article_zh``: the article's own words for the claim, a short verbatim span of
      the article (at most about 30 characters; ``tests/test_claims_registry.py`` finds
      it in the article's text), and ``article_en``, its faithful English translation;
    * ``article_number``: the number the article printed, or ``"—"``;
    * ``verdict``: the book's judgment of the article's sentence, one of
      :data:`VERDICTS`, and ``verdict_by``: ``"source"`` (a paper or a model's code
      decides it) or ``"book"`` (the book's own computation decides it); every article
      claim has one, an extension none;
    * ``reason``: the verdict's reason (for an extension: its finding) in one plain
      sentence;
    * ``method``: how the book knows, one of :data:`METHODS`;
    * optional: ``source`` (what the primary source says, in more detail), ``label``
      (the MyST label of the lecture's section), ``evidence`` (the label of the evidence
      page's section), ``note`` (the finding in more detail) and ``headline`` (below).

``[quote."name"]``
    Other short verbatim spans of the article that the book quotes (``zh``, ``en`` and
    optionally the ``claim`` they belong to). The ``{article}`` role (``_ext/article_quotes.py``)
    shows a claim's span or a named one: in Chinese on the Chinese edition, in English with
    the original beside it on the English one. Nothing else may be quoted as the article's.

``[check."C3.6a"]``
    One entry per measured number. Its ID starts with the claim's ID. A check
    says what is measured and how close it must be, in exactly one of four ways:

    * ``printed = "0.0189"`` and ``fmt = ".4f"``: the measurement, formatted with
      ``fmt``, must read exactly like the article's printed number;
    * ``atol``/``rtol`` (and ``expected`` here or at the call): ``|m - e| <= atol + rtol·|e|``;
    * ``lo``/``hi``: ``lo <= m <= hi`` (either bound may be omitted);
    * ``kind = "bool"``: the measurement is a boolean computed by the chapter and must be true.

    Two optional fields only change how the ledger page shows a check: ``short``, a
    label of a few words for the number (default: the start of ``what``), and
    ``timing = true`` for a machine-dependent figure (a wall-clock time or a ratio of
    times); ``machine_dependent = true`` for a check whose value moves with the floating-point
    kernels (its chapter verifies it with ``machine_dependent=True``; the ledger labels it). The ledger never shows a timing as a claim's number; a ``what`` that says
    "machine-dependent" counts as a timing too.

A claim may name the checks that carry its verdict, in order, with
``headline = ["C5.8-post-factor", ...]``: the ledger shows them first. Without it, the
ledger shows the claim's non-timing checks in registry order.

A chapter calls :func:`check` (or :func:`normlib.book.verify`, which also glues the
value for the ledger page); a measurement outside its tolerance raises
:class:`ClaimCheckFailed`, which fails the chapter, nbval and CI.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import numpy as np

__all__ = [
    "METHODS",
    "VERDICTS",
    "VERDICT_BY",
    "KINDS",
    "Claim",
    "Check",
    "CheckResult",
    "ClaimCheckFailed",
    "registry",
    "claim_of",
    "check",
    "verdict_of",
    "ArticleQuote",
    "article_quotes",
    "Quoted",
    "quoted_numbers",
    "counterexample_result",
]

#: How the book knows (a claim's ``method``): the article's number re-computed here; the
#: statement computed and checked by the book (no number in the article); a fact about a
#: paper or model code, read there; or needs data or hardware this book cannot have.
METHODS = ("reproduced", "re-derived", "source-checked", "not-reproducible-here")

#: The verdicts on the article's sentences, in the order the book reports them.
VERDICTS = ("CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED")

#: Who decides a verdict: the primary source, or the book's own computation.
VERDICT_BY = ("source", "book")

#: A claim of the article, or a question the book adds.
KINDS = ("article", "extension")

#: The longest ``article_zh`` span a claim or a named quote may carry (the title excepted).
MAX_SPAN = 32

_REGISTRY_PATH = Path(__file__).with_name("claims.toml")
_CLAIM_ID = re.compile(r"^C\d+\.\d+$")
_QUOTE_KEY = re.compile(r"^[a-z][a-z0-9-]*$")
# a sentence boundary inside a reason: ". " (or ! ?) then a capital, except after "et al."
_SENTENCE_BREAK = re.compile(r"(?<!\bal)[.!?] +[A-Z]")
_CHECK_ID = re.compile(r"^(C\d+\.\d+)([a-z0-9_.-]*)$")


class ClaimCheckFailed(AssertionError):
    """A measurement left the tolerance its claim allows."""


@dataclass(frozen=True)
class Claim:
    """One claim of the catalogue, as registered in ``claims.toml``."""

    id: str
    chapter: str
    statement: str
    method: str
    reason: str
    kind: str = "article"
    article_zh: str = ""
    article_en: str = ""
    article_number: str = "—"
    verdict: str = ""
    verdict_by: str = ""
    source: str = ""
    label: str = ""
    evidence: str = ""
    note: str = ""
    headline: tuple[str, ...] = ()

    @property
    def is_extension(self) -> bool:
        """A question the book adds, not a claim of the article."""
        return self.kind == "extension"


def _exact(x: float) -> str:
    """The shortest text that reads back as exactly ``x``: ``0.995``, ``3.27``, ``0.99512345``, ``1e-06``, ``12``.

    A window is printed as it is applied: ``format(x, "g")`` keeps six significant digits
    (0.99512345 would read 0.995123) and ``.2g`` two (0.995 would read 0.99). ``repr`` of a
    float is the shortest string that round-trips; a trailing ``.0`` is dropped.
    """
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class Check:
    """One measured number attached to a claim."""

    id: str
    claim: str
    what: str
    fmt: str = ".4g"
    printed: str | None = None
    expected: float | None = None
    atol: float | None = None
    rtol: float | None = None
    lo: float | None = None
    hi: float | None = None
    kind: str = "number"
    chapter: str | None = None
    short: str = ""
    timing: bool = False
    machine_dependent: bool = False
    why: str = ""
    counterexample: float | bool | None = None
    counterexample_expected: float | None = None

    @property
    def is_timing(self) -> bool:
        """A machine-dependent figure: ``timing = true``, or a ``what`` that says "machine-dependent"."""
        return bool(self.timing) or "machine-dependent" in self.what.lower()

    @property
    def label(self) -> str:
        """A few words naming the number: ``short`` if given, else the start of ``what``."""
        if self.short.strip():
            return self.short.strip()
        text = re.split(r" \(|; ", self.what, maxsplit=1)[0].strip()
        return text if len(text) <= 60 else text[:59].rstrip(" ,:") + "…"

    @property
    def mode(self) -> str:
        if self.kind == "bool":
            return "bool"
        if self.printed is not None:
            return "printed"
        if self.atol is not None or self.rtol is not None:
            return "close"
        return "range"

    def tolerance(self) -> str:
        """A short human-readable description of the acceptance rule.

        Every number in it is the one applied, to the last digit (``in [0.2, 0.995]``,
        ``atol 0.0012345678``): the check tables and the evidence pages print this text.
        """
        if self.mode == "bool":
            return "must hold"
        if self.mode == "printed":
            return f"reads {self.printed} at the printed precision"
        if self.mode == "close":
            parts = []
            if self.atol:
                parts.append(f"atol {_exact(self.atol)}")
            if self.rtol:
                parts.append(f"rtol {_exact(self.rtol)}")
            return " + ".join(parts) if parts else "exact"
        lo = "-∞" if self.lo is None else _exact(self.lo)
        hi = "+∞" if self.hi is None else _exact(self.hi)
        return f"in [{lo}, {hi}]"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a passed :func:`check` (a failed one raises)."""

    check: Check
    measured: float | bool
    expected: float | str | None
    shown: str = field(default="")

    @property
    def id(self) -> str:
        return self.check.id

    def _repr_markdown_(self) -> str:
        exp = "" if self.expected is None else f" (expected {self.expected})"
        return f"✓ **{self.id}** {self.check.what}: **{self.shown}**{exp}, {self.check.tolerance()}"


@lru_cache(maxsize=1)
def registry() -> tuple[Mapping[str, Claim], Mapping[str, Check]]:
    """Load and validate ``claims.toml``: (claims by ID, checks by ID).

    Returns
    -------
    claims : mapping of str to Claim
    checks : mapping of str to Check
        Read-only views: the registry is cached for the whole process, so an edit
        here would silently change every later check.

    Raises
    ------
    ValueError
        A malformed ID, an unknown or missing field, a bad kind or method, an article
        claim without a verdict word of ``VERDICTS``, its ``verdict_by`` or its span, an
        extension with a verdict or a span, a reason that is not one sentence, a headline naming a check of another claim (or a timing),
        a check that does not give exactly one acceptance rule, or a window end or tolerance
        that is not a finite number (the message names the entry).

    Notes
    -----
    Read once per process (cached). The ledger page (``book/ledger.md``) lists every
    entry.
    """
    raw = tomllib.loads(_REGISTRY_PATH.read_text(encoding="utf-8"))
    claims: dict[str, Claim] = {}
    for cid, entry in raw.get("claim", {}).items():
        if not _CLAIM_ID.match(cid):
            raise ValueError(f"claims.toml: bad claim ID {cid!r} (expected like 'C3.6')")
        headline = entry.pop("headline", ())
        if isinstance(headline, str) or not all(isinstance(h, str) for h in headline):
            raise ValueError(f"claims.toml: claim {cid}: headline must be a list of check IDs; got {headline!r}")
        try:
            c = Claim(id=cid, headline=tuple(headline), **entry)
        except TypeError as exc:  # unknown or missing fields
            raise ValueError(f"claims.toml: claim {cid}: {exc}") from exc
        _validate_claim(c)
        claims[cid] = c
    checks: dict[str, Check] = {}
    for kid, entry in raw.get("check", {}).items():
        m = _CHECK_ID.match(kid)
        if not m or m.group(1) not in claims:
            raise ValueError(f"claims.toml: check {kid!r} does not start with a registered claim ID")
        try:
            k = Check(id=kid, claim=m.group(1), **entry)
        except TypeError as exc:  # unknown or missing fields
            raise ValueError(f"claims.toml: check {kid}: {exc}") from exc
        _validate_check(k)
        checks[kid] = k
    for c in claims.values():
        for h in c.headline:
            if h not in checks or checks[h].claim != c.id:
                raise ValueError(f"claims.toml: claim {c.id}: headline names {h!r}, which is not a check of {c.id}")
            if checks[h].is_timing:
                raise ValueError(f"claims.toml: claim {c.id}: headline names {h!r}, a timing (timings are not claim numbers)")
    return MappingProxyType(claims), MappingProxyType(checks)


def _no_negative_zero(text: str) -> str:
    """'-0.000' -> '0.000' (a negative number that rounds to zero prints without its sign)."""
    if text.startswith("-"):
        try:
            if float(text) == 0.0:
                return text[1:]
        except ValueError:
            pass
    return text


def verdict_of(claim: Claim) -> str:
    """The verdict word of a claim of the article, or ``""`` for an extension.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    str
        One of :data:`VERDICTS` (validated at load), or ``""`` for ``kind = "extension"``.

    Notes
    -----
    The landing page (``book/intro.md``) counts the article's claims by this word, and the
    claims ledger (``book/ledger.md``) shows it in every row.
    """
    return "" if claim.is_extension else claim.verdict


def _validate_claim(c: Claim) -> None:
    """Raise ValueError on a claim whose fields break the rules of the module docstring."""
    where = f"claims.toml: claim {c.id}"
    for name in ("chapter", "statement", "method", "reason", "kind", "article_zh", "article_en",
                 "article_number", "verdict", "verdict_by", "source", "label", "evidence", "note"):
        if not isinstance(getattr(c, name), str):
            raise ValueError(f"{where}: {name} must be a string; got {getattr(c, name)!r}")
    if c.kind not in KINDS:
        raise ValueError(f"{where} has kind {c.kind!r}; expected one of {KINDS}")
    if c.method not in METHODS:
        raise ValueError(f"{where} has method {c.method!r}; expected one of {METHODS}")
    if not c.reason.strip():
        raise ValueError(f"{where}: empty reason (one plain sentence: why the verdict, or the extension's finding)")
    if _SENTENCE_BREAK.search(c.reason.strip()):
        raise ValueError(f"{where}: the reason must be one sentence; got {c.reason[:60]!r}…")
    if c.is_extension:
        for name in ("verdict", "verdict_by", "article_zh", "article_en"):
            if getattr(c, name):
                raise ValueError(f"{where} is an extension (the book's own question): it takes no {name}")
        return
    if c.verdict not in VERDICTS:
        raise ValueError(f"{where} has verdict {c.verdict!r}; every claim of the article needs one of {VERDICTS}")
    if c.verdict_by not in VERDICT_BY:
        raise ValueError(f"{where} has verdict_by {c.verdict_by!r}; expected one of {VERDICT_BY}")
    if not c.article_zh.strip() or not c.article_en.strip():
        raise ValueError(f"{where}: a claim of the article needs article_zh (the article's own words) and article_en")
    if len(c.article_zh) > MAX_SPAN:
        raise ValueError(f"{where}: article_zh is {len(c.article_zh)} characters; a span is at most {MAX_SPAN}")


def _validate_check(k: Check) -> None:
    if k.kind not in ("number", "bool"):
        raise ValueError(f"claims.toml: check {k.id} has kind {k.kind!r}; expected 'number' or 'bool'")
    modes = [k.printed is not None, k.atol is not None or k.rtol is not None, k.lo is not None or k.hi is not None]
    if k.kind == "number" and sum(modes) != 1:
        raise ValueError(
            f"claims.toml: check {k.id} must give exactly one of printed/fmt, atol/rtol, lo/hi"
        )
    if k.kind == "bool" and any(modes):
        raise ValueError(f"claims.toml: check {k.id} is kind 'bool'; it takes no printed/atol/rtol/lo/hi")
    try:
        format(1.0, k.fmt)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"claims.toml: check {k.id}: fmt {k.fmt!r} is not a float format spec") from exc
    if k.printed is not None:
        try:
            ok = isinstance(k.printed, str) and format(float(k.printed), k.fmt) == k.printed
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"claims.toml: check {k.id}: printed {k.printed!r} is not in format {k.fmt!r}")
    for name in ("atol", "rtol"):
        v = getattr(k, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v >= 0)):
            raise ValueError(f"claims.toml: check {k.id}: {name} must be a finite number >= 0; got {v!r}")
    for name in ("lo", "hi"):
        v = getattr(k, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            # a NaN end accepts every value (every comparison with NaN is false); an infinite one
            # is no end: leave it out
            raise ValueError(f"claims.toml: check {k.id}: {name} must be a finite number (omit it for an open end); "
                             f"got {v!r}")
    if k.lo is not None and k.hi is not None and not k.lo <= k.hi:
        raise ValueError(f"claims.toml: check {k.id}: lo {k.lo!r} > hi {k.hi!r}")
    if not isinstance(k.timing, bool):
        raise ValueError(f"claims.toml: check {k.id}: timing must be true or false; got {k.timing!r}")
    if not isinstance(k.machine_dependent, bool):
        raise ValueError(f"claims.toml: check {k.id}: machine_dependent must be true or false; got {k.machine_dependent!r}")
    if not isinstance(k.short, str):
        raise ValueError(f"claims.toml: check {k.id}: short must be a string; got {k.short!r}")
    if not isinstance(k.why, str):
        raise ValueError(f"claims.toml: check {k.id}: why must be a string; got {k.why!r}")
    cx = k.counterexample
    if cx is not None:
        if k.kind == "bool" and cx is not False:
            raise ValueError(f"claims.toml: check {k.id}: a bool check's counterexample is false; got {cx!r}")
        if k.kind == "number" and (isinstance(cx, bool) or not isinstance(cx, (int, float))):
            raise ValueError(f"claims.toml: check {k.id}: counterexample must be a number; got {cx!r}")
    ce = k.counterexample_expected
    if ce is not None and (isinstance(ce, bool) or not isinstance(ce, (int, float))):
        raise ValueError(f"claims.toml: check {k.id}: counterexample_expected must be a number; got {ce!r}")


def claim_of(check_id: str) -> Claim:
    """The claim a check ID belongs to.

    Parameters
    ----------
    check_id : str
        A check ID of ``claims.toml``, e.g. ``"C3.6a"``.

    Returns
    -------
    Claim

    Raises
    ------
    KeyError
        Unknown check ID.

    Notes
    -----
    A check ID starts with its claim's ID (``C3.6a`` belongs to ``C3.6``); the ledger
    page (``book/ledger.md``) groups checks by claim.
    """
    claims, checks = registry()
    if check_id in checks:
        return claims[checks[check_id].claim]
    raise _unknown_check(check_id, checks)


def _unknown_check(check_id, checks) -> KeyError:
    """The error for a check ID not in the registry: the registry's path and the close matches."""
    import difflib

    close = difflib.get_close_matches(str(check_id), list(checks), n=5, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else "; no registered ID is close to it"
    return KeyError(f"no check {check_id!r} in {_REGISTRY_PATH}{hint}")


def check(check_id: str, measured, *, expected: float | None = None) -> CheckResult:
    """Check one measurement against its registered tolerance.

    Parameters
    ----------
    check_id : str
        A check ID of ``claims.toml`` (e.g. ``"C3.6a"``).
    measured : float or bool
        The measured value (a bool for ``kind = "bool"`` checks).
    expected : float, optional, keyword-only
        For ``atol``/``rtol`` checks whose reference is computed at run time (a
        closed form, a bound). Not allowed when the registry fixes the reference.

    Returns
    -------
    CheckResult

    Raises
    ------
    KeyError
        Unknown check ID.
    TypeError
        A non-numeric measurement (or non-bool for a bool check).
    ClaimCheckFailed
        The measurement is outside the registered tolerance (or NaN), or the reference of a
        close check is not a finite number.

    Notes
    -----
    The acceptance rules: ``printed`` (``format(m, fmt) == printed``), ``close``
    (:math:`|m - e| \\le \\mathrm{atol} + \\mathrm{rtol}\\,|e|`), ``range``
    (:math:`lo \\le m \\le hi`) and ``bool`` (the measurement is true). Results are listed on the ledger page (``book/ledger.md``).
    """
    _, checks = registry()
    if check_id not in checks:
        raise _unknown_check(check_id, checks)
    k = checks[check_id]
    if k.mode == "bool":
        if not isinstance(measured, (bool, np.bool_)):
            raise TypeError(f"{check_id}: a bool check needs a bool measurement; got {type(measured).__name__}")
        if not bool(measured):
            raise ClaimCheckFailed(f"{check_id} ({k.what}): the condition does not hold")
        return CheckResult(k, True, None, "holds")
    if isinstance(measured, (str, bytes, bool, np.bool_)) or getattr(measured, "ndim", 0) != 0:
        raise TypeError(f"{check_id}: measurement must be a real number (a scalar); got {measured!r}")
    try:
        m = float(measured)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{check_id}: measurement must be a real number; got {measured!r}") from exc
    shown = _no_negative_zero(format(m, k.fmt))
    if math.isnan(m):
        raise ClaimCheckFailed(f"{check_id} ({k.what}): measurement is NaN")
    if k.mode == "printed":
        if expected is not None:
            raise TypeError(f"{check_id}: the registry fixes the reference ({k.printed}); do not pass expected")
        if shown != k.printed:
            raise ClaimCheckFailed(
                f"{check_id} ({k.what}): measured {m!r} reads {shown}, the article printed {k.printed}"
            )
        return CheckResult(k, m, k.printed, shown)
    if k.mode == "close":
        if (k.expected is None) == (expected is None):
            raise TypeError(
                f"{check_id}: give the reference either in claims.toml or as expected=, exactly once"
            )
        e = float(k.expected if expected is None else expected)
        if not math.isfinite(e):
            # an infinite reference would make the rtol window infinite (|m - inf| <= rtol·inf
            # holds for every finite m); a NaN one fails every comparison: both are refused
            raise ClaimCheckFailed(f"{check_id} ({k.what}): the reference {e!r} is not a finite number")
        tol = (k.atol or 0.0) + (k.rtol or 0.0) * abs(e)
        if not abs(m - e) <= tol:
            raise ClaimCheckFailed(
                f"{check_id} ({k.what}): measured {m!r}, expected {e!r} within {tol:g} "
                f"({k.tolerance()}); off by {abs(m - e):g}"
            )
        return CheckResult(k, m, format(e, k.fmt), shown)
    if expected is not None:
        raise TypeError(f"{check_id}: a range check takes no expected=")
    if (k.lo is not None and m < k.lo) or (k.hi is not None and m > k.hi):
        raise ClaimCheckFailed(f"{check_id} ({k.what}): measured {m!r} is outside {k.tolerance()}")
    return CheckResult(k, m, None, shown)


# ----------------------------------------------------------------------------- the article's words


@dataclass(frozen=True)
class ArticleQuote:
    """A short verbatim span of the article, with its English translation."""

    key: str
    zh: str
    en: str
    claim: str = ""


@lru_cache(maxsize=1)
def article_quotes() -> Mapping[str, ArticleQuote]:
    """Every span of the article the book may quote: each claim's, and the named ones.

    Returns
    -------
    mapping of str to ArticleQuote
        Read-only. A claim's span is keyed by the claim's ID (``"C3.8"``), a named span of
        ``[quote."name"]`` by its name (``"contraction-tax"``, ``"title"``).

    Raises
    ------
    ValueError
        A malformed name, an unknown or missing field, an empty span or translation, a
        span longer than ``MAX_SPAN`` characters (the title excepted), or a ``claim``
        that is not a registered claim of the article.

    Notes
    -----
    The ``{article}`` role (``_ext/article_quotes.py``) renders these wherever a page quotes
    the article (the landing page ``book/intro.md``, the claims ledger ``book/ledger.md``, the
    chapters), and ``tests/test_claims_registry.py`` finds every ``zh`` verbatim in the
    article's text.
    """
    claims, _ = registry()
    raw = tomllib.loads(_REGISTRY_PATH.read_text(encoding="utf-8"))
    out: dict[str, ArticleQuote] = {
        c.id: ArticleQuote(key=c.id, zh=c.article_zh, en=c.article_en, claim=c.id)
        for c in claims.values() if not c.is_extension
    }
    for key, entry in raw.get("quote", {}).items():
        if not _QUOTE_KEY.match(key):
            raise ValueError(f"claims.toml: quote name {key!r} must look like 'contraction-tax'")
        try:
            q = ArticleQuote(key=key, **entry)
        except TypeError as exc:
            raise ValueError(f"claims.toml: quote {key}: {exc}") from exc
        if not all(isinstance(v, str) for v in (q.zh, q.en, q.claim)) or not q.zh.strip() or not q.en.strip():
            raise ValueError(f"claims.toml: quote {key}: zh and en must be non-empty strings")
        if key != "title" and len(q.zh) > MAX_SPAN:
            raise ValueError(f"claims.toml: quote {key}: zh is {len(q.zh)} characters; a span is at most {MAX_SPAN}")
        if q.claim and (q.claim not in claims or claims[q.claim].is_extension):
            raise ValueError(f"claims.toml: quote {key}: claim {q.claim!r} is not a registered claim of the article")
        out[key] = q
    return MappingProxyType(out)


# ----------------------------------------------------------------------------- quoted numbers


@dataclass(frozen=True)
class Quoted:
    """A number quoted from the article or a paper (``[quoted."q_name"]`` in claims.toml)."""

    key: str
    value: str
    source: str
    chapter: str
    what: str


_QUOTED_KEY = re.compile(r"^q_[A-Za-z0-9_]+$")


@lru_cache(maxsize=1)
def quoted_numbers() -> Mapping[str, Quoted]:
    """The numbers quoted from the article or a paper, by glue key.

    Returns
    -------
    mapping of str to Quoted
        Read-only; keys start with ``q_``.

    Raises
    ------
    ValueError
        A malformed key, an unknown or missing field, an empty value, or a value that
        contains no digit.

    Notes
    -----
    A chapter glues its entries with :func:`normlib.book.glue_quoted`, so the article's and
    the papers' numbers in the prose are never typed (``tests/prose_numbers.py``); the
    claims ledger (``book/ledger.md``) reads the same table.
    """
    raw = tomllib.loads(_REGISTRY_PATH.read_text(encoding="utf-8"))
    out: dict[str, Quoted] = {}
    for key, entry in raw.get("quoted", {}).items():
        if not _QUOTED_KEY.match(key):
            raise ValueError(f"claims.toml: quoted key {key!r} must look like 'q_name'")
        try:
            q = Quoted(key=key, **entry)
        except TypeError as exc:
            raise ValueError(f"claims.toml: quoted {key}: {exc}") from exc
        if not isinstance(q.value, str) or not re.search(r"\d", q.value):
            raise ValueError(f"claims.toml: quoted {key}: value must be the printed string with a digit; got {q.value!r}")
        out[key] = q
    return MappingProxyType(out)


def counterexample_result(check_id: str) -> Exception | None:
    """Run a check's registered counterexample; the exception it raises, or None if it passed.

    Parameters
    ----------
    check_id : str

    Returns
    -------
    Exception or None
        :class:`ClaimCheckFailed` when the check rejects its counterexample (as it must),
        None when the counterexample passes (a check that cannot fail).

    Raises
    ------
    ValueError
        The check has no counterexample, or needs ``counterexample_expected`` (its
        reference is passed at run time) and has none.

    Notes
    -----
    ``tests/test_book_trust.py`` runs every registered check's counterexample: a check that
    accepts it cannot fail on a contradicting result. The claims ledger (``book/ledger.md``)
    lists the checks.
    """
    _, checks = registry()
    k = checks[check_id]
    if k.counterexample is None:
        raise ValueError(f"claims.toml: check {check_id} has no counterexample")
    needs_expected = k.mode == "close" and k.expected is None
    if needs_expected and k.counterexample_expected is None:
        raise ValueError(f"claims.toml: check {check_id} takes expected= at run time: give counterexample_expected")
    try:
        check(check_id, k.counterexample, expected=k.counterexample_expected if needs_expected else None)
    except ClaimCheckFailed as exc:
        return exc
    return None
