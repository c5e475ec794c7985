"""Look at the built site the way a reader does: pages rendered in headless Chromium.

``python3 tasks.py check-site [page.html ...]`` (default: every page of _build/html/book/) loads each
page in a true 1280-px desktop viewport and a true 390-px phone viewport (device metrics set through the
DevTools protocol, ``Emulation.setDeviceMetricsOverride``: a plain headless window cannot be narrower
than 500 px), waits for MathJax, and reports as problems (exit status 1)
- raw LaTeX left in the text (``$``, ``\\frac``, ``\\Omega(`` ... outside code) and MathJax errors,
- images that did not load and pages wider than the screen (a sideways scroll of the whole page),
- figures shown at under 70% of the size they were drawn at (:data:`MIN_FIGURE_SCALE`), and figures whose
  smallest text (legend, tick label; recorded in the PNG by :mod:`rgr.chapters.style`) is shown under
  8 CSS px (:data:`MIN_TEXT_PX`),
- at desktop width, tables wider than the text column (they scroll sideways),
- verdict labels (elements of class ``rgr-verdict``, the replication page) and the outcome cells of any table
  (class ``rgr-outcome``, book/_static/rgr-tables.js) not fully in view without sideways scrolling, at either width;
- a bottom-line box (class ``rgr-bottom-line``: the intro, *Does it replicate?*) that ends below the first screen
  at desktop width or the first two on a phone (:data:`BOTTOM_LINE_SCREENS`);
- at desktop width in the theme's dark mode, table and figure captions under 4.5:1 contrast;
figures whose text size is not recorded are warnings. With ``--screenshots DIR`` it saves a screenshot
of each page at both widths. Needs a Chromium (Debian: ``apt-get install chromium``);
:func:`find_chromium` says whether there is one.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from tests import ROOT


@dataclass(frozen=True)
class Viewport:
    """A screen, as ``Emulation.setDeviceMetricsOverride`` sets it (CSS pixels)."""

    width: int
    height: int
    scale: float = 1.0  # device pixels per CSS pixel
    mobile: bool = False


WIDTHS = {"desktop": Viewport(1280, 900), "phone": Viewport(390, 844, 3.0, True)}
# where the bottom-line box (the intro's and the verdict chapter's first element, class rgr-bottom-line) must end,
# in screens from the top of the page: the first screen at desktop width, the first two on a phone (issue 47)
BOTTOM_LINE_SCREENS = {"desktop": 1, "phone": 2}
MIN_FIGURE_SCALE = 0.7  # a figure shown smaller than this fraction of its drawn size has unreadable fonts
MIN_TEXT_PX = 8.0  # smallest text in a figure, in CSS px on the screen
TEXT_KEY = "rgr-min-text-px"  # PNG text chunk: the figure's smallest text in px at its drawn size
VERDICT_CLASS = "rgr-verdict"

# evaluated in the page once it has loaded: waits for MathJax (if the page has maths), returns what it saw
PROBE = r"""
(async function () {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    try { await MathJax.startup.promise; } catch (e) {}
  }
  await new Promise(function (r) { setTimeout(r, 200); });
  function rawTex(root) {
    var out = [], skip = /^(PRE|CODE|SCRIPT|STYLE|MJX-CONTAINER|TEXTAREA)$/;
    var pat = /\$\$|\\\(|\\\[|\\(frac|tfrac|Omega|Theta|mathbf|text|log|ell|tau|sqrt|binom)\b|(^|[^\\\w])\$[^\s$]/;
    var w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: function (n) {
      for (var p = n.parentElement; p && p !== root; p = p.parentElement)
        if (skip.test(p.tagName) || p.classList.contains('highlight')) return NodeFilter.FILTER_REJECT;
      return NodeFilter.FILTER_ACCEPT; }});
    while (w.nextNode()) { var t = w.currentNode.textContent; if (pat.test(t)) out.push(t.trim().slice(0, 120)); }
    return out;
  }
  function clipped(el, width) {  // px of el cut off on the right or left by the screen or a scrolling box
    var r = el.getBoundingClientRect(), cut = Math.max(0, r.right - width, -r.left);
    for (var p = el.parentElement; p; p = p.parentElement) {
      var ox = getComputedStyle(p).overflowX;
      if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') {
        var q = p.getBoundingClientRect();
        cut = Math.max(cut, r.right - q.right, q.left - r.left);
      }
    }
    return cut;
  }
  var width = WIDTH, main = document.querySelector('article') || document.body;
  var column = main.getBoundingClientRect().width;
  var imgs = Array.prototype.map.call(main.querySelectorAll('img'), function (im) {
    if (im.closest('[hidden]')) return null;  // a picker's figures not chosen (figure_picker)
    var drawn = parseFloat(im.style.width) || parseFloat(im.getAttribute('width')) || im.naturalWidth;
    return {src: im.currentSrc || im.src || '', ok: im.complete && im.naturalWidth > 0,
            shown: im.getBoundingClientRect().width, drawn: drawn};
  }).filter(function (im) { return im !== null; });
  var tables = Array.prototype.map.call(main.querySelectorAll('table'), function (t) {
    var cap = t.querySelector('caption'), head = t.querySelector('th');
    return {width: Math.round(Math.max(t.getBoundingClientRect().width, t.scrollWidth)),  // a folded table scrolls
            name: ((cap && cap.textContent) || (head && head.textContent) || '').trim().slice(0, 60)};
  });
  var verdicts = Array.prototype.map.call(document.querySelectorAll('.VERDICT, .rgr-outcome'), function (el) {
    var r = el.getBoundingClientRect();
    return {text: el.textContent.trim().slice(0, 40), cut: Math.round(clipped(el, width)),
            shown: r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'};
  });
  var box = document.querySelector('.rgr-bottom-line'), boxRect = box && box.getBoundingClientRect();
  var bottomLine = box ? {top: Math.round(boxRect.top + window.scrollY),
                          bottom: Math.round(boxRect.bottom + window.scrollY)} : null;
  return {raw: rawTex(main), merror: main.querySelectorAll('mjx-merror').length, bottomLine: bottomLine,
          math: main.querySelectorAll('mjx-container').length,
          unrendered: main.querySelectorAll('.math:not(:has(mjx-container))').length,
          images: imgs, tables: tables, column: column, verdicts: verdicts, viewport: window.innerWidth,
          overflow: document.documentElement.scrollWidth - width};
})()
"""

# evaluated after PROBE at desktop width: the page switched to the theme's dark mode, the contrast of each
# table or figure caption against the background it sits on (WCAG ratio, alpha blended)
DARK_CAPTIONS = r"""
(async function () {
  document.documentElement.dataset.theme = 'dark'; document.documentElement.dataset.mode = 'dark';
  await new Promise(function (r) { setTimeout(r, 300); });
  function rgba(c) { var m = c.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; }
  function lum(c) { function f(v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }
                    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); }
  function back(el) { for (; el; el = el.parentElement) { var c = rgba(getComputedStyle(el).backgroundColor);
                                                         if (c[3] > 0.5) return c; } return [255, 255, 255, 1]; }
  var main = document.querySelector('article') || document.body;
  return Array.prototype.map.call(main.querySelectorAll('caption, figcaption'), function (el) {
    var fg = rgba(getComputedStyle(el).color), bg = back(el), a = fg[3];
    var mix = [0, 1, 2].map(function (i) { return fg[i] * a + bg[i] * (1 - a); });
    var l1 = lum(mix), l2 = lum(bg);
    return {text: el.textContent.trim().slice(0, 50), ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05)};
  });
})()
"""
MIN_CONTRAST = 4.5  # WCAG AA for body text


class Browser:
    """Headless Chromium driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
    JSON messages ended by a NUL byte on file descriptors 3 and 4), no client library needed."""

    def __init__(self, chromium: str, timeout: float = 120.0):
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()

        def fds() -> None:  # in the child: its fd 3 reads our commands, fd 4 writes the answers
            a, b = os.dup(to_child), os.dup(from_child)
            os.dup2(a, 3)
            os.dup2(b, 4)

        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--remote-debugging-pipe", "--no-first-run", "--allow-file-access-from-files", "about:blank"]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, preexec_fn=fds, close_fds=False)
        os.close(to_child)
        os.close(from_child)
        self._buf, self._id, self.timeout, self.session = b"", 0, timeout, None
        self.events: list[dict] = []

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, session: bool = True) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url: str, view: Viewport) -> None:
        """A new tab at ``view``'s device metrics, showing ``url`` once it has loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", {"width": view.width, "height": view.height,
                                                         "deviceScaleFactor": view.scale, "mobile": view.mobile})
        self.send("Page.enable")
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        res = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"in the page: {res['exceptionDetails'].get('exception', {}).get('description')}")
        return res["result"].get("value")

    def screenshot(self, path: Path) -> None:
        png = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})["data"]
        Path(path).write_bytes(base64.b64decode(png))

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        os.close(self._r)
        os.close(self._w)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class PageReport:
    """What a reader would see broken (``problems``) or hard to read (``warnings``) on one page."""

    page: str
    width: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    math: int = 0
    verdicts: list[dict] = field(default_factory=list)  # each: text, cut (px out of view), shown
    viewport: int = 0  # the layout width the page was rendered at (CSS px)
    bottom_line: dict | None = None  # the bottom-line box's top and bottom, px from the top of the page (or None)


def find_chromium() -> str | None:
    """A Chromium executable, or None (then the site check is skipped)."""
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def figure_text_px(src: str) -> float | None:
    """The smallest text of the PNG figure at ``src`` (a file:// or data: URL), in px at its drawn size,
    as :func:`rgr.chapters.style.set_style` records it in the PNG; None when not recorded."""
    from io import BytesIO

    from PIL import Image

    if src.startswith("data:image/png;base64,"):
        raw = BytesIO(base64.b64decode(src.split(",", 1)[1]))
    elif src.startswith("file://") and src.lower().endswith(".png"):
        raw = Path(unquote(urlparse(src).path))
    else:
        return None
    try:
        with Image.open(raw) as im:
            value = getattr(im, "text", {}).get(TEXT_KEY)
    except OSError:
        return None
    return float(value) if value else None


def _figure_findings(report: PageReport, images: list[dict]) -> None:
    for im in images:
        name = im["src"].rsplit("/", 1)[-1][:24]
        if not im["ok"]:
            report.problems.append(f"image did not load: {name}")
            continue
        if not im["drawn"]:
            continue
        scale = im["shown"] / im["drawn"]
        if scale < MIN_FIGURE_SCALE - 0.005:
            report.problems.append(f"figure shown at {scale:.0%} of its size ({im['drawn']:.0f} px drawn, "
                                   f"{im['shown']:.0f} shown; at least {MIN_FIGURE_SCALE:.0%}): {name}")
        text = figure_text_px(im["src"])
        if text is None:
            report.warnings.append(f"figure's text size not recorded (re-execute its chapter): {name}")
        elif text * scale < MIN_TEXT_PX - 0.05:
            report.problems.append(f"figure text shown at {text * scale:.1f} px (drawn at {text:.1f} px; "
                                   f"at least {MIN_TEXT_PX:.0f}): {name}")


def check_page(page: Path, chromium: str, width: str = "desktop", screenshots: Path | None = None) -> PageReport:
    """Render ``page`` (a built HTML file) at ``width`` (a key of :data:`WIDTHS`) and list what a reader
    would see broken."""
    page = Path(page).resolve()
    view = WIDTHS[width]
    report = PageReport(str(page), width)
    probe = PROBE.replace("WIDTH", str(view.width)).replace("VERDICT", VERDICT_CLASS)
    with Browser(chromium) as browser:
        browser.open(page.as_uri(), view)
        try:
            r = browser.evaluate(probe)
        except RuntimeError as e:
            report.problems.append(f"the page check failed in the browser: {e}")
            return report
        if screenshots is not None:
            screenshots.mkdir(parents=True, exist_ok=True)
            browser.screenshot(screenshots / f"{page.stem}-{width}.png")
        dark = browser.evaluate(DARK_CAPTIONS) if width == "desktop" else []
    report.math, report.viewport = r["math"], r["viewport"]
    report.problems += [f"raw LaTeX: {t!r}" for t in r["raw"]]
    if r["merror"]:
        report.problems.append(f"{r['merror']} MathJax error(s)")
    if r["unrendered"]:
        report.problems.append(f"{r['unrendered']} maths element(s) not typeset")
    _figure_findings(report, r["images"])
    if width == "desktop":
        column = r["column"]
        for t in r["tables"]:
            if t["width"] > column + 1:
                report.problems.append(f"table {t['width']} px wide in a {column:.0f}-px column: {t['name']!r}")
    for c in dark:
        if c["ratio"] < MIN_CONTRAST:
            report.problems.append(f"caption at {c['ratio']:.1f}:1 contrast in dark mode (at least {MIN_CONTRAST}): "
                                   f"{c['text']!r}")
    report.verdicts = r["verdicts"]
    for v in r["verdicts"]:
        if not v["shown"] or v["cut"] > 1:
            how = "hidden" if not v["shown"] else f"{v['cut']} px out of view"
            report.problems.append(f"verdict label {v['text']!r} {how} (sideways scrolling needed)")
    if r["overflow"] > 1:
        report.problems.append(f"page {r['overflow']} px wider than the screen")
    report.bottom_line = r.get("bottomLine")
    limit = BOTTOM_LINE_SCREENS[width] * view.height
    if report.bottom_line and report.bottom_line["bottom"] > limit:
        report.problems.append(f"the bottom-line box ends {report.bottom_line['bottom']} px down the page, past "
                               f"the first {limit} px")
    return report


PICK = r"""
(async function () {  // choose option INDEX in the first picker, as a reader would
  var sel = document.querySelector('.rgr-picker select');
  if (!sel) return null;
  sel.selectedIndex = INDEX; sel.dispatchEvent(new Event('change'));
  var shown = Array.prototype.map.call(sel.closest('.rgr-picker').querySelectorAll('img'),
                                       function (im) { return im.clientWidth > 0; });
  var fig = sel.closest('figure') || sel.closest('.rgr-picker'),
      top = document.querySelector('article') || document.body;
  top.insertBefore(fig, top.firstChild);  // to the top of the page, where a screenshot sees it
  await new Promise(function (r) { setTimeout(r, 100); });
  return shown;
})()
"""


def drive_picker(page: Path, chromium: str, index: int, width: str = "desktop",
                 screenshot: Path | None = None) -> list[bool] | None:
    """Choose option ``index`` of the page's first figure picker
    (:func:`rgr.chapters.figures.permutation_sweeps.figure_picker`) through its ``change`` event; returns which of its
    figures are shown afterwards (None: no picker on the page), and with ``screenshot`` saves the page with the
    picker's figure moved to its top."""
    with Browser(chromium) as browser:
        browser.open(Path(page).resolve().as_uri(), WIDTHS[width])
        shown = browser.evaluate(PICK.replace("INDEX", str(int(index))))
        if screenshot is not None:
            browser.screenshot(screenshot)
    return shown


def build_committed(out: Path, root: Path = ROOT) -> Path:
    """Build the site into ``out`` from the chapters' committed outputs (no execution: seconds, not
    the minutes of ``tasks.py book``); returns the html folder. Same config otherwise, -n -W."""
    config = (root / "_config.yml").read_text(encoding="utf-8")
    config = config.replace("execute_notebooks: cache", 'execute_notebooks: "off"')
    config = config.replace("rgr_site: book/_ext", f"rgr_site: {root / 'book' / '_ext'}")
    if 'execute_notebooks: "off"' not in config:
        raise ValueError("_config.yml: execute.execute_notebooks is no longer `cache`; update build_committed")
    out.mkdir(parents=True, exist_ok=True)
    (out / "_config.yml").write_text(config, encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([str(jb), "build", str(root), "-n", "-W", "--keep-going", "--config", str(out / "_config.yml"),
                    "--path-output", str(out)], check=True, capture_output=True, env=env, timeout=900)
    return out / "_build" / "html"


def site_pages(html: Path) -> list[Path]:
    return sorted((html / "book").glob("*.html"))


def main(argv: list[str]) -> int:
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found (Debian: apt-get install chromium); site check skipped")
        return 0
    shots = None
    if "--screenshots" in argv:
        i = argv.index("--screenshots")
        shots = Path(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    pages = [Path(a) for a in argv] or site_pages(ROOT / "_build" / "html")
    if not pages:
        print("no built pages: run `python3 tasks.py book` first")
        return 1
    bad = 0
    for page in pages:
        for width in WIDTHS:
            rep = check_page(page, chromium, width, shots)
            status = "ok" if not rep.problems else f"{len(rep.problems)} problem(s)"
            print(f"{page.name:28s} {width:8s} {rep.math:4d} formulas  {status}, {len(rep.warnings)} warning(s)")
            for p in rep.problems:
                print("    - problem:", p)
            for p in rep.warnings:
                print("    - warning:", p)
            bad += bool(rep.problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
