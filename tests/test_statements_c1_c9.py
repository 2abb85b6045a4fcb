"""Statements of "Why normalize" and "Where normalization stops" that an expert reading
found false (issue 14); these tests fail on the old text."""

from pathlib import Path

from normlib.claims import registry

BOOK = Path(__file__).resolve().parents[1] / "book"


def _text(chapter: str) -> str:
    return (BOOK / f"{chapter}.md").read_text(encoding="utf-8")


def _section_heading(text: str, label: str) -> str:
    lines = text.splitlines()
    i = lines.index(f"({label})=")
    return next(line for line in lines[i + 1 :] if line.startswith("#"))


def test_boundaries_says_what_layernorm_forgets():
    # bd-prop-fibers: LayerNorm removes the mean and the spread (a shift is not a scale) and
    # keeps the direction of the centered vector, the content.
    text = " ".join(_text("boundaries").split())
    for wrong in ("keeps scale, not content", "exactly and only scale", "throws away scale"):
        assert wrong not in text
    heading = _section_heading(_text("boundaries"), "boundaries-content")
    assert "mean" in heading and "spread" in heading


def test_why_normalize_quotes_ba_et_al_whole():
    text = " ".join(_text("why-normalize").split())
    assert (
        '"Unlike batch normalization, layer normalization performs exactly the same '
        'computation at training and test times."' in text
    )
    assert "names exactly these three" not in text


def test_c16_verdict_is_correct_with_nuance():
    claims, _ = registry()
    assert claims["C1.6"].verdict.startswith("CORRECT")
    assert "exactly" not in claims["C1.6"].statement
