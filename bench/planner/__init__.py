# SPDX-License-Identifier: GPL-2.0
"""bouncelab's planner: what a bench/compare run boots, decided in one
place. bench/plan is its command line; bench/compare keeps the boot
loop, the signals and the locking. Each module's header says its part.
It imports nothing of the analysis; lab.conf and bench/matrix are read
through bench/lab, their one parsers.
"""
