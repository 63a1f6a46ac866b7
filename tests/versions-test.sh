#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel bases other than the installed one (kernels/bases), over the
# network: each is fetched with kernels/fetch-base and checked (tarball,
# provenance.json, the .deb's sha256, a second fetch that does nothing),
# and the host's apt setup must come out of it byte for byte unchanged.
# Then each base's truth table, booted in the real guest (knobs on):
#
#   variant        expected
#   5.10/stock     bounces > 0 on usb-pio and ram-bounce, 0 on virtio and
#                  ram: bouncing worked before the inverted check (5.13);
#                  the integrity jobs say whether 5.10 corrupts sub-page
#                  writes too (measured, reported in the test's name)
#   6.1/stock      0 bounces anywhere: the inverted check
#   6.1/fixed      bounces > 0 on usb-pio and ram-bounce, 0 on virtio, ram
#   7.2/upstream   the usb disk is refused with upstream's message, no
#                  block_bio_bounce event, Bounce: 0 kB, no nr_bounce in
#                  /proc/vmstat, the scsi_debug knob says it cannot bounce
#
# Not part of `make test` (it downloads ~430 MB and builds four kernels):
# `make test-versions` builds the kernels first, then runs
#
#   tests/run-all.sh versions     or     tests/versions-test.sh [BASE...]
#
# It fetches into the real cache ($BOUNCELAB_CACHE), so later builds of
# those bases reuse what it fetched; a base already there is only checked.
# Point BOUNCELAB_CACHE at an empty folder to test a cold fetch. BOUNCELAB_PIN
# applies as everywhere.
#
# To add a test: a function that prints exactly one result line (t_ok,
# t_fail or t_skip), named in PER_BASE (run once per base, in order, after
# the fetch) or in AFTER (run once, after every base); the plan follows.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
. "$BL_ROOT/lib/bases.sh"
. "$BL_ROOT/lib/variants.sh"
. "$BL_ROOT/lib/lab.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The truth tables' boots are kept, like guest-test's.
RUNS=$BL_CACHE/versions-test/$(date +%Y%m%d-%H%M%S)-$$
# (WV, I512, IBUF, OCC, REFUSAL: guest-lib.sh's)
. "$BL_ROOT/tests/guest-lib.sh"

# What must not change on the host whatever a fetch does: every file under
# /etc/apt (names, kinds, contents) and dpkg's foreign architectures.
host_apt_state()
{
	find /etc/apt -printf '%p %y %m %l\n' 2>&1 | sort
	find /etc/apt -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum 2>&1
	dpkg --print-foreign-architectures 2>&1
}

# fetched BASE: true when test_fetch got BASE's tarball (the later tests of
# a base that did not fetch are skipped, not failed again).
declare -A FETCHED=()
fetched()
{
	[ -n "${FETCHED[$1]:-}" ]
}

# --- per base ----------------------------------------------------------------

test_fetch()
{
	local base=$1 start secs out rc=0 t
	t=$(bl_base_fetch_dir "$base")/usr/src/$(bl_base_package "$base").tar.xz
	start=$(bl_now)
	out=$("$BL_ROOT/kernels/fetch-base" "$base" 2>"$WORK/fetch-$base.err") || rc=$?
	secs=$(( $(bl_now) - start ))
	# (an xz stream's magic bytes: testing all of it would cost a minute)
	if [ $rc = 0 ] && [ "$out" = "$t" ] &&
	   [ "$(head -c 6 "$t" | od -An -tx1 | tr -d ' \n')" = fd377a585a00 ]; then
		FETCHED[$base]=1
		t_ok "fetch $base: $(bl_base_package "$base") $(bl_base_version "$base"), tarball in the cache (${secs}s$(grep -q 'already fetched' "$WORK/fetch-$base.err" && echo ', already there'))"
	else
		t_fail "fetch $base: tarball in the cache" "exit $rc after ${secs}s" \
			"stdout: $out" "$(tail -n 8 "$WORK/fetch-$base.err")"
	fi
}

test_provenance()
{
	local base=$1 prov v
	fetched "$base" || { t_skip "fetch $base: provenance.json" "not fetched"; return; }
	prov=$(bl_base_fetch_dir "$base")/provenance.json
	v=$(bl_base_version "$base")
	if /usr/bin/python3 - "$prov" "$(bl_base_package "$base")" "$v" "$(bl_base_suite "$base")" <<-'EOF'
		import json, re, sys
		p = json.load(open(sys.argv[1]))
		assert (p["package"], p["version"], p["suite"]) == tuple(sys.argv[2:5]), p
		assert re.fullmatch(r"[0-9a-f]{64}", p["deb_sha256"]), p["deb_sha256"]
		assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["fetched_at"]), p
		assert p["deb"].startswith(p["package"] + "_"), p["deb"]
		EOF
	then
		t_ok "fetch $base: provenance.json names $v and a sha256"
	else
		t_fail "fetch $base: provenance.json names $v and a sha256" "$(cat "$prov" 2>&1)"
	fi
}

test_deb_sha256()
{
	local base=$1 prov deb want got
	fetched "$base" || { t_skip "fetch $base: the .deb matches its recorded sha256" "not fetched"; return; }
	prov=$(bl_base_fetch_dir "$base")/provenance.json
	deb=$BL_CACHE/debs/$(bl_base_prov "$prov" deb)
	want=$(bl_base_prov "$prov" deb_sha256)
	got=$(sha256sum <"$deb" 2>&1 | awk '{ print $1 }')
	[ -n "$want" ] && [ "$got" = "$want" ] &&
	   [ "$(dpkg-deb -f "$deb" Version)" = "$(bl_base_version "$base")" ] &&
		t_ok "fetch $base: $(basename "$deb") matches its recorded sha256" ||
		t_fail "fetch $base: the .deb matches its recorded sha256" \
			"$deb: $got" "provenance: $want"
}

test_fetch_again()
{
	local base=$1 out rc=0 start secs
	fetched "$base" || { t_skip "fetch $base again: nothing to do" "not fetched"; return; }
	start=$(bl_now)
	out=$("$BL_ROOT/kernels/fetch-base" "$base" 2>&1) || rc=$?
	secs=$(( $(bl_now) - start ))
	[ $rc = 0 ] && grep -q "already fetched" <<<"$out" && ! grep -q 'apt-get' <<<"$out" &&
	   [ $secs -le 5 ] &&
		t_ok "fetch $base again: nothing to do (${secs}s)" ||
		t_fail "fetch $base again: nothing to do" "exit $rc after ${secs}s" "$out"
}

# --- once --------------------------------------------------------------------

# A keyring without the archive's keys: apt must refuse the indexes, and
# nothing may be written. In a cache of its own, so the real one's lists
# stay as they are.
test_bad_signature()
{
	local base=${BASES[0]} out rc=0 left
	local bad=/usr/share/keyrings/debian-archive-removed-keys.gpg
	[ -f "$bad" ] || { t_skip "fetch with the wrong keyring fails" "no $bad"; return; }
	out=$(BOUNCELAB_CACHE=$WORK/badsig BL_DEBIAN_KEYRING=$bad \
		"$BL_ROOT/kernels/fetch-base" "$base" 2>&1) || rc=$?
	left=$(find "$WORK/badsig" \( -name '*.tar.xz' -o -name '*.deb' -o -name '*.tmp' \) 2>/dev/null)
	[ $rc = 1 ] && grep -q "signature does not verify against $bad" <<<"$out" &&
	   [ -z "$left" ] && [ ! -e "$WORK/badsig/debs" ] &&
		t_ok "fetch $base with the wrong keyring: signature error, nothing written" ||
		t_fail "fetch $base with the wrong keyring: signature error, nothing written" \
			"exit $rc" "$out" "left: $left"
}

test_host_apt_unchanged()
{
	local after
	after=$(host_apt_state)
	[ "$after" = "$APT_BEFORE" ] &&
		t_ok "the host's /etc/apt and dpkg's architectures are byte for byte unchanged" ||
		t_fail "the host's /etc/apt and dpkg's architectures are byte for byte unchanged" \
			"$(diff <(echo "$APT_BEFORE") <(echo "$after"))"
}

# --- truth tables --------------------------------------------------------------

# bad_of NAME JOB: "B of C blocks bad" of an integrity job, for a test name.
bad_of()
{
	local n
	n=$(bad_blocks "$1" "$2")
	set -- $n
	[ "$1" != none ] && echo "$1 of $2 blocks bad" || echo "not measured"
}

vmstat_has_no_nr_bounce()
{
	local f=$RUNS/$1/guest/proc-end/vmstat
	[ -s "$f" ] && ! grep -q '^nr_bounce ' "$f"
}

# Each truth table's number of results: 2 per row (row), 1 per rcheck.
declare -A TRUTH_RESULTS=([5.10]=12 [6.1]=17 [7.2]=10)

# A base's variants must be built (make test-versions builds them).
have_kernels()
{
	local v missing=''
	for v in "$@"; do
		[ -f "$BL_CACHE/kernels/$v/bzImage" ] || missing="$missing $v"
	done
	[ -z "$missing" ] && return 0
	echo "not built:$missing (make test-versions builds them)"
	return 1
}

# truth_skip BASE WHY: every result of BASE's table fails (its kernels
# are missing), as many as the plan counted for it.
truth_skip()
{
	local i
	for i in $(seq 1 "${TRUTH_RESULTS[$1]}"); do
		t_fail "truth table $1: kernel built" "$2"
	done
}

# bouncing_row NAME VARIANT JOBS: a kernel that bounces, knobs on: usb
# write+verify works (JOBS's first), bounce_checks, and one check per
# other job of JOBS: an integrity job measured (whether 5.10 corrupts
# sub-page writes is reported, not expected), 64 KiB QD8 writes holding 1
# to 128 bounce pages on ram-bounce and 0 on ram.
bouncing_row()
{
	local n=$1 i=0 job disk
	row $n "$2" none "$3"
	rcheck "$n: usb write+verify works" job_ok $n 1
	bounce_checks $n yes
	for job in $ROW_JOBS; do
		i=$((i + 1))
		disk=${job%%:*}
		case $job in
		*:"$I512") rcheck "$n: 512 B writes on $disk measured ($(bad_of $n $i))" check_bad $n $i ge 0 ;;
		*:"$IBUF") rcheck "$n: buffered 1 KiB writes on $disk measured ($(bad_of $n $i))" check_bad $n $i ge 0 ;;
		ram-bounce:"$OCC")
			rcheck "$n: exact count: 64 KiB QD8 writes hold 1 to 128 bounce pages (peak $(occupancy $n $i peak))" \
				check_occupancy $n $i peak gt 0 peak le 128 inflight eq 0 ;;
		ram:"$OCC") rcheck "$n: exact count: 0 pages on ram" check_occupancy $n $i allocated eq 0 ;;
		esac
	done
}

truth_5.10()
{
	local why
	why=$(have_kernels 5.10/stock) || { truth_skip 5.10 "$why"; return; }
	bouncing_row 5.10-stock-knobs-on 5.10/stock "usb-pio:$WV virtio:$WV ram-bounce:$WV ram:$WV usb-pio:$I512 ram-bounce:$I512 ram-bounce:$IBUF ram-bounce:$OCC ram:$OCC"
}

truth_6.1()
{
	local n why
	why=$(have_kernels 6.1/stock 6.1/fixed) || { truth_skip 6.1 "$why"; return; }
	n=6.1-stock-knobs-on
	row $n 6.1/stock none "usb-pio:$WV ram-bounce:$WV virtio:$WV ram-bounce:$OCC"
	rcheck "$n: usb write+verify works" job_ok $n 1
	bounce_checks $n no
	rcheck "$n: exact count: 0 pages taken, a 64-page pool" \
		check_occupancy $n 4 allocated eq 0 peak eq 0 pool_size eq 64

	bouncing_row 6.1-fixed-knobs-on 6.1/fixed "usb-pio:$WV ram-bounce:$WV virtio:$WV ram:$WV usb-pio:$I512 ram-bounce:$I512 ram-bounce:$OCC"
}

truth_7.2()
{
	local n=7.2-upstream-knobs-on why
	why=$(have_kernels 7.2/upstream) || { truth_skip 7.2 "$why"; return; }
	row $n 7.2/upstream none "usb-pio:$WV virtio:$WV ram-bounce:$WV"
	refused_checks $n
	rcheck "$n: Bounce: 0 kB" meminfo_bounce_zero $n
	rcheck "$n: no nr_bounce in /proc/vmstat" vmstat_has_no_nr_bounce $n
}

test_truth_table()
{
	local base=$1
	declare -F "truth_$base" >/dev/null ||
		{ t_fail "truth table $base" "no truth_$base in $0"; return; }
	mkdir -p "$RUNS"
	"truth_$base"
}

PER_BASE=(test_fetch test_provenance test_deb_sha256 test_fetch_again)
AFTER=(test_bad_signature test_host_apt_unchanged)

if [ $# -gt 0 ]; then
	BASES=("$@")
else
	mapfile -t BASES < <(for b in $(bl_bases); do
		bl_base_installed "$b" || echo "$b"; done)
fi
for b in "${BASES[@]}"; do
	bl_base_version "$b" >/dev/null || exit 1
	! bl_base_installed "$b" || bl_die "base $b is the installed one: nothing to fetch"
done
[ ${#BASES[@]} -gt 0 ] || bl_die "kernels/bases lists no base to fetch"

APT_BEFORE=$(host_apt_state)
ntruth=0
for b in "${BASES[@]}"; do
	ntruth=$(( ntruth + ${TRUTH_RESULTS[$b]:-1} ))
done
t_plan $(( ${#PER_BASE[@]} * ${#BASES[@]} + ${#AFTER[@]} + ntruth ))
for b in "${BASES[@]}"; do
	for t in "${PER_BASE[@]}"; do
		"$t" "$b"
	done
done
for t in "${AFTER[@]}"; do
	"$t"
done
for b in "${BASES[@]}"; do
	test_truth_table "$b"
done
t_summary
