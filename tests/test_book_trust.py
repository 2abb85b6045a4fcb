"""Book-wide trust rules, enforced on every chapter (issue 13).

1. No number typed in prose (tests/prose_numbers.py), and the allowlist stays short and used.
2. Registry notes state no typed result: a number in a claim's note is a glue role.
3. Every registered check says why its window is that wide and carries a counterexample
   that the check rejects.
4. Audit talk (check IDs, tolerance words) stays in folded blocks (tests/audit_words.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from normlib.claims import ClaimCheckFailed, counterexample_result, registry

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import audit_words  # noqa: E402
import prose_numbers  # noqa: E402

CHAPTERS = sorted(p for p in (ROOT / "book").rglob("*.md") if "jupytext:" in p.read_text(encoding="utf-8")[:2000])
CLAIMS, CHECKS = registry()


def _without_ledger_rows(path, tmp_path):
    """The ledger page without its generated rows (registry text, linted field by field below)."""
    from normlib import ledger

    text = path.read_text(encoding="utf-8")
    if ledger._BEGIN not in text:
        return path
    before, rest = text.split(ledger._BEGIN, 1)
    rows, after = rest.split(ledger._END, 1)
    out = tmp_path / path.name
    out.write_text(before + "\n" * rows.count("\n") + after, encoding="utf-8")  # same line numbers
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_number_is_typed_in_prose(path, tmp_path):
    left, _ = prose_numbers.unexplained(_without_ledger_rows(path, tmp_path))
    assert not left, "numbers typed in prose (glue them):\n" + "\n".join(map(str, left))


def test_allowlist_is_short_explained_and_used():
    entries = prose_numbers.allowlist()
    assert len(entries) <= 10, "the allowlist of typed numbers must stay short"
    for a in entries:
        assert a.get("reason", "").strip(), f"allowlist entry {a} has no reason"
        targets = CHAPTERS if a["chapter"] == "*" else [ROOT / "book" / f"{a['chapter']}.md"]
        used = any(t.covered_by(a["text"]) for p in targets if p.is_file() for t in prose_numbers.typed_numbers(p))
        assert used, f"allowlist entry {a['text']!r} ({a['chapter']}) matches nothing: remove it"


@pytest.mark.parametrize("field", ["note", "reason"])
@pytest.mark.parametrize("cid", sorted(CLAIMS), ids=str)
def test_registry_notes_type_no_result(cid, field):
    """A claim's note and its one-sentence reason (the ledger's finding) state results by glue roles."""
    note = getattr(CLAIMS[cid], field)
    typed = []
    for line in prose_numbers.ROLE.sub(" ", prose_numbers.INLINE_MATH.sub(" ", note)).split("\n"):
        for m in prose_numbers.NUMBER.finditer(line):
            s, e = m.span()
            if not prose_numbers._is_name(line, s, e) and not prose_numbers._is_year(m.group(0).lstrip("+-−"), line[e:]):
                typed.append(m.group(0))
    assert not typed, f"{cid}: the {field} types {typed}; glue them ({{glue:text}}`chapter.md::key:fmt`) or drop them"


@pytest.mark.parametrize("kid", sorted(CHECKS), ids=str)
def test_every_check_is_justified_and_can_fail(kid):
    k = CHECKS[kid]
    assert k.why.strip(), f"{kid}: say why its window is that wide (`why = ...` in claims.toml)"
    assert k.counterexample is not None, f"{kid}: give a counterexample the check must reject"
    assert isinstance(counterexample_result(kid), ClaimCheckFailed), (
        f"{kid}: its counterexample {k.counterexample!r} passes the check: the check cannot reject it"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_audit_talk_stays_in_folded_blocks(path):
    if path.stem in audit_words.EXEMPT or path.parent.name == "evidence":
        pytest.skip("an audit page")
    terms = audit_words.count(path)
    assert len(terms) <= audit_words.BUDGET, f"audit talk outside folded blocks: {terms}"


@pytest.mark.parametrize("cid", sorted(CLAIMS), ids=str)
def test_registry_note_math_has_no_pipe(cid):
    """The ledger puts notes in a Markdown table, which splits cells at '|', also inside math."""
    for span in prose_numbers.INLINE_MATH.findall(CLAIMS[cid].note):
        assert "|" not in span, f"{cid}: use \\lvert/\\rvert or \\lVert/\\rVert instead of '|' in {span}"
