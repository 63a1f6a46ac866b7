# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "queue-limits": the block queue limits of each job's device, as
# the kernel set them (/sys/block/DEV/queue/). They bound how a bio is
# split into requests, so with the job's queue depth they say how many
# bounce pages a job can hold at once. Its reader is
# bench/analysis/monitors/queue_limits.py (columns of the job table, not
# metrics: the I/O-size sweep's predicted peak of bounce pages).
#
# Per job, into DIR, before the job's window (nothing runs in it):
#   queue-limits   "name value" lines: max_sectors_kb, max_hw_sectors_kb,
#                  max_segments, max_segment_size, logical_block_size,
#                  nr_requests; a limit the kernel does not have is left
#                  out. No file where the device has no queue folder.

QUEUE_LIMITS_NAMES="max_sectors_kb max_hw_sectors_kb max_segments max_segment_size logical_block_size nr_requests"

queue_limits_before()
{
	local dev q name
	dev=$(cat "$1/device" 2>/dev/null)
	q=/sys/block/${dev##*/}/queue
	[ -n "$dev" ] && [ -d "$q" ] || return 0
	for name in $QUEUE_LIMITS_NAMES; do
		[ -r "$q/$name" ] && echo "$name $(cat "$q/$name")"
	done >"$1/queue-limits"
}
