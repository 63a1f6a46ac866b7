# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Monitor "proc": snapshots of the kernel's counters. Its reader is
# bench/analysis/monitors/proc.py (CPU per GiB, the time budget, reclaim,
# PSI; the block layer's bytes moved, every per-GiB figure's denominator).
#
# A snapshot is a folder of copies of /proc/meminfo, /proc/vmstat,
# /proc/stat, /proc/diskstats and /proc/pressure/memory, taken at:
#   $R/proc-start     when the guest starts, before its disks are set up
#   $R/proc-pressure  once the pressure hogs hold (pressure boots only)
#   $R/proc-end       when the guest ends, whatever the reason
#   DIR/before        per job, before its window (its file system, if it
#                     has one, is mounted already)
#   DIR/after         per job, after its window and after its file system
#                     is unmounted (the unmount's writeback is the job's)
# Missing means not measured, never 0: no pressure-memory where the kernel
# has no PSI; no snapshot folder where the guest never got there.

proc_snapshot()
{
	mkdir -p "$1"
	cat /proc/meminfo >"$1/meminfo"
	cat /proc/vmstat >"$1/vmstat"
	cat /proc/stat >"$1/stat"
	cat /proc/diskstats >"$1/diskstats"
	cat /proc/pressure/memory >"$1/pressure-memory" 2>/dev/null
}

proc_boot()
{
	proc_snapshot "$1/proc-start"
}

proc_pressure()
{
	proc_snapshot "$1/proc-pressure"
}

proc_before()
{
	proc_snapshot "$1/before"
}

proc_after()
{
	proc_snapshot "$1/after"
}

proc_end()
{
	proc_snapshot "$1/proc-end"
}
