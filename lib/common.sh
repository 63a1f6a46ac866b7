# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers for bouncelab scripts. Source it; do not run it.
#
# Every script finds the repository, the cache and the logging helpers here,
# so paths and messages look the same everywhere.

BL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Heavy generated things (unpacked kernel tree, builds, ccache, guest images)
# live in one fixed folder outside the checkout, so that every clone (CI's
# fresh clones too) reuses them. Override with BOUNCELAB_CACHE.
if [ -z "${BOUNCELAB_CACHE:-}" ]; then
	if [ "$(id -u)" = 0 ]; then
		BOUNCELAB_CACHE=/var/cache/bouncelab
	else
		BOUNCELAB_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/bouncelab
	fi
fi
BL_CACHE=$BOUNCELAB_CACHE

# The one Debian kernel source tree the lab is built from.
BL_KSRC_PKG=linux-source-6.12
BL_KSRC_TARBALL=/usr/src/linux-source-6.12.tar.xz

bl_log()
{
	printf '[bouncelab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

bl_die()
{
	printf 'bouncelab: error: %s\n' "$*" >&2
	exit 1
}

# Seconds since the epoch, for elapsed-time lines.
bl_now()
{
	date +%s
}

# Dies unless root; $1 says what needs it.
bl_need_root()
{
	[ "$(id -u)" = 0 ] || bl_die "$1 needs root (run it as root once)"
}

bl_need_cmd()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			bl_die "'$c' not found; run './run.sh deps' first"
	done
}

# bl_lock FD FILE WHAT: hold an exclusive lock on FILE as file descriptor
# FD (until the script exits). While another build holds it, wait
# BL_LOCK_WAIT seconds (default 1800) at most, then die saying so: a build
# must never wait forever behind one that is stuck.
bl_lock()
{
	local fd=$1 file=$2 what=$3 wait=${BL_LOCK_WAIT:-1800}
	eval "exec $fd>\"\$file\""
	flock -n "$fd" && return 0
	bl_log "$what: another build holds $file; waiting ${wait}s at most"
	flock -w "$wait" "$fd" ||
		bl_die "$what: $file is still locked by another build after ${wait}s; wait for it to end or stop it (BL_LOCK_WAIT sets the bound)"
}

# Version of an installed Debian package, empty if it is not installed.
bl_pkg_version()
{
	dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$3 == "installed" { print $4 }'
}

# Dies unless $1 is a statically linked 32-bit i386 ELF (a guest binary);
# $2 names it in the message.
bl_check_static_i386()
{
	local desc
	desc=$(file -b "$1")
	case $desc in
	ELF\ 32-bit*Intel*80386*) ;;
	*) bl_die "$2 is not a 32-bit i386 ELF: $desc" ;;
	esac
	case $desc in
	*statically\ linked* | *static-pie\ linked*) ;;
	*) bl_die "$2 is not statically linked: $desc" ;;
	esac
}

# Runs a static i386 guest binary ($1, then its arguments) on the host:
# directly where the host kernel runs 32-bit binaries, else under QEMU's
# user-mode emulation (qemu-i386, Debian's qemu-user). Some hosts (a
# firecracker VM, say) are built without IA32 emulation.
bl_run_i386()
{
	if [ -z "${BL_I386_EXEC:-}" ]; then
		BL_I386_EXEC=direct
		# 126: the kernel would not execute it at all, so nothing ran
		"$1" --help </dev/null >/dev/null 2>&1
		if [ $? = 126 ]; then
			command -v qemu-i386 >/dev/null 2>&1 ||
				bl_die "this host cannot run i386 binaries and qemu-i386 is missing; run './run.sh deps'"
			BL_I386_EXEC=qemu
		fi
	fi
	if [ "$BL_I386_EXEC" = qemu ]; then
		qemu-i386 "$@"
	else
		"$@"
	fi
}
