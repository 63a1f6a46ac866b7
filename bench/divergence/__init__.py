# SPDX-License-Identifier: GPL-2.0
"""Where two boots of one bundle part (bench/diverge): compare.py."""
