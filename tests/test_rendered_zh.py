"""Checks of the built Chinese edition (``make book`` builds it into ``_build/html/zh``).

Run with ``pytest -m rendered`` (``.ci/run`` does). Every page of the table of contents:
its glued values are the English page's (the numbers as they are, the glued wording as
``_phrases.po`` translates it), the two editions link to each other, the title, the UI and
the part captions are Chinese, no English paragraph is left outside code, math, cell
outputs, API docstrings and the bibliography, and the landing page states the findings.
The browser checks (formulas, images, console) and the Chinese search are in
``tests/test_rendered_book.py``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
ZH = HTML / "zh"
PAGES = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
CJK = re.compile(r"[\u3400-\u9fff]")
# a run of English words: what an untranslated sentence leaves behind
_ENGLISH_RUN = re.compile(r"(?:\b[A-Za-z][a-z'’]+\b[,;:]?\s+){5,}[A-Za-z][a-z'’]+")

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not (ZH / "book" / "intro.html").is_file(), reason="the Chinese edition is not built (make book)"),
]


def _soup(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _phrases():
    spec = importlib.util.spec_from_file_location("glue_phrases", ROOT / "_ext" / "glue_phrases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["glue_phrases"] = module
    spec.loader.exec_module(module)
    from babel.messages.pofile import read_po

    with (ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "_phrases.po").open("rb") as f:
        return module.Phrases.from_catalog({m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy})


def _norm(s: str) -> str:
    # the same string; only the English page's smart quotes differ
    return s.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')


def _machine_dependent_texts(page: str) -> set[str]:
    """The string values ``page`` glued with ``machine_dependent=True`` (its glue data)."""
    import ast
    import json

    glue = ROOT / "_build" / "jupyter_execute" / f"{page}.glue.json"
    out = set()
    for rec in (json.loads(glue.read_text(encoding="utf-8")) if glue.is_file() else {}).values():
        if (rec.get("metadata") or {}).get("normlib", {}).get("machine_dependent"):
            text = rec["data"].get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                out.add(_norm(value))
    return out


def _glued(soup, *, raw: bool = False) -> list[str]:
    texts = [x.get_text() for x in soup.select("article .pasted-text, article .pasted-inline")]
    return texts if raw else [_norm(t) for t in texts]


@pytest.mark.parametrize("page", PAGES)
def test_glued_values_equal_the_english_pages(page):
    """Every number of a Chinese page is the English page's; glued wording is its translation."""
    phrases = _phrases()
    en, zh = _glued(_soup(HTML / f"{page}.html"), raw=True), _glued(_soup(ZH / f"{page}.html"))
    # Chinese word order may move a value within its paragraph: compare as multisets. The
    # wording is translated as glued (a template's quotation marks are curly), then compared
    # with the quotation marks normalized
    expected = Counter(_norm(phrases.translate(e) or phrases.translate(_norm(e)) or e) for e in en)
    shown = Counter(zh)
    assert shown == expected, (f"{page}: glued values missing on the Chinese page {sorted((expected - shown).elements())[:8]}, "
                               f"not on the English page {sorted((shown - expected).elements())[:8]}")


def _pending() -> set[str]:
    """Pages whose translation is in progress (``locales/zh_CN/PENDING``, tests/check_catalogs.py)."""
    f = ROOT / "locales" / "zh_CN" / "PENDING"
    lines = f.read_text(encoding="utf-8").splitlines() if f.is_file() else []
    return {ln.split("#")[0].strip().removesuffix(".po") for ln in lines} - {""}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_in_translation_says_so_and_only_then(page):
    """A page listed in PENDING opens with the translation-in-progress banner; no other page does."""
    banner = _soup(ZH / f"{page}.html").select_one("article .translation-pending")
    if page in _pending():
        assert banner is not None and "译文" in banner.get_text(), f"{page}: pending, but the banner is missing"
    else:
        assert banner is None, f"{page}: the translation-pending banner on a page not listed in PENDING"


@pytest.mark.parametrize("page", PAGES)
def test_no_english_sentence_is_left(page):
    """Prose, headings, captions, table cells and glued wording are Chinese; code, math,
    cell outputs, API docstrings, bibliography entries and the text of external links (a
    quoted issue title) may stay English. A page whose translation is in progress (PENDING)
    says so in its banner instead (the test above)."""
    if page in _pending():
        pytest.skip(f"{page}: translation in progress (locales/zh_CN/PENDING); the page says so")
    soup = _soup(ZH / f"{page}.html")
    article = soup.select_one("article")
    # a wording computed from a timing (glued machine_dependent) can take forms no catalog
    # lists in advance; the book labels those values, so their wording is not checked here
    for el in article.select(".pasted-text"):
        if _norm(el.get_text()) in _machine_dependent_texts(page):
            el.decompose()
    for el in article.select("pre, code, .math, mjx-container, .cell_output, .output, dl.py, .normlib-docstring, "
                             ".citation, .bibliography, div.highlight, script, style, a.reference.external"):
        el.decompose()
    left = []
    for el in article.select("p, li, h1, h2, h3, h4, figcaption, td, th, .admonition-title, .caption-text"):
        text = " ".join(el.get_text(" ").split())
        m = _ENGLISH_RUN.search(text)
        if m and not el.find(["p", "li", "td"]):
            left.append(m.group(0)[:100])
    assert not left, f"{page}: English left on the Chinese page: {left[:8]}"


@pytest.mark.parametrize("page", PAGES)
def test_the_editions_link_to_each_other(page):
    depth = page.count("/")
    en, zh = _soup(HTML / f"{page}.html"), _soup(ZH / f"{page}.html")
    to_zh = en.select_one('link[rel=alternate][hreflang="zh-Hans"]')
    to_en = zh.select_one('link[rel=alternate][hreflang="en"]')
    assert to_zh is not None and to_zh["href"] == "../" * depth + f"zh/{page}.html"
    assert to_en is not None and to_en["href"] == "../" * (depth + 1) + f"{page}.html"
    assert (HTML / f"{page}.html").resolve() == (ZH / page).parent.joinpath(to_en["href"]).resolve()
    assert zh.find("html")["lang"] == "zh-CN"


@pytest.mark.parametrize("page", PAGES)
def test_translated_page_has_chinese_title_and_ui(page):
    zh = _soup(ZH / f"{page}.html")
    assert CJK.search(zh.select_one("article h1").get_text()), f"{page}: the title is not Chinese"
    search = zh.select_one("input[name=q]")
    assert search is not None and "搜索" in search.get("placeholder", "")
    captions = [c.get_text(strip=True) for c in zh.select(".caption-text")]
    assert "附录" in captions and "Appendix" not in captions


def test_figures_alt_text_is_chinese():
    missing = []
    for page in PAGES:
        for img in _soup(ZH / f"{page}.html").select("article img"):
            alt = img.get("alt", "")
            if alt and not CJK.search(alt):
                missing.append(f"{page}: {alt[:60]}")
    assert not missing, "figures whose alt text is not translated: " + "; ".join(missing)


def test_the_chinese_landing_page_states_the_findings():
    """The intro's verdict section is translated and carries the glued counts."""
    soup = _soup(ZH / "book" / "intro.html")
    text = soup.select_one("article").get_text(" ")
    assert "我们的发现" in text
    values = _glued(soup)
    assert len(values) >= 5 and all(v.strip() for v in values)
    assert all(CJK.search(v) for v in values if len(v) > 30), "an English sentence is glued on the Chinese intro"


def test_the_chinese_search_index_holds_chinese_words():
    """Without jieba, Sphinx's Chinese index holds no Chinese words (jieba keeps 雅可比矩阵 whole)."""
    import json

    text = (ZH / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    terms = {"雅可比矩阵", "归一化", "层归一化", "预热", "溢出", "半精度", "收缩税", "残差流", "自助法"}
    assert terms <= set(index["terms"]), sorted(terms - set(index["terms"]))


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("book/evidence/")])
def test_the_check_tables_are_chinese(page):
    """The evidence pages' check tables (generated, so outside Sphinx's translation step) are
    translated by ``_ext/i18n.py``: no English column head is left, and every check's *what*
    (and, in the lectures' tables, *why*) is Chinese."""
    spec = importlib.util.spec_from_file_location("i18n", ROOT / "_ext" / "i18n.py")
    i18n = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(i18n)
    CHECK_TABLE_HEADS, CHECK_RESULT_HEADS = i18n.CHECK_TABLE_HEADS, i18n.CHECK_RESULT_HEADS
    english = {h for h in CHECK_TABLE_HEADS + CHECK_RESULT_HEADS if h}
    soup = _soup(ZH / f"{page}.html")
    tables, left = 0, []
    for table in soup.select("article table"):
        heads = [th.get_text(" ", strip=True) for th in table.select("th")]
        if not heads or heads[0] not in ("check", "检验"):
            continue
        tables += 1
        left += [f"head {h!r}" for h in heads if h in english]
        text_cols = (1, 4) if len(heads) == len(CHECK_TABLE_HEADS) and heads[-1] != "" else (1,)
        for tr in table.select("tr"):
            tds = tr.find_all("td")
            for i in text_cols:
                if len(tds) > i and re.search("[A-Za-z]{3}", tds[i].get_text()) and not CJK.search(tds[i].get_text()):
                    left.append(tds[i].get_text(" ", strip=True)[:60])
    assert tables, f"{page}: no check table found"
    assert not left, f"{page}: English left in the check tables: {left[:6]}"


@pytest.mark.parametrize("page", PAGES)
def test_the_printed_tables_are_chinese(page):
    """No text of a table a cell printed is left in English where ``_tables.po`` has its
    Chinese (``_ext/i18n.py`` translates those tables after the build's translation step)."""
    _phrases()  # loads _ext/glue_phrases.py as the module glue_phrases
    module = sys.modules["glue_phrases"]
    from babel.messages.pofile import read_po

    with (ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "_tables.po").open("rb") as f:
        tables = module.Phrases.from_catalog({m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy})
    texts = module.table_texts((ZH / f"{page}.html").read_text(encoding="utf-8"))
    left = [t for t in texts if tables.translate(t) not in (None, t)]
    assert not left, f"{page}: printed tables' texts left in English: {left[:6]}"


@pytest.mark.parametrize("page", PAGES)
def test_citations_use_chinese_joiners(page):
    """In-text citations read Liu 等人 [2020], not Liu et al. [2020] (``_ext/i18n.py``)."""
    soup = _soup(ZH / f"{page}.html")
    left = [c.get_text(" ", strip=True)[:60] for c in soup.select("article .bibtex-citation")
            if re.search(r"\bet al\b|\band\b", c.get_text(" "))]
    assert not left, f"{page}: English joiners in citations: {left[:5]}"
