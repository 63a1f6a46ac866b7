# SPDX-License-Identifier: GPL-2.0
# Tiny test harness for bouncelab's shell tests: TAP-like "ok N - name"
# lines and a closing "N passed, N failed" line. Source it.

. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

T_PASS=0
T_FAIL=0

t_ok()
{
	T_PASS=$((T_PASS + 1))
	echo "ok $((T_PASS + T_FAIL)) - $*"
}

# t_fail NAME [DETAIL...]: DETAIL lines are printed indented below.
t_fail()
{
	local name=$1
	shift
	T_FAIL=$((T_FAIL + 1))
	echo "not ok $((T_PASS + T_FAIL)) - $name"
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}

# t_check NAME COMMAND...: passes when COMMAND succeeds; its output is shown
# only on failure.
t_check()
{
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_ok "$name"
	else
		t_fail "$name" "${out:-(no output)}"
	fi
}

t_summary()
{
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" = 0 ]
}
