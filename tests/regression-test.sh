#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The regression tracker (./run.sh history --check) on a regression
# planted where the lab can see it, as LKP's bisect robot is judged on the
# regressions it catches:
#   - "planted" is pre-fixed plus kernels/patches/6.12/test-planted/: a
#     function of its own in the bounce completion that runs a known
#     number of instructions a bounced bio (2 * BOUNCE_PLANTED_LOOPS + 2,
#     by construction; 1.5 % of a 4 KiB read). It is a variant of this
#     test's own table, never of kernels/variants: no default build, no
#     run, no history of the user's sees it;
#   - one boot each under the insn clock, of one job on ram-bounce: two
#     runs of pre-fixed, then one of planted, filed in a scratch history
#     as pre-fixed (history add --as);
#   - the unchanged rebuild: check exits 0; the planted one: check exits 3,
#     the moved metric is decided exactly (same seeds), and the top symbol
#     under it is the planted function, its instructions an I/O within 1 %
#     of what was planted.
# Kernels and the guest must be built (make test does both first); the
# planted kernel is built here (it differs from pre-fixed in one file,
# so through ccache it takes a minute or two).
set -uo pipefail

. "$(dirname "$0")/lib.sh"

TAG=test-regression-$(date +%Y%m%d-%H%M%S)-$$
# The tests' runs stay out of the user's results/ (and history).
export BOUNCELAB_RESULTS=$BL_CACHE/test-results
RESULTS=$BOUNCELAB_RESULTS
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$RESULTS/$TAG"-*' EXIT
PATCH=$(ls "$BL_ROOT"/kernels/patches/6.12/test-planted/*.patch)
# The variants table with the planted kernel (tests/regression.variants).
VARIANTS=$WORK/variants
t_variants_table "$VARIANTS"
# One exact job: a boot of about 15 s.
ONE=(--disks ram-bounce@insn --reps 1 --exact-reps 1 --jobs lat-randread-4k-qd1
	--probe-jobs none --integrity-jobs none --pressure-disks none --sweep-disks none)
HIST=$WORK/history

# What the patch plants, in instructions a bounced bio.
planted_insns()
{
	local loops
	loops=$(sed -n 's/^+#define BOUNCE_PLANTED_LOOPS \([0-9][0-9]*\)$/\1/p' "$PATCH")
	[ -n "$loops" ] && echo $((2 * loops + 2))
}

# run_one NAME VARIANT: one boot of VARIANT as run $TAG-NAME.
run_one()
{
	BOUNCELAB_VARIANTS_FILE=$VARIANTS "$BL_ROOT/run.sh" compare --variants "$2" "${ONE[@]}" \
		--run-id "$TAG-$1" >"$WORK/$1.out" 2>&1
}

# The symbol lines check prints under a moved metric: "NAME (part): DELTA".
top_symbol_ok()
{
	local want=$1 out=$2 line sym delta
	line=$(grep -A2 '^history:   where it went' "$out" | sed -n 2p)
	sym=$(sed -n 's/^history: *\([^ ]*\) .*/\1/p' <<<"$line")
	delta=$(sed -n 's/^history: *[^ ]* ([^)]*): \([-+0-9.,]*\).*/\1/p' <<<"$line" | tr -d ,+)
	echo "top symbol: $line"
	[ "$sym" = bounce_end_io_planted ] &&
		awk -v d="$delta" -v w="$want" 'BEGIN { e = d / w - 1; exit !(e <= 0.01 && e >= -0.01) }'
}

t_plan 7

want=$(planted_insns)
if BOUNCELAB_VARIANTS_FILE=$VARIANTS "$BL_ROOT/run.sh" build planted >"$WORK/build.out" 2>&1 &&
	[ -n "$want" ]; then
	t_ok "the planted kernel builds (pre-fixed + $(basename "$PATCH"): $want instructions a bounced bio)"
else
	t_fail "the planted kernel builds" "$(tail -n 15 "$WORK/build.out")"
	for n in 1 2 3 4 5 6; do t_skip "regression check $n" "no planted kernel"; done
	t_summary
	exit
fi

rc=0
run_one a pre-fixed && run_one b pre-fixed && run_one c planted || rc=1
if [ $rc = 0 ]; then
	t_ok "one boot each: pre-fixed, pre-fixed again, planted"
else
	t_fail "one boot each: pre-fixed, pre-fixed again, planted" \
		"$(tail -n 15 "$WORK"/[abc].out)"
fi

history()
{
	"$BL_ROOT/bench/history" --history-dir "$HIST" "$@"
}

rc=0
history add "$RESULTS/$TAG-a" >/dev/null && history add "$RESULTS/$TAG-b" >/dev/null &&
	history check >"$WORK/check-b.out" 2>&1 || rc=$?
t_check "unchanged pre-fixed rebuilt and booted again: check exits 0 (it exited $rc)" \
	bash -c "[ $rc = 0 ] && grep -q 'no headline metric moved' '$WORK/check-b.out'"

rc=0
history add --as planted=pre-fixed "$RESULTS/$TAG-c" >/dev/null &&
	history check >"$WORK/check-c.out" 2>&1 || rc=$?
t_check "planted, filed as pre-fixed: check exits 3 (it exited $rc)" \
	bash -c "[ $rc = 3 ]"
t_check "the moved metric is pre-fixed's 4 KiB read IOPS on ram-bounce, decided exactly" \
	grep -q '^history: moved: read_iops lat-randread-4k-qd1 ram-bounce none, variant pre-fixed, filed from labels pre-fixed -> planted (.*exact: same seeds): .*slower' "$WORK/check-c.out"
t_check "the top symbol under it is the planted function, within 1 % of its $want instructions an I/O" \
	top_symbol_ok "$want" "$WORK/check-c.out"
t_check "the planted function runs once a 4 KiB read (one bounced bio), never before" \
	grep -q '^history:     bounce_end_io_planted (completion): +[0-9,]*, calls per I/O 0.00 -> 1.00$' "$WORK/check-c.out"

for f in check-b check-c; do sed 's/^/# /' "$WORK/$f.out"; done
t_summary
