# SPDX-License-Identifier: GPL-2.0
"""bouncelab analysis: a run folder in, tidy tables, verdicts, plots and a
report out.

  rawfiles  parse the files the guest and the runner write
  tidy      a run -> tidy DataFrame, job table, exclusions, summary.csv
  monitors  one reader per guest monitor (guest/monitors/): the metrics
            of what each wrote beside fio's, run by tidy
  stats     permutation tests, their ratio CIs and verdicts for every pair
            of variants
  plots     data files for plots/*.gp and the gnuplot calls
  report    report.md and the short console summary
  bounce_summary
            the bounced bios per variant and disk and the failed boots,
            at the end of bench/compare (bench/analyze --bounce-summary)

The regression tracker across runs and kernel versions (bench/history)
is its own package, bench/tracker; it imports this one, never the
reverse.
"""
