"""Sphinx extension: the article's own words, and small links from a claim's ID to its ledger row.

Roles:

``{article}`C3.8```
    The article's span for claim C3.8 (``article_zh`` in ``normlib/claims.toml``), or a named
    span (``{article}`contraction-tax```, ``{article}`title```; ``[quote."name"]``). On the
    English edition it shows the translation in quotation marks with the original beside it:
    “exactly the order of ε” (恰好是 ε 的量级); on the Chinese edition the original alone:
    “恰好是 ε 的量级”. Only a registered span can be quoted as the article's words
    (``tests/test_quotes.py`` lints the prose for any other quotation attributed to it).
``{article-en}`C3.8```
    The same span, translation only (the Chinese edition still shows the original): for a
    sentence that has already given the original nearby.
``{claim}`C3.8```
    The claim's ID in small type, linked to its row of the claims ledger (label
    ``ledger-c3.8``); it ends a verdict-box bullet.

An unknown key is a build error (the -W build fails), never a silent empty quotation.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxRole


def _quotes():
    from normlib.claims import article_quotes

    return article_quotes()


def ledger_label(claim_id: str) -> str:
    """The label of a claim's row in the ledger (``C3.8`` -> ``ledger-c3.8``)."""
    return "ledger-" + claim_id.lower()


def render(key: str, language: str | None, *, original: bool = True) -> str:
    """The text the role shows for ``key`` on an edition (``language`` "zh_CN" or None/"en").

    Raises
    ------
    KeyError
        No span of that key is registered.
    """
    q = _quotes()[key]
    if (language or "en").startswith("zh"):
        return f"“{q.zh}”"
    if not original or q.en == q.zh:
        return f"“{q.en}”"
    return f"“{q.en}” ({q.zh})"


class ArticleRole(SphinxRole):
    """``{article}`key``` and ``{article-en}`key```."""

    def __init__(self, original: bool):
        super().__init__()
        self.original = original

    def run(self):
        key = self.text.strip()
        try:
            text = render(key, self.config.language, original=self.original)
        except KeyError:
            msg = self.inliner.reporter.error(
                f"{{article}}: no span {key!r} in normlib/claims.toml (a claim ID or a [quote] name)",
                line=self.lineno,
            )
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        node = nodes.inline(text, text, classes=["article-quote"])
        return [node], []


class ClaimRole(SphinxRole):
    """``{claim}`C3.8```: a small ID linked to the claim's ledger row."""

    def run(self):
        cid = self.text.strip()
        from normlib.claims import registry

        if cid not in registry()[0]:
            msg = self.inliner.reporter.error(f"{{claim}}: no claim {cid!r} in normlib/claims.toml", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        ref = addnodes.pending_xref(
            "", refdomain="std", reftype="ref", reftarget=ledger_label(cid), refexplicit=True, refwarn=True
        )
        ref += nodes.inline(cid, cid, classes=["claim-id"])
        return [ref], []


def setup(app):
    app.add_role("article", ArticleRole(original=True))
    app.add_role("article-en", ArticleRole(original=False))
    app.add_role("claim", ClaimRole())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
