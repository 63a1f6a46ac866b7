# SPDX-License-Identifier: GPL-2.0
# Tiny test harness for bouncelab's shell tests, KTAP as kselftest's
# ktap_helpers.sh writes it: "KTAP version 1" and a plan line "1..N"
# (t_plan), "ok N - name" / "not ok N - name" lines, "ok N - name # SKIP
# reason" for a test that could not run here (t_skip), a "# Totals:" line,
# and a closing "N passed, N failed, N skipped" line that tests/run-all.sh
# adds up. Source it.

. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

T_PASS=0
T_FAIL=0
T_SKIP=0
T_PLAN=''

# Number of the next test line.
t_next()
{
	echo $((T_PASS + T_FAIL + T_SKIP + 1))
}

# t_plan N: the suite runs N tests. t_summary counts a different number of
# tests run as a failure (a suite that silently lost tests).
t_plan()
{
	T_PLAN=$1
	echo "KTAP version 1"
	echo "1..$1"
}

t_ok()
{
	echo "ok $(t_next) - $*"
	T_PASS=$((T_PASS + 1))
}

# t_fail NAME [DETAIL...]: DETAIL lines are printed indented below.
t_fail()
{
	local name=$1
	shift
	echo "not ok $(t_next) - $name"
	T_FAIL=$((T_FAIL + 1))
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}

# t_skip NAME REASON: a test that cannot run here; neither passed nor failed.
t_skip()
{
	echo "ok $(t_next) - $1 # SKIP ${2:-}"
	T_SKIP=$((T_SKIP + 1))
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
	local ran=$((T_PASS + T_FAIL + T_SKIP))
	if [ -n "$T_PLAN" ] && [ "$ran" != "$T_PLAN" ]; then
		echo "# planned $T_PLAN tests but ran $ran"
		T_FAIL=$((T_FAIL + 1))
	fi
	echo "# Totals: pass:$T_PASS fail:$T_FAIL xfail:0 xpass:0 skip:$T_SKIP error:0"
	echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	[ "$T_FAIL" = 0 ]
}

# t_variants_table OUT: kernels/variants with the test-only variants of
# tests/regression.variants (planted), for BOUNCELAB_VARIANTS_FILE.
t_variants_table()
{
	cat "$BL_ROOT/kernels/variants" "$BL_ROOT/tests/regression.variants" >"$1"
}
