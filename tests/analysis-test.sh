#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The analysis suite: bench/analysis, bench/analyze and plots/*.gp, tested
# with unittest on the real fixture run in tests/analysis/fixtures and on
# synthetic runs. No QEMU, no kernels: it runs anywhere the Debian packages
# below are installed (they are installed here when missing, as root).
#
# Ends with the "N passed, N failed, N skipped" line tests/run-all.sh adds up.
set -uo pipefail

. "$(dirname "$0")/../lib/common.sh"
. "$BL_ROOT/lib/deps.sh"

# Debian's interpreter, not whatever python3 comes first on PATH: pandas
# and numpy come from Debian packages.
PY=/usr/bin/python3

if ! (bl_deps_install $BL_DEPS_ANALYSIS); then
	echo "analysis: missing Debian packages: $(bl_deps_missing $BL_DEPS_ANALYSIS | tr '\n' ' ')"
	echo "0 passed, 1 failed"
	exit 1
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
cd "$BL_ROOT" || exit 1
"$PY" -m unittest discover -s tests/analysis -v 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

# unittest ends with "Ran N tests in Xs" then "OK", "OK (skipped=S)" or
# "FAILED (failures=F, errors=E, skipped=S)". Skipped tests count as
# neither passed nor failed; no "Ran" line at all (a crash) is one failure.
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out" | tail -n 1)
result=$(grep -E '^(OK|FAILED)' "$out" | tail -n 1)
count()
{
	local n
	n=$(printf '%s\n' "$result" | grep -o "$1=[0-9]*" | cut -d= -f2)
	echo "${n:-0}"
}
if [ -z "$ran" ] || [ -z "$result" ]; then
	echo "analysis: unittest ended without its summary (exit $rc)"
	echo "0 passed, 1 failed"
	exit 1
fi
failed=$(( $(count failures) + $(count errors) + $(count 'unexpected successes') ))
passed=$(( ran - $(count failures) - $(count errors) - $(count skipped) ))
[ "$rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "$passed passed, $failed failed, $(count skipped) skipped"
[ "$failed" = 0 ]
