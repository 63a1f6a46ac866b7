# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "insn-profile": on an exact clock (the plan's BL_INSN_WINDOWS=1,
# bench/guest-run) the host's insnprof QEMU plugin
# (bench/qemu-plugin/insnprof.c) counts every instruction by kernel symbol
# between two marks of the guest's, one window per job. The marks are
# insnmark's (guest/helpers/insnmark.c): fio runs it just before the job's
# I/O starts and just after it ends (exec_prerun runs before fio starts
# the job's clock, exec_postrun after it stops it), so the window is the
# job's I/O and no more. Its reader is bench/analysis/monitors/
# insn_profile.py (the exact time budget of an I/O, its parts, and the
# bounced bios of an unprobed twin).
#
# Per job, into DIR (exact clock only):
#   insn-window   "open N NS" and "close N NS": the window's number (the
#                 job's N) and the guest clock at both ends
# On the host, into the boot folder (not the guest's):
#   insnprof.txt  the plugin's windows: user and kernel instructions and,
#                 per kernel symbol, instructions, calls and rep movs
# Without both (another clock, or a boot without the plugin) the job was
# not counted: no metric, not 0.

insn_profile_start()
{
	[ "${BL_INSN_WINDOWS:-}" = 1 ] || return 0
	JOB_FIO_OPTS="$JOB_FIO_OPTS
--exec_prerun=insnmark open $5 $1/insn-window
--exec_postrun=insnmark close $5 $1/insn-window"
}
