#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The functional truths of the series, each checked by booting the real
# guest (bench/guest-run) and reading what it measured:
#
#   variant    usb knob  expected
#   pre        off       usb and virtio disks work; 0 bounces
#   pre        on        usb disk works; 0 bounces (the inverted check)
#   pre-fixed  on        usb disk works; bounces > 0 on direct reads and
#                        writes of the usb disk; 0 on virtio
#   pre-fixed  off       0 bounces
#   post       on        usb-storage refuses the probe with its warning; no
#                        usb disk; virtio works
#   post       off       both disks work; Bounce: is 0
#
# Every job that writes verifies its data (crc32c); any fio error or verify
# error fails the test. Then the bounds: a guest that panics and one that
# hangs are killed, reported as failed, and keep their serial log.
#
# Kernels and the guest must be built (make test does both first). Boots are
# kept in $BOUNCELAB_CACHE/guest-test/<time>/.
set -uo pipefail

. "$(dirname "$0")/lib.sh"

RUNS=$BL_CACHE/guest-test/$(date +%Y%m%d-%H%M%S)-$$
WV=smoke-randwrite-verify.fio
RR=smoke-randread.fio
POST_REFUSAL='USB Mass Storage device not support on this HCD'

# boot NAME VARIANT KNOB(0|1) JOBS...: one guest; prints nothing, the
# folder is $RUNS/NAME.
boot()
{
	local name=$1 variant=$2 knob=$3 start rc=0
	shift 3
	local args=(-v "$variant" -o "$RUNS/$name" -j "$*" -d 64 -t 600)
	[ "$knob" = 1 ] && args+=(-u)
	start=$(bl_now)
	"$BL_ROOT/bench/guest-run" "${args[@]}" >"$RUNS/$name.out" 2>&1 || rc=$?
	bl_log "guest-test: $name: $(cat "$RUNS/$name/status" 2>/dev/null || echo 'no status') ($(( $(bl_now) - start ))s)"
	return $rc
}

# Job folder N of boot NAME.
jobdir()
{
	ls -d "$RUNS/$1/guest/jobs/$(printf '%02d' "$2")-"* 2>/dev/null | head -n 1
}

# The job ran, fio exited 0 and reported no error (verify errors included).
job_ok()
{
	local d
	d=$(jobdir "$1" "$2")
	[ -n "$d" ] || { echo "no job $2 in $1"; return 1; }
	[ ! -f "$d/skipped" ] || { echo "skipped: $(cat "$d/skipped")"; return 1; }
	[ "$(cat "$d/fio.rc")" = 0 ] ||
		{ echo "fio rc $(cat "$d/fio.rc")"; cat "$d/fio.stderr"; return 1; }
	python3 - "$d/fio.json" <<-'PY'
	import json, sys
	jobs = json.load(open(sys.argv[1]))["jobs"]
	bad = [(j["jobname"], j["error"]) for j in jobs if j["error"]]
	ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)
	if bad or ios == 0:
	    sys.exit("fio errors %s, %d I/Os" % (bad, ios))
	PY
}

bounces()
{
	cat "$(jobdir "$1" "$2")/bounces" 2>/dev/null
}

# check_bounces NAME JOB OP VALUE: the job's counted bounces compare so.
check_bounces()
{
	local n
	n=$(bounces "$1" "$2")
	case $3 in
	eq) [ "$n" = "$4" ] ;;
	gt) [ "$n" != absent ] && [ -n "$n" ] && [ "$n" -gt "$4" ] ;;
	esac || { echo "bounces: '$n', wanted $3 $4"; return 1; }
}

disk_absent()
{
	grep -qx "$2 absent .*" "$RUNS/$1/guest/disks.txt" ||
		{ cat "$RUNS/$1/guest/disks.txt"; return 1; }
}

meminfo_bounce_zero()
{
	grep -Eq '^Bounce: +0 kB$' "$RUNS/$1/guest/proc-end/meminfo"
}

# row NAME VARIANT KNOB JOBS: boot it (two tests); ROW_OK says whether
# the row's own checks (rcheck) can run.
row()
{
	local name=$1
	shift
	ROW_OK=0
	if boot "$name" "$@"; then
		ROW_OK=1
		t_ok "$name: guest ran its plan"
		t_check "$name: clocksource is hpet" \
			grep -qx hpet "$RUNS/$name/guest/clocksource.txt"
		return
	fi
	t_fail "$name: guest ran its plan" "status: $(cat "$RUNS/$name/status" 2>/dev/null)" \
		"$(tr -d '\r' <"$RUNS/$name/serial.log" 2>/dev/null | grep -v '^Jobs:' | tail -n 8)"
	t_skip "$name: clocksource is hpet" "the boot failed"
}

# rcheck NAME COMMAND...: t_check within a row, skipped when its boot failed.
rcheck()
{
	if [ "$ROW_OK" = 1 ]; then
		t_check "$@"
	else
		t_skip "$1" "the boot failed"
	fi
}

test_truth_table()
{
	local n

	n=pre-knob-off
	row $n pre 0 "usb:$WV virtio:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: 0 bounces on usb" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 2 eq 0

	n=pre-knob-on
	row $n pre 1 "usb:$WV usb:$RR"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: usb read works" job_ok $n 2
	rcheck "$n: 0 bounces (inverted check)" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on reads (inverted check)" check_bounces $n 2 eq 0

	n=pre-fixed-knob-on
	row $n pre-fixed 1 "usb:$WV usb:$RR virtio:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: usb read works" job_ok $n 2
	rcheck "$n: virtio write+verify works" job_ok $n 3
	rcheck "$n: bounces > 0 on usb writes+verify ($(bounces $n 1))" \
		check_bounces $n 1 gt 0
	rcheck "$n: bounces > 0 on usb direct reads ($(bounces $n 2))" \
		check_bounces $n 2 gt 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 3 eq 0

	n=pre-fixed-knob-off
	row $n pre-fixed 0 "usb:$WV virtio:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: 0 bounces on usb (DMA HCD)" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 2 eq 0

	n=post-knob-on
	row $n post 1 "usb:$WV virtio:$WV"
	rcheck "$n: no usb disk" disk_absent $n usb
	rcheck "$n: usb-storage warns it refuses the probe" \
		grep -q "$POST_REFUSAL" "$RUNS/$n/guest/dmesg.txt"
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: no bounce tracepoint" check_bounces $n 2 eq absent

	n=post-knob-off
	row $n post 0 "usb:$WV virtio:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: Bounce: 0 kB" meminfo_bounce_zero $n
	rcheck "$n: no usb-storage refusal" \
		bash -c "! grep -q '$POST_REFUSAL' '$RUNS/$n/guest/dmesg.txt'"
}

# A boot that must fail: exit non-zero, status saying REASON, serial log
# kept, within LIMIT seconds of wall time.
expect_failed_boot()
{
	local name=$1 reason=$2 limit=$3 start secs rc=0
	shift 3
	start=$(bl_now)
	"$BL_ROOT/bench/guest-run" -o "$RUNS/$name" "$@" >"$RUNS/$name.out" 2>&1 || rc=$?
	secs=$(( $(bl_now) - start ))
	if [ $rc != 0 ] && grep -q "^failed: $reason" "$RUNS/$name/status" &&
	   [ -s "$RUNS/$name/serial.log" ] && [ $secs -le "$limit" ]; then
		t_ok "$name: reported failed ($(cat "$RUNS/$name/status" | cut -c1-60)...) in ${secs}s, serial log kept"
	else
		t_fail "$name: reported failed with '$reason' within ${limit}s" \
			"rc $rc after ${secs}s, status: $(cat "$RUNS/$name/status" 2>/dev/null)"
	fi
}

test_bounds()
{
	expect_failed_boot panic "kernel panic" 120 \
		-v pre -j "virtio:$WV" -d 64 -t 300 -a "rdinit=/no-such-init"
	expect_failed_boot hang "guest killed after the 25s bound" 60 \
		-v pre -j "virtio:$WV" -d 64 -t 25 -s 600
}

mkdir -p "$RUNS"
# six rows of 2 + 4, 4, 6, 3, 4, 4 checks; two bounds
t_plan 39
test_truth_table
test_bounds
t_summary
