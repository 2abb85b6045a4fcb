"""Sphinx extension: every chapter page offers its executed notebook, readable in Jupyter.

sphinx-book-theme's download menu offers the page's source (the jupytext ``.md``) and
"print to PDF"; it adds the executed ``.ipynb`` only when a launch service (Binder,
Colab, ...) is configured, which an offline book has not. MyST-NB writes each executed
chapter to ``_build/jupyter_execute/<page>.ipynb``, but with outputs only when it
executed the chapter in this build: a chapter served from the execution cache is
written without them. This extension merges the cached outputs in, makes the notebook
read in JupyterLab and classic Notebook as the page does (:func:`for_jupyter`), writes it
next to the page's source in ``_build/html/_sources/`` and adds an ``.ipynb`` entry to
the page's download menu.

What Jupyter cannot show is rewritten (:func:`for_jupyter`):

- glued values (``application/papermill.record/...`` outputs, MyST-NB's glue storage,
  which Jupyter does not render) are substituted into the markdown: every
  ``{glue:text}`` role becomes its formatted value, every ``{gmath}`` role its formula with
  the values in it (``$d = 128$``), every ``{glue:figure}`` directive the figure itself
  (an ``image/png`` cell attachment) with its caption;
- MyST syntax becomes plain Markdown: labels are dropped, cross-references become their
  text or the title of their target, directives (admonitions, theorems, exercises)
  become a bold title and their body, citations their keys;
- a first cell says where the notebook comes from and how to install what it needs
  (the normlib wheel and requirements file on the site, ``_ext/site_downloads.py``),
  and a second sets ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` so no cell can reach a
  model hub.
"""

from __future__ import annotations

import ast
import base64
import re
from pathlib import Path

BUTTON_LABEL = "download-notebook-button"
GLUE_PREFIX = "application/papermill.record/"

FIRST_CELL = """\
**{title}** — a chapter of *Normalization, re-derived*, executed when the book was built:
every output, figure and number below is the one the book shows.

To run it again you need the book's helper package `normlib` and a few packages, both on
the book's site (page "Running the book yourself"): the normlib wheel and
`requirements-chapter.txt` (the exact versions the book was built with). In a fresh
virtual environment:

```bash
pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu   # the CPU build
pip install -r requirements-chapter.txt normlib-{version}-py3-none-any.whl
```

(or, without exact versions, `pip install "normlib-{version}-py3-none-any.whl[torch,book,notebook]"`).
The chapter needs no network."""

OFFLINE_CELL = """\
# nothing is downloaded: models are built from configurations (set before any import)
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")"""

_FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\{([\w:.-]+)\}[ \t]*(.*)$")
_CODE_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:.*$")
_LABEL = re.compile(r"^\([\w.:-]+\)=\s*$")
_ROLE = re.compile(r"\{([\w:.-]+)\}`([^`]*)`")
_DISPLAY_LABEL = re.compile(r"^(\s*\$\$)\s*\([\w.:-]+\)\s*$")


def executed_notebook(app, pagename: str) -> Path:
    """The executed notebook MyST-NB wrote for ``pagename`` in this build.

    MyST-NB writes into its ``output_folder``: ``_build/jupyter_execute`` for the English
    edition, ``_build/jupyter_execute-zh_CN`` for the Chinese one (``_ext/i18n.py`` gives
    each translated edition its own folder). Looking only beside the output folder
    (``_build/html/jupyter_execute`` for the Chinese edition, where nothing is written)
    left every Chinese page without its notebook. Failing that (a page served from an
    earlier build's environment), the English edition's notebook: the same cells and
    outputs.
    """
    out = Path(app.outdir)
    candidates = []
    folder = getattr(getattr(app.env, "mystnb_config", None), "output_folder", "")
    if folder:
        candidates.append(Path(folder))
    candidates.append(out.parent / "jupyter_execute")
    build = next((p for p in out.parents if p.name == "_build"), None)
    if build is not None:
        candidates.append(build / "jupyter_execute")
    for c in candidates:
        if (c / f"{pagename}.ipynb").is_file():
            return c / f"{pagename}.ipynb"
    return candidates[0] / f"{pagename}.ipynb"


def glued(nb) -> dict[str, dict]:
    """Every glued value of an executed notebook: key -> MIME bundle (prefix removed)."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None or "data" not in o:
                continue
            out[name] = {k.removeprefix(GLUE_PREFIX): v for k, v in o["data"].items()}
    return out


def _text_value(bundle: dict, spec: str) -> str:
    """The text a ``{glue:text}`key:spec``` role shows (MyST-NB's rule: format the value)."""
    plain = bundle.get("text/plain", "")
    if isinstance(plain, list):
        plain = "".join(plain)
    try:
        value = ast.literal_eval(plain)
    except (ValueError, SyntaxError):
        value = plain
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            return str(value)
    return str(value) if not isinstance(value, str) else value


def _glued_math():
    """``_ext/glued_math.py`` (the module Sphinx loaded, or loaded from next to this file)."""
    import importlib.util
    import sys

    module = sys.modules.get("glued_math")
    if module is None:
        spec = importlib.util.spec_from_file_location("glued_math", Path(__file__).with_name("glued_math.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["glued_math"] = module
        spec.loader.exec_module(module)
    return module


def _gmath(content: str, glue: dict) -> str:
    """The TeX of a ``{gmath}`` role with its glued values filled in (unfilled if one is missing)."""
    gm = _glued_math()

    def lookup(doc: str, key: str) -> str:
        bundle = (glue.get(("doc", doc)) or {}).get(key) if doc else glue.get(key)
        if bundle is None or "text/plain" not in bundle:
            raise KeyError(key)
        plain = bundle["text/plain"]
        return "".join(plain) if isinstance(plain, list) else plain

    try:
        return gm.render(content, lookup)
    except Exception:  # the book build has already failed on it (a missing key warns)
        return gm.template(content)


def _targets(book_dir: Path) -> dict[str, str]:
    """Label -> readable name: section titles and the titles of numbered boxes."""
    names: dict[str, str] = {}
    for md in sorted(book_dir.rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        for m in re.finditer(r"^\(([\w.:-]+)\)=\s*\n+#+\s+(.+)$", text, flags=re.M):
            names[m.group(1)] = f"“{m.group(2).strip()}”"
        for m in re.finditer(r"^(?:`{3,}|:{3,})\{prf:(\w+)\}[ \t]*(.*)\n:label:\s*(\S+)", text, flags=re.M):
            kind, title, label = m.group(1).capitalize(), m.group(2).strip(), m.group(3)
            names[label] = f"the {kind.lower()} “{title}”" if title else f"the {kind.lower()}"
    return names


def _role(name: str, content: str, glue: dict, targets: dict) -> str:
    if name == "glue:text" or name in ("glue", "glue:", "glue:any", "glue:md"):
        doc = ""
        if "::" in content:  # another chapter's value: {glue:text}`why-normalize.md::key:s`
            doc, _, content = content.partition("::")
        key, _, spec = content.partition(":")
        bundle = (glue.get(("doc", doc)) or {}).get(key.strip()) if doc else glue.get(key.strip())
        if bundle is None:
            return content
        return _text_value(bundle, spec.strip())
    if name == "math":
        return f"${content}$"
    if name in ("article", "article-en"):  # the article's registered span (_ext/article_quotes.py)
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from article_quotes import render

        return render(content.strip(), None, original=name == "article")
    if name == "claim":
        return content.strip()
    if name == "gmath":  # {gmath}`d = {{width:d}}`: the formula with its glued values (_ext/glued_math.py)
        return f"${_gmath(content, glue)}$"
    if name in ("cite:p", "cite:ps"):
        return "[" + "; ".join(k.strip() for k in content.split(",")) + "]"
    if name.startswith("cite"):
        return ", ".join(k.strip() for k in content.split(","))
    m = re.match(r"^(.*?)\s*<([^>]+)>$", content, flags=re.S)
    if m:  # explicit text: {ref}`the text <label>`
        return m.group(1)
    if name == "eq":
        return f"({content})"
    if name in ("ref", "numref", "prf:ref", "doc"):
        return targets.get(content, content.rsplit("/", 1)[-1])
    return content


def _figure(key: str, options: dict, caption: list[str], glue: dict, cell: dict) -> list[str]:
    bundle = glue.get(key, {})
    png = bundle.get("image/png")
    lines = []
    if png:
        name = f"{key}.png"
        data = png if isinstance(png, str) else "".join(png)
        base64.b64decode(data, validate=False)  # a stored figure is base64 text already
        cell.setdefault("attachments", {})[name] = {"image/png": data}
        alt = options.get("alt") or " ".join(caption).strip()[:200] or key
        alt = alt.replace("[", "(").replace("]", ")")
        lines.append(f"![{alt}](attachment:{name})")
        lines.append("")
    if caption:
        lines.append("*Figure.* " + " ".join(c.strip() for c in caption if c.strip()))
    return lines


def to_markdown(source: str, glue: dict, targets: dict, cell: dict) -> str:
    """One MyST markdown cell as plain Jupyter Markdown (see the module docstring)."""
    out: list[str] = []
    stack: list[tuple[str, str]] = []  # (fence, directive name or "code")
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        in_code = bool(stack) and stack[-1][1] == "code"
        if stack and line.strip() == stack[-1][0]:
            fence, kind = stack.pop()
            if kind in ("code", "math"):
                out.append("$$" if kind == "math" else line)
            i += 1
            continue
        if in_code:
            out.append(line)
            i += 1
            continue
        m = _FENCE.match(line)
        if m:
            fence, name, arg = m.group(2), m.group(3), m.group(4).strip()
            i += 1
            options = {}
            while i < len(lines) and _OPTION.match(lines[i]):
                k, _, v = lines[i].strip()[1:].partition(":")
                options[k] = v.strip()
                i += 1
            if name == "glue:figure":
                body = []
                while i < len(lines) and lines[i].strip() != fence:
                    body.append(_ROLE.sub(lambda r: _role(r.group(1), r.group(2), glue, targets), lines[i]))
                    i += 1
                i += 1
                out.extend(_figure(arg, options, body, glue, cell))
                continue
            if name in ("solution-end", "bibliography", "nb-exec-table"):
                if name != "solution-end":
                    stack.append((fence, name))
                    while i < len(lines) and lines[i].strip() != fence:
                        i += 1
                    stack.pop()
                    i += 1
                else:
                    # a one-line directive closed on the next fence line
                    while i < len(lines) and lines[i].strip() != fence:
                        i += 1
                    i += 1
                continue
            stack.append((fence, "math" if name == "math" else name))
            if name == "math":
                out.append("$$")
                continue
            kind = name.split(":")[-1].replace("-start", "").replace("-", " ")
            if name == "admonition":
                title = arg or "Note"
            else:
                title = kind.capitalize() + (f" ({arg})" if arg else "")
            out.append(f"**{_ROLE.sub(lambda r: _role(r.group(1), r.group(2), glue, targets), title)}**")
            out.append("")
            continue
        c = _CODE_FENCE.match(line)
        if c and not line.strip().startswith(("```{", ":::{")):
            stack.append((c.group(2), "code"))
            out.append(line)
            i += 1
            continue
        if _LABEL.match(line):
            i += 1
            continue
        d = _DISPLAY_LABEL.match(line)
        if d:
            out.append(d.group(1))
            i += 1
            continue
        out.append(_ROLE.sub(lambda r: _role(r.group(1), r.group(2), glue, targets), line))
        i += 1
    return "\n".join(out).strip("\n")


def glue_file(source: Path) -> dict[str, dict]:
    """The values MyST-NB took out of a notebook it executed itself (``<page>.glue.json``)."""
    import json

    path = source.with_suffix(".glue.json")
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: {m.removeprefix(GLUE_PREFIX): v for m, v in o.get("data", {}).items()} for k, o in data.items()}


class _CrossGlue(dict):
    """This notebook's glue, and other chapters' (``<doc>.glue.json`` in ``glue_dir``) on demand."""

    def __init__(self, own: dict, glue_dir: Path | None):
        super().__init__(own)
        self.glue_dir = glue_dir

    def __missing__(self, key):
        if isinstance(key, tuple) and self.glue_dir is not None:
            doc = key[1].removesuffix(".md").removesuffix(".ipynb")
            value = glue_file(self.glue_dir / f"{doc}.ipynb")
            self[key] = value
            return value
        raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def for_jupyter(nb, *, title: str, version: str, book_dir: Path, extra_glue: dict | None = None,
                glue_dir: Path | None = None):
    """The executed notebook as Jupyter shows it (glue substituted, MyST made plain).

    ``extra_glue``: glued values that are no longer in the notebook's outputs (MyST-NB
    moves them to ``<page>.glue.json`` when it executes a chapter itself); ``glue_dir``:
    where the other chapters' ``.glue.json`` files are (for ``doc.md::key`` roles).
    """
    import nbformat

    glue = _CrossGlue({**(extra_glue or {}), **glued(nb)}, glue_dir)
    targets = _targets(book_dir)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = to_markdown(cell.source, glue, targets, cell)
        elif cell.cell_type == "code":
            # glue's storage outputs: their values are now in the markdown, and Jupyter
            # has no renderer for them ("No renderer could be found for output")
            cell.outputs = [
                o for o in cell.get("outputs", [])
                if not (o.get("data") and all(k.startswith(GLUE_PREFIX) for k in o["data"]))
            ]
            for o in cell.outputs:  # Markdown outputs (the ledger's table) are MyST too
                text = o.get("data", {}).get("text/markdown")
                if text:
                    o["data"]["text/markdown"] = to_markdown("".join(text), glue, targets, {})
    nb.cells.insert(0, nbformat.v4.new_code_cell(OFFLINE_CELL))
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(FIRST_CELL.format(title=title, version=version)))
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat, nb.nbformat_minor = 4, 4  # 4.4: cell ids are optional
    return nb


def _version(root: Path) -> str:
    import tomllib

    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def _with_outputs(app, source: Path):
    """The notebook, with the outputs of its execution merged in from the cache."""
    import nbformat
    from jupyter_cache import get_cache

    nb = nbformat.read(source, as_version=4)
    cache_path = getattr(app.env.mystnb_config, "execution_cache_path", "")
    if cache_path and Path(cache_path).is_dir():
        try:
            _, nb = get_cache(cache_path).merge_match_into_notebook(nb)
        except KeyError:
            pass  # not in the cache: the notebook was executed in this build, outputs included
    return nb


def _add_notebook_download(app, pagename, templatename, context, doctree):
    if doctree is None or app.builder.format != "html":
        return
    source = executed_notebook(app, pagename)
    if not source.is_file():
        return
    import nbformat

    nb = for_jupyter(
        _with_outputs(app, source),
        title=re.sub(r"<[^>]+>", "", context.get("title", pagename)),
        version=_version(Path(app.confdir)),
        book_dir=Path(app.confdir) / "book",
        extra_glue=glue_file(source),
        glue_dir=source.parent,
    )
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(nbformat.writes(nb), encoding="utf-8")
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        if any(b.get("label") == BUTTON_LABEL for b in group["buttons"]):
            return  # the theme already added it (a launch service is configured)
        group["buttons"].insert(
            0,
            {
                "type": "link",
                "url": f"{context['pathto']('_sources', 1)}/{pagename}.ipynb",
                "text": ".ipynb",
                "icon": "fas fa-code",
                "tooltip": "Download the executed notebook (with outputs, in plain Markdown)",
                "label": BUTTON_LABEL,
            },
        )
        return


def setup(app):
    # after sphinx-book-theme's add_header_buttons (priority 501) built the menu
    app.connect("html-page-context", _add_notebook_download, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
