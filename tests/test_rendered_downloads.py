"""Every download a page promises exists, in both editions.

Run after a build (``pytest -m rendered``; the HTML root is ``_build/html``, or
``NORMLIB_HTML``). On every page of the table of contents, English and Chinese:

- every link of the download menu (the executed ``.ipynb``, the source ``.md``) points to
  a file of the site, and every executed page (a jupytext notebook) offers its ``.ipynb``:
  the download page says the menu offers it, and the Chinese edition says the same;
- every link into the site's ``downloads/`` (the wheel, ``requirements-chapter.txt``) and
  every ``_static`` image of the module index and the general index resolves to a file
  (the module index's ``minus.png`` toggler comes from Sphinx's basic theme).

The unit tests at the end check the link reader on small inputs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("NORMLIB_HTML", ROOT / "_build" / "html"))
PAGES = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
EDITIONS = {"en": HTML, "zh": HTML / "zh"}


def _is_notebook(page: str) -> bool:
    return "kernelspec:" in (ROOT / f"{page}.md").read_text(encoding="utf-8")[:2000]


def menu_links(html: str) -> dict[str, str]:
    """The download menu's links: kind ("notebook", "source") -> href."""
    out = {}
    for m in re.finditer(r'<a href="([^"]+)"[^>]*?class="[^"]*btn-download-([\w-]+?)-button', html, flags=re.S):
        out[m.group(2)] = m.group(1)
    return out


def site_links(html: str) -> list[str]:
    """Every href and src of the page into the site's ``downloads/`` or ``_static/`` images."""
    refs = re.findall(r'(?:href|src)="([^"#?]+)"', html)
    return [r for r in refs if "downloads/" in r or re.search(r"_static/[^\"]+\.(?:png|svg|gif|jpg)$", r)]


def missing(page_file: Path, hrefs) -> list[str]:
    """The relative links of ``hrefs`` that name no file next to ``page_file``."""
    bad = []
    for href in hrefs:
        if urlsplit(href).scheme or href.startswith("/"):
            continue
        if not (page_file.parent / unquote(href)).resolve().is_file():
            bad.append(href)
    return bad


def _page(edition: str, page: str) -> Path:
    path = EDITIONS[edition] / f"{page}.html"
    if not path.is_file():
        pytest.skip(f"{path} is not built")
    return path


@pytest.mark.rendered
@pytest.mark.parametrize("edition", sorted(EDITIONS))
@pytest.mark.parametrize("page", PAGES)
def test_every_download_a_page_offers_exists(edition, page):
    path = _page(edition, page)
    html = path.read_text(encoding="utf-8")
    links = menu_links(html)
    if _is_notebook(page):
        assert "notebook" in links, f"{edition}/{page}.html offers no executed .ipynb"
    assert "source" in links, f"{edition}/{page}.html offers no source"
    bad = missing(path, list(links.values()) + site_links(html))
    assert not bad, f"{edition}/{page}.html links files the site does not have: {bad}"


@pytest.mark.rendered
@pytest.mark.parametrize("edition", sorted(EDITIONS))
@pytest.mark.parametrize("index", ["py-modindex", "genindex"])
def test_the_index_pages_images_exist(edition, index):
    path = _page(edition, index)
    html = path.read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    bad = missing(path, images)
    assert not bad, f"{edition}/{index}.html shows images the site does not have: {bad}"


# ---- the reader, on small inputs -----------------------------------------------------------------


MENU = """
<li><a href="../_sources/book/rmsnorm.ipynb" target="_blank"
   class="btn btn-sm btn-download-notebook-button dropdown-item" title="x">
<li><a href="../_sources/book/rmsnorm.md" target="_blank"
   class="btn btn-sm btn-download-source-button dropdown-item" title="y">
<button onclick="window.print()" class="btn btn-sm btn-download-pdf-button dropdown-item"></button>
<a href="../downloads/normlib-0.1.0-py3-none-any.whl">wheel</a> <img src="_static/minus.png">
<a href="https://example.org/downloads/x">elsewhere</a>
"""


def test_the_menu_reader_finds_the_notebook_and_the_source():
    assert menu_links(MENU) == {"notebook": "../_sources/book/rmsnorm.ipynb", "source": "../_sources/book/rmsnorm.md"}
    assert site_links(MENU) == ["../downloads/normlib-0.1.0-py3-none-any.whl", "_static/minus.png",
                                "https://example.org/downloads/x"]


def test_a_missing_file_is_reported_and_an_external_link_is_not(tmp_path):
    page = tmp_path / "book" / "rmsnorm.html"
    page.parent.mkdir()
    (tmp_path / "_sources" / "book").mkdir(parents=True)
    (tmp_path / "_sources" / "book" / "rmsnorm.md").write_text("x")
    hrefs = ["../_sources/book/rmsnorm.md", "../_sources/book/rmsnorm.ipynb", "https://example.org/a"]
    assert missing(page, hrefs) == ["../_sources/book/rmsnorm.ipynb"]


def test_a_chinese_page_finds_the_notebook_its_own_build_wrote(tmp_path):
    """The Chinese edition's MyST-NB writes to _build/jupyter_execute-zh_CN (_ext/i18n.py), not
    beside _build/html/zh: the download menu must look there, then at the English notebook."""
    import sys
    from types import SimpleNamespace as NS

    sys.path.insert(0, str(ROOT / "_ext"))
    import notebook_downloads as nd

    build = tmp_path / "_build"
    for sub in ("jupyter_execute", "jupyter_execute-zh_CN"):
        (build / sub / "book").mkdir(parents=True)
        (build / sub / "book" / "rmsnorm.ipynb").write_text("{}")
    zh = NS(outdir=str(build / "html" / "zh"), env=NS(mystnb_config=NS(output_folder=str(build / "jupyter_execute-zh_CN"))))
    en = NS(outdir=str(build / "html"), env=NS(mystnb_config=NS(output_folder=str(build / "jupyter_execute"))))
    assert nd.executed_notebook(zh, "book/rmsnorm") == build / "jupyter_execute-zh_CN" / "book" / "rmsnorm.ipynb"
    assert nd.executed_notebook(en, "book/rmsnorm") == build / "jupyter_execute" / "book" / "rmsnorm.ipynb"
    (build / "jupyter_execute-zh_CN" / "book" / "rmsnorm.ipynb").unlink()
    assert nd.executed_notebook(zh, "book/rmsnorm") == build / "jupyter_execute" / "book" / "rmsnorm.ipynb"
