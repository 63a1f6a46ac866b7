#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The locks of the kernel builds: kernels/build on a fake kernel tree (a
# fetched base whose tree is a stub, a make that sleeps FAKE_MAKE_SLEEP
# seconds in bzImage and makes an empty one) and lib/common.sh's bl_lock.
# A run whose kernels are up to date never waits for the build of another
# variant; one that needs a kernel being built says at once what it waits
# for and who holds it, within BL_LOCK_WAIT, and does not build it again.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

KBIN=$WORK/kbin
MAKE_LOG=$WORK/make.log

# fake_kernel_tree: what kernels/build needs, faked in the test's cache:
# the base 6.12 as a fetched base (version 6.12.0-1, tree already
# unpacked), variants a and b of one stack of one patch, and the build
# tools in $KBIN. make bzImage logs "start V" and "end V" to $MAKE_LOG.
fake_kernel_tree()
{
	local deb=$BL_CACHE/debs/linux-source-6.12_6.12.0-1 tree=$BL_CACHE/linux/linux-source-6.12.0-1 t
	printf '6.12\tlinux-source-6.12\tbookworm\t6.12.0-1\n' >"$WORK/bases"
	printf '6.12/a\t6.12/s\n6.12/b\t6.12/s\n' >"$WORK/variants"
	mkdir -p "$WORK/patches/6.12/s" "$deb/usr/src" "$tree"
	printf -- '--- /dev/null\n+++ b/lab.txt\n@@ -0,0 +1 @@\n+lab\n' >"$WORK/patches/6.12/s/0001-lab.patch"
	: >"$deb/usr/src/linux-source-6.12.tar.xz"
	printf '{\n  "suite": "bookworm",\n  "deb_sha256": "%064d"\n}\n' 0 >"$deb/provenance.json"
	touch "$tree/.bouncelab-unpacked"
	stub "$tree/scripts/kconfig/merge_config.sh" 'cat "$5" >>"$4"'
	for t in ccache flex bison bc xz perl; do stub "$KBIN/$t" 'exit 0'; done
	stub "$KBIN/patch" 'cat >/dev/null'
	stub "$KBIN/gcc" 'case $1 in -dumpfullversion) echo 12.2.0 ;; *) echo "gcc (fake) 12.2.0" ;; esac'
	stub "$KBIN/make" <<-EOF
	obj=''
	for a; do case \$a in O=*) obj=\${a#O=} ;; esac; done
	v=\$(basename "\$(dirname "\$obj")")
	case \${@: -1} in
	tinyconfig) : >"\$obj/.config" ;;
	bzImage)
		echo "start \$v" >>"$MAKE_LOG"
		sleep "\${FAKE_MAKE_SLEEP:-0}"
		mkdir -p "\$obj/arch/x86/boot" "\$obj/include/config"
		echo 6.12.0 >"\$obj/include/config/kernel.release"
		echo fake >"\$obj/arch/x86/boot/bzImage"
		echo "end \$v" >>"$MAKE_LOG" ;;
	esac
	EOF
}

# kbuild VARIANT...: kernels/build on the fake tree (its output on
# stderr), in place of the caller: call it in a subshell (so that $! of
# "kbuild V &" is kernels/build's pid).
kbuild()
{
	PATH=$KBIN:$PATH BOUNCELAB_BASES_FILE=$WORK/bases \
		BOUNCELAB_VARIANTS_FILE=$WORK/variants BOUNCELAB_PATCHES_DIR=$WORK/patches \
		exec "$BL_ROOT/kernels/build" "$@"
}

# started V: how many builds of V's bzImage started.
started()
{
	grep -cx "start $1" "$MAKE_LOG" 2>/dev/null
}

# background_build V SECONDS: kernels/build V in the background, its make
# bzImage taking SECONDS; returns once that make has started (BG: its pid).
background_build()
{
	local n
	n=$(started "$1")
	FAKE_MAKE_SLEEP=$2 kbuild "$1" >"$WORK/bg-$1.out" 2>&1 &
	BG=$!
	for _ in $(seq 1 200); do
		[ "$(started "$1")" -gt "$n" ] && return 0
		sleep 0.1
	done
	return 1
}

test_fake_tree()
{
	local out rc=0 name="kernels/build on the fake tree builds a variant, then finds it up to date"
	fake_kernel_tree
	out=$(kbuild a 2>&1) || rc=$?
	out+=$(kbuild a 2>&1) || rc=$?
	[ $rc = 0 ] && [ "$(started a)" = 1 ] && [ -f "$BL_CACHE/kernels/a/bzImage" ] &&
	   grep -q '\[a\] (1/1) up to date' <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$out"
}

# While b is being built, a run that needs only a (up to date) does not
# wait, in well under BL_LOCK_WAIT and without a word about waiting.
test_other_variant_no_wait()
{
	local out rc=0 start secs name="a build of b does not hold up a's up-to-date check"
	if ! background_build b 8; then
		t_fail "$name" "the build of b never started" "$(cat "$WORK/bg-b.out")"
		return
	fi
	start=$(bl_now)
	out=$(BL_LOCK_WAIT=20 kbuild a 2>&1) || rc=$?
	secs=$(( $(bl_now) - start ))
	[ $rc = 0 ] && [ $secs -le 5 ] && grep -q '\[a\] (1/1) up to date' <<<"$out" &&
	   ! grep -q waiting <<<"$out" && kill -0 "$BG" 2>/dev/null &&
		t_ok "$name (${secs}s)" || t_fail "$name" "exit $rc after ${secs}s" "$out"
	wait "$BG"
}

# A run that needs the variant being built says within 5 s what it waits
# for and who holds it; past BL_LOCK_WAIT it gives up saying so; with
# time enough it finds the kernel built and builds nothing itself.
test_same_variant_waits()
{
	local out rc=0 pid start name
	rm -f "$BL_CACHE/kernels/b/build-info.json"
	if ! background_build b 8; then
		t_fail "kernels/build b, b being built: the build of b never started" "$(cat "$WORK/bg-b.out")"
		return
	fi
	start=$(bl_now)
	BL_LOCK_WAIT=3 kbuild b >"$WORK/wait-short.out" 2>&1 &
	pid=$!
	name="kernels/build b while b is built: says within 5 s what it waits for and who holds it"
	for _ in $(seq 1 50); do
		grep -q 'waiting for' "$WORK/wait-short.out" && break
		sleep 0.1
	done
	grep -q "\[b\] up-to-date check: waiting for $BL_CACHE/kernels/b/.build.lock (3s at most), held by pid $BG (\[b\] build, since [0-9:]*: .*kernels/build b)" \
		"$WORK/wait-short.out" && [ $(( $(bl_now) - start )) -le 5 ] &&
		t_ok "$name" || t_fail "$name" "$(cat "$WORK/wait-short.out")"
	rc=0
	wait "$pid" || rc=$?
	name="kernels/build b while b is built: gives up after BL_LOCK_WAIT, naming the holder"
	[ $rc = 1 ] && grep -q "still locked by another build after 3s (held by pid $BG " "$WORK/wait-short.out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$(cat "$WORK/wait-short.out")"

	rc=0
	out=$(BL_LOCK_WAIT=60 kbuild b 2>&1) || rc=$?
	wait "$BG"
	name="kernels/build b while b is built: waits for it and then builds nothing"
	[ $rc = 0 ] && [ "$(started b)" = 2 ] && grep -q '\[b\] (1/1) up to date' <<<"$out" &&
	   grep -q '\[b\] up-to-date check: got .* after [0-9]*s' <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc, b's bzImage built $(started b) times" "$out"
}

# Two builds of different variants run side by side: both makes start
# before either ends, and neither waits.
test_two_variants_side_by_side()
{
	local rc=0 name="kernels/build a and kernels/build b at once: side by side"
	rm -f "$BL_CACHE/kernels/a/build-info.json" "$BL_CACHE/kernels/b/build-info.json" "$MAKE_LOG"
	FAKE_MAKE_SLEEP=4 kbuild a >"$WORK/two-a.out" 2>&1 &
	(FAKE_MAKE_SLEEP=4 kbuild b) >"$WORK/two-b.out" 2>&1 || rc=$?
	wait $! || rc=$?
	[ $rc = 0 ] && [ "$(head -n 2 "$MAKE_LOG" | cut -d' ' -f1 | sort -u)" = start ] &&
	   [ "$(wc -l <"$MAKE_LOG")" = 4 ] && ! grep -q waiting "$WORK/two-a.out" "$WORK/two-b.out" &&
		t_ok "$name" ||
		t_fail "$name" "exit $rc" "makes: $(cat "$MAKE_LOG")" "$(cat "$WORK/two-a.out" "$WORK/two-b.out")"
}

# Two runs that need the same kernel, not built yet, at once: it is built
# once, and both end with it.
test_same_variant_once()
{
	local rc=0 name="kernels/build b twice at once, b not built: b is built once"
	rm -f "$BL_CACHE/kernels/b/build-info.json" "$MAKE_LOG"
	FAKE_MAKE_SLEEP=3 kbuild b >"$WORK/once-1.out" 2>&1 &
	(FAKE_MAKE_SLEEP=3 kbuild b) >"$WORK/once-2.out" 2>&1 || rc=$?
	wait $! || rc=$?
	[ $rc = 0 ] && [ "$(started b)" = 1 ] && up_to_date_b &&
		t_ok "$name" ||
		t_fail "$name" "exit $rc, b's bzImage built $(started b) times" \
			"$(cat "$WORK/once-1.out" "$WORK/once-2.out")"
}

up_to_date_b()
{
	grep -q '"build_key"' "$BL_CACHE/kernels/b/build-info.json" 2>/dev/null
}

# bl_lock itself: shared holders do not wait for each other; an exclusive
# one waits for them, saying they are checks.
test_bl_lock_shared()
{
	local lock=$WORK/shared.lock out rc=0 name
	( . "$BL_ROOT/lib/common.sh"; bl_lock 7 "$lock" "reader one" shared; exec sleep 5 ) &
	sleep 0.5
	name="bl_lock: a shared lock is had at once while another shares it"
	out=$( { . "$BL_ROOT/lib/common.sh"; BL_LOCK_WAIT=1; bl_lock 7 "$lock" "reader two" shared; echo got; } 2>&1 ) || rc=$?
	[ $rc = 0 ] && [ "$out" = got ] && t_ok "$name" || t_fail "$name" "exit $rc" "$out"
	name="bl_lock: an exclusive lock waits for the shared one, saying checks hold it"
	rc=0
	out=$( { . "$BL_ROOT/lib/common.sh"; BL_LOCK_WAIT=1; bl_lock 7 "$lock" writer; } 2>&1 ) || rc=$?
	[ $rc = 1 ] && grep -q "writer: waiting for $lock (1s at most), held by checks that share it" <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$out"
	wait
}

t_plan 9
test_fake_tree
test_other_variant_no_wait
test_same_variant_waits
test_two_variants_side_by_side
test_same_variant_once
test_bl_lock_shared
t_summary
