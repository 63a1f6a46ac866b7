# SPDX-License-Identifier: GPL-2.0
# Debian packages the lab needs on the host, and their idempotent install.
# Source it after lib/common.sh.

# What each part of the lab runs on the host.
# kernels/fetch-base: apt downloads the other bases' source packages
# (lib/bases.sh) and checks them against the Debian archive keyring;
# ca-certificates for a BOUNCELAB_DEBIAN_MIRROR that is https.
BL_DEPS_FETCH="apt dpkg debian-archive-keyring ca-certificates"
BL_DEPS_KERNEL="linux-source-6.12 gcc make ccache flex bison bc libelf-dev
	libssl-dev xz-utils patch perl python3 $BL_DEPS_FETCH"
# parallel: boots on an exact clock side by side; rsync and ssh: those
# boots on other hosts (bench/compare --sshloginfile).
BL_DEPS_BOOT="qemu-system-x86 cpio gzip parallel rsync openssh-client"
# qemu-user: runs the guest's i386 binaries on hosts without IA32 emulation.
BL_DEPS_GUEST="gcc-multilib dpkg-dev file qemu-user"
# What only the test suites need (make test, ./run.sh deps --test):
# openssh-server for compare-test's second host, localhost through a
# private sshd of its own (the system's sshd is not started or changed).
BL_DEPS_TEST="openssh-server chromium"
# Debian's /usr/bin/python3 with pandas (not a python3 that PATH may put
# first), and gnuplot for the plots.
BL_DEPS_ANALYSIS="python3 python3-pandas python3-numpy python3-debian python3-markdown
	gnuplot-nox"

# apt-get update, waiting (10 minutes at most) while another apt holds the
# lists lock: DPkg::Lock::Timeout covers the dpkg lock, not that one.
bl_apt_update()
{
	local try log
	bl_need_root "apt-get update"
	log=$(mktemp)
	for try in $(seq 1 60); do
		if apt-get -o DPkg::Lock::Timeout=600 -q update >"$log" 2>&1; then
			rm -f "$log"
			return 0
		fi
		grep 'Could not get lock' "$log" >/dev/null || break
		[ "$try" = 1 ] && bl_log "apt lists are locked by another process; waiting"
		sleep 10
	done
	cat "$log" >&2
	rm -f "$log"
	bl_die "apt-get update failed"
}

bl_deps_missing()
{
	local p
	for p in "$@"; do
		[ -n "$(bl_pkg_version "$p")" ] || echo "$p"
	done
}

# Install every package of the given lists that is not installed yet.
bl_deps_install()
{
	local missing

	missing=$(bl_deps_missing "$@" | tr '\n' ' ')
	if [ -z "$missing" ]; then
		bl_log "deps: all $# host packages present"
		return 0
	fi
	[ "$(id -u)" = 0 ] ||
		bl_die "missing Debian packages: $missing(run './run.sh deps' as root)"
	bl_log "deps: installing $missing"
	bl_apt_update
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
		install -y -qq --no-install-recommends $missing >/dev/null ||
		bl_die "apt-get install failed for: $missing"
	missing=$(bl_deps_missing "$@" | tr '\n' ' ')
	[ -z "$missing" ] || bl_die "still missing after install: $missing"
	bl_log "deps: installed"
}
