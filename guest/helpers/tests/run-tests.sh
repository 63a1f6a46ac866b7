#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-run unit tests for labmon, memhog, copyref, lowhog and insnmark.
# Usage: run-tests.sh BINDIR   (BINDIR holds host-native labmon and memhog)

set -u

BIN=$(cd "${1:?usage: run-tests.sh BINDIR}" && pwd) || exit 2
FIX=$(cd "$(dirname "$0")/fixtures" && pwd) || exit 2
HELPERS=$(cd "$(dirname "$0")/.." && pwd) || exit 2
LABMON=$BIN/labmon
MEMHOG=$BIN/memhog
TMP=$(mktemp -d "${TMPDIR:-/tmp}/helpers-test.XXXXXX") || exit 2
MAIN_PID=$BASHPID

HEADER="t_ms,MemFree,LowFree,HighFree,Cached,Dirty,Writeback,Bounce,nr_free_pages,nr_bounce,pgscan_kswapd,pgscan_direct,pgsteal_kswapd,pgsteal_direct,allocstall_normal,allocstall_movable,allocstall_dma,pgmajfault,some_avg10,some_total,full_avg10,full_total,bounce_hits"
NFIELDS=23

npass=0
nfail=0
ntest=0
BG_PIDS=()

cleanup()
{
	local p

	# a forked child killed before its exec() must not run this
	[ "$BASHPID" = "$MAIN_PID" ] || return
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# run_test NAME FUNC: FUNC returns 0 on success and explains any failure.
run_test()
{
	local name=$1

	shift
	ntest=$((ntest + 1))
	if "$@" >"$TMP/why" 2>&1; then
		npass=$((npass + 1))
		echo "ok $ntest - $name"
	else
		nfail=$((nfail + 1))
		echo "not ok $ntest - $name"
		sed 's/^/#   /' "$TMP/why"
	fi
}

# expect WHAT GOT WANT
expect()
{
	[ "$2" = "$3" ] && return 0
	echo "$1: got '$2', want '$3'"
	return 1
}

# cell CSV ROW NAME: value of column NAME in data row ROW (1 = first).
cell()
{
	awk -F, -v name="$3" -v row="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		NR == row + 1 { if (c) print $c; else print "NO-COLUMN"; exit }
	' "$1"
}

# expect_cells CSV ROW NAME=VALUE...
expect_cells()
{
	local csv=$1 row=$2 kv rc=0

	shift 2
	for kv in "$@"; do
		expect "row $row ${kv%%=*}" "$(cell "$csv" "$row" "${kv%%=*}")" \
			"${kv#*=}" || rc=1
	done
	return $rc
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for()
{
	local end=$((SECONDS + $1))

	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# start_job CMD...: CMD in the background (redirect the call to redirect
# it); JOB_PID is its pid, killed on exit if it still runs.
start_job()
{
	"$@" &
	JOB_PID=$!
	BG_PIDS+=("$JOB_PID")
}

# stop_job NAME PID SIGNAL [AFTER]: send SIGNAL to PID, a job of this
# shell ("-": none, it is to end by itself AFTER something), wait up to
# 5 s for it to end and reap it: JOB_RC is its exit status.
stop_job()
{
	[ "$3" = - ] || kill -"$3" "$2" 2>/dev/null
	wait_for 5 eval "! kill -0 $2 2>/dev/null" ||
		{ echo "$1 still running 5 s after ${4:-SIG$3}"; return 1; }
	wait "$2"
	JOB_RC=$?
}

data_rows() { echo $(($(wc -l <"$1") - 1)); }

# All lines newline-terminated and NFIELDS wide.
complete_lines()
{
	[ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
		awk -F, -v n=$NFIELDS 'NF != n { bad = 1 } END { exit bad }' "$1"
}

# ---- labmon ----------------------------------------------------------

lm_run()	# lm_run OUT ARGS...: labmon with a 5 s safety timeout
{
	local out=$1

	shift
	timeout 5 "$LABMON" -o "$out" "$@"
}

t_lm_header()
{
	lm_run "$TMP/h.csv" -i 10 -n 1 -r "$FIX/hm612" || return 1
	expect header "$(head -n1 "$TMP/h.csv")" "$HEADER"
}

t_lm_nsamples()
{
	lm_run "$TMP/n.csv" -i 10 -n 3 -r "$FIX/hm612" || return 1
	expect "data rows" "$(data_rows "$TMP/n.csv")" 3 &&
		expect "header lines" "$(grep -c '^t_ms,' "$TMP/n.csv")" 1 &&
		complete_lines "$TMP/n.csv"
}

t_lm_meminfo()
{
	lm_run "$TMP/m.csv" -i 10 -n 2 -r "$FIX/hm612" || return 1
	expect_cells "$TMP/m.csv" 2 MemFree=1456780 LowFree=511468 \
		HighFree=945312 Cached=352120 Dirty=2316 Writeback=148 Bounce=384
}

t_lm_vmstat()
{
	lm_run "$TMP/v.csv" -i 10 -n 1 -r "$FIX/hm612" || return 1
	expect_cells "$TMP/v.csv" 1 nr_free_pages=364195 nr_bounce=96 \
		pgscan_kswapd=20481 pgscan_direct=3072 pgsteal_kswapd=19876 \
		pgsteal_direct=2950 allocstall_normal=17 allocstall_movable=5 \
		allocstall_dma=2 pgmajfault=1234
}

t_lm_psi()
{
	lm_run "$TMP/p.csv" -i 10 -n 1 -r "$FIX/hm612" || return 1
	expect_cells "$TMP/p.csv" 1 some_avg10=1.25 some_total=123456 \
		full_avg10=0.75 full_total=65432
}

t_lm_hist_totals()
{
	lm_run "$TMP/b.csv" -i 10 -n 1 -r "$FIX/hm612" -b "$FIX/hist/bounce-hist" ||
		return 1
	expect_cells "$TMP/b.csv" 1 bounce_hits=42
}

# Hits counts dropped events too, so it must win over the per-key sum (42).
t_lm_hist_prefers_totals()
{
	lm_run "$TMP/b.csv" -i 10 -n 1 -b "$FIX/hist/bounce-hist-dropped" ||
		return 1
	expect_cells "$TMP/b.csv" 1 bounce_hits=50
}

# Without Totals, sum hitcounts; "sort=hitcount:" in the header is no entry.
t_lm_hist_sum()
{
	lm_run "$TMP/b.csv" -i 10 -n 1 -b "$FIX/hist/bounce-hist-nototals" ||
		return 1
	expect_cells "$TMP/b.csv" 1 bounce_hits=42
}

t_lm_hist_missing()
{
	: >"$TMP/empty-hist"
	lm_run "$TMP/b1.csv" -i 10 -n 1 -b "$TMP/no-such-hist" || return 1
	lm_run "$TMP/b2.csv" -i 10 -n 1 -b "$TMP/empty-hist" || return 1
	expect_cells "$TMP/b1.csv" 1 bounce_hits= &&
		expect_cells "$TMP/b2.csv" 1 bounce_hits=
}

t_lm_no_bounce_no_psi()
{
	lm_run "$TMP/o.csv" -i 10 -n 2 -r "$FIX/nobounce" || return 1
	expect_cells "$TMP/o.csv" 2 nr_bounce= some_avg10= some_total= \
		full_avg10= full_total= bounce_hits=
}

# The kernel's hard-wired "Bounce: 0 kB" without NR_BOUNCE is no measurement.
t_lm_fake_bounce_zero()
{
	grep -q '^Bounce: *0 kB' "$FIX/nobounce/proc/meminfo" ||
		{ echo "fixture lost its Bounce: 0 line"; return 1; }
	lm_run "$TMP/o.csv" -i 10 -n 1 -r "$FIX/nobounce" || return 1
	expect_cells "$TMP/o.csv" 1 Bounce=
}

t_lm_no_bounce_rest()
{
	lm_run "$TMP/o.csv" -i 10 -n 1 -r "$FIX/nobounce/" || return 1
	expect_cells "$TMP/o.csv" 1 MemFree=804468 LowFree=304468 \
		HighFree=500000 nr_free_pages=201117 pgscan_kswapd=555 \
		pgmajfault=4321 allocstall_dma=2
}

t_lm_empty_root()
{
	local want

	mkdir -p "$TMP/emptyroot"
	lm_run "$TMP/e.csv" -i 10 -n 1 -r "$TMP/emptyroot" || return 1
	want=$(printf ',%.0s' $(seq 2 $NFIELDS))
	expect "row" "$(sed -n 2p "$TMP/e.csv" | sed 's/^[0-9]*//')" "$want"
}

# Whole data rows (t_ms aside), as labmon wrote them before its columns
# got names: the column table must not change the output.
t_lm_rows_unchanged()
{
	lm_run "$TMP/g1.csv" -i 10 -n 1 -r "$FIX/hm612" -b "$FIX/hist/bounce-hist" ||
		return 1
	lm_run "$TMP/g2.csv" -i 10 -n 1 -r "$FIX/nobounce" || return 1
	expect "hm612 row" "$(sed -n 2p "$TMP/g1.csv" | cut -d, -f2-)" \
		1456780,511468,945312,352120,2316,148,384,364195,96,20481,3072,19876,2950,17,5,2,1234,1.25,123456,0.75,65432,42 &&
		expect "nobounce row" "$(sed -n 2p "$TMP/g2.csv" | cut -d, -f2-)" \
		804468,304468,500000,352120,2316,148,,201117,,555,3072,19876,2950,17,5,2,4321,,,,,
}

# Code names the columns it means (cells[COL_BOUNCE]): no column index as a
# bare number, which silently points elsewhere once a column is added.
t_lm_named_columns()
{
	local src=$HELPERS/labmon.c bad

	bad=$(grep -nE '#define[[:space:]]+COL_[A-Za-z0-9_]+[[:space:]]+[0-9]+|(cells|cols)\[[0-9]+\]' "$src")
	[ -z "$bad" ] || { echo "numeric column indices:"; echo "$bad"; return 1; }
	grep -q '^enum col_id' "$src" || { echo "no enum col_id of named columns"; return 1; }
}

# Keys match whole names: WritebackTmp is not Writeback, and so on.
t_lm_whole_keys()
{
	mkdir -p "$TMP/keys/proc"
	printf '%s\n' 'SwapCached:  999 kB' 'Cached:  111 kB' \
		'WritebackTmp:  77 kB' 'Writeback:  5 kB' 'Dirty:' \
		>"$TMP/keys/proc/meminfo"
	printf '%s\n' 'pgscan_direct_throttle 7' 'pgscan_direct 3' \
		'nr_bounce_x 9' 'nr_bounce 4' 'pgmajfault x' \
		>"$TMP/keys/proc/vmstat"
	lm_run "$TMP/k.csv" -i 10 -n 1 -r "$TMP/keys" || return 1
	expect_cells "$TMP/k.csv" 1 Cached=111 Writeback=5 pgscan_direct=3 \
		nr_bounce=4 Dirty= pgmajfault=
}

t_lm_timing()
{
	local t1 t4

	lm_run "$TMP/t.csv" -i 50 -n 4 -r "$FIX/hm612" || return 1
	t1=$(cell "$TMP/t.csv" 1 t_ms)
	t4=$(cell "$TMP/t.csv" 4 t_ms)
	[ "$t1" -lt 50 ] && [ "$t4" -ge 150 ] && [ "$t4" -lt 2000 ] && return 0
	echo "t_ms first=$t1 last=$t4, want first < 50 and 150 <= last < 2000"
	return 1
}

lm_background()	# lm_background OUT: start an endless labmon, set LM_PID
{
	rm -f "$1"
	start_job "$LABMON" -i 20 -o "$1" -r "$FIX/hm612" -b "$FIX/hist/bounce-hist"
	LM_PID=$JOB_PID
}

# Lines must reach the file while labmon still runs (the guest may die).
t_lm_flushes()
{
	local rc=0

	lm_background "$TMP/f.csv"
	wait_for 5 eval '[ "$(data_rows "$TMP/f.csv" 2>/dev/null || echo 0)" -ge 2 ]' ||
		{ echo "fewer than 2 rows after 5 s"; rc=1; }
	kill -0 "$LM_PID" 2>/dev/null || { echo "labmon exited early"; rc=1; }
	kill -KILL "$LM_PID" 2>/dev/null
	wait "$LM_PID" 2>/dev/null
	[ $rc = 0 ] && complete_lines "$TMP/f.csv"
}

# stop_test SIGNAL: labmon ends with 0 and a complete last line.
lm_stop()
{
	lm_background "$TMP/s.csv"
	wait_for 5 eval '[ "$(data_rows "$TMP/s.csv" 2>/dev/null || echo 0)" -ge 3 ]' ||
		{ echo "fewer than 3 rows after 5 s"; return 1; }
	stop_job labmon "$LM_PID" "$1" || return 1
	expect "exit status" "$JOB_RC" 0 && complete_lines "$TMP/s.csv" &&
		expect_cells "$TMP/s.csv" "$(data_rows "$TMP/s.csv")" bounce_hits=42
}

t_lm_sigterm() { lm_stop TERM; }
t_lm_sigint() { lm_stop INT; }

t_lm_stdout()
{
	local out

	out=$(timeout 5 "$LABMON" -i 10 -n 2 -o - -r "$FIX/hm612") || return 1
	expect "stdout lines" "$(echo "$out" | wc -l)" 3 &&
		expect "stdout header" "$(echo "$out" | head -n1)" "$HEADER"
}

# bad_args PROG ARGS...: must fail and say why on stderr.
bad_args()
{
	local rc

	rm -f "$TMP/bad.err"
	timeout 5 "$@" >/dev/null 2>"$TMP/bad.err"
	rc=$?
	if [ $rc = 0 ] || [ $rc = 124 ]; then
		echo "'$*' exited $rc, want a failure"
		return 1
	fi
	grep -q "^$(basename "$1"): " "$TMP/bad.err" && return 0
	echo "'$*': no error message, stderr was:"
	cat "$TMP/bad.err"
	return 1
}

# bad_each CHECK PROG ARGS [, ARGS]...: CHECK (bad_args, bad_usage) of
# PROG with each list of ARGS, the lists parted by a lone ","; fails when
# any does.
bad_each()
{
	local check=$1 prog=$2 a rc=0 args=()

	shift 2
	for a in "$@" ,; do
		if [ "$a" = , ]; then
			"$check" "$prog" "${args[@]}" || rc=1
			args=()
		else
			args+=("$a")
		fi
	done
	return $rc
}

t_lm_bad_args()
{
	local o=$TMP/bad.csv rc=0

	bad_each bad_args "$LABMON" , -o "$o" , -i 10 , -i 0 -o "$o" \
		, -i abc -o "$o" , -i -5 -o "$o" , -i 10x -o "$o" \
		, -i 99999999999999999999 -o "$o" , -i 10 -o "$o" -n 0 \
		, -i 10 -o "$o" -q , -i 10 -o "$o" extra || rc=1
	[ -e "$o" ] && { echo "bad arguments still created $o"; rc=1; }
	return $rc
}

t_lm_unwritable()
{
	bad_args "$LABMON" -i 10 -n 1 -o "$TMP/no/such/dir/x.csv" &&
		grep -q 'x.csv' "$TMP/bad.err"
}

# ---- memhog ----------------------------------------------------------

mh_start()	# mh_start ARGS...: start memhog, wait for its line, set MH_PID
{
	rm -f "$TMP/mh.out"
	start_job "$MEMHOG" "$@" >"$TMP/mh.out" 2>&1
	MH_PID=$JOB_PID
	wait_for 10 grep -q '^memhog: holding' "$TMP/mh.out" ||
		{ echo "no 'holding' line; output:"; cat "$TMP/mh.out"; return 1; }
}

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

mh_stop()	# mh_stop SIGNAL: signal memhog, reap it, set MH_RC
{
	stop_job memhog "$MH_PID" "$1" && MH_RC=$JOB_RC
}

t_mh_line()
{
	local out

	mh_start -m 8 || return 1
	out=$(cat "$TMP/mh.out")
	mh_stop TERM
	expect "stdout" "$out" "memhog: holding 8 MiB"
}

# -m 9 must be resident 8 MiB more than -m 1: the pages are really touched.
# Compared on RssAnon, the anonymous part of VmRSS: the file-backed part
# jitters by tens of kB between two runs (fault-around on libc), the
# anonymous part by a stack page or two (ASLR), hence the 32 kB slack.
# VmRSS itself must be at least the 9 MiB held.
t_mh_rss()
{
	local anon1 anon9 rss9

	mh_start -m 1 || return 1
	anon1=$(status_kb "$MH_PID" RssAnon)
	mh_stop TERM
	mh_start -m 9 || return 1
	anon9=$(status_kb "$MH_PID" RssAnon)
	rss9=$(status_kb "$MH_PID" VmRSS)
	mh_stop TERM
	[ -n "$anon1" ] && [ -n "$anon9" ] && [ -n "$rss9" ] &&
		[ $((anon9 - anon1)) -ge $((8192 - 32)) ] && [ "$rss9" -ge 9216 ] && return 0
	echo "RssAnon -m 1: ${anon1}kB, -m 9: ${anon9}kB, VmRSS -m 9: ${rss9}kB;" \
		"want RssAnon +8192kB (-32kB slack) and VmRSS >= 9216kB"
	return 1
}

# Pages stay resident across re-touch periods.
t_mh_stays()
{
	local a b

	mh_start -m 8 -p 100 || return 1
	a=$(status_kb "$MH_PID" RssAnon)
	sleep 0.5
	b=$(status_kb "$MH_PID" RssAnon)
	mh_stop TERM
	[ "${a:-0}" -ge 8192 ] && [ "${b:-0}" -ge 8192 ] && return 0
	echo "RssAnon ${a}kB then ${b}kB, want >= 8192kB"
	return 1
}

# -p 0: hold without re-touching, so memhog burns no CPU beside fio. Its
# CPU time must not grow while it holds, and SIGTERM still stops it.
t_mh_hold_only()
{
	local t1 t2

	mh_start -m 8 -p 0 || return 1
	t1=$(awk '{ print $14 + $15 }' "/proc/$MH_PID/stat")
	sleep 0.5
	t2=$(awk '{ print $14 + $15 }' "/proc/$MH_PID/stat")
	[ "$(status_kb "$MH_PID" RssAnon)" -ge 8192 ] ||
		{ echo "RssAnon below 8192kB"; mh_stop TERM; return 1; }
	mh_stop TERM || return 1
	expect "exit status" "$MH_RC" 0 || return 1
	[ "$t2" -le $((t1 + 1)) ] && return 0
	echo "CPU ticks grew from $t1 to $t2 while holding"
	return 1
}

t_mh_sigterm()
{
	mh_start -m 4 -p 50 || return 1
	sleep 0.2
	mh_stop TERM || return 1
	expect "exit status" "$MH_RC" 0
}

t_mh_sigint()
{
	mh_start -m 4 || return 1
	mh_stop INT || return 1
	expect "exit status" "$MH_RC" 0
}

t_mh_timeout()
{
	local t0=$SECONDS rc

	timeout 10 "$MEMHOG" -m 4 -t 1 -p 100 >"$TMP/mh.out"
	rc=$?
	expect "exit status" "$rc" 0 || return 1
	expect "stdout" "$(cat "$TMP/mh.out")" "memhog: holding 4 MiB" || return 1
	[ $((SECONDS - t0)) -le 5 ] || { echo "took $((SECONDS - t0)) s"; return 1; }
}

t_mh_file()
{
	local f=$TMP/cache.dat size

	mh_start -m 2 -f "$f" -c 3 -p 50 || return 1
	size=$(stat -c %s "$f" 2>/dev/null)
	mh_stop TERM || return 1
	expect "file size" "$size" $((3 * 1024 * 1024)) &&
		expect "exit status" "$MH_RC" 0 &&
		{ [ ! -e "$f" ] || { echo "$f left behind"; return 1; }; }
}

t_mh_bad_args()
{
	bad_each bad_args "$MEMHOG" , -m 0 , -m abc , -m -4 , -m 4 -p -1 \
		, -m 4 -t x , -m 4 -c 2 , -m 4 -f "$TMP/x" , -m 4 -q \
		, -m 4 extra , -m 99999999999999999999999
}

t_mh_mmap_fails()
{
	local rc

	# a 64 MiB address-space limit makes a 256 MiB mmap fail
	(ulimit -v 65536 && exec timeout 5 "$MEMHOG" -m 256) \
		>"$TMP/mh.out" 2>"$TMP/mh.err"
	rc=$?
	[ $rc != 0 ] && [ $rc != 124 ] || { echo "exited $rc"; return 1; }
	grep -q '^memhog: mmap 256 MiB: ' "$TMP/mh.err" ||
		{ echo "stderr: $(cat "$TMP/mh.err")"; return 1; }
	[ ! -s "$TMP/mh.out" ] || { echo "claims to hold memory"; return 1; }
}

t_mh_bad_file()
{
	bad_args "$MEMHOG" -m 1 -f "$TMP/no/such/dir/f" -c 1 -t 1 &&
		grep -q 'no/such/dir/f' "$TMP/bad.err"
}

for t in \
	"labmon header:t_lm_header" \
	"labmon -n writes exactly N rows:t_lm_nsamples" \
	"labmon meminfo columns (6.12 HIGHMEM):t_lm_meminfo" \
	"labmon vmstat columns (6.12 HIGHMEM):t_lm_vmstat" \
	"labmon PSI columns:t_lm_psi" \
	"labmon bounce_hits from hist Totals:t_lm_hist_totals" \
	"labmon bounce_hits prefers Totals Hits over hitcount sum:t_lm_hist_prefers_totals" \
	"labmon bounce_hits sums hitcount without Totals:t_lm_hist_sum" \
	"labmon bounce_hits empty for missing/empty hist:t_lm_hist_missing" \
	"labmon empty cells without nr_bounce, PSI, -b:t_lm_no_bounce_no_psi" \
	"labmon blanks hard-wired Bounce 0 without nr_bounce:t_lm_fake_bounce_zero" \
	"labmon other columns intact without nr_bounce:t_lm_no_bounce_rest" \
	"labmon root without /proc gives all-empty cells:t_lm_empty_root" \
	"labmon matches whole key names only:t_lm_whole_keys" \
	"labmon rows unchanged by the named column table:t_lm_rows_unchanged" \
	"labmon names its columns, no numeric indices:t_lm_named_columns" \
	"labmon t_ms follows the interval:t_lm_timing" \
	"labmon flushes each line while running:t_lm_flushes" \
	"labmon SIGTERM: exit 0, complete last line:t_lm_sigterm" \
	"labmon SIGINT (background job): exit 0, complete last line:t_lm_sigint" \
	"labmon -o - writes to stdout:t_lm_stdout" \
	"labmon bad arguments fail:t_lm_bad_args" \
	"labmon unwritable output fails:t_lm_unwritable" \
	"memhog prints its holding line:t_mh_line" \
	"memhog resident memory grows by the held 8 MiB:t_mh_rss" \
	"memhog pages stay resident:t_mh_stays" \
	"memhog -p 0 holds without CPU, stops on SIGTERM:t_mh_hold_only" \
	"memhog SIGTERM: exit 0:t_mh_sigterm" \
	"memhog SIGINT (background job): exit 0:t_mh_sigint" \
	"memhog -t exits 0 on time:t_mh_timeout" \
	"memhog -f/-c holds a page-cache file, removes it:t_mh_file" \
	"memhog bad arguments fail:t_mh_bad_args" \
	"memhog failed mmap fails clearly:t_mh_mmap_fails" \
	"memhog unwritable -f fails:t_mh_bad_file"; do
	run_test "${t%:*}" "${t##*:}"
done

. "$(dirname "$0")/copyref-lowhog-tests.sh"
. "$(dirname "$0")/insnmark-tests.sh"

echo "$npass passed, $nfail failed"
[ $nfail = 0 ]
