"""The translated editions: refresh the gettext catalogs, build the Chinese edition.

    python _ext/locale_tools.py update    # make locale-update
    python _ext/locale_tools.py build-zh  # make book-zh

``update`` extracts every translatable message of the English sources with Sphinx's
gettext builder (the builder ``jupyter-book build . --builder custom --custom-builder
gettext`` runs, called here through the same ``jupyter_book.sphinx.build_sphinx`` with
its own doctree folder: the gettext builder's environment is incompatible with the HTML
one) into ``_build/gettext/**.pot``, adds ``_ui.pot`` (the ``_toc.yml`` part captions, the
book's title and the theme's hard-coded English strings) and ``_phrases.pot`` and ``_alt.pot``
(the wordings the chapters glue and the figures' alt texts, ``_ext/glue_phrases.py``), ``_checks.pot``
(the checks' texts of the evidence pages' check tables, ``normlib/claims.toml``), ``_tables.pot``
(the texts of the other tables cells print, read from the built English pages), and merges each template into
``locales/zh_CN/LC_MESSAGES/**.po`` (one catalog per page). A message whose English
changed keeps its old translation, is marked fuzzy and records the previous English
(``#| msgid``), so the translator sees what changed; a message that disappeared is kept
as obsolete (``#~``). It needs no new dependency: Babel, which Sphinx requires, does the
merge (what sphinx-intl would do).

``build-zh`` builds the Chinese edition into ``_build/html/zh/`` from the same sources,
reusing the English execution cache (``_build/.jupyter_cache``): it refuses to start when
a chapter has no cached execution made with the current normlib, so it executes nothing,
or when the catalogs fail ``tests/check_catalogs.py`` (a markup mismatch, or a page
declared complete with a fuzzy or untranslated message).
The English pages link to their Chinese pages through ``i18n_alternates`` in
``_config.yml``; ``make book`` builds both editions.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
CACHE = BUILD / ".jupyter_cache"
LOCALES = ROOT / "locales"
LANGUAGES = ["zh_CN"]
#: hard-coded English of Jupyter Book, MyST-NB and the theme that Sphinx does not translate
UI_STRINGS = ["Search this book...", "Show code cell {type}", "Hide code cell {type}",
              # MyST-NB's execution table (book/execution-report.md)
              "Document", "Modified", "Method", "Run Time (s)", "Status",
              # the claims ledger's filter (normlib.ledger.filter_controls_html)
              "Filter the claims", "{shown} of {total} claims", "Chapter", "Verdict", "How we know",
              "Decided by", "all", "the book's own question", "the primary source",
              "the book's own computation", "CORRECT", "IMPRECISE", "WRONG", "UNSUPPORTED",
              "reproduced", "re-derived", "source-checked", "not-reproducible-here"]


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _build(builder: str, outdir: Path, doctreedir: Path, overrides: dict, warningiserror=True) -> int:
    from jupyter_book.sphinx import build_sphinx

    overrides = {"external_toc_path": (ROOT / "_toc.yml").as_posix(), "latex_individualpages": False, **overrides}
    return build_sphinx(
        ROOT, outdir, noconfig=True, path_config=str(ROOT / "_config.yml"),
        confoverrides=overrides, builder=builder, doctreedir=doctreedir,
        warningiserror=warningiserror, keep_going=True,
    )


def ui_messages() -> list[tuple[str, str]]:
    """(msgid, context comment) of the strings translated by ``_ext/i18n.py``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = [(_config()["title"], "the book's title"), (_config()["author"], "the book's author (the footer)")]
    out += [(p["caption"], "a part caption of _toc.yml") for p in toc.get("parts", []) if p.get("caption")]
    out += [(s, "hard-coded English of the theme or MyST-NB ({type}: source, outputs or content)")
            for s in UI_STRINGS]
    prompts = []  # a cell's own prompts (mystnb: code_prompt_show / code_prompt_hide)
    for doc in _toc_documents():
        prompts += re.findall(r'code_prompt_(?:show|hide):\s*"([^"]+)"', doc.read_text(encoding="utf-8"))
    out += [(s, "a folded cell's prompt (cell metadata code_prompt_show/hide)") for s in dict.fromkeys(prompts)]
    sys.path.insert(0, str(ROOT))
    from normlib.ledger import VERDICT_TABLE_TEXTS

    out += [(s, "the landing page's verdict table (written by normlib.ledger.verdict_table)")
            for s in VERDICT_TABLE_TEXTS]
    sys.path.insert(0, str(ROOT / "_ext"))
    from i18n import CHECK_RESULT_HEADS, CHECK_TABLE_HEADS, CHECK_UI_STRINGS, PASS_MARK

    check_ui = [h for h in dict.fromkeys(CHECK_TABLE_HEADS + CHECK_RESULT_HEADS) if h]
    out += [(s, "a column head of the evidence pages' check tables (normlib.book)") for s in check_ui]
    out += [(s, "the evidence pages' check tables: a window ({0}, {1}: its values), a boolean, the pass mark")
            for s in (*CHECK_UI_STRINGS, PASS_MARK)]
    return out


def table_messages() -> list[tuple[str, str]]:
    """(msgid, comment) of the texts of the tables the chapters' cells print, read from the
    built English pages (``_build/html``: ``make book`` first), translated from ``_tables.po``."""
    return _phrases_module().table_messages(BUILD / "html", _toc_documents(), ROOT)


def check_messages() -> list[tuple[str, str]]:
    """(msgid, comment) of the checks' texts in the evidence pages' check tables: each
    check's *what* and *why* (``normlib/claims.toml``), translated from ``_checks.po``."""
    sys.path.insert(0, str(ROOT))
    from normlib.claims import registry

    out: dict[str, list[str]] = {}
    for cid, k in registry()[1].items():
        out.setdefault(k.what, []).append(f"check {cid}: what is measured")
        out.setdefault(k.why, []).append(f"check {cid}: why this window")
    return [(msgid, "; ".join(where)) for msgid, where in out.items()]


def _phrases_module():
    spec = importlib.util.spec_from_file_location("glue_phrases", ROOT / "_ext" / "glue_phrases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["glue_phrases"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def phrase_messages() -> list[tuple[str, str]]:
    """(msgid, context comment) of the glued wordings (``_ext/glue_phrases.py``)."""
    return _phrases_module().phrase_messages(_toc_documents(), BUILD / "jupyter_execute")


def figure_messages() -> list[tuple[str, str]]:
    """(msgid, comment) of the figures' texts (``t("...")`` of ``normlib.plotting.glue_figure``)."""
    sys.path.insert(0, str(ROOT))
    from normlib.ledger import toc_chapters

    titles = [(t.split(":")[0], "a chapter's title as a row label of the landing page's claim grid")
              for t in toc_chapters(ROOT).values()]
    return _phrases_module().figure_messages(_toc_documents(), sorted((ROOT / "normlib").glob("*.py")), titles)


def write_ui_template(path: Path, messages=None) -> None:
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    cat = Catalog(project="Normalization, re-derived")
    for msgid, comment in (ui_messages() if messages is None else messages):
        cat.add(msgid, auto_comments=[comment])
    with path.open("wb") as f:
        write_po(f, cat, width=0, omit_header=False)


def merge(pot: Path, po: Path, language: str) -> dict:
    """Merge template ``pot`` into catalog ``po`` (created when missing); return counts."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    with pot.open("rb") as f:
        template = read_po(f)
    if po.is_file():
        with po.open("rb") as f:
            catalog = read_po(f, locale=language)
    else:
        catalog = Catalog(locale=language, project="Normalization, re-derived")
    # an obsolete translation whose English comes back (e.g. a figure caption missing from a
    # preview extraction) is revived rather than lost: Babel matches only live messages
    for key, old in list(catalog.obsolete.items()):
        if old.string and key not in catalog:
            catalog[old.id] = old
        del catalog.obsolete[key]
    catalog.update(template, no_fuzzy_matching=False, update_creation_date=False)
    for msgid in [k for k, m in catalog.obsolete.items() if not m.string]:
        del catalog.obsolete[msgid]  # nothing to keep: it was never translated
    po.parent.mkdir(parents=True, exist_ok=True)
    with po.open("wb") as f:
        write_po(f, catalog, width=0, include_previous=True, omit_header=False, sort_output=False)
    msgs = [m for m in catalog if m.id]
    return {"messages": len(msgs), "fuzzy": sum(m.fuzzy for m in msgs),
            "untranslated": sum(not m.string for m in msgs), "obsolete": len(catalog.obsolete)}


def _partial(partial: bool) -> dict | None:
    """Config overrides that keep chapters without a cached execution from executing.

    Without ``partial``, None when a chapter has no cached execution (the caller stops).
    With it, those chapters are excluded from execution (their outputs and glue values
    are missing, so the build is a preview: warnings do not fail it).
    """
    missing = missing_executions()
    if missing and not partial:
        print("no cached execution (with this normlib) for: " + ", ".join(missing)
              + "\nrun `make book` (or `make test`) first: translated builds and catalog updates "
              "execute nothing (or pass --partial for a preview without those chapters' outputs)",
              file=sys.stderr)
        return None
    if missing:
        print("PARTIAL (preview): not executed, outputs missing: " + ", ".join(missing), file=sys.stderr)
    return {"nb_execution_excludepatterns": [f"book/{m}.md" for m in missing]} if missing else {}


def update(partial: bool = False) -> int:
    out = BUILD / "gettext"
    extra = _partial(partial)
    if extra is None:
        return 1
    t0 = time.perf_counter()
    status = _build("gettext", out, BUILD / ".doctrees-gettext",
                    {"gettext_compact": False, "nb_execution_cache_path": str(CACHE), **extra},
                    warningiserror=False)
    if status:
        print("gettext build failed", file=sys.stderr)
        return 1
    write_ui_template(out / "_ui.pot")
    write_ui_template(out / "_phrases.pot", phrase_messages())
    write_ui_template(out / "_alt.pot", _phrases_module().alt_messages(_toc_documents()))
    write_ui_template(out / "_figures.pot", figure_messages())
    write_ui_template(out / "_checks.pot", check_messages())
    write_ui_template(out / "_tables.pot", table_messages())
    pots = sorted(out.rglob("*.pot"))
    for language in LANGUAGES:
        target = LOCALES / language / "LC_MESSAGES"
        seen = set()
        for pot in pots:
            rel = pot.relative_to(out).with_suffix(".po")
            seen.add(rel)
            counts = merge(pot, target / rel, language)
            print(f"{language}/{rel}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for po in sorted(target.rglob("*.po")):
            if po.relative_to(target) not in seen:
                print(f"{language}/{po.relative_to(target)}: no page has this catalog any more (delete it)")
    print(f"catalogs updated in {time.perf_counter() - t0:.0f} s; translate the empty and fuzzy "
          "entries, then run: python tests/check_catalogs.py")
    return 0


def _toc_documents() -> list[Path]:
    """Every page of the table of contents: the root, the chapters and their sections (evidence pages)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]
    for p in toc["parts"]:
        for c in p["chapters"]:
            docs.append(c["file"])
            docs += [s["file"] for s in c.get("sections", [])]
    return [ROOT / f"{d}.md" for d in docs]


def missing_executions() -> list[str]:
    """Chapters (jupytext notebooks) with no execution in the cache made with this normlib."""
    import jupytext
    from jupyter_cache import get_cache

    spec = importlib.util.spec_from_file_location("normlib_cache_guard", ROOT / "_ext" / "normlib_cache_guard.py")
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    chapters = [p for p in _toc_documents() if "jupytext:" in p.read_text(encoding="utf-8")[:2000]]
    stamp = CACHE / guard.CACHE_STAMP_NAME
    if not stamp.is_file() or stamp.read_text().strip() != guard.fingerprint(ROOT):
        return [p.relative_to(ROOT / "book").with_suffix("").as_posix() for p in chapters]
    cache = get_cache(str(CACHE))
    missing = []
    for p in chapters:
        try:
            cache.match_cache_notebook(jupytext.read(p))
        except KeyError:
            missing.append(p.relative_to(ROOT / "book").with_suffix("").as_posix())
    return missing


def cached(partial: bool = False) -> int:
    """0 when every chapter has an execution in the cache made with this normlib, else 1.

    ``make book`` then builds the two editions side by side: neither executes anything, so
    they share only what they read (the cache) and the site's downloads (under a lock).
    """
    return 1 if missing_executions() else 0


def search_dictionary(path: Path) -> Path:
    """A jieba user dictionary of the glossary's Chinese terms, for the search index.

    jieba alone splits 雅可比矩阵 into 雅 / 可比 / 矩阵 and single characters are not
    indexed, so a search for the Jacobian would find nothing; the glossary's terms (each
    part of a compound such as 增益与偏置 too) are kept whole.
    """
    from babel.messages.pofile import read_po

    with (LOCALES / "zh_CN" / "LC_MESSAGES" / "book" / "glossary.po").open("rb") as f:
        cells = [m.id for m in read_po(f) if m.id and re.fullmatch(r"[\u4e00-\u9fff（）、/与 ]+", m.id)]
    words = {w for c in cells for w in re.split(r"[（）、/与 ]+", c) if len(w) > 1}
    words |= set(article_terms())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w} 100000\n" for w in sorted(words)), encoding="utf-8")
    return path


def article_terms() -> list[str]:
    """The article's own short terms (the registry's named spans that are one Chinese word, such
    as 收缩税), so that a reader can search for the words the article uses."""
    sys.path.insert(0, str(ROOT))
    from normlib.claims import article_quotes

    return sorted({q.zh for q in article_quotes().values() if re.fullmatch(r"[\u4e00-\u9fff]{2,8}", q.zh)})


def build_zh(partial: bool = False, builder: str = "html") -> int:
    spec = importlib.util.spec_from_file_location("check_catalogs", ROOT / "tests" / "check_catalogs.py")
    checker = importlib.util.module_from_spec(spec)
    sys.modules["check_catalogs"] = checker
    spec.loader.exec_module(checker)
    if checker.run(LOCALES, require_all=not partial):  # a markup mismatch, or an incomplete catalog
        print("the catalogs fail tests/check_catalogs.py --all (above): not building", file=sys.stderr)
        return 1
    extra = _partial(partial)
    if extra is None:
        return 1
    strict = not extra
    t0 = time.perf_counter()
    out, doctrees = ((BUILD / "html" / "zh", BUILD / ".doctrees-zh") if builder == "html"
                     else (BUILD / "singlehtml-zh", BUILD / ".doctrees-zh"))  # the single page reuses the HTML build's reading
    status = _build(builder, out, doctrees, {
        "language": "zh_CN",
        "locale_dirs": ["locales"],
        "gettext_compact": False,
        "nb_execution_cache_path": str(CACHE),
        "nitpicky": True,
        "bibtex_reference_style": "author_year_zh",  # _ext/i18n.py: Liu 等人 [2020]
        "html_search_options": {"dict": str(search_dictionary(BUILD / "jieba-glossary.txt"))},
        **extra,
    }, warningiserror=strict)
    t_zh = time.perf_counter() - t0
    if status:
        print("the Chinese edition failed to build", file=sys.stderr)
        return status
    print(f"Chinese edition ({builder}) built in {t_zh:.0f} s: {out}")
    return 0


def pdf_zh(partial: bool = False) -> int:
    """The Chinese edition as one PDF (``_build/pdf/book-zh.pdf``): the single-page HTML, printed."""
    status = build_zh(partial, builder="singlehtml")
    if status:
        return status
    sys.path.insert(0, str(ROOT / "_ext"))
    from print_pdf import PRINT_CJK_FONT, print_pdf

    done = print_pdf(BUILD / "singlehtml-zh", BUILD / "pdf" / "book-zh.pdf", cjk_font=PRINT_CJK_FONT)
    print(f"wrote {done} ({done.stat().st_size / 1e6:.1f} MB)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["update", "build-zh", "pdf-zh", "cached"])
    ap.add_argument("--partial", action="store_true",
                    help="preview: do not execute chapters that have no cached execution")
    args = ap.parse_args(argv)
    return {"update": update, "build-zh": build_zh, "pdf-zh": pdf_zh, "cached": cached}[args.command](args.partial)


if __name__ == "__main__":
    sys.exit(main())
