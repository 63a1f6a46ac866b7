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
#                                  block; lowmem pressure reaches its target;
#                                  the exact count says 0 pages, a 64-page
#                                  pool
#   pre-fixed  knobs on            bounces > 0 on usb-pio and ram-bounce,
#                                  0 on virtio and ram; sub-page writes
#                                  read back bad (the boot is still ok);
#                                  the probes time the bounces; 64 KiB
#                                  writes at QD8 hold 1 to 128 bounce pages
#   pre-fixed  full24              writeback under pressure runs, bounces,
#                                  with the hogs idle; both jobs start
#                                  from the level's dose in both zones;
#                                  the other pressure shapes (rewrites
#                                  that fsync, a direct writer) run and
#                                  bounce from their doses too
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
RR=smoke-randread.fio
WB=pressure-writeback.fio
RF=pressure-rewrite-fsync.fio
DW=pressure-direct-write.fio
LAT=lat-randread-4k-qd1.fio
. "$BL_ROOT/lib/lab.sh"
# (WV, I512, IBUF, OCC, REFUSAL: guest-lib.sh's)
. "$BL_ROOT/tests/guest-lib.sh"

test_truth_table()
{
	local n

	n=pre-knobs-off
	row $n pre none "usb-dma:$WV virtio:$WV ram:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: ram write+verify works" job_ok $n 3
	bounce_checks $n no

	n=pre-knobs-on-lowmem
	row $n pre lowmem "usb-pio:$WV ram-bounce:$WV ram-bounce:$RR ram-bounce:$I512 ram-bounce:$OCC"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: ram-bounce write+verify works" job_ok $n 2
	bounce_checks $n no
	rcheck "$n: 0 bad blocks of 512 B writes on ram-bounce" check_bad $n 4 eq 0
	rcheck "$n: lowhog holds LowFree at its target, highmem free" lowmem_held $n 3
	rcheck "$n: exact count: 0 bounce pages taken, peak 0 (inverted check)" \
		check_occupancy $n 5 allocated eq 0 peak eq 0
	rcheck "$n: exact count: the 64-page pool is there all the same" \
		check_occupancy $n 5 pool_size eq 64

	n=pre-fixed-knobs-on
	row $n pre-fixed none "usb-pio:$WV usb-pio:$RR virtio:$WV ram-bounce:$WV ram-bounce:$RR:probe ram:$WV usb-pio:$I512 ram-bounce:$I512 ram:$I512 ram-bounce:$OCC ram:$OCC"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: usb read works" job_ok $n 2
	rcheck "$n: virtio write+verify works" job_ok $n 3
	rcheck "$n: ram-bounce write+verify works" job_ok $n 4
	bounce_checks $n yes
	rcheck "$n: bounces > 0 on usb direct reads ($(bounces $n 2))" \
		check_bounces $n 2 gt 0
	rcheck "$n: probes timed the bounces on ram-bounce" probes_timed $n 5
	rcheck "$n: bad blocks > 0 of 512 B writes on usb-pio" check_bad $n 7 gt 0
	rcheck "$n: bad blocks > 0 of 512 B writes on ram-bounce" check_bad $n 8 gt 0
	rcheck "$n: 0 bad blocks on ram" check_bad $n 9 eq 0
	rcheck "$n: exact count: 64 KiB QD8 writes hold 1 to 128 bounce pages (peak $(occupancy $n 10 peak))" \
		check_occupancy $n 10 peak gt 0 peak le 128
	rcheck "$n: exact count: none left in flight, pages taken > 0" \
		check_occupancy $n 10 inflight eq 0 allocated gt 0
	rcheck "$n: exact count: 0 pages on ram (knob off)" \
		check_occupancy $n 11 allocated eq 0 peak eq 0

	n=pre-fixed-full24
	row $n pre-fixed full24 "ram-bounce:$WB ram:$WB ram-bounce:$RF ram-bounce:$DW"
	rcheck "$n: writeback with a reader under full pressure runs" job_ok $n 1
	rcheck "$n: its dirty highmem pages bounced ($(occupancy $n 1 allocated) pages)" \
		check_occupancy $n 1 allocated gt 0
	rcheck "$n: the hogs held, idle (<= 2 ticks)" hog_idle $n 1 2
	rcheck "$n: job 1 starts from the level's dose in both zones" dose_in_band $n 1
	rcheck "$n: job 2 (after job 1's writeback) too" dose_in_band $n 2
	for j in 3 4; do
		rcheck "$n: job $j ($(awk '{print $2}' "$RUNS/$n/guest/jobs/0$j-"*/what 2>/dev/null)) runs from its dose and bounces ($(occupancy $n $j allocated) pages)" \
			shape_ok $n $j
	done

	n=pre-fixed-knobs-off
	row $n pre-fixed none "usb-dma:$WV virtio:$WV ram:$WV usb-dma:$I512 virtio:$I512 ram:$IBUF"
	rcheck "$n: usb write+verify works" job_ok $n 1
	bounce_checks $n no
	rcheck "$n: 0 bad blocks on usb-dma" check_bad $n 4 eq 0
	rcheck "$n: 0 bad blocks on virtio" check_bad $n 5 eq 0
	rcheck "$n: 0 bad blocks, buffered 1 KiB on ram" check_bad $n 6 eq 0
	rcheck "$n: buffered verify reads the device" reads_device $n 6

	n=post-knobs-on
	row $n post none "usb-pio:$WV virtio:$WV ram-bounce:$WV ram-bounce:$I512 ram-bounce:$OCC"
	refused_checks $n
	rcheck "$n: 0 bad blocks of 512 B writes on ram-bounce" check_bad $n 4 eq 0
	rcheck "$n: exact count: no bounce code to count in" \
		check_occupancy $n 5 - is absent

	n=post-knobs-off
	row $n post none "usb-dma:$WV virtio:$WV ram:$WV"
	rcheck "$n: usb write+verify works" job_ok $n 1
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: ram write+verify works" job_ok $n 3
	rcheck "$n: Bounce: 0 kB" meminfo_bounce_zero $n
	rcheck "$n: no usb-storage refusal" \
		bash -c "! grep -q '$REFUSAL' '$RUNS/$n/guest/dmesg.txt'"
}

# insnprof (bench/qemu-plugin) on the insn clock: a window's instructions
# times 8 ns are its time (a ram disk never idles), the plugin's count of
# bounce completions equals the hist trigger's count of bounced bios (in
# the probed twin, the one job of an exact clock with the trigger), the
# same boot without the plugin measures the same IOPS, and the counts are
# those of bench/reference/insn.tsv for this kernel build.
test_insn_counts()
{
	local jobs="ram-bounce:$LAT ram:$LAT ram-bounce:$LAT:probe" d pid rc=0
	BOUNCELAB_INSNPROF=on boot_insn insn-on pre-fixed "$jobs" &
	pid=$!
	BOUNCELAB_INSNPROF=off boot_insn insn-off pre-fixed "$jobs" || rc=1
	wait $pid || rc=1
	ROW_OK=$(( ! rc ))
	d=$(jobdir insn-on 1)
	rcheck "insn: the window's instructions are its time ($(idle_pct "$d")% idle)" \
		window_exact "$d" 0.1
	rcheck "insn: plugin's bounce completions = hist trigger's bounces ($(bounces insn-on 3))" \
		bounces_agree "$(jobdir insn-on 3)"
	rcheck "insn: the control disk's window too" window_exact "$(jobdir insn-on 2)" 0.1
	rcheck "insn: no instrument in the control disk's window (kernels with and without the event compare alike)" \
		few_instruments "$(jobdir insn-on 2)" 0.2
	rcheck "insn: the plugin adds no guest time (IOPS within 0.2% without it)" \
		same_iops "$d" "$(jobdir insn-off 1)" 0.2
	reference_check "$d" "$BL_ROOT/bench/reference/insn.tsv"
}

# bench/diverge: two boots of one bundle on the insn clock. With only
# in-guest disks they take no host input, so they run the same
# instructions to the end; with a usb disk they part, and the tool names
# the host-timed interrupt (the usb controller's) that parted them.
test_divergence()
{
	local b out rc
	for b in ram usb; do
		rc=0
		case $b in
		ram) "$BL_ROOT/bench/guest-run" -P -v pre-fixed -c insn -o "$RUNS/div-$b" \
			-j "ram-bounce:$RR" -d 64 -t 600 >"$RUNS/div-$b.out" 2>&1 || rc=$? ;;
		usb) "$BL_ROOT/bench/guest-run" -P -v pre-fixed -c insn -o "$RUNS/div-$b" \
			-j "usb-pio:$RR" -d 64 -t 600 >"$RUNS/div-$b.out" 2>&1 || rc=$? ;;
		esac
		out=$RUNS/div-$b/diverge
		[ $rc = 0 ] && "$BL_ROOT/bench/diverge" "$RUNS/div-$b/bundle" "$out" \
			>>"$RUNS/div-$b.out" 2>&1 || rc=$?
		case $b in
		ram) t_check "diverge: two boots of a ram-disk bundle run the same instructions ($(head -c 80 "$out/divergence.txt" 2>/dev/null))" \
			bash -c "[ $rc = 0 ] && grep -q '^identical: ' '$out/divergence.txt'" ;;
		usb) t_check "diverge: two boots of a usb-disk bundle part on the usb controller's interrupt" \
			bash -c "[ $rc = 1 ] && grep -q '^the boots part between' '$out/divergence.txt' &&
				grep -q '(usb_hcd_irq)' '$out/divergence.txt'" ;;
		esac
	done
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
	# a pressure that cannot be applied is the boot's failure, never a
	# result without pressure
	expect_failed_boot no-pressure "memory pressure (memhog) died" 120 \
		-v pre -j "ram:$RR" -d 64 -t 300 -p memory -m 4000
}

mkdir -p "$RUNS"
# seven rows of 2 + 6, 8, 16, 7, 8, 8, 5 checks; six counts; two
# divergences; three bounds
t_plan 83
test_truth_table
test_insn_counts
test_divergence
test_bounds
t_summary
