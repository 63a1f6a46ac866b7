# SPDX-License-Identifier: GPL-2.0
# Reading kernels/variants and the patch stacks it names. Source it after
# lib/common.sh.
#
# kernels/variants names every variant BASE/VARIANT (kernels/bases). A
# variant of the default base is called VARIANT (post): that short name is
# the one its cache folder, a run's labels and the history use, and
# DEFAULT-BASE/VARIANT (6.12/post) is accepted everywhere as another name
# of it. A line without "BASE/" is a variant of the default base too.

. "$BL_ROOT/lib/bases.sh"

# The overrides exist for the tests, which feed the build broken stacks.
BL_VARIANTS_FILE=${BOUNCELAB_VARIANTS_FILE:-$BL_ROOT/kernels/variants}
BL_PATCHES_DIR=${BOUNCELAB_PATCHES_DIR:-$BL_ROOT/kernels/patches}

# kernels/variants without comments and blank lines, each line's name in
# its canonical form (bl_variant_canonical).
bl_variants_table()
{
	local def
	def=$(bl_default_base) || exit 1
	awk -v head="$def/" '!/^[[:space:]]*(#|$)/ {
		if (index($1, head) == 1) $1 = substr($1, length(head) + 1)
		print }' "$BL_VARIANTS_FILE"
}

# Variant names, one per line, in file order: those of the default base
# (what a plain build and the tests build), or with --all every base's.
bl_variants()
{
	local table
	table=$(bl_variants_table) || exit 1
	awk -v all="${1:-}" 'all == "--all" || $1 !~ /\// { print $1 }' <<<"$table"
}

# The short name of $1 if it is a variant of the default base: "6.12/post"
# -> "post"; any other name as it is.
bl_variant_canonical()
{
	local def
	def=$(bl_default_base) || exit 1
	echo "${1#"$def"/}"
}

# The stacks of variant $1, space separated; fails for an unknown variant.
bl_variant_stacks()
{
	local stacks table v
	v=$(bl_variant_canonical "$1") && table=$(bl_variants_table) || exit 1
	stacks=$(awk -v v="$v" '$1 == v {
		$1 = ""; sub(/^ +/, ""); print; found = 1 }
		END { exit !found }' <<<"$table") ||
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
