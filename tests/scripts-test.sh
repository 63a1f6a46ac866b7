#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The host scripts' failure paths, each tested on a sandbox copy of the
# checkout with stubs in place of the heavy parts (a fake qemu-boot, a fake
# checkpatch.pl, fake suites, a fake guest fio): no kernels, no QEMU, no
# network, no root. It runs anywhere, before anything is built.
#
# Everything it writes is in a temporary folder, its cache included
# (BOUNCELAB_CACHE), so the real cache and results/ are never touched.
set -uo pipefail

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export BOUNCELAB_CACHE=$WORK/cache
unset BOUNCELAB_RESULTS

# sandbox NAME: a copy of the checkout (no .git, no results) in $WORK/NAME;
# prints its path.
sandbox()
{
	local d=$WORK/$1
	mkdir -p "$d"
	tar -C "$BL_ROOT" --exclude=./.git --exclude=./results -cf - . |
		tar -C "$d" -xf -
	mkdir -p "$d/results"
	echo "$d"
}

# stub FILE [BODY]: an executable bash script with BODY (stdin if none).
stub()
{
	mkdir -p "$(dirname "$1")"
	{
		echo '#!/usr/bin/env bash'
		if [ $# -gt 1 ]; then echo "$2"; else cat; fi
	} >"$1"
	chmod +x "$1"
}

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

test_run_all_exit_code
t_summary
