#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The host scripts' failure paths, each tested on a sandbox copy of the
# checkout with stubs in place of the heavy parts (a fake qemu-boot, a fake
# checkpatch.pl, fake suites, a fake guest fio): no kernels, no QEMU, no
# root. It runs anywhere, before anything is built. One test needs the
# network (the Debian mirror): the guest's busybox and fio fetched and
# built through their private apt (about a minute); without the mirror it
# is skipped.
#
# Everything it writes is in a temporary folder, its cache included
# (BOUNCELAB_CACHE), so the real cache and results/ are never touched.
set -uo pipefail

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
export BOUNCELAB_CACHE=$WORK/cache
BL_CACHE=$BOUNCELAB_CACHE
unset BOUNCELAB_RESULTS

# sandbox NAME: a copy of the checkout (no .git, no results) in $WORK/NAME;
# prints its path.
sandbox()
{
	local d=$WORK/$1
	mkdir -p "$d"
	tar -C "$BL_ROOT" --exclude=./.git --exclude=./results -cf - . |
		tar -C "$d" -xf -
	mkdir -p "$d/results"
	echo "$d"
}

# stub FILE [BODY]: an executable bash script with BODY (stdin if none).
stub()
{
	mkdir -p "$(dirname "$1")"
	{
		echo '#!/usr/bin/env bash'
		if [ $# -gt 1 ]; then echo "$2"; else cat; fi
	} >"$1"
	chmod +x "$1"
}

# A cache that passes bench/compare's and bench/guest-run's checks: empty
# kernels and initramfs, and a guest fio that accepts every job file.
fake_cache()
{
	local v
	for v in pre pre-fixed post; do
		mkdir -p "$BL_CACHE/kernels/$v"
		: >"$BL_CACHE/kernels/$v/bzImage"
		echo '{}' >"$BL_CACHE/kernels/$v/build-info.json"
	done
	mkdir -p "$BL_CACHE/guest/bin"
	: >"$BL_CACHE/guest/initramfs.cpio.gz"
	stub "$BL_CACHE/guest/bin/fio" 'exit 0'
}

# fake_qemu SANDBOX: bench/qemu-boot that boots nothing (a kernel
# command line with rdinit=/bl-injected-failure panics). It writes
# LOG.started and LOG.clock (the vCPUs and icount shift it was given), sleeps FAKE_QEMU_SLEEP seconds (default 0; SIGTERM ends it
# like the real one, exit 143), then plays a guest that ran its plan: a
# serial log and a results disk saying "ok". A probe boot (no results
# disk) only logs that init started.
fake_qemu()
{
	stub "$1/bench/qemu-boot" <<-'EOF'
	log='' results='' cmdline=''
	while getopts k:i:l:t:a: opt; do
		case $opt in l) log=$OPTARG ;; a) cmdline=$OPTARG ;; esac
	done
	shift $((OPTIND - 1))
	for a in "$@"; do
		case $a in *file=*results.img*) results=${a#*file=}; results=${results%%,*} ;; esac
	done
	touch "$log.started"
	echo "cpus=${BL_GUEST_CPUS:-} icount=${BL_QEMU_ICOUNT:-}" >"$log.clock"
	trap 'exit 143' TERM INT
	sleep "${FAKE_QEMU_SLEEP:-0}" & wait $!
	# compare's BL_COMPARE_FAIL_BOOT: a kernel without its init panics
	case $cmdline in *rdinit=/bl-injected-failure*)
		echo 'Kernel panic - not syncing: No working init found.' >"$log"; exit 0 ;;
	esac
	echo 'BOUNCELAB-GUEST: init started' >"$log"
	[ -n "$results" ] || exit 0
	g=$(mktemp -d)
	echo ok >"$g/status"
	tar -cf "$results" -C "$g" .
	rm -rf "$g"
	echo 'BOUNCELAB-GUEST: done' >>"$log"
	EOF
}

# wait_file FILE [SECONDS]: up to SECONDS (default 120: the machine may be
# busy building kernels) for FILE to appear.
wait_file()
{
	local i
	for i in $(seq 1 $(( ${2:-120} * 10 ))); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# --- tests/run-all.sh --------------------------------------------------

# A suite whose summary says "0 failed" but that exits non-zero failed.
test_run_all_exit_code()
{
	local sb rc=0 out
	sb=$(sandbox run-all-rc)
	stub "$sb/tests/analysis-test.sh" 'echo "3 passed, 0 failed"; exit 1'
	stub "$sb/tests/build-test.sh" 'echo "2 passed, 0 failed"; exit 0'
	out=$("$sb/tests/run-all.sh" analysis build 2>&1) || rc=$?
	if [ $rc != 0 ] && grep -q '^failing suites: analysis$' <<<"$out" &&
	   grep -Eq '^5 passed, 1 failed' <<<"$(tail -n 1 <<<"$out")"; then
		t_ok "run-all: a suite exiting non-zero with '0 failed' counts as failed"
	else
		t_fail "run-all: a suite exiting non-zero with '0 failed' counts as failed" \
			"exit $rc" "$out"
	fi
}

# --- tests/lib.sh: plan and SKIP -----------------------------------------

# A suite written with tests/lib.sh, in a sandbox: BODY between the source
# line and t_summary. Prints its output; returns its exit code.
harness_run()
{
	local sb=$1 body=$2
	stub "$sb/tests/h-test.sh" ". \"\$(dirname \"\$0\")/lib.sh\"
$body
t_summary"
	"$sb/tests/h-test.sh" 2>&1
}

test_harness()
{
	local sb out rc
	sb=$(sandbox harness)

	out=$(harness_run "$sb" 't_plan 3; t_ok a; t_skip b "no kvm here"; t_ok c')
	rc=$?
	if [ $rc = 0 ] && [ "$(head -n 2 <<<"$out" | tr '\n' ' ')" = "KTAP version 1 1..3 " ] &&
	   grep -qx 'ok 2 - b # SKIP no kvm here' <<<"$out" &&
	   grep -qx 'ok 3 - c' <<<"$out" &&
	   grep -qx '# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "2 passed, 0 failed, 1 skipped" ]; then
		t_ok "lib.sh: KTAP: t_plan prints the version and 1..N, t_skip '# SKIP reason', a Totals line"
	else
		t_fail "lib.sh: KTAP: t_plan prints the version and 1..N, t_skip '# SKIP reason', a Totals line" \
			"exit $rc" "$out"
	fi

	out=$(harness_run "$sb" 't_plan 3; t_ok a; t_skip b why')
	rc=$?
	if [ $rc != 0 ] && grep -q 'planned 3 tests but ran 2' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "1 passed, 1 failed, 1 skipped" ]; then
		t_ok "lib.sh: fewer tests run than planned is a failure"
	else
		t_fail "lib.sh: fewer tests run than planned is a failure" "exit $rc" "$out"
	fi

	out=$(harness_run "$sb" 't_ok a; t_fail b')
	rc=$?
	[ $rc != 0 ] && [ "$(tail -n 1 <<<"$out")" = "1 passed, 1 failed, 0 skipped" ] &&
		t_ok "lib.sh: without a plan, a failure still fails" ||
		t_fail "lib.sh: without a plan, a failure still fails" "exit $rc" "$out"
}

test_run_all_skipped()
{
	local sb rc=0 out
	sb=$(sandbox run-all-skip)
	stub "$sb/tests/analysis-test.sh" 'echo "2 passed, 0 failed, 1 skipped"'
	stub "$sb/tests/build-test.sh" 'echo "1 passed, 0 failed"'
	stub "$sb/tests/patches-test.sh" 'echo "0 passed, 0 failed, 4 skipped"'
	out=$("$sb/tests/run-all.sh" analysis build patches 2>&1) || rc=$?
	[ $rc = 0 ] && [ "$(tail -n 1 <<<"$out")" = "3 passed, 0 failed, 5 skipped" ] &&
		t_ok "run-all: adds up the suites' skipped counts" ||
		t_fail "run-all: adds up the suites' skipped counts" "exit $rc" "$out"
}

# --- tests/patches-test.sh: checkpatch.pl that crashes --------------------

# checkpatch_with NAME PERL: patches-test.sh's checkpatch check of one patch
# (6.12/lab/0001-x.patch, type FOO excused) run with PERL as checkpatch.pl.
checkpatch_with()
{
	local d=$WORK/checkpatch/$1
	mkdir -p "$d/patches/6.12/lab"
	printf 'Subject: [PATCH] x\n' >"$d/patches/6.12/lab/0001-x.patch"
	printf '6.12/lab/0001-x.patch FOO\n' >"$d/patches/checkpatch-exceptions"
	printf '%s\n' "$2" >"$d/checkpatch.pl"
	(
		export BL_CHECKPATCH=$d/checkpatch.pl BOUNCELAB_PATCHES_DIR=$d/patches
		. "$BL_ROOT/tests/patches-test.sh"
		checkpatch_unexcused "$d/patches/6.12/lab/0001-x.patch"
	) >"$d/out" 2>&1
}

# expect_checkpatch NAME WANT(pass|fail) PERL
expect_checkpatch()
{
	local got=pass
	checkpatch_with "$1" "$3" || got=fail
	[ "$got" = "$2" ] && t_ok "patches-test checkpatch: $1 -> $2" ||
		t_fail "patches-test checkpatch: $1 -> $2" "it ${got}ed" \
			"$(cat "$WORK/checkpatch/$1/out")"
}

test_checkpatch_crash()
{
	expect_checkpatch "perl dies" fail 'die "Undefined subroutine &main::foo called";'
	expect_checkpatch "exit 1 without its total line" fail 'exit 1;'
	expect_checkpatch "perl error on stderr, exit 0" fail \
		'warn "Use of uninitialized value in concatenation at scripts/checkpatch.pl line 7.\n"; exit 0;'
	expect_checkpatch "clean patch (exit 0, silent)" pass 'exit 0;'
	expect_checkpatch "excused message" pass '
print "$ARGV[-1]:1: CHECK:FOO: something\n";
print "total: 0 errors, 0 warnings, 1 checks, 1 lines checked\n"; exit 1;'
	expect_checkpatch "unexcused message" fail '
print "$ARGV[-1]:1: WARNING:BAR: something\n";
print "total: 0 errors, 1 warnings, 0 checks, 1 lines checked\n"; exit 1;'
}

# --- guest/busybox, guest/fio: bounded lock waits --------------------------

# expect_lock_bound NAME SCRIPT LOCK: SCRIPT, with LOCK held by another
# process, gives up after BL_LOCK_WAIT seconds with a clear message. apt
# and dpkg are stubs that fail, so nothing past the lock can touch the host.
expect_lock_bound()
{
	local name=$1 script=$2 lock=$3 holder rc=0 start secs out
	# the script must stop at this lock: never run it against a real one
	case $lock in "$WORK"/*) ;; *) t_fail "$name: lock $lock is outside the test's cache"; return ;; esac
	stub "$WORK/nobin/apt-get" 'exit 97'
	stub "$WORK/nobin/apt-cache" 'exit 97'
	stub "$WORK/nobin/dpkg" 'exit 97'
	mkdir -p "$(dirname "$lock")"
	( exec 8>"$lock"; flock 8; exec sleep 60 ) &
	holder=$!
	while flock -n "$lock" true; do sleep 0.05; done
	start=$(bl_now)
	out=$(PATH=$WORK/nobin:$PATH BL_LOCK_WAIT=1 timeout 20 "$script" "$WORK/out-$name" 2>&1) ||
		rc=$?
	secs=$(( $(bl_now) - start ))
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	if [ $rc = 1 ] && [ $secs -le 10 ] && grep -q "still locked by another build after 1s" <<<"$out"; then
		t_ok "$name: gives up on a held lock after BL_LOCK_WAIT with a clear error (${secs}s)"
	else
		t_fail "$name: gives up on a held lock after BL_LOCK_WAIT with a clear error" \
			"exit $rc after ${secs}s (124: still waiting)" "$out"
	fi
}

test_lock_bounds()
{
	expect_lock_bound fetch-busybox.sh "$BL_ROOT/guest/busybox/fetch-busybox.sh" \
		"$BL_CACHE/guest/.busybox.lock"
	expect_lock_bound build-fio.sh "$BL_ROOT/guest/fio/build-fio.sh" \
		"$BL_CACHE/guest/src/.fio.lock"
}

# --- guest/busybox, guest/fio: a private apt, the host's apt untouched -----

# The end of what the last guest script said, for a failure's details.
guest_out()
{
	tail -n 25 "$WORK/guest-apt.out"
}

# Both guest programs fetched and built in a fresh cache, through their
# private apt (network: the Debian mirror; fio's build is most of the
# minute this takes): the binaries are there, and the host's /etc/apt and
# dpkg's architectures are byte for byte as before, with no i386 package.
test_guest_private_apt()
{
	local cache=$WORK/guest-cache bin before after missing n rc=0 why=''
	local names=("fetch-busybox.sh: busybox-static:i386 through a private apt, in a fresh cache"
		"build-fio.sh: a static i386 fio, libaio from a private apt's .deb, in a fresh cache"
		"fetch-busybox.sh and build-fio.sh leave /etc/apt and dpkg's architectures as they were, no i386 package")
	bin=$cache/guest/bin
	missing=$(. "$BL_ROOT/lib/deps.sh"; bl_deps_missing gcc-multilib dpkg-dev make file debian-archive-keyring | paste -sd ' ')
	[ -z "$missing" ] || why="missing host packages: $missing (./run.sh deps)"
	before=$(host_apt_state)
	if [ -z "$why" ]; then
		BOUNCELAB_CACHE=$cache timeout 600 "$BL_ROOT/guest/busybox/fetch-busybox.sh" "$bin" \
			>"$WORK/guest-apt.out" 2>&1 || rc=$?
		# the first network step: a mirror out of reach is no failure
		# of the script
		[ $rc = 0 ] || ! grep -q 'the mirror cannot be reached' "$WORK/guest-apt.out" ||
			why="the Debian mirror (${BOUNCELAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}) cannot be reached"
	fi
	if [ -n "$why" ]; then
		for n in "${names[@]}"; do t_skip "$n" "$why"; done
		return
	fi
	[ $rc = 0 ] && [ -x "$bin/busybox" ] && grep -q '^deb-sha256: [0-9a-f]\{64\}$' "$bin/busybox.version" &&
	   [ -f "$cache/apt/guest-busybox/sources.list" ] &&
		t_ok "${names[0]}" ||
		t_fail "${names[0]}" "exit $rc" "$(guest_out)"
	rc=0
	BOUNCELAB_CACHE=$cache timeout 900 "$BL_ROOT/guest/fio/build-fio.sh" "$bin" \
		>"$WORK/guest-apt.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ -x "$bin/fio" ] &&
	   grep -q '^libaio-dev:i386-deb-sha256: [0-9a-f]\{64\}$' "$bin/fio.version" &&
	   [ -f "$cache/guest/sysroot-i386/usr/lib/i386-linux-gnu/libaio.a" ] &&
		t_ok "${names[1]} ($(grep -o 'in [0-9]* s$' "$WORK/guest-apt.out"))" ||
		t_fail "${names[1]}" "exit $rc" "$(guest_out)"
	after=$(host_apt_state)
	[ "$before" = "$after" ] && [ -z "$(bl_pkg_version libaio-dev:i386)" ] &&
		t_ok "${names[2]}" ||
		t_fail "${names[2]}" "$(diff <(echo "$before") <(echo "$after"))" \
			"libaio-dev:i386: $(bl_pkg_version libaio-dev:i386)"
}

# --- guest/gen-initramfs without a kernel tree -------------------------------

test_gen_initramfs()
{
	local d=$WORK/initramfs rc=0 out list
	mkdir -p "$d/x"
	printf 'hello\n' >"$d/hello"
	printf 'seven..' >"$d/seven"
	cat >"$d/spec" <<-EOF
	# the guest's layout, in small
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /tmp 1777 0 0
	dir /bin 0755 0 0
	file /bin/hello $d/hello 0755 0 0
	file /seven $d/seven 0644 0 0
	slink /bin/sh hello 0777 0 0
	file /init $BL_ROOT/guest/init 0755 0 0
	EOF
	# an empty cache: no unpacked kernel tree, no gen_init_cpio
	out=$("$BL_ROOT/guest/gen-initramfs" "$d/spec" "$d/a.cpio.gz" 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		t_fail "gen-initramfs: works without a kernel tree" "exit $rc" "$out"
		t_skip "gen-initramfs: archive lists root-owned /dev/console c 5,1 and the files" "no archive"
		t_skip "gen-initramfs: same spec, same bytes" "no archive"
		return
	fi
	t_ok "gen-initramfs: works without a kernel tree"
	if ! command -v cpio >/dev/null; then
		t_skip "gen-initramfs: archive lists root-owned /dev/console c 5,1 and the files" "no cpio tool to read it"
	else
		list=$(gzip -dc "$d/a.cpio.gz" | cpio -itv --numeric-uid-gid 2>/dev/null |
			awk '{ dev = $1 ~ /^[cb]/; s = $1 " " $2 " " $3 " " $4
				if (dev) s = s " " $5 $6
				for (i = 9 + dev; i <= NF; i++) s = s " " $i
				print s }')
		(cd "$d/x" && gzip -dc "$d/a.cpio.gz" | cpio -id --quiet bin/hello seven init 2>/dev/null)
		if [ "$list" = "$(printf '%s\n' \
			'drwxr-xr-x 2 0 0 dev' \
			'crw------- 1 0 0 5,1 dev/console' \
			'drwxrwxrwt 2 0 0 tmp' \
			'drwxr-xr-x 2 0 0 bin' \
			'-rwxr-xr-x 1 0 0 bin/hello' \
			'-rw-r--r-- 1 0 0 seven' \
			'lrwxrwxrwx 1 0 0 bin/sh -> hello' \
			'-rwxr-xr-x 1 0 0 init')" ] &&
		   cmp -s "$d/x/bin/hello" "$d/hello" && cmp -s "$d/x/seven" "$d/seven" &&
		   cmp -s "$d/x/init" "$BL_ROOT/guest/init"; then
			t_ok "gen-initramfs: archive lists root-owned /dev/console c 5,1 and the files"
		else
			t_fail "gen-initramfs: archive lists root-owned /dev/console c 5,1 and the files" "$list"
		fi
	fi
	touch "$d/hello"
	"$BL_ROOT/guest/gen-initramfs" "$d/spec" "$d/b.cpio.gz" &&
		cmp -s "$d/a.cpio.gz" "$d/b.cpio.gz" &&
		t_ok "gen-initramfs: same spec, same bytes" ||
		t_fail "gen-initramfs: same spec, same bytes"
}

# --- guest/build: the initramfs of two builds at once ------------------------

# guest_build_sandbox: a sandbox whose guest/build finds busybox, fio and
# the helpers built (fakes in $WORK/ib-cache; fio 4 MiB, so packing takes
# a while); fetch-busybox.sh waits until IB_BUILDS builds have reached it,
# so they pack the initramfs at the same moment. Prints its path.
guest_build_sandbox()
{
	local sb bin=$WORK/ib-cache/guest/bin f
	sb=$(sandbox initramfs-build)
	mkdir -p "$bin"
	for f in busybox labmon memhog copyref lowhog; do echo "fake $f" >"$bin/$f"; done
	head -c 4194304 /dev/urandom >"$bin/fio"
	echo 'sha256: fake' >"$bin/busybox.version"
	echo 'sha256: fake' >"$bin/fio.version"
	stub "$sb/guest/busybox/fetch-busybox.sh" <<-EOF
	touch "$WORK/ib-barrier.\$PPID"
	for i in \$(seq 1 100); do
		[ \$(ls "$WORK"/ib-barrier.* | wc -l) -ge \${IB_BUILDS:-1} ] && exit 0
		sleep 0.1
	done
	EOF
	stub "$sb/guest/fio/build-fio.sh" 'exit 0'
	printf 'all:\n\t@:\n' >"$sb/guest/helpers/Makefile"
	echo "$sb"
}

# Two guest builds at once both succeed and leave a whole image; a third
# finds it up to date; a changed helper makes a new one.
test_initramfs_concurrent()
{
	local sb img=$WORK/ib-cache/guest/initramfs.cpio.gz rca=0 rcb=0 pa pb rc=0 before
	sb=$(guest_build_sandbox)
	BOUNCELAB_CACHE=$WORK/ib-cache IB_BUILDS=2 "$sb/guest/build" >"$WORK/ib-a.out" 2>&1 &
	pa=$!
	BOUNCELAB_CACHE=$WORK/ib-cache IB_BUILDS=2 "$sb/guest/build" >"$WORK/ib-b.out" 2>&1 &
	pb=$!
	wait $pa || rca=$?
	wait $pb || rcb=$?
	[ $rca = 0 ] && [ $rcb = 0 ] && gzip -t "$img" 2>/dev/null &&
	   [ -z "$(ls "$WORK/ib-cache/guest" | grep '\.tmp')" ] &&
		t_ok "guest/build: two builds at once both succeed, the image whole" ||
		t_fail "guest/build: two builds at once both succeed, the image whole" "exit $rca, $rcb" \
			"$(tail -n 3 "$WORK/ib-a.out")" "$(tail -n 3 "$WORK/ib-b.out")"

	before=$(stat -c '%i %Y' "$img" 2>/dev/null)
	sleep 1
	BOUNCELAB_CACHE=$WORK/ib-cache "$sb/guest/build" >"$WORK/ib-c.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ "$(stat -c '%i %Y' "$img")" = "$before" ] &&
	   grep -q "guest initramfs: $img is up to date" "$WORK/ib-c.out" &&
		t_ok "guest/build: inputs unchanged, the initramfs is not packed again" ||
		t_fail "guest/build: inputs unchanged, the initramfs is not packed again" "exit $rc" \
			"$(tail -n 3 "$WORK/ib-c.out")"

	rc=0
	echo "new labmon" >"$WORK/ib-cache/guest/bin/labmon"
	BOUNCELAB_CACHE=$WORK/ib-cache "$sb/guest/build" >"$WORK/ib-d.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ "$(stat -c '%i %Y' "$img")" != "$before" ] &&
	   gzip -dc "$img" | grep -aq 'new labmon' &&
		t_ok "guest/build: a changed helper makes a new initramfs" ||
		t_fail "guest/build: a changed helper makes a new initramfs" "exit $rc" \
			"$(tail -n 3 "$WORK/ib-d.out")"
	rm -f "$WORK"/ib-barrier.*
}

# --- bench/guest-run: data disks never left behind --------------------------

# The disk images a boot left behind (bench/boot-bundle makes them in a
# .img.* folder of the boot's; plan.img is in its bundle).
data_disks()
{
	find "$1" -name '*.img' ! -name plan.img 2>/dev/null
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
# the results disk's tar stream is cut short; FAKE_QEMU=sigkill: QEMU is
# killed by SIGKILL 1 s into the boot.
fake_qemu_system()
{
	stub "$1/qemu-system-i386" <<-'EOF'
	log='' results=''
	for a in "$@"; do
		case $a in
		file:*) log=${a#file:} ;;
		*file=*results.img*) results=${a#*file=}; results=${results%%,*} ;;
		esac
	done
	echo 'BOUNCELAB-GUEST: init started' >"$log"
	case ${FAKE_QEMU:-} in
	sigkill)
		sleep 1
		kill -KILL $$ ;;
	truncated)
		g=$(mktemp -d)
		echo ok >"$g/status"
		head -c 65536 /dev/urandom >"$g/fio.json"
		tar -cf "$g.tar" -C "$g" status fio.json
		head -c 20000 "$g.tar" >"$results"
		rm -rf "$g" "$g.tar"
		echo 'BOUNCELAB-GUEST: done' >>"$log" ;;
	esac
	EOF
}

# A boot's status names what went wrong: a results tar stream cut short
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
	   grep -q "^failed: the results disk's tar stream is truncated or broken" "$out/status" &&
		t_ok "guest-run: a truncated results tar stream fails the boot, saying so" ||
		t_fail "guest-run: a truncated results tar stream fails the boot, saying so" "exit $rc" \
			"status: $(cat "$out/status" 2>/dev/null)" "$(tail -n 3 "$WORK/bs-trunc.out")"

	out=$WORK/bs-kill rc=0
	PATH=$WORK/fakebin-qemu:$PATH FAKE_QEMU=sigkill "${GR[@]}" -o "$out" \
		>"$WORK/bs-kill.out" 2>&1 || rc=$?
	[ $rc = 1 ] && [ "$(cat "$out/status" 2>/dev/null)" = "failed: qemu killed by signal 9 (KILL)" ] &&
		t_ok "guest-run: QEMU killed by SIGKILL 1 s in: 'qemu killed by signal 9 (KILL)', not the bound" ||
		t_fail "guest-run: QEMU killed by SIGKILL 1 s in: 'qemu killed by signal 9 (KILL)', not the bound" \
			"exit $rc" "status: $(cat "$out/status" 2>/dev/null)" "$(tail -n 3 "$WORK/bs-kill.out")"
}

# --- the guest's plan variables from the host --------------------------------

test_plan_options()
{
	local sb rc=0 plan
	sb=$(sandbox plan-options)
	fake_cache
	fake_qemu "$sb"
	"$sb/bench/guest-run" -v pre -j "virtio:smoke-randread.fio" -d 1 -o "$WORK/plan-gr" \
		-W 7 -I 50 -T 90 >"$WORK/plan-gr.out" 2>&1 || rc=$?
	plan=$WORK/plan-gr/plan/plan
	[ $rc = 0 ] && grep -qx BL_DISK_WAIT=7 "$plan" && grep -qx BL_MON_INTERVAL_MS=50 "$plan" &&
	   grep -qx BL_JOB_TIMEOUT=90 "$plan" &&
		t_ok "guest-run -W -I -T: BL_DISK_WAIT, BL_MON_INTERVAL_MS, BL_JOB_TIMEOUT in the plan" ||
		t_fail "guest-run -W -I -T: BL_DISK_WAIT, BL_MON_INTERVAL_MS, BL_JOB_TIMEOUT in the plan" \
			"exit $rc" "$(cat "$plan" 2>/dev/null)" "$(tail -n 3 "$WORK/plan-gr.out")"

	rc=0
	"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --run-id plan --disk-wait 8 \
		--mon-interval-ms 60 --job-timeout 91 >"$WORK/plan-cmp.out" 2>&1 || rc=$?
	plan=$(ls "$sb"/results/plan/boots/*/plan/plan 2>/dev/null | head -n 1)
	[ $rc = 0 ] && [ -n "$plan" ] && grep -qx BL_DISK_WAIT=8 "$plan" &&
	   grep -qx BL_MON_INTERVAL_MS=60 "$plan" && grep -qx BL_JOB_TIMEOUT=91 "$plan" &&
		t_ok "compare --disk-wait --mon-interval-ms --job-timeout reach the boots' plans" ||
		t_fail "compare --disk-wait --mon-interval-ms --job-timeout reach the boots' plans" \
			"exit $rc" "$(cat "$plan" 2>/dev/null)" "$(tail -n 3 "$WORK/plan-cmp.out")"

	rc=0
	"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --run-id plan-bad --job-timeout 5m \
		>"$WORK/plan-bad.out" 2>&1 || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/plan-bad" ] &&
	   grep -q "want a positive number, not '5m'" "$WORK/plan-bad.out" &&
		t_ok "compare --job-timeout 5m refused before the run (exit 2)" ||
		t_fail "compare --job-timeout 5m refused before the run (exit 2)" "exit $rc" \
			"$(tail -n 3 "$WORK/plan-bad.out")"
}

# --- ./run.sh compare: the analysis's failure is the run's ------------------

# run_sh_sandbox NAME: a sandbox whose ./run.sh compare installs and builds
# nothing (deps, kernels/build and guest/build are stubs) and boots the
# fake QEMU on the fake cache; prints its path.
run_sh_sandbox()
{
	local sb
	sb=$(sandbox "$1")
	fake_cache
	fake_qemu "$sb"
	stub "$sb/kernels/build" 'touch "$(dirname "$0")/BUILT"'
	stub "$sb/guest/build" 'exit 0'
	echo 'bl_deps_install() { :; }' >>"$sb/lib/deps.sh"
	echo "$sb"
}

# A run whose boots are all ok but whose analysis fails is no success:
# ./run.sh compare exits 4, saying the analysis failed and where the run is.
test_compare_analysis_fails()
{
	local sb out rc=0
	local small=(--variants pre --disks virtio --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none --pressure-disks none --accel tcg)
	sb=$(run_sh_sandbox analysis-fails)
	stub "$sb/bench/analyze" 'echo "analyze: Traceback (most recent call last)" >&2; exit 1'
	out=$("$sb/run.sh" compare "${small[@]}" --run-id an-fail 2>&1) || rc=$?
	[ $rc = 4 ] && grep -q "analysis failed (exit 1); the raw results are intact: $sb/results/an-fail\$" <<<"$out" &&
		t_ok "run.sh compare: a failed analysis exits 4, naming the run" ||
		t_fail "run.sh compare: a failed analysis exits 4, naming the run" "exit $rc" "$(tail -n 5 <<<"$out")"

	rc=0
	stub "$sb/bench/analyze" 'exit 0'
	out=$("$sb/run.sh" compare "${small[@]}" --run-id an-ok 2>&1) || rc=$?
	[ $rc = 0 ] && grep -q "results: $sb/results/an-ok\$" <<<"$out" &&
		t_ok "run.sh compare: boots and analysis ok: exit 0" ||
		t_fail "run.sh compare: boots and analysis ok: exit 0" "exit $rc" "$(tail -n 5 <<<"$out")"
}

# --- bench/compare: two runs checking their job files at once ---------------

# Two compares whose guest fio rejects their job files at the same moment
# (a fake fio that waits for the other's before it exits): each shows
# fio's complaint about its own job file, not the other run's.
test_parse_out_private()
{
	local sb a b rca=0 rcb=0 ok=1 x
	sb=$(sandbox parse-out)
	fake_cache
	stub "$BL_CACHE/guest/bin/fio" <<-EOF
	[ "\$1" = --help ] && exit 0
	echo "fio: cannot parse \$(basename "\${@: -1}")"
	touch "$WORK/fio-barrier.\$\$"
	for i in \$(seq 1 100); do
		[ \$(ls "$WORK"/fio-barrier.* | wc -l) -ge 2 ] && break
		sleep 0.1
	done
	exit 1
	EOF
	for x in a b; do
		mkdir -p "$WORK/jobs-$x"
		printf '[bad-%s]\nrw=read\n' $x >"$WORK/jobs-$x/bad-$x.fio"
		"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
			--jobs bad-$x --probe-jobs none --integrity-jobs none --pressure-disks none \
			--jobs-dir "$WORK/jobs-$x" --accel tcg --run-id parse-$x >"$WORK/parse-$x.out" 2>&1 &
		eval "pid_$x=\$!"
	done
	wait "$pid_a" || rca=$?
	wait "$pid_b" || rcb=$?
	for x in a b; do
		grep -qx "  fio: cannot parse bad-$x.fio" "$WORK/parse-$x.out" &&
			! grep -q "cannot parse bad-[^$x]" "$WORK/parse-$x.out" || ok=''
	done
	fake_cache
	[ -n "$ok" ] && [ $rca != 0 ] && [ $rcb != 0 ] &&
		t_ok "compare: two runs rejected by fio at once each show their own job file's error" ||
		t_fail "compare: two runs rejected by fio at once each show their own job file's error" \
			"exit $rca, $rcb" "a: $(cat "$WORK/parse-a.out")" "b: $(cat "$WORK/parse-b.out")"
}

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

# --- bench/compare --until-ci -------------------------------------------------

# A fake bench/analyze whose --ci-check says "too wide" once, then "narrow
# enough": compare adds exactly one round of boots, numbered on.
test_until_ci()
{
	local sb rc=0 run
	sb=$(sandbox until-ci)
	fake_cache
	fake_qemu "$sb"
	stub "$sb/bench/analyze" <<-'EOF'
	[ "$1" = --ci-check ] || exit 0
	f=$3/.checks
	echo x >>"$f"
	[ "$(wc -l <"$f")" -ge 2 ] && { echo "ci-check: narrow enough"; exit 0; }
	echo "ci-check: too wide: 0 of 4 primary rows"; exit 1
	EOF
	# (no pressure boots: the default matrix's would add a boot per variant)
	"$sb/bench/compare" --variants pre,post --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none --accel tcg \
		--pressure-disks none --run-id until --until-ci 3 >"$WORK/until.out" 2>&1 || rc=$?
	run=$sb/results/until
	[ $rc = 0 ] && [ "$(awk -F'\t' 'NR > 1 { print $1 ":" $2 ":" $5 }' "$run/boots.tsv" | tr '\n' ' ')" = \
		"1:pre:1 2:post:1 3:pre:2 4:post:2 " ] && grep -q '"reps": 2' "$run/meta.json" &&
		t_ok "compare --until-ci: one more interleaved round while the CIs are too wide" ||
		t_fail "compare --until-ci: one more interleaved round while the CIs are too wide" \
			"exit $rc" "$(cat "$run/boots.tsv" 2>/dev/null)" "$(tail -n 4 "$WORK/until.out")"
}

# --- clocks: host time, instruction time -------------------------------------

# boot_clock RUN BOOT_GLOB: what the fake QEMU of that boot was given.
# --- bench/compare: exact-clock boots side by side, more reps if they spread --

# A fake bench/analyze whose --determinism-check names the ram entry once:
# its boots get reps 2 and 3, side by side, before the host-time boots.
test_determinism_round()
{
	local sb rc=0 run got
	sb=$(sandbox determinism)
	fake_cache
	fake_qemu "$sb"
	stub "$sb/bench/analyze" <<-'EOF'
	[ "$1" = --determinism-check ] || exit 0
	echo "determinism-check: 1 of 2 exact-clock cells within ±0.2%"
	echo "extend ram none"
	echo "  post ram lat-randread-4k-qd1 none read_iops: n=1, spread nan%"
	exit 1
	EOF
	"$sb/bench/compare" --variants pre,post --disks ram@insn,virtio --pressure none \
		--reps 3 --exact-reps 1 --jobs smoke-randread --probe-jobs none \
		--integrity-jobs none --accel tcg --pressure-disks none -j 2 \
		--run-id det >"$WORK/det.out" 2>&1 || rc=$?
	run=$sb/results/det
	got=$(awk -F'\t' 'NR > 1 { print $1 ":" $2 ":" $3 ":" $5 ":" $9 }' "$run/boots.tsv" | sort -n | tr '\n' ' ')
	[ $rc = 0 ] && [ "$got" = "1:pre:ram:1:local 2:post:ram:1:local 3:pre:virtio:1:local \
4:post:virtio:1:local 5:pre:virtio:2:local 6:post:virtio:2:local 7:pre:virtio:3:local \
8:post:virtio:3:local 9:pre:ram:2:local 10:post:ram:2:local 11:pre:ram:3:local 12:post:ram:3:local " ] &&
	   [ "$(awk -F'\t' 'NR > 1 { print $3 }' "$run/boots.tsv" | uniq | tr '\n' ' ')" = "ram virtio " ] &&
	   grep -q '^extend ram none' "$run/determinism-check.txt" &&
	   grep -q '"exact_reps": 1' "$run/meta.json" && grep -q '"side_by_side": 2' "$run/meta.json" &&
	   [ ! -e "$run/.stage" ] && [ -z "$(ls -d "$run"/boots/*/bundle 2>/dev/null)" ] &&
		t_ok "compare: a spread exact entry gets the rest of its reps, side by side, before the host-time boots" ||
		t_fail "compare: a spread exact entry gets the rest of its reps, side by side, before the host-time boots" \
			"exit $rc" "$got" "$(tail -n 4 "$WORK/det.out")"

	# a boot side by side that fails: the run goes on, the boot and its
	# serial log are kept, exit 3
	rc=0
	BL_COMPARE_FAIL_BOOT=2 "$sb/bench/compare" --variants pre,post,pre-fixed --disks ram@insn \
		--pressure none --reps 1 --jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --pressure-disks none -j 2 --run-id det-fail >"$WORK/det-fail.out" 2>&1 || rc=$?
	run=$sb/results/det-fail
	got=$(awk -F'\t' 'NR > 1 { print $1 ":" $6 }' "$run/boots.tsv" | sort -n | tr '\n' ' ')
	[ $rc = 3 ] && [[ $got == "1:ok 2:failed: kernel panic: Kernel panic - not syncing: No working init found. 3:ok " ]] &&
	   [ -s "$run/boots/002-post-ram-none-r1/serial.log" ] &&
	   grep -q 'boot 2 post ram none rep 1: failed: kernel panic' "$WORK/det-fail.out" &&
		t_ok "compare: a side-by-side boot that panics is kept and marked failed, the others run, exit 3" ||
		t_fail "compare: a side-by-side boot that panics is kept and marked failed, the others run, exit 3" \
			"exit $rc" "$got" "$(tail -n 4 "$WORK/det-fail.out")"

	rc=0
	"$sb/bench/compare" --variants pre --disks ram@insn --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none --accel tcg \
		--pressure-disks none -j 0 --run-id det-bad >"$WORK/det-bad.out" 2>&1 || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/det-bad" ] && grep -q "^bouncelab: error: -j wants a positive number" "$WORK/det-bad.out" &&
		t_ok "compare -j 0 refused before the run (exit 2)" ||
		t_fail "compare -j 0 refused before the run (exit 2)" "exit $rc" "$(tail -n 3 "$WORK/det-bad.out")"
}

# meta_key RUN KEY: meta.json's KEY of RUN, as one line of JSON.
meta_key()
{
	/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' \
		"$1/meta.json" "$2" 2>&1
}

boot_clock()
{
	cat "$1"/boots/$2/serial.log.clock 2>/dev/null
}

# An entry's @CLOCK reaches QEMU as lab.conf's vCPUs and icount shift, the
# other entries keep the default clock; meta.json records each disk's.
test_clocks()
{
	local sb rc=0 run out
	sb=$(sandbox clocks)
	fake_cache
	fake_qemu "$sb"
	local small=(--variants pre --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none --accel tcg)

	"$sb/bench/compare" "${small[@]}" --disks ram-bounce+ram@insn,virtio --run-id clk \
		>"$WORK/clk.out" 2>&1 || rc=$?
	run=$sb/results/clk
	[ $rc = 0 ] && [ "$(boot_clock "$run" '001-*')" = "cpus=1 icount=3" ] &&
	   [ "$(boot_clock "$run" '002-*')" = "cpus=2 icount=" ] &&
	   [ "$(cat "$run"/boots/001-*/clock)" = insn ] &&
	   [ "$(meta_key "$run" disk_clocks)" = '{"ram-bounce": "insn", "ram": "insn", "virtio": "host"}' ] &&
		t_ok "compare: ram-bounce+ram@insn boots with 1 vCPU and icount 3, virtio on host time" ||
		t_fail "compare: ram-bounce+ram@insn boots with 1 vCPU and icount 3, virtio on host time" \
			"exit $rc" "$(cat "$run"/boots/*/serial.log.clock 2>/dev/null)" \
			"$(meta_key "$run" disk_clocks)" "$(tail -n 3 "$WORK/clk.out")"

	rc=0
	"$sb/bench/compare" "${small[@]}" --disks virtio --clock insn --run-id clk-all \
		>"$WORK/clk-all.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ "$(boot_clock "$sb/results/clk-all" '001-*')" = "cpus=1 icount=3" ] &&
	   grep -q '"clock": "insn"' "$sb/results/clk-all/meta.json" &&
		t_ok "compare --clock insn: the entries without a clock take it" ||
		t_fail "compare --clock insn: the entries without a clock take it" "exit $rc" \
			"$(tail -n 3 "$WORK/clk-all.out")"

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --disks virtio@sundial --run-id clk-bad 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/clk-bad" ] && grep -q "unknown clock 'sundial'" <<<"$out" &&
		t_ok "compare: an unknown clock is refused before the run (exit 2)" ||
		t_fail "compare: an unknown clock is refused before the run (exit 2)" "exit $rc" "$out"

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --disks ram-bounce+ram@insn,ram --run-id clk-mix 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/clk-mix" ] &&
	   grep -q "disk 'ram' is in entries with different clocks (insn, host)" <<<"$out" &&
		t_ok "compare: one disk under two clocks is refused (exit 2)" ||
		t_fail "compare: one disk under two clocks is refused (exit 2)" "exit $rc" "$out"
}

# --- ./run.sh compare --dry-run ---------------------------------------------

# old_run SANDBOX ID AGE BOOTS_TSV_ROWS...: a finished run in results/.
old_run()
{
	local run=$1/results/$2 row
	mkdir -p "$run"
	printf 'boot\tvariant\tdisk\tpressure\trep\tstatus\tseconds\tdir\n' >"$run/boots.tsv"
	for row in "${@:4}"; do printf '%s\n' "$row" | tr ' ' '\t' >>"$run/boots.tsv"; done
	printf '{\n  "jobs": "a b c d e f",\n  "reps": 3\n}\n' >"$run/meta.json"
	touch -d "$3" "$run/boots.tsv"
}

test_dry_run()
{
	local sb out rc=0
	sb=$(sandbox dry-run)
	rm -rf "$WORK/cache"	# (BL_CACHE is $WORK/cache here: no fakes)
	stub "$sb/kernels/build" 'touch "$(dirname "$0")/BUILT"; exit 1'
	stub "$sb/bench/guest-run" 'touch "$(dirname "$0")/BOOTED"; exit 1'
	# and never apt: a dry run that reached the deps would install them
	echo 'bl_deps_install() { touch "$BL_ROOT/kernels/BUILT"; return 1; }' >>"$sb/lib/deps.sh"

	# default matrix: ram-bounce+ram@insn in 2 reps (exact_reps), virtio
	# in 4, usb-pio in the first (usb-pio:1), ram-bounce+ram@insn once
	# more under full24 (pressure_disks) in 2: 27 boots for 3 variants;
	# the 12 exact-clock ones 2 side by side
	out=$("$sb/run.sh" compare --dry-run -j 2 2>&1) || rc=$?
	if [ $rc = 0 ] && grep -q 'no earlier boot of it: a guess' <<<"$out" &&
	   grep -q 'total: about 16m27s (2 side by side' <<<"$out" &&
	   [ "$(grep -cE '^  [0-9]+ ' <<<"$out")" = 27 ] &&
	   grep -Eq '^  1 +pre +ram-bounce\+ram +none +1 +insn$' <<<"$out" &&
	   grep -Eq '^  9 +post +usb-pio +none +1 +host$' <<<"$out" &&
	   grep -Eq '^  10 +pre +ram-bounce\+ram +full24 +1 +insn$' <<<"$out" &&
	   grep -Eq '^  21 +post +ram-bounce\+ram +full24 +2 +insn$' <<<"$out" &&
	   grep -Eq '^  27 +post +virtio +none +4 +host$' <<<"$out"; then
		t_ok "compare --dry-run, no earlier run: 27 boots in order, the stated default guess"
	else
		t_fail "compare --dry-run, no earlier run: 27 boots in order, the stated default guess" \
			"exit $rc" "$out"
	fi

	# the newest run with the boot's disk and pressure counts, its ok
	# boots only; a disk no run has gets the newest run's mean
	old_run "$sb" 20250101-000000 '2025-01-01' '1 pre usb-pio none 1 ok 500 boots/x'
	old_run "$sb" 20250202-000000 '2025-02-02' '1 pre usb-pio none 1 ok 60 boots/x' \
		'2 pre virtio none 1 ok 30 boots/x' '3 pre virtio none 1 ok 50 boots/x' \
		'4 post virtio none 1 failed:_bound 900 boots/x'
	old_run "$sb" 20250303-000000 '2025-03-03' '1 pre usb-pio none 1 failed:_panic 9 boots/x'
	rc=0
	out=$("$sb/run.sh" compare --dry-run -j 2 2>&1) || rc=$?
	if [ $rc = 0 ] &&
	   grep -Eq '^  usb-pio +none +3 boot\(s\) x +60s$' <<<"$out" &&
	   grep -Eq '^  virtio +none +12 boot\(s\) x +40s$' <<<"$out" &&
	   grep -Eq '^  ram-bounce\+ram +full24 +6 boot\(s\) x +47s, side by side \(no earlier' <<<"$out" &&
	   grep -q 'total: about 15m40s' <<<"$out"; then
		t_ok "compare --dry-run: estimate from the newest runs' ok boots, per disk and pressure (15m40s)"
	else
		t_fail "compare --dry-run: estimate from the newest runs' ok boots, per disk and pressure" "exit $rc" "$out"
	fi

	[ ! -e "$sb/kernels/BUILT" ] && [ ! -e "$sb/bench/BOOTED" ] &&
	   [ "$(ls "$sb/results")" = "$(printf '%s\n' 20250101-000000 20250202-000000 20250303-000000)" ] &&
		t_ok "compare --dry-run builds, boots and writes nothing" ||
		t_fail "compare --dry-run builds, boots and writes nothing" "$(ls "$sb/results" "$sb/kernels" "$sb/bench")"
}

# --- bench/compare: pressure boots -------------------------------------------

# refused_before_run WHAT RUN_ID MESSAGE ARGS...: compare (the sandbox $sb,
# the arguments ${small[@]} of the caller) with ARGS exits 2, a bad
# argument, with MESSAGE and leaves no run folder.
refused_before_run()
{
	local what=$1 id=$2 msg=$3 rc=0 out
	shift 3
	out=$("$sb/bench/compare" "${small[@]}" --accel tcg --run-id "$id" "$@" 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/$id" ] && grep -qF -- "$msg" <<<"$out" &&
		t_ok "compare: $what is refused before the run (exit 2)" ||
		t_fail "compare: $what is refused before the run (exit 2)" "exit $rc" "$out"
}

# The pressure_disks entries are booted again under each pressure level,
# running only the pressure jobs; a level that is also a pressure of
# every boot, pressure disks without levels or jobs, and an unknown level
# are refused before the run.
test_pressure_boots()
{
	local sb out rc=0 run plan known
	sb=$(sandbox pressure)
	# what the refusals name: every pressure of lab.conf, in its order
	known=$(. "$BL_ROOT/lib/lab.sh" && bl_lab_names pressure | tr '\n' ' ')
	fake_cache
	fake_qemu "$sb"
	local small=(--variants pre,post --disks virtio --pressure none --reps 2
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks ram-bounce+ram@insn --pressure-levels full24,full64
		--pressure-jobs pressure-writeback)

	# 2 reps x (2 virtio boots + 2 variants x 2 levels): 12, in rounds
	out=$("$sb/bench/compare" --dry-run "${small[@]}" 2>&1) || rc=$?
	if [ $rc = 0 ] && grep -q '; 12 boots;' <<<"$out" &&
	   [ "$(grep -cE '^  [0-9]+ ' <<<"$out")" = 12 ] &&
	   [ "$(grep -E '^  [0-9]+ ' <<<"$out" | awk '{ printf "%s:%s:%s:%s:%s ", $1, $2, $3, $4, $5 }')" = \
	     "$(printf '%s ' 1:pre:virtio:none:1 2:post:virtio:none:1 \
		3:pre:ram-bounce+ram:full24:1 4:post:ram-bounce+ram:full24:1 \
		5:pre:ram-bounce+ram:full64:1 6:post:ram-bounce+ram:full64:1 \
		7:pre:virtio:none:2 8:post:virtio:none:2 \
		9:pre:ram-bounce+ram:full24:2 10:post:ram-bounce+ram:full24:2 \
		11:pre:ram-bounce+ram:full64:2 12:post:ram-bounce+ram:full64:2)" ] &&
	   [ -z "$(ls "$sb/results")" ]; then
		t_ok "compare --dry-run --pressure-disks/-levels/-jobs: 12 boots, full24 and full64 on ram-bounce+ram"
	else
		t_fail "compare --dry-run --pressure-disks/-levels/-jobs: 12 boots, full24 and full64 on ram-bounce+ram" \
			"exit $rc" "$out" "results: $(ls "$sb/results")"
	fi

	# a run (fake QEMU): a pressure boot runs only the pressure jobs,
	# under its level's kind and size; meta.json keeps the three keys
	rc=0
	"$sb/bench/compare" "${small[@]}" --variants pre --reps 1 --pressure-levels full24 \
		--accel tcg --run-id press >"$WORK/press.out" 2>&1 || rc=$?
	run=$sb/results/press
	plan=$(ls "$run"/boots/002-pre-ram-bounce+ram-full24-r1/plan/plan 2>/dev/null)
	if [ $rc = 0 ] && [ -n "$plan" ] &&
	   grep -qx 'BL_JOBS="ram-bounce:pressure-writeback.fio ram:pressure-writeback.fio"' "$plan" &&
	   grep -qx BL_PRESSURE=full "$plan" && grep -qx BL_LOWFREE_TARGET_MB=24 "$plan" &&
	   grep -qx 'BL_JOBS="virtio:smoke-randread.fio"' "$run"/boots/001-pre-virtio-none-r1/plan/plan &&
	   grep -qx BL_PRESSURE=none "$run"/boots/001-pre-virtio-none-r1/plan/plan &&
	   grep -q '"pressure_disks": "ram-bounce+ram@insn"' "$run/meta.json" &&
	   grep -q '"pressure_levels": "full24"' "$run/meta.json" &&
	   grep -q '"pressure_jobs": "pressure-writeback"' "$run/meta.json"; then
		t_ok "compare: a full24 boot runs only pressure-writeback, BL_PRESSURE=full, LowFree 24; meta.json has the keys"
	else
		t_fail "compare: a full24 boot runs only pressure-writeback, BL_PRESSURE=full, LowFree 24; meta.json has the keys" \
			"exit $rc" "$(cat "$plan" 2>/dev/null)" "$(grep pressure "$run/meta.json" 2>/dev/null)" \
			"$(tail -n 3 "$WORK/press.out")"
	fi

	# refused before the run: nothing booted, no run folder
	refused_before_run "a level that is also in --pressure" press-twice \
		"pressure 'full24' is both a pressure of every boot and a pressure level; name it once" \
		--pressure none,full24
	refused_before_run "pressure disks without pressure jobs" press-nojobs \
		"pressure disks 'ram-bounce+ram@insn' need pressure levels and pressure jobs (levels 'full24 full64', jobs '')" \
		--pressure-jobs none
	refused_before_run "pressure disks without pressure levels" press-nolevels \
		"pressure disks 'ram-bounce+ram@insn' need pressure levels and pressure jobs (levels '', jobs 'pressure-writeback')" \
		--pressure-levels none

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --pressure-levels full24,full99 --accel tcg \
		--run-id press-unknown 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/press-unknown" ] &&
	   grep -q "unknown pressure 'full99' (known: $known)" <<<"$out" &&
		t_ok "compare: an unknown pressure level is refused (exit 2), naming the known ones" ||
		t_fail "compare: an unknown pressure level is refused (exit 2), naming the known ones" "exit $rc" "$out"

	# guest-run dies on the pressure before it looks for a kernel: an
	# empty cache, and no OUTDIR made
	rc=0
	out=$(BOUNCELAB_CACHE=$WORK/no-cache "$sb/bench/guest-run" -v pre -o "$WORK/gr-press" \
		-j "virtio:smoke-randread.fio" -p full99 2>&1) || rc=$?
	[ $rc != 0 ] && [ ! -e "$WORK/gr-press" ] &&
	   grep -q "unknown pressure 'full99' (known: $known)" <<<"$out" &&
	   ! grep -q 'no kernel' <<<"$out" &&
		t_ok "guest-run -p full99: refused before any kernel or boot, naming the known pressures" ||
		t_fail "guest-run -p full99: refused before any kernel or boot, naming the known pressures" \
			"exit $rc" "$out"
}

# --- bench/compare: an unknown job is named as such ---------------------------

# A job name with no job file is refused as an unknown job whichever list
# names it, in a dry run too, before any other check of the lists (a probe
# job not among the jobs, say) can blame something else.
test_unknown_jobs()
{
	local sb out rc opt dry
	local small=(--variants pre --disks virtio --pressure none --reps 1
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks none)
	sb=$(sandbox unknown-jobs)
	fake_cache
	fake_qemu "$sb"	# (a job name let through must boot nothing)
	for dry in '' --dry-run; do
		for opt in --jobs --probe-jobs --integrity-jobs --pressure-jobs; do
			rc=0
			# (pressure jobs count only with pressure disks)
			[ $opt != --pressure-jobs ] || opt="--pressure-disks ram --pressure-levels full24 $opt"
			out=$("$sb/bench/compare" "${small[@]}" $opt nosuchjob $dry --accel tcg \
				--run-id "uj${opt##* }$dry" 2>&1) || rc=$?
			[ $rc = 2 ] && [ -z "$(ls "$sb/results")" ] &&
			   grep -q "unknown job 'nosuchjob': job file not found: $sb/bench/jobs/nosuchjob.fio" <<<"$out" &&
			   ! grep -q 'probe job' <<<"$out" &&
				t_ok "compare ${opt##* } nosuchjob${dry:+ $dry}: refused as an unknown job (exit 2)" ||
				t_fail "compare ${opt##* } nosuchjob${dry:+ $dry}: refused as an unknown job (exit 2)" "exit $rc" "$out"
		done
	done
}

# --- bench/compare, ./run.sh compare: a bad argument exits 2 -------------------

# Every refused argument exits 2 with its message, before any run folder
# (and, through ./run.sh compare, before anything is built); what is not
# built or missing on the host stays exit 1.
test_bad_arguments()
{
	local sb out rc what
	local small=(--variants pre --disks virtio --pressure none --reps 2
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks none)
	sb=$(run_sh_sandbox bad-args)
	stub "$BL_CACHE/guest/bin/fio" '[ "$1" = --help ] || [[ ${@: -1} != */bad.fio ]]'
	printf '[bad]\nrw=sideways\n' >"$WORK/bad.fio"
	cp "$sb/bench/jobs/smoke-randread.fio" "$WORK/"
	mkdir -p "$sb/results/taken"

	refused_before_run "an unknown variant" ba-variant "unknown variant 'nosuch'" --variants pre,nosuch
	refused_before_run "--reps 0" ba-reps "--reps wants a positive number, not '0'" --reps 0
	refused_before_run "--exact-reps 0" ba-exact "--exact-reps wants a positive number, not '0'" --exact-reps 0
	refused_before_run "--integrity-reps x" ba-ireps "--integrity-reps wants a positive number, not 'x'" --integrity-reps x
	refused_before_run "--integrity-reps 1 with no other jobs" ba-ireps-only "with no other jobs the boots of reps 2-2 would run nothing" \
		--jobs none --integrity-jobs smoke-randread --integrity-reps 1
	refused_before_run "-j 0" ba-j "-j wants a positive number of boots side by side, not '0'" -j 0
	refused_before_run "an unreadable --sshloginfile" ba-ssh "--sshloginfile: cannot read '$WORK/no-such-file'" \
		--sshloginfile "$WORK/no-such-file"
	refused_before_run "an unknown matrix set" ba-set "no matrix set 'nosuch' in bench/matrix" --set nosuch
	refused_before_run "--accel fast" ba-accel "--accel is auto, tcg or kvm, not 'fast'" --accel fast
	refused_before_run "--timeout 0" ba-timeout "--timeout wants seconds, not '0'" --timeout 0
	refused_before_run "--until-ci x" ba-until "--until-ci wants a percentage, not 'x'" --until-ci x
	refused_before_run "--budget-min 0" ba-budget "--budget-min wants minutes, not '0'" --budget-min 0
	refused_before_run "--lowfree-mb 0" ba-lowfree "--lowfree-mb wants MiB, not '0'" --lowfree-mb 0
	refused_before_run "a disk entry's reps of 0" ba-disk0 "disk entry 'virtio:0': the reps after ':' must be a positive number" --disks virtio:0
	refused_before_run "an empty matrix" ba-empty "empty matrix" --jobs none --integrity-reps 2
	refused_before_run "a probe job not among the jobs" ba-probe "probe job 'lat-randread-4k-qd1' is not among the jobs" \
		--probe-jobs lat-randread-4k-qd1
	refused_before_run "a job file fio rejects" ba-fio "fio rejects job file $WORK/bad.fio" --jobs-dir "$WORK" --jobs bad
	refused_before_run "an unknown option" ba-option "unknown option '--bogus'" --bogus
	refused_before_run "a run id already taken" ba-taken "results/taken exists; a run never overwrites another" \
		--run-id taken

	# an option without its value, at the end of the line
	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --accel tcg --reps 2>&1) || rc=$?
	[ $rc = 2 ] && grep -qx "bouncelab: error: --reps wants a value" <<<"$out" &&
		t_ok "compare: an option without its value is refused (exit 2)" ||
		t_fail "compare: an option without its value is refused (exit 2)" "exit $rc" "$out"

	# not built: no guest fio in an empty cache
	rc=0
	out=$(BOUNCELAB_CACHE=$WORK/empty-cache "$sb/bench/compare" "${small[@]}" --accel tcg \
		--run-id ba-unbuilt 2>&1) || rc=$?
	[ $rc = 1 ] && [ ! -e "$sb/results/ba-unbuilt" ] && grep -q "no guest fio at" <<<"$out" &&
		t_ok "compare: nothing built is refused with exit 1, not 2" ||
		t_fail "compare: nothing built is refused with exit 1, not 2" "exit $rc" "$out"

	# ./run.sh compare passes the 2 on, having built nothing
	for what in "--variants pre,nosuch|unknown variant 'nosuch'" \
		"--reps 0|--reps wants a positive number, not '0'" \
		"--set nosuch|no matrix set 'nosuch'" \
		"--set versions --quick|--quick and --set name two matrix sets (versions, quick)"; do
		rc=0
		out=$("$sb/run.sh" compare "${small[@]}" ${what%%|*} --accel tcg --run-id ba-run 2>&1) || rc=$?
		[ $rc = 2 ] && [ ! -e "$sb/kernels/BUILT" ] && [ ! -e "$sb/results/ba-run" ] &&
		   grep -qF -- "${what#*|}" <<<"$out" &&
			t_ok "run.sh compare ${what%%|*}: exit 2 before building anything" ||
			t_fail "run.sh compare ${what%%|*}: exit 2 before building anything" "exit $rc" \
				"built: $(ls "$sb/kernels/BUILT" 2>&1)" "$out"
	done
	fake_cache
}

# --- one description of the lab ------------------------------------------------

# Adding a disk kind must not need code changed: no code line (comments
# and docstrings aside) outside bench/lab.conf, bench/matrix and the job
# files names a serial, a disk or a kernel variant (tests/lab/hard-coded.py).
test_lab_description()
{
	local hits rc=0
	hits=$(/usr/bin/python3 "$BL_ROOT/tests/lab/hard-coded.py" "$BL_ROOT") || rc=$?
	[ $rc = 0 ] &&
		t_ok "no serial, disk or variant name in the code outside bench/lab.conf" ||
		t_fail "no serial, disk or variant name in the code outside bench/lab.conf" "$hits"
	printf 'serial=BLUSB0001\n' >"$WORK/hc-probe.sh"
	rc=0
	hits=$(sb=$(sandbox hard-coded) && cp "$WORK/hc-probe.sh" "$sb/lib/" &&
		/usr/bin/python3 "$BL_ROOT/tests/lab/hard-coded.py" "$sb") || rc=$?
	[ $rc = 1 ] && grep -q 'lib/hc-probe.sh:1' <<<"$hits" &&
		t_ok "the check finds a serial written into lib/" ||
		t_fail "the check finds a serial written into lib/" "exit $rc" "$hits"
}

# --- kernels/variants and the stacks it names ----------------------------

# variants CODE: CODE run with lib/variants.sh sourced, in a subshell; its
# output and errors on stdout.
variants()
{
	( . "$BL_ROOT/lib/variants.sh"; eval "$1" ) 2>&1
}

# Every variant of every base finds its stacks, each a folder
# kernels/patches/BASE/STACK of the variant's own base, and the patch files
# kernels/build would apply (what kernels/build reads, without a build).
check_variant_stacks()
{
	local v b s p fail=0
	for v in $(variants 'bl_variants --all'); do
		b=$(variants "bl_variant_base $v")
		for s in $(variants "bl_variant_stacks $v"); do
			[ "${s%%/*}" = "$b" ] && [ -d "$BL_ROOT/kernels/patches/$s" ] ||
				{ echo "$v (base $b): stack $s is not a folder kernels/patches/$b/STACK"; fail=1; }
		done
		p=$(variants "bl_variant_patches $v") ||
			{ echo "$v: $(tail -n 1 <<<"$p")"; fail=1; continue; }
		for s in $p; do
			[ -f "$s" ] && [[ $s == *.patch ]] ||
				{ echo "$v: $s is not a patch file"; fail=1; }
		done
		[ -n "$p" ] || { echo "$v: no patch"; fail=1; }
	done
	return $fail
}

test_variants()
{
	local out def short long

	t_check "variants: every variant's stacks are its base's folders, with patches" \
		check_variant_stacks

	# the default base's variants: named DEFAULT/VARIANT in the table,
	# listed and cached by the short name, both names the same variant
	def=$(bases bl_default_base)
	short=$(variants 'bl_variants' | paste -sd ' ')
	long=$(awk -v d="$def/" 'index($1, d) == 1 { print substr($1, length(d) + 1) }' \
		"$BL_ROOT/kernels/variants" | paste -sd ' ')
	out=$(variants 'for v in $(bl_variants); do
		[ "$(bl_variant_stacks "$v")" = "$(bl_variant_stacks '"$def"'/"$v")" ] ||
			echo "$v: stacks differ from '"$def"'/$v"
		[ "$(bl_variant_base "$v")" = '"$def"' ] || echo "$v: base $(bl_variant_base "$v")"
	done')
	[ -n "$short" ] && [ "$short" = "$long" ] && [ -z "$out" ] &&
		t_ok "variants: the default base's $long, written $def/VARIANT, are called VARIANT too" ||
		t_fail "variants: the default base's variants, written $def/VARIANT, are called VARIANT too" \
			"bl_variants: '$short'" "kernels/variants: '$long'" "$out"

	# a line without "BASE/" is a variant of the default base as well
	printf '%s/x\ta\ny\tb\n9.99/z\tc\n' "$def" >"$WORK/variants"
	out=$(variants 'export BOUNCELAB_VARIANTS_FILE='"$WORK"'/variants
		BL_VARIANTS_FILE=$BOUNCELAB_VARIANTS_FILE
		echo $(bl_variants) / $(bl_variants --all) / $(bl_variant_stacks '"$def"'/y)')
	[ "$out" = "x y / x y 9.99/z / b" ] &&
		t_ok "variants: DEFAULT/x and y are both the default base's, 9.99/z is not" ||
		t_fail "variants: DEFAULT/x and y are both the default base's, 9.99/z is not" "$out"
}

# --- lib/bases.sh and kernels/fetch-base, offline -------------------------

# bases CODE: CODE run with lib/bases.sh sourced, in a subshell; its
# output and errors on stdout.
bases()
{
	( . "$BL_ROOT/lib/bases.sh"; eval "$1" ) 2>&1
}

# What must not change on the host whatever a fetch does: every file under
# /etc/apt (names, kinds, contents) and dpkg's foreign architectures.
host_apt_state()
{
	find /etc/apt -printf '%p %y %m %l\n' 2>&1 | sort
	find /etc/apt -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum 2>&1
	dpkg --print-foreign-architectures 2>&1
}

test_bases()
{
	local out rc table pinned

	out=$(bases 'bl_base_package 9.99') && rc=0 || rc=$?
	[ $rc != 0 ] && grep -q "unknown base '9.99' (known: $(bases bl_bases | paste -sd ' '))" <<<"$out" &&
		t_ok "bases: an unknown base is refused, naming the known ones" ||
		t_fail "bases: an unknown base is refused, naming the known ones" "exit $rc" "$out"

	table=$(awk '$1 == "5.10" { print $4 }' "$BL_ROOT/kernels/bases")
	pinned=$(bases 'BOUNCELAB_PIN="6.1=6.1.170-3 5.10=5.10.259-1" bl_base_version 5.10')
	out=$(bases 'bl_base_version 5.10')
	[ "$pinned" = 5.10.259-1 ] && [ "$out" = "$table" ] && [ "$out" != "$pinned" ] &&
		t_ok "bases: BOUNCELAB_PIN=5.10=5.10.259-1 changes bl_base_version 5.10 (table: $table)" ||
		t_fail "bases: BOUNCELAB_PIN changes bl_base_version" "pinned: $pinned" "table: $table, unpinned: $out"

	out=$(bases 'BOUNCELAB_PIN="5.10=5.10.259-1 6.12=6.12.1-1" bl_base_version 5.10') && rc=0 || rc=$?
	[ $rc != 0 ] && grep -q 'base 6.12 is the host.s installed linux-source-6.12; it cannot be pinned' <<<"$out" &&
		t_ok "bases: pinning the installed base is refused" ||
		t_fail "bases: pinning the installed base is refused" "exit $rc" "$out"

	out=$(bases '(BOUNCELAB_PIN="5.1=5.10.259-1" bl_base_version 5.10); echo "exit $?"
		(BOUNCELAB_PIN="5.10" bl_base_version 5.10); echo "exit $?"
		(BOUNCELAB_PIN="5.10=5.10.1-1;ls" bl_base_version 5.10); echo "exit $?"')
	[ "$(grep -c '^exit 1$' <<<"$out")" = 3 ] &&
	   grep -q "BOUNCELAB_PIN: unknown base '5.1'" <<<"$out" &&
	   grep -q "BOUNCELAB_PIN: '5.10' is not BASE=VERSION" <<<"$out" &&
	   grep -q "is not a Debian version" <<<"$out" &&
		t_ok "bases: a pin of an unknown base, without '=' or with a bad version is refused" ||
		t_fail "bases: a pin of an unknown base, without '=' or with a bad version is refused" "$out"

	out=$(bases 'for v in 5.10/stock pre 6.12/post 4.19/x 7.2/a/b; do
		printf "%s=%s " "$v" "$(bl_variant_base "$v")"; done; bl_default_base')
	[ "$out" = "5.10/stock=5.10 pre=6.12 6.12/post=6.12 4.19/x=6.12 7.2/a/b=7.2 6.12" ] &&
		t_ok "bases: bl_variant_base: 5.10/stock, pre, 6.12/post, an unknown base's prefix" ||
		t_fail "bases: bl_variant_base: 5.10/stock, pre, 6.12/post, an unknown base's prefix" "$out"
}

test_fetch_offline()
{
	local out rc before after pkg left
	pkg=$(bases 'bl_base_package "$(bl_default_base)"')

	# the installed base: nothing to fetch, its tarball on stdout
	if [ -z "$(bl_pkg_version "$pkg")" ]; then
		t_skip "fetch-base 6.12: the installed base is not fetched" "$pkg is not installed"
	else
		out=$("$BL_ROOT/kernels/fetch-base" 6.12 2>"$WORK/fetch-612.err") && rc=0 || rc=$?
		[ $rc = 0 ] && [ "$out" = "/usr/src/$pkg.tar.xz" ] &&
		   grep -q "base 6.12 is the installed $pkg .*: nothing to fetch" "$WORK/fetch-612.err" &&
		   [ ! -e "$BL_CACHE/apt" ] &&
			t_ok "fetch-base 6.12: the installed base is not fetched" ||
			t_fail "fetch-base 6.12: the installed base is not fetched" "exit $rc" \
				"$out" "$(cat "$WORK/fetch-612.err")"
	fi

	# a mirror nobody answers on (port 9, discard): a clear error, no
	# tarball, no .deb, no .tmp, and the host's apt as it was
	before=$(host_apt_state)
	out=$(BOUNCELAB_DEBIAN_MIRROR=http://127.0.0.1:9/debian BL_LOCK_WAIT=60 \
		timeout 300 "$BL_ROOT/kernels/fetch-base" 6.1 2>&1) && rc=0 || rc=$?
	after=$(host_apt_state)
	[ $rc = 1 ] &&
	   grep -q "apt-get update of bookworm from http://127.0.0.1:9/debian failed (exit 100): the mirror cannot be reached" <<<"$out" &&
		t_ok "fetch-base 6.1 from an unreachable mirror: a clear error, exit 1" ||
		t_fail "fetch-base 6.1 from an unreachable mirror: a clear error, exit 1" "exit $rc" "$out"
	left=$(find "$BL_CACHE" \( -name '*.tar.xz' -o -name '*.deb' -o -name '*.tmp' \
		-o -name provenance.json \) 2>/dev/null)
	[ -z "$left" ] && [ ! -e "$BL_CACHE/debs/linux-source-6.1_$(bases 'bl_base_version 6.1')" ] &&
		t_ok "fetch-base from an unreachable mirror leaves no tarball, .deb or .tmp" ||
		t_fail "fetch-base from an unreachable mirror leaves no tarball, .deb or .tmp" "$left"
	[ "$before" = "$after" ] &&
		t_ok "fetch-base from an unreachable mirror leaves /etc/apt and dpkg's architectures as they were" ||
		t_fail "fetch-base from an unreachable mirror leaves /etc/apt and dpkg's architectures as they were" \
			"$(diff <(echo "$before") <(echo "$after"))"

	# another fetch holding the cache's lock: a bounded wait
	stub "$WORK/fetch-base-6.1" "exec \"$BL_ROOT/kernels/fetch-base\" 6.1"
	expect_lock_bound fetch-base "$WORK/fetch-base-6.1" "$BL_CACHE/.fetch.lock"
}

t_plan 101
test_run_all_exit_code
test_harness
test_run_all_skipped
test_checkpatch_crash
test_lock_bounds
test_guest_private_apt
test_gen_initramfs
test_initramfs_concurrent
test_guest_run_disks
test_boot_status
test_plan_options
test_compare_analysis_fails
test_parse_out_private
test_compare_interrupt
test_dry_run
test_clocks
test_pressure_boots
test_unknown_jobs
test_bad_arguments
test_until_ci
test_determinism_round
test_lab_description
test_variants
test_bases
test_fetch_offline
t_summary
