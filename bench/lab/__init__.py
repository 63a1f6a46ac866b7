# SPDX-License-Identifier: GPL-2.0
"""What the planner (bench/planner) and the analysis (bench/analysis) both
read about the lab; neither imports the other:

  labconf  bench/lab.conf's one parser (lib/lab.sh runs it too:
           labconf.py --shell)
  matrix   bench/matrix's one parser: the sets and their keys (the planner
           plans a set; the report names the set that decides tighter)
  paths    the results and cache folders, found as lib/common.sh does
"""
