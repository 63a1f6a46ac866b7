#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-busybox.sh [OUTDIR]
#
# Fetch Debian's busybox-static:i386 (a static 32-bit busybox) for the guest
# initramfs, through a private apt (lib/private-apt.sh) under
# $BL_CACHE/apt/guest-busybox/: the host's release (VERSION_CODENAME of
# /etc/os-release), main, i386 indexes only, from BOUNCELAB_DEBIAN_MIRROR
# (default http://deb.debian.org/debian), signatures checked against the
# Debian archive keyring. The .deb is downloaded with `apt-get download`
# into a temporary folder and unpacked with `dpkg-deb -x`: it is never
# installed. The host's apt setup and dpkg's architectures are read, never
# changed.
#
# OUTDIR defaults to "$BL_CACHE/guest/bin". It receives:
#   busybox          the static i386 binary
#   busybox.version  Debian package version, sha256 of the .deb and of the
#                    binary, busybox's own banner
#   .busybox.stamp   package version + sha256 of this script
# Up to date when the private apt's candidate version (and this script)
# equal the recorded ones and the binary still has the recorded sha256.
# Offline, the lists of the last update are used (with a warning).

set -euo pipefail
# Note: never `cmd | grep -q` here: grep -q exits at the first match, cmd then
# dies of SIGPIPE and pipefail turns the match into a failure. Use >/dev/null.

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=../../lib/common.sh
. "$(dirname "$SCRIPT")/../../lib/common.sh"
# shellcheck source=../../lib/private-apt.sh
. "$(dirname "$SCRIPT")/../../lib/private-apt.sh"

OUTDIR=${1:-$BL_CACHE/guest/bin}
PKG=busybox-static:i386
NSTEPS=4

step()
{
	local n=$1
	shift
	bl_log "busybox [$n/$NSTEPS] $*"
}

candidate()
{
	bl_papt apt-cache policy "$PKG" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}

start=$(bl_now)
bl_need_cmd dpkg-deb file sha256sum
mkdir -p "$OUTDIR" "$BL_CACHE/guest"
OUTDIR=$(cd "$OUTDIR" && pwd)
bl_lock 9 "$BL_CACHE/guest/.busybox.lock" busybox
bl_papt_need

suite=$(bl_debian_host_suite)
mirror=$(bl_debian_mirror "$suite")
step 1 "private apt: $suite main i386 from $mirror"
bl_papt_setup guest-busybox i386 "deb $mirror $suite main"
bl_papt_update --stale-ok "apt-get update of $suite (i386) from $mirror"
ver=$(candidate)
[ -n "$ver" ] || bl_die "$suite ($mirror) has no $PKG"

step 2 "compare $PKG $ver with $OUTDIR/busybox"
script_sha=$(sha256sum "$SCRIPT" | cut -d' ' -f1)
stamp="debian-package-version: $ver
script-sha256: $script_sha"
if [ -f "$OUTDIR/.busybox.stamp" ] && [ -x "$OUTDIR/busybox" ] && [ -f "$OUTDIR/busybox.version" ] &&
	[ "$(cat "$OUTDIR/.busybox.stamp")" = "$stamp" ] &&
	grep -qx "sha256: $(sha256sum "$OUTDIR/busybox" | cut -d' ' -f1)" "$OUTDIR/busybox.version"; then
	bl_log "busybox: $OUTDIR/busybox is up to date ($PKG $ver)"
	exit 0
fi

step 3 "download and unpack $PKG=$ver (not installed)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
info=$(bl_papt_deb "$PKG" "$ver") || exit 1
deb=$tmp/${info% *}
bl_papt_download "$PKG" "$ver" "${info% *}" "${info#* }" "$deb"
[ "$(dpkg-deb -f "$deb" Version)" = "$ver" ] ||
	bl_die "$deb is version $(dpkg-deb -f "$deb" Version), expected $ver"
dpkg-deb -x "$deb" "$tmp/root"
bin=$tmp/root/bin/busybox
[ -f "$bin" ] || bl_die "no bin/busybox in $deb"

step 4 "check and install into $OUTDIR"
bl_check_static_i386 "$bin" busybox
# Runs on the host too (directly, or under qemu-i386): a cheap sanity check.
banner=$(bl_run_i386 "$bin" 2>&1 | sed -n 1p) || true
case $banner in
BusyBox\ v*) ;;
*) bl_die "busybox does not run on the host: $banner" ;;
esac
bl_run_i386 "$bin" true || bl_die "busybox true failed"
sha=$(sha256sum "$bin" | cut -d' ' -f1)
deb_sha=$(sha256sum "$deb" | cut -d' ' -f1)
size=$(stat -c %s "$bin")
install -m 0755 "$bin" "$OUTDIR/busybox.tmp"
mv -f "$OUTDIR/busybox.tmp" "$OUTDIR/busybox"
cat >"$OUTDIR/busybox.version.tmp" <<EOF
debian-package: $PKG
debian-package-version: $ver
deb: $(basename "$deb")
deb-sha256: $deb_sha
banner: $banner
applets: $(bl_run_i386 "$bin" --list | wc -l)
file: $(file -b "$bin")
size: $size
fetched: $(date -u +%Y-%m-%dT%H:%M:%SZ)
sha256: $sha
EOF
mv -f "$OUTDIR/busybox.version.tmp" "$OUTDIR/busybox.version"
printf '%s\n' "$stamp" >"$OUTDIR/.busybox.stamp"
bl_log "busybox: installed $OUTDIR/busybox ($PKG $ver, $size bytes) in $(($(bl_now) - start)) s"
