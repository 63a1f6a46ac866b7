#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Building the guest's initramfs: guest/gen-initramfs without a kernel tree,
# and guest/build's initramfs when two builds run at once, with the guest's
# monitors in it.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

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
	for f in busybox labmon memhog copyref lowhog insnmark; do echo "fake $f" >"$bin/$f"; done
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
	stub "$sb/bench/qemu-plugin/build" 'exit 0'
	printf 'all:\n\t@:\n' >"$sb/guest/helpers/Makefile"
	echo "$sb"
}

# Two guest builds at once both succeed and leave a whole image; a third
# finds it up to date; the monitors go in, in order; a changed monitor or
# helper makes a new one.
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

	# the monitors go in as /monitors/, in name order (the order /init
	# sources them), and a changed one makes a new image
	local want got
	want=$(cd "$sb/guest/monitors" && LC_ALL=C ls -1 -- *.sh | sed 's|^|monitors/|')
	got=$(gzip -dc "$img" | cpio -it --quiet 2>/dev/null | grep '^monitors/')
	rc=0
	echo "# changed" >>"$sb/guest/monitors/10-proc.sh"
	before=$(stat -c '%i %Y' "$img" 2>/dev/null)
	sleep 1
	BOUNCELAB_CACHE=$WORK/ib-cache "$sb/guest/build" >"$WORK/ib-m.out" 2>&1 || rc=$?
	[ -n "$want" ] && [ "$got" = "$want" ] && [ $rc = 0 ] &&
	   [ "$(stat -c '%i %Y' "$img")" != "$before" ] &&
	   gzip -dc "$img" | grep -a '^# changed' >/dev/null &&
		t_ok "guest/build: the monitors packed in name order; a changed one makes a new initramfs" ||
		t_fail "guest/build: the monitors packed in name order; a changed one makes a new initramfs" \
			"exit $rc" "want: $want" "got: $got" "$(tail -n 3 "$WORK/ib-m.out")"

	rc=0
	before=$(stat -c '%i %Y' "$img" 2>/dev/null)
	sleep 1
	echo "new labmon" >"$WORK/ib-cache/guest/bin/labmon"
	BOUNCELAB_CACHE=$WORK/ib-cache "$sb/guest/build" >"$WORK/ib-d.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ "$(stat -c '%i %Y' "$img")" != "$before" ] &&
	   gzip -dc "$img" | grep -a 'new labmon' >/dev/null &&
		t_ok "guest/build: a changed helper makes a new initramfs" ||
		t_fail "guest/build: a changed helper makes a new initramfs" "exit $rc" \
			"$(tail -n 3 "$WORK/ib-d.out")"
	rm -f "$WORK"/ib-barrier.*
}

# Equal programs give an equal image, whenever and wherever it is built:
# not the time fio was built or busybox fetched, not the cache's path,
# not the git revision (an exact boot's instructions hang on every byte).
test_initramfs_reproducible()
{
	local sb img a=$WORK/ib-repro-a b=$WORK/ib-repro-b rc=0 out
	sb=$(guest_build_sandbox)
	rm -rf "$a" "$b"
	mkdir -p "$a" && cp -a "$WORK/ib-cache/guest" "$a/"
	rm -f "$a/guest/initramfs.cpio.gz" "$a/guest/.initramfs.key"
	printf 'sha256: fake\nbuilt: 2026-01-01T00:00:00Z\nunstripped: %s/guest/src/fio\nconfigure: -L%s/guest/sysroot\n' \
		"$a" "$a" >"$a/guest/bin/fio.version"
	printf 'sha256: fake\nfetched: 2026-01-01T00:00:00Z\n' >"$a/guest/bin/busybox.version"
	out=$(BOUNCELAB_CACHE=$a "$sb/guest/build" 2>&1) || rc=$?
	# later, in another folder, from another commit
	mkdir -p "$b" && cp -a "$a/guest" "$b/"
	rm -f "$b/guest/initramfs.cpio.gz" "$b/guest/.initramfs.key"
	sed -i "s|$a|$b|g; s|2026-01-01|2026-02-02|" "$b/guest/bin/fio.version" "$b/guest/bin/busybox.version"
	git -C "$sb" commit -q --allow-empty -m "another commit" 2>/dev/null || true
	out+=$(BOUNCELAB_CACHE=$b "$sb/guest/build" 2>&1) || rc=$?
	img=guest/initramfs.cpio.gz
	[ $rc = 0 ] && cmp -s "$a/$img" "$b/$img" &&
	   ! gzip -dc "$b/$img" | grep -a -e 2026-0 -e "$b" >/dev/null &&
		t_ok "guest/build: two builds at other times, in other folders, give the same bytes" ||
		t_fail "guest/build: two builds at other times, in other folders, give the same bytes" \
			"exit $rc" "$out" "$(gzip -dc "$b/$img" | grep -a -e 2026-0 -e "$b" | head -3)"
}

t_plan 8
test_gen_initramfs
test_initramfs_concurrent
test_initramfs_reproducible
t_summary
