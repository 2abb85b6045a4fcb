"""Headless Chromium for the browser checks and ``make pdf``: a thin layer over Playwright.

Playwright (PyPI, pinned in ``requirements.txt``) drives Debian's Chromium
(``apt-get install chromium``) through ``executable_path``; its own browser download is
never used (there is no network). Each page is opened in a fresh browser context that
records console errors, uncaught exceptions, failed requests and crashes
(:class:`PageLog`), waits for the load event (and for a redirect page's target), for
MathJax to finish typesetting and for every image to decode.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--allow-file-access-from-files",
)
_READY = (
    "document.readyState === 'complete' && document.body !== null && "
    "!document.querySelector('meta[http-equiv=refresh i]')"
)
_TYPESET = "async () => { if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; } return true; }"
_DECODED = "() => Promise.all([...document.images].map(i => i.decode().catch(() => null))).then(() => true)"


def find_chromium() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageLog:
    """What went wrong while a page loaded (empty when nothing did)."""

    errors: list[str] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("console", lambda m: m.type in ("error", "assert") and self.errors.append(f"console.{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"exception: {e}"))
        page.on("requestfailed", lambda r: self.errors.append(f"load failed: {r.failure} {r.url}"))
        page.on("crash", lambda p: self.errors.append("the page crashed"))


@contextlib.contextmanager
def chromium(timeout: float = 60.0) -> Iterator:
    """A headless Debian Chromium under Playwright (``timeout`` in seconds per action)."""
    from playwright.sync_api import sync_playwright

    exe = find_chromium()
    if exe is None:
        raise RuntimeError("no Chromium on PATH (Debian: apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=list(FLAGS), headless=True, timeout=timeout * 1000)
        browser.action_timeout = timeout
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def open_page(browser, url: str, *, timeout: float | None = None) -> Iterator:
    """Open ``url`` in a fresh context; yield ``(page, log)`` once it is typeset and decoded."""
    timeout = timeout or getattr(browser, "action_timeout", 60.0)
    context = browser.new_context()
    context.set_default_timeout(timeout * 1000)
    page = context.new_page()
    log = PageLog()
    log.attach(page)
    try:
        page.goto(url, wait_until="load")
        # a redirect page (Jupyter Book's index.html: <meta http-equiv="refresh">) navigates
        # on its own after loading: wait for the page that stays
        for _ in range(3):
            try:
                page.wait_for_function(_READY)
                break
            except Exception as exc:  # the context was torn down by the redirect: wait again
                if "destroyed" not in str(exc) and "navigat" not in str(exc):
                    raise
        page.wait_for_load_state("load")
        page.evaluate(_TYPESET)
        page.evaluate(_DECODED)
        yield page, log
    finally:
        context.close()
