# SPDX-License-Identifier: GPL-2.0
"""Data files for plots/*.gp and the gnuplot calls that turn them into PNG
and SVG files.

Every figure is written to OUTDIR/NAME.png (and NAME.svg for the kinds in
SVG_KINDS, or for all with everything=True) from OUTDIR/data/NAME.dat; a
Plotter records only the figures whose files exist, so the report never
links a plot that failed. Which figures a run gets is each question's
(questions/, questions.make_plots); the per-job ones only with
bench/analyze --all-plots.
"""
import os
import re
import shutil
import subprocess

import numpy as np


GP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots")

# Pixel size of each kind of figure (PNG; SVG gets the same size in pt).
SIZES = {
    "latency-percentiles": (900, 560),
    "bars": (1000, 560),
    "memory-timeline": (900, 820),
    "memory-disk": (1000, 760),
    "bounced-bytes": (900, 560),
    "forest": (900, 300),
    "dose-response": (1000, 760),
    "pressure-timeline": (1000, 820),
    "sweep": (1000, 520),
    "budget": (1000, 560),
}
# Kinds that also get an SVG in a default run: the forest plots, whose
# row labels one zooms into.
SVG_KINDS = ("forest",)
# Room for one x label ("smoke-randwrite-verify" at 8 pt): wide figures
# grow by this much per group or bar instead of overlapping their labels.
PX_PER_LABEL = 130
GNUPLOT_TIMEOUT = 120


def slug(*parts):
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", "-".join(str(p) for p in parts))


def num(x):
    return "?" if x is None or not np.isfinite(x) else f"{x:.6g}"


def q(text):
    """A double-quoted gnuplot data-file string."""
    return '"' + str(text).replace('"', "'") + '"'


def lines(*parts):
    """A multi-line gnuplot label (gnuplot expands \\n in quoted data)."""
    return "\\n".join(str(p) for p in parts)


def _gp_str(text):
    """A single-quoted gnuplot string for -e (a ' is written twice)."""
    return "'" + str(text).replace("'", "''") + "'"


class Plotter:
    def __init__(self, outdir, gp_dir=GP_DIR, gnuplot="gnuplot", sizes=None,
                 svg_kinds=None):
        self.outdir = outdir
        self.svg_kinds = svg_kinds      # None: every kind (history, versions)
        self.sizes = sizes or SIZES
        self.datadir = os.path.join(outdir, "data")
        self.gp_dir = os.path.abspath(gp_dir)
        self.gnuplot = shutil.which(gnuplot)
        self.figures = []
        self.errors = []
        self.question = ""      # the question (module) whose figures are drawn

    def render(self, script, name, data, params, caption, group, width=None, height=None):
        """Write the data file, run gnuplot for PNG and SVG, record the figure if its files
        exist. width, height: above the size table's, for figures that grow with their bars."""
        os.makedirs(self.datadir, exist_ok=True)
        datafile = os.path.join(self.datadir, name + ".dat")
        with open(datafile, "w", encoding="utf-8") as f:
            f.write(data)
        if not self.gnuplot:
            self.errors.append("gnuplot not found: no plots")
            return
        base_w, base_h = self.sizes[script]
        width = max(base_w, int(width or 0))
        height = max(base_h, int(height or 0))
        outs = {}
        svg = self.svg_kinds is None or script in self.svg_kinds
        for ext in ("png", "svg") if svg else ("png",):
            out = os.path.join(self.outdir, f"{name}.{ext}")
            args = dict(params, datafile=datafile, outfile=out, width=width, height=height)
            expr = "; ".join(f"{k}={_gp_str(v) if isinstance(v, str) else v}"
                             for k, v in args.items())
            try:
                res = subprocess.run(
                    [self.gnuplot, "-e", expr, os.path.join(self.gp_dir, script + ".gp")],
                    capture_output=True, text=True, timeout=GNUPLOT_TIMEOUT)
                err = res.stderr.strip() if res.returncode else ""
            except (OSError, subprocess.TimeoutExpired) as e:
                err = str(e)
            if err or not os.path.isfile(out) or os.path.getsize(out) == 0:
                self.errors.append(f"{script} -> {name}.{ext}: {err or 'no output'}")
                if os.path.isfile(out):
                    os.remove(out)
                continue
            outs[ext] = out
        if "png" in outs:
            self.figures.append(dict(kind=script, name=name, caption=caption, group=group,
                                     question=self.question, png=outs["png"],
                                     svg=outs.get("svg"), width=width, height=height))


def variant_index(run):
    return {v: i + 1 for i, v in enumerate(run.labels)}, run.labels
