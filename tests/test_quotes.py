"""Only the article's own words are quoted as the article's (tests/quote_lint.py, the {article} role)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "_ext"))
import article_quotes  # noqa: E402
import quote_lint  # noqa: E402

import normlib.claims as claims_mod  # noqa: E402
from normlib.claims import ArticleQuote  # noqa: E402

BASELINE = HERE / "data" / "quote_baseline.toml"


def _baseline() -> set[tuple[str, str]]:
    raw = tomllib.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.is_file() else {}
    return {(e["page"], e["quote"]) for e in raw.get("pending", [])}


def _found() -> set[tuple[str, str]]:
    found = [f for p in quote_lint.pages() for f in quote_lint.scan_page(p)]
    found += [f for c in quote_lint.catalogs() for f in quote_lint.scan_catalog(c)]
    return {(f.where, f.quote) for f in found}


def test_no_new_quotation_is_put_in_the_articles_mouth():
    new = sorted(_found() - _baseline())
    assert not new, "quotations attributed to the article that are not {article} spans:\n" + "\n".join(map(str, new))


def test_the_baseline_only_shrinks():
    """A baselined quotation that is gone must leave the baseline (so it cannot come back unseen)."""
    stale = sorted(_baseline() - _found())
    assert not stale, "fixed, remove from tests/data/quote_baseline.toml:\n" + "\n".join(map(str, stale))


@pytest.mark.parametrize(("text", "chinese", "n"), [
    ('The article says the stream grows "linearly".', False, 1),
    ("The article calls it a “contraction tax”.", False, 1),
    ("The article’s ‘contraction tax’ is a name.", False, 1),
    ('Xiong et al. write "linearly".', False, 0),  # a paper's words, no attribution to the article
    ("The article's claim is checked. Ba et al. call it “exactly the same computation”.", False, 0),
    ("文章说的“快了约 40%”有两种理解。", True, 1),
    ("文章说 “快了约 40%”。", True, 1),
    ('文章说"快了约 40%"。', True, 1),
    ("文章说的「快了约 40%」。", True, 1),
    ("原文写道：“按指数恶化”。", True, 1),
    ("论文写道“以确保训练稳定”。", True, 0),
])
def test_scanner_finds_attributed_quotations(text, chinese, n):
    """Mutants: 文章 dropped from the Chinese attributions; curly (“…”), corner (「…」) or single
    (‘…’) quotation marks not read as quotations."""
    assert len(quote_lint.scan_text(text, "x.md", chinese=chinese)) == n


def test_a_chinese_catalog_is_scanned_as_chinese(tmp_path, monkeypatch):
    """Mutant: the catalogs scanned with the English attributions (文章说 “…” would pass), or their
    roles not removed."""
    po = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "x.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "The article says it is faster."\nmsgstr "文章说 “快了约 40%”。"\n\n'
        'msgid "The article calls it {article}`C1.1`."\nmsgstr "文章称之为 {article}`C1.1`。"\n\n'
        'msgid "Xiong et al. call it a tax."\nmsgstr "Xiong 等人称之为“税”。"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(quote_lint, "ROOT", tmp_path)
    found = quote_lint.scan_catalog(po)
    assert [(f.where, f.quote) for f in found] == [("locales/zh_CN/LC_MESSAGES/x.po", "“快了约 40%”")]


def test_the_role_is_not_a_quotation_to_the_scanner():
    """The {article} role is removed before scanning: its rendered quotation marks are the registry's."""
    text = "The article calls it a {article}`contraction-tax`, and says {article-en}`C5.10`."
    assert quote_lint.scan_text(quote_lint.prose(text), "x.md", chinese=False) == []


# synthetic spans (the roles are tested apart from today's registry)
QUOTES = {
    "C1.1": ArticleQuote(key="C1.1", zh="恰好是 ε 的量级", en="exactly the order of ε", claim="C1.1"),
    "formula": ArticleQuote(key="formula", zh="y = x + 1", en="y = x + 1"),
}


@pytest.fixture
def quotes(monkeypatch):
    monkeypatch.setattr(claims_mod, "article_quotes", lambda: QUOTES)
    return QUOTES


def test_role_renders_each_edition(quotes):
    """Mutants: the Chinese edition shown the translation (``q.en``, or a language test that
    misses ``zh_CN``); the English one without the original; the original repeated when the
    span is its own translation."""
    assert article_quotes.render("C1.1", "en") == "“exactly the order of ε” (恰好是 ε 的量级)"
    assert article_quotes.render("C1.1", None) == "“exactly the order of ε” (恰好是 ε 的量级)"
    assert article_quotes.render("C1.1", "en", original=False) == "“exactly the order of ε”"
    assert article_quotes.render("C1.1", "zh_CN") == "“恰好是 ε 的量级”"
    assert article_quotes.render("C1.1", "zh_CN", original=False) == "“恰好是 ε 的量级”"
    assert article_quotes.render("formula", None) == "“y = x + 1”"  # no duplicate when en == zh
    with pytest.raises(KeyError):
        article_quotes.render("no-such-span", None)
    assert article_quotes.ledger_label("C3.8") == "ledger-c3.8"


def _call(role, name, text, language):
    """Run a role object as docutils does, with the one thing it reads of Sphinx (config.language)."""
    from types import SimpleNamespace

    from docutils import nodes, utils

    env = SimpleNamespace(config=SimpleNamespace(language=language), temp_data={})
    inliner = SimpleNamespace(
        reporter=utils.Reporter("x.md", report_level=5, halt_level=5),
        document=SimpleNamespace(settings=SimpleNamespace(env=env)),
        problematic=lambda raw, text, msg: nodes.problematic(raw, text),
    )
    return role(name, f"{{{name}}}`{text}`", text, 1, inliner)


@pytest.mark.parametrize(("language", "original", "shown"), [
    ("zh_CN", True, "“恰好是 ε 的量级”"),
    ("zh_CN", False, "“恰好是 ε 的量级”"),
    ("en", True, "“exactly the order of ε” (恰好是 ε 的量级)"),
    (None, False, "“exactly the order of ε”"),
])
def test_the_article_roles_show_the_editions_words(quotes, language, original, shown):
    """Mutants: the role renders for the English edition whatever the build's language, or
    ``{article-en}`` shows the original too."""
    (node,), msgs = _call(article_quotes.ArticleRole(original=original), "article", "C1.1", language)
    assert msgs == [] and node.astext() == shown and "article-quote" in node["classes"]


def test_an_unknown_span_is_a_build_error_never_an_empty_quotation(quotes):
    (node,), (msg,) = _call(article_quotes.ArticleRole(original=True), "article", "C9.9", "zh_CN")
    assert node.tagname == "problematic" and msg["level"] == 3 and "no span 'C9.9'" in msg.astext()


def test_the_claim_role_links_a_registered_claim_and_refuses_another(monkeypatch):
    """Mutant: the ``{claim}`` role not checking the claim (a link to a ledger row that does not
    exist, or to another claim's)."""
    from normlib.claims import Claim

    c = Claim(id="C1.1", chapter="x", statement="s", method="re-derived", reason="r.", kind="extension")
    monkeypatch.setattr(claims_mod, "registry", lambda: ({"C1.1": c}, {}))
    (ref,), msgs = _call(article_quotes.ClaimRole(), "claim", "C1.1", "en")
    assert msgs == [] and ref["reftarget"] == "ledger-c1.1" and ref.astext() == "C1.1"
    (node,), (msg,) = _call(article_quotes.ClaimRole(), "claim", "C1.2", "en")
    assert node.tagname == "problematic" and "no claim 'C1.2'" in msg.astext()
