"""A minimal headless-Chromium driver over the DevTools protocol (browser tests, PDF).

Chromium is started headless with no network use (the book is read from ``file://``)
and remote debugging on a free port; one websocket to the page target carries
``Page.navigate`` and ``Runtime.evaluate`` and collects console errors, uncaught
exceptions and failed loads as they happen. Only ``websocket-client`` (pinned) is needed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self.errors: list[str] = []
        self._id = 0

    def __enter__(self):
        import websocket

        self._profile = tempfile.TemporaryDirectory()
        exe = find_chromium()
        if exe is None:
            raise RuntimeError("no Chromium on PATH")
        self._proc = subprocess.Popen(
            [
                exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--allow-file-access-from-files", "--remote-debugging-port=0",
                f"--user-data-dir={self._profile.name}", "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise RuntimeError("Chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        # the endpoint can lag behind the port file on a loaded machine: retry briefly
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                    targets = json.load(r)
                page = next(t for t in targets if t["type"] == "page")
                self._ws = websocket.create_connection(
                    page["webSocketDebuggerUrl"], timeout=self.timeout, suppress_origin=True
                )
                break
            except (OSError, StopIteration, websocket.WebSocketException):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc):
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._profile.cleanup()

    def _event(self, msg: dict) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + (d.get("exception", {}).get("description") or d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif method == "Network.loadingFailed" and not p.get("canceled"):
            self.errors.append(f"load failed: {p.get('errorText')}")

    def call(self, method: str, **params) -> dict:
        self._id += 1
        my_id = self._id
        self._ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def evaluate(self, expression: str, *, await_promise: bool = False):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def print_pdf(self, path: Path) -> Path:
        """Print the open page to ``path`` (A4, backgrounds, no header or footer)."""
        import base64

        r = self.call(
            "Page.printToPDF",
            printBackground=True,
            paperWidth=8.27,
            paperHeight=11.69,
            marginTop=0.6,
            marginBottom=0.6,
            marginLeft=0.6,
            marginRight=0.6,
            displayHeaderFooter=False,
        )
        path.write_bytes(base64.b64decode(r["data"]))
        return path

    def open(self, url: str) -> None:
        """Navigate, wait for the load event, then for MathJax (if the page has it)."""
        self.errors.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        # a redirect page (Jupyter Book's index.html: <meta http-equiv="refresh">) navigates
        # on its own after loading: wait until the page that stays has loaded
        state = "(document.readyState === 'complete' && document.body !== null && " \
                "!document.querySelector('meta[http-equiv=refresh]')) ? 'ready' : 'loading'"
        while True:
            try:
                if self.evaluate(state) == "ready":
                    break
            except RuntimeError:  # the context was torn down by a navigation: poll again
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not finish loading")
            time.sleep(0.05)
        self.evaluate(
            "(async () => { if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; } return true; })()",
            await_promise=True,
        )
        # images decode asynchronously: wait for all of them
        self.evaluate(
            "Promise.all([...document.images].map(i => i.decode().catch(() => null))).then(() => true)",
            await_promise=True,
        )
