# SPDX-License-Identifier: GPL-2.0
"""What the planner (bench/planner) and the analysis (bench/analysis) both
read about the lab:

  labconf  bench/lab.conf's one parser (lib/lab.sh runs it too:
           labconf.py --shell)
  paths    the results and cache folders, found as lib/common.sh does
"""
