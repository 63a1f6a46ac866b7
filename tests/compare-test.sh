#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run.sh compare end to end and its failure paths:
#   - `./run.sh compare --quick` completes; its bounce summary shows the
#     bounce path exercised in pre-fixed on usb-pio and never in pre or post;
#   - an A/A run (--variants pre,pre) keeps the two sides apart;
#   - under instruction time (ram@insn) a kernel gives the same IOPS
#     within the determinism bound side by side (-j 2) and one at a time,
#     and on another host over ssh (localhost, a private sshd) within 0.1 %;
#   - a kernel that panics, a guest that hangs: killed within the bound,
#     marked failed with their serial logs, non-zero exit;
#   - one failed boot among good ones: the good ones' results are all kept;
#   - an unknown variant, a job file fio rejects, a reused run id: refused
#     before any boot, with a clear message and exit 2;
#   - Ctrl-C: the run is left consistent and marked incomplete.
# Kernels and the guest must be built (make test does both first).
set -uo pipefail

. "$(dirname "$0")/lib.sh"

TAG=test-$(date +%Y%m%d-%H%M%S)-$$
# The tests' runs stay out of the user's results/ (and history).
export BOUNCELAB_RESULTS=$BL_CACHE/test-results
RESULTS=$BOUNCELAB_RESULTS
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Small, fast boots for the failure paths.
SMALL=(--disks virtio --pressure none --reps 1 --jobs smoke-randread
	--probe-jobs none --integrity-jobs none --pressure-disks none --accel tcg)

boots_col()
{
	awk -F'\t' -v c="$2" 'NR > 1 { print $c }' "$1/boots.tsv"
}

QUICK_CHECKS=("quick run marked complete in meta.json"
	"summary: bounces counted in pre-fixed on usb-pio"
	"summary: bounces counted in pre-fixed on ram-bounce"
	"summary: 0 bounces in pre-fixed on its control disk ram"
	"summary: 0 bounces in every pre boot"
	"summary: post has no bounce code and refuses the PIO-HCD usb disk"
	"report: integrity table names pre-fixed as corrupting data"
	"no boot marked failed for expected verify errors"
	"quick run analysed: summary.csv and report.md")

test_quick()
{
	local id=$TAG-quick run=$RESULTS/$TAG-quick rc=0 n
	"$BL_ROOT/run.sh" compare --quick --run-id "$id" >"$WORK/quick.out" 2>&1 || rc=$?
	if [ $rc != 0 ]; then
		t_fail "compare --quick completes" "exit $rc" "$(tail -n 15 "$WORK/quick.out")"
		for n in "${QUICK_CHECKS[@]}"; do t_skip "$n" "compare --quick failed"; done
		return
	fi
	n=$(boots_col "$run" 6 | grep -c '^ok$')
	t_ok "compare --quick completes: $n boots ok, $(grep -o 'wall time [0-9m]*[0-9]*s' "$WORK/quick.out")"
	[ ! -e "$run/INCOMPLETE" ] && grep -q '"status": "complete"' "$run/meta.json" &&
		t_ok "quick run marked complete in meta.json" ||
		t_fail "quick run marked complete in meta.json"
	local d
	for d in usb-pio ram-bounce; do
		grep -Eq "^  pre-fixed $d +[1-9][0-9]*  <- bounce path exercised" "$WORK/quick.out" &&
			t_ok "summary: bounces counted in pre-fixed on $d ($(grep -E "^  pre-fixed $d +[0-9]+" "$WORK/quick.out" | awk '{ print $3 }'))" ||
			t_fail "summary: bounces counted in pre-fixed on $d" "$(grep -A12 'bounced bios' "$WORK/quick.out")"
	done
	grep -Eq '^  pre-fixed ram +0$' "$WORK/quick.out" &&
		t_ok "summary: 0 bounces in pre-fixed on its control disk ram" ||
		t_fail "summary: 0 bounces in pre-fixed on its control disk ram" "$(grep -A12 'bounced bios' "$WORK/quick.out")"
	grep -Eq '^  pre (usb-pio|ram-bounce|ram) +0$' "$WORK/quick.out" &&
		! grep -Eq '^  pre [a-z-]+ +[1-9]' "$WORK/quick.out" &&
		t_ok "summary: 0 bounces in every pre boot" ||
		t_fail "summary: 0 bounces in every pre boot" "$(grep -A12 'bounced bios' "$WORK/quick.out")"
	grep -Eq '^  post ram-bounce +0 \(no bounce code in this kernel\)$' "$WORK/quick.out" &&
		grep -Eq '^  post usb-pio +not measured: disk usb-pio absent: the kernel refused it' "$WORK/quick.out" &&
		t_ok "summary: post has no bounce code and refuses the PIO-HCD usb disk" ||
		t_fail "summary: post has no bounce code and refuses the PIO-HCD usb disk" "$(grep -A12 'bounced bios' "$WORK/quick.out")"
	grep -q '^## Data integrity' "$run/report.md" &&
		grep -q 'pre-fixed corrupts data' "$run/report.md" &&
		t_ok "report: integrity table names pre-fixed as corrupting data" ||
		t_fail "report: integrity table names pre-fixed as corrupting data" \
			"$(sed -n '/^## Data integrity/,/^## /p' "$run/report.md" 2>/dev/null | head -n 20)"
	! awk -F'\t' 'NR > 1 && $6 != "ok"' "$run/boots.tsv" | grep -q . &&
		t_ok "no boot marked failed for expected verify errors" ||
		t_fail "no boot marked failed for expected verify errors" "$(cat "$run/boots.tsv")"
	if [ -x "$BL_ROOT/bench/analyze" ]; then
		[ -s "$run/summary.csv" ] && [ -s "$run/report.md" ] &&
			t_ok "quick run analysed: summary.csv and report.md" ||
			t_fail "quick run analysed: summary.csv and report.md"
	else
		t_skip "quick run analysed: summary.csv and report.md" "no bench/analyze"
	fi
}

test_aa()
{
	local run=$RESULTS/$TAG-aa rc=0
	"$BL_ROOT/bench/compare" --variants pre,pre "${SMALL[@]}" --run-id "$TAG-aa" \
		>"$WORK/aa.out" 2>&1 || rc=$?
	if [ $rc = 0 ] && [ "$(boots_col "$run" 2 | tr '\n' ' ')" = "pre pre.2 " ] &&
	   [ -s "$run/boots/001-pre-virtio-none-r1/guest/jobs/01-virtio-smoke-randread/fio.json" ] &&
	   [ -s "$run/boots/002-pre.2-virtio-none-r1/guest/jobs/01-virtio-smoke-randread/fio.json" ]; then
		t_ok "A/A run: pre and pre.2 kept apart, both measured"
	else
		t_fail "A/A run: pre and pre.2 kept apart, both measured" "exit $rc" "$(tail -n 5 "$WORK/aa.out")"
	fi
}

# iops FIO_JSON: read IOPS of its first job, rounded.
iops()
{
	python3 -c 'import json, sys
print(round(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' "$1" 2>/dev/null
}

# The IOPS of every ram job of a run, one per line.
run_iops()
{
	local f
	for f in "$1"/boots/*/guest/jobs/*-ram-smoke-randread/fio.json; do iops "$f"; done
}

# within_pct PCT A B...: every value within PCT % of the first.
within_pct()
{
	python3 -c 'import sys
pct = float(sys.argv[1]); v = [float(x) for x in sys.argv[2:]]
sys.exit(not (v and v[0] > 0 and all(abs(x - v[0]) * 100 <= pct * v[0] for x in v)))' "$@"
}

INSN=(--disks ram@insn --pressure none --reps 1 --jobs smoke-randread --probe-jobs none
	--integrity-jobs none --pressure-disks none --accel tcg)

# The clock "insn" (lab.conf) makes an in-guest disk deterministic: the
# same kernel twice gives the same IOPS, whatever else the host runs, so
# its boots run side by side (-j 2) with the numbers of one at a time (-j 1).
test_insn_aa()
{
	local run=$RESULTS/$TAG-insn one=$RESULTS/$TAG-insn-j1 rc=0 rc1=0 side serial
	"$BL_ROOT/bench/compare" --variants pre,pre "${INSN[@]}" -j 2 --run-id "$TAG-insn" \
		>"$WORK/insn.out" 2>&1 || rc=$?
	"$BL_ROOT/bench/compare" --variants pre,pre "${INSN[@]}" -j 1 --run-id "$TAG-insn-j1" \
		>"$WORK/insn-j1.out" 2>&1 || rc1=$?
	side=$(run_iops "$run" | xargs) serial=$(run_iops "$one" | xargs)
	if [ $rc = 0 ] && [ $rc1 = 0 ] && [ "$(wc -w <<<"$side $serial")" = 4 ] &&
	   within_pct 0.2 $side $serial &&
	   grep -q -- '-smp 1 .*-icount shift=3\\,sleep=off' "$run"/boots/001-*/serial.log.cmdline; then
		t_ok "insn (ram@insn, 1 vCPU, icount 3): pre twice side by side ($side) and one at a time ($serial) read IOPS within the 0.2 % determinism bound"
	else
		t_fail "insn: pre twice side by side and one at a time, read IOPS within 0.2 %" \
			"exit $rc/$rc1" "IOPS side by side '$side', one at a time '$serial'" \
			"$(cat "$run"/boots/001-*/serial.log.cmdline 2>/dev/null)" \
			"$(tail -n 5 "$WORK/insn.out")" "$(tail -n 3 "$WORK/insn-j1.out")"
	fi
	SERIAL_IOPS=$serial
}

# sshd on 127.0.0.1 with its own keys and config in $WORK (the host's
# sshd and ~/.ssh stay untouched); prints the sshloginfile line.
private_sshd()
{
	local d=$WORK/sshd port
	mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$d/user_key" ||
		return 1
	cp "$d/user_key.pub" "$d/authorized_keys"
	port=$((20000 + $$ % 20000))
	cat >"$d/config" <<-EOF
	Port $port
	ListenAddress 127.0.0.1
	HostKey $d/host_key
	AuthorizedKeysFile $d/authorized_keys
	PidFile $d/pid
	StrictModes no
	UsePAM no
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PermitRootLogin prohibit-password
	EOF
	# the privilege separation folder sshd wants (/run, gone at reboot;
	# the caller notes whether it was there, this runs in a subshell)
	mkdir -p /run/sshd
	/usr/sbin/sshd -f "$d/config" -E "$d/log" || return 1
	echo "2/ssh -p $port -i $d/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR $(id -un)@127.0.0.1"
}

stop_private_sshd()
{
	[ -f "$WORK/sshd/pid" ] && kill "$(cat "$WORK/sshd/pid")" 2>/dev/null
	[ -z "${MADE_RUN_SSHD:-}" ] || rmdir /run/sshd 2>/dev/null
	return 0
}

# Exact-clock boots on another host through GNU parallel and ssh: here,
# localhost as that host. Their numbers are those of a local run.
test_ssh_host()
{
	local name="exact-clock boots over ssh (GNU parallel --sshloginfile, localhost)"
	local run=$RESULTS/$TAG-ssh rc=0 login remote
	if [ ! -x /usr/sbin/sshd ]; then
		t_skip "$name" "no /usr/sbin/sshd (Debian openssh-server; make test installs it: ./run.sh deps --test)"
		return
	fi
	[ -d /run/sshd ] || MADE_RUN_SSHD=1
	if ! login=$(private_sshd); then
		t_fail "$name" "the private sshd did not start" "$(cat "$WORK/sshd/log" 2>/dev/null)"
		stop_private_sshd
		return
	fi
	echo "$login" >"$WORK/sshloginfile"
	"$BL_ROOT/bench/compare" --variants pre,pre "${INSN[@]}" --sshloginfile "$WORK/sshloginfile" \
		--run-id "$TAG-ssh" >"$WORK/ssh.out" 2>&1 || rc=$?
	stop_private_sshd
	remote=$(run_iops "$run" | xargs)
	if [ $rc = 0 ] && [ "$(boots_col "$run" 9 | sort -u)" = "ssh:$(id -un)@127.0.0.1" ] &&
	   [ "$(wc -w <<<"$remote")" = 2 ] && within_pct 0.1 ${SERIAL_IOPS%% *} $remote &&
	   [ -s "$run/boots/001-pre-ram-none-r1/serial.log" ]; then
		t_ok "$name: read IOPS $remote, local $SERIAL_IOPS, within 0.1 %; boots.tsv names the host"
	else
		t_fail "$name" "exit $rc" "IOPS over ssh '$remote', local '$SERIAL_IOPS'" \
			"$(cat "$run/boots.tsv" 2>/dev/null)" "$(tail -n 5 "$WORK/ssh.out")"
	fi
}

# expect_failed_run NAME EXIT STATUS_PATTERN ARGS...: every boot failed so.
expect_failed_run()
{
	local name=$1 want=$2 pattern=$3 run=$RESULTS/$TAG-$1 rc=0 log
	shift 3
	"$BL_ROOT/bench/compare" "${SMALL[@]}" --run-id "$TAG-$name" "$@" \
		>"$WORK/$name.out" 2>&1 || rc=$?
	log=$(ls "$run"/boots/*/serial.log 2>/dev/null | head -n 1)
	if [ $rc = "$want" ] && boots_col "$run" 6 | grep "^failed: $pattern" >/dev/null &&
	   [ -s "$log" ] && grep -q 'failed boots (folders and serial logs kept)' "$WORK/$name.out"; then
		t_ok "$name: exit $rc, boot marked '$(boots_col "$run" 6 | head -n 1 | cut -c1-50)', serial log kept"
	else
		t_fail "$name: exit $want, boot failed with '$pattern', serial log kept" \
			"exit $rc" "$(tail -n 6 "$WORK/$name.out")"
	fi
}

test_failures()
{
	expect_failed_run panic 1 "kernel panic" --variants pre --kernel-args "rdinit=/no-such-init"
	expect_failed_run hang 1 "guest killed after the 30s bound" --variants pre \
		--guest-sleep 600 --timeout 30
}

test_partial()
{
	local run=$RESULTS/$TAG-partial rc=0
	BL_COMPARE_FAIL_BOOT=1 "$BL_ROOT/bench/compare" --variants pre,post "${SMALL[@]}" \
		--run-id "$TAG-partial" >"$WORK/partial.out" 2>&1 || rc=$?
	if [ $rc = 3 ] && [ "$(boots_col "$run" 6 | head -n 1 | cut -c1-7)" = failed: ] &&
	   [ "$(boots_col "$run" 6 | sed -n 2p)" = ok ] &&
	   [ -s "$run/boots/002-post-virtio-none-r1/guest/jobs/01-virtio-smoke-randread/fio.json" ]; then
		t_ok "one failed boot: exit 3, the other boot's results kept"
	else
		t_fail "one failed boot: exit 3, the other boot's results kept" "exit $rc" \
			"$(cat "$run/boots.tsv" 2>/dev/null)"
	fi
}

# expect_refused NAME PATTERN ARGS...: refused before any boot, exit 2
# (a bad argument).
expect_refused()
{
	local name=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$WORK/$name.out" 2>&1 || rc=$?
	if [ $rc = 2 ] && grep -q -- "$pattern" "$WORK/$name.out" &&
	   ! grep -q 'boot 1/' "$WORK/$name.out"; then
		t_ok "$name refused before booting (exit 2)"
	else
		t_fail "$name refused before booting (exit 2)" "exit $rc" "$(tail -n 5 "$WORK/$name.out")"
	fi
}

test_refusals()
{
	printf '[bad]\nfilename=${BL_DISK}\nrw=randsideways\n' >"$WORK/bad.fio"
	expect_refused "unknown variant" "unknown variant 'nosuch'" \
		"$BL_ROOT/run.sh" compare --variants pre,nosuch
	expect_refused "job file fio rejects" "fio rejects job file .*bad.fio" \
		"$BL_ROOT/bench/compare" "${SMALL[@]}" --jobs-dir "$WORK" --jobs bad
	expect_refused "reused run id" "a run never overwrites another" \
		"$BL_ROOT/bench/compare" "${SMALL[@]}" --run-id "$TAG-aa"
}

test_interrupt()
{
	local run=$RESULTS/$TAG-int pid rc=0 i
	# Job control on: a background job of a script otherwise ignores SIGINT.
	set -m
	# (SIGINT back to its default, as a terminal's Ctrl-C finds it: a suite
	# started as a background job inherits it ignored)
	env --default-signal=INT "$BL_ROOT/bench/compare" --variants pre,pre-fixed,post "${SMALL[@]}" \
		--run-id "$TAG-int" >"$WORK/int.out" 2>&1 &
	pid=$!
	set +m
	# interrupt while the second boot is running
	for i in $(seq 1 600); do
		[ -e "$run/boots/002-pre-fixed-virtio-none-r1.out" ] && break
		sleep 0.2
	done
	sleep 2
	kill -INT $pid
	wait $pid || rc=$?
	if [ $rc = 130 ] && [ -f "$run/INCOMPLETE" ] &&
	   grep -q '"status": "interrupted"' "$run/meta.json" &&
	   [ "$(boots_col "$run" 6 | head -n 1)" = ok ] &&
	   ! pgrep -f "qemu-system-i386.*$TAG-int" >/dev/null; then
		t_ok "Ctrl-C: exit 130, run marked incomplete, finished boot kept, no QEMU left"
	else
		t_fail "Ctrl-C: exit 130, run marked incomplete, finished boot kept, no QEMU left" \
			"exit $rc" "$(cat "$run/INCOMPLETE" 2>/dev/null)" "$(tail -n 4 "$WORK/int.out")"
		pkill -f "qemu-system-i386.*$TAG-int"
	fi
}

# quick: 10; A/A 2; ssh 1; failures 2; partial 1; refusals 3; interrupt 1
t_plan 20
if [ -n "${BL_SKIP_QUICK:-}" ]; then
	t_skip "compare --quick completes" "BL_SKIP_QUICK is set"
	for n in "${QUICK_CHECKS[@]}"; do t_skip "$n" "BL_SKIP_QUICK is set"; done
else
	test_quick
fi
test_aa
test_insn_aa
test_ssh_host
test_failures
test_partial
test_refusals
test_interrupt
t_summary
