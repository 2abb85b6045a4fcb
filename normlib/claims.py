"""The claims ledger: one registry of every claim the book checks, and the check call.

The registry lives in ``claims.toml`` next to this module. It has two tables:

``[claim."C3.6"]``
    One entry per claim of the catalogue (the IDs of ``CLAIMS.md``): the chapter
    that owns it, a one-line statement, the article's number, the ledger status,
    the source verdict (for claims about what a paper or model code says), and
    the MyST label of the section that checks it.

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
    times). The ledger never shows a timing as a claim's number; a ``what`` that says
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
    "STATUSES",
    "VERDICTS",
    "Claim",
    "Check",
    "CheckResult",
    "ClaimCheckFailed",
    "registry",
    "claim_of",
    "check",
    "source_verdict",
    "Quoted",
    "quoted_numbers",
    "counterexample_result",
]

STATUSES = (
    "pending",
    "reproduced",
    "re-derived",
    "differs",
    "source-checked",
    "not-reproducible-here",
)

#: Source verdicts (CLAIMS.md), in the order the book reports them. A claim's ``verdict``
#: text starts with one of them (see :func:`source_verdict`).
VERDICTS = ("CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED")

_REGISTRY_PATH = Path(__file__).with_name("claims.toml")
_CLAIM_ID = re.compile(r"^C\d+\.\d+$")
_CHECK_ID = re.compile(r"^(C\d+\.\d+)([a-z0-9_.-]*)$")


class ClaimCheckFailed(AssertionError):
    """A measurement left the tolerance its claim allows."""


@dataclass(frozen=True)
class Claim:
    """One claim of the catalogue, as registered in ``claims.toml``."""

    id: str
    chapter: str
    statement: str
    article: str
    status: str
    verdict: str = ""
    label: str = ""
    note: str = ""
    headline: tuple[str, ...] = ()


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
        """A short human-readable description of the acceptance rule."""
        if self.mode == "bool":
            return "must hold"
        if self.mode == "printed":
            return f"reads {self.printed} at the article's precision"
        if self.mode == "close":
            parts = []
            if self.atol:
                parts.append(f"atol {self.atol:g}")
            if self.rtol:
                parts.append(f"rtol {self.rtol:g}")
            return " + ".join(parts) if parts else "exact"
        lo = "-∞" if self.lo is None else f"{self.lo:g}"
        hi = "+∞" if self.hi is None else f"{self.hi:g}"
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
        A malformed ID, an unknown field, a bad status, a verdict that starts with no
        word of ``VERDICTS``, a headline naming a check of another claim (or a timing),
        or a check that does not give exactly one acceptance rule (the message names the
        entry).

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
        if c.status not in STATUSES:
            raise ValueError(f"claims.toml: claim {cid} has status {c.status!r}; expected one of {STATUSES}")
        source_verdict(c)  # raises on a verdict that starts with no known word
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


def source_verdict(claim: Claim) -> str:
    """The source verdict of a claim: one of :data:`VERDICTS`, or ``""`` if it has none.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    str
        The word the claim's ``verdict`` text starts with (``"CORRECT numbers, with
        caveats"`` gives ``"CORRECT"``), or ``""`` for an empty verdict.

    Raises
    ------
    ValueError
        A non-empty verdict that starts with none of :data:`VERDICTS`.

    Notes
    -----
    The landing page (``book/intro.md``) counts claims by this word; the claims ledger
    (``book/ledger.md``) shows the full text.
    """
    text = claim.verdict.strip()
    if not text:
        return ""
    m = re.match(r"[A-Z]+", text)
    if not m or m.group(0) not in VERDICTS:
        raise ValueError(f"claim {claim.id}: verdict {text[:40]!r} does not start with one of {VERDICTS}")
    return m.group(0)


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
    if k.lo is not None and k.hi is not None and not k.lo <= k.hi:
        raise ValueError(f"claims.toml: check {k.id}: lo {k.lo!r} > hi {k.hi!r}")
    if not isinstance(k.timing, bool):
        raise ValueError(f"claims.toml: check {k.id}: timing must be true or false; got {k.timing!r}")
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
    raise KeyError(f"no check {check_id!r} in claims.toml")


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
        The measurement is outside the registered tolerance (or NaN).

    Notes
    -----
    The acceptance rules: ``printed`` (``format(m, fmt) == printed``), ``close``
    (:math:`|m - e| \\le \\mathrm{atol} + \\mathrm{rtol}\\,|e|`), ``range``
    (:math:`lo \\le m \\le hi`) and ``bool`` (the measurement is true). A claim still
    ``pending`` fails every check. Results are listed on the ledger page (``book/ledger.md``).
    """
    claims, checks = registry()
    if check_id not in checks:
        raise KeyError(f"no check {check_id!r} in claims.toml; registered: {sorted(checks)}")
    k = checks[check_id]
    if claims[k.claim].status == "pending":
        raise ClaimCheckFailed(f"{check_id}: claim {k.claim} is still 'pending' in claims.toml")
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
    the papers' numbers in the prose are never typed (``tests/prose_numbers.py``).
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
