"""The built pages read as lectures: audit talk folded, figures described, no status talk.

Marked ``rendered`` (run after ``make book``): ``pytest -m rendered tests/test_rendered_audit.py``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(HERE))
import audit_words  # noqa: E402

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not (HTML / "book" / "rmsnorm.html").is_file(), reason="no built book (run `make book` first)"),
]
CHAPTERS = sorted(p.relative_to(ROOT / "book").with_suffix("").as_posix() for p in (ROOT / "book").rglob("*.md")
                  if "jupytext:" in p.read_text(encoding="utf-8")[:2000])  # lectures and evidence/<chapter>
STATUS_TALK = re.compile(r"not written yet|still being written|not checked yet|work in progress|\bTODO\b", re.I)


def _page(stem: str) -> str:
    return (HTML / "book" / f"{stem}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("stem", [c for c in CHAPTERS if c not in audit_words.EXEMPT and not c.startswith("evidence/")])
def test_audit_talk_outside_folded_blocks_is_within_budget(stem):
    terms = audit_words.audit_terms(audit_words.html_main_line(_page(stem)))
    assert len(terms) <= audit_words.BUDGET, f"{stem}: audit talk in the main line: {terms}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_figure_has_a_descriptive_alt_text(stem):
    from bs4 import BeautifulSoup

    article = BeautifulSoup(_page(stem), "html.parser").find("article")
    bad = []
    for img in article.find_all("img"):
        alt = (img.get("alt") or "").strip()
        if len(alt.split()) < 4 or re.search(r"\.(png|jpe?g|svg)\b|_images/|^\.\./|_build|^/", alt):
            bad.append(alt or "(empty)")
    assert not bad, f"{stem}: figures without a description as alt text: {bad}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_no_development_status_language(stem):
    from bs4 import BeautifulSoup

    text = BeautifulSoup(_page(stem), "html.parser").get_text(" ")
    found = STATUS_TALK.findall(text)
    assert not found, f"{stem}: development-status language on the page: {found}"
