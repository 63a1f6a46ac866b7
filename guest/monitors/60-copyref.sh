# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "copyref": this boot's own speed. TCG runs up to 50% faster or
# slower from one boot to the next, and a plain copy is what a bounce
# costs at least: copyref (guest/helpers/copyref.c) times a 4 KiB and a
# 64 KiB memcpy once per boot, before the pressure and the jobs. Its reader
# is bench/analysis/monitors/copyref.py (memcpy_4k_us and memcpy_64k_us,
# columns of every job of the boot).
#
# Once per boot, into $R:
#   copyref.txt   "key=value" lines (copy_4k_ns_median, ...)
#   copyref.err   its messages; a failed copyref leaves copyref.txt
#                 without those keys: not measured, not 0
# Nothing per job.

copyref_setup()
{
	copyref >"$1/copyref.txt" 2>"$1/copyref.err" ||
		say "copyref failed: $(cat "$1/copyref.err")"
}
