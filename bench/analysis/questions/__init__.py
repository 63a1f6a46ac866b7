# SPDX-License-Identifier: GPL-2.0
"""The questions the report answers, one module each, in report order.

Every module has the same contract:

  TITLE                              its section's heading
  first_screen(run, verdicts)        its lines on the report's first screen
  section(run, verdicts)             its section's markdown lines ([]: none)
  figures(run, verdicts, p, everything)
                                     draws its figures with plots.Plotter p

The report shows a question's figures at the end of its section (each
figure's "question" is the module's name; the forests stand under the
relevant verdicts). A question answers from the run's resolved facts (tidy.Run) and the
verdicts (stats.verdicts); the core (tidy, stats, plots, md) knows no
question. A new question is a new module with these four names, added
to QUESTIONS where its section should stand.
"""
import os

from .. import plots
from . import bounced, cost, counted, integrity, memory, sweep, usbpio

QUESTIONS = (cost, counted, usbpio, sweep, memory, integrity, bounced)


def name(q):
    return q.__name__.rsplit(".", 1)[-1]


def make_plots(run, verdicts, outdir, gp_dir=plots.GP_DIR, everything=False):
    """Every question's figures; returns the Plotter (figures, errors).
    everything: also the per-job figures, and an SVG beside every PNG."""
    os.makedirs(outdir, exist_ok=True)
    p = plots.Plotter(outdir, gp_dir, svg_kinds=None if everything else plots.SVG_KINDS)
    for q in QUESTIONS:
        p.question = name(q)
        q.figures(run, verdicts, p, everything)
    return p
