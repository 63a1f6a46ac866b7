# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "labmon": the lab's sampler (guest/helpers/labmon.c) reads
# /proc/meminfo, /proc/vmstat, /proc/pressure/memory and the bounce hist
# every BL_MON_INTERVAL_MS while a job runs. Its reader is
# bench/analysis/monitors/labmon.py (LowFree and HighFree minima, the
# Bounce: gauge).
#
# Per job, into DIR:
#   labmon.csv            one row per sample; an empty cell is a counter
#                         this kernel does not have (not 0)
#   labmon.err            labmon's messages
#   labmon-interval-ms    the interval
#   labmon-start-uptime   /proc/uptime when it started
#   labmon-off            instead of all of them, where the job file says
#                         "; bouncelab-labmon: off" (the I/O-size sweep's
#                         short jobs): no sample, so no metric, not 0. A
#                         sample costs about 250,000 instructions (2 ms of
#                         instruction time); in a window of 0.2 s one
#                         sample more or less, as the sampler's phase
#                         falls, moved IOPS by 1% from boot to boot.
# It samples the bounce-hist monitor's hist file while that monitor's
# trigger is set (BOUNCE_HIST_ON: bounce-hist starts first, 20 < 30),
# except on an exact clock: there each read sorts the trigger's whole
# map, about 78,000 instructions, 1.3 us per I/O of a 4 KiB job, paid
# only by kernels that have the event (it made post look 0.8% faster
# than pre on the control disk), and allocates, which under memory
# pressure is reclaim that only those kernels do. The bounce-hits column
# is then empty (not sampled); the job's count is still exact.

labmon_start()
{
	local dir=$1 hist=''
	LABMON_PID=''
	if [ "$(job_line labmon "$PLAN/jobs/$3")" = off ]; then
		echo "the job file says: bouncelab-labmon: off" >"$dir/labmon-off"
		return 0
	fi
	if [ -n "$BOUNCE_HIST_ON" ] && [ "${BL_INSN_WINDOWS:-}" != 1 ]; then
		hist="-b $BOUNCE_HIST_EV/hist"
	fi
	# shellcheck disable=SC2086 # two words or none
	labmon -i "$BL_MON_INTERVAL_MS" -o "$dir/labmon.csv" $hist \
		2>"$dir/labmon.err" &
	LABMON_PID=$!
	echo "$BL_MON_INTERVAL_MS" >"$dir/labmon-interval-ms"
	cut -d' ' -f1 /proc/uptime >"$dir/labmon-start-uptime"
}

labmon_stop()
{
	[ -n "$LABMON_PID" ] || return 0
	kill "$LABMON_PID" 2>/dev/null
	wait "$LABMON_PID"
}
