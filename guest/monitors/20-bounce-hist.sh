# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "bounce-hist": the bounced bios of each job, counted by a hist
# trigger on the tracepoint block:block_bio_bounce. Its reader is
# bench/analysis/monitors/bounce_hist.py (bounces, bounced bytes per GiB).
#
# Per job, into DIR:
#   bounce-hist.txt  the trigger's hist file (hits and sectors per device,
#                    and the events it dropped)
#   bounces          the number of bounced bios, or
#                    absent    the kernel has no block_bio_bounce event
#                              (its bounce code is gone, post): nothing to
#                              count, not a count of 0
#                    insnprof  not counted here: any job but a probed twin
#                              on an exact clock, where the trigger would
#                              cost about 800 instructions a bounce, and
#                              labmon's reads of it lowmem allocations
#                              under pressure that a kernel without the
#                              event never makes; the insn-profile
#                              monitor's plugin counts them (the calls of
#                              the bounce completions)
# A job with neither file was not counted (missing, not 0).
# The serial log's "rc=" line of the job gets " bounces=N".
# BOUNCE_HIST_ON is 1 while the trigger is set (labmon samples it then).

BOUNCE_HIST_EV=$TRACE/events/block/block_bio_bounce
BOUNCE_HIST_TRIGGER='hist:keys=dev:vals=hitcount,nr_sector'

bounce_hist_start()
{
	BOUNCE_HIST_ON='' BOUNCE_HIST_BY_PLUGIN=''
	[ -d "$BOUNCE_HIST_EV" ] || return 0
	if [ "${BL_INSN_WINDOWS:-}" = 1 ] && [ "$4" != probe ]; then
		BOUNCE_HIST_BY_PLUGIN=1
		return 0
	fi
	echo "$BOUNCE_HIST_TRIGGER" >"$BOUNCE_HIST_EV/trigger"
	BOUNCE_HIST_ON=1
}

bounce_hist_stop()
{
	local dir=$1 hits
	if [ ! -d "$BOUNCE_HIST_EV" ]; then
		echo absent >"$dir/bounces"
	elif [ -n "$BOUNCE_HIST_BY_PLUGIN" ]; then
		echo insnprof >"$dir/bounces"
	else
		cat "$BOUNCE_HIST_EV/hist" >"$dir/bounce-hist.txt"
		echo "!$BOUNCE_HIST_TRIGGER" >"$BOUNCE_HIST_EV/trigger"
		hits=$(awk '$1 == "Hits:" { print $2 }' "$dir/bounce-hist.txt")
		echo "${hits:-0}" >"$dir/bounces"
	fi
	BOUNCE_HIST_ON=''
	JOB_NOTES="$JOB_NOTES bounces=$(cat "$dir/bounces")"
}
