# SPDX-License-Identifier: GPL-2.0
# Reading kernels/variants and the patch stacks it names. Source it after
# lib/common.sh.

# The overrides exist for the tests, which feed the build broken stacks.
BL_VARIANTS_FILE=${BOUNCELAB_VARIANTS_FILE:-$BL_ROOT/kernels/variants}
BL_PATCHES_DIR=${BOUNCELAB_PATCHES_DIR:-$BL_ROOT/kernels/patches}

# All variant names, one per line, in file order.
bl_variants()
{
	awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$BL_VARIANTS_FILE"
}

# The stacks of variant $1, space separated; fails for an unknown variant.
bl_variant_stacks()
{
	local stacks
	stacks=$(awk -v v="$1" '!/^[[:space:]]*#/ && $1 == v {
		$1 = ""; sub(/^ +/, ""); print; found = 1 }
		END { exit !found }' "$BL_VARIANTS_FILE") ||
		bl_die "unknown variant '$1' (known: $(bl_variants | tr '\n' ' '))"
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
