"""The build and test tooling: pins, guards, the downloads' conversion for Jupyter.

Fast checks (no build, no kernel) of what a contributor or a reader meets first: the
direct dependencies are pinned in one place, the install stamp does not depend on
file dates, an unknown check ID gets a short error with close matches, a failing cell
is reported by its ``.md`` line, the chapters cannot reach a model hub, and a
downloaded notebook reads in Jupyter (glued numbers and figures in the markdown).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ext(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if m:
            out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return out


def test_requirements_txt_is_compiled_from_requirements_in():
    """Every direct dependency has the same exact pin in both files; torch is the 2.13.0 pin."""
    direct, locked = _pins(ROOT / "requirements.in"), _pins(ROOT / "requirements.txt")
    assert direct and set(direct) <= set(locked), f"not in requirements.txt: {sorted(set(direct) - set(locked))}"
    differ = {k: (v, locked[k]) for k, v in direct.items() if locked[k] != v}
    assert not differ, f"requirements.txt disagrees with requirements.in (run `make requirements`): {differ}"
    assert locked["torch"] == "2.13.0"
    assert "make requirements" in (ROOT / "requirements.txt").read_text(encoding="utf-8")[:400]


# import name -> distribution, for every third-party package the code imports directly
DIRECT_IMPORTS = {
    "numpy": "numpy", "torch": "torch", "scipy": "scipy", "matplotlib": "matplotlib",
    "cycler": "cycler", "sklearn": "scikit-learn", "threadpoolctl": "threadpoolctl",
    "transformers": "transformers", "IPython": "ipython", "myst_nb": "myst-nb",
    "jupyter_cache": "jupyter-cache", "jupytext": "jupytext", "nbformat": "nbformat",
    "filelock": "filelock", "yaml": "pyyaml", "sphinx": "sphinx", "pytest": "pytest",
    "hypothesis": "hypothesis", "nbval": "nbval", "playwright": "playwright",
}


def test_every_directly_imported_package_is_a_direct_dependency():
    direct = _pins(ROOT / "requirements.in")
    sources = [p for d in ("normlib", "tests", "_ext", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    sources += list((ROOT / "book").rglob("*.md"))
    imported = set()
    for p in sources:
        imported |= set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", p.read_text(encoding="utf-8"), flags=re.M))
    for module, dist in DIRECT_IMPORTS.items():
        if module in imported:
            assert dist in direct, f"{module} is imported but {dist} is not pinned in requirements.in"
    assert "websocket" not in imported and "mathjax" not in imported


def test_install_stamp_depends_on_contents_not_dates():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^REQ_HASH := .*sha256sum", make, flags=re.M)
    rule = re.search(r"^\$\(STAMP\):(.*)$", make, flags=re.M)
    assert rule and rule.group(1).strip() == "", f"the stamp rule has file prerequisites: {rule.group(1)!r}"


def test_unknown_check_id_names_the_registry_and_close_matches():
    from normlib import claims

    _, checks = claims.registry()
    known = sorted(checks)[0]
    with pytest.raises(KeyError) as info:
        claims.check(known + "zz", 1.0)
    msg = str(info.value)
    assert "claims.toml" in msg and known in msg
    assert len(msg) < 500, "the error lists the whole registry"
    with pytest.raises(KeyError, match="no registered ID is close"):
        claims.check("nothing-like-an-id-at-all", 1.0)


def test_failing_cells_are_located_by_md_line_and_section(tmp_path):
    conftest = sys.modules.get("conftest") or _load_conftest()
    md = tmp_path / "ch.md"
    md.write_text(
        "---\njupytext: {}\nkernelspec: {}\n---\n# Title\n\n```{code-cell} ipython3\nx = 1\n```\n\n"
        "## Second\n\n```{code-cell} ipython3\n# ```not a fence\ny = 2\n```\n",
        encoding="utf-8",
    )
    assert conftest.cell_locations(md) == [(7, "Title"), (13, "Second")]


def test_files_run_longest_first_each_kept_whole_and_in_order():
    """The order in which `make test`'s workers take files: longest first by RUN_SECONDS (an
    unlisted chapter counts DEFAULT_CHAPTER_SECONDS, an unlisted module DEFAULT_TEST_SECONDS),
    a file's items together and in their collection order, equal times in collection order."""
    conftest = sys.modules.get("conftest") or _load_conftest()

    class Item:
        def __init__(self, rel: str, n: int):
            self.path, self.n = ROOT / rel, n

    files = ["tests/test_toc.py", "book/rmsnorm.md", "book/warmup-lr.md", "tests/test_stack.py", "tests/test_tooling.py"]
    items = [Item(f, n) for f in files for n in range(3)]
    seconds = {"book/rmsnorm.md": 5.0, "tests/test_stack.py": 100.0}  # warmup-lr unlisted: a chapter's default
    assert conftest.DEFAULT_TEST_SECONDS < 5.0 < conftest.DEFAULT_CHAPTER_SECONDS < 100.0
    order = [(i.path.relative_to(ROOT).as_posix(), i.n) for i in conftest.longest_files_first(items, seconds)]
    expected = ["tests/test_stack.py", "book/warmup-lr.md", "book/rmsnorm.md", "tests/test_toc.py", "tests/test_tooling.py"]
    assert order == [(f, n) for f in expected for n in range(3)]


def test_run_seconds_names_existing_files_and_make_test_keeps_their_order():
    """Every file of tests/data/run_seconds.toml exists (a renamed chapter would silently fall
    back to the default); `make test` distributes whole files in collection order (without
    --no-loadscope-reorder, pytest-xdist re-sorts them by their number of tests)."""
    conftest = sys.modules.get("conftest") or _load_conftest()
    seconds = conftest.run_seconds()
    assert seconds and all(s > 0 for s in seconds.values())
    assert not [name for name in seconds if not (ROOT / name).is_file()], "run_seconds.toml names missing files"
    rule = re.search(r"^test:.*\n\t(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    assert rule and "--dist loadfile" in rule.group(1) and "--no-loadscope-reorder" in rule.group(1), rule


def _load_conftest():
    spec = importlib.util.spec_from_file_location("i19_conftest", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chapters_import_this_checkouts_normlib_and_cannot_reach_a_hub():
    conftest = _load_conftest()
    assert conftest.kernel_normlib().is_relative_to(ROOT.resolve())
    assert os.environ.get("HF_HUB_OFFLINE") == "1" and os.environ.get("TRANSFORMERS_OFFLINE") == "1"
    assert 'os.environ.setdefault("HF_HUB_OFFLINE", "1")' in _ext("notebook_downloads").OFFLINE_CELL


def test_chapter_requirements_pin_the_extras():
    text = _ext("site_downloads").chapter_requirements(ROOT)
    pins = _pins_from_text(text)
    for name in ("torch", "numpy", "matplotlib", "myst-nb", "jupyterlab", "transformers"):
        assert name in pins, f"requirements-chapter.txt lacks {name}"
    assert pins["torch"] == "2.13.0"
    assert "download.pytorch.org/whl/cpu" in text


def _pins_from_text(text: str) -> dict[str, str]:
    return {re.sub(r"[-_.]+", "-", m.group(1)).lower(): m.group(2) for m in re.finditer(r"^([A-Za-z0-9._-]+)==(\S+)$", text, flags=re.M)}


def test_download_conversion_substitutes_glue_and_plain_markdown(tmp_path):
    """Glued text and figures land in the markdown; glue's storage outputs and MyST syntax go."""
    import base64

    import nbformat

    nd = _ext("notebook_downloads")
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    book = tmp_path / "book"
    book.mkdir()
    (book / "ch.md").write_text("(sec-a)=\n## The section\n\n```{prf:proposition} Name\n:label: prop-a\n\nx\n```\n", encoding="utf-8")
    md = (
        "(sec-a)=\n## The section\n\n:::{admonition} Verdict\n:class: verdict\n"
        "- we find {glue:text}`v:.3f` and {glue:text}`w:s` ({ref}`sec-a`, {prf:ref}`prop-a`, {cite:p}`k1,k2`)\n:::\n\n"
        "```{glue:figure} fig\n:name: fig\n:alt: A line\n\nThe caption {glue:text}`v:.1f`.\n```\n\n"
        "```python\n{glue:text}`v` stays in code\n```\n\n$$\nx\n$$ (eq-x)\n"
    )
    code = nbformat.v4.new_code_cell("glue()")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={nd.GLUE_PREFIX + "text/plain": "0.01894"}, metadata={"scrapbook": {"name": "v", "mime_prefix": nd.GLUE_PREFIX}}),
        nbformat.v4.new_output("display_data", data={nd.GLUE_PREFIX + "text/plain": "'larger'"}, metadata={"scrapbook": {"name": "w", "mime_prefix": nd.GLUE_PREFIX}}),
        nbformat.v4.new_output("display_data", data={nd.GLUE_PREFIX + "image/png": png, nd.GLUE_PREFIX + "text/plain": "<Figure>"}, metadata={"scrapbook": {"name": "fig", "mime_prefix": nd.GLUE_PREFIX}}),
        nbformat.v4.new_output("stream", name="stdout", text="kept\n"),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md), code])
    out = nd.for_jupyter(nb, title="Ch", version="0.1.0", book_dir=book)
    nbformat.validate(out)
    assert "pip install" in out.cells[0].source and "HF_HUB_OFFLINE" in out.cells[1].source
    text, cell = out.cells[2].source, out.cells[2]
    assert "we find 0.019 and larger" in text
    assert "“The section”" in text and "the proposition “Name”" in text and "[k1; k2]" in text
    assert "**Verdict**" in text and ":::" not in text and "(sec-a)=" not in text
    assert "![A line](attachment:fig.png)" in text and "The caption 0.0." in text
    assert cell.attachments["fig.png"]["image/png"] == png
    assert "{glue:text}`v` stays in code" in text and "$$ (eq-x)" not in text
    assert [o.get("text") for o in out.cells[3].outputs] == ["kept\n"]


def test_the_cjk_print_style_draws_only_cjk_with_the_print_font():
    """The style puts the print font first in all three of the theme's stacks, for CJK code points only."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
    from print_pdf import CJK_RANGES, PRINT_CJK_FONT, cjk_print_style

    css = cjk_print_style(PRINT_CJK_FONT)
    assert f'src: local("{PRINT_CJK_FONT}")' in css and f"unicode-range: {CJK_RANGES}" in css
    for v in ("base", "heading", "monospace"):
        assert re.search(rf'--pst-font-family-{v}: "cjk-print", var\(--pst-font-family-(base|monospace)-system\);', css), v
    lo, hi = (int(x, 16) for x in CJK_RANGES.split(",")[0].strip()[2:].split("-"))
    assert lo <= ord("一") <= hi and lo <= ord("。") <= hi and not lo <= ord("z") <= hi
    with pytest.raises(ValueError):
        cjk_print_style('x"; } body { color: red')
