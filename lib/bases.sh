# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Kernel bases: the Debian kernel source packages of kernels/bases, the
# version of each (BOUNCELAB_PIN may pin another), where its tarball is and
# where it came from. Source it after lib/common.sh.
#
# A variant of the default base is called VARIANT; one of another base
# BASE/VARIANT (5.10/stock).

# The override exists for the tests.
BL_BASES_FILE=${BOUNCELAB_BASES_FILE:-$BL_ROOT/kernels/bases}

# The suite column's value for the host's installed package.
BL_BASE_INSTALLED=installed

# Base names, one per line, in file order. A name goes before the "/" of
# a variant's name, so it may not hold one (nor a space or glob).
bl_bases()
{
	[ -f "$BL_BASES_FILE" ] || bl_die "$BL_BASES_FILE not found"
	awk '!/^[[:space:]]*(#|$)/ {
		if ($1 !~ /^[A-Za-z0-9][A-Za-z0-9._+-]*$/) {
			printf "bouncelab: error: %s: bad base name \"%s\"\n", FILENAME, $1 >"/dev/stderr"
			exit 1
		}
		print $1 }' "$BL_BASES_FILE"
}

# The first base of the table: the one of the variants without "BASE/".
bl_default_base()
{
	local b
	b=$(bl_bases) || exit 1
	[ -n "$b" ] || bl_die "$BL_BASES_FILE lists no base"
	echo "${b%%$'\n'*}"
}

# True when NAME is a base of the table.
bl_base_known()
{
	local b
	for b in $(bl_bases); do
		[ "$b" != "$1" ] || return 0
	done
	return 1
}

# bl_base_field BASE N: column N (2 package, 3 suite, 4 version) of BASE's
# line; dies for an unknown base or a malformed line. Every value is
# checked against what Debian allows, so that it can go into an apt
# command line, a path and JSON as it is.
bl_base_field()
{
	local base=$1 n=$2 line cols
	line=$(bl_bases >/dev/null && awk -v b="$base" \
		'!/^[[:space:]]*#/ && $1 == b { print; exit }' "$BL_BASES_FILE") ||
		exit 1
	[ -n "$line" ] ||
		bl_die "unknown base '$base' (known: $(bl_bases | paste -sd ' '))"
	read -ra cols <<<"$line"
	[ ${#cols[@]} = 4 ] ||
		bl_die "$BL_BASES_FILE: base '$base' needs 4 columns: $line"
	[[ ${cols[1]} =~ ^[a-z0-9][a-z0-9.+-]+$ ]] ||
		bl_die "$BL_BASES_FILE: base '$base': bad package name '${cols[1]}'"
	[[ ${cols[2]} =~ ^[a-z0-9][a-z0-9-]*$ ]] ||
		bl_die "$BL_BASES_FILE: base '$base': bad suite '${cols[2]}'"
	[[ ${cols[3]} =~ ^(-|[0-9][A-Za-z0-9.+~:-]*)$ ]] ||
		bl_die "$BL_BASES_FILE: base '$base': bad version '${cols[3]}'"
	echo "${cols[$((n - 1))]}"
}

bl_base_package()
{
	bl_base_field "$1" 2
}

bl_base_suite()
{
	bl_base_field "$1" 3
}

# True when BASE is the host's installed package (nothing to fetch).
bl_base_installed()
{
	local suite
	suite=$(bl_base_suite "$1") || exit 1
	[ "$suite" = "$BL_BASE_INSTALLED" ]
}

# The version BOUNCELAB_PIN ("BASE=VERSION ...") gives BASE, empty if none.
# The whole variable is checked on every call: a typo in a pin must not
# quietly build the table's version instead.
bl_base_pin()
{
	local want=$1 entries e b v pin='' seen=' '
	read -ra entries <<<"${BOUNCELAB_PIN:-}"
	for e in "${entries[@]}"; do
		b=${e%%=*}
		v=${e#*=}
		[[ $b != "$e" && -n $b ]] ||
			bl_die "BOUNCELAB_PIN: '$e' is not BASE=VERSION"
		bl_base_known "$b" ||
			bl_die "BOUNCELAB_PIN: unknown base '$b' (known: $(bl_bases | paste -sd ' '))"
		[[ $v =~ ^[0-9][A-Za-z0-9.+~:-]*$ ]] ||
			bl_die "BOUNCELAB_PIN: '$v' is not a Debian version (in '$e')"
		if bl_base_installed "$b"; then
			bl_die "BOUNCELAB_PIN: base $b is the host's installed $(bl_base_package "$b"); it cannot be pinned (its version is whatever apt installed)"
		fi
		case $seen in *" $b "*) bl_die "BOUNCELAB_PIN pins base $b twice" ;; esac
		seen+="$b "
		[ "$b" != "$want" ] || pin=$v
	done
	echo "$pin"
}

# The version to use: the pin, else the table's; for the installed base,
# the installed package's.
bl_base_version()
{
	local base=$1 pkg v
	pkg=$(bl_base_package "$base") || exit 1
	v=$(bl_base_pin "$base") || exit 1
	if bl_base_installed "$base"; then
		v=$(bl_pkg_version "$pkg")
		[ -n "$v" ] ||
			bl_die "base $base: $pkg is not installed; run './run.sh deps'"
	elif [ -z "$v" ]; then
		v=$(bl_base_field "$base" 4) || exit 1
		[ "$v" != - ] ||
			bl_die "$BL_BASES_FILE: base $base has no version (only the installed base may have '-')"
	fi
	echo "$v"
}

# Where kernels/fetch-base unpacks a fetched base:
# $BL_CACHE/debs/PACKAGE_VERSION (usr/src/PACKAGE.tar.xz, provenance.json).
bl_base_fetch_dir()
{
	local pkg v
	! bl_base_installed "$1" ||
		bl_die "base $1 is the installed $(bl_base_package "$1"); it is never fetched"
	pkg=$(bl_base_package "$1") && v=$(bl_base_version "$1") || exit 1
	echo "$BL_CACHE/debs/${pkg}_$v"
}

# The absolute path of BASE's source tarball, fetched first if needed.
bl_base_tarball()
{
	local base=$1 pkg v dir t
	pkg=$(bl_base_package "$base") && v=$(bl_base_version "$base") || exit 1
	if bl_base_installed "$base"; then
		t=/usr/src/$pkg.tar.xz
		[ -f "$t" ] ||
			bl_die "$t not found although $pkg $v is installed; run './run.sh deps' (or reinstall $pkg)"
		echo "$t"
		return 0
	fi
	dir=$(bl_base_fetch_dir "$base") || exit 1
	t=$dir/usr/src/$pkg.tar.xz
	if [ ! -f "$dir/provenance.json" ] || [ ! -f "$t" ]; then
		"$BL_ROOT/kernels/fetch-base" "$base" >/dev/null ||
			bl_die "base $base: fetching $pkg $v failed (see above)"
	fi
	[ -f "$t" ] || bl_die "base $base: kernels/fetch-base left no $t"
	echo "$t"
}

# bl_base_prov FILE KEY: a string value of a provenance.json that
# kernels/fetch-base wrote (one "key": "value" per line).
bl_base_prov()
{
	sed -n "s/^ *\"$2\": \"\\([^\"]*\\)\",\\{0,1\\}\$/\\1/p" "$1"
}

# One line, a JSON object's members without braces or trailing comma:
# "source_package": ..., "source_version": ..., "source_suite": ...,
# "source_deb_sha256": ... (null for the installed base when its .deb is
# not in apt's cache). Fetches BASE first if needed.
bl_base_provenance_json()
{
	local base=$1 pkg v suite sha=null deb arch prov
	pkg=$(bl_base_package "$base") && v=$(bl_base_version "$base") || exit 1
	if bl_base_installed "$base"; then
		suite=$BL_BASE_INSTALLED
		arch=$(dpkg-query -W -f='${Architecture}' "$pkg")
		# apt names a .deb PACKAGE_VERSION_ARCH.deb, an epoch's ':' as %3a
		deb=/var/cache/apt/archives/${pkg}_${v//:/%3a}_$arch.deb
		[ ! -f "$deb" ] || sha="\"$(sha256sum <"$deb" | awk '{ print $1 }')\""
	else
		bl_base_tarball "$base" >/dev/null || exit 1
		prov=$(bl_base_fetch_dir "$base")/provenance.json || exit 1
		suite=$(bl_base_prov "$prov" suite)
		sha=$(bl_base_prov "$prov" deb_sha256)
		[[ $sha =~ ^[0-9a-f]{64}$ && -n $suite ]] ||
			bl_die "$prov has no suite or no deb_sha256; remove its folder and fetch again"
		sha="\"$sha\""
	fi
	printf '"source_package": "%s", "source_version": "%s", "source_suite": "%s", "source_deb_sha256": %s\n' \
		"$pkg" "$v" "$suite" "$sha"
}

# The base of a variant name: the part before the first "/" when it names
# a base, else the default base ("5.10/stock" -> 5.10, "stock" -> 6.12).
bl_variant_base()
{
	local head=${1%%/*}
	if [ "$head" != "$1" ] && bl_base_known "$head"; then
		echo "$head"
	else
		bl_default_base
	fi
}

# bl_base_tree BASE: prints the folder of BASE's unpacked source tree,
# $BL_CACHE/linux/linux-source-VERSION, fetching and unpacking it first
# if need be (once per version, under the lock linux-source-VERSION.lock
# beside it; the builds and the tests share it).
bl_base_tree()
{
	local base=$1 v tarball tree
	v=$(bl_base_version "$base") || exit 1
	tree=$BL_CACHE/linux/linux-source-$v
	if [ ! -f "$tree/.bouncelab-unpacked" ]; then
		mkdir -p "$BL_CACHE/linux"
		bl_lock 8 "$tree.lock" "unpacking $(bl_base_package "$base") $v"
		# (another may have unpacked it while this one waited)
		if [ ! -f "$tree/.bouncelab-unpacked" ]; then
			tarball=$(bl_base_tarball "$base") || exit 1
			bl_log "unpacking $tarball ($(bl_base_package "$base") $v) once"
			rm -rf "$tree" "$tree.tmp"
			mkdir -p "$tree.tmp"
			tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1 ||
				{ rm -rf "$tree.tmp"; bl_die "unpacking $tarball failed"; }
			mv "$tree.tmp" "$tree"
			touch "$tree/.bouncelab-unpacked"
		fi
		bl_unlock 8 "$tree.lock"
	fi
	echo "$tree"
}
