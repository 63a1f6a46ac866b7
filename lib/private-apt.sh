# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# A private apt: apt-get and apt-cache run on a configuration of their own
# under $BL_CACHE/apt/NAME/, so that Debian packages (of any architecture)
# and source packages can be downloaded without touching the host's apt
# setup. Source it after lib/common.sh.
#
# bl_papt_setup NAME ARCHS LINE... writes $BL_CACHE/apt/NAME/:
#   sources.list    the LINEs ("deb MIRROR SUITE main", "deb-src ...")
#   lists/ cache/   apt's indexes and package cache
#   state/status    an empty dpkg status: nothing counts as installed
#   trusted.gpg.d/  a link to the Debian archive keyring, the only key
#   apt.conf after.conf  what APT_CONFIG names (see bl_papt_setup)
#   download/       where apt writes what bl_papt_download and
#                   bl_papt_source fetch
#   *.log           apt's output of the last update, download, source
#   updated         sources.list's sha256 and the time of the last
#                   successful update
# and APT::Architectures is ARCHS (comma separated), the first of them
# apt's native one: only those architectures' indexes are fetched,
# whatever the host's dpkg knows.
# The host's /etc/apt, /var/lib/apt and /var/lib/dpkg are read (its
# apt.conf.d: a proxy or Check-Valid-Until setting there applies), never
# written, and none of its apt hooks runs.
#
# Reads:
#   BOUNCELAB_DEBIAN_MIRROR           default http://deb.debian.org/debian
#   BOUNCELAB_DEBIAN_SECURITY_MIRROR  default http://deb.debian.org/debian-security
#   BOUNCELAB_FETCH_TIMEOUT           seconds one apt-get may run (1800)
#   BL_DEBIAN_KEYRING                 the keyring (for the tests, which try
#                                     one that must fail)
#   /etc/os-release                   the host's release (bl_debian_host_suite)
# Sets BL_PAPT_DIR and BL_PAPT_OPTS (bl_papt_setup). The caller serialises
# the users of one NAME (bl_lock): they share its lists and download folder.

BL_PAPT_KEYRING=${BL_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
BL_PAPT_TIMEOUT=${BOUNCELAB_FETCH_TIMEOUT:-1800}

# bl_debian_host_suite: the host's Debian release (bookworm), from
# /etc/os-release.
bl_debian_host_suite()
{
	local suite
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$suite" ] || bl_die "cannot tell the Debian release from /etc/os-release"
	echo "$suite"
}

# bl_debian_mirror SUITE: the mirror of SUITE (the -security suites have
# their own).
bl_debian_mirror()
{
	case $1 in
	*-security) echo "${BOUNCELAB_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}" ;;
	*) echo "${BOUNCELAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}" ;;
	esac
}

# bl_papt_need: dies unless the tools, the keyring and a sane timeout are
# there.
bl_papt_need()
{
	[[ $BL_PAPT_TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
		bl_die "BOUNCELAB_FETCH_TIMEOUT: want whole seconds, not '$BL_PAPT_TIMEOUT'"
	bl_need_cmd apt-get apt-cache dpkg dpkg-deb sha256sum timeout setpriv
	[ -f "$BL_PAPT_KEYRING" ] ||
		bl_die "$BL_PAPT_KEYRING not found; run './run.sh deps' (debian-archive-keyring)"
}

# bl_papt_setup NAME ARCHS LINE...: the private apt NAME (see above).
# APT_CONFIG (read before the host's apt.conf.d) only names after.conf as
# apt's main file, which apt reads after the host's apt.conf.d: it drops
# the host's update hooks (they would refresh the host's AppStream and
# PackageKit caches) and undoes any host setting that lets unsigned
# indexes through.
bl_papt_setup()
{
	local name=$1 archs=$2 d
	shift 2
	d=$BL_CACHE/apt/$name
	BL_PAPT_DIR=$d
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/state" \
		"$d/log" "$d/trusted.gpg.d" "$d/download" "$d/empty.d"
	: >"$d/state/status"
	# the only key source: trustedparts holds just the archive keyring
	# (Dir::Etc::trusted pointing at it instead makes apt warn about a
	# "legacy trusted.gpg keyring"); apt reads a keyring by its
	# extension, .gpg binary or .asc armored
	rm -f "$d/trusted.gpg.d"/*
	ln -s "$BL_PAPT_KEYRING" "$d/trusted.gpg.d/archive-keyring.${BL_PAPT_KEYRING##*.}"
	printf '%s\n' "$@" >"$d/sources.list"
	printf 'Dir::Etc::main "%s";\n' "$d/after.conf" >"$d/apt.conf"
	cat >"$d/after.conf" <<-EOF
	// bouncelab lib/private-apt.sh ($name): read after the host's apt.conf.d
	#clear APT::Update::Pre-Invoke;
	#clear APT::Update::Post-Invoke;
	#clear APT::Update::Post-Invoke-Success;
	Acquire::AllowInsecureRepositories "false";
	Acquire::AllowDowngradeToInsecureRepositories "false";
	APT::Get::AllowUnauthenticated "false";
	EOF
	BL_PAPT_OPTS=(
		-o "Dir::Etc::sourcelist=$d/sources.list"
		# (an empty folder: "-" makes apt-get download warn that it
		# cannot read /etc/apt/-/)
		-o "Dir::Etc::sourceparts=$d/empty.d"
		-o "Dir::Etc::trusted=$d/trusted.gpg"
		-o "Dir::Etc::trustedparts=$d/trusted.gpg.d"
		-o "Dir::Etc::preferences=$d/preferences"
		-o "Dir::Etc::preferencesparts=$d/empty.d"
		-o "Dir::State=$d/state"
		-o "Dir::State::lists=$d/lists"
		-o "Dir::State::status=$d/state/status"
		-o "Dir::Cache=$d/cache"
		-o "Dir::Log=$d/log"
		# only the indexes of ARCHS: apt adds its native
		# architecture to APT::Architectures, so the first of
		# ARCHS is made the native one (nothing is installed)
		-o "APT::Architecture=${archs%%,*}"
		-o "APT::Architectures=$archs"
		-o Acquire::Languages=none
	)
	_bl_papt_sandbox
}

# As root, apt runs its download methods as the user _apt, which must be
# able to write the folder a file goes to. Below a folder _apt cannot
# enter (BOUNCELAB_CACHE in a 0700 temporary folder, a private home), apt
# falls back to root with a warning on every file: then say it once and
# ask apt to run them as root. Otherwise keep apt's sandbox, which keeps
# the code that parses what the network sends unprivileged.
_bl_papt_sandbox()
{
	local u g
	[ "$(id -u)" = 0 ] || return 0
	if u=$(id -u _apt 2>/dev/null) && g=$(id -g _apt) &&
	   chown "$u" "$BL_PAPT_DIR/download" &&
	   setpriv --reuid="$u" --regid="$g" --clear-groups \
		test -w "$BL_PAPT_DIR/download" -a -x "$BL_PAPT_DIR/lists" 2>/dev/null; then
		return 0
	fi
	[ -n "${_BL_PAPT_SANDBOX_SAID:-}" ] ||
		bl_log "apt: user _apt cannot reach $BL_CACHE/apt; apt's downloads run as root"
	_BL_PAPT_SANDBOX_SAID=1
	BL_PAPT_OPTS+=(-o APT::Sandbox::User=root)
}

# bl_papt TOOL ARGS...: apt-get or apt-cache on the private apt, bounded.
# --foreground: Ctrl-C must reach apt (timeout otherwise moves itself out
# of the terminal's process group).
bl_papt()
{
	local tool=$1
	shift
	APT_CONFIG=$BL_PAPT_DIR/apt.conf timeout --foreground -k 10 "$BL_PAPT_TIMEOUT" \
		"$tool" "${BL_PAPT_OPTS[@]}" "$@"
}

# bl_papt_failed WHAT LOG RC: apt's error lines, then die saying what
# failed and, when apt's words tell, why.
bl_papt_failed()
{
	local why="apt's words above"
	grep -E '^(E|W|Err):|^  ' "$2" | sed 's/^/  apt: /' >&2 || cat "$2" >&2
	[ "$3" != 124 ] || bl_die "$1 timed out after ${BL_PAPT_TIMEOUT}s (BOUNCELAB_FETCH_TIMEOUT)"
	if grep -Eq 'NO_PUBKEY|BADSIG|EXPKEYSIG|REVKEYSIG|signature|is not signed' "$2"; then
		why="the archive's signature does not verify against $BL_PAPT_KEYRING"
	elif grep -Eq '^  404 ' "$2"; then
		why="the mirror's index lists it but the mirror does not serve the file (404)"
	elif grep -Eq 'Could not connect|Could not resolve|Temporary failure resolving|Connection failed|timed out|Network is unreachable' "$2"; then
		why="the mirror cannot be reached"
	fi
	bl_die "$1 failed (exit $3): $why; nothing was fetched"
}

# bl_papt_update [--stale-ok] WHAT: apt-get update of the private apt
# (output in update.log); dies saying WHAT failed, and why, when any index
# fails. With --stale-ok, when an earlier update of the same sources.list
# succeeded, it only warns and apt keeps those lists: a build that is up
# to date then needs no network.
bl_papt_update()
{
	local stale='' rc=0 mark=$BL_PAPT_DIR/updated sources
	[ "$1" != --stale-ok ] || { stale=1; shift; }
	sources=$(sha256sum <"$BL_PAPT_DIR/sources.list" | awk '{ print $1 }')
	bl_papt apt-get -q --error-on=any update >"$BL_PAPT_DIR/update.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		echo "$sources $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$mark"
		return 0
	fi
	if [ -n "$stale" ] && [ -f "$mark" ] && [ "$(awk '{ print $1 }' "$mark")" = "$sources" ]; then
		bl_log "warning: $1 failed (exit $rc, $BL_PAPT_DIR/update.log); using the lists of $(awk '{ print $2 }' "$mark")"
		return 0
	fi
	bl_papt_failed "$1" "$BL_PAPT_DIR/update.log" $rc
}

# bl_papt_deb PKG VERSION: "NAME SHA256" of PKG's .deb as the signed index
# gives it, NAME being apt's own file name for it (an epoch's ':' written
# %3a). PKG may be PKG:ARCH.
bl_papt_deb()
{
	local show want arch
	show=$(bl_papt apt-cache show "$1=$2") ||
		bl_die "apt-cache show $1=$2 failed on the private apt in $BL_PAPT_DIR"
	want=$(awk '$1 == "SHA256:" { print $2; exit }' <<<"$show")
	arch=$(awk '$1 == "Architecture:" { print $2; exit }' <<<"$show")
	[[ $want =~ ^[0-9a-f]{64}$ && -n $arch ]] ||
		bl_die "apt-cache show $1=$2 gave no SHA256 or Architecture"
	echo "${1%%:*}_${2//:/%3a}_$arch.deb $want"
}

# bl_papt_download PKG VERSION NAME SHA256 DEST: apt-get download PKG=VERSION
# (output in download.log), check that the file NAME has SHA256 (apt
# checked it against the signed index; so does this) and move it to DEST,
# owned by the caller.
bl_papt_download()
{
	local pkg=$1 ver=$2 name=$3 want=$4 dest=$5 d=$BL_PAPT_DIR rc=0
	rm -rf "${d:?}/download"/*
	(cd "$d/download" && bl_papt apt-get -q download "$pkg=$ver") \
		>"$d/download.log" 2>&1 || rc=$?
	[ $rc = 0 ] || bl_papt_failed "apt-get download $pkg=$ver" "$d/download.log" $rc
	[ -f "$d/download/$name" ] ||
		bl_die "apt-get download left no $name in $d/download"
	if [ "$(sha256sum <"$d/download/$name" | awk '{ print $1 }')" != "$want" ]; then
		rm -f "$d/download/$name"
		bl_die "$name does not have the SHA256 the signed index gives ($want)"
	fi
	chown "$(id -u):$(id -g)" "$d/download/$name"
	mv -f "$d/download/$name" "$dest"
}

# bl_papt_source PKG VERSION DEST: apt-get source --download-only
# PKG=VERSION (output in source.log; apt checks each file against the
# signed Sources index), the files moved into the folder DEST, owned by
# the caller.
bl_papt_source()
{
	local d=$BL_PAPT_DIR rc=0 f
	rm -rf "${d:?}/download"/*
	(cd "$d/download" && bl_papt apt-get -q source --download-only "$1=$2") \
		>"$d/source.log" 2>&1 || rc=$?
	[ $rc = 0 ] || bl_papt_failed "apt-get source --download-only $1=$2" "$d/source.log" $rc
	for f in "$d/download"/*; do
		[ -f "$f" ] || continue
		chown "$(id -u):$(id -g)" "$f"
		mv -f "$f" "$3/"
	done
}
