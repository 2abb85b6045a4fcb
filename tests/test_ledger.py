"""normlib.ledger: the one labelling rule, the landing page's verdict table and figure, and the
ledger's filter (its HTML and the plain-JavaScript matcher in _static/ledger-filter.js)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from normlib import ledger
from normlib.claims import STATUSES, VERDICTS, Claim, registry

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "_static" / "ledger-filter.js"
CSS = ROOT / "_static" / "book.css"


def _claim(cid, chapter="why-normalize", status="re-derived", verdict="", label=""):
    return Claim(id=cid, chapter=chapter, statement="s", article="—", status=status, verdict=verdict, label=label)


SAMPLE = [
    _claim("C1.1", verdict="CORRECT (the paper's own term)", label="why-depth"),
    _claim("C1.3", status="re-derived"),
    _claim("C1.6", status="source-checked", verdict="IMPRECISE: two of three"),
    _claim("C3.3", chapter="rmsnorm", status="reproduced", verdict="CORRECT numbers, with caveats"),
    _claim("C3.6", chapter="rmsnorm", status="reproduced"),
    _claim("C6.1", chapter="real-transformer", status="differs", verdict="CORRECT as a description"),
    _claim("C7.2", chapter="deepnorm", status="source-checked", verdict="UNSUPPORTED as stated"),
]
TITLES = {
    "why-normalize": "Why normalize",
    "rmsnorm": "RMSNorm: dropping the mean",
    "real-transformer": "A real Transformer",
    "deepnorm": "DeepNorm",
}


# ----------------------------------------------------------------------------- the one rule


def test_claim_label_is_the_verdict_word_else_the_status():
    """The verdict's first word when there is one (whatever the status), else the status."""
    labels = {c.id: ledger.claim_label(c) for c in SAMPLE}
    assert labels == {
        "C1.1": "CORRECT",
        "C1.3": "re-derived",
        "C1.6": "IMPRECISE",
        "C3.3": "CORRECT",
        "C3.6": "reproduced",
        "C6.1": "CORRECT",
        "C7.2": "UNSUPPORTED",
    }


def test_every_label_has_a_text_and_a_colour():
    assert set(ledger.LABELS) == set(VERDICTS) | set(STATUSES)
    assert set(ledger.LABEL_TEXT) == set(ledger.LABELS) == set(ledger.LABEL_COLORS)
    assert ledger.LABELS[: len(VERDICTS)] == VERDICTS


def test_label_groups_order_and_omission():
    groups = ledger.label_groups(SAMPLE)
    assert [lab for lab, _ in groups] == ["CORRECT", "IMPRECISE", "UNSUPPORTED", "reproduced", "re-derived"]
    assert [c.id for c in dict(groups)["CORRECT"]] == ["C1.1", "C3.3", "C6.1"]
    assert sum(len(cs) for _, cs in groups) == len(SAMPLE)


# ----------------------------------------------------------------------------- the verdict table


def _table_rows(md: str) -> list[list[str]]:
    lines = md.splitlines()
    assert lines[1].startswith("|---")
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]


def test_verdict_table_one_row_per_label_with_counts_and_links():
    rows = _table_rows(ledger.verdict_table(SAMPLE))
    assert [r[0] for r in rows] == ["**CORRECT**", "**IMPRECISE**", "**UNSUPPORTED**", "**reproduced**", "**re-derived**"]
    assert [int(r[2]) for r in rows] == [3, 1, 1, 1, 1]
    correct = rows[0][3]
    assert "{ref}`C1.1 <why-depth>`" in correct  # a labelled claim links to its section
    assert "{doc}`C3.3 <rmsnorm>`" in correct  # an unlabelled one to its chapter
    assert "{doc}`C6.1 <real-transformer>` (differs)" in correct  # the book's own run differs: said
    assert "(" not in correct.replace("(differs)", "")  # no other status is appended
    assert rows[4][3] == "{doc}`C1.3 <why-normalize>`"  # no verdict: labelled by its status, not "not checked"


def test_verdict_table_takes_a_link_function():
    md = ledger.verdict_table(SAMPLE[:2], link=lambda c: f"<{c.id}>")
    assert [r[3] for r in _table_rows(md)] == ["<C1.1>", "<C1.3>"]


def test_real_registry_every_claim_once_and_no_status_language():
    """On claims.toml: each claim appears in exactly one row; no row says a claim was not examined."""
    claims, _ = registry()
    md = ledger.verdict_table(claims.values())
    ids = re.findall(r"`(C\d+\.\d+) <", md)
    assert sorted(ids) == sorted(claims)
    assert not re.search(r"not checked|not written|pending", md)


# ----------------------------------------------------------------------------- the filter's HTML


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _parse(fragment: str) -> list[tuple[str, dict[str, str | None]]]:
    p = _Collect()
    p.feed(fragment)
    return p.tags


def test_filter_rows():
    rows = ledger.filter_rows(SAMPLE)
    assert rows["C1.3"] == {"chapter": "why-normalize", "status": "re-derived", "verdict": "none"}
    assert rows["C6.1"] == {"chapter": "real-transformer", "status": "differs", "verdict": "CORRECT"}


def test_filter_controls_carry_one_span_per_claim_with_its_attributes():
    tags = _parse(ledger.filter_controls_html(SAMPLE, TITLES))
    spans = {a["data-claim"]: a for t, a in tags if t == "span"}
    assert set(spans) == {c.id for c in SAMPLE}
    for c in SAMPLE:
        a = spans[c.id]
        assert (a["data-chapter"], a["data-status"], a["data-verdict"]) == (
            c.chapter,
            c.status,
            ledger.claim_label(c) if ledger.claim_label(c) in VERDICTS else "none",
        )
    form = next(a for t, a in tags if t == "form")
    assert "hidden" in form and form["class"] == "ledger-filter"  # shown by the script only
    store = next(a for t, a in tags if t == "div")
    assert store["class"] == "ledger-filter-rows" and "hidden" in store


def test_filter_menus_offer_only_values_some_claim_has_in_reading_order():
    html = ledger.filter_controls_html(SAMPLE, TITLES)
    menus = dict(re.findall(r'<select data-filter="(\w+)"[^>]*>(.*?)</select>', html))
    assert set(menus) == {"chapter", "status", "verdict"}

    def values(name):
        return re.findall(r'<option value="([^"]*)">', menus[name])

    assert values("chapter") == ["", "why-normalize", "rmsnorm", "real-transformer", "deepnorm"]
    assert values("status") == ["", "reproduced", "re-derived", "differs", "source-checked"]
    assert values("verdict") == ["", "CORRECT", "IMPRECISE", "UNSUPPORTED", "none"]
    assert "RMSNorm: dropping the mean" in menus["chapter"]


def test_filter_controls_refuse_an_unknown_chapter():
    with pytest.raises(ValueError, match="deepnorm"):
        ledger.filter_controls_html(SAMPLE, {k: v for k, v in TITLES.items() if k != "deepnorm"})


def test_filter_controls_escape_html():
    c = _claim("C1.1", chapter='a"b<c')
    html = ledger.filter_controls_html([c], {'a"b<c': "x & y"})
    assert 'data-chapter="a&quot;b&lt;c"' in html and "x &amp; y" in html


# ----------------------------------------------------------------------------- the script


def test_script_reads_the_names_the_python_writes():
    """The selectors and attribute names of _static/ledger-filter.js match filter_controls_html and ledger.md."""
    js = JS.read_text(encoding="utf-8")
    html = ledger.filter_controls_html(SAMPLE, TITLES)
    for name in ("form.ledger-filter", "div.ledger-filter-rows", "span[data-claim]", "select[data-filter]",
                 "output.ledger-filter-count"):
        assert name in js, name
        tag, cls = name.split(".", 1) if "." in name else (name.split("[")[0], None)
        assert f"<{tag}" in html and (cls is None or f'class="{cls}"' in html)
    for attr in ("data-chapter", "data-status", "data-verdict"):
        assert f'"{attr}"' in js and attr in html
    assert "div.ledger-table table" in js
    assert "{container} ledger-table" in (ROOT / "book" / "ledger.md").read_text(encoding="utf-8")
    assert not re.search(r"https?://", js)  # offline: no CDN, nothing fetched


def test_script_is_loaded_by_the_book():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"html_js_files:\s*\[[^\]]*ledger-filter\.js", config)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_script_row_matcher_in_node():
    """rowMatches: an empty filter matches everything; each chosen field must equal the row's value."""
    cases = [
        ({}, True),
        ({"chapter": "rmsnorm"}, True),
        ({"chapter": "layernorm"}, False),
        ({"chapter": "rmsnorm", "status": "reproduced", "verdict": "CORRECT"}, True),
        ({"chapter": "rmsnorm", "status": "reproduced", "verdict": "none"}, False),
        ({"chapter": "", "status": "", "verdict": "CORRECT"}, True),
        ({"status": "differs"}, False),
    ]
    row = {"chapter": "rmsnorm", "status": "reproduced", "verdict": "CORRECT"}
    code = (
        f"const m = require({json.dumps(str(JS))});"
        f"const cases = {json.dumps(cases)}; const row = {json.dumps(row)};"
        "process.stdout.write(JSON.stringify(cases.map(c => m.rowMatches(row, c[0]))));"
    )
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == [want for _, want in cases]


# ----------------------------------------------------------------------------- phone width


def test_css_never_breaks_words_in_the_ledger_and_stacks_when_narrow():
    """Prose columns never break inside a word; only the formula/code columns may, and they keep a minimum width."""
    css = CSS.read_text(encoding="utf-8")
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = re.findall(r"([^{}]*)\{([^{}]*)\}", css)
    ledger_rules = [(sel.strip(), body) for sel, body in rules if "ledger-table" in sel]
    assert ledger_rules
    assert not any(re.search(r"word-break:\s*break-all", body) for _, body in ledger_rules)
    anywhere = [sel for sel, body in ledger_rules if re.search(r"overflow-wrap:\s*anywhere", body)]
    assert anywhere and all(re.fullmatch(r"div\.ledger-table td:nth-child\([45]\)", sel) for sel in anywhere), anywhere
    for sel, body in ledger_rules:
        if sel in anywhere:
            assert re.search(r"min-width:\s*(\d+)em", body) and int(re.search(r"min-width:\s*(\d+)em", body).group(1)) >= 8
    cells = [body for sel, body in ledger_rules if sel == "div.ledger-table td, div.ledger-table th"]
    assert cells and "word-break: normal" in cells[0] and "overflow-wrap: break-word" in cells[0]
    for query in (r"@container \(max-width: [\d.]+em\)", r"@media \(max-width: [\d.]+em\)"):
        block = re.search(query + r" \{(.*?)\n\}", CSS.read_text(encoding="utf-8"), re.S)
        assert block, query
        assert "display: block" in block.group(1) and "thead { display: none; }" in block.group(1)
    assert "container-type: inline-size" in css
    assert "tr[hidden] { display: none !important; }" in css  # a filtered row stays hidden when stacked


# ----------------------------------------------------------------------------- the figure and the chapters


def test_verdict_figure_one_tile_per_claim_coloured_by_label():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex
    from matplotlib.patches import Rectangle

    fig = ledger.verdict_figure(SAMPLE, TITLES)
    try:
        ax = fig.axes[0]
        tiles = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert len(tiles) == len(SAMPLE)
        texts = {t.get_text(): t.get_position() for t in ax.texts}
        assert set(texts) == {c.id for c in SAMPLE}
        for c in SAMPLE:
            x, y = texts[c.id]
            (tile,) = [p for p in tiles if p.get_x() < x < p.get_x() + p.get_width()
                       and p.get_y() < y < p.get_y() + p.get_height()]  # the tile under the ID
            assert to_hex(tile.get_facecolor()) == ledger.LABEL_COLORS[ledger.claim_label(c)].lower()
            assert bool(tile.get_hatch()) == (c.id == "C6.1")  # CORRECT source, the book's run differs
        rows = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]), reverse=True)
        assert [t for _, t in rows] == ["Why normalize", "RMSNorm", "A real Transformer", "DeepNorm"]  # reading order, top down
        assert ax.get_xlabel()
        legend = fig.legends[0]
        assert [t.get_text() for t in legend.get_texts()][:5] == [
            "CORRECT", "IMPRECISE", "UNSUPPORTED", "reproduced", "re-derived"]
    finally:
        plt.close(fig)


def test_verdict_figure_refuses_an_unknown_chapter():
    with pytest.raises(ValueError, match="rmsnorm"):
        ledger.verdict_figure(SAMPLE, {"why-normalize": "Why normalize"})


def test_toc_chapters_reads_the_book_in_order_without_the_appendix():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    expected = [Path(e["file"]).name for p in toc["parts"] if p["caption"] != "Appendix" for e in p["chapters"]]
    chapters = ledger.toc_chapters()
    assert list(chapters) == expected
    assert chapters["why-normalize"] == "Why normalize"
    assert "ledger" not in chapters and "intro" not in chapters
    claims, _ = registry()
    assert {c.chapter for c in claims.values()} <= set(chapters)


def test_toc_chapters_refuses_a_chapter_without_a_heading(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_toc.yml").write_text("root: book/intro\nparts:\n  - caption: A\n    chapters:\n      - file: book/x\n")
    (tmp_path / "book" / "x.md").write_text("no heading here\n")
    with pytest.raises(ValueError, match="x.md"):
        ledger.toc_chapters(tmp_path)


# ----------------------------------------------------------------------------- the pages


STATUS_WORDS = re.compile(r"still being written|not written yet|not checked yet|work in progress|placeholder", re.I)


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "book").glob("*.md")))
def test_no_development_status_language(page):
    """The book never tells a reader that a part of it is unfinished."""
    text = (ROOT / "book" / page).read_text(encoding="utf-8")
    assert not STATUS_WORDS.search(text), STATUS_WORDS.search(text).group(0)


def test_glue_from_chapter_points_bare_glue_roles_at_the_chapter():
    text = "band {glue:text}`wl_band:.2f` wide, {glue}`n_runs`, kept {glue:text}`other.md::k:.1f`; `code` stays"
    out = ledger.glue_from_chapter(text, "warmup-lr")
    assert out == (
        "band {glue:text}`warmup-lr.md::wl_band:.2f` wide, {glue}`warmup-lr.md::n_runs`, "
        "kept {glue:text}`other.md::k:.1f`; `code` stays"
    )
    assert ledger.glue_from_chapter("no roles here", "x") == "no roles here"
