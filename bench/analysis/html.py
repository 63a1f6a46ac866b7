# SPDX-License-Identifier: GPL-2.0
"""report.html: report.md as one self-contained page, written beside it
by bench/analyze.

The same sections in the same order (the first screen at the top, then a
section per question), rendered by Debian's python3-markdown (its tables
extension for the pipe tables). Every figure the report shows is inline
as a data: URI, so the page opens alone, from anywhere; links to the
run's other files (tables.md, SVGs) stay relative to the run folder.

A figure that does not render says so on the page: a few lines of script
mark each image data-rendered="yes" or "no" once the browser has loaded
it, and put a line under a broken one (tests/report-html-test.sh reads
those marks in a headless chromium).
"""
import base64
import html
import os
import re

try:
    import markdown
except ImportError:             # python3-markdown: bench/analyze says so
    markdown = None

REPORT_HTML = "report.html"
_IMG = re.compile(r'(<img\b[^>]*\bsrc=")([^"]+)(")')
_STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 1em auto; padding: 0 1em;
       line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; }
th { background: #eee; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
code { background: #f4f4f4; }
.broken { color: #b00; font-weight: bold; }
"""
# Marks every image once the browser has loaded it (or failed to).
_SCRIPT = """
document.querySelectorAll("img").forEach(function (img) {
  function mark() {
    var ok = img.complete && img.naturalWidth > 0;
    img.setAttribute("data-rendered", ok ? "yes" : "no");
    if (!ok) {
      var p = document.createElement("p");
      p.className = "broken";
      p.textContent = "figure did not render: " + img.alt;
      img.after(p);
    }
  }
  if (img.complete) { mark(); } else {
    img.addEventListener("load", mark);
    img.addEventListener("error", mark);
  }
});
"""


def _inline(match, run_dir):
    """An <img> whose file is in the run folder, as a data: URI."""
    src = html.unescape(match.group(2))
    path = os.path.join(run_dir, src)
    if src.startswith(("data:", "http:", "https:")) or not os.path.isfile(path):
        return match.group(0)
    kind = "svg+xml" if src.endswith(".svg") else "png"
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f"{match.group(1)}data:image/{kind};base64,{data}{match.group(3)}"


def render(md_text, run_dir, title):
    """The page of one report.md (its text), figures from run_dir."""
    body = markdown.markdown(md_text, extensions=["tables", "sane_lists"])
    body = _IMG.sub(lambda m: _inline(m, run_dir), body)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
            f"<body>\n{body}\n<script>{_SCRIPT}</script>\n</body>\n</html>\n")


def write(md_text, run_dir, title):
    """report.html of report.md's text in run_dir; returns its path, or
    None when python3-markdown is missing (the caller says so)."""
    if markdown is None:
        return None
    out = os.path.join(run_dir, REPORT_HTML)
    with open(out, "w", encoding="utf-8") as f:
        f.write(render(md_text, run_dir, title))
    return out
