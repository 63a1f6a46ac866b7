#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run test suites, each under its own settings, and add up their
# "N passed, N failed, N skipped" lines into one.
#
#   tests/run-all.sh [SUITE|GROUP...]   (default: every suite of ORDER)
#   tests/run-all.sh --list [SUITE|GROUP...]
#                                       their settings, checked, and
#                                       whether their needs are met here
#
# A GROUP is a prefix of suite names: "scripts" runs every scripts-* suite.
#
# Each suite NAME has its settings in tests/NAME.settings, "key=value"
# lines (# comments):
#   run=CMD        the command, from the checkout's top (default:
#                  tests/NAME-test.sh)
#   timeout=S      seconds the suite may take. Past them it is sent SIGTERM
#                  (with every process of its group), SIGKILL 30 s later,
#                  and reported as failed; the next suites still run.
#   needs=WORD...  checked before the suite starts:
#                    kernels      the default base's variants are built
#                    kernels-all  every base's variants are built
#                    guest        the guest initramfs is built
#                    qemu         qemu-system-i386 is installed
#                    cmd:NAME     the command NAME is installed
#                    root         runs as root
#                    network      the Debian mirror can be reached
#                  What the lab builds or installs itself (kernels,
#                  kernels-all, guest, qemu, cmd:) fails the suite when
#                  missing: `make test` builds them first, so their absence
#                  is a broken set-up. root and network are the machine's:
#                  without them the suite is skipped, with the reason.
#   installs=TEXT  what the suite installs or fetches, for the reader
#   default=no     not run unless named (default: yes)
#
# The output is KTAP: a plan of the suites, each suite's own output behind
# "# ", then "ok N - NAME" or "not ok N - NAME # reason" (a suite that was
# skipped: "ok N - NAME # SKIP reason"). A suite that dies without its
# summary line counts as one failure, and so does one that exits non-zero
# while its summary line says 0 failed; a suite skipped for a need counts as
# one skipped. The last line is "N passed, N failed, N skipped".
set -uo pipefail

. "$(dirname "$0")/../lib/common.sh"

# The suites `make test` runs, in this order: cheap ones first, the ones
# that boot QEMU last. Every tests/*.settings is named here unless it says
# default=no.
ORDER=(helpers analysis scripts-harness scripts-plan scripts-boots
	scripts-compare scripts-interrupt scripts-initramfs scripts-locks
	scripts-fetch report-html build patches boot regression guest compare)

# After the timeout's SIGTERM, the seconds a suite has to end its boots.
KILL_GRACE=${BL_TEST_KILL_GRACE:-30}

declare -A S_RUN S_TIMEOUT S_NEEDS S_INSTALLS S_DEFAULT

# settings_read NAME: tests/NAME.settings into the S_* arrays; dies on a
# missing file, an unknown key or a timeout that is not a number.
settings_read()
{
	local name=$1 f=$BL_ROOT/tests/$1.settings line key val n=0
	[ -f "$f" ] || bl_die "test suite '$name' has no settings ($f)"
	S_RUN[$name]=tests/$name-test.sh
	S_TIMEOUT[$name]=''
	S_NEEDS[$name]=''
	S_INSTALLS[$name]=''
	S_DEFAULT[$name]=yes
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		[[ $line == *=* ]] || bl_die "$f:$n: not key=value: $line"
		key=${line%%=*}
		val=${line#*=}
		case $key in
		run) S_RUN[$name]=$val ;;
		timeout) S_TIMEOUT[$name]=$val ;;
		needs) S_NEEDS[$name]=$val ;;
		installs) S_INSTALLS[$name]=$val ;;
		default)
			[[ $val == yes || $val == no ]] || bl_die "$f:$n: default is yes or no, not '$val'"
			S_DEFAULT[$name]=$val ;;
		*) bl_die "$f:$n: unknown setting '$key' (run, timeout, needs, installs, default)" ;;
		esac
	done <"$f"
	[[ ${S_TIMEOUT[$name]} =~ ^[1-9][0-9]*$ ]] ||
		bl_die "$f: timeout wants seconds, not '${S_TIMEOUT[$name]}'"
	local w
	for w in ${S_NEEDS[$name]}; do
		case $w in
		kernels|kernels-all|guest|qemu|root|network|cmd:?*) ;;
		*) bl_die "$f: unknown need '$w'" ;;
		esac
	done
	local cmd=(${S_RUN[$name]})
	[ -x "$BL_ROOT/${cmd[0]}" ] || command -v "${cmd[0]}" >/dev/null ||
		bl_die "$f: run: no command '${cmd[0]}'"
}

# Every suite with settings; ORDER and the settings files must agree.
ALL=()
for f in "$BL_ROOT"/tests/*.settings; do
	[ -e "$f" ] || continue
	n=$(basename "$f" .settings)
	settings_read "$n"
	ALL+=("$n")
done
for n in "${ORDER[@]}"; do
	[ -n "${S_TIMEOUT[$n]:-}" ] || bl_die "suite '$n' of ORDER has no tests/$n.settings"
	[ "${S_DEFAULT[$n]}" = yes ] || bl_die "suite '$n' is in ORDER but its settings say default=no"
done
for n in "${ALL[@]}"; do
	[ "${S_DEFAULT[$n]}" = no ] || [[ " ${ORDER[*]} " == *" $n "* ]] ||
		bl_die "tests/$n.settings: suite '$n' is not in run-all.sh's ORDER (or say default=no)"
done

# need_unmet WORD: prints why WORD is not met here (nothing when it is);
# returns 1 when unmet and the suite fails, 2 when unmet and it is skipped.
need_unmet()
{
	local v missing=''
	case $1 in
	kernels|kernels-all)
		. "$BL_ROOT/lib/variants.sh"
		local all=''
		[ "$1" = kernels-all ] && all=--all
		for v in $(bl_variants $all); do
			[ -s "$BL_CACHE/kernels/$v/bzImage" ] || missing+=" $v"
		done
		[ -z "$missing" ] && return 0
		echo "no bzImage in $BL_CACHE/kernels for:$missing (make ${1/kernels-all/kernels-all})"
		return 1 ;;
	guest)
		[ -s "$BL_CACHE/guest/initramfs.cpio.gz" ] && return 0
		echo "no guest initramfs in $BL_CACHE/guest (make guest)"
		return 1 ;;
	qemu)
		command -v qemu-system-i386 >/dev/null && return 0
		echo "no qemu-system-i386 (make deps)"
		return 1 ;;
	cmd:*)
		command -v "${1#cmd:}" >/dev/null && return 0
		echo "no command ${1#cmd:} (make deps)"
		return 1 ;;
	root)
		[ "$(id -u)" = 0 ] && return 0
		echo "not root"
		return 2 ;;
	network)
		local m=${BOUNCELAB_DEBIAN_MIRROR:-http://deb.debian.org/debian} host port
		host=${m#*://}
		host=${host%%/*}
		port=80
		[[ $m == https:* ]] && port=443
		[[ $host == *:* ]] && { port=${host##*:}; host=${host%:*}; }
		timeout 10 bash -c ': <>"/dev/tcp/$1/$2"' _ "$host" "$port" 2>/dev/null && return 0
		echo "the Debian mirror ($m) cannot be reached"
		return 2 ;;
	esac
}

# Suites named on the command line; a group is every suite NAME-*.
PICK=()
LIST=''
[ "${1:-}" = --list ] && { LIST=1; shift; }
if [ $# = 0 ]; then
	PICK=("${ORDER[@]}")
fi
for a in "$@"; do
	if [ -n "${S_TIMEOUT[$a]:-}" ]; then
		[[ " ${PICK[*]} " == *" $a "* ]] || PICK+=("$a")
		continue
	fi
	found=''
	for n in "${ORDER[@]}" "${ALL[@]}"; do
		[[ $n == "$a"-* ]] || continue
		found=1
		[[ " ${PICK[*]} " == *" $n "* ]] || PICK+=("$n")
	done
	[ -n "$found" ] || bl_die "unknown test suite '$a' (known: ${ALL[*]})"
done

if [ -n "$LIST" ]; then
	for n in "${PICK[@]}"; do
		why=''
		for w in ${S_NEEDS[$n]}; do
			r=$(need_unmet "$w") || why+="; needs $w: $r"
		done
		printf '%s\trun=%s timeout=%s needs=%s default=%s%s\n' "$n" "${S_RUN[$n]}" \
			"${S_TIMEOUT[$n]}" "${S_NEEDS[$n]:--}" "${S_DEFAULT[$n]}" "$why"
	done
	exit 0
fi

cd "$BL_ROOT" || exit 1

# A Ctrl-C or TERM to the runner goes on to every process of the running
# suite (timeout keeps it in a process group of its own, which a terminal's
# Ctrl-C does not reach), and ends the run.
SUITE_PID='' STOP=''
trap 'STOP=130; [ -z "$SUITE_PID" ] || { kill -INT -- "-$SUITE_PID" || kill -INT "$SUITE_PID"; } 2>/dev/null' INT
trap 'STOP=143; [ -z "$SUITE_PID" ] || { kill -TERM -- "-$SUITE_PID" || kill -TERM "$SUITE_PID"; } 2>/dev/null' TERM

# run_suite NAME OUT: the suite under its timeout, its output into OUT and,
# behind "# ", onto ours. Sets RC, and TIMED_OUT when it was killed at the
# timeout.
run_suite()
{
	local name=$1 out=$2 fd tee_pid start cmd
	cmd=(${S_RUN[$name]})
	# a terminal's Ctrl-C reaches these too: they must still show and keep
	# what the interrupted suite says last
	exec {fd}> >(trap '' INT; tee "$out" | sed -u 's/^/# /')
	tee_pid=$!
	start=$(date +%s)
	timeout --kill-after="$KILL_GRACE" "${S_TIMEOUT[$name]}" "${cmd[@]}" </dev/null >&$fd 2>&1 &
	SUITE_PID=$!
	while :; do
		wait "$SUITE_PID" 2>/dev/null
		RC=$?
		kill -0 "$SUITE_PID" 2>/dev/null || break
	done
	SUITE_PID=''
	exec {fd}>&-
	# the output ends when the last process holding it does: 10 s at most
	# once the suite has ended (one it left behind, out of its group, must
	# not hold up the run)
	for _ in $(seq 1 100); do
		kill -0 "$tee_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$tee_pid" 2>/dev/null &&
		echo "# suite $name ended, but something it started still holds its output"
	# timeout's 124 (SIGTERM) or 137 (SIGKILL after the grace), once the
	# timeout has passed: a suite's own exit 124 is no timeout
	TIMED_OUT=''
	[[ $RC == 124 || $RC == 137 ]] &&
		[ $(( $(date +%s) - start )) -ge "${S_TIMEOUT[$name]}" ] && TIMED_OUT=1
}

pass=0 fail=0 skip=0 failed_suites='' i=0
echo "KTAP version 1"
echo "1..${#PICK[@]}"
for s in "${PICK[@]}"; do
	i=$((i + 1))
	[ -z "$STOP" ] || { echo "not ok $i - $s # not run: interrupted"; fail=$((fail + 1)); failed_suites+=" $s"; continue; }
	echo "# === suite $s (timeout ${S_TIMEOUT[$s]} s; needs: ${S_NEEDS[$s]:-nothing}; installs: ${S_INSTALLS[$s]:-nothing})"
	failwhy='' skipwhy=''
	for w in ${S_NEEDS[$s]}; do
		r=$(need_unmet "$w")
		case $? in
		1) failwhy+="${failwhy:+; }needs $w: $r" ;;
		2) skipwhy+="${skipwhy:+; }needs $w: $r" ;;
		esac
	done
	if [ -n "$failwhy" ]; then
		echo "not ok $i - $s # $failwhy"
		fail=$((fail + 1))
		failed_suites+=" $s"
		continue
	fi
	if [ -n "$skipwhy" ]; then
		echo "ok $i - $s # SKIP $skipwhy"
		skip=$((skip + 1))
		continue
	fi
	out=$(mktemp)
	run_suite "$s" "$out"
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	p=0 f=0 k=0 why=''
	if [ -n "$TIMED_OUT" ]; then
		why="TIMEOUT: killed after ${S_TIMEOUT[$s]} s (timeout=${S_TIMEOUT[$s]} in tests/$s.settings)"
	elif [ -n "$STOP" ]; then
		why="interrupted"
	fi
	if [ -n "$summary" ]; then
		p=${summary%% passed*}
		f=${summary#*passed, }
		f=${f%% failed*}
		[[ $summary =~ failed,\ ([0-9]+)\ skipped ]] && k=${BASH_REMATCH[1]}
		if [ "$RC" != 0 ] && [ "$f" = 0 ]; then
			f=1
			[ -n "$why" ] || why="exited $RC although it reported 0 failed"
		fi
	else
		f=1
		[ -n "$why" ] || why="ended without a summary line (exit $RC)"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + k))
	if [ "$f" = 0 ]; then
		echo "ok $i - $s"
	else
		echo "not ok $i - $s${why:+ # $why}"
		failed_suites+=" $s"
	fi
done
[ -z "$failed_suites" ] || echo "failing suites:$failed_suites"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
echo "$pass passed, $fail failed, $skip skipped"
[ -z "$STOP" ] || exit "$STOP"
[ "$fail" = 0 ]
