"""What the landing page and the claims ledger show about the registry.

One rule labels every claim of ``claims.toml`` for the reader: a claim with a source
verdict (the primary source read against the article: CORRECT, IMPRECISE, WRONG,
UNSUPPORTED) is labelled by that verdict; every other claim is labelled by its status
(what the book computed: reproduced, re-derived, differs, ...). The landing page's
table and figure of the verdicts and the ledger's filter are all built from that one
rule here, so they cannot disagree with the registry or with each other.

matplotlib is imported only inside :func:`verdict_figure`.
"""

from __future__ import annotations

import html
import re
import textwrap
from typing import Callable, Iterable, Mapping, Sequence

from .claims import STATUSES, VERDICTS, Claim, source_verdict

__all__ = [
    "LABELS",
    "toc_chapters",
    "LABEL_TEXT",
    "LABEL_COLORS",
    "claim_label",
    "label_groups",
    "verdict_table",
    "filter_rows",
    "filter_controls_html",
    "verdict_figure",
    "glue_from_chapter",
]

#: Every label a claim can carry, in the order the book reports them: the source
#: verdicts first, then the statuses of claims without one.
LABELS = VERDICTS + STATUSES[1:] + STATUSES[:1]

#: What each label tells a reader (one phrase each).
LABEL_TEXT = {
    "CORRECT": "the primary source says what the article says",
    "IMPRECISE": "right in substance, wrong in a detail that matters",
    "WRONG": "the primary source says otherwise",
    "UNSUPPORTED": "no primary source says it",
    "reproduced": "the article's own numbers, re-computed here",
    "re-derived": "the article printed no number; the book computed the statement and checked it",
    "differs": "re-computed here, and the result does not match the article",
    "source-checked": "a statement about a source, read there",
    "not-reproducible-here": "needs data or hardware this book cannot have",
    "pending": "not examined",
}

#: One Okabe–Ito colour per label (normlib.plotting.PALETTE), for the verdict figure.
LABEL_COLORS = {
    "CORRECT": "#009E73",
    "IMPRECISE": "#E69F00",
    "WRONG": "#D55E00",
    "UNSUPPORTED": "#CC79A7",
    "reproduced": "#0072B2",
    "re-derived": "#56B4E9",
    "differs": "#F0E442",
    "source-checked": "#000000",
    "not-reproducible-here": "#000000",
    "pending": "#000000",
}

#: Statuses worth showing beside a verdict label: the book's own measurement disagrees
#: with the article, or could not be made.
_STATUS_BESIDE_VERDICT = ("differs", "not-reproducible-here")


def toc_chapters(root=None) -> dict[str, str]:
    """The chapters of the book's table of contents, with the titles a reader sees.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The repository's root directory (the one holding ``_toc.yml`` and ``book/``);
        default: the directory above this package (normlib is installed in place).

    Returns
    -------
    dict of str to str
        Chapter file stem to the chapter's title (its first ``# `` heading), in reading
        order; the parts captioned "Appendix" (ledger, bibliography, report) are left out.

    Raises
    ------
    ValueError
        A chapter of the table of contents has no ``# `` heading.

    Notes
    -----
    Used by the landing page (``book/intro.md``) and the claims ledger (``book/ledger.md``).
    """
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent if root is None else Path(root)
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


def claim_label(claim: Claim) -> str:
    """The one label a reader sees for a claim: its source verdict, else its status.

    Parameters
    ----------
    claim : Claim
        A claim of the registry.

    Returns
    -------
    str
        One of :data:`LABELS`: the first word of the claim's ``verdict``
        (:func:`normlib.claims.source_verdict`) when it has one, otherwise its status.

    Notes
    -----
    The same rule for every claim (a claim whose source was read gets the source's
    verdict; a computation without a source gets what the computation found). Used by the
    landing page (``book/intro.md``) and the claims ledger (``book/ledger.md``).
    """
    return source_verdict(claim) or claim.status


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
    """A MyST link from a claim's ID to the section that checks it (or its chapter)."""
    if claim.label:
        return f"{{ref}}`{claim.id} <{claim.label}>`"
    return f"{{doc}}`{claim.id} <{claim.chapter}>`"


def verdict_table(claims: Iterable[Claim], link: Callable[[Claim], str] | None = None) -> str:
    """A Markdown table of the claims by label: what it means, how many, which.

    Parameters
    ----------
    claims : iterable of Claim
        The claims of the registry, in ledger order.
    link : callable, optional
        Maps a claim to the Markdown of its ID; default: a MyST ``{ref}`` role to the
        section that checks it (``{doc}`` to its chapter when it has no label).

    Returns
    -------
    str
        A Markdown table, one row per label of :func:`label_groups`. A claim labelled by
        its source verdict whose status is ``differs`` or ``not-reproducible-here`` has
        that status written after its ID (the source may be right while the book's own
        measurement disagrees with the article).

    Notes
    -----
    One rule for all claims (:func:`claim_label`). Shown on the landing page
    (``book/intro.md``).
    """
    link = link or _default_link
    rows = ["| label | what it means | claims | which |", "|---|---|---:|---|"]
    for lab, cs in label_groups(claims):
        ids = []
        for c in cs:
            text = link(c)
            if lab in VERDICTS and c.status in _STATUS_BESIDE_VERDICT:
                text += f" ({c.status})"
            ids.append(text)
        rows.append(f"| **{lab}** | {LABEL_TEXT[lab]} | {len(cs)} | {', '.join(ids)} |")
    return "\n".join(rows)


def filter_rows(claims: Iterable[Claim]) -> dict[str, dict[str, str]]:
    """The values the ledger's filter matches, per claim ID.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    dict
        ``{claim ID: {"chapter": ..., "status": ..., "verdict": ...}}``; ``verdict`` is the
        word of :data:`normlib.claims.VERDICTS` or ``"none"`` for a claim without one.

    Notes
    -----
    Written into the claims ledger (``book/ledger.md``) as ``data-`` attributes that
    ``_static/ledger-filter.js`` reads.
    """
    return {
        c.id: {"chapter": c.chapter, "status": c.status, "verdict": source_verdict(c) or "none"}
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
    """The ledger's filter: three menus (chapter, status, source verdict) and the row data.

    Parameters
    ----------
    claims : iterable of Claim
        The claims listed in the ledger table.
    chapter_titles : mapping of str to str
        Chapter file stem to the title a reader sees, in reading order. Every claim's
        chapter must be a key.

    Returns
    -------
    str
        An HTML fragment: a ``<form class="ledger-filter" hidden>`` (the script shows it;
        without JavaScript the full table stays as it is) with one ``<select
        data-filter=...>`` per field, offering only values some claim has, a live count
        ``<output class="ledger-filter-count">``, and one ``<span data-claim=...
        data-chapter=... data-status=... data-verdict=...>`` per claim inside a hidden
        ``<div class="ledger-filter-rows">``.

    Raises
    ------
    ValueError
        A claim's chapter is missing from ``chapter_titles``.

    Notes
    -----
    Read by ``_static/ledger-filter.js``, which matches each table row by the claim ID in
    its first cell. Used by the claims ledger (``book/ledger.md``).
    """
    claims = list(claims)
    rows = filter_rows(claims)
    missing = sorted({r["chapter"] for r in rows.values()} - set(chapter_titles))
    if missing:
        raise ValueError(f"filter_controls_html: no title for chapter(s) {missing}")
    chapters = [(stem, title) for stem, title in chapter_titles.items() if any(r["chapter"] == stem for r in rows.values())]
    statuses = [(s, s) for s in STATUSES if any(r["status"] == s for r in rows.values())]
    verdicts = [(v, v) for v in VERDICTS if any(r["verdict"] == v for r in rows.values())]
    if any(r["verdict"] == "none" for r in rows.values()):
        verdicts.append(("none", "no source verdict"))
    data = "".join(
        f'<span data-claim="{html.escape(cid)}" data-chapter="{html.escape(r["chapter"])}" '
        f'data-status="{html.escape(r["status"])}" data-verdict="{html.escape(r["verdict"])}"></span>'
        for cid, r in rows.items()
    )
    return (
        '<form class="ledger-filter" hidden aria-label="Filter the claims">'
        + _select("chapter", "Chapter", chapters)
        + _select("status", "Status", statuses)
        + _select("verdict", "Source verdict", verdicts)
        + f'<output class="ledger-filter-count" aria-live="polite">{len(rows)} claims</output>'
        + "</form>"
        + f'<div class="ledger-filter-rows" hidden data-rows="{len(rows)}">{data}</div>'
    )


def verdict_figure(claims: Iterable[Claim], chapter_titles: Mapping[str, str]):
    """One tile per claim, one row per chapter, coloured by :func:`claim_label`.

    Parameters
    ----------
    claims : iterable of Claim
        The claims to draw.
    chapter_titles : mapping of str to str
        Chapter file stem to its title, in reading order (top row first). Every claim's
        chapter must be a key; chapters without claims are left out.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; each tile shows the claim's ID. Claims labelled by a source verdict
        whose status is ``differs`` or ``not-reproducible-here`` are hatched.

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

    claims = list(claims)
    missing = sorted({c.chapter for c in claims} - set(chapter_titles))
    if missing:
        raise ValueError(f"verdict_figure: no title for chapter(s) {missing}")
    rows = [(stem, title, [c for c in claims if c.chapter == stem]) for stem, title in chapter_titles.items()]
    rows = [r for r in rows if r[2]]
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
            hatched = lab in VERDICTS and c.status in _STATUS_BESIDE_VERDICT
            ax.add_patch(
                Rectangle((j + 0.05, y + 0.08), 0.9, 0.84, facecolor=color, edgecolor="white",
                          hatch="///" if hatched else None, linewidth=0.8)
            )
            r, g, b = (int(color[k:k + 2], 16) / 255 for k in (1, 3, 5))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(j + 0.5, y + 0.5, c.id, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black",
                    bbox=dict(boxstyle="round,pad=0.1", facecolor=color, edgecolor="none") if hatched else None)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(0, len(rows))
    ax.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    # short row labels (the title before any colon, long ones on two lines) keep the grid wide
    ax.set_yticklabels([textwrap.fill(title.split(":")[0], 28, break_on_hyphens=False) for _, title, _ in rows])
    ax.set_xticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("the chapter's claims, one tile each, in the article's order")
    order = [lab for lab in LABELS if lab in used]
    handles = [Patch(facecolor=LABEL_COLORS[lab], label=lab) for lab in order]
    if any(lab in VERDICTS and c.status in _STATUS_BESIDE_VERDICT for c in claims for lab in [claim_label(c)]):
        handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="///",
                             label="hatched: the book's own run differs, or cannot run here"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, handlelength=1.2,
               columnspacing=1.0)
    return fig


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
