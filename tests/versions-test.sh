#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel bases other than the installed one (kernels/bases), over the
# network: each is fetched with kernels/fetch-base and checked (tarball,
# provenance.json, the .deb's sha256, a second fetch that does nothing),
# and the host's apt setup must come out of it byte for byte unchanged.
# Not part of `make test` (it downloads ~430 MB): run it as
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

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

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
t_plan $(( ${#PER_BASE[@]} * ${#BASES[@]} + ${#AFTER[@]} ))
for b in "${BASES[@]}"; do
	for t in "${PER_BASE[@]}"; do
		"$t" "$b"
	done
done
for t in "${AFTER[@]}"; do
	"$t"
done
t_summary
