#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-fio.sh [OUTDIR]
#
# Build fio from Debian's `fio` source package as a STATIC i386 (32-bit) binary
# with libaio, for the guest initramfs. Debian's i386 fio binary package drags
# in ceph/gluster/rdma libraries (about 100 packages) and cannot be dropped
# into a busybox initramfs; a static build is one self-contained file.
#
# OUTDIR defaults to "$BL_CACHE/guest/bin". It receives:
#   fio          the static i386 binary
#   fio.version  what was built (fio and Debian versions, configure line,
#                toolchain versions, libaio-dev:i386's version and the
#                sha256 of its .deb, sha256 of the binary)
#   .fio.stamp   Debian source version, libaio-dev:i386 version + sha256 of
#                this script; the build runs again only when one of them
#                changes (or the binary is missing or altered)
# Sources and the build tree live in "$BL_CACHE/guest/src".
#
# Debian packages come through a private apt (lib/private-apt.sh) under
# $BL_CACHE/apt/guest-fio/: the host's release and its -updates suite
# (VERSION_CODENAME of /etc/os-release), main, deb-src and i386 indexes,
# from BOUNCELAB_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# signatures checked against the Debian archive keyring. Through it:
# `apt-get source --download-only fio=VERSION`, and `apt-get download
# libaio-dev:i386`, unpacked with `dpkg-deb -x` into
# $BL_CACHE/guest/sysroot-i386 (never installed). The host's apt setup and
# dpkg's architectures are read, never changed; the host packages of
# BUILD_PKGS (native ones) are installed when missing (as root). Offline,
# the lists of the last update are used (with a warning).
#
# Toolchain: `gcc -m32` from gcc-multilib, whose biarch package
# libc6-dev-i386 gives the static 32-bit C library (/usr/lib32/libc.a);
# libaio.a and libaio.h come from the sysroot (libaio-dev:i386 holds
# usr/lib/i386-linux-gnu/libaio.a and usr/include/libaio.h), given to fio's
# configure as --extra-cflags=-I... and LDFLAGS=-L... (fio links with
# LDFLAGS, not CFLAGS). Nothing of i386 is installed on the host:
# libc6-dev:i386 in particular would bring a second 32-bit libc dev tree
# (two libc.a for gcc -m32 to pick from) and, as Multi-Arch: same packages
# must have equal versions on both architectures, force upgrades of amd64
# packages and later hold back amd64-only ones.

set -euo pipefail
# Note: never `cmd | grep -q` here: grep -q exits at the first match, cmd then
# dies of SIGPIPE and pipefail turns the match into a failure. Use >/dev/null.

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=../../lib/common.sh
. "$(dirname "$SCRIPT")/../../lib/common.sh"
# shellcheck source=../../lib/deps.sh
. "$(dirname "$SCRIPT")/../../lib/deps.sh"
# shellcheck source=../../lib/private-apt.sh
. "$(dirname "$SCRIPT")/../../lib/private-apt.sh"

OUTDIR=${1:-$BL_CACHE/guest/bin}
SRCROOT=$BL_CACHE/guest/src
SYSROOT=$BL_CACHE/guest/sysroot-i386
LIBAIO=libaio-dev:i386
LIBAIO_LIB=usr/lib/i386-linux-gnu

# Packages the build needs on the host, all native. gcc-multilib gives
# `gcc -m32` and the static 32-bit libc (libc6-dev-i386); dpkg-dev gives
# dpkg-source to unpack the source package.
BUILD_PKGS=(gcc-multilib dpkg-dev make file)

# fio's configure autodetects optional engines and libraries; everything not
# needed in the guest is switched off explicitly so the result does not depend
# on which -dev packages happen to be on the build host. One matters beyond
# size: --disable-native (fio would otherwise add -march=native, and a binary
# tuned for the build host's CPU can die with SIGILL on QEMU's guest CPU
# model). --disable-lex: fio would use flex/bison for arithmetic in job
# options only if the host has them and a 32-bit libfl, so the result would
# vary by host; the lab's job files use plain numbers. gfio, cuda, libiscsi,
# libnbd, hdfs are off unless enabled, so they need no flag. SysV shm stays on
# (the guest kernel has CONFIG_SYSVIPC): --disable-shm would limit fio to
# thread=1 jobs. fio's own optimisation flags (-O3, ...) are kept.
CONFIGURE_ARGS=(
	--cc="gcc -m32"
	--extra-cflags="-I$SYSROOT/usr/include"
	--build-static
	--disable-native
	--disable-lex
	--disable-numa
	--disable-rdma
	--disable-rados
	--disable-rbd
	--disable-http
	--disable-gfapi
	--disable-libnfs
	--disable-pmem
	--disable-tcmalloc
	--disable-dfs
	--disable-xnvme
	--disable-libzbc
)
CONFIGURE_LDFLAGS=-L$SYSROOT/$LIBAIO_LIB
# The same, as one would type it (for logs and fio.version).
CONFIGURE_LINE="LDFLAGS=$CONFIGURE_LDFLAGS ./configure --cc=\"gcc -m32\" ${CONFIGURE_ARGS[*]:1}"

NSTEPS=8
step()
{
	local n=$1
	shift
	bl_log "fio [$n/$NSTEPS] $*"
}

# --- apt helpers -----------------------------------------------------------

# Highest version of source package $1 the private apt knows, empty if none.
src_version()
{
	bl_papt apt-cache showsrc --only-source "$1" 2>/dev/null |
		awk '/^Version:/ { print $2 }' |
		sort -u | {
		local best="" v
		while read -r v; do
			if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
				best=$v
			fi
		done
		echo "$best"
	}
}

# The private apt's candidate version of binary package $1, empty if none.
candidate()
{
	bl_papt apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}

# sysroot VERSION NAME SHA256: libaio-dev:i386 VERSION's .deb (apt's file
# name NAME, its sha256 as the signed index gives it) unpacked in $SYSROOT.
# The .deb is kept in $SRCROOT; a sysroot already unpacked from it is kept.
sysroot()
{
	local ver=$1 name=$2 want=$3 deb=$SRCROOT/$2 f
	if [ -f "$SYSROOT/.bouncelab.deb" ] &&
		[ "$(cat "$SYSROOT/.bouncelab.deb")" = "$name $want" ]; then
		bl_log "fio: $SYSROOT already holds $name"
		return 0
	fi
	if [ -f "$deb" ] && [ "$(sha256sum <"$deb" | cut -d' ' -f1)" = "$want" ]; then
		bl_log "fio: $name already downloaded"
	else
		bl_papt_download "$LIBAIO" "$ver" "$name" "$want" "$deb"
	fi
	rm -rf "$SYSROOT" "$SYSROOT.tmp"
	dpkg-deb -x "$deb" "$SYSROOT.tmp" || bl_die "dpkg-deb -x $deb failed"
	for f in usr/include/libaio.h "$LIBAIO_LIB/libaio.a"; do
		[ -f "$SYSROOT.tmp/$f" ] || bl_die "$name holds no $f"
	done
	echo "$name $want" >"$SYSROOT.tmp/.bouncelab.deb"
	mv "$SYSROOT.tmp" "$SYSROOT"
}

# --- main ------------------------------------------------------------------

start=$(bl_now)
suite=$(bl_debian_host_suite)
[ "$suite" = bookworm ] ||
	bl_log "fio: warning: host is Debian '$suite', the lab expects bookworm (fio 3.33)"
mirror=$(bl_debian_mirror "$suite")

mkdir -p "$SRCROOT" "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
# One build at a time per cache (two make targets may race); it also
# covers the private apt guest-fio and the sysroot.
bl_lock 9 "$SRCROOT/.fio.lock" fio
bl_papt_need

step 1 "private apt: $suite main (deb-src, i386) from $mirror"
suites=("$suite")
# sid has no -updates suite
case $suite in sid | unstable) ;; *) suites+=("$suite-updates") ;; esac
lines=()
for x in "${suites[@]}"; do
	lines+=("deb $mirror $x main" "deb-src $mirror $x main")
done
bl_papt_setup guest-fio i386 "${lines[@]}"
bl_papt_update --stale-ok "apt-get update of ${suites[*]} (sources, i386) from $mirror"

step 2 "resolve the fio source and $LIBAIO versions"
deb_ver=$(src_version fio)
[ -n "$deb_ver" ] || bl_die "$suite ($mirror) has no source package 'fio'"
libaio_ver=$(candidate "$LIBAIO")
[ -n "$libaio_ver" ] || bl_die "$suite ($mirror) has no $LIBAIO"
up_ver=${deb_ver#*:}
up_ver=${up_ver%-*}
script_sha=$(sha256sum "$SCRIPT" | cut -d' ' -f1)
stamp="debian-source-version: $deb_ver
$LIBAIO: $libaio_ver
script-sha256: $script_sha"
bl_log "fio: Debian source fio $deb_ver (upstream $up_ver), $LIBAIO $libaio_ver"
if [ -f "$OUTDIR/.fio.stamp" ] && [ -x "$OUTDIR/fio" ] && [ -f "$OUTDIR/fio.version" ] &&
	[ "$(cat "$OUTDIR/.fio.stamp")" = "$stamp" ] &&
	grep -qx "sha256: $(sha256sum "$OUTDIR/fio" | cut -d' ' -f1)" "$OUTDIR/fio.version"; then
	bl_log "fio: $OUTDIR/fio is up to date (fio $deb_ver)"
	exit 0
fi

step 3 "host build dependencies (native): ${BUILD_PKGS[*]}"
bl_deps_install "${BUILD_PKGS[@]}"
bl_need_cmd gcc make file strip dpkg-source sha256sum

step 4 "$LIBAIO $libaio_ver into $SYSROOT (not installed)"
info=$(bl_papt_deb "$LIBAIO" "$libaio_ver") || exit 1
libaio_deb=${info% *}
libaio_sha=${info#* }
sysroot "$libaio_ver" "$libaio_deb" "$libaio_sha"

dsc=$SRCROOT/fio_${deb_ver#*:}.dsc
srcdir=$SRCROOT/fio-$deb_ver
# A build tree whose stamp matches was built by this very script from this
# very source: reuse it (another OUTDIR, or a run that failed after make).
if [ -f "$srcdir/.bouncelab.stamp" ] && [ -f "$srcdir/fio" ] &&
	[ "$(cat "$srcdir/.bouncelab.stamp")" = "$stamp" ]; then
	step 5 "fetch and unpack: $srcdir already built by this script, reused"
	step 6 "configure: skipped (reused build)"
	step 7 "make: skipped (reused build)"
else
	step 5 "fetch and unpack source fio $deb_ver into $SRCROOT"
	bl_papt_source fio "$deb_ver" "$SRCROOT"
	[ -f "$dsc" ] || bl_die "expected $dsc after apt-get source"
	rm -rf "$srcdir"
	# dpkg-source warns "gpgv: Can't check signature: No public key" unless
	# debian-keyring (large) is installed; harmless: apt already checked the files
	# against the hashes in the signed Sources index. Show its output on failure.
	dpkg-source -x "$dsc" "$srcdir" >"$SRCROOT/dpkg-source.out" 2>&1 || {
		cat "$SRCROOT/dpkg-source.out" >&2
		bl_die "dpkg-source -x $dsc failed"
	}

	# Build with a clean environment: the caller's CFLAGS/LDFLAGS/LIBRARY_PATH
	# (some hosts point LIBRARY_PATH at 64-bit stub libraries) must not leak into
	# a 32-bit static link.
	build_env=(env -u CC -u CFLAGS -u CPPFLAGS -u LDFLAGS -u LIBS -u CPATH
		-u C_INCLUDE_PATH -u LIBRARY_PATH -u MAKEFLAGS -u MFLAGS)

	step 6 "configure: $CONFIGURE_LINE"
	(cd "$srcdir" && "${build_env[@]}" LDFLAGS="$CONFIGURE_LDFLAGS" \
		./configure "${CONFIGURE_ARGS[@]}") \
		>"$srcdir/configure.out" 2>&1 || {
		tail -30 "$srcdir/configure.out" >&2
		bl_die "fio configure failed (full log: $srcdir/configure.out)"
	}
	grep -Eq '^Linux AIO support[[:space:]]+yes' "$srcdir/configure.out" || {
		grep -Ei 'aio' "$srcdir/configure.out" >&2 || true
		bl_die "configure did not find libaio for gcc -m32 (is $LIBAIO unpacked in $SYSROOT?); see $srcdir/configure.out"
	}
	grep -Eq '^Static build[[:space:]]+yes' "$srcdir/configure.out" ||
		bl_die "configure did not accept --build-static; see $srcdir/configure.out"

	step 7 "make -j2"
	(cd "$srcdir" && "${build_env[@]}" make -j2 V=1) >"$srcdir/make.out" 2>&1 || {
		tail -30 "$srcdir/make.out" >&2
		bl_die "fio build failed (full log: $srcdir/make.out)"
	}
	printf '%s\n' "$stamp" >"$srcdir/.bouncelab.stamp"
fi

step 8 "strip, check and install into $OUTDIR"
[ -f "$srcdir/fio" ] || bl_die "no fio binary after make"
# Stripped for the initramfs (about 5.8 MB -> 3 MB); the unstripped binary,
# with debug info, stays in the build tree for gdb.
bin=$OUTDIR/fio.tmp
strip -o "$bin" "$srcdir/fio" || bl_die "strip failed"
chmod 0755 "$bin"
bl_check_static_i386 "$bin" fio
# Runs on the host too (directly, or under qemu-i386): a cheap sanity check.
fio_ver=$(bl_run_i386 "$bin" --version 2>&1) || bl_die "fio --version failed on the host: $fio_ver"
[ "$fio_ver" = "fio-$up_ver" ] ||
	bl_die "fio --version says '$fio_ver', expected 'fio-$up_ver'"
bl_run_i386 "$bin" --enghelp 2>/dev/null | grep -x '[[:space:]]*libaio' >/dev/null ||
	bl_die "the built fio has no libaio engine"

sha=$(sha256sum "$bin" | cut -d' ' -f1)
size=$(stat -c %s "$bin")
mv -f "$bin" "$OUTDIR/fio"
cat >"$OUTDIR/fio.version.tmp" <<EOF
fio-version: $fio_ver
debian-source-package: fio $deb_ver
configure: $CONFIGURE_LINE
make: make -j2
compiler: $(gcc -m32 --version | sed -n 1p)
libc6-dev-i386: $(bl_pkg_version libc6-dev-i386)
$LIBAIO: $libaio_ver (not installed; unpacked in $SYSROOT)
$LIBAIO-deb: $libaio_deb
$LIBAIO-deb-sha256: $libaio_sha
file: $(file -b "$OUTDIR/fio")
size: $size
unstripped: $srcdir/fio
built: $(date -u +%Y-%m-%dT%H:%M:%SZ)
sha256: $sha
EOF
mv -f "$OUTDIR/fio.version.tmp" "$OUTDIR/fio.version"
printf '%s\n' "$stamp" >"$OUTDIR/.fio.stamp"
bl_log "fio: built $OUTDIR/fio ($fio_ver, Debian $deb_ver, $size bytes) in $(($(bl_now) - start)) s"
