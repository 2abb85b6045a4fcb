"""The ``{gmath}`` role (``_ext/glued_math.py``): glued values typeset as inline math.

Unit tests of the template, the formatting and the TeX of a value; the role in a
notebook download (``_ext/notebook_downloads.py``), in the catalog check and in the prose
lint; and one small book built three ways (English HTML, single-page HTML as ``make pdf``
prints it, and the Chinese edition through ``_ext/i18n.py`` with a translated paragraph).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, folder: str = "_ext"):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


gm = _load("glued_math")

GLUE = {"width": "128", "eps": "1e-05", "frac": "0.123456", "big": "8192", "ratio": "0.25",
        "word": "'above'", "inf": "inf"}


def _lookup(doc: str, key: str) -> str:
    if doc:
        return {"steps": "2000"}[key]
    return GLUE[key]


@pytest.mark.parametrize("content, tex", [
    ("d = {{width:d}}", "d = 128"),
    ("width:d", "128"),  # a bare reference: the value alone
    (r"\epsilon = {{eps:.0e}}", r"\epsilon = 10^{-5}"),
    (r"\epsilon = {{eps:.1e}}", r"\epsilon = 1.0 \times 10^{-5}"),
    ("d = {{big:,d}}", "d = 8{,}192"),
    ("p = {{ratio:.0%}}", r"p = 25\%"),
    ("x = {{frac:.3f}}", "x = 0.123"),
    (r"d \in \{ {{width:d}}, {{big:d}} \}", r"d \in \{ 128, 8192 \}"),
    (r"\tfrac12 {{width:d}}^{-1/2}", r"\tfrac12 128^{-1/2}"),  # TeX braces are not placeholders
    ("T = {{other.md::steps:,d}}", "T = 2{,}000"),  # another chapter's value
    ("{{word}}", r"\text{above}"),
    ("{{inf:f}}", r"\infty"),
])
def test_render(content, tex):
    assert gm.render(content, _lookup) == tex


def test_references_and_a_missing_key():
    assert gm.refs("a = {{x:.2f}}, b = {{doc.md::y}}") == [("", "x", ".2f"), ("doc.md", "y", "s")]
    with pytest.raises(KeyError):
        gm.render("d = {{nope:d}}", _lookup)


def test_latex_value():
    assert gm.latex_value("-3.5e+03") == r"-3.5 \times 10^{3}"
    assert gm.latex_value("a_b & 50%") == r"\text{a\_b \& 50\%}"
    assert gm.latex_value("nan") == r"\mathrm{NaN}"


def test_the_download_writes_the_formula_with_its_values(tmp_path):
    nd = _load("notebook_downloads")
    glue = {"width": {"text/plain": "128"}, "eps": {"text/plain": "1e-05"}}
    md = r"At {gmath}`d = {{width:d}}` and {gmath}`\epsilon = {{eps:.0e}}`; {gmath}`width:d`."
    assert nd.to_markdown(md, glue, {}, {}) == r"At $d = 128$ and $\epsilon = 10^{-5}$; $128$."


def test_a_translation_keeps_the_role_whole():
    cc = _load("check_catalogs", "tests")
    msgid = r"The width is {gmath}`d = {{width:d}}` and {gmath}`a < b, {{n:d}} > c`."
    assert cc.check_message(msgid, r"宽度为 {gmath}`d = {{width:d}}`，且 {gmath}`a < b, {{n:d}} > c`。") == []
    for bad in (r"宽度为 {gmath}`d = 128`，且 {gmath}`a < b, {{n:d}} > c`。",
                r"宽度为 {gmath}`d = {{width:d}}`，且 {gmath}`a < x, {{n:d}} > c`。"):
        assert any("role missing or altered" in p for p in cc.check_message(msgid, bad))


def test_the_prose_lint_reads_the_role(tmp_path):
    pn = _load("prose_numbers", "tests")
    path = tmp_path / "demo.md"
    path.write_text("---\njupytext: {}\n---\nGlued {gmath}`d = {{width:d}}`, typed {gmath}`L = 64`, "
                    r"a list {gmath}`d \in \{64, {{width:d}}\}`." + "\n", encoding="utf-8")
    assert [(t.number, t.math) for t in pn.math_settings(path)] == [
        ("64", "{gmath}`L = 64`"), ("64", r"{gmath}`d \in \{64, {{width:d}}\}`")]
    assert pn.typed_numbers(path) == []


# ----------------------------------------------------------------------------- three builds

PREFIX = "application/papermill.record/"


def _notebook(title: str, prose: str, glued: dict) -> str:
    """An executed notebook (as MyST-NB would store it): one code cell whose outputs glue
    ``glued`` (no kernel runs in the builds), then the prose."""
    import nbformat

    code = nbformat.v4.new_code_cell("glue(...)")
    code.outputs = [nbformat.v4.new_output("display_data", data={PREFIX + "text/plain": repr(v)},
                                           metadata={"scrapbook": {"name": k, "mime_prefix": PREFIX}})
                    for k, v in glued.items()]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {title}"), code,
                                         nbformat.v4.new_markdown_cell(prose)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


CHAPTER = _notebook("Chapter", "The width is {gmath}`d = {{width:d}}`, the offset {gmath}`\\epsilon = {{eps:.0e}}` "
                    "and the steps {gmath}`T = {{other.ipynb::steps:,d}}`.", {"width": 128, "eps": 1e-5})
OTHER = _notebook("Other", "Steps: {gmath}`steps:,d`.", {"steps": 2000})

MSGID = ("The width is {gmath}`d = {{width:d}}`, the offset {gmath}`\\\\epsilon = {{eps:.0e}}` "
         "and the steps {gmath}`T = {{other.ipynb::steps:,d}}`.")
MSGSTR = ("宽度为 {gmath}`d = {{width:d}}`，偏移为 {gmath}`\\\\epsilon = {{eps:.0e}}`，"
          "步数为 {gmath}`T = {{other.ipynb::steps:,d}}`。")

CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "_ext")!r})
extensions = ["myst_nb", "glued_math", "i18n", "singlehtml_support"]
myst_enable_extensions = ["dollarmath"]
nb_execution_mode = "off"  # the notebooks carry their outputs
html_theme = "sphinx_book_theme"  # as the book (i18n.py sets its search box text)
exclude_patterns = ["_build", "locales"]
locale_dirs = ["locales"]
gettext_compact = False
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    src = tmp_path_factory.mktemp("gmath")
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.md").write_text("# Home\n\n```{toctree}\nchapter\nother\n```\n", encoding="utf-8")
    (src / "chapter.ipynb").write_text(CHAPTER, encoding="utf-8")
    (src / "other.ipynb").write_text(OTHER, encoding="utf-8")
    po = src / "locales" / "zh_CN" / "LC_MESSAGES" / "chapter.po"
    po.parent.mkdir(parents=True)
    po.write_text(textwrap.dedent(f'''\
        msgid ""
        msgstr ""
        "Content-Type: text/plain; charset=UTF-8\\n"

        msgid "Chapter"
        msgstr "章节"

        msgid "{MSGID}"
        msgstr "{MSGSTR}"
        '''), encoding="utf-8")
    return src


def _sphinx(src: Path, builder: str, out: str, *extra: str) -> Path:
    """Build into ``_build/<out>/site`` (MyST-NB's glue files go next to it: each build has its own)."""
    outdir = src / "_build" / out / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", builder, "-W", "--keep-going", "-q",
         "-d", str(src / "_build" / out / ".doctrees"), *extra, str(src), str(outdir)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return outdir


MATH = [r"\(d = 128\)", r"\(\epsilon = 10^{-5}\)", r"\(T = 2{,}000\)"]


@pytest.mark.slow
def test_the_role_in_the_english_single_page_and_chinese_builds(tiny):
    from concurrent.futures import ThreadPoolExecutor

    builds = [("html", "html"), ("singlehtml", "single"), ("html", "zh", "-D", "language=zh_CN")]
    with ThreadPoolExecutor(len(builds)) as pool:  # three processes at once: most of the time is startup
        en, single, zh = pool.map(lambda b: _sphinx(tiny, *b), builds)

    html = (en / "chapter.html").read_text(encoding="utf-8")
    assert all(m in html for m in MATH), html[html.find("The width"):][:600]
    assert r"\(2{,}000\)" in (en / "other.html").read_text(encoding="utf-8")
    assert "gmath" not in html.split("<body")[1] and "{{" not in html.split("<body")[1]
    assert "mathjax" in html.lower()  # the page loads MathJax

    single = (single / "index.html").read_text(encoding="utf-8")
    assert all(m in single for m in MATH)

    zh = (zh / "chapter.html").read_text(encoding="utf-8")
    assert "宽度为" in zh and "The width" not in zh
    assert all(m in zh for m in MATH), zh[zh.find("宽度为"):][:600]
    assert "mathjax" in zh.lower()
