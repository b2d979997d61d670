"""Headless Chromium driven through its DevTools protocol, and a local web server that notes every
request to ``/ran``: a page whose script runs calls it (and changes ``document.title``), so a test
can prove nothing ran after it opened a page and clicked its links."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def have_chromium() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


class Beacon:
    """Serves ``folder`` on 127.0.0.1 and records the requests to ``/ran...`` (the marker)."""

    def __init__(self, folder: Path):
        self.hits: list[str] = []
        beacon = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/ran"):
                    beacon.hits.append(self.path)
                    self.send_response(204)
                    self.send_header("Access-Control-Allow-Origin", "*")
                    self.end_headers()
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def payload(self, mark: str) -> str:
        """A ``javascript:`` URL (no spaces) that calls the beacon and sets the page's title."""
        return (f"javascript:void(fetch('{self.url}/ran/{mark}'));void(new/**/Image().src='{self.url}/ran/{mark}');"
                f"void(document.title='ran-{mark}')")

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Browser:
    """One headless Chromium (fresh profile) and one of its pages, over the DevTools websocket."""

    def __init__(self):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="chromium-")
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self.profile}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:
            (page,) = [t for t in json.loads(reply.read()) if t["type"] == "page"][:1]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def open(self, url: str, seconds: float = 60) -> None:
        """Load ``url`` and wait for its load event, then a moment for what it starts."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + seconds
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not load within {seconds:g} s")
            self.call("Runtime.evaluate", expression="1")   # reads the events that came meanwhile
            time.sleep(0.1)
        time.sleep(1.0)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


# What a page offers to run: its links and images, and its title.
PROBE = """(() => {
  const links = [...document.querySelectorAll('a[href], area[href]')].map(a => ({text: a.textContent.trim(),
      href: a.getAttribute('href'), protocol: a.protocol}));
  const images = [...document.querySelectorAll('img, image, source, iframe, embed, object')].map(
      e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('data') || '');
  return {title: document.title, links, images};
})()"""


def click_everything_unsafe(browser: Browser) -> None:
    """Click, one at a time (a second navigation would cancel the first), every link that is not a
    plain http(s) or mailto link, then every element that shows the text of an ``evil`` link."""
    count = browser.evaluate("document.querySelectorAll('a[href], area[href]').length")
    for i in range(count):
        if browser.evaluate(f"""(() => {{ const a = document.querySelectorAll('a[href], area[href]')[{i}];
            if (!a || ['http:', 'https:', 'mailto:'].includes(a.protocol)) return false;
            a.click(); return true; }})()"""):
            time.sleep(0.4)
    browser.evaluate("""for (const e of document.querySelectorAll('p, li, td, span, code'))
        if (/evil/.test(e.textContent) && !e.querySelector('p, li, td')) e.click(); 1""")
