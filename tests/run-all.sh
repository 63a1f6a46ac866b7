#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test suite and add up their "N passed, N failed" lines (with an
# optional ", N skipped") into one.
# A suite that dies without its summary line counts as one failure, and so
# does one that exits non-zero while its summary line says 0 failed.
#
#   tests/run-all.sh [SUITE...]     (default: all of ORDER below)
#
# Suites in SUITES but not in ORDER run only when named: versions fetches
# the other kernel bases over the network (~430 MB).
set -uo pipefail

. "$(dirname "$0")/../lib/common.sh"

declare -A SUITES=(
	[helpers]="make -s -C $BL_ROOT/guest/helpers test"
	[analysis]="$BL_ROOT/tests/analysis-test.sh"
	[scripts-harness]="$BL_ROOT/tests/scripts-harness-test.sh"
	[scripts-plan]="$BL_ROOT/tests/scripts-plan-test.sh"
	[scripts-boots]="$BL_ROOT/tests/scripts-boots-test.sh"
	[scripts-compare]="$BL_ROOT/tests/scripts-compare-test.sh"
	[scripts-interrupt]="$BL_ROOT/tests/scripts-interrupt-test.sh"
	[scripts-initramfs]="$BL_ROOT/tests/scripts-initramfs-test.sh"
	[scripts-fetch]="$BL_ROOT/tests/scripts-fetch-test.sh"
	[build]="$BL_ROOT/tests/build-test.sh"
	[patches]="$BL_ROOT/tests/patches-test.sh"
	[boot]="$BL_ROOT/tests/boot-test.sh"
	[guest]="$BL_ROOT/tests/guest-test.sh"
	[compare]="$BL_ROOT/tests/compare-test.sh"
	[versions]="$BL_ROOT/tests/versions-test.sh"
)
ORDER=(helpers analysis scripts-harness scripts-plan scripts-boots
	scripts-compare scripts-interrupt scripts-initramfs scripts-fetch
	build patches boot guest compare)

pass=0 fail=0 skip=0 failed_suites=''
[ $# -gt 0 ] && ORDER=("$@")
for s in "${ORDER[@]}"; do
	[ -n "${SUITES[$s]:-}" ] || bl_die "unknown test suite '$s' (known: ${!SUITES[*]})"
	echo "=== suite $s"
	out=$(mktemp)
	${SUITES[$s]} 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$summary" ]; then
		echo "suite $s ended without a summary line"
		fail=$((fail + 1))
		failed_suites+=" $s"
		continue
	fi
	p=${summary%% passed*}
	f=${summary#*passed, }
	f=${f%% failed*}
	k=0
	[[ $summary =~ failed,\ ([0-9]+)\ skipped ]] && k=${BASH_REMATCH[1]}
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "suite $s exited $rc although it reported 0 failed"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + k))
	[ "$f" = 0 ] || failed_suites+=" $s"
done
echo "=== all suites"
[ -z "$failed_suites" ] || echo "failing suites:$failed_suites"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
