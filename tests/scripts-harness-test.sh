#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test tooling itself: tests/run-all.sh (exit codes, skipped counts),
# tests/lib.sh's KTAP output and plan, and patches-test.sh's checkpatch.pl
# check when checkpatch crashes.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- tests/run-all.sh --------------------------------------------------

# A suite whose summary says "0 failed" but that exits non-zero failed.
test_run_all_exit_code()
{
	local sb rc=0 out
	sb=$(sandbox run-all-rc)
	stub "$sb/tests/analysis-test.sh" 'echo "3 passed, 0 failed"; exit 1'
	stub "$sb/tests/build-test.sh" 'echo "2 passed, 0 failed"; exit 0'
	out=$("$sb/tests/run-all.sh" analysis build 2>&1) || rc=$?
	if [ $rc != 0 ] && grep -q '^failing suites: analysis$' <<<"$out" &&
	   grep -Eq '^5 passed, 1 failed' <<<"$(tail -n 1 <<<"$out")"; then
		t_ok "run-all: a suite exiting non-zero with '0 failed' counts as failed"
	else
		t_fail "run-all: a suite exiting non-zero with '0 failed' counts as failed" \
			"exit $rc" "$out"
	fi
}

# --- tests/lib.sh: plan and SKIP -----------------------------------------

# A suite written with tests/lib.sh, in a sandbox: BODY between the source
# line and t_summary. Prints its output; returns its exit code.
harness_run()
{
	local sb=$1 body=$2
	stub "$sb/tests/h-test.sh" ". \"\$(dirname \"\$0\")/lib.sh\"
$body
t_summary"
	"$sb/tests/h-test.sh" 2>&1
}

test_harness()
{
	local sb out rc
	sb=$(sandbox harness)

	out=$(harness_run "$sb" 't_plan 3; t_ok a; t_skip b "no kvm here"; t_ok c')
	rc=$?
	if [ $rc = 0 ] && [ "$(head -n 2 <<<"$out" | tr '\n' ' ')" = "KTAP version 1 1..3 " ] &&
	   grep -qx 'ok 2 - b # SKIP no kvm here' <<<"$out" &&
	   grep -qx 'ok 3 - c' <<<"$out" &&
	   grep -qx '# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "2 passed, 0 failed, 1 skipped" ]; then
		t_ok "lib.sh: KTAP: t_plan prints the version and 1..N, t_skip '# SKIP reason', a Totals line"
	else
		t_fail "lib.sh: KTAP: t_plan prints the version and 1..N, t_skip '# SKIP reason', a Totals line" \
			"exit $rc" "$out"
	fi

	out=$(harness_run "$sb" 't_plan 3; t_ok a; t_skip b why')
	rc=$?
	if [ $rc != 0 ] && grep -q 'planned 3 tests but ran 2' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "1 passed, 1 failed, 1 skipped" ]; then
		t_ok "lib.sh: fewer tests run than planned is a failure"
	else
		t_fail "lib.sh: fewer tests run than planned is a failure" "exit $rc" "$out"
	fi

	out=$(harness_run "$sb" 't_ok a; t_fail b')
	rc=$?
	[ $rc != 0 ] && [ "$(tail -n 1 <<<"$out")" = "1 passed, 1 failed, 0 skipped" ] &&
		t_ok "lib.sh: without a plan, a failure still fails" ||
		t_fail "lib.sh: without a plan, a failure still fails" "exit $rc" "$out"
}

test_run_all_skipped()
{
	local sb rc=0 out
	sb=$(sandbox run-all-skip)
	stub "$sb/tests/analysis-test.sh" 'echo "2 passed, 0 failed, 1 skipped"'
	stub "$sb/tests/build-test.sh" 'echo "1 passed, 0 failed"'
	stub "$sb/tests/patches-test.sh" 'echo "0 passed, 0 failed, 4 skipped"'
	out=$("$sb/tests/run-all.sh" analysis build patches 2>&1) || rc=$?
	[ $rc = 0 ] && [ "$(tail -n 1 <<<"$out")" = "3 passed, 0 failed, 5 skipped" ] &&
		t_ok "run-all: adds up the suites' skipped counts" ||
		t_fail "run-all: adds up the suites' skipped counts" "exit $rc" "$out"
}

# --- tests/patches-test.sh: checkpatch.pl that crashes --------------------

# checkpatch_with NAME PERL: patches-test.sh's checkpatch check of one patch
# (6.12/lab/0001-x.patch, type FOO excused) run with PERL as checkpatch.pl.
checkpatch_with()
{
	local d=$WORK/checkpatch/$1
	mkdir -p "$d/patches/6.12/lab"
	printf 'Subject: [PATCH] x\n' >"$d/patches/6.12/lab/0001-x.patch"
	printf '6.12/lab/0001-x.patch FOO\n' >"$d/patches/checkpatch-exceptions"
	printf '%s\n' "$2" >"$d/checkpatch.pl"
	(
		export BL_CHECKPATCH=$d/checkpatch.pl BOUNCELAB_PATCHES_DIR=$d/patches
		. "$BL_ROOT/tests/patches-test.sh"
		checkpatch_unexcused "$d/patches/6.12/lab/0001-x.patch"
	) >"$d/out" 2>&1
}

# expect_checkpatch NAME WANT(pass|fail) PERL
expect_checkpatch()
{
	local got=pass
	checkpatch_with "$1" "$3" || got=fail
	[ "$got" = "$2" ] && t_ok "patches-test checkpatch: $1 -> $2" ||
		t_fail "patches-test checkpatch: $1 -> $2" "it ${got}ed" \
			"$(cat "$WORK/checkpatch/$1/out")"
}

test_checkpatch_crash()
{
	expect_checkpatch "perl dies" fail 'die "Undefined subroutine &main::foo called";'
	expect_checkpatch "exit 1 without its total line" fail 'exit 1;'
	expect_checkpatch "perl error on stderr, exit 0" fail \
		'warn "Use of uninitialized value in concatenation at scripts/checkpatch.pl line 7.\n"; exit 0;'
	expect_checkpatch "clean patch (exit 0, silent)" pass 'exit 0;'
	expect_checkpatch "excused message" pass '
print "$ARGV[-1]:1: CHECK:FOO: something\n";
print "total: 0 errors, 0 warnings, 1 checks, 1 lines checked\n"; exit 1;'
	expect_checkpatch "unexcused message" fail '
print "$ARGV[-1]:1: WARNING:BAR: something\n";
print "total: 0 errors, 1 warnings, 0 checks, 1 lines checked\n"; exit 1;'
}

t_plan 11
test_run_all_exit_code
test_harness
test_run_all_skipped
test_checkpatch_crash
t_summary
