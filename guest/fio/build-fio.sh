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
#                toolchain versions, sha256 of the binary)
#   .fio.stamp   Debian source version + sha256 of this script; the build
#                runs again only when one of them changes (or the binary is
#                missing or altered)
# Sources and the build tree live in "$BL_CACHE/guest/src".
#
# Host changes this may make (as root, each only when missing): a deb-src
# entry for the release in /etc/apt/sources.list.d/bouncelab-src.sources,
# the i386 foreign architecture, and the packages listed in BUILD_PKGS.
#
# Toolchain choice (libc6-dev:i386 versus libc6-dev-i386): the 32-bit C
# library comes from gcc-multilib's biarch package libc6-dev-i386
# (/usr/lib32/libc.a). In bookworm libaio-dev:i386 depends only on
# libaio1:i386, so the i386 packages installed are libaio-dev:i386,
# libaio1:i386, libc6:i386, libgcc-s1:i386 and gcc-12-base:i386 (runtime
# libraries, no second toolchain). gcc -m32 finds libaio.a in
# /usr/lib/i386-linux-gnu through its multiarch search path and libc.a in
# /usr/lib32, so libc6-dev:i386 is not needed, and we never install it: it
# would pull a second 32-bit libc dev tree and 15 more i386 packages
# (linux-libc-dev, libcrypt, libnsl, libtirpc, krb5, libssl, ...), and since
# Multi-Arch: same packages must have equal versions on both architectures,
# `apt-get -s` showed it forcing upgrades of a dozen amd64 packages
# (linux-libc-dev, libkrb5, e2fsprogs, ...) and it would later hold back
# amd64-only upgrades. Mixing both libc dev trees also
# leaves two libc.a that gcc -m32 could pick from. libc6:i386 itself must
# equal libc6:amd64; apt upgrades the amd64 one when the archive is ahead.

set -euo pipefail
# Note: never `cmd | grep -q` here: grep -q exits at the first match, cmd then
# dies of SIGPIPE and pipefail turns the match into a failure. Use >/dev/null.

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=../../lib/common.sh
. "$(dirname "$SCRIPT")/../../lib/common.sh"
. "$(dirname "$SCRIPT")/../../lib/deps.sh"

OUTDIR=${1:-$BL_CACHE/guest/bin}
SRCROOT=$BL_CACHE/guest/src

# Packages the build needs on the host. gcc-multilib gives `gcc -m32` and the
# static 32-bit libc (libc6-dev-i386); libaio-dev:i386 gives libaio.a;
# dpkg-dev gives dpkg-source for `apt-get source`.
BUILD_PKGS=(gcc-multilib libaio-dev:i386 dpkg-dev make file)

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
# The same, as one would type it (for logs and fio.version).
CONFIGURE_LINE="./configure --cc=\"gcc -m32\" ${CONFIGURE_ARGS[*]:1}"

APT_GET=(apt-get -o DPkg::Lock::Timeout=600 -o APT::Get::Assume-Yes=true)
NSTEPS=8
step()
{
	local n=$1
	shift
	bl_log "fio [$n/$NSTEPS] $*"
}

# --- apt helpers -----------------------------------------------------------

# Is there an enabled deb-src entry for suite $1, component main?
have_deb_src()
{
	local suite=$1 f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		grep -Eq "^[[:space:]]*deb-src[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+[[:space:]]+${suite}[[:space:]].*\<main\>" "$f" &&
			return 0
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" '
			function check() {
				if (types ~ /(^| )deb-src( |$)/ &&
				    (" " suites " ") ~ (" " suite " ") &&
				    (" " comps " ") ~ / main / && tolower(enabled) != "no")
					found = 1
				types = suites = comps = enabled = ""
			}
			/^[[:space:]]*$/ { check(); next }
			/^#/ { next }
			{
				key = tolower($1); val = $0
				sub(/^[^:]*:[[:space:]]*/, "", val)
				gsub(/[[:space:]]+/, " ", val)
				if (key == "types:") types = val
				else if (key == "suites:") suites = val
				else if (key == "components:") comps = val
				else if (key == "enabled:") enabled = val
			}
			END { check(); exit !found }
		' "$f" && return 0
	done
	return 1
}

# Print deb822 deb-src stanzas mirroring the enabled `Types: deb` stanzas of
# debian.sources that carry suite $1 (same URIs, suites, components, key).
deb_src_stanzas()
{
	local suite=$1 f=/etc/apt/sources.list.d/debian.sources
	if [ -f "$f" ]; then
		awk -v suite="$suite" '
			function flush() {
				if (n && types ~ /(^| )deb( |$)/ &&
				    (" " suites " ") ~ (" " suite "(-[a-z]+)? ") &&
				    tolower(enabled) != "no") {
					printf "%sTypes: deb-src\n", (out++ ? "\n" : "")
					for (i = 1; i <= n; i++)
						print lines[i]
				}
				n = 0; types = suites = enabled = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			{
				key = tolower($1); val = $0
				sub(/^[^:]*:[[:space:]]*/, "", val)
				if (key == "types:") { types = val; next }
				if (key == "architectures:") next
				if (key == "suites:") suites = val
				if (key == "enabled:") enabled = val
				lines[++n] = $0
			}
			END { flush() }
		' "$f"
	fi
}

ensure_deb_src()
{
	local suite=$1 file=/etc/apt/sources.list.d/bouncelab-src.sources text
	have_deb_src "$suite" && return 1
	bl_need_root "adding a deb-src entry"
	text=$(deb_src_stanzas "$suite")
	if [ -z "$text" ]; then
		# No deb822 debian.sources to mirror: use the standard mirror.
		text="URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
		text="Types: deb-src
$text"
	fi
	{
		echo "# Added by bouncelab guest/fio/build-fio.sh: source packages"
		echo "# (apt-get source fio) for the same mirrors as debian.sources."
		echo "$text"
	} >"$file.tmp"
	mv "$file.tmp" "$file"
	bl_log "fio: wrote $file"
	return 0
}

ensure_i386()
{
	[ "$(dpkg --print-architecture)" = i386 ] && return 1
	dpkg --print-foreign-architectures | grep -x i386 >/dev/null && return 1
	bl_need_root "adding the i386 architecture"
	dpkg --add-architecture i386
	bl_log "fio: added dpkg architecture i386"
	return 0
}

# Highest version of source package $1 that apt knows, empty if none.
src_version()
{
	apt-cache showsrc --only-source "$1" 2>/dev/null |
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

have_candidate()
{
	apt-cache policy "$1" 2>/dev/null | grep 'Candidate: [^(]' >/dev/null
}

missing_pkgs()
{
	local p
	for p in "$@"; do
		[ -n "$(bl_pkg_version "$p")" ] || echo "$p"
	done
}

# --- main ------------------------------------------------------------------

start=$(bl_now)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || bl_die "cannot tell the Debian release from /etc/os-release"
[ "$suite" = bookworm ] ||
	bl_log "fio: warning: host is Debian '$suite', the lab expects bookworm (fio 3.33)"

mkdir -p "$SRCROOT" "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
# One build at a time per cache (two make targets may race).
bl_lock 9 "$SRCROOT/.fio.lock" fio

step 1 "apt sources: deb-src for $suite, i386 architecture"
changed=0
ensure_deb_src "$suite" && changed=1
ensure_i386 && changed=1

step 2 "apt package lists"
if [ "$changed" = 1 ] || [ -z "$(src_version fio)" ] || ! have_candidate libaio-dev:i386; then
	bl_log "fio: running apt-get update"
	bl_apt_update
else
	bl_log "fio: lists already have fio sources and i386 packages"
fi

step 3 "resolve the fio source version"
deb_ver=$(src_version fio)
[ -n "$deb_ver" ] || bl_die "apt knows no source package 'fio' (deb-src missing?)"
up_ver=${deb_ver#*:}
up_ver=${up_ver%-*}
script_sha=$(sha256sum "$SCRIPT" | cut -d' ' -f1)
stamp="debian-source-version: $deb_ver
script-sha256: $script_sha"
bl_log "fio: Debian source fio $deb_ver (upstream $up_ver)"
if [ -f "$OUTDIR/.fio.stamp" ] && [ -x "$OUTDIR/fio" ] && [ -f "$OUTDIR/fio.version" ] &&
	[ "$(cat "$OUTDIR/.fio.stamp")" = "$stamp" ] &&
	grep -qx "sha256: $(sha256sum "$OUTDIR/fio" | cut -d' ' -f1)" "$OUTDIR/fio.version"; then
	bl_log "fio: $OUTDIR/fio is up to date (fio $deb_ver)"
	exit 0
fi

step 4 "build dependencies"
mapfile -t missing < <(missing_pkgs "${BUILD_PKGS[@]}")
if [ "${#missing[@]}" -gt 0 ]; then
	bl_need_root "installing ${missing[*]}"
	bl_log "fio: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -q install \
		--no-install-recommends "${missing[@]}" ||
		bl_die "could not install ${missing[*]}"
else
	bl_log "fio: all installed: ${BUILD_PKGS[*]}"
fi
bl_need_cmd gcc make file strip dpkg-source sha256sum

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
	apt_src_opts=(--download-only)
	# As root, apt drops to user _apt for downloads and warns when _apt cannot
	# write the folder; download as root instead (no sandbox gain here).
	[ "$(id -u)" = 0 ] && apt_src_opts+=(-o APT::Sandbox::User=root)
	(cd "$SRCROOT" && apt-get -qq "${apt_src_opts[@]}" source "fio=$deb_ver") ||
		bl_die "apt-get source fio=$deb_ver failed"
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
	(cd "$srcdir" && "${build_env[@]}" ./configure "${CONFIGURE_ARGS[@]}") \
		>"$srcdir/configure.out" 2>&1 || {
		tail -30 "$srcdir/configure.out" >&2
		bl_die "fio configure failed (full log: $srcdir/configure.out)"
	}
	grep -Eq '^Linux AIO support[[:space:]]+yes' "$srcdir/configure.out" || {
		grep -Ei 'aio' "$srcdir/configure.out" >&2 || true
		bl_die "configure did not find libaio for gcc -m32 (is libaio-dev:i386 installed?); see $srcdir/configure.out"
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
libaio-dev:i386: $(bl_pkg_version libaio-dev:i386)
file: $(file -b "$OUTDIR/fio")
size: $size
unstripped: $srcdir/fio
built: $(date -u +%Y-%m-%dT%H:%M:%SZ)
sha256: $sha
EOF
mv -f "$OUTDIR/fio.version.tmp" "$OUTDIR/fio.version"
printf '%s\n' "$stamp" >"$OUTDIR/.fio.stamp"
bl_log "fio: built $OUTDIR/fio ($fio_ver, Debian $deb_ver, $size bytes) in $(($(bl_now) - start)) s"
