# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "bounce-occupancy": the bounce pages in flight, counted exactly
# where block/bounce.c takes them from its pool and gives them back (the
# lab-bounce patch: /sys/module/bounce/parameters/lab_occupancy; writing 1
# opens a window, 0 closes it). Its reader is
# bench/analysis/monitors/bounce_occupancy.py (peak and mean pages, pages
# taken, mempool_alloc time, the pool's reserve).
#
# Per job, into DIR:
#   bounce-occupancy   the window's "name value" lines, or
#                      off      not counted: the unprobed twin of a probed
#                               job (the count's clock reads cost about 1%
#                               of a 4 KiB I/O, which the clean twin must
#                               not pay; its probed twin is counted)
#                      absent   the kernel has no bounce code (post)
#                      missing  the kernel has the bounce code but not the
#                               lab's counter
#                      none of them a count of 0.

BOUNCE_OCCUPANCY_FILE=/sys/module/bounce/parameters/lab_occupancy
BOUNCE_OCCUPANCY_EV=$TRACE/events/block/block_bio_bounce

bounce_occupancy_start()
{
	BOUNCE_OCCUPANCY_ON=''
	[ -f "$BOUNCE_OCCUPANCY_FILE" ] || return 0
	unprobed_twin "$2" "$3" "$4" && return 0
	echo 1 >"$BOUNCE_OCCUPANCY_FILE" && BOUNCE_OCCUPANCY_ON=1
}

bounce_occupancy_stop()
{
	if [ -n "$BOUNCE_OCCUPANCY_ON" ]; then
		echo 0 >"$BOUNCE_OCCUPANCY_FILE"
		cat "$BOUNCE_OCCUPANCY_FILE" >"$1/bounce-occupancy"
	elif [ -f "$BOUNCE_OCCUPANCY_FILE" ]; then
		echo off >"$1/bounce-occupancy"
	elif [ -d "$BOUNCE_OCCUPANCY_EV" ]; then
		echo missing >"$1/bounce-occupancy"
	else
		echo absent >"$1/bounce-occupancy"
	fi
}
