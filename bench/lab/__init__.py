# SPDX-License-Identifier: GPL-2.0
"""What the planner (bench/planner) and the analysis (bench/analysis) both
read about the lab, neither importing the other: lab.conf (labconf, the
parser lib/lab.sh runs too), bench/matrix (matrix), job names (jobname),
the results and cache folders (paths).
"""
