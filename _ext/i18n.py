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
                node["translatable"] = False
                node["classes"] = node.get("classes", []) + ["normlib-docstring"]  # for the checks
        for container in self.document.findall(nodes.container):
            if "cell_output" not in container.get("classes", []):
                continue
            for node in container.findall(nodes.Element):
                if isinstance(node, (nodes.TextElement, nodes.image)):
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
    for name in ("html_title", "project"):
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


def _own_output_folder(app) -> None:
    """A translated edition writes its notebooks and glue data to its own folder."""
    if not _is_translation(app) or not hasattr(app.env, "mystnb_config"):
        return
    folder = Path(app.doctreedir).parent / f"jupyter_execute-{app.config.language}"
    app.env.mystnb_config = app.env.mystnb_config.copy(output_folder=str(folder.resolve()))


def _on_builder_inited(app) -> None:
    if _is_translation(app):
        _patch_publish_msgstr(app)
    _own_output_folder(app)


def setup(app):
    app.add_config_value("i18n_alternates", [], "html")
    app.add_transform(UntranslatableOutputs)
    app.connect("config-inited", _translate_config)
    # after myst-nb's handler (500) that sets mystnb_config, before the cache guard (900)
    app.connect("builder-inited", _on_builder_inited, priority=600)
    app.connect("doctree-read", _translate_toc_captions)
    app.connect("doctree-resolved", _translate_glued_wording)
    # after sphinx-book-theme's header buttons (501) and the download menu (600)
    app.connect("html-page-context", _add_switcher, priority=700)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
