#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Behaviour of kernels/build and run.sh around the builds:
#   - a second build with nothing changed is a no-op that takes seconds;
#   - each built variant has complete build metadata;
#   - an unknown variant and a patch that does not apply are refused with
#     a clear message naming the culprit and a non-zero exit;
#   - run.sh refuses unknown commands.
# Kernels must be built already (make test builds them first).
set -uo pipefail

. "$(dirname "$0")/lib.sh"
. "$BL_ROOT/lib/variants.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$BL_CACHE/kernels/bl-test-broken"' EXIT

test_rebuild_is_noop()
{
	local start secs n
	start=$(bl_now)
	"$BL_ROOT/kernels/build" >"$WORK/rebuild.log" 2>&1 ||
		{ t_fail "second build succeeds" "$(tail -n 5 "$WORK/rebuild.log")"; return; }
	secs=$(( $(bl_now) - start ))
	n=$(grep -c 'up to date' "$WORK/rebuild.log")
	if [ "$n" = "$(bl_variants | wc -l)" ] && [ "$secs" -le 30 ]; then
		t_ok "second build: all $n variants up to date in ${secs}s"
	else
		t_fail "second build is a no-op within 30s" \
			"took ${secs}s, $n variants up to date" "$(cat "$WORK/rebuild.log")"
	fi
}

check_build_info()
{
	local f=$BL_CACHE/kernels/$1/build-info.json n
	python3 - "$f" "$1" "$(bl_variant_patches "$1" | wc -l)" <<-'PY'
	import json, sys
	info = json.load(open(sys.argv[1]))
	assert info["variant"] == sys.argv[2], info["variant"]
	assert info["source_version"], "no Debian source version"
	assert len(info["patches"]) == int(sys.argv[3]), "patch list length"
	for p in info["patches"]:
	    assert len(p["sha256"]) == 64, p
	for k in ("config_sha256", "bzimage_sha256", "compiler"):
	    assert info[k], k
	PY
}

test_metadata()
{
	local v
	for v in $(bl_variants); do
		t_check "$v: build-info.json complete" check_build_info "$v"
	done
}

# expect_refusal NAME PATTERN COMMAND...: COMMAND must fail and say PATTERN.
expect_refusal()
{
	local name=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$WORK/out" 2>&1 || rc=$?
	if [ $rc != 0 ] && grep -q -- "$pattern" "$WORK/out"; then
		t_ok "$name (exit $rc)"
	else
		t_fail "$name" "exit $rc, wanted a message matching '$pattern'" "$(tail -n 5 "$WORK/out")"
	fi
}

test_refusals()
{
	local patches=$WORK/patches
	expect_refusal "unknown variant refused" "unknown variant 'nosuch'" \
		"$BL_ROOT/kernels/build" nosuch
	expect_refusal "run.sh build: unknown variant refused" "unknown variant 'nosuch'" \
		"$BL_ROOT/run.sh" build nosuch
	expect_refusal "run.sh: unknown command refused" "unknown command 'frobnicate'" \
		"$BL_ROOT/run.sh" frobnicate

	# A stack whose second patch no longer applies: the lab patch twice.
	mkdir -p "$patches/broken"
	local first
	first=$(ls "$BL_PATCHES_DIR"/6.12/lab/*.patch | head -n 1)
	cp "$first" "$patches/broken/0001-lab.patch"
	cp "$first" "$patches/broken/0002-lab-again.patch"
	printf 'bl-test-broken broken\n' >"$WORK/variants"
	expect_refusal "patch that does not apply is named" \
		"patch does not apply: .*0002-lab-again.patch" \
		env BOUNCELAB_VARIANTS_FILE="$WORK/variants" \
		BOUNCELAB_PATCHES_DIR="$patches" "$BL_ROOT/kernels/build" bl-test-broken
}

# one no-op rebuild, one metadata check per variant, four refusals
t_plan $((1 + $(bl_variants | wc -l) + 4))
test_rebuild_is_noop
test_metadata
test_refusals
t_summary
