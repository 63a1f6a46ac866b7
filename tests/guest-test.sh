#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The functional truths of the series, each checked by booting the real
# guest (bench/guest-run) and reading what it measured. Disks are those of
# bench/lab.conf: usb-pio/usb-dma (usb-storage knob on/off), ram-bounce/ram
# (scsi_debug no_highmem knob on/off), virtio.
#
#   variant    disks               expected
#   pre        knobs off           every disk works; 0 bounces
#   pre        knobs on            0 bounces (the inverted check); no bad
#                                  block; lowmem pressure reaches its target
#   pre-fixed  knobs on            bounces > 0 on usb-pio and ram-bounce,
#                                  0 on virtio and ram; sub-page writes
#                                  read back bad (the boot is still ok);
#                                  the probes time the bounces
#   pre-fixed  knobs off           0 bounces, 0 bad blocks; the buffered
#                                  integrity job reads the device back
#   post       knobs on            usb-storage refuses the probe; the
#                                  scsi_debug knob says it cannot bounce;
#                                  no bounce tracepoint; 0 bad blocks
#   post       knobs off           every disk works; Bounce: is 0
#
# Performance jobs verify their data (crc32c): any fio error or verify
# error fails the test. Integrity jobs count bad blocks instead. Then the
# bounds: a guest that panics and one that hangs are killed, reported as
# failed, and keep their serial log.
#
# Kernels and the guest must be built (make test does both first). Boots are
# kept in $BOUNCELAB_CACHE/guest-test/<time>/.
set -uo pipefail

. "$(dirname "$0")/lib.sh"

RUNS=$BL_CACHE/guest-test/$(date +%Y%m%d-%H%M%S)-$$
WV=smoke-randwrite-verify.fio
RR=smoke-randread.fio
I512=integrity-direct-512-qd8.fio
IBUF=integrity-buffered-1k.fio
. "$BL_ROOT/lib/lab.sh"
POST_REFUSAL=$(bl_lab_refusal "$(bl_lab_disk usb-pio channel)")
SDEBUG_IGNORED='lab_no_highmem ignored: no driver can ask for bounce buffering any more'

# boot NAME VARIANT PRESSURE JOBS...: one guest; prints nothing, the
# folder is $RUNS/NAME.
boot()
{
	local name=$1 variant=$2 pressure=$3 start rc=0
	shift 3
	local args=(-v "$variant" -o "$RUNS/$name" -j "$*" -d 64 -t 600 -p "$pressure")
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

# integrity VALUE: the job's bad blocks compare so (OP eq or gt).
check_bad()
{
	local d n
	d=$(jobdir "$1" "$2")
	n=$(BL_ROOT=$BL_ROOT /usr/bin/python3 - "$d" <<-'PY'
	import os, sys
	sys.path.insert(0, os.path.join(os.environ["BL_ROOT"], "bench"))
	from analysis import integrity as I, rawfiles as R
	d = sys.argv[1]
	r = I.job_result(R.read_fio(os.path.join(d, "fio.json")),
	                 R.read_text(os.path.join(d, "fio.stderr")))
	print("none" if r is None else f"{r['bad']} {r['checked']}")
	PY
	)
	set -- "$1" "$2" "$3" "$4" $n
	[ "${5:-none}" != none ] && [ "${6:-0}" -gt 0 ] ||
		{ echo "no integrity result (checked ${6:-0} blocks)"; return 1; }
	case $3 in
	eq) [ "$5" = "$4" ] ;;
	gt) [ "$5" -gt "$4" ] ;;
	esac || { echo "bad blocks: $5 of $6, wanted $3 $4"; return 1; }
}

# The buffered integrity job read back from the device at least the data
# it wrote (diskstats read sectors >= fio's written bytes / 512), so its
# verify checked the disk, not the page cache. (The disk's written sectors
# are more: ext2 metadata, synced with every O_SYNC write.)
reads_device()
{
	local d dev data
	d=$(jobdir "$1" "$2")
	dev=$(basename "$(cat "$d/device")")
	data=$(/usr/bin/python3 -c 'import json, sys; t = sys.stdin.read()
print(sum(j["write"]["io_bytes"] for j in json.loads(t[t.index("{"):])["jobs"]) // 512)' <"$d/fio.json")
	awk -v dev="$dev" -v data="$data" '
		FILENAME ~ /before/ && $3 == dev { r0 = $6; w0 = $10 }
		FILENAME ~ /after/ && $3 == dev { r1 = $6; w1 = $10 }
		END { printf "read %d sectors; fio wrote %d sectors of data (%d with metadata)\n", r1 - r0, data, w1 - w0
		      exit !(data > 0 && r1 - r0 >= data) }' \
		"$d/before/diskstats" "$d/after/diskstats"
}

# lowhog held LowFree within 10% of its target for the whole job, and
# HighFree above half of HighTotal.
lowmem_held()
{
	local d target high_total
	d=$(jobdir "$1" "$2")
	grep -q holding "$RUNS/$1/guest/lowhog.out" ||
		{ cat "$RUNS/$1/guest/lowhog.out"; return 1; }
	target=$(( $(sed -n 's/^BL_LOWFREE_TARGET_MB=//p' "$RUNS/$1/guest/plan") * 1024 ))
	high_total=$(awk '$1 == "HighTotal:" { print $2 }' "$d/before/meminfo")
	awk -F, -v t="$target" -v ht="$high_total" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["LowFree"] != "" { n++; if ($c["LowFree"] < t * 0.9 || $c["LowFree"] > t * 1.1) bad++
			if (lo == "" || $c["LowFree"] < lo) lo = $c["LowFree"]
			if (hi == "" || $c["LowFree"] > hi) hi = $c["LowFree"]
			if (hf == "" || $c["HighFree"] < hf) hf = $c["HighFree"] }
		END { printf "LowFree %d-%d kB (target %d), HighFree min %d of %d kB, %d samples\n", lo, hi, t, hf, ht, n
		      exit !(n > 0 && bad == 0 && hf > ht / 2) }' "$d/labmon.csv"
}

# The probed job timed bounced bios: __blk_queue_bounce calls in its trace.
probes_timed()
{
	local d
	d=$(jobdir "$1" "$2")
	[ -s "$d/probe-trace.txt.gz" ] || { echo "no probe trace"; return 1; }
	zcat "$d/probe-trace.txt.gz" | grep -c '__blk_queue_bounce' | awk '{ print $1 " calls"; exit !($1 > 0) }'
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

	n=pre-knobs-off
	row $n pre none "usb-dma:$WV virtio:$WV ram:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: ram write+verify works" job_ok $n 3
	rcheck "$n: 0 bounces on usb" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 2 eq 0
	rcheck "$n: 0 bounces on ram" check_bounces $n 3 eq 0

	n=pre-knobs-on-lowmem
	row $n pre lowmem "usb-pio:$WV ram-bounce:$WV ram-bounce:$RR ram-bounce:$I512"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: ram-bounce write+verify works" job_ok $n 2
	rcheck "$n: 0 bounces on usb-pio (inverted check)" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on ram-bounce (inverted check)" check_bounces $n 2 eq 0
	rcheck "$n: 0 bad blocks of 512 B writes on ram-bounce" check_bad $n 4 eq 0
	rcheck "$n: lowhog holds LowFree at its target, highmem free" lowmem_held $n 3

	n=pre-fixed-knobs-on
	row $n pre-fixed none "usb-pio:$WV usb-pio:$RR virtio:$WV ram-bounce:$WV ram-bounce:$RR:probe ram:$WV usb-pio:$I512 ram-bounce:$I512 ram:$I512"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: usb read works" job_ok $n 2
	rcheck "$n: virtio write+verify works" job_ok $n 3
	rcheck "$n: ram-bounce write+verify works" job_ok $n 4
	rcheck "$n: bounces > 0 on usb writes+verify ($(bounces $n 1))" \
		check_bounces $n 1 gt 0
	rcheck "$n: bounces > 0 on usb direct reads ($(bounces $n 2))" \
		check_bounces $n 2 gt 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 3 eq 0
	rcheck "$n: bounces > 0 on ram-bounce ($(bounces $n 4))" check_bounces $n 4 gt 0
	rcheck "$n: probes timed the bounces on ram-bounce" probes_timed $n 5
	rcheck "$n: 0 bounces on ram" check_bounces $n 6 eq 0
	rcheck "$n: bad blocks > 0 of 512 B writes on usb-pio" check_bad $n 7 gt 0
	rcheck "$n: bad blocks > 0 of 512 B writes on ram-bounce" check_bad $n 8 gt 0
	rcheck "$n: 0 bad blocks on ram" check_bad $n 9 eq 0

	n=pre-fixed-knobs-off
	row $n pre-fixed none "usb-dma:$WV virtio:$WV ram:$WV usb-dma:$I512 virtio:$I512 ram:$IBUF"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: 0 bounces on usb (DMA HCD)" check_bounces $n 1 eq 0
	rcheck "$n: 0 bounces on virtio" check_bounces $n 2 eq 0
	rcheck "$n: 0 bounces on ram" check_bounces $n 3 eq 0
	rcheck "$n: 0 bad blocks on usb-dma" check_bad $n 4 eq 0
	rcheck "$n: 0 bad blocks on virtio" check_bad $n 5 eq 0
	rcheck "$n: 0 bad blocks, buffered 1 KiB on ram" check_bad $n 6 eq 0
	rcheck "$n: buffered verify reads the device" reads_device $n 6

	n=post-knobs-on
	row $n post none "usb-pio:$WV virtio:$WV ram-bounce:$WV ram-bounce:$I512"
	rcheck "$n: no usb disk" disk_absent $n usb-pio
	rcheck "$n: usb-storage warns it refuses the probe" \
		grep -q "$POST_REFUSAL" "$RUNS/$n/guest/dmesg.txt"
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: no bounce tracepoint" check_bounces $n 2 eq absent
	rcheck "$n: ram-bounce write+verify works" job_ok $n 3
	rcheck "$n: scsi_debug says its knob cannot bounce" \
		grep -q "$SDEBUG_IGNORED" "$RUNS/$n/guest/dmesg.txt"
	rcheck "$n: 0 bad blocks of 512 B writes on ram-bounce" check_bad $n 4 eq 0

	n=post-knobs-off
	row $n post none "usb-dma:$WV virtio:$WV ram:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: ram write+verify works" job_ok $n 3
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
t_plan 59
test_truth_table
test_bounds
t_summary
