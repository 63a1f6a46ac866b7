# SPDX-License-Identifier: GPL-2.0
# What the scripts-* suites share. Each of them tests the host scripts'
# failure paths on a sandbox copy of the checkout, with stubs in place of
# the heavy parts (a fake qemu-boot, a fake checkpatch.pl, fake suites, a
# fake guest fio): no kernels, no QEMU, no root. They run anywhere, before
# anything is built.
#
# Everything they write is in a temporary folder, their cache included
# (BOUNCELAB_CACHE), so the real cache and results/ are never touched
# (KEEP_WORK=1 keeps the folder). Source it: it sources tests/lib.sh.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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
# kernels, System.maps, initramfs and insnprof plugin, and a guest fio that
# accepts every job file.
fake_cache()
{
	local v
	for v in pre pre-fixed post; do
		mkdir -p "$BL_CACHE/kernels/$v"
		: >"$BL_CACHE/kernels/$v/bzImage"
		echo '{}' >"$BL_CACHE/kernels/$v/build-info.json"
		: >"$BL_CACHE/kernels/$v/System.map"
	done
	# the plugin of the exact clocks (bench/qemu-plugin)
	mkdir -p "$BL_CACHE/host"
	: >"$BL_CACHE/host/insnprof.so"
	mkdir -p "$BL_CACHE/guest/bin"
	: >"$BL_CACHE/guest/initramfs.cpio.gz"
	stub "$BL_CACHE/guest/bin/fio" 'exit 0'
	# the real bench/qemu-boot wants its firmware; a fake QEMU reads none
	: >"$WORK/qboot.rom"
	export BL_GUEST_FIRMWARE=$WORK/qboot.rom
}

# fake_qemu SANDBOX: bench/qemu-boot that boots nothing (a kernel
# command line with rdinit=/bl-injected-failure panics). It writes
# LOG.started and LOG.clock (the vCPUs and icount shift it was given), sleeps FAKE_QEMU_SLEEP seconds (default 0; SIGTERM ends it
# like the real one, exit 143), then plays a guest that ran its plan: a
# serial log and a results stream (gzip'd tar, the results port's file)
# saying "ok". A probe boot (no results port) only logs that init started.
fake_qemu()
{
	stub "$1/bench/qemu-boot" <<-'EOF'
	log='' results='' cmdline=''
	while getopts k:i:l:t:a: opt; do
		case $opt in l) log=$OPTARG ;; a) cmdline=$OPTARG ;; esac
	done
	shift $((OPTIND - 1))
	for a in "$@"; do
		case $a in *path=*results.tty*) results=${a#*path=}; results=${results%%,*} ;; esac
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
	tar -cf - -C "$g" . | gzip -c >"$results"
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

# gone PID: PID has ended (a zombie waiting for init to reap it has too).
gone()
{
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[[ -z $st || $st == Z* ]]
}

# gone_within SECONDS PID: true once PID has ended, SECONDS at most.
gone_within()
{
	local i
	for i in $(seq 1 $(( $1 * 10 ))); do
		gone "$2" && return 0
		sleep 0.1
	done
	return 1
}

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

# bases CODE: CODE run with lib/bases.sh sourced, in a subshell; its
# output and errors on stdout.
bases()
{
	( . "$BL_ROOT/lib/bases.sh"; eval "$1" ) 2>&1
}
