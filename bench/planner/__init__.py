# SPDX-License-Identifier: GPL-2.0
"""bouncelab's planner: what a bench/compare run boots, decided in one
place (bench/plan is its command line; bench/compare keeps the boot
loop, the signals and the locking).

  options   compare's arguments -> Options; every bad one is a BadArg
            (exit 2)
  check     the arguments against lab.conf, kernels/variants and the job
            files, then what a real run needs built (exit 1 when not)
  boots     labels, clocks, the planned boots (matrix.tsv rows), each
            boot's job list and bench/guest-run arguments
  state     plan.json: the resolved plan a run keeps between calls
  meta      meta.json, with json.dump
  estimate  --dry-run: the boots listed and their time estimated

The planner imports nothing of the analysis: the bounce summary at the
end of a run is bench/analyze --bounce-summary.

lab.conf and bench/matrix are read through lab.labconf and lab.matrix,
their one parsers (bench/lab, shared with the analysis).
"""
