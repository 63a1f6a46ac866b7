#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the patch stacks and of the variant trees built by
# kernels/build:
#   - every stack applies in order to the pristine Debian tree, and so does
#     every variant's full stack;
#   - checkpatch.pl --strict is clean on every patch, except for the
#     message types written down in kernels/patches/checkpatch-exceptions;
#   - nothing of the removed bounce machinery is left in the post tree;
#   - the pre-fixed tree has the corrected check and pre the shipped one;
#   - the variants' final configs differ only where the patches require it.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
. "$BL_ROOT/lib/variants.sh"

KVER=$(bl_pkg_version "$BL_KSRC_PKG")
PRISTINE=$BL_CACHE/linux/linux-source-$KVER
EXCEPTIONS=$BL_PATCHES_DIR/checkpatch-exceptions
# The override exists for tests/scripts-test.sh, which feeds it a
# checkpatch.pl that crashes.
CHECKPATCH=${BL_CHECKPATCH:-$PRISTINE/scripts/checkpatch.pl}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Files a list of patches touches, as named on their "--- a/" lines.
touched_files()
{
	sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' "$@" | sort -u
}

# Apply the given patches in order to a copy of just the files they touch.
apply_in_order()
{
	local dir=$WORK/apply p f
	rm -rf "$dir"
	mkdir -p "$dir"
	for f in $(touched_files "$@"); do
		mkdir -p "$dir/$(dirname "$f")"
		cp "$PRISTINE/$f" "$dir/$f" ||
			{ echo "$f: not in the pristine tree"; return 1; }
	done
	for p in "$@"; do
		patch -d "$dir" -p1 --batch --forward -s <"$p" >"$WORK/patch.out" 2>&1 ||
			{ echo "does not apply: ${p#"$BL_ROOT"/}"; cat "$WORK/patch.out"; return 1; }
	done
}

# Stacks that come before stack $1 in the first variant that uses it: a
# stack that adapts another (lab-post) applies only on top of it.
stack_prerequisites()
{
	local v s
	for v in $(bl_variants); do
		case " $(bl_variant_stacks "$v") " in *" $1 "*) ;; *) continue ;; esac
		for s in $(bl_variant_stacks "$v"); do
			[ "$s" = "$1" ] && return 0
			echo "$s"
		done
	done
}

test_apply()
{
	local s v p pre patches before
	for s in $(ls "$BL_PATCHES_DIR"); do
		[ -d "$BL_PATCHES_DIR/$s" ] || continue
		mapfile -t patches < <(bl_stack_patches "$s")
		pre=$(stack_prerequisites "$s" | tr '\n' ' ')
		pre=${pre% }
		mapfile -t before < <(for p in $pre; do bl_stack_patches "$p"; done)
		t_check "stack $s (${#patches[@]} patches) applies in order to the pristine tree${pre:+ after $pre}" \
			apply_in_order "${before[@]}" "${patches[@]}"
	done
	for v in $(bl_variants); do
		mapfile -t patches < <(bl_variant_patches "$v")
		t_check "variant $v ($(bl_variant_stacks "$v")) applies in order" \
			apply_in_order "${patches[@]}"
	done
	[ "$(ls "$BL_PATCHES_DIR/series/"*.patch | wc -l)" = 7 ] &&
		t_ok "series has 7 patches" || t_fail "series has 7 patches"
}

# checkpatch message types of one patch that are not excused for it. A
# checkpatch.pl that crashes has checked nothing: with --terse it exits 0
# and prints nothing for a clean patch, or exits 1 after its "total:" line
# and the messages; any other exit, a 1 without that line or without a
# message we can read, or a perl error, fails the patch.
checkpatch_unexcused()
{
	local p=$1 name types allowed t rc=0
	name=${p#"$BL_PATCHES_DIR"/}
	perl "$CHECKPATCH" --strict --no-tree --show-types --terse "$p" \
		>"$WORK/checkpatch.out" 2>"$WORK/checkpatch.err" || rc=$?
	types=$(sed -nE 's/.*: (ERROR|WARNING|CHECK):([A-Z0-9_]+):.*/\2/p' \
		"$WORK/checkpatch.out" | sort -u)
	if [ $rc -gt 1 ] || grep -Eq ' at .* line [0-9]+' "$WORK/checkpatch.err" ||
	   { [ $rc = 1 ] && { [ -z "$types" ] ||
		! grep -Eq '^total: [0-9]+ errors, ' "$WORK/checkpatch.out"; }; }; then
		echo "$name: checkpatch.pl failed to run (exit $rc):"
		cat "$WORK/checkpatch.err" "$WORK/checkpatch.out" | tail -n 10
		return 1
	fi
	allowed=$(awk -v n="$name" '$1 == n { print $2 }' "$EXCEPTIONS")
	for t in $types; do
		grep -qx "$t" <<<"$allowed" ||
			{ echo "$name: checkpatch $t"; perl "$CHECKPATCH" \
				--strict --no-tree --show-types "$p" | grep -A3 "$t"; return 1; }
	done
}

test_checkpatch()
{
	local p
	for p in "$BL_PATCHES_DIR"/*/*.patch; do
		t_check "checkpatch --strict: ${p#"$BL_PATCHES_DIR"/}" checkpatch_unexcused "$p"
	done
}

# The removed machinery, as it is spelled in the source; none of it may be
# left anywhere in the post tree (blktrace's uapi value is kept on purpose,
# see series patch 6, so BLK_TA_BOUNCE is not in the list). The BOUNCE
# symbol itself stays in mm/Kconfig, as in 6.16, but nothing uses it.
REMOVED=(
	'BLK_FEAT_BOUNCE_HIGH' 'BIO_BOUNCED' 'blk_queue_bounce'
	'blk_queue_may_bounce' 'block_bio_bounce' 'blk_add_trace_bio_bounce'
	'CONFIG_BOUNCE' 'NR_BOUNCE' '"nr_bounce"' 'no_highmem ='
)

check_post_clean()
{
	local src=$BL_CACHE/kernels/post/src pat hits fail=0
	[ -d "$src" ] || { echo "no post tree; run './run.sh build post'"; return 1; }
	[ ! -e "$src/block/bounce.c" ] || { echo "block/bounce.c still there"; fail=1; }
	for pat in "${REMOVED[@]}"; do
		hits=$(grep -rnE --include='*.[ch]' --include='Kconfig*' \
			--include='Makefile' --include='*defconfig' -- "$pat" \
			"$src/block" "$src/include" "$src/kernel" "$src/mm" \
			"$src/drivers" "$src/fs" "$src/arch" 2>/dev/null | head -n 5)
		[ -z "$hits" ] || { echo "left in post: $pat"; echo "$hits"; fail=1; }
	done
	grep -q '__BLK_TA_BOUNCE,' "$src/include/uapi/linux/blktrace_api.h" ||
		{ echo "uapi __BLK_TA_BOUNCE was removed: that renumbers blktrace actions"; fail=1; }
	grep -q '^config BOUNCE$' "$src/mm/Kconfig" ||
		{ echo "config BOUNCE was removed from mm/Kconfig: 6.16 keeps it"; fail=1; }
	return $fail
}

check_bounce_check()
{
	local v=$1 want=$2 f=$BL_CACHE/kernels/$1/src/block/blk.h
	[ -f "$f" ] || { echo "no $v tree; run './run.sh build $v'"; return 1; }
	grep -qF "max_low_pfn $want max_pfn;" "$f" ||
		{ echo "$v: blk_queue_may_bounce() does not test 'max_low_pfn $want max_pfn'"; return 1; }
}

# Options that may differ between variants, and why (an ERE; none now:
# the series keeps the BOUNCE symbol, and the drivers it makes depend on
# !HIGHMEM are not in the lab's config).
ALLOWED_CONFIG_DIFF='^$'

check_config_diff()
{
	local a=$BL_CACHE/kernels/$1/config b=$BL_CACHE/kernels/$2/config diff
	[ -f "$a" ] && [ -f "$b" ] || { echo "configs missing; run './run.sh build'"; return 1; }
	diff=$(diff <(grep -E '^(CONFIG_|# CONFIG_)' "$a") \
		<(grep -E '^(CONFIG_|# CONFIG_)' "$b") | grep '^[<>]' |
		grep -oE 'CONFIG_[A-Za-z0-9_]+' | sort -u |
		grep -vxE "$ALLOWED_CONFIG_DIFF")
	[ -z "$diff" ] || { echo "$1 and $2 differ in: $diff"; return 1; }
}

main()
{
	local stacks patches
	[ -d "$PRISTINE" ] ||
		bl_die "pristine tree $PRISTINE not found; run './run.sh build' first"
	stacks=$(find "$BL_PATCHES_DIR" -mindepth 1 -maxdepth 1 -type d | wc -l)
	patches=$(ls "$BL_PATCHES_DIR"/*/*.patch | wc -l)
	# per stack and per variant: applies; series count; checkpatch per
	# patch; post clean, two bounce checks, two config diffs
	t_plan $((stacks + $(bl_variants | wc -l) + 1 + patches + 5))
	test_apply
	test_checkpatch
	t_check "post tree: no bounce machinery left" check_post_clean
	t_check "pre-fixed tree: corrected check (max_low_pfn < max_pfn)" \
		check_bounce_check pre-fixed '<'
	t_check "pre tree: check as shipped (max_low_pfn >= max_pfn)" \
		check_bounce_check pre '>='
	t_check "configs: pre and pre-fixed identical" check_config_diff pre pre-fixed
	t_check "configs: pre and post identical" check_config_diff pre post
	t_summary
}

# Sourced (tests/scripts-test.sh), it only defines the checks.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
