# SPDX-License-Identifier: GPL-2.0
"""Regression tracking across runs (bench/history), one module per job:

  table     history.csv: its columns, load, save, merge, the order of
            runs and variants
  runs      a run folder -> its history rows
  changes   every run against the previous run of the same cell
  figures   the headline metrics over time (history-*.png/.svg)
  markdown  history.md
  commands  add, rebuild and plot, as bench/history calls them
  check     the newest run's headline moves beyond their smallest
            effect of interest (bench/history check)

tracker.versions puts the kernel versions on the x axis (versions-*.png,
"Across kernel versions" in history.md).
"""
