#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Getting packages without touching the host's apt: guest/busybox and
# guest/fio through their private apt (the Debian mirror: fetched and built,
# about a minute; skipped when the mirror cannot be reached), their bounded
# lock waits, lib/bases.sh and kernels/fetch-base offline.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

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

# --- lib/bases.sh and kernels/fetch-base, offline -------------------------

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

t_plan 15
test_lock_bounds
test_guest_private_apt
test_bases
test_fetch_offline
t_summary
