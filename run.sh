#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bouncelab: what removing block-layer bounce buffering (Linux 6.16) changes,
# measured on i386 HIGHMEM guests in QEMU. This is the one entry point; each
# command calls the script that does the work.
set -euo pipefail

. "$(dirname "$0")/lib/common.sh"
. "$BL_ROOT/lib/deps.sh"
. "$BL_ROOT/lib/variants.sh"

usage()
{
	cat <<EOF
usage: ./run.sh COMMAND [ARGS...]

commands:
  deps [--test]         install the Debian packages the lab needs (idempotent;
                        --test: and those only the test suites need)
  build [VARIANT...|--all]
                        build the guest kernels (default: the default
                        base's variants; --all: every base's)
  fetch BASE...         fetch kernel bases' Debian source packages into the
                        cache (kernels/bases; the host's apt is not touched)
  guest                 build the guest initramfs (busybox, static fio, helpers)
  boot-test [VARIANT...]
                        boot each kernel in QEMU with a busybox initramfs and
                        check it reaches /init with highmem and sane /proc
  compare [OPTIONS]     the benchmark: build what is missing, boot the matrix
                        (bench/matrix), analyse; see 'bench/compare --help'.
                        'compare --dry-run' only lists the boots and
                        estimates their time, building nothing (the job
                        files are parsed by the guest's fio first, once it
                        is built). Exit as
                        bench/compare's (0 ok, 1 no boot ok, 2 bad
                        arguments, 3 some boots failed, 130 interrupted),
                        or 4: every boot ok but the analysis failed
  report RUN-ID         redo the analysis and plots of a run in results/
                        (or a run folder)
  versions [OPTIONS]    every base's stock (and fixed) kernel on the same
                        disks, interleaved (matrix set "versions"; options
                        as for compare), added to the history, which plots
                        the headline metrics across kernel versions
  history [--check] [RUN-ID...]
                        add runs (default: every run in results/) to the
                        history table results/history/ and plot it;
                        --check: (without RUN-ID nothing is added) exit 3
                        when the newest run moved a headline metric beyond
                        its smallest effect of interest
  explain RUN-ID A B [--disk D] [--job J] [--pressure P] [--top N]
  explain RUN-ID:A OTHER-RUN-ID:B [...]
                        where two kernels' instructions differ in one job,
                        symbol by symbol, per I/O (exact-clock boots; see
                        'bench/explain --help'); exit 2 for an unknown
                        run, variant, disk or job, or no counts
  variants              list the kernel variants and their patch stacks
  test                  run the test suite (same as 'make test')
  help                  this text

variants: $(bl_variants --all | tr '\n' ' ')
cache:    $BL_CACHE (set BOUNCELAB_CACHE to move it)
results:  $BL_RESULTS (set BOUNCELAB_RESULTS to move it)
EOF
}

cmd_deps()
{
	local test=''
	case ${1:-} in
	--test) test=$BL_DEPS_TEST ;;
	'') ;;
	*) bl_die "usage: ./run.sh deps [--test]" ;;
	esac
	bl_deps_install $BL_DEPS_KERNEL $BL_DEPS_BOOT $BL_DEPS_GUEST $BL_DEPS_ANALYSIS $test
}

cmd_build()
{
	local all
	if [ "${1:-}" = --all ]; then
		mapfile -t all < <(bl_variants --all)
		set -- "${all[@]}"
	fi
	bl_check_variants "$@"
	bl_deps_install $BL_DEPS_KERNEL
	"$BL_ROOT/kernels/build" "$@"
}

cmd_fetch()
{
	bl_deps_install $BL_DEPS_FETCH
	"$BL_ROOT/kernels/fetch-base" "$@"
}

cmd_guest()
{
	bl_deps_install $BL_DEPS_GUEST
	"$BL_ROOT/guest/build" "$@"
}

cmd_boot_test()
{
	bl_check_variants "$@"
	bl_deps_install $BL_DEPS_KERNEL $BL_DEPS_BOOT
	"$BL_ROOT/tests/boot-test.sh" "$@"
}

# Build what the compare arguments need, boot, analyse: sets RUN (the run
# folder) and RC (bench/compare's exit status, or 4 when every boot was ok
# but the analysis failed); exits if no run folder.
run_compare()
{
	local kernels arc=0
	RC=0
	# the plan and its time estimate (or the usage) only: no deps, no
	# builds, no boots
	case " $* " in *" --dry-run "* | *" --help "* | *" -h "*) exec "$BL_ROOT/bench/compare" "$@" ;; esac
	# a bad argument is refused (exit 2) before anything is built; the
	# planner names the kernels the run boots (of the set it runs)
	kernels=$("$BL_ROOT/bench/plan" kernels "$@") || exit $?
	mapfile -t kernels <<<"$kernels"
	cmd_deps
	"$BL_ROOT/kernels/build" "${kernels[@]}"
	"$BL_ROOT/guest/build"
	RUN=$("$BL_ROOT/bench/compare" "$@") || RC=$?
	if [ ! -d "$RUN" ]; then
		# refused before a run folder existed: compare said why
		[ $RC != 0 ] || bl_die "compare named no run folder ('$RUN')"
		exit $RC
	fi
	if [ -x "$BL_ROOT/bench/analyze" ]; then
		# the analysis' summary joins the run's console log
		"$BL_ROOT/bench/analyze" "$RUN" > >(trap '' INT; exec tee -a "$RUN/console.log") \
			2> >(trap '' INT; exec tee -a "$RUN/console.log" >&2) || arc=$?
	fi
	if [ $arc != 0 ]; then
		bl_log "analysis failed (exit $arc); the raw results are intact: $RUN"
		# a failed boot says more than the analysis that failed after it
		[ $RC != 0 ] || RC=4
		return
	fi
	bl_log "results: $RUN"
}

cmd_compare()
{
	run_compare "$@"
	[ $RC = 4 ] ||
		bl_log "to track it over kernel versions: ./run.sh history $(basename "$RUN")"
	exit $RC
}

# The bounce path's life across Debian kernels: every base's stock kernel,
# and the fixed one where there is one, on the same disks, interleaved
# (bench/matrix set "versions"); then the run joins the history and the
# plots across kernel versions are drawn (results/history/).
cmd_versions()
{
	run_compare --set versions "$@"
	if [ $RC = 0 ] || [ $RC = 3 ]; then
		"$BL_ROOT/bench/history" add "$RUN" &&
			"$BL_ROOT/bench/history" plot ||
			bl_log "history failed; the run is intact: $RUN"
		bl_log "across kernel versions: $BL_RESULTS/history/history.md"
	fi
	exit $RC
}

cmd_report()
{
	[ $# = 1 ] || bl_die "usage: ./run.sh report RUN-ID"
	local run=$BL_RESULTS/$1
	[ -d "$run" ] || run=$1
	[ -d "$run" ] || bl_die "no run '$1' in $BL_RESULTS"
	bl_deps_install $BL_DEPS_ANALYSIS
	"$BL_ROOT/bench/analyze" "$run"
}

# With run ids: add those runs to the history; without: rebuild it from
# every run in results/ (the test suite's runs excluded). Then plot.
# --check: add the runs named (none: the history stays as it is), then
# exit as bench/history check (3: the newest run moved a headline metric).
cmd_history()
{
	local ids=() id check=''
	[ "${1:-}" != --check ] || { check=1; shift; }
	bl_deps_install $BL_DEPS_ANALYSIS
	for id in "$@"; do
		[ -d "$BL_RESULTS/$id" ] && ids+=("$BL_RESULTS/$id") || ids+=("$id")
	done
	if [ ${#ids[@]} -gt 0 ]; then
		"$BL_ROOT/bench/history" add "${ids[@]}"
		"$BL_ROOT/bench/history" plot
	elif [ -z "$check" ]; then
		"$BL_ROOT/bench/history" rebuild --exclude 'test-*'
		"$BL_ROOT/bench/history" plot
	fi
	[ -z "$check" ] || exec "$BL_ROOT/bench/history" check
}

# The differential profile of two kernels (or one kernel in two runs):
# bench/explain reads the runs' instruction counts.
cmd_explain()
{
	bl_deps_install $BL_DEPS_ANALYSIS
	exec "$BL_ROOT/bench/explain" "$@"
}

cmd_variants()
{
	local v
	printf '%-14s %-6s %s\n' VARIANT BASE STACKS
	for v in $(bl_variants --all); do
		printf '%-14s %-6s %s\n' "$v" "$(bl_variant_base "$v")" "$(bl_variant_stacks "$v")"
	done
}

main()
{
	local cmd=${1:-}

	[ $# -gt 0 ] && shift
	case $cmd in
	deps)		cmd_deps "$@" ;;
	build)		cmd_build "$@" ;;
	fetch)		cmd_fetch "$@" ;;
	guest)		cmd_guest "$@" ;;
	boot-test)	cmd_boot_test "$@" ;;
	variants)	cmd_variants "$@" ;;
	test)		exec make -C "$BL_ROOT" test ;;
	compare)	cmd_compare "$@" ;;
	report)		cmd_report "$@" ;;
	history)	cmd_history "$@" ;;
	explain)	cmd_explain "$@" ;;
	versions)	cmd_versions "$@" ;;
	help|-h|--help)	usage ;;
	'')		usage >&2; exit 2 ;;
	*)		echo "bouncelab: unknown command '$cmd'" >&2
			usage >&2
			exit 2 ;;
	esac
}

main "$@"
