# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "probes": function_graph on the bounce functions, for the jobs
# flagged "probe" (BL_JOBS "DISK:JOB:probe"). Its reader is
# bench/analysis/monitors/probes.py (the time of each bounce at submit and
# at completion, per GiB). The buffer is sized the same in every variant.
# The tracer is set for a probed job only: with it set, each filtered call
# pays the graph hooks (about 400 instructions) even while tracing_on is 0.
#
# Once per boot, into $R:
#   probes.txt   the functions traced (those this kernel has; none, and
#                no file, without function_graph)
# Per probed job, into DIR (nothing in a job that is not probed):
#   probes                 the functions traced
#   probe-trace.txt.gz     the trace
#   probe-overrun.txt      "cpuN COUNT" events lost per CPU: said, never
#                          silently missing
# A kernel without the bounce functions (post) traces what it has: its
# probes file does not name them, and they give no time (not 0).

# The bounce functions of block/bounce.c, and bio_endio, which the
# completion handlers call for the original bio: its time is not the
# bounce's own.
PROBES_FUNCS='__blk_queue_bounce bounce_end_io_read bounce_end_io_write bounce_end_io bio_endio'
# Per CPU; the same in every variant, so lowmem use does not differ.
PROBES_BUF_KB=4096

probes_setup()
{
	local f
	PROBES=''
	grep -qw function_graph "$TRACE/available_tracers" 2>/dev/null || return 0
	echo 0 >"$TRACE/tracing_on"
	echo $PROBES_BUF_KB >"$TRACE/buffer_size_kb"
	: >"$TRACE/set_ftrace_filter"
	for f in $PROBES_FUNCS; do
		echo "$f" >>"$TRACE/set_ftrace_filter" 2>/dev/null && PROBES="$PROBES $f"
	done
	PROBES=${PROBES# }
	echo "$PROBES" >"$1/probes.txt"
	[ -n "$PROBES" ] || return 0
	say "probes: function_graph on $PROBES (${PROBES_BUF_KB} kB per cpu), probed jobs only"
}

probes_start()
{
	PROBES_ON=''
	[ "$4" = probe ] && [ -n "$PROBES" ] || return 0
	PROBES_ON=1
	JOB_NOTES="$JOB_NOTES with probes"
	echo function_graph >"$TRACE/current_tracer"
	: >"$TRACE/trace"
	echo 1 >"$TRACE/tracing_on"
}

probes_stop()
{
	local dir=$1 c
	[ -n "$PROBES_ON" ] || return 0
	echo 0 >"$TRACE/tracing_on"
	gzip -1 -c "$TRACE/trace" >"$dir/probe-trace.txt.gz"
	for c in "$TRACE"/per_cpu/cpu*; do
		echo "${c##*/} $(awk '$1 == "overrun:" { print $2 }' "$c/stats")"
	done >"$dir/probe-overrun.txt"
	echo "$PROBES" >"$dir/probes"
	echo nop >"$TRACE/current_tracer"
}
