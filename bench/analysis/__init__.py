# SPDX-License-Identifier: GPL-2.0
"""bouncelab analysis: a run folder in, tidy tables, verdicts, figures and
a report out (bench/analyze). A small core, and the questions beside it:

  tidy       the run: its tables and its facts, resolved once (tidy.Run)
  rawfiles   parse the files the guest and the runner write
  monitors   one reader per guest monitor (guest/monitors/)
  stats      permutation tests, ratio CIs and verdicts of every pair
  md, plots  the table writer and the figure writer (plots/*.gp)
  questions  one module per question the report answers: its first-screen
             lines, its section and its figures (questions/__init__.py)
  report     report.md and tables.md: the questions in order; html.py the
             same as one page
  explain    where two kernels' instructions differ (bench/explain)

The regression tracker (bench/history) is bench/tracker and the
divergence comparison (bench/diverge) bench/divergence: they import
this package, never the reverse.
"""
