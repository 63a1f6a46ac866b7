#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot test: each kernel variant, in the standard QEMU machine (TCG), with a
# busybox-only initramfs (tests/boot/init). For each variant it checks that
#   - the kernel reaches /init and QEMU exits by itself within the bound;
#   - /proc/meminfo shows HighTotal > 0 (the guest really has highmem);
#   - /proc/meminfo and /proc/vmstat are well formed: "Name: N kB" and
#     "name N" lines, no name twice (the NR_BOUNCE removal must not shift
#     the vmstat names), PSI memory lines present;
#   - the bounce machinery is there exactly when the variant has it: the
#     "bounce: pool size" boot message and the nr_bounce vmstat line exist
#     in pre and pre-fixed and are gone in post, where Bounce: reads 0 kB.
#
#   tests/boot-test.sh [VARIANT...]      (default: every variant)
# Kernels must be built (./run.sh build). Serial logs are kept in
# $BOUNCELAB_CACHE/boot-test/.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
. "$BL_ROOT/lib/variants.sh"

TIMEOUT=${BL_BOOT_TIMEOUT:-180}
OUT=$BL_CACHE/boot-test
BB=$BL_CACHE/guest/bin/busybox

# Lines of the serial log between "begin NAME" and "end NAME" markers.
section()
{
	tr -d '\r' <"$2" | awk -v n="$1" '
		$0 == "BOUNCELAB-BOOT: end " n { on = 0 }
		on { print }
		$0 == "BOUNCELAB-BOOT: begin " n { on = 1 }'
}

# Has section NAME of the serial log a line matching the ERE? grep reads
# it all: a grep -q that quits early would SIGPIPE section, and under
# pipefail a match would then read as none.
section_has()
{
	section "$1" "$2" | grep -E "$3" >/dev/null
}

meminfo_value()
{
	section meminfo "$2" | awk -v k="$1:" '$1 == k { print $2 }'
}

check_meminfo_format()
{
	local log=$1 bad
	bad=$(section meminfo "$log" |
		grep -Ev '^[A-Za-z0-9_()]+: +[0-9]+( kB)?$')
	[ -z "$bad" ] || { echo "malformed lines:"; echo "$bad"; return 1; }
	section_has meminfo "$log" '^MemTotal:' ||
		{ echo "no meminfo captured"; return 1; }
	bad=$(section meminfo "$log" | cut -d: -f1 | sort | uniq -d)
	[ -z "$bad" ] || { echo "names twice: $bad"; return 1; }
}

check_vmstat_format()
{
	local log=$1 bad
	bad=$(section vmstat "$log" | grep -Ev '^[a-z0-9_]+ [0-9]+$')
	[ -z "$bad" ] || { echo "malformed lines:"; echo "$bad"; return 1; }
	section_has vmstat "$log" '^nr_free_pages ' ||
		{ echo "no vmstat captured"; return 1; }
	bad=$(section vmstat "$log" | cut -d' ' -f1 | sort | uniq -d)
	[ -z "$bad" ] || { echo "names twice: $bad"; return 1; }
}

check_psi()
{
	section_has pressure/memory "$1" '^some avg10=' &&
		section_has pressure/memory "$1" '^full avg10='
}

# Is the bounce machinery (pool message, nr_bounce) present as expected?
check_bounce_machinery()
{
	local log=$1 expect=$2 pool=no nr=no
	section_has dmesg "$log" 'bounce: pool size: [0-9]* pages' && pool=yes
	section_has vmstat "$log" '^nr_bounce ' && nr=yes
	[ "$pool" = "$expect" ] && [ "$nr" = "$expect" ] ||
		{ echo "expected bounce code: $expect; pool message: $pool, nr_bounce: $nr"; return 1; }
	if [ "$expect" = no ]; then
		[ "$(meminfo_value Bounce "$log")" = 0 ] ||
			{ echo "Bounce: is not 0 kB"; return 1; }
	fi
}

# The five checks of a boot that could not be made, as skipped.
skip_rest()
{
	local c
	for c in "HighTotal > 0" "/proc/meminfo well formed" \
		"/proc/vmstat well formed" "/proc/pressure/memory present" \
		"bounce machinery as expected"; do
		t_skip "$1: $c" "$2"
	done
}

boot_variant()
{
	local v=$1 initrd=$2 kernel=$BL_CACHE/kernels/$v/bzImage
	local log=$OUT/$v.serial.log rc=0 start high expect=yes

	if [ ! -f "$kernel" ]; then
		t_fail "$v: kernel built" "no $kernel; run './run.sh build $v'"
		skip_rest "$v" "no kernel"
		return
	fi
	start=$(bl_now)
	"$BL_ROOT/bench/qemu-boot" -k "$kernel" -i "$initrd" -l "$log" \
		-t "$TIMEOUT" || rc=$?
	bl_log "boot-test: $v booted and exited in $(( $(bl_now) - start ))s (rc $rc, log $log)"
	if [ $rc != 0 ] || ! grep -q 'BOUNCELAB-BOOT: done' "$log"; then
		t_fail "$v: reaches /init and exits" "qemu rc $rc" \
			"$(tr -d '\r' <"$log" | tail -n 15)"
		skip_rest "$v" "the boot failed"
		return
	fi
	t_ok "$v: reaches /init and exits ($(tr -d '\r' <"$log" | grep -o 'init reached, kernel [^ ]*' | head -n 1))"

	high=$(meminfo_value HighTotal "$log")
	if [ "${high:-0}" -gt 0 ]; then
		t_ok "$v: HighTotal ${high} kB > 0"
	else
		t_fail "$v: HighTotal > 0" "HighTotal: '${high}'"
	fi
	t_check "$v: /proc/meminfo well formed" check_meminfo_format "$log"
	t_check "$v: /proc/vmstat well formed" check_vmstat_format "$log"
	t_check "$v: /proc/pressure/memory present" check_psi "$log"

	case " $(bl_variant_stacks "$v") " in *"/remove-bounce "*) expect=no ;; esac
	t_check "$v: bounce machinery present: $expect" \
		check_bounce_machinery "$log" "$expect"
}

main()
{
	local variants v spec initrd

	if [ $# -gt 0 ]; then
		variants=("$@")
	else
		mapfile -t variants < <(bl_variants)
	fi
	bl_check_variants "${variants[@]}"
	mkdir -p "$OUT"
	"$BL_ROOT/guest/busybox/fetch-busybox.sh" "$(dirname "$BB")" >&2 ||
		bl_die "could not fetch busybox"

	spec=$OUT/initramfs.spec
	initrd=$OUT/initramfs.cpio.gz
	cat >"$spec" <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /proc 0755 0 0
	dir /sys 0755 0 0
	dir /bin 0755 0 0
	file /bin/busybox $BB 0755 0 0
	file /init $BL_ROOT/tests/boot/init 0755 0 0
	EOF
	"$BL_ROOT/guest/gen-initramfs" "$spec" "$initrd" ||
		bl_die "could not build the boot-test initramfs"

	t_plan $((6 * ${#variants[@]}))
	for v in "${variants[@]}"; do
		boot_variant "$v" "$initrd"
	done
	t_summary
}

main "$@"
