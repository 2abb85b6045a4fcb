"""Checks of the built Chinese edition (after `make book-zh`): run with `pytest -m rendered`."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
ZH = HTML / "zh"
#: pages whose catalogs are complete (locales/zh_CN/COMPLETE)
PAGES = ["book/intro", "book/glossary"]

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not (ZH / "book" / "intro.html").is_file(), reason="the Chinese edition is not built (make book-zh)"),
]


def _soup(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _glued(soup) -> list[str]:
    # the same string; only the English page's smart quotes differ
    return [x.get_text().replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
            for x in soup.select("article .pasted-text, article .pasted-inline")]


@pytest.mark.parametrize("page", PAGES)
def test_glued_values_equal_the_english_pages(page):
    en, zh = _soup(HTML / f"{page}.html"), _soup(ZH / f"{page}.html")
    assert _glued(zh) == _glued(en)


def test_the_intro_shows_its_glued_numbers():
    values = _glued(_soup(ZH / "book" / "intro.html"))
    assert len(values) >= 5 and all(v.strip() for v in values)


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
    assert zh.select_one("article h1").get_text().strip()[0] > "\u2e80"  # a CJK character
    search = zh.select_one("input[name=q]")
    assert search is not None and "搜索" in search.get("placeholder", "")
    captions = [c.get_text(strip=True) for c in zh.select(".caption-text")]
    assert "附录" in captions and "Appendix" not in captions
