#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# One boot's failure paths: bench/guest-run never leaves its data disks
# behind, and bench/qemu-boot with bench/boot-status say why a boot failed.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- bench/guest-run: data disks never left behind --------------------------

# The disk images (and results stream) a boot left behind
# (bench/boot-bundle makes them in a .img.* folder of the boot's).
data_disks()
{
	find "$1" -name '*.img' -o -name results.tty 2>/dev/null
}

test_guest_run_disks()
{
	local sb out pid rc=0
	sb=$(sandbox guest-run)
	fake_cache
	fake_qemu "$sb"
	GR=("$sb/bench/guest-run" -v pre -j "virtio:smoke-randread.fio" -d 1)

	out=$WORK/gr-ok
	"${GR[@]}" -o "$out" >"$WORK/gr-ok.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ -z "$(data_disks "$out")" ] &&
		t_ok "guest-run: a boot that ends removes its data disks" ||
		t_fail "guest-run: a boot that ends removes its data disks" "exit $rc" \
			"left: $(data_disks "$out")" "$(tail -n 3 "$WORK/gr-ok.out")"

	# as bench/compare stops a boot on Ctrl-C: TERM to its process group
	out=$WORK/gr-int rc=0
	set -m
	FAKE_QEMU_SLEEP=60 "${GR[@]}" -o "$out" >"$WORK/gr-int.out" 2>&1 &
	pid=$!
	set +m
	wait_file "$out/serial.log.started"
	kill -TERM -- "-$pid"
	wait $pid || rc=$?
	[ $rc = 143 ] && [ -d "$out/plan" ] && [ -z "$(data_disks "$out")" ] &&
		t_ok "guest-run: an interrupted boot exits 143 and removes its data disks" ||
		t_fail "guest-run: an interrupted boot exits 143 and removes its data disks" "exit $rc" \
			"left: $(data_disks "$out")" "$(tail -n 3 "$WORK/gr-int.out")"
}

# --- bench/qemu-boot, bench/boot-status: why a boot failed --------------------

# fake_qemu_system DIR: a qemu-system-i386 in DIR for the real
# bench/qemu-boot. FAKE_QEMU=truncated: the guest writes its status, then
# its results stream is cut short; FAKE_QEMU=sigkill: QEMU is killed by
# SIGKILL 1 s into the boot; FAKE_QEMU=sleep: QEMU writes its pid to
# LOG.qemu-pid and sleeps 300 s (as that pid).
fake_qemu_system()
{
	stub "$1/qemu-system-i386" <<-'EOF'
	log='' results=''
	for a in "$@"; do
		case $a in
		file:*) log=${a#file:} ;;
		*path=*results.tty*) results=${a#*path=}; results=${results%%,*} ;;
		esac
	done
	echo 'BOUNCELAB-GUEST: init started' >"$log"
	case ${FAKE_QEMU:-} in
	sigkill)
		sleep 1
		kill -KILL $$ ;;
	sleep)
		echo $$ >"$log.qemu-pid"
		exec sleep 300 ;;
	truncated)
		g=$(mktemp -d)
		echo ok >"$g/status"
		head -c 65536 /dev/urandom >"$g/fio.json"
		tar -cf - -C "$g" status fio.json | gzip -c >"$g.tar.gz"
		head -c 20000 "$g.tar.gz" >"$results"
		rm -rf "$g" "$g.tar"
		echo 'BOUNCELAB-GUEST: done' >>"$log" ;;
	esac
	EOF
}

# A boot's status names what went wrong: a results stream cut short
# is no "ok", and a QEMU killed by a signal 1 s in was not the bound.
test_boot_status()
{
	local sb out rc
	sb=$(sandbox boot-status)
	fake_cache
	fake_qemu_system "$WORK/fakebin-qemu"
	GR=("$sb/bench/guest-run" -v pre -j "virtio:smoke-randread.fio" -d 1 -t 900)

	out=$WORK/bs-trunc rc=0
	PATH=$WORK/fakebin-qemu:$PATH FAKE_QEMU=truncated "${GR[@]}" -o "$out" \
		>"$WORK/bs-trunc.out" 2>&1 || rc=$?
	[ $rc = 1 ] &&
	   grep -q "^failed: the results stream (the guest's results port) is truncated or broken" "$out/status" &&
		t_ok "guest-run: a truncated results stream fails the boot, saying so" ||
		t_fail "guest-run: a truncated results stream fails the boot, saying so" "exit $rc" \
			"status: $(cat "$out/status" 2>/dev/null)" "$(tail -n 3 "$WORK/bs-trunc.out")"

	out=$WORK/bs-kill rc=0
	PATH=$WORK/fakebin-qemu:$PATH FAKE_QEMU=sigkill "${GR[@]}" -o "$out" \
		>"$WORK/bs-kill.out" 2>&1 || rc=$?
	[ $rc = 1 ] && [ "$(cat "$out/status" 2>/dev/null)" = "failed: qemu killed by signal 9 (KILL)" ] &&
		t_ok "guest-run: QEMU killed by SIGKILL 1 s in: 'qemu killed by signal 9 (KILL)', not the bound" ||
		t_fail "guest-run: QEMU killed by SIGKILL 1 s in: 'qemu killed by signal 9 (KILL)', not the bound" \
			"exit $rc" "status: $(cat "$out/status" 2>/dev/null)" "$(tail -n 3 "$WORK/bs-kill.out")"
}

# parent PID: the parent of process PID.
parent()
{
	awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null
}

# A SIGKILL cannot be passed on: whichever of the boot's wrappers gets it
# (qemu-boot's timeout, or qemu-boot itself), QEMU must not outlive it.
test_qemu_dies_with_wrapper()
{
	local sb victim boot qpid tpid name
	sb=$(sandbox qemu-orphan)
	fake_cache
	fake_qemu_system "$WORK/fakebin-qemu"
	for victim in timeout qemu-boot; do
		name="qemu-boot: QEMU dies within 5 s when its $victim is SIGKILLed"
		rm -f "$WORK/orphan.log.qemu-pid"
		PATH=$WORK/fakebin-qemu:$PATH FAKE_QEMU=sleep "$sb/bench/qemu-boot" -t 120 \
			-k "$BL_CACHE/kernels/pre/bzImage" -i "$BL_CACHE/guest/initramfs.cpio.gz" \
			-l "$WORK/orphan.log" >/dev/null 2>&1 &
		boot=$!
		if ! wait_file "$WORK/orphan.log.qemu-pid" 20; then
			t_fail "$name" "the fake QEMU never started"
			kill -KILL "$boot" 2>/dev/null
			continue
		fi
		qpid=$(cat "$WORK/orphan.log.qemu-pid")
		tpid=$(parent "$qpid")
		# the chain is qemu-boot -> timeout -> QEMU, or the test means nothing
		if [ "$(parent "$tpid")" != "$boot" ] || [ "$(cat "/proc/$tpid/comm")" != timeout ]; then
			t_fail "$name" "QEMU's parent $tpid is not a timeout under qemu-boot $boot"
			kill -KILL "$qpid" "$tpid" "$boot" 2>/dev/null
			continue
		fi
		if [ $victim = timeout ]; then kill -KILL "$tpid"; else kill -KILL "$boot"; fi
		wait "$boot" 2>/dev/null
		if gone_within 5 "$qpid" && gone_within 1 "$tpid"; then
			t_ok "$name"
		else
			t_fail "$name" "still running: $(ps -o pid=,args= -p "$qpid" -p "$tpid" 2>&1)"
			kill -KILL "$qpid" "$tpid" 2>/dev/null
		fi
	done
}

t_plan 6
test_guest_run_disks
test_boot_status
test_qemu_dies_with_wrapper
t_summary
