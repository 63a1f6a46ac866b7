# SPDX-License-Identifier: GPL-2.0
# Reading kernels/variants and the patch stacks it names. Source it after
# lib/common.sh.
#
# Variants of the default base are named VARIANT, those of another base
# BASE/VARIANT (kernels/bases); DEFAULT-BASE/VARIANT (6.12/post) is
# accepted everywhere as another name of VARIANT.

. "$BL_ROOT/lib/bases.sh"

# The overrides exist for the tests, which feed the build broken stacks.
BL_VARIANTS_FILE=${BOUNCELAB_VARIANTS_FILE:-$BL_ROOT/kernels/variants}
BL_PATCHES_DIR=${BOUNCELAB_PATCHES_DIR:-$BL_ROOT/kernels/patches}

# Variant names, one per line, in file order: those of the default base
# (what a plain build and the tests build), or with --all every base's.
bl_variants()
{
	awk -v all="${1:-}" '!/^[[:space:]]*(#|$)/ &&
		(all == "--all" || $1 !~ /\//) { print $1 }' "$BL_VARIANTS_FILE"
}

# The name kernels/variants uses for $1: "6.12/post" -> "post".
bl_variant_canonical()
{
	local def
	def=$(bl_default_base) || exit 1
	echo "${1#"$def"/}"
}

# The stacks of variant $1, space separated; fails for an unknown variant.
bl_variant_stacks()
{
	local stacks v
	v=$(bl_variant_canonical "$1") || exit 1
	stacks=$(awk -v v="$v" '!/^[[:space:]]*#/ && $1 == v {
		$1 = ""; sub(/^ +/, ""); print; found = 1 }
		END { exit !found }' "$BL_VARIANTS_FILE") ||
		bl_die "unknown variant '$1' (known: $(bl_variants --all | tr '\n' ' '))"
	echo "$stacks"
}

# Dies unless every argument is a known variant.
bl_check_variants()
{
	local v
	for v in "$@"; do
		bl_variant_stacks "$v" >/dev/null
	done
}

# Patch files of one stack, in apply order, as absolute paths.
bl_stack_patches()
{
	local dir=$BL_PATCHES_DIR/$1 p

	[ -d "$dir" ] || bl_die "patch stack '$1' not found in $BL_PATCHES_DIR"
	if [ -f "$dir/series" ]; then
		while read -r p; do
			case $p in ''|'#'*) continue ;; esac
			[ -f "$dir/$p" ] || bl_die "$dir/series names missing patch $p"
			echo "$dir/$p"
		done <"$dir/series"
	else
		ls "$dir"/*.patch
	fi
}

# All patch files of variant $1, in apply order.
bl_variant_patches()
{
	local s stacks
	stacks=$(bl_variant_stacks "$1") || exit 1
	for s in $stacks; do
		bl_stack_patches "$s" || exit 1
	done
}
