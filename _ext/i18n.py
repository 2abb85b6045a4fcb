"""Sphinx extension: the translated editions (gettext catalogs in ``locales/``).

The Chinese edition is built from the same chapter sources as the English one, with
``language = "zh_CN"`` (see ``_ext/locale_tools.py``, ``make book-zh``). This extension
does what a stock Sphinx translation of a MyST-NB book gets wrong:

- **Glue roles in translated text.** Sphinx re-parses a translated message as plain
  MyST, which cannot see the notebook's glue data, so ``{glue:text}`key:.3f``` fails
  ("No key 'key' found in glue data for this document") and the number vanishes. A
  cross-document reference (``{glue:text}`/book/intro.md::key:.3f```) is resolved from
  the glue data every build writes, so local keys in a translation are rewritten to that
  form: the numbers stay live and no catalog entry turns fuzzy when they change.
- **Cell outputs (and API docstrings) stay out of the catalogs.** Text produced by a cell (a markdown table,
  a printed line) carries literal numbers; it is marked untranslatable, so it is neither
  extracted nor frozen into a translation.
- **Strings that Sphinx's translation step cannot reach**: the part captions of
  ``_toc.yml`` (inserted after that step), the search box text and the prompts of folded
  code cells (hard-coded English), and the book's title. They are translated from the
  catalog ``locales/<lang>/LC_MESSAGES/_ui.po``.
- **Glued wording.** A sentence a chapter glues (``glue_phrase``) is data, not prose: it
  is translated from ``_phrases.po`` (``_ext/glue_phrases.py``) once the glue is resolved, and
  a figure's alt text (set after the translation step) from ``_alt.po``.
- **Check tables.** The evidence pages' tables of checks are cell outputs
  (``normlib.book.check_table_md``, ``CheckTable``): their heads, windows and booleans are
  translated from ``_ui.po`` and each check's *what* and *why* from ``_checks.po``
  (extracted from ``normlib/claims.toml``), looked up through the row's check ID; the
  numbers stay as the cell printed them. The other tables a cell prints are translated
  from ``_tables.po`` (their texts, extracted from the built English pages).
- **Figures in the edition's language.** A figure glued with ``normlib.plotting.glue_figure``
  is drawn twice from the same data, its texts translated from ``_figures.po`` the second
  time, and glued as ``key`` and ``key__<language>``; a translated build shows the second:
  its ``{glue:figure} key`` directives are pointed at it when the source is read.
- **Citations.** A translated edition cites with its own joiners (``Liu 等人 [2020]``), a
  sphinxcontrib-bibtex referencing style registered here (``REFERENCE_STYLES``).
- **Language switcher.** Every page links to the same page of the other edition, with
  ``<link rel="alternate" hreflang=...>`` in the head and a header button. The English
  edition links to the Chinese one only when ``i18n_alternates`` lists it (``_config.yml``
  sets it; ``make book`` builds the Chinese edition into ``_build/html/zh/``).
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

#: edition folder (below the English ``_build/html``), hreflang code and label per language
EDITIONS = {"zh_CN": ("zh", "zh-Hans", "中文")}
ENGLISH = ("", "en", "English")

# a glue role whose key has no document part: {glue}`k`, {glue:text}`k:.3f`, {glue:md}`k` ...
_GLUE_ROLE = re.compile(r"(\{glue(?::[a-z]+)?\}`)(?![^`]*::)([^`]+)`")


def localize_glue_keys(text: str, docpath: str) -> str:
    """Rewrite local glue keys in ``text`` to ``<docpath>::key`` (``docpath`` from the source root)."""
    def rewrite(m):
        key = m.group(2)
        if m.group(1) == "{glue:text}`" and ":" not in key:
            key += ":s"  # the role's own default: the cross-document form would read "doc:" as the key
        return f"{m.group(1)}/{docpath}::{key}`"

    return _GLUE_ROLE.sub(rewrite, text)


def _is_translation(app) -> bool:
    return (app.config.language or "en") not in ("en", "en_US")


def _patch_publish_msgstr(app) -> None:
    """Wrap Sphinx's parser of translated messages so that local glue keys resolve."""
    from sphinx.transforms import i18n

    if getattr(i18n.publish_msgstr, "_normlib_glue", False):
        return
    original = i18n.publish_msgstr

    def publish_msgstr(app, source, source_path, source_line, config, settings):
        env = app.env
        if env is not None and env.docname:
            source = localize_glue_keys(source, env.doc2path(env.docname, False))
        return original(app, source, source_path, source_line, config, settings)

    publish_msgstr._normlib_glue = True
    i18n.publish_msgstr = publish_msgstr


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


class UntranslatableOutputs(SphinxTransform):
    """Mark cell outputs and API descriptions untranslatable (runs before Sphinx's Locale, 20).

    Cell outputs carry literal numbers. API descriptions (autodoc's output on the API page:
    module docstrings and ``desc`` nodes) are normlib's docstrings: code documentation, kept in the language of the
    code so that it cannot drift from it; the API page's own prose is translated.
    """

    default_priority = 15

    def apply(self, **kwargs):
        for node in self.document.findall(nodes.TextElement):
            if ":docstring of " in (node.source or "") or any(
                isinstance(a, addnodes.desc) for a in _ancestors(node)
            ):
                _untranslatable(node)
                node["classes"] = node.get("classes", []) + ["normlib-docstring"]  # for the checks
        for container in self.document.findall(nodes.container):
            if "cell_output" not in container.get("classes", []):
                continue
            for node in container.findall(nodes.Element):
                if isinstance(node, (nodes.TextElement, nodes.image)):
                    _untranslatable(node)


def _untranslatable(node) -> None:
    """Mark ``node`` untranslatable, except an ``inline``: Sphinx never translates one that
    has no ``translatable`` attribute, and its RemoveTranslatableInline (every build,
    English too) unwraps every inline that has one and appends its children at the end of
    the parent, which garbled the API page's signatures (``layer_norm(x, =weightNone)``:
    the parameter's name and default are inline nodes)."""
    if not isinstance(node, nodes.inline):
        node["translatable"] = False


def _catalog(app, name: str) -> dict[str, str]:
    """The translated, non-fuzzy messages of ``locales/<language>/LC_MESSAGES/<name>``: msgid -> msgstr."""
    from babel.messages.pofile import read_po

    found = {}
    for d in app.config.locale_dirs:
        path = Path(app.srcdir, d, app.config.language, "LC_MESSAGES", name)
        if path.is_file():
            with path.open("rb") as f:
                found.update({m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy})
    return found


def ui_catalog(app) -> dict[str, str]:
    """The translated UI strings (``_ui.po``) of the build's language: msgid -> msgstr."""
    return _catalog(app, "_ui.po") if _is_translation(app) else {}


def _translate_config(app, config) -> None:
    if not _is_translation(app):
        return
    ui = ui_catalog(app)
    app.env_ui = ui  # kept for the other handlers
    opts = dict(config.html_theme_options or {})
    text = opts.get("search_bar_text", "Search this book...")
    opts["search_bar_text"] = ui.get(text, text)
    config.html_theme_options = opts
    for name in ("nb_code_prompt_show", "nb_code_prompt_hide"):
        value = getattr(config, name)
        setattr(config, name, ui.get(value, value))
    for name in ("html_title", "project", "author"):
        value = getattr(config, name)
        if value in ui:
            setattr(config, name, ui[value])


def phrase_catalog(app):
    """The glued wordings' translations (``_phrases.po``) as ``glue_phrases.Phrases``, with
    the figures' alt texts (``_alt.po``) as its ``alt`` dict."""
    import glue_phrases  # _ext is on sys.path: Jupyter Book's local_extensions puts it there

    phrases = glue_phrases.Phrases.from_catalog(_catalog(app, "_phrases.po"))
    phrases.alt = _catalog(app, "_alt.po")
    return phrases


def _translate_glued_wording(app, doctree, docname) -> None:
    """Translate the wording a chapter glued (``glue_phrase``), once glue is resolved."""
    if not _is_translation(app):
        return
    phrases = getattr(app, "_normlib_phrases", None)
    if phrases is None:
        phrases = app._normlib_phrases = phrase_catalog(app)
    for node in list(doctree.findall(nodes.inline)):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        new = phrases.translate(text)
        if new is not None and new != text:
            node.children = []
            node += nodes.Text(new)
    for node in doctree.findall(nodes.image):
        if node.get("alt") in phrases.alt:
            node["alt"] = phrases.alt[node["alt"]]
    ui = getattr(app, "env_ui", None) or {}
    for node in doctree.findall(nodes.Element):  # a folded cell's own prompts (containers, hide nodes)
        for attr in ("prompt_show", "prompt_hide"):
            if node.get(attr) in ui:
                node[attr] = ui[node[attr]]


#: the column heads of MyST-NB's execution table (the execution report), hard-coded English
EXEC_TABLE_HEADS = ("Document", "Modified", "Method", "Run Time (s)", "Status")
_HTML_TEXT = re.compile(r">([^<>]*[A-Za-z][^<>]*)<")
_HTML_ATTR = re.compile(r'(data-count|aria-label)="([^"]*)"')


def translate_filter_html(html: str, ui: dict, titles: dict) -> str:
    """The ledger's filter (raw HTML written by a cell) in the edition's language: its labels,
    menu entries and count from ``_ui.po``, the chapters' names from the translated titles."""
    import html as _html

    def text(m):
        s = m.group(1)
        core = s.strip()
        plain = _html.unescape(core)
        new = ui.get(plain) or titles.get(plain)
        return ">" + s.replace(core, _html.escape(new, quote=False)) + "<" if new else m.group(0)

    def attr(m):
        plain = _html.unescape(m.group(2))
        return f'{m.group(1)}="{_html.escape(ui.get(plain, plain))}"'

    return _HTML_ATTR.sub(attr, _HTML_TEXT.sub(text, html))


def _translate_generated(app, doctree, docname) -> None:
    """Translate what a page generates at build time: the execution table's heads, the landing page's
    verdict table, the ledger's filter."""
    if not _is_translation(app):
        return
    ui = getattr(app, "env_ui", None) or {}
    for table in doctree.findall(nodes.table):
        heads = [e.astext().strip() for e in table.findall(nodes.entry) if isinstance(e.parent.parent, nodes.thead)]
        if heads and set(heads) <= set(EXEC_TABLE_HEADS):
            for entry in table.findall(nodes.entry):
                if isinstance(entry.parent.parent, nodes.thead):
                    for t in list(entry.findall(nodes.Text)):
                        if t.astext().strip() in ui:
                            t.parent.replace(t, nodes.Text(ui[t.astext().strip()]))
    for box in doctree.findall(nodes.container):
        if "verdict-table" in box.get("classes", []):  # the landing page's table (normlib.ledger)
            for t in list(box.findall(nodes.Text)):
                key = t.astext().strip().replace("\u2019", "'")  # MyST's smart quotes: the catalog's are straight
                if key in ui:
                    t.parent.replace(t, nodes.Text(ui[key]))
    for raw in doctree.findall(nodes.raw):
        if 'class="ledger-filter"' in raw.astext():
            titles = _chapter_titles(app)
            new = translate_filter_html(raw.astext(), ui, titles)
            raw.parent.replace(raw, nodes.raw("", new, format=raw.get("format", "html")))


#: the column heads of ``normlib.book.check_table_md`` (the lectures' checks on an evidence page)
#: and of ``normlib.book.CheckTable`` (checks run on the page), and CheckTable's pass mark: a
#: translated edition recognizes the tables by them (tests/test_i18n_checks.py reads them back
#: from normlib's output)
CHECK_TABLE_HEADS = ("check", "what is measured", "value", "window", "why this window", "rejects")
CHECK_RESULT_HEADS = ("check", "what", "measured", "reference", "tolerance", "")
PASS_MARK = "✓ pass"
#: the check tables' texts that ``_ui.po`` translates (with the column heads of both tables)
CHECK_UI_STRINGS = ("must hold", "exact", "reads {0} at the printed precision", "in [{0}, {1}]",
                    "True", "False")
_TOL_READS = re.compile(r"reads (.+) at the printed precision")
_TOL_IN = re.compile(r"in \[([^,\[\]]+), ([^,\[\]]+)\]")
_WORDS = re.compile(r"[A-Za-z0-9]+")


def translate_tolerance(text: str, ui: dict) -> str:
    """A check's window (``normlib.claims.Check.tolerance``) in the edition's language.

    ``must hold`` and ``exact`` are looked up whole; ``reads X at the printed precision`` and
    ``in [lo, hi]`` through their templates, their values kept; ``atol``/``rtol`` (numpy's
    names) stay as they are. Text that matches none is returned unchanged.
    """
    if text in ui:
        return ui[text]
    m = _TOL_READS.fullmatch(text)
    if m and "reads {0} at the printed precision" in ui:
        return ui["reads {0} at the printed precision"].replace("{0}", m.group(1))
    m = _TOL_IN.fullmatch(text)
    if m and "in [{0}, {1}]" in ui:
        return ui["in [{0}, {1}]"].replace("{0}", m.group(1)).replace("{1}", m.group(2))
    return text


def _same_words(a: str, b: str) -> bool:
    """The same text up to what Markdown and Sphinx change (quotes, dashes, escapes, emphasis)."""
    return _WORDS.findall(a) == _WORDS.findall(b)


def check_registry():
    """The checks of ``normlib/claims.toml`` by ID (``normlib.claims.registry``)."""
    from normlib.claims import registry

    return registry()[1]


def _set_text(entry, text: str) -> None:
    """Replace a table cell's content with one paragraph of plain ``text``."""
    entry.children = []
    entry += nodes.paragraph("", "", nodes.Text(text))


def translate_check_tables(doctree, ui: dict, texts: dict, checks) -> int:
    """Translate the check tables of a page (``normlib.book.check_table_md`` and
    ``CheckTable``, recognized by their column heads) in place; return the rows translated.

    ``ui`` translates the heads, the window's words and True/False; ``texts`` (``_checks.po``)
    a check's *what* and *why*, looked up through the row's check ID, and only where the
    cell still holds that check's English (any other table is left alone). A text without
    a translation stays English.
    """
    done = 0
    for table in doctree.findall(nodes.table):
        heads = [e.astext().strip() for e in table.findall(nodes.entry) if isinstance(e.parent.parent, nodes.thead)]
        if tuple(heads) not in (CHECK_TABLE_HEADS, CHECK_RESULT_HEADS):
            continue
        full = tuple(heads) == CHECK_TABLE_HEADS
        for entry in table.findall(nodes.entry):
            if isinstance(entry.parent.parent, nodes.thead) and entry.astext().strip() in ui:
                _set_text(entry, ui[entry.astext().strip()])
        for body in table.findall(nodes.tbody):
            for row in body.children:
                cells = list(row.children)
                check = checks.get(cells[0].astext().strip())
                if check is None or len(cells) != len(heads):
                    continue
                if _same_words(cells[1].astext(), check.what) and check.what in texts:
                    _set_text(cells[1], texts[check.what])
                tol = cells[3 if full else 4]
                if tol.astext().strip() == check.tolerance():
                    _set_text(tol, translate_tolerance(check.tolerance(), ui))
                if full:
                    if _same_words(cells[4].astext(), check.why) and check.why in texts:
                        _set_text(cells[4], texts[check.why])
                    if cells[5].astext().strip() in ("True", "False") and cells[5].astext().strip() in ui:
                        _set_text(cells[5], ui[cells[5].astext().strip()])
                elif cells[5].astext().strip() == PASS_MARK and PASS_MARK in ui:
                    _set_text(cells[5], ui[PASS_MARK])
                done += 1
    return done


_CHECK_HTML_ROW = re.compile(
    r"(<tr><td><code>)([^<]+)(</code></td><td>)([^<]*)(</td><td><b>)([^<]*)(</b></td><td>)([^<]*)"
    r'(</td><td>)([^<]*)(</td><td class="pass">)([^<]*)(</td></tr>)')


def translate_check_html(text: str, ui: dict, texts: dict, checks, holds: str | None = None) -> str:
    """The raw HTML of a ``CheckTable`` (``normlib.book``) in the edition's language: heads
    and pass marks from ``ui``, each row's *what* from ``texts`` through its check ID, its
    window through :func:`translate_tolerance`, a boolean check's shown ``holds`` as
    ``holds`` (the rendering of the glued wording). Rows it cannot attribute are left alone."""
    import html as _html

    def row(m):
        check = checks.get(_html.unescape(m.group(2)))
        if check is None:
            return m.group(0)
        parts = list(m.groups())
        if _html.unescape(parts[3]) == check.what and check.what in texts:
            parts[3] = _html.escape(texts[check.what])
        if parts[5] == "holds" and holds:
            parts[5] = _html.escape(holds)
        if _html.unescape(parts[9]) == check.tolerance():
            parts[9] = _html.escape(translate_tolerance(check.tolerance(), ui))
        if parts[11] == PASS_MARK and PASS_MARK in ui:
            parts[11] = _html.escape(ui[PASS_MARK])
        return "".join(parts)

    out = _CHECK_HTML_ROW.sub(row, text)
    for h in CHECK_RESULT_HEADS:
        if h and h in ui:
            out = out.replace(f"<th>{h}</th>", f"<th>{_html.escape(ui[h])}</th>")
    return out


def _in_cell_output(node) -> bool:
    """Inside a cell's output or a glued output, or one itself (MyST-NB: containers
    ``cell_output`` / ``output``; a glued HTML output is a raw node of class ``output``)."""
    return any({"cell_output", "output"} & set(a.get("classes", [])) for a in (node, *_ancestors(node))
               if isinstance(a, nodes.Element))


def _in_check_table(node) -> bool:
    for a in _ancestors(node):
        if isinstance(a, nodes.table):
            heads = [e.astext().strip() for e in a.findall(nodes.entry) if isinstance(e.parent.parent, nodes.thead)]
            return heads[:1] == ["check"]
    return False


def translate_output_tables(doctree, phrases) -> int:
    """Translate the text that cells print as Markdown (tables and notes in a cell's or a
    glued output; check tables excepted) through ``phrases`` (``_tables.po`` as
    ``glue_phrases.Phrases``: a recorded text with numbers also matches the same text with
    other numbers, which the translation takes over). Math, code, printed plain text and
    untranslated texts are left as they are; return the number of texts replaced."""
    done = 0
    for t in list(doctree.findall(nodes.Text)):
        parent = t.parent
        if parent is None or not _in_cell_output(parent):
            continue
        if any(isinstance(a, (nodes.math, nodes.literal, nodes.math_block, nodes.literal_block, nodes.raw))
               for a in (parent, *_ancestors(parent))):
            continue
        if _in_check_table(parent):
            continue
        text = t.astext()
        core = text.strip()
        new = phrases.translate(core) if core else None
        if new is not None and new != core:
            parent.replace(t, nodes.Text(text.replace(core, new)))
            done += 1
    return done


_HTML_CELL_TEXT = re.compile(r"(<(t[hd]|p|caption)(?:\s[^>]*)?>)([^<]*[A-Za-z][^<]*)(</\2>)")


def translate_output_table_html(text: str, phrases) -> str:
    """A raw HTML table a cell printed, its cells' texts and its notes (``<p>``, ``<caption>``)
    translated through ``phrases`` (unescaped for the lookup, escaped again)."""
    import html as _html

    def cell(m):
        core = _html.unescape(m.group(3).strip())
        new = phrases.translate(core)
        if new is None or new == core:
            return m.group(0)
        return m.group(1) + m.group(3).replace(m.group(3).strip(), _html.escape(new, quote=False)) + m.group(4)

    return _HTML_CELL_TEXT.sub(cell, text)


def _translate_output_tables(app, doctree, docname) -> None:
    """The tables the chapters' cells print, in the edition's language (``_tables.po``)."""
    if not _is_translation(app):
        return
    import glue_phrases

    phrases = getattr(app, "_normlib_tables", None)
    if phrases is None:
        phrases = app._normlib_tables = glue_phrases.Phrases.from_catalog(_catalog(app, "_tables.po"))
    translate_output_tables(doctree, phrases)
    for raw in list(doctree.findall(nodes.raw)):
        if "<table" in raw.astext() and _in_cell_output(raw):
            new = translate_output_table_html(raw.astext(), phrases)
            raw.parent.replace(raw, nodes.raw("", new, format=raw.get("format", "html"), classes=raw.get("classes", [])))


def _translate_checks(app, doctree, docname) -> None:
    """The check tables of the evidence pages in the edition's language (``_checks.po``)."""
    if not _is_translation(app):
        return
    ui = getattr(app, "env_ui", None) or {}
    texts = getattr(app, "_normlib_checks", None)
    if texts is None:
        texts = app._normlib_checks = _catalog(app, "_checks.po")
    phrases = getattr(app, "_normlib_phrases", None)
    if phrases is None:
        phrases = app._normlib_phrases = phrase_catalog(app)
    checks = check_registry()
    translate_check_tables(doctree, ui, texts, checks)
    holds = phrases.translate("holds")
    for raw in list(doctree.findall(nodes.raw)):
        if 'class="claim-checks"' in raw.astext():
            new = translate_check_html(raw.astext(), ui, texts, checks, holds=holds)
            raw.parent.replace(raw, nodes.raw("", new, format=raw.get("format", "html"), classes=raw.get("classes", [])))


def _chapter_titles(app) -> dict[str, str]:
    """English chapter title -> this edition's title (the page catalogs translate the titles)."""
    import sys

    sys.path.insert(0, str(Path(app.srcdir)))
    from normlib.ledger import toc_chapters

    out = {}
    for stem, title in toc_chapters(app.srcdir).items():
        doc = f"book/{stem}"
        if doc in app.env.titles:
            out[title] = app.env.titles[doc].astext()
    return out


def _translate_toc_captions(app, doctree) -> None:
    """Translate the part captions that sphinx-external-toc inserted after translation."""
    ui = getattr(app, "env_ui", None)
    if not ui:
        return
    for toctree in doctree.findall(addnodes.toctree):
        caption = toctree.get("caption")
        if caption in ui:
            toctree["caption"] = ui[caption]


def _alternates(app) -> list[tuple[str, str, str]]:
    """(folder prefix relative to this edition's root, hreflang, label) of the other editions."""
    lang = app.config.language or "en"
    if lang in EDITIONS:
        return [("../" * (EDITIONS[lang][0].count("/") + 1), ENGLISH[1], ENGLISH[2])]
    return [(EDITIONS[code][0] + "/", EDITIONS[code][1], EDITIONS[code][2])
            for code in app.config.i18n_alternates if code in EDITIONS]


def _add_switcher(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html" or app.builder.name == "singlehtml":
        return
    up = "../" * pagename.count("/")
    links = []
    for prefix, hreflang, label in _alternates(app):
        href = f"{up}{prefix}{pagename}.html"
        links.append((href, hreflang, label))
        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" hreflang="{hreflang}" href="{href}" />'
        )
    if links and "header_buttons" in context:
        for href, hreflang, label in links:
            context["header_buttons"].insert(0, {
                "type": "link",
                "url": href,
                "text": label,
                "tooltip": label,
                "icon": "fas fa-language",
                "label": f"language-switch-{hreflang}",
            })


def translated_figures(source: str, language: str) -> str:
    """Point a page's ``{glue:figure} key`` directives at ``key__<language>`` for every key the
    page's code glues with ``glue_figure`` (the figure drawn with translated texts)."""
    import glue_phrases

    for key in dict.fromkeys(glue_phrases.figure_keys(source)):
        source = re.sub(rf"(\{{glue:figure\}}[ \t]+){re.escape(key)}(?=[ \t]*$)", rf"\g<1>{key}__{language}",
                        source, flags=re.M)
    return source


#: the banner of a page whose catalog is listed in ``locales/<lang>/PENDING`` (translation in progress)
PENDING_BANNER = {
    "zh_CN": (":::{admonition} 译文进行中\n:class: translation-pending\n\n"
              "本页的中文译文尚未完成：尚未翻译的段落暂以英文原文显示。页上的数字、图和判定与英文版相同。\n:::\n"),
}


def pending_catalogs(app) -> set[str]:
    """The catalogs (``book/x.po``) that ``locales/<lang>/PENDING`` lists, for this build's language."""
    out = set()
    for d in app.config.locale_dirs:
        f = Path(app.srcdir, d, app.config.language, "PENDING")
        if f.is_file():
            out |= {ln.split("#")[0].strip() for ln in f.read_text(encoding="utf-8").splitlines()} - {""}
    return out


def with_pending_banner(source: str, language: str) -> str:
    """``source`` with the edition's translation-in-progress banner right after its title
    (the first ``# `` heading outside the front matter and code)."""
    lines = source.split("\n")
    i, fence = 0, None
    if lines and lines[0].strip() == "---":  # jupytext front matter
        i = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"), 0) + 1
    for j in range(i, len(lines)):
        stripped = lines[j].lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith(":::")):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence) and stripped.strip() == fence:
            fence = None
        elif fence is None and lines[j].startswith("# "):
            return "\n".join(lines[: j + 1] + ["", PENDING_BANNER[language]] + lines[j + 1:])
    raise ValueError("with_pending_banner: the page has no title (a '# ' heading)")


def _on_source_read(app, docname, source) -> None:
    if _is_translation(app) and "glue_figure" in source[0]:
        source[0] = translated_figures(source[0], app.config.language)
    if _is_translation(app) and f"{docname}.po" in pending_catalogs(app):
        source[0] = with_pending_banner(source[0], app.config.language)


def _own_output_folder(app) -> None:
    """A translated edition writes its notebooks and glue data to its own folder."""
    if not _is_translation(app) or not hasattr(app.env, "mystnb_config"):
        return
    folder = Path(app.doctreedir).parent / f"jupyter_execute-{app.config.language}"
    app.env.mystnb_config = app.env.mystnb_config.copy(output_folder=str(folder.resolve()))


#: message catalogs of Sphinx and the theme that the book's own catalogs override (locales/<lang>/LC_MESSAGES)
OVERRIDDEN_CATALOGS = ("sphinx", "booktheme")


def _override_catalogs(app) -> None:
    """Put the book's ``sphinx.po`` and ``booktheme.po`` before Sphinx's and the theme's own
    translations (Sphinx adds a project's catalogs only as fallbacks, and the theme's zh_CN
    catalog writes 列印 where mainland Chinese writes 打印)."""
    import gettext

    from sphinx import locale

    for name in OVERRIDDEN_CATALOGS:
        for d in app.config.locale_dirs:
            base = Path(app.srcdir, d)
            if not (base / app.config.language / "LC_MESSAGES" / f"{name}.mo").is_file():
                continue
            ours = gettext.translation(name, localedir=str(base), languages=[app.config.language])
            theirs = locale.translators.get(("general", name))
            if theirs is not None and theirs is not ours:
                ours.add_fallback(theirs)
            locale.translators[("general", name)] = ours


#: the author-year citation style of a translated edition (``bibtex_reference_style``)
REFERENCE_STYLES = {"zh_CN": "author_year_zh"}


def zh_reference_style():
    """sphinxcontrib-bibtex's author-year style with Chinese joiners: Liu 等人 [2020],
    Nguyen 与 Salazar [2019] (the English edition's "et al." and "and"), and Chinese
    punctuation inside the brackets: [Shleifer 等人，2021], [Nguyen 与 Salazar，2019；Wang
    等人，2022] (the English edition's ASCII commas, between author and year and between works)."""
    from dataclasses import dataclass, field

    from pybtex.richtext import Text
    from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    @dataclass
    class AuthorYearZh(AuthorYearReferenceStyle):
        person: PersonStyle = field(default_factory=lambda: PersonStyle(
            sep="、", sep2=" 与 ", last_sep=" 与 ", other=Text(" 等人")))
        bracket_parenthetical: BracketStyle = field(default_factory=lambda: BracketStyle(sep="；"))
        bracket_textual: BracketStyle = field(default_factory=lambda: BracketStyle(sep="；"))
        author_year_sep: str = "，"
        post_text_sep: str = "，"

    return AuthorYearZh


def _register_reference_styles() -> None:
    import sphinxcontrib.bibtex.plugin as plugin

    plugin.register_plugin("sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLES["zh_CN"],
                           zh_reference_style(), force=True)


def _on_builder_inited(app) -> None:
    if _is_translation(app):
        _patch_publish_msgstr(app)
        _override_catalogs(app)
    _own_output_folder(app)


def setup(app):
    _register_reference_styles()
    app.add_config_value("i18n_alternates", [], "html")
    app.add_transform(UntranslatableOutputs)
    app.connect("config-inited", _translate_config)
    # after myst-nb's handler (500) that sets mystnb_config, before the cache guard (900)
    app.connect("builder-inited", _on_builder_inited, priority=600)
    app.connect("source-read", _on_source_read)
    app.connect("doctree-read", _translate_toc_captions)
    app.connect("doctree-resolved", _translate_glued_wording)
    app.connect("doctree-resolved", _translate_generated)
    app.connect("doctree-resolved", _translate_output_tables)  # before the check tables' heads turn Chinese
    app.connect("doctree-resolved", _translate_checks)
    # after sphinx-book-theme's header buttons (501) and the download menu (600)
    app.connect("html-page-context", _add_switcher, priority=700)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
