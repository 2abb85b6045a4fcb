"""Checks of the built HTML book, in files and in a real headless browser.

These tests read ``_build/html`` and are marked ``rendered``: ``make test`` leaves them
out (it runs before any build), and ``.ci/run`` runs them after ``make book`` with
Debian's Chromium installed: ``pytest -m rendered tests/test_rendered_book.py``.
Every page must load with no network, typeset every formula, decode every image and log
no console error; no page and no download may show stderr output, a Python warning or a
path of the build machine; chapter pages must offer their executed notebook, which reads
in Jupyter as the page does (figures as ``image/png``, glued numbers in the markdown);
exercises must come with their solutions. The browser is Debian's Chromium driven by
Playwright (``_ext/browser.py``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
from browser import chromium, find_chromium, open_page  # noqa: E402  (_ext/browser.py)

HTML = ROOT / "_build" / "html"
BOOK = ROOT / "book"

pytestmark = [
    pytest.mark.rendered,
    pytest.mark.skipif(not (HTML / "book" / "rmsnorm.html").is_file(), reason="no built book (run `make book` first)"),
]
needs_browser = pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed (CI installs it)")


def _toc_pages() -> list[str]:
    """Every page of the table of contents, in reading order (e.g. "book/rmsnorm")."""
    return re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _is_notebook(page: str) -> bool:
    head = (ROOT / f"{page}.md").read_text(encoding="utf-8")[:2000]
    return "kernelspec:" in head


def _source(page: str) -> str:
    return (ROOT / f"{page}.md").read_text(encoding="utf-8")


PAGES = _toc_pages()


def test_no_page_loads_scripts_or_styles_from_the_network():
    """Every script and stylesheet is served from the built site (the book reads offline)."""
    bad = []
    for page in PAGES + ["index"]:
        text = (HTML / f"{page}.html").read_text(encoding="utf-8")
        for m in re.finditer(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]+"', text):
            tag = m.group(0)
            if "<link" in tag and 'rel="stylesheet"' not in tag and "preload" not in tag:
                continue
            bad.append(f"{page}: {tag}")
    assert not bad, "external resources:\n" + "\n".join(bad)


def test_mathjax_is_local_and_only_what_the_pages_load():
    """MathJax is loaded from _static (copied from the PyPI package sphinx-mathjax-offline), never from a CDN.

    Only the component the pages load, its fonts and its TeX extensions are copied
    (the browser test below fails on any file a page asks for and does not find).
    """
    text = (HTML / "book" / "rmsnorm.html").read_text(encoding="utf-8")
    assert re.search(r'<script[^>]+src="\.\./_static/mathjax/tex-chtml\.js', text)
    mathjax = HTML / "_static" / "mathjax"
    assert (mathjax / "tex-chtml.js").is_file()
    size = sum(f.stat().st_size for f in mathjax.rglob("*") if f.is_file())
    assert size < 4e6, f"MathJax takes {size / 1e6:.1f} MB of the site; the pages need about 2 MB"


def test_rmsnorm_chapter_shows_the_article_numbers_from_execution():
    """The glued demo numbers appear as pasted text (acceptance criterion of the book)."""
    text = (HTML / "book" / "rmsnorm.html").read_text(encoding="utf-8")
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', text)
    for number in ("0.0189", "3.7342", "1.58e-05"):
        assert number in pasted, f"{number} is not pasted from execution in rmsnorm.html"


@pytest.mark.parametrize("page", [p for p in PAGES if _is_notebook(p)])
def test_every_chapter_offers_its_executed_notebook(page):
    """The download menu links the executed .ipynb, which exists and carries outputs."""
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    m = re.search(r'<a href="([^"]+\.ipynb)"[^>]*download-notebook-button', text)
    assert m, f"{page}.html has no .ipynb download button"
    target = (HTML / page).parent / m.group(1)
    assert target.resolve().is_file(), f"{m.group(1)} does not exist in the built site"
    nb = json.loads(target.read_text(encoding="utf-8"))
    n_out = sum(len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code")
    # a chapter whose every output is glued has them substituted into its markdown instead
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    glued_in = "{glue" in _source(page) and "{glue" not in markdown
    assert n_out > 0 or glued_in, f"{target.name} has no outputs: it would open unexecuted"
    assert re.search(r'<a href="[^"]+\.md"[^>]*download-source-button', text), f"{page}.html has no .md download"


@pytest.mark.parametrize("page", [p for p in PAGES if "{exercise}" in _source(p)])
def test_exercises_come_with_their_solutions(page):
    """Each exercise renders as an exercise box, with a folded solution after it."""
    n_src = len(re.findall(r"^```\{exercise\}", _source(page), flags=re.M))
    n_sol = len(re.findall(r"^```\{solution-start\}", _source(page), flags=re.M))
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    assert n_sol == n_src, f"{page}: {n_src} exercises but {n_sol} solutions"
    assert len(re.findall(r'class="[^"]*\bexercise\b[^"]*admonition', text)) == n_src
    assert len(re.findall(r'class="[^"]*\bsolution\b[^"]*\bdropdown\b', text)) == n_src


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


# prose with TeX left in it: a formula MyST did not recognize, or MathJax did not typeset
_RAW_TEX = re.compile(r"\$\$|\\(?:frac|sqrt|mathrm|mathbb|left|right|begin|end|sum|hat|odot|epsilon|sigma|lVert|rVert)\b")

_PAGE_REPORT = """(() => {
  const maths = [...document.querySelectorAll('.math')];
  const untyped = maths.filter(m => !m.querySelector('mjx-container')).length;
  const merror = document.querySelectorAll('mjx-merror').length;
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const article = document.querySelector('article') || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, .math, .cell_input').forEach(e => e.remove());
  const stderr = [...document.querySelectorAll('.output.stderr, .stderr')].map(e => e.textContent.slice(0, 200));
  return {n_math: maths.length, untyped, merror, images, prose: copy.textContent, stderr,
          text: article.textContent};
})()"""

# a Python warning as the warnings module prints it ("…/auto.py:21: TqdmWarning: IProgress not found")
_WARNING = re.compile(r"\b[A-Z]\w*Warning: |\bwarnings\.warn\(")


def _build_paths() -> list[str]:
    """Absolute paths of this machine that a page or a download must never show."""
    paths = {str(ROOT), str(ROOT.resolve()), sys.prefix, str(Path(sys.prefix).resolve()), sys.base_prefix}
    home = Path.home()
    if str(home) not in ("/", ""):
        paths.add(str(home) + "/")
    return sorted(p for p in paths if len(p) > 1)


# an absolute path into an installed environment, on any machine ("/…/lib/python3.11/site-packages/")
_SITE_PACKAGES = re.compile(r"(?:/[\w.+-]+)+/site-packages/")


def _leaks(text: str) -> list[str]:
    """Build-machine paths and Python warnings in ``text``."""
    found = [p for p in _build_paths() if p in text]
    found += sorted(set(m.group(0) for m in _SITE_PACKAGES.finditer(text)))
    found += sorted(set(m.group(0) for m in _WARNING.finditer(text)))
    return found


@pytest.mark.parametrize("page", PAGES + ["index"])
def test_no_page_shows_stderr_warnings_or_build_paths(page):
    """No stderr output cell, no Python warning, no path of the build machine in a page's HTML."""
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    stderr = re.findall(r'class="[^"]*\boutput stderr\b', text)
    assert not stderr, f"{page}: {len(stderr)} stderr output cells"
    leaks = _leaks(text)
    assert not leaks, f"{page}: shows {leaks}"


def _download(page: str) -> dict:
    return json.loads((HTML / "_sources" / f"{page}.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", [p for p in PAGES if _is_notebook(p)])
def test_no_download_shows_stderr_warnings_or_build_paths(page):
    """The executed .ipynb carries no stderr stream, no warning and no build-machine path."""
    nb = _download(page)
    stderr = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert not stderr, f"{page}.ipynb: stderr output: {[''.join(o['text'])[:200] for o in stderr]}"
    leaks = _leaks(json.dumps(nb, ensure_ascii=False).replace("\\/", "/"))
    assert not leaks, f"{page}.ipynb shows {leaks}"


@pytest.mark.parametrize("page", [p for p in PAGES if _is_notebook(p)])
def test_download_reads_in_jupyter_as_the_page_does(page):
    """Figures are plain image/png, every glued number is in the markdown, no MyST syntax is left."""
    import nbformat

    nb = _download(page)
    nbformat.validate(nbformat.from_dict(nb))
    source = _source(page)
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "normlib-" in "".join(nb["cells"][0]["source"]) and "pip install" in "".join(nb["cells"][0]["source"])
    left = re.findall(r"\{glue[:\w]*\}`[^`]*`|^(?:`{3,}|:{3,})\{[\w:-]+\}.*$|^\([\w.:-]+\)=$", markdown, flags=re.M)
    assert not left, f"{page}.ipynb: MyST syntax Jupyter does not render: {left[:5]}"
    n_figures = len(re.findall(r"^(?:`{3,}|:{3,})\{glue:figure\}", source, flags=re.M))
    pngs = [a for c in nb["cells"] for a in c.get("attachments", {}).values() if "image/png" in a]
    assert len(pngs) == n_figures, f"{page}.ipynb: {len(pngs)} figures as image/png, the page has {n_figures}"
    unrendered = [k for c in nb["cells"] for o in c.get("outputs", []) for k in o.get("data", {}) if "papermill.record" in k]
    assert not unrendered, f"{page}.ipynb: outputs Jupyter cannot render: {sorted(set(unrendered))}"


def test_rmsnorm_download_has_the_glued_numbers_in_its_markdown():
    """The article's numbers, pasted from execution on the page, are in the download's text too."""
    nb = _download("book/rmsnorm")
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for number in ("0.0189", "3.7342", "1.58e-05"):
        assert number in markdown, f"{number} is not in rmsnorm.ipynb's markdown"


def test_the_site_carries_the_normlib_wheel_and_its_requirements():
    """The download page's links resolve; the wheel ships the claims registry."""
    import zipfile

    text = (HTML / "book" / "download.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(\.\./downloads/[^"]+)"', text)
    assert any(l.endswith(".whl") for l in links) and any(l.endswith(".txt") for l in links), links
    for link in links:
        assert (HTML / "book" / link).resolve().is_file(), f"download.html links {link}, which is not on the site"
    wheel = next((HTML / "book" / l).resolve() for l in links if l.endswith(".whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "normlib/claims.toml" in names and "normlib/norms.py" in names
    reqs = (HTML / "downloads" / "requirements-chapter.txt").read_text(encoding="utf-8")
    assert re.search(r"^torch==2\.13\.0$", reqs, flags=re.M), "the chapter requirements pin torch 2.13.0"


def test_api_reference_documents_normlib():
    """The appendix page generated by autodoc has normlib's functions, and search knows them."""
    text = (HTML / "book" / "api.html").read_text(encoding="utf-8")
    for name in ("normlib.norms.layer_norm_vjp", "normlib.transformer.train_grids", "normlib.claims.check"):
        assert f'id="{name}"' in text, f"api.html does not document {name}"
    assert re.search(r"are not\s+returned", text) and re.search(r"is not\s+returned", text)  # what the VJPs leave out
    index = (HTML / "searchindex.js").read_text(encoding="utf-8")
    assert "layer_norm_vjp" in index


@needs_browser
@pytest.mark.parametrize("page", PAGES + ["index"] + [f"zh/{p}" for p in PAGES])
def test_page_renders_in_a_real_browser(browser, page):
    """Headless Chromium, offline: every formula typeset, every image decoded, no console error, no stderr."""
    with open_page(browser, (HTML / f"{page}.html").as_uri()) as (tab, log):
        r = tab.evaluate(_PAGE_REPORT)
        assert r["untyped"] == 0 and r["merror"] == 0, f"{page}: {r['untyped']} of {r['n_math']} formulas not typeset, {r['merror']} MathJax errors"
        assert not r["images"], f"{page}: images that did not decode: {r['images']}"
        raw = sorted(set(_RAW_TEX.findall(r["prose"])))
        assert not raw, f"{page}: raw TeX in the prose: {raw}"
        assert not r["stderr"], f"{page}: stderr output shown: {r['stderr']}"
        leaks = _leaks(r["text"])
        assert not leaks, f"{page}: the page shows {leaks}"
        assert not log.errors, f"{page}: console errors: {log.errors}"


def _search(browser, search_page: Path, query: str, page: str) -> None:
    """Search ``query`` on ``search_page``; a hit must link to ``page``, with no console error."""
    with open_page(browser, search_page.as_uri() + f"?q={query}") as (tab, log):
        links = "[...document.querySelectorAll('#search-results li a')]"
        try:
            tab.wait_for_function(f"{links}.some(a => a.getAttribute('href').includes('{page}'))", timeout=30_000)
        except Exception:
            pass  # the assertion below says what was found
        hits = tab.evaluate(f"{links}.map(a => a.getAttribute('href'))")
        assert any(page in h for h in hits), f"search for {query} found {hits}"
        assert not log.errors, f"search page: console errors: {log.errors}"


@needs_browser
def test_search_works_offline(browser):
    """The built-in search finds a chapter from the local index, with no network."""
    _search(browser, HTML / "search.html", "RMSNorm", "rmsnorm")


@needs_browser
def test_chinese_search_finds_a_chinese_word(browser):
    """The Chinese edition's index is segmented (jieba): 雅可比矩阵 finds the Jacobian chapter."""
    _search(browser, HTML / "zh" / "search.html", "雅可比矩阵", "jacobian")
