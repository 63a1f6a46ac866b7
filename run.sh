#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bouncelab: what removing block-layer bounce buffering (Linux 6.16) changes,
# measured on i386 HIGHMEM guests in QEMU. This is the one entry point; each
# command calls the script that does the work.
set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$BL_ROOT/lib/deps.sh"
. "$BL_ROOT/lib/variants.sh"

usage()
{
	cat <<EOF
usage: ./run.sh COMMAND [ARGS...]

commands:
  deps                  install the Debian packages the lab needs (idempotent)
  build [VARIANT...]    build the guest kernels (default: all variants)
  guest                 build the guest programs (busybox, static fio, helpers)
  boot-test [VARIANT...]
                        boot each kernel in QEMU with a busybox initramfs and
                        check it reaches /init with highmem and sane /proc
  variants              list the kernel variants and their patch stacks
  test                  run the test suite (same as 'make test')
  help                  this text

variants: $(bl_variants | tr '\n' ' ')
cache:    $BL_CACHE (set BOUNCELAB_CACHE to move it)
EOF
}

cmd_deps()
{
	bl_deps_install $BL_DEPS_KERNEL $BL_DEPS_BOOT $BL_DEPS_GUEST
}

cmd_build()
{
	bl_check_variants "$@"
	bl_deps_install $BL_DEPS_KERNEL
	"$BL_ROOT/kernels/build" "$@"
}

cmd_guest()
{
	bl_deps_install $BL_DEPS_GUEST
	"$BL_ROOT/guest/build" "$@"
}

cmd_boot_test()
{
	bl_check_variants "$@"
	bl_deps_install $BL_DEPS_KERNEL $BL_DEPS_BOOT
	"$BL_ROOT/tests/boot-test.sh" "$@"
}

cmd_variants()
{
	local v
	for v in $(bl_variants); do
		printf '%-10s %s\n' "$v" "$(bl_variant_stacks "$v")"
	done
}

main()
{
	local cmd=${1:-}

	[ $# -gt 0 ] && shift
	case $cmd in
	deps)		cmd_deps "$@" ;;
	build)		cmd_build "$@" ;;
	guest)		cmd_guest "$@" ;;
	boot-test)	cmd_boot_test "$@" ;;
	variants)	cmd_variants "$@" ;;
	test)		exec make -C "$BL_ROOT" test ;;
	compare)	bl_die "'compare' is not written yet (the benchmark matrix is the next step); 'build' and 'boot-test' work today" ;;
	help|-h|--help)	usage ;;
	'')		usage >&2; exit 2 ;;
	*)		echo "bouncelab: unknown command '$cmd'" >&2
			usage >&2
			exit 2 ;;
	esac
}

main "$@"
