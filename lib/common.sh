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
# The run folders (bench/compare's results/<run-id>/, the history in
# results/history/). Override with BOUNCELAB_RESULTS.
BL_RESULTS=${BOUNCELAB_RESULTS:-$BL_ROOT/results}

# The one Debian kernel source tree the lab is built from.
BL_KSRC_PKG=linux-source-6.12

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

# bl_lock FD FILE WHAT [shared]: hold a lock on FILE as file descriptor FD
# until bl_unlock or the script exits: exclusive, or with "shared" one
# that many holders share (to read what an exclusive holder makes). While
# another process holds it, say at once what it waits for (WHAT, FILE)
# and who holds it, then wait BL_LOCK_WAIT seconds (default 1800) at most
# and die saying so: a build must never wait forever behind one that is
# stuck. An exclusive holder writes who it is into FILE for the waiters.
bl_lock()
{
	local fd=$1 file=$2 what=$3 mode=-x wait=${BL_LOCK_WAIT:-1800} start
	[ "${4:-}" != shared ] || mode=-s
	# (<>: opening it must not truncate the holder's note)
	eval "exec $fd<>\"\$file\""
	if ! flock -n $mode "$fd"; then
		start=$(bl_now)
		bl_log "$what: waiting for $file (${wait}s at most), held by $(bl_lock_holder "$file")"
		flock -w "$wait" $mode "$fd" ||
			bl_die "$what: $file is still locked by another build after ${wait}s (held by $(bl_lock_holder "$file")); wait for it to end or stop it (BL_LOCK_WAIT sets the bound)"
		bl_log "$what: got $file after $(( $(bl_now) - start ))s"
	fi
	[ $mode = -s ] || printf '%s %s %s\n' "${BASHPID:-$$}" "$(date +%H:%M:%S)" "$what" >"$file"
}

# bl_unlock FD FILE: let go of the lock bl_lock took on FILE as FD (and of
# its note, if it is ours).
bl_unlock()
{
	local pid=''
	read -r pid _ <"$2" 2>/dev/null || true
	[ "$pid" != "${BASHPID:-$$}" ] || : >"$2"
	eval "exec $1>&-"
}

# Who holds lock FILE, as bl_lock's note says: "pid N (WHAT, since
# HH:MM:SS: its command line)" while that process lives; else, when
# /proc/locks shows a shared lock on it, the checks that share it (they
# write no note).
bl_lock_holder()
{
	local pid='' since='' what='' cmd dev ino id
	read -r pid since what <"$1" 2>/dev/null || true
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || cmd=''
		echo "pid $pid ($what, since $since${cmd:+: ${cmd% }})"
		return
	fi
	# /proc/locks names a file MAJOR:MINOR:INODE, the numbers in hex
	read -r dev ino < <(stat -c '%d %i' "$1" 2>/dev/null) || true
	id=$(printf '%02x:%02x:%s' $(( (${dev:-0} >> 8) & 0xfff )) \
		$(( (${dev:-0} & 0xff) | ((${dev:-0} >> 12) & 0xfff00) )) "${ino:-0}")
	if awk -v id="$id" '$2 == "FLOCK" && $4 == "READ" && $6 == id { f = 1 } END { exit !f }' /proc/locks 2>/dev/null; then
		echo "checks that share it (a shared lock)"
	else
		echo "another process (it left no note)"
	fi
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
