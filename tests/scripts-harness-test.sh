#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test tooling itself: tests/run-all.sh (exit codes, skipped counts, each
# suite's settings: its timeout and its needs), tests/lib.sh's KTAP output and
# plan, patches-test.sh's checkpatch.pl check when checkpatch crashes, and
# the packages make test installs for the suites.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- tests/run-all.sh --------------------------------------------------

# suite_stub SANDBOX NAME BODY [SETTING...]: the sandbox's suite NAME
# replaced by a script with BODY, and its settings by a timeout of 60 s,
# no needs, and the SETTING lines given.
suite_stub()
{
	local sb=$1 name=$2 body=$3
	shift 3
	stub "$sb/tests/$name-test.sh" "$body"
	printf '%s\n' "run=tests/$name-test.sh" timeout=60 "$@" >"$sb/tests/$name.settings"
}

# A suite whose summary says "0 failed" but that exits non-zero failed.
test_run_all_exit_code()
{
	local sb rc=0 out name
	sb=$(sandbox run-all-rc)
	suite_stub "$sb" analysis 'echo "3 passed, 0 failed"; exit 1'
	suite_stub "$sb" build 'echo "2 passed, 0 failed"; exit 0'
	out=$("$sb/tests/run-all.sh" analysis build 2>&1) || rc=$?
	name="run-all: a suite exiting non-zero with '0 failed' counts as failed"
	if [ $rc != 0 ] && grep -q '^failing suites: analysis$' <<<"$out" &&
	   grep -Eq '^5 passed, 1 failed' <<<"$(tail -n 1 <<<"$out")"; then
		t_ok "$name"
	else
		t_fail "$name" "exit $rc" "$out"
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

# harness_case SANDBOX NAME OK BODY LINE...: the suite BODY (harness_run)
# exits 0 when OK is "ok", non-zero when it is "fails"; it prints each
# LINE, whole, in that order, the last LINE last.
harness_case()
{
	local sb=$1 name=$2 want=$3 body=$4 out rc=0 got=ok rest line n
	shift 4
	out=$(harness_run "$sb" "$body") || rc=$?
	[ $rc = 0 ] || got=fails
	rest=$out
	for line in "$@"; do
		n=$(grep -Fxn -m 1 -- "$line" <<<"$rest" | cut -d: -f1)
		[ -n "$n" ] || { got="without '$line' in order"; break; }
		rest=$(tail -n +$((n + 1)) <<<"$rest")
	done
	[ -z "$rest" ] || [ "$got" != "$want" ] || got="with more after '$line'"
	[ "$got" = "$want" ] && t_ok "$name" || t_fail "$name" "exit $rc: $got" "$out"
}

test_harness()
{
	local sb
	sb=$(sandbox harness)
	harness_case "$sb" "lib.sh: KTAP: t_plan prints the version and 1..N, t_skip '# SKIP reason', a Totals line" \
		ok 't_plan 3; t_ok a; t_skip b "no kvm here"; t_ok c' \
		'KTAP version 1' '1..3' 'ok 2 - b # SKIP no kvm here' 'ok 3 - c' \
		'# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0' '2 passed, 0 failed, 1 skipped'
	harness_case "$sb" "lib.sh: fewer tests run than planned is a failure" \
		fails 't_plan 3; t_ok a; t_skip b why' \
		'# planned 3 tests but ran 2' '1 passed, 1 failed, 1 skipped'
	harness_case "$sb" "lib.sh: without a plan, a failure still fails" \
		fails 't_ok a; t_fail b' '1 passed, 1 failed, 0 skipped'
}

test_run_all_skipped()
{
	local sb rc=0 out
	sb=$(sandbox run-all-skip)
	suite_stub "$sb" analysis 'echo "2 passed, 0 failed, 1 skipped"'
	suite_stub "$sb" build 'echo "1 passed, 0 failed"'
	suite_stub "$sb" patches 'echo "0 passed, 0 failed, 4 skipped"'
	out=$("$sb/tests/run-all.sh" analysis build patches 2>&1) || rc=$?
	[ $rc = 0 ] && [ "$(tail -n 1 <<<"$out")" = "3 passed, 0 failed, 5 skipped" ] &&
		t_ok "run-all: adds up the suites' skipped counts" ||
		t_fail "run-all: adds up the suites' skipped counts" "exit $rc" "$out"
}

# A suite past its timeout is killed, with the processes it started, and
# reported as failed with the reason; the next suite still runs. One that
# ignores SIGTERM is killed with SIGKILL after the grace.
test_run_all_timeout()
{
	local sb rc=0 out secs start name
	sb=$(sandbox run-all-timeout)
	suite_stub "$sb" analysis "sleep 300 & echo \$! >\"$WORK/timeout-child\"; wait" timeout=2
	suite_stub "$sb" build "trap '' TERM; sleep 300 & echo \$! >\"$WORK/timeout-stubborn\"; wait; wait" timeout=2
	suite_stub "$sb" patches 'echo "2 passed, 0 failed"'
	start=$(date +%s)
	out=$(BL_TEST_KILL_GRACE=2 timeout 120 "$sb/tests/run-all.sh" analysis build patches 2>&1) || rc=$?
	secs=$(( $(date +%s) - start ))
	name="run-all: a suite past its timeout is killed, its children too, and fails; the others run"
	if [ $rc = 1 ] && [ "$secs" -lt 60 ] &&
	   grep -qx 'not ok 1 - analysis # TIMEOUT: killed after 2 s (timeout=2 in tests/analysis.settings)' <<<"$out" &&
	   grep -qx 'ok 3 - patches' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "2 passed, 2 failed, 0 skipped" ] &&
	   [ -s "$WORK/timeout-child" ] && gone "$(cat "$WORK/timeout-child")"; then
		t_ok "$name"
	else
		t_fail "$name" "exit $rc after ${secs}s" "$out"
	fi
	name="run-all: a suite that ignores SIGTERM is killed after the grace and fails"
	if grep -qx 'not ok 2 - build # TIMEOUT: killed after 2 s (timeout=2 in tests/build.settings)' <<<"$out" &&
	   [ -s "$WORK/timeout-stubborn" ] && gone "$(cat "$WORK/timeout-stubborn")"; then
		t_ok "$name"
	else
		t_fail "$name" "$out"
	fi
	[ ! -s "$WORK/timeout-child" ] || kill "$(cat "$WORK/timeout-child")" 2>/dev/null
	[ ! -s "$WORK/timeout-stubborn" ] || kill -KILL "$(cat "$WORK/timeout-stubborn")" 2>/dev/null
}

# Ctrl-C (SIGINT to the runner) reaches the running suite, which the
# timeout keeps in a process group of its own: it ends, the suites after it
# are not run, and the run exits 130.
test_run_all_interrupt()
{
	local sb rc=0 out pid name="run-all: Ctrl-C ends the running suite and the run (exit 130)"
	sb=$(sandbox run-all-int)
	suite_stub "$sb" analysis "echo \$\$ >\"$WORK/int-suite\"; sleep 100"
	suite_stub "$sb" build "touch \"$WORK/int-next\"; echo '1 passed, 0 failed'"
	env --default-signal=INT "$sb/tests/run-all.sh" analysis build >"$WORK/int.out" 2>&1 &
	pid=$!
	wait_file "$WORK/int-suite" 30 && kill -INT "$pid"
	wait "$pid" || rc=$?
	out=$(cat "$WORK/int.out")
	if [ $rc = 130 ] && [ ! -e "$WORK/int-next" ] && gone "$(cat "$WORK/int-suite")" &&
	   grep -qx 'not ok 1 - analysis # interrupted' <<<"$out" &&
	   grep -qx 'not ok 2 - build # not run: interrupted' <<<"$out"; then
		t_ok "$name"
	else
		t_fail "$name" "exit $rc" "$out"
	fi
}

# Needs are checked before a suite starts: what the lab builds (kernels,
# guest, commands) fails the suite when missing, what the machine lacks
# (the network) skips it; either way with the reason and without running it.
test_run_all_needs()
{
	local sb rc=0 out name ran="touch \"$WORK/needs-ran-\$(basename \"\$0\")\"; echo '1 passed, 0 failed'"
	sb=$(sandbox run-all-needs)
	suite_stub "$sb" analysis "$ran" needs=network
	suite_stub "$sb" build "$ran" 'needs=cmd:sh cmd:bl-no-such-tool'
	suite_stub "$sb" patches "$ran" needs=kernels
	suite_stub "$sb" boot "$ran" 'needs=guest cmd:sh'
	out=$(BOUNCELAB_DEBIAN_MIRROR=http://127.0.0.1:9/debian \
		"$sb/tests/run-all.sh" analysis build patches boot 2>&1) || rc=$?
	name="run-all: unmet needs fail (kernels, guest, a command) or skip (network) the suite, with the reason"
	if [ $rc = 1 ] && [ -z "$(ls "$WORK" | grep needs-ran-)" ] &&
	   grep -qx 'ok 1 - analysis # SKIP needs network: the Debian mirror (http://127.0.0.1:9/debian) cannot be reached' <<<"$out" &&
	   grep -qx 'not ok 2 - build # needs cmd:bl-no-such-tool: no command bl-no-such-tool (make deps)' <<<"$out" &&
	   grep -q '^not ok 3 - patches # needs kernels: no bzImage in .* for: pre pre-fixed post (make kernels)$' <<<"$out" &&
	   grep -q '^not ok 4 - boot # needs guest: no guest initramfs in .* (make guest)$' <<<"$out" &&
	   [ "$(tail -n 1 <<<"$out")" = "0 passed, 3 failed, 1 skipped" ]; then
		t_ok "$name"
	else
		t_fail "$name" "exit $rc" "$out"
	fi
}

# Every suite has its settings, and run-all refuses settings it cannot
# apply: an unknown key, a timeout that is no number of seconds, an
# unknown need, a suite neither in ORDER nor default=no.
test_run_all_settings()
{
	local sb rc out listed n got want
	out=$("$BL_ROOT/tests/run-all.sh" --list 2>&1) && rc=0 || rc=$?
	listed=$(cut -f1 <<<"$out" | paste -sd ' ')
	n=$(ls "$BL_ROOT"/tests/*.settings | wc -l)
	if [ $rc = 0 ] && [ "$(wc -l <<<"$out")" = "$((n - 1))" ] &&
	   [[ " $listed " == *" guest "* && " $listed " == *" scripts-harness "* ]] &&
	   [[ " $listed " != *" versions "* ]] &&
	   ! grep -q 'timeout= ' <<<"$out"; then
		t_ok "run-all --list: every suite of make test has settings with a timeout ($listed)"
	else
		t_fail "run-all --list: every suite of make test has settings with a timeout" "exit $rc" "$out"
	fi
	out=$("$BL_ROOT/tests/run-all.sh" --list scripts 2>&1) && rc=0 || rc=$?
	got=$(cut -f1 <<<"$out" | sort | paste -sd ' ')
	want=$(cd "$BL_ROOT/tests" && ls scripts-*.settings | sed 's/\.settings$//' | sort | paste -sd ' ')
	[ $rc = 0 ] && [ "$got" = "$want" ] &&
		t_ok "run-all: the group 'scripts' is every scripts-* suite" ||
		t_fail "run-all: the group 'scripts' is every scripts-* suite" "exit $rc" "$out" "want: $want"

	sb=$(sandbox run-all-settings)
	check_refused()
	{
		local what=$1 msg=$2 rc=0 out
		out=$("$sb/tests/run-all.sh" analysis 2>&1) || rc=$?
		[ $rc != 0 ] && grep -qF -- "$msg" <<<"$out" && ! grep -q '^KTAP' <<<"$out" &&
			t_ok "run-all: $what is refused before any suite runs" ||
			t_fail "run-all: $what is refused before any suite runs" "exit $rc" "$out"
	}
	suite_stub "$sb" analysis 'echo "1 passed, 0 failed"' 'tiemout=5'
	check_refused "an unknown setting" "analysis.settings:3: unknown setting 'tiemout'"
	suite_stub "$sb" analysis 'echo "1 passed, 0 failed"'
	sed -i 's/^timeout=.*/timeout=5m/' "$sb/tests/analysis.settings"
	check_refused "a timeout that is not seconds" "timeout wants seconds, not '5m'"
	suite_stub "$sb" analysis 'echo "1 passed, 0 failed"' needs=kvm
	check_refused "an unknown need" "unknown need 'kvm'"
	suite_stub "$sb" analysis 'echo "1 passed, 0 failed"'
	suite_stub "$sb" extra 'echo "1 passed, 0 failed"'
	check_refused "a suite missing from ORDER" "suite 'extra' is not in run-all.sh's ORDER"
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

# make test installs what its suites need, compare-test's sshd
# (openssh-server) included: the package lists make test's deps step asks
# for, in a sandbox whose bl_deps_install only records them.
test_make_test_deps()
{
	local sb name="make test installs the suites' packages too (openssh-server)"
	sb=$(sandbox make-test-deps)
	echo 'bl_deps_install() { echo "$*" >>"$BL_ROOT/DEPS"; }' >>"$sb/lib/deps.sh"
	make -s -C "$sb" test-deps >/dev/null 2>&1
	if make -n -C "$sb" test 2>/dev/null | grep -x './run.sh deps --test' >/dev/null &&
	   grep -qw openssh-server "$sb/DEPS" && grep -qw qemu-system-x86 "$sb/DEPS"; then
		t_ok "$name"
	else
		t_fail "$name" "make -n test: $(make -n -C "$sb" test 2>&1 | head -n 3)" \
			"asked for: $(cat "$sb/DEPS" 2>&1)"
	fi
}

t_plan 22
test_run_all_exit_code
test_harness
test_run_all_skipped
test_run_all_timeout
test_run_all_interrupt
test_run_all_needs
test_run_all_settings
test_checkpatch_crash
test_make_test_deps
t_summary
