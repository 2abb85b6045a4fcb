"""A chapter is a lecture plus an evidence page (issue 24): the rules a reshaped lecture must keep.

For each chapter listed in ``tests/data/lectures.toml``:

* an evidence page ``book/evidence/<chapter>.md`` exists and sits under the chapter in ``_toc.yml``;
* the lecture opens with a verdict box (``:::{admonition} Verdict`` / ``:class: verdict``) of at
  most five bullets, each starting with a bold verdict word (**Correct.**, **Imprecise.**,
  **Wrong.**, **Unsupported.**, or **Beyond the article.** for a question the book adds), ending
  with the small ``{claim}`ID``` link(s), carrying at most one glued number and no glued wording,
  and the word is the registry's verdict of that claim; the box links the evidence page once;
* no glue role in a heading; no glue_phrase outside the allowed, machine-dependent keys;
* no claim or check ID, tolerance word or z-score in the lecture's visible prose, except the
  ``{claim}`` links of the verdict box;
* at most about 3,500 words of main-line prose, at least one figure, and every figure with a
  caption and an alt text that differ;
* no shown code cell longer than about ten lines.
"""

from __future__ import annotations

import re
import statistics
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from normlib.claims import registry

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(HERE))
import audit_words  # noqa: E402

CONFIG = tomllib.loads((HERE / "data" / "lectures.toml").read_text(encoding="utf-8"))
ALL = [p.stem for p in sorted(BOOK.glob("*.md")) if p.stem in {c.chapter for c in registry()[0].values()}]
RESHAPED = ALL if CONFIG["reshaped"] == "all" else list(CONFIG["reshaped"])
PHRASES = {(e["page"], e["key"]) for e in CONFIG.get("phrase", [])}
WORD_BUDGET = 3600  # "about 3,500 words of main-line prose"
CELL_LINES = 12  # "at most about 10 lines a cell"

VERDICT_WORDS = {"Correct.": "CORRECT", "Imprecise.": "IMPRECISE", "Wrong.": "WRONG",
                 "Unsupported.": "UNSUPPORTED", "Beyond the article.": "extension"}
GLUE = re.compile(r"\{glue(?::text|:md|:any)?\}`([^`]+)`")
CLAIM_ROLE = re.compile(r"\{claim\}`(C\d+\.\d+)`")
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
CLAIM_ID = re.compile(r"\bC\d+\.\d+\b")
NUMERIC_SPEC = re.compile(r":[^:`]*[dfegn%]$")


def _text(ch: str) -> str:
    return (BOOK / f"{ch}.md").read_text(encoding="utf-8")


def verdict_box(text: str) -> str | None:
    """The body of the first ``:::{admonition} Verdict`` block with ``:class: verdict``."""
    m = re.search(r"^(:{3,})\{admonition\}\s*Verdict\s*\n:class:[^\n]*\bverdict\b[^\n]*\n(.*?)^\1\s*$", text, re.M | re.S)
    return m.group(2) if m else None


def bullets(box: str) -> list[str]:
    out, cur = [], None
    for line in box.splitlines():
        if line.startswith("- "):
            cur = [line[2:]]
            out.append(cur)
        elif cur is not None and line.startswith("  "):
            cur.append(line.strip())
        elif line.strip() and not line.startswith("%"):
            cur = None
    return [" ".join(b) for b in out]


def check_bullet(b: str, claims) -> list[str]:
    problems = []
    m = re.match(r"\*\*([^*]+)\*\*", b)
    word = m.group(1).strip() if m else ""
    if word not in VERDICT_WORDS:
        problems.append(f"bullet does not start with a bold verdict word {list(VERDICT_WORDS)}: {b[:70]!r}")
    ids = CLAIM_ROLE.findall(b)
    if not ids or not re.search(r"(\{claim\}`C\d+\.\d+`[\s,;·]*)+[.)]?\s*$", b):
        problems.append(f"bullet does not end with its {{claim}}`ID` link(s): {b[:70]!r}")
    for cid in ids:
        c = claims.get(cid)
        want = None if c is None else ("extension" if c.is_extension else c.verdict)
        if word in VERDICT_WORDS and VERDICT_WORDS[word] != want:
            problems.append(f"{cid}: the bullet says {word!r}, the registry's verdict is {want!r}")
    glued = GLUE.findall(b)
    if len(glued) > 1:
        problems.append(f"more than one glued value in a bullet: {glued}")
    for g in glued:
        if not NUMERIC_SPEC.search(g):
            problems.append(f"glued wording (not a number) in the verdict box: {g!r}")
    if CLAIM_ID.search(CLAIM_ROLE.sub("", b)):
        problems.append(f"a claim ID outside the {{claim}} link: {b[:70]!r}")
    return problems


def main_line_words(text: str) -> int:
    prose = audit_words.source_main_line(CODE_CELL.sub("", text))
    prose = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " x ", prose, flags=re.S)
    prose = re.sub(r"^\s*(:{3,}|`{3,}|\(|%|:[\w-]+:).*$", "", prose, flags=re.M)
    return len(re.findall(r"[A-Za-z][A-Za-z'’-]*", prose))


def shown_cells(text: str) -> list[int]:
    """Non-blank lines of each code cell a reader sees (not removed; hidden inputs are folded but shown)."""
    out = []
    for m in CODE_CELL.finditer(text):
        body = m.group(2)
        tags = re.search(r"tags:\s*\[([^\]]*)\]", body[:400])
        if tags and re.search(r"remove-(cell|input)", tags.group(1)):
            continue
        lines = [ln for ln in body.splitlines() if ln.strip() and not ln.startswith(":") and ln.strip() != "---"]
        lines = [ln for ln in lines if not re.match(r"^\s*(tags|mystnb|code_prompt_show|code_prompt_hide)\s*:", ln)]
        out.append(len(lines))
    return out


def figures(text: str) -> list[tuple[str, str]]:
    """(alt, caption) of each figure directive."""
    out = []
    for m in re.finditer(r"^(`{3,}|:{3,})\{(?:glue:figure|figure)\}[^\n]*\n(.*?)^\1\s*$", text, re.M | re.S):
        body = m.group(2)
        alt = re.search(r"^:alt:\s*(.*)$", body, re.M)
        caption = "\n".join(ln for ln in body.splitlines() if not ln.startswith(":")).strip()
        out.append(((alt.group(1).strip() if alt else ""), caption))
    return out


def headings(text: str) -> list[str]:
    prose = CODE_CELL.sub("", text)
    return re.findall(r"^#{1,6} .*$", prose, re.M) + re.findall(r"^(?::{3,}|`{3,})\{(?:admonition|prf:\w+|exercise)\}(.*)$", prose, re.M)


# ----------------------------------------------------------------------------- the rules

@pytest.mark.parametrize("ch", RESHAPED)
def test_lecture_has_its_evidence_page_in_the_toc(ch):
    assert (BOOK / "evidence" / f"{ch}.md").is_file(), f"book/evidence/{ch}.md is missing"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [e for p in toc["parts"] for e in p.get("chapters", [])]
    (entry,) = [e for e in entries if e["file"] == f"book/{ch}"]
    assert {"file": f"book/evidence/{ch}"} in entry.get("sections", []), f"_toc.yml: put book/evidence/{ch} under book/{ch}"


@pytest.mark.parametrize("ch", RESHAPED)
def test_verdict_box_is_short_plain_and_agrees_with_the_registry(ch):
    text = _text(ch)
    box = verdict_box(text)
    assert box is not None, "no ':::{admonition} Verdict' with ':class: verdict'"
    assert text.index(box) < len(text) // 5, "the verdict box must open the lecture"
    bs = bullets(box)
    assert 1 <= len(bs) <= 5, f"{len(bs)} bullets (at most five)"
    claims, _ = registry()
    problems = [p for b in bs for p in check_bullet(b, claims)]
    assert not problems, "\n".join(problems)
    assert len(re.findall(rf"\{{doc\}}`[^`]*evidence/{re.escape(ch)}>?`", box)) == 1, "link the evidence page once from the box"
    mine = {c.id for c in claims.values() if c.chapter == ch}
    covered = {cid for b in bs for cid in CLAIM_ROLE.findall(b)}
    assert mine <= covered, f"claims of the chapter without a verdict bullet: {sorted(mine - covered)}"


@pytest.mark.parametrize("ch", RESHAPED)
def test_no_glue_in_headings_and_no_generated_wording(ch):
    text = _text(ch)
    bad = [h for h in headings(text) if "{glue" in h]
    assert not bad, f"glue roles in headings: {bad}"
    code = "\n".join(m.group(2) for m in CODE_CELL.finditer(text))
    keys = re.findall(r"glue_phrase\(\s*[\"']([^\"']+)", code)
    extra = [k for k in keys if (ch, k) not in PHRASES]
    assert not extra, f"glue_phrase outside the allowed machine-dependent keys (tests/data/lectures.toml): {extra}"


@pytest.mark.parametrize("ch", RESHAPED)
def test_no_audit_talk_in_the_lecture(ch):
    text = _text(ch)
    box = verdict_box(text) or ""
    main = audit_words.source_main_line(text.replace(box, ""))
    main = CLAIM_ROLE.sub("", main)
    terms = audit_words.audit_terms(main) + CLAIM_ID.findall(re.sub(r"\{[\w:-]+\}`[^`]*`", "", main))
    assert not terms, f"check/claim IDs or tolerance words in the lecture's visible text: {terms}"


@pytest.mark.parametrize("ch", RESHAPED)
def test_lecture_length_and_figures(ch):
    text = _text(ch)
    words = main_line_words(text)
    assert words <= WORD_BUDGET, f"{words} words of main-line prose (about 3,500 at most)"
    figs = figures(text)
    assert figs, "a lecture has at least one figure per idea"
    assert len(figs) <= max(1, words // 700) + 1, f"{len(figs)} figures for {words} words (at most one per 700)"
    for alt, caption in figs:
        assert alt and caption and alt.strip() != caption.strip(), f"a figure's alt and caption must both exist and differ: {alt[:60]!r}"


@pytest.mark.parametrize("ch", RESHAPED)
def test_shown_code_cells_are_short(ch):
    long = [n for n in shown_cells(_text(ch)) if n > CELL_LINES]
    assert not long, f"shown code cells longer than about ten lines: {long}"


def test_median_shown_cell_over_the_reshaped_lectures():
    """Issue 24: the median shown code cell over the book is at most six lines."""
    cells = [n for ch in RESHAPED for n in shown_cells(_text(ch))]
    if not cells:
        pytest.skip("no reshaped lecture yet")
    assert statistics.median(cells) <= 6, f"median shown cell {statistics.median(cells)} lines"


# ----------------------------------------------------------------------------- controls

GOOD = """# T

:::{admonition} Verdict
:class: verdict
- **Correct.** The demo re-runs to the printed digit, {glue:text}`x:.4f`. {claim}`C3.6`
- **Beyond the article.** The Jacobian of RMSNorm is derived. {claim}`C4.3`

How we know: {doc}`the evidence <evidence/rmsnorm>`.
:::
"""


def test_controls_for_the_verdict_box_rules():
    claims, _ = registry()
    box = verdict_box(GOOD)
    assert box is not None and len(bullets(box)) == 2
    assert [p for b in bullets(box) for p in check_bullet(b, claims)] == []
    bad = [
        "- **C3.6, reproduced.** The demo re-runs. {claim}`C3.6`",  # an ID leading, a method as verdict
        "- **Wrong.** The demo re-runs. {claim}`C3.6`",  # not the registry's verdict
        "- **Correct.** The demo {glue:text}`w:s` re-runs. {claim}`C3.6`",  # glued wording
        "- **Correct.** {glue:text}`a:.2f` and {glue:text}`b:.2f`. {claim}`C3.6`",  # two glued numbers
        "- **Correct.** The demo re-runs.",  # no claim link
        "- **Correct.** C3.6 re-runs. {claim}`C3.6`",  # a bare ID
    ]
    for line in bad:
        (b,) = bullets(line)
        assert check_bullet(b, claims), line


def test_control_for_word_count_and_cells():
    text = "x\n\n" + "word " * 50 + "\n\n```{code-cell} ipython3\n" + "a = 1\n" * 3 + "```\n"
    assert 48 <= main_line_words(text) <= 52
    assert shown_cells(text) == [3]
    hidden = "```{code-cell} ipython3\n:tags: [remove-cell]\n" + "a = 1\n" * 30 + "```\n"
    assert shown_cells(hidden) == []
