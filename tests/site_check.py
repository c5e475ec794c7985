"""Look at the built site the way a reader does: pages rendered in headless Chromium.

``python3 tasks.py check-site [page.html ...]`` (default: every page of _build/html/book/) loads each
page at desktop and phone width, waits for MathJax, and reports
- raw LaTeX left in the text (``$``, ``\\frac``, ``\\Omega(`` ... outside code) and MathJax errors,
- images that did not load and pages wider than the screen (text cut off or a sideways scroll of the
  whole page): problems, the exit status is 1;
- figures shown at under 60% of the size they were drawn at (their fonts shrink with them): warnings,
and, with ``--screenshots DIR``, saves a screenshot of each page at both widths.
Needs a Chromium (Debian: ``apt-get install chromium``); :func:`find_chromium` says whether there is one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
MIN_FIGURE_SCALE = 0.6  # a figure shown smaller than this fraction of its drawn size has unreadable fonts

PROBE = r"""
<script>
(function () {
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
  function probe() {
    try { report(); } catch (e) {
      var pre = document.createElement('pre'); pre.id = 'rgr-probe';
      pre.textContent = JSON.stringify({error: String(e)}); document.body.appendChild(pre);
    }
  }
  function report() {
    var main = document.querySelector('article') || document.body;
    var imgs = Array.prototype.map.call(main.querySelectorAll('img'), function (im) {
      if (im.closest('[hidden]')) return null;  // a picker's figures not chosen (rgr.chapters.interactive)
      var drawn = parseFloat(im.style.width) || parseFloat(im.getAttribute('width')) || im.naturalWidth;
      return {src: (im.getAttribute('src') || im.currentSrc || '').slice(0, 80), ok: im.complete && im.naturalWidth > 0,
              shown: im.clientWidth, drawn: drawn};
    }).filter(function (im) { return im !== null; });
    var r = {raw: rawTex(main), merror: main.querySelectorAll('mjx-merror').length,
             math: main.querySelectorAll('mjx-container').length,
             unrendered: main.querySelectorAll('.math:not(:has(mjx-container))').length,
             images: imgs, overflow: document.documentElement.scrollWidth - window.innerWidth};
    var pre = document.createElement('pre'); pre.id = 'rgr-probe'; pre.textContent = JSON.stringify(r);
    document.body.appendChild(pre);
  }
  var started = false;
  function tick() {  // once the page has loaded and MathJax (if the page has maths) has typeset it
    if (started) return;
    if (document.readyState !== 'complete') { setTimeout(tick, 100); return; }
    started = true;
    var p = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
    p.then(function () { setTimeout(probe, 200); }, function (e) { setTimeout(probe, 200); });
  }
  setTimeout(tick, 0);
})();
</script>
"""


@dataclass
class PageReport:
    """What a reader would see broken (``problems``) or hard to read (``warnings``) on one page."""

    page: str
    width: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    math: int = 0


def find_chromium() -> str | None:
    """A Chromium executable, or None (then the site check is skipped)."""
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _chromium(chromium: str, url: str, size: tuple[int, int], *extra: str) -> str:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=20000", *extra, url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    return res.stdout


def check_page(page: Path, chromium: str, width: str = "desktop", screenshots: Path | None = None) -> PageReport:
    """Render ``page`` (a built HTML file) at ``width`` and list what a reader would see broken."""
    page = Path(page).resolve()
    size = WIDTHS[width]
    report = PageReport(str(page), width)
    text = page.read_text(encoding="utf-8")
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=page.parent, prefix=".probe-", delete=False) as f:
        f.write(text.replace("</body>", PROBE + "</body>", 1))
        probe_path = Path(f.name)
    try:
        for _ in range(3):  # on a busy machine MathJax may not finish within one virtual-time budget
            dom = _chromium(chromium, probe_path.as_uri(), size, "--dump-dom")
            m = re.search(r'<pre id="rgr-probe"[^>]*>(.*?)</pre>', dom, re.S)
            if m:
                break
    finally:
        probe_path.unlink()
    if not m:
        report.problems.append("the page did not finish loading (no probe result)")
        return report
    r = json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"'))
    if "error" in r:
        report.problems.append(f"the page check failed in the browser: {r['error']}")
        return report
    report.math = r["math"]
    report.problems += [f"raw LaTeX: {t!r}" for t in r["raw"]]
    if r["merror"]:
        report.problems.append(f"{r['merror']} MathJax error(s)")
    if r["unrendered"]:
        report.problems.append(f"{r['unrendered']} maths element(s) not typeset")
    for im in r["images"]:
        if not im["ok"]:
            report.problems.append(f"image did not load: {im['src']}")
        elif im["drawn"] and im["shown"] / im["drawn"] < MIN_FIGURE_SCALE:
            report.warnings.append(
                f"figure shown at {im['shown'] / im['drawn']:.0%} of its size ({im['drawn']:.0f} px drawn): {im['src']}")
    if r["overflow"] > 1:
        report.problems.append(f"page {r['overflow']} px wider than the screen")
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        shot = screenshots / f"{page.stem}-{width}.png"
        _chromium(chromium, page.as_uri(), (size[0], 3 * size[1]), f"--screenshot={shot}")
    return report


PICK = r"""
<script>
window.addEventListener('load', function () {  // choose option INDEX in the first picker, as a reader would
  var sel = document.querySelector('.rgr-picker select');
  var out = document.createElement('pre'); out.id = 'rgr-pick';
  if (sel) {
    sel.selectedIndex = INDEX; sel.dispatchEvent(new Event('change'));
    var shown = Array.prototype.map.call(sel.closest('.rgr-picker').querySelectorAll('img'),
                                         function (im) { return im.clientWidth > 0; });
    out.textContent = JSON.stringify(shown);
    var fig = sel.closest('figure') || sel.closest('.rgr-picker'), top = document.querySelector('article') || document.body;
    top.insertBefore(fig, top.firstChild);  // to the top of the page, where a screenshot sees it
  }
  document.body.appendChild(out);
});
</script>
"""


def drive_picker(page: Path, chromium: str, index: int, width: str = "desktop",
                 screenshot: Path | None = None) -> list[bool] | None:
    """Choose option ``index`` of the page's first figure picker (:func:`rgr.chapters.interactive.figure_picker`)
    through its ``change`` event; returns which of its figures are shown afterwards (None: no picker on
    the page), and with ``screenshot`` saves the page with the picker's figure moved to its top."""
    page = Path(page).resolve()
    text = page.read_text(encoding="utf-8").replace("</body>", PICK.replace("INDEX", str(int(index))) + "</body>", 1)
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=page.parent, prefix=".pick-", delete=False) as f:
        f.write(text)
        path = Path(f.name)
    try:
        dom = _chromium(chromium, path.as_uri(), WIDTHS[width], "--dump-dom")
        if screenshot is not None:
            _chromium(chromium, path.as_uri(), WIDTHS[width], f"--screenshot={screenshot}")
    finally:
        path.unlink()
    m = re.search(r'<pre id="rgr-pick"[^>]*>(.*?)</pre>', dom, re.S)
    if m is None:
        raise RuntimeError(f"{page.name}: the page did not finish loading")
    return json.loads(m.group(1)) if m.group(1) else None


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
