#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/compare interrupted (Ctrl-C) at every point of a run: it exits 130
# and leaves the run consistent and marked interrupted. The interrupts are
# sent with `env --default-signal=INT`, as a terminal would.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- bench/compare: Ctrl-C at any point -------------------------------------

# interrupt_run NAME MARKER COMPARE_ARGS...: start compare in its own
# process group, wait for MARKER (a path under the run folder) and send
# SIGINT to the group, as Ctrl-C does. Sets RC.
interrupt_run()
{
	local name=$1 marker=$2 pid
	shift 2
	RC=0
	set -m
	# (SIGINT back to its default: a suite started as a background job
	# without job control inherits it ignored, and bash cannot trap a
	# signal ignored on entry)
	env --default-signal=INT "$SB/bench/compare" --run-id "$name" "$@" >"$WORK/$name.out" 2>&1 &
	pid=$!
	set +m
	if ! wait_file "$SB/results/$name/$marker"; then
		echo "# $marker never appeared" >>"$WORK/$name.out"
		kill -TERM -- "-$pid" 2>/dev/null
		wait $pid
		RC="no $marker: interrupted too late"
		return
	fi
	sleep 0.3
	kill -INT -- "-$pid" 2>/dev/null
	wait $pid || RC=$?
}

# The run folder after an interrupt: exit 130, INCOMPLETE says so,
# meta.json too, no guest or data disk left behind.
check_interrupted()
{
	local run=$SB/results/$1
	[ "$RC" = 130 ] || { echo "exit $RC"; tail -n 5 "$WORK/$1.out"; return 1; }
	grep -q '^interrupted at ' "$run/INCOMPLETE" ||
		{ echo "INCOMPLETE: $(cat "$run/INCOMPLETE" 2>/dev/null)"; return 1; }
	grep -q '"status": "interrupted"' "$run/meta.json" ||
		{ echo "meta.json: $(grep status "$run/meta.json" 2>&1)"; return 1; }
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$run/meta.json" ||
		return 1
	! ls "$run"/boots/*/disks/*.img 2>/dev/null | grep -v '/plan\.img$' ||
		{ echo "data disks left behind"; return 1; }
	! pgrep -f "$SB/bench/" >/dev/null || { echo "processes left: $(pgrep -af "$SB/bench/")"; return 1; }
}

test_compare_interrupt()
{
	SB=$(sandbox compare-int)
	fake_cache
	fake_qemu "$SB"
	: >"$WORK/fake-kvm"
	local small=(--disks virtio --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none)

	# during the KVM probe boot
	BL_KVM_DEV=$WORK/fake-kvm FAKE_QEMU_SLEEP=30 interrupt_run int-probe \
		accel-probe.serial.log.started --variants pre "${small[@]}" --accel auto
	t_check "compare: Ctrl-C during the KVM probe: exit 130, meta.json and INCOMPLETE say interrupted" \
		check_interrupted int-probe

	# during the second boot: the first is kept
	FAKE_QEMU_SLEEP=4 interrupt_run int-boot \
		boots/002-post-virtio-none-r1/serial.log.started \
		--variants pre,post "${small[@]}" --accel tcg
	t_check "compare: Ctrl-C during a boot: exit 130, interrupted, first boot kept" \
		eval 'check_interrupted int-boot &&
			grep -q "^1	pre	virtio	none	1	ok	" "$SB/results/int-boot/boots.tsv"'

	# during boots side by side: GNU parallel and every guest stopped too
	FAKE_QEMU_SLEEP=30 interrupt_run int-side \
		boots/002-post-ram-none-r1/serial.log.started \
		--variants pre,post --disks ram@insn --pressure none --reps 1 --jobs smoke-randread \
		--probe-jobs none --integrity-jobs none --pressure-disks none -j 2 --accel tcg
	t_check "compare: Ctrl-C during boots side by side: exit 130, interrupted, no guest or GNU parallel left" \
		eval 'check_interrupted int-side &&
			! pgrep -f "$SB/results/int-side/" >/dev/null && ! pgrep -f "parallel.*int-side" >/dev/null'
}

t_plan 3
test_compare_interrupt
t_summary
