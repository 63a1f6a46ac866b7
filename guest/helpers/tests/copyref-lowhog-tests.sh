# SPDX-License-Identifier: GPL-2.0
#
# Host-run unit tests for copyref and lowhog.  Sourced by run-tests.sh,
# after its own tests: uses its BIN, FIX, TMP, BG_PIDS, run_test, expect,
# wait_for and bad_args.

COPYREF=$BIN/copyref

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
	local rc=0

	bad_usage "$COPYREF" -n 0 || rc=1
	bad_usage "$COPYREF" -n junk || rc=1
	bad_usage "$COPYREF" -n -3 || rc=1
	bad_usage "$COPYREF" -n 5x || rc=1
	bad_usage "$COPYREF" -n 100001 || rc=1
	bad_usage "$COPYREF" -n || rc=1
	bad_usage "$COPYREF" -q || rc=1
	bad_usage "$COPYREF" extra || rc=1
	return $rc
}

for t in \
	"copyref prints every key, positive values:t_cr_keys" \
	"copyref p10 <= median <= p90, 64k above 4k:t_cr_order" \
	"copyref default run is quick:t_cr_quick" \
	"copyref bad arguments exit 2:t_cr_bad_args"; do
	run_test "${t%:*}" "${t##*:}"
done
