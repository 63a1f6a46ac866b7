# SPDX-License-Identifier: GPL-2.0
#
# Host-run unit tests for copyref and lowhog.  Sourced by run-tests.sh,
# after its own tests: uses its BIN, FIX, TMP, run_test, expect, wait_for,
# start_job, stop_job and bad_args.
#
# A 64-bit host has no LowFree, and its page tables free nothing one
# could see there, so lowhog runs against meminfo fixtures: files, and a
# FIFO the test feeds one LowFree per read to play a kernel that follows.

COPYREF=$BIN/copyref
LOWHOG=$BIN/lowhog

# bad_usage PROG ARGS...: bad_args, and the exit status must be 2.
bad_usage()
{
	local rc

	bad_args "$@" || return 1
	timeout 5 "$@" >/dev/null 2>&1
	rc=$?
	expect "'$*' exit status" "$rc" 2
}

# ---- copyref ---------------------------------------------------------

CR_KEYS="copy_4k_ns_median copy_4k_ns_p10 copy_4k_ns_p90 copy_64k_ns_median copy_64k_ns_p10 copy_64k_ns_p90 batches copies_per_batch_4k copies_per_batch_64k clock"

cr_val() { sed -n "s/^$2=//p" "$1"; }

t_cr_keys()
{
	local k v rc=0

	timeout 10 "$COPYREF" -n 50 >"$TMP/cr.out" || { echo "exit $?"; return 1; }
	expect "keys in order" "$(sed 's/=.*//' "$TMP/cr.out" | tr '\n' ' ')" \
		"$CR_KEYS " || rc=1
	for k in $CR_KEYS; do
		v=$(cr_val "$TMP/cr.out" "$k")
		case $k in
		clock) expect "$k" "$v" CLOCK_MONOTONIC || rc=1 ;;
		batches) expect "$k" "$v" 50 || rc=1 ;;
		*)
			# a positive decimal: digits, one optional fraction
			if ! echo "$v" | grep -Eq '^[0-9]+(\.[0-9]+)?$' ||
				! awk -v v="$v" 'BEGIN { exit !(v > 0) }'; then
				echo "$k='$v', want a positive number"
				rc=1
			fi
			;;
		esac
	done
	return $rc
}

t_cr_order()
{
	local s rc=0

	timeout 10 "$COPYREF" >"$TMP/cr.out" || { echo "exit $?"; return 1; }
	for s in 4k 64k; do
		awk -v a="$(cr_val "$TMP/cr.out" copy_${s}_ns_p10)" \
			-v b="$(cr_val "$TMP/cr.out" copy_${s}_ns_median)" \
			-v c="$(cr_val "$TMP/cr.out" copy_${s}_ns_p90)" \
			'BEGIN { exit !(a <= b && b <= c) }' ||
			{ echo "$s: want p10 <= median <= p90"; rc=1; }
	done
	awk -v a="$(cr_val "$TMP/cr.out" copy_4k_ns_median)" \
		-v b="$(cr_val "$TMP/cr.out" copy_64k_ns_median)" \
		'BEGIN { exit !(b > a) }' ||
		{ echo "64k median not above 4k median"; rc=1; }
	[ $rc = 0 ] || cat "$TMP/cr.out"
	return $rc
}

# The default run is a quick per-boot step: well under a second here.
t_cr_quick()
{
	local t0 t1

	t0=$(date +%s%N)
	timeout 10 "$COPYREF" >/dev/null || { echo "exit $?"; return 1; }
	t1=$(date +%s%N)
	[ $(((t1 - t0) / 1000000)) -lt 1000 ] && return 0
	echo "took $(((t1 - t0) / 1000000)) ms"
	return 1
}

t_cr_bad_args()
{
	bad_each bad_usage "$COPYREF" -n 0 , -n junk , -n -3 , -n 5x \
		, -n 100001 , -n , -q , extra
}

# ---- lowhog ----------------------------------------------------------

HM612=$FIX/hm612/proc/meminfo	# LowFree 511468 kB, HighFree 945312 kB

# kids_of PID: pids whose parent is PID
kids_of()
{
	cat /proc/[0-9]*/stat 2>/dev/null |
		sed 's/^\([0-9]*\) .*) [A-Za-z] \([0-9]*\) .*/\1 \2/' |
		awk -v p="$1" '$2 == p { print $1 }'
}

# no_lowhog_left: no process runs $LOWHOG any more
no_lowhog_left()
{
	local e

	for e in /proc/[0-9]*/exe; do
		[ "$(readlink "$e" 2>/dev/null)" = "$LOWHOG" ] &&
			{ echo "left behind: ${e%/exe}"; return 1; }
	done
	return 0
}

lh_start()	# lh_start ARGS...: start lowhog in the background, set LH_PID
{
	rm -f "$TMP/lh.out" "$TMP/lh.err"
	start_job "$LOWHOG" "$@" >"$TMP/lh.out" 2>"$TMP/lh.err"
	LH_PID=$JOB_PID
}

lh_holding()	# lh_holding: wait for the holding line
{
	wait_for 10 grep -q '^holding' "$TMP/lh.out" && return 0
	echo "no 'holding' line; stdout, stderr:"
	cat "$TMP/lh.out" "$TMP/lh.err"
	return 1
}

lh_stop()	# lh_stop SIGNAL: signal lowhog, reap it, set LH_RC
{
	stop_job lowhog "$LH_PID" "$1" && LH_RC=$JOB_RC
}

# lh_freeze WANT: SIGUSR1, then lowhog's newest "frozen" line, a new one,
# must match WANT, an extended regular expression, whole (FROZEN: the
# line); a failure stops lowhog.
lh_freeze()
{
	local n
	n=$(grep -c '^frozen' "$TMP/lh.out")
	kill -USR1 "$LH_PID"
	wait_for 5 eval '[ "$(grep -c "^frozen" "$TMP/lh.out")" -gt '"$n"' ]' ||
		{ echo "no new 'frozen' line"; cat "$TMP/lh.out" "$TMP/lh.err"; lh_stop TERM; return 1; }
	FROZEN=$(grep '^frozen' "$TMP/lh.out" | tail -n 1)
	grep -Eqx "$1" <<<"$FROZEN" ||
		{ echo "frozen line: '$FROZEN', want '$1'"; lh_stop TERM; return 1; }
}

# lh_fail ARGS...: lowhog must exit 1 within 10 s, saying why
lh_fail()
{
	local rc

	timeout 10 "$LOWHOG" "$@" >"$TMP/lh.out" 2>"$TMP/lh.err"
	rc=$?
	expect "exit status" "$rc" 1 || { cat "$TMP/lh.err"; return 1; }
	grep -q '^lowhog: ' "$TMP/lh.err" ||
		{ echo "no error message"; return 1; }
	[ ! -s "$TMP/lh.out" ] || { echo "stdout: $(cat "$TMP/lh.out")"; return 1; }
}

t_lh_bad_args()
{
	bad_each bad_usage "$LOWHOG" , -t 2 , -l x , -l -1 , -l 10x \
		, -l 99999999999999999999 , -l 10 -t x , -l 10 -T 0 \
		, -l 10 -T x , -l 10 -m "" , -l 10 -q , -l , -l 10 extra
}

t_lh_no_lowfree()
{
	grep -v -e '^LowFree:' -e '^HighFree:' "$HM612" >"$TMP/nolow"
	lh_fail -l 100 -m "$TMP/nolow" || return 1
	grep -q 'no LowFree in .*nolow' "$TMP/lh.err" ||
		{ echo "stderr: $(cat "$TMP/lh.err")"; return 1; }
}

t_lh_no_meminfo()
{
	lh_fail -l 100 -m "$TMP/no/such/meminfo" &&
		grep -q 'no/such/meminfo' "$TMP/lh.err"
}

t_lh_dry()
{
	local out

	out=$(timeout 5 "$LOWHOG" -n -l 100 -m "$HM612") || return 1
	expect "stdout" "$out" \
		"would fill LowFree=511468 kB target=102400 kB HighFree=945312 kB tolerance=2048 kB pte_pages=102267 children=134"
}

# Already below the target: nothing to fill, hold until stopped.
lh_below()
{
	lh_start -l 600 -m "$HM612"
	lh_holding || return 1
	expect "stdout" "$(cat "$TMP/lh.out")" \
		"holding LowFree=511468 kB target=614400 kB HighFree=945312 kB children=0 pte_pages=0" ||
		return 1
	sleep 0.2
	kill -0 "$LH_PID" 2>/dev/null || { echo "exited while holding"; return 1; }
	lh_stop "$1" || return 1
	expect "exit status" "$LH_RC" 0
}

t_lh_below_term() { lh_below TERM; }
t_lh_below_int() { lh_below INT; }

# Within the tolerance counts as reached: 511468 kB <= 498 + 2 MiB.
t_lh_tolerance()
{
	lh_start -l 498 -t 2 -m "$HM612"
	lh_holding || return 1
	grep -q 'children=0 ' "$TMP/lh.out" || { cat "$TMP/lh.out"; return 1; }
	lh_stop TERM
}

# LowFree that never moves: give up after a few children, leave none.
t_lh_stall()
{
	local t0=$SECONDS n

	lh_fail -l 100 -m "$HM612" || return 1
	[ $((SECONDS - t0)) -le 5 ] || { echo "took $((SECONDS - t0)) s"; return 1; }
	grep -q 'page tables are not in lowmem' "$TMP/lh.err" ||
		{ echo "stderr: $(cat "$TMP/lh.err")"; return 1; }
	n=$(sed -n 's/.* over \([0-9]*\) children:.*/\1/p' "$TMP/lh.err")
	[ -n "$n" ] && [ "$n" -le 10 ] || { echo "gave up after '$n' children"; return 1; }
	no_lowhog_left
}

# lh_fifo: lowhog -l 4 on a FIFO that reads LowFree 10000 kB, then, once
# the first child exists, 6000 kB (<= 4 MiB + 2 MiB): one child holds.
# Sets LH_KID.
lh_fifo()
{
	local fifo=$TMP/meminfo.fifo

	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	lh_start -l 4 -m "$fifo"
	timeout 5 bash -c 'printf "LowFree: 10000 kB\nHighFree: 777 kB\n" >"$1"' _ "$fifo" ||
		{ echo "lowhog never read its meminfo"; return 1; }
	wait_for 5 eval 'LH_KID=$(kids_of $LH_PID); [ -n "$LH_KID" ]' ||
		{ echo "no child"; cat "$TMP/lh.err"; return 1; }
	timeout 5 bash -c 'printf "LowFree: 6000 kB\nHighFree: 777 kB\n" >"$1"' _ "$fifo" ||
		{ echo "lowhog did not re-read its meminfo"; return 1; }
	lh_holding
}

# The child really holds page tables: 768 touched 4 MiB spans, one each.
t_lh_child_holds()
{
	local pte

	lh_fifo || return 1
	expect "stdout" "$(cat "$TMP/lh.out")" \
		"holding LowFree=6000 kB target=4096 kB HighFree=777 kB children=1 pte_pages=768" ||
		{ lh_stop TERM; return 1; }
	pte=$(awk '$1 == "VmPTE:" { print $2 }' "/proc/$LH_KID/status")
	lh_stop TERM || return 1
	expect "exit status" "$LH_RC" 0 || return 1
	[ "${pte:-0}" -ge 3072 ] || { echo "child VmPTE ${pte}kB, want >= 3072kB"; return 1; }
	! kill -0 "$LH_KID" 2>/dev/null || { echo "child $LH_KID left running"; return 1; }
}

# SIGUSR1 freezes the regulation: a "frozen" line with the last LowFree,
# then nothing changes, though LowFree rises far above the target (a
# regulating lowhog adds a child within a second).
t_lh_freeze()
{
	local mi=$TMP/meminfo.freeze

	printf 'LowFree: 5000 kB\nHighFree: 777 kB\n' >"$mi"
	lh_start -l 4 -m "$mi"
	lh_holding || return 1
	lh_freeze "frozen LowFree=5000 kB target=4096 kB HighFree=777 kB children=0 pte_pages=0" ||
		return 1
	printf 'LowFree: 90000 kB\nHighFree: 777 kB\n' >"$mi"
	sleep 3
	[ -z "$(kids_of "$LH_PID")" ] ||
		{ echo "a frozen lowhog added children"; lh_stop TERM; return 1; }
	lh_stop TERM || return 1
	expect "exit status" "$LH_RC" 0
}

# SIGUSR1 with -b: LowFree 1096 kB below the target, outside a 256 kB
# band: the child unmaps 274 spans (a page table each) at a time, once a
# second while the reading stays out (a fixture does not follow), and
# the freeze waits for two readings in the band.
lh_kids_pte()	# lh_kids_pte: kB of page tables lowhog's children hold
{
	local k sum=0 v
	for k in $(kids_of "$LH_PID"); do
		v=$(awk '$1 == "VmPTE:" { print $2 }' "/proc/$k/status" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

t_lh_band_gives_back()
{
	local mi=$TMP/meminfo.band pte0 pages0 pages

	# the first reading through a FIFO, the rest from a file: a file
	# that said 10000 kB until the test saw a child let a fast lowhog
	# fork six and give up first
	rm -f "$TMP/band.fifo" && mkfifo "$TMP/band.fifo" || return 1
	ln -sfn "$TMP/band.fifo" "$TMP/band.link"
	lh_start -l 4 -t 2 -b 256 -m "$TMP/band.link"
	timeout 5 bash -c 'printf "LowFree: 10000 kB\nHighFree: 777 kB\n" >"$1"' _ "$TMP/band.fifo" ||
		{ echo "lowhog never read its meminfo"; return 1; }
	wait_for 5 eval '[ -n "$(kids_of $LH_PID)" ]' ||
		{ echo "no child"; cat "$TMP/lh.err"; return 1; }
	printf 'LowFree: 6000 kB\nHighFree: 777 kB\n' >"$mi"
	ln -sfn "$mi" "$TMP/band.link"
	# a reading already waiting on the FIFO gets the same
	timeout 1 bash -c 'printf "LowFree: 6000 kB\nHighFree: 777 kB\n" >"$1"' _ "$TMP/band.fifo"
	lh_holding || { lh_stop TERM; return 1; }
	pte0=$(lh_kids_pte)
	pages0=$(sed -n 's/^holding .* pte_pages=\([0-9]*\)$/\1/p' "$TMP/lh.out")
	printf 'LowFree: 3000 kB\nHighFree: 777 kB\n' >"$mi"
	kill -USR1 "$LH_PID"
	wait_for 5 eval '[ "$(lh_kids_pte)" -lt "$pte0" ]' ||
		{ echo "no page table given back: $pte0 kB held"; lh_stop TERM; return 1; }
	! grep -q '^frozen' "$TMP/lh.out" ||
		{ echo "froze outside the band: $(grep '^frozen' "$TMP/lh.out")"; lh_stop TERM; return 1; }
	printf 'LowFree: 4100 kB\nHighFree: 777 kB\n' >"$mi"
	wait_for 5 grep -q '^frozen' "$TMP/lh.out" ||
		{ echo "no 'frozen' line"; cat "$TMP/lh.out" "$TMP/lh.err"; lh_stop TERM; return 1; }
	pages=$(sed -n 's/^frozen LowFree=4100 kB target=4096 kB HighFree=777 kB children=[0-9]* pte_pages=\([0-9]*\)$/\1/p' "$TMP/lh.out")
	[ -n "$pages" ] && [ -n "$pages0" ] && [ "$pages" -lt "$pages0" ] &&
		[ $(( (pages0 - pages) % 274 )) = 0 ] ||
		{ echo "holding with ${pages0:-?} page tables, then $(grep '^frozen' "$TMP/lh.out"); want k * 274 fewer"; lh_stop TERM; return 1; }
	lh_stop TERM || return 1
	expect "exit status" "$LH_RC" 0
}

t_lh_high_bad()
{
	local rc=0

	bad_usage "$LOWHOG" -l 10 -H x || rc=1
	bad_usage "$LOWHOG" -l 10 -H 0 || rc=1
	grep -v '^HighFree:' "$HM612" >"$TMP/nohigh"
	lh_fail -l 600 -H 20000 -m "$TMP/nohigh" || rc=1
	grep -q 'no HighFree in .*-H needs a HIGHMEM kernel' "$TMP/lh.err" ||
		{ echo "stderr: $(cat "$TMP/lh.err")"; rc=1; }
	return $rc
}

# lh_freeze_held MEMINFO HIGHFREE: freeze lowhog -l 4 -H 20000 at a
# reading of LowFree 4100 kB and HIGHFREE kB; HELD: what its reserve holds
lh_freeze_held()
{
	printf 'LowFree: 4100 kB\nHighFree: %s kB\n' "$2" >"$1"
	lh_freeze "frozen LowFree=4100 kB target=4096 kB HighFree=$2 kB high_target=20000 kB high_held=[0-9]+ kB children=0 pte_pages=0" ||
		return 1
	HELD=$(sed 's/.*high_held=\([0-9]*\).*/\1/' <<<"$FROZEN")
}

# lh_rss_kb: lowhog's own resident memory (its highmem reserve)
lh_rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$LH_PID/status"; }

# -H: HighFree 10000 kB over its target: the reserve takes half of it a
# second (the fixture does not follow: 5000, 7500, ... kB), then the
# reading is set in the band; thawed, HighFree 5000 kB under the target:
# it drops half of that a second. Each freeze says what the reserve holds.
t_lh_high_regulates()
{
	local mi=$TMP/meminfo.high rss0

	local held

	printf 'LowFree: 5000 kB\nHighFree: 30000 kB\n' >"$mi"
	lh_start -l 4 -H 20000 -b 256 -m "$mi"
	lh_holding || return 1
	rss0=$(lh_rss_kb)
	wait_for 5 eval '[ "$(lh_rss_kb)" -ge $((rss0 + 4500)) ]' ||
		{ echo "reserve not written: VmRSS $(lh_rss_kb) kB from $rss0"; lh_stop TERM; return 1; }
	lh_freeze_held "$mi" 20100 || return 1
	held=$HELD
	[ "$held" -ge 5000 ] && [ $((held % 5000)) = 0 ] ||
		{ echo "held $held kB: want steps of 5000 kB"; lh_stop TERM; return 1; }
	printf 'LowFree: 4100 kB\nHighFree: 15000 kB\n' >"$mi"
	kill -USR2 "$LH_PID"
	wait_for 5 eval '[ "$(lh_rss_kb)" -le $((rss0 + held - 2000)) ]' ||
		{ echo "reserve not dropped: VmRSS $(lh_rss_kb) kB from $rss0 + $held"; lh_stop TERM; return 1; }
	lh_freeze_held "$mi" 20000 || return 1
	[ "$HELD" -lt "$held" ] && [ $(((held - HELD) % 2500)) = 0 ] ||
		{ echo "held $HELD kB after $held: want steps of 2500 kB back"; lh_stop TERM; return 1; }
	lh_stop TERM || return 1
	expect "exit status" "$LH_RC" 0
}

t_lh_child_dies()
{
	lh_fifo || return 1
	kill -KILL "$LH_KID"
	stop_job lowhog "$LH_PID" - "its child died" || return 1
	expect "exit status" "$JOB_RC" 1 &&
		grep -q '^lowhog: a child died while holding' "$TMP/lh.err"
}

for t in \
	"copyref prints every key, positive values:t_cr_keys" \
	"copyref p10 <= median <= p90, 64k above 4k:t_cr_order" \
	"copyref default run is quick:t_cr_quick" \
	"copyref bad arguments exit 2:t_cr_bad_args" \
	"lowhog bad arguments exit 2:t_lh_bad_args" \
	"lowhog without LowFree fails clearly:t_lh_no_lowfree" \
	"lowhog missing meminfo fails clearly:t_lh_no_meminfo" \
	"lowhog -n prints the plan:t_lh_dry" \
	"lowhog below target holds, SIGTERM exits 0:t_lh_below_term" \
	"lowhog below target holds, SIGINT exits 0:t_lh_below_int" \
	"lowhog within tolerance holds with no child:t_lh_tolerance" \
	"lowhog gives up when LowFree does not drop:t_lh_stall" \
	"lowhog child holds 768 page tables, SIGTERM reaps it:t_lh_child_holds" \
	"lowhog fails when a child dies while holding:t_lh_child_dies" \
	"lowhog SIGUSR1 freezes it, SIGTERM still ends it:t_lh_freeze" \
	"lowhog -b gives page tables back, freezes in the band:t_lh_band_gives_back" \
	"lowhog -H bad usage, no HighFree:t_lh_high_bad" \
	"lowhog -H writes and drops its highmem reserve, freezes both zones:t_lh_high_regulates"; do
	run_test "${t%:*}" "${t##*:}"
done
