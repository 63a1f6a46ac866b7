#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the patch stacks and of the variant trees built by
# kernels/build:
#   - every stack applies in order to the pristine tree of its base, and so
#     does every variant's full stack;
#   - checkpatch.pl --strict is clean on every patch, except for the
#     message types written down in kernels/patches/checkpatch-exceptions;
#   - nothing of the removed bounce machinery is left in the post tree;
#   - the pre-fixed tree has the corrected check and pre the shipped one;
#   - the variants' final configs differ only where the patches require it;
#   - fidelity: the 6.12 post tree matches the merged series as it is in
#     the 7.2 tree (the usb-storage refusal, the removed symbols, config
#     BOUNCE kept as in 6.16).
#
# Bases. kernels/patches/BASE/STACK (BASE like "6.12", "5.10", "7.2") is a
# stack for that base, named "BASE/STACK" in kernels/variants; the default
# base is the Debian linux-source-6.12 tree (its version decides the base's
# name, "6.12"). A base's pristine tree is found, in this order:
#   - the default base: $BL_CACHE/linux/linux-source-VERSION;
#   - BOUNCELAB_TREE_<BASE with "." as "_"> (e.g. BOUNCELAB_TREE_7_2=/path):
#     an unpacked linux-source-BASE tree;
#   - bl_base_tree BASE, if lib/bases.sh defines it (prints the tree's path,
#     fetching and unpacking it if need be).
# Without one, the checks that need that tree are skipped and say why.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
# The test-only variants (tests/regression.variants) are checked too,
# unless a test gives a table of its own.
VARIANTS_TMP=''
if [ -z "${BOUNCELAB_VARIANTS_FILE:-}" ]; then
	VARIANTS_TMP=$(mktemp)
	t_variants_table "$VARIANTS_TMP"
	export BOUNCELAB_VARIANTS_FILE=$VARIANTS_TMP
fi
. "$BL_ROOT/lib/variants.sh"
[ ! -f "$BL_ROOT/lib/bases.sh" ] || . "$BL_ROOT/lib/bases.sh"

KVER=$(bl_pkg_version "$BL_KSRC_PKG")
PRISTINE=$BL_CACHE/linux/linux-source-$KVER
if declare -F bl_default_base >/dev/null; then
	DEFAULT_BASE=$(bl_default_base)
else
	DEFAULT_BASE=$(cut -d. -f1,2 <<<"${KVER:-6.12}")
fi
# The base whose tree holds the merged series: the fidelity reference.
REFERENCE_BASE=7.2
# The stack of the series backported to 6.12.
SERIES=6.12/remove-bounce
EXCEPTIONS=$BL_PATCHES_DIR/checkpatch-exceptions
# The override exists for tests/scripts-harness-test.sh, which feeds it a
# checkpatch.pl that crashes.
CHECKPATCH=${BL_CHECKPATCH:-$PRISTINE/scripts/checkpatch.pl}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" ${VARIANTS_TMP:+"$VARIANTS_TMP"}' EXIT

# Every stack, one per line, as "BASE/STACK": each folder of
# kernels/patches/ holds the stacks of the base it is named after.
all_stacks()
{
	local d s
	for d in "$BL_PATCHES_DIR"/*/; do
		for s in "$d"*/; do
			[ -d "$s" ] && echo "$(basename "$d")/$(basename "$s")"
		done
	done
}

# Base of stack $1 (a stack named without "BASE/", as a test's may be, is
# the default base's).
stack_base()
{
	case $1 in */*) echo "${1%%/*}" ;; *) echo "$DEFAULT_BASE" ;; esac
}

# Every variant, of every base ("--all": lib/variants.sh lists only the
# default base's without it; an older one ignores it).
all_variants()
{
	bl_variants --all
}

# Base of variant $1: bl_variant_base if lib/variants.sh has it, else the
# BASE of a name BASE/VARIANT, else the base of its stacks (all of them
# must agree).
variant_base()
{
	local s b bases=''
	if declare -F bl_variant_base >/dev/null; then
		bl_variant_base "$1"
		return
	fi
	case $1 in */*) echo "${1%%/*}"; return ;; esac
	for s in $(bl_variant_stacks "$1"); do
		b=$(stack_base "$s")
		case " $bases " in *" $b "*) ;; *) bases="$bases $b" ;; esac
	done
	bases=${bases# }
	case $bases in
	*' '*) bl_die "variant $1 mixes stacks of bases $bases" ;;
	'') echo "$DEFAULT_BASE" ;;
	*) echo "$bases" ;;
	esac
}

# Pristine tree of base $1, or fail (with the reason on stdout).
base_tree()
{
	local var dir
	if [ "$1" = "$DEFAULT_BASE" ]; then
		[ -d "$PRISTINE" ] && { echo "$PRISTINE"; return 0; }
		echo "pristine tree $PRISTINE not found; run './run.sh build' first"
		return 1
	fi
	var=BOUNCELAB_TREE_${1//./_}
	dir=${!var:-}
	if [ -n "$dir" ]; then
		[ -f "$dir/Makefile" ] && { echo "$dir"; return 0; }
		echo "$var=$dir is not a kernel tree"
		return 1
	fi
	if declare -F bl_base_tree >/dev/null; then
		dir=$(bl_base_tree "$1") && [ -f "$dir/Makefile" ] &&
			{ echo "$dir"; return 0; }
		echo "bl_base_tree $1 found no tree"
		return 1
	fi
	echo "no $1 tree: set $var to an unpacked linux-source-$1"
	return 1
}

# Files a list of patches touches, as named on their "--- a/" lines.
touched_files()
{
	sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' "$@" | sort -u
}

# apply_in_order TREE OUT PATCH...: apply the patches in order to a copy,
# in OUT, of just the files of TREE they touch.
apply_in_order()
{
	local tree=$1 dir=$2 p f
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	for f in $(touched_files "$@"); do
		mkdir -p "$dir/$(dirname "$f")"
		cp "$tree/$f" "$dir/$f" ||
			{ echo "$f: not in the pristine tree $tree"; return 1; }
	done
	for p in "$@"; do
		patch -d "$dir" -p1 --batch --forward -s <"$p" >"$WORK/patch.out" 2>&1 ||
			{ echo "does not apply: ${p#"$BL_ROOT"/}"; cat "$WORK/patch.out"; return 1; }
	done
}

# Stacks that come before stack $1 in the first variant that uses it: a
# stack that adapts another (lab-post, fix) applies only on top of it.
stack_prerequisites()
{
	local v s
	for v in $(all_variants); do
		case " $(bl_variant_stacks "$v") " in *" $1 "*) ;; *) continue ;; esac
		for s in $(bl_variant_stacks "$v"); do
			[ "$s" = "$1" ] && return 0
			echo "$s"
		done
	done
}

test_apply()
{
	local s v p b tree pre patches before name
	for s in $(all_stacks); do
		mapfile -t patches < <(bl_stack_patches "$s")
		pre=$(stack_prerequisites "$s" | tr '\n' ' ')
		pre=${pre% }
		mapfile -t before < <(for p in $pre; do bl_stack_patches "$p"; done)
		b=$(stack_base "$s")
		name="stack $s (${#patches[@]} patches) applies in order to the pristine $b tree${pre:+ after $pre}"
		if tree=$(base_tree "$b"); then
			t_check "$name" apply_in_order "$tree" "$WORK/apply" \
				"${before[@]}" "${patches[@]}"
		else
			t_skip "$name" "$tree"
		fi
	done
	for v in $(all_variants); do
		mapfile -t patches < <(bl_variant_patches "$v")
		b=$(variant_base "$v")
		name="variant $v ($(bl_variant_stacks "$v")) applies in order to the $b tree"
		if tree=$(base_tree "$b"); then
			t_check "$name" apply_in_order "$tree" "$WORK/apply" "${patches[@]}"
		else
			t_skip "$name" "$tree"
		fi
	done
	[ "$(ls "$BL_PATCHES_DIR/$SERIES/"*.patch | wc -l)" = 7 ] &&
		t_ok "$SERIES has the series' 7 patches" ||
		t_fail "$SERIES has the series' 7 patches"
}

# Every patch file, stacks of every base.
all_patches()
{
	find "$BL_PATCHES_DIR" -name '*.patch' | sort
}

# checkpatch.pl --strict --no-tree --show-types ARGS..., run in $WORK: it
# leaves a cache file in its working folder, and inside a git checkout it
# asks git about the checkout instead of the kernel. --root names the
# kernel tree it comes from (when it comes from one), whose headers tell it
# the kernel's own CamelCase names.
run_checkpatch()
{
	local root
	root=$(cd "$(dirname "$CHECKPATCH")/.." && pwd)
	[ -d "$root/include/linux" ] || root=''
	(cd "$WORK" && perl "$CHECKPATCH" --strict --no-tree ${root:+--root="$root"} \
		--show-types "$@")
}

# checkpatch message types of one patch that are not excused for it. A
# checkpatch.pl that crashes has checked nothing: with --terse it exits 0
# and prints nothing for a clean patch, or exits 1 after its "total:" line
# and the messages; any other exit, a 1 without that line or without a
# message we can read, or a perl error, fails the patch. The patch is named
# by its absolute path: given a relative one inside a git checkout,
# checkpatch.pl checks something else.
checkpatch_unexcused()
{
	local p=$1 name types allowed t rc=0
	name=${p#"$BL_PATCHES_DIR"/}
	run_checkpatch --terse "$p" >"$WORK/checkpatch.out" 2>"$WORK/checkpatch.err" || rc=$?
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
			{ echo "$name: checkpatch $t"; run_checkpatch "$p" | grep -A3 "$t"; return 1; }
	done
}

test_checkpatch()
{
	local p
	for p in $(all_patches); do
		case $p in /*) ;; *) p=$PWD/$p ;; esac
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

# --- fidelity: the 6.12 backport against the merged series in 7.2 ---------

# What the series removes, as whole words (grep -w), in the folders it
# touches. BLK_BOUNCE_HIGH is the older spelling of the feature (before
# 6.11), absent from 6.12 already; CONFIG_BOUNCE has no user left although
# the symbol stays.
FIDELITY_GONE=(
	blk_queue_bounce __blk_queue_bounce blk_queue_may_bounce
	bounce_end_io bounce_end_io_read bounce_end_io_write bounce_clone_bio
	BLK_FEAT_BOUNCE_HIGH BLK_BOUNCE_HIGH BIO_BOUNCED block_bio_bounce
	trace_block_bio_bounce blk_add_trace_bio_bounce NR_BOUNCE
	'"nr_bounce"' CONFIG_BOUNCE
)
# Struct Scsi_Host's no_highmem, as the series' hunks spell its uses (the
# lab's scsi_debug knob, lab_no_highmem, only names it in messages).
FIDELITY_GONE_FIELD=('->no_highmem' 'no_highmem:1')
FIDELITY_DIRS=(block include kernel mm drivers fs arch)

# The post build (kernels/build) was made from the post patches as they
# are now: build-info.json lists each of them with its sha256, no other.
post_build_current()
{
	local info=$BL_CACHE/kernels/post/build-info.json p n=0
	[ -f "$info" ] && [ -d "$BL_CACHE/kernels/post/src/block" ] || return 1
	for p in $(bl_variant_patches post); do
		grep -qF "\"sha256\": \"$(sha256sum <"$p" | cut -d' ' -f1)\"" "$info" ||
			return 1
		n=$((n + 1))
	done
	[ "$(grep -c '"file": "kernels/patches/' "$info")" = "$n" ]
}

# A tree to read the 6.12 post variant from: the build's copy if it was
# built from the current patches, else a view of the pristine tree
# (symbolic links) with the post variant's patches applied to copies of
# the files they touch, so that no build is needed.
post_tree()
{
	local view=$WORK/post-view f p
	post_build_current && { echo "$BL_CACHE/kernels/post/src"; return 0; }
	[ -d "$view" ] && { echo "$view"; return 0; }
	[ -d "$PRISTINE" ] || { echo "no post tree and no pristine tree $PRISTINE"; return 1; }
	mapfile -t p < <(bl_variant_patches post)
	apply_in_order "$PRISTINE" "$WORK/post-files" "${p[@]}" >"$WORK/post.out" ||
		{ cat "$WORK/post.out"; return 1; }
	cp -rs "$PRISTINE" "$view" || return 1
	for f in $(touched_files "${p[@]}"); do
		rm -f "$view/$f"
		[ ! -e "$WORK/post-files/$f" ] || cp "$WORK/post-files/$f" "$view/$f"
	done
	echo "$view"
}

# Both trees, or fail with the reason.
fidelity_trees()
{
	local post ref
	ref=$(base_tree "$REFERENCE_BASE") || { echo "$ref"; return 1; }
	post=$(post_tree) || { echo "$post"; return 1; }
	echo "$post $ref"
}

# The block of usb_stor_probe1() that refuses a PIO-only HCD, from its
# comment to the closing brace of its if, whitespace folded to one space.
refusal_block()
{
	awk '/Some USB host controllers can.t do DMA/ { on = 1; print prev }
		on { print }
		on && /^\t}$/ { exit }
		{ prev = $0 }' "$1/drivers/usb/storage/usb.c" | tr -s '[:space:]' ' '
}

check_fidelity_refusal()
{
	local post=$1 ref=$2 a b
	a=$(refusal_block "$post") b=$(refusal_block "$ref")
	[ -n "$b" ] || { echo "no refusal block found in $ref"; return 1; }
	grep -q 'not supported on this host controller' <<<"$b" ||
		{ echo "$ref: the refusal block has no 'not supported on this host controller'"; return 1; }
	[ "$a" = "$b" ] && return 0
	echo "usb_stor_probe1()'s refusal differs from $REFERENCE_BASE's:"
	diff <(fold -w 72 <<<"$a") <(fold -w 72 <<<"$b")
	return 1
}

check_fidelity_gone()
{
	local t hits fail=0 words=() fields=() w
	for w in "${FIDELITY_GONE[@]}"; do
		words+=(-e "$w")
	done
	for w in "${FIDELITY_GONE_FIELD[@]}"; do
		fields+=(-e "$w")
	done
	for t in "$@"; do
		[ ! -e "$t/block/bounce.c" ] || { echo "$t: block/bounce.c is there"; fail=1; }
		hits=$(cd "$t" && {
			grep -RnowF "${words[@]}" --include='*.[ch]' --include='Kconfig*' \
				--include='Makefile' --include='*defconfig' \
				-- "${FIDELITY_DIRS[@]}"
			grep -RnoF "${fields[@]}" --include='*.[ch]' \
				-- "${FIDELITY_DIRS[@]}"
		} 2>/dev/null | head -n 10)
		[ -z "$hits" ] || { echo "in $t:"; echo "$hits"; fail=1; }
	done
	return $fail
}

# 6.16 kept the BOUNCE symbol (eeadd68e2a5f left mm/Kconfig alone; "mm:
# remove the BOUNCE config option" dropped it later, so 7.2 has none):
# post must keep it, and in neither tree may any Kconfig depend on it.
check_fidelity_kconfig()
{
	local post=$1 ref=$2 t hits fail=0
	grep -qx 'config BOUNCE' "$post/mm/Kconfig" ||
		{ echo "$post/mm/Kconfig has no 'config BOUNCE': 6.16 keeps it"; fail=1; }
	for t in "$post" "$ref"; do
		hits=$(cd "$t" && grep -RnE --include='Kconfig*' \
			'^[[:space:]]*(depends on|select|imply|if)[[:space:]].*\<BOUNCE\>' . |
			head -n 5)
		[ -z "$hits" ] || { echo "Kconfig still uses BOUNCE in $t:"; echo "$hits"; fail=1; }
	done
	return $fail
}

test_fidelity()
{
	local trees n names
	names=("fidelity: usb-storage refusal block as in $REFERENCE_BASE"
		"fidelity: removed symbols absent from post and $REFERENCE_BASE"
		"fidelity: config BOUNCE kept in post as in 6.16, used by no Kconfig in either")
	if ! trees=$(fidelity_trees); then
		for n in "${names[@]}"; do
			t_skip "$n" "$trees"
		done
		return
	fi
	# shellcheck disable=SC2086 # two paths without spaces
	t_check "${names[0]}" check_fidelity_refusal $trees
	# shellcheck disable=SC2086
	t_check "${names[1]}" check_fidelity_gone $trees
	# shellcheck disable=SC2086
	t_check "${names[2]}" check_fidelity_kconfig $trees
}

main()
{
	local stacks patches
	[ -d "$PRISTINE" ] ||
		bl_die "pristine tree $PRISTINE not found; run './run.sh build' first"
	stacks=$(all_stacks | wc -l)
	patches=$(all_patches | wc -l)
	# per stack and per variant: applies; series count; checkpatch per
	# patch; post clean, two bounce checks, two config diffs; three
	# fidelity checks
	t_plan $((stacks + $(all_variants | wc -l) + 1 + patches + 5 + 3))
	test_apply
	test_checkpatch
	t_check "post tree: no bounce machinery left" check_post_clean
	t_check "pre-fixed tree: corrected check (max_low_pfn < max_pfn)" \
		check_bounce_check pre-fixed '<'
	t_check "pre tree: check as shipped (max_low_pfn >= max_pfn)" \
		check_bounce_check pre '>='
	t_check "configs: pre and pre-fixed identical" check_config_diff pre pre-fixed
	t_check "configs: pre and post identical" check_config_diff pre post
	test_fidelity
	t_summary
}

# Sourced (tests/scripts-harness-test.sh), it only defines the checks.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
