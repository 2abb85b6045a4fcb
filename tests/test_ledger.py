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
from normlib.claims import METHODS, VERDICTS, Claim, registry

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "_static" / "ledger-filter.js"
CSS = ROOT / "_static" / "book.css"


def _claim(cid, chapter="why-normalize", verdict="CORRECT", by="book", method="re-derived", kind="article", label=""):
    art = kind == "article"
    return Claim(id=cid, chapter=chapter, statement="s", method=method, reason="r.", kind=kind,
                 article_zh="原文" if art else "", article_en="words" if art else "",
                 verdict=verdict if art else "", verdict_by=by if art else "", label=label)


SAMPLE = [
    _claim("C1.1", verdict="CORRECT", by="source", label="why-depth"),
    _claim("C1.3", verdict="CORRECT", by="book"),
    _claim("C1.6", verdict="IMPRECISE", by="source", method="source-checked"),
    _claim("C3.3", chapter="rmsnorm", verdict="WRONG", by="book", method="reproduced"),
    _claim("C3.6", chapter="rmsnorm", kind="extension", method="reproduced"),
    _claim("C6.1", chapter="real-transformer", verdict="CORRECT", by="source", method="not-reproducible-here"),
    _claim("C7.2", chapter="deepnorm", verdict="UNSUPPORTED", by="source", method="source-checked"),
]
TITLES = {
    "why-normalize": "Why normalize",
    "rmsnorm": "RMSNorm: dropping the mean",
    "real-transformer": "A real Transformer",
    "deepnorm": "DeepNorm",
}


# ----------------------------------------------------------------------------- the one rule


def test_claim_label_is_the_verdict_else_extension():
    """A claim of the article is labelled by its verdict, whatever its method; an extension by 'extension'."""
    labels = {c.id: ledger.claim_label(c) for c in SAMPLE}
    assert labels == {
        "C1.1": "CORRECT",
        "C1.3": "CORRECT",
        "C1.6": "IMPRECISE",
        "C3.3": "WRONG",
        "C3.6": "extension",
        "C6.1": "CORRECT",
        "C7.2": "UNSUPPORTED",
    }


def test_every_label_has_a_text_and_a_colour():
    assert ledger.LABELS == VERDICTS + ("extension",)
    assert set(ledger.LABEL_TEXT) == set(ledger.LABELS) == set(ledger.LABEL_COLORS)
    assert set(ledger.METHOD_TEXT) == set(METHODS)
    assert len(set(ledger.LABEL_COLORS.values())) == len(ledger.LABELS)  # no two labels look alike


def test_label_groups_order_and_omission():
    groups = ledger.label_groups(SAMPLE)
    assert [lab for lab, _ in groups] == ["CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED", "extension"]
    assert [c.id for c in dict(groups)["CORRECT"]] == ["C1.1", "C1.3", "C6.1"]
    assert sum(len(cs) for _, cs in groups) == len(SAMPLE)


def test_counts_never_count_an_extension_among_the_articles_claims():
    n = ledger.counts(SAMPLE)
    assert (n.article, n.extensions) == (6, 1)
    assert dict(n.by_verdict) == {"CORRECT": 3, "IMPRECISE": 1, "WRONG": 1, "UNSUPPORTED": 1}
    assert (n.by_source, n.by_book, n.not_reproducible) == (4, 2, 1)
    assert sum(n.by_verdict.values()) == n.article == n.by_source + n.by_book


def test_counts_an_extension_in_no_count_of_the_articles_claims():
    """Mutants: ``art = claims`` (an extension counted among the article's claims), or the
    not-reproducible count taken over every claim (an extension the book cannot run here is
    the book's question, not one of the article's claims judged by its source)."""
    ext = _claim("C9.9", chapter="deepnorm", kind="extension", method="not-reproducible-here")
    n = ledger.counts(SAMPLE + [ext])
    assert (n.article, n.extensions, n.not_reproducible) == (6, 2, 1)
    assert dict(n.by_verdict) == {"CORRECT": 3, "IMPRECISE": 1, "WRONG": 1, "UNSUPPORTED": 1}
    assert ledger.counts([ext]) == ledger.Counts(article=0, extensions=1, by_verdict=dict.fromkeys(VERDICTS, 0),
                                                 by_source=0, by_book=0, not_reproducible=0)


def test_counts_on_the_real_registry():
    claims, _ = registry()
    n = ledger.counts(claims.values())
    exts = {c.id for c in claims.values() if c.is_extension}
    assert n.article == len(claims) - len(exts) and n.extensions == len(exts)
    assert {"C2.6", "C4.3", "C6.1", "C7.3"} <= exts  # the catalogue's own extensions


# ----------------------------------------------------------------------------- the verdict table


def _table_rows(md: str) -> list[list[str]]:
    lines = md.splitlines()
    assert lines[1].startswith("|---")
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]


def test_verdict_table_one_row_per_label_split_by_who_decided():
    rows = _table_rows(ledger.verdict_table(SAMPLE))
    assert [r[0] for r in rows] == ["**CORRECT**", "**IMPRECISE**", "**WRONG**", "**UNSUPPORTED**",
                                    "*the book's own questions*"]
    assert [int(r[2]) for r in rows] == [3, 1, 1, 1, 1]
    correct = rows[0]
    assert "{ref}`C1.1 <ledger-c1.1>`" in correct[3] and "C1.3" not in correct[3]  # decided by a source
    assert correct[4] == "{ref}`C1.3 <ledger-c1.3>`"  # decided by the book
    assert "{ref}`C6.1 <ledger-c6.1>` (not reproducible here)" in correct[3]  # said beside the verdict
    assert "(" not in correct[3].replace("(not reproducible here)", "")  # nothing else appended
    assert rows[4][4] == "{ref}`C3.6 <ledger-c3.6>`" and rows[4][3] == "—"


# one claim not reproducible here per column of the table, and an extension
NRH = [
    _claim("C1.1", verdict="CORRECT", by="source", method="not-reproducible-here"),
    _claim("C1.3", verdict="CORRECT", by="source"),
    _claim("C1.6", verdict="WRONG", by="book", method="not-reproducible-here"),
    _claim("C3.3", chapter="rmsnorm", verdict="WRONG", by="book", method="reproduced"),
    _claim("C3.6", chapter="rmsnorm", kind="extension", method="not-reproducible-here"),
]


def test_not_reproducible_here_is_shown_beside_its_verdict():
    """Mutants: ``not-reproducible-here`` dropped from the methods shown beside a verdict, or
    only from the table's text, the figure's hatching or its legend (C9.2 would look like a
    claim the book ran: the landing page's first screen)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    nrh = {c.id for c in NRH if c.method == "not-reproducible-here"}
    md = ledger.verdict_table(NRH, link=lambda c: c.id)
    marked = set(re.findall(r"(C\d+\.\d+) \(not reproducible here\)", md))
    assert marked == nrh, md
    assert md.count("(not reproducible here)") == len(nrh)

    fig = ledger.verdict_figure(NRH, TITLES)
    try:
        hatched = {p.get_gid(): p.get_hatch() for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_gid()}
        assert {gid for gid, h in hatched.items() if h} == nrh
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[-1].startswith("hatched") and "judged by its source" in legend[-1]
    finally:
        plt.close(fig)
    fig = ledger.verdict_figure([c for c in NRH if c.id not in nrh], TITLES)
    try:  # no hatched tile, no hatching in the legend
        assert not any("hatched" in t.get_text() for t in fig.legends[0].get_texts())
    finally:
        plt.close(fig)


def test_verdict_table_takes_a_link_function():
    md = ledger.verdict_table(SAMPLE[:2], link=lambda c: f"<{c.id}>")
    assert [(r[3], r[4]) for r in _table_rows(md)] == [("<C1.1>", "<C1.3>")]


def test_real_registry_every_claim_once():
    """On claims.toml: each claim appears in exactly one row."""
    claims, _ = registry()
    md = ledger.verdict_table(claims.values())
    ids = re.findall(r"`(C\d+\.\d+) <", md)
    assert sorted(ids) == sorted(claims)
    assert not re.search(r"not checked|not written|pending|re-derived|reproduced", md)


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
    assert rows["C1.3"] == {"chapter": "why-normalize", "verdict": "CORRECT", "method": "re-derived", "by": "book"}
    assert rows["C3.6"] == {"chapter": "rmsnorm", "verdict": "extension", "method": "reproduced", "by": "none"}


def test_filter_controls_carry_one_span_per_claim_with_its_attributes():
    tags = _parse(ledger.filter_controls_html(SAMPLE, TITLES))
    spans = {a["data-claim"]: a for t, a in tags if t == "span"}
    assert set(spans) == {c.id for c in SAMPLE}
    for c in SAMPLE:
        a = spans[c.id]
        assert (a["data-chapter"], a["data-verdict"], a["data-method"], a["data-by"]) == (
            c.chapter, ledger.claim_label(c), c.method, c.verdict_by or "none")
    form = next(a for t, a in tags if t == "form")
    assert "hidden" in form and form["class"] == "ledger-filter"  # shown by the script only
    store = next(a for t, a in tags if t == "div")
    assert store["class"] == "ledger-filter-rows" and "hidden" in store


def test_filter_menus_offer_only_values_some_claim_has_in_reading_order():
    html = ledger.filter_controls_html(SAMPLE, {"layernorm": "LayerNorm", **TITLES})
    menus = dict(re.findall(r'<select data-filter="(\w+)"[^>]*>(.*?)</select>', html))
    assert set(menus) == {"chapter", "verdict", "method", "by"}

    def values(name):
        return re.findall(r'<option value="([^"]*)">', menus[name])

    # layernorm has no claim in SAMPLE: it is not offered (a menu entry that shows nothing)
    assert values("chapter") == ["", "why-normalize", "rmsnorm", "real-transformer", "deepnorm"]
    assert values("verdict") == ["", "CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED", "extension"]
    assert values("method") == ["", "reproduced", "re-derived", "source-checked", "not-reproducible-here"]
    assert values("by") == ["", "source", "book"]
    assert "RMSNorm: dropping the mean" in menus["chapter"] and "LayerNorm" not in menus["chapter"]


def test_filter_menus_offer_no_value_that_no_claim_has():
    """Mutants: any menu offering every value of its field (a verdict, a method, a decider, a
    chapter that selects no row); SAMPLE uses every value, so this uses two claims."""
    few = [_claim("C3.3", chapter="rmsnorm", verdict="WRONG", by="book", method="reproduced"),
           _claim("C3.6", chapter="rmsnorm", kind="extension", method="reproduced")]
    html = ledger.filter_controls_html(few, TITLES)
    menus = dict(re.findall(r'<select data-filter="(\w+)"[^>]*>(.*?)</select>', html))
    offered = {name: re.findall(r'<option value="([^"]*)">', m) for name, m in menus.items()}
    assert offered == {"chapter": ["", "rmsnorm"], "verdict": ["", "WRONG", "extension"],
                       "method": ["", "reproduced"], "by": ["", "book"]}


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
    for f in ("chapter", "verdict", "method", "by"):
        assert f'"{f}"' in js and f'data-{f}="' in html
    assert '"data-" + f' in js
    assert "div.ledger-row" in js and ".admonition-title" in js
    assert ":class: dropdown ledger-row" in (ROOT / "book" / "ledger.md").read_text(encoding="utf-8")
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
        ({"chapter": "rmsnorm", "method": "reproduced", "verdict": "CORRECT", "by": "book"}, True),
        ({"chapter": "rmsnorm", "method": "reproduced", "verdict": "extension"}, False),
        ({"chapter": "", "method": "", "verdict": "CORRECT"}, True),
        ({"by": "source"}, False),
    ]
    row = {"chapter": "rmsnorm", "method": "reproduced", "verdict": "CORRECT", "by": "book"}
    code = (
        f"const m = require({json.dumps(str(JS))});"
        f"const cases = {json.dumps(cases)}; const row = {json.dumps(row)};"
        "process.stdout.write(JSON.stringify(cases.map(c => m.rowMatches(row, c[0]))));"
    )
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == [want for _, want in cases]


# ----------------------------------------------------------------------------- phone width


def test_css_hides_filtered_rows_and_colours_each_verdict():
    """A filtered row stays hidden (the theme's admonition display would otherwise win), and every
    verdict's rows carry their figure colour at the left edge."""
    css = re.sub(r"/\*.*?\*/", "", CSS.read_text(encoding="utf-8"), flags=re.S)
    assert "div.admonition.ledger-row[hidden] { display: none !important; }" in css
    for lab, colour in ledger.LABEL_COLORS.items():
        assert f"div.admonition.ledger-row.ledger-v-{lab.lower()} {{ border-left-color: {colour}; }}" in css


def test_script_finds_the_claim_id_at_the_start_of_a_row_title_in_node():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    code = (
        f"const m = require({json.dumps(str(JS))});"
        "const row = t => ({querySelector: () => ({textContent: t})});"
        "process.stdout.write(JSON.stringify([m.rowClaim(row(' C3.8 · “x” · CORRECT')), "
        "m.rowClaim(row('see C3.8')), m.rowClaim({querySelector: () => null})]));"
    )
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == ["C3.8", "", ""]


# ----------------------------------------------------------------------------- the figure and the chapters


def _tile_colours(fig) -> dict[str, str]:
    """Each tile's colour read back from the drawn figure, by the claim ID its gid carries."""
    from matplotlib.colors import to_hex
    from matplotlib.patches import Rectangle

    ax = fig.axes[0]
    return {p.get_gid(): to_hex(p.get_facecolor()) for p in ax.patches if isinstance(p, Rectangle) and p.get_gid()}


def test_verdict_figure_one_tile_per_claim_coloured_by_label():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig = ledger.verdict_figure(SAMPLE, TITLES)
    try:
        ax = fig.axes[0]
        tiles = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert len(tiles) == len(SAMPLE)
        texts = {t.get_text(): t.get_position() for t in ax.texts}
        assert set(texts) == {c.id for c in SAMPLE}
        expected = {"C1.1": "CORRECT", "C1.3": "CORRECT", "C1.6": "IMPRECISE", "C3.3": "WRONG",
                    "C3.6": "extension", "C6.1": "CORRECT", "C7.2": "UNSUPPORTED"}
        for c in SAMPLE:
            x, y = texts[c.id]
            (tile,) = [p for p in tiles if p.get_x() < x < p.get_x() + p.get_width()
                       and p.get_y() < y < p.get_y() + p.get_height()]  # the tile under the ID
            assert tile.get_gid() == c.id
            assert _tile_colours(fig)[c.id] == ledger.LABEL_COLORS[expected[c.id]].lower()
            assert bool(tile.get_hatch()) == (c.id == "C6.1")  # not reproducible here: hatched
        rows = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]), reverse=True)
        assert [t for _, t in rows] == ["Why normalize", "RMSNorm", "A real Transformer", "DeepNorm"]  # reading order, top down
        assert ax.get_xlabel()
        legend = fig.legends[0]
        assert [t.get_text() for t in legend.get_texts()][:5] == [
            "CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED", "the book's own question"]
        assert "hatched" in legend.get_texts()[-1].get_text()
    finally:
        plt.close(fig)


def test_landing_figure_colours_are_the_registrys_verdicts():
    """On claims.toml: read every tile's colour back from the figure; it is its verdict's colour,
    an extension's is the grey no verdict uses, and every not-reproducible claim is hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    claims, _ = registry()
    fig = ledger.verdict_figure(claims.values(), ledger.toc_chapters())
    try:
        colours = _tile_colours(fig)
        assert set(colours) == set(claims)
        colour_of = {v.lower(): k for k, v in ledger.LABEL_COLORS.items()}
        for c in claims.values():
            assert colour_of[colours[c.id]] == ("extension" if c.is_extension else c.verdict), c.id
        hatched = {p.get_gid() for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_hatch()}
        assert hatched == {c.id for c in claims.values() if c.method == "not-reproducible-here"}
    finally:
        plt.close(fig)


def test_verdict_figure_refuses_an_unknown_chapter():
    with pytest.raises(ValueError, match="rmsnorm"):
        ledger.verdict_figure(SAMPLE, {"why-normalize": "Why normalize"})


def test_toc_chapters_reads_the_book_in_order_without_the_appendix():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    expected = [Path(e["file"]).name for p in toc["parts"] if p["caption"] != "Appendix" for e in p["chapters"]]
    chapters = ledger.toc_chapters(ROOT)
    assert list(chapters) == expected
    assert chapters["why-normalize"] == "Why normalize"
    assert "ledger" not in chapters and "intro" not in chapters
    claims, _ = registry()
    assert {c.chapter for c in claims.values()} <= set(chapters)


def test_the_packaged_chapters_copy_is_the_table_of_contents():
    """normlib/chapters.toml (what a downloaded notebook reads) equals _toc.yml's chapters and titles."""
    assert ledger.toc_chapters() == ledger.toc_chapters(ROOT), "run `make ledger` to rewrite normlib/chapters.toml"
    text = (ROOT / "normlib" / ledger.CHAPTERS_FILE).read_text(encoding="utf-8")
    assert text == ledger.chapters_file_text(ledger.toc_chapters(ROOT))


def test_the_packaged_chapters_copy_round_trips_and_keeps_the_order(tmp_path, monkeypatch):
    chapters = {"b-second": "Zweite: \"quoted\" 标题", "a-first": "First"}
    f = tmp_path / ledger.CHAPTERS_FILE
    f.write_text(ledger.chapters_file_text(chapters), encoding="utf-8")
    monkeypatch.setattr(ledger, "__file__", str(tmp_path / "ledger.py"))
    got = ledger.toc_chapters()
    assert got == chapters and list(got) == list(chapters)
    f.write_text("[[chapter]]\nstem = \"x\"\n", encoding="utf-8")
    with pytest.raises(ValueError, match="stem and a title"):
        ledger.toc_chapters()


def test_toc_chapters_refuses_a_chapter_without_a_heading(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_toc.yml").write_text("root: book/intro\nparts:\n  - caption: A\n    chapters:\n      - file: book/x\n")
    (tmp_path / "book" / "x.md").write_text("no heading here\n")
    with pytest.raises(ValueError, match="x.md"):
        ledger.toc_chapters(tmp_path)


# ----------------------------------------------------------------------------- the pages


STATUS_WORDS = re.compile(r"still being written|not written yet|not checked yet|work in progress|placeholder", re.I)


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT / "book").as_posix() for p in (ROOT / "book").rglob("*.md")))
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


# ----------------------------------------------------------------------------- the ledger page


def test_ledger_page_rows_are_todays_registry():
    """book/ledger.md holds exactly what normlib.ledger writes for claims.toml (run `make ledger`)."""
    page = (ROOT / "book" / "ledger.md").read_text(encoding="utf-8")
    assert ledger.rewrite_ledger_page(ROOT, write=False) == page, "book/ledger.md is stale: run make ledger"


def test_landing_table_is_todays_registry_and_glues_its_counts():
    page = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert ledger.rewrite_intro_table(ROOT, write=False) == page, "book/intro.md's table is stale: run make ledger"
    claims, _ = registry()
    for lab, _cs in ledger.label_groups(claims.values()):
        assert f"{{glue:text}}`{ledger.intro_count_key(lab)}:d`" in page
    assert "intro_n_extensions" in page and "glue_value(ledger.intro_count_key(word), n)" in page


def test_ledger_rows_one_folded_line_per_claim_with_its_words_and_verdict():
    claims, checks = registry()
    md = ledger.ledger_rows(claims.values(), checks)
    titles = re.findall(r"^:::\{admonition\} (.*)$", md, re.M)
    assert len(titles) == len(claims)
    for c, title in zip(claims.values(), titles):
        parts = title.split(" · ", 3)
        assert parts[0] == c.id
        if c.is_extension:
            assert parts[1] == "a question the book adds" and parts[2] == "*extension*"
        else:
            assert parts[1] == f"{{article}}`{c.id}`" and parts[2] == f"**{c.verdict}**"
        assert "\n" not in title and parts[3]
    assert md.count("(ledger-c") == len(claims)
    # the rows mark a verdict the book decided apart from one a source decided
    assert "ledger-by-book" in md and "ledger-by-source" in md and "ledger-by-none" in md


def test_ledger_rows_title_is_the_id_the_span_the_verdict_and_the_reason():
    """On synthetic claims (the test above reads today's registry). Mutants: the verdict word
    dropped from the row or replaced by the method; the article's span replaced by the book's
    paraphrase (``statement``); the row's colour class taken from something else than the verdict."""
    rows = [Claim(**{**c.__dict__, "statement": f"the book's words for {c.id}", "reason": f"Reason {c.id}."})
            for c in SAMPLE]
    md = ledger.ledger_rows(rows, {})
    found = re.findall(r"^\(ledger-(c[\d.]+)\)=\n:::\{admonition\} (.*)\n:class: (.*)$", md, re.M)
    assert [f[0] for f in found] == [c.id.lower() for c in rows]
    for c, (_, title, cls) in zip(rows, found):
        parts = title.split(" · ")
        if c.is_extension:
            assert parts == [c.id, "a question the book adds", "*extension*", f"Reason {c.id}."]
        else:
            assert parts == [c.id, f"{{article}}`{c.id}`", f"**{c.verdict}**", f"Reason {c.id}."]
        assert cls.split() == ["dropdown", "ledger-row", f"ledger-v-{ledger.claim_label(c).lower()}",
                               f"ledger-m-{c.method}", f"ledger-ch-{c.chapter}", f"ledger-by-{c.verdict_by or 'none'}"]
        body = md.split(f"(ledger-{c.id.lower()})=", 1)[1].split(":::\n", 1)[0]
        assert f"**The claim, in the book's words:** the book's words for {c.id}" in body
        if not c.is_extension:
            assert f"**Decided by:** {ledger.BY_TEXT[c.verdict_by]}; **how the book knows:** {c.method} " in body


def test_ledger_row_numbers_are_the_headline_checks_glued_from_their_page():
    c = _claim("C1.1", label="why-depth")
    from normlib.claims import Check

    c = Claim(**{**c.__dict__, "headline": ("C1.1a",)})
    checks = {"C1.1a": Check(id="C1.1a", claim="C1.1", what="w", short="gain", lo=0.0, chapter="evidence/why-normalize")}
    md = ledger.ledger_rows([c], checks)
    assert "gain: **{glue:text}`evidence/why-normalize.md::C1.1a__shown:s`**" in md
    assert "{ref}`the lecture <why-depth>`" in md



def test_a_machine_dependent_headline_number_is_labelled_so():
    """Mutant: the tag dropped, a kernel-dependent number shown as what a verdict rests on."""
    from normlib.claims import Check

    c = Claim(**{**_claim("C1.1", label="why-depth").__dict__, "headline": ("C1.1a", "C1.1b")})
    checks = {"C1.1a": Check(id="C1.1a", claim="C1.1", what="w", short="gain", lo=0.0, machine_dependent=True),
              "C1.1b": Check(id="C1.1b", claim="C1.1", what="w", short="ratio", lo=0.0)}
    md = ledger.ledger_rows([c], checks)
    assert f"gain: **{{glue:text}}`why-normalize.md::C1.1a__shown:s`** ({ledger.MACHINE_DEPENDENT_TAG})" in md
    assert "ratio: **{glue:text}`why-normalize.md::C1.1b__shown:s`**." in md
    assert md.count(f"({ledger.MACHINE_DEPENDENT_TAG})") == 1


def _verify_calls_marked_machine_dependent(text: str) -> set[str]:
    """The check IDs a chapter verifies with ``machine_dependent=True`` (a literal ID, the whole call read)."""
    out = set()
    for m in re.finditer(r'verify\(\s*"([^"]+)"', text):
        i, depth = m.end(), 1
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if re.search(r"machine_dependent\s*=\s*True", text[m.start():i]):
            out.add(m.group(1))
    return out


def test_the_registry_marks_exactly_the_checks_the_chapters_verify_as_machine_dependent():
    """The ledger's label comes from the registry; the chapters' verify calls are the truth."""
    root = Path(__file__).resolve().parent.parent
    in_chapters = set().union(*(_verify_calls_marked_machine_dependent(f.read_text(encoding="utf-8"))
                                for f in (root / "book").rglob("*.md")))
    _, checks = registry()
    in_registry = {k for k, c in checks.items() if c.machine_dependent}
    assert in_chapters, "no chapter verifies a machine-dependent check: the scan is broken"
    assert in_chapters == in_registry, (sorted(in_chapters - in_registry), sorted(in_registry - in_chapters))


def test_the_scan_reads_a_call_across_lines():
    text = 'x = verify("C1.1a", f(a,\n  b), machine_dependent=True)\ny = verify("C1.1b", g(c))\n'
    assert _verify_calls_marked_machine_dependent(text) == {"C1.1a"}


# a headline number must be the quantity its label names: no z-score, standard-error ratio or
# residual between two computations stands as the number a verdict rests on
_NOT_A_QUANTITY = re.compile(r"\|z\||\bz-score|\bin SE\b|/ ?(SE|standard error)\b|worst \|", re.I)


def test_headline_labels_name_the_number_they_show():
    claims, checks = registry()
    problems = []
    for c in claims.values():
        for h in c.headline:
            k = checks[h]
            if _NOT_A_QUANTITY.search(k.label) or _NOT_A_QUANTITY.search(k.what) or k.what.lstrip().startswith("|"):
                problems.append(f"{h}: a z-score or a residual as a headline ({k.label!r})")
            for word in ("slope", "exponent", "ratio", "factor", "growth", "fall"):
                if word in k.label.lower() and word not in k.what.lower():
                    problems.append(f"{h}: the label says {word!r}, the measured quantity ({k.what[:50]!r}) does not")
            for num in re.findall(r"\b\d[\d,]*\s*(?:layers|blocks|seeds|steps)\b", k.label):
                if num not in k.what:
                    problems.append(f"{h}: the label names {num!r}, which the check does not measure")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("label", "what", "bad"), [
    ("Pre-LN depth slope", "|real − model| log-log slope / SE", True),
    ("Post-LN growth, 24 layers", "Post-LN, 6 layers: growth", True),
    ("Post-LN growth, 6 layers", "Post-LN, 6 layers: growth of the gradient", False),
    ("spread vs theory, worst |z|", "largest |z|", True),
    ("depth slope", "fitted fall of the gradient", True),
])
def test_headline_label_rule_catches_the_two_mislabels(label, what, bad, monkeypatch):
    """Control for the test above, on the two labels a reader found wrong (C6.2, C6.1)."""
    from normlib import claims as claims_mod
    from normlib.claims import Check

    real = claims_mod.registry
    c = Claim(**{**_claim("C1.1").__dict__, "headline": ("C1.1a",)})
    monkeypatch.setattr(claims_mod, "registry", lambda: ({"C1.1": c}, {"C1.1a": Check(id="C1.1a", claim="C1.1", what=what, short=label, lo=0.0)}))
    monkeypatch.setitem(globals(), "registry", claims_mod.registry)
    try:
        if bad:
            with pytest.raises(AssertionError):
                test_headline_labels_name_the_number_they_show()
        else:
            test_headline_labels_name_the_number_they_show()
    finally:
        monkeypatch.setattr(claims_mod, "registry", real)


def test_glued_text_is_not_bold():
    """MyST-NB shows pasted text in bold; the book's CSS resets it, so bold marks only what an author chose."""
    css = re.sub(r"/\*.*?\*/", "", CSS.read_text(encoding="utf-8"), flags=re.S)
    assert "span.pasted-text { font-weight: inherit; }" in css
