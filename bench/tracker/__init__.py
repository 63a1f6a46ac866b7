# SPDX-License-Identifier: GPL-2.0
"""The regression tracker (bench/history); imports the analysis, never imported by it."""
