# SPDX-License-Identifier: GPL-2.0
# Debian packages the lab needs on the host, and their idempotent install.
# Source it after lib/common.sh.

# What each part of the lab runs on the host.
BL_DEPS_KERNEL="linux-source-6.12 gcc make ccache flex bison bc libelf-dev
	libssl-dev xz-utils patch perl python3"
BL_DEPS_BOOT="qemu-system-x86 cpio gzip"
BL_DEPS_GUEST="gcc-multilib dpkg-dev file"
# Debian's /usr/bin/python3 with pandas (not a python3 that PATH may put
# first), and gnuplot for the plots.
BL_DEPS_ANALYSIS="python3 python3-pandas python3-numpy gnuplot-nox"

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
	apt-get -o DPkg::Lock::Timeout=600 update -qq ||
		bl_die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
		install -y -qq --no-install-recommends $missing >/dev/null ||
		bl_die "apt-get install failed for: $missing"
	missing=$(bl_deps_missing "$@" | tr '\n' ' ')
	[ -z "$missing" ] || bl_die "still missing after install: $missing"
	bl_log "deps: installed"
}
