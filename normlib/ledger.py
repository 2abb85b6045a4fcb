"""What the landing page and the claims ledger show about the registry.

One rule labels every claim of ``claims.toml`` for the reader: a claim of the article is
labelled by its verdict (CORRECT, IMPRECISE, WRONG, UNSUPPORTED: the book's judgment of the
article's sentence, decided by a primary source or by the book's own computation); a
question the book adds is labelled ``extension`` and counted apart. How the book knows
(``method``: reproduced, re-derived, source-checked, not reproducible here) is shown beside
the verdict, never instead of it. The landing page's counts, table and figure, and the
ledger's rows and filter are all built here, so they cannot disagree with the registry or
with each other.

matplotlib is imported only inside :func:`verdict_figure`.
"""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from .claims import METHODS, VERDICT_BY, VERDICTS, Check, Claim, verdict_of

__all__ = [
    "EXTENSION",
    "LABELS",
    "LABEL_TEXT",
    "LABEL_COLORS",
    "METHOD_TEXT",
    "BY_TEXT",
    "Counts",
    "toc_chapters",
    "chapters_file_text",
    "claim_label",
    "counts",
    "label_groups",
    "verdict_table",
    "filter_rows",
    "filter_controls_html",
    "verdict_figure",
    "ledger_rows",
    "glue_from_chapter",
]

#: The label of a question the book adds (``kind = "extension"``).
EXTENSION = "extension"

#: Every label a claim can carry, in the order the book reports them.
LABELS = VERDICTS + (EXTENSION,)

#: What each label tells a reader (one phrase each).
LABEL_TEXT = {
    "CORRECT": "the article's sentence is right",
    "IMPRECISE": "right in substance, but loose or wrong in a detail that matters",
    "WRONG": "the source or the book's computation says otherwise",
    "UNSUPPORTED": "neither its source nor the book's computation supports it",
    EXTENSION: "a question the book adds; not a claim of the article",
}

#: The column heads of :func:`verdict_table`.
#: the label after a headline number whose value moves with the floating-point kernels
MACHINE_DEPENDENT_TAG = "machine-dependent"

VERDICT_TABLE_HEADS = ("verdict", "what it means", "claims", "decided by a source", "decided by the book")
#: The row label of the book's own questions in :func:`verdict_table`.
EXTENSION_ROW = "the book's own questions"
#: Every English text of :func:`verdict_table` besides the IDs and counts: the translated
#: editions translate them at build time (``_ext/i18n.py``, catalog ``_ui.po``).
#: The note beside an ID whose method is shown with its verdict (a claim judged by its source alone).
NOT_REPRODUCIBLE_NOTE = "(not reproducible here)"
VERDICT_TABLE_TEXTS = VERDICT_TABLE_HEADS + (EXTENSION_ROW, NOT_REPRODUCIBLE_NOTE) + tuple(LABEL_TEXT.values())

#: What each method means (how the book knows).
METHOD_TEXT = {
    "reproduced": "the article's own numbers, re-computed here",
    "re-derived": "the book computed the statement and checked it",
    "source-checked": "a statement about a paper or a model's code, read there",
    "not-reproducible-here": "needs data or hardware this book cannot have; judged by its source",
}

#: Who decides a verdict, in a reader's words.
BY_TEXT = {"source": "the primary source", "book": "the book's own computation"}

#: One Okabe–Ito colour per verdict (normlib.plotting.PALETTE) and a neutral grey for the
#: book's own questions, for the verdict figure.
LABEL_COLORS = {
    "CORRECT": "#009E73",
    "IMPRECISE": "#E69F00",
    "WRONG": "#D55E00",
    "UNSUPPORTED": "#CC79A7",
    EXTENSION: "#BBBBBB",
}

#: The method shown beside a verdict everywhere (table, figure hatching): the book could not
#: run the claim's experiment, so its verdict rests on the source alone.
_METHOD_BESIDE_VERDICT = ("not-reproducible-here",)


CHAPTERS_FILE = "chapters.toml"  # packaged copy of the table of contents' chapters (written by python -m normlib.ledger)


def toc_chapters(root=None) -> dict[str, str]:
    """The chapters of the book's table of contents, with the titles a reader sees.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        A repository's root directory (the one holding ``_toc.yml`` and ``book/``): read its
        table of contents. Default: the copy packaged with normlib (``normlib/chapters.toml``),
        so that a downloaded notebook run next to the installed wheel alone finds the chapters.

    Returns
    -------
    dict of str to str
        Chapter file stem to the chapter's title (its first ``# `` heading), in reading
        order; the parts captioned "Appendix" (ledger, bibliography, report) are left out.

    Raises
    ------
    ValueError
        A chapter of the table of contents has no ``# `` heading, or the packaged copy is
        malformed.

    Notes
    -----
    Used by the landing page (``book/intro.md``) and the claims ledger (``book/ledger.md``).
    ``python -m normlib.ledger`` rewrites the packaged copy from ``_toc.yml``, and a unit test
    requires the two to agree.
    """
    from pathlib import Path

    if root is None:
        import tomllib

        data = tomllib.loads((Path(__file__).resolve().parent / CHAPTERS_FILE).read_text(encoding="utf-8"))
        rows = data.get("chapter")
        if not isinstance(rows, list) or not rows or not all(
                isinstance(r, dict) and set(r) == {"stem", "title"} and all(isinstance(v, str) and v for v in r.values())
                for r in rows):
            raise ValueError(f"toc_chapters: normlib/{CHAPTERS_FILE} must hold [[chapter]] tables with a stem and a title")
        return {r["stem"]: r["title"] for r in rows}

    import yaml

    root = Path(root)
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for part in toc.get("parts", []):
        if part.get("caption") == "Appendix":
            continue
        for entry in part.get("chapters", []):
            stem = Path(entry["file"]).name
            text = (root / "book" / f"{stem}.md").read_text(encoding="utf-8")
            m = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
            if not m:
                raise ValueError(f"toc_chapters: book/{stem}.md has no '# ' heading")
            out[stem] = m.group(1).strip()
    return out


def chapters_file_text(chapters: dict[str, str]) -> str:
    """The packaged copy of :func:`toc_chapters` (TOML, one ``[[chapter]]`` table per chapter).

    Parameters
    ----------
    chapters : dict of str to str
        Chapter file stem to title, in reading order.

    Returns
    -------
    str
        The file's text.

    Notes
    -----
    Written to ``normlib/chapters.toml`` by ``python -m normlib.ledger``; read by
    :func:`toc_chapters` for the landing page (``book/intro.md``) and the ledger.
    """
    import json

    lines = ["# The book's chapters in reading order (from _toc.yml): written by `python -m normlib.ledger`; do not edit", ""]
    for stem, title in chapters.items():
        lines += ["[[chapter]]", f"stem = {json.dumps(stem, ensure_ascii=False)}",
                  f"title = {json.dumps(title, ensure_ascii=False)}", ""]
    return "\n".join(lines)


def claim_label(claim: Claim) -> str:
    """The one label a reader sees for a claim: its verdict, or ``"extension"``.

    Parameters
    ----------
    claim : Claim
        A claim of the registry.

    Returns
    -------
    str
        One of :data:`LABELS`.

    Notes
    -----
    Used by the landing page (``book/intro.md``) and the claims ledger (``book/ledger.md``).
    """
    return EXTENSION if claim.is_extension else verdict_of(claim)


@dataclass(frozen=True)
class Counts:
    """How many claims carry each label, and who decided the verdicts."""

    article: int
    extensions: int
    by_verdict: Mapping[str, int]
    by_source: int
    by_book: int
    not_reproducible: int


def counts(claims: Iterable[Claim]) -> Counts:
    """Count the article's claims by verdict and by who decided it; extensions apart.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    Counts
        ``article`` counts only claims of the article (never an extension); ``by_verdict``
        has every word of :data:`normlib.claims.VERDICTS` (zero where none);
        ``not_reproducible`` counts the article's claims whose method is
        ``not-reproducible-here``.

    Notes
    -----
    The landing page (``book/intro.md``) glues these counts into its first paragraph.
    """
    claims = list(claims)
    art = [c for c in claims if not c.is_extension]
    return Counts(
        article=len(art),
        extensions=len(claims) - len(art),
        by_verdict={v: sum(c.verdict == v for c in art) for v in VERDICTS},
        by_source=sum(c.verdict_by == "source" for c in art),
        by_book=sum(c.verdict_by == "book" for c in art),
        not_reproducible=sum(c.method == "not-reproducible-here" for c in art),
    )


def label_groups(claims: Iterable[Claim]) -> list[tuple[str, list[Claim]]]:
    """The claims grouped by :func:`claim_label`, in the order of :data:`LABELS`.

    Parameters
    ----------
    claims : iterable of Claim
        The claims to group, in the order they should be listed within a group.

    Returns
    -------
    list of (str, list of Claim)
        One (label, claims) pair per label that at least one claim carries; labels no
        claim carries are left out.

    Notes
    -----
    The landing page (``book/intro.md``) shows these groups as its table of verdicts.
    """
    groups: dict[str, list[Claim]] = {lab: [] for lab in LABELS}
    for c in claims:
        groups[claim_label(c)].append(c)
    return [(lab, cs) for lab, cs in groups.items() if cs]


def _default_link(claim: Claim) -> str:
    """A MyST link from a claim's ID to its row of the claims ledger."""
    return f"{{ref}}`{claim.id} <ledger-{claim.id.lower()}>`"


def verdict_table(claims: Iterable[Claim], link: Callable[[Claim], str] | None = None,
                  count: Callable[[str, int], str] | None = None) -> str:
    """A Markdown table of the claims by label: what it means, how many, which (by who decided).

    Parameters
    ----------
    claims : iterable of Claim
        The claims of the registry, in ledger order.
    link : callable, optional
        Maps a claim to the Markdown of its ID; default: a MyST ``{ref}`` role to the
        claim's row of the ledger.
    count : callable, optional
        Maps (label, number of claims) to the Markdown of the count (the landing page glues
        it); default: the number.

    Returns
    -------
    str
        A Markdown table, one row per label of :func:`label_groups`, the book's own
        questions last. The IDs are split by who decided the verdict (the source, the
        book); a claim whose method is ``not-reproducible-here`` has "(not reproducible
        here)" written after its ID.

    Notes
    -----
    One rule for all claims (:func:`claim_label`). Shown on the landing page
    (``book/intro.md``).
    """
    link = link or _default_link
    count = count or (lambda lab, n: str(n))

    def ids(cs):
        out = []
        for c in cs:
            text = link(c)
            if c.method in _METHOD_BESIDE_VERDICT:
                text += " " + NOT_REPRODUCIBLE_NOTE
            out.append(text)
        return ", ".join(out) or "—"

    rows = ["| " + " | ".join(VERDICT_TABLE_HEADS) + " |",
            "|---|---|---:|---|---|"]
    for lab, cs in label_groups(claims):
        if lab == EXTENSION:
            rows.append(f"| *{EXTENSION_ROW}* | {LABEL_TEXT[lab]} | {count(lab, len(cs))} | — | {ids(cs)} |")
            continue
        by_src = [c for c in cs if c.verdict_by == "source"]
        by_book = [c for c in cs if c.verdict_by == "book"]
        rows.append(f"| **{lab}** | {LABEL_TEXT[lab]} | {count(lab, len(cs))} | {ids(by_src)} | {ids(by_book)} |")
    return "\n".join(rows)


def filter_rows(claims: Iterable[Claim]) -> dict[str, dict[str, str]]:
    """The values the ledger's filter matches, per claim ID.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    dict
        ``{claim ID: {"chapter": ..., "verdict": ..., "method": ..., "by": ...}}``;
        ``verdict`` is :func:`claim_label` (``"extension"`` for the book's questions) and
        ``by`` is ``"source"``, ``"book"`` or ``"none"`` (an extension).

    Notes
    -----
    Written into the claims ledger (``book/ledger.md``) as ``data-`` attributes that
    ``_static/ledger-filter.js`` reads.
    """
    return {
        c.id: {"chapter": c.chapter, "verdict": claim_label(c), "method": c.method, "by": c.verdict_by or "none"}
        for c in claims
    }


def _select(name: str, legend: str, options: Sequence[tuple[str, str]]) -> str:
    opts = ['<option value="">all</option>']
    opts += [f'<option value="{html.escape(v)}">{html.escape(t)}</option>' for v, t in options]
    return (
        f'<label>{html.escape(legend)} <select data-filter="{name}" name="{name}">'
        + "".join(opts)
        + "</select></label>"
    )


def filter_controls_html(claims: Iterable[Claim], chapter_titles: Mapping[str, str]) -> str:
    """The ledger's filter: four menus (chapter, verdict, how we know, decided by) and the row data.

    Parameters
    ----------
    claims : iterable of Claim
        The claims listed in the ledger.
    chapter_titles : mapping of str to str
        Chapter file stem to the title a reader sees, in reading order. Every claim's
        chapter must be a key.

    Returns
    -------
    str
        An HTML fragment: a ``<form class="ledger-filter" hidden>`` (the script shows it;
        without JavaScript every row stays shown) with one ``<select data-filter=...>``
        per field, offering only values some claim has (a chapter without claims is not
        offered), a live count ``<output class="ledger-filter-count">``, and one ``<span
        data-claim=... data-chapter=... data-verdict=... data-method=... data-by=...>`` per
        claim inside a hidden ``<div class="ledger-filter-rows">``.

    Raises
    ------
    ValueError
        A claim's chapter is missing from ``chapter_titles``.

    Notes
    -----
    Read by ``_static/ledger-filter.js``, which matches each ledger row (``div.ledger-row``)
    by the claim ID its title starts with. Used by the claims ledger (``book/ledger.md``).
    """
    claims = list(claims)
    rows = filter_rows(claims)
    missing = sorted({r["chapter"] for r in rows.values()} - set(chapter_titles))
    if missing:
        raise ValueError(f"filter_controls_html: no title for chapter(s) {missing}")
    chapters = [(stem, title) for stem, title in chapter_titles.items() if any(r["chapter"] == stem for r in rows.values())]
    verdicts = [(v, v if v != EXTENSION else "the book's own question") for v in LABELS
                if any(r["verdict"] == v for r in rows.values())]
    methods = [(m, m) for m in METHODS if any(r["method"] == m for r in rows.values())]
    bys = [(b, BY_TEXT[b]) for b in VERDICT_BY if any(r["by"] == b for r in rows.values())]
    data = "".join(
        f'<span data-claim="{html.escape(cid)}" data-chapter="{html.escape(r["chapter"])}" '
        f'data-verdict="{html.escape(r["verdict"])}" data-method="{html.escape(r["method"])}" '
        f'data-by="{html.escape(r["by"])}"></span>'
        for cid, r in rows.items()
    )
    return (
        '<form class="ledger-filter" hidden aria-label="Filter the claims" data-count="{shown} of {total} claims">'
        + _select("chapter", "Chapter", chapters)
        + _select("verdict", "Verdict", verdicts)
        + _select("method", "How we know", methods)
        + _select("by", "Decided by", bys)
        + f'<output class="ledger-filter-count" aria-live="polite">{len(rows)}</output>'
        + "</form>"
        + f'<div class="ledger-filter-rows" hidden data-rows="{len(rows)}">{data}</div>'
    )


def verdict_figure(claims: Iterable[Claim], chapter_titles: Mapping[str, str], t: Callable[[str], str] | None = None):
    """One tile per claim, one row per chapter, coloured by :func:`claim_label`.

    Parameters
    ----------
    claims : iterable of Claim
        The claims to draw.
    chapter_titles : mapping of str to str
        Chapter file stem to its title, in reading order (top row first). Every claim's
        chapter must be a key; chapters without claims are left out.
    t : callable, optional
        The translator of :func:`normlib.plotting.glue_figure` for the figure's texts (row
        labels, axis label, legend); default: English.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; each tile shows the claim's ID, the article's claims first in each row
        and the book's own questions (grey) after them. Claims whose method is
        ``not-reproducible-here`` are hatched. The tiles carry ``gid`` = the claim's ID, so
        a test can read each tile's colour back from the figure.

    Raises
    ------
    ValueError
        A claim's chapter is missing from ``chapter_titles``.

    Notes
    -----
    Okabe–Ito colours (:data:`LABEL_COLORS`), the book's style
    (:func:`normlib.plotting.new_figure`). The landing page (``book/intro.md``) shows it.
    """
    from matplotlib.patches import Patch, Rectangle

    from .plotting import new_figure

    t = t or (lambda s: s)
    words = {"CORRECT": t("CORRECT"), "IMPRECISE": t("IMPRECISE"), "WRONG": t("WRONG"),
             "UNSUPPORTED": t("UNSUPPORTED"), EXTENSION: t("the book's own question")}
    claims = list(claims)
    missing = sorted({c.chapter for c in claims} - set(chapter_titles))
    if missing:
        raise ValueError(f"verdict_figure: no title for chapter(s) {missing}")
    rows = []
    for stem, title in chapter_titles.items():
        cs = [c for c in claims if c.chapter == stem]
        cs = [c for c in cs if not c.is_extension] + [c for c in cs if c.is_extension]
        if cs:
            rows.append((stem, title, cs))
    n_cols = max(len(cs) for _, _, cs in rows)
    fig, ax = new_figure(width=7.2, height=0.36 * len(rows) + 1.4)
    used = []
    for i, (_, _, cs) in enumerate(rows):
        y = len(rows) - 1 - i
        for j, c in enumerate(cs):
            lab = claim_label(c)
            if lab not in used:
                used.append(lab)
            color = LABEL_COLORS[lab]
            hatched = c.method in _METHOD_BESIDE_VERDICT
            wrong = lab == "WRONG"  # vermillion sits near orange: a black frame tells it apart
            ax.add_patch(
                Rectangle((j + 0.05, y + 0.08), 0.9, 0.84, facecolor=color, edgecolor="black" if wrong else "white",
                          hatch="///" if hatched else None, linewidth=1.6 if wrong else 0.8, gid=c.id)
            )
            r, g, b = (int(color[k:k + 2], 16) / 255 for k in (1, 3, 5))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(j + 0.5, y + 0.5, c.id, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black", style="italic" if c.is_extension else "normal",
                    bbox=dict(boxstyle="round,pad=0.1", facecolor=color, edgecolor="none") if hatched else None)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(0, len(rows))
    ax.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    # short row labels (the title before any colon, long ones on two lines) keep the grid wide
    ax.set_yticklabels([textwrap.fill(t(title.split(":")[0]), 28, break_on_hyphens=False) for _, title, _ in rows])
    ax.set_xticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel(t("the chapter's claims, one tile each, in the article's order; the book's own questions last, in grey"))
    order = [lab for lab in LABELS if lab in used]
    handles = [Patch(facecolor=LABEL_COLORS[lab], label=words[lab], edgecolor="black" if lab == "WRONG" else None,
                     linewidth=1.6 if lab == "WRONG" else None) for lab in order]
    if any(c.method in _METHOD_BESIDE_VERDICT for c in claims):
        handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="///",
                             label=t("hatched: cannot be run here; judged by its source")))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, handlelength=1.2,
               columnspacing=1.0)
    return fig


def _md_escape_title(text: str) -> str:
    """One line of text for an admonition title (no line breaks)."""
    return " ".join(text.split())


def ledger_rows(claims: Iterable[Claim], checks: Mapping[str, Check]) -> str:
    """The claims ledger's rows, as MyST: one folded row per claim, its details under it.

    Parameters
    ----------
    claims : iterable of Claim
        The claims, in ledger order.
    checks : mapping of str to Check
        The registry's checks (for each claim's headline numbers).

    Returns
    -------
    str
        For each claim, a target ``(ledger-c3.8)=`` and a folded admonition whose title is
        the row: the ID, the article's words (the ``{article}`` role) or "a question the
        book adds", the verdict word, and the one-sentence reason. Under the fold: the
        claim in the book's words, who decided the verdict and how the book knows, what the
        source says, the article's number, the book's headline numbers (glued from the page
        that computed them), the note, and links to the lecture's and the evidence page's
        sections.

    Notes
    -----
    ``book/ledger.md`` holds this text between two marker comments (it is static MyST, so
    the Chinese edition translates it like any page); ``tests/test_ledger.py`` fails when
    it is not what this function writes for today's registry (``python -m normlib.ledger``
    rewrites it).
    """
    out = []
    for c in claims:
        lab = claim_label(c)
        words = "a question the book adds" if c.is_extension else f"{{article}}`{c.id}`"
        verdict = "*extension*" if c.is_extension else f"**{lab}**"
        reason = _md_escape_title(glue_from_chapter(c.reason, c.chapter))
        cls = (f"dropdown ledger-row ledger-v-{lab.lower()} ledger-m-{c.method} "
               f"ledger-ch-{c.chapter} ledger-by-{c.verdict_by or 'none'}")
        body = [f"- **The claim, in the book's words:** {c.statement}"]
        if c.is_extension:
            body.append(f"- **How the book knows:** {c.method} ({METHOD_TEXT[c.method]}).")
        else:
            body.append(f"- **Decided by:** {BY_TEXT[c.verdict_by]}; **how the book knows:** "
                        f"{c.method} ({METHOD_TEXT[c.method]}).")
        if c.source:
            body.append(f"- **What the source says:** {glue_from_chapter(c.source, c.chapter)}")
        if c.article_number.strip() not in ("", "—"):
            body.append(f"- **The article's number:** {c.article_number}")
        nums = []
        for h in c.headline:
            k = checks[h]
            doc = (k.chapter or c.chapter) + ".md"
            tag = f" ({MACHINE_DEPENDENT_TAG})" if k.machine_dependent else ""
            nums.append(f"{k.label}: **{{glue:text}}`{doc}::{h}__shown:s`**{tag}")
        if nums:
            body.append("- **The book's numbers:** " + "; ".join(nums) + ".")
        if c.note:
            body.append(f"- **More:** {glue_from_chapter(c.note, c.chapter)}")
        where = []
        if c.label:
            where.append(f"{{ref}}`the lecture <{c.label}>`")
        if c.evidence:
            where.append(f"{{ref}}`the evidence <{c.evidence}>`")
        if not where:
            where.append(f"{{doc}}`the chapter <{c.chapter}>`")
        body.append("- **Where:** " + " · ".join(where))
        out.append(f"(ledger-{c.id.lower()})=\n"
                   f":::{{admonition}} {c.id} · {words} · {verdict} · {reason}\n"
                   f":class: {cls}\n\n" + "\n".join(body) + "\n:::\n")
    return "\n".join(out)


_GLUE_ROLE = re.compile(r"\{glue(:text|:md)?\}`([^`:]+?)((?::[^`]*)?)`")


def glue_from_chapter(text: str, chapter: str) -> str:
    """Point the glue roles of a registry text at the chapter that glued them.

    Parameters
    ----------
    text : str
        A registry text (a claim's ``note``) that may hold glue roles written as in its
        chapter, e.g. ``{glue:text}`wl_lr_band_pre:.2f```.
    chapter : str
        The chapter that glues those keys (the claim's ``chapter``).

    Returns
    -------
    str
        The text with every glue role that names no document rewritten to the
        cross-document form ``{glue:text}`<chapter>.md::key:fmt```; roles that already
        name a document (``other.md::key``) are left as they are.

    Notes
    -----
    A note that states a result glues it instead of typing it ("Trust, mechanically"), and
    the claims ledger (``book/ledger.md``) shows the value the chapter computed.
    """
    def fix(m: re.Match) -> str:
        role, key, spec = m.group(1) or "", m.group(2), m.group(3)
        return f"{{glue{role}}}`{chapter}.md::{key}{spec}`"

    return _GLUE_ROLE.sub(lambda m: m.group(0) if "::" in m.group(0) else fix(m), text)


LEDGER_PAGE = "book/ledger.md"
INTRO_PAGE = "book/intro.md"
_BEGIN = "<!-- ledger rows: written by `python -m normlib.ledger` from normlib/claims.toml; do not edit -->"
_END = "<!-- end of ledger rows -->"
_TABLE_BEGIN = "<!-- verdict table: written by `python -m normlib.ledger` from normlib/claims.toml; do not edit -->"
_TABLE_END = "<!-- end of verdict table -->"


def intro_count_key(label: str) -> str:
    """The landing page's glue key for the number of claims with a label (``intro_n_correct``)."""
    return "intro_n_extensions" if label == EXTENSION else f"intro_n_{label.lower()}"


def _replace_block(path, begin: str, end: str, block: str, write: bool) -> str:
    text = path.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise ValueError(f"{path}: the markers {begin[:30]!r}… are missing")
    before, rest = text.split(begin, 1)
    _, after = rest.split(end, 1)
    new = before + begin + "\n\n" + block + "\n" + end + after
    if write and new != text:
        path.write_text(new, encoding="utf-8")
    return new


def rewrite_ledger_page(root=None, *, write: bool = True) -> str:
    """Put today's :func:`ledger_rows` between the markers of ``book/ledger.md``.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The repository's root (default: the directory above this package).
    write : bool, keyword-only
        Write the file (default); with False only return the text it would hold.

    Returns
    -------
    str
        The page's new text.

    Raises
    ------
    ValueError
        The page lacks one of the two marker comments.

    Notes
    -----
    Run as ``python -m normlib.ledger`` after an edit of ``claims.toml``; the claims ledger
    (``book/ledger.md``) is the page it writes.
    """
    from pathlib import Path

    from .claims import registry

    root = Path(__file__).resolve().parent.parent if root is None else Path(root)
    claims, checks = registry()
    return _replace_block(root / LEDGER_PAGE, _BEGIN, _END, ledger_rows(claims.values(), checks), write)


def rewrite_intro_table(root=None, *, write: bool = True) -> str:
    """Put today's :func:`verdict_table` (counts as glue roles) between the markers of ``book/intro.md``.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The repository's root (default: the directory above this package).
    write : bool, keyword-only
        Write the file (default); with False only return the text it would hold.

    Returns
    -------
    str
        The page's new text.

    Raises
    ------
    ValueError
        The page lacks one of the two marker comments.

    Notes
    -----
    The table is static MyST, so the Chinese edition translates it like the rest of the landing
    page (``book/intro.md``); its counts are glued by the page (:func:`intro_count_key`).
    """
    from pathlib import Path

    from .claims import registry

    root = Path(__file__).resolve().parent.parent if root is None else Path(root)
    claims, _ = registry()
    table = verdict_table(claims.values(), count=lambda lab, n: f"{{glue:text}}`{intro_count_key(lab)}:d`")
    return _replace_block(root / INTRO_PAGE, _TABLE_BEGIN, _TABLE_END,
                          "```{container} verdict-table\n" + table + "\n```\n", write)


if __name__ == "__main__":  # python -m normlib.ledger: rewrite the ledger's rows, the landing page's table, the chapters' copy
    from pathlib import Path as _Path

    _root = _Path(__file__).resolve().parent.parent
    (_root / "normlib" / CHAPTERS_FILE).write_text(chapters_file_text(toc_chapters(_root)), encoding="utf-8")
    rewrite_ledger_page()
    rewrite_intro_table()
